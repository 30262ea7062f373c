# SPDX-License-Identifier: Apache-2.0
"""Inter-broker TLS and SASL (issue 17): three tallyd whose inter-broker listener BROKER is
SSL, then SASL_SSL with client certificates and PLAIN, then SCRAM-SHA-512 (its user made with
`tally users scram set`), beside a PLAINTEXT listener for the test's own clients. An RF=3
topic takes acks=all records from confluent-kafka and every replica holds them byte for byte:
the followers fetched over the secure listener, and the logs name those connections; a node
with a wrong SCRAM password stays out of the ISR and says why. In the SSL cluster the broker-only node 3 has a certificate
from another CA: the others refuse to fetch from it (certificate verify failed) while its
own fetches, which verify the others, work. Certificates by the openssl CLI, as in
test_tls.py."""
import os

import pytest

import cluster as clu
import kproto as kp
from test_tls import make_cert

PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required '
              'username="broker" password="broker-secret" user_broker="broker-secret";')


def scram_jaas(password):
    return ('org.apache.kafka.common.security.scram.ScramLoginModule required '
            'username="broker" password="%s";' % password)


@pytest.fixture(scope="module")
def ib_pki(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("ibpki"))
    with open(os.path.join(d, "san.ext"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    make_cert(d, "ca", "/O=Tally Test/CN=Tally Test CA")
    make_cert(d, "other-ca", "/O=Elsewhere/CN=Other CA")
    for name, ca in (("broker", "ca"), ("impostor", "other-ca")):
        make_cert(d, name, "/O=Tally Test/CN=localhost", ca=ca, ext="san.ext")
        with open(os.path.join(d, name + "-ks.pem"), "w") as f:
            f.write(open(os.path.join(d, name + ".key")).read() +
                    open(os.path.join(d, name + ".pem")).read())
    with open(os.path.join(d, "both-cas.pem"), "w") as f:
        f.write(open(os.path.join(d, "ca.pem")).read() +
                open(os.path.join(d, "other-ca.pem")).read())
    return d


def secure_cluster(workdir, pki, protocol, node_ssl=None, voters=None):
    """Three nodes with PLAINTEXT (the harness's) and BROKER (`protocol`, the inter-broker
    listener) on loopback; node_ssl: {node: {ssl key: file}} over the shared keystore and
    truststore."""
    c = clu.Cluster(workdir, 3, voters=voters)
    bports = {i: clu.harness.free_port() for i in c.ids}
    for i in c.ids:
        b = c[i]
        bport = bports[i]
        if i not in c.voters:  # it finds the controller on the voters' BROKER listeners
            b.settings["controller.bootstrap.servers"] = ",".join(
                "127.0.0.1:%d" % bports[v] for v in c.voters)
        ssl = {"ssl.keystore.location": os.path.join(pki, "broker-ks.pem"),
               "ssl.truststore.location": os.path.join(pki, "ca.pem")}
        ssl.update((node_ssl or {}).get(i, {}))
        b.settings.update({
            "listeners": "PLAINTEXT://127.0.0.1:%d,BROKER://127.0.0.1:%d,"
                         "CONTROLLER://127.0.0.1:%d" % (b.port, bport, b.controller_port),
            "listener.security.protocol.map":
                "PLAINTEXT:PLAINTEXT,BROKER:%s,CONTROLLER:PLAINTEXT" % protocol,
            "inter.broker.listener.name": "BROKER",
        })
        b.settings.update({"listener.name.broker." + k: v for k, v in ssl.items()})
        if protocol == "SASL_SSL":
            b.settings.update({
                # PLAIN between brokers until their SCRAM user exists (docs/security.md).
                "sasl.mechanism.inter.broker.protocol": "PLAIN",
                "listener.name.broker.sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512",
                "listener.name.broker.plain.sasl.jaas.config": PLAIN_JAAS,
                "listener.name.broker.scram-sha-512.sasl.jaas.config":
                    scram_jaas("broker-secret"),
                "listener.name.broker.ssl.client.auth": "required",
            })
    return c


def produce_acks_all(c, topic, n):
    from confluent_kafka import Producer
    pr = Producer({"bootstrap.servers": c.bootstrap, "acks": "all",
                   "enable.idempotence": True, "linger.ms": 5})
    errs = []
    for i in range(n):
        pr.produce(topic, value=b"ib-record-%d" % i, partition=0,
                   on_delivery=lambda e, m: errs.append(e) if e else None)
    assert pr.flush(20) == 0
    assert errs == []


def records_in(c, topic, node, prefix=b"ib-record-"):
    """How many of the produced values node's own segment files of topic-0 hold."""
    return sum(blob.count(prefix) for _n, blob in c.replica_logs(topic, 0, node))


def create_unwaited(c, name, replicas):
    """CreateTopics with one partition on `replicas` (first the leader), without waiting for
    its ISR (which may never be full)."""
    ctl = c.wait_controller()
    with kp.Conn(c[ctl].port, timeout=15.0) as conn:
        res = conn.create_topics_v([(name, -1, -1, {}, {0: replicas})], version=5,
                                   timeout_ms=10000)
    assert res[name]["error"] == 0, res


def test_ssl_between_brokers_and_a_certificate_of_another_ca(tmp_path_factory, ib_pki):
    # Node 3 is broker-only (the controller channel never needs to reach it) and presents a
    # certificate of another CA; it trusts both CAs, the voters only theirs.
    c = secure_cluster(tmp_path_factory.mktemp("ibssl"), ib_pki, "SSL", voters=2, node_ssl={
        3: {"ssl.keystore.location": os.path.join(ib_pki, "impostor-ks.pem"),
            "ssl.truststore.location": os.path.join(ib_pki, "both-cas.pem")}})
    for _ in clu.serve(c):
        c.create_topic("ib-ssl", partitions=1, rf=3, assignments={0: [1, 2, 3]})
        produce_acks_all(c, "ib-ssl", 200)
        c.wait_replicas_identical("ib-ssl", 1, timeout=30)
        for r in (1, 2, 3):  # node 3 verified node 1 and fetched over TLS
            assert records_in(c, "ib-ssl", r) == 200, r
        assert any("over SSL (TLS" in c.log_text(i) for i in c.ids)
        # Node 1 follows a partition node 3 leads: it refuses node 3's certificate, so not
        # one of the records node 3 takes reaches node 1's replica.
        create_unwaited(c, "ib-impostor", [3, 1, 2])
        clu.wait_for(lambda: c.leader("ib-impostor", 0) == 3, 30, "node 3 leads ib-impostor")
        with c[3].conn(timeout=15) as conn:
            res = conn.produce({"ib-impostor": {0: kp.record_batch(
                [(None, b"ib-record-x%d" % i) for i in range(5)])}}, acks=1,
                timeout_ms=10000)[("ib-impostor", 0)]
        assert res["error"] == 0, res
        clu.wait_for(lambda: "connection to node 3 failed (TLS handshake: certificate verify "
                             "failed" in c.log_text(1), 15, "node 1 refusing node 3")
        assert records_in(c, "ib-impostor", 3) == 5
        assert records_in(c, "ib-impostor", 1) == 0


def test_sasl_ssl_scram_between_brokers(tmp_path_factory, ib_pki):
    # Client certificates required on BROKER: each broker presents its keystore as a client,
    # then authenticates as the SASL user "broker".
    c = secure_cluster(tmp_path_factory.mktemp("ibsasl"), ib_pki, "SASL_SSL")
    for _ in clu.serve(c):
        # The bootstrap of docs/security.md: the cluster is up on PLAIN between brokers; the
        # brokers' SCRAM user is made (in the metadata log) with `tally users scram set`, then
        # every node restarts with SCRAM-SHA-512 as the inter-broker mechanism (killed: the
        # credential is in the metadata log, which kill -9 does not lose).
        r = c[1].tally("users", "scram", "set", "broker", "--mechanism", "SCRAM-SHA-512",
                       "--password", "broker-secret")
        assert r.returncode == 0, r
        assert any("SASL PLAIN as broker" in c.log_text(i) for i in c.ids)
        for i in c.ids:
            c.kill_node(i)
        for i in c.ids:
            c[i].settings["sasl.mechanism.inter.broker.protocol"] = "SCRAM-SHA-512"
        c.start()
        c.create_topic("ib-sasl", partitions=1, rf=3, assignments={0: [1, 2, 3]})
        produce_acks_all(c, "ib-sasl", 200)
        c.wait_replicas_identical("ib-sasl", 1, timeout=30)
        for r in (1, 2, 3):
            assert records_in(c, "ib-sasl", r) == 200, r
        assert any("over SASL_SSL (TLS, peer verified as configured), SASL SCRAM-SHA-512 as "
                   "broker" in open(c[i].log_paths[-1]).read() for i in c.ids)
        # Node 3 restarted with a wrong inter-broker password authenticates nowhere: it stays
        # out of the ISR, fetches nothing more, and says why.
        c.stop_node(3)
        c[3].settings["listener.name.broker.scram-sha-512.sasl.jaas.config"] = \
            scram_jaas("not-the-secret")
        c.start_node(3, wait=False)
        last_log = c[3].log_paths[-1]
        failed = "failed (SASL SCRAM-SHA-512 authentication as broker failed: Authentication " \
                 "failed: Invalid username or password); retrying in"
        line = clu.wait_for(lambda: next((ln for ln in open(last_log) if failed in ln), None),
                            20, "node 3's authentication failure")
        # Its first such line is its own, not held back behind the connect failures before it
        # knew the controller.
        assert "suppressed" not in line, line
        # (Node 3, fenced, serves no client: ask node 1.)
        def isr():
            return sorted(c.partition("ib-sasl", 0, node=1)["isr"])
        clu.wait_for(lambda: isr() == [1, 2], 20, "ISR [1, 2]")
        produce_acks_all(c, "ib-sasl", 20)
        assert isr() == [1, 2]
        assert records_in(c, "ib-sasl", 1) == 220
        assert records_in(c, "ib-sasl", 3) == 200
