# SPDX-License-Identifier: Apache-2.0
"""confluent-kafka-python (librdkafka) round trips through Produce and Fetch: every
record comes back exactly once, in per-partition order, with its key, value, headers
and timestamp, for acks 0/1/all and every compression codec."""
import time

import pytest
from confluent_kafka import Producer

import harness

BIG = 1 << 20  # a few 1 MiB values per run
TOPIC_CFG = {"max.message.bytes": str(4 << 20)}


def make_record(seq, parts, big=()):
    """(partition, key, value, headers) for sequence number seq. The sequence number
    travels in a header, so null keys and null values are checkable too."""
    key = None if seq % 13 == 0 else b"key-%d" % seq
    if seq in big:
        value = (b"%08d" % seq) * (BIG // 8)
    elif seq % 97 == 0:
        value = None
    else:
        value = b"v-%08d-" % seq + b"x" * (seq % 200)
    headers = [("seq", b"%d" % seq)]
    if seq % 5 == 0:
        # (No None header values: confluent-kafka 1.7.0 mis-counts references to None
        # when it hands such headers to Python and the interpreter aborts.)
        headers += [("h2", b"one"), ("h2", b""), ("empty", b"")]
    return seq % parts, key, value, headers


def produce(b, topic, n, parts, acks, compression, big=(), extra=None):
    """Produces records 0..n-1; returns {seq: (partition, offset)} from the delivery
    reports (offset -1001 for acks=0) and asserts that none failed."""
    conf = {"bootstrap.servers": b.bootstrap, "acks": str(acks),
            "compression.type": compression, "linger.ms": 5,
            "batch.num.messages": 10000, "queue.buffering.max.messages": 500000,
            "queue.buffering.max.kbytes": 1 << 20, "message.max.bytes": 4 << 20,
            "message.timeout.ms": 60000}
    conf.update(extra or {})
    p = Producer(conf)
    reports = {}
    errors = []

    def on_delivery(err, msg, seq):
        if err is not None:
            errors.append((seq, err))
        else:
            reports[seq] = (msg.partition(), msg.offset())

    for seq in range(n):
        part, key, value, headers = make_record(seq, parts, big)
        while True:
            try:
                p.produce(topic, value=value, key=key, partition=part, headers=headers,
                          timestamp=1_700_000_000_000 + seq,
                          on_delivery=lambda err, msg, seq=seq: on_delivery(err, msg, seq))
                break
            except BufferError:
                p.poll(0.05)
        if seq % 1000 == 0:
            p.poll(0)
    left = p.flush(90)
    assert left == 0, "%d records still queued after flush" % left
    assert not errors, "delivery failed for %d records, first: %r" % (len(errors), errors[:5])
    assert len(reports) == n
    return reports


def verify(b, topic, n, parts, big=(), reports=None):
    """Reads the whole topic back and checks every record exactly once in order."""
    want_counts = {p: len(range(p, n, parts)) for p in range(parts)}
    ends = harness.offsets(b, topic, range(parts))
    if reports is None:
        # acks=0: flush() returns once the bytes left the client, and the broker may still be
        # reading them from its socket when ListOffsets arrives on another connection.
        deadline = time.monotonic() + 30
        while ends != want_counts and time.monotonic() < deadline:
            time.sleep(0.1)
            ends = harness.offsets(b, topic, range(parts))
    starts = harness.offsets(b, topic, range(parts), ts=-2)
    assert starts == {p: 0 for p in range(parts)}
    assert ends == want_counts, "latest offsets %r, want %r" % (ends, want_counts)
    got = harness.consume_assigned(b, topic, {p: 0 for p in range(parts)})
    for p in range(parts):
        msgs = got[p]
        offs = [m.offset() for m in msgs]
        assert offs == list(range(ends[p])), "partition %d: offsets not contiguous" % p
        seqs = []
        for m in msgs:
            hdrs = m.headers() or []
            assert hdrs and hdrs[0][0] == "seq", "record at %d has headers %r" % (
                m.offset(), hdrs[:3])
            seq = int(hdrs[0][1])
            seqs.append(seq)
            _part, key, value, headers = make_record(seq, parts, big)
            assert m.key() == key, (p, m.offset(), seq)
            assert m.value() == value, (p, m.offset(), seq, (m.value() or b"")[:40])
            assert [(k, v) for k, v in hdrs] == headers, (p, m.offset(), hdrs)
            ts_type, ts = m.timestamp()
            assert ts == 1_700_000_000_000 + seq, (p, m.offset(), ts_type, ts)
        want = list(range(p, n, parts))
        if seqs != want:
            dup = len(seqs) - len(set(seqs))
            missing = sorted(set(want) - set(seqs))[:10]
            raise AssertionError("partition %d: %d records, want %d; %d duplicates, "
                                 "missing e.g. %r" % (p, len(seqs), len(want), dup, missing))
        if reports is not None:
            for seq in want:
                rp, ro = reports[seq]
                assert rp == p and seqs[ro] == seq, \
                    "delivery report said %s-%d@%d for seq %d; log has seq %d there" % (
                        topic, rp, ro, seq, seqs[ro] if ro < len(seqs) else -1)


def test_roundtrip_100k_records_with_big_values(broker):
    topic, n, parts = "rt-main", 100_000, 3
    big = {1234, 50_001, 99_998}
    harness.create_topics(broker, [(topic, parts, TOPIC_CFG)])
    reports = produce(broker, topic, n, parts, "all", "none", big)
    verify(broker, topic, n, parts, big, reports)


@pytest.mark.parametrize("compression", ["none", "gzip", "snappy", "lz4", "zstd"])
@pytest.mark.parametrize("acks", [0, 1, "all"])
def test_roundtrip_matrix(shared_broker, acks, compression):
    b = shared_broker
    topic, n, parts = "rt-acks%s-%s" % (acks, compression), 6000, 2
    big = {4321}
    harness.create_topics(b, [(topic, parts, TOPIC_CFG)])
    reports = produce(b, topic, n, parts, acks, compression, big)
    verify(b, topic, n, parts, big, None if acks == 0 else reports)


def test_big_record_over_topic_limit_is_rejected(broker):
    """A batch over the topic's max.message.bytes fails with MESSAGE_TOO_LARGE and the
    partition stays usable."""
    from confluent_kafka import KafkaError
    topic = "rt-limit"
    harness.create_topics(broker, [(topic, 1, {"max.message.bytes": "100000"})])
    p = Producer({"bootstrap.servers": broker.bootstrap, "acks": "all",
                  "message.max.bytes": 4 << 20, "message.timeout.ms": 20000,
                  "compression.type": "none"})
    res = []
    p.produce(topic, value=b"y" * 200_000, partition=0,
              on_delivery=lambda err, msg: res.append(err))
    p.flush(30)
    assert len(res) == 1 and res[0] is not None, res
    assert res[0].code() == KafkaError.MSG_SIZE_TOO_LARGE, res[0]
    p.produce(topic, value=b"small", partition=0, on_delivery=lambda err, msg: res.append(err))
    p.flush(30)
    assert res[1] is None, res
    assert harness.offsets(broker, topic, [0]) == {0: 1}
