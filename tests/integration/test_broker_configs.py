# SPDX-License-Identifier: Apache-2.0
"""Dynamic broker configs (issue 18, item 15): every name of Kafka 3.9's dynamic broker set —
cluster-wide and per-broker, listed here from Kafka 3.9's own table, not from Tally's — is
taken by IncrementalAlterConfigs (raw, and kafka-python's protocol classes) and AlterConfigs
(confluent-kafka) on a BROKER resource, stored and described back with its source; Tally
applies the ones it implements (tests/integration/test_topic_configs.py) and stores the rest,
whose documentation says "no effect in Tally". As Kafka: a per-broker config is refused at the
cluster-wide default resource, the listener security configs without a listener prefix, and
every read-only config (INVALID_REQUEST); passwords are described as sensitive, without their
value. A server.properties full of Kafka's names starts the broker, which says which of them
have no effect."""
import uuid

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource
from kafka import KafkaAdminClient

import kproto as kp
import test_topic_configs as ttc

BROKER = kp.RESOURCE_BROKER
DYNAMIC_BROKER, DYNAMIC_DEFAULT, STATIC, DEFAULT = 2, 3, 4, 5
INVALID_REQUEST = 42
BOOLEAN, STRING, INT, SHORT, LONG, DOUBLE, LIST, CLASS, PASSWORD = range(1, 10)

# Kafka 3.9: Update Mode cluster-wide (and its broker quota configs), then per-broker.
CLUSTER_WIDE = [
    "background.threads", "compression.gzip.level", "compression.lz4.level",
    "compression.type", "compression.zstd.level", "follower.replication.throttled.rate",
    "leader.replication.throttled.rate", "log.cleaner.backoff.ms",
    "log.cleaner.dedupe.buffer.size", "log.cleaner.delete.retention.ms",
    "log.cleaner.io.buffer.load.factor", "log.cleaner.io.buffer.size",
    "log.cleaner.io.max.bytes.per.second", "log.cleaner.max.compaction.lag.ms",
    "log.cleaner.min.cleanable.ratio", "log.cleaner.min.compaction.lag.ms",
    "log.cleaner.threads", "log.cleanup.policy", "log.flush.interval.messages",
    "log.flush.interval.ms", "log.index.interval.bytes", "log.index.size.max.bytes",
    "log.local.retention.bytes", "log.local.retention.ms", "log.message.downconversion.enable",
    "log.message.timestamp.after.max.ms", "log.message.timestamp.before.max.ms",
    "log.message.timestamp.difference.max.ms", "log.message.timestamp.type", "log.preallocate",
    "log.retention.bytes", "log.retention.ms", "log.roll.jitter.ms", "log.roll.ms",
    "log.segment.bytes", "log.segment.delete.delay.ms", "max.connection.creation.rate",
    "max.connections", "max.connections.per.ip", "max.connections.per.ip.overrides",
    "message.max.bytes", "metric.reporters", "min.insync.replicas", "num.io.threads",
    "num.network.threads", "num.recovery.threads.per.data.dir", "num.replica.fetchers",
    "producer.id.expiration.ms", "remote.fetch.max.wait.ms",
    "remote.log.index.file.cache.total.size.bytes",
    "remote.log.manager.copy.max.bytes.per.second",
    "remote.log.manager.fetch.max.bytes.per.second",
    "replica.alter.log.dirs.io.max.bytes.per.second",
    "transaction.partition.verification.enable", "unclean.leader.election.enable",
]
PER_BROKER = [
    "advertised.listeners", "listener.security.protocol.map", "listeners",
    "principal.builder.class", "sasl.enabled.mechanisms", "sasl.jaas.config",
    "sasl.kerberos.kinit.cmd", "sasl.kerberos.min.time.before.relogin",
    "sasl.kerberos.principal.to.local.rules", "sasl.kerberos.service.name",
    "sasl.kerberos.ticket.renew.jitter", "sasl.kerberos.ticket.renew.window.factor",
    "sasl.login.refresh.buffer.seconds", "sasl.login.refresh.min.period.seconds",
    "sasl.login.refresh.window.factor", "sasl.login.refresh.window.jitter",
    "sasl.mechanism.inter.broker.protocol", "ssl.cipher.suites", "ssl.client.auth",
    "ssl.enabled.protocols", "ssl.endpoint.identification.algorithm",
    "ssl.engine.factory.class", "ssl.key.password", "ssl.keymanager.algorithm",
    "ssl.keystore.certificate.chain", "ssl.keystore.key", "ssl.keystore.location",
    "ssl.keystore.password", "ssl.keystore.type", "ssl.protocol", "ssl.provider",
    "ssl.secure.random.implementation", "ssl.trustmanager.algorithm",
    "ssl.truststore.certificates", "ssl.truststore.location", "ssl.truststore.password",
    "ssl.truststore.type",
]

# Kafka's SslConfigs.RECONFIGURABLE_CONFIGS: dynamic only as listener.name.<l>.<config>.
LISTENER_ONLY = {
    "ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password",
    "ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.password",
    "ssl.keystore.certificate.chain", "ssl.keystore.key", "ssl.truststore.certificates",
}

# A valid value other than the default, where the type alone does not give one.
VALUES = {
    "compression.type": "lz4", "log.cleanup.policy": "compact",
    "log.message.timestamp.type": "LogAppendTime", "ssl.client.auth": "requested",
    "compression.gzip.level": "5", "log.cleaner.min.cleanable.ratio": "0.25",
    "listeners": "PLAINTEXT://127.0.0.1:1,CONTROLLER://127.0.0.1:2",
    "advertised.listeners": "PLAINTEXT://example.com:9092",
    "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
    "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256", "sasl.mechanism.inter.broker.protocol": "PLAIN",
    "metric.reporters": "com.example.Reporter", "max.connections.per.ip.overrides": "127.0.0.1:5",
}


def value_for(key, c):
    """A valid value for key other than its described default c."""
    if key in VALUES:
        return VALUES[key]
    t, v = c["type"], c["value"]
    if t == BOOLEAN:
        return "false" if v == "true" else "true"
    if t in (INT, SHORT, LONG):
        if v is None:
            return "1000"
        n = int(v)
        return str(n - 1 if n in (2 ** 31 - 1, 2 ** 63 - 1, 2 ** 15 - 1) else n + 1)
    if t == DOUBLE:
        return "0.5" if v != "0.5" else "0.75"
    if t == CLASS:
        return "com.example.Plugin"
    return "s3cret" if t == PASSWORD else "value-%s" % uuid.uuid4().hex[:6]


def describe(b, name, keys):
    with b.conn() as c:
        res = c.describe_configs([(BROKER, name, keys)], version=4, include_synonyms=True,
                                 include_documentation=True)
    assert res[0]["error"] == 0, res
    return res[0]["configs"]


def alter(b, name, changes):
    with b.conn() as c:
        return c.incremental_alter_configs([(BROKER, name, changes)])[0]


@pytest.mark.parametrize("key", CLUSTER_WIDE + PER_BROKER)
def test_dynamic_broker_config_accepted(shared_broker, key):
    """Per broker every dynamic name is taken, described back (DYNAMIC_BROKER_CONFIG, read-only
    false, with a doc saying whether Tally applies it) and deleted again; at the cluster-wide
    default only the cluster-wide ones are."""
    b = shared_broker
    c = describe(b, "1", [key])[key]
    assert c["read_only"] is False and c["doc"], c
    value = value_for(key, c)
    if key in LISTENER_ONLY:
        for name in ("1", ""):
            err, msg = alter(b, name, [(key, kp.OP_SET, value)])[:2]
            assert err == INVALID_REQUEST and "listener prefix" in msg, (key, err, msg)
        return
    err, msg = alter(b, "1", [(key, kp.OP_SET, value)])[:2]
    assert err == 0, (key, value, msg)
    got = describe(b, "1", [key])[key]
    assert got["source"] == DYNAMIC_BROKER, got
    if c["type"] == PASSWORD:
        assert got["sensitive"] is True and got["value"] is None, got
        assert all(s[1] is None for s in got["synonyms"]), got
    else:
        assert got["sensitive"] is False and got["value"] == value, got
        assert got["synonyms"][0] == (key, value, DYNAMIC_BROKER), got
    assert alter(b, "1", [(key, kp.OP_DELETE, None)])[0] == 0
    assert describe(b, "1", [key])[key]["source"] in (STATIC, DEFAULT)
    err, msg = alter(b, "", [(key, kp.OP_SET, value)])[:2]
    if key in PER_BROKER:
        assert err == INVALID_REQUEST and "broker id must be specified" in msg, (key, msg)
    else:
        assert err == 0, (key, msg)
        assert describe(b, "1", [key])[key]["source"] == DYNAMIC_DEFAULT
        assert alter(b, "", [(key, kp.OP_DELETE, None)])[0] == 0


def test_the_issue_examples_through_every_client(shared_broker):
    """sasl.kerberos.min.time.before.relogin and background.threads (the issue's examples):
    kafka-python's IncrementalAlterConfigs classes, confluent-kafka's AlterConfigs."""
    b = shared_broker
    ka = KafkaAdminClient(bootstrap_servers=b.bootstrap, client_id="brokercfg",
                          request_timeout_ms=30000)
    try:
        assert ttc.kp_incremental(ka, BROKER, "1", [
            ("sasl.kerberos.min.time.before.relogin", kp.OP_SET, "120000")]) == (0, None)
        assert ttc.kp_incremental(ka, BROKER, "", [
            ("background.threads", kp.OP_SET, "20")]) == (0, None)
    finally:
        ka.close()
    c = describe(b, "1", ["sasl.kerberos.min.time.before.relogin", "background.threads"])
    assert (c["sasl.kerberos.min.time.before.relogin"]["value"],
            c["sasl.kerberos.min.time.before.relogin"]["source"]) == ("120000", DYNAMIC_BROKER)
    assert (c["background.threads"]["value"], c["background.threads"]["source"]) == (
        "20", DYNAMIC_DEFAULT)
    assert "no effect in Tally" in c["background.threads"]["doc"]
    admin = AdminClient({"bootstrap.servers": b.bootstrap})
    res = ConfigResource("broker", "1", set_config={"background.threads": "12",
                                                    "num.network.threads": "4"})
    admin.alter_configs([res])[res].result(timeout=30)
    c = describe(b, "1", ["background.threads", "num.network.threads",
                          "sasl.kerberos.min.time.before.relogin"])
    assert c["background.threads"]["value"] == "12" and c["num.network.threads"]["value"] == "4"
    # AlterConfigs replaces the resource's whole set: the per-broker one not listed is gone.
    assert c["sasl.kerberos.min.time.before.relogin"]["source"] == DEFAULT
    for name, key in (("1", "background.threads"), ("1", "num.network.threads"),
                      ("", "background.threads")):
        assert alter(b, name, [(key, kp.OP_DELETE, None)])[0] == 0


@pytest.mark.parametrize("key,value", [("zookeeper.connect", "zk:2181"),
                                       ("broker.rack", "r1"), ("process.roles", "broker"),
                                       ("replica.lag.time.max.ms", "10000"),
                                       ("inter.broker.protocol.version", "3.9")])
def test_read_only_broker_config_refused(shared_broker, key, value):
    for name in ("1", ""):
        err, msg = alter(shared_broker, name, [(key, kp.OP_SET, value)])[:2]
        assert err == INVALID_REQUEST and "Cannot update these configs dynamically" in msg, msg
    assert describe(shared_broker, "1", [key])[key]["read_only"] is True


def test_kafka_server_properties_starts_and_says_what_is_inert(broker_factory, tmp_path):
    """A server.properties with Kafka's names Tally does not apply (ZooKeeper, Java TLS, SASL,
    quotas, threads) starts the broker; each is reported once as having no effect, none as
    unknown, and they are described with their static value (a password hidden)."""
    settings = {"zookeeper.connect": "localhost:2181", "num.network.threads": "8",
                "ssl.keymanager.algorithm": "PKIX", "sasl.jaas.config": "pw",
                "group.coordinator.rebalance.protocols": "classic",
                "inter.broker.protocol.version": "3.9-IV0", "log.cleaner.threads": "2"}
    b = broker_factory(settings=settings)
    err = b.stderr_all()
    assert "not a known config" not in err, err
    for key in settings:
        assert err.count("the configuration '%s' is a Kafka config with no effect in Tally" %
                         key) == 1, (key, err)
    c = describe(b, "1", list(settings))
    for key, value in settings.items():
        assert c[key]["source"] == STATIC, c[key]
        want = None if key == "sasl.jaas.config" else value
        assert c[key]["value"] == want, c[key]
