#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A cold catch-up read beside a producer (issue 20 item 4, Kafka's KAFKA-7504).

cold_read_p99_ratio: the p99 delivery latency of a librdkafka producer (build/bench/latency,
acks=1, linger.ms=0, RATE records/s of 1 KiB to another topic) while a consumer reads a log
of BENCH_COLD_BYTES (default 1g) from offset 0 with nothing of it in the page cache ÷ the
same producer's p99 with no reader, in the same run. Target <= 2. The log is written with
loadgen (512 KiB batches), then each of its files is fsync'd and dropped from the page
cache (POSIX_FADV_DONTNEED: the effect of drop_caches on those files only). The reader is
a raw Fetch v11 client (the one the integration tests use: tests/integration/kproto.py),
max_bytes 50 MiB and 1 MiB per partition as librdkafka's defaults, so ranges go out with
sendfile(). Also printed: the same catch-up from the page cache (what reading costs the
producer with no disk involved), how long each catch-up took, the broker's own Produce p99
(the bucket of tally_request_total_seconds holding it: request read to answer sent) and its
loop-lag maximum (tally_event_loop_lag_max_seconds) after each phase.

BENCH_ROUNDS (default 3) rounds of (alone, hot, cold) on the same log; the ratio is the median
round's (the p99 of a few thousand records swings 2-5x from round to round on a shared
2-vCPU machine, the hot catch-up's as much as the cold one's). Counted rather than timed,
with perf where it is installed (BENCH_SCHED=0 skips it): cold_read_loop_disk_waits, how often
the event loop thread went to sleep uninterruptibly (blocked on a disk) during each cold
catch-up, from `perf sched record -a` (counters.SchedTrace), beside the pool threads' count;
target 0 (the build that sent cold ranges from the loop: 5,430)."""
import os
import struct
import sys
import threading
import time

import clusterlib
import counters
import lib

sys.path.insert(0, os.path.join(lib.REPO, "tests", "integration"))
import kproto  # noqa: E402

BYTES = os.environ.get("BENCH_COLD_BYTES", "1g")
RATE = int(os.environ.get("BENCH_COLD_RATE", "500"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
SCHED = os.environ.get("BENCH_SCHED", "1") != "0" and counters.have("perf")
ALONE_S = 10


def make_cold(paths):
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
            for _ in range(20):  # pages still in another CPU's LRU batch need a second try
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                try:
                    os.preadv(fd, [bytearray(4096)], 0, os.RWF_NOWAIT)
                except BlockingIOError:
                    break
                time.sleep(0.02)
        finally:
            os.close(fd)


def batches_end(data):
    pos, end = 0, None
    while len(data) - pos >= 61:
        base, length = struct.unpack(">qi", data[pos:pos + 12])
        if pos + 12 + length > len(data):
            break
        (delta,) = struct.unpack(">i", data[pos + 23:pos + 27])
        end = base + delta + 1
        pos += 12 + length
    return end


def catch_up(port, topic, end, out):
    c = kproto.Conn(port, timeout=120)
    nxt, t0 = 0, time.monotonic()
    try:
        while nxt < end:
            res = c.fetch({topic: {0: nxt}}, version=11, max_wait_ms=500, max_bytes=50 << 20,
                          partition_max_bytes=1 << 20)
            part = res["partitions"][(topic, 0)]
            if part["error"] != 0:
                raise RuntimeError("fetch error %d" % part["error"])
            got = batches_end(part["records"] or b"")
            if got is not None:
                nxt = got
    finally:
        c.close()
    out["seconds"] = time.monotonic() - t0


def broker_p99_ms(t, before):
    """The broker's own p99 for the Produce requests since `before` (the upper bound of
    tally_request_total_seconds' bucket: request read to answer sent), in ms."""
    q = lib.bucket_quantile(before, t.buckets("tally_request_total_seconds", 'api="Produce"'),
                            0.99)
    return -1.0 if q is None else q * 1e3


def during_catch_up(t, end, mib, what, sched=False):
    """The latency producer's figures while one reader catches up on the topic "cold"; with
    sched, also how the broker's threads spent it (counters.SchedTrace: "loop" for the event
    loop, the main thread, and "others" summed over the rest)."""
    lib.settle()
    trace = counters.SchedTrace() if sched else None
    read = {}
    reader = threading.Thread(target=catch_up, args=(t.port, "cold", end, read))
    prod = clusterlib.latency_run(t.bootstrap, "hot", RATE, 3600, acks="1", partition=0,
                                  popen=True)
    time.sleep(1)  # the producer's first record and connections are not counted
    b0 = t.buckets("tally_request_total_seconds", 'api="Produce"')
    reader.start()
    reader.join()
    prod.terminate()
    out, _ = prod.communicate(timeout=120)
    got = clusterlib.parse_summary(out)
    got["broker_p99_ms"] = broker_p99_ms(t, b0)
    if trace:
        threads = trace.stop(t.pid)
        loop = threads.pop(t.pid, {})
        others = {k: sum(x[k] for x in threads.values()) for k in ("d_waits", "d_wait_ms")}
        got["sched"] = (loop, others)
        lib.log("  the event loop: %d runs, %.0f ms on a CPU, waited for one %.0f ms in all "
                "(longest %.2f ms), blocked on a disk %d times (%.0f ms); the other %d "
                "threads: blocked on a disk %d times (%.0f ms)" % (
                    loop.get("switches", 0), loop.get("run_ms", 0), loop.get("delay_ms", 0),
                    loop.get("delay_max_ms", 0), loop.get("d_waits", 0),
                    loop.get("d_wait_ms", 0), len(threads), others["d_waits"],
                    others["d_wait_ms"]))
    lib.log("during a %s catch-up of %.0f MiB (%.1f s, %.0f MiB/s): p50 %.2f ms, p99 %.2f ms, "
            "max %.2f ms over %d records; broker p99 <= %.2f ms; loop lag max %.1f ms" % (
                what, mib, read["seconds"], mib / read["seconds"], got["p50_ms"],
                got["p99_ms"], got["max_ms"], got["records"], got["broker_p99_ms"],
                t.loop_lag_max_ms()))
    return got


def alone_run(t):
    """The latency producer's figures with no reader."""
    lib.settle()
    b0 = t.buckets("tally_request_total_seconds", 'api="Produce"')
    alone = clusterlib.latency_run(t.bootstrap, "hot", RATE, ALONE_S, acks="1", partition=0)
    alone["broker_p99_ms"] = broker_p99_ms(t, b0)
    lib.log("alone: p50 %.2f ms, p99 %.2f ms, max %.2f ms over %d records; broker p99 <= "
            "%.2f ms; loop lag max %.1f ms" % (alone["p50_ms"], alone["p99_ms"],
                                               alone["max_ms"], alone["records"],
                                               alone["broker_p99_ms"], t.loop_lag_max_ms()))
    return alone


def main():
    t = lib.Tallyd("cold", pin=True)
    try:
        t.create_topic("cold", 1)
        t.create_topic("hot", 1)
        lib.loadgen("produce", "--port", t.port, "--topic", "cold", "--partitions", 1,
                    "--connections", 1, "--bytes", BYTES, "--batch-bytes", "512k")
        c = kproto.Conn(t.port)
        try:
            end = c.list_offsets({"cold": {0: -1}})[("cold", 0)][2]
        finally:
            c.close()
        d = os.path.join(t.data, "cold-0")
        files = [os.path.join(d, f) for f in os.listdir(d)
                 if f.endswith((".log", ".index", ".timeindex"))]

        mib = sum(os.path.getsize(f) for f in files if f.endswith(".log")) / (1 << 20)
        os.sync()  # the log's writeback is not part of the first "alone"
        rounds = []
        for r in range(ROUNDS):
            lib.log("round %d of %d" % (r + 1, ROUNDS))
            alone = alone_run(t)
            # The same catch-up from the page cache first: what reading costs the producer
            # when no disk is involved, beside what a cold read adds.
            hot = during_catch_up(t, end, mib, "hot")
            make_cold(files)
            cold = during_catch_up(t, end, mib, "cold", sched=SCHED)
            rounds.append((cold["p99_ms"] / alone["p99_ms"], hot["p99_ms"] / alone["p99_ms"],
                           alone, cold))
        ratios = sorted(x[0] for x in rounds)
        hots = sorted(x[1] for x in rounds)
        med = ratios[len(ratios) // 2]
        mid = [x for x in rounds if x[0] == med][0]
        lib.result("cold_read_p99_ratio", med, "x", "<=", 2,
                   "median of %d rounds (all: %s; the same catch-up from the page cache: %s); "
                   "that round: producer p99 %.2f ms during a cold %s catch-up / %.2f ms alone; "
                   "broker-side Produce p99 <= %.2f ms cold, %.2f ms alone; loop lag max %.1f ms"
                   % (ROUNDS, ", ".join("%.2f" % x for x in ratios),
                      ", ".join("%.2f" % x for x in hots), mid[3]["p99_ms"], BYTES,
                      mid[2]["p99_ms"], mid[3]["broker_p99_ms"], mid[2]["broker_p99_ms"],
                      t.loop_lag_max_ms()))
        if SCHED:
            # Counted, not timed: the event loop's waits for a disk in every cold catch-up
            # (uninterruptible sleeps, perf sched), against the pool's.
            loops = [x[3]["sched"][0].get("d_waits", 0) for x in rounds]
            pools = [x[3]["sched"][1]["d_waits"] for x in rounds]
            lib.result("cold_read_loop_disk_waits", max(loops), "", "<=", 0,
                       "the event loop blocked on a disk during the cold catch-ups (per round: "
                       "%s); the pool threads, which read for it: %s" % (
                           ", ".join(map(str, loops)), ", ".join(map(str, pools))))
    finally:
        t.stop()


if __name__ == "__main__":
    main()
