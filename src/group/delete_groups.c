/* SPDX-License-Identifier: Apache-2.0 */
/* DeleteGroups v0–2: an Empty group becomes Dead and goes, with tombstones for its metadata
 * (unless only offsets were ever stored for it: generation 0, as Kafka) and for every offset
 * it has; a group with members answers NON_EMPTY_GROUP, an unknown one GROUP_ID_NOT_FOUND.
 * The answer waits until every group's tombstones are durable. */
#include <stdlib.h>
#include <string.h>

#include "authz/authz.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/slog.h"
#include "group_int.h"
#include "net/net.h"

struct delete_call {
    struct net_request *req;
    struct DeleteGroupsResponse *rs;
    int pending;
};

struct delete_one {
    struct coord_append ap;
    struct delete_call *call;
    struct DeletableGroupResult *result;
};

struct tombstones {
    struct coord_record *recs;
    int32_t n, cap;
    const char *group;
    bool nomem;
};

static bool push(struct tombstones *t, uint8_t *key, int32_t len)
{
    if (t->n == t->cap) {
        int32_t cap = t->cap ? t->cap * 2 : 16;
        struct coord_record *r = realloc(t->recs, (size_t)cap * sizeof *r);
        if (r == NULL) {
            free(key);
            t->nomem = true;
            return false;
        }
        t->recs = r;
        t->cap = cap;
    }
    t->recs[t->n++] = (struct coord_record){.key = key, .key_len = len};
    return true;
}

static void offset_tombstone(void *arg, struct ghash_node *n)
{
    struct tombstones *t = arg;
    struct coord_offset *o = (struct coord_offset *)n;
    uint8_t *key;
    int32_t len;
    if (t->nomem)
        return;
    if (coord_offset_key_encode(t->group, o->topic, o->partition, &key, &len) != 0)
        t->nomem = true;
    else
        push(t, key, len);
}

void coord_tombstones_free(struct coord_record *recs, int32_t n);
void coord_tombstones_free(struct coord_record *recs, int32_t n)
{
    for (int32_t i = 0; i < n; i++)
        free(recs[i].key);
    free(recs);
}

static void finish(struct delete_call *c)
{
    if (--c->pending == 0)
        net_respond(c->req, c->rs);
}

static void on_deleted(struct coord_append *ap, int16_t err)
{
    struct delete_one *one = ap->arg;
    if (err != 0)
        one->result->ErrorCode = coord_append_error(err, true);
    finish(one->call);
}

/* Deletes one group; returns its error (0: tombstones appended or nothing to write). */
static int16_t delete_one(struct group_coord *gc, struct delete_call *c, const char *id,
                          struct DeletableGroupResult *r)
{
    struct shard *sh;
    struct coord_group *g = NULL;
    struct tombstones t = {.group = id};
    int16_t err = id ? coord_find_group(gc, id, false, &sh, &g) : ERR_INVALID_GROUP_ID;

    if (err != 0)
        return err;
    if (g == NULL)
        return ERR_GROUP_ID_NOT_FOUND;
    err = group_sm_delete(g->sm);
    if (err != 0)
        return err;
    ghash_each(&g->offsets, offset_tombstone, &t);
    if (!t.nomem && (g->metadata_in_log || group_sm_generation(g->sm) > 0)) {
        uint8_t *key;
        int32_t len;
        if (coord_group_key_encode(id, &key, &len) != 0)
            t.nomem = true;
        else
            push(&t, key, len);
    }
    /* The group goes from memory at once (as Kafka's cache); the log follows. */
    coord_pending_drop_group(sh, id);
    coord_group_free(g, ERR_COORDINATOR_NOT_AVAILABLE);
    slog_info("group", "deleted group %s", id);
    if (t.nomem) {
        coord_tombstones_free(t.recs, t.n);
        return ERR_COORDINATOR_NOT_AVAILABLE;
    }
    if (t.n > 0) {
        struct delete_one *one = arena_alloc(c->req->arena, sizeof *one);
        if (one == NULL) {
            coord_tombstones_free(t.recs, t.n);
            return ERR_COORDINATOR_NOT_AVAILABLE;
        }
        one->call = c;
        one->result = r;
        c->pending++;
        coord_append_start(sh, t.recs, t.n, -1, -1, &one->ap, on_deleted, one);
    }
    coord_tombstones_free(t.recs, t.n);
    return 0;
}

void group_delete_groups(struct group_coord *gc, struct net_request *req)
{
    struct DeleteGroupsRequest *rq = req->body;
    struct DeleteGroupsResponse *rs = arena_alloc(req->arena, sizeof *rs);
    struct delete_call *c = arena_alloc(req->arena, sizeof *c);

    if (rs == NULL || c == NULL)
        goto err_nomem;
    memset(rs, 0, sizeof *rs);
    rs->Results.n = rq->GroupsNames.n > 0 ? rq->GroupsNames.n : 0;
    rs->Results.v = arena_alloc(req->arena, ((size_t)rs->Results.n + 1) * sizeof *rs->Results.v);
    if (rs->Results.v == NULL)
        goto err_nomem;
    c->req = req;
    c->rs = rs;
    c->pending = 1;
    for (int32_t i = 0; i < rs->Results.n; i++) {
        struct DeletableGroupResult *r = &rs->Results.v[i];
        r->GroupId = rq->GroupsNames.v[i] ? rq->GroupsNames.v[i] : "";
        r->ErrorCode = 0;
        /* DELETE on each group, before anything of it goes. */
        if (!authz_allowed(req, PROTO_ACL_OP_DELETE, PROTO_RESOURCE_GROUP, r->GroupId)) {
            r->ErrorCode = ERR_GROUP_AUTHORIZATION_FAILED;
            continue;
        }
        int16_t err = delete_one(gc, c, rq->GroupsNames.v[i], r);
        if (err != 0)
            r->ErrorCode = err;
    }
    finish(c);
    return;

err_nomem:
    coord_nomem(req, "DeleteGroups");
}
