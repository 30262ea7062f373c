"""TLS listeners (issue 17, second slice): SSL and SASL_SSL beside PLAINTEXT on one tallyd,
with certificates made here by the openssl CLI. Real clients (confluent-kafka: produce, a
consumer group, a transaction; kafka-python; kcat), SASL PLAIN and SCRAM over TLS, mutual TLS
with a principal mapping rule, and the refusals — a client certificate from another CA, an
expired one, none where one is required, plaintext to a TLS port, TLS to a plaintext port, a
handshake that never completes — each with another client served meanwhile and nothing
appended. Start-up refusals of bad ssl.* settings name the key."""
import os
import shutil
import socket
import ssl
import subprocess
import time
import uuid

import pytest

import harness
import kproto
from test_sasl import alter_scram, produce_request, scram_upsertion, topic_end

JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required '
        'user_alice="alice-secret";')
KS_PASS = "ks-secret"


def openssl(*args, cwd):
    r = subprocess.run(["openssl"] + list(args), cwd=cwd, capture_output=True, text=True)
    assert r.returncode == 0, "openssl %s: %s" % (" ".join(args), r.stderr)


def make_cert(d, name, subj, ca=None, ext=None):
    """An EC P-256 key and a certificate for subj, signed by ca ("ca" files) or self-signed."""
    key, crt = name + ".key", name + ".pem"
    if ca is None:
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                "-nodes", "-keyout", key, "-out", crt, "-days", "2", "-subj", subj, cwd=d)
        return
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", key, "-out", name + ".csr", "-subj", subj, cwd=d)
    extra = ["-extfile", ext] if ext else []
    openssl("x509", "-req", "-in", name + ".csr", "-CA", ca + ".pem", "-CAkey", ca + ".key",
            "-CAcreateserial", "-out", crt, "-days", "2", *extra, cwd=d)


def make_expired(d, name, subj, ca):
    """A certificate whose validity ended in 2020 (`openssl ca` takes explicit dates on
    OpenSSL 3.0, where `x509 -req` does not)."""
    os.makedirs(os.path.join(d, "newcerts"), exist_ok=True)
    open(os.path.join(d, "index.txt"), "w").close()
    with open(os.path.join(d, "serial"), "w") as f:
        f.write("1000\n")
    with open(os.path.join(d, "ca.cnf"), "w") as f:
        f.write("[ca]\ndefault_ca=tca\n[tca]\ndir=%s\ndatabase=$dir/index.txt\n"
                "new_certs_dir=$dir/newcerts\nserial=$dir/serial\ndefault_md=sha256\n"
                "policy=pol\n[pol]\ncommonName=supplied\norganizationName=optional\n"
                "organizationalUnitName=optional\n" % d)
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", name + ".key", "-out", name + ".csr", "-subj", subj, cwd=d)
    openssl("ca", "-batch", "-config", "ca.cnf", "-cert", ca + ".pem", "-keyfile", ca + ".key",
            "-in", name + ".csr", "-out", name + ".pem", "-startdate", "20200101000000Z",
            "-enddate", "20200102000000Z", "-notext", cwd=d)


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("pki"))
    with open(os.path.join(d, "san.ext"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    make_cert(d, "ca", "/O=Tally Test/CN=Tally Test CA")
    make_cert(d, "server", "/O=Tally Test/CN=localhost", ca="ca", ext="san.ext")
    make_cert(d, "alice", "/O=Tally Test/OU=eng/CN=alice", ca="ca")
    make_cert(d, "other-ca", "/O=Elsewhere/CN=Other CA")
    make_cert(d, "mallory", "/O=Tally Test/OU=eng/CN=mallory", ca="other-ca")
    make_expired(d, "old", "/O=Tally Test/OU=eng/CN=old", ca="ca")
    # The ELSEWHERE listener's certificate: the right CA, another host's name.
    with open(os.path.join(d, "elsewhere.ext"), "w") as f:
        f.write("subjectAltName=DNS:elsewhere.example\n")
    make_cert(d, "elsewhere", "/O=Tally Test/CN=elsewhere.example", ca="ca", ext="elsewhere.ext")
    with open(os.path.join(d, "elsewhere-ks.pem"), "w") as f:
        f.write(open(os.path.join(d, "elsewhere.key")).read() +
                open(os.path.join(d, "elsewhere.pem")).read())
    # alice's key encrypted, for ssl.key.password.
    openssl("pkey", "-in", "alice.key", "-aes256", "-passout", "pass:" + KS_PASS, "-out",
            "alice-enc.key", cwd=d)
    with open(os.path.join(d, "server-ks.pem"), "w") as f:
        f.write(open(os.path.join(d, "server.key")).read() +
                open(os.path.join(d, "server.pem")).read())
    openssl("pkcs12", "-export", "-in", "server.pem", "-inkey", "server.key", "-certfile",
            "ca.pem", "-out", "server.p12", "-passout", "pass:" + KS_PASS, cwd=d)
    return d


def p(pki, name):
    return os.path.join(pki, name)


def one_line(path):
    """Inline PEM as a properties file holds it: one line."""
    return " ".join(open(path).read().split("\n")).strip()


def tls_settings(b, pki):
    """PLAINTEXT (the harness's), SSL (PEM keystore file, no client auth), MTLS (PKCS12
    keystore, client certificates required and mapped), SASL_SSL (inline PEM keystore, PLAIN
    and SCRAM) and HS (SSL with a 1 s connections.max.idle.ms: the handshake deadline)."""
    b.ports = {n: harness.free_port() for n in ("SSL", "MTLS", "SASL_SSL", "HS")}
    lst = ",".join("%s://127.0.0.1:%d" % (n, port) for n, port in b.ports.items())
    return {
        "listeners": "PLAINTEXT://127.0.0.1:%d,%s,CONTROLLER://127.0.0.1:%d" %
                     (b.port, lst, b.controller_port),
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SSL:SSL,MTLS:SSL,HS:SSL,"
                                          "SASL_SSL:SASL_SSL,CONTROLLER:PLAINTEXT",
        "ssl.keystore.location": p(pki, "server-ks.pem"),
        "listener.name.mtls.ssl.keystore.type": "PKCS12",
        "listener.name.mtls.ssl.keystore.location": p(pki, "server.p12"),
        "listener.name.mtls.ssl.keystore.password": KS_PASS,
        "listener.name.mtls.ssl.truststore.location": p(pki, "ca.pem"),
        "listener.name.mtls.ssl.client.auth": "required",
        "listener.name.mtls.ssl.principal.mapping.rules":
            "RULE:^CN=([^,]+),OU=eng,O=Tally Test$/$1/L,DEFAULT",
        "listener.name.sasl_ssl.ssl.keystore.certificate.chain": one_line(p(pki, "server.pem")),
        "listener.name.sasl_ssl.ssl.keystore.key": one_line(p(pki, "server.key")),
        "listener.name.sasl_ssl.sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256",
        "listener.name.sasl_ssl.plain.sasl.jaas.config": JAAS,
        "listener.name.hs.connections.max.idle.ms": "1000",
        "group.initial.rebalance.delay.ms": "0",
    }


@pytest.fixture(scope="module")
def tb(tmp_path_factory, pki):
    b = harness.TallyBroker(tmp_path_factory.mktemp("tls"))
    b.settings.update(tls_settings(b, pki))
    # For the tally CLI's cases: ELSEWHERE serves a certificate for another host name, and the
    # StandardAuthorizer is on (so that `tally acls` has ACLs to list) with everyone allowed
    # where no ACL is found, which keeps every other case as it was (their resources have none).
    b.ports["ELSEWHERE"] = harness.free_port()
    b.settings["listeners"] = b.settings["listeners"].replace(
        ",CONTROLLER://", ",ELSEWHERE://127.0.0.1:%d,CONTROLLER://" % b.ports["ELSEWHERE"])
    b.settings["listener.security.protocol.map"] += ",ELSEWHERE:SSL"
    b.settings.update({
        "listener.name.elsewhere.ssl.keystore.location": p(pki, "elsewhere-ks.pem"),
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "allow.everyone.if.no.acl.found": "true",
    })
    b.pki = pki
    b.start()
    harness.create_topics(b, [("tls-t", 2, None)])
    ok = False
    try:
        yield b
        ok = True
    finally:
        if b.alive():
            try:
                b.stop(check=True)
            except AssertionError:
                ok = False
                raise
            finally:
                if not ok:
                    harness.dump_logs([b])


def ssl_conf(b, listener="SSL", **extra):
    c = {"bootstrap.servers": "127.0.0.1:%d" % b.ports[listener], "security.protocol": "SSL",
         "ssl.ca.location": p(b.pki, "ca.pem")}
    c.update(extra)
    return c


def tls_conn(b, listener="SSL", cert=None, port=None):
    """A kproto.Conn over TLS (verifying the server), with a client certificate if named."""
    ctx = ssl.create_default_context(cafile=p(b.pki, "ca.pem"))
    if cert:
        ctx.load_cert_chain(p(b.pki, cert + ".pem"), p(b.pki, cert + ".key"))
    c = kproto.Conn(port or b.ports[listener], timeout=5.0)
    c.sock = ctx.wrap_socket(c.sock, server_hostname="127.0.0.1")
    return c


def assert_other_client_served(b):
    """A client with a good certificate is served on the mutual-TLS listener meanwhile."""
    with tls_conn(b, "MTLS", cert="alice") as c:
        err, keys = c.api_versions(0)
        assert err == 0 and kproto.PRODUCE in keys


def log_has(b, text, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in b.stderr_all():
            return True
        time.sleep(0.05)
    return False


# ---- clients ------------------------------------------------------------------------------

def test_confluent_produce_group_and_transaction_over_ssl(tb):
    from confluent_kafka import Consumer, KafkaException, Producer
    from confluent_kafka.admin import AdminClient
    md = AdminClient(ssl_conf(tb)).list_topics(timeout=20)
    # The brokers' addresses are those of the listener connected to.
    assert [(m.host, m.port) for m in md.brokers.values()] == [("127.0.0.1", tb.ports["SSL"])]

    before = [topic_end(tb, "tls-t", i) for i in (0, 1)]
    pr = Producer(ssl_conf(tb, **{"enable.idempotence": True}))
    for i in range(20):
        pr.produce("tls-t", value=b"ssl-%d" % i, partition=i % 2)
    assert pr.flush(30) == 0
    tp = Producer(ssl_conf(tb, **{"transactional.id": "tls-txn-" + uuid.uuid4().hex[:8]}))
    tp.init_transactions(30)
    tp.begin_transaction()
    for i in range(5):
        tp.produce("tls-t", value=b"txn-%d" % i, partition=0)
    tp.commit_transaction(30)

    c = Consumer(ssl_conf(tb, **{"group.id": "tls-group", "auto.offset.reset": "earliest",
                                 "isolation.level": "read_committed",
                                 "enable.auto.commit": False}))
    c.subscribe(["tls-t"])
    seen = []
    deadline = time.monotonic() + 60
    while len(seen) < 25 and time.monotonic() < deadline:
        m = c.poll(0.5)
        if m is None:
            continue
        if m.error():
            raise KafkaException(m.error())
        if m.offset() >= before[m.partition()]:
            seen.append(m.value())
    c.commit(asynchronous=False)
    committed = {t.partition: t.offset for t in c.committed(c.assignment(), timeout=20)}
    c.close()
    assert sorted(seen) == sorted([b"ssl-%d" % i for i in range(20)] +
                                  [b"txn-%d" % i for i in range(5)])
    assert committed[1] == before[1] + 10, committed


def test_kafka_python_over_ssl_and_kcat_with_a_client_certificate(tb):
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    start = topic_end(tb, "tls-t", 1)
    kp = KafkaProducer(bootstrap_servers="127.0.0.1:%d" % tb.ports["SSL"],
                       security_protocol="SSL", ssl_cafile=p(tb.pki, "ca.pem"))
    for i in range(3):
        kp.send("tls-t", value=b"kp-%d" % i, partition=1).get(timeout=20)
    kp.close()
    kc = KafkaConsumer(bootstrap_servers="127.0.0.1:%d" % tb.ports["SSL"],
                       security_protocol="SSL", ssl_cafile=p(tb.pki, "ca.pem"),
                       consumer_timeout_ms=10000)
    tp = TopicPartition("tls-t", 1)
    kc.assign([tp])
    kc.seek(tp, start)
    got = []
    for m in kc:
        got.append(m.value)
        if len(got) == 3:
            break
    kc.close()
    assert got == [b"kp-0", b"kp-1", b"kp-2"]

    # kcat (librdkafka) with alice's certificate on the mutual-TLS listener: its principal is
    # the mapping rule's, and what it produced comes back over the same listener.
    if shutil.which("kcat") is None:
        pytest.fail("kcat is not installed (make deps)")
    kcat = ["kcat", "-b", "127.0.0.1:%d" % tb.ports["MTLS"], "-X", "security.protocol=SSL",
            "-X", "ssl.ca.location=" + p(tb.pki, "ca.pem"),
            "-X", "ssl.certificate.location=" + p(tb.pki, "alice.pem"),
            "-X", "ssl.key.location=" + p(tb.pki, "alice.key")]
    start = topic_end(tb, "tls-t", 0)
    r = subprocess.run(kcat + ["-P", "-t", "tls-t", "-p", "0"], input=b"via-kcat\n",
                       capture_output=True, timeout=30)
    assert r.returncode == 0, r.stderr
    r = subprocess.run(kcat + ["-C", "-t", "tls-t", "-p", "0", "-o", str(start), "-e",
                               "-c", "1"], capture_output=True, timeout=30)
    assert r.returncode == 0 and r.stdout == b"via-kcat\n", r
    assert log_has(tb, "on listener MTLS authenticated as User:alice")


def test_large_fetch_over_tls_reads_file_ranges_in_chunks(tb):
    """Fetch answers carry file ranges (sendfile on PLAINTEXT); over TLS they are read on the
    pool in 256 KiB chunks and encrypted: a few MiB must come back whole and in order. The
    produce batches (large frames, decrypted straight into the frame buffer) go over TLS
    too."""
    from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
    harness.create_topics(tb, [("tls-big", 1, None)])
    pr = Producer(ssl_conf(tb, **{"linger.ms": 5, "batch.size": 1 << 20}))
    n = 800
    for i in range(n):
        pr.produce("tls-big", value=(b"%06d" % i) * 700, partition=0)  # 4200 bytes
    assert pr.flush(30) == 0
    c = Consumer(ssl_conf(tb, **{"group.id": "tls-big", "enable.auto.commit": False,
                                 "fetch.max.bytes": 8 << 20,
                                 "max.partition.fetch.bytes": 8 << 20}))
    c.assign([TopicPartition("tls-big", 0, 0)])
    got = 0
    deadline = time.monotonic() + 60
    while got < n and time.monotonic() < deadline:
        m = c.poll(0.5)
        if m is None:
            continue
        if m.error():
            raise KafkaException(m.error())
        assert m.offset() == got and m.value() == (b"%06d" % got) * 700, m.offset()
        got += 1
    c.close()
    assert got == n


def test_sasl_ssl_with_plain_and_scram(tb):
    from confluent_kafka import Producer
    res = alter_scram(tb.port, [scram_upsertion("bob", "bob-secret", "SCRAM-SHA-256")])
    assert res == {"bob": (0, None)}, res
    for mech, user, pw in (("PLAIN", "alice", "alice-secret"),
                           ("SCRAM-SHA-256", "bob", "bob-secret")):
        start = topic_end(tb, "tls-t", 0)
        pr = Producer({"bootstrap.servers": "127.0.0.1:%d" % tb.ports["SASL_SSL"],
                       "security.protocol": "SASL_SSL", "ssl.ca.location": p(tb.pki, "ca.pem"),
                       "sasl.mechanism": mech, "sasl.username": user, "sasl.password": pw})
        pr.produce("tls-t", value=mech.encode(), partition=0)
        assert pr.flush(30) == 0
        assert topic_end(tb, "tls-t", 0) == start + 1
    # kafka-python: SaslHandshake v0, then the token as a raw frame, inside TLS.
    from kafka import KafkaProducer
    start = topic_end(tb, "tls-t", 0)
    kp = KafkaProducer(bootstrap_servers="127.0.0.1:%d" % tb.ports["SASL_SSL"],
                       security_protocol="SASL_SSL", ssl_cafile=p(tb.pki, "ca.pem"),
                       sasl_mechanism="PLAIN", sasl_plain_username="alice",
                       sasl_plain_password="alice-secret")
    kp.send("tls-t", value=b"kafka-python", partition=0).get(timeout=20)
    kp.close()
    assert topic_end(tb, "tls-t", 0) == start + 1
    # A wrong password over TLS is refused as on SASL_PLAINTEXT.
    pr = Producer({"bootstrap.servers": "127.0.0.1:%d" % tb.ports["SASL_SSL"],
                   "security.protocol": "SASL_SSL", "ssl.ca.location": p(tb.pki, "ca.pem"),
                   "sasl.mechanism": "PLAIN", "sasl.username": "alice", "sasl.password": "no",
                   "message.timeout.ms": 2000})
    start = topic_end(tb, "tls-t", 0)
    errors = []
    pr.produce("tls-t", value=b"never", partition=0, on_delivery=lambda e, m: errors.append(e))
    pr.flush(10)
    assert len(errors) == 1 and errors[0] is not None, errors
    assert topic_end(tb, "tls-t", 0) == start
    assert log_has(tb, "failed authentication from 127.0.0.1")


def peer_cn(c):
    subject = dict(x[0] for x in c.sock.getpeercert()["subject"])
    return subject["commonName"]


def test_keystore_rotation_without_a_restart(tb):
    """AlterConfigs on listener.name.ssl.ssl.keystore.location (KIP-226): new connections get
    the new certificate, an open one keeps working; a keystore that does not load is
    refused with a line and the last good one stays."""
    from confluent_kafka.admin import AdminClient, ConfigResource
    make_cert(tb.pki, "server2", "/O=Tally Test/CN=localhost-rotated", ca="ca", ext="san.ext")
    ks2 = p(tb.pki, "server2-ks.pem")
    with open(ks2, "w") as f:
        f.write(open(p(tb.pki, "server2.key")).read() + open(p(tb.pki, "server2.pem")).read())
    admin = AdminClient({"bootstrap.servers": tb.bootstrap})

    def alter(value):
        res = ConfigResource("BROKER", "1",
                             set_config={"listener.name.ssl.ssl.keystore.location": value})
        admin.alter_configs([res])[res].result(20)

    def cn_of_new_connection():
        with tls_conn(tb, "SSL") as c:
            assert c.api_versions(0)[0] == 0
            return peer_cn(c)

    with tls_conn(tb, "SSL") as old:
        assert peer_cn(old) == "localhost"
        alter(ks2)
        deadline = time.monotonic() + 10
        while cn_of_new_connection() != "localhost-rotated" and time.monotonic() < deadline:
            time.sleep(0.1)
        assert cn_of_new_connection() == "localhost-rotated"
        assert old.api_versions(0)[0] == 0  # the open connection keeps its session
        assert peer_cn(old) == "localhost"
    assert log_has(tb, "listener SSL: TLS settings reloaded")

    alter(p(tb.pki, "no-such-keystore.pem"))
    assert log_has(tb, "listener SSL: the altered TLS settings do not apply "
                       "(ssl.keystore.location: cannot open")
    assert cn_of_new_connection() == "localhost-rotated"


# ---- refusals -------------------------------------------------------------------------------

def refused_produce(b, cert):
    """A Produce over a TLS connection to MTLS with `cert` (None: no certificate): the
    handshake or the first read must fail, with no answer."""
    try:
        c = tls_conn(b, "MTLS", cert=cert)
    except (ssl.SSLError, ConnectionError) as e:
        return "refused in the handshake: %s" % e
    with c:
        try:
            c.send(produce_request(1, "tls-t", b"must-not-land"))
            assert_other_client_served(b)
            data = c.sock.recv(4)
        except (ssl.SSLError, ConnectionError) as e:
            return "refused: %s" % e
    assert data == b"", "answered: %r" % data
    return "closed"


@pytest.mark.parametrize("cert,reason", [
    ("mallory", "certificate verify failed"),
    ("old", "certificate verify failed: certificate has expired"),
    (None, "certificate"),
])
def test_refused_client_certificates(tb, cert, reason):
    before = topic_end(tb, "tls-t", 0)
    print(refused_produce(tb, cert))
    assert_other_client_served(tb)
    assert topic_end(tb, "tls-t", 0) == before
    # The first refusal of the module logs its reason; later ones within 10 s are
    # rate-limited, so each checks only that some handshake refusal was logged on MTLS.
    assert log_has(tb, "on listener MTLS failed: " + ("certificate" if cert != "mallory"
                                                      else reason))


def test_plaintext_request_to_a_tls_port(tb):
    before = topic_end(tb, "tls-t", 0)
    with kproto.Conn(tb.ports["SSL"], timeout=5.0) as c:
        c.send(produce_request(1, "tls-t", b"must-not-land"))
        assert_other_client_served(tb)
        assert c.is_closed_by_peer(timeout=5.0)
    assert topic_end(tb, "tls-t", 0) == before
    assert log_has(tb, "(not TLS: a plaintext client on a TLS port?)")


def test_tls_client_hello_to_the_plaintext_port(tb):
    ctx = ssl.create_default_context(cafile=p(tb.pki, "ca.pem"))
    s = socket.create_connection(("127.0.0.1", tb.port), timeout=5.0)
    with pytest.raises((ssl.SSLError, ConnectionError)):
        ctx.wrap_socket(s, server_hostname="127.0.0.1")
    s.close()
    assert_other_client_served(tb)
    with kproto.Conn(tb.port) as c:  # PLAINTEXT serves on
        assert c.api_versions(0)[0] == 0
    assert log_has(tb, "which is not a TLS listener")


def test_handshake_that_never_completes_is_closed(tb):
    # Half of a real ClientHello, then nothing.
    ctx = ssl.create_default_context(cafile=p(tb.pki, "ca.pem"))
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(inc, out, server_hostname="127.0.0.1")
    with pytest.raises(ssl.SSLWantReadError):
        obj.do_handshake()
    hello = out.read()
    assert len(hello) > 100
    half = hello[:len(hello) // 2]
    with kproto.Conn(tb.ports["HS"], timeout=5.0) as c:
        # Trickled a byte every 200 ms, so that the connection is never idle: HS has
        # connections.max.idle.ms=1000, which bounds the whole handshake too.
        c.sock.settimeout(0.2)
        closed = False
        for i in range(len(half)):
            try:
                c.send(half[i:i + 1])
                if c.sock.recv(1) == b"":
                    closed = True
                    break
            except socket.timeout:
                pass
            except (ConnectionResetError, BrokenPipeError):
                closed = True
                break
            if i == 0:
                assert_other_client_served(tb)
        assert closed, "still open after %d bytes" % len(half)
    assert log_has(tb, "its TLS handshake is not done after")


# ---- the tally CLI's own wire client over TLS -------------------------------------------------
# (after the refusals above: the broker rate-limits its handshake-failure lines, and those cases
# look for the first one on MTLS)

def tally_tls(b, listener, *args, cert=None, ca="ca.pem", extra=(), stdin=None):
    """`tally -b <listener> <args>` with the client security settings as -X after the command:
    SSL (SASL_SSL on that listener), ssl.ca.location=ca, a client certificate if named."""
    proto = "SASL_SSL" if listener == "SASL_SSL" else "SSL"
    sec = ["-X", "security.protocol=" + proto, "-X", "ssl.ca.location=" + p(b.pki, ca)]
    if cert:
        sec += ["-X", "ssl.certificate.location=" + p(b.pki, cert + ".pem"),
                "-X", "ssl.key.location=" + p(b.pki, cert + ".key")]
    for kv in extra:
        sec += ["-X", kv]
    return subprocess.run([harness.TALLY, "-b", "127.0.0.1:%d" % b.ports[listener]] +
                          list(args) + sec, input=stdin, capture_output=True, text=True,
                          timeout=60)


def test_tally_acls_users_quotas_over_mutual_tls_and_sasl_ssl(tb, tmp_path):
    """The wire-client commands (acls, users scram, quotas) over SSL with a client certificate
    (the MTLS listener requires one: being answered proves it was sent and verified), over
    SASL_SSL with PLAIN (from a properties file) and SCRAM-SHA-256 (a user the CLI made over
    mTLS), and the librdkafka commands with the same settings before the command."""
    r = tally_tls(tb, "MTLS", "acls", "add", "--allow-principal", "User:carol", "--operation",
                  "Read", "--topic", "wiretls-acl", cert="alice")
    assert r.returncode == 0 and "Adding ACL for resource" in r.stdout, r
    r = tally_tls(tb, "MTLS", "users", "scram", "set", "wiretls-sam", "--mechanism",
                  "SCRAM-SHA-256", "--password-stdin", cert="alice", stdin="sam-pw\n")
    assert r.returncode == 0, r
    # An encrypted client key, with ssl.key.password.
    r = tally_tls(tb, "MTLS", "quotas", "set", "--user", "wiretls-q", "--add-config",
                  "producer_byte_rate=1048576", cert="alice",
                  extra=["ssl.key.location=" + p(tb.pki, "alice-enc.key"),
                         "ssl.key.password=" + KS_PASS])
    assert r.returncode == 0, r

    acl_line = "(principal=User:carol, host=*, operation=READ, permissionType=ALLOW)"
    user_line = ("SCRAM credential configs for user-principal 'wiretls-sam' are "
                 "SCRAM-SHA-256=iterations=4096\n")
    quota_line = "Quota configs for user-principal 'wiretls-q' are producer_byte_rate=1048576.0\n"
    plain = tmp_path / "alice.properties"
    plain.write_text("security.protocol=SASL_SSL\nssl.ca.location=%s\nsasl.mechanism=PLAIN\n"
                     "sasl.username=alice\nsasl.password=alice-secret\n" % p(tb.pki, "ca.pem"))
    scram = ["sasl.mechanism=SCRAM-SHA-256", "sasl.username=wiretls-sam", "sasl.password=sam-pw"]
    for how in ("mtls", "plain", "scram"):
        def run(*args):
            if how == "mtls":
                return tally_tls(tb, "MTLS", *args, cert="alice")
            if how == "scram":
                return tally_tls(tb, "SASL_SSL", *args, extra=scram)
            return subprocess.run([harness.TALLY, "-b", "127.0.0.1:%d" % tb.ports["SASL_SSL"]] +
                                  list(args) + ["--command-config", str(plain)],
                                  capture_output=True, text=True, timeout=60)
        r = run("acls", "list", "--topic", "wiretls-acl")
        assert r.returncode == 0 and acl_line in r.stdout, (how, r)
        r = run("users", "scram", "describe", "wiretls-sam")
        assert (r.returncode, r.stdout) == (0, user_line), (how, r)
        r = run("quotas", "describe", "--user", "wiretls-q")
        assert (r.returncode, r.stdout) == (0, quota_line), (how, r)

    # Before the command the settings are every command's: librdkafka's (topics list) and the
    # wire client's alike.
    sec = ["-X", "security.protocol=SASL_SSL", "-X", "ssl.ca.location=" + p(tb.pki, "ca.pem")]
    sec += [a for kv in scram for a in ("-X", kv)]
    for cmd, want in ((["topics", "list"], "tls-t\n"),
                      (["users", "scram", "describe", "wiretls-sam"], user_line)):
        r = subprocess.run([harness.TALLY, "-b", "127.0.0.1:%d" % tb.ports["SASL_SSL"]] + sec +
                           cmd, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and want in r.stdout, (cmd, r)


def test_tally_tls_refusals(tb):
    """The broker's certificate from a CA not trusted, a host name it does not name (with
    https identification, the default) and no client certificate where one is required are
    refused with one line and exit status 1; verification or the host check switched off
    lets the same connection through; a bad setting is a usage error (2)."""
    args = ("users", "scram", "describe", "nobody")
    r = tally_tls(tb, "SSL", *args, ca="other-ca.pem")
    assert r.returncode == 1, r
    assert "TLS handshake failed: the broker's certificate is not accepted: unable to get " \
           "local issuer certificate" in r.stderr, r.stderr
    assert len(r.stderr.splitlines()) == 1, r.stderr
    r = tally_tls(tb, "SSL", *args, ca="other-ca.pem",
                  extra=["enable.ssl.certificate.verification=false"])
    assert r.returncode == 0, r
    # librdkafka's commands refuse the untrusted certificate too.
    r = subprocess.run([harness.TALLY, "-b", "127.0.0.1:%d" % tb.ports["SSL"], "-X",
                        "security.protocol=SSL", "-X", "ssl.ca.location=" +
                        p(tb.pki, "other-ca.pem"), "--timeout", "1000", "topics", "list"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1, r

    r = tally_tls(tb, "ELSEWHERE", *args)
    assert r.returncode == 1, r
    assert "not accepted: IP address mismatch (ssl.endpoint.identification.algorithm=https)" \
        in r.stderr, r.stderr
    r = tally_tls(tb, "ELSEWHERE", *args, extra=["ssl.endpoint.identification.algorithm=none"])
    assert r.returncode == 0, r
    r = tally_tls(tb, "SSL", *args, extra=["ssl.endpoint.identification.algorithm=https"])
    assert r.returncode == 0, r

    r = tally_tls(tb, "MTLS", *args)  # no client certificate
    assert r.returncode == 1 and "TLS" in r.stderr, r
    r = subprocess.run([harness.TALLY, "-b", tb.bootstrap, *args, "-X", "security.protocol=SSL"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "TLS handshake failed" in r.stderr, r
    for bad in ("security.protocol=TLS", "ssl.endpoint.identification.algorithm=dns",
                "enable.ssl.certificate.verification=maybe", "ssl.keystore.location=x"):
        r = tally_tls(tb, "SSL", *args, extra=[bad])
        assert r.returncode == 2 and bad.split("=")[0] in r.stderr, (bad, r)


# ---- start-up refusals ----------------------------------------------------------------------

@pytest.mark.parametrize("settings,message", [
    ({"listener.name.mtls.ssl.keystore.type": "JKS"}, "ssl.keystore.type=JKS is not supported"),
    ({"listener.name.mtls.ssl.keystore.password": "wrong"}, "ssl.keystore.password"),
    ({"listener.name.mtls.ssl.client.auth": "sometimes"}, "ssl.client.auth is 'sometimes'"),
    ({"listener.name.mtls.ssl.truststore.location": None}, "needs a truststore"),
    ({"listener.name.mtls.ssl.principal.mapping.rules": "RULE:^CN=(.*)$/$1"},
     "ssl.principal.mapping.rules"),
    ({"ssl.enabled.protocols": "TLSv1.2,SSLv3"}, "ssl.enabled.protocols"),
    ({"inter.broker.listener.name": "SSL"}, "brokers verify each other's certificates"),
    ({"inter.broker.listener.name": "MTLS",
      "listener.name.mtls.ssl.endpoint.identification.algorithm": "bogus"},
     "ssl.endpoint.identification.algorithm is 'bogus'"),
    ({"listeners": None}, "controller.listener.insecure.ok"),
])
def test_bad_tls_settings_refuse_to_start(broker_factory, pki, settings, message):
    b = broker_factory(start=False)
    b.settings.update(tls_settings(b, pki))
    for k, v in settings.items():
        if k == "listeners":
            b.settings[k] = b.settings[k].replace("CONTROLLER://127.0.0.1", "CONTROLLER://0.0.0.0")
        elif v is None:
            b.settings.pop(k)
        else:
            b.settings[k] = v
    with pytest.raises(RuntimeError):
        b.start()
    assert message in b.stderr_all()

