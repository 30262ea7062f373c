# SPDX-License-Identifier: Apache-2.0
"""KIP-966's "last replica standing" as processes (issue 16, "How it is checked"): a crash
that loses the page cache's unflushed tail. The virtual-time fixture has the same story
(tests/unit/test_cluster.c: cluster_last_replica_standing_loses_unflushed_tail); this proves
the wiring: the files, the log directory's notes, the registration, the controller.

A partition on brokers 2, 3 and 4 (RF=3, min.insync.replicas=2, unclean election off); node
1 alone is the controller quorum and holds no replica, so the quorum outlives all three.
Batch A is acknowledged by acks=all with all three in sync; broker 3 is killed and batch B
is acknowledged by 2 and 4; broker 4 is killed (it joins the ELR: it holds every committed
record) and the leader 2 is the last replica standing; then 2 is killed too and restarted as
after a crash of its machine (TALLY_TEST_FAULT=log:lose_unflushed_tail, test builds only:
every log is cut back to its checkpointed recovery point, and the broker-epoch note counts
as from another boot). Nothing forces a flush here (log.flush.interval.* are off by default
and the segment never rolls), so A and B sit in 2's page cache only and the cut takes both.

2 comes back first, then 3: a controller that trusted 2 (the ISR's last member) would elect
it and 3 and 4 would truncate to its empty log. It must wait for 4, elect it from the ELR,
and 2 must truncate and catch up from it: every record acks=all acknowledged is there
exactly once, in order, and the three replicas end byte for byte the same."""
import os
import re

import pytest
from confluent_kafka import Producer

import cluster as clu
import harness
import kproto as kp

TOPIC = "last-standing"
CONTROLLER, LEADER, F1, F2 = 1, 2, 3, 4
FAULT = "log:lose_unflushed_tail"


@pytest.fixture
def cl(tmp_path, request):
    yield from clu.serve(clu.Cluster(tmp_path, 4, voters=1), request)


def produce_acked(cl, seqs):
    """Produces value_of(0, s) for each s with an idempotent acks=all producer and waits for
    every delivery report; returns {seq: offset} of the acknowledged ones."""
    acked, errors = {}, []

    def on_delivery(err, msg):
        if err is not None:
            errors.append(str(err))
        else:
            acked[clu.seq_of(msg.value())] = msg.offset()
    p = Producer({"bootstrap.servers": cl.bootstrap, "enable.idempotence": True, "acks": "all",
                  "linger.ms": 5, "message.timeout.ms": 60000, "retry.backoff.ms": 100,
                  "topic.metadata.refresh.interval.ms": 1000, "log_level": 0})
    for s in seqs:
        p.produce(TOPIC, clu.value_of(0, s), partition=0, on_delivery=on_delivery)
    assert p.flush(90) == 0, "undelivered records (errors %r)" % errors[:5]
    assert not errors and sorted(acked) == list(seqs), errors[:5]
    return acked


def recovery_point(cl, node):
    """What node's recovery-point-offset-checkpoint holds for the partition (0, the
    default, when it holds nothing)."""
    path = os.path.join(cl[node].data_dir, "recovery-point-offset-checkpoint")
    try:
        with open(path) as f:
            lines = f.read().split("\n")
    except OSError:
        return 0
    for line in lines[2:]:
        f = line.split()
        if len(f) == 3 and f[0] == TOPIC and f[1] == "0":
            return int(f[2])
    return 0


def test_lossy_last_replica_standing_is_not_elected_over_the_intact_elr_member(
        cl, monkeypatch):
    cl.create_topic(TOPIC, 1, 3, {"min.insync.replicas": "2",
                                  "unclean.leader.election.enable": "false"},
                    assignments={0: [LEADER, F1, F2]})
    assert cl.wait_leader(TOPIC, 0) == LEADER

    a = produce_acked(cl, range(0, 300))          # on all three
    cl.kill_node(F1)
    cl.wait_isr(TOPIC, 0, [LEADER, F2])
    b = produce_acked(cl, range(300, 600))        # on 2 and 4 (still min.insync.replicas)
    acked = {**a, **b}
    end = max(acked.values()) + 1
    cl.kill_node(F2)
    cl.wait_isr(TOPIC, 0, [LEADER])
    # The leader stands alone: below min.insync.replicas, acks=all is refused.
    with cl[LEADER].conn(timeout=20) as c:
        r = c.produce({TOPIC: {0: kp.record_batch([(None, clu.value_of(0, 999999))])}},
                      acks=-1, timeout_ms=5000)[(TOPIC, 0)]
    assert r["error"] == kp.NOT_ENOUGH_REPLICAS, r

    cl.kill_node(LEADER)
    # What the crash may take: everything past the recovery point its checkpoint holds.
    rp = recovery_point(cl, LEADER)
    assert rp < end, "the leader's log is flushed up to %d of %d: the crash loses nothing" % (
        rp, end)
    # Fenced after its session times out: no leader, the ISR keeps its last member.
    cl.wait_leader(TOPIC, 0, lambda leader: leader == -1, what="no leader")

    leaders = []  # (what had happened, leader as every running node says)
    monkeypatch.setenv("TALLY_TEST_FAULT", FAULT)
    cl.start_node(LEADER, wait=False)
    monkeypatch.delenv("TALLY_TEST_FAULT")  # the other nodes start without it
    cl.wait_healthy()
    leaders.append(("2 back after losing its tail", cl.wait_leader(TOPIC, 0, lambda x: True)))
    cl.start_node(F1)
    leaders.append(("3 back (out of the ISR and the ELR)", cl.wait_leader(TOPIC, 0,
                                                                          lambda x: True)))
    cl.start_node(F2)
    leaders.append(("4 back (the ELR)", cl.wait_leader(TOPIC, 0, timeout=60)))

    # First what a client sees: every acknowledged record, exactly once, in order.
    problems = []
    try:
        cl.wait_full_isr(TOPIC, 1, timeout=60)
    except clu.ClusterError as e:
        problems.append(str(e))
    records = clu.read_back(cl.bootstrap, TOPIC, 1, timeout=60)
    problems += clu.check_acked({0: sorted(acked)}, records)
    offsets = {s: o for o, s in records[0]}
    moved = [s for s, o in acked.items() if s in offsets and offsets[s] != o]
    if moved:
        problems.append("%d acknowledged records at other offsets: %r" % (len(moved),
                                                                        moved[:10]))
    assert not problems, "leaders %r: %s" % (leaders, "\n".join(problems))

    # The lossy broker was not elected while the intact ELR member could be.
    assert leaders == [("2 back after losing its tail", -1),
                       ("3 back (out of the ISR and the ELR)", -1),
                       ("4 back (the ELR)", F2)], leaders

    # The hook really dropped the acknowledged tail (else this test proves nothing) ...
    log2 = cl.last_log(LEADER)
    cut = re.findall(r"TALLY_TEST_FAULT: dropped the unflushed tail of %s-0: offsets "
                     r"(\d+)\.\.(\d+)" % TOPIC, log2)
    assert cut == [(str(rp), str(end - 1))], (cut, rp, end)
    assert min(b.values()) >= rp  # batch B, acknowledged, was gone from 2
    # ... and 2 registered as after a machine crash, which the controller judged so.
    assert "registering without a previous broker epoch" in log2, cl[LEADER].stderr_tail()
    epoch = re.findall(r"registered with the controller at broker epoch (\d+)", log2)
    assert epoch, cl[LEADER].stderr_tail()
    assert re.search(r"broker %d registered at epoch %s \(previous broker epoch -1: as after "
                     r"an unclean shutdown" % (LEADER, epoch[-1]), cl.last_log(CONTROLLER))
    # It caught up from 4: the replicas end byte for byte the same.
    sizes = cl.wait_replicas_identical(TOPIC, 1, timeout=60)
    assert sizes[0] > 0
    assert harness.list_offset(cl[F2], TOPIC, 0)[2] == end
