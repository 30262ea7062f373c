# SPDX-License-Identifier: Apache-2.0
"""Two tallyd processes: node 1 is the only voter of the metadata quorum (the controller);
node 2 is not a voter, its controller.quorum.voters names node 1, and it reaches node 1's
Kafka listener through controller.bootstrap.servers.

Node 2 registers through the outbound client (BrokerRegistration to the controller, which
writes its registration record and adds it to the quorum as a standby), so it appears in
Metadata; its producer ids come from a block the controller granted it through
AllocateProducerIds; and it does not accept writes for a partition node 1 leads."""
import re
import time

import pytest

import harness
import kproto as kp

CLUSTER_ID = "two-brokers-test-cluster"


def wait_for(pred, timeout=20.0, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = pred()
        if got:
            return got
        time.sleep(0.05)
    raise AssertionError("timed out waiting for %s" % what)


@pytest.fixture
def pair(broker_factory):
    n1 = broker_factory(node_id=1, settings={"cluster.id": CLUSTER_ID})
    topic = "two-brokers"
    harness.create_topics(n1, [(topic, 3, {})])
    n2 = broker_factory(node_id=2, start=False, settings={
        "cluster.id": CLUSTER_ID,
        "process.roles": "broker",
        "controller.quorum.voters": "1@127.0.0.1:%d" % n1.controller_port,
        "controller.bootstrap.servers": "127.0.0.1:%d" % n1.port,
    })
    n2.start()
    return n1, n2, topic


def broker_ids(b):
    with b.conn() as c:
        return sorted(x[0] for x in c.metadata(version=1)["brokers"])


def test_second_broker_registers_through_the_controller(pair):
    n1, n2, _ = pair
    assert wait_for(lambda: broker_ids(n1) == [1, 2], what="node 2 in node 1's metadata")
    assert wait_for(lambda: broker_ids(n2) == [1, 2], what="node 2's own metadata")
    with n2.conn() as c:
        md = c.metadata(version=2)
    assert md["controller_id"] == 1 and md["cluster_id"] == CLUSTER_ID
    log1 = n1.stderr_all()
    assert "broker 2 registered" in log1, log1
    assert "broker 2 added to the metadata quorum as a standby" in log1, log1


def test_second_broker_gets_producer_ids_from_the_controller(pair):
    n1, n2, _ = pair
    with n1.conn() as c:
        r1 = c.init_producer_id(0)
    with n2.conn() as c:
        r2 = c.init_producer_id(0)
        r2b = c.init_producer_id(2)
    assert r1["error"] == kp.NONE and r2["error"] == kp.NONE and r2b["error"] == kp.NONE
    grants = {}
    for first, end, broker in re.findall(r"producer ids \[(\d+), (\d+)\) granted to broker (\d+)",
                                         n1.stderr_all()):
        grants.setdefault(int(broker), []).append((int(first), int(end)))
    assert 1 in grants and 2 in grants, grants

    def block_of(pid):
        return [b for b, blocks in grants.items() for lo, hi in blocks if lo <= pid < hi]

    # Each id comes from a block the controller granted to the broker that handed it out.
    assert block_of(r1["producer_id"]) == [1], (r1, grants)
    assert block_of(r2["producer_id"]) == [2], (r2, grants)
    assert r2b["producer_id"] == r2["producer_id"] + 1


def test_only_the_controller_grants(pair):
    n1, n2, _ = pair
    with n2.conn() as c:
        # Served to brokers, not advertised to clients (Kafka serves them to brokers only).
        err, keys = c.api_versions(0)
        assert err == kp.NONE and kp.ALLOCATE_PRODUCER_IDS not in keys
        assert kp.BROKER_REGISTRATION not in keys
        assert c.allocate_producer_ids(2)["error"] == kp.NOT_CONTROLLER
        assert c.broker_registration(3, CLUSTER_ID, [("PLAINTEXT", "127.0.0.1", 1)])[
            "error"] == kp.NOT_CONTROLLER
    with n1.conn() as c:
        a = c.allocate_producer_ids(7)
        b = c.allocate_producer_ids(7)
        wrong = c.broker_registration(3, "another-cluster", [("PLAINTEXT", "127.0.0.1", 1)])
    assert a["error"] == kp.NONE and a["producer_id_len"] == 1000, a
    assert b["producer_id_start"] >= a["producer_id_start"] + a["producer_id_len"], (a, b)
    # Kafka's answer to a broker of another cluster.
    assert wrong["error"] == 104  # INCONSISTENT_CLUSTER_ID


def test_registration_cannot_move_a_registered_broker(pair):
    """One request must not be able to point every client at a wrong address: neither the
    controller's own registration nor a live broker's may be taken over."""
    n1, n2, _ = pair
    assert wait_for(lambda: broker_ids(n1) == [1, 2], what="node 2 registered")
    with n1.conn() as c:
        for node in (1, 2):
            r = c.broker_registration(node, CLUSTER_ID, [("PLAINTEXT", "127.0.0.9", 1)])
            assert r["error"] == kp.DUPLICATE_BROKER_REGISTRATION, (node, r)
        md = c.metadata(version=1)
    hosts = {x[0]: (x[1], x[2]) for x in md["brokers"]}
    assert hosts[1] == ("127.0.0.1", n1.port), hosts
    assert hosts[2] == ("127.0.0.1", n2.port), hosts
    # One WARN line (rate-limited: a retrying impostor does not flood the log).
    assert "refused the registration of broker 1" in n1.stderr_all()


def test_produce_to_a_partition_the_broker_does_not_lead(pair):
    n1, n2, topic = pair
    with n2.conn() as c:
        md = wait_for(lambda: c.metadata([topic], version=1)["topics"].get(topic),
                      what="the topic in node 2's metadata")
    err, parts = md[0], md[2]
    assert err == kp.NONE and parts[0][1] == 1, md  # created before node 2 joined
    with n2.conn() as c:
        res = c.produce({topic: {0: kp.record_batch([(None, b"x")])}})
    assert res[(topic, 0)]["error"] == kp.NOT_LEADER_OR_FOLLOWER, res
    with n1.conn() as c:  # the leader takes it
        res = c.produce({topic: {0: kp.record_batch([(None, b"x")])}})
    assert res[(topic, 0)]["error"] == kp.NONE, res


def test_second_broker_restarts_as_a_registered_standby(pair):
    n1, n2, _ = pair
    with n2.conn() as c:
        first = c.init_producer_id(0)["producer_id"]
    n2.restart()
    assert wait_for(lambda: broker_ids(n1) == [1, 2], what="node 2 back in node 1's metadata")
    with n2.conn() as c:
        again = c.init_producer_id(0)
    # Ids left in the old block are not reused: the restarted broker asked for a new block.
    assert again["error"] == kp.NONE and again["producer_id"] >= first + 1000, (first, again)
