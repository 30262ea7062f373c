/* SPDX-License-Identifier: Apache-2.0 */
/* txn internals shared by the coordinator's files: the struct txn, shards (one per
 * __transaction_state partition led here) with their entries, state writes that answer once
 * durable, the marker channel, and producer-id allocation. */
#ifndef TALLY_TXN_INT_H
#define TALLY_TXN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/metrics.h"
#include "base/slog.h"
#include "base/tclock.h"
#include "replica/coord_log.h"
#include "replica/replica.h"
#include "txn.h"
#include "txn_sm.h"

struct arena;
struct purgatory;
struct txn_hold;

/* One transactional id in a shard's table. */
struct tentry {
    struct tentry *next;
    uint64_t hash;
    struct txn_meta *m;
};

struct tshard {
    struct txn *t;
    int32_t partition;
    int32_t epoch; /* the coordinator epoch: the partition's leader epoch at load */
    bool loading;
    struct tentry **buckets;
    size_t n_buckets, n;
};

struct tmark; /* markers.c */
struct pid_waiter;

struct txn {
    uv_loop_t *loop;
    struct tclock *clock;
    struct net_client *client;
    txn_send_fn send;
    void *send_arg;
    struct replica_mgr *replicas;
    struct meta *meta;
    const struct props *config;
    int32_t node_id;

    /* Producer ids: the current block [next_id, end_id) and who waits for one. */
    int64_t next_id, end_id;
    struct pid_waiter *head, *tail;
    bool claiming;

    /* Configuration (static). */
    int32_t n_partitions_cfg; /* transaction.state.log.num.partitions */
    int32_t max_timeout_ms;   /* transaction.max.timeout.ms */
    int64_t expiration_ms;    /* transactional.id.expiration.ms */
    int64_t abort_interval_ms, expire_interval_ms;

    struct coord_log *log;  /* NULL: producer ids only */
    struct tshard **shards; /* indexed by partition; NULL = not led here */
    int32_t n_shards;
    struct tclock_timer abort_timer, expire_timer, marker_timer;
    bool timers_on;
    struct tmark *marks;    /* transactions whose markers are being sent */
    struct purgatory *pg;   /* held requests' timeouts (NULL: producer ids only) */
    struct txn_hold *holds; /* requests held until their entry's state moves */
    uint64_t next_mark_seq;
    unsigned outstanding; /* requests out on the client (claims, markers) */
    bool stopping, freed;
    void (*stop_cb)(void *arg);
    void *stop_arg;
    struct slog_limit warn;
    /* docs/metrics.md (NULL when metrics are off). */
    struct metrics_series *m_timed_out, *m_marker_seconds;
};

/* Sends through the hook or the client. */
int txn_send(struct txn *t, int32_t node_id, int16_t api_key, int16_t version, const void *req,
             net_client_cb cb, void *cb_arg);
/* A callback of a request sent with txn_send came back: frees a stopped txn on the last. */
void txn_outstanding_done(struct txn *t);

/* ---- producer ids (producer_ids.c) ---------------------------------------------------- */

/* Asks for one fresh producer id; cb(arg, err, id) runs exactly once, possibly before this
 * returns (err: COORDINATOR_NOT_AVAILABLE / COORDINATOR_LOAD_IN_PROGRESS, retriable). */
typedef void (*txn_pid_cb)(void *arg, int16_t err, int64_t producer_id);
void txn_pid_next(struct txn *t, txn_pid_cb cb, void *arg);
/* Fails every waiter (stop). */
void txn_pid_fail_all(struct txn *t, int16_t err);

/* ---- shards and entries (coord.c) ----------------------------------------------------- */

/* The __transaction_state partition count: the topic's when it exists, else the config's. */
int32_t txn_n_partitions(struct txn *t);
/* The shard serving `tid`: 0 and *out, or NOT_COORDINATOR (led elsewhere),
 * COORDINATOR_NOT_AVAILABLE (no topic / no leader / stopping), COORDINATOR_LOAD_IN_PROGRESS. */
int16_t txn_shard_for(struct txn *t, const char *tid, struct tshard **out);
/* The shard of `partition` when it is still the one loaded at `epoch`, else NULL. */
struct tshard *txn_shard_again(struct txn *t, int32_t partition, int32_t epoch);
struct txn_meta *txn_entry_find(struct tshard *sh, const char *tid);
/* Inserts m (taken: freed with the shard). 0 or ERR_NOMEM (m freed). */
int txn_entry_add(struct tshard *sh, struct txn_meta *m);
/* Removes and frees the entry of tid (if any). */
void txn_entry_remove(struct tshard *sh, const char *tid);
void txn_entry_each(struct tshard *sh, void (*fn)(void *arg, struct txn_meta *m), void *arg);

/* Writes transit `tr` of entry `m` (taken) to the shard's partition: m is pending meanwhile;
 * once durable the transit is applied (a Dead one removes the entry) and done(arg, 0, m) runs;
 * on failure the pending mark is dropped and done(arg, err, m or NULL) gets Kafka's error
 * (COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR, UNKNOWN_SERVER_ERROR). m is NULL in done when
 * the entry or its shard went meanwhile. done may run before this returns. */
typedef void (*txn_write_cb)(void *arg, int16_t err, struct txn_meta *m);
void txn_write(struct tshard *sh, struct txn_meta *m, struct txn_transit *tr, txn_write_cb done,
               void *arg);

/* ---- held requests (coord.c) ----------------------------------------------------------- */

/* How long an AddPartitionsToTxn / AddOffsetsToTxn may be held (txn_sm_hold_ms's bound).
 * Neither request carries a timeout of its own; this stays well below every client's request
 * timeout (librdkafka socket.timeout.ms 60 s, the Java client's and KafkaJS's 30 s). */
#define TXN_HOLD_MAX_MS 5000

/* A held request's outcome: 0 = the entry's state moved, serve the request again (it may be
 * held again, with the time it has left); else answer this error (CONCURRENT_TRANSACTIONS:
 * held for its time; NOT_COORDINATOR: the shard unloaded; COORDINATOR_NOT_AVAILABLE: stop). */
typedef void (*txn_hold_cb)(void *arg, int16_t err);

/* Holds a request of entry `tid` of shard `sh` for at most `wait_ms`: cb(arg, ...) runs
 * exactly once, never before this returns unless out of memory (then CONCURRENT_TRANSACTIONS
 * at once). */
void txn_hold(struct tshard *sh, const char *tid, int64_t wait_ms, txn_hold_cb cb, void *arg);
/* The state of `tid` in shard `partition` moved (a write applied or failed): its held
 * requests are served again (those held from within are served at the next move). */
void txn_holds_wake(struct txn *t, int32_t partition, const char *tid);
/* The shard of `partition` unloads: its held requests get NOT_COORDINATOR. */
void txn_holds_drop(struct txn *t, int32_t partition);

/* Maps PRODUCER_FENCED to INVALID_PRODUCER_EPOCH for versions before `fenced_from` (KIP-588:
 * older clients do not know PRODUCER_FENCED). */
int16_t txn_fenced_for(int16_t err, int16_t version, int16_t fenced_from);
/* The ErrorCode a handler answers for `err`: txn_fenced_for at the request's version, then
 * err_wire. */
int16_t txn_answer_code(struct net_request *req, int16_t err, int16_t fenced_from);
/* A zeroed response of `size` bytes in the request's arena; NULL (the connection closed) when
 * out of memory. */
void *txn_response_new(struct net_request *req, size_t size);

/* The Prepare* of `m` is durable: the coordinator's own abort or EndTxn's commit/abort goes
 * on to the markers (pending Complete* meanwhile). */
void txn_after_prepare(struct tshard *sh, struct txn_meta *m);

/* ---- the marker channel (markers.c) --------------------------------------------------- */

/* Sends the markers of m's Prepare* state to every partition's leader, then writes Complete*.
 * m is marked pending (Complete*) until then. */
void txn_markers_start(struct tshard *sh, struct txn_meta *m);
/* Forgets every marker of the shard's partition (unload). */
void txn_markers_drop(struct txn *t, int32_t partition);
void txn_markers_free_all(struct txn *t);
void txn_markers_init(struct txn *t);

/* ---- records (records.c) --------------------------------------------------------------- */

/* TransactionLogKey v0 / TransactionLogValue v0 into malloc()ed buffers. 0 or ERR_NOMEM. */
int txn_key_encode(const char *tid, uint8_t **out, int32_t *len);
int txn_value_encode(const struct txn_transit *tr, uint8_t **out, int32_t *len);
/* Decoding: the key's transactional id (in the arena), ERR_NOTFOUND for another key version;
 * a value into *tr (partitions malloc()ed: txn_transit_clear). */
int txn_key_decode(const uint8_t *buf, int32_t len, struct arena *ar, const char **tid);
int txn_value_decode(const uint8_t *buf, int32_t len, struct arena *ar, struct txn_transit *tr);

#endif
