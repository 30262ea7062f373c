/* SPDX-License-Identifier: Apache-2.0 */
/* The background check: every batch an open trusted without reading its CRC is read once, off
 * the event loop, and a damaged one is quarantined.
 *
 * Why. A clean open (and an unclean one below the recovery point) takes a segment on its
 * index and the headers of its last few batches, so that opening ten thousand partitions
 * costs O(segments) and not O(bytes). A byte flipped on disk elsewhere in a segment (bit rot,
 * a careless copy) would then be found only by a reader: a damaged header refused forever (the
 * partition's consumers stuck while its producers were still acknowledged), a batch whose CRC
 * no longer matches served (most clients do not check CRCs). The check finds both before any
 * reader gets there: until it has passed a batch, a read of it waits (log_read's `pending`).
 *
 * What is checked, per batch, as the rescan of an unclean open checks it: the header (magic,
 * length, offset delta), that it lies whole inside the trusted bytes, that its offsets follow
 * the previous batch's (gaps only where compaction may have left them: log_seg_gaps_ok) and
 * stay below the segment's end offset, and its CRC32C (attributes to the end). Records are not
 * parsed: a batch whose CRC matches holds the bytes that were validated when it was appended.
 *
 * What a damaged batch becomes. The check looks for where intact batches start again: the
 * position the damaged header's own length gives, if a batch that passes the check starts
 * there (or the trusted bytes end there); else the first of the next .index entries whose
 * position holds a batch that passes the check and starts at the offset the entry names;
 * else the end of the trusted bytes. The range from the damaged batch to there is a hole:
 * never served, skipped by every walk of the segment, its offsets skipped by readers as a
 * compaction gap is. One ERROR line names the file, the position, the offsets and the bytes.
 * Nothing in the files changes: the next start checks again and finds the same hole.
 *
 * Why a hole rather than taking the partition offline: the records around the damage are
 * intact and were acknowledged, and appends after it are readable; an offline partition would
 * make them all unreadable until an operator repaired a file, and every write acknowledged
 * before the check reached the damage would become "acknowledged but unreadable". A hole
 * loses only the bytes that are unreadable anyway.
 *
 * Scheduling. The logs to check are queued in the order they started; one slice runs at a time
 * in the process (at most one pool thread, so fsyncs are never starved), each at most
 * log_check_slice_bytes. A reader that waits for a segment moves its log to the head of the
 * queue and that segment first. Event-loop state, like the descriptor cache: the queue, every
 * log and segment field used here; the pool touches only the job and its pinned descriptor. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/slog.h"
#include "log/log_int.h"
#include "record/record.h"

#define CHECK_WINDOW ((size_t)256 << 10) /* the pool's read buffer */
#define CHECK_CANDIDATES 16              /* .index entries tried after a damaged batch */
#define CHECK_IO_RETRIES 3               /* slices failed by a read error before giving up */

static size_t slice_bytes = (size_t)1 << 20;
static uint64_t total_bytes, total_damaged; /* log_check_totals */

/* The logs with bytes to check, in order; event loop only. */
static struct {
    struct log *head, *tail;
} queue;

struct log_check {
    struct log *l;         /* NULL once the log closed */
    struct log_segment *s; /* referenced and pinned for the slice */
    const struct sysio *io;
    int fd;
    bool fd_was_open; /* else closed again after the slice, if idle */
    uint64_t gen;
    bool gaps_ok;
    /* In: the bytes [pos, to) to check, the offset the first batch starts at or after, the
     * bound of every offset. */
    int64_t pos, to, expect, end_offset;
    /* In, after a damaged batch at bad_pos (first offset bad_offset): positions to try as the
     * start of intact batches (each with the offset its .index entry names). */
    bool resync;
    int64_t bad_pos, bad_offset;
    int64_t cand_pos[CHECK_CANDIDATES], cand_off[CHECK_CANDIDATES];
    size_t n_cand;
    /* Out. */
    bool ran;                       /* log_check_run ran (else nothing changes) */
    int rc;                         /* 0 or ERR_IO / ERR_NOMEM */
    int64_t done_pos, done_expect;  /* checked up to (a batch boundary) */
    bool damaged;                   /* a damaged batch at bad_pos */
    const char *why;                /* what was wrong with it */
    bool resumed;                   /* where intact batches start again is known: */
    int64_t resume_pos, resume_off; /* there, and the first offset there */
    /* The read window: buf[0..n) holds the file's bytes from `at`. */
    uint8_t *buf;
    int64_t at;
    size_t n;
};

/* The one slice in flight (its log may close meanwhile). */
static struct log_check *inflight;

void log_check_totals(uint64_t *bytes, uint64_t *damaged)
{
    *bytes = total_bytes;
    *damaged = total_damaged;
}

size_t log_check_slice_bytes(size_t bytes)
{
    size_t old = slice_bytes;
    if (bytes > 0)
        slice_bytes = bytes;
    return old;
}

/* ---- holes ---------------------------------------------------------------------------------- */

const struct log_hole *log_seg_hole_from(const struct log_segment *s, int64_t pos)
{
    size_t lo = 0, hi = s->n_holes; /* the first hole ending after pos */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->holes[mid].end <= pos)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->n_holes ? &s->holes[lo] : NULL;
}

bool log_seg_skip_holes(const struct log_segment *s, int64_t *pos, int64_t *expect)
{
    bool moved = false;
    const struct log_hole *h;

    while ((h = log_seg_hole_from(s, *pos)) != NULL && h->pos <= *pos) {
        *pos = h->end;
        if (expect != NULL)
            *expect = h->end_offset;
        moved = true;
    }
    return moved;
}

bool log_seg_unchecked(const struct log *l, const struct log_segment *s)
{
    return l->checking && s->chk_done < s->chk_end;
}

bool log_seg_servable(const struct log *l, const struct log_segment *s, int64_t pos, int64_t limit,
                      int64_t *serve_end)
{
    const struct log_hole *h = log_seg_hole_from(s, pos);

    *serve_end = limit;
    if (h != NULL && h->pos <= pos)
        return false;
    if (h != NULL && h->pos < *serve_end)
        *serve_end = h->pos;
    if (log_seg_unchecked(l, s)) {
        if (pos >= s->chk_done && pos < s->chk_end)
            return false;
        if (pos < s->chk_done && s->chk_done < *serve_end)
            *serve_end = s->chk_done;
    }
    return true;
}

void log_seg_holes_free(struct log_segment *s)
{
    free(s->holes);
    s->holes = NULL;
    s->n_holes = 0;
}

/* Adds a hole (the check goes forward, so it comes after every other). 0 or ERR_NOMEM. */
static int hole_add(struct log_segment *s, const struct log_hole *h)
{
    struct log_hole *n = realloc(s->holes, (s->n_holes + 1) * sizeof *n);
    if (n == NULL)
        return ERR_NOMEM;
    s->holes = n;
    s->holes[s->n_holes++] = *h;
    return 0;
}

void log_seg_check_cut(struct log_segment *s, int64_t pos, int64_t next)
{
    size_t keep = 0;

    s->chk_gen++;
    if (s->chk_end > pos)
        s->chk_end = pos;
    if (s->chk_end_offset > next)
        s->chk_end_offset = next;
    if (s->chk_done > s->chk_end)
        s->chk_done = s->chk_end;
    if (s->chk_bad >= pos)
        s->chk_bad = -1;
    while (keep < s->n_holes && s->holes[keep].pos < pos) {
        struct log_hole *h = &s->holes[keep++];
        if (h->end > pos)
            h->end = pos;
        if (h->end_offset > next)
            h->end_offset = next;
    }
    s->n_holes = keep;
    if (keep == 0)
        log_seg_holes_free(s);
}

/* ---- the queue ------------------------------------------------------------------------------ */

static void queue_unlink(struct log *l)
{
    if (l->chk_prev)
        l->chk_prev->chk_next = l->chk_next;
    else
        queue.head = l->chk_next;
    if (l->chk_next)
        l->chk_next->chk_prev = l->chk_prev;
    else
        queue.tail = l->chk_prev;
    l->chk_prev = l->chk_next = NULL;
}

static void queue_push(struct log *l, bool front)
{
    l->chk_prev = front ? NULL : queue.tail;
    l->chk_next = front ? queue.head : NULL;
    if (front) {
        if (queue.head)
            queue.head->chk_prev = l;
        queue.head = l;
        if (!queue.tail)
            queue.tail = l;
    } else {
        if (queue.tail)
            queue.tail->chk_next = l;
        queue.tail = l;
        if (!queue.head)
            queue.head = l;
    }
}

void log_check_start(struct log *l)
{
    bool any = false;

    l->chk_want = -1;
    for (size_t i = 0; i < l->n_segs && !any; i++)
        any = l->segs[i]->chk_done < l->segs[i]->chk_end;
    if (!any || l->checking)
        return;
    l->checking = true;
    queue_push(l, false);
}

bool log_check_queued(void)
{
    return queue.head != NULL;
}

void log_check_want(struct log *l, const struct log_segment *s)
{
    if (!l->checking)
        return;
    l->chk_want = s->base;
    if (queue.head != l) {
        queue_unlink(l);
        queue_push(l, true);
    }
}

void log_check_forget(struct log *l)
{
    if (l->checking)
        queue_unlink(l);
    l->checking = false;
    if (inflight != NULL && inflight->l == l)
        inflight->l = NULL;
}

bool log_check_pending(const struct log *l, size_t *damaged)
{
    size_t n = 0;
    bool pending = false;

    for (size_t i = 0; i < l->n_segs; i++) {
        n += l->segs[i]->n_holes;
        pending |= log_seg_unchecked(l, l->segs[i]);
    }
    if (damaged != NULL)
        *damaged = n;
    return pending;
}

/* The segment of l to check next: the one a reader waits for, else the first unchecked. */
static struct log_segment *pick(struct log *l)
{
    if (l->chk_want >= 0) {
        struct log_segment *s = l->segs[log_segs_find(l, l->chk_want)];
        if (s->base == l->chk_want && s->chk_done < s->chk_end)
            return s;
        l->chk_want = -1;
    }
    for (size_t i = 0; i < l->n_segs; i++)
        if (l->segs[i]->chk_done < l->segs[i]->chk_end)
            return l->segs[i];
    return NULL;
}

/* Whether s is still one of l's segments (retention, truncation or a clean may have removed
 * it while its slice ran). */
static bool in_log(const struct log *l, const struct log_segment *s)
{
    return l->n_segs > 0 && l->segs[log_segs_find(l, s->base)] == s;
}

/* Loop: the .index entries after the damaged batch at s->chk_bad, as places to start again. */
static void collect_candidates(struct log_check *c, struct log_segment *s)
{
    int64_t lo = 0, hi = s->oidx_n, off, pos;

    while (lo < hi) { /* the first entry past the damaged batch */
        int64_t mid = lo + (hi - lo) / 2;
        if (log_oidx_entry(s, mid, &off, &pos) != 0)
            return;
        if (pos <= s->chk_bad)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (int64_t i = lo; i < s->oidx_n && c->n_cand < CHECK_CANDIDATES; i++) {
        if (log_oidx_entry(s, i, &off, &pos) != 0 || pos >= s->chk_end)
            break;
        c->cand_pos[c->n_cand] = pos;
        c->cand_off[c->n_cand++] = off;
    }
}

int log_check_next(struct log_check **out)
{
    *out = NULL;
    while (queue.head != NULL) {
        struct log *l = queue.head;
        struct log_segment *s = pick(l);
        struct log_check *c;
        int fd;

        if (s == NULL) {
            size_t holes;
            log_check_pending(l, &holes);
            queue_unlink(l);
            l->checking = false;
            slog_debug(LOG_MOD, "%s: checked; %zu damaged range(s)", l->dir, holes);
            continue;
        }
        c = calloc(1, sizeof *c);
        if (c == NULL)
            return ERR_NOMEM;
        c->fd_was_open = s->fds[LOG_FILE_LOG] >= 0;
        fd = log_seg_fd(s, LOG_FILE_LOG);
        if (fd < 0) {
            /* Out of descriptors, most likely: this log waits behind the others. */
            free(c);
            if (queue.tail != l) {
                queue_unlink(l);
                queue_push(l, false);
            }
            return ERR_IO;
        }
        log_seg_ref(s);
        log_seg_pin(s);
        c->l = l;
        c->s = s;
        c->io = l->io;
        c->fd = fd;
        c->gen = s->chk_gen;
        c->gaps_ok = log_seg_gaps_ok(s);
        c->pos = s->chk_done;
        c->to = s->chk_end;
        c->expect = s->chk_expect;
        c->end_offset = s->chk_end_offset;
        c->at = -1;
        if (s->chk_bad >= 0) {
            c->resync = true;
            c->bad_pos = s->chk_bad;
            c->bad_offset = s->chk_bad_offset;
            collect_candidates(c, s);
        }
        inflight = c;
        *out = c;
        return 0;
    }
    return ERR_NOTFOUND;
}

/* ---- the slice (thread pool) --------------------------------------------------------------- */

/* Makes [pos, pos + len) readable at *p (len <= CHECK_WINDOW, inside [0, to)). 0, ERR_IO
 * (logged), ERR_NOMEM or ERR_TRUNCATED (the file is shorter than it was). */
static int window(struct log_check *c, int64_t pos, size_t len, const uint8_t **p)
{
    ssize_t r;
    size_t want;

    if (c->at >= 0 && pos >= c->at && pos + (int64_t)len <= c->at + (int64_t)c->n) {
        *p = c->buf + (pos - c->at);
        return 0;
    }
    if (c->buf == NULL && (c->buf = malloc(CHECK_WINDOW)) == NULL)
        return ERR_NOMEM;
    want = c->to - pos < (int64_t)CHECK_WINDOW ? (size_t)(c->to - pos) : CHECK_WINDOW;
    if (want < len)
        want = len;
    r = sysio_pread_full(c->io, c->fd, c->buf, want, (off_t)pos);
    if (r < 0) {
        slog_error(LOG_MOD, "check: read of %s.log at %" PRId64 " failed: %s", c->s->path, pos,
                   strerror((int)-r));
        c->at = -1;
        return ERR_IO;
    }
    c->at = pos;
    c->n = (size_t)r;
    if ((size_t)r < len)
        return ERR_TRUNCATED;
    *p = c->buf;
    return 0;
}

/* CRC32C of the file's bytes [from, to), through the window. */
static int crc_range(struct log_check *c, int64_t from, int64_t to, uint32_t *crc)
{
    *crc = 0;
    while (from < to) {
        size_t n = to - from < (int64_t)CHECK_WINDOW ? (size_t)(to - from) : CHECK_WINDOW;
        const uint8_t *p;
        int rc = window(c, from, n, &p);
        if (rc != 0)
            return rc;
        *crc = record_crc32c(*crc, p, n);
        from += (int64_t)n;
    }
    return 0;
}

/* Checks the batch at pos. Returns 0 with *size, *base and *last, ERR_IO / ERR_NOMEM, or
 * ERR_CORRUPT_MESSAGE with *why. `min_base`: the first offset the batch may hold; `exact`:
 * it must start there. *len_size receives the size the header's length field gives when it
 * keeps the batch inside the checked bytes, else -1 (a damaged batch's possible end). */
static int check_batch(struct log_check *c, int64_t pos, int64_t min_base, bool exact,
                       int64_t *size, int64_t *base, int64_t *last, int64_t *len_size,
                       const char **why)
{
    const uint8_t *h;
    struct record_batch b;
    uint32_t crc;
    int64_t len;
    int rc;

    *len_size = -1;
    if (c->to - pos < RECORD_BATCH_HEADER) {
        *why = "torn batch (shorter than a header)";
        return ERR_CORRUPT_MESSAGE;
    }
    rc = window(c, pos, RECORD_BATCH_HEADER, &h);
    if (rc == ERR_TRUNCATED) {
        *why = "torn batch (the file is shorter)";
        return ERR_CORRUPT_MESSAGE;
    }
    if (rc != 0)
        return rc;
    len = (int64_t)log_be32(h + 8) + RECORD_BATCH_OVERHEAD;
    if (len >= RECORD_BATCH_HEADER && len <= c->to - pos)
        *len_size = len;
    if (record_batch_parse_header(h, RECORD_BATCH_HEADER, &b) != 0 || b.last_offset_delta < 0 ||
        b.base_offset < 0 || b.base_offset > INT64_MAX - b.last_offset_delta - 1) {
        *why = "bad batch header";
        return ERR_CORRUPT_MESSAGE;
    }
    if (*len_size < 0) {
        *why = "batch length runs past the segment's end";
        return ERR_CORRUPT_MESSAGE;
    }
    if (b.base_offset < min_base || (exact && b.base_offset != min_base)) {
        *why = "offset out of order";
        return ERR_CORRUPT_MESSAGE;
    }
    if (record_batch_last_offset(&b) >= c->end_offset) {
        *why = "offsets past the segment's end";
        return ERR_CORRUPT_MESSAGE;
    }
    rc = crc_range(c, pos + 21, pos + len, &crc);
    if (rc == ERR_TRUNCATED) {
        *why = "torn batch (the file is shorter)";
        return ERR_CORRUPT_MESSAGE;
    }
    if (rc != 0)
        return rc;
    if (crc != b.crc) {
        *why = "CRC mismatch";
        return ERR_CORRUPT_MESSAGE;
    }
    *size = len;
    *base = b.base_offset;
    *last = record_batch_last_offset(&b);
    return 0;
}

/* Whether intact batches start again at `pos`: the batch there passes the check and starts
 * at `base` (its .index entry's offset), or at min_base or later when base is -1; or pos is
 * the end of the checked bytes. 1 (*first: the first offset there), 0, or ERR_IO / ERR_NOMEM. */
static int starts_again(struct log_check *c, int64_t pos, int64_t min_base, int64_t base,
                        int64_t *first)
{
    int64_t size, last, len_size;
    const char *why;
    int rc;

    if (pos == c->to) {
        *first = c->end_offset;
        return 1;
    }
    if (pos <= c->bad_pos || pos > c->to || (base >= 0 && base < min_base))
        return 0;
    rc = check_batch(c, pos, base >= 0 ? base : min_base, base >= 0, &size, first, &last, &len_size,
                     &why);
    if (rc == ERR_CORRUPT_MESSAGE)
        return 0;
    return rc == 0 ? 1 : rc;
}

static void run_resync(struct log_check *c)
{
    for (size_t i = 0; i < c->n_cand; i++) {
        int64_t first;
        int r = starts_again(c, c->cand_pos[i], c->bad_offset, c->cand_off[i], &first);
        if (r < 0) {
            c->rc = r;
            return;
        }
        if (r == 1) {
            c->resume_pos = c->cand_pos[i];
            c->resume_off = first;
            c->resumed = true;
            return;
        }
    }
    /* Nothing intact found up to the end of the checked bytes: the rest is the hole. */
    c->resume_pos = c->to;
    c->resume_off = c->end_offset;
    c->resumed = true;
}

void log_check_run(struct log_check *c)
{
    int64_t pos = c->pos, expect = c->expect, stop;

    c->ran = true;
    if (c->resync) {
        run_resync(c);
        return;
    }
    stop = c->to - pos > (int64_t)slice_bytes ? pos + (int64_t)slice_bytes : c->to;
    while (pos < c->to && pos < stop) {
        int64_t size, base, last, len_size, first;
        const char *why = NULL;
        int rc = check_batch(c, pos, expect, !c->gaps_ok, &size, &base, &last, &len_size, &why);

        if (rc == 0) {
            pos += size;
            expect = last + 1;
            continue;
        }
        if (rc != ERR_CORRUPT_MESSAGE) {
            c->rc = rc;
            break;
        }
        c->damaged = true;
        c->bad_pos = pos;
        c->bad_offset = expect;
        c->why = why;
        /* A damage that left the length alone: intact batches start right after it. */
        if (len_size > 0) {
            int r = starts_again(c, pos + len_size, expect, -1, &first);
            if (r < 0) {
                c->rc = r;
                break;
            }
            if (r == 1) {
                c->resumed = true;
                c->resume_pos = pos + len_size;
                c->resume_off = first;
            }
        }
        break;
    }
    c->done_pos = pos;
    c->done_expect = expect;
}

/* ---- back on the loop ----------------------------------------------------------------------- */

static void quarantine(struct log_check *c, struct log_segment *s)
{
    struct log_hole h = {c->bad_pos, c->resume_pos, c->bad_offset, c->resume_off};

    if (h.end_offset < h.offset)
        h.end_offset = h.offset;
    if (hole_add(s, &h) != 0) {
        /* Without the hole its bytes would be served: check the batch again later. */
        slog_error(LOG_MOD, "%s.log: out of memory quarantining a damaged batch; checking it again",
                   s->path);
        return;
    }
    slog_error(LOG_MOD,
               "%s.log: damaged batch at position %" PRId64 " (offset %" PRId64 "): %s; "
               "quarantined %" PRId64 " bytes holding offsets %" PRId64 "..%" PRId64
               ": never served, readers skip them",
               s->path, h.pos, h.offset, c->why ? c->why : "no intact batch follows", h.end - h.pos,
               h.offset, h.end_offset - 1);
    s->chk_done = h.end;
    s->chk_expect = h.end_offset;
    s->chk_bad = -1;
    total_damaged++;
}

int log_check_done(struct log_check *c)
{
    struct log_segment *s = c->s;
    struct log *l = c->l;
    int rc = c->rc;

    inflight = NULL;
    if (c->ran && l != NULL && in_log(l, s) && c->gen == s->chk_gen && c->rc != ERR_NOMEM) {
        if (c->rc == ERR_IO) {
            /* The disk refuses to read these bytes: a reader would get the same error, so
             * after a few tries they are left to the read path rather than waited for. */
            if (++s->chk_io_errors >= CHECK_IO_RETRIES) {
                slog_error(LOG_MOD,
                           "%s.log: cannot be checked past position %" PRId64
                           " (read errors); the rest is served unchecked",
                           s->path, c->pos);
                s->chk_done = s->chk_end;
            }
        } else if (c->resync) {
            c->why = s->chk_why;
            quarantine(c, s);
        } else {
            total_bytes += (uint64_t)(c->done_pos - c->pos);
            s->chk_done = c->done_pos;
            s->chk_expect = c->done_expect;
            if (c->damaged && c->resumed) {
                quarantine(c, s);
            } else if (c->damaged) {
                /* Its end is looked for in the next slice (the .index is read on the loop). */
                s->chk_done = c->bad_pos;
                s->chk_expect = c->bad_offset;
                s->chk_bad = c->bad_pos;
                s->chk_bad_offset = c->bad_offset;
                s->chk_why = c->why;
            }
        }
        if (s->chk_done >= s->chk_end && l->chk_want == s->base)
            l->chk_want = -1;
    }
    log_seg_unpin(s);
    if (!c->fd_was_open)
        log_seg_close_idle(s);
    log_seg_unref(s);
    free(c->buf);
    free(c);
    return rc;
}
