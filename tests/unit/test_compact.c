/* SPDX-License-Identifier: Apache-2.0 */
/* log compaction unit tests (src/log/compact.c), on a virtual clock, driving the cleaner's
 * slices directly: the latest record per key stays at its offset (holes, never renumbered),
 * tombstones stay until their delete horizon and go after, a producer's last batch stays
 * (empty), control batches stay, the dirty-ratio inputs and min.compaction.lag.ms, a bounded
 * key map, a crash at each stage of a clean (old or new segments after reopening, never a mix,
 * no stray files), and reads during a clean. */
#include "harness.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/err.h"
#include "base/fault.h"
#include "base/slog.h"
#include "base/sysio.h"
#include "base/tclock.h"
#include "log/log.h"
#include "record/record.h"

/* ---- helpers ------------------------------------------------------------------------------ */

static int rm_cb(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static struct tclock *clk;
static struct log_io io;

static void setup(char *dir)
{
    strcpy(dir, "/tmp/tally_compact_XXXXXX");
    if (!mkdtemp(dir))
        dir[0] = '\0';
    if (!getenv("TEST_LOG_VERBOSE"))
        slog_set_level((enum slog_level)(SLOG_ERROR + 1));
    io.sys = sysio_default();
    tclock_free(clk);
    clk = tclock_virtual_new(1700000000000LL);
    io.clock = clk;
    fault_stop_at(NULL);
}

static void teardown(const char *dir)
{
    nftw(dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
    slog_set_level(SLOG_INFO);
    fault_stop_at(NULL);
}

static void cfg_compact(struct log_config *c, int64_t segment_bytes)
{
    log_config_default(c);
    c->segment_bytes = segment_bytes;
    c->index_interval_bytes = 256;
    c->compact = true;
    c->retention_ms = -1;
}

static struct log *open_log(const char *dir, const struct log_config *c, bool clean)
{
    struct log *l = NULL;
    return log_open(dir, c, &io, clean ? INT64_MAX : 0, -1, clean, &l) == 0 ? l : NULL;
}

/* One record to append: key NULL = no key, value NULL = tombstone. */
struct kv {
    const char *key, *value;
};

/* Appends one batch of n records (producer pid >= 0 with sequence seq, or none), timestamps
 * the clock's now. Returns the base offset, or -1. */
static int64_t append_batch(struct log *l, const struct kv *kv, int n, int64_t pid, int32_t seq,
                            int16_t attrs)
{
    struct record_input recs[32];
    struct record_build_options opt = {.base_offset = 0,
                                       .attributes = attrs,
                                       .producer_id = pid,
                                       .producer_epoch = pid >= 0 ? 0 : -1,
                                       .base_sequence = pid >= 0 ? seq : -1,
                                       .leader_epoch = 0};
    int64_t now = tclock_now_ms(clk), base;
    uint8_t *b;
    size_t len;
    int rc;

    for (int i = 0; i < n; i++)
        recs[i] =
            (struct record_input){.key = (const uint8_t *)kv[i].key,
                                  .key_len = kv[i].key ? (int32_t)strlen(kv[i].key) : -1,
                                  .value = (const uint8_t *)kv[i].value,
                                  .value_len = kv[i].value ? (int32_t)strlen(kv[i].value) : -1,
                                  .timestamp = now};
    if (record_batch_build(&opt, recs, n, &b, &len) != 0)
        return -1;
    rc = log_append(l, b, len, n - 1, now, 0, &base);
    free(b);
    return rc == 0 ? base : -1;
}

static int64_t put(struct log *l, const char *key, const char *value)
{
    struct kv kv = {key, value};
    return append_batch(l, &kv, 1, -1, -1, 0);
}

/* Every record of the log from its start, as "offset key=value" lines (value "~" for a
 * tombstone) in one string; every batch read back must pass record_batch_validate_stored.
 * Also counts batches and empty batches. */
struct dump {
    char *text;
    size_t len, cap;
    int batches, empty, records;
    bool bad;
};

static void dump_add(struct dump *d, const char *s)
{
    size_t n = strlen(s);
    if (d->len + n + 1 > d->cap) {
        d->cap = (d->len + n + 1) * 2;
        d->text = realloc(d->text, d->cap);
    }
    memcpy(d->text + d->len, s, n + 1);
    d->len += n;
}

static void dump_log(struct log *l, struct dump *d)
{
    int64_t off = log_start_offset(l);

    memset(d, 0, sizeof *d);
    dump_add(d, "\n");
    while (off < log_end_offset(l)) {
        struct log_slice s;
        uint8_t *buf;
        size_t p = 0;
        int64_t next = off;
        if (log_read(l, off, INT64_MAX, 1 << 20, &s) != 0) {
            d->bad = true;
            return;
        }
        if (s.len == 0)
            break;
        buf = malloc(s.len);
        if (pread(s.fd, buf, s.len, s.pos) != (ssize_t)s.len)
            d->bad = true;
        while (!d->bad && p < s.len) {
            struct record_batch b;
            struct record_iter it;
            struct record_item r;
            int rc;
            if (record_batch_validate_stored(buf + p, s.len - p, &b) != 0) {
                d->bad = true;
                break;
            }
            d->batches++;
            d->empty += b.record_count == 0;
            rc = record_iter_init(&it, buf + p, record_batch_size(&b), 1 << 20);
            while (rc == 0 && (rc = record_iter_next(&it, &r)) == 0) {
                char line[256];
                if (r.offset < off)
                    continue;
                snprintf(line, sizeof line, "%lld %.*s=%.*s\n", (long long)r.offset,
                         r.key ? (int)r.key_len : 1, r.key ? (const char *)r.key : "-",
                         r.value ? (int)r.value_len : 1, r.value ? (const char *)r.value : "~");
                dump_add(d, line);
                d->records++;
            }
            record_iter_close(&it);
            if (rc != ERR_NOTFOUND)
                d->bad = true;
            next = record_batch_last_offset(&b) + 1;
            p += record_batch_size(&b);
        }
        free(buf);
        log_slice_release(l, &s);
        if (next <= off)
            break;
        off = next;
    }
}

static void clean_cfg(struct log_clean_config *cc, struct log *l)
{
    memset(cc, 0, sizeof *cc);
    cc->first_dirty = -1;
    cc->upper_bound = log_end_offset(l);
    cc->now_ms = tclock_now_ms(clk);
    cc->delete_retention_ms = 1000;
    cc->map_bytes = 1 << 20;
    cc->max_batch = 1 << 20;
}

/* Runs a whole clean, steps and advances in turn. Returns log_clean_end's result. */
static int run_clean(struct log *l, const struct log_clean_config *cc, struct log_clean_stats *st)
{
    struct log_clean *c;
    int rc = log_clean_begin(l, cc, &c);

    if (rc != 0)
        return rc;
    do {
        log_clean_step(c);
        rc = log_clean_advance(c);
    } while (rc == 0);
    return log_clean_end(c, st);
}

static int count_suffix(const char *dir, const char *suffix)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    size_t k = strlen(suffix);
    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        n += len >= k && strcmp(e->d_name + len - k, suffix) == 0;
    }
    closedir(d);
    return n;
}

static bool has_line(const struct dump *d, const char *line)
{
    char buf[256];
    snprintf(buf, sizeof buf, "\n%s\n", line);
    return strstr(d->text, buf) != NULL;
}

/* ---- tests ---------------------------------------------------------------------------------- */

TEST(compact_keeps_latest_per_key_at_its_offset)
{
    char dir[64], key[16], val[32];
    struct log_config c;
    struct log_clean_config cc;
    struct log_clean_stats st;
    struct log *l;
    struct dump before, after, reopened;
    int64_t last_off[10];

    setup(dir);
    cfg_compact(&c, 1024);
    REQUIRE((l = open_log(dir, &c, true)) != NULL);
    for (int i = 0; i < 200; i++) {
        snprintf(key, sizeof key, "k%d", i % 10);
        snprintf(val, sizeof val, "v%d", i);
        last_off[i % 10] = put(l, key, val);
        REQUIRE(last_off[i % 10] == i);
    }
    int64_t active = log_active_base(l);
    REQUIRE(active > 100);
    dump_log(l, &before);
    CHECK_EQ_INT(before.records, 200);

    clean_cfg(&cc, l);
    REQUIRE(run_clean(l, &cc, &st) == 0);
    CHECK_EQ_INT(st.clean_upto, active);
    CHECK(st.groups >= 1);
    CHECK_EQ_INT(log_end_offset(l), 200);
    dump_log(l, &after);
    CHECK(!after.bad);
    /* Below the active segment: one record per key, its latest there, at its own offset;
     * the active segment untouched. */
    for (int64_t o = 0; o < 200; o++) {
        char line[64];
        snprintf(line, sizeof line, "%lld k%lld=v%lld", (long long)o, (long long)(o % 10),
                 (long long)o);
        bool latest_below = o < active && o + 10 >= active;
        CHECK(has_line(&after, line) == (o >= active || latest_below));
    }
    CHECK_EQ_INT(after.records, (int)(200 - active) + 10);
    /* A read in a hole answers with the next batch that exists. */
    struct log_slice s;
    REQUIRE(log_read(l, 0, INT64_MAX, 1, &s) == 0);
    CHECK(s.len > 0);
    log_slice_release(l, &s);

    /* The same after a clean reopen and after a crash (everything rescanned). */
    log_close(l, true);
    REQUIRE((l = open_log(dir, &c, true)) != NULL);
    dump_log(l, &reopened);
    CHECK(!reopened.bad && strcmp(reopened.text, after.text) == 0);
    free(reopened.text);
    log_close(l, false);
    REQUIRE((l = open_log(dir, &c, false)) != NULL);
    CHECK_EQ_INT(log_end_offset(l), 200);
    dump_log(l, &reopened);
    CHECK(!reopened.bad && strcmp(reopened.text, after.text) == 0);
    /* Appends go on at the end. */
    CHECK_EQ_INT(put(l, "k1", "new"), 200);
    log_close(l, true);
    free(before.text);
    free(after.text);
    free(reopened.text);
    teardown(dir);
}

TEST(compact_batch_keeps_base_and_last_offset_with_holes)
{
    char dir[64];
    struct log_config c;
    struct log_clean_config cc;
    struct log *l;
    struct dump d;
    const struct kv kv[] = {{"a", "1"}, {"b", "2"}, {"a", "3"}, {"c", "4"}, {"b", "5"}};

    setup(dir);
    cfg_compact(&c, 400);
    REQUIRE((l = open_log(dir, &c, true)) != NULL);
    REQUIRE(append_batch(l, kv, 5, -1, -1, 0) == 0);
    for (int i = 0; i < 10; i++)
        REQUIRE(put(l, "filler", "x") >= 0);
    REQUIRE(log_active_base(l) > 5);
    clean_cfg(&cc, l);
    REQUIRE(run_clean(l, &cc, NULL) == 0);
    dump_log(l, &d);
    CHECK(has_line(&d, "2 a=3") && has_line(&d, "3 c=4") && has_line(&d, "4 b=5"));
    CHECK(!has_line(&d, "0 a=1") && !has_line(&d, "1 b=2"));
    /* The first batch still says 0..4, with three records. */
    struct log_slice s;
    struct record_batch b;
    uint8_t hdr[RECORD_BATCH_HEADER];
    REQUIRE(log_read(l, 0, INT64_MAX, 1, &s) == 0);
    REQUIRE(pread(s.fd, hdr, sizeof hdr, s.pos) == (ssize_t)sizeof hdr);
    REQUIRE(record_batch_parse_header(hdr, sizeof hdr, &b) == 0);
    CHECK_EQ_INT(b.base_offset, 0);
    CHECK_EQ_INT(record_batch_last_offset(&b), 4);
    CHECK_EQ_INT(b.record_count, 3);
    log_slice_release(l, &s);
    free(d.text);
    log_close(l, true);
    teardown(dir);
}

TEST(compact_tombstones_stay_until_horizon)
{
    char dir[64];
    struct log_config c;
    struct log_clean_config cc;
    struct log_clean_stats st;
    struct log *l;
    struct dump d;
    int64_t t0;

    setup(dir);
    cfg_compact(&c, 300);
    REQUIRE((l = open_log(dir, &c, true)) != NULL);
    t0 = tclock_now_ms(clk);
    REQUIRE(put(l, "gone", "v") == 0);
    REQUIRE(put(l, "stays", "w") == 1);
    REQUIRE(put(l, "gone", NULL) == 2);
    for (int i = 0; i < 8; i++)
        REQUIRE(put(l, "filler", "x") >= 0);
    REQUIRE(log_active_base(l) > 3);

    /* First clean: the value goes, the tombstone stays with its horizon set. */
    tclock_advance(clk, 10);
    clean_cfg(&cc, l);
    REQUIRE(run_clean(l, &cc, &st) == 0);
    CHECK_EQ_INT(st.next_horizon, t0 + 10 + 1000);
    dump_log(l, &d);
    CHECK(!has_line(&d, "0 gone=v") && has_line(&d, "1 stays=w") && has_line(&d, "2 gone=~"));
    free(d.text);
    /* Its timestamp survives the new baseTimestamp. */
    struct log_slice s;
    uint8_t buf[512];
    struct record_iter it;
    struct record_item r;
    REQUIRE(log_read(l, 2, INT64_MAX, 1, &s) == 0);
    REQUIRE(s.len <= sizeof buf && pread(s.fd, buf, s.len, s.pos) == (ssize_t)s.len);
    REQUIRE(record_iter_init(&it, buf, s.len, 1 << 20) == 0);
    CHECK(it.batch.attributes & RECORD_ATTR_DELETE_HORIZON);
    CHECK_EQ_INT(it.batch.base_timestamp, t0 + 10 + 1000);
    while (record_iter_next(&it, &r) == 0)
        if (r.offset == 2)
            CHECK_EQ_INT(r.timestamp, t0);
    record_iter_close(&it);
    log_slice_release(l, &s);

    /* Before the horizon another clean keeps it; at the horizon it goes. */
    tclock_advance(clk, 999);
    clean_cfg(&cc, l);
    cc.first_dirty = st.clean_upto;
    REQUIRE(run_clean(l, &cc, &st) == 0);
    dump_log(l, &d);
    CHECK(has_line(&d, "2 gone=~"));
    free(d.text);
    tclock_advance(clk, 1);
    clean_cfg(&cc, l);
    cc.first_dirty = st.clean_upto;
    REQUIRE(run_clean(l, &cc, &st) == 0);
    CHECK_EQ_INT(st.next_horizon, INT64_MAX);
    dump_log(l, &d);
    CHECK(!has_line(&d, "2 gone=~") && has_line(&d, "1 stays=w"));
    CHECK(strstr(d.text, "gone") == NULL);
    free(d.text);
    log_close(l, true);
    teardown(dir);
}

TEST(compact_keeps_producer_last_batch_and_control_batches)
{
    char dir[64];
    struct log_config c;
    struct log_clean_config cc;
    struct log *l;
    struct dump d;
    const struct kv p1 = {"k", "from-producer"};
    int64_t pbase, cbase;
    uint8_t *ctl;
    size_t ctl_len;

    setup(dir);
    cfg_compact(&c, 400);
    REQUIRE((l = open_log(dir, &c, true)) != NULL);
    REQUIRE(put(l, "k", "old") == 0);
    pbase = append_batch(l, &p1, 1, 42, 0, 0);
    REQUIRE(pbase == 1);
    REQUIRE(record_build_control(42, 0, 3, RECORD_CONTROL_COMMIT, tclock_now_ms(clk), &ctl,
                                 &ctl_len) == 0);
    REQUIRE(log_append(l, ctl, ctl_len, 0, tclock_now_ms(clk), 0, &cbase) == 0);
    free(ctl);
    REQUIRE(put(l, "k", "newest") >= 0);
    for (int i = 0; i < 8; i++)
        REQUIRE(put(l, "filler", "x") >= 0);
    REQUIRE(log_active_base(l) > 4);

    clean_cfg(&cc, l);
    cc.keep = &pbase;
    cc.n_keep = 1;
    REQUIRE(run_clean(l, &cc, NULL) == 0);
    dump_log(l, &d);
    CHECK(!has_line(&d, "0 k=old") && !has_line(&d, "1 k=from-producer"));
    CHECK(has_line(&d, "3 k=newest"));
    /* The producer's batch is there, empty, with its sequence; the marker is whole. */
    CHECK_EQ_INT(d.empty, 1);
    struct log_slice s;
    uint8_t buf[256];
    struct record_batch b;
    REQUIRE(log_read(l, 1, INT64_MAX, 1, &s) == 0);
    REQUIRE(pread(s.fd, buf, RECORD_BATCH_HEADER, s.pos) == RECORD_BATCH_HEADER);
    REQUIRE(record_batch_parse_header(buf, RECORD_BATCH_HEADER, &b) == 0);
    CHECK_EQ_INT(b.base_offset, 1);
    CHECK_EQ_INT(b.record_count, 0);
    CHECK_EQ_INT(b.producer_id, 42);
    CHECK_EQ_INT(b.base_sequence, 0);
    CHECK_EQ_INT(record_batch_last_offset(&b), 1);
    log_slice_release(l, &s);
    REQUIRE(log_read(l, cbase, INT64_MAX, 1, &s) == 0);
    REQUIRE(s.len <= sizeof buf && pread(s.fd, buf, s.len, s.pos) == (ssize_t)s.len);
    enum record_control_type type;
    int32_t ce;
    CHECK_EQ_INT(record_control_parse(buf, s.len, &type, &ce), 0);
    CHECK_EQ_INT(type, RECORD_CONTROL_COMMIT);
    log_slice_release(l, &s);
    free(d.text);

    /* Once it is no producer's last batch, it goes. */
    clean_cfg(&cc, l);
    REQUIRE(run_clean(l, &cc, NULL) == 0);
    dump_log(l, &d);
    CHECK_EQ_INT(d.empty, 0);
    free(d.text);
    log_close(l, true);
    teardown(dir);
}

TEST(compact_dirty_bytes_lag_and_upper_bound)
{
    char dir[64];
    struct log_config c;
    struct log_clean_config cc;
    struct log_clean_info info;
    struct log_clean_stats st;
    struct log *l;

    setup(dir);
    cfg_compact(&c, 300);
    REQUIRE((l = open_log(dir, &c, true)) != NULL);
    for (int i = 0; i < 20; i++)
        REQUIRE(put(l, "k", "v") >= 0);
    tclock_advance(clk, 60000);
    for (int i = 0; i < 20; i++)
        REQUIRE(put(l, "k", "v") >= 0);
    int64_t now = tclock_now_ms(clk), active = log_active_base(l);

    /* Nothing cleaned yet: all of it dirty, up to the active segment. */
    log_clean_info(l, -1, INT64_MAX, now, 0, &info);
    CHECK_EQ_INT(info.first_dirty, 0);
    CHECK_EQ_INT(info.cleanable_end, active);
    CHECK_EQ_INT(info.clean_bytes, 0);
    CHECK(info.dirty_bytes > 0);
    CHECK_EQ_INT(info.first_dirty_ts, now - 60000);
    /* min.compaction.lag.ms: only the segments older than the lag; the upper bound. */
    log_clean_info(l, -1, INT64_MAX, now, 30000, &info);
    CHECK(info.cleanable_end > 0 && info.cleanable_end <= 20);
    log_clean_info(l, -1, 5, now, 0, &info);
    CHECK(info.cleanable_end <= 5);
    log_clean_info(l, -1, 0, now, 0, &info);
    CHECK_EQ_INT(info.cleanable_end, 0);
    clean_cfg(&cc, l);
    cc.upper_bound = 0;
    CHECK_EQ_INT(run_clean(l, &cc, NULL), ERR_NOTFOUND);

    /* After a clean up to the lag's end, those bytes are clean and the rest dirty. */
    clean_cfg(&cc, l);
    cc.min_lag_ms = 30000;
    REQUIRE(run_clean(l, &cc, &st) == 0);
    CHECK(st.clean_upto > 0 && st.clean_upto <= 20);
    log_clean_info(l, st.clean_upto, INT64_MAX, now, 0, &info);
    CHECK_EQ_INT(info.first_dirty, st.clean_upto);
    CHECK(info.clean_bytes > 0 && info.dirty_bytes > 0);
    log_clean_info(l, active, INT64_MAX, now, 0, &info);
    CHECK_EQ_INT(info.dirty_bytes, 0);
    log_close(l, true);
    teardown(dir);
}

TEST(compact_bounded_key_map_resumes_from_checkpoint)
{
    char dir[64], key[16];
    struct log_config c;
    struct log_clean_config cc;
    struct log_clean_stats st;
    struct log *l;
    struct dump d;

    setup(dir);
    cfg_compact(&c, 4096);
    REQUIRE((l = open_log(dir, &c, true)) != NULL);
    /* 10,000 distinct keys, then each again: the smallest map (4096 entries) cannot hold them. */
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < 10000; i++) {
            snprintf(key, sizeof key, "key%05d", i);
            REQUIRE(put(l, key, round ? "b" : "a") >= 0);
        }
    REQUIRE(put(l, "last", "x") >= 0);
    clean_cfg(&cc, l);
    cc.map_bytes = 1; /* the smallest map */
    int cleans = 0;
    int64_t first = -1;
    do {
        cc.first_dirty = first;
        cc.now_ms = tclock_now_ms(clk);
        REQUIRE(run_clean(l, &cc, &st) == 0);
        CHECK(st.clean_upto > first);
        first = st.clean_upto;
        cleans++;
    } while (first < log_active_base(l) && cleans < 50);
    CHECK(cleans > 2);
    /* Cleaning once more over all of it with a big enough map leaves only the b's. */
    clean_cfg(&cc, l);
    REQUIRE(run_clean(l, &cc, &st) == 0);
    dump_log(l, &d);
    CHECK(!d.bad);
    /* An 'a' stays only where its key's 'b' is in the active segment. */
    int64_t active = log_active_base(l);
    for (int i = 0; i < 10000; i += 7) {
        char line[64];
        snprintf(line, sizeof line, "%d key%05d=a", i, i);
        CHECK(has_line(&d, line) == (10000 + i >= active));
    }
    CHECK(has_line(&d, "10000 key00000=b"));
    free(d.text);
    log_close(l, true);
    teardown(dir);
}

/* A log whose sealed segments are small (rolled by time) so that one clean writes them into
 * one group; each segment holds a key of its own, so each keeps something. */
static struct log *crash_fixture(const char *dir, struct log_config *c)
{
    struct log *l;
    char key[32], val[32];

    cfg_compact(c, 1 << 20);
    c->segment_ms = 100;
    l = open_log(dir, c, true);
    if (l == NULL)
        return NULL;
    for (int seg = 0; seg < 6; seg++) {
        snprintf(key, sizeof key, "own%d", seg);
        put(l, key, "x");
        for (int i = 0; i < 5; i++) {
            snprintf(key, sizeof key, "s%d", i);
            snprintf(val, sizeof val, "%d-%d", seg, i);
            put(l, key, val);
        }
        put(l, "t", seg == 3 ? NULL : "y");
        tclock_advance(clk, 200);
    }
    put(l, "active", "z");
    return l;
}

/* As crash_fixture, but the middle segments keep nothing (their keys are all written again
 * in the last one): they are in the group of the last one, whose new segment must reach past
 * their bases for recovery to delete them. */
static struct log *crash_fixture_superseded(const char *dir, struct log_config *c)
{
    struct log *l;
    char key[32], val[32];

    cfg_compact(c, 1 << 20);
    c->segment_ms = 100;
    l = open_log(dir, c, true);
    if (l == NULL)
        return NULL;
    put(l, "first", "x");
    for (int seg = 0; seg < 5; seg++) {
        for (int i = 0; i < 5; i++) {
            snprintf(key, sizeof key, "s%d", i);
            snprintf(val, sizeof val, "%d-%d", seg, i);
            put(l, key, val);
        }
        tclock_advance(clk, 200);
    }
    put(l, "active", "z");
    return l;
}

static void crash_stages(struct log *(*fixture)(const char *, struct log_config *))
{
    static const char *const stages[] = {"cleaner:map", "cleaner:cleaned", "cleaner:swap",
                                         "cleaner:swapin", "cleaner:swapped"};
    char dir[64], ref_dir[64];
    struct log_config c;
    struct log_clean_config cc;
    struct log *l, *ref;
    struct dump old_d, new_d;

    /* What a clean that is not interrupted gives. */
    setup(ref_dir);
    REQUIRE((ref = fixture(ref_dir, &c)) != NULL);
    dump_log(ref, &old_d);
    clean_cfg(&cc, ref);
    struct log_clean_stats st;
    REQUIRE(run_clean(ref, &cc, &st) == 0);
    CHECK_EQ_INT(st.groups, 1);
    dump_log(ref, &new_d);
    CHECK(strcmp(old_d.text, new_d.text) != 0);
    log_close(ref, true);
    teardown(ref_dir);

    for (size_t k = 0; k < sizeof stages / sizeof stages[0]; k++) {
        struct dump got;
        struct log_clean *job;
        int rc;

        setup(dir);
        REQUIRE((l = fixture(dir, &c)) != NULL);
        clean_cfg(&cc, l);
        fault_stop_at(stages[k]);
        REQUIRE(log_clean_begin(l, &cc, &job) == 0);
        do {
            log_clean_step(job);
            rc = log_clean_advance(job);
        } while (rc == 0);
        CHECK_EQ_INT(rc, ERR_SHUTDOWN);
        CHECK_EQ_INT(log_clean_end(job, NULL), ERR_SHUTDOWN);
        fault_stop_at(NULL);
        /* The process "dies" here: the log is dropped without a flush or a clean close. */
        log_close(l, false);
        REQUIRE((l = open_log(dir, &c, false)) != NULL);
        dump_log(l, &got);
        CHECK(!got.bad);
        bool want_new = k >= 2;
        if (strcmp(got.text, want_new ? new_d.text : old_d.text) != 0) {
            char m[64];
            snprintf(m, sizeof m, "stage %s: not the %s segments", stages[k],
                     want_new ? "new" : "old");
            harness_fail(__FILE__, __LINE__, m);
        }
        CHECK_EQ_INT(count_suffix(dir, ".cleaned"), 0);
        CHECK_EQ_INT(count_suffix(dir, ".swap"), 0);
        CHECK_EQ_INT(count_suffix(dir, ".log"), count_suffix(dir, ".index"));
        CHECK_EQ_INT(count_suffix(dir, ".log"), count_suffix(dir, ".timeindex"));
        /* And a clean after the restart finishes the job. */
        clean_cfg(&cc, l);
        REQUIRE(run_clean(l, &cc, NULL) == 0);
        free(got.text);
        dump_log(l, &got);
        CHECK(strcmp(got.text, new_d.text) == 0);
        free(got.text);
        log_close(l, true);
        teardown(dir);
    }
    free(old_d.text);
    free(new_d.text);
}

TEST(compact_crash_at_each_stage_leaves_old_or_new)
{
    crash_stages(crash_fixture);
}

TEST(compact_crash_with_superseded_segments_in_the_group)
{
    crash_stages(crash_fixture_superseded);
}

TEST(compact_reads_during_a_clean_stay_consistent)
{
    char dir[64];
    struct log_config c;
    struct log_clean_config cc;
    struct log_clean *job;
    struct log *l;
    struct log_slice held;
    struct dump before, after;
    int rc;

    setup(dir);
    REQUIRE((l = crash_fixture(dir, &c)) != NULL);
    dump_log(l, &before);
    clean_cfg(&cc, l);
    REQUIRE(log_clean_begin(l, &cc, &job) == 0);
    /* A slice taken before the swap keeps serving the old bytes after it. */
    REQUIRE(log_read(l, 0, INT64_MAX, 1 << 20, &held) == 0);
    size_t held_len = held.len;
    int steps = 0;
    bool swapped = false;
    do {
        struct dump mid;
        log_clean_step(job);
        /* Between slices, a reader sees the old log, whole (plus what was appended), until
         * the group is swapped in; then the cleaned one. Never a damaged batch. */
        dump_log(l, &mid);
        CHECK(!mid.bad);
        if (!swapped && strncmp(mid.text, before.text, before.len) != 0)
            swapped = true;
        if (!swapped)
            CHECK_EQ_INT(mid.records, before.records + steps);
        else
            CHECK(mid.records < before.records);
        free(mid.text);
        rc = log_clean_advance(job);
        /* Appends go on. */
        CHECK(put(l, "during", "clean") >= 0);
        steps++;
    } while (rc == 0);
    CHECK(steps > 2);
    CHECK_EQ_INT(log_clean_end(job, NULL), 0);
    uint8_t *buf = malloc(held_len);
    REQUIRE(pread(held.fd, buf, held_len, held.pos) == (ssize_t)held_len);
    for (size_t p = 0; p < held_len;) {
        struct record_batch b;
        REQUIRE(record_batch_validate_stored(buf + p, held_len - p, &b) == 0);
        p += record_batch_size(&b);
    }
    free(buf);
    log_slice_release(l, &held);
    dump_log(l, &after);
    CHECK(!after.bad && after.records < before.records);
    free(before.text);
    free(after.text);
    log_close(l, true);
    teardown(dir);
}

TEST(compact_rewritten_batch_keeps_its_codec)
{
    for (int codec = RECORD_CODEC_GZIP; codec <= RECORD_CODEC_ZSTD; codec++) {
        char dir[64];
        struct log_config c;
        struct log_clean_config cc;
        struct log *l;
        struct dump d;
        struct record_input recs[3];
        const char *keys[] = {"a", "b", "a"}, *vals[] = {"1", "2", "3"};
        struct record_build_options opt = {.producer_id = -1, .base_sequence = -1};
        uint8_t *plain, *z;
        size_t plain_len, zlen;
        int64_t base;

        setup(dir);
        cfg_compact(&c, 400);
        REQUIRE((l = open_log(dir, &c, true)) != NULL);
        for (int i = 0; i < 3; i++)
            recs[i] = (struct record_input){.key = (const uint8_t *)keys[i],
                                            .key_len = 1,
                                            .value = (const uint8_t *)vals[i],
                                            .value_len = 1,
                                            .timestamp = tclock_now_ms(clk)};
        REQUIRE(record_batch_build(&opt, recs, 3, &plain, &plain_len) == 0);
        REQUIRE(record_batch_recompress(plain, plain_len, codec, 1 << 20, &z, &zlen) == 0);
        REQUIRE(log_append(l, z, zlen, 2, tclock_now_ms(clk), 0, &base) == 0);
        free(plain);
        free(z);
        for (int i = 0; i < 10; i++)
            REQUIRE(put(l, "filler", "x") >= 0);
        clean_cfg(&cc, l);
        REQUIRE(run_clean(l, &cc, NULL) == 0);
        dump_log(l, &d);
        CHECK(!d.bad);
        CHECK(!has_line(&d, "0 a=1") && has_line(&d, "1 b=2") && has_line(&d, "2 a=3"));
        free(d.text);
        struct log_slice s;
        uint8_t buf[512];
        struct record_batch b;
        REQUIRE(log_read(l, 0, INT64_MAX, 1, &s) == 0);
        REQUIRE(s.len <= sizeof buf && pread(s.fd, buf, s.len, s.pos) == (ssize_t)s.len);
        REQUIRE(record_batch_validate_stored(buf, s.len, &b) == 0);
        CHECK_EQ_INT(b.attributes & RECORD_ATTR_COMPRESSION_MASK, codec);
        CHECK_EQ_INT(b.record_count, 2);
        CHECK_EQ_INT(record_batch_last_offset(&b), 2);
        log_slice_release(l, &s);
        log_close(l, true);
        teardown(dir);
    }
}

/* ---- aborted transactions through a clean (issue 10) --------------------------------------- */

/* The .txnindex entries of a group's old segments end up in the new segment's .txnindex —
 * after an uninterrupted clean, and after a crash at every stage (recovery completes the
 * swap with them). */
TEST(compact_keeps_aborted_transactions_of_merged_segments)
{
    static const char *const stages[] = {NULL, "cleaner:swap", "cleaner:swapin", "cleaner:swapped"};

    for (size_t k = 0; k < sizeof stages / sizeof stages[0]; k++) {
        char dir[64];
        struct log_config c;
        struct log_clean_config cc;
        struct log_clean *job;
        struct log *l;
        struct log_aborted_txn *v;
        size_t n;
        int rc;

        setup(dir);
        REQUIRE((l = crash_fixture(dir, &c)) != NULL);
        /* One aborted transaction recorded in each of the six sealed segments (their "own"
         * record's offset stands in for the marker), in marker order. */
        for (int seg = 0; seg < 6; seg++) {
            int64_t off = seg * 7;
            struct log_aborted_txn t = {100 + seg, off, off, off + 1};
            REQUIRE(log_txn_append(l, &t) == 0);
        }
        REQUIRE(log_txn_collect(l, 0, INT64_MAX, &v, &n) == 0);
        CHECK_EQ_INT(n, 6);
        free(v);
        clean_cfg(&cc, l);
        fault_stop_at(stages[k]);
        REQUIRE(log_clean_begin(l, &cc, &job) == 0);
        do {
            log_clean_step(job);
            rc = log_clean_advance(job);
        } while (rc == 0);
        log_clean_end(job, NULL);
        fault_stop_at(NULL);
        if (stages[k] != NULL) {
            log_close(l, false);
            REQUIRE((l = open_log(dir, &c, false)) != NULL);
        }
        REQUIRE(log_txn_collect(l, 0, INT64_MAX, &v, &n) == 0);
        CHECK_EQ_INT(n, 6);
        for (size_t i = 0; i < n && i < 6; i++)
            CHECK_EQ_INT(v[i].producer_id, 100 + (int64_t)i);
        free(v);
        CHECK_EQ_INT(count_suffix(dir, ".txnindex"), count_suffix(dir, ".log"));
        log_close(l, true);
        teardown(dir);
    }
}

/* ---- damaged batches (issue 18): the background check's quarantined ranges ---------------- */

/* The position of the batch with base offset `base` in dir's segment `seg`, or -1. */
static int64_t batch_pos(const char *dir, int64_t seg, int64_t base)
{
    char p[512];
    uint8_t h[12];
    int64_t pos = 0;
    snprintf(p, sizeof p, "%s/%020lld.log", dir, (long long)seg);
    int fd = open(p, O_RDONLY);
    if (fd < 0)
        return -1;
    while (pread(fd, h, sizeof h, pos) == (ssize_t)sizeof h) {
        int64_t b = 0;
        int32_t len = 0;
        for (int i = 0; i < 8; i++)
            b = b << 8 | h[i];
        for (int i = 8; i < 12; i++)
            len = len << 8 | h[i];
        if (b == base) {
            close(fd);
            return pos;
        }
        pos += 12 + len;
    }
    close(fd);
    return -1;
}

TEST(compact_waits_for_the_check_and_drops_a_quarantined_batch)
{
    char dir[64], key[16], val[32], p[512];
    struct log_config c;
    struct log_clean_config cc;
    struct log_clean_stats st;
    struct log_clean *job;
    struct log_check *chk;
    struct log *l;
    struct dump after;
    size_t damaged = 0;

    setup(dir);
    cfg_compact(&c, 1024);
    REQUIRE((l = open_log(dir, &c, true)) != NULL);
    for (int i = 0; i < 60; i++) { /* distinct keys: a clean keeps every record */
        snprintf(key, sizeof key, "k%d", i);
        snprintf(val, sizeof val, "v%d", i);
        REQUIRE(put(l, key, val) == i);
    }
    log_close(l, true);
    /* A byte of the value of offset 3 (segment 0, sealed): only its CRC tells. */
    int64_t pos = batch_pos(dir, 0, 3);
    REQUIRE(pos > 0);
    snprintf(p, sizeof p, "%s/%020lld.log", dir, 0LL);
    int fd = open(p, O_RDWR);
    REQUIRE(fd >= 0);
    uint8_t x;
    REQUIRE(pread(fd, &x, 1, pos + 64) == 1);
    x ^= 0x10;
    REQUIRE(pwrite(fd, &x, 1, pos + 64) == 1);
    close(fd);

    REQUIRE((l = open_log(dir, &c, true)) != NULL);
    log_check_start(l);
    /* No clean before the check has read the segments (it is trusted, and a damaged base
     * offset is outside the CRC the cleaner checks). */
    clean_cfg(&cc, l);
    CHECK_EQ_INT(log_clean_begin(l, &cc, &job), ERR_NOTFOUND);
    while (log_check_next(&chk) == 0) {
        log_check_run(chk);
        log_check_done(chk);
    }
    log_check_pending(l, &damaged);
    CHECK_EQ_INT(damaged, 1);
    /* The clean copies the batches around the quarantined one and leaves it behind. */
    REQUIRE(run_clean(l, &cc, &st) == 0);
    dump_log(l, &after);
    CHECK(!after.bad);
    CHECK_EQ_INT(after.records, 59);
    for (int i = 0; i < 60; i++) {
        char line[64];
        snprintf(line, sizeof line, "%d k%d=v%d", i, i, i);
        CHECK(has_line(&after, line) == (i != 3));
    }
    free(after.text);
    log_close(l, true);
    /* The damaged bytes are gone from the files: the next start finds nothing. */
    REQUIRE((l = open_log(dir, &c, true)) != NULL);
    log_check_start(l);
    while (log_check_next(&chk) == 0) {
        log_check_run(chk);
        log_check_done(chk);
    }
    log_check_pending(l, &damaged);
    CHECK_EQ_INT(damaged, 0);
    log_close(l, true);
    teardown(dir);
}
