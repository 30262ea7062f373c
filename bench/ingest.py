#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Ingest efficiency: tallyd's CPU seconds per GiB of 1 KiB-record Produce batches
(acks=1) ÷ the same for bench/baseline_server, which only reads each frame, write()s
it to a file on the same filesystem (one per connection, as a broker has one log per
partition) and answers. Target <= 1.5.

Both servers take the same load from bench/loadgen in the same invocation, one after
the other, BENCH_ROUNDS times (default 3), after an unmeasured warm-up run. Noise from other work on the machine only
ever adds CPU time, so the figure is the ratio of each server's best (lowest) round.
BENCH_INGEST_BYTES (default 2g) sets the bytes per run."""
import os
import shutil
import lib

BYTES = os.environ.get("BENCH_INGEST_BYTES", "2g")
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
LOAD = ["--connections", 4, "--inflight", 4, "--batch-bytes", "512k", "--record-size", 1024,
        "--partitions", 4, "--bytes", BYTES]


def measure(pid, port):
    lib.settle()
    c0 = lib.cpu_seconds(pid)
    r = lib.loadgen("produce", "--port", port, "--topic", "ingest", *LOAD)
    cpu = lib.cpu_seconds(pid) - c0
    per_gib = cpu / (r["bytes"] / lib.GIB)
    return per_gib, r


def baseline_run(load=None):
    d = lib.scratch_dir("ingest-base")
    port = lib.free_port()
    srv = lib.Proc([os.path.join(lib.BENCH_BIN, "baseline_server"), str(port), d], pin=True)
    try:
        if load is not None:  # warm-up: not measured
            lib.loadgen("produce", "--port", port, "--topic", "ingest", *load)
            return None
        per_gib, r = measure(srv.pid, port)
    finally:
        srv.stop()
        shutil.rmtree(d, ignore_errors=True)
    lib.log("baseline_server: %.3f CPU s/GiB (%.0f MiB/s)" % (per_gib, r["MiB/s"]))
    return per_gib


def tallyd_run():
    t = lib.Tallyd("ingest", pin=True)
    try:
        t.create_topic("ingest", 4)
        per_gib, r = measure(t.pid, t.port)
    finally:
        t.stop()
    lib.log("tallyd:          %.3f CPU s/GiB (%.0f MiB/s)" % (per_gib, r["MiB/s"]))
    return per_gib


def main():
    # The first gigabytes written after a while cost more (on a VM the page cache's
    # pages may first have to be backed by the host), whichever server writes them.
    baseline_run(load=LOAD[:-1] + ["1g"])
    base, tally = [], []
    for i in range(ROUNDS):
        base.append(baseline_run())
        tally.append(tallyd_run())
        lib.log("round %d: ratio %.3f" % (i + 1, tally[-1] / base[-1]))
    lib.result("ingest_cpu_ratio", min(tally) / min(base), "x", "<=", 1.5,
               "best of %d: tallyd %.3f / baseline %.3f CPU s per GiB" %
               (ROUNDS, min(tally), min(base)))


if __name__ == "__main__":
    main()
