/* SPDX-License-Identifier: Apache-2.0 */
/* config table: every known topic and broker config — Kafka 3.7's names, types, defaults,
 * ranges and which broker configs are dynamic — with the documentation DescribeConfigs
 * (IncludeDocumentation) and `tally configs --help` show, and the validation of a value.
 * This file depends on nothing but base/err.h so that the command-line tool links it too
 * (effective values, which need the metadata image, are in config.c).
 *
 * A row is one topic config and the broker config that gives its default (Kafka's
 * ServerTopicConfigSynonyms), a topic-only config (broker_key NULL: Kafka has no broker-wide
 * default for it), or a broker-only config (topic_key NULL). Broker rows are `dynamic` when
 * Kafka 3.7 lists them in DynamicBrokerConfig's reconfigurable set and Tally applies a change
 * without a restart; the others are read-only (altering them answers INVALID_REQUEST). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "base/err.h"

static const char *const cleanup_policies[] = {"delete", "compact", NULL};
static const char *const timestamp_types[] = {"CreateTime", "LogAppendTime", NULL};
static const char *const booleans[] = {"true", "false", NULL};
static const char *const compression_types[] = {"producer", "uncompressed", "gzip", "snappy",
                                                "lz4",      "zstd",         NULL};

#define I64MAX INT64_MAX
#define I32MAX INT32_MAX
#define LMAX "9223372036854775807"

static const struct config_def defs[] = {
    /* ---- topic configs, each with the broker config that sets its default ---------------- */
    {"cleanup.policy", "log.cleanup.policy", CT_LIST, "delete", 0, 0, cleanup_policies, true,
     "How old log segments are disposed of: \"delete\" removes whole segments past the "
     "retention time or size; \"compact\" keeps only the newest record of each key; both may "
     "be listed.",
     0},
    {"compression.type", "compression.type", CT_STRING, "producer", 0, 0, compression_types, true,
     "The codec batches are stored in. \"producer\" keeps each batch as the producer compressed "
     "it; uncompressed, gzip, snappy, lz4 or zstd rewrite (recompress) every batch that "
     "arrives in another codec before it is appended.",
     0},
    {"file.delete.delay.ms", "log.segment.delete.delay.ms", CT_LONG, "60000", 0, I64MAX, NULL, true,
     "How long a segment removed by retention waits before its files are deleted. Accepted "
     "and stored; Tally deletes the files of a removed segment once no reader holds it.",
     0},
    {"flush.messages", "log.flush.interval.messages", CT_LONG, LMAX, 1, I64MAX, NULL, true,
     "Forces an fsync of the log after this many messages have been appended (1 = every "
     "append). Replication, not fsync, is the usual durability guarantee.",
     0},
    {"flush.ms", "log.flush.interval.ms", CT_LONG, LMAX, 0, I64MAX, NULL, true,
     "Forces an fsync of the log when its oldest unflushed message is this old (ms).", 0},
    {"follower.replication.throttled.replicas", NULL, CT_LIST, "", 0, 0, NULL, true,
     "Replicas whose follower-side log replication is throttled: a list of "
     "partition:brokerId pairs, or \"*\" for every replica of the topic. Accepted and "
     "stored; Tally applies no replication quota.",
     CF_THROTTLED_LIST},
    {"index.interval.bytes", "log.index.interval.bytes", CT_INT, "4096", 0, I32MAX, NULL, true,
     "How many bytes of batches go between two entries of the offset index: smaller means a "
     "larger index and more exact positioning of reads.",
     0},
    {"leader.replication.throttled.replicas", NULL, CT_LIST, "", 0, 0, NULL, true,
     "Replicas whose leader-side log replication is throttled: a list of partition:brokerId "
     "pairs, or \"*\" for every replica of the topic. Accepted and stored; Tally applies no "
     "replication quota.",
     CF_THROTTLED_LIST},
    {"local.retention.bytes", "log.local.retention.bytes", CT_LONG, "-2", -2, I64MAX, NULL, true,
     "With tiered storage, the most bytes a partition keeps locally (-2: retention.bytes). "
     "Tally has no tiered storage, so it only stores the value.",
     0},
    {"local.retention.ms", "log.local.retention.ms", CT_LONG, "-2", -2, I64MAX, NULL, true,
     "With tiered storage, how long a segment stays local (-2: retention.ms). Tally has no "
     "tiered storage, so it only stores the value.",
     0},
    {"max.message.bytes", "message.max.bytes", CT_INT, "1048588", 0, I32MAX, NULL, true,
     "The largest record batch the topic accepts, in bytes (after compression; its records "
     "must not decompress to more either).",
     0},
    {"message.downconversion.enable", "log.message.downconversion.enable", CT_BOOLEAN, "true", 0, 0,
     booleans, true,
     "Whether fetches by clients too old to read record batches (Fetch v0-v3) are answered "
     "by converting batches to the old message format; when false they get "
     "UNSUPPORTED_VERSION.",
     0},
    {"message.format.version", "log.message.format.version", CT_STRING, "3.0-IV1", 0, 0, NULL,
     false,
     "Deprecated since Kafka 3.0 and ignored: batches are always stored in the v2 format. "
     "Accepted (every Kafka version string Kafka 3.9 accepts, from 0.8.0 to 4.0-IV1, "
     "0.10.0.0 and 2.8.1 included) so that old tools keep working, with a warning; stored, "
     "no effect in Tally.",
     CF_DEPRECATED | CF_KAFKA_VERSION},
    {"message.timestamp.after.max.ms", "log.message.timestamp.after.max.ms", CT_LONG, LMAX, 0,
     I64MAX, NULL, true,
     "With CreateTime, how far a record's timestamp may be ahead of the broker's clock (ms) "
     "before the batch is refused with INVALID_TIMESTAMP.",
     0},
    {"message.timestamp.before.max.ms", "log.message.timestamp.before.max.ms", CT_LONG, LMAX, 0,
     I64MAX, NULL, true,
     "With CreateTime, how far a record's timestamp may be behind the broker's clock (ms) "
     "before the batch is refused with INVALID_TIMESTAMP.",
     0},
    {"message.timestamp.difference.max.ms", "log.message.timestamp.difference.max.ms", CT_LONG,
     LMAX, 0, I64MAX, NULL, true,
     "Deprecated bound on the distance between a record's timestamp and the broker's clock, "
     "in either direction (ms); message.timestamp.before.max.ms and "
     "message.timestamp.after.max.ms are the newer, one-sided forms.",
     0},
    {"message.timestamp.type", "log.message.timestamp.type", CT_STRING, "CreateTime", 0, 0,
     timestamp_types, true,
     "CreateTime keeps the producer's record timestamps; LogAppendTime replaces them with the "
     "broker's clock at append.",
     0},
    {"min.insync.replicas", "min.insync.replicas", CT_INT, "1", 1, I32MAX, NULL, true,
     "With acks=all, the fewest in-sync replicas that must have a batch before the write "
     "succeeds; below it producers get NOT_ENOUGH_REPLICAS.",
     0},
    {"preallocate", "log.preallocate", CT_BOOLEAN, "false", 0, 0, booleans, true,
     "Whether a new segment file is created at its full size. Accepted and stored; Tally "
     "grows segment files as it writes.",
     0},
    {"remote.storage.enable", NULL, CT_BOOLEAN, "false", 0, 0, booleans, true,
     "Tiered storage for the topic. Tally has none: only false is accepted.", CF_ONLY_FALSE},
    /* Any long, as in Kafka (no validator there): every negative value means no limit. */
    {"retention.bytes", "log.retention.bytes", CT_LONG, "-1", INT64_MIN, I64MAX, NULL, true,
     "The most bytes a partition keeps before its oldest segments are deleted (with the "
     "delete policy); -1 (any negative value) means no limit.",
     0},
    {"retention.ms", "log.retention.ms", CT_LONG, "604800000", -1, I64MAX, NULL, true,
     "How long a segment is kept after its newest record (with the delete policy), in ms; -1 "
     "means forever.",
     0},
    {"segment.bytes", "log.segment.bytes", CT_INT, "1073741824", 14, I32MAX, NULL, true,
     "The size at which the active segment file is closed and a new one started. Retention "
     "and compaction work a whole segment at a time.",
     0},
    {"segment.index.bytes", "log.index.size.max.bytes", CT_INT, "10485760", 4, I32MAX, NULL, true,
     "The most bytes an offset or time index of one segment may hold; a full index rolls "
     "the segment.",
     0},
    {"segment.jitter.ms", "log.roll.jitter.ms", CT_LONG, "0", 0, I64MAX, NULL, true,
     "The most a segment's time-based roll (segment.ms) is brought forward, so that many "
     "partitions do not roll at once (Tally draws each partition's share from a hash of its "
     "name).",
     0},
    {"segment.ms", "log.roll.ms", CT_LONG, "604800000", 1, I64MAX, NULL, true,
     "How old the active segment may get before it is closed even if not full (ms), so that "
     "retention and compaction can reach it.",
     0},
    {"unclean.leader.election.enable", "unclean.leader.election.enable", CT_BOOLEAN, "false", 0, 0,
     booleans, true,
     "Whether a replica outside the in-sync set may become leader when no in-sync replica is "
     "left, at the price of losing data.",
     0},

    /* Log compaction (cleanup.policy=compact): the cleaner's topic configs (src/log/compact.c,
     * src/replica/cleaner.c). */
    {"delete.retention.ms", "log.cleaner.delete.retention.ms", CT_LONG, "86400000", 0, I64MAX, NULL,
     true,
     "How long a tombstone (a record with a null value) of a compacted topic stays readable "
     "after the segment holding it was cleaned, so that consumers see the delete (ms).",
     0},
    {"max.compaction.lag.ms", "log.cleaner.max.compaction.lag.ms", CT_LONG, LMAX, 1, I64MAX, NULL,
     true,
     "The longest a record may stay uncompacted: a log holding records older than this is "
     "cleaned whatever its dirty ratio (ms).",
     0},
    {"min.cleanable.dirty.ratio", "log.cleaner.min.cleanable.ratio", CT_DOUBLE, "0.5", 0, 1, NULL,
     true,
     "The share of a compacted log that must be uncleaned (written since the last clean) "
     "before the cleaner runs on it: lower cleans more often.",
     0},
    {"min.compaction.lag.ms", "log.cleaner.min.compaction.lag.ms", CT_LONG, "0", 0, I64MAX, NULL,
     true,
     "The least time a record stays uncompacted after it is written, so that consumers can "
     "read every update for at least that long (ms).",
     0},

    /* ---- broker-only configs ------------------------------------------------------------- */
    /* The log cleaner's broker configs (backoff and dedupe buffer are dynamic in Kafka). */
    {NULL, "log.cleaner.enable", CT_BOOLEAN, "true", 0, 0, booleans, false,
     "Whether the log cleaner runs (compacted topics, __consumer_offsets among them).", 0},
    {NULL, "log.cleaner.backoff.ms", CT_LONG, "15000", 0, I64MAX, NULL, true,
     "How long the cleaner sleeps when no log needs cleaning (ms).", 0},
    {NULL, "log.cleaner.dedupe.buffer.size", CT_LONG, "134217728", 0, I64MAX, NULL, true,
     "The memory the cleaner's key map may use: how many distinct keys one cleaning pass can "
     "cover.",
     0},
    {NULL, "log.retention.minutes", CT_INT, NULL, -1, I32MAX / 60000, NULL, false,
     "log.retention.ms in minutes; used when log.retention.ms is not set.", 0},
    {NULL, "log.retention.hours", CT_INT, "168", -1, I32MAX / 3600, NULL, false,
     "log.retention.ms in hours; used when neither log.retention.ms nor log.retention.minutes "
     "is set.",
     0},
    {NULL, "log.roll.hours", CT_INT, "168", 1, I32MAX / 3600, NULL, false,
     "log.roll.ms in hours; used when log.roll.ms is not set.", 0},
    {NULL, "log.roll.jitter.hours", CT_INT, "0", 0, I32MAX / 3600, NULL, false,
     "log.roll.jitter.ms in hours; used when log.roll.jitter.ms is not set.", 0},
    {NULL, "log.flush.scheduler.interval.ms", CT_LONG, LMAX, 0, I64MAX, NULL, false,
     "The default of log.flush.interval.ms when that is not set.", 0},
    {NULL, "node.id", CT_INT, "1", 0, I32MAX, NULL, false,
     "This server's id in the cluster: its broker id and its metadata quorum voter id.", 0},
    {NULL, "listeners", CT_LIST, "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093", 0, 0,
     NULL, false,
     "The NAME://host:port addresses the server listens on (PLAINTEXT for clients, "
     "CONTROLLER for the metadata quorum); an empty host means every interface.",
     0},
    {NULL, "advertised.listeners", CT_LIST, "", 0, 0, NULL, false,
     "The addresses given to clients in Metadata answers, when they differ from listeners.", 0},
    {NULL, "controller.quorum.voters", CT_LIST, "1@127.0.0.1:9093", 0, 0, NULL, false,
     "The metadata quorum's voters, as id@host:port entries.", 0},
    {NULL, "log.dirs", CT_STRING, "./data", 0, 0, NULL, false,
     "The directory partition logs are kept in.", 0},
    {NULL, "metadata.log.dir", CT_STRING, "", 0, 0, NULL, false,
     "The directory of the metadata quorum's log (default: inside log.dirs).", 0},
    /* Read-only, as in Kafka: not one of its dynamically reconfigurable broker configs. */
    {NULL, "num.partitions", CT_INT, "1", 1, I32MAX, NULL, false,
     "The partition count of automatically created topics, and of CreateTopics requests that "
     "leave it to the broker (-1).",
     0},
    {NULL, "default.replication.factor", CT_SHORT, "1", 1, INT16_MAX, NULL, false,
     "The replication factor of automatically created topics, and of CreateTopics requests "
     "that leave it to the broker (-1).",
     0},
    {NULL, "auto.create.topics.enable", CT_BOOLEAN, "true", 0, 0, booleans, false,
     "Whether a Metadata request for an unknown topic creates it (with num.partitions and "
     "default.replication.factor).",
     0},
    {NULL, "delete.topic.enable", CT_BOOLEAN, "true", 0, 0, booleans, false,
     "Whether DeleteTopics may delete topics.", 0},
    {NULL, "log.retention.check.interval.ms", CT_LONG, "300000", 1, I64MAX, NULL, false,
     "How often the broker looks for segments retention may delete (ms).", 0},
    {NULL, "log.flush.offset.checkpoint.interval.ms", CT_INT, "60000", 0, I32MAX, NULL, false,
     "How often the recovery-point and log-start-offset checkpoints are written (ms).", 0},
    {NULL, "producer.id.expiration.ms", CT_INT, "86400000", 1, I32MAX, NULL, true,
     "How long a producer id's state is kept after its last write (ms); after that its next "
     "idempotent write starts over. Dynamic: a change applies at the next expiry check.",
     0},
    {NULL, "producer.id.expiration.check.interval.ms", CT_INT, "600000", 1, I32MAX, NULL, false,
     "How often expired producer ids are looked for (ms).", 0},
    {NULL, "socket.request.max.bytes", CT_INT, "104857600", 1, I32MAX, NULL, false,
     "The largest request the server reads; a larger one closes the connection.", 0},
    {NULL, "socket.send.buffer.bytes", CT_INT, "102400", -1, I32MAX, NULL, false,
     "SO_SNDBUF of client connections (-1: the operating system's default).", 0},
    {NULL, "socket.receive.buffer.bytes", CT_INT, "-1", -1, I32MAX, NULL, false,
     "SO_RCVBUF of client connections (-1: the operating system's default).", 0},
    {NULL, "connections.max.idle.ms", CT_LONG, "600000", -1, I64MAX, NULL, false,
     "Idle client connections are closed after this long (ms); -1 never.", 0},
    /* Group coordinator (issue 9): Kafka's names and defaults, read-only as in Kafka. */
    {NULL, "offsets.topic.num.partitions", CT_INT, "50", 1, I32MAX, NULL, false,
     "The partition count __consumer_offsets is created with; a group's coordinator is the "
     "leader of partition abs(hash(group id)) % this. Do not change it once the topic exists.",
     0},
    {NULL, "offsets.topic.replication.factor", CT_SHORT, "3", 1, INT16_MAX, NULL, false,
     "The replication factor __consumer_offsets is created with (capped at the live brokers, "
     "with a warning, so that a single node works).",
     0},
    {NULL, "offsets.topic.segment.bytes", CT_INT, "104857600", 1, I32MAX, NULL, false,
     "The segment size of __consumer_offsets (small, so compaction and loading stay quick).", 0},
    {NULL, "offsets.retention.minutes", CT_INT, "10080", 1, I32MAX, NULL, false,
     "How long the committed offsets of a group stay once the group is empty, before they are "
     "expired (tombstoned).",
     0},
    {NULL, "offsets.retention.check.interval.ms", CT_LONG, "600000", 1, I64MAX, NULL, false,
     "How often expired committed offsets are looked for (ms).", 0},
    {NULL, "offsets.commit.timeout.ms", CT_INT, "5000", 1, I32MAX, NULL, false,
     "How long an offset commit (or a group's new metadata) waits to be replicated to the "
     "ISR of its __consumer_offsets partition before it is answered with an error (ms).",
     0},
    {NULL, "offset.metadata.max.bytes", CT_INT, "4096", 0, I32MAX, NULL, false,
     "The longest metadata string an offset commit may carry; longer ones get "
     "OFFSET_METADATA_TOO_LARGE.",
     0},
    {NULL, "group.min.session.timeout.ms", CT_INT, "6000", 0, I32MAX, NULL, false,
     "The shortest session timeout a group member may ask for (shorter: "
     "INVALID_SESSION_TIMEOUT).",
     0},
    {NULL, "group.max.session.timeout.ms", CT_INT, "1800000", 0, I32MAX, NULL, false,
     "The longest session timeout a group member may ask for (longer: "
     "INVALID_SESSION_TIMEOUT).",
     0},
    {NULL, "group.initial.rebalance.delay.ms", CT_INT, "3000", 0, I32MAX, NULL, false,
     "How long a new (empty) group waits for more members before its first rebalance "
     "completes (ms).",
     0},
    {NULL, "group.max.size", CT_INT, "2147483647", 1, I32MAX, NULL, false,
     "The most members a group may have; one more gets GROUP_MAX_SIZE_REACHED.", 0},
    /* The thread pool's size (UV_THREADPOOL_SIZE), fixed at start: fsyncs, checkpoint and
     * snapshot writes, cold reads. libuv allows at most 1024. Kafka may change it at run
     * time; libuv's pool cannot grow, so it is read-only here. */
    {NULL, "num.io.threads", CT_INT, "8", 1, 1024, NULL, false,
     "The size of the I/O thread pool (fsyncs, checkpoints, cold reads); fixed at start.", 0},
    /* Transactions, partition side (issue 10): KIP-890 verification of transactional batches
     * with the coordinator. Read at start (dynamic in Kafka). */
    {NULL, "transaction.partition.verification.enable", CT_BOOLEAN, "true", 0, 0, booleans, false,
     "Whether a partition leader checks with the transaction coordinator that a transactional "
     "producer added the partition to its transaction before taking its first batch "
     "(KIP-890). Read at start.",
     0},
    /* Read by the partition side of transactions (src/main.c, replica_mgr.c); read-only. */
    {NULL, "transaction.state.log.num.partitions", CT_INT, "50", 1, I32MAX, NULL, false,
     "The partition count __transaction_state is created with; a transactional id's "
     "coordinator is the leader of partition abs(hash(id)) % this.",
     0},
    {NULL, "transaction.max.timeout.ms", CT_INT, "900000", 1, I32MAX, NULL, false,
     "The longest transaction timeout a producer may ask for; a partition also aborts a "
     "transaction left open well past it that its coordinator does not know (ms).",
     0},
    {NULL, "transaction.abort.timed.out.transaction.cleanup.interval.ms", CT_INT, "10000", 1,
     I32MAX, NULL, false, "How often transactions open past their timeout are looked for (ms).", 0},
    /* The transaction coordinator (issue 10, src/txn and FindCoordinator key type 1). */
    {NULL, "transaction.state.log.replication.factor", CT_SHORT, "3", 1, INT16_MAX, NULL, false,
     "The replication factor __transaction_state is created with (capped at the live brokers).", 0},
    {NULL, "transaction.state.log.min.isr", CT_INT, "2", 1, I32MAX, NULL, false,
     "min.insync.replicas of __transaction_state (capped at the live brokers).", 0},
    {NULL, "transaction.state.log.segment.bytes", CT_INT, "104857600", 1, I32MAX, NULL, false,
     "The segment size __transaction_state is created with.", 0},
    {NULL, "transactional.id.expiration.ms", CT_INT, "604800000", 1, I32MAX, NULL, false,
     "How long a transactional id with no transaction open is kept after its last update (ms).", 0},
    {NULL, "transaction.remove.expired.transaction.cleanup.interval.ms", CT_INT, "3600000", 1,
     I32MAX, NULL, false, "How often expired transactional ids are removed (ms).", 0},
};

const struct config_def *config_defs(size_t *n)
{
    *n = sizeof defs / sizeof defs[0];
    return defs;
}

const struct config_def *config_find_topic(const char *key)
{
    for (size_t i = 0; key && i < sizeof defs / sizeof defs[0]; i++)
        if (defs[i].topic_key && strcmp(defs[i].topic_key, key) == 0)
            return &defs[i];
    return NULL;
}

const struct config_def *config_find_broker(const char *key)
{
    for (size_t i = 0; key && i < sizeof defs / sizeof defs[0]; i++)
        if (defs[i].broker_key && strcmp(defs[i].broker_key, key) == 0)
            return &defs[i];
    return NULL;
}

const char *config_name(const struct config_def *d)
{
    return d->topic_key ? d->topic_key : d->broker_key;
}

const char *config_type_name(enum config_type t)
{
    switch (t) {
    case CT_BOOLEAN:
        return "boolean";
    case CT_STRING:
        return "string";
    case CT_INT:
        return "int";
    case CT_SHORT:
        return "short";
    case CT_LONG:
        return "long";
    case CT_DOUBLE:
        return "double";
    case CT_LIST:
        return "list";
    default:
        return "unknown";
    }
}

static bool in_set(const char *const *allowed, const char *s, size_t len)
{
    for (const char *const *v = allowed; *v; v++)
        if (strlen(*v) == len && strncmp(*v, s, len) == 0)
            return true;
    return false;
}

static bool all_digits(const char *s, size_t len)
{
    if (len == 0 || len > 9)
        return false;
    for (size_t i = 0; i < len; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return true;
}

/* leader/follower.replication.throttled.replicas: "*" or partition:brokerId[,...], blanks
 * around items allowed, as Kafka's ThrottledReplicaListValidator. */
static bool throttled_list_valid(const char *v)
{
    const char *p = v;
    while (*p == ' ')
        p++;
    if (*p == '\0')
        return true;
    if (p[0] == '*') {
        for (p++; *p == ' '; p++)
            ;
        return *p == '\0';
    }
    for (;;) {
        size_t len;
        const char *colon;
        while (*p == ' ')
            p++;
        len = strcspn(p, ",");
        while (len > 0 && p[len - 1] == ' ')
            len--;
        colon = memchr(p, ':', len);
        if (colon == NULL || !all_digits(p, (size_t)(colon - p)) ||
            !all_digits(colon + 1, len - (size_t)(colon - p) - 1))
            return false;
        p += strcspn(p, ",");
        if (*p == '\0')
            return true;
        p++;
    }
}

/* The inter-broker protocol versions of Kafka 3.9 (its MetadataVersion, as the valid values of
 * log.message.format.version list them). A release's own name (0.10.0, 2.8, 3.9) stands for
 * its latest -IVn; the four releases before 0.10.0 have no -IVn form. */
static const char *const kafka_versions[] = {
    "0.8.0",      "0.8.1",      "0.8.2",      "0.9.0",      "0.10.0-IV0", "0.10.0-IV1",
    "0.10.1-IV0", "0.10.1-IV1", "0.10.1-IV2", "0.10.2-IV0", "0.11.0-IV0", "0.11.0-IV1",
    "0.11.0-IV2", "1.0-IV0",    "1.1-IV0",    "2.0-IV0",    "2.0-IV1",    "2.1-IV0",
    "2.1-IV1",    "2.1-IV2",    "2.2-IV0",    "2.2-IV1",    "2.3-IV0",    "2.3-IV1",
    "2.4-IV0",    "2.4-IV1",    "2.5-IV0",    "2.6-IV0",    "2.7-IV0",    "2.7-IV1",
    "2.7-IV2",    "2.8-IV0",    "2.8-IV1",    "3.0-IV0",    "3.0-IV1",    "3.1-IV0",
    "3.2-IV0",    "3.3-IV0",    "3.3-IV1",    "3.3-IV2",    "3.3-IV3",    "3.4-IV0",
    "3.5-IV0",    "3.5-IV1",    "3.5-IV2",    "3.6-IV0",    "3.6-IV1",    "3.6-IV2",
    "3.7-IV0",    "3.7-IV1",    "3.7-IV2",    "3.7-IV3",    "3.7-IV4",    "3.8-IV0",
    "3.9-IV0",    "4.0-IV0",    "4.0-IV1",    NULL,
};

/* Whether the first len bytes of key name a known version, or a release (a known version up
 * to its "-IV"). */
static bool kafka_version_known(const char *key, size_t len)
{
    for (const char *const *v = kafka_versions; *v; v++) {
        const char *iv = strstr(*v, "-IV");
        size_t rel = iv ? (size_t)(iv - *v) : strlen(*v);
        if ((strlen(*v) == len || rel == len) && strncmp(*v, key, len) == 0)
            return true;
    }
    return false;
}

/* A Kafka version string as Kafka's MetadataVersion.fromVersionString reads it: only the first
 * three dot-separated parts count for 0.x versions and the first two for later ones, so
 * 0.10.0.0 is 0.10.0 and 2.8.1 is 2.8; what remains must be a known version or release
 * (0.10.0, 0.10.0-IV1, 2.8-IV0, 3.0). Trailing empty parts are dropped before counting, as
 * Java's String.split does ("2.8." has two parts and is therefore looked up whole: refused). */
static bool kafka_version_valid(const char *v)
{
    size_t len = strlen(v), stripped = len, parts = 0, keep = v[0] == '0' && v[1] == '.' ? 3 : 2;
    while (stripped > 0 && v[stripped - 1] == '.')
        stripped--;
    if (stripped > 0) {
        parts = 1;
        for (size_t i = 0; i < stripped; i++)
            parts += v[i] == '.';
    }
    if (keep >= parts)
        return kafka_version_known(v, len);
    size_t end = 0;
    for (size_t dots = 0; end < len; end++)
        if (v[end] == '.' && ++dots == keep)
            break;
    return kafka_version_known(v, end);
}

int config_validate(const struct config_def *d, const char *value, char *why, size_t whylen)
{
    const char *name = config_name(d);
    if (value == NULL) {
        snprintf(why, whylen, "%s needs a value", name);
        return ERR_INVALID_CONFIG;
    }
    if ((d->flags & CF_ONLY_FALSE) && strcmp(value, "true") == 0) {
        snprintf(why, whylen,
                 "Invalid value true for configuration %s: Tally has no tiered (remote) "
                 "storage, so it cannot be enabled",
                 name);
        return ERR_INVALID_CONFIG;
    }
    if ((d->flags & CF_THROTTLED_LIST) && !throttled_list_valid(value)) {
        snprintf(why, whylen,
                 "Invalid value %s for configuration %s: expected \"*\" or a list of "
                 "partition:brokerId pairs",
                 value, name);
        return ERR_INVALID_CONFIG;
    }
    if ((d->flags & CF_KAFKA_VERSION) && !kafka_version_valid(value)) {
        snprintf(why, whylen,
                 "Invalid value %s for configuration %s: expected a Kafka version such as 2.8 "
                 "or 3.0-IV1",
                 value, name);
        return ERR_INVALID_CONFIG;
    }
    if (d->allowed && d->type == CT_LIST) {
        /* Every item of the list must be allowed (blanks around items are dropped). */
        const char *p = value;
        bool any = false;
        for (;;) {
            size_t len;
            while (*p == ' ')
                p++;
            len = strcspn(p, ",");
            while (len > 0 && p[len - 1] == ' ')
                len--;
            if (!in_set(d->allowed, p, len))
                break;
            any = true;
            p += strcspn(p, ",");
            if (*p == '\0')
                return 0;
            p++;
        }
        (void)any;
        snprintf(why, whylen, "Invalid value %s for configuration %s", value, name);
        return ERR_INVALID_CONFIG;
    }
    if (d->allowed) {
        if (in_set(d->allowed, value, strlen(value)))
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

void config_print_help(FILE *f)
{
    size_t n = sizeof defs / sizeof defs[0];
    fprintf(f, "Topic configs (tally configs alter --topic T --set KEY=VALUE), with the broker "
               "config that sets their default:\n\n");
    for (size_t i = 0; i < n; i++) {
        const struct config_def *d = &defs[i];
        if (d->topic_key == NULL)
            continue;
        fprintf(f, "  %s (%s, default %s%s%s)\n", d->topic_key, config_type_name(d->type),
                d->def && *d->def ? d->def : "\"\"", d->broker_key ? "; broker default: " : "",
                d->broker_key ? d->broker_key : "");
        fprintf(f, "      %s\n", d->doc);
    }
    fprintf(f, "\nBroker-only configs (tally configs alter --broker ID|--broker-defaults); "
               "\"dynamic\" ones change without a restart:\n\n");
    for (size_t i = 0; i < n; i++) {
        const struct config_def *d = &defs[i];
        if (d->topic_key != NULL)
            continue;
        fprintf(f, "  %s (%s, default %s, %s)\n", d->broker_key, config_type_name(d->type),
                d->def == NULL ? "none"
                : *d->def      ? d->def
                               : "\"\"",
                d->dynamic ? "dynamic" : "read-only");
        fprintf(f, "      %s\n", d->doc);
    }
}
