/* SPDX-License-Identifier: Apache-2.0 */
/* replica: the partitions this broker hosts — each one's log, high watermark, last stable
 * offset and the marks deferred requests wait on — kept in step with the metadata image (opened
 * when assigned here, closed and deleted when their topic goes), plus the housekeeping around them:
 * flush policy (fsync on the thread pool), retention, checkpoints and the clean-shutdown marker.
 * Each hosted partition has a role from the image's partition records — leader or follower,
 * at a leader epoch, with the ISR and (on a leader) the followers' positions — and replica/
 * owns what a reader may see (log end, high watermark, last stable offset). Leadership
 * changes are published to subscribers (coordinators) in bounded slices off the metadata
 * apply. No fetcher yet: followers are appended to by the caller (the cluster issue). */
#ifndef TALLY_REPLICA_H
#define TALLY_REPLICA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "base/purgatory.h"

struct meta;
struct tclock;
struct props;
struct record_batch;
struct pstate;
struct pstate_batch;
struct purgatory_watch;

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

/* The manager subscribes itself to the metadata (meta_subscribe) at start and leaves at stop:
 * every batch applied brings the hosted partitions in line (new partitions, roles and
 * epochs, deleted topics, changed configs). */

/* Flushes and closes every log, writes checkpoints and the clean-shutdown marker, then
 * frees; `cb` runs when done (pending thread-pool flushes are waited for). */
void replica_mgr_stop(struct replica_mgr *rm, void (*cb)(void *arg), void *arg);

/* Look-ups; NULL when this broker does not host the partition (in any role). */
struct partition *replica_partition(struct replica_mgr *rm, const char *topic, int32_t index);
struct partition *replica_partition_by_id(struct replica_mgr *rm, const uint8_t topic_id[16],
                                          int32_t index);
/* Number of hosted partitions. */
size_t replica_count(const struct replica_mgr *rm);

/* The partition a client request (Produce, Fetch, ListOffsets, DeleteRecords,
 * DescribeProducers) must find led here. Returns 0 and *out when this broker leads it;
 * NOT_LEADER_OR_FOLLOWER when the image knows the partition but this broker does not lead
 * it (a follower here, or not hosted here: the client refreshes its metadata, as with
 * Kafka); UNKNOWN_TOPIC_OR_PARTITION (by name) or UNKNOWN_TOPIC_ID (by id) when the image
 * does not know it. */
int replica_leader_partition(struct replica_mgr *rm, const char *topic, int32_t index,
                             struct partition **out);
int replica_leader_partition_by_id(struct replica_mgr *rm, const uint8_t topic_id[16],
                                   int32_t index, struct partition **out);

/* ---- leadership events --------------------------------------------------------------------- */

/* A partition's role here: what leadership events announce. */
enum replica_role {
    REPLICA_LEADER = 1,   /* this broker leads the partition */
    REPLICA_FOLLOWER = 2, /* this broker holds a replica that follows the leader */
    REPLICA_GONE = 3      /* this broker stopped hosting it (moved away or topic deleted) */
};

/* "This broker became leader / follower of, or stopped hosting, topic-partition at epoch".
 * The topic string is valid during the callback only. */
struct replica_event {
    const char *topic;
    const uint8_t *topic_id; /* 16 bytes */
    int32_t partition;
    enum replica_role role;
    int32_t leader_epoch;
};
typedef void (*replica_event_cb)(void *arg, const struct replica_event *ev);

/* Adds a subscriber: from now on every leadership change is delivered to it, in the order
 * they happened, after the metadata apply that caused them has returned and in slices of at
 * most REPLICA_EVENTS_PER_TURN events (over all subscribers) per event-loop turn — so a
 * subscriber's reaction (loading a coordinator) never runs inside the apply, and ten
 * thousand partitions changing at once do not hold the loop. A new subscriber is not told
 * about the roles already in place: it reads them with replica_partition / partition_role.
 * Returns 0, ERR_NOMEM, or ERR_EXISTS for a (cb, arg) pair already subscribed. */
#define REPLICA_EVENTS_PER_TURN 64
int replica_subscribe(struct replica_mgr *rm, replica_event_cb cb, void *arg);
/* Removes the subscriber with this (cb, arg): no event reaches it after this returns. */
void replica_unsubscribe(struct replica_mgr *rm, replica_event_cb cb, void *arg);
/* Events queued and not yet delivered, and topics whose new partitions wait to be opened
 * (partitions newly assigned by a metadata change open after the apply, a bounded number
 * per loop turn; until then requests for them get NOT_LEADER_OR_FOLLOWER and retry). For
 * tests and diagnostics. */
size_t replica_events_pending(const struct replica_mgr *rm);
size_t replica_opens_pending(const struct replica_mgr *rm);

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
/* Role (REPLICA_LEADER or REPLICA_FOLLOWER), leader id (-1 = none) and partition epoch, as of
 * the last metadata applied. */
enum replica_role partition_role(const struct partition *p);
int32_t partition_leader_id(const struct partition *p);
int32_t partition_partition_epoch(const struct partition *p);
/* True if `node` is in the partition's replica set / its ISR. */
bool partition_is_replica(const struct partition *p, int32_t node);
bool partition_in_isr(const struct partition *p, int32_t node);
/* The size of the partition's ISR (min.insync.replicas is checked against it). */
int32_t partition_isr_size(const struct partition *p);
/* The log end offset the leader last learned for follower `node` (from its fetch offset), or
 * -1 if none yet or `node` is not a follower of this partition. */
int64_t partition_follower_offset(const struct partition *p, int32_t node);
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
    bool down_conversion;     /* message.downconversion.enable: Fetch v0-3 may be served */
    int compression;          /* compression.type: RECORD_CODEC_*, or -1 for "producer" */
    int64_t min_insync;       /* min.insync.replicas: acks=all needs an ISR this large */
    bool compact;             /* cleanup.policy contains compact: records need a key */
};
const struct partition_settings *partition_settings(const struct partition *p);

/* ---- reading ------------------------------------------------------------------------------ */

/* Who reads, which fixes how far a read may go: a replica (follower fetch) up to the log end;
 * a consumer up to the high watermark (read_uncommitted) or the last stable offset
 * (read_committed). The values of the two consumer levels are Fetch's IsolationLevel. */
enum partition_reader {
    PARTITION_READ_UNCOMMITTED = 0,
    PARTITION_READ_COMMITTED = 1,
    PARTITION_READ_REPLICA = 2
};

/* A byte range of one segment file holding whole batches, for sendfile() or the batch
 * reader below. Holds the segment (retention cannot close its descriptor) until
 * partition_slice_release; len 0 = nothing to read. */
struct partition_slice {
    int fd;
    int64_t pos;
    size_t len;
    void *ref;           /* opaque */
    const void *io;      /* opaque */
    int64_t next_offset; /* the offset after the slice's last batch */
    /* len 0 because the batch there waits for the background check of the partition's files
     * (log_check_*): not the end of what there is to read; read again later. */
    bool pending;
};

/* Reads from offset `from`: the batches starting with the one that holds `from`, at most
 * `max_bytes` (but the first batch whole, KIP-74), never past the reader's bound and never
 * across a segment (read again from the next offset). A damaged batch the background check
 * quarantined is never served: its offsets are skipped as a compaction gap is. Returns 0
 * (len 0 when `from` is at or past the bound, or `pending` when the batch there is not
 * checked yet), OFFSET_OUT_OF_RANGE when `from` is below the log start or past the log end,
 * or the log's error (ERR_IO). The slice must be released. */
int partition_read(struct partition *p, int64_t from, size_t max_bytes,
                   enum partition_reader reader, struct partition_slice *out);
void partition_slice_release(struct partition *p, struct partition_slice *s);
/* The reader's bound: log end, high watermark or last stable offset. */
int64_t partition_read_bound(const struct partition *p, enum partition_reader reader);

/* Reads the first batch of a slice whole into a malloc()ed buffer (*buf, *len; the caller
 * frees), through the log's batch iterator. Touches only the slice: may run on the thread
 * pool while the slice is held. `max_batch` bounds the batch. Returns 0, ERR_IO, ERR_NOMEM,
 * ERR_NOTFOUND (empty slice), ERR_CORRUPT_MESSAGE or ERR_MESSAGE_TOO_LARGE. */
int partition_slice_first_batch(const struct partition_slice *s, size_t max_batch, uint8_t **buf,
                                size_t *len);

/* ListOffsets' look-ups (see log_offset_for_time / log_max_timestamp). */
int partition_offset_for_time(struct partition *p, int64_t ts, int64_t *out_offset,
                              int64_t *out_ts);
void partition_max_timestamp(const struct partition *p, int64_t *offset, int64_t *ts);

/* DeleteRecords: moves the log start offset forward to `offset` (-1 = the high watermark),
 * deleting whole segments below it; *low_watermark receives the log start offset after.
 * Returns 0, NOT_LEADER_OR_FOLLOWER on a follower, OFFSET_OUT_OF_RANGE when `offset` is
 * negative (other than -1) or past the high watermark, or ERR_IO. */
int partition_delete_records(struct partition *p, int64_t offset, int64_t *low_watermark);

/* read_committed's aborted transactions overlapping [from, upto) (see log_txn_collect):
 * *out malloc()ed, the caller frees. Returns 0, ERR_IO or ERR_NOMEM. */
struct partition_aborted_txn {
    int64_t producer_id;
    int64_t first_offset;
};
int partition_aborted_txns(struct partition *p, int64_t from, int64_t upto,
                           struct partition_aborted_txn **out, size_t *n);

/* ---- writing ------------------------------------------------------------------------------ */

/* WriteTxnMarkers' append: a COMMIT or ABORT control batch for (producer_id, producer_epoch)
 * from the coordinator at `coordinator_epoch`, through partition_append (so the high
 * watermark, marks and flush policy move as for any batch). It closes the producer's ongoing
 * transaction (the last stable offset moves) and, for an ABORT, adds the transaction to the
 * segment's .txnindex. *offset receives the marker's offset. Returns 0,
 * NOT_LEADER_OR_FOLLOWER, INVALID_PRODUCER_EPOCH (an older producer epoch),
 * TRANSACTION_COORDINATOR_FENCED (an older coordinator epoch than the producer's last
 * marker), or the log's error. A producer with no ongoing transaction here still gets its
 * marker (Kafka does: an idempotent retry). */
int partition_write_marker(struct partition *p, int64_t producer_id, int16_t producer_epoch,
                           int32_t coordinator_epoch, bool commit, int64_t *offset);

/* Self-healing of hanging transactions (KIP-664's failure, without an operator): on a leader,
 * aborts every ongoing transaction whose producer last wrote here more than `older_than_ms`
 * ago (now_ms: wall clock; counted from the partition's open at the earliest, since replayed
 * producers only carry their batches' timestamps) by writing the ABORT marker itself with the last
 * coordinator epoch it saw, one WARN line each naming producer, partition and first offset. The
 * caller passes transaction.max.timeout.ms plus a margin: no coordinator keeps a transaction open
 * longer (it aborts it at its timeout, at most that), so a transaction still open here is one whose
 * coordinator lost it. Returns how many were aborted. */
size_t partition_abort_hanging(struct partition *p, int64_t now_ms, int64_t older_than_ms);

/* KIP-890 verification state of a producer on this partition (pstate_txn_verified,
 * pstate_verify_begin, pstate_verify_done). */
bool partition_txn_verified(const struct partition *p, int64_t producer_id, int16_t epoch);
uint32_t partition_verify_begin(struct partition *p, int64_t producer_id, int16_t epoch);
bool partition_verify_done(struct partition *p, int64_t producer_id, int16_t epoch, uint32_t token);
/* pstate_verify_park / pstate_verify_parked on the partition's producer state. */
bool partition_verify_park(struct partition *p, int64_t producer_id, int delta);
uint32_t partition_verify_parked(const struct partition *p, int64_t producer_id);

/* Appends one validated batch (see log_append). A control batch (a COMMIT/ABORT marker:
 * partition_write_marker builds them; clients may not send them) is checked with
 * pstate_check_marker and closes the producer's transaction. A batch with a producer id is first
 * checked against the producer state: an exact retry of a recent batch appends nothing and returns
 * ERR_DUPLICATE_SEQUENCE_NUMBER with *base_offset set to the original batch's (the caller
 * answers success); a fenced or out-of-order one returns that error. Otherwise applies
 * LogAppendTime when configured (*append_time receives it, else -1), advances the high
 * watermark (min log end over the ISR: on a single replica, the log end), records the batch in the
 * producer state, schedules a flush when flush.messages/flush.ms ask for one, and moves the
 * partition's marks (waking their watches). Returns 0, one of the producer-state errors, or
 * the log's error. */
int partition_append(struct partition *p, uint8_t *batch, size_t len,
                     const struct record_batch *hdr, int64_t *base_offset, int64_t *append_time);

/* A follower's append of batches fetched from the leader (`buf`, whole batches, as the
 * leader's log holds them): each batch keeps the leader's base offset and partition leader
 * epoch (the first must start at this log's end and each one follow the previous; the epoch
 * cache learns new epochs), and is recorded in the producer state. Then the high watermark
 * becomes min(leader_hw, log end). Returns 0, NOT_LEADER_OR_FOLLOWER on a leader,
 * OFFSET_OUT_OF_RANGE if a batch does not start at the log end, CORRUPT_MESSAGE for bytes that
 * are not whole batches, or the log's error. Batches before a failing one stay appended. */
int partition_append_as_follower(struct partition *p, uint8_t *buf, size_t len, int64_t leader_hw);

/* On a leader: follower `replica_id` fetched from `fetch_offset`, so its log end is that
 * offset (Kafka's follower-position rule). Moves the high watermark to the minimum log end
 * over the ISR (never backwards) and moves the marks (waking their watches) if it moved. Returns 0,
 * NOT_LEADER_OR_FOLLOWER if this broker does not lead the partition or `replica_id` is not a
 * follower in its replica set. */
int partition_follower_fetched(struct partition *p, int32_t replica_id, int64_t fetch_offset);

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

/* The mark that bounds what `reader` may read (what a delayed fetch of that reader watches):
 * log end for replicas, high watermark, last stable offset for read_committed. */
enum partition_mark partition_reader_mark(enum partition_reader reader);

/* Arms `w` (see purgatory_watch_arm) to fire once the partition's `mark` reaches `offset`
 * (value >= offset: wait for the high watermark to cover offset 41 with 42), or when the
 * partition goes offline (w->reached false). Returns true, without arming, when the mark is
 * already there or the partition is offline: the caller then acts at once. Waiting on
 * PARTITION_DURABLE starts a thread-pool flush if none runs. Marks move, and watches fire,
 * from within partition_append (and the other calls that move them) once the partition's
 * state is updated; a callback may append to the partition again. */
bool partition_watch(struct partition *p, enum partition_mark mark, int64_t offset,
                     struct purgatory_watch *w);

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
