"""SASL_PLAINTEXT with PLAIN (issue 17, first slice): a SASL listener beside the PLAINTEXT
one, real clients (confluent-kafka: produce, a consumer group, a transaction; kafka-python,
which sends SaslHandshake v0 and raw tokens), and the refusals — wrong password, unknown user,
disabled mechanism, SaslAuthenticate before SaslHandshake, requests before authentication —
each while another client is served and with nothing changed."""
import struct
import subprocess
import time
import uuid

import pytest

import harness
import kproto

JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required '
        'username="admin" password="admin-secret" '
        'user_admin="admin-secret" user_alice="alice-secret";')


def sasl_settings(b, sasl_port, **extra):
    s = {
        "listeners": "PLAINTEXT://127.0.0.1:%d,SASL_PLAINTEXT://127.0.0.1:%d,"
                     "CONTROLLER://127.0.0.1:%d" % (b.port, sasl_port, b.controller_port),
        "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
    }
    s.update(extra)
    return s


@pytest.fixture
def sasl_broker(broker_factory):
    b = broker_factory(start=False)
    b.sasl_port = harness.free_port()
    b.settings.update(sasl_settings(b, b.sasl_port))
    b.start()
    return b


def conf(b, user="alice", password="alice-secret", **extra):
    c = {"bootstrap.servers": "127.0.0.1:%d" % b.sasl_port,
         "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
         "sasl.username": user, "sasl.password": password}
    c.update(extra)
    return c


# ---- raw protocol helpers --------------------------------------------------------------

def sasl_handshake_request(corr, mechanism, version=1):
    return kproto.frame(kproto.header(17, version, corr) + kproto.string(mechanism))


def parse_handshake(body):
    r = kproto.Reader(body)
    err = r.i16()
    mechs = r.array(lambda rr: rr.string())
    return err, mechs


def sasl_authenticate_request(corr, token, version=1):
    return kproto.frame(kproto.header(36, version, corr) + kproto.i32(len(token)) + token)


def parse_authenticate(body, version=1):
    r = kproto.Reader(body)
    err = r.i16()
    msg = r.string()
    n = r.i32()
    auth = r.take(n) if n > 0 else b""
    lifetime = struct.unpack(">q", r.take(8))[0] if version >= 1 else None
    return err, msg, auth, lifetime


def handshake(c, mechanism="PLAIN", version=1):
    corr = c.next_corr()
    c.send(sasl_handshake_request(corr, mechanism, version))
    got, body = c.recv_response()
    assert got == corr
    return parse_handshake(body)


def authenticate(c, token, version=1):
    corr = c.next_corr()
    c.send(sasl_authenticate_request(corr, token, version))
    got, body = c.recv_response()
    assert got == corr
    return parse_authenticate(body, version)


def plain_token(user, password, authz=""):
    return ("%s\0%s\0%s" % (authz, user, password)).encode()


def topic_end(b, topic, partition=0):
    """The log end offset of topic-partition, asked on the PLAINTEXT listener."""
    err, _, offset = harness.list_offset(b, topic, partition)
    assert err == 0
    return offset


def produce_request(corr, topic, value):
    batch = kproto.record_batch([(None, value)])
    return kproto.produce_request(corr, {topic: {0: batch}})


def assert_other_client_served(b):
    """Another client, authenticated, is served while a refusal is under way."""
    from confluent_kafka.admin import AdminClient
    md = AdminClient(conf(b)).list_topics(timeout=20)
    assert md.brokers, md


# ---- the tests -------------------------------------------------------------------------

def test_confluent_produce_group_and_transaction_over_sasl_plain(sasl_broker):
    from confluent_kafka import Consumer, Producer, KafkaException
    b = sasl_broker
    harness.create_topics(b, [("sasl-orders", 2, None)])
    p = Producer(conf(b, **{"enable.idempotence": True}))
    for i in range(20):
        p.produce("sasl-orders", value=b"order-%d" % i, partition=i % 2)
    assert p.flush(30) == 0

    tid = "sasl-txn-%s" % uuid.uuid4().hex[:8]
    tp = Producer(conf(b, **{"transactional.id": tid}))
    tp.init_transactions(30)
    tp.begin_transaction()
    for i in range(5):
        tp.produce("sasl-orders", value=b"txn-%d" % i, partition=0)
    tp.commit_transaction(30)

    c = Consumer(conf(b, **{"group.id": "sasl-group", "auto.offset.reset": "earliest",
                            "isolation.level": "read_committed",
                            "enable.auto.commit": False}))
    c.subscribe(["sasl-orders"])
    seen = []
    deadline = time.monotonic() + 60
    while len(seen) < 25 and time.monotonic() < deadline:
        m = c.poll(1.0)
        if m is None:
            continue
        if m.error():
            raise KafkaException(m.error())
        seen.append(m.value())
    c.commit(asynchronous=False)
    c.close()
    assert sorted(seen) == sorted([b"order-%d" % i for i in range(20)] +
                                  [b"txn-%d" % i for i in range(5)])
    # The group's offsets were committed over SASL too (read back on PLAINTEXT).
    from confluent_kafka import TopicPartition
    c2 = Consumer(harness.consumer_conf(b, **{"group.id": "sasl-group"}))
    got = c2.committed([TopicPartition("sasl-orders", 0), TopicPartition("sasl-orders", 1)],
                       timeout=20)
    c2.close()
    by_part = {t.partition: t.offset for t in got}
    # Partition 0 holds 10 + 5 records and the commit marker after them.
    assert by_part[1] == 10 and by_part[0] in (15, 16), by_part


def test_metadata_gives_the_addresses_of_the_listener_connected_to(sasl_broker):
    b = sasl_broker
    with kproto.Conn(b.port) as c:
        md = c.metadata(version=1)
    assert [(host, port) for _, host, port in md["brokers"]] == [("127.0.0.1", b.port)]
    with kproto.Conn(b.sasl_port) as c:
        assert handshake(c)[0] == 0
        err, _, _, _ = authenticate(c, plain_token("alice", "alice-secret"))
        assert err == 0
        md = c.metadata(version=1)
    assert [(host, port) for _, host, port in md["brokers"]] == [("127.0.0.1", b.sasl_port)]


def test_kafka_python_over_sasl_plain(sasl_broker):
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    b = sasl_broker
    harness.create_topics(b, [("sasl-kp", 1, None)])
    kw = dict(bootstrap_servers="127.0.0.1:%d" % b.sasl_port, security_protocol="SASL_PLAINTEXT",
              sasl_mechanism="PLAIN", sasl_plain_username="admin",
              sasl_plain_password="admin-secret")
    p = KafkaProducer(**kw)
    for i in range(10):
        p.send("sasl-kp", b"kp-%d" % i, partition=0)
    p.flush(30)
    p.close()
    c = KafkaConsumer(**kw, auto_offset_reset="earliest", consumer_timeout_ms=10000)
    c.assign([TopicPartition("sasl-kp", 0)])
    got = [m.value for m in c]
    c.close()
    assert got == [b"kp-%d" % i for i in range(10)]


@pytest.mark.parametrize("user,password", [("alice", "wrong"), ("mallory", "alice-secret")])
def test_failed_authentication_appends_nothing(sasl_broker, user, password):
    from confluent_kafka import Producer
    b = sasl_broker
    harness.create_topics(b, [("sasl-guard", 1, None)])
    before = topic_end(b, "sasl-guard")
    errors = []
    p = Producer(conf(b, user=user, password=password,
                      **{"error_cb": lambda e: errors.append(e), "message.timeout.ms": 5000}))
    p.produce("sasl-guard", value=b"must-not-land")
    p.flush(8)
    assert any(e.code() == -169 or "uthentication" in e.str() for e in errors), errors  # _AUTHENTICATION
    assert_other_client_served(b)
    assert topic_end(b, "sasl-guard") == before
    # Raw: the answer says nothing of which part was wrong, and the connection is closed.
    with kproto.Conn(b.sasl_port) as c:
        assert handshake(c)[0] == 0
        err, msg, _, _ = authenticate(c, plain_token(user, password))
        assert err == 58
        assert msg == "Authentication failed: Invalid username or password"
        assert c.is_closed_by_peer(timeout=5.0)
    assert "failed authentication from 127.0.0.1" in b.stderr_all()
    assert "principal 'User:%s'" % user in b.stderr_all()


def test_failed_authentication_is_answered_after_the_delay(broker_factory):
    b = broker_factory(start=False)
    b.sasl_port = harness.free_port()
    b.settings.update(sasl_settings(b, b.sasl_port,
                                    **{"connection.failed.authentication.delay.ms": "1500"}))
    b.start()
    with kproto.Conn(b.sasl_port) as c:
        assert handshake(c)[0] == 0
        c.send(sasl_authenticate_request(c.next_corr(), plain_token("alice", "nope")))
        # Not answered at once: another client is served meanwhile (the loop is not blocked).
        c.sock.settimeout(0.5)
        with pytest.raises(OSError):
            c.sock.recv(1)
        assert_other_client_served(b)
        c.sock.settimeout(10)
        _, body = c.recv_response()
        assert parse_authenticate(body)[0] == 58
        assert c.is_closed_by_peer(timeout=5.0)


def test_disabled_mechanism_is_refused_with_the_enabled_list(sasl_broker):
    from confluent_kafka import Producer
    b = sasl_broker
    with kproto.Conn(b.sasl_port) as c:
        err, mechs = handshake(c, "SCRAM-SHA-256")
        assert (err, mechs) == (33, ["PLAIN"])
        assert c.is_closed_by_peer(timeout=5.0)
    with kproto.Conn(b.sasl_port) as c:
        assert handshake(c, "GSSAPI") == (33, ["PLAIN"])
    errors = []
    p = Producer(conf(b, **{"sasl.mechanism": "SCRAM-SHA-512", "error_cb": errors.append,
                            "message.timeout.ms": 4000}))
    p.produce("sasl-mech", value=b"x")
    p.flush(6)
    assert errors
    assert_other_client_served(b)


def test_authenticate_before_handshake_is_an_illegal_state(sasl_broker):
    b = sasl_broker
    with kproto.Conn(b.sasl_port) as c:
        err, msg, _, _ = authenticate(c, plain_token("alice", "alice-secret"))
        assert err == 34, msg
        assert c.is_closed_by_peer(timeout=5.0)
    assert_other_client_served(b)


@pytest.mark.parametrize("what", ["metadata", "produce"])
def test_requests_before_authentication_close_the_connection(sasl_broker, what):
    b = sasl_broker
    harness.create_topics(b, [("sasl-early", 1, None)])
    before = topic_end(b, "sasl-early")
    with kproto.Conn(b.sasl_port) as c:
        # ApiVersions is served before authentication (clients ask it first).
        err, keys = c.api_versions(0)
        assert err == 0 and 17 in keys and 36 in keys
        if what == "metadata":
            c.send(kproto.metadata_request(c.next_corr()))
        else:
            c.send(produce_request(c.next_corr(), "sasl-early", b"sneaky"))
        assert c.is_closed_by_peer(timeout=5.0)
    # Also after a handshake but before SaslAuthenticate.
    with kproto.Conn(b.sasl_port) as c:
        assert handshake(c)[0] == 0
        c.send(produce_request(c.next_corr(), "sasl-early", b"sneaky"))
        assert c.is_closed_by_peer(timeout=5.0)
    assert_other_client_served(b)
    assert topic_end(b, "sasl-early") == before
    assert "before SASL authentication; closing" in b.stderr_all()


def test_plaintext_listener_beside_it_is_unchanged(sasl_broker):
    from confluent_kafka import Producer
    b = sasl_broker
    harness.create_topics(b, [("sasl-plain", 1, None)])
    p = Producer({"bootstrap.servers": b.bootstrap})
    p.produce("sasl-plain", value=b"plain")
    assert p.flush(30) == 0
    assert topic_end(b, "sasl-plain") == 1
    with kproto.Conn(b.port) as c:
        # No SASL on PLAINTEXT: a handshake is an illegal state, and the connection stays.
        assert handshake(c)[0] == 34
        assert c.metadata(version=1)["brokers"]


def test_raw_v0_tokens(sasl_broker):
    """SaslHandshake v0, then the PLAIN token as a bare frame (kafka-python's way)."""
    b = sasl_broker
    with kproto.Conn(b.sasl_port) as c:
        assert handshake(c, version=0) == (0, ["PLAIN"])
        tok = plain_token("alice", "alice-secret")
        c.send(struct.pack(">i", len(tok)) + tok)
        assert c.recv_exact(4) == b"\0\0\0\0"
        assert c.metadata(version=1)["brokers"]
    with kproto.Conn(b.sasl_port) as c:
        assert handshake(c, version=0)[0] == 0
        tok = plain_token("alice", "bad")
        c.send(struct.pack(">i", len(tok)) + tok)
        assert c.is_closed_by_peer(timeout=5.0)


@pytest.mark.parametrize("settings,message", [
    ({"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_SSL,"
      "CONTROLLER:PLAINTEXT"}, "a TLS listener needs ssl.keystore.location"),
    ({"listener.name.sasl_plaintext.sasl.enabled.mechanisms": "GSSAPI"},
     "GSSAPI is not supported"),
    ({"listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN,OAUTHBEARER"},
     "OAUTHBEARER is not supported"),
    ({"listener.name.sasl_plaintext.plain.sasl.jaas.config":
      'org.apache.kafka.common.security.plain.PlainLoginModule required user_a="x"'},
     "plain.sasl.jaas.config"),
    ({"listener.name.sasl_plaintext.plain.sasl.jaas.config": None},
     "has no listener.name.sasl_plaintext.plain.sasl.jaas.config"),
    ({"inter.broker.listener.name": "SASL_PLAINTEXT"},
     "sasl.mechanism.inter.broker.protocol is GSSAPI"),
    ({"inter.broker.listener.name": "SASL_PLAINTEXT", "sasl.mechanism.inter.broker.protocol":
      "SCRAM-SHA-256"}, "does not enable SCRAM-SHA-256"),
    ({"inter.broker.listener.name": "SASL_PLAINTEXT", "sasl.mechanism.inter.broker.protocol":
      "SCRAM-SHA-512", "listener.name.sasl_plaintext.sasl.enabled.mechanisms":
      "PLAIN,SCRAM-SHA-512"}, "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config: "
     "SCRAM-SHA-512 sasl.jaas.config must start with"),
    ({"inter.broker.listener.name": "SASL_PLAINTEXT", "sasl.mechanism.inter.broker.protocol":
      "PLAIN", "listener.name.sasl_plaintext.plain.sasl.jaas.config":
      'org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="x";'},
     "has no username"),
])
def test_bad_security_configs_refuse_to_start(broker_factory, settings, message):
    b = broker_factory(start=False)
    b.sasl_port = harness.free_port()
    b.settings.update(sasl_settings(b, b.sasl_port))
    for k, v in settings.items():
        if v is None:
            b.settings.pop(k)
        else:
            b.settings[k] = v
    with pytest.raises(RuntimeError) as e:
        b.start()
    assert message in str(e.value) or message in b.stderr_all()


def test_ssl_listener_without_a_keystore_is_refused(broker_factory):
    b = broker_factory(start=False)
    port = harness.free_port()
    b.settings["listeners"] = "PLAINTEXT://127.0.0.1:%d,SSL://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d" % (
        b.port, port, b.controller_port)
    with pytest.raises(RuntimeError):
        b.start()
    assert "listener SSL: a TLS listener needs ssl.keystore.location" in b.stderr_all()


# ---- SCRAM (KIP-554 credentials in the metadata log) --------------------------------------

import hashlib
import os

SCRAM_MECHS = {"SCRAM-SHA-256": (1, "sha256"), "SCRAM-SHA-512": (2, "sha512")}


def compact_bytes(b):
    return kproto.uvarint(len(b) + 1) + b


def alter_scram_request(corr, upsertions=(), deletions=()):
    """AlterUserScramCredentials v0. upsertions: (name, mech, iterations, salt, salted);
    deletions: (name, mech)."""
    def dele(d):
        return kproto.compact_string(d[0]) + kproto.i8(d[1]) + kproto.uvarint(0)

    def ups(u):
        return (kproto.compact_string(u[0]) + kproto.i8(u[1]) + kproto.i32(u[2]) +
                compact_bytes(u[3]) + compact_bytes(u[4]) + kproto.uvarint(0))
    body = (kproto._compact_array(list(deletions), dele) +
            kproto._compact_array(list(upsertions), ups) + kproto.uvarint(0))
    return kproto.frame(kproto.header(51, 0, corr, flexible=True) + body)


def alter_scram(port, upsertions=(), deletions=()):
    """→ {user: (error, message)}"""
    with kproto.Conn(port) as c:
        body = kproto._roundtrip(c, alter_scram_request(c.next_corr(), upsertions, deletions),
                                 flexible_header=True)
    r = kproto.Reader(body)
    r.i32()

    def res(rr):
        user, err, msg = rr.compact_string(), rr.i16(), rr.compact_string()
        rr.skip_tags()
        return user, (err, msg)
    return dict(r.compact_array(res))


def describe_scram(port, users=None):
    """→ (error, {user: (error, [(mechanism, iterations)])})"""
    def user(u):
        return kproto.compact_string(u) + kproto.uvarint(0)
    body = kproto._compact_array(users, user) + kproto.uvarint(0)
    with kproto.Conn(port) as c:
        body = kproto._roundtrip(
            c, kproto.frame(kproto.header(50, 0, c.next_corr(), flexible=True) + body),
            flexible_header=True)
    r = kproto.Reader(body)
    r.i32()
    err = r.i16()
    r.compact_string()

    def info(rr):
        m, it = rr.i8(), rr.i32()
        rr.skip_tags()
        return m, it

    def res(rr):
        u, e = rr.compact_string(), rr.i16()
        rr.compact_string()
        infos = rr.compact_array(info)
        rr.skip_tags()
        return u, (e, infos)
    return err, dict(r.compact_array(res) or [])


def scram_upsertion(user, password, mech, iterations=4096):
    num, h = SCRAM_MECHS[mech]
    salt = os.urandom(16)
    salted = hashlib.pbkdf2_hmac(h, password.encode(), salt, iterations)
    return (user, num, iterations, salt, salted)


@pytest.fixture
def scram_broker(broker_factory):
    b = broker_factory(start=False)
    b.sasl_port = harness.free_port()
    b.settings.update(sasl_settings(
        b, b.sasl_port,
        **{"listener.name.sasl_plaintext.sasl.enabled.mechanisms":
           "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512"}))
    b.start()
    return b


@pytest.fixture(scope="module")
def shared_scram_broker(tmp_path_factory):
    """A SCRAM broker for the tests that only add users of their own and read them back (no
    restart, no listing of every user)."""
    b = harness.TallyBroker(tmp_path_factory.mktemp("scram-shared"))
    b.sasl_port = harness.free_port()
    b.settings.update(sasl_settings(
        b, b.sasl_port,
        **{"listener.name.sasl_plaintext.sasl.enabled.mechanisms":
           "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512"}))
    b.start()
    yield b
    b.stop(check=True)


def scram_roundtrip(b, topic, mech, user, password, value):
    from confluent_kafka import Consumer, Producer, TopicPartition
    p = Producer(conf(b, user=user, password=password, **{"sasl.mechanism": mech}))
    p.produce(topic, value=value, partition=0)
    assert p.flush(30) == 0
    c = Consumer(conf(b, user=user, password=password,
                      **{"sasl.mechanism": mech, "group.id": "g-" + mech,
                         "auto.offset.reset": "earliest"}))
    c.assign([TopicPartition(topic, 0, 0)])
    got = []
    deadline = time.monotonic() + 30
    while value not in got and time.monotonic() < deadline:
        m = c.poll(1.0)
        if m is not None and not m.error():
            got.append(m.value())
    c.close()
    assert value in got


def test_scram_users_created_with_alter_and_kept_across_a_restart(scram_broker):
    b = scram_broker
    harness.create_topics(b, [("sasl-scram", 1, None)])
    res = alter_scram(b.port, [scram_upsertion("carol", "carol-256", "SCRAM-SHA-256"),
                               scram_upsertion("carol", "carol-512", "SCRAM-SHA-512", 8192)])
    assert res == {"carol": (0, None)}
    err, users = describe_scram(b.port)
    assert err == 0 and users == {"carol": (0, [(1, 4096), (2, 8192)])}
    scram_roundtrip(b, "sasl-scram", "SCRAM-SHA-256", "carol", "carol-256", b"s256")
    scram_roundtrip(b, "sasl-scram", "SCRAM-SHA-512", "carol", "carol-512", b"s512")
    # Each mechanism has its own password; neither is ever accepted for the other.
    assert not scram_login_works(b, "SCRAM-SHA-256", "carol", "carol-512")
    assert not scram_login_works(b, "SCRAM-SHA-512", "carol", "carol-256")
    b.restart()
    scram_roundtrip(b, "sasl-scram", "SCRAM-SHA-512", "carol", "carol-512", b"after")
    assert describe_scram(b.port, ["carol"])[1] == {"carol": (0, [(1, 4096), (2, 8192)])}
    # The password is not in the metadata log or its snapshots: only salted, iterated keys.
    for root, _, files in os.walk(os.path.join(b.data_dir, "__cluster_metadata-0")):
        for f in files:
            with open(os.path.join(root, f), "rb") as fh:
                data = fh.read()
            assert b"carol-256" not in data and b"carol-512" not in data


def scram_login_works(b, mech, user, password):
    """Whether a confluent-kafka client logs in with SCRAM and gets Metadata."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient
    errors = []
    a = AdminClient(conf(b, user=user, password=password,
                         **{"sasl.mechanism": mech, "error_cb": errors.append}))
    try:
        md = a.list_topics(timeout=5)
    except KafkaException:
        return False
    return bool(md.brokers) and not errors


def test_scram_wrong_password_and_unknown_user_fail(scram_broker):
    from confluent_kafka import Producer
    b = scram_broker
    harness.create_topics(b, [("sasl-scram-guard", 1, None)])
    assert alter_scram(b.port, [scram_upsertion("dan", "dan-pw", "SCRAM-SHA-256")]) == \
        {"dan": (0, None)}
    before = topic_end(b, "sasl-scram-guard")
    for user, password in (("dan", "not-dan"), ("nobody", "dan-pw")):
        errors = []
        p = Producer(conf(b, user=user, password=password,
                          **{"sasl.mechanism": "SCRAM-SHA-256", "error_cb": errors.append,
                             "message.timeout.ms": 4000}))
        p.produce("sasl-scram-guard", value=b"no")
        p.flush(6)
        assert any("uthentication" in e.str() for e in errors), errors
    assert_other_client_served(b)
    assert topic_end(b, "sasl-scram-guard") == before
    assert scram_login_works(b, "SCRAM-SHA-256", "dan", "dan-pw")
    # Raw, as a client that ignores the server's signature would: the broker itself refuses
    # the proof, and the connection closes.
    assert raw_scram(b, "dan", "dan-pw")[0] == 0
    for user, password in (("dan", "not-dan"), ("nobody", "dan-pw")):
        err, msg = raw_scram(b, user, password)
        assert (err, msg) == (58, "Authentication failed: Invalid username or password")


def raw_scram(b, user, password, mech="SCRAM-SHA-256"):
    """One SCRAM exchange over SaslAuthenticate v1 → (error, message) of its last step."""
    import base64
    import hmac
    h = SCRAM_MECHS[mech][1]
    with kproto.Conn(b.sasl_port) as c:
        assert handshake(c, mech)[0] == 0
        first_bare = "n=%s,r=rawclientnonce" % user
        err, msg, server_first, _ = authenticate(c, ("n,," + first_bare).encode())
        if err:
            return err, msg
        attrs = dict(kv.split("=", 1) for kv in server_first.decode().split(","))
        salted = hashlib.pbkdf2_hmac(h, password.encode(), base64.b64decode(attrs["s"]),
                                     int(attrs["i"]))
        client_key = hmac.new(salted, b"Client Key", h).digest()
        stored = hashlib.new(h, client_key).digest()
        without_proof = "c=biws,r=" + attrs["r"]
        auth = ",".join([first_bare, server_first.decode(), without_proof]).encode()
        sig = hmac.new(stored, auth, h).digest()
        proof = bytes(x ^ y for x, y in zip(client_key, sig))
        final = without_proof + ",p=" + base64.b64encode(proof).decode()
        err, msg, _, _ = authenticate(c, final.encode())
        if err:
            assert c.is_closed_by_peer(timeout=5.0)
        return err, msg


def test_kafka_python_scram(shared_scram_broker):
    from kafka import KafkaProducer
    b = shared_scram_broker
    harness.create_topics(b, [("sasl-kp-scram", 1, None)])
    assert alter_scram(b.port, [scram_upsertion("erin", "erin-pw", "SCRAM-SHA-512")]) == \
        {"erin": (0, None)}
    p = KafkaProducer(bootstrap_servers="127.0.0.1:%d" % b.sasl_port,
                      security_protocol="SASL_PLAINTEXT", sasl_mechanism="SCRAM-SHA-512",
                      sasl_plain_username="erin", sasl_plain_password="erin-pw")
    p.send("sasl-kp-scram", b"kp", partition=0).get(timeout=30)
    p.close()
    assert topic_end(b, "sasl-kp-scram") == 1


def test_alter_scram_refusals_change_nothing(scram_broker):
    b = scram_broker
    ok = scram_upsertion("fay", "fay-pw", "SCRAM-SHA-256")
    res = alter_scram(b.port, [
        ok,
        scram_upsertion("gus", "x", "SCRAM-SHA-256", iterations=1000),
        ("hal", 3, 4096, b"salt", b"x" * 32),                      # unknown mechanism
        ("ivy", 1, 4096, b"salt", b"short"),                       # salted password length
        scram_upsertion("jo", "a", "SCRAM-SHA-256"), scram_upsertion("jo", "b", "SCRAM-SHA-256"),
        scram_upsertion("", "a", "SCRAM-SHA-256"),
    ], deletions=[("kim", 1)])
    assert res["fay"] == (0, None)
    assert res["gus"][0] == 93 and res["ivy"][0] == 93 and res[""][0] == 93
    assert res["hal"][0] == 33
    assert res["jo"][0] == 92
    assert res["kim"][0] == 91
    err, users = describe_scram(b.port)
    assert users == {"fay": (0, [(1, 4096)])}
    assert describe_scram(b.port, ["gus"])[1] == {"gus": (91, [])}
    # Deletion works, and the user can no longer log in.
    assert scram_login_works(b, "SCRAM-SHA-256", "fay", "fay-pw")
    assert alter_scram(b.port, deletions=[("fay", 1)]) == {"fay": (0, None)}
    assert describe_scram(b.port)[1] == {}
    assert not scram_login_works(b, "SCRAM-SHA-256", "fay", "fay-pw")


def test_three_nodes_sasl_listeners_forwarded_alter_and_replicated_users(tmp_path):
    """Three voters, each with a SASL listener: Metadata on a SASL listener names every
    broker's SASL address (and on PLAINTEXT the PLAINTEXT ones); a SCRAM user made on a
    broker that is not the controller (forwarded) can log in on every broker."""
    from confluent_kafka.admin import AdminClient
    nodes = [harness.TallyBroker(tmp_path / ("n%d" % i), node_id=i) for i in (1, 2, 3)]
    quorum = ",".join("%d@127.0.0.1:%d" % (n.node_id, n.controller_port) for n in nodes)
    for n in nodes:
        n.sasl_port = harness.free_port()
        n.settings.update(sasl_settings(
            n, n.sasl_port, **{"listener.name.sasl_plaintext.sasl.enabled.mechanisms":
                               "PLAIN,SCRAM-SHA-256"}))
        n.settings.update({"controller.quorum.voters": quorum, "cluster.id": "saslThreeNodes1"})
    try:
        for n in nodes:
            n.start(wait=False)
        for n in nodes:
            n.wait_ready(60)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with nodes[0].conn() as c:
                md = c.metadata(version=1)
            if len(md["brokers"]) == 3:
                break
            time.sleep(0.2)
        assert sorted(p for _, _, p in md["brokers"]) == sorted(n.port for n in nodes)
        ctl = md["controller_id"]
        for n in nodes:
            deadline = time.monotonic() + 30
            while True:
                with kproto.Conn(n.sasl_port) as c:
                    assert handshake(c)[0] == 0
                    assert authenticate(c, plain_token("alice", "alice-secret"))[0] == 0
                    smd = c.metadata(version=1)
                got = sorted(p for _, _, p in smd["brokers"])
                if len(got) == 3 or time.monotonic() > deadline:
                    break
                time.sleep(0.2)
            assert got == sorted(x.sasl_port for x in nodes)

        other = next(n for n in nodes if n.node_id != ctl)
        assert alter_scram(other.port, [scram_upsertion("zed", "zed-pw", "SCRAM-SHA-256")]) == \
            {"zed": (0, None)}
        for n in nodes:
            deadline = time.monotonic() + 30
            while describe_scram(n.port, ["zed"])[1] != {"zed": (0, [(1, 4096)])}:
                assert time.monotonic() < deadline, "zed never reached node %d" % n.node_id
                time.sleep(0.1)
            assert raw_scram_on(n, "zed", "zed-pw") == (0, None)
        a = AdminClient({"bootstrap.servers": "127.0.0.1:%d" % nodes[2].sasl_port,
                         "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-256",
                         "sasl.username": "zed", "sasl.password": "zed-pw"})
        assert len(a.list_topics(timeout=20).brokers) == 3
    finally:
        problems = []
        for n in nodes:
            try:
                if n.alive():
                    n.stop(check=True)
            except AssertionError as e:
                problems.append(str(e))
        assert not problems, "\n".join(problems)


def raw_scram_on(node, user, password):
    class B:
        sasl_port = node.sasl_port
    return raw_scram(B, user, password)


def test_a_leader_without_the_clients_listener_is_not_available_to_it(tmp_path):
    """Two voters, only node 1 with a SASL listener: a SASL client's Metadata lists node 1
    alone, and a partition led by node 2 is LEADER_NOT_AVAILABLE with no leader for it,
    while PLAINTEXT clients see both brokers and both leaders."""
    nodes = [harness.TallyBroker(tmp_path / ("n%d" % i), node_id=i) for i in (1, 2)]
    quorum = ",".join("%d@127.0.0.1:%d" % (n.node_id, n.controller_port) for n in nodes)
    nodes[0].sasl_port = harness.free_port()
    nodes[0].settings.update(sasl_settings(nodes[0], nodes[0].sasl_port))
    for n in nodes:
        n.settings.update({"controller.quorum.voters": quorum, "cluster.id": "saslTwoNodesHet1"})
    try:
        for n in nodes:
            n.start(wait=False)
        for n in nodes:
            n.wait_ready(60)
        harness.create_topics(nodes[0], [("het", 4, None)])
        deadline = time.monotonic() + 30
        while True:
            with nodes[0].conn() as c:
                md = c.metadata(["het"], version=1)
            leaders = {p: v[1] for p, v in md["topics"]["het"][2].items()}
            if len(md["brokers"]) == 2 and all(x >= 0 for x in leaders.values()) and \
                    len(leaders) == 4:
                break
            assert time.monotonic() < deadline, md
            time.sleep(0.2)
        assert set(leaders.values()) == {1, 2}, leaders  # placement spreads leaders
        with kproto.Conn(nodes[0].sasl_port) as c:
            assert handshake(c)[0] == 0
            assert authenticate(c, plain_token("alice", "alice-secret"))[0] == 0
            smd = c.metadata(["het"], version=1)
        assert [(i, p) for i, _, p in smd["brokers"]] == [(1, nodes[0].sasl_port)]
        for p, (err, leader, _, _) in smd["topics"]["het"][2].items():
            if leaders[p] == 1:
                assert (err, leader) == (0, 1)
            else:
                assert (err, leader) == (5, -1)
    finally:
        for n in nodes:
            if n.alive():
                n.stop(check=True)


def test_tally_users_scram_set_describe_delete(shared_scram_broker, tmp_path):
    # `tally users scram` (kafka-configs.sh --entity-type users): the CLI salts the password
    # itself and sends only the salted one; real clients then log in with it.
    b = shared_scram_broker

    def tally(*args, stdin=None):
        return subprocess.run([harness.TALLY, "-b", b.bootstrap, "users", "scram"] + list(args),
                              input=stdin, capture_output=True, text=True, timeout=60)
    r = tally("set", "lee", "--mechanism", "SCRAM-SHA-256,SCRAM-SHA-512", "--iterations", "8192",
              "--password-stdin", stdin="lee-pw\n")
    assert (r.returncode, r.stdout) == (0, "Completed updating config for user lee.\n"), r
    r = tally("set", "max", "--mechanism", "SCRAM-SHA-512", "--password", "max-pw")
    assert r.returncode == 0, r
    harness.create_topics(b, [("sasl-cli-scram", 1, None)])
    scram_roundtrip(b, "sasl-cli-scram", "SCRAM-SHA-512", "lee", "lee-pw", b"cli-512")
    assert scram_login_works(b, "SCRAM-SHA-256", "lee", "lee-pw")
    assert raw_scram(b, "max", "max-pw", "SCRAM-SHA-512")[0] == 0
    # Describe shows mechanisms and iterations, never a password or salt (the whole output is
    # these lines).
    r = tally("describe")  # every user: also those of the other tests on this broker
    assert r.returncode == 0 and sorted(ln for ln in r.stdout.splitlines()
                                        if "'lee'" in ln or "'max'" in ln) == [
        "SCRAM credential configs for user-principal 'lee' are SCRAM-SHA-256=iterations=8192, "
        "SCRAM-SHA-512=iterations=8192",
        "SCRAM credential configs for user-principal 'max' are SCRAM-SHA-512=iterations=4096"], r
    r = tally("describe", "max", "nobody")
    assert (r.returncode, r.stdout) == (0, "SCRAM credential configs for user-principal 'max' "
                                           "are SCRAM-SHA-512=iterations=4096\n"), r
    # Delete one mechanism, then the other: each stops logging in at once.
    r = tally("delete", "lee", "--mechanism", "SCRAM-SHA-512")
    assert r.returncode == 0, r
    assert raw_scram(b, "lee", "lee-pw", "SCRAM-SHA-512")[0] == 58
    assert raw_scram(b, "lee", "lee-pw", "SCRAM-SHA-256")[0] == 0
    assert tally("delete", "lee", "--mechanism", "SCRAM-SHA-256").returncode == 0
    assert raw_scram(b, "lee", "lee-pw", "SCRAM-SHA-256")[0] == 58
    assert tally("describe", "lee").stdout == ""
    r = tally("delete", "lee", "--mechanism", "SCRAM-SHA-256")
    assert r.returncode == 1 and "RESOURCE_NOT_FOUND" in r.stderr, r
    # kafka-configs.sh --entity-type users (a link to tally by that name) maps onto it.
    kafka_configs = str(tmp_path / "kafka-configs.sh")
    os.symlink(os.path.abspath(harness.TALLY), kafka_configs)

    def kcfg(*args):
        return subprocess.run([kafka_configs, "--bootstrap-server", b.bootstrap, "--entity-type",
                               "users"] + list(args), capture_output=True, text=True, timeout=60)
    r = kcfg("--entity-name", "nia", "--alter", "--add-config",
             "SCRAM-SHA-256=[iterations=8192,password=nia-pw],SCRAM-SHA-512=[password=nia-pw]")
    assert r.returncode == 0, r
    r = kcfg("--entity-name", "nia", "--describe")
    assert r.stdout == ("SCRAM credential configs for user-principal 'nia' are "
                        "SCRAM-SHA-256=iterations=8192, SCRAM-SHA-512=iterations=4096\n"), r
    assert raw_scram(b, "nia", "nia-pw", "SCRAM-SHA-512")[0] == 0
    assert kcfg("--entity-name", "nia", "--alter", "--delete-config",
                "SCRAM-SHA-256").returncode == 0
    assert raw_scram(b, "nia", "nia-pw", "SCRAM-SHA-256")[0] == 58
    # On the SASL listener, with the client security settings (-X, or a properties file):
    # SCRAM-SHA-512 as max, PLAIN as alice; a wrong password and no login are refused.
    def sasl_tally(*args):
        return subprocess.run([harness.TALLY, "-b", "127.0.0.1:%d" % b.sasl_port, "users",
                               "scram", "describe", "max"] + list(args),
                              capture_output=True, text=True, timeout=60)
    max_line = "SCRAM credential configs for user-principal 'max' are " \
               "SCRAM-SHA-512=iterations=4096\n"
    r = sasl_tally("-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanism=SCRAM-SHA-512",
                   "-X", "sasl.username=max", "-X", "sasl.password=max-pw")
    assert (r.returncode, r.stdout) == (0, max_line), r
    props = tmp_path / "client.properties"
    props.write_text("# alice\nsecurity.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
                     "sasl.username=alice\nsasl.password=alice-secret\n")
    r = sasl_tally("--command-config", str(props))
    assert (r.returncode, r.stdout) == (0, max_line), r
    r = sasl_tally("-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanism=SCRAM-SHA-512",
                   "-X", "sasl.username=max", "-X", "sasl.password=wrong")
    assert r.returncode == 1 and "SASL authentication as max failed" in r.stderr, r
    assert sasl_tally().returncode == 1
    # Before the command the settings are global: librdkafka's commands take them too.
    login = ["-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanism=SCRAM-SHA-512",
             "-X", "sasl.username=max", "-X", "sasl.password=max-pw"]
    for cmd, want in ((["users", "scram", "describe", "max"], max_line),
                      (["topics", "list"], "sasl-cli-scram\n")):
        r = subprocess.run([harness.TALLY, "-b", "127.0.0.1:%d" % b.sasl_port] + login + cmd,
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and want in r.stdout, r
    assert sasl_tally("-X", "security.protocol=SSL").returncode == 1
    # Refused on the command line: no password, two, too few iterations, another mechanism.
    for args in (["set", "x", "--mechanism", "SCRAM-SHA-256"],
                 ["set", "x", "--mechanism", "SCRAM-SHA-256", "--password", "a",
                  "--password-stdin"],
                 ["set", "x", "--mechanism", "SCRAM-SHA-256", "--password", "a",
                  "--iterations", "100"],
                 ["set", "x", "--mechanism", "PLAIN", "--password", "a"],
                 ["rename", "x"]):
        assert tally(*args).returncode == 2, args
