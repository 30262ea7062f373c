# SPDX-License-Identifier: Apache-2.0
"""A KafkaJS 2.2.4 consumer group member (tests/compat/kafkajs/group_consume.js) reads a
topic, commits, and reads the commits and the group's description back with KafkaJS's
admin client; confluent-kafka checks the commits too."""
import json
import os
import subprocess

from confluent_kafka import Consumer, TopicPartition

import harness
from test_data_kafkajs import kafkajs_dir  # noqa: F401 (fixture)
from test_groups_confluent import produce


def test_kafkajs_group_consumes_and_commits(broker_factory, kafkajs_dir):  # noqa: F811
    b = broker_factory(settings={"group.initial.rebalance.delay.ms": "100"})
    topic, group, n, parts = "kjs-group", "kjs-g", 3000, 3
    harness.create_topics(b, [(topic, parts, None)])
    produce(b, topic, n, parts)
    env = dict(os.environ, KAFKAJS_NO_PARTITIONER_WARNING="1")
    r = subprocess.run(["node", "group_consume.js", b.bootstrap, topic, group, str(n)],
                       cwd=kafkajs_dir, capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, "node group_consume.js rc=%d:\n%s\n%s" % (
        r.returncode, r.stdout, r.stderr[-4000:])
    out = json.loads(r.stdout.strip().splitlines()[-1])

    assert sorted(out["values"]) == sorted("v-%d" % i for i in range(n))
    (t,) = out["offsets"]
    assert t["topic"] == topic
    assert {p["partition"]: int(p["offset"]) for p in t["partitions"]} == {
        p: n // parts for p in range(parts)}

    (g,) = out["described"]["groups"]
    assert (g["groupId"], g["state"], g["protocolType"], g["errorCode"]) == (
        group, "Stable", "consumer", 0), g
    assert len(g["members"]) == 1 and g["members"][0]["clientId"] == "tally-compat-group"
    (g,) = out["after"]["groups"]
    assert (g["state"], g["members"]) == ("Empty", []), g

    c = Consumer({"bootstrap.servers": b.bootstrap, "group.id": group})
    try:
        got = c.committed([TopicPartition(topic, p) for p in range(parts)], timeout=10)
    finally:
        c.close()
    assert {tp.partition: tp.offset for tp in got} == {p: n // parts for p in range(parts)}
