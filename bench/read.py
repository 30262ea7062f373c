#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Read efficiency: tallyd's CPU seconds per GiB served to Fetch clients from a warm
log ÷ the same for bench/sendfile_server serving the very same segment files with
sendfile(). Target <= 1.3.

tallyd first takes BENCH_READ_BYTES (default 1g) of 1 KiB records into 4 partitions;
the segment files are read once so that they are in the page cache. Then 4 fetchers
(Fetch v12 as modern clients send it, or BENCH_READ_FETCH_VERSION=4; max_bytes 50 MiB,
partition max 8 MiB) read every partition from offset 0
to the high watermark, twice; then 4 range readers read the same files from
sendfile_server in 8 MiB requests, twice. BENCH_ROUNDS (default 3) repeats the pair;
noise only ever adds CPU time, so the figure is the ratio of each server's best round.

Then the deterministic counters (bench/counters.py): system calls per GiB of one more pass
of each, under strace -c -f (read_syscall_ratio, recorded without a target), also per
response (one Fetch response, or one range); then the same pass with Fetch v4 (whose slices
the broker reads on its pool to look for zstd, KIP-110), for comparison. Among them the
loop's page-cache probes: one cachestat(2) per file range sent, and preadv2 (RWF_NOWAIT) for
the look-ups that were preads (docs/operations.md, "Cold reads")."""
import os
import statistics

import counters
import lib

BYTES = os.environ.get("BENCH_READ_BYTES", "1g")
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
PARTITIONS = 4
CHUNK = "8m"
FETCH_VERSION = os.environ.get("BENCH_READ_FETCH_VERSION", "12")
OTHER_VERSION = "4" if FETCH_VERSION == "12" else "12"


def fetch(t, passes, version=FETCH_VERSION):
    return lib.loadgen("fetch", "--port", t.port, "--topic", "read", "--partitions", PARTITIONS,
                       "--connections", PARTITIONS, "--max-bytes", "50m",
                       "--partition-max-bytes", CHUNK, "--passes", passes,
                       "--fetch-version", version)


def traced(pid, load):
    """(syscalls per GiB, detail per GiB, syscalls per response) over one load() pass."""
    st = counters.Strace(pid)
    r = load()
    calls = st.stop()
    total, detail = counters.syscall_summary(calls, r["bytes"] / lib.GIB)
    return total, detail, sum(calls.values()) / max(1, int(r["responses"]))


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
            r = fetch(t, 2)
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
            t_total, t_detail, t_resp = traced(t.pid, lambda: fetch(t, 1))
            lib.settle()
            b_total, b_detail, b_resp = traced(
                srv.pid, lambda: lib.loadgen("ranges", "--port", port, "--size", size,
                                             "--connections", PARTITIONS, "--chunk", CHUNK,
                                             "--passes", 1))
            lib.settle()
            o_total, o_detail, o_resp = traced(t.pid, lambda: fetch(t, 1, OTHER_VERSION))
            lib.log("syscalls per GiB, tallyd (Fetch v%s): %.0f, %.1f per response (%s)" %
                    (FETCH_VERSION, t_total, t_resp, t_detail))
            lib.log("syscalls per GiB, sendfile_server:   %.0f, %.1f per range (%s)" %
                    (b_total, b_resp, b_detail))
            lib.log("syscalls per GiB, tallyd (Fetch v%s): %.0f, %.1f per response (%s)" %
                    (OTHER_VERSION, o_total, o_resp, o_detail))
            lib.result("read_syscall_ratio", t_total / b_total, "x", None, None,
                       "strace -c -f over one pass, Fetch v%s: tallyd %.0f / sendfile %.0f "
                       "syscalls per GiB, %.1f / %.1f per response"
                       % (FETCH_VERSION, t_total, b_total, t_resp, b_resp))
        else:
            lib.log("counters skipped: no strace (apt-get install strace)")
        lib.result("read_cpu_ratio", min(tallys) / min(bases), "x", "<=", 1.3,
                   "best of %d: tallyd %.3f / sendfile %.3f CPU s per GiB (%s log, read twice, "
                   "Fetch v%s); median of the rounds' ratios %.3f; loop lag max %.1f ms"
                   % (ROUNDS, min(tallys), min(bases), BYTES, FETCH_VERSION,
                      statistics.median(x / y for x, y in zip(tallys, bases)), lag_ms))
    finally:
        if srv is not None:
            srv.stop()
        t.stop()


if __name__ == "__main__":
    main()
