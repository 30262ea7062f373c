/* SPDX-License-Identifier: Apache-2.0 */
/* config: the table of known topic and broker configs (Kafka's names and defaults), their
 * validation, and the chain that gives a config its effective value: a topic's own setting,
 * then dynamic per-broker, dynamic cluster default, static (file / --set), built-in. */
#ifndef TALLY_CONFIG_H
#define TALLY_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct meta;
struct props;

/* Kafka's ConfigResource types. */
#define RESOURCE_TOPIC 2
#define RESOURCE_BROKER 4

/* Kafka's ConfigType (DescribeConfigs v3+) and ConfigSource values. */
enum config_type {
    CT_BOOLEAN = 1,
    CT_STRING = 2,
    CT_INT = 3,
    CT_SHORT = 4,
    CT_LONG = 5,
    CT_DOUBLE = 6, /* min and max bound it as integers (a ratio in [0, 1]) */
    CT_LIST = 7
};
enum config_source {
    CS_DYNAMIC_TOPIC = 1,
    CS_DYNAMIC_BROKER = 2,
    CS_DYNAMIC_DEFAULT_BROKER = 3,
    CS_STATIC_BROKER = 4,
    CS_DEFAULT = 5,
};

/* One known config: a topic config and the broker config that gives its default, or a
 * broker-only config (topic_key NULL). */
struct config_def {
    const char *topic_key;
    const char *broker_key;
    enum config_type type;
    const char *def;
    int64_t min, max;           /* for numeric types */
    const char *const *allowed; /* for enumerated strings, NULL-terminated; NULL = any */
    bool dynamic;               /* may be altered at run time (broker side) */
};

/* The config table, in order. */
const struct config_def *config_defs(size_t *n);
const struct config_def *config_find_topic(const char *key);
const struct config_def *config_find_broker(const char *key);

/* Checks a value against a definition; returns 0 or ERR_INVALID_CONFIG with a reason. */
int config_validate(const struct config_def *d, const char *value, char *why, size_t whylen);

/* The effective value of a config for a resource and where it came from. For a topic:
 * its own setting, else the broker default chain; for a broker (name = node id): dynamic
 * per-broker, dynamic cluster default, static config, built-in default. */
struct config_ctx {
    const struct meta *meta;
    const struct props *props; /* static configuration (file + --set) */
    int32_t node_id;
};
const char *config_effective(const struct config_ctx *c, int8_t rtype, const char *rname,
                             const struct config_def *d, enum config_source *src);

/* The effective value of topic config `key` for `topic` parsed as an integer, or `def`. */
int64_t config_topic_int(const struct config_ctx *c, const char *topic, const char *key,
                         int64_t def);
/* The effective value of topic config `key` for `topic` (never NULL for a known key). */
const char *config_topic_str(const struct config_ctx *c, const char *topic, const char *key);

#endif
