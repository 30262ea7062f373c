/* SPDX-License-Identifier: Apache-2.0 */
/* Metadata: brokers, cluster id, controller and topics from the image; topics a client asks
 * for that do not exist are created first when auto-creation is allowed — on the active
 * controller proposed here (the answer waits for them), elsewhere asked of the controller
 * with a CreateTopics (forward.c, this broker's num.partitions and
 * default.replication.factor, as Kafka's AutoTopicCreationManager sends) and answered
 * LEADER_NOT_AVAILABLE at once: the client asks again and finds the topic once created. */
#include <string.h>

#include "authz/authz.h"
#include "admin_int.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/slog.h"
#include "meta/meta.h"
#include "net/net.h"

/* An auto-creation in progress: the answer waits until every proposal has applied. */
struct metadata_call {
    struct admin *a;
    struct net_request *req;
    int pending;
    int32_t *create_err; /* per requested topic: result of its creation, or NOT_ATTEMPTED */
};

#define NOT_ATTEMPTED INT32_MIN

static bool uuid_zero(const uint8_t id[16])
{
    for (int i = 0; i < 16; i++)
        if (id[i])
            return false;
    return true;
}

/* `listener`: the client's (net_session); a leader without it is no leader for this client. */
static int fill_topic(struct admin *a, struct arena *ar, const char *listener,
                      const struct meta_topic *t, int32_t ops, struct MetadataResponseTopic *out)
{
    out->ErrorCode = 0;
    out->Name = t->name;
    memcpy(out->TopicId.b, t->id, 16);
    out->IsInternal = topic_is_internal(t->name);
    out->TopicAuthorizedOperations = ops;
    out->Partitions.n = t->n_partitions;
    out->Partitions.v = arena_alloc(ar, ((size_t)t->n_partitions + 1) * sizeof *out->Partitions.v);
    if (out->Partitions.v == NULL)
        return ERR_NOMEM;
    for (int32_t i = 0; i < t->n_partitions; i++) {
        const struct meta_partition *p = &t->partitions[i];
        struct MetadataResponsePartition *o = &out->Partitions.v[i];
        o->PartitionIndex = p->partition;
        o->LeaderId = p->leader;
        o->LeaderEpoch = p->leader_epoch;
        o->ErrorCode = p->leader < 0 ? ERR_LEADER_NOT_AVAILABLE : 0;
        /* A leader the client cannot reach on its listener (absent from the brokers listed):
         * LEADER_NOT_AVAILABLE and no leader, as Kafka answers. */
        const struct meta_broker *lb =
            p->leader >= 0 ? meta_broker_by_id(a->meta, p->leader) : NULL;
        if (lb && meta_broker_listener(lb, listener) == NULL) {
            o->LeaderId = -1;
            o->ErrorCode = ERR_LEADER_NOT_AVAILABLE;
        }
        o->ReplicaNodes.v = (int32_t *)p->replicas;
        o->ReplicaNodes.n = p->n_replicas;
        o->IsrNodes.v = (int32_t *)p->isr;
        o->IsrNodes.n = p->n_isr;
        o->OfflineReplicas.v = NULL;
        o->OfflineReplicas.n = 0;
        /* A replica whose broker is fenced or unknown is offline. */
        for (int32_t r = 0; r < p->n_replicas; r++) {
            const struct meta_broker *b = meta_broker_by_id(a->meta, p->replicas[r]);
            if (b == NULL || b->fenced) {
                if (o->OfflineReplicas.v == NULL) {
                    o->OfflineReplicas.v = arena_alloc(ar, (size_t)p->n_replicas * sizeof(int32_t));
                    if (o->OfflineReplicas.v == NULL)
                        return ERR_NOMEM;
                }
                o->OfflineReplicas.v[o->OfflineReplicas.n++] = p->replicas[r];
            }
        }
    }
    return 0;
}

static void respond(struct metadata_call *c)
{
    struct admin *a = c->a;
    struct net_request *req = c->req;
    struct MetadataRequest *rq = req->body;
    struct arena *ar = req->arena;
    struct MetadataResponse *rs = arena_alloc(ar, sizeof *rs);
    size_t nb, nt;
    const struct meta_broker *brokers;
    bool all = rq->Topics.n < 0 || (req->hdr.RequestApiVersion == 0 && rq->Topics.n == 0);
    /* The operation sets are answered only when asked for (v8+; the cluster's v8-10), else
     * INT32_MIN, as Kafka does. */
    bool topic_ops = rq->IncludeTopicAuthorizedOperations;

    if (rs == NULL)
        goto err_nomem;
    brokers = meta_brokers(a->meta, &nb);
    rs->Brokers.v = arena_alloc(ar, (nb + 1) * sizeof *rs->Brokers.v);
    if (rs->Brokers.v == NULL)
        goto err_nomem;
    for (size_t i = 0; i < nb; i++) {
        const struct meta_listener *l = meta_broker_listener(&brokers[i], req->session->listener);
        if (brokers[i].fenced || l == NULL)
            continue;
        struct MetadataResponseBroker *b = &rs->Brokers.v[rs->Brokers.n++];
        b->NodeId = brokers[i].id;
        b->Host = l->host;
        b->Port = l->port;
        b->Rack = brokers[i].rack;
    }
    rs->ClusterId = (char *)meta_cluster_id(a->meta);
    rs->ControllerId = meta_controller_id(a->meta);
    rs->ClusterAuthorizedOperations = rq->IncludeClusterAuthorizedOperations
                                          ? authz_ops(req, PROTO_RESOURCE_CLUSTER, AUTHZ_CLUSTER)
                                          : INT32_MIN;

    if (all) {
        const struct meta_topic *const *topics = meta_topics(a->meta, &nt);
        rs->Topics.v = arena_alloc(ar, (nt + 1) * sizeof *rs->Topics.v);
        if (rs->Topics.v == NULL)
            goto err_nomem;
        /* Only the topics the principal may DESCRIBE (Kafka filters them silently). */
        for (size_t i = 0; i < nt; i++)
            if (authz_allowed_quiet(req, PROTO_ACL_OP_DESCRIBE, PROTO_RESOURCE_TOPIC,
                                    topics[i]->name) &&
                fill_topic(a, ar, req->session->listener, topics[i],
                           topic_ops ? authz_ops(req, PROTO_RESOURCE_TOPIC, topics[i]->name)
                                     : INT32_MIN,
                           &rs->Topics.v[rs->Topics.n++]) != 0)
                goto err_nomem;
    } else {
        rs->Topics.v = arena_alloc(ar, ((size_t)rq->Topics.n + 1) * sizeof *rs->Topics.v);
        if (rs->Topics.v == NULL)
            goto err_nomem;
        for (int32_t i = 0; i < rq->Topics.n; i++) {
            struct MetadataRequestTopic *want = &rq->Topics.v[i];
            struct MetadataResponseTopic *o = &rs->Topics.v[rs->Topics.n++];
            const struct meta_topic *t;
            o->TopicAuthorizedOperations = INT32_MIN;
            if (want->Name) {
                t = meta_topic_by_name(a->meta, want->Name);
            } else {
                t = uuid_zero(want->TopicId.b) ? NULL : meta_topic_by_id(a->meta, want->TopicId.b);
                o->TopicId = want->TopicId;
                if (t == NULL) {
                    o->ErrorCode = ERR_UNKNOWN_TOPIC_ID;
                    continue;
                }
            }
            /* A topic named (or found by id) without DESCRIBE on it: the error, nothing else
             * (not even whether it exists). */
            const char *name = t ? t->name : want->Name;
            if (name != NULL &&
                !authz_allowed(req, PROTO_ACL_OP_DESCRIBE, PROTO_RESOURCE_TOPIC, name)) {
                o->Name = want->Name;
                o->ErrorCode = ERR_TOPIC_AUTHORIZATION_FAILED;
                continue;
            }
            if (t) {
                if (fill_topic(a, ar, req->session->listener, t,
                               topic_ops ? authz_ops(req, PROTO_RESOURCE_TOPIC, t->name)
                                         : INT32_MIN,
                               o) != 0)
                    goto err_nomem;
                continue;
            }
            o->Name = want->Name;
            const char *why;
            if (!topic_name_valid(want->Name, &why))
                o->ErrorCode = ERR_INVALID_TOPIC_EXCEPTION;
            else if (c->create_err && c->create_err[i] == ERR_INVALID_TOPIC_EXCEPTION)
                o->ErrorCode = ERR_INVALID_TOPIC_EXCEPTION; /* collides with another name */
            else if (c->create_err == NULL || c->create_err[i] == NOT_ATTEMPTED)
                o->ErrorCode = ERR_UNKNOWN_TOPIC_OR_PARTITION;
            else if (c->create_err[i] == 0 || c->create_err[i] == ERR_TOPIC_ALREADY_EXISTS)
                o->ErrorCode = ERR_LEADER_NOT_AVAILABLE; /* being created: the client retries */
            else
                o->ErrorCode = (int16_t)err_wire(c->create_err[i]);
        }
    }
    net_respond(req, rs);
    return;

err_nomem:
    slog_error("admin", "out of memory answering Metadata for %s; closing", req->peer);
    net_close_connection(req);
}

struct create_one {
    struct metadata_call *call;
    int32_t index;
};

static void on_created(void *arg, int err)
{
    struct create_one *one = arg;
    struct metadata_call *c = one->call;
    c->create_err[one->index] = err;
    if (err == 0)
        slog_info("admin", "auto-created topic %s",
                  ((struct MetadataRequest *)c->req->body)->Topics.v[one->index].Name);
    if (--c->pending == 0)
        respond(c);
}

void admin_metadata(struct admin *a, struct net_request *req)
{
    struct MetadataRequest *rq = req->body;
    struct arena *ar = req->arena;
    struct metadata_call *c = arena_alloc(ar, sizeof *c);
    /* Before v4 a Metadata request always allowed auto-creation. */
    bool allow = req->hdr.RequestApiVersion < 4 || rq->AllowAutoTopicCreation;

    if (c == NULL) {
        net_close_connection(req);
        return;
    }
    c->a = a;
    c->req = req;
    c->pending = 1; /* held while proposals are being made */
    bool controller = meta_is_controller(a->meta);
    if (allow && rq->Topics.n > 0 && admin_config_bool(a, "auto.create.topics.enable", true)) {
        for (int32_t i = 0; i < rq->Topics.n; i++) {
            const char *name = rq->Topics.v[i].Name, *why;
            int rc;
            /* The broker's own topics are never auto-created with the ordinary defaults:
             * __cluster_metadata is the metadata log's directory, and the coordinators'
             * topics need their own partition counts. They answer UNKNOWN_TOPIC_OR_PARTITION. */
            if (name == NULL || meta_topic_by_name(a->meta, name) ||
                !topic_name_valid(name, &why) || strcmp(name, TOPIC_CLUSTER_METADATA) == 0 ||
                topic_is_internal(name))
                continue;
            if (c->create_err == NULL) {
                c->create_err = arena_alloc(ar, (size_t)rq->Topics.n * sizeof *c->create_err);
                if (c->create_err == NULL)
                    break;
                for (int32_t j = 0; j < rq->Topics.n; j++)
                    c->create_err[j] = NOT_ATTEMPTED;
            }
            rc = topic_name_creatable(a, ar, name, &why);
            /* Auto-creation needs CREATE on the cluster or on the topic (and DESCRIBE, without
             * which the answer is TOPIC_AUTHORIZATION_FAILED whatever happens). */
            if (rc == 0 &&
                (!authz_allowed_quiet(req, PROTO_ACL_OP_DESCRIBE, PROTO_RESOURCE_TOPIC, name) ||
                 (!authz_allowed_quiet(req, PROTO_ACL_OP_CREATE, PROTO_RESOURCE_CLUSTER,
                                       AUTHZ_CLUSTER) &&
                  !authz_allowed(req, PROTO_ACL_OP_CREATE, PROTO_RESOURCE_TOPIC, name)))) {
                c->create_err[i] = ERR_TOPIC_AUTHORIZATION_FAILED;
                continue;
            }
            /* Each creation is proposed on its own, so the image cannot show earlier ones. */
            for (int32_t j = 0; j < i && rc == 0; j++) {
                const char *other = rq->Topics.v[j].Name;
                if (other && strcmp(other, name) != 0 && meta_topic_names_collide(other, name)) {
                    why = "it collides with another topic of the same request";
                    rc = ERR_INVALID_TOPIC_EXCEPTION;
                }
            }
            if (rc != 0) {
                slog_line_limited(&a->refused_auto_create, 10000, SLOG_INFO, "admin",
                                  "not auto-creating topic %s: %s", name, why ? why : err_name(rc));
                c->create_err[i] = rc;
                continue;
            }
            struct topic_spec spec = {
                .name = name,
                .partitions = (int32_t)admin_config_int(a, "num.partitions", 1),
                .replication_factor = (int32_t)admin_config_int(a, "default.replication.factor", 1),
            };
            if (!controller) {
                /* Asked of the controller (0: LEADER_NOT_AVAILABLE in the answer); when it
                 * cannot be asked now the topic is simply not there yet. */
                rc = admin_forward_create(a, name, spec.partitions,
                                          (int16_t)spec.replication_factor, 0, NULL, NULL);
                c->create_err[i] = rc == 0 ? 0 : NOT_ATTEMPTED;
                continue;
            }
            struct meta_record *recs;
            size_t n;
            struct create_one *one = arena_alloc(ar, sizeof *one);
            rc = one ? topic_records(a, &spec, ar, &recs, &n) : ERR_NOMEM;
            if (rc == 0) {
                one->call = c;
                one->index = i;
                rc = meta_propose(a->meta, recs, n, on_created, one);
            }
            if (rc == 0)
                c->pending++;
            else
                c->create_err[i] = rc;
        }
    }
    if (--c->pending == 0)
        respond(c);
}
