/* SPDX-License-Identifier: Apache-2.0 */
/* client_quotas: DescribeClientQuotas (48) and AlterClientQuotas (49), KIP-546, on the
 * image's client quotas (meta/quotas.c). Describe answers from this broker's image; Alter is
 * forwarded to the active controller (admin_forward) and proposed there as CLIENT_QUOTA
 * records. Entity types "user" and "client-id"; "ip" quotas are not supported (INVALID_REQUEST,
 * as Kafka answers an entity type it does not know). */
#include <math.h>
#include <string.h>

#include "admin_int.h"
#include "authz/authz.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/slog.h"
#include "meta/meta.h"
#include "net/net.h"

#define TYPE_USER "user"
#define TYPE_CLIENT "client-id"

#define MATCH_EXACT 0
#define MATCH_DEFAULT 1
#define MATCH_ANY 2

/* One part's filter: absent (no component names the type), or a match. */
struct part_filter {
    bool present;
    int8_t match;
    const char *name;
};

static bool part_matches(const struct part_filter *f, bool has, const char *name)
{
    if (!f->present)
        return true;
    if (!has)
        return false;
    switch (f->match) {
    case MATCH_EXACT:
        return name != NULL && f->name != NULL && strcmp(name, f->name) == 0;
    case MATCH_DEFAULT:
        return name == NULL;
    default:
        return true;
    }
}

static void describe_error(struct net_request *req, struct DescribeClientQuotasResponse *rs,
                           int16_t err, const char *msg)
{
    rs->ErrorCode = err;
    rs->ErrorMessage = (char *)msg;
    rs->Entries.n = -1;
    net_respond(req, rs);
}

void admin_describe_client_quotas(struct admin *a, struct net_request *req)
{
    struct DescribeClientQuotasRequest *rq = req->body;
    struct arena *ar = req->arena;
    struct DescribeClientQuotasResponse *rs = arena_alloc(ar, sizeof *rs);
    struct part_filter fu = {0}, fc = {0};
    size_t nq;
    const struct meta_quota *q = meta_quotas(a->meta, &nq);

    if (rs == NULL)
        goto err_nomem;
    memset(rs, 0, sizeof *rs);
    /* DESCRIBE_CONFIGS on the cluster (Kafka's rule for this API). */
    if (!authz_allowed(req, PROTO_ACL_OP_DESCRIBE_CONFIGS, PROTO_RESOURCE_CLUSTER, AUTHZ_CLUSTER)) {
        describe_error(req, rs, ERR_CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed");
        return;
    }
    for (int32_t i = 0; i < rq->Components.n; i++) {
        const struct ComponentData *c = &rq->Components.v[i];
        const char *t = c->EntityType ? c->EntityType : "";
        struct part_filter *f = strcmp(t, TYPE_USER) == 0     ? &fu
                                : strcmp(t, TYPE_CLIENT) == 0 ? &fc
                                                              : NULL;
        if (f == NULL) {
            describe_error(req, rs, ERR_INVALID_REQUEST, "Unsupported entity type");
            return;
        }
        if (f->present) {
            describe_error(req, rs, ERR_INVALID_REQUEST, "Duplicate entity type in filter");
            return;
        }
        if (c->MatchType < MATCH_EXACT || c->MatchType > MATCH_ANY ||
            (c->MatchType == MATCH_EXACT) != (c->Match != NULL)) {
            describe_error(req, rs, ERR_INVALID_REQUEST, "Invalid match type or match");
            return;
        }
        *f = (struct part_filter){true, c->MatchType, c->Match};
    }
    rs->Entries.v = arena_alloc(ar, (nq + 1) * sizeof *rs->Entries.v);
    if (rs->Entries.v == NULL)
        goto err_nomem;
    for (size_t i = 0; i < nq; i++) {
        const struct meta_quota *e = &q[i];
        if (!part_matches(&fu, e->has_user, e->user) ||
            !part_matches(&fc, e->has_client_id, e->client_id))
            continue;
        /* Strict: the entity has no part the filter does not name. */
        if (rq->Strict && ((e->has_user && !fu.present) || (e->has_client_id && !fc.present)))
            continue;
        struct EntryData *d = &rs->Entries.v[rs->Entries.n];
        memset(d, 0, sizeof *d);
        d->Entity.v = arena_alloc(ar, 2 * sizeof *d->Entity.v);
        d->Values.v = arena_alloc(ar, META_QUOTA_N_KEYS * sizeof *d->Values.v);
        if (d->Entity.v == NULL || d->Values.v == NULL)
            goto err_nomem;
        if (e->has_user)
            d->Entity.v[d->Entity.n++] = (struct EntityData){TYPE_USER, e->user};
        if (e->has_client_id)
            d->Entity.v[d->Entity.n++] = (struct EntityData){TYPE_CLIENT, e->client_id};
        for (int k = 0; k < META_QUOTA_N_KEYS; k++)
            if (e->set & (1u << k))
                d->Values.v[d->Values.n++] =
                    (struct ValueData){(char *)meta_quota_key_name(k), e->values[k]};
        rs->Entries.n++;
    }
    net_respond(req, rs);
    return;

err_nomem:
    slog_error("admin", "out of memory in DescribeClientQuotas from %s; closing", req->peer);
    net_close_connection(req);
}

struct alter_call {
    struct net_request *req;
    struct AlterClientQuotasResponse *rs;
    bool *proposed; /* per entry */
};

static void on_applied(void *arg, int err)
{
    struct alter_call *c = arg;
    for (int32_t i = 0; i < c->rs->Entries.n; i++)
        if (c->proposed[i])
            c->rs->Entries.v[i].ErrorCode = (int16_t)err_wire(err);
    if (err == 0)
        slog_info("admin", "altered client quotas (%d entities)", c->rs->Entries.n);
    net_respond(c->req, c->rs);
}

/* The entity of one entry, or an error message (INVALID_REQUEST). */
static const char *parse_entity(const struct AlterEntryData *d, struct meta_quota_entity *e)
{
    memset(e, 0, sizeof *e);
    for (int32_t i = 0; i < d->Entity.n; i++) {
        const struct EntityData *p = &d->Entity.v[i];
        const char *t = p->EntityType ? p->EntityType : "";
        bool user = strcmp(t, TYPE_USER) == 0;
        if (!user && strcmp(t, TYPE_CLIENT) != 0)
            return "Unsupported entity type";
        if (user ? e->has_user : e->has_client_id)
            return "Duplicate entity type";
        if (p->EntityName != NULL && p->EntityName[0] == '\0')
            return "Empty entity name";
        if (user) {
            e->has_user = true;
            e->user = p->EntityName;
        } else {
            e->has_client_id = true;
            e->client_id = p->EntityName;
        }
    }
    return e->has_user || e->has_client_id ? NULL : "No entity given";
}

void admin_alter_client_quotas(struct admin *a, struct net_request *req)
{
    struct AlterClientQuotasRequest *rq = req->body;
    struct arena *ar = req->arena;
    int32_t ne = rq->Entries.n > 0 ? rq->Entries.n : 0;
    size_t nops = 0;
    struct AlterClientQuotasResponse *rs = arena_alloc(ar, sizeof *rs);
    struct alter_call *call = arena_alloc(ar, sizeof *call);

    for (int32_t i = 0; i < ne; i++)
        nops += rq->Entries.v[i].Ops.n > 0 ? (size_t)rq->Entries.v[i].Ops.n : 0;
    struct meta_record *batch = arena_alloc(ar, (nops + 1) * sizeof *batch);
    if (rs == NULL || call == NULL || batch == NULL)
        goto err_nomem;
    memset(rs, 0, sizeof *rs);
    rs->Entries.v = arena_alloc(ar, ((size_t)ne + 1) * sizeof *rs->Entries.v);
    call->proposed = arena_alloc(ar, ((size_t)ne + 1) * sizeof *call->proposed);
    if (rs->Entries.v == NULL || call->proposed == NULL)
        goto err_nomem;
    memset(call->proposed, 0, ((size_t)ne + 1) * sizeof *call->proposed);
    /* ALTER_CONFIGS on the cluster (Kafka's rule for this API). */
    bool denied =
        !authz_allowed(req, PROTO_ACL_OP_ALTER_CONFIGS, PROTO_RESOURCE_CLUSTER, AUTHZ_CLUSTER);
    size_t n = 0;
    for (int32_t i = 0; i < ne; i++) {
        const struct AlterEntryData *d = &rq->Entries.v[i];
        struct AlterEntryResult *r = &rs->Entries.v[rs->Entries.n++];
        struct meta_quota_entity e;
        memset(r, 0, sizeof *r);
        r->Entity.v = d->Entity.v;
        r->Entity.n = d->Entity.n;
        if (denied) {
            r->ErrorCode = ERR_CLUSTER_AUTHORIZATION_FAILED;
            r->ErrorMessage = "Cluster authorization failed";
            continue;
        }
        const char *why = parse_entity(d, &e);
        size_t first = n;
        for (int32_t k = 0; why == NULL && k < d->Ops.n; k++) {
            const struct OpData *op = &d->Ops.v[k];
            int key = meta_quota_key_parse(op->Key);
            if (key < 0) {
                why = "Unknown quota key";
                break;
            }
            for (int32_t j = 0; j < k; j++)
                if (strcmp(d->Ops.v[j].Key, op->Key) == 0)
                    why = "Duplicate quota key";
            if (why == NULL && !op->Remove && !(isfinite(op->Value) && op->Value > 0))
                why = "A quota must be a number greater than 0";
            if (why != NULL)
                break;
            struct meta_record *rec = &batch[n++];
            memset(rec, 0, sizeof *rec);
            rec->type = META_REC_CLIENT_QUOTA;
            rec->u.quota.entity = e;
            rec->u.quota.key = (int8_t)key;
            rec->u.quota.value = op->Remove ? 0 : op->Value;
            rec->u.quota.remove = op->Remove;
        }
        if (why != NULL) {
            n = first; /* this entry's records are dropped: it fails whole */
            r->ErrorCode = ERR_INVALID_REQUEST;
            r->ErrorMessage = (char *)why;
            continue;
        }
        call->proposed[i] = n > first;
    }
    call->req = req;
    call->rs = rs;
    admin_propose_or_respond(a, req, rs, batch, rq->ValidateOnly ? 0 : n, on_applied, call);
    return;

err_nomem:
    slog_error("admin", "out of memory in AlterClientQuotas from %s; closing", req->peer);
    net_close_connection(req);
}
