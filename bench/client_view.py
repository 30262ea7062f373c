#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Client's view: `tally perf produce` throughput (1 KiB records, acks=all, 4
partitions; on tallyd a fresh topic per run, deleted afterwards) ÷ the same command
against librdkafka's in-memory mock cluster (bench/mock_cluster). Target >= 0.5.
BENCH_CLIENT_RECORDS (default 1000000) records per run; BENCH_ROUNDS (default 3)
pairs, alternating which goes first; noise only slows a run down, so the figure is
the ratio of each side's best run."""
import os

import lib

RECORDS = int(os.environ.get("BENCH_CLIENT_RECORDS", "1000000"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))


def produce(target, who):
    if isinstance(target, str):
        rc, rate, line = lib.perf_produce(target, "clientview", RECORDS)
    else:
        rc, rate, line = target.produce_fresh(RECORDS)
    if rc != 0:
        raise RuntimeError("%s: %s" % (who, line))
    lib.log("%-6s %s" % (who + ":", line))
    return rate


def main():
    mock = lib.Proc([os.path.join(lib.BENCH_BIN, "mock_cluster"), "clientview", "4"])
    t = lib.Tallyd("client")
    try:
        mocks, tallys = [], []
        for i in range(ROUNDS):
            # Alternate which goes first, so that neither always meets a warmer machine.
            if i % 2 == 0:
                mocks.append(produce(mock.ready_line, "mock"))
                tallys.append(produce(t, "tallyd"))
            else:
                tallys.append(produce(t, "tallyd"))
                mocks.append(produce(mock.ready_line, "mock"))
            lib.log("round %d: ratio %.3f" % (i + 1, tallys[-1] / mocks[-1]))
        lib.result("client_view_ratio", max(tallys) / max(mocks), "x", ">=", 0.5,
                   "best of %d: tallyd %.0f / mock %.0f records/s (%d x 1 KiB, acks=all)" %
                   (ROUNDS, max(tallys), max(mocks), RECORDS))
    finally:
        t.stop()
        mock.stop()


if __name__ == "__main__":
    main()
