/* SPDX-License-Identifier: Apache-2.0 */
/* AddPartitionsToTxn v0–4. v0–3 (clients) name one transaction: partitions of topics the
 * metadata does not know fail with UNKNOWN_TOPIC_OR_PARTITION and the others with
 * OPERATION_NOT_ATTEMPTED (nothing is added); otherwise the partitions join the ongoing
 * transaction (written before the answer), and every partition gets the outcome. v4 (from
 * partition leaders, KIP-890) batches transactions; one with VerifyOnly only asks whether each
 * partition was added (txn_sm_verify: INVALID_TXN_STATE when not, as Kafka 3.7). v0–1 clients
 * get INVALID_PRODUCER_EPOCH where later ones get PRODUCER_FENCED (KIP-588). Unlike Kafka, a
 * request that comes while the previous transaction completes (its markers being written) is
 * held until it has, up to TXN_HOLD_MAX_MS, instead of answered CONCURRENT_TRANSACTIONS at
 * once: the client would back off (librdkafka retry.backoff.ms) and send it again. */
#include <stdlib.h>
#include <string.h>

#include "authz/authz.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/fault.h"
#include "base/slog.h"
#include "meta/meta.h"
#include "net/net.h"
#include "txn_int.h"

#define PRODUCER_FENCED_FROM 2

/* One transaction of the request (v0–3: the only one). */
struct one {
    struct add_call *call;
    const char *tid;
    int64_t pid;
    int16_t epoch;
    bool verify;
    const struct AddPartitionsToTxnTopic *topics;
    int32_t n_topics;
    struct AddPartitionsToTxnTopicResult *results; /* n_topics, in the request's arena */
    int64_t since; /* when it was first held (txn_sm_hold_ms), -1 = never */
};

struct add_call {
    struct txn *t;
    struct net_request *req;
    struct AddPartitionsToTxnResponse *rs;
    int32_t waiting;
};

static void set_all(struct one *o, int16_t err)
{
    int16_t e = txn_answer_code(o->call->req, err, PRODUCER_FENCED_FROM);
    for (int32_t i = 0; i < o->n_topics; i++)
        for (int32_t j = 0; j < o->results[i].ResultsByPartition.n; j++)
            o->results[i].ResultsByPartition.v[j].PartitionErrorCode = e;
}

static void call_done(struct add_call *c)
{
    if (--c->waiting > 0)
        return;
    net_respond(c->req, c->rs);
    free(c);
}

static void on_added(void *arg, int16_t err, struct txn_meta *m)
{
    struct one *o = arg;
    (void)m;
    set_all(o, err);
    call_done(o->call);
}

/* Whether the image knows topic-partition. */
static bool known(struct txn *t, const char *topic, int32_t partition)
{
    const struct meta_topic *tp = topic ? meta_topic_by_name(t->meta, topic) : NULL;
    return tp && partition >= 0 && partition < tp->n_partitions;
}

static void serve(struct one *o);

static void on_held(void *arg, int16_t err)
{
    struct one *o = arg;
    if (err == 0) {
        serve(o);
        return;
    }
    set_all(o, err);
    call_done(o->call);
}

/* Serves one transaction; call_done runs for it exactly once. While the previous transaction
 * completes it is held (txn_sm_hold_ms) and served again when the entry's state moves. */
static void serve(struct one *o)
{
    struct add_call *c = o->call;
    struct txn *t = c->t;
    struct tshard *sh;
    struct txn_meta *m;
    int16_t err;
    int32_t n = 0;
    bool unknown = false;

    for (int32_t i = 0; i < o->n_topics; i++)
        for (int32_t j = 0; j < o->topics[i].Partitions.n; j++) {
            n++;
            if (!known(t, o->topics[i].Name, o->topics[i].Partitions.v[j]))
                unknown = true;
        }
    if (o->tid == NULL || o->tid[0] == '\0') {
        set_all(o, ERR_INVALID_REQUEST);
        call_done(c);
        return;
    }
    /* A client's request (a broker's verification was authorized as a whole): WRITE on the
     * transactional id, then on each topic; one topic refused adds nothing (the others
     * answer OPERATION_NOT_ATTEMPTED, as Kafka). */
    if (!o->verify) {
        if (!authz_allowed(c->req, PROTO_ACL_OP_WRITE, PROTO_RESOURCE_TRANSACTIONAL_ID, o->tid)) {
            set_all(o, ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
            call_done(c);
            return;
        }
        bool any_denied = false;
        for (int32_t i = 0; i < o->n_topics; i++) {
            bool denied = !authz_allowed(c->req, PROTO_ACL_OP_WRITE, PROTO_RESOURCE_TOPIC,
                                         o->topics[i].Name ? o->topics[i].Name : "");
            any_denied |= denied;
            for (int32_t j = 0; j < o->topics[i].Partitions.n; j++)
                o->results[i].ResultsByPartition.v[j].PartitionErrorCode =
                    denied ? ERR_TOPIC_AUTHORIZATION_FAILED : ERR_OPERATION_NOT_ATTEMPTED;
        }
        if (any_denied) {
            call_done(c);
            return;
        }
        for (int32_t i = 0; i < o->n_topics; i++)
            for (int32_t j = 0; j < o->topics[i].Partitions.n; j++)
                o->results[i].ResultsByPartition.v[j].PartitionErrorCode = 0;
    }
    if (unknown && !o->verify) {
        for (int32_t i = 0; i < o->n_topics; i++)
            for (int32_t j = 0; j < o->topics[i].Partitions.n; j++)
                o->results[i].ResultsByPartition.v[j].PartitionErrorCode =
                    known(t, o->topics[i].Name, o->topics[i].Partitions.v[j])
                        ? ERR_OPERATION_NOT_ATTEMPTED
                        : ERR_UNKNOWN_TOPIC_OR_PARTITION;
        call_done(c);
        return;
    }
    err = txn_shard_for(t, o->tid, &sh);
    if (err == 0 && (m = txn_entry_find(sh, o->tid)) == NULL)
        err = ERR_INVALID_PRODUCER_ID_MAPPING;
    if (err != 0) {
        set_all(o, err);
        call_done(c);
        return;
    }
    if (o->verify) {
        bool all_ok = true;
        for (int32_t i = 0; i < o->n_topics; i++)
            for (int32_t j = 0; j < o->topics[i].Partitions.n; j++) {
                int rc = txn_sm_verify(m, o->pid, o->epoch, o->topics[i].Name,
                                       o->topics[i].Partitions.v[j]);
                all_ok = all_ok && rc == 0;
                o->results[i].ResultsByPartition.v[j].PartitionErrorCode = (int16_t)rc;
            }
#ifdef TALLY_TEST_HOOKS
        /* Test-only: the coordinator forgets the entry after vouching for a partition, so
         * the batch that follows is a hanging transaction (the self-healing test). */
        if (all_ok && fault_armed("txn:lose_entry")) {
            slog_warn("txn", "TALLY_TEST_FAULT txn:lose_entry: forgetting %s", o->tid);
            txn_entry_remove(sh, o->tid);
        }
#endif
        call_done(c);
        return;
    }
    struct txn_tp *parts = arena_alloc(c->req->arena, ((size_t)n + 1) * sizeof *parts);
    if (parts == NULL) {
        set_all(o, ERR_COORDINATOR_NOT_AVAILABLE);
        call_done(c);
        return;
    }
    n = 0;
    for (int32_t i = 0; i < o->n_topics; i++)
        for (int32_t j = 0; j < o->topics[i].Partitions.n; j++)
            parts[n++] = (struct txn_tp){o->topics[i].Name, o->topics[i].Partitions.v[j]};
    struct txn_transit tr;
    bool write;
    int64_t now = tclock_now_ms(t->clock);
    int rc = txn_sm_add_partitions(m, o->pid, o->epoch, parts, n, now, &write, &tr);
    if (rc == ERR_CONCURRENT_TRANSACTIONS) {
        int64_t left = txn_sm_hold_ms(m, rc, o->since >= 0 ? o->since : now, now, TXN_HOLD_MAX_MS);
        if (o->since < 0)
            o->since = now;
        if (left > 0) {
            txn_hold(sh, o->tid, left, on_held, o);
            return;
        }
    }
    if (rc != 0 || !write) {
        set_all(o, rc == ERR_NOMEM ? ERR_COORDINATOR_NOT_AVAILABLE : (int16_t)rc);
        call_done(c);
        return;
    }
    txn_write(sh, m, &tr, on_added, o);
}

/* Fills the per-topic results of one transaction (all 0 for now). */
static struct AddPartitionsToTxnTopicResult *
results_for(struct arena *ar, const struct AddPartitionsToTxnTopic *tp, int32_t n)
{
    struct AddPartitionsToTxnTopicResult *r = arena_alloc(ar, ((size_t)n + 1) * sizeof *r);
    if (r == NULL)
        return NULL;
    for (int32_t i = 0; i < n; i++) {
        int32_t np = tp[i].Partitions.n > 0 ? tp[i].Partitions.n : 0;
        r[i].Name = tp[i].Name;
        r[i].ResultsByPartition.n = np;
        r[i].ResultsByPartition.v =
            arena_alloc(ar, ((size_t)np + 1) * sizeof *r[i].ResultsByPartition.v);
        if (r[i].ResultsByPartition.v == NULL)
            return NULL;
        for (int32_t j = 0; j < np; j++) {
            r[i].ResultsByPartition.v[j].PartitionIndex = tp[i].Partitions.v[j];
            r[i].ResultsByPartition.v[j].PartitionErrorCode = 0;
        }
    }
    return r;
}

void txn_add_partitions_to_txn(struct txn *t, struct net_request *req)
{
    struct AddPartitionsToTxnRequest *rq = req->body;
    struct add_call *c = calloc(1, sizeof *c);
    struct one *ones;
    int32_t n;

    if (c == NULL)
        goto nomem;
    c->t = t;
    c->req = req;
    c->rs = arena_alloc(req->arena, sizeof *c->rs);
    if (c->rs == NULL)
        goto nomem;
    memset(c->rs, 0, sizeof *c->rs);
    if (req->hdr.RequestApiVersion < 4) {
        int32_t nt = rq->V3AndBelowTopics.n > 0 ? rq->V3AndBelowTopics.n : 0;
        ones = arena_alloc(req->arena, sizeof *ones);
        if (ones == NULL)
            goto nomem;
        *ones = (struct one){c,
                             rq->V3AndBelowTransactionalId,
                             rq->V3AndBelowProducerId,
                             rq->V3AndBelowProducerEpoch,
                             false,
                             rq->V3AndBelowTopics.v,
                             nt,
                             results_for(req->arena, rq->V3AndBelowTopics.v, nt),
                             -1};
        if (ones->results == NULL)
            goto nomem;
        c->rs->ResultsByTopicV3AndBelow.v = ones->results;
        c->rs->ResultsByTopicV3AndBelow.n = nt;
        n = 1;
    } else {
        n = rq->Transactions.n > 0 ? rq->Transactions.n : 0;
        ones = arena_alloc(req->arena, ((size_t)n + 1) * sizeof *ones);
        c->rs->ResultsByTransaction.v =
            arena_alloc(req->arena, ((size_t)n + 1) * sizeof *c->rs->ResultsByTransaction.v);
        if (ones == NULL || c->rs->ResultsByTransaction.v == NULL)
            goto nomem;
        c->rs->ResultsByTransaction.n = n;
        for (int32_t i = 0; i < n; i++) {
            const struct AddPartitionsToTxnTransaction *x = &rq->Transactions.v[i];
            int32_t nt = x->Topics.n > 0 ? x->Topics.n : 0;
            ones[i] = (struct one){c,
                                   x->TransactionalId,
                                   x->ProducerId,
                                   x->ProducerEpoch,
                                   x->VerifyOnly,
                                   x->Topics.v,
                                   nt,
                                   results_for(req->arena, x->Topics.v, nt),
                                   -1};
            if (ones[i].results == NULL)
                goto nomem;
            c->rs->ResultsByTransaction.v[i].TransactionalId = x->TransactionalId;
            c->rs->ResultsByTransaction.v[i].TopicResults.v = ones[i].results;
            c->rs->ResultsByTransaction.v[i].TopicResults.n = nt;
        }
    }
    /* v4 is the brokers' own (KIP-890 verification): CLUSTER_ACTION on the cluster. */
    if (req->hdr.RequestApiVersion >= 4 &&
        !authz_allowed(req, PROTO_ACL_OP_CLUSTER_ACTION, PROTO_RESOURCE_CLUSTER, AUTHZ_CLUSTER)) {
        c->rs->ErrorCode = ERR_CLUSTER_AUTHORIZATION_FAILED;
        c->rs->ResultsByTransaction.n = 0;
        n = 0;
    }
    c->waiting = n + 1; /* +1: held until every transaction was started */
    for (int32_t i = 0; i < n; i++)
        serve(&ones[i]);
    call_done(c);
    return;

nomem:
    free(c);
    slog_error("txn", "out of memory in AddPartitionsToTxn from %s; closing", req->peer);
    net_close_connection(req);
}
