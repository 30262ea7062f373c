# SPDX-License-Identifier: Apache-2.0
"""Idempotent producer end to end: librdkafka with enable.idempotence=true streams
100,000 records over 6 partitions while the broker is killed with kill -9 and
restarted (same ports, same data) twice mid-stream. The client keeps retrying its
in-flight batches with their original sequence numbers; the broker must recognise the
ones it had already written. At the end every acknowledged record is in the log
exactly once, in per-partition order, at the offset its delivery report gave."""
import threading
import time

from confluent_kafka import Producer

import harness

TOTAL = 100_000
PARTS = 6
CHUNK = 50         # records produced per tick ...
TICK = 0.004       # ... a steady stream (~8 s plus the restarts), so that requests are
                   # in flight, some written but not yet answered, when the broker dies
KILL_AT = (30_017, 65_041)   # records produced when the broker is killed


def value_of(partition, seq):
    return b"%d:%08d" % (partition, seq)


class IdempotentStream(threading.Thread):
    def __init__(self, b, topic):
        super().__init__(daemon=True)
        self.topic = topic
        self.acked = {}    # (partition, seq) -> offset
        self.failed = {}   # (partition, seq) -> error
        self.fatal = None
        self.lock = threading.Lock()
        self.produced = 0
        self.exc = None
        self.producer = Producer({
            "bootstrap.servers": b.bootstrap, "enable.idempotence": True,
            "acks": "all", "linger.ms": 5, "batch.num.messages": 1000,
            "max.in.flight.requests.per.connection": 5,
            "message.send.max.retries": 10_000_000, "retry.backoff.ms": 100,
            "message.timeout.ms": 120_000, "socket.timeout.ms": 10_000,
            "reconnect.backoff.ms": 50, "reconnect.backoff.max.ms": 500,
            "topic.metadata.refresh.interval.ms": 1000,
            "error_cb": self._error})

    def _error(self, err):
        if err.fatal():
            self.fatal = err

    def _cb(self, err, msg, key):
        with self.lock:
            if err is None:
                self.acked[key] = msg.offset()
            else:
                self.failed[key] = err

    def n_produced(self):
        with self.lock:
            return self.produced

    def n_acked(self):
        with self.lock:
            return len(self.acked)

    def run(self):
        try:
            seqs = [0] * PARTS
            i = 0
            while i < TOTAL:
                for _ in range(min(CHUNK, TOTAL - i)):
                    p = i % PARTS
                    key = (p, seqs[p])
                    while True:
                        try:
                            self.producer.produce(
                                self.topic, value_of(p, seqs[p]), partition=p,
                                on_delivery=lambda e, m, k=key: self._cb(e, m, k))
                            break
                        except BufferError:
                            self.producer.poll(0.05)
                    seqs[p] += 1
                    i += 1
                with self.lock:
                    self.produced = i
                self.producer.poll(0)
                time.sleep(TICK)
            left = self.producer.flush(180)
            assert left == 0, "%d records still queued after flush" % left
        except BaseException as e:  # reported by the test
            self.exc = e


def test_idempotent_stream_survives_two_kill9(broker):
    b = broker
    topic = "idem-e2e"
    harness.create_topics(b, [(topic, PARTS, {})])
    s = IdempotentStream(b, topic)
    t0 = time.monotonic()
    s.start()
    for mark in KILL_AT:
        while s.n_produced() < mark and s.is_alive():
            time.sleep(0.001)
        assert s.is_alive(), "stream ended before %d records (exc %r)" % (mark, s.exc)
        b.kill()
        time.sleep(0.3)  # requests in flight fail; the client starts retrying
        b.start()
    s.join(240)
    assert not s.is_alive(), "producer stuck: %d acked" % s.n_acked()
    assert s.exc is None, repr(s.exc)
    assert s.fatal is None, "fatal idempotence error: %s" % s.fatal
    # With message.timeout.ms = 120 s nothing should have failed at all.
    assert not s.failed, "%d failed, e.g. %r" % (len(s.failed), sorted(s.failed.items())[:5])
    assert len(s.acked) == TOTAL

    ends = harness.offsets(b, topic, range(PARTS))
    got = harness.consume_assigned(b, topic, {p: 0 for p in range(PARTS)}, ends,
                                   conf={"fetch.message.max.bytes": 1 << 20})
    for p in range(PARTS):
        n = len([k for k in s.acked if k[0] == p])
        vals = [m.value() for m in got[p]]
        offs = [m.offset() for m in got[p]]
        if vals != [value_of(p, q) for q in range(n)]:
            seen = {}
            for o, v in zip(offs, vals):
                seen.setdefault(v, []).append(o)
            dups = {v: o for v, o in seen.items() if len(o) > 1}
            missing = [q for q in range(n) if value_of(p, q) not in seen]
            raise AssertionError(
                "partition %d: %d records for %d acked; %d duplicated (e.g. %r), %d missing "
                "(e.g. %r), order %s" % (p, len(vals), n, len(dups), sorted(dups.items())[:3],
                                         len(missing), missing[:5],
                                         "ok" if vals == sorted(vals) else "broken"))
        assert offs == list(range(n)), "partition %d: offsets not dense" % p
        assert ends[p] == n
        for q in range(n):
            assert s.acked[(p, q)] == q, "partition %d seq %d acked at %d, stored at %d" % (
                p, q, s.acked[(p, q)], q)
    elapsed = time.monotonic() - t0
    print("idempotent e2e: %d records, 2 kill -9, %.1f s" % (TOTAL, elapsed))
