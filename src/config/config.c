/* SPDX-License-Identifier: Apache-2.0 */
/* config: the effective-value chain and the synonyms DescribeConfigs lists (the table and
 * validation are in table.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "base/props.h"
#include "meta/meta.h"

/* Broker keys Kafka also takes in coarser units, in its order of precedence after the key
 * itself: the first one set in the static configuration gives the value. Only static: none
 * of the aliases is dynamic (as in Kafka). */
struct unit_alias {
    const char *key, *alias;
    long long unit_ms;
    bool negative_unlimited; /* any negative value means -1 (retention: keep forever) */
};
static const struct unit_alias aliases[] = {
    {"log.retention.ms", "log.retention.minutes", 60000LL, true},
    {"log.retention.ms", "log.retention.hours", 3600000LL, true},
    {"log.roll.ms", "log.roll.hours", 3600000LL, false},
    {"log.roll.jitter.ms", "log.roll.jitter.hours", 3600000LL, false},
    {"log.flush.interval.ms", "log.flush.scheduler.interval.ms", 1LL, false},
};
#define N_ALIASES (sizeof aliases / sizeof aliases[0])

/* The value of alias i derived from the static configuration, or NULL. One buffer per alias:
 * several may be in use at once; static configuration does not change while the broker
 * runs, so the text stays right. */
static const char *alias_value(const struct props *props, size_t i)
{
    static char bufs[N_ALIASES][32];
    const char *v = props_get(props, aliases[i].alias);
    char *end;
    long long x;
    if (v == NULL || *v == '\0')
        return NULL;
    x = strtoll(v, &end, 10);
    /* Malformed values were refused at start (admin_check_config). */
    if (*end != '\0')
        return NULL;
    if (aliases[i].negative_unlimited && x < 0)
        x = -1;
    else
        x *= aliases[i].unit_ms;
    snprintf(bufs[i], sizeof bufs[i], "%lld", x);
    return bufs[i];
}

/* The static (file or --set) or built-in value of a broker key. */
static const char *static_value(const struct config_ctx *a, const struct config_def *d,
                                enum config_source *src)
{
    const char *v = props_get(a->props, d->broker_key);
    for (size_t i = 0; v == NULL && i < N_ALIASES; i++)
        if (strcmp(aliases[i].key, d->broker_key) == 0)
            v = alias_value(a->props, i);
    if (v) {
        *src = CS_STATIC_BROKER;
        return v;
    }
    *src = CS_DEFAULT;
    return d->def;
}

const char *config_effective(const struct config_ctx *a, int8_t rtype, const char *rname,
                             const struct config_def *d, enum config_source *src)
{
    const char *v;
    char node[16];
    if (rtype == RESOURCE_TOPIC && d->topic_key) {
        v = meta_config_get(a->meta, RESOURCE_TOPIC, rname, d->topic_key);
        if (v) {
            *src = CS_DYNAMIC_TOPIC;
            return v;
        }
    }
    if (d->broker_key == NULL) { /* a topic-only config: no broker-wide default */
        *src = CS_DEFAULT;
        return d->def;
    }
    snprintf(node, sizeof node, "%d", a->node_id);
    const char *broker = rtype == RESOURCE_BROKER ? rname : node;
    /* The broker resource "" is the cluster-wide default itself: no per-broker level. */
    v = broker && broker[0] ? meta_config_get(a->meta, RESOURCE_BROKER, broker, d->broker_key)
                            : NULL;
    if (v) {
        *src = CS_DYNAMIC_BROKER;
        return v;
    }
    v = meta_config_get(a->meta, RESOURCE_BROKER, "", d->broker_key);
    if (v) {
        *src = CS_DYNAMIC_DEFAULT_BROKER;
        return v;
    }
    return static_value(a, d, src);
}

static int64_t parse_or(const char *v, int64_t def)
{
    char *end;
    long long x;
    if (v == NULL || *v == '\0')
        return def;
    x = strtoll(v, &end, 10);
    return *end == '\0' ? x : def;
}

int64_t config_topic_int(const struct config_ctx *c, const char *topic, const char *key,
                         int64_t def)
{
    const struct config_def *d = config_find_topic(key);
    enum config_source src;
    return parse_or(d ? config_effective(c, RESOURCE_TOPIC, topic, d, &src) : NULL, def);
}

const char *config_topic_str(const struct config_ctx *c, const char *topic, const char *key)
{
    const struct config_def *d = config_find_topic(key);
    enum config_source src;
    const char *v = d ? config_effective(c, RESOURCE_TOPIC, topic, d, &src) : NULL;
    return v ? v : "";
}

int64_t config_broker_int(const struct config_ctx *c, const char *key, int64_t def)
{
    const struct config_def *d = config_find_broker(key);
    enum config_source src;
    char node[16];
    snprintf(node, sizeof node, "%d", c->node_id);
    return parse_or(d ? config_effective(c, RESOURCE_BROKER, node, d, &src) : NULL, def);
}

static size_t add_synonym(struct config_synonym *out, size_t n, size_t cap, const char *name,
                          const char *value, enum config_source source)
{
    if (n < cap)
        out[n] = (struct config_synonym){name, value, source};
    return n + 1;
}

size_t config_synonyms(const struct config_ctx *c, int8_t rtype, const char *rname,
                       const struct config_def *d, struct config_synonym *out, size_t cap)
{
    size_t n = 0;
    const char *v;
    char node[16];

    if (rtype == RESOURCE_TOPIC && d->topic_key &&
        (v = meta_config_get(c->meta, RESOURCE_TOPIC, rname, d->topic_key)) != NULL)
        n = add_synonym(out, n, cap, d->topic_key, v, CS_DYNAMIC_TOPIC);
    if (d->broker_key) {
        snprintf(node, sizeof node, "%d", c->node_id);
        const char *broker = rtype == RESOURCE_BROKER ? rname : node;
        if (broker && broker[0] &&
            (v = meta_config_get(c->meta, RESOURCE_BROKER, broker, d->broker_key)) != NULL)
            n = add_synonym(out, n, cap, d->broker_key, v, CS_DYNAMIC_BROKER);
        if ((v = meta_config_get(c->meta, RESOURCE_BROKER, "", d->broker_key)) != NULL)
            n = add_synonym(out, n, cap, d->broker_key, v, CS_DYNAMIC_DEFAULT_BROKER);
        if ((v = props_get(c->props, d->broker_key)) != NULL)
            n = add_synonym(out, n, cap, d->broker_key, v, CS_STATIC_BROKER);
        for (size_t i = 0; i < N_ALIASES; i++)
            if (strcmp(aliases[i].key, d->broker_key) == 0 &&
                (v = props_get(c->props, aliases[i].alias)) != NULL)
                n = add_synonym(out, n, cap, aliases[i].alias, v, CS_STATIC_BROKER);
    }
    if (d->def)
        n = add_synonym(out, n, cap, d->broker_key ? d->broker_key : d->topic_key, d->def,
                        CS_DEFAULT);
    return n < cap ? n : cap;
}
