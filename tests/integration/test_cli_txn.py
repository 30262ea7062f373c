# SPDX-License-Identifier: Apache-2.0
"""`tally transactions list|describe|find-hanging|abort` (kafka-transactions.sh, KIP-664)
and the HW / LSO / LSO holder columns of `tally topics describe`, against a broker with
transactions made by confluent-kafka, and a hanging transaction made by hand (a raw
transactional batch of a producer no coordinator knows, accepted because partition
verification is off)."""
import re

import harness
import kproto
import txn_lib
from txn_lib import SENTINEL, TXN_SETTINGS


def ok(r):
    assert r.returncode == 0, "rc=%d\nstdout:%s\nstderr:%s" % (r.returncode, r.stdout, r.stderr)
    return r.stdout


def rows(out):
    head, *lines = out.strip("\n").split("\n")
    cols = head.split("\t")
    return [dict(zip(cols, ln.split("\t"))) for ln in lines]


def test_list_and_describe(broker_factory):
    b = broker_factory(settings=TXN_SETTINGS)
    txn_lib.need_transactions(b)
    t = "cli-txn"
    harness.create_topics(b, [(t, 2, None)])
    done = txn_lib.txn_producer(b, "cli-done")
    done.begin_transaction()
    done.produce(t, value=b"x", partition=0)
    done.commit_transaction(30)
    open_ = txn_lib.txn_producer(b, "cli-open", **{"transaction.timeout.ms": 45000})
    open_.begin_transaction()
    open_.produce(t, value=b"y", partition=1)
    open_.flush(30)

    # EndTxn is answered once PrepareCommit is durable; CompleteCommit follows the markers.
    txn_lib.eventually(lambda: {r["TransactionalId"]: r["TransactionState"] for r in
                                rows(ok(b.tally("transactions", "list")))}.get("cli-done"),
                       "CompleteCommit", what="cli-done's state")
    got = {r["TransactionalId"]: r for r in rows(ok(b.tally("transactions", "list")))}
    assert got["cli-done"]["TransactionState"] == "CompleteCommit", got
    assert got["cli-open"]["TransactionState"] == "Ongoing", got
    assert got["cli-done"]["Coordinator"] == "1"
    ongoing = rows(ok(b.tally("transactions", "list", "--state", "Ongoing")))
    assert [r["TransactionalId"] for r in ongoing] == ["cli-open"], ongoing

    (d,) = rows(ok(b.tally("transactions", "describe", "cli-open")))
    assert d["TransactionalId"] == "cli-open" and d["TransactionState"] == "Ongoing", d
    assert d["TransactionTimeoutMs"] == "45000" and d["TopicPartitions"] == "%s-1" % t, d
    assert int(d["ProducerEpoch"]) >= 0 and int(d["TransactionDurationMs"]) >= 0, d
    assert d["ProducerId"] == got["cli-open"]["ProducerId"]

    # topics describe: partition 1's LSO is held back by cli-open's transaction.
    out = ok(b.tally("topics", "describe", t))
    p0 = next(ln for ln in out.splitlines() if "Partition: 0\t" in ln)
    p1 = next(ln for ln in out.splitlines() if "Partition: 1\t" in ln)
    assert re.search(r"\tHW: 2\tLSO: 2$", p0), p0  # the record and the COMMIT marker
    assert re.search(r"\tHW: 1\tLSO: 0\tLSOHeldBy: producer %s epoch \d+ transactional.id "
                     r"cli-open$" % d["ProducerId"], p1), p1

    open_.commit_transaction(30)
    (d,) = rows(ok(b.tally("transactions", "describe", "cli-open")))
    assert d["TransactionState"] in ("PrepareCommit", "CompleteCommit"), d

    def p1_offsets():
        line = next(ln for ln in ok(b.tally("topics", "describe", t)).splitlines()
                    if "Partition: 1\t" in ln)
        return line.split("Status: ok")[1]

    txn_lib.eventually(p1_offsets, "\tHW: 2\tLSO: 2", what="partition 1 after the commit")
    txn_lib.eventually(lambda: rows(ok(b.tally("transactions", "describe", "cli-open")))[0][
        "TransactionState"], "CompleteCommit", what="cli-open's state")
    (d,) = rows(ok(b.tally("transactions", "describe", "cli-open")))
    assert d["TransactionDurationMs"] == "None", d  # the age of open transactions only

    r = b.tally("transactions", "describe", "no-such-id")
    assert r.returncode == 1 and "not found" in r.stderr, r
    r = b.tally("transactions", "abort", "--topic", t)
    assert r.returncode == 2, r


def test_find_hanging_and_abort(broker_factory):
    b = broker_factory(settings=dict(TXN_SETTINGS, **{
        "transaction.partition.verification.enable": "false"}))
    txn_lib.need_apis(b, txn_lib.WRITE_TXN_MARKERS)
    t = "cli-hang"
    harness.create_topics(b, [(t, 1, None)])
    plain = txn_lib.plain_producer(b)
    for i in range(3):
        txn_lib.produce_sync(plain, t, 0, b"before-%d" % i)
    # A transactional batch from a producer id no coordinator has a transaction for.
    with b.conn() as c:
        ip = c.init_producer_id()
        assert ip["error"] == 0, ip
        batch = kproto.record_batch([(None, b"ghost-%d" % i) for i in range(2)],
                                    attributes=0x10, producer_id=ip["producer_id"],
                                    producer_epoch=ip["producer_epoch"], base_sequence=0)
        res = c.produce({t: {0: batch}}, transactional_id="ghost")
        assert res[(t, 0)]["error"] == 0, res
    txn_lib.produce_sync(plain, t, 0, SENTINEL)

    out = ok(b.tally("topics", "describe", t))
    assert re.search(r"\tHW: 6\tLSO: 3\tLSOHeldBy: producer %d epoch %d$" % (
        ip["producer_id"], ip["producer_epoch"]), out), out

    # Not older than the default 15 minutes: not listed; with 0 minutes it is.
    assert rows(ok(b.tally("transactions", "find-hanging"))) == []
    (h,) = rows(ok(b.tally("transactions", "find-hanging", "--broker", "1",
                           "--max-transaction-timeout", "0")))
    assert (h["Topic"], h["Partition"], h["ProducerId"], h["StartOffset"]) == (
        t, "0", str(ip["producer_id"]), "3"), h
    assert b.tally("transactions", "find-hanging", "--broker", "7").returncode == 1

    r = b.tally("transactions", "abort", "--topic", t, "--partition", "0", "--start-offset", "4")
    assert r.returncode == 1 and "no open transaction starts at offset 4" in r.stderr, r
    out = ok(b.tally("transactions", "abort", "--topic", t, "--partition", "0",
                     "--start-offset", "3"))
    assert "producer %d" % ip["producer_id"] in out

    # The LSO moved on; read_committed sees the plain records only.
    got = txn_lib.read_until_sentinel(b, t, [0])
    assert [v for _o, v in got[0]] == [b"before-%d" % i for i in range(3)]
    assert rows(ok(b.tally("transactions", "find-hanging", "--max-transaction-timeout",
                           "0"))) == []
    line = next(ln for ln in ok(b.tally("topics", "describe", t)).splitlines()
                if "Partition: 0\t" in ln)
    assert re.search(r"\tHW: 7\tLSO: 7$", line), line


def test_perf_produce_transactional_reports_its_commits(broker_factory):
    """`tally perf produce --transactional` says how many transactions it committed and what
    commit_transaction cost; the count is the broker's own count of EndTxn requests, and every
    record is there, committed, for a read_committed reader."""
    mport = harness.free_port()
    b = broker_factory(settings=dict(TXN_SETTINGS, **{"metrics.listener": "127.0.0.1:%d" % mport}))
    txn_lib.need_transactions(b)
    t = "perf-txn"
    harness.create_topics(b, [(t, 2, None)])
    out = ok(b.tally("perf", "produce", "--topic", t, "--records", "20000", "--record-size", "100",
                     "--throughput", "40000", "--transactional", "--transaction-duration-ms", "50",
                     timeout=120))
    lines = out.strip().splitlines()
    assert re.match(r"20000 records sent, [\d.]+ records/sec", lines[-2]), out
    m = re.match(r"(\d+) transactions committed, ([\d.]+) ms per commit_transaction \(flush and "
                 r"EndTxn\), ([\d.]+) ms max, ([\d.]+)% of the run$", lines[-1])
    assert m, out
    commits, avg, longest, share = int(m.group(1)), float(m.group(2)), float(m.group(3)), \
        float(m.group(4))
    # 20,000 records at 40,000/s take about half a second: about ten 50 ms transactions.
    assert 5 <= commits <= 12, out
    assert 0 < avg <= longest and 0 < share < 100, out
    endtxn = re.search(r'^tally_request_total_seconds_count\{api="EndTxn"\} (\d+)$',
                       harness.metrics_text(mport), re.M)
    assert endtxn and int(endtxn.group(1)) == commits, (out, endtxn and endtxn.group(0))
    # The last transaction's markers follow its EndTxn answer: until then the LSO holds back.
    txn_lib.eventually(lambda: sum(len(v) for v in txn_lib.read_to_eof(b, t, [0, 1]).values()),
                       20000, what="records a read_committed reader sees")
