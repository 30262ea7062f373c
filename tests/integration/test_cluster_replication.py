# SPDX-License-Identifier: Apache-2.0
"""The replicated cluster as processes (issue 16, "How it is checked"): three tallyd on
loopback (tests/integration/cluster.py) and real clients. The same properties are tested in
milliseconds on the virtual-time fixture (tests/unit/test_cluster.c); these prove the
wiring: sockets, files, signals, the follower fetcher, the controller's timers.

One cluster of four (three voters and a broker-only node) serves the whole module (each test makes its own topics and leaves every node
running); a test that fails dumps what the nodes logged during it. The long variants (100k
records, 5 bounces) are `make chaos` scenarios (tests/chaos/chaos.py)."""
import os
import subprocess
import time

import pytest

import cluster as clu
import kproto as kp


@pytest.fixture(scope="module")
def cluster3(tmp_path_factory):
    # Three voters (1-3) and a broker-only node 4: two followers of a partition can be
    # stopped while a quorum of voters keeps the controller alive.
    c = clu.Cluster(tmp_path_factory.mktemp("cluster"), 4, voters=3)
    try:
        c.start()
    except Exception:
        c.dump_logs()
        c.shutdown()
        raise
    yield c
    problems = c.shutdown()
    if problems:
        c.dump_logs()
    assert not problems, "\n".join(problems)


@pytest.fixture
def cl(cluster3, request):
    """The module's cluster with every node running and unfenced; dumps the nodes' logs of
    this test when it fails, and brings every node back afterwards."""
    c = cluster3
    c.mark()
    yield c
    if getattr(request.node, "rep_call", None) is None or request.node.rep_call.failed:
        c.dump_logs()
    for i in c.ids:
        c.resume_node(i)
        if not c.nodes[i].alive():
            c.start_node(i, wait=False)
    c.wait_healthy(90)


# ---------------------------------------------------------------- Kafka's matrix

@pytest.mark.parametrize("case,stops,controller", [
    ("clean_shutdown", 1, False),
    ("hard_shutdown", 1, False),
    ("clean_bounce", 2, False),
    ("hard_bounce", 2, False),
    ("hard_shutdown", 1, True),
], ids=["clean_shutdown", "hard_shutdown", "clean_bounce", "hard_bounce",
        "hard_shutdown_controller"])
def test_replication_matrix(cl, case, stops, controller):
    topic = "matrix-%s%s" % (case, "-ctl" if controller else "")
    s = clu.run_matrix(cl, case, topic, stops=stops, controller=controller, rate=800,
                       per_phase=800)
    assert s["acked"] >= 800 * (stops + 2), s


# ---------------------------------------------------------------- ISR

def produce_raw(node, topic, partition, values, acks=-1, timeout_ms=10000):
    """One Produce of one batch straight to `node` (a cluster's TallyBroker): its answer."""
    with node.conn(timeout=timeout_ms / 1000 + 10) as c:
        res = c.produce({topic: {partition: kp.record_batch([(None, v) for v in values])}},
                        acks=acks, timeout_ms=timeout_ms)
    return res[(topic, partition)]


def test_broker_only_follower_fetches_from_a_restarted_leader(cl):
    """Regression: a broker-only node (controller.bootstrap.servers set) whose fetcher still
    had a Fetch queued for a leader that was kill -9'd and then fenced resolved that leader's
    id to a controller.bootstrap.servers entry, i.e. another broker, and kept that
    connection under the dead leader's id: once the leader was back and led again, the
    follower asked the wrong broker for good (NOT_LEADER_OR_FOLLOWER every second) and never
    joined the ISR."""
    ctl = cl.wait_controller()
    lead, other = cl.others(ctl)
    cl.create_topic("refetch-a", 1, 3, assignments={0: [lead, 4, other]})
    assert produce_raw(cl[lead], "refetch-a", 0, [b"p0-000000000"])["error"] == kp.NONE
    cl.kill_node(lead)
    cl.wait_leader("refetch-a", 0, lambda x: x not in (lead, -1), what="a leader but %d" % lead)
    # Node 4's fetch for the dead leader is still queued; its reconnects (backoff at most
    # 1 s) now resolve a fenced broker. Give it three of them before the leader returns.
    time.sleep(3)
    cl.start_node(lead)
    cl.create_topic("refetch-b", 1, 3, assignments={0: [lead, 4, other]})
    assert produce_raw(cl[lead], "refetch-b", 0, [b"p0-000000000"])["error"] == kp.NONE
    cl.wait_replicas_identical("refetch-b", 1)
