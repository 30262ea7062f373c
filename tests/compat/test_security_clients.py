# SPDX-License-Identifier: Apache-2.0
"""KafkaJS 2.2.4, Sarama 1.22 (Debian's, SCRAM from Debian's github.com/xdg-go/scram) and
librdkafka 2.0.2 (confluent-kafka-python) over SSL with mutual TLS, SASL_PLAINTEXT and
SASL_SSL, with PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 (issue 17's first check; kafka-python,
which has no transactions, and kcat are in tests/integration/test_tls.py and test_sasl.py). One tallyd serves all of it at once, with the StandardAuthorizer on: the
principals alice (PLAIN), sam256 and sam512 (SCRAM users made with AlterUserScramCredentials,
each with one mechanism's credential only) and carol (the mapped name of the client
certificate "CN=carol,OU=eng,O=Tally Test" by ssl.principal.mapping.rules) may read and
write the topics, groups and transactional ids prefixed "sec-"; nobody else may.

Each client runs all its cases at once in one process (kafkajs/security.js, one Go program
sarama_security/main.go, librdkafka_security.py): on each of the seven listener/mechanism combinations it produces,
commits one transaction and aborts another (each with records and a group offset sent to it),
produces an end marker, and reads the topic in a
consumer group with read_committed (the committed records, not the aborted ones) and commits
its offset, read back here. Each client is also refused four ways, with nothing appended: a
wrong PLAIN password, a wrong SCRAM-SHA-512 password, a client certificate with carol's very
subject from another CA, and one from the right CA that the mapping rule does not map (so its
principal is the whole subject, which the ACLs do not name: TOPIC_AUTHORIZATION_FAILED).

Sarama 1.22 has no transactional producer (Config.Producer.Transaction came in 1.37): its
transactions are driven with Sarama 1.22's own request types (InitProducerId,
AddPartitionsToTxn, Produce v3 of a transactional batch, EndTxn) on its own TLS/SASL broker
connections. kafka-go is not used: Debian's 0.2.1 has neither SASL nor transactions."""
import json
import os
import subprocess

import pytest

import gobuild
import harness
import kproto
from test_data_kafkajs import kafkajs_dir  # noqa: F401 (fixture)
from test_sasl import alter_scram, scram_upsertion
from test_tls import make_cert

HERE = os.path.dirname(os.path.abspath(__file__))
STANDARD = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required '
        'user_alice="alice-secret";')
RULE = "RULE:^CN=([^,]+),OU=eng,O=Tally Test$/$1/L,DEFAULT"
OFFSET_FETCH = 9
SCRAM = "github.com/xdg-go/scram"

OK_VALUES = ["p-0", "p-1", "p-2", "p-3", "p-4", "c-0", "c-1", "c-2", "end"]


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("pki"))
    with open(os.path.join(d, "san.ext"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    make_cert(d, "ca", "/O=Tally Test/CN=Tally Test CA")
    make_cert(d, "server", "/O=Tally Test/CN=localhost", ca="ca", ext="san.ext")
    make_cert(d, "carol", "/O=Tally Test/OU=eng/CN=carol", ca="ca")
    make_cert(d, "carol-ops", "/O=Tally Test/OU=ops/CN=carol", ca="ca")
    make_cert(d, "other-ca", "/O=Elsewhere/CN=Other CA")
    make_cert(d, "mallory", "/O=Tally Test/OU=eng/CN=carol", ca="other-ca")
    with open(os.path.join(d, "server-ks.pem"), "w") as f:
        f.write(open(os.path.join(d, "server.key")).read() +
                open(os.path.join(d, "server.pem")).read())
    return d


def cases(b, pki, prefix):
    """The cases of one client; every topic, group and transactional id starts with
    "sec-<prefix>-"."""
    ssl = {"ca": os.path.join(pki, "ca.pem")}

    def cert(name):
        return dict(ssl, cert=os.path.join(pki, name + ".pem"),
                    key=os.path.join(pki, name + ".key"))

    users = {"PLAIN": ("alice", "alice-secret"), "SCRAM-SHA-256": ("sam256", "sam256-secret"),
             "SCRAM-SHA-512": ("sam512", "sam512-secret")}
    out = []

    def case(name, listener, tls, sasl=None, expect="ok"):
        n = "sec-%s-%s" % (prefix, name.lower())
        out.append({"name": name, "broker": "127.0.0.1:%d" % b.ports[listener], "ssl": tls,
                    "sasl": sasl, "topic": n, "group": n, "txn": n, "expect": expect})

    case("SSL-mTLS", "SSL", cert("carol"))
    for listener, tls in (("SASL_PLAINTEXT", None), ("SASL_SSL", ssl)):
        for mech, (user, pw) in users.items():
            case("%s-%s" % (listener, mech), listener, tls,
                 {"mechanism": mech.lower() if prefix == "k" else mech, "username": user,
                  "password": pw})
    case("wrong-PLAIN-password", "SASL_SSL", ssl,
         {"mechanism": "plain" if prefix == "k" else "PLAIN", "username": "alice",
          "password": "alice-wrong"}, expect="fail")
    case("wrong-SCRAM-password", "SASL_PLAINTEXT", None,
         {"mechanism": "scram-sha-512" if prefix == "k" else "SCRAM-SHA-512",
          "username": "sam512", "password": "sam256-secret"}, expect="fail")
    case("certificate-from-another-CA", "SSL", cert("mallory"), expect="fail")
    case("certificate-not-mapped", "SSL", cert("carol-ops"), expect="fail")
    return out


@pytest.fixture(scope="module")
def sb(tmp_path_factory, pki):
    b = harness.TallyBroker(tmp_path_factory.mktemp("security"))
    b.ports = {n: harness.free_port() for n in ("SSL", "SASL_PLAINTEXT", "SASL_SSL")}
    mechs = "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512"
    b.settings.update({
        "listeners": "PLAINTEXT://127.0.0.1:%d,%s,CONTROLLER://127.0.0.1:%d" % (
            b.port, ",".join("%s://127.0.0.1:%d" % kv for kv in b.ports.items()),
            b.controller_port),
        "ssl.keystore.location": os.path.join(pki, "server-ks.pem"),
        "listener.name.ssl.ssl.truststore.location": os.path.join(pki, "ca.pem"),
        "listener.name.ssl.ssl.client.auth": "required",
        "listener.name.ssl.ssl.principal.mapping.rules": RULE,
        "listener.name.sasl_plaintext.sasl.enabled.mechanisms": mechs,
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
        "listener.name.sasl_ssl.sasl.enabled.mechanisms": mechs,
        "listener.name.sasl_ssl.plain.sasl.jaas.config": JAAS,
        "authorizer.class.name": STANDARD,
        "super.users": "User:ANONYMOUS",  # the PLAINTEXT listener, for the test's own checks
        "group.initial.rebalance.delay.ms": "0",
        "offsets.topic.num.partitions": "1",
        "transaction.state.log.num.partitions": "1",
    })
    b.start()
    harness.create_topics(b, [(c["topic"], 1, None) for prefix in ("k", "s", "r")
                              for c in cases(b, pki, prefix)])
    res = alter_scram(b.port, [scram_upsertion("sam256", "sam256-secret", "SCRAM-SHA-256"),
                               scram_upsertion("sam512", "sam512-secret", "SCRAM-SHA-512")])
    assert res == {"sam256": (0, None), "sam512": (0, None)}, res
    r = b.tally("acls", "add", "--allow-principal", "User:alice", "--allow-principal",
                "User:sam256", "--allow-principal", "User:sam512", "--allow-principal",
                "User:carol", "--operation", "Read", "--operation", "Write", "--topic", "sec-",
                "--group", "sec-", "--transactional-id", "sec-", "--resource-pattern-type",
                "prefixed")
    assert r.returncode == 0, r.stdout + r.stderr
    ok = False
    try:
        yield b
        ok = True
    finally:
        try:
            b.stop(check=True)
        finally:
            if not ok:
                harness.dump_logs([b])


@pytest.fixture(scope="module")
def sarama_build(tmp_path_factory):
    """Starts building the Sarama program at once, so that the build overlaps the KafkaJS
    run; the Sarama test waits for it."""
    why = gobuild.missing(SCRAM)
    if why:
        yield why
        return
    out = tmp_path_factory.mktemp("sarama-security")
    exe = str(out / "sarama-security")
    proc = gobuild.start(os.path.join(HERE, "sarama_security", "main.go"), exe, cwd=str(out))
    yield exe, proc
    if proc.poll() is None:  # the Sarama test did not run
        proc.kill()
        proc.communicate()


def end_offset(b, topic):
    err, _, offset = harness.list_offset(b, topic, 0)
    assert err == 0, (topic, err)
    return offset


def end_marker_offset(b, topic):
    """The offset of "end" in topic: p-0..p-4 at 0-4, c-0..c-2 at 5-7, the commit marker at 8,
    a-0 and a-1 at 9-10, then "end" and the abort marker in either order (as in Kafka, EndTxn
    is answered before the coordinator has its markers written)."""
    recs = [(r[0], r[3]) for r in harness.fetch_all_raw(b, topic, 0)]
    assert len(recs) == 13 and [v for _, v in recs[:11]] == [
        b"p-0", b"p-1", b"p-2", b"p-3", b"p-4", b"c-0", b"c-1", b"c-2", recs[8][1], b"a-0",
        b"a-1"], recs
    (off,) = [o for o, v in recs if v == b"end"]
    return off


def committed(b, groups):
    """{group: committed offset of partition 0 of its topic}, groups being {group: topic}
    (OffsetFetch v8, every group at once, on PLAINTEXT)."""
    with b.conn() as c:
        rs = c.group(OFFSET_FETCH, 8, {"Groups": [
            {"GroupId": g, "Topics": [{"Name": t, "PartitionIndexes": [0]}]}
            for g, t in groups.items()]})
    return {g["GroupId"]: g["Topics"][0]["Partitions"][0]["CommittedOffset"]
            for g in rs["Groups"]}


def run_cases(b, pki, prefix, argv, cwd=None, env=None):
    cs = cases(b, pki, prefix)
    r = subprocess.run(argv, input=json.dumps({"cases": cs}), capture_output=True, text=True,
                       timeout=180, cwd=cwd, env=env)
    assert r.returncode == 0, "%s rc=%d:\n%s\n%s" % (argv, r.returncode, r.stdout,
                                                     r.stderr[-4000:])
    got = {x["name"]: x for x in map(json.loads, r.stdout.split("\n")[:-1])}
    assert sorted(got) == sorted(c["name"] for c in cs), r.stdout

    ok = [c for c in cs if c["expect"] == "ok"]
    problems = ["%s: %s" % (c["name"], got[c["name"]].get("error")) for c in ok
                if not got[c["name"]]["ok"]]
    assert not problems, "\n".join(problems)
    after_end = {}
    for c in ok:
        assert got[c["name"]]["values"] == OK_VALUES, got[c["name"]]
        after_end[c["group"]] = end_marker_offset(b, c["topic"]) + 1
        assert int(got[c["name"]]["committed"]) == after_end[c["group"]], got[c["name"]]
    # The commits landed in the broker, read back on PLAINTEXT: the consumer's, and the
    # committed transaction's offset (5; the aborted one's, 99, is not applied).
    assert committed(b, {c["group"]: c["topic"] for c in ok}) == after_end
    assert committed(b, {c["group"] + "-txn": c["topic"] for c in ok}) == {
        c["group"] + "-txn": 5 for c in ok}

    fail = {c["name"]: c for c in cs if c["expect"] == "fail"}
    for name, c in fail.items():
        assert not got[name]["ok"], "%s was served: %s" % (name, got[name])
        assert end_offset(b, c["topic"]) == 0, name
    return {name: got[name]["error"] for name in fail}


MAPPED = ("on listener SSL authenticated as User:carol",
          "on listener SSL authenticated as User:CN=carol,OU=ops,O=Tally Test")


def assert_logged(b, before):
    """This client's certificates were mapped (one line per connection, so each client adds
    its own), and refusals were logged (rate-limited: maybe by the other client's run)."""
    log = b.stderr_all()
    for line in MAPPED:
        assert log.count(line) > before.count(line), line
    assert "failed authentication from 127.0.0.1" in log
    assert "on listener SSL failed: certificate verify failed" in log


def test_kafkajs_over_ssl_sasl_plaintext_and_sasl_ssl(sarama_build, sb, pki,
                                                     kafkajs_dir):  # noqa: F811
    env = dict(os.environ, KAFKAJS_NO_PARTITIONER_WARNING="1")
    before = sb.stderr_all()
    errors = run_cases(sb, pki, "k", ["node", "security.js"], cwd=kafkajs_dir, env=env)
    # "Authentication failed: ..." is KafkaJS's text for the broker's
    # SASL_AUTHENTICATION_FAILED (58), not a failure KafkaJS found itself.
    assert errors["wrong-PLAIN-password"] == (
        "KafkaJSSASLAuthenticationError: SASL PLAIN authentication failed: Authentication "
        "failed: Invalid username or password"), errors
    assert errors["wrong-SCRAM-password"] == (
        "KafkaJSSASLAuthenticationError: SASL SCRAM SHA512 authentication failed: "
        "Authentication failed: Invalid username or password"), errors
    assert "tlsv1 alert unknown ca" in errors["certificate-from-another-CA"], errors
    assert "KafkaJSProtocolError[TOPIC_AUTHORIZATION_FAILED]" in \
        errors["certificate-not-mapped"], errors
    assert_logged(sb, before)


def test_sarama_over_ssl_sasl_plaintext_and_sasl_ssl(sarama_build, sb, pki):
    if isinstance(sarama_build, str):
        if os.environ.get("CI") == "true":
            pytest.fail("under CI=true the Sarama test must run: " + sarama_build)
        pytest.skip(sarama_build + "; `make deps` installs it")
    exe, proc = sarama_build
    gobuild.wait(proc)
    before = sb.stderr_all()
    errors = run_cases(sb, pki, "s", [exe])
    assert errors == {
        "wrong-PLAIN-password": "metadata: kafka server: SASL Authentication failed.",
        "wrong-SCRAM-password": "metadata: kafka server: SASL Authentication failed.",
        "certificate-from-another-CA": "metadata: remote error: tls: unknown certificate authority",
        "certificate-not-mapped": "metadata of sec-s-certificate-not-mapped: kafka server: The "
                                  "client is not authorized to access this topic.",
    }, errors
    assert_logged(sb, before)


def test_librdkafka_over_ssl_sasl_plaintext_and_sasl_ssl(sb, pki):
    before = sb.stderr_all()
    errors = run_cases(sb, pki, "r", ["/usr/bin/python3",
                                      os.path.join(HERE, "librdkafka_security.py")])
    # librdkafka reports a refused login or handshake through its error callback.
    for name in ("wrong-PLAIN-password", "wrong-SCRAM-password"):
        assert "Authentication failed" in errors[name], errors
    assert "certificate verify failed" in errors["certificate-from-another-CA"] or \
        "unknown ca" in errors["certificate-from-another-CA"], errors
    assert "topic authorization failed" in errors["certificate-not-mapped"].lower(), errors
    assert_logged(sb, before)
