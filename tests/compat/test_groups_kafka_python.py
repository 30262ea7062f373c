# SPDX-License-Identifier: Apache-2.0
"""kafka-python 2.0.2 KafkaConsumer(group_id=...) consumes a topic as a group member and
commits; committed() and a second member that resumes from the commits read them back."""
import time
import uuid

from kafka import KafkaConsumer, TopicPartition

import harness
from test_groups_confluent import produce

SETTINGS = {"group.initial.rebalance.delay.ms": "100"}


def read(consumer, want, timeout=60):
    """Polls until `want` records arrived; returns them."""
    got = []
    deadline = time.monotonic() + timeout
    while len(got) < want:
        assert time.monotonic() < deadline, "read %d of %d records" % (len(got), want)
        for recs in consumer.poll(timeout_ms=200, max_records=1000).values():
            got.extend(recs)
    return got


def test_kafka_python_group_consumes_and_commits(broker_factory):
    b = broker_factory(settings=SETTINGS)
    topic, group, n, parts = "kpg-%s" % uuid.uuid4().hex[:6], "kp-group", 3000, 3
    harness.create_topics(b, [(topic, parts, None)])
    produce(b, topic, n, parts)

    def consumer():
        return KafkaConsumer(topic, group_id=group, bootstrap_servers=b.bootstrap,
                             auto_offset_reset="earliest", enable_auto_commit=False,
                             session_timeout_ms=10000, heartbeat_interval_ms=500,
                             request_timeout_ms=30000)

    c = consumer()
    recs = read(c, n)
    assert sorted(r.value for r in recs) == sorted(b"v-%d" % i for i in range(n))
    assert c.assignment() == {TopicPartition(topic, p) for p in range(parts)}
    c.commit()
    tps = [TopicPartition(topic, p) for p in range(parts)]
    assert {tp.partition: c.committed(tp) for tp in tps} == {p: n // parts for p in range(parts)}
    c.close()

    # A new member of the same group starts at the commits: it sees only new records.
    produce(b, topic, 30, parts, prefix="late")
    c = consumer()
    try:
        recs = read(c, 30)
        assert sorted(r.value for r in recs) == sorted(b"late-%d" % i for i in range(30))
        assert all(r.offset >= n // parts for r in recs)
        c.commit()
        assert {tp.partition: c.committed(tp) for tp in tps} == {
            p: n // parts + 10 for p in range(parts)}
    finally:
        c.close()
