/* SPDX-License-Identifier: Apache-2.0 */
/* admin internals shared by the handler files. */
#ifndef TALLY_ADMIN_INT_H
#define TALLY_ADMIN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "admin.h"

struct arena;
struct meta;
struct meta_record;

struct admin {
    struct meta *meta;
    int32_t node_id;
    const struct props *config;
};

/* Kafka's ConfigResource types. */
#define RESOURCE_TOPIC 2
#define RESOURCE_BROKER 4

/* Kafka's ConfigType (DescribeConfigs v3+) and ConfigSource values. */
enum config_type { CT_BOOLEAN = 1, CT_STRING = 2, CT_INT = 3, CT_SHORT = 4, CT_LONG = 5, CT_LIST = 7 };
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
    int64_t min, max;      /* for numeric types */
    const char *const *allowed; /* for enumerated strings, NULL-terminated; NULL = any */
    bool dynamic;          /* may be altered at run time (broker side) */
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
const char *config_effective(const struct admin *a, int8_t rtype, const char *rname,
                             const struct config_def *d, enum config_source *src);

/* Topic names: [a-zA-Z0-9._-]{1,249}, not "." or "..". */
bool topic_name_valid(const char *name, const char **why);

/* Integer broker settings with a default (num.partitions, ...). */
int64_t admin_config_int(const struct admin *a, const char *key, int64_t def);
bool admin_config_bool(const struct admin *a, const char *key, bool def);

/* Unfenced brokers, ascending id, allocated in `ar`; *n gets the count. */
int32_t *live_broker_ids(const struct admin *a, struct arena *ar, int32_t *n);

/* Fills a random (version 4) UUID that is not all zero. */
void uuid_random(uint8_t id[16]);

/* Shared by CreateTopics and Metadata auto-creation: builds the records of a new topic
 * (TOPIC, PARTITION × n, CONFIG × n_configs) in `ar`; replicas go round-robin over live
 * brokers. Returns 0 with *out / *n_out, INVALID_REPLICATION_FACTOR, INVALID_PARTITIONS or
 * ERR_NOMEM. */
struct topic_spec {
    const char *name;
    int32_t partitions, replication_factor;
    int32_t n_configs;
    const char *const *config_keys, *const *config_values;
    const uint8_t *id; /* NULL = a fresh random id */
    /* Explicit replica lists, one per partition (NULL = round-robin placement). */
    const int32_t *const *replicas;
    const int32_t *n_replicas;
};
int topic_records(const struct admin *a, const struct topic_spec *spec, struct arena *ar,
                  struct meta_record **out, size_t *n_out);

#endif
