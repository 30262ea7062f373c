/* SPDX-License-Identifier: Apache-2.0 */
/* config: the table of known configs, validation and the effective-value chain. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "base/err.h"
#include "base/props.h"
#include "meta/meta.h"

static const char *const cleanup_policies[] = {"delete", "compact", "compact,delete",
                                               "delete,compact", NULL};
static const char *const timestamp_types[] = {"CreateTime", "LogAppendTime", NULL};
static const char *const booleans[] = {"true", "false", NULL};

#define I64MAX INT64_MAX
#define I32MAX INT32_MAX

static const struct config_def defs[] = {
    /* topic configs, each with the broker config that sets its default */
    {"cleanup.policy", "log.cleanup.policy", CT_LIST, "delete", 0, 0, cleanup_policies, true},
    {"flush.messages", "log.flush.interval.messages", CT_LONG, "9223372036854775807", 1, I64MAX,
     NULL, true},
    {"flush.ms", "log.flush.interval.ms", CT_LONG, "9223372036854775807", 0, I64MAX, NULL, true},
    {"max.message.bytes", "message.max.bytes", CT_INT, "1048588", 0, I32MAX, NULL, true},
    {"message.timestamp.difference.max.ms", "log.message.timestamp.difference.max.ms", CT_LONG,
     "9223372036854775807", 0, I64MAX, NULL, true},
    {"message.timestamp.before.max.ms", "log.message.timestamp.before.max.ms", CT_LONG,
     "9223372036854775807", 0, I64MAX, NULL, true},
    {"message.timestamp.after.max.ms", "log.message.timestamp.after.max.ms", CT_LONG,
     "9223372036854775807", 0, I64MAX, NULL, true},
    {"index.interval.bytes", "log.index.interval.bytes", CT_INT, "4096", 0, I32MAX, NULL, true},
    {"message.timestamp.type", "log.message.timestamp.type", CT_STRING, "CreateTime", 0, 0,
     timestamp_types, true},
    {"min.insync.replicas", "min.insync.replicas", CT_INT, "1", 1, I32MAX, NULL, true},
    {"retention.bytes", "log.retention.bytes", CT_LONG, "-1", -1, I64MAX, NULL, true},
    {"retention.ms", "log.retention.ms", CT_LONG, "604800000", -1, I64MAX, NULL, true},
    {"segment.bytes", "log.segment.bytes", CT_INT, "1073741824", 14, I32MAX, NULL, true},
    {"segment.ms", "log.roll.ms", CT_LONG, "604800000", 1, I64MAX, NULL, true},
    {"unclean.leader.election.enable", "unclean.leader.election.enable", CT_BOOLEAN, "false", 0, 0,
     booleans, true},
    /* Log compaction (cleanup.policy=compact): the cleaner's topic configs, then its broker
     * ones (src/log/compact.c, src/replica/cleaner.c). */
    {"delete.retention.ms", "log.cleaner.delete.retention.ms", CT_LONG, "86400000", 0, I64MAX, NULL,
     true},
    {"min.cleanable.dirty.ratio", "log.cleaner.min.cleanable.ratio", CT_DOUBLE, "0.5", 0, 1, NULL,
     true},
    {"min.compaction.lag.ms", "log.cleaner.min.compaction.lag.ms", CT_LONG, "0", 0, I64MAX, NULL,
     true},
    {"max.compaction.lag.ms", "log.cleaner.max.compaction.lag.ms", CT_LONG, "9223372036854775807",
     1, I64MAX, NULL, true},
    {NULL, "log.cleaner.enable", CT_BOOLEAN, "true", 0, 0, booleans, false},
    {NULL, "log.cleaner.backoff.ms", CT_LONG, "15000", 0, I64MAX, NULL, true},
    {NULL, "log.cleaner.dedupe.buffer.size", CT_LONG, "134217728", 0, I64MAX, NULL, true},
    /* broker-only configs */
    {NULL, "log.retention.hours", CT_INT, "168", -1, I32MAX / 3600, NULL, false},
    {NULL, "log.roll.hours", CT_INT, "168", 1, I32MAX / 3600, NULL, false},
    {NULL, "node.id", CT_INT, "1", 0, I32MAX, NULL, false},
    {NULL, "listeners", CT_LIST, "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093", 0, 0,
     NULL, false},
    {NULL, "advertised.listeners", CT_LIST, "", 0, 0, NULL, false},
    {NULL, "controller.quorum.voters", CT_LIST, "1@127.0.0.1:9093", 0, 0, NULL, false},
    {NULL, "log.dirs", CT_STRING, "./data", 0, 0, NULL, false},
    {NULL, "metadata.log.dir", CT_STRING, "", 0, 0, NULL, false},
    /* Read-only, as in Kafka: not one of its dynamically reconfigurable broker configs. */
    {NULL, "num.partitions", CT_INT, "1", 1, I32MAX, NULL, false},
    {NULL, "default.replication.factor", CT_SHORT, "1", 1, INT16_MAX, NULL, true},
    {NULL, "auto.create.topics.enable", CT_BOOLEAN, "true", 0, 0, booleans, false},
    {NULL, "delete.topic.enable", CT_BOOLEAN, "true", 0, 0, booleans, false},
    {NULL, "log.retention.check.interval.ms", CT_LONG, "300000", 1, I64MAX, NULL, false},
    {NULL, "log.flush.offset.checkpoint.interval.ms", CT_INT, "60000", 0, I32MAX, NULL, false},
    {NULL, "producer.id.expiration.ms", CT_INT, "86400000", 1, I32MAX, NULL, true},
    {NULL, "producer.id.expiration.check.interval.ms", CT_INT, "600000", 1, I32MAX, NULL, false},
    {NULL, "socket.request.max.bytes", CT_INT, "104857600", 1, I32MAX, NULL, false},
    {NULL, "socket.send.buffer.bytes", CT_INT, "102400", -1, I32MAX, NULL, false},
    {NULL, "socket.receive.buffer.bytes", CT_INT, "-1", -1, I32MAX, NULL, false},
    {NULL, "connections.max.idle.ms", CT_LONG, "600000", -1, I64MAX, NULL, false},
    /* Group coordinator (issue 9): Kafka's names and defaults, read-only as in Kafka. */
    {NULL, "offsets.topic.num.partitions", CT_INT, "50", 1, I32MAX, NULL, false},
    {NULL, "offsets.topic.replication.factor", CT_SHORT, "3", 1, INT16_MAX, NULL, false},
    {NULL, "offsets.topic.segment.bytes", CT_INT, "104857600", 1, I32MAX, NULL, false},
    {NULL, "offsets.retention.minutes", CT_INT, "10080", 1, I32MAX, NULL, false},
    {NULL, "offsets.retention.check.interval.ms", CT_LONG, "600000", 1, I64MAX, NULL, false},
    {NULL, "offset.metadata.max.bytes", CT_INT, "4096", 0, I32MAX, NULL, false},
    {NULL, "group.min.session.timeout.ms", CT_INT, "6000", 0, I32MAX, NULL, false},
    {NULL, "group.max.session.timeout.ms", CT_INT, "1800000", 0, I32MAX, NULL, false},
    {NULL, "group.initial.rebalance.delay.ms", CT_INT, "3000", 0, I32MAX, NULL, false},
    {NULL, "group.max.size", CT_INT, "2147483647", 1, I32MAX, NULL, false},
    /* The thread pool's size (UV_THREADPOOL_SIZE), fixed at start: fsyncs, checkpoint and
     * snapshot writes, cold reads. libuv allows at most 1024. */
    {NULL, "num.io.threads", CT_INT, "8", 1, 1024, NULL, false},
    /* Transactions, partition side (issue 10): KIP-890 verification of transactional batches
     * with the coordinator. Read at start (dynamic in Kafka). */
    {NULL, "transaction.partition.verification.enable", CT_BOOLEAN, "true", 0, 0, booleans, false},
};

const struct config_def *config_defs(size_t *n)
{
    *n = sizeof defs / sizeof defs[0];
    return defs;
}

const struct config_def *config_find_topic(const char *key)
{
    for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++)
        if (defs[i].topic_key && strcmp(defs[i].topic_key, key) == 0)
            return &defs[i];
    return NULL;
}

const struct config_def *config_find_broker(const char *key)
{
    for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++)
        if (strcmp(defs[i].broker_key, key) == 0)
            return &defs[i];
    return NULL;
}

int config_validate(const struct config_def *d, const char *value, char *why, size_t whylen)
{
    const char *name = d->topic_key ? d->topic_key : d->broker_key;
    if (value == NULL) {
        snprintf(why, whylen, "%s needs a value", name);
        return ERR_INVALID_CONFIG;
    }
    if (d->allowed) {
        for (const char *const *v = d->allowed; *v; v++)
            if (strcmp(*v, value) == 0)
                return 0;
        snprintf(why, whylen, "Invalid value %s for configuration %s", value, name);
        return ERR_INVALID_CONFIG;
    }
    if (d->type == CT_DOUBLE) {
        char *end;
        errno = 0;
        double x = strtod(value, &end);
        if (errno || end == value || *end != '\0' || !(x >= (double)d->min) ||
            !(x <= (double)d->max)) {
            snprintf(why, whylen,
                     "Invalid value %s for configuration %s: expected a number in [%lld, %lld]",
                     value, name, (long long)d->min, (long long)d->max);
            return ERR_INVALID_CONFIG;
        }
    }
    if (d->type == CT_INT || d->type == CT_LONG || d->type == CT_SHORT) {
        char *end;
        errno = 0;
        long long x = strtoll(value, &end, 10);
        if (errno || end == value || *end != '\0' || x < d->min || x > d->max) {
            snprintf(why, whylen,
                     "Invalid value %s for configuration %s: expected an integer in "
                     "[%lld, %lld]",
                     value, name, (long long)d->min, (long long)d->max);
            return ERR_INVALID_CONFIG;
        }
    }
    return 0;
}

/* The static (file or --set) or built-in value of a broker key. */
static const char *static_value(const struct config_ctx *a, const struct config_def *d,
                                enum config_source *src)
{
    const char *v = props_get(a->props, d->broker_key);
    /* Kafka also accepts the coarser log.retention.hours / log.roll.hours. */
    bool retention = strcmp(d->broker_key, "log.retention.ms") == 0;
    if (v == NULL && (retention || strcmp(d->broker_key, "log.roll.ms") == 0)) {
        /* One buffer per key: both values may be in use at once. Static configuration does
         * not change while the broker runs, so the text stays right. */
        static char retention_buf[32], roll_buf[32];
        char *buf = retention ? retention_buf : roll_buf;
        const char *hours =
            props_get(a->props, retention ? "log.retention.hours" : "log.roll.hours");
        char *end;
        long long h = hours ? strtoll(hours, &end, 10) : 0;
        /* Malformed hours were refused at start (admin_check_config); a negative retention
         * means unlimited, as in Kafka. */
        if (hours && *hours && *end == '\0') {
            snprintf(buf, 32, "%lld", retention && h < 0 ? -1LL : h * 3600000LL);
            *src = CS_STATIC_BROKER;
            return buf;
        }
    }
    if (v) {
        *src = CS_STATIC_BROKER;
        return v;
    }
    *src = CS_DEFAULT;
    return d->def;
}

const char *config_effective(const struct config_ctx *a, int8_t rtype, const char *rname,
                             const struct config_def *d, enum config_source *src)
{
    const char *v;
    char node[16];
    if (rtype == RESOURCE_TOPIC && d->topic_key) {
        v = meta_config_get(a->meta, RESOURCE_TOPIC, rname, d->topic_key);
        if (v) {
            *src = CS_DYNAMIC_TOPIC;
            return v;
        }
    }
    snprintf(node, sizeof node, "%d", a->node_id);
    const char *broker = rtype == RESOURCE_BROKER ? rname : node;
    /* The broker resource "" is the cluster-wide default itself: no per-broker level. */
    v = broker && broker[0] ? meta_config_get(a->meta, RESOURCE_BROKER, broker, d->broker_key)
                            : NULL;
    if (v) {
        *src = CS_DYNAMIC_BROKER;
        return v;
    }
    v = meta_config_get(a->meta, RESOURCE_BROKER, "", d->broker_key);
    if (v) {
        *src = CS_DYNAMIC_DEFAULT_BROKER;
        return v;
    }
    return static_value(a, d, src);
}

int64_t config_topic_int(const struct config_ctx *c, const char *topic, const char *key,
                         int64_t def)
{
    const struct config_def *d = config_find_topic(key);
    enum config_source src;
    const char *v = d ? config_effective(c, RESOURCE_TOPIC, topic, d, &src) : NULL;
    char *end;
    long long x;
    if (v == NULL || *v == '\0')
        return def;
    x = strtoll(v, &end, 10);
    return *end == '\0' ? x : def;
}

const char *config_topic_str(const struct config_ctx *c, const char *topic, const char *key)
{
    const struct config_def *d = config_find_topic(key);
    enum config_source src;
    return d ? config_effective(c, RESOURCE_TOPIC, topic, d, &src) : "";
}
