# SPDX-License-Identifier: Apache-2.0
"""kcat (librdkafka's command-line client) sees the cluster as a Kafka cluster."""
import json
import shutil
import subprocess

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

KCAT = shutil.which("kcat") or shutil.which("kafkacat")


def kcat_json(b, *args):
    r = subprocess.run([KCAT, "-b", b.bootstrap, "-L", "-J", "-m", "20"] + list(args),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, "kcat rc=%d: %s" % (r.returncode, r.stderr)
    return json.loads(r.stdout)


@pytest.fixture(scope="module", autouse=True)
def have_kcat():
    if KCAT is None:
        pytest.fail("kcat is not installed (apt-get install kcat)")


def test_kcat_metadata_lists_topics_partitions_leaders(broker):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    for f in admin.create_topics([NewTopic("kc-one", 1, 1), NewTopic("kc-four", 4, 1)]).values():
        f.result(timeout=30)

    md = kcat_json(broker)
    assert md["controllerid"] == 1
    assert [(x["id"], x["name"]) for x in md["brokers"]] == [(1, broker.bootstrap)]
    topics = {t["topic"]: t for t in md["topics"]}
    assert {"kc-one", "kc-four"} <= set(topics)
    for name, count in (("kc-one", 1), ("kc-four", 4)):
        t = topics[name]
        assert "error" not in t, t
        parts = sorted(t["partitions"], key=lambda p: p["partition"])
        assert [p["partition"] for p in parts] == list(range(count))
        for p in parts:
            assert p["leader"] == 1, p
            assert [r["id"] for r in p["replicas"]] == [1]
            assert [r["id"] for r in p["isrs"]] == [1]


def test_kcat_single_topic_query(broker):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic("kc-single", 2, 1)])["kc-single"].result(timeout=30)
    md = kcat_json(broker, "-t", "kc-single")
    assert [t["topic"] for t in md["topics"]] == ["kc-single"]
    assert len(md["topics"][0]["partitions"]) == 2
