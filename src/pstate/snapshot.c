/* SPDX-License-Identifier: Apache-2.0 */
/* pstate snapshots: the whole producer table of a partition as of a log offset, in the file
 * `<dir>/<offset, 20 digits>.snapshot`, so that a restart replays only the log after it.
 * Each file is complete (no deltas), written atomically and checked by CRC on load.
 *
 * File layout (big-endian):
 **   OFFSET  SIZE  FIELD
 **        0     2  version (1)
 **        2     4  crc: CRC32C of bytes 6 .. end of file
 **        6     4  producer count
 **       10        producers, in producer-id order, each 42 + 32 * (batch count) bytes:
 **
 **   Producer:
 **   OFFSET  SIZE  FIELD
 **        0     8  producer id
 **        8     2  producer epoch
 **       10     4  coordinator epoch (-1: none)
 **       14     8  first offset of the ongoing transaction (-1: none)
 **       22     8  last timestamp (max timestamp of the last batch)
 **       30     8  last update, wall clock in ms (for expiration)
 **       38     4  batch count (0 .. 5)
 **       42        batches, oldest first, 32 bytes each:
 **
 **   Batch:
 **   OFFSET  SIZE  FIELD
 **        0     4  first sequence
 **        4     4  last sequence
 **        8     8  first offset
 **       16     8  last offset
 **       24     8  max timestamp
 **
 ** A file is valid when it is exactly as long as its counts say, its version is 1, its CRC
 ** matches, every batch count is in 0 .. 5, no producer id repeats, and each producer's
 ** batches are in offset order (first <= last, each past the one before) below the offset in
 ** the file's name, as is its ongoing transaction's first offset: the state as of that offset
 ** can hold nothing at or past it, and the replay that follows appends from there. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/slog.h"
#include "base/sysio.h"
#include "pstate/pstate.h"
#include "pstate/pstate_int.h"
#include "record/record.h"

#define SNAP_VERSION 1
#define SNAP_HEADER 10
#define SNAP_CRC_FROM 6
#define SNAP_PRODUCER 42
#define SNAP_BATCH 32
#define SNAP_PRODUCER_MAX (SNAP_PRODUCER + PSTATE_MAX_BATCHES * SNAP_BATCH)

#define SNAP_SUFFIX ".snapshot"
#define SNAP_TMP_SUFFIX ".snapshot.tmp"
#define SNAP_DIGITS 20

/* ---- system calls (through the caller's struct sysio) --------------------------------- */

/* Logs a failed system call, given the errno it left (taken right at the call, see
 * base/err.h), and returns ERR_IO. */
static int io_fail(const char *call, const char *path, int e)
{
    slog_error("pstate", "%s %s: %s", call, path, strerror(e));
    return ERR_IO;
}

static int fsync_dir(const struct sysio *io, const char *dir)
{
    int e = -sysio_fsync_dir(io, dir);

    return e != 0 ? io_fail("fsync", dir, e) : 0;
}

/* ---- names ----------------------------------------------------------------------------- */

/* 0, or -ENAMETOOLONG when the name does not fit. */
static int snap_path(char *buf, size_t size, const char *dir, int64_t offset, const char *suffix)
{
    int n = snprintf(buf, size, "%s/%020lld%s", dir, (long long)offset, suffix);

    return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* Whether `name` is 20 digits then `suffix` (and nothing more), and its offset. */
static bool parse_name(const char *name, const char *suffix, int64_t *offset)
{
    int64_t v = 0;

    for (int i = 0; i < SNAP_DIGITS; i++) {
        if (name[i] < '0' || name[i] > '9')
            return false;
        if (v > (INT64_MAX - (name[i] - '0')) / 10)
            return false;
        v = v * 10 + (name[i] - '0');
    }
    if (strcmp(name + SNAP_DIGITS, suffix) != 0)
        return false;
    *offset = v;
    return true;
}

static int cmp_offset(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The offsets of the snapshots in `dir`, ascending, in a malloc()ed array (caller frees;
 * NULL when there are none). A missing directory holds none. With `remove_tmp`, leftover
 * temporary files of interrupted writes are deleted on the way. Returns 0, ERR_IO or
 * ERR_NOMEM. */
static int list_snapshots(const struct sysio *io, const char *dir, bool remove_tmp, int64_t **out,
                          size_t *n_out)
{
    DIR *d = io->opendir(dir);
    struct dirent *e;
    int64_t *v = NULL, off;
    size_t n = 0, cap = 0;
    char path[PATH_MAX];

    *out = NULL;
    *n_out = 0;
    if (d == NULL) {
        int err = errno;
        return err == ENOENT ? 0 : io_fail("opendir", dir, err);
    }
    errno = 0;
    while ((e = io->readdir(d)) != NULL) {
        if (parse_name(e->d_name, SNAP_SUFFIX, &off)) {
            if (n == cap) {
                size_t c = cap ? cap * 2 : 16;
                int64_t *nv = realloc(v, c * sizeof *nv);
                if (nv == NULL)
                    goto err_nomem;
                v = nv;
                cap = c;
            }
            v[n++] = off;
        } else if (remove_tmp && parse_name(e->d_name, SNAP_TMP_SUFFIX, &off) &&
                   snap_path(path, sizeof path, dir, off, SNAP_TMP_SUFFIX) == 0) {
            io->unlink(path); /* best effort: an orphan is only wasted space */
        }
        errno = 0; /* readdir reports an error only through errno */
    }
    if (errno != 0) {
        int r = io_fail("readdir", dir, errno);
        free(v);
        io->closedir(d);
        return r;
    }
    io->closedir(d);
    if (n > 1)
        qsort(v, n, sizeof *v, cmp_offset);
    *out = v;
    *n_out = n;
    return 0;

err_nomem:
    free(v);
    io->closedir(d);
    return ERR_NOMEM;
}

/* ---- encoding -------------------------------------------------------------------------- */

static uint8_t *put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
    return p + 2;
}

static uint8_t *put32(uint8_t *p, uint32_t v)
{
    p = put16(p, (uint16_t)(v >> 16));
    return put16(p, (uint16_t)v);
}

static uint8_t *put64(uint8_t *p, uint64_t v)
{
    p = put32(p, (uint32_t)(v >> 32));
    return put32(p, (uint32_t)v);
}

static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)get16(p) << 16 | get16(p + 2);
}

static uint64_t get64(const uint8_t *p)
{
    return (uint64_t)get32(p) << 32 | get32(p + 4);
}

/* Encodes one producer into p (room for SNAP_PRODUCER_MAX bytes); returns its size. */
static size_t encode_producer(uint8_t *p, const struct pstate_producer *pr)
{
    uint8_t *q = p;

    q = put64(q, (uint64_t)pr->producer_id);
    q = put16(q, (uint16_t)pr->epoch);
    q = put32(q, (uint32_t)pr->coordinator_epoch);
    q = put64(q, (uint64_t)pr->txn_first_offset);
    q = put64(q, (uint64_t)pr->last_timestamp);
    q = put64(q, (uint64_t)pr->last_update_ms);
    q = put32(q, (uint32_t)pr->n_batches);
    for (int32_t i = 0; i < pr->n_batches; i++) {
        const struct pstate_batch *b = &pr->batches[i];
        q = put32(q, (uint32_t)b->first_seq);
        q = put32(q, (uint32_t)b->last_seq);
        q = put64(q, (uint64_t)b->first_offset);
        q = put64(q, (uint64_t)b->last_offset);
        q = put64(q, (uint64_t)b->timestamp);
    }
    return (size_t)(q - p);
}

/* Decodes buf[0..len), the snapshot as of `offset`, into `s` (empty). Returns 0, 1 if the
 * contents are invalid (*why says how), or ERR_NOMEM. */
static int decode(const uint8_t *buf, size_t len, int64_t offset, struct pstate *s,
                  const char **why)
{
    const uint8_t *p, *end = buf + len;
    uint32_t count;

    if (len < SNAP_HEADER) {
        *why = "shorter than its header";
        return 1;
    }
    if (get16(buf) != SNAP_VERSION) {
        *why = "unsupported version";
        return 1;
    }
    if (get32(buf + 2) != record_crc32c(0, buf + SNAP_CRC_FROM, len - SNAP_CRC_FROM)) {
        *why = "CRC mismatch";
        return 1;
    }
    count = get32(buf + 6);
    p = buf + SNAP_HEADER;
    for (uint32_t k = 0; k < count; k++) {
        struct pstate_producer *pr;
        int64_t id;
        uint32_t nb;

        if ((size_t)(end - p) < SNAP_PRODUCER) {
            *why = "shorter than its producer count says";
            return 1;
        }
        nb = get32(p + 38);
        if (nb > PSTATE_MAX_BATCHES) {
            *why = "batch count out of range";
            return 1;
        }
        if ((size_t)(end - p) < SNAP_PRODUCER + nb * SNAP_BATCH) {
            *why = "shorter than its batch counts say";
            return 1;
        }
        id = (int64_t)get64(p);
        if (id < 0 || pstate_get(s, id) != NULL) {
            *why = id < 0 ? "negative producer id" : "producer id repeated";
            return 1;
        }
        pr = pstate_int_upsert(s, id);
        if (pr == NULL)
            return ERR_NOMEM;
        pr->epoch = (int16_t)get16(p + 8);
        pr->coordinator_epoch = (int32_t)get32(p + 10);
        pr->txn_first_offset = (int64_t)get64(p + 14);
        pr->last_timestamp = (int64_t)get64(p + 22);
        pr->last_update_ms = (int64_t)get64(p + 30);
        pr->n_batches = (int32_t)nb;
        if (pr->txn_first_offset < -1 || pr->txn_first_offset >= offset) {
            *why = "ongoing transaction outside the log the snapshot covers";
            return 1;
        }
        p += SNAP_PRODUCER;
        for (uint32_t i = 0; i < nb; i++, p += SNAP_BATCH) {
            struct pstate_batch *b = &pr->batches[i];
            b->first_seq = (int32_t)get32(p);
            b->last_seq = (int32_t)get32(p + 4);
            b->first_offset = (int64_t)get64(p + 8);
            b->last_offset = (int64_t)get64(p + 16);
            b->timestamp = (int64_t)get64(p + 24);
            if (b->first_offset < 0 || b->last_offset < b->first_offset ||
                b->last_offset >= offset ||
                (i > 0 && b->first_offset <= pr->batches[i - 1].last_offset)) {
                *why = "batches out of order or past the snapshot's offset";
                return 1;
            }
        }
    }
    if (p != end) {
        *why = "longer than its counts say";
        return 1;
    }
    return 0;
}

/* ---- write ----------------------------------------------------------------------------- */

static int snapshot_write(const struct pstate *s, const struct sysio *io, const char *dir,
                          int64_t offset, bool sync)
{
    char tmp[PATH_MAX], path[PATH_MAX];
    uint8_t buf[65536], one[SNAP_PRODUCER_MAX];
    const struct pstate_producer *prods;
    size_t n, used;
    off_t at = 0;
    uint32_t crc;
    int fd, e;

    if (offset < 0)
        return io_fail("snapshot at a negative offset in", dir, EINVAL);
    if ((e = -snap_path(tmp, sizeof tmp, dir, offset, SNAP_TMP_SUFFIX)) != 0 ||
        (e = -snap_path(path, sizeof path, dir, offset, SNAP_SUFFIX)) != 0)
        return io_fail("snapshot path in", dir, e);
    prods = pstate_producers(s, &n);
    if (n > UINT32_MAX)
        return io_fail("snapshot", path, EOVERFLOW);

    /* Two passes over the table instead of one buffer for the whole file: the CRC, which
     * precedes the data, first; then the bytes. Writing never needs memory it could lack. */
    put32(one, (uint32_t)n);
    crc = record_crc32c(0, one, 4);
    for (size_t k = 0; k < n; k++)
        crc = record_crc32c(crc, one, encode_producer(one, &prods[k]));

    fd = io->open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return io_fail("open", tmp, errno);
    put32(put32(put16(buf, SNAP_VERSION), crc), (uint32_t)n);
    used = SNAP_HEADER;
    for (size_t k = 0; k < n; k++) {
        if (sizeof buf - used < SNAP_PRODUCER_MAX) {
            if ((e = -sysio_pwrite_all(io, fd, buf, used, at)) != 0)
                goto err_write;
            at += (off_t)used;
            used = 0;
        }
        used += encode_producer(buf + used, &prods[k]);
    }
    if ((e = -sysio_pwrite_all(io, fd, buf, used, at)) != 0)
        goto err_write;
    if (sync && io->fsync(fd) != 0) {
        io_fail("fsync", tmp, errno);
        goto err_after_open;
    }
    if (io->close(fd) != 0) {
        io_fail("close", tmp, errno);
        goto err_after_close;
    }
    if (io->rename(tmp, path) != 0) {
        io_fail("rename", tmp, errno);
        goto err_after_close;
    }
    return sync ? fsync_dir(io, dir) : 0;

err_write:
    io_fail("write", tmp, e);
err_after_open:
    io->close(fd);
err_after_close:
    io->unlink(tmp);
    return ERR_IO;
}

int pstate_snapshot_write(const struct pstate *s, const struct sysio *io, const char *dir,
                          int64_t offset)
{
    return snapshot_write(s, io, dir, offset, true);
}

int pstate_snapshot_write_nosync(const struct pstate *s, const struct sysio *io, const char *dir,
                                 int64_t offset)
{
    return snapshot_write(s, io, dir, offset, false);
}

int pstate_snapshot_sync(const struct sysio *io, const char *dir, int64_t offset)
{
    char path[PATH_MAX];
    int fd;

    if (snap_path(path, sizeof path, dir, offset, SNAP_SUFFIX) != 0)
        return io_fail("snapshot path in", dir, ENAMETOOLONG);
    fd = io->open(path, O_RDONLY, 0);
    if (fd < 0)
        return io_fail("open", path, errno);
    if (io->fsync(fd) != 0) {
        int e = errno;
        io->close(fd);
        return io_fail("fsync", path, e);
    }
    io->close(fd);
    return fsync_dir(io, dir);
}

/* ---- load ------------------------------------------------------------------------------ */

/* A snapshot file holds at most this many bytes (about 5 million producers at full windows);
 * a larger one is refused rather than read. */
#define SNAP_FILE_MAX ((size_t)1 << 30)

/* Deletes a snapshot that must not be used again. Returns 0 or ERR_IO. */
static int remove_snapshot(const struct sysio *io, const char *path)
{
    if (io->unlink(path) != 0) {
        int e = errno;
        if (e != ENOENT)
            return io_fail("unlink", path, e);
    }
    return 0;
}

int pstate_snapshot_load(struct pstate *s, const struct sysio *io, const char *dir,
                         int64_t max_offset, int64_t *offset)
{
    struct pstate *tmp = NULL;
    int64_t *offs = NULL;
    size_t n = 0;
    bool removed = false, found = false;
    char path[PATH_MAX];
    int r;

    *offset = -1;
    r = list_snapshots(io, dir, true, &offs, &n);
    if (r != 0)
        return r;
    tmp = pstate_new();
    if (tmp == NULL) {
        r = ERR_NOMEM;
        goto out;
    }
    for (size_t i = n; i-- > 0 && !found;) {
        char *buf = NULL;
        size_t len = 0;
        const char *why = NULL;

        if (snap_path(path, sizeof path, dir, offs[i], SNAP_SUFFIX) != 0) {
            r = io_fail("snapshot path in", dir, ENAMETOOLONG);
            goto out;
        }
        if (offs[i] > max_offset) {
            /* It describes log that is gone: it must not come back once the log regrows
             * past its offset with different contents. */
            r = remove_snapshot(io, path);
            if (r != 0)
                goto out;
            removed = true;
            continue;
        }
        r = sysio_read_file(io, "pstate", path, SNAP_FILE_MAX, &buf, &len);
        if (r == ERR_NOTFOUND)
            continue;
        if (r != 0)
            goto out;
        r = decode((const uint8_t *)buf, len, offs[i], tmp, &why);
        free(buf);
        if (r < 0)
            goto out;
        if (r == 1) {
            slog_warn("pstate", "snapshot %s is corrupt (%s): deleted, trying an older one", path,
                      why);
            pstate_int_clear(tmp);
            if (remove_snapshot(io, path) == 0)
                removed = true;
            continue;
        }
        found = true;
        *offset = offs[i];
    }
    r = removed ? fsync_dir(io, dir) : 0;
    if (r != 0) {
        *offset = -1;
        goto out;
    }
    if (found)
        pstate_int_move(s, tmp);
    else
        pstate_int_clear(s);

out:
    pstate_free(tmp);
    free(offs);
    return r;
}

/* ---- prune ----------------------------------------------------------------------------- */

int pstate_snapshot_prune(const struct sysio *io, const char *dir, int keep)
{
    int64_t *offs;
    size_t n;
    int deleted = 0;
    char path[PATH_MAX];

    if (keep < 0)
        keep = 0;
    if (list_snapshots(io, dir, false, &offs, &n) != 0)
        return 0; /* logged; old snapshots only cost disk, next time will do */
    for (size_t i = 0; i + (size_t)keep < n; i++) {
        if (snap_path(path, sizeof path, dir, offs[i], SNAP_SUFFIX) != 0)
            continue;
        if (io->unlink(path) == 0) {
            deleted++;
        } else {
            int e = errno;
            if (e != ENOENT)
                io_fail("unlink", path, e);
        }
    }
    free(offs);
    return deleted;
}
