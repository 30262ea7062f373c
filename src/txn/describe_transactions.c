/* SPDX-License-Identifier: Apache-2.0 */
/* DescribeTransactions v0 (KIP-664): per transactional id its state, producer id and epoch,
 * timeout, start time and partitions; TRANSACTIONAL_ID_NOT_FOUND for an id this coordinator
 * does not know, NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS / COORDINATOR_NOT_AVAILABLE
 * when it is not (yet) its coordinator. */
#include <string.h>

#include "authz/authz.h"
#include "base/arena.h"
#include "base/err.h"
#include "net/net.h"
#include "txn_int.h"

static int describe_one(struct txn *t, struct arena *ar, const char *tid,
                        struct DescribeTransactionsTransactionState *s)
{
    struct tshard *sh;
    struct txn_meta *m = NULL;
    int16_t err;

    memset(s, 0, sizeof *s);
    s->TransactionalId = (char *)(tid ? tid : "");
    s->TransactionState = "";
    s->ProducerId = -1;
    s->ProducerEpoch = -1;
    s->TransactionStartTimeMs = -1;
    err = tid ? txn_shard_for(t, tid, &sh) : ERR_INVALID_REQUEST;
    if (err == 0 && (m = txn_entry_find(sh, tid)) == NULL)
        err = ERR_TRANSACTIONAL_ID_NOT_FOUND;
    s->ErrorCode = err;
    if (err != 0)
        return 0;
    const struct txn_transit *c = &m->cur;
    s->TransactionState = (char *)txn_state_name(c->state);
    s->TransactionTimeoutMs = c->timeout_ms;
    s->TransactionStartTimeMs = c->start_ms;
    s->ProducerId = c->producer_id;
    s->ProducerEpoch = c->producer_epoch;
    s->Topics.v = arena_alloc(ar, ((size_t)c->n_parts + 1) * sizeof *s->Topics.v);
    int32_t *ids = arena_alloc(ar, ((size_t)c->n_parts + 1) * sizeof *ids);
    if (s->Topics.v == NULL || ids == NULL)
        return ERR_NOMEM;
    for (int32_t i = 0; i < c->n_parts; i++) {
        struct DescribeTransactionsTopicData *td =
            s->Topics.n > 0 ? &s->Topics.v[s->Topics.n - 1] : NULL;
        if (td == NULL || strcmp(td->Topic, c->parts[i].topic) != 0) {
            td = &s->Topics.v[s->Topics.n++];
            td->Topic = arena_strndup(ar, c->parts[i].topic, strlen(c->parts[i].topic));
            if (td->Topic == NULL)
                return ERR_NOMEM;
            td->Partitions.v = &ids[i];
            td->Partitions.n = 0;
        }
        td->Partitions.v[td->Partitions.n++] = c->parts[i].partition;
    }
    return 0;
}

void txn_describe_transactions(struct txn *t, struct net_request *req)
{
    struct DescribeTransactionsRequest *rq = req->body;
    struct DescribeTransactionsResponse *rs = arena_alloc(req->arena, sizeof *rs);
    int32_t n = rq->TransactionalIds.n > 0 ? rq->TransactionalIds.n : 0;

    if (rs == NULL)
        goto nomem;
    memset(rs, 0, sizeof *rs);
    rs->TransactionStates.v =
        arena_alloc(req->arena, ((size_t)n + 1) * sizeof *rs->TransactionStates.v);
    if (rs->TransactionStates.v == NULL)
        goto nomem;
    rs->TransactionStates.n = n;
    for (int32_t i = 0; i < n; i++) {
        /* DESCRIBE on each transactional id. */
        if (rq->TransactionalIds.v[i] != NULL &&
            !authz_allowed(req, PROTO_ACL_OP_DESCRIBE, PROTO_RESOURCE_TRANSACTIONAL_ID,
                           rq->TransactionalIds.v[i])) {
            struct DescribeTransactionsTransactionState *s = &rs->TransactionStates.v[i];
            memset(s, 0, sizeof *s);
            s->TransactionalId = rq->TransactionalIds.v[i];
            s->ErrorCode = ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
            s->TransactionState = "";
            s->ProducerId = -1;
            s->ProducerEpoch = -1;
            continue;
        }
        if (describe_one(t, req->arena, rq->TransactionalIds.v[i], &rs->TransactionStates.v[i]) !=
            0)
            goto nomem;
    }
    net_respond(req, rs);
    return;

nomem:
    net_close_connection(req);
}
