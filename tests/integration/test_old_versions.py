# SPDX-License-Identifier: Apache-2.0
"""The old protocol versions Kafka 3.9 still serves (Kafka 4.0 dropped them, KIP-896),
with raw requests: Produce v0..v2 carrying magic 0/1 message sets (plain and gzip
wrappers) read back by a modern client and by Fetch v0..v3; Fetch v0..v3 of what
librdkafka produced; the codec gating of zstd (Produce below v7, Fetch below v10);
ListOffsets v0, Metadata v0, CreateTopics v0/v1, DeleteTopics v0, DescribeConfigs v0;
and Metadata's auto-creation with num.partitions / default.replication.factor."""
import uuid

import pytest

import harness
import kproto as kp

# Kafka 3.9's lowest version of each API Tally serves: all 0.
KAFKA_39_MINIMUMS = {kp.PRODUCE: 0, kp.FETCH: 0, kp.LIST_OFFSETS: 0, kp.METADATA: 0,
                     kp.CREATE_TOPICS: 0, kp.DELETE_TOPICS: 0, 21: 0, 22: 0,
                     kp.DESCRIBE_CONFIGS: 0, kp.ALTER_CONFIGS: 0, kp.CREATE_PARTITIONS: 0,
                     kp.INCREMENTAL_ALTER_CONFIGS: 0, kp.DESCRIBE_CLUSTER: 0}

UNSUPPORTED_VERSION = 35


def unique(prefix):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:10])


def new_topic(b, partitions=1, configs=None):
    name = unique("old")
    harness.create_topics(b, [(name, partitions, configs)])
    return name


def fetch_old_all(b, topic, version, start=0, partition=0):
    """Every message from `start` with Fetch `version` (v0..v3), parsed."""
    out = []
    with b.conn() as c:
        pos = start
        for _ in range(100):
            res = c.fetch_old({topic: {partition: pos}}, version=version)[(topic, partition)]
            assert res["error"] == 0, res
            msgs = kp.parse_legacy_set(res["records"])
            if not msgs:
                return out, res["hw"]
            out += msgs
            pos = msgs[-1]["offset"] + 1
    raise AssertionError("fetch did not end")


def test_api_versions_advertise_kafka_39_minimums(shared_broker):
    with shared_broker.conn() as c:
        err, ranges = c.api_versions(0)
    assert err == 0
    for key, lo in KAFKA_39_MINIMUMS.items():
        assert key in ranges and ranges[key][0] == lo, \
            "API %d: %r, Kafka 3.9 serves from %d" % (key, ranges.get(key), lo)


@pytest.mark.parametrize("version,magic,codec", [
    (0, 0, 0), (1, 0, 0), (2, 1, 0), (0, 0, kp.CODEC_GZIP), (2, 1, kp.CODEC_GZIP)])
def test_produce_old_message_sets_read_by_modern_and_old_fetchers(shared_broker, version,
                                                                  magic, codec):
    b = shared_broker
    topic = new_topic(b)
    recs = [(b"k%d" % i, b"value-%d" % i) for i in range(5)] + [(None, b"no-key"),
                                                                (b"tomb", None)]
    ts = 1700000000000
    with b.conn() as c:
        for round_ in range(2):
            res = c.produce_old({topic: {0: kp.legacy_set(recs, magic, ts, codec)}},
                                version=version)[(topic, 0)]
            assert res["error"] == 0, res
            assert res["base_offset"] == round_ * len(recs)
            if version >= 2:
                assert res["log_append_time"] == -1
    n = 2 * len(recs)

    # A modern client reads v2 batches with the same keys, values and timestamps.
    got = harness.consume_assigned(b, topic, {0: 0})[0]
    assert [(m.key(), m.value()) for m in got] == recs * 2
    assert [m.offset() for m in got] == list(range(n))
    want_ts = ts if magic == 1 else -1
    assert all(m.timestamp()[1] == want_ts for m in got), [m.timestamp() for m in got]

    # Old fetchers read it back as messages of their own magic.
    for fv in range(4):
        msgs, hw = fetch_old_all(b, topic, fv)
        assert hw == n
        assert [(m["key"], m["value"]) for m in msgs] == recs * 2
        assert [m["offset"] for m in msgs] == list(range(n))
        assert all(m["magic"] == (0 if fv <= 1 else 1) for m in msgs)
        if fv >= 2:
            assert all(m["timestamp"] == want_ts for m in msgs)
    # From the middle of a batch: the records before the fetch offset are left out.
    msgs, _ = fetch_old_all(b, topic, 2, start=3)
    assert [m["offset"] for m in msgs] == list(range(3, n))


def test_produce_old_corrupt_crc_is_refused(shared_broker):
    b = shared_broker
    topic = new_topic(b)
    data = bytearray(kp.legacy_set([(b"k", b"value")], 1))
    data[-1] ^= 1
    with b.conn() as c:
        res = c.produce_old({topic: {0: bytes(data)}}, version=2)[(topic, 0)]
        assert res["error"] == kp.CORRUPT_MESSAGE, res
        # Nothing was appended; a good one still goes in at offset 0.
        res = c.produce_old({topic: {0: kp.legacy_set([(b"k", b"v")], 1)}},
                            version=2)[(topic, 0)]
        assert res["error"] == 0 and res["base_offset"] == 0, res


@pytest.mark.parametrize("compression", ["none", "gzip", "snappy", "lz4"])
def test_fetch_old_versions_of_librdkafka_data(shared_broker, compression):
    from confluent_kafka import Producer
    b = shared_broker
    topic = new_topic(b)
    p = Producer({"bootstrap.servers": b.bootstrap, "compression.type": compression,
                  "linger.ms": 50, "acks": "all"})
    want = []
    for i in range(200):
        k, v = b"key-%d" % i, b"librdkafka-%d-" % i + b"x" * (i % 17)
        p.produce(topic, v, k, partition=0, timestamp=1600000000000 + i,
                  headers=[("h", b"dropped for magic 0/1")])
        want.append((k, v))
    assert p.flush(30) == 0
    for fv in range(4):
        msgs, hw = fetch_old_all(b, topic, fv)
        assert hw == len(want)
        assert [(m["key"], m["value"]) for m in msgs] == want
        assert [m["offset"] for m in msgs] == list(range(len(want)))
        if fv >= 2:
            assert [m["timestamp"] for m in msgs] == [1600000000000 + i for i in range(200)]


def test_produce_zstd_needs_v7_and_fetch_zstd_needs_v10(shared_broker):
    """A real zstd batch (librdkafka's), fetched raw, produced again raw: refused with
    UNSUPPORTED_COMPRESSION_TYPE by Produce v3..v6, taken by v7; and a partition holding it
    answers UNSUPPORTED_COMPRESSION_TYPE to Fetch v0..v9, the data to v10+."""
    from confluent_kafka import Producer
    b = shared_broker
    src, dst = new_topic(b), new_topic(b)
    p = Producer({"bootstrap.servers": b.bootstrap, "compression.type": "zstd",
                  "linger.ms": 20})
    for i in range(20):
        p.produce(src, b"zstd-%d" % i * 10, partition=0)
    assert p.flush(30) == 0
    with b.conn() as c:
        res = c.fetch({src: {0: 0}}, version=10)["partitions"][(src, 0)]
        assert res["error"] == 0 and res["records"], res
        raw = res["records"]
        assert kp.parse_record_batches(raw)[0]["attributes"] & 7 == 4  # zstd
        batch = raw[:12 + int.from_bytes(raw[8:12], "big")]
        for v in (3, 4, 5, 6):
            r = c.produce({dst: {0: batch}}, version=v)[(dst, 0)]
            assert r["error"] == kp.UNSUPPORTED_COMPRESSION_TYPE, (v, r)
        r = c.produce({dst: {0: batch}}, version=7)[(dst, 0)]
        assert r["error"] == 0 and r["base_offset"] == 0, r
        for v in range(4):
            r = c.fetch_old({src: {0: 0}}, version=v)[(src, 0)]
            assert r["error"] == kp.UNSUPPORTED_COMPRESSION_TYPE, (v, r)
        for v in range(4, 13):
            r = c.fetch({src: {0: 0}}, version=v)["partitions"][(src, 0)]
            want = kp.UNSUPPORTED_COMPRESSION_TYPE if v < 10 else 0
            assert r["error"] == want, (v, r["error"])
            if v >= 10:
                assert r["records"]


def test_down_conversion_disabled_answers_unsupported_version(shared_broker):
    b = shared_broker
    name = unique("old-nodown")
    with b.conn() as c:
        res = c.create_topics_v([(name, 1, 1, {"message.downconversion.enable": "false"})])
        assert res[name]["error"] == 0, res
    harness.wait_leaders(b, [name])
    with b.conn() as c:
        assert c.produce_old({name: {0: kp.legacy_set([(b"k", b"v")], 1)}},
                             version=2)[(name, 0)]["error"] == 0
        for v in range(4):
            r = c.fetch_old({name: {0: 0}}, version=v)[(name, 0)]
            assert r["error"] == UNSUPPORTED_VERSION and r["records"] == b"", (v, r)
        # v4+ clients read v2 batches: no conversion, no refusal.
        r = c.fetch({name: {0: 0}}, version=4)["partitions"][(name, 0)]
        assert r["error"] == 0 and r["records"]


def test_list_offsets_v0(shared_broker):
    b = shared_broker
    topic = new_topic(b)
    with b.conn() as c:
        assert c.produce_old({topic: {0: kp.legacy_set([(None, b"a"), (None, b"b")], 0)}},
                             version=0)[(topic, 0)]["error"] == 0
        res = c.list_offsets_v0({topic: {0: -1}})
        assert res[(topic, 0)] == (0, [2])
        res = c.list_offsets_v0({topic: {0: -2}})
        assert res[(topic, 0)] == (0, [0])
        res = c.list_offsets_v0({topic: {0: -1}}, max_offsets=0)
        assert res[(topic, 0)] == (0, [])
        res = c.list_offsets_v0({"no-such-topic-%s" % uuid.uuid4().hex[:6]: {0: -1}})
        assert list(res.values())[0][0] == kp.UNKNOWN_TOPIC_OR_PARTITION


def test_metadata_v0_empty_list_means_all_topics(shared_broker):
    b = shared_broker
    topic = new_topic(b, partitions=2)
    with b.conn() as c:
        md = c.metadata_v0([])
        assert topic in md["topics"]
        assert len(md["topics"][topic]["partitions"]) == 2
        md = c.metadata_v0([topic])
        assert list(md["topics"]) == [topic]
        assert md["brokers"] and md["brokers"][0][2] == b.port


def test_create_topics_v0_v1_and_delete_topics_v0(shared_broker):
    b = shared_broker
    a, v1, dry = unique("old-ct0"), unique("old-ct1"), unique("old-ctdry")
    with b.conn() as c:
        res = c.create_topics_old([(a, 2, 1)], version=0)
        assert res[a]["error"] == 0 and res[a]["message"] is None, res
        res = c.create_topics_old([(a, 2, 1)], version=0)
        assert res[a]["error"] == kp.TOPIC_ALREADY_EXISTS, res
        res = c.create_topics_old([(v1, 3, 1)], version=1)
        assert res[v1]["error"] == 0, res
        res = c.create_topics_old([(dry, 1, 1)], version=1, validate_only=True)
        assert res[dry]["error"] == 0, res
    harness.wait_leaders(b, [a, v1])
    with b.conn() as c:
        md = c.metadata([a, v1, dry], version=4)  # v0..v3 would auto-create `dry`
        assert len(md["topics"][a][2]) == 2
        assert len(md["topics"][v1][2]) == 3
        assert md["topics"][dry][0] == kp.UNKNOWN_TOPIC_OR_PARTITION
        res = c.delete_topics_v0([a, dry])
        assert res == {a: 0, dry: kp.UNKNOWN_TOPIC_OR_PARTITION}, res


def test_describe_configs_v0(shared_broker):
    b = shared_broker
    topic = new_topic(b, configs={"retention.ms": "123456"})
    with b.conn() as c:
        res = c.describe_configs([(kp.RESOURCE_TOPIC, topic, ["retention.ms", "segment.ms"])],
                                 version=0)
    assert res[0]["error"] == 0, res
    cfg = res[0]["configs"]
    assert cfg["retention.ms"]["value"] == "123456"
    assert cfg["retention.ms"]["is_default"] is False
    assert cfg["segment.ms"]["is_default"] is True


def test_auto_create_uses_num_partitions_and_default_replication_factor(broker_factory):
    b = broker_factory(settings={"num.partitions": "3", "default.replication.factor": "1"})
    name = unique("old-auto")
    with b.conn() as c:
        c.metadata_v0([name])  # v0 always allows auto-creation
    md = harness.wait_leaders(b, [name])
    assert len(md["topics"][name][2]) == 3
    assert all(len(p[2]) == 1 for p in md["topics"][name][2].values())
