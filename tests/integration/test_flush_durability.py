# SPDX-License-Identifier: Apache-2.0
"""flush.messages keeps Kafka's promise (issue 20, item 5): with a flush policy that asks for
it, a produce is acknowledged (acks=1 and acks=all) only once its batch is fsynced, so a
power loss loses nothing acknowledged; without one (the default), an ack says nothing of the
disk, and a power loss does lose acknowledged records — which is what shows that the power
loss below is real.

The power loss: TALLY_TEST_FAULT=log:lose_unflushed_tail (test builds only), armed in both
runs. While armed, each log notes the offset its last fsync reached; after a kill -9, the
next (unclean) open cuts every log back to that offset, keeping what was fsynced and nothing
else, as a machine that lost its page cache would."""
import re

import pytest
from confluent_kafka import Producer

import harness

FAULT = "log:lose_unflushed_tail"
N = 3000


def value_of(seq):
    return b"seq-%08d-" % seq + b"p" * (seq % 50)


def produce_acked(b, topic, acks, n):
    """Produces n records to partition 0 in many small batches; returns {offset: seq} of
    the acknowledged ones (all of them, or the test stops)."""
    acked, failed = {}, []
    p = Producer({"bootstrap.servers": b.bootstrap, "acks": acks, "linger.ms": 1,
                  "batch.num.messages": 50, "enable.idempotence": False,
                  "message.timeout.ms": 60000})

    def on_delivery(err, msg, seq):
        if err is None:
            acked[msg.offset()] = seq
        else:
            failed.append((seq, err))

    for seq in range(n):
        while True:
            try:
                p.produce(topic, value=value_of(seq), partition=0,
                          on_delivery=lambda err, msg, seq=seq: on_delivery(err, msg, seq))
                break
            except BufferError:
                p.poll(0.05)
        p.poll(0)
    assert p.flush(60) == 0, "deliveries still pending"
    assert not failed, failed[:5]
    assert len(acked) == n
    return acked


def power_loss(b):
    """kill -9, then start again as after a crash of the machine (the hook is armed)."""
    b.kill()
    b.start()


def surviving(b, topic):
    """{offset: value} of partition 0 after the restart."""
    start = harness.offsets(b, topic, [0], ts=-2)
    got = harness.consume_assigned(b, topic, start)
    return {m.offset(): m.value() for m in got[0]}


@pytest.mark.parametrize("acks", ["1", "all"])
def test_flush_messages_1_loses_nothing_acknowledged_at_power_loss(
        broker_factory, monkeypatch, acks):
    monkeypatch.setenv("TALLY_TEST_FAULT", FAULT)
    b = broker_factory()
    topic = "fsynced-" + acks
    harness.create_topics(b, [(topic, 1, {"flush.messages": "1"})])
    acked = produce_acked(b, topic, acks, N)
    power_loss(b)
    left = surviving(b, topic)
    lost = sorted(o for o in acked if left.get(o) != value_of(acked[o]))
    assert not lost, "%d acknowledged record(s) lost or changed, first at offsets %r" % (
        len(lost), lost[:10])


@pytest.mark.parametrize("acks", ["1", "all"])
def test_default_policy_loses_acknowledged_records_at_power_loss(
        broker_factory, monkeypatch, acks):
    """Without a flush policy nothing waits for the disk: the same run loses acknowledged
    records, exactly those past what the last fsync covered (the hook's cut)."""
    monkeypatch.setenv("TALLY_TEST_FAULT", FAULT)
    b = broker_factory()
    topic = "unsynced-" + acks
    harness.create_topics(b, [(topic, 1, None)])
    acked = produce_acked(b, topic, acks, N)
    power_loss(b)
    left = surviving(b, topic)
    lost = [o for o in acked if o not in left]
    assert lost, "no acknowledged record lost: the simulated power loss cut nothing"
    cut = re.findall(r"TALLY_TEST_FAULT: dropped the unflushed tail of %s-0: offsets "
                     r"(\d+)\.\.(\d+)" % re.escape(topic), b.stderr_all())
    assert cut, "the hook did not say what it cut"
    first = int(cut[-1][0])
    assert sorted(left) == list(range(first)), "survivors are not exactly the fsynced prefix"
    assert all(left[o] == value_of(acked[o]) for o in left)


def test_follower_counts_toward_the_hw_only_once_its_flush_policy_is_met(tmp_path):
    """Item 5 with replication: an acks=all record of a flush.messages=1 topic is on the disk
    of every in-sync replica that counted toward its HW, not only the leader's. The followers'
    disks are slow (TALLY_TEST_FAULT log:slow_fsync: each fsync takes 1.5 s), then the two
    followers lose power right after the last ack and the leader dies for good. A replica that
    restarts after its machine crashed leaves every eligible leader replica set (KIP-966), so
    only an unclean election (allowed on this topic) makes one of them the leader — and with
    flush.messages=1 even that loses nothing acknowledged. Were a follower's position counted
    before its flush (its next Fetch going out at once), the acks would have come within
    milliseconds and the tail they acknowledged would be gone with the followers' page
    caches."""
    from cluster import Cluster
    # A follower must not leave the ISR while its slow flushes hold its Fetches: an unclean
    # election of a replica out of the ISR loses records in Kafka too, whatever the disks do.
    c = Cluster(tmp_path, n=3, settings={"broker.heartbeat.interval.ms": "250",
                                         "broker.session.timeout.ms": "2000",
                                         "replica.lag.time.max.ms": "60000"})
    c.nodes[1].env = {"TALLY_TEST_FAULT": FAULT}
    for i in (2, 3):
        c.nodes[i].env = {"TALLY_TEST_FAULT": FAULT + ",log:slow_fsync"}
    topic = "replicated-fsynced"
    try:
        c.start()
        c.create_topic(topic, config={"flush.messages": "1", "min.insync.replicas": "2",
                                      "unclean.leader.election.enable": "true"},
                       assignments={0: [1, 2, 3]})
        acked = produce_acked(c.nodes[1], topic, "all", 500)
        assert c.isr(topic, 0) == [1, 2, 3], "a follower left the ISR: the check is void"
        for i in (2, 3, 1):
            c.kill_node(i)
        for i in (2, 3):
            c.start_node(i, wait=False)
        leader = c.wait_leader(topic, 0, pred=lambda leader: leader in (2, 3), timeout=60)
        c.wait_isr(topic, 0, [2, 3], timeout=60)
        left = surviving(c.nodes[leader], topic)
        lost = sorted(o for o in acked if left.get(o) != value_of(acked[o]))
        assert not lost, "%d acknowledged record(s) lost on the new leader %d, first %r" % (
            len(lost), leader, lost[:10])
    finally:
        c.shutdown()
