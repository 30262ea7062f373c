/* SPDX-License-Identifier: Apache-2.0 */
/* JoinGroup v0–9: finds the group (created Empty on first join), hands the member to its
 * state machine and answers when the join phase ends. What one member may store is bounded:
 * its protocols' metadata together at most JOIN_METADATA_MAX bytes. Kafka bounds it only by
 * socket.request.max.bytes and then fails the group's SyncGroup with UNKNOWN_SERVER_ERROR when
 * the group's record passes max.message.bytes; Tally refuses such a join at once with
 * INVALID_REQUEST, so one client cannot make the coordinator hold a 100 MiB subscription. */
#include <string.h>

#include "authz/authz.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/slog.h"
#include "group_int.h"
#include "net/net.h"

/* Kafka's default max.message.bytes: a group's metadata record must fit one batch. */
#define JOIN_METADATA_MAX (1024 * 1024)

struct join_call {
    struct group_join_waiter w;
    struct net_request *req;
    struct JoinGroupResponse *rs;
};

static void answer(struct net_request *req, struct JoinGroupResponse *rs, int16_t err,
                   const char *member_id)
{
    rs->ErrorCode = err;
    rs->GenerationId = -1;
    rs->Leader = "";
    rs->MemberId = (char *)(member_id ? member_id : "");
    net_respond(req, rs);
}

static void on_joined(struct group_join_waiter *w, const struct group_join_result *r)
{
    struct join_call *c = (struct join_call *)w;
    struct arena *ar = c->req->arena;
    struct JoinGroupResponse *rs = c->rs;

    rs->ErrorCode = r->error;
    rs->GenerationId = r->generation_id;
    rs->ProtocolType =
        r->protocol_type ? arena_strndup(ar, r->protocol_type, strlen(r->protocol_type)) : NULL;
    rs->ProtocolName =
        r->protocol_name ? arena_strndup(ar, r->protocol_name, strlen(r->protocol_name)) : NULL;
    rs->Leader = arena_strndup(ar, r->leader ? r->leader : "", r->leader ? strlen(r->leader) : 0);
    rs->MemberId = arena_strndup(ar, r->member_id ? r->member_id : "",
                                 r->member_id ? strlen(r->member_id) : 0);
    rs->SkipAssignment = r->skip_assignment;
    rs->Members.n = 0;
    if (r->n_members > 0) {
        rs->Members.v = arena_alloc(ar, (size_t)r->n_members * sizeof *rs->Members.v);
        for (int32_t i = 0; rs->Members.v && i < r->n_members; i++) {
            const struct group_member_info *m = &r->members[i];
            struct JoinGroupResponseMember *o = &rs->Members.v[i];
            o->MemberId = arena_strndup(ar, m->member_id, strlen(m->member_id));
            o->GroupInstanceId = m->group_instance_id ? arena_strndup(ar, m->group_instance_id,
                                                                      strlen(m->group_instance_id))
                                                      : NULL;
            o->Metadata.data = coord_dup_bytes(ar, m->metadata, m->metadata_len);
            o->Metadata.len = m->metadata_len > 0 ? m->metadata_len : 0;
            if (o->MemberId == NULL || o->Metadata.data == NULL)
                break;
            rs->Members.n = i + 1;
        }
    }
    if (rs->Leader == NULL || rs->MemberId == NULL || rs->Members.n != r->n_members) {
        coord_nomem(c->req, "JoinGroup");
        return;
    }
    net_respond(c->req, rs);
}

void group_join_group(struct group_coord *gc, struct net_request *req)
{
    struct JoinGroupRequest *rq = req->body;
    struct arena *ar = req->arena;
    int16_t v = req->hdr.RequestApiVersion;
    struct JoinGroupResponse *rs = arena_alloc(ar, sizeof *rs);
    struct join_call *c = arena_alloc(ar, sizeof *c);
    struct group_protocol *protos = NULL;
    struct shard *sh;
    struct coord_group *g;
    int64_t total = 0;
    int16_t err;

    if (rs == NULL || c == NULL)
        goto err_nomem;
    memset(rs, 0, sizeof *rs);
    memset(c, 0, sizeof *c);
    /* READ on the group, before anything of the group is looked at. */
    if (!authz_allowed(req, PROTO_ACL_OP_READ, PROTO_RESOURCE_GROUP,
                       rq->GroupId ? rq->GroupId : "")) {
        answer(req, rs, ERR_GROUP_AUTHORIZATION_FAILED, rq->MemberId);
        return;
    }
    if (rq->GroupId == NULL || rq->GroupId[0] == '\0') {
        answer(req, rs, ERR_INVALID_GROUP_ID, rq->MemberId);
        return;
    }
    int32_t np = rq->Protocols.n > 0 ? rq->Protocols.n : 0;
    for (int32_t i = 0; i < np; i++)
        total += rq->Protocols.v[i].Metadata.len > 0 ? rq->Protocols.v[i].Metadata.len : 0;
    if (total > JOIN_METADATA_MAX) {
        slog_info("group",
                  "JoinGroup of group %s from %s refused: %lld bytes of protocol "
                  "metadata (at most %d)",
                  rq->GroupId, req->peer, (long long)total, JOIN_METADATA_MAX);
        answer(req, rs, ERR_INVALID_REQUEST, rq->MemberId);
        return;
    }
    err = coord_find_group(gc, rq->GroupId, true, &sh, &g);
    if (err != 0) {
        answer(req, rs, err, rq->MemberId);
        return;
    }
    if (np > 0 && (protos = arena_alloc(ar, (size_t)np * sizeof *protos)) == NULL)
        goto err_nomem;
    for (int32_t i = 0; i < np; i++) {
        protos[i].name = rq->Protocols.v[i].Name ? rq->Protocols.v[i].Name : "";
        protos[i].metadata = rq->Protocols.v[i].Metadata.data;
        protos[i].len = rq->Protocols.v[i].Metadata.len > 0 ? rq->Protocols.v[i].Metadata.len : 0;
    }
    struct group_join_args a = {
        .member_id = rq->MemberId ? rq->MemberId : "",
        .group_instance_id = v >= 5 ? rq->GroupInstanceId : NULL,
        .client_id = req->hdr.ClientId ? req->hdr.ClientId : "",
        .client_host = coord_client_host(ar, req->peer),
        .protocol_type = rq->ProtocolType ? rq->ProtocolType : "",
        .session_timeout_ms = rq->SessionTimeoutMs,
        .rebalance_timeout_ms = v >= 1 ? rq->RebalanceTimeoutMs : rq->SessionTimeoutMs,
        .n_protocols = np,
        .protocols = protos,
        .require_known_member_id = v >= 4,
        .reason = v >= 8 ? rq->Reason : NULL,
        .supports_skip_assignment = v >= 9,
    };
    c->req = req;
    c->rs = rs;
    c->w.done = on_joined;
    group_sm_join(g->sm, &a, &c->w);
    return;

err_nomem:
    coord_nomem(req, "JoinGroup");
}
