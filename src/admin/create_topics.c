/* SPDX-License-Identifier: Apache-2.0 */
/* CreateTopics: validates each topic, then proposes it as one atomic metadata batch (topic,
 * partitions, configs); the answer waits for every proposal to apply. */
#include <stdio.h>
#include <string.h>

#include "authz/authz.h"
#include "admin_int.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/slog.h"
#include "controller/controller_sm.h"
#include "meta/meta.h"
#include "net/net.h"

struct create_call {
    struct admin *a;
    struct net_request *req;
    struct CreateTopicsResponse *rs;
    int pending;
    struct admin_mutation quota; /* controller_mutation_rate, strict from v6 (KIP-599) */
};

struct create_one {
    struct create_call *call;
    struct CreatableTopicResult *result;
};

static void set_error(struct arena *ar, struct CreatableTopicResult *r, int err, const char *msg)
{
    r->ErrorCode = (int16_t)err_wire(err);
    r->ErrorMessage = msg ? arena_strndup(ar, msg, strlen(msg)) : NULL;
    r->NumPartitions = -1;
    r->ReplicationFactor = -1;
    r->Configs.n = -1;
}

/* v5+ answers carry the topic's effective configs. */
static int fill_configs(struct admin *a, struct arena *ar, const char *topic,
                        struct CreatableTopicResult *r)
{
    size_t nd;
    const struct config_def *d = config_defs(&nd);
    r->Configs.v = arena_alloc(ar, nd * sizeof *r->Configs.v);
    r->Configs.n = 0;
    if (r->Configs.v == NULL)
        return ERR_NOMEM;
    for (size_t i = 0; i < nd; i++) {
        enum config_source src;
        if (d[i].topic_key == NULL)
            continue;
        struct CreatableTopicConfigs *c = &r->Configs.v[r->Configs.n++];
        c->Name = (char *)d[i].topic_key;
        c->Value = (char *)config_effective(&a->cfg, RESOURCE_TOPIC, topic, &d[i], &src);
        c->ConfigSource = (int8_t)src;
    }
    return 0;
}

static void respond(struct create_call *c)
{
    c->rs->ThrottleTimeMs = admin_mutation_end(c->req, &c->quota);
    net_respond(c->req, c->rs);
}

static void on_applied(void *arg, int err)
{
    struct create_one *one = arg;
    struct create_call *c = one->call;
    if (err != 0) {
        set_error(c->req->arena, one->result, err, err_name(err));
    } else {
        const struct meta_topic *t = meta_topic_by_name(c->a->meta, one->result->Name);
        slog_info("admin", "created topic %s with %d partitions", one->result->Name,
                  t ? t->n_partitions : -1);
        if (t) {
            memcpy(one->result->TopicId.b, t->id, 16);
            one->result->NumPartitions = t->n_partitions;
            one->result->ReplicationFactor =
                (int16_t)(t->n_partitions > 0 ? t->partitions[0].n_replicas : -1);
        }
        if (fill_configs(c->a, c->req->arena, one->result->Name, one->result) != 0)
            one->result->Configs.n = -1;
    }
    if (--c->pending == 0)
        respond(c);
}

bool topic_is_internal(const char *name)
{
    return strcmp(name, TOPIC_CONSUMER_OFFSETS) == 0 || strcmp(name, TOPIC_TRANSACTION_STATE) == 0;
}

int topic_name_creatable(const struct admin *a, struct arena *ar, const char *name,
                         const char **why)
{
    static const char *const reserved[] = {TOPIC_CLUSTER_METADATA, TOPIC_CONSUMER_OFFSETS,
                                           TOPIC_TRANSACTION_STATE};
    const struct meta_topic *const *topics;
    size_t n;

    if (!topic_name_valid(name, why))
        return ERR_INVALID_TOPIC_EXCEPTION;
    if (strcmp(name, TOPIC_CLUSTER_METADATA) == 0) {
        *why = "Creation of internal topic " TOPIC_CLUSTER_METADATA " is prohibited.";
        return ERR_INVALID_REQUEST;
    }
    if (strpbrk(name, "._") == NULL)
        return 0;
    for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++) {
        if (strcmp(name, reserved[i]) != 0 && meta_topic_names_collide(name, reserved[i])) {
            *why =
                arena_printf(ar, "Topic '%s' collides with internal topic: %s", name, reserved[i]);
            return *why ? ERR_INVALID_TOPIC_EXCEPTION : ERR_NOMEM;
        }
    }
    topics = meta_topics(a->meta, &n);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(name, topics[i]->name) != 0 && meta_topic_names_collide(name, topics[i]->name)) {
            *why = arena_printf(ar, "Topic '%s' collides with existing topic: %s", name,
                                topics[i]->name);
            return *why ? ERR_INVALID_TOPIC_EXCEPTION : ERR_NOMEM;
        }
    }
    return 0;
}

/* Validates one topic and builds its spec; returns 0 or an error with *why set. */
static int check_topic(struct admin *a, struct arena *ar, struct CreateTopicsRequest *rq,
                       int32_t idx, struct topic_spec *spec, const char **why)
{
    struct CreatableTopic *t = &rq->Topics.v[idx];
    static char buf[256];
    int32_t n_live;
    int rc;

    if (!topic_name_valid(t->Name, why))
        return ERR_INVALID_TOPIC_EXCEPTION;
    for (int32_t j = 0; j < idx; j++) {
        if (strcmp(rq->Topics.v[j].Name, t->Name) == 0) {
            *why = "Duplicate topic name in the request";
            return ERR_INVALID_REQUEST;
        }
        /* Each topic is proposed on its own, so the image cannot show an earlier one yet. */
        if (meta_topic_names_collide(rq->Topics.v[j].Name, t->Name)) {
            *why = arena_printf(ar, "Topic '%s' collides with topic %s of the same request",
                                t->Name, rq->Topics.v[j].Name);
            return *why ? ERR_INVALID_TOPIC_EXCEPTION : ERR_NOMEM;
        }
    }
    if (meta_topic_by_name(a->meta, t->Name)) {
        snprintf(buf, sizeof buf, "Topic '%s' already exists.", t->Name);
        *why = buf;
        return ERR_TOPIC_ALREADY_EXISTS;
    }
    rc = topic_name_creatable(a, ar, t->Name, why);
    if (rc != 0)
        return rc;
    if (live_broker_ids(a, ar, &n_live) == NULL)
        return ERR_NOMEM;
    spec->name = t->Name;
    if (t->Assignments.n > 0) {
        if (t->NumPartitions != -1 || t->ReplicationFactor != -1) {
            *why = "Both numPartitions or replicationFactor and replicasAssignments were set.";
            return ERR_INVALID_REQUEST;
        }
        int32_t n = t->Assignments.n;
        if (n > TOPIC_PARTITIONS_MAX) {
            snprintf(buf, sizeof buf, "Number of partitions %d is more than a topic may have (%d).",
                     n, TOPIC_PARTITIONS_MAX);
            *why = buf;
            return ERR_INVALID_PARTITIONS;
        }
        int32_t **reps = arena_alloc(ar, (size_t)n * sizeof *reps);
        int32_t *lens = arena_alloc(ar, (size_t)n * sizeof *lens);
        if (reps == NULL || lens == NULL)
            return ERR_NOMEM;
        for (int32_t i = 0; i < n; i++)
            lens[i] = -1;
        for (int32_t i = 0; i < n; i++) {
            struct CreatableReplicaAssignment *as = &t->Assignments.v[i];
            int32_t p = as->PartitionIndex;
            if (p < 0 || p >= n || lens[p] >= 0) {
                *why = "Partitions must be numbered consecutively from 0.";
                return ERR_INVALID_REPLICA_ASSIGNMENT;
            }
            /* The controller's check (Kafka's validateManualPartitionAssignment): the first
             * list given sets the replication factor of the others. */
            rc = ctl_check_assignment(meta_get_image(a->meta), as->BrokerIds.v, as->BrokerIds.n,
                                      i == 0 ? -1 : t->Assignments.v[0].BrokerIds.n, buf,
                                      sizeof buf);
            if (rc != 0) {
                *why = buf;
                return rc;
            }
            reps[p] = as->BrokerIds.v;
            lens[p] = as->BrokerIds.n;
        }
        spec->partitions = n;
        spec->replication_factor = lens[0];
        spec->replicas = (const int32_t *const *)reps;
        spec->n_replicas = lens;
    } else {
        spec->partitions = t->NumPartitions == -1
                               ? (int32_t)admin_config_int(a, "num.partitions", 1)
                               : t->NumPartitions;
        spec->replication_factor =
            t->ReplicationFactor == -1
                ? (int32_t)admin_config_int(a, "default.replication.factor", 1)
                : t->ReplicationFactor;
        if (spec->partitions < 1) {
            *why = "Number of partitions must be larger than 0.";
            return ERR_INVALID_PARTITIONS;
        }
        if (spec->partitions > TOPIC_PARTITIONS_MAX) {
            snprintf(buf, sizeof buf, "Number of partitions %d is more than a topic may have (%d).",
                     spec->partitions, TOPIC_PARTITIONS_MAX);
            *why = buf;
            return ERR_INVALID_PARTITIONS;
        }
        if (spec->replication_factor < 1) {
            *why = "Replication factor must be larger than 0.";
            return ERR_INVALID_REPLICATION_FACTOR;
        }
        if (spec->replication_factor > n_live) {
            snprintf(buf, sizeof buf, "Replication factor: %d larger than available brokers: %d.",
                     spec->replication_factor, n_live);
            *why = buf;
            return ERR_INVALID_REPLICATION_FACTOR;
        }
    }
    if (t->Configs.n > 0) {
        const char **keys = arena_alloc(ar, (size_t)t->Configs.n * sizeof *keys);
        const char **vals = arena_alloc(ar, (size_t)t->Configs.n * sizeof *vals);
        if (keys == NULL || vals == NULL)
            return ERR_NOMEM;
        for (int32_t i = 0; i < t->Configs.n; i++) {
            struct CreatableTopicConfig *cfg = &t->Configs.v[i];
            const struct config_def *d = config_find_topic(cfg->Name ? cfg->Name : "");
            if (d == NULL) {
                snprintf(buf, sizeof buf, "Unknown topic config name: %s", cfg->Name);
                *why = buf;
                return ERR_INVALID_CONFIG;
            }
            if (config_validate(d, cfg->Value, buf, sizeof buf) != 0) {
                *why = buf;
                return ERR_INVALID_CONFIG;
            }
            admin_warn_deprecated(d, t->Name);
            keys[i] = cfg->Name;
            vals[i] = cfg->Value;
        }
        spec->n_configs = t->Configs.n;
        spec->config_keys = keys;
        spec->config_values = vals;
    }
    return 0;
}

void admin_create_topics(struct admin *a, struct net_request *req)
{
    struct CreateTopicsRequest *rq = req->body;
    struct arena *ar = req->arena;
    struct create_call *c = arena_alloc(ar, sizeof *c);
    struct CreateTopicsResponse *rs = arena_alloc(ar, sizeof *rs);

    if (c == NULL || rs == NULL)
        goto err_nomem;
    c->a = a;
    c->req = req;
    c->rs = rs;
    c->pending = 1;
    admin_mutation_begin(a, req, 6, &c->quota);
    rs->Topics.n = rq->Topics.n > 0 ? rq->Topics.n : 0;
    rs->Topics.v = arena_alloc(ar, ((size_t)rs->Topics.n + 1) * sizeof *rs->Topics.v);
    if (rs->Topics.v == NULL)
        goto err_nomem;

    for (int32_t i = 0; i < rs->Topics.n; i++) {
        struct CreatableTopicResult *r = &rs->Topics.v[i];
        struct topic_spec spec = {0};
        const char *why = NULL;
        struct meta_record *recs;
        size_t n;
        int rc;

        r->Name = rq->Topics.v[i].Name;
        /* CREATE on the cluster, or on the topic itself (Kafka's rule). */
        if (!authz_allowed_quiet(req, PROTO_ACL_OP_CREATE, PROTO_RESOURCE_CLUSTER, AUTHZ_CLUSTER) &&
            !authz_allowed(req, PROTO_ACL_OP_CREATE, PROTO_RESOURCE_TOPIC,
                           r->Name ? r->Name : "")) {
            set_error(ar, r, ERR_TOPIC_AUTHORIZATION_FAILED, "Authorization failed.");
            continue;
        }
        if (!meta_is_controller(a->meta)) {
            set_error(ar, r, ERR_NOT_CONTROLLER, "This node is not the active controller.");
            continue;
        }
        rc = check_topic(a, ar, rq, i, &spec, &why);
        if (rc == 0)
            rc = topic_records(a, &spec, ar, &recs, &n);
        if (rc != 0) {
            set_error(ar, r, rc, why ? why : err_name(rc));
            continue;
        }
        if (rq->validateOnly) {
            r->NumPartitions = spec.partitions;
            r->ReplicationFactor = (int16_t)spec.replication_factor;
            r->Configs.n = -1;
            continue;
        }
        /* Only what is created counts (Kafka records no validate-only topic). */
        if (admin_mutation_take(a, &c->quota, spec.partitions) != 0) {
            set_error(ar, r, ERR_THROTTLING_QUOTA_EXCEEDED,
                      "The throttling quota has been exceeded.");
            continue;
        }
        struct create_one *one = arena_alloc(ar, sizeof *one);
        if (one == NULL) {
            /* Not goto err_nomem: earlier proposals may be pending and hold this request. */
            set_error(ar, r, ERR_NOMEM, NULL);
            continue;
        }
        one->call = c;
        one->result = r;
        rc = meta_propose(a->meta, recs, n, on_applied, one);
        if (rc != 0)
            set_error(ar, r, rc, err_name(rc));
        else
            c->pending++;
    }
    if (--c->pending == 0)
        respond(c);
    return;

err_nomem:
    slog_error("admin", "out of memory in CreateTopics from %s; closing", req->peer);
    net_close_connection(req);
}
