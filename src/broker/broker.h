/* SPDX-License-Identifier: Apache-2.0 */
/* broker: the data-plane APIs — Produce, Fetch (with long polling), ListOffsets,
 * DeleteRecords — answered from the partitions this node hosts (replica/). */
#ifndef TALLY_BROKER_H
#define TALLY_BROKER_H

#include <stdint.h>

#include <uv.h>

struct net_request;
struct replica_mgr;
struct tclock;

struct broker;

struct broker_options {
    uv_loop_t *loop;
    struct tclock *clock;         /* time service; borrowed, must outlive the broker */
    struct replica_mgr *replicas; /* borrowed; must outlive the broker */
    int32_t node_id;
};

/* NULL on out of memory. */
struct broker *broker_new(const struct broker_options *opts);

/* Answers every deferred request now (a parked Fetch with what it has, an acks=all Produce
 * still waiting with REQUEST_TIMED_OUT) and frees the broker once the answers are sent;
 * `cb` then runs. */
void broker_stop(struct broker *b, void (*cb)(void *arg), void *arg);

/* Request handlers: each finishes `req` exactly once. */
void broker_produce(struct broker *b, struct net_request *req);
void broker_fetch(struct broker *b, struct net_request *req);
void broker_list_offsets(struct broker *b, struct net_request *req);
void broker_delete_records(struct broker *b, struct net_request *req);
void broker_describe_producers(struct broker *b, struct net_request *req);

#endif
