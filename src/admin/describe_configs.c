/* SPDX-License-Identifier: Apache-2.0 */
/* DescribeConfigs: every known config of a topic or broker with its effective value, its
 * source and (when asked) the chain of synonyms that could set it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin_int.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/slog.h"
#include "meta/meta.h"
#include "net/net.h"

static bool wanted(const struct DescribeConfigsResource *res, const char *key)
{
    if (res->ConfigurationKeys.n < 0)
        return true;
    for (int32_t i = 0; i < res->ConfigurationKeys.n; i++)
        if (res->ConfigurationKeys.v[i] && strcmp(res->ConfigurationKeys.v[i], key) == 0)
            return true;
    return false;
}

/* Synonyms, most specific first: the topic's own value, the broker key (and its coarser
 * aliases) at each level that sets it, the built-in default. */
static int fill_synonyms(struct admin *a, struct arena *ar, int8_t rtype, const char *rname,
                         const struct config_def *d, struct DescribeConfigsResourceResult *o)
{
    struct config_synonym syn[CONFIG_MAX_SYNONYMS];
    size_t n = config_synonyms(&a->cfg, rtype, rname, d, syn, CONFIG_MAX_SYNONYMS);
    o->Synonyms.v = arena_alloc(ar, (n + 1) * sizeof *o->Synonyms.v);
    if (o->Synonyms.v == NULL)
        return ERR_NOMEM;
    o->Synonyms.n = (int32_t)n;
    for (size_t i = 0; i < n; i++) {
        o->Synonyms.v[i].Name = (char *)syn[i].name;
        o->Synonyms.v[i].Value = (char *)syn[i].value;
        o->Synonyms.v[i].Source = (int8_t)syn[i].source;
    }
    return 0;
}

static int describe_one(struct admin *a, struct arena *ar, int16_t version, bool synonyms,
                        bool documentation, const struct DescribeConfigsResource *res,
                        struct DescribeConfigsResult *r)
{
    size_t nd;
    const struct config_def *d = config_defs(&nd);
    char node[16];

    r->ResourceType = res->ResourceType;
    r->ResourceName = res->ResourceName;
    if (res->ResourceType == RESOURCE_TOPIC) {
        if (meta_topic_by_name(a->meta, res->ResourceName ? res->ResourceName : "") == NULL) {
            r->ErrorCode = ERR_UNKNOWN_TOPIC_OR_PARTITION;
            r->ErrorMessage = "Topic does not exist";
            return 0;
        }
    } else if (res->ResourceType == RESOURCE_BROKER) {
        snprintf(node, sizeof node, "%d", a->node_id);
        if (res->ResourceName && res->ResourceName[0] &&
            meta_broker_by_id(a->meta, (int32_t)atoi(res->ResourceName)) == NULL &&
            strcmp(res->ResourceName, node) != 0) {
            r->ErrorCode = ERR_INVALID_REQUEST;
            r->ErrorMessage = "Unknown broker id";
            return 0;
        }
    } else {
        r->ErrorCode = ERR_INVALID_REQUEST;
        r->ErrorMessage = "Unsupported resource type";
        return 0;
    }
    r->Configs.v = arena_alloc(ar, nd * sizeof *r->Configs.v);
    if (r->Configs.v == NULL)
        return ERR_NOMEM;
    for (size_t i = 0; i < nd; i++) {
        const char *key = res->ResourceType == RESOURCE_TOPIC ? d[i].topic_key : d[i].broker_key;
        enum config_source src;
        if (key == NULL || !wanted(res, key))
            continue;
        struct DescribeConfigsResourceResult *o = &r->Configs.v[r->Configs.n++];
        o->Name = (char *)key;
        o->Value =
            (char *)config_effective(&a->cfg, res->ResourceType, res->ResourceName, &d[i], &src);
        o->ReadOnly = res->ResourceType == RESOURCE_BROKER && !d[i].dynamic;
        o->IsDefault = src == CS_DEFAULT;
        o->ConfigSource = (int8_t)src;
        /* Passwords are never shown, as Kafka: a null value, marked sensitive. */
        o->IsSensitive = d[i].type == CT_PASSWORD;
        if (o->IsSensitive)
            o->Value = NULL;
        o->ConfigType = (int8_t)d[i].type;
        o->Synonyms.n = 0;
        /* Only when asked (v3+), as Kafka: null otherwise. */
        o->Documentation = documentation && version >= 3 ? (char *)d[i].doc : NULL;
        if (synonyms && version >= 1 &&
            fill_synonyms(a, ar, res->ResourceType, res->ResourceName, &d[i], o) != 0)
            return ERR_NOMEM;
        for (int32_t k = 0; o->IsSensitive && k < o->Synonyms.n; k++)
            o->Synonyms.v[k].Value = NULL;
    }
    return 0;
}

void admin_describe_configs(struct admin *a, struct net_request *req)
{
    struct DescribeConfigsRequest *rq = req->body;
    struct arena *ar = req->arena;
    struct DescribeConfigsResponse *rs = arena_alloc(ar, sizeof *rs);
    int32_t n = rq->Resources.n > 0 ? rq->Resources.n : 0;

    if (rs == NULL)
        goto err_nomem;
    rs->Results.n = n;
    rs->Results.v = arena_alloc(ar, ((size_t)n + 1) * sizeof *rs->Results.v);
    if (rs->Results.v == NULL)
        goto err_nomem;
    for (int32_t i = 0; i < n; i++) {
        const struct DescribeConfigsResource *res = &rq->Resources.v[i];
        int16_t denied = admin_config_authz(req, res->ResourceType, res->ResourceName,
                                            PROTO_ACL_OP_DESCRIBE_CONFIGS);
        if (denied != 0) {
            struct DescribeConfigsResult *r = &rs->Results.v[i];
            memset(r, 0, sizeof *r);
            r->ResourceType = res->ResourceType;
            r->ResourceName = res->ResourceName;
            r->ErrorCode = denied;
            r->ErrorMessage = "Authorization failed.";
            continue;
        }
        if (describe_one(a, ar, req->hdr.RequestApiVersion, rq->IncludeSynonyms,
                         rq->IncludeDocumentation, res, &rs->Results.v[i]) != 0)
            goto err_nomem;
    }
    net_respond(req, rs);
    return;

err_nomem:
    slog_error("admin", "out of memory in DescribeConfigs from %s; closing", req->peer);
    net_close_connection(req);
}
