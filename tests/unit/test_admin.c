/* SPDX-License-Identifier: Apache-2.0 */
/* admin unit tests: CreateTopics and CreatePartitions called directly on detached requests
 * against a real single-voter metadata quorum (this node is its controller). New partitions
 * are placed by the controller's placement (ctl_place_replicas): rack-aware, never on a fenced
 * broker or one in controlled shutdown; explicit assignments are kept as given. */
#include "harness.h"
#include "fixture.h"

#include <stdlib.h>
#include <string.h>

#include "admin/admin.h"
#include "admin/admin_int.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/props.h"
#include "controller/controller_sm.h"
#include "meta/meta.h"
#include "net/net.h"
#include "proto/proto.h"

struct afx {
    struct fixture_meta q;
    struct props *props;
    struct admin *admin;
};

struct reply {
    bool done;
    int how;
    int16_t err;
    int32_t throttle; /* CreateTopics: the answer's ThrottleTimeMs */
};

static void on_created(void *arg, enum net_detached_end how, int16_t version, const void *resp)
{
    struct reply *r = arg;
    const struct CreateTopicsResponse *rs = resp;
    (void)version;
    r->done = true;
    r->how = how;
    r->err = how == NET_DETACHED_RESPONDED && rs->Topics.n > 0 ? rs->Topics.v[0].ErrorCode : -9999;
    r->throttle = how == NET_DETACHED_RESPONDED ? rs->ThrottleTimeMs : -1;
}

static void on_grown(void *arg, enum net_detached_end how, int16_t version, const void *resp)
{
    struct reply *r = arg;
    const struct CreatePartitionsResponse *rs = resp;
    (void)version;
    r->done = true;
    r->how = how;
    r->err =
        how == NET_DETACHED_RESPONDED && rs->Results.n > 0 ? rs->Results.v[0].ErrorCode : -9999;
}

/* Brokers 1, 2 in rack a; 3, 4, 5 in rack b; 4 is in controlled shutdown, 5 is fenced: the
 * brokers that may take new replicas are 1 and 2 (rack a) and 3 (rack b). */
static bool afx_open(struct afx *f)
{
    static const char *const racks[] = {"a", "a", "b", "b", "b"};
    struct meta_record recs[7];

    memset(f, 0, sizeof *f);
    if (!fixture_meta_open(&f->q, "/tmp/tally-admin-XXXXXX", NULL, NULL, NULL))
        return false;
    for (int i = 0; i < 5; i++) {
        recs[i] = fixture_broker_rec(i + 1, 9092 + i);
        recs[i].u.broker.rack = racks[i];
    }
    recs[5] = (struct meta_record){.type = META_REC_BROKER_CHANGE};
    recs[5].u.broker_change.id = 4;
    recs[5].u.broker_change.epoch = 0; /* the old registration record's epoch */
    recs[5].u.broker_change.fenced = -1;
    recs[5].u.broker_change.shutting_down = 1;
    recs[6] = (struct meta_record){.type = META_REC_FENCE_BROKER};
    recs[6].u.fence.id = 5;
    recs[6].u.fence.fenced = true;
    if (fixture_meta_propose(&f->q, recs, 7) != 0)
        return false;
    f->props = props_new();
    if (f->props == NULL)
        return false;
    struct admin_options ao = {.node_id = 1, .n_voters = 1, .config = f->props};
    f->admin = admin_new(f->q.m, &ao);
    return f->admin != NULL;
}

static void afx_close(struct afx *f)
{
    admin_free(f->admin);
    CHECK(fixture_meta_stop(&f->q));
    CHECK_EQ_INT(fixture_meta_fini(&f->q), 0);
    props_free(f->props);
}

/* CreateTopics at `version` for one topic; runs the loop until answered; *throttle gets the
 * answer's ThrottleTimeMs. */
static int create_v(struct afx *f, const char *name, int32_t partitions, int16_t rf,
                    int16_t version, int32_t *throttle);

/* CreateTopics v5 for one topic; runs the loop until answered. */
static int create(struct afx *f, const char *name, int32_t partitions, int16_t rf)
{
    int32_t throttle;
    return create_v(f, name, partitions, rf, 5, &throttle);
}

static int create_v(struct afx *f, const char *name, int32_t partitions, int16_t rf,
                    int16_t version, int32_t *throttle)
{
    struct arena *ar = arena_new(1 << 20);
    struct CreateTopicsRequest *rq = arena_alloc(ar, sizeof *rq);
    struct CreatableTopic *t = arena_alloc(ar, sizeof *t);
    struct reply r = {0};
    t->Name = arena_strndup(ar, name, strlen(name));
    t->NumPartitions = partitions;
    t->ReplicationFactor = rf;
    rq->Topics.n = 1;
    rq->Topics.v = t;
    rq->timeoutMs = 5000;
    struct net_request *req =
        net_request_detached_new(PROTO_API_CreateTopics, version, rq, ar, on_created, &r);
    if (req == NULL)
        return -9997;
    admin_create_topics(f->admin, req);
    if (!fixture_run_until(&f->q.loop, &r.done, 5000))
        return -9996;
    *throttle = r.throttle;
    return r.err;
}

/* CreatePartitions v1 growing `name` to `count`; `assign` (n_assign lists of rf ids) or NULL. */
static int grow(struct afx *f, const char *name, int32_t count, int32_t n_assign, int32_t rf,
                const int32_t *assign)
{
    struct arena *ar = arena_new(1 << 20);
    struct CreatePartitionsRequest *rq = arena_alloc(ar, sizeof *rq);
    struct CreatePartitionsTopic *t = arena_alloc(ar, sizeof *t);
    struct reply r = {0};
    t->Name = arena_strndup(ar, name, strlen(name));
    t->Count = count;
    t->Assignments.n = -1;
    if (assign) {
        t->Assignments.n = n_assign;
        t->Assignments.v = arena_alloc(ar, (size_t)n_assign * sizeof *t->Assignments.v);
        for (int32_t i = 0; i < n_assign; i++) {
            t->Assignments.v[i].BrokerIds.n = rf;
            t->Assignments.v[i].BrokerIds.v = arena_alloc(ar, (size_t)rf * sizeof(int32_t));
            memcpy(t->Assignments.v[i].BrokerIds.v, &assign[i * rf], (size_t)rf * sizeof(int32_t));
        }
    }
    rq->Topics.n = 1;
    rq->Topics.v = t;
    rq->TimeoutMs = 5000;
    struct net_request *req =
        net_request_detached_new(PROTO_API_CreatePartitions, 1, rq, ar, on_grown, &r);
    if (req == NULL)
        return -9997;
    admin_create_partitions(f->admin, req);
    if (!fixture_run_until(&f->q.loop, &r.done, 5000))
        return -9996;
    return r.err;
}

static const char *rack_of(int32_t id)
{
    return id <= 2 ? "a" : "b";
}

TEST(admin_create_topics_places_with_the_controllers_placement)
{
    struct afx f;
    int32_t want[6 * 2];
    REQUIRE(afx_open(&f));
    REQUIRE(create(&f, "placed", 6, 2) == 0);
    const struct meta_topic *t = meta_topic_by_name(f.q.m, "placed");
    REQUIRE(t != NULL && t->n_partitions == 6);
    /* Exactly the controller's decision on the same image and seed. */
    REQUIRE(ctl_place_replicas(meta_get_image(f.q.m), 6, 2, 0, topic_placement_seed("placed"),
                               want) == 0);
    int leaders[4] = {0};
    for (int32_t p = 0; p < 6; p++) {
        const struct meta_partition *mp = &t->partitions[p];
        REQUIRE(mp->n_replicas == 2 && mp->n_isr == 2);
        for (int r = 0; r < 2; r++) {
            CHECK(mp->replicas[r] >= 1 && mp->replicas[r] <= 3); /* never 4 nor 5 */
            CHECK_EQ_INT(mp->replicas[r], want[p * 2 + r]);
        }
        /* Rack-aware: each partition has a replica in either rack. */
        CHECK(strcmp(rack_of(mp->replicas[0]), rack_of(mp->replicas[1])) != 0);
        CHECK_EQ_INT(mp->leader, mp->replicas[0]);
        leaders[mp->leader]++;
    }
    /* Preferred leaders rotate over the three usable brokers. */
    CHECK_EQ_INT(leaders[1], 2);
    CHECK_EQ_INT(leaders[2], 2);
    CHECK_EQ_INT(leaders[3], 2);
    /* More replicas than usable brokers (the fenced and the shutting-down one do not count). */
    CHECK_EQ_INT(create(&f, "too-wide", 1, 4), ERR_INVALID_REPLICATION_FACTOR);
    afx_close(&f);
}

TEST(admin_create_partitions_continues_placement_or_keeps_assignments)
{
    struct afx f;
    int32_t want[3 * 2];
    static const int32_t assign[] = {2, 1};
    REQUIRE(afx_open(&f));
    REQUIRE(create(&f, "grown", 3, 2) == 0);
    REQUIRE(ctl_place_replicas(meta_get_image(f.q.m), 3, 2, 3, topic_placement_seed("grown"),
                               want) == 0);
    CHECK_EQ_INT(grow(&f, "grown", 6, 0, 2, NULL), 0);
    const struct meta_topic *t = meta_topic_by_name(f.q.m, "grown");
    REQUIRE(t != NULL && t->n_partitions == 6);
    for (int32_t p = 3; p < 6; p++) {
        const struct meta_partition *mp = &t->partitions[p];
        REQUIRE(mp->n_replicas == 2);
        CHECK_EQ_INT(mp->replicas[0], want[(p - 3) * 2]);
        CHECK_EQ_INT(mp->replicas[1], want[(p - 3) * 2 + 1]);
        CHECK(strcmp(rack_of(mp->replicas[0]), rack_of(mp->replicas[1])) != 0);
    }
    /* An explicit assignment is kept as given, even onto the shutting-down broker 4. */
    static const int32_t onto4[] = {4, 1};
    CHECK_EQ_INT(grow(&f, "grown", 7, 1, 2, assign), 0);
    CHECK_EQ_INT(grow(&f, "grown", 8, 1, 2, onto4), 0);
    t = meta_topic_by_name(f.q.m, "grown");
    REQUIRE(t != NULL && t->n_partitions == 8);
    CHECK_EQ_INT(t->partitions[6].replicas[0], 2);
    CHECK_EQ_INT(t->partitions[6].replicas[1], 1);
    CHECK_EQ_INT(t->partitions[7].replicas[0], 4);
    CHECK_EQ_INT(t->partitions[7].leader, 4);
    /* The controller's check of a manual assignment (ctl_check_assignment, as Kafka's
     * createPartitions): no broker twice, every broker registered, the topic's replication
     * factor. */
    static const int32_t twice[] = {1, 1}, unknown[] = {1, 9}, one[] = {3};
    CHECK_EQ_INT(grow(&f, "grown", 9, 1, 2, twice), ERR_INVALID_REPLICA_ASSIGNMENT);
    CHECK_EQ_INT(grow(&f, "grown", 9, 1, 2, unknown), ERR_INVALID_REPLICA_ASSIGNMENT);
    CHECK_EQ_INT(grow(&f, "grown", 9, 1, 1, one), ERR_INVALID_REPLICA_ASSIGNMENT);
    CHECK_EQ_INT(meta_topic_by_name(f.q.m, "grown")->n_partitions, 8);
    afx_close(&f);
}

/* KIP-599 on virtual time: controller_mutation_rate=2 for the detached requests' client id
 * and controller.quota.window.num=1, so a burst of 2 partitions. */
TEST(admin_controller_mutation_rate_refuses_strict_versions_and_throttles_old_ones)
{
    struct afx f;
    int32_t th;
    REQUIRE(afx_open(&f));
    /* The admin again, with a clock for its buckets and a one-sample window. */
    admin_free(f.admin);
    struct tclock *clock = tclock_virtual_new(1700000000000);
    REQUIRE(clock != NULL);
    REQUIRE(props_set(f.props, "controller.quota.window.num", "1") == 0);
    struct admin_options ao = {.node_id = 1, .n_voters = 1, .config = f.props, .clock = clock};
    f.admin = admin_new(f.q.m, &ao);
    REQUIRE(f.admin != NULL);
    struct meta_record q = {.type = META_REC_CLIENT_QUOTA};
    q.u.quota.entity.has_client_id = true;
    q.u.quota.entity.client_id = "detached";
    q.u.quota.key = META_QUOTA_CONTROLLER_MUTATION_RATE;
    q.u.quota.value = 2;
    REQUIRE(fixture_meta_propose(&f.q, &q, 1) == 0);

    /* v6, strict: 5 partitions from a full bucket of 2 pass whole (checked before taken)
     * and are not throttled (a strict quota throttles a refusal). */
    CHECK_EQ_INT(create_v(&f, "m1", 5, 1, 6, &th), 0);
    CHECK_EQ_INT(th, 0);
    /* The bucket is at -3: refused, 1.5 s until it is back at 0, nothing created. */
    CHECK_EQ_INT(create_v(&f, "m2", 1, 1, 6, &th), ERR_THROTTLING_QUOTA_EXCEEDED);
    CHECK_EQ_INT(th, 1500);
    CHECK(meta_topic_by_name(f.q.m, "m2") == NULL);
    /* v5 does not know the error: created, and throttled by what the bucket owes (-4). */
    CHECK_EQ_INT(create_v(&f, "m3", 1, 1, 5, &th), 0);
    CHECK_EQ_INT(th, 2000);
    CHECK(meta_topic_by_name(f.q.m, "m3") != NULL);
    /* 1999 ms later still below 0; at 2000 back at 0, which passes. */
    tclock_advance(clock, 1999);
    CHECK_EQ_INT(create_v(&f, "m4", 1, 1, 6, &th), ERR_THROTTLING_QUOTA_EXCEEDED);
    tclock_advance(clock, 1);
    CHECK_EQ_INT(create_v(&f, "m4", 1, 1, 6, &th), 0);
    CHECK(meta_topic_by_name(f.q.m, "m4") != NULL);
    afx_close(&f);
    tclock_free(clock);
}

/* ---- KIP-590's envelope (envelope.c) ------------------------------------------------------ */

TEST(admin_envelope_principal_is_kafkas_default_principal_data)
{
    struct arena *a = arena_new(1 << 16);
    struct proto_bytes b;
    char out[NET_PRINCIPAL_MAX];
    /* DefaultKafkaPrincipalBuilder's bytes: INT16 version 0, then DefaultPrincipalData v0
     * (flexible): compact "User", compact "alice", TokenAuthenticated false, no tags. */
    static const uint8_t want[] = {0, 0, 5, 'U', 's', 'e', 'r', 6, 'a', 'l', 'i', 'c', 'e', 0, 0};
    REQUIRE(a != NULL);
    REQUIRE(admin_envelope_principal_encode("User:alice", a, &b) == 0);
    CHECK_EQ_INT(b.len, (int)sizeof want);
    CHECK(b.len == (int)sizeof want && memcmp(b.data, want, sizeof want) == 0);
    CHECK_EQ_INT(admin_envelope_principal_decode(&b, a, out, sizeof out), 0);
    CHECK_EQ_STR(out, "User:alice");
    /* A name with ':' keeps it (only the type ends at the first one). */
    REQUIRE(admin_envelope_principal_encode("User:CN=a:b", a, &b) == 0);
    CHECK_EQ_INT(admin_envelope_principal_decode(&b, a, out, sizeof out), 0);
    CHECK_EQ_STR(out, "User:CN=a:b");
    CHECK_EQ_INT(admin_envelope_principal_encode("nocolon", a, &b), ERR_PARSE);
    /* Malformed: null, truncated, a version not 0, an empty type. */
    struct proto_bytes bad = {.data = NULL, .len = -1};
    CHECK_EQ_INT(admin_envelope_principal_decode(&bad, a, out, sizeof out), ERR_PARSE);
    bad.data = want;
    bad.len = 6;
    CHECK_EQ_INT(admin_envelope_principal_decode(&bad, a, out, sizeof out), ERR_PARSE);
    uint8_t v1[sizeof want];
    memcpy(v1, want, sizeof want);
    v1[1] = 1;
    bad.data = v1;
    bad.len = sizeof v1;
    CHECK_EQ_INT(admin_envelope_principal_decode(&bad, a, out, sizeof out), ERR_PARSE);
    static const uint8_t empty_type[] = {0, 0, 1, 6, 'a', 'l', 'i', 'c', 'e', 0, 0};
    bad.data = empty_type;
    bad.len = sizeof empty_type;
    CHECK_EQ_INT(admin_envelope_principal_decode(&bad, a, out, sizeof out), ERR_PARSE);
    /* Too long for a session's principal. */
    CHECK_EQ_INT(admin_envelope_principal_decode(&b, a, out, 8), ERR_PARSE);
    arena_free(a);
}

TEST(admin_envelope_host_is_the_peers_ip_address)
{
    uint8_t ip[16];
    int32_t n = 0;
    CHECK_EQ_INT(admin_envelope_host_encode("10.1.2.3:9092", ip, &n), 0);
    CHECK_EQ_INT(n, 4);
    CHECK(ip[0] == 10 && ip[1] == 1 && ip[2] == 2 && ip[3] == 3);
    CHECK_EQ_INT(admin_envelope_host_encode("[::1]:9092", ip, &n), 0);
    CHECK_EQ_INT(n, 16);
    CHECK(ip[15] == 1 && ip[0] == 0);
    CHECK_EQ_INT(admin_envelope_host_encode("detached", ip, &n), ERR_PARSE);
}

/* An envelope's answer as the forwarding broker reads it. */
struct env_reply {
    bool done;
    int how;
    int16_t env_err;   /* the envelope's ErrorCode */
    int16_t inner_err; /* the inner CreateTopics' topic error (-9999: no inner answer) */
    int32_t throttle;  /* the inner answer's ThrottleTimeMs */
    int16_t version;   /* the inner request's */
};

static void on_envelope(void *arg, enum net_detached_end how, int16_t version, const void *resp)
{
    struct env_reply *r = arg;
    const struct EnvelopeResponse *er = resp;
    struct arena *a = arena_new(1 << 20);
    void *inner = NULL;
    (void)version;
    r->done = true;
    r->how = how;
    r->inner_err = -9999;
    if (how == NET_DETACHED_RESPONDED) {
        r->env_err = er->ErrorCode;
        if (er->ErrorCode == 0 &&
            admin_envelope_unwrap_response(proto_api_find(PROTO_API_CreateTopics), r->version, er,
                                           a, &inner) == 0) {
            const struct CreateTopicsResponse *ct = inner;
            r->throttle = ct->ThrottleTimeMs;
            if (ct->Topics.n == 1)
                r->inner_err = ct->Topics.v[0].ErrorCode;
        }
    }
    arena_free(a);
}

static void env_run(void *ctx, struct net_request *inner)
{
    admin_create_topics(ctx, inner);
}

/* A CreateTopics at `version` from (principal, client_id) at 127.0.0.1, wrapped as a broker
 * would and handed to the controller's admin_envelope by a broker ("tally-broker-2"). */
static struct env_reply envelope_create(struct afx *f, const char *principal, const char *client_id,
                                        const char *name, int16_t api_key, int16_t version)
{
    struct env_reply r = {.version = version};
    struct arena *ar = arena_new(1 << 20), *oar = arena_new(1 << 20);
    struct CreateTopicsRequest *rq = arena_alloc(ar, sizeof *rq);
    struct CreatableTopic *t = arena_alloc(ar, sizeof *t);
    struct MetadataRequest *md = arena_alloc(ar, sizeof *md);
    struct EnvelopeRequest *env = arena_alloc(oar, sizeof *env);
    t->Name = arena_strndup(ar, name, strlen(name));
    t->NumPartitions = 2;
    t->ReplicationFactor = 1;
    rq->Topics.n = 1;
    rq->Topics.v = t;
    rq->timeoutMs = 5000;
    md->Topics.n = -1;
    struct net_request *client = net_request_detached_new(
        api_key, version, api_key == PROTO_API_CreateTopics ? (void *)rq : (void *)md, ar, NULL,
        NULL);
    if (client == NULL)
        return r;
    client->hdr.ClientId = (char *)client_id;
    client->peer = "127.0.0.1:40000";
    snprintf(client->session->principal, sizeof client->session->principal, "%s", principal);
    if (admin_envelope_wrap(client, oar, env) != 0) {
        net_finish(client);
        return r;
    }
    net_finish(client); /* the envelope holds copies */
    struct net_request *outer =
        net_request_detached_new(PROTO_API_Envelope, 0, env, oar, on_envelope, &r);
    if (outer == NULL)
        return r;
    outer->hdr.ClientId = ADMIN_BROKER_CLIENT_ID_PREFIX "2";
    admin_envelope(f->admin, outer, env_run, f->admin);
    fixture_run_until(&f->q.loop, &r.done, 5000);
    return r;
}

TEST(admin_envelope_holds_the_inner_client_to_its_mutation_quota)
{
    struct afx f;
    REQUIRE(afx_open(&f));
    admin_free(f.admin);
    struct tclock *clock = tclock_virtual_new(1700000000000);
    REQUIRE(clock != NULL);
    REQUIRE(props_set(f.props, "controller.quota.window.num", "1") == 0);
    struct admin_options ao = {.node_id = 1, .n_voters = 1, .config = f.props, .clock = clock};
    f.admin = admin_new(f.q.m, &ao);
    REQUIRE(f.admin != NULL);
    struct meta_record q = {.type = META_REC_CLIENT_QUOTA};
    q.u.quota.entity.has_client_id = true;
    q.u.quota.entity.client_id = "envapp";
    q.u.quota.key = META_QUOTA_CONTROLLER_MUTATION_RATE;
    q.u.quota.value = 1;
    REQUIRE(fixture_meta_propose(&f.q, &q, 1) == 0);

    /* The envelope comes from a broker (exempt itself); the inner client "envapp" is not:
     * 2 partitions from a bucket of 1 pass, the next topic is refused and not created. */
    struct env_reply r =
        envelope_create(&f, "User:alice", "envapp", "e1", PROTO_API_CreateTopics, 6);
    CHECK(r.done);
    CHECK_EQ_INT(r.env_err, 0);
    CHECK_EQ_INT(r.inner_err, 0);
    CHECK(meta_topic_by_name(f.q.m, "e1") != NULL);
    r = envelope_create(&f, "User:alice", "envapp", "e2", PROTO_API_CreateTopics, 6);
    CHECK_EQ_INT(r.env_err, 0);
    CHECK_EQ_INT(r.inner_err, ERR_THROTTLING_QUOTA_EXCEEDED);
    CHECK_EQ_INT(r.throttle, 1000);
    CHECK(meta_topic_by_name(f.q.m, "e2") == NULL);
    /* Another client id through the same broker is not held to envapp's bucket. */
    r = envelope_create(&f, "User:alice", "other", "e3", PROTO_API_CreateTopics, 6);
    CHECK_EQ_INT(r.inner_err, 0);

    /* Refused: an envelope of an API that is not forwarded. */
    r = envelope_create(&f, "User:alice", "envapp", "e4", PROTO_API_Metadata, 9);
    CHECK_EQ_INT(r.how, NET_DETACHED_RESPONDED);
    CHECK_EQ_INT(r.env_err, ERR_INVALID_REQUEST);
    afx_close(&f);
    tclock_free(clock);
}

/* ---- forwarding (forward.c) --------------------------------------------------------------
 * The admin runs on a quorum member that can never lead (two voters, the other one absent),
 * so everything it forwards goes to NET_CLIENT_CONTROLLER: a tiny in-test "controller" on
 * loopback that answers CreateTopics and ElectLeaders — NOT_CONTROLLER for its first
 * `not_controller` answers, or nothing at all when silent. The outbound client and the
 * forwarder run on a virtual clock, so backoff and deadlines are decided by the test. */

struct ctl_srv {
    uv_tcp_t tcp;
    int port;
    bool silent;
    int not_controller; /* answers left that say NOT_CONTROLLER */
    int frames, accepted;
    int eofs; /* connections the forwarder closed */
    char client_id[64];
    /* Of the last envelope: the inner request's client id, the principal and host. */
    int16_t envelope_error; /* answered in the EnvelopeResponse (no inner answer) when set */
    int envelope_errors;    /* how many answers carry it (then the inner answer again) */
    char inner_client_id[64];
    char principal[NET_PRINCIPAL_MAX];
    int32_t host_len;
};

struct ctl_conn {
    uv_tcp_t tcp;
    struct ctl_srv *srv;
    uint8_t buf[1 << 16];
    size_t len;
};

static void srv_alloc(uv_handle_t *h, size_t sz, uv_buf_t *b)
{
    struct ctl_conn *c = h->data;
    (void)sz;
    *b = uv_buf_init((char *)c->buf + c->len, (unsigned)(sizeof c->buf - c->len));
}

static void srv_conn_closed(uv_handle_t *h)
{
    free(h->data);
}

static void srv_written(uv_write_t *w, int status)
{
    (void)status;
    free(w->data);
    free(w);
}

static const struct proto_api *proto_find_envelope(void)
{
    return proto_api_find(PROTO_API_Envelope);
}

static void srv_answer(struct ctl_conn *c, const uint8_t *f, size_t len)
{
    struct arena *a = arena_new(1 << 20);
    struct RequestHeader h = {0};
    size_t hl;
    void *body;
    const struct proto_api *api;
    struct CreateTopicsResponse ct = {0};
    struct ElectLeadersResponse el = {0};
    const void *rs = NULL;
    uint8_t *out;
    size_t out_len;
    int16_t err = c->srv->not_controller > 0 ? ERR_NOT_CONTROLLER : 0;

    struct RequestHeader outer = {0};
    bool wrapped = false;

    if (proto_decode_request_header(f, len, &h, &hl, a) != 0 ||
        (api = proto_api_find(h.RequestApiKey)) == NULL ||
        proto_decode_request(api, h.RequestApiVersion, f + hl, len - hl, &body, a) != 0)
        goto out;
    snprintf(c->srv->client_id, sizeof c->srv->client_id, "%s", h.ClientId ? h.ClientId : "");
    if (h.RequestApiKey == PROTO_API_Envelope) {
        /* KIP-590: what the forwarder wrapped is answered, and the answer wrapped. */
        const struct EnvelopeRequest *env = body;
        outer = h;
        wrapped = true;
        c->srv->host_len = env->ClientHostAddress.len;
        if (admin_envelope_principal_decode(&env->RequestPrincipal, a, c->srv->principal,
                                            sizeof c->srv->principal) != 0 ||
            proto_decode_request_header(env->RequestData.data, (size_t)env->RequestData.len, &h,
                                        &hl, a) != 0 ||
            (api = proto_api_find(h.RequestApiKey)) == NULL ||
            proto_decode_request(api, h.RequestApiVersion, env->RequestData.data + hl,
                                 (size_t)env->RequestData.len - hl, &body, a) != 0)
            goto out;
        snprintf(c->srv->inner_client_id, sizeof c->srv->inner_client_id, "%s",
                 h.ClientId ? h.ClientId : "");
    }
    if (c->srv->not_controller > 0)
        c->srv->not_controller--;
    if (h.RequestApiKey == PROTO_API_CreateTopics) {
        struct CreateTopicsRequest *rq = body;
        ct.Topics.n = rq->Topics.n;
        ct.Topics.v = arena_alloc(a, ((size_t)rq->Topics.n + 1) * sizeof *ct.Topics.v);
        for (int32_t i = 0; i < rq->Topics.n; i++) {
            ct.Topics.v[i].Name = rq->Topics.v[i].Name;
            ct.Topics.v[i].ErrorCode = err;
            ct.Topics.v[i].NumPartitions = rq->Topics.v[i].NumPartitions;
            ct.Topics.v[i].ReplicationFactor = rq->Topics.v[i].ReplicationFactor;
            ct.Topics.v[i].Configs.n = -1;
        }
        rs = &ct;
    } else if (h.RequestApiKey == PROTO_API_ElectLeaders) {
        el.ErrorCode = err;
        rs = &el;
    }
    if (rs && wrapped && c->srv->envelope_errors > 0) {
        struct EnvelopeResponse er = {.ResponseData = {.len = -1},
                                      .ErrorCode = c->srv->envelope_error};
        c->srv->envelope_errors--;
        if (proto_encode_response(proto_find_envelope(), 0, outer.CorrelationId, &er, &out,
                                  &out_len) != 0)
            goto out;
    } else if (rs && wrapped) {
        uint8_t *inner;
        size_t inner_len;
        struct EnvelopeResponse er = {0};
        if (proto_encode_response(api, h.RequestApiVersion, h.CorrelationId, rs, &inner,
                                  &inner_len) != 0)
            goto out;
        er.ResponseData.data = arena_alloc(a, inner_len - 4);
        memcpy((uint8_t *)er.ResponseData.data, inner + 4, inner_len - 4);
        er.ResponseData.len = (int32_t)(inner_len - 4);
        free(inner);
        api = proto_api_find(PROTO_API_Envelope);
        h = outer;
        rs = &er;
        if (proto_encode_response(api, 0, h.CorrelationId, rs, &out, &out_len) != 0)
            goto out;
    } else if (rs && proto_encode_response(api, h.RequestApiVersion, h.CorrelationId, rs, &out,
                                           &out_len) != 0) {
        goto out;
    }
    if (rs) {
        uv_write_t *w = malloc(sizeof *w);
        uv_buf_t b = uv_buf_init((char *)out, (unsigned)out_len);
        w->data = out;
        uv_write(w, (uv_stream_t *)&c->tcp, &b, 1, srv_written);
    }
out:
    arena_free(a);
}

static void srv_read(uv_stream_t *st, ssize_t n, const uv_buf_t *b)
{
    struct ctl_conn *c = st->data;
    size_t off = 0;
    (void)b;
    if (n < 0) {
        c->srv->eofs++;
        uv_close((uv_handle_t *)&c->tcp, srv_conn_closed);
        return;
    }
    c->len += (size_t)n;
    while (c->len - off >= 4) {
        const uint8_t *p = c->buf + off;
        size_t size = (size_t)p[0] << 24 | (size_t)p[1] << 16 | (size_t)p[2] << 8 | p[3];
        if (c->len - off - 4 < size)
            break;
        c->srv->frames++;
        if (!c->srv->silent)
            srv_answer(c, p + 4, size);
        off += 4 + size;
    }
    memmove(c->buf, c->buf + off, c->len - off);
    c->len -= off;
}

static void srv_accept(uv_stream_t *st, int status)
{
    struct ctl_srv *s = st->data;
    struct ctl_conn *c = calloc(1, sizeof *c);
    (void)status;
    c->srv = s;
    uv_tcp_init(st->loop, &c->tcp);
    c->tcp.data = c;
    if (uv_accept(st, (uv_stream_t *)&c->tcp) != 0) {
        uv_close((uv_handle_t *)&c->tcp, srv_conn_closed);
        return;
    }
    s->accepted++;
    uv_read_start((uv_stream_t *)&c->tcp, srv_alloc, srv_read);
}

struct ffx {
    struct fixture_meta q; /* a voter that never leads */
    struct meta_voter voters[2];
    struct tclock *vclock; /* the client's and the forwarder's */
    struct net_client *client;
    struct ctl_srv srv;
    struct props *props;
    struct admin *admin;
};

static int resolve_ctl(void *arg, int32_t id, char *host, size_t host_len, int *port)
{
    struct ffx *f = arg;
    (void)id;
    snprintf(host, host_len, "127.0.0.1");
    *port = f->srv.port;
    return 0;
}

static bool ffx_open(struct ffx *f)
{
    struct sockaddr_in addr;
    struct sockaddr_storage got;
    int len = sizeof got;

    memset(f, 0, sizeof *f);
    if (!fixture_meta_init(&f->q, "/tmp/tally-forward-XXXXXX", NULL, NULL, NULL))
        return false;
    f->voters[0] = f->q.voter;
    f->voters[1].id = 2;
    snprintf(f->voters[1].address, sizeof f->voters[1].address, "127.0.0.1:%d",
             fixture_free_port());
    struct meta_options mo = {.clock = f->q.clock,
                              .node_id = 1,
                              .dir = f->q.dir,
                              .cluster_id = "fixture-cluster",
                              .n_voters = 2,
                              .voters = f->voters,
                              .listen_address = f->q.listen};
    if (meta_start(&f->q.loop, &mo, &f->q.m) != 0)
        return false;
    uv_tcp_init(&f->q.loop, &f->srv.tcp);
    f->srv.tcp.data = &f->srv;
    uv_ip4_addr("127.0.0.1", 0, &addr);
    if (uv_tcp_bind(&f->srv.tcp, (const struct sockaddr *)&addr, 0) != 0 ||
        uv_listen((uv_stream_t *)&f->srv.tcp, 16, srv_accept) != 0 ||
        uv_tcp_getsockname(&f->srv.tcp, (struct sockaddr *)&got, &len) != 0)
        return false;
    f->srv.port = ntohs(((struct sockaddr_in *)&got)->sin_port);
    f->vclock = tclock_virtual_new(1700000000000);
    struct net_client_options co = {.clock = f->vclock,
                                    .client_id = ADMIN_BROKER_CLIENT_ID_PREFIX "1",
                                    .resolve = resolve_ctl,
                                    .resolve_arg = f};
    if (f->vclock == NULL || net_client_new(&f->q.loop, &co, &f->client) != 0)
        return false;
    f->props = props_new();
    struct admin_options ao = {.node_id = 1,
                               .n_voters = 2,
                               .config = f->props,
                               .client = f->client,
                               .clock = f->vclock,
                               .forward_timeout_ms = 30000};
    f->admin = admin_new(f->q.m, &ao);
    return f->props && f->admin && !meta_is_controller(f->q.m);
}

static void srv_close_walk(uv_handle_t *h, void *arg)
{
    if (!uv_is_closing(h) && h->type == UV_TCP)
        uv_close(h, h == arg ? NULL : srv_conn_closed);
}

static void ffx_close(struct ffx *f)
{
    bool stopped = false;
    admin_stop(f->admin);
    net_client_stop(f->client, fixture_set_flag, &stopped);
    CHECK(fixture_run_until(&f->q.loop, &stopped, 5000));
    admin_free(f->admin);
    CHECK(fixture_meta_stop(&f->q));
    /* The listener and what it accepted (raft's own handles are gone with the quorum). */
    uv_walk(&f->q.loop, srv_close_walk, &f->srv.tcp);
    uv_run(&f->q.loop, UV_RUN_DEFAULT);
    CHECK_EQ_INT(fixture_meta_fini(&f->q), 0);
    tclock_free(f->vclock);
    props_free(f->props);
}

struct fwd_reply {
    bool done;
    int how;
    int16_t err;   /* CreateTopics: the topic's; ElectLeaders: the top-level one */
    int32_t parts; /* CreateTopics: NumPartitions */
};

static void on_forwarded(void *arg, enum net_detached_end how, int16_t version, const void *resp)
{
    struct fwd_reply *r = arg;
    (void)version;
    r->done = true;
    r->how = how;
    r->err = -9999;
    if (how != NET_DETACHED_RESPONDED)
        return;
    if (r->parts == -2) {
        r->err = ((const struct ElectLeadersResponse *)resp)->ErrorCode;
        return;
    }
    const struct CreateTopicsResponse *rs = resp;
    if (rs->Topics.n == 1) {
        r->err = rs->Topics.v[0].ErrorCode;
        r->parts = rs->Topics.v[0].NumPartitions;
    }
}

/* A CreateTopics v5 from `client_id`, offered to admin_forward; returns what it said. */
static bool offer_create(struct ffx *f, const char *client_id, int32_t timeout_ms,
                         struct fwd_reply *r, struct net_request **out)
{
    struct arena *ar = arena_new(1 << 20);
    struct CreateTopicsRequest *rq = arena_alloc(ar, sizeof *rq);
    struct CreatableTopic *t = arena_alloc(ar, sizeof *t);
    t->Name = arena_strndup(ar, "forwarded", 9);
    t->NumPartitions = 3;
    t->ReplicationFactor = 1;
    rq->Topics.n = 1;
    rq->Topics.v = t;
    rq->timeoutMs = timeout_ms;
    memset(r, 0, sizeof *r);
    *out = net_request_detached_new(PROTO_API_CreateTopics, 5, rq, ar, on_forwarded, r);
    if (*out == NULL)
        return false;
    (*out)->hdr.ClientId = (char *)client_id;
    (*out)->peer = "127.0.0.1:40000";
    snprintf((*out)->session->principal, sizeof(*out)->session->principal, "User:alice");
    return admin_forward(f->admin, *out);
}

/* Runs the loop (real sockets) until *v reaches want, 5 s of wall time at most. */
static bool run_until_count(struct ffx *f, const int *v, int want)
{
    for (int i = 0; i < 5000 && *v < want; i++) {
        uv_run(&f->q.loop, UV_RUN_NOWAIT);
        if (*v < want)
            uv_sleep(1);
    }
    return *v >= want;
}

TEST(admin_forward_retries_not_controller_on_a_new_connection)
{
    struct ffx f;
    struct fwd_reply r;
    struct net_request *req;
    REQUIRE(ffx_open(&f));
    f.srv.not_controller = 1;
    REQUIRE(offer_create(&f, "app", 10000, &r, &req));
    /* The first answer says NOT_CONTROLLER: the forwarder closes that connection, nothing
     * reaches the client yet, and nothing goes again before the backoff. */
    REQUIRE(run_until_count(&f, &f.srv.eofs, 1));
    uv_run(&f.q.loop, UV_RUN_NOWAIT);
    CHECK(!r.done);
    CHECK_EQ_INT(f.srv.frames, 1);
    tclock_advance(f.vclock, 100);
    REQUIRE(fixture_run_until(&f.q.loop, &r.done, 5000));
    CHECK_EQ_INT(r.how, NET_DETACHED_RESPONDED);
    CHECK_EQ_INT(r.err, 0);
    CHECK_EQ_INT(r.parts, 3); /* the controller's answer, passed through */
    CHECK_EQ_INT(f.srv.frames, 2);
    CHECK_EQ_INT(f.srv.accepted, 2); /* NOT_CONTROLLER closed the first connection */
    /* KIP-590: the broker's envelope carries the client's request, id, principal and host. */
    CHECK_EQ_STR(f.srv.client_id, ADMIN_BROKER_CLIENT_ID_PREFIX "1");
    CHECK_EQ_STR(f.srv.inner_client_id, "app");
    CHECK_EQ_STR(f.srv.principal, "User:alice");
    CHECK_EQ_INT(f.srv.host_len, 4);
    ffx_close(&f);
}

TEST(admin_forward_envelope_errors_retry_not_controller_and_pass_the_rest_on)
{
    struct ffx f;
    struct fwd_reply r;
    struct net_request *req;
    REQUIRE(ffx_open(&f));
    /* The envelope's own NOT_CONTROLLER is retried after the backoff, as an inner one is. */
    f.srv.envelope_error = ERR_NOT_CONTROLLER;
    f.srv.envelope_errors = 1;
    REQUIRE(offer_create(&f, "app", 10000, &r, &req));
    REQUIRE(run_until_count(&f, &f.srv.eofs, 1));
    CHECK(!r.done);
    tclock_advance(f.vclock, 100);
    REQUIRE(fixture_run_until(&f.q.loop, &r.done, 5000));
    CHECK_EQ_INT(r.err, 0);
    CHECK_EQ_INT(r.parts, 3);
    CHECK_EQ_INT(f.srv.frames, 2);
    /* Any other (this broker may not CLUSTER_ACTION): every item of the client's answer. */
    f.srv.envelope_error = ERR_CLUSTER_AUTHORIZATION_FAILED;
    f.srv.envelope_errors = 1;
    REQUIRE(offer_create(&f, "app", 10000, &r, &req));
    REQUIRE(fixture_run_until(&f.q.loop, &r.done, 5000));
    CHECK_EQ_INT(r.how, NET_DETACHED_RESPONDED);
    CHECK_EQ_INT(r.err, ERR_CLUSTER_AUTHORIZATION_FAILED);
    CHECK_EQ_INT(f.srv.frames, 3);
    ffx_close(&f);
}

TEST(admin_forward_times_out_with_request_timed_out)
{
    struct ffx f;
    struct fwd_reply r;
    struct net_request *req;
    REQUIRE(ffx_open(&f));
    f.srv.silent = true;
    REQUIRE(offer_create(&f, "app", 2000, &r, &req));
    REQUIRE(run_until_count(&f, &f.srv.frames, 1));
    tclock_advance(f.vclock, 1999);
    uv_run(&f.q.loop, UV_RUN_NOWAIT);
    CHECK(!r.done);
    tclock_advance(f.vclock, 1);
    REQUIRE(fixture_run_until(&f.q.loop, &r.done, 5000));
    CHECK_EQ_INT(r.how, NET_DETACHED_RESPONDED);
    CHECK_EQ_INT(r.err, ERR_REQUEST_TIMED_OUT);
    ffx_close(&f);
}

TEST(admin_forward_elect_leaders_top_level_not_controller_is_retried)
{
    struct ffx f;
    struct fwd_reply r = {.parts = -2};
    struct arena *ar;
    REQUIRE(ffx_open(&f));
    f.srv.not_controller = 2;
    ar = arena_new(1 << 16);
    struct ElectLeadersRequest *rq = arena_alloc(ar, sizeof *rq);
    rq->TopicPartitions.n = -1; /* every partition */
    rq->TimeoutMs = 10000;
    struct net_request *req =
        net_request_detached_new(PROTO_API_ElectLeaders, 2, rq, ar, on_forwarded, &r);
    REQUIRE(req != NULL);
    req->peer = "[::1]:40000";
    REQUIRE(admin_forward(f.admin, req));
    REQUIRE(run_until_count(&f, &f.srv.eofs, 1));
    tclock_advance(f.vclock, 99);
    uv_run(&f.q.loop, UV_RUN_NOWAIT);
    CHECK_EQ_INT(f.srv.frames, 1);
    tclock_advance(f.vclock, 1); /* the first backoff */
    REQUIRE(run_until_count(&f, &f.srv.eofs, 2));
    tclock_advance(f.vclock, 199);
    uv_run(&f.q.loop, UV_RUN_NOWAIT);
    CHECK_EQ_INT(f.srv.frames, 2);
    tclock_advance(f.vclock, 1); /* doubled */
    REQUIRE(fixture_run_until(&f.q.loop, &r.done, 5000));
    CHECK_EQ_INT(r.err, 0);
    CHECK_EQ_INT(f.srv.frames, 3);
    ffx_close(&f);
}

TEST(admin_forward_leaves_a_forwarded_request_to_its_handler)
{
    struct ffx f;
    struct fwd_reply r;
    struct net_request *req;
    REQUIRE(ffx_open(&f));
    /* From another broker: not sent on (its handler answers NOT_CONTROLLER here). */
    CHECK(!offer_create(&f, ADMIN_BROKER_CLIENT_ID_PREFIX "3", 10000, &r, &req));
    net_finish(req);
    /* An API that is not forwarded. */
    struct arena *ar = arena_new(1 << 16);
    struct MetadataRequest *md = arena_alloc(ar, sizeof *md);
    md->Topics.n = -1;
    req = net_request_detached_new(PROTO_API_Metadata, 9, md, ar, on_forwarded, &r);
    REQUIRE(req != NULL);
    CHECK(!admin_forward(f.admin, req));
    net_finish(req);
    CHECK_EQ_INT(f.srv.frames, 0);
    ffx_close(&f);
}
