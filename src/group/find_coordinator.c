/* SPDX-License-Identifier: Apache-2.0 */
/* FindCoordinator v0–4: the coordinator of a key is the leader of its partition of the
 * coordinator's topic. Each key type is one row below (its topic and how a key maps to a
 * partition); the transaction coordinator (issue 10) adds its row for key type 1. While the
 * topic does not exist its creation is asked for and the answer is COORDINATOR_NOT_AVAILABLE,
 * as Kafka answers then. v4 batches keys: one answer per key. */
#include <string.h>

#include "base/arena.h"
#include "base/err.h"
#include "group_int.h"
#include "meta/meta.h"
#include "net/net.h"

#define KEY_TYPE_GROUP 0
#define KEY_TYPE_TRANSACTION 1

struct coordinator_answer {
    int16_t err;
    int32_t node;
    const char *host;
    int32_t port;
};

/* The leader of `topic`'s partition for `key`, as a FindCoordinator answer. */
static void leader_of(struct group_coord *gc, const struct meta_topic *t, const char *key,
                      struct coordinator_answer *a)
{
    int32_t p = group_partition_for(key, t->n_partitions);
    int32_t leader = t->partitions[p].leader;
    const struct meta_broker *b = leader >= 0 ? meta_broker_by_id(gc->meta, leader) : NULL;

    if (b == NULL || b->fenced) {
        a->err = ERR_COORDINATOR_NOT_AVAILABLE;
        return;
    }
    a->err = 0;
    a->node = b->id;
    a->host = b->host;
    a->port = b->port;
}

static void find_one(struct group_coord *gc, int8_t key_type, const char *key,
                     struct coordinator_answer *a)
{
    const struct meta_topic *t;

    a->node = -1;
    a->host = "";
    a->port = -1;
    if (key == NULL) {
        a->err = ERR_INVALID_REQUEST;
        return;
    }
    switch (key_type) {
    case KEY_TYPE_GROUP:
        if (gc->stopping) {
            a->err = ERR_COORDINATOR_NOT_AVAILABLE;
            return;
        }
        t = meta_topic_by_name(gc->meta, GROUP_TOPIC);
        if (t == NULL) {
            struct shard *unused;
            a->err = coord_shard_for(gc, key, &unused); /* asks for the topic */
            return;
        }
        leader_of(gc, t, key, a);
        return;
    case KEY_TYPE_TRANSACTION:
        /* No transaction coordinator yet (issue 10). */
        a->err = ERR_COORDINATOR_NOT_AVAILABLE;
        return;
    default:
        a->err = ERR_INVALID_REQUEST;
        return;
    }
}

static const char *message(int16_t err)
{
    switch (err) {
    case 0:
        return NULL;
    case ERR_COORDINATOR_NOT_AVAILABLE:
        return "The coordinator is not available.";
    case ERR_INVALID_REQUEST:
        return "Unknown coordinator type or missing key.";
    default:
        return err_name(err);
    }
}

void group_find_coordinator(struct group_coord *gc, struct net_request *req)
{
    struct FindCoordinatorRequest *rq = req->body;
    struct FindCoordinatorResponse *rs = arena_alloc(req->arena, sizeof *rs);
    struct coordinator_answer a;

    if (rs == NULL)
        goto err_nomem;
    memset(rs, 0, sizeof *rs);
    if (req->hdr.RequestApiVersion < 4) {
        find_one(gc, rq->KeyType, rq->Key, &a);
        rs->ErrorCode = a.err;
        rs->ErrorMessage = (char *)message(a.err);
        rs->NodeId = a.node;
        rs->Host = (char *)a.host;
        rs->Port = a.port;
        net_respond(req, rs);
        return;
    }
    int32_t n = rq->CoordinatorKeys.n > 0 ? rq->CoordinatorKeys.n : 0;
    rs->Coordinators.n = n;
    rs->Coordinators.v = arena_alloc(req->arena, ((size_t)n + 1) * sizeof *rs->Coordinators.v);
    if (rs->Coordinators.v == NULL)
        goto err_nomem;
    for (int32_t i = 0; i < n; i++) {
        struct Coordinator *c = &rs->Coordinators.v[i];
        find_one(gc, rq->KeyType, rq->CoordinatorKeys.v[i], &a);
        c->Key = rq->CoordinatorKeys.v[i];
        c->ErrorCode = a.err;
        c->ErrorMessage = (char *)message(a.err);
        c->NodeId = a.node;
        c->Host = (char *)a.host;
        c->Port = a.port;
    }
    net_respond(req, rs);
    return;

err_nomem:
    coord_nomem(req, "FindCoordinator");
}
