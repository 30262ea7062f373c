/* SPDX-License-Identifier: Apache-2.0 */
/* Heartbeat v0–4: the group's state machine refreshes the member's session and says whether
 * it must rejoin. An unknown group answers UNKNOWN_MEMBER_ID, as Kafka. */
#include <string.h>

#include "authz/authz.h"
#include "base/arena.h"
#include "base/err.h"
#include "group_int.h"
#include "net/net.h"

void group_heartbeat(struct group_coord *gc, struct net_request *req)
{
    struct HeartbeatRequest *rq = req->body;
    struct HeartbeatResponse *rs = arena_alloc(req->arena, sizeof *rs);
    struct shard *sh;
    struct coord_group *g = NULL;
    int16_t err;

    if (rs == NULL) {
        coord_nomem(req, "Heartbeat");
        return;
    }
    memset(rs, 0, sizeof *rs);
    if (!authz_allowed(req, PROTO_ACL_OP_READ, PROTO_RESOURCE_GROUP,
                       rq->GroupId ? rq->GroupId : ""))
        err = ERR_GROUP_AUTHORIZATION_FAILED;
    else if (rq->GroupId == NULL || rq->GroupId[0] == '\0')
        err = ERR_INVALID_GROUP_ID;
    else
        err = coord_find_group(gc, rq->GroupId, false, &sh, &g);
    if (err == 0)
        err = g == NULL
                  ? ERR_UNKNOWN_MEMBER_ID
                  : group_sm_heartbeat(g->sm, rq->MemberId ? rq->MemberId : "",
                                       req->hdr.RequestApiVersion >= 3 ? rq->GroupInstanceId : NULL,
                                       rq->GenerationId);
    rs->ErrorCode = err;
    net_respond(req, rs);
}
