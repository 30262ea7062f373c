/* SPDX-License-Identifier: Apache-2.0 */
/* txn_sm: the state of one transactional id, as Kafka's transaction coordinator keeps it
 * (TransactionMetadata), and every rule that moves it. Pure: no sockets, no storage, no clock
 * of its own (callers pass `now`, wall milliseconds), so it is tested on virtual time.
 *
 * A change is never applied in place: each rule checks the request against the current
 * state and fills a struct txn_transit — the next state, exactly what the coordinator writes
 * to __transaction_state as a TransactionLogValue. The caller then marks the entry pending
 * (txn_sm_begin), writes the transit, and applies it once durable (txn_sm_apply) or drops it
 * (txn_sm_cancel). While a transit is pending every other request gets
 * CONCURRENT_TRANSACTIONS (Kafka's pendingState rule) — or, for the adds, waits (txn_sm_hold_ms).
 *
 * States and the transitions allowed into each (Kafka's TransactionState):
 *   Empty             ← Empty, CompleteCommit, CompleteAbort
 *   Ongoing           ← Ongoing, Empty, CompleteCommit, CompleteAbort
 *   PrepareCommit     ← Ongoing
 *   PrepareAbort      ← Ongoing, PrepareEpochFence
 *   CompleteCommit    ← PrepareCommit
 *   CompleteAbort     ← PrepareAbort
 *   Dead              ← Empty, CompleteCommit, CompleteAbort
 *   PrepareEpochFence ← Ongoing (never written: folded into the PrepareAbort that follows)
 * Error codes returned are Kafka's wire codes (base/err.h). */
#ifndef TALLY_TXN_SM_H
#define TALLY_TXN_SM_H

#include <stdbool.h>
#include <stdint.h>

/* Values are Kafka's TransactionState ids, as TransactionLogValue.TransactionStatus holds. */
enum txn_state {
    TXN_EMPTY = 0,
    TXN_ONGOING = 1,
    TXN_PREPARE_COMMIT = 2,
    TXN_PREPARE_ABORT = 3,
    TXN_COMPLETE_COMMIT = 4,
    TXN_COMPLETE_ABORT = 5,
    TXN_DEAD = 6,
    TXN_PREPARE_EPOCH_FENCE = 7,
};
#define TXN_N_STATES 8

/* Kafka's name of a state ("Empty", "PrepareCommit", ...); "Unknown" out of range. */
const char *txn_state_name(enum txn_state s);
/* The state of a name (case-sensitive, as Kafka's), or -1. */
int txn_state_by_name(const char *name);
/* Whether `to` may follow `from`. */
bool txn_sm_valid_transition(enum txn_state from, enum txn_state to);

/* One partition of a transaction. */
struct txn_tp {
    char *topic; /* malloc()ed */
    int32_t partition;
};

/* A state of an entry: what a TransactionLogValue says, plus the last epoch (KIP-360, kept in
 * memory only, as Kafka does). Partitions sorted by (topic, partition), no duplicates. */
struct txn_transit {
    int64_t producer_id;
    int64_t last_producer_id; /* the id before a rotation, -1 = none */
    int16_t producer_epoch;   /* -1 = none yet */
    int16_t last_producer_epoch;
    int32_t timeout_ms;
    enum txn_state state;
    struct txn_tp *parts;
    int32_t n_parts;
    int64_t start_ms;  /* transaction start, -1 = none */
    int64_t update_ms; /* last update */
};

/* One transactional id. */
struct txn_meta {
    char *tid;
    struct txn_transit cur;
    bool pending;                 /* a transit is being written */
    enum txn_state pending_state; /* its state, while pending */
};

/* A new entry for `tid` with producer id `producer_id`, epoch -1, Empty (as Kafka creates one
 * on the first InitProducerId). NULL on out of memory. */
struct txn_meta *txn_meta_new(const char *tid, int64_t producer_id, int32_t timeout_ms,
                              int64_t now);
void txn_meta_free(struct txn_meta *m);

/* Frees a transit's partitions (the struct is the caller's). */
void txn_transit_clear(struct txn_transit *t);
/* A deep copy of `from` into `to` (partitions duplicated). 0 or ERR_NOMEM. */
int txn_transit_copy(struct txn_transit *to, const struct txn_transit *from);
/* Adds topic-partition (copied) to the transit's sorted set; 0 or ERR_NOMEM. */
int txn_transit_add(struct txn_transit *t, const char *topic, int32_t partition);
/* Whether the transit's partitions hold topic-partition. */
bool txn_transit_has(const struct txn_transit *t, const char *topic, int32_t partition);

/* The epoch is exhausted: at or past INT16_MAX - 1 (Kafka's isProducerEpochExhausted). */
bool txn_epoch_exhausted(int16_t epoch);

/* What txn_sm_init_producer_id decided. */
enum txn_init_action {
    TXN_INIT_WRITE,       /* write *out, then answer its producer id and epoch */
    TXN_INIT_FENCE,       /* an ongoing transaction must be aborted first: *out is its
                           * PrepareAbort at a bumped epoch; write it, send the markers, and
                           * answer CONCURRENT_TRANSACTIONS (the client retries) */
    TXN_INIT_NEED_NEW_ID, /* the epoch is exhausted: call again with a fresh producer id */
};

/* InitProducerId with this transactional id. `expected_pid`/`expected_epoch` are the v3+
 * fields (-1/-1 = none). `new_pid` is a fresh producer id for an exhausted epoch (-1 when the
 * caller has none yet). Returns 0 with *action and *out (the caller owns out's partitions),
 * or CONCURRENT_TRANSACTIONS (a transit pending, or a Prepare* state), PRODUCER_FENCED (the
 * expected id/epoch is neither current nor a retry of the last bump). */
int txn_sm_init_producer_id(const struct txn_meta *m, int32_t timeout_ms, int64_t expected_pid,
                            int16_t expected_epoch, int64_t new_pid, int64_t now,
                            enum txn_init_action *action, struct txn_transit *out);

/* AddPartitionsToTxn / AddOffsetsToTxn: add `n` partitions. Returns 0 with *write true and
 * *out (Ongoing with the union) — or *write false when the transaction is Ongoing and holds
 * them all already (answer at once) — else INVALID_PRODUCER_ID_MAPPING (another producer id),
 * PRODUCER_FENCED (another epoch), CONCURRENT_TRANSACTIONS (pending, or Prepare*). */
int txn_sm_add_partitions(const struct txn_meta *m, int64_t producer_id, int16_t epoch,
                          const struct txn_tp *parts, int32_t n, int64_t now, bool *write,
                          struct txn_transit *out);

/* How long a request that txn_sm_add_partitions answered `rc` may still be held instead of
 * answered, to be served again when the entry's state next moves: while rc is
 * CONCURRENT_TRANSACTIONS because a transit is being written or the previous transaction is in
 * PrepareCommit/PrepareAbort (its markers being written: it reaches Complete* by itself), for
 * at most `bound_ms` after the request first arrived at `since` (now and since: the same
 * clock). Returns the milliseconds left (> 0), or 0: answer rc now. Kafka answers
 * CONCURRENT_TRANSACTIONS at once and the client backs off; holding answers at Complete*. */
int64_t txn_sm_hold_ms(const struct txn_meta *m, int rc, int64_t since, int64_t now,
                       int64_t bound_ms);

/* AddPartitionsToTxn v4 VerifyOnly (KIP-890), for one partition: 0 when the ongoing
 * transaction of this producer id and epoch has added it, INVALID_TXN_STATE when it has not;
 * INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED, CONCURRENT_TRANSACTIONS (Prepare*) as
 * add_partitions. */
int txn_sm_verify(const struct txn_meta *m, int64_t producer_id, int16_t epoch, const char *topic,
                  int32_t partition);

/* EndTxn (from_client) or the coordinator's own abort. Returns 0 with *write true and *out
 * (PrepareCommit/PrepareAbort), or 0 with *write false (already completed that way: answer
 * NONE), or INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED (a client's epoch must equal the
 * current one), CONCURRENT_TRANSACTIONS (pending, or the same Prepare* in progress),
 * INVALID_TXN_STATE (Empty, or the opposite outcome of a completed/prepared transaction). */
int txn_sm_end(const struct txn_meta *m, int64_t producer_id, int16_t epoch, bool commit,
               bool from_client, int64_t now, bool *write, struct txn_transit *out);

/* The Complete* state that follows a Prepare* (partitions cleared). 0, or INVALID_TXN_STATE
 * when the entry is not in a Prepare* state. */
int txn_sm_complete(const struct txn_meta *m, int64_t now, struct txn_transit *out);

/* An Ongoing transaction past its timeout (start + timeout < now), nothing pending. */
bool txn_sm_timed_out(const struct txn_meta *m, int64_t now);
/* The coordinator's abort of a timed-out transaction: PrepareAbort at epoch + 1 (fencing the
 * producer, as Kafka's prepareFenceProducerEpoch; the epoch stays at INT16_MAX). 0, or
 * INVALID_TXN_STATE when not Ongoing, CONCURRENT_TRANSACTIONS when pending. */
int txn_sm_abort_timed_out(const struct txn_meta *m, int64_t now, struct txn_transit *out);

/* An idle id to expire: Empty/CompleteCommit/CompleteAbort, nothing pending, last update at or
 * before now - expiration_ms. */
bool txn_sm_expired(const struct txn_meta *m, int64_t now, int64_t expiration_ms);
/* The Dead transit of an expired id (written as a tombstone). */
int txn_sm_dead(const struct txn_meta *m, int64_t now, struct txn_transit *out);

/* Marks `t` as being written: the entry is pending until apply or cancel. */
void txn_sm_begin(struct txn_meta *m, const struct txn_transit *t);
/* Applies a written transit (takes its partitions; *t is cleared). */
void txn_sm_apply(struct txn_meta *m, struct txn_transit *t);
/* Drops the pending mark (the write failed); the state is unchanged. */
void txn_sm_cancel(struct txn_meta *m);

#endif
