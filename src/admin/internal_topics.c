/* SPDX-License-Identifier: Apache-2.0 */
/* Internal topics: the coordinators' own topics (__consumer_offsets, __transaction_state),
 * created on first use with the partition count, replication factor and configs the
 * coordinator asks for. The replication factor is capped only by the number of voters of the
 * metadata quorum — the size the cluster was configured with, so that a one-node cluster
 * works — never by how many brokers happen to be up: the topic is not created until that many
 * brokers are registered and unfenced (the caller answers COORDINATOR_NOT_AVAILABLE meanwhile
 * and asks again), so a cluster whose first broker came up alone does not get RF=1
 * coordinator topics for good. min.insync.replicas is capped at the replication factor.
 *
 * The active controller proposes the topic itself. Any other broker sends the controller a
 * CreateTopics with the same partitions, replication factor and configs (forward.c), as
 * Kafka's brokers do through their AutoTopicCreationManager, and its coordinator answers
 * COORDINATOR_NOT_AVAILABLE until the topic is in its image. The controller treats that
 * CreateTopics as any client's: Tally, like Kafka, lets clients create the coordinators'
 * topics with CreateTopics (only __cluster_metadata is refused), so a broker needs no proof
 * of being one — which it could not give: without authentication, whatever a broker sends a
 * client could send too. What a client gets wrong there (too few partitions) it gets wrong
 * in Kafka as well; the coordinators read the partition count from the image. */
#include <stdio.h>
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
    struct internal_create *c = NULL;
    struct meta_record *recs;
    size_t n;
    int32_t n_live;
    int rc;

    if (meta_topic_by_name(a->meta, name))
        return 0;
    if (strlen(name) >= sizeof c->name || partitions < 1)
        return ERR_INVALID_REQUEST;
    ar = arena_new(1 << 20);
    if (ar == NULL || live_broker_ids(a, ar, &n_live) == NULL) {
        rc = ERR_NOMEM;
        goto err;
    }
    if (a->n_voters > 0 && replication_factor > a->n_voters) {
        slog_warn_limited(&a->internal_warn, 60000, "admin",
                          "internal topic %s: replication factor %d capped at %d, the number "
                          "of metadata quorum voters",
                          name, replication_factor, a->n_voters);
        replication_factor = (int16_t)a->n_voters;
    }
    if (replication_factor < 1)
        replication_factor = 1;
    /* On a non-controller this is its own image's view; the controller checks again (and
     * answers INVALID_REPLICATION_FACTOR if it sees fewer: the coordinator asks again). */
    if (n_live < replication_factor) {
        slog_info_limited(&a->internal_wait, 10000, "admin",
                          "internal topic %s waits for %d unfenced brokers (%d so far)", name,
                          replication_factor, n_live);
        rc = ERR_COORDINATOR_NOT_AVAILABLE;
        goto err;
    }
    /* The coordinator's min.insync.replicas may not exceed what the topic can have. */
    char isr[16];
    const char **vals = arena_alloc(ar, ((size_t)n_configs + 1) * sizeof *vals);
    if (vals == NULL) {
        rc = ERR_NOMEM;
        goto err;
    }
    for (int32_t i = 0; i < n_configs; i++) {
        vals[i] = values[i];
        if (strcmp(keys[i], "min.insync.replicas") == 0 && atoll(values[i]) > replication_factor) {
            snprintf(isr, sizeof isr, "%d", replication_factor);
            vals[i] = isr;
        }
    }
    values = vals;
    if (!meta_is_controller(a->meta)) {
        rc = admin_forward_create(a, name, partitions, replication_factor, n_configs, keys, values);
        arena_free(ar);
        return rc;
    }
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
    c = calloc(1, sizeof *c);
    if (c == NULL) {
        rc = ERR_NOMEM;
        goto err;
    }
    memcpy(c->name, name, strlen(name) + 1);
    /* The records are encoded before meta_propose returns: the arena may go now. */
    rc = meta_propose(a->meta, recs, n, on_internal_created, c);
    arena_free(ar);
    if (rc != 0)
        free(c);
    return rc;

err:
    arena_free(ar);
    return rc;
}
