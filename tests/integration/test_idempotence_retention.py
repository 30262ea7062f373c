# SPDX-License-Identifier: Apache-2.0
"""Idempotence that must come from the producer snapshot, not from replaying the log
(issue 7, defect 16). A broker that ignored its snapshots at start-up and replayed the
remaining log passed the whole suite, because every restart test kept the producer's
batches in the log. Here they are gone (DeleteRecords, retention) or the newest snapshot
is, and a restart must still know the producer:

  * its retry of the last batch is a duplicate answered with the original offset,
  * its next sequence is accepted (not UNKNOWN_PRODUCER_ID / OUT_OF_ORDER),
  * DescribeProducers still lists it."""
import glob
import os
import time

import pytest

import harness
import kproto as kp
from test_idempotence_raw import Idem, describe, leo, new_pid, new_topic


def segment_bases(b, topic, partition=0):
    return [int(os.path.basename(f).split(".")[0])
            for f in harness.segment_files(b, topic, partition)]


def snapshots(b, topic, partition=0):
    return sorted(glob.glob(os.path.join(harness.partition_dir(b, topic, partition),
                                         "*.snapshot")))


def plain(c, topic, n, partition=0):
    """Appends n records of no producer; returns the base offset."""
    res = c.produce({topic: {partition: kp.record_batch([(None, b"plain-%d" % i)
                                                         for i in range(n)])}})
    d = res[(topic, partition)]
    assert d["error"] == kp.NONE, d
    return d["base_offset"]


def check_known(b, t, p, offs, last_seq, batch=2):
    """The producer p, whose batches of `batch` records started at offsets offs (base
    sequences 0, batch, 2*batch, ...), is still known: its last batch is a duplicate, its
    next sequence goes to the log end, DescribeProducers lists it."""
    end = leo(b, t)
    with b.conn() as c:
        p.c = c
        last = len(offs) - 1
        assert p.send(batch * last, batch) == (kp.NONE, offs[last]), \
            "retry of the last batch after its records left the log"
        assert leo(b, t) == end, "the retry was appended again"
        d = describe(b, t)[(t, 0)]
        assert [(x["producer_id"], x["last_sequence"]) for x in d["producers"]] == \
            [(p.pid, last_seq)], d
        assert p.ok(last_seq + 1, 1) == end, "the next sequence was not accepted"
    d = describe(b, t)[(t, 0)]
    assert [(x["producer_id"], x["last_sequence"]) for x in d["producers"]] == \
        [(p.pid, last_seq + 1)], d


@pytest.mark.parametrize("hard", [False, True], ids=["sigterm", "kill9"])
def test_producer_known_after_delete_records_removed_its_batches(broker, hard):
    b = broker
    # One batch per segment, so the producer's segments go when the log start passes them.
    t = new_topic(b, config={"segment.bytes": "100"})
    with b.conn() as c:
        p = Idem(c, t, new_pid(c))
        offs = [p.ok(2 * i, 2) for i in range(5)]             # offsets 0..9, seq 0..9
        after = plain(c, t, 3)                                 # 10..12: no producer
        res = c.delete_records({t: {0: after}})
        assert res[(t, 0)] == (kp.NONE, after), res
    assert offs == [0, 2, 4, 6, 8] and after == 10
    assert harness.offsets(b, t, [0], ts=kp.EARLIEST) == {0: after}
    deadline = time.monotonic() + 30  # segments below the log start go asynchronously
    while min(segment_bases(b, t)) < after:
        assert time.monotonic() < deadline, "segments below the log start stayed: %r" % (
            segment_bases(b, t),)
        time.sleep(0.1)

    b.restart(hard=hard)
    harness.wait_leaders(b, [t])
    assert harness.offsets(b, t, [0], ts=kp.EARLIEST) == {0: after}
    check_known(b, t, p, offs, last_seq=9)
    # And once more: the state written after the restart carries it too.
    b.restart(hard=hard)
    harness.wait_leaders(b, [t])
    with b.conn() as c:
        p.c = c
        assert p.send(10, 1) == (kp.NONE, 13)


@pytest.mark.parametrize("hard", [False, True], ids=["sigterm", "kill9"])
def test_producer_known_after_retention_removed_its_batches(broker_factory, hard):
    b = broker_factory(settings={"log.retention.check.interval.ms": "200"})
    t = new_topic(b, config={"segment.bytes": "100", "retention.bytes": "100"})
    with b.conn() as c:
        p = Idem(c, t, new_pid(c))
        offs = [p.ok(2 * i, 2) for i in range(5)]             # offsets 0..9
        for _ in range(4):
            plain(c, t, 3)                                     # 10..21, one segment each
    end = leo(b, t)
    assert end == 22
    deadline = time.monotonic() + 30
    while True:
        start = harness.offsets(b, t, [0], ts=kp.EARLIEST)[0]
        if start > offs[-1] + 1 and min(segment_bases(b, t)) > offs[-1]:
            break
        assert time.monotonic() < deadline, "retention left the producer's batches: start " \
            "%d, segments %r" % (start, segment_bases(b, t))
        time.sleep(0.2)

    b.restart(hard=hard)
    harness.wait_leaders(b, [t])
    check_known(b, t, p, offs, last_seq=9)


def test_last_five_batches_across_a_roll_without_the_newest_snapshot(broker):
    """The producer's last 5 batches lie in two segments; the newest snapshot file is
    deleted and the broker killed: the state comes from the older snapshot plus the batches
    of both segments after it, and each of the 5 retries answers its original offset."""
    b = broker
    t = new_topic(b, config={"segment.bytes": "300"})  # about three batches per segment
    with b.conn() as c:
        q = Idem(c, t, new_pid(c))
        p = Idem(c, t, new_pid(c))
        for i in range(4):
            q.ok(2 * i, 2)
        offs = [p.ok(2 * i, 2) for i in range(5)]
    bases = segment_bases(b, t)
    holding = sorted({max(x for x in bases if x <= off) for off in offs})
    assert len(holding) == 2, "want the 5 batches over two segments: offsets %r, segments " \
        "%r" % (offs, bases)
    snaps = snapshots(b, t)
    assert len(snaps) >= 2, snaps
    b.kill()
    os.unlink(snaps[-1])
    b.start()
    harness.wait_leaders(b, [t])
    with b.conn() as c:
        p.c = c
        for i in range(5):
            assert p.send(2 * i, 2) == (kp.NONE, offs[i]), "retry of batch %d" % i
        end = leo(b, t)
        assert end == offs[-1] + 2
        assert p.ok(10, 1) == end
        q.c = c
        assert q.send(6, 2) == (kp.NONE, 6)
    d = describe(b, t)[(t, 0)]
    assert sorted((x["producer_id"], x["last_sequence"]) for x in d["producers"]) == \
        sorted([(p.pid, 10), (q.pid, 7)]), d
