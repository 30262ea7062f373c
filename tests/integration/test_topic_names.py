# SPDX-License-Identifier: Apache-2.0
"""Topic names the broker must refuse (issue 7, defects 1 and 12), checked with raw
requests so that no client-side validation hides what the broker does:

  * __cluster_metadata is the metadata log's directory (<log.dir>/__cluster_metadata-0):
    creating it was accepted, and create + delete + restart then lost the metadata and
    every partition's data. Kafka answers INVALID_REQUEST.
  * a.b and a_b were both created (Kafka refuses names that collide once '.' and '_' are
    taken as equal: metric names cannot tell them apart).
  * a NUL in a name closed the connection instead of answering INVALID_TOPIC_EXCEPTION.
  * absurd partition counts answered "NOMEM" instead of INVALID_PARTITIONS."""
import os
import uuid

import pytest

import harness
import kproto


def unique(prefix):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:10])


def topic_names(conn):
    return set(conn.metadata(version=1)["topics"])


# ---------------------------------------------------------------- reserved names

def test_create_cluster_metadata_refused(shared_broker):
    with shared_broker.conn() as c:
        res = c.create_topics([("__cluster_metadata", 1, 1, None)])
        assert res["__cluster_metadata"][0] == kproto.INVALID_REQUEST, res
        assert "prohibited" in res["__cluster_metadata"][1], res
        res = c.create_topics([("__cluster_metadata", 1, 1, None)], validate_only=True)
        assert res["__cluster_metadata"][0] == kproto.INVALID_REQUEST, res
        # Metadata auto-creation must not create it either.
        md = c.metadata(["__cluster_metadata"], version=4, allow_auto_create=True)
        assert md["topics"]["__cluster_metadata"][0] == kproto.UNKNOWN_TOPIC_OR_PARTITION, md
        md = c.metadata(["__cluster_metadata"], version=1)
        assert md["topics"]["__cluster_metadata"][0] == kproto.UNKNOWN_TOPIC_OR_PARTITION, md
        # A name that only differs by '.' for '_' would share its metric names.
        res = c.create_topics([("__cluster.metadata", 1, 1, None)])
        assert res["__cluster.metadata"][0] == kproto.INVALID_TOPIC_EXCEPTION, res
        assert "__cluster_metadata" in res["__cluster.metadata"][1], res
        names = topic_names(c)
    assert "__cluster_metadata" not in names and "__cluster.metadata" not in names
    assert not os.path.exists(os.path.join(shared_broker.data_dir, "__cluster.metadata-0"))


@pytest.mark.parametrize("hard", [False, True], ids=["sigterm", "kill9"])
def test_cluster_metadata_create_delete_restart_keeps_data(broker, hard):
    """The sequence from the issue: create __cluster_metadata, delete it, restart. It used to
    leave the broker with empty metadata, which then deleted every partition directory."""
    topic = unique("keep")
    with broker.conn() as c:
        assert c.create_topics([(topic, 2, 1, None)])[topic][0] == 0
    harness.wait_leaders(broker, [topic])
    with broker.conn() as c:
        for p in (0, 1):
            res = c.produce({topic: {p: kproto.record_batch(
                [(b"k%d" % i, b"v%d-%d" % (p, i)) for i in range(5)])}})
            assert res[(topic, p)]["error"] == 0, res
        res = c.create_topics([("__cluster_metadata", 1, 1, None)])
        assert res["__cluster_metadata"][0] == kproto.INVALID_REQUEST, res
        res = c.delete_topics([("__cluster_metadata", None)])
        assert res[0]["error"] == kproto.UNKNOWN_TOPIC_OR_PARTITION, res
    broker.restart(hard=hard)
    harness.wait_leaders(broker, [topic])
    with broker.conn() as c:
        assert "__cluster_metadata" not in topic_names(c)
    for p in (0, 1):
        recs = harness.fetch_all_raw(broker, topic, p)
        assert [r[3] for r in recs] == [b"v%d-%d" % (p, i) for i in range(5)]
    assert os.path.isdir(os.path.join(broker.data_dir, "__cluster_metadata-0"))


def test_coordinator_topic_names_follow_kafka(broker):
    """Kafka lets a client create __consumer_offsets / __transaction_state with CreateTopics
    (validated here without creating them); Metadata never auto-creates them with the
    ordinary defaults, since the broker creates them itself with their own settings. A fresh
    broker: on the shared one, an earlier group consumer has had the coordinator create
    __consumer_offsets already."""
    with broker.conn() as c:
        for name in ("__consumer_offsets", "__transaction_state"):
            res = c.create_topics([(name, 3, 1, None)], validate_only=True)
            assert res[name][0] == 0, res
            md = c.metadata([name], version=4, allow_auto_create=True)
            assert md["topics"][name][0] == kproto.UNKNOWN_TOPIC_OR_PARTITION, md
        for name, internal in (("__consumer.offsets", "__consumer_offsets"),
                               ("__transaction.state", "__transaction_state")):
            res = c.create_topics([(name, 1, 1, None)])
            assert res[name][0] == kproto.INVALID_TOPIC_EXCEPTION, res
            assert internal in res[name][1], res
        names = topic_names(c)
    assert not names & {"__consumer_offsets", "__transaction_state", "__consumer.offsets",
                        "__transaction.state"}


def test_user_topic_with_double_underscore_is_not_internal(shared_broker):
    name = unique("__user")
    with shared_broker.conn() as c:
        assert c.create_topics([(name, 1, 1, None)])[name][0] == 0
        err, internal, _parts = c.metadata([name], version=1)["topics"][name]
    assert err in (0, kproto.LEADER_NOT_AVAILABLE) and internal is False


# ---------------------------------------------------------------- collisions

def test_dot_and_underscore_names_collide(shared_broker):
    base = uuid.uuid4().hex[:10]
    dotted, underscored = "coll.%s" % base, "coll_%s" % base
    with shared_broker.conn() as c:
        assert c.create_topics([(dotted, 1, 1, None)])[dotted][0] == 0
        res = c.create_topics([(underscored, 1, 1, None)])
        assert res[underscored][0] == kproto.INVALID_TOPIC_EXCEPTION, res
        assert res[underscored][1] == "Topic '%s' collides with existing topic: %s" % (
            underscored, dotted), res
        # The same name again is still TOPIC_ALREADY_EXISTS, not a collision with itself.
        assert c.create_topics([(dotted, 1, 1, None)])[dotted][0] == kproto.TOPIC_ALREADY_EXISTS
        # Auto-creation refuses it too.
        md = c.metadata([underscored], version=4, allow_auto_create=True)
        assert md["topics"][underscored][0] == kproto.INVALID_TOPIC_EXCEPTION, md
        assert underscored not in topic_names(c)


def test_colliding_names_in_one_request(shared_broker):
    base = uuid.uuid4().hex[:10]
    first, second = "pair_%s.x" % base, "pair.%s_x" % base
    with shared_broker.conn() as c:
        res = c.create_topics([(first, 1, 1, None), (second, 1, 1, None)])
        assert res[first][0] == 0, res
        assert res[second][0] == kproto.INVALID_TOPIC_EXCEPTION, res
        a, b = "auto_%s" % base, "auto.%s" % base
        md = c.metadata([a, b], version=4, allow_auto_create=True)
        assert md["topics"][b][0] == kproto.INVALID_TOPIC_EXCEPTION, md
    harness.wait_leaders(shared_broker, [first, a])
    with shared_broker.conn() as c:
        names = topic_names(c)
    assert first in names and a in names
    assert second not in names and b not in names


# ---------------------------------------------------------------- NUL and other bytes

@pytest.mark.parametrize("name", ["nul\x00inside", "\x00", "trailing\x00", "tab\tname",
                                  "caf\u00e9"], ids=["nul", "only-nul", "trailing-nul", "tab",
                                                     "non-ascii"])
def test_illegal_bytes_in_name_answer_invalid_topic(shared_broker, name):
    with shared_broker.conn() as c:
        res = c.create_topics([(name, 1, 1, None)])
        assert res == {name: (kproto.INVALID_TOPIC_EXCEPTION, res[name][1])}, res
        md = c.metadata([name], version=4, allow_auto_create=True)
        assert md["topics"][name][0] == kproto.INVALID_TOPIC_EXCEPTION, md
        # The connection is still open and usable.
        assert c.api_versions(0)[0] == 0
        names = topic_names(c)
    prefix = name.split("\x00")[0]
    assert name not in names and (not prefix or prefix not in names)


# ---------------------------------------------------------------- partition counts

@pytest.mark.parametrize("count", [2 ** 31 - 1, 10001, -2, -(2 ** 31)],
                         ids=["int32-max", "over-limit", "minus-2", "int32-min"])
def test_absurd_partition_counts_answer_invalid_partitions(shared_broker, count):
    name = unique("parts")
    with shared_broker.conn() as c:
        res = c.create_topics([(name, count, 1, None)])
        assert res[name][0] == kproto.INVALID_PARTITIONS, res
        res = c.create_topics([(name, count, 1, None)], validate_only=True)
        assert res[name][0] == kproto.INVALID_PARTITIONS, res
        assert name not in topic_names(c)


def test_absurd_partition_growth_answers_invalid_partitions(shared_broker):
    name = unique("grow")
    with shared_broker.conn() as c:
        assert c.create_topics([(name, 1, 1, None)])[name][0] == 0
        for count in (2 ** 31 - 1, 10001):
            res = c.create_partitions([(name, count)])
            assert res[name][0] == kproto.INVALID_PARTITIONS, res
            res = c.create_partitions([(name, count)], validate_only=True)
            assert res[name][0] == kproto.INVALID_PARTITIONS, res
        assert len(c.metadata([name], version=1)["topics"][name][2]) == 1
