# SPDX-License-Identifier: Apache-2.0
"""Transactions end to end with a real client (confluent-kafka on librdkafka 2.0.2): the
KIP-98 properties, each a test.

  - aborted data is never returned to read_committed;
  - uncommitted data is not returned until its commit;
  - a committed transaction survives the broker dying (TALLY_TEST_FAULT, an _exit(137) at a
    named step of EndTxn) before Prepare, after Prepare, after the markers and before
    Complete: what was decided completes the way it was decided, a transaction that was not
    decided is aborted, and committed data is seen exactly once;
  - a second producer with the same transactional.id fences the first;
  - a transaction left open past transaction.timeout.ms is aborted by the coordinator;
  - transactional and plain producers interleaved on one partition: read_committed sees the
    plain records and the committed transactions in log order, never past the LSO;
  - hanging transactions heal themselves (txn:lose_entry), with one WARN line, but a
    committed transaction whose markers are late (txn:late_markers) is never torn by it;
  - the exactly-once copier check with confluent-kafka copiers (kill -9 and SIGSTOP).
"""
import os
import re
import subprocess
import sys
import time

import pytest
from confluent_kafka import KafkaError, KafkaException

import harness
import kproto as kp
import txn_lib
from txn_lib import SENTINEL, TXN_SETTINGS

PARTS = 3


def _topic(b, name, parts=PARTS):
    harness.create_topics(b, [(name, parts, None)])
    return name


def _values(read):
    return {p: [v for _o, v in recs] for p, recs in read.items()}


def test_aborted_data_never_read_committed(broker_factory):
    b = broker_factory(settings=TXN_SETTINGS)
    txn_lib.need_transactions(b)
    t = _topic(b, "txn-abort")
    p = txn_lib.txn_producer(b, "tid-abort")
    want = {part: [] for part in range(PARTS)}
    for k in range(6):
        p.begin_transaction()
        for part in range(PARTS):
            for i in range(5):
                p.produce(t, value=b"t%d-p%d-%d" % (k, part, i), partition=part)
        p.flush(30)
        if k % 2 == 0:
            p.commit_transaction(30)
            for part in range(PARTS):
                want[part] += [b"t%d-p%d-%d" % (k, part, i) for i in range(5)]
        else:
            p.abort_transaction(30)
    txn_lib.commit_sentinels(b, t, range(PARTS))
    assert _values(txn_lib.read_until_sentinel(b, t, list(range(PARTS)))) == want
    # The aborted records are in the log all the same.
    unc = _values(txn_lib.read_until_sentinel(b, t, list(range(PARTS)),
                                              isolation="read_uncommitted"))
    assert all(len(unc[part]) == 30 for part in range(PARTS)), unc


def test_uncommitted_not_returned_until_commit(broker_factory):
    b = broker_factory(settings=TXN_SETTINGS)
    txn_lib.need_transactions(b)
    t = _topic(b, "txn-pending", parts=1)
    plain = txn_lib.plain_producer(b)
    p = txn_lib.txn_producer(b, "tid-pending")
    p.begin_transaction()
    for i in range(10):
        p.produce(t, value=b"pending-%d" % i, partition=0)
    p.flush(30)
    after = txn_lib.produce_sync(plain, t, 0, b"plain-after")
    # read_committed stops at the LSO: the first offset of the open transaction.
    got = txn_lib.read_to_eof(b, t, [0])
    assert got == {0: []}, got
    unc = txn_lib.read_to_eof(b, t, [0], isolation="read_uncommitted")
    assert [v for _o, v in unc[0]] == [b"pending-%d" % i for i in range(10)] + [b"plain-after"]
    p.commit_transaction(30)
    txn_lib.eventually(
        lambda: [v for _o, v in txn_lib.read_to_eof(b, t, [0])[0]],
        [b"pending-%d" % i for i in range(10)] + [b"plain-after"], what="read_committed")
    assert txn_lib.read_to_eof(b, t, [0])[0][-1][0] == after


# A transactional producer in its own process, so that the test can make it vanish with the
# broker (a surviving librdkafka would retry EndTxn after the restart and decide for us).
CLIENT = r"""
import sys
from confluent_kafka import Producer
bs, tid, topic, parts, tag = sys.argv[1:6]
p = Producer({"bootstrap.servers": bs, "transactional.id": tid, "linger.ms": 5})
p.init_transactions(30)
p.begin_transaction()
for i in range(20):
    for part in range(int(parts)):
        p.produce(topic, value=b"%s-%d-%d" % (tag.encode(), part, i), partition=part)
p.flush(30)
print("flushed", flush=True)
p.commit_transaction(60)
print("committed", flush=True)
"""


def _txn_values(tag, parts=PARTS):
    return {part: [b"%s-%d-%d" % (tag, part, i) for i in range(20)] for part in range(parts)}


@pytest.mark.parametrize("point,decided", [
    ("txn:before_prepare", False),
    ("txn:after_prepare", True),
    ("txn:after_markers", True),
    ("txn:before_complete", True),
])
def test_commit_survives_broker_death_at_each_stage(broker_factory, monkeypatch, point,
                                                    decided):
    b = broker_factory(settings=TXN_SETTINGS)
    txn_lib.need_transactions(b)
    t = _topic(b, "txn-crash")
    tid = "tid-crash"
    # Transaction A commits normally.
    r = subprocess.run([sys.executable, "-c", CLIENT, b.bootstrap, tid, t, str(PARTS), "A"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "committed" in r.stdout, r.stderr[-3000:]
    b.stop()

    # Transaction B: the broker dies at `point` while committing it.
    monkeypatch.setenv("TALLY_TEST_FAULT", point)
    b.start()
    monkeypatch.delenv("TALLY_TEST_FAULT")
    client = subprocess.Popen([sys.executable, "-c", CLIENT, b.bootstrap, tid, t, str(PARTS),
                               "B"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        rc = b.proc.wait(timeout=90)
    except subprocess.TimeoutExpired:
        client.kill()
        out, err = client.communicate()
        raise AssertionError("the broker did not stop at %s; client: %s %s" % (
            point, out.decode(), err.decode()[-3000:]))
    client.kill()
    out, _err = client.communicate()
    assert rc == 137, "tallyd exited with %r, expected the fault's 137" % rc
    # Kafka answers EndTxn once Prepare* is durable, before the markers: past that point
    # the client may have been told "committed" before the broker died.
    assert b"flushed" in out and (decided or b"committed" not in out), out
    b.check_sanitizers()

    # Restart without the fault. A new instance of the same transactional.id waits for a
    # decided transaction to complete, or aborts an undecided one.
    b.start()
    p = txn_lib.txn_producer(b, tid)
    p.begin_transaction()
    for part in range(PARTS):
        p.produce(t, value=SENTINEL, partition=part)
    p.commit_transaction(60)
    got = _values(txn_lib.read_until_sentinel(b, t, list(range(PARTS))))
    a, bb = _txn_values(b"A"), _txn_values(b"B")
    want = {part: a[part] + (bb[part] if decided else []) for part in range(PARTS)}
    assert got == want, "after %s: read_committed %r" % (point, {k: len(v) for k, v in
                                                                got.items()})
    # B's records were written before the fault in every case.
    unc = _values(txn_lib.read_until_sentinel(b, t, list(range(PARTS)),
                                              isolation="read_uncommitted"))
    assert all(unc[part] == a[part] + bb[part] for part in range(PARTS))


def _is_fencing(err):
    return err.fatal() or err.code() in (KafkaError._FENCED, KafkaError.PRODUCER_FENCED,
                                         KafkaError.INVALID_PRODUCER_EPOCH)


def test_second_instance_fences_the_first(broker_factory):
    b = broker_factory(settings=TXN_SETTINGS)
    txn_lib.need_transactions(b)
    t = _topic(b, "txn-fence", parts=1)
    errors = []
    p1 = txn_lib.txn_producer(b, "tid-fence", error_cb=errors.append)
    p1.begin_transaction()
    p1.produce(t, value=b"zombie-1", partition=0)
    p1.flush(30)
    # The second instance bumps the epoch and aborts the first one's transaction.
    p2 = txn_lib.txn_producer(b, "tid-fence")
    p2.begin_transaction()
    p2.produce(t, value=b"live-1", partition=0)
    p2.commit_transaction(30)

    with pytest.raises(KafkaException) as ei:
        p1.produce(t, value=b"zombie-2", partition=0)
        p1.flush(10)
        p1.commit_transaction(30)
    assert _is_fencing(ei.value.args[0]), ei.value.args[0]
    assert ei.value.args[0].fatal(), "fencing must be fatal: %s" % ei.value.args[0]
    # Once fenced, the first instance can do nothing more.
    with pytest.raises(KafkaException):
        p1.begin_transaction()
    txn_lib.commit_sentinels(b, t, [0])
    assert _values(txn_lib.read_until_sentinel(b, t, [0])) == {0: [b"live-1"]}


def test_open_transaction_aborted_after_its_timeout(broker_factory):
    b = broker_factory(settings=TXN_SETTINGS)
    txn_lib.need_transactions(b)
    t = _topic(b, "txn-timeout", parts=1)
    p = txn_lib.txn_producer(b, "tid-timeout", **{"transaction.timeout.ms": 2000})
    p.begin_transaction()
    for i in range(5):
        p.produce(t, value=b"late-%d" % i, partition=0)
    p.flush(30)
    # A plain record after the open transaction becomes visible to read_committed only
    # when the coordinator aborts the transaction (the LSO moves past it).
    plain = txn_lib.plain_producer(b)
    txn_lib.produce_sync(plain, t, 0, SENTINEL)
    assert txn_lib.read_until_sentinel(b, t, [0], timeout=60) == {0: []}
    with pytest.raises(KafkaException):
        p.commit_transaction(30)


def test_interleaved_transactional_and_plain_in_log_order(broker_factory):
    b = broker_factory(settings=TXN_SETTINGS)
    txn_lib.need_transactions(b)
    t = _topic(b, "txn-mixed", parts=1)
    plain = txn_lib.plain_producer(b)
    tp = txn_lib.txn_producer(b, "tid-mixed")
    log = []  # (offset, value, visible_when_committed)

    def put_plain(v):
        log.append((txn_lib.produce_sync(plain, t, 0, v), v, "plain"))

    def put_txn(v, fate):
        log.append((txn_lib.produce_sync(tp, t, 0, v), v, fate))

    put_plain(b"p0")
    tp.begin_transaction()
    put_txn(b"t0", "commit")
    put_plain(b"p1")
    put_txn(b"t1", "commit")
    tp.commit_transaction(30)
    put_plain(b"p2")
    tp.begin_transaction()
    put_txn(b"t2", "abort")
    put_plain(b"p3")
    tp.abort_transaction(30)
    put_plain(b"p4")
    tp.begin_transaction()
    put_txn(b"t3", "open")
    put_plain(b"p5")
    put_txn(b"t4", "open")

    offsets = [o for o, _v, _f in log]
    assert offsets == sorted(offsets)
    lso = next(o for o, _v, f in log if f == "open")
    want = [(o, v) for o, v, f in log if f in ("plain", "commit") and o < lso]
    # (the ABORT marker follows EndTxn's answer: wait for it to move the LSO)
    txn_lib.eventually(lambda: txn_lib.read_to_eof(b, t, [0]), {0: want}, what="read_committed")

    tp.commit_transaction(30)
    want = [(o, v) for o, v, f in log if f != "abort"]
    txn_lib.eventually(lambda: txn_lib.read_to_eof(b, t, [0]), {0: want}, what="read_committed")


# The hanging-transaction threshold's margin and the late markers' hold in these tests (test
# builds only: TALLY_TEST_HANGING_MARGIN_MS, TALLY_TEST_LATE_MARKERS_MS; 60 s and 70 s else).
HANGING_MARGIN_MS = 8000
LATE_MARKERS_MS = 20000


def test_hanging_transaction_heals_itself(broker_factory, monkeypatch):
    """A transactional batch written while the coordinator lost the transaction's entry
    (txn:lose_entry) leaves an open transaction no coordinator will end. The partition
    leader aborts it once it is older than transaction.max.timeout.ms (plus the broker's
    margin: 60 s, 8 s in this test build), with one WARN line naming producer, partition and
    offset."""
    settings = dict(TXN_SETTINGS, **{"transaction.max.timeout.ms": "2000"})
    b = broker_factory(settings=settings, start=False)
    monkeypatch.setenv("TALLY_TEST_FAULT", "txn:lose_entry")
    monkeypatch.setenv("TALLY_TEST_HANGING_MARGIN_MS", str(HANGING_MARGIN_MS))
    b.start()
    monkeypatch.delenv("TALLY_TEST_FAULT")
    monkeypatch.delenv("TALLY_TEST_HANGING_MARGIN_MS")
    txn_lib.need_transactions(b)
    t = _topic(b, "txn-hanging", parts=1)
    client = subprocess.run([sys.executable, "-c", r"""
import sys
from confluent_kafka import Producer
p = Producer({"bootstrap.servers": sys.argv[1], "transactional.id": "tid-hang",
              "transaction.timeout.ms": 2000})
p.init_transactions(30)
p.begin_transaction()
for i in range(3):
    p.produce(sys.argv[2], value=b"hang-%d" % i, partition=0)
p.flush(30)
print("flushed", flush=True)
import os; os._exit(0)  # never ends the transaction
""", b.bootstrap, t], capture_output=True, text=True, timeout=60)
    assert "flushed" in client.stdout, client.stderr[-3000:]
    start = harness.list_offset(b, t, 0)
    plain = txn_lib.plain_producer(b)
    off = txn_lib.produce_sync(plain, t, 0, SENTINEL)
    assert off >= 3, (off, start)
    assert txn_lib.read_until_sentinel(b, t, [0], timeout=150) == {0: []}
    warns = [ln for ln in b.stderr_all().splitlines()
             if "WARN" in ln and "hanging" in ln and "txn-hanging-0" in ln]
    assert len(warns) == 1, warns
    assert re.search(r"producer \d+", warns[0]) and re.search(r"offset 0\b", warns[0]), warns


def test_commit_with_late_markers_is_not_torn_by_the_hanging_check(broker_factory, monkeypatch):
    """A committed transaction whose COMMIT markers are held back (txn:late_markers, as behind
    a leader the coordinator cannot reach) stays open on its partition well past the hanging
    threshold (transaction.max.timeout.ms + the margin: 2 s + 8 s in this test build, markers
    held 20 s, the check every 0.5 s). The partition leader asks the coordinator, which has it
    in PrepareCommit, so it is not aborted: once the markers land, read_committed sees every
    record, and no hanging-transaction WARN was logged."""
    settings = dict(TXN_SETTINGS, **{"transaction.max.timeout.ms": "2000"})
    b = broker_factory(settings=settings, start=False)
    monkeypatch.setenv("TALLY_TEST_FAULT", "txn:late_markers")
    monkeypatch.setenv("TALLY_TEST_HANGING_MARGIN_MS", str(HANGING_MARGIN_MS))
    monkeypatch.setenv("TALLY_TEST_LATE_MARKERS_MS", str(LATE_MARKERS_MS))
    b.start()
    monkeypatch.delenv("TALLY_TEST_FAULT")
    monkeypatch.delenv("TALLY_TEST_HANGING_MARGIN_MS")
    monkeypatch.delenv("TALLY_TEST_LATE_MARKERS_MS")
    txn_lib.need_transactions(b)
    t = _topic(b, "txn-late", parts=1)
    p = txn_lib.txn_producer(b, "tid-late", **{"transaction.timeout.ms": 2000})
    p.begin_transaction()
    for i in range(3):
        p.produce(t, value=b"late-%d" % i, partition=0)
    p.commit_transaction(30)  # answered once PrepareCommit is durable; the markers wait
    committed = time.monotonic()
    plain = txn_lib.plain_producer(b)
    assert txn_lib.produce_sync(plain, t, 0, SENTINEL) == 3
    got = txn_lib.read_until_sentinel(b, t, [0], timeout=150)
    waited = time.monotonic() - committed
    assert [v for _o, v in got[0]] == [b"late-0", b"late-1", b"late-2"], (got, waited)
    # The markers really were held past the threshold (else nothing was tested).
    assert waited * 1000 > 2000 + HANGING_MARGIN_MS, waited
    warns = [ln for ln in b.stderr_all().splitlines() if "WARN" in ln and "hanging" in ln]
    assert warns == [], warns


def test_copier_exactly_once_confluent_kafka(broker_factory, tmp_path):
    b = broker_factory(settings=TXN_SETTINGS)
    txn_lib.need_transactions(b)
    work = tmp_path / "copiers"
    os.makedirs(work)
    cmd = txn_lib.ck_copier_cmd(b, "ck-copiers", "ck-in", "ck-out")
    faults = txn_lib.copier_check(b, str(work), cmd, "ck-in", "ck-out", "ck-copiers",
                                  parts=3, per_part=1500, copiers=2, faults=4, seed=10)
    assert len(faults) == 4, faults


def _order_value(p, seq):
    return b"order=%d-%06d product=%d qty=%d" % (p, seq, seq % 11 + 1, seq % 5 + 1)


def _decode_enriched(value):
    m = re.match(rb"order=(\d+)-(\d+) product=(\d+) name=(\S+) qty=(\d+) unit_cents=(\d+) "
                 rb"total_cents=(\d+)$", value)
    assert m, value
    product, qty, unit, total = (int(m.group(k)) for k in (3, 5, 6, 7))
    assert total == unit * qty and (product == 11) == (m.group(4) == b"unknown"), value
    return int(m.group(1)), int(m.group(2))


def test_copier_exactly_once_enricher_example(broker_factory, tmp_path):
    """examples/enricher.c (built by make) in the copier check: orders joined with the
    product table, each exactly once, kill -9 and SIGSTOP at random."""
    enricher = os.path.join(harness.REPO, "build", "enricher")
    assert os.path.exists(enricher), "build/enricher not built (make)"
    b = broker_factory(settings=TXN_SETTINGS)
    txn_lib.need_transactions(b)
    work = tmp_path / "enrichers"
    os.makedirs(work)

    def cmd(i):
        return [enricher, "-b", b.bootstrap, "-g", "enrichers", "-i", "order_events",
                "-o", "enriched_orders", "-t", "enricher-%d" % i, "-n", "100", "-T", "100",
                "--txn-timeout", "5000"]

    faults = txn_lib.copier_check(b, str(work), cmd, "order_events", "enriched_orders",
                                  "enrichers", parts=3, per_part=1500, copiers=2, faults=4,
                                  seed=11, decode=_decode_enriched, value=_order_value)
    assert len(faults) == 4, faults


def test_many_pipelined_batches_per_transaction(broker_factory):
    """librdkafka keeps up to 5 Produce requests in flight per partition, from the first
    batch of each transaction on (the one the partition leader verifies with the
    coordinator, KIP-890): every transaction commits, nothing is out of sequence."""
    b = broker_factory(settings=TXN_SETTINGS)
    txn_lib.need_transactions(b)
    t = _topic(b, "txn-pipelined", parts=2)
    p = txn_lib.txn_producer(b, "tid-pipelined", **{"batch.size": 4096, "linger.ms": 0,
                                                    "max.in.flight.requests.per.connection": 5})
    value = b"x" * 1000
    for k in range(20):
        p.begin_transaction()
        for i in range(200):
            p.produce(t, value=value, key=b"%d-%d" % (k, i), partition=i % 2)
        p.commit_transaction(60)
    txn_lib.commit_sentinels(b, t, range(2))
    got = txn_lib.read_until_sentinel(b, t, [0, 1])
    assert [len(got[part]) for part in (0, 1)] == [2000, 2000]


def _call(c, api, version, body):
    corr = c.next_corr()
    c.send(kp.frame(kp.header(api, version, corr) + body))
    got, resp = c.recv_response()
    assert got == corr
    return kp.Reader(resp)


def _raw_transactions(b, t, partition, tid, txns, errors):
    """One raw transactional producer on partition: per transaction AddPartitionsToTxn,
    8 Produce requests of 64 records of 1 KiB (4 sent before any answer, 4 more once the
    first is answered), EndTxn commit."""
    try:
        with b.conn() as c:
            for _ in range(200):
                r = _call(c, 10, 1, kp.string(tid) + kp.i8(1))  # FindCoordinator v1
                r.i32()
                if r.i16() == 0:
                    break
                time.sleep(0.05)
            for _ in range(200):
                ip = c.init_producer_id(version=1, transactional_id=tid)
                if ip["error"] == 0:
                    break
                assert ip["error"] in (14, 15, 16, 51), ip
                time.sleep(0.05)
            pid, epoch, seq = ip["producer_id"], ip["producer_epoch"], 0
            value = b"v" * 1024
            for k in range(txns):
                for _ in range(500):  # AddPartitionsToTxn v1; 51 while the last completes
                    r = _call(c, 24, 1, kp.string(tid) + kp.i64(pid) + kp.i16(epoch) +
                              kp.array([t], lambda n: kp.string(n) +
                                       kp.array([partition], kp.i32)))
                    r.i32()
                    r.i32()
                    r.string()
                    r.i32()
                    r.i32()
                    err = r.i16()
                    if err != 51:
                        break
                    time.sleep(0.002)
                assert err == 0, "AddPartitionsToTxn: %d" % err
                corrs, frames = [], []
                for i in range(8):
                    batch = kp.record_batch([(None, value)] * 64, attributes=0x10,
                                            producer_id=pid, producer_epoch=epoch,
                                            base_sequence=seq)
                    seq += 64
                    corrs.append(c.next_corr())
                    frames.append(kp.produce_request(corrs[-1], {t: {partition: batch}},
                                                     transactional_id=tid))
                # As a pipelining client: four at once; when the first is answered (it was
                # verified), four more, while the other three may still be waiting.
                c.send(b"".join(frames[:4]))
                for i, corr in enumerate(corrs):
                    got, body = c.recv_response()
                    assert got == corr
                    res = kp.parse_produce(body, 3)[0][(t, partition)]
                    assert res["error"] == 0, "%s: transaction %d, request %d: %r" % (
                        tid, k, i, res)
                    if i == 0:
                        c.send(b"".join(frames[4:]))
                r = _call(c, 26, 1, kp.string(tid) + kp.i64(pid) + kp.i16(epoch) + kp.i8(1))
                r.i32()
                assert r.i16() == 0
    except Exception as e:  # noqa: B902 - reported by the test
        errors.append(e)


def test_pipelined_produce_from_the_first_batch_of_each_transaction(broker_factory):
    """Raw protocol, as clients with several requests in flight: 4 transactional producers
    at once, each on its partition; each transaction adds the partition, then 4 Produce
    requests go out before any answer, and 4 more once the first is answered. The first
    is the one the partition leader verifies with the coordinator (KIP-890); the three
    waiting on that verification must be appended before the later ones, which find the
    partition verified (else OUT_OF_ORDER_SEQUENCE_NUMBER, 45)."""
    import threading
    b = broker_factory(settings=TXN_SETTINGS)
    txn_lib.need_transactions(b)
    t = _topic(b, "txn-raw-pipelined", parts=4)
    errors = []
    ths = [threading.Thread(target=_raw_transactions,
                            args=(b, t, p, "tid-raw-%d" % p, 25, errors)) for p in range(4)]
    for th in ths:
        th.start()
    for th in ths:
        th.join(120)
    assert not errors, errors
    txn_lib.commit_sentinels(b, t, range(4))
    got = txn_lib.read_until_sentinel(b, t, list(range(4)))
    assert [len(got[p]) for p in range(4)] == [25 * 8 * 64] * 4
