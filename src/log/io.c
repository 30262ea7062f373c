/* SPDX-License-Identifier: Apache-2.0 */
/* log io: the default system-call table, and the few helpers every log file uses to go
 * through it (whole writes, whole reads, directory fsync, atomic file replacement). The
 * helpers return -errno of the call that failed (see base/err.h); write_atomic and
 * read_file turn it into ERR_IO here, with one log line naming the call and the path. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "base/slog.h"
#include "log/log_int.h"

static int def_open(const char *path, int flags, mode_t mode)
{
    return open(path, flags | O_CLOEXEC, mode);
}

static ssize_t def_pwrite(int fd, const void *buf, size_t len, off_t off)
{
    return pwrite(fd, buf, len, off);
}

static ssize_t def_pread(int fd, void *buf, size_t len, off_t off)
{
    return pread(fd, buf, len, off);
}

static int def_fsync(int fd)
{
    return fsync(fd);
}

static int def_ftruncate(int fd, off_t len)
{
    return ftruncate(fd, len);
}

static int def_close(int fd)
{
    return close(fd);
}

static int def_unlink(const char *path)
{
    return unlink(path);
}

static int def_rename(const char *from, const char *to)
{
    return rename(from, to);
}

static const struct log_io default_io = {
    .open = def_open,
    .pwrite = def_pwrite,
    .pread = def_pread,
    .fsync = def_fsync,
    .ftruncate = def_ftruncate,
    .close = def_close,
    .unlink = def_unlink,
    .rename = def_rename,
};

const struct log_io *log_io_default(void)
{
    return &default_io;
}

int log_io_pwrite_all(const struct log_io *io, int fd, const void *buf, size_t len, off_t off)
{
    const uint8_t *p = buf;
    if (fd < 0)
        return fd; /* log_seg_fd's -errno: the open failed */
    while (len > 0) {
        ssize_t w = io->pwrite(fd, p, len, off);
        if (w < 0) {
            int e = errno;
            if (e == EINTR)
                continue;
            return -e;
        }
        if (w == 0) {
            /* A write that makes no progress would loop forever; call it what it is. */
            return -ENOSPC;
        }
        p += w;
        len -= (size_t)w;
        off += w;
    }
    return 0;
}

ssize_t log_io_pread_full(const struct log_io *io, int fd, void *buf, size_t len, off_t off)
{
    uint8_t *p = buf;
    size_t got = 0;
    if (fd < 0)
        return fd; /* log_seg_fd's -errno: the open failed */
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

int log_io_fsync_dir(const struct log_io *io, const char *dir)
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

static int write_atomic(const struct log_io *io, const char *path, const char *buf, size_t len)
{
    char tmp[4096];
    char dir[4096];
    const char *what;
    int fd, e;

    /* A name of its own per write: two writers of one file (which their owners avoid, as
     * the later one would lose) can never mix their bytes in one temp file, and no lock
     * makes the event loop wait for a pool thread's fsync. */
    static atomic_uint seq;
    if (snprintf(tmp, sizeof tmp, "%s.%u.tmp", path, atomic_fetch_add(&seq, 1)) >=
        (int)sizeof tmp) {
        slog_error(LOG_MOD, "checkpoint path too long: %s", path);
        return ERR_IO;
    }
    fd = io->open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        e = errno;
        what = "open";
        goto err;
    }
    if ((e = -log_io_pwrite_all(io, fd, buf, len, 0)) > 0) {
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
    char *slash = strrchr(dir, '/');
    if (slash == dir)
        slash[1] = '\0';
    else if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    if ((e = -log_io_fsync_dir(io, dir)) > 0) {
        slog_error(LOG_MOD, "fsync of directory %s failed: %s", dir, strerror(e));
        return ERR_IO;
    }
    return 0;

err_after_open:
    if (fd >= 0)
        io->close(fd);
    io->unlink(tmp);
err:
    slog_error(LOG_MOD, "%s of %s failed: %s", what, tmp, strerror(e));
    return ERR_IO;
}

int log_io_read_file(const struct log_io *io, const char *path, char **out, size_t *len)
{
    size_t cap = 4096, n = 0;
    char *buf;
    int fd = io->open(path, O_RDONLY, 0);

    if (fd < 0) {
        int e = errno;
        if (e == ENOENT)
            return ERR_NOTFOUND;
        slog_error(LOG_MOD, "open of %s failed: %s", path, strerror(e));
        return ERR_IO;
    }
    buf = malloc(cap);
    if (!buf)
        goto err_nomem;
    for (;;) {
        ssize_t r;
        if (cap - n < 2) {
            char *nb;
            if (cap > (64u << 20)) {
                /* Checkpoint files are small; refuse to swallow something that is not. */
                slog_error(LOG_MOD, "%s is larger than 64 MiB", path);
                free(buf);
                io->close(fd);
                return ERR_IO;
            }
            nb = realloc(buf, cap * 2);
            if (!nb)
                goto err_nomem;
            buf = nb;
            cap *= 2;
        }
        r = log_io_pread_full(io, fd, buf + n, cap - n - 1, (off_t)n);
        if (r < 0) {
            slog_error(LOG_MOD, "read of %s failed: %s", path, strerror((int)-r));
            free(buf);
            io->close(fd);
            return ERR_IO;
        }
        n += (size_t)r;
        if ((size_t)r < cap - (n - (size_t)r) - 1)
            break;
    }
    io->close(fd);
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return 0;

err_nomem:
    free(buf);
    io->close(fd);
    return ERR_NOMEM;
}

int log_io_write_atomic(const struct log_io *io, const char *path, const char *buf, size_t len)
{
    return write_atomic(io, path, buf, len);
}
