/* SPDX-License-Identifier: Apache-2.0 */
/* CreatePartitions: grows topics; new partitions follow the controller's placement
 * (ctl_place_replicas, continuing the topic's rotation) or the explicit assignments, and are
 * proposed as one batch per topic. */
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

struct grow_call {
    struct net_request *req;
    struct CreatePartitionsResponse *rs;
    int pending;
    struct admin_mutation quota; /* controller_mutation_rate, strict from v3 (KIP-599) */
};

static void respond(struct grow_call *c)
{
    c->rs->ThrottleTimeMs = admin_mutation_end(c->req, &c->quota);
    net_respond(c->req, c->rs);
}

struct grow_one {
    struct grow_call *call;
    struct CreatePartitionsTopicResult *result;
};

static void fail(struct arena *ar, struct CreatePartitionsTopicResult *r, int err, const char *why)
{
    r->ErrorCode = (int16_t)err_wire(err);
    r->ErrorMessage = why ? arena_strndup(ar, why, strlen(why)) : NULL;
}

static void on_applied(void *arg, int err)
{
    struct grow_one *one = arg;
    if (err != 0)
        fail(one->call->req->arena, one->result, err, err_name(err));
    else
        slog_info("admin", "grew topic %s", one->result->Name);
    if (--one->call->pending == 0)
        respond(one->call);
}

/* Builds the PARTITION records for partitions [t->n_partitions, count). Explicit assignments
 * pass the controller's check (ctl_check_assignment, as Kafka's createPartitions), with the
 * replication factor of the topic's first partition (its target's, during a reassignment). */
static int grow_records(struct admin *a, struct arena *ar, const struct meta_topic *t,
                        const struct CreatePartitionsTopic *want, struct meta_record **out,
                        const char **why)
{
    int32_t add = want->Count - t->n_partitions;
    int32_t rf =
        t->n_partitions > 0 ? t->partitions[0].n_replicas - t->partitions[0].n_removing : 1;
    static char buf[256];
    struct meta_record *recs = arena_alloc(ar, (size_t)add * sizeof *recs);
    int32_t *placed = NULL;

    if (recs == NULL)
        return ERR_NOMEM;
    if (want->Assignments.n >= 0 && want->Assignments.n != add) {
        *why = "Assignments must list exactly the new partitions.";
        return ERR_INVALID_REPLICA_ASSIGNMENT;
    }
    if (want->Assignments.n < 0) {
        placed = arena_alloc(ar, (size_t)add * (size_t)rf * sizeof *placed);
        if (placed == NULL)
            return ERR_NOMEM;
        int rc = ctl_place_replicas(meta_get_image(a->meta), add, rf, t->n_partitions,
                                    topic_placement_seed(t->name), placed);
        if (rc == ERR_INVALID_REPLICATION_FACTOR)
            *why = "Not enough live brokers for the topic's replication factor.";
        if (rc != 0)
            return rc;
    }
    for (int32_t i = 0; i < add; i++) {
        struct meta_record *rec = &recs[i];
        int32_t *replicas;
        int32_t n;
        if (want->Assignments.n >= 0) {
            replicas = want->Assignments.v[i].BrokerIds.v;
            n = want->Assignments.v[i].BrokerIds.n;
            int rc =
                ctl_check_assignment(meta_get_image(a->meta), replicas, n, rf, buf, sizeof buf);
            if (rc != 0) {
                *why = buf;
                return rc;
            }
        } else {
            n = rf;
            replicas = &placed[(size_t)i * (size_t)rf];
        }
        rec->type = META_REC_PARTITION;
        memcpy(rec->u.partition.topic_id, t->id, 16);
        rec->u.partition.partition = t->n_partitions + i;
        rec->u.partition.leader = replicas[0];
        rec->u.partition.n_replicas = n;
        rec->u.partition.replicas = replicas;
        rec->u.partition.n_isr = n;
        rec->u.partition.isr = replicas;
    }
    *out = recs;
    return 0;
}

void admin_create_partitions(struct admin *a, struct net_request *req)
{
    struct CreatePartitionsRequest *rq = req->body;
    struct arena *ar = req->arena;
    struct grow_call *c = arena_alloc(ar, sizeof *c);
    struct CreatePartitionsResponse *rs = arena_alloc(ar, sizeof *rs);
    int32_t n = rq->Topics.n > 0 ? rq->Topics.n : 0;

    if (c == NULL || rs == NULL)
        goto err_nomem;
    c->req = req;
    c->rs = rs;
    c->pending = 1;
    admin_mutation_begin(a, req, 3, &c->quota);
    rs->Results.n = n;
    rs->Results.v = arena_alloc(ar, ((size_t)n + 1) * sizeof *rs->Results.v);
    if (rs->Results.v == NULL)
        goto err_nomem;
    for (int32_t i = 0; i < n; i++) {
        struct CreatePartitionsTopic *want = &rq->Topics.v[i];
        struct CreatePartitionsTopicResult *r = &rs->Results.v[i];
        const struct meta_topic *t = meta_topic_by_name(a->meta, want->Name ? want->Name : "");
        const char *why = NULL;
        struct meta_record *recs;
        char buf[160];
        int rc;

        r->Name = want->Name;
        /* ALTER on the topic. */
        if (!authz_allowed(req, PROTO_ACL_OP_ALTER, PROTO_RESOURCE_TOPIC,
                           want->Name ? want->Name : "")) {
            fail(ar, r, ERR_TOPIC_AUTHORIZATION_FAILED, NULL);
            continue;
        }
        if (!meta_is_controller(a->meta)) {
            fail(ar, r, ERR_NOT_CONTROLLER, NULL);
            continue;
        }
        if (t == NULL) {
            fail(ar, r, ERR_UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic.");
            continue;
        }
        if (want->Count <= t->n_partitions) {
            snprintf(buf, sizeof buf,
                     "Topic currently has %d partitions, which is higher than "
                     "or equal to the requested %d.",
                     t->n_partitions, want->Count);
            fail(ar, r, ERR_INVALID_PARTITIONS, buf);
            continue;
        }
        if (want->Count > TOPIC_PARTITIONS_MAX) {
            snprintf(buf, sizeof buf, "Number of partitions %d is more than a topic may have (%d).",
                     want->Count, TOPIC_PARTITIONS_MAX);
            fail(ar, r, ERR_INVALID_PARTITIONS, buf);
            continue;
        }
        rc = grow_records(a, ar, t, want, &recs, &why);
        if (rc != 0) {
            fail(ar, r, rc, why);
            continue;
        }
        if (rq->ValidateOnly)
            continue;
        if (admin_mutation_take(a, &c->quota, want->Count - t->n_partitions) != 0) {
            fail(ar, r, ERR_THROTTLING_QUOTA_EXCEEDED, "The throttling quota has been exceeded.");
            continue;
        }
        struct grow_one *one = arena_alloc(ar, sizeof *one);
        rc = one ? 0 : ERR_NOMEM;
        if (rc == 0) {
            one->call = c;
            one->result = r;
            rc = meta_propose(a->meta, recs, (size_t)(want->Count - t->n_partitions), on_applied,
                              one);
        }
        if (rc != 0)
            fail(ar, r, rc, NULL);
        else
            c->pending++;
    }
    if (--c->pending == 0)
        respond(c);
    return;

err_nomem:
    slog_error("admin", "out of memory in CreatePartitions from %s; closing", req->peer);
    net_close_connection(req);
}
