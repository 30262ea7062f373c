#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Idempotent vs plain producer: `tally perf produce --idempotent` records/s ÷ plain
`tally perf produce` records/s on the same tallyd in the same run, each run into a
fresh 4-partition topic deleted afterwards (1 KiB records, acks=all both). Target
>= 0.97. Prints "skipped" while the broker cannot give out producer ids.
BENCH_CLIENT_RECORDS (default 1000000) records per run; BENCH_ROUNDS (default 5)
pairs, alternating which goes first; noise only slows a run down, so the figure is
the ratio of each side's best run."""
import os

import lib

RECORDS = int(os.environ.get("BENCH_CLIENT_RECORDS", "1000000"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))


def main():
    t = lib.Tallyd("idem")
    try:
        t.warm_up(RECORDS, extra=["--idempotent"])
        idems, plains = [], []
        for i in range(ROUNDS):
            # Alternate which goes first, so that neither always meets a warmer machine.
            for kind in (("idem", "plain") if i % 2 == 0 else ("plain", "idem")):
                if kind == "idem":
                    rc, idem, line = t.produce_fresh(RECORDS, extra=["--idempotent"])
                    if rc != 0:
                        lib.log("idempotent run failed: %s" % line)
                        print("skipped: broker does not support InitProducerId yet")
                        lib.result("idempotent_ratio", None, "x", ">=", 0.97,
                                   "skipped: broker does not support InitProducerId yet")
                        return
                    lib.log("idempotent: %s" % line)
                else:
                    rc, plain, line = t.produce_fresh(RECORDS)
                    if rc != 0:
                        raise RuntimeError("plain run failed: %s" % line)
                    lib.log("plain:      %s" % line)
            idems.append(idem)
            plains.append(plain)
            lib.log("round %d: ratio %.3f" % (i + 1, idem / plain))
        lib.result("idempotent_ratio", max(idems) / max(plains), "x", ">=", 0.97,
                   "best of %d: idempotent %.0f / plain %.0f records/s (%d x 1 KiB, acks=all)" %
                   (ROUNDS, max(idems), max(plains), RECORDS))
    finally:
        t.stop()


if __name__ == "__main__":
    main()
