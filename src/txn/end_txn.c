/* SPDX-License-Identifier: Apache-2.0 */
/* EndTxn v0–3: the client's commit or abort. Once its PrepareCommit/PrepareAbort is durable —
 * the point of no return — the client is answered and the markers go out (markers.c); until
 * Complete* is written, other requests of the id get CONCURRENT_TRANSACTIONS (the next
 * transaction's AddPartitionsToTxn / AddOffsetsToTxn are held until then instead). A retried
 * EndTxn of a transaction already completed the same way is answered NONE; an EndTxn with no
 * transaction is INVALID_TXN_STATE. v0–1 clients get INVALID_PRODUCER_EPOCH for
 * PRODUCER_FENCED (KIP-588). */
#include <stdlib.h>
#include <string.h>

#include "authz/authz.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/fault.h"
#include "net/net.h"
#include "txn_int.h"

#define PRODUCER_FENCED_FROM 2

struct end_call {
    struct txn *t;
    struct net_request *req;
    int32_t partition, epoch;
};

static void answer(struct net_request *req, int16_t err)
{
    struct EndTxnResponse *rs = txn_response_new(req, sizeof *rs);
    if (rs == NULL)
        return;
    rs->ErrorCode = txn_answer_code(req, err, PRODUCER_FENCED_FROM);
    net_respond(req, rs);
}

static void on_prepared(void *arg, int16_t err, struct txn_meta *m)
{
    struct end_call *c = arg;
    struct tshard *sh = txn_shard_again(c->t, c->partition, c->epoch);

    if (err == 0 && m && sh) {
        /* Durable: the outcome is decided whatever happens next. */
        struct net_request *req = c->req;
        free(c);
        answer(req, 0);
        txn_after_prepare(sh, m);
        return;
    }
    answer(c->req, err ? err : ERR_NOT_COORDINATOR);
    free(c);
}

void txn_end_txn(struct txn *t, struct net_request *req)
{
    struct EndTxnRequest *rq = req->body;
    struct tshard *sh;
    struct txn_meta *m;
    struct txn_transit tr;
    bool write;
    int16_t err;
    int rc;

    if (rq->TransactionalId == NULL || rq->TransactionalId[0] == '\0') {
        answer(req, ERR_INVALID_REQUEST);
        return;
    }
    if (!authz_allowed(req, PROTO_ACL_OP_WRITE, PROTO_RESOURCE_TRANSACTIONAL_ID,
                       rq->TransactionalId)) {
        answer(req, ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
        return;
    }
    err = txn_shard_for(t, rq->TransactionalId, &sh);
    if (err == 0 && (m = txn_entry_find(sh, rq->TransactionalId)) == NULL)
        err = ERR_INVALID_PRODUCER_ID_MAPPING;
    if (err != 0) {
        answer(req, err);
        return;
    }
    rc = txn_sm_end(m, rq->ProducerId, rq->ProducerEpoch, rq->Committed, true,
                    tclock_now_ms(t->clock), &write, &tr);
    if (rc != 0 || !write) {
        answer(req, rc == ERR_NOMEM ? ERR_COORDINATOR_NOT_AVAILABLE : (int16_t)rc);
        return;
    }
    struct end_call *c = calloc(1, sizeof *c);
    if (c == NULL) {
        txn_transit_clear(&tr);
        answer(req, ERR_COORDINATOR_NOT_AVAILABLE);
        return;
    }
    c->t = t;
    c->req = req;
    c->partition = sh->partition;
    c->epoch = sh->epoch;
    fault_point("txn:before_prepare");
    txn_write(sh, m, &tr, on_prepared, c);
}
