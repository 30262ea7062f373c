/* SPDX-License-Identifier: Apache-2.0 */
/* OffsetFetch v0–8: a group's committed offsets, for the partitions asked (offset -1 and no
 * error for a partition without one, and for a group that does not exist) or, when Topics is
 * null (v2+), every partition it has. v8 asks for several groups at once, each answered on its
 * own. With RequireStable (v7+) a partition whose transactional offset is still pending
 * answers UNSTABLE_OFFSET_COMMIT. Before v2 a coordinator error goes into every partition. */
#include <string.h>

#include "authz/authz.h"
#include "base/arena.h"
#include "base/err.h"
#include "group_int.h"
#include "net/net.h"

/* The v0-7 and v8 partition and topic structs have the same layout. */
_Static_assert(sizeof(struct OffsetFetchResponsePartition) ==
                   sizeof(struct OffsetFetchResponsePartitions),
               "OffsetFetch partition layouts differ");
_Static_assert(sizeof(struct OffsetFetchResponseTopic) == sizeof(struct OffsetFetchResponseTopics),
               "OffsetFetch topic layouts differ");
_Static_assert(sizeof(struct OffsetFetchRequestTopic) == sizeof(struct OffsetFetchRequestTopics),
               "OffsetFetch request topic layouts differ");

struct all_topics {
    struct arena *ar;
    struct OffsetFetchResponseTopic *topics;
    int32_t n, cap;
    bool nomem;
};

static void fill_partition(struct group_coord *gc, struct coord_group *g, const char *topic,
                           int32_t part, bool require_stable,
                           struct OffsetFetchResponsePartition *o)
{
    struct coord_offset *off = g ? coord_offset_find(g, topic, part) : NULL;
    o->PartitionIndex = part;
    o->CommittedOffset = -1;
    o->CommittedLeaderEpoch = -1;
    o->Metadata = "";
    o->ErrorCode = 0;
    if (require_stable && g && group_offsets_pending(gc, g->id, topic, part)) {
        o->ErrorCode = ERR_UNSTABLE_OFFSET_COMMIT;
        return;
    }
    if (off) {
        o->CommittedOffset = off->offset;
        o->CommittedLeaderEpoch = off->leader_epoch;
        o->Metadata = off->metadata;
    }
}

/* Collects every committed offset of the group, one topic entry per topic. */
static void collect(void *arg, struct ghash_node *n)
{
    struct all_topics *at = arg;
    struct coord_offset *off = (struct coord_offset *)n;
    struct OffsetFetchResponseTopic *t = NULL;

    if (at->nomem)
        return;
    for (int32_t i = 0; i < at->n; i++)
        if (strcmp(at->topics[i].Name, off->topic) == 0)
            t = &at->topics[i];
    if (t == NULL) {
        if (at->n == at->cap) {
            int32_t cap = at->cap ? at->cap * 2 : 8;
            struct OffsetFetchResponseTopic *nt = arena_alloc(at->ar, (size_t)cap * sizeof *nt);
            if (nt == NULL) {
                at->nomem = true;
                return;
            }
            if (at->n)
                memcpy(nt, at->topics, (size_t)at->n * sizeof *nt);
            at->topics = nt;
            at->cap = cap;
        }
        t = &at->topics[at->n++];
        memset(t, 0, sizeof *t);
        t->Name = (char *)off->topic;
    }
    /* Partition arrays grow by doubling inside the arena (counts are small). */
    int32_t pn = t->Partitions.n;
    if ((pn & (pn - 1)) == 0) {
        int32_t cap = pn ? pn * 2 : 1;
        struct OffsetFetchResponsePartition *np = arena_alloc(at->ar, (size_t)cap * sizeof *np);
        if (np == NULL) {
            at->nomem = true;
            return;
        }
        if (pn)
            memcpy(np, t->Partitions.v, (size_t)pn * sizeof *np);
        t->Partitions.v = np;
    }
    struct OffsetFetchResponsePartition *o = &t->Partitions.v[t->Partitions.n++];
    o->PartitionIndex = off->partition;
    o->CommittedOffset = off->offset;
    o->CommittedLeaderEpoch = off->leader_epoch;
    o->Metadata = off->metadata;
    o->ErrorCode = 0;
}

/* One group's answer: *topics (and *n) for the request's topics (NULL = all). Returns the
 * group-level error, or ERR_NOMEM. */
static int fetch_group(struct group_coord *gc, struct net_request *req, const char *group_id,
                       const struct OffsetFetchRequestTopic *rq_topics, int32_t rq_n,
                       bool require_stable, struct OffsetFetchResponseTopic **topics, int32_t *n)
{
    struct arena *ar = req->arena;
    struct shard *sh;
    struct coord_group *g = NULL;
    /* DESCRIBE on the group, then on each topic (Kafka's rules for OffsetFetch). */
    int16_t err = group_id == NULL ? ERR_INVALID_GROUP_ID
                  : !authz_allowed(req, PROTO_ACL_OP_DESCRIBE, PROTO_RESOURCE_GROUP, group_id)
                      ? ERR_GROUP_AUTHORIZATION_FAILED
                      : coord_find_group(gc, group_id, false, &sh, &g);

    *topics = NULL;
    *n = 0;
    if (rq_n < 0) {
        struct all_topics at = {.ar = ar};
        if (err == 0 && g)
            ghash_each(&g->offsets, collect, &at);
        if (at.nomem)
            return ERR_NOMEM;
        /* All the group's offsets: only those of topics the principal may DESCRIBE. */
        int32_t kept = 0;
        for (int32_t i = 0; i < at.n; i++)
            if (authz_allowed_quiet(req, PROTO_ACL_OP_DESCRIBE, PROTO_RESOURCE_TOPIC,
                                    at.topics[i].Name))
                at.topics[kept++] = at.topics[i];
        at.n = kept;
        if (err == 0 && require_stable && g)
            for (int32_t i = 0; i < at.n; i++)
                for (int32_t j = 0; j < at.topics[i].Partitions.n; j++)
                    fill_partition(gc, g, at.topics[i].Name,
                                   at.topics[i].Partitions.v[j].PartitionIndex, true,
                                   &at.topics[i].Partitions.v[j]);
        *topics = at.topics;
        *n = at.n;
        return err;
    }
    *topics = arena_alloc(ar, ((size_t)rq_n + 1) * sizeof **topics);
    if (*topics == NULL)
        return ERR_NOMEM;
    *n = rq_n;
    for (int32_t i = 0; i < rq_n; i++) {
        const struct OffsetFetchRequestTopic *t = &rq_topics[i];
        struct OffsetFetchResponseTopic *o = &(*topics)[i];
        int32_t np = t->PartitionIndexes.n > 0 ? t->PartitionIndexes.n : 0;
        o->Name = t->Name;
        o->Partitions.n = np;
        o->Partitions.v = arena_alloc(ar, ((size_t)np + 1) * sizeof *o->Partitions.v);
        if (o->Partitions.v == NULL)
            return ERR_NOMEM;
        bool topic_denied =
            err == 0 && !authz_allowed(req, PROTO_ACL_OP_DESCRIBE, PROTO_RESOURCE_TOPIC,
                                       t->Name ? t->Name : "");
        for (int32_t j = 0; j < np; j++) {
            fill_partition(gc, err == 0 && !topic_denied ? g : NULL, t->Name ? t->Name : "",
                           t->PartitionIndexes.v[j], require_stable && err == 0 && !topic_denied,
                           &o->Partitions.v[j]);
            if (err != 0)
                o->Partitions.v[j].ErrorCode = err;
            else if (topic_denied)
                o->Partitions.v[j].ErrorCode = ERR_TOPIC_AUTHORIZATION_FAILED;
        }
    }
    return err;
}

void group_offset_fetch(struct group_coord *gc, struct net_request *req)
{
    struct OffsetFetchRequest *rq = req->body;
    struct arena *ar = req->arena;
    int16_t v = req->hdr.RequestApiVersion;
    struct OffsetFetchResponse *rs = arena_alloc(ar, sizeof *rs);
    bool stable = v >= 7 && rq->RequireStable;
    int rc;

    if (rs == NULL)
        goto err_nomem;
    memset(rs, 0, sizeof *rs);
    if (v < 8) {
        /* Topics null (v2+) = every partition of the group. */
        int32_t rq_n = rq->Topics.n < 0 && v >= 2 ? -1 : (rq->Topics.n > 0 ? rq->Topics.n : 0);
        rc = fetch_group(gc, req, rq->GroupId, rq->Topics.v, rq_n, stable, &rs->Topics.v,
                         &rs->Topics.n);
        if (rc == ERR_NOMEM)
            goto err_nomem;
        /* v2+ carry a top-level error too; v0–1 only the partitions'. */
        if (v >= 2)
            rs->ErrorCode = (int16_t)rc;
        net_respond(req, rs);
        return;
    }
    int32_t ng = rq->Groups.n > 0 ? rq->Groups.n : 0;
    rs->Groups.n = ng;
    rs->Groups.v = arena_alloc(ar, ((size_t)ng + 1) * sizeof *rs->Groups.v);
    if (rs->Groups.v == NULL)
        goto err_nomem;
    for (int32_t i = 0; i < ng; i++) {
        struct OffsetFetchRequestGroup *gq = &rq->Groups.v[i];
        struct OffsetFetchResponseGroup *go = &rs->Groups.v[i];
        int32_t rq_n = gq->Topics.n < 0 ? -1 : gq->Topics.n;
        struct OffsetFetchResponseTopic *topics;
        int32_t n;
        go->GroupId = gq->GroupId;
        rc = fetch_group(gc, req, gq->GroupId, (const struct OffsetFetchRequestTopic *)gq->Topics.v,
                         rq_n, stable, &topics, &n);
        if (rc == ERR_NOMEM)
            goto err_nomem;
        go->ErrorCode = (int16_t)rc;
        go->Topics.v = (struct OffsetFetchResponseTopics *)topics;
        go->Topics.n = n;
    }
    net_respond(req, rs);
    return;

err_nomem:
    coord_nomem(req, "OffsetFetch");
}
