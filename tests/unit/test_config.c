/* SPDX-License-Identifier: Apache-2.0 */
/* config unit tests: the table and its look-ups, validation (ranges, enumerations,
 * non-numbers), and the effective-value chain (topic > dynamic per-broker > dynamic cluster
 * default > static props > built-in) against a real single-voter metadata quorum on a uv
 * loop in a temporary directory. */
#include "harness.h"
#include "fixture.h"

#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/err.h"
#include "base/props.h"
#include "admin/admin.h"
#include "config/config.h"
#include "meta/meta.h"

/* ---- a single-voter metadata quorum ------------------------------------------------------ */

struct cfx {
    struct fixture_meta q;
    struct props *props;
    struct config_ctx ctx;
};

/* Starts the quorum (node id 1) and waits until it is ready. */
static bool cfx_start(struct cfx *f)
{
    bool ok;

    memset(f, 0, sizeof *f);
    if (!fixture_meta_init(&f->q, "/tmp/tally-cfg-XXXXXX", NULL, NULL, NULL))
        return false;
    ok = fixture_meta_start(&f->q);
    f->props = props_new();
    f->ctx = (struct config_ctx){.meta = f->q.m, .props = f->props, .node_id = 1};
    return ok && f->props != NULL;
}

static int cfx_set(struct cfx *f, int8_t rtype, const char *rname, const char *key,
                   const char *value)
{
    struct meta_record r = {.type = META_REC_CONFIG};
    r.u.config.resource_type = rtype;
    r.u.config.resource_name = rname;
    r.u.config.key = key;
    r.u.config.value = value;
    return fixture_meta_propose(&f->q, &r, 1);
}

static int cfx_topic(struct cfx *f, const char *name, uint8_t idbyte)
{
    struct meta_record r = {.type = META_REC_TOPIC};
    r.u.topic.name = name;
    memset(r.u.topic.id, idbyte, 16);
    return fixture_meta_propose(&f->q, &r, 1);
}

static void cfx_stop(struct cfx *f)
{
    CHECK(fixture_meta_stop(&f->q));
    CHECK_EQ_INT(fixture_meta_fini(&f->q), 0);
    props_free(f->props);
}

/* The effective value of a topic config (by its topic key) and its source. */
static const char *eff_topic(struct cfx *f, const char *topic, const char *key,
                             enum config_source *src)
{
    return config_effective(&f->ctx, RESOURCE_TOPIC, topic, config_find_topic(key), src);
}

static const char *eff_broker(struct cfx *f, const char *broker, const char *key,
                              enum config_source *src)
{
    return config_effective(&f->ctx, RESOURCE_BROKER, broker, config_find_broker(key), src);
}

/* ---- the table ----------------------------------------------------------------------------- */

TEST(config_find_topic_and_broker)
{
    const struct config_def *d = config_find_topic("retention.ms"), *b;
    REQUIRE(d);
    CHECK_EQ_STR(d->broker_key, "log.retention.ms");
    CHECK_EQ_INT(d->type, CT_LONG);
    CHECK_EQ_STR(d->def, "604800000");
    CHECK(config_find_broker("log.retention.ms") == d);
    /* Topic and broker names differ: each look-up only knows its own. */
    CHECK(config_find_topic("log.retention.ms") == NULL);
    CHECK(config_find_broker("retention.ms") == NULL);
    /* Same name on both sides. */
    d = config_find_topic("min.insync.replicas");
    REQUIRE(d);
    CHECK(config_find_broker("min.insync.replicas") == d);
    d = config_find_topic("segment.ms");
    REQUIRE(d);
    CHECK_EQ_STR(d->broker_key, "log.roll.ms");
    d = config_find_topic("max.message.bytes");
    REQUIRE(d);
    CHECK_EQ_STR(d->broker_key, "message.max.bytes");
    /* Broker-only configs have no topic key and are not topic configs. */
    b = config_find_broker("num.partitions");
    REQUIRE(b);
    CHECK(b->topic_key == NULL);
    CHECK(!b->dynamic); /* read-only, as in Kafka */
    CHECK(config_find_topic("num.partitions") == NULL);
    b = config_find_broker("node.id");
    REQUIRE(b);
    CHECK(!b->dynamic);
    /* Unknown and empty keys. The hour keys are broker entries (validated at start) that
     * no topic config takes its default from directly. */
    CHECK(config_find_topic("no.such.config") == NULL);
    CHECK(config_find_broker("no.such.config") == NULL);
    CHECK(config_find_topic("") == NULL);
    CHECK(config_find_broker("") == NULL);
    CHECK(config_find_broker("log.retention.hours") != NULL);
    CHECK(config_find_broker("log.retention.hours")->topic_key == NULL);
    CHECK(config_find_topic("Retention.ms") == NULL);
}

TEST(config_hours_validated_and_negative_retention_unlimited)
{
    struct cfx f;
    enum config_source src;
    char why[256];

    REQUIRE(cfx_start(&f));
    REQUIRE(props_set(f.props, "log.retention.hours", "abc") == 0);
    CHECK(admin_check_config(f.props, why, sizeof why) != 0);
    REQUIRE(props_set(f.props, "log.retention.hours", "-1") == 0);
    CHECK(admin_check_config(f.props, why, sizeof why) == 0);
    CHECK_EQ_STR(eff_broker(&f, "1", "log.retention.ms", &src), "-1");
    cfx_stop(&f);
}

TEST(config_cluster_default_resource_reports_default_source)
{
    struct cfx f;
    enum config_source src;
    struct meta_record rec = {.type = META_REC_CONFIG};

    REQUIRE(cfx_start(&f));
    rec.u.config.resource_type = RESOURCE_BROKER;
    rec.u.config.resource_name = "";
    rec.u.config.key = "num.partitions";
    rec.u.config.value = "6";
    REQUIRE(fixture_meta_propose(&f.q, &rec, 1) == 0);
    CHECK_EQ_STR(eff_broker(&f, "", "num.partitions", &src), "6");
    CHECK_EQ_INT(src, CS_DYNAMIC_DEFAULT_BROKER);
    cfx_stop(&f);
}

TEST(config_table_consistent)
{
    size_t n;
    const struct config_def *d = config_defs(&n);
    char why[256];
    REQUIRE(n > 20);
    for (size_t i = 0; i < n; i++) {
        REQUIRE(d[i].broker_key || d[i].topic_key);
        /* Every key has documentation (DescribeConfigs v3+ and tally configs --help). */
        CHECK(d[i].doc != NULL && strlen(d[i].doc) > 20);
        /* Every look-up finds its own entry. */
        if (d[i].broker_key)
            CHECK(config_find_broker(d[i].broker_key) == &d[i]);
        if (d[i].topic_key)
            CHECK(config_find_topic(d[i].topic_key) == &d[i]);
        CHECK_EQ_STR(config_name(&d[i]), d[i].topic_key ? d[i].topic_key : d[i].broker_key);
        /* Every built-in default passes its own validation (a broker-only key may have
         * none, as Kafka's log.retention.minutes). */
        if (d[i].def == NULL) {
            CHECK(d[i].topic_key == NULL);
            continue;
        }
        why[0] = '\0';
        if (config_validate(&d[i], d[i].def, why, sizeof why) != 0) {
            char m[300];
            snprintf(m, sizeof m, "default of %s: %s", config_name(&d[i]), why);
            harness_fail(__FILE__, __LINE__, m);
        }
        if (d[i].type == CT_INT || d[i].type == CT_SHORT || d[i].type == CT_LONG)
            CHECK(d[i].min <= d[i].max);
    }
    /* Topic configs come first, then broker-only ones. */
    for (size_t i = 1; i < n; i++)
        CHECK(!(d[i].topic_key && !d[i - 1].topic_key));
}

/* Every topic config of Kafka 3.9 (TopicConfig / LogConfig) is known, with its broker
 * synonym (ServerTopicConfigSynonyms) where Kafka has one. */
TEST(config_every_kafka_topic_config)
{
    static const char *const pairs[][2] = {
        {"cleanup.policy", "log.cleanup.policy"},
        {"delete.retention.ms", "log.cleaner.delete.retention.ms"},
        {"max.compaction.lag.ms", "log.cleaner.max.compaction.lag.ms"},
        {"min.cleanable.dirty.ratio", "log.cleaner.min.cleanable.ratio"},
        {"min.compaction.lag.ms", "log.cleaner.min.compaction.lag.ms"},
        {"compression.type", "compression.type"},
        {"compression.gzip.level", "compression.gzip.level"},
        {"compression.lz4.level", "compression.lz4.level"},
        {"compression.zstd.level", "compression.zstd.level"},
        {"file.delete.delay.ms", "log.segment.delete.delay.ms"},
        {"flush.messages", "log.flush.interval.messages"},
        {"flush.ms", "log.flush.interval.ms"},
        {"follower.replication.throttled.replicas", NULL},
        {"index.interval.bytes", "log.index.interval.bytes"},
        {"leader.replication.throttled.replicas", NULL},
        {"local.retention.bytes", "log.local.retention.bytes"},
        {"local.retention.ms", "log.local.retention.ms"},
        {"max.message.bytes", "message.max.bytes"},
        {"message.downconversion.enable", "log.message.downconversion.enable"},
        {"message.format.version", "log.message.format.version"},
        {"message.timestamp.after.max.ms", "log.message.timestamp.after.max.ms"},
        {"message.timestamp.before.max.ms", "log.message.timestamp.before.max.ms"},
        {"message.timestamp.difference.max.ms", "log.message.timestamp.difference.max.ms"},
        {"message.timestamp.type", "log.message.timestamp.type"},
        {"min.insync.replicas", "min.insync.replicas"},
        {"preallocate", "log.preallocate"},
        {"remote.storage.enable", NULL},
        {"remote.log.copy.disable", NULL},
        {"remote.log.delete.on.disable", NULL},
        {"retention.bytes", "log.retention.bytes"},
        {"retention.ms", "log.retention.ms"},
        {"segment.bytes", "log.segment.bytes"},
        {"segment.index.bytes", "log.index.size.max.bytes"},
        {"segment.jitter.ms", "log.roll.jitter.ms"},
        {"segment.ms", "log.roll.ms"},
        {"unclean.leader.election.enable", "unclean.leader.election.enable"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        const struct config_def *d = config_find_topic(pairs[i][0]);
        if (d == NULL) {
            harness_fail(__FILE__, __LINE__, pairs[i][0]);
            continue;
        }
        if (pairs[i][1] == NULL)
            CHECK(d->broker_key == NULL);
        else
            CHECK(d->broker_key && strcmp(d->broker_key, pairs[i][1]) == 0);
    }
}

/* Every name of Kafka 3.9's broker config table (its generated kafka_config.html, with the
 * Update Mode of each) and its broker quota configs (DynamicConfig.Broker) is known, and is
 * dynamic exactly when Kafka's is: per-broker ones refuse the cluster-wide default resource,
 * the listener security configs need a listener prefix. Every broker row is one of them,
 * except producer.id.expiration.check.interval.ms (internal in Kafka, read-only). */
TEST(config_kafka_39_broker_table)
{
    static const char *const read_only[] = {
        "alter.config.policy.class.name",
        "alter.log.dirs.replication.quota.window.num",
        "alter.log.dirs.replication.quota.window.size.seconds",
        "authorizer.class.name",
        "auto.create.topics.enable",
        "auto.include.jmx.reporter",
        "auto.leader.rebalance.enable",
        "broker.heartbeat.interval.ms",
        "broker.id",
        "broker.id.generation.enable",
        "broker.rack",
        "broker.session.timeout.ms",
        "client.quota.callback.class",
        "connection.failed.authentication.delay.ms",
        "connections.max.idle.ms",
        "connections.max.reauth.ms",
        "control.plane.listener.name",
        "controlled.shutdown.enable",
        "controlled.shutdown.max.retries",
        "controlled.shutdown.retry.backoff.ms",
        "controller.listener.names",
        "controller.quorum.append.linger.ms",
        "controller.quorum.bootstrap.servers",
        "controller.quorum.election.backoff.max.ms",
        "controller.quorum.election.timeout.ms",
        "controller.quorum.fetch.timeout.ms",
        "controller.quorum.request.timeout.ms",
        "controller.quorum.retry.backoff.ms",
        "controller.quorum.voters",
        "controller.quota.window.num",
        "controller.quota.window.size.seconds",
        "controller.socket.timeout.ms",
        "create.topic.policy.class.name",
        "default.replication.factor",
        "delegation.token.expiry.check.interval.ms",
        "delegation.token.expiry.time.ms",
        "delegation.token.master.key",
        "delegation.token.max.lifetime.ms",
        "delegation.token.secret.key",
        "delete.records.purgatory.purge.interval.requests",
        "delete.topic.enable",
        "early.start.listeners",
        "eligible.leader.replicas.enable",
        "fetch.max.bytes",
        "fetch.purgatory.purge.interval.requests",
        "group.consumer.assignors",
        "group.consumer.heartbeat.interval.ms",
        "group.consumer.max.heartbeat.interval.ms",
        "group.consumer.max.session.timeout.ms",
        "group.consumer.max.size",
        "group.consumer.min.heartbeat.interval.ms",
        "group.consumer.min.session.timeout.ms",
        "group.consumer.session.timeout.ms",
        "group.coordinator.append.linger.ms",
        "group.coordinator.rebalance.protocols",
        "group.coordinator.threads",
        "group.initial.rebalance.delay.ms",
        "group.max.session.timeout.ms",
        "group.max.size",
        "group.min.session.timeout.ms",
        "group.share.delivery.count.limit",
        "group.share.heartbeat.interval.ms",
        "group.share.max.groups",
        "group.share.max.heartbeat.interval.ms",
        "group.share.max.record.lock.duration.ms",
        "group.share.max.session.timeout.ms",
        "group.share.max.size",
        "group.share.min.heartbeat.interval.ms",
        "group.share.min.record.lock.duration.ms",
        "group.share.min.session.timeout.ms",
        "group.share.partition.max.record.locks",
        "group.share.record.lock.duration.ms",
        "group.share.session.timeout.ms",
        "initial.broker.registration.timeout.ms",
        "inter.broker.listener.name",
        "inter.broker.protocol.version",
        "kafka.metrics.polling.interval.secs",
        "kafka.metrics.reporters",
        "leader.imbalance.check.interval.seconds",
        "leader.imbalance.per.broker.percentage",
        "log.cleaner.enable",
        "log.dir",
        "log.dir.failure.timeout.ms",
        "log.dirs",
        "log.flush.offset.checkpoint.interval.ms",
        "log.flush.scheduler.interval.ms",
        "log.flush.start.offset.checkpoint.interval.ms",
        "log.message.format.version",
        "log.retention.check.interval.ms",
        "log.retention.hours",
        "log.retention.minutes",
        "log.roll.hours",
        "log.roll.jitter.hours",
        "max.incremental.fetch.session.cache.slots",
        "max.request.partition.size.limit",
        "metadata.log.dir",
        "metadata.log.max.record.bytes.between.snapshots",
        "metadata.log.max.snapshot.interval.ms",
        "metadata.log.segment.bytes",
        "metadata.log.segment.ms",
        "metadata.max.idle.interval.ms",
        "metadata.max.retention.bytes",
        "metadata.max.retention.ms",
        "metrics.num.samples",
        "metrics.recording.level",
        "metrics.sample.window.ms",
        "node.id",
        "num.partitions",
        "num.replica.alter.log.dirs.threads",
        "offset.metadata.max.bytes",
        "offsets.commit.required.acks",
        "offsets.commit.timeout.ms",
        "offsets.load.buffer.size",
        "offsets.retention.check.interval.ms",
        "offsets.retention.minutes",
        "offsets.topic.compression.codec",
        "offsets.topic.num.partitions",
        "offsets.topic.replication.factor",
        "offsets.topic.segment.bytes",
        "password.encoder.cipher.algorithm",
        "password.encoder.iterations",
        "password.encoder.key.length",
        "password.encoder.keyfactory.algorithm",
        "password.encoder.old.secret",
        "password.encoder.secret",
        "process.roles",
        "producer.purgatory.purge.interval.requests",
        "queued.max.request.bytes",
        "queued.max.requests",
        "quota.window.num",
        "quota.window.size.seconds",
        "remote.log.manager.copier.thread.pool.size",
        "remote.log.manager.copy.quota.window.num",
        "remote.log.manager.copy.quota.window.size.seconds",
        "remote.log.manager.expiration.thread.pool.size",
        "remote.log.manager.fetch.quota.window.num",
        "remote.log.manager.fetch.quota.window.size.seconds",
        "remote.log.manager.task.interval.ms",
        "remote.log.manager.thread.pool.size",
        "remote.log.metadata.custom.metadata.max.bytes",
        "remote.log.metadata.manager.class.name",
        "remote.log.metadata.manager.class.path",
        "remote.log.metadata.manager.impl.prefix",
        "remote.log.metadata.manager.listener.name",
        "remote.log.reader.max.pending.tasks",
        "remote.log.reader.threads",
        "remote.log.storage.manager.class.name",
        "remote.log.storage.manager.class.path",
        "remote.log.storage.manager.impl.prefix",
        "remote.log.storage.system.enable",
        "replica.fetch.backoff.ms",
        "replica.fetch.max.bytes",
        "replica.fetch.min.bytes",
        "replica.fetch.response.max.bytes",
        "replica.fetch.wait.max.ms",
        "replica.high.watermark.checkpoint.interval.ms",
        "replica.lag.time.max.ms",
        "replica.selector.class",
        "replica.socket.receive.buffer.bytes",
        "replica.socket.timeout.ms",
        "replication.quota.window.num",
        "replication.quota.window.size.seconds",
        "request.timeout.ms",
        "reserved.broker.max.id",
        "sasl.client.callback.handler.class",
        "sasl.login.callback.handler.class",
        "sasl.login.class",
        "sasl.login.connect.timeout.ms",
        "sasl.login.read.timeout.ms",
        "sasl.login.retry.backoff.max.ms",
        "sasl.login.retry.backoff.ms",
        "sasl.mechanism.controller.protocol",
        "sasl.oauthbearer.clock.skew.seconds",
        "sasl.oauthbearer.expected.audience",
        "sasl.oauthbearer.expected.issuer",
        "sasl.oauthbearer.jwks.endpoint.refresh.ms",
        "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms",
        "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms",
        "sasl.oauthbearer.jwks.endpoint.url",
        "sasl.oauthbearer.scope.claim.name",
        "sasl.oauthbearer.sub.claim.name",
        "sasl.oauthbearer.token.endpoint.url",
        "sasl.server.callback.handler.class",
        "sasl.server.max.receive.size",
        "security.inter.broker.protocol",
        "security.providers",
        "socket.connection.setup.timeout.max.ms",
        "socket.connection.setup.timeout.ms",
        "socket.listen.backlog.size",
        "socket.receive.buffer.bytes",
        "socket.request.max.bytes",
        "socket.send.buffer.bytes",
        "ssl.allow.dn.changes",
        "ssl.allow.san.changes",
        "ssl.principal.mapping.rules",
        "telemetry.max.bytes",
        "transaction.abort.timed.out.transaction.cleanup.interval.ms",
        "transaction.max.timeout.ms",
        "transaction.remove.expired.transaction.cleanup.interval.ms",
        "transaction.state.log.load.buffer.size",
        "transaction.state.log.min.isr",
        "transaction.state.log.num.partitions",
        "transaction.state.log.replication.factor",
        "transaction.state.log.segment.bytes",
        "transactional.id.expiration.ms",
        "zookeeper.clientCnxnSocket",
        "zookeeper.connect",
        "zookeeper.connection.timeout.ms",
        "zookeeper.max.in.flight.requests",
        "zookeeper.metadata.migration.enable",
        "zookeeper.session.timeout.ms",
        "zookeeper.set.acl",
        "zookeeper.ssl.cipher.suites",
        "zookeeper.ssl.client.enable",
        "zookeeper.ssl.crl.enable",
        "zookeeper.ssl.enabled.protocols",
        "zookeeper.ssl.endpoint.identification.algorithm",
        "zookeeper.ssl.keystore.location",
        "zookeeper.ssl.keystore.password",
        "zookeeper.ssl.keystore.type",
        "zookeeper.ssl.ocsp.enable",
        "zookeeper.ssl.protocol",
        "zookeeper.ssl.truststore.location",
        "zookeeper.ssl.truststore.password",
        "zookeeper.ssl.truststore.type",
    };
    static const char *const cluster_wide[] = {
        "background.threads",
        "compression.gzip.level",
        "compression.lz4.level",
        "compression.type",
        "compression.zstd.level",
        "follower.replication.throttled.rate",
        "leader.replication.throttled.rate",
        "log.cleaner.backoff.ms",
        "log.cleaner.dedupe.buffer.size",
        "log.cleaner.delete.retention.ms",
        "log.cleaner.io.buffer.load.factor",
        "log.cleaner.io.buffer.size",
        "log.cleaner.io.max.bytes.per.second",
        "log.cleaner.max.compaction.lag.ms",
        "log.cleaner.min.cleanable.ratio",
        "log.cleaner.min.compaction.lag.ms",
        "log.cleaner.threads",
        "log.cleanup.policy",
        "log.flush.interval.messages",
        "log.flush.interval.ms",
        "log.index.interval.bytes",
        "log.index.size.max.bytes",
        "log.local.retention.bytes",
        "log.local.retention.ms",
        "log.message.downconversion.enable",
        "log.message.timestamp.after.max.ms",
        "log.message.timestamp.before.max.ms",
        "log.message.timestamp.difference.max.ms",
        "log.message.timestamp.type",
        "log.preallocate",
        "log.retention.bytes",
        "log.retention.ms",
        "log.roll.jitter.ms",
        "log.roll.ms",
        "log.segment.bytes",
        "log.segment.delete.delay.ms",
        "max.connection.creation.rate",
        "max.connections",
        "max.connections.per.ip",
        "max.connections.per.ip.overrides",
        "message.max.bytes",
        "metric.reporters",
        "min.insync.replicas",
        "num.io.threads",
        "num.network.threads",
        "num.recovery.threads.per.data.dir",
        "num.replica.fetchers",
        "producer.id.expiration.ms",
        "remote.fetch.max.wait.ms",
        "remote.log.index.file.cache.total.size.bytes",
        "remote.log.manager.copy.max.bytes.per.second",
        "remote.log.manager.fetch.max.bytes.per.second",
        "replica.alter.log.dirs.io.max.bytes.per.second",
        "transaction.partition.verification.enable",
        "unclean.leader.election.enable",
    };
    static const char *const per_broker[] = {
        "advertised.listeners",
        "listener.security.protocol.map",
        "listeners",
        "principal.builder.class",
        "sasl.enabled.mechanisms",
        "sasl.jaas.config",
        "sasl.kerberos.kinit.cmd",
        "sasl.kerberos.min.time.before.relogin",
        "sasl.kerberos.principal.to.local.rules",
        "sasl.kerberos.service.name",
        "sasl.kerberos.ticket.renew.jitter",
        "sasl.kerberos.ticket.renew.window.factor",
        "sasl.login.refresh.buffer.seconds",
        "sasl.login.refresh.min.period.seconds",
        "sasl.login.refresh.window.factor",
        "sasl.login.refresh.window.jitter",
        "sasl.mechanism.inter.broker.protocol",
        "ssl.cipher.suites",
        "ssl.client.auth",
        "ssl.enabled.protocols",
        "ssl.endpoint.identification.algorithm",
        "ssl.engine.factory.class",
        "ssl.key.password",
        "ssl.keymanager.algorithm",
        "ssl.keystore.certificate.chain",
        "ssl.keystore.key",
        "ssl.keystore.location",
        "ssl.keystore.password",
        "ssl.keystore.type",
        "ssl.protocol",
        "ssl.provider",
        "ssl.secure.random.implementation",
        "ssl.trustmanager.algorithm",
        "ssl.truststore.certificates",
        "ssl.truststore.location",
        "ssl.truststore.password",
        "ssl.truststore.type",
    };
    static const char *const listener_only[] = {
        "ssl.keystore.type",       "ssl.keystore.location",
        "ssl.keystore.password",   "ssl.key.password",
        "ssl.truststore.type",     "ssl.truststore.location",
        "ssl.truststore.password", "ssl.keystore.certificate.chain",
        "ssl.keystore.key",        "ssl.truststore.certificates"};
    static const struct {
        const char *const *names;
        size_t n;
        bool dynamic, per_broker;
    } modes[] = {
        {read_only, sizeof read_only / sizeof read_only[0], false, false},
        {cluster_wide, sizeof cluster_wide / sizeof cluster_wide[0], true, false},
        {per_broker, sizeof per_broker / sizeof per_broker[0], true, true},
    };
    size_t n, listed = 0;
    const struct config_def *d = config_defs(&n);

    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++)
        for (size_t i = 0; i < modes[m].n; i++) {
            const struct config_def *b = config_find_broker(modes[m].names[i]);
            if (b == NULL) {
                harness_fail(__FILE__, __LINE__, modes[m].names[i]);
                continue;
            }
            if (b->dynamic != modes[m].dynamic ||
                ((b->flags & CF_PER_BROKER) != 0) != modes[m].per_broker)
                harness_fail(__FILE__, __LINE__, modes[m].names[i]);
            listed++;
        }
    for (size_t i = 0; i < sizeof listener_only / sizeof listener_only[0]; i++) {
        const struct config_def *b = config_find_broker(listener_only[i]);
        REQUIRE(b != NULL);
        CHECK((b->flags & CF_LISTENER_ONLY) != 0);
    }
    /* Tally's own broker configs, not Kafka's (issue 19's metrics endpoint), read-only. */
    static const char *const tally_own[] = {
        "metrics.listener",     "metrics.partition.level",         "metrics.partition.max.series",
        "console.write.enable", "controller.listener.insecure.ok", "console.authentication",
        "console.insecure.ok",  "metrics.ssl.keystore.location",   "metrics.ssl.keystore.type"};
    for (size_t i = 0; i < sizeof tally_own / sizeof tally_own[0]; i++) {
        const struct config_def *b = config_find_broker(tally_own[i]);
        REQUIRE(b != NULL);
        CHECK(!b->dynamic && b->topic_key == NULL);
    }
    /* The StandardAuthorizer's own configs (not in the broker table), read-only. */
    static const char *const authorizer_own[] = {"super.users", "allow.everyone.if.no.acl.found"};
    for (size_t i = 0; i < sizeof authorizer_own / sizeof authorizer_own[0]; i++) {
        const struct config_def *b = config_find_broker(authorizer_own[i]);
        REQUIRE(b != NULL);
        CHECK(!b->dynamic && b->topic_key == NULL);
    }
    size_t broker_rows = 0;
    for (size_t i = 0; i < n; i++)
        broker_rows += d[i].broker_key != NULL;
    CHECK_EQ_INT(broker_rows, listed + 1 + sizeof tally_own / sizeof tally_own[0] +
                                  sizeof authorizer_own / sizeof authorizer_own[0]);
    CHECK(!config_find_broker("producer.id.expiration.check.interval.ms")->dynamic);
    /* Passwords are typed so (DescribeConfigs hides them). */
    CHECK_EQ_INT(config_find_broker("ssl.keystore.password")->type, CT_PASSWORD);
    CHECK_EQ_INT(config_find_broker("sasl.jaas.config")->type, CT_PASSWORD);
    CHECK_EQ_INT(config_find_broker("principal.builder.class")->type, CT_CLASS);
}

/* ---- every row applied, or saying it is not ------------------------------------------------ */

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long len;
    if (f == NULL)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)len + 1)) != NULL) {
        size_t got = fread(buf, 1, (size_t)len, f);
        buf[got] = '\0';
    }
    fclose(f);
    return buf;
}

/* The sources of src/ (but the table itself), for the walk below. */
#define MAX_SOURCES 512
static char *source_path[MAX_SOURCES];
static char *source_text[MAX_SOURCES];
static size_t n_sources;

static int collect_source(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    size_t len = strlen(path);
    (void)st;
    (void)ftw;
    if (type != FTW_F || len < 2 || (strcmp(path + len - 2, ".c") && strcmp(path + len - 2, ".h")))
        return 0;
    if (strcmp(path, "src/config/table.c") == 0 || n_sources == MAX_SOURCES)
        return n_sources == MAX_SOURCES; /* stop when full: the test then fails */
    source_path[n_sources] = strdup(path);
    source_text[n_sources] = slurp(path);
    n_sources++;
    return 0;
}

/* A quoted key (as code reads it: config_topic_int(c, topic, "retention.ms", ...)). */
static bool mentions(const char *text, const char *key)
{
    char quoted[256];
    if (text == NULL || key == NULL)
        return false;
    snprintf(quoted, sizeof quoted, "\"%s\"", key);
    return strstr(text, quoted) != NULL;
}

/* Issue 18: a stored-but-inert config must say so, and one that claims an effect must have
 * it. Every row either names the source file that reads it (which must mention its key,
 * quoted) or says "no effect in Tally" in its doc — and then no source file under src/ may
 * read it (a row left inert after the code started reading it fails here too). Run from the
 * repository root, as make unit and tests/run.sh do. */
TEST(config_every_row_applied_or_no_effect)
{
    size_t n;
    const struct config_def *d = config_defs(&n);
    char m[512];

    n_sources = 0;
    REQUIRE(nftw("src", collect_source, 16, FTW_PHYS) == 0);
    REQUIRE(n_sources > 50);
    for (size_t i = 0; i < n; i++) {
        const char *name = config_name(&d[i]);
        bool inert = strstr(d[i].doc, "no effect in Tally") != NULL;
        if (d[i].applied == NULL) {
            if (!inert) {
                snprintf(m, sizeof m, "%s: neither applied nor marked \"no effect in Tally\"",
                         name);
                harness_fail(__FILE__, __LINE__, m);
            }
            for (size_t k = 0; k < n_sources; k++)
                if (mentions(source_text[k], d[i].topic_key) ||
                    mentions(source_text[k], d[i].broker_key)) {
                    snprintf(m, sizeof m, "%s says \"no effect in Tally\" but %s reads it", name,
                             source_path[k]);
                    harness_fail(__FILE__, __LINE__, m);
                }
            continue;
        }
        char *text = slurp(d[i].applied);
        if (!mentions(text, d[i].topic_key) && !mentions(text, d[i].broker_key)) {
            snprintf(m, sizeof m, "%s: %s %s", name, d[i].applied,
                     text ? "does not mention it" : "cannot be read");
            harness_fail(__FILE__, __LINE__, m);
        }
        free(text);
    }
    for (size_t k = 0; k < n_sources; k++) {
        free(source_path[k]);
        free(source_text[k]);
    }
}

TEST(config_validate_new_configs)
{
    char why[256];
    const struct config_def *ct = config_find_topic("compression.type");
    const struct config_def *thr = config_find_topic("leader.replication.throttled.replicas");
    const struct config_def *mfv = config_find_topic("message.format.version");
    const struct config_def *rse = config_find_topic("remote.storage.enable");
    const struct config_def *lrm = config_find_topic("local.retention.ms");
    const struct config_def *sib = config_find_topic("segment.index.bytes");
    const struct config_def *cp = config_find_topic("cleanup.policy");
    static const char *const codecs[] = {"producer", "uncompressed", "gzip",
                                         "snappy",   "lz4",          "zstd"};

    for (size_t i = 0; i < 6; i++)
        CHECK_EQ_INT(config_validate(ct, codecs[i], why, sizeof why), 0);
    CHECK_EQ_INT(config_validate(ct, "none", why, sizeof why), ERR_INVALID_CONFIG);
    CHECK_EQ_INT(config_validate(ct, "brotli", why, sizeof why), ERR_INVALID_CONFIG);

    CHECK_EQ_INT(config_validate(thr, "", why, sizeof why), 0);
    CHECK_EQ_INT(config_validate(thr, "*", why, sizeof why), 0);
    CHECK_EQ_INT(config_validate(thr, "0:1", why, sizeof why), 0);
    CHECK_EQ_INT(config_validate(thr, "0:1, 1:2,2:3", why, sizeof why), 0);
    CHECK_EQ_INT(config_validate(thr, "0", why, sizeof why), ERR_INVALID_CONFIG);
    CHECK_EQ_INT(config_validate(thr, "0:x", why, sizeof why), ERR_INVALID_CONFIG);
    CHECK_EQ_INT(config_validate(thr, "*,0:1", why, sizeof why), ERR_INVALID_CONFIG);
    CHECK_EQ_INT(config_validate(thr, "0:1,", why, sizeof why), ERR_INVALID_CONFIG);

    CHECK_EQ_INT(config_validate(mfv, "0.10.2", why, sizeof why), 0);
    CHECK_EQ_INT(config_validate(mfv, "0.10.2-IV0", why, sizeof why), 0);
    CHECK_EQ_INT(config_validate(mfv, "2.8", why, sizeof why), 0);
    CHECK_EQ_INT(config_validate(mfv, "3.0-IV1", why, sizeof why), 0);
    CHECK_EQ_INT(config_validate(mfv, "3.7", why, sizeof why), 0);
    CHECK_EQ_INT(config_validate(mfv, "banana", why, sizeof why), ERR_INVALID_CONFIG);
    CHECK_EQ_INT(config_validate(mfv, "0.7", why, sizeof why), ERR_INVALID_CONFIG);
    CHECK_EQ_INT(config_validate(mfv, "9.9", why, sizeof why), ERR_INVALID_CONFIG);
    CHECK_EQ_INT(config_validate(mfv, "3.0-IV", why, sizeof why), ERR_INVALID_CONFIG);
    CHECK((mfv->flags & CF_DEPRECATED) != 0);

    CHECK_EQ_INT(config_validate(rse, "false", why, sizeof why), 0);
    CHECK_EQ_INT(config_validate(rse, "true", why, sizeof why), ERR_INVALID_CONFIG);
    CHECK(strstr(why, "tiered") != NULL);

    /* retention.bytes takes any long, as Kafka (no validator there). */
    CHECK_EQ_INT(config_validate(config_find_topic("retention.bytes"), "-5", why, sizeof why), 0);
    CHECK_EQ_INT(config_validate(config_find_topic("retention.bytes"), "1e6", why, sizeof why),
                 ERR_INVALID_CONFIG);
    CHECK_EQ_INT(config_validate(lrm, "-2", why, sizeof why), 0);
    CHECK_EQ_INT(config_validate(lrm, "-3", why, sizeof why), ERR_INVALID_CONFIG);
    CHECK_EQ_INT(config_validate(sib, "3", why, sizeof why), ERR_INVALID_CONFIG);
    CHECK_EQ_INT(config_validate(sib, "4", why, sizeof why), 0);

    /* min.cleanable.dirty.ratio is a double in [0, 1]. */
    const struct config_def *ratio = config_find_topic("min.cleanable.dirty.ratio");
    CHECK_EQ_INT(ratio->type, CT_DOUBLE);
    CHECK_EQ_INT(config_validate(ratio, "0", why, sizeof why), 0);
    CHECK_EQ_INT(config_validate(ratio, "0.25", why, sizeof why), 0);
    CHECK_EQ_INT(config_validate(ratio, "1", why, sizeof why), 0);
    CHECK_EQ_INT(config_validate(ratio, "1.5", why, sizeof why), ERR_INVALID_CONFIG);
    CHECK_EQ_INT(config_validate(ratio, "-0.1", why, sizeof why), ERR_INVALID_CONFIG);
    CHECK_EQ_INT(config_validate(ratio, "nan", why, sizeof why), ERR_INVALID_CONFIG);
    CHECK_EQ_INT(config_validate(ratio, "half", why, sizeof why), ERR_INVALID_CONFIG);

    /* cleanup.policy is a list: each item must be known. */
    CHECK_EQ_INT(config_validate(cp, "compact, delete", why, sizeof why), 0);
    CHECK_EQ_INT(config_validate(cp, "compact,", why, sizeof why), ERR_INVALID_CONFIG);
    CHECK_EQ_INT(config_validate(cp, "compact,remove", why, sizeof why), ERR_INVALID_CONFIG);
}

/* ---- validation --------------------------------------------------------------------------- */

TEST(config_validate_ranges)
{
    char why[256];
    const struct config_def *seg = config_find_topic("segment.bytes");
    const struct config_def *ret = config_find_topic("retention.ms");
    const struct config_def *mmb = config_find_topic("max.message.bytes");
    const struct config_def *flm = config_find_topic("flush.messages");
    const struct config_def *rf = config_find_broker("default.replication.factor");
    const struct config_def *isr = config_find_topic("min.insync.replicas");
    REQUIRE(seg && ret && mmb && flm && rf && isr);

    CHECK_EQ_INT(config_validate(seg, "14", why, sizeof why), 0);
    CHECK_EQ_INT(config_validate(seg, "13", why, sizeof why), ERR_INVALID_CONFIG);
    CHECK(strstr(why, "segment.bytes") != NULL);
    CHECK(strstr(why, "13") != NULL);
    CHECK(strstr(why, "[14, 2147483647]") != NULL);
    CHECK_EQ_INT(config_validate(seg, "2147483647", why, sizeof why), 0);
    CHECK_EQ_INT(config_validate(seg, "2147483648", why, sizeof why), ERR_INVALID_CONFIG);

    CHECK_EQ_INT(config_validate(ret, "-1", why, sizeof why), 0);
    CHECK_EQ_INT(config_validate(ret, "0", why, sizeof why), 0);
    CHECK_EQ_INT(config_validate(ret, "-2", why, sizeof why), ERR_INVALID_CONFIG);

    CHECK_EQ_INT(config_validate(mmb, "0", why, sizeof why), 0);
    CHECK_EQ_INT(config_validate(mmb, "-1", why, sizeof why), ERR_INVALID_CONFIG);

    /* Longs up to INT64_MAX; one past overflows strtoll and is refused. */
    CHECK_EQ_INT(config_validate(flm, "9223372036854775807", why, sizeof why), 0);
    CHECK_EQ_INT(config_validate(flm, "9223372036854775808", why, sizeof why), ERR_INVALID_CONFIG);
    CHECK_EQ_INT(config_validate(flm, "-9223372036854775809", why, sizeof why), ERR_INVALID_CONFIG);
    CHECK_EQ_INT(config_validate(flm, "0", why, sizeof why), ERR_INVALID_CONFIG);

    CHECK_EQ_INT(config_validate(rf, "32767", why, sizeof why), 0);
    CHECK_EQ_INT(config_validate(rf, "32768", why, sizeof why), ERR_INVALID_CONFIG);
    CHECK_EQ_INT(config_validate(rf, "0", why, sizeof why), ERR_INVALID_CONFIG);
    CHECK_EQ_INT(config_validate(isr, "0", why, sizeof why), ERR_INVALID_CONFIG);
    CHECK_EQ_INT(config_validate(isr, "1", why, sizeof why), 0);
}

TEST(config_validate_non_numbers)
{
    char why[256];
    const struct config_def *ret = config_find_topic("retention.ms");
    const struct config_def *np = config_find_broker("num.partitions");
    static const char *const bad[] = {"", "abc", "12abc", "1.5", "1e3", "0x10", "--1", "1 ", "-"};
    REQUIRE(ret && np);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        why[0] = '\0';
        CHECK_EQ_INT(config_validate(ret, bad[i], why, sizeof why), ERR_INVALID_CONFIG);
        CHECK(strstr(why, "retention.ms") != NULL);
        CHECK_EQ_INT(config_validate(np, bad[i], why, sizeof why), ERR_INVALID_CONFIG);
    }
    /* A missing value (a delete in AlterConfigs) is named as such. */
    CHECK_EQ_INT(config_validate(ret, NULL, why, sizeof why), ERR_INVALID_CONFIG);
    CHECK(strstr(why, "needs a value") != NULL);
    CHECK(strstr(why, "retention.ms") != NULL);
    /* A broker-only config is named by its broker key. */
    CHECK_EQ_INT(config_validate(np, "x", why, sizeof why), ERR_INVALID_CONFIG);
    CHECK(strstr(why, "num.partitions") != NULL);
    CHECK_EQ_INT(config_validate(np, "3", why, sizeof why), 0);
    /* A tiny reason buffer is truncated, never overrun. */
    char tiny[4] = "zzz";
    CHECK_EQ_INT(config_validate(ret, "x", tiny, sizeof tiny), ERR_INVALID_CONFIG);
    CHECK_EQ_INT(strlen(tiny), 3);
}

TEST(config_validate_enumerations)
{
    char why[256];
    const struct config_def *cp = config_find_topic("cleanup.policy");
    const struct config_def *tt = config_find_topic("message.timestamp.type");
    const struct config_def *ule = config_find_topic("unclean.leader.election.enable");
    const struct config_def *dirs = config_find_broker("log.dirs");
    const struct config_def *lst = config_find_broker("listeners");
    REQUIRE(cp && tt && ule && dirs && lst);

    CHECK_EQ_INT(config_validate(cp, "delete", why, sizeof why), 0);
    CHECK_EQ_INT(config_validate(cp, "compact", why, sizeof why), 0);
    CHECK_EQ_INT(config_validate(cp, "compact,delete", why, sizeof why), 0);
    CHECK_EQ_INT(config_validate(cp, "delete,compact", why, sizeof why), 0);
    CHECK_EQ_INT(config_validate(cp, "remove", why, sizeof why), ERR_INVALID_CONFIG);
    CHECK(strstr(why, "remove") != NULL);
    CHECK(strstr(why, "cleanup.policy") != NULL);
    CHECK_EQ_INT(config_validate(cp, "", why, sizeof why), ERR_INVALID_CONFIG);

    CHECK_EQ_INT(config_validate(tt, "CreateTime", why, sizeof why), 0);
    CHECK_EQ_INT(config_validate(tt, "LogAppendTime", why, sizeof why), 0);
    CHECK_EQ_INT(config_validate(tt, "logappendtime", why, sizeof why), ERR_INVALID_CONFIG);
    CHECK_EQ_INT(config_validate(tt, "LogAppendTime ", why, sizeof why), ERR_INVALID_CONFIG);

    CHECK_EQ_INT(config_validate(ule, "true", why, sizeof why), 0);
    CHECK_EQ_INT(config_validate(ule, "false", why, sizeof why), 0);
    CHECK_EQ_INT(config_validate(ule, "yes", why, sizeof why), ERR_INVALID_CONFIG);
    CHECK_EQ_INT(config_validate(ule, "1", why, sizeof why), ERR_INVALID_CONFIG);

    /* Free-form strings and lists take anything. */
    CHECK_EQ_INT(config_validate(dirs, "/var/lib/tally", why, sizeof why), 0);
    CHECK_EQ_INT(config_validate(dirs, "", why, sizeof why), 0);
    CHECK_EQ_INT(config_validate(lst, "PLAINTEXT://:9092", why, sizeof why), 0);
}

/* ---- the effective-value chain -------------------------------------------------------------- */

TEST(config_effective_chain)
{
    struct cfx f;
    enum config_source src;
    const char *v;

    REQUIRE(cfx_start(&f));
    REQUIRE(cfx_topic(&f, "t1", 1) == 0);
    REQUIRE(cfx_topic(&f, "t2", 2) == 0);

    /* Built-in. */
    src = 0;
    v = eff_topic(&f, "t1", "retention.ms", &src);
    CHECK_EQ_STR(v, "604800000");
    CHECK_EQ_INT(src, CS_DEFAULT);
    v = eff_broker(&f, "1", "log.retention.ms", &src);
    CHECK_EQ_STR(v, "604800000");
    CHECK_EQ_INT(src, CS_DEFAULT);

    /* Static props. */
    REQUIRE(props_set(f.props, "log.retention.ms", "1000") == 0);
    v = eff_topic(&f, "t1", "retention.ms", &src);
    CHECK_EQ_STR(v, "1000");
    CHECK_EQ_INT(src, CS_STATIC_BROKER);
    v = eff_broker(&f, "1", "log.retention.ms", &src);
    CHECK_EQ_STR(v, "1000");
    CHECK_EQ_INT(src, CS_STATIC_BROKER);

    /* Dynamic cluster-wide default beats static. */
    REQUIRE(cfx_set(&f, RESOURCE_BROKER, "", "log.retention.ms", "2000") == 0);
    v = eff_topic(&f, "t1", "retention.ms", &src);
    CHECK_EQ_STR(v, "2000");
    CHECK_EQ_INT(src, CS_DYNAMIC_DEFAULT_BROKER);
    v = eff_broker(&f, "1", "log.retention.ms", &src);
    CHECK_EQ_STR(v, "2000");
    CHECK_EQ_INT(src, CS_DYNAMIC_DEFAULT_BROKER);

    /* Dynamic per-broker (this node) beats the cluster default; other brokers still see the
     * cluster default. */
    REQUIRE(cfx_set(&f, RESOURCE_BROKER, "1", "log.retention.ms", "3000") == 0);
    v = eff_topic(&f, "t1", "retention.ms", &src);
    CHECK_EQ_STR(v, "3000");
    CHECK_EQ_INT(src, CS_DYNAMIC_BROKER);
    v = eff_broker(&f, "1", "log.retention.ms", &src);
    CHECK_EQ_STR(v, "3000");
    CHECK_EQ_INT(src, CS_DYNAMIC_BROKER);
    v = eff_broker(&f, "2", "log.retention.ms", &src);
    CHECK_EQ_STR(v, "2000");
    CHECK_EQ_INT(src, CS_DYNAMIC_DEFAULT_BROKER);

    /* A topic's own setting beats everything, for that topic only. */
    REQUIRE(cfx_set(&f, RESOURCE_TOPIC, "t1", "retention.ms", "4000") == 0);
    v = eff_topic(&f, "t1", "retention.ms", &src);
    CHECK_EQ_STR(v, "4000");
    CHECK_EQ_INT(src, CS_DYNAMIC_TOPIC);
    v = eff_topic(&f, "t2", "retention.ms", &src);
    CHECK_EQ_STR(v, "3000");
    CHECK_EQ_INT(src, CS_DYNAMIC_BROKER);
    /* A broker resource never reads a topic's setting, even one whose name is the same. */
    v = eff_broker(&f, "1", "log.retention.ms", &src);
    CHECK_EQ_STR(v, "3000");

    /* Topic configs stored under the broker key are not topic settings. */
    REQUIRE(cfx_set(&f, RESOURCE_TOPIC, "t2", "log.retention.ms", "99") == 0);
    v = eff_topic(&f, "t2", "retention.ms", &src);
    CHECK_EQ_STR(v, "3000");

    /* Another node's context: its per-broker entry is empty, so the cluster default. */
    struct config_ctx other = {.meta = f.q.m, .props = f.props, .node_id = 2};
    v = config_effective(&other, RESOURCE_TOPIC, "t2", config_find_topic("retention.ms"), &src);
    CHECK_EQ_STR(v, "2000");
    CHECK_EQ_INT(src, CS_DYNAMIC_DEFAULT_BROKER);
    v = config_effective(&other, RESOURCE_TOPIC, "t1", config_find_topic("retention.ms"), &src);
    CHECK_EQ_STR(v, "4000");

    /* Deleting each layer falls back to the next one. */
    REQUIRE(cfx_set(&f, RESOURCE_TOPIC, "t1", "retention.ms", NULL) == 0);
    v = eff_topic(&f, "t1", "retention.ms", &src);
    CHECK_EQ_STR(v, "3000");
    CHECK_EQ_INT(src, CS_DYNAMIC_BROKER);
    REQUIRE(cfx_set(&f, RESOURCE_BROKER, "1", "log.retention.ms", NULL) == 0);
    v = eff_topic(&f, "t1", "retention.ms", &src);
    CHECK_EQ_STR(v, "2000");
    CHECK_EQ_INT(src, CS_DYNAMIC_DEFAULT_BROKER);
    REQUIRE(cfx_set(&f, RESOURCE_BROKER, "", "log.retention.ms", NULL) == 0);
    v = eff_topic(&f, "t1", "retention.ms", &src);
    CHECK_EQ_STR(v, "1000");
    CHECK_EQ_INT(src, CS_STATIC_BROKER);

    /* Broker-only configs follow the same chain, without a topic layer. */
    v = eff_broker(&f, "1", "num.partitions", &src);
    CHECK_EQ_STR(v, "1");
    CHECK_EQ_INT(src, CS_DEFAULT);
    REQUIRE(props_set(f.props, "num.partitions", "4") == 0);
    v = eff_broker(&f, "1", "num.partitions", &src);
    CHECK_EQ_STR(v, "4");
    CHECK_EQ_INT(src, CS_STATIC_BROKER);
    REQUIRE(cfx_set(&f, RESOURCE_BROKER, "", "num.partitions", "6") == 0);
    v = eff_broker(&f, "1", "num.partitions", &src);
    CHECK_EQ_STR(v, "6");
    CHECK_EQ_INT(src, CS_DYNAMIC_DEFAULT_BROKER);
    /* A broker-only def asked for a topic resource skips the topic layer. */
    v = config_effective(&f.ctx, RESOURCE_TOPIC, "t1", config_find_broker("num.partitions"), &src);
    CHECK_EQ_STR(v, "6");
    CHECK_EQ_INT(src, CS_DYNAMIC_DEFAULT_BROKER);

    /* A topic that does not exist just has no own settings. */
    v = eff_topic(&f, "nope", "cleanup.policy", &src);
    CHECK_EQ_STR(v, "delete");
    CHECK_EQ_INT(src, CS_DEFAULT);

    cfx_stop(&f);
}

TEST(config_hours_fallbacks)
{
    struct cfx f;
    enum config_source src;
    const char *v;

    REQUIRE(cfx_start(&f));
    REQUIRE(cfx_topic(&f, "t", 1) == 0);

    REQUIRE(props_set(f.props, "log.retention.hours", "2") == 0);
    v = eff_topic(&f, "t", "retention.ms", &src);
    CHECK_EQ_STR(v, "7200000");
    CHECK_EQ_INT(src, CS_STATIC_BROKER);
    v = eff_broker(&f, "1", "log.retention.ms", &src);
    CHECK_EQ_STR(v, "7200000");
    CHECK_EQ_INT(config_topic_int(&f.ctx, "t", "retention.ms", -5), 7200000);
    /* segment.ms is not affected by log.retention.hours. */
    v = eff_topic(&f, "t", "segment.ms", &src);
    CHECK_EQ_STR(v, "604800000");
    CHECK_EQ_INT(src, CS_DEFAULT);

    REQUIRE(props_set(f.props, "log.roll.hours", "3") == 0);
    v = eff_topic(&f, "t", "segment.ms", &src);
    CHECK_EQ_STR(v, "10800000");
    CHECK_EQ_INT(src, CS_STATIC_BROKER);
    CHECK_EQ_INT(config_topic_int(&f.ctx, "t", "segment.ms", -5), 10800000);
    /* Large hour counts do not overflow 32 bits. */
    REQUIRE(props_set(f.props, "log.retention.hours", "876000") == 0);
    CHECK_EQ_INT(config_topic_int(&f.ctx, "t", "retention.ms", -5), 3153600000000LL);

    /* The millisecond keys win over hours. */
    REQUIRE(props_set(f.props, "log.retention.ms", "123") == 0);
    v = eff_topic(&f, "t", "retention.ms", &src);
    CHECK_EQ_STR(v, "123");
    CHECK_EQ_INT(src, CS_STATIC_BROKER);
    REQUIRE(props_set(f.props, "log.roll.ms", "456") == 0);
    v = eff_topic(&f, "t", "segment.ms", &src);
    CHECK_EQ_STR(v, "456");

    /* Dynamic values and the topic's own win over static hours. */
    REQUIRE(cfx_set(&f, RESOURCE_BROKER, "", "log.roll.ms", "789") == 0);
    v = eff_topic(&f, "t", "segment.ms", &src);
    CHECK_EQ_STR(v, "789");
    CHECK_EQ_INT(src, CS_DYNAMIC_DEFAULT_BROKER);
    REQUIRE(cfx_set(&f, RESOURCE_TOPIC, "t", "segment.ms", "1011") == 0);
    v = eff_topic(&f, "t", "segment.ms", &src);
    CHECK_EQ_STR(v, "1011");
    CHECK_EQ_INT(src, CS_DYNAMIC_TOPIC);

    /* Hours apply to no other key. */
    REQUIRE(props_set(f.props, "log.flush.interval.hours", "1") == 0);
    v = eff_topic(&f, "t", "flush.ms", &src);
    CHECK_EQ_STR(v, "9223372036854775807");
    CHECK_EQ_INT(src, CS_DEFAULT);

    cfx_stop(&f);
}

/* Regression: both hour fallbacks used to format into one static buffer, so a second look-up
 * overwrote the string the first returned, and DescribeConfigs (which keeps every Value
 * pointer until it encodes the response) showed retention.ms == segment.ms. */
TEST(config_hours_fallback_values_independent)
{
    struct cfx f;
    enum config_source src;
    const char *ret, *roll;

    REQUIRE(cfx_start(&f));
    REQUIRE(props_set(f.props, "log.retention.hours", "2") == 0);
    REQUIRE(props_set(f.props, "log.roll.hours", "3") == 0);
    ret = eff_broker(&f, "1", "log.retention.ms", &src);
    roll = eff_broker(&f, "1", "log.roll.ms", &src);
    CHECK_EQ_STR(roll, "10800000");
    CHECK_EQ_STR(ret, "7200000");
    cfx_stop(&f);
}

TEST(config_topic_int_and_str)
{
    struct cfx f;

    REQUIRE(cfx_start(&f));
    REQUIRE(cfx_topic(&f, "t", 1) == 0);

    /* Built-in defaults, parsed. */
    CHECK_EQ_INT(config_topic_int(&f.ctx, "t", "segment.bytes", -1), 1073741824);
    CHECK_EQ_INT(config_topic_int(&f.ctx, "t", "retention.bytes", 0), -1);
    CHECK_EQ_INT(config_topic_int(&f.ctx, "t", "flush.messages", 0), INT64_MAX);
    CHECK_EQ_STR(config_topic_str(&f.ctx, "t", "message.timestamp.type"), "CreateTime");
    CHECK_EQ_STR(config_topic_str(&f.ctx, "t", "cleanup.policy"), "delete");

    /* Unknown keys (including broker-only ones) give the caller's default / "". */
    CHECK_EQ_INT(config_topic_int(&f.ctx, "t", "no.such", 77), 77);
    CHECK_EQ_INT(config_topic_int(&f.ctx, "t", "num.partitions", 77), 77);
    CHECK_EQ_STR(config_topic_str(&f.ctx, "t", "no.such"), "");
    CHECK_EQ_STR(config_topic_str(&f.ctx, "t", "log.retention.ms"), "");

    /* Each layer reaches the helpers. */
    REQUIRE(props_set(f.props, "log.segment.bytes", "5000") == 0);
    CHECK_EQ_INT(config_topic_int(&f.ctx, "t", "segment.bytes", -1), 5000);
    REQUIRE(cfx_set(&f, RESOURCE_BROKER, "1", "log.segment.bytes", "6000") == 0);
    CHECK_EQ_INT(config_topic_int(&f.ctx, "t", "segment.bytes", -1), 6000);
    REQUIRE(cfx_set(&f, RESOURCE_TOPIC, "t", "segment.bytes", "7000") == 0);
    CHECK_EQ_INT(config_topic_int(&f.ctx, "t", "segment.bytes", -1), 7000);
    CHECK_EQ_INT(config_topic_int(&f.ctx, "other", "segment.bytes", -1), 6000);
    REQUIRE(cfx_set(&f, RESOURCE_TOPIC, "t", "message.timestamp.type", "LogAppendTime") == 0);
    CHECK_EQ_STR(config_topic_str(&f.ctx, "t", "message.timestamp.type"), "LogAppendTime");
    CHECK_EQ_STR(config_topic_str(&f.ctx, "other", "message.timestamp.type"), "CreateTime");

    /* The image stores whatever it was given: a value that is not a number, or is empty,
     * gives the default rather than a half-parsed number. */
    REQUIRE(cfx_set(&f, RESOURCE_TOPIC, "t", "retention.ms", "12abc") == 0);
    CHECK_EQ_INT(config_topic_int(&f.ctx, "t", "retention.ms", -7), -7);
    REQUIRE(cfx_set(&f, RESOURCE_TOPIC, "t", "retention.ms", "") == 0);
    CHECK_EQ_INT(config_topic_int(&f.ctx, "t", "retention.ms", -7), -7);
    CHECK_EQ_STR(config_topic_str(&f.ctx, "t", "retention.ms"), "");
    REQUIRE(cfx_set(&f, RESOURCE_TOPIC, "t", "retention.ms", "-1") == 0);
    CHECK_EQ_INT(config_topic_int(&f.ctx, "t", "retention.ms", -7), -1);
    REQUIRE(props_set(f.props, "log.flush.interval.ms", "soon") == 0);
    CHECK_EQ_INT(config_topic_int(&f.ctx, "t", "flush.ms", 42), 42);

    /* The image's own rules: a topic config on an unknown topic is refused. */
    CHECK_EQ_INT(cfx_set(&f, RESOURCE_TOPIC, "ghost", "retention.ms", "1"),
                 ERR_UNKNOWN_TOPIC_OR_PARTITION);

    cfx_stop(&f);
}

/* DescribeConfigs' synonyms: every level that sets the config, most specific first, the
 * coarser static aliases after the key itself, and the built-in default last. */
TEST(config_synonyms_every_level)
{
    struct cfx f;
    struct config_synonym syn[CONFIG_MAX_SYNONYMS];
    const struct config_def *ret = config_find_topic("retention.ms");
    size_t n;

    REQUIRE(cfx_start(&f));
    REQUIRE(cfx_topic(&f, "t", 1) == 0);
    n = config_synonyms(&f.ctx, RESOURCE_TOPIC, "t", ret, syn, CONFIG_MAX_SYNONYMS);
    REQUIRE(n == 1);
    CHECK_EQ_STR(syn[0].name, "log.retention.ms");
    CHECK_EQ_STR(syn[0].value, "604800000");
    CHECK_EQ_INT(syn[0].source, CS_DEFAULT);

    REQUIRE(props_set(f.props, "log.retention.hours", "5") == 0);
    REQUIRE(props_set(f.props, "log.retention.ms", "100") == 0);
    REQUIRE(cfx_set(&f, RESOURCE_BROKER, "", "log.retention.ms", "200") == 0);
    REQUIRE(cfx_set(&f, RESOURCE_BROKER, "1", "log.retention.ms", "300") == 0);
    REQUIRE(cfx_set(&f, RESOURCE_TOPIC, "t", "retention.ms", "400") == 0);
    n = config_synonyms(&f.ctx, RESOURCE_TOPIC, "t", ret, syn, CONFIG_MAX_SYNONYMS);
    REQUIRE(n == 6);
    CHECK_EQ_STR(syn[0].name, "retention.ms");
    CHECK_EQ_STR(syn[0].value, "400");
    CHECK_EQ_INT(syn[0].source, CS_DYNAMIC_TOPIC);
    CHECK_EQ_STR(syn[1].name, "log.retention.ms");
    CHECK_EQ_STR(syn[1].value, "300");
    CHECK_EQ_INT(syn[1].source, CS_DYNAMIC_BROKER);
    CHECK_EQ_STR(syn[2].value, "200");
    CHECK_EQ_INT(syn[2].source, CS_DYNAMIC_DEFAULT_BROKER);
    CHECK_EQ_STR(syn[3].value, "100");
    CHECK_EQ_INT(syn[3].source, CS_STATIC_BROKER);
    CHECK_EQ_STR(syn[4].name, "log.retention.hours");
    CHECK_EQ_STR(syn[4].value, "5");
    CHECK_EQ_INT(syn[4].source, CS_STATIC_BROKER);
    CHECK_EQ_INT(syn[5].source, CS_DEFAULT);

    /* The cluster-default broker resource has no per-broker level. */
    n = config_synonyms(&f.ctx, RESOURCE_BROKER, "", ret, syn, CONFIG_MAX_SYNONYMS);
    REQUIRE(n == 4);
    CHECK_EQ_INT(syn[0].source, CS_DYNAMIC_DEFAULT_BROKER);
    /* The cap is honoured. */
    CHECK_EQ_INT(config_synonyms(&f.ctx, RESOURCE_TOPIC, "t", ret, syn, 2), 2);

    /* A topic-only config: its own value, then the built-in default under its own name. */
    const struct config_def *thr = config_find_topic("leader.replication.throttled.replicas");
    REQUIRE(cfx_set(&f, RESOURCE_TOPIC, "t", "leader.replication.throttled.replicas", "*") == 0);
    n = config_synonyms(&f.ctx, RESOURCE_TOPIC, "t", thr, syn, CONFIG_MAX_SYNONYMS);
    REQUIRE(n == 2);
    CHECK_EQ_STR(syn[0].value, "*");
    CHECK_EQ_INT(syn[0].source, CS_DYNAMIC_TOPIC);
    CHECK_EQ_STR(syn[1].name, "leader.replication.throttled.replicas");
    CHECK_EQ_INT(syn[1].source, CS_DEFAULT);
    cfx_stop(&f);
}

/* A topic-only config never reads a broker level; a broker config read with
 * config_broker_int follows the dynamic levels (producer.id.expiration.ms). */
TEST(config_topic_only_and_broker_int)
{
    struct cfx f;
    enum config_source src;

    REQUIRE(cfx_start(&f));
    REQUIRE(cfx_topic(&f, "t", 1) == 0);
    CHECK_EQ_STR(eff_topic(&f, "t", "remote.storage.enable", &src), "false");
    CHECK_EQ_INT(src, CS_DEFAULT);
    CHECK_EQ_INT(config_topic_int(&f.ctx, "t", "local.retention.ms", 0), -2);

    CHECK_EQ_INT(config_broker_int(&f.ctx, "producer.id.expiration.ms", 5), 86400000);
    REQUIRE(props_set(f.props, "producer.id.expiration.ms", "1000") == 0);
    CHECK_EQ_INT(config_broker_int(&f.ctx, "producer.id.expiration.ms", 5), 1000);
    REQUIRE(cfx_set(&f, RESOURCE_BROKER, "", "producer.id.expiration.ms", "2000") == 0);
    CHECK_EQ_INT(config_broker_int(&f.ctx, "producer.id.expiration.ms", 5), 2000);
    REQUIRE(cfx_set(&f, RESOURCE_BROKER, "1", "producer.id.expiration.ms", "3000") == 0);
    CHECK_EQ_INT(config_broker_int(&f.ctx, "producer.id.expiration.ms", 5), 3000);
    CHECK_EQ_INT(config_broker_int(&f.ctx, "no.such.key", 5), 5);
    /* log.retention.minutes has no default (Kafka's null): the caller's default. */
    CHECK_EQ_INT(config_broker_int(&f.ctx, "log.retention.minutes", 9), 9);
    /* ... and when set, it is used for log.retention.ms before hours. */
    REQUIRE(props_set(f.props, "log.retention.hours", "5") == 0);
    REQUIRE(props_set(f.props, "log.retention.minutes", "2") == 0);
    CHECK_EQ_INT(config_topic_int(&f.ctx, "t", "retention.ms", 0), 120000);
    cfx_stop(&f);
}

TEST(config_help_lists_every_key)
{
    size_t n, len = 0;
    const struct config_def *d = config_defs(&n);
    char *buf = NULL;
    FILE *f = open_memstream(&buf, &len);
    REQUIRE(f != NULL);
    config_print_help(f);
    fclose(f);
    for (size_t i = 0; i < n; i++) {
        CHECK(strstr(buf, config_name(&d[i])) != NULL);
        CHECK(strstr(buf, d[i].doc) != NULL);
    }
    free(buf);
}
