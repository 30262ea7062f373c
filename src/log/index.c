/* SPDX-License-Identifier: Apache-2.0 */
/* log index: the sparse offset index (.index) and time index (.timeindex) of a segment.
 *
 * .index — one 8-byte entry per index.interval.bytes of log appended, big-endian:
 **   OFFSET  SIZE  FIELD
 **        0     4  relative offset: batch base offset - segment base offset
 **        4     4  position of that batch in the .log file
 *
 * .timeindex — 12-byte entries, big-endian, appended at the same moments as .index
 * entries when the segment's largest timestamp so far grew past the last entry's:
 **   OFFSET  SIZE  FIELD
 **        0     8  timestamp: the largest batch max timestamp so far in the segment
 **        8     4  relative offset of the last offset of the batch that holds it
 *
 * Both are strictly increasing in every field. Unlike Kafka, which preallocates the files
 * to segment.index.bytes and trims them on close, Tally grows them by appending: the file
 * length is always exactly the entries written × entry size, so there is nothing to trim and
 * a crash leaves no zero-filled tail. Only the newest .index entries (at most LOG_OIDX_PEND)
 * are kept in memory until they are written together, so that an append of a large batch is
 * one write, not two (Kafka writes its entries into a memory map); lookups binary-search the
 * file with pread (the page cache keeps hot indexes in memory, as Kafka's mmap does) and those
 * few, so an open segment costs O(1) memory however large it is. */
#include <assert.h>
#include <errno.h>
#include <string.h>

#include "base/err.h"
#include "base/slog.h"
#include "log/log_int.h"

/* Logs a failed system call (`neg_errno`: its -errno, as the io helpers return it). */
static int idx_io_error(struct log_segment *s, const char *what, const char *ext, int neg_errno)
{
    slog_error(LOG_MOD, "%s of %s%s failed: %s", what, s->path, ext, strerror(-neg_errno));
    return ERR_IO;
}

/* ---- offset index ---------------------------------------------------------------------- */

/* Entries [0, written) are in the file, [written, oidx_n) in s->oidx_pend. */
static int64_t oidx_written(const struct log_segment *s)
{
    return s->oidx_n - s->oidx_pend_n;
}

int log_oidx_entry(struct log_segment *s, int64_t i, int64_t *offset, int64_t *pos)
{
    uint8_t buf[LOG_OIDX_ENTRY];
    const uint8_t *e = buf;
    if (i >= oidx_written(s)) {
        assert(i < s->oidx_n);
        e = s->oidx_pend + (i - oidx_written(s)) * LOG_OIDX_ENTRY;
    } else {
        ssize_t r = log_seg_pread(s, LOG_FILE_IDX, buf, sizeof buf, (off_t)(i * LOG_OIDX_ENTRY));
        if (r == LOG_COLD)
            return ERR_WOULD_BLOCK;
        if (r < 0)
            return idx_io_error(s, "read", ".index", (int)r);
        if (r != (ssize_t)sizeof buf)
            return idx_io_error(s, "short read", ".index", -EIO);
    }
    *offset = s->base + (int32_t)log_be32(e);
    *pos = (int32_t)log_be32(e + 4);
    return 0;
}

int log_oidx_sync(struct log_segment *s)
{
    int64_t written = oidx_written(s);
    off_t at = (off_t)(written * LOG_OIDX_ENTRY);

    if (s->oidx_pend_n == 0)
        return 0;
    int w = sysio_pwrite_all(s->io, log_seg_fd(s, LOG_FILE_IDX), s->oidx_pend,
                             (size_t)s->oidx_pend_n * LOG_OIDX_ENTRY, at);
    if (w < 0) {
        int rc = idx_io_error(s, "write", ".index", w);
        log_seg_ftruncate(s, LOG_FILE_IDX, at);
        s->oidx_pend_n = 0;
        s->oidx_n = written;
        s->oidx_last_off = -1;
        s->oidx_last_pos = 0;
        if (written > 0 && log_oidx_entry(s, written - 1, &s->oidx_last_off, &s->oidx_last_pos))
            s->oidx_n = 0; /* unreadable as well: the segment is rescanned on the next open */
        return rc;
    }
    s->oidx_pend_n = 0;
    return 0;
}

int log_oidx_append(struct log_segment *s, int64_t offset, int64_t pos)
{
    uint8_t *e;

    /* Entries strictly increase in offset and position, which the binary searches rest on.
     * An entry is added for a batch being accounted for at the end of the segment
     * (log_seg_index_batch: past every batch before it), and the last entry is always one of
     * an earlier batch: a truncation keeps only entries below the cut, an open checks the
     * last entry against the batch it names. */
    assert(s->oidx_n == 0 || (offset > s->oidx_last_off && pos > s->oidx_last_pos));
    assert(s->oidx_pend_n < LOG_OIDX_PEND);
    e = s->oidx_pend + s->oidx_pend_n * LOG_OIDX_ENTRY;
    log_put32(e, (uint32_t)(int32_t)(offset - s->base));
    log_put32(e + 4, (uint32_t)(int32_t)pos);
    s->oidx_pend_n++;
    s->oidx_n++;
    s->oidx_last_off = offset;
    s->oidx_last_pos = pos;
    return s->oidx_pend_n == LOG_OIDX_PEND ? log_oidx_sync(s) : 0;
}

int log_oidx_floor(struct log_segment *s, int64_t target, int64_t *offset, int64_t *pos)
{
    int64_t lo = 0, hi = s->oidx_n; /* answer: the last i in [0, hi) with off_i <= target */
    int64_t best_off = s->base, best_pos = 0;

    if (s->oidx_n > 0 && target >= s->oidx_last_off) {
        *offset = s->oidx_last_off;
        *pos = s->oidx_last_pos;
        return 0;
    }
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2, o, p;
        int rc = log_oidx_entry(s, mid, &o, &p);
        if (rc)
            return rc;
        if (o <= target) {
            best_off = o;
            best_pos = p;
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    *offset = best_off;
    *pos = best_pos;
    return 0;
}

int log_oidx_count_below(struct log_segment *s, int64_t limit_off, int64_t limit_pos,
                         int64_t *count)
{
    int64_t lo = 0, hi = s->oidx_n; /* first i with off_i >= limit_off or pos_i > limit_pos */
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2, o, p;
        int rc = log_oidx_entry(s, mid, &o, &p);
        if (rc)
            return rc;
        if (o < limit_off && p <= limit_pos)
            lo = mid + 1;
        else
            hi = mid;
    }
    *count = lo;
    return 0;
}

int log_oidx_truncate(struct log_segment *s, int64_t n)
{
    if (n >= s->oidx_n)
        return 0;
    if (n >= oidx_written(s)) {
        s->oidx_pend_n -= (int)(s->oidx_n - n); /* only pending entries go */
    } else {
        int t = log_seg_ftruncate(s, LOG_FILE_IDX, (off_t)(n * LOG_OIDX_ENTRY));
        if (t < 0)
            return idx_io_error(s, "truncate", ".index", t);
        s->oidx_pend_n = 0;
    }
    s->oidx_n = n;
    s->oidx_last_off = -1;
    s->oidx_last_pos = 0;
    if (n > 0)
        return log_oidx_entry(s, n - 1, &s->oidx_last_off, &s->oidx_last_pos);
    return 0;
}

/* ---- time index ------------------------------------------------------------------------ */

int log_tidx_entry(struct log_segment *s, int64_t i, int64_t *ts, int64_t *offset)
{
    uint8_t e[LOG_TIDX_ENTRY];
    ssize_t r = log_seg_pread(s, LOG_FILE_TIDX, e, sizeof e, (off_t)(i * LOG_TIDX_ENTRY));
    if (r == LOG_COLD)
        return ERR_WOULD_BLOCK;
    if (r < 0)
        return idx_io_error(s, "read", ".timeindex", (int)r);
    if (r != (ssize_t)sizeof e)
        return idx_io_error(s, "short read", ".timeindex", -EIO);
    *ts = (int64_t)log_be64(e);
    *offset = s->base + (int32_t)log_be32(e + 8);
    return 0;
}

int log_tidx_append(struct log_segment *s, int64_t ts, int64_t offset)
{
    uint8_t e[LOG_TIDX_ENTRY];
    off_t at = (off_t)(s->tidx_n * LOG_TIDX_ENTRY);

    /* Timestamps strictly increase: an entry is added only when the segment's largest
     * timestamp grew past the last entry's (log_seg_index_batch, log_seg_finish). */
    assert(ts > s->tidx_last_ts);
    log_put64(e, (uint64_t)ts);
    log_put32(e + 8, (uint32_t)(int32_t)(offset - s->base));
    int w = sysio_pwrite_all(s->io, log_seg_fd(s, LOG_FILE_TIDX), e, sizeof e, at);
    if (w < 0) {
        int rc = idx_io_error(s, "write", ".timeindex", w);
        log_seg_ftruncate(s, LOG_FILE_TIDX, at);
        return rc;
    }
    s->tidx_n++;
    s->tidx_last_ts = ts;
    s->tidx_last_off = offset;
    return 0;
}

int log_tidx_floor_below(struct log_segment *s, int64_t ts, int64_t *offset, int64_t *idx)
{
    int64_t lo = 0, hi = s->tidx_n; /* first i with ts_i >= ts */
    int64_t t, o;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        int rc = log_tidx_entry(s, mid, &t, &o);
        if (rc)
            return rc;
        if (t < ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    *idx = lo - 1;
    *offset = s->base;
    if (lo > 0) {
        int rc = log_tidx_entry(s, lo - 1, &t, offset);
        if (rc)
            return rc;
    }
    return 0;
}

int log_tidx_count_below(struct log_segment *s, int64_t limit_off, int64_t *count)
{
    int64_t lo = 0, hi = s->tidx_n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2, t, o;
        int rc = log_tidx_entry(s, mid, &t, &o);
        if (rc)
            return rc;
        if (o < limit_off)
            lo = mid + 1;
        else
            hi = mid;
    }
    *count = lo;
    return 0;
}

int log_tidx_truncate(struct log_segment *s, int64_t n)
{
    if (n >= s->tidx_n)
        return 0;
    int t = log_seg_ftruncate(s, LOG_FILE_TIDX, (off_t)(n * LOG_TIDX_ENTRY));
    if (t < 0)
        return idx_io_error(s, "truncate", ".timeindex", t);
    s->tidx_n = n;
    s->tidx_last_ts = -1;
    s->tidx_last_off = -1;
    if (n > 0)
        return log_tidx_entry(s, n - 1, &s->tidx_last_ts, &s->tidx_last_off);
    return 0;
}
