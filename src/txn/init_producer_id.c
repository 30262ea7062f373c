/* SPDX-License-Identifier: Apache-2.0 */
/* InitProducerId v0–4. Without a transactional id: a fresh producer id at epoch 0 (as Kafka,
 * also when a v3+ idempotent producer names its current id and epoch). With one: the
 * coordinator's rules (txn_sm_init_producer_id) — a new entry with a fresh id, an epoch bump
 * fencing the previous instance (after aborting its ongoing transaction: markers first, the
 * client is told CONCURRENT_TRANSACTIONS and retries), KIP-360 recovery, a new id when the
 * epoch is exhausted. v0–3 clients get INVALID_PRODUCER_EPOCH where v4 ones get
 * PRODUCER_FENCED (KIP-588). */
#include <stdlib.h>
#include <string.h>

#include "authz/authz.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/slog.h"
#include "net/net.h"
#include "txn_int.h"

#define PRODUCER_FENCED_FROM 4

static void answer(struct net_request *req, int16_t err, int64_t pid, int16_t epoch)
{
    struct InitProducerIdResponse *rs = txn_response_new(req, sizeof *rs);
    if (rs == NULL)
        return;
    rs->ErrorCode = txn_answer_code(req, err, PRODUCER_FENCED_FROM);
    rs->ProducerId = err ? -1 : pid;
    rs->ProducerEpoch = err ? -1 : epoch;
    net_respond(req, rs);
}

static void on_idempotent_id(void *arg, int16_t err, int64_t pid)
{
    answer(arg, err, pid, 0);
}

/* One transactional InitProducerId, possibly waiting for a producer id. */
struct init_call {
    struct txn *t;
    struct net_request *req;
    int64_t new_pid; /* a fresh id obtained for this call, -1 = none */
    int32_t partition, epoch;
};

static void attempt(struct init_call *c);

static void finish(struct init_call *c, int16_t err, int64_t pid, int16_t epoch)
{
    answer(c->req, err, pid, epoch);
    free(c);
}

static void on_pid(void *arg, int16_t err, int64_t pid)
{
    struct init_call *c = arg;
    if (err != 0) {
        finish(c, err, -1, -1);
        return;
    }
    c->new_pid = pid;
    attempt(c);
}

static void on_written(void *arg, int16_t err, struct txn_meta *m)
{
    struct init_call *c = arg;
    if (err != 0 || m == NULL) {
        finish(c, err ? err : ERR_NOT_COORDINATOR, -1, -1);
        return;
    }
    finish(c, 0, m->cur.producer_id, m->cur.producer_epoch);
}

static void on_fence_written(void *arg, int16_t err, struct txn_meta *m)
{
    struct init_call *c = arg;
    struct tshard *sh = txn_shard_again(c->t, c->partition, c->epoch);
    if (err == 0 && m && sh) {
        txn_after_prepare(sh, m);
        /* The client retries once the abort completed and gets the epoch bumped again. */
        finish(c, ERR_CONCURRENT_TRANSACTIONS, -1, -1);
        return;
    }
    finish(c, err ? err : ERR_NOT_COORDINATOR, -1, -1);
}

static void attempt(struct init_call *c)
{
    struct InitProducerIdRequest *rq = c->req->body;
    struct tshard *sh;
    struct txn_meta *m;
    struct txn_transit tr;
    enum txn_init_action act;
    int16_t v = c->req->hdr.RequestApiVersion;
    int64_t expected_pid = v >= 3 ? rq->ProducerId : -1;
    int16_t expected_epoch = v >= 3 ? rq->ProducerEpoch : -1;
    int64_t now = tclock_now_ms(c->t->clock);
    int16_t err = txn_shard_for(c->t, rq->TransactionalId, &sh);
    int rc;

    if (err != 0) {
        finish(c, err, -1, -1);
        return;
    }
    m = txn_entry_find(sh, rq->TransactionalId);
    if (m == NULL) {
        if (c->new_pid < 0) {
            txn_pid_next(c->t, on_pid, c);
            return;
        }
        m = txn_meta_new(rq->TransactionalId, c->new_pid, rq->TransactionTimeoutMs, now);
        c->new_pid = -1;
        if (m == NULL || txn_entry_add(sh, m) != 0) {
            finish(c, ERR_COORDINATOR_NOT_AVAILABLE, -1, -1);
            return;
        }
    }
    rc = txn_sm_init_producer_id(m, rq->TransactionTimeoutMs, expected_pid, expected_epoch,
                                 c->new_pid, now, &act, &tr);
    if (rc != 0) {
        finish(c, rc == ERR_NOMEM ? ERR_COORDINATOR_NOT_AVAILABLE : (int16_t)rc, -1, -1);
        return;
    }
    c->partition = sh->partition;
    c->epoch = sh->epoch;
    switch (act) {
    case TXN_INIT_NEED_NEW_ID:
        txn_pid_next(c->t, on_pid, c);
        return;
    case TXN_INIT_FENCE:
        slog_info("txn",
                  "%s: a new instance fences producer %lld epoch %d; its ongoing transaction is "
                  "aborted",
                  m->tid, (long long)m->cur.producer_id, m->cur.producer_epoch);
        txn_write(sh, m, &tr, on_fence_written, c);
        return;
    case TXN_INIT_WRITE:
        if (tr.producer_id != m->cur.producer_id)
            slog_info("txn", "%s: epoch exhausted; producer id %lld follows %lld", m->tid,
                      (long long)tr.producer_id, (long long)m->cur.producer_id);
        txn_write(sh, m, &tr, on_written, c);
        return;
    }
}

void txn_init_producer_id(struct txn *t, struct net_request *req)
{
    struct InitProducerIdRequest *rq = req->body;
    struct init_call *c;

    /* Without a transactional id: IDEMPOTENT_WRITE on the cluster or WRITE on some topic;
     * with one, WRITE on it — checked before the epoch is bumped, so that a principal
     * without it cannot fence the id's real owner. */
    if (rq->TransactionalId == NULL) {
        if (!authz_allowed_quiet(req, PROTO_ACL_OP_IDEMPOTENT_WRITE, PROTO_RESOURCE_CLUSTER,
                                 AUTHZ_CLUSTER) &&
            !authz_allowed_any(req, PROTO_ACL_OP_WRITE, PROTO_RESOURCE_TOPIC)) {
            authz_allowed(req, PROTO_ACL_OP_IDEMPOTENT_WRITE, PROTO_RESOURCE_CLUSTER,
                          AUTHZ_CLUSTER); /* the denial's log line */
            answer(req, ERR_CLUSTER_AUTHORIZATION_FAILED, -1, -1);
            return;
        }
        txn_pid_next(t, on_idempotent_id, req);
        return;
    }
    if (!authz_allowed(req, PROTO_ACL_OP_WRITE, PROTO_RESOURCE_TRANSACTIONAL_ID,
                       rq->TransactionalId)) {
        answer(req, ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED, -1, -1);
        return;
    }
    if (rq->TransactionalId[0] == '\0') {
        answer(req, ERR_INVALID_REQUEST, -1, -1);
        return;
    }
    if (rq->TransactionTimeoutMs <= 0 || rq->TransactionTimeoutMs > t->max_timeout_ms) {
        answer(req, ERR_INVALID_TRANSACTION_TIMEOUT, -1, -1);
        return;
    }
    c = calloc(1, sizeof *c);
    if (c == NULL) {
        answer(req, ERR_COORDINATOR_NOT_AVAILABLE, -1, -1);
        return;
    }
    c->t = t;
    c->req = req;
    c->new_pid = -1;
    attempt(c);
}
