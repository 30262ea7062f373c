/* SPDX-License-Identifier: Apache-2.0 */
/* broker unit tests: the request handlers called directly, without sockets, on detached
 * requests (net_request_detached_new), against a replica manager on a real single-voter
 * metadata quorum. The broker and the replica manager run on a virtual clock, so long-poll
 * timing (a Fetch parked for MaxWaitMs) is driven by tclock_advance, in no wall time. */
#include "harness.h"
#include "fixture.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/arena.h"
#include "base/err.h"
#include "base/props.h"
#include "base/tclock.h"
#include "broker/broker.h"
#include "meta/meta.h"
#include "net/net.h"
#include "proto/proto.h"
#include "record/record.h"
#include "replica/replica.h"

#define NODE 1
/* The virtual wall clock starts years away from the real one (September 2020). */
#define T0 1600000000000LL
#define API_FETCH 1

/* ---- fixture: a quorum, a replica manager and a broker on one loop, one virtual clock --- */

struct bfx {
    struct fixture_meta q;
    struct tclock *clock; /* the replica manager's and the broker's: virtual, from T0 */
    char log_dir[64];
    struct props *props;
    struct replica_mgr *rm;
    struct broker *b;
};

static bool bfx_settle(struct bfx *f)
{
    for (int i = 0; i < 10000; i++) {
        if (replica_opens_pending(f->rm) == 0 && replica_events_pending(f->rm) == 0)
            return true;
        uv_run(&f->q.loop, UV_RUN_NOWAIT);
    }
    return false;
}

/* A quorum with topic `topic` (one partition, led here), a replica manager hosting it, and a
 * broker on both. */
static bool bfx_open(struct bfx *f, const char *topic)
{
    static const int32_t here[] = {NODE};
    struct meta_record recs[2] = {{.type = META_REC_TOPIC}, {.type = META_REC_PARTITION}};

    memset(f, 0, sizeof *f);
    if (!fixture_meta_open(&f->q, "/tmp/tally-brk-XXXXXX", "meta", NULL, NULL))
        return false;
    snprintf(f->log_dir, sizeof f->log_dir, "%s/logs", f->q.base);
    if (mkdir(f->log_dir, 0755) != 0)
        return false;
    f->props = props_new();
    f->clock = tclock_virtual_new(T0);
    if (f->props == NULL || f->clock == NULL)
        return false;
    recs[0].u.topic.name = topic;
    recs[0].u.topic.id[0] = 0x5B;
    recs[1].u.partition.topic_id[0] = 0x5B;
    recs[1].u.partition.partition = 0;
    recs[1].u.partition.leader = NODE;
    recs[1].u.partition.n_replicas = recs[1].u.partition.n_isr = 1;
    recs[1].u.partition.replicas = recs[1].u.partition.isr = here;
    if (fixture_meta_propose(&f->q, recs, 2) != 0)
        return false;
    struct replica_options ro = {.loop = &f->q.loop,
                                 .clock = f->clock,
                                 .meta = f->q.m,
                                 .config = f->props,
                                 .node_id = NODE,
                                 .log_dir = f->log_dir};
    if (replica_mgr_start(&ro, &f->rm) != 0 || !bfx_settle(f))
        return false;
    struct broker_options bo = {
        .loop = &f->q.loop, .clock = f->clock, .replicas = f->rm, .node_id = NODE};
    f->b = broker_new(&bo);
    return f->b != NULL;
}

static void bfx_close(struct bfx *f)
{
    bool stopped = false;
    if (f->b) {
        broker_stop(f->b, fixture_set_flag, &stopped);
        CHECK(fixture_run_until(&f->q.loop, &stopped, 5000));
    }
    if (f->rm) {
        stopped = false;
        replica_mgr_stop(f->rm, fixture_set_flag, &stopped);
        CHECK(fixture_run_until(&f->q.loop, &stopped, 5000));
    }
    CHECK(fixture_meta_stop(&f->q));
    CHECK_EQ_INT(fixture_meta_fini(&f->q), 0);
    props_free(f->props);
    tclock_free(f->clock);
}

/* ---- a detached Fetch and what came back -------------------------------------------------- */

struct answer {
    int calls;
    enum net_detached_end how;
    int16_t error, part_error;
    int32_t n_topics;
    int64_t high_watermark;
    int32_t records_len;
    int records_magic; /* of the first entry, when the records came from memory; else -1 */
};

static void on_answer(void *arg, enum net_detached_end how, int16_t version, const void *resp)
{
    struct answer *a = arg;
    const struct FetchResponse *rs = resp;
    (void)version;
    a->calls++;
    a->how = how;
    if (rs == NULL)
        return;
    a->error = rs->ErrorCode;
    a->n_topics = rs->Responses.n;
    if (rs->Responses.n > 0 && rs->Responses.v[0].Partitions.n > 0) {
        const struct FetchPartitionData *pd = &rs->Responses.v[0].Partitions.v[0];
        a->part_error = pd->ErrorCode;
        a->high_watermark = pd->HighWatermark;
        a->records_len = pd->Records.len;
        a->records_magic = pd->Records.data && pd->Records.len > 16 ? pd->Records.data[16] : -1;
    }
}

/* A consumer's Fetch (by name, at `version`) of partition 0 of `topic` from `offset`. */
static struct net_request *fetch_request_v(const char *topic, int64_t offset, int32_t max_wait_ms,
                                           int32_t min_bytes, struct answer *a, int16_t version)
{
    struct arena *ar = arena_new(1 << 20);
    struct FetchRequest *rq = ar ? arena_alloc(ar, sizeof *rq) : NULL;
    struct FetchTopic *t = rq ? arena_alloc(ar, sizeof *t) : NULL;
    struct FetchPartition *p = t ? arena_alloc(ar, sizeof *p) : NULL;

    if (p == NULL) {
        arena_free(ar);
        return NULL;
    }
    memset(rq, 0, sizeof *rq);
    memset(t, 0, sizeof *t);
    *p = (struct FetchPartition){.Partition = 0,
                                 .CurrentLeaderEpoch = -1,
                                 .FetchOffset = offset,
                                 .LastFetchedEpoch = -1,
                                 .LogStartOffset = -1,
                                 .PartitionMaxBytes = 1 << 20};
    t->Topic = arena_strndup(ar, topic, strlen(topic));
    t->Partitions.v = p;
    t->Partitions.n = 1;
    rq->ReplicaId = -1;
    rq->MaxWaitMs = max_wait_ms;
    rq->MinBytes = min_bytes;
    rq->MaxBytes = 1 << 20;
    rq->SessionEpoch = -1;
    rq->Topics.v = t;
    rq->Topics.n = 1;
    rq->RackId = "";
    memset(a, 0, sizeof *a);
    return net_request_detached_new(API_FETCH, version, rq, ar, on_answer, a);
}

/* The same at v11. */
static struct net_request *fetch_request(const char *topic, int64_t offset, int32_t max_wait_ms,
                                         int32_t min_bytes, struct answer *a)
{
    return fetch_request_v(topic, offset, max_wait_ms, min_bytes, a, 11);
}

/* Appends one batch of one record to `p`. */
static int append_one(struct partition *p)
{
    struct record_input rec = {
        .key_len = -1, .value = (const uint8_t *)"v", .value_len = 1, .timestamp = T0};
    struct record_build_options opt = {.base_offset = 0,
                                       .producer_id = -1,
                                       .producer_epoch = -1,
                                       .base_sequence = -1,
                                       .leader_epoch = -1};
    struct record_batch hdr;
    uint8_t *buf;
    size_t len;
    int64_t base, at;
    int rc;

    if (record_batch_build(&opt, &rec, 1, &buf, &len) != 0)
        return -9999;
    rc = record_batch_validate(buf, len, &hdr);
    if (rc == 0)
        rc = partition_append(p, buf, len, &hdr, &base, &at);
    free(buf);
    return rc;
}

/* Turns the loop a few times: nothing due on the real clock may answer a parked fetch. */
static void spin(struct bfx *f)
{
    for (int i = 0; i < 10; i++)
        uv_run(&f->q.loop, UV_RUN_NOWAIT);
}

/* ---- Fetch long polling on virtual time --------------------------------------------------- */

/* A Fetch short of MinBytes waits exactly MaxWaitMs on the broker's clock, then answers
 * empty and without error. */
TEST(broker_fetch_long_poll_expires_at_max_wait_on_virtual_time)
{
    struct bfx f;
    struct answer a;
    struct net_request *req;

    REQUIRE(bfx_open(&f, "poll"));
    req = fetch_request("poll", 0, 5000, 1, &a);
    REQUIRE(req);
    broker_fetch(f.b, req);
    spin(&f);
    CHECK_EQ_INT(a.calls, 0); /* parked: the partition is empty */
    tclock_advance(f.clock, 4999);
    spin(&f);
    CHECK_EQ_INT(a.calls, 0);
    tclock_advance(f.clock, 1);
    CHECK_EQ_INT(a.calls, 1);
    CHECK_EQ_INT(a.how, NET_DETACHED_RESPONDED);
    CHECK_EQ_INT(a.error, 0);
    CHECK_EQ_INT(a.n_topics, 1);
    CHECK_EQ_INT(a.part_error, 0);
    CHECK_EQ_INT(a.high_watermark, 0);
    CHECK_EQ_INT(a.records_len, 0);
    tclock_advance(f.clock, 60000);
    CHECK_EQ_INT(a.calls, 1); /* answered once */
    bfx_close(&f);
}

/* An append before MaxWaitMs answers the parked Fetch at once, with the batch; its timeout
 * then never fires. */
TEST(broker_fetch_long_poll_answers_early_on_append)
{
    struct bfx f;
    struct answer a;
    struct net_request *req;
    struct partition *p;

    REQUIRE(bfx_open(&f, "early"));
    p = replica_partition(f.rm, "early", 0);
    REQUIRE(p);
    req = fetch_request("early", 0, 5000, 1, &a);
    REQUIRE(req);
    broker_fetch(f.b, req);
    tclock_advance(f.clock, 1000);
    spin(&f);
    CHECK_EQ_INT(a.calls, 0);
    REQUIRE(append_one(p) == 0);
    spin(&f);
    CHECK_EQ_INT(a.calls, 1);
    CHECK_EQ_INT(a.how, NET_DETACHED_RESPONDED);
    CHECK_EQ_INT(a.error, 0);
    CHECK_EQ_INT(a.part_error, 0);
    CHECK_EQ_INT(a.high_watermark, 1);
    CHECK(a.records_len > 0);
    tclock_advance(f.clock, 10000);
    CHECK_EQ_INT(a.calls, 1);
    bfx_close(&f);
}

/* A parked Fetch whose client goes away is dropped at once without an answer, and its
 * timeout never fires. */
TEST(broker_fetch_long_poll_dropped_when_connection_closes)
{
    struct bfx f;
    struct answer a;
    struct net_request *req;
    struct partition *p;

    REQUIRE(bfx_open(&f, "gone"));
    p = replica_partition(f.rm, "gone", 0);
    REQUIRE(p);
    req = fetch_request("gone", 0, 5000, 1, &a);
    REQUIRE(req);
    broker_fetch(f.b, req);
    tclock_advance(f.clock, 2000);
    CHECK_EQ_INT(a.calls, 0);
    net_request_detached_close(req); /* the close hook runs; req is freed by its finish */
    CHECK_EQ_INT(a.calls, 1);
    CHECK_EQ_INT(a.how, NET_DETACHED_FINISHED);
    tclock_advance(f.clock, 10000);
    REQUIRE(append_one(p) == 0);
    spin(&f);
    CHECK_EQ_INT(a.calls, 1);
    bfx_close(&f);
}

/* ---- old Fetch versions: converted on the thread pool -------------------------------------- */

/* Fetch v3 reads magic 1 messages and v1 magic 0: the batch is converted on the thread pool
 * and sent from memory; v11 keeps the file range (no bytes in memory). */
TEST(broker_fetch_old_versions_get_converted_messages)
{
    static const struct {
        int16_t version;
        int magic;
    } cases[] = {{0, 0}, {1, 0}, {2, 1}, {3, 1}, {11, -1}};
    struct bfx f;
    struct answer a;
    struct net_request *req;
    struct partition *p;

    REQUIRE(bfx_open(&f, "old"));
    p = replica_partition(f.rm, "old", 0);
    REQUIRE(p);
    REQUIRE(append_one(p) == 0);
    REQUIRE(append_one(p) == 0);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bool done;
        req = fetch_request_v("old", 1, 0, 1, &a, cases[i].version);
        REQUIRE(req);
        broker_fetch(f.b, req);
        for (int k = 0; k < 100000 && a.calls == 0; k++)
            uv_run(&f.q.loop, UV_RUN_ONCE);
        done = a.calls == 1;
        CHECK(done);
        CHECK_EQ_INT(a.part_error, 0);
        CHECK_EQ_INT(a.high_watermark, 2);
        CHECK_EQ_INT(a.records_magic, cases[i].magic);
        if (cases[i].magic == 0) /* one message: offset, size, crc, magic, attrs, key, value */
            CHECK_EQ_INT(a.records_len, 12 + 4 + 1 + 1 + 4 + 4 + 1);
        if (cases[i].magic == 1)
            CHECK_EQ_INT(a.records_len, 12 + 4 + 1 + 1 + 8 + 4 + 4 + 1);
    }
    bfx_close(&f);
}

/* The client goes away while its Fetch v2 is being converted on the pool: the conversion
 * finishes, the answer is dropped, nothing leaks (ASan). */
TEST(broker_fetch_old_version_closed_while_converting)
{
    struct bfx f;
    struct answer a;
    struct net_request *req;
    struct partition *p;

    REQUIRE(bfx_open(&f, "oldgone"));
    p = replica_partition(f.rm, "oldgone", 0);
    REQUIRE(p);
    REQUIRE(append_one(p) == 0);
    req = fetch_request_v("oldgone", 0, 0, 1, &a, 2);
    REQUIRE(req);
    broker_fetch(f.b, req);
    CHECK_EQ_INT(a.calls, 0); /* on the pool */
    net_request_detached_close(req);
    for (int k = 0; k < 100000 && a.calls == 0; k++)
        uv_run(&f.q.loop, UV_RUN_ONCE);
    CHECK_EQ_INT(a.calls, 1);
    CHECK_EQ_INT(a.how, NET_DETACHED_FINISHED);
    bfx_close(&f);
}
