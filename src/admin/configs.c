/* SPDX-License-Identifier: Apache-2.0 */
/* admin configs: topic-name rules and the broker settings admin reads. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin_int.h"
#include "authz/authz.h"
#include "proto/proto.h"
#include "base/err.h"
#include "base/props.h"
#include "base/slog.h"

bool topic_name_valid(const char *name, const char **why)
{
    size_t n = name ? strlen(name) : 0;
    if (n == 0) {
        *why = "Topic name is empty";
        return false;
    }
    if (n > 249) {
        *why = "Topic name is longer than 249 characters";
        return false;
    }
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
        *why = "Topic name cannot be \".\" or \"..\"";
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-')) {
            *why = "Topic name contains a character other than ASCII alphanumerics, '.', '_' "
                   "and '-'";
            return false;
        }
    }
    return true;
}

int64_t admin_config_int(const struct admin *a, const char *key, int64_t def)
{
    const struct config_def *d = config_find_broker(key);
    enum config_source src;
    if (d) {
        char node[16];
        snprintf(node, sizeof node, "%d", a->node_id);
        const char *v = config_effective(&a->cfg, RESOURCE_BROKER, node, d, &src);
        return v && *v ? atoll(v) : def;
    }
    return props_get_int(a->config, key, def, NULL);
}

bool admin_config_bool(const struct admin *a, const char *key, bool def)
{
    return props_get_bool(a->config, key, def, NULL);
}

int admin_check_config(const struct props *config, char *err, size_t errlen)
{
    bool authz_wanted;
    if (authz_config(config, &authz_wanted, err, errlen) != 0)
        return ERR_INVALID_CONFIG;
    for (size_t i = 0; i < props_count(config); i++) {
        const char *k, *v;
        props_at(config, i, &k, &v);
        const struct config_def *d = config_find_broker(k);
        if (d && config_validate(d, v, err, errlen) != 0)
            return ERR_INVALID_CONFIG;
    }
    return 0;
}

int16_t admin_config_authz(struct net_request *req, int8_t rtype, const char *rname, int8_t op)
{
    if (rtype == RESOURCE_TOPIC)
        return authz_allowed(req, op, PROTO_RESOURCE_TOPIC, rname ? rname : "")
                   ? 0
                   : ERR_TOPIC_AUTHORIZATION_FAILED;
    if (rtype == RESOURCE_BROKER || rtype == 8 /* BROKER_LOGGER */)
        return authz_allowed(req, op, PROTO_RESOURCE_CLUSTER, AUTHZ_CLUSTER)
                   ? 0
                   : ERR_CLUSTER_AUTHORIZATION_FAILED;
    return 0;
}

void admin_warn_deprecated(const struct config_def *d, const char *resource)
{
    static struct slog_limit limit;
    if (d->flags & CF_DEPRECATED)
        slog_warn_limited(&limit, 10000, "admin",
                          "%s '%s': configuration %s is deprecated and ignored (batches are "
                          "always stored in the v2 format)",
                          d->topic_key ? "topic" : "broker", resource ? resource : "",
                          config_name(d));
}
