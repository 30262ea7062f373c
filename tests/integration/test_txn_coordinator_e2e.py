# SPDX-License-Identifier: Apache-2.0
"""The transaction coordinator with a real transactional client (librdkafka through
confluent-kafka): commits and aborts across 3 partitions read back with read_committed and
read_uncommitted, a second instance fencing the first, and the broker killed (the test-only
fault hook, TALLY_TEST_FAULT: _exit(137) as kill -9) at each stage of a commit — before
Prepare, after Prepare before the markers, after the markers, before Complete — then
restarted: the transaction completes the way it was decided (aborted by the timeout when
Prepare was never written, committed otherwise). Each test first asserts that the broker
advertises WriteTxnMarkers (the partition side), so a dispatch table that lost it fails."""
import gc
import os
import time

import pytest

import harness
import kproto

TOPIC = "txo"
SETTINGS = {"transaction.state.log.num.partitions": "3",
            "transaction.abort.timed.out.transaction.cleanup.interval.ms": "500"}


def need_markers(b):
    with b.conn() as c:
        err, keys = c.api_versions(0)
    assert err == 0 and 27 in keys, "ApiVersions (error %d) lacks WriteTxnMarkers (27)" % err


def producer(b, tid, **extra):
    from confluent_kafka import Producer
    conf = {"bootstrap.servers": b.bootstrap, "transactional.id": tid,
            "transaction.timeout.ms": 10000, "linger.ms": 5}
    conf.update(extra)
    return Producer(conf)


def produce_all(p, tag, n=30):
    for i in range(n):
        p.produce(TOPIC, value=("%s-%d" % (tag, i)).encode(), partition=i % 3)
    p.flush(30)


def read(b, isolation):
    """Every value of the topic, read from the start up to the log end with `isolation`."""
    from confluent_kafka import Consumer, KafkaError, TopicPartition
    ends = harness.offsets(b, TOPIC, [0, 1, 2])
    c = Consumer(harness.consumer_conf(b, **{"isolation.level": isolation,
                                            "group.id": "reader-%s" % time.monotonic()}))
    got, eof = [], set()
    try:
        c.assign([TopicPartition(TOPIC, p, 0) for p in range(3)])
        deadline = time.monotonic() + 60
        while len(eof) < 3:
            assert time.monotonic() < deadline, "stuck: %r of %r" % (eof, ends)
            for m in c.consume(num_messages=1000, timeout=0.5):
                if m.error():
                    if m.error().code() == KafkaError._PARTITION_EOF:
                        eof.add(m.partition())
                        continue
                    raise AssertionError(str(m.error()))
                got.append(m.value().decode())
    finally:
        c.close()
    return sorted(got)


def values(tag, n=30):
    return sorted("%s-%d" % (tag, i) for i in range(n))


def start(broker_factory, fault=None):
    if fault:
        os.environ["TALLY_TEST_FAULT"] = fault
    try:
        b = broker_factory(settings=SETTINGS)
    finally:
        os.environ.pop("TALLY_TEST_FAULT", None)
    harness.create_topics(b, [(TOPIC, 3, None)])
    harness.wait_leaders(b, [TOPIC])
    return b


def wait_state(b, tid, states, timeout=60):
    import test_txn_coordinator_raw as raw
    deadline = time.monotonic() + timeout
    with b.conn() as c:
        while True:
            d = raw.describe(c, tid)
            if d["ErrorCode"] == 0 and d["TransactionState"] in states:
                return d
            assert time.monotonic() < deadline, d
            time.sleep(0.1)


def test_commit_and_abort_across_three_partitions(broker_factory):
    b = start(broker_factory)
    need_markers(b)
    p = producer(b, "tx-e2e")
    p.init_transactions(30)
    p.begin_transaction()
    produce_all(p, "kept1")
    p.commit_transaction(30)
    p.begin_transaction()
    produce_all(p, "dropped")
    p.abort_transaction(30)
    p.begin_transaction()
    produce_all(p, "kept2")
    p.commit_transaction(30)
    assert read(b, "read_committed") == sorted(values("kept1") + values("kept2"))
    assert read(b, "read_uncommitted") == sorted(values("kept1") + values("kept2") +
                                                 values("dropped"))
    wait_state(b, "tx-e2e", ("CompleteCommit",))


def test_second_instance_fences_the_first(broker_factory):
    from confluent_kafka import KafkaException
    b = start(broker_factory)
    need_markers(b)
    first = producer(b, "tx-fence")
    first.init_transactions(30)
    first.begin_transaction()
    produce_all(first, "zombie", 3)
    second = producer(b, "tx-fence")
    second.init_transactions(60)  # aborts the first's transaction, bumps the epoch
    second.begin_transaction()
    produce_all(second, "live", 3)
    second.commit_transaction(30)
    with pytest.raises(KafkaException) as e:
        produce_all(first, "zombie-again", 3)  # still in its (aborted) transaction
        first.commit_transaction(10)
    assert e.value.args[0].fatal() or "fenc" in str(e.value).lower(), e.value
    assert read(b, "read_committed") == values("live", 3)


@pytest.mark.parametrize("fault,committed", [
    ("txn:before_prepare", False),
    ("txn:after_prepare", True),
    ("txn:after_markers", True),
    ("txn:before_complete", True),
])
def test_kill_at_each_stage_completes_as_decided(broker_factory, fault, committed):
    b = start(broker_factory, fault)
    need_markers(b)
    tid = "tx-" + fault.split(":")[1]
    p = producer(b, tid, **{"message.timeout.ms": 10000})
    p.init_transactions(30)
    p.begin_transaction()
    produce_all(p, "staged")
    try:
        p.commit_transaction(5)
    except Exception:  # the broker died under the commit
        pass
    deadline = time.monotonic() + 30
    while b.alive():
        assert time.monotonic() < deadline, "the fault point %s was not reached" % fault
        time.sleep(0.05)
    assert b.proc.returncode == 137, b.proc.returncode
    assert ("exiting at " + fault) in b.stderr_all()
    if not committed:
        # Nothing was decided: with no client left to retry EndTxn, the restarted
        # coordinator aborts the transaction once it is past its timeout.
        p.purge()
        del p
        gc.collect()
        p = None
    b.start()
    harness.wait_leaders(b, [TOPIC])
    wait_state(b, tid, ("CompleteCommit",) if committed else ("CompleteAbort",))
    want = values("staged") if committed else []
    assert read(b, "read_committed") == want
