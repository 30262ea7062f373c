/* SPDX-License-Identifier: Apache-2.0 */
/* replica unit tests: the replica manager against a real single-voter metadata quorum and a
 * temporary log directory — which partitions it hosts, how it follows metadata (new topics,
 * moves, deletions, config changes), appends (offsets, high watermark, LogAppendTime,
 * idempotent producers), the marks deferred requests wait on, clean shutdown files, and restarts
 * after a clean stop, a crash, and a topic deleted while it was down. The replica manager
 * runs on a virtual clock (the quorum on the real one), so its timing behaviour — segment.ms,
 * retention.ms, producer expiry, the housekeeping timer — is driven by tclock_advance, in no
 * wall time. */
#include "harness.h"
#include "fixture.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/err.h"
#include "base/props.h"
#include "base/purgatory.h"
#include "base/sysio.h"
#include "base/tclock.h"
#include "log/log.h"
#include "meta/meta.h"
#include "pstate/pstate.h"
#include "record/record.h"
#include "replica/replica.h"
#include "replica/replica_int.h" /* partition_log: tests look at the log underneath */

#define NODE 1
/* The replica manager's virtual wall clock starts here (September 2020): years away from
 * the real clock, so a module that read the real clock would be caught. */
#define T0 1600000000000LL

/* ---- fixture: a quorum, a props set and a replica manager on one loop ---------------------- */

struct rfx {
    struct fixture_meta q; /* the quorum lives in <q.base>/meta */
    struct tclock *clock;  /* the replica manager's: virtual, from T0 */
    char log_dir[64];
    struct props *props;
    struct replica_mgr *rm;
    int applies;
};

/* The meta apply hook counts batches; the replica manager subscribes to the metadata itself. */
static void rp_on_apply(void *arg, const struct meta_record *recs, size_t n)
{
    struct rfx *f = arg;
    (void)recs;
    (void)n;
    f->applies++;
}

/* Runs the loop until the manager has opened every queued partition and delivered every
 * queued event (they happen after the apply, a slice per loop turn). */
static bool rfx_settle(struct rfx *f)
{
    for (int i = 0; i < 10000 && f->rm; i++) {
        if (replica_opens_pending(f->rm) == 0 && replica_events_pending(f->rm) == 0)
            return true;
        uv_run(&f->q.loop, UV_RUN_NOWAIT);
    }
    return f->rm == NULL;
}

static int rfx_rm_start(struct rfx *f)
{
    struct replica_options o = {.loop = &f->q.loop,
                                .clock = f->clock,
                                .meta = f->q.m,
                                .config = f->props,
                                .node_id = NODE,
                                .log_dir = f->log_dir};
    return replica_mgr_start(&o, &f->rm);
}

static bool rfx_rm_stop(struct rfx *f)
{
    bool stopped = false;
    if (f->rm == NULL)
        return true;
    replica_mgr_stop(f->rm, fixture_set_flag, &stopped);
    f->rm = NULL; /* on_apply must not reach it any more */
    return fixture_run_until(&f->q.loop, &stopped, 5000);
}

/* A quorum in <base>/meta and a log directory <base>/logs; the manager is not started. */
static bool rfx_init(struct rfx *f)
{
    memset(f, 0, sizeof *f);
    if (!fixture_meta_init(&f->q, "/tmp/tally-rep-XXXXXX", "meta", rp_on_apply, f))
        return false;
    snprintf(f->log_dir, sizeof f->log_dir, "%s/logs", f->q.base);
    if (mkdir(f->log_dir, 0755) != 0)
        return false;
    f->props = props_new();
    f->clock = tclock_virtual_new(T0);
    return f->props != NULL && f->clock != NULL && fixture_meta_start(&f->q);
}

static void rfx_fini(struct rfx *f)
{
    CHECK(rfx_rm_stop(f));
    CHECK(fixture_meta_stop(&f->q));
    CHECK_EQ_INT(fixture_meta_fini(&f->q), 0);
    props_free(f->props);
    tclock_free(f->clock);
}

/* Stops the manager and the quorum, then starts both again on the same directories. */
static bool rfx_restart(struct rfx *f)
{
    if (!rfx_rm_stop(f) || !fixture_meta_stop(&f->q) || !fixture_meta_start(&f->q))
        return false;
    return rfx_rm_start(f) == 0;
}

/* Proposes records as given, except that a PARTITION replacing an existing partition is
 * based on its current partition epoch (the apply step's compare-and-set, meta.h): these
 * tests move partitions by hand and say only what the partition becomes. */
static int rfx_propose(struct rfx *f, const struct meta_record *recs, size_t n)
{
    struct meta_record *copy = malloc((n ? n : 1) * sizeof *copy);
    int rc;

    if (copy == NULL)
        return ERR_NOMEM;
    memcpy(copy, recs, n * sizeof *copy);
    for (size_t i = 0; i < n; i++) {
        const struct meta_topic *t;
        if (copy[i].type != META_REC_PARTITION)
            continue;
        t = meta_topic_by_id(f->q.m, copy[i].u.partition.topic_id);
        if (t && copy[i].u.partition.partition < t->n_partitions)
            copy[i].u.partition.partition_epoch =
                t->partitions[copy[i].u.partition.partition].partition_epoch + 1;
    }
    rc = fixture_meta_propose(&f->q, copy, n);
    free(copy);
    if (!rfx_settle(f))
        return -9998;
    return rc;
}

static void tid(uint8_t id[16], int n)
{
    memset(id, 0, 16);
    id[0] = 0x5A;
    id[15] = (uint8_t)n;
}

static const int32_t here[] = {NODE};
static const int32_t elsewhere[] = {2, 3};

static struct meta_record r_topic(const char *name, int id)
{
    struct meta_record r = {.type = META_REC_TOPIC};
    r.u.topic.name = name;
    tid(r.u.topic.id, id);
    return r;
}

static struct meta_record r_part(int id, int32_t index, bool is_here, int32_t epoch)
{
    struct meta_record r = {.type = META_REC_PARTITION};
    tid(r.u.partition.topic_id, id);
    r.u.partition.partition = index;
    r.u.partition.leader = is_here ? NODE : 2;
    r.u.partition.leader_epoch = epoch;
    r.u.partition.partition_epoch = 0;
    r.u.partition.n_replicas = r.u.partition.n_isr = is_here ? 1 : 2;
    r.u.partition.replicas = r.u.partition.isr = is_here ? here : elsewhere;
    return r;
}

static struct meta_record r_remove(int id)
{
    struct meta_record r = {.type = META_REC_REMOVE_TOPIC};
    tid(r.u.remove_topic.topic_id, id);
    return r;
}

static struct meta_record r_config(int8_t type, const char *name, const char *key,
                                   const char *value)
{
    struct meta_record r = {.type = META_REC_CONFIG};
    r.u.config.resource_type = type;
    r.u.config.resource_name = name;
    r.u.config.key = key;
    r.u.config.value = value;
    return r;
}

#define PROPOSE(f, ...)                                                                            \
    rfx_propose(f, (struct meta_record[]){__VA_ARGS__},                                            \
                sizeof((struct meta_record[]){__VA_ARGS__}) / sizeof(struct meta_record))

/* Creates a topic with `n` partitions hosted here. */
static int make_topic(struct rfx *f, const char *name, int id, int n)
{
    struct meta_record recs[9];
    recs[0] = r_topic(name, id);
    for (int i = 0; i < n && i < 8; i++)
        recs[i + 1] = r_part(id, i, true, 0);
    return rfx_propose(f, recs, (size_t)n + 1);
}

/* Builds and appends a batch of `n` records (producer pid/epoch/seq, or pid -1), timestamp
 * ts. Returns partition_append's result; *base and *at receive its outputs. */
static int append(struct partition *p, int n, int64_t pid, int16_t epoch, int32_t seq, int64_t ts,
                  int64_t *base, int64_t *at)
{
    struct record_input recs[16];
    struct record_build_options opt = {.base_offset = 0,
                                       .producer_id = pid,
                                       .producer_epoch = pid >= 0 ? epoch : -1,
                                       .base_sequence = pid >= 0 ? seq : -1,
                                       .leader_epoch = -1};
    static const uint8_t val[] = "value";
    struct record_batch hdr;
    uint8_t *b;
    size_t len;
    int rc;
    int64_t dummy_base = -2, dummy_at = -2;

    for (int i = 0; i < n; i++)
        recs[i] =
            (struct record_input){.key_len = -1, .value = val, .value_len = 5, .timestamp = ts + i};
    if (record_batch_build(&opt, recs, n, &b, &len) != 0)
        return -9999;
    if (record_batch_validate(b, len, &hdr) != 0) {
        free(b);
        return -9998;
    }
    rc = partition_append(p, b, len, &hdr, base ? base : &dummy_base, at ? at : &dummy_at);
    free(b);
    return rc;
}

/* Reads the batch header at `offset` back from the log file. */
static bool read_header(struct partition *p, int64_t offset, struct record_batch *b, bool validate)
{
    struct log_slice sl;
    uint8_t *buf;
    bool ok = false;
    if (log_read(partition_log(p), offset, partition_high_watermark(p), 1 << 20, &sl) != 0)
        return false;
    if (sl.len >= RECORD_BATCH_HEADER && (buf = malloc(sl.len)) != NULL) {
        if (pread(sl.fd, buf, sl.len, sl.pos) == (ssize_t)sl.len &&
            record_batch_parse_header(buf, sl.len, b) == 0)
            ok = !validate || record_batch_validate(buf, record_batch_size(b), b) == 0;
        free(buf);
    }
    log_slice_release(partition_log(p), &sl);
    return ok;
}

static bool exists(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

/* Number of entries in dir whose name ends with `suffix` (or contains it, if !at_end). */
static int count_files(const char *dir, const char *suffix, bool at_end)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    size_t sl = strlen(suffix);
    if (d == NULL)
        return -1;
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (at_end ? (l >= sl && strcmp(e->d_name + l - sl, suffix) == 0)
                   : strstr(e->d_name, suffix) != NULL)
            n++;
    }
    closedir(d);
    return n;
}

/* ---- hosting ------------------------------------------------------------------------------- */

TEST(replica_start_hosts_assigned_partitions)
{
    struct rfx f;
    struct partition *p;
    char path[256], line[128];
    FILE *fp;
    uint8_t id[16];

    REQUIRE(rfx_init(&f));
    /* orders: 0 and 1 here, 2 elsewhere; remote: all elsewhere. */
    REQUIRE(PROPOSE(&f, r_topic("orders", 1), r_part(1, 0, true, 3), r_part(1, 1, true, 3),
                    r_part(1, 2, false, 3), r_topic("remote", 2), r_part(2, 0, false, 0)) == 0);
    REQUIRE(rfx_rm_start(&f) == 0);
    CHECK_EQ_INT(replica_count(f.rm), 2);
    p = replica_partition(f.rm, "orders", 0);
    REQUIRE(p);
    CHECK(replica_partition(f.rm, "orders", 1) != NULL);
    CHECK(replica_partition(f.rm, "orders", 2) == NULL);
    CHECK(replica_partition(f.rm, "orders", 3) == NULL);
    CHECK(replica_partition(f.rm, "remote", 0) == NULL);
    CHECK(replica_partition(f.rm, "nope", 0) == NULL);
    tid(id, 1);
    CHECK(replica_partition_by_id(f.rm, id, 0) == p);
    CHECK(replica_partition_by_id(f.rm, id, 2) == NULL);
    tid(id, 9);
    CHECK(replica_partition_by_id(f.rm, id, 0) == NULL);

    CHECK_EQ_STR(partition_topic(p), "orders");
    CHECK_EQ_INT(partition_index(p), 0);
    tid(id, 1);
    CHECK(memcmp(partition_topic_id(p), id, 16) == 0);
    CHECK_EQ_INT(partition_leader_epoch(p), 3);
    CHECK_EQ_INT(log_latest_epoch(partition_log(p)), 3);
    CHECK(partition_online(p));
    CHECK_EQ_INT(partition_high_watermark(p), 0);
    CHECK_EQ_INT(partition_log_end_offset(p), 0);
    CHECK_EQ_INT(partition_log_start_offset(p), 0);
    CHECK_EQ_INT(partition_last_stable_offset(p), 0);
    CHECK(partition_pstate(p) != NULL);
    CHECK(!partition_settings(p)->log_append_time);
    CHECK_EQ_INT(partition_settings(p)->max_message_bytes, 1048588);
    CHECK_EQ_INT(partition_settings(p)->ts_before_max_ms, INT64_MAX);

    /* Directories exist only for hosted partitions, each with Kafka's partition.metadata. */
    snprintf(path, sizeof path, "%s/orders-0", f.log_dir);
    CHECK(access(path, F_OK) == 0);
    snprintf(path, sizeof path, "%s/orders-1", f.log_dir);
    CHECK(access(path, F_OK) == 0);
    snprintf(path, sizeof path, "%s/orders-2", f.log_dir);
    CHECK(access(path, F_OK) != 0);
    snprintf(path, sizeof path, "%s/remote-0", f.log_dir);
    CHECK(access(path, F_OK) != 0);
    snprintf(path, sizeof path, "%s/orders-0/partition.metadata", f.log_dir);
    fp = fopen(path, "r");
    REQUIRE(fp);
    REQUIRE(fgets(line, sizeof line, fp));
    CHECK_EQ_STR(line, "version: 0\n");
    REQUIRE(fgets(line, sizeof line, fp));
    /* 0x5A 00 00 ... 01 in base64url, 22 characters. */
    CHECK_EQ_STR(line, "topic_id: WgAAAAAAAAAAAAAAAAAAAQ\n");
    fclose(fp);
    /* The clean marker is gone while running. */
    CHECK(!exists(f.log_dir, ".kafka_cleanshutdown"));
    rfx_fini(&f);
}

TEST(replica_on_apply_follows_metadata)
{
    struct rfx f;
    struct partition *p;
    char path[256];

    REQUIRE(rfx_init(&f));
    REQUIRE(rfx_rm_start(&f) == 0);
    CHECK_EQ_INT(replica_count(f.rm), 0);

    /* A new topic: its partitions open as the batch applies. */
    REQUIRE(make_topic(&f, "fresh", 1, 3) == 0);
    CHECK_EQ_INT(replica_count(f.rm), 3);
    for (int i = 0; i < 3; i++)
        CHECK(replica_partition(f.rm, "fresh", i) != NULL);

    /* A topic first, partitions in a later batch. */
    REQUIRE(PROPOSE(&f, r_topic("later", 2)) == 0);
    CHECK_EQ_INT(replica_count(f.rm), 3);
    REQUIRE(PROPOSE(&f, r_part(2, 0, true, 0), r_part(2, 1, false, 0)) == 0);
    CHECK_EQ_INT(replica_count(f.rm), 4);
    CHECK(replica_partition(f.rm, "later", 0) != NULL);
    CHECK(replica_partition(f.rm, "later", 1) == NULL);

    /* A new leader epoch reaches the open partition. */
    REQUIRE(PROPOSE(&f, r_part(1, 0, true, 5)) == 0);
    p = replica_partition(f.rm, "fresh", 0);
    REQUIRE(p);
    CHECK_EQ_INT(partition_leader_epoch(p), 5);
    REQUIRE(append(p, 2, -1, 0, 0, 1000, NULL, NULL) == 0);
    CHECK_EQ_INT(log_latest_epoch(partition_log(p)), 5);

    /* Moved away (a reassignment removed this replica): closed and its copy deleted, as
     * Kafka deletes a replica that leaves the replica set. */
    REQUIRE(PROPOSE(&f, r_part(1, 1, false, 1)) == 0);
    CHECK(replica_partition(f.rm, "fresh", 1) == NULL);
    CHECK_EQ_INT(replica_count(f.rm), 3);
    snprintf(path, sizeof path, "%s/fresh-1", f.log_dir);
    CHECK(access(path, F_OK) != 0);

    /* Moved back: opened again. */
    REQUIRE(PROPOSE(&f, r_part(1, 1, true, 2)) == 0);
    CHECK(replica_partition(f.rm, "fresh", 1) != NULL);
    CHECK_EQ_INT(replica_count(f.rm), 4);

    /* Many partitions: the table grows past its first 256 buckets. Three batches of 11
     * topics with 8 partitions each. */
    {
        static char names[33][16];
        static struct meta_record recs[11 * 9];
        for (int b = 0; b < 3; b++) {
            size_t k = 0;
            for (int t = b * 11; t < (b + 1) * 11; t++) {
                snprintf(names[t], sizeof names[t], "bulk%02d", t);
                recs[k++] = r_topic(names[t], 100 + t);
                for (int i = 0; i < 8; i++)
                    recs[k++] = r_part(100 + t, i, true, 0);
            }
            REQUIRE(rfx_propose(&f, recs, k) == 0);
        }
        CHECK_EQ_INT(replica_count(f.rm), 4 + 264);
        for (int t = 0; t < 33; t++)
            for (int i = 0; i < 8; i++)
                CHECK(replica_partition(f.rm, names[t], i) != NULL);
        CHECK(replica_partition(f.rm, "fresh", 0) == p);
    }
    rfx_fini(&f);
}

/* A walk in slices (replica_walk_slice, the metrics exporter's): a zero budget stops after
 * each bucket, every partition is seen exactly once over the slices, and a table rebuilt
 * between two slices (partitions added past its size) makes the walk start over. */
static uint64_t walk_clock;
static uint64_t walk_now(void)
{
    return ++walk_clock;
}

struct walk_seen {
    struct partition *p[512];
    int n, dup;
};

static void walk_visit(void *arg, struct partition *p)
{
    struct walk_seen *w = arg;
    for (int i = 0; i < w->n; i++)
        w->dup += w->p[i] == p;
    if (w->n < 512)
        w->p[w->n++] = p;
}

TEST(replica_walk_slice_sees_each_partition_once_and_restarts_on_growth)
{
    struct rfx f;
    struct replica_walk rw = {0};
    struct walk_seen seen = {0};
    static char names[33][16];
    static struct meta_record recs[33 * 9];
    size_t k = 0;

    REQUIRE(rfx_init(&f));
    REQUIRE(PROPOSE(&f, r_topic("orders", 1), r_part(1, 0, true, 3), r_part(1, 1, true, 3)) == 0);
    REQUIRE(rfx_rm_start(&f) == 0);
    /* A zero budget: one bucket per slice, and a walk still in progress... */
    int rc = REPLICA_WALK_MORE;
    for (int calls = 0; calls < 5 && rc == REPLICA_WALK_MORE; calls++)
        rc = replica_walk_slice(f.rm, &rw, walk_now, 0, walk_visit, &seen);
    CHECK(rc == REPLICA_WALK_MORE);
    /* ...when 264 partitions arrive and the table grows: the next slice says start over. */
    for (int t = 0; t < 33; t++) {
        snprintf(names[t], sizeof names[t], "walk%02d", t);
        recs[k++] = r_topic(names[t], 100 + t);
        for (int i = 0; i < 8; i++)
            recs[k++] = r_part(100 + t, i, true, 0);
    }
    REQUIRE(rfx_propose(&f, recs, k) == 0);
    CHECK_EQ_INT(replica_count(f.rm), 2 + 264);
    CHECK(replica_walk_slice(f.rm, &rw, walk_now, 0, walk_visit, &seen) == REPLICA_WALK_RESTART);

    /* Over again: every partition once, in more than one slice. */
    rw = (struct replica_walk){0};
    seen = (struct walk_seen){0};
    int slices = 0;
    do {
        rc = replica_walk_slice(f.rm, &rw, walk_now, 0, walk_visit, &seen);
        slices++;
    } while (rc == REPLICA_WALK_MORE && slices < 100000);
    CHECK(rc == REPLICA_WALK_DONE);
    CHECK(slices > 1);
    CHECK_EQ_INT(seen.n, 2 + 264);
    CHECK_EQ_INT(seen.dup, 0);
    /* A large budget: one slice does it all. */
    rw = (struct replica_walk){0};
    seen = (struct walk_seen){0};
    CHECK(replica_walk_slice(f.rm, &rw, walk_now, UINT64_MAX / 2, walk_visit, &seen) ==
          REPLICA_WALK_DONE);
    CHECK_EQ_INT(seen.n, 2 + 264);
    rfx_fini(&f);
}

/* ---- appends ------------------------------------------------------------------------------ */

TEST(replica_append_advances_hw_and_leo)
{
    struct rfx f;
    struct partition *p;
    struct record_batch b;
    int64_t base = -1, at = 0;

    REQUIRE(rfx_init(&f));
    REQUIRE(make_topic(&f, "t", 1, 1) == 0);
    REQUIRE(rfx_rm_start(&f) == 0);
    p = replica_partition(f.rm, "t", 0);
    REQUIRE(p);

    REQUIRE(append(p, 3, -1, 0, 0, 1000, &base, &at) == 0);
    CHECK_EQ_INT(base, 0);
    CHECK_EQ_INT(at, -1);
    CHECK_EQ_INT(partition_log_end_offset(p), 3);
    CHECK_EQ_INT(partition_high_watermark(p), 3);
    CHECK_EQ_INT(partition_last_stable_offset(p), 3);
    REQUIRE(append(p, 1, -1, 0, 0, 2000, &base, &at) == 0);
    CHECK_EQ_INT(base, 3);
    REQUIRE(append(p, 5, -1, 0, 0, 3000, &base, &at) == 0);
    CHECK_EQ_INT(base, 4);
    CHECK_EQ_INT(partition_log_end_offset(p), 9);
    CHECK_EQ_INT(partition_high_watermark(p), 9);
    CHECK_EQ_INT(partition_log_start_offset(p), 0);

    /* What is on disk: offsets assigned, CreateTime timestamps kept, CRC intact. */
    REQUIRE(read_header(p, 4, &b, true));
    CHECK_EQ_INT(b.base_offset, 4);
    CHECK_EQ_INT(b.last_offset_delta, 4);
    CHECK_EQ_INT(b.max_timestamp, 3004);
    CHECK_EQ_INT(b.attributes & RECORD_ATTR_LOG_APPEND_TIME, 0);
    CHECK_EQ_INT(b.leader_epoch, 0);
    REQUIRE(read_header(p, 3, &b, true));
    CHECK_EQ_INT(b.base_offset, 3);
    rfx_fini(&f);
}

TEST(replica_log_append_time)
{
    struct rfx f;
    struct partition *p;
    struct record_batch b;
    int64_t base = -1, at = -1;

    REQUIRE(rfx_init(&f));
    REQUIRE(PROPOSE(&f, r_topic("lat", 1), r_part(1, 0, true, 0),
                    r_config(2, "lat", "message.timestamp.type", "LogAppendTime")) == 0);
    REQUIRE(rfx_rm_start(&f) == 0);
    p = replica_partition(f.rm, "lat", 0);
    REQUIRE(p);
    CHECK(partition_settings(p)->log_append_time);

    tclock_advance(f.clock, 1234);
    REQUIRE(append(p, 2, -1, 0, 0, 1000, &base, &at) == 0);
    CHECK_EQ_INT(base, 0);
    CHECK_EQ_INT(at, T0 + 1234); /* the replica's clock, not the machine's */
    REQUIRE(read_header(p, 0, &b, true));
    CHECK(b.attributes & RECORD_ATTR_LOG_APPEND_TIME);
    CHECK_EQ_INT(b.max_timestamp, at);
    CHECK_EQ_INT(b.base_timestamp, 1000); /* the records keep theirs */

    /* Back to CreateTime through a CONFIG record. */
    REQUIRE(PROPOSE(&f, r_config(2, "lat", "message.timestamp.type", "CreateTime")) == 0);
    CHECK(!partition_settings(p)->log_append_time);
    REQUIRE(append(p, 1, -1, 0, 0, 5000, &base, &at) == 0);
    CHECK_EQ_INT(base, 2);
    CHECK_EQ_INT(at, -1);
    REQUIRE(read_header(p, 2, &b, true));
    CHECK_EQ_INT(b.attributes & RECORD_ATTR_LOG_APPEND_TIME, 0);
    CHECK_EQ_INT(b.max_timestamp, 5000);

    /* A dynamic cluster default reaches partitions without a topic setting. */
    REQUIRE(PROPOSE(&f, r_config(2, "lat", "message.timestamp.type", NULL)) == 0);
    CHECK(!partition_settings(p)->log_append_time);
    REQUIRE(PROPOSE(&f, r_config(4, "", "log.message.timestamp.type", "LogAppendTime"),
                    r_config(4, "", "message.max.bytes", "5000")) == 0);
    CHECK(partition_settings(p)->log_append_time);
    CHECK_EQ_INT(partition_settings(p)->max_message_bytes, 5000);
    tclock_advance(f.clock, 10);
    REQUIRE(append(p, 1, -1, 0, 0, 5000, &base, &at) == 0);
    CHECK_EQ_INT(at, T0 + 1244);

    /* The older single timestamp bound limits both directions. */
    REQUIRE(PROPOSE(&f, r_config(2, "lat", "message.timestamp.difference.max.ms", "60000"),
                    r_config(2, "lat", "message.timestamp.after.max.ms", "1000")) == 0);
    CHECK_EQ_INT(partition_settings(p)->ts_before_max_ms, 60000);
    CHECK_EQ_INT(partition_settings(p)->ts_after_max_ms, 1000);
    rfx_fini(&f);
}

TEST(replica_idempotent_duplicates_and_order)
{
    struct rfx f;
    struct partition *p;
    const struct pstate_producer *pp;
    int64_t base = -1, at;

    REQUIRE(rfx_init(&f));
    REQUIRE(make_topic(&f, "idem", 1, 1) == 0);
    REQUIRE(rfx_rm_start(&f) == 0);
    p = replica_partition(f.rm, "idem", 0);
    REQUIRE(p);

    REQUIRE(append(p, 3, 1000, 0, 0, 1000, &base, &at) == 0); /* seq 0..2 at 0..2 */
    CHECK_EQ_INT(base, 0);
    REQUIRE(append(p, 1, -1, 0, 0, 1000, &base, &at) == 0); /* a plain one at 3 */
    CHECK_EQ_INT(base, 3);
    REQUIRE(append(p, 2, 1000, 0, 3, 1000, &base, &at) == 0); /* seq 3..4 at 4..5 */
    CHECK_EQ_INT(base, 4);
    CHECK_EQ_INT(partition_log_end_offset(p), 6);

    /* Exact retries: nothing appended, the original offset back. */
    base = -1;
    CHECK_EQ_INT(append(p, 3, 1000, 0, 0, 1000, &base, &at), ERR_DUPLICATE_SEQUENCE_NUMBER);
    CHECK_EQ_INT(base, 0);
    base = -1;
    CHECK_EQ_INT(append(p, 2, 1000, 0, 3, 1000, &base, &at), ERR_DUPLICATE_SEQUENCE_NUMBER);
    CHECK_EQ_INT(base, 4);
    CHECK_EQ_INT(partition_log_end_offset(p), 6);
    CHECK_EQ_INT(partition_high_watermark(p), 6);

    /* A gap, an unknown producer mid-stream, an older epoch. */
    CHECK_EQ_INT(append(p, 1, 1000, 0, 9, 1000, &base, &at), ERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    CHECK_EQ_INT(append(p, 1, 2000, 0, 5, 1000, &base, &at), ERR_UNKNOWN_PRODUCER_ID);
    CHECK_EQ_INT(partition_log_end_offset(p), 6);
    REQUIRE(append(p, 1, 1000, 1, 0, 1000, &base, &at) == 0); /* new epoch from 0 */
    CHECK_EQ_INT(base, 6);
    CHECK_EQ_INT(append(p, 1, 1000, 0, 5, 1000, &base, &at), ERR_INVALID_PRODUCER_EPOCH);
    CHECK_EQ_INT(append(p, 1, 1000, 2, 3, 1000, &base, &at), ERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    CHECK_EQ_INT(partition_log_end_offset(p), 7);

    pp = pstate_get(partition_pstate(p), 1000);
    REQUIRE(pp);
    CHECK_EQ_INT(pp->epoch, 1);
    REQUIRE(pp->n_batches >= 1);
    CHECK_EQ_INT(pp->batches[pp->n_batches - 1].first_offset, 6);
    CHECK_EQ_INT(pp->batches[pp->n_batches - 1].last_seq, 0);
    CHECK(pstate_get(partition_pstate(p), 2000) == NULL);
    rfx_fini(&f);
}

/* ---- marks, watches and deletion ---------------------------------------------------------- */

/* A deferred request in miniature: one operation with one watch on a partition mark. */
struct mw {
    struct purgatory_op op;
    struct purgatory_watch w;
    int wakes;
    bool reached;
};

static void mw_wake(struct purgatory_op *op, struct purgatory_watch *w)
{
    struct mw *m = op->data;
    m->wakes++;
    m->reached = w->reached;
}

static void mw_done(struct purgatory_op *op, int result)
{
    (void)op;
    (void)result;
}

static void mw_init(struct purgatory *pg, struct mw *m)
{
    memset(m, 0, sizeof *m);
    purgatory_op_init(pg, &m->op, mw_wake, mw_done, m);
    purgatory_watch_init(&m->op, &m->w);
}

TEST(replica_marks_wake_watches_on_append_and_delete)
{
    struct rfx f;
    struct partition *p;
    struct tclock *clock = tclock_virtual_new(0);
    struct purgatory *pg = clock ? purgatory_new(clock) : NULL;
    struct mw end, hw, lso, later, gone;
    char path[256];

    REQUIRE(pg);
    REQUIRE(rfx_init(&f));
    REQUIRE(make_topic(&f, "w", 1, 1) == 0);
    REQUIRE(rfx_rm_start(&f) == 0);
    p = replica_partition(f.rm, "w", 0);
    REQUIRE(p);
    mw_init(pg, &end);
    mw_init(pg, &hw);
    mw_init(pg, &lso);
    mw_init(pg, &later);
    mw_init(pg, &gone);

    /* An append moves the log end, the high watermark (one replica) and the LSO (no
     * transactions), after updating them: watches reached fire once, others wait. */
    CHECK(!partition_watch(p, PARTITION_LOG_END, 1, &end.w));
    CHECK(!partition_watch(p, PARTITION_HIGH_WATERMARK, 1, &hw.w));
    CHECK(!partition_watch(p, PARTITION_LAST_STABLE, 1, &lso.w));
    CHECK(!partition_watch(p, PARTITION_HIGH_WATERMARK, 3, &later.w));
    REQUIRE(append(p, 1, -1, 0, 0, 1000, NULL, NULL) == 0);
    CHECK_EQ_INT(end.wakes, 1);
    CHECK_EQ_INT(hw.wakes, 1);
    CHECK_EQ_INT(lso.wakes, 1);
    CHECK(end.reached && hw.reached && lso.reached);
    CHECK_EQ_INT(later.wakes, 0);
    CHECK_EQ_INT(partition_mark(p, PARTITION_LOG_END), 1);
    CHECK_EQ_INT(partition_mark(p, PARTITION_HIGH_WATERMARK), 1);
    REQUIRE(append(p, 1, -1, 0, 0, 1000, NULL, NULL) == 0);
    CHECK_EQ_INT(end.wakes, 1); /* fired once: disarmed */
    CHECK_EQ_INT(later.wakes, 0);
    REQUIRE(append(p, 1, -1, 0, 0, 1000, NULL, NULL) == 0);
    CHECK_EQ_INT(later.wakes, 1);

    /* A mark already there does not arm. */
    CHECK(partition_watch(p, PARTITION_HIGH_WATERMARK, 3, &hw.w));
    CHECK(hw.w.reached && !purgatory_watch_armed(&hw.w));

    /* A rejected (duplicate) append moves nothing and wakes nobody. */
    REQUIRE(append(p, 1, 77, 0, 0, 1000, NULL, NULL) == 0);
    CHECK(!partition_watch(p, PARTITION_LOG_END, partition_log_end_offset(p) + 1, &end.w));
    CHECK_EQ_INT(append(p, 1, 77, 0, 0, 1000, NULL, NULL), ERR_DUPLICATE_SEQUENCE_NUMBER);
    CHECK_EQ_INT(end.wakes, 1);
    purgatory_cancel(&end.op);

    /* Deleting the topic fires the watches (not reached); a holder keeps the partition
     * alive, offline, and later watches answer at once. */
    CHECK(!partition_watch(p, PARTITION_HIGH_WATERMARK, 1000, &gone.w));
    partition_hold(p);
    REQUIRE(PROPOSE(&f, r_remove(1)) == 0);
    CHECK_EQ_INT(gone.wakes, 1);
    CHECK(!gone.reached);
    CHECK(!partition_online(p));
    CHECK(partition_watch(p, PARTITION_LOG_END, 1000, &gone.w));
    CHECK(replica_partition(f.rm, "w", 0) == NULL);
    CHECK_EQ_INT(replica_count(f.rm), 0);
    CHECK_EQ_INT(partition_log_end_offset(p), 4);
    partition_release(p);
    snprintf(path, sizeof path, "%s/w-0", f.log_dir);
    CHECK(access(path, F_OK) != 0);
    CHECK_EQ_INT(count_files(f.log_dir, "-delete", false), 0);
    rfx_fini(&f);
    struct mw *all[] = {&end, &hw, &lso, &later, &gone};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        purgatory_cancel(&all[i]->op);
    purgatory_free(pg);
    tclock_free(clock);
}

/* Waiting for durability starts a flush (nothing else would: flush.messages is off), and the
 * flush's completion fires the watch. */
TEST(replica_durable_mark_flushes_and_wakes)
{
    struct rfx f;
    struct partition *p;
    struct tclock *clock = tclock_virtual_new(0);
    struct purgatory *pg = clock ? purgatory_new(clock) : NULL;
    struct mw d;

    REQUIRE(pg);
    REQUIRE(rfx_init(&f));
    REQUIRE(make_topic(&f, "dur", 1, 1) == 0);
    REQUIRE(rfx_rm_start(&f) == 0);
    p = replica_partition(f.rm, "dur", 0);
    REQUIRE(p);
    REQUIRE(append(p, 3, -1, 0, 0, 1000, NULL, NULL) == 0);
    CHECK_EQ_INT(partition_mark(p, PARTITION_DURABLE), 0);
    mw_init(pg, &d);
    CHECK(!partition_watch(p, PARTITION_DURABLE, 3, &d.w));
    bool woke = false;
    for (int i = 0; i < 500 && d.wakes == 0; i++)
        fixture_run_until(&f.q.loop, &woke, 10);
    CHECK_EQ_INT(d.wakes, 1);
    CHECK(d.reached);
    CHECK_EQ_INT(partition_mark(p, PARTITION_DURABLE), 3);
    purgatory_cancel(&d.op);
    rfx_fini(&f);
    purgatory_free(pg);
    tclock_free(clock);
}

TEST(replica_remove_topic_deletes_directory)
{
    struct rfx f;
    struct partition *p;
    char path[256];
    int64_t base;

    REQUIRE(rfx_init(&f));
    REQUIRE(make_topic(&f, "gone", 1, 2) == 0);
    REQUIRE(make_topic(&f, "kept", 2, 1) == 0);
    REQUIRE(rfx_rm_start(&f) == 0);
    p = replica_partition(f.rm, "gone", 0);
    REQUIRE(p);
    for (int i = 0; i < 4; i++)
        REQUIRE(append(p, 2, -1, 0, 0, 1000, NULL, NULL) == 0);

    REQUIRE(PROPOSE(&f, r_remove(1)) == 0);
    CHECK_EQ_INT(replica_count(f.rm), 1);
    CHECK(replica_partition(f.rm, "gone", 0) == NULL);
    CHECK(replica_partition(f.rm, "gone", 1) == NULL);
    snprintf(path, sizeof path, "%s/gone-0", f.log_dir);
    CHECK(access(path, F_OK) != 0);
    snprintf(path, sizeof path, "%s/gone-1", f.log_dir);
    CHECK(access(path, F_OK) != 0);
    snprintf(path, sizeof path, "%s/kept-0", f.log_dir);
    CHECK(access(path, F_OK) == 0);
    CHECK_EQ_INT(count_files(f.log_dir, "-delete", false), 0);

    /* The same name again is a new, empty topic. */
    REQUIRE(make_topic(&f, "gone", 3, 1) == 0);
    p = replica_partition(f.rm, "gone", 0);
    REQUIRE(p);
    CHECK_EQ_INT(partition_log_end_offset(p), 0);
    REQUIRE(append(p, 1, -1, 0, 0, 1000, &base, NULL) == 0);
    CHECK_EQ_INT(base, 0);

    /* Delete and recreate in one batch while running: the old data does not survive. */
    REQUIRE(PROPOSE(&f, r_remove(3), r_topic("gone", 4), r_part(4, 0, true, 0)) == 0);
    p = replica_partition(f.rm, "gone", 0);
    REQUIRE(p);
    CHECK_EQ_INT(partition_log_end_offset(p), 0);
    rfx_fini(&f);
}

/* ---- shutdown and restart ----------------------------------------------------------------- */

TEST(replica_stop_writes_marker_checkpoints_snapshot)
{
    struct rfx f;
    struct partition *p;
    struct log_checkpoint_entry *e = NULL;
    size_t n = 0;
    char path[256], pdir[256];
    int64_t base = -1;

    REQUIRE(rfx_init(&f));
    REQUIRE(make_topic(&f, "ck", 1, 2) == 0);
    REQUIRE(rfx_rm_start(&f) == 0);
    p = replica_partition(f.rm, "ck", 1);
    REQUIRE(p);
    REQUIRE(append(p, 3, 500, 0, 0, 1000, &base, NULL) == 0);
    REQUIRE(append(p, 2, 500, 0, 3, 1000, &base, NULL) == 0);
    REQUIRE(append(p, 4, -1, 0, 0, 1000, &base, NULL) == 0);
    CHECK_EQ_INT(partition_log_end_offset(p), 9);
    REQUIRE(rfx_rm_stop(&f));

    CHECK(exists(f.log_dir, ".kafka_cleanshutdown"));
    snprintf(path, sizeof path, "%s/recovery-point-offset-checkpoint", f.log_dir);
    REQUIRE(log_checkpoint_read(sysio_default(), path, &e, &n) == 0);
    CHECK_EQ_INT(n, 2);
    for (size_t i = 0; i < n; i++) {
        CHECK_EQ_STR(e[i].topic, "ck");
        CHECK_EQ_INT(e[i].offset, e[i].partition == 1 ? 9 : 0);
    }
    free(e);
    e = NULL;
    snprintf(path, sizeof path, "%s/log-start-offset-checkpoint", f.log_dir);
    REQUIRE(log_checkpoint_read(sysio_default(), path, &e, &n) == 0);
    CHECK_EQ_INT(n, 2);
    for (size_t i = 0; i < n; i++)
        CHECK_EQ_INT(e[i].offset, 0);
    free(e);
    /* The producer snapshot as of the log end. */
    snprintf(pdir, sizeof pdir, "%s/ck-1", f.log_dir);
    CHECK(exists(pdir, "00000000000000000009.snapshot"));
    rfx_fini(&f);
}

/* Writes `text` to dir/name (NULL: removes it). */
static void put_file(const char *dir, const char *name, const char *text)
{
    char path[512];
    FILE *fp;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (text == NULL) {
        unlink(path);
        return;
    }
    fp = fopen(path, "w");
    REQUIRE(fp != NULL);
    fputs(text, fp);
    fclose(fp);
}

static void read_file(const char *dir, const char *name, char *buf, size_t cap)
{
    char path[512];
    FILE *fp;
    size_t n = 0;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    buf[0] = '\0';
    fp = fopen(path, "r");
    if (fp == NULL)
        return;
    n = fread(buf, 1, cap - 1, fp);
    buf[n] = '\0';
    fclose(fp);
}

/* PreviousBrokerEpoch from the log directory (KIP-966): the epoch the clean-shutdown marker
 * names; without one, the registration note's when it was written on this boot (a crash of
 * the process alone), -1 when on another (a crash of the machine) or when anything is
 * missing or malformed. */
TEST(replica_previous_broker_epoch_from_marker_or_same_boot)
{
    struct rfx f;
    char boot[64], note[128], buf[128];
    REQUIRE(rfx_init(&f));
    read_file("/proc/sys/kernel/random", "boot_id", boot, sizeof boot);
    boot[strcspn(boot, "\n")] = '\0';
    REQUIRE(boot[0] != '\0'); /* Linux: the kernel's boot id */

    CHECK_EQ_INT(replica_previous_broker_epoch(f.log_dir), -1); /* a new directory */
    CHECK_EQ_INT(replica_note_broker_epoch(f.log_dir, 42), 0);
    read_file(f.log_dir, ".tally_broker_epoch", buf, sizeof buf);
    snprintf(note, sizeof note, "%s 42\n", boot);
    CHECK_EQ_STR(buf, note);
    CHECK(!exists(f.log_dir, ".tally_broker_epoch.tmp"));
    CHECK_EQ_INT(replica_previous_broker_epoch(f.log_dir), 42); /* killed, same boot */
    /* Another boot, or a note that is not one: the page cache may be gone. */
    put_file(f.log_dir, ".tally_broker_epoch", "00000000-0000-0000-0000-000000000000 42\n");
    CHECK_EQ_INT(replica_previous_broker_epoch(f.log_dir), -1);
    snprintf(note, sizeof note, "%s\n", boot);
    put_file(f.log_dir, ".tally_broker_epoch", note);
    CHECK_EQ_INT(replica_previous_broker_epoch(f.log_dir), -1);
    snprintf(note, sizeof note, "%s -3\n", boot);
    put_file(f.log_dir, ".tally_broker_epoch", note);
    CHECK_EQ_INT(replica_previous_broker_epoch(f.log_dir), -1);
    snprintf(note, sizeof note, "%s 42", boot);
    put_file(f.log_dir, ".tally_broker_epoch", note); /* torn: no newline */
    CHECK_EQ_INT(replica_previous_broker_epoch(f.log_dir), -1);

    /* A clean stop writes the marker with the noted epoch, which counts on any boot. */
    CHECK_EQ_INT(replica_note_broker_epoch(f.log_dir, 77), 0);
    REQUIRE(rfx_rm_start(&f) == 0);
    CHECK_EQ_INT(replica_note_broker_epoch(f.log_dir, 78), 0); /* registered again */
    REQUIRE(rfx_rm_stop(&f));
    read_file(f.log_dir, ".kafka_cleanshutdown", buf, sizeof buf);
    CHECK_EQ_STR(buf, "{\"version\":0,\"brokerEpoch\":78}");
    put_file(f.log_dir, ".tally_broker_epoch", "00000000-0000-0000-0000-000000000000 99\n");
    CHECK_EQ_INT(replica_previous_broker_epoch(f.log_dir), 78);
    /* The start consumes the marker: then only a note of this boot counts. */
    REQUIRE(rfx_rm_start(&f) == 0);
    CHECK_EQ_INT(replica_previous_broker_epoch(f.log_dir), -1);
    REQUIRE(rfx_rm_stop(&f));
    read_file(f.log_dir, ".kafka_cleanshutdown", buf, sizeof buf);
    CHECK_EQ_STR(buf, "{\"version\":0,\"brokerEpoch\":99}");
    /* A marker naming no epoch (an older version's empty one, or no note at the stop). */
    put_file(f.log_dir, ".kafka_cleanshutdown", "");
    CHECK_EQ_INT(replica_previous_broker_epoch(f.log_dir), -1);
    put_file(f.log_dir, ".tally_broker_epoch", NULL);
    REQUIRE(rfx_rm_start(&f) == 0);
    REQUIRE(rfx_rm_stop(&f));
    read_file(f.log_dir, ".kafka_cleanshutdown", buf, sizeof buf);
    CHECK_EQ_STR(buf, "{\"version\":0,\"brokerEpoch\":-1}");
    CHECK_EQ_INT(replica_previous_broker_epoch(f.log_dir), -1);
    rfx_fini(&f);
}

TEST(replica_restart_recovers_leo_and_producers)
{
    struct rfx f;
    struct partition *p;
    int64_t base = -1;

    REQUIRE(rfx_init(&f));
    REQUIRE(make_topic(&f, "rs", 1, 1) == 0);
    REQUIRE(rfx_rm_start(&f) == 0);
    p = replica_partition(f.rm, "rs", 0);
    REQUIRE(p);
    REQUIRE(append(p, 3, 700, 2, 0, 1000, &base, NULL) == 0);
    REQUIRE(append(p, 1, -1, 0, 0, 1000, &base, NULL) == 0);
    REQUIRE(append(p, 2, 700, 2, 3, 1000, &base, NULL) == 0);
    CHECK_EQ_INT(base, 4);

    REQUIRE(rfx_restart(&f));
    /* The marker is consumed at start: a crash from now on must look like one. */
    CHECK(!exists(f.log_dir, ".kafka_cleanshutdown"));
    CHECK_EQ_INT(replica_count(f.rm), 1);
    p = replica_partition(f.rm, "rs", 0);
    REQUIRE(p);
    CHECK_EQ_INT(partition_log_end_offset(p), 6);
    CHECK_EQ_INT(partition_high_watermark(p), 6);
    /* A retry of the last batch is still a duplicate, with its original offset. */
    base = -1;
    CHECK_EQ_INT(append(p, 2, 700, 2, 3, 1000, &base, NULL), ERR_DUPLICATE_SEQUENCE_NUMBER);
    CHECK_EQ_INT(base, 4);
    base = -1;
    CHECK_EQ_INT(append(p, 3, 700, 2, 0, 1000, &base, NULL), ERR_DUPLICATE_SEQUENCE_NUMBER);
    CHECK_EQ_INT(base, 0);
    CHECK_EQ_INT(append(p, 1, 700, 1, 0, 1000, &base, NULL), ERR_INVALID_PRODUCER_EPOCH);
    REQUIRE(append(p, 1, 700, 2, 5, 1000, &base, NULL) == 0);
    CHECK_EQ_INT(base, 6);
    CHECK_EQ_INT(partition_log_end_offset(p), 7);
    rfx_fini(&f);
}

/* Appends `n` garbage bytes to the active segment of dir (a torn write). */
static bool tear_tail(const char *dir, int n)
{
    char path[512];
    uint8_t junk[64];
    int fd;
    bool ok;
    snprintf(path, sizeof path, "%s/00000000000000000000.log", dir);
    fd = open(path, O_WRONLY | O_APPEND);
    if (fd < 0)
        return false;
    memset(junk, 0xEE, sizeof junk);
    ok = write(fd, junk, (size_t)n) == n;
    close(fd);
    return ok;
}

/* Deletes every producer snapshot in dir. */
static void drop_snapshots(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[512];
    if (d == NULL)
        return;
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l > 9 && strcmp(e->d_name + l - 9, ".snapshot") == 0) {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
    }
    closedir(d);
}

TEST(replica_crash_recovers)
{
    struct rfx f;
    struct partition *p;
    char pdir[256], path[256];
    int64_t base = -1;

    REQUIRE(rfx_init(&f));
    REQUIRE(make_topic(&f, "cr", 1, 1) == 0);
    REQUIRE(rfx_rm_start(&f) == 0);
    p = replica_partition(f.rm, "cr", 0);
    REQUIRE(p);
    REQUIRE(append(p, 3, 900, 0, 0, 1000, &base, NULL) == 0);
    REQUIRE(append(p, 2, 900, 0, 3, 1000, &base, NULL) == 0);
    REQUIRE(append(p, 1, -1, 0, 0, 1000, &base, NULL) == 0);
    REQUIRE(rfx_rm_stop(&f));

    /* Make it look like a crash: no marker, no checkpoints, no producer snapshot, and a torn
     * write at the end of the segment. */
    snprintf(pdir, sizeof pdir, "%s/cr-0", f.log_dir);
    snprintf(path, sizeof path, "%s/.kafka_cleanshutdown", f.log_dir);
    REQUIRE(unlink(path) == 0);
    snprintf(path, sizeof path, "%s/recovery-point-offset-checkpoint", f.log_dir);
    unlink(path);
    drop_snapshots(pdir);
    REQUIRE(tear_tail(pdir, 40));

    REQUIRE(rfx_restart(&f));
    p = replica_partition(f.rm, "cr", 0);
    REQUIRE(p);
    CHECK_EQ_INT(partition_log_end_offset(p), 6);
    CHECK_EQ_INT(partition_high_watermark(p), 6);
    /* Producer state came back from the log itself. */
    base = -1;
    CHECK_EQ_INT(append(p, 2, 900, 0, 3, 1000, &base, NULL), ERR_DUPLICATE_SEQUENCE_NUMBER);
    CHECK_EQ_INT(base, 3);
    CHECK_EQ_INT(append(p, 1, 900, 0, 9, 1000, &base, NULL), ERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    REQUIRE(append(p, 1, 900, 0, 5, 1000, &base, NULL) == 0);
    CHECK_EQ_INT(base, 6);
    {
        struct record_batch b;
        CHECK(read_header(p, 6, &b, true));
        CHECK_EQ_INT(b.base_offset, 6);
    }

    /* A second crash right away (marker consumed at start, never rewritten): still fine. */
    REQUIRE(rfx_rm_stop(&f));
    snprintf(path, sizeof path, "%s/.kafka_cleanshutdown", f.log_dir);
    REQUIRE(unlink(path) == 0);
    REQUIRE(rfx_restart(&f));
    p = replica_partition(f.rm, "cr", 0);
    REQUIRE(p);
    CHECK_EQ_INT(partition_log_end_offset(p), 7);
    base = -1;
    CHECK_EQ_INT(append(p, 1, 900, 0, 5, 1000, &base, NULL), ERR_DUPLICATE_SEQUENCE_NUMBER);
    CHECK_EQ_INT(base, 6);
    rfx_fini(&f);
}

TEST(replica_stop_waits_for_flushes)
{
    struct rfx f;
    struct partition *p;
    struct log_checkpoint_entry *e = NULL;
    size_t n = 0;
    char path[256];

    REQUIRE(rfx_init(&f));
    REQUIRE(PROPOSE(&f, r_topic("fl", 1), r_part(1, 0, true, 0),
                    r_config(2, "fl", "flush.messages", "1")) == 0);
    REQUIRE(rfx_rm_start(&f) == 0);
    p = replica_partition(f.rm, "fl", 0);
    REQUIRE(p);
    /* Each append schedules an fsync on the thread pool; stop right away. */
    for (int i = 0; i < 20; i++)
        REQUIRE(append(p, 1, -1, 0, 0, 1000, NULL, NULL) == 0);
    REQUIRE(rfx_rm_stop(&f));
    CHECK(exists(f.log_dir, ".kafka_cleanshutdown"));
    snprintf(path, sizeof path, "%s/recovery-point-offset-checkpoint", f.log_dir);
    REQUIRE(log_checkpoint_read(sysio_default(), path, &e, &n) == 0);
    REQUIRE(n == 1);
    CHECK_EQ_INT(e[0].offset, 20);
    free(e);
    rfx_fini(&f);
}

/* True if `dir` holds an entry whose name starts with `prefix` and ends with `suffix`. */
static bool dir_entry_like(const char *dir, const char *prefix, const char *suffix)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    bool found = false;
    if (d == NULL)
        return false;
    while (!found && (e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name), ls = strlen(suffix);
        found = strncmp(e->d_name, prefix, strlen(prefix)) == 0 && n >= ls &&
                strcmp(e->d_name + n - ls, suffix) == 0;
    }
    closedir(d);
    return found;
}

TEST(replica_start_removes_leftover_directories)
{
    struct rfx f;
    struct partition *p;
    char path[256];

    REQUIRE(rfx_init(&f));
    REQUIRE(make_topic(&f, "doomed", 1, 2) == 0);
    REQUIRE(make_topic(&f, "stays", 2, 1) == 0);
    REQUIRE(make_topic(&f, "moving", 3, 1) == 0);
    REQUIRE(make_topic(&f, "renewed", 4, 1) == 0);
    REQUIRE(rfx_rm_start(&f) == 0);
    p = replica_partition(f.rm, "renewed", 0);
    REQUIRE(p);
    REQUIRE(append(p, 3, -1, 0, 0, 1000, NULL, NULL) == 0);
    p = replica_partition(f.rm, "stays", 0);
    REQUIRE(p);
    REQUIRE(append(p, 2, -1, 0, 0, 1000, NULL, NULL) == 0);
    REQUIRE(rfx_rm_stop(&f));

    /* While the broker is down: one topic deleted, one moved away, one deleted and
     * recreated under the same name; plus a half-deleted directory and a stray file. */
    REQUIRE(PROPOSE(&f, r_remove(1)) == 0);
    REQUIRE(PROPOSE(&f, r_part(3, 0, false, 1)) == 0);
    REQUIRE(PROPOSE(&f, r_remove(4), r_topic("renewed", 5), r_part(5, 0, true, 0)) == 0);
    snprintf(path, sizeof path, "%s/old-0.1234-delete", f.log_dir);
    REQUIRE(mkdir(path, 0755) == 0);
    snprintf(path, sizeof path, "%s/old-0.1234-delete/00000000000000000000.log", f.log_dir);
    fclose(fopen(path, "w"));
    snprintf(path, sizeof path, "%s/notes-1.txt", f.log_dir);
    fclose(fopen(path, "w"));

    /* Directories the metadata no longer places here are moved aside, never deleted (the
     * metadata may be what is wrong); only a directory renamed for deletion goes. */
    REQUIRE(rfx_rm_start(&f) == 0);
    snprintf(path, sizeof path, "%s/doomed-0", f.log_dir);
    CHECK(access(path, F_OK) != 0);
    CHECK(dir_entry_like(f.log_dir, "doomed-0.", "-stray"));
    snprintf(path, sizeof path, "%s/doomed-1", f.log_dir);
    CHECK(access(path, F_OK) != 0);
    CHECK(dir_entry_like(f.log_dir, "doomed-1.", "-stray"));
    snprintf(path, sizeof path, "%s/moving-0", f.log_dir);
    CHECK(access(path, F_OK) != 0);
    CHECK(dir_entry_like(f.log_dir, "moving-0.", "-stray"));
    snprintf(path, sizeof path, "%s/old-0.1234-delete", f.log_dir);
    CHECK(access(path, F_OK) != 0);
    snprintf(path, sizeof path, "%s/notes-1.txt", f.log_dir);
    CHECK(access(path, F_OK) == 0);
    CHECK_EQ_INT(replica_count(f.rm), 1);
    p = replica_partition(f.rm, "stays", 0);
    REQUIRE(p);
    CHECK_EQ_INT(partition_log_end_offset(p), 2);
    /* The recreated topic does not inherit the old one's records: they are moved aside and
     * the partition stays offline until an operator has looked (next start creates it). */
    CHECK(replica_partition(f.rm, "renewed", 0) == NULL);
    CHECK(dir_entry_like(f.log_dir, "renewed-0.", "-mismatch"));
    REQUIRE(rfx_restart(&f));
    p = replica_partition(f.rm, "renewed", 0);
    REQUIRE(p);
    CHECK_EQ_INT(partition_log_end_offset(p), 0);
    rfx_fini(&f);
}

/* partition.metadata cannot be written when a partition opens (here: the disk is full). The
 * partition stays offline — not in the table, no log created in its directory — with one ERROR
 * line that names the file and the reason; the housekeeping opens it again once the disk takes
 * writes. Every file access of the manager goes through f.rm->sys. */
static bool metadata_disk_full;

static int metadata_open(const char *path, int flags, mode_t mode)
{
    const char *name = strrchr(path, '/');
    if (metadata_disk_full && name != NULL && strcmp(name, "/partition.metadata") == 0 &&
        (flags & O_ACCMODE) != O_RDONLY) {
        errno = ENOSPC;
        return -1;
    }
    return sysio_default()->open(path, flags, mode);
}

/* Lines of `out` holding all of a, b and c. */
static int lines_with(const char *out, const char *a, const char *b, const char *c)
{
    int n = 0;
    for (const char *l = out; l != NULL && *l != '\0';) {
        const char *end = strchr(l, '\n');
        size_t len = end ? (size_t)(end - l) : strlen(l);
        char line[1024];
        snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), l);
        n += strstr(line, a) && strstr(line, b) && strstr(line, c);
        l = end ? end + 1 : NULL;
    }
    return n;
}

TEST(replica_partition_metadata_write_failure_keeps_partition_offline)
{
    struct rfx f;
    char path[256], out[16384];
    FILE *cap = tmpfile();
    int saved = dup(STDERR_FILENO);
    size_t n;

    REQUIRE(cap != NULL && saved >= 0);
    REQUIRE(rfx_init(&f));
    REQUIRE(rfx_rm_start(&f) == 0);
    f.rm->sys.open = metadata_open;
    metadata_disk_full = true;
    fflush(stderr);
    dup2(fileno(cap), STDERR_FILENO);
    int rc = make_topic(&f, "nometa", 1, 1);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    rewind(cap);
    n = fread(out, 1, sizeof out - 1, cap);
    out[n] = '\0';
    fclose(cap);
    CHECK_EQ_INT(rc, 0);
    CHECK(replica_partition(f.rm, "nometa", 0) == NULL);
    CHECK_EQ_INT(lines_with(out, "ERROR", "", ""), 1);
    CHECK_EQ_INT(lines_with(out, "ERROR", "nometa-0/partition.metadata", strerror(ENOSPC)), 1);
    snprintf(path, sizeof path, "%s/nometa-0", f.log_dir);
    CHECK_EQ_INT(count_files(path, ".log", true), 0);
    CHECK(!exists(path, "partition.metadata"));

    /* The disk takes writes again: the next retry (every 5 s) opens it. */
    metadata_disk_full = false;
    for (int i = 0; i < 30 && replica_partition(f.rm, "nometa", 0) == NULL; i++) {
        tclock_advance(f.clock, 200);
        CHECK(rfx_settle(&f));
    }
    struct partition *p = replica_partition(f.rm, "nometa", 0);
    REQUIRE(p != NULL);
    CHECK(exists(path, "partition.metadata"));
    CHECK_EQ_INT(append(p, 2, -1, 0, 0, 1000, NULL, NULL), 0);
    CHECK_EQ_INT(partition_log_end_offset(p), 2);
    f.rm->sys.open = sysio_default()->open;
    rfx_fini(&f);
}

/* Regression (issue 7, defect 1): a topic named __cluster_metadata had the metadata log's
 * directory as its partition directory; deleting the topic deleted the metadata. The replica
 * manager never opens, scans or deletes a directory that holds a metadata log. */
TEST(replica_reserved_topic_never_touches_the_metadata_dir)
{
    struct rfx f;
    char path[256];

    REQUIRE(rfx_init(&f));
    snprintf(path, sizeof path, "%s/__cluster_metadata-0", f.log_dir);
    REQUIRE(mkdir(path, 0755) == 0);
    snprintf(path, sizeof path, "%s/__cluster_metadata-0/metadata1", f.log_dir);
    fclose(fopen(path, "w"));
    /* and a metadata.log.dir named like a partition directory */
    snprintf(path, sizeof path, "%s/meta-0", f.log_dir);
    REQUIRE(mkdir(path, 0755) == 0);
    snprintf(path, sizeof path, "%s/meta-0/__cluster_metadata-0", f.log_dir);
    REQUIRE(mkdir(path, 0755) == 0);
    REQUIRE(make_topic(&f, "__cluster_metadata", 1, 1) == 0);
    REQUIRE(rfx_rm_start(&f) == 0);
    CHECK(replica_partition(f.rm, "__cluster_metadata", 0) == NULL);
    CHECK_EQ_INT(replica_count(f.rm), 0);
    snprintf(path, sizeof path, "%s/__cluster_metadata-0/partition.metadata", f.log_dir);
    CHECK(access(path, F_OK) != 0);
    REQUIRE(PROPOSE(&f, r_remove(1)) == 0);
    REQUIRE(rfx_restart(&f));
    snprintf(path, sizeof path, "%s/__cluster_metadata-0/metadata1", f.log_dir);
    CHECK(access(path, F_OK) == 0);
    snprintf(path, sizeof path, "%s/meta-0/__cluster_metadata-0", f.log_dir);
    CHECK(access(path, F_OK) == 0);
    rfx_fini(&f);
}

/* Regression: remove_orphans() took any directory whose name contained "-delete" (strstr,
 * not a suffix match) for a leftover of a deletion, so a live topic with "-delete" in its name
 * lost its data at every start. */
TEST(replica_topic_named_delete_survives_restart)
{
    struct rfx f;
    struct partition *p;

    REQUIRE(rfx_init(&f));
    REQUIRE(make_topic(&f, "audit-deletes", 1, 1) == 0);
    REQUIRE(rfx_rm_start(&f) == 0);
    p = replica_partition(f.rm, "audit-deletes", 0);
    REQUIRE(p);
    REQUIRE(append(p, 3, -1, 0, 0, 1000, NULL, NULL) == 0);
    REQUIRE(rfx_restart(&f));
    p = replica_partition(f.rm, "audit-deletes", 0);
    REQUIRE(p);
    CHECK_EQ_INT(partition_log_end_offset(p), 3);
    rfx_fini(&f);
}

TEST(replica_roll_snapshot_then_crash_replays_tail)
{
    struct rfx f;
    struct partition *p;
    char pdir[256], path[512];
    int64_t base = -1;
    int snaps;

    REQUIRE(rfx_init(&f));
    /* Small segments: every couple of batches rolls, and each roll snapshots producers. */
    REQUIRE(PROPOSE(&f, r_topic("roll", 1), r_part(1, 0, true, 0),
                    r_config(2, "roll", "segment.bytes", "200")) == 0);
    REQUIRE(rfx_rm_start(&f) == 0);
    p = replica_partition(f.rm, "roll", 0);
    REQUIRE(p);
    for (int i = 0; i < 12; i++) {
        REQUIRE(append(p, 2, 4242, 0, 2 * i, 1000, &base, NULL) == 0);
        CHECK_EQ_INT(base, 2 * i);
    }
    CHECK(log_active_base(partition_log(p)) > 0);
    snprintf(pdir, sizeof pdir, "%s/roll-0", f.log_dir);
    /* Written at each roll; pruned to the newest two on the thread pool. */
    for (int i = 0; i < 250 && (snaps = count_files(pdir, ".snapshot", true)) > 2; i++) {
        bool never = false;
        fixture_run_until(&f.q.loop, &never, 20);
    }
    CHECK(snaps >= 1 && snaps <= 2);
    REQUIRE(rfx_rm_stop(&f));

    /* A crash after the last roll: no marker and no end-of-log snapshot, so the state comes
     * from the roll's snapshot plus a replay of the active segment. */
    snprintf(path, sizeof path, "%s/.kafka_cleanshutdown", f.log_dir);
    REQUIRE(unlink(path) == 0);
    snprintf(path, sizeof path, "%s/00000000000000000024.snapshot", pdir);
    REQUIRE(unlink(path) == 0);
    CHECK(count_files(pdir, ".snapshot", true) >= 1);
    REQUIRE(rfx_restart(&f));
    p = replica_partition(f.rm, "roll", 0);
    REQUIRE(p);
    CHECK_EQ_INT(partition_log_end_offset(p), 24);
    base = -1;
    CHECK_EQ_INT(append(p, 2, 4242, 0, 22, 1000, &base, NULL), ERR_DUPLICATE_SEQUENCE_NUMBER);
    CHECK_EQ_INT(base, 22);
    base = -1;
    CHECK_EQ_INT(append(p, 2, 4242, 0, 16, 1000, &base, NULL), ERR_DUPLICATE_SEQUENCE_NUMBER);
    CHECK_EQ_INT(base, 16);
    REQUIRE(append(p, 1, 4242, 0, 24, 1000, &base, NULL) == 0);
    CHECK_EQ_INT(base, 24);
    rfx_fini(&f);
}

TEST(replica_housekeeping_retention_expiry_checkpoints)
{
    struct rfx f;
    struct partition *p;
    struct log_checkpoint_entry *e = NULL;
    size_t n = 0;
    char path[256];
    int64_t base = -1;

    REQUIRE(rfx_init(&f));
    REQUIRE(props_set(f.props, "log.retention.check.interval.ms", "1") == 0);
    REQUIRE(props_set(f.props, "log.flush.offset.checkpoint.interval.ms", "1") == 0);
    REQUIRE(props_set(f.props, "producer.id.expiration.check.interval.ms", "1") == 0);
    REQUIRE(props_set(f.props, "producer.id.expiration.ms", "1") == 0);
    REQUIRE(PROPOSE(&f, r_topic("hk", 1), r_part(1, 0, true, 0),
                    r_config(2, "hk", "segment.bytes", "200"),
                    r_config(2, "hk", "retention.ms", "1000")) == 0);
    REQUIRE(rfx_rm_start(&f) == 0);
    p = replica_partition(f.rm, "hk", 0);
    REQUIRE(p);
    /* Timestamps from 1970: every closed segment is past retention. */
    for (int i = 0; i < 8; i++)
        REQUIRE(append(p, 2, 31, 0, 2 * i, 1000, &base, NULL) == 0);
    CHECK(pstate_get(partition_pstate(p), 31) != NULL);
    CHECK_EQ_INT(partition_log_start_offset(p), 0);

    /* Nothing happens before the first housekeeping tick (200 ms), all of it at it. */
    CHECK_EQ_INT(tclock_advance(f.clock, 199), 0);
    CHECK_EQ_INT(partition_log_start_offset(p), 0);
    CHECK_EQ_INT(tclock_advance(f.clock, 1), 1);
    CHECK(pstate_get(partition_pstate(p), 31) == NULL);
    CHECK(partition_log_start_offset(p) > 0);
    CHECK(partition_log_start_offset(p) <= log_active_base(partition_log(p)));
    CHECK_EQ_INT(partition_log_end_offset(p), 16);
    /* The expired producer is forgotten: its next batch is judged as from a stranger. */
    CHECK_EQ_INT(append(p, 1, 31, 0, 16, 1000, &base, NULL), ERR_UNKNOWN_PRODUCER_ID);
    /* Checkpoints are written while running (on the thread pool: wait for it). */
    snprintf(path, sizeof path, "%s/log-start-offset-checkpoint", f.log_dir);
    for (int i = 0; i < 250; i++) {
        bool never = false;
        REQUIRE(log_checkpoint_read(sysio_default(), path, &e, &n) == 0);
        if (n == 1 && e[0].offset == partition_log_start_offset(p))
            break;
        free(e);
        e = NULL;
        fixture_run_until(&f.q.loop, &never, 20);
    }
    REQUIRE(n == 1);
    CHECK_EQ_INT(e[0].offset, partition_log_start_offset(p));
    free(e);

    /* The log start survives a restart. */
    {
        int64_t start = partition_log_start_offset(p);
        REQUIRE(props_set(f.props, "log.retention.check.interval.ms", "3600000") == 0);
        REQUIRE(rfx_restart(&f));
        p = replica_partition(f.rm, "hk", 0);
        REQUIRE(p);
        CHECK_EQ_INT(partition_log_start_offset(p), start);
        CHECK_EQ_INT(partition_log_end_offset(p), 16);
    }
    rfx_fini(&f);
}

/* Regression: the high watermarks went to disk only with the recovery points (every
 * log.flush.offset.checkpoint.interval.ms, 60 s), so a broker killed within a minute of its
 * writes restarted remembering an old HW and, after an unclean election chose a leader
 * without those records, reported their truncation as an ordinary diverged tail instead of
 * the WARN for records dropped below the HW (the process test
 * test_unclean_election_on_elects_an_out_of_sync_replica). They follow
 * replica.high.watermark.checkpoint.interval.ms, Kafka's shorter schedule. */
TEST(replica_high_watermarks_checkpointed_on_their_own_interval)
{
    struct rfx f;
    struct partition *p;
    struct log_checkpoint_entry *e = NULL;
    size_t n = 0;
    char hw_path[256], rec_path[256];
    int64_t base = -1;
    struct stat st;

    REQUIRE(rfx_init(&f));
    REQUIRE(props_set(f.props, "log.flush.offset.checkpoint.interval.ms", "3600000") == 0);
    REQUIRE(props_set(f.props, "replica.high.watermark.checkpoint.interval.ms", "1000") == 0);
    REQUIRE(PROPOSE(&f, r_topic("hwck", 1), r_part(1, 0, true, 0)) == 0);
    REQUIRE(rfx_rm_start(&f) == 0);
    p = replica_partition(f.rm, "hwck", 0);
    REQUIRE(p);
    REQUIRE(append(p, 5, -1, 0, 0, 1000, &base, NULL) == 0);
    CHECK_EQ_INT(partition_high_watermark(p), 5);
    snprintf(hw_path, sizeof hw_path, "%s/replication-offset-checkpoint", f.log_dir);
    snprintf(rec_path, sizeof rec_path, "%s/recovery-point-offset-checkpoint", f.log_dir);
    unlink(hw_path);
    unlink(rec_path);

    /* Not before the interval; at it, on the thread pool (wait for it). */
    CHECK_EQ_INT(tclock_advance(f.clock, 800), 4);
    CHECK(stat(hw_path, &st) != 0);
    CHECK_EQ_INT(tclock_advance(f.clock, 200), 1);
    for (int i = 0; i < 250; i++) {
        bool never = false;
        if (log_checkpoint_read(sysio_default(), hw_path, &e, &n) == 0 && n == 1)
            break;
        free(e);
        e = NULL;
        n = 0;
        fixture_run_until(&f.q.loop, &never, 20);
    }
    REQUIRE(n == 1);
    CHECK_EQ_STR(e[0].topic, "hwck");
    CHECK_EQ_INT(e[0].offset, 5);
    free(e);
    /* The recovery points keep their own, longer schedule. */
    CHECK(stat(rec_path, &st) != 0);
    rfx_fini(&f);
}

/* ---- roles, ISR and the high watermark ------------------------------------------------------ */

static struct meta_record r_part_set(int id, int32_t index, int32_t leader, int32_t epoch,
                                     const int32_t *replicas, int32_t n_replicas,
                                     const int32_t *isr, int32_t n_isr)
{
    struct meta_record r = {.type = META_REC_PARTITION};
    tid(r.u.partition.topic_id, id);
    r.u.partition.partition = index;
    r.u.partition.leader = leader;
    r.u.partition.leader_epoch = epoch;
    r.u.partition.partition_epoch = epoch;
    r.u.partition.n_replicas = n_replicas;
    r.u.partition.replicas = replicas;
    r.u.partition.n_isr = n_isr;
    r.u.partition.isr = isr;
    return r;
}

static const int32_t three[] = {NODE, 2, 3};

TEST(replica_role_follows_partition_records)
{
    struct rfx f;
    struct partition *p, *q;

    REQUIRE(rfx_init(&f));
    REQUIRE(rfx_rm_start(&f) == 0);
    REQUIRE(PROPOSE(&f, r_topic("r", 1), r_part_set(1, 0, NODE, 4, three, 3, three, 3),
                    r_part(1, 1, false, 0)) == 0);
    p = replica_partition(f.rm, "r", 0);
    REQUIRE(p);
    CHECK_EQ_INT(partition_role(p), REPLICA_LEADER);
    CHECK_EQ_INT(partition_leader_epoch(p), 4);
    CHECK_EQ_INT(partition_leader_id(p), NODE);
    CHECK(partition_is_replica(p, 3) && partition_in_isr(p, 2) && !partition_is_replica(p, 9));
    CHECK_EQ_INT(replica_leader_partition(f.rm, "r", 0, &q), 0);
    CHECK(q == p);
    /* Partition 1 lives on brokers 2 and 3: known to the image, not hosted here. */
    CHECK(replica_partition(f.rm, "r", 1) == NULL);
    CHECK_EQ_INT(replica_leader_partition(f.rm, "r", 1, &q), ERR_NOT_LEADER_OR_FOLLOWER);
    CHECK_EQ_INT(replica_leader_partition(f.rm, "r", 2, &q), ERR_UNKNOWN_TOPIC_OR_PARTITION);
    CHECK_EQ_INT(replica_leader_partition(f.rm, "nope", 0, &q), ERR_UNKNOWN_TOPIC_OR_PARTITION);
    uint8_t other[16];
    tid(other, 77);
    CHECK_EQ_INT(replica_leader_partition_by_id(f.rm, other, 0, &q), ERR_UNKNOWN_TOPIC_ID);

    /* Broker 2 takes over at epoch 5: this broker follows, and writes are refused. */
    REQUIRE(PROPOSE(&f, r_part_set(1, 0, 2, 5, three, 3, three, 3)) == 0);
    CHECK(replica_partition(f.rm, "r", 0) == p);
    CHECK_EQ_INT(partition_role(p), REPLICA_FOLLOWER);
    CHECK_EQ_INT(partition_leader_epoch(p), 5);
    CHECK_EQ_INT(partition_leader_id(p), 2);
    CHECK_EQ_INT(replica_leader_partition(f.rm, "r", 0, &q), ERR_NOT_LEADER_OR_FOLLOWER);
    CHECK_EQ_INT(append(p, 1, -1, 0, 0, 1000, NULL, NULL), ERR_NOT_LEADER_OR_FOLLOWER);
    CHECK_EQ_INT(fixture_follower_fetched(p, 2, 0), ERR_NOT_LEADER_OR_FOLLOWER);
    int64_t low;
    CHECK_EQ_INT(partition_delete_records(p, 0, &low), ERR_NOT_LEADER_OR_FOLLOWER);
    CHECK_EQ_INT(partition_log_end_offset(p), 0);
    rfx_fini(&f);
}

TEST(replica_hw_is_min_leo_over_isr)
{
    struct rfx f;
    struct partition *p;
    struct tclock *clock = tclock_virtual_new(0);
    struct purgatory *pg = clock ? purgatory_new(clock) : NULL;
    struct mw w;
    static const int32_t isr12[] = {NODE, 2};

    REQUIRE(pg);
    mw_init(pg, &w);
    REQUIRE(rfx_init(&f));
    REQUIRE(rfx_rm_start(&f) == 0);
    REQUIRE(PROPOSE(&f, r_topic("h", 1), r_part_set(1, 0, NODE, 1, three, 3, three, 3)) == 0);
    p = replica_partition(f.rm, "h", 0);
    REQUIRE(p);
    REQUIRE(append(p, 5, -1, 0, 0, 1000, NULL, NULL) == 0);
    /* The followers have not fetched: nothing is committed yet. */
    CHECK_EQ_INT(partition_log_end_offset(p), 5);
    CHECK_EQ_INT(partition_high_watermark(p), 0);
    CHECK_EQ_INT(partition_follower_offset(p, 2), -1);

    /* A deferred request waits for the high watermark to cover offset 2. */
    CHECK(!partition_watch(p, PARTITION_HIGH_WATERMARK, 3, &w.w));
    CHECK_EQ_INT(fixture_follower_fetched(p, 2, 5), 0);
    CHECK_EQ_INT(partition_follower_offset(p, 2), 5);
    CHECK_EQ_INT(partition_high_watermark(p), 0); /* 3 still holds it */
    CHECK_EQ_INT(w.wakes, 0);
    CHECK_EQ_INT(fixture_follower_fetched(p, 3, 3), 0);
    CHECK_EQ_INT(partition_high_watermark(p), 3);
    CHECK_EQ_INT(w.wakes, 1);
    CHECK(w.reached);
    /* Never backwards, never past the leader's end, only replicas count. */
    CHECK_EQ_INT(fixture_follower_fetched(p, 3, 1), 0);
    CHECK_EQ_INT(partition_high_watermark(p), 3);
    CHECK_EQ_INT(fixture_follower_fetched(p, 3, 99), ERR_OFFSET_OUT_OF_RANGE);
    CHECK_EQ_INT(partition_follower_offset(p, 3), 1);
    CHECK_EQ_INT(fixture_follower_fetched(p, 9, 5), ERR_NOT_LEADER_OR_FOLLOWER);
    CHECK_EQ_INT(fixture_follower_fetched(p, NODE, 5), ERR_NOT_LEADER_OR_FOLLOWER);

    /* The controller drops 3 from the ISR (an ISR-only change: the partition epoch moves, the
     * leader epoch stays): the others have everything. */
    struct meta_record shrink = r_part_set(1, 0, NODE, 1, three, 3, isr12, 2);
    shrink.u.partition.partition_epoch = 2;
    REQUIRE(PROPOSE(&f, shrink) == 0);
    CHECK_EQ_INT(partition_high_watermark(p), 5);
    /* Follower positions survive a change that keeps the epoch. */
    CHECK_EQ_INT(partition_follower_offset(p, 2), 5);

    /* A single-replica partition: HW = LEO, as before roles existed. */
    REQUIRE(make_topic(&f, "single", 2, 1) == 0);
    struct partition *s = replica_partition(f.rm, "single", 0);
    REQUIRE(s);
    REQUIRE(append(s, 4, -1, 0, 0, 1000, NULL, NULL) == 0);
    CHECK_EQ_INT(partition_high_watermark(s), 4);
    rfx_fini(&f);
    purgatory_free(pg);
    tclock_free(clock);
}

TEST(replica_read_bounds_by_reader)
{
    struct rfx f;
    struct partition *p;
    struct partition_slice sl;
    uint8_t *buf;
    size_t len;
    struct record_batch h;

    REQUIRE(rfx_init(&f));
    REQUIRE(rfx_rm_start(&f) == 0);
    REQUIRE(PROPOSE(&f, r_topic("b", 1), r_part_set(1, 0, NODE, 1, three, 3, three, 3)) == 0);
    p = replica_partition(f.rm, "b", 0);
    REQUIRE(p);
    REQUIRE(append(p, 2, -1, 0, 0, 1000, NULL, NULL) == 0); /* 0..1 */
    REQUIRE(append(p, 3, -1, 0, 0, 2000, NULL, NULL) == 0); /* 2..4 */

    /* Nothing committed: a consumer reads nothing, a follower reads everything. */
    CHECK_EQ_INT(partition_read(p, 0, 1 << 20, PARTITION_READ_UNCOMMITTED, &sl), 0);
    CHECK_EQ_INT(sl.len, 0);
    partition_slice_release(p, &sl);
    CHECK_EQ_INT(partition_read(p, 0, 1 << 20, PARTITION_READ_COMMITTED, &sl), 0);
    CHECK_EQ_INT(sl.len, 0);
    partition_slice_release(p, &sl);
    CHECK_EQ_INT(partition_read(p, 0, 1 << 20, PARTITION_READ_REPLICA, &sl), 0);
    size_t all = sl.len;
    CHECK(all > 0);
    partition_slice_release(p, &sl);
    CHECK_EQ_INT(partition_read_bound(p, PARTITION_READ_REPLICA), 5);

    /* HW 2: a consumer gets the first batch only. */
    REQUIRE(fixture_follower_fetched(p, 2, 2) == 0 && fixture_follower_fetched(p, 3, 2) == 0);
    CHECK_EQ_INT(partition_read_bound(p, PARTITION_READ_UNCOMMITTED), 2);
    CHECK_EQ_INT(partition_read(p, 0, 1 << 20, PARTITION_READ_UNCOMMITTED, &sl), 0);
    CHECK(sl.len > 0 && sl.len < all);
    REQUIRE(partition_slice_first_batch(&sl, 1 << 20, &buf, &len) == 0);
    REQUIRE(record_batch_parse(buf, len, &h) == 0);
    CHECK_EQ_INT(h.base_offset, 0);
    CHECK_EQ_INT(len, sl.len);
    free(buf);
    CHECK_EQ_INT(partition_slice_first_batch(&sl, 16, &buf, &len), ERR_MESSAGE_TOO_LARGE);
    partition_slice_release(p, &sl);
    CHECK_EQ_INT(partition_read(p, 2, 1 << 20, PARTITION_READ_UNCOMMITTED, &sl), 0);
    CHECK_EQ_INT(sl.len, 0);
    partition_slice_release(p, &sl);

    /* Outside the log: below the start or past the end. */
    CHECK_EQ_INT(partition_read(p, 6, 1 << 20, PARTITION_READ_REPLICA, &sl),
                 ERR_OFFSET_OUT_OF_RANGE);
    CHECK_EQ_INT(partition_read(p, -1, 1 << 20, PARTITION_READ_REPLICA, &sl),
                 ERR_OFFSET_OUT_OF_RANGE);

    /* DeleteRecords goes no further than the HW. */
    int64_t low;
    CHECK_EQ_INT(partition_delete_records(p, 3, &low), ERR_OFFSET_OUT_OF_RANGE);
    CHECK_EQ_INT(partition_delete_records(p, -1, &low), 0);
    CHECK_EQ_INT(low, 2);
    CHECK_EQ_INT(partition_read(p, 1, 1 << 20, PARTITION_READ_REPLICA, &sl),
                 ERR_OFFSET_OUT_OF_RANGE);
    rfx_fini(&f);
}

/* Builds a batch of n records as a leader would have stored it: base offset and epoch set. */
static uint8_t *leader_batch(int64_t base, int n, int32_t epoch, int64_t pid, int32_t seq,
                             size_t *len)
{
    struct record_input recs[16];
    struct record_build_options opt = {.base_offset = base,
                                       .producer_id = pid,
                                       .producer_epoch = pid >= 0 ? 0 : -1,
                                       .base_sequence = pid >= 0 ? seq : -1,
                                       .leader_epoch = epoch};
    static const uint8_t val[] = "replicated";
    uint8_t *b;
    for (int i = 0; i < n; i++)
        recs[i] = (struct record_input){
            .key_len = -1, .value = val, .value_len = 10, .timestamp = 5000 + i};
    return record_batch_build(&opt, recs, n, &b, len) == 0 ? b : NULL;
}

TEST(replica_follower_append_keeps_offsets_and_epochs)
{
    struct rfx f;
    struct partition *p;
    struct record_batch h;
    size_t l1, l2, l3;
    uint8_t *b1, *b2, *b3, *both;

    REQUIRE(rfx_init(&f));
    REQUIRE(rfx_rm_start(&f) == 0);
    REQUIRE(PROPOSE(&f, r_topic("fo", 1), r_part_set(1, 0, 2, 8, three, 3, three, 3)) == 0);
    p = replica_partition(f.rm, "fo", 0);
    REQUIRE(p);
    REQUIRE(partition_role(p) == REPLICA_FOLLOWER);

    /* A first fetch answer; the leader's HW is below our new end. */
    b1 = leader_batch(0, 3, 6, -1, 0, &l1);
    b2 = leader_batch(3, 2, 8, 4242, 0, &l2);
    REQUIRE(b1 && b2 && (both = malloc(l1 + l2)) != NULL);
    CHECK_EQ_INT(partition_append_as_follower(p, b1, l1, 2, 0), 0);
    CHECK_EQ_INT(partition_log_end_offset(p), 3);
    CHECK_EQ_INT(partition_high_watermark(p), 2);
    /* Two batches in one answer (the first already held: a re-sent range starts at our end,
     * so it is cut here): epochs 6 and 8, the second from a producer. */
    memcpy(both, b2, l2);
    CHECK_EQ_INT(partition_append_as_follower(p, both, l2, 5, 0), 0);
    CHECK_EQ_INT(partition_log_end_offset(p), 5);
    CHECK_EQ_INT(partition_high_watermark(p), 5);
    REQUIRE(read_header(p, 0, &h, true));
    CHECK_EQ_INT(h.base_offset, 0);
    CHECK_EQ_INT(h.leader_epoch, 6);
    REQUIRE(read_header(p, 3, &h, true));
    CHECK_EQ_INT(h.base_offset, 3);
    CHECK_EQ_INT(h.leader_epoch, 8);
    CHECK_EQ_INT(log_latest_epoch(partition_log(p)), 8);
    int32_t ep;
    int64_t end;
    log_epoch_end_offset(partition_log(p), 6, &ep, &end);
    CHECK_EQ_INT(ep, 6);
    CHECK_EQ_INT(end, 3);
    /* The producer state learned the replicated producer. */
    size_t n = 0;
    const struct pstate_producer *prod = pstate_producers(partition_pstate(p), &n);
    REQUIRE(n == 1);
    CHECK_EQ_INT(prod[0].producer_id, 4242);

    /* A gap (offset 7 when the end is 5) and garbage are refused; the HW never passes the end. */
    b3 = leader_batch(7, 1, 8, -1, 0, &l3);
    REQUIRE(b3);
    CHECK_EQ_INT(partition_append_as_follower(p, b3, l3, 100, 0), ERR_OFFSET_OUT_OF_RANGE);
    CHECK_EQ_INT(partition_log_end_offset(p), 5);
    CHECK_EQ_INT(partition_high_watermark(p), 5);
    uint8_t junk[20] = {0};
    CHECK_EQ_INT(partition_append_as_follower(p, junk, sizeof junk, 5, 0), ERR_CORRUPT_MESSAGE);
    /* A leader does not take replicated batches. */
    REQUIRE(PROPOSE(&f, r_part_set(1, 0, NODE, 9, three, 3, three, 3)) == 0);
    CHECK_EQ_INT(partition_append_as_follower(p, b3, l3, 5, 0), ERR_NOT_LEADER_OR_FOLLOWER);
    free(b1);
    free(b2);
    free(b3);
    free(both);
    rfx_fini(&f);
}

/* Safety: an acks=all write parked on a leader that is deposed must never be answered
 * "reached". Its watch on the high watermark fails (not reached) in the same call that applies
 * the new leader's record — before any follower append or truncation — and the follower HW
 * the new leader then hands down, which passes the parked offset, wakes nothing. */
TEST(replica_deposed_leader_fails_parked_waiters_before_following)
{
    struct rfx f;
    struct partition *p;
    struct tclock *clock = tclock_virtual_new(0);
    struct purgatory *pg = clock ? purgatory_new(clock) : NULL;
    struct mw hw, lso, end;
    size_t len;

    REQUIRE(pg);
    mw_init(pg, &hw);
    mw_init(pg, &lso);
    mw_init(pg, &end);
    REQUIRE(rfx_init(&f));
    REQUIRE(rfx_rm_start(&f) == 0);
    REQUIRE(PROPOSE(&f, r_topic("dz", 1), r_part_set(1, 0, NODE, 1, three, 3, three, 3)) == 0);
    p = replica_partition(f.rm, "dz", 0);
    REQUIRE(p);
    REQUIRE(append(p, 5, -1, 0, 0, 1000, NULL, NULL) == 0);
    CHECK_EQ_INT(partition_high_watermark(p), 0); /* no follower has fetched */
    CHECK(!partition_watch(p, PARTITION_HIGH_WATERMARK, 3, &hw.w));
    CHECK(!partition_watch(p, PARTITION_LAST_STABLE, 3, &lso.w));
    CHECK(!partition_watch(p, PARTITION_LOG_END, 9, &end.w));

    /* Broker 2 leads at epoch 2: every waiter fails now, none reached. */
    REQUIRE(PROPOSE(&f, r_part_set(1, 0, 2, 2, three, 3, three, 3)) == 0);
    REQUIRE(partition_role(p) == REPLICA_FOLLOWER);
    CHECK_EQ_INT(hw.wakes, 1);
    CHECK(!hw.reached);
    CHECK_EQ_INT(lso.wakes, 1);
    CHECK(!lso.reached);
    CHECK_EQ_INT(end.wakes, 1);
    CHECK(!end.reached);

    /* The new leader's data, with its HW past the parked offset: nothing more wakes. */
    uint8_t *b = leader_batch(5, 2, 2, -1, 0, &len);
    REQUIRE(b);
    CHECK_EQ_INT(partition_append_as_follower(p, b, len, 7, 0), 0);
    CHECK_EQ_INT(partition_high_watermark(p), 7);
    CHECK_EQ_INT(hw.wakes, 1);
    CHECK(!hw.reached);
    CHECK_EQ_INT(end.wakes, 1);
    free(b);
    rfx_fini(&f);
    struct mw *all[] = {&hw, &lso, &end};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        purgatory_cancel(&all[i]->op);
    purgatory_free(pg);
    tclock_free(clock);
}

/* ---- leadership events ---------------------------------------------------------------------- */

#define EV_MAX 1024
struct ev_log {
    int n;
    struct {
        char topic[16];
        int32_t partition;
        enum replica_role role;
        int32_t epoch;
    } e[EV_MAX];
};

static void on_event(void *arg, const struct replica_event *ev)
{
    struct ev_log *l = arg;
    if (l->n >= EV_MAX)
        return;
    snprintf(l->e[l->n].topic, sizeof l->e[l->n].topic, "%s", ev->topic);
    l->e[l->n].partition = ev->partition;
    l->e[l->n].role = ev->role;
    l->e[l->n].epoch = ev->leader_epoch;
    l->n++;
}

TEST(replica_events_delivered_in_slices_and_order)
{
    static struct ev_log a, b;
    struct rfx f;
    enum { N = 200 };
    static struct meta_record recs[N + 1];
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);

    REQUIRE(rfx_init(&f));
    REQUIRE(rfx_rm_start(&f) == 0);
    REQUIRE(replica_subscribe(f.rm, on_event, &a) == 0);
    REQUIRE(replica_subscribe(f.rm, on_event, &b) == 0);
    CHECK_EQ_INT(replica_subscribe(f.rm, on_event, &a), ERR_EXISTS);

    recs[0] = r_topic("ev", 1);
    for (int i = 0; i < N; i++)
        recs[i + 1] = r_part(1, i, true, 3);
    /* The apply opens nothing and delivers nothing: that happens after it returns, a slice
     * per loop turn (the proposal's callback may come a turn or two after the apply). */
    REQUIRE(fixture_meta_propose(&f.q, recs, N + 1) == 0);
    CHECK(replica_count(f.rm) < N);
    CHECK(a.n < N);
    int turns = 0, prev = 0;
    while ((replica_opens_pending(f.rm) > 0 || replica_events_pending(f.rm) > 0) && turns < 1000) {
        uv_run(&f.q.loop, UV_RUN_NOWAIT);
        CHECK(a.n - prev <= REPLICA_EVENTS_PER_TURN);
        prev = a.n;
        turns++;
    }
    CHECK(turns >= N / REPLICA_EVENTS_PER_TURN);
    CHECK_EQ_INT(replica_count(f.rm), N);
    REQUIRE(a.n == N && b.n == N);
    for (int i = 0; i < N; i++) {
        CHECK_EQ_INT(a.e[i].partition, i);
        CHECK_EQ_INT(a.e[i].role, REPLICA_LEADER);
        CHECK_EQ_INT(a.e[i].epoch, 3);
        CHECK(strcmp(a.e[i].topic, "ev") == 0);
        CHECK_EQ_INT(b.e[i].partition, i);
    }

    /* Leadership of partition 7 moves away (follower at epoch 4), a config change announces
     * nothing, then the topic goes: every partition is GONE, in order. */
    replica_unsubscribe(f.rm, on_event, &b);
    REQUIRE(PROPOSE(&f, r_part_set(1, 7, 2, 4, three, 3, three, 3)) == 0);
    REQUIRE(a.n == N + 1);
    CHECK_EQ_INT(a.e[N].partition, 7);
    CHECK_EQ_INT(a.e[N].role, REPLICA_FOLLOWER);
    CHECK_EQ_INT(a.e[N].epoch, 4);
    REQUIRE(PROPOSE(&f, r_config(2, "ev", "retention.ms", "1000")) == 0);
    CHECK_EQ_INT(a.n, N + 1);
    REQUIRE(PROPOSE(&f, r_remove(1)) == 0);
    CHECK_EQ_INT(a.n, 2 * N + 1);
    int gone = 0;
    for (int i = N + 1; i < a.n; i++)
        gone += a.e[i].role == REPLICA_GONE;
    CHECK_EQ_INT(gone, N);
    CHECK_EQ_INT(b.n, N); /* unsubscribed */
    rfx_fini(&f);
}

/* ---- file writes on the thread pool ------------------------------------------------------ */

/* Writes of one file run one at a time and in the order they were asked for, whatever the
 * pool does with them; writes of other files run beside them; a stop waits for them all. */
#define FW_N 40
struct fw_write {
    struct replica_write w;
    int key, seq;
};
static _Atomic int fw_busy[3]; /* writes of each key running now */
static _Atomic int fw_overlap; /* times two writes of one key ran together */
static int fw_order[3][FW_N];  /* sequence numbers of each key's writes, as they ran */
static _Atomic int fw_ran[3];
static int fw_done;
static bool fw_all_done;

static void fw_run(struct replica_write *w)
{
    struct fw_write *x = (struct fw_write *)w;
    if (atomic_fetch_add(&fw_busy[x->key], 1) != 0)
        atomic_fetch_add(&fw_overlap, 1);
    usleep(x->seq % 3 == 0 ? 2000 : 200); /* uneven, so the pool would reorder them */
    fw_order[x->key][atomic_fetch_add(&fw_ran[x->key], 1)] = x->seq;
    atomic_fetch_sub(&fw_busy[x->key], 1);
}

static void fw_after(struct replica_write *w)
{
    free(w);
    if (++fw_done == 3 * FW_N)
        fw_all_done = true;
}

TEST(replica_file_writes_serialized_per_file)
{
    struct rfx f;
    char key[PATH_MAX + 64];

    REQUIRE(rfx_init(&f));
    REQUIRE(rfx_rm_start(&f) == 0);
    fw_done = 0;
    fw_all_done = false;
    for (int seq = 0; seq < FW_N; seq++) {
        for (int k = 0; k < 3; k++) {
            struct fw_write *x = calloc(1, sizeof *x);
            REQUIRE(x != NULL);
            x->key = k;
            x->seq = seq;
            x->w.run = fw_run;
            x->w.done = fw_after;
            x->w.urgent = k == 2 && seq % 7 == 0; /* urgent ones keep their file's order */
            snprintf(key, sizeof key, "%s/file-%d", f.log_dir, k);
            replica_write_submit(f.rm, &x->w, key);
        }
    }
    CHECK(fixture_run_until(&f.q.loop, &fw_all_done, 20000));
    CHECK_EQ_INT(atomic_load(&fw_overlap), 0);
    for (int k = 0; k < 3; k++) {
        CHECK_EQ_INT(atomic_load(&fw_ran[k]), FW_N);
        for (int i = 0; i < FW_N; i++)
            CHECK_EQ_INT(fw_order[k][i], i);
    }
    rfx_fini(&f);
}

/* ---- timing on virtual time ------------------------------------------------------------------ */

TEST(replica_segment_ms_rolls_on_virtual_time)
{
    struct rfx f;
    struct partition *p;
    int64_t base = -1;

    REQUIRE(rfx_init(&f));
    REQUIRE(PROPOSE(&f, r_topic("age", 1), r_part(1, 0, true, 0),
                    r_config(2, "age", "segment.ms", "60000")) == 0);
    REQUIRE(rfx_rm_start(&f) == 0);
    p = replica_partition(f.rm, "age", 0);
    REQUIRE(p);
    REQUIRE(append(p, 1, -1, 0, 0, T0, &base, NULL) == 0);
    /* The segment's age counts from its first batch, on the replica's clock. */
    tclock_advance(f.clock, 60000);
    REQUIRE(append(p, 1, -1, 0, 0, T0, &base, NULL) == 0);
    CHECK_EQ_INT(log_active_base(partition_log(p)), 0);
    tclock_advance(f.clock, 1);
    REQUIRE(append(p, 1, -1, 0, 0, T0, &base, NULL) == 0);
    CHECK_EQ_INT(base, 2);
    CHECK_EQ_INT(log_active_base(partition_log(p)), 2);
    /* The new segment is young again. */
    tclock_advance(f.clock, 30000);
    REQUIRE(append(p, 1, -1, 0, 0, T0, &base, NULL) == 0);
    CHECK_EQ_INT(log_active_base(partition_log(p)), 2);
    rfx_fini(&f);
}

TEST(replica_retention_ms_by_the_housekeeping_timer_on_virtual_time)
{
    struct rfx f;
    struct partition *p;
    int64_t base = -1;

    REQUIRE(rfx_init(&f));
    REQUIRE(props_set(f.props, "log.retention.check.interval.ms", "1000") == 0);
    REQUIRE(PROPOSE(&f, r_topic("old", 1), r_part(1, 0, true, 0),
                    r_config(2, "old", "segment.bytes", "200"),
                    r_config(2, "old", "retention.ms", "10000")) == 0);
    REQUIRE(rfx_rm_start(&f) == 0);
    p = replica_partition(f.rm, "old", 0);
    REQUIRE(p);
    /* Records stamped with the replica's "now": several sealed segments of them. */
    for (int i = 0; i < 8; i++)
        REQUIRE(append(p, 2, -1, 0, 0, T0, &base, NULL) == 0);
    REQUIRE(log_active_base(partition_log(p)) > 0);

    /* Retention checks run every second, and the records are not old enough until
     * T0 + 10 s has passed. */
    tclock_advance(f.clock, 10000);
    CHECK_EQ_INT(partition_log_start_offset(p), 0);
    /* The next check (at 11 s) finds them past retention.ms and deletes every sealed
     * segment; the active one stays. */
    tclock_advance(f.clock, 999);
    CHECK_EQ_INT(partition_log_start_offset(p), 0);
    tclock_advance(f.clock, 1);
    CHECK_EQ_INT(partition_log_start_offset(p), log_active_base(partition_log(p)));
    CHECK_EQ_INT(partition_log_end_offset(p), 16);
    rfx_fini(&f);
}

TEST(replica_producer_expiry_on_virtual_time)
{
    struct rfx f;
    struct partition *p;
    int64_t base = -1;

    REQUIRE(rfx_init(&f));
    REQUIRE(props_set(f.props, "producer.id.expiration.check.interval.ms", "1000") == 0);
    REQUIRE(props_set(f.props, "producer.id.expiration.ms", "60000") == 0);
    REQUIRE(make_topic(&f, "pid", 1, 1) == 0);
    REQUIRE(rfx_rm_start(&f) == 0);
    p = replica_partition(f.rm, "pid", 0);
    REQUIRE(p);

    REQUIRE(append(p, 1, 77, 0, 0, T0, &base, NULL) == 0);
    REQUIRE(pstate_get(partition_pstate(p), 77) != NULL);
    CHECK_EQ_INT(pstate_get(partition_pstate(p), 77)->last_update_ms, T0);
    tclock_advance(f.clock, 30000);
    /* An append refreshes the producer's stamp to the replica's now. */
    REQUIRE(append(p, 1, 77, 0, 1, T0, &base, NULL) == 0);
    CHECK_EQ_INT(pstate_get(partition_pstate(p), 77)->last_update_ms, T0 + 30000);
    /* 60 s after its last append it is still known (expiry needs "older than")... */
    tclock_advance(f.clock, 60000);
    CHECK(pstate_get(partition_pstate(p), 77) != NULL);
    /* ...and the next check forgets it. */
    tclock_advance(f.clock, 1000);
    CHECK(pstate_get(partition_pstate(p), 77) == NULL);
    CHECK_EQ_INT(append(p, 1, 77, 0, 2, T0, &base, NULL), ERR_UNKNOWN_PRODUCER_ID);
    rfx_fini(&f);
}

/* ---- the log cleaner's scheduling (cleaner.c) ------------------------------------------------ */

static int append_key(struct partition *p, const char *key, int64_t ts)
{
    struct record_input rec = {.key = (const uint8_t *)key,
                               .key_len = (int32_t)strlen(key),
                               .value = (const uint8_t *)"value",
                               .value_len = 5,
                               .timestamp = ts};
    struct record_build_options opt = {.producer_id = -1, .base_sequence = -1, .leader_epoch = -1};
    struct record_batch hdr;
    int64_t base, at;
    uint8_t *b;
    size_t len;
    int rc;

    if (record_batch_build(&opt, &rec, 1, &b, &len) != 0 || record_batch_validate(b, len, &hdr))
        return -9999;
    rc = partition_append(p, b, len, &hdr, &base, &at);
    free(b);
    return rc;
}

TEST(replica_cleaner_cleans_compacted_topics_after_backoff_and_checkpoints)
{
    struct rfx f;
    struct partition *cmp, *del;
    struct log_checkpoint_entry *e = NULL;
    size_t n = 0;
    char path[256], key[8];

    REQUIRE(rfx_init(&f));
    REQUIRE(props_set(f.props, "log.cleaner.backoff.ms", "1000") == 0);
    REQUIRE(PROPOSE(&f, r_topic("cmp", 1), r_part(1, 0, true, 0), r_topic("del", 2),
                    r_part(2, 0, true, 0), r_config(2, "cmp", "cleanup.policy", "compact"),
                    r_config(2, "cmp", "segment.bytes", "200"),
                    r_config(2, "del", "segment.bytes", "200")) == 0);
    REQUIRE(rfx_rm_start(&f) == 0);
    cmp = replica_partition(f.rm, "cmp", 0);
    del = replica_partition(f.rm, "del", 0);
    REQUIRE(cmp && del);
    for (int i = 0; i < 30; i++) {
        snprintf(key, sizeof key, "k%d", i % 3);
        REQUIRE(append_key(cmp, key, T0) == 0);
        REQUIRE(append_key(del, key, T0) == 0);
    }
    int64_t active = log_active_base(partition_log(cmp)), size = log_size_bytes(partition_log(del));
    REQUIRE(active > 3);
    CHECK_EQ_INT(log_size_bytes(partition_log(cmp)), size);

    /* Within log.cleaner.backoff.ms of the start nothing is looked at; then the compacted
     * topic (only) is cleaned, on the thread pool, and its checkpoint written. */
    tclock_advance(f.clock, 800);
    CHECK_EQ_INT(cmp->clean_offset, -1);
    CHECK(!cmp->cleaning);
    tclock_advance(f.clock, 200);
    CHECK(cmp->cleaning);
    CHECK(!del->cleaning);
    snprintf(path, sizeof path, "%s/cleaner-offset-checkpoint", f.log_dir);
    for (int i = 0; i < 250; i++) {
        bool never = false;
        if (log_checkpoint_read(sysio_default(), path, &e, &n) == 0 && n == 1)
            break;
        free(e);
        e = NULL;
        fixture_run_until(&f.q.loop, &never, 20);
    }
    REQUIRE(n == 1);
    CHECK_EQ_STR(e[0].topic, "cmp");
    CHECK_EQ_INT(e[0].offset, active);
    free(e);
    CHECK_EQ_INT(cmp->clean_offset, active);
    CHECK(!cmp->cleaning);
    CHECK(log_size_bytes(partition_log(cmp)) < size);
    CHECK_EQ_INT(log_size_bytes(partition_log(del)), size);
    CHECK_EQ_INT(partition_log_end_offset(cmp), 30);

    /* The checkpoint is read back at start. */
    REQUIRE(rfx_restart(&f));
    cmp = replica_partition(f.rm, "cmp", 0);
    REQUIRE(cmp);
    CHECK_EQ_INT(cmp->clean_offset, active);
    CHECK_EQ_INT(replica_partition(f.rm, "del", 0)->clean_offset, -1);
    rfx_fini(&f);
}

/* ---- transactions (issue 10) ------------------------------------------------------------- */

/* As append, with the transactional bit. */
static int append_txn(struct partition *p, int n, int64_t pid, int16_t epoch, int32_t seq,
                      int64_t *base)
{
    struct record_input recs[16];
    struct record_build_options opt = {.base_offset = 0,
                                       .attributes = RECORD_ATTR_TRANSACTIONAL,
                                       .producer_id = pid,
                                       .producer_epoch = epoch,
                                       .base_sequence = seq,
                                       .leader_epoch = -1};
    static const uint8_t val[] = "value";
    struct record_batch hdr;
    uint8_t *b;
    size_t len;
    int64_t at, dummy;
    int rc;

    for (int i = 0; i < n; i++)
        recs[i] =
            (struct record_input){.key_len = -1, .value = val, .value_len = 5, .timestamp = 1000};
    if (record_batch_build(&opt, recs, n, &b, &len) != 0)
        return -9999;
    if (record_batch_validate(b, len, &hdr) != 0) {
        free(b);
        return -9998;
    }
    rc = partition_append(p, b, len, &hdr, base ? base : &dummy, &at);
    free(b);
    return rc;
}

static size_t aborted(struct partition *p, int64_t from, int64_t upto, int64_t *pid0,
                      int64_t *first0)
{
    struct partition_aborted_txn *v;
    size_t n = 0;
    if (partition_aborted_txns(p, from, upto, &v, &n) != 0)
        return 9999;
    if (n > 0) {
        *pid0 = v[0].producer_id;
        *first0 = v[0].first_offset;
    }
    free(v);
    return n;
}

/* DeleteRecords may move the log start past the first offset of a transaction still open (a
 * client's choice, up to the HW): the LSO is then the log start, as Kafka's is, never below it
 * — a read_committed reader at the log start must not be told the stable end lies before it. */
TEST(replica_lso_never_below_log_start_after_delete_records)
{
    struct rfx f;
    struct partition *p;
    int64_t base = -1, low = -1, off = -1;

    REQUIRE(rfx_init(&f));
    REQUIRE(make_topic(&f, "txdel", 1, 1) == 0);
    REQUIRE(rfx_rm_start(&f) == 0);
    p = replica_partition(f.rm, "txdel", 0);
    REQUIRE(p);
    REQUIRE(append_txn(p, 2, 60, 0, 0, &base) == 0);         /* 0..1, open */
    REQUIRE(append(p, 3, -1, 0, 0, 1000, &base, NULL) == 0); /* 2..4 plain */
    CHECK_EQ_INT(partition_last_stable_offset(p), 0);
    CHECK_EQ_INT(partition_high_watermark(p), 5);
    CHECK_EQ_INT(partition_delete_records(p, 3, &low), 0);
    CHECK_EQ_INT(low, 3);
    CHECK_EQ_INT(partition_log_start_offset(p), 3);
    CHECK_EQ_INT(partition_last_stable_offset(p), 3);
    CHECK_EQ_INT(partition_read_bound(p, PARTITION_READ_COMMITTED), 3);
    /* The transaction ends: the LSO is the HW again. */
    REQUIRE(partition_write_marker(p, 60, 0, 1, true, &off) == 0);
    CHECK_EQ_INT(off, 5);
    CHECK_EQ_INT(partition_last_stable_offset(p), 6);
    rfx_fini(&f);
}

TEST(replica_lso_follows_transactions_and_markers)
{
    struct rfx f;
    struct partition *p;
    int64_t base = -1, off = -1, pid = -1, first = -1;

    REQUIRE(rfx_init(&f));
    REQUIRE(make_topic(&f, "tx", 1, 1) == 0);
    REQUIRE(rfx_rm_start(&f) == 0);
    p = replica_partition(f.rm, "tx", 0);
    REQUIRE(p);
    REQUIRE(append(p, 2, -1, 0, 0, 1000, &base, NULL) == 0); /* 0..1 plain */
    CHECK_EQ_INT(partition_last_stable_offset(p), 2);
    REQUIRE(append_txn(p, 2, 50, 0, 0, &base) == 0); /* 2..3 producer 50 */
    CHECK_EQ_INT(partition_last_stable_offset(p), 2);
    CHECK_EQ_INT(partition_high_watermark(p), 4);
    REQUIRE(append_txn(p, 1, 51, 0, 0, &base) == 0);         /* 4 producer 51 */
    REQUIRE(append(p, 1, -1, 0, 0, 1000, &base, NULL) == 0); /* 5 plain */
    CHECK_EQ_INT(partition_read_bound(p, PARTITION_READ_COMMITTED), 2);
    CHECK_EQ_INT(partition_read_bound(p, PARTITION_READ_UNCOMMITTED), 6);
    /* Producer 50 aborts: LSO moves to producer 51's first offset; the abort is indexed. */
    REQUIRE(partition_write_marker(p, 50, 0, 3, false, &off) == 0);
    CHECK_EQ_INT(off, 6);
    CHECK_EQ_INT(partition_last_stable_offset(p), 4);
    CHECK_EQ_INT(aborted(p, 0, 4, &pid, &first), 1);
    CHECK_EQ_INT(pid, 50);
    CHECK_EQ_INT(first, 2);
    {
        struct record_batch b;
        CHECK(read_header(p, 6, &b, true));
        CHECK((b.attributes & RECORD_ATTR_CONTROL) != 0);
    }
    /* Producer 51 commits: nothing open, LSO = HW; a commit adds no .txnindex entry. */
    REQUIRE(partition_write_marker(p, 51, 0, 3, true, &off) == 0);
    CHECK_EQ_INT(partition_last_stable_offset(p), 8);
    CHECK_EQ_INT(aborted(p, 0, 8, &pid, &first), 1);
    /* Fencing: an older coordinator epoch, an older producer epoch. */
    CHECK_EQ_INT(partition_write_marker(p, 51, 0, 2, true, &off),
                 ERR_TRANSACTION_COORDINATOR_FENCED);
    REQUIRE(append_txn(p, 1, 51, 1, 0, &base) == 0); /* 8: new epoch */
    CHECK_EQ_INT(partition_write_marker(p, 51, 0, 3, false, &off), ERR_INVALID_PRODUCER_EPOCH);
    CHECK_EQ_INT(partition_last_stable_offset(p), 8);
    /* A marker for a producer with nothing open here is written anyway. */
    REQUIRE(partition_write_marker(p, 77, 0, 0, true, &off) == 0);
    CHECK_EQ_INT(off, 9);
    rfx_fini(&f);
}

TEST(replica_open_transaction_survives_restart_and_crash)
{
    struct rfx f;
    struct partition *p;
    char pdir[256], path[320];
    int64_t base = -1, off = -1, pid = -1, first = -1;

    REQUIRE(rfx_init(&f));
    REQUIRE(make_topic(&f, "tr", 1, 1) == 0);
    REQUIRE(rfx_rm_start(&f) == 0);
    p = replica_partition(f.rm, "tr", 0);
    REQUIRE(p);
    REQUIRE(append_txn(p, 2, 60, 0, 0, &base) == 0);                /* 0..1 */
    REQUIRE(partition_write_marker(p, 60, 0, 1, false, &off) == 0); /* 2: abort */
    REQUIRE(append_txn(p, 1, 61, 0, 0, &base) == 0);                /* 3: stays open */
    REQUIRE(append(p, 1, -1, 0, 0, 1000, &base, NULL) == 0);        /* 4 */
    CHECK_EQ_INT(partition_last_stable_offset(p), 3);

    /* A clean restart: the snapshot carries the open transaction. */
    REQUIRE(rfx_restart(&f));
    p = replica_partition(f.rm, "tr", 0);
    REQUIRE(p);
    CHECK_EQ_INT(partition_last_stable_offset(p), 3);
    CHECK_EQ_INT(aborted(p, 0, 5, &pid, &first), 1);

    /* A crash without snapshots: replay rebuilds the transaction, the coordinator epoch and
     * the .txnindex (emptied here to prove it). */
    REQUIRE(rfx_rm_stop(&f));
    snprintf(pdir, sizeof pdir, "%s/tr-0", f.log_dir);
    snprintf(path, sizeof path, "%s/.kafka_cleanshutdown", f.log_dir);
    REQUIRE(unlink(path) == 0);
    drop_snapshots(pdir);
    snprintf(path, sizeof path, "%s/00000000000000000000.txnindex", pdir);
    REQUIRE(truncate(path, 0) == 0);
    REQUIRE(rfx_restart(&f));
    p = replica_partition(f.rm, "tr", 0);
    REQUIRE(p);
    CHECK_EQ_INT(partition_log_end_offset(p), 5);
    CHECK_EQ_INT(partition_last_stable_offset(p), 3);
    CHECK_EQ_INT(aborted(p, 0, 5, &pid, &first), 1);
    CHECK_EQ_INT(pid, 60);
    CHECK_EQ_INT(first, 0);
    CHECK_EQ_INT(pstate_get(partition_pstate(p), 60)->coordinator_epoch, 1);
    CHECK_EQ_INT(partition_write_marker(p, 60, 0, 0, true, &off),
                 ERR_TRANSACTION_COORDINATOR_FENCED);
    /* The marker releases it. */
    REQUIRE(partition_write_marker(p, 61, 0, 1, true, &off) == 0);
    CHECK_EQ_INT(partition_last_stable_offset(p), 6);
    rfx_fini(&f);
}

/* The partition's half of the hanging-transaction check (the broker asks the coordinators in
 * between: test_broker.c): which ongoing transactions are idle, by the monotonic clock only,
 * and an abort that refuses a producer that came back. */
TEST(replica_idle_transactions_count_on_the_monotonic_clock)
{
    struct rfx f;
    struct partition *p;
    struct partition_idle_txn idle[4];
    int64_t base = -1, pid = -1, first = -1;

    REQUIRE(rfx_init(&f));
    REQUIRE(make_topic(&f, "hang", 1, 1) == 0);
    REQUIRE(rfx_rm_start(&f) == 0);
    p = replica_partition(f.rm, "hang", 0);
    REQUIRE(p);
    REQUIRE(append_txn(p, 1, 70, 2, 0, &base) == 0);         /* 0 */
    REQUIRE(append(p, 1, -1, 0, 0, 1000, &base, NULL) == 0); /* 1 */
    CHECK_EQ_INT(partition_last_stable_offset(p), 0);
    CHECK_EQ_INT(partition_idle_txns(p, 1000, idle, 4), 0);
    /* The wall clock steps a day forward (NTP, a VM resumed): nothing looks idle. */
    tclock_set_wall(f.clock, T0 + 86400000LL);
    CHECK_EQ_INT(partition_idle_txns(p, 1000, idle, 4), 0);
    tclock_advance(f.clock, 1000);
    CHECK_EQ_INT(partition_idle_txns(p, 1000, idle, 4), 0);
    tclock_advance(f.clock, 1);
    REQUIRE(partition_idle_txns(p, 1000, idle, 4) == 1);
    CHECK_EQ_INT(idle[0].producer_id, 70);
    CHECK_EQ_INT(idle[0].producer_epoch, 2);
    CHECK_EQ_INT(idle[0].first_offset, 0);
    CHECK_EQ_INT(idle[0].idle_ms, 1001);
    /* Counted, not copied, past `max`. */
    CHECK_EQ_INT(partition_idle_txns(p, 1000, NULL, 0), 1);
    /* The abort refuses another transaction, or one not idle that long. */
    CHECK_EQ_INT(partition_abort_txn(p, 70, 1, 1000), ERR_INVALID_TXN_STATE);
    CHECK_EQ_INT(partition_abort_txn(p, 70, 0, 5000), ERR_INVALID_TXN_STATE);
    CHECK_EQ_INT(partition_abort_txn(p, 71, 0, 1000), ERR_INVALID_TXN_STATE);
    /* The producer writes again: idle from now. */
    REQUIRE(append_txn(p, 1, 70, 2, 1, &base) == 0); /* 2 */
    CHECK_EQ_INT(partition_idle_txns(p, 1000, idle, 4), 0);
    CHECK_EQ_INT(partition_abort_txn(p, 70, 0, 1000), ERR_INVALID_TXN_STATE);
    CHECK_EQ_INT(partition_log_end_offset(p), 3);
    tclock_advance(f.clock, 1001);
    CHECK_EQ_INT(partition_abort_txn(p, 70, 0, 1000), 0);
    CHECK_EQ_INT(partition_last_stable_offset(p), 4);
    CHECK_EQ_INT(aborted(p, 0, 4, &pid, &first), 1);
    CHECK_EQ_INT(pid, 70);
    CHECK_EQ_INT(first, 0);
    {
        struct record_batch b;
        CHECK(read_header(p, 3, &b, true));
        CHECK((b.attributes & RECORD_ATTR_CONTROL) != 0);
        CHECK_EQ_INT(b.producer_epoch, 2);
    }
    CHECK_EQ_INT(partition_idle_txns(p, 0, idle, 4), 0);

    /* After a crash (producers replayed from the log, their last write unknown) an open
     * transaction is idle from the partition's open, whatever the wall clock says. */
    REQUIRE(append_txn(p, 1, 71, 0, 0, &base) == 0); /* 4 */
    tclock_advance(f.clock, 5000);
    REQUIRE(rfx_rm_stop(&f));
    {
        char path[320];
        snprintf(path, sizeof path, "%s/.kafka_cleanshutdown", f.log_dir);
        REQUIRE(unlink(path) == 0);
        snprintf(path, sizeof path, "%s/hang-0", f.log_dir);
        drop_snapshots(path);
    }
    tclock_set_wall(f.clock, T0 + 30 * 86400000LL);
    REQUIRE(rfx_restart(&f));
    p = replica_partition(f.rm, "hang", 0);
    REQUIRE(p);
    CHECK_EQ_INT(partition_last_stable_offset(p), 4);
    CHECK_EQ_INT(partition_idle_txns(p, 1000, idle, 4), 0);
    tclock_advance(f.clock, 1001);
    REQUIRE(partition_idle_txns(p, 1000, idle, 4) == 1);
    CHECK_EQ_INT(idle[0].producer_id, 71);
    CHECK_EQ_INT(idle[0].first_offset, 4);
    rfx_fini(&f);
}

/* The housekeeping tick no longer aborts anything by itself: a transaction idle for much
 * longer than transaction.max.timeout.ms + the margin stays open until someone who asked the
 * coordinators calls partition_abort_txn. */
TEST(replica_housekeeping_never_aborts_a_transaction_alone)
{
    struct rfx f;
    struct partition *p;
    int64_t base = -1;

    REQUIRE(rfx_init(&f));
    REQUIRE(props_set(f.props, "transaction.max.timeout.ms", "1000") == 0);
    REQUIRE(props_set(f.props, "transaction.abort.timed.out.transaction.cleanup.interval.ms",
                      "100") == 0);
    REQUIRE(make_topic(&f, "hang", 1, 1) == 0);
    REQUIRE(rfx_rm_start(&f) == 0);
    p = replica_partition(f.rm, "hang", 0);
    REQUIRE(p);
    REQUIRE(append_txn(p, 1, 70, 2, 0, &base) == 0);
    tclock_set_wall(f.clock, T0 + 86400000LL);
    tclock_advance(f.clock, 120000);
    CHECK_EQ_INT(partition_last_stable_offset(p), 0);
    CHECK_EQ_INT(partition_log_end_offset(p), 1);
    rfx_fini(&f);
}

TEST(replica_retention_keeps_segments_past_the_lso)
{
    struct rfx f;
    struct partition *p;
    int64_t base = -1, off;

    REQUIRE(rfx_init(&f));
    REQUIRE(props_set(f.props, "log.retention.check.interval.ms", "1") == 0);
    REQUIRE(PROPOSE(&f, r_topic("rl", 1), r_part(1, 0, true, 0),
                    r_config(2, "rl", "segment.bytes", "200"),
                    r_config(2, "rl", "retention.ms", "1000")) == 0);
    REQUIRE(rfx_rm_start(&f) == 0);
    p = replica_partition(f.rm, "rl", 0);
    REQUIRE(p);
    REQUIRE(append(p, 2, -1, 0, 0, 1000, &base, NULL) == 0);
    REQUIRE(append_txn(p, 2, 80, 0, 0, &base) == 0); /* opens at 2 */
    for (int i = 0; i < 6; i++)
        REQUIRE(append(p, 2, -1, 0, 0, 1000, &base, NULL) == 0);
    tclock_advance(f.clock, 400);
    /* Timestamps from 1970: all past retention.ms, but nothing at or past the LSO goes. */
    CHECK(partition_log_start_offset(p) <= 2);
    REQUIRE(partition_write_marker(p, 80, 0, 0, true, &off) == 0);
    tclock_advance(f.clock, 400);
    CHECK(partition_log_start_offset(p) > 2);
    rfx_fini(&f);
}

/* ---- flush.messages through the syscall table (issue 12) --------------------------------- */

static atomic_int fsyncs_seen;

static int counting_fsync(int fd)
{
    atomic_fetch_add(&fsyncs_seen, 1);
    return fsync(fd);
}

/* Appends one batch and runs the loop until the durable mark covers it or `ms` pass. */
static void append_and_settle(struct rfx *f, struct partition *p, int ms)
{
    bool never = false;
    int64_t want;
    REQUIRE(append(p, 1, -1, 0, 0, 1000, NULL, NULL) == 0);
    want = partition_mark(p, PARTITION_LOG_END);
    for (int i = 0; i < ms && partition_mark(p, PARTITION_DURABLE) < want; i++)
        fixture_run_until(&f->q.loop, &never, 1);
}

/* flush.messages=1: every append is fsynced (the log's fsync, through the table replica/
 * opens its logs with); without it, appends are not; and setting it on a running topic
 * applies to the next append, with no restart. */
TEST(replica_flush_messages_fsyncs_each_append)
{
    struct rfx f;
    struct partition *each, *none;

    REQUIRE(rfx_init(&f));
    REQUIRE(make_topic(&f, "each", 1, 1) == 0);
    REQUIRE(make_topic(&f, "none", 2, 1) == 0);
    REQUIRE(PROPOSE(&f, r_config(2, "each", "flush.messages", "1")) == 0);
    REQUIRE(rfx_rm_start(&f) == 0);
    f.rm->sys.fsync = counting_fsync; /* logs borrow the manager's table */
    each = replica_partition(f.rm, "each", 0);
    none = replica_partition(f.rm, "none", 0);
    REQUIRE(each && none);

    atomic_store(&fsyncs_seen, 0);
    for (int i = 0; i < 5; i++) {
        int before = atomic_load(&fsyncs_seen);
        append_and_settle(&f, each, 2000);
        CHECK(atomic_load(&fsyncs_seen) > before);
        CHECK_EQ_INT(partition_mark(each, PARTITION_DURABLE), i + 1);
    }

    atomic_store(&fsyncs_seen, 0);
    for (int i = 0; i < 5; i++)
        append_and_settle(&f, none, 20);
    CHECK_EQ_INT(atomic_load(&fsyncs_seen), 0);
    CHECK_EQ_INT(partition_mark(none, PARTITION_DURABLE), 0);

    /* Dynamic: the same topic gets flush.messages=1 while running. */
    REQUIRE(PROPOSE(&f, r_config(2, "none", "flush.messages", "1")) == 0);
    append_and_settle(&f, none, 2000);
    CHECK(atomic_load(&fsyncs_seen) > 0);
    CHECK_EQ_INT(partition_mark(none, PARTITION_DURABLE), 6);

    f.rm->sys.fsync = sysio_default()->fsync;
    rfx_fini(&f);
}

/* ---- flush.messages: answers wait for the fsync, with group commit (issue 20) ------------- */

static atomic_bool fsync_gate_open = true;

/* A pool thread's fsync that waits (bounded, 10 s) while the gate is closed: a slow disk. */
static int gated_fsync(int fd)
{
    atomic_fetch_add(&fsyncs_seen, 1);
    for (int i = 0; i < 10000 && !atomic_load(&fsync_gate_open); i++)
        nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
    return fsync(fd);
}

/* Runs the loop until `*count` passes `n` or about `ms` pass. */
static void run_until_count(struct rfx *f, atomic_int *count, int n, int ms)
{
    bool never = false;
    for (int i = 0; i < ms && atomic_load(count) <= n; i++)
        fixture_run_until(&f->q.loop, &never, 1);
}

/* With flush.messages=1 the policy asks for every append to be durable (the produce then
 * waits); without a policy it asks for nothing. At most one flush runs per partition: the
 * batches appended while one runs are all covered by the next, a single round of fsyncs, and
 * its completion wakes every waiter (group commit). */
TEST(replica_group_commit_one_flush_covers_appends_meanwhile)
{
    struct rfx f;
    struct partition *p, *none;
    struct tclock *clock = tclock_virtual_new(0);
    struct purgatory *pg = clock ? purgatory_new(clock) : NULL;
    struct mw first, all;
    int per_round;
    bool never = false;

    REQUIRE(pg);
    REQUIRE(rfx_init(&f));
    REQUIRE(make_topic(&f, "gc", 1, 1) == 0);
    REQUIRE(make_topic(&f, "nopolicy", 2, 1) == 0);
    REQUIRE(PROPOSE(&f, r_config(2, "gc", "flush.messages", "1")) == 0);
    REQUIRE(rfx_rm_start(&f) == 0);
    f.rm->sys.fsync = gated_fsync;
    p = replica_partition(f.rm, "gc", 0);
    none = replica_partition(f.rm, "nopolicy", 0);
    REQUIRE(p && none);

    REQUIRE(append(none, 1, -1, 0, 0, 1000, NULL, NULL) == 0);
    CHECK(!partition_flush_required(none));

    /* The fsyncs of one round (the first may also sync the new directory). */
    append_and_settle(&f, p, 2000);
    atomic_store(&fsyncs_seen, 0);
    append_and_settle(&f, p, 2000);
    per_round = atomic_load(&fsyncs_seen);
    REQUIRE(per_round > 0);
    CHECK_EQ_INT(partition_mark(p, PARTITION_DURABLE), 2);

    /* A slow disk: the first append's flush blocks in its fsync... */
    atomic_store(&fsync_gate_open, false);
    atomic_store(&fsyncs_seen, 0);
    REQUIRE(append(p, 1, -1, 0, 0, 1000, NULL, NULL) == 0);
    CHECK(partition_flush_required(p));
    mw_init(pg, &first);
    CHECK(!partition_watch(p, PARTITION_DURABLE, 3, &first.w));
    run_until_count(&f, &fsyncs_seen, 0, 2000);
    REQUIRE(atomic_load(&fsyncs_seen) == 1);
    /* ...while ten more batches arrive, each asking to be durable. */
    for (int i = 0; i < 10; i++) {
        REQUIRE(append(p, 1, -1, 0, 0, 1000, NULL, NULL) == 0);
        CHECK(partition_flush_required(p));
    }
    mw_init(pg, &all);
    CHECK(!partition_watch(p, PARTITION_DURABLE, 13, &all.w));
    for (int i = 0; i < 20; i++)
        fixture_run_until(&f.q.loop, &never, 1);
    CHECK_EQ_INT(atomic_load(&fsyncs_seen), 1); /* no second flush while one runs */
    CHECK_EQ_INT(first.wakes + all.wakes, 0);

    atomic_store(&fsync_gate_open, true);
    for (int i = 0; i < 2000 && all.wakes == 0; i++)
        fixture_run_until(&f.q.loop, &never, 1);
    CHECK_EQ_INT(first.wakes, 1);
    CHECK(first.reached);
    CHECK_EQ_INT(all.wakes, 1);
    CHECK(all.reached);
    CHECK_EQ_INT(partition_mark(p, PARTITION_DURABLE), 13);
    /* The blocked round and one more for the ten, not ten more. */
    CHECK_EQ_INT(atomic_load(&fsyncs_seen), 2 * per_round);

    purgatory_cancel(&first.op);
    purgatory_cancel(&all.op);
    f.rm->sys.fsync = sysio_default()->fsync;
    rfx_fini(&f);
    purgatory_free(pg);
    tclock_free(clock);
}

/* A failing disk, slow as gated_fsync is (so that a test can watch before it fails). */
static int eio_fsync(int fd)
{
    (void)fd;
    for (int i = 0; i < 10000 && !atomic_load(&fsync_gate_open); i++)
        nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
    errno = EIO;
    return -1;
}

/* A failed fsync answers the durable mark's waiters (reached false, the partition still
 * online: the produce answers KAFKA_STORAGE_ERROR), and the log refuses writes and flushes
 * from then on: a later waiter is answered at once, and no later fsync is tried. */
TEST(replica_failed_flush_fails_durable_waiters)
{
    struct rfx f;
    struct partition *p;
    struct tclock *clock = tclock_virtual_new(0);
    struct purgatory *pg = clock ? purgatory_new(clock) : NULL;
    struct mw d, late;
    bool never = false;

    REQUIRE(pg);
    REQUIRE(rfx_init(&f));
    REQUIRE(make_topic(&f, "eio", 1, 1) == 0);
    REQUIRE(PROPOSE(&f, r_config(2, "eio", "flush.messages", "1")) == 0);
    REQUIRE(rfx_rm_start(&f) == 0);
    p = replica_partition(f.rm, "eio", 0);
    REQUIRE(p);
    append_and_settle(&f, p, 2000);
    CHECK_EQ_INT(partition_mark(p, PARTITION_DURABLE), 1);

    /* The flush starts on the pool with the append: it fails only once the watch is set. */
    atomic_store(&fsync_gate_open, false);
    f.rm->sys.fsync = eio_fsync;
    REQUIRE(append(p, 2, -1, 0, 0, 1000, NULL, NULL) == 0);
    mw_init(pg, &d);
    CHECK(!partition_watch(p, PARTITION_DURABLE, 3, &d.w));
    atomic_store(&fsync_gate_open, true);
    for (int i = 0; i < 2000 && d.wakes == 0; i++)
        fixture_run_until(&f.q.loop, &never, 1);
    CHECK_EQ_INT(d.wakes, 1);
    CHECK(!d.reached);
    CHECK(partition_online(p));
    CHECK(log_failed(partition_log(p)));
    CHECK_EQ_INT(partition_mark(p, PARTITION_DURABLE), 1);
    CHECK_EQ_INT(append(p, 1, -1, 0, 0, 1000, NULL, NULL), ERR_KAFKA_STORAGE_ERROR);

    f.rm->sys.fsync = counting_fsync;
    atomic_store(&fsyncs_seen, 0);
    mw_init(pg, &late);
    CHECK(partition_watch(p, PARTITION_DURABLE, 3, &late.w));
    CHECK(!late.w.reached);
    for (int i = 0; i < 50; i++)
        fixture_run_until(&f.q.loop, &never, 1);
    CHECK_EQ_INT(atomic_load(&fsyncs_seen), 0);

    purgatory_cancel(&d.op);
    purgatory_cancel(&late.op);
    f.rm->sys.fsync = sysio_default()->fsync;
    rfx_fini(&f);
    purgatory_free(pg);
    tclock_free(clock);
}

/* segment.index.bytes bounds a segment's indexes (a full index rolls it), and
 * segment.jitter.ms brings time-based rolls forward by a share that differs per partition;
 * both reach the log through the partition's settings. */
TEST(replica_segment_index_bytes_and_jitter)
{
    struct rfx f;
    int rolled = 0, control = 0;

    REQUIRE(rfx_init(&f));
    REQUIRE(make_topic(&f, "idx", 1, 1) == 0);
    REQUIRE(make_topic(&f, "jit", 2, 8) == 0);
    REQUIRE(make_topic(&f, "nojit", 3, 8) == 0);
    REQUIRE(PROPOSE(&f, r_config(2, "idx", "segment.index.bytes", "24"),
                    r_config(2, "idx", "index.interval.bytes", "0"),
                    r_config(2, "jit", "segment.ms", "10000"),
                    r_config(2, "jit", "segment.jitter.ms", "10000"),
                    r_config(2, "nojit", "segment.ms", "10000")) == 0);
    REQUIRE(rfx_rm_start(&f) == 0);

    struct partition *idx = replica_partition(f.rm, "idx", 0);
    REQUIRE(idx);
    for (int i = 0; i < 6; i++)
        REQUIRE(append(idx, 1, -1, 0, 0, 1000, NULL, NULL) == 0);
    CHECK(log_active_base(partition_log(idx)) > 0);

    for (int i = 0; i < 8; i++) {
        REQUIRE(append(replica_partition(f.rm, "jit", i), 1, -1, 0, 0, 1000, NULL, NULL) == 0);
        REQUIRE(append(replica_partition(f.rm, "nojit", i), 1, -1, 0, 0, 1000, NULL, NULL) == 0);
    }
    tclock_advance(f.clock, 5000);
    for (int i = 0; i < 8; i++) {
        struct partition *j = replica_partition(f.rm, "jit", i);
        struct partition *n = replica_partition(f.rm, "nojit", i);
        REQUIRE(append(j, 1, -1, 0, 0, 1000, NULL, NULL) == 0);
        REQUIRE(append(n, 1, -1, 0, 0, 1000, NULL, NULL) == 0);
        rolled += log_active_base(partition_log(j)) > 0;
        control += log_active_base(partition_log(n)) > 0;
    }
    /* Half of segment.ms: without jitter no partition rolls; with it, some do (those whose
     * share is over half) and some do not. */
    CHECK_EQ_INT(control, 0);
    CHECK(rolled > 0 && rolled < 8);
    /* Past segment.ms every one of them has rolled. */
    tclock_advance(f.clock, 5001);
    rolled = 0;
    for (int i = 0; i < 8; i++) {
        struct partition *j = replica_partition(f.rm, "jit", i);
        REQUIRE(append(j, 1, -1, 0, 0, 1000, NULL, NULL) == 0);
        rolled += log_active_base(partition_log(j)) > 0;
    }
    CHECK_EQ_INT(rolled, 8);
    rfx_fini(&f);
}
