/* SPDX-License-Identifier: Apache-2.0 */
/* LeaveGroup v0–5: v0–2 name one member (its error is the answer's); v3+ list members, each
 * answered on its own under a top-level error for the group as a whole. An unknown group:
 * every member UNKNOWN_MEMBER_ID, as Kafka. */
#include <string.h>

#include "authz/authz.h"
#include "base/arena.h"
#include "base/err.h"
#include "group_int.h"
#include "net/net.h"

void group_leave_group(struct group_coord *gc, struct net_request *req)
{
    struct LeaveGroupRequest *rq = req->body;
    struct LeaveGroupResponse *rs = arena_alloc(req->arena, sizeof *rs);
    int16_t v = req->hdr.RequestApiVersion;
    struct shard *sh;
    struct coord_group *g = NULL;
    int16_t err;

    if (rs == NULL)
        goto err_nomem;
    memset(rs, 0, sizeof *rs);
    if (!authz_allowed(req, PROTO_ACL_OP_READ, PROTO_RESOURCE_GROUP,
                       rq->GroupId ? rq->GroupId : ""))
        err = ERR_GROUP_AUTHORIZATION_FAILED;
    else if (rq->GroupId == NULL || rq->GroupId[0] == '\0')
        err = ERR_INVALID_GROUP_ID;
    else
        err = coord_find_group(gc, rq->GroupId, false, &sh, &g);
    if (err != 0) {
        rs->ErrorCode = err;
        net_respond(req, rs);
        return;
    }
    if (v < 3) {
        rs->ErrorCode = g == NULL
                            ? ERR_UNKNOWN_MEMBER_ID
                            : group_sm_leave(g->sm, rq->MemberId ? rq->MemberId : "", NULL, NULL);
        net_respond(req, rs);
        return;
    }
    int32_t n = rq->Members.n > 0 ? rq->Members.n : 0;
    rs->Members.n = n;
    rs->Members.v = arena_alloc(req->arena, ((size_t)n + 1) * sizeof *rs->Members.v);
    if (rs->Members.v == NULL)
        goto err_nomem;
    for (int32_t i = 0; i < n; i++) {
        struct MemberIdentity *m = &rq->Members.v[i];
        struct MemberResponse *o = &rs->Members.v[i];
        o->MemberId = m->MemberId ? m->MemberId : "";
        o->GroupInstanceId = m->GroupInstanceId;
        /* A member's leave may make the group rebalance and even empty it; the group stays
         * (an Empty group is only removed by expiry or DeleteGroups). */
        o->ErrorCode = g == NULL ? ERR_UNKNOWN_MEMBER_ID
                                 : group_sm_leave(g->sm, o->MemberId, m->GroupInstanceId,
                                                  v >= 5 ? m->Reason : NULL);
    }
    net_respond(req, rs);
    return;

err_nomem:
    coord_nomem(req, "LeaveGroup");
}
