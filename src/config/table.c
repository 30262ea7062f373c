/* SPDX-License-Identifier: Apache-2.0 */
/* config table: every known topic and broker config — Kafka 3.9's names, types, defaults,
 * ranges and which broker configs are dynamic — with the documentation DescribeConfigs
 * (IncludeDocumentation) and `tally configs --help` show, and where Tally applies each
 * (config.h: `applied`, or "no effect in Tally"). Data only: look-ups and validation are in
 * check.c, effective values (which need the metadata image) in config.c. Like check.c it
 * depends on nothing but base/err.h, so that the command-line tool links it too.
 *
 * A row is one topic config and the broker config that gives its default (Kafka's
 * ServerTopicConfigSynonyms), a topic-only config (broker_key NULL: Kafka has no broker-wide
 * default for it), or a broker-only config (topic_key NULL). Broker rows are `dynamic` exactly
 * when Kafka 3.9 lists them as per-broker or cluster-wide (DynamicBrokerConfig's
 * reconfigurable sets, and the broker quota configs of DynamicConfig.Broker); the others are
 * read-only (altering them answers INVALID_REQUEST). A dynamic row Tally does not apply is
 * stored and described all the same, and its doc says "no effect in Tally". */
#include <stddef.h>
#include <stdint.h>

#include "config.h"

static const char *const cleanup_policies[] = {"delete", "compact", NULL};
static const char *const timestamp_types[] = {"CreateTime", "LogAppendTime", NULL};
static const char *const booleans[] = {"true", "false", NULL};
static const char *const console_auths[] = {"none", "scram", "plain", NULL};
static const char *const compression_types[] = {"producer", "uncompressed", "gzip", "snappy",
                                                "lz4",      "zstd",         NULL};
static const char *const ssl_client_auths[] = {"required", "requested", "none", NULL};
static const char *const security_protocols[] = {"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL",
                                                 NULL};
static const char *const rebalance_protocols[] = {"consumer", "classic", "share", "unknown", NULL};

#define I64MAX INT64_MAX
#define I32MAX INT32_MAX
#define LMAX "9223372036854775807"

static const struct config_def defs[] = {
    /* ---- topic configs, each with the broker config that sets its default ---------------- */
    {"cleanup.policy", "log.cleanup.policy", CT_LIST, "delete", 0, 0, cleanup_policies, true,
     "How old log segments are disposed of: \"delete\" removes whole segments past the "
     "retention time or size; \"compact\" keeps only the newest record of each key; both may "
     "be listed.",
     0, "src/replica/partition.c"},
    {"compression.type", "compression.type", CT_STRING, "producer", 0, 0, compression_types, true,
     "The codec batches are stored in. \"producer\" keeps each batch as the producer compressed "
     "it; uncompressed, gzip, snappy, lz4 or zstd rewrite (recompress) every batch that "
     "arrives in another codec before it is appended.",
     0, "src/replica/partition.c"},
    {"file.delete.delay.ms", "log.segment.delete.delay.ms", CT_LONG, "60000", 0, I64MAX, NULL, true,
     "How long a segment removed by retention waits before its files are deleted. Stored, no "
     "effect in Tally: it deletes the files of a removed segment once no reader holds it.",
     0, NULL},
    {"flush.messages", "log.flush.interval.messages", CT_LONG, LMAX, 1, I64MAX, NULL, true,
     "Forces an fsync of the log after this many messages have been appended (1 = every "
     "append). Replication, not fsync, is the usual durability guarantee.",
     0, "src/replica/partition.c"},
    {"flush.ms", "log.flush.interval.ms", CT_LONG, LMAX, 0, I64MAX, NULL, true,
     "Forces an fsync of the log when its oldest unflushed message is this old (ms).", 0,
     "src/replica/partition.c"},
    {"follower.replication.throttled.replicas", NULL, CT_LIST, "", 0, 0, NULL, true,
     "Replicas whose follower-side log replication is throttled: a list of "
     "partition:brokerId pairs, or \"*\" for every replica of the topic. A listed replica out "
     "of the ISR fetches only what its broker's follower.replication.throttled.rate allows; "
     "in-sync replicas are never held back, but what they fetch counts toward the rate.",
     CF_THROTTLED_LIST, "src/replica/partition.c"},
    {"index.interval.bytes", "log.index.interval.bytes", CT_INT, "4096", 0, I32MAX, NULL, true,
     "How many bytes of batches go between two entries of the offset index: smaller means a "
     "larger index and more exact positioning of reads.",
     0, "src/replica/partition.c"},
    {"leader.replication.throttled.replicas", NULL, CT_LIST, "", 0, 0, NULL, true,
     "Replicas whose leader-side log replication is throttled: a list of partition:brokerId "
     "pairs, or \"*\" for every replica of the topic. A leader listed for a partition sends its "
     "followers that are out of the ISR only what its leader.replication.throttled.rate "
     "allows; in-sync followers are never held back, but what they are sent counts toward "
     "the rate.",
     CF_THROTTLED_LIST, "src/replica/partition.c"},
    {"local.retention.bytes", "log.local.retention.bytes", CT_LONG, "-2", -2, I64MAX, NULL, true,
     "With tiered storage, the most bytes a partition keeps locally (-2: retention.bytes). "
     "Stored, no effect in Tally: it has no tiered storage.",
     0, NULL},
    {"local.retention.ms", "log.local.retention.ms", CT_LONG, "-2", -2, I64MAX, NULL, true,
     "With tiered storage, how long a segment stays local (-2: retention.ms). Stored, no "
     "effect in Tally: it has no tiered storage.",
     0, NULL},
    {"max.message.bytes", "message.max.bytes", CT_INT, "1048588", 0, I32MAX, NULL, true,
     "The largest record batch the topic accepts, in bytes (after compression; its records "
     "must not decompress to more either).",
     0, "src/replica/partition.c"},
    {"message.downconversion.enable", "log.message.downconversion.enable", CT_BOOLEAN, "true", 0, 0,
     booleans, true,
     "Whether fetches by clients too old to read record batches (Fetch v0-v3) are answered "
     "by converting batches to the old message format; when false they get "
     "UNSUPPORTED_VERSION.",
     0, "src/replica/partition.c"},
    {"message.format.version", "log.message.format.version", CT_STRING, "3.0-IV1", 0, 0, NULL,
     false,
     "Deprecated since Kafka 3.0 and ignored: batches are always stored in the v2 format. "
     "Accepted (every Kafka version string Kafka 3.9 accepts, from 0.8.0 to 4.0-IV1, "
     "0.10.0.0 and 2.8.1 included) so that old tools keep working, with a warning; stored, "
     "no effect in Tally.",
     CF_DEPRECATED | CF_KAFKA_VERSION, NULL},
    {"message.timestamp.after.max.ms", "log.message.timestamp.after.max.ms", CT_LONG, LMAX, 0,
     I64MAX, NULL, true,
     "With CreateTime, how far a record's timestamp may be ahead of the broker's clock (ms) "
     "before the batch is refused with INVALID_TIMESTAMP.",
     0, "src/replica/partition.c"},
    {"message.timestamp.before.max.ms", "log.message.timestamp.before.max.ms", CT_LONG, LMAX, 0,
     I64MAX, NULL, true,
     "With CreateTime, how far a record's timestamp may be behind the broker's clock (ms) "
     "before the batch is refused with INVALID_TIMESTAMP.",
     0, "src/replica/partition.c"},
    {"message.timestamp.difference.max.ms", "log.message.timestamp.difference.max.ms", CT_LONG,
     LMAX, 0, I64MAX, NULL, true,
     "Deprecated bound on the distance between a record's timestamp and the broker's clock, "
     "in either direction (ms); message.timestamp.before.max.ms and "
     "message.timestamp.after.max.ms are the newer, one-sided forms.",
     0, "src/replica/partition.c"},
    {"message.timestamp.type", "log.message.timestamp.type", CT_STRING, "CreateTime", 0, 0,
     timestamp_types, true,
     "CreateTime keeps the producer's record timestamps; LogAppendTime replaces them with the "
     "broker's clock at append.",
     0, "src/replica/partition.c"},
    {"min.insync.replicas", "min.insync.replicas", CT_INT, "1", 1, I32MAX, NULL, true,
     "With acks=all, the fewest in-sync replicas that must have a batch before the write "
     "succeeds; below it producers get NOT_ENOUGH_REPLICAS.",
     0, "src/replica/partition.c"},
    {"preallocate", "log.preallocate", CT_BOOLEAN, "false", 0, 0, booleans, true,
     "Whether a new segment file is created at its full size. Stored, no effect in Tally: it "
     "grows segment files as it writes.",
     0, NULL},
    {"remote.storage.enable", NULL, CT_BOOLEAN, "false", 0, 0, booleans, true,
     "Tiered storage for the topic. Only false is accepted, and it has no effect in Tally, "
     "which has no tiered storage.",
     CF_ONLY_FALSE, NULL},
    /* Any long, as in Kafka (no validator there): every negative value means no limit. */
    {"retention.bytes", "log.retention.bytes", CT_LONG, "-1", INT64_MIN, I64MAX, NULL, true,
     "The most bytes a partition keeps before its oldest segments are deleted (with the "
     "delete policy); -1 (any negative value) means no limit.",
     0, "src/replica/partition.c"},
    {"retention.ms", "log.retention.ms", CT_LONG, "604800000", -1, I64MAX, NULL, true,
     "How long a segment is kept after its newest record (with the delete policy), in ms; -1 "
     "means forever.",
     0, "src/replica/partition.c"},
    {"segment.bytes", "log.segment.bytes", CT_INT, "1073741824", 14, I32MAX, NULL, true,
     "The size at which the active segment file is closed and a new one started. Retention "
     "and compaction work a whole segment at a time.",
     0, "src/replica/partition.c"},
    {"segment.index.bytes", "log.index.size.max.bytes", CT_INT, "10485760", 4, I32MAX, NULL, true,
     "The most bytes an offset or time index of one segment may hold; a full index rolls "
     "the segment.",
     0, "src/replica/partition.c"},
    {"segment.jitter.ms", "log.roll.jitter.ms", CT_LONG, "0", 0, I64MAX, NULL, true,
     "The most a segment's time-based roll (segment.ms) is brought forward, so that many "
     "partitions do not roll at once (Tally draws each partition's share from a hash of its "
     "name).",
     0, "src/replica/partition.c"},
    {"segment.ms", "log.roll.ms", CT_LONG, "604800000", 1, I64MAX, NULL, true,
     "How old the active segment may get before it is closed even if not full (ms), so that "
     "retention and compaction can reach it.",
     0, "src/replica/partition.c"},
    {"unclean.leader.election.enable", "unclean.leader.election.enable", CT_BOOLEAN, "false", 0, 0,
     booleans, true,
     "Whether a replica outside the ISR may be elected leader when no ISR member is left: "
     "data acknowledged by the old ISR may then be lost, and the new leader starts "
     "RECOVERING (KIP-704). The controller reads it at each election, the topic's value "
     "first, then the broker's.",
     0, "src/controller/partition_change.c"},

    /* Kafka 3.8's compression levels (KIP-390) and 3.9's tiered-storage switches. */
    {"compression.gzip.level", "compression.gzip.level", CT_INT, "-1", 1, 9, NULL, true,
     "The gzip level batches are recompressed at when compression.type is gzip. Stored, no "
     "effect in Tally: it compresses at each codec's default level.",
     CF_OR_MINUS_ONE, NULL},
    {"compression.lz4.level", "compression.lz4.level", CT_INT, "9", 1, 17, NULL, true,
     "The lz4 level batches are recompressed at when compression.type is lz4. Stored, no "
     "effect in Tally: it compresses at each codec's default level.",
     0, NULL},
    {"compression.zstd.level", "compression.zstd.level", CT_INT, "3", -131072, 22, NULL, true,
     "The zstd level batches are recompressed at when compression.type is zstd. Stored, no "
     "effect in Tally: it compresses at each codec's default level.",
     0, NULL},
    {"remote.log.copy.disable", NULL, CT_BOOLEAN, "false", 0, 0, booleans, true,
     "With tiered storage, whether the topic's tiered data becomes read-only (no more "
     "uploads). Stored, no effect in Tally: it has no tiered storage.",
     0, NULL},
    {"remote.log.delete.on.disable", NULL, CT_BOOLEAN, "false", 0, 0, booleans, true,
     "With tiered storage, whether the topic's tiered data is deleted when tiered storage is "
     "disabled for it. Stored, no effect in Tally: it has no tiered storage.",
     0, NULL},

    /* Log compaction (cleanup.policy=compact): the cleaner's topic configs (src/log/compact.c,
     * src/replica/cleaner.c). */
    {"delete.retention.ms", "log.cleaner.delete.retention.ms", CT_LONG, "86400000", 0, I64MAX, NULL,
     true,
     "How long a tombstone (a record with a null value) of a compacted topic stays readable "
     "after the segment holding it was cleaned, so that consumers see the delete (ms).",
     0, "src/replica/cleaner.c"},
    {"max.compaction.lag.ms", "log.cleaner.max.compaction.lag.ms", CT_LONG, LMAX, 1, I64MAX, NULL,
     true,
     "The longest a record may stay uncompacted: a log holding records older than this is "
     "cleaned whatever its dirty ratio (ms).",
     0, "src/replica/cleaner.c"},
    {"min.cleanable.dirty.ratio", "log.cleaner.min.cleanable.ratio", CT_DOUBLE, "0.5", 0, 1, NULL,
     true,
     "The share of a compacted log that must be uncleaned (written since the last clean) "
     "before the cleaner runs on it: lower cleans more often.",
     0, "src/replica/cleaner.c"},
    {"min.compaction.lag.ms", "log.cleaner.min.compaction.lag.ms", CT_LONG, "0", 0, I64MAX, NULL,
     true,
     "The least time a record stays uncompacted after it is written, so that consumers can "
     "read every update for at least that long (ms).",
     0, "src/replica/cleaner.c"},

    /* ---- broker-only configs ------------------------------------------------------------- */
    /* The log cleaner's broker configs (backoff and dedupe buffer are dynamic in Kafka). */
    {NULL, "log.cleaner.enable", CT_BOOLEAN, "true", 0, 0, booleans, false,
     "Whether the log cleaner runs (compacted topics, __consumer_offsets among them).", 0,
     "src/replica/cleaner.c"},
    {NULL, "log.cleaner.backoff.ms", CT_LONG, "15000", 0, I64MAX, NULL, true,
     "How long the cleaner sleeps when no log needs cleaning (ms).", 0, "src/replica/cleaner.c"},
    {NULL, "log.cleaner.dedupe.buffer.size", CT_LONG, "134217728", 0, I64MAX, NULL, true,
     "The memory the cleaner's key map may use: how many distinct keys one cleaning pass can "
     "cover.",
     0, "src/replica/cleaner.c"},
    {NULL, "log.retention.minutes", CT_INT, NULL, -1, I32MAX / 60000, NULL, false,
     "log.retention.ms in minutes; used when log.retention.ms is not set.", 0,
     "src/config/config.c"},
    {NULL, "log.retention.hours", CT_INT, "168", -1, I32MAX / 3600, NULL, false,
     "log.retention.ms in hours; used when neither log.retention.ms nor log.retention.minutes "
     "is set.",
     0, "src/config/config.c"},
    {NULL, "log.roll.hours", CT_INT, "168", 1, I32MAX / 3600, NULL, false,
     "log.roll.ms in hours; used when log.roll.ms is not set.", 0, "src/config/config.c"},
    {NULL, "log.roll.jitter.hours", CT_INT, "0", 0, I32MAX / 3600, NULL, false,
     "log.roll.jitter.ms in hours; used when log.roll.jitter.ms is not set.", 0,
     "src/config/config.c"},
    {NULL, "log.flush.scheduler.interval.ms", CT_LONG, LMAX, 0, I64MAX, NULL, false,
     "The default of log.flush.interval.ms when that is not set.", 0, "src/config/config.c"},
    {NULL, "node.id", CT_INT, "1", 0, I32MAX, NULL, false,
     "This server's id in the cluster: its broker id and its metadata quorum voter id.", 0,
     "src/server_config.c"},
    /* Per-broker dynamic in Kafka (listeners added or removed at run time); Tally binds its
     * listeners once, so a dynamic value is only stored. */
    {NULL, "listeners", CT_LIST, "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093", 0, 0,
     NULL, true,
     "The NAME://host:port addresses the server listens on: Kafka listeners (their protocol "
     "from listener.security.protocol.map: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL) and "
     "CONTROLLER for "
     "the metadata quorum; an empty host means every interface. Read from the "
     "static configuration at start; a dynamic value is stored, no effect in Tally.",
     CF_PER_BROKER, "src/server_config.c"},
    {NULL, "advertised.listeners", CT_LIST, "", 0, 0, NULL, true,
     "The addresses given to clients in Metadata answers, when they differ from listeners. "
     "Read from the static configuration at start; a dynamic value is stored, no effect in "
     "Tally.",
     CF_PER_BROKER, "src/server_config.c"},
    {NULL, "controller.quorum.voters", CT_LIST, "1@127.0.0.1:9093", 0, 0, NULL, false,
     "The metadata quorum's voters, as id@host:port entries.", 0, "src/server_config.c"},
    {NULL, "log.dirs", CT_STRING, "./data", 0, 0, NULL, false,
     "The directory partition logs are kept in.", 0, "src/server_config.c"},
    {NULL, "metadata.log.dir", CT_STRING, "", 0, 0, NULL, false,
     "The directory of the metadata quorum's log (default: inside log.dirs).", 0,
     "src/server_config.c"},
    /* Read-only, as in Kafka: not one of its dynamically reconfigurable broker configs. */
    {NULL, "num.partitions", CT_INT, "1", 1, I32MAX, NULL, false,
     "The partition count of automatically created topics, and of CreateTopics requests that "
     "leave it to the broker (-1).",
     0, "src/admin/create_topics.c"},
    {NULL, "default.replication.factor", CT_SHORT, "1", 1, INT16_MAX, NULL, false,
     "The replication factor of automatically created topics, and of CreateTopics requests "
     "that leave it to the broker (-1).",
     0, "src/admin/create_topics.c"},
    {NULL, "auto.create.topics.enable", CT_BOOLEAN, "true", 0, 0, booleans, false,
     "Whether a Metadata request for an unknown topic creates it (with num.partitions and "
     "default.replication.factor).",
     0, "src/admin/metadata.c"},
    {NULL, "delete.topic.enable", CT_BOOLEAN, "true", 0, 0, booleans, false,
     "Whether DeleteTopics may delete topics.", 0, "src/admin/delete_topics.c"},
    {NULL, "log.retention.check.interval.ms", CT_LONG, "300000", 1, I64MAX, NULL, false,
     "How often the broker looks for segments retention may delete (ms).", 0,
     "src/replica/replica_mgr.c"},
    {NULL, "log.flush.offset.checkpoint.interval.ms", CT_INT, "60000", 0, I32MAX, NULL, false,
     "How often the recovery-point and log-start-offset checkpoints are written (ms).", 0,
     "src/replica/replica_mgr.c"},
    {NULL, "producer.id.expiration.ms", CT_INT, "86400000", 1, I32MAX, NULL, true,
     "How long a producer id's state is kept after its last write (ms); after that its next "
     "idempotent write starts over. Dynamic: a change applies at the next expiry check.",
     0, "src/replica/replica_mgr.c"},
    {NULL, "producer.id.expiration.check.interval.ms", CT_INT, "600000", 1, I32MAX, NULL, false,
     "How often expired producer ids are looked for (ms).", 0, "src/replica/replica_mgr.c"},
    {NULL, "socket.request.max.bytes", CT_INT, "104857600", 1, I32MAX, NULL, false,
     "The largest request the server reads; a larger one closes the connection.", 0,
     "src/server_config.c"},
    {NULL, "socket.send.buffer.bytes", CT_INT, "102400", -1, I32MAX, NULL, false,
     "SO_SNDBUF of client connections (-1: the operating system's default).", 0, "src/main.c"},
    {NULL, "socket.receive.buffer.bytes", CT_INT, "-1", -1, I32MAX, NULL, false,
     "SO_RCVBUF of client connections (-1: the operating system's default).", 0, "src/main.c"},
    {NULL, "connections.max.idle.ms", CT_LONG, "600000", -1, I64MAX, NULL, false,
     "Idle client connections are closed after this long (ms); -1 never. On a TLS listener "
     "the handshake must also end within it. listener.name.<listener>.connections.max.idle.ms "
     "sets one listener's.",
     0, "src/main.c"},
    /* Group coordinator (issue 9): Kafka's names and defaults, read-only as in Kafka. */
    {NULL, "offsets.topic.num.partitions", CT_INT, "50", 1, I32MAX, NULL, false,
     "The partition count __consumer_offsets is created with; a group's coordinator is the "
     "leader of partition abs(hash(group id)) % this. Do not change it once the topic exists.",
     0, "src/group/coord.c"},
    {NULL, "offsets.topic.replication.factor", CT_SHORT, "3", 1, INT16_MAX, NULL, false,
     "The replication factor __consumer_offsets is created with: capped (with a warning) at "
     "the number of metadata quorum voters, so that a single node works; the topic waits until "
     "that many brokers are unfenced.",
     0, "src/group/find_coordinator.c"},
    {NULL, "offsets.topic.segment.bytes", CT_INT, "104857600", 1, I32MAX, NULL, false,
     "The segment size of __consumer_offsets (small, so compaction and loading stay quick).", 0,
     "src/group/find_coordinator.c"},
    {NULL, "offsets.retention.minutes", CT_INT, "10080", 1, I32MAX, NULL, false,
     "How long the committed offsets of a group stay once the group is empty, before they are "
     "expired (tombstoned).",
     0, "src/group/coord.c"},
    {NULL, "offsets.retention.check.interval.ms", CT_LONG, "600000", 1, I64MAX, NULL, false,
     "How often expired committed offsets are looked for (ms).", 0, "src/group/coord.c"},
    {NULL, "offsets.commit.timeout.ms", CT_INT, "5000", 1, I32MAX, NULL, false,
     "How long an offset commit (or a group's new metadata) waits to be replicated to the "
     "ISR of its __consumer_offsets partition before it is answered with an error (ms).",
     0, "src/group/coord.c"},
    {NULL, "offset.metadata.max.bytes", CT_INT, "4096", 0, I32MAX, NULL, false,
     "The longest metadata string an offset commit may carry; longer ones get "
     "OFFSET_METADATA_TOO_LARGE.",
     0, "src/group/coord.c"},
    {NULL, "group.min.session.timeout.ms", CT_INT, "6000", 0, I32MAX, NULL, false,
     "The shortest session timeout a group member may ask for (shorter: "
     "INVALID_SESSION_TIMEOUT).",
     0, "src/group/coord.c"},
    {NULL, "group.max.session.timeout.ms", CT_INT, "1800000", 0, I32MAX, NULL, false,
     "The longest session timeout a group member may ask for (longer: "
     "INVALID_SESSION_TIMEOUT).",
     0, "src/group/coord.c"},
    {NULL, "group.initial.rebalance.delay.ms", CT_INT, "3000", 0, I32MAX, NULL, false,
     "How long a new (empty) group waits for more members before its first rebalance "
     "completes (ms).",
     0, "src/group/coord.c"},
    {NULL, "group.max.size", CT_INT, "2147483647", 1, I32MAX, NULL, false,
     "The most members a group may have; one more gets GROUP_MAX_SIZE_REACHED.", 0,
     "src/group/coord.c"},
    /* The thread pool's size (UV_THREADPOOL_SIZE), fixed at start: Tally's fsyncs,
     * checkpoint and snapshot writes, and the reads moved off the loop (not libraft's term
     * and vote fsyncs, nor a Fetch's index reads and sendfile(): those run on the loop,
     * docs/operations.md "Threads"). libuv allows at most 1024. Kafka may change it at run
     * time; libuv's pool cannot grow, so a dynamic value is only stored. */
    {NULL, "num.io.threads", CT_INT, "8", 1, 1024, NULL, true,
     "The size of the I/O thread pool (Tally's fsyncs, checkpoints and snapshots, the reads "
     "moved off the event loop), read from the static "
     "configuration at start; libuv's pool cannot be resized, so a dynamic value is stored, no "
     "effect in Tally.",
     0, "src/main.c"},
    /* Transactions, partition side (issue 10): KIP-890 verification of transactional batches
     * with the coordinator. Read at start (dynamic in Kafka: stored only). */
    {NULL, "transaction.partition.verification.enable", CT_BOOLEAN, "true", 0, 0, booleans, true,
     "Whether a partition leader checks with the transaction coordinator that a transactional "
     "producer added the partition to its transaction before taking its first batch "
     "(KIP-890). Read from the static configuration at start; a dynamic value is stored, no "
     "effect in Tally.",
     0, "src/main.c"},
    /* Read by the partition side of transactions (src/main.c, replica_mgr.c); read-only. */
    {NULL, "transaction.state.log.num.partitions", CT_INT, "50", 1, I32MAX, NULL, false,
     "The partition count __transaction_state is created with; a transactional id's "
     "coordinator is the leader of partition abs(hash(id)) % this.",
     0, "src/txn/coord.c"},
    {NULL, "transaction.max.timeout.ms", CT_INT, "900000", 1, I32MAX, NULL, false,
     "The longest transaction timeout a producer may ask for; a partition also aborts a "
     "transaction left open well past it that its coordinator does not know (ms).",
     0, "src/txn/coord.c"},
    {NULL, "transaction.abort.timed.out.transaction.cleanup.interval.ms", CT_INT, "10000", 1,
     I32MAX, NULL, false, "How often transactions open past their timeout are looked for (ms).", 0,
     "src/txn/coord.c"},
    /* The transaction coordinator (issue 10, src/txn and FindCoordinator key type 1). */
    {NULL, "transaction.state.log.replication.factor", CT_SHORT, "3", 1, INT16_MAX, NULL, false,
     "The replication factor __transaction_state is created with: capped at the number of "
     "metadata quorum voters; the topic waits until that many brokers are unfenced.",
     0, "src/group/find_coordinator.c"},
    {NULL, "transaction.state.log.min.isr", CT_INT, "2", 1, I32MAX, NULL, false,
     "min.insync.replicas of __transaction_state (capped at its replication factor).", 0,
     "src/group/find_coordinator.c"},
    {NULL, "transaction.state.log.segment.bytes", CT_INT, "104857600", 1, I32MAX, NULL, false,
     "The segment size __transaction_state is created with.", 0, "src/group/find_coordinator.c"},
    {NULL, "transactional.id.expiration.ms", CT_INT, "604800000", 1, I32MAX, NULL, false,
     "How long a transactional id with no transaction open is kept after its last update (ms).", 0,
     "src/txn/coord.c"},
    {NULL, "transaction.remove.expired.transaction.cleanup.interval.ms", CT_INT, "3600000", 1,
     I32MAX, NULL, false, "How often expired transactional ids are removed (ms).", 0,
     "src/txn/coord.c"},

    /* ---- the rest of Kafka 3.9's broker config table (its generated kafka_config.html),
     * and its broker quota configs (DynamicConfig.Broker), in name order. Known so that a
     * Kafka server.properties starts Tally and Kafka's dynamic set is accepted; each doc says
     * whether Tally applies it. */
    {NULL, "allow.everyone.if.no.acl.found", CT_BOOLEAN, "false", 0, 0, booleans, false,
     "With an authorizer: whether a resource that no ACL names at all (literal, wildcard or "
     "prefix, for any principal) is open to everyone.",
     0, "src/authz/authz.c"},
    {NULL, "alter.config.policy.class.name", CT_CLASS, NULL, 0, 0, NULL, false,
     "A class that vets AlterConfigs requests. Accepted, no effect in Tally: it runs no "
     "create or alter policies.",
     0, NULL},
    {NULL, "alter.log.dirs.replication.quota.window.num", CT_INT, "11", 1, I32MAX, NULL, false,
     "How many samples the quota on moves between log directories keeps. Accepted, no effect "
     "in Tally: it applies no quotas.",
     0, NULL},
    {NULL, "alter.log.dirs.replication.quota.window.size.seconds", CT_INT, "1", 1, I32MAX, NULL,
     false,
     "The span of one sample of the quota on moves between log directories (s). Accepted, no "
     "effect in Tally: it applies no quotas.",
     0, NULL},
    {NULL, "authorizer.class.name", CT_STRING, "", 0, 0, NULL, false,
     "The authorizer that decides whether each request is allowed: empty for none (every "
     "request is allowed), or org.apache.kafka.metadata.authorizer.StandardAuthorizer (also "
     "kafka.security.authorizer.AclAuthorizer): Kafka's ACL rules on the ACLs of the metadata "
     "log (docs/security.md). Any other class stops tallyd at start.",
     0, "src/authz/authz.c"},
    {NULL, "auto.include.jmx.reporter", CT_BOOLEAN, "true", 0, 0, booleans, false,
     "Deprecated: whether JMX reporting is added even when metric.reporters omits it. "
     "Accepted, no effect in Tally: it has no metrics reporters.",
     0, NULL},
    {NULL, "auto.leader.rebalance.enable", CT_BOOLEAN, "true", 0, 0, booleans, false,
     "Whether the controller moves leadership back to each partition's preferred (first) "
     "replica, a few partitions per look, once that replica is in the ISR and has been "
     "unfenced for a session timeout.",
     0, "src/controller/controller.c"},
    {NULL, "background.threads", CT_INT, "10", 1, I32MAX, NULL, true,
     "The size of the thread pool for background tasks. Stored, no effect in Tally: its "
     "background work runs on its event loop and thread pool.",
     0, NULL},
    {NULL, "broker.heartbeat.interval.ms", CT_INT, "2000", INT32_MIN, I32MAX, NULL, false,
     "How often a running broker heartbeats to the controller (ms); while fenced or "
     "shutting down it heartbeats every 100 ms.",
     0, "src/lifecycle.c"},
    {NULL, "broker.id", CT_INT, "-1", INT32_MIN, I32MAX, NULL, false,
     "This broker's id; the older name of node.id, read when node.id is not set (-1: unset).", 0,
     "src/server_config.c"},
    {NULL, "broker.id.generation.enable", CT_BOOLEAN, "true", 0, 0, booleans, false,
     "Whether a broker without an id gets one generated. Accepted, no effect in Tally: node "
     "ids are configured, never generated.",
     0, NULL},
    {NULL, "broker.rack", CT_STRING, NULL, 0, 0, NULL, false,
     "This broker's rack, given in Metadata and DescribeCluster answers and its "
     "registration with the controller, which spreads each partition's replicas over the "
     "racks.",
     0, "src/lifecycle.c"},
    {NULL, "broker.session.timeout.ms", CT_INT, "9000", INT32_MIN, I32MAX, NULL, false,
     "How long the controller waits for a broker's heartbeat before it fences the broker "
     "(ms): the broker leaves every ISR (never emptying one) and its leaderships move. It "
     "also bounds how long a controlled shutdown waits.",
     0, "src/controller/controller.c"},
    {NULL, "client.quota.callback.class", CT_CLASS, NULL, 0, 0, NULL, false,
     "A class that decides client quota limits. Accepted, no effect in Tally: its quotas are "
     "those of Kafka's default callback (docs/security.md).",
     0, NULL},
    {NULL, "connection.failed.authentication.delay.ms", CT_INT, "100", 0, I32MAX, NULL, false,
     "How long the answer to a failed SASL authentication, and the close of its connection, "
     "are delayed (ms).",
     0, "src/server_config.c"},
    {NULL, "connections.max.reauth.ms", CT_LONG, "0", INT64_MIN, I64MAX, NULL, false,
     "The longest a SASL session lasts before the client must re-authenticate on its "
     "connection (KIP-368; ms, 0 or less: no limit). SaslAuthenticate v1+ tells the client "
     "the lifetime; past it any request but a SaslHandshake (which starts a "
     "re-authentication, with the same mechanism and principal) closes the connection. "
     "listener.name.<listener>.<mechanism>.connections.max.reauth.ms sets it for one "
     "listener's mechanism.",
     0, "src/server_config.c"},
    {NULL, "control.plane.listener.name", CT_STRING, NULL, 0, 0, NULL, false,
     "The listener for controller-to-broker traffic (ZooKeeper mode). Accepted, no effect in "
     "Tally: it has no ZooKeeper (its metadata lives in a raft quorum).",
     0, NULL},
    {NULL, "controlled.shutdown.enable", CT_BOOLEAN, "true", 0, 0, booleans, false,
     "Whether SIGTERM first asks the controller to move this broker's leaderships away "
     "(BrokerHeartbeat WantShutDown until ShouldShutDown, bounded by "
     "broker.session.timeout.ms); false: it stops at once, and its partitions move only "
     "when its session expires.",
     0, "src/main.c"},
    {NULL, "controlled.shutdown.max.retries", CT_INT, "3", INT32_MIN, I32MAX, NULL, false,
     "How many times a controlled shutdown is tried. Accepted, no effect in Tally: as in "
     "KRaft, the broker heartbeats WantShutDown until the controller answers or "
     "broker.session.timeout.ms passes.",
     0, NULL},
    {NULL, "controlled.shutdown.retry.backoff.ms", CT_LONG, "5000", INT64_MIN, I64MAX, NULL, false,
     "The wait between two tries of a controlled shutdown (ms). Accepted, no effect in "
     "Tally: its brokers stop without a controlled shutdown step.",
     0, NULL},
    {NULL, "controller.listener.insecure.ok", CT_BOOLEAN, "false", 0, 0, booleans, false,
     "Tally's own: whether the CONTROLLER listener (the metadata quorum's raft transport, "
     "plaintext and unauthenticated) may bind to an address other than loopback. Set it only "
     "on a network that only the cluster's nodes reach.",
     0, "src/server_config.c"},
    {NULL, "controller.listener.names", CT_STRING, NULL, 0, 0, NULL, false,
     "The names of the listeners the metadata quorum uses (the first one for outgoing "
     "connections).",
     0, "src/server_config.c"},
    {NULL, "controller.quorum.append.linger.ms", CT_INT, "25", INT32_MIN, I32MAX, NULL, false,
     "How long the quorum leader lets writes gather before it flushes them (ms). Accepted, "
     "no effect in Tally: the metadata quorum runs on libraft, with its own timings.",
     0, NULL},
    {NULL, "controller.quorum.bootstrap.servers", CT_LIST, "", 0, 0, NULL, false,
     "Kafka 3.9's name for the controllers a node contacts at first start. In Tally it "
     "means what controller.bootstrap.servers means, the Kafka (PLAINTEXT) listeners of "
     "controller nodes, since Tally's CONTROLLER listener is the raft transport and speaks "
     "no Kafka protocol; used when controller.bootstrap.servers is not set.",
     0, "src/server_config.c"},
    {NULL, "controller.quorum.election.backoff.max.ms", CT_INT, "1000", INT32_MIN, I32MAX, NULL,
     false,
     "The longest wait before a new election of the metadata quorum (ms). Accepted, no "
     "effect in Tally: the metadata quorum runs on libraft, with its own timings.",
     0, NULL},
    {NULL, "controller.quorum.election.timeout.ms", CT_INT, "1000", INT32_MIN, I32MAX, NULL, false,
     "How long a voter waits without hearing from the quorum leader before it stands for "
     "election (ms). Accepted, no effect in Tally: the metadata quorum runs on libraft, with "
     "its own timings.",
     0, NULL},
    {NULL, "controller.quorum.fetch.timeout.ms", CT_INT, "2000", INT32_MIN, I32MAX, NULL, false,
     "How long without a successful fetch from the quorum leader before a voter stands for "
     "election (ms). Accepted, no effect in Tally: the metadata quorum runs on libraft, with "
     "its own timings.",
     0, NULL},
    {NULL, "controller.quorum.request.timeout.ms", CT_INT, "2000", INT32_MIN, I32MAX, NULL, false,
     "How long a request of the metadata quorum waits for its answer (ms). Accepted, no "
     "effect in Tally: the metadata quorum runs on libraft, with its own timings.",
     0, NULL},
    {NULL, "controller.quorum.retry.backoff.ms", CT_INT, "20", INT32_MIN, I32MAX, NULL, false,
     "The wait before a failed request of the metadata quorum is tried again (ms). Accepted, "
     "no effect in Tally: the metadata quorum runs on libraft, with its own timings.",
     0, NULL},
    {NULL, "controller.quota.window.num", CT_INT, "11", 1, I32MAX, NULL, false,
     "How many samples the controller mutation quota keeps: with "
     "controller.quota.window.size.seconds it sets the burst of controller_mutation_rate "
     "(rate x num x size partitions; docs/security.md). Read at start.",
     0, "src/admin/mutation_quota.c"},
    {NULL, "controller.quota.window.size.seconds", CT_INT, "1", 1, I32MAX, NULL, false,
     "The span of one sample of the controller mutation quota (s). Read at start.", 0,
     "src/admin/mutation_quota.c"},
    {NULL, "controller.socket.timeout.ms", CT_INT, "30000", INT32_MIN, I32MAX, NULL, false,
     "The socket timeout of controller-to-broker channels (ms). Accepted, no effect in "
     "Tally: it has no ZooKeeper (its metadata lives in a raft quorum).",
     0, NULL},
    {NULL, "create.topic.policy.class.name", CT_CLASS, NULL, 0, 0, NULL, false,
     "A class that vets CreateTopics requests. Accepted, no effect in Tally: it runs no "
     "create or alter policies.",
     0, NULL},
    {NULL, "delegation.token.expiry.check.interval.ms", CT_LONG, "3600000", 1, I64MAX, NULL, false,
     "How often expired delegation tokens are removed (ms). Accepted, no effect in Tally: it "
     "has no delegation tokens.",
     0, NULL},
    {NULL, "delegation.token.expiry.time.ms", CT_LONG, "86400000", 1, I64MAX, NULL, false,
     "How long a delegation token is valid before it must be renewed (ms). Accepted, no "
     "effect in Tally: it has no delegation tokens.",
     0, NULL},
    {NULL, "delegation.token.master.key", CT_PASSWORD, NULL, 0, 0, NULL, false,
     "Deprecated name of delegation.token.secret.key. Accepted, no effect in Tally: it has "
     "no delegation tokens.",
     0, NULL},
    {NULL, "delegation.token.max.lifetime.ms", CT_LONG, "604800000", 1, I64MAX, NULL, false,
     "The longest a delegation token may be renewed for (ms). Accepted, no effect in Tally: "
     "it has no delegation tokens.",
     0, NULL},
    {NULL, "delegation.token.secret.key", CT_PASSWORD, NULL, 0, 0, NULL, false,
     "The secret delegation tokens are signed with. Accepted, no effect in Tally: it has no "
     "delegation tokens.",
     0, NULL},
    {NULL, "delete.records.purgatory.purge.interval.requests", CT_INT, "1", INT32_MIN, I32MAX, NULL,
     false,
     "How many requests go between two purges of the DeleteRecords purgatory. Accepted, no "
     "effect in Tally: its purgatory completes waiting requests when their condition holds, "
     "without purge intervals.",
     0, NULL},
    {NULL, "early.start.listeners", CT_STRING, NULL, 0, 0, NULL, false,
     "Listeners started before the authorizer is ready. Accepted, no effect in Tally: its "
     "listeners serve clients only once the metadata (and with it the ACLs) is loaded.",
     0, NULL},
    {NULL, "eligible.leader.replicas.enable", CT_BOOLEAN, "false", 0, 0, booleans, false,
     "Whether eligible leader replicas (KIP-966) are kept. Accepted, no effect in Tally: it "
     "has no eligible leader replicas (KIP-966).",
     0, NULL},
    {NULL, "fetch.max.bytes", CT_INT, "57671680", 1024, I32MAX, NULL, false,
     "The most bytes one Fetch answer holds. Accepted, no effect in Tally: it bounds a Fetch "
     "by the request's MaxBytes.",
     0, NULL},
    {NULL, "fetch.purgatory.purge.interval.requests", CT_INT, "1000", INT32_MIN, I32MAX, NULL,
     false,
     "How many requests go between two purges of the Fetch purgatory. Accepted, no effect in "
     "Tally: its purgatory completes waiting requests when their condition holds, without "
     "purge intervals.",
     0, NULL},
    {NULL, "follower.replication.throttled.rate", CT_LONG, LMAX, 0, I64MAX, NULL, true,
     "The replication rate limit on the follower side for the replicas listed in "
     "follower.replication.throttled.replicas (bytes/s), measured over a 1 s window of what "
     "this broker fetches of them.",
     0, "src/replica/partition.c"},
    {NULL, "group.consumer.assignors", CT_LIST,
     "org.apache.kafka.coordinator.group.assignor.UniformAssignor,org.apache.kafka.coordinator."
     "group.assignor.RangeAssignor",
     0, 0, NULL, false,
     "The server-side assignors of KIP-848 consumer groups. Accepted, no effect in Tally: "
     "its groups speak the classic protocol only (no KIP-848 consumer groups).",
     0, NULL},
    {NULL, "group.consumer.heartbeat.interval.ms", CT_INT, "5000", 1, I32MAX, NULL, false,
     "The heartbeat interval given to members of KIP-848 consumer groups (ms). Accepted, no "
     "effect in Tally: its groups speak the classic protocol only (no KIP-848 consumer "
     "groups).",
     0, NULL},
    {NULL, "group.consumer.max.heartbeat.interval.ms", CT_INT, "15000", 1, I32MAX, NULL, false,
     "The longest heartbeat interval of KIP-848 consumer groups (ms). Accepted, no effect in "
     "Tally: its groups speak the classic protocol only (no KIP-848 consumer groups).",
     0, NULL},
    {NULL, "group.consumer.max.session.timeout.ms", CT_INT, "60000", 1, I32MAX, NULL, false,
     "The longest session timeout of KIP-848 consumer groups (ms). Accepted, no effect in "
     "Tally: its groups speak the classic protocol only (no KIP-848 consumer groups).",
     0, NULL},
    {NULL, "group.consumer.max.size", CT_INT, "2147483647", 1, I32MAX, NULL, false,
     "The most members of one KIP-848 consumer group. Accepted, no effect in Tally: its "
     "groups speak the classic protocol only (no KIP-848 consumer groups).",
     0, NULL},
    {NULL, "group.consumer.min.heartbeat.interval.ms", CT_INT, "5000", 1, I32MAX, NULL, false,
     "The shortest heartbeat interval of KIP-848 consumer groups (ms). Accepted, no effect "
     "in Tally: its groups speak the classic protocol only (no KIP-848 consumer groups).",
     0, NULL},
    {NULL, "group.consumer.min.session.timeout.ms", CT_INT, "45000", 1, I32MAX, NULL, false,
     "The shortest session timeout of KIP-848 consumer groups (ms). Accepted, no effect in "
     "Tally: its groups speak the classic protocol only (no KIP-848 consumer groups).",
     0, NULL},
    {NULL, "group.consumer.session.timeout.ms", CT_INT, "45000", 1, I32MAX, NULL, false,
     "The session timeout of KIP-848 consumer groups (ms). Accepted, no effect in Tally: its "
     "groups speak the classic protocol only (no KIP-848 consumer groups).",
     0, NULL},
    {NULL, "group.coordinator.append.linger.ms", CT_INT, "10", 0, I32MAX, NULL, false,
     "How long the group coordinator lets writes gather before it appends them (ms). "
     "Accepted, no effect in Tally: its group coordinator runs on the event loop and writes "
     "each change at once.",
     0, NULL},
    {NULL, "group.coordinator.rebalance.protocols", CT_LIST, "classic", 0, 0, rebalance_protocols,
     false,
     "The rebalance protocols the group coordinator enables. Accepted, no effect in Tally: "
     "its groups speak the classic protocol only (no KIP-848 consumer groups).",
     0, NULL},
    {NULL, "group.coordinator.threads", CT_INT, "1", 1, I32MAX, NULL, false,
     "The number of threads of the group coordinator. Accepted, no effect in Tally: its "
     "group coordinator runs on the event loop and writes each change at once.",
     0, NULL},
    {NULL, "group.share.delivery.count.limit", CT_INT, "5", 2, 10, NULL, false,
     "The most delivery attempts of a record to a share group. Accepted, no effect in Tally: "
     "it has no share groups (KIP-932).",
     0, NULL},
    {NULL, "group.share.heartbeat.interval.ms", CT_INT, "5000", 1, I32MAX, NULL, false,
     "The heartbeat interval of share group members (ms). Accepted, no effect in Tally: it "
     "has no share groups (KIP-932).",
     0, NULL},
    {NULL, "group.share.max.groups", CT_SHORT, "10", 1, 100, NULL, false,
     "The most share groups. Accepted, no effect in Tally: it has no share groups (KIP-932).", 0,
     NULL},
    {NULL, "group.share.max.heartbeat.interval.ms", CT_INT, "15000", 1, I32MAX, NULL, false,
     "The longest heartbeat interval of share group members (ms). Accepted, no effect in "
     "Tally: it has no share groups (KIP-932).",
     0, NULL},
    {NULL, "group.share.max.record.lock.duration.ms", CT_INT, "60000", 30000, 3600000, NULL, false,
     "The longest acquisition lock of a record in a share group (ms). Accepted, no effect in "
     "Tally: it has no share groups (KIP-932).",
     0, NULL},
    {NULL, "group.share.max.session.timeout.ms", CT_INT, "60000", 1, I32MAX, NULL, false,
     "The longest session timeout of share group members (ms). Accepted, no effect in Tally: "
     "it has no share groups (KIP-932).",
     0, NULL},
    {NULL, "group.share.max.size", CT_SHORT, "200", 10, 1000, NULL, false,
     "The most members of one share group. Accepted, no effect in Tally: it has no share "
     "groups (KIP-932).",
     0, NULL},
    {NULL, "group.share.min.heartbeat.interval.ms", CT_INT, "5000", 1, I32MAX, NULL, false,
     "The shortest heartbeat interval of share group members (ms). Accepted, no effect in "
     "Tally: it has no share groups (KIP-932).",
     0, NULL},
    {NULL, "group.share.min.record.lock.duration.ms", CT_INT, "15000", 1000, 30000, NULL, false,
     "The shortest acquisition lock of a record in a share group (ms). Accepted, no effect "
     "in Tally: it has no share groups (KIP-932).",
     0, NULL},
    {NULL, "group.share.min.session.timeout.ms", CT_INT, "45000", 1, I32MAX, NULL, false,
     "The shortest session timeout of share group members (ms). Accepted, no effect in "
     "Tally: it has no share groups (KIP-932).",
     0, NULL},
    {NULL, "group.share.partition.max.record.locks", CT_INT, "200", 100, 10000, NULL, false,
     "The most record locks of one share partition. Accepted, no effect in Tally: it has no "
     "share groups (KIP-932).",
     0, NULL},
    {NULL, "group.share.record.lock.duration.ms", CT_INT, "30000", 1000, 60000, NULL, false,
     "The acquisition lock of a record in a share group (ms). Accepted, no effect in Tally: "
     "it has no share groups (KIP-932).",
     0, NULL},
    {NULL, "group.share.session.timeout.ms", CT_INT, "45000", 1, I32MAX, NULL, false,
     "The session timeout of share group members (ms). Accepted, no effect in Tally: it has "
     "no share groups (KIP-932).",
     0, NULL},
    {NULL, "initial.broker.registration.timeout.ms", CT_INT, "60000", INT32_MIN, I32MAX, NULL,
     false,
     "How long a starting broker waits for its first registration with the controller before "
     "it exits (ms). Accepted, no effect in Tally: its brokers register and heartbeat with "
     "the controller on their own schedule.",
     0, NULL},
    {NULL, "inter.broker.listener.name", CT_STRING, NULL, 0, 0, NULL, false,
     "The listener brokers use to talk to each other (its address is the broker's in the "
     "metadata); unset: the listener named after security.inter.broker.protocol. It must be a "
     "PLAINTEXT listener: SASL and TLS between brokers are not implemented yet.",
     0, "src/server_config.c"},
    {NULL, "inter.broker.protocol.version", CT_STRING, "3.9-IV0", 0, 0, NULL, false,
     "The inter-broker protocol version brokers speak to each other, a Kafka version. "
     "Accepted, no effect in Tally: it speaks one inter-broker protocol, its own.",
     CF_KAFKA_VERSION, NULL},
    {NULL, "kafka.metrics.polling.interval.secs", CT_INT, "10", 1, I32MAX, NULL, false,
     "The polling interval of kafka.metrics.reporters (s). Accepted, no effect in Tally: it "
     "has no metrics reporters.",
     0, NULL},
    {NULL, "kafka.metrics.reporters", CT_LIST, "", 0, 0, NULL, false,
     "Yammer metrics reporter classes. Accepted, no effect in Tally: it has no metrics "
     "reporters.",
     0, NULL},
    {NULL, "leader.imbalance.check.interval.seconds", CT_LONG, "300", 1, I64MAX, NULL, false,
     "How often the controller looks for partitions to move back to their preferred leader "
     "(s).",
     0, "src/controller/controller.c"},
    {NULL, "leader.imbalance.per.broker.percentage", CT_INT, "10", INT32_MIN, I32MAX, NULL, false,
     "The share of a broker's leaderships that may be away from their preferred replica "
     "before the controller rebalances (%). Accepted, no effect in Tally: it does not move "
     "leaders back to preferred replicas on its own.",
     0, NULL},
    {NULL, "leader.replication.throttled.rate", CT_LONG, LMAX, 0, I64MAX, NULL, true,
     "The replication rate limit on the leader side for the replicas listed in "
     "leader.replication.throttled.replicas (bytes/s), measured over a 1 s window of what "
     "this broker sends its followers of them.",
     0, "src/replica/partition.c"},
    {NULL, "listener.security.protocol.map", CT_STRING,
     "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT", 0, 0, NULL,
     true,
     "The security protocol of each listener name (NAME:PROTOCOL,...). Tally serves PLAINTEXT, "
     "SSL, SASL_PLAINTEXT and SASL_SSL. Read at start; a dynamic value is only stored.",
     CF_PER_BROKER, "src/server_config.c"},
    {NULL, "log.cleaner.io.buffer.load.factor", CT_DOUBLE, "0.9", 0, 0, NULL, true,
     "How full the cleaner's dedupe buffer may get. Stored, no effect in Tally: its log "
     "cleaner is one job at a time on the thread pool, bounded by "
     "log.cleaner.dedupe.buffer.size.",
     0, NULL},
    {NULL, "log.cleaner.io.buffer.size", CT_INT, "524288", 0, I32MAX, NULL, true,
     "The memory of the cleaner's read and write buffers (bytes). Stored, no effect in "
     "Tally: its log cleaner is one job at a time on the thread pool, bounded by "
     "log.cleaner.dedupe.buffer.size.",
     0, NULL},
    {NULL, "log.cleaner.io.max.bytes.per.second", CT_DOUBLE, "1.7976931348623157E308", 0, 0, NULL,
     true,
     "The cleaner's I/O rate limit (bytes/s). Stored, no effect in Tally: its log cleaner is "
     "one job at a time on the thread pool, bounded by log.cleaner.dedupe.buffer.size.",
     0, NULL},
    {NULL, "log.cleaner.threads", CT_INT, "1", 0, I32MAX, NULL, true,
     "The number of log cleaner threads. Stored, no effect in Tally: its log cleaner is one "
     "job at a time on the thread pool, bounded by log.cleaner.dedupe.buffer.size.",
     0, NULL},
    {NULL, "log.dir", CT_STRING, "/tmp/kafka-logs", 0, 0, NULL, false,
     "The log directory, used when log.dirs is not set.", 0, "src/server_config.c"},
    {NULL, "log.dir.failure.timeout.ms", CT_LONG, "30000", 1, I64MAX, NULL, false,
     "How long a broker that cannot tell the controller of a failed log directory keeps "
     "running (ms). Accepted, no effect in Tally: it keeps one log directory.",
     0, NULL},
    {NULL, "log.flush.start.offset.checkpoint.interval.ms", CT_INT, "60000", 0, I32MAX, NULL, false,
     "How often the log-start-offset checkpoint is written (ms). Accepted, no effect in "
     "Tally: it writes the log-start-offset checkpoint with the recovery point "
     "(log.flush.offset.checkpoint.interval.ms).",
     0, NULL},
    {NULL, "max.connection.creation.rate", CT_INT, "2147483647", 0, I32MAX, NULL, true,
     "The most new connections per second the broker accepts. Stored, no effect in Tally: it "
     "does not limit connections.",
     0, NULL},
    {NULL, "max.connections", CT_INT, "2147483647", 0, I32MAX, NULL, true,
     "The most connections the broker holds. Stored, no effect in Tally: it does not limit "
     "connections.",
     0, NULL},
    {NULL, "max.connections.per.ip", CT_INT, "2147483647", 0, I32MAX, NULL, true,
     "The most connections from one address. Stored, no effect in Tally: it does not limit "
     "connections.",
     0, NULL},
    {NULL, "max.connections.per.ip.overrides", CT_STRING, "", 0, 0, NULL, true,
     "Per-address (or host name) overrides of max.connections.per.ip, as host:count pairs. "
     "Stored, no effect in Tally: it does not limit connections.",
     0, NULL},
    {NULL, "max.incremental.fetch.session.cache.slots", CT_INT, "1000", 0, I32MAX, NULL, false,
     "The most incremental fetch sessions kept. Accepted, no effect in Tally: it has no "
     "incremental fetch sessions (KIP-227): every Fetch is a full one.",
     0, NULL},
    {NULL, "max.request.partition.size.limit", CT_INT, "2000", 1, I32MAX, NULL, false,
     "The most partitions one request may name. Accepted, no effect in Tally: it reads each "
     "connection's requests in order and bounds them by socket.request.max.bytes.",
     0, NULL},
    {NULL, "metadata.log.max.record.bytes.between.snapshots", CT_LONG, "20971520", 1, I64MAX, NULL,
     false,
     "How many bytes of metadata log go between two snapshots. Accepted, no effect in Tally: "
     "the metadata log is libraft's, with its own segments and snapshots.",
     0, NULL},
    {NULL, "metadata.log.max.snapshot.interval.ms", CT_LONG, "3600000", 0, I64MAX, NULL, false,
     "The longest wait before committed metadata records are snapshotted (ms). Accepted, no "
     "effect in Tally: the metadata log is libraft's, with its own segments and snapshots.",
     0, NULL},
    {NULL, "metadata.log.segment.bytes", CT_INT, "1073741824", 12, I32MAX, NULL, false,
     "The size of one metadata log segment (bytes). Accepted, no effect in Tally: the "
     "metadata log is libraft's, with its own segments and snapshots.",
     0, NULL},
    {NULL, "metadata.log.segment.ms", CT_LONG, "604800000", INT64_MIN, I64MAX, NULL, false,
     "How old a metadata log segment may get before a new one is started (ms). Accepted, no "
     "effect in Tally: the metadata log is libraft's, with its own segments and snapshots.",
     0, NULL},
    {NULL, "metadata.max.idle.interval.ms", CT_INT, "500", 0, I32MAX, NULL, false,
     "How often the active controller writes a no-op record to the metadata log (ms). "
     "Accepted, no effect in Tally: the metadata log is libraft's, with its own segments and "
     "snapshots.",
     0, NULL},
    {NULL, "metadata.max.retention.bytes", CT_LONG, "104857600", INT64_MIN, I64MAX, NULL, false,
     "The most bytes of metadata log and snapshots kept. Accepted, no effect in Tally: the "
     "metadata log is libraft's, with its own segments and snapshots.",
     0, NULL},
    {NULL, "metadata.max.retention.ms", CT_LONG, "604800000", INT64_MIN, I64MAX, NULL, false,
     "How long a metadata log segment or snapshot is kept (ms). Accepted, no effect in "
     "Tally: the metadata log is libraft's, with its own segments and snapshots.",
     0, NULL},
    {NULL, "metric.reporters", CT_LIST, "", 0, 0, NULL, true,
     "Metrics reporter classes. Stored, no effect in Tally: it has no metrics reporters.", 0, NULL},
    /* Tally's own (issue 19): the Prometheus endpoint. */
    {NULL, "metrics.listener", CT_STRING, "", 0, 0, NULL, false,
     "The host:port of the HTTP listener serving GET /metrics in the Prometheus text format "
     "(docs/metrics.md), e.g. 127.0.0.1:9644; empty (the default) opens no port. Port 0 "
     "picks a free one (the log line names it).",
     0, "src/exporter/exporter.c"},
    {NULL, "metrics.partition.level", CT_BOOLEAN, "true", 0, 0, booleans, false,
     "Whether /metrics has per-partition series (log start, LEO, HW, LSO, follower lag); off "
     "leaves only the per-topic and broker-wide ones.",
     0, "src/exporter/exporter.c"},
    {NULL, "metrics.partition.max.series", CT_INT, "10000", 0, I32MAX, NULL, false,
     "The most partitions /metrics reports per-partition series for; the rest are counted in "
     "tally_metrics_partitions_omitted.",
     0, "src/exporter/exporter.c"},
    /* Tally's own (issue 19): the web console on metrics.listener (docs/console.md). */
    {NULL, "console.write.enable", CT_BOOLEAN, "false", 0, 0, booleans, false,
     "Whether the web console at metrics.listener's / may change the cluster: create topics, "
     "reset an empty group's offsets, abort a hanging transaction (each behind a confirmation). "
     "Off (the default), every such POST is refused with 403.",
     0, "src/exporter/exporter.c"},
    /* Tally's own (issue 19): the console's security (docs/console.md, Security). */
    {NULL, "console.authentication", CT_STRING, "none", 0, 0, console_auths, false,
     "How the console and /metrics on metrics.listener authenticate: none (everyone is "
     "User:ANONYMOUS), scram (HTTP Basic, checked against the SCRAM users of the metadata "
     "image) or plain (HTTP Basic, checked against the PLAIN JAAS users of the SASL "
     "listeners). ACLs apply to the principal when authorizer.class.name is set.",
     0, "src/exporter/exporter.c"},
    {NULL, "console.insecure.ok", CT_BOOLEAN, "false", 0, 0, booleans, false,
     "Whether metrics.listener may be a non-loopback address without HTTPS "
     "(metrics.ssl.keystore.location) and console.authentication=scram; off (the default), "
     "such a broker refuses to start.",
     0, "src/exporter/exporter.c"},
    {NULL, "metrics.ssl.keystore.location", CT_STRING, "", 0, 0, NULL, false,
     "A PEM file with the key and certificate chain of metrics.listener: set, the listener "
     "speaks HTTPS only (GnuTLS through libmicrohttpd).",
     0, "src/exporter/exporter.c"},
    {NULL, "metrics.ssl.keystore.type", CT_STRING, "PEM", 0, 0, NULL, false,
     "The type of metrics.ssl.keystore.location: PEM only (PKCS12 is not supported on this "
     "listener).",
     0, "src/exporter/exporter.c"},
    {NULL, "metrics.num.samples", CT_INT, "2", 1, I32MAX, NULL, false,
     "How many samples a metric keeps. Accepted, no effect in Tally: it has no metrics "
     "reporters.",
     0, NULL},
    {NULL, "metrics.recording.level", CT_STRING, "INFO", 0, 0, NULL, false,
     "The highest level of metrics recorded. Accepted, no effect in Tally: it has no metrics "
     "reporters.",
     0, NULL},
    {NULL, "metrics.sample.window.ms", CT_LONG, "30000", 1, I64MAX, NULL, false,
     "The span of one metrics sample (ms). Accepted, no effect in Tally: it has no metrics "
     "reporters.",
     0, NULL},
    {NULL, "num.network.threads", CT_INT, "3", 1, I32MAX, NULL, true,
     "The number of threads that read requests and write answers. Stored, no effect in "
     "Tally: it serves requests on one event loop and runs blocking work on libuv's pool "
     "(num.io.threads).",
     0, NULL},
    {NULL, "num.recovery.threads.per.data.dir", CT_INT, "1", 1, I32MAX, NULL, true,
     "The number of threads per log directory that recover logs at start. Stored, no effect "
     "in Tally: it recovers logs on the thread pool.",
     0, NULL},
    {NULL, "num.replica.alter.log.dirs.threads", CT_INT, NULL, INT32_MIN, I32MAX, NULL, false,
     "The number of threads that move replicas between log directories. Accepted, no effect "
     "in Tally: it keeps one log directory.",
     0, NULL},
    {NULL, "num.replica.fetchers", CT_INT, "1", INT32_MIN, I32MAX, NULL, true,
     "The number of fetcher threads per source broker. Stored, no effect in Tally: its "
     "followers fetch with their own fixed settings.",
     0, NULL},
    {NULL, "offsets.commit.required.acks", CT_SHORT, "-1", INT16_MIN, INT16_MAX, NULL, false,
     "Deprecated: the acks an offset commit needs. Accepted, no effect in Tally: it writes "
     "commits to __consumer_offsets with acks=all and loads them in its own chunks.",
     0, NULL},
    {NULL, "offsets.load.buffer.size", CT_INT, "5242880", 1, I32MAX, NULL, false,
     "The read size when __consumer_offsets is loaded (bytes). Accepted, no effect in Tally: "
     "it writes commits to __consumer_offsets with acks=all and loads them in its own "
     "chunks.",
     0, NULL},
    {NULL, "offsets.topic.compression.codec", CT_INT, "0", INT32_MIN, I32MAX, NULL, false,
     "The codec of the coordinator's writes to __consumer_offsets. Accepted, no effect in "
     "Tally: it writes commits to __consumer_offsets with acks=all and loads them in its own "
     "chunks.",
     0, NULL},
    {NULL, "password.encoder.cipher.algorithm", CT_STRING, "AES/CBC/PKCS5Padding", 0, 0, NULL,
     false,
     "The cipher dynamic passwords are encoded with. Accepted, no effect in Tally: it "
     "encodes no passwords.",
     0, NULL},
    {NULL, "password.encoder.iterations", CT_INT, "4096", 1024, I32MAX, NULL, false,
     "The iteration count of the encoding of dynamic passwords. Accepted, no effect in "
     "Tally: it encodes no passwords.",
     0, NULL},
    {NULL, "password.encoder.key.length", CT_INT, "128", 8, I32MAX, NULL, false,
     "The key length of the encoding of dynamic passwords. Accepted, no effect in Tally: it "
     "encodes no passwords.",
     0, NULL},
    {NULL, "password.encoder.keyfactory.algorithm", CT_STRING, NULL, 0, 0, NULL, false,
     "The key factory of the encoding of dynamic passwords. Accepted, no effect in Tally: it "
     "encodes no passwords.",
     0, NULL},
    {NULL, "password.encoder.old.secret", CT_PASSWORD, NULL, 0, 0, NULL, false,
     "The previous secret dynamic passwords were encoded with. Accepted, no effect in Tally: "
     "it encodes no passwords.",
     0, NULL},
    {NULL, "password.encoder.secret", CT_PASSWORD, NULL, 0, 0, NULL, false,
     "The secret dynamic passwords are encoded with. Accepted, no effect in Tally: it "
     "encodes no passwords.",
     0, NULL},
    {NULL, "principal.builder.class", CT_CLASS,
     "org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder", 0, 0, NULL,
     true,
     "The class that builds the principal of a connection. Stored, no effect in Tally: it "
     "has no SASL authentication.",
     CF_PER_BROKER, NULL},
    {NULL, "process.roles", CT_LIST, "", 0, 0, NULL, false,
     "broker,controller (a voter of the metadata quorum that is also a broker) or broker "
     "(a broker that follows the quorum as a standby). A controller-only node is not "
     "implemented and refused, and so are a broker-only node listed among the voters and a "
     "controller missing from them.",
     0, "src/server_config.c"},
    {NULL, "producer.purgatory.purge.interval.requests", CT_INT, "1000", INT32_MIN, I32MAX, NULL,
     false,
     "How many requests go between two purges of the Produce purgatory. Accepted, no effect "
     "in Tally: its purgatory completes waiting requests when their condition holds, without "
     "purge intervals.",
     0, NULL},
    {NULL, "queued.max.request.bytes", CT_LONG, "-1", INT64_MIN, I64MAX, NULL, false,
     "The most bytes of queued requests before no more are read (-1: no limit). Accepted, no "
     "effect in Tally: it reads each connection's requests in order and bounds them by "
     "socket.request.max.bytes.",
     0, NULL},
    {NULL, "queued.max.requests", CT_INT, "500", 1, I32MAX, NULL, false,
     "The most queued requests before the network threads stop reading. Accepted, no effect "
     "in Tally: it reads each connection's requests in order and bounds them by "
     "socket.request.max.bytes.",
     0, NULL},
    {NULL, "quota.window.num", CT_INT, "11", 2, 64, NULL, false,
     "How many samples the client byte-rate and request quotas keep (docs/security.md; "
     "Tally takes 2 to 64).",
     0, "src/main.c"},
    {NULL, "quota.window.size.seconds", CT_INT, "1", 1, 3600, NULL, false,
     "The span of one sample of the client byte-rate and request quotas (s).", 0, "src/main.c"},
    {NULL, "remote.fetch.max.wait.ms", CT_INT, "500", 1, I32MAX, NULL, true,
     "The longest a fetch from remote storage waits (ms). Stored, no effect in Tally: it has "
     "no tiered storage.",
     0, NULL},
    {NULL, "remote.log.index.file.cache.total.size.bytes", CT_LONG, "1073741824", 1, I64MAX, NULL,
     true,
     "The local space for index files fetched from remote storage (bytes). Stored, no effect "
     "in Tally: it has no tiered storage.",
     0, NULL},
    {NULL, "remote.log.manager.copier.thread.pool.size", CT_INT, "-1", 1, I32MAX, NULL, false,
     "The threads that copy segments to remote storage (-1: "
     "remote.log.manager.thread.pool.size). Accepted, no effect in Tally: it has no tiered "
     "storage.",
     CF_OR_MINUS_ONE, NULL},
    {NULL, "remote.log.manager.copy.max.bytes.per.second", CT_LONG, LMAX, 1, I64MAX, NULL, true,
     "The rate limit of copies to remote storage (bytes/s). Stored, no effect in Tally: it "
     "has no tiered storage.",
     0, NULL},
    {NULL, "remote.log.manager.copy.quota.window.num", CT_INT, "11", 1, I32MAX, NULL, false,
     "How many samples the remote copy quota keeps. Accepted, no effect in Tally: it has no "
     "tiered storage.",
     0, NULL},
    {NULL, "remote.log.manager.copy.quota.window.size.seconds", CT_INT, "1", 1, I32MAX, NULL, false,
     "The span of one sample of the remote copy quota (s). Accepted, no effect in Tally: it "
     "has no tiered storage.",
     0, NULL},
    {NULL, "remote.log.manager.expiration.thread.pool.size", CT_INT, "-1", 1, I32MAX, NULL, false,
     "The threads that expire remote segments (-1: remote.log.manager.thread.pool.size). "
     "Accepted, no effect in Tally: it has no tiered storage.",
     CF_OR_MINUS_ONE, NULL},
    {NULL, "remote.log.manager.fetch.max.bytes.per.second", CT_LONG, LMAX, 1, I64MAX, NULL, true,
     "The rate limit of fetches from remote storage (bytes/s). Stored, no effect in Tally: "
     "it has no tiered storage.",
     0, NULL},
    {NULL, "remote.log.manager.fetch.quota.window.num", CT_INT, "11", 1, I32MAX, NULL, false,
     "How many samples the remote fetch quota keeps. Accepted, no effect in Tally: it has no "
     "tiered storage.",
     0, NULL},
    {NULL, "remote.log.manager.fetch.quota.window.size.seconds", CT_INT, "1", 1, I32MAX, NULL,
     false,
     "The span of one sample of the remote fetch quota (s). Accepted, no effect in Tally: it "
     "has no tiered storage.",
     0, NULL},
    {NULL, "remote.log.manager.task.interval.ms", CT_LONG, "30000", 1, I64MAX, NULL, false,
     "How often the remote log manager's tasks run (ms). Accepted, no effect in Tally: it "
     "has no tiered storage.",
     0, NULL},
    {NULL, "remote.log.manager.thread.pool.size", CT_INT, "10", 1, I32MAX, NULL, false,
     "Deprecated: the threads of the remote log manager's tasks. Accepted, no effect in "
     "Tally: it has no tiered storage.",
     0, NULL},
    {NULL, "remote.log.metadata.custom.metadata.max.bytes", CT_INT, "128", 0, I32MAX, NULL, false,
     "The most bytes of custom metadata a remote storage plugin may return. Accepted, no "
     "effect in Tally: it has no tiered storage.",
     0, NULL},
    {NULL, "remote.log.metadata.manager.class.name", CT_STRING,
     "org.apache.kafka.server.log.remote.metadata.storage.TopicBasedRemoteLogMetadataManager", 0, 0,
     NULL, false,
     "The remote log metadata manager class. Accepted, no effect in Tally: it has no tiered "
     "storage.",
     0, NULL},
    {NULL, "remote.log.metadata.manager.class.path", CT_STRING, NULL, 0, 0, NULL, false,
     "The class path of the remote log metadata manager. Accepted, no effect in Tally: it "
     "has no tiered storage.",
     0, NULL},
    {NULL, "remote.log.metadata.manager.impl.prefix", CT_STRING, "rlmm.config.", 0, 0, NULL, false,
     "The prefix of properties passed to the remote log metadata manager. Accepted, no "
     "effect in Tally: it has no tiered storage.",
     0, NULL},
    {NULL, "remote.log.metadata.manager.listener.name", CT_STRING, NULL, 0, 0, NULL, false,
     "The listener the remote log metadata manager connects to. Accepted, no effect in "
     "Tally: it has no tiered storage.",
     0, NULL},
    {NULL, "remote.log.reader.max.pending.tasks", CT_INT, "100", 1, I32MAX, NULL, false,
     "The most queued reads from remote storage. Accepted, no effect in Tally: it has no "
     "tiered storage.",
     0, NULL},
    {NULL, "remote.log.reader.threads", CT_INT, "10", 1, I32MAX, NULL, false,
     "The threads that read from remote storage. Accepted, no effect in Tally: it has no "
     "tiered storage.",
     0, NULL},
    {NULL, "remote.log.storage.manager.class.name", CT_STRING, NULL, 0, 0, NULL, false,
     "The remote storage manager class. Accepted, no effect in Tally: it has no tiered "
     "storage.",
     0, NULL},
    {NULL, "remote.log.storage.manager.class.path", CT_STRING, NULL, 0, 0, NULL, false,
     "The class path of the remote storage manager. Accepted, no effect in Tally: it has no "
     "tiered storage.",
     0, NULL},
    {NULL, "remote.log.storage.manager.impl.prefix", CT_STRING, "rsm.config.", 0, 0, NULL, false,
     "The prefix of properties passed to the remote storage manager. Accepted, no effect in "
     "Tally: it has no tiered storage.",
     0, NULL},
    {NULL, "remote.log.storage.system.enable", CT_BOOLEAN, "false", 0, 0, booleans, false,
     "Whether the broker enables tiered storage. Accepted, no effect in Tally: it has no "
     "tiered storage.",
     0, NULL},
    {NULL, "replica.alter.log.dirs.io.max.bytes.per.second", CT_LONG, LMAX, 0, I64MAX, NULL, true,
     "The rate limit of moves between log directories (bytes/s). Stored, no effect in Tally: "
     "it applies no quotas.",
     0, NULL},
    {NULL, "replica.fetch.backoff.ms", CT_INT, "1000", 0, I32MAX, NULL, false,
     "How long a follower waits before it fetches a partition again after an error (ms).", 0,
     "src/replica/replica_mgr.c"},
    {NULL, "replica.fetch.max.bytes", CT_INT, "1048576", 0, I32MAX, NULL, false,
     "The most a follower asks for per partition in one fetch (bytes; a first batch larger "
     "than this still comes whole).",
     0, "src/replica/replica_mgr.c"},
    {NULL, "replica.fetch.min.bytes", CT_INT, "1", INT32_MIN, I32MAX, NULL, false,
     "How many bytes a follower's fetch waits for before the leader answers it.", 0,
     "src/replica/replica_mgr.c"},
    {NULL, "replica.fetch.response.max.bytes", CT_INT, "10485760", 0, I32MAX, NULL, false,
     "The most a follower asks for in one fetch over all its partitions (bytes).", 0,
     "src/replica/replica_mgr.c"},
    {NULL, "replica.fetch.wait.max.ms", CT_INT, "500", INT32_MIN, I32MAX, NULL, false,
     "How long the leader holds a follower's fetch when it has nothing new (ms).", 0,
     "src/replica/replica_mgr.c"},
    {NULL, "replica.high.watermark.checkpoint.interval.ms", CT_LONG, "5000", INT64_MIN, I64MAX,
     NULL, false,
     "How often every hosted partition's high watermark is written to the log dir's "
     "replication-offset-checkpoint (ms).",
     0, "src/replica/replica_mgr.c"},
    {NULL, "replica.lag.time.max.ms", CT_LONG, "30000", INT64_MIN, I64MAX, NULL, false,
     "How long a follower may fail to catch up with the leader's log end before the leader "
     "has it removed from the ISR (ms).",
     0, "src/replica/replica_mgr.c"},
    {NULL, "replica.selector.class", CT_STRING, NULL, 0, 0, NULL, false,
     "The class that picks a preferred read replica for a consumer. Accepted, no effect in "
     "Tally: it loads no Java plugins.",
     0, NULL},
    {NULL, "replica.socket.receive.buffer.bytes", CT_INT, "65536", INT32_MIN, I32MAX, NULL, false,
     "SO_RCVBUF of a follower's connections to leaders. Accepted, no effect in Tally: its "
     "sockets use the operating system's defaults for this.",
     0, NULL},
    {NULL, "replica.socket.timeout.ms", CT_INT, "30000", INT32_MIN, I32MAX, NULL, false,
     "The socket timeout of a follower's requests (ms). Accepted, no effect in Tally: its "
     "followers fetch with their own fixed settings.",
     0, NULL},
    {NULL, "replication.quota.window.num", CT_INT, "11", 1, I32MAX, NULL, false,
     "How many samples replication quotas keep. Accepted, no effect in Tally: it applies no "
     "quotas.",
     0, NULL},
    {NULL, "replication.quota.window.size.seconds", CT_INT, "1", 1, I32MAX, NULL, false,
     "The span of one sample of replication quotas (s). Accepted, no effect in Tally: it "
     "applies no quotas.",
     0, NULL},
    {NULL, "request.timeout.ms", CT_INT, "30000", INT32_MIN, I32MAX, NULL, false,
     "How long a request forwarded to the active controller (CreateTopics, DeleteTopics, "
     "CreatePartitions, AlterConfigs, IncrementalAlterConfigs, ElectLeaders, and the "
     "broker's own topic creations) may wait for the controller's answer, retries included, "
     "when its own timeout is not shorter (ms); 0 or less: 30000.",
     0, "src/main.c"},
    {NULL, "reserved.broker.max.id", CT_INT, "1000", 0, I32MAX, NULL, false,
     "The largest broker id that may be configured (generated ids start above it). Accepted, "
     "no effect in Tally: node ids are configured, never generated.",
     0, NULL},
    {NULL, "sasl.client.callback.handler.class", CT_CLASS, NULL, 0, 0, NULL, false,
     "The SASL client callback handler class. Accepted, no effect in Tally: it has no SASL "
     "authentication.",
     0, NULL},
    {NULL, "sasl.enabled.mechanisms", CT_LIST, "GSSAPI", 0, 0, NULL, true,
     "The SASL mechanisms SASL_PLAINTEXT listeners enable (listener.name.<listener>."
     "sasl.enabled.mechanisms for one listener): PLAIN, SCRAM-SHA-256, SCRAM-SHA-512; GSSAPI "
     "(Kafka's default) and OAUTHBEARER are refused at start. Read at start; a dynamic value "
     "is only stored.",
     CF_PER_BROKER, "src/server_config.c"},
    {NULL, "sasl.jaas.config", CT_PASSWORD, NULL, 0, 0, NULL, true,
     "JAAS login parameters of SASL connections. Stored, no effect in Tally: it has no SASL "
     "authentication.",
     CF_PER_BROKER, NULL},
    {NULL, "sasl.kerberos.kinit.cmd", CT_STRING, "/usr/bin/kinit", 0, 0, NULL, true,
     "The kinit command of Kerberos logins. Stored, no effect in Tally: it has no SASL "
     "authentication.",
     CF_PER_BROKER, NULL},
    {NULL, "sasl.kerberos.min.time.before.relogin", CT_LONG, "60000", INT64_MIN, I64MAX, NULL, true,
     "How long the Kerberos login thread sleeps between refreshes (ms). Stored, no effect in "
     "Tally: it has no SASL authentication.",
     CF_PER_BROKER, NULL},
    {NULL, "sasl.kerberos.principal.to.local.rules", CT_LIST, "DEFAULT", 0, 0, NULL, true,
     "Rules that map Kerberos principals to short names. Stored, no effect in Tally: it has "
     "no SASL authentication.",
     CF_PER_BROKER, NULL},
    {NULL, "sasl.kerberos.service.name", CT_STRING, NULL, 0, 0, NULL, true,
     "The Kerberos principal name the broker runs as. Stored, no effect in Tally: it has no "
     "SASL authentication.",
     CF_PER_BROKER, NULL},
    {NULL, "sasl.kerberos.ticket.renew.jitter", CT_DOUBLE, "0.05", 0, 0, NULL, true,
     "The random jitter added to a Kerberos ticket's renewal time. Stored, no effect in "
     "Tally: it has no SASL authentication.",
     CF_PER_BROKER, NULL},
    {NULL, "sasl.kerberos.ticket.renew.window.factor", CT_DOUBLE, "0.8", 0, 0, NULL, true,
     "The share of a Kerberos ticket's lifetime after which it is renewed. Stored, no effect "
     "in Tally: it has no SASL authentication.",
     CF_PER_BROKER, NULL},
    {NULL, "sasl.login.callback.handler.class", CT_CLASS, NULL, 0, 0, NULL, false,
     "The SASL login callback handler class. Accepted, no effect in Tally: it has no SASL "
     "authentication.",
     0, NULL},
    {NULL, "sasl.login.class", CT_CLASS, NULL, 0, 0, NULL, false,
     "The SASL login class. Accepted, no effect in Tally: it has no SASL authentication.", 0, NULL},
    {NULL, "sasl.login.connect.timeout.ms", CT_INT, NULL, INT32_MIN, I32MAX, NULL, false,
     "The connect timeout of an external authentication provider (ms). Accepted, no effect "
     "in Tally: it has no SASL/OAUTHBEARER authentication.",
     0, NULL},
    {NULL, "sasl.login.read.timeout.ms", CT_INT, NULL, INT32_MIN, I32MAX, NULL, false,
     "The read timeout of an external authentication provider (ms). Accepted, no effect in "
     "Tally: it has no SASL/OAUTHBEARER authentication.",
     0, NULL},
    {NULL, "sasl.login.refresh.buffer.seconds", CT_SHORT, "300", INT16_MIN, INT16_MAX, NULL, true,
     "The time kept before a credential expires when it is refreshed (s). Stored, no effect "
     "in Tally: it has no SASL authentication.",
     CF_PER_BROKER, NULL},
    {NULL, "sasl.login.refresh.min.period.seconds", CT_SHORT, "60", INT16_MIN, INT16_MAX, NULL,
     true,
     "The least time between two credential refreshes (s). Stored, no effect in Tally: it "
     "has no SASL authentication.",
     CF_PER_BROKER, NULL},
    {NULL, "sasl.login.refresh.window.factor", CT_DOUBLE, "0.8", 0, 0, NULL, true,
     "The share of a credential's lifetime after which it is refreshed. Stored, no effect in "
     "Tally: it has no SASL authentication.",
     CF_PER_BROKER, NULL},
    {NULL, "sasl.login.refresh.window.jitter", CT_DOUBLE, "0.05", 0, 0, NULL, true,
     "The random jitter added to a credential's refresh time. Stored, no effect in Tally: it "
     "has no SASL authentication.",
     CF_PER_BROKER, NULL},
    {NULL, "sasl.login.retry.backoff.max.ms", CT_LONG, "10000", INT64_MIN, I64MAX, NULL, false,
     "The longest wait between login attempts to an external authentication provider (ms). "
     "Accepted, no effect in Tally: it has no SASL/OAUTHBEARER authentication.",
     0, NULL},
    {NULL, "sasl.login.retry.backoff.ms", CT_LONG, "100", INT64_MIN, I64MAX, NULL, false,
     "The first wait between login attempts to an external authentication provider (ms). "
     "Accepted, no effect in Tally: it has no SASL/OAUTHBEARER authentication.",
     0, NULL},
    {NULL, "sasl.mechanism.controller.protocol", CT_STRING, "GSSAPI", 0, 0, NULL, false,
     "The SASL mechanism of connections to controllers. Accepted, no effect in Tally: it has "
     "no SASL authentication.",
     0, NULL},
    {NULL, "sasl.mechanism.inter.broker.protocol", CT_STRING, "GSSAPI", 0, 0, NULL, true,
     "The SASL mechanism of connections between brokers on a SASL_PLAINTEXT or SASL_SSL "
     "inter-broker listener, with the login (username, password) of the listener's "
     "<mechanism>.sasl.jaas.config: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (the SCRAM user "
     "lives in the metadata log, docs/security.md); read at start (a dynamic change takes "
     "effect at the next restart).",
     CF_PER_BROKER, "src/server_config.c"},
    {NULL, "sasl.oauthbearer.clock.skew.seconds", CT_INT, "30", INT32_MIN, I32MAX, NULL, false,
     "The clock difference allowed with the OAuth identity provider (s). Accepted, no effect "
     "in Tally: it has no SASL/OAUTHBEARER authentication.",
     0, NULL},
    {NULL, "sasl.oauthbearer.expected.audience", CT_LIST, NULL, 0, 0, NULL, false,
     "The audiences a JWT must be issued for. Accepted, no effect in Tally: it has no "
     "SASL/OAUTHBEARER authentication.",
     0, NULL},
    {NULL, "sasl.oauthbearer.expected.issuer", CT_STRING, NULL, 0, 0, NULL, false,
     "The issuer a JWT must come from. Accepted, no effect in Tally: it has no "
     "SASL/OAUTHBEARER authentication.",
     0, NULL},
    {NULL, "sasl.oauthbearer.jwks.endpoint.refresh.ms", CT_LONG, "3600000", INT64_MIN, I64MAX, NULL,
     false,
     "How often the JWKS cache is refreshed (ms). Accepted, no effect in Tally: it has no "
     "SASL/OAUTHBEARER authentication.",
     0, NULL},
    {NULL, "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms", CT_LONG, "10000", INT64_MIN,
     I64MAX, NULL, false,
     "The longest wait between JWKS retrieval attempts (ms). Accepted, no effect in Tally: "
     "it has no SASL/OAUTHBEARER authentication.",
     0, NULL},
    {NULL, "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms", CT_LONG, "100", INT64_MIN, I64MAX,
     NULL, false,
     "The first wait between JWKS retrieval attempts (ms). Accepted, no effect in Tally: it "
     "has no SASL/OAUTHBEARER authentication.",
     0, NULL},
    {NULL, "sasl.oauthbearer.jwks.endpoint.url", CT_STRING, NULL, 0, 0, NULL, false,
     "Where the OAuth provider's JWKS is fetched from. Accepted, no effect in Tally: it has "
     "no SASL/OAUTHBEARER authentication.",
     0, NULL},
    {NULL, "sasl.oauthbearer.scope.claim.name", CT_STRING, "scope", 0, 0, NULL, false,
     "The name of a JWT's scope claim. Accepted, no effect in Tally: it has no "
     "SASL/OAUTHBEARER authentication.",
     0, NULL},
    {NULL, "sasl.oauthbearer.sub.claim.name", CT_STRING, "sub", 0, 0, NULL, false,
     "The name of a JWT's subject claim. Accepted, no effect in Tally: it has no "
     "SASL/OAUTHBEARER authentication.",
     0, NULL},
    {NULL, "sasl.oauthbearer.token.endpoint.url", CT_STRING, NULL, 0, 0, NULL, false,
     "The OAuth identity provider's token endpoint. Accepted, no effect in Tally: it has no "
     "SASL/OAUTHBEARER authentication.",
     0, NULL},
    {NULL, "sasl.server.callback.handler.class", CT_CLASS, NULL, 0, 0, NULL, false,
     "The SASL server callback handler class. Accepted, no effect in Tally: it has no SASL "
     "authentication.",
     0, NULL},
    {NULL, "sasl.server.max.receive.size", CT_INT, "524288", INT32_MIN, I32MAX, NULL, false,
     "The largest receive allowed during SASL authentication (bytes). Accepted, no effect in "
     "Tally: it has no SASL authentication.",
     0, NULL},
    {NULL, "security.inter.broker.protocol", CT_STRING, "PLAINTEXT", 0, 0, security_protocols,
     false,
     "The security protocol between brokers: names the inter-broker listener when "
     "inter.broker.listener.name is unset. SSL and SASL_SSL need a truststore on the "
     "listener; SASL needs sasl.mechanism.inter.broker.protocol (PLAIN, SCRAM-SHA-256, "
     "SCRAM-SHA-512).",
     0, "src/server_config.c"},
    {NULL, "security.providers", CT_STRING, NULL, 0, 0, NULL, false,
     "Classes that provide security algorithms. Accepted, no effect in Tally: its TLS is "
     "OpenSSL's, set by the other ssl.* settings.",
     0, NULL},
    {NULL, "socket.connection.setup.timeout.max.ms", CT_LONG, "30000", INT64_MIN, I64MAX, NULL,
     false,
     "The longest the broker's own client (followers, the controller channel) waits for a "
     "connection to be set up (ms): the timeout doubles per attempt given up, to this.",
     0, "src/server_config.c"},
    {NULL, "socket.connection.setup.timeout.ms", CT_LONG, "10000", INT64_MIN, I64MAX, NULL, false,
     "How long the broker's own client (followers, the controller channel) first waits for "
     "a connection to be set up (ms) before it gives the attempt up and tries again.",
     0, "src/server_config.c"},
    {NULL, "socket.listen.backlog.size", CT_INT, "50", 1, I32MAX, NULL, false,
     "The backlog of pending connections of a listening socket. Accepted, no effect in "
     "Tally: its sockets use the operating system's defaults for this.",
     0, NULL},
    {NULL, "ssl.allow.dn.changes", CT_BOOLEAN, "false", 0, 0, booleans, false,
     "Whether a reconfigured certificate may change its distinguished name. Accepted, no "
     "effect in Tally: its TLS is OpenSSL's, set by the other ssl.* settings.",
     0, NULL},
    {NULL, "ssl.allow.san.changes", CT_BOOLEAN, "false", 0, 0, booleans, false,
     "Whether a reconfigured certificate may change its subject alternative names. Accepted, "
     "no effect in Tally: its TLS is OpenSSL's, set by the other ssl.* settings.",
     0, NULL},
    {NULL, "ssl.cipher.suites", CT_LIST, "", 0, 0, NULL, true,
     "The TLS cipher suites enabled on SSL and SASL_SSL listeners, Kafka's (IANA) names or "
     "OpenSSL's; TLS 1.3 suites are TLS_AES_* and TLS_CHACHA20_*. Empty: OpenSSL's defaults. "
     "Read at start (listener.name.<listener>. for one listener); an altered value is stored, "
     "no effect until the next start.",
     CF_PER_BROKER, "src/server_config.c"},
    {NULL, "ssl.client.auth", CT_STRING, "none", 0, 0, ssl_client_auths, true,
     "Whether TLS clients must (required), may (requested) or need not (none) present a "
     "certificate, verified against the truststore; its subject is then the principal "
     "(ssl.principal.mapping.rules). Read at start; an altered value is stored, no effect "
     "until the next start.",
     CF_PER_BROKER, "src/server_config.c"},
    {NULL, "ssl.enabled.protocols", CT_LIST, "TLSv1.2,TLSv1.3", 0, 0, NULL, true,
     "The TLS versions SSL and SASL_SSL listeners accept (TLSv1.2, TLSv1.3). Read at start; an "
     "altered value is stored, no effect until the next start.",
     CF_PER_BROKER, "src/server_config.c"},
    {NULL, "ssl.endpoint.identification.algorithm", CT_STRING, "https", 0, 0, NULL, true,
     "How a server's host name is checked against its certificate: https (the certificate "
     "must name the address connected to, an IP subjectAltName or a DNS name) or empty (not "
     "checked). In Tally it applies to the broker's connections to other brokers on an SSL "
     "or SASL_SSL inter-broker listener, read at start.",
     CF_PER_BROKER, "src/server_config.c"},
    {NULL, "ssl.engine.factory.class", CT_CLASS, NULL, 0, 0, NULL, true,
     "The class that provides TLS engines. Stored, no effect in Tally: its TLS is OpenSSL's, "
     "set by the other ssl.* settings.",
     CF_PER_BROKER, NULL},
    {NULL, "ssl.key.password", CT_PASSWORD, NULL, 0, 0, NULL, true,
     "The password of the private key (PEM keystores; a PKCS12 store uses "
     "ssl.keystore.password). Dynamic in Kafka only under a listener.name.<listener>. prefix, "
     "so the plain name is refused by AlterConfigs; read at start and when altered under the "
     "prefix.",
     CF_LISTENER_ONLY | CF_PER_BROKER, "src/server_config.c"},
    {NULL, "ssl.keymanager.algorithm", CT_STRING, "SunX509", 0, 0, NULL, true,
     "The algorithm of the TLS key manager. Stored, no effect in Tally: its TLS is OpenSSL's, "
     "set by the other ssl.* settings.",
     CF_PER_BROKER, NULL},
    {NULL, "ssl.keystore.certificate.chain", CT_PASSWORD, NULL, 0, 0, NULL, true,
     "The listener's certificate chain, inline PEM (with ssl.keystore.key, instead of "
     "ssl.keystore.location). Dynamic in Kafka only under a listener.name.<listener>. prefix, "
     "so the plain name is refused by AlterConfigs; read at start and when altered under the "
     "prefix.",
     CF_LISTENER_ONLY | CF_PER_BROKER, "src/server_config.c"},
    {NULL, "ssl.keystore.key", CT_PASSWORD, NULL, 0, 0, NULL, true,
     "The listener's private key, inline PEM (with ssl.keystore.certificate.chain). Dynamic in "
     "Kafka only under a listener.name.<listener>. prefix, so the plain name is refused by "
     "AlterConfigs; read at start.",
     CF_LISTENER_ONLY | CF_PER_BROKER, "src/server_config.c"},
    {NULL, "ssl.keystore.location", CT_STRING, NULL, 0, 0, NULL, true,
     "The key store file of SSL and SASL_SSL listeners: a PEM file with the key and the "
     "certificate chain, or a PKCS12 store. Dynamic in Kafka only under a "
     "listener.name.<listener>. prefix, so the plain name is refused by AlterConfigs; read at "
     "start, and again for new connections when altered under the prefix (keystore rotation, "
     "KIP-226).",
     CF_LISTENER_ONLY | CF_PER_BROKER, "src/server_config.c"},
    {NULL, "ssl.keystore.password", CT_PASSWORD, NULL, 0, 0, NULL, true,
     "The password of a PKCS12 key store (and of a PEM key when ssl.key.password is unset). "
     "Dynamic in Kafka only under a listener.name.<listener>. prefix, so the plain name is "
     "refused by AlterConfigs; read at start and when altered under the prefix.",
     CF_LISTENER_ONLY | CF_PER_BROKER, "src/server_config.c"},
    {NULL, "ssl.keystore.type", CT_STRING, "JKS", 0, 0, NULL, true,
     "The format of the key store: PEM or PKCS12 (JKS is refused: there is no Java here). "
     "Unset: PEM when the file starts with \"-----\", else PKCS12. Dynamic in Kafka only under "
     "a listener.name.<listener>. prefix, so the plain name is refused by AlterConfigs; read "
     "at start.",
     CF_LISTENER_ONLY | CF_PER_BROKER, "src/server_config.c"},
    {NULL, "ssl.principal.mapping.rules", CT_STRING, "DEFAULT", 0, 0, NULL, false,
     "How a client certificate's subject (RFC 2253, e.g. CN=alice,OU=eng,O=Org) becomes the "
     "principal's name: DEFAULT (the whole subject) or RULE:pattern/replacement/ with an "
     "optional L or U (lower or upper case), first match wins; the pattern is a POSIX extended "
     "expression matching the whole subject, $1 in the replacement its first group. A subject "
     "no rule matches is refused.",
     0, "src/server_config.c"},
    {NULL, "ssl.protocol", CT_STRING, "TLSv1.2", 0, 0, NULL, true,
     "The TLS protocol of the SSL context. Stored, no effect in Tally: its TLS is OpenSSL's, "
     "set by the other ssl.* settings.",
     CF_PER_BROKER, NULL},
    {NULL, "ssl.provider", CT_STRING, NULL, 0, 0, NULL, true,
     "The security provider of TLS connections. Stored, no effect in Tally: its TLS is "
     "OpenSSL's, set by the other ssl.* settings.",
     CF_PER_BROKER, NULL},
    {NULL, "ssl.secure.random.implementation", CT_STRING, NULL, 0, 0, NULL, true,
     "The random number generator of TLS. Stored, no effect in Tally: its TLS is OpenSSL's, "
     "set by the other ssl.* settings.",
     CF_PER_BROKER, NULL},
    {NULL, "ssl.trustmanager.algorithm", CT_STRING, "PKIX", 0, 0, NULL, true,
     "The algorithm of the TLS trust manager. Stored, no effect in Tally: its TLS is "
     "OpenSSL's, set by the other ssl.* settings.",
     CF_PER_BROKER, NULL},
    {NULL, "ssl.truststore.certificates", CT_PASSWORD, NULL, 0, 0, NULL, true,
     "The trusted certificates, inline PEM (instead of ssl.truststore.location). Dynamic in "
     "Kafka only under a listener.name.<listener>. prefix, so the plain name is refused by "
     "AlterConfigs; read at start.",
     CF_LISTENER_ONLY | CF_PER_BROKER, "src/server_config.c"},
    {NULL, "ssl.truststore.location", CT_STRING, NULL, 0, 0, NULL, true,
     "The trust store file client certificates are verified against: PEM certificates or a "
     "PKCS12 store. Dynamic in Kafka only under a listener.name.<listener>. prefix, so the "
     "plain name is refused by AlterConfigs; read at start and when altered under the prefix.",
     CF_LISTENER_ONLY | CF_PER_BROKER, "src/server_config.c"},
    {NULL, "ssl.truststore.password", CT_PASSWORD, NULL, 0, 0, NULL, true,
     "The password of a PKCS12 trust store. Dynamic in Kafka only under a "
     "listener.name.<listener>. prefix, so the plain name is refused by AlterConfigs; read at "
     "start.",
     CF_LISTENER_ONLY | CF_PER_BROKER, "src/server_config.c"},
    {NULL, "ssl.truststore.type", CT_STRING, "JKS", 0, 0, NULL, true,
     "The format of the trust store: PEM or PKCS12 (JKS is refused). Unset: guessed from the "
     "content as for ssl.keystore.type. Dynamic in Kafka only under a "
     "listener.name.<listener>. prefix, so the plain name is refused by AlterConfigs; read at "
     "start.",
     CF_LISTENER_ONLY | CF_PER_BROKER, "src/server_config.c"},
    {NULL, "super.users", CT_STRING, "", 0, 0, NULL, false,
     "With an authorizer: principals allowed everything whatever the ACLs say, separated by "
     "';' (e.g. User:admin;User:ANONYMOUS — brokers talk to each other as User:ANONYMOUS on "
     "the PLAINTEXT listener).",
     0, "src/authz/authz.c"},
    {NULL, "telemetry.max.bytes", CT_INT, "1048576", 1, I32MAX, NULL, false,
     "The largest client telemetry push (bytes). Accepted, no effect in Tally: it takes no "
     "client telemetry (KIP-714).",
     0, NULL},
    {NULL, "transaction.state.log.load.buffer.size", CT_INT, "5242880", 1, I32MAX, NULL, false,
     "The read size when __transaction_state is loaded (bytes). Accepted, no effect in "
     "Tally: it loads __transaction_state in its own chunks.",
     0, NULL},
    {NULL, "zookeeper.clientCnxnSocket", CT_STRING, NULL, 0, 0, NULL, false,
     "The ZooKeeper client's socket class. Accepted, no effect in Tally: it has no ZooKeeper "
     "(its metadata lives in a raft quorum).",
     0, NULL},
    {NULL, "zookeeper.connect", CT_STRING, NULL, 0, 0, NULL, false,
     "The ZooKeeper connection string. Accepted, no effect in Tally: it has no ZooKeeper "
     "(its metadata lives in a raft quorum).",
     0, NULL},
    {NULL, "zookeeper.connection.timeout.ms", CT_INT, NULL, INT32_MIN, I32MAX, NULL, false,
     "How long the ZooKeeper client waits to connect (ms). Accepted, no effect in Tally: it "
     "has no ZooKeeper (its metadata lives in a raft quorum).",
     0, NULL},
    {NULL, "zookeeper.max.in.flight.requests", CT_INT, "10", 1, I32MAX, NULL, false,
     "The most unanswered requests to ZooKeeper. Accepted, no effect in Tally: it has no "
     "ZooKeeper (its metadata lives in a raft quorum).",
     0, NULL},
    {NULL, "zookeeper.metadata.migration.enable", CT_BOOLEAN, "false", 0, 0, booleans, false,
     "Whether metadata is migrated from ZooKeeper to KRaft. Accepted, no effect in Tally: it "
     "has no ZooKeeper (its metadata lives in a raft quorum).",
     0, NULL},
    {NULL, "zookeeper.session.timeout.ms", CT_INT, "18000", INT32_MIN, I32MAX, NULL, false,
     "The ZooKeeper session timeout (ms). Accepted, no effect in Tally: it has no ZooKeeper "
     "(its metadata lives in a raft quorum).",
     0, NULL},
    {NULL, "zookeeper.set.acl", CT_BOOLEAN, "false", 0, 0, booleans, false,
     "Whether the ZooKeeper client sets secure ACLs. Accepted, no effect in Tally: it has no "
     "ZooKeeper (its metadata lives in a raft quorum).",
     0, NULL},
    {NULL, "zookeeper.ssl.cipher.suites", CT_LIST, NULL, 0, 0, NULL, false,
     "The cipher suites of TLS to ZooKeeper. Accepted, no effect in Tally: it has no "
     "ZooKeeper (its metadata lives in a raft quorum).",
     0, NULL},
    {NULL, "zookeeper.ssl.client.enable", CT_BOOLEAN, "false", 0, 0, booleans, false,
     "Whether the ZooKeeper client uses TLS. Accepted, no effect in Tally: it has no "
     "ZooKeeper (its metadata lives in a raft quorum).",
     0, NULL},
    {NULL, "zookeeper.ssl.crl.enable", CT_BOOLEAN, "false", 0, 0, booleans, false,
     "Whether TLS to ZooKeeper checks certificate revocation lists. Accepted, no effect in "
     "Tally: it has no ZooKeeper (its metadata lives in a raft quorum).",
     0, NULL},
    {NULL, "zookeeper.ssl.enabled.protocols", CT_LIST, NULL, 0, 0, NULL, false,
     "The protocols of TLS to ZooKeeper. Accepted, no effect in Tally: it has no ZooKeeper "
     "(its metadata lives in a raft quorum).",
     0, NULL},
    {NULL, "zookeeper.ssl.endpoint.identification.algorithm", CT_STRING, "HTTPS", 0, 0, NULL, false,
     "Whether TLS to ZooKeeper checks host names. Accepted, no effect in Tally: it has no "
     "ZooKeeper (its metadata lives in a raft quorum).",
     0, NULL},
    {NULL, "zookeeper.ssl.keystore.location", CT_STRING, NULL, 0, 0, NULL, false,
     "The key store of TLS to ZooKeeper. Accepted, no effect in Tally: it has no ZooKeeper "
     "(its metadata lives in a raft quorum).",
     0, NULL},
    {NULL, "zookeeper.ssl.keystore.password", CT_PASSWORD, NULL, 0, 0, NULL, false,
     "The key store password of TLS to ZooKeeper. Accepted, no effect in Tally: it has no "
     "ZooKeeper (its metadata lives in a raft quorum).",
     0, NULL},
    {NULL, "zookeeper.ssl.keystore.type", CT_STRING, NULL, 0, 0, NULL, false,
     "The key store type of TLS to ZooKeeper. Accepted, no effect in Tally: it has no "
     "ZooKeeper (its metadata lives in a raft quorum).",
     0, NULL},
    {NULL, "zookeeper.ssl.ocsp.enable", CT_BOOLEAN, "false", 0, 0, booleans, false,
     "Whether TLS to ZooKeeper uses OCSP. Accepted, no effect in Tally: it has no ZooKeeper "
     "(its metadata lives in a raft quorum).",
     0, NULL},
    {NULL, "zookeeper.ssl.protocol", CT_STRING, "TLSv1.2", 0, 0, NULL, false,
     "The protocol of TLS to ZooKeeper. Accepted, no effect in Tally: it has no ZooKeeper "
     "(its metadata lives in a raft quorum).",
     0, NULL},
    {NULL, "zookeeper.ssl.truststore.location", CT_STRING, NULL, 0, 0, NULL, false,
     "The trust store of TLS to ZooKeeper. Accepted, no effect in Tally: it has no ZooKeeper "
     "(its metadata lives in a raft quorum).",
     0, NULL},
    {NULL, "zookeeper.ssl.truststore.password", CT_PASSWORD, NULL, 0, 0, NULL, false,
     "The trust store password of TLS to ZooKeeper. Accepted, no effect in Tally: it has no "
     "ZooKeeper (its metadata lives in a raft quorum).",
     0, NULL},
    {NULL, "zookeeper.ssl.truststore.type", CT_STRING, NULL, 0, 0, NULL, false,
     "The trust store type of TLS to ZooKeeper. Accepted, no effect in Tally: it has no "
     "ZooKeeper (its metadata lives in a raft quorum).",
     0, NULL},
};

const struct config_def *config_defs(size_t *n)
{
    *n = sizeof defs / sizeof defs[0];
    return defs;
}
