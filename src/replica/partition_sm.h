/* SPDX-License-Identifier: Apache-2.0 */
/* partition_sm: Kafka's ISR replication for one partition, as this broker sees it, as a pure
 * state machine — no log, no sockets, no clock of its own. It holds the partition's role and
 * epochs (from the metadata image), the ISR, the leader's view of every follower (log end,
 * last caught-up time), the log end and high watermark, and decides: when the high
 * watermark moves, when the leader asks the controller to shrink or expand the ISR
 * (AlterPartition), whether a follower's fetch may count (epoch and divergence checks come
 * first), where a diverged follower truncates, and when every waiter on the partition must
 * fail because leadership moved. Its owner (replica/partition.c, or the cluster fixture of
 * the unit tests) does what the returned effects say, in the order they are listed.
 *
 * Time is passed in (monotonic milliseconds) by every call that needs it. The only things
 * read from outside are the local log's leader-epoch cache and whether a broker may be in
 * an ISR, through struct psm_ops.
 *
 * Rules, Kafka's unless said otherwise:
 * - Leader: HW = min log end over the *maximal* ISR (the committed ISR plus a replica whose
 *   addition is pending; during a pending shrink the replicas being removed still count),
 *   leaving out members that psm_ops.replica_eligible refuses (fenced or shutting down: a
 *   replica that is shutting down does not hold the HW back); a member whose position is
 *   not known yet (no fetch since this leader epoch began) holds the HW where it is. The
 *   leader's own copy always counts, whatever replica_eligible says of it. The HW
 *   never moves backwards on a leader and never passes the leader's log end.
 *   KIP-966's rule, chosen for Tally: the HW does not advance while fewer than
 *   min.insync.replicas members count, in the maximal ISR and in the committed one (a
 *   member whose addition is pending counts only once the controller has it), so that no
 *   consumer reads a record that only a minority of replicas holds, and so that every
 *   replica that left the ISR below the minimum holds every committed record (the
 *   controller's eligible leader replicas, controller_sm.h); acks=all writes are refused
 *   with NOT_ENOUGH_REPLICAS before they are appended in that state anyway.
 * - A follower's fetch is checked before it counts (in this order): the partition is led
 *   here; the fetcher is a replica; CurrentLeaderEpoch (-1 = unchecked) equals the leader
 *   epoch (older: FENCED_LEADER_EPOCH, newer: UNKNOWN_LEADER_EPOCH); with LastFetchedEpoch
 *   (>= 0) the leader looks up that epoch's end offset in its own epoch cache and answers
 *   DivergingEpoch when the follower's log diverges (end offset < fetch offset, or the
 *   leader knows only an older epoch; OFFSET_OUT_OF_RANGE when it knows no epoch <= it, as
 *   Kafka answers); the fetch offset lies within [log start, log end]
 *   (else OFFSET_OUT_OF_RANGE). Only then does the fetch offset become the follower's log
 *   end: a zombie or diverged follower can never move the HW over records it lacks.
 * - Caught up: a fetch at or past the leader's log end makes the follower caught up now; a
 *   fetch at or past the leader's log end as of the follower's previous fetch makes it
 *   caught up as of that previous fetch. An ISR member not caught up for
 *   replica.lag.time.max.ms leaves the ISR (an AlterPartition the leader sends); a replica
 *   outside the ISR joins when its log end is >= HW and >= the start offset of the current
 *   leader epoch (KAFKA-7128) and replica_eligible accepts it. One AlterPartition is in
 *   flight at a time; it is sent again after alter_retry_ms without an answer.
 * - A leader becoming leader (or leader again at a new epoch) starts its epoch at its log
 *   end, forgets every follower's position and counts each ISR member as caught up now.
 * - Leadership lost, a new leader epoch, or the partition gone: every waiter on the
 *   partition's marks (acks=all produces, coordinator appends, parked fetches) fails with
 *   NOT_LEADER_OR_FOLLOWER at once, before any follower append or truncation — otherwise a
 *   waiter parked on the old leader could be answered "success" once a follower HW, fed by
 *   the new leader after truncation, passes its offset.
 * - Follower: HW = min(leader's HW, own log end), never backwards except by truncation.
 *   On DivergingEpoch(E, end) it looks up E in its own epoch cache: holding E, it truncates
 *   to min(end, its end of E); holding only an older epoch E', to its end of E' (the next
 *   fetch, with LastFetchedEpoch E', is checked again); holding no epoch <= E, to `end`;
 *   never past its log end.
 * - Follower, OFFSET_OUT_OF_RANGE: psm_out_of_range, from the leader's log start and end.
 *
 * Threading: one loop; nothing here is thread-safe. */
#ifndef TALLY_REPLICA_PARTITION_SM_H
#define TALLY_REPLICA_PARTITION_SM_H

#include <stdbool.h>
#include <stdint.h>

struct partition_sm;

enum psm_role {
    PSM_NONE = 0,     /* not a replica here (never assigned, moved away, topic deleted) */
    PSM_LEADER = 1,   /* this broker leads the partition */
    PSM_FOLLOWER = 2, /* a replica following psm_leader() (-1: none, the partition is offline) */
};

/* LeaderRecoveryState (KIP-704), as in the metadata and AlterPartition. */
#define PSM_RECOVERED 0
#define PSM_RECOVERING 1

/* What the state machine reads from outside. */
struct psm_ops {
    /* The local log's leader-epoch cache (log_epoch_end_offset): the largest epoch <= `epoch`
     * it knows, and that epoch's end offset (the start of the next epoch, or the log end for
     * the latest); -1/-1 when the cache knows no such epoch. Required. */
    void (*epoch_end)(void *arg, int32_t epoch, int32_t *out_epoch, int64_t *out_end);
    /* Whether `broker` may be counted in, and added to, an ISR: registered, unfenced, not in
     * controlled shutdown. NULL: every broker is eligible. */
    bool (*replica_eligible)(void *arg, int32_t broker);
    void *arg;
};

struct psm_config {
    int64_t replica_lag_time_max_ms; /* replica.lag.time.max.ms, <= 0: 30000 */
    int64_t alter_retry_ms;          /* an AlterPartition without an answer this long is sent
                                        again (and after a retriable error), 0: 2000 */
    int32_t min_insync;              /* min.insync.replicas of the topic, >= 1 */
};

/* The partition as a metadata record (PARTITION / PARTITION_CHANGE) or an AlterPartition
 * answer states it. Arrays are borrowed for the call. */
struct psm_assignment {
    int32_t leader; /* -1 = none (offline) */
    int32_t leader_epoch;
    int32_t partition_epoch;
    int32_t n_replicas;
    const int32_t *replicas;
    int32_t n_isr;
    const int32_t *isr;
    int8_t leader_recovery_state; /* PSM_RECOVERED / PSM_RECOVERING */
};

/* What the owner must do after a call, in this order. Every call that takes a
 * `struct psm_effects *` zeroes it first. */
struct psm_effects {
    /* 1. Fail every waiter on the partition's marks with NOT_LEADER_OR_FOLLOWER, now. */
    bool fail_waiters;
    /* 2. Role or leader epoch changed: publish a leadership event (coordinators). */
    bool role_changed;
    /* 3. Follower: truncate the local log (and everything that follows the log: epoch
     *    cache, .txnindex, producer state, marks) to `truncate_to`, then call
     *    psm_truncated. `truncate_below_hw` tells that records at or past the old HW go
     *    (only after an unclean election: one WARN line naming the range). */
    bool truncate;
    int64_t truncate_to;
    bool truncate_below_hw;
    /* 3b. Follower: start the log over, empty, at `reset_to` (the leader's log starts past
     *     this replica's end), then call psm_truncated. */
    bool reset;
    int64_t reset_to;
    /* 4. The HW moved (up, or down through truncation): move the marks, wake watches. */
    bool hw_changed;
    /* 5. Follower: start, restart or stop fetching: from psm_leader() at psm_leader_epoch()
     *    when the role is PSM_FOLLOWER and the leader is >= 0, else stop. */
    bool fetch_changed;
    /* 6. Leader: send the AlterPartition of psm_alter_request() to the controller. */
    bool send_alter;
    /* For metrics and log lines: the ISR this broker asked for shrank / grew it. */
    bool isr_shrink_requested, isr_expand_requested;
};

/* A new partition on broker `node_id`, with no role (PSM_NONE) until psm_apply, log end and
 * start 0, HW `hw` (from the replication-offset checkpoint, 0 if none; clamped into the log
 * by psm_set_log, which must come before any other call). `cfg` and `ops` are copied. NULL
 * when out of memory. */
struct partition_sm *psm_new(int32_t node_id, const struct psm_config *cfg,
                             const struct psm_ops *ops, int64_t hw);
void psm_free(struct partition_sm *sm);

/* The local log's start and end offsets (at open, after retention, DeleteRecords or a log
 * started over), start <= end. The HW is clamped into [start, end], as Kafka keeps it. From
 * here on every call keeps log start <= HW <= log end (asserted). */
void psm_set_log(struct partition_sm *sm, int64_t log_start, int64_t log_end);
/* min.insync.replicas changed (topic config). The HW may move: `fx`. */
void psm_set_min_insync(struct partition_sm *sm, int32_t min_insync, int64_t now_ms,
                        struct psm_effects *fx);

/* The metadata image says this about the partition. A record older than what is known (a
 * lower leader epoch, or the same leader epoch and a partition epoch not above the current
 * one) changes nothing. Otherwise the role follows from `a->leader` and the replica set:
 * leader, follower, or PSM_NONE when this broker is no longer a replica. A newer record
 * ends any AlterPartition in progress (the metadata says what is true). Out of memory
 * (a larger replica set or ISR than before): nothing changes, the state machine stays at
 * the old epochs, so the same or a later record applies when given again. */
void psm_apply(struct partition_sm *sm, const struct psm_assignment *a, int64_t now_ms,
               struct psm_effects *fx);

/* ---- leader ---------------------------------------------------------------------------- */

/* The leader appended: its log end is now `log_end`, never below the previous one (an
 * assert: only a bug in the owner can move it back). */
void psm_appended(struct partition_sm *sm, int64_t log_end, int64_t now_ms, struct psm_effects *fx);

/* A replica's Fetch for this partition, checked as the header says. */
struct psm_fetch {
    int32_t replica_id;
    int32_t current_leader_epoch; /* -1 = not checked */
    int64_t fetch_offset;
    int32_t last_fetched_epoch; /* -1 = none (Fetch below v12, or an empty log) */
};
struct psm_fetch_verdict {
    int16_t error;  /* 0, NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH,
                       OFFSET_OUT_OF_RANGE */
    bool diverging; /* answer DivergingEpoch {epoch, end_offset}, and no records */
    int32_t diverging_epoch;
    int64_t diverging_end_offset;
    int64_t high_watermark; /* to answer with (after this fetch counted) */
    int64_t log_start;
};
/* Returns v->error. Only a fetch answered with 0 and no divergence moved the follower. */
int psm_follower_fetch(struct partition_sm *sm, const struct psm_fetch *f, int64_t now_ms,
                       struct psm_fetch_verdict *v, struct psm_effects *fx);

/* Time passed: ISR shrinks by lag, AlterPartition retries. */
void psm_tick(struct partition_sm *sm, int64_t now_ms, struct psm_effects *fx);

/* The AlterPartition the leader wants sent (valid when psm_alter_pending()). */
struct psm_alter_request {
    int32_t leader_epoch;
    int32_t partition_epoch; /* the one the change is based on */
    int32_t n_isr;
    const int32_t *isr; /* owned by the state machine, valid until the next call */
    int8_t leader_recovery_state;
};
bool psm_alter_pending(const struct partition_sm *sm);
void psm_alter_request(const struct partition_sm *sm, struct psm_alter_request *out);

/* The controller's answer to the AlterPartition in flight: err 0 with the partition as it
 * now is (applied as psm_apply would; `now->n_replicas` 0 keeps the current replica set,
 * since AlterPartition's answer carries none; an answer at the current epochs whose ISR is
 * not the one asked for, or older than the metadata, changes nothing), or an error.
 * INVALID_UPDATE_VERSION, FENCED_LEADER_EPOCH, NEW_LEADER_ELECTED, INELIGIBLE_REPLICA and
 * UNKNOWN_TOPIC_OR_PARTITION drop the request: psm_alter_pending() turns false and nothing
 * new is decided until the metadata says what is true (psm_apply of a newer record); its
 * ISR still counts toward the HW meanwhile, because an earlier copy of it may have been
 * applied (as Kafka keeps its pending state); if no newer record comes within
 * alter_retry_ms it is sent again, since an answer cannot be told from one to an older
 * request. Other errors (NOT_CONTROLLER, a lost connection, a timeout) keep it pending and
 * send it again after alter_retry_ms. An answer when nothing is pending is ignored. */
void psm_alter_answered(struct partition_sm *sm, int16_t err, const struct psm_assignment *now,
                        int64_t now_ms, struct psm_effects *fx);

/* Whether the HW has reached the start offset of the current leader epoch: until then a new
 * leader answers ListOffsets with OFFSET_NOT_AVAILABLE (its HW may still lag the old
 * leader's). False when not the leader; psm_epoch_start_offset is then -1. */
bool psm_hw_covers_epoch_start(const struct partition_sm *sm);
int64_t psm_epoch_start_offset(const struct partition_sm *sm);
/* When this broker took the leadership over from another broker (the now_ms of the psm_apply
 * that began the current leader epoch, when the leader before it was another broker); -1
 * when not the leader, or when its epoch followed no other broker's (the first leader, a
 * restart, the same broker again). */
int64_t psm_took_over_ms(const struct partition_sm *sm);

/* ---- follower -------------------------------------------------------------------------- */

/* The leader answered a fetch for this partition without divergence: the follower appended
 * what came, so its log end is now `log_end`; `leader_hw` and `leader_log_start` as answered.
 * psm_log_start() follows the leader's start up, never past the HW (Kafka's follower does):
 * the owner drops the whole segments below it as retention does. */
void psm_fetched(struct partition_sm *sm, int64_t log_end, int64_t leader_hw,
                 int64_t leader_log_start, struct psm_effects *fx);

/* The leader answered DivergingEpoch {epoch, end_offset}: fx->truncate says where to —
 * always set, even at the log end, where the epoch cache still loses the epochs that start
 * there. Ignored unless a follower (a late answer must never truncate a leader). */
void psm_diverging(struct partition_sm *sm, int32_t epoch, int64_t end_offset,
                   struct psm_effects *fx);

/* The leader answered OFFSET_OUT_OF_RANGE to this follower's fetch, and its log runs from
 * `leader_log_start` to `leader_log_end` (asked with ListOffsets, earliest and latest, as a
 * replica: the log end, not the HW; start -1 when not asked because the end decides). As
 * Kafka's follower does (AbstractFetcherThread.fetchOffsetAndTruncate): a leader end below
 * this log's end truncates to it (fx->truncate_below_hw when below the HW: an unclean
 * election chose a shorter log); else a leader start past this log's end starts the log over
 * there (fx->reset); else the fetch offset was in range and the leader refused the fetch's
 * LastFetchedEpoch (it knows no epoch at or below it), so the follower truncates to its HW
 * (Kafka's rule when OffsetForLeaderEpoch answers UNDEFINED_EPOCH_OFFSET) and its next fetch
 * goes without LastFetchedEpoch (psm_fetch_checks_epoch false until a fetch is answered or
 * the leader or epoch changes), so that the answer cannot repeat forever. Ignored unless a
 * follower, or with `leader_log_end` < 0. */
void psm_out_of_range(struct partition_sm *sm, int64_t leader_log_start, int64_t leader_log_end,
                      struct psm_effects *fx);
/* Whether the next fetch names LastFetchedEpoch (see psm_out_of_range). */
bool psm_fetch_checks_epoch(const struct partition_sm *sm);

/* The owner truncated the log: its end is now `log_end` (the HW follows it down). */
void psm_truncated(struct partition_sm *sm, int64_t log_end, struct psm_effects *fx);

/* ---- reading --------------------------------------------------------------------------- */

enum psm_role psm_role(const struct partition_sm *sm);
int32_t psm_leader(const struct partition_sm *sm);
int32_t psm_leader_epoch(const struct partition_sm *sm);
int32_t psm_partition_epoch(const struct partition_sm *sm);
int8_t psm_leader_recovery_state(const struct partition_sm *sm);
int64_t psm_high_watermark(const struct partition_sm *sm);
int64_t psm_log_end(const struct partition_sm *sm);
int64_t psm_log_start(const struct partition_sm *sm);
/* The committed ISR (from the metadata or the last AlterPartition answer); *n its size. */
const int32_t *psm_isr(const struct partition_sm *sm, int32_t *n);
const int32_t *psm_replicas(const struct partition_sm *sm, int32_t *n);
bool psm_in_isr(const struct partition_sm *sm, int32_t broker);
bool psm_is_replica(const struct partition_sm *sm, int32_t broker);
/* Members of the maximal ISR that count (eligible), the number min.insync.replicas is
 * compared with for acks=all. */
int32_t psm_isr_count(const struct partition_sm *sm);
/* Leader: what it knows of follower `broker` (-1 for the log end when unknown or not a
 * follower); last_caught_up_ms -1 when never. */
int64_t psm_follower_log_end(const struct partition_sm *sm, int32_t broker);
int64_t psm_follower_caught_up_ms(const struct partition_sm *sm, int32_t broker);

#endif
