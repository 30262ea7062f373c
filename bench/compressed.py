#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Compressed ingest: tallyd's CPU seconds per GiB of records produced in compressed batches
(acks=1) ÷ the CPU seconds per GiB of only decompressing the same batches, with the same
libraries, in this process, pinned to the same CPU. The broker decompresses and walks
every compressed batch on append (issue 7), so decompression is a floor it cannot go
under; the ratio says what the rest of the append path adds on top. One figure per codec;
target <= 2 (informational: no Kafka reference figure exists).

Batches are "max-size": about 1,000,000 bytes of 1 KiB JSON-like records before
compression (the default max.message.bytes, 1048588, bounds the decompressed size), so
the per-batch CPU is also what one max-size batch costs the event loop (logged).
BENCH_COMPRESSED_BYTES (default 512m, of records before compression) per codec and run;
BENCH_ROUNDS rounds (default 3), best of each side; BENCH_CODECS picks codecs."""
import ctypes
import ctypes.util
import os
import random
import socket
import struct
import time
import zlib

import lib

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
CODECS = os.environ.get("BENCH_COMPRESSED_CODECS", "gzip,snappy,lz4,zstd").split(",")
CODEC_ID = {"gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
RECORD_SIZE = 1024
RECORDS_PER_BATCH = 960  # about 1,000,000 bytes of records
DISTINCT = 4             # distinct batches per codec, sent round-robin
INFLIGHT = 4


def parse_size(s):
    mult = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    return int(float(s[:-1]) * mult[s[-1].lower()]) if s[-1].lower() in mult else int(s)


TOTAL = parse_size(os.environ.get("BENCH_COMPRESSED_BYTES", "512m"))

# ---------------------------------------------------------------- encoding


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


def records(seed):
    """RECORDS_PER_BATCH records of RECORD_SIZE-byte JSON-like values (compress 3-6x)."""
    rnd = random.Random(seed)
    events = ["page_view", "add_to_cart", "checkout", "login", "logout", "search"]
    out = []
    for i in range(RECORDS_PER_BATCH):
        v = ('{"id":%d,"user":"user-%05d","event":"%s","amount":%d.%02d,"session":"%016x",'
             '"tags":[%s],"note":"' % (seed * 100000 + i, rnd.randrange(50000),
                                       rnd.choice(events), rnd.randrange(1000),
                                       rnd.randrange(100), rnd.getrandbits(64),
                                       ",".join('"t%d"' % rnd.randrange(40) for _ in range(6))))
        words = []
        while len(v) + sum(len(w) + 1 for w in words) < RECORD_SIZE - 2:
            words.append(rnd.choice(events + ["alpha", "beta", "%x" % rnd.getrandbits(24)]))
        v = (v + " ".join(words))[:RECORD_SIZE - 2] + '"}'
        body = b"\x00" + zigzag(0) + zigzag(i) + zigzag(-1) + zigzag(len(v)) + v.encode() + \
            zigzag(0)
        out.append(zigzag(len(body)) + body)
    return b"".join(out)


class Codecs:
    """Compress and decompress with the libraries tallyd links (zlib, snappy, lz4, zstd)."""

    def __init__(self):
        self.snappy = ctypes.CDLL(ctypes.util.find_library("snappy"))
        self.lz4 = ctypes.CDLL(ctypes.util.find_library("lz4"))
        self.zstd = ctypes.CDLL(ctypes.util.find_library("zstd"))
        sz, vp, cp = ctypes.c_size_t, ctypes.c_void_p, ctypes.c_char_p
        self.snappy.snappy_max_compressed_length.restype = sz
        self.snappy.snappy_max_compressed_length.argtypes = [sz]
        self.snappy.snappy_compress.argtypes = [cp, sz, vp, ctypes.POINTER(sz)]
        self.snappy.snappy_uncompress.argtypes = [cp, sz, vp, ctypes.POINTER(sz)]
        self.lz4.LZ4F_compressFrameBound.restype = sz
        self.lz4.LZ4F_compressFrameBound.argtypes = [sz, vp]
        self.lz4.LZ4F_compressFrame.restype = sz
        self.lz4.LZ4F_compressFrame.argtypes = [vp, sz, cp, sz, vp]
        self.lz4.LZ4F_createDecompressionContext.argtypes = [ctypes.POINTER(vp), ctypes.c_uint]
        self.lz4.LZ4F_decompress.restype = sz
        self.lz4.LZ4F_decompress.argtypes = [vp, vp, ctypes.POINTER(sz), cp,
                                             ctypes.POINTER(sz), vp]
        self.lz4.LZ4F_resetDecompressionContext.argtypes = [vp]
        self.zstd.ZSTD_compressBound.restype = sz
        self.zstd.ZSTD_compressBound.argtypes = [sz]
        self.zstd.ZSTD_compress.restype = sz
        self.zstd.ZSTD_compress.argtypes = [vp, sz, cp, sz, ctypes.c_int]
        self.zstd.ZSTD_decompress.restype = sz
        self.zstd.ZSTD_decompress.argtypes = [vp, sz, cp, sz]
        self.lz4_dctx = vp()
        self.lz4.LZ4F_createDecompressionContext(ctypes.byref(self.lz4_dctx), 100)
        self.out = ctypes.create_string_buffer(4 << 20)

    def compress(self, name, data):
        if name == "gzip":
            c = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
            return c.compress(data) + c.flush()
        if name == "snappy":
            n = ctypes.c_size_t(self.snappy.snappy_max_compressed_length(len(data)))
            buf = ctypes.create_string_buffer(n.value)
            assert self.snappy.snappy_compress(data, len(data), buf, ctypes.byref(n)) == 0
            return buf.raw[:n.value]
        if name == "lz4":
            cap = self.lz4.LZ4F_compressFrameBound(len(data), None)
            buf = ctypes.create_string_buffer(cap)
            n = self.lz4.LZ4F_compressFrame(buf, cap, data, len(data), None)
            return buf.raw[:n]
        cap = self.zstd.ZSTD_compressBound(len(data))
        buf = ctypes.create_string_buffer(cap)
        n = self.zstd.ZSTD_compress(buf, cap, data, len(data), 3)
        return buf.raw[:n]

    def decompress(self, name, data):
        """Decompresses into a preallocated buffer; returns the output size."""
        if name == "gzip":  # one call, output buffer sized up front as tallyd's grows
            return len(zlib.decompress(data, 16 + zlib.MAX_WBITS, len(self.out)))
        cap = len(self.out)
        if name == "snappy":
            n = ctypes.c_size_t(cap)
            self.snappy.snappy_uncompress(data, len(data), self.out, ctypes.byref(n))
            return n.value
        if name == "lz4":
            dst, src = ctypes.c_size_t(cap), ctypes.c_size_t(len(data))
            self.lz4.LZ4F_decompress(self.lz4_dctx, self.out, ctypes.byref(dst), data,
                                     ctypes.byref(src), None)
            return dst.value
        return self.zstd.ZSTD_decompress(self.out, cap, data, len(data))


def batch(codec_id, section, count, base_ts):
    after_crc = (struct.pack(">hiqqqhii", codec_id, count - 1, base_ts, base_ts, -1, -1, -1,
                             count) + section)
    tail = struct.pack(">ibI", -1, 2, crc32c(after_crc)) + after_crc
    return struct.pack(">qi", 0, len(tail)) + tail


def produce_frame(corr, topic, partition, records_blob):
    body = (struct.pack(">hhih", 0, 7, corr, 5) + b"bench" + struct.pack(">hhi", -1, 1, 30000) +
            struct.pack(">ih", 1, len(topic)) + topic.encode() +
            struct.pack(">iii", 1, partition, len(records_blob)) + records_blob)
    return struct.pack(">i", len(body)) + body


def recv_exact(s, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise RuntimeError("connection closed")
        buf += chunk
    return bytes(buf)


def produce_error(resp, topic):
    # corr, topics(1), name, partitions(1), index, error
    off = 4 + 4 + 2 + len(topic) + 4 + 4
    return struct.unpack_from(">h", resp, off)[0]


# ---------------------------------------------------------------- runs


def ingest(t, topic, frames, n_batches):
    """Sends n_batches Produce requests (frames round-robin, INFLIGHT at once); returns
    tallyd's CPU seconds for them."""
    s = socket.create_connection(("127.0.0.1", t.port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    lib.settle()
    c0 = lib.cpu_seconds(t.pid)
    sent = done = 0
    try:
        while done < n_batches:
            while sent < n_batches and sent - done < INFLIGHT:
                s.sendall(frames[sent % len(frames)])
                sent += 1
            size = struct.unpack(">i", recv_exact(s, 4))[0]
            resp = recv_exact(s, size)
            err = produce_error(resp, topic)
            if err != 0:
                raise RuntimeError("produce error %d" % err)
            done += 1
    finally:
        s.close()
    return lib.cpu_seconds(t.pid) - c0


def decompress_alone(codecs, name, sections, n_batches):
    """CPU seconds to decompress n_batches of sections (round-robin), on the server's CPU."""
    old = os.sched_getaffinity(0)
    if lib.PIN:
        os.sched_setaffinity(0, lib.SERVER_CPUS)
    try:
        c0 = time.process_time()
        for i in range(n_batches):
            codecs.decompress(name, sections[i % len(sections)])
        return time.process_time() - c0
    finally:
        os.sched_setaffinity(0, old)


def main():
    codecs = Codecs()
    plains = [records(seed) for seed in range(DISTINCT)]
    plain_len = len(plains[0])
    n_batches = max(1, TOTAL // plain_len)
    gib = n_batches * plain_len / lib.GIB
    base_ts = int(time.time() * 1000)
    for name in CODECS:
        sections = [codecs.compress(name, p) for p in plains]
        for p, sct in zip(plains, sections):
            d = codecs.decompress(name, sct)
            assert d == len(p), (name, d, len(p))
        ratio = plain_len * len(sections) / sum(len(x) for x in sections)
        topic = "compressed-" + name
        frames = [produce_frame(i, topic, 0, batch(CODEC_ID[name], sct, RECORDS_PER_BATCH,
                                                    base_ts))
                  for i, sct in enumerate(sections)]
        t = lib.Tallyd("compressed", pin=True)
        try:
            t.create_topic(topic, 1)
            ingest(t, topic, frames, min(n_batches, 64))  # warm-up, not measured
            ing, dec = [], []
            for r in range(ROUNDS):
                ing.append(ingest(t, topic, frames, n_batches) / gib)
                dec.append(decompress_alone(codecs, name, sections, n_batches) / gib)
                lib.log("%s round %d: tallyd %.3f, decompress alone %.3f CPU s/GiB (%.2f)" %
                        (name, r + 1, ing[-1], dec[-1], ing[-1] / dec[-1]))
        finally:
            t.stop()
        per_batch_ms = min(ing) * gib / n_batches * 1000
        lib.log("%s: compression %.1fx; one max-size batch (%d bytes of records, %d "
                "compressed) costs tallyd %.2f ms CPU, decompression alone %.2f ms" %
                (name, ratio, plain_len, len(sections[0]), per_batch_ms,
                 min(dec) * gib / n_batches * 1000))
        lib.result("compressed_ingest_%s" % name, min(ing) / min(dec), "x", "<=", 2,
                   "best of %d: tallyd %.3f / decompress alone %.3f CPU s per GiB of "
                   "records; %.2f ms per max-size batch" %
                   (ROUNDS, min(ing), min(dec), per_batch_ms))


if __name__ == "__main__":
    main()
