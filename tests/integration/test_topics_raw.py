# SPDX-License-Identifier: Apache-2.0
"""Topic creation rules checked with raw CreateTopics v2 / Metadata v4 requests, so
no client-side validation can hide what the broker does."""
import time
import uuid

import pytest

import kproto


def unique(prefix):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:10])


def wait_topic(conn, name, timeout=10.0):
    """Polls Metadata v4 (no auto-create) until name has a leader on every partition."""
    deadline = time.monotonic() + timeout
    while True:
        t = conn.metadata([name], version=4)["topics"].get(name)
        if t and t[0] == 0 and t[2] and all(p[1] >= 0 for p in t[2].values()):
            return t
        assert time.monotonic() < deadline, "topic %s not ready: %r" % (name, t)
        time.sleep(0.05)


@pytest.mark.parametrize("spec,code", [
    (("raw-zero", 0, 1, None), kproto.INVALID_PARTITIONS),
    (("raw-neg", -5, 1, None), kproto.INVALID_PARTITIONS),
    (("raw-rf2", 1, 2, None), kproto.INVALID_REPLICATION_FACTOR),
    (("raw-rf0", 1, 0, None), kproto.INVALID_REPLICATION_FACTOR),
    (("raw-cfg", 1, 1, {"no.such.key": "1"}), kproto.INVALID_CONFIG),
    (("raw-cfgval", 1, 1, {"retention.ms": "soon"}), kproto.INVALID_CONFIG),
    (("a b", 1, 1, None), kproto.INVALID_TOPIC_EXCEPTION),
    (("..", 1, 1, None), kproto.INVALID_TOPIC_EXCEPTION),
    ((".", 1, 1, None), kproto.INVALID_TOPIC_EXCEPTION),
    (("", 1, 1, None), kproto.INVALID_TOPIC_EXCEPTION),
    (("slash/name", 1, 1, None), kproto.INVALID_TOPIC_EXCEPTION),
    (("y" * 250, 1, 1, None), kproto.INVALID_TOPIC_EXCEPTION),
], ids=["partitions-0", "partitions-neg", "rf-2", "rf-0", "unknown-config", "bad-config-value",
        "space", "dotdot", "dot", "empty", "slash", "too-long"])
def test_create_rejected(shared_broker, spec, code):
    name = unique(spec[0]) if spec[0].startswith("raw-") else spec[0]
    spec = (name,) + spec[1:]
    with shared_broker.conn() as c:
        res = c.create_topics([spec])
        assert res[name][0] == code, res
        if name:
            assert name not in c.metadata(version=1)["topics"]


def test_create_batch_reports_each_topic(shared_broker):
    good, dup = unique("raw-good"), unique("raw-dup")
    with shared_broker.conn() as c:
        assert c.create_topics([(dup, 1, 1, None)])[dup][0] == 0
        res = c.create_topics([(good, 3, 1, {"retention.ms": "1234"}), (dup, 1, 1, None),
                               ("raw bad", 1, 1, None)])
        assert res[good][0] == 0
        assert res[dup][0] == kproto.TOPIC_ALREADY_EXISTS
        assert res["raw bad"][0] == kproto.INVALID_TOPIC_EXCEPTION
        t = wait_topic(c, good)
        assert sorted(t[2]) == [0, 1, 2]


def test_validate_only_creates_nothing(shared_broker):
    name = unique("raw-validate")
    with shared_broker.conn() as c:
        assert c.create_topics([(name, 4, 1, None)], validate_only=True)[name][0] == 0
        assert c.create_topics([(name, 1, 3, None)],
                               validate_only=True)[name][0] == kproto.INVALID_REPLICATION_FACTOR
        time.sleep(0.3)
        assert name not in c.metadata(version=1)["topics"]
        # And it can then really be created.
        assert c.create_topics([(name, 4, 1, None)])[name][0] == 0
        assert sorted(wait_topic(c, name)[2]) == [0, 1, 2, 3]


def test_auto_create_on_metadata(shared_broker):
    name = unique("auto")
    with shared_broker.conn() as c:
        # Not asked for: not created.
        md = c.metadata([name], version=4, allow_auto_create=False)
        assert md["topics"][name][0] == kproto.UNKNOWN_TOPIC_OR_PARTITION
        assert name not in c.metadata(version=1)["topics"]
        # Asked for: created with num.partitions (1), possibly reported as not yet led.
        md = c.metadata([name], version=4, allow_auto_create=True)
        assert md["topics"][name][0] in (0, kproto.LEADER_NOT_AVAILABLE)
        t = wait_topic(c, name)
        assert list(t[2]) == [0]
        assert t[2][0][1] == 1


def test_auto_create_disabled(broker_factory):
    b = broker_factory(settings={"auto.create.topics.enable": "false"})
    with b.conn() as c:
        md = c.metadata(["nope"], version=4, allow_auto_create=True)
        assert md["topics"]["nope"][0] == kproto.UNKNOWN_TOPIC_OR_PARTITION
        md = c.metadata(["nope"], version=1)
        assert md["topics"]["nope"][0] == kproto.UNKNOWN_TOPIC_OR_PARTITION
        time.sleep(0.3)
        assert "nope" not in c.metadata(version=1)["topics"]


def test_broker_defaults_from_config_file(broker_factory, tmp_path):
    cfg = tmp_path / "server.properties"
    cfg.write_text("# test config\nnum.partitions=3\nauto.create.topics.enable=true\n")
    b = broker_factory(config_file=str(cfg))
    with b.conn() as c:
        c.metadata(["from-file"], version=4, allow_auto_create=True)
        t = wait_topic(c, "from-file")
        assert sorted(t[2]) == [0, 1, 2]
