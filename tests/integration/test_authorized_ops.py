# SPDX-License-Identifier: Apache-2.0
"""Authorized operations without an authorizer, as Kafka answers them: every operation
the resource type supports as a bit field (bit n = ACL operation code n) when the client
asks, INT32_MIN when it does not. Metadata's topic set (v8+) and cluster set (v8..v10),
DescribeCluster's cluster set (v0/v1). With raw requests: neither confluent-kafka 1.7 nor
librdkafka 2.0 (Debian 12) has describe_topics / describe_cluster with
include_authorized_operations (both came in 2.3)."""
import uuid

import pytest

import harness
import kproto as kp

# Kafka's AclOperation codes.
READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE = 3, 4, 5, 6, 7, 8
CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE = 9, 10, 11, 12


def bits(*ops):
    return sum(1 << o for o in ops)


TOPIC_OPS = bits(READ, WRITE, CREATE, DESCRIBE, DELETE, ALTER, DESCRIBE_CONFIGS, ALTER_CONFIGS)
CLUSTER_OPS = bits(CREATE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE,
                   ALTER, DESCRIBE)


def test_operation_sets_are_kafkas():
    # The values Kafka answers without an authorizer (AclEntry.supportedOperations).
    assert TOPIC_OPS == 3576
    assert CLUSTER_OPS == 8096


@pytest.fixture(scope="module")
def topic(shared_broker):
    name = "authz-%s" % uuid.uuid4().hex[:10]
    harness.create_topics(shared_broker, [(name, 2, None)])
    return name


@pytest.mark.parametrize("version", [8, 9, 10, 11, 12])
def test_metadata_topic_and_cluster_operations(shared_broker, topic, version):
    with shared_broker.conn() as c:
        asked = c.metadata_ops([topic], version=version, cluster_ops=True, topic_ops=True)
        plain = c.metadata_ops([topic], version=version)
        everything = c.metadata_ops(None, version=version, topic_ops=True)
    t = [x for x in asked["topics"] if x["name"] == topic][0]
    assert t["error"] == 0 and t["authorized_operations"] == TOPIC_OPS
    t = [x for x in plain["topics"] if x["name"] == topic][0]
    assert t["authorized_operations"] == kp.INT32_MIN
    assert all(x["authorized_operations"] == TOPIC_OPS for x in everything["topics"])
    if version <= 10:
        assert asked["cluster_authorized_operations"] == CLUSTER_OPS
        assert plain["cluster_authorized_operations"] == kp.INT32_MIN


def test_metadata_unknown_topic_has_no_operations(shared_broker):
    name = "authz-missing-%s" % uuid.uuid4().hex[:10]
    with shared_broker.conn() as c:
        md = c.metadata_ops([name], version=12, topic_ops=True)
    t = md["topics"][0]
    assert t["error"] == kp.UNKNOWN_TOPIC_OR_PARTITION
    assert t["authorized_operations"] == kp.INT32_MIN


@pytest.mark.parametrize("version", [0, 1])
def test_describe_cluster_operations(shared_broker, version):
    with shared_broker.conn() as c:
        asked = c.describe_cluster(version=version, include_authorized_operations=True)
        plain = c.describe_cluster(version=version)
    assert asked["error"] == 0 and asked["authorized_operations"] == CLUSTER_OPS
    assert plain["authorized_operations"] == kp.INT32_MIN
