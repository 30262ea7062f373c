#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Compaction: the log cleaner's CPU seconds per GiB cleaned ÷ the CPU seconds per GiB of a
plain read+write copy (`cat seg > copy`) of the same segment files, in the same run, both
pinned to the same CPU. Target <= 2 (issue 9).

A 1-partition topic (segment.bytes 16 MiB, cleanup.policy=delete, so nothing is cleaned
yet) takes BENCH_COMPACTION_BYTES (default 512m) of uncompressed ~1 MiB batches of 1 KiB
records whose keys come from a space of 8,000 (each key is updated about every 8 MiB). Then
the topic's cleanup.policy becomes compact (AlterConfigs) and the cleaner cleans every
sealed segment in one clean: a pass over the dirty part for the key map, a pass that copies
what stays. "GiB cleaned" is the bytes of the sealed segments when the clean starts; the
cleaner's CPU is tallyd's (all threads) from the alter to its "cleaned ... up to" line. The
copy is timed BENCH_ROUNDS times (default 3), best taken."""
import os
import re
import resource
import socket
import struct
import subprocess
import time

import lib

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
RECORD_SIZE = 1024
RECORDS_PER_BATCH = 1000
KEYSPACE = 8000
DISTINCT = KEYSPACE // RECORDS_PER_BATCH  # batches, each with its own 1000 keys
INFLIGHT = 4
TOPIC = "compaction"
TOPIC_CFG = {"segment.bytes": str(16 << 20), "min.cleanable.dirty.ratio": "0.01"}


def parse_size(s):
    mult = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    return int(float(s[:-1]) * mult[s[-1].lower()]) if s[-1].lower() in mult else int(s)


TOTAL = parse_size(os.environ.get("BENCH_COMPACTION_BYTES", "512m"))


def uvarint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def zigzag(v):
    return uvarint((v << 1) ^ (v >> 63))


def _crc_table():
    t = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


_CRC = _crc_table()


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc = _CRC[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def batch(seed, base_ts):
    """One uncompressed batch of RECORDS_PER_BATCH records, keys seed*1000 .. +999."""
    recs = []
    for i in range(RECORDS_PER_BATCH):
        key = b"key-%06d" % (seed * RECORDS_PER_BATCH + i)
        value = (b"value of %s " % key) * (RECORD_SIZE // 24)
        value = value[:RECORD_SIZE - len(key)]
        body = (b"\x00" + zigzag(0) + zigzag(i) + zigzag(len(key)) + key + zigzag(len(value)) +
                value + zigzag(0))
        recs.append(zigzag(len(body)) + body)
    section = b"".join(recs)
    after_crc = (struct.pack(">hiqqqhii", 0, RECORDS_PER_BATCH - 1, base_ts, base_ts, -1, -1, -1,
                             RECORDS_PER_BATCH) + section)
    tail = struct.pack(">ibI", -1, 2, crc32c(after_crc)) + after_crc
    return struct.pack(">qi", 0, len(tail)) + tail


def produce_frame(corr, records_blob):
    body = (struct.pack(">hhih", 0, 7, corr, 5) + b"bench" + struct.pack(">hhi", -1, 1, 30000) +
            struct.pack(">ih", 1, len(TOPIC)) + TOPIC.encode() +
            struct.pack(">iii", 1, 0, len(records_blob)) + records_blob)
    return struct.pack(">i", len(body)) + body


def recv_exact(s, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise RuntimeError("connection closed")
        buf += chunk
    return bytes(buf)


def ingest(t, frames, n_batches):
    s = socket.create_connection(("127.0.0.1", t.port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sent = done = 0
    try:
        while done < n_batches:
            while sent < n_batches and sent - done < INFLIGHT:
                s.sendall(frames[sent % len(frames)])
                sent += 1
            size = struct.unpack(">i", recv_exact(s, 4))[0]
            resp = recv_exact(s, size)
            off = 4 + 4 + 2 + len(TOPIC) + 4 + 4
            err = struct.unpack_from(">h", resp, off)[0]
            if err != 0:
                raise RuntimeError("produce error %d" % err)
            done += 1
    finally:
        s.close()


def copy_cpu(files):
    """CPU seconds (children, user + system) of `cat f > f.copy` for every file, pinned."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    for f in files:
        with open(f + ".copy", "wb") as out:
            subprocess.run(["cat", f], stdout=out, check=True,
                           preexec_fn=(lambda: os.sched_setaffinity(0, lib.SERVER_CPUS))
                           if lib.PIN else None)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    for f in files:
        os.unlink(f + ".copy")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    base_ts = int(time.time() * 1000)
    frames = [produce_frame(i, batch(i, base_ts)) for i in range(DISTINCT)]
    batch_len = len(frames[0])
    n_batches = max(DISTINCT * 4, TOTAL // batch_len)
    t = lib.Tallyd("compaction", settings={"log.cleaner.backoff.ms": "200"}, pin=True)
    try:
        lib.run(t.tally("topics", "create", TOPIC, "--partitions", 1, *sum(
            (["--config", "%s=%s" % kv] for kv in TOPIC_CFG.items()), [])))
        ingest(t, frames, n_batches)
        logs = t.partition_logs(TOPIC, 0)
        sealed = logs[:-1]
        cleaned_bytes = sum(os.path.getsize(f) for f in sealed)
        gib = cleaned_bytes / lib.GIB
        lib.log("%d batches, %d sealed segments, %.0f MiB to clean" %
                (n_batches, len(sealed), cleaned_bytes / (1 << 20)))
        copies = []
        for _ in range(ROUNDS):
            lib.settle()
            copies.append(copy_cpu(sealed) / gib)
        copy = min(copies)
        lib.log("copy: %s CPU s per GiB" % ", ".join("%.3f" % c for c in copies))
        lib.settle()
        c0 = lib.cpu_seconds(t.pid)
        t0 = time.monotonic()
        lib.run(t.tally("configs", "alter", "--topic", TOPIC, "--set", "cleanup.policy=compact",
                        *sum((["--set", "%s=%s" % kv] for kv in TOPIC_CFG.items()), [])))
        stderr = os.path.join(t.dir, "tallyd.stderr")
        line = None
        while time.monotonic() - t0 < 600:
            with open(stderr, errors="replace") as f:
                m = re.search(r"cleaned %s-0 up to offset \d+: .*" % TOPIC, f.read())
            if m:
                line = m.group(0)
                break
            time.sleep(0.05)
        cleaner = lib.cpu_seconds(t.pid) - c0
        if line is None:
            raise RuntimeError("no clean within 600 s")
        lib.log("cleaner: %.2f CPU s in %.1f s wall: %s" % (cleaner, time.monotonic() - t0, line))
        lib.result("compaction_cpu_ratio", (cleaner / gib) / copy, "ratio", "<=", 2,
                   "cleaner %.2f CPU s/GiB, copy %.2f CPU s/GiB, %.0f MiB cleaned" %
                   (cleaner / gib, copy, cleaned_bytes / (1 << 20)))
    finally:
        t.stop()


if __name__ == "__main__":
    main()
