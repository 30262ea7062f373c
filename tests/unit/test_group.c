/* SPDX-License-Identifier: Apache-2.0 */
/* group coordinator unit tests: the handlers called directly on detached requests, against a
 * replica manager and an admin on a real single-voter metadata quorum, on a virtual clock.
 * __consumer_offsets is created the way tallyd creates it (FindCoordinator asks admin), its
 * partitions are replayed when the coordinator (re)starts or leadership comes back, and
 * leadership is moved away by proposing partition records that name another broker. */
#include "harness.h"
#include "fixture.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "admin/admin.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/jhash.h"
#include "base/props.h"
#include "base/tclock.h"
#include "group/group.h"
#include "meta/meta.h"
#include "net/net.h"
#include "proto/proto.h"
#include "record/record.h"
#include "replica/replica.h"

#define NODE 1
#define OTHER 2
#define T0 1600000000000LL
#define N_OFFSETS_PARTITIONS 3

/* ---- fixture ------------------------------------------------------------------------------ */

struct gfx {
    struct fixture_coord c;
    struct group_coord *gc;
};

static int ensure(void *arg, const char *name, int32_t partitions, int16_t rf, int32_t n,
                  const char *const *keys, const char *const *values)
{
    struct gfx *f = arg;
    return admin_ensure_internal_topic(f->c.admin, name, partitions, rf, n, keys, values);
}

static bool gc_start(struct gfx *f)
{
    struct group_coord_options o = {
        .loop = &f->c.q.loop,
        .clock = f->c.clock,
        .replicas = f->c.rm,
        .meta = f->c.q.m,
        .config = f->c.props,
        .node_id = NODE,
        .ensure_topic = ensure,
        .ensure_arg = f,
    };
    f->gc = group_coord_new(&o);
    return f->gc != NULL;
}

static bool gc_stop(struct gfx *f)
{
    bool stopped = false;
    group_coord_stop(f->gc, fixture_set_flag, &stopped);
    f->gc = NULL;
    return fixture_run_until(&f->c.q.loop, &stopped, 5000);
}

/* Runs the loop until nothing is being opened, announced or loaded (5 s at most). */
static bool settle(struct gfx *f)
{
    for (int i = 0; i < 50000; i++) {
        int32_t led = 0, loading = 0;
        if (f->gc)
            group_coord_shards(f->gc, &led, &loading);
        if (replica_opens_pending(f->c.rm) == 0 && replica_events_pending(f->c.rm) == 0 &&
            loading == 0)
            return true;
        uv_run(&f->c.q.loop, UV_RUN_NOWAIT);
        usleep(100);
    }
    return false;
}

/* The shared coordinator fixture (fixture_coord) and a coordinator. `kv` are extra config
 * pairs, NULL-terminated. */
static bool gfx_open(struct gfx *f, const char *const *kv)
{
    static const char *const defaults[] = {"offsets.topic.num.partitions", "3",
                                           "group.initial.rebalance.delay.ms", "0", NULL};
    memset(f, 0, sizeof *f);
    return fixture_coord_open(&f->c, "/tmp/tally-grp-XXXXXX", T0, defaults, kv) && gc_start(f) &&
           settle(f);
}

static void gfx_close(struct gfx *f)
{
    if (f->gc)
        CHECK(gc_stop(f));
    CHECK(fixture_coord_close(&f->c));
}

/* Moves leadership of __consumer_offsets partition `p` to `leader` at a new epoch. */
static int move_leader(struct gfx *f, int32_t p, int32_t leader)
{
    static const int32_t both[] = {NODE, OTHER};
    const struct meta_topic *t = meta_topic_by_name(f->c.q.m, GROUP_TOPIC);
    struct meta_record r = {.type = META_REC_PARTITION};
    if (t == NULL || p >= t->n_partitions)
        return -1;
    memcpy(r.u.partition.topic_id, t->id, 16);
    r.u.partition.partition = p;
    r.u.partition.leader = leader;
    r.u.partition.leader_epoch = t->partitions[p].leader_epoch + 1;
    r.u.partition.partition_epoch = t->partitions[p].partition_epoch + 1;
    r.u.partition.n_replicas = r.u.partition.n_isr = 2;
    r.u.partition.replicas = r.u.partition.isr = both;
    return fixture_meta_propose(&f->c.q, &r, 1);
}

/* ---- detached requests and their answers --------------------------------------------------- */

struct reply {
    int calls;
    int16_t api;
    enum net_detached_end how;
    int16_t err;  /* the answer's top-level (or first group's / first key's) error */
    int16_t perr; /* the first partition's error */
    int64_t offset;
    char metadata[64];
    int32_t node, port;
    int32_t gen;
    char member[160], leader[160], state[32];
    int32_t n; /* members / groups / coordinators */
    int32_t ops;
    int32_t assignment_len;
};

static void copy_str(char *dst, size_t cap, const char *s)
{
    snprintf(dst, cap, "%s", s ? s : "(null)");
}

static void on_reply(void *arg, enum net_detached_end how, int16_t version, const void *resp)
{
    struct reply *r = arg;
    r->calls++;
    r->how = how;
    if (resp == NULL)
        return;
    switch (r->api) {
    case PROTO_API_FindCoordinator: {
        const struct FindCoordinatorResponse *rs = resp;
        if (version >= 4) {
            r->n = rs->Coordinators.n;
            if (rs->Coordinators.n > 0) {
                r->err = rs->Coordinators.v[0].ErrorCode;
                r->node = rs->Coordinators.v[0].NodeId;
                r->port = rs->Coordinators.v[0].Port;
            }
            if (rs->Coordinators.n > 1)
                r->perr = rs->Coordinators.v[1].ErrorCode;
        } else {
            r->err = rs->ErrorCode;
            r->node = rs->NodeId;
            r->port = rs->Port;
        }
        break;
    }
    case PROTO_API_TxnOffsetCommit: {
        const struct TxnOffsetCommitResponse *rs = resp;
        r->perr = rs->Topics.n > 0 && rs->Topics.v[0].Partitions.n > 0
                      ? rs->Topics.v[0].Partitions.v[0].ErrorCode
                      : -999;
        break;
    }
    case PROTO_API_OffsetCommit: {
        const struct OffsetCommitResponse *rs = resp;
        r->perr = rs->Topics.n > 0 && rs->Topics.v[0].Partitions.n > 0
                      ? rs->Topics.v[0].Partitions.v[0].ErrorCode
                      : -999;
        break;
    }
    case PROTO_API_OffsetFetch: {
        const struct OffsetFetchResponse *rs = resp;
        if (rs->Groups.n > 0) {
            const struct OffsetFetchResponseGroup *g = &rs->Groups.v[0];
            r->err = g->ErrorCode;
            r->n = g->Topics.n;
            if (g->Topics.n > 0 && g->Topics.v[0].Partitions.n > 0) {
                const struct OffsetFetchResponsePartitions *p = &g->Topics.v[0].Partitions.v[0];
                r->perr = p->ErrorCode;
                r->offset = p->CommittedOffset;
                copy_str(r->metadata, sizeof r->metadata, p->Metadata);
            }
        }
        break;
    }
    case PROTO_API_JoinGroup: {
        const struct JoinGroupResponse *rs = resp;
        r->err = rs->ErrorCode;
        r->gen = rs->GenerationId;
        r->n = rs->Members.n;
        copy_str(r->member, sizeof r->member, rs->MemberId);
        copy_str(r->leader, sizeof r->leader, rs->Leader);
        break;
    }
    case PROTO_API_SyncGroup: {
        const struct SyncGroupResponse *rs = resp;
        r->err = rs->ErrorCode;
        r->assignment_len = rs->Assignment.len;
        break;
    }
    case PROTO_API_Heartbeat:
        r->err = ((const struct HeartbeatResponse *)resp)->ErrorCode;
        break;
    case PROTO_API_DeleteGroups: {
        const struct DeleteGroupsResponse *rs = resp;
        r->err = rs->Results.n > 0 ? rs->Results.v[0].ErrorCode : -999;
        break;
    }
    case PROTO_API_OffsetDelete: {
        const struct OffsetDeleteResponse *rs = resp;
        r->err = rs->ErrorCode;
        r->perr = rs->Topics.n > 0 && rs->Topics.v[0].Partitions.n > 0
                      ? rs->Topics.v[0].Partitions.v[0].ErrorCode
                      : -999;
        break;
    }
    case PROTO_API_DescribeGroups: {
        const struct DescribeGroupsResponse *rs = resp;
        if (rs->Groups.n > 0) {
            r->err = rs->Groups.v[0].ErrorCode;
            copy_str(r->state, sizeof r->state, rs->Groups.v[0].GroupState);
            r->n = rs->Groups.v[0].Members.n;
            r->ops = rs->Groups.v[0].AuthorizedOperations;
        }
        break;
    }
    case PROTO_API_ListGroups: {
        const struct ListGroupsResponse *rs = resp;
        r->err = rs->ErrorCode;
        r->n = rs->Groups.n;
        break;
    }
    default:
        break;
    }
}

/* Calls the handler of `api` on a detached request; the reply lands in *r. */
static void call(struct gfx *f, int16_t api, int16_t version, void *body, struct arena *ar,
                 struct reply *r)
{
    struct net_request *req;
    memset(r, 0, sizeof *r);
    r->api = api;
    req = net_request_detached_new(api, version, body, ar, on_reply, r);
    if (req == NULL) {
        r->err = -9999;
        return;
    }
    switch (api) {
    case PROTO_API_FindCoordinator:
        group_find_coordinator(f->gc, req);
        break;
    case PROTO_API_OffsetCommit:
        group_offset_commit(f->gc, req);
        break;
    case PROTO_API_TxnOffsetCommit:
        group_txn_offset_commit_request(f->gc, req);
        break;
    case PROTO_API_OffsetFetch:
        group_offset_fetch(f->gc, req);
        break;
    case PROTO_API_JoinGroup:
        group_join_group(f->gc, req);
        break;
    case PROTO_API_SyncGroup:
        group_sync_group(f->gc, req);
        break;
    case PROTO_API_Heartbeat:
        group_heartbeat(f->gc, req);
        break;
    case PROTO_API_DeleteGroups:
        group_delete_groups(f->gc, req);
        break;
    case PROTO_API_OffsetDelete:
        group_offset_delete(f->gc, req);
        break;
    case PROTO_API_DescribeGroups:
        group_describe_groups(f->gc, req);
        break;
    case PROTO_API_ListGroups:
        group_list_groups(f->gc, req);
        break;
    default:
        break;
    }
}

static void *body(struct arena **ar, size_t size)
{
    void *b;
    *ar = arena_new(32 << 20);
    b = *ar ? arena_alloc(*ar, size) : NULL;
    if (b)
        memset(b, 0, size);
    return b;
}

static void find_coordinator(struct gfx *f, const char *key, struct reply *r)
{
    struct arena *ar;
    struct FindCoordinatorRequest *rq = body(&ar, sizeof *rq);
    rq->Key = (char *)key;
    call(f, PROTO_API_FindCoordinator, 3, rq, ar, r);
}

static void commit(struct gfx *f, const char *group, int32_t gen, const char *member,
                   const char *topic, int32_t part, int64_t offset, const char *md, struct reply *r)
{
    struct arena *ar;
    struct OffsetCommitRequest *rq = body(&ar, sizeof *rq);
    struct OffsetCommitRequestTopic *t = arena_alloc(ar, sizeof *t);
    struct OffsetCommitRequestPartition *p = arena_alloc(ar, sizeof *p);
    rq->GroupId = (char *)group;
    rq->GenerationIdOrMemberEpoch = gen;
    rq->MemberId = (char *)member;
    rq->Topics.v = t;
    rq->Topics.n = 1;
    t->Name = (char *)topic;
    t->Partitions.v = p;
    t->Partitions.n = 1;
    *p = (struct OffsetCommitRequestPartition){part, offset, -1, -1, (char *)md};
    call(f, PROTO_API_OffsetCommit, 8, rq, ar, r);
}

static void fetch(struct gfx *f, const char *group, const char *topic, int32_t part, bool stable,
                  struct reply *r)
{
    struct arena *ar;
    struct OffsetFetchRequest *rq = body(&ar, sizeof *rq);
    struct OffsetFetchRequestGroup *g = arena_alloc(ar, sizeof *g);
    struct OffsetFetchRequestTopics *t = arena_alloc(ar, sizeof *t);
    int32_t *idx = arena_alloc(ar, sizeof *idx);
    *idx = part;
    t->Name = (char *)topic;
    t->PartitionIndexes.v = idx;
    t->PartitionIndexes.n = 1;
    g->GroupId = (char *)group;
    g->Topics.v = t;
    g->Topics.n = 1;
    rq->Groups.v = g;
    rq->Groups.n = 1;
    rq->RequireStable = stable;
    call(f, PROTO_API_OffsetFetch, 8, rq, ar, r);
}

/* A consumer-protocol subscription to `topic` (ConsumerProtocolSubscription v0). */
static uint8_t *subscription(const char *topic, int32_t *len)
{
    static uint8_t buf[256];
    char *topics[1] = {(char *)topic};
    struct ConsumerProtocolSubscription s = {0};
    s.Topics.v = topics;
    s.Topics.n = 1;
    s.UserData.len = -1;
    *len = (int32_t)proto_record_encode(&proto_record_ConsumerProtocolSubscription, 0, &s, buf);
    return buf;
}

static void join(struct gfx *f, const char *group, const char *member, const uint8_t *md,
                 int32_t md_len, int32_t n_protocols, struct reply *r)
{
    struct arena *ar;
    struct JoinGroupRequest *rq = body(&ar, sizeof *rq);
    struct JoinGroupRequestProtocol *p = arena_alloc(ar, sizeof *p);
    rq->GroupId = (char *)group;
    rq->SessionTimeoutMs = 10000;
    rq->RebalanceTimeoutMs = 10000;
    rq->MemberId = (char *)member;
    rq->ProtocolType = "consumer";
    p->Name = "range";
    p->Metadata.data = md;
    p->Metadata.len = md_len;
    rq->Protocols.v = p;
    rq->Protocols.n = n_protocols;
    call(f, PROTO_API_JoinGroup, 9, rq, ar, r);
}

static void sync_group(struct gfx *f, const char *group, const char *member, int32_t gen,
                       struct reply *r)
{
    struct arena *ar;
    struct SyncGroupRequest *rq = body(&ar, sizeof *rq);
    struct SyncGroupRequestAssignment *a = arena_alloc(ar, sizeof *a);
    static const uint8_t assignment[] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    rq->GroupId = (char *)group;
    rq->GenerationId = gen;
    rq->MemberId = arena_strndup(ar, member, strlen(member));
    a->MemberId = rq->MemberId;
    a->Assignment.data = assignment;
    a->Assignment.len = sizeof assignment;
    rq->Assignments.v = a;
    rq->Assignments.n = 1;
    call(f, PROTO_API_SyncGroup, 5, rq, ar, r);
}

static void describe(struct gfx *f, const char *group, struct reply *r)
{
    struct arena *ar;
    struct DescribeGroupsRequest *rq = body(&ar, sizeof *rq);
    char **names = arena_alloc(ar, sizeof *names);
    names[0] = (char *)group;
    rq->Groups.v = names;
    rq->Groups.n = 1;
    rq->IncludeAuthorizedOperations = true;
    call(f, PROTO_API_DescribeGroups, 5, rq, ar, r);
}

static void delete_group(struct gfx *f, const char *group, struct reply *r)
{
    struct arena *ar;
    struct DeleteGroupsRequest *rq = body(&ar, sizeof *rq);
    char **names = arena_alloc(ar, sizeof *names);
    names[0] = (char *)group;
    rq->GroupsNames.v = names;
    rq->GroupsNames.n = 1;
    call(f, PROTO_API_DeleteGroups, 2, rq, ar, r);
}

static void offset_delete(struct gfx *f, const char *group, const char *topic, int32_t part,
                          struct reply *r)
{
    struct arena *ar;
    struct OffsetDeleteRequest *rq = body(&ar, sizeof *rq);
    struct OffsetDeleteRequestTopic *t = arena_alloc(ar, sizeof *t);
    struct OffsetDeleteRequestPartition *p = arena_alloc(ar, sizeof *p);
    p->PartitionIndex = part;
    t->Name = (char *)topic;
    t->Partitions.v = p;
    t->Partitions.n = 1;
    rq->GroupId = (char *)group;
    rq->Topics.v = t;
    rq->Topics.n = 1;
    call(f, PROTO_API_OffsetDelete, 0, rq, ar, r);
}

/* FindCoordinator for `group` until __consumer_offsets exists and its shards loaded. */
static bool coordinator_ready(struct gfx *f, const char *group)
{
    struct reply r;
    for (int i = 0; i < 20; i++) {
        find_coordinator(f, group, &r);
        if (r.calls == 1 && r.err == 0)
            return settle(f);
        /* The creation is a metadata proposal: wait for it to apply. */
        for (int j = 0; j < 30000 && meta_topic_by_name(f->c.q.m, GROUP_TOPIC) == NULL; j++) {
            uv_run(&f->c.q.loop, UV_RUN_NOWAIT);
            usleep(100);
        }
        settle(f);
        tclock_advance(f->c.clock, 1000); /* the topic is asked for at most once a second */
    }
    return false;
}

/* A member joined and synced as the leader of a one-member consumer group on "orders":
 * member id in *member, generation in *gen. */
static bool stable_member(struct gfx *f, const char *group, char *member, size_t cap, int32_t *gen)
{
    struct reply r;
    int32_t len;
    const uint8_t *md = subscription("orders", &len);

    join(f, group, "", md, len, 1, &r);
    if (r.calls != 1 || r.err != ERR_MEMBER_ID_REQUIRED)
        return false;
    snprintf(member, cap, "%s", r.member);
    join(f, group, member, md, len, 1, &r);
    for (int i = 0; i < 100 && r.calls == 0; i++) {
        settle(f);
        tclock_advance(f->c.clock, 100);
    }
    if (r.calls != 1 || r.err != 0)
        return false;
    *gen = r.gen;
    sync_group(f, group, member, *gen, &r);
    settle(f);
    return r.calls == 1 && r.err == 0;
}

/* ---- javaHash ---------------------------------------------------------------------------- */

/* Expected values computed from Java's definition (s[0]*31^(n-1) + ... over UTF-16 units). */
TEST(java_string_hash_matches_java_string_hash_code)
{
    CHECK_EQ_INT(java_string_hash(""), 0);
    CHECK_EQ_INT(java_string_hash("a"), 97);
    CHECK_EQ_INT(java_string_hash("ab"), 3105);
    CHECK_EQ_INT(java_string_hash("h\xc3\xa9llo"), 103094734); /* héllo */
    CHECK_EQ_INT(java_string_hash("gr\xc3\xbc\xc3\x9f"
                                  "e-Gruppe"),
                 -835863727);                                      /* grüße-Gruppe */
    CHECK_EQ_INT(java_string_hash("\xf0\x9f\x98\x80x"), 54959989); /* U+1F600 'x': a pair */
    CHECK_EQ_INT(java_string_hash("consumer-group-1"), 147483020);
    /* "polygenelubricants".hashCode() is Integer.MIN_VALUE: Kafka's Utils.abs gives 0. */
    CHECK_EQ_INT(java_string_hash("polygenelubricants"), INT32_MIN);
    CHECK_EQ_INT(group_partition_for("polygenelubricants", 50), 0);
    CHECK_EQ_INT(group_partition_for("grüße-Gruppe", 50), 835863727 % 50);
    CHECK_EQ_INT(group_partition_for("ab", 50), 3105 % 50);
}

/* ---- FindCoordinator --------------------------------------------------------------------- */

/* Without __consumer_offsets the first FindCoordinator answers COORDINATOR_NOT_AVAILABLE and
 * has admin create the topic (3 partitions, compacted; replication factor capped at the
 * live brokers); once its partitions are led and loaded here, this node is the answer. */
TEST(group_find_coordinator_creates_the_topic_then_answers_this_node)
{
    struct gfx f;
    struct reply r;
    const struct meta_topic *t;

    REQUIRE(gfx_open(&f, NULL));
    find_coordinator(&f, "g1", &r);
    CHECK_EQ_INT(r.calls, 1);
    CHECK_EQ_INT(r.err, ERR_COORDINATOR_NOT_AVAILABLE);
    CHECK_EQ_INT(r.node, -1);
    REQUIRE(coordinator_ready(&f, "g1"));
    t = meta_topic_by_name(f.c.q.m, GROUP_TOPIC);
    REQUIRE(t != NULL);
    CHECK_EQ_INT(t->n_partitions, N_OFFSETS_PARTITIONS);
    CHECK_EQ_STR(meta_config_get(f.c.q.m, 2, GROUP_TOPIC, "cleanup.policy"), "compact");
    CHECK_EQ_STR(meta_config_get(f.c.q.m, 2, GROUP_TOPIC, "segment.bytes"), "104857600");
    CHECK_EQ_STR(meta_config_get(f.c.q.m, 2, GROUP_TOPIC, "compression.type"), "producer");
    find_coordinator(&f, "g1", &r);
    CHECK_EQ_INT(r.err, 0);
    CHECK_EQ_INT(r.node, NODE);
    CHECK_EQ_INT(r.port, 9092);
    int32_t led, loading;
    group_coord_shards(f.gc, &led, &loading);
    CHECK_EQ_INT(led, N_OFFSETS_PARTITIONS);
    CHECK_EQ_INT(loading, 0);

    /* v4 batches keys; key type 1 (transactions) first asks for __transaction_state. */
    struct arena *ar;
    struct FindCoordinatorRequest *rq = body(&ar, sizeof *rq);
    char **keys = arena_alloc(ar, 2 * sizeof *keys);
    keys[0] = "g1";
    keys[1] = "g2";
    rq->CoordinatorKeys.v = keys;
    rq->CoordinatorKeys.n = 2;
    call(&f, PROTO_API_FindCoordinator, 4, rq, ar, &r);
    CHECK_EQ_INT(r.n, 2);
    CHECK_EQ_INT(r.err, 0);
    CHECK_EQ_INT(r.perr, 0);
    rq = body(&ar, sizeof *rq);
    rq->Key = "tx";
    rq->KeyType = 1;
    call(&f, PROTO_API_FindCoordinator, 3, rq, ar, &r);
    CHECK_EQ_INT(r.err, ERR_COORDINATOR_NOT_AVAILABLE);
    rq = body(&ar, sizeof *rq);
    rq->Key = "x";
    rq->KeyType = 7;
    call(&f, PROTO_API_FindCoordinator, 3, rq, ar, &r);
    CHECK_EQ_INT(r.err, ERR_INVALID_REQUEST);
    gfx_close(&f);
}

/* ---- offsets ------------------------------------------------------------------------------ */

/* A simple commit (generation -1, no member) is answered once durable and fetched back; an
 * unknown group fetches -1 without error; unknown partitions and oversized metadata fail
 * per partition; a non-negative generation for an unknown group is ILLEGAL_GENERATION. */
TEST(group_commit_then_fetch)
{
    static const char *const kv[] = {"offset.metadata.max.bytes", "10", NULL};
    struct gfx f;
    struct reply r;

    REQUIRE(gfx_open(&f, kv));
    REQUIRE(coordinator_ready(&f, "g"));
    commit(&f, "g", -1, "", "orders", 1, 42, "meta", &r);
    CHECK_EQ_INT(r.calls, 1);
    CHECK_EQ_INT(r.perr, 0);
    fetch(&f, "g", "orders", 1, false, &r);
    CHECK_EQ_INT(r.err, 0);
    CHECK_EQ_INT(r.perr, 0);
    CHECK_EQ_INT(r.offset, 42);
    CHECK_EQ_STR(r.metadata, "meta");
    fetch(&f, "nobody", "orders", 1, false, &r);
    CHECK_EQ_INT(r.err, 0);
    CHECK_EQ_INT(r.perr, 0);
    CHECK_EQ_INT(r.offset, -1);
    commit(&f, "g", -1, "", "orders", 9, 1, "", &r);
    CHECK_EQ_INT(r.perr, ERR_UNKNOWN_TOPIC_OR_PARTITION);
    commit(&f, "g", -1, "", "nope", 0, 1, "", &r);
    CHECK_EQ_INT(r.perr, ERR_UNKNOWN_TOPIC_OR_PARTITION);
    commit(&f, "g", -1, "", "orders", 1, 43, "01234567890", &r);
    CHECK_EQ_INT(r.perr, ERR_OFFSET_METADATA_TOO_LARGE);
    fetch(&f, "g", "orders", 1, false, &r);
    CHECK_EQ_INT(r.offset, 42);
    commit(&f, "other", 3, "m", "orders", 0, 1, "", &r);
    CHECK_EQ_INT(r.perr, ERR_ILLEGAL_GENERATION);
    gfx_close(&f);
}

/* Offsets and group metadata survive the coordinator going away and coming back: the new
 * one answers COORDINATOR_LOAD_IN_PROGRESS until the replay is done, then has them all. */
TEST(group_offsets_and_metadata_survive_reload)
{
    struct gfx f;
    struct reply r;
    char member[160];
    int32_t gen, led, loading;

    REQUIRE(gfx_open(&f, NULL));
    REQUIRE(coordinator_ready(&f, "keep"));
    commit(&f, "keep", -1, "", "orders", 0, 7, "x", &r);
    CHECK_EQ_INT(r.perr, 0);
    commit(&f, "keep", -1, "", "orders", 0, 8, "y", &r); /* the last value wins */
    CHECK_EQ_INT(r.perr, 0);
    REQUIRE(stable_member(&f, "grp", member, sizeof member, &gen));
    commit(&f, "grp", gen, member, "orders", 1, 99, "", &r);
    CHECK_EQ_INT(r.perr, 0);

    REQUIRE(gc_stop(&f));
    REQUIRE(gc_start(&f));
    group_coord_shards(f.gc, &led, &loading);
    CHECK_EQ_INT(led, N_OFFSETS_PARTITIONS);
    /* A partition with data is read on the thread pool: its shard is still loading (an
     * empty one is done at once). */
    CHECK(loading >= 1);
    fetch(&f, "keep", "orders", 0, false, &r);
    CHECK_EQ_INT(r.err, ERR_COORDINATOR_LOAD_IN_PROGRESS);
    find_coordinator(&f, "keep", &r);
    CHECK_EQ_INT(r.err, 0); /* FindCoordinator names the leader whatever its load */
    REQUIRE(settle(&f));
    fetch(&f, "keep", "orders", 0, false, &r);
    CHECK_EQ_INT(r.err, 0);
    CHECK_EQ_INT(r.offset, 8);
    CHECK_EQ_STR(r.metadata, "y");
    fetch(&f, "grp", "orders", 1, false, &r);
    CHECK_EQ_INT(r.offset, 99);
    describe(&f, "grp", &r);
    CHECK_EQ_INT(r.err, 0);
    CHECK_EQ_STR(r.state, "Stable");
    CHECK_EQ_INT(r.n, 1);
    CHECK_EQ_INT(r.ops, (1 << 3) | (1 << 6) | (1 << 8));
    /* The restored member may still commit at its generation. */
    commit(&f, "grp", gen, member, "orders", 1, 100, "", &r);
    CHECK_EQ_INT(r.perr, 0);
    gfx_close(&f);
}

/* Leadership moving away unloads the shard: its groups answer NOT_COORDINATOR, a JoinGroup
 * waiting in the join phase too; when leadership comes back the shard is replayed. */
TEST(group_follower_event_answers_not_coordinator)
{
    struct gfx f;
    struct reply r, waiting;
    const char *g = "movers";
    int32_t len, p;
    const uint8_t *md = subscription("orders", &len);

    REQUIRE(gfx_open(&f, NULL));
    REQUIRE(coordinator_ready(&f, g));
    /* A second broker to lead the partition (registered after the topic was created, so
     * that the topic's replicas are all here). */
    struct meta_record other = fixture_broker_rec(OTHER, 9093);
    REQUIRE(fixture_meta_propose(&f.c.q, &other, 1) == 0);
    p = group_partition_for(g, N_OFFSETS_PARTITIONS);
    commit(&f, g, -1, "", "orders", 0, 5, "", &r);
    CHECK_EQ_INT(r.perr, 0);
    /* A second group member's join parks while the first is known but has not rejoined. */
    char member[160];
    int32_t gen;
    REQUIRE(stable_member(&f, g, member, sizeof member, &gen));
    join(&f, g, member, md, len, 1, &waiting); /* a rejoin: rebalance, waits for the phase */
    REQUIRE(move_leader(&f, p, OTHER) == 0);
    REQUIRE(settle(&f));
    fetch(&f, g, "orders", 0, false, &r);
    CHECK_EQ_INT(r.err, ERR_NOT_COORDINATOR);
    commit(&f, g, -1, "", "orders", 0, 6, "", &r);
    CHECK_EQ_INT(r.perr, ERR_NOT_COORDINATOR);
    find_coordinator(&f, g, &r);
    CHECK_EQ_INT(r.node, OTHER);
    if (waiting.calls == 1)
        CHECK(waiting.err == ERR_NOT_COORDINATOR || waiting.err == 0);
    REQUIRE(move_leader(&f, p, NODE) == 0);
    REQUIRE(settle(&f));
    fetch(&f, g, "orders", 0, false, &r);
    CHECK_EQ_INT(r.err, 0);
    CHECK_EQ_INT(r.offset, 5);
    gfx_close(&f);
}

/* An Empty group's offsets expire offsets.retention.minutes after their commit (simple
 * commits) — checked every offsets.retention.check.interval.ms — with tombstones, so a
 * replay does not bring them back; a fresher commit stays. */
TEST(group_expiry_writes_tombstones)
{
    static const char *const kv[] = {"offsets.retention.minutes", "1",
                                     "offsets.retention.check.interval.ms", "1000", NULL};
    struct gfx f;
    struct reply r;

    REQUIRE(gfx_open(&f, kv));
    REQUIRE(coordinator_ready(&f, "old"));
    commit(&f, "old", -1, "", "orders", 0, 11, "", &r);
    CHECK_EQ_INT(r.perr, 0);
    tclock_advance(f.c.clock, 30000);
    commit(&f, "fresh", -1, "", "orders", 0, 12, "", &r);
    CHECK_EQ_INT(r.perr, 0);
    tclock_advance(f.c.clock, 31000); /* "old" is 61 s old, "fresh" 31 s */
    settle(&f);
    fetch(&f, "old", "orders", 0, false, &r);
    CHECK_EQ_INT(r.offset, -1);
    fetch(&f, "fresh", "orders", 0, false, &r);
    CHECK_EQ_INT(r.offset, 12);
    REQUIRE(gc_stop(&f));
    REQUIRE(gc_start(&f));
    REQUIRE(settle(&f));
    fetch(&f, "old", "orders", 0, false, &r);
    CHECK_EQ_INT(r.offset, -1);
    fetch(&f, "fresh", "orders", 0, false, &r);
    CHECK_EQ_INT(r.offset, 12);
    gfx_close(&f);
}

/* DeleteGroups: unknown → GROUP_ID_NOT_FOUND, with a member → NON_EMPTY_GROUP, Empty →
 * deleted with tombstones (gone after a replay too). OffsetDelete: unknown group →
 * GROUP_ID_NOT_FOUND, a topic the Stable consumer group subscribes to →
 * GROUP_SUBSCRIBED_TO_TOPIC, another topic's offset goes. */
TEST(group_delete_groups_and_offset_delete_errors)
{
    struct gfx f;
    struct reply r;
    char member[160];
    int32_t gen;

    REQUIRE(gfx_open(&f, NULL));
    REQUIRE(coordinator_ready(&f, "x"));
    delete_group(&f, "unknown", &r);
    CHECK_EQ_INT(r.err, ERR_GROUP_ID_NOT_FOUND);
    offset_delete(&f, "unknown", "orders", 0, &r);
    CHECK_EQ_INT(r.err, ERR_GROUP_ID_NOT_FOUND);

    REQUIRE(stable_member(&f, "busy", member, sizeof member, &gen));
    delete_group(&f, "busy", &r);
    CHECK_EQ_INT(r.err, ERR_NON_EMPTY_GROUP);
    offset_delete(&f, "busy", "orders", 0, &r);
    CHECK_EQ_INT(r.err, 0);
    CHECK_EQ_INT(r.perr, ERR_GROUP_SUBSCRIBED_TO_TOPIC);

    commit(&f, "simple", -1, "", "orders", 0, 3, "", &r);
    commit(&f, "simple", -1, "", "orders", 1, 4, "", &r);
    offset_delete(&f, "simple", "orders", 1, &r);
    CHECK_EQ_INT(r.err, 0);
    CHECK_EQ_INT(r.perr, 0);
    fetch(&f, "simple", "orders", 1, false, &r);
    CHECK_EQ_INT(r.offset, -1);
    delete_group(&f, "simple", &r);
    CHECK_EQ_INT(r.calls, 1);
    CHECK_EQ_INT(r.err, 0);
    fetch(&f, "simple", "orders", 0, false, &r);
    CHECK_EQ_INT(r.offset, -1);
    describe(&f, "simple", &r);
    CHECK_EQ_STR(r.state, "Dead");
    REQUIRE(gc_stop(&f));
    REQUIRE(gc_start(&f));
    REQUIRE(settle(&f));
    fetch(&f, "simple", "orders", 0, false, &r);
    CHECK_EQ_INT(r.offset, -1);
    gfx_close(&f);
}

/* Bad input: no protocols, oversized protocol metadata, Heartbeat for an unknown group,
 * empty group ids, a 300-character group id (accepted, as Kafka). */
TEST(group_bad_input)
{
    struct gfx f;
    struct reply r;
    static uint8_t big[(1 << 20) + 1];
    char longid[301];

    REQUIRE(gfx_open(&f, NULL));
    REQUIRE(coordinator_ready(&f, "x"));
    join(&f, "bad", "", NULL, 0, 0, &r);
    CHECK_EQ_INT(r.calls, 1);
    CHECK_EQ_INT(r.err, ERR_INCONSISTENT_GROUP_PROTOCOL);
    join(&f, "bad", "", big, sizeof big, 1, &r);
    CHECK_EQ_INT(r.calls, 1);
    CHECK_EQ_INT(r.err, ERR_INVALID_REQUEST);
    join(&f, "", "", big, 10, 1, &r);
    CHECK_EQ_INT(r.err, ERR_INVALID_GROUP_ID);

    struct arena *ar;
    struct HeartbeatRequest *hb = body(&ar, sizeof *hb);
    hb->GroupId = "never-seen";
    hb->MemberId = "m";
    hb->GenerationId = 1;
    call(&f, PROTO_API_Heartbeat, 4, hb, ar, &r);
    CHECK_EQ_INT(r.err, ERR_UNKNOWN_MEMBER_ID);
    hb = body(&ar, sizeof *hb);
    hb->GroupId = "";
    hb->MemberId = "m";
    call(&f, PROTO_API_Heartbeat, 4, hb, ar, &r);
    CHECK_EQ_INT(r.err, ERR_INVALID_GROUP_ID);

    memset(longid, 'L', 300);
    longid[300] = '\0';
    REQUIRE(coordinator_ready(&f, longid));
    commit(&f, longid, -1, "", "orders", 0, 1, "", &r);
    CHECK_EQ_INT(r.perr, 0);
    fetch(&f, longid, "orders", 0, false, &r);
    CHECK_EQ_INT(r.offset, 1);
    /* Offset commits keep the empty group id (Kafka does, for old clients). */
    REQUIRE(coordinator_ready(&f, ""));
    commit(&f, "", -1, "", "orders", 0, 2, "", &r);
    CHECK_EQ_INT(r.perr, 0);
    gfx_close(&f);
}

/* ---- transactional offsets ---------------------------------------------------------------- */

struct txn_done {
    int calls;
    int16_t err;
};

static void on_txn_done(void *arg, int16_t err)
{
    struct txn_done *d = arg;
    d->calls++;
    d->err = err;
}

/* Appends a COMMIT or ABORT marker of the producer to the group's partition, as the
 * transaction coordinator will, and tells the group coordinator. */
static int marker(struct gfx *f, const char *group, int64_t pid, int16_t epoch, bool commit_it)
{
    int32_t p = group_partition_for(group, N_OFFSETS_PARTITIONS);
    struct partition *part = replica_partition(f->c.rm, GROUP_TOPIC, p);
    struct record_batch hdr;
    uint8_t *buf;
    size_t len;
    int64_t base, at;
    int rc;

    if (part == NULL)
        return -1;
    rc = record_build_control(pid, epoch, 0,
                              commit_it ? RECORD_CONTROL_COMMIT : RECORD_CONTROL_ABORT,
                              tclock_now_ms(f->c.clock), &buf, &len);
    if (rc != 0)
        return rc;
    rc = record_batch_validate(buf, len, &hdr);
    if (rc == 0)
        rc = partition_append(part, buf, len, &hdr, &base, &at);
    free(buf);
    if (rc == 0)
        group_txn_complete(f->gc, p, pid, commit_it);
    return rc;
}

/* TxnOffsetCommit's offsets stay pending (RequireStable: UNSTABLE_OFFSET_COMMIT) until the
 * producer's marker: COMMIT makes them the group's, ABORT drops them — live and on replay. */
TEST(group_txn_offsets_materialise_on_commit_and_vanish_on_abort)
{
    struct gfx f;
    struct reply r;
    struct txn_done d = {0};
    int16_t errs[2];
    struct group_txn_offset offs[2] = {{"orders", 0, 70, -1, "t"}, {"nope", 0, 1, -1, NULL}};

    REQUIRE(gfx_open(&f, NULL));
    REQUIRE(coordinator_ready(&f, "eos"));
    group_txn_offset_commit(f.gc, "eos", 1000, 0, "", NULL, -1, offs, 2, errs, on_txn_done, &d);
    CHECK_EQ_INT(d.calls, 1);
    CHECK_EQ_INT(d.err, 0);
    CHECK_EQ_INT(errs[0], 0);
    CHECK_EQ_INT(errs[1], ERR_UNKNOWN_TOPIC_OR_PARTITION);
    CHECK(group_offsets_pending(f.gc, "eos", "orders", 0));
    fetch(&f, "eos", "orders", 0, false, &r);
    CHECK_EQ_INT(r.offset, -1);
    fetch(&f, "eos", "orders", 0, true, &r);
    CHECK_EQ_INT(r.perr, ERR_UNSTABLE_OFFSET_COMMIT);
    REQUIRE(marker(&f, "eos", 1000, 0, true) == 0);
    CHECK(!group_offsets_pending(f.gc, "eos", "orders", 0));
    fetch(&f, "eos", "orders", 0, true, &r);
    CHECK_EQ_INT(r.perr, 0);
    CHECK_EQ_INT(r.offset, 70);

    /* Aborted: the committed offset stays 70. A second transaction of the same producer
     * continues its sequence on the partition. */
    offs[0].offset = 80;
    memset(&d, 0, sizeof d);
    group_txn_offset_commit(f.gc, "eos", 1000, 0, "", NULL, -1, offs, 1, errs, on_txn_done, &d);
    CHECK_EQ_INT(d.err, 0);
    REQUIRE(marker(&f, "eos", 1000, 0, false) == 0);
    fetch(&f, "eos", "orders", 0, false, &r);
    CHECK_EQ_INT(r.offset, 70);
    offs[0].offset = 90;
    memset(&d, 0, sizeof d);
    group_txn_offset_commit(f.gc, "eos", 1000, 0, "", NULL, -1, offs, 1, errs, on_txn_done, &d);
    CHECK_EQ_INT(d.err, 0);

    /* Replay: 70 committed, 80 aborted, 90 still pending (no marker yet). */
    REQUIRE(gc_stop(&f));
    REQUIRE(gc_start(&f));
    REQUIRE(settle(&f));
    fetch(&f, "eos", "orders", 0, false, &r);
    CHECK_EQ_INT(r.offset, 70);
    CHECK(group_offsets_pending(f.gc, "eos", "orders", 0));
    REQUIRE(marker(&f, "eos", 1000, 0, true) == 0);
    fetch(&f, "eos", "orders", 0, false, &r);
    CHECK_EQ_INT(r.offset, 90);
    gfx_close(&f);
}

/* ---- replay in slices ---------------------------------------------------------------------- */

/* A partition holding more than a few MiB is replayed a read (at most 1 MiB) per loop turn:
 * the loop keeps turning while the shard loads, other shards answer meanwhile, and the last
 * value of each key wins. */
TEST(group_load_reads_in_bounded_slices)
{
    struct gfx f;
    struct reply r;
    char md[4001];
    int turns_loading = 0;

    memset(md, 'm', 4000);
    md[4000] = '\0';
    REQUIRE(gfx_open(&f, NULL));
    REQUIRE(coordinator_ready(&f, "big"));
    for (int i = 0; i < 1000; i++) {
        commit(&f, "big", -1, "", "orders", i % 2, i, md, &r);
        REQUIRE(r.perr == 0);
    }
    REQUIRE(gc_stop(&f));
    REQUIRE(gc_start(&f));
    uint64_t reads0 = group_coord_load_reads(f.gc);
    for (int i = 0; i < 50000; i++) {
        int32_t led, loading;
        group_coord_shards(f.gc, &led, &loading);
        if (loading == 0)
            break;
        turns_loading++;
        /* Another group (on another shard) is answered while "big" loads. */
        if (turns_loading == 1) {
            int32_t p = group_partition_for("big", N_OFFSETS_PARTITIONS);
            const char *other = NULL;
            static const char *const names[] = {"a", "b", "c", "d", "e", "f"};
            for (int k = 0; k < 6 && other == NULL; k++)
                if (group_partition_for(names[k], N_OFFSETS_PARTITIONS) != p)
                    other = names[k];
            REQUIRE(other != NULL);
            fetch(&f, other, "orders", 0, false, &r);
            CHECK_EQ_INT(r.err, 0);
            fetch(&f, "big", "orders", 0, false, &r);
            CHECK_EQ_INT(r.err, ERR_COORDINATOR_LOAD_IN_PROGRESS);
        }
        uv_run(&f.c.q.loop, UV_RUN_NOWAIT);
        usleep(200);
    }
    /* About 4 MiB of records: at least four reads of at most 1 MiB, each parsed in a loop
     * turn of its own. */
    CHECK(group_coord_load_reads(f.gc) - reads0 >= 4);
    CHECK(turns_loading >= 4);
    fetch(&f, "big", "orders", 0, false, &r);
    CHECK_EQ_INT(r.offset, 998);
    fetch(&f, "big", "orders", 1, false, &r);
    CHECK_EQ_INT(r.offset, 999);
    gfx_close(&f);
}

/* ---- TxnOffsetCommit's handler (issue 10, txn_offset_commit.c) ------------------------------ */

static void txn_commit(struct gfx *f, int16_t version, const char *group, int64_t pid, int32_t gen,
                       const char *member, int64_t offset, struct reply *r)
{
    struct arena *ar;
    struct TxnOffsetCommitRequest *rq = body(&ar, sizeof *rq);
    struct TxnOffsetCommitRequestTopic *t = arena_alloc(ar, sizeof *t);
    struct TxnOffsetCommitRequestPartition *p = arena_alloc(ar, sizeof *p);
    rq->TransactionalId = "copier";
    rq->GroupId = (char *)group;
    rq->ProducerId = pid;
    rq->ProducerEpoch = 0;
    rq->GenerationId = gen;
    rq->MemberId = (char *)member;
    rq->Topics.v = t;
    rq->Topics.n = 1;
    t->Name = "orders";
    t->Partitions.v = p;
    t->Partitions.n = 1;
    *p = (struct TxnOffsetCommitRequestPartition){0, offset, -1, NULL};
    call(f, PROTO_API_TxnOffsetCommit, version, rq, ar, r);
    for (int i = 0; i < 50 && r->calls == 0; i++)
        settle(f);
}

/* KIP-447: a zombie's TxnOffsetCommit (old generation, unknown member) is refused, so its
 * transaction aborts; the live member's offsets stay pending until the COMMIT marker. */
TEST(group_txn_offset_commit_handler_fences_stale_members)
{
    struct gfx f;
    struct reply r;
    char member[128];
    int32_t gen = -1;

    REQUIRE(gfx_open(&f, NULL));
    REQUIRE(coordinator_ready(&f, "zg"));
    REQUIRE(stable_member(&f, "zg", member, sizeof member, &gen));
    txn_commit(&f, 3, "zg", 2000, gen + 1, member, 5, &r);
    CHECK_EQ_INT(r.calls, 1);
    CHECK_EQ_INT(r.perr, ERR_ILLEGAL_GENERATION);
    txn_commit(&f, 3, "zg", 2000, gen, "zombie-member", 5, &r);
    CHECK_EQ_INT(r.perr, ERR_UNKNOWN_MEMBER_ID);
    CHECK(!group_offsets_pending(f.gc, "zg", "orders", 0));
    txn_commit(&f, 3, "zg", 2000, gen, member, 5, &r);
    CHECK_EQ_INT(r.perr, 0);
    CHECK(group_offsets_pending(f.gc, "zg", "orders", 0));
    fetch(&f, "zg", "orders", 0, true, &r);
    CHECK_EQ_INT(r.perr, ERR_UNSTABLE_OFFSET_COMMIT);
    REQUIRE(marker(&f, "zg", 2000, 0, true) == 0);
    fetch(&f, "zg", "orders", 0, true, &r);
    CHECK_EQ_INT(r.perr, 0);
    CHECK_EQ_INT(r.offset, 5);
    /* v0 names no member: checked against the group only. */
    txn_commit(&f, 0, "zg", 2001, -1, NULL, 6, &r);
    CHECK_EQ_INT(r.perr, 0);
    /* No group id. */
    txn_commit(&f, 3, NULL, 2002, -1, "", 6, &r);
    CHECK_EQ_INT(r.perr, ERR_INVALID_GROUP_ID);
    gfx_close(&f);
}

/* ---- acks=all ------------------------------------------------------------------------------- */

/* With a follower in the ISR the commit is answered only once the high watermark covers it
 * (the follower fetched past it), and a commit the follower never confirms times out after
 * offsets.commit.timeout.ms with REQUEST_TIMED_OUT — its offset not visible. */
TEST(group_commit_answers_when_replicated)
{
    struct gfx f;
    struct reply r, r2;
    const char *g = "acked";
    int32_t p;
    struct partition *part;

    REQUIRE(gfx_open(&f, NULL));
    REQUIRE(coordinator_ready(&f, g));
    struct meta_record other = fixture_broker_rec(OTHER, 9093);
    REQUIRE(fixture_meta_propose(&f.c.q, &other, 1) == 0);
    p = group_partition_for(g, N_OFFSETS_PARTITIONS);
    REQUIRE(move_leader(&f, p, NODE) == 0); /* still here, now with broker 2 in the ISR */
    REQUIRE(settle(&f));
    part = replica_partition(f.c.rm, GROUP_TOPIC, p);
    REQUIRE(part != NULL);
    commit(&f, g, -1, "", "orders", 0, 21, "", &r);
    settle(&f);
    CHECK_EQ_INT(r.calls, 0); /* appended, not yet replicated */
    fetch(&f, g, "orders", 0, false, &r2);
    CHECK_EQ_INT(r2.offset, -1);
    REQUIRE(fixture_follower_fetched(part, OTHER, partition_log_end_offset(part)) == 0);
    CHECK_EQ_INT(r.calls, 1);
    CHECK_EQ_INT(r.perr, 0);
    fetch(&f, g, "orders", 0, false, &r2);
    CHECK_EQ_INT(r2.offset, 21);

    commit(&f, g, -1, "", "orders", 0, 22, "", &r);
    tclock_advance(f.c.clock, 4999);
    CHECK_EQ_INT(r.calls, 0);
    tclock_advance(f.c.clock, 1);
    CHECK_EQ_INT(r.calls, 1);
    CHECK_EQ_INT(r.perr, ERR_REQUEST_TIMED_OUT);
    fetch(&f, g, "orders", 0, false, &r2);
    CHECK_EQ_INT(r2.offset, 21);
    gfx_close(&f);
}

static int64_t reset_to_five(void *arg, const char *topic, int32_t partition)
{
    (*(int *)arg)++;
    return strcmp(topic, "orders") == 0 && partition == 1 ? 5 : -1;
}

/* The console's reset (group_reset_offsets): an Empty group's chosen offsets change once the
 * batch is durable and survive a reload; other partitions keep theirs; a group with members
 * is refused (NON_EMPTY_GROUP), an unknown one is GROUP_ID_NOT_FOUND. */
TEST(group_reset_offsets_of_an_empty_group)
{
    struct gfx f;
    struct reply r;
    char member[160];
    int32_t gen, changed = -1;
    int asked = 0;

    REQUIRE(gfx_open(&f, NULL));
    REQUIRE(coordinator_ready(&f, "g"));
    commit(&f, "g", -1, "", "orders", 1, 42, "m", &r);
    CHECK_EQ_INT(r.perr, 0);
    commit(&f, "g", -1, "", "orders", 0, 7, "", &r);
    CHECK_EQ_INT(r.perr, 0);
    CHECK_EQ_INT(group_reset_offsets(f.gc, "g", reset_to_five, &asked, &changed), 0);
    CHECK_EQ_INT(asked, 2);
    CHECK_EQ_INT(changed, 1);
    /* Set once the batch is durable (at once here: a single replica, no flush wanted). */
    fetch(&f, "g", "orders", 1, false, &r);
    for (int i = 0; i < 5000 && r.offset != 5; i++) {
        uv_run(&f.c.q.loop, UV_RUN_NOWAIT);
        usleep(1000);
        fetch(&f, "g", "orders", 1, false, &r);
    }
    CHECK_EQ_INT(r.offset, 5);
    fetch(&f, "g", "orders", 0, false, &r);
    CHECK_EQ_INT(r.offset, 7);
    CHECK_EQ_INT(group_reset_offsets(f.gc, "nobody", reset_to_five, &asked, &changed),
                 ERR_GROUP_ID_NOT_FOUND);
    REQUIRE(stable_member(&f, "busy", member, sizeof member, &gen));
    commit(&f, "busy", gen, member, "orders", 1, 9, "", &r);
    CHECK_EQ_INT(r.perr, 0);
    CHECK_EQ_INT(group_reset_offsets(f.gc, "busy", reset_to_five, &asked, &changed),
                 ERR_NON_EMPTY_GROUP);

    REQUIRE(gc_stop(&f));
    REQUIRE(gc_start(&f));
    REQUIRE(settle(&f));
    fetch(&f, "g", "orders", 1, false, &r);
    CHECK_EQ_INT(r.offset, 5);
    gfx_close(&f);
}
