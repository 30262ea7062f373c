# SPDX-License-Identifier: Apache-2.0
"""Admin APIs checked with raw requests, in their flexible (compact, tagged) versions
and next to a classic one: IncrementalAlterConfigs v0/v1, AlterConfigs v0/v2,
DescribeConfigs v1..v4, DescribeCluster v0/v1, CreateTopics v7, Metadata v10..v12 by
topic id, DeleteTopics v4/v6 and CreatePartitions v3. The kproto parsers read every
answer to its last byte, so a misplaced or missing field fails the test too.

Tests that change broker-level configs use their own broker; the others share one and
only touch uniquely named topics."""
import time
import uuid

import pytest

import kproto as kp

TOPIC, BROKER = kp.RESOURCE_TOPIC, kp.RESOURCE_BROKER
SET, DELETE, APPEND, SUBTRACT = kp.OP_SET, kp.OP_DELETE, kp.OP_APPEND, kp.OP_SUBTRACT

# Kafka's built-in defaults of the topic configs used here (no static overrides are
# set by the harness).
DEFAULT_RETENTION_MS = "604800000"
DEFAULT_SEGMENT_MS = "604800000"
DEFAULT_CLEANUP = "delete"


def unique(prefix):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:10])


def create(conn, name, partitions=1, configs=None):
    res = conn.create_topics_v([(name, partitions, 1, configs)], version=7)
    assert res[name]["error"] == 0, res
    return res[name]


def topic_configs(conn, name, keys=None, version=4, synonyms=False):
    """{key: entry} of one topic (DescribeConfigs); asserts no error."""
    res = conn.describe_configs([(TOPIC, name, keys)], version=version,
                                include_synonyms=synonyms)
    assert len(res) == 1 and res[0]["error"] == 0, res
    return res[0]["configs"]


def broker_configs(conn, name, keys=None, version=4, synonyms=False):
    res = conn.describe_configs([(BROKER, name, keys)], version=version,
                                include_synonyms=synonyms)
    assert len(res) == 1 and res[0]["error"] == 0, res
    assert res[0]["type"] == BROKER and res[0]["name"] == name, res
    return res[0]["configs"]


def value_source(conn, name, key):
    c = topic_configs(conn, name, [key])[key]
    return c["value"], c["source"]


def iac(conn, resources, version, validate_only=False):
    """IncrementalAlterConfigs; checks each answer echoes its resource and returns the
    error codes in request order."""
    res = conn.incremental_alter_configs(resources, version=version,
                                         validate_only=validate_only)
    assert [(r[2], r[3]) for r in res] == [(t, n) for t, n, _ in resources], res
    for err, msg, _t, _n in res:
        if err == 0:
            assert msg is None, res  # no message on success
    return [r[0] for r in res]


def wait_partitions(conn, name, count, timeout=10.0):
    """Metadata v12 until name has count partitions, each with a leader."""
    deadline = time.monotonic() + timeout
    while True:
        md = conn.metadata_flex([(None, name)], version=12)
        t = md["topics"][0]
        if (t["error"] == 0 and len(t["partitions"]) == count and
                all(p["leader"] >= 0 for p in t["partitions"].values())):
            return t
        assert time.monotonic() < deadline, "%s: want %d led partitions, have %r" % (
            name, count, t)
        time.sleep(0.05)


def test_api_versions_advertise_admin_ranges(shared_broker):
    with shared_broker.conn() as c:
        err, keys = c.api_versions(3)
    assert err == 0
    want = {kp.METADATA: (0, 12), kp.CREATE_TOPICS: (0, 7), kp.DELETE_TOPICS: (0, 6),
            kp.DESCRIBE_CONFIGS: (0, 4), kp.ALTER_CONFIGS: (0, 2),
            kp.CREATE_PARTITIONS: (0, 3), kp.INCREMENTAL_ALTER_CONFIGS: (0, 1),
            kp.DESCRIBE_CLUSTER: (0, 2)}
    assert {k: keys.get(k) for k in want} == want


# ------------------------------------------------------------ 1. IncrementalAlterConfigs, topics

@pytest.mark.parametrize("version", [0, 1])
def test_incremental_set_and_delete(shared_broker, version):
    t = unique("iac")
    with shared_broker.conn() as c:
        create(c, t)
        assert value_source(c, t, "retention.ms") == (DEFAULT_RETENTION_MS, kp.SOURCE_DEFAULT)
        assert iac(c, [(TOPIC, t, [("retention.ms", SET, "123456")])], version) == [0]
        assert value_source(c, t, "retention.ms") == ("123456", kp.SOURCE_TOPIC)
        assert iac(c, [(TOPIC, t, [("retention.ms", SET, "654321"),
                                   ("segment.ms", SET, "3600000")])], version) == [0]
        assert value_source(c, t, "retention.ms") == ("654321", kp.SOURCE_TOPIC)
        assert value_source(c, t, "segment.ms") == ("3600000", kp.SOURCE_TOPIC)
        # DELETE goes back to the default and leaves the other key alone.
        assert iac(c, [(TOPIC, t, [("retention.ms", DELETE, None)])], version) == [0]
        assert value_source(c, t, "retention.ms") == (DEFAULT_RETENTION_MS, kp.SOURCE_DEFAULT)
        assert value_source(c, t, "segment.ms") == ("3600000", kp.SOURCE_TOPIC)
        # DELETE of a key that is not set is a no-op, not an error.
        assert iac(c, [(TOPIC, t, [("retention.ms", DELETE, None)])], version) == [0]
        assert value_source(c, t, "retention.ms") == (DEFAULT_RETENTION_MS, kp.SOURCE_DEFAULT)


@pytest.mark.parametrize("version", [0, 1])
def test_incremental_append_subtract(shared_broker, version):
    """APPEND / SUBTRACT on a list config that has a topic-level value."""
    t = unique("iac-list")
    with shared_broker.conn() as c:
        create(c, t, configs={"cleanup.policy": "delete"})
        assert iac(c, [(TOPIC, t, [("cleanup.policy", APPEND, "compact")])], version) == [0]
        assert value_source(c, t, "cleanup.policy") == ("delete,compact", kp.SOURCE_TOPIC)
        # Appending an item already there changes nothing.
        assert iac(c, [(TOPIC, t, [("cleanup.policy", APPEND, "compact")])], version) == [0]
        assert value_source(c, t, "cleanup.policy") == ("delete,compact", kp.SOURCE_TOPIC)
        assert iac(c, [(TOPIC, t, [("cleanup.policy", SUBTRACT, "delete")])], version) == [0]
        assert value_source(c, t, "cleanup.policy") == ("compact", kp.SOURCE_TOPIC)
        # Subtracting an item not in the list changes nothing.
        assert iac(c, [(TOPIC, t, [("cleanup.policy", SUBTRACT, "delete")])], version) == [0]
        assert value_source(c, t, "cleanup.policy") == ("compact", kp.SOURCE_TOPIC)


@pytest.mark.parametrize("version", [0, 1])
def test_incremental_append_to_default(shared_broker, version):
    """APPEND to a list config that is not set on the topic builds on its default, as
    Kafka's controller does (ConfigurationControlManager.getParts falls back to the
    default value): default "delete" + APPEND "compact" is "delete,compact"."""
    t = unique("iac-dflt")
    with shared_broker.conn() as c:
        create(c, t)
        assert value_source(c, t, "cleanup.policy") == (DEFAULT_CLEANUP, kp.SOURCE_DEFAULT)
        assert iac(c, [(TOPIC, t, [("cleanup.policy", APPEND, "compact")])], version) == [0]
        assert value_source(c, t, "cleanup.policy") == ("delete,compact", kp.SOURCE_TOPIC)
        assert iac(c, [(TOPIC, t, [("cleanup.policy", SUBTRACT, "delete")])], version) == [0]
        assert value_source(c, t, "cleanup.policy") == ("compact", kp.SOURCE_TOPIC)


@pytest.mark.parametrize("version", [0, 1])
def test_incremental_errors_and_validate_only(shared_broker, version):
    t, other = unique("iac-err"), unique("iac-other")
    with shared_broker.conn() as c:
        create(c, t, configs={"cleanup.policy": "compact"})
        create(c, other)
        # An unknown key fails its resource as a whole (the valid change next to it is not
        # applied) while another resource of the same request succeeds.
        errs = iac(c, [(TOPIC, t, [("segment.ms", SET, "3600000"), ("no.such.config", SET, "1")]),
                       (TOPIC, other, [("segment.ms", SET, "7200000")])], version)
        assert errs == [kp.INVALID_CONFIG, 0]
        assert value_source(c, t, "segment.ms") == (DEFAULT_SEGMENT_MS, kp.SOURCE_DEFAULT)
        assert value_source(c, other, "segment.ms") == ("7200000", kp.SOURCE_TOPIC)
        # A bad value is INVALID_CONFIG too.
        assert iac(c, [(TOPIC, t, [("retention.ms", SET, "soon")])],
                   version) == [kp.INVALID_CONFIG]
        assert iac(c, [(TOPIC, t, [("cleanup.policy", SET, "sometimes")])],
                   version) == [kp.INVALID_CONFIG]

        # validate_only: a valid change answers 0 and changes nothing; an invalid one
        # still fails.
        assert iac(c, [(TOPIC, t, [("retention.ms", SET, "999"),
                                   ("cleanup.policy", APPEND, "delete")])],
                   version, validate_only=True) == [0]
        assert value_source(c, t, "retention.ms") == (DEFAULT_RETENTION_MS, kp.SOURCE_DEFAULT)
        assert value_source(c, t, "cleanup.policy") == ("compact", kp.SOURCE_TOPIC)
        assert iac(c, [(TOPIC, t, [("no.such.config", SET, "1")])], version,
                   validate_only=True) == [kp.INVALID_CONFIG]

        # Unknown topic.
        missing = unique("iac-missing")
        assert iac(c, [(TOPIC, missing, [("retention.ms", SET, "1000")])],
                   version) == [kp.UNKNOWN_TOPIC_OR_PARTITION]

        # APPEND / SUBTRACT on a config that is not a list.
        assert iac(c, [(TOPIC, t, [("retention.ms", APPEND, "1000")])],
                   version) == [kp.INVALID_CONFIG]
        assert iac(c, [(TOPIC, t, [("retention.ms", SUBTRACT, "1000")])],
                   version) == [kp.INVALID_CONFIG]
        assert value_source(c, t, "retention.ms") == (DEFAULT_RETENTION_MS, kp.SOURCE_DEFAULT)
        # The connection survived all of it.
        assert c.describe_cluster(version=0)["error"] == 0


@pytest.mark.parametrize("case", ["duplicate-key", "null-set-value", "duplicate-resource"])
def test_incremental_malformed_resource_rejected(shared_broker, case):
    """Shapes Kafka refuses with INVALID_REQUEST before looking at any value
    (ConfigAdminManager.preprocess): a key named twice in one resource, a null value
    on an operation other than DELETE, and one resource listed twice."""
    t = unique("iac-bad")
    with shared_broker.conn() as c:
        create(c, t, configs={"retention.ms": "4000"})
        if case == "duplicate-key":
            resources = [(TOPIC, t, [("retention.ms", SET, "1000"),
                                     ("retention.ms", SET, "2000")])]
        elif case == "null-set-value":
            resources = [(TOPIC, t, [("retention.ms", SET, None)])]
        else:
            resources = [(TOPIC, t, [("retention.ms", SET, "1000")]),
                         (TOPIC, t, [("retention.ms", SET, "2000")])]
        assert iac(c, resources, 1) == [kp.INVALID_REQUEST] * len(resources)
        assert value_source(c, t, "retention.ms") == ("4000", kp.SOURCE_TOPIC)


# ------------------------------------------------------------ 2. IncrementalAlterConfigs, broker

def test_incremental_alter_broker(broker):
    node = str(broker.node_id)
    with broker.conn() as c:
        # Per-broker and cluster-default dynamic values.
        assert iac(c, [(BROKER, node, [("log.retention.ms", SET, "3600000")]),
                       (BROKER, "", [("log.retention.ms", SET, "7200000")])], 1) == [0, 0]
        mine = broker_configs(c, node, ["log.retention.ms", "num.partitions", "log.dirs"])
        assert (mine["log.retention.ms"]["value"], mine["log.retention.ms"]["source"]) == \
            ("3600000", kp.SOURCE_DYNAMIC_BROKER)
        # num.partitions is read-only, as in Kafka (issue 7: it took 100,000 at run time).
        assert mine["num.partitions"]["value"] == "1"
        assert mine["num.partitions"]["read_only"] is True
        assert mine["log.dirs"]["read_only"] is True
        assert mine["log.dirs"]["source"] == kp.SOURCE_STATIC_BROKER  # harness --set
        dflt = broker_configs(c, "", ["log.retention.ms"])
        assert (dflt["log.retention.ms"]["value"], dflt["log.retention.ms"]["source"]) == \
            ("7200000", kp.SOURCE_DYNAMIC_DEFAULT_BROKER)

        # Static-only keys cannot be altered at run time, on either resource, and the
        # whole resource fails: INVALID_REQUEST, as Kafka answers.
        before = broker_configs(c, node, ["log.dirs", "listeners"])
        # (One resource per request where the same broker appears twice: a resource named
        # twice in one request is INVALID_REQUEST for both, as in Kafka.)
        assert iac(c, [(BROKER, node, [("log.dirs", SET, "/tmp/elsewhere")]),
                       (BROKER, "", [("listeners", SET, "PLAINTEXT://127.0.0.1:1")])], 0) == \
            [kp.INVALID_REQUEST] * 2
        assert iac(c, [(BROKER, node, [("log.retention.ms", SET, "5"),
                                       ("log.dirs", SET, "/tmp/x")])], 0) == [kp.INVALID_REQUEST]
        for res in (node, ""):
            assert iac(c, [(BROKER, res, [("num.partitions", SET, "100000")])], 0) == \
                [kp.INVALID_REQUEST]
        assert iac(c, [(BROKER, node, [("log.retention.ms", SET, "5")]),
                       (BROKER, node, [("log.retention.ms", SET, "6")])], 0) == \
            [kp.INVALID_REQUEST] * 2
        assert broker_configs(c, node, ["log.dirs", "listeners"]) == before
        assert broker_configs(c, node, ["num.partitions"])["num.partitions"]["value"] == "1"
        assert broker_configs(c, node, ["log.retention.ms"])["log.retention.ms"]["value"] == \
            "3600000"
        # An out-of-range value for a dynamic key is INVALID_CONFIG.
        assert iac(c, [(BROKER, "", [("log.retention.ms", SET, "-2")])], 1) == \
            [kp.INVALID_CONFIG]

        # Topics created afterwards pick up the defaults: num.partitions (static) for an
        # auto-created topic and for CreateTopics with NumPartitions -1 ...
        auto = unique("auto")
        md = c.metadata([auto], version=4, allow_auto_create=True)
        assert md["topics"][auto][0] in (0, kp.LEADER_NOT_AVAILABLE)
        assert sorted(wait_partitions(c, auto, 1)["partitions"]) == [0]
        explicit = unique("dflt")
        res = c.create_topics_v([(explicit, -1, -1, None)], version=7)[explicit]
        assert (res["error"], res["num_partitions"], res["replication_factor"]) == (0, 1, 1)
        assert res["configs"]["retention.ms"][0] == "3600000"
        assert res["configs"]["retention.ms"][2] == kp.SOURCE_DYNAMIC_BROKER

        # ... and log.retention.ms as the topic's retention.ms, from the most specific
        # broker level that sets it.
        cfg = topic_configs(c, auto, ["retention.ms"], synonyms=True)["retention.ms"]
        assert (cfg["value"], cfg["source"]) == ("3600000", kp.SOURCE_DYNAMIC_BROKER)
        assert cfg["synonyms"][0] == ("log.retention.ms", "3600000", kp.SOURCE_DYNAMIC_BROKER)
        assert iac(c, [(BROKER, node, [("log.retention.ms", DELETE, None)])], 1) == [0]
        assert value_source(c, auto, "retention.ms") == \
            ("7200000", kp.SOURCE_DYNAMIC_DEFAULT_BROKER)
        assert iac(c, [(BROKER, "", [("log.retention.ms", DELETE, None)])], 1) == [0]
        assert value_source(c, auto, "retention.ms") == (DEFAULT_RETENTION_MS,
                                                        kp.SOURCE_DEFAULT)
        # A topic's own setting still wins over any broker level.
        assert iac(c, [(BROKER, "", [("log.retention.ms", SET, "5000")]),
                       (TOPIC, auto, [("retention.ms", SET, "6000")])], 1) == [0, 0]
        assert value_source(c, auto, "retention.ms") == ("6000", kp.SOURCE_TOPIC)


# ---------------------------------------------------------------- 3. DescribeConfigs

@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_describe_configs(shared_broker, version):
    t = unique("dc")
    with shared_broker.conn() as c:
        create(c, t, configs={"retention.ms": "86400000", "cleanup.policy": "compact"})
        res = c.describe_configs([(TOPIC, t, None)], version=version, include_synonyms=True,
                                 include_documentation=True)
        assert len(res) == 1
        r = res[0]
        assert (r["error"], r["message"], r["type"], r["name"]) == (0, None, TOPIC, t)
        cfgs = r["configs"]
        assert len(cfgs) == len(r["config_order"]), "duplicate entries: %r" % r["config_order"]
        for key in ("retention.ms", "cleanup.policy", "segment.bytes", "segment.ms",
                    "max.message.bytes", "min.insync.replicas",
                    "unclean.leader.election.enable", "message.timestamp.type"):
            assert key in cfgs, key

        rt = cfgs["retention.ms"]
        assert (rt["value"], rt["source"], rt["read_only"], rt["sensitive"]) == \
            ("86400000", kp.SOURCE_TOPIC, False, False)
        # Synonyms, most specific first: the topic's own setting, then broker keys.
        assert rt["synonyms"][0] == ("retention.ms", "86400000", kp.SOURCE_TOPIC)
        rest = rt["synonyms"][1:]
        assert rest, rt
        assert all(s[0].startswith("log.retention.") and s[2] >= kp.SOURCE_DYNAMIC_BROKER
                   for s in rest), rest
        assert [s[2] for s in rest] == sorted(s[2] for s in rest), rest

        cp = cfgs["cleanup.policy"]
        assert (cp["value"], cp["source"]) == ("compact", kp.SOURCE_TOPIC)
        assert cp["synonyms"][0] == ("cleanup.policy", "compact", kp.SOURCE_TOPIC)

        sb = cfgs["segment.bytes"]
        assert (sb["value"], sb["source"]) == ("1073741824", kp.SOURCE_DEFAULT)
        assert sb["synonyms"] and sb["synonyms"][0][0] == "log.segment.bytes", sb
        assert sb["synonyms"][0][2] == kp.SOURCE_DEFAULT

        if version >= 3:
            want = {"retention.ms": kp.TYPE_LONG, "cleanup.policy": kp.TYPE_LIST,
                    "segment.bytes": kp.TYPE_INT, "max.message.bytes": kp.TYPE_INT,
                    "min.insync.replicas": kp.TYPE_INT,
                    "unclean.leader.election.enable": kp.TYPE_BOOLEAN,
                    "message.timestamp.type": kp.TYPE_STRING}
            assert {k: cfgs[k]["type"] for k in want} == want
            assert all(e["type"] != 0 for e in cfgs.values()), \
                [k for k, e in cfgs.items() if e["type"] == 0]
            assert all(e["doc"] is None or isinstance(e["doc"], str) for e in cfgs.values())

        # Without IncludeSynonyms no synonyms; a key list limits the answer (unknown keys
        # are left out); an unknown topic fails only its own resource.
        missing = unique("dc-missing")
        res = c.describe_configs([(TOPIC, t, ["retention.ms", "no.such.config"]),
                                  (TOPIC, missing, None)], version=version)
        assert [(x["error"], x["name"]) for x in res] == \
            [(0, t), (kp.UNKNOWN_TOPIC_OR_PARTITION, missing)]
        assert list(res[0]["configs"]) == ["retention.ms"]
        assert res[0]["configs"]["retention.ms"]["synonyms"] == []
        assert res[1]["configs"] == {}

        # The broker resource: static keys read-only from the static config.
        node = str(shared_broker.node_id)
        b = broker_configs(c, node, ["log.dirs", "num.partitions", "log.segment.bytes"],
                           version=version)
        assert b["log.dirs"]["read_only"] is True
        assert (b["log.dirs"]["value"], b["log.dirs"]["source"]) == \
            (shared_broker.data_dir, kp.SOURCE_STATIC_BROKER)
        assert b["num.partitions"]["read_only"] is True
        assert b["log.segment.bytes"]["value"] == "1073741824"


# ---------------------------------------------------------------- 4. DescribeCluster

@pytest.mark.parametrize("version", [0, 1])
def test_describe_cluster(shared_broker, version):
    with shared_broker.conn() as c:
        cluster_id = c.metadata(version=4)["cluster_id"]
        assert cluster_id
        r = c.describe_cluster(version=version, endpoint_type=1)
        assert (r["error"], r["message"]) == (0, None), r
        if version >= 1:
            assert r["endpoint_type"] == 1
        assert r["cluster_id"] == cluster_id
        assert r["controller_id"] == shared_broker.node_id == 1
        assert r["brokers"] == [(1, "127.0.0.1", shared_broker.port, None)]
        assert r["authorized_operations"] == kp.INT32_MIN  # not asked for
        assert r["throttle_ms"] == 0
        if version >= 1:
            # Only broker endpoints are served; asking for controllers is refused.
            r = c.describe_cluster(version=version, endpoint_type=2)
            assert r["error"] == kp.UNSUPPORTED_VERSION, r
            assert r["message"], r
        # The connection is still usable afterwards.
        assert c.describe_cluster(version=version)["error"] == 0


# ---------------------------------------------------------------- 5. topic ids

def test_create_topics_v7_and_topic_ids(shared_broker):
    t = unique("ids")
    with shared_broker.conn() as c:
        res = c.create_topics_v([(t, 2, 1, {"retention.ms": "3600000"}),
                                 ("bad name", 1, 1, None)], version=7)
        r = res[t]
        assert (r["error"], r["message"]) == (0, None), r
        tid = r["topic_id"]
        assert tid != kp.ZERO_UUID
        assert (r["num_partitions"], r["replication_factor"]) == (2, 1)
        assert r["configs"]["retention.ms"] == ("3600000", False, kp.SOURCE_TOPIC, False)
        assert r["configs"]["segment.ms"] == (DEFAULT_SEGMENT_MS, False, kp.SOURCE_DEFAULT, False)
        assert r["configs"]["cleanup.policy"][0] == DEFAULT_CLEANUP
        bad = res["bad name"]
        assert bad["error"] == kp.INVALID_TOPIC_EXCEPTION and bad["message"], bad
        assert bad["topic_id"] == kp.ZERO_UUID
        assert (bad["num_partitions"], bad["replication_factor"]) == (-1, -1)
        assert not bad["configs"]
        # Creating it again: TOPIC_ALREADY_EXISTS, with no id handed out.
        again = c.create_topics_v([(t, 2, 1, None)], version=7)[t]
        assert again["error"] == kp.TOPIC_ALREADY_EXISTS and again["topic_id"] == kp.ZERO_UUID

        # Metadata v12 by name shows the same id; v10..v12 by id alone (name null) return
        # the topic with its name.
        md = wait_partitions(c, t, 2)
        assert md["topic_id"] == tid and md["name"] == t
        assert c.metadata_v12([t])[t]["topic_id"] == tid
        for v in (10, 11, 12):
            topics = c.metadata_flex([(tid, None)], version=v)["topics"]
            assert len(topics) == 1, (v, topics)
            got = topics[0]
            assert (got["error"], got["name"], got["topic_id"]) == (0, t, tid), (v, got)
            assert sorted(got["partitions"]) == [0, 1]
        # An unknown id.
        other = uuid.uuid4().bytes
        got = c.metadata_flex([(other, None)], version=12)["topics"]
        assert [(x["error"], x["topic_id"], x["name"]) for x in got] == \
            [(kp.UNKNOWN_TOPIC_ID, other, None)]
        assert not got[0]["partitions"]

        # CreatePartitions v3: grow; lower or equal counts and unknown topics fail on
        # their own topic only.
        small, missing = unique("ids-small"), unique("ids-missing")
        create(c, small, partitions=3)
        res = c.create_partitions([(t, 4), (small, 2), (missing, 2)], version=3)
        assert res[t] == (0, None), res
        assert res[small][0] == kp.INVALID_PARTITIONS and res[small][1], res
        assert res[missing][0] == kp.UNKNOWN_TOPIC_OR_PARTITION, res
        assert sorted(wait_partitions(c, t, 4)["partitions"]) == [0, 1, 2, 3]
        assert c.create_partitions([(small, 3)], version=3)[small][0] == kp.INVALID_PARTITIONS
        # validate_only grows nothing.
        assert c.create_partitions([(small, 5)], version=3, validate_only=True)[small] == \
            (0, None)
        time.sleep(0.2)
        assert sorted(wait_partitions(c, small, 3)["partitions"]) == [0, 1, 2]
        # The id survives growing.
        assert c.metadata_flex([(tid, None)], version=12)["topics"][0]["topic_id"] == tid

        # DeleteTopics v6 by id; the answer names the topic.
        res = c.delete_topics([(None, tid)], version=6)
        assert len(res) == 1
        assert (res[0]["error"], res[0]["name"], res[0]["topic_id"]) == (0, t, tid), res
        got = c.metadata_flex([(tid, None)], version=12)["topics"]
        assert got[0]["error"] == kp.UNKNOWN_TOPIC_ID, got
        got = c.metadata_flex([(None, t)], version=12)["topics"]
        assert got[0]["error"] == kp.UNKNOWN_TOPIC_OR_PARTITION, got
        # Again by the now unknown id, and by an unknown name.
        res = c.delete_topics([(None, tid), (missing, None)], version=6)
        assert [(x["error"], x["topic_id"]) for x in res] == \
            [(kp.UNKNOWN_TOPIC_ID, tid), (kp.UNKNOWN_TOPIC_OR_PARTITION, kp.ZERO_UUID)]
        assert res[1]["name"] == missing
        # DeleteTopics v4 (first flexible version, names only).
        res = c.delete_topics([small, missing], version=4)
        assert [(x["name"], x["error"]) for x in res] == \
            [(small, 0), (missing, kp.UNKNOWN_TOPIC_OR_PARTITION)]
        assert c.metadata_flex([(None, small)], version=12)["topics"][0]["error"] == \
            kp.UNKNOWN_TOPIC_OR_PARTITION


def test_create_partitions_classic_versions(shared_broker):
    t = unique("cp")
    with shared_broker.conn() as c:
        create(c, t)
        assert c.create_partitions([(t, 2)], version=0)[t] == (0, None)
        assert c.create_partitions([(t, 3)], version=2)[t] == (0, None)
        assert c.create_partitions([(t, 3)], version=1)[t][0] == kp.INVALID_PARTITIONS
        assert sorted(wait_partitions(c, t, 3)["partitions"]) == [0, 1, 2]


# ---------------------------------------------------------------- 6. AlterConfigs

@pytest.mark.parametrize("version", [0, 2])
def test_alter_configs_replaces_whole_set(shared_broker, version):
    t, missing = unique("ac"), unique("ac-missing")
    with shared_broker.conn() as c:
        create(c, t, configs={"retention.ms": "1000", "segment.ms": "3600000"})

        res = c.alter_configs([(TOPIC, t, {"cleanup.policy": "compact",
                                           "retention.ms": "5000"})], version=version)
        assert res == [(0, None, TOPIC, t)]
        cfg = topic_configs(c, t)
        assert (cfg["cleanup.policy"]["value"], cfg["cleanup.policy"]["source"]) == \
            ("compact", kp.SOURCE_TOPIC)
        assert (cfg["retention.ms"]["value"], cfg["retention.ms"]["source"]) == \
            ("5000", kp.SOURCE_TOPIC)
        # Not listed, so back to its default.
        assert (cfg["segment.ms"]["value"], cfg["segment.ms"]["source"]) == \
            (DEFAULT_SEGMENT_MS, kp.SOURCE_DEFAULT)

        # validate_only changes nothing; an invalid set changes nothing either.
        res = c.alter_configs([(TOPIC, t, {})], version=version, validate_only=True)
        assert res[0][0] == 0
        assert value_source(c, t, "retention.ms") == ("5000", kp.SOURCE_TOPIC)
        res = c.alter_configs([(TOPIC, t, {"retention.ms": "7000", "no.such.config": "1"}),
                               (TOPIC, missing, {"retention.ms": "7000"})], version=version)
        assert [(r[0], r[3]) for r in res] == \
            [(kp.INVALID_CONFIG, t), (kp.UNKNOWN_TOPIC_OR_PARTITION, missing)]
        assert value_source(c, t, "retention.ms") == ("5000", kp.SOURCE_TOPIC)
        assert value_source(c, t, "cleanup.policy") == ("compact", kp.SOURCE_TOPIC)

        # An empty set clears every topic-level setting.
        assert c.alter_configs([(TOPIC, t, {})], version=version)[0][0] == 0
        cfg = topic_configs(c, t)
        assert {k: e["source"] for k, e in cfg.items() if e["source"] == kp.SOURCE_TOPIC} == {}
        assert cfg["retention.ms"]["value"] == DEFAULT_RETENTION_MS
        assert cfg["cleanup.policy"]["value"] == DEFAULT_CLEANUP
