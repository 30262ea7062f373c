"""SASL_PLAINTEXT with PLAIN (issue 17, first slice): a SASL listener beside the PLAINTEXT
one, real clients (confluent-kafka: produce, a consumer group, a transaction; kafka-python,
which sends SaslHandshake v0 and raw tokens), and the refusals — wrong password, unknown user,
disabled mechanism, SaslAuthenticate before SaslHandshake, requests before authentication —
each while another client is served and with nothing changed."""
import struct
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
      "CONTROLLER:PLAINTEXT"}, "SASL_SSL is not implemented yet"),
    ({"listener.name.sasl_plaintext.sasl.enabled.mechanisms": "GSSAPI"},
     "GSSAPI is not supported"),
    ({"listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN,OAUTHBEARER"},
     "OAUTHBEARER is not supported"),
    ({"listener.name.sasl_plaintext.plain.sasl.jaas.config":
      'org.apache.kafka.common.security.plain.PlainLoginModule required user_a="x"'},
     "plain.sasl.jaas.config"),
    ({"listener.name.sasl_plaintext.plain.sasl.jaas.config": None},
     "has no listener.name.sasl_plaintext.plain.sasl.jaas.config"),
    ({"inter.broker.listener.name": "SASL_PLAINTEXT"}, "SASL between brokers is not implemented"),
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


def test_ssl_listener_is_refused(broker_factory):
    b = broker_factory(start=False)
    port = harness.free_port()
    b.settings["listeners"] = "PLAINTEXT://127.0.0.1:%d,SSL://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d" % (
        b.port, port, b.controller_port)
    with pytest.raises(RuntimeError):
        b.start()
    assert "security protocol SSL is not implemented yet" in b.stderr_all()
