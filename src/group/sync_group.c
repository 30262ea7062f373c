/* SPDX-License-Identifier: Apache-2.0 */
/* SyncGroup v0–5: hands the member (and, from the leader, the assignment) to the group's
 * state machine; the answer comes once the leader's assignment is stored. An unknown group
 * answers UNKNOWN_MEMBER_ID, as Kafka. */
#include <string.h>

#include "authz/authz.h"
#include "base/arena.h"
#include "base/err.h"
#include "group_int.h"
#include "net/net.h"

struct sync_call {
    struct group_sync_waiter w;
    struct net_request *req;
    struct SyncGroupResponse *rs;
};

static void on_synced(struct group_sync_waiter *w, const struct group_sync_result *r)
{
    struct sync_call *c = (struct sync_call *)w;
    struct arena *ar = c->req->arena;
    struct SyncGroupResponse *rs = c->rs;

    rs->ErrorCode = r->error;
    rs->ProtocolType =
        r->protocol_type ? arena_strndup(ar, r->protocol_type, strlen(r->protocol_type)) : NULL;
    rs->ProtocolName =
        r->protocol_name ? arena_strndup(ar, r->protocol_name, strlen(r->protocol_name)) : NULL;
    rs->Assignment.data = coord_dup_bytes(ar, r->assignment, r->len);
    rs->Assignment.len = r->len > 0 ? r->len : 0;
    if (rs->Assignment.data == NULL) {
        coord_nomem(c->req, "SyncGroup");
        return;
    }
    net_respond(c->req, rs);
}

void group_sync_group(struct group_coord *gc, struct net_request *req)
{
    struct SyncGroupRequest *rq = req->body;
    struct arena *ar = req->arena;
    int16_t v = req->hdr.RequestApiVersion;
    struct SyncGroupResponse *rs = arena_alloc(ar, sizeof *rs);
    struct sync_call *c = arena_alloc(ar, sizeof *c);
    struct group_assignment *as = NULL;
    struct shard *sh;
    struct coord_group *g = NULL;
    int16_t err;

    if (rs == NULL || c == NULL)
        goto err_nomem;
    memset(rs, 0, sizeof *rs);
    memset(c, 0, sizeof *c);
    if (!authz_allowed(req, PROTO_ACL_OP_READ, PROTO_RESOURCE_GROUP,
                       rq->GroupId ? rq->GroupId : ""))
        err = ERR_GROUP_AUTHORIZATION_FAILED;
    else if (rq->GroupId == NULL || rq->GroupId[0] == '\0')
        err = ERR_INVALID_GROUP_ID;
    else
        err = coord_find_group(gc, rq->GroupId, false, &sh, &g);
    if (err == 0 && g == NULL)
        err = ERR_UNKNOWN_MEMBER_ID;
    if (err != 0) {
        rs->ErrorCode = err;
        net_respond(req, rs);
        return;
    }
    int32_t na = rq->Assignments.n > 0 ? rq->Assignments.n : 0;
    if (na > 0 && (as = arena_alloc(ar, (size_t)na * sizeof *as)) == NULL)
        goto err_nomem;
    for (int32_t i = 0; i < na; i++) {
        as[i].member_id = rq->Assignments.v[i].MemberId ? rq->Assignments.v[i].MemberId : "";
        as[i].assignment = rq->Assignments.v[i].Assignment.data;
        as[i].len =
            rq->Assignments.v[i].Assignment.len > 0 ? rq->Assignments.v[i].Assignment.len : 0;
    }
    struct group_sync_args a = {
        .member_id = rq->MemberId ? rq->MemberId : "",
        .group_instance_id = v >= 3 ? rq->GroupInstanceId : NULL,
        .generation_id = rq->GenerationId,
        .protocol_type = v >= 5 ? rq->ProtocolType : NULL,
        .protocol_name = v >= 5 ? rq->ProtocolName : NULL,
        .n_assignments = na,
        .assignments = as,
    };
    c->req = req;
    c->rs = rs;
    c->w.done = on_synced;
    group_sm_sync(g->sm, &a, &c->w);
    return;

err_nomem:
    coord_nomem(req, "SyncGroup");
}
