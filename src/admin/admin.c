/* SPDX-License-Identifier: Apache-2.0 */
/* admin: construction and the pieces shared by the handlers (broker lists, topic records). */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "admin_int.h"
#include "base/arena.h"
#include "base/err.h"
#include "broker/client_quota.h"
#include "controller/controller_sm.h"
#include "meta/meta.h"
#include "net/net.h"

struct admin *admin_new(struct meta *m, const struct admin_options *opts)
{
    struct admin *a = calloc(1, sizeof *a);
    if (a == NULL)
        return NULL;
    a->meta = m;
    a->node_id = opts->node_id;
    a->n_voters = opts->n_voters;
    a->config = opts->config;
    a->cfg.meta = m;
    a->cfg.props = opts->config;
    a->cfg.node_id = opts->node_id;
    admin_forward_setup(a, opts);
    if (admin_mutation_setup(a) != 0) {
        free(a);
        return NULL;
    }
    return a;
}

void admin_free(struct admin *a)
{
    if (a == NULL)
        return;
    admin_forward_free_all(a);
    cq_table_free(a->mutations);
    free(a);
}

int32_t *live_broker_ids(const struct admin *a, struct arena *ar, int32_t *n)
{
    size_t nb;
    const struct meta_broker *b = meta_brokers(a->meta, &nb);
    int32_t *ids = arena_alloc(ar, (nb ? nb : 1) * sizeof *ids);
    *n = 0;
    if (ids == NULL)
        return NULL;
    /* Brokers in controlled shutdown take no new replicas either. */
    for (size_t i = 0; i < nb; i++)
        if (!b[i].fenced && !b[i].shutting_down)
            ids[(*n)++] = b[i].id;
    return ids;
}

void uuid_random(uint8_t id[16])
{
    do {
        if (getrandom(id, 16, 0) != 16) {
            /* getrandom on Linux does not fail for 16 bytes once the pool is ready; fall back
             * to rand() rather than hand out a constant id. */
            for (int i = 0; i < 16; i++)
                id[i] = (uint8_t)rand();
        }
        id[6] = (uint8_t)((id[6] & 0x0f) | 0x40);
        id[8] = (uint8_t)((id[8] & 0x3f) | 0x80);
    } while (id[0] == 0 && id[1] == 0);
}

/* The seed of a topic's placement: a hash of its name, so that partitions added later
 * (CreatePartitions) continue the same rotation. */
uint32_t topic_placement_seed(const char *name)
{
    uint32_t seed = 0;
    for (const char *c = name; *c; c++)
        seed = seed * 31 + (uint8_t)*c;
    return seed;
}

int topic_records(const struct admin *a, const struct topic_spec *spec, struct arena *ar,
                  struct meta_record **out, size_t *n_out)
{
    int32_t rf = spec->replication_factor, np = spec->partitions;
    int32_t *placed = NULL;
    struct meta_record *recs;
    size_t n = 0;
    int rc;

    if (np < 1)
        return ERR_INVALID_PARTITIONS;
    if (spec->replicas == NULL) {
        /* The controller's rack-aware placement over the brokers that may take replicas. */
        placed = arena_alloc(ar, (size_t)np * (size_t)(rf > 0 ? rf : 1) * sizeof *placed);
        if (placed == NULL)
            return ERR_NOMEM;
        rc = ctl_place_replicas(meta_get_image(a->meta), np, rf, 0,
                                topic_placement_seed(spec->name), placed);
        if (rc != 0)
            return rc;
    }
    recs = arena_alloc(ar, (1 + (size_t)np + (size_t)spec->n_configs) * sizeof *recs);
    if (recs == NULL)
        return ERR_NOMEM;

    recs[n].type = META_REC_TOPIC;
    recs[n].u.topic.name = spec->name;
    if (spec->id)
        memcpy(recs[n].u.topic.id, spec->id, 16);
    else
        uuid_random(recs[n].u.topic.id);
    const uint8_t *tid = recs[n].u.topic.id;
    n++;

    for (int32_t p = 0; p < np; p++) {
        int32_t *replicas;
        if (spec->replicas) {
            rf = spec->n_replicas[p];
            replicas = (int32_t *)spec->replicas[p];
        } else {
            replicas = &placed[(size_t)p * (size_t)rf];
        }
        struct meta_record *rec = &recs[n++];
        rec->type = META_REC_PARTITION;
        memcpy(rec->u.partition.topic_id, tid, 16);
        rec->u.partition.partition = p;
        rec->u.partition.leader = replicas[0];
        rec->u.partition.leader_epoch = 0;
        rec->u.partition.partition_epoch = 0;
        rec->u.partition.n_replicas = rf;
        rec->u.partition.replicas = replicas;
        rec->u.partition.n_isr = rf;
        rec->u.partition.isr = replicas;
    }
    for (int32_t i = 0; i < spec->n_configs; i++) {
        struct meta_record *rec = &recs[n++];
        rec->type = META_REC_CONFIG;
        rec->u.config.resource_type = RESOURCE_TOPIC;
        rec->u.config.resource_name = spec->name;
        rec->u.config.key = spec->config_keys[i];
        rec->u.config.value = spec->config_values[i];
    }
    *out = recs;
    *n_out = n;
    return 0;
}

void admin_propose_or_respond(struct admin *a, struct net_request *req, void *rs,
                              const struct meta_record *batch, size_t n,
                              void (*applied)(void *arg, int err), void *arg)
{
    if (n == 0) {
        net_respond(req, rs);
        return;
    }
    int rc = meta_propose(a->meta, batch, n, applied, arg);
    if (rc != 0)
        applied(arg, rc);
}
