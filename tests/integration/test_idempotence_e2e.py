# SPDX-License-Identifier: Apache-2.0
"""Idempotent producer end to end: librdkafka with enable.idempotence=true streams
100,000 records over 6 partitions while the broker is killed with kill -9 and
restarted (same ports, same data) twice mid-stream. The client keeps retrying its
in-flight batches with their original sequence numbers; the broker must recognise the
ones it had already written. At the end every acknowledged record is in the log
exactly once, in per-partition order, at the offset its delivery report gave.

A kill -9 at a random moment rarely hits a batch that is written but not yet answered
(the broker answers within microseconds), so the client talks to the broker through a
proxy (advertised.listeners points at it) that, just before each kill, starts dropping
the broker's responses while still passing requests on: everything written in that
window is unacknowledged and must be recognised as a duplicate when retried. The proxy
reads the frames it passes, and the broker is killed only once it has dropped a Produce
answer that reported a write: the scenario is then certain, however loaded the machine
(measuring the log's growth after the drop began could not see a batch already written
when it was measured, and with max.in.flight requests unanswered nothing else is sent)."""
import socket
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


PRODUCE = 0


def produce_answer_wrote(body, version):
    """Whether a Produce response body (after the correlation id) reports a write: some
    partition answered with no error. Versions 3 to 8 (not flexible), which librdkafka
    2.0.2 uses; any other fails the test rather than guess."""
    assert 3 <= version <= 8, "Produce v%d answer: the proxy reads v3..v8 only" % version
    pos = 0

    def take(n):
        nonlocal pos
        pos += n
        return body[pos - n:pos]

    def i16():
        return int.from_bytes(take(2), "big", signed=True)

    def i32():
        return int.from_bytes(take(4), "big", signed=True)

    wrote = False
    for _ in range(i32()):
        take(i16())  # topic name
        for _ in range(i32()):
            i32()  # partition
            wrote = wrote or i16() == 0
            take(8 + 8 + (8 if version >= 5 else 0))  # base offset, append time, log start
            if version >= 8:
                for _ in range(i32()):  # record errors
                    i32()
                    n = i16()
                    take(max(n, 0))
                n = i16()  # error message
                take(max(n, 0))
    return wrote


class DropProxy:
    """TCP proxy to 127.0.0.1:target. While `drop` is set, connections stop passing
    the broker's bytes back (for good: a half-forwarded frame cannot be resumed) but
    keep passing requests on; while `block` is set new connections are refused.
    `unanswered_writes` counts the Produce answers reporting a write that were dropped
    (wholly or in part): batches the broker has that the client was never told of."""

    def __init__(self, target):
        self.target = target
        self.drop = threading.Event()
        self.block = threading.Event()
        self.lock = threading.Lock()
        self.unanswered_writes = 0
        self.lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.lsock.bind(("127.0.0.1", 0))
        self.lsock.listen(64)
        self.port = self.lsock.getsockname()[1]
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self):
        self.closed = True
        self.lsock.close()

    def _accept(self):
        while not self.closed:
            try:
                c, _ = self.lsock.accept()
            except OSError:
                return
            if self.block.is_set():
                c.close()
                continue
            try:
                s = socket.create_connection(("127.0.0.1", self.target), timeout=2)
                s.settimeout(None)
            except OSError:
                c.close()
                continue
            for sock in (c, s):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            asked = {}  # correlation id -> (api key, version) of this connection's requests
            threading.Thread(target=self._pump, args=(c, s, False, asked), daemon=True).start()
            threading.Thread(target=self._pump, args=(s, c, True, asked), daemon=True).start()

    def _pump(self, src, dst, responses, asked):
        buf, pos, drop_at = b"", 0, None  # drop_at: where in the stream dropping began
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if responses and drop_at is None and self.drop.is_set():
                    drop_at = pos
                pos += len(data)
                buf += data
                while len(buf) >= 4 and len(buf) >= 4 + int.from_bytes(buf[:4], "big"):
                    size = int.from_bytes(buf[:4], "big")
                    frame, buf = buf[4:4 + size], buf[4 + size:]
                    if not responses:  # recorded before it is passed on
                        asked[int.from_bytes(frame[4:8], "big", signed=True)] = (
                            int.from_bytes(frame[:2], "big"), int.from_bytes(frame[2:4], "big"))
                        continue
                    key, version = asked.pop(int.from_bytes(frame[:4], "big", signed=True),
                                             (None, None))
                    if (drop_at is not None and pos - len(buf) > drop_at and key == PRODUCE
                            and produce_answer_wrote(frame[4:], version)):
                        with self.lock:
                            self.unanswered_writes += 1
                if drop_at is None:
                    dst.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (src, dst):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                sock.close()


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


def test_idempotent_stream_survives_two_kill9(broker_factory):
    b = broker_factory(start=False)
    proxy = DropProxy(b.port)
    b.settings["advertised.listeners"] = "PLAINTEXT://127.0.0.1:%d" % proxy.port
    b.start()
    topic = "idem-e2e"
    harness.create_topics(b, [(topic, PARTS, {})])
    s = IdempotentStream(b, topic)
    t0 = time.monotonic()
    s.start()
    unanswered = []
    for mark in KILL_AT:
        while s.n_produced() < mark and s.is_alive():
            time.sleep(0.001)
        assert s.is_alive(), "stream ended before %d records (exc %r)" % (mark, s.exc)
        with proxy.lock:
            before = proxy.unanswered_writes
        proxy.drop.set()
        # The kill comes once a batch the broker wrote has gone unanswered.
        deadline = time.monotonic() + 60
        while proxy.unanswered_writes == before:
            assert time.monotonic() < deadline, "no Produce answer dropped in 60 s"
            assert s.is_alive(), "stream ended while answers were dropped (exc %r)" % s.exc
            time.sleep(0.01)
        proxy.block.set()
        b.kill()
        with proxy.lock:
            unanswered.append(proxy.unanswered_writes - before)
        b.start()
        proxy.drop.clear()
        proxy.block.clear()
    # the retries after each restart did include batches the broker already had
    assert all(n > 0 for n in unanswered), unanswered
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
    s.producer = None  # destroyed here, not after the broker has stopped
    proxy.close()
    print("idempotent e2e: %d records, 2 kill -9 (%r batches written but unanswered), %.1f s" %
          (TOTAL, unanswered, elapsed))
