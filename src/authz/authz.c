/* SPDX-License-Identifier: Apache-2.0 */
/* authz: super users, the ACL image's verdict, and Kafka's authorizer log line. */
#include "authz/authz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/props.h"
#include "base/slog.h"
#include "meta/meta.h"
#include "net/net.h"
#include "proto/proto.h"

/* At most one denial line per this interval (a denied client retries for as long as it
 * runs); the next says how many were held back. */
#define AUTHZ_LOG_INTERVAL_MS 1000

struct authz {
    struct meta *meta;
    char **super_users;
    size_t n_super;
    bool allow_if_no_acl;
    struct slog_limit denied_log;
};

int authz_config(const struct props *config, bool *on, char *why, size_t whylen)
{
    const char *cls = props_get(config, "authorizer.class.name");
    *on = false;
    if (cls == NULL || cls[0] == '\0')
        return 0;
    if (strcmp(cls, AUTHZ_STANDARD) == 0 || strcmp(cls, AUTHZ_ACL_AUTHORIZER) == 0) {
        *on = true;
        return 0;
    }
    snprintf(why, whylen,
             "authorizer.class.name: Tally has no authorizer class '%.200s'; set " AUTHZ_STANDARD
             " (or " AUTHZ_ACL_AUTHORIZER ", the same rules), or leave it empty for none",
             cls);
    return ERR_INVALID_CONFIG;
}

struct authz *authz_new(struct meta *m, const struct props *config)
{
    struct authz *z = calloc(1, sizeof *z);
    const char *list = props_get(config, "super.users");
    if (z == NULL)
        return NULL;
    z->meta = m;
    z->allow_if_no_acl = props_get_bool(config, "allow.everyone.if.no.acl.found", false, NULL);
    /* Kafka's list: principals separated by ';', blanks around each dropped. */
    for (const char *p = list; p != NULL && *p != '\0';) {
        size_t len = strcspn(p, ";");
        const char *s = p, *e = p + len;
        while (s < e && (*s == ' ' || *s == '\t'))
            s++;
        while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
            e--;
        if (e > s) {
            char **v = realloc(z->super_users, (z->n_super + 1) * sizeof *v);
            if (v == NULL)
                goto oom;
            z->super_users = v;
            if ((v[z->n_super] = strndup(s, (size_t)(e - s))) == NULL)
                goto oom;
            z->n_super++;
        }
        p += len;
        if (*p == ';')
            p++;
    }
    return z;
oom:
    authz_free(z);
    return NULL;
}

void authz_free(struct authz *z)
{
    if (z == NULL)
        return;
    for (size_t i = 0; i < z->n_super; i++)
        free(z->super_users[i]);
    free(z->super_users);
    free(z);
}

void authz_peer_host(const char *peer, char *out, size_t cap)
{
    const char *colon = peer ? strrchr(peer, ':') : NULL;
    size_t len = colon ? (size_t)(colon - peer) : (peer ? strlen(peer) : 0);
    if (len >= cap)
        len = cap - 1;
    memcpy(out, peer ? peer : "", len);
    out[len] = '\0';
}

static bool is_super(const struct authz *z, const char *principal)
{
    for (size_t i = 0; i < z->n_super; i++)
        if (strcmp(z->super_users[i], principal) == 0)
            return true;
    return false;
}

static const char *op_name(int8_t op)
{
    static const char *const names[] = {"Unknown",
                                        "Any",
                                        "All",
                                        "Read",
                                        "Write",
                                        "Create",
                                        "Delete",
                                        "Alter",
                                        "Describe",
                                        "ClusterAction",
                                        "DescribeConfigs",
                                        "AlterConfigs",
                                        "IdempotentWrite",
                                        "CreateTokens",
                                        "DescribeTokens"};
    return op >= 0 && op < (int8_t)(sizeof names / sizeof names[0]) ? names[op] : "Unknown";
}

static const char *type_name(int8_t type)
{
    switch (type) {
    case PROTO_RESOURCE_TOPIC:
        return "Topic";
    case PROTO_RESOURCE_GROUP:
        return "Group";
    case PROTO_RESOURCE_CLUSTER:
        return "Cluster";
    case PROTO_RESOURCE_TRANSACTIONAL_ID:
        return "TransactionalId";
    case PROTO_RESOURCE_DELEGATION_TOKEN:
        return "DelegationToken";
    case PROTO_RESOURCE_USER:
        return "User";
    default:
        return "Unknown";
    }
}

bool authz_check(struct authz *z, const char *principal, const char *host, int8_t op, int8_t type,
                 const char *name, const char *api, bool log)
{
    if (z == NULL || is_super(z, principal))
        return true;
    struct meta_acl_check c = {principal, host, op, type, name};
    bool ok = meta_acls_authorize(meta_acls(z->meta), &c, z->allow_if_no_acl);
    if (!ok && log) {
        char esc[128];
        slog_info_limited(&z->denied_log, AUTHZ_LOG_INTERVAL_MS, "authorizer",
                          "Principal = %s is Denied operation = %s from host = %s on resource = "
                          "%s:LITERAL:%s for request = %s",
                          principal, op_name(op), host, type_name(type),
                          slog_escape(name ? name : "", name ? strlen(name) : 0, esc, sizeof esc),
                          api);
    }
    return ok;
}

static bool decide(struct net_request *req, int8_t op, int8_t type, const char *name, bool log)
{
    struct authz *z = req->session->authz;
    char host[64];

    if (z == NULL)
        return true;
    authz_peer_host(req->peer, host, sizeof host);
    return authz_check(z, req->session->principal, host, op, type, name,
                       req->api ? req->api->name : "", log);
}

bool authz_allowed(struct net_request *req, int8_t op, int8_t type, const char *name)
{
    return decide(req, op, type, name, true);
}

bool authz_allowed_quiet(struct net_request *req, int8_t op, int8_t type, const char *name)
{
    return decide(req, op, type, name, false);
}

bool authz_allowed_any(struct net_request *req, int8_t op, int8_t type)
{
    struct authz *z = req->session->authz;
    char host[64];
    if (z == NULL || is_super(z, req->session->principal))
        return true;
    authz_peer_host(req->peer, host, sizeof host);
    return meta_acls_authorize_any(meta_acls(z->meta), req->session->principal, host, op, type,
                                   z->allow_if_no_acl);
}

bool authz_on(const struct net_request *req)
{
    return req->session->authz != NULL;
}

int32_t authz_ops(struct net_request *req, int8_t type, const char *name)
{
    int32_t supported = proto_authorized_ops(type), out = 0;
    if (req->session->authz == NULL)
        return supported;
    for (int8_t op = PROTO_ACL_OP_READ; op <= PROTO_ACL_OP_DESCRIBE_TOKENS; op++)
        if ((supported & (1 << op)) && decide(req, op, type, name, false))
            out |= 1 << op;
    return out;
}
