/* SPDX-License-Identifier: Apache-2.0 */
/* admin unit tests: CreateTopics and CreatePartitions called directly on detached requests
 * against a real single-voter metadata quorum (this node is its controller). New partitions
 * are placed by the controller's placement (ctl_place_replicas): rack-aware, never on a fenced
 * broker or one in controlled shutdown; explicit assignments are kept as given. */
#include "harness.h"
#include "fixture.h"

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
};

static void on_created(void *arg, enum net_detached_end how, int16_t version, const void *resp)
{
    struct reply *r = arg;
    const struct CreateTopicsResponse *rs = resp;
    (void)version;
    r->done = true;
    r->how = how;
    r->err = how == NET_DETACHED_RESPONDED && rs->Topics.n > 0 ? rs->Topics.v[0].ErrorCode : -9999;
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

/* CreateTopics v5 for one topic; runs the loop until answered. */
static int create(struct afx *f, const char *name, int32_t partitions, int16_t rf)
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
        net_request_detached_new(PROTO_API_CreateTopics, 5, rq, ar, on_created, &r);
    if (req == NULL)
        return -9997;
    admin_create_topics(f->admin, req);
    if (!fixture_run_until(&f->q.loop, &r.done, 5000))
        return -9996;
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
    afx_close(&f);
}
