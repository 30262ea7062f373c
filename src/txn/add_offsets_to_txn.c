/* SPDX-License-Identifier: Apache-2.0 */
/* AddOffsetsToTxn v0–3: the group's __consumer_offsets partition (abs(javaHash(group)) %
 * its partition count, as the group coordinator places it) joins the transaction, so the
 * markers reach the group coordinator's TxnOffsetCommit offsets. Errors as AddPartitionsToTxn,
 * and held as it is while the previous transaction completes;
 * v0–1 clients get INVALID_PRODUCER_EPOCH for PRODUCER_FENCED (KIP-588). */
#include <stdlib.h>
#include <string.h>

#include "authz/authz.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/jhash.h"
#include "base/props.h"
#include "meta/meta.h"
#include "net/net.h"
#include "txn_int.h"

#define PRODUCER_FENCED_FROM 2
#define OFFSETS_TOPIC "__consumer_offsets"

static void answer(struct net_request *req, int16_t err)
{
    struct AddOffsetsToTxnResponse *rs = txn_response_new(req, sizeof *rs);
    if (rs == NULL)
        return;
    rs->ErrorCode = txn_answer_code(req, err, PRODUCER_FENCED_FROM);
    net_respond(req, rs);
}

static void on_added(void *arg, int16_t err, struct txn_meta *m)
{
    (void)m;
    answer(arg, err);
}

/* One AddOffsetsToTxn being served (in the request's arena). */
struct offs_call {
    struct txn *t;
    struct net_request *req;
    int64_t since; /* when it was first held (txn_sm_hold_ms), -1 = never */
};

static void serve(struct offs_call *c);

static void on_held(void *arg, int16_t err)
{
    struct offs_call *c = arg;
    if (err == 0)
        serve(c);
    else
        answer(c->req, err);
}

/* Answers the request exactly once; while the previous transaction completes it is held
 * (txn_sm_hold_ms) and served again when the entry's state moves. */
static void serve(struct offs_call *c)
{
    struct txn *t = c->t;
    struct net_request *req = c->req;
    struct AddOffsetsToTxnRequest *rq = req->body;
    const struct meta_topic *ot;
    struct tshard *sh;
    struct txn_meta *m;
    struct txn_transit tr;
    bool write;
    int16_t err;
    int32_t n;
    int rc;

    err = txn_shard_for(t, rq->TransactionalId, &sh);
    if (err == 0 && (m = txn_entry_find(sh, rq->TransactionalId)) == NULL)
        err = ERR_INVALID_PRODUCER_ID_MAPPING;
    if (err != 0) {
        answer(req, err);
        return;
    }
    ot = meta_topic_by_name(t->meta, OFFSETS_TOPIC);
    n = ot && ot->n_partitions > 0
            ? ot->n_partitions
            : (int32_t)props_get_int(t->config, "offsets.topic.num.partitions", 50, NULL);
    struct txn_tp part = {(char *)OFFSETS_TOPIC, java_partition_for(rq->GroupId, n)};
    int64_t now = tclock_now_ms(t->clock);
    rc = txn_sm_add_partitions(m, rq->ProducerId, rq->ProducerEpoch, &part, 1, now, &write, &tr);
    if (rc == ERR_CONCURRENT_TRANSACTIONS) {
        int64_t left = txn_sm_hold_ms(m, rc, c->since >= 0 ? c->since : now, now, TXN_HOLD_MAX_MS);
        if (c->since < 0)
            c->since = now;
        if (left > 0) {
            txn_hold(sh, rq->TransactionalId, left, on_held, c);
            return;
        }
    }
    if (rc != 0 || !write) {
        answer(req, rc == ERR_NOMEM ? ERR_COORDINATOR_NOT_AVAILABLE : (int16_t)rc);
        return;
    }
    txn_write(sh, m, &tr, on_added, req);
}

void txn_add_offsets_to_txn(struct txn *t, struct net_request *req)
{
    struct AddOffsetsToTxnRequest *rq = req->body;
    struct offs_call *c;

    if (rq->TransactionalId == NULL || rq->TransactionalId[0] == '\0' || rq->GroupId == NULL) {
        answer(req, ERR_INVALID_REQUEST);
        return;
    }
    /* WRITE on the transactional id, READ on the group (Kafka's order). */
    if (!authz_allowed(req, PROTO_ACL_OP_WRITE, PROTO_RESOURCE_TRANSACTIONAL_ID,
                       rq->TransactionalId)) {
        answer(req, ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
        return;
    }
    if (!authz_allowed(req, PROTO_ACL_OP_READ, PROTO_RESOURCE_GROUP, rq->GroupId)) {
        answer(req, ERR_GROUP_AUTHORIZATION_FAILED);
        return;
    }
    c = arena_alloc(req->arena, sizeof *c);
    if (c == NULL) {
        answer(req, ERR_COORDINATOR_NOT_AVAILABLE);
        return;
    }
    *c = (struct offs_call){t, req, -1};
    serve(c);
}
