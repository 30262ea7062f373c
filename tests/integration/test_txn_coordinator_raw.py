# SPDX-License-Identifier: Apache-2.0
"""The transaction coordinator driven with raw requests (schemas below, encoded by kproto's
generic walker): FindCoordinator key type 1 creates __transaction_state, InitProducerId with a
transactional id, AddPartitionsToTxn (v0-3 and v4 VerifyOnly), AddOffsetsToTxn, EndTxn,
DescribeTransactions, ListTransactions — each at its lowest and highest version — with Kafka's
error codes for bad input, and the coordinator's state surviving kill -9 (replay of
__transaction_state). Markers reaching partitions are the partition side's tests; where this
file needs them done it waits for Complete* only when the broker serves WriteTxnMarkers."""
import time

import pytest

import harness
import kproto

INIT_PRODUCER_ID, ADD_PARTITIONS, ADD_OFFSETS, END_TXN = 22, 24, 25, 26
WRITE_TXN_MARKERS = 27
DESCRIBE_TXNS, LIST_TXNS, FIND_COORDINATOR = 65, 66, 10

COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR = 14, 15, 16
UNKNOWN_TOPIC_OR_PARTITION, INVALID_REQUEST = 3, 42
INVALID_PRODUCER_EPOCH, INVALID_TXN_STATE, INVALID_PRODUCER_ID_MAPPING = 47, 48, 49
INVALID_TRANSACTION_TIMEOUT, CONCURRENT_TRANSACTIONS = 50, 51
OPERATION_NOT_ATTEMPTED, PRODUCER_FENCED, TRANSACTIONAL_ID_NOT_FOUND = 55, 90, 105

INF = kproto.INF
_APT_TOPIC = [("Name", "str", 0, INF), ("Partitions", ("array", "i32"), 0, INF)]
_APT_RESULT = [("Name", "str", 0, INF),
               ("ResultsByPartition", ("array", [("PartitionIndex", "i32", 0, INF),
                                                 ("PartitionErrorCode", "i16", 0, INF)]),
                0, INF)]
TXN_SCHEMAS = {
    INIT_PRODUCER_ID: ([("TransactionalId", "nstr", 0, INF),
                        ("TransactionTimeoutMs", "i32", 0, INF),
                        ("ProducerId", "i64", 3, INF), ("ProducerEpoch", "i16", 3, INF)],
                       [("ThrottleTimeMs", "i32", 0, INF), ("ErrorCode", "i16", 0, INF),
                        ("ProducerId", "i64", 0, INF), ("ProducerEpoch", "i16", 0, INF)]),
    ADD_PARTITIONS: ([("Transactions", ("array", [("TransactionalId", "str", 0, INF),
                                                  ("ProducerId", "i64", 0, INF),
                                                  ("ProducerEpoch", "i16", 0, INF),
                                                  ("VerifyOnly", "bool", 0, INF),
                                                  ("Topics", ("array", _APT_TOPIC), 0, INF)]),
                       4, INF),
                      ("V3AndBelowTransactionalId", "str", 0, 3),
                      ("V3AndBelowProducerId", "i64", 0, 3),
                      ("V3AndBelowProducerEpoch", "i16", 0, 3),
                      ("V3AndBelowTopics", ("array", _APT_TOPIC), 0, 3)],
                     [("ThrottleTimeMs", "i32", 0, INF), ("ErrorCode", "i16", 4, INF),
                      ("ResultsByTransaction", ("array", [("TransactionalId", "str", 0, INF),
                                                          ("TopicResults",
                                                           ("array", _APT_RESULT), 0, INF)]),
                       4, INF),
                      ("ResultsByTopicV3AndBelow", ("array", _APT_RESULT), 0, 3)]),
    ADD_OFFSETS: ([("TransactionalId", "str", 0, INF), ("ProducerId", "i64", 0, INF),
                   ("ProducerEpoch", "i16", 0, INF), ("GroupId", "str", 0, INF)],
                  [("ThrottleTimeMs", "i32", 0, INF), ("ErrorCode", "i16", 0, INF)]),
    END_TXN: ([("TransactionalId", "str", 0, INF), ("ProducerId", "i64", 0, INF),
               ("ProducerEpoch", "i16", 0, INF), ("Committed", "bool", 0, INF)],
              [("ThrottleTimeMs", "i32", 0, INF), ("ErrorCode", "i16", 0, INF)]),
    DESCRIBE_TXNS: ([("TransactionalIds", ("array", "str"), 0, INF)],
                    [("ThrottleTimeMs", "i32", 0, INF),
                     ("TransactionStates", ("array", [
                         ("ErrorCode", "i16", 0, INF), ("TransactionalId", "str", 0, INF),
                         ("TransactionState", "str", 0, INF),
                         ("TransactionTimeoutMs", "i32", 0, INF),
                         ("TransactionStartTimeMs", "i64", 0, INF),
                         ("ProducerId", "i64", 0, INF), ("ProducerEpoch", "i16", 0, INF),
                         ("Topics", ("array", [("Topic", "str", 0, INF),
                                               ("Partitions", ("array", "i32"), 0, INF)]),
                          0, INF)]), 0, INF)]),
    LIST_TXNS: ([("StateFilters", ("array", "str"), 0, INF),
                 ("ProducerIdFilters", ("array", "i64"), 0, INF)],
                [("ThrottleTimeMs", "i32", 0, INF), ("ErrorCode", "i16", 0, INF),
                 ("UnknownStateFilters", ("array", "str"), 0, INF),
                 ("TransactionStates", ("array", [("TransactionalId", "str", 0, INF),
                                                  ("ProducerId", "i64", 0, INF),
                                                  ("TransactionState", "str", 0, INF)]),
                  0, INF)]),
}
TXN_FLEXIBLE = {INIT_PRODUCER_ID: 2, ADD_PARTITIONS: 3, ADD_OFFSETS: 3, END_TXN: 3,
                DESCRIBE_TXNS: 0, LIST_TXNS: 0}
for _k, _s in TXN_SCHEMAS.items():
    kproto.GROUP_SCHEMAS.setdefault(_k, _s)
    kproto.GROUP_FLEXIBLE.setdefault(_k, TXN_FLEXIBLE[_k])

SETTINGS = {"transaction.state.log.num.partitions": "5", "transaction.max.timeout.ms": "60000"}


def find_txn(c, tid, version=3):
    rs = c.group(FIND_COORDINATOR, version, {"Key": tid, "KeyType": 1, "CoordinatorKeys": [tid]})
    return rs["Coordinators"][0] if version >= 4 else rs


def wait_txn_coordinator(b, tid, timeout=60):
    """FindCoordinator (type 1) until it names this broker — the first creates the topic —
    then DescribeTransactions until the id's shard has loaded."""
    deadline = time.monotonic() + timeout
    with b.conn() as c:
        while True:
            rs = find_txn(c, tid)
            if rs["ErrorCode"] == 0:
                assert rs["NodeId"] == b.node_id and rs["Port"] == b.port, rs
                break
            assert rs["ErrorCode"] == COORDINATOR_NOT_AVAILABLE, rs
            assert time.monotonic() < deadline, "no coordinator: %r" % rs
            time.sleep(0.1)
        while True:
            err = describe(c, tid)["ErrorCode"]
            if err in (0, TRANSACTIONAL_ID_NOT_FOUND):
                return
            assert err in (COORDINATOR_LOAD_IN_PROGRESS, NOT_COORDINATOR,
                           COORDINATOR_NOT_AVAILABLE), err
            assert time.monotonic() < deadline, "shard not loaded"
            time.sleep(0.1)


def init(c, tid, version=4, timeout_ms=30000, pid=-1, epoch=-1):
    return c.group(INIT_PRODUCER_ID, version, {"TransactionalId": tid,
                                               "TransactionTimeoutMs": timeout_ms,
                                               "ProducerId": pid, "ProducerEpoch": epoch})


def add(c, tid, pid, epoch, parts, version=3, verify=False):
    topics = {}
    for t, p in parts:
        topics.setdefault(t, []).append(p)
    topics = [{"Name": t, "Partitions": ps} for t, ps in topics.items()]
    if version >= 4:
        rs = c.group(ADD_PARTITIONS, version, {"Transactions": [{
            "TransactionalId": tid, "ProducerId": pid, "ProducerEpoch": epoch,
            "VerifyOnly": verify, "Topics": topics}]})
        assert rs["ErrorCode"] == 0, rs
        results = rs["ResultsByTransaction"][0]["TopicResults"]
    else:
        rs = c.group(ADD_PARTITIONS, version, {
            "V3AndBelowTransactionalId": tid, "V3AndBelowProducerId": pid,
            "V3AndBelowProducerEpoch": epoch, "V3AndBelowTopics": topics})
        results = rs["ResultsByTopicV3AndBelow"]
    return {(t["Name"], p["PartitionIndex"]): p["PartitionErrorCode"]
            for t in results for p in t["ResultsByPartition"]}


def end(c, tid, pid, epoch, commit, version=3):
    return c.group(END_TXN, version, {"TransactionalId": tid, "ProducerId": pid,
                                      "ProducerEpoch": epoch, "Committed": commit})["ErrorCode"]


def describe(c, tid):
    return c.group(DESCRIBE_TXNS, 0, {"TransactionalIds": [tid]})["TransactionStates"][0]


def need_markers(c):
    """Asserts that WriteTxnMarkers (the partition side) is advertised: it is served, so a
    dispatch table that lost it must fail these tests rather than skip their second half."""
    err, keys = c.api_versions(0)
    assert err == 0 and WRITE_TXN_MARKERS in keys, \
        "ApiVersions (error %d) lacks WriteTxnMarkers (%d)" % (err, WRITE_TXN_MARKERS)


def wait_state(c, tid, states, timeout=30):
    deadline = time.monotonic() + timeout
    while True:
        d = describe(c, tid)
        if d["TransactionState"] in states:
            return d
        assert time.monotonic() < deadline, d
        time.sleep(0.05)


@pytest.fixture(scope="module")
def tbroker(tmp_path_factory):
    b = harness.TallyBroker(tmp_path_factory.mktemp("txncoord"), settings=SETTINGS)
    b.start()
    harness.create_topics(b, [("orders", 3, None)])
    harness.wait_leaders(b, ["orders"])
    wait_txn_coordinator(b, "warm-up")
    yield b
    b.stop(check=True)


@pytest.mark.parametrize("v_init,v_add,v_end", [(0, 0, 0), (4, 3, 3)])
def test_transaction_lifecycle_at_lowest_and_highest_versions(tbroker, v_init, v_add, v_end):
    tid = "life-%d" % v_init
    wait_txn_coordinator(tbroker, tid)
    with tbroker.conn() as c:
        rs = init(c, tid, version=v_init)
        assert rs["ErrorCode"] == 0 and rs["ProducerEpoch"] == 0 and rs["ProducerId"] >= 0, rs
        pid = rs["ProducerId"]
        assert add(c, tid, pid, 0, [("orders", 0), ("orders", 2)], version=v_add) == \
            {("orders", 0): 0, ("orders", 2): 0}
        assert c.group(ADD_OFFSETS, v_add, {"TransactionalId": tid, "ProducerId": pid,
                                            "ProducerEpoch": 0, "GroupId": "g"})["ErrorCode"] == 0
        d = describe(c, tid)
        assert d["ErrorCode"] == 0 and d["TransactionState"] == "Ongoing", d
        assert d["ProducerId"] == pid and d["TransactionTimeoutMs"] == 30000, d
        parts = {(t["Topic"], p) for t in d["Topics"] for p in t["Partitions"]}
        assert ("orders", 0) in parts and ("orders", 2) in parts and len(parts) == 3, d
        rs = c.group(LIST_TXNS, 0, {"StateFilters": ["Ongoing", "Nope"], "ProducerIdFilters": []})
        assert rs["ErrorCode"] == 0 and rs["UnknownStateFilters"] == ["Nope"], rs
        assert tid in [s["TransactionalId"] for s in rs["TransactionStates"]], rs
        # KIP-890: the coordinator vouches for added partitions only.
        assert add(c, tid, pid, 0, [("orders", 0), ("orders", 1)], version=4, verify=True) == \
            {("orders", 0): 0, ("orders", 1): INVALID_TXN_STATE}
        assert end(c, tid, pid, 0, True, version=v_end) == 0
        d = describe(c, tid)
        assert d["TransactionState"] in ("PrepareCommit", "CompleteCommit"), d
        need_markers(c)
        wait_state(c, tid, ("CompleteCommit",))
        assert end(c, tid, pid, 0, True, version=v_end) == 0  # a retry
        assert end(c, tid, pid, 0, False, version=v_end) == INVALID_TXN_STATE


def test_bad_input_gets_kafkas_errors(tbroker):
    tid = "bad-input"
    wait_txn_coordinator(tbroker, tid)
    # One node coordinates every shard: once the id's shard has loaded, an unknown id gets its
    # real answer, never NOT_COORDINATOR.
    wait_txn_coordinator(tbroker, "never-seen")
    with tbroker.conn() as c:
        assert init(c, tid, timeout_ms=60001)["ErrorCode"] == INVALID_TRANSACTION_TIMEOUT
        assert init(c, tid, timeout_ms=0)["ErrorCode"] == INVALID_TRANSACTION_TIMEOUT
        assert init(c, "", timeout_ms=1000)["ErrorCode"] == INVALID_REQUEST
        assert end(c, "never-seen", 1, 0, True) == INVALID_PRODUCER_ID_MAPPING
        assert describe(c, "never-seen")["ErrorCode"] == TRANSACTIONAL_ID_NOT_FOUND
        rs = init(c, tid)
        assert rs["ErrorCode"] == 0, rs
        pid = rs["ProducerId"]
        assert end(c, tid, pid, 0, True) == INVALID_TXN_STATE  # no transaction
        assert add(c, tid, pid, 0, [("no-such-topic", 0)]) == \
            {("no-such-topic", 0): UNKNOWN_TOPIC_OR_PARTITION}
        assert add(c, tid, pid, 0, [("orders", 0), ("orders", 9)]) == \
            {("orders", 0): OPERATION_NOT_ATTEMPTED, ("orders", 9): UNKNOWN_TOPIC_OR_PARTITION}
        assert describe(c, tid)["TransactionState"] == "Empty"
        assert add(c, tid, pid + 1, 0, [("orders", 0)]) == {("orders", 0):
                                                            INVALID_PRODUCER_ID_MAPPING}
        assert add(c, tid, pid, 5, [("orders", 0)], version=3) == {("orders", 0): PRODUCER_FENCED}
        assert add(c, tid, pid, 5, [("orders", 0)], version=1) == \
            {("orders", 0): INVALID_PRODUCER_EPOCH}
        assert end(c, tid, pid, 5, True, version=3) == PRODUCER_FENCED
        assert end(c, tid, pid, 5, True, version=1) == INVALID_PRODUCER_EPOCH
        # KIP-360 with a stranger's id is fenced (INVALID_PRODUCER_EPOCH before v4).
        assert init(c, tid, version=4, pid=pid + 7, epoch=0)["ErrorCode"] == PRODUCER_FENCED
        assert init(c, tid, version=3, pid=pid + 7, epoch=0)["ErrorCode"] == \
            INVALID_PRODUCER_EPOCH
        # FindCoordinator v4 batches transactional ids too.
        rs = c.group(FIND_COORDINATOR, 4, {"KeyType": 1, "CoordinatorKeys": [tid, "other"]})
        assert [k["ErrorCode"] for k in rs["Coordinators"]] == [0, 0], rs


def test_second_instance_aborts_and_fences_the_first(tbroker):
    tid = "copier"
    wait_txn_coordinator(tbroker, tid)
    with tbroker.conn() as c:
        need_markers(c)
        rs = init(c, tid)
        pid = rs["ProducerId"]
        assert add(c, tid, pid, 0, [("orders", 1)]) == {("orders", 1): 0}
        assert init(c, tid)["ErrorCode"] == CONCURRENT_TRANSACTIONS
        deadline = time.monotonic() + 30
        while True:
            rs = init(c, tid)
            if rs["ErrorCode"] == 0:
                break
            assert rs["ErrorCode"] == CONCURRENT_TRANSACTIONS, rs
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert rs["ProducerId"] == pid and rs["ProducerEpoch"] == 2, rs
        assert describe(c, tid)["TransactionState"] == "Empty"
        assert end(c, tid, pid, 0, False) == PRODUCER_FENCED


def test_coordinator_state_survives_kill_9(broker_factory):
    b = broker_factory(settings=SETTINGS)
    harness.create_topics(b, [("orders", 3, None)])
    harness.wait_leaders(b, ["orders"])
    wait_txn_coordinator(b, "open")
    wait_txn_coordinator(b, "empty")
    with b.conn() as c:
        rs = init(c, "open", timeout_ms=50000)
        pid = rs["ProducerId"]
        assert add(c, "open", pid, 0, [("orders", 0), ("orders", 1)]) == \
            {("orders", 0): 0, ("orders", 1): 0}
        empty_pid = init(c, "empty")["ProducerId"]
    b.restart(hard=True)
    wait_txn_coordinator(b, "open")
    wait_txn_coordinator(b, "empty")
    with b.conn() as c:
        d = describe(c, "open")
        assert d["TransactionState"] == "Ongoing" and d["ProducerId"] == pid, d
        assert d["TransactionTimeoutMs"] == 50000, d
        assert sorted(p for t in d["Topics"] for p in t["Partitions"]) == [0, 1], d
        d = describe(c, "empty")
        assert d["TransactionState"] == "Empty" and d["ProducerId"] == empty_pid, d
        # The epoch goes on from where it was.
        rs = init(c, "empty")
        assert rs["ErrorCode"] == 0 and rs["ProducerEpoch"] == 1, rs
