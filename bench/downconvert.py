#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What a converted fetch costs: tallyd's CPU seconds for reading a whole partition with
Fetch v3 (an old client: the v2 batches are read on the thread pool and rewritten as magic 1
messages, sent from memory) ÷ the same for Fetch v4 (the batches go out with sendfile()),
over the very same warm log. Informational; target <= 20.

tallyd first takes BENCH_DOWNCONVERT_BYTES (default 512m) of 1 KiB records into one
partition (uncompressed 512 KiB batches, by loadgen); the segment files are read once so
that they are in the page cache. Then one raw client (kproto) reads the partition from
offset 0 to the high watermark in 8 MiB partition fetches, with Fetch v4, then with
Fetch v3. BENCH_ROUNDS (default 3) repeats the pair; the figure is the ratio of each
side's best round (noise only ever adds CPU time)."""
import os
import struct
import sys

import lib

sys.path.insert(0, os.path.join(lib.REPO, "tests", "integration"))
import kproto as kp  # noqa: E402

BYTES = os.environ.get("BENCH_DOWNCONVERT_BYTES", "512m")
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
CHUNK = 8 << 20
TOPIC = "downconvert"


def last_offset_v2(records):
    """The last offset of the whole v2 batches in records, or None."""
    pos, last = 0, None
    while pos + 61 <= len(records):
        base, length = struct.unpack_from(">qi", records, pos)
        if pos + 12 + length > len(records):
            break
        last = base + struct.unpack_from(">i", records, pos + 23)[0]
        pos += 12 + length
    return last


def last_offset_legacy(records):
    """The last offset of the whole messages in a magic 0/1 message set, or None."""
    pos, last = 0, None
    while pos + 12 <= len(records):
        off, size = struct.unpack_from(">qi", records, pos)
        if pos + 12 + size > len(records):
            break
        last = off
        pos += 12 + size
    return last


def read_all(conn, version, hw):
    """Reads offsets 0..hw with Fetch `version`; returns the Records bytes received."""
    pos, total = 0, 0
    while pos < hw:
        if version >= 4:
            part = conn.fetch({TOPIC: {0: pos}}, version=version,
                              partition_max_bytes=CHUNK)["partitions"][(TOPIC, 0)]
            last = last_offset_v2(part["records"] or b"")
        else:
            part = conn.fetch_old({TOPIC: {0: pos}}, version=version,
                                  partition_max_bytes=CHUNK)[(TOPIC, 0)]
            last = last_offset_legacy(part["records"])
        if part["error"] != 0 or last is None:
            raise RuntimeError("Fetch v%d at %d: error %d" % (version, pos, part["error"]))
        total += len(part["records"])
        pos = last + 1
    return total


def main():
    t = lib.Tallyd("downconvert", pin=True)
    try:
        t.create_topic(TOPIC, 1)
        lib.loadgen("produce", "--port", t.port, "--topic", TOPIC, "--partitions", 1,
                    "--connections", 1, "--bytes", BYTES, "--batch-bytes", "512k")
        log_bytes = 0
        for f in t.partition_logs(TOPIC, 0):  # warm the page cache
            with open(f, "rb") as fh:
                while True:
                    chunk = fh.read(1 << 24)
                    if not chunk:
                        break
                    log_bytes += len(chunk)
        with kp.Conn(t.port, timeout=60) as c:
            hw = c.list_offsets({TOPIC: {0: -1}})[(TOPIC, 0)][2]
            plain, conv = [], []
            for i in range(ROUNDS):
                lib.settle()
                c0 = lib.cpu_seconds(t.pid)
                sent = read_all(c, 4, hw)
                plain.append(lib.cpu_seconds(t.pid) - c0)
                lib.settle()
                c0 = lib.cpu_seconds(t.pid)
                sent3 = read_all(c, 3, hw)
                conv.append(lib.cpu_seconds(t.pid) - c0)
                lib.log("round %d: v4 %.3f CPU s (%d MiB sent), v3 %.3f CPU s (%d MiB sent), "
                        "ratio %.2f" % (i + 1, plain[-1], sent >> 20, conv[-1], sent3 >> 20,
                                        conv[-1] / max(plain[-1], 0.01)))
        best_plain = max(min(plain), 0.01)  # one clock tick: a sendfile pass may take less
        lib.result("downconvert_cpu_ratio", min(conv) / best_plain, "x", "<=", 20,
                   "best of %d: Fetch v3 %.3f / Fetch v4 %.3f CPU s per pass over %d MiB "
                   "(%d records)" % (ROUNDS, min(conv), min(plain), log_bytes >> 20, hw))
    finally:
        t.stop()


if __name__ == "__main__":
    main()
