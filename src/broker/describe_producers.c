/* SPDX-License-Identifier: Apache-2.0 */
/* DescribeProducers (KIP-664): the active producers of each partition — id, epoch, last
 * sequence, last timestamp, and (with transactions) coordinator epoch and the start offset
 * of the ongoing transaction. */
#include <stddef.h>

#include "authz/authz.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/slog.h"
#include "broker_int.h"
#include "net/net.h"
#include "pstate/pstate.h"
#include "replica/replica.h"

static int describe_partition(struct broker *b, struct arena *ar, const char *topic, int32_t index,
                              struct DescribeProducersPartitionResponse *out)
{
    struct partition *p;
    const struct pstate_producer *prod;
    size_t n;
    int rc = replica_leader_partition(b->replicas, topic, index, &p);

    out->PartitionIndex = index;
    if (rc != 0) {
        out->ErrorCode = (int16_t)rc;
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

    static const struct broker_shape shape = {
        sizeof(struct DescribeProducersTopicRequest),
        offsetof(struct DescribeProducersTopicRequest, Name),
        offsetof(struct DescribeProducersTopicRequest, PartitionIndexes),
        sizeof(int32_t),
        0,
        sizeof(struct DescribeProducersTopicResponse),
        offsetof(struct DescribeProducersTopicResponse, Name),
        offsetof(struct DescribeProducersTopicResponse, Partitions),
        sizeof(struct DescribeProducersPartitionResponse),
        offsetof(struct DescribeProducersPartitionResponse, PartitionIndex),
    };

    if (rs == NULL || broker_response_skeleton(ar, &rq->Topics, &rs->Topics, &shape) != 0)
        goto err_nomem;
    for (int32_t i = 0; i < rs->Topics.n; i++) {
        struct DescribeProducersTopicRequest *t = &rq->Topics.v[i];
        struct DescribeProducersTopicResponse *tr = &rs->Topics.v[i];
        /* READ on the topic (Kafka's rule for DescribeProducers). */
        if (!authz_allowed(req, PROTO_ACL_OP_READ, PROTO_RESOURCE_TOPIC, t->Name ? t->Name : "")) {
            for (int32_t j = 0; j < tr->Partitions.n; j++)
                tr->Partitions.v[j].ErrorCode = ERR_TOPIC_AUTHORIZATION_FAILED;
            continue;
        }
        for (int32_t j = 0; j < tr->Partitions.n; j++)
            if (describe_partition(b, ar, t->Name ? t->Name : "", t->PartitionIndexes.v[j],
                                   &tr->Partitions.v[j]) != 0)
                goto err_nomem;
    }
    net_respond(req, rs);
    return;

err_nomem:
    slog_error("broker", "out of memory in DescribeProducers from %s; closing", req->peer);
    net_close_connection(req);
}
