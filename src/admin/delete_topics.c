/* SPDX-License-Identifier: Apache-2.0 */
/* DeleteTopics: by name (v1-v5) or by name or id (v6); one REMOVE_TOPIC proposal each. */
#include <string.h>

#include "authz/authz.h"
#include "admin_int.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/slog.h"
#include "meta/meta.h"
#include "net/net.h"

struct delete_call {
    struct net_request *req;
    struct DeleteTopicsResponse *rs;
    int pending;
    struct admin_mutation quota; /* controller_mutation_rate, strict from v5 (KIP-599) */
};

static void respond(struct delete_call *c)
{
    c->rs->ThrottleTimeMs = admin_mutation_end(c->req, &c->quota);
    net_respond(c->req, c->rs);
}

struct delete_one {
    struct delete_call *call;
    struct DeletableTopicResult *result;
};

static void on_applied(void *arg, int err)
{
    struct delete_one *one = arg;
    one->result->ErrorCode = (int16_t)err_wire(err);
    if (err == 0)
        slog_info("admin", "deleted topic %s", one->result->Name);
    if (--one->call->pending == 0)
        respond(one->call);
}

static bool uuid_zero(const struct proto_uuid *u)
{
    for (int i = 0; i < 16; i++)
        if (u->b[i])
            return false;
    return true;
}

void admin_delete_topics(struct admin *a, struct net_request *req)
{
    struct DeleteTopicsRequest *rq = req->body;
    struct arena *ar = req->arena;
    struct delete_call *c = arena_alloc(ar, sizeof *c);
    struct DeleteTopicsResponse *rs = arena_alloc(ar, sizeof *rs);
    /* v6 names topics in Topics (name or id); earlier versions in TopicNames. */
    bool v6 = req->hdr.RequestApiVersion >= 6;
    int32_t n = v6 ? rq->Topics.n : rq->TopicNames.n;

    if (c == NULL || rs == NULL)
        goto err_nomem;
    if (n < 0)
        n = 0;
    c->req = req;
    c->rs = rs;
    c->pending = 1;
    admin_mutation_begin(a, req, 5, &c->quota);
    rs->Responses.n = n;
    rs->Responses.v = arena_alloc(ar, ((size_t)n + 1) * sizeof *rs->Responses.v);
    if (rs->Responses.v == NULL)
        goto err_nomem;
    bool enabled = admin_config_bool(a, "delete.topic.enable", true);

    for (int32_t i = 0; i < n; i++) {
        struct DeletableTopicResult *r = &rs->Responses.v[i];
        const struct meta_topic *t;
        if (v6) {
            r->Name = rq->Topics.v[i].Name;
            r->TopicId = rq->Topics.v[i].TopicId;
            t = r->Name ? meta_topic_by_name(a->meta, r->Name)
                        : (uuid_zero(&r->TopicId) ? NULL : meta_topic_by_id(a->meta, r->TopicId.b));
        } else {
            r->Name = rq->TopicNames.v[i];
            t = r->Name ? meta_topic_by_name(a->meta, r->Name) : NULL;
        }
        if (!enabled) {
            r->ErrorCode = ERR_TOPIC_DELETION_DISABLED;
            continue;
        }
        /* DELETE on the topic; one named by an id the principal may not see is answered as
         * Kafka does, TOPIC_AUTHORIZATION_FAILED, whether it exists or not. */
        if (authz_on(req) && (t != NULL || r->Name != NULL) &&
            !authz_allowed(req, PROTO_ACL_OP_DELETE, PROTO_RESOURCE_TOPIC, t ? t->name : r->Name)) {
            r->ErrorCode = ERR_TOPIC_AUTHORIZATION_FAILED;
            continue;
        }
        if (!meta_is_controller(a->meta)) {
            r->ErrorCode = ERR_NOT_CONTROLLER;
            continue;
        }
        if (t == NULL) {
            r->ErrorCode =
                (v6 && r->Name == NULL) ? ERR_UNKNOWN_TOPIC_ID : ERR_UNKNOWN_TOPIC_OR_PARTITION;
            continue;
        }
        r->Name = t->name ? arena_strndup(ar, t->name, strlen(t->name)) : NULL;
        memcpy(r->TopicId.b, t->id, 16);
        if (admin_mutation_take(a, &c->quota, t->n_partitions) != 0) {
            /* Strict only, so v5+: the version has the message. */
            r->ErrorCode = ERR_THROTTLING_QUOTA_EXCEEDED;
            r->ErrorMessage = (char *)"The throttling quota has been exceeded.";
            continue;
        }
        struct meta_record rec = {.type = META_REC_REMOVE_TOPIC};
        memcpy(rec.u.remove_topic.topic_id, t->id, 16);
        struct delete_one *one = arena_alloc(ar, sizeof *one);
        int rc = one ? 0 : ERR_NOMEM;
        if (rc == 0) {
            one->call = c;
            one->result = r;
            rc = meta_propose(a->meta, &rec, 1, on_applied, one);
        }
        if (rc != 0)
            r->ErrorCode = (int16_t)err_wire(rc);
        else
            c->pending++;
    }
    if (--c->pending == 0)
        respond(c);
    return;

err_nomem:
    slog_error("admin", "out of memory in DeleteTopics from %s; closing", req->peer);
    net_close_connection(req);
}
