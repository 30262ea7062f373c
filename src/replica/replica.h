/* SPDX-License-Identifier: Apache-2.0 */
/* replica: the partitions this broker hosts — each one's log, high watermark, last stable
 * offset and the marks deferred requests wait on — kept in step with the metadata image (opened
 * when assigned here, closed and deleted when their topic goes), plus the housekeeping around them:
 * flush policy (fsync on the thread pool), retention, checkpoints and the clean-shutdown marker.
 * Leader only for now; followers, ISR and replication come with the cluster issue. */
#ifndef TALLY_REPLICA_H
#define TALLY_REPLICA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

struct meta;
struct tclock;
struct props;
struct log;
struct log_slice;
struct record_batch;
struct pstate;
struct pstate_batch;
struct purgatory_watch;
struct meta_record;

struct replica_mgr;
struct partition;
struct tclock;

struct replica_options {
    uv_loop_t *loop;
    struct tclock *clock; /* time service (housekeeping, segment.ms, expiry); borrowed */
    struct meta *meta;
    const struct props *config; /* static broker config, borrowed */
    int32_t node_id;
    const char *log_dir;
};

/* Opens every partition the image assigns to this node (recovering unflushed tails when
 * the last stop was not clean), deletes directories of topics that no longer exist, and
 * starts housekeeping. Call once metadata is ready. Returns 0 and *out, or an error. */
int replica_mgr_start(const struct replica_options *opts, struct replica_mgr **out);

/* Brings the hosted partitions in line with a batch of metadata records just applied (new
 * partitions, deleted topics, changed configs). Has the shape of meta_apply_cb; `arg` is
 * the replica_mgr. */
void replica_mgr_on_apply(void *arg, const struct meta_record *recs, size_t n);

/* Flushes and closes every log, writes checkpoints and the clean-shutdown marker, then
 * frees; `cb` runs when done (pending thread-pool flushes are waited for). */
void replica_mgr_stop(struct replica_mgr *rm, void (*cb)(void *arg), void *arg);

/* Look-ups; NULL when this broker does not host the partition. */
struct partition *replica_partition(struct replica_mgr *rm, const char *topic, int32_t index);
struct partition *replica_partition_by_id(struct replica_mgr *rm, const uint8_t topic_id[16],
                                          int32_t index);
/* Number of hosted partitions. */
size_t replica_count(const struct replica_mgr *rm);

/* Makes the log start offsets durable (DeleteRecords answers only after): writes the
 * log-start-offset-checkpoint with every hosted partition's log start offset as of this
 * call, fsynced, on the thread pool, then calls w->cb on the loop with 0 or ERR_IO (or
 * ERR_NOMEM). Writes are serialized; callers that arrive during one share the next. `w` is
 * the caller's and must live until its callback runs; the callback may run before this
 * returns (during shutdown, or if the pool refuses work). */
struct replica_start_sync {
    struct replica_start_sync *next;
    void (*cb)(struct replica_start_sync *w, int rc);
};
void replica_sync_log_starts(struct replica_mgr *rm, struct replica_start_sync *w);

/* ---- one partition ---------------------------------------------------------------------- */

const char *partition_topic(const struct partition *p);
int32_t partition_index(const struct partition *p);
const uint8_t *partition_topic_id(const struct partition *p);
int32_t partition_leader_epoch(const struct partition *p);
int64_t partition_high_watermark(const struct partition *p);
int64_t partition_last_stable_offset(const struct partition *p);
int64_t partition_log_start_offset(const struct partition *p);
int64_t partition_log_end_offset(const struct partition *p);
struct log *partition_log(struct partition *p);
/* The partition's producer state (idempotent / transactional producers). */
const struct pstate *partition_pstate(const struct partition *p);

/* A partition stays allocated (its log open) while held, even if its topic is deleted
 * meanwhile: a Fetch holds the partitions whose file ranges it is sending. */
void partition_hold(struct partition *p);
void partition_release(struct partition *p);
/* False once the partition's topic was deleted or the partition moved away. */
bool partition_online(const struct partition *p);

/* Topic settings the produce path checks, refreshed when configs change. */
struct partition_settings {
    int64_t max_message_bytes;
    bool log_append_time;     /* message.timestamp.type=LogAppendTime */
    int64_t ts_before_max_ms; /* message.timestamp.before.max.ms (and difference.max.ms) */
    int64_t ts_after_max_ms;  /* message.timestamp.after.max.ms (and difference.max.ms) */
};
const struct partition_settings *partition_settings(const struct partition *p);

/* Appends one validated batch (see log_append). A batch with a producer id is first checked
 * against the producer state: an exact retry of a recent batch appends nothing and returns
 * ERR_DUPLICATE_SEQUENCE_NUMBER with *base_offset set to the original batch's (the caller
 * answers success); a fenced or out-of-order one returns that error. Otherwise applies
 * LogAppendTime when configured (*append_time receives it, else -1), advances the high
 * watermark (a single replica's ISR is itself), records the batch in the producer state,
 * schedules a flush when flush.messages/flush.ms ask for one, and moves the partition's
 * marks (waking their watches). Returns 0, one of the producer-state errors, or the log's error. */
int partition_append(struct partition *p, uint8_t *batch, size_t len,
                     const struct record_batch *hdr, int64_t *base_offset, int64_t *append_time);

/* The offsets a deferred request can wait for (base/purgatory.h): each is the first offset
 * not yet there (exclusive), and moves up (a follower's truncation may move the log end
 * down). */
enum partition_mark {
    PARTITION_LOG_END,        /* the next offset to be appended */
    PARTITION_HIGH_WATERMARK, /* the first offset not known to be committed */
    PARTITION_LAST_STABLE,    /* the first offset not yet decided (read_committed's bound) */
    PARTITION_DURABLE,        /* the first offset not yet fsynced */
};

/* The partition's current value of `mark`. */
int64_t partition_mark(const struct partition *p, enum partition_mark mark);

/* Arms `w` (see purgatory_watch_arm) to fire once the partition's `mark` reaches `offset`
 * (value >= offset: wait for the high watermark to cover offset 41 with 42), or when the
 * partition goes offline (w->reached false). Returns true, without arming, when the mark is
 * already there or the partition is offline: the caller then acts at once. Waiting on
 * PARTITION_DURABLE starts a thread-pool flush if none runs. Marks move, and watches fire,
 * from within partition_append (and the other calls that move them) once the partition's
 * state is updated; a callback may append to the partition again. */
bool partition_watch(struct partition *p, enum partition_mark mark, int64_t offset,
                     struct purgatory_watch *w);

#endif
