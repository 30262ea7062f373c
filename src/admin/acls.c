/* SPDX-License-Identifier: Apache-2.0 */
/* DescribeAcls (29), CreateAcls (30), DeleteAcls (31): the ACLs of the metadata image
 * (meta/acls.c), written as ACL / REMOVE_ACL records by the active controller (other brokers
 * forward Create and Delete there, forward.c), as Kafka's AclControlManager does. Without an
 * authorizer every answer is SECURITY_DISABLED, as Kafka answers; Create and Delete need
 * ALTER on the cluster, Describe needs DESCRIBE on it. */
#include <string.h>

#include "admin_int.h"
#include "authz/authz.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/slog.h"
#include "meta/meta.h"
#include "net/net.h"
#include "proto/proto.h"

#define MSG_DISABLED "No Authorizer is configured on the broker"
#define MSG_CLUSTER_DENIED "Cluster authorization failed"

void *admin_acls_error(struct net_request *req, int16_t err, const char *msg)
{
    struct arena *ar = req->arena;
    char *m = msg ? arena_strndup(ar, msg, strlen(msg)) : NULL;
    if (msg != NULL && m == NULL)
        return NULL;
    switch (req->api->key) {
    case PROTO_API_CreateAcls: {
        const struct CreateAclsRequest *rq = req->body;
        struct CreateAclsResponse *rs = arena_alloc(ar, sizeof *rs);
        int32_t n = rq->Creations.n > 0 ? rq->Creations.n : 0;
        if (rs == NULL)
            return NULL;
        memset(rs, 0, sizeof *rs);
        rs->Results.v = arena_alloc(ar, ((size_t)n + 1) * sizeof *rs->Results.v);
        if (rs->Results.v == NULL)
            return NULL;
        rs->Results.n = n;
        for (int32_t i = 0; i < n; i++)
            rs->Results.v[i] = (struct AclCreationResult){err, m};
        return rs;
    }
    case PROTO_API_DeleteAcls: {
        const struct DeleteAclsRequest *rq = req->body;
        struct DeleteAclsResponse *rs = arena_alloc(ar, sizeof *rs);
        int32_t n = rq->Filters.n > 0 ? rq->Filters.n : 0;
        if (rs == NULL)
            return NULL;
        memset(rs, 0, sizeof *rs);
        rs->FilterResults.v = arena_alloc(ar, ((size_t)n + 1) * sizeof *rs->FilterResults.v);
        if (rs->FilterResults.v == NULL)
            return NULL;
        memset(rs->FilterResults.v, 0, ((size_t)n + 1) * sizeof *rs->FilterResults.v);
        rs->FilterResults.n = n;
        for (int32_t i = 0; i < n; i++) {
            rs->FilterResults.v[i].ErrorCode = err;
            rs->FilterResults.v[i].ErrorMessage = m;
        }
        return rs;
    }
    case PROTO_API_DescribeAcls: {
        struct DescribeAclsResponse *rs = arena_alloc(ar, sizeof *rs);
        if (rs == NULL)
            return NULL;
        memset(rs, 0, sizeof *rs);
        rs->ErrorCode = err;
        rs->ErrorMessage = m;
        return rs;
    }
    default:
        return NULL;
    }
}

/* Answers `err` everywhere; false (the connection closed) when out of memory. */
static void respond_error(struct net_request *req, int16_t err, const char *msg)
{
    void *rs = admin_acls_error(req, err, msg);
    if (rs == NULL) {
        slog_error("admin", "out of memory in %s from %s; closing", req->api->name, req->peer);
        net_close_connection(req);
        return;
    }
    net_respond(req, rs);
}

/* The common gate: an authorizer, and the cluster permission. True when the handler goes
 * on; otherwise `req` is answered. */
static bool gate(struct net_request *req, int8_t op)
{
    if (!authz_on(req)) {
        respond_error(req, ERR_SECURITY_DISABLED, MSG_DISABLED);
        return false;
    }
    if (!authz_allowed(req, op, PROTO_RESOURCE_CLUSTER, AUTHZ_CLUSTER)) {
        respond_error(req, ERR_CLUSTER_AUTHORIZATION_FAILED, MSG_CLUSTER_DENIED);
        return false;
    }
    return true;
}

/* What a new entry must be (Kafka's AclControlManager.validateNewAcl), or NULL. */
static const char *creation_invalid(const struct AclCreation *c)
{
    if (c->ResourceType < PROTO_RESOURCE_TOPIC || c->ResourceType > PROTO_RESOURCE_USER)
        return "Invalid resource type";
    if (c->ResourcePatternType != META_ACL_PATTERN_LITERAL &&
        c->ResourcePatternType != META_ACL_PATTERN_PREFIXED)
        return "Invalid pattern type: it must be LITERAL or PREFIXED";
    if (c->Operation < META_ACL_OP_ALL || c->Operation > PROTO_ACL_OP_DESCRIBE_TOKENS)
        return "Invalid operation";
    if (c->PermissionType != META_ACL_DENY && c->PermissionType != META_ACL_ALLOW)
        return "Invalid permission type";
    if (c->ResourceName == NULL || c->ResourceName[0] == '\0')
        return "Resource name must not be empty";
    if (c->ResourceType == PROTO_RESOURCE_CLUSTER && strcmp(c->ResourceName, AUTHZ_CLUSTER) != 0)
        return "The only valid name for the CLUSTER resource is " AUTHZ_CLUSTER;
    if (c->Principal == NULL || strchr(c->Principal, ':') == NULL || c->Principal[0] == ':')
        return "Invalid principal: expected <type>:<name>, e.g. User:alice";
    if (c->Host == NULL || c->Host[0] == '\0')
        return "Host must not be empty (\"*\" is every host)";
    return NULL;
}

struct create_call {
    struct net_request *req;
    struct CreateAclsResponse *rs;
    bool *proposed;
};

static void on_create_applied(void *arg, int err)
{
    struct create_call *c = arg;
    for (int32_t i = 0; i < c->rs->Results.n; i++)
        if (c->proposed[i])
            c->rs->Results.v[i].ErrorCode = (int16_t)err_wire(err);
    if (err == 0)
        slog_info("admin", "%s created ACLs", c->req->session->principal);
    net_respond(c->req, c->rs);
}

void admin_create_acls(struct admin *a, struct net_request *req)
{
    struct CreateAclsRequest *rq = req->body;
    struct arena *ar = req->arena;
    int32_t n = rq->Creations.n > 0 ? rq->Creations.n : 0;
    struct CreateAclsResponse *rs;
    struct create_call *call;
    struct meta_record *batch;
    size_t nb = 0;

    if (!gate(req, PROTO_ACL_OP_ALTER))
        return;
    rs = admin_acls_error(req, 0, NULL);
    call = arena_alloc(ar, sizeof *call);
    batch = arena_alloc(ar, ((size_t)n + 1) * sizeof *batch);
    if (rs == NULL || call == NULL || batch == NULL)
        goto err_nomem;
    call->proposed = arena_alloc(ar, (size_t)n + 1);
    if (call->proposed == NULL)
        goto err_nomem;
    memset(call->proposed, 0, (size_t)n + 1);
    const struct meta_acls *acls = meta_acls(a->meta);
    for (int32_t i = 0; i < n; i++) {
        const struct AclCreation *c = &rq->Creations.v[i];
        const char *why = creation_invalid(c);
        if (why != NULL) {
            rs->Results.v[i].ErrorCode = ERR_INVALID_REQUEST;
            rs->Results.v[i].ErrorMessage = (char *)why;
            continue;
        }
        struct meta_acl b = {.resource_type = c->ResourceType,
                             .pattern_type = c->ResourcePatternType,
                             .operation = c->Operation,
                             .permission = c->PermissionType,
                             .resource_name = c->ResourceName,
                             .principal = c->Principal,
                             .host = c->Host};
        /* An entry that exists already (or comes earlier in this request) is not made
         * twice: the creation succeeds, as Kafka's does. */
        bool dup = meta_acls_find_binding(acls, &b) != NULL;
        for (size_t j = 0; j < nb && !dup; j++)
            dup = batch[j].u.acl.resource_type == b.resource_type &&
                  batch[j].u.acl.pattern_type == b.pattern_type &&
                  batch[j].u.acl.operation == b.operation &&
                  batch[j].u.acl.permission == b.permission &&
                  strcmp(batch[j].u.acl.resource_name, b.resource_name) == 0 &&
                  strcmp(batch[j].u.acl.principal, b.principal) == 0 &&
                  strcmp(batch[j].u.acl.host, b.host) == 0;
        if (dup)
            continue;
        struct meta_record *r = &batch[nb++];
        memset(r, 0, sizeof *r);
        r->type = META_REC_ACL;
        uuid_random(r->u.acl.id);
        r->u.acl.resource_type = b.resource_type;
        r->u.acl.pattern_type = b.pattern_type;
        r->u.acl.operation = b.operation;
        r->u.acl.permission = b.permission;
        r->u.acl.resource_name = b.resource_name;
        r->u.acl.principal = b.principal;
        r->u.acl.host = b.host;
        call->proposed[i] = true;
    }
    if (nb == 0) {
        net_respond(req, rs);
        return;
    }
    call->req = req;
    call->rs = rs;
    int rc = meta_propose(a->meta, batch, nb, on_create_applied, call);
    if (rc != 0) {
        for (int32_t i = 0; i < n; i++)
            if (call->proposed[i])
                rs->Results.v[i].ErrorCode = (int16_t)err_wire(rc);
        net_respond(req, rs);
    }
    return;

err_nomem:
    slog_error("admin", "out of memory in CreateAcls from %s; closing", req->peer);
    net_close_connection(req);
}

/* A filter's fields, or why it cannot be used (UNKNOWN anywhere: INVALID_REQUEST, as Kafka). */
static bool filter_of(int8_t type, const char *name, int8_t pattern, const char *principal,
                      const char *host, int8_t op, int8_t perm, struct meta_acl_filter *f)
{
    *f = (struct meta_acl_filter){type, name, pattern, principal, host, op, perm};
    return type >= META_ACL_ANY && type <= PROTO_RESOURCE_USER && pattern >= META_ACL_ANY &&
           pattern <= META_ACL_PATTERN_PREFIXED && op >= META_ACL_ANY &&
           op <= PROTO_ACL_OP_DESCRIBE_TOKENS && perm >= META_ACL_ANY && perm <= META_ACL_ALLOW;
}

void admin_describe_acls(struct admin *a, struct net_request *req)
{
    struct DescribeAclsRequest *rq = req->body;
    struct arena *ar = req->arena;
    struct meta_acl_filter f;
    size_t n;

    if (!gate(req, PROTO_ACL_OP_DESCRIBE))
        return;
    if (!filter_of(rq->ResourceTypeFilter, rq->ResourceNameFilter, rq->PatternTypeFilter,
                   rq->PrincipalFilter, rq->HostFilter, rq->Operation, rq->PermissionType, &f)) {
        respond_error(req, ERR_INVALID_REQUEST, "Invalid filter: UNKNOWN is not a filter value");
        return;
    }
    const struct meta_acl *const *all = meta_acls_all(meta_acls(a->meta), &n);
    struct DescribeAclsResponse *rs = admin_acls_error(req, 0, NULL);
    if (rs == NULL)
        goto err_nomem;
    /* Grouped by resource (type, pattern, name), in the order of first appearance. */
    rs->Resources.v = arena_alloc(ar, (n + 1) * sizeof *rs->Resources.v);
    const struct meta_acl **match = arena_alloc(ar, (n + 1) * sizeof *match);
    if (rs->Resources.v == NULL || match == NULL)
        goto err_nomem;
    size_t nm = 0;
    for (size_t i = 0; i < n; i++)
        if (meta_acl_filter_match(&f, all[i]))
            match[nm++] = all[i];
    int32_t *count = arena_alloc(ar, (nm + 1) * sizeof *count);
    int32_t *res_of = arena_alloc(ar, (nm + 1) * sizeof *res_of);
    if (count == NULL || res_of == NULL)
        goto err_nomem;
    for (size_t i = 0; i < nm; i++) {
        int32_t k;
        for (k = 0; k < rs->Resources.n; k++) {
            const struct DescribeAclsResource *r = &rs->Resources.v[k];
            if (r->ResourceType == match[i]->resource_type &&
                r->PatternType == match[i]->pattern_type &&
                strcmp(r->ResourceName, match[i]->resource_name) == 0)
                break;
        }
        if (k == rs->Resources.n) {
            struct DescribeAclsResource *r = &rs->Resources.v[rs->Resources.n++];
            memset(r, 0, sizeof *r);
            r->ResourceType = match[i]->resource_type;
            r->PatternType = match[i]->pattern_type;
            r->ResourceName = match[i]->resource_name;
            count[k] = 0;
        }
        res_of[i] = k;
        count[k]++;
    }
    for (int32_t k = 0; k < rs->Resources.n; k++) {
        rs->Resources.v[k].Acls.v =
            arena_alloc(ar, (size_t)count[k] * sizeof(struct AclDescription));
        if (rs->Resources.v[k].Acls.v == NULL)
            goto err_nomem;
    }
    for (size_t i = 0; i < nm; i++) {
        struct DescribeAclsResource *r = &rs->Resources.v[res_of[i]];
        r->Acls.v[r->Acls.n++] = (struct AclDescription){match[i]->principal, match[i]->host,
                                                         match[i]->operation, match[i]->permission};
    }
    net_respond(req, rs);
    return;

err_nomem:
    slog_error("admin", "out of memory in DescribeAcls from %s; closing", req->peer);
    net_close_connection(req);
}

struct delete_call {
    struct net_request *req;
    struct DeleteAclsResponse *rs;
};

static void on_delete_applied(void *arg, int err)
{
    struct delete_call *c = arg;
    for (int32_t i = 0; i < c->rs->FilterResults.n; i++) {
        struct DeleteAclsFilterResult *r = &c->rs->FilterResults.v[i];
        if (err != 0 && r->ErrorCode == 0) {
            r->ErrorCode = (int16_t)err_wire(err);
            r->MatchingAcls.n = 0;
        }
    }
    if (err == 0)
        slog_info("admin", "%s deleted ACLs", c->req->session->principal);
    net_respond(c->req, c->rs);
}

void admin_delete_acls(struct admin *a, struct net_request *req)
{
    struct DeleteAclsRequest *rq = req->body;
    struct arena *ar = req->arena;
    int32_t nf = rq->Filters.n > 0 ? rq->Filters.n : 0;
    size_t n, nb = 0;

    if (!gate(req, PROTO_ACL_OP_ALTER))
        return;
    const struct meta_acl *const *all = meta_acls_all(meta_acls(a->meta), &n);
    struct DeleteAclsResponse *rs = admin_acls_error(req, 0, NULL);
    struct delete_call *call = arena_alloc(ar, sizeof *call);
    bool *taken = arena_alloc(ar, n + 1);
    if (rs == NULL || call == NULL || taken == NULL)
        goto err_nomem;
    memset(taken, 0, n + 1);
    for (int32_t i = 0; i < nf; i++) {
        const struct DeleteAclsFilter *q = &rq->Filters.v[i];
        struct DeleteAclsFilterResult *r = &rs->FilterResults.v[i];
        struct meta_acl_filter f;
        if (!filter_of(q->ResourceTypeFilter, q->ResourceNameFilter, q->PatternTypeFilter,
                       q->PrincipalFilter, q->HostFilter, q->Operation, q->PermissionType, &f)) {
            r->ErrorCode = ERR_INVALID_REQUEST;
            r->ErrorMessage = "Invalid filter: UNKNOWN is not a filter value";
            continue;
        }
        size_t cnt = 0;
        for (size_t k = 0; k < n; k++)
            cnt += meta_acl_filter_match(&f, all[k]);
        r->MatchingAcls.v = arena_alloc(ar, (cnt + 1) * sizeof *r->MatchingAcls.v);
        if (r->MatchingAcls.v == NULL)
            goto err_nomem;
        for (size_t k = 0; k < n; k++) {
            const struct meta_acl *e = all[k];
            if (!meta_acl_filter_match(&f, e))
                continue;
            /* Copies: the answer goes after the removal, which frees the entry. */
            struct DeleteAclsMatchingAcl *m = &r->MatchingAcls.v[r->MatchingAcls.n++];
            memset(m, 0, sizeof *m);
            m->ResourceType = e->resource_type;
            m->PatternType = e->pattern_type;
            m->Operation = e->operation;
            m->PermissionType = e->permission;
            m->ResourceName = arena_strndup(ar, e->resource_name, e->name_len);
            m->Principal = arena_strndup(ar, e->principal, strlen(e->principal));
            m->Host = arena_strndup(ar, e->host, strlen(e->host));
            if (m->ResourceName == NULL || m->Principal == NULL || m->Host == NULL)
                goto err_nomem;
            if (!taken[k]) {
                taken[k] = true;
                nb++;
            }
        }
    }
    if (nb == 0) {
        net_respond(req, rs);
        return;
    }
    /* Every entry matched by some filter goes in one batch, once. */
    struct meta_record *batch = arena_alloc(ar, nb * sizeof *batch);
    if (batch == NULL)
        goto err_nomem;
    size_t j = 0;
    for (size_t k = 0; k < n; k++)
        if (taken[k]) {
            memset(&batch[j], 0, sizeof batch[j]);
            batch[j].type = META_REC_REMOVE_ACL;
            memcpy(batch[j++].u.remove_acl.id, all[k]->id, 16);
        }
    call->req = req;
    call->rs = rs;
    int rc = meta_propose(a->meta, batch, nb, on_delete_applied, call);
    if (rc != 0)
        on_delete_applied(call, rc);
    return;

err_nomem:
    slog_error("admin", "out of memory in DeleteAcls from %s; closing", req->peer);
    net_close_connection(req);
}
