/* SPDX-License-Identifier: Apache-2.0 */
/* Producer ids: blocks of ids are asked of the active controller with AllocateProducerIds
 * through the outbound client (the controller writes a PRODUCER_IDS record, so two brokers
 * never get the same block). On a single node the controller is this node and the request
 * goes over loopback: one path whatever the cluster's shape. InitProducerId requests wait in
 * order while a claim is in flight. Ids left in a block at shutdown are never reused: the
 * next start claims anew. */
#include <stdlib.h>

#include "base/arena.h"
#include "base/err.h"
#include "base/slog.h"
#include "net/net.h"
#include "txn.h"

struct waiter {
    struct waiter *next;
    struct net_request *req;
};

struct txn {
    struct net_client *client;
    int32_t node_id;
    int64_t next_id, end_id; /* the current block: [next_id, end_id) */
    struct waiter *head, *tail;
    int claiming; /* 1 while a claim is in flight */
    int freed;    /* txn_free ran while a claim was in flight */
};

struct txn *txn_new(struct net_client *client, int32_t node_id)
{
    struct txn *t = calloc(1, sizeof *t);
    if (t) {
        t->client = client;
        t->node_id = node_id;
    }
    return t;
}

static void answer(struct net_request *req, int err, int64_t pid)
{
    struct InitProducerIdResponse *rs = arena_alloc(req->arena, sizeof *rs);
    if (rs == NULL) {
        net_close_connection(req);
        return;
    }
    rs->ErrorCode = (int16_t)err_wire(err);
    rs->ProducerId = err ? -1 : pid;
    rs->ProducerEpoch = err ? -1 : 0;
    net_respond(req, rs);
}

static void fail_waiters(struct txn *t, int err)
{
    while (t->head) {
        struct waiter *w = t->head;
        t->head = w->next;
        answer(w->req, err, -1);
        free(w);
    }
    t->tail = NULL;
}

static void claim(struct txn *t);

/* Serves waiters from the current block; claims a new block when it runs out. */
static void serve(struct txn *t)
{
    while (t->head && t->next_id < t->end_id) {
        struct waiter *w = t->head;
        t->head = w->next;
        if (t->head == NULL)
            t->tail = NULL;
        answer(w->req, 0, t->next_id++);
        free(w);
    }
    if (t->head && !t->claiming)
        claim(t);
}

/* The controller's answer: a block, an error, or no answer (timeout, lost connection,
 * shutdown). Waiters fail with a retriable error; the next InitProducerId asks again. */
static void on_claimed(void *arg, int err, const void *resp)
{
    struct txn *t = arg;
    const struct AllocateProducerIdsResponse *rs = resp;

    t->claiming = 0;
    if (t->freed) {
        free(t);
        return;
    }
    if (err == 0 && rs->ErrorCode == 0 && rs->ProducerIdStart >= 0 && rs->ProducerIdLen > 0) {
        t->next_id = rs->ProducerIdStart;
        t->end_id = rs->ProducerIdStart + rs->ProducerIdLen;
        slog_debug("txn", "producer ids [%lld, %lld) from the controller", (long long)t->next_id,
                   (long long)t->end_id);
        serve(t);
        return;
    }
    if (err == 0)
        err = rs->ErrorCode ? rs->ErrorCode : ERR_UNKNOWN_SERVER_ERROR;
    /* The controller moved: the next claim looks it up again. */
    if (err == ERR_NOT_CONTROLLER)
        net_client_disconnect(t->client, NET_CLIENT_CONTROLLER);
    slog_warn("txn", "cannot obtain a producer id block from the controller: %s", err_name(err));
    /* COORDINATOR_NOT_AVAILABLE is retriable for every client: the controller may be moving,
     * starting or out of reach. */
    fail_waiters(t, err == ERR_NOT_CONTROLLER || err == ERR_NETWORK_EXCEPTION ||
                            err == ERR_REQUEST_TIMED_OUT || err == ERR_SHUTDOWN
                        ? ERR_COORDINATOR_NOT_AVAILABLE
                        : ERR_COORDINATOR_LOAD_IN_PROGRESS);
}

static void claim(struct txn *t)
{
    struct AllocateProducerIdsRequest rq = {.BrokerId = t->node_id, .BrokerEpoch = -1};
    int rc = net_client_send(t->client, NET_CLIENT_CONTROLLER, PROTO_API_AllocateProducerIds, 0,
                             &rq, on_claimed, t);
    if (rc != 0) {
        fail_waiters(t,
                     rc == ERR_SHUTDOWN ? ERR_COORDINATOR_NOT_AVAILABLE : ERR_UNKNOWN_SERVER_ERROR);
        return;
    }
    t->claiming = 1;
}

void txn_init_producer_id(struct txn *t, struct net_request *req)
{
    struct InitProducerIdRequest *rq = req->body;
    struct waiter *w;

    if (rq->TransactionalId != NULL) {
        struct InitProducerIdResponse *rs = arena_alloc(req->arena, sizeof *rs);
        if (rs == NULL) {
            net_close_connection(req);
            return;
        }
        /* No transaction coordinator yet: say so rather than pretend. */
        rs->ErrorCode = ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
        rs->ProducerId = -1;
        rs->ProducerEpoch = -1;
        net_respond(req, rs);
        return;
    }
    w = calloc(1, sizeof *w);
    if (w == NULL) {
        net_close_connection(req);
        return;
    }
    w->req = req;
    if (t->tail)
        t->tail->next = w;
    else
        t->head = w;
    t->tail = w;
    if (!t->claiming)
        serve(t);
}

void txn_free(struct txn *t)
{
    if (t == NULL)
        return;
    fail_waiters(t, ERR_COORDINATOR_NOT_AVAILABLE);
    if (t->claiming)
        t->freed = 1; /* the pending claim's callback frees it */
    else
        free(t);
}
