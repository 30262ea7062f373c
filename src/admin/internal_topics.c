/* SPDX-License-Identifier: Apache-2.0 */
/* Internal topics: the coordinators' own topics (__consumer_offsets, later
 * __transaction_state), created on first use with the partition count, replication factor and
 * configs the coordinator asks for. The replication factor is capped at the live brokers
 * (with one WARN line), so that a single node works, as Kafka does for a cluster smaller than
 * offsets.topic.replication.factor during its first start. Only the active controller
 * proposes; elsewhere the caller is told ERR_NOT_CONTROLLER and retries. */
#include <stdlib.h>
#include <string.h>

#include "admin_int.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/slog.h"
#include "meta/meta.h"

struct internal_create {
    char name[64];
};

static void on_internal_created(void *arg, int err)
{
    struct internal_create *c = arg;
    if (err == 0)
        slog_info("admin", "created internal topic %s", c->name);
    else if (err != ERR_TOPIC_ALREADY_EXISTS)
        slog_warn("admin", "creating internal topic %s failed: %s", c->name, err_name(err));
    free(c);
}

int admin_ensure_internal_topic(struct admin *a, const char *name, int32_t partitions,
                                int16_t replication_factor, int32_t n_configs,
                                const char *const *keys, const char *const *values)
{
    struct arena *ar;
    struct internal_create *c;
    struct meta_record *recs;
    size_t n;
    int32_t n_live;
    int rc;

    if (meta_topic_by_name(a->meta, name))
        return 0;
    if (!meta_is_controller(a->meta))
        return ERR_NOT_CONTROLLER;
    if (strlen(name) >= sizeof c->name || partitions < 1)
        return ERR_INVALID_REQUEST;
    ar = arena_new(1 << 20);
    c = calloc(1, sizeof *c);
    if (ar == NULL || c == NULL || live_broker_ids(a, ar, &n_live) == NULL) {
        rc = ERR_NOMEM;
        goto err;
    }
    if (n_live < 1) {
        rc = ERR_COORDINATOR_NOT_AVAILABLE;
        goto err;
    }
    if (replication_factor > n_live) {
        slog_warn("admin",
                  "creating internal topic %s with replication factor %d: only %d live "
                  "broker%s (wanted %d)",
                  name, n_live, n_live, n_live == 1 ? "" : "s", replication_factor);
        replication_factor = (int16_t)n_live;
    }
    if (replication_factor < 1)
        replication_factor = 1;
    struct topic_spec spec = {
        .name = name,
        .partitions = partitions,
        .replication_factor = replication_factor,
        .n_configs = n_configs,
        .config_keys = keys,
        .config_values = values,
    };
    rc = topic_records(a, &spec, ar, &recs, &n);
    if (rc != 0)
        goto err;
    memcpy(c->name, name, strlen(name) + 1);
    /* The records are encoded before meta_propose returns: the arena may go now. */
    rc = meta_propose(a->meta, recs, n, on_internal_created, c);
    arena_free(ar);
    if (rc != 0)
        free(c);
    return rc;

err:
    arena_free(ar);
    free(c);
    return rc;
}
