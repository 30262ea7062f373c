/* SPDX-License-Identifier: Apache-2.0 */
/* log unit tests: append/read across rolls, index lookups, clean and unclean reopen, torn
 * and corrupt tails, index rebuilds, retention, DeleteRecords, time lookups, injected
 * ENOSPC / short writes / fsync failure, virtual time and wall-clock steps, truncation, the leader
 * epoch cache, checkpoint files, and slices that outlive their segment. Each test works in its own
 * mkdtemp directory. */
#include "harness.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdatomic.h>
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

static void tmp_dir(char *buf)
{
    strcpy(buf, "/tmp/tally_log_XXXXXX");
    if (!mkdtemp(buf))
        buf[0] = '\0';
    /* The failures these tests inject are logged as errors; keep the output readable
     * unless asked. */
    if (!getenv("TEST_LOG_VERBOSE"))
        slog_set_level((enum slog_level)(SLOG_ERROR + 1));
}

static void rm_dir(const char *dir)
{
    nftw(dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
    slog_set_level(SLOG_INFO);
}

/* Injectable io: wraps the default table, on a virtual clock (wall time starting at the
 * real time, so tests that do not care see today's date). */
static struct tclock *test_clock;
static int64_t pwrite_budget = -1; /* bytes allowed before ENOSPC; -1 = unlimited */
static bool short_writes;          /* each pwrite writes at most half (at least 1 byte) */
static bool fail_fsync;
static _Atomic int fsync_calls;
static long pread_calls;

static ssize_t t_pread(int fd, void *buf, size_t len, off_t off)
{
    pread_calls++;
    return sysio_default()->pread(fd, buf, len, off);
}

static ssize_t t_pwrite(int fd, const void *buf, size_t len, off_t off)
{
    if (short_writes && len > 1)
        len /= 2;
    if (pwrite_budget >= 0) {
        if (pwrite_budget == 0) {
            errno = ENOSPC;
            return -1;
        }
        if ((int64_t)len > pwrite_budget)
            len = (size_t)pwrite_budget;
        pwrite_budget -= (int64_t)len;
    }
    return sysio_default()->pwrite(fd, buf, len, off);
}

static int t_fsync(int fd)
{
    fsync_calls++;
    if (fail_fsync) {
        errno = EIO;
        return -1;
    }
    return sysio_default()->fsync(fd);
}

/* test_sys is the system-call table (tests change its entries); test_io is it with the clock,
 * as log_open takes them. */
static struct sysio test_sys;
static struct log_io test_io = {.sys = &test_sys};

static const struct log_io *tio(void)
{
    test_sys = *sysio_default();
    test_sys.pwrite = t_pwrite;
    test_sys.fsync = t_fsync;
    test_sys.pread = t_pread;
    tclock_free(test_clock);
    test_clock = tclock_virtual_new((int64_t)time(NULL) * 1000);
    test_io.clock = test_clock;
    pwrite_budget = -1;
    short_writes = false;
    fail_fsync = false;
    fsync_calls = 0;
    return &test_io;
}

static void small_cfg(struct log_config *c)
{
    log_config_default(c);
    c->segment_bytes = 2048;
    c->index_interval_bytes = 256;
}

/* Appends one batch of n records whose timestamps are ts..ts (all equal) with a value of
 * vlen bytes. Returns log_append's result. */
static int append_ts(struct log *l, int n, int64_t ts, int vlen, int32_t epoch, int64_t *base)
{
    struct record_input recs[16];
    uint8_t val[512];
    struct record_build_options opt = {
        .base_offset = 0, .producer_id = -1, .base_sequence = -1, .leader_epoch = -1};
    uint8_t *b;
    size_t len;
    int rc;

    memset(val, 'v', sizeof val);
    for (int i = 0; i < n; i++)
        recs[i] =
            (struct record_input){.key_len = -1, .value = val, .value_len = vlen, .timestamp = ts};
    if (record_batch_build(&opt, recs, n, &b, &len) != 0)
        return -9999;
    rc = log_append(l, b, len, n - 1, ts, epoch, base);
    free(b);
    return rc;
}

/* Batch i carries timestamp 1000 + i, 3 records and a 60-byte value: about 300 bytes. */
static int append_i(struct log *l, int i)
{
    int64_t base;
    return append_ts(l, 3, 1000 + i, 60, 0, &base);
}

static int64_t file_size(const char *dir, int64_t base, const char *ext)
{
    char p[512];
    struct stat st;
    snprintf(p, sizeof p, "%s/%020lld%s", dir, (long long)base, ext);
    return stat(p, &st) == 0 ? (int64_t)st.st_size : -1;
}

static int count_files(const char *dir, const char *ext)
{
    char cmd[600];
    FILE *f;
    int n = -1;
    snprintf(cmd, sizeof cmd, "ls %s | grep -c '\\%s$'", dir, ext);
    f = popen(cmd, "r");
    if (f) {
        if (fscanf(f, "%d", &n) != 1)
            n = -1;
        pclose(f);
    }
    return n;
}

/* Reads everything from `from` to the end through log_read, checking that every batch is
 * whole, CRC-valid, contiguous, and that batch k (offset 3k) has timestamp 1000 + k.
 * Returns the number of batches seen or -1. */
static int read_all_check(struct log *l, int64_t from, size_t max_bytes)
{
    int64_t off = from;
    int batches = 0;
    while (off < log_end_offset(l)) {
        struct log_slice s;
        uint8_t *buf;
        size_t p = 0;
        if (log_read(l, off, INT64_MAX, max_bytes, &s) != 0 || s.len == 0)
            return -1;
        buf = malloc(s.len);
        if (pread(s.fd, buf, s.len, s.pos) != (ssize_t)s.len) {
            free(buf);
            log_slice_release(l, &s);
            return -1;
        }
        while (p < s.len) {
            struct record_batch b;
            if (record_batch_validate(buf + p, s.len - p, &b) != 0 || b.base_offset > off ||
                record_batch_last_offset(&b) < off || b.max_timestamp != 1000 + b.base_offset / 3) {
                free(buf);
                log_slice_release(l, &s);
                return -1;
            }
            off = record_batch_last_offset(&b) + 1;
            p += record_batch_size(&b);
            batches++;
        }
        free(buf);
        log_slice_release(l, &s);
    }
    return batches;
}

static struct log *open_log(const char *dir, const struct log_config *c, int64_t rp, bool clean)
{
    struct log *l = NULL;
    if (log_open(dir, c, &test_io, rp, -1, clean, &l) != 0)
        return NULL;
    return l;
}

/* ---- tests ---------------------------------------------------------------------------- */

TEST(log_append_read_across_rolls)
{
    char dir[64];
    struct log_config c;
    struct log *l;
    int64_t base;

    tmp_dir(dir);
    tio();
    small_cfg(&c);
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    CHECK_EQ_INT(log_end_offset(l), 0);
    for (int i = 0; i < 100; i++) {
        REQUIRE(append_ts(l, 3, 1000 + i, 60, 0, &base) == 0);
        CHECK_EQ_INT(base, 3 * i);
    }
    CHECK_EQ_INT(log_end_offset(l), 300);
    CHECK(count_files(dir, ".log") > 5);
    CHECK_EQ_INT(count_files(dir, ".log"), count_files(dir, ".index"));
    CHECK_EQ_INT(count_files(dir, ".log"), count_files(dir, ".txnindex"));
    /* Segments never exceed segment.bytes (each holds whole batches). */
    CHECK(file_size(dir, 0, ".log") <= 2048 && file_size(dir, 0, ".log") > 1500);
    CHECK(file_size(dir, 0, ".index") > 0 && file_size(dir, 0, ".index") % 8 == 0);
    CHECK(file_size(dir, 0, ".timeindex") > 0 && file_size(dir, 0, ".timeindex") % 12 == 0);
    CHECK_EQ_INT(read_all_check(l, 0, 1 << 20), 100);
    CHECK_EQ_INT(read_all_check(l, 0, 1), 100); /* one batch at a time (KIP-74) */
    CHECK_EQ_INT(read_all_check(l, 0, 700), 100);
    CHECK_EQ_INT(read_all_check(l, 151, 1000), 50);
    int64_t total = 0;
    for (int64_t b = 0; file_size(dir, b, ".log") >= 0 || b < 300; b++)
        if (file_size(dir, b, ".log") > 0)
            total += file_size(dir, b, ".log");
    CHECK_EQ_INT(log_size_bytes(l), total);
    log_close(l, true);
    rm_dir(dir);
}

TEST(log_read_every_offset_via_index)
{
    char dir[64];
    struct log_config c;
    struct log *l;

    tmp_dir(dir);
    tio();
    small_cfg(&c);
    c.segment_bytes = 64 * 1024; /* one big segment: many index entries */
    c.index_interval_bytes = 600;
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    for (int i = 0; i < 120; i++)
        REQUIRE(append_i(l, i) == 0);
    CHECK_EQ_INT(count_files(dir, ".log"), 1);
    CHECK(file_size(dir, 0, ".index") >= 8 * 20);
    for (int64_t o = 0; o < 360; o++) {
        struct log_slice s;
        uint8_t hdr[RECORD_BATCH_HEADER];
        REQUIRE(log_read(l, o, INT64_MAX, 1, &s) == 0);
        REQUIRE(s.len > 0 && s.len < 400);
        REQUIRE(pread(s.fd, hdr, sizeof hdr, s.pos) == (ssize_t)sizeof hdr);
        int64_t bo = 0;
        for (int k = 0; k < 8; k++)
            bo = bo << 8 | hdr[k];
        CHECK_EQ_INT(bo, o / 3 * 3);
        log_slice_release(l, &s);
    }
    log_close(l, true);
    rm_dir(dir);
}

/* The loop's reads (log_read_nowait): a page not in the page cache (the fake pread_nowait
 * says so for the file it is told) fails nothing and waits for nothing: the slice comes back
 * empty and `cold`, holding the segment and naming what to warm — the whole .index when an
 * index page was missing, the .log bytes from the missing page on (as many as asked, at least
 * 64 KiB, never past the segment) when a header was. Warm, the same read is served, and with
 * no blocking pread. */
static int cold_fd = -2; /* pread_nowait fails with EAGAIN on this descriptor */
static int nowait_calls;

static ssize_t t_pread_nowait(int fd, void *buf, size_t len, off_t off)
{
    nowait_calls++;
    if (fd == cold_fd) {
        errno = EAGAIN;
        return -1;
    }
    return sysio_default()->pread_nowait(fd, buf, len, off);
}

static int open_file(const char *dir, int64_t base, const char *ext)
{
    char p[128];
    snprintf(p, sizeof p, "%s/%020lld%s", dir, (long long)base, ext);
    return open(p, O_RDONLY);
}

static bool same_file(int a, int b)
{
    struct stat sa, sb;
    return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_ino == sb.st_ino &&
           sa.st_dev == sb.st_dev;
}

/* The log's own descriptor of the file `mine` is open on (-1 if none). */
static int log_fd_of(int mine)
{
    for (int f = 0; f < 1024; f++)
        if (f != mine && same_file(f, mine))
            return f;
    return -1;
}

TEST(log_read_nowait_names_the_cold_range_and_serves_once_warm)
{
    char dir[64];
    struct log_config c;
    struct log *l;
    struct log_slice s;
    int idx, lg;

    tmp_dir(dir);
    tio();
    test_sys.pread_nowait = t_pread_nowait;
    small_cfg(&c);
    c.segment_bytes = 64 * 1024;
    c.index_interval_bytes = 600;
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    for (int i = 0; i < 120; i++)
        REQUIRE(append_i(l, i) == 0);
    log_close(l, true); /* every .index entry written */
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    idx = open_file(dir, 0, ".index");
    lg = open_file(dir, 0, ".log");
    REQUIRE(idx >= 0 && lg >= 0);

    /* Offset 3 is below the last index entry: the binary search reads .index first. */
    REQUIRE(log_read(l, 3, INT64_MAX, 1, &s) == 0); /* opens the files */
    log_slice_release(l, &s);
    cold_fd = log_fd_of(idx);
    REQUIRE(cold_fd >= 0);
    REQUIRE(log_read_nowait(l, 3, INT64_MAX, 1, &s) == 0);
    CHECK(s.cold);
    CHECK_EQ_INT(s.len, 0);
    CHECK(same_file(s.warm_fd, idx));
    CHECK_EQ_INT(s.warm_pos, 0);
    CHECK_EQ_INT((int64_t)s.warm_len, file_size(dir, 0, ".index"));
    log_slice_release(l, &s);

    /* The .log cold instead: the range starts at the page the header read needed. */
    cold_fd = log_fd_of(lg);
    REQUIRE(cold_fd >= 0);
    REQUIRE(log_read_nowait(l, 300, INT64_MAX, 1, &s) == 0);
    CHECK(s.cold);
    CHECK_EQ_INT(s.len, 0);
    CHECK(same_file(s.warm_fd, lg));
    CHECK(s.warm_pos > 0 && s.warm_pos < file_size(dir, 0, ".log"));
    CHECK_EQ_INT(s.warm_pos + (int64_t)s.warm_len, file_size(dir, 0, ".log")); /* < 64 KiB */
    log_slice_release(l, &s);

    /* Warm: served, through pread_nowait alone. */
    cold_fd = -2;
    pread_calls = nowait_calls = 0;
    REQUIRE(log_read_nowait(l, 3, INT64_MAX, 1, &s) == 0);
    CHECK(!s.cold);
    CHECK(s.len > 0);
    CHECK(nowait_calls > 0);
    CHECK_EQ_INT(pread_calls, 0);
    log_slice_release(l, &s);
    /* log_read itself never goes cold. */
    cold_fd = log_fd_of(lg);
    REQUIRE(log_read(l, 300, INT64_MAX, 1, &s) == 0);
    CHECK(!s.cold && s.len > 0);
    log_slice_release(l, &s);

    cold_fd = -2;
    close(idx);
    close(lg);
    log_close(l, true);
    rm_dir(dir);
}

/* Pages of partial_fd from byte partial_limit on are not in the page cache (the fake
 * pread_nowait returns what lies below and then EAGAIN). */
static int partial_fd = -2;
static off_t partial_limit;

static ssize_t partial_pread_nowait(int fd, void *buf, size_t len, off_t off)
{
    nowait_calls++;
    if (fd == partial_fd && off + (off_t)len > partial_limit) {
        if (off >= partial_limit) {
            errno = EAGAIN;
            return -1;
        }
        len = (size_t)(partial_limit - off);
    }
    return sysio_default()->pread_nowait(fd, buf, len, off);
}

/* Finding an offset past the last index entry walks the batch headers from there: they are
 * read a window at a time, not one read each, and a window whose end is not in the page
 * cache is enough as long as the headers needed are in what was read. */
TEST(log_read_nowait_finds_an_offset_a_window_of_headers_at_a_time)
{
    char dir[64];
    struct log_config c;
    struct log *l;
    struct log_slice s;
    int lg;

    tmp_dir(dir);
    tio();
    test_sys.pread_nowait = partial_pread_nowait;
    small_cfg(&c);
    c.segment_bytes = 1 << 20;
    c.index_interval_bytes = 1 << 20; /* no index entry: the find scans from the start */
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    for (int i = 0; i < 100; i++) /* batches of 3 records, about 270 bytes each */
        REQUIRE(append_i(l, i) == 0);
    REQUIRE(log_read(l, 0, INT64_MAX, 1, &s) == 0); /* opens the .log */
    log_slice_release(l, &s);

    nowait_calls = 0;
    REQUIRE(log_read_nowait(l, 270, INT64_MAX, 1, &s) == 0); /* batch 90 */
    CHECK(!s.cold);
    CHECK(s.len > 0);
    CHECK(nowait_calls <= 12); /* about 27 KB of headers: 7 windows, not 91 reads */
    int64_t after = (int64_t)s.pos + (int64_t)s.len; /* where batch 91 starts */
    log_slice_release(l, &s);

    /* Cold from just past batch 91's header (the read of batch 90 looks at it): served. */
    lg = open_file(dir, 0, ".log");
    REQUIRE(lg >= 0);
    partial_fd = log_fd_of(lg);
    REQUIRE(partial_fd >= 0);
    partial_limit = (off_t)after + RECORD_BATCH_HEADER;
    REQUIRE(log_read_nowait(l, 270, INT64_MAX, 1, &s) == 0);
    CHECK(!s.cold);
    CHECK_EQ_INT((int64_t)s.pos + (int64_t)s.len, after);
    log_slice_release(l, &s);
    /* One byte of that header cold: now the read must wait. */
    partial_limit = (off_t)after + RECORD_BATCH_HEADER - 1;
    REQUIRE(log_read_nowait(l, 270, INT64_MAX, 1, &s) == 0);
    CHECK(s.cold);
    CHECK_EQ_INT(s.len, 0);
    log_slice_release(l, &s);

    partial_fd = -2;
    close(lg);
    log_close(l, true);
    rm_dir(dir);
}

TEST(log_read_bounds)
{
    char dir[64];
    struct log_config c;
    struct log *l;
    struct log_slice s;

    tmp_dir(dir);
    tio();
    small_cfg(&c);
    c.segment_bytes = 64 * 1024;
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    for (int i = 0; i < 20; i++)
        REQUIRE(append_i(l, i) == 0);
    /* max_offset (high watermark) 9: batches 0..2 (offsets 0..8) only. */
    REQUIRE(log_read(l, 0, 9, 1 << 20, &s) == 0);
    CHECK(s.len > 0);
    size_t three = s.len;
    log_slice_release(l, &s);
    REQUIRE(log_read(l, 0, 10, 1 << 20, &s) == 0); /* batch 3 (9..11) crosses 10: excluded */
    CHECK_EQ_INT(s.len, three);
    log_slice_release(l, &s);
    REQUIRE(log_read(l, 0, 9, three - 1, &s) == 0); /* max_bytes cuts to two batches */
    CHECK_EQ_INT(s.len, three / 3 * 2);
    log_slice_release(l, &s);
    REQUIRE(log_read(l, 9, 9, 1 << 20, &s) == 0); /* at the high watermark: empty */
    CHECK_EQ_INT(s.len, 0);
    log_slice_release(l, &s);
    REQUIRE(log_read(l, 4, 6, 1 << 20, &s) == 0); /* batch 3..5 ends below 6 */
    CHECK_EQ_INT(s.len, three / 3);
    log_slice_release(l, &s);
    REQUIRE(log_read(l, 60, INT64_MAX, 1 << 20, &s) == 0); /* at the end: empty */
    CHECK_EQ_INT(s.len, 0);
    CHECK_EQ_INT(log_read(l, 61, INT64_MAX, 1 << 20, &s), ERR_OFFSET_OUT_OF_RANGE);
    CHECK_EQ_INT(log_read(l, -1, INT64_MAX, 1 << 20, &s), ERR_OFFSET_OUT_OF_RANGE);
    /* A read taken, then more appends: the slice still covers exactly what it did. */
    REQUIRE(log_read(l, 57, INT64_MAX, 1 << 20, &s) == 0);
    size_t before = s.len;
    REQUIRE(append_i(l, 20) == 0);
    CHECK_EQ_INT(s.len, before);
    log_slice_release(l, &s);
    log_close(l, true);
    rm_dir(dir);
}

TEST(log_reopen_clean_and_unclean)
{
    char dir[64];
    struct log_config c;
    struct log *l;
    int64_t ts, off;

    tmp_dir(dir);
    tio();
    small_cfg(&c);
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    for (int i = 0; i < 50; i++)
        REQUIRE(append_i(l, i) == 0);
    log_max_timestamp(l, &off, &ts);
    CHECK_EQ_INT(ts, 1049);
    CHECK_EQ_INT(off, 149);
    log_close(l, true);

    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    CHECK_EQ_INT(log_end_offset(l), 150);
    CHECK_EQ_INT(log_flushed_offset(l), 150);
    CHECK_EQ_INT(read_all_check(l, 0, 1 << 20), 50);
    log_max_timestamp(l, &off, &ts);
    CHECK_EQ_INT(ts, 1049);
    CHECK_EQ_INT(off, 149);
    for (int i = 50; i < 60; i++)
        REQUIRE(append_i(l, i) == 0);
    log_close(l, false); /* crash-like: no final flush */

    REQUIRE((l = open_log(dir, &c, 0, false)) != NULL); /* rescan everything */
    CHECK_EQ_INT(log_end_offset(l), 180);
    CHECK_EQ_INT(log_flushed_offset(l), 0);
    CHECK_EQ_INT(read_all_check(l, 0, 1 << 20), 60);
    log_max_timestamp(l, &off, &ts);
    CHECK_EQ_INT(ts, 1059);
    REQUIRE(append_i(l, 60) == 0);
    log_close(l, false);

    REQUIRE((l = open_log(dir, &c, 150, false)) != NULL); /* rescan from 150 only */
    CHECK_EQ_INT(log_end_offset(l), 183);
    CHECK_EQ_INT(log_flushed_offset(l), 150);
    CHECK_EQ_INT(read_all_check(l, 0, 1 << 20), 61);
    log_close(l, true);
    rm_dir(dir);
}

/* The last segment's base, found by probing the files. */
static int64_t last_base(const char *dir, int64_t leo)
{
    for (int64_t b = leo; b >= 0; b--)
        if (file_size(dir, b, ".log") >= 0)
            return b;
    return -1;
}

TEST(log_torn_tail_truncated)
{
    char dir[64], p[512];
    struct log_config c;
    struct log *l;

    tmp_dir(dir);
    tio();
    small_cfg(&c);
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    for (int i = 0; i < 30; i++)
        REQUIRE(append_i(l, i) == 0);
    log_close(l, false);
    int64_t lb = last_base(dir, 90);
    int64_t sz = file_size(dir, lb, ".log");
    REQUIRE(lb > 0 && sz > 200);
    snprintf(p, sizeof p, "%s/%020lld.log", dir, (long long)lb);
    REQUIRE(truncate(p, sz - 100) == 0); /* cuts the last batch (about 300 bytes) */

    REQUIRE((l = open_log(dir, &c, lb, false)) != NULL);
    CHECK_EQ_INT(log_end_offset(l), 87);
    CHECK_EQ_INT(read_all_check(l, 0, 1 << 20), 29);
    CHECK(file_size(dir, lb, ".log") < sz - 100);
    int64_t base;
    REQUIRE(append_ts(l, 3, 1029, 60, 0, &base) == 0);
    CHECK_EQ_INT(base, 87);
    CHECK_EQ_INT(read_all_check(l, 0, 1 << 20), 30);
    log_close(l, true);
    rm_dir(dir);
}

TEST(log_flipped_byte_truncated)
{
    char dir[64], p[512];
    struct log_config c;
    struct log *l;

    tmp_dir(dir);
    tio();
    small_cfg(&c);
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    for (int i = 0; i < 30; i++)
        REQUIRE(append_i(l, i) == 0);
    log_close(l, false);
    int64_t lb = last_base(dir, 90);
    int64_t sz = file_size(dir, lb, ".log");
    snprintf(p, sizeof p, "%s/%020lld.log", dir, (long long)lb);
    int fd = open(p, O_RDWR);
    REQUIRE(fd >= 0);
    uint8_t x;
    REQUIRE(pread(fd, &x, 1, sz - 10) == 1);
    x ^= 0x40;
    REQUIRE(pwrite(fd, &x, 1, sz - 10) == 1);
    close(fd);

    REQUIRE((l = open_log(dir, &c, lb, false)) != NULL);
    CHECK_EQ_INT(log_end_offset(l), 87);
    CHECK_EQ_INT(read_all_check(l, 0, 1 << 20), 29);
    log_close(l, true);

    /* A clean open trusts the files (no rescan): the rescan is what unclean opens are for. */
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    CHECK_EQ_INT(log_end_offset(l), 87);
    log_close(l, true);
    rm_dir(dir);
}

TEST(log_corrupt_middle_segment_drops_later_ones)
{
    char dir[64], p[512];
    struct log_config c;
    struct log *l;

    tmp_dir(dir);
    tio();
    small_cfg(&c);
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    for (int i = 0; i < 30; i++)
        REQUIRE(append_i(l, i) == 0);
    log_close(l, false);
    int nseg = count_files(dir, ".log");
    REQUIRE(nseg >= 3);
    /* Flip a byte in the second batch of segment 0 and recover from offset 0. */
    snprintf(p, sizeof p, "%s/%020d.log", dir, 0);
    int fd = open(p, O_RDWR);
    REQUIRE(fd >= 0);
    uint8_t x;
    REQUIRE(pread(fd, &x, 1, 400) == 1);
    x ^= 1;
    REQUIRE(pwrite(fd, &x, 1, 400) == 1);
    close(fd);
    REQUIRE((l = open_log(dir, &c, 0, false)) != NULL);
    CHECK_EQ_INT(log_end_offset(l), 3);
    CHECK_EQ_INT(count_files(dir, ".log"), 1);
    CHECK_EQ_INT(read_all_check(l, 0, 1 << 20), 1);
    REQUIRE(append_i(l, 1) == 0);
    CHECK_EQ_INT(read_all_check(l, 0, 1 << 20), 2);
    log_close(l, true);
    rm_dir(dir);
}

TEST(log_index_rebuilt)
{
    char dir[64], p[512];
    struct log_config c;
    struct log *l;

    tmp_dir(dir);
    tio();
    small_cfg(&c);
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    for (int i = 0; i < 40; i++)
        REQUIRE(append_i(l, i) == 0);
    log_close(l, true);
    int64_t isz = file_size(dir, 0, ".index"), tsz = file_size(dir, 0, ".timeindex");
    REQUIRE(isz > 0 && tsz > 0);
    int64_t lb = last_base(dir, 120);

    /* Deleted .index of the first segment, garbage in the last segment's .index, odd-sized
     * .timeindex of the first one. */
    snprintf(p, sizeof p, "%s/%020d.index", dir, 0);
    REQUIRE(unlink(p) == 0);
    snprintf(p, sizeof p, "%s/%020d.timeindex", dir, 0);
    REQUIRE(truncate(p, tsz - 5) == 0);
    snprintf(p, sizeof p, "%s/%020lld.index", dir, (long long)lb);
    int fd = open(p, O_RDWR | O_CREAT, 0644);
    REQUIRE(fd >= 0);
    uint8_t junk[8] = {0, 0, 0, 1, 0x7f, 0, 0, 0};
    REQUIRE(pwrite(fd, junk, 8, 0) == 8);
    close(fd);

    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    CHECK_EQ_INT(log_end_offset(l), 120);
    CHECK_EQ_INT(file_size(dir, 0, ".index"), isz);
    CHECK_EQ_INT(file_size(dir, 0, ".timeindex"), tsz);
    CHECK_EQ_INT(read_all_check(l, 0, 1 << 20), 40);
    CHECK_EQ_INT(read_all_check(l, 0, 1), 40);
    log_close(l, true);
    rm_dir(dir);
}

TEST(log_retention_by_bytes)
{
    char dir[64];
    struct log_config c;
    struct log *l;
    struct log_slice s;

    tmp_dir(dir);
    tio();
    small_cfg(&c);
    c.retention_ms = -1;
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    for (int i = 0; i < 60; i++)
        REQUIRE(append_i(l, i) == 0);
    int nseg = count_files(dir, ".log");
    CHECK_EQ_INT(log_retain(l), 0); /* unlimited */
    log_close(l, true);

    c.retention_bytes = 5000;
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    int64_t size = log_size_bytes(l);
    int d = log_retain(l);
    CHECK(d > 0);
    CHECK(log_size_bytes(l) >= 5000 - 2048);
    CHECK(log_size_bytes(l) <= size);
    CHECK_EQ_INT(count_files(dir, ".log"), nseg - d);
    CHECK_EQ_INT(count_files(dir, ".index"), nseg - d);
    CHECK(log_start_offset(l) > 0);
    CHECK(file_size(dir, log_start_offset(l), ".log") > 0);
    CHECK_EQ_INT(log_read(l, 0, INT64_MAX, 100, &s), ERR_OFFSET_OUT_OF_RANGE);
    CHECK_EQ_INT(read_all_check(l, log_start_offset(l), 1 << 20), (180 - log_start_offset(l)) / 3);
    /* The active segment is never deleted. */
    c.retention_bytes = 0;
    log_set_config(l, &c);
    log_retain(l);
    CHECK_EQ_INT(count_files(dir, ".log"), 1);
    CHECK_EQ_INT(log_end_offset(l), 180);
    REQUIRE(append_i(l, 60) == 0);
    int64_t start = log_start_offset(l);
    log_close(l, true);
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    CHECK_EQ_INT(log_start_offset(l), start);
    CHECK_EQ_INT(log_end_offset(l), 183);
    log_close(l, true);
    rm_dir(dir);
}

TEST(log_retention_by_time)
{
    char dir[64];
    struct log_config c;
    struct log *l;
    int64_t base;

    tmp_dir(dir);
    tio();
    small_cfg(&c);
    c.retention_ms = 1000;
    tclock_set_wall(test_clock, 100000);
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    /* Seven batches (265 bytes) per segment: 14 with timestamps 50000.., then 99500.. */
    for (int i = 0; i < 14; i++)
        REQUIRE(append_ts(l, 3, 50000 + i, 60, 0, &base) == 0);
    for (int i = 0; i < 12; i++)
        REQUIRE(append_ts(l, 3, 99500 + i, 60, 0, &base) == 0);
    int nseg = count_files(dir, ".log");
    REQUIRE(nseg >= 4);
    int d = log_retain(l);
    CHECK_EQ_INT(d, 2); /* the two segments of old batches */
    CHECK_EQ_INT(log_start_offset(l), 42);
    CHECK_EQ_INT(log_retain(l), 0);
    tclock_set_wall(test_clock,
                    200000); /* time jump: everything is old, except the active segment */
    CHECK_EQ_INT(log_retain(l), nseg - 3);
    CHECK_EQ_INT(count_files(dir, ".log"), 1);
    CHECK_EQ_INT(log_end_offset(l), 78);
    log_close(l, true);
    rm_dir(dir);
}

TEST(log_delete_records_moves_start)
{
    char dir[64];
    struct log_config c;
    struct log *l;
    struct log_slice s;

    tmp_dir(dir);
    tio();
    small_cfg(&c);
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    for (int i = 0; i < 30; i++)
        REQUIRE(append_i(l, i) == 0);
    int nseg = count_files(dir, ".log");
    CHECK_EQ_INT(log_delete_records(l, 91), ERR_OFFSET_OUT_OF_RANGE);
    CHECK_EQ_INT(log_delete_records(l, 4), 0);
    CHECK_EQ_INT(log_start_offset(l), 4);
    CHECK_EQ_INT(count_files(dir, ".log"), nseg);
    CHECK_EQ_INT(log_read(l, 3, INT64_MAX, 100, &s), ERR_OFFSET_OUT_OF_RANGE);
    REQUIRE(log_read(l, 4, INT64_MAX, 1, &s) == 0); /* the batch holding 4 (3..5) */
    CHECK(s.len > 0);
    log_slice_release(l, &s);
    CHECK_EQ_INT(log_delete_records(l, 40), 0);
    CHECK(count_files(dir, ".log") < nseg);
    CHECK_EQ_INT(log_start_offset(l), 40);
    CHECK_EQ_INT(log_delete_records(l, 10), 0); /* never backwards */
    CHECK_EQ_INT(log_start_offset(l), 40);
    CHECK_EQ_INT(log_delete_records(l, 90), 0);
    CHECK_EQ_INT(log_start_offset(l), 90);
    CHECK_EQ_INT(count_files(dir, ".log"), 1);
    log_close(l, true);
    rm_dir(dir);
}

TEST(log_offset_for_time_and_max_timestamp)
{
    char dir[64];
    struct log_config c;
    struct log *l;
    int64_t base, off, ts;

    tmp_dir(dir);
    tio();
    small_cfg(&c);
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    CHECK_EQ_INT(log_offset_for_time(l, 0, &off, &ts), 0);
    CHECK_EQ_INT(off, -1);
    log_max_timestamp(l, &off, &ts);
    CHECK_EQ_INT(off, -1);
    CHECK_EQ_INT(ts, -1);
    /* Batch i has timestamp 10 * i, except batch 25 which jumps ahead to 5000. */
    for (int i = 0; i < 40; i++)
        REQUIRE(append_ts(l, 2, i == 25 ? 5000 : 10 * i, 60, 0, &base) == 0);
    for (int round = 0; round < 2; round++) {
        CHECK_EQ_INT(log_offset_for_time(l, 0, &off, &ts), 0);
        CHECK_EQ_INT(off, 0);
        CHECK_EQ_INT(ts, 0);
        CHECK_EQ_INT(log_offset_for_time(l, 101, &off, &ts), 0); /* batch 11 (ts 110) */
        CHECK_EQ_INT(off, 22);
        CHECK_EQ_INT(ts, 110);
        CHECK_EQ_INT(log_offset_for_time(l, 250, &off, &ts), 0); /* batch 25 (ts 5000) */
        CHECK_EQ_INT(off, 50);
        CHECK_EQ_INT(ts, 5000);
        CHECK_EQ_INT(log_offset_for_time(l, 380, &off, &ts), 0); /* 25 comes first */
        CHECK_EQ_INT(off, 50);
        CHECK_EQ_INT(log_offset_for_time(l, 5001, &off, &ts), 0);
        CHECK_EQ_INT(off, -1);
        log_max_timestamp(l, &off, &ts);
        CHECK_EQ_INT(ts, 5000);
        CHECK_EQ_INT(off, 51);
        log_close(l, true);
        REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    }
    log_close(l, true);
    rm_dir(dir);
}

TEST(log_enospc_leaves_log_unchanged)
{
    char dir[64];
    struct log_config c;
    struct log *l;
    int64_t base;

    tmp_dir(dir);
    tio();
    small_cfg(&c);
    c.segment_bytes = 64 * 1024;
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    for (int i = 0; i < 10; i++)
        REQUIRE(append_i(l, i) == 0);
    int64_t sz = file_size(dir, 0, ".log"), isz = file_size(dir, 0, ".index");
    int next = 10, failures = 0;
    for (int64_t budget = 0; budget < 300; budget += 3) {
        /* Budgets below the batch size fail the .log write, the next ones the .timeindex
         * entry (every batch here is past index.interval.bytes; its .index entry waits in
         * memory for LOG_OIDX_PEND others or a flush). */
        int64_t leo = log_end_offset(l);
        pwrite_budget = budget;
        int rc = append_ts(l, 3, 1000 + next, 60, 0, &base);
        pwrite_budget = -1;
        if (rc != 0) {
            failures++;
            CHECK_EQ_INT(rc, ERR_IO);
            CHECK_EQ_INT(log_end_offset(l), leo);
            CHECK_EQ_INT(file_size(dir, 0, ".log"), sz);
            CHECK_EQ_INT(file_size(dir, 0, ".index"), isz);
        } else {
            CHECK_EQ_INT(base, 3 * next);
            CHECK(budget >= 265 + 12);
            next++;
            sz = file_size(dir, 0, ".log");
            isz = file_size(dir, 0, ".index");
        }
    }
    CHECK(failures >= 90);
    CHECK(next > 10);
    pwrite_budget = -1;
    short_writes = true; /* short writes are retried, not errors */
    for (; next < 20; next++)
        REQUIRE(append_i(l, next) == 0);
    short_writes = false;
    CHECK_EQ_INT(log_end_offset(l), 60);
    CHECK_EQ_INT(read_all_check(l, 0, 1 << 20), 20);
    log_close(l, true);
    REQUIRE((l = open_log(dir, &c, 0, false)) != NULL);
    CHECK_EQ_INT(log_end_offset(l), 60);
    CHECK_EQ_INT(read_all_check(l, 0, 1), 20);
    log_close(l, true);
    rm_dir(dir);
}

/* The .index entries of an append wait in memory (at most LOG_OIDX_PEND), so a large batch is
 * one write: lookups see them at once, a flush writes them before it syncs, and a crash that
 * loses them leaves a sparser index the open rescans past. */
#define OIDX_PEND 32 /* LOG_OIDX_PEND (log_int.h): .index entries held before a write */
TEST(log_index_entries_gathered_until_flush)
{
    char dir[64];
    struct log_config c;
    struct log *l;
    int64_t upto;
    const int64_t E = 8; /* an .index entry (index.c) */

    /* Batches of 3 records, each longer than index.interval.bytes: batch k > 0 of the segment
     * has entry k - 1 (the first one starts the segment and needs none). */
    tmp_dir(dir);
    tio();
    small_cfg(&c);
    c.segment_bytes = 1024 * 1024;
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    for (int i = 0; i < 5; i++)
        REQUIRE(append_i(l, i) == 0);
    CHECK_EQ_INT(file_size(dir, 0, ".index"), 0); /* 4 entries, all pending, */
    CHECK_EQ_INT(read_all_check(l, 0, 1), 5);     /* found through them */
    REQUIRE(log_flush_prepare(l, &upto) == 0);    /* a flush writes them before its sync */
    CHECK_EQ_INT(file_size(dir, 0, ".index"), 4 * E);
    CHECK_EQ_INT(log_flush_run(l, upto), 0);
    log_flush_done(l, upto);

    /* A full buffer is written by itself: entries 4 .. 4 + PEND - 1 with batch 4 + PEND. */
    for (int i = 5; i <= 4 + OIDX_PEND; i++)
        REQUIRE(append_i(l, i) == 0);
    CHECK_EQ_INT(file_size(dir, 0, ".index"), (4 + OIDX_PEND) * E);
    for (int i = 5 + OIDX_PEND; i < 14 + OIDX_PEND; i++) /* 9 entries pending */
        REQUIRE(append_i(l, i) == 0);
    int keep = 10 + OIDX_PEND; /* batches kept: entries 0 .. keep - 2, 5 of them pending */
    CHECK_EQ_INT(log_truncate_to(l, 3 * keep), 0);
    CHECK_EQ_INT(file_size(dir, 0, ".index"), (4 + OIDX_PEND) * E);
    CHECK_EQ_INT(read_all_check(l, 0, 1), keep);
    CHECK_EQ_INT(read_all_check(l, 3 * (keep - 3), 1), 3);
    log_close(l, false); /* a crash: the pending entries are lost, */
    CHECK_EQ_INT(file_size(dir, 0, ".index"), (4 + OIDX_PEND) * E);

    REQUIRE((l = open_log(dir, &c, 0, false)) != NULL); /* not a batch */
    CHECK_EQ_INT(log_end_offset(l), 3 * keep);
    CHECK_EQ_INT(read_all_check(l, 0, 1), keep);
    CHECK_EQ_INT(log_truncate_to(l, 3 * 20), 0); /* below the written entries: the file is cut */
    CHECK_EQ_INT(file_size(dir, 0, ".index"), 19 * E);
    CHECK_EQ_INT(read_all_check(l, 0, 1), 20);
    log_close(l, true);
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    CHECK_EQ_INT(log_end_offset(l), 60);
    CHECK_EQ_INT(read_all_check(l, 0, 1), 20);
    log_close(l, true);
    rm_dir(dir);
}

TEST(log_enospc_on_roll)
{
    char dir[64];
    struct log_config c;
    struct log *l;
    int64_t base;

    tmp_dir(dir);
    tio();
    small_cfg(&c);
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    int i = 0;
    while (count_files(dir, ".log") == 1)
        REQUIRE(append_i(l, i++) == 0);
    int64_t leo = log_end_offset(l);
    /* Fill the second segment to the brim, then fail the roll's final time index entry. */
    int n = count_files(dir, ".log");
    pwrite_budget = 0;
    for (int k = 0; k < 10; k++)
        if (append_ts(l, 3, 1000 + i, 60, 0, &base) != 0)
            break;
    CHECK_EQ_INT(log_end_offset(l), leo);
    pwrite_budget = -1;
    CHECK(count_files(dir, ".log") >= n);
    while (log_end_offset(l) < 300)
        REQUIRE(append_i(l, i++) == 0);
    CHECK_EQ_INT(read_all_check(l, 0, 1 << 20), 100);
    log_close(l, true);
    rm_dir(dir);
}

TEST(log_fsync_failure_fails_the_log)
{
    char dir[64];
    struct log_config c;
    struct log *l;
    int64_t upto, base;

    tmp_dir(dir);
    tio();
    small_cfg(&c);
    c.flush_messages = 5;
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    CHECK(!log_flush_due(l) || log_end_offset(l) == 0);
    REQUIRE(append_i(l, 0) == 0);
    CHECK(!log_flush_due(l));
    REQUIRE(append_i(l, 1) == 0);
    CHECK(log_flush_due(l));
    REQUIRE(log_flush_prepare(l, &upto) == 0);
    CHECK_EQ_INT(upto, 6);
    CHECK_EQ_INT(log_flush_prepare(l, &upto), ERR_EXISTS); /* one at a time */
    REQUIRE(append_i(l, 2) == 0);                          /* the loop keeps appending meanwhile */
    CHECK_EQ_INT(log_flush_run(l, 6), 0);
    CHECK(fsync_calls >= 3);
    log_flush_done(l, 6);
    CHECK_EQ_INT(log_flushed_offset(l), 6);

    fail_fsync = true;
    REQUIRE(log_flush_prepare(l, &upto) == 0);
    CHECK_EQ_INT(log_flush_run(l, upto), ERR_IO);
    log_flush_done(l, upto);
    CHECK_EQ_INT(log_flushed_offset(l), 6);
    CHECK_EQ_INT(append_ts(l, 3, 1003, 60, 0, &base), ERR_KAFKA_STORAGE_ERROR);
    CHECK_EQ_INT(log_end_offset(l), 9);
    fail_fsync = false;
    log_close(l, true);
    rm_dir(dir);
}

TEST(log_flush_ms_and_segment_ms)
{
    char dir[64];
    struct log_config c;
    struct log *l;
    int64_t upto;

    tmp_dir(dir);
    tio();
    small_cfg(&c);
    c.segment_bytes = 64 * 1024;
    c.segment_ms = 60000;
    c.flush_ms = 1000;
    tclock_set_wall(test_clock, 1000000);
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    REQUIRE(append_i(l, 0) == 0);
    CHECK(!log_flush_due(l));
    tclock_advance(test_clock, 1000);
    CHECK(log_flush_due(l));
    REQUIRE(log_flush_prepare(l, &upto) == 0);
    REQUIRE(log_flush_run(l, upto) == 0);
    log_flush_done(l, upto);
    CHECK(!log_flush_due(l));
    REQUIRE(append_i(l, 1) == 0);
    CHECK_EQ_INT(count_files(dir, ".log"), 1);
    tclock_advance(test_clock, 60001); /* the segment is now older than segment.ms */
    REQUIRE(append_i(l, 2) == 0);
    CHECK_EQ_INT(count_files(dir, ".log"), 2);
    CHECK(file_size(dir, 6, ".log") > 0);
    CHECK_EQ_INT(read_all_check(l, 0, 1 << 20), 3);
    log_close(l, true);
    rm_dir(dir);
}

TEST(log_truncate_to)
{
    char dir[64];
    struct log_config c;
    struct log *l;
    int64_t base;

    tmp_dir(dir);
    tio();
    small_cfg(&c);
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    for (int i = 0; i < 40; i++)
        REQUIRE(append_i(l, i) == 0);
    int nseg = count_files(dir, ".log");
    CHECK_EQ_INT(log_truncate_to(l, 200), 0); /* past the end: nothing */
    CHECK_EQ_INT(log_end_offset(l), 120);
    CHECK_EQ_INT(log_truncate_to(l, 102), 0); /* mid-log, on a batch boundary (34 * 3) */
    CHECK_EQ_INT(log_end_offset(l), 102);
    CHECK_EQ_INT(log_truncate_to(l, 97), 0); /* mid-batch 96..98: the batch goes */
    CHECK_EQ_INT(log_end_offset(l), 96);
    CHECK_EQ_INT(read_all_check(l, 0, 1 << 20), 32);
    REQUIRE(append_ts(l, 3, 1032, 60, 0, &base) == 0);
    CHECK_EQ_INT(base, 96);
    /* Cut at a segment's base: that segment goes whole. */
    int64_t lb = last_base(dir, 99);
    REQUIRE(lb > 0);
    CHECK_EQ_INT(log_truncate_to(l, lb), 0);
    CHECK_EQ_INT(log_end_offset(l), lb);
    CHECK_EQ_INT(file_size(dir, lb, ".log"), -1);
    CHECK(count_files(dir, ".log") < nseg);
    for (int i = (int)lb / 3; i < 40; i++)
        REQUIRE(append_i(l, i) == 0);
    CHECK_EQ_INT(read_all_check(l, 0, 1 << 20), 40);
    log_close(l, true);
    REQUIRE((l = open_log(dir, &c, 0, false)) != NULL);
    CHECK_EQ_INT(log_end_offset(l), 120);
    CHECK_EQ_INT(read_all_check(l, 0, 1 << 20), 40);
    /* Below the start: everything goes; the log restarts there. */
    CHECK_EQ_INT(log_delete_records(l, 30), 0);
    CHECK_EQ_INT(log_truncate_to(l, 9), 0);
    CHECK_EQ_INT(log_end_offset(l), 9);
    CHECK_EQ_INT(log_start_offset(l), 9);
    CHECK_EQ_INT(count_files(dir, ".log"), 1);
    REQUIRE(append_ts(l, 3, 1003, 60, 0, &base) == 0);
    CHECK_EQ_INT(base, 9);
    CHECK_EQ_INT(read_all_check(l, 9, 1 << 20), 1);
    log_close(l, true);
    rm_dir(dir);
}

TEST(log_leader_epochs)
{
    char dir[64], p[512];
    struct log_config c;
    struct log *l;
    int64_t base, end;
    int32_t ep;

    tmp_dir(dir);
    tio();
    small_cfg(&c);
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    CHECK_EQ_INT(log_latest_epoch(l), -1);
    log_epoch_end_offset(l, 0, &ep, &end);
    CHECK_EQ_INT(ep, -1);
    CHECK_EQ_INT(end, -1);
    for (int i = 0; i < 10; i++)
        REQUIRE(append_ts(l, 3, 1000 + i, 60, i < 4 ? 1 : 3, &base) == 0); /* 1@0, 3@12 */
    CHECK_EQ_INT(log_latest_epoch(l), 3);
    CHECK_EQ_INT(log_epoch_assign(l, 2, 30), 0); /* not newer: ignored */
    CHECK_EQ_INT(log_epoch_assign(l, 5, 30), 0);
    CHECK_EQ_INT(log_latest_epoch(l), 5);
    log_close(l, true);

    snprintf(p, sizeof p, "%s/leader-epoch-checkpoint", dir);
    FILE *f = fopen(p, "r");
    REQUIRE(f != NULL);
    char text[128] = {0};
    CHECK(fread(text, 1, sizeof text - 1, f) > 0);
    fclose(f);
    CHECK_EQ_STR(text, "0\n3\n1 0\n3 12\n5 30\n");

    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    CHECK_EQ_INT(log_latest_epoch(l), 5);
    log_epoch_end_offset(l, 5, &ep, &end);
    CHECK_EQ_INT(ep, 5);
    CHECK_EQ_INT(end, 30);
    log_epoch_end_offset(l, 3, &ep, &end);
    CHECK_EQ_INT(ep, 3);
    CHECK_EQ_INT(end, 30);
    log_epoch_end_offset(l, 2, &ep, &end); /* unknown 2: the largest below is 1 */
    CHECK_EQ_INT(ep, 1);
    CHECK_EQ_INT(end, 12);
    log_epoch_end_offset(l, 0, &ep, &end); /* older than everything */
    CHECK_EQ_INT(ep, 0);
    CHECK_EQ_INT(end, 0);
    log_epoch_end_offset(l, 9, &ep, &end);
    CHECK_EQ_INT(ep, -1);
    CHECK_EQ_INT(end, -1);
    /* Truncation drops epochs that start at or after the cut. */
    CHECK_EQ_INT(log_truncate_to(l, 12), 0);
    CHECK_EQ_INT(log_latest_epoch(l), 1);
    log_epoch_end_offset(l, 1, &ep, &end);
    CHECK_EQ_INT(end, 12);
    /* DeleteRecords moves the first epoch's start. */
    CHECK_EQ_INT(log_delete_records(l, 6), 0);
    log_close(l, true);
    f = fopen(p, "r");
    REQUIRE(f != NULL);
    memset(text, 0, sizeof text);
    CHECK(fread(text, 1, sizeof text - 1, f) > 0);
    fclose(f);
    CHECK_EQ_STR(text, "0\n1\n1 6\n");
    rm_dir(dir);
}

/* The epochs of 1@0, 3@12, 4@30 (latest) as the cache answers them; 0 when they are. */
static int epochs_are_1_3_4(const struct log *l)
{
    int32_t ep;
    int64_t end;
    if (log_latest_epoch(l) != 4)
        return 1;
    log_epoch_end_offset(l, 1, &ep, &end);
    if (ep != 1 || end != 12)
        return 2;
    log_epoch_end_offset(l, 3, &ep, &end);
    if (ep != 3 || end != 30)
        return 3;
    log_epoch_end_offset(l, 2, &ep, &end);
    return ep == 1 && end == 12 ? 0 : 4;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    REQUIRE(f != NULL);
    fputs(text, f);
    fclose(f);
}

/* A broker killed before its first leader-epoch-checkpoint write (or with a file older than
 * its log) must still know which epoch wrote which batches, or it fetches as a follower with
 * no LastFetchedEpoch and a shorter leader cannot tell that its log diverges (issue 16): the
 * open rebuilds the cache from the batches' epochs, rescanned or not. */
TEST(log_recovery_rebuilds_epochs_from_batches)
{
    char dir[64], p[512];
    struct log_config c;
    struct log *l;
    int64_t base;

    tmp_dir(dir);
    tio();
    small_cfg(&c);
    snprintf(p, sizeof p, "%s/leader-epoch-checkpoint", dir);
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    for (int i = 0; i < 15; i++) /* 3 records each: 1@0, 3@12, 4@30, over several segments */
        REQUIRE(append_ts(l, 3, 1000 + i, 200, i < 4 ? 1 : i < 10 ? 3 : 4, &base) == 0);
    REQUIRE(count_files(dir, ".log") > 2);
    CHECK_EQ_INT(epochs_are_1_3_4(l), 0);
    log_close(l, false); /* killed: the cache was never written */
    REQUIRE(access(p, F_OK) != 0);

    /* Unclean, everything past the recovery point 0: the rescan rebuilds it (Kafka's rule). */
    REQUIRE((l = open_log(dir, &c, 0, false)) != NULL);
    CHECK_EQ_INT(epochs_are_1_3_4(l), 0);
    log_close(l, true);
    CHECK(access(p, F_OK) == 0); /* the rebuilt cache is written like any change */

    /* Unclean with the file gone and a recovery point in the last segment: the segments
     * below it are not rescanned but their headers still give their epochs. */
    REQUIRE(unlink(p) == 0);
    REQUIRE((l = open_log(dir, &c, 40, false)) != NULL);
    CHECK_EQ_INT(epochs_are_1_3_4(l), 0);
    log_close(l, false);

    /* Clean, the file missing. */
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    CHECK_EQ_INT(epochs_are_1_3_4(l), 0);
    log_close(l, false);

    /* Clean, the file behind the log (written before epochs 3 and 4 began). */
    write_text(p, "0\n1\n1 0\n");
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    CHECK_EQ_INT(epochs_are_1_3_4(l), 0);
    log_close(l, false);

    /* Clean, a file that covers the log is taken as it is (a long-lived leader's log is not
     * walked at every open): a made-up start for epoch 3 stays. */
    write_text(p, "0\n3\n1 0\n3 15\n4 30\n");
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    int32_t ep;
    int64_t end;
    log_epoch_end_offset(l, 1, &ep, &end);
    CHECK_EQ_INT(end, 15);
    log_close(l, false);
    rm_dir(dir);
}

/* Changing the epoch cache writes nothing (the event loop must not wait for a disk): the
 * owner takes the new contents once and writes them where blocking is allowed. */
TEST(log_epochs_taken_then_written_off_the_loop)
{
    char dir[64], p[512], text[128] = {0};
    struct log_config c;
    struct log *l;
    char *buf;
    size_t len;
    FILE *f;

    tmp_dir(dir);
    tio();
    small_cfg(&c);
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    snprintf(p, sizeof p, "%s/leader-epoch-checkpoint", dir);
    CHECK_EQ_INT(log_epochs_take(l, &buf, &len), 0);
    CHECK(buf == NULL); /* nothing changed yet */
    CHECK_EQ_INT(log_epoch_assign(l, 4, 0), 0);
    CHECK(access(p, F_OK) != 0); /* not written by the change */
    REQUIRE(log_epochs_take(l, &buf, &len) == 0);
    REQUIRE(buf != NULL);
    CHECK_EQ_INT(len, strlen("0\n1\n4 0\n"));
    CHECK(memcmp(buf, "0\n1\n4 0\n", len) == 0);
    {
        char *again;
        size_t n2;
        CHECK_EQ_INT(log_epochs_take(l, &again, &n2), 0);
        CHECK(again == NULL); /* taken: clean until the next change */
    }
    CHECK_EQ_INT(log_epoch_assign(l, 6, 0), 0); /* changes while the write is "in flight" */
    CHECK_EQ_INT(log_epochs_write(sysio_default(), log_dir(l), buf, len), 0);
    free(buf);
    f = fopen(p, "r");
    REQUIRE(f != NULL);
    CHECK(fread(text, 1, sizeof text - 1, f) > 0);
    fclose(f);
    CHECK_EQ_STR(text, "0\n1\n4 0\n");
    /* The newer change is still pending, and a clean close writes it. */
    log_close(l, true);
    memset(text, 0, sizeof text);
    f = fopen(p, "r");
    REQUIRE(f != NULL);
    CHECK(fread(text, 1, sizeof text - 1, f) > 0);
    fclose(f);
    CHECK_EQ_STR(text, "0\n1\n6 0\n");
    rm_dir(dir);
}

TEST(log_checkpoint_file_round_trip)
{
    char dir[64], p[512];
    struct log_checkpoint_entry in[3] = {
        {"orders", 0, 42}, {"orders", 5, 0}, {"__consumer_offsets", 49, 123456789012LL}};
    struct log_checkpoint_entry *out;
    size_t n;

    tmp_dir(dir);
    tio();
    snprintf(p, sizeof p, "%s/recovery-point-offset-checkpoint", dir);
    CHECK_EQ_INT(log_checkpoint_read(&test_sys, p, &out, &n), 0); /* missing: empty */
    CHECK_EQ_INT(n, 0);
    REQUIRE(log_checkpoint_write(&test_sys, p, in, 3) == 0);
    REQUIRE(log_checkpoint_read(&test_sys, p, &out, &n) == 0);
    REQUIRE(n == 3);
    for (int i = 0; i < 3; i++) {
        CHECK(strcmp(out[i].topic, in[i].topic) == 0);
        CHECK_EQ_INT(out[i].partition, in[i].partition);
        CHECK_EQ_INT(out[i].offset, in[i].offset);
    }
    free(out);
    FILE *f = fopen(p, "r");
    REQUIRE(f != NULL);
    char text[256] = {0};
    CHECK(fread(text, 1, sizeof text - 1, f) > 0);
    fclose(f);
    CHECK_EQ_STR(text, "0\n3\norders 0 42\norders 5 0\n__consumer_offsets 49 123456789012\n");
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp", p);
    CHECK(access(tmp, F_OK) != 0);
    REQUIRE(log_checkpoint_write(&test_sys, p, NULL, 0) == 0);
    REQUIRE(log_checkpoint_read(&test_sys, p, &out, &n) == 0);
    CHECK_EQ_INT(n, 0);
    free(out);

    static const char *bad[] = {"",
                                "1\n0\n",
                                "0\n2\norders 0 1\n",
                                "0\n1\norders 0\n",
                                "0\n1\norders x 1\n",
                                "0\n1\norders 0 1\nextra 0 1\n",
                                "0\n1\norders 0 1",
                                "0\n-1\n"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        f = fopen(p, "w");
        REQUIRE(f != NULL);
        fputs(bad[i], f);
        fclose(f);
        out = NULL;
        CHECK_EQ_INT(log_checkpoint_read(&test_sys, p, &out, &n), ERR_PARSE);
        CHECK(out == NULL);
    }
    fail_fsync = true;
    CHECK_EQ_INT(log_checkpoint_write(&test_sys, p, in, 3), ERR_IO);
    fail_fsync = false;
    CHECK(access(tmp, F_OK) != 0);
    rm_dir(dir);
}

/* The clean-up after a failed fsync closes and unlinks, which may change errno (as these
 * do): the line must still name the fsync's own reason (base/err.h). */
static int t_close_clobber(int fd)
{
    int rc = close(fd);
    errno = EBADF;
    return rc;
}

static int t_unlink_clobber(const char *path)
{
    int rc = unlink(path);
    errno = EPERM;
    return rc;
}

TEST(log_checkpoint_write_logs_the_errno_of_the_failed_call)
{
    char dir[64], p[512], out[4096];
    struct log_checkpoint_entry in[1] = {{"orders", 0, 42}};
    FILE *cap = tmpfile();
    int saved = dup(STDERR_FILENO);
    size_t n;

    REQUIRE(cap != NULL && saved >= 0);
    tmp_dir(dir);
    tio();
    test_sys.close = t_close_clobber;
    test_sys.unlink = t_unlink_clobber;
    snprintf(p, sizeof p, "%s/log-start-offset-checkpoint", dir);
    slog_set_level(SLOG_INFO);
    fail_fsync = true;
    fflush(stderr);
    dup2(fileno(cap), STDERR_FILENO);
    CHECK_EQ_INT(log_checkpoint_write(&test_sys, p, in, 1), ERR_IO);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    fail_fsync = false;
    rewind(cap);
    n = fread(out, 1, sizeof out - 1, cap);
    out[n] = '\0';
    fclose(cap);
    CHECK(strstr(out, "fsync of") != NULL);
    CHECK(strstr(out, strerror(EIO)) != NULL);
    CHECK(strstr(out, strerror(EBADF)) == NULL);
    CHECK(strstr(out, strerror(EPERM)) == NULL);
    rm_dir(dir);
}

TEST(log_slice_survives_segment_deletion)
{
    char dir[64];
    struct log_config c;
    struct log *l;
    struct log_slice s;

    tmp_dir(dir);
    tio();
    small_cfg(&c);
    c.retention_bytes = 0;
    c.retention_ms = -1;
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    for (int i = 0; i < 30; i++)
        REQUIRE(append_i(l, i) == 0);
    REQUIRE(log_read(l, 0, INT64_MAX, 1 << 20, &s) == 0);
    REQUIRE(s.len > 0);
    CHECK(log_retain(l) > 0);
    CHECK_EQ_INT(file_size(dir, 0, ".log"), -1);
    uint8_t *buf = malloc(s.len);
    REQUIRE(pread(s.fd, buf, s.len, s.pos) == (ssize_t)s.len);
    struct record_batch b;
    CHECK_EQ_INT(record_batch_validate(buf, s.len, &b), 0);
    CHECK_EQ_INT(b.base_offset, 0);
    free(buf);
    /* Even after the log is closed, the slice's segment lives until released. */
    log_close(l, true);
    CHECK(fcntl(s.fd, F_GETFD) >= 0);
    log_slice_release(NULL, &s);
    rm_dir(dir);
}

TEST(log_open_fresh_and_reopen_empty)
{
    char dir[64], sub[128];
    struct log_config c;
    struct log *l;

    tmp_dir(dir);
    tio();
    small_cfg(&c);
    snprintf(sub, sizeof sub, "%s/orders-0", dir);
    REQUIRE((l = open_log(sub, &c, 0, true)) != NULL);
    CHECK_EQ_INT(file_size(sub, 0, ".log"), 0);
    CHECK_EQ_INT(file_size(sub, 0, ".txnindex"), 0);
    log_close(l, true);
    REQUIRE((l = open_log(sub, &c, 0, false)) != NULL);
    CHECK_EQ_INT(log_end_offset(l), 0);
    CHECK_EQ_INT(log_start_offset(l), 0);
    log_close(l, false);
    log_close(NULL, true);
    rm_dir(dir);
}

TEST(log_clean_open_reads_no_batches)
{
    char dir[64];
    struct log_config c;
    struct log *l;

    tmp_dir(dir);
    tio();
    small_cfg(&c);
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    for (int i = 0; i < 200; i++)
        REQUIRE(append_i(l, i) == 0);
    log_close(l, true);
    long nseg = count_files(dir, ".log");
    REQUIRE(nseg > 20);

    pread_calls = 0;
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    /* O(segments): a handful of small reads per segment, whatever they hold. */
    CHECK(pread_calls <= 6 * nseg + 10);
    if (getenv("TEST_LOG_VERBOSE"))
        printf("clean open: %ld segments, %ld preads\n", nseg, pread_calls);
    CHECK_EQ_INT(log_end_offset(l), 600);
    log_close(l, false);

    /* Unclean, recovery point in the last segment: only that one is rescanned. */
    int64_t lb = last_base(dir, 600);
    pread_calls = 0;
    REQUIRE((l = open_log(dir, &c, lb, false)) != NULL);
    CHECK(pread_calls <= 6 * nseg + 2 * 8 + 10);
    CHECK_EQ_INT(log_end_offset(l), 600);
    log_close(l, false);

    /* Unclean from 0: every batch is read (header + whole batch). */
    pread_calls = 0;
    REQUIRE((l = open_log(dir, &c, 0, false)) != NULL);
    CHECK(pread_calls >= 2 * 200);
    CHECK_EQ_INT(log_end_offset(l), 600);
    CHECK_EQ_INT(read_all_check(l, 0, 1 << 20), 200);
    log_close(l, true);
    rm_dir(dir);
}

TEST(log_rolls_when_index_full)
{
    char dir[64];
    struct log_config c;
    struct log *l;

    tmp_dir(dir);
    tio();
    small_cfg(&c);
    c.segment_bytes = 1 << 20;
    c.index_interval_bytes = 0; /* an entry for every batch after the first */
    c.max_index_bytes = 24;     /* 3 .index entries, 2 .timeindex entries */
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    for (int i = 0; i < 12; i++)
        REQUIRE(append_i(l, i) == 0);
    /* Each segment: batch 1 (no entry), 2 and 3 (entries, the time index is then full). */
    CHECK_EQ_INT(count_files(dir, ".log"), 4);
    CHECK_EQ_INT(file_size(dir, 0, ".timeindex"), 24);
    CHECK_EQ_INT(file_size(dir, 9, ".log"), file_size(dir, 0, ".log"));
    CHECK_EQ_INT(read_all_check(l, 0, 1), 12);
    log_close(l, true);
    rm_dir(dir);
}

struct flush_job {
    struct log *l;
    int64_t upto;
    int rc;
};

static void *flush_thread(void *arg)
{
    struct flush_job *j = arg;
    j->rc = log_flush_run(j->l, j->upto);
    return NULL;
}

TEST(log_flush_on_a_thread_while_appending)
{
    char dir[64];
    struct log_config c;
    struct log *l;
    int i = 0;

    tmp_dir(dir);
    tio();
    small_cfg(&c);
    c.retention_bytes = 4096;
    c.retention_ms = -1;
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    for (int round = 0; round < 20; round++) {
        struct flush_job j = {.l = l};
        pthread_t t;
        for (int k = 0; k < 5; k++)
            REQUIRE(append_i(l, i++) == 0);
        REQUIRE(log_flush_prepare(l, &j.upto) == 0);
        REQUIRE(pthread_create(&t, NULL, flush_thread, &j) == 0);
        /* Meanwhile the loop appends, rolls and deletes segments under the flush. */
        for (int k = 0; k < 5; k++)
            REQUIRE(append_i(l, i++) == 0);
        log_retain(l);
        pthread_join(t, NULL);
        CHECK_EQ_INT(j.rc, 0);
        log_flush_done(l, j.upto);
        CHECK_EQ_INT(log_flushed_offset(l), j.upto);
    }
    CHECK_EQ_INT(log_end_offset(l), 600);
    CHECK_EQ_INT(read_all_check(l, log_start_offset(l), 1 << 20), (600 - log_start_offset(l)) / 3);
    log_close(l, true);
    rm_dir(dir);
}

TEST(log_clean_open_rebuild_keeps_later_segments)
{
    char dir[64], p[512];
    struct log_config c;
    struct log *l;
    struct log_slice s;

    tmp_dir(dir);
    tio();
    small_cfg(&c);
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    for (int i = 0; i < 30; i++)
        REQUIRE(append_i(l, i) == 0);
    log_close(l, true);
    int nseg = count_files(dir, ".log");
    /* Bit rot in batch 2 of segment 0 (offsets 3..5), found because its index is gone. */
    snprintf(p, sizeof p, "%s/%020d.log", dir, 0);
    int fd = open(p, O_RDWR);
    REQUIRE(fd >= 0);
    uint8_t x;
    REQUIRE(pread(fd, &x, 1, 400) == 1);
    x ^= 1;
    REQUIRE(pwrite(fd, &x, 1, 400) == 1);
    close(fd);
    snprintf(p, sizeof p, "%s/%020d.index", dir, 0);
    REQUIRE(unlink(p) == 0);

    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    CHECK_EQ_INT(log_end_offset(l), 90);
    CHECK_EQ_INT(count_files(dir, ".log"), nseg);
    CHECK_EQ_INT(file_size(dir, 0, ".log"), 265);
    /* A read in the gap gets the next batch that exists. */
    REQUIRE(log_read(l, 3, INT64_MAX, 1, &s) == 0);
    REQUIRE(s.len > 0);
    uint8_t hdr[8];
    REQUIRE(pread(s.fd, hdr, 8, s.pos) == 8);
    int64_t bo = 0;
    for (int k = 0; k < 8; k++)
        bo = bo << 8 | hdr[k];
    CHECK(bo > 5 && file_size(dir, bo, ".log") > 0);
    log_slice_release(l, &s);
    CHECK_EQ_INT(read_all_check(l, bo, 1 << 20), (90 - bo) / 3);
    log_close(l, true);
    rm_dir(dir);
}

/* ---- damaged batch headers (issue 7, defect 9) ---------------------------------------- */

/* Adds `bit` to the base offset of the batch at `pos` of segment `seg` (outside the CRC). */
static void flip_base_offset(const char *dir, int64_t seg, int64_t pos, int64_t bit)
{
    char p[512];
    uint8_t b[8];
    int64_t v = 0;
    snprintf(p, sizeof p, "%s/%020lld.log", dir, (long long)seg);
    int fd = open(p, O_RDWR);
    REQUIRE(fd >= 0);
    REQUIRE(pread(fd, b, 8, pos) == 8);
    for (int k = 0; k < 8; k++)
        v = v << 8 | b[k];
    v ^= bit;
    for (int k = 7; k >= 0; k--, v >>= 8)
        b[k] = (uint8_t)v;
    REQUIRE(pwrite(fd, b, 8, pos) == 8);
    close(fd);
}

/* Reads at every offset below the end: each read either fails or returns whole, CRC-valid
 * batches with contiguous offsets, the first holding the offset asked for (or, in a gap a
 * truncation left, starting a later segment of dir). Returns the number of reads refused,
 * or -1 if a batch that does not fit was served. */
static int reads_never_serve_misfits(struct log *l, const char *dir)
{
    int refused = 0;
    for (int64_t off = log_start_offset(l); off < log_end_offset(l); off++) {
        struct log_slice s;
        uint8_t *buf;
        size_t p = 0;
        int64_t expect = -1;
        if (log_read(l, off, INT64_MAX, 1 << 20, &s) != 0) {
            refused++;
            continue;
        }
        buf = malloc(s.len + 1);
        if (pread(s.fd, buf, s.len, s.pos) != (ssize_t)s.len) {
            free(buf);
            log_slice_release(l, &s);
            return -1;
        }
        while (p < s.len) {
            struct record_batch b;
            bool bad =
                record_batch_validate(buf + p, s.len - p, &b) != 0 ||
                (expect >= 0 && b.base_offset != expect) ||
                (expect < 0 && record_batch_last_offset(&b) < off) ||
                (expect < 0 && b.base_offset > off && file_size(dir, b.base_offset, ".log") < 0) ||
                record_batch_last_offset(&b) >= log_end_offset(l);
            if (bad) {
                free(buf);
                log_slice_release(l, &s);
                return -1;
            }
            expect = record_batch_last_offset(&b) + 1;
            p += record_batch_size(&b);
        }
        free(buf);
        log_slice_release(l, &s);
    }
    return refused;
}

TEST(log_flipped_base_offset_in_closed_segment_not_served)
{
    char dir[64];
    struct log_config c;
    struct log *l;
    struct log_slice s;

    tmp_dir(dir);
    tio();
    small_cfg(&c);
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    for (int i = 0; i < 30; i++)
        REQUIRE(append_i(l, i) == 0);
    log_close(l, true);
    /* Batch 1 of segment 0 (offsets 3..5, at position 265) now claims 16777219..: the index
     * has entries after it, so the cheap checks of a clean open do not look at it. */
    flip_base_offset(dir, 0, 265, 1 << 24);

    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    CHECK_EQ_INT(log_end_offset(l), 90);
    /* A read from 0 stops before the damaged batch; a read of it is refused. */
    REQUIRE(log_read(l, 0, INT64_MAX, 1 << 20, &s) == 0);
    CHECK_EQ_INT((int64_t)s.len, 265);
    log_slice_release(l, &s);
    CHECK_EQ_INT(log_read(l, 3, INT64_MAX, 1 << 20, &s), ERR_CORRUPT_MESSAGE);
    CHECK_EQ_INT(log_read(l, 5, INT64_MAX, 1 << 20, &s), ERR_CORRUPT_MESSAGE);
    CHECK_EQ_INT(reads_never_serve_misfits(l, dir), 3);
    /* The batches after it are still served (the index entry for offset 6 is trusted). */
    CHECK_EQ_INT(read_all_check(l, 6, 1 << 20), 28);
    log_close(l, true);
    rm_dir(dir);
}

/* ---- the background check (issue 18, items 7b and 7c) ------------------------------------ */

/* Runs the background check to its end on this thread, as replica/check.c does slice by slice
 * on the pool. Returns the number of slices. */
static int check_all(void)
{
    struct log_check *c;
    int n = 0;
    while (log_check_next(&c) == 0) {
        log_check_run(c);
        log_check_done(c);
        n++;
    }
    return n;
}

/* XORs byte `pos` of segment `seg`'s .log with `mask`. */
static void flip_byte(const char *dir, int64_t seg, int64_t pos, uint8_t mask)
{
    char p[512];
    uint8_t b;
    snprintf(p, sizeof p, "%s/%020lld.log", dir, (long long)seg);
    int fd = open(p, O_RDWR);
    REQUIRE(fd >= 0);
    REQUIRE(pread(fd, &b, 1, pos) == 1);
    b ^= mask;
    REQUIRE(pwrite(fd, &b, 1, pos) == 1);
    close(fd);
}

/* Reads at every offset from the log start to the end. Every read must succeed, not wait, and
 * serve only whole, CRC-valid batches that follow one another within the slice, end below the
 * log end and hold no offset of [lo, hi] (the damaged batch); the first batch must hold the
 * offset asked for — or, for an offset of [lo, hi], start right after hi. Returns how many
 * offsets were served as the first batch's records, or -1 (with the reason) on any breach. */
static int64_t reads_serve_intact_only(struct log *l, int64_t lo, int64_t hi)
{
    int64_t served = 0;
    for (int64_t off = log_start_offset(l); off < log_end_offset(l); off++) {
        struct log_slice s;
        uint8_t *buf;
        size_t p = 0;
        int64_t expect = -1;
        int rc = log_read(l, off, INT64_MAX, 1 << 20, &s);
        if (rc != 0 || s.pending || s.len == 0) {
            printf("    read at %lld: rc %d, pending %d, len %zu\n", (long long)off, rc, s.pending,
                   s.len);
            if (rc == 0)
                log_slice_release(l, &s);
            return -1;
        }
        buf = malloc(s.len);
        if (buf == NULL || pread(s.fd, buf, s.len, s.pos) != (ssize_t)s.len) {
            free(buf);
            log_slice_release(l, &s);
            return -1;
        }
        while (p < s.len) {
            struct record_batch b;
            const char *bad = NULL;
            if (record_batch_validate(buf + p, s.len - p, &b) != 0)
                bad = "a batch that does not validate (CRC) was served";
            else if (expect >= 0 && b.base_offset != expect)
                bad = "batches of a slice do not follow one another";
            else if (b.base_offset <= hi && record_batch_last_offset(&b) >= lo)
                bad = "the damaged batch was served";
            else if (expect < 0 && off >= lo && off <= hi && b.base_offset != hi + 1)
                bad = "a read in the damaged range does not resume right after it";
            else if (expect < 0 && (off < lo || off > hi) &&
                     (b.base_offset > off || record_batch_last_offset(&b) < off))
                bad = "the first batch does not hold the offset asked for";
            else if (record_batch_last_offset(&b) >= log_end_offset(l))
                bad = "a batch past the log end was served";
            if (bad != NULL) {
                printf("    read at %lld: %s\n", (long long)off, bad);
                free(buf);
                log_slice_release(l, &s);
                return -1;
            }
            if (expect < 0 && b.base_offset <= off)
                served++;
            expect = record_batch_last_offset(&b) + 1;
            p += record_batch_size(&b);
        }
        free(buf);
        log_slice_release(l, &s);
    }
    return served;
}

/* 30 batches of 3 records (about 265 bytes each, 7 to a 2048-byte segment), closed cleanly,
 * then opened again (clean). */
static struct log *thirty_batches_every(const char *dir, struct log_config *c,
                                        int32_t index_interval)
{
    struct log *l;
    small_cfg(c);
    c->index_interval_bytes = index_interval;
    l = open_log(dir, c, 0, true);
    if (l == NULL)
        return NULL;
    for (int i = 0; i < 30; i++)
        if (append_i(l, i) != 0)
            return NULL;
    log_close(l, true);
    return open_log(dir, c, 0, true);
}

static struct log *thirty_batches(const char *dir, struct log_config *c)
{
    return thirty_batches_every(dir, c, 256);
}

/* TALLY_TEST_FAULT=log:lose_unflushed_tail (test builds): an unclean open is cut back to the
 * recovery point, as a crash of the machine could leave the log, and the cut is on disk (an
 * open without the hook finds the shorter log). A clean open lost nothing and keeps all. */
TEST(log_lose_unflushed_tail_cuts_an_unclean_open_to_the_recovery_point)
{
    char dir[64];
    struct log_config c;
    struct log *l;

    tmp_dir(dir);
    tio();
    REQUIRE((l = thirty_batches(dir, &c)) != NULL); /* 30 batches of 3 records */
    log_close(l, false);
    setenv("TALLY_TEST_FAULT", "log:lose_unflushed_tail", 1);
    fault_init();
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    CHECK_EQ_INT(log_end_offset(l), 90);
    log_close(l, false);
    REQUIRE((l = open_log(dir, &c, 90, false)) != NULL); /* flushed to the end */
    CHECK_EQ_INT(log_end_offset(l), 90);
    log_close(l, false);
    REQUIRE((l = open_log(dir, &c, 45, false)) != NULL);
    CHECK_EQ_INT(log_end_offset(l), 45);
    CHECK_EQ_INT(log_flushed_offset(l), 45);
    CHECK_EQ_INT(read_all_check(l, 0, 1 << 20), 15);
    log_close(l, false);
    unsetenv("TALLY_TEST_FAULT");
    fault_init();
    REQUIRE((l = open_log(dir, &c, 0, false)) != NULL);
    CHECK_EQ_INT(log_end_offset(l), 45);
    CHECK_EQ_INT(read_all_check(l, 0, 1 << 20), 15);
    log_close(l, true);
    rm_dir(dir);
}

TEST(log_check_quarantines_a_flipped_header_after_a_clean_stop)
{
    char dir[64];
    struct log_config c;
    struct log *l;
    struct log_slice s;
    size_t damaged = 0;

    tmp_dir(dir);
    tio();
    REQUIRE((l = thirty_batches(dir, &c)) != NULL);
    log_close(l, true);
    int64_t sz = file_size(dir, 0, ".log");
    /* Batch 1 of sealed segment 0 (offsets 3..5, position 265) claims 16777219.. (its base
     * offset is outside the CRC); the index has entries after it. */
    flip_base_offset(dir, 0, 265, 1 << 24);

    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    log_check_start(l);
    /* Nothing of the trusted bytes is served before the check has passed it. */
    REQUIRE(log_read(l, 0, INT64_MAX, 1 << 20, &s) == 0);
    CHECK(s.pending && s.len == 0);
    CHECK(check_all() > 0);
    CHECK(!log_check_pending(l, &damaged));
    CHECK_EQ_INT(damaged, 1);
    /* Every other record is served, the damaged batch never; a read of its offsets resumes
     * at 6; appends go on and are read back. */
    CHECK_EQ_INT(reads_serve_intact_only(l, 3, 5), 87);
    int64_t base;
    REQUIRE(append_ts(l, 3, 1030, 60, 0, &base) == 0);
    CHECK_EQ_INT(base, 90);
    CHECK_EQ_INT(reads_serve_intact_only(l, 3, 5), 90);
    log_close(l, true);
    /* Nothing in the files changed: the next start finds the same damage. */
    CHECK_EQ_INT(file_size(dir, 0, ".log"), sz);
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    log_check_start(l);
    check_all();
    log_check_pending(l, &damaged);
    CHECK_EQ_INT(damaged, 1);
    CHECK_EQ_INT(reads_serve_intact_only(l, 3, 5), 90);
    log_close(l, true);
    rm_dir(dir);
}

TEST(log_check_quarantines_a_batch_whose_crc_fails)
{
    char dir[64];
    struct log_config c;
    struct log *l;

    /* With an index entry at every batch, and with none (every read walks from the start
     * of the segment over the quarantined range). */
    for (int sparse = 0; sparse < 2; sparse++) {
        size_t damaged = 0;
        tmp_dir(dir);
        tio();
        REQUIRE((l = thirty_batches_every(dir, &c, sparse ? 4096 : 256)) != NULL);
        log_close(l, true);
        /* A byte of batch 1's records: only its CRC tells. */
        flip_byte(dir, 0, 265 + 120, 0x04);

        REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
        log_check_start(l);
        CHECK(check_all() > 0);
        log_check_pending(l, &damaged);
        CHECK_EQ_INT(damaged, 1);
        CHECK_EQ_INT(reads_serve_intact_only(l, 3, 5), 87);
        log_close(l, true);
        rm_dir(dir);
    }
}

TEST(log_check_finds_intact_batches_again_after_a_damaged_length)
{
    char dir[64];
    struct log_config c;
    struct log *l;
    size_t damaged = 0;

    tmp_dir(dir);
    tio();
    REQUIRE((l = thirty_batches(dir, &c)) != NULL);
    log_close(l, true);
    /* Batch 1's length grows by 256: its end lands inside batch 2, so the walk cannot step
     * over it; the .index entry of batch 2 (offset 6, position 530) is where batches start
     * again. */
    flip_byte(dir, 0, 265 + 10, 0x01);

    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    log_check_start(l);
    CHECK(check_all() > 0);
    log_check_pending(l, &damaged);
    CHECK_EQ_INT(damaged, 1);
    CHECK_EQ_INT(reads_serve_intact_only(l, 3, 5), 87);
    log_close(l, true);
    rm_dir(dir);
}

TEST(log_check_quarantines_the_last_batch_of_a_sealed_segment)
{
    char dir[64];
    struct log_config c;
    struct log *l;
    size_t damaged = 0;

    tmp_dir(dir);
    tio();
    REQUIRE((l = thirty_batches(dir, &c)) != NULL);
    log_close(l, true);
    int64_t sz = file_size(dir, 0, ".log");
    int nseg = count_files(dir, ".log");
    REQUIRE(sz == 7 * 265 && file_size(dir, 21, ".log") > 0);
    /* The last batch of sealed segment 0 (offsets 18..20) moves back by 2 offsets: the cheap
     * check of the segment's tail at open sees it; the segment is not cut for it (the
     * batches before it are intact), the background check quarantines it. */
    flip_base_offset(dir, 0, sz - 265, 2);

    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    CHECK_EQ_INT(file_size(dir, 0, ".log"), sz);
    CHECK_EQ_INT(count_files(dir, ".log"), nseg);
    CHECK_EQ_INT(log_end_offset(l), 90);
    log_check_start(l);
    check_all();
    log_check_pending(l, &damaged);
    CHECK_EQ_INT(damaged, 1);
    CHECK_EQ_INT(reads_serve_intact_only(l, 18, 20), 87);
    log_close(l, true);
    rm_dir(dir);
}

TEST(log_check_below_the_recovery_point_after_a_crash)
{
    char dir[64];
    struct log_config c;
    struct log *l;
    size_t damaged = 0;

    tmp_dir(dir);
    tio();
    REQUIRE((l = thirty_batches(dir, &c)) != NULL);
    log_close(l, false); /* as a crash: no clean-shutdown marker */
    int64_t lb = last_base(dir, 90), sz = file_size(dir, lb, ".log");
    /* A CRC flip in segment 0, below the recovery point (not rescanned: checked in the
     * background), and one in the last batch, past it (rescanned: cut, as today). */
    flip_byte(dir, 0, 265 + 120, 0x04);
    flip_byte(dir, lb, sz - 10, 0x40);

    REQUIRE((l = open_log(dir, &c, lb, false)) != NULL);
    CHECK_EQ_INT(log_end_offset(l), 87);
    CHECK(file_size(dir, lb, ".log") < sz);
    log_check_start(l);
    check_all();
    log_check_pending(l, &damaged);
    CHECK_EQ_INT(damaged, 1);
    CHECK_EQ_INT(reads_serve_intact_only(l, 3, 5), 84);
    log_close(l, true);
    rm_dir(dir);
}

TEST(log_check_serves_first_the_segment_a_reader_waits_for)
{
    char dir[64], a[128], b[128];
    struct log_config c;
    struct log *la, *lb;
    struct log_slice s;
    size_t old = log_check_slice_bytes(200); /* one batch a slice */

    tmp_dir(dir);
    tio();
    snprintf(a, sizeof a, "%s/a", dir);
    snprintf(b, sizeof b, "%s/b", dir);
    REQUIRE((la = thirty_batches(a, &c)) != NULL);
    REQUIRE((lb = thirty_batches(b, &c)) != NULL);
    log_check_start(la); /* queued first */
    log_check_start(lb);
    /* A reader of b's last batch (in its active segment, 2 batches) waits; it asks for that
     * segment, which is checked before anything of a. */
    REQUIRE(log_read(lb, 87, INT64_MAX, 1 << 20, &s) == 0);
    CHECK(s.pending);
    for (int i = 0; i < 2; i++) {
        struct log_check *job;
        REQUIRE(log_check_next(&job) == 0);
        log_check_run(job);
        log_check_done(job);
    }
    REQUIRE(log_read(lb, 87, INT64_MAX, 1 << 20, &s) == 0);
    CHECK(!s.pending && s.len == 265);
    log_slice_release(lb, &s);
    /* a was not touched yet: its start still waits. */
    REQUIRE(log_read(la, 0, INT64_MAX, 1 << 20, &s) == 0);
    CHECK(s.pending);
    check_all();
    CHECK_EQ_INT(reads_serve_intact_only(la, -1, -1), 90);
    CHECK_EQ_INT(reads_serve_intact_only(lb, -1, -1), 90);
    log_close(la, true);
    log_close(lb, true);
    log_check_slice_bytes(old);
    rm_dir(dir);
}

TEST(log_check_result_read_before_a_truncation_is_dropped)
{
    char dir[64];
    struct log_config c;
    struct log *l;
    struct log_check *job;
    size_t damaged = 0;

    tmp_dir(dir);
    tio();
    small_cfg(&c);
    c.segment_bytes = 1 << 20; /* one segment */
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    for (int i = 0; i < 10; i++)
        REQUIRE(append_i(l, i) == 0);
    log_close(l, true);
    flip_byte(dir, 0, 8 * 265 + 120, 0x04); /* batch 8 (offsets 24..26): CRC */

    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    log_check_start(l);
    /* The slice reads the files (finding batch 8 damaged) while the loop truncates at offset
     * 15 and appends new batches over those bytes (a follower's truncation, say): what the
     * slice found describes bytes that are gone. */
    REQUIRE(log_check_next(&job) == 0);
    log_check_run(job);
    REQUIRE(log_truncate_to(l, 15) == 0);
    for (int i = 5; i < 12; i++)
        REQUIRE(append_i(l, i) == 0);
    log_check_done(job);
    check_all();
    log_check_pending(l, &damaged);
    CHECK_EQ_INT(damaged, 0);
    CHECK_EQ_INT(reads_serve_intact_only(l, -1, -1), 36);
    log_close(l, true);
    rm_dir(dir);
}

TEST(log_check_slice_outlives_its_log)
{
    char dir[64];
    struct log_config c;
    struct log *l;
    struct log_check *job;

    tmp_dir(dir);
    tio();
    REQUIRE((l = thirty_batches(dir, &c)) != NULL);
    flip_byte(dir, 0, 265 + 120, 0x04);
    log_close(l, true);
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    log_check_start(l);
    REQUIRE(log_check_next(&job) == 0);
    log_close(l, true); /* the partition was deleted, say, while the slice ran */
    log_check_run(job);
    log_check_done(job);
    CHECK(!log_check_queued());
    rm_dir(dir);
}

TEST(log_flipped_base_offset_in_active_segment_truncated_on_clean_open)
{
    char dir[64];
    struct log_config c;
    struct log *l;

    tmp_dir(dir);
    tio();
    small_cfg(&c);
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    for (int i = 0; i < 30; i++)
        REQUIRE(append_i(l, i) == 0);
    log_close(l, true);
    int64_t lb = last_base(dir, 90);
    int64_t sz = file_size(dir, lb, ".log");
    /* The last batch (offsets 87..89) claims 87 + 2^40: the log end must not jump there. */
    flip_base_offset(dir, lb, sz - 265, (int64_t)1 << 40);

    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    CHECK_EQ_INT(log_end_offset(l), 87);
    CHECK_EQ_INT(read_all_check(l, 0, 1 << 20), 29);
    int64_t base;
    REQUIRE(append_ts(l, 3, 1029, 60, 0, &base) == 0);
    CHECK_EQ_INT(base, 87);
    log_close(l, true);
    rm_dir(dir);
}

/* ---- descriptors (issue 7, defect 5) ---------------------------------------------------- */

static int open_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    while (readdir(d))
        n++;
    closedir(d);
    return n - 3; /* ".", ".." and the DIR's own descriptor */
}

TEST(log_descriptors_bounded_and_none_at_rest)
{
    char dir[64];
    struct log_config c;
    struct log *logs[20];
    size_t old_cap = log_fd_cache_limit(4);

    tmp_dir(dir);
    tio();
    small_cfg(&c);
    int before = open_fds();
    /* Twenty logs, opened fresh: nothing written, no descriptor held. */
    for (int k = 0; k < 20; k++) {
        char sub[128];
        snprintf(sub, sizeof sub, "%s/p-%d", dir, k);
        REQUIRE((logs[k] = open_log(sub, &c, 0, true)) != NULL);
    }
    CHECK_EQ_INT(open_fds(), before);
    for (int k = 1; k < 20; k++)
        log_close(logs[k], false);
    /* Reopened after a crash: empty logs have nothing to rescan and open nothing. */
    for (int k = 1; k < 20; k++) {
        char sub[128];
        snprintf(sub, sizeof sub, "%s/p-%d", dir, k);
        REQUIRE((logs[k] = open_log(sub, &c, 0, false)) != NULL);
    }
    CHECK_EQ_INT(open_fds(), before);
    for (int k = 1; k < 20; k++)
        log_close(logs[k], true);

    /* One log of ~40 segments, reopened clean: at rest it holds nothing; reading all of it
     * holds at most the cache's 4 sealed segments (3 files each) plus the active one. */
    for (int i = 0; i < 250; i++)
        REQUIRE(append_i(logs[0], i) == 0);
    log_close(logs[0], true);
    char sub[128];
    snprintf(sub, sizeof sub, "%s/p-0", dir);
    REQUIRE(count_files(sub, ".log") > 30);
    REQUIRE((logs[0] = open_log(sub, &c, 0, true)) != NULL);
    CHECK_EQ_INT(open_fds(), before);
    CHECK_EQ_INT(read_all_check(logs[0], 0, 1000), 250);
    CHECK(open_fds() <= before + 4 * 3 + 3);
    int64_t off, ts;
    REQUIRE(log_offset_for_time(logs[0], 1100, &off, &ts) == 0);
    CHECK_EQ_INT(off, 300);
    CHECK(open_fds() <= before + 4 * 3 + 3);
    log_close(logs[0], true);
    CHECK_EQ_INT(open_fds(), before);
    log_fd_cache_limit(old_cap);
    rm_dir(dir);
}

TEST(log_batch_iter_walks_a_slice)
{
    char dir[64];
    struct log_config c;
    struct log *l;
    struct log_slice sl;
    struct log_batch_iter it;
    struct record_batch h;
    int64_t base, expect = 0;
    uint8_t buf[1024];
    int n = 0, rc;

    tmp_dir(dir);
    tio();
    log_config_default(&c);
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    for (int i = 0; i < 5; i++)
        REQUIRE(append_ts(l, 3, 1000 + i, 60, 7, &base) == 0);
    REQUIRE(log_read(l, 0, log_end_offset(l), 1 << 20, &sl) == 0);

    /* Every batch, in order, with the offsets and epoch the log gave it; whole batches read
     * back byte for byte. */
    log_batch_iter_init(&it, log_get_io(l), &sl, sizeof buf);
    while ((rc = log_batch_iter_next(&it, &h)) == 0) {
        CHECK_EQ_INT(h.base_offset, expect);
        CHECK_EQ_INT(h.leader_epoch, 7);
        CHECK_EQ_INT(h.max_timestamp, 1000 + n);
        REQUIRE(record_batch_size(&h) <= sizeof buf);
        REQUIRE(log_batch_iter_read(&it, &h, buf) == 0);
        CHECK(record_batch_validate(buf, record_batch_size(&h), &h) == 0);
        expect = record_batch_last_offset(&h) + 1;
        n++;
    }
    CHECK_EQ_INT(rc, ERR_NOTFOUND);
    CHECK_EQ_INT(n, 5);
    CHECK_EQ_INT(expect, 15);

    /* Bounded: a batch larger than max_batch stops the walk. */
    log_batch_iter_init(&it, log_get_io(l), &sl, 64);
    CHECK_EQ_INT(log_batch_iter_next(&it, &h), ERR_MESSAGE_TOO_LARGE);

    /* A range that ends inside a batch: the whole batches before it, then an error, and
     * nothing past the range is read. */
    struct log_slice cut = sl;
    cut.len = sl.len - 1;
    log_batch_iter_init(&it, log_get_io(l), &cut, sizeof buf);
    n = 0;
    while ((rc = log_batch_iter_next(&it, &h)) == 0)
        n++;
    CHECK_EQ_INT(n, 4);
    CHECK_EQ_INT(rc, ERR_CORRUPT_MESSAGE);

    /* Reads go through the log's system calls. */
    long before = pread_calls;
    log_batch_iter_init(&it, log_get_io(l), &sl, sizeof buf);
    REQUIRE(log_batch_iter_next(&it, &h) == 0);
    CHECK(pread_calls > before);

    log_slice_release(l, &sl);
    log_close(l, true);
    rm_dir(dir);
}

/* ---- .txnindex (issue 10) ------------------------------------------------------------------ */

TEST(log_txnindex_written_read_truncated_and_retained)
{
    char dir[64];
    struct log_config c;
    struct log *l;
    struct log_aborted_txn *v;
    size_t n;

    tmp_dir(dir);
    tio();
    small_cfg(&c);
    c.retention_ms = -1;
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    for (int i = 0; i < 30; i++) /* 90 offsets over several ~2 KiB segments */
        REQUIRE(append_i(l, i) == 0);
    int64_t seg2 = -1;
    /* Entries in three places: two in the first segment, one later. */
    struct log_aborted_txn a = {7, 0, 5, 6}, b = {8, 3, 8, 9}, d = {9, 60, 75, 76};
    CHECK_EQ_INT(log_txn_append(l, &a), 0);
    CHECK_EQ_INT(log_txn_append(l, &b), 0);
    CHECK_EQ_INT(log_txn_append(l, &d), 0);
    CHECK_EQ_INT(log_txn_append(l, &(struct log_aborted_txn){1, 0, 90, 91}),
                 ERR_OFFSET_OUT_OF_RANGE);
    CHECK_EQ_INT(file_size(dir, 0, ".txnindex"), 68); /* Kafka's 34-byte entries */
    /* Overlap rule: last_offset >= from and first_offset < upto. */
    REQUIRE(log_txn_collect(l, 0, 90, &v, &n) == 0);
    CHECK_EQ_INT(n, 3);
    free(v);
    REQUIRE(log_txn_collect(l, 6, 60, &v, &n) == 0);
    CHECK_EQ_INT(n, 1);
    CHECK_EQ_INT(n ? v[0].producer_id : -1, 8);
    free(v);
    REQUIRE(log_txn_collect(l, 9, 61, &v, &n) == 0);
    CHECK_EQ_INT(n, 1);
    CHECK_EQ_INT(n ? v[0].producer_id : -1, 9);
    free(v);
    /* Read back after a reopen: the file is the truth. */
    log_close(l, true);
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    REQUIRE(log_txn_collect(l, 0, 90, &v, &n) == 0);
    CHECK_EQ_INT(n, 3);
    CHECK(n == 3 && v[2].producer_id == 9 && v[2].first_offset == 60 && v[2].last_offset == 75 &&
          v[2].last_stable_offset == 76);
    free(v);
    /* Truncating the log takes the entries whose marker went. */
    CHECK_EQ_INT(log_truncate_to(l, 70), 0);
    REQUIRE(log_txn_collect(l, 0, 90, &v, &n) == 0);
    CHECK_EQ_INT(n, 2);
    free(v);
    CHECK_EQ_INT(log_txn_truncate(l, 6), 0); /* replay from 6 rewrites what follows */
    REQUIRE(log_txn_collect(l, 0, 90, &v, &n) == 0);
    CHECK_EQ_INT(n, 1);
    free(v);
    CHECK_EQ_INT(file_size(dir, 0, ".txnindex"), 34);
    /* Retention: nothing past the bound goes; the first segment's .txnindex goes with it. */
    c.retention_bytes = 0;
    log_set_config(l, &c);
    CHECK_EQ_INT(log_retain_below(l, 1), 0);
    CHECK(file_size(dir, 0, ".txnindex") == 34);
    CHECK(log_retain_below(l, INT64_MAX) > 0);
    CHECK_EQ_INT(file_size(dir, 0, ".txnindex"), -1);
    REQUIRE(log_txn_collect(l, log_start_offset(l), 90, &v, &n) == 0);
    CHECK_EQ_INT(n, 0);
    free(v);
    (void)seg2;
    log_close(l, true);
    rm_dir(dir);
}

/* read_committed on the event loop (fetch.c): a .txnindex not in the page cache is named for
 * the pool to read, never read on the loop; once it is cached the entries load from it. */
TEST(log_txnindex_cold_is_named_for_the_pool_not_read)
{
    char dir[64], path[512], named[512];
    struct log_config c;
    struct log *l;
    struct log_aborted_txn *v;
    size_t n;
    uint8_t buf[512];

    tmp_dir(dir);
    tio();
    small_cfg(&c);
    c.retention_ms = -1;
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    for (int i = 0; i < 30; i++)
        REQUIRE(append_i(l, i) == 0);
    CHECK_EQ_INT(log_txn_append(l, &(struct log_aborted_txn){7, 0, 5, 6}), 0);
    log_close(l, true);
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL); /* entries not in memory now */
    snprintf(path, sizeof path, "%s/%020lld.txnindex", dir, 0LL);
    int fd = open(path, O_RDONLY);
    REQUIRE(fd >= 0);
    REQUIRE(harness_drop_cached(fd, 0));
    named[0] = '\0';
    CHECK_EQ_INT(log_txn_ready_nowait(l, 0, 90, named, sizeof named), ERR_WOULD_BLOCK);
    CHECK(strcmp(named, path) == 0);
    REQUIRE(pread(fd, buf, sizeof buf, 0) == 34); /* what the pool does */
    close(fd);
    CHECK_EQ_INT(log_txn_ready_nowait(l, 0, 90, named, sizeof named), 0);
    REQUIRE(log_txn_collect(l, 0, 90, &v, &n) == 0);
    CHECK_EQ_INT(n, 1);
    CHECK_EQ_INT(n ? v[0].producer_id : -1, 7);
    free(v);
    log_close(l, true);
    rm_dir(dir);
}

TEST(log_txnindex_truncated_by_unclean_recovery)
{
    char dir[64], path[600];
    struct log_config c;
    struct log *l;
    struct log_aborted_txn *v;
    size_t n;
    int fd;

    tmp_dir(dir);
    tio();
    log_config_default(&c);
    REQUIRE((l = open_log(dir, &c, 0, true)) != NULL);
    for (int i = 0; i < 4; i++)
        REQUIRE(append_i(l, i) == 0);
    CHECK_EQ_INT(log_txn_append(l, &(struct log_aborted_txn){3, 0, 6, 7}), 0);
    CHECK_EQ_INT(log_txn_append(l, &(struct log_aborted_txn){4, 1, 9, 10}), 0);
    log_close(l, false);
    /* Tear the last batch (offsets 9..11) away: its entry must go at the unclean open. */
    snprintf(path, sizeof path, "%s/%020d.log", dir, 0);
    fd = open(path, O_WRONLY);
    REQUIRE(fd >= 0);
    REQUIRE(ftruncate(fd, file_size(dir, 0, ".log") - 10) == 0);
    close(fd);
    REQUIRE((l = open_log(dir, &c, 0, false)) != NULL);
    CHECK_EQ_INT(log_end_offset(l), 9);
    REQUIRE(log_txn_collect(l, 0, 100, &v, &n) == 0);
    CHECK_EQ_INT(n, 1);
    CHECK_EQ_INT(n ? v[0].producer_id : -1, 3);
    free(v);
    log_close(l, true);
    rm_dir(dir);
}
