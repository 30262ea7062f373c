#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""flush.messages=1 at nearly no cost (issue 20, item 5): `tally perf produce` (1 KiB
records, acks=all, librdkafka defaults otherwise) records/s into a fresh 4-partition topic
with flush.messages=1 ÷ the same into a topic without a flush policy, on the same tallyd in
the same run. With flush.messages=1 every answer waits for an fsync of its batch; group
commit (one fsync in flight per partition, covering everything appended while the previous
one ran) is what keeps the ratio near 1. Target >= 0.9. The p99 delivery latency ratio
(fsynced ÷ default) is reported beside it (informational).

The default run never waits for the disk (each run's topic is deleted before writeback),
so where the disk writes more slowly than the broker ingests into the page cache, no
flush policy can reach 0.9: the fsynced run is bound by the disk. flush_disk_floor_ratio
says how close it comes to that bound: its MB/s ÷ the MB/s of writing the same number of
bytes in 1 MiB writes and one fdatasync at the end to the same filesystem (the disk's own
sequential durable write rate), measured once per round in the same run; target >= 0.9.
BENCH_CLIENT_RECORDS (default 1000000) records per run; BENCH_ROUNDS (default 3) pairs,
alternating which goes first; the figure is the ratio of each side's best run."""
import os
import re
import time

import lib

RECORDS = int(os.environ.get("BENCH_CLIENT_RECORDS", "1000000"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
FSYNCED = {"flush.messages": "1"}


def p99_of(line):
    m = re.search(r"([\d.]+) ms 99th", line)
    if not m:
        raise RuntimeError("no p99 in %r" % line)
    return float(m.group(1))


def disk_mb_s(directory, nbytes):
    """MB/s (10^6 bytes, as perf produce counts) of writing nbytes in 1 MiB writes to a new
    file in directory, then one fdatasync."""
    path = os.path.join(directory, "disk-floor.tmp")
    chunk = b"\x5a" * (1 << 20)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        t0 = time.monotonic()
        left = nbytes
        while left > 0:
            left -= os.write(fd, chunk[:min(left, len(chunk))])
        os.fdatasync(fd)
        elapsed = time.monotonic() - t0
    finally:
        os.close(fd)
        os.unlink(path)
    return nbytes / elapsed / 1e6


def mb_s_of(line):
    m = re.search(r"\(([\d.]+) MB/sec\)", line)
    if not m:
        raise RuntimeError("no MB/sec in %r" % line)
    return float(m.group(1))


def main():
    t = lib.Tallyd("flush")
    try:
        t.warm_up(RECORDS)
        rates = {"fsynced": [], "default": []}
        p99s = {"fsynced": [], "default": []}
        fsynced_mb, disk_mb = [], []
        for i in range(ROUNDS):
            # Alternate which goes first, so that neither always meets a warmer machine.
            for kind in (("fsynced", "default") if i % 2 == 0 else ("default", "fsynced")):
                rc, rate, line = t.produce_fresh(
                    RECORDS, configs=FSYNCED if kind == "fsynced" else None)
                if rc != 0:
                    raise RuntimeError("%s run failed: %s" % (kind, line))
                lib.log("%-8s %s" % (kind + ":", line))
                rates[kind].append(rate)
                p99s[kind].append(p99_of(line))
                if kind == "fsynced":
                    fsynced_mb.append(mb_s_of(line))
            disk_mb.append(disk_mb_s(t.dir, RECORDS * 1024))
            lib.log("disk:    %.1f MB/s (%d bytes, one fdatasync)" % (disk_mb[-1], RECORDS * 1024))
            lib.log("round %d: ratio %.3f" % (i + 1, rates["fsynced"][-1] / rates["default"][-1]))
        best_f, best_d = max(rates["fsynced"]), max(rates["default"])
        p99_f, p99_d = min(p99s["fsynced"]), min(p99s["default"])
        lib.result("flush_messages_ratio", best_f / best_d, "x", ">=", 0.9,
                   "best of %d: flush.messages=1 %.0f / default %.0f records/s (%d x 1 KiB, "
                   "acks=all); p99 %.1f / %.1f ms = %.2fx" %
                   (ROUNDS, best_f, best_d, RECORDS, p99_f, p99_d,
                    p99_f / p99_d if p99_d > 0 else float("inf")))
        lib.result("flush_disk_floor_ratio", max(fsynced_mb) / max(disk_mb), "x", ">=", 0.9,
                   "best of %d: flush.messages=1 %.1f MB/s / sequential write + fdatasync "
                   "%.1f MB/s" % (ROUNDS, max(fsynced_mb), max(disk_mb)))
    finally:
        t.stop()


if __name__ == "__main__":
    main()
