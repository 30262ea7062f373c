/* SPDX-License-Identifier: Apache-2.0 */
/* DescribeProducers (KIP-664): the active producers of each partition — id, epoch, last
 * sequence, last timestamp, and (with transactions) coordinator epoch and the start offset
 * of the ongoing transaction. */
#include "base/arena.h"
#include "base/err.h"
#include "base/log.h"
#include "broker_int.h"
#include "net/net.h"
#include "pstate/pstate.h"
#include "replica/replica.h"

static int describe_partition(struct broker *b, struct arena *ar, const char *topic, int32_t index,
                              struct DescribeProducersPartitionResponse *out)
{
    struct partition *p = replica_partition(b->replicas, topic, index);
    const struct pstate_producer *prod;
    size_t n;

    out->PartitionIndex = index;
    if (p == NULL) {
        out->ErrorCode = ERR_UNKNOWN_TOPIC_OR_PARTITION;
        return 0;
    }
    prod = pstate_producers(partition_pstate(p), &n);
    out->ActiveProducers.n = (int32_t)n;
    out->ActiveProducers.v = arena_alloc(ar, (n + 1) * sizeof *out->ActiveProducers.v);
    if (out->ActiveProducers.v == NULL)
        return ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
        struct ProducerState *o = &out->ActiveProducers.v[i];
        const struct pstate_producer *s = &prod[i];
        o->ProducerId = s->producer_id;
        o->ProducerEpoch = s->epoch;
        o->LastSequence = s->n_batches > 0 ? s->batches[s->n_batches - 1].last_seq : -1;
        o->LastTimestamp = s->last_timestamp;
        o->CoordinatorEpoch = s->coordinator_epoch;
        o->CurrentTxnStartOffset = s->txn_first_offset;
    }
    return 0;
}

void broker_describe_producers(struct broker *b, struct net_request *req)
{
    struct DescribeProducersRequest *rq = req->body;
    struct arena *ar = req->arena;
    struct DescribeProducersResponse *rs = arena_alloc(ar, sizeof *rs);
    int32_t nt = rq->Topics.n > 0 ? rq->Topics.n : 0;

    if (rs == NULL)
        goto err_nomem;
    rs->Topics.n = nt;
    rs->Topics.v = arena_alloc(ar, ((size_t)nt + 1) * sizeof *rs->Topics.v);
    if (rs->Topics.v == NULL)
        goto err_nomem;
    for (int32_t i = 0; i < nt; i++) {
        struct DescribeProducersTopicRequest *t = &rq->Topics.v[i];
        struct DescribeProducersTopicResponse *tr = &rs->Topics.v[i];
        int32_t np = t->PartitionIndexes.n > 0 ? t->PartitionIndexes.n : 0;
        tr->Name = t->Name;
        tr->Partitions.n = np;
        tr->Partitions.v = arena_alloc(ar, ((size_t)np + 1) * sizeof *tr->Partitions.v);
        if (tr->Partitions.v == NULL)
            goto err_nomem;
        for (int32_t j = 0; j < np; j++)
            if (describe_partition(b, ar, t->Name ? t->Name : "", t->PartitionIndexes.v[j],
                                   &tr->Partitions.v[j]) != 0)
                goto err_nomem;
    }
    net_respond(req, rs);
    return;

err_nomem:
    log_error("broker", "out of memory in DescribeProducers from %s; closing", req->peer);
    net_close_connection(req);
}
