/* SPDX-License-Identifier: Apache-2.0 */
/* forward: what only the active controller may decide, sent there from any other broker, as
 * Kafka's ForwardingManager and AutoTopicCreationManager do: a client's request goes to
 * NET_CLIENT_CONTROLLER through the shared outbound client in a KIP-590 Envelope (envelope.c:
 * its header and body at the client's version, its principal and IP address), and the answer
 * inside the EnvelopeResponse goes back to the client unchanged; its ThrottleTimeMs (the
 * controller mutation quota, held to the client's own principal and client id there) mutes
 * the client's connection here, as KIP-599 throttles a channel. An EnvelopeResponse error of
 * NOT_CONTROLLER is retried as an inner one is; any other (CLUSTER_AUTHORIZATION_FAILED: this
 * broker's principal lacks CLUSTER_ACTION) goes to the client in every item. Every broker of a
 * cluster speaks Envelope (there is no fall-back to the bare request, which would bypass the
 * client's quota).
 *
 * Two kinds of forward share one mechanism (struct fwd):
 * - a client's request (CreateTopics, DeleteTopics, CreatePartitions, AlterConfigs,
 *   IncrementalAlterConfigs, ElectLeaders, AlterPartitionReassignments,
 *   ListPartitionReassignments), answered with the controller's answer;
 * - a broker's own CreateTopics (Metadata auto-creation, a coordinator's internal topic),
 *   sent and forgotten: the caller answered its client already (LEADER_NOT_AVAILABLE,
 *   COORDINATOR_NOT_AVAILABLE) and the topic shows up in the image once created. At most one
 *   per topic is out at a time.
 *
 * Retries: an answer that says NOT_CONTROLLER anywhere (the controller moved, or the node
 * asked took itself for it) closes the connection to the controller, so that the next
 * attempt resolves it again, and the request goes again after a pause (FWD_BACKOFF_MS,
 * doubling to FWD_BACKOFF_MAX_MS); so does a lost connection (NETWORK_EXCEPTION: it may or
 * may not have been processed, and Kafka retries it too). A request waiting for a
 * connection stays queued in the client, which resolves the controller at every attempt.
 * Everything ends by the deadline: the request's own timeout (CreateTopics, DeleteTopics,
 * CreatePartitions, ElectLeaders and both reassignment APIs), at most request.timeout.ms; past
 * it the client gets
 * REQUEST_TIMED_OUT in every item, as Kafka answers a forwarding timeout.
 *
 * Loops: a request that another broker forwarded here (ClientId "tally-broker-<id>", what
 * every broker's own client sends) is never forwarded again — two brokers whose images
 * disagree about the controller could otherwise bounce it between them; it is answered here
 * (NOT_CONTROLLER) and its sender retries. A client that picks that ClientId itself only
 * loses forwarding. The ClientId is no proof of anything, and nothing here relies on it as
 * one: what a broker forwards is what any client could send (see internal_topics.c).
 *
 * Authorization: with an authorizer the client's principal is checked here, item by item,
 * before anything is forwarded (forward_authorized), and again by the controller on the
 * principal in the envelope. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin_int.h"
#include "authz/authz.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/slog.h"
#include "base/tclock.h"
#include "meta/meta.h"
#include "net/net.h"
#include "proto/proto.h"

#define FWD_BACKOFF_MS 100
#define FWD_BACKOFF_MAX_MS 1000
#define FWD_DEFAULT_TIMEOUT_MS 30000
/* The CreateTopics version of a broker's own creations (every Tally serves it). */
#define FWD_CREATE_VERSION 7
/* At most this many own creations out at once (Metadata naming thousands of unknown topics
 * must not pin thousands of arenas): past it a topic is simply not asked for this time. */
#define FWD_OWN_MAX 256
#define FWD_OWN_ARENA (64u << 10)

struct fwd {
    struct fwd *next, *prev; /* the admin's live forwards */
    struct admin *a;
    struct net_request *req; /* the client's; NULL for a broker's own creation */
    int16_t api_key, version;
    void *body;          /* what is sent: an EnvelopeRequest of req, or a CreateTopicsRequest in
                            `arena` */
    struct arena *arena; /* own creations: body and topic */
    const char *topic;   /* own creations: the topic asked for */
    int64_t deadline_ms; /* monotonic */
    int64_t backoff_ms;
    struct tclock_timer timer; /* the deadline, or the next attempt if sooner */
    bool in_flight;            /* with the client: its callback is still to come */
    bool finished;             /* answered: freed once not in flight */
};

static int64_t now_ms(const struct admin *a)
{
    return tclock_mono_ms(a->clock);
}

bool admin_api_forwarded(int16_t key)
{
    switch (key) {
    case PROTO_API_CreateTopics:
    case PROTO_API_DeleteTopics:
    case PROTO_API_CreatePartitions:
    case PROTO_API_AlterConfigs:
    case PROTO_API_IncrementalAlterConfigs:
    case PROTO_API_ElectLeaders:
    case PROTO_API_AlterPartitionReassignments:
    case PROTO_API_ListPartitionReassignments:
    case PROTO_API_AlterUserScramCredentials:
    case PROTO_API_AlterClientQuotas:
    case PROTO_API_CreateAcls:
    case PROTO_API_DeleteAcls:
        return true;
    default:
        return false;
    }
}

static bool from_broker(const struct net_request *req)
{
    const char *id = req->hdr.ClientId;
    return id != NULL && strncmp(id, ADMIN_BROKER_CLIENT_ID_PREFIX,
                                 sizeof ADMIN_BROKER_CLIENT_ID_PREFIX - 1) == 0;
}

/* The request's own timeout, if its API has one (0 otherwise). */
static int64_t own_timeout_ms(int16_t key, const void *body)
{
    switch (key) {
    case PROTO_API_CreateTopics:
        return ((const struct CreateTopicsRequest *)body)->timeoutMs;
    case PROTO_API_DeleteTopics:
        return ((const struct DeleteTopicsRequest *)body)->TimeoutMs;
    case PROTO_API_CreatePartitions:
        return ((const struct CreatePartitionsRequest *)body)->TimeoutMs;
    case PROTO_API_ElectLeaders:
        return ((const struct ElectLeadersRequest *)body)->TimeoutMs;
    case PROTO_API_AlterPartitionReassignments:
        return ((const struct AlterPartitionReassignmentsRequest *)body)->TimeoutMs;
    case PROTO_API_ListPartitionReassignments:
        return ((const struct ListPartitionReassignmentsRequest *)body)->TimeoutMs;
    default:
        return 0;
    }
}

/* Whether the controller's answer says it is not the controller (in any item). */
static bool says_not_controller(int16_t key, int16_t version, const void *resp)
{
    switch (key) {
    case PROTO_API_CreateTopics: {
        const struct CreateTopicsResponse *r = resp;
        for (int32_t i = 0; i < r->Topics.n; i++)
            if (r->Topics.v[i].ErrorCode == ERR_NOT_CONTROLLER)
                return true;
        return false;
    }
    case PROTO_API_DeleteTopics: {
        const struct DeleteTopicsResponse *r = resp;
        for (int32_t i = 0; i < r->Responses.n; i++)
            if (r->Responses.v[i].ErrorCode == ERR_NOT_CONTROLLER)
                return true;
        return false;
    }
    case PROTO_API_CreatePartitions: {
        const struct CreatePartitionsResponse *r = resp;
        for (int32_t i = 0; i < r->Results.n; i++)
            if (r->Results.v[i].ErrorCode == ERR_NOT_CONTROLLER)
                return true;
        return false;
    }
    case PROTO_API_AlterConfigs: {
        const struct AlterConfigsResponse *r = resp;
        for (int32_t i = 0; i < r->Responses.n; i++)
            if (r->Responses.v[i].ErrorCode == ERR_NOT_CONTROLLER)
                return true;
        return false;
    }
    case PROTO_API_IncrementalAlterConfigs: {
        const struct IncrementalAlterConfigsResponse *r = resp;
        for (int32_t i = 0; i < r->Responses.n; i++)
            if (r->Responses.v[i].ErrorCode == ERR_NOT_CONTROLLER)
                return true;
        return false;
    }
    case PROTO_API_ElectLeaders: {
        const struct ElectLeadersResponse *r = resp;
        if (version >= 1 && r->ErrorCode == ERR_NOT_CONTROLLER)
            return true;
        for (int32_t i = 0; i < r->ReplicaElectionResults.n; i++) {
            const struct ReplicaElectionResult *t = &r->ReplicaElectionResults.v[i];
            for (int32_t j = 0; j < t->PartitionResult.n; j++)
                if (t->PartitionResult.v[j].ErrorCode == ERR_NOT_CONTROLLER)
                    return true;
        }
        return false;
    }
    case PROTO_API_AlterPartitionReassignments: {
        const struct AlterPartitionReassignmentsResponse *r = resp;
        if (r->ErrorCode == ERR_NOT_CONTROLLER)
            return true;
        for (int32_t i = 0; i < r->Responses.n; i++) {
            const struct ReassignableTopicResponse *t = &r->Responses.v[i];
            for (int32_t j = 0; j < t->Partitions.n; j++)
                if (t->Partitions.v[j].ErrorCode == ERR_NOT_CONTROLLER)
                    return true;
        }
        return false;
    }
    case PROTO_API_ListPartitionReassignments:
        return ((const struct ListPartitionReassignmentsResponse *)resp)->ErrorCode ==
               ERR_NOT_CONTROLLER;
    case PROTO_API_AlterUserScramCredentials: {
        const struct AlterUserScramCredentialsResponse *r = resp;
        for (int32_t i = 0; i < r->Results.n; i++)
            if (r->Results.v[i].ErrorCode == ERR_NOT_CONTROLLER)
                return true;
        return false;
    }
    case PROTO_API_AlterClientQuotas: {
        const struct AlterClientQuotasResponse *r = resp;
        for (int32_t i = 0; i < r->Entries.n; i++)
            if (r->Entries.v[i].ErrorCode == ERR_NOT_CONTROLLER)
                return true;
        return false;
    }
    case PROTO_API_CreateAcls: {
        const struct CreateAclsResponse *r = resp;
        for (int32_t i = 0; i < r->Results.n; i++)
            if (r->Results.v[i].ErrorCode == ERR_NOT_CONTROLLER)
                return true;
        return false;
    }
    case PROTO_API_DeleteAcls: {
        const struct DeleteAclsResponse *r = resp;
        for (int32_t i = 0; i < r->FilterResults.n; i++)
            if (r->FilterResults.v[i].ErrorCode == ERR_NOT_CONTROLLER)
                return true;
        return false;
    }
    default:
        return false;
    }
}

/* The answer a forwarding failure gives: `err` in every item of the request (and at the top,
 * where the API has an error there), as Kafka's getErrorResponse builds it. NULL when out of
 * memory. */
static void *error_answer(struct net_request *req, int16_t err, const char *msg)
{
    struct arena *ar = req->arena;
    char *m = arena_strndup(ar, msg, strlen(msg));

#define ALLOC_ITEMS(arr, count)                                                                    \
    ((arr).n = (count) > 0 ? (count) : 0,                                                          \
     (arr).v = arena_alloc(ar, ((size_t)(arr).n + 1) * sizeof *(arr).v))

    if (m == NULL)
        return NULL;
    switch (req->api->key) {
    case PROTO_API_CreateAcls:
    case PROTO_API_DeleteAcls:
        return admin_acls_error(req, err, msg);
    case PROTO_API_AlterClientQuotas: {
        /* One result per entry, in the request's order. */
        const struct AlterClientQuotasRequest *rq = req->body;
        struct AlterClientQuotasResponse *rs = arena_alloc(ar, sizeof *rs);
        if (rs == NULL || ALLOC_ITEMS(rs->Entries, rq->Entries.n) == NULL)
            return NULL;
        rs->ThrottleTimeMs = 0;
        for (int32_t i = 0; i < rs->Entries.n; i++) {
            rs->Entries.v[i].ErrorCode = err;
            rs->Entries.v[i].ErrorMessage = m;
            rs->Entries.v[i].Entity.v = rq->Entries.v[i].Entity.v;
            rs->Entries.v[i].Entity.n = rq->Entries.v[i].Entity.n;
        }
        return rs;
    }
    case PROTO_API_AlterUserScramCredentials: {
        /* One result per user named, in the request's order. */
        const struct AlterUserScramCredentialsRequest *rq = req->body;
        struct AlterUserScramCredentialsResponse *rs = arena_alloc(ar, sizeof *rs);
        int32_t nd = rq->Deletions.n > 0 ? rq->Deletions.n : 0;
        int32_t nu = rq->Upsertions.n > 0 ? rq->Upsertions.n : 0;
        if (rs == NULL || ALLOC_ITEMS(rs->Results, nd + nu) == NULL)
            return NULL;
        rs->ThrottleTimeMs = 0;
        rs->Results.n = 0;
        for (int32_t i = 0; i < nd + nu; i++) {
            const char *u = i < nd ? rq->Deletions.v[i].Name : rq->Upsertions.v[i - nd].Name;
            bool seen = false;
            for (int32_t j = 0; j < rs->Results.n && !seen; j++)
                seen = strcmp(rs->Results.v[j].User, u ? u : "") == 0;
            if (seen)
                continue;
            struct AlterUserScramCredentialsResult *r = &rs->Results.v[rs->Results.n++];
            r->User = (char *)(u ? u : "");
            r->ErrorCode = err;
            r->ErrorMessage = m;
        }
        return rs;
    }
    case PROTO_API_CreateTopics: {
        const struct CreateTopicsRequest *rq = req->body;
        struct CreateTopicsResponse *rs = arena_alloc(ar, sizeof *rs);
        if (rs == NULL || ALLOC_ITEMS(rs->Topics, rq->Topics.n) == NULL)
            return NULL;
        for (int32_t i = 0; i < rs->Topics.n; i++) {
            struct CreatableTopicResult *t = &rs->Topics.v[i];
            t->Name = rq->Topics.v[i].Name;
            t->ErrorCode = err;
            t->ErrorMessage = m;
            t->NumPartitions = -1;
            t->ReplicationFactor = -1;
            t->Configs.n = -1;
        }
        return rs;
    }
    case PROTO_API_DeleteTopics: {
        const struct DeleteTopicsRequest *rq = req->body;
        struct DeleteTopicsResponse *rs = arena_alloc(ar, sizeof *rs);
        bool v6 = req->hdr.RequestApiVersion >= 6;
        if (rs == NULL || ALLOC_ITEMS(rs->Responses, v6 ? rq->Topics.n : rq->TopicNames.n) == NULL)
            return NULL;
        for (int32_t i = 0; i < rs->Responses.n; i++) {
            struct DeletableTopicResult *t = &rs->Responses.v[i];
            if (v6) {
                t->Name = rq->Topics.v[i].Name;
                t->TopicId = rq->Topics.v[i].TopicId;
            } else {
                t->Name = rq->TopicNames.v[i];
            }
            t->ErrorCode = err;
            t->ErrorMessage = m;
        }
        return rs;
    }
    case PROTO_API_CreatePartitions: {
        const struct CreatePartitionsRequest *rq = req->body;
        struct CreatePartitionsResponse *rs = arena_alloc(ar, sizeof *rs);
        if (rs == NULL || ALLOC_ITEMS(rs->Results, rq->Topics.n) == NULL)
            return NULL;
        for (int32_t i = 0; i < rs->Results.n; i++) {
            rs->Results.v[i].Name = rq->Topics.v[i].Name;
            rs->Results.v[i].ErrorCode = err;
            rs->Results.v[i].ErrorMessage = m;
        }
        return rs;
    }
    case PROTO_API_AlterConfigs: {
        const struct AlterConfigsRequest *rq = req->body;
        struct AlterConfigsResponse *rs = arena_alloc(ar, sizeof *rs);
        if (rs == NULL || ALLOC_ITEMS(rs->Responses, rq->Resources.n) == NULL)
            return NULL;
        for (int32_t i = 0; i < rs->Responses.n; i++) {
            rs->Responses.v[i].ResourceType = rq->Resources.v[i].ResourceType;
            rs->Responses.v[i].ResourceName = rq->Resources.v[i].ResourceName;
            rs->Responses.v[i].ErrorCode = err;
            rs->Responses.v[i].ErrorMessage = m;
        }
        return rs;
    }
    case PROTO_API_IncrementalAlterConfigs: {
        const struct IncrementalAlterConfigsRequest *rq = req->body;
        struct IncrementalAlterConfigsResponse *rs = arena_alloc(ar, sizeof *rs);
        if (rs == NULL || ALLOC_ITEMS(rs->Responses, rq->Resources.n) == NULL)
            return NULL;
        for (int32_t i = 0; i < rs->Responses.n; i++) {
            rs->Responses.v[i].ResourceType = rq->Resources.v[i].ResourceType;
            rs->Responses.v[i].ResourceName = rq->Resources.v[i].ResourceName;
            rs->Responses.v[i].ErrorCode = err;
            rs->Responses.v[i].ErrorMessage = m;
        }
        return rs;
    }
    case PROTO_API_ElectLeaders: {
        const struct ElectLeadersRequest *rq = req->body;
        struct ElectLeadersResponse *rs = arena_alloc(ar, sizeof *rs);
        if (rs == NULL || ALLOC_ITEMS(rs->ReplicaElectionResults, rq->TopicPartitions.n) == NULL)
            return NULL;
        rs->ErrorCode = err;
        for (int32_t i = 0; i < rs->ReplicaElectionResults.n; i++) {
            const struct ElectLeadersTopicPartitions *tp = &rq->TopicPartitions.v[i];
            struct ReplicaElectionResult *t = &rs->ReplicaElectionResults.v[i];
            t->Topic = tp->Topic;
            if (ALLOC_ITEMS(t->PartitionResult, tp->Partitions.n) == NULL)
                return NULL;
            for (int32_t j = 0; j < t->PartitionResult.n; j++) {
                t->PartitionResult.v[j].PartitionId = tp->Partitions.v[j];
                t->PartitionResult.v[j].ErrorCode = err;
                t->PartitionResult.v[j].ErrorMessage = m;
            }
        }
        return rs;
    }
    case PROTO_API_AlterPartitionReassignments: {
        const struct AlterPartitionReassignmentsRequest *rq = req->body;
        struct AlterPartitionReassignmentsResponse *rs = arena_alloc(ar, sizeof *rs);
        if (rs == NULL || ALLOC_ITEMS(rs->Responses, rq->Topics.n) == NULL)
            return NULL;
        rs->ErrorCode = err;
        rs->ErrorMessage = m;
        for (int32_t i = 0; i < rs->Responses.n; i++) {
            const struct ReassignableTopic *tp = &rq->Topics.v[i];
            struct ReassignableTopicResponse *t = &rs->Responses.v[i];
            t->Name = tp->Name;
            if (ALLOC_ITEMS(t->Partitions, tp->Partitions.n) == NULL)
                return NULL;
            for (int32_t j = 0; j < t->Partitions.n; j++) {
                t->Partitions.v[j].PartitionIndex = tp->Partitions.v[j].PartitionIndex;
                t->Partitions.v[j].ErrorCode = err;
                t->Partitions.v[j].ErrorMessage = m;
            }
        }
        return rs;
    }
    case PROTO_API_ListPartitionReassignments: {
        struct ListPartitionReassignmentsResponse *rs = arena_alloc(ar, sizeof *rs);
        if (rs == NULL)
            return NULL;
        rs->ErrorCode = err;
        rs->ErrorMessage = m;
        return rs;
    }
    default:
        return NULL;
    }
#undef ALLOC_ITEMS
}

/* ---- one forward's life ------------------------------------------------------------------ */

static void fwd_release(struct fwd *f)
{
    struct admin *a = f->a;
    if (f->prev)
        f->prev->next = f->next;
    else
        a->forwards = f->next;
    if (f->next)
        f->next->prev = f->prev;
    if (f->arena) /* own creations only */
        a->n_own_forwards--;
    tclock_timer_close(&f->timer);
    arena_free(f->arena);
    free(f);
}

/* A broker's own creation: what the controller said, in the log. */
static void own_done(struct fwd *f, int err, const char *why)
{
    if (err == 0 || err == ERR_TOPIC_ALREADY_EXISTS || f->a->stopping)
        slog_debug("admin", "the controller answered the creation of %s: %s", f->topic,
                   err_name(err));
    else
        slog_warn_limited(&f->a->forward_warn, 10000, "admin",
                          "the controller did not create topic %s: %s%s%s", f->topic, err_name(err),
                          why ? ": " : "", why ? why : "");
}

/* Ends the forward: the client gets `resp` (the controller's answer), or with resp NULL an
 * answer with `err` in every item. Freed now unless the outbound client still holds it. */
static void fwd_finish(struct fwd *f, const void *resp, int err, const char *msg)
{
    struct net_request *req = f->req;

    if (req != NULL) {
        void *rs = resp ? NULL : error_answer(req, (int16_t)err_wire(err), msg);
        if (resp)
            net_respond(req, resp);
        else if (rs)
            net_respond(req, rs);
        else {
            slog_error("admin", "out of memory answering a forwarded %s from %s; closing",
                       req->api->name, req->peer);
            net_close_connection(req);
        }
    } else if (resp) {
        const struct CreateTopicsResponse *r = resp;
        if (r->Topics.n > 0)
            own_done(f, r->Topics.v[0].ErrorCode, r->Topics.v[0].ErrorMessage);
    } else {
        own_done(f, err, msg);
    }
    f->finished = true;
    f->req = NULL;
    tclock_timer_stop(&f->timer);
    if (!f->in_flight)
        fwd_release(f);
}

static void on_answer(void *arg, int err, const void *resp);

/* The ThrottleTimeMs of a response struct of `api` at `version` (0 where it has none). */
static int32_t response_throttle_ms(const struct proto_api *api, int16_t version, const void *resp)
{
    const struct proto_struct *s = api->response;
    for (uint16_t i = 0; i < s->nfields; i++) {
        const struct proto_field *fd = &s->fields[i];
        if (fd->type == PROTO_INT32 && fd->tag < 0 && strcmp(fd->name, "ThrottleTimeMs") == 0 &&
            version >= fd->min_version && version <= fd->max_version) {
            int32_t ms;
            memcpy(&ms, (const char *)resp + fd->offset, sizeof ms);
            return ms;
        }
    }
    return 0;
}

static void fwd_send(struct fwd *f)
{
    struct admin *a = f->a;
    /* A client's request goes in an envelope (KIP-590), a broker's own creation as it is. */
    int rc = f->req != NULL ? net_client_send(a->client, NET_CLIENT_CONTROLLER, PROTO_API_Envelope,
                                              0, f->body, on_answer, f)
                            : net_client_send(a->client, NET_CLIENT_CONTROLLER, f->api_key,
                                              f->version, f->body, on_answer, f);
    if (rc != 0) {
        fwd_finish(f, NULL, rc == ERR_SHUTDOWN ? ERR_NOT_CONTROLLER : rc,
                   "The request could not be forwarded to the controller.");
        return;
    }
    f->in_flight = true;
    int64_t left = f->deadline_ms - now_ms(a);
    tclock_timer_start(&f->timer, left > 0 ? left : 0, 0);
}

/* After NOT_CONTROLLER or a lost connection: again after the backoff, if the deadline
 * allows (else the deadline timer, still armed for it, answers). */
static void fwd_retry_later(struct fwd *f)
{
    int64_t now = now_ms(f->a);
    int64_t at = now + f->backoff_ms;
    f->backoff_ms = f->backoff_ms * 2 > FWD_BACKOFF_MAX_MS ? FWD_BACKOFF_MAX_MS : f->backoff_ms * 2;
    if (at > f->deadline_ms)
        at = f->deadline_ms;
    tclock_timer_start(&f->timer, at > now ? at - now : 0, 0);
}

static void on_answer(void *arg, int err, const void *resp)
{
    struct fwd *f = arg;
    struct admin *a = f->a;

    f->in_flight = false;
    if (f->finished) {
        fwd_release(f);
        return;
    }
    if (err == 0 && f->req != NULL) {
        /* The envelope's answer: its own error, else the inner answer inside it. */
        const struct EnvelopeResponse *env = resp;
        if (env->ErrorCode == ERR_NOT_CONTROLLER) {
            resp = NULL; /* retried below, as an inner NOT_CONTROLLER would be */
        } else if (env->ErrorCode != 0) {
            slog_warn_limited(&a->forward_warn, 10000, "admin",
                              "the controller refused the envelope of a %s from %s: %s",
                              f->req->api->name, f->req->peer, err_name(env->ErrorCode));
            fwd_finish(f, NULL, env->ErrorCode, "The controller refused the forwarded request.");
            return;
        } else if (admin_envelope_unwrap_response(f->req->api, f->version, env, f->req->arena,
                                                  (void **)&resp) != 0) {
            err = ERR_PARSE;
            resp = NULL;
        } else {
            /* KIP-599 through an envelope: the controller's connection is this broker's, so
             * the client's own connection here is muted for the inner throttle. */
            int32_t ms = response_throttle_ms(f->req->api, f->version, resp);
            if (ms > 0)
                net_mute(f->req, ms);
        }
    }
    if (err == 0 && resp == NULL) {
        net_client_disconnect(a->client, NET_CLIENT_CONTROLLER);
        slog_debug("admin", "forwarded %s: NOT_CONTROLLER (envelope); trying again",
                   proto_api_find(f->api_key)->name);
        fwd_retry_later(f);
        return;
    }
    if (err == 0 && !says_not_controller(f->api_key, f->version, resp)) {
        fwd_finish(f, resp, 0, NULL);
        return;
    }
    if (a->stopping || err == ERR_SHUTDOWN) {
        fwd_finish(f, NULL, ERR_NOT_CONTROLLER, "This broker is shutting down.");
        return;
    }
    if (err == ERR_PARSE) {
        fwd_finish(f, NULL, ERR_UNKNOWN_SERVER_ERROR, "The controller's answer did not decode.");
        return;
    }
    /* NOT_CONTROLLER: the controller moved; look it up again at the next attempt. */
    if (err == 0)
        net_client_disconnect(a->client, NET_CLIENT_CONTROLLER);
    slog_debug("admin", "forwarded %s: %s; trying again", proto_api_find(f->api_key)->name,
               err == 0 ? "NOT_CONTROLLER" : err_name(err));
    fwd_retry_later(f);
}

static void on_timer(struct tclock_timer *t)
{
    struct fwd *f = t->data;
    if (now_ms(f->a) >= f->deadline_ms) {
        fwd_finish(f, NULL, ERR_REQUEST_TIMED_OUT,
                   "The controller did not answer the forwarded request in time.");
        return;
    }
    if (!f->in_flight)
        fwd_send(f);
}

static struct fwd *fwd_new(struct admin *a, int16_t key, int16_t version, void *body,
                           int64_t timeout_ms)
{
    struct fwd *f = calloc(1, sizeof *f);
    if (f == NULL)
        return NULL;
    f->a = a;
    f->api_key = key;
    f->version = version;
    f->body = body;
    if (timeout_ms <= 0 || timeout_ms > a->forward_timeout_ms)
        timeout_ms = a->forward_timeout_ms;
    f->deadline_ms = now_ms(a) + timeout_ms;
    f->backoff_ms = FWD_BACKOFF_MS;
    tclock_timer_init(a->clock, &f->timer, on_timer, f);
    f->next = a->forwards;
    if (a->forwards)
        a->forwards->prev = f;
    a->forwards = f;
    return f;
}

/* ---- the contract (admin.h, admin_int.h) ------------------------------------------------- */

void admin_forward_setup(struct admin *a, const struct admin_options *opts)
{
    a->client = opts->client;
    a->clock = opts->clock;
    a->forward_timeout_ms =
        opts->forward_timeout_ms > 0 ? opts->forward_timeout_ms : FWD_DEFAULT_TIMEOUT_MS;
}

static bool cluster_ok(struct net_request *req, int8_t op)
{
    return authz_allowed_quiet(req, op, PROTO_RESOURCE_CLUSTER, AUTHZ_CLUSTER);
}

static bool config_ok(struct net_request *req, int8_t type, const char *name)
{
    if (type == RESOURCE_TOPIC)
        return authz_allowed_quiet(req, PROTO_ACL_OP_ALTER_CONFIGS, PROTO_RESOURCE_TOPIC,
                                   name ? name : "");
    return cluster_ok(req, PROTO_ACL_OP_ALTER_CONFIGS);
}

/* Whether this broker's authorizer lets every item of `req` through. The controller checks
 * the client's principal from the envelope again; it is checked here first (Tally's rule
 * from before the envelope, kept): a request with any item refused is not forwarded,
 * and its handler answers it here — the authorization error for the refused items,
 * NOT_CONTROLLER for the others, which the client retries on their own. */
static bool forward_authorized(struct admin *a, struct net_request *req)
{
    const void *body = req->body;
    if (!authz_on(req))
        return true;
    switch (req->api->key) {
    case PROTO_API_CreateAcls:
    case PROTO_API_DeleteAcls:
    case PROTO_API_AlterUserScramCredentials:
    case PROTO_API_ElectLeaders:
    case PROTO_API_AlterPartitionReassignments:
        return cluster_ok(req, PROTO_ACL_OP_ALTER);
    case PROTO_API_ListPartitionReassignments:
        return cluster_ok(req, PROTO_ACL_OP_DESCRIBE);
    case PROTO_API_AlterClientQuotas:
        return cluster_ok(req, PROTO_ACL_OP_ALTER_CONFIGS);
    case PROTO_API_CreateTopics: {
        const struct CreateTopicsRequest *rq = body;
        if (cluster_ok(req, PROTO_ACL_OP_CREATE))
            return true;
        for (int32_t i = 0; i < rq->Topics.n; i++)
            if (!authz_allowed_quiet(req, PROTO_ACL_OP_CREATE, PROTO_RESOURCE_TOPIC,
                                     rq->Topics.v[i].Name ? rq->Topics.v[i].Name : ""))
                return false;
        return true;
    }
    case PROTO_API_DeleteTopics: {
        const struct DeleteTopicsRequest *rq = body;
        bool v6 = req->hdr.RequestApiVersion >= 6;
        int32_t n = v6 ? rq->Topics.n : rq->TopicNames.n;
        for (int32_t i = 0; i < n; i++) {
            const char *name = v6 ? rq->Topics.v[i].Name : rq->TopicNames.v[i];
            if (name == NULL && v6) {
                const struct meta_topic *t = meta_topic_by_id(a->meta, rq->Topics.v[i].TopicId.b);
                name = t ? t->name : NULL;
            }
            if (name != NULL &&
                !authz_allowed_quiet(req, PROTO_ACL_OP_DELETE, PROTO_RESOURCE_TOPIC, name))
                return false;
        }
        return true;
    }
    case PROTO_API_CreatePartitions: {
        const struct CreatePartitionsRequest *rq = body;
        for (int32_t i = 0; i < rq->Topics.n; i++)
            if (!authz_allowed_quiet(req, PROTO_ACL_OP_ALTER, PROTO_RESOURCE_TOPIC,
                                     rq->Topics.v[i].Name ? rq->Topics.v[i].Name : ""))
                return false;
        return true;
    }
    case PROTO_API_AlterConfigs: {
        const struct AlterConfigsRequest *rq = body;
        for (int32_t i = 0; i < rq->Resources.n; i++)
            if (!config_ok(req, rq->Resources.v[i].ResourceType, rq->Resources.v[i].ResourceName))
                return false;
        return true;
    }
    case PROTO_API_IncrementalAlterConfigs: {
        const struct IncrementalAlterConfigsRequest *rq = body;
        for (int32_t i = 0; i < rq->Resources.n; i++)
            if (!config_ok(req, rq->Resources.v[i].ResourceType, rq->Resources.v[i].ResourceName))
                return false;
        return true;
    }
    default:
        return true;
    }
}

bool admin_forward(struct admin *a, struct net_request *req)
{
    struct EnvelopeRequest *env;
    struct fwd *f;
    int rc;

    if (a == NULL || a->client == NULL || a->stopping || !admin_api_forwarded(req->api->key) ||
        meta_is_controller(a->meta) || from_broker(req) || !forward_authorized(a, req))
        return false;
    env = arena_alloc(req->arena, sizeof *env);
    if (env == NULL || (rc = admin_envelope_wrap(req, req->arena, env)) == ERR_NOMEM) {
        slog_error("admin", "out of memory forwarding %s from %s; closing", req->api->name,
                   req->peer);
        net_close_connection(req);
        return true;
    }
    if (rc != 0) {
        /* A peer or principal an envelope cannot carry: answered here, as before forwarding. */
        slog_warn_limited(&a->forward_warn, 10000, "admin",
                          "a %s from %s (%s) cannot be put in an envelope; not forwarded",
                          req->api->name, req->peer, req->session->principal);
        return false;
    }
    f = fwd_new(a, req->api->key, req->hdr.RequestApiVersion, env,
                own_timeout_ms(req->api->key, req->body));
    if (f == NULL) {
        slog_error("admin", "out of memory forwarding %s from %s; closing", req->api->name,
                   req->peer);
        net_close_connection(req);
        return true;
    }
    f->req = req;
    fwd_send(f);
    return true;
}

int admin_forward_create(struct admin *a, const char *name, int32_t partitions,
                         int16_t replication_factor, int32_t n_configs, const char *const *keys,
                         const char *const *values)
{
    struct arena *ar;
    struct CreateTopicsRequest *rq;
    struct CreatableTopic *t;
    struct fwd *f;

    if (a->client == NULL || a->stopping)
        return ERR_NOT_CONTROLLER;
    for (f = a->forwards; f; f = f->next)
        if (f->topic != NULL && !f->finished && strcmp(f->topic, name) == 0)
            return 0; /* already asked for */
    if (a->n_own_forwards >= FWD_OWN_MAX)
        return ERR_NOMEM;
    ar = arena_new(FWD_OWN_ARENA);
    rq = ar ? arena_alloc(ar, sizeof *rq) : NULL;
    t = rq ? arena_alloc(ar, sizeof *t) : NULL;
    if (t == NULL || (t->Name = arena_strndup(ar, name, strlen(name))) == NULL)
        goto err_nomem;
    rq->Topics.n = 1;
    rq->Topics.v = t;
    rq->timeoutMs = (int32_t)a->forward_timeout_ms;
    t->NumPartitions = partitions;
    t->ReplicationFactor = replication_factor;
    t->Assignments.n = 0;
    if (n_configs > 0) {
        t->Configs.v = arena_alloc(ar, (size_t)n_configs * sizeof *t->Configs.v);
        if (t->Configs.v == NULL)
            goto err_nomem;
        t->Configs.n = n_configs;
        for (int32_t i = 0; i < n_configs; i++) {
            t->Configs.v[i].Name = arena_strndup(ar, keys[i], strlen(keys[i]));
            t->Configs.v[i].Value = arena_strndup(ar, values[i], strlen(values[i]));
            if (t->Configs.v[i].Name == NULL || t->Configs.v[i].Value == NULL)
                goto err_nomem;
        }
    }
    f = fwd_new(a, PROTO_API_CreateTopics, FWD_CREATE_VERSION, rq, 0);
    if (f == NULL)
        goto err_nomem;
    f->arena = ar;
    f->topic = t->Name;
    a->n_own_forwards++;
    slog_debug("admin", "asking the controller to create topic %s", name);
    fwd_send(f);
    return 0;

err_nomem:
    arena_free(ar);
    return ERR_NOMEM;
}

void admin_stop(struct admin *a)
{
    if (a == NULL || a->stopping)
        return;
    a->stopping = true;
    /* Each is answered (the listener is closing: the answer is dropped) and freed, or, while
     * the outbound client holds it, freed when the client fails it. */
    for (struct fwd *f = a->forwards, *next; f; f = next) {
        next = f->next;
        if (!f->finished)
            fwd_finish(f, NULL, ERR_NOT_CONTROLLER, "This broker is shutting down.");
    }
}

void admin_forward_free_all(struct admin *a)
{
    while (a->forwards)
        fwd_release(a->forwards);
}
