# SPDX-License-Identifier: Apache-2.0
"""Durability of the partition logs: acknowledged records survive SIGTERM and kill -9
(also in the middle of a stream), and recovery after kill -9 cuts a torn or corrupt
tail off the last segment, says so, and carries on from there."""
import os
import re
import threading
import time

import pytest
from confluent_kafka import Producer

import harness
import kproto


def read_seqs(b, topic, parts):
    """{partition: [(offset, seq)]} of the whole topic, via confluent-kafka."""
    starts = harness.offsets(b, topic, range(parts), ts=-2)
    got = harness.consume_assigned(b, topic, starts)
    out = {}
    for p, msgs in got.items():
        out[p] = []
        for m in msgs:
            v = m.value()
            assert v is not None and v.startswith(b"seq-"), (p, m.offset(), v)
            seq = int(v[4:12])
            assert v == value_of(seq), "record at %d-%d is damaged: %r" % (p, m.offset(), v)
            out[p].append((m.offset(), seq))
    return out


def value_of(seq):
    return b"seq-%08d-" % seq + b"d" * (seq % 100)


class StreamProducer(threading.Thread):
    """Produces n records (partition seq % parts) with acks=all, paced, recording the
    delivery report of each."""

    def __init__(self, b, topic, n, parts, per_tick=100, tick=0.01):
        super().__init__(daemon=True)
        self.topic, self.n, self.parts = topic, n, parts
        self.per_tick, self.tick = per_tick, tick
        self.acked = {}  # seq -> (partition, offset)
        self.failed = {}  # seq -> error
        self.lock = threading.Lock()
        self.exc = None
        self.producer = Producer({
            "bootstrap.servers": b.bootstrap, "acks": "all", "linger.ms": 5,
            # Small batches, so that a test's small segment.bytes really rolls (one batch
            # larger than a segment lands whole in it, as in Kafka).
            "batch.num.messages": 500,
            "max.in.flight.requests.per.connection": 1,  # keeps retries in order
            "message.send.max.retries": 1000000, "retry.backoff.ms": 100,
            "message.timeout.ms": 120000, "socket.timeout.ms": 10000,
            "reconnect.backoff.ms": 50, "reconnect.backoff.max.ms": 500,
            "enable.idempotence": False})

    def _cb(self, err, msg, seq):
        with self.lock:
            if err is None:
                self.acked[seq] = (msg.partition(), msg.offset())
            else:
                self.failed[seq] = err

    def n_acked(self):
        with self.lock:
            return len(self.acked)

    def run(self):
        try:
            for seq in range(self.n):
                while True:
                    try:
                        self.producer.produce(
                            self.topic, value=value_of(seq), partition=seq % self.parts,
                            on_delivery=lambda err, msg, seq=seq: self._cb(err, msg, seq))
                        break
                    except BufferError:
                        self.producer.poll(0.05)
                if seq % self.per_tick == self.per_tick - 1:
                    self.producer.poll(0)
                    if self.tick:
                        time.sleep(self.tick)
            left = self.producer.flush(150)
            assert left == 0, "%d records undelivered after flush" % left
        except BaseException as e:  # reported by the test
            self.exc = e


def wait_until(cond, timeout, what):
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(0.02)


def test_acked_records_survive_kill9_and_sigterm_mid_stream(broker):
    topic, n, parts = "dur-stream", 30000, 3
    harness.create_topics(broker, [(topic, parts, None)])
    prod = StreamProducer(broker, topic, n, parts)
    prod.start()
    wait_until(lambda: prod.n_acked() >= n // 4, 60, "a quarter of the acks")
    broker.kill()
    at_kill = prod.n_acked()
    time.sleep(0.3)
    broker.start()
    wait_until(lambda: prod.n_acked() >= (2 * n) // 3, 90, "two thirds of the acks")
    broker.stop()  # SIGTERM (checked: exit 0, sanitizers silent)
    # Counted while the broker is down: once it is back, the records the producer queued
    # meanwhile may all be acknowledged before start() returns.
    at_term = prod.n_acked()
    broker.start()
    assert at_kill < at_term < n, "not mid-stream: %d, %d of %d acked" % (at_kill, at_term, n)
    prod.join(200)
    assert not prod.is_alive(), "producer did not finish"
    if prod.exc:
        raise prod.exc
    assert not prod.failed, "delivery failed: %r" % list(prod.failed.items())[:5]
    assert len(prod.acked) == n

    log = read_seqs(broker, topic, parts)
    dups = 0
    for p in range(parts):
        entries = log[p]
        assert [o for o, _s in entries] == list(range(entries[0][0] if entries else 0,
                                                       (entries[-1][0] + 1) if entries else 0))
        by_off = dict(entries)
        seqs = [s for _o, s in entries]
        # Every acknowledged record is where its delivery report says.
        for seq in range(p, n, parts):
            rp, ro = prod.acked[seq]
            assert rp == p
            assert by_off.get(ro) == seq, \
                "seq %d acked at %s-%d@%d, log has %r there" % (seq, topic, p, ro,
                                                              by_off.get(ro))
        # Nothing unknown, nothing lost, and first occurrences in order. Without
        # idempotence a retry after the kill may duplicate records that had been
        # written but not acknowledged.
        assert set(seqs) == set(range(p, n, parts))
        first = []
        seen = set()
        for s in seqs:
            if s not in seen:
                seen.add(s)
                first.append(s)
        assert first == list(range(p, n, parts)), "partition %d out of order" % p
        dups += len(seqs) - len(first)
    print("acked at kill -9: %d, at SIGTERM: %d; duplicates: %d" % (at_kill, at_term, dups))


@pytest.mark.parametrize("hard", [False, True], ids=["sigterm", "kill9"])
def test_acked_records_survive_restart_exactly_once(broker, hard):
    topic, n, parts = "dur-clean", 20000, 4
    harness.create_topics(broker, [(topic, parts, {"segment.bytes": "65536"})])
    prod = StreamProducer(broker, topic, n, parts, per_tick=2000, tick=0)
    prod.run()
    if prod.exc:
        raise prod.exc
    assert len(prod.acked) == n and not prod.failed
    before = harness.offsets(broker, topic, range(parts))
    assert sum(before.values()) == n
    segs = harness.segment_files(broker, topic, 0)
    assert len(segs) > 1, "segment.bytes=65536 should have rolled: %r" % segs
    for f in segs + harness.segment_files(broker, topic, 0, ".index"):
        assert re.fullmatch(r"\d{20}\.(log|index)", os.path.basename(f)), f

    broker.restart(hard=hard)
    harness.wait_leaders(broker, [topic])
    assert harness.offsets(broker, topic, range(parts)) == before
    log = read_seqs(broker, topic, parts)
    for p in range(parts):
        assert [s for _o, s in log[p]] == list(range(p, n, parts))
        assert [o for o, _s in log[p]] == list(range(before[p]))
        for o, s in log[p]:
            assert prod.acked[s] == (p, o)
    # Writing continues where the log ended.
    with broker.conn() as c:
        res = c.produce({topic: {0: kproto.record_batch([(None, value_of(n * 10))])}})
    assert res[(topic, 0)]["error"] == 0 and res[(topic, 0)]["base_offset"] == before[0]


# ---------------------------------------------------------------- corrupt tails

BATCHES, PER_BATCH = 50, 20


def cor_value(i):
    return b"cor-%06d-" % i + b"z" * 64


def fill_raw(b, topic):
    """50 batches of 20 records through raw Produce v3, one request each."""
    with b.conn() as c:
        for k in range(BATCHES):
            recs = [(b"k%d" % (k * PER_BATCH + j), cor_value(k * PER_BATCH + j))
                    for j in range(PER_BATCH)]
            res = c.produce({topic: {0: kproto.record_batch(recs)}}, acks=1)
            d = res[(topic, 0)]
            assert d["error"] == 0 and d["base_offset"] == k * PER_BATCH, d


def damage(path, how):
    """Damages the segment file; returns the offset recovery must truncate to."""
    with open(path, "rb") as f:
        data = f.read()
    batches = kproto.parse_record_batches(data)
    assert len(batches) == BATCHES and all(bt["crc_ok"] for bt in batches), \
        "unexpected segment contents: %d batches" % len(batches)
    pos = [0]
    for bt in batches:
        pos.append(pos[-1] + bt["size"])
    assert pos[-1] == len(data), "segment has %d bytes after the batches" % (len(data) - pos[-1])
    if how == "truncate_last":
        victim = BATCHES - 1
        with open(path, "r+b") as f:
            f.truncate(pos[victim] + batches[victim]["size"] // 2)
    else:
        victim = BATCHES - 1 if how == "flip_last" else 30
        at = pos[victim] + batches[victim]["size"] - 20  # inside a record's value
        with open(path, "r+b") as f:
            f.seek(at)
            byte = f.read(1)[0]
            f.seek(at)
            f.write(bytes([byte ^ 0x5A]))
    return batches[victim]["base_offset"]


@pytest.mark.parametrize("how", ["truncate_last", "flip_last", "flip_middle"])
def test_recovery_truncates_torn_or_corrupt_tail(broker, how):
    topic = "dur-torn"
    harness.create_topics(broker, [(topic, 1, None)])
    fill_raw(broker, topic)
    broker.kill()
    logs = harness.segment_files(broker, topic, 0)
    assert [os.path.basename(f) for f in logs] == ["%020d.log" % 0], logs
    good = damage(logs[-1], how)

    broker.start()
    harness.wait_leaders(broker, [topic])
    with open(broker.log_paths[-1], errors="replace") as f:
        lines = f.read().splitlines()
    warn = [ln for ln in lines if "WARN" in ln and re.search("truncat", ln, re.I)]
    assert warn, "no WARN line about truncation after recovery:\n%s" % "\n".join(lines[-40:])

    assert harness.offsets(broker, topic, [0]) == {0: good}
    msgs = harness.consume_assigned(broker, topic, {0: 0})[0]
    assert [m.offset() for m in msgs] == list(range(good))
    assert [m.value() for m in msgs] == [cor_value(i) for i in range(good)]
    raw = harness.fetch_all_raw(broker, topic, 0)
    assert len(raw) == good
    with broker.conn() as c:
        f = c.fetch({topic: {0: 0}}, version=4, partition_max_bytes=1 << 20)
        batches = kproto.parse_record_batches(f["partitions"][(topic, 0)]["records"])
    assert all(bt["crc_ok"] for bt in batches), "a corrupt batch was served"
    assert batches[-1]["last_offset"] == good - 1

    # Producing again continues at the truncation point and the data reads back.
    with broker.conn() as c:
        res = c.produce({topic: {0: kproto.record_batch([(b"new", b"after-%d" % i)
                                                         for i in range(5)])}})
    assert res[(topic, 0)]["error"] == 0 and res[(topic, 0)]["base_offset"] == good, res
    msgs = harness.consume_assigned(broker, topic, {0: good - 2})[0]
    assert [m.offset() for m in msgs] == list(range(good - 2, good + 5))
    assert [m.value() for m in msgs][2:] == [b"after-%d" % i for i in range(5)]

    # And all of it survives another clean restart.
    broker.restart()
    harness.wait_leaders(broker, [topic])
    assert harness.offsets(broker, topic, [0]) == {0: good + 5}
    assert len(harness.fetch_all_raw(broker, topic, 0)) == good + 5
