/* SPDX-License-Identifier: Apache-2.0 */
/* broker internals shared by the handler files. */
#ifndef TALLY_BROKER_INT_H
#define TALLY_BROKER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/metrics.h"
#include "broker.h"
#include "broker/client_quota.h"

struct arena;
struct purgatory;
struct meta;
struct net_client;
struct partition;
struct broker_verify;
struct broker_hanging;

struct broker {
    uv_loop_t *loop;
    struct tclock *clock;
    struct replica_mgr *replicas;
    int32_t node_id;
    void (*txn_complete)(void *arg, int32_t partition, int64_t producer_id, bool commit);
    void *txn_complete_arg;
    bool (*out_of_touch)(void *arg);
    void *out_of_touch_arg;
    struct meta *meta;
    struct net_client *client;
    bool txn_verify;
    int32_t txn_state_partitions;
    struct broker_verify *verifies; /* txn_verify.c: questions out to coordinators */
    struct broker_hanging *hanging; /* hanging.c: NULL when off */
    struct purgatory *pg;           /* deferred answers: parked Fetches, acks=all Produces */
    struct cq_table *quotas;        /* client_quota.h: byte rates per (principal, client id) */
    unsigned live_fetches;          /* Fetch calls not yet freed (parked, answering or sending) */
    unsigned live_lookups;          /* ListOffsets calls waiting for the thread pool */
    unsigned live_produces;         /* Produce requests whose checks run on the thread pool */
    /* Per-topic traffic (base/metrics.h), NULL when metrics are off: bytes of batches
     * appended and records in them; bytes sent to consumers and to followers. */
    struct metrics_family *m_bytes_in, *m_records_in, *m_bytes_out;
    struct metrics_series *m_replication_out;
    /* Produce and Fetch partition entries for partitions led here, by topic; batches a
     * leader refused, by topic and reason (broker_reject_reason). */
    struct metrics_family *m_produce_requests, *m_fetch_requests, *m_rejected;
    /* Hanging transactions this broker found and aborted (hanging.c). */
    struct metrics_series *m_hanging;
    bool stopping;
    bool releasing; /* broker_stop is completing the purgatory */
    void (*stop_cb)(void *arg);
    void *stop_arg;
};

/* Checks a client's idea of the leader epoch against the partition's (-1 = no check):
 * 0, FENCED_LEADER_EPOCH (client is behind) or UNKNOWN_LEADER_EPOCH (client is ahead). */
int broker_check_epoch(int32_t current, int32_t client);

/* Client quotas (Kafka's since KIP-219): records `bytes` of `key` (META_QUOTA_PRODUCER_BYTE_RATE
 * or META_QUOTA_CONSUMER_BYTE_RATE) for the request's (principal, client id) when a quota
 * applies to it (meta_quota_lookup, the principal's user name), and returns the throttle time
 * this earns (0 without a quota or within it), after muting the request's connection for that
 * long (net_mute). The caller puts it in the answer's ThrottleTimeMs. */
struct net_request;
int32_t broker_client_throttle(struct broker *b, struct net_request *req, int key, int64_t bytes);

/* The topic x partition response skeleton the per-partition handlers share (Produce, Fetch,
 * ListOffsets, DeleteRecords, DescribeProducers): the response's topic array mirrors the
 * request's, each response topic gets the request topic's name and a zeroed partition array
 * of the same length, each response partition the request partition's index. The handler
 * then fills in each partition's answer. A shape says where those fields lie (offsetof) in
 * the two messages' structs; request partitions may be bare int32 indexes (size 4, index at
 * 0). `rq_topics` and `rs_topics` point at PROTO_ARRAY fields. Memory comes from `ar`.
 * Returns 0 or ERR_NOMEM. */
struct broker_shape {
    size_t rq_topic, rq_name, rq_parts, rq_part, rq_index; /* request: sizes and offsets */
    size_t rs_topic, rs_name, rs_parts, rs_part, rs_index; /* response: the same */
};
int broker_response_skeleton(struct arena *ar, const void *rq_topics, void *rs_topics,
                             const struct broker_shape *shape);

/* ---- txn_verify.c: KIP-890 verification of transactional batches ------------------------ */

/* One partition of a Produce waiting for the coordinator's word. The caller fills topic,
 * index, p (held by the caller while waiting) and its own in/out; `token` and `error` (0 =
 * verified: append) are set here. */
struct broker_verify_part {
    const char *topic;
    int32_t index;
    struct partition *p;
    void *in, *out;
    uint32_t token;
    int16_t error;
};
/* Runs exactly once per broker_txn_verify, with every part's error set: later from the
 * client's answer, at once when the question cannot be sent, or from broker_stop (`stopped`:
 * answer now, the broker is going away). */
typedef void (*broker_verify_cb)(void *arg, struct broker_verify_part *parts, size_t n,
                                 bool stopped);
/* Asks the coordinator of `tid` whether the producer's transaction holds each partition
 * (AddPartitionsToTxn v4, VerifyOnly). `parts` must live until cb. */
void broker_txn_verify(struct broker *b, const char *tid, int64_t producer_id, int16_t epoch,
                       struct broker_verify_part *parts, size_t n, broker_verify_cb cb, void *arg);
/* broker_stop: answers every question still out (REQUEST_TIMED_OUT). */
void broker_verify_stop_all(struct broker *b);
/* Java's String.hashCode of a UTF-8 string. */
int32_t broker_java_string_hash(const char *s);

/* The `reason` label of tally_topic_rejected_batches_total for a produced batch the leader
 * refused with error `rc` (internal or wire code): "corrupt", "too_large", "invalid_record",
 * "out_of_order_sequence", "duplicate", "fenced", …, "other" for the rest (docs/metrics.md
 * lists them). A static string. */
const char *broker_reject_reason(int rc);

/* ---- hanging.c: self-healing of hanging transactions (broker_options.hanging_*) -------- */

/* Starts the check's timer when `hanging_check_ms` > 0 and the broker has a client and a
 * metadata image. Returns 0 or ERR_NOMEM. */
int broker_hanging_start(struct broker *b, int64_t check_ms, int64_t after_ms);
/* Stops the timer and frees the check's state; a round still out is forgotten (its answers,
 * which the client gives by its stop at the latest, abort nothing). */
void broker_hanging_stop(struct broker *b);

/* broker.c: frees a stopping broker once nothing waits in its purgatory or is being sent. */
void broker_maybe_finish_stop(struct broker *b);

#endif
