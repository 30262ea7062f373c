/* SPDX-License-Identifier: Apache-2.0 */
/* DescribeGroups v0–5: each group's state, protocol and members (client id and host; the
 * selected protocol's metadata and the assignment only while Stable, as Kafka). A group that
 * does not exist is described as Dead with no error, as Kafka does. AuthorizedOperations (v3+)
 * holds the full set of a group's operations when asked for (no authorizer: everything is
 * allowed), else Kafka's "not asked" INT32_MIN. */
#include <string.h>

#include "authz/authz.h"
#include "base/arena.h"
#include "base/err.h"
#include "group_int.h"
#include "net/net.h"

/* Kafka's AclOperation codes that apply to a group: READ 3, DELETE 6, DESCRIBE 8. */
#define GROUP_OPERATIONS ((1 << 3) | (1 << 6) | (1 << 8))

static int describe(struct group_coord *gc, struct arena *ar, const char *id,
                    struct DescribedGroup *o)
{
    struct shard *sh;
    struct coord_group *g = NULL;
    int16_t err = id ? coord_find_group(gc, id, false, &sh, &g) : ERR_INVALID_GROUP_ID;

    o->GroupId = (char *)(id ? id : "");
    o->GroupState = "";
    o->ProtocolType = "";
    o->ProtocolData = "";
    o->Members.n = 0;
    if (err != 0) {
        o->ErrorCode = err;
        return 0;
    }
    if (g == NULL || group_sm_state(g->sm) == GROUP_DEAD) {
        o->GroupState = (char *)group_state_name(GROUP_DEAD);
        return 0;
    }
    enum group_state st = group_sm_state(g->sm);
    const char *pt = group_sm_protocol_type(g->sm), *pn = group_sm_protocol_name(g->sm);
    bool stable = st == GROUP_STABLE;
    int32_t n;
    const struct group_member_info *m = group_sm_members(g->sm, &n);

    o->GroupState = (char *)group_state_name(st);
    o->ProtocolType = arena_strndup(ar, pt ? pt : "", pt ? strlen(pt) : 0);
    o->ProtocolData = arena_strndup(ar, stable && pn ? pn : "", stable && pn ? strlen(pn) : 0);
    if (o->ProtocolType == NULL || o->ProtocolData == NULL)
        return ERR_NOMEM;
    if (n <= 0)
        return 0;
    o->Members.v = arena_alloc(ar, (size_t)n * sizeof *o->Members.v);
    if (o->Members.v == NULL)
        return ERR_NOMEM;
    for (int32_t i = 0; i < n; i++) {
        struct DescribedGroupMember *d = &o->Members.v[i];
        memset(d, 0, sizeof *d);
        d->MemberId = arena_strndup(ar, m[i].member_id, strlen(m[i].member_id));
        d->GroupInstanceId = m[i].group_instance_id ? arena_strndup(ar, m[i].group_instance_id,
                                                                    strlen(m[i].group_instance_id))
                                                    : NULL;
        d->ClientId = arena_strndup(ar, m[i].client_id ? m[i].client_id : "",
                                    m[i].client_id ? strlen(m[i].client_id) : 0);
        d->ClientHost = arena_strndup(ar, m[i].client_host ? m[i].client_host : "",
                                      m[i].client_host ? strlen(m[i].client_host) : 0);
        if (stable) {
            d->MemberMetadata.data = coord_dup_bytes(ar, m[i].metadata, m[i].metadata_len);
            d->MemberMetadata.len = m[i].metadata_len > 0 ? m[i].metadata_len : 0;
            d->MemberAssignment.data = coord_dup_bytes(ar, m[i].assignment, m[i].assignment_len);
            d->MemberAssignment.len = m[i].assignment_len > 0 ? m[i].assignment_len : 0;
        } else {
            d->MemberMetadata.data = d->MemberAssignment.data = (const uint8_t *)"";
        }
        if (d->MemberId == NULL || d->ClientId == NULL || d->ClientHost == NULL ||
            d->MemberMetadata.data == NULL || d->MemberAssignment.data == NULL)
            return ERR_NOMEM;
    }
    o->Members.n = n;
    return 0;
}

void group_describe_groups(struct group_coord *gc, struct net_request *req)
{
    struct DescribeGroupsRequest *rq = req->body;
    struct DescribeGroupsResponse *rs = arena_alloc(req->arena, sizeof *rs);
    bool ops = req->hdr.RequestApiVersion >= 3 && rq->IncludeAuthorizedOperations;

    if (rs == NULL)
        goto err_nomem;
    memset(rs, 0, sizeof *rs);
    rs->Groups.n = rq->Groups.n > 0 ? rq->Groups.n : 0;
    rs->Groups.v = arena_alloc(req->arena, ((size_t)rs->Groups.n + 1) * sizeof *rs->Groups.v);
    if (rs->Groups.v == NULL)
        goto err_nomem;
    for (int32_t i = 0; i < rs->Groups.n; i++) {
        struct DescribedGroup *o = &rs->Groups.v[i];
        memset(o, 0, sizeof *o);
        /* DESCRIBE on each group: without it, the error and nothing of the group. */
        const char *id = rq->Groups.v[i] ? rq->Groups.v[i] : "";
        if (!authz_allowed(req, PROTO_ACL_OP_DESCRIBE, PROTO_RESOURCE_GROUP, id)) {
            o->GroupId = (char *)id;
            o->ErrorCode = ERR_GROUP_AUTHORIZATION_FAILED;
            o->GroupState = o->ProtocolType = o->ProtocolData = "";
            o->AuthorizedOperations = INT32_MIN;
            continue;
        }
        if (describe(gc, req->arena, rq->Groups.v[i], o) != 0)
            goto err_nomem;
        o->AuthorizedOperations = !ops            ? INT32_MIN
                                  : authz_on(req) ? authz_ops(req, PROTO_RESOURCE_GROUP, id)
                                                  : GROUP_OPERATIONS;
    }
    net_respond(req, rs);
    return;

err_nomem:
    coord_nomem(req, "DescribeGroups");
}
