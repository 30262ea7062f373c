# SPDX-License-Identifier: Apache-2.0
"""A leader that just took over from another broker, and a producer's sequence gap
(produce.c, sequence_error_moved; docs/replication.md, "A gap at a new leader").

When a leader loses its leadership, the acks=all batches it holds get NOT_LEADER_OR_FOLLOWER —
also those it had appended and that were replicated. librdkafka counts them as not written.
Meanwhile its next batch of another partition may reach that partition's new leader ahead of
the retry of a batch the old leader turned away there: a gap, OUT_OF_ORDER_SEQUENCE_NUMBER in
Kafka. librdkafka 2.0.2 then bumps its producer epoch and renumbers from 0 every batch it holds
as not written, on every partition, and the replicated batch is written a second time
(test_replication_matrix[clean_bounce] saw it: "sequence numbers twice"). So for
PARTITION_TAKEOVER_GRACE_MS (30 s) after taking over, a leader answers a gap of a producer that
has written nothing in its epoch NOT_LEADER_OR_FOLLOWER: the client retries in order, and the
turned-away batch closes the gap. A gap of a producer that has written in the epoch, and any
gap once the grace is over, is the sequence error again.

Three processes: node 1 is the only controller voter and leads nothing here; the partition is
on nodes 2 and 3, led by 2 until 2 shuts down (controlled: its leadership moves to 3)."""
import time

import pytest

import cluster as clu
import kproto as kp
from test_idempotence_raw import Idem, leo, new_pid

GRACE_S = 30.0  # PARTITION_TAKEOVER_GRACE_MS


@pytest.fixture(scope="module")
def cl(tmp_path_factory, request):
    c = clu.Cluster(tmp_path_factory.mktemp("takeover"), 3, voters=1)
    yield from clu.serve(c, request)


def test_a_gap_at_a_leader_that_just_took_over_is_not_leader_until_the_producer_writes(cl):
    topic = "takeover"
    cl.wait_healthy(60)
    cl.create_topic(topic, 1, 2, assignments={0: [2, 3]})
    assert cl.wait_leader(topic, 0) == 2
    with cl[2].conn() as c:
        pid, fresh_pid = new_pid(c), new_pid(c)
        p = Idem(c, topic, pid)
        assert p.ok(0, 2) == 0
        # A leader since the topic began (it took over from no one): a gap is the sequence
        # error, as in Kafka.
        assert p.send(5, 1)[0] == kp.OUT_OF_ORDER_SEQUENCE_NUMBER
    cl.wait_isr(topic, 0, [2, 3])
    cl.stop_node(2)
    assert cl.wait_leader(topic, 0, lambda x: x == 3) == 3
    took_over = time.monotonic()
    end = leo(cl[3], topic)
    assert end == 2
    with cl[3].conn() as c:
        q = Idem(c, topic, pid)
        # Sequences 2..3 "went to node 2 and were turned away": 4 is a gap, not written.
        assert q.send(4, 1)[0] == kp.NOT_LEADER_OR_FOLLOWER
        # A producer this partition has never seen, starting past 0: likewise (Kafka:
        # UNKNOWN_PRODUCER_ID, on which librdkafka bumps its epoch too).
        assert Idem(c, topic, fresh_pid).send(3, 1)[0] == kp.NOT_LEADER_OR_FOLLOWER
        # A new producer epoch that does not start at 0 (Kafka: OUT_OF_ORDER_SEQUENCE_NUMBER).
        assert q.send(3, 1, epoch=1)[0] == kp.NOT_LEADER_OR_FOLLOWER
        assert leo(cl[3], topic) == end
        assert "from a producer not heard from since this leader took over: answered " \
               "NOT_LEADER_OR_FOLLOWER" in cl[3].stderr_all(), cl[3].stderr_tail()
        # An exact retry of a batch written before the move is still a duplicate (its
        # offset), and a sequence below the last one is not a gap: the sequence error.
        assert q.send(0, 2) == (kp.NONE, 0)
        assert q.send(1, 1)[0] == kp.OUT_OF_ORDER_SEQUENCE_NUMBER
        # The retries in order: the turned-away batch, then the one refused behind it.
        assert q.ok(2, 2) == end
        assert q.ok(4, 1) == end + 2
        # It wrote in this epoch: a gap now is its own, the sequence error at once.
        assert q.send(9, 1)[0] == kp.OUT_OF_ORDER_SEQUENCE_NUMBER
        assert time.monotonic() - took_over < GRACE_S, "too slow to test within the grace"
        # After the grace, a producer not heard from gets Kafka's answers again.
        time.sleep(max(0.0, took_over + GRACE_S + 1.0 - time.monotonic()))
        assert Idem(c, topic, fresh_pid).send(3, 1)[0] == kp.UNKNOWN_PRODUCER_ID
        assert q.send(3, 1, epoch=1)[0] == kp.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert leo(cl[3], topic) == end + 3
    cl.start_node(2)
