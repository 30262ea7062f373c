# SPDX-License-Identifier: Apache-2.0
"""The admin APIs through confluent-kafka-python (librdkafka)."""
import time
import uuid

import pytest
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, ConfigResource, NewPartitions, NewTopic


def unique(prefix):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:10])


@pytest.fixture
def admin(shared_broker):
    return AdminClient({"bootstrap.servers": shared_broker.bootstrap})


def wait_all(futures, timeout=30):
    return {k: f.result(timeout=timeout) for k, f in futures.items()}


def error_code(future):
    with pytest.raises(KafkaException) as ei:
        future.result(timeout=30)
    return ei.value.args[0].code()


def topic_configs(admin, topic):
    res = ConfigResource("topic", topic)
    return admin.describe_configs([res])[res].result(timeout=30)


def test_create_describe_delete(admin):
    name = unique("cf")
    wait_all(admin.create_topics([NewTopic(name, num_partitions=3, replication_factor=1,
                                           config={"retention.ms": "3600000",
                                                   "cleanup.policy": "compact"})]))
    md = admin.list_topics(timeout=30)
    assert name in md.topics
    t = md.topics[name]
    assert t.error is None
    assert sorted(t.partitions) == [0, 1, 2]
    for p in t.partitions.values():
        assert p.leader == 1
        assert p.replicas == [1]
        assert p.isrs == [1]
    assert md.controller_id == 1
    assert md.cluster_id

    cfg = topic_configs(admin, name)
    assert cfg["retention.ms"].value == "3600000"
    assert not cfg["retention.ms"].is_default
    assert cfg["cleanup.policy"].value == "compact"
    assert cfg["segment.bytes"].is_default

    wait_all(admin.delete_topics([name], operation_timeout=20))
    deadline = time.monotonic() + 10
    while name in admin.list_topics(timeout=30).topics:
        assert time.monotonic() < deadline, "deleted topic still listed"
        time.sleep(0.1)


def test_alter_configs_replaces_dynamic_set(admin):
    name = unique("cf-alter")
    wait_all(admin.create_topics([NewTopic(name, 1, 1, config={"retention.ms": "1000"})]))
    res = ConfigResource("topic", name, set_config={"max.message.bytes": "2048"})
    admin.alter_configs([res])[res].result(timeout=30)
    cfg = topic_configs(admin, name)
    assert cfg["max.message.bytes"].value == "2048"
    # AlterConfigs (not incremental) replaces the whole set: retention.ms is back to default.
    assert cfg["retention.ms"].is_default
    assert cfg["retention.ms"].value == "604800000"


def test_alter_unknown_config_is_invalid_config(admin):
    name = unique("cf-badcfg")
    wait_all(admin.create_topics([NewTopic(name, 1, 1)]))
    res = ConfigResource("topic", name, set_config={"no.such.config": "1"})
    assert error_code(admin.alter_configs([res])[res]) == KafkaError.INVALID_CONFIG


def test_describe_broker_configs(admin):
    res = ConfigResource("broker", "1")
    cfg = admin.describe_configs([res])[res].result(timeout=30)
    assert cfg, "no broker configs returned"
    assert "num.partitions" in cfg or "log.retention.ms" in cfg or "node.id" in cfg, sorted(cfg)


def test_create_errors(admin):
    existing = unique("cf-exists")
    wait_all(admin.create_topics([NewTopic(existing, 1, 1)]))
    fs = admin.create_topics([
        NewTopic(existing, 1, 1),
        NewTopic(unique("cf-zero"), num_partitions=0, replication_factor=1),
        NewTopic(unique("cf-rf2"), num_partitions=1, replication_factor=2),
        NewTopic(unique("cf-cfg"), 1, 1, config={"bogus.setting": "x"}),
        NewTopic("cf bad name", 1, 1),
    ], operation_timeout=20)
    codes = {k: error_code(f) for k, f in fs.items()}
    assert codes[existing] == KafkaError.TOPIC_ALREADY_EXISTS
    assert [c for k, c in codes.items() if k.startswith("cf-zero")] == [KafkaError.INVALID_PARTITIONS]
    assert [c for k, c in codes.items() if k.startswith("cf-rf2")] == \
        [KafkaError.INVALID_REPLICATION_FACTOR]
    assert [c for k, c in codes.items() if k.startswith("cf-cfg")] == [KafkaError.INVALID_CONFIG]
    assert codes["cf bad name"] == KafkaError.TOPIC_EXCEPTION
    listed = admin.list_topics(timeout=30).topics
    assert not [t for t in listed if t.startswith(("cf-zero", "cf-rf2", "cf-cfg", "cf bad"))]


def test_validate_only_creates_nothing(admin):
    name = unique("cf-validate")
    wait_all(admin.create_topics([NewTopic(name, 2, 1)], validate_only=True))
    assert name not in admin.list_topics(timeout=30).topics
    # A validate-only request still reports what is wrong.
    f = admin.create_topics([NewTopic(name, 1, 2)], validate_only=True)[name]
    assert error_code(f) == KafkaError.INVALID_REPLICATION_FACTOR


def test_create_partitions_grows_topic(admin):
    name = unique("cf-grow")
    wait_all(admin.create_topics([NewTopic(name, 2, 1)]))
    wait_all(admin.create_partitions([NewPartitions(name, 5)]))
    t = admin.list_topics(topic=name, timeout=30).topics[name]
    assert sorted(t.partitions) == [0, 1, 2, 3, 4]
    assert all(p.leader == 1 for p in t.partitions.values())
    # Shrinking is refused.
    f = admin.create_partitions([NewPartitions(name, 3)])[name]
    assert error_code(f) == KafkaError.INVALID_PARTITIONS


def test_delete_missing_topic(admin):
    name = unique("cf-missing")
    f = admin.delete_topics([name], operation_timeout=20)[name]
    assert error_code(f) == KafkaError.UNKNOWN_TOPIC_OR_PART


def test_thousand_topics(broker):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    names = ["many-%04d" % i for i in range(1000)]
    for start in range(0, 1000, 250):
        batch = [NewTopic(n, 1, 1) for n in names[start:start + 250]]
        wait_all(admin.create_topics(batch, operation_timeout=60, request_timeout=90),
                 timeout=120)
    md = admin.list_topics(timeout=60)
    missing = set(names) - set(md.topics)
    assert not missing, "%d topics missing, e.g. %s" % (len(missing), sorted(missing)[:5])
    assert all(len(md.topics[n].partitions) == 1 for n in names)
    # The same through a raw Metadata v1 request.
    with broker.conn(timeout=60) as c:
        raw = c.metadata(version=1)
    assert set(names) <= set(raw["topics"])
