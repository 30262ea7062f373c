# SPDX-License-Identifier: Apache-2.0
"""The web console (issue 19, docs/console.md) on metrics.listener: one tallyd for the module
holds a topic of plain records (keys, a JSON value, headers), a topic with one committed and
one aborted transaction, a transaction left open (it holds its partition's last stable
offset), and a consumer group that committed part of what it read. The JSON API answers
them (lag = HW - committed; the record browser returns what kcat reads, hides aborted
records under read_committed and shows COMMIT/ABORT markers; the held partition names the
producer and transactional id holding it); write actions are refused with 403 while
console.write.enable is off and work when it is on (create a topic, reset an Empty group's
offsets, abort a hanging transaction — not one its coordinator holds open); unknown paths are 404 and oversized or
malformed requests refused while the Kafka listener keeps answering. Then Debian's chromium,
driven by playwright-core (tests/console/, npm), loads every page with no console error and
shows the same things; screenshots go to build/console-screenshots/.

Without chromium or playwright-core the browser test skips, which counts as a failure under
CI=true (conftest.py)."""
import base64
import http.client
import json
import os
import shutil
import subprocess
import time

import pytest

import harness
import kproto
import txn_lib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
CONSOLE_TESTS = os.path.join(ROOT, "tests", "console")
SHOTS = os.path.join(ROOT, "build", "console-screenshots")
KCAT = shutil.which("kcat") or shutil.which("kafkacat")
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"

DATA, TXN, OPEN, GROUP = "con-data", "con-txn", "con-open", "con-group"
OPEN_TID = "con-open-tid"


def http_get(port, path, method="GET", body=None, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


def api(port, path, want=200, method="GET", body=None):
    status, raw = http_get(port, path, method, None if body is None else json.dumps(body),
                           {"Content-Type": "application/json"} if body is not None else None)
    assert status == want, (path, status, raw[:500])
    return json.loads(raw)


def kcat(b, *args):
    r = subprocess.run([KCAT, "-b", b.bootstrap] + list(args), capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr.decode()
    return r.stdout.decode()


def console_broker(workdir, write=False, **extra):
    b = harness.TallyBroker(workdir)
    b.console_port = harness.free_port()
    b.settings.update({
        "metrics.listener": "127.0.0.1:%d" % b.console_port,
        "console.write.enable": "true" if write else "false",
        "group.initial.rebalance.delay.ms": "0",
        "offsets.topic.num.partitions": "1",
        "transaction.state.log.num.partitions": "1",
    })
    b.settings.update(extra)
    b.start()
    return b


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """The broker and what was done to it, shared by the module's tests (which only read)."""
    from confluent_kafka import Consumer, TopicPartition
    b = console_broker(tmp_path_factory.mktemp("console"))
    try:
        harness.create_topics(b, [(DATA, 1, None), (TXN, 1, None), (OPEN, 1, None)])
        p = txn_lib.plain_producer(b)
        for i in range(5):
            value = json.dumps({"n": i}).encode() if i == 2 else b"value-%d" % i
            p.produce(DATA, key=b"key-%d" % i, value=value, partition=0,
                      headers=[("h", b"hv-%d" % i)])
        p.flush(30)
        t = txn_lib.txn_producer(b, "con-txn-tid")
        for commit, tag in ((True, "committed"), (False, "aborted")):
            t.begin_transaction()
            for i in range(2):
                t.produce(TXN, value=b"%s-%d" % (tag.encode(), i), partition=0)
            t.flush(30)  # librdkafka purges what it has not sent when it aborts
            if commit:
                t.commit_transaction(30)
            else:
                t.abort_transaction(30)
        held = txn_lib.txn_producer(b, OPEN_TID)
        held.begin_transaction()
        held.produce(OPEN, value=b"open-0", partition=0)
        held.flush(30)
        c = Consumer({"bootstrap.servers": b.bootstrap, "group.id": GROUP,
                      "enable.auto.commit": False, "auto.offset.reset": "earliest"})
        c.subscribe([DATA])
        got = []
        deadline = time.monotonic() + 30
        while len(got) < 3 and time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is not None and m.error() is None:
                got.append(m)
        assert len(got) == 3
        c.commit(offsets=[TopicPartition(DATA, 0, 3)], asynchronous=False)
        yield {"b": b, "port": b.console_port, "held": held, "consumer": c}
        c.close()
        held.abort_transaction(30)
    finally:
        b.stop(check=True)


def test_api_overview_and_topics(world):
    port = world["port"]
    o = api(port, "/api/overview")
    assert o["node_id"] == 1 and o["controller_id"] == 1
    assert [x["id"] for x in o["brokers"]] == [1]
    assert o["write_enabled"] is False
    assert o["topics"] >= 3 and o["groups"] >= 1 and o["ongoing_transactions"] == 1
    names = {t["name"]: t for t in api(port, "/api/topics")["topics"]}
    assert names[DATA]["partitions"] == 1 and names[DATA]["records"] == 5
    t = api(port, "/api/topics/" + OPEN)
    part = t["partitions"][0]
    assert part["high_watermark"] == 1 and part["last_stable_offset"] == 0, part
    assert part["leader"] == 1 and part["isr"] == [1] and part["size_bytes"] > 0
    assert t["retention_ms"] == 7 * 24 * 3600 * 1000
    api(port, "/api/topics/no-such-topic", want=404)


def dec(v):
    return None if v is None else base64.b64decode(v).decode()


def test_api_records_match_kcat(world):
    b, port = world["b"], world["port"]
    lines = kcat(b, "-C", "-t", DATA, "-p", "0", "-o", "beginning", "-e", "-q",
                 "-f", "%o\t%k\t%s\n").splitlines()
    r = api(port, "/api/records?topic=%s&partition=0&offset=0" % DATA)
    got = ["%d\t%s\t%s" % (x["offset"], dec(x["key"]), dec(x["value"])) for x in r["records"]]
    assert got == lines and len(got) == 5
    assert r["records"][1]["headers"] == [{"key": "h", "value": base64.b64encode(b"hv-1").decode()}]
    # From a time: the first record at or after it (all five were produced after 0).
    assert api(port, "/api/records?topic=%s&partition=0&time=0&max=2" % DATA)["records"][0][
        "offset"] == 0
    r = api(port, "/api/records?topic=%s&partition=0&offset=3&max=1" % DATA)
    assert [x["offset"] for x in r["records"]] == [3] and r["next_offset"] == 4

    # read_uncommitted: both transactions' records and both markers.
    r = api(port, "/api/records?topic=%s&partition=0&isolation=read_uncommitted" % TXN)
    seq = [x.get("control") or dec(x["value"]) for x in r["records"]]
    assert seq == ["committed-0", "committed-1", "COMMIT", "aborted-0", "aborted-1", "ABORT"]
    # read_committed: the aborted ones hidden, as kcat with isolation.level=read_committed.
    rc = kcat(b, "-C", "-t", TXN, "-p", "0", "-o", "beginning", "-e", "-q",
              "-X", "isolation.level=read_committed", "-f", "%s\n").splitlines()
    r = api(port, "/api/records?topic=%s&partition=0&isolation=read_committed" % TXN)
    data = [dec(x["value"]) for x in r["records"] if "control" not in x]
    assert data == rc == ["committed-0", "committed-1"]
    assert r["aborted_skipped"] == 2
    assert [x["control"] for x in r["records"] if "control" in x] == ["COMMIT", "ABORT"]
    # The open transaction: read_committed stops at the LSO.
    assert api(port, "/api/records?topic=%s&partition=0&isolation=read_committed" %
               OPEN)["records"] == []
    assert len(api(port, "/api/records?topic=%s&partition=0" % OPEN)["records"]) == 1


def test_api_groups_lag(world):
    g = api(world["port"], "/api/groups/" + GROUP)
    assert g["state"] == "Stable" and g["members"] == 1
    (o,) = g["offsets"]
    assert (o["topic"], o["partition"], o["committed"]) == (DATA, 0, 3)
    assert o["lag"] == o["high_watermark"] - o["committed"] == 2
    assert g["total_lag"] == 2
    (m,) = g["member_list"]
    assert m["assignment"] == [{"topic": DATA, "partitions": [0]}]
    assert m["client_id"] == "rdkafka" and m["member_id"].startswith("rdkafka-")
    api(world["port"], "/api/groups/no-such-group", want=404)


def test_api_transactions_name_the_holder(world):
    t = api(world["port"], "/api/transactions")
    by_id = {x["transactional_id"]: x for x in t["transactions"]}
    assert by_id[OPEN_TID]["state"] == "Ongoing"
    assert {"topic": OPEN, "partition": 0} in by_id[OPEN_TID]["partitions"]
    (h,) = [x for x in t["held_partitions"] if x["topic"] == OPEN]
    assert h["holds_lso"] and h["first_offset"] == 0 and h["last_stable_offset"] == 0
    assert h["producer_id"] == by_id[OPEN_TID]["producer_id"]
    assert h["transactional_id"] == OPEN_TID
    assert h["coordinator_open"] is True and h["hanging"] is False
    assert h["since_ms"] > 0
    prods = api(world["port"], "/api/producers")["producers"]
    assert any(p["topic"] == OPEN and p["transactional_id"] == OPEN_TID and
               p["current_txn_first_offset"] == 0 for p in prods)


def test_api_writes_refused_while_disabled(world):
    port = world["port"]
    for path, body in (("/api/topics", {"name": "con-refused", "partitions": 1}),
                       ("/api/groups/%s/reset-offsets" % GROUP, {"to": "earliest"}),
                       ("/api/transactions/abort", {"topic": OPEN, "partition": 0,
                                                    "producer_id": 0})):
        r = api(port, path, want=403, method="POST", body=body)
        assert "console.write.enable" in r["error"]
    assert "con-refused" not in {t["name"] for t in api(port, "/api/topics")["topics"]}


def test_bad_requests_refused_kafka_unaffected(world):
    b, port = world["b"], world["port"]
    assert http_get(port, "/nope")[0] == 404
    assert http_get(port, "/api/nope")[0] == 404
    assert http_get(port, "/api/records?topic=%s&partition=x" % DATA)[0] == 400
    assert http_get(port, "/api/records?topic=%s&isolation=dirty" % DATA)[0] == 400
    assert http_get(port, "/api/overview", method="DELETE")[0] == 405
    assert http_get(port, "/api/records?" + "&".join("a%d=1" % i for i in range(40)))[0] == 400
    status, _ = http_get(port, "/api/topics", headers={"X-Big": "x" * 65536})
    assert status in (413, 431), status
    status, _ = http_get(port, "/api/topics", method="POST", body=b"{" * 100000,
                         headers={"Content-Type": "application/json"})
    assert status in (403, 413), status
    # Every HTTP connection taken by a request that never ends (at most 16 are served): the
    # Kafka listener answers meanwhile, and the console again as soon as they are closed
    # (libmicrohttpd's epoll mode kept such connections until the 30 s idle timeout; each
    # burst of them caught it about half the time, so four bursts).
    import socket
    for burst in range(4):
        stuck = []
        try:
            for _ in range(16):
                s = socket.create_connection(("127.0.0.1", port), timeout=10)
                s.sendall(b"GET /api/overview HTTP/1.1\r\nHost: x\r\n")
                stuck.append(s)
            if burst == 0:
                with b.conn() as c:
                    for _ in range(5):
                        assert c.api_versions()[0] == 0
        finally:
            for s in stuck:
                s.close()
        deadline = time.monotonic() + 10
        while True:
            try:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                c.request("GET", "/api/overview")
                if c.getresponse().status == 200:
                    c.close()
                    break
                c.close()
            except OSError:
                pass
            assert time.monotonic() < deadline, "the console did not come back (burst %d)" % burst


def test_records_read_is_bounded(world):
    b, port = world["b"], world["port"]
    harness.create_topics(b, [("con-big", 1, None)])
    p = txn_lib.plain_producer(b, **{"linger.ms": 0, "batch.size": 100000})
    for i in range(8):
        p.produce("con-big", value=b"x" * 90000, partition=0)
        p.flush(30)
    r = api(port, "/api/records?topic=con-big&partition=0&offset=0&max=500")
    assert r["stopped"] == "byte_limit" and r["bytes_read"] <= 256 * 1024, (
        r["stopped"], r["bytes_read"])
    assert 1 <= len(r["records"]) < 8 and r["next_offset"] == len(r["records"])


def test_writes_work_when_enabled(tmp_path):
    """Create a topic, reset an Empty group, abort a hanging transaction; the refusals."""
    b = console_broker(tmp_path / "w", write=True,
                       **{"transaction.partition.verification.enable": "false"})
    try:
        port = b.console_port
        assert api(port, "/api/overview")["write_enabled"] is True
        api(port, "/api/topics", method="POST",
            body={"name": "con-made", "partitions": 2, "replication_factor": 1})
        harness.wait_leaders(b, ["con-made"])
        assert api(port, "/api/topics/con-made")["partitions"][1]["partition"] == 1
        api(port, "/api/topics", want=409, method="POST", body={"name": "con-made"})
        api(port, "/api/topics", want=400, method="POST", body={"partitions": 2})
        for bad in ("bad name", "__mine", "..", "x" * 250):
            api(port, "/api/topics", want=400, method="POST", body={"name": bad})
        api(port, "/api/topics", method="POST", body={"name": "con.dot"})
        harness.wait_leaders(b, ["con.dot"])
        api(port, "/api/topics", want=409, method="POST", body={"name": "con_dot"})
        # An Empty group's offsets back to the earliest (a commit at generation -1 made it).
        from confluent_kafka import Consumer, TopicPartition
        p = txn_lib.plain_producer(b)
        for i in range(3):
            p.produce("con-made", value=b"r%d" % i, partition=1)
        p.flush(30)
        c = Consumer({"bootstrap.servers": b.bootstrap, "group.id": "con-reset",
                      "enable.auto.commit": False})
        c.commit(offsets=[TopicPartition("con-made", 1, 3)], asynchronous=False)
        c.close()
        r = api(port, "/api/groups/con-reset/reset-offsets", want=202, method="POST",
                body={"to": "earliest"})
        assert r["partitions"] == 1
        txn_lib.eventually(lambda: api(port, "/api/groups/con-reset")["offsets"][0]["committed"],
                           0, what="the reset offset")
        api(port, "/api/groups/con-reset/reset-offsets", want=400, method="POST",
            body={"to": "middle"})
        api(port, "/api/groups/nobody/reset-offsets", want=404, method="POST",
            body={"to": "latest"})
        # A group with members is not reset (Kafka's NON_EMPTY_GROUP).
        busy = Consumer({"bootstrap.servers": b.bootstrap, "group.id": "con-reset",
                         "enable.auto.commit": False})
        busy.subscribe(["con-made"])
        deadline = time.monotonic() + 30
        while not busy.assignment():
            assert time.monotonic() < deadline
            busy.poll(0.2)
        api(port, "/api/groups/con-reset/reset-offsets", want=409, method="POST",
            body={"to": "latest"})
        busy.close()
        # A transaction its coordinator holds open is not hanging: not aborted.
        t = txn_lib.txn_producer(b, "con-w-tid")
        t.begin_transaction()
        t.produce("con-made", value=b"open", partition=0)
        t.flush(30)
        (h,) = api(port, "/api/transactions")["held_partitions"]
        api(port, "/api/transactions/abort", want=409, method="POST",
            body={"topic": "con-made", "partition": 0, "producer_id": h["producer_id"]})
        t.abort_transaction(30)
        # A hanging one: a transactional batch from a producer id no coordinator has a
        # transaction for (verification off lets it in, as test_cli_txn.py does).
        with b.conn() as kc:
            ip = kc.init_producer_id()
            assert ip["error"] == 0, ip
            batch = kproto.record_batch([(None, b"ghost-%d" % i) for i in range(2)],
                                        attributes=0x10, producer_id=ip["producer_id"],
                                        producer_epoch=ip["producer_epoch"], base_sequence=0)
            assert kc.produce({"con-made": {1: batch}}, transactional_id="ghost")[
                ("con-made", 1)]["error"] == 0
        (h,) = api(port, "/api/transactions")["held_partitions"]
        assert (h["partition"], h["producer_id"], h["first_offset"]) == (1, ip["producer_id"], 3)
        assert h["coordinator_open"] is False and h["transactional_id"] is None
        r = api(port, "/api/transactions/abort", method="POST",
                body={"topic": "con-made", "partition": 1, "producer_id": ip["producer_id"]})
        assert r["aborted_first_offset"] == 3
        assert api(port, "/api/transactions")["held_partitions"] == []
        r = api(port, "/api/records?topic=con-made&partition=1&isolation=read_committed")
        assert r["aborted_skipped"] == 2 and r["records"][-1]["control"] == "ABORT"
    finally:
        b.stop(check=True)


# ---- security: HTTPS, SCRAM users over HTTP Basic, ACLs (docs/console.md, Security) --------

SECRET, OPENT = "con-secret", "con-open-to-bob"
STANDARD = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
FAILED_DELAY_MS = 200


@pytest.fixture(scope="module")
def secure(tmp_path_factory):
    """A tallyd whose console speaks HTTPS (a certificate of a test CA), logs SCRAM users in
    and enforces ACLs (User:ANONYMOUS, the PLAINTEXT Kafka listener's, is the super user that
    sets it up): alice (SCRAM-SHA-256) has no ACLs, bob (SCRAM-SHA-512) may DESCRIBE and READ
    con-secret and CREATE topics named con-bob-*."""
    from test_sasl import alter_scram, scram_upsertion
    from test_tls import make_cert
    d = str(tmp_path_factory.mktemp("console-pki"))
    with open(os.path.join(d, "san.ext"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    make_cert(d, "ca", "/O=Tally Test/CN=Tally Console Test CA")
    make_cert(d, "server", "/O=Tally Test/CN=localhost", ca="ca", ext="san.ext")
    ks = os.path.join(d, "server-ks.pem")
    with open(ks, "w") as f:
        f.write(open(os.path.join(d, "server.key")).read() +
                open(os.path.join(d, "server.pem")).read())
    b = console_broker(tmp_path_factory.mktemp("console-secure"), write=True, **{
        "metrics.ssl.keystore.location": ks,
        "console.authentication": "scram",
        "authorizer.class.name": STANDARD,
        "super.users": "User:ANONYMOUS",
        "connection.failed.authentication.delay.ms": str(FAILED_DELAY_MS),
    })
    try:
        harness.create_topics(b, [(SECRET, 1, None), (OPENT, 1, None)])
        res = alter_scram(b.port, [scram_upsertion("alice", "alice-pw", "SCRAM-SHA-256"),
                                   scram_upsertion("bob", "bob-pw", "SCRAM-SHA-512")])
        assert all(err == 0 for err, _ in res.values()), res
        create_acls(b, [("User:bob", 2, SECRET, 8, 3), ("User:bob", 2, SECRET, 3, 3),
                        ("User:bob", 2, "con-bob-", 5, 4)])
        import ssl
        ctx = ssl.create_default_context(cafile=os.path.join(d, "ca.pem"))
        yield {"b": b, "port": b.console_port, "ctx": ctx}
    finally:
        b.stop(check=True)


def create_acls(b, entries):
    """entries: (principal, resource type, name, operation, pattern type), ALLOW from any
    host, created as User:ANONYMOUS (the super user) on the PLAINTEXT listener."""
    from kafka.admin import (ACL, ACLOperation, ACLPermissionType, ACLResourcePatternType,
                             KafkaAdminClient, ResourcePattern, ResourceType)
    a = KafkaAdminClient(bootstrap_servers=b.bootstrap, request_timeout_ms=10000)
    try:
        res = a.create_acls([ACL(p, "*", ACLOperation(op), ACLPermissionType.ALLOW,
                                 ResourcePattern(ResourceType(rt), name,
                                                 ACLResourcePatternType(pat)))
                             for p, rt, name, op, pat in entries])
    finally:
        a.close()
    assert not res["failed"], res


def https(w, path, user=None, password=None, method="GET", body=None):
    """→ (status, headers, body) over HTTPS, verifying the test CA."""
    c = http.client.HTTPSConnection("127.0.0.1", w["port"], timeout=30, context=w["ctx"])
    headers = {}
    if user is not None:
        headers["Authorization"] = "Basic " + base64.b64encode(
            ("%s:%s" % (user, password)).encode()).decode()
    if body is not None:
        headers["Content-Type"] = "application/json"
    try:
        c.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
        r = c.getresponse()
        return r.status, dict(r.getheaders()), r.read()
    finally:
        c.close()


def test_console_login_over_https(secure):
    st, hdr, _ = https(secure, "/api/topics")
    assert st == 401 and hdr.get("WWW-Authenticate", "").startswith("Basic realm=")
    t0 = time.monotonic()
    st, hdr, _ = https(secure, "/api/topics", "alice", "wrong")
    assert st == 401 and "WWW-Authenticate" in hdr
    # connection.failed.authentication.delay.ms: the failed answer waits at least that long.
    assert time.monotonic() - t0 >= FAILED_DELAY_MS / 1000.0 * 0.9
    st, _, _ = https(secure, "/api/topics", "nobody", "alice-pw")
    assert st == 401
    st, _, _ = https(secure, "/api/topics", "bob", "alice-pw")  # another user's password
    assert st == 401
    for user in ("alice", "bob"):  # SCRAM-SHA-256 and SCRAM-SHA-512 credentials
        st, _, raw = https(secure, "/api/topics", user, user + "-pw")
        assert st == 200, raw
    st, _, _ = https(secure, "/", "alice", "alice-pw")  # the page itself
    assert st == 200
    st, _, _ = https(secure, "/api/topics", "alice", "wrong")  # the cached login is alice-pw's
    assert st == 401
    log = secure["b"].stderr_all()
    assert "Failed authentication with /127.0.0.1" in log and "alice-pw" not in log


def test_plain_http_to_the_https_port_refused(secure):
    with pytest.raises((OSError, http.client.HTTPException)):
        status, _ = http_get(secure["port"], "/api/topics")
        assert status is None  # any HTTP answer at all is a failure
    # and a Kafka client meanwhile is served as before
    with secure["b"].conn() as c:
        err, keys = c.api_versions(0)
        assert err == 0 and kproto.METADATA in keys


def test_console_enforces_acls(secure):
    def names(user):
        st, _, raw = https(secure, "/api/topics", user, user + "-pw")
        assert st == 200
        return [t["name"] for t in json.loads(raw)["topics"]]
    assert SECRET not in names("alice") and OPENT not in names("alice")
    assert SECRET in names("bob") and OPENT not in names("bob")
    q = "/api/records?topic=%s&partition=0&offset=0" % SECRET
    st, _, raw = https(secure, q, "alice", "alice-pw")
    assert st == 403 and json.loads(raw)["error_code"] == "TOPIC_AUTHORIZATION_FAILED"
    st, _, _ = https(secure, "/api/topics/" + SECRET, "alice", "alice-pw")
    assert st == 403
    st, _, raw = https(secure, q, "bob", "bob-pw")
    assert st == 200, raw
    st, _, _ = https(secure, "/api/overview", "bob", "bob-pw")  # no DESCRIBE on the cluster
    assert st == 403
    assert "Principal = User:alice is Denied operation = Read" in secure["b"].stderr_all()


def test_console_write_needs_create(secure):
    st, _, raw = https(secure, "/api/topics", "alice", "alice-pw", "POST",
                       {"name": "con-bob-x", "partitions": 1})
    assert st == 403, raw
    st, _, raw = https(secure, "/api/topics", "bob", "bob-pw", "POST",
                       {"name": "con-elsewhere", "partitions": 1})
    assert st == 403, raw
    st, _, raw = https(secure, "/api/topics", "bob", "bob-pw", "POST",
                       {"name": "con-bob-x", "partitions": 1})
    assert st == 200, raw
    b = secure["b"]
    deadline = time.monotonic() + 30
    while True:
        with b.conn() as c:
            md = set(c.metadata(version=1)["topics"])
        if "con-bob-x" in md or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert "con-bob-x" in md and "con-elsewhere" not in md


def test_console_abort_and_reset_need_their_acls(secure):
    """The abort asks WriteTxnMarkers' rule (CLUSTER_ACTION or ALTER on the cluster), the reset
    OffsetCommit's (READ on the group) before anything else is looked at."""
    st, _, raw = https(secure, "/api/transactions/abort", "bob", "bob-pw", "POST",
                       {"topic": SECRET, "partition": 0, "producer_id": 1})
    assert st == 403 and json.loads(raw)["error_code"] == "CLUSTER_AUTHORIZATION_FAILED", raw
    st, _, raw = https(secure, "/api/groups/con-g/reset-offsets", "bob", "bob-pw", "POST",
                       {"to": "earliest"})
    assert st == 403 and json.loads(raw)["error_code"] == "GROUP_AUTHORIZATION_FAILED", raw
    st, _, raw = https(secure, "/api/groups/con-g", "bob", "bob-pw")
    assert st == 403 and json.loads(raw)["error_code"] == "GROUP_AUTHORIZATION_FAILED", raw


def test_console_login_of_plain_jaas_users(tmp_path):
    """console.authentication=plain: the PLAIN users of a SASL listener's JAAS config log in
    (plain HTTP: the listener is on loopback)."""
    sasl_port = harness.free_port()
    b = harness.TallyBroker(tmp_path)
    b.console_port = harness.free_port()
    b.settings.update({
        "listeners": "PLAINTEXT://127.0.0.1:%d,SASL_PLAINTEXT://127.0.0.1:%d,"
                     "CONTROLLER://127.0.0.1:%d" % (b.port, sasl_port, b.controller_port),
        "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config":
            'org.apache.kafka.common.security.plain.PlainLoginModule required '
            'user_carol="carol-secret" user_dave="dave-secret";',
        "metrics.listener": "127.0.0.1:%d" % b.console_port,
        "console.authentication": "plain",
        "connection.failed.authentication.delay.ms": "0",
    })
    b.start()
    try:
        def get(user, password):
            auth = base64.b64encode(("%s:%s" % (user, password)).encode()).decode()
            return http_get(b.console_port, "/api/topics", headers={"Authorization":
                                                                    "Basic " + auth})[0]
        assert http_get(b.console_port, "/api/topics")[0] == 401
        assert get("carol", "carol-secret") == 200 and get("dave", "dave-secret") == 200
        assert get("carol", "dave-secret") == 401 and get("carol", "carol-secre") == 401
        assert get("eve", "carol-secret") == 401
    finally:
        b.stop(check=True)


def test_public_console_without_https_refused(tmp_path):
    b = harness.TallyBroker(tmp_path)
    b.settings["metrics.listener"] = "0.0.0.0:%d" % harness.free_port()
    b.start(wait=False)
    assert b.proc.wait(60) != 0
    assert "is not a loopback address" in b.stderr_all()


@pytest.fixture(scope="module")
def playwright_dir():
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node/npm not installed: cannot drive the console")
    if not os.path.exists(CHROMIUM):
        pytest.skip("chromium or playwright-core not installed (make deps; npm ci in "
                    "tests/console)")
    if not os.path.isdir(os.path.join(CONSOLE_TESTS, "node_modules", "playwright-core")):
        r = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=CONSOLE_TESTS,
                           capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            pytest.skip("chromium or playwright-core not installed: npm ci failed: " +
                        r.stderr[-500:])
    return CONSOLE_TESTS


def test_pages_in_chromium(world, playwright_dir):
    port = world["port"]
    os.makedirs(SHOTS, exist_ok=True)
    pages = ["overview", "topics", "topic?name=" + OPEN,
             "records?topic=%s&partition=0&isolation=read_committed" % TXN,
             "records?topic=%s&partition=0&isolation=read_uncommitted&format=json" % DATA,
             "groups", "transactions", "producers",
             "action:topics:#create-topic|name=con-browser",
             "action:transactions:button[data-abort]"]
    r = subprocess.run(["node", os.path.join(playwright_dir, "pages.js"),
                        "http://127.0.0.1:%d" % port, SHOTS, CHROMIUM] + pages,
                       capture_output=True, text=True, timeout=120, cwd=playwright_dir)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout)
    for name in pages:
        if not name.startswith("action:"):
            assert out[name]["errors"] == [], (name, out[name]["errors"])
            assert "view-error" not in out[name]["html"], (name, out[name]["text"][:500])
        assert os.path.getsize(out[name]["screenshot"]) > 0
    ov = out["overview"]["text"]
    assert "controller" in ov and "request p99" in ov and "bytes in/s" in ov
    assert all(t in out["topics"]["text"] for t in (DATA, TXN, OPEN))
    held = out["topic?name=" + OPEN]["html"]
    assert "partitions-table" in held
    rc = out["records?topic=%s&partition=0&isolation=read_committed" % TXN]["html"]
    assert "committed-0" in rc and "committed-1" in rc and "aborted-0" not in rc
    assert 'data-control="COMMIT"' in rc and 'data-control="ABORT"' in rc
    ru = out["records?topic=%s&partition=0&isolation=read_uncommitted&format=json" % DATA]
    assert all("value-%d" % i in ru["text"] for i in (0, 1, 3, 4))
    assert '"n": 2' in ru["text"] and "hv-4" in ru["text"]
    g = out["groups"]["text"]
    assert GROUP in g and "Stable" in g and 'id="lag-chart-%s"' % GROUP in out["groups"]["html"]
    assert DATA + ": 0" in g
    tx = out["transactions"]["text"]
    pid = str(api(port, "/api/transactions")["held_partitions"][0]["producer_id"])
    assert OPEN_TID in tx and "Ongoing" in tx and OPEN + "-0" in tx and pid in tx
    assert OPEN_TID in out["producers"]["text"]
    # Write actions: refused while console.write.enable is off, the refusal shown.
    for a in ("action:topics:#create-topic|name=con-browser",
              "action:transactions:button[data-abort]"):
        assert out[a]["result"].startswith("refused (403)"), out[a]["result"]
