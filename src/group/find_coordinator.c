/* SPDX-License-Identifier: Apache-2.0 */
/* FindCoordinator v0–4: the coordinator of a key is the leader of its partition of the
 * coordinator's topic, abs(javaHash(key)) % the topic's partition count. Each key type is one
 * row of `kinds` below: its topic and how that topic is created on first use (partition
 * count, replication factor capped at the quorum's voters, configs — as Kafka creates it). While
 * the topic does not exist its creation is asked for and the answer is
 * COORDINATOR_NOT_AVAILABLE, as Kafka answers then. Key type 1 (TRANSACTION) is the
 * transaction coordinator's __transaction_state, whose min.insync.replicas
 * (transaction.state.log.min.isr) is capped at its replication factor, so one broker can run
 * transactions. v4 batches keys: one answer per key. */
#include <stdio.h>
#include <string.h>

#include "authz/authz.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/props.h"
#include "base/slog.h"
#include "group_int.h"
#include "meta/meta.h"
#include "net/net.h"

/* A coordinator's topic: name, and the broker configs (Kafka's names and defaults) that
 * shape it when it is created. */
struct coordinator_kind {
    int8_t key_type;
    const char *topic;
    const char *partitions_key;
    int32_t partitions_def;
    const char *replication_key;
    int16_t replication_def;
    const char *segment_key;
    int32_t segment_def;
    const char *compression; /* the topic's compression.type */
    const char *min_isr_key; /* the topic's min.insync.replicas, NULL = the broker's */
    int32_t min_isr_def;
};

static const struct coordinator_kind kinds[] = {
    {COORD_KEY_TYPE_GROUP, GROUP_TOPIC, "offsets.topic.num.partitions", 50,
     "offsets.topic.replication.factor", 3, "offsets.topic.segment.bytes", 104857600, "producer",
     NULL, 0},
    {COORD_KEY_TYPE_TRANSACTION, "__transaction_state", "transaction.state.log.num.partitions", 50,
     "transaction.state.log.replication.factor", 3, "transaction.state.log.segment.bytes",
     104857600, "producer", "transaction.state.log.min.isr", 2},
};

/* min.insync.replicas for a new coordinator topic: the config, at most the replication factor
 * (admin caps both at what the cluster can have: the replication factor at the quorum's
 * voters, min.insync.replicas at the replication factor). */
static int64_t capped_min_isr(struct group_coord *gc, const struct coordinator_kind *k, int64_t rf)
{
    int64_t v = props_get_int(gc->config, k->min_isr_key, k->min_isr_def, NULL);
    if (v > rf)
        v = rf;
    return v < 1 ? 1 : v;
}

static const struct coordinator_kind *kind_of(int8_t key_type)
{
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (kinds[i].key_type == key_type)
            return &kinds[i];
    return NULL;
}

void coord_ask_for_topic(struct group_coord *gc, int8_t key_type)
{
    const struct coordinator_kind *k = kind_of(key_type);
    static const char *const keys[] = {"cleanup.policy", "segment.bytes", "compression.type",
                                       "min.insync.replicas"};
    const char *values[4];
    char seg[24], isr[24];
    int64_t now = tclock_mono_ms(gc->clock);
    int64_t *asked;
    int rc;

    if (k == NULL || gc->ensure_topic == NULL || key_type < 0 ||
        (size_t)key_type >= sizeof gc->ensure_asked_ms / sizeof gc->ensure_asked_ms[0])
        return;
    asked = &gc->ensure_asked_ms[key_type];
    if (*asked >= 0 && now - *asked < 1000)
        return;
    *asked = now;
    snprintf(seg, sizeof seg, "%lld",
             (long long)props_get_int(gc->config, k->segment_key, k->segment_def, NULL));
    values[0] = "compact";
    values[1] = seg;
    values[2] = k->compression;
    int64_t rf = props_get_int(gc->config, k->replication_key, k->replication_def, NULL);
    if (k->min_isr_key) {
        snprintf(isr, sizeof isr, "%lld", (long long)capped_min_isr(gc, k, rf));
        values[3] = isr;
    }
    rc = gc->ensure_topic(
        gc->ensure_arg, k->topic,
        (int32_t)props_get_int(gc->config, k->partitions_key, k->partitions_def, NULL), (int16_t)rf,
        k->min_isr_key ? 4 : 3, keys, values);
    if (rc != 0)
        slog_debug("group", "cannot create %s now: %s", k->topic, err_name(rc));
}

struct coordinator_answer {
    int16_t err;
    int32_t node;
    const char *host;
    int32_t port;
};

static void find_one(struct group_coord *gc, struct net_request *req, int8_t key_type,
                     const char *key, struct coordinator_answer *a)
{
    const char *listener = req->session->listener;
    const struct coordinator_kind *k = kind_of(key_type);
    const struct meta_topic *t;

    a->node = -1;
    a->host = "";
    a->port = -1;
    if (key == NULL || k == NULL) {
        a->err = ERR_INVALID_REQUEST;
        return;
    }
    /* DESCRIBE on the group or the transactional id the key names. */
    bool txn = key_type == 1;
    if (!authz_allowed(req, PROTO_ACL_OP_DESCRIBE,
                       txn ? PROTO_RESOURCE_TRANSACTIONAL_ID : PROTO_RESOURCE_GROUP, key)) {
        a->err = txn ? ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED : ERR_GROUP_AUTHORIZATION_FAILED;
        return;
    }
    if (gc->stopping) {
        a->err = ERR_COORDINATOR_NOT_AVAILABLE;
        return;
    }
    t = meta_topic_by_name(gc->meta, k->topic);
    if (t == NULL || t->n_partitions < 1) {
        coord_ask_for_topic(gc, key_type);
        a->err = ERR_COORDINATOR_NOT_AVAILABLE;
        return;
    }
    int32_t leader = t->partitions[group_partition_for(key, t->n_partitions)].leader;
    const struct meta_broker *b = leader >= 0 ? meta_broker_by_id(gc->meta, leader) : NULL;
    /* The coordinator's address on the listener the client came in on. */
    const struct meta_listener *l = b ? meta_broker_listener(b, listener) : NULL;
    if (b == NULL || b->fenced || l == NULL) {
        a->err = ERR_COORDINATOR_NOT_AVAILABLE;
        return;
    }
    a->err = 0;
    a->node = b->id;
    a->host = l->host;
    a->port = l->port;
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
        find_one(gc, req, rq->KeyType, rq->Key, &a);
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
        find_one(gc, req, rq->KeyType, rq->CoordinatorKeys.v[i], &a);
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
