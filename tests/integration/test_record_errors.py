# SPDX-License-Identifier: Apache-2.0
"""Produce v8+ RecordErrors (KIP-467): when records, not the batch, are at fault, the
partition's answer lists each of them by its index in the batch, as Kafka's LogValidator
does — keyless records in a compacted topic (INVALID_RECORD), CreateTime timestamps out of
range (INVALID_TIMESTAMP), a client batch claiming LogAppendTime (every record) — so that a
client fails exactly those records and may retry the others. Nothing of a refused batch is
appended. Raw requests (kproto) at v8 and v9 (flexible), uncompressed and gzip; then what
confluent-kafka (librdkafka) makes of the answer."""
import gzip
import time
import uuid

import pytest
from confluent_kafka import Producer

import harness
import kproto as kp

INVALID_RECORD, INVALID_TIMESTAMP = 87, 32
KEYLESS = [3, 7, 15, 22, 38, 41, 56, 63, 77, 99]  # 10 of 100


def unique(prefix):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:10])


def now_ms():
    return int(time.time() * 1000)


def gzip_batch(records, timestamps=None):
    """A gzip-compressed v2 batch of (key, value) records (kp.record_batch's layout)."""
    base = now_ms()
    ts = list(timestamps) if timestamps is not None else [base] * len(records)
    first = min(ts)
    recs = b"".join(kp.encode_record(i, ts[i] - first, k, v) for i, (k, v) in enumerate(records))
    after_crc = (kp.i16(1) + kp.i32(len(records) - 1) + kp.i64(first) + kp.i64(max(ts)) +
                 kp.i64(-1) + kp.i16(-1) + kp.i32(-1) + kp.i32(len(records)) +
                 gzip.compress(recs))
    tail = kp.i32(-1) + kp.i8(2) + kp.u32(kp.crc32c(after_crc)) + after_crc
    return kp.i64(0) + kp.i32(len(tail)) + tail


def batch(records, codec, timestamps=None, **kw):
    if codec == "gzip":
        assert not kw
        return gzip_batch(records, timestamps)
    return kp.record_batch(records, timestamps=timestamps, **kw)


def produce(b, topic, data, version):
    with b.conn(timeout=60) as c:
        return c.produce({topic: {0: data}}, acks=-1, version=version)[(topic, 0)]


def log_end(b, topic):
    err, _ts, offset = harness.list_offset(b, topic, 0, -1)
    assert err == 0
    return offset


@pytest.fixture(scope="module")
def compacted(shared_broker):
    name = unique("rec-err-compact")
    harness.create_topics(shared_broker, [(name, 1, {"cleanup.policy": "compact"})])
    return name


@pytest.mark.parametrize("codec", ["none", "gzip"])
@pytest.mark.parametrize("version", [8, 9])
def test_keyless_records_of_a_compacted_topic_listed(shared_broker, compacted, version, codec):
    """100 records, 10 keyless, to a compacted topic: INVALID_RECORD with exactly those 10
    BatchIndexes, each with Kafka's message; the batch is not appended."""
    b = shared_broker
    records = [(None if i in KEYLESS else b"k%d" % i, b"v%d" % i) for i in range(100)]
    end = log_end(b, compacted)
    d = produce(b, compacted, batch(records, codec), version)
    assert d["error"] == INVALID_RECORD, d
    assert [i for i, _m in d["record_errors"]] == KEYLESS, d["record_errors"]
    want = "Compacted topic cannot accept message without key in topic partition %s-0." % (
        compacted)
    assert [m for _i, m in d["record_errors"]] == [want] * len(KEYLESS), d["record_errors"]
    assert d["error_message"].startswith(
        "One or more records have been rejected due to 10 record errors in total, and only "
        "showing the first three errors at most: [RecordError(batchIndex=3, message='%s'), "
        "RecordError(batchIndex=7, " % want), d["error_message"]
    assert log_end(b, compacted) == end
    # The other 90 (the client's retry of them) are taken.
    good = [r for i, r in enumerate(records) if i not in KEYLESS]
    d = produce(b, compacted, batch(good, codec), version)
    assert (d["error"], d["record_errors"]) == (0, []), d
    assert log_end(b, compacted) == end + 90


def test_timestamps_out_of_range_listed(broker):
    """CreateTime: the records whose timestamp is out of message.timestamp.before/after.max.ms
    are listed (INVALID_TIMESTAMP, Kafka's per-record text); records with -1 are not
    checked."""
    topic = unique("rec-err-ts")
    harness.create_topics(broker, [(topic, 1, {"message.timestamp.before.max.ms": "3600000",
                                               "message.timestamp.after.max.ms": "3600000"})])
    now = now_ms()
    ts = [now] * 20
    ts[4] = now - 2 * 3600000   # too old
    ts[11] = now + 2 * 3600000  # too far ahead
    ts[15] = -1                 # none: not checked
    records = [(b"k%d" % i, b"v") for i in range(20)]
    for version in (8, 9):
        d = produce(broker, topic, kp.record_batch(records, timestamps=ts), version)
        assert d["error"] == INVALID_TIMESTAMP, d
        assert [i for i, _m in d["record_errors"]] == [4, 11], d
        assert d["record_errors"][0][1].startswith(
            "Timestamp %d of message with offset 4 is out of range. The timestamp should be "
            "within [" % ts[4]), d
        assert d["record_errors"][1][1].startswith("Timestamp %d of message with offset 11 " %
                                                   ts[11]), d
        assert d["error_message"] == ("One or more records have been rejected due to invalid "
                                      "timestamp"), d
    assert log_end(broker, topic) == 0


def test_key_fault_first_and_any_timestamp_fault_gives_invalid_timestamp(broker):
    """A record at fault twice is listed once (for its key, as Kafka checks the key first);
    with any timestamp fault in the batch the partition's error is INVALID_TIMESTAMP."""
    topic = unique("rec-err-both")
    harness.create_topics(broker, [(topic, 1, {"cleanup.policy": "compact",
                                               "message.timestamp.before.max.ms": "3600000"})])
    now = now_ms()
    old = now - 2 * 3600000
    records = [(b"a", b"v"), (None, b"v"), (b"c", b"v"), (None, b"v")]
    d = produce(broker, topic, kp.record_batch(records, timestamps=[now, old, old, now]), 9)
    assert d["error"] == INVALID_TIMESTAMP, d
    assert [i for i, _m in d["record_errors"]] == [1, 2, 3], d
    assert "without key" in d["record_errors"][0][1]
    assert d["record_errors"][1][1].startswith("Timestamp %d" % old)
    assert "without key" in d["record_errors"][2][1]


def test_many_record_errors_all_listed_messages_bounded(shared_broker, compacted):
    """Every record at fault is listed; the first 100 carry a message, the rest null (the
    answer stays about the size of the batch)."""
    records = [(None, b"x")] * 150 + [(b"k", b"v")]
    d = produce(shared_broker, compacted, kp.record_batch(records), 9)
    assert d["error"] == INVALID_RECORD, d
    assert [i for i, _m in d["record_errors"]] == list(range(150)), d
    assert all(m and "without key" in m for _i, m in d["record_errors"][:100])
    assert all(m is None for _i, m in d["record_errors"][100:])
    assert "due to 150 record errors in total" in d["error_message"]


def test_log_append_time_claimed_by_a_client_lists_every_record(shared_broker):
    topic = unique("rec-err-lat")
    harness.create_topics(shared_broker, [(topic, 1, None)])
    records = [(b"k%d" % i, b"v") for i in range(5)]
    d = produce(shared_broker, topic, kp.record_batch(records, attributes=0x08), 8)
    assert d["error"] == INVALID_TIMESTAMP, d
    assert [i for i, _m in d["record_errors"]] == [0, 1, 2, 3, 4], d
    assert all("LogAppendTime" in m for _i, m in d["record_errors"])


def test_versions_before_8_get_the_error_alone(shared_broker, compacted):
    """Produce v3-v7 have no RecordErrors field: the partition's error is all they get."""
    records = [(b"k", b"v"), (None, b"v")]
    for version in (3, 7):
        d = produce(shared_broker, compacted, kp.record_batch(records), version)
        assert d["error"] == INVALID_RECORD and "record_errors" not in d, d


def test_confluent_kafka_fails_the_batch(shared_broker, compacted):
    """confluent-kafka 1.7 on librdkafka 2.0.2 does not surface RecordErrors: it fails every
    record of a refused batch with INVALID_RECORD — what it does against Kafka too (Java's
    producer is the client that uses the list). Every keyless record fails, every record is
    reported once, and a keyed record fails only with the batch it shared with a keyless one
    (how librdkafka batches the 100 depends on timing: not asserted)."""
    reports = {}
    p = Producer({"bootstrap.servers": shared_broker.bootstrap, "linger.ms": 200,
                  "retries": 0, "batch.num.messages": 1000})
    for i in range(100):
        p.produce(compacted, key=None if i in KEYLESS else b"k%d" % i, value=b"%d" % i,
                  partition=0,
                  on_delivery=lambda e, m: reports.setdefault(int(m.value()), []).append(e))
    assert p.flush(30) == 0
    assert sorted(reports) == list(range(100)) and all(len(v) == 1 for v in reports.values())
    codes = {i: (v[0].code() if v[0] is not None else 0) for i, v in reports.items()}
    assert {codes[i] for i in KEYLESS} == {INVALID_RECORD}, codes
    assert set(codes.values()) <= {0, INVALID_RECORD}, codes
