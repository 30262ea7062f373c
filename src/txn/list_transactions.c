/* SPDX-License-Identifier: Apache-2.0 */
/* ListTransactions v0 (KIP-664): the transactional ids of every shard led here, filtered by
 * state names (unknown names are echoed in UnknownStateFilters, as Kafka) and producer ids;
 * COORDINATOR_LOAD_IN_PROGRESS while a shard loads. Dead entries are never listed. */
#include <string.h>

#include "authz/authz.h"
#include "base/arena.h"
#include "base/err.h"
#include "net/net.h"
#include "txn_int.h"

struct lister {
    struct arena *ar;
    const struct ListTransactionsRequest *rq;
    unsigned states; /* bit per state; 0 = all */
    struct ListTransactionsResponse *rs;
    struct net_request *req; /* whose principal must DESCRIBE each id listed */
    int32_t cap;
    bool nomem;
};

static void list_one(void *arg, struct txn_meta *m)
{
    struct lister *l = arg;
    const struct txn_transit *c = &m->cur;

    if (l->nomem || c->state == TXN_DEAD || (l->states && !(l->states & (1u << c->state))))
        return;
    /* Only the transactional ids the principal may DESCRIBE (Kafka filters them). */
    if (!authz_allowed_quiet(l->req, PROTO_ACL_OP_DESCRIBE, PROTO_RESOURCE_TRANSACTIONAL_ID,
                             m->tid))
        return;
    if (l->rq->ProducerIdFilters.n > 0) {
        bool hit = false;
        for (int32_t i = 0; i < l->rq->ProducerIdFilters.n && !hit; i++)
            hit = l->rq->ProducerIdFilters.v[i] == c->producer_id;
        if (!hit)
            return;
    }
    if (l->rs->TransactionStates.n == l->cap) {
        int32_t cap = l->cap ? l->cap * 2 : 64;
        struct ListTransactionsTransactionState *v = arena_alloc(l->ar, (size_t)cap * sizeof *v);
        if (v == NULL) {
            l->nomem = true;
            return;
        }
        if (l->cap)
            memcpy(v, l->rs->TransactionStates.v, (size_t)l->cap * sizeof *v);
        l->rs->TransactionStates.v = v;
        l->cap = cap;
    }
    struct ListTransactionsTransactionState *s =
        &l->rs->TransactionStates.v[l->rs->TransactionStates.n++];
    s->TransactionalId = arena_strndup(l->ar, m->tid, strlen(m->tid));
    s->ProducerId = c->producer_id;
    s->TransactionState = (char *)txn_state_name(c->state);
    if (s->TransactionalId == NULL)
        l->nomem = true;
}

void txn_list_transactions(struct txn *t, struct net_request *req)
{
    struct ListTransactionsRequest *rq = req->body;
    struct ListTransactionsResponse *rs = arena_alloc(req->arena, sizeof *rs);
    struct lister l = {.ar = req->arena, .rq = rq, .rs = rs, .req = req};
    int32_t nf = rq->StateFilters.n > 0 ? rq->StateFilters.n : 0;

    if (rs == NULL)
        goto nomem;
    memset(rs, 0, sizeof *rs);
    rs->UnknownStateFilters.v = arena_alloc(req->arena, ((size_t)nf + 1) * sizeof(char *));
    rs->TransactionStates.v = arena_alloc(req->arena, sizeof *rs->TransactionStates.v);
    if (rs->UnknownStateFilters.v == NULL || rs->TransactionStates.v == NULL)
        goto nomem;
    for (int32_t i = 0; i < nf; i++) {
        int s = txn_state_by_name(rq->StateFilters.v[i]);
        if (s < 0)
            rs->UnknownStateFilters.v[rs->UnknownStateFilters.n++] = rq->StateFilters.v[i];
        else
            l.states |= 1u << s;
    }
    /* Only unknown names: nothing can match. */
    if (nf > 0 && l.states == 0) {
        net_respond(req, rs);
        return;
    }
    for (int32_t i = 0; i < t->n_shards; i++) {
        struct tshard *sh = t->shards[i];
        if (sh == NULL)
            continue;
        if (sh->loading) {
            rs->ErrorCode = ERR_COORDINATOR_LOAD_IN_PROGRESS;
            continue;
        }
        txn_entry_each(sh, list_one, &l);
    }
    if (l.nomem)
        goto nomem;
    net_respond(req, rs);
    return;

nomem:
    net_close_connection(req);
}
