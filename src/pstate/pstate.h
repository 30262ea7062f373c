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
    int64_t last_update_ms;    /* wall clock of its last append, for expiration */
    int32_t coordinator_epoch; /* -1 until transactions */
    int64_t txn_first_offset;  /* first offset of its ongoing transaction, -1 if none */
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
 * Batches without a producer id (producer_id < 0) always return 0. Pure: changes nothing. */
int pstate_check(const struct pstate *s, const struct record_batch *b, struct pstate_batch *dup);

/* Records an appended batch (its base offset assigned): creates the producer or moves it to
 * the batch's epoch (forgetting batches of the old epoch), appends to its window (dropping
 * the oldest past 5), updates timestamps. `now_ms` is the wall clock. Also used when
 * replaying the log at start. Returns 0 or ERR_NOMEM. */
int pstate_update(struct pstate *s, const struct record_batch *b, int64_t now_ms);

/* The producer's state, or NULL. Valid until the next call that changes `s`. */
const struct pstate_producer *pstate_get(const struct pstate *s, int64_t producer_id);

/* Every producer, in producer-id order; *n receives the count. Valid until the next change. */
const struct pstate_producer *pstate_producers(const struct pstate *s, size_t *n);

/* Removes producers whose last append is older than now_ms - expiration_ms
 * (producer.id.expiration.ms) and that have no ongoing transaction. Returns how many. */
size_t pstate_expire(struct pstate *s, int64_t now_ms, int64_t expiration_ms);

/* Forgets batches at or past `offset` and producers that only had such batches (the log was
 * truncated there): used when recovery truncates a torn tail. */
void pstate_truncate(struct pstate *s, int64_t offset);

/* ---- snapshots ------------------------------------------------------------------------ */

/* Writes `<dir>/<20-digit offset>.snapshot` holding the whole state as of `offset` (the log
 * end offset at the time: every batch below it is included). Written to a temporary file,
 * fsynced, renamed. Returns 0 or ERR_IO (the failed call logged with its reason). */
int pstate_snapshot_write(const struct pstate *s, const char *dir, int64_t offset);

/* The same snapshot in two halves, so that the event loop never waits for the disk:
 * pstate_snapshot_write_nosync (the state's owner, on the loop) writes the file into the
 * page cache and renames it into place, without fsync — a killed process loses nothing, and
 * a power loss at worst leaves a file that fails its CRC at load and is skipped;
 * pstate_snapshot_sync (any thread: it touches no pstate) then fsyncs the file and `dir`.
 * Both return 0 or ERR_IO (the failed call logged with its reason). */
int pstate_snapshot_write_nosync(const struct pstate *s, const char *dir, int64_t offset);
int pstate_snapshot_sync(const char *dir, int64_t offset);

/* Replaces the state with the newest valid snapshot in `dir` whose offset is <= `max_offset`
 * (the log end offset after recovery); snapshots past it are deleted, and so are corrupt
 * ones (CRC mismatch, bad length: one WARN line each), falling back to the next older.
 * *offset receives the snapshot's offset, or -1 if none was usable (state left empty): the
 * caller then replays the log from that offset (or from its start). Returns 0, ERR_IO or
 * ERR_NOMEM. */
int pstate_snapshot_load(struct pstate *s, const char *dir, int64_t max_offset, int64_t *offset);

/* Deletes all snapshots in `dir` except the newest `keep` (state is whole in each, so old
 * ones only cost disk). Returns the number deleted. */
int pstate_snapshot_prune(const char *dir, int keep);

#endif
