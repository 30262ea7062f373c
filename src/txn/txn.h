/* SPDX-License-Identifier: Apache-2.0 */
/* txn: producer ids and the transaction coordinator. Producer ids come in blocks that the
 * active controller grants (AllocateProducerIds over the outbound client), so an id is never
 * given twice — across restarts or brokers. Transactional id `t` is served by the leader of
 * __transaction_state partition abs(javaHash(t)) % transaction.state.log.num.partitions; this
 * broker keeps one shard per partition it leads (replica/coord_log.h): replayed from the
 * log on leadership (COORDINATOR_LOAD_IN_PROGRESS meanwhile; the coordinator epoch is the
 * partition's leader epoch at load), then every state change (txn_sm) is appended there as a
 * TransactionLogKey/Value record and answered once durable (acks=all). Prepare* is the point
 * of no return: once written, the COMMIT/ABORT markers go to every partition leader with
 * WriteTxnMarkers through the outbound client (retried until acknowledged), then Complete* is
 * written; a shard that loads a Prepare* entry sends its markers again. Ongoing transactions
 * past their timeout are aborted (with an epoch bump); idle ids expire. */
#ifndef TALLY_TXN_H
#define TALLY_TXN_H

#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

#include "net/net.h"

struct meta;
struct props;
struct replica_mgr;
struct tclock;

struct txn;

/* The coordinator's topic. */
#define TXN_TOPIC "__transaction_state"

/* How requests leave the coordinator: net_client_send's shape. Tests put a hook here to see
 * (and answer) AllocateProducerIds and WriteTxnMarkers without sockets. */
typedef int (*txn_send_fn)(void *arg, int32_t node_id, int16_t api_key, int16_t version,
                           const void *req, net_client_cb cb, void *cb_arg);

struct metrics;

struct txn_options {
    uv_loop_t *loop;
    struct tclock *clock;      /* every timer and clock read; borrowed */
    struct net_client *client; /* borrowed: id blocks (controller) and markers (leaders) */
    txn_send_fn send;          /* NULL: net_client_send on `client` */
    void *send_arg;
    struct replica_mgr *replicas; /* NULL: producer ids only (no coordinator) */
    struct meta *meta;            /* borrowed: topics, leaders */
    const struct props *config;   /* static config (transaction.*, transactional.id.*) */
    int32_t node_id;
    /* Where the coordinator's counters go (docs/metrics.md: timed-out aborts, marker
     * latency); borrowed. NULL: not counted. */
    struct metrics *metrics;
};

/* NULL on out of memory. With `replicas`, subscribes to leadership events and starts loading
 * the __transaction_state partitions already led here. */
struct txn *txn_new(const struct txn_options *opts);

/* Stops: waiting requests are answered (COORDINATOR_NOT_AVAILABLE), shards unloaded, marker
 * sends abandoned (a restart resends them from the log); `cb(arg)` runs once nothing is in
 * flight any more, after which the struct is freed (an id-block request still out frees it
 * when the client answers it: stop the client after this). Stop it before the replica
 * manager. */
void txn_stop(struct txn *t, void (*cb)(void *arg), void *arg);

/* ---- request handlers (dispatch): each finishes `req` exactly once -------------------- */

/* InitProducerId 0–4: without a transactional id a fresh producer id at epoch 0 (also for a
 * v3+ idempotent "bump"); with one, the coordinator's rules (txn_sm.h). */
void txn_init_producer_id(struct txn *t, struct net_request *req);
void txn_add_partitions_to_txn(struct txn *t, struct net_request *req);
void txn_add_offsets_to_txn(struct txn *t, struct net_request *req);
void txn_end_txn(struct txn *t, struct net_request *req);
void txn_describe_transactions(struct txn *t, struct net_request *req);
void txn_list_transactions(struct txn *t, struct net_request *req);

/* ---- diagnostics and tests ------------------------------------------------------------ */

/* Shards led here, and how many of those still load. */
void txn_shards(const struct txn *t, int32_t *led, int32_t *loading);
/* Transactions whose markers are still being sent. */
int32_t txn_markers_pending(const struct txn *t);
/* Metrics: the transactions of the shards led and loaded here, counted by state into
 * counts[s] for enum txn_state s (txn_sm.h; n entries, n >= TXN_N_STATES, zeroed first). */
void txn_count_states(const struct txn *t, int64_t *counts, size_t n);
/* The console (src/exporter/console_api.c): visits every transactional id of the shards led
 * and loaded here, with its current state (txn_sm.h's struct txn_meta, read only: the callback
 * must not keep it or call into the coordinator). NULL t: no-op. */
struct txn_meta;
void txn_for_each(const struct txn *t, void (*fn)(void *arg, const struct txn_meta *m), void *arg);
/* Appends to __transaction_state waiting to be replicated (metrics). */
size_t txn_waiting(const struct txn *t);
/* Runs the periodic checks now (timed-out transactions, expired ids), as their timers do. */
void txn_check_timeouts(struct txn *t);
void txn_check_expired(struct txn *t);

#endif
