#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Consumer groups (issue 9), four figures on release-build tallyds:

  group_consume_ratio   consuming BENCH_GROUP_MIB (default 1024) MiB of 1 KiB records
                        with a confluent-kafka consumer that subscribe()s in a group with
                        auto-commit ÷ the same consumer with assign() and no group, each
                        timed from subscribe/assign (on a connected client) to the last
                        record (the group's join counts;
                        group.initial.rebalance.delay.ms=0 on that broker). Best
                        of BENCH_ROUNDS (3) each, alternating. Target >= 0.97.
  group_commit_p99_ratio 100 groups committing one offset at a time concurrently (100
                        connections, OffsetCommit v2, simple commits) for
                        BENCH_GROUP_SECONDS (5) s: p99 commit latency ÷ p99 of acks=all
                        Produce v3 of one record of the same size as the commit's record
                        (33-byte key, 24-byte value) on 100 connections over 50 partitions.
                        Target <= 1.5; commits/s in the note.
  group_join_ratio      10 confluent-kafka members subscribe()ing to a fresh group: time
                        from the first subscribe to the last member's assignment ÷
                        (group.initial.rebalance.delay.ms 3000 + heartbeat.interval.ms
                        3000, both Kafka's defaults). Median of BENCH_ROUNDS. Target <= 1.2.
  group_memory_growth   broker RSS growth after 10,000 groups commit 10 partitions each
                        (simple commits). Target <= 64 MiB.
BENCH_GROUP_PARTS picks some of them ("consume,commit,join,memory", all by default).
"""
import os
import selectors
import socket
import struct
import sys
import time
import uuid

# confluent-kafka is installed for the system Python; bench/run.sh's python3 may be
# another interpreter.
try:
    import confluent_kafka  # noqa: F401
except ImportError:
    if os.path.exists("/usr/bin/python3") and os.path.realpath(sys.executable) != \
            os.path.realpath("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    raise
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

import lib

sys.path.insert(0, os.path.join(lib.REPO, "tests", "integration"))
import kproto as kp  # noqa: E402

MIB = int(os.environ.get("BENCH_GROUP_MIB", "1024"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
SECONDS = float(os.environ.get("BENCH_GROUP_SECONDS", "5"))
PARTS = os.environ.get("BENCH_GROUP_PARTS", "consume,commit,join,memory").split(",")

OFFSET_COMMIT, FIND_COORDINATOR = 8, 10


# ---------------------------------------------------------------- raw requests

def offset_commit_request(corr, group, topic, offsets):
    """OffsetCommit v2 as a simple (non-member) commit: generation -1, member ''."""
    def part(kv):
        p, off = kv
        return kp.i32(p) + kp.i64(off) + kp.string(None)
    body = (kp.string(group) + kp.i32(-1) + kp.string("") + kp.i64(-1) +
            kp.array([topic], lambda t: kp.string(t) + kp.array(sorted(offsets.items()), part)))
    return kp.frame(kp.header(OFFSET_COMMIT, 2, corr) + body)


def offset_commit_errors(body):
    r = kp.Reader(body)
    errs = []
    for _ in range(r.i32()):
        r.string()
        for _ in range(r.i32()):
            r.i32()
            errs.append(r.i16())
    return errs


def wait_coordinator(port, group, timeout=30):
    """FindCoordinator v0 until it answers (the first one creates __consumer_offsets)."""
    deadline = time.monotonic() + timeout
    with kp.Conn(port) as c:
        while True:
            corr = c.next_corr()
            c.send(kp.frame(kp.header(FIND_COORDINATOR, 0, corr) + kp.string(group)))
            _, body = c.recv_response()
            err = struct.unpack(">h", body[:2])[0]
            if err == 0:
                return
            if time.monotonic() > deadline:
                raise RuntimeError("FindCoordinator still answers %d" % err)
            time.sleep(0.1)


class Pipeline:
    """n connections, each with one request in flight, driven from one thread with a
    selector: make(i, corr) builds connection i's next request, check(i, body) judges
    its answer. run() returns the latencies (s) of answers that arrived after warmup."""

    def __init__(self, port, n, make, check):
        self.make, self.check = make, check
        self.sel = selectors.DefaultSelector()
        self.conns = []
        for i in range(n):
            s = socket.create_connection(("127.0.0.1", port))
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            s.setblocking(False)
            st = {"i": i, "sock": s, "buf": bytearray(), "corr": 0, "t0": 0.0}
            self.conns.append(st)
            self.sel.register(s, selectors.EVENT_READ, st)

    def _send(self, st):
        st["corr"] += 1
        data = self.make(st["i"], st["corr"])
        st["sock"].setblocking(True)
        st["sock"].sendall(data)
        st["sock"].setblocking(False)
        st["t0"] = time.perf_counter()

    def run(self, seconds, warmup=1.0, count=None):
        lat = []
        start = time.perf_counter()
        for st in self.conns:
            self._send(st)
        inflight = sent = len(self.conns)
        while inflight:
            for key, _ in self.sel.select(timeout=10):
                st = key.data
                chunk = st["sock"].recv(1 << 16)
                if not chunk:
                    raise RuntimeError("connection %d closed by the broker" % st["i"])
                st["buf"] += chunk
                buf = st["buf"]
                if len(buf) < 4 or len(buf) < 4 + struct.unpack(">i", buf[:4])[0]:
                    continue
                size = struct.unpack(">i", buf[:4])[0]
                payload = bytes(buf[4:4 + size])
                del buf[:4 + size]
                now = time.perf_counter()
                if now - start >= warmup:
                    lat.append(now - st["t0"])
                self.check(st["i"], payload[4:])
                if count is None:
                    more = now - start < warmup + seconds
                else:
                    more = sent < count
                if more:
                    self._send(st)
                    sent += 1
                else:
                    inflight -= 1
        return lat, time.perf_counter() - start

    def close(self):
        for st in self.conns:
            st["sock"].close()
        self.sel.close()


def p99(xs):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * 0.99))]


# ---------------------------------------------------------------- figures

def consume_once(bootstrap, topic, parts, n, group):
    conf = {"bootstrap.servers": bootstrap, "auto.offset.reset": "earliest",
            "enable.partition.eof": False}
    if group:
        conf.update({"group.id": "bench-%s" % uuid.uuid4().hex[:8], "enable.auto.commit": True})
    else:
        conf.update({"group.id": "bench-assign", "enable.auto.commit": False})
    c = Consumer(conf)
    # Connected first, in both modes: librdkafka waits a second before it asks again
    # for a coordinator when its first ask finds no broker connected yet, which would
    # time the client's start-up rather than the group.
    c.list_topics(topic, timeout=10)
    got = nbytes = 0
    start = time.perf_counter()
    if group:
        c.subscribe([topic])
    else:
        c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(parts)])
    while got < n:
        for m in c.consume(num_messages=10000, timeout=1.0):
            if m.error():
                if m.error().code() == KafkaError._PARTITION_EOF:
                    continue
                raise RuntimeError("consume: %s" % m.error())
            got += 1
            nbytes += len(m.value())
        if time.perf_counter() - start > 600:
            raise RuntimeError("consumed only %d of %d records" % (got, n))
    secs = time.perf_counter() - start
    c.close()
    return nbytes / secs / (1 << 20)


def figure_consume():
    t = lib.Tallyd("groups-consume", settings={"group.initial.rebalance.delay.ms": "0"})
    try:
        topic, parts, n = "consume", 4, MIB * 1024
        t.create_topic(topic, parts)
        rc, rate, line = lib.perf_produce(t.bootstrap, topic, n)
        if rc != 0:
            raise RuntimeError(line)
        lib.log("produced: " + line)
        grp, plain = [], []
        for i in range(ROUNDS):
            order = [(True, grp), (False, plain)]
            for group, out in (order if i % 2 == 0 else order[::-1]):
                lib.settle()
                out.append(consume_once(t.bootstrap, topic, parts, n, group))
                lib.log("round %d %-6s %.1f MiB/s" % (i + 1, "group" if group else "assign",
                                                     out[-1]))
        lib.result("group_consume_ratio", max(grp) / max(plain), "x", ">=", 0.97,
                   "best of %d: group+auto-commit %.0f / assign %.0f MiB/s (%d MiB, 1 KiB "
                   "records, confluent-kafka)" % (ROUNDS, max(grp), max(plain), MIB))
    finally:
        t.stop()


def figure_commit():
    t = lib.Tallyd("groups-commit")
    try:
        t.create_topic("bench-commit", 1)
        t.create_topic("bench-produce", 50)
        groups = ["bench-g-%03d" % i for i in range(100)]
        wait_coordinator(t.port, groups[0])
        for g in groups:  # every __consumer_offsets partition these use is loaded
            wait_coordinator(t.port, g)

        errors = []

        def commit_req(i, corr):
            return offset_commit_request(corr, groups[i], "bench-commit", {0: corr})

        def commit_check(_i, body):
            errors.extend(e for e in offset_commit_errors(body) if e != 0)

        # The record a commit appends: OffsetCommitKey v1 (2 + 2+11 + 2+12 + 4 = 33
        # bytes) and OffsetCommitValue v3 (2 + 8 + 4 + 2 + 8 = 24 bytes).
        key, value = b"k" * 33, b"v" * 24

        def produce_req(i, corr):
            batch = kp.record_batch([(key, value)])
            return kp.produce_request(corr, {"bench-produce": {i % 50: batch}}, acks=-1)

        def produce_check(_i, body):
            res, _ = kp.parse_produce(body, 3)
            errors.extend(d["error"] for d in res.values() if d["error"] != 0)

        results = {}
        for name, make, check in (("commit", commit_req, commit_check),
                                  ("produce", produce_req, produce_check),
                                  ("commit2", commit_req, commit_check)):
            pl = Pipeline(t.port, 100, make, check)
            try:
                lat, secs = pl.run(SECONDS)
            finally:
                pl.close()
            if errors:
                raise RuntimeError("%s answered errors %r" % (name, sorted(set(errors))))
            results[name] = (p99(lat), len(lat) / (secs - 1.0))
            lib.log("%-7s p99 %.2f ms, %.0f/s" % (name, results[name][0] * 1e3,
                                                  results[name][1]))
        # Commits run before and after the produce run; the better one counts.
        c = min(results["commit"], results["commit2"])
        pr = results["produce"]
        lib.result("group_commit_p99_ratio", c[0] / pr[0], "x", "<=", 1.5,
                   "commit p99 %.2f ms at %.0f commits/s (100 groups) vs acks=all produce "
                   "p99 %.2f ms at %.0f/s" % (c[0] * 1e3, c[1], pr[0] * 1e3, pr[1]))
    finally:
        t.stop()


def figure_join():
    delay, heartbeat = 3000, 3000
    t = lib.Tallyd("groups-join", settings={"group.initial.rebalance.delay.ms": str(delay)})
    try:
        topic = "join"
        t.create_topic(topic, 10)
        wait_coordinator(t.port, "warm-up")
        times = []
        for r in range(ROUNDS):
            group = "join-%d-%s" % (r, uuid.uuid4().hex[:6])
            assigned = {}
            members = []
            for i in range(10):
                members.append(Consumer({
                    "bootstrap.servers": t.bootstrap, "group.id": group,
                    "client.id": "m%d" % i, "heartbeat.interval.ms": heartbeat,
                    "enable.auto.commit": False}))
            start = time.perf_counter()
            for i, c in enumerate(members):
                c.subscribe([topic], on_assign=lambda _c, ps, i=i: ps and assigned.setdefault(
                    i, time.perf_counter()))
            while len(assigned) < 10:
                for c in members:
                    c.poll(0)
                time.sleep(0.001)
                if time.perf_counter() - start > 120:
                    raise RuntimeError("only %d of 10 members assigned" % len(assigned))
            times.append(max(assigned.values()) - start)
            lib.log("round %d: all 10 assigned after %.3f s" % (r + 1, times[-1]))
            for c in members:
                c.close()
        med = sorted(times)[len(times) // 2]
        lib.result("group_join_ratio", med * 1000 / (delay + heartbeat), "x", "<=", 1.2,
                   "median %.2f s of %d rounds; delay %d ms + heartbeat %d ms" %
                   (med, ROUNDS, delay, heartbeat))
    finally:
        t.stop()


def figure_memory():
    t = lib.Tallyd("groups-memory")
    try:
        t.create_topic("mem", 10)
        for i in range(50):  # load every __consumer_offsets partition before measuring
            wait_coordinator(t.port, "mem-warm-%d" % i)
        time.sleep(3)
        before = lib.rss_kib(t.pid)
        errors = []
        ngroups = 10000

        def make(i, corr):
            # Connection i sends groups i, i + 8, i + 16, ...
            g = i + 8 * (corr - 1)
            return offset_commit_request(corr, "mem-group-%05d" % g, "mem",
                                         {p: 1000 + p for p in range(10)})

        def check(_i, body):
            errors.extend(e for e in offset_commit_errors(body) if e != 0)

        pl = Pipeline(t.port, 8, make, check)
        try:
            pl.run(0, warmup=0, count=ngroups)
        finally:
            pl.close()
        if errors:
            raise RuntimeError("commits answered errors %r" % sorted(set(errors)))
        time.sleep(3)
        after = lib.rss_kib(t.pid)
        lib.log("VmRSS %.1f MiB before, %.1f MiB after %d groups x 10 partitions" %
                (before / 1024.0, after / 1024.0, ngroups))
        lib.result("group_memory_growth", (after - before) / 1024.0, "MiB", "<=", 64,
                   "%d groups x 10 committed partitions" % ngroups)
    finally:
        t.stop()


def main():
    for name, fn in (("consume", figure_consume), ("commit", figure_commit),
                     ("join", figure_join), ("memory", figure_memory)):
        if name in PARTS:
            fn()


if __name__ == "__main__":
    main()
