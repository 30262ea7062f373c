/* SPDX-License-Identifier: Apache-2.0 */
/* group internals shared by the coordinator's files: the coordinator, its shards (one per
 * __consumer_offsets partition led here), the groups and offsets of a shard, appends that
 * answer once durable, and the coordinator record formats. */
#ifndef TALLY_GROUP_INT_H
#define TALLY_GROUP_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/purgatory.h"
#include "base/slog.h"
#include "base/tclock.h"
#include "group.h"
#include "group_sm.h"
#include "replica/coord_log.h"
#include "replica/replica.h"

struct arena;
struct net_request;

/* ---- a small chained hash table with intrusive nodes, keyed by bytes ------------------- */

struct ghash_node {
    struct ghash_node *next;
    uint64_t hash;
    const void *key; /* the owner's bytes, stable while the node is in the table */
    size_t key_len;
};

struct ghash {
    struct ghash_node **buckets;
    size_t n_buckets, n;
};

uint64_t ghash_bytes(const void *key, size_t len);
struct ghash_node *ghash_find(const struct ghash *h, const void *key, size_t len);
/* Inserts `n` (key, key_len set by the caller); the key must not be present. 0 or ERR_NOMEM. */
int ghash_insert(struct ghash *h, struct ghash_node *n);
void ghash_remove(struct ghash *h, struct ghash_node *n);
void ghash_free(struct ghash *h); /* the table only; nodes are the owner's */
/* Iteration: every node, in no order; the callback may remove the node it is given. */
void ghash_each(struct ghash *h, void (*fn)(void *arg, struct ghash_node *n), void *arg);

/* ---- offsets and groups ----------------------------------------------------------------- */

/* A committed offset of one group for one topic-partition. The key is "topic\0" followed by
 * the partition's 4 big-endian bytes. */
struct coord_offset {
    struct ghash_node node;
    char *key; /* malloc()ed: topic, NUL, partition */
    size_t key_len;
    const char *topic; /* = key */
    int32_t partition;
    int64_t offset;
    int32_t leader_epoch;
    char *metadata; /* never NULL */
    int64_t commit_ts;
};

struct shard;

/* One group as the coordinator keeps it: its membership state machine (always present: a
 * group known only from committed offsets is an Empty one) and its offsets. */
struct coord_group {
    struct ghash_node node; /* key: id */
    char *id;
    size_t id_len;
    struct shard *sh;
    struct group_sm *sm;
    struct ghash offsets; /* struct coord_offset */
    uint64_t incarnation; /* new for every coord_group: appends find "their" group again */
    bool metadata_in_log; /* a GroupMetadataValue was written: deletion writes a tombstone */
};

/* A transactional offset waiting for its producer's marker. */
struct coord_pending {
    struct coord_pending *next;
    int64_t producer_id;
    char *group_id;
    char *topic;
    int32_t partition;
    int64_t offset;
    int32_t leader_epoch;
    char *metadata;
    int64_t commit_ts;
};

/* ---- appends ---------------------------------------------------------------------------- */

/* One append to a shard's partition that answers once durable (coord_log_append below it).
 * `done` runs exactly once: err 0 when the high watermark covers the batch, else Kafka's error
 * as the append failed (see coord_append_error; unload: NOT_COORDINATOR; stop:
 * COORDINATOR_NOT_AVAILABLE). `unloaded` is true when the shard is going away (the group state
 * is being freed: the callback must not touch it). The struct is the caller's until done runs. */
struct coord_append {
    struct coord_log_append la;
    struct shard *sh;
    bool unloaded;
    void (*done)(struct coord_append *ap, int16_t err);
    void *arg;
};

/* One record to append: key and value bytes (value NULL = tombstone). */
struct coord_record {
    uint8_t *key;
    int32_t key_len;
    uint8_t *value;
    int32_t value_len;
};

/* Builds one batch of the records (transactional when producer_id >= 0), appends it to the
 * shard's partition and waits for the high watermark to cover it. The records' bytes are
 * copied into the batch. `done` may run before this returns (append error). */
void coord_append_start(struct shard *sh, const struct coord_record *recs, int32_t n,
                        int64_t producer_id, int16_t producer_epoch, struct coord_append *ap,
                        void (*done)(struct coord_append *ap, int16_t err), void *arg);

/* Kafka's mapping of an append error for the coordinator's answers: NOT_ENOUGH_REPLICAS*,
 * UNKNOWN_TOPIC_OR_PARTITION → COORDINATOR_NOT_AVAILABLE; NOT_LEADER_OR_FOLLOWER,
 * KAFKA_STORAGE_ERROR (ERR_IO) → NOT_COORDINATOR; too large → INVALID_COMMIT_OFFSET_SIZE for
 * offsets (`offsets` true), UNKNOWN_SERVER_ERROR for group metadata; not durable within
 * offsets.commit.timeout.ms → REQUEST_TIMED_OUT for offsets, REBALANCE_IN_PROGRESS for group
 * metadata; other errors as they are for offsets, UNKNOWN_SERVER_ERROR for group metadata. */
int16_t coord_append_error(int rc, bool offsets);

/* ---- shards ----------------------------------------------------------------------------- */

struct shard {
    struct group_coord *gc;
    int32_t partition;
    int32_t epoch;
    bool loading;
    struct ghash groups;           /* struct coord_group */
    struct coord_pending *pending; /* transactional offsets waiting for markers */
};

struct group_coord {
    uv_loop_t *loop;
    struct tclock *clock;
    struct replica_mgr *replicas;
    struct meta *meta;
    const struct props *config;
    int32_t node_id;
    group_ensure_topic_fn ensure_topic;
    void *ensure_arg;

    /* Configuration (static, read at creation). */
    int32_t n_partitions_cfg;   /* offsets.topic.num.partitions */
    int64_t retention_ms;       /* offsets.retention.minutes × 60000 */
    int64_t retention_check_ms; /* offsets.retention.check.interval.ms */
    int32_t metadata_max_bytes; /* offset.metadata.max.bytes */
    int64_t commit_timeout_ms;  /* offsets.commit.timeout.ms */
    struct group_sm_config sm_cfg;

    struct coord_log *log; /* the shards' partitions: replay and appends */
    struct shard **shards; /* indexed by partition, n_shards entries; NULL = not led here */
    int32_t n_shards;
    struct tclock_timer expiry_timer;
    int64_t ensure_asked_ms[2]; /* per key type: last ensure_topic call (monotonic), -1 = never */
    uint64_t next_incarnation;
    bool stopping;
    void (*stop_cb)(void *arg);
    void *stop_arg;
    struct slog_limit replay_warn;
};

/* FindCoordinator's key types (find_coordinator.c holds one row per coordinator kind: its
 * topic, how it is created, how a key maps to a partition). */
#define COORD_KEY_TYPE_GROUP 0
#define COORD_KEY_TYPE_TRANSACTION 1

/* Asks ensure_topic for the topic of coordinator kind `key_type` (its partition count,
 * replication factor and configs from the broker config), at most once a second. */
void coord_ask_for_topic(struct group_coord *gc, int8_t key_type);

/* The partition count groups hash over: the topic's when it exists, else the config's. */
int32_t coord_n_partitions(struct group_coord *gc);

/* Finds the shard serving `group_id`: 0 and *out, COORDINATOR_NOT_AVAILABLE when the topic
 * does not exist (creation is asked for) or the partition has no leader, NOT_COORDINATOR when
 * another broker leads it, COORDINATOR_LOAD_IN_PROGRESS while it loads. */
int16_t coord_shard_for(struct group_coord *gc, const char *group_id, struct shard **out);

/* The group, or NULL. */
struct coord_group *coord_group_find(struct shard *sh, const char *group_id);
/* The group, created (Empty) when absent; NULL on out of memory. */
struct coord_group *coord_group_get(struct shard *sh, const char *group_id);
/* Finds the group again for an append that finished: NULL if it went away or was replaced. */
struct coord_group *coord_group_again(struct shard *sh, const char *group_id, uint64_t incarnation);
/* Removes the group from its shard and frees it (its sm fails waiters with `err`). */
void coord_group_free(struct coord_group *g, int16_t err);

/* Offsets of a group. */
struct coord_offset *coord_offset_find(struct coord_group *g, const char *topic, int32_t part);
/* Sets (creates) the committed offset. 0 or ERR_NOMEM. */
int coord_offset_set(struct coord_group *g, const char *topic, int32_t partition, int64_t offset,
                     int32_t leader_epoch, const char *metadata, int64_t commit_ts);
void coord_offset_delete(struct coord_group *g, struct coord_offset *o);

/* Pending transactional offsets: add one (copied), or apply/drop a producer's. */
int coord_pending_add(struct shard *sh, int64_t producer_id, const char *group_id,
                      const char *topic, int32_t partition, int64_t offset, int32_t leader_epoch,
                      const char *metadata, int64_t commit_ts);
void coord_pending_complete(struct shard *sh, int64_t producer_id, bool commit);
void coord_pending_drop_group(struct shard *sh, const char *group_id);

/* The owner callbacks every group_sm gets (persist: GroupMetadataValue append). */
extern const struct group_sm_owner coord_sm_owner_template;

/* load.c: one record of the shard's partition met during its replay (coord_log). */
void coord_replay(void *shard, const struct coord_log_record *r);

/* Applies one record of the partition (replay): a key/value pair, value NULL = tombstone;
 * producer_id >= 0 for a record of a transactional batch (held until its marker). */
void coord_apply_record(struct shard *sh, const uint8_t *key, int32_t key_len, const uint8_t *value,
                        int32_t value_len, int64_t producer_id, int64_t timestamp);

/* ---- request helpers -------------------------------------------------------------------- */

/* The client's host as Kafka shows it in DescribeGroups ("/" + the peer's address). */
const char *coord_client_host(struct arena *ar, const char *peer);
/* A copy of len bytes in the arena (NULL only when out of memory and len > 0). */
uint8_t *coord_dup_bytes(struct arena *ar, const uint8_t *p, int32_t len);
/* Whether the image knows topic-partition. */
bool coord_partition_known(struct group_coord *gc, const char *topic, int32_t partition);
/* Finds the shard and the group of a group request: 0 with *sh (and *g, NULL when the group
 * does not exist; created when `create`), or the coordinator error. */
int16_t coord_find_group(struct group_coord *gc, const char *group_id, bool create,
                         struct shard **sh, struct coord_group **g);
/* Closes the request's connection after an allocation failed. */
void coord_nomem(struct net_request *req, const char *api);
/* Defines `static int32_t name(struct arena *ar, const RQ *rq, RS *rs)`, for a request RQ and
 * its response RS whose Topics each hold a Name and Partitions keyed by PartitionIndex (the
 * response's with an ErrorCode): sizes rs->Topics like rq->Topics, each response partition
 * with the request's index and ErrorCode 0, and returns the number of partitions, or -1 when
 * out of memory. One typed copy per handler: the message structs differ by type only. */
#define COORD_MIRROR_TOPICS_FN(name, RQ, RS)                                                       \
    static int32_t name(struct arena *ar, const RQ *rq, RS *rs)                                    \
    {                                                                                              \
        int32_t n = 0;                                                                             \
        rs->Topics.n = rq->Topics.n > 0 ? rq->Topics.n : 0;                                        \
        rs->Topics.v = arena_alloc(ar, ((size_t)rs->Topics.n + 1) * sizeof *rs->Topics.v);         \
        if (rs->Topics.v == NULL)                                                                  \
            return -1;                                                                             \
        for (int32_t i = 0; i < rs->Topics.n; i++) {                                               \
            int32_t np = rq->Topics.v[i].Partitions.n > 0 ? rq->Topics.v[i].Partitions.n : 0;      \
            rs->Topics.v[i].Name = rq->Topics.v[i].Name;                                           \
            rs->Topics.v[i].Partitions.n = np;                                                     \
            rs->Topics.v[i].Partitions.v =                                                         \
                arena_alloc(ar, ((size_t)np + 1) * sizeof *rs->Topics.v[i].Partitions.v);          \
            if (rs->Topics.v[i].Partitions.v == NULL)                                              \
                return -1;                                                                         \
            for (int32_t j = 0; j < np; j++) {                                                     \
                rs->Topics.v[i].Partitions.v[j].PartitionIndex =                                   \
                    rq->Topics.v[i].Partitions.v[j].PartitionIndex;                                \
                rs->Topics.v[i].Partitions.v[j].ErrorCode = 0;                                     \
            }                                                                                      \
            n += np;                                                                               \
        }                                                                                          \
        return n;                                                                                  \
    }

/* ---- record formats (records.c) -------------------------------------------------------- */

/* Keys: OffsetCommitKey (versions 0, 1: group, topic, partition), GroupMetadataKey (version
 * 2: group). */
enum coord_key_type { COORD_KEY_OFFSET = 1, COORD_KEY_GROUP = 2, COORD_KEY_OTHER = 3 };
struct coord_key {
    enum coord_key_type type;
    const char *group, *topic; /* in the arena */
    int32_t partition;
};
int coord_key_decode(const uint8_t *buf, int32_t len, struct coord_key *k, struct arena *ar);
/* Encodings into malloc()ed buffers (caller frees *out). 0 or ERR_NOMEM. */
int coord_offset_key_encode(const char *group, const char *topic, int32_t partition, uint8_t **out,
                            int32_t *len);
int coord_group_key_encode(const char *group, uint8_t **out, int32_t *len);

/* OffsetCommitValue: written as version 3 (offset, leader epoch, metadata, commit timestamp);
 * versions 0–4 are read. */
struct coord_offset_value {
    int64_t offset;
    int32_t leader_epoch;
    const char *metadata;
    int64_t commit_ts;
};
int coord_offset_value_encode(const struct coord_offset_value *v, uint8_t **out, int32_t *len);
int coord_offset_value_decode(const uint8_t *buf, int32_t len, struct coord_offset_value *v,
                              struct arena *ar);

/* GroupMetadataValue: written as version 3; versions 0–4 are read into a snapshot whose
 * strings and member array live in the arena. */
int coord_group_value_encode(const struct group_sm *sm, uint8_t **out, int32_t *len);
int coord_group_value_decode(const uint8_t *buf, int32_t len, struct group_sm_snapshot *s,
                             struct arena *ar);

#endif
