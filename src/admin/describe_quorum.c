/* SPDX-License-Identifier: Apache-2.0 */
/* DescribeQuorum (API 55): the metadata quorum's leader, term, commit index and each member's
 * position, answered by the raft leader from libraft's state (meta_describe_quorum). The only
 * partition there is to ask about is __cluster_metadata-0 (else UNKNOWN_TOPIC_OR_PARTITION
 * for each one asked); any other node answers NOT_LEADER_OR_FOLLOWER with the leader it
 * knows, as Kafka's raft client does, and the caller asks that node. */
#include <string.h>

#include "authz/authz.h"
#include "admin_int.h"
#include "base/arena.h"
#include "base/err.h"
#include "meta/meta.h"
#include "net/net.h"

static bool asks_for_the_metadata_log(const struct DescribeQuorumRequest *rq)
{
    if (rq->Topics.n != 1)
        return false;
    const struct DescribeQuorumRequestTopicData *t = &rq->Topics.v[0];
    return t->TopicName != NULL && strcmp(t->TopicName, TOPIC_CLUSTER_METADATA) == 0 &&
           t->Partitions.n == 1 && t->Partitions.v[0].PartitionIndex == 0;
}

/* Every topic and partition asked for, each with `code`. 0 or ERR_NOMEM. */
static int echo_with_error(struct arena *ar, const struct DescribeQuorumRequest *rq, int16_t code,
                           struct DescribeQuorumResponse *rs)
{
    int32_t nt = rq->Topics.n > 0 ? rq->Topics.n : 0;
    rs->Topics.v = arena_alloc(ar, ((size_t)nt + 1) * sizeof *rs->Topics.v);
    if (rs->Topics.v == NULL)
        return ERR_NOMEM;
    rs->Topics.n = nt;
    for (int32_t i = 0; i < nt; i++) {
        const struct DescribeQuorumRequestTopicData *t = &rq->Topics.v[i];
        struct DescribeQuorumResponseTopicData *o = &rs->Topics.v[i];
        int32_t np = t->Partitions.n > 0 ? t->Partitions.n : 0;
        o->TopicName = t->TopicName != NULL ? t->TopicName : "";
        o->Partitions.v = arena_alloc(ar, ((size_t)np + 1) * sizeof *o->Partitions.v);
        if (o->Partitions.v == NULL)
            return ERR_NOMEM;
        o->Partitions.n = np;
        for (int32_t j = 0; j < np; j++) {
            struct DescribeQuorumResponsePartitionData *p = &o->Partitions.v[j];
            p->PartitionIndex = t->Partitions.v[j].PartitionIndex;
            p->ErrorCode = code;
            p->LeaderId = -1;
            p->LeaderEpoch = -1;
            p->HighWatermark = -1;
        }
    }
    return 0;
}

static void copy_replicas(const struct meta_quorum_replica *in, size_t n,
                          struct DescribeQuorumReplicaState *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = (struct DescribeQuorumReplicaState){
            .ReplicaId = in[i].id,
            .LogEndOffset = in[i].log_end_offset,
            .LastFetchTimestamp = in[i].last_fetch_ms,
            .LastCaughtUpTimestamp = in[i].last_caught_up_ms,
        };
}

void admin_describe_quorum(struct admin *a, struct net_request *req)
{
    struct DescribeQuorumRequest *rq = req->body;
    struct DescribeQuorumResponse *rs = arena_alloc(req->arena, sizeof *rs);
    struct DescribeQuorumResponseTopicData *t;
    struct DescribeQuorumResponsePartitionData *p;
    struct meta_quorum q;

    if (rs == NULL)
        goto err_nomem;
    /* DESCRIBE on the cluster (Kafka's rule for DescribeQuorum). */
    if (!authz_allowed(req, PROTO_ACL_OP_DESCRIBE, PROTO_RESOURCE_CLUSTER, AUTHZ_CLUSTER)) {
        memset(rs, 0, sizeof *rs);
        rs->ErrorCode = ERR_CLUSTER_AUTHORIZATION_FAILED;
        net_respond(req, rs);
        return;
    }
    if (!asks_for_the_metadata_log(rq)) {
        if (echo_with_error(req->arena, rq, ERR_UNKNOWN_TOPIC_OR_PARTITION, rs) != 0)
            goto err_nomem;
        net_respond(req, rs);
        return;
    }
    t = arena_alloc(req->arena, sizeof *t);
    p = arena_alloc(req->arena, sizeof *p);
    if (t == NULL || p == NULL)
        goto err_nomem;
    t->TopicName = TOPIC_CLUSTER_METADATA;
    t->Partitions.v = p;
    t->Partitions.n = 1;
    rs->Topics.v = t;
    rs->Topics.n = 1;

    int err = meta_describe_quorum(a->meta, req->arena, &q);
    if (err == ERR_NOMEM)
        goto err_nomem;
    p->PartitionIndex = 0;
    p->LeaderId = q.leader_id;
    p->LeaderEpoch = q.leader_epoch;
    p->HighWatermark = q.high_watermark;
    if (err != 0) {
        p->ErrorCode = ERR_NOT_LEADER_OR_FOLLOWER;
        net_respond(req, rs);
        return;
    }
    p->CurrentVoters.v = arena_alloc(req->arena, (q.n_voters + 1) * sizeof *p->CurrentVoters.v);
    p->Observers.v = arena_alloc(req->arena, (q.n_observers + 1) * sizeof *p->Observers.v);
    if (p->CurrentVoters.v == NULL || p->Observers.v == NULL)
        goto err_nomem;
    copy_replicas(q.voters, q.n_voters, p->CurrentVoters.v);
    copy_replicas(q.observers, q.n_observers, p->Observers.v);
    p->CurrentVoters.n = (int32_t)q.n_voters;
    p->Observers.n = (int32_t)q.n_observers;
    net_respond(req, rs);
    return;

err_nomem:
    net_close_connection(req);
}
