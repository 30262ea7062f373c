/* SPDX-License-Identifier: Apache-2.0 */
/* Producer ids: blocks of ids are asked of the active controller with AllocateProducerIds
 * through the outbound client (the controller writes a PRODUCER_IDS record, so two brokers
 * never get the same block). On a single node the controller is this node and the request
 * goes over loopback: one path whatever the cluster's shape. Callers (idempotent
 * InitProducerId, the transaction coordinator) wait in order while a claim is in flight. Ids
 * left in a block at shutdown are never reused: the next start claims anew. */
#include <stdlib.h>

#include "base/arena.h"
#include "base/err.h"
#include "base/slog.h"
#include "net/net.h"
#include "txn_int.h"

struct pid_waiter {
    struct pid_waiter *next;
    txn_pid_cb cb;
    void *arg;
};

void txn_pid_fail_all(struct txn *t, int16_t err)
{
    while (t->head) {
        struct pid_waiter *w = t->head;
        t->head = w->next;
        if (t->head == NULL)
            t->tail = NULL;
        w->cb(w->arg, err, -1);
        free(w);
    }
    t->tail = NULL;
}

static void claim(struct txn *t);

/* Serves waiters from the current block; claims a new block when it runs out. */
static void serve(struct txn *t)
{
    while (t->head && t->next_id < t->end_id) {
        struct pid_waiter *w = t->head;
        t->head = w->next;
        if (t->head == NULL)
            t->tail = NULL;
        w->cb(w->arg, 0, t->next_id++);
        free(w);
    }
    if (t->head && !t->claiming && !t->stopping)
        claim(t);
}

/* The controller's answer: a block, an error, or no answer (timeout, lost connection,
 * shutdown). Waiters fail with a retriable error; the next InitProducerId asks again. */
static void on_claimed(void *arg, int err, const void *resp)
{
    struct txn *t = arg;
    const struct AllocateProducerIdsResponse *rs = resp;

    t->claiming = false;
    if (t->freed) {
        txn_outstanding_done(t);
        return;
    }
    if (err == 0 && rs->ErrorCode == 0 && rs->ProducerIdStart >= 0 && rs->ProducerIdLen > 0) {
        t->next_id = rs->ProducerIdStart;
        t->end_id = rs->ProducerIdStart + rs->ProducerIdLen;
        slog_debug("txn", "producer ids [%lld, %lld) from the controller", (long long)t->next_id,
                   (long long)t->end_id);
        serve(t);
        txn_outstanding_done(t);
        return;
    }
    if (err == 0)
        err = rs->ErrorCode ? rs->ErrorCode : ERR_UNKNOWN_SERVER_ERROR;
    /* The controller moved: the next claim looks it up again. */
    if (err == ERR_NOT_CONTROLLER && t->client && t->send == NULL)
        net_client_disconnect(t->client, NET_CLIENT_CONTROLLER);
    slog_warn("txn", "cannot obtain a producer id block from the controller: %s", err_name(err));
    /* COORDINATOR_NOT_AVAILABLE is retriable for every client: the controller may be moving,
     * starting or out of reach. */
    txn_pid_fail_all(t, err == ERR_NOT_CONTROLLER || err == ERR_NETWORK_EXCEPTION ||
                                err == ERR_REQUEST_TIMED_OUT || err == ERR_SHUTDOWN
                            ? ERR_COORDINATOR_NOT_AVAILABLE
                            : ERR_COORDINATOR_LOAD_IN_PROGRESS);
    txn_outstanding_done(t);
}

static void claim(struct txn *t)
{
    struct AllocateProducerIdsRequest rq = {.BrokerId = t->node_id, .BrokerEpoch = -1};
    int rc =
        txn_send(t, NET_CLIENT_CONTROLLER, PROTO_API_AllocateProducerIds, 0, &rq, on_claimed, t);
    if (rc != 0) {
        txn_pid_fail_all(t, rc == ERR_SHUTDOWN ? ERR_COORDINATOR_NOT_AVAILABLE
                                               : ERR_UNKNOWN_SERVER_ERROR);
        return;
    }
    t->claiming = true;
}

void txn_pid_next(struct txn *t, txn_pid_cb cb, void *arg)
{
    struct pid_waiter *w;

    if (t->stopping) {
        cb(arg, ERR_COORDINATOR_NOT_AVAILABLE, -1);
        return;
    }
    w = calloc(1, sizeof *w);
    if (w == NULL) {
        cb(arg, ERR_COORDINATOR_NOT_AVAILABLE, -1);
        return;
    }
    w->cb = cb;
    w->arg = arg;
    if (t->tail)
        t->tail->next = w;
    else
        t->head = w;
    t->tail = w;
    if (!t->claiming)
        serve(t);
}
