/* SPDX-License-Identifier: Apache-2.0 */
/* broker: the data-plane APIs — Produce, Fetch (with long polling), ListOffsets,
 * DeleteRecords — and the requests about hosted partitions (DescribeProducers,
 * DescribeLogDirs), answered from the partitions this node hosts (replica/). */
#ifndef TALLY_BROKER_H
#define TALLY_BROKER_H

#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

struct metrics;
struct net_request;
struct meta;
struct net_client;
struct replica_mgr;
struct tclock;

struct broker;

struct broker_options {
    uv_loop_t *loop;
    struct tclock *clock;         /* time service; borrowed, must outlive the broker */
    struct replica_mgr *replicas; /* borrowed; must outlive the broker */
    int32_t node_id;
    /* Transactions. A COMMIT/ABORT marker made durable on a `__consumer_offsets` partition is
     * reported here (main.c wires it to group_txn_complete; the broker does not know groups);
     * NULL = nobody listens. */
    void (*txn_complete)(void *arg, int32_t partition, int64_t producer_id, bool commit);
    void *txn_complete_arg;
    /* KIP-890 verification of transactional batches (transaction.partition.verification.enable,
     * default true): asked through `client` of the leader of the transactional id's
     * __transaction_state partition (of `txn_state_partitions`,
     * transaction.state.log.num.partitions, 0 = 50), found in `meta`. Both borrowed; without
     * a client nothing can be verified and transactional batches are refused with
     * NOT_ENOUGH_REPLICAS while verification is on. */
    struct meta *meta;
    struct net_client *client;
    bool txn_verify;
    int32_t txn_state_partitions;
    /* Self-healing of hanging transactions (hanging.c): every `hanging_check_ms`
     * (transaction.abort.timed.out.transaction.cleanup.interval.ms; 0 = never) the ongoing
     * transactions on partitions led here whose producer has not written for longer than
     * `hanging_after_ms` (transaction.max.timeout.ms + BROKER_HANGING_MARGIN_MS, by the
     * monotonic clock) are looked up at every registered, unfenced broker's transaction
     * coordinators through `client` (ListTransactions by producer id). One is aborted here
     * (an ABORT marker written by this broker) only when two consecutive rounds found that
     * every broker answered without error, every __transaction_state partition is led by one
     * of them with the same leader and epoch throughout, and no coordinator has the producer
     * in Ongoing, PrepareCommit or PrepareAbort: a transaction whose COMMIT markers are still
     * in flight is never torn. Needs `meta` and `client`; without them nothing is aborted. */
    int64_t hanging_check_ms;
    int64_t hanging_after_ms;
    /* Client byte-rate quotas (client_quota.h): quota.window.num samples of
     * quota.window.size.seconds; 0: Kafka's defaults (11 of 1 s). */
    int quota_window_num;
    int64_t quota_window_ms;
    /* Where the per-topic traffic counters go (docs/metrics.md: bytes in and out, records
     * in); borrowed, must outlive the broker. NULL: not counted. */
    struct metrics *metrics;
    /* Whether this broker has heard nothing from the controller for longer than
     * broker.session.timeout.ms, or heard that it is fenced (main.c wires
     * lifecycle_out_of_touch): the controller has then most likely moved its leaderships,
     * which it has not learnt yet. NULL = never out of touch. Produce asks it only for a batch
     * whose sequence does not follow (produce.c): see there. */
    bool (*out_of_touch)(void *arg);
    void *out_of_touch_arg;
};

/* How long past transaction.max.timeout.ms a transaction may stay open before it counts as
 * hanging: the coordinator aborts a transaction at its timeout, at most that, so this leaves
 * the coordinator its own abort first. */
#define BROKER_HANGING_MARGIN_MS 60000

/* NULL on out of memory. */
struct broker *broker_new(const struct broker_options *opts);

/* Answers every deferred request now (a parked Fetch with what it has, an acks=all Produce
 * still waiting with REQUEST_TIMED_OUT) and frees the broker once the answers are sent;
 * `cb` then runs. */
void broker_stop(struct broker *b, void (*cb)(void *arg), void *arg);
/* Requests parked in the broker's purgatory: acks=all Produces waiting for the ISR or a
 * flush, Fetches waiting for min.bytes (metrics). */
size_t broker_waiting(const struct broker *b);

/* Rounds of the hanging-transaction check finished so far (one that found nothing idle
 * included): for tests and diagnostics. */
uint64_t broker_hanging_rounds(const struct broker *b);

/* The request quota (request_percentage, KIP-124): the share of the event loop's time a
 * (principal, client id) may use, in percent of it per quota window. The dispatcher calls
 * begin before a request's handler and end after the handler returned, with the loop time
 * the call took (the handler and, for an answer given within it, its encoding); work on the
 * thread pool and a parked request's later answer do not count. The time a request takes
 * counts toward the throttle of the client's next requests: its own answer may be encoded
 * before its time is known. */
struct cq_entry;
struct broker_request_time {
    struct cq_entry *entry;
    double quota; /* percent */
};
/* When a request_percentage quota applies to the request's (principal, client id): puts the
 * throttle its earlier requests earned (0 within the quota) in req->throttle_ms, mutes the
 * connection for as long (net_mute), fills *t and returns true. Without a quota (or out of
 * memory) returns false: nothing to record. */
bool broker_request_time_begin(struct broker *b, struct net_request *req,
                               struct broker_request_time *t);
/* Records `ns` of loop time for *t's client (its request may be finished and gone). */
void broker_request_time_end(struct broker *b, const struct broker_request_time *t, uint64_t ns);

/* Request handlers: each finishes `req` exactly once. */
void broker_produce(struct broker *b, struct net_request *req);
void broker_fetch(struct broker *b, struct net_request *req);
void broker_list_offsets(struct broker *b, struct net_request *req);
void broker_delete_records(struct broker *b, struct net_request *req);
void broker_describe_producers(struct broker *b, struct net_request *req);
/* DescribeLogDirs v0-4 (describe_log_dirs.c): the log directory and its partitions' sizes. */
void broker_describe_log_dirs(struct broker *b, struct net_request *req);
/* OffsetForLeaderEpoch v0-4 (offset_for_leader_epoch.c). */
void broker_offset_for_leader_epoch(struct broker *b, struct net_request *req);
/* WriteTxnMarkers v0-1 (write_txn_markers.c). */
void broker_write_txn_markers(struct broker *b, struct net_request *req);

#endif
