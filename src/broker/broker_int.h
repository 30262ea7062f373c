/* SPDX-License-Identifier: Apache-2.0 */
/* broker internals shared by the handler files. */
#ifndef TALLY_BROKER_INT_H
#define TALLY_BROKER_INT_H

#include <stdbool.h>

#include "broker.h"

struct fetch_call;

struct broker {
    uv_loop_t *loop;
    struct tclock *clock;
    struct replica_mgr *replicas;
    int32_t node_id;
    struct fetch_call *parked; /* Fetches waiting for data (list) */
    unsigned live_fetches;     /* Fetch calls not yet freed (parked, answering or sending) */
    unsigned live_lookups;     /* ListOffsets calls waiting for the thread pool */
    bool stopping;
    void (*stop_cb)(void *arg);
    void *stop_arg;
};

/* Checks a client's idea of the leader epoch against the partition's (-1 = no check):
 * 0, FENCED_LEADER_EPOCH (client is behind) or UNKNOWN_LEADER_EPOCH (client is ahead). */
int broker_check_epoch(int32_t current, int32_t client);

/* broker.c: frees a stopping broker once nothing is parked or closing. */
void broker_maybe_finish_stop(struct broker *b);

/* fetch.c: answers every parked fetch now (for stop). */
void fetch_release_parked(struct broker *b);

#endif
