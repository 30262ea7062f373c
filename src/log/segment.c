/* SPDX-License-Identifier: Apache-2.0 */
/* log segment: one <base>.log file of whole record batches (record/record.h has the batch
 * layout; the file is nothing but batches back to back, as on the wire) with its .index,
 * .timeindex and .txnindex. Opening, reference counting, header scans, index maintenance,
 * the CRC rescan of recovery and truncation. Positions in a segment fit in int32 (the
 * .index stores them so), which log_append guarantees by rolling before 2 GiB. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/err.h"
#include "base/log.h"
#include "log/log_int.h"
#include "record/record.h"

#define PATH_MAX_LEN 4096

static void seg_file(const struct log_segment *s, const char *ext, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s%s", s->path, ext);
}

static int seg_io_error(const struct log_segment *s, const char *what, const char *ext)
{
    log_error(LOG_MOD, "%s of %s%s failed: %s", what, s->path, ext, strerror(errno));
    return ERR_IO;
}

static struct log_segment *seg_new(struct log *l, int64_t base)
{
    struct log_segment *s = calloc(1, sizeof *s);
    size_t n = strlen(l->dir) + 32;

    if (!s)
        return NULL;
    s->path = malloc(n);
    if (!s->path) {
        free(s);
        return NULL;
    }
    snprintf(s->path, n, "%s/%020" PRId64, l->dir, base);
    atomic_init(&s->refs, 1);
    s->io = l->io;
    s->base = base;
    s->fd_log = s->fd_idx = s->fd_tidx = -1;
    s->next_offset = base;
    s->oidx_last_off = -1;
    s->tidx_last_ts = -1;
    s->tidx_last_off = -1;
    s->max_ts = -1;
    s->max_ts_offset = -1;
    s->roll_ms = -1;
    return s;
}

static void seg_close_fds(struct log_segment *s)
{
    if (s->fd_log >= 0)
        s->io->close(s->fd_log);
    if (s->fd_idx >= 0)
        s->io->close(s->fd_idx);
    if (s->fd_tidx >= 0)
        s->io->close(s->fd_tidx);
    s->fd_log = s->fd_idx = s->fd_tidx = -1;
}

static void seg_free(struct log_segment *s)
{
    seg_close_fds(s);
    free(s->path);
    free(s);
}

void log_seg_ref(struct log_segment *s)
{
    atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
}

void log_seg_unref(struct log_segment *s)
{
    if (s && atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) == 1)
        seg_free(s);
}

void log_seg_unlink(struct log_segment *s)
{
    static const char *exts[] = {".log", ".index", ".timeindex", ".txnindex"};
    char p[PATH_MAX_LEN];
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++) {
        seg_file(s, exts[i], p, sizeof p);
        if (s->io->unlink(p) < 0 && errno != ENOENT)
            log_warn(LOG_MOD, "unlink of %s failed: %s", p, strerror(errno));
    }
}

/* Opens <path><ext>; with `create`, creates it when missing and says so in *created. */
static int seg_open_file(struct log_segment *s, const char *ext, int flags, bool *created)
{
    char p[PATH_MAX_LEN];
    int fd;

    seg_file(s, ext, p, sizeof p);
    fd = s->io->open(p, O_RDWR | flags, 0644);
    if (fd < 0 && errno == ENOENT && created) {
        fd = s->io->open(p, O_RDWR | O_CREAT, 0644);
        if (fd >= 0)
            *created = true;
    }
    if (fd < 0)
        seg_io_error(s, "open", ext);
    return fd;
}

int log_seg_create(struct log *l, int64_t base, struct log_segment **out)
{
    struct log_segment *s = seg_new(l, base);
    int fd;

    if (!s)
        return ERR_NOMEM;
    s->fd_log = seg_open_file(s, ".log", O_CREAT | O_TRUNC, NULL);
    if (s->fd_log < 0)
        goto err;
    s->fd_idx = seg_open_file(s, ".index", O_CREAT | O_TRUNC, NULL);
    if (s->fd_idx < 0)
        goto err_after_open;
    s->fd_tidx = seg_open_file(s, ".timeindex", O_CREAT | O_TRUNC, NULL);
    if (s->fd_tidx < 0)
        goto err_after_open;
    /* .txnindex: aborted transactions land here later; for now it exists and is empty, so
     * the directory looks like Kafka's. */
    fd = seg_open_file(s, ".txnindex", O_CREAT | O_TRUNC, NULL);
    if (fd < 0)
        goto err_after_open;
    s->io->close(fd);
    s->dirty = true;
    *out = s;
    return 0;

err_after_open:
    log_seg_unlink(s);
err:
    seg_free(s);
    return ERR_IO;
}

int log_seg_open(struct log *l, int64_t base, struct log_segment **out)
{
    struct log_segment *s = seg_new(l, base);
    struct stat st;
    bool created = false;
    int fd;

    if (!s)
        return ERR_NOMEM;
    s->fd_log = seg_open_file(s, ".log", 0, NULL);
    if (s->fd_log < 0)
        goto err;
    if (fstat(s->fd_log, &st) < 0) {
        seg_io_error(s, "fstat", ".log");
        goto err;
    }
    s->size = st.st_size;

    s->fd_idx = seg_open_file(s, ".index", 0, &created);
    if (s->fd_idx < 0)
        goto err;
    if (fstat(s->fd_idx, &st) < 0) {
        seg_io_error(s, "fstat", ".index");
        goto err;
    }
    if (st.st_size % LOG_OIDX_ENTRY != 0)
        s->idx_damaged = true;
    s->oidx_n = st.st_size / LOG_OIDX_ENTRY;

    s->fd_tidx = seg_open_file(s, ".timeindex", 0, &created);
    if (s->fd_tidx < 0)
        goto err;
    if (fstat(s->fd_tidx, &st) < 0) {
        seg_io_error(s, "fstat", ".timeindex");
        goto err;
    }
    if (st.st_size % LOG_TIDX_ENTRY != 0)
        s->idx_damaged = true;
    s->tidx_n = st.st_size / LOG_TIDX_ENTRY;

    fd = seg_open_file(s, ".txnindex", O_CREAT, NULL);
    if (fd < 0)
        goto err;
    s->io->close(fd);

    if (created)
        s->idx_damaged = true;
    if (!s->idx_damaged && s->oidx_n > 0 &&
        log_oidx_entry(s, s->oidx_n - 1, &s->oidx_last_off, &s->oidx_last_pos) != 0)
        s->idx_damaged = true;
    if (!s->idx_damaged && s->tidx_n > 0 &&
        log_tidx_entry(s, s->tidx_n - 1, &s->tidx_last_ts, &s->tidx_last_off) != 0)
        s->idx_damaged = true;
    s->max_ts = s->tidx_last_ts;
    s->max_ts_offset = s->tidx_last_off;
    if (s->size > 0)
        s->roll_ms = l->io->now_ms();
    *out = s;
    return 0;

err:
    seg_free(s);
    return ERR_IO;
}

int log_seg_read_hdr(struct log_segment *s, int64_t pos, int64_t limit, struct log_batch_hdr *h)
{
    uint8_t b[RECORD_BATCH_HEADER];
    ssize_t r;

    if (pos < 0 || limit - pos < RECORD_BATCH_HEADER)
        return ERR_TRUNCATED;
    r = log_io_pread_full(s->io, s->fd_log, b, sizeof b, (off_t)pos);
    if (r < 0)
        return seg_io_error(s, "read", ".log");
    if (r != (ssize_t)sizeof b)
        return ERR_TRUNCATED;
    h->base_offset = (int64_t)log_be64(b);
    h->batch_length = (int32_t)log_be32(b + 8);
    h->magic = (int8_t)b[16];
    h->last_offset_delta = (int32_t)log_be32(b + 23);
    h->max_timestamp = (int64_t)log_be64(b + 35);
    if (h->magic != 2 || h->batch_length < RECORD_BATCH_HEADER - RECORD_BATCH_OVERHEAD ||
        h->last_offset_delta < 0 || h->base_offset < 0)
        return ERR_CORRUPT_MESSAGE;
    if (log_hdr_size(h) > limit - pos)
        return ERR_TRUNCATED;
    return 0;
}

int log_seg_find(struct log_segment *s, int64_t offset, int64_t limit, int64_t *pos,
                 struct log_batch_hdr *h)
{
    int64_t eoff, epos, p;
    bool from_index;
    int rc = log_oidx_floor(s, offset, &eoff, &epos);

    if (rc)
        return rc;
    from_index = epos > 0;
    p = epos < limit ? epos : 0;
    while (p < limit) {
        rc = log_seg_read_hdr(s, p, limit, h);
        if (from_index && p == epos &&
            (rc != 0 || h->base_offset > eoff || log_hdr_last(h) < eoff)) {
            /* The index points at something that is not the batch it names: do not trust
             * it; a full scan from the start of the segment is slow but right. */
            log_warn(LOG_MOD,
                     "%s.index entry for offset %" PRId64
                     " does not match the log; scanning the segment",
                     s->path, eoff);
            from_index = false;
            p = 0;
            continue;
        }
        if (rc == ERR_TRUNCATED)
            return ERR_CORRUPT_MESSAGE;
        if (rc)
            return rc;
        if (log_hdr_last(h) >= offset) {
            *pos = p;
            return 0;
        }
        p += log_hdr_size(h);
    }
    return ERR_NOTFOUND;
}

int log_seg_index_batch(struct log *l, struct log_segment *s, int64_t pos,
                        const struct log_batch_hdr *h, int64_t max_ts)
{
    int64_t new_max = s->max_ts, new_max_off = s->max_ts_offset;
    int64_t last = log_hdr_last(h), size = log_hdr_size(h);
    bool entry = s->bytes_since_index > l->cfg.index_interval_bytes;

    if (max_ts > new_max) {
        new_max = max_ts;
        new_max_off = last;
    }
    if (entry) {
        int rc = log_oidx_append(s, h->base_offset, pos);
        if (rc)
            return rc;
        if (new_max > s->tidx_last_ts) {
            /* The entry records the largest timestamp so far, as Kafka's does. */
            rc = log_tidx_append(s, new_max, new_max_off);
            if (rc) {
                log_oidx_truncate(s, s->oidx_n - 1);
                return rc;
            }
        }
    }
    s->max_ts = new_max;
    s->max_ts_offset = new_max_off;
    s->bytes_since_index = entry ? size : s->bytes_since_index + size;
    s->size = pos + size;
    s->next_offset = last + 1;
    s->dirty = true;
    return 0;
}

int log_seg_finish(struct log_segment *s)
{
    if (s->max_ts > s->tidx_last_ts) {
        int rc = log_tidx_append(s, s->max_ts, s->max_ts_offset);
        if (rc)
            return rc;
        s->dirty = true;
    }
    return 0;
}

int log_seg_scan_tail(struct log *l, struct log_segment *s)
{
    int64_t p = s->oidx_last_pos, next = s->base, max_ts = s->tidx_last_ts;
    int64_t max_off = s->tidx_last_off;
    struct log_batch_hdr h;
    int rc;

    (void)l;
    /* The max timestamp may sit in any batch after the one of the last time index entry;
     * start the scan no later than that batch. */
    if (s->tidx_n == 0) {
        p = 0;
    } else {
        int64_t eoff, epos;
        rc = log_oidx_floor(s, s->tidx_last_off, &eoff, &epos);
        if (rc)
            return rc;
        if (epos < p)
            p = epos;
    }
    if (p > s->size)
        return ERR_CORRUPT_MESSAGE;
    while (p < s->size) {
        rc = log_seg_read_hdr(s, p, s->size, &h);
        if (rc == ERR_TRUNCATED)
            return ERR_CORRUPT_MESSAGE;
        if (rc)
            return rc;
        if (h.base_offset < s->base)
            return ERR_CORRUPT_MESSAGE;
        if (h.max_timestamp > max_ts) {
            max_ts = h.max_timestamp;
            max_off = log_hdr_last(&h);
        }
        next = log_hdr_last(&h) + 1;
        p += log_hdr_size(&h);
    }
    if (next == s->base && s->size > 0) {
        /* Nothing scanned but the segment is not empty: the index must name a batch. */
        return ERR_CORRUPT_MESSAGE;
    }
    s->next_offset = next;
    s->max_ts = max_ts;
    s->max_ts_offset = max_off;
    s->bytes_since_index = s->oidx_n > 0 ? s->size - s->oidx_last_pos : s->size;
    return 0;
}

int log_seg_recover(struct log *l, struct log_segment *s, int64_t *lost, const char **why_out)
{
    int64_t file_size = s->size, pos = 0, expect = s->base;
    uint8_t *buf = NULL;
    size_t cap = 0;
    const char *why = NULL;
    int rc = 0;

    *lost = 0;
    *why_out = NULL;
    if (s->io->ftruncate(s->fd_idx, 0) < 0 || s->io->ftruncate(s->fd_tidx, 0) < 0)
        return seg_io_error(s, "truncate", " index");
    s->oidx_n = s->tidx_n = 0;
    s->oidx_last_off = -1;
    s->oidx_last_pos = 0;
    s->tidx_last_ts = s->tidx_last_off = -1;
    s->max_ts = s->max_ts_offset = -1;
    s->bytes_since_index = 0;
    s->size = 0;
    s->next_offset = s->base;
    s->idx_damaged = false;
    s->dirty = true;

    while (pos < file_size) {
        struct log_batch_hdr h;
        struct record_batch b;
        int64_t size;

        rc = log_seg_read_hdr(s, pos, file_size, &h);
        if (rc == ERR_IO)
            goto out;
        if (rc == ERR_TRUNCATED) {
            why = "torn batch";
            break;
        }
        if (rc) {
            why = "bad batch header";
            break;
        }
        size = log_hdr_size(&h);
        if ((size_t)size > cap) {
            uint8_t *nb = realloc(buf, (size_t)size);
            if (!nb) {
                rc = ERR_NOMEM;
                goto out;
            }
            buf = nb;
            cap = (size_t)size;
        }
        if (log_io_pread_full(s->io, s->fd_log, buf, (size_t)size, (off_t)pos) != size) {
            rc = seg_io_error(s, "read", ".log");
            goto out;
        }
        if (record_batch_validate(buf, (size_t)size, &b) != 0) {
            why = "corrupt batch (CRC or records)";
            break;
        }
        if (h.base_offset < expect) {
            why = "offset out of order";
            break;
        }
        rc = log_seg_index_batch(l, s, pos, &h, h.max_timestamp);
        if (rc)
            goto out;
        pos += size;
        expect = log_hdr_last(&h) + 1;
    }
    rc = 0;
    if (pos < file_size) {
        if (s->io->ftruncate(s->fd_log, (off_t)pos) < 0) {
            rc = seg_io_error(s, "truncate", ".log");
            goto out;
        }
        *lost = file_size - pos;
        *why_out = why;
    }
    s->size = pos;
out:
    free(buf);
    return rc;
}

int log_seg_truncate(struct log *l, struct log_segment *s, int64_t offset)
{
    struct log_batch_hdr h;
    int64_t pos, new_next, n_oidx, n_tidx;
    int rc = log_seg_find(s, offset, s->size, &pos, &h);

    if (rc == ERR_NOTFOUND)
        return 0;
    if (rc)
        return rc == ERR_IO ? rc : ERR_IO;
    new_next = h.base_offset < offset ? h.base_offset : offset;
    rc = log_oidx_count_below(s, new_next, pos - 1, &n_oidx);
    if (rc == 0)
        rc = log_tidx_count_below(s, new_next, &n_tidx);
    if (rc == 0)
        rc = log_oidx_truncate(s, n_oidx);
    if (rc == 0)
        rc = log_tidx_truncate(s, n_tidx);
    if (rc)
        return rc;
    if (s->io->ftruncate(s->fd_log, (off_t)pos) < 0)
        return seg_io_error(s, "truncate", ".log");
    s->size = pos;
    s->dirty = true;
    rc = log_seg_scan_tail(l, s);
    if (rc)
        return rc == ERR_IO ? rc : ERR_IO;
    s->next_offset = new_next;
    if (pos == 0)
        s->roll_ms = -1;
    return 0;
}
