# SPDX-License-Identifier: Apache-2.0
"""Issue 16, safety 3, as processes: a transaction coordinator whose __transaction_state
partition has fallen below transaction.state.log.min.isr writes nothing. Three tallyd (all
controller voters) on loopback; __transaction_state has one partition, two replicas and
min.isr 2, so every transactional id maps to partition 0 and stopping its one follower
(SIGSTOP, until the leader drops it from the ISR) leaves the coordinator's leader alone while
a voter majority keeps the controller alive. Alone, the leader must refuse EndTxn and a new
id's InitProducerId with COORDINATOR_NOT_AVAILABLE (the coordinators' mapping of
NOT_ENOUGH_REPLICAS) and append nothing to the partition — a PrepareCommit that only the
lone leader holds would be lost with it. The answers alone cannot tell: a leader below its
minimum does not move its high watermark either, so an append it took anyway would time out
into the same COORDINATOR_NOT_AVAILABLE and sit in the log uncovered, replicated once the
follower returns; hence the check of the leader's segment files. The same property runs on
virtual time in tests/unit (txn_coord_refuses_to_write_below_min_isr)."""
import time

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

import cluster as clu
import harness
import kproto as kp
import test_txn_coordinator_raw as raw

TS = "__transaction_state"
TOPIC = "minisr-orders"
TID = "minisr-copier"
N = 20

SETTINGS = {
    "transaction.state.log.num.partitions": "1",
    "transaction.state.log.replication.factor": "2",
    "transaction.state.log.min.isr": "2",
    "replica.lag.time.max.ms": "2000",
}


@pytest.fixture
def cl(tmp_path, request):
    """The cluster, stopped (and checked for clean exits) afterwards; the nodes' logs are
    printed when the test fails."""
    yield from clu.serve(clu.Cluster(tmp_path / "cluster", 3, settings=SETTINGS), request)


def leader_log_end(cl, node):
    """The offset after the last batch in node's segment files of __transaction_state-0: what
    the leader appended, whether or not the high watermark covers it."""
    end = 0
    for _name, data in cl.replica_logs(TS, 0, node):
        for b in kp.parse_record_batches(data):
            end = b["last_offset"] + 1
    return end


def high_watermark(cl, node):
    err, _ts, off = harness.list_offset(cl[node], TS, 0)
    assert err == kp.NONE, "ListOffsets %s-0 on node %d: error %d" % (TS, node, err)
    return off


def wait_loaded(cl, node, tid):
    """DescribeTransactions on node until the coordinator's shard has loaded."""
    def loaded():
        with cl[node].conn() as c:
            d = raw.describe(c, tid)
        return d if d["ErrorCode"] in (kp.NONE, raw.TRANSACTIONAL_ID_NOT_FOUND) else None
    return clu.wait_for(loaded, 60, "the %s shard on node %d to load" % (TS, node))


def read_committed(bootstrap):
    """Every value of TOPIC-0 below its last stable offset, read with read_committed."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "minisr-reader",
                  "isolation.level": "read_committed", "enable.auto.commit": False,
                  "enable.partition.eof": True, "auto.offset.reset": "earliest",
                  "log_level": 0})
    got = []
    try:
        c.assign([TopicPartition(TOPIC, 0, 0)])
        deadline = time.monotonic() + 60
        while True:
            assert time.monotonic() < deadline, "read_committed stuck after %r" % got
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                if m.error().code() == KafkaError._PARTITION_EOF:
                    return got
                raise AssertionError(str(m.error()))
            got.append(m.value().decode())
    finally:
        c.close()


def test_lone_txn_coordinator_leader_appends_nothing_below_min_isr(cl):
    lead = cl.find_coordinator(TID, key_type=1)
    cl.wait_full_isr(TS, 1)
    st = cl.partition(TS, 0)
    assert st["leader"] == lead and len(st["replicas"]) == 2, st
    follower = next(r for r in st["replicas"] if r != lead)
    third = next(i for i in cl.ids if i not in st["replicas"])
    # The data partition is led by the coordinator's node and keeps two in sync while the
    # follower is stopped: only the coordinator's partition drops below its minimum.
    cl.create_topic(TOPIC, 1, 3, {"min.insync.replicas": "2"},
                    assignments={0: [lead, third, follower]})
    wait_loaded(cl, lead, TID)

    p = Producer({"bootstrap.servers": cl.bootstrap, "transactional.id": TID,
                  "transaction.timeout.ms": 60000, "linger.ms": 5, "log_level": 0})
    p.init_transactions(60)
    p.begin_transaction()
    for i in range(N):
        p.produce(TOPIC, value=b"txn-%d" % i, partition=0)
    assert p.flush(30) == 0
    with cl[lead].conn() as c:
        d = raw.describe(c, TID)
    assert d["TransactionState"] == "Ongoing", d
    pid, epoch = d["ProducerId"], d["ProducerEpoch"]

    cl.pause_node(follower)
    cl.wait_isr(TS, 0, [lead])
    end0, hw0 = leader_log_end(cl, lead), high_watermark(cl, lead)
    assert end0 == hw0, (end0, hw0)  # the records the follower got before it stopped

    # Below min ISR, as raw requests: EndTxn of the open transaction and InitProducerId of
    # a new transactional id (same partition: there is one) both need an append.
    with cl[lead].conn() as c:
        end_err = raw.end(c, TID, pid, epoch, True)
        init_rs = raw.init(c, "minisr-newcomer")
    # And through librdkafka, which retries COORDINATOR_NOT_AVAILABLE until its timeout.
    commit_err = None
    try:
        p.commit_transaction(6)
    except KafkaException as e:
        commit_err = e.args[0]
    with cl[lead].conn() as c:
        d_below = raw.describe(c, TID)
    end1, hw1 = leader_log_end(cl, lead), high_watermark(cl, lead)

    # The key property first: nothing reached the log, neither covered nor uncovered.
    assert (end1, hw1) == (end0, hw0), \
        "the lone leader appended to %s-0 below min ISR: log end %d -> %d, HW %d -> %d " \
        "(EndTxn %d, InitProducerId %d, commit_transaction %s)" % (
            TS, end0, end1, hw0, hw1, end_err, init_rs["ErrorCode"], commit_err)
    assert end_err == raw.COORDINATOR_NOT_AVAILABLE, end_err
    assert init_rs["ErrorCode"] == raw.COORDINATOR_NOT_AVAILABLE, init_rs
    assert commit_err is not None, "commit_transaction succeeded below min ISR"
    assert commit_err.retriable() and not commit_err.fatal() and \
        not commit_err.txn_requires_abort(), commit_err
    assert d_below["TransactionState"] == "Ongoing", d_below
    assert read_committed(cl.bootstrap) == []

    cl.resume_node(follower)
    cl.wait_isr(TS, 0, [lead, follower])
    p.commit_transaction(60)  # librdkafka's retry of the commit that timed out
    assert leader_log_end(cl, lead) > end0  # PrepareCommit (and CompleteCommit) now
    with cl[lead].conn() as c:
        raw.wait_state(c, TID, ("CompleteCommit",))
        rs = raw.init(c, "minisr-newcomer")
    assert rs["ErrorCode"] == kp.NONE, rs
    got = read_committed(cl.bootstrap)
    assert sorted(got) == sorted("txn-%d" % i for i in range(N)), got
