# SPDX-License-Identifier: Apache-2.0
"""Forwarding (the cluster issue's "Forwarding" paragraph): three tallyd voters on loopback;
a broker that is not the active controller sends what only the controller decides —
CreateTopics, DeleteTopics, CreatePartitions, AlterConfigs, IncrementalAlterConfigs,
ElectLeaders, Metadata auto-creation and the coordinators' internal topics behind
FindCoordinator — to the controller, and its client gets the controller's answer (before
forwarding a non-controller answered NOT_CONTROLLER, or created nothing).

One cluster serves the whole module; the last test kills its controller."""
import os
import signal
import time
import uuid

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, NewPartitions, NewTopic

import harness
import kproto

CLUSTER_ID = "testForwardingThree1"
SETTINGS = {
    "offsets.topic.num.partitions": "6",
    "group.initial.rebalance.delay.ms": "100",
    "group.min.session.timeout.ms": "1000",
}
COORDINATOR_NOT_AVAILABLE = 15
ELECTION_NOT_NEEDED = 84
FIND_COORDINATOR = 10


def unique(prefix):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:8])


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, request):
    base = tmp_path_factory.mktemp("forwarding")
    nodes = [harness.TallyBroker(base / ("n%d" % i), node_id=i) for i in (1, 2, 3)]
    quorum = ",".join("%d@127.0.0.1:%d" % (n.node_id, n.controller_port) for n in nodes)
    for n in nodes:
        n.settings.update(SETTINGS)
        n.settings.update({"controller.quorum.voters": quorum, "cluster.id": CLUSTER_ID})
    try:
        for n in nodes:
            n.start(wait=False)
        for n in nodes:
            n.wait_ready(60)
        wait_for(lambda: all(len(metadata(n)["brokers"]) == 3 for n in nodes),
                 "every broker unfenced")
        yield nodes
    finally:
        problems = []
        for n in nodes:
            try:
                if n.alive():
                    n.stop(check=True)
                else:
                    n.check_sanitizers()
            except AssertionError as e:
                problems.append(str(e))
        if problems or request.session.testsfailed:
            harness.dump_logs(nodes)
        assert not problems, "\n".join(problems)


def wait_for(cond, what, timeout=30.0):
    deadline = time.monotonic() + timeout
    while True:
        try:
            if cond():
                return
        except (OSError, ConnectionError, ValueError):
            pass
        assert time.monotonic() < deadline, "timed out waiting for " + what
        time.sleep(0.1)


def metadata(node, topics=None):
    with node.conn() as c:
        return c.metadata_flex(topics=topics, version=12)


def roles(nodes):
    """(the active controller, the others), once every live node's image agrees on one."""
    live = [n for n in nodes if n.alive()]
    ids = set()

    def agreed():
        ids.clear()
        ids.update(metadata(n)["controller_id"] for n in live)
        return len(ids) == 1 and -1 not in ids and ids <= {n.node_id for n in live}
    wait_for(agreed, "one controller")
    ctl = ids.pop()
    return (next(n for n in live if n.node_id == ctl),
            [n for n in live if n.node_id != ctl])


def topic_md(node, name):
    md = metadata(node, [(None, name)])
    t = md["topics"][0]
    return t if t["error"] == 0 else None


def test_find_coordinator_on_a_non_controller_creates_the_offsets_topic(cluster):
    """FindCoordinator asked only of a non-controller: it asks the controller for
    __consumer_offsets (COORDINATOR_NOT_AVAILABLE meanwhile), the topic appears with the
    broker's partitions and replication factor, and a consumer group whose
    bootstrap.servers names only that broker works."""
    ctl, others = roles(cluster)
    other = others[0]
    group = unique("fwd-group")
    assert topic_md(ctl, "__consumer_offsets") is None
    answers = []
    with other.conn() as c:
        def found():
            rs = c.group(FIND_COORDINATOR, 3, {"Key": group, "KeyType": 0})
            answers.append(rs["ErrorCode"])
            return rs["ErrorCode"] == 0 and rs["NodeId"] in (1, 2, 3)
        wait_for(found, "a group coordinator")
    assert answers[0] == COORDINATOR_NOT_AVAILABLE, answers
    t = topic_md(ctl, "__consumer_offsets")
    assert t is not None and t["internal"]
    assert len(t["partitions"]) == 6
    assert all(sorted(p["replicas"]) == [1, 2, 3] for p in t["partitions"].values())

    topic = unique("fwd-grouped")
    admin = AdminClient({"bootstrap.servers": other.bootstrap})
    admin.create_topics([NewTopic(topic, 2, 3)], operation_timeout=20)[topic].result(30)
    wait_for(lambda: topic_md(other, topic) is not None, "the topic on the non-controller")
    p = Producer({"bootstrap.servers": other.bootstrap, "acks": "all"})
    for i in range(20):
        p.produce(topic, value=b"v%d" % i, partition=i % 2)
    assert p.flush(30) == 0
    cons = Consumer({"bootstrap.servers": other.bootstrap, "group.id": group,
                     "auto.offset.reset": "earliest", "enable.auto.commit": False,
                     "session.timeout.ms": 6000})
    try:
        cons.subscribe([topic])
        got = []
        deadline = time.monotonic() + 60
        while len(got) < 20 and time.monotonic() < deadline:
            m = cons.poll(0.5)
            if m is not None and m.error() is None:
                got.append(m.value())
        assert sorted(got) == sorted(b"v%d" % i for i in range(20))
        cons.commit(asynchronous=False)
        committed = cons.committed([TopicPartition(topic, 0), TopicPartition(topic, 1)], 20)
        assert sorted(tp.offset for tp in committed) == [10, 10]
    finally:
        cons.close()


def test_each_forwarded_api_gets_the_controllers_answer(cluster):
    """Raw requests to a non-controller: each is the controller's answer (a non-controller
    of its own answers NOT_CONTROLLER); replicas follow the controller's placement."""
    ctl, others = roles(cluster)
    other = others[0]
    name = unique("fwd-raw")
    with other.conn() as c:
        r = c.create_topics_v([(name, 3, 3, {"retention.ms": "3600000"})], version=7)[name]
        assert r["error"] == 0, r
        assert (r["num_partitions"], r["replication_factor"]) == (3, 3)
        assert r["topic_id"] != kproto.ZERO_UUID
        assert r["configs"]["retention.ms"][0] == "3600000"
        t = topic_md(ctl, name)
        assert t is not None and t["topic_id"] == r["topic_id"]
        # Placement: three distinct replicas each, preferred leaders rotating over all three.
        assert all(sorted(p["replicas"]) == [1, 2, 3] for p in t["partitions"].values())
        assert sorted(p["replicas"][0] for p in t["partitions"].values()) == [1, 2, 3]

        assert c.create_partitions([(name, 4)]) == {name: (0, None)}
        assert c.create_partitions([(name, 5, [[3, 1, 2]])]) == {name: (0, None)}
        wait_for(lambda: len(topic_md(ctl, name)["partitions"]) == 5, "five partitions")
        t = topic_md(ctl, name)
        assert t["partitions"][4]["replicas"] == [3, 1, 2]
        assert sorted(t["partitions"][3]["replicas"]) == [1, 2, 3]

        assert c.alter_configs([(kproto.RESOURCE_TOPIC, name, {"retention.ms": "7200000"})]) \
            == [(0, None, kproto.RESOURCE_TOPIC, name)]
        assert c.incremental_alter_configs(
            [(kproto.RESOURCE_TOPIC, name, [("cleanup.policy", kproto.OP_SET, "compact")])]) \
            == [(0, None, kproto.RESOURCE_TOPIC, name)]
        with ctl.conn() as cc:
            cfg = cc.describe_configs([(kproto.RESOURCE_TOPIC, name, None)])[0]["configs"]
        assert cfg["retention.ms"]["value"] == "7200000"
        assert cfg["cleanup.policy"]["value"] == "compact"

        # Preferred election where every leader is preferred: the controller's verdict.
        rs = c.group(kproto.ELECT_LEADERS, 2, {
            "ElectionType": 0, "TopicPartitions": [{"Topic": name, "Partitions": [0, 1, 2]}],
            "TimeoutMs": 10000})
        assert rs["ErrorCode"] == 0, rs
        parts = rs["ReplicaElectionResults"][0]["PartitionResult"]
        assert [(x["PartitionId"], x["ErrorCode"]) for x in parts] == \
            [(0, ELECTION_NOT_NEEDED), (1, ELECTION_NOT_NEEDED), (2, ELECTION_NOT_NEEDED)]

        # v0 has no top-level error: the refusal is in each partition, and a non-controller's
        # own answer (to a request another broker forwarded) says so.
        elect = {"TopicPartitions": [{"Topic": name, "Partitions": [0]}], "TimeoutMs": 10000}
        rs = c.group(kproto.ELECT_LEADERS, 0, elect)
        assert [x["ErrorCode"] for x in rs["ReplicaElectionResults"][0]["PartitionResult"]] \
            == [ELECTION_NOT_NEEDED]
        rs = c.group(kproto.ELECT_LEADERS, 0, elect, client_id="tally-broker-9")
        assert [x["ErrorCode"] for x in rs["ReplicaElectionResults"][0]["PartitionResult"]] \
            == [kproto.NOT_CONTROLLER]

        # A request another broker forwarded is not sent on: it is answered here.
        body = kproto.create_topics_body([(unique("fwd-loop"), 1, 1, None)], 7)
        raw = kproto.frame(kproto.header(kproto.CREATE_TOPICS, 7, c.next_corr(),
                                         client_id="tally-broker-9", flexible=True) +
                           body(kproto.Enc(True)))
        d = kproto.Dec(kproto._roundtrip(c, raw, flexible_header=True), True)
        loop = kproto.parse_create_topics_any(d, 7)
        assert [t["error"] for t in loop.values()] == [kproto.NOT_CONTROLLER]

        res = c.delete_topics([(name, None)])
        assert [(x["name"], x["error"]) for x in res] == [(name, 0)]
    wait_for(lambda: topic_md(ctl, name) is None, "the topic gone")


def test_auto_creation_on_a_non_controller(cluster):
    """Metadata auto-creation asked of a non-controller: LEADER_NOT_AVAILABLE while the
    controller creates it, then the topic."""
    ctl, others = roles(cluster)
    name = unique("fwd-auto")
    with others[0].conn() as c:
        first = c.metadata_flex([(None, name)], allow_auto_create=True)["topics"][0]["error"]
        assert first == kproto.LEADER_NOT_AVAILABLE
        wait_for(lambda: c.metadata_flex([(None, name)], allow_auto_create=True)
                 ["topics"][0]["error"] == 0, "the auto-created topic")
    assert topic_md(ctl, name) is not None


def test_admin_client_pointed_at_a_non_controller(cluster):
    """confluent-kafka's AdminClient with only a non-controller in bootstrap.servers works.
    librdkafka 2.0.2 itself sends these requests to the broker Metadata names as the
    controller (it learns every broker's address from the bootstrap one), so this shows the
    path a user takes, not forwarding: the raw tests above pin that."""
    _ctl, others = roles(cluster)
    other = others[0]
    name = unique("fwd-ck")
    admin = AdminClient({"bootstrap.servers": other.bootstrap})
    admin.create_topics([NewTopic(name, 2, 3)], operation_timeout=20)[name].result(30)
    admin.create_partitions([NewPartitions(name, 4)], operation_timeout=20)[name].result(30)
    res = ConfigResource("topic", name, set_config={"retention.ms": "123456"})
    admin.alter_configs([res])[res].result(30)
    wait_for(lambda: len(topic_md(other, name)["partitions"]) == 4, "four partitions")
    got = admin.describe_configs([ConfigResource("topic", name)])
    cfg = list(got.values())[0].result(30)
    assert cfg["retention.ms"].value == "123456"
    admin.delete_topics([name], operation_timeout=20)[name].result(30)
    wait_for(lambda: topic_md(other, name) is None, "the topic gone")


THROTTLING_QUOTA_EXCEEDED = 89


def test_forwarded_creations_are_held_to_the_clients_mutation_quota(cluster):
    """KIP-590: the non-controller wraps its client's CreateTopics v6 in an Envelope, so the
    controller meters the client's own id against controller_mutation_rate (KIP-599): 0.1/s
    with 11 samples of 1 s is a bucket of 1.1; the first topic (2 partitions) passes and takes
    it below 0, the second is refused with THROTTLING_QUOTA_EXCEEDED and the time until the
    bucket is back at 0, and it is not created."""
    ctl, others = roles(cluster)
    other = others[0]
    cid = unique("env-quota")
    r = ctl.tally("quotas", "set", "--client-id", cid, "--add-config",
                  "controller_mutation_rate=0.1")
    assert r.returncode == 0, r.stderr
    first, second = unique("env-q1"), unique("env-q2")

    def create(name):
        with other.conn() as c:
            body = kproto.create_topics_body([(name, 2, 1, None)], 6)(kproto.Enc(True))
            raw = kproto.frame(kproto.header(kproto.CREATE_TOPICS, 6, c.next_corr(),
                               client_id=cid, flexible=True) + body)
            d = kproto.Dec(kproto._roundtrip(c, raw, flexible_header=True), True)
            at = d.r.pos
            throttle = d.i32()
            d.r.pos = at
            return throttle, kproto.parse_create_topics_any(d, 6)[name]

    throttle, res = create(first)
    assert res["error"] == 0 and throttle == 0, (throttle, res)
    throttle, res = create(second)
    assert res["error"] == THROTTLING_QUOTA_EXCEEDED, res
    assert 0 < throttle <= 9000, throttle
    assert topic_md(ctl, first) is not None
    assert topic_md(ctl, second) is None


def test_controller_killed_while_a_forwarded_request_is_out(cluster):
    """The controller stops with a forwarded CreateTopics unread in its socket, then dies:
    the forwarding broker sees the connection go, looks the controller up again, and its
    client gets the new controller's answer; with no controller left at all, the request's
    timeout — never a hang."""
    ctl, others = roles(cluster)
    other = others[0]
    name = unique("fwd-failover")
    with other.conn(timeout=60) as c:
        # A first forwarded request opens the connection to the controller.
        warm = unique("fwd-warm")
        assert c.create_topics_v([(warm, 1, 1, None)], version=7)[warm]["error"] == 0
        os.kill(ctl.proc.pid, signal.SIGSTOP)
        try:
            corr = c.next_corr()
            c.send(kproto.admin_frame(kproto.CREATE_TOPICS, 7, corr, kproto.create_topics_body(
                [(name, 1, 2, None)], 7, timeout_ms=30000)))
            time.sleep(0.5)  # forwarded and written to the stopped controller
        finally:
            ctl.kill()
        got, body = c.recv_response(flexible_header=True)
        assert got == corr
        d = kproto.Dec(body, True)
        r = kproto.parse_create_topics_any(d, 7)[name]
        d.done()
    assert r["error"] == 0, r
    new_ctl, rest = roles(cluster)
    assert new_ctl.node_id != ctl.node_id
    assert topic_md(new_ctl, name) is not None

    # The new controller dies too: the last broker has no quorum, so no controller can
    # answer; its client gets REQUEST_TIMED_OUT once the request's own timeout has passed.
    new_ctl.kill()
    late = unique("fwd-nobody")
    # The socket timeout only tells "answered by its deadline" from "left to the outbound
    # client's own 30 s request timeout" (a hang, as the client sees it).
    with rest[0].conn(timeout=15) as c:
        r = c.create_topics_v([(late, 1, 1, None)], version=7, timeout_ms=3000)[late]
    assert r["error"] == kproto.REQUEST_TIMED_OUT, r
