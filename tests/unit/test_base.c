/* SPDX-License-Identifier: Apache-2.0 */
/* base unit tests: the error list, log lines escape what a client could use to forge a line, a
 * rate limit holds back repeats and counts them, and properties files load and store through
 * the system-call table (failures injected). Lines are captured by pointing stderr at a
 * temporary file. */
#include "harness.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/err.h"
#include "base/fault.h"
#include "base/mem.h"
#include "base/jhash.h"
#include "base/props.h"
#include "base/slog.h"
#include "base/sysio.h"

/* Runs fn with stderr redirected; returns what it wrote (static buffer). */
static const char *capture(void (*fn)(void))
{
    static char out[8192];
    FILE *tmp = tmpfile();
    int saved = dup(STDERR_FILENO);
    size_t n;

    if (!tmp || saved < 0)
        return "";
    dup2(fileno(tmp), STDERR_FILENO);
    fn();
    dup2(saved, STDERR_FILENO);
    close(saved);
    rewind(tmp);
    n = fread(out, 1, sizeof out - 1, tmp);
    out[n] = '\0';
    fclose(tmp);
    return out;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static void forge_attempt(void)
{
    slog_warn("net", "client id %s", "evil\n2026-01-01T00:00:00.000Z ERROR [main] \x1b[31mforged");
}

TEST(log_line_escapes_control_bytes_from_clients)
{
    const char *out = capture(forge_attempt);
    CHECK_EQ_INT(count_lines(out), 1);
    CHECK(strstr(out, "evil\\x0a2026") != NULL);
    CHECK(strstr(out, "\\x1b[31mforged") != NULL);
    CHECK(strchr(out, 0x1b) == NULL);
}

TEST(log_escape_bounds_and_escapes_binary)
{
    char buf[16];
    CHECK_EQ_STR(slog_escape("ab\0c", 4, buf, sizeof buf), "ab\\x00c");
    CHECK_EQ_STR(slog_escape("0123456789abcdefghij", 20, buf, sizeof buf), "0123456789ab...");
    CHECK(strlen(slog_escape("\n\n\n\n\n\n", 6, buf, sizeof buf)) < sizeof buf);
}

static void repeated(void)
{
    struct slog_limit lim = {0};
    int written = 0;
    for (int i = 0; i < 1000; i++)
        written += slog_warn_limited(&lim, 60000, "net", "unsupported API %d", i);
    /* The window is a minute: only the first passes; the rest are counted. */
    CHECK_EQ_INT(written, 1);
    CHECK_EQ_INT(lim.suppressed, 999);
    lim.next_ms = 1; /* as if the window had passed */
    CHECK(slog_warn_limited(&lim, 60000, "net", "unsupported API again"));
    CHECK_EQ_INT(lim.suppressed, 0);
}

TEST(log_limit_counts_suppressed_repeats)
{
    const char *out = capture(repeated);
    CHECK_EQ_INT(count_lines(out), 2);
    CHECK(strstr(out, "(999 similar lines suppressed)") != NULL);
}

/* The enum and the names come from one X-macro list: every code has its own name, values
 * are distinct, and a code outside the list has none. */
TEST(err_list_names_every_code_once)
{
    static const struct {
        int value;
        const char *name;
    } all[] = {
#define ERR_ROW(name, value) {value, #name},
        ERR_LIST(ERR_ROW)
#undef ERR_ROW
    };
    size_t n = sizeof all / sizeof all[0];

    CHECK(n > 60);
    for (size_t i = 0; i < n; i++) {
        CHECK_EQ_STR(err_name(all[i].value), all[i].name);
        for (size_t j = i + 1; j < n; j++)
            CHECK(all[i].value != all[j].value);
    }
    CHECK_EQ_STR(err_name(ERR_UNKNOWN_TOPIC_OR_PARTITION), "UNKNOWN_TOPIC_OR_PARTITION");
    CHECK_EQ_INT(ERR_UNKNOWN_TOPIC_OR_PARTITION, 3);
    CHECK_EQ_INT(ERR_INCONSISTENT_TOPIC_ID, 103);
    CHECK_EQ_INT(ERR_IO, -1002);
    CHECK_EQ_STR(err_name(ERR_SHUTDOWN), "SHUTDOWN");
    CHECK_EQ_STR(err_name(12345), "UNKNOWN");
}

TEST(fault_points_armed_only_by_name_from_the_environment)
{
    setenv("TALLY_TEST_FAULT", "txn:after_prepare,txn:lose_entry", 1);
    fault_init();
    CHECK(fault_armed("txn:after_prepare"));
    CHECK(fault_armed("txn:lose_entry"));
    CHECK(!fault_armed("txn:after"));
    CHECK(!fault_armed("txn:before_prepare"));
    fault_point("txn:before_prepare"); /* not armed: returns */
    unsetenv("TALLY_TEST_FAULT");
    fault_init();
    CHECK(!fault_armed("txn:lose_entry"));
}

/* The in-process stop (unit tests) answers for its one name only, and never arms the
 * process-ending point of the same name. */
TEST(fault_stop_at_names_one_point)
{
    unsetenv("TALLY_TEST_FAULT");
    fault_init();
    CHECK(!fault_stop("cleaner:swap"));
    fault_stop_at("cleaner:swap");
    CHECK(fault_stop("cleaner:swap"));
    CHECK(!fault_stop("cleaner:swapin"));
    CHECK(!fault_armed("cleaner:swap"));
    fault_stop_at(NULL);
    CHECK(!fault_stop("cleaner:swap"));
}

TEST(java_partition_for_maps_int_min_to_zero)
{
    CHECK_EQ_INT(java_string_hash("polygenelubricants"), INT32_MIN);
    CHECK_EQ_INT(java_partition_for("polygenelubricants", 50), 0);
    CHECK_EQ_INT(java_partition_for("ab", 50), 3105 % 50);
    CHECK_EQ_INT(java_partition_for("x", 0), 0);
}

/* ---- props: server.properties and meta.properties through the system-call table ---------- */

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    if (d == NULL)
        return -1;
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

TEST(props_load_parses_lines_and_names_the_bad_one)
{
    char dir[] = "/tmp/tally_props_XXXXXX", path[128];
    struct props *p = props_new();
    FILE *f;
    int bad = 0;

    REQUIRE(p != NULL && mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/server.properties", dir);
    CHECK_EQ_INT(props_load(p, sysio_default(), path, &bad), ERR_NOTFOUND);
    REQUIRE((f = fopen(path, "w")) != NULL);
    fputs("# a comment\n! another\n\n  node.id = 3 \r\nlog.dirs: /data\nlast=no newline", f);
    fclose(f);
    CHECK_EQ_INT(props_load(p, sysio_default(), path, &bad), 0);
    CHECK_EQ_STR(props_get(p, "node.id"), "3");
    CHECK_EQ_STR(props_get(p, "log.dirs"), "/data");
    CHECK_EQ_STR(props_get(p, "last"), "no newline");
    CHECK_EQ_INT(props_count(p), 3);
    REQUIRE((f = fopen(path, "w")) != NULL);
    fputs("a=1\n\nnot a pair\nb=2\n", f);
    fclose(f);
    CHECK_EQ_INT(props_load(p, sysio_default(), path, &bad), ERR_PARSE);
    CHECK_EQ_INT(bad, 3);
    unlink(path);
    rmdir(dir);
    props_free(p);
}

/* A store that fails — disk full, a failed fsync, a failed rename — says which call failed and
 * why in one line, leaves meta.properties as it was (it still loads, with its old values) and
 * no temporary file beside it. */
static struct sysio props_sys;
static struct props *props_under_test;
static char props_path[128];
static int props_rc;

static ssize_t full_pwrite(int fd, const void *buf, size_t len, off_t off)
{
    (void)fd, (void)buf, (void)len, (void)off;
    errno = ENOSPC;
    return -1;
}

static int eio_fsync(int fd)
{
    (void)fd;
    errno = EIO;
    return -1;
}

static int eio_rename(const char *from, const char *to)
{
    (void)from, (void)to;
    errno = EIO;
    return -1;
}

static ssize_t eio_pread(int fd, void *buf, size_t len, off_t off)
{
    (void)fd, (void)buf, (void)len, (void)off;
    errno = EIO;
    return -1;
}

static void store_meta(void)
{
    props_rc = props_store(props_under_test, &props_sys, props_path, "written by tallyd");
}

static void load_meta(void)
{
    int bad = 0;
    props_rc = props_load(props_under_test, &props_sys, props_path, &bad);
}

TEST(props_store_failure_leaves_meta_properties_as_it_was)
{
    char dir[] = "/tmp/tally_props_XXXXXX";
    struct props *p = props_new(), *back = props_new();
    const char *out;
    int bad = 0;

    REQUIRE(p != NULL && back != NULL && mkdtemp(dir) != NULL);
    snprintf(props_path, sizeof props_path, "%s/meta.properties", dir);
    REQUIRE(props_set(p, "node.id", "1") == 0 && props_set(p, "cluster.id", "abc") == 0);
    REQUIRE(props_store(p, sysio_default(), props_path, "written by tallyd") == 0);
    REQUIRE(props_set(p, "directory.id", "xyz") == 0);
    props_under_test = p;

    props_sys = *sysio_default();
    props_sys.pwrite = full_pwrite;
    out = capture(store_meta);
    CHECK_EQ_INT(props_rc, ERR_IO);
    CHECK_EQ_INT(count_lines(out), 1);
    CHECK(strstr(out, "ERROR") != NULL && strstr(out, "write of") != NULL);
    CHECK(strstr(out, "meta.properties") != NULL && strstr(out, strerror(ENOSPC)) != NULL);

    props_sys = *sysio_default();
    props_sys.fsync = eio_fsync;
    out = capture(store_meta);
    CHECK_EQ_INT(props_rc, ERR_IO);
    CHECK_EQ_INT(count_lines(out), 1);
    CHECK(strstr(out, "fsync of") != NULL && strstr(out, strerror(EIO)) != NULL);

    props_sys = *sysio_default();
    props_sys.rename = eio_rename;
    out = capture(store_meta);
    CHECK_EQ_INT(props_rc, ERR_IO);
    CHECK_EQ_INT(count_lines(out), 1);
    CHECK(strstr(out, "rename of") != NULL && strstr(out, strerror(EIO)) != NULL);

    /* The file is the one stored first, whole, and alone in its directory. */
    CHECK_EQ_INT(count_entries(dir), 1);
    CHECK_EQ_INT(props_load(back, sysio_default(), props_path, &bad), 0);
    CHECK_EQ_STR(props_get(back, "node.id"), "1");
    CHECK_EQ_STR(props_get(back, "cluster.id"), "abc");
    CHECK(props_get(back, "directory.id") == NULL);

    /* A read that fails is ERR_IO, not a missing file (which would format the directory). */
    props_sys = *sysio_default();
    props_sys.pread = eio_pread;
    props_under_test = back;
    out = capture(load_meta);
    CHECK_EQ_INT(props_rc, ERR_IO);
    CHECK(strstr(out, "read of") != NULL && strstr(out, strerror(EIO)) != NULL);
    props_under_test = p;

    props_sys = *sysio_default();
    store_meta();
    CHECK_EQ_INT(props_rc, 0);
    CHECK_EQ_INT(count_entries(dir), 1);
    unlink(props_path);
    rmdir(dir);
    props_free(p);
    props_free(back);
}

/* The residency probe and the non-blocking read of the default table, on a real file: written
 * and flushed, then dropped from the page cache (posix_fadvise DONTNEED), the probe says cold
 * and a pread_nowait fails with EAGAIN (within a few tries); read once, both say it is there. */
TEST(sysio_resident_probe_tells_cold_pages_from_cached_ones)
{
    const struct sysio *io = sysio_default();
    char path[] = "/tmp/tally-sysio-XXXXXX";
    static uint8_t buf[256 << 10];
    int fd = mkstemp(path);

    REQUIRE(fd >= 0);
    memset(buf, 'r', sizeof buf);
    REQUIRE(sysio_pwrite_all(io, fd, buf, sizeof buf, 0) == 0);
    REQUIRE(fsync(fd) == 0);
    CHECK_EQ_INT(io->resident(fd, 0, sizeof buf), 1); /* just written */
    CHECK_EQ_INT(io->resident(fd, 0, 0), 1);
    REQUIRE(harness_drop_cached(fd, 0));
    CHECK_EQ_INT(io->resident(fd, 0, sizeof buf), 0);
    CHECK_EQ_INT(io->resident(fd, 100 << 10, 10), 0);
    /* RWF_NOWAIT starts readahead before it gives up, and on a fast disk that read can finish
     * first: then the nowait read returns the bytes. Either answer is right once; EAGAIN must
     * come in a few tries (a nowait read that is a plain pread never says it). */
    bool said_eagain = false;
    for (int i = 0; i < 10 && !said_eagain; i++) {
        REQUIRE(harness_drop_cached(fd, 0));
        memset(buf, 0, 4096);
        errno = 0;
        ssize_t got = io->pread_nowait(fd, buf, 4096, 0);
        said_eagain = got == -1 && errno == EAGAIN;
        if (!said_eagain)
            CHECK(got == 4096 && buf[0] == 'r' && buf[4095] == 'r');
    }
    CHECK(said_eagain);
    REQUIRE(sysio_pread_full(io, fd, buf, 8192, 0) == 8192);
    CHECK_EQ_INT(io->resident(fd, 0, 8192), 1);
    CHECK_EQ_INT(io->resident(fd, 4000, 4000), 1);
    CHECK_EQ_INT(io->pread_nowait(fd, buf, 4096, 4096), 4096);
    /* One byte on a page that is not there is enough to say cold (readahead may have brought
     * the next pages in: drop them again). */
    REQUIRE(harness_drop_cached(fd, 8192));
    CHECK_EQ_INT(io->resident(fd, 0, 8192), 1);
    CHECK_EQ_INT(io->resident(fd, 0, 8193), 0);
    close(fd);
    unlink(path);
}

/* mem_grow keeps what the buffer held (the first `keep` bytes) in a larger one. */
TEST(mem_grow_keeps_the_bytes_it_is_told_to)
{
    uint8_t *p = malloc(16);
    REQUIRE(p != NULL);
    for (int i = 0; i < 16; i++)
        p[i] = (uint8_t)(i + 1);
    uint8_t *q = mem_grow(p, 10, 1 << 20);
    REQUIRE(q != NULL);
    for (int i = 0; i < 10; i++)
        CHECK_EQ_INT(q[i], i + 1);
    q[(1 << 20) - 1] = 7; /* all of it is there */
    free(q);
    uint8_t *r = mem_grow(NULL, 0, 0);
    CHECK(r != NULL);
    free(r);
}

/* The pool's warm-up brings a cold range into the page cache and stops at the end of the file
 * (a range the loop found cold must be sendable from the cache once it returns), copying
 * nothing into the file. */
TEST(sysio_warm_brings_a_cold_range_into_the_page_cache)
{
    const struct sysio *io = sysio_default();
    char path[] = "/tmp/tally-sysio-XXXXXX";
    static uint8_t buf[256 << 10];
    int fd = mkstemp(path);

    REQUIRE(fd >= 0);
    memset(buf, 'w', sizeof buf);
    REQUIRE(sysio_pwrite_all(io, fd, buf, sizeof buf, 0) == 0);
    REQUIRE(fsync(fd) == 0);
    REQUIRE(harness_drop_cached(fd, 0));
    CHECK_EQ_INT(io->resident(fd, 0, sizeof buf), 0);
    CHECK_EQ_INT(sysio_warm_full(io, fd, 0, sizeof buf), (int64_t)sizeof buf);
    CHECK_EQ_INT(io->resident(fd, 0, sizeof buf), 1);
    /* From the middle, asking for more than is there: the bytes to the end, all cached. */
    REQUIRE(harness_drop_cached(fd, 0));
    CHECK_EQ_INT(io->resident(fd, 100 << 10, sizeof buf - (100 << 10)), 0);
    CHECK_EQ_INT(sysio_warm_full(io, fd, 100 << 10, 1 << 20), (int64_t)sizeof buf - (100 << 10));
    CHECK_EQ_INT(io->resident(fd, 100 << 10, sizeof buf - (100 << 10)), 1);
    CHECK_EQ_INT(sysio_warm_full(io, fd, sizeof buf, 4096), 0); /* at the end: nothing */
    CHECK_EQ_INT(sysio_warm_full(io, -EBADF, 0, 4096), -EBADF); /* a failed open passes */
    memset(buf, 0, sizeof buf);
    REQUIRE(sysio_pread_full(io, fd, buf, sizeof buf, 0) == (ssize_t)sizeof buf);
    CHECK(buf[0] == 'w' && buf[sizeof buf - 1] == 'w');
    close(fd);
    unlink(path);
}

/* tmpfs (here /dev/shm) has no RWF_NOWAIT: preadv2 says EOPNOTSUPP. The nowait read must still
 * read what is there (a cold-read check that took that for an I/O error left consumers of a
 * tmpfs log dir reading nothing, test_full_disk.py). */
TEST(sysio_pread_nowait_reads_where_the_file_system_has_no_rwf_nowait)
{
    const struct sysio *io = sysio_default();
    char path[] = "/dev/shm/tally-sysio-XXXXXX";
    uint8_t in[8192], out[8192];
    int fd = mkstemp(path);

    REQUIRE(fd >= 0);
    memset(in, 'n', sizeof in);
    REQUIRE(sysio_pwrite_all(io, fd, in, sizeof in, 0) == 0);
    struct iovec v = {out, sizeof out};
    errno = 0;
    CHECK(preadv2(fd, &v, 1, 0, RWF_NOWAIT) < 0 && errno == EOPNOTSUPP); /* the premise */
    CHECK_EQ_INT(io->pread_nowait(fd, out, sizeof out, 0), (int)sizeof out);
    CHECK(memcmp(in, out, sizeof out) == 0);
    CHECK_EQ_INT(io->pread_nowait(fd, out, 100, 8150), 42); /* to the end */
    close(fd);
    unlink(path);
}
