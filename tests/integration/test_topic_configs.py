# SPDX-License-Identifier: Apache-2.0
"""Every topic config Kafka 3.9 knows (issues 12, 18), one test per config: created with it,
described (value, source, synonyms, documentation), altered with AlterConfigs through
confluent-kafka and kafka-python and with IncrementalAlterConfigs through kafka-python's
protocol classes and raw requests (confluent-kafka 1.7 and kafka-python 2.0.2 have no
incremental call of their own), and refused with INVALID_CONFIG for a bad value. Then
the behaviours: compression.type recompresses on append (the stored codec checked with a
raw Fetch, the records read back by every client), LogAppendTime, the deprecated
message.format.version's WARN, remote.storage.enable refused, dynamic broker configs
(producer.id.expiration.ms, log.* defaults of topics without an override) taking effect
without a restart, and read-only broker configs refused as Kafka refuses them.

flush.messages=1 (an fsync per append) is checked through the log's syscall table in
tests/unit/test_replica.c."""
import gzip
import os
import struct
import subprocess
import time
import uuid

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic
from kafka import KafkaAdminClient, KafkaConsumer
from kafka.protocol.api import Request, Response
from kafka.protocol.types import Array, Boolean, Int8, Int16, Int32, Schema, String

import harness
import kproto as kp

TOPIC, BROKER = kp.RESOURCE_TOPIC, kp.RESOURCE_BROKER
DYNAMIC_TOPIC, DYNAMIC_BROKER, DYNAMIC_DEFAULT, STATIC, DEFAULT = 1, 2, 3, 4, 5
INVALID_CONFIG, INVALID_REQUEST = 40, 42

# key: (value at create, value for the alters, a value Kafka refuses, Kafka's default,
#       ConfigType, broker synonym or None)
CONFIGS = {
    "cleanup.policy": ("compact", "compact,delete", "remove", "delete", 7,
                       "log.cleanup.policy"),
    "compression.type": ("zstd", "lz4", "brotli", "producer", 2, "compression.type"),
    "compression.gzip.level": ("5", "9", "0", "-1", 3, "compression.gzip.level"),
    "compression.lz4.level": ("4", "17", "18", "9", 3, "compression.lz4.level"),
    "compression.zstd.level": ("10", "-5", "23", "3", 3, "compression.zstd.level"),
    "delete.retention.ms": ("1000", "2000", "-1", "86400000", 5,
                            "log.cleaner.delete.retention.ms"),
    "file.delete.delay.ms": ("1000", "2000", "-1", "60000", 5, "log.segment.delete.delay.ms"),
    "flush.messages": ("1", "10", "0", "9223372036854775807", 5,
                       "log.flush.interval.messages"),
    "flush.ms": ("1000", "2000", "-1", "9223372036854775807", 5, "log.flush.interval.ms"),
    "follower.replication.throttled.replicas": ("0:1", "*", "0", "", 7, None),
    "index.interval.bytes": ("1024", "8192", "-1", "4096", 3, "log.index.interval.bytes"),
    "leader.replication.throttled.replicas": ("0:1,1:1", "*", "x:y", "", 7, None),
    "local.retention.bytes": ("1000", "-2", "-3", "-2", 5, "log.local.retention.bytes"),
    "local.retention.ms": ("1000", "-2", "-3", "-2", 5, "log.local.retention.ms"),
    "max.message.bytes": ("2048", "4096", "-1", "1048588", 3, "message.max.bytes"),
    "message.downconversion.enable": ("false", "true", "maybe", "true", 1,
                                      "log.message.downconversion.enable"),
    "message.format.version": ("2.8", "3.0-IV1", "banana", "3.0-IV1", 2,
                               "log.message.format.version"),
    "message.timestamp.after.max.ms": ("1000000", "2000000", "-1", "9223372036854775807", 5,
                                       "log.message.timestamp.after.max.ms"),
    "message.timestamp.before.max.ms": ("1000000", "2000000", "-1", "9223372036854775807", 5,
                                        "log.message.timestamp.before.max.ms"),
    "message.timestamp.difference.max.ms": ("1000000", "2000000", "-1",
                                            "9223372036854775807", 5,
                                            "log.message.timestamp.difference.max.ms"),
    "message.timestamp.type": ("LogAppendTime", "CreateTime", "Now", "CreateTime", 2,
                               "log.message.timestamp.type"),
    "max.compaction.lag.ms": ("600000", "1200000", "0", "9223372036854775807", 5,
                              "log.cleaner.max.compaction.lag.ms"),
    "min.cleanable.dirty.ratio": ("0.3", "0.7", "1.5", "0.5", 6,
                                  "log.cleaner.min.cleanable.ratio"),
    "min.compaction.lag.ms": ("1000", "2000", "-1", "0", 5, "log.cleaner.min.compaction.lag.ms"),
    "min.insync.replicas": ("1", "2", "0", "1", 3, "min.insync.replicas"),
    "preallocate": ("true", "false", "yes", "false", 1, "log.preallocate"),
    "remote.storage.enable": ("false", "false", "true", "false", 1, None),
    "remote.log.copy.disable": ("true", "false", "maybe", "false", 1, None),
    "remote.log.delete.on.disable": ("true", "false", "maybe", "false", 1, None),
    "retention.bytes": ("1000000", "2000000", "1e6", "-1", 5, "log.retention.bytes"),
    "retention.ms": ("60000", "120000", "-2", "604800000", 5, "log.retention.ms"),
    "segment.bytes": ("1048576", "2097152", "13", "1073741824", 3, "log.segment.bytes"),
    "segment.index.bytes": ("1048576", "2097152", "3", "10485760", 3,
                            "log.index.size.max.bytes"),
    "segment.jitter.ms": ("1000", "2000", "-1", "0", 5, "log.roll.jitter.ms"),
    "segment.ms": ("60000", "120000", "0", "604800000", 5, "log.roll.ms"),
    "unclean.leader.election.enable": ("true", "false", "1", "false", 1,
                                       "unclean.leader.election.enable"),
}


def unique(prefix):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:10])


# ---------------------------------------------------------------- kafka-python's protocol


class IncrementalAlterConfigsResponse_v0(Response):
    API_KEY = 44
    API_VERSION = 0
    SCHEMA = Schema(
        ("throttle_time_ms", Int32),
        ("resources", Array(("error_code", Int16), ("error_message", String("utf-8")),
                            ("resource_type", Int8), ("resource_name", String("utf-8")))))


class IncrementalAlterConfigsRequest_v0(Request):
    """IncrementalAlterConfigs v0 in kafka-python's own protocol classes (2.0.2 has no
    admin call for it)."""
    API_KEY = 44
    API_VERSION = 0
    RESPONSE_TYPE = IncrementalAlterConfigsResponse_v0
    SCHEMA = Schema(
        ("resources", Array(("resource_type", Int8), ("resource_name", String("utf-8")),
                            ("configs", Array(("name", String("utf-8")),
                                              ("config_operation", Int8),
                                              ("value", String("utf-8")))))),
        ("validate_only", Boolean))


def kp_incremental(kadmin, rtype, name, changes):
    """[(key, op, value)] through kafka-python's client → (error_code, message)."""
    req = IncrementalAlterConfigsRequest_v0(
        resources=[(rtype, name, [(k, op, v) for k, op, v in changes])], validate_only=False)
    node = kadmin._client.least_loaded_node()
    fut = kadmin._send_request_to_node(node, req)
    kadmin._wait_for_futures([fut])
    res = fut.value.resources[0]
    return res[0], res[1]


# ---------------------------------------------------------------- fixtures and helpers


@pytest.fixture
def admin(shared_broker):
    return AdminClient({"bootstrap.servers": shared_broker.bootstrap})


@pytest.fixture
def kadmin(shared_broker):
    a = KafkaAdminClient(bootstrap_servers=shared_broker.bootstrap, client_id="cfg-test",
                         request_timeout_ms=30000)
    yield a
    a.close()


def describe_raw(b, rtype, name, keys=None, version=4):
    with b.conn() as c:
        res = c.describe_configs([(rtype, name, keys)], version=version,
                                 include_synonyms=True, include_documentation=True)
    assert len(res) == 1 and res[0]["error"] == 0, res
    return res[0]["configs"]


def confluent_error(future):
    with pytest.raises(KafkaException) as ei:
        future.result(timeout=30)
    return ei.value.args[0].code(), ei.value.args[0].str()


def wait_value(b, name, key, want, timeout=10.0):
    deadline = time.monotonic() + timeout
    while True:
        c = describe_raw(b, TOPIC, name, [key])[key]
        if c["value"] == want:
            return c
        assert time.monotonic() < deadline, (key, c, want)
        time.sleep(0.05)


# ---------------------------------------------------------------- one test per config


def test_every_topic_config_is_covered(shared_broker):
    """The broker describes exactly the configs this file tests (a new row in the table
    needs a case here)."""
    name = unique("cover")
    harness.create_topics(shared_broker, [(name, 1, None)])
    described = set(describe_raw(shared_broker, TOPIC, name))
    assert described == set(CONFIGS), described ^ set(CONFIGS)


@pytest.mark.parametrize("key", sorted(CONFIGS))
def test_topic_config(shared_broker, admin, kadmin, key):
    create_value, alter_value, bad, default, ctype, synonym = CONFIGS[key]
    b = shared_broker
    name = unique("cfg")

    # Created with it (CreateTopics through confluent-kafka).
    harness.create_topics(b, [(name, 1, {key: create_value})])

    # Described: value, source, every synonym level, type and documentation.
    c = describe_raw(b, TOPIC, name, [key])[key]
    assert (c["value"], c["source"], c["read_only"], c["type"]) == (
        create_value, DYNAMIC_TOPIC, False, ctype), c
    assert c["synonyms"][0] == (key, create_value, DYNAMIC_TOPIC), c
    assert c["synonyms"][-1] == (synonym or key, default, DEFAULT), c
    assert c["doc"] and len(c["doc"]) > 20, c
    # Without IncludeDocumentation the field is null, as Kafka.
    with b.conn() as conn:
        plain = conn.describe_configs([(TOPIC, name, [key])], version=4)[0]["configs"][key]
    assert plain["doc"] is None and plain["synonyms"] == []
    # confluent-kafka reads the same.
    res = ConfigResource("topic", name)
    entry = admin.describe_configs([res])[res].result(timeout=30)[key]
    assert entry.value == create_value and entry.source == DYNAMIC_TOPIC
    # kafka-python reads it too (DescribeConfigs v0/v1).
    kres = kadmin.describe_configs([kp_config_resource(name)])[0].resources[0]
    assert kres[0] == 0
    assert {e[0]: e[1] for e in kres[4]}[key] == create_value

    # AlterConfigs (replaces the topic's whole set) through confluent-kafka ...
    res = ConfigResource("topic", name, set_config={key: alter_value})
    admin.alter_configs([res])[res].result(timeout=30)
    wait_value(b, name, key, alter_value)
    # ... and back to the default when not listed.
    res = ConfigResource("topic", name, set_config={})
    admin.alter_configs([res])[res].result(timeout=30)
    c = wait_value(b, name, key, default)
    assert c["source"] == DEFAULT and c["synonyms"][0][2] == DEFAULT, c

    # AlterConfigs through kafka-python.
    from kafka.admin import ConfigResource as KpResource, ConfigResourceType
    resp = kadmin.alter_configs([KpResource(ConfigResourceType.TOPIC, name,
                                            configs={key: create_value})])
    assert [r[0] for r in resp.resources] == [0], resp
    wait_value(b, name, key, create_value)

    # IncrementalAlterConfigs through kafka-python's protocol classes: SET, then DELETE.
    assert kp_incremental(kadmin, TOPIC, name, [(key, kp.OP_SET, alter_value)])[0] == 0
    wait_value(b, name, key, alter_value)
    assert kp_incremental(kadmin, TOPIC, name, [(key, kp.OP_DELETE, None)])[0] == 0
    wait_value(b, name, key, default)
    # ... and raw IncrementalAlterConfigs v1 (flexible).
    with b.conn() as conn:
        res = conn.incremental_alter_configs([(TOPIC, name, [(key, kp.OP_SET, create_value)])],
                                             version=1)
    assert res[0][0] == 0, res
    wait_value(b, name, key, create_value)

    # A bad value: INVALID_CONFIG at create and at each alter, nothing changed.
    fs = admin.create_topics([NewTopic(unique("bad"), 1, 1, config={key: bad})])
    code, _msg = confluent_error(list(fs.values())[0])
    assert code == KafkaError.INVALID_CONFIG
    res = ConfigResource("topic", name, set_config={key: bad})
    code, msg = confluent_error(admin.alter_configs([res])[res])
    assert code == KafkaError.INVALID_CONFIG, msg
    assert kp_incremental(kadmin, TOPIC, name, [(key, kp.OP_SET, bad)])[0] == INVALID_CONFIG
    assert describe_raw(b, TOPIC, name, [key])[key]["value"] == create_value


def kp_config_resource(name):
    from kafka.admin import ConfigResource as KpResource, ConfigResourceType
    return KpResource(ConfigResourceType.TOPIC, name)


# ---------------------------------------------------------------- broker-level names


@pytest.mark.parametrize("key", sorted(k for k, v in CONFIGS.items() if v[5]))
def test_broker_synonym_dynamic_default(broker, key):
    """Each broker synonym: set as the cluster-wide dynamic default it becomes the value of
    a topic without an override (source DYNAMIC_DEFAULT_BROKER_CONFIG), a topic override
    still wins, and deleting it restores the default. log.message.format.version is
    read-only (as in Kafka): INVALID_REQUEST."""
    create_value, alter_value, bad, default, _t, synonym = CONFIGS[key]
    b = broker  # broker-level changes get a broker of their own
    name = unique("syn")
    harness.create_topics(b, [(name, 1, None)])
    with b.conn() as conn:
        res = conn.incremental_alter_configs([(BROKER, "", [(synonym, kp.OP_SET, alter_value)])])
        if synonym == "log.message.format.version":
            assert res[0][0] == INVALID_REQUEST, res
            return
        assert res[0][0] == 0, res
        c = wait_value(b, name, key, alter_value)
        assert c["source"] == DYNAMIC_DEFAULT, c
        assert (synonym, alter_value, DYNAMIC_DEFAULT) in c["synonyms"], c
        bc = describe_raw(b, BROKER, "1", [synonym])[synonym]
        assert (bc["value"], bc["source"], bc["read_only"]) == (alter_value, DYNAMIC_DEFAULT,
                                                                False), bc
        # A bad value at the broker level: INVALID_CONFIG.
        res = conn.incremental_alter_configs([(BROKER, "", [(synonym, kp.OP_SET, bad)])])
        assert res[0][0] == INVALID_CONFIG, res
        # Per-broker beats the cluster default.
        res = conn.incremental_alter_configs([(BROKER, "1",
                                               [(synonym, kp.OP_SET, create_value)])])
        assert res[0][0] == 0, res
        c = wait_value(b, name, key, create_value)
        assert c["source"] == DYNAMIC_BROKER, c
        res = conn.incremental_alter_configs([(BROKER, "1", [(synonym, kp.OP_DELETE, None)]),
                                              (BROKER, "", [(synonym, kp.OP_DELETE, None)])])
        assert [r[0] for r in res] == [0, 0], res
    wait_value(b, name, key, default)


def test_static_synonyms_listed(broker_factory):
    """A static broker setting (and its coarser alias) appears among the synonyms with
    STATIC_BROKER_CONFIG, below the dynamic levels."""
    b = broker_factory(settings={"log.retention.hours": "5", "log.segment.bytes": "2000000"})
    name = unique("static")
    harness.create_topics(b, [(name, 1, {"retention.ms": "1000"})])
    c = describe_raw(b, TOPIC, name, ["retention.ms", "segment.bytes"])
    assert c["retention.ms"]["synonyms"] == [
        ("retention.ms", "1000", DYNAMIC_TOPIC), ("log.retention.hours", "5", STATIC),
        ("log.retention.ms", "604800000", DEFAULT)]
    assert c["segment.bytes"]["value"] == "2000000"
    assert c["segment.bytes"]["source"] == STATIC
    assert c["segment.bytes"]["synonyms"] == [
        ("log.segment.bytes", "2000000", STATIC), ("log.segment.bytes", "1073741824", DEFAULT)]


def test_read_only_broker_configs_refused(shared_broker):
    """Kafka answers INVALID_REQUEST for a config outside its dynamic set; the broker's own
    DescribeConfigs marks them read-only."""
    with shared_broker.conn() as conn:
        for key, value in [("log.retention.hours", "1"), ("zookeeper.connect", "zk:2181"),
                           ("log.message.format.version", "2.8"), ("node.id", "3"),
                           ("num.partitions", "3"), ("broker.id", "3")]:
            res = conn.incremental_alter_configs([(BROKER, "", [(key, kp.OP_SET, value)])])
            assert res[0][0] == INVALID_REQUEST, (key, res)
            assert "Cannot update these configs dynamically" in res[0][1], res
    c = describe_raw(shared_broker, BROKER, "1", ["log.retention.hours", "log.retention.ms",
                                                  "producer.id.expiration.ms"])
    assert c["log.retention.hours"]["read_only"] is True
    assert c["log.retention.ms"]["read_only"] is False
    assert c["producer.id.expiration.ms"]["read_only"] is False
    assert all(x["doc"] for x in c.values())


# ---------------------------------------------------------------- behaviours


def gzip_batch(records, base_timestamp=None):
    """A gzip-compressed v2 batch of records [(key, value)] (what a Java client sends)."""
    plain = kp.record_batch(records, base_timestamp=base_timestamp)
    head, body = bytearray(plain[:61]), plain[61:]
    packed = gzip.compress(body)
    struct.pack_into(">h", head, 21, (struct.unpack_from(">h", head, 21)[0] & ~7) | 1)
    out = bytes(head) + packed
    out = out[:8] + struct.pack(">i", len(out) - 12) + out[12:]
    crc = kp.crc32c(out[21:])
    return out[:17] + struct.pack(">I", crc) + out[21:]


def stored_codecs(b, topic, version=12):
    """The codec of every batch the partition holds, with a raw Fetch."""
    with b.conn() as conn:
        res = conn.fetch({topic: {0: 0}}, version=version, max_wait_ms=0)
    d = res["partitions"][(topic, 0)]
    assert d["error"] == 0, d
    return [x["attributes"] & 7 for x in kp.parse_record_batches(d["records"] or b"")]


def produce_confluent(b, topic, n, codec, prefix="c"):
    """n records through librdkafka with compression.codec=codec (librdkafka 2.0.2 may send
    them uncompressed while the broker advertises no FindCoordinator)."""
    p = Producer({"bootstrap.servers": b.bootstrap, "compression.codec": codec,
                  "linger.ms": 50, "enable.idempotence": True})
    for i in range(n):
        p.produce(topic, key=b"k%d" % i, value=(prefix + "-%d-" % i).encode() * 20)
    assert p.flush(30) == 0


CODEC_IDS = {"none": 0, "uncompressed": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


def batch_in_codec(b, codec, records):
    """A v2 batch of records [(key, value)] compressed with codec: built here for none and
    gzip; for the others, the broker itself writes it (a scratch topic with that
    compression.type) and a raw Fetch brings the stored bytes back."""
    if codec == "none":
        return kp.record_batch(records)
    if codec == "gzip":
        return gzip_batch(records)
    scratch = unique("scratch-" + codec)
    harness.create_topics(b, [(scratch, 1, {"compression.type": codec})])
    with b.conn() as conn:
        res = conn.produce({scratch: {0: gzip_batch(records)}})
        assert res[(scratch, 0)]["error"] == 0, res
        f = conn.fetch({scratch: {0: 0}}, version=12, max_wait_ms=0)
    data = f["partitions"][(scratch, 0)]["records"]
    (batch,) = kp.parse_record_batches(data)
    assert batch["attributes"] & 7 == CODEC_IDS[codec], batch
    return data[:batch["size"]]


def produce_raw(b, topic, batch):
    # Produce v7: zstd batches need v7 or later (KIP-110; older ones get
    # UNSUPPORTED_COMPRESSION_TYPE, as from Kafka).
    with b.conn() as conn:
        res = conn.produce({topic: {0: batch}}, version=7)
    assert res[(topic, 0)]["error"] == 0, res


def read_confluent(b, topic, n):
    got = harness.consume_assigned(b, topic, {0: 0})[0]
    assert len(got) == n
    return [m.value() for m in got]


def read_kcat(b, topic, n):
    out = subprocess.run(["kcat", "-C", "-b", b.bootstrap, "-t", topic, "-p", "0", "-o",
                          "beginning", "-e", "-q", "-f", "%s\\n"],
                         capture_output=True, timeout=60, check=True).stdout
    return out.split(b"\n")[:n]


def read_kafka_python(b, topic, n):
    c = KafkaConsumer(bootstrap_servers=b.bootstrap, enable_auto_commit=False,
                      consumer_timeout_ms=5000)
    try:
        c.assign([kafka_tp(topic)])
        c.seek_to_beginning()
        return [m.value for _i, m in zip(range(n), c)]
    finally:
        c.close()


def kafka_tp(topic):
    from kafka import TopicPartition as KTP
    return KTP(topic, 0)


@pytest.mark.parametrize("target,fed,readers", [
    ("zstd", "gzip", ("confluent", "kcat")),          # kafka-python here has no zstd module
    ("gzip", "lz4", ("confluent", "kcat", "kafka-python")),
    ("uncompressed", "zstd", ("confluent", "kcat", "kafka-python", "raw")),
    ("lz4", "none", ("confluent", "kcat")),
    ("snappy", "zstd", ("confluent", "kcat")),
    ("zstd", "snappy", ("confluent", "kcat")),
])
def test_compression_type_recompresses(broker, target, fed, readers):
    """Batches fed in another codec (raw batches of that codec, and whatever librdkafka
    sends) are stored in the topic's codec — checked with a raw Fetch — and every client
    reads the same records back. (A broker of its own: librdkafka's consumer, with a
    group.id, creates __consumer_offsets, which the shared broker must not have.)"""
    b = broker
    topic = unique("codec-" + target)
    harness.create_topics(b, [(topic, 1, {"compression.type": target})])
    expect = []
    for j in range(4):
        recs = [(b"k", ("fed-%d-%d-" % (j, i)).encode() * 10) for i in range(50)]
        produce_raw(b, topic, batch_in_codec(b, fed, recs))
        expect += [v for _k, v in recs]
    produce_confluent(b, topic, 100, fed if fed != "none" else "gzip")
    expect += [(("c-%d-" % i) * 20).encode() for i in range(100)]
    codecs = stored_codecs(b, topic)
    assert len(codecs) >= 5 and set(codecs) == {CODEC_IDS[target]}, codecs
    for r in readers:
        if r == "confluent":
            got = read_confluent(b, topic, len(expect))
        elif r == "kcat":
            got = read_kcat(b, topic, len(expect))
        elif r == "kafka-python":
            got = read_kafka_python(b, topic, len(expect))
        else:
            got = [x[3] for x in harness.fetch_all_raw(b, topic, 0)]
        assert got == expect, (r, len(got))


def test_compression_type_producer_keeps_codec(shared_broker):
    b = shared_broker
    topic = unique("codec-producer")
    harness.create_topics(b, [(topic, 1, None)])
    for codec in ("gzip", "zstd", "none", "lz4", "snappy"):
        produce_raw(b, topic, batch_in_codec(b, codec, [(None, b"v" * 100)] * 10))
    assert stored_codecs(b, topic) == [1, 4, 0, 3, 2]


def test_compression_type_altered_applies_to_next_batches(broker):
    """A change takes effect without a restart: batches after it use the new codec, the
    ones before it stay as stored."""
    b = broker
    topic = unique("codec-alter")
    harness.create_topics(b, [(topic, 1, {"compression.type": "gzip"})])
    produce_raw(b, topic, kp.record_batch([(None, b"a" * 100)] * 20))
    with b.conn() as conn:
        res = conn.incremental_alter_configs(
            [(TOPIC, topic, [("compression.type", kp.OP_SET, "zstd")])])
    assert res[0][0] == 0
    wait_value(b, topic, "compression.type", "zstd")
    produce_raw(b, topic, kp.record_batch([(None, b"b" * 100)] * 20))
    assert stored_codecs(b, topic) == [1, 4]
    assert len(read_confluent(b, topic, 40)) == 40


def test_recompressed_batch_too_large_refused(shared_broker):
    """compression.type=uncompressed: a batch that fits max.message.bytes compressed but
    not once decompressed is refused with MESSAGE_TOO_LARGE (Kafka re-checks the size after
    recompression)."""
    b = shared_broker
    topic = unique("codec-size")
    harness.create_topics(b, [(topic, 1, {"compression.type": "uncompressed",
                                           "max.message.bytes": "4000"})])
    with b.conn() as conn:
        res = conn.produce({topic: {0: gzip_batch([(None, b"x" * 3000)] * 2)}})
        assert res[(topic, 0)]["error"] == 10, res  # MESSAGE_TOO_LARGE
        res = conn.produce({topic: {0: gzip_batch([(None, b"x" * 1000)] * 2)}})
        assert res[(topic, 0)]["error"] == 0, res
    assert stored_codecs(b, topic) == [0]


def test_log_append_time_patches_timestamps(broker):
    b = broker
    topic = unique("lat")
    harness.create_topics(b, [(topic, 1, {"message.timestamp.type": "LogAppendTime",
                                          "compression.type": "lz4"})])
    before = int(time.time() * 1000)
    with b.conn() as conn:
        res = conn.produce({topic: {0: gzip_batch([(None, b"v")] * 3, base_timestamp=1000)}})
    assert res[(topic, 0)]["error"] == 0
    got = harness.consume_assigned(b, topic, {0: 0})[0]
    after = int(time.time() * 1000)
    for m in got:
        ttype, ts = m.timestamp()
        assert ttype == 2 and before - 1000 <= ts <= after + 1000, m.timestamp()  # LOG_APPEND


def test_deprecated_config_warns(broker):
    name = unique("mfv")
    harness.create_topics(broker, [(name, 1, {"message.format.version": "0.10.2"})])
    deadline = time.monotonic() + 5
    line = "configuration message.format.version is deprecated and ignored"
    while line not in broker.stderr_all():
        assert time.monotonic() < deadline, broker.stderr_tail()
        time.sleep(0.05)
    assert broker.stderr_all().count(line) == 1
    # Ignored: batches are still v2 and read back.
    produce_confluent(broker, name, 5, "none")
    assert len(read_confluent(broker, name, 5)) == 5


# Spellings Kafka 3.x takes for message.format.version (MetadataVersion.fromVersionString:
# only the first three parts count for 0.x, the first two after), and some it refuses.
MFV_ACCEPTED = ["0.10.0.0", "0.10.0", "0.10.0-IV1", "0.8.2.2", "0.11.0.3", "1.0.1", "2.8-IV0",
                "2.8.1", "3.0", "3.9-IV0"]
MFV_REFUSED = ["0.10.3", "0.10.2-IV1", "2.8-IV2", "3.10", "2.8."]


def test_message_format_version_every_kafka_spelling(shared_broker, admin, kadmin):
    """Each spelling Kafka accepts is NO_ERROR at creation, through AlterConfigs
    (confluent-kafka) and through IncrementalAlterConfigs (kafka-python's protocol classes
    and a raw request), and is described back as given; the others are INVALID_CONFIG."""
    b = shared_broker
    name = unique("mfv-spell")
    harness.create_topics(b, [(name, 1, {"message.format.version": "0.10.0.0"})])
    assert describe_raw(b, TOPIC, name, ["message.format.version"])[
        "message.format.version"]["value"] == "0.10.0.0"
    for v in MFV_ACCEPTED:
        res = ConfigResource("topic", name, set_config={"message.format.version": v})
        admin.alter_configs([res])[res].result(timeout=30)
        assert describe_raw(b, TOPIC, name, ["message.format.version"])[
            "message.format.version"]["value"] == v
        assert kp_incremental(kadmin, TOPIC, name,
                              [("message.format.version", kp.OP_SET, v)]) == (0, None), v
        with b.conn() as conn:
            res = conn.incremental_alter_configs(
                [(TOPIC, name, [("message.format.version", kp.OP_SET, v)])])
        assert res[0][0] == 0, (v, res)
    for v in MFV_REFUSED:
        with b.conn() as conn:
            res = conn.incremental_alter_configs(
                [(TOPIC, name, [("message.format.version", kp.OP_SET, v)])])
        assert res[0][0] == INVALID_CONFIG, (v, res)
        assert v in res[0][1], res


def test_remote_storage_refused_with_message(shared_broker, admin):
    fs = admin.create_topics([NewTopic(unique("tiered"), 1, 1,
                                       config={"remote.storage.enable": "true"})])
    code, msg = confluent_error(list(fs.values())[0])
    assert code == KafkaError.INVALID_CONFIG
    assert "tiered" in msg and "remote.storage.enable" in msg, msg


def test_dynamic_producer_id_expiration(broker_factory):
    """producer.id.expiration.ms altered at run time expires idle producers at the next
    check; before the change (Kafka's default, a day) they stay."""
    b = broker_factory(settings={"producer.id.expiration.check.interval.ms": "200"})
    topic = unique("pid")
    harness.create_topics(b, [(topic, 1, None)])
    with b.conn() as conn:
        ip = conn.init_producer_id()
        assert ip["error"] == 0, ip
        pid, epoch = ip["producer_id"], ip["producer_epoch"]
        res = conn.produce({topic: {0: kp.idempotent_batch(3, pid, epoch, 0)}})
        assert res[(topic, 0)]["error"] == 0
        time.sleep(1.0)
        assert pid in producer_ids(conn, topic)
        res = conn.incremental_alter_configs(
            [(BROKER, "", [("producer.id.expiration.ms", kp.OP_SET, "300")])])
        assert res[0][0] == 0, res
        deadline = time.monotonic() + 10
        while pid in producer_ids(conn, topic):
            assert time.monotonic() < deadline, "producer %d never expired" % pid
            time.sleep(0.1)


def producer_ids(conn, topic):
    part = conn.describe_producers({topic: [0]})[(topic, 0)]
    assert part["error"] == 0, part
    return [p["producer_id"] for p in part["producers"]]


def test_dynamic_retention_default_applies(broker_factory):
    """log.retention.bytes set as a dynamic cluster default (no restart) trims a topic that
    has no override at the next retention check; an overridden topic keeps its data."""
    b = broker_factory(settings={"log.retention.check.interval.ms": "200"})
    plain, kept = unique("ret"), unique("ret-kept")
    harness.create_topics(b, [(plain, 1, {"segment.bytes": "4096"}),
                              (kept, 1, {"segment.bytes": "4096", "retention.bytes": "-1"})])
    with b.conn() as conn:
        for t in (plain, kept):
            for i in range(20):
                res = conn.produce({t: {0: kp.record_batch([(None, b"x" * 1000)])}})
                assert res[(t, 0)]["error"] == 0
        res = conn.incremental_alter_configs(
            [(BROKER, "", [("log.retention.bytes", kp.OP_SET, "5000")])])
        assert res[0][0] == 0, res
    deadline = time.monotonic() + 10
    while harness.list_offset(b, plain, 0, ts=-2)[2] == 0:
        assert time.monotonic() < deadline, "retention never ran on %s" % plain
        time.sleep(0.1)
    assert harness.list_offset(b, kept, 0, ts=-2)[2] == 0


def test_sample_server_properties(broker_factory):
    """config/server.properties starts a broker with no unknown key, and its values are
    described as static broker configs."""
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "..", "..", "config", "server.properties")
    b = broker_factory(config_file=os.path.abspath(path))
    assert "not a known config" not in b.stderr_all()
    c = describe_raw(b, BROKER, "1", ["log.retention.hours", "log.segment.bytes",
                                      "num.partitions"])
    assert (c["log.retention.hours"]["value"], c["log.retention.hours"]["source"]) == (
        "168", STATIC)
    assert c["log.segment.bytes"]["source"] == STATIC


def test_cli_help_lists_every_config(shared_broker):
    """`tally configs --help` prints the broker's own table: every key the broker describes,
    with its documentation; --broker-defaults alters the cluster-wide dynamic default."""
    r = shared_broker.tally("configs", "--help")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    name = unique("cli")
    harness.create_topics(shared_broker, [(name, 1, None)])
    for key, c in describe_raw(shared_broker, TOPIC, name).items():
        assert "  %s (" % key in out, key
        assert " ".join(c["doc"].split()) in " ".join(out.split()), key
    assert "producer.id.expiration.ms (int, default 86400000, dynamic)" in out
    assert "num.io.threads (int, default 8, dynamic)" in out
    assert "node.id (int, default 1, read-only)" in out


def test_cli_alter_broker_defaults(broker):
    r = broker.tally("configs", "alter", "--broker-defaults", "--set",
                     "log.retention.ms=3600000")
    assert r.returncode == 0, r.stderr
    c = describe_raw(broker, BROKER, "1", ["log.retention.ms"])["log.retention.ms"]
    assert (c["value"], c["source"]) == ("3600000", DYNAMIC_DEFAULT)
    r = broker.tally("configs", "describe", "--broker", "1")
    assert r.returncode == 0, r.stderr
    line = [x for x in r.stdout.splitlines() if x.split() and x.split()[0].startswith(
        "log.retention.ms")]
    assert line and "3600000" in line[0] and "DYNAMIC_DEFAULT_BROKER_CONFIG" in line[0], line
    # Deleting it, and a read-only key refused with Kafka's error.
    r = broker.tally("configs", "alter", "--broker-defaults", "--delete", "log.retention.ms")
    assert r.returncode == 0, r.stderr
    c = describe_raw(broker, BROKER, "1", ["log.retention.ms"])["log.retention.ms"]
    assert c["source"] == DEFAULT
    r = broker.tally("configs", "alter", "--broker-defaults", "--set", "num.partitions=2")
    assert r.returncode == 1 and "INVALID_REQUEST" in r.stderr, r.stderr


def test_min_insync_replicas_honoured(shared_broker):
    """acks=all to a partition whose ISR is smaller than min.insync.replicas answers
    NOT_ENOUGH_REPLICAS (19) and appends nothing; acks=1 is not affected; lowering it takes
    effect without a restart."""
    b = shared_broker
    topic = unique("minisr")
    harness.create_topics(b, [(topic, 1, {"min.insync.replicas": "2"})])
    with b.conn() as conn:
        res = conn.produce({topic: {0: kp.record_batch([(None, b"x")])}}, acks=-1, version=8)
        assert res[(topic, 0)]["error"] == 19, res
        assert "min.insync.replicas" in res[(topic, 0)]["error_message"], res
        res = conn.produce({topic: {0: kp.record_batch([(None, b"y")])}}, acks=1)
        assert res[(topic, 0)]["error"] == 0 and res[(topic, 0)]["base_offset"] == 0, res
        res = conn.incremental_alter_configs(
            [(TOPIC, topic, [("min.insync.replicas", kp.OP_SET, "1")])])
        assert res[0][0] == 0
    wait_value(b, topic, "min.insync.replicas", "1")
    with b.conn() as conn:
        res = conn.produce({topic: {0: kp.record_batch([(None, b"z")])}}, acks=-1)
        assert res[(topic, 0)]["error"] == 0 and res[(topic, 0)]["base_offset"] == 1, res
