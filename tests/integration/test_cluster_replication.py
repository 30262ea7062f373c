# SPDX-License-Identifier: Apache-2.0
"""The replicated cluster as processes (issue 16, "How it is checked"): three tallyd on
loopback (tests/integration/cluster.py) and real clients. The same properties are tested in
milliseconds on the virtual-time fixture (tests/unit/test_cluster.c); these prove the
wiring: sockets, files, signals, the follower fetcher, the controller's timers.

One cluster serves the whole module (each test makes its own topics and leaves every node
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
    c = clu.Cluster(tmp_path_factory.mktemp("cluster3"), 3)
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
