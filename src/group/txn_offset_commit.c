/* SPDX-License-Identifier: Apache-2.0 */
/* TxnOffsetCommit v0-3: a transactional producer's offsets for a group (sendOffsetsToTransaction).
 * Decoded here and handed to group_txn_offset_commit, which checks the committer (KIP-447:
 * v3 carries the member id, generation and group instance id, and a stale one gets
 * ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID / FENCED_INSTANCE_ID, so that a zombie's
 * transaction aborts; v0-2 name no member and are checked only against the group's
 * existence), appends the offsets in one transactional batch of the producer, and keeps them
 * pending until the producer's COMMIT or ABORT marker reaches the group's partition
 * (group_txn_complete). The answer comes once the batch is durable: one error for the whole
 * request goes into every partition; partitions with their own error
 * (UNKNOWN_TOPIC_OR_PARTITION, OFFSET_METADATA_TOO_LARGE) keep it. */
#include <stdlib.h>
#include <string.h>

#include "authz/authz.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/slog.h"
#include "group_int.h"
#include "net/net.h"

struct txn_commit_call {
    struct net_request *req;
    struct TxnOffsetCommitResponse *rs;
    int16_t *errs; /* one per partition committed, in request order */
    bool *denied;  /* per partition of the request: its topic may not be read (not committed) */
};

static void fill(struct TxnOffsetCommitResponse *rs, int16_t err, const int16_t *errs,
                 const bool *denied)
{
    int32_t k = 0, p = 0;
    for (int32_t i = 0; i < rs->Topics.n; i++)
        for (int32_t j = 0; j < rs->Topics.v[i].Partitions.n; j++, p++) {
            if (denied && denied[p]) {
                rs->Topics.v[i].Partitions.v[j].ErrorCode = ERR_TOPIC_AUTHORIZATION_FAILED;
                continue;
            }
            int16_t own = errs ? errs[k] : 0;
            k++;
            rs->Topics.v[i].Partitions.v[j].ErrorCode = own != 0 ? own : err;
        }
}

static void on_done(void *arg, int16_t err)
{
    struct txn_commit_call *c = arg;
    fill(c->rs, err, c->errs, c->denied);
    net_respond(c->req, c->rs);
}

COORD_MIRROR_TOPICS_FN(mirror_topics, struct TxnOffsetCommitRequest, struct TxnOffsetCommitResponse)

void group_txn_offset_commit_request(struct group_coord *gc, struct net_request *req)
{
    struct TxnOffsetCommitRequest *rq = req->body;
    struct arena *ar = req->arena;
    int16_t v = req->hdr.RequestApiVersion;
    struct TxnOffsetCommitResponse *rs = arena_alloc(ar, sizeof *rs);
    struct txn_commit_call *c = arena_alloc(ar, sizeof *c);
    struct group_txn_offset *offs;
    int32_t n = 0, k = 0;

    if (rs == NULL || c == NULL)
        goto err_nomem;
    memset(rs, 0, sizeof *rs);
    n = mirror_topics(ar, rq, rs);
    if (n < 0)
        goto err_nomem;
    if (rq->GroupId == NULL || rq->TransactionalId == NULL) {
        fill(rs, rq->GroupId == NULL ? ERR_INVALID_GROUP_ID : ERR_INVALID_REQUEST, NULL, NULL);
        net_respond(req, rs);
        return;
    }
    /* Kafka's order: WRITE on the transactional id, READ on the group, then READ on each
     * topic (the partitions of a topic that may not be read are not committed). */
    int16_t denied_all = !authz_allowed(req, PROTO_ACL_OP_WRITE, PROTO_RESOURCE_TRANSACTIONAL_ID,
                                        rq->TransactionalId)
                             ? ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED
                         : !authz_allowed(req, PROTO_ACL_OP_READ, PROTO_RESOURCE_GROUP, rq->GroupId)
                             ? ERR_GROUP_AUTHORIZATION_FAILED
                             : 0;
    if (denied_all != 0) {
        fill(rs, denied_all, NULL, NULL);
        net_respond(req, rs);
        return;
    }
    offs = arena_alloc(ar, ((size_t)n + 1) * sizeof *offs);
    c->errs = arena_alloc(ar, ((size_t)n + 1) * sizeof *c->errs);
    c->denied = arena_alloc(ar, (size_t)n + 1);
    if (offs == NULL || c->errs == NULL || c->denied == NULL)
        goto err_nomem;
    int32_t p_at = 0;
    for (int32_t i = 0; i < rs->Topics.n; i++) {
        struct TxnOffsetCommitRequestTopic *t = &rq->Topics.v[i];
        bool topic_denied =
            !authz_allowed(req, PROTO_ACL_OP_READ, PROTO_RESOURCE_TOPIC, t->Name ? t->Name : "");
        for (int32_t j = 0; j < rs->Topics.v[i].Partitions.n; j++) {
            struct TxnOffsetCommitRequestPartition *p = &t->Partitions.v[j];
            c->denied[p_at++] = topic_denied;
            if (topic_denied)
                continue;
            offs[k++] = (struct group_txn_offset){
                .topic = t->Name ? t->Name : "",
                .partition = p->PartitionIndex,
                .offset = p->CommittedOffset,
                .leader_epoch = v >= 2 ? p->CommittedLeaderEpoch : -1,
                .metadata = p->CommittedMetadata,
            };
        }
    }
    c->req = req;
    c->rs = rs;
    if (k == 0 && n > 0) {
        fill(rs, 0, NULL, c->denied);
        net_respond(req, rs);
        return;
    }
    group_txn_offset_commit(gc, rq->GroupId, rq->ProducerId, rq->ProducerEpoch,
                            v >= 3 && rq->MemberId ? rq->MemberId : "",
                            v >= 3 ? rq->GroupInstanceId : NULL, v >= 3 ? rq->GenerationId : -1,
                            offs, k, c->errs, on_done, c);
    return;

err_nomem:
    slog_error("group", "out of memory in TxnOffsetCommit from %s; closing", req->peer);
    net_close_connection(req);
}
