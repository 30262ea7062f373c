# SPDX-License-Identifier: Apache-2.0
"""Transactions, partition side, on the wire (issue 10): transactional batches produced by
hand, then the coordinator's WriteTxnMarkers sent by hand too (COMMIT / ABORT, with the
coordinator epoch). The last stable offset (LSO) holds read_committed Fetch and ListOffsets
(isolation 1) at the first offset of the earliest open transaction; an ABORT lists the
transaction in read_committed answers (from the segment's .txnindex); DescribeProducers
shows the ongoing transaction; a kill -9 with a transaction open keeps the LSO held after
the restart, and the marker then releases it.

These brokers run with transaction.partition.verification.enable=false: the KIP-890 check
asks the transaction coordinator, which these tests do not run (the end-to-end tests with
a real coordinator and librdkafka are elsewhere)."""
import itertools
import os

import pytest

import harness
import kproto as kp

_names = itertools.count(1)
NO_VERIFY = {"transaction.partition.verification.enable": "false"}


def new_topic(b, partitions=1):
    name = "txp-%d-%d" % (os.getpid(), next(_names))
    harness.create_topics(b, [(name, partitions, {})])
    return name


def new_pid(c):
    r = c.init_producer_id(0)
    assert r["error"] == kp.NONE, r
    return r["producer_id"]


def produce_txn(c, topic, pid, seq, n, epoch=0, partition=0, tid="tx-raw"):
    res = c.produce({topic: {partition: kp.transactional_batch(n, pid, epoch, seq,
                                                               prefix=b"p%d-" % pid)}},
                    version=3, transactional_id=tid)
    d = res[(topic, partition)]
    assert d["error"] == kp.NONE, d
    return d["base_offset"]


def produce_plain(c, topic, n, partition=0):
    res = c.produce({topic: {partition: kp.record_batch([(None, b"plain%d" % i)
                                                         for i in range(n)])}})
    d = res[(topic, partition)]
    assert d["error"] == kp.NONE, d
    return d["base_offset"]


def marker(c, topic, pid, commit, coordinator_epoch=0, epoch=0, partition=0, version=1):
    res = c.write_txn_markers([{"producer_id": pid, "producer_epoch": epoch, "commit": commit,
                                "coordinator_epoch": coordinator_epoch,
                                "topics": {topic: [partition]}}], version=version)
    return res[(pid, topic, partition)]


def fetch(c, topic, offset=0, isolation=1, version=11, partition=0):
    res = c.fetch({topic: {partition: offset}}, version=version, isolation=isolation)
    return res["partitions"][(topic, partition)]


def lso_latest(c, topic, isolation, partition=0):
    err, _, off = c.list_offsets({topic: {partition: -1}}, version=5,
                                 isolation=isolation)[(topic, partition)]
    assert err == kp.NONE
    return off


def values(d):
    return [r[3] for r in kp.records_of(d["records"])] if d["records"] else []


@pytest.mark.parametrize("version", [0, 1])
def test_commit_and_abort_by_hand(broker_factory, version):
    b = broker_factory(settings=NO_VERIFY)
    t = new_topic(b)
    with b.conn() as c:
        p1, p2 = new_pid(c), new_pid(c)
        assert produce_plain(c, t, 1) == 0                      # 0
        assert produce_txn(c, t, p1, 0, 2) == 1                 # 1..2 open
        assert produce_txn(c, t, p2, 0, 1) == 3                 # 3 open
        assert produce_plain(c, t, 1) == 4                      # 4
        d = fetch(c, t)
        assert d["error"] == 0 and d["hw"] == 5 and d["lso"] == 1, d
        assert len(values(d)) == 1                              # only offset 0
        assert lso_latest(c, t, 1) == 1 and lso_latest(c, t, 0) == 5
        prods = {p["producer_id"]: p for p in
                 c.describe_producers({t: [0]})[(t, 0)]["producers"]}
        assert prods[p1]["current_txn_start_offset"] == 1
        assert prods[p2]["current_txn_start_offset"] == 3

        assert marker(c, t, p1, commit=False, coordinator_epoch=3, version=version) == 0  # 5
        d = fetch(c, t)
        assert d["lso"] == 3, d
        assert d["aborted"] == [(p1, 1)], d
        assert marker(c, t, p2, commit=True, coordinator_epoch=3, version=version) == 0   # 6
        d = fetch(c, t)
        assert d["lso"] == 7 and d["hw"] == 7, d
        assert d["aborted"] == [(p1, 1)]
        # read_uncommitted sees everything, aborted records included; no aborted list.
        u = fetch(c, t, isolation=0)
        assert not u["aborted"] and u["lso"] == 7
        assert lso_latest(c, t, 1) == 7
        prods = {p["producer_id"]: p for p in
                 c.describe_producers({t: [0]})[(t, 0)]["producers"]}
        assert prods[p1]["current_txn_start_offset"] == -1
        assert prods[p1]["coordinator_epoch"] == 3
        # A stale coordinator epoch is fenced; unknown partitions are named.
        assert marker(c, t, p1, commit=True, coordinator_epoch=2,
                      version=version) == kp.TRANSACTION_COORDINATOR_FENCED
        assert marker(c, t, p1, commit=True, partition=9,
                      coordinator_epoch=3, version=version) == kp.UNKNOWN_TOPIC_OR_PARTITION


def test_bad_transactional_input(broker_factory):
    b = broker_factory(settings=NO_VERIFY)
    t = new_topic(b)
    with b.conn() as c:
        pid = new_pid(c)
        # A control batch from a client: INVALID_RECORD (Kafka's LogValidator).
        res = c.produce({t: {0: kp.control_batch(pid, 0, True)}}, version=3,
                        transactional_id="x")
        assert res[(t, 0)]["error"] == kp.INVALID_RECORD
        # A transactional batch without a transactional id in the request.
        res = c.produce({t: {0: kp.transactional_batch(1, pid, 0, 0)}}, version=3)
        assert res[(t, 0)]["error"] == kp.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        assert produce_txn(c, t, pid, 0, 1) == 0
        # A fenced epoch after a newer marker.
        assert marker(c, t, pid, commit=False, epoch=1) == 0
        res = c.produce({t: {0: kp.transactional_batch(1, pid, 0, 1)}}, version=3,
                        transactional_id="x")
        assert res[(t, 0)]["error"] == kp.INVALID_PRODUCER_EPOCH
        assert fetch(c, t)["lso"] == 2


def test_verification_on_without_a_coordinator_is_retriable(broker_factory):
    """With verification on (the default) and no transaction coordinator to ask, Kafka's
    mapping of COORDINATOR_NOT_AVAILABLE for a producer is NOT_ENOUGH_REPLICAS (retriable),
    and nothing is appended."""
    b = broker_factory()
    t = new_topic(b)
    with b.conn() as c:
        pid = new_pid(c)
        res = c.produce({t: {0: kp.transactional_batch(1, pid, 0, 0)}}, version=3,
                        transactional_id="nobody")
        # (With a coordinator that does not know the transaction: INVALID_TXN_STATE.)
        assert res[(t, 0)]["error"] in (kp.NOT_ENOUGH_REPLICAS, kp.INVALID_TXN_STATE), res
        assert fetch(c, t, isolation=0)["hw"] == 0


def test_kill9_with_an_open_transaction_keeps_the_lso(broker_factory):
    b = broker_factory(settings=NO_VERIFY)
    t = new_topic(b)
    with b.conn() as c:
        p1, p2 = new_pid(c), new_pid(c)
        produce_txn(c, t, p1, 0, 3)                              # 0..2 aborted below
        assert marker(c, t, p1, commit=False, coordinator_epoch=5) == 0   # 3
        produce_plain(c, t, 1)                                   # 4
        assert produce_txn(c, t, p2, 0, 2) == 5                  # 5..6 open
        produce_plain(c, t, 1)                                   # 7
        assert fetch(c, t)["lso"] == 5
    b.restart(hard=True)
    with b.conn() as c:
        d = fetch(c, t)
        assert d["hw"] == 8 and d["lso"] == 5, d
        assert d["aborted"] == [(p1, 0)], d
        assert lso_latest(c, t, 1) == 5
        # Producer state came back: the coordinator epoch fences an old marker.
        assert marker(c, t, p1, commit=True, coordinator_epoch=4) == \
            kp.TRANSACTION_COORDINATOR_FENCED
        assert marker(c, t, p2, commit=True, coordinator_epoch=5) == 0  # 8
        d = fetch(c, t)
        assert d["lso"] == 9 and d["hw"] == 9, d
        # Every committed or plain record is visible; the aborted ones are flagged.
        assert len(values(d)) >= 5
    b.restart(hard=False)
    with b.conn() as c:
        d = fetch(c, t)
        assert d["lso"] == 9 and d["aborted"] == [(p1, 0)], d
