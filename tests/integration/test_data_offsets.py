# SPDX-License-Identifier: Apache-2.0
"""ListOffsets (earliest, latest, by timestamp, max timestamp), LogAppendTime, and the
log start offset moving with retention and DeleteRecords, seen by raw requests and by
confluent-kafka consumers (offsets_for_times, auto.offset.reset)."""
import os
import time

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition

import harness
import kproto

T0 = 1_600_000_000_000


def producer(b, **extra):
    conf = {"bootstrap.servers": b.bootstrap, "acks": "all", "linger.ms": 0,
            "message.timeout.ms": 30000}
    conf.update(extra)
    return Producer(conf)


def produce_values(b, topic, items, partition=0, flush_every=None, **extra):
    """items: list of (value, timestamp or None). Returns the delivery offsets."""
    p = producer(b, **extra)
    offs, errs = [], []

    def cb(err, msg):
        (errs if err else offs).append(err or msg.offset())

    for i, (value, ts) in enumerate(items):
        kw = {"timestamp": ts} if ts is not None else {}
        p.produce(topic, value=value, partition=partition, on_delivery=cb, **kw)
        if flush_every and (i + 1) % flush_every == 0:
            p.flush(30)
    assert p.flush(30) == 0
    assert not errs, errs
    return sorted(offs)


# ---------------------------------------------------------------- ListOffsets

def timestamps_100():
    """100 records 1 s apart from T0, except offset 50 which holds the maximum."""
    ts = [T0 + i * 1000 for i in range(100)]
    ts[50] = T0 + 10_000_000
    return ts


def first_at_or_after(ts, target):
    for off, t in enumerate(ts):
        if t >= target:
            return off
    return None


def test_list_offsets_earliest_latest_and_by_timestamp(broker):
    topic = "lo-times"
    harness.create_topics(broker, [(topic, 1, None), ("lo-empty", 1, None)])
    ts = timestamps_100()
    # Several batches, so lookups cross batch boundaries.
    produce_values(broker, topic, [(b"r%d" % i, t) for i, t in enumerate(ts)], flush_every=7)

    wrong = []  # by-timestamp answers, reported together at the end
    for version in (1, 2, 4, 5, 6, 7):
        with broker.conn() as c:
            res = c.list_offsets({topic: {0: -2}}, version=version)
            assert res[(topic, 0)][0] == 0 and res[(topic, 0)][2] == 0, (version, res)
            res = c.list_offsets({topic: {0: -1}}, version=version)
            assert res[(topic, 0)][0] == 0 and res[(topic, 0)][2] == 100, (version, res)
            for target in (T0 - 5, T0, T0 + 25_500, T0 + 49_000, T0 + 99_000):
                res = c.list_offsets({topic: {0: target}}, version=version)
                err, got_ts, off = res[(topic, 0)]
                assert err == 0, (version, target, res)
                want = first_at_or_after(ts, target)
                if (off, got_ts) != (want, ts[want]):
                    wrong.append("v%d target T0%+d: got offset %d ts T0%+d, want %d ts T0%+d" %
                                 (version, target - T0, off, got_ts - T0, want, ts[want] - T0))
            # Past every timestamp: no offset (-1), no error.
            res = c.list_offsets({topic: {0: T0 + 20_000_000}}, version=version)
            assert res[(topic, 0)][0] == 0 and res[(topic, 0)][2] == -1, (version, res)

    # Empty partition: earliest = latest = 0.
    assert harness.offsets(broker, "lo-empty", [0], ts=-2) == {0: 0}
    assert harness.offsets(broker, "lo-empty", [0], ts=-1) == {0: 0}

    # The same through librdkafka.
    c = Consumer(harness.consumer_conf(broker))
    try:
        lo, hi = c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
        assert (lo, hi) == (0, 100)
        got = c.offsets_for_times([TopicPartition(topic, 0, T0 + 20_000_000)], timeout=10)
        assert got[0].offset == -1, got  # OFFSET_END
        for target, want in ((T0 + 25_500, 26), (T0 + 60_000, 50)):  # 50: largest timestamp
            got = c.offsets_for_times([TopicPartition(topic, 0, target)], timeout=10)
            assert got[0].error is None, got
            if got[0].offset != want:
                wrong.append("librdkafka offsets_for_times(T0%+d) = %d, want %d" %
                             (target - T0, got[0].offset, want))
    finally:
        c.close()
    assert not wrong, "ListOffsets by timestamp must give the first record (not batch) " \
        "with timestamp >= target:\n" + "\n".join(wrong)


def test_list_offsets_max_timestamp_v7(broker):
    topic = "lo-max"
    harness.create_topics(broker, [(topic, 2, None)])
    ts = timestamps_100()
    produce_values(broker, topic, [(b"r%d" % i, t) for i, t in enumerate(ts)], flush_every=9)
    with broker.conn() as c:
        res = c.list_offsets({topic: {0: kproto.MAX_TIMESTAMP, 1: kproto.MAX_TIMESTAMP}},
                             version=7)
    assert res[(topic, 0)] == (0, T0 + 10_000_000, 50), res
    # An empty partition has no max timestamp: timestamp -1 (Kafka answers offset -1;
    # some versions answer the log end, 0).
    err, ts1, off1 = res[(topic, 1)]
    assert err == 0 and ts1 == -1 and off1 in (-1, 0), res
    # More records, a new maximum later in the log.
    produce_values(broker, topic, [(b"late", T0 + 20_000_000), (b"after", T0)])
    with broker.conn() as c:
        res = c.list_offsets({topic: {0: kproto.MAX_TIMESTAMP}}, version=7)
    assert res[(topic, 0)] == (0, T0 + 20_000_000, 100), res


def test_list_offsets_unknown_partition(broker):
    harness.create_topics(broker, [("lo-known", 1, None)])
    with broker.conn() as c:
        res = c.list_offsets({"lo-known": {0: -1, 5: -1}, "lo-missing": {0: -1}}, version=5)
    assert res[("lo-known", 0)][0] == 0
    assert res[("lo-known", 5)][0] == kproto.UNKNOWN_TOPIC_OR_PARTITION
    assert res[("lo-missing", 0)][0] == kproto.UNKNOWN_TOPIC_OR_PARTITION


def test_log_append_time_sets_batch_timestamp(broker):
    topic = "lo-append"
    harness.create_topics(broker, [(topic, 1, {"message.timestamp.type": "LogAppendTime"}),
                                   ("lo-create", 1, None)])
    old = 1_000_000_000_000  # 2001
    before = int(time.time() * 1000)
    with broker.conn() as c:
        res = c.produce({topic: {0: kproto.record_batch([(b"k", b"v1"), (None, b"v2")],
                                                        base_timestamp=old)}}, version=5)
        res2 = c.produce({"lo-create": {0: kproto.record_batch([(b"k", b"v")],
                                                               base_timestamp=old)}},
                         version=5)
    after = int(time.time() * 1000)
    d = res[(topic, 0)]
    assert d["error"] == 0 and d["base_offset"] == 0, d
    assert before - 1000 <= d["log_append_time"] <= after + 1000, (before, d, after)
    assert d["log_start_offset"] == 0, d
    assert res2[("lo-create", 0)]["log_append_time"] == -1, res2

    with broker.conn() as c:
        f = c.fetch({topic: {0: 0}}, version=5)
    batches = kproto.parse_record_batches(f["partitions"][(topic, 0)]["records"])
    assert len(batches) == 1, batches
    bt = batches[0]
    assert bt["attributes"] & 0x08, "timestamp type bit not set: %r" % bt
    assert bt["max_timestamp"] == d["log_append_time"], (bt, d)
    assert bt["crc_ok"], "broker rewrote the batch without fixing its CRC"

    msgs = harness.consume_assigned(broker, topic, {0: 0})[0]
    assert [m.value() for m in msgs] == [b"v1", b"v2"]
    for m in msgs:
        assert m.timestamp() == (2, d["log_append_time"]), m.timestamp()  # 2 = LOG_APPEND


# ---------------------------------------------------------------- retention

FAST_RETENTION = {"log.retention.check.interval.ms": "500"}


def wait_earliest_above(b, topic, floor, timeout=20):
    deadline = time.monotonic() + timeout
    while True:
        off = harness.offsets(b, topic, [0], ts=-2)[0]
        if off > floor or time.monotonic() > deadline:
            return off
        time.sleep(0.25)


def produce_filler(b, topic, n, size=200, partition=0):
    p = producer(b, **{"linger.ms": 2, "batch.size": 4000})
    errs = []
    for i in range(n):
        p.produce(topic, value=b"%08d" % i + b"r" * size, partition=partition,
                  on_delivery=lambda err, msg: err and errs.append(err))
        p.poll(0)
    assert p.flush(30) == 0 and not errs, errs


def test_retention_bytes_moves_log_start(broker_factory):
    b = broker_factory(settings=FAST_RETENTION)
    topic = "ret-bytes"
    harness.create_topics(b, [(topic, 1, {"segment.bytes": "16384",
                                          "retention.bytes": "50000"})])
    produce_filler(b, topic, 2000)  # ~ 450 KB, ~28 segments
    latest = harness.offsets(b, topic, [0])[0]
    assert latest == 2000
    start = wait_earliest_above(b, topic, 0)
    assert start > 0, "retention.bytes never deleted a segment:\n%s" % b.stderr_tail()
    logs = harness.segment_files(b, topic, 0)
    size = sum(os.path.getsize(f) for f in logs)
    assert size <= 50000 + 16384 + 4000, "%d bytes left in %d segments" % (size, len(logs))
    first_base = int(os.path.basename(logs[0]).split(".")[0])
    assert first_base == start, (logs[0], start)
    check_out_of_range_below(b, topic, start, latest)


def test_retention_ms_deletes_old_segments(broker_factory):
    b = broker_factory(settings=FAST_RETENTION)
    topic = "ret-ms"
    harness.create_topics(b, [(topic, 1, {"segment.bytes": "16384", "retention.ms": "1500"})])
    produce_filler(b, topic, 600)
    time.sleep(1.6)
    start = wait_earliest_above(b, topic, 0)
    assert start > 0, "retention.ms never deleted a segment:\n%s" % b.stderr_tail()
    # Everything but the active segment is older than retention.ms by now.
    deadline = time.monotonic() + 10
    while len(harness.segment_files(b, topic, 0)) > 1 and time.monotonic() < deadline:
        time.sleep(0.25)
    logs = harness.segment_files(b, topic, 0)
    assert len(logs) == 1, logs
    start = harness.offsets(b, topic, [0], ts=-2)[0]
    assert int(os.path.basename(logs[0]).split(".")[0]) == start
    assert harness.offsets(b, topic, [0])[0] == 600
    # New records still go to the end and are readable.
    produce_values(b, topic, [(b"after", None)])
    recs = harness.fetch_all_raw(b, topic, 0, start)
    assert recs[-1][0] == 600 and recs[-1][3] == b"after"


def check_out_of_range_below(b, topic, start, latest):
    with b.conn() as c:
        f = c.fetch({topic: {0: 0}}, version=5)
        d = f["partitions"][(topic, 0)]
        assert d["error"] == kproto.OFFSET_OUT_OF_RANGE, d
        f = c.fetch({topic: {0: start}}, version=5)
        d = f["partitions"][(topic, 0)]
        assert d["error"] == 0 and d["log_start_offset"] == start and d["hw"] == latest, d
        f = c.fetch({topic: {0: latest + 1}}, version=5)
        assert f["partitions"][(topic, 0)]["error"] == kproto.OFFSET_OUT_OF_RANGE
        f = c.fetch({topic: {0: latest}}, version=5)  # at the end: empty, no error
        d = f["partitions"][(topic, 0)]
        assert d["error"] == 0 and not kproto.records_of(d["records"] or b""), d
    recs = harness.fetch_all_raw(b, topic, 0, start)
    assert [r[0] for r in recs] == list(range(start, latest))


# ---------------------------------------------------------------- DeleteRecords

def first_consumed(b, topic, start, reset, timeout=15, produce_more=False):
    """Assigns partition 0 at start with auto.offset.reset=reset; returns the first
    message (or error) the consumer sees."""
    c = Consumer(harness.consumer_conf(b, **{"auto.offset.reset": reset}))
    try:
        c.assign([TopicPartition(topic, 0, start)])
        deadline = time.monotonic() + timeout
        produced = False
        while time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error() and m.error().code() == KafkaError._PARTITION_EOF:
                if produce_more and not produced:
                    produce_values(b, topic, [(b"later", None)])
                    produced = True
                continue
            return m
        raise AssertionError("consumer saw nothing (reset=%s)" % reset)
    finally:
        c.close()


@pytest.mark.parametrize("version", [0, 1])
def test_delete_records_moves_log_start(broker, version):
    topic = "dr-%d" % version
    harness.create_topics(broker, [(topic, 2, None)])
    for part in (0, 1):
        produce_values(broker, topic, [(b"p%d-%d" % (part, i), None) for i in range(100)],
                       partition=part, flush_every=10)
    with broker.conn() as c:
        res = c.delete_records({topic: {0: 40, 1: -1}}, version=version)
        assert res[(topic, 0)] == (0, 40), res
        assert res[(topic, 1)] == (0, 100), res  # -1 = up to the high watermark
        # Lower than the current start: no change, no error.
        res = c.delete_records({topic: {0: 30}}, version=version)
        assert res[(topic, 0)] == (0, 40), res
        res = c.delete_records({topic: {0: 101}, "dr-missing": {0: 1}}, version=version)
        assert res[(topic, 0)][0] == kproto.OFFSET_OUT_OF_RANGE, res
        assert res[("dr-missing", 0)][0] == kproto.UNKNOWN_TOPIC_OR_PARTITION, res

    assert harness.offsets(broker, topic, [0, 1], ts=-2) == {0: 40, 1: 100}
    assert harness.offsets(broker, topic, [0, 1], ts=-1) == {0: 100, 1: 100}
    check_out_of_range_below(broker, topic, 40, 100)
    recs = harness.fetch_all_raw(broker, topic, 0, 40)
    assert recs[0][3] == b"p0-40"

    # librdkafka: a position below the log start resets as auto.offset.reset says.
    m = first_consumed(broker, topic, 5, "earliest")
    assert m.error() is None and m.offset() == 40 and m.value() == b"p0-40", m.error()
    m = first_consumed(broker, topic, 5, "error")
    assert m.error() is not None and m.error().code() == KafkaError._AUTO_OFFSET_RESET, \
        m.error()
    m = first_consumed(broker, topic, 5, "latest", produce_more=True)
    assert m.error() is None and m.offset() == 100 and m.value() == b"later", \
        (m.error(), m.offset())

    # The log start offset survives a restart.
    broker.restart()
    harness.wait_leaders(broker, [topic])
    assert harness.offsets(broker, topic, [0, 1], ts=-2) == {0: 40, 1: 100}
    assert harness.offsets(broker, topic, [0, 1], ts=-1) == {0: 101, 1: 100}
