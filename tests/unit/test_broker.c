/* SPDX-License-Identifier: Apache-2.0 */
/* broker unit tests: the request handlers called directly, without sockets, on detached
 * requests (net_request_detached_new), against a replica manager on a real single-voter
 * metadata quorum. The broker and the replica manager run on a virtual clock, so long-poll
 * timing (a Fetch parked for MaxWaitMs) is driven by tclock_advance, in no wall time. */
#include "harness.h"
#include "fixture.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/arena.h"
#include "base/err.h"
#include "base/props.h"
#include "base/sysio.h"
#include "base/tclock.h"
#include "broker/broker.h"
#include "meta/meta.h"
#include "net/net.h"
#include "proto/proto.h"
#include "pstate/pstate.h"
#include "record/record.h"
#include "replica/replica.h"
#include "replica/replica_int.h" /* the manager's syscall table: a slow or failing fsync */

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
/* Whether bfx_open gives the broker the image (the client-quota test reads it); off for the
 * others, which run as before. */
static bool bfx_with_meta;

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
    if (bfx_with_meta)
        bo.meta = f->q.m;
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
static int append_value(struct partition *p, const uint8_t *value, int32_t value_len)
{
    struct record_input rec = {
        .key_len = -1, .value = value, .value_len = value_len, .timestamp = T0};
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

static int append_one(struct partition *p)
{
    return append_value(p, (const uint8_t *)"v", 1);
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

/* A Fetch whose MinBytes the data does not reach keeps waiting after appends, answers at
 * MaxWaitMs with what there is; one whose MinBytes the appends reach answers at once. (The
 * behaviour test_data_protocol.py once measured with a wall clock.) */
TEST(broker_fetch_long_poll_waits_for_min_bytes_on_virtual_time)
{
    struct bfx f;
    struct answer a, b;
    struct net_request *req, *req2;
    struct partition *p;

    REQUIRE(bfx_open(&f, "minb"));
    p = replica_partition(f.rm, "minb", 0);
    REQUIRE(p);
    req = fetch_request("minb", 0, 2500, 100000, &a);
    REQUIRE(req);
    broker_fetch(f.b, req);
    tclock_advance(f.clock, 300);
    REQUIRE(append_one(p) == 0);
    REQUIRE(append_one(p) == 0);
    spin(&f);
    CHECK_EQ_INT(a.calls, 0); /* two small batches: far less than MinBytes */
    tclock_advance(f.clock, 2199);
    spin(&f);
    CHECK_EQ_INT(a.calls, 0);
    tclock_advance(f.clock, 1); /* MaxWaitMs since the request */
    spin(&f);
    CHECK_EQ_INT(a.calls, 1);
    CHECK_EQ_INT(a.how, NET_DETACHED_RESPONDED);
    CHECK_EQ_INT(a.part_error, 0);
    CHECK_EQ_INT(a.high_watermark, 2);
    CHECK(a.records_len > 0); /* what there is, both batches */
    int32_t two = a.records_len;

    /* MinBytes of a bit more than two batches: the third append answers before MaxWaitMs. */
    req2 = fetch_request("minb", 0, 60000, two + 1, &b);
    REQUIRE(req2);
    broker_fetch(f.b, req2);
    spin(&f);
    CHECK_EQ_INT(b.calls, 0);
    tclock_advance(f.clock, 1000);
    REQUIRE(append_one(p) == 0);
    spin(&f);
    CHECK_EQ_INT(b.calls, 1);
    CHECK_EQ_INT(b.high_watermark, 3);
    CHECK(b.records_len > two);
    tclock_advance(f.clock, 120000);
    CHECK_EQ_INT(a.calls, 1);
    CHECK_EQ_INT(b.calls, 1);
    bfx_close(&f);
}

/* A broker that stops answers its parked Fetches at once — no virtual time passes, so none of
 * them waits for its MaxWaitMs. (test_deferred.py once bounded this with a wall clock.) */
TEST(broker_fetch_long_poll_answered_when_the_broker_stops)
{
    struct bfx f;
    struct answer a[3];
    bool stopped = false;

    REQUIRE(bfx_open(&f, "stop"));
    for (int i = 0; i < 3; i++) {
        struct net_request *req = fetch_request("stop", 0, 120000, 1, &a[i]);
        REQUIRE(req);
        broker_fetch(f.b, req);
    }
    spin(&f);
    for (int i = 0; i < 3; i++)
        CHECK_EQ_INT(a[i].calls, 0);
    broker_stop(f.b, fixture_set_flag, &stopped);
    CHECK(fixture_run_until(&f.q.loop, &stopped, 5000));
    f.b = NULL; /* stopped: bfx_close must not stop it again */
    for (int i = 0; i < 3; i++) {
        CHECK_EQ_INT(a[i].calls, 1);
        CHECK(a[i].how == NET_DETACHED_RESPONDED || a[i].how == NET_DETACHED_FINISHED);
    }
    bfx_close(&f);
}

/* ---- cold pages: warmed on the thread pool, never read on the loop ------------------------ */

/* The logs' pread_nowait finds the page cache empty while cold_left > 0 (each call takes one);
 * the blocking pread and the warm-up count the calls made off the loop thread and on it. */
static atomic_int cold_left, pool_preads, loop_preads;
static pthread_t loop_thread;

static ssize_t cold_pread_nowait(int fd, void *buf, size_t len, off_t off)
{
    if (atomic_load(&cold_left) > 0) {
        atomic_fetch_sub(&cold_left, 1);
        errno = EAGAIN;
        return -1;
    }
    return sysio_default()->pread_nowait(fd, buf, len, off);
}

static ssize_t counting_pread(int fd, void *buf, size_t len, off_t off)
{
    atomic_fetch_add(pthread_equal(pthread_self(), loop_thread) ? &loop_preads : &pool_preads, 1);
    return sysio_default()->pread(fd, buf, len, off);
}

static ssize_t counting_warm(int fd, off_t off, size_t len)
{
    atomic_fetch_add(pthread_equal(pthread_self(), loop_thread) ? &loop_preads : &pool_preads, 1);
    return sysio_default()->warm(fd, off, len);
}

/* A Fetch whose batch is not in the page cache is not answered from the loop: its range is
 * read on the pool first, then the fetch looks again and answers with the records. A page
 * that stays cold is given up on after the warm-up rounds: the answer has no records and no
 * error (the consumer fetches again), and it came without any read on the loop. */
TEST(broker_fetch_of_cold_pages_warms_them_on_the_pool_first)
{
    struct bfx f;
    struct answer a;
    struct net_request *req;
    struct partition *p;

    REQUIRE(bfx_open(&f, "cold"));
    p = replica_partition(f.rm, "cold", 0);
    REQUIRE(p);
    REQUIRE(append_one(p) == 0);
    REQUIRE(append_one(p) == 0);
    loop_thread = pthread_self();
    f.rm->sys.pread_nowait = cold_pread_nowait; /* the logs borrow the manager's table */
    f.rm->sys.pread = counting_pread;
    f.rm->sys.warm = counting_warm;

    atomic_store(&cold_left, 1);
    atomic_store(&pool_preads, 0);
    atomic_store(&loop_preads, 0);
    req = fetch_request("cold", 0, 0, 1, &a);
    REQUIRE(req);
    broker_fetch(f.b, req);
    CHECK_EQ_INT(a.calls, 0); /* warming on the pool */
    for (int k = 0; k < 100000 && a.calls == 0; k++)
        uv_run(&f.q.loop, UV_RUN_ONCE);
    CHECK_EQ_INT(a.calls, 1);
    CHECK_EQ_INT(a.part_error, 0);
    CHECK(a.records_len > 0);
    CHECK(atomic_load(&pool_preads) >= 1);
    CHECK_EQ_INT(atomic_load(&loop_preads), 0);
    CHECK_EQ_INT(atomic_load(&cold_left), 0);

    atomic_store(&cold_left, 1000);
    req = fetch_request("cold", 0, 0, 1, &a);
    REQUIRE(req);
    broker_fetch(f.b, req);
    for (int k = 0; k < 100000 && a.calls == 0; k++)
        uv_run(&f.q.loop, UV_RUN_ONCE);
    CHECK_EQ_INT(a.calls, 1);
    CHECK_EQ_INT(a.part_error, 0);
    CHECK_EQ_INT(a.records_len, 0);
    CHECK_EQ_INT(1000 - atomic_load(&cold_left), 5); /* the first look and 4 rounds */

    f.rm->sys.pread_nowait = sysio_default()->pread_nowait;
    f.rm->sys.pread = sysio_default()->pread;
    f.rm->sys.warm = sysio_default()->warm;
    bfx_close(&f);
}

struct lo_answer {
    int calls;
    int16_t error;
    int64_t offset, timestamp;
};

static void on_lo_answer(void *arg, enum net_detached_end how, int16_t version, const void *resp)
{
    struct lo_answer *a = arg;
    const struct ListOffsetsResponse *rs = resp;
    (void)how;
    (void)version;
    a->calls++;
    if (rs && rs->Topics.n > 0 && rs->Topics.v[0].Partitions.n > 0) {
        a->error = rs->Topics.v[0].Partitions.v[0].ErrorCode;
        a->offset = rs->Topics.v[0].Partitions.v[0].Offset;
        a->timestamp = rs->Topics.v[0].Partitions.v[0].Timestamp;
    }
}

/* ListOffsets v1 by timestamp for partition 0 of `topic`. */
static struct net_request *list_offsets_request(const char *topic, int64_t ts, struct lo_answer *a)
{
    struct arena *ar = arena_new(1 << 16);
    struct ListOffsetsRequest *rq = ar ? arena_alloc(ar, sizeof *rq) : NULL;
    struct ListOffsetsTopic *t = rq ? arena_alloc(ar, sizeof *t) : NULL;
    struct ListOffsetsPartition *p = t ? arena_alloc(ar, sizeof *p) : NULL;

    if (p == NULL) {
        arena_free(ar);
        return NULL;
    }
    *p = (struct ListOffsetsPartition){
        .PartitionIndex = 0, .CurrentLeaderEpoch = -1, .Timestamp = ts, .MaxNumOffsets = 1};
    t->Name = arena_strndup(ar, topic, strlen(topic));
    t->Partitions.v = p;
    t->Partitions.n = 1;
    *rq = (struct ListOffsetsRequest){.ReplicaId = -1, .IsolationLevel = 0};
    rq->Topics.v = t;
    rq->Topics.n = 1;
    memset(a, 0, sizeof *a);
    return net_request_detached_new(2, 1, rq, ar, on_lo_answer, a);
}

/* ListOffsets by timestamp: a time-index or header page not in the page cache is read on the
 * pool and the look-up runs again, so the loop makes no blocking read; the answer is the one a
 * warm log gives. */
TEST(broker_list_offsets_of_cold_pages_warms_them_on_the_pool_first)
{
    struct bfx f;
    struct lo_answer a;
    struct net_request *req;
    struct partition *p;

    REQUIRE(bfx_open(&f, "coldlo"));
    p = replica_partition(f.rm, "coldlo", 0);
    REQUIRE(p);
    for (int i = 0; i < 3; i++)
        REQUIRE(append_one(p) == 0);
    loop_thread = pthread_self();
    f.rm->sys.pread_nowait = cold_pread_nowait;
    f.rm->sys.pread = counting_pread;
    f.rm->sys.warm = counting_warm;
    atomic_store(&cold_left, 1);
    atomic_store(&pool_preads, 0);
    atomic_store(&loop_preads, 0);
    req = list_offsets_request("coldlo", T0, &a);
    REQUIRE(req);
    broker_list_offsets(f.b, req);
    CHECK_EQ_INT(a.calls, 0);
    for (int k = 0; k < 100000 && a.calls == 0; k++)
        uv_run(&f.q.loop, UV_RUN_ONCE);
    CHECK_EQ_INT(a.calls, 1);
    CHECK_EQ_INT(a.error, 0);
    CHECK_EQ_INT(a.offset, 0);
    CHECK_EQ_INT(a.timestamp, T0);
    CHECK_EQ_INT(atomic_load(&cold_left), 0);
    CHECK(atomic_load(&pool_preads) >= 1);
    CHECK_EQ_INT(atomic_load(&loop_preads), 0);
    f.rm->sys.pread_nowait = sysio_default()->pread_nowait;
    f.rm->sys.pread = sysio_default()->pread;
    f.rm->sys.warm = sysio_default()->warm;
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

/* ---- transactions (issue 10): markers, read_committed, produce checks ---------------------- */

/* Builds one batch of one record with the given attributes and producer; malloc()ed. */
static uint8_t *txn_batch(int16_t attrs, int64_t pid, int16_t epoch, int32_t seq, size_t *len)
{
    struct record_input rec = {
        .key_len = -1, .value = (const uint8_t *)"t", .value_len = 1, .timestamp = T0};
    struct record_build_options opt = {.base_offset = 0,
                                       .attributes = attrs,
                                       .producer_id = pid,
                                       .producer_epoch = epoch,
                                       .base_sequence = seq,
                                       .leader_epoch = -1};
    uint8_t *buf;
    if (record_batch_build(&opt, &rec, 1, &buf, len) != 0)
        return NULL;
    return buf;
}

static int append_txn_one(struct partition *p, int64_t pid, int16_t epoch, int32_t seq)
{
    size_t len;
    uint8_t *buf = txn_batch(RECORD_ATTR_TRANSACTIONAL, pid, epoch, seq, &len);
    struct record_batch hdr;
    int64_t base, at;
    int rc = buf ? record_batch_validate(buf, len, &hdr) : -9999;
    if (rc == 0)
        rc = partition_append(p, buf, len, &hdr, &base, &at);
    free(buf);
    return rc;
}

struct mk_answer {
    int calls;
    int16_t err[4];
    int n;
};

static void on_markers(void *arg, enum net_detached_end how, int16_t version, const void *resp)
{
    struct mk_answer *a = arg;
    const struct WriteTxnMarkersResponse *rs = resp;
    (void)how;
    (void)version;
    a->calls++;
    a->n = 0;
    for (int32_t i = 0; rs && i < rs->Markers.n; i++)
        for (int32_t t = 0; t < rs->Markers.v[i].Topics.n; t++)
            for (int32_t j = 0; j < rs->Markers.v[i].Topics.v[t].Partitions.n && a->n < 4; j++)
                a->err[a->n++] = rs->Markers.v[i].Topics.v[t].Partitions.v[j].ErrorCode;
}

/* WriteTxnMarkers with one marker on partition 0 of `topic` (and partition 7, unknown). */
static void write_marker(struct bfx *f, const char *topic, int64_t pid, int16_t epoch, bool commit,
                         int32_t coord_epoch, struct mk_answer *a)
{
    struct arena *ar = arena_new(1 << 16);
    struct WriteTxnMarkersRequest *rq = arena_alloc(ar, sizeof *rq);
    struct WritableTxnMarker *m = arena_alloc(ar, sizeof *m);
    struct WritableTxnMarkerTopic *t = arena_alloc(ar, sizeof *t);
    int32_t *idx = arena_alloc(ar, 2 * sizeof *idx);
    idx[0] = 0;
    idx[1] = 7;
    *t = (struct WritableTxnMarkerTopic){.Name = arena_strndup(ar, topic, strlen(topic))};
    t->PartitionIndexes.v = idx;
    t->PartitionIndexes.n = 2;
    *m = (struct WritableTxnMarker){.ProducerId = pid,
                                    .ProducerEpoch = epoch,
                                    .TransactionResult = commit,
                                    .CoordinatorEpoch = coord_epoch};
    m->Topics.v = t;
    m->Topics.n = 1;
    rq->Markers.v = m;
    rq->Markers.n = 1;
    memset(a, 0, sizeof *a);
    broker_write_txn_markers(
        f->b, net_request_detached_new(PROTO_API_WriteTxnMarkers, 1, rq, ar, on_markers, a));
    spin(f);
}

TEST(broker_write_txn_markers_commit_abort_and_fencing)
{
    struct bfx f;
    struct mk_answer a;
    struct partition *p;

    REQUIRE(bfx_open(&f, "mk"));
    p = replica_partition(f.rm, "mk", 0);
    REQUIRE(p);
    REQUIRE(append_txn_one(p, 10, 1, 0) == 0);
    CHECK_EQ_INT(partition_last_stable_offset(p), 0);
    write_marker(&f, "mk", 10, 1, false, 5, &a);
    CHECK_EQ_INT(a.calls, 1);
    CHECK_EQ_INT(a.n, 2);
    CHECK_EQ_INT(a.err[0], 0);
    CHECK_EQ_INT(a.err[1], ERR_UNKNOWN_TOPIC_OR_PARTITION);
    CHECK_EQ_INT(partition_last_stable_offset(p), 2);
    /* A stale coordinator epoch, then a stale producer epoch. */
    write_marker(&f, "mk", 10, 1, true, 4, &a);
    CHECK_EQ_INT(a.err[0], ERR_TRANSACTION_COORDINATOR_FENCED);
    write_marker(&f, "mk", 10, 0, true, 5, &a);
    CHECK_EQ_INT(a.err[0], ERR_INVALID_PRODUCER_EPOCH);
    CHECK_EQ_INT(partition_log_end_offset(p), 2);
    /* A retry of the same marker is written again (Kafka does). */
    write_marker(&f, "mk", 10, 1, false, 5, &a);
    CHECK_EQ_INT(a.err[0], 0);
    CHECK_EQ_INT(partition_log_end_offset(p), 3);
    bfx_close(&f);
}

struct tc_calls {
    int n;
    int32_t partition;
    int64_t pid;
    bool commit;
};
static void on_txn_complete(void *arg, int32_t partition, int64_t pid, bool commit)
{
    struct tc_calls *c = arg;
    c->n++;
    c->partition = partition;
    c->pid = pid;
    c->commit = commit;
}

TEST(broker_write_txn_markers_tells_the_group_coordinator)
{
    struct bfx f;
    struct mk_answer a;
    struct tc_calls c = {0};

    REQUIRE(bfx_open(&f, "__consumer_offsets"));
    /* A broker wired like main.c's, on the same replica manager. */
    bool stopped = false;
    broker_stop(f.b, fixture_set_flag, &stopped);
    CHECK(fixture_run_until(&f.q.loop, &stopped, 5000));
    struct broker_options bo = {.loop = &f.q.loop,
                                .clock = f.clock,
                                .replicas = f.rm,
                                .node_id = NODE,
                                .txn_complete = on_txn_complete,
                                .txn_complete_arg = &c};
    f.b = broker_new(&bo);
    REQUIRE(f.b);
    write_marker(&f, "__consumer_offsets", 33, 0, true, 0, &a);
    CHECK_EQ_INT(a.err[0], 0);
    CHECK_EQ_INT(c.n, 1);
    CHECK_EQ_INT(c.partition, 0);
    CHECK_EQ_INT(c.pid, 33);
    CHECK(c.commit);
    write_marker(&f, "__consumer_offsets", 33, 0, false, -1, &a); /* fenced: not told */
    CHECK_EQ_INT(a.err[0], ERR_TRANSACTION_COORDINATOR_FENCED);
    CHECK_EQ_INT(c.n, 1);
    bfx_close(&f);
}

struct rc_answer {
    int calls;
    int16_t err;
    int64_t hw, lso;
    int32_t records_len, n_aborted;
    int64_t aborted_pid, aborted_first;
};

static void on_rc_fetch(void *arg, enum net_detached_end how, int16_t version, const void *resp)
{
    struct rc_answer *a = arg;
    const struct FetchResponse *rs = resp;
    (void)how;
    (void)version;
    a->calls++;
    if (rs == NULL || rs->Responses.n < 1 || rs->Responses.v[0].Partitions.n < 1)
        return;
    const struct FetchPartitionData *pd = &rs->Responses.v[0].Partitions.v[0];
    a->err = pd->ErrorCode;
    a->hw = pd->HighWatermark;
    a->lso = pd->LastStableOffset;
    a->records_len = pd->Records.len;
    a->n_aborted = pd->AbortedTransactions.n;
    if (pd->AbortedTransactions.n > 0) {
        a->aborted_pid = pd->AbortedTransactions.v[0].ProducerId;
        a->aborted_first = pd->AbortedTransactions.v[0].FirstOffset;
    }
}

static int32_t rc_partition_max_bytes = 1 << 20;

static void fetch_committed(struct bfx *f, const char *topic, int64_t offset, int8_t isolation,
                            struct rc_answer *rc)
{
    struct arena *ar = arena_new(1 << 20);
    struct FetchRequest *rq = arena_alloc(ar, sizeof *rq);
    struct FetchTopic *t = arena_alloc(ar, sizeof *t);
    struct FetchPartition *p = arena_alloc(ar, sizeof *p);

    memset(rq, 0, sizeof *rq);
    memset(t, 0, sizeof *t);
    *p = (struct FetchPartition){.Partition = 0,
                                 .CurrentLeaderEpoch = -1,
                                 .FetchOffset = offset,
                                 .LastFetchedEpoch = -1,
                                 .LogStartOffset = -1,
                                 .PartitionMaxBytes = rc_partition_max_bytes};
    t->Topic = arena_strndup(ar, topic, strlen(topic));
    t->Partitions.v = p;
    t->Partitions.n = 1;
    rq->ReplicaId = -1;
    rq->MaxBytes = 1 << 20;
    rq->MinBytes = 1;
    rq->IsolationLevel = isolation;
    rq->SessionEpoch = -1;
    rq->Topics.v = t;
    rq->Topics.n = 1;
    rq->RackId = "";
    memset(rc, 0, sizeof *rc);
    rc->n_aborted = -2;
    broker_fetch(f->b, net_request_detached_new(API_FETCH, 11, rq, ar, on_rc_fetch, rc));
    spin(f);
}

TEST(broker_fetch_read_committed_stops_at_lso_and_lists_aborted)
{
    struct bfx f;
    struct rc_answer rc;
    struct mk_answer a;
    struct partition *p;

    REQUIRE(bfx_open(&f, "rc"));
    p = replica_partition(f.rm, "rc", 0);
    REQUIRE(p);
    REQUIRE(append_one(p) == 0);               /* 0 */
    REQUIRE(append_txn_one(p, 20, 0, 0) == 0); /* 1: producer 20, aborted below */
    REQUIRE(append_txn_one(p, 21, 0, 0) == 0); /* 2: producer 21, open */
    REQUIRE(append_one(p) == 0);               /* 3 */
    fetch_committed(&f, "rc", 0, 1, &rc);
    CHECK_EQ_INT(rc.calls, 1);
    CHECK_EQ_INT(rc.err, 0);
    CHECK_EQ_INT(rc.hw, 4);
    CHECK_EQ_INT(rc.lso, 1);
    CHECK(rc.records_len > 0); /* offset 0 only */
    CHECK_EQ_INT(rc.n_aborted, 0);
    int32_t first_len = rc.records_len;
    /* From the LSO itself: nothing yet. */
    fetch_committed(&f, "rc", 1, 1, &rc);
    CHECK_EQ_INT(rc.records_len, 0);
    write_marker(&f, "rc", 20, 0, false, 0, &a); /* 4: ABORT of producer 20 */
    CHECK_EQ_INT(a.err[0], 0);
    fetch_committed(&f, "rc", 0, 1, &rc);
    CHECK_EQ_INT(rc.lso, 2);
    CHECK_EQ_INT(rc.records_len, 2 * first_len); /* offsets 0 and 1 */
    CHECK_EQ_INT(rc.n_aborted, 1);
    CHECK_EQ_INT(rc.aborted_pid, 20);
    CHECK_EQ_INT(rc.aborted_first, 1);
    write_marker(&f, "rc", 21, 0, true, 0, &a); /* 5: COMMIT of producer 21 */
    fetch_committed(&f, "rc", 2, 1, &rc);
    CHECK_EQ_INT(rc.lso, 6);
    CHECK_EQ_INT(rc.n_aborted, 1); /* producer 20's range reaches offset 4 */
    /* Only what overlaps the returned range is listed: one small batch (offset 0) ends
     * before producer 20's transaction starts. */
    rc_partition_max_bytes = 1;
    fetch_committed(&f, "rc", 0, 1, &rc);
    rc_partition_max_bytes = 1 << 20;
    CHECK_EQ_INT(rc.records_len, first_len);
    CHECK_EQ_INT(rc.n_aborted, 0);
    fetch_committed(&f, "rc", 1, 1, &rc);
    CHECK_EQ_INT(rc.n_aborted, 1);
    /* read_uncommitted: no aborted list at all (null). */
    fetch_committed(&f, "rc", 0, 0, &rc);
    CHECK_EQ_INT(rc.n_aborted, -1);
    CHECK_EQ_INT(rc.lso, 6);
    bfx_close(&f);
}

struct pr_answer {
    int calls;
    int16_t err;
    int64_t base;
    int32_t throttle;
};

static void on_produce(void *arg, enum net_detached_end how, int16_t version, const void *resp)
{
    struct pr_answer *a = arg;
    const struct ProduceResponse *rs = resp;
    (void)how;
    (void)version;
    a->calls++;
    if (rs)
        a->throttle = rs->ThrottleTimeMs;
    if (rs && rs->Responses.n > 0 && rs->Responses.v[0].PartitionResponses.n > 0) {
        a->err = rs->Responses.v[0].PartitionResponses.v[0].ErrorCode;
        a->base = rs->Responses.v[0].PartitionResponses.v[0].BaseOffset;
    }
}

static bool pipelined;            /* produce_one does not turn the loop after sending */
static int16_t produce_acks = -1; /* what produce_one asks for */

static void produce_one(struct bfx *f, const char *topic, const char *tid, int16_t attrs,
                        int64_t pid, int16_t epoch, int32_t seq, struct pr_answer *a)
{
    struct arena *ar = arena_new(1 << 16);
    struct ProduceRequest *rq = arena_alloc(ar, sizeof *rq);
    struct TopicProduceData *t = arena_alloc(ar, sizeof *t);
    struct PartitionProduceData *pd = arena_alloc(ar, sizeof *pd);
    size_t len;
    uint8_t *b = txn_batch(attrs, pid, epoch, seq, &len);
    uint8_t *copy = arena_alloc(ar, len);

    memcpy(copy, b, len);
    free(b);
    if (attrs & RECORD_ATTR_CONTROL) { /* the builder cannot set it: patch and re-CRC */
        copy[22] |= RECORD_ATTR_CONTROL;
        uint32_t crc = record_crc32c(0, copy + 21, len - 21);
        copy[17] = (uint8_t)(crc >> 24);
        copy[18] = (uint8_t)(crc >> 16);
        copy[19] = (uint8_t)(crc >> 8);
        copy[20] = (uint8_t)crc;
    }
    *pd = (struct PartitionProduceData){.Index = 0};
    pd->Records.data = copy;
    pd->Records.len = (int32_t)len;
    *t = (struct TopicProduceData){.Name = arena_strndup(ar, topic, strlen(topic))};
    t->PartitionData.v = pd;
    t->PartitionData.n = 1;
    *rq = (struct ProduceRequest){.Acks = produce_acks, .TimeoutMs = 1000};
    rq->TransactionalId = tid ? arena_strndup(ar, tid, strlen(tid)) : NULL;
    rq->TopicData.v = t;
    rq->TopicData.n = 1;
    memset(a, 0, sizeof *a);
    broker_produce(f->b, net_request_detached_new(PROTO_API_Produce, 9, rq, ar, on_produce, a));
    if (!pipelined)
        spin(f);
}

/* ---- flush.messages: the ack waits for the fsync (issue 20) ---------------------------------- */

static atomic_bool fsync_open = true;

/* A pool thread's fsync that waits (bounded, 10 s) while the gate is closed: a slow disk. */
static int gated_fsync(int fd)
{
    for (int i = 0; i < 10000 && !atomic_load(&fsync_open); i++)
        nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
    return fsync(fd);
}

static int eio_fsync(int fd)
{
    (void)fd;
    errno = EIO;
    return -1;
}

/* Runs the loop (blocking up to 1 ms a turn, for the pool's fsync) until the Produce
 * answered or about 5 s passed. */
static bool answered_soon(struct bfx *f, struct pr_answer *a)
{
    bool never = false;
    for (int i = 0; i < 5000 && a->calls == 0; i++)
        fixture_run_until(&f->q.loop, &never, 1);
    return a->calls == 1;
}

/* Without a flush policy an acks=1 produce is answered at once, whatever the disk does; with
 * flush.messages=1 it is answered only once its batch is fsynced; a failed fsync answers it
 * KAFKA_STORAGE_ERROR, and the log refuses the next batch the same way. */
TEST(broker_produce_ack_waits_for_fsync_under_flush_messages)
{
    struct bfx f;
    struct pr_answer a;
    struct meta_record cfg = {.type = META_REC_CONFIG};

    REQUIRE(bfx_open(&f, "fl"));
    struct partition *p = replica_partition(f.rm, "fl", 0);
    REQUIRE(p);
    produce_acks = 1;
    f.rm->sys.fsync = gated_fsync; /* the logs borrow the manager's table */
    atomic_store(&fsync_open, false);

    produce_one(&f, "fl", NULL, 0, -1, -1, 0, &a);
    CHECK_EQ_INT(a.calls, 1);
    CHECK_EQ_INT(a.err, 0);
    CHECK_EQ_INT(partition_mark(p, PARTITION_DURABLE), 0);

    cfg.u.config.resource_type = 2; /* topic */
    cfg.u.config.resource_name = "fl";
    cfg.u.config.key = "flush.messages";
    cfg.u.config.value = "1";
    REQUIRE(fixture_meta_propose(&f.q, &cfg, 1) == 0);
    REQUIRE(bfx_settle(&f));
    produce_one(&f, "fl", NULL, 0, -1, -1, 0, &a);
    for (int i = 0; i < 100; i++)
        uv_run(&f.q.loop, UV_RUN_NOWAIT);
    CHECK_EQ_INT(a.calls, 0); /* in the log, not yet on disk: no answer */
    CHECK_EQ_INT(partition_log_end_offset(p), 2);
    atomic_store(&fsync_open, true);
    REQUIRE(answered_soon(&f, &a));
    CHECK_EQ_INT(a.err, 0);
    CHECK_EQ_INT(a.base, 1);
    CHECK(partition_mark(p, PARTITION_DURABLE) >= 2);

    f.rm->sys.fsync = eio_fsync;
    produce_one(&f, "fl", NULL, 0, -1, -1, 0, &a);
    REQUIRE(answered_soon(&f, &a));
    CHECK_EQ_INT(a.err, ERR_KAFKA_STORAGE_ERROR);
    produce_one(&f, "fl", NULL, 0, -1, -1, 0, &a);
    REQUIRE(answered_soon(&f, &a));
    CHECK_EQ_INT(a.err, ERR_KAFKA_STORAGE_ERROR);

    f.rm->sys.fsync = sysio_default()->fsync;
    produce_acks = -1;
    bfx_close(&f);
}

TEST(broker_produce_transactional_checks)
{
    struct bfx f;
    struct pr_answer a;

    REQUIRE(bfx_open(&f, "pt"));
    /* A control batch from a client: INVALID_RECORD. */
    produce_one(&f, "pt", "tid", RECORD_ATTR_CONTROL | RECORD_ATTR_TRANSACTIONAL, 5, 0, 0, &a);
    CHECK_EQ_INT(a.calls, 1);
    CHECK_EQ_INT(a.err, ERR_INVALID_RECORD);
    /* A transactional batch without a transactional id. */
    produce_one(&f, "pt", NULL, RECORD_ATTR_TRANSACTIONAL, 5, 0, 0, &a);
    CHECK_EQ_INT(a.err, ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    /* Verification off (this fixture's broker): appended. */
    produce_one(&f, "pt", "tid", RECORD_ATTR_TRANSACTIONAL, 5, 0, 0, &a);
    CHECK_EQ_INT(a.err, 0);
    CHECK_EQ_INT(a.base, 0);
    /* A plain batch from a producer in a transaction. */
    produce_one(&f, "pt", "tid", 0, 5, 0, 1, &a);
    CHECK_EQ_INT(a.err, ERR_INVALID_TXN_STATE);
    /* A fenced producer epoch. */
    produce_one(&f, "pt", "tid", RECORD_ATTR_TRANSACTIONAL, 5, 0, 1, &a);
    CHECK_EQ_INT(a.err, 0);
    struct partition *p = replica_partition(f.rm, "pt", 0);
    int64_t off;
    REQUIRE(partition_write_marker(p, 5, 1, 0, false, &off) == 0);
    produce_one(&f, "pt", "tid", RECORD_ATTR_TRANSACTIONAL, 5, 0, 2, &a);
    CHECK_EQ_INT(a.err, ERR_INVALID_PRODUCER_EPOCH);
    bfx_close(&f);
}

/* producer_byte_rate (KIP-219) on virtual time: a detached request is user ANONYMOUS, client
 * id "detached". Without a quota nothing is throttled; with one on ANONYMOUS + "detached",
 * answers carry a throttle once the rate is over it, and none again once the window passed;
 * another client id's quota does not apply. */
TEST(broker_produce_throttled_by_its_client_quota_on_virtual_time)
{
    struct bfx f;
    struct pr_answer a;
    struct meta_record q = {.type = META_REC_CLIENT_QUOTA};

    bfx_with_meta = true;
    REQUIRE(bfx_open(&f, "cq"));
    bfx_with_meta = false;
    produce_acks = 1;
    for (int i = 0; i < 20; i++) {
        produce_one(&f, "cq", NULL, 0, -1, -1, -1, &a);
        REQUIRE(a.calls == 1 && a.err == 0);
        CHECK_EQ_INT(a.throttle, 0);
    }
    /* Another client id's quota: still nothing. */
    q.u.quota.entity = (struct meta_quota_entity){false, true, NULL, "other"};
    q.u.quota.key = META_QUOTA_PRODUCER_BYTE_RATE;
    q.u.quota.value = 10;
    REQUIRE(fixture_meta_propose(&f.q, &q, 1) == 0);
    REQUIRE(bfx_settle(&f));
    produce_one(&f, "cq", NULL, 0, -1, -1, -1, &a);
    CHECK_EQ_INT(a.throttle, 0);
    /* ANONYMOUS + "detached" at 100 B/s: a few batches take it over. */
    q.u.quota.entity = (struct meta_quota_entity){true, true, "ANONYMOUS", "detached"};
    q.u.quota.value = 100;
    REQUIRE(fixture_meta_propose(&f.q, &q, 1) == 0);
    REQUIRE(bfx_settle(&f));
    int32_t last = 0;
    for (int i = 0; i < 20 && last == 0; i++) {
        produce_one(&f, "cq", NULL, 0, -1, -1, -1, &a);
        REQUIRE(a.err == 0);
        last = a.throttle;
    }
    CHECK(last > 0);
    /* Throttles grow with every batch more while the clock stands still... */
    produce_one(&f, "cq", NULL, 0, -1, -1, -1, &a);
    CHECK(a.throttle > last);
    /* ...and are gone once the whole window (11 s) passed without traffic. */
    tclock_advance(f.clock, 12000);
    produce_one(&f, "cq", NULL, 0, -1, -1, -1, &a);
    CHECK_EQ_INT(a.throttle, 0);
    produce_acks = -1;
    bfx_close(&f);
}

/* A detached request of `client_id` through broker_request_time_begin, `ns` of loop time
 * recorded after it: → the throttle its answer would carry (-1: no quota applies). */
static int32_t request_time(struct bfx *f, const char *client_id, uint64_t ns)
{
    struct arena *ar = arena_new(1 << 12);
    struct ApiVersionsRequest *rq = ar ? arena_alloc(ar, sizeof *rq) : NULL;
    struct net_request *req =
        rq ? net_request_detached_new(PROTO_API_ApiVersions, 2, rq, ar, NULL, NULL) : NULL;
    struct broker_request_time t;
    if (req == NULL)
        return -2;
    req->hdr.ClientId = (char *)client_id;
    bool timed = broker_request_time_begin(f->b, req, &t);
    int32_t throttle = timed ? req->throttle_ms : -1;
    net_finish(req); /* the request is gone before its time is recorded, as from a handler */
    if (timed)
        broker_request_time_end(f->b, &t, ns);
    return throttle;
}

/* request_percentage (KIP-124) on virtual time: the time recorded after one request throttles
 * the client's next ones, capped at one sample; another client id is not metered. */
TEST(broker_request_time_throttles_the_next_requests_on_virtual_time)
{
    struct bfx f;
    struct meta_record q = {.type = META_REC_CLIENT_QUOTA};

    bfx_with_meta = true;
    REQUIRE(bfx_open(&f, "rt"));
    bfx_with_meta = false;
    CHECK_EQ_INT(request_time(&f, "detached", 1000000), -1);
    q.u.quota.entity = (struct meta_quota_entity){false, true, NULL, "detached"};
    q.u.quota.key = META_QUOTA_REQUEST_PERCENTAGE;
    q.u.quota.value = 10; /* 100 ms of loop time per second */
    REQUIRE(fixture_meta_propose(&f.q, &q, 1) == 0);
    REQUIRE(bfx_settle(&f));
    /* 90 ms: within. The next one sees it, still within; 60 ms more take it over. */
    CHECK_EQ_INT(request_time(&f, "detached", 90000000), 0);
    CHECK_EQ_INT(request_time(&f, "detached", 60000000), 0);
    /* 150 ms over the recent window's 1 s at 10 %: (15 - 10) / 10 x 1000 ms. */
    CHECK_EQ_INT(request_time(&f, "detached", 0), 500);
    /* A whole second more asks far more, capped at one sample. */
    CHECK_EQ_INT(request_time(&f, "detached", 1000000000), 500);
    CHECK_EQ_INT(request_time(&f, "detached", 0), 1000);
    CHECK_EQ_INT(request_time(&f, "other", 1000000000), -1);
    /* Once the window passed, nothing is owed. */
    tclock_advance(f.clock, 12000);
    CHECK_EQ_INT(request_time(&f, "detached", 0), 0);
    bfx_close(&f);
}

TEST(broker_produce_verification_without_a_coordinator)
{
    struct bfx f;
    struct pr_answer a;

    REQUIRE(bfx_open(&f, "pv"));
    bool stopped = false;
    broker_stop(f.b, fixture_set_flag, &stopped);
    CHECK(fixture_run_until(&f.q.loop, &stopped, 5000));
    struct broker_options bo = {.loop = &f.q.loop,
                                .clock = f.clock,
                                .replicas = f.rm,
                                .node_id = NODE,
                                .meta = f.q.m,
                                .txn_verify = true};
    f.b = broker_new(&bo);
    REQUIRE(f.b);
    /* No __transaction_state leader (no client, no topic): retriable NOT_ENOUGH_REPLICAS,
     * nothing appended. */
    produce_one(&f, "pv", "tid", RECORD_ATTR_TRANSACTIONAL, 6, 0, 0, &a);
    CHECK_EQ_INT(a.calls, 1);
    CHECK_EQ_INT(a.err, ERR_NOT_ENOUGH_REPLICAS);
    CHECK_EQ_INT(partition_log_end_offset(replica_partition(f.rm, "pv", 0)), 0);
    /* Idempotent batches are not verified. */
    produce_one(&f, "pv", NULL, 0, 7, 0, 0, &a);
    CHECK_EQ_INT(a.err, 0);
    bfx_close(&f);
}

/* ---- KIP-890 verification against a fake coordinator (a real net server on loopback) ------- */

struct fake_coord {
    struct net_server *srv;
    int port;
    int asked;        /* AddPartitionsToTxn requests seen */
    int16_t answer;   /* per-partition error to give */
    bool verify_only; /* of the last request */
    int32_t n_parts;  /* in the last request */
};

static void fake_coord_request(void *ctx, struct net_request *req)
{
    struct fake_coord *fc = ctx;
    struct AddPartitionsToTxnRequest *rq = req->body;
    struct AddPartitionsToTxnResponse *rs = arena_alloc(req->arena, sizeof *rs);
    struct AddPartitionsToTxnResult *tr = arena_alloc(req->arena, sizeof *tr);

    fc->asked++;
    memset(rs, 0, sizeof *rs);
    memset(tr, 0, sizeof *tr);
    fc->n_parts = 0;
    if (rq->Transactions.n > 0) {
        struct AddPartitionsToTxnTransaction *t = &rq->Transactions.v[0];
        fc->verify_only = t->VerifyOnly;
        tr->TransactionalId = t->TransactionalId;
        tr->TopicResults.n = t->Topics.n;
        tr->TopicResults.v =
            arena_alloc(req->arena, (size_t)(t->Topics.n + 1) * sizeof *tr->TopicResults.v);
        for (int32_t i = 0; i < t->Topics.n; i++) {
            struct AddPartitionsToTxnTopicResult *o = &tr->TopicResults.v[i];
            o->Name = t->Topics.v[i].Name;
            o->ResultsByPartition.n = t->Topics.v[i].Partitions.n;
            o->ResultsByPartition.v =
                arena_alloc(req->arena, (size_t)(o->ResultsByPartition.n + 1) *
                                            sizeof *o->ResultsByPartition.v);
            for (int32_t j = 0; j < o->ResultsByPartition.n; j++) {
                o->ResultsByPartition.v[j].PartitionIndex = t->Topics.v[i].Partitions.v[j];
                o->ResultsByPartition.v[j].PartitionErrorCode = fc->answer;
                fc->n_parts++;
            }
        }
        rs->ResultsByTransaction.v = tr;
        rs->ResultsByTransaction.n = 1;
    }
    net_respond(req, rs);
}

static int fake_resolve(void *arg, int32_t id, char *host, size_t host_len, int *port)
{
    struct fake_coord *fc = arg;
    (void)id;
    snprintf(host, host_len, "127.0.0.1");
    *port = fc->port;
    return 0;
}

/* Runs the loop until the Produce answered. */
static bool produce_answered(struct bfx *f, struct pr_answer *a)
{
    for (int i = 0; i < 2000 && a->calls == 0; i++)
        uv_run(&f->q.loop, UV_RUN_NOWAIT);
    return a->calls == 1;
}

TEST(broker_produce_verifies_first_transactional_batch_and_caches_until_marker)
{
    struct bfx f;
    struct pr_answer a;
    struct fake_coord fc = {0};
    struct net_client *client = NULL;
    struct mk_answer m;
    bool stopped = false;

    REQUIRE(bfx_open(&f, "ver"));
    /* __transaction_state, one partition led here: every transactional id maps to it. */
    {
        static const int32_t here[] = {NODE};
        struct meta_record recs[2] = {{.type = META_REC_TOPIC}, {.type = META_REC_PARTITION}};
        recs[0].u.topic.name = "__transaction_state";
        recs[0].u.topic.id[0] = 0x7A;
        recs[1].u.partition.topic_id[0] = 0x7A;
        recs[1].u.partition.leader = NODE;
        recs[1].u.partition.n_replicas = recs[1].u.partition.n_isr = 1;
        recs[1].u.partition.replicas = recs[1].u.partition.isr = here;
        REQUIRE(fixture_meta_propose(&f.q, recs, 2) == 0);
        REQUIRE(bfx_settle(&f));
    }
    struct net_options no = {
        .clock = f.clock, .host = "127.0.0.1", .port = 0, .max_frame = 1 << 20};
    REQUIRE(net_server_start(&f.q.loop, &no, fake_coord_request, &fc, &fc.srv) == 0);
    fc.port = net_server_port(fc.srv);
    struct net_client_options co = {
        .clock = f.clock, .client_id = "verify", .resolve = fake_resolve, .resolve_arg = &fc};
    REQUIRE(net_client_new(&f.q.loop, &co, &client) == 0);
    broker_stop(f.b, fixture_set_flag, &stopped);
    CHECK(fixture_run_until(&f.q.loop, &stopped, 5000));
    struct broker_options bo = {.loop = &f.q.loop,
                                .clock = f.clock,
                                .replicas = f.rm,
                                .node_id = NODE,
                                .meta = f.q.m,
                                .client = client,
                                .txn_verify = true,
                                .txn_state_partitions = 1};
    f.b = broker_new(&bo);
    REQUIRE(f.b);
    struct partition *p = replica_partition(f.rm, "ver", 0);
    REQUIRE(p);

    /* Not added to the transaction: INVALID_TXN_STATE, nothing appended. */
    fc.answer = ERR_INVALID_TXN_STATE;
    produce_one(&f, "ver", "tid", RECORD_ATTR_TRANSACTIONAL, 40, 0, 0, &a);
    REQUIRE(produce_answered(&f, &a));
    CHECK_EQ_INT(a.err, ERR_INVALID_TXN_STATE);
    CHECK_EQ_INT(fc.asked, 1);
    CHECK(fc.verify_only);
    CHECK_EQ_INT(fc.n_parts, 1);
    CHECK_EQ_INT(partition_log_end_offset(p), 0);
    /* Fenced at the coordinator: the producer hears INVALID_PRODUCER_EPOCH. */
    fc.answer = ERR_PRODUCER_FENCED;
    produce_one(&f, "ver", "tid", RECORD_ATTR_TRANSACTIONAL, 40, 0, 0, &a);
    REQUIRE(produce_answered(&f, &a));
    CHECK_EQ_INT(a.err, ERR_INVALID_PRODUCER_EPOCH);
    /* Added: appended after one round trip; the next batches ask nothing. */
    fc.answer = 0;
    produce_one(&f, "ver", "tid", RECORD_ATTR_TRANSACTIONAL, 40, 0, 0, &a);
    REQUIRE(produce_answered(&f, &a));
    CHECK_EQ_INT(a.err, 0);
    CHECK_EQ_INT(a.base, 0);
    CHECK_EQ_INT(fc.asked, 3);
    produce_one(&f, "ver", "tid", RECORD_ATTR_TRANSACTIONAL, 40, 0, 1, &a);
    REQUIRE(produce_answered(&f, &a));
    CHECK_EQ_INT(a.err, 0);
    CHECK_EQ_INT(fc.asked, 3);
    /* The marker ends the transaction here: the next one is verified again — and two
     * requests pipelined before the answer share the check (neither is voided) and its
     * round trip (the second waits for the first one's answer). */
    write_marker(&f, "ver", 40, 0, true, 0, &m);
    CHECK_EQ_INT(m.err[0], 0);
    struct pr_answer a2;
    pipelined = true;
    produce_one(&f, "ver", "tid", RECORD_ATTR_TRANSACTIONAL, 40, 0, 2, &a);
    produce_one(&f, "ver", "tid", RECORD_ATTR_TRANSACTIONAL, 40, 0, 3, &a2);
    pipelined = false;
    CHECK_EQ_INT(a.calls + a2.calls, 0);
    REQUIRE(produce_answered(&f, &a));
    REQUIRE(produce_answered(&f, &a2));
    CHECK_EQ_INT(a.err, 0);
    CHECK_EQ_INT(a2.err, 0);
    CHECK_EQ_INT(a.base, 3);
    CHECK_EQ_INT(a2.base, 4);
    CHECK_EQ_INT(fc.asked, 4);
    /* A no shared so is a no for both. */
    write_marker(&f, "ver", 40, 0, true, 0, &m);
    CHECK_EQ_INT(m.err[0], 0);
    fc.answer = ERR_INVALID_TXN_STATE;
    pipelined = true;
    produce_one(&f, "ver", "tid", RECORD_ATTR_TRANSACTIONAL, 40, 0, 4, &a);
    produce_one(&f, "ver", "tid", RECORD_ATTR_TRANSACTIONAL, 40, 0, 5, &a2);
    pipelined = false;
    REQUIRE(produce_answered(&f, &a));
    REQUIRE(produce_answered(&f, &a2));
    CHECK_EQ_INT(a.err, ERR_INVALID_TXN_STATE);
    CHECK_EQ_INT(a2.err, ERR_INVALID_TXN_STATE);
    CHECK_EQ_INT(fc.asked, 5);
    CHECK_EQ_INT(partition_log_end_offset(p), 6);

    /* Teardown: the broker before the client, the server last. */
    stopped = false;
    broker_stop(f.b, fixture_set_flag, &stopped);
    CHECK(fixture_run_until(&f.q.loop, &stopped, 5000));
    f.b = NULL;
    stopped = false;
    net_client_stop(client, fixture_set_flag, &stopped);
    CHECK(fixture_run_until(&f.q.loop, &stopped, 5000));
    stopped = false;
    net_server_stop(fc.srv, fixture_set_flag, &stopped);
    CHECK(fixture_run_until(&f.q.loop, &stopped, 5000));
    bfx_close(&f);
}

/* ---- cold pages in the net layer: probed before sendfile, warmed on the pool --------------- */

/* The server's file calls: probe number k (from 1) says "not cached" when bit k-1 of
 * net_cold_mask is set, and so does every probe after it until a pool read (the pages stay
 * gone until read); pool reads and sendfiles are counted, and a sendfile made after a "not
 * cached" answer and before the pool read that follows it is noted. */
static atomic_int net_cold_mask, net_probes, net_pool_reads, net_sendfiles, net_sent_cold,
    net_cold_pending;
static pthread_t net_loop;

static int net_fake_resident(int fd, off_t off, size_t len)
{
    int k = atomic_fetch_add(&net_probes, 1);
    if (atomic_load(&net_cold_pending) || (k < 31 && (atomic_load(&net_cold_mask) >> k & 1))) {
        atomic_store(&net_cold_pending, 1);
        return 0;
    }
    return sysio_default()->resident(fd, off, len);
}

static ssize_t net_counting_pread(int fd, void *buf, size_t len, off_t off)
{
    if (!pthread_equal(pthread_self(), net_loop)) {
        atomic_fetch_add(&net_pool_reads, 1);
        atomic_store(&net_cold_pending, 0);
    }
    return sysio_default()->pread(fd, buf, len, off);
}

static ssize_t net_counting_warm(int fd, off_t off, size_t len)
{
    if (!pthread_equal(pthread_self(), net_loop)) {
        atomic_fetch_add(&net_pool_reads, 1);
        atomic_store(&net_cold_pending, 0);
    }
    return sysio_default()->warm(fd, off, len);
}

static ssize_t net_counting_sendfile(int sock, int fd, off_t *off, size_t len)
{
    if (atomic_load(&net_cold_pending))
        atomic_store(&net_sent_cold, 1);
    atomic_fetch_add(&net_sendfiles, 1);
    return sysio_default()->sendfile(sock, fd, off, len);
}

static void to_broker_fetch(void *ctx, struct net_request *req)
{
    broker_fetch(ctx, req);
}

struct net_fetch_answer {
    int calls, err;
    int16_t part_error;
    int32_t records_len;
};

static void on_net_fetch(void *arg, int err, const void *resp)
{
    struct net_fetch_answer *a = arg;
    const struct FetchResponse *rs = resp;
    a->calls++;
    a->err = err;
    if (err == 0 && rs->Responses.n > 0 && rs->Responses.v[0].Partitions.n > 0) {
        a->part_error = rs->Responses.v[0].Partitions.v[0].ErrorCode;
        a->records_len = rs->Responses.v[0].Partitions.v[0].Records.len;
    }
}

static int net_fetch_resolve(void *arg, int32_t id, char *host, size_t host_len, int *port)
{
    (void)id;
    snprintf(host, host_len, "127.0.0.1");
    *port = *(int *)arg;
    return 0;
}

/* A broker behind a real net server whose file calls are the fakes above, and a client. */
struct nfx {
    struct bfx f;
    struct net_server *srv;
    struct net_client *client;
    struct sysio io;
    struct partition *p;
    int port;
};

static bool nfx_open(struct nfx *n, const char *topic)
{
    if (!bfx_open(&n->f, topic))
        return false;
    n->p = replica_partition(n->f.rm, topic, 0);
    if (n->p == NULL)
        return false;
    net_loop = pthread_self();
    n->io = *sysio_default();
    n->io.resident = net_fake_resident;
    n->io.pread = net_counting_pread;
    n->io.warm = net_counting_warm;
    n->io.sendfile = net_counting_sendfile;
    struct net_options no = {
        .clock = n->f.clock, .host = "127.0.0.1", .port = 0, .max_frame = 1 << 20, .io = &n->io};
    if (net_server_start(&n->f.q.loop, &no, to_broker_fetch, n->f.b, &n->srv) != 0)
        return false;
    n->port = net_server_port(n->srv);
    struct net_client_options co = {.clock = n->f.clock,
                                    .client_id = topic,
                                    .resolve = net_fetch_resolve,
                                    .resolve_arg = &n->port};
    return net_client_new(&n->f.q.loop, &co, &n->client) == 0;
}

static void nfx_close(struct nfx *n)
{
    bool stopped = false;
    net_client_stop(n->client, fixture_set_flag, &stopped);
    CHECK(fixture_run_until(&n->f.q.loop, &stopped, 5000));
    stopped = false;
    broker_stop(n->f.b, fixture_set_flag, &stopped);
    CHECK(fixture_run_until(&n->f.q.loop, &stopped, 5000));
    n->f.b = NULL;
    stopped = false;
    net_server_stop(n->srv, fixture_set_flag, &stopped);
    CHECK(fixture_run_until(&n->f.q.loop, &stopped, 5000));
    bfx_close(&n->f);
}

/* Fetches partition 0 of `topic` from offset 0 (up to `max_bytes`) with the counters reset and
 * the probes named by `cold_mask` saying "not cached"; runs the loop until the answer. */
static void nfx_fetch(struct nfx *n, const char *topic, int32_t max_bytes, int cold_mask,
                      struct net_fetch_answer *a)
{
    struct FetchPartition fpart = {.Partition = 0,
                                   .CurrentLeaderEpoch = -1,
                                   .FetchOffset = 0,
                                   .LastFetchedEpoch = -1,
                                   .LogStartOffset = -1,
                                   .PartitionMaxBytes = max_bytes};
    struct FetchTopic ftopic = {.Topic = (char *)topic, .Partitions = {.v = &fpart, .n = 1}};
    struct FetchRequest freq = {.ReplicaId = -1,
                                .MaxWaitMs = 0,
                                .MinBytes = 1,
                                .MaxBytes = max_bytes,
                                .SessionEpoch = -1,
                                .Topics = {.v = &ftopic, .n = 1},
                                .RackId = ""};

    atomic_store(&net_cold_mask, cold_mask);
    atomic_store(&net_probes, 0);
    atomic_store(&net_pool_reads, 0);
    atomic_store(&net_sendfiles, 0);
    atomic_store(&net_sent_cold, 0);
    atomic_store(&net_cold_pending, 0);
    memset(a, 0, sizeof *a);
    REQUIRE(net_client_send(n->client, NODE, API_FETCH, 11, &freq, on_net_fetch, a) == 0);
    for (int i = 0; i < 100000 && a->calls == 0; i++)
        uv_run(&n->f.q.loop, UV_RUN_ONCE);
    CHECK_EQ_INT(a->calls, 1);
    CHECK_EQ_INT(a->err, 0);
    CHECK_EQ_INT(a->part_error, 0);
}

/* Over a real socket: the record range of a Fetch answer that the probe says is not in the
 * page cache is read on the thread pool before the loop sends it with sendfile(); a cached
 * one is sent at once, one probe per range. */
TEST(net_fetch_range_not_cached_is_read_on_the_pool_before_sendfile)
{
    struct nfx n;
    struct net_fetch_answer a;

    REQUIRE(nfx_open(&n, "netcold"));
    REQUIRE(append_one(n.p) == 0);
    REQUIRE(append_one(n.p) == 0);
    for (int cold = 1; cold >= 0; cold--) {
        nfx_fetch(&n, "netcold", 1 << 20, cold, &a);
        CHECK(a.records_len > 0);
        CHECK_EQ_INT(atomic_load(&net_probes), 1);
        CHECK(atomic_load(&net_sendfiles) >= 1);
        if (cold) {
            CHECK(atomic_load(&net_pool_reads) >= 1);
            CHECK_EQ_INT(atomic_load(&net_sent_cold), 0);
        } else {
            CHECK_EQ_INT(atomic_load(&net_pool_reads), 0); /* cached: straight to sendfile */
        }
    }
    nfx_close(&n);
}

/* A range too big for the socket goes in several sendfile()s; when the cache dropped its pages
 * between two goes (the second probe says so) the rest is read on the pool before the next
 * go (test_cold_read saw 3/4 of a megabyte gone between two goes). */
enum { NFX_BIG = 512 << 10, NFX_BATCHES = 32 }; /* 16 MiB: more than a socket takes at once */

/* nfx_open with NFX_BATCHES batches of NFX_BIG bytes in partition 0. */
static bool nfx_open_big(struct nfx *n, const char *topic)
{
    uint8_t *value = malloc(NFX_BIG);
    bool ok = value != NULL && nfx_open(n, topic);

    if (ok)
        memset(value, 'b', NFX_BIG);
    for (int i = 0; ok && i < NFX_BATCHES; i++)
        ok = append_value(n->p, value, NFX_BIG) == 0;
    free(value);
    return ok;
}

TEST(net_fetch_range_evicted_between_sends_is_read_on_the_pool_again)
{
    enum { BIG = NFX_BIG, BATCHES = NFX_BATCHES };
    struct nfx n;
    struct net_fetch_answer a;

    REQUIRE(nfx_open_big(&n, "netevict"));
    nfx_fetch(&n, "netevict", 64 << 20, 1 << 1, &a);
    CHECK(a.records_len > BIG * (BATCHES - 1));
    REQUIRE(atomic_load(&net_sendfiles) >= 2); /* the socket took it in several goes */
    CHECK(atomic_load(&net_probes) >= 2);
    CHECK(atomic_load(&net_pool_reads) >= 1);
    CHECK_EQ_INT(atomic_load(&net_sent_cold), 0);
    nfx_close(&n);
}

/* Answers too big for the socket, one after another on one connection: each waits for room
 * (on the poll handle the connection keeps between them) and arrives whole; the handle goes
 * with the connection (ASan's leak check at exit sees one left behind). */
TEST(net_fetch_ranges_that_wait_for_room_share_the_connection_poll_handle)
{
    enum { BIG = NFX_BIG, BATCHES = NFX_BATCHES };
    struct nfx n;
    struct net_fetch_answer a;

    REQUIRE(nfx_open_big(&n, "netwait"));
    for (int round = 0; round < 3; round++) {
        nfx_fetch(&n, "netwait", 64 << 20, 0, &a);
        CHECK(a.records_len > BIG * (BATCHES - 1));
        CHECK(atomic_load(&net_sendfiles) >= 2); /* it waited for room at least once */
        CHECK_EQ_INT(atomic_load(&net_pool_reads), 0);
    }
    nfx_close(&n);
}

/* ---- hanging transactions: the coordinators are asked before any abort (hanging.c) -------- */

/* Brokers 1-3 registered, 3 fenced; __transaction_state has two partitions, led by 1 and 2.
 * Each broker is a fake: a net server answering ListTransactions from a table of what its
 * coordinators hold, or an error code, or not at all (`down`: no address to connect to). */
#define HANG_AFTER_MS 1000
#define HANG_EVERY_MS 100

struct fake_txn_node {
    struct net_server *srv;
    int port;
    bool down;
    int16_t error;
    int asked;
    int64_t filter[8]; /* the last request's ProducerIdFilters */
    int32_t n_filter;
    int64_t pid[4]; /* what its coordinators hold */
    const char *state[4];
    int n;
};

struct hfx {
    struct bfx f;
    struct fake_txn_node node[4]; /* by node id, 1..3 */
    struct net_client *client;
    struct partition *p; /* hg-0, led here */
};

static void fake_txn_request(void *ctx, struct net_request *req)
{
    struct fake_txn_node *fn = ctx;
    const struct ListTransactionsRequest *rq = req->body;
    struct ListTransactionsResponse *rs = arena_alloc(req->arena, sizeof *rs);

    memset(rs, 0, sizeof *rs);
    fn->asked++;
    fn->n_filter = 0;
    for (int32_t i = 0; i < rq->ProducerIdFilters.n && fn->n_filter < 8; i++)
        fn->filter[fn->n_filter++] = rq->ProducerIdFilters.v[i];
    rs->ErrorCode = fn->error;
    rs->TransactionStates.v = arena_alloc(req->arena, 5 * sizeof *rs->TransactionStates.v);
    rs->UnknownStateFilters.v = arena_alloc(req->arena, sizeof(char *));
    for (int i = 0; i < fn->n && fn->error == 0; i++) {
        bool hit = rq->ProducerIdFilters.n == 0;
        for (int32_t k = 0; k < rq->ProducerIdFilters.n; k++)
            hit = hit || rq->ProducerIdFilters.v[k] == fn->pid[i];
        if (hit)
            rs->TransactionStates.v[rs->TransactionStates.n++] =
                (struct ListTransactionsTransactionState){.TransactionalId = "tid",
                                                          .ProducerId = fn->pid[i],
                                                          .TransactionState = (char *)fn->state[i]};
    }
    net_respond(req, rs);
}

static int hfx_resolve(void *arg, int32_t id, char *host, size_t host_len, int *port)
{
    struct hfx *h = arg;
    if (id < 1 || id > 3 || h->node[id].down || h->node[id].srv == NULL)
        return -1;
    snprintf(host, host_len, "127.0.0.1");
    *port = h->node[id].port;
    return 0;
}

static bool hfx_open(struct hfx *h)
{
    static const int32_t one[] = {1}, two[] = {2};
    struct meta_record recs[9] = {
        {.type = META_REC_REGISTER_BROKER}, {.type = META_REC_REGISTER_BROKER},
        {.type = META_REC_REGISTER_BROKER}, {.type = META_REC_FENCE_BROKER},
        {.type = META_REC_TOPIC},           {.type = META_REC_PARTITION},
        {.type = META_REC_PARTITION}};
    bool stopped = false;

    memset(h, 0, sizeof *h);
    if (!bfx_open(&h->f, "hg"))
        return false;
    for (int i = 0; i < 3; i++) {
        recs[i].u.broker.id = i + 1;
        recs[i].u.broker.host = "127.0.0.1";
        recs[i].u.broker.port = 9092 + i;
    }
    recs[3].u.fence.id = 3;
    recs[3].u.fence.fenced = true;
    recs[4].u.topic.name = "__transaction_state";
    recs[4].u.topic.id[0] = 0x7A;
    for (int i = 0; i < 2; i++) {
        struct meta_record *r = &recs[5 + i];
        r->u.partition.topic_id[0] = 0x7A;
        r->u.partition.partition = i;
        r->u.partition.leader = i + 1;
        r->u.partition.n_replicas = r->u.partition.n_isr = 1;
        r->u.partition.replicas = r->u.partition.isr = i == 0 ? one : two;
    }
    if (fixture_meta_propose(&h->f.q, recs, 7) != 0 || !bfx_settle(&h->f))
        return false;
    for (int id = 1; id <= 3; id++) {
        struct net_options no = {.clock = h->f.clock,
                                 .host = "127.0.0.1",
                                 .port = 0,
                                 .max_frame = 1 << 20,
                                 .max_idle_ms = -1};
        if (net_server_start(&h->f.q.loop, &no, fake_txn_request, &h->node[id], &h->node[id].srv) !=
            0)
            return false;
        h->node[id].port = net_server_port(h->node[id].srv);
    }
    struct net_client_options co = {.clock = h->f.clock,
                                    .client_id = "hanging",
                                    .resolve = hfx_resolve,
                                    .resolve_arg = h,
                                    .request_timeout_ms = 1000};
    if (net_client_new(&h->f.q.loop, &co, &h->client) != 0)
        return false;
    broker_stop(h->f.b, fixture_set_flag, &stopped);
    if (!fixture_run_until(&h->f.q.loop, &stopped, 5000))
        return false;
    struct broker_options bo = {.loop = &h->f.q.loop,
                                .clock = h->f.clock,
                                .replicas = h->f.rm,
                                .node_id = NODE,
                                .meta = h->f.q.m,
                                .client = h->client,
                                .hanging_check_ms = HANG_EVERY_MS,
                                .hanging_after_ms = HANG_AFTER_MS};
    h->f.b = broker_new(&bo);
    h->p = replica_partition(h->f.rm, "hg", 0);
    return h->f.b != NULL && h->p != NULL;
}

static void hfx_close(struct hfx *h)
{
    bool stopped = false;

    broker_stop(h->f.b, fixture_set_flag, &stopped);
    CHECK(fixture_run_until(&h->f.q.loop, &stopped, 5000));
    h->f.b = NULL;
    stopped = false;
    net_client_stop(h->client, fixture_set_flag, &stopped);
    CHECK(fixture_run_until(&h->f.q.loop, &stopped, 5000));
    for (int id = 1; id <= 3; id++) {
        stopped = false;
        net_server_stop(h->node[id].srv, fixture_set_flag, &stopped);
        CHECK(fixture_run_until(&h->f.q.loop, &stopped, 5000));
    }
    bfx_close(&h->f);
}

/* Moves virtual time on, a round interval at a time, and turns the loop until the next round
 * finished (its answers came back over loopback, or a broker that cannot be reached timed
 * out): at most 50 intervals. Returns whether one finished. */
static bool hfx_round(struct hfx *h)
{
    uint64_t before = broker_hanging_rounds(h->f.b);

    for (int step = 0; step < 50 && broker_hanging_rounds(h->f.b) == before; step++) {
        tclock_advance(h->f.clock, HANG_EVERY_MS);
        for (int i = 0; i < 5000 && broker_hanging_rounds(h->f.b) == before; i++)
            uv_run(&h->f.q.loop, UV_RUN_NOWAIT);
    }
    return broker_hanging_rounds(h->f.b) > before;
}

static bool filter_has(const struct fake_txn_node *fn, int64_t pid)
{
    for (int32_t i = 0; i < fn->n_filter; i++)
        if (fn->filter[i] == pid)
            return true;
    return false;
}

/* Counts stderr lines holding every one of `a`, `b` and `c` in `f` (from its start). */
static int count_lines(FILE *f, const char *a, const char *b, const char *c)
{
    char line[2048];
    int n = 0;

    fflush(stderr);
    rewind(f);
    while (fgets(line, sizeof line, f))
        n += strstr(line, a) && strstr(line, b) && strstr(line, c);
    return n;
}

/* A transaction idle past the threshold whose coordinator has it in PrepareCommit (its COMMIT
 * markers still on their way) is never aborted here: that would tear it. Once the coordinator
 * says CompleteCommit (every marker written: this partition's transaction is a leftover), it
 * is aborted after two agreeing rounds. */
TEST(broker_hanging_txn_in_prepare_commit_at_its_coordinator_is_not_aborted)
{
    struct hfx h;

    REQUIRE(hfx_open(&h));
    REQUIRE(append_txn_one(h.p, 50, 0, 0) == 0);
    h.node[2].pid[0] = 50;
    h.node[2].state[0] = "PrepareCommit";
    h.node[2].n = 1;
    for (int i = 0; i < 30; i++)
        REQUIRE(hfx_round(&h));
    CHECK_EQ_INT(partition_last_stable_offset(h.p), 0);
    CHECK_EQ_INT(partition_log_end_offset(h.p), 1);
    /* Asked: both unfenced brokers, with the producer id; never the fenced one. */
    CHECK(h.node[1].asked >= 15);
    CHECK(h.node[2].asked >= 15);
    CHECK(filter_has(&h.node[2], 50));
    CHECK_EQ_INT(h.node[3].asked, 0);
    /* PrepareAbort and Ongoing keep it too. */
    h.node[2].state[0] = "PrepareAbort";
    REQUIRE(hfx_round(&h) && hfx_round(&h) && hfx_round(&h));
    h.node[2].state[0] = "Ongoing";
    REQUIRE(hfx_round(&h) && hfx_round(&h) && hfx_round(&h));
    CHECK_EQ_INT(partition_log_end_offset(h.p), 1);

    h.node[2].state[0] = "CompleteCommit";
    REQUIRE(hfx_round(&h));
    CHECK_EQ_INT(partition_log_end_offset(h.p), 1); /* one round is not enough */
    REQUIRE(hfx_round(&h));
    CHECK_EQ_INT(partition_log_end_offset(h.p), 2);
    CHECK_EQ_INT(partition_last_stable_offset(h.p), 2);
    hfx_close(&h);
}

/* No coordinator knows the producer (its entry was lost): the transaction is aborted, with
 * one WARN line; a producer that wrote recently on the same partition is left alone. */
TEST(broker_hanging_txn_no_coordinator_knows_is_aborted_with_one_warn)
{
    struct hfx h;
    FILE *cap;
    int saved;

    REQUIRE(hfx_open(&h));
    REQUIRE(append_txn_one(h.p, 51, 3, 0) == 0); /* 0 */
    tclock_advance(h.f.clock, 900);
    REQUIRE(append_txn_one(h.p, 52, 0, 0) == 0); /* 1 */
    fflush(stderr);
    cap = tmpfile();
    REQUIRE(cap);
    saved = dup(STDERR_FILENO);
    dup2(fileno(cap), STDERR_FILENO);
    for (int i = 0; i < 4; i++)
        CHECK(hfx_round(&h));
    CHECK_EQ_INT(partition_log_end_offset(h.p), 3); /* the ABORT at 2 */
    CHECK_EQ_INT(partition_last_stable_offset(h.p), 1);
    for (int i = 0; i < 5; i++)
        CHECK(hfx_round(&h));
    CHECK_EQ_INT(partition_last_stable_offset(h.p), 1); /* 52 is not idle long enough yet */
    int warns = count_lines(cap, "WARN", "hanging", "producer 51");
    int early = count_lines(cap, "WARN", "hanging", "producer 52");
    /* Once it is, and nobody knows it either, it goes the same way. */
    for (int i = 0; i < 4; i++)
        CHECK(hfx_round(&h));
    CHECK_EQ_INT(partition_last_stable_offset(h.p), 4);
    int late = count_lines(cap, "WARN", "hanging", "producer 52");
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    fclose(cap);
    CHECK_EQ_INT(warns, 1);
    CHECK_EQ_INT(early, 0);
    CHECK_EQ_INT(late, 1);
    {
        const struct pstate_producer *pr = pstate_get(partition_pstate(h.p), 51);
        REQUIRE(pr);
        CHECK_EQ_INT(pr->txn_first_offset, -1);
        CHECK_EQ_INT(pr->epoch, 3);
    }
    CHECK(filter_has(&h.node[1], 52));
    hfx_close(&h);
}

/* Every registered, unfenced broker must answer, without error, before anything is aborted:
 * one that cannot be reached, or that answers COORDINATOR_LOAD_IN_PROGRESS or NOT_COORDINATOR
 * (a shard failing over), blocks the round; so does a coordinator shard led by a fenced broker.
 * The abort waits for two clean rounds after. */
TEST(broker_hanging_txn_not_aborted_while_a_broker_does_not_answer)
{
    struct hfx h;
    int asked;

    REQUIRE(hfx_open(&h));
    REQUIRE(append_txn_one(h.p, 53, 0, 0) == 0);
    h.node[2].down = true;
    tclock_advance(h.f.clock, HANG_AFTER_MS);
    /* Each round waits out the client's request timeout (1 s) for node 2. */
    for (int i = 0; i < 5; i++)
        REQUIRE(hfx_round(&h));
    CHECK(h.node[1].asked >= 5);
    CHECK_EQ_INT(partition_log_end_offset(h.p), 1);

    h.node[2].down = false;
    h.node[2].error = ERR_COORDINATOR_LOAD_IN_PROGRESS;
    for (int i = 0; i < 10; i++)
        REQUIRE(hfx_round(&h));
    asked = h.node[2].asked;
    CHECK(asked >= 5);
    CHECK_EQ_INT(partition_log_end_offset(h.p), 1);
    h.node[2].error = ERR_NOT_COORDINATOR;
    for (int i = 0; i < 10; i++)
        REQUIRE(hfx_round(&h));
    CHECK(h.node[2].asked >= asked + 5);
    CHECK_EQ_INT(partition_log_end_offset(h.p), 1);

    /* Every answer clean, but shard 1 moves to the fenced broker 3, which is not asked. */
    h.node[2].error = 0;
    {
        static const int32_t three[] = {3};
        struct meta_record r = {.type = META_REC_PARTITION};
        r.u.partition.topic_id[0] = 0x7A;
        r.u.partition.partition = 1;
        r.u.partition.leader = 3;
        r.u.partition.leader_epoch = 1;
        r.u.partition.partition_epoch = 1;
        r.u.partition.n_replicas = r.u.partition.n_isr = 1;
        r.u.partition.replicas = r.u.partition.isr = three;
        REQUIRE(fixture_meta_propose(&h.f.q, &r, 1) == 0);
        REQUIRE(bfx_settle(&h.f));
    }
    for (int i = 0; i < 10; i++)
        REQUIRE(hfx_round(&h));
    CHECK_EQ_INT(partition_log_end_offset(h.p), 1);
    CHECK_EQ_INT(h.node[3].asked, 0);

    /* Back to broker 2: two clean rounds, then the abort. */
    {
        static const int32_t two[] = {2};
        struct meta_record r = {.type = META_REC_PARTITION};
        r.u.partition.topic_id[0] = 0x7A;
        r.u.partition.partition = 1;
        r.u.partition.leader = 2;
        r.u.partition.leader_epoch = 2;
        r.u.partition.partition_epoch = 2;
        r.u.partition.n_replicas = r.u.partition.n_isr = 1;
        r.u.partition.replicas = r.u.partition.isr = two;
        REQUIRE(fixture_meta_propose(&h.f.q, &r, 1) == 0);
        REQUIRE(bfx_settle(&h.f));
    }
    REQUIRE(hfx_round(&h));
    CHECK_EQ_INT(partition_log_end_offset(h.p), 1);
    REQUIRE(hfx_round(&h));
    CHECK_EQ_INT(partition_log_end_offset(h.p), 2);
    CHECK_EQ_INT(partition_last_stable_offset(h.p), 2);
    hfx_close(&h);
}

/* A wall-clock step of a day forward makes no transaction idle: nobody is even asked, and
 * nothing is aborted, until the transaction has been idle that long by the monotonic clock. */
TEST(broker_hanging_wall_clock_step_aborts_nothing)
{
    struct hfx h;

    REQUIRE(hfx_open(&h));
    REQUIRE(append_txn_one(h.p, 54, 0, 0) == 0);
    REQUIRE(append_txn_one(h.p, 55, 0, 0) == 0);
    tclock_set_wall(h.f.clock, T0 + 86400000LL);
    for (int i = 0; i < HANG_AFTER_MS / HANG_EVERY_MS; i++)
        REQUIRE(hfx_round(&h));
    CHECK_EQ_INT(h.node[1].asked + h.node[2].asked, 0);
    CHECK_EQ_INT(partition_last_stable_offset(h.p), 0);
    CHECK_EQ_INT(partition_log_end_offset(h.p), 2);
    /* A step back changes nothing either; past the threshold by the monotonic clock they go. */
    tclock_set_wall(h.f.clock, T0 - 86400000LL);
    for (int i = 0; i < 3; i++)
        REQUIRE(hfx_round(&h));
    CHECK(h.node[1].asked > 0);
    CHECK_EQ_INT(partition_log_end_offset(h.p), 4);
    CHECK_EQ_INT(partition_last_stable_offset(h.p), 4);
    hfx_close(&h);
}
