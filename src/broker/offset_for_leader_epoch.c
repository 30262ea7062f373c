/* SPDX-License-Identifier: Apache-2.0 */
/* OffsetForLeaderEpoch (KIP-101, KIP-320): where leader epoch E ends in the leader's log —
 * the start offset of the next epoch it knows, or its log end for the current one — with the
 * largest epoch <= E the leader knows. A consumer asks after a leader change to learn
 * whether its position lies past what the new leader holds (librdkafka validates every
 * fetch position this way); a follower may ask the same to find where to truncate (Tally's
 * own followers use Fetch's DivergingEpoch instead, KIP-279). Only the leader answers;
 * CurrentLeaderEpoch is checked as for Fetch. */
#include <stddef.h>

#include "authz/authz.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/slog.h"
#include "broker_int.h"
#include "net/net.h"
#include "replica/replica.h"

static void epoch_partition(struct broker *b, const char *topic,
                            const struct OffsetForLeaderPartition *in, struct EpochEndOffset *out)
{
    struct partition *p;
    int rc = replica_leader_partition(b->replicas, topic, in->Partition, &p);

    out->LeaderEpoch = -1;
    out->EndOffset = -1;
    if (rc == 0)
        rc = broker_check_epoch(partition_leader_epoch(p), in->CurrentLeaderEpoch);
    if (rc != 0) {
        out->ErrorCode = (int16_t)rc;
        return;
    }
    partition_epoch_end_offset(p, in->LeaderEpoch, &out->LeaderEpoch, &out->EndOffset);
}

void broker_offset_for_leader_epoch(struct broker *b, struct net_request *req)
{
    struct OffsetForLeaderEpochRequest *rq = req->body;
    struct arena *ar = req->arena;
    struct OffsetForLeaderEpochResponse *rs = arena_alloc(ar, sizeof *rs);

    static const struct broker_shape shape = {
        sizeof(struct OffsetForLeaderTopic),
        offsetof(struct OffsetForLeaderTopic, Topic),
        offsetof(struct OffsetForLeaderTopic, Partitions),
        sizeof(struct OffsetForLeaderPartition),
        offsetof(struct OffsetForLeaderPartition, Partition),
        sizeof(struct OffsetForLeaderTopicResult),
        offsetof(struct OffsetForLeaderTopicResult, Topic),
        offsetof(struct OffsetForLeaderTopicResult, Partitions),
        sizeof(struct EpochEndOffset),
        offsetof(struct EpochEndOffset, Partition),
    };

    if (rs == NULL || broker_response_skeleton(ar, &rq->Topics, &rs->Topics, &shape) != 0) {
        slog_error("broker", "out of memory in OffsetForLeaderEpoch from %s; closing", req->peer);
        net_close_connection(req);
        return;
    }
    /* A follower's request (any replica id but the consumer's -1: before v3 every request
     * was a follower's) needs CLUSTER_ACTION on the cluster, a consumer's DESCRIBE on each
     * topic (Kafka's rules). */
    bool replica_denied =
        rq->ReplicaId != -1 &&
        !authz_allowed(req, PROTO_ACL_OP_CLUSTER_ACTION, PROTO_RESOURCE_CLUSTER, AUTHZ_CLUSTER);
    for (int32_t i = 0; i < rs->Topics.n; i++) {
        struct OffsetForLeaderTopic *t = &rq->Topics.v[i];
        struct OffsetForLeaderTopicResult *tr = &rs->Topics.v[i];
        if (replica_denied ||
            (rq->ReplicaId == -1 && !authz_allowed(req, PROTO_ACL_OP_DESCRIBE, PROTO_RESOURCE_TOPIC,
                                                   t->Topic ? t->Topic : ""))) {
            for (int32_t j = 0; j < tr->Partitions.n; j++) {
                tr->Partitions.v[j].ErrorCode = ERR_TOPIC_AUTHORIZATION_FAILED;
                tr->Partitions.v[j].LeaderEpoch = -1;
                tr->Partitions.v[j].EndOffset = -1;
            }
            continue;
        }
        for (int32_t j = 0; j < tr->Partitions.n; j++)
            epoch_partition(b, t->Topic ? t->Topic : "", &t->Partitions.v[j], &tr->Partitions.v[j]);
    }
    net_respond(req, rs);
}
