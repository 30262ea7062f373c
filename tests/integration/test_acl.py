# SPDX-License-Identifier: Apache-2.0
"""ACLs with Kafka's StandardAuthorizer semantics (issue 17, third slice): one tallyd with the
authorizer on, a SASL_PLAINTEXT listener with PLAIN users admin (a super user), alice and bob,
and a PLAINTEXT listener (User:ANONYMOUS, the inter-broker principal, also a super user).

The table drives each API as alice (or bob) over SASL: without the ACL, the API's
authorization error and nothing changed (no record appended, no topic made or removed, no
offset committed, no epoch bumped); with it, it works. Then: super users, DENY over ALLOW,
PREFIXED patterns, topics hidden from Metadata, auto-creation needing CREATE, a transactional
producer that may not fence the owner of its transactional id, the ACL APIs through
kafka-python's admin client (confluent-kafka 1.7 here has no ACL calls), SECURITY_DISABLED
without an authorizer, and the ACLs after kill -9. The matching rules themselves are unit
tests (tests/unit/test_acl.c)."""
import os
import subprocess
import time

import pytest

import harness
import kproto

STANDARD = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required '
        'user_admin="admin-secret" user_alice="alice-secret" user_bob="bob-secret";')

TOPIC_AUTHORIZATION_FAILED = 29
GROUP_AUTHORIZATION_FAILED = 30
CLUSTER_AUTHORIZATION_FAILED = 31
TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53
SECURITY_DISABLED = 54

# Kafka's codes.
TOPIC, GROUP, CLUSTER, TXN_ID = 2, 3, 4, 5
LITERAL, PREFIXED = 3, 4
DENY, ALLOW = 2, 3
OPS = {"ALL": 2, "READ": 3, "WRITE": 4, "CREATE": 5, "DELETE": 6, "ALTER": 7, "DESCRIBE": 8,
       "CLUSTER_ACTION": 9, "DESCRIBE_CONFIGS": 10, "ALTER_CONFIGS": 11,
       "IDEMPOTENT_WRITE": 12}

FIND_COORDINATOR, OFFSET_COMMIT, OFFSET_FETCH, JOIN_GROUP, DELETE_GROUPS = 10, 8, 9, 11, 42

TOPICS = ["acl-produce", "acl-fetch", "acl-lo", "acl-md", "acl-del", "acl-cp", "acl-dc",
          "acl-ac", "acl-oc", "acl-dr", "acl-dp", "acl-deny-x", "acl-deny-y", "acl-pre-a",
          "acl-prex", "acl-hidden", "acl-txn", "acl-super", "acl-cli"]


@pytest.fixture(scope="module")
def b(tmp_path_factory):
    broker = harness.TallyBroker(tmp_path_factory.mktemp("acl"))
    broker.sasl_port = harness.free_port()
    broker.settings.update({
        "listeners": "PLAINTEXT://127.0.0.1:%d,SASL_PLAINTEXT://127.0.0.1:%d,"
                     "CONTROLLER://127.0.0.1:%d" % (broker.port, broker.sasl_port,
                                                    broker.controller_port),
        "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
        "authorizer.class.name": STANDARD,
        "super.users": "User:admin;User:ANONYMOUS",
        "transaction.state.log.num.partitions": "1",
        "offsets.topic.num.partitions": "1",
    })
    broker.start()
    harness.create_topics(broker, [(t, 1, None) for t in TOPICS])
    with broker.conn() as c:
        for key_type, key in ((0, "warm-up"), (1, "warm-up")):
            deadline = time.monotonic() + 30
            while c.group(FIND_COORDINATOR, 3, {"Key": key, "KeyType": key_type})[
                    "ErrorCode"] != 0:
                assert time.monotonic() < deadline
                time.sleep(0.1)
    yield broker
    broker.stop(check=True)


# ---- helpers ---------------------------------------------------------------------------

def sasl_conn(b, user):
    """A raw connection authenticated as `user` (SaslHandshake v1, SaslAuthenticate v1)."""
    c = kproto.Conn(b.sasl_port)
    corr = c.next_corr()
    c.send(kproto.frame(kproto.header(17, 1, corr) + kproto.string("PLAIN")))
    got, body = c.recv_response()
    assert got == corr and kproto.Reader(body).i16() == 0
    token = ("\0%s\0%s-secret" % (user, user)).encode()
    corr = c.next_corr()
    c.send(kproto.frame(kproto.header(36, 1, corr) + kproto.i32(len(token)) + token))
    got, body = c.recv_response()
    assert got == corr and kproto.Reader(body).i16() == 0, body
    return c


def kadmin(b, user):
    from kafka.admin import KafkaAdminClient
    return KafkaAdminClient(bootstrap_servers="127.0.0.1:%d" % b.sasl_port,
                            security_protocol="SASL_PLAINTEXT", sasl_mechanism="PLAIN",
                            sasl_plain_username=user, sasl_plain_password=user + "-secret",
                            request_timeout_ms=10000)


def create_acls(b, entries):
    """entries: (principal, resource type, name, operation, pattern, permission); created by
    the super user through CreateAcls v1 (kafka-python's admin client)."""
    from kafka.admin import (ACL, ACLOperation, ACLPermissionType, ACLResourcePatternType,
                             ResourcePattern, ResourceType)
    acls = [ACL(p, "*", ACLOperation(OPS[op]), ACLPermissionType(perm),
                ResourcePattern(ResourceType(rt), name, ACLResourcePatternType(pat)))
            for p, rt, name, op, pat, perm in entries]
    a = kadmin(b, "admin")
    try:
        res = a.create_acls(acls)
    finally:
        a.close()
    assert not res["failed"], res
    return res


def acl(principal, rtype, name, op, pattern=LITERAL, perm=ALLOW):
    return (principal, rtype, name, op, pattern, perm)


def log_end(b, topic):
    err, _ts, off = harness.list_offset(b, topic, 0)
    assert err == 0
    return off


def topic_exists(b, topic):
    with b.conn() as c:
        md = c.metadata([topic], version=4)  # v4: no auto-creation
    return md["topics"].get(topic, (3,))[0] == 0


def committed(b, group, topic):
    with b.conn() as c:
        rs = c.group(OFFSET_FETCH, 8, {"Groups": [{"GroupId": group, "Topics": [
            {"Name": topic, "PartitionIndexes": [0]}]}]})
    return rs["Groups"][0]["Topics"][0]["Partitions"][0]["CommittedOffset"]


def config_of(b, topic, key):
    with b.conn() as c:
        res = c.describe_configs([(kproto.RESOURCE_TOPIC, topic, [key])])
    return res[0]["configs"][key]["value"]


def one_batch(value=b"v"):
    return kproto.record_batch([(None, value)])


# ---- the table -------------------------------------------------------------------------
# Each row: the API, who calls it, the ACLs that let it work, the call (→ the error it
# answers, on a fresh connection), the error without them, and the state that must not change
# when refused (None: a read-only API), and what the call answers once granted (0 unless the
# row grants only the first of two permissions).

def produce(c):
    return c.produce({"acl-produce": {0: one_batch()}})[("acl-produce", 0)]["error"]


def fetch(c):
    return c.fetch({"acl-fetch": {0: 0}})["partitions"][("acl-fetch", 0)]["error"]


def list_offsets(c):
    return c.list_offsets({"acl-lo": {0: -1}})[("acl-lo", 0)][0]


def metadata_named(c):
    return c.metadata(["acl-md"], version=1)["topics"]["acl-md"][0]


def create_topic(c):
    return c.create_topics_v([("acl-new-1", 1, 1, None)])["acl-new-1"]["error"]


def delete_topic(c):
    return c.delete_topics(["acl-del"], version=5)[0]["error"]


def create_partitions(c):
    return c.create_partitions([("acl-cp", 2)])["acl-cp"][0]


def describe_configs(c):
    return c.describe_configs([(kproto.RESOURCE_TOPIC, "acl-dc", ["retention.ms"])])[0]["error"]


def alter_configs(c):
    res = c.incremental_alter_configs([(kproto.RESOURCE_TOPIC, "acl-ac",
                                        [("retention.ms", 0, "123456")])])
    return res[0][0]


def offset_commit(c):
    rs = c.group(OFFSET_COMMIT, 8, {
        "GroupId": "acl-g1", "GenerationIdOrMemberEpoch": -1, "MemberId": "",
        "Topics": [{"Name": "acl-oc", "Partitions": [
            {"PartitionIndex": 0, "CommittedOffset": 7, "CommittedMetadata": ""}]}]})
    return rs["Topics"][0]["Partitions"][0]["ErrorCode"]


def offset_fetch(c):
    rs = c.group(OFFSET_FETCH, 8, {"Groups": [{"GroupId": "acl-g1", "Topics": [
        {"Name": "acl-oc", "PartitionIndexes": [0]}]}]})
    g = rs["Groups"][0]
    return g["ErrorCode"] or g["Topics"][0]["Partitions"][0]["ErrorCode"]


def join_group(c):
    rs = c.group(JOIN_GROUP, 9, {
        "GroupId": "acl-g2", "SessionTimeoutMs": 10000, "RebalanceTimeoutMs": 10000,
        "MemberId": "", "GroupInstanceId": None, "ProtocolType": "consumer",
        "Protocols": [{"Name": "range", "Metadata": kproto.consumer_subscription(["x"])}],
        "Reason": "acl"})
    return 0 if rs["ErrorCode"] == 79 else rs["ErrorCode"]  # MEMBER_ID_REQUIRED: admitted


def find_coordinator(c):
    return c.group(FIND_COORDINATOR, 3, {"Key": "acl-g3", "KeyType": 0})["ErrorCode"]


def delete_group(c):
    rs = c.group(DELETE_GROUPS, 2, {"GroupsNames": ["acl-g1"]})
    return rs["Results"][0]["ErrorCode"]


def init_txn_id(c):
    return c.init_producer_id(version=3, transactional_id="acl-tx")["error"]


def init_idempotent(c):
    return c.init_producer_id(version=3)["error"]


def delete_records(c):
    return c.delete_records({"acl-dr": {0: 1}})[("acl-dr", 0)][0]


def describe_producers(c):
    return c.describe_producers({"acl-dp": [0]})[("acl-dp", 0)]["error"]


def describe_log_dirs(c):
    return c.describe_log_dirs(None)["error"]


def write_txn_markers(c):
    res = c.write_txn_markers([{"producer_id": 424242, "producer_epoch": 0, "commit": True,
                                "coordinator_epoch": 0, "topics": {"acl-produce": [0]}}])
    return res[(424242, "acl-produce", 0)]


def heartbeat(c):
    rs = c.group(12, 4, {"GroupId": "acl-g4", "GenerationId": 1, "MemberId": "m",
                         "GroupInstanceId": None})
    return 0 if rs["ErrorCode"] == 25 else rs["ErrorCode"]  # UNKNOWN_MEMBER_ID: admitted


def describe_groups(c):
    return c.group(15, 5, {"Groups": ["acl-g5"], "IncludeAuthorizedOperations": True})[
        "Groups"][0]["ErrorCode"]


def offset_delete(c):
    rs = c.group(47, 0, {"GroupId": "acl-g1", "Topics": [
        {"Name": "acl-oc", "Partitions": [{"PartitionIndex": 0}]}]})
    # GROUP_ID_NOT_FOUND once admitted: the group was deleted by the row before.
    return 0 if rs["ErrorCode"] == 69 else rs["ErrorCode"]


def elect_leaders(c):
    rs = c.group(43, 2, {"ElectionType": 0, "TopicPartitions": [
        {"Topic": "acl-produce", "Partitions": [0]}], "TimeoutMs": 5000})
    return rs["ErrorCode"]


def list_reassignments(c):
    return c.group(46, 0, {"TimeoutMs": 5000, "Topics": None})["ErrorCode"]


def raw_error(c, api_key, version, body):
    """Sends a classic (non-flexible) request; the answer's ErrorCode after ThrottleTimeMs."""
    corr = c.next_corr()
    c.send(kproto.frame(kproto.header(api_key, version, corr) + body))
    got, resp = c.recv_response()
    assert got == corr
    r = kproto.Reader(resp)
    r.i32()
    return r.i16()


def end_txn(c):
    # EndTxn v1: TransactionalId, ProducerId, ProducerEpoch, Committed.
    body = kproto.string("acl-tx2") + kproto.i64(4242) + kproto.i16(0) + kproto.i8(1)
    return raw_error(c, 26, 1, body)


def add_offsets_to_txn(c):
    # AddOffsetsToTxn v1: TransactionalId, ProducerId, ProducerEpoch, GroupId.
    body = (kproto.string("acl-tx2") + kproto.i64(4242) + kproto.i16(0) +
            kproto.string("acl-g6"))
    return raw_error(c, 25, 1, body)


def setup_offsets(b):
    with b.conn() as c:
        c.produce({"acl-oc": {0: one_batch()}})
        c.produce({"acl-dr": {0: kproto.record_batch([(None, b"a"), (None, b"b")])}})


ROWS = [
    ("produce", "alice", [acl("User:alice", TOPIC, "acl-produce", "WRITE")], produce,
     TOPIC_AUTHORIZATION_FAILED, lambda b: log_end(b, "acl-produce")),
    ("fetch", "alice", [acl("User:alice", TOPIC, "acl-fetch", "READ")], fetch,
     TOPIC_AUTHORIZATION_FAILED, None),
    ("list_offsets", "alice", [acl("User:alice", TOPIC, "acl-lo", "DESCRIBE")], list_offsets,
     TOPIC_AUTHORIZATION_FAILED, None),
    ("metadata", "alice", [acl("User:alice", TOPIC, "acl-md", "DESCRIBE")], metadata_named,
     TOPIC_AUTHORIZATION_FAILED, None),
    ("create_topics", "alice", [acl("User:alice", TOPIC, "acl-new-", "CREATE", PREFIXED)],
     create_topic, TOPIC_AUTHORIZATION_FAILED, lambda b: topic_exists(b, "acl-new-1")),
    ("delete_topics", "alice", [acl("User:alice", TOPIC, "acl-del", "DELETE")], delete_topic,
     TOPIC_AUTHORIZATION_FAILED, lambda b: topic_exists(b, "acl-del")),
    ("create_partitions", "alice", [acl("User:alice", TOPIC, "acl-cp", "ALTER")],
     create_partitions, TOPIC_AUTHORIZATION_FAILED,
     lambda b: len(harness.wait_leaders(b, ["acl-cp"])["topics"]["acl-cp"][2])),
    ("describe_configs", "alice", [acl("User:alice", TOPIC, "acl-dc", "DESCRIBE_CONFIGS")],
     describe_configs, TOPIC_AUTHORIZATION_FAILED, None),
    ("alter_configs", "alice", [acl("User:alice", TOPIC, "acl-ac", "ALTER_CONFIGS")],
     alter_configs, TOPIC_AUTHORIZATION_FAILED, lambda b: config_of(b, "acl-ac", "retention.ms")),
    ("offset_commit_group", "alice", [acl("User:alice", GROUP, "acl-g1", "READ")], offset_commit,
     GROUP_AUTHORIZATION_FAILED, lambda b: committed(b, "acl-g1", "acl-oc"),
     TOPIC_AUTHORIZATION_FAILED),
    # With READ on the group now, the topic's READ is what is missing.
    ("offset_commit_topic", "alice", [acl("User:alice", TOPIC, "acl-oc", "READ")], offset_commit,
     TOPIC_AUTHORIZATION_FAILED, lambda b: committed(b, "acl-g1", "acl-oc")),
    ("offset_fetch", "bob", [acl("User:bob", GROUP, "acl-g1", "DESCRIBE"),
                             acl("User:bob", TOPIC, "acl-oc", "DESCRIBE")], offset_fetch,
     GROUP_AUTHORIZATION_FAILED, None),
    ("join_group", "alice", [acl("User:alice", GROUP, "acl-g2", "READ")], join_group,
     GROUP_AUTHORIZATION_FAILED, None),
    ("find_coordinator", "alice", [acl("User:alice", GROUP, "acl-g3", "DESCRIBE")],
     find_coordinator, GROUP_AUTHORIZATION_FAILED, None),
    ("delete_groups", "alice", [acl("User:alice", GROUP, "acl-g1", "DELETE")], delete_group,
     GROUP_AUTHORIZATION_FAILED, lambda b: committed(b, "acl-g1", "acl-oc")),
    ("heartbeat", "alice", [acl("User:alice", GROUP, "acl-g4", "READ")], heartbeat,
     GROUP_AUTHORIZATION_FAILED, None),
    ("describe_groups", "alice", [acl("User:alice", GROUP, "acl-g5", "DESCRIBE")],
     describe_groups, GROUP_AUTHORIZATION_FAILED, None),
    ("offset_delete", "bob", [acl("User:bob", GROUP, "acl-g1", "DELETE")], offset_delete,
     GROUP_AUTHORIZATION_FAILED, None),
    # bob's DESCRIBE on the cluster first: his ALTER (below) would imply it.
    ("list_reassignments", "bob", [acl("User:bob", CLUSTER, "kafka-cluster", "DESCRIBE")],
     list_reassignments, CLUSTER_AUTHORIZATION_FAILED, None),
    ("elect_leaders", "bob", [acl("User:bob", CLUSTER, "kafka-cluster", "ALTER")],
     elect_leaders, CLUSTER_AUTHORIZATION_FAILED, None),
    # Granted WRITE on the id, EndTxn gets past the authorizer to the coordinator, which
    # knows no such producer (INVALID_PRODUCER_ID_MAPPING); AddOffsetsToTxn then needs READ
    # on the group.
    ("end_txn", "bob", [acl("User:bob", TXN_ID, "acl-tx2", "WRITE")], end_txn,
     TRANSACTIONAL_ID_AUTHORIZATION_FAILED, None, 49),
    ("add_offsets_to_txn", "alice", [acl("User:alice", TXN_ID, "acl-tx2", "WRITE")],
     add_offsets_to_txn, TRANSACTIONAL_ID_AUTHORIZATION_FAILED, None,
     GROUP_AUTHORIZATION_FAILED),
    ("init_producer_id_txn", "alice", [acl("User:alice", TXN_ID, "acl-tx", "WRITE")],
     init_txn_id, TRANSACTIONAL_ID_AUTHORIZATION_FAILED, None),
    # bob may write no topic yet: he needs IDEMPOTENT_WRITE on the cluster.
    ("init_producer_id_idempotent", "bob",
     [acl("User:bob", CLUSTER, "kafka-cluster", "IDEMPOTENT_WRITE")], init_idempotent,
     CLUSTER_AUTHORIZATION_FAILED, None),
    ("delete_records", "alice", [acl("User:alice", TOPIC, "acl-dr", "DELETE")], delete_records,
     TOPIC_AUTHORIZATION_FAILED, lambda b: harness.list_offset(b, "acl-dr", 0, ts=-2)[2]),
    ("describe_producers", "alice", [acl("User:alice", TOPIC, "acl-dp", "READ")],
     describe_producers, TOPIC_AUTHORIZATION_FAILED, None),
    ("describe_log_dirs", "alice", [acl("User:alice", CLUSTER, "kafka-cluster", "DESCRIBE")],
     describe_log_dirs, CLUSTER_AUTHORIZATION_FAILED, None),
    # A broker-internal API: only refused here (no client should ever be granted it).
    ("write_txn_markers", "bob", None, write_txn_markers, CLUSTER_AUTHORIZATION_FAILED,
     lambda b: log_end(b, "acl-produce")),
]


@pytest.mark.parametrize("row", ROWS, ids=[r[0] for r in ROWS])
def test_api_refused_without_its_acl_and_served_with_it(b, row):
    name, user, grants, call, refusal, state = row[:6]
    then = row[6] if len(row) > 6 else 0
    if name == "offset_commit_group":
        setup_offsets(b)
    before = state(b) if state else None
    with sasl_conn(b, user) as c:
        assert call(c) == refusal, name
    if state:
        assert state(b) == before, "%s changed state while refused" % name
    if grants is None:
        return
    create_acls(b, grants)
    with sasl_conn(b, user) as c:
        assert call(c) == then, name
    if name == "produce":
        assert log_end(b, "acl-produce") == before + 1
    if name == "create_topics":
        assert topic_exists(b, "acl-new-1")


def test_denial_is_logged_in_kafka_style(b):
    text = b.stderr_all()
    assert ("Principal = User:alice is Denied operation = Write from host = 127.0.0.1 on "
            "resource = Topic:LITERAL:acl-produce for request = Produce") in text


def test_super_user_bypasses_acls(b):
    before = log_end(b, "acl-super")
    with sasl_conn(b, "admin") as c:
        assert c.produce({"acl-super": {0: one_batch()}})[("acl-super", 0)]["error"] == 0
    assert log_end(b, "acl-super") == before + 1


def test_deny_beats_allow(b):
    # The ALLOWs name the topics themselves, the DENY comes through a prefix.
    create_acls(b, [acl("User:bob", TOPIC, "acl-deny-x", "ALL"),
                    acl("User:bob", TOPIC, "acl-deny-y", "ALL"),
                    acl("User:bob", TOPIC, "acl-deny-x", "WRITE", PREFIXED, DENY)])
    x, y = log_end(b, "acl-deny-x"), log_end(b, "acl-deny-y")
    with sasl_conn(b, "bob") as c:
        res = c.produce({"acl-deny-x": {0: one_batch()}, "acl-deny-y": {0: one_batch()}})
        assert res[("acl-deny-x", 0)]["error"] == TOPIC_AUTHORIZATION_FAILED
        assert res[("acl-deny-y", 0)]["error"] == 0
        # READ on it is still allowed: the DENY names WRITE only.
        assert fetch_error(c, "acl-deny-x") == 0
    assert (log_end(b, "acl-deny-x"), log_end(b, "acl-deny-y")) == (x, y + 1)


def fetch_error(c, topic):
    return c.fetch({topic: {0: 0}})["partitions"][(topic, 0)]["error"]


def test_prefixed_acl_matches_names_that_start_with_it(b):
    create_acls(b, [acl("User:alice", TOPIC, "acl-pre-", "READ", PREFIXED)])
    with sasl_conn(b, "alice") as c:
        assert fetch_error(c, "acl-pre-a") == 0
        assert fetch_error(c, "acl-prex") == TOPIC_AUTHORIZATION_FAILED


def test_metadata_lists_only_topics_the_principal_may_describe(b):
    with sasl_conn(b, "alice") as c:
        alice = set(c.metadata(None, version=1)["topics"])
    with sasl_conn(b, "admin") as c:
        admin = set(c.metadata(None, version=1)["topics"])
    assert "acl-hidden" in admin and "acl-hidden" not in alice
    # WRITE implies DESCRIBE; a prefix covers what it starts.
    assert {"acl-produce", "acl-md", "acl-pre-a"} <= alice
    assert "acl-prex" not in alice


def test_authorized_operations_are_the_principals(b):
    bit = {op: 1 << OPS[op] for op in OPS}
    with sasl_conn(b, "alice") as c:
        md = c.metadata_ops(["acl-produce"], version=8, cluster_ops=True, topic_ops=True)
    (t,) = md["topics"]
    # alice may WRITE acl-produce (so DESCRIBE it), nothing else of it; on the cluster only
    # DESCRIBE (granted in the table for DescribeLogDirs).
    assert t["authorized_operations"] == bit["WRITE"] | bit["DESCRIBE"], t
    assert md["cluster_authorized_operations"] == bit["DESCRIBE"], md
    with sasl_conn(b, "admin") as c:
        md = c.metadata_ops(["acl-produce"], version=8, cluster_ops=True, topic_ops=True)
    assert md["topics"][0]["authorized_operations"] == 3576  # a super user: every operation


def test_auto_creation_needs_create(b):
    with sasl_conn(b, "alice") as c:
        md = c.metadata(["acl-auto-1"], version=4, allow_auto_create=True)
        assert md["topics"]["acl-auto-1"][0] == TOPIC_AUTHORIZATION_FAILED
    assert not topic_exists(b, "acl-auto-1")
    create_acls(b, [acl("User:alice", TOPIC, "acl-auto-", "CREATE", PREFIXED),
                    acl("User:alice", TOPIC, "acl-auto-", "DESCRIBE", PREFIXED)])
    with sasl_conn(b, "alice") as c:
        md = c.metadata(["acl-auto-1"], version=4, allow_auto_create=True)
        assert md["topics"]["acl-auto-1"][0] in (0, kproto.LEADER_NOT_AVAILABLE)
    harness.wait_leaders(b, ["acl-auto-1"])


def conf(b, user, **extra):
    c = {"bootstrap.servers": "127.0.0.1:%d" % b.sasl_port,
         "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
         "sasl.username": user, "sasl.password": user + "-secret"}
    c.update(extra)
    return c


def test_intruder_without_write_on_the_transactional_id_cannot_fence_its_owner(b):
    from confluent_kafka import KafkaException, Producer
    # bob may DESCRIBE the id (FindCoordinator answers him), not WRITE it (InitProducerId).
    create_acls(b, [acl("User:alice", TXN_ID, "acl-owner", "WRITE"),
                    acl("User:alice", TOPIC, "acl-txn", "WRITE"),
                    acl("User:bob", TXN_ID, "acl-owner", "DESCRIBE")])
    owner = Producer(conf(b, "alice", **{"transactional.id": "acl-owner"}))
    owner.init_transactions(20)
    owner.begin_transaction()
    owner.produce("acl-txn", b"owned")
    owner.flush(10)
    intruder = Producer(conf(b, "bob", **{"transactional.id": "acl-owner"}))
    with pytest.raises(KafkaException) as e:
        intruder.init_transactions(10)
    assert "TRANSACTIONAL_ID_AUTHORIZATION_FAILED" in str(e.value) or \
        "authoriz" in str(e.value).lower(), e.value
    owner.commit_transaction(20)
    # The committed record is there for a read_committed reader.
    with b.conn() as c:
        res = c.fetch({"acl-txn": {0: 0}}, isolation=1)["partitions"][("acl-txn", 0)]
    assert res["error"] == 0
    batches = kproto.parse_record_batches(res["records"])
    data = [r[3] for x in batches if not x["attributes"] & 0x20 for r in x["records"]]
    assert data == [b"owned"]
    assert [x["attributes"] & 0x20 for x in batches][-1], "no COMMIT marker after the record"
    assert "Denied operation = Write from host = 127.0.0.1 on resource = " \
        "TransactionalId:LITERAL:acl-owner for request = InitProducerId" in b.stderr_all()


def test_acl_apis_through_kafka_python(b):
    from kafka.admin import (ACL, ACLFilter, ACLOperation, ACLPermissionType,
                             ACLResourcePatternType, ResourcePattern, ResourcePatternFilter,
                             ResourceType)
    from kafka.errors import ClusterAuthorizationFailedError
    pattern = ResourcePattern(ResourceType.GROUP, "acl-api", ACLResourcePatternType.LITERAL)
    entry = ACL("User:bob", "10.1.2.3", ACLOperation.READ, ACLPermissionType.ALLOW, pattern)
    any_group = ACLFilter(None, None, ACLOperation.ANY, ACLPermissionType.ANY,
                          ResourcePatternFilter(ResourceType.GROUP, "acl-api",
                                                ACLResourcePatternType.ANY))
    alice = kadmin(b, "alice")
    try:
        res = alice.create_acls([entry])
        assert res["failed"] and res["failed"][0][1] is ClusterAuthorizationFailedError
    finally:
        alice.close()
    a = kadmin(b, "admin")
    try:
        assert a.describe_acls(any_group)[0] == []
        assert not a.create_acls([entry])["failed"]
        assert not a.create_acls([entry])["failed"]  # the same binding again: one entry
        got = a.describe_acls(any_group)[0]
        assert [(x.principal, x.host, x.operation) for x in got] == \
            [("User:bob", "10.1.2.3", ACLOperation.READ)]
        deleted = a.delete_acls([any_group])[0][1]
        assert [x[0].principal for x in deleted] == ["User:bob"]
        assert a.describe_acls(any_group)[0] == []
    finally:
        a.close()


def test_acl_apis_answer_security_disabled_without_an_authorizer(shared_broker):
    from kafka.admin import (ACL, ACLOperation, ACLPermissionType, ACLResourcePatternType,
                             KafkaAdminClient, ResourcePattern, ResourceType)
    from kafka.errors import SecurityDisabledError
    a = KafkaAdminClient(bootstrap_servers=shared_broker.bootstrap)
    try:
        res = a.create_acls([ACL("User:bob", "*", ACLOperation.READ, ACLPermissionType.ALLOW,
                                 ResourcePattern(ResourceType.TOPIC, "t",
                                                 ACLResourcePatternType.LITERAL))])
    finally:
        a.close()
    assert res["failed"] and res["failed"][0][1] is SecurityDisabledError


def test_an_unknown_authorizer_class_stops_the_start(tmp_path):
    broker = harness.TallyBroker(tmp_path / "bad", settings={
        "authorizer.class.name": "com.example.MyAuthorizer"})
    broker.start(wait=False)
    assert broker.proc.wait(30) != 0
    assert "authorizer.class.name" in broker.stderr_all()


def tally(*args):
    return subprocess.run([harness.TALLY] + list(args), capture_output=True, text=True,
                          timeout=60)


def test_tally_acls_and_kafka_acls_sh(b, tmp_path):
    bs = ["-b", b.bootstrap]  # PLAINTEXT: User:ANONYMOUS, a super user here
    r = tally(*bs, "acls", "add", "--allow-principal", "User:alice", "--operation", "Read",
              "--topic", "acl-cli", "--group", "acl-cli-g")
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("Adding ACL for resource") == 2
    r = tally(*bs, "acls", "add", "--allow-principal", "User:alice", "--operation", "Write",
              "--transactional-id", "acl-cli-", "--resource-pattern-type", "prefixed")
    assert r.returncode == 0, r.stderr
    with sasl_conn(b, "alice") as c:
        assert fetch_error(c, "acl-cli") == 0
        assert c.init_producer_id(version=3, transactional_id="acl-cli-1")["error"] == 0
    # kafka-acls.sh by its name, Kafka's listing format.
    link = tmp_path / "kafka-acls.sh"
    os.symlink(os.path.abspath(harness.TALLY), str(link))
    r = subprocess.run([str(link), "--bootstrap-server", b.bootstrap, "--list", "--topic",
                        "acl-cli"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert ("Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=acl-cli, "
            "patternType=LITERAL)`:") in r.stdout
    assert "(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)" in r.stdout
    r = tally(*bs, "acls", "list", "--transactional-id", "acl-cli-", "--resource-pattern-type",
              "prefixed")
    assert "resourceType=TRANSACTIONAL_ID, name=acl-cli-, patternType=PREFIXED" in r.stdout
    r = subprocess.run([str(link), "--bootstrap-server", b.bootstrap, "--remove", "--force",
                        "--allow-principal", "User:alice", "--operation", "Read", "--topic",
                        "acl-cli"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "Removed ACL" in r.stdout
    with sasl_conn(b, "alice") as c:
        assert fetch_error(c, "acl-cli") == TOPIC_AUTHORIZATION_FAILED
    r = tally(*bs, "acls", "list", "--topic", "acl-cli")
    assert r.returncode == 0 and "principal=" not in r.stdout, r.stdout
    # A principal that is not <type>:<name> is refused by the broker, and the tool says why.
    r = tally(*bs, "acls", "add", "--allow-principal", "alice", "--topic", "acl-cli")
    assert r.returncode == 1 and "INVALID_REQUEST" in r.stderr, r.stderr


def describe_all(b):
    from kafka.admin import (ACLFilter, ACLOperation, ACLPermissionType,
                             ACLResourcePatternType, ResourcePatternFilter, ResourceType)
    a = kadmin(b, "admin")
    try:
        got, _err = a.describe_acls(ACLFilter(None, None, ACLOperation.ANY, ACLPermissionType.ANY,
                                              ResourcePatternFilter(ResourceType.ANY, None,
                                                                    ACLResourcePatternType.ANY)))
    finally:
        a.close()
    return sorted((x.principal, x.host, int(x.operation), int(x.permission_type),
                   int(x.resource_pattern.resource_type), x.resource_pattern.resource_name,
                   int(x.resource_pattern.pattern_type)) for x in got)


def test_acls_survive_kill_9(b):
    before = describe_all(b)
    assert len(before) >= 20
    b.kill()
    b.start()
    assert describe_all(b) == before
    # And they still decide: alice's WRITE on acl-produce came back with the rest.
    with sasl_conn(b, "alice") as c:
        assert produce(c) == 0
    with sasl_conn(b, "bob") as c:
        assert produce(c) == TOPIC_AUTHORIZATION_FAILED


# ---- forwarding: a broker that is not the controller checks its client first -------------

def create_acls_raw(c, entries):
    """CreateAcls v1 on a raw connection → [error per entry]."""
    body = kproto.array(entries, lambda e: (
        kproto.i8(e[1]) + kproto.string(e[2]) + kproto.i8(e[4]) + kproto.string(e[0]) +
        kproto.string("*") + kproto.i8(OPS[e[3]]) + kproto.i8(e[5])))
    corr = c.next_corr()
    c.send(kproto.frame(kproto.header(30, 1, corr) + body))
    got, resp = c.recv_response()
    assert got == corr
    r = kproto.Reader(resp)
    r.i32()
    return r.array(lambda rr: (rr.i16(), rr.string())[0])


def test_forwarded_requests_are_authorized_on_the_forwarding_broker(tmp_path):
    nodes = [harness.TallyBroker(tmp_path / ("n%d" % i), node_id=i) for i in (1, 2)]
    quorum = ",".join("%d@127.0.0.1:%d" % (n.node_id, n.controller_port) for n in nodes)
    for n in nodes:
        n.sasl_port = harness.free_port()
        n.settings.update({
            "listeners": "PLAINTEXT://127.0.0.1:%d,SASL_PLAINTEXT://127.0.0.1:%d,"
                         "CONTROLLER://127.0.0.1:%d" % (n.port, n.sasl_port, n.controller_port),
            "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN",
            "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
            "authorizer.class.name": STANDARD,
            "super.users": "User:admin;User:ANONYMOUS",
            "controller.quorum.voters": quorum, "cluster.id": "testAclForwarding01",
        })
    try:
        for n in nodes:
            n.start(wait=False)
        for n in nodes:
            n.wait_ready(60)
        with nodes[0].conn() as c:
            ctl = c.metadata(None, version=1)["controller_id"]
        other = nodes[0] if ctl == 2 else nodes[1]
        with sasl_conn(other, "alice") as c:
            res = c.create_topics_v([("acl-fwd-1", 1, 1, None)])
            assert res["acl-fwd-1"]["error"] == TOPIC_AUTHORIZATION_FAILED
            assert create_acls_raw(c, [acl("User:alice", TOPIC, "acl-fwd-", "CREATE",
                                           PREFIXED)]) == [CLUSTER_AUTHORIZATION_FAILED]
        assert not topic_exists(other, "acl-fwd-1")
        with sasl_conn(other, "admin") as c:  # forwarded to the controller
            assert create_acls_raw(c, [acl("User:alice", TOPIC, "acl-fwd-", "CREATE",
                                           PREFIXED)]) == [0]
        deadline = time.monotonic() + 30
        while True:  # the forwarding broker applies the ACL once the controller committed it
            with sasl_conn(other, "alice") as c:
                err = c.create_topics_v([("acl-fwd-1", 1, 1, None)])["acl-fwd-1"]["error"]
            if err != TOPIC_AUTHORIZATION_FAILED or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert err == 0
        while not topic_exists(other, "acl-fwd-1"):  # created by the controller
            assert time.monotonic() < deadline, "acl-fwd-1 never showed up"
            time.sleep(0.1)
    finally:
        for n in nodes:
            n.stop(check=False)


# ---- KIP-590's Envelope -----------------------------------------------------------------

ENVELOPE = 58
PRINCIPAL_DESERIALIZATION_FAILURE = 97


def _compact_bytes(data):
    return kproto.uvarint(len(data) + 1) + data


def principal_data(type_, name):
    """Kafka's DefaultKafkaPrincipalBuilder serialization: INT16 version 0, then
    DefaultPrincipalData v0 (flexible): Type, Name, TokenAuthenticated, no tags."""
    return (kproto.i16(0) + kproto.compact_string(type_) + kproto.compact_string(name) +
            kproto.i8(0) + kproto.uvarint(0))


def envelope(c, inner, principal, host=b"\x7f\x00\x00\x01"):
    """Sends an Envelope v0 wrapping `inner` (a request frame) as another broker would;
    → (ErrorCode, the inner response's body after its header, or None)."""
    corr = c.next_corr()
    payload = (kproto.header(ENVELOPE, 0, corr, client_id="tally-broker-7", flexible=True) +
               _compact_bytes(inner[4:]) + _compact_bytes(principal) + _compact_bytes(host) +
               kproto.uvarint(0))
    c.send(kproto.frame(payload))
    got, body = c.recv_response(flexible_header=True)
    assert got == corr
    r = kproto.Reader(body)
    n = r.uvarint() - 1
    data = r.take(n) if n >= 0 else None
    err = r.i16()
    if data is None:
        return err, None
    inner_r = kproto.Reader(data)
    inner_r.i32()  # the inner correlation id
    inner_r.skip_tags()
    return err, data[inner_r.pos:]


def test_envelope_needs_cluster_action_and_runs_as_its_principal(b):
    """An Envelope from a principal without CLUSTER_ACTION (alice) is refused with
    CLUSTER_AUTHORIZATION_FAILED and nothing runs; from the inter-broker principal (a super
    user) its request runs as the principal inside: alice's CreateTopics is refused for her
    (TOPIC_AUTHORIZATION_FAILED), admin's creates the topic; a principal that does not decode
    is PRINCIPAL_DESERIALIZATION_FAILURE."""
    name = "env-%d" % os.getpid()

    def inner(c, topic):
        body = kproto.create_topics_body([(topic, 1, 1, None)], 7)(kproto.Enc(True))
        return kproto.frame(kproto.header(kproto.CREATE_TOPICS, 7, c.next_corr(),
                                          client_id="env-client", flexible=True) + body)

    def topic_error(body):
        return kproto.parse_create_topics_any(kproto.Dec(body, True), 7)[name]["error"]

    with sasl_conn(b, "alice") as c:
        err, data = envelope(c, inner(c, name), principal_data("User", "admin"))
        assert (err, data) == (CLUSTER_AUTHORIZATION_FAILED, None)
    assert not topic_exists(b, name)
    with b.conn() as c:  # PLAINTEXT: User:ANONYMOUS, the inter-broker principal
        err, data = envelope(c, inner(c, name), principal_data("User", "alice"))
        assert err == 0 and topic_error(data) == TOPIC_AUTHORIZATION_FAILED
        assert not topic_exists(b, name)
        err, data = envelope(c, inner(c, name), b"\x00\x07garbage")
        assert (err, data) == (PRINCIPAL_DESERIALIZATION_FAILURE, None)
        err, data = envelope(c, inner(c, name), principal_data("User", "admin"))
        assert err == 0 and topic_error(data) == 0
    assert topic_exists(b, name)
