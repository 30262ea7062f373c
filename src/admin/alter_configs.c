/* SPDX-License-Identifier: Apache-2.0 */
/* AlterConfigs (replace a resource's whole set) and IncrementalAlterConfigs (SET, DELETE,
 * APPEND, SUBTRACT per key) on topics and brokers. Both reduce to the same step: validate
 * every change of a resource, then propose its CONFIG records as one batch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin_int.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/slog.h"
#include "meta/meta.h"
#include "net/net.h"

/* alter_resource's answer when nothing needed proposing (not an error code). */
#define NO_PROPOSAL (-2000)

enum op { OP_SET = 0, OP_DELETE = 1, OP_APPEND = 2, OP_SUBTRACT = 3 };

struct change {
    const char *key, *value;
    int8_t op;
};

/* The outcome slot of one resource, whichever API's response struct holds it. */
struct outcome {
    int16_t *error_code;
    char **error_message;
};

struct alter_call {
    struct net_request *req;
    void *rs;
    int pending;
};

struct alter_one {
    struct alter_call *call;
    struct outcome out;
};

static void set_outcome(struct arena *ar, struct outcome *o, int err, const char *msg)
{
    *o->error_code = (int16_t)err_wire(err);
    *o->error_message = msg ? arena_strndup(ar, msg, strlen(msg)) : NULL;
}

static void on_applied(void *arg, int err)
{
    struct alter_one *one = arg;
    if (err != 0)
        set_outcome(one->call->req->arena, &one->out, err, err_name(err));
    if (--one->call->pending == 0)
        net_respond(one->call->req, one->call->rs);
}

/* Applies APPEND/SUBTRACT of `item` to the comma-separated list `cur`. */
static char *list_edit(struct arena *ar, const char *cur, const char *item, bool add)
{
    char *out = arena_alloc(ar, strlen(cur ? cur : "") + strlen(item) + 2);
    const char *p = cur ? cur : "";
    bool present = false;
    if (out == NULL)
        return NULL;
    while (*p) {
        size_t len = strcspn(p, ",");
        bool same = len == strlen(item) && strncmp(p, item, len) == 0;
        present |= same;
        if (!(same && !add) && len > 0) {
            if (*out)
                strcat(out, ",");
            strncat(out, p, len);
        }
        p += len + (p[len] == ',');
    }
    if (add && !present) {
        if (*out)
            strcat(out, ",");
        strcat(out, item);
    }
    return out;
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* Whether a key appears twice among the changes (sorting a copy: requests may be large). */
static bool has_duplicate_key(struct arena *ar, const struct change *ch, int32_t n)
{
    const char **keys = arena_alloc(ar, ((size_t)n + 1) * sizeof *keys);
    if (keys == NULL)
        return true; /* refuse what cannot be checked */
    for (int32_t i = 0; i < n; i++)
        keys[i] = ch[i].key;
    qsort(keys, (size_t)n, sizeof *keys, cmp_str);
    for (int32_t i = 1; i < n; i++)
        if (strcmp(keys[i - 1], keys[i]) == 0)
            return true;
    return false;
}

/* Validates and proposes one resource's changes. `replace` = AlterConfigs semantics: keys
 * not listed go back to their defaults. Returns 0 when a proposal is pending (cb will run),
 * NO_PROPOSAL when finished without one (validate_only, no change), or an error with *why. */
static int alter_resource(struct admin *a, struct arena *ar, int8_t rtype, const char *rname,
                          const struct change *ch, int32_t n, bool replace, bool validate_only,
                          struct alter_one *one, const char **why)
{
    static char buf[256];
    struct meta_record *recs;
    size_t nr = 0;
    int32_t nset;
    const struct meta_config_entry *cur;

    if (rtype == RESOURCE_TOPIC) {
        if (meta_topic_by_name(a->meta, rname ? rname : "") == NULL) {
            *why = "Topic does not exist";
            return ERR_UNKNOWN_TOPIC_OR_PARTITION;
        }
    } else if (rtype == RESOURCE_BROKER) {
        if (rname == NULL)
            rname = "";
        if (rname[0] && meta_broker_by_id(a->meta, atoi(rname)) == NULL) {
            *why = "Unknown broker id";
            return ERR_INVALID_REQUEST;
        }
    } else {
        *why = "Unsupported resource type";
        return ERR_INVALID_REQUEST;
    }
    if (has_duplicate_key(ar, ch, n)) {
        *why = "Error due to duplicate config keys";
        return ERR_INVALID_REQUEST;
    }
    for (int32_t i = 0; i < n; i++) {
        if (ch[i].op != OP_DELETE && ch[i].value == NULL) {
            snprintf(buf, sizeof buf, "Null value not supported for : %s", ch[i].key);
            *why = buf;
            return ERR_INVALID_REQUEST;
        }
    }
    cur = meta_configs(a->meta, rtype, rname, &nset);
    recs = arena_alloc(ar, ((size_t)n + (size_t)nset + 1) * sizeof *recs);
    if (recs == NULL)
        return ERR_NOMEM;
    for (int32_t i = 0; i < n; i++) {
        const struct config_def *d =
            rtype == RESOURCE_TOPIC ? config_find_topic(ch[i].key) : config_find_broker(ch[i].key);
        const char *value = ch[i].value;
        /* listener.name.<listener>.<config>: a listener security config (KIP-226), stored
         * under the prefixed name; tallyd applies the keystore ones to the listener's new
         * connections (main.c). */
        bool listener_scoped = false;
        if (d == NULL && rtype == RESOURCE_BROKER &&
            strncmp(ch[i].key, "listener.name.", 14) == 0) {
            const char *rest = strchr(ch[i].key + 14, '.');
            const struct config_def *ld =
                rest && rest > ch[i].key + 14 ? config_find_broker(rest + 1) : NULL;
            if (ld && (ld->flags & CF_LISTENER_ONLY)) {
                d = ld;
                listener_scoped = true;
            }
        }
        if (d == NULL) {
            snprintf(buf, sizeof buf, "Unknown %s config name: %s",
                     rtype == RESOURCE_TOPIC ? "topic" : "broker", ch[i].key);
            *why = buf;
            return ERR_INVALID_CONFIG;
        }
        if (rtype == RESOURCE_BROKER && !d->dynamic) {
            /* Kafka answers INVALID_REQUEST here (a ConfigException of its dynamic config
             * validation, turned into InvalidRequestException — KAFKA-13609). */
            snprintf(buf, sizeof buf, "Cannot update these configs dynamically: %s", ch[i].key);
            *why = buf;
            return ERR_INVALID_REQUEST;
        }
        /* Kafka's other refusals of its dynamic broker config validation, also INVALID_REQUEST:
         * listener security configs only under a listener prefix, per-broker configs only
         * with a broker id. */
        if (rtype == RESOURCE_BROKER && (d->flags & CF_LISTENER_ONLY) && !listener_scoped) {
            snprintf(buf, sizeof buf,
                     "These security configs can be dynamically updated only per-listener using "
                     "the listener prefix: %s",
                     ch[i].key);
            *why = buf;
            return ERR_INVALID_REQUEST;
        }
        if (rtype == RESOURCE_BROKER && rname[0] == '\0' && (d->flags & CF_PER_BROKER)) {
            snprintf(buf, sizeof buf,
                     "Cannot update these configs at default cluster level, broker id must be "
                     "specified: %s",
                     ch[i].key);
            *why = buf;
            return ERR_INVALID_REQUEST;
        }
        if (ch[i].op == OP_APPEND || ch[i].op == OP_SUBTRACT) {
            if (d->type != CT_LIST) {
                snprintf(buf, sizeof buf, "Config %s is not a list", ch[i].key);
                *why = buf;
                return ERR_INVALID_CONFIG;
            }
            /* Edit the value in force — the default when none is set, as Kafka does: APPEND
             * "compact" to an unset cleanup.policy gives "delete,compact". */
            enum config_source src;
            const char *now = config_effective(&a->cfg, rtype, rname, d, &src);
            value = list_edit(ar, now, value, ch[i].op == OP_APPEND);
            if (value == NULL)
                return ERR_NOMEM;
            if (*value == '\0')
                value = NULL;
        } else if (ch[i].op == OP_DELETE) {
            value = NULL;
        } else if (ch[i].op != OP_SET) {
            *why = "Unknown config operation";
            return ERR_INVALID_REQUEST;
        }
        if (value && config_validate(d, value, buf, sizeof buf) != 0) {
            *why = buf;
            return ERR_INVALID_CONFIG;
        }
        if (value && !validate_only)
            admin_warn_deprecated(d, rname);
        struct meta_record *r = &recs[nr++];
        r->type = META_REC_CONFIG;
        r->u.config.resource_type = rtype;
        r->u.config.resource_name = rname;
        r->u.config.key = ch[i].key;
        r->u.config.value = value;
    }
    if (replace) {
        for (int32_t j = 0; j < nset; j++) {
            bool listed = false;
            for (int32_t i = 0; i < n && !listed; i++)
                listed = strcmp(ch[i].key, cur[j].key) == 0;
            if (listed)
                continue;
            struct meta_record *r = &recs[nr++];
            r->type = META_REC_CONFIG;
            r->u.config.resource_type = rtype;
            r->u.config.resource_name = rname;
            r->u.config.key = cur[j].key;
            r->u.config.value = NULL;
        }
    }
    if (validate_only || nr == 0)
        return NO_PROPOSAL;
    int rc = meta_propose(a->meta, recs, nr, on_applied, one);
    if (rc == 0)
        slog_info("admin", "altering %zu config(s) of %s '%s'", nr,
                  rtype == RESOURCE_TOPIC ? "topic" : "broker", rname);
    return rc;
}

/* Runs every resource of a request; `get` yields resource i's type, name and changes. */
typedef void (*resource_get_fn)(void *rq, int32_t i, struct arena *ar, int8_t *rtype,
                                const char **rname, struct change **ch, int32_t *n,
                                struct outcome *out, void *rs);

struct resource_ref {
    int8_t rtype;
    const char *rname;
    int32_t index;
};

static int cmp_resource(const void *x, const void *y)
{
    const struct resource_ref *p = x, *q = y;
    if (p->rtype != q->rtype)
        return p->rtype < q->rtype ? -1 : 1;
    return strcmp(p->rname ? p->rname : "", q->rname ? q->rname : "");
}

static void alter_all(struct admin *a, struct net_request *req, void *rs, int32_t nres,
                      bool replace, bool validate_only, resource_get_fn get)
{
    struct arena *ar = req->arena;
    struct alter_call *c = arena_alloc(ar, sizeof *c);
    struct resource_ref *res = arena_alloc(ar, ((size_t)nres + 1) * sizeof *res);
    struct resource_ref *refs = arena_alloc(ar, ((size_t)nres + 1) * sizeof *refs);
    struct change **chs = arena_alloc(ar, ((size_t)nres + 1) * sizeof *chs);
    int32_t *ns = arena_alloc(ar, ((size_t)nres + 1) * sizeof *ns);
    struct outcome *outs = arena_alloc(ar, ((size_t)nres + 1) * sizeof *outs);
    bool *dup = arena_alloc(ar, ((size_t)nres + 1) * sizeof *dup);

    if (c == NULL || res == NULL || refs == NULL || chs == NULL || ns == NULL || outs == NULL ||
        dup == NULL) {
        net_close_connection(req);
        return;
    }
    c->req = req;
    c->rs = rs;
    c->pending = 1;
    for (int32_t i = 0; i < nres; i++) {
        get(req->body, i, ar, &res[i].rtype, &res[i].rname, &chs[i], &ns[i], &outs[i], rs);
        res[i].index = i;
        refs[i] = res[i];
    }
    /* A resource named twice is refused both times, as Kafka does. */
    qsort(refs, (size_t)nres, sizeof *refs, cmp_resource);
    for (int32_t i = 1; i < nres; i++)
        if (cmp_resource(&refs[i - 1], &refs[i]) == 0)
            dup[refs[i - 1].index] = dup[refs[i].index] = true;
    for (int32_t i = 0; i < nres; i++) {
        struct alter_one *one = arena_alloc(ar, sizeof *one);
        const struct resource_ref *r = &res[i];
        const char *why = NULL;
        int rc;

        if (dup[i]) {
            set_outcome(ar, &outs[i], ERR_INVALID_REQUEST,
                        "Each resource must appear at most once.");
            continue;
        }
        if (one == NULL || chs[i] == NULL) {
            set_outcome(ar, &outs[i], ERR_NOMEM, NULL);
            continue;
        }
        int16_t denied = admin_config_authz(req, r->rtype, r->rname, PROTO_ACL_OP_ALTER_CONFIGS);
        if (denied != 0) {
            set_outcome(ar, &outs[i], denied, "Authorization failed.");
            continue;
        }
        if (!meta_is_controller(a->meta)) {
            set_outcome(ar, &outs[i], ERR_NOT_CONTROLLER, NULL);
            continue;
        }
        one->call = c;
        one->out = outs[i];
        rc = alter_resource(a, ar, r->rtype, r->rname, chs[i], ns[i], replace, validate_only, one,
                            &why);
        if (rc == 0)
            c->pending++;
        else if (rc != NO_PROPOSAL)
            set_outcome(ar, &outs[i], rc, why);
    }
    if (--c->pending == 0)
        net_respond(req, rs);
}

static void get_alter(void *body, int32_t i, struct arena *ar, int8_t *rtype, const char **rname,
                      struct change **ch, int32_t *n, struct outcome *out, void *resp)
{
    struct AlterConfigsRequest *rq = body;
    struct AlterConfigsResponse *rs = resp;
    struct AlterConfigsResource *res = &rq->Resources.v[i];
    struct AlterConfigsResourceResponse *r = &rs->Responses.v[i];
    r->ResourceType = res->ResourceType;
    r->ResourceName = res->ResourceName;
    out->error_code = &r->ErrorCode;
    out->error_message = &r->ErrorMessage;
    *rtype = res->ResourceType;
    *rname = res->ResourceName;
    *n = res->Configs.n > 0 ? res->Configs.n : 0;
    *ch = arena_alloc(ar, ((size_t)*n + 1) * sizeof **ch);
    for (int32_t j = 0; *ch && j < *n; j++) {
        (*ch)[j].key = res->Configs.v[j].Name ? res->Configs.v[j].Name : "";
        (*ch)[j].value = res->Configs.v[j].Value;
        (*ch)[j].op = res->Configs.v[j].Value ? OP_SET : OP_DELETE;
    }
}

void admin_alter_configs(struct admin *a, struct net_request *req)
{
    struct AlterConfigsRequest *rq = req->body;
    struct AlterConfigsResponse *rs = arena_alloc(req->arena, sizeof *rs);
    int32_t n = rq->Resources.n > 0 ? rq->Resources.n : 0;
    if (rs == NULL || (rs->Responses.v = arena_alloc(
                           req->arena, ((size_t)n + 1) * sizeof *rs->Responses.v)) == NULL) {
        net_close_connection(req);
        return;
    }
    rs->Responses.n = n;
    alter_all(a, req, rs, n, true, rq->ValidateOnly, get_alter);
}

static void get_incremental(void *body, int32_t i, struct arena *ar, int8_t *rtype,
                            const char **rname, struct change **ch, int32_t *n, struct outcome *out,
                            void *resp)
{
    struct IncrementalAlterConfigsRequest *rq = body;
    struct IncrementalAlterConfigsResponse *rs = resp;
    struct IncrementalAlterConfigsResource *res = &rq->Resources.v[i];
    struct IncrementalAlterConfigsResourceResponse *r = &rs->Responses.v[i];
    r->ResourceType = res->ResourceType;
    r->ResourceName = res->ResourceName;
    out->error_code = &r->ErrorCode;
    out->error_message = &r->ErrorMessage;
    *rtype = res->ResourceType;
    *rname = res->ResourceName;
    *n = res->Configs.n > 0 ? res->Configs.n : 0;
    *ch = arena_alloc(ar, ((size_t)*n + 1) * sizeof **ch);
    for (int32_t j = 0; *ch && j < *n; j++) {
        (*ch)[j].key = res->Configs.v[j].Name ? res->Configs.v[j].Name : "";
        (*ch)[j].value = res->Configs.v[j].Value;
        (*ch)[j].op = res->Configs.v[j].ConfigOperation;
    }
}

void admin_incremental_alter_configs(struct admin *a, struct net_request *req)
{
    struct IncrementalAlterConfigsRequest *rq = req->body;
    struct IncrementalAlterConfigsResponse *rs = arena_alloc(req->arena, sizeof *rs);
    int32_t n = rq->Resources.n > 0 ? rq->Resources.n : 0;
    if (rs == NULL || (rs->Responses.v = arena_alloc(
                           req->arena, ((size_t)n + 1) * sizeof *rs->Responses.v)) == NULL) {
        net_close_connection(req);
        return;
    }
    rs->Responses.n = n;
    alter_all(a, req, rs, n, false, rq->ValidateOnly, get_incremental);
}
