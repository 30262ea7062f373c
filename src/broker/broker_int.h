/* SPDX-License-Identifier: Apache-2.0 */
/* broker internals shared by the handler files. */
#ifndef TALLY_BROKER_INT_H
#define TALLY_BROKER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "broker.h"

struct arena;
struct purgatory;

struct broker {
    uv_loop_t *loop;
    struct tclock *clock;
    struct replica_mgr *replicas;
    int32_t node_id;
    struct purgatory *pg;  /* deferred answers: parked Fetches, acks=all Produces */
    unsigned live_fetches; /* Fetch calls not yet freed (parked, answering or sending) */
    unsigned live_lookups; /* ListOffsets calls waiting for the thread pool */
    bool stopping;
    bool releasing; /* broker_stop is completing the purgatory */
    void (*stop_cb)(void *arg);
    void *stop_arg;
};

/* Checks a client's idea of the leader epoch against the partition's (-1 = no check):
 * 0, FENCED_LEADER_EPOCH (client is behind) or UNKNOWN_LEADER_EPOCH (client is ahead). */
int broker_check_epoch(int32_t current, int32_t client);

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

/* broker.c: frees a stopping broker once nothing waits in its purgatory or is being sent. */
void broker_maybe_finish_stop(struct broker *b);

#endif
