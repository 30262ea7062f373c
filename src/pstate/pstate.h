/* SPDX-License-Identifier: Apache-2.0 */
/* pstate: producer state of one partition — for each producer id its epoch and its last 5
 * appended batches — which decides whether an incoming idempotent batch is new, an exact
 * retry (a duplicate: answer with the original offsets, append nothing), or out of order /
 * fenced. Written for transactions too (coordinator epoch, first offset of the ongoing
 * transaction). Durable through snapshot files `<20-digit offset>.snapshot` in the partition
 * directory plus replay of the log after the snapshot. No network or log code: the caller
 * feeds it batches (record_batch headers) and offsets. */
#ifndef TALLY_PSTATE_H
#define TALLY_PSTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct record_batch;

#define PSTATE_MAX_BATCHES 5 /* batches remembered per producer (Kafka's window) */

struct pstate_batch {
    int32_t first_seq, last_seq;
    int64_t first_offset, last_offset;
    int64_t timestamp; /* the batch's max timestamp */
};

/* One producer's state, as DescribeProducers shows it. */
struct pstate_producer {
    int64_t producer_id;
    int16_t epoch;
    int32_t n_batches;                               /* 0..PSTATE_MAX_BATCHES */
    struct pstate_batch batches[PSTATE_MAX_BATCHES]; /* oldest first */
    int64_t last_timestamp;                          /* max timestamp of its last batch */
    int64_t last_update_ms; /* wall clock of its last append, for expiration */
    /* Monotonic time of its last append on this broker as leader (pstate_note_write), -1 when
     * none since the state was loaded: a wall-clock step cannot make a transaction look idle.
     * Not in snapshots (a time of another process means nothing). */
    int64_t last_write_mono_ms;
    int32_t coordinator_epoch; /* -1 until transactions */
    int64_t txn_first_offset;  /* first offset of its ongoing transaction, -1 if none */
    /* KIP-890 verification (not in snapshots: a restart verifies again): a check with the
     * coordinator in flight or done for epoch `verify_epoch`, identified by `verify_token`
     * (0 = none); `verified` once the coordinator said the partition is in the transaction.
     * A marker clears them, so an answer that arrives after the transaction ended is void. */
    uint32_t verify_token;
    int16_t verify_epoch;
    bool verified;
    /* Transactional batches of this producer parked here until the coordinator answers:
     * while any is, later batches park behind them (even once verified), so that a
     * pipelined batch never reaches the log before one sent ahead of it. */
    uint32_t verify_parked;
};

struct pstate;

struct pstate *pstate_new(void);
void pstate_free(struct pstate *s);

/* Decides what to do with a batch carrying a producer id (>= 0), before it is appended.
 * Returns:
 *   0                                  append it (then call pstate_update);
 *   ERR_DUPLICATE_SEQUENCE_NUMBER      an exact retry of one of the producer's last 5
 *                                      batches (same epoch, first and last sequence): *dup
 *                                      receives that batch's offsets; answer success with them
 *                                      and append nothing;
 *   ERR_INVALID_PRODUCER_EPOCH         epoch older than the producer's current one;
 *   ERR_OUT_OF_ORDER_SEQUENCE_NUMBER   same epoch, first sequence not last + 1 (wrapping
 *                                      INT32_MAX → 0); or a newer epoch not starting at 0;
 *   ERR_UNKNOWN_PRODUCER_ID            unknown producer id with a first sequence other than 0.
 *   ERR_INVALID_TXN_STATE              a non-transactional batch of the current epoch while
 *                                      the producer has an ongoing transaction (Kafka:
 *                                      "Expected transactional write from producer").
 * Batches without a producer id (producer_id < 0) always return 0. Pure: changes nothing. */
int pstate_check(const struct pstate *s, const struct record_batch *b, struct pstate_batch *dup);

/* Records an appended batch (its base offset assigned): creates the producer or moves it to
 * the batch's epoch (forgetting batches of the old epoch), appends to its window (dropping
 * the oldest past 5), updates timestamps. `now_ms` is the wall clock. Also used when
 * replaying the log at start. Returns 0 or ERR_NOMEM. */
int pstate_update(struct pstate *s, const struct record_batch *b, int64_t now_ms);

/* Stamps the producer's last write on this broker with `mono_ms` (the caller's monotonic
 * clock), right after its pstate_update on a leader append; a no-op for an unknown producer. */
void pstate_note_write(struct pstate *s, int64_t producer_id, int64_t mono_ms);

/* The producer's state, or NULL. Valid until the next call that changes `s`. */
const struct pstate_producer *pstate_get(const struct pstate *s, int64_t producer_id);

/* How many producers the state holds (pstate_producers' n, without sorting them). */
size_t pstate_count(const struct pstate *s);

/* Every producer, in producer-id order; *n receives the count. Valid until the next change. */
const struct pstate_producer *pstate_producers(const struct pstate *s, size_t *n);

/* ---- transactions ---------------------------------------------------------------------- */

/* Decides whether a COMMIT/ABORT marker for (producer_id, epoch) written by a coordinator at
 * `coordinator_epoch` may be appended: 0; ERR_INVALID_PRODUCER_EPOCH when `epoch` is older
 * than the producer's; ERR_TRANSACTION_COORDINATOR_FENCED when `coordinator_epoch` is older
 * than the last one that wrote a marker for it (Kafka's appendEndTxnMarker order). An unknown
 * producer, or one with no ongoing transaction, is accepted (the marker is appended anyway:
 * an idempotent retry). Pure. */
int pstate_check_marker(const struct pstate *s, int64_t producer_id, int16_t epoch,
                        int32_t coordinator_epoch);

/* What closing a transaction tells the caller (for the segment's .txnindex on ABORT). */
struct pstate_txn_end {
    int64_t first_offset;       /* first offset of the closed transaction, -1 if none was open */
    int64_t last_stable_offset; /* the LSO right after: first offset of the earliest other open
                                   transaction, else the marker's offset + 1 */
};

/* Records an appended control batch `b` (base offset assigned) carrying `coordinator_epoch`:
 * moves the producer to the batch's epoch, remembers the coordinator epoch and closes its
 * ongoing transaction; *end (may be NULL) says what was closed. Used live and on replay.
 * Returns 0 or ERR_NOMEM. pstate_update on a control batch does the same without changing
 * the coordinator epoch. */
int pstate_update_marker(struct pstate *s, const struct record_batch *b, int32_t coordinator_epoch,
                         int64_t now_ms, struct pstate_txn_end *end);

/* KIP-890 part 1: before the first transactional batch of a transaction reaches this
 * partition, the coordinator must confirm that the partition was added to the producer's
 * ongoing transaction. pstate_txn_verified: true when no check is needed — the producer's
 * transaction is already open here at `epoch`, or a check for `epoch` succeeded and no marker
 * came since. pstate_verify_begin (before asking the coordinator) creates the producer if
 * needed and returns a token (0 on ERR_NOMEM) — the same token while a check of that epoch is
 * out or done, so pipelined requests share it; pstate_verify_done (the coordinator said yes)
 * returns true and marks the producer verified if the token is still current (no marker and
 * no check of another epoch came in between: Kafka's verification guard), else false (answer
 * INVALID_TXN_STATE, append nothing). */
bool pstate_txn_verified(const struct pstate *s, int64_t producer_id, int16_t epoch);
uint32_t pstate_verify_begin(struct pstate *s, int64_t producer_id, int16_t epoch);
bool pstate_verify_done(struct pstate *s, int64_t producer_id, int16_t epoch, uint32_t token);
/* Counts the producer's batches parked for verification: +1 when one parks (creating the
 * producer if needed; false on ERR_NOMEM), -1 when it leaves (appended or refused).
 * pstate_verify_parked: how many are parked now. */
bool pstate_verify_park(struct pstate *s, int64_t producer_id, int delta);
uint32_t pstate_verify_parked(const struct pstate *s, int64_t producer_id);

/* The first offset of the earliest ongoing transaction on the partition, or -1 when none is
 * open: the last stable offset is this, else the high watermark. O(1) except right after a
 * transaction closed (one pass over the producers). */
int64_t pstate_first_unstable_offset(const struct pstate *s);

/* Removes producers whose last append is older than now_ms - expiration_ms
 * (producer.id.expiration.ms) and that have no ongoing transaction. Returns how many. */
size_t pstate_expire(struct pstate *s, int64_t now_ms, int64_t expiration_ms);

/* Forgets batches at or past `offset` and producers that only had such batches (the log was
 * truncated there): used when recovery truncates a torn tail. */
void pstate_truncate(struct pstate *s, int64_t offset);

/* ---- snapshots ------------------------------------------------------------------------ */

/* Every file access of the snapshot functions goes through `io` (base/sysio.h), so tests can
 * inject short writes, fsync failure or ENOSPC; the broker passes the replica manager's table. */
struct sysio;

/* Writes `<dir>/<20-digit offset>.snapshot` holding the whole state as of `offset` (the log
 * end offset at the time: every batch below it is included). Written to a temporary file,
 * fsynced, renamed. Returns 0 or ERR_IO (the failed call logged with its reason; the temporary
 * file is removed and an older snapshot of the same offset, if any, is left as it was). */
int pstate_snapshot_write(const struct pstate *s, const struct sysio *io, const char *dir,
                          int64_t offset);

/* The same snapshot in two halves, so that the event loop never waits for the disk:
 * pstate_snapshot_write_nosync (the state's owner, on the loop) writes the file into the
 * page cache and renames it into place, without fsync — a killed process loses nothing, and
 * a power loss at worst leaves a file that fails its CRC at load and is skipped;
 * pstate_snapshot_sync (any thread: it touches no pstate) then fsyncs the file and `dir`.
 * Both return 0 or ERR_IO (the failed call logged with its reason). */
int pstate_snapshot_write_nosync(const struct pstate *s, const struct sysio *io, const char *dir,
                                 int64_t offset);
int pstate_snapshot_sync(const struct sysio *io, const char *dir, int64_t offset);

/* Replaces the state with the newest valid snapshot in `dir` whose offset is <= `max_offset`
 * (the log end offset after recovery); snapshots past it are deleted, and so are corrupt
 * ones (CRC mismatch, bad length, a window out of order: one WARN line each), falling back to
 * the next older. *offset receives the snapshot's offset, or -1 if none was usable (state
 * left empty): the caller then replays the log from that offset (or from its start). Returns
 * 0, ERR_IO or ERR_NOMEM. */
int pstate_snapshot_load(struct pstate *s, const struct sysio *io, const char *dir,
                         int64_t max_offset, int64_t *offset);

/* Deletes all snapshots in `dir` except the newest `keep` (state is whole in each, so old
 * ones only cost disk). Returns the number deleted. */
int pstate_snapshot_prune(const struct sysio *io, const char *dir, int keep);

#endif
