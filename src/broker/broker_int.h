/* SPDX-License-Identifier: Apache-2.0 */
/* broker internals shared by the handler files. */
#ifndef TALLY_BROKER_INT_H
#define TALLY_BROKER_INT_H

#include <stdbool.h>

#include "broker.h"

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

/* broker.c: frees a stopping broker once nothing waits in its purgatory or is being sent. */
void broker_maybe_finish_stop(struct broker *b);

#endif
