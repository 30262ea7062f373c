#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Recompression on append (compression.type, issue 12): tallyd's CPU seconds per GiB of
records produced in one codec into a topic whose compression.type is another ÷ the same
batches into a topic that keeps the producer's codec (compression.type=producer). The
second only decompresses to validate (issue 7); the first also decompresses again and
compresses in the topic's codec, on the event loop. Informational (no Kafka reference
figure; Kafka recompresses the same way). Uses bench/compressed.py's batches: about
1,000,000 bytes of 1 KiB JSON-like records per batch.

BENCH_RECOMPRESS_BYTES (default 256m, of records before compression) per pair and run;
BENCH_ROUNDS rounds (default 3), best of each side; BENCH_RECOMPRESS_PAIRS, e.g.
"gzip:zstd,lz4:zstd,zstd:uncompressed"."""
import os
import time

import compressed as cz
import lib

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
PAIRS = [p.split(":") for p in os.environ.get(
    "BENCH_RECOMPRESS_PAIRS", "gzip:zstd,lz4:zstd,snappy:lz4,zstd:uncompressed").split(",")]
TOTAL = cz.parse_size(os.environ.get("BENCH_RECOMPRESS_BYTES", "256m"))


def cpu_per_gib(target, frames, topic, n_batches, gib):
    """Best of ROUNDS: tallyd CPU s per GiB with the broker-wide compression.type=target."""
    t = lib.Tallyd("recompress", settings={"compression.type": target}, pin=True)
    try:
        t.create_topic(topic, 1)
        cz.ingest(t, topic, frames, min(n_batches, 16))  # warm-up
        best = None
        for _ in range(ROUNDS):
            v = cz.ingest(t, topic, frames, n_batches) / gib
            best = v if best is None else min(best, v)
        return best
    finally:
        t.stop()


def main():
    codecs = cz.Codecs()
    plains = [cz.records(seed) for seed in range(cz.DISTINCT)]
    plain_len = len(plains[0])
    n_batches = max(1, TOTAL // plain_len)
    gib = n_batches * plain_len / lib.GIB
    base_ts = int(time.time() * 1000)
    for src, dst in PAIRS:
        sections = [codecs.compress(src, p) for p in plains]
        topic = "recompress-%s-%s" % (src, dst)
        frames = [cz.produce_frame(i, topic, 0, cz.batch(cz.CODEC_ID[src], sct,
                                                         cz.RECORDS_PER_BATCH, base_ts))
                  for i, sct in enumerate(sections)]
        keep = cpu_per_gib("producer", frames, topic, n_batches, gib)
        rewrite = cpu_per_gib(dst, frames, topic, n_batches, gib)
        per_batch_ms = rewrite * gib / n_batches * 1000
        lib.log("%s -> %s: keep %.3f, recompress %.3f CPU s/GiB; one max-size batch costs "
                "%.2f ms of event-loop CPU recompressed (%.2f ms kept)" %
                (src, dst, keep, rewrite, per_batch_ms, keep * gib / n_batches * 1000))
        lib.result("recompress_%s_%s" % (src, dst), rewrite / keep, "x", "<=", 10,
                   "best of %d: %.3f / %.3f tallyd CPU s per GiB of records; %.2f ms per "
                   "max-size batch" % (ROUNDS, rewrite, keep, per_batch_ms))


if __name__ == "__main__":
    main()
