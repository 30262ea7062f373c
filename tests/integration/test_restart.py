# SPDX-License-Identifier: Apache-2.0
"""Durability of the metadata: topics, partition counts and configs survive a clean
stop and a kill -9; a data dir formatted by another node is refused."""
import re
import time

from confluent_kafka.admin import AdminClient, ConfigResource, NewPartitions, NewTopic



def wait_all(futures, timeout=60):
    return {k: f.result(timeout=timeout) for k, f in futures.items()}


def snapshot(b):
    """(cluster_id, {topic: (partition count, leaders, {non-default config: value})})"""
    with b.conn() as c:
        md = c.metadata(version=4)
    admin = AdminClient({"bootstrap.servers": b.bootstrap})
    topics = {}
    for name, (err, _internal, parts) in md["topics"].items():
        assert err == 0, (name, err)
        res = ConfigResource("topic", name)
        cfg = admin.describe_configs([res])[res].result(timeout=30)
        dyn = {k: e.value for k, e in cfg.items() if not e.is_default}
        topics[name] = (len(parts), sorted({p[1] for p in parts.values()}), dyn)
    return md["cluster_id"], topics


def populate(b):
    admin = AdminClient({"bootstrap.servers": b.bootstrap})
    wait_all(admin.create_topics([
        NewTopic("orders", 3, 1, config={"retention.ms": "86400000", "cleanup.policy": "compact"}),
        NewTopic("payments", 1, 1),
        NewTopic("doomed", 2, 1),
        NewTopic("growing", 1, 1, config={"segment.bytes": "1048576"}),
    ] + [NewTopic("bulk-%03d" % i, 1 + i % 3, 1) for i in range(40)]))
    wait_all(admin.delete_topics(["doomed"], operation_timeout=30))
    wait_all(admin.create_partitions([NewPartitions("growing", 4)]))
    res = ConfigResource("topic", "payments", set_config={"max.message.bytes": "12345"})
    admin.alter_configs([res])[res].result(timeout=30)


def wait_for_snapshot(b, want, timeout=10.0):
    """Leaders may take a moment to be re-elected after a restart."""
    deadline = time.monotonic() + timeout
    while True:
        got = snapshot(b)
        if got == want or time.monotonic() > deadline:
            return got
        time.sleep(0.2)


def test_metadata_survives_clean_and_hard_restarts(broker):
    populate(broker)
    before = snapshot(broker)
    cluster_id, topics = before
    assert cluster_id
    assert "doomed" not in topics
    assert topics["orders"] == (3, [1], {"retention.ms": "86400000", "cleanup.policy": "compact"})
    assert topics["growing"] == (4, [1], {"segment.bytes": "1048576"})
    assert topics["payments"] == (1, [1], {"max.message.bytes": "12345"})
    assert len([t for t in topics if t.startswith("bulk-")]) == 40

    broker.restart()  # SIGTERM; asserts exit 0 and a silent sanitizer
    assert wait_for_snapshot(broker, before) == before

    broker.restart(hard=True)  # kill -9
    assert wait_for_snapshot(broker, before) == before

    # Changes made after a crash recovery are durable too.
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    wait_all(admin.create_topics([NewTopic("after-crash", 2, 1)]))
    broker.restart(hard=True)
    want = (cluster_id, dict(topics, **{"after-crash": (2, [1], {})}))
    assert wait_for_snapshot(broker, want) == want


def test_kill_right_after_create_keeps_acknowledged_topics(broker):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    for round_ in range(3):
        names = ["r%d-t%d" % (round_, i) for i in range(20)]
        wait_all(admin.create_topics([NewTopic(n, 2, 1) for n in names]))
        broker.restart(hard=True)
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        listed = admin.list_topics(timeout=30).topics
        missing = [n for n in names if n not in listed]
        assert not missing, "acknowledged topics lost by kill -9: %s" % missing
        assert all(len(listed[n].partitions) == 2 for n in names)


def test_data_dir_of_other_node_is_refused(broker_factory, tmp_path):
    first = broker_factory(node_id=1)
    first.stop()
    # Same directory, different node id (and a quorum naming that node).
    other = broker_factory(node_id=2, start=False, workdir=tmp_path / "other")
    other.data_dir = first.data_dir
    other.start(wait=False)
    try:
        rc = other.proc.wait(20)
    except Exception:
        other.kill()
        raise AssertionError("tallyd accepted a data dir formatted by node 1:\n" +
                             other.stderr_tail())
    err = other.stderr_all()
    assert rc != 0, err
    assert re.search(r"node[ ._-]?id", err, re.I), "message does not mention the node id:\n" + err
    other.check_sanitizers()
    # The original owner still starts on it.
    first.start()
    with first.conn() as c:
        assert c.metadata(version=1)["controller_id"] == 1


def test_sigterm_exits_cleanly_with_clients_connected(broker):
    conns = [broker.conn() for _ in range(5)]
    try:
        for c in conns:
            assert c.api_versions(0)[0] == 0
        rc = broker.stop(check=False)
        broker.check_clean(rc)
    finally:
        for c in conns:
            c.close()

