/* SPDX-License-Identifier: Apache-2.0 */
/* OffsetCommit v0–8: checks the committer against the group (group_sm_check_commit: a
 * generation -1 commit with no member is a simple commit, accepted for an Empty group; an
 * unknown group takes it only at generation -1, else ILLEGAL_GENERATION, as Kafka), then each
 * partition (UNKNOWN_TOPIC_OR_PARTITION, OFFSET_METADATA_TOO_LARGE past
 * offset.metadata.max.bytes), appends the rest as one batch of OffsetCommit records and answers
 * once it is durable; the offsets become visible then. */
#include <stdlib.h>
#include <string.h>

#include "authz/authz.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/slog.h"
#include "group_int.h"
#include "net/net.h"

struct commit_call {
    struct coord_append ap;
    struct net_request *req;
    struct OffsetCommitResponse *rs;
    char *group_id;
    uint64_t incarnation;
    int64_t commit_ts;
};

/* Every partition of the answer gets `err`. */
static void fill_all(struct OffsetCommitResponse *rs, int16_t err)
{
    for (int32_t i = 0; i < rs->Topics.n; i++)
        for (int32_t j = 0; j < rs->Topics.v[i].Partitions.n; j++)
            rs->Topics.v[i].Partitions.v[j].ErrorCode = err;
}

static void on_committed(struct coord_append *ap, int16_t err)
{
    struct commit_call *c = ap->arg;
    struct OffsetCommitRequest *rq = c->req->body;
    struct OffsetCommitResponse *rs = c->rs;
    struct coord_group *g = NULL;
    int16_t mapped = err == 0 ? 0 : coord_append_error(err, true);

    /* A group deleted (or replaced) meanwhile does not get the offsets back: its tombstones
     * follow this batch in the log, so a replay would not have them either. */
    if (err == 0 && !ap->unloaded)
        g = coord_group_again(ap->sh, c->group_id, c->incarnation);
    for (int32_t i = 0; i < rs->Topics.n; i++) {
        struct OffsetCommitRequestTopic *t = &rq->Topics.v[i];
        for (int32_t j = 0; j < rs->Topics.v[i].Partitions.n; j++) {
            struct OffsetCommitResponsePartition *o = &rs->Topics.v[i].Partitions.v[j];
            struct OffsetCommitRequestPartition *p = &t->Partitions.v[j];
            if (o->ErrorCode != 0)
                continue;
            if (mapped != 0) {
                o->ErrorCode = mapped;
                continue;
            }
            if (g != NULL &&
                coord_offset_set(g, t->Name, p->PartitionIndex, p->CommittedOffset,
                                 p->CommittedLeaderEpoch, p->CommittedMetadata, c->commit_ts) != 0)
                o->ErrorCode = ERR_COORDINATOR_NOT_AVAILABLE;
        }
    }
    net_respond(c->req, rs);
}

COORD_MIRROR_TOPICS_FN(mirror_topics, struct OffsetCommitRequest, struct OffsetCommitResponse)

/* One line for a commit refused for its generation: a member still at an old generation (a
 * zombie, or a client racing a rebalance) loses the offsets it meant to store, and the next
 * owner of those partitions reads from the last commit again. Names the first partitions and
 * their offsets so that redelivery can be traced to the refusal. */
static void log_stale_commit(const struct OffsetCommitRequest *rq, const char *member,
                             int32_t generation, int32_t group_generation)
{
    char parts[256];
    size_t used = 0;
    int listed = 0, total = 0;
    parts[0] = '\0';
    for (int32_t i = 0; i < rq->Topics.n; i++)
        for (int32_t j = 0; j < rq->Topics.v[i].Partitions.n; j++, total++) {
            const struct OffsetCommitRequestPartition *p = &rq->Topics.v[i].Partitions.v[j];
            int w = snprintf(parts + used, sizeof parts - used, "%s%s-%d@%lld", listed ? " " : "",
                             rq->Topics.v[i].Name ? rq->Topics.v[i].Name : "?",
                             (int)p->PartitionIndex, (long long)p->CommittedOffset);
            if (w < 0 || (size_t)w >= sizeof parts - used) {
                parts[used] = '\0';
                continue;
            }
            used += (size_t)w;
            listed++;
        }
    slog_info("group",
              "group %s: OffsetCommit from member %s at generation %d refused, the group is at "
              "generation %d (ILLEGAL_GENERATION): %s%s",
              rq->GroupId, member, (int)generation, (int)group_generation, parts,
              listed < total ? " ..." : "");
}

void group_offset_commit(struct group_coord *gc, struct net_request *req)
{
    struct OffsetCommitRequest *rq = req->body;
    struct arena *ar = req->arena;
    int16_t v = req->hdr.RequestApiVersion;
    struct OffsetCommitResponse *rs = arena_alloc(ar, sizeof *rs);
    struct commit_call *c = arena_alloc(ar, sizeof *c);
    struct coord_record *recs = NULL;
    struct shard *sh;
    struct coord_group *g = NULL;
    int32_t n = 0, k = 0;
    int32_t generation = v >= 1 ? rq->GenerationIdOrMemberEpoch : -1;
    const char *member = v >= 1 && rq->MemberId ? rq->MemberId : "";
    int16_t err;

    if (rs == NULL || c == NULL)
        goto err_nomem;
    memset(rs, 0, sizeof *rs);
    memset(c, 0, sizeof *c);
    n = mirror_topics(ar, rq, rs);
    if (n < 0)
        goto err_nomem;
    if (v < 6)
        for (int32_t i = 0; i < rs->Topics.n; i++)
            for (int32_t j = 0; j < rs->Topics.v[i].Partitions.n; j++)
                rq->Topics.v[i].Partitions.v[j].CommittedLeaderEpoch = -1;
    /* Empty group ids stay valid for offset commits (Kafka keeps them for old clients). */
    if (rq->GroupId == NULL) {
        fill_all(rs, ERR_INVALID_GROUP_ID);
        net_respond(req, rs);
        return;
    }
    /* READ on the group (every partition answers the error without it), then READ on each
     * topic (below): nothing is committed for what the principal may not read. */
    if (!authz_allowed(req, PROTO_ACL_OP_READ, PROTO_RESOURCE_GROUP, rq->GroupId)) {
        fill_all(rs, ERR_GROUP_AUTHORIZATION_FAILED);
        net_respond(req, rs);
        return;
    }
    err = coord_find_group(gc, rq->GroupId, false, &sh, &g);
    if (err == 0 && g == NULL) {
        if (generation >= 0)
            err = ERR_ILLEGAL_GENERATION;
        else if ((g = coord_group_get(sh, rq->GroupId)) == NULL)
            err = ERR_COORDINATOR_NOT_AVAILABLE;
    }
    if (err == 0)
        err = group_sm_check_commit(g->sm, member, v >= 7 ? rq->GroupInstanceId : NULL, generation,
                                    false);
    if (err == ERR_ILLEGAL_GENERATION && g != NULL)
        log_stale_commit(rq, member, generation, group_sm_generation(g->sm));
    if (err != 0) {
        fill_all(rs, err);
        net_respond(req, rs);
        return;
    }
    c->req = req;
    c->rs = rs;
    c->group_id = rq->GroupId;
    c->incarnation = g->incarnation;
    c->commit_ts = tclock_now_ms(gc->clock);
    recs = calloc((size_t)(n > 0 ? n : 1), sizeof *recs);
    if (recs == NULL)
        goto err_nomem;
    for (int32_t i = 0; i < rs->Topics.n; i++) {
        struct OffsetCommitRequestTopic *t = &rq->Topics.v[i];
        bool topic_denied =
            !authz_allowed(req, PROTO_ACL_OP_READ, PROTO_RESOURCE_TOPIC, t->Name ? t->Name : "");
        for (int32_t j = 0; j < rs->Topics.v[i].Partitions.n; j++) {
            struct OffsetCommitRequestPartition *p = &t->Partitions.v[j];
            struct OffsetCommitResponsePartition *o = &rs->Topics.v[i].Partitions.v[j];
            const char *md = p->CommittedMetadata ? p->CommittedMetadata : "";
            if (topic_denied) {
                o->ErrorCode = ERR_TOPIC_AUTHORIZATION_FAILED;
                continue;
            }
            if (!coord_partition_known(gc, t->Name, p->PartitionIndex)) {
                o->ErrorCode = ERR_UNKNOWN_TOPIC_OR_PARTITION;
                continue;
            }
            if (strlen(md) > (size_t)gc->metadata_max_bytes) {
                o->ErrorCode = ERR_OFFSET_METADATA_TOO_LARGE;
                continue;
            }
            struct coord_offset_value val = {p->CommittedOffset, p->CommittedLeaderEpoch, md,
                                             c->commit_ts};
            int rc = coord_offset_key_encode(rq->GroupId, t->Name, p->PartitionIndex, &recs[k].key,
                                             &recs[k].key_len);
            if (rc == 0)
                rc = coord_offset_value_encode(&val, &recs[k].value, &recs[k].value_len);
            k++;
            if (rc != 0)
                goto err_recs;
        }
    }
    if (k == 0) {
        free(recs);
        net_respond(req, rs);
        return;
    }
    coord_append_start(sh, recs, k, -1, -1, &c->ap, on_committed, c);
    for (int32_t i = 0; i < k; i++) {
        free(recs[i].key);
        free(recs[i].value);
    }
    free(recs);
    return;

err_recs:
    for (int32_t i = 0; i < k; i++) {
        free(recs[i].key);
        free(recs[i].value);
    }
    free(recs);
err_nomem:
    coord_nomem(req, "OffsetCommit");
}
