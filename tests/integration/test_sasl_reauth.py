# SPDX-License-Identifier: Apache-2.0
"""SASL re-authentication (KIP-368, issue 17): connections.max.reauth.ms gives each session a
lifetime, answered in SaslAuthenticate v1+; past it any request but a SaslHandshake closes the
connection unanswered; a re-authentication on the open connection renews the lifetime, leaves
the answers of earlier requests alone, and may change neither the principal nor the mechanism.
Raw-protocol cases (kproto framing) on its SASL_PLAINTEXT listener (sessions of 1.5 s,
SCRAM-SHA-256's 4 s, set per mechanism) and OTHER (sessions that never end), and meanwhile, in
the background on its KJS listener (1.5 s), a KafkaJS producer that re-authenticates across
several lifetimes and a librdkafka one that reconnects instead; all on one broker. The
counters are per listener, so the two groups do not see each other's."""
import json
import os
import re
import shutil
import struct
import subprocess
import time

import pytest

import harness
import kproto
from test_metrics import parse, scrape
from test_sasl import (JAAS, alter_scram, authenticate, handshake, parse_authenticate,
                       plain_token, sasl_authenticate_request, sasl_handshake_request,
                       scram_upsertion, SCRAM_MECHS)

LIFETIME_MS = 1500
SCRAM_LIFETIME_MS = 4000
TOPIC = "reauth"
KJS_TOPIC = "reauth-kjs"
KAFKAJS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "compat", "kafkajs")


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    b = harness.TallyBroker(tmp_path_factory.mktemp("reauth"))
    b.sasl_port, b.other_port, b.kjs_port, b.metrics_port = (harness.free_port()
                                                              for _ in range(4))
    b.settings.update({
        "listeners": "PLAINTEXT://127.0.0.1:%d,SASL_PLAINTEXT://127.0.0.1:%d,"
                     "OTHER://127.0.0.1:%d,KJS://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d" % (
                         b.port, b.sasl_port, b.other_port, b.kjs_port, b.controller_port),
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,"
                                          "OTHER:SASL_PLAINTEXT,KJS:SASL_PLAINTEXT,"
                                          "CONTROLLER:PLAINTEXT",
        "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
        "listener.name.other.sasl.enabled.mechanisms": "PLAIN",
        "listener.name.other.plain.sasl.jaas.config": JAAS,
        "listener.name.kjs.sasl.enabled.mechanisms": "PLAIN",
        "listener.name.kjs.plain.sasl.jaas.config": JAAS,
        "connections.max.reauth.ms": str(LIFETIME_MS),
        "listener.name.sasl_plaintext.scram-sha-256.connections.max.reauth.ms":
            str(SCRAM_LIFETIME_MS),
        "listener.name.other.connections.max.reauth.ms": "0",
        "metrics.listener": "127.0.0.1:%d" % b.metrics_port,
    })
    b.start()
    harness.create_topics(b, [(TOPIC, 1, None), (KJS_TOPIC, 1, None)])
    b.clients = start_clients(b)
    yield b
    proc = b.clients.get("proc")
    if proc is not None and proc.poll() is None:
        proc.kill()
        proc.communicate()
    b.clients.pop("producer", None)
    b.stop(check=True)


KJS_N, KJS_GAP_MS = 31, 100


def start_clients(b):
    """On the KJS listener, in the background while the raw cases run: librdkafka 2.0.2
    (Debian's; re-authentication came in its 2.2.0) produces one record now, then KafkaJS
    produces KJS_N, one every KJS_GAP_MS, over about two lifetimes. The last test waits for
    KafkaJS, then has librdkafka produce again, past its session's end."""
    from confluent_kafka import Producer
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        return {"skip": "node/npm not installed: cannot run the KafkaJS re-authentication test"}
    if not os.path.isdir(os.path.join(KAFKAJS, "node_modules", "kafkajs")):
        r = subprocess.run([npm, "install", "--no-audit", "--no-fund"], cwd=KAFKAJS,
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, "npm install failed:\n%s\n%s" % (r.stdout[-2000:],
                                                                    r.stderr[-2000:])
    k = {"before": counters(b, "KJS"), "start": harness.list_offset(b, KJS_TOPIC, 0)[2],
         "reports": []}
    k["producer"] = Producer({"bootstrap.servers": "127.0.0.1:%d" % b.kjs_port,
                              "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
                              "sasl.username": "alice", "sasl.password": "alice-secret",
                              "enable.idempotence": True})
    k["producer"].produce(KJS_TOPIC, b"rdkafka-before", partition=0,
                          on_delivery=lambda err, msg: k["reports"].append(err))
    assert k["producer"].flush(20) == 0 and k["reports"] == [None]
    # KafkaJS re-authenticates once the lifetime less this threshold has passed since its
    # last authentication: here after 1.1 s, within the 1.5 s and past Kafka's 1 s minimum.
    k["proc"] = subprocess.Popen(
        [node, "reauth_produce.js", "127.0.0.1:%d" % b.kjs_port, "alice", "alice-secret",
         KJS_TOPIC, str(KJS_N), str(KJS_GAP_MS), "400"],
        cwd=KAFKAJS, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ, KAFKAJS_NO_PARTITIONER_WARNING="1"))
    return k


def login(port, user="alice", password="alice-secret", version=1):
    """A connection authenticated with PLAIN → (conn, lifetime, monotonic time it was done)."""
    c = kproto.Conn(port)
    assert handshake(c)[0] == 0
    err, msg, _, lifetime = authenticate(c, plain_token(user, password), version)
    assert err == 0, msg
    return c, lifetime, time.monotonic()


def sleep_until(t):
    time.sleep(max(0.0, t - time.monotonic()))


def counters(b, listener="SASL_PLAINTEXT"):
    m = parse(scrape(b.metrics_port))

    def get(name, **labels):
        return m.get((name, frozenset(labels.items())), 0)
    return {
        "ok": get("tally_sasl_reauthentications_total", listener=listener, result="success"),
        "failed": get("tally_sasl_reauthentications_total", listener=listener,
                      result="failure"),
        "expired": get("tally_sasl_expired_connections_total", listener=listener),
    }


def test_the_lifetime_answered_is_the_mechanisms(rb):
    c, lifetime, _ = login(rb.sasl_port)
    assert lifetime == LIFETIME_MS
    c.close()
    # SaslAuthenticate v0 has no field for it: the answer ends after AuthBytes.
    with kproto.Conn(rb.sasl_port) as c:
        assert handshake(c)[0] == 0
        c.send(sasl_authenticate_request(c.next_corr(), plain_token("alice", "alice-secret"),
                                         version=0))
        _, body = c.recv_response()
        assert body == struct.pack(">hhi", 0, -1, 0)
    # listener.name.sasl_plaintext.scram-sha-256.connections.max.reauth.ms over the broker's.
    assert alter_scram(rb.port, [scram_upsertion("sam", "sam-pw", "SCRAM-SHA-256")]) == \
        {"sam": (0, None)}
    with kproto.Conn(rb.sasl_port) as c:
        assert scram_login(c, "sam", "sam-pw") == (0, SCRAM_LIFETIME_MS)
    # listener.name.other.connections.max.reauth.ms=0: the session never ends, and a second
    # handshake is the illegal state it always was (answered; the connection stays).
    c, lifetime, _ = login(rb.other_port)
    with c:
        assert lifetime == 0
        assert handshake(c)[0] == 34
        assert c.metadata(version=1)["brokers"]


def scram_login(c, user, password):
    """SCRAM-SHA-256 over SaslAuthenticate v1 → (error, SessionLifetimeMs) of its last step."""
    import base64
    import hashlib
    import hmac
    h = SCRAM_MECHS["SCRAM-SHA-256"][1]
    assert handshake(c, "SCRAM-SHA-256")[0] == 0
    first_bare = "n=%s,r=reauthnonce" % user
    err, _, server_first, _ = authenticate(c, ("n,," + first_bare).encode())
    assert err == 0
    attrs = dict(kv.split("=", 1) for kv in server_first.decode().split(","))
    salted = hashlib.pbkdf2_hmac(h, password.encode(), base64.b64decode(attrs["s"]),
                                 int(attrs["i"]))
    client_key = hmac.new(salted, b"Client Key", h).digest()
    without_proof = "c=biws,r=" + attrs["r"]
    auth = ",".join([first_bare, server_first.decode(), without_proof]).encode()
    sig = hmac.new(hashlib.new(h, client_key).digest(), auth, h).digest()
    proof = bytes(x ^ y for x, y in zip(client_key, sig))
    err, _, _, lifetime = authenticate(
        c, (without_proof + ",p=" + base64.b64encode(proof).decode()).encode())
    return err, lifetime


def test_expiry_closes_and_reauthentication_renews(rb):
    """One timeline for four connections, all authenticated at about t0: `gone` is used
    after its session ended and is closed; `raw` (SaslHandshake v0 and a bare token, which is
    told no lifetime) likewise; `renewed` re-authenticates at t0 + 1 s, pipelined behind a
    long-polling Fetch whose answer comes first, and is still served past its first session's
    end; `late` re-authenticates after its session ended, which is allowed."""
    before = counters(rb)
    gone, _, t_gone = login(rb.sasl_port)
    raw = kproto.Conn(rb.sasl_port)
    assert handshake(raw, version=0) == (0, ["PLAIN", "SCRAM-SHA-256"])
    tok = plain_token("alice", "alice-secret")
    raw.send(struct.pack(">i", len(tok)) + tok)
    assert raw.recv_exact(4) == b"\0\0\0\0"
    t_raw = time.monotonic()
    late, _, t_late = login(rb.sasl_port)
    # Last, so that every deadline below counts from it at the latest.
    renewed, _, t_renewed = login(rb.sasl_port)
    for c in (gone, raw, late, renewed):
        assert c.metadata(version=1)["brokers"]

    sleep_until(t_renewed + 1.0)
    end = harness.list_offset(rb, TOPIC, 0)[2]
    fetch = renewed.next_corr()
    renewed.send(kproto.fetch_request(fetch, {TOPIC: {0: end}}, max_wait_ms=400))
    hs, au = renewed.next_corr(), renewed.next_corr()
    renewed.send(sasl_handshake_request(hs, "PLAIN") +
                 sasl_authenticate_request(au, plain_token("alice", "alice-secret")))
    assert renewed.recv_response()[0] == fetch
    got, body = renewed.recv_response()
    assert got == hs and body[:2] == b"\0\0"
    got, body = renewed.recv_response()
    assert got == au
    err, _, _, lifetime = parse_authenticate(body)
    assert (err, lifetime) == (0, LIFETIME_MS)
    # At most one re-authentication a second (Kafka's rule): a handshake this soon is an
    # illegal state, answered, and the connection stays.
    assert handshake(renewed)[0] == 34

    # Past every first session's end, well before the renewed one's.
    sleep_until(t_renewed + LIFETIME_MS / 1000.0 + 0.15)
    assert renewed.metadata(version=1)["brokers"]
    for c in (gone, raw):
        c.send(kproto.metadata_request(c.next_corr()))
        assert c.is_closed_by_peer(timeout=5.0)
        c.close()
    assert handshake(late)[0] == 0
    assert authenticate(late, plain_token("alice", "alice-secret"))[:2] == (0, None)
    assert late.metadata(version=1)["brokers"]
    renewed.close()
    late.close()

    after = counters(rb)
    assert after["expired"] - before["expired"] == 2
    assert after["ok"] - before["ok"] == 2
    assert after["failed"] == before["failed"]
    log = rb.stderr_all()
    assert re.search(r"Metadata from 127\.0\.0\.1:\d+ on listener SASL_PLAINTEXT after the SASL "
                     r"session of User:alice expired \d+ ms ago \(connections\.max\.reauth\.ms\); "
                     r"closing", log), log[-3000:]


def test_reauthentication_as_another_user_is_refused_and_closed(rb):
    before = counters(rb)
    c, _, _ = login(rb.sasl_port)
    with c:
        assert handshake(c)[0] == 0
        err, msg, _, _ = authenticate(c, plain_token("admin", "admin-secret"))
        assert err == 58
        assert msg == "Cannot change principals during re-authentication from User:alice to " \
                      "User:admin"
        assert c.is_closed_by_peer(timeout=5.0)
    assert counters(rb)["failed"] - before["failed"] == 1
    assert "failed re-authentication from 127.0.0.1" in rb.stderr_all()
    assert "(the connection is authenticated as 'User:alice': a principal cannot change)" in \
        rb.stderr_all()


def test_reauthentication_with_another_mechanism_is_refused_and_closed(rb):
    c, _, _ = login(rb.sasl_port)
    with c:
        # As in Kafka: the handshake is accepted, the exchange fails at its first token, with
        # no answer.
        assert handshake(c, "SCRAM-SHA-256")[0] == 0
        c.send(sasl_authenticate_request(c.next_corr(), b"n,,n=alice,r=abc"))
        assert c.is_closed_by_peer(timeout=5.0)
    assert "(the session was authenticated with PLAIN: the mechanism cannot change)" in \
        rb.stderr_all()


def test_failed_reauthentication_and_requests_during_one_close(rb):
    c, _, _ = login(rb.sasl_port)
    with c:
        assert handshake(c)[0] == 0
        err, msg, _, _ = authenticate(c, plain_token("alice", "wrong"))
        assert (err, msg) == (58, "Authentication failed: Invalid username or password")
        assert c.is_closed_by_peer(timeout=5.0)
    before = harness.list_offset(rb, TOPIC, 0)[2]
    c, _, _ = login(rb.sasl_port)
    with c:
        assert handshake(c)[0] == 0
        c.send(kproto.produce_request(c.next_corr(),
                                      {TOPIC: {0: kproto.record_batch([(None, b"x")])}}))
        assert c.is_closed_by_peer(timeout=5.0)
    assert harness.list_offset(rb, TOPIC, 0)[2] == before
    assert "Produce from 127.0.0.1" in rb.stderr_all()
    assert "during SASL re-authentication; closing" in rb.stderr_all()


def test_kafkajs_reauthenticates_and_librdkafka_reconnects(rb):
    """KafkaJS 2.2.4 re-authenticated on its open connection and produced across several
    session lifetimes without an error and without being closed. librdkafka 2.0.2 does not
    re-authenticate: its connection is closed at its first request past the lifetime, and it
    reconnects, authenticates again and delivers."""
    k = rb.clients
    if "skip" in k:
        pytest.skip(k["skip"])
    stdout, stderr = k["proc"].communicate(timeout=60)
    assert k["proc"].returncode == 0, "node reauth_produce.js rc=%d:\n%s\n%s" % (
        k["proc"].returncode, stdout, stderr[-4000:])
    out = json.loads(stdout.strip().splitlines()[-1])
    assert out["acked"] == KJS_N and out["failures"] == [] and out["errors"] == [], out
    assert out["serverCloses"] == 0, out
    assert out["ms"] >= 2 * LIFETIME_MS, out
    # Each connection KafkaJS opened authenticated once, then again on the same connection
    # (about every 1.1 s while it produced).
    assert out["auths"] - out["connects"] >= 2, out
    # librdkafka's session ended meanwhile: its next request closes the connection, and the
    # record is delivered over a new one.
    p = k["producer"]
    p.produce(KJS_TOPIC, b"rdkafka-after", partition=0,
              on_delivery=lambda err, msg: k["reports"].append(err))
    assert p.flush(30) == 0 and k["reports"] == [None, None], k["reports"]
    before, after = k["before"], counters(rb, "KJS")
    assert after["expired"] > before["expired"]
    assert after["failed"] == before["failed"]
    assert after["ok"] - before["ok"] == out["auths"] - out["connects"], (before, after, out)
    assert harness.list_offset(rb, KJS_TOPIC, 0)[2] == k["start"] + KJS_N + 2
