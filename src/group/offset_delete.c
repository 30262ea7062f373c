/* SPDX-License-Identifier: Apache-2.0 */
/* OffsetDelete v0: removes a group's committed offsets for the partitions named, with a
 * tombstone each. Allowed for an Empty group, and for a consumer group in any state except
 * for the topics its members subscribe to (GROUP_SUBSCRIBED_TO_TOPIC, KIP-496); another
 * protocol's active group answers NON_EMPTY_GROUP, an unknown one GROUP_ID_NOT_FOUND, as
 * Kafka. Answered once the tombstones are durable. */
#include <stdlib.h>
#include <string.h>

#include "authz/authz.h"
#include "base/arena.h"
#include "base/err.h"
#include "group_int.h"
#include "net/net.h"

struct odel_call {
    struct coord_append ap;
    struct net_request *req;
    struct OffsetDeleteResponse *rs;
};

static void on_written(struct coord_append *ap, int16_t err)
{
    struct odel_call *c = ap->arg;
    if (err != 0)
        c->rs->ErrorCode = coord_append_error(err, true);
    net_respond(c->req, c->rs);
}

COORD_MIRROR_TOPICS_FN(mirror_topics, struct OffsetDeleteRequest, struct OffsetDeleteResponse)

void group_offset_delete(struct group_coord *gc, struct net_request *req)
{
    struct OffsetDeleteRequest *rq = req->body;
    struct arena *ar = req->arena;
    struct OffsetDeleteResponse *rs = arena_alloc(ar, sizeof *rs);
    struct odel_call *c = arena_alloc(ar, sizeof *c);
    struct coord_record *recs = NULL;
    struct shard *sh;
    struct coord_group *g = NULL;
    int32_t n = 0, k = 0;
    int16_t err;

    if (rs == NULL || c == NULL)
        goto err_nomem;
    memset(rs, 0, sizeof *rs);
    n = mirror_topics(ar, rq, rs);
    if (n < 0)
        goto err_nomem;
    /* DELETE on the group (the error at the top), READ on each topic (below). */
    err = rq->GroupId == NULL ? ERR_INVALID_GROUP_ID
          : !authz_allowed(req, PROTO_ACL_OP_DELETE, PROTO_RESOURCE_GROUP, rq->GroupId)
              ? ERR_GROUP_AUTHORIZATION_FAILED
              : coord_find_group(gc, rq->GroupId, false, &sh, &g);
    if (err == 0 && (g == NULL || group_sm_state(g->sm) == GROUP_DEAD))
        err = ERR_GROUP_ID_NOT_FOUND;
    if (err == 0 && group_sm_state(g->sm) != GROUP_EMPTY) {
        const char *pt = group_sm_protocol_type(g->sm);
        if (pt == NULL || strcmp(pt, "consumer") != 0)
            err = ERR_NON_EMPTY_GROUP;
    }
    if (err != 0) {
        rs->ErrorCode = err;
        rs->Topics.n = 0;
        net_respond(req, rs);
        return;
    }
    recs = calloc((size_t)(n > 0 ? n : 1), sizeof *recs);
    if (recs == NULL)
        goto err_nomem;
    bool empty = group_sm_state(g->sm) == GROUP_EMPTY;
    for (int32_t i = 0; i < rs->Topics.n; i++) {
        const char *topic = rs->Topics.v[i].Name ? rs->Topics.v[i].Name : "";
        bool topic_denied = !authz_allowed(req, PROTO_ACL_OP_READ, PROTO_RESOURCE_TOPIC, topic);
        for (int32_t j = 0; j < rs->Topics.v[i].Partitions.n; j++) {
            struct OffsetDeleteResponsePartition *o = &rs->Topics.v[i].Partitions.v[j];
            struct coord_offset *off;
            if (topic_denied) {
                o->ErrorCode = ERR_TOPIC_AUTHORIZATION_FAILED;
                continue;
            }
            if (!coord_partition_known(gc, topic, o->PartitionIndex)) {
                o->ErrorCode = ERR_UNKNOWN_TOPIC_OR_PARTITION;
                continue;
            }
            if (!empty && group_sm_subscribed(g->sm, topic)) {
                o->ErrorCode = ERR_GROUP_SUBSCRIBED_TO_TOPIC;
                continue;
            }
            off = coord_offset_find(g, topic, o->PartitionIndex);
            if (off == NULL)
                continue;
            if (coord_offset_key_encode(g->id, topic, o->PartitionIndex, &recs[k].key,
                                        &recs[k].key_len) != 0) {
                for (int32_t x = 0; x < k; x++)
                    free(recs[x].key);
                free(recs);
                goto err_nomem;
            }
            k++;
            coord_offset_delete(g, off);
        }
    }
    if (k == 0) {
        free(recs);
        net_respond(req, rs);
        return;
    }
    c->req = req;
    c->rs = rs;
    coord_append_start(sh, recs, k, -1, -1, &c->ap, on_written, c);
    for (int32_t x = 0; x < k; x++)
        free(recs[x].key);
    free(recs);
    return;

err_nomem:
    coord_nomem(req, "OffsetDelete");
}
