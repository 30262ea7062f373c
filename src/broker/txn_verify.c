/* SPDX-License-Identifier: Apache-2.0 */
/* KIP-890 part 1 on the partition leader: before the first transactional batch of a
 * transaction is appended to a partition, the transaction coordinator confirms that the
 * producer's ongoing transaction has added that partition — AddPartitionsToTxn v4 with
 * VerifyOnly, sent through the outbound client to the leader of the transactional id's
 * `__transaction_state` partition (abs(javaHash(id)) % transaction.state.log.num.partitions),
 * on one node this broker itself. A yes is remembered in the partition's producer state
 * until the transaction's marker (pstate_txn_verified), so only the first batch per
 * transaction and partition pays the round trip; a marker that arrives while the question is
 * out voids the answer (the verification token). Errors as Kafka's ReplicaManager gives them
 * to a producer. A question whose partitions an earlier one still out asks for the same
 * producer and epoch, under the same tokens (no marker between them), waits for that one's
 * answer instead of being sent too: a producer's pipelined batches behind its first of a
 * transaction (all parked until it is verified) cost one round trip, not one each.
 * PRODUCER_FENCED becomes INVALID_PRODUCER_EPOCH, coordinator trouble
 * (COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS,
 * CONCURRENT_TRANSACTIONS) becomes NOT_ENOUGH_REPLICAS (retriable for every client), a lost
 * connection NETWORK_EXCEPTION, a coordinator that does not know AddPartitionsToTxn v4 means
 * no verification (Kafka's rule). */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/jhash.h"
#include "base/slog.h"
#include "broker_int.h"
#include "meta/meta.h"
#include "net/net.h"
#include "proto/proto.h"
#include "replica/replica.h"

#define TXN_STATE_TOPIC "__transaction_state"

struct broker_verify {
    struct broker_verify *next, **prev;          /* the broker's list; prev NULL once detached */
    struct broker_verify *waiters, *next_waiter; /* questions answered by this one's answer */
    struct broker *b;
    struct broker_verify_part *parts;
    size_t n;
    int64_t producer_id;
    int16_t epoch;
    broker_verify_cb cb;
    void *arg;
};

/* Java's String.hashCode, as the coordinators hash (base/jhash.h: one definition, so the
 * produce path and the transaction coordinator always agree on the partition). */
int32_t broker_java_string_hash(const char *s)
{
    return java_string_hash(s);
}

static void detach(struct broker_verify *v)
{
    if (v->prev == NULL)
        return;
    *v->prev = v->next;
    if (v->next)
        v->next->prev = v->prev;
    v->prev = NULL;
}

static void fail_all(struct broker_verify_part *parts, size_t n, int16_t err)
{
    for (size_t i = 0; i < n; i++)
        parts[i].error = err;
}

/* Kafka's ReplicaManager: what a producer is told for a verification error. */
static int16_t produce_error(int16_t e)
{
    switch (e) {
    case ERR_PRODUCER_FENCED:
        return ERR_INVALID_PRODUCER_EPOCH;
    case ERR_COORDINATOR_NOT_AVAILABLE:
    case ERR_NOT_COORDINATOR:
    case ERR_COORDINATOR_LOAD_IN_PROGRESS:
    case ERR_CONCURRENT_TRANSACTIONS:
        return ERR_NOT_ENOUGH_REPLICAS;
    case ERR_CLUSTER_AUTHORIZATION_FAILED:
        return ERR_INVALID_TXN_STATE;
    default:
        return e;
    }
}

static void finish(struct broker_verify *v)
{
    /* The waiters take the answer for their partitions (all of them asked here), then
     * answer after this one, in the order they came. */
    for (struct broker_verify *w = v->waiters; w; w = w->next_waiter)
        for (size_t i = 0; i < w->n; i++)
            for (size_t j = 0; j < v->n; j++)
                if (w->parts[i].p == v->parts[j].p)
                    w->parts[i].error = v->parts[j].error;
    for (size_t i = 0; i < v->n; i++) {
        struct broker_verify_part *vp = &v->parts[i];
        vp->error = produce_error(vp->error);
        /* A marker since the question was asked voids the yes. */
        if (vp->error == 0 && !partition_verify_done(vp->p, v->producer_id, v->epoch, vp->token))
            vp->error = ERR_INVALID_TXN_STATE;
    }
    v->cb(v->arg, v->parts, v->n, false);
    while (v->waiters) {
        struct broker_verify *w = v->waiters;
        v->waiters = w->next_waiter;
        w->waiters = NULL;
        finish(w);
        free(w);
    }
}

/* A question out for the same producer and epoch that asks for every one of parts[0..n)
 * under the same token, or NULL. */
static struct broker_verify *asking(struct broker *b, int64_t producer_id, int16_t epoch,
                                    const struct broker_verify_part *parts, size_t n)
{
    for (struct broker_verify *v = b->verifies; v; v = v->next) {
        if (v->producer_id != producer_id || v->epoch != epoch)
            continue;
        size_t found = 0;
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < v->n; j++)
                if (parts[i].p == v->parts[j].p && parts[i].token == v->parts[j].token) {
                    found++;
                    break;
                }
        if (found == n)
            return v;
    }
    return NULL;
}

static void on_answer(void *arg, int err, const void *resp)
{
    struct broker_verify *v = arg;
    const struct AddPartitionsToTxnResponse *rs = resp;

    if (v->prev == NULL) { /* the broker stopped and answered already */
        free(v);
        return;
    }
    detach(v);
    if (err == ERR_UNSUPPORTED_VERSION) {
        fail_all(v->parts, v->n, 0); /* a coordinator without KIP-890: no verification */
    } else if (err != 0) {
        slog_debug("broker", "AddPartitionsToTxn (verify) failed: %s", err_name(err));
        fail_all(v->parts, v->n, ERR_NETWORK_EXCEPTION);
    } else if (rs->ErrorCode != 0) {
        fail_all(v->parts, v->n, rs->ErrorCode);
    } else {
        /* Not named in the answer: not verified. */
        fail_all(v->parts, v->n, ERR_INVALID_TXN_STATE);
        for (int32_t t = 0; t < rs->ResultsByTransaction.n; t++) {
            const struct AddPartitionsToTxnResult *tr = &rs->ResultsByTransaction.v[t];
            for (int32_t k = 0; k < tr->TopicResults.n; k++) {
                const struct AddPartitionsToTxnTopicResult *top = &tr->TopicResults.v[k];
                for (int32_t j = 0; j < top->ResultsByPartition.n; j++) {
                    const struct AddPartitionsToTxnPartitionResult *pr =
                        &top->ResultsByPartition.v[j];
                    for (size_t i = 0; i < v->n; i++)
                        if (v->parts[i].index == pr->PartitionIndex && top->Name &&
                            strcmp(v->parts[i].topic, top->Name) == 0)
                            v->parts[i].error = pr->PartitionErrorCode;
                }
            }
        }
    }
    finish(v);
    free(v);
}

/* The node leading the transactional id's __transaction_state partition, or an error. */
static int coordinator_node(struct broker *b, const char *tid, int32_t *node)
{
    const struct meta_topic *t = b->meta ? meta_topic_by_name(b->meta, TXN_STATE_TOPIC) : NULL;
    int32_t h = broker_java_string_hash(tid);
    int32_t n = b->txn_state_partitions > 0 ? b->txn_state_partitions : 50;
    int32_t part = (h == INT32_MIN ? 0 : (h < 0 ? -h : h)) % n;

    if (t == NULL || part >= t->n_partitions || t->partitions[part].leader < 0)
        return ERR_COORDINATOR_NOT_AVAILABLE;
    *node = t->partitions[part].leader;
    return 0;
}

void broker_txn_verify(struct broker *b, const char *tid, int64_t producer_id, int16_t epoch,
                       struct broker_verify_part *parts, size_t n, broker_verify_cb cb, void *arg)
{
    struct broker_verify *v = calloc(1, sizeof *v);
    struct AddPartitionsToTxnTopic *topics = calloc(n + 1, sizeof *topics);
    int32_t *idx = calloc(n + 1, sizeof *idx);
    struct AddPartitionsToTxnTransaction tx = {0};
    struct AddPartitionsToTxnRequest rq = {0};
    int32_t node = -1;
    int rc = v && topics && idx ? 0 : ERR_NOMEM;

    if (rc == 0)
        rc = b->client ? coordinator_node(b, tid, &node) : ERR_COORDINATOR_NOT_AVAILABLE;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        parts[i].token = partition_verify_begin(parts[i].p, producer_id, epoch);
        if (parts[i].token == 0)
            rc = ERR_NOMEM;
    }
    struct broker_verify *first = rc == 0 ? asking(b, producer_id, epoch, parts, n) : NULL;
    if (first != NULL) {
        *v = (struct broker_verify){.b = b,
                                    .parts = parts,
                                    .n = n,
                                    .producer_id = producer_id,
                                    .epoch = epoch,
                                    .cb = cb,
                                    .arg = arg};
        struct broker_verify **end = &first->waiters;
        while (*end)
            end = &(*end)->next_waiter;
        *end = v;
        free(topics);
        free(idx);
        return;
    }
    if (rc == 0) {
        /* One topic entry per partition: the coordinator accepts repeated topic names. */
        for (size_t i = 0; i < n; i++) {
            idx[i] = parts[i].index;
            topics[i].Name = (char *)parts[i].topic;
            topics[i].Partitions.v = &idx[i];
            topics[i].Partitions.n = 1;
        }
        tx.TransactionalId = (char *)tid;
        tx.ProducerId = producer_id;
        tx.ProducerEpoch = epoch;
        tx.VerifyOnly = true;
        tx.Topics.v = topics;
        tx.Topics.n = (int32_t)n;
        rq.Transactions.v = &tx;
        rq.Transactions.n = 1;
        v->b = b;
        v->parts = parts;
        v->n = n;
        v->producer_id = producer_id;
        v->epoch = epoch;
        v->cb = cb;
        v->arg = arg;
        v->next = b->verifies;
        if (v->next)
            v->next->prev = &v->next;
        v->prev = &b->verifies;
        b->verifies = v;
        rc = net_client_send(b->client, node, PROTO_API_AddPartitionsToTxn, 4, &rq, on_answer, v);
        if (rc != 0)
            detach(v);
    }
    free(topics);
    free(idx);
    if (rc == 0)
        return;
    free(v);
    fail_all(parts, n,
             (int16_t)produce_error(
                 (int16_t)(rc == ERR_NOMEM || rc == ERR_SHUTDOWN ? ERR_NOT_ENOUGH_REPLICAS : rc)));
    cb(arg, parts, n, false);
}

void broker_verify_stop_all(struct broker *b)
{
    while (b->verifies) {
        struct broker_verify *v = b->verifies;
        detach(v); /* freed by its answer, which the client gives at its stop */
        fail_all(v->parts, v->n, ERR_REQUEST_TIMED_OUT);
        v->cb(v->arg, v->parts, v->n, true);
        while (v->waiters) {
            struct broker_verify *w = v->waiters;
            v->waiters = w->next_waiter;
            fail_all(w->parts, w->n, ERR_REQUEST_TIMED_OUT);
            w->cb(w->arg, w->parts, w->n, true);
            free(w);
        }
    }
}
