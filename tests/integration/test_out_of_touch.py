# SPDX-License-Identifier: Apache-2.0
"""A leader out of touch with the controller (issue 16; docs/replication.md, "Out of touch with
the controller"): once no heartbeat of a broker has been answered for broker.session.timeout.ms,
the controller has most likely fenced it and moved its leaderships, which the broker cannot learn
meanwhile. A client that took the broker's stale Metadata then comes back to it with sequences
it wrote to the new leader; the sequence error Kafka answers there is fatal to librdkafka's
idempotent producer, so Tally answers NOT_LEADER_OR_FOLLOWER (retriable) instead, appends
nothing, and answers the sequence error again as soon as the controller answers once more.

Three processes: node 1 is the only controller voter (and leads nothing here), nodes 2 and 3
are broker-only and hold the partition, led by 2. SIGSTOP of node 1 leaves 2 out of touch
without any other change (no other voter to take over, no leader moved)."""
import time

import pytest

import cluster as clu
import kproto as kp
from test_idempotence_raw import Idem, leo, new_pid


@pytest.fixture(scope="module")
def cl(tmp_path_factory):
    # A resumed controller may fence node 2 and move its leadership to 3: the preferred-leader
    # check (every 300 s by Kafka's default) brings it back within seconds.
    c = clu.Cluster(tmp_path_factory.mktemp("touch"), 3, voters=1,
                    settings={"leader.imbalance.check.interval.seconds": "5"})

    def resume_all():
        for n in list(c.paused):
            c.resume_node(n)
    yield from clu.serve(c, before_shutdown=resume_all)


SESSION_S = int(clu.FAST_SETTINGS["broker.session.timeout.ms"]) / 1000.0


def led_by_node2(cl, topic):
    """Creates topic (one partition on nodes 2 and 3) once node 2 leads it; node 2's broker."""
    cl.wait_healthy(60)
    cl.create_topic(topic, 1, 2, assignments={0: [2, 3]})
    assert cl.wait_leader(topic, 0) == 2
    return cl[2]


def test_out_of_touch_leader_answers_a_sequence_gap_with_not_leader(cl):
    topic = "touch"
    b2 = led_by_node2(cl, topic)
    with b2.conn() as c:
        p = Idem(c, topic, new_pid(c))
        assert p.ok(0, 2) == 0
        # In touch: a gap is the sequence error, as in Kafka.
        assert p.send(5, 1)[0] == kp.OUT_OF_ORDER_SEQUENCE_NUMBER
        end = leo(b2, topic)
        cl.pause_node(1)
        try:
            time.sleep(SESSION_S + 1.5)
            # Out of touch: the same gap is NOT_LEADER_OR_FOLLOWER, and nothing is appended.
            assert p.send(5, 1)[0] == kp.NOT_LEADER_OR_FOLLOWER
            assert leo(b2, topic) == end
            assert ("while out of touch with the controller: answered NOT_LEADER_OR_FOLLOWER"
                    in b2.stderr_all()), b2.stderr_tail()
        finally:
            cl.resume_node(1)
    # In touch again: the sequence error comes back, from whichever broker leads once every
    # broker is unfenced (the resumed controller may first fence the brokers whose sessions
    # ran out on its clock while it stood still, and move the leadership to 3; a leader that
    # took over answers a gap NOT_LEADER_OR_FOLLOWER for 30 s more: test_takeover_gap.py).
    cl.wait_healthy(60)
    leader = cl.wait_leader(topic, 0)
    with cl[leader].conn() as c:
        q = Idem(c, topic, p.pid)
        clu.wait_for(lambda: q.send(5, 1)[0] == kp.OUT_OF_ORDER_SEQUENCE_NUMBER, 70,
                     "the sequence error from leader %d after the controller came back" % leader)
        assert q.ok(2, 1) == end
    assert leo(cl[leader], topic) == end + 1


def test_gap_behind_one_turned_away_out_of_touch_stays_not_leader_once_in_touch(cl):
    """The out-of-touch answer counts as turning a batch away on its connection (produce.c,
    "batches turned away"): a later batch of the producer on the same connection, judged once
    the broker is in touch and leads again, finds the gap the first one left and must get
    NOT_LEADER_OR_FOLLOWER too, not the sequence error. librdkafka before 2.3 counts five
    batches that timed out on a zombie as written (its issue 4438); retried here, the second
    one answered OUT_OF_ORDER_SEQUENCE_NUMBER is fatal to it ("rewound sequence number", seen
    in test_netns_partition's one-way cut)."""
    topic = "touch-memo"
    b2 = led_by_node2(cl, topic)
    with b2.conn() as c:
        p = Idem(c, topic, new_pid(c))
        assert p.ok(0, 2) == 0
        end = leo(b2, topic)
        cl.pause_node(1)
        try:
            time.sleep(SESSION_S + 1.5)
            assert p.send(5, 1)[0] == kp.NOT_LEADER_OR_FOLLOWER  # out of touch
        finally:
            cl.resume_node(1)
        answers = []

        def leads_in_touch():
            # A gap from a fresh connection (no memory of the first batch) gets the sequence
            # error only from a leader in touch with the controller.
            with b2.conn() as fresh:
                return Idem(fresh, topic, p.pid).send(9, 1)[0] == kp.OUT_OF_ORDER_SEQUENCE_NUMBER

        def once_in_touch():
            if not leads_in_touch():
                return False
            got = p.send(6, 1)[0]
            if not leads_in_touch():
                return False  # the leadership moved meanwhile: ask again
            answers.append(got)
            return True
        clu.wait_for(once_in_touch, 90, "node 2 to lead %s in touch with the controller" % topic)
        assert answers[-1] == kp.NOT_LEADER_OR_FOLLOWER, answers
        assert leo(b2, topic) == end
        # The retries in order then append, and the memory of the gap is gone with it.
        assert p.ok(2, 1) == end
        assert p.send(6, 1)[0] == kp.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert leo(b2, topic) == end + 1
