/* SPDX-License-Identifier: Apache-2.0 */
/* broker: construction, stop, and what the handlers share. */
#include <stdlib.h>

#include "base/err.h"
#include "base/purgatory.h"
#include "broker_int.h"

struct broker *broker_new(const struct broker_options *opts)
{
    struct broker *b = calloc(1, sizeof *b);
    if (b == NULL)
        return NULL;
    b->loop = opts->loop;
    b->clock = opts->clock;
    b->replicas = opts->replicas;
    b->node_id = opts->node_id;
    b->pg = purgatory_new(opts->clock);
    if (b->pg == NULL) {
        free(b);
        return NULL;
    }
    return b;
}

int broker_check_epoch(int32_t current, int32_t client)
{
    if (client < 0 || client == current)
        return 0;
    return client < current ? ERR_FENCED_LEADER_EPOCH : ERR_UNKNOWN_LEADER_EPOCH;
}

void broker_maybe_finish_stop(struct broker *b)
{
    if (!b->stopping || b->releasing || purgatory_waiting(b->pg) > 0 || b->live_fetches > 0 ||
        b->live_lookups > 0)
        return;
    void (*cb)(void *) = b->stop_cb;
    void *arg = b->stop_arg;
    purgatory_free(b->pg);
    free(b);
    if (cb)
        cb(arg);
}

void broker_stop(struct broker *b, void (*cb)(void *arg), void *arg)
{
    b->stopping = true;
    b->stop_cb = cb;
    b->stop_arg = arg;
    /* An answer to a closed connection is "sent" at once, which may bring the counts to
     * zero inside the loop below: the broker is freed only after it. */
    b->releasing = true;
    purgatory_complete_all(b->pg);
    b->releasing = false;
    broker_maybe_finish_stop(b);
}
