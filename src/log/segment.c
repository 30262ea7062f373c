/* SPDX-License-Identifier: Apache-2.0 */
/* log segment: one <base>.log file of whole record batches (record/record.h has the batch
 * layout; the file is nothing but batches back to back, as on the wire) with its .index,
 * .timeindex and .txnindex. Opening, reference counting, the descriptor cache, header
 * scans, index maintenance, the CRC rescan of recovery and truncation. Positions in a
 * segment fit in int32 (the .index stores them so), which log_append guarantees by rolling
 * before 2 GiB.
 *
 * Descriptors are opened when first needed, not when a segment is opened or created: a
 * partition nobody writes to or reads holds none, so a broker hosting tens of thousands of
 * partitions does not run out (three per segment did). The active segment keeps what it
 * opened. Sealed segments (every one but the last) are in a least-recently-used list of
 * bounded length; the oldest one whose descriptors nobody needs — not pinned by a read
 * slice or a flush in flight, nothing written since its last fsync — is closed to make
 * room. A file written since its last fsync stays open, since an fsync through a
 * descriptor opened after a writeback error may not report that error. */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/err.h"
#include "base/slog.h"
#include "log/log_int.h"
#include "record/record.h"

#define PATH_MAX_LEN 4096

static const char *const file_ext[LOG_NFILES] = {".log", ".index", ".timeindex"};

/* The sealed segments holding descriptors, most recently used first. Event-loop thread
 * only, like every segment's descriptor fields. */
static struct {
    struct log_segment *head, *tail;
    size_t n, cap;
} fd_cache = {NULL, NULL, 0, 128};

static struct slog_limit open_warn;

static void seg_file(const struct log_segment *s, const char *ext, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s%s", s->path, ext);
}

/* Logs a failed system call (`neg_errno`: its -errno, as the io helpers return it). */
static int seg_io_error(const struct log_segment *s, const char *what, const char *ext,
                        int neg_errno)
{
    slog_error(LOG_MOD, "%s of %s%s failed: %s", what, s->path, ext, strerror(-neg_errno));
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
    for (int f = 0; f < LOG_NFILES; f++)
        s->fds[f] = -1;
    s->next_offset = base;
    s->txns_loaded = false;
    s->oidx_last_off = -1;
    s->tidx_last_ts = -1;
    s->tidx_last_off = -1;
    s->max_ts = -1;
    s->max_ts_offset = -1;
    s->roll_ms = -1;
    s->compact = l->cfg.compact;
    s->chk_expect = base;
    s->chk_bad = -1;
    return s;
}

/* ---- the descriptor cache ---------------------------------------------------------------- */

static void lru_unlink(struct log_segment *s)
{
    if (!s->in_lru)
        return;
    if (s->lru_prev)
        s->lru_prev->lru_next = s->lru_next;
    else
        fd_cache.head = s->lru_next;
    if (s->lru_next)
        s->lru_next->lru_prev = s->lru_prev;
    else
        fd_cache.tail = s->lru_prev;
    s->lru_prev = s->lru_next = NULL;
    s->in_lru = false;
    fd_cache.n--;
}

static void lru_push_front(struct log_segment *s)
{
    s->lru_prev = NULL;
    s->lru_next = fd_cache.head;
    if (fd_cache.head)
        fd_cache.head->lru_prev = s;
    fd_cache.head = s;
    if (!fd_cache.tail)
        fd_cache.tail = s;
    s->in_lru = true;
    fd_cache.n++;
}

static bool seg_has_fds(const struct log_segment *s)
{
    return s->fds[LOG_FILE_LOG] >= 0 || s->fds[LOG_FILE_IDX] >= 0 || s->fds[LOG_FILE_TIDX] >= 0;
}

static void seg_close_fds(struct log_segment *s)
{
    for (int f = 0; f < LOG_NFILES; f++) {
        if (s->fds[f] >= 0)
            s->io->close(s->fds[f]);
        s->fds[f] = -1;
    }
    lru_unlink(s);
}

/* Closes the descriptors of the least recently used sealed segments nobody needs until the
 * list has room for one more (but never `keep`'s). When every one is in use, the list grows
 * past its bound: a read or a flush in flight is not refused for it. */
static void lru_make_room(struct log_segment *keep)
{
    struct log_segment *s = fd_cache.tail;
    while (fd_cache.n >= fd_cache.cap && s) {
        struct log_segment *prev = s->lru_prev;
        if (s != keep && s->pins == 0 && !s->dirty)
            seg_close_fds(s);
        s = prev;
    }
}

/* Puts a sealed segment that holds descriptors at the front of the list. */
static void lru_touch(struct log_segment *s)
{
    if (!s->sealed || !seg_has_fds(s))
        return;
    if (s->in_lru && fd_cache.head == s)
        return;
    lru_unlink(s);
    lru_push_front(s);
}

size_t log_fd_cache_limit(size_t cap)
{
    size_t old = fd_cache.cap;
    if (cap > 0)
        fd_cache.cap = cap;
    return old;
}

int log_seg_fd(struct log_segment *s, enum log_file f)
{
    char p[PATH_MAX_LEN];
    int fd;

    if (s->fds[f] >= 0) {
        lru_touch(s);
        return s->fds[f];
    }
    if (s->sealed && !s->in_lru)
        lru_make_room(s);
    seg_file(s, file_ext[f], p, sizeof p);
    /* An index file that went missing is recreated empty (open noticed and rebuilds it). */
    fd = s->io->open(p, O_RDWR | (f == LOG_FILE_LOG ? 0 : O_CREAT), 0644);
    if (fd < 0) {
        int e = errno;
        slog_warn_limited(&open_warn, 10000, LOG_MOD, "open of %s failed: %s", p, strerror(e));
        return -e;
    }
    /* No kernel readahead on .log files: what the event loop sends must be read in whole
     * (by a pool job's pread) or not at all. Readahead leaves pages in the cache that its I/O
     * has not filled yet, which the residency probe before sendfile (cachestat(2)) counts as
     * cached: the loop would then wait for that I/O. The pool's reads are large enough not to
     * need it. A failure only costs that guarantee. */
    if (f == LOG_FILE_LOG)
        (void)s->io->fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
    s->fds[f] = fd;
    lru_touch(s);
    return fd;
}

void log_seg_seal(struct log_segment *s, bool sealed)
{
    s->sealed = sealed;
    if (!sealed) {
        lru_unlink(s);
        return;
    }
    if (seg_has_fds(s) && !s->in_lru) {
        lru_make_room(s);
        lru_push_front(s);
    }
}

void log_seg_close_idle(struct log_segment *s)
{
    if (s->pins == 0 && !s->dirty)
        seg_close_fds(s);
}

void log_seg_pin(struct log_segment *s)
{
    s->pins++;
}

void log_seg_unpin(struct log_segment *s)
{
    s->pins--;
    if (s->pins == 0 && s->in_lru && fd_cache.n > fd_cache.cap)
        lru_make_room(NULL);
}

/* The loop's note while a log_read_nowait runs on this thread (pool threads never set it). */
static _Thread_local struct log_cold *nowait_note;

void log_nowait_begin(struct log_cold *note)
{
    note->seg = NULL;
    nowait_note = note;
}

void log_nowait_end(void)
{
    nowait_note = NULL;
}

ssize_t log_seg_pread(struct log_segment *s, enum log_file f, void *buf, size_t len, off_t off)
{
    return log_seg_pread_some(s, f, buf, len, len, off);
}

ssize_t log_seg_pread_some(struct log_segment *s, enum log_file f, void *buf, size_t len,
                           size_t need, off_t off)
{
    int fd = log_seg_fd(s, f);
    uint8_t *p = buf;
    size_t got = 0;

    if (nowait_note == NULL || fd < 0)
        return sysio_pread_full(s->io, fd, buf, len, off);
    while (got < len) {
        ssize_t r = s->io->pread_nowait(fd, p + got, len - got, off + (off_t)got);
        if (r < 0) {
            int e = errno;
            if (e == EINTR)
                continue;
            if (e == EAGAIN && got >= need && got > 0)
                break; /* the bytes asked for are here; the rest is cold */
            if (e != EAGAIN)
                return -e;
            nowait_note->seg = s;
            nowait_note->file = f;
            nowait_note->pos = (int64_t)off + (int64_t)got;
            return LOG_COLD;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

int log_seg_ftruncate(struct log_segment *s, enum log_file f, off_t len)
{
    int fd = log_seg_fd(s, f);
    if (fd < 0)
        return fd;
    return s->io->ftruncate(fd, len) < 0 ? -errno : 0;
}

/* ---- lifetime ------------------------------------------------------------------------------ */

static void seg_free(struct log_segment *s)
{
    log_txn_free_seg(s);
    log_seg_holes_free(s);
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
        if (s->io->unlink(p) < 0) {
            int e = errno;
            if (e != ENOENT)
                slog_warn(LOG_MOD, "unlink of %s failed: %s", p, strerror(e));
        }
    }
}

/* Creates (or empties) <path><ext> and closes it again. 0 or ERR_IO (logged). */
static int seg_create_file(struct log_segment *s, const char *ext, int flags)
{
    char p[PATH_MAX_LEN];
    int fd;

    seg_file(s, ext, p, sizeof p);
    fd = s->io->open(p, O_RDWR | O_CREAT | flags, 0644);
    if (fd < 0)
        return seg_io_error(s, "open", ext, -errno);
    s->io->close(fd);
    return 0;
}

int log_seg_create(struct log *l, int64_t base, struct log_segment **out)
{
    struct log_segment *s = seg_new(l, base);

    if (!s)
        return ERR_NOMEM;
    /* .txnindex: aborted transactions (txnindex.c); it starts empty. No descriptor stays
     * open: the first append opens the .log, the first index entry the index files. */
    if (seg_create_file(s, ".log", O_TRUNC) || seg_create_file(s, ".index", O_TRUNC) ||
        seg_create_file(s, ".timeindex", O_TRUNC) || seg_create_file(s, ".txnindex", O_TRUNC))
        goto err;
    s->dirty = true;
    *out = s;
    return 0;

err:
    log_seg_unlink(s);
    seg_free(s);
    return ERR_IO;
}

/* The size of <path><ext>, or -errno (-ENOENT if it does not exist). */
static int64_t seg_file_size(const struct log_segment *s, const char *ext)
{
    char p[PATH_MAX_LEN];
    struct stat st;

    seg_file(s, ext, p, sizeof p);
    if (s->io->stat(p, &st) < 0)
        return -errno;
    return st.st_size;
}

int64_t log_seg_mtime_ms(const struct log_segment *s)
{
    char p[PATH_MAX_LEN];
    struct stat st;

    seg_file(s, ".log", p, sizeof p);
    if (s->io->stat(p, &st) < 0)
        return -1;
    return (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
}

int log_seg_open(struct log *l, int64_t base, struct log_segment **out)
{
    struct log_segment *s = seg_new(l, base);
    int64_t size;
    bool missing = false;

    if (!s)
        return ERR_NOMEM;
    /* Sizes only: descriptors are opened when the segment is first read or written. */
    if ((size = seg_file_size(s, ".log")) < 0) {
        seg_io_error(s, "stat", ".log", (int)size);
        goto err;
    }
    s->size = size;

    if ((size = seg_file_size(s, ".index")) < 0) {
        if (size != -ENOENT) {
            seg_io_error(s, "stat", ".index", (int)size);
            goto err;
        }
        missing = true;
        size = 0;
    }
    if (size % LOG_OIDX_ENTRY != 0)
        s->idx_damaged = true;
    s->oidx_n = size / LOG_OIDX_ENTRY;

    if ((size = seg_file_size(s, ".timeindex")) < 0) {
        if (size != -ENOENT) {
            seg_io_error(s, "stat", ".timeindex", (int)size);
            goto err;
        }
        missing = true;
        size = 0;
    }
    if (size % LOG_TIDX_ENTRY != 0)
        s->idx_damaged = true;
    s->tidx_n = size / LOG_TIDX_ENTRY;

    if (seg_file_size(s, ".txnindex") < 0 && seg_create_file(s, ".txnindex", 0) != 0)
        goto err;

    if (missing)
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
        s->roll_ms = log_now_ms(l);
    *out = s;
    return 0;

err:
    seg_free(s);
    return ERR_IO;
}

/* Decodes and sanity-checks the batch header in b (61 bytes read at pos). */
static int hdr_decode(const uint8_t *b, int64_t pos, int64_t limit, struct log_batch_hdr *h)
{
    h->base_offset = (int64_t)log_be64(b);
    h->batch_length = (int32_t)log_be32(b + 8);
    h->magic = (int8_t)b[16];
    h->last_offset_delta = (int32_t)log_be32(b + 23);
    h->max_timestamp = (int64_t)log_be64(b + 35);
    h->leader_epoch = (int32_t)log_be32(b + 12);
    if (h->magic != 2 || h->batch_length < RECORD_BATCH_HEADER - RECORD_BATCH_OVERHEAD ||
        h->last_offset_delta < 0 || h->base_offset < 0 ||
        h->base_offset > INT64_MAX - h->last_offset_delta - 1)
        return ERR_CORRUPT_MESSAGE;
    if (log_hdr_size(h) > limit - pos)
        return ERR_TRUNCATED;
    return 0;
}

int log_seg_read_hdr(struct log_segment *s, int64_t pos, int64_t limit, struct log_batch_hdr *h)
{
    uint8_t b[RECORD_BATCH_HEADER];
    ssize_t r;

    if (pos < 0 || limit - pos < RECORD_BATCH_HEADER)
        return ERR_TRUNCATED;
    r = log_seg_pread(s, LOG_FILE_LOG, b, sizeof b, (off_t)pos);
    if (r == LOG_COLD)
        return ERR_WOULD_BLOCK;
    if (r < 0)
        return seg_io_error(s, "read", ".log", (int)r);
    if (r != (ssize_t)sizeof b)
        return ERR_TRUNCATED;
    return hdr_decode(b, pos, limit, h);
}

int log_seg_read_hdr_w(struct log_segment *s, struct log_hdr_window *w, int64_t pos, int64_t limit,
                       struct log_batch_hdr *h)
{
    ssize_t r;
    size_t want;

    if (pos < 0 || limit - pos < RECORD_BATCH_HEADER)
        return ERR_TRUNCATED;
    if (pos < w->at || pos + RECORD_BATCH_HEADER > w->at + w->n) {
        want = limit - pos < (int64_t)sizeof w->buf ? (size_t)(limit - pos) : sizeof w->buf;
        r = log_seg_pread_some(s, LOG_FILE_LOG, w->buf, want, RECORD_BATCH_HEADER, (off_t)pos);
        if (r == LOG_COLD)
            return ERR_WOULD_BLOCK;
        if (r < 0)
            return seg_io_error(s, "read", ".log", (int)r);
        w->at = pos;
        w->n = r;
        if (r < RECORD_BATCH_HEADER)
            return ERR_TRUNCATED;
    }
    return hdr_decode(w->buf + (pos - w->at), pos, limit, h);
}

int log_seg_walk(struct log_segment *s, struct log_hdr_window *w, int64_t pos, int64_t expect,
                 int64_t limit, int64_t end_offset, int64_t max_offset, int64_t max_end,
                 int64_t *end, int64_t *next)
{
    struct log_batch_hdr h;
    int rc;

    *end = pos;
    *next = expect;
    while (*end < limit) {
        rc = log_seg_read_hdr_w(s, w, *end, limit, &h);
        if (rc == ERR_IO || rc == ERR_WOULD_BLOCK)
            return rc;
        if (rc || !log_seg_follows(s, h.base_offset, *next) || log_hdr_last(&h) >= end_offset)
            return ERR_CORRUPT_MESSAGE;
        if (log_hdr_last(&h) >= max_offset || *end + log_hdr_size(&h) > max_end)
            return 0;
        *end += log_hdr_size(&h);
        *next = log_hdr_last(&h) + 1;
    }
    return 0;
}

int log_seg_find(struct log_segment *s, int64_t offset, int64_t limit, int64_t *pos,
                 struct log_batch_hdr *h)
{
    static struct slog_limit index_warn;
    int64_t eoff, epos, p, expect;
    bool from_index;
    /* The headers between the index entry and the batch are read 4 KiB at a time: a scan
     * past small batches costs a read per window, not one per batch. */
    struct log_hdr_window w = {.at = 0, .n = 0};
    int rc = log_oidx_floor(s, offset, &eoff, &epos);

    if (rc)
        return rc;
    from_index = epos > 0 && epos < limit;
    p = from_index ? epos : 0;
    expect = from_index ? eoff : s->base;
    /* An entry inside a quarantined range names a batch that is not served: the first batch
     * after the range is the answer (its offsets are past the entry's). */
    if (log_seg_skip_holes(s, &p, &expect))
        from_index = false;
    while (p < limit) {
        if (log_seg_skip_holes(s, &p, &expect))
            continue;
        rc = log_seg_read_hdr_w(s, &w, p, limit, h);
        if (rc == ERR_WOULD_BLOCK)
            return rc;
        if (from_index && p == epos && (rc != 0 || h->base_offset != eoff)) {
            /* The index points at something that is not the batch it names: do not trust
             * it; a full scan from the start of the segment is slow but right. */
            slog_warn_limited(&index_warn, 10000, LOG_MOD,
                              "%s.index entry for offset %" PRId64
                              " does not match the log; scanning the segment",
                              s->path, eoff);
            from_index = false;
            p = 0;
            expect = s->base;
            continue;
        }
        if (rc == ERR_TRUNCATED)
            return ERR_CORRUPT_MESSAGE;
        if (rc)
            return rc;
        /* Batches follow one another (without gaps, unless compaction may have left some:
         * log_seg_gaps_ok) and stay below the segment's end: a header whose offsets do not
         * fit was damaged, and is never served. */
        if (!log_seg_follows(s, h->base_offset, expect) || log_hdr_last(h) >= s->next_offset)
            return ERR_CORRUPT_MESSAGE;
        if (log_hdr_last(h) >= offset) {
            *pos = p;
            return 0;
        }
        expect = log_hdr_last(h) + 1;
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

    /* Batches are accounted for in file order, each where the last one ended and starting at
     * or past its end offset — never below: log_append writes at the end with the log end as
     * base offset, the rescan of recovery takes a batch only once log_seg_follows said so. An
     * offset that went backwards here would be served twice and break every index. */
    assert(pos == s->size && log_seg_follows(s, h->base_offset, s->next_offset));

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
    int w = log_oidx_sync(s);
    if (w)
        return w;
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
    int64_t p = 0, expect = s->base, next = s->base, max_ts = s->tidx_last_ts;
    int64_t max_off = s->tidx_last_off;
    struct log_hdr_window w = {.at = 0, .n = 0};
    struct log_batch_hdr h;
    int rc;

    (void)l;
    /* Start at the last .index entry, whose batch must begin with the offset it names; but
     * the max timestamp may sit in any batch after the one of the last time index entry, so
     * start no later than that batch. */
    if (s->oidx_n > 0) {
        p = s->oidx_last_pos;
        expect = s->oidx_last_off;
    }
    if (s->tidx_n == 0) {
        p = 0;
        expect = s->base;
    } else {
        int64_t eoff, epos;
        rc = log_oidx_floor(s, s->tidx_last_off, &eoff, &epos);
        if (rc)
            return rc;
        if (epos < p) {
            p = epos;
            expect = eoff;
        }
    }
    if (p > s->size)
        return ERR_CORRUPT_MESSAGE;
    while (p < s->size) {
        if (log_seg_skip_holes(s, &p, &expect)) {
            next = expect;
            continue;
        }
        rc = log_seg_read_hdr_w(s, &w, p, s->size, &h);
        if (rc == ERR_TRUNCATED)
            return ERR_CORRUPT_MESSAGE;
        if (rc)
            return rc;
        if (!log_seg_follows(s, h.base_offset, expect))
            return ERR_CORRUPT_MESSAGE;
        if (h.max_timestamp > max_ts) {
            max_ts = h.max_timestamp;
            max_off = log_hdr_last(&h);
        }
        next = expect = log_hdr_last(&h) + 1;
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

int log_seg_recover(struct log *l, struct log_segment *s, int64_t end_offset, int64_t *lost,
                    const char **why_out)
{
    int64_t file_size = s->size, pos = 0, expect = s->base;
    uint8_t *buf = NULL;
    size_t cap = 0;
    const char *why = NULL;
    int rc = 0;

    *lost = 0;
    *why_out = NULL;
    /* Every batch kept is checked here, CRC included: nothing is left to the background check. */
    s->chk_end = s->chk_done = 0;
    if (file_size == 0 && s->oidx_n == 0 && s->tidx_n == 0 && !s->idx_damaged) {
        /* Empty and intact: nothing to rebuild, and no descriptor to open (after a crash,
         * thousands of idle partitions must not each pin two). */
        s->next_offset = s->base;
        return 0;
    }
    int t = log_seg_ftruncate(s, LOG_FILE_IDX, 0);
    if (t == 0)
        t = log_seg_ftruncate(s, LOG_FILE_TIDX, 0);
    if (t < 0)
        return seg_io_error(s, "truncate", " index", t);
    s->oidx_n = s->tidx_n = 0;
    s->oidx_pend_n = 0;
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
        ssize_t r =
            sysio_pread_full(s->io, log_seg_fd(s, LOG_FILE_LOG), buf, (size_t)size, (off_t)pos);
        if (r != size) {
            /* A short read is no system call failing: say EIO rather than a stale errno. */
            rc = seg_io_error(s, "read", ".log", r < 0 ? (int)r : -EIO);
            goto out;
        }
        /* What the cleaner leaves (offset holes within a batch, empty batches) is valid. */
        if (record_batch_validate_stored(buf, (size_t)size, &b) != 0) {
            why = "corrupt batch (CRC or records)";
            break;
        }
        /* Offsets follow one another (without gaps where compaction cannot have left any):
         * a batch that starts before the previous one ended, or runs past the next
         * segment's base, has a damaged header (its base offset is outside the CRC). */
        if (!log_seg_follows(s, h.base_offset, expect)) {
            why = "offset out of order";
            break;
        }
        if (log_hdr_last(&h) >= end_offset) {
            why = "offsets past the next segment's base";
            break;
        }
        rc = log_seg_index_batch(l, s, pos, &h, h.max_timestamp);
        if (rc)
            goto out;
        /* The epoch cache learns from every batch kept, so that it covers what was written
         * after its file was (or a file that never was). */
        log_epochs_note(l, h.leader_epoch, h.base_offset);
        pos += size;
        expect = log_hdr_last(&h) + 1;
    }
    rc = 0;
    if (pos < file_size) {
        int tr = log_seg_ftruncate(s, LOG_FILE_LOG, (off_t)pos);
        if (tr < 0) {
            rc = seg_io_error(s, "truncate", ".log", tr);
            goto out;
        }
        *lost = file_size - pos;
        *why_out = why;
    }
    s->size = pos;
    rc = log_oidx_sync(s); /* the rebuilt index on disk at once, as the open found it */
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
    /* The counts binary-search the files, which assumes sorted entries; a damaged index file
     * can leave a last entry at or past the cut. Appends after the cut must follow the last
     * entry, so such an index goes (it is sparse: lookups scan without it). */
    if (rc == 0 && ((s->oidx_n > 0 && (s->oidx_last_off >= new_next || s->oidx_last_pos >= pos)) ||
                    (s->tidx_n > 0 && s->tidx_last_off >= new_next))) {
        slog_warn(LOG_MOD,
                  "%s: index entries past the cut at offset %" PRId64 "; dropping the index",
                  s->path, new_next);
        rc = log_oidx_truncate(s, 0);
        if (rc == 0)
            rc = log_tidx_truncate(s, 0);
    }
    if (rc)
        return rc;
    int t = log_seg_ftruncate(s, LOG_FILE_LOG, (off_t)pos);
    if (t < 0)
        return seg_io_error(s, "truncate", ".log", t);
    s->size = pos;
    s->dirty = true;
    /* What is appended from here on was never trusted: the check stops at the cut. */
    log_seg_check_cut(s, pos, new_next);
    rc = log_txn_truncate_seg(s, new_next);
    if (rc)
        return rc == ERR_IO ? rc : ERR_IO;
    rc = log_seg_scan_tail(l, s);
    if (rc)
        return rc == ERR_IO ? rc : ERR_IO;
    s->next_offset = new_next;
    if (pos == 0)
        s->roll_ms = -1;
    return 0;
}
