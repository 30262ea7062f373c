# SPDX-License-Identifier: Apache-2.0
"""The next transaction's AddPartitionsToTxn / AddOffsetsToTxn, sent right after EndTxn while
the previous transaction's markers are still being written, is held by the coordinator and
answered NONE once the transaction is CompleteCommit — not CONCURRENT_TRANSACTIONS, on which
clients back off (librdkafka: retry.backoff.ms) before the next transaction can start.

The markers are held back by the test-build fault txn:late_markers for LATE_MARKERS_MS (well
below the coordinator's hold bound, TXN_HOLD_MAX_MS = 5 s), so the request really arrives
while the coordinator is in PrepareCommit (checked with DescribeTransactions first)."""
import pytest

import harness
from test_txn_coordinator_raw import (ADD_OFFSETS, add, describe, end, init, need_markers,
                                      wait_txn_coordinator)

LATE_MARKERS_MS = 1500
SETTINGS = {"transaction.state.log.num.partitions": "1", "transaction.max.timeout.ms": "60000"}


@pytest.fixture(scope="module")
def lbroker(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("TALLY_TEST_FAULT", "txn:late_markers")
    mp.setenv("TALLY_TEST_LATE_MARKERS_MS", str(LATE_MARKERS_MS))
    b = harness.TallyBroker(tmp_path_factory.mktemp("txnheld"), settings=SETTINGS)
    try:
        b.start()
    finally:
        mp.undo()
    harness.create_topics(b, [("orders", 2, None)])
    harness.wait_leaders(b, ["orders"])
    wait_txn_coordinator(b, "held")
    yield b
    b.stop(check=True)


def _parts(d):
    return sorted((t["Topic"], p) for t in d["Topics"] for p in t["Partitions"])


def test_add_right_after_end_txn_waits_for_the_markers(lbroker):
    tid = "held"
    with lbroker.conn() as c:
        need_markers(c)
        rs = init(c, tid)
        assert rs["ErrorCode"] == 0, rs
        pid = rs["ProducerId"]
        assert add(c, tid, pid, 0, [("orders", 0)]) == {("orders", 0): 0}
        assert end(c, tid, pid, 0, True) == 0  # answered once PrepareCommit is durable
        d = describe(c, tid)
        assert d["TransactionState"] == "PrepareCommit", d  # the markers are being held
        # The next transaction: held until CompleteCommit, then it starts.
        assert add(c, tid, pid, 0, [("orders", 1)]) == {("orders", 1): 0}
        d = describe(c, tid)
        assert d["TransactionState"] == "Ongoing" and _parts(d) == [("orders", 1)], d
        # Again, with AddOffsetsToTxn first (send_offsets_to_transaction's order varies).
        assert end(c, tid, pid, 0, True) == 0
        assert describe(c, tid)["TransactionState"] == "PrepareCommit"
        rs = c.group(ADD_OFFSETS, 3, {"TransactionalId": tid, "ProducerId": pid,
                                      "ProducerEpoch": 0, "GroupId": "g"})
        assert rs["ErrorCode"] == 0, rs
        d = describe(c, tid)
        assert d["TransactionState"] == "Ongoing" and len(_parts(d)) == 1, d
        assert _parts(d)[0][0] == "__consumer_offsets", d
        assert end(c, tid, pid, 0, False) == 0
        # A fenced epoch is answered at once, held or not.
        assert add(c, tid, pid, 7, [("orders", 0)]) == {("orders", 0): 90}  # PRODUCER_FENCED
