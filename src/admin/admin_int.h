/* SPDX-License-Identifier: Apache-2.0 */
/* admin internals shared by the handler files. */
#ifndef TALLY_ADMIN_INT_H
#define TALLY_ADMIN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "admin.h"
#include "config/config.h"

struct arena;
struct meta;
struct meta_record;

struct admin {
    struct meta *meta;
    int32_t node_id;
    const struct props *config;
    struct config_ctx cfg; /* meta + static config + node id, for config look-ups */
};

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
