/* SPDX-License-Identifier: Apache-2.0 */
/* ListGroups v0–4: every group of the shards this broker leads (a group known only from its
 * committed offsets is an Empty one with protocol type ""), filtered by state (v4,
 * case-insensitive; an unknown name matches nothing). While a shard loads the answer is
 * COORDINATOR_LOAD_IN_PROGRESS with the groups of the loaded ones, as Kafka. */
#include <string.h>

#include "authz/authz.h"
#include "base/arena.h"
#include "base/err.h"
#include "group_int.h"
#include "net/net.h"

struct listing {
    struct arena *ar;
    struct ListedGroup *v;
    int32_t n, cap;
    int states[8];
    int32_t n_states; /* 0 = no filter */
    bool nomem;
};

static void list_one(void *arg, struct ghash_node *n)
{
    struct listing *l = arg;
    struct coord_group *g = (struct coord_group *)n;
    enum group_state st = group_sm_state(g->sm);
    const char *pt = group_sm_protocol_type(g->sm);
    bool keep = l->n_states == 0;

    if (l->nomem || st == GROUP_DEAD)
        return;
    for (int32_t i = 0; i < l->n_states; i++)
        keep |= l->states[i] == (int)st;
    if (!keep)
        return;
    if (l->n == l->cap) {
        int32_t cap = l->cap ? l->cap * 2 : 16;
        struct ListedGroup *v = arena_alloc(l->ar, (size_t)cap * sizeof *v);
        if (v == NULL) {
            l->nomem = true;
            return;
        }
        if (l->n)
            memcpy(v, l->v, (size_t)l->n * sizeof *v);
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = (struct ListedGroup){
        .GroupId = g->id,
        .ProtocolType = (char *)(pt ? pt : ""),
        .GroupState = (char *)group_state_name(st),
    };
}

void group_list_groups(struct group_coord *gc, struct net_request *req)
{
    struct ListGroupsRequest *rq = req->body;
    struct ListGroupsResponse *rs = arena_alloc(req->arena, sizeof *rs);
    struct listing l = {.ar = req->arena};
    bool filter_none = false;

    if (rs == NULL)
        goto err_nomem;
    memset(rs, 0, sizeof *rs);
    if (req->hdr.RequestApiVersion >= 4) {
        for (int32_t i = 0; i < rq->StatesFilter.n; i++) {
            int s = group_state_parse(rq->StatesFilter.v[i] ? rq->StatesFilter.v[i] : "");
            if (s < 0) {
                filter_none = l.n_states == 0;
                continue;
            }
            if (l.n_states < (int32_t)(sizeof l.states / sizeof l.states[0]))
                l.states[l.n_states++] = s;
        }
        /* Only unknown names: nothing matches. */
        if (filter_none && l.n_states == 0)
            l.states[l.n_states++] = -1;
    }
    for (int32_t i = 0; i < gc->n_shards; i++) {
        struct shard *sh = gc->shards[i];
        if (sh == NULL)
            continue;
        if (sh->loading) {
            rs->ErrorCode = ERR_COORDINATOR_LOAD_IN_PROGRESS;
            continue;
        }
        ghash_each(&sh->groups, list_one, &l);
    }
    if (l.nomem)
        goto err_nomem;
    /* Every group with DESCRIBE on the cluster, else those with DESCRIBE on the group. */
    if (!authz_allowed_quiet(req, PROTO_ACL_OP_DESCRIBE, PROTO_RESOURCE_CLUSTER, AUTHZ_CLUSTER)) {
        int32_t kept = 0;
        for (int32_t i = 0; i < l.n; i++)
            if (authz_allowed_quiet(req, PROTO_ACL_OP_DESCRIBE, PROTO_RESOURCE_GROUP,
                                    l.v[i].GroupId))
                l.v[kept++] = l.v[i];
        l.n = kept;
    }
    rs->Groups.v = l.v;
    rs->Groups.n = l.n;
    net_respond(req, rs);
    return;

err_nomem:
    coord_nomem(req, "ListGroups");
}
