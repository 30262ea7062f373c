#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Read efficiency: tallyd's CPU seconds per GiB served to Fetch clients from a warm
log ÷ the same for bench/sendfile_server serving the very same segment files with
sendfile(). Target <= 1.3.

tallyd first takes BENCH_READ_BYTES (default 1g) of 1 KiB records into 4 partitions;
the segment files are read once so that they are in the page cache. Then 4 fetchers
(Fetch v4, max_bytes 50 MiB, partition max 8 MiB) read every partition from offset 0
to the high watermark, twice; then 4 range readers read the same files from
sendfile_server in 8 MiB requests, twice. BENCH_ROUNDS (default 3) repeats the pair;
noise only ever adds CPU time, so the figure is the ratio of each server's best round.

Then the deterministic counters (bench/counters.py): system calls per GiB of one more pass
of each, under strace -c -f (read_syscall_ratio, recorded without a target). Among them the
loop's page-cache probes: one cachestat(2) per file range sent, and preadv2 (RWF_NOWAIT) for
the look-ups that were preads (docs/operations.md, "Cold reads")."""
import os

import counters
import lib

BYTES = os.environ.get("BENCH_READ_BYTES", "1g")
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
PARTITIONS = 4
CHUNK = "8m"


def main():
    t = lib.Tallyd("read", pin=True)
    srv = None
    try:
        t.create_topic("read", PARTITIONS)
        lib.loadgen("produce", "--port", t.port, "--topic", "read", "--partitions", PARTITIONS,
                    "--connections", PARTITIONS, "--bytes", BYTES, "--batch-bytes", "512k")
        files = []
        for p in range(PARTITIONS):
            files += t.partition_logs("read", p)
        for f in files:  # warm the page cache for both servers
            with open(f, "rb") as fh:
                while fh.read(1 << 24):
                    pass
        port = lib.free_port()
        srv = lib.Proc([os.path.join(lib.BENCH_BIN, "sendfile_server"), str(port)] + files, pin=True)
        size = int(srv.ready_line.split()[1])

        tallys, bases = [], []
        for i in range(ROUNDS):
            lib.settle()
            c0 = lib.cpu_seconds(t.pid)
            r = lib.loadgen("fetch", "--port", t.port, "--topic", "read", "--partitions",
                            PARTITIONS, "--connections", PARTITIONS, "--max-bytes", "50m",
                            "--partition-max-bytes", CHUNK, "--passes", 2)
            tally = (lib.cpu_seconds(t.pid) - c0) / (r["bytes"] / lib.GIB)
            lib.log("tallyd:          %.3f CPU s/GiB (%.0f MiB/s, %.2f GiB); loop lag max "
                    "%.1f ms" % (tally, r["MiB/s"], r["bytes"] / lib.GIB, t.loop_lag_max_ms()))
            lib.settle()
            c0 = lib.cpu_seconds(srv.pid)
            r = lib.loadgen("ranges", "--port", port, "--size", size, "--connections",
                            PARTITIONS, "--chunk", CHUNK, "--passes", 2)
            base = (lib.cpu_seconds(srv.pid) - c0) / (r["bytes"] / lib.GIB)
            lib.log("sendfile_server: %.3f CPU s/GiB (%.0f MiB/s, %.2f GiB)" %
                    (base, r["MiB/s"], r["bytes"] / lib.GIB))
            tallys.append(tally)
            bases.append(base)
            lib.log("round %d: ratio %.3f" % (i + 1, tally / base))
        lag_ms = t.loop_lag_max_ms()  # before strace, whose attaching stops the loop
        if counters.have("strace"):
            lib.settle()
            st = counters.Strace(t.pid)
            r = lib.loadgen("fetch", "--port", t.port, "--topic", "read", "--partitions",
                            PARTITIONS, "--connections", PARTITIONS, "--max-bytes", "50m",
                            "--partition-max-bytes", CHUNK, "--passes", 1)
            t_total, t_detail = counters.syscall_summary(st.stop(), r["bytes"] / lib.GIB)
            lib.settle()
            st = counters.Strace(srv.pid)
            r = lib.loadgen("ranges", "--port", port, "--size", size, "--connections",
                            PARTITIONS, "--chunk", CHUNK, "--passes", 1)
            b_total, b_detail = counters.syscall_summary(st.stop(), r["bytes"] / lib.GIB)
            lib.log("syscalls per GiB, tallyd:          %.0f (%s)" % (t_total, t_detail))
            lib.log("syscalls per GiB, sendfile_server: %.0f (%s)" % (b_total, b_detail))
            lib.result("read_syscall_ratio", t_total / b_total, "x", None, None,
                       "strace -c -f over one pass: tallyd %.0f / sendfile %.0f syscalls per GiB"
                       % (t_total, b_total))
        else:
            lib.log("counters skipped: no strace (apt-get install strace)")
        lib.result("read_cpu_ratio", min(tallys) / min(bases), "x", "<=", 1.3,
                   "best of %d: tallyd %.3f / sendfile %.3f CPU s per GiB (%s log, read twice); "
                   "loop lag max %.1f ms" % (ROUNDS, min(tallys), min(bases), BYTES, lag_ms))
    finally:
        if srv is not None:
            srv.stop()
        t.stop()


if __name__ == "__main__":
    main()
