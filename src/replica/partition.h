/* SPDX-License-Identifier: Apache-2.0 */
/* partition: one partition this broker hosts (replica/partition.c): its role, epochs and ISR
 * as the metadata and the replication state machine (partition_sm.h) say, its log end, high
 * watermark and last stable offset, the marks deferred requests wait on, reads bounded by
 * who reads, and the appends of the leader and of a follower. Partitions are found through
 * the manager (replica.h). */
#ifndef TALLY_REPLICA_PARTITION_H
#define TALLY_REPLICA_PARTITION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/purgatory.h"

struct pstate;
struct record_batch;
struct purgatory_watch;
struct partition;

/* A partition's role here: what leadership events announce. */
enum replica_role {
    REPLICA_LEADER = 1,   /* this broker leads the partition */
    REPLICA_FOLLOWER = 2, /* this broker holds a replica that follows the leader */
    REPLICA_GONE = 3      /* this broker stopped hosting it (moved away or topic deleted) */
};

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
/* The bytes of the partition's segment files (the .log files, as Kafka's log size counts). */
int64_t partition_size_bytes(const struct partition *p);
/* Its segments (log_segment_count). */
size_t partition_segment_count(const struct partition *p);
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
    /* partition_read_nowait: len 0 because a page the read needs is not in the page cache;
     * read [warm_pos, warm_pos + warm_len) of warm_fd off the event loop (the slice keeps it
     * open), release the slice and read again (log_read_nowait). */
    bool cold;
    int warm_fd;
    int64_t warm_pos;
    size_t warm_len;
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
/* As partition_read, for the event loop: never waits for the disk (log_read_nowait); a read
 * that would is answered with an empty slice marked `cold`. */
int partition_read_nowait(struct partition *p, int64_t from, size_t max_bytes,
                          enum partition_reader reader, struct partition_slice *out);
/* The reader's bound: log end, high watermark or last stable offset. */
int64_t partition_read_bound(const struct partition *p, enum partition_reader reader);

/* Reads the first batch of a slice whole into a malloc()ed buffer (*buf, *len; the caller
 * frees), through the log's batch iterator. Touches only the slice: may run on the thread
 * pool while the slice is held. `max_batch` bounds the batch. Returns 0, ERR_IO, ERR_NOMEM,
 * ERR_NOTFOUND (empty slice), ERR_CORRUPT_MESSAGE or ERR_MESSAGE_TOO_LARGE. */
int partition_slice_first_batch(const struct partition_slice *s, size_t max_batch, uint8_t **buf,
                                size_t *len);
/* Thread pool: brings a `cold` slice's range [warm_pos, warm_pos + warm_len) of warm_fd into the
 * page cache (sysio's warm: nothing is copied out). Touches only the slice, which the caller
 * holds. A failed read just stops: the next look on the loop finds the page still cold, or
 * the log reports the error. */
void partition_slice_warm(const struct partition_slice *s);

/* ListOffsets' look-ups (see log_offset_for_time / log_max_timestamp). */
int partition_offset_for_time(struct partition *p, int64_t ts, int64_t *out_offset,
                              int64_t *out_ts);
void partition_max_timestamp(const struct partition *p, int64_t *offset, int64_t *ts);
/* As partition_offset_for_time, for the event loop (log_offset_for_time_nowait): ERR_WOULD_BLOCK
 * with *cold a slice naming what to warm (release it with partition_slice_release) when a
 * look-up would wait for the disk. */
int partition_offset_for_time_nowait(struct partition *p, int64_t ts, int64_t *out_offset,
                                     int64_t *out_ts, struct partition_slice *cold);

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
/* For the event loop, before partition_aborted_txns: 0, or ERR_WOULD_BLOCK with the path of a
 * .txnindex to read off the loop first (log_txn_ready_nowait). */
int partition_aborted_txns_ready(struct partition *p, int64_t from, int64_t upto, char *cold_path,
                                 size_t cap);

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

/* Self-healing of hanging transactions (KIP-664's failure, without an operator), the partition's
 * half; the broker (broker/hanging.c) asks the transaction coordinators in between, since only
 * they know whether a transaction is still being decided.
 *
 * partition_idle_txns: on a leader, the ongoing transactions whose producer last wrote here more
 * than `older_than_ms` ago by the monotonic clock (a producer known only from the log or from
 * replication counts from the partition's open), in producer-id order: up to `max` go to
 * out[], the return value is how many there are (0 on a follower). A wall-clock step changes
 * nothing here. */
struct partition_idle_txn {
    int64_t producer_id;
    int16_t producer_epoch;
    int64_t first_offset; /* of its ongoing transaction */
    int64_t idle_ms;      /* since its last write here */
};
size_t partition_idle_txns(const struct partition *p, int64_t older_than_ms,
                           struct partition_idle_txn *out, size_t max);

/* Aborts producer `producer_id`'s ongoing transaction here by writing the ABORT marker itself,
 * at the producer's epoch and the last coordinator epoch seen, with one WARN line naming
 * producer, partition and first offset — but only while that transaction is still the one
 * that started at `first_offset`, still idle longer than `older_than_ms` (as
 * partition_idle_txns counts) and no batch of it waits for KIP-890 verification: anything
 * else means the producer came back. The caller must know that no transaction coordinator
 * has the transaction open (Ongoing or Prepare*): a COMMIT may still be on its way.
 * Returns 0, NOT_LEADER_OR_FOLLOWER, INVALID_TXN_STATE (not that transaction, or not idle
 * any more: nothing written) or partition_write_marker's error. */
int partition_abort_txn(struct partition *p, int64_t producer_id, int64_t first_offset,
                        int64_t older_than_ms);

/* KIP-890 verification state of a producer on this partition (pstate_txn_verified,
 * pstate_verify_begin, pstate_verify_done). */
bool partition_txn_verified(const struct partition *p, int64_t producer_id, int16_t epoch);
uint32_t partition_verify_begin(struct partition *p, int64_t producer_id, int16_t epoch);
bool partition_verify_done(struct partition *p, int64_t producer_id, int16_t epoch, uint32_t token);
/* pstate_verify_park / pstate_verify_parked on the partition's producer state. */
bool partition_verify_park(struct partition *p, int64_t producer_id, int delta);
uint32_t partition_verify_parked(const struct partition *p, int64_t producer_id);

/* How long a leader that took over from another broker treats a sequence gap of a producer
 * it has not heard from in its epoch as batches still on their way from the previous leader
 * (partition_gap_from_before): clients' default request.timeout.ms, by which such a batch is
 * answered or given up. */
#define PARTITION_TAKEOVER_GRACE_MS 30000

/* Whether a batch partition_append refused with OUT_OF_ORDER_SEQUENCE_NUMBER or
 * UNKNOWN_PRODUCER_ID may be a producer's batch sent after others that went to the previous
 * leader and were turned away there (NOT_LEADER_OR_FOLLOWER, or the connection closed): this
 * broker took the leadership over from another broker less than PARTITION_TAKEOVER_GRACE_MS
 * before `now_ms` (monotonic), nothing of the producer was appended in its epoch, and the
 * batch's sequence lies past the last one known here (a gap, a new producer epoch not starting
 * at 0, or a producer not known here at all) rather than at or below it. */
bool partition_gap_from_before(const struct partition *p, const struct record_batch *hdr,
                               int64_t now_ms);

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
 * leader's log holds them; a partial batch at the end is left for the next fetch): each batch
 * is checked (header, CRC32C), keeps the leader's base offset and partition leader epoch (the
 * first must start at this log's end and each one follow the previous; the epoch cache learns
 * new epochs), and is recorded in the producer state. Then the high watermark becomes
 * min(leader_hw, log end), never backwards. Returns 0, NOT_LEADER_OR_FOLLOWER unless this
 * broker follows the partition, OFFSET_OUT_OF_RANGE if a batch does not start at the log end,
 * CORRUPT_MESSAGE for bytes that are not whole valid batches, or the log's error. Batches
 * before a failing one stay appended. `buf` is patched in place. */
int partition_append_as_follower(struct partition *p, uint8_t *buf, size_t len, int64_t leader_hw,
                                 int64_t leader_log_start);

/* On a leader: a replica's Fetch for this partition (struct psm_fetch, partition_sm.h),
 * checked before it counts — leadership, replica set, CurrentLeaderEpoch, divergence by
 * LastFetchedEpoch, offset range — and only then taken as the follower's log end (which may
 * move the high watermark and grow the ISR). Returns v->error; v->diverging asks for a
 * DivergingEpoch answer without records. */
struct psm_fetch;
struct psm_fetch_verdict;
int partition_follower_fetch(struct partition *p, const struct psm_fetch *f,
                             struct psm_fetch_verdict *v);

/* Replication throttles, the leader's side (replica/throttle.h has the rules): the bytes of
 * `p` that an answer to follower `replica_id` may carry now, out of `budget`, after `claimed`
 * bytes the throttled partitions before it in the same answer took — less than `budget` only
 * when the topic's leader.replication.throttled.replicas names `p` on this broker and the
 * follower is not in the ISR (0: nothing this time; the fetch waits). *counted says whether
 * `p`'s bytes count toward leader.replication.throttled.rate (partition_leader_sent). */
size_t partition_leader_throttle(struct partition *p, int32_t replica_id, size_t budget,
                                 size_t claimed, bool *counted);
/* An answer to a follower carried `bytes` of `p`, whose bytes count (above): recorded in the
 * leader's rate meter. */
void partition_leader_sent(struct partition *p, size_t bytes);

/* On a follower: the leader answered DivergingEpoch {epoch, end_offset}: the log is truncated
 * where the leader's and this replica's histories part (partition_sm.h's rule). */
void partition_diverging(struct partition *p, int32_t epoch, int64_t end_offset);
/* On a follower: the leader answered OFFSET_OUT_OF_RANGE and its log runs from
 * `leader_log_start` (-1 when not asked) to `leader_log_end`, as ListOffsets told: truncated,
 * started over or fetched once without LastFetchedEpoch, as psm_out_of_range decides. */
void partition_out_of_range(struct partition *p, int64_t leader_log_start, int64_t leader_log_end);
/* What the next Fetch names as LastFetchedEpoch: partition_last_fetched_epoch, or -1 once
 * after the leader refused it (psm_fetch_checks_epoch). */
int32_t partition_fetch_last_epoch(const struct partition *p);

/* The epoch of the last batch this replica holds (the leader-epoch cache's latest), -1 when
 * none: a follower's Fetch names it as LastFetchedEpoch. */
int32_t partition_last_fetched_epoch(const struct partition *p);

/* OffsetForLeaderEpoch: the largest epoch <= `epoch` this log knows and its end offset (the
 * next epoch's start, or the log end for the latest); -1/-1 when unknown. */
void partition_epoch_end_offset(const struct partition *p, int32_t epoch, int32_t *out_epoch,
                                int64_t *out_end);

/* A leader whose high watermark has reached the start offset of its leader epoch: before
 * that, ListOffsets answers OFFSET_NOT_AVAILABLE (the new leader's HW may lag what the old
 * one had exposed). */
bool partition_leader_ready(const struct partition *p);

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
 * PARTITION_DURABLE starts a thread-pool flush if none runs (at most one runs per partition:
 * the next covers everything appended meanwhile); when a flush fails, or the log has failed
 * already, the PARTITION_DURABLE watch fires (or returns) with w->reached false while the
 * partition stays online: the caller answers KAFKA_STORAGE_ERROR. Marks move, and watches fire,
 * from within partition_append (and the other calls that move them) once the partition's
 * state is updated; a callback may append to the partition again. */
bool partition_watch(struct partition *p, enum partition_mark mark, int64_t offset,
                     struct purgatory_watch *w);

/* Whether the flush policy (flush.messages, flush.ms; their broker defaults
 * log.flush.interval.messages / .ms) asks what is appended so far to be fsynced now: a produce
 * is then acknowledged only once PARTITION_DURABLE covers its batch, as Kafka fsyncs inside
 * the append. False by default (no policy), without reading the clock. */
bool partition_flush_required(const struct partition *p);

#endif
