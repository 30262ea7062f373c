# SPDX-License-Identifier: Apache-2.0
"""kafka-python (pure Python client, broker version auto-detected) produces and
consumes records through Produce, Fetch and ListOffsets."""
import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

import harness


@pytest.mark.parametrize("compression", [None, "gzip"])
def test_kafka_python_roundtrip(shared_broker, compression):
    b = shared_broker
    topic, n, parts = "kp-data-%s" % (compression or "none"), 4000, 3
    harness.create_topics(b, [(topic, parts, None)])
    prod = KafkaProducer(bootstrap_servers=b.bootstrap, acks="all", linger_ms=5,
                         compression_type=compression, request_timeout_ms=30000,
                         retries=5)
    futures = []
    for i in range(n):
        key = None if i % 11 == 0 else b"key-%d" % i
        value = None if i % 11 == 5 else b"kp-%06d" % i  # never both null
        headers = [("i", b"%d" % i)] + ([("x", b"")] if i % 3 == 0 else [])
        futures.append(prod.send(topic, key=key, value=value, headers=headers,
                                 partition=i % parts, timestamp_ms=1_650_000_000_000 + i))
    prod.flush(60)
    meta = [f.get(timeout=30) for f in futures]
    prod.close(10)
    for i, md in enumerate(meta):
        assert md.partition == i % parts and md.offset == i // parts, (i, md)

    cons = KafkaConsumer(bootstrap_servers=b.bootstrap, group_id=None,
                         enable_auto_commit=False, auto_offset_reset="earliest",
                         consumer_timeout_ms=10000, fetch_max_wait_ms=200)
    tps = [TopicPartition(topic, p) for p in range(parts)]
    cons.assign(tps)
    assert cons.end_offsets(tps) == {tp: len(range(tp.partition, n, parts)) for tp in tps}
    assert cons.beginning_offsets(tps) == {tp: 0 for tp in tps}
    cons.seek_to_beginning()
    got = {p: [] for p in range(parts)}
    total = 0
    for m in cons:
        got[m.partition].append(m)
        total += 1
        if total == n:
            break
    # offsets_for_times goes through ListOffsets v1+.
    ts = cons.offsets_for_times({tps[0]: 1_650_000_000_000 + 300})
    cons.close()
    for p in range(parts):
        want = list(range(p, n, parts))
        msgs = got[p]
        assert [m.offset for m in msgs] == list(range(len(want)))
        assert [int(dict(m.headers)["i"]) for m in msgs] == want
        for m in msgs:
            i = int(dict(m.headers)["i"])
            assert m.key == (None if i % 11 == 0 else b"key-%d" % i)
            assert m.value == (None if i % 11 == 5 else b"kp-%06d" % i)
            assert m.timestamp == 1_650_000_000_000 + i
            assert len(m.headers) == (2 if i % 3 == 0 else 1)
    # The first record at or after the timestamp (partition 0 holds i = 0, 3, 6, ...).
    assert ts[tps[0]].offset == 100 and ts[tps[0]].timestamp == 1_650_000_000_300, ts
