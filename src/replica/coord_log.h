/* SPDX-License-Identifier: Apache-2.0 */
/* coord_log: a coordinator whose state is a partition of its topic (replica/coord_log.c). */
#ifndef TALLY_REPLICA_COORD_LOG_H
#define TALLY_REPLICA_COORD_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "base/purgatory.h"

struct meta;
struct tclock;
struct replica_mgr;

/* ---- coordinator logs: a coordinator whose state is a partition of its topic ------------ */

/* What the group coordinator (__consumer_offsets) and the transaction coordinator
 * (__transaction_state) share: a coordinator keeps one shard per partition of its topic that
 * this broker leads. A coord_log follows the leadership events of the topic: on becoming
 * leader at an epoch it asks the owner for a shard (ops->shard_new) and replays the
 * partition from its log start to its log end — each step reads at most 1 MiB of whole
 * batches on the thread pool, then hands every record to ops->replay on the loop, one step
 * per loop turn, so a big partition never holds the loop — then calls ops->loaded. When
 * leadership goes (or a new epoch comes: what another leader wrote meanwhile is in the log,
 * so the shard loads again), the shard's appends in flight complete with the unload's error
 * and then ops->shard_free drops the owner's state. Appends (coord_log_append) build one
 * batch, append it to the partition and answer once the high watermark covers it (acks=all),
 * as Kafka's coordinators wait in the delayed-produce purgatory. */

struct coord_log;

/* One record met during a replay. For a record of a data batch: key/value (value NULL = a
 * tombstone; key may be NULL), its offset and timestamp, and the batch's producer id/epoch
 * (-1 when none) and transactional bit. For a control batch (`control` true): key and value
 * NULL, `commit` and `coordinator_epoch` from the marker, and the batch's producer id/epoch. */
struct coord_log_record {
    int64_t offset;
    int64_t timestamp;
    const uint8_t *key;
    int32_t key_len;
    const uint8_t *value;
    int32_t value_len;
    int64_t producer_id;
    int16_t producer_epoch;
    bool transactional;
    bool control;
    bool commit;
    int32_t coordinator_epoch;
};

struct coord_log_ops {
    /* This broker now leads `partition` at `epoch` (the partition's leader epoch): returns the
     * owner's shard, or NULL (out of memory: the partition is not served until its next
     * leadership event). Replay follows at once. */
    void *(*shard_new)(void *arg, int32_t partition, int32_t epoch);
    /* One record of the replay, in log order. */
    void (*replay)(void *shard, const struct coord_log_record *r);
    /* The replay reached the log end: the shard serves from now on. */
    void (*loaded)(void *shard, int64_t records, int64_t elapsed_ms);
    /* Leadership went, a new epoch came, or the coord_log stops: the shard's appends have
     * completed already (with `err`, unloaded true); the owner frees its shard. */
    void (*shard_free)(void *shard, int16_t err);
};

struct coord_log_options {
    uv_loop_t *loop;
    struct tclock *clock;
    struct replica_mgr *replicas; /* borrowed; must outlive the coord_log */
    struct meta *meta;            /* borrowed: the topic's partitions at creation */
    const char *topic;            /* copied */
    const char *module;           /* for log lines ("group", "txn"); static */
    int64_t append_timeout_ms;    /* an append not covered this long: ERR_REQUEST_TIMED_OUT */
    const struct coord_log_ops *ops;
    void *arg;
};

/* Subscribes to leadership events and loads the partitions of the topic already led here.
 * Returns 0 and *out, or ERR_NOMEM. */
int coord_log_new(const struct coord_log_options *o, struct coord_log **out);

/* Unloads every shard (appends complete with COORDINATOR_NOT_AVAILABLE, shard_free), stops
 * following events; `cb(arg)` runs once no thread-pool read is out any more (possibly before
 * this returns), after which the coord_log is freed. Stop it before the replica manager. */
void coord_log_stop(struct coord_log *cl, void (*cb)(void *arg), void *arg);

/* Thread-pool reads the replays have made so far (each at most 1 MiB; diagnostics, tests). */
uint64_t coord_log_reads(const struct coord_log *cl);
/* Appends waiting in its purgatory for the high watermark (metrics). */
size_t coord_log_waiting(const struct coord_log *cl);

/* The owner's shard of `partition` (NULL when not led here), and whether it still loads. */
void *coord_log_shard(struct coord_log *cl, int32_t partition, bool *loading);

/* One key/value to append (value NULL = tombstone). Bytes are copied into the batch. */
struct coord_log_kv {
    const uint8_t *key;
    int32_t key_len;
    const uint8_t *value;
    int32_t value_len;
};

/* One append in flight, the caller's until `done` runs. Set nothing: coord_log_append fills
 * it. `done(ap, err)` runs exactly once: 0 when the high watermark covers the batch, else the
 * append's error (partition_append's, ERR_NOT_LEADER_OR_FOLLOWER when the shard is not led
 * here, ERR_REQUEST_TIMED_OUT, or the unload's error with `unloaded` true: the shard is being
 * freed and the callback must not touch it). */
struct coord_log_append {
    void (*done)(struct coord_log_append *ap, int16_t err);
    void *arg;
    bool unloaded;
    /* The coord_log's. */
    struct purgatory_op op;
    struct purgatory_watch watch;
    struct coord_log_append *prev, *next;
    struct coord_log *cl;
    int64_t need;
    int16_t err;
};

/* Appends records as one batch to the shard of `partition` — transactional of (producer_id,
 * producer_epoch) when producer_id >= 0, continuing that producer's sequence on the partition
 * — and waits for the high watermark to cover it. `done` may run before this returns (the
 * append failed). *base_offset (may be NULL) receives the batch's base offset, -1 on failure. */
void coord_log_append(struct coord_log *cl, int32_t partition, const struct coord_log_kv *recs,
                      int32_t n, int64_t producer_id, int16_t producer_epoch,
                      struct coord_log_append *ap,
                      void (*done)(struct coord_log_append *ap, int16_t err), void *arg,
                      int64_t *base_offset);

#endif
