#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Ingest efficiency: tallyd's CPU seconds per GiB of 1 KiB-record Produce batches
(acks=1) ÷ the same for bench/baseline_server, which only reads each frame, write()s
it to a file on the same filesystem (one per connection, as a broker has one log per
partition) and answers. Target <= 1.2 (issue 20; it was 1.5 before).

Both servers take the same load from bench/loadgen in the same invocation, one after
the other, BENCH_ROUNDS times (default 5, as issue 20 asks), after an unmeasured warm-up run.
Noise from other work on the machine only ever adds CPU time, so the figure is the ratio of
each server's best (lowest) round; ingest_cpu_ratio_median is the median of the rounds' own
ratios (each tallyd run over the sink's run just before it), with the same target.
BENCH_INGEST_BYTES (default 2g) sets the bytes per run, BENCH_INGEST_BATCH (default 512k) the
batch size. Before each measured run a little more guest memory than the run's page cache is
touched and freed (lib.warm_memory, BENCH_WARM bytes, default 5/4 of the run's; 0: off): on
this VM the host takes back memory left free, the first touch of each page then costs about
0.5 CPU-s per GiB, and without it the server that starts faster (the sink, in milliseconds;
tallyd in seconds) would write onto pages still backed and the other not.

Then the deterministic counters (bench/counters.py), each server in its own run: system
calls per GiB by call (strace -c -f over BENCH_COUNT_BYTES, default 1g) with the minor
page faults of the same run, and user-space instructions per GiB (callgrind over
BENCH_CALLGRIND_BYTES, default 128m). BENCH_COUNTERS=0 skips them."""
import os
import shutil
import counters
import lib

BYTES = os.environ.get("BENCH_INGEST_BYTES", "2g")
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
# BENCH_INGEST_BATCH (default 512k): the batch size, e.g. 64k for the mid-sized requests of
# clients that send small batches (Java's batch.size is 16 KiB per partition).
BATCH = os.environ.get("BENCH_INGEST_BATCH", "512k")
LOAD = ["--connections", 4, "--inflight", 4, "--batch-bytes", BATCH, "--record-size", 1024,
        "--partitions", 4, "--bytes", BYTES]
COUNT_BYTES = os.environ.get("BENCH_COUNT_BYTES", "1g")
CG_BYTES = os.environ.get("BENCH_CALLGRIND_BYTES", "128m")
COUNTERS = os.environ.get("BENCH_COUNTERS", "1") != "0"
# The guest memory backed just before each measured run (lib.warm_memory): a little more
# than the run's page cache. BENCH_WARM=0 turns it off.
WARM = int(lib.parse_size(os.environ.get("BENCH_WARM", BYTES)) * 5 // 4)


def measure(pid, port):
    lib.settle(warm=WARM)
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


def counted(pid, port, cg=None):
    """One counted run against a started server: with cg, the callgrind instructions per
    GiB; else (syscalls per GiB, {call: count per GiB}, minor faults per GiB)."""
    load = LOAD[:-1] + [CG_BYTES if cg else COUNT_BYTES]
    lib.settle()
    if cg:
        cg.zero(pid)
        r = lib.loadgen("produce", "--port", port, "--topic", "ingest", *load)
        return cg.total_ir(pid) / (r["bytes"] / lib.GIB)
    st = counters.Strace(pid)
    f0 = lib.minflt(pid)
    r = lib.loadgen("produce", "--port", port, "--topic", "ingest", *load)
    faults = lib.minflt(pid) - f0
    calls = st.stop()
    gib = r["bytes"] / lib.GIB
    total, detail = counters.syscall_summary(calls, gib)
    return total, detail, faults / gib


def count_baseline(cg=None):
    d = lib.scratch_dir("ingest-base")
    port = lib.free_port()
    srv = lib.Proc([os.path.join(lib.BENCH_BIN, "baseline_server"), str(port), d], pin=True,
                   prefix=cg.prefix() if cg else ())
    try:
        return counted(srv.pid, port, cg)
    finally:
        srv.stop()
        shutil.rmtree(d, ignore_errors=True)


def count_tallyd(cg=None):
    t = lib.Tallyd("ingest", pin=True, prefix=cg.prefix() if cg else (), ready_timeout=120)
    try:
        t.create_topic("ingest", 4)
        t.wait_open("ingest", 4)
        return counted(t.pid, t.port, cg)
    finally:
        t.stop()


def report_counters():
    if not counters.have("strace"):
        lib.log("counters skipped: no strace (apt-get install strace)")
        return
    b_total, b_detail, b_flt = count_baseline()
    t_total, t_detail, t_flt = count_tallyd()
    lib.log("syscalls per GiB, baseline_server: %.0f (%s)" % (b_total, b_detail))
    lib.log("syscalls per GiB, tallyd:          %.0f (%s)" % (t_total, t_detail))
    lib.log("minor faults per GiB: baseline_server %.0f, tallyd %.0f" % (b_flt, t_flt))
    lib.result("ingest_syscall_ratio", t_total / b_total, "x", "<=", 1.5,
               "strace -c -f over %s: tallyd %.0f / baseline %.0f syscalls per GiB" %
               (COUNT_BYTES, t_total, b_total))
    lib.result("ingest_minflt_ratio", t_flt / b_flt if b_flt else None, "x", None, None,
               "tallyd %.0f / baseline %.0f minor faults per GiB" %
               (t_flt, b_flt))
    if not (counters.have("valgrind") and counters.have("callgrind_control")):
        lib.log("instruction counts skipped: no valgrind")
        return
    cg = counters.Callgrind()
    try:
        b_ir = count_baseline(cg)
    finally:
        cg.cleanup()
    cg = counters.Callgrind()
    try:
        t_ir = count_tallyd(cg)
    finally:
        cg.cleanup()
    lib.result("ingest_instr_ratio", t_ir / b_ir, "x", None, None,
               "callgrind over %s: tallyd %.1f M / baseline %.1f M user-space instructions "
               "per GiB" % (CG_BYTES, t_ir / 1e6, b_ir / 1e6))


def main():
    # The first gigabytes written after a while cost more (on a VM the page cache's
    # pages may first have to be backed by the host), whichever server writes them.
    baseline_run(load=LOAD[:-1] + ["1g"])
    base, tally = [], []
    for i in range(ROUNDS):
        base.append(baseline_run())
        tally.append(tallyd_run())
        lib.log("round %d: ratio %.3f" % (i + 1, tally[-1] / base[-1]))
    pairs = sorted(t / b for t, b in zip(tally, base))
    median = pairs[len(pairs) // 2] if len(pairs) % 2 else \
        (pairs[len(pairs) // 2 - 1] + pairs[len(pairs) // 2]) / 2
    lib.result("ingest_cpu_ratio", min(tally) / min(base), "x", "<=", 1.2,
               "best of %d: tallyd %.3f / baseline %.3f CPU s per GiB; median of the %d "
               "interleaved pairs %.3f" % (ROUNDS, min(tally), min(base), ROUNDS, median))
    lib.result("ingest_cpu_ratio_median", median, "x", "<=", 1.2,
               "median of %d rounds' tallyd / baseline: %s" % (
                   ROUNDS, " ".join("%.3f" % r for r in pairs)))
    if COUNTERS:
        report_counters()


if __name__ == "__main__":
    main()
