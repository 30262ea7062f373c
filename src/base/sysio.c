/* SPDX-License-Identifier: Apache-2.0 */
/* sysio: the default table of file-system calls and the helpers built on any table (whole
 * writes and reads, directory fsync, atomic replacement, whole-file reads). */
#include "sysio.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "err.h"
#include "slog.h"

/* Wrappers rather than the libc symbols themselves: some (stat, fstat on older C libraries)
 * are macros or inline functions whose address cannot be taken, and open adds O_CLOEXEC. */
static int def_open(const char *path, int flags, mode_t mode)
{
    return open(path, flags | O_CLOEXEC, mode);
}

/* cachestat(2) (Linux 6.5): the page-cache state of a byte range in one call. The C library
 * has no wrapper yet, and older kernel headers lack the number and the structs. */
#ifndef __NR_cachestat
#define __NR_cachestat 451
#endif
struct sysio_cachestat_range {
    uint64_t off, len;
};
struct sysio_cachestat {
    uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};

static int def_resident(int fd, off_t off, size_t len)
{
    static long page;
    struct sysio_cachestat_range r = {(uint64_t)off, len};
    struct sysio_cachestat cs;

    if (len == 0)
        return 1;
    if (page == 0)
        page = sysconf(_SC_PAGESIZE);
    if (syscall(__NR_cachestat, fd, &r, &cs, 0) != 0)
        return -1;
    uint64_t first = (uint64_t)off / (uint64_t)page;
    uint64_t end = ((uint64_t)off + len + (uint64_t)page - 1) / (uint64_t)page;
    return cs.nr_cache >= end - first ? 1 : 0;
}

#ifdef TALLY_TEST_HOOKS
static _Thread_local bool on_loop;
static _Atomic uint64_t loop_cold_reads;

void sysio_mark_loop_thread(void)
{
    on_loop = true;
}

uint64_t sysio_loop_cold_reads(void)
{
    return atomic_load(&loop_cold_reads);
}

static _Atomic uint64_t loop_codec_calls;

void sysio_note_codec_call(void)
{
    if (on_loop)
        atomic_fetch_add(&loop_codec_calls, 1);
}

uint64_t sysio_loop_codec_calls(void)
{
    return atomic_load(&loop_codec_calls);
}

/* Bytes the calling thread has had fetched from storage (read_bytes of /proc/thread-self/io:
 * counted when the thread submits a read to the block layer), or -1 when it cannot be read. */
static int64_t thread_read_bytes(void)
{
    char buf[512];
    int fd = open("/proc/thread-self/io", O_RDONLY | O_CLOEXEC);
    ssize_t n;
    const char *p;

    if (fd < 0)
        return -1;
    n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    p = strstr(buf, "\nread_bytes: ");
    return p ? strtoll(p + strlen("\nread_bytes: "), NULL, 10) : -1;
}

/* A read on the loop thread whose range cachestat(2) did not find whole in the page cache.
 * cachestat alone is not the verdict: in CI it once said a page of a range was missing where,
 * a few microseconds later and with nothing else touching the file, the same call counted
 * every page cached and no eviction (a lockless walk of a cache of large folios, on a loaded
 * machine); the verdict is whether the call had this thread fetch bytes from storage. */
struct loop_read {
    bool suspect; /* on the loop, and cachestat found a page missing */
    int fd;
    off_t off;
    size_t len;
    uint64_t cached; /* pages cachestat counted before the call */
    int64_t before;  /* thread_read_bytes() before the call */
};

static uint64_t cached_pages(int fd, off_t off, size_t len)
{
    struct sysio_cachestat_range r = {(uint64_t)off, len};
    struct sysio_cachestat cs = {0};
    (void)syscall(__NR_cachestat, fd, &r, &cs, 0);
    return cs.nr_cache;
}

static struct loop_read note_loop_read_begin(int fd, off_t off, size_t len)
{
    struct loop_read lr = {false, fd, off, len, 0, -1};
    if (on_loop && def_resident(fd, off, len) == 0) {
        lr.suspect = true;
        lr.cached = cached_pages(fd, off, len);
        lr.before = thread_read_bytes();
    }
    return lr;
}

/* After the call: counts it when the thread's storage reads grew across it (or cannot be
 * read, where cachestat's word stands). */
static void note_loop_read_end(const struct loop_read *lr)
{
    int64_t after;
    char link[64], path[512];
    ssize_t n;

    if (!lr->suspect)
        return;
    after = thread_read_bytes();
    snprintf(link, sizeof link, "/proc/self/fd/%d", lr->fd);
    n = readlink(link, path, sizeof path - 1);
    path[n > 0 ? n : 0] = '\0';
    if (lr->before >= 0 && after >= 0 && after == lr->before) {
        slog_debug("sysio",
                   "test build: cachestat found %llu pages cached of a loop read of %zu "
                   "bytes at %lld of %s, but the read fetched nothing from storage: not "
                   "counted",
                   (unsigned long long)lr->cached, lr->len, (long long)lr->off, path);
        return;
    }
    atomic_fetch_add(&loop_cold_reads, 1);
    slog_debug("sysio",
               "test build: a read on the event loop touches pages not in the page cache: "
               "%s, %zu bytes at %lld (pages cached before %llu; this thread fetched %lld "
               "bytes from storage during it)",
               path, lr->len, (long long)lr->off, (unsigned long long)lr->cached,
               lr->before >= 0 && after >= 0 ? (long long)(after - lr->before) : -1LL);
}
#else
void sysio_mark_loop_thread(void) {}

uint64_t sysio_loop_cold_reads(void)
{
    return 0;
}

void sysio_note_codec_call(void) {}

uint64_t sysio_loop_codec_calls(void)
{
    return 0;
}

struct loop_read {
    char unused;
};
#define note_loop_read_begin(fd, off, len) ((struct loop_read){0})
#define note_loop_read_end(lr) ((void)(lr))
#endif

static ssize_t def_pread(int fd, void *buf, size_t len, off_t off)
{
    struct loop_read lr = note_loop_read_begin(fd, off, len);
    ssize_t r = pread(fd, buf, len, off);
    int e = errno;
    note_loop_read_end(&lr);
    errno = e;
    return r;
}

static ssize_t def_pread_nowait(int fd, void *buf, size_t len, off_t off)
{
    struct iovec v = {buf, len};
    ssize_t r = preadv2(fd, &v, 1, off, RWF_NOWAIT);
    if (r >= 0 || (errno != EOPNOTSUPP && errno != EINVAL))
        return r;
    /* A file system without RWF_NOWAIT (tmpfs, some network file systems): cachestat says
     * whether the pages are there (EAGAIN when not, as RWF_NOWAIT would); where it cannot
     * tell either, the read goes ahead as a plain pread. */
    struct stat st;
    size_t have = len;
    if (fstat(fd, &st) == 0)
        have = st.st_size <= off                    ? 0
               : (uint64_t)(st.st_size - off) < len ? (size_t)(st.st_size - off)
                                                    : len;
    if (have > 0 && def_resident(fd, off, have) == 0) {
        errno = EAGAIN;
        return -1;
    }
    return pread(fd, buf, len, off);
}

static int def_fadvise(int fd, off_t off, off_t len, int advice)
{
    return posix_fadvise(fd, off, len, advice);
}

static ssize_t def_sendfile(int sock, int fd, off_t *off, size_t len)
{
    struct loop_read lr = note_loop_read_begin(fd, *off, len);
    ssize_t r = sendfile(sock, fd, off, len);
    int e = errno;
    note_loop_read_end(&lr);
    errno = e;
    return r;
}

/* The warm-ups: the null device they pour into (opened once, by the first, for the process)
 * and each pool thread's pipe between the file and it, made on the thread's first warm-up and
 * kept (a pool thread lives as long as the process). The pipe holds WARM_PIPE bytes, which is
 * how much one splice asks the page cache for. In bench/cold_read.py (1 GiB from a cold
 * file, 1 MiB per fetch): sendfile() to /dev/null, through the kernel's own 64 KiB pipe, slept
 * on the disk 17,800 times and caught up at about 300 MiB/s; a 256 KiB pipe sleeps 5,400
 * times at 410-500 MiB/s, as a pread of 256 KiB into a scratch buffer did, for a twentieth of
 * its CPU; a 1 MiB pipe slept a few dozen times at up to 650 MiB/s but kept the event loop
 * (on the same CPU) waiting for it up to 13 ms at a time. */
#define WARM_PIPE ((size_t)256 << 10)
#define WARM_SCRATCH ((size_t)256 << 10)

static pthread_once_t null_once = PTHREAD_ONCE_INIT;
static int null_fd = -1;
static _Thread_local int warm_pipe[2] = {-1, -1};
static _Thread_local size_t warm_pipe_size;

static void open_null(void)
{
    null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
}

/* Whether this thread has its pipe (made now if not). */
static bool warm_pipe_ready(void)
{
    if (warm_pipe[0] >= 0)
        return true;
    pthread_once(&null_once, open_null);
    if (null_fd < 0 || pipe2(warm_pipe, O_CLOEXEC) != 0) {
        warm_pipe[0] = warm_pipe[1] = -1;
        return false;
    }
    int size = fcntl(warm_pipe[1], F_SETPIPE_SZ, (int)WARM_PIPE);
    if (size < 0)
        size = fcntl(warm_pipe[1], F_GETPIPE_SZ);
    warm_pipe_size = size > 0 ? (size_t)size : 4096;
    return true;
}

/* Empties this thread's pipe of n bytes into the null device. */
static bool warm_pipe_drain(size_t n)
{
    while (n > 0) {
        ssize_t k = splice(warm_pipe[0], NULL, null_fd, NULL, n, SPLICE_F_MOVE);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return false;
        n -= (size_t)k;
    }
    return true;
}

/* The pipe is left unusable (a splice that failed halfway may have left bytes in it): closed,
 * to be made again by the next warm-up. */
static void warm_pipe_drop(void)
{
    close(warm_pipe[0]);
    close(warm_pipe[1]);
    warm_pipe[0] = warm_pipe[1] = -1;
}

static ssize_t def_warm(int fd, off_t off, size_t len)
{
    if (warm_pipe_ready()) {
        loff_t at = off;
        ssize_t r = splice(fd, &at, warm_pipe[1], NULL, len < warm_pipe_size ? len : warm_pipe_size,
                           SPLICE_F_MOVE);
        if (r > 0 && !warm_pipe_drain((size_t)r)) {
            int e = errno;
            warm_pipe_drop();
            errno = e ? e : EIO;
            return -1;
        }
        if (r >= 0 || errno != EINVAL)
            return r;
    }
    /* No pipe, or a file the kernel will not splice from: read it into a buffer thrown away. */
    size_t n = len < WARM_SCRATCH ? len : WARM_SCRATCH;
    void *scratch = malloc(n ? n : 1);
    if (scratch == NULL) {
        errno = ENOMEM;
        return -1;
    }
    ssize_t r = pread(fd, scratch, n, off);
    int e = errno;
    free(scratch);
    errno = e;
    return r;
}

static ssize_t def_pwrite(int fd, const void *buf, size_t len, off_t off)
{
    return pwrite(fd, buf, len, off);
}

/* Every fsync of the default table, timed (any thread): the counts are atomics, so the pool
 * threads that fsync never wait for the loop that reads them. */
const double sysio_fsync_bounds[SYSIO_FSYNC_BUCKETS] = {
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5};
static _Atomic uint64_t fsync_counts[SYSIO_FSYNC_BUCKETS + 1];
static _Atomic uint64_t fsync_sum_ns;

static uint64_t mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int def_fsync(int fd)
{
    uint64_t t0 = mono_ns();
    int rc = fsync(fd);
    uint64_t ns = mono_ns() - t0;
    double s = (double)ns / 1e9;
    size_t i = 0;
    while (i < SYSIO_FSYNC_BUCKETS && s > sysio_fsync_bounds[i])
        i++;
    atomic_fetch_add_explicit(&fsync_counts[i], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&fsync_sum_ns, ns, memory_order_relaxed);
    return rc;
}

void sysio_fsync_stats(uint64_t counts[SYSIO_FSYNC_BUCKETS + 1], double *sum_s)
{
    for (size_t i = 0; i <= SYSIO_FSYNC_BUCKETS; i++)
        counts[i] = atomic_load_explicit(&fsync_counts[i], memory_order_relaxed);
    *sum_s = (double)atomic_load_explicit(&fsync_sum_ns, memory_order_relaxed) / 1e9;
}

static int def_ftruncate(int fd, off_t len)
{
    return ftruncate(fd, len);
}

static int def_fstat(int fd, struct stat *st)
{
    return fstat(fd, st);
}

static int def_close(int fd)
{
    return close(fd);
}

static int def_stat(const char *path, struct stat *st)
{
    return stat(path, st);
}

static int def_unlink(const char *path)
{
    return unlink(path);
}

static int def_rename(const char *from, const char *to)
{
    return rename(from, to);
}

static int def_mkdir(const char *path, mode_t mode)
{
    return mkdir(path, mode);
}

static int def_rmdir(const char *path)
{
    return rmdir(path);
}

static DIR *def_opendir(const char *path)
{
    return opendir(path);
}

static struct dirent *def_readdir(DIR *d)
{
    return readdir(d);
}

static int def_closedir(DIR *d)
{
    return closedir(d);
}

static const struct sysio default_io = {
    .open = def_open,
    .pread = def_pread,
    .pwrite = def_pwrite,
    .fsync = def_fsync,
    .ftruncate = def_ftruncate,
    .fstat = def_fstat,
    .close = def_close,
    .stat = def_stat,
    .unlink = def_unlink,
    .rename = def_rename,
    .mkdir = def_mkdir,
    .rmdir = def_rmdir,
    .opendir = def_opendir,
    .readdir = def_readdir,
    .closedir = def_closedir,
    .pread_nowait = def_pread_nowait,
    .resident = def_resident,
    .sendfile = def_sendfile,
    .fadvise = def_fadvise,
    .warm = def_warm,
};

const struct sysio *sysio_default(void)
{
    return &default_io;
}

int sysio_pwrite_all(const struct sysio *io, int fd, const void *buf, size_t len, off_t off)
{
    const uint8_t *p = buf;

    if (fd < 0)
        return fd; /* the -errno of the open that failed */
    while (len > 0) {
        ssize_t w = io->pwrite(fd, p, len, off);
        if (w < 0) {
            int e = errno;
            if (e == EINTR)
                continue;
            return -e;
        }
        if (w == 0)
            return -ENOSPC; /* a write that makes no progress would loop forever */
        p += w;
        len -= (size_t)w;
        off += w;
    }
    return 0;
}

ssize_t sysio_pread_full(const struct sysio *io, int fd, void *buf, size_t len, off_t off)
{
    uint8_t *p = buf;
    size_t got = 0;

    if (fd < 0)
        return fd; /* the -errno of the open that failed */
    while (got < len) {
        ssize_t r = io->pread(fd, p + got, len - got, off + (off_t)got);
        if (r < 0) {
            int e = errno;
            if (e == EINTR)
                continue;
            return -e;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

ssize_t sysio_warm_full(const struct sysio *io, int fd, off_t off, size_t len)
{
    size_t got = 0;

    if (fd < 0)
        return fd;
    while (got < len) {
        ssize_t r = io->warm(fd, off + (off_t)got, len - got);
        if (r < 0) {
            int e = errno;
            if (e == EINTR)
                continue;
            return -e;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

int sysio_fsync_dir(const struct sysio *io, const char *dir)
{
    int fd = io->open(dir, O_RDONLY | O_DIRECTORY, 0);

    if (fd < 0)
        return -errno;
    if (io->fsync(fd) < 0) {
        int e = errno;
        io->close(fd);
        return -e;
    }
    io->close(fd);
    return 0;
}

int sysio_write_atomic(const struct sysio *io, const char *module, const char *path,
                       const void *buf, size_t len)
{
    char tmp[4096], dir[4096];
    const char *what;
    char *slash;
    int fd, e;

    /* A name of its own per write: two writers of one file (which their owners avoid, as the
     * later one would lose) can never mix their bytes in one temporary file, and no lock
     * makes the event loop wait for a pool thread's fsync. */
    static atomic_uint seq;
    if (snprintf(tmp, sizeof tmp, "%s.%u.tmp", path, atomic_fetch_add(&seq, 1)) >=
        (int)sizeof tmp) {
        slog_error(module, "path too long: %s", path);
        return ERR_IO;
    }
    fd = io->open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        e = errno;
        what = "open";
        goto err;
    }
    if ((e = -sysio_pwrite_all(io, fd, buf, len, 0)) > 0) {
        what = "write";
        goto err_after_open;
    }
    if (io->fsync(fd) < 0) {
        e = errno;
        what = "fsync";
        goto err_after_open;
    }
    if (io->close(fd) < 0) {
        e = errno;
        what = "close";
        fd = -1;
        goto err_after_open;
    }
    if (io->rename(tmp, path) < 0) {
        e = errno;
        what = "rename";
        fd = -1;
        goto err_after_open;
    }
    /* The rename is durable only once the directory is. */
    snprintf(dir, sizeof dir, "%s", path);
    slash = strrchr(dir, '/');
    if (slash == dir)
        slash[1] = '\0';
    else if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    if ((e = -sysio_fsync_dir(io, dir)) > 0) {
        slog_error(module, "fsync of directory %s failed: %s", dir, strerror(e));
        return ERR_IO;
    }
    return 0;

err_after_open:
    if (fd >= 0)
        io->close(fd);
    io->unlink(tmp);
err:
    slog_error(module, "%s of %s failed: %s", what, tmp, strerror(e));
    return ERR_IO;
}

int sysio_read_file(const struct sysio *io, const char *module, const char *path, size_t max,
                    char **out, size_t *len)
{
    size_t cap = 4096, n = 0;
    char *buf;
    int fd = io->open(path, O_RDONLY, 0), rc;

    *out = NULL;
    *len = 0;
    if (fd < 0) {
        int e = errno;
        if (e == ENOENT)
            return ERR_NOTFOUND;
        slog_error(module, "open of %s failed: %s", path, strerror(e));
        return ERR_IO;
    }
    buf = malloc(cap);
    if (buf == NULL) {
        rc = ERR_NOMEM;
        goto err;
    }
    for (;;) {
        size_t want = cap - n - 1; /* room for the NUL */
        ssize_t r = sysio_pread_full(io, fd, buf + n, want, (off_t)n);
        char *nb;

        if (r < 0) {
            slog_error(module, "read of %s failed: %s", path, strerror((int)-r));
            rc = ERR_IO;
            goto err;
        }
        n += (size_t)r;
        if ((size_t)r < want)
            break; /* the end of the file */
        if (n > max)
            break;
        nb = realloc(buf, cap * 2);
        if (nb == NULL) {
            rc = ERR_NOMEM;
            goto err;
        }
        buf = nb;
        cap *= 2;
    }
    if (n > max) {
        /* The files read whole are small; refuse to swallow one that is not. */
        slog_error(module, "%s is larger than %zu bytes", path, max);
        rc = ERR_IO;
        goto err;
    }
    io->close(fd);
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return 0;

err:
    free(buf);
    io->close(fd);
    return rc;
}
