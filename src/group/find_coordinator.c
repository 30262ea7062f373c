/* SPDX-License-Identifier: Apache-2.0 */
/* FindCoordinator v0–4: the coordinator of a key is the leader of its partition of the
 * coordinator's topic. Each key type is one row below (its topic and how a key maps to a
 * partition); key type 1 is the transaction coordinator's __transaction_state. While the
 * topic does not exist its creation is asked for and the answer is COORDINATOR_NOT_AVAILABLE,
 * as Kafka answers then. v4 batches keys: one answer per key. */
#include <stdio.h>
#include <string.h>

#include "base/props.h"
#include "base/slog.h"

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

/* Key type 1: __transaction_state is asked for at most once a second, with Kafka's
 * transaction.state.log.* settings; min.insync.replicas is capped at the live brokers (as the
 * replication factor is by admin), so one broker can run transactions. */
#define TXN_TOPIC_NAME "__transaction_state"

static void ask_for_txn_topic(struct group_coord *gc)
{
    static const char *const keys[] = {"cleanup.policy", "segment.bytes", "min.insync.replicas"};
    char seg[24], isr[24];
    const char *values[] = {"compact", seg, isr};
    int64_t now = tclock_mono_ms(gc->clock);
    size_t n_brokers = 0, live = 0;
    const struct meta_broker *b = meta_brokers(gc->meta, &n_brokers);

    if (gc->ensure_topic == NULL ||
        (gc->txn_ensure_asked_ms >= 0 && now - gc->txn_ensure_asked_ms < 1000))
        return;
    gc->txn_ensure_asked_ms = now;
    for (size_t i = 0; i < n_brokers; i++)
        live += !b[i].fenced;
    int64_t rf = props_get_int(gc->config, "transaction.state.log.replication.factor", 3, NULL);
    int64_t min_isr = props_get_int(gc->config, "transaction.state.log.min.isr", 2, NULL);
    int64_t parts = props_get_int(gc->config, "transaction.state.log.num.partitions", 50, NULL);
    if (min_isr > (int64_t)live && live > 0) {
        slog_warn("group", "%s: transaction.state.log.min.isr %lld capped at %zu (live brokers)",
                  TXN_TOPIC_NAME, (long long)min_isr, live);
        min_isr = (int64_t)live;
    }
    if (min_isr > rf)
        min_isr = rf;
    snprintf(seg, sizeof seg, "%lld",
             (long long)props_get_int(gc->config, "transaction.state.log.segment.bytes", 104857600,
                                      NULL));
    snprintf(isr, sizeof isr, "%lld", (long long)(min_isr < 1 ? 1 : min_isr));
    int rc = gc->ensure_topic(gc->ensure_arg, TXN_TOPIC_NAME, (int32_t)(parts < 1 ? 50 : parts),
                              (int16_t)(rf < 1 ? 3 : rf), 3, keys, values);
    if (rc != 0)
        slog_debug("group", "cannot create %s now: %s", TXN_TOPIC_NAME, err_name(rc));
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
        if (gc->stopping) {
            a->err = ERR_COORDINATOR_NOT_AVAILABLE;
            return;
        }
        t = meta_topic_by_name(gc->meta, TXN_TOPIC_NAME);
        if (t == NULL) {
            ask_for_txn_topic(gc);
            a->err = ERR_COORDINATOR_NOT_AVAILABLE;
            return;
        }
        leader_of(gc, t, key, a);
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
