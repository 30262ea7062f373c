# SPDX-License-Identifier: Apache-2.0
"""The admin APIs through kafka-python's KafkaAdminClient (pure Python client)."""
import time
import uuid

import pytest
from kafka import KafkaAdminClient
from kafka.admin import ConfigResource, ConfigResourceType, NewPartitions, NewTopic
from kafka import errors as kerr


def unique(prefix):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:10])


@pytest.fixture
def kadmin(shared_broker):
    a = KafkaAdminClient(bootstrap_servers=shared_broker.bootstrap, client_id="kp-test",
                         request_timeout_ms=30000)
    yield a
    a.close()


def described(kadmin, topic):
    """{name: (value, is_default)} from DescribeConfigs (v1+ gives a config source)."""
    responses = kadmin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
    assert len(responses) == 1
    resources = responses[0].resources
    assert len(resources) == 1
    err, _msg, _rtype, rname, entries = resources[0][:5]
    assert err == 0 and rname == topic
    out = {}
    for e in entries:
        name, value, _ro, source = e[0], e[1], e[2], e[3]
        # v0 has is_default (bool); v1+ has config_source where 1 = DYNAMIC_TOPIC_CONFIG,
        # 4 = STATIC_BROKER_CONFIG and 5 = DEFAULT_CONFIG.
        if responses[0].API_VERSION >= 1:
            is_default = source in (4, 5)
        else:
            is_default = bool(source)
        out[name] = (value, is_default)
    return out


def test_create_list_describe_alter_delete(kadmin):
    name = unique("kp")
    resp = kadmin.create_topics([NewTopic(name, 2, 1, topic_configs={"retention.ms": "5000"})],
                                timeout_ms=20000)
    assert all(e[1] == 0 for e in resp.topic_errors), resp
    assert name in kadmin.list_topics()

    cfg = described(kadmin, name)
    assert cfg["retention.ms"] == ("5000", False)
    assert cfg["cleanup.policy"][1] is True

    resp = kadmin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, name,
                                                configs={"retention.ms": "7000",
                                                         "segment.bytes": "1048576"})])
    assert [r[0] for r in resp.resources] == [0], resp
    cfg = described(kadmin, name)
    assert cfg["retention.ms"] == ("7000", False)
    assert cfg["segment.bytes"] == ("1048576", False)

    meta = kadmin.describe_topics([name])
    assert len(meta) == 1 and meta[0]["error_code"] == 0
    assert sorted(p["partition"] for p in meta[0]["partitions"]) == [0, 1]

    resp = kadmin.delete_topics([name], timeout_ms=20000)
    assert all(e[1] == 0 for e in resp.topic_error_codes), resp
    deadline = time.monotonic() + 10
    while name in kadmin.list_topics():
        assert time.monotonic() < deadline, "deleted topic still listed"
        time.sleep(0.1)


@pytest.mark.parametrize("topic,exc", [
    (lambda: NewTopic(unique("kp-zero"), 0, 1), kerr.InvalidPartitionsError),
    (lambda: NewTopic(unique("kp-rf"), 1, 2), kerr.InvalidReplicationFactorError),
    (lambda: NewTopic(unique("kp-cfg"), 1, 1, topic_configs={"retention.mss": "1"}),
     kerr.InvalidConfigurationError),
    (lambda: NewTopic("a b", 1, 1), kerr.InvalidTopicError),
    (lambda: NewTopic("..", 1, 1), kerr.InvalidTopicError),
    (lambda: NewTopic("x" * 250, 1, 1), kerr.InvalidTopicError),
], ids=["partitions-0", "rf-2", "unknown-config", "space", "dotdot", "too-long"])
def test_create_rejected(kadmin, topic, exc):
    t = topic()
    with pytest.raises(exc):
        kadmin.create_topics([t], timeout_ms=20000)
    assert t.name not in kadmin.list_topics()


def test_create_existing(kadmin):
    name = unique("kp-dup")
    kadmin.create_topics([NewTopic(name, 1, 1)], timeout_ms=20000)
    with pytest.raises(kerr.TopicAlreadyExistsError):
        kadmin.create_topics([NewTopic(name, 3, 1)], timeout_ms=20000)
    meta = kadmin.describe_topics([name])
    assert len(meta[0]["partitions"]) == 1, "failed create changed the topic"


def test_validate_only(kadmin):
    name = unique("kp-validate")
    kadmin.create_topics([NewTopic(name, 1, 1)], timeout_ms=20000, validate_only=True)
    assert name not in kadmin.list_topics()


def test_create_partitions(kadmin):
    name = unique("kp-grow")
    kadmin.create_topics([NewTopic(name, 1, 1)], timeout_ms=20000)
    kadmin.create_partitions({name: NewPartitions(4)}, timeout_ms=20000)
    meta = kadmin.describe_topics([name])
    assert sorted(p["partition"] for p in meta[0]["partitions"]) == [0, 1, 2, 3]
    assert all(p["leader"] == 1 for p in meta[0]["partitions"])
