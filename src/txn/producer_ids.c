/* SPDX-License-Identifier: Apache-2.0 */
/* Producer ids: blocks of PID_BLOCK ids are claimed through the metadata quorum (a
 * PRODUCER_IDS record whose first id must be the cluster's next free id, so two claimants
 * cannot get the same block); InitProducerId requests wait in order while a claim is in
 * flight. Ids left in a block at shutdown are never reused: the next start claims anew. */
#include <stdlib.h>

#include "base/arena.h"
#include "base/err.h"
#include "base/log.h"
#include "meta/meta.h"
#include "net/net.h"
#include "txn.h"

#define PID_BLOCK 1000
#define MAX_CLAIM_TRIES 5

struct waiter {
    struct waiter *next;
    struct net_request *req;
};

struct txn {
    struct meta *meta;
    int32_t node_id;
    int64_t next_id, end_id; /* the current block: [next_id, end_id) */
    struct waiter *head, *tail;
    int claim_tries;
    int claiming; /* 1 while a claim is in flight */
    int freed;    /* txn_free ran while a claim was in flight */
};

struct txn *txn_new(struct meta *m, int32_t node_id)
{
    struct txn *t = calloc(1, sizeof *t);
    if (t) {
        t->meta = m;
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

static void on_claimed(void *arg, int err)
{
    struct txn *t = arg;
    t->claiming = 0;
    if (t->freed) {
        free(t);
        return;
    }
    if (err == 0) {
        t->claim_tries = 0;
        serve(t);
        return;
    }
    t->next_id = t->end_id = 0; /* the block was not granted */
    /* Another broker took that block first: read the new next id and try again. */
    if (err == ERR_DUPLICATE_RESOURCE && ++t->claim_tries < MAX_CLAIM_TRIES) {
        claim(t);
        return;
    }
    log_warn("txn", "cannot claim a producer id block: %s", err_name(err));
    t->claim_tries = 0;
    fail_waiters(t, err == ERR_NOT_CONTROLLER ? ERR_COORDINATOR_NOT_AVAILABLE
                                              : ERR_COORDINATOR_LOAD_IN_PROGRESS);
}

static void claim(struct txn *t)
{
    int64_t first = meta_next_producer_id(t->meta);
    struct meta_record rec = {.type = META_REC_PRODUCER_IDS};
    int rc;

    rec.u.producer_ids.broker_id = t->node_id;
    rec.u.producer_ids.first_id = first;
    rec.u.producer_ids.size = PID_BLOCK;
    /* The block is ours once the record applies; it is set now and served from only after
     * on_claimed reports success (while claiming, nothing is served). */
    rc = meta_propose(t->meta, &rec, 1, on_claimed, t);
    if (rc != 0) {
        fail_waiters(t, rc == ERR_NOT_CONTROLLER ? ERR_COORDINATOR_NOT_AVAILABLE
                                                 : ERR_UNKNOWN_SERVER_ERROR);
        return;
    }
    t->claiming = 1;
    t->next_id = first;
    t->end_id = first + PID_BLOCK;
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
