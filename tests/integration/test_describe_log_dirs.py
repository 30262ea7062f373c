# SPDX-License-Identifier: Apache-2.0
"""DescribeLogDirs (key 35) on the wire, v0 to v4: the broker's one log directory, by its
absolute path, with every hosted partition asked for and the bytes of its segment files,
offset lag 0, IsFutureKey false, and from v4 the volume's total and usable bytes. A null
Topics asks for every hosted partition; partitions not hosted here are left out, and so is a
topic left with none, as Kafka does. kafka-python 2.0.2 and librdkafka 2.0.2 (the Debian
clients) have no DescribeLogDirs, so the requests are built by hand (kproto.py)."""
import os

import harness
import kproto as kp


def disk_size(b, topic, partition):
    """What the partition's .log files hold on disk, read independently of the broker."""
    return sum(os.path.getsize(f) for f in harness.segment_files(b, topic, partition))


def produce(b, topic, partition, n, size=100):
    with b.conn() as c:
        batch = kp.record_batch([(None, b"x" * size) for _ in range(n)])
        res = c.produce({topic: {partition: batch}}, version=3)
    assert res[(topic, partition)]["error"] == kp.NONE, res


def only_result(res):
    assert res["throttle_ms"] == 0
    assert res["error"] in (None, kp.NONE), res
    assert len(res["results"]) == 1, res
    return res["results"][0]


def test_describe_log_dirs_every_partition_with_sizes(broker):
    b = broker
    harness.create_topics(b, [("ldirs-a", 2, {}), ("ldirs-b", 1, {"segment.bytes": "4096"})])
    produce(b, "ldirs-a", 0, 3)
    produce(b, "ldirs-a", 1, 1)
    for _ in range(5):  # several segments of ldirs-b
        produce(b, "ldirs-b", 0, 10)
    assert len(harness.segment_files(b, "ldirs-b", 0)) > 1

    with b.conn() as c:
        res = c.describe_log_dirs(None, version=4)
    r = only_result(res)
    assert r["error"] == kp.NONE
    assert r["log_dir"] == os.path.realpath(b.data_dir)
    vfs = os.statvfs(b.data_dir)
    assert r["total_bytes"] == vfs.f_blocks * vfs.f_frsize
    assert 0 < r["usable_bytes"] <= r["total_bytes"]
    # A fresh broker hosts exactly the two topics' partitions.
    assert {t: sorted(p) for t, p in r["topics"].items()} == {"ldirs-a": [0, 1], "ldirs-b": [0]}
    for topic, parts in r["topics"].items():
        for p, d in parts.items():
            assert d["size"] == disk_size(b, topic, p) > 0, (topic, p, d)
            assert d["offset_lag"] == 0 and d["is_future"] is False, d
    assert r["topics"]["ldirs-a"][0]["size"] > r["topics"]["ldirs-a"][1]["size"]

    # The size follows the log as it grows.
    before = r["topics"]["ldirs-a"][1]["size"]
    produce(b, "ldirs-a", 1, 4)
    with b.conn() as c:
        r = only_result(c.describe_log_dirs({"ldirs-a": [1]}, version=4))
    assert r["topics"]["ldirs-a"][1]["size"] == disk_size(b, "ldirs-a", 1) > before


def test_describe_log_dirs_leaves_out_what_is_not_hosted(broker):
    b = broker
    harness.create_topics(b, [("ldirs-c", 2, {}), ("ldirs-d", 1, {})])
    produce(b, "ldirs-c", 1, 2)
    with b.conn() as c:
        r = only_result(c.describe_log_dirs({"ldirs-c": [1, 7, 1], "ldirs-no-such": [0],
                                             "ldirs-d": [5]}, version=4))
    # Partition 7 and the unknown topic are left out; ldirs-d has no partition asked for
    # that is hosted, so it is left out too; partition 1, asked twice, comes once.
    assert r["error"] == kp.NONE
    assert list(r["topics"]) == ["ldirs-c"], r
    assert list(r["topics"]["ldirs-c"]) == [1]
    assert r["topics"]["ldirs-c"][1]["size"] == disk_size(b, "ldirs-c", 1) > 0

    with b.conn() as c:
        r = only_result(c.describe_log_dirs({}, version=4))
    assert r["topics"] == {} and r["error"] == kp.NONE


def test_describe_log_dirs_every_version(broker):
    b = broker
    harness.create_topics(b, [("ldirs-v", 1, {})])
    produce(b, "ldirs-v", 0, 2)
    size = disk_size(b, "ldirs-v", 0)
    with b.conn() as c:
        err, ranges = c.api_versions(0)
        assert err == 0 and ranges.get(kp.DESCRIBE_LOG_DIRS) == (0, 4)
        for version in range(5):
            for topics in (None, {"ldirs-v": [0]}):
                res = c.describe_log_dirs(topics, version=version)
                r = only_result(res)
                assert (res["error"] is None) == (version < 3)
                assert (r["total_bytes"] is None) == (version < 4)
                assert r["log_dir"] == os.path.realpath(b.data_dir)
                assert r["topics"] == {"ldirs-v": {0: {"size": size, "offset_lag": 0,
                                                       "is_future": False}}}, (version, r)
