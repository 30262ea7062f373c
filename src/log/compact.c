/* SPDX-License-Identifier: Apache-2.0 */
/* log compaction: the cleaner of cleanup.policy=compact logs, after Kafka's LogCleaner.
 *
 * What a clean keeps. The segments below the cleanable end (never the active one) are
 * rewritten: a record stays if it is the latest of its key (its offset >= the key's entry in
 * the key map), or its key is not in the map. Records keep their offsets: a batch keeps its
 * baseOffset and lastOffsetDelta (so its producer's last sequence stays right) and loses the
 * records that went, leaving holes; a batch that loses every record goes, unless it is the
 * last batch of a producer (the caller names them), which stays as an empty batch (header
 * only, recordCount 0), as Kafka does. Control batches stay whole. Records without a key go
 * (Kafka drops them too). Batches whose records all stay are copied byte for byte, compressed
 * or not; a batch rewritten is compressed again with its own codec (record_compress), with
 * the header fields it had (producer id, epoch, base sequence, leader epoch, maxTimestamp).
 *
 * Tombstones (null values), Kafka's delete horizon (KIP-534): the first clean that keeps a
 * tombstone in a batch without the delete-horizon attribute rewrites that batch with the
 * attribute set and baseTimestamp = now + delete.retention.ms (record timestamp deltas
 * re-encoded so every record keeps its timestamp). A later clean drops the batch's tombstones
 * once now >= that horizon. So a tombstone lives at least delete.retention.ms after it was
 * first cleaned, long enough for a consumer that read the key to read its deletion.
 *
 * The key map: 16-byte hashes of keys → latest offset, built over the dirty range
 * [first_dirty, cleanable end) first. It grows by doubling up to map_bytes
 * (log.cleaner.dedupe.buffer.size; 24 bytes an entry, filled to 90%). When it is full the
 * dirty range stops at the batch where it filled: the clean goes on to the end of that batch's
 * segment, and the new cleaner checkpoint is that batch's base offset, so the next clean
 * starts there. A map that cannot hold one batch's keys makes no progress: the clean fails.
 *
 * Groups and files. Old segments are rewritten into groups: one new segment per run of old
 * ones whose total size (new bytes so far + the next old segment's size) stays within
 * segment.bytes, named after the group's first base. A group never ends with an old segment
 * that kept nothing unless that is its only one (segments whose records were all superseded
 * wait for a later segment that keeps something, and join its group; at the end of the range
 * each becomes an empty segment of its own), so the new segment's last offset is at or past
 * the base of every old segment it replaces — which is how recovery finds them. The new files are
 * written as <base>.{log,index,timeindex}.cleaned and fsynced, renamed to .swap (indexes first, the
 * .log last: <base>.log.swap is the commit point) and the directory fsynced; then, on the event
 * loop, the group's other old segments are unlinked and the .swap files renamed over the old names,
 * and the segment list is updated. At open, log_clean_recover finishes a committed swap or deletes
 * what an uncommitted one left, so a crash at any point leaves each group either old or new, never
 * a mix, and no stray files.
 *
 * Reads during a clean use the old segments' descriptors until the swap; a reader holding a
 * slice keeps the old file open after it. The pool only reads old .log files (through a
 * descriptor the loop opened and pinned) and writes new files. */
#include <dirent.h>
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "base/fault.h"
#include "base/mem.h"
#include "base/slog.h"
#include "log/log_int.h"
#include "record/record.h"

#define PATH_MAX_LEN 4096
#define READ_CHUNK ((size_t)1 << 20)
#define WRITE_CHUNK ((size_t)1 << 20)
#define MAP_ENTRY_BYTES 24
#define MAP_INITIAL 4096

/* ---- test faults ------------------------------------------------------------------------- */

/* true: stop here as if the process died (a unit test's fault_stop_at("cleaner:<stage>")); with
 * TALLY_TEST_FAULT=cleaner:<stage> the process dies here for real. Test builds only (fault.h):
 * in a release build this is `false` and nothing of it is compiled. */
#ifdef TALLY_TEST_HOOKS
static bool fault(const char *stage)
{
    char name[32];
    snprintf(name, sizeof name, "cleaner:%s", stage);
    return fault_stop(name);
}
#else
#define fault(stage) false
#endif

/* ---- the key map --------------------------------------------------------------------------- */

static inline uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

static inline uint64_t rotl64(uint64_t x, int r)
{
    return (x << r) | (x >> (64 - r));
}

/* A 128-bit hash of a key in two independent 64-bit lanes (murmur3-style mixing): two keys
 * collide with probability ~2^-128, where a collision would drop a record. */
static void key_hash(const uint8_t *k, size_t n, uint64_t *a, uint64_t *b)
{
    uint64_t h1 = 0x9e3779b97f4a7c15ULL ^ (uint64_t)n, h2 = 0xc2b2ae3d27d4eb4fULL + (uint64_t)n;
    uint64_t w;

    while (n >= 8) {
        memcpy(&w, k, 8);
        h1 = rotl64(h1 ^ (w * 0x87c37b91114253d5ULL), 31) * 0x4cf5ad432745937fULL;
        h2 = rotl64(h2 + (w ^ 0x52dce729ULL), 29) * 0x9e3779b97f4a7c15ULL;
        k += 8;
        n -= 8;
    }
    w = 0;
    memcpy(&w, k, n);
    h1 = rotl64(h1 ^ (w * 0x87c37b91114253d5ULL), 31) * 0x4cf5ad432745937fULL;
    h2 = rotl64(h2 + (w ^ 0x52dce729ULL), 29) * 0x9e3779b97f4a7c15ULL;
    *a = mix64(h1 + h2) | 1; /* never 0: an all-zero entry is free */
    *b = mix64(h2 ^ rotl64(h1, 17));
}

struct map_entry {
    uint64_t a, b;
    int64_t offset;
};

struct key_map {
    struct map_entry *e;
    size_t cap, n, max_cap;
};

static int map_init(struct key_map *m, size_t max_bytes)
{
    size_t max_cap = MAP_INITIAL;

    while (max_cap * 2 * MAP_ENTRY_BYTES <= max_bytes)
        max_cap *= 2;
    m->max_cap = max_cap;
    m->cap = MAP_INITIAL < max_cap ? MAP_INITIAL : max_cap;
    m->n = 0;
    m->e = calloc(m->cap, sizeof *m->e);
    return m->e ? 0 : ERR_NOMEM;
}

static struct map_entry *map_slot(struct map_entry *e, size_t cap, uint64_t a, uint64_t b)
{
    size_t i = (size_t)(b & (cap - 1));

    while (e[i].a != 0 && (e[i].a != a || e[i].b != b))
        i = (i + 1) & (cap - 1);
    return &e[i];
}

static int map_grow(struct key_map *m)
{
    size_t cap = m->cap * 2;
    struct map_entry *e = calloc(cap, sizeof *e);

    if (e == NULL)
        return ERR_NOMEM;
    for (size_t i = 0; i < m->cap; i++)
        if (m->e[i].a != 0)
            *map_slot(e, cap, m->e[i].a, m->e[i].b) = m->e[i];
    free(m->e);
    m->e = e;
    m->cap = cap;
    return 0;
}

/* Records offset as the key's latest. Returns 0, ERR_NOMEM, or ERR_EXISTS when the map is
 * full (bound reached) and the key is new. */
static int map_put(struct key_map *m, uint64_t a, uint64_t b, int64_t offset)
{
    struct map_entry *s = map_slot(m->e, m->cap, a, b);

    if (s->a != 0) {
        s->offset = offset;
        return 0;
    }
    if ((m->n + 1) * 4 > m->cap * 3 && m->cap < m->max_cap) {
        int rc = map_grow(m);
        if (rc != 0)
            return rc;
        s = map_slot(m->e, m->cap, a, b);
    } else if ((m->n + 1) * 10 > m->cap * 9) {
        return ERR_EXISTS;
    }
    s->a = a;
    s->b = b;
    s->offset = offset;
    m->n++;
    return 0;
}

static bool map_get(const struct key_map *m, uint64_t a, uint64_t b, int64_t *offset)
{
    const struct map_entry *s = map_slot(m->e, m->cap, a, b);

    if (s->a == 0)
        return false;
    *offset = s->offset;
    return true;
}

/* ---- reading batches from a segment (pool) ------------------------------------------------ */

struct seg_reader {
    const struct sysio *io;
    int fd;
    int64_t pos, end; /* file position of buf[at], end of the segment's bytes */
    uint8_t *buf;
    size_t cap, at, n; /* buf[at..n) holds unread bytes */
    size_t max_batch;
    const struct log_hole *holes; /* the segment's quarantined ranges (check.c): skipped */
    size_t n_holes, hole;         /* the next hole not yet passed */
};

/* The next whole batch: *batch points into the reader's buffer until the next call. Returns 0,
 * ERR_NOTFOUND at the end, ERR_IO, ERR_CORRUPT_MESSAGE (a header that does not parse or a batch
 * running past the end), ERR_MESSAGE_TOO_LARGE (past max_batch), ERR_NOMEM. */
static int reader_next(struct seg_reader *r, const uint8_t **batch, size_t *len)
{
    struct record_batch b;
    size_t need;

    /* A quarantined range is not copied: the new segment holds the batches around it. */
    while (r->hole < r->n_holes && r->holes[r->hole].pos <= r->pos + (int64_t)r->at) {
        if (r->holes[r->hole].end > r->pos + (int64_t)r->at) {
            r->pos = r->holes[r->hole].end;
            r->at = r->n = 0;
        }
        r->hole++;
    }
    if (r->pos + (int64_t)r->at >= r->end)
        return ERR_NOTFOUND;
    /* At most two refills: one for the header, one for a batch larger than the first. */
    for (int pass = 0; pass < 3; pass++) {
        size_t avail = r->n - r->at;
        need = RECORD_BATCH_HEADER;
        if (avail >= RECORD_BATCH_HEADER) {
            if (record_batch_parse_header(r->buf + r->at, avail, &b) != 0)
                return ERR_CORRUPT_MESSAGE;
            need = record_batch_size(&b);
            if (need > r->max_batch)
                return ERR_MESSAGE_TOO_LARGE;
            if (need <= avail) {
                *batch = r->buf + r->at;
                *len = need;
                r->at += need;
                return 0;
            }
        }
        if (pass == 2)
            break;
        /* Refill: read from the first unread byte on. */
        int64_t file_at = r->pos + (int64_t)r->at;
        size_t want = need > READ_CHUNK ? need : READ_CHUNK;
        if ((int64_t)want > r->end - file_at)
            want = (size_t)(r->end - file_at);
        if (want < need)
            return ERR_CORRUPT_MESSAGE;
        if (want > r->cap) {
            uint8_t *nb = malloc(want);
            if (nb == NULL)
                return ERR_NOMEM;
            free(r->buf);
            r->buf = nb;
            r->cap = want;
        }
        ssize_t got = sysio_pread_full(r->io, r->fd, r->buf, want, (off_t)file_at);
        if (got < 0) {
            slog_error(LOG_MOD, "cleaner: read of a segment failed: %s", strerror((int)-got));
            return ERR_IO;
        }
        r->pos = file_at;
        r->at = 0;
        r->n = (size_t)got;
        if ((size_t)got < need)
            return ERR_CORRUPT_MESSAGE;
    }
    return ERR_CORRUPT_MESSAGE;
}

/* ---- the job ------------------------------------------------------------------------------ */

struct clean_seg {
    struct log_segment *s; /* referenced */
    int64_t base, next, size;
    struct log_hole *holes; /* a copy of its quarantined ranges at begin (the pool reads it) */
    size_t n_holes;
};

enum clean_phase { PH_MAP, PH_COPY, PH_DONE };

struct log_clean {
    struct log *l;
    struct log_clean_config cfg;
    int64_t *keep;
    uint64_t trunc_gen;
    struct clean_seg *segs; /* the segments below the cleanable end, at begin */
    size_t n_segs, n_copy;  /* n_copy: those with base < map_end */
    int64_t first_dirty, end, map_end;
    int64_t segment_bytes, index_interval; /* the log's config at begin (the pool reads these) */
    enum clean_phase phase;
    size_t cur;    /* the segment the next step reads */
    size_t tail;   /* at the end: the next pending segment to write as its own group */
    size_t pinned; /* segment pinned for the step in flight, SIZE_MAX if none */
    int fd;        /* its .log descriptor */
    struct key_map map;
    struct seg_reader rd;

    /* The group being written. */
    bool grp_open;
    size_t grp_first, grp_last;
    char grp_path[PATH_MAX_LEN]; /* "<dir>/<20-digit base>" */
    int out_fd;
    int64_t out_size;
    uint8_t *wbuf;
    size_t wlen;
    uint8_t *oidx, *tidx;
    size_t oidx_n, tidx_n, oidx_cap, tidx_cap;
    int64_t since_index, max_ts, max_ts_off, tidx_last_ts;
    /* A group written and committed (.swap), waiting for the loop to swap it in. */
    bool swap_ready;
    size_t swap_first, swap_last;
    char swap_path[PATH_MAX_LEN];

    /* Scratch for rebuilding a batch. */
    uint8_t *rb;
    size_t rb_cap;
    struct record_item *kept;
    size_t kept_cap;

    int rc;
    bool crashed; /* a test fault stopped it: leave the files */
    struct log_clean_stats st;
};

static void seg_path(const struct log *l, int64_t base, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s/%020" PRId64, l->dir, base);
}

static void file_name(char *buf, size_t cap, const char *path, const char *ext)
{
    snprintf(buf, cap, "%s%s", path, ext);
}

/* The segment largest timestamp, or its file's mtime without one (as retention). */
static int64_t seg_largest_ts(const struct log_segment *s)
{
    int64_t mtime;
    if (s->max_ts >= 0)
        return s->max_ts;
    mtime = log_seg_mtime_ms(s);
    return mtime >= 0 ? mtime : INT64_MAX;
}

void log_clean_info(struct log *l, int64_t first_dirty, int64_t upper_bound, int64_t now_ms,
                    int64_t min_lag_ms, struct log_clean_info *out)
{
    int64_t end = l->segs[0]->base;

    if (first_dirty < l->start)
        first_dirty = l->start;
    if (first_dirty < l->segs[0]->base)
        first_dirty = l->segs[0]->base;
    for (size_t i = 0; i + 1 < l->n_segs; i++) {
        struct log_segment *s = l->segs[i];
        if (l->segs[i + 1]->base > upper_bound)
            break;
        if (min_lag_ms > 0 && seg_largest_ts(s) > now_ms - min_lag_ms)
            break;
        end = l->segs[i + 1]->base;
    }
    out->first_dirty = first_dirty;
    out->cleanable_end = end;
    out->clean_bytes = out->dirty_bytes = 0;
    out->first_dirty_ts = -1;
    for (size_t i = 0; i + 1 < l->n_segs && l->segs[i]->base < end; i++) {
        struct log_segment *s = l->segs[i];
        if (l->segs[i + 1]->base <= first_dirty) {
            out->clean_bytes += s->size;
            continue;
        }
        out->dirty_bytes += s->size;
        if (out->first_dirty_ts < 0 && s->size > 0) {
            struct log_batch_hdr h;
            int64_t pos;
            if (log_seg_find(s, first_dirty, s->size, &pos, &h) == 0)
                out->first_dirty_ts = h.max_timestamp;
            else
                out->first_dirty_ts = seg_largest_ts(s);
        }
    }
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static bool must_keep(const struct log_clean *c, int64_t base)
{
    return c->cfg.n_keep > 0 &&
           bsearch(&base, c->keep, c->cfg.n_keep, sizeof *c->keep, cmp_i64) != NULL;
}

/* Loop: opens and pins the .log of segs[i] for the next step. */
static int pin_for_step(struct log_clean *c, size_t i)
{
    int fd = log_seg_fd(c->segs[i].s, LOG_FILE_LOG);

    if (fd < 0)
        return ERR_IO;
    log_seg_pin(c->segs[i].s);
    c->pinned = i;
    c->fd = fd;
    return 0;
}

static void unpin(struct log_clean *c)
{
    if (c->pinned != SIZE_MAX)
        log_seg_unpin(c->segs[c->pinned].s);
    c->pinned = SIZE_MAX;
    c->fd = -1;
}

int log_clean_begin(struct log *l, const struct log_clean_config *cfg, struct log_clean **out)
{
    struct log_clean_info info;
    struct log_clean *c;
    size_t n = 0;
    int rc;

    *out = NULL;
    if (l->cleaning != NULL)
        return ERR_EXISTS;
    if (atomic_load(&l->failed))
        return ERR_KAFKA_STORAGE_ERROR;
    log_clean_info(l, cfg->first_dirty, cfg->upper_bound, cfg->now_ms, cfg->min_lag_ms, &info);
    while (n + 1 < l->n_segs && l->segs[n]->base < info.cleanable_end) {
        /* Not before the background check has read the segments (check.c): a damaged base
         * offset is outside the CRC the cleaner checks, and what it writes is trusted. */
        if (log_seg_unchecked(l, l->segs[n]))
            return ERR_NOTFOUND;
        n++;
    }
    if (n == 0)
        return ERR_NOTFOUND;
    c = calloc(1, sizeof *c);
    if (c == NULL)
        return ERR_NOMEM;
    c->l = l;
    c->cfg = *cfg;
    c->pinned = SIZE_MAX;
    c->fd = -1;
    c->out_fd = -1;
    c->trunc_gen = l->trunc_gen;
    c->segment_bytes = l->cfg.segment_bytes;
    c->index_interval = l->cfg.index_interval_bytes;
    c->first_dirty = info.first_dirty;
    c->tail = SIZE_MAX;
    c->end = info.cleanable_end;
    c->st.clean_upto = -1;
    c->st.next_horizon = INT64_MAX;
    if (c->cfg.max_batch < RECORD_BATCH_HEADER)
        c->cfg.max_batch = RECORD_BATCH_HEADER;
    c->segs = calloc(n, sizeof *c->segs);
    c->keep = cfg->n_keep ? malloc(cfg->n_keep * sizeof *c->keep) : NULL;
    c->wbuf = malloc(WRITE_CHUNK);
    if (c->segs == NULL || (cfg->n_keep && c->keep == NULL) || c->wbuf == NULL) {
        rc = ERR_NOMEM;
        goto err;
    }
    if (cfg->n_keep) {
        memcpy(c->keep, cfg->keep, cfg->n_keep * sizeof *c->keep);
        qsort(c->keep, cfg->n_keep, sizeof *c->keep, cmp_i64);
    }
    c->cfg.keep = NULL;
    rc = map_init(&c->map, cfg->map_bytes);
    if (rc != 0)
        goto err;
    for (size_t i = 0; i < n; i++) {
        struct log_segment *s = l->segs[i];
        log_seg_ref(s);
        c->segs[i] = (struct clean_seg){s, s->base, l->segs[i + 1]->base, s->size, NULL, 0};
        c->n_segs++;
        if (s->n_holes > 0) {
            c->segs[i].holes = malloc(s->n_holes * sizeof *s->holes);
            if (c->segs[i].holes == NULL) {
                rc = ERR_NOMEM;
                goto err;
            }
            memcpy(c->segs[i].holes, s->holes, s->n_holes * sizeof *s->holes);
            c->segs[i].n_holes = s->n_holes;
        }
    }
    c->rd.io = l->io;
    c->rd.max_batch = c->cfg.max_batch;
    /* The key map covers the dirty range: start at the segment holding first_dirty. */
    c->phase = PH_MAP;
    while (c->cur + 1 < c->n_segs && c->segs[c->cur].next <= c->first_dirty)
        c->cur++;
    if (c->first_dirty >= c->end) {
        /* Nothing dirty: a clean for tombstones whose horizon passed, with an empty map. */
        c->map_end = c->end;
        c->phase = PH_COPY;
        c->cur = 0;
        c->n_copy = c->n_segs;
    }
    rc = pin_for_step(c, c->cur);
    if (rc != 0)
        goto err;
    l->cleaning = c;
    *out = c;
    return 0;

err:
    for (size_t i = 0; i < c->n_segs; i++) {
        log_seg_unref(c->segs[i].s);
        free(c->segs[i].holes);
    }
    free(c->segs);
    free(c->keep);
    free(c->wbuf);
    free(c->map.e);
    free(c);
    return rc;
}

/* Parses the header and checks the CRC: what the cleaner needs before trusting a batch read
 * back (its records are walked by the iterator, which refuses malformed ones). */
static int batch_check(const uint8_t *batch, size_t len, struct record_batch *b)
{
    if (record_batch_parse(batch, len, b) != 0 || b->record_count < 0 || b->last_offset_delta < 0 ||
        (int64_t)b->record_count > (int64_t)b->last_offset_delta + 1)
        return ERR_CORRUPT_MESSAGE;
    if (record_crc32c(0, batch + 21, len - 21) != b->crc)
        return ERR_CORRUPT_MESSAGE;
    return 0;
}

/* ---- the map pass -------------------------------------------------------------------------- */

static void reader_start(struct log_clean *c, size_t i)
{
    c->rd.fd = c->fd;
    c->rd.pos = 0;
    c->rd.at = c->rd.n = 0;
    c->rd.end = c->segs[i].size;
    c->rd.holes = c->segs[i].holes;
    c->rd.n_holes = c->segs[i].n_holes;
    c->rd.hole = 0;
}

/* Adds the keys of segs[cur]'s records in [first_dirty, end) to the map. *full: the map
 * filled at the batch starting at *stop. */
static int map_segment(struct log_clean *c, bool *full, int64_t *stop)
{
    const uint8_t *batch;
    size_t len;
    int rc;

    *full = false;
    reader_start(c, c->cur);
    while ((rc = reader_next(&c->rd, &batch, &len)) == 0) {
        struct record_batch b;
        struct record_iter it;
        struct record_item r;

        c->st.bytes_read += (int64_t)len;
        if (record_batch_parse(batch, len, &b) != 0)
            return ERR_CORRUPT_MESSAGE;
        if (record_batch_last_offset(&b) < c->first_dirty || (b.attributes & RECORD_ATTR_CONTROL))
            continue;
        /* The copy pass trusts what this pass checked. */
        if (batch_check(batch, len, &b) != 0)
            return ERR_CORRUPT_MESSAGE;
        if (b.base_offset >= c->end)
            break;
        rc = record_iter_init(&it, batch, len, c->cfg.max_batch);
        while (rc == 0 && (rc = record_iter_next(&it, &r)) == 0) {
            uint64_t ha, hb;
            if (r.key == NULL || r.offset < c->first_dirty)
                continue;
            key_hash(r.key, (size_t)r.key_len, &ha, &hb);
            rc = map_put(&c->map, ha, hb, r.offset);
        }
        record_iter_close(&it);
        if (rc == ERR_EXISTS) {
            *full = true;
            *stop = b.base_offset;
            return 0;
        }
        if (rc != ERR_NOTFOUND)
            return rc == ERR_NOMEM ? rc : ERR_CORRUPT_MESSAGE;
    }
    return rc == ERR_NOTFOUND ? 0 : rc;
}

/* ---- writing the new segment (pool) ------------------------------------------------------ */

static int out_flush(struct log_clean *c)
{
    int w;

    if (c->wlen == 0)
        return 0;
    w = sysio_pwrite_all(c->l->io, c->out_fd, c->wbuf, c->wlen, (off_t)(c->out_size - c->wlen));
    if (w < 0) {
        slog_error(LOG_MOD, "cleaner: write of %s.log.cleaned failed: %s", c->grp_path,
                   strerror(-w));
        return ERR_IO;
    }
    c->wlen = 0;
    return 0;
}

static int out_write(struct log_clean *c, const uint8_t *p, size_t n)
{
    while (n > 0) {
        size_t room = WRITE_CHUNK - c->wlen, k = n < room ? n : room;
        memcpy(c->wbuf + c->wlen, p, k);
        c->wlen += k;
        c->out_size += (int64_t)k;
        p += k;
        n -= k;
        if (c->wlen == WRITE_CHUNK) {
            int rc = out_flush(c);
            if (rc != 0)
                return rc;
        }
    }
    return 0;
}

static int grow(uint8_t **buf, size_t *cap, size_t need)
{
    uint8_t *nb;
    size_t nc = *cap ? *cap : 4096;

    if (need <= *cap)
        return 0;
    while (nc < need)
        nc *= 2;
    nb = mem_grow(*buf, *cap, nc); /* on the thread pool, up to max.message.bytes: not realloc */
    if (nb == NULL)
        return ERR_NOMEM;
    *buf = nb;
    *cap = nc;
    return 0;
}

/* The index entries for a batch written at pos (segment.c's index.interval.bytes rule). */
static int index_batch(struct log_clean *c, int64_t pos, int64_t base, int64_t last, int64_t max_ts,
                       int64_t size)
{
    int64_t gbase = c->segs[c->grp_first].base, new_max = c->max_ts, new_max_off = c->max_ts_off;

    if (max_ts > new_max) {
        new_max = max_ts;
        new_max_off = last;
    }
    if (c->since_index > c->index_interval) {
        if (grow(&c->oidx, &c->oidx_cap, (c->oidx_n + 1) * LOG_OIDX_ENTRY) != 0)
            return ERR_NOMEM;
        log_put32(c->oidx + c->oidx_n * LOG_OIDX_ENTRY, (uint32_t)(int32_t)(base - gbase));
        log_put32(c->oidx + c->oidx_n * LOG_OIDX_ENTRY + 4, (uint32_t)(int32_t)pos);
        c->oidx_n++;
        if (new_max > c->tidx_last_ts) {
            if (grow(&c->tidx, &c->tidx_cap, (c->tidx_n + 1) * LOG_TIDX_ENTRY) != 0)
                return ERR_NOMEM;
            log_put64(c->tidx + c->tidx_n * LOG_TIDX_ENTRY, (uint64_t)new_max);
            log_put32(c->tidx + c->tidx_n * LOG_TIDX_ENTRY + 8,
                      (uint32_t)(int32_t)(new_max_off - gbase));
            c->tidx_n++;
            c->tidx_last_ts = new_max;
        }
        c->since_index = size;
    } else {
        c->since_index += size;
    }
    c->max_ts = new_max;
    c->max_ts_off = new_max_off;
    return 0;
}

static int emit(struct log_clean *c, const uint8_t *batch, size_t len)
{
    struct record_batch b;
    int64_t pos = c->out_size;
    int rc;

    record_batch_parse_header(batch, len, &b);
    rc = out_write(c, batch, len);
    if (rc == 0)
        rc = index_batch(c, pos, b.base_offset, record_batch_last_offset(&b), b.max_timestamp,
                         (int64_t)len);
    c->st.bytes_written += (int64_t)len;
    return rc;
}

/* ---- rebuilding a batch -------------------------------------------------------------------- */

static size_t vsize(int64_t v)
{
    uint64_t z = ((uint64_t)v << 1) ^ (0u - (uint64_t)(v < 0));
    size_t n = 1;
    while (z >= 0x80) {
        z >>= 7;
        n++;
    }
    return n;
}

static uint8_t *vput(uint8_t *p, int64_t v)
{
    uint64_t z = ((uint64_t)v << 1) ^ (0u - (uint64_t)(v < 0));
    while (z >= 0x80) {
        *p++ = (uint8_t)(z | 0x80);
        z >>= 7;
    }
    *p++ = (uint8_t)z;
    return p;
}

static uint8_t *bput(uint8_t *p, const uint8_t *d, int32_t n)
{
    p = vput(p, d == NULL ? -1 : n);
    if (d != NULL && n > 0) {
        memcpy(p, d, (size_t)n);
        p += n;
    }
    return p;
}

/* The body of a record re-encoded with timestampDelta `tsd` (everything else as it was). */
static size_t body_size(const struct record_item *r, int64_t tsd)
{
    return 1 + vsize(tsd) + vsize(r->offset_delta) +
           (r->key ? vsize(r->key_len) + (size_t)r->key_len : 1) +
           (r->value ? vsize(r->value_len) + (size_t)r->value_len : 1) + vsize(r->header_count) +
           (size_t)(r->headers_end - r->headers);
}

/* Writes the batch `orig` (header b) with only the kept records, compressed again with its
 * codec (record_compress) if it had one; with
 * `horizon` >= 0 the delete-horizon attribute is set and baseTimestamp becomes horizon (the
 * records' deltas re-encoded). n == 0 writes Kafka's empty batch. */
static int rebuild(struct log_clean *c, const struct record_batch *b, const uint8_t *orig,
                   const struct record_item *kept, size_t n, int64_t horizon)
{
    bool lat = (b->attributes & RECORD_ATTR_LOG_APPEND_TIME) != 0;
    bool retime = horizon >= 0 && !lat;
    int64_t base_ts = horizon >= 0 ? horizon : b->base_timestamp;
    int16_t attrs = (int16_t)(b->attributes & ~RECORD_ATTR_COMPRESSION_MASK);
    size_t size = RECORD_BATCH_HEADER;
    uint8_t *p;

    if (n == 0)
        base_ts = b->max_timestamp;
    if (horizon >= 0)
        attrs |= RECORD_ATTR_DELETE_HORIZON;
    for (size_t i = 0; i < n; i++) {
        if (retime) {
            size_t body = body_size(&kept[i], kept[i].timestamp - base_ts);
            size += vsize((int64_t)body) + body;
        } else {
            size += kept[i].raw_len;
        }
    }
    if (size - RECORD_BATCH_OVERHEAD > INT32_MAX || grow(&c->rb, &c->rb_cap, size) != 0)
        return ERR_NOMEM;
    memcpy(c->rb, orig, RECORD_BATCH_HEADER);
    log_put32(c->rb + 8, (uint32_t)(size - RECORD_BATCH_OVERHEAD));
    c->rb[21] = (uint8_t)((uint16_t)attrs >> 8);
    c->rb[22] = (uint8_t)attrs;
    log_put64(c->rb + 27, (uint64_t)base_ts);
    log_put32(c->rb + 57, (uint32_t)n);
    p = c->rb + RECORD_BATCH_HEADER;
    for (size_t i = 0; i < n; i++) {
        const struct record_item *r = &kept[i];
        if (!retime) {
            memcpy(p, r->raw, r->raw_len);
            p += r->raw_len;
            continue;
        }
        int64_t tsd = r->timestamp - base_ts;
        p = vput(p, (int64_t)body_size(r, tsd));
        *p++ = 0;
        p = vput(p, tsd);
        p = vput(p, r->offset_delta);
        p = bput(p, r->key, r->key_len);
        p = bput(p, r->value, r->value_len);
        p = vput(p, r->header_count);
        memcpy(p, r->headers, (size_t)(r->headers_end - r->headers));
        p += r->headers_end - r->headers;
    }
    int codec = b->attributes & RECORD_ATTR_COMPRESSION_MASK;
    if (codec != RECORD_CODEC_NONE && n > 0) {
        /* Written back with the batch's codec. */
        uint8_t *z = NULL;
        size_t zlen;
        int rc = record_compress(codec, c->rb + RECORD_BATCH_HEADER, size - RECORD_BATCH_HEADER, &z,
                                 &zlen);
        if (rc != 0)
            return rc;
        if (zlen + RECORD_BATCH_HEADER - RECORD_BATCH_OVERHEAD > INT32_MAX ||
            grow(&c->rb, &c->rb_cap, RECORD_BATCH_HEADER + zlen) != 0) {
            free(z);
            return ERR_NOMEM;
        }
        memcpy(c->rb + RECORD_BATCH_HEADER, z, zlen);
        free(z);
        size = RECORD_BATCH_HEADER + zlen;
        attrs = (int16_t)(attrs | codec);
        log_put32(c->rb + 8, (uint32_t)(size - RECORD_BATCH_OVERHEAD));
        c->rb[21] = (uint8_t)((uint16_t)attrs >> 8);
        c->rb[22] = (uint8_t)attrs;
    }
    log_put32(c->rb + 17, record_crc32c(0, c->rb + 21, size - 21));
    return emit(c, c->rb, size);
}

/* Copies what stays of one batch into the group. *wrote: a batch was written. */
static int clean_batch(struct log_clean *c, const uint8_t *batch, size_t len, bool *wrote)
{
    struct record_batch b;
    struct record_iter it;
    struct record_item r;
    size_t n = 0, tombs = 0;
    bool horizon_set, expired;
    int rc;

    *wrote = false;
    /* Batches of the dirty range had their CRC checked by the map pass. */
    if (record_batch_parse(batch, len, &b) != 0)
        return ERR_CORRUPT_MESSAGE;
    if ((record_batch_last_offset(&b) < c->first_dirty || b.base_offset >= c->map_end ||
         (b.attributes & RECORD_ATTR_CONTROL)) &&
        batch_check(batch, len, &b) != 0)
        return ERR_CORRUPT_MESSAGE;
    c->st.records_read += b.record_count;
    if (b.attributes & RECORD_ATTR_CONTROL) {
        c->st.records_kept += b.record_count;
        *wrote = true;
        return emit(c, batch, len);
    }
    horizon_set = (b.attributes & RECORD_ATTR_DELETE_HORIZON) != 0;
    expired = horizon_set && c->cfg.now_ms >= b.base_timestamp;
    if ((size_t)b.record_count > c->kept_cap) {
        size_t cap = (size_t)b.record_count;
        struct record_item *k = realloc(c->kept, cap * sizeof *k);
        if (k == NULL)
            return ERR_NOMEM;
        c->kept = k;
        c->kept_cap = cap;
    }
    rc = record_iter_init(&it, batch, len, c->cfg.max_batch);
    while (rc == 0 && (rc = record_iter_next(&it, &r)) == 0) {
        uint64_t ha, hb;
        int64_t latest;
        if (r.key == NULL)
            continue;
        key_hash(r.key, (size_t)r.key_len, &ha, &hb);
        if (map_get(&c->map, ha, hb, &latest) && r.offset < latest)
            continue;
        if (r.value == NULL) {
            if (expired)
                continue;
            tombs++;
        }
        c->kept[n++] = r;
    }
    if (rc != ERR_NOTFOUND) {
        record_iter_close(&it);
        return rc == ERR_NOMEM ? rc : ERR_CORRUPT_MESSAGE;
    }
    c->st.records_kept += (int64_t)n;
    if (tombs > 0) {
        int64_t h = horizon_set ? b.base_timestamp : c->cfg.now_ms + c->cfg.delete_retention_ms;
        if (h < c->st.next_horizon)
            c->st.next_horizon = h;
    }
    if (n > 0 && n == (size_t)b.record_count && (tombs == 0 || horizon_set)) {
        rc = emit(c, batch, len); /* unchanged: byte for byte, compressed or not */
        *wrote = true;
    } else if (n > 0 || must_keep(c, b.base_offset)) {
        int64_t horizon = -1;
        if (horizon_set)
            horizon = b.base_timestamp;
        else if (tombs > 0)
            horizon = c->cfg.now_ms + c->cfg.delete_retention_ms;
        rc = rebuild(c, &b, batch, c->kept, n, horizon);
        *wrote = true;
    } else {
        rc = 0;
    }
    record_iter_close(&it);
    return rc;
}

/* ---- groups ---------------------------------------------------------------------------------- */

static void unlink_ext(struct log_clean *c, const char *path, const char *ext)
{
    char p[PATH_MAX_LEN + 32];
    file_name(p, sizeof p, path, ext);
    if (c->l->io->unlink(p) < 0 && errno != ENOENT)
        slog_warn(LOG_MOD, "cleaner: unlink of %s failed: %s", p, strerror(errno));
}

static int open_group(struct log_clean *c, size_t first)
{
    char p[PATH_MAX_LEN + 32];

    c->grp_open = true;
    c->grp_first = c->grp_last = first;
    seg_path(c->l, c->segs[first].base, c->grp_path, sizeof c->grp_path);
    c->out_size = 0;
    c->wlen = 0;
    c->oidx_n = c->tidx_n = 0;
    c->since_index = 0;
    c->max_ts = c->max_ts_off = c->tidx_last_ts = -1;
    file_name(p, sizeof p, c->grp_path, ".log.cleaned");
    c->out_fd = c->l->io->open(p, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (c->out_fd < 0) {
        slog_error(LOG_MOD, "cleaner: cannot create %s: %s", p, strerror(errno));
        c->grp_open = false;
        return ERR_IO;
    }
    return 0;
}

/* Writes a whole small file and fsyncs it. */
static int write_file(struct log_clean *c, const char *path, const char *ext, const uint8_t *buf,
                      size_t len)
{
    char p[PATH_MAX_LEN + 32];
    int fd, rc = 0;

    file_name(p, sizeof p, path, ext);
    fd = c->l->io->open(p, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        slog_error(LOG_MOD, "cleaner: cannot create %s: %s", p, strerror(errno));
        return ERR_IO;
    }
    if (len > 0 && sysio_pwrite_all(c->l->io, fd, buf, len, 0) < 0)
        rc = ERR_IO;
    if (rc == 0 && c->l->io->fsync(fd) < 0)
        rc = ERR_IO;
    if (rc != 0)
        slog_error(LOG_MOD, "cleaner: write of %s failed: %s", p, strerror(errno));
    c->l->io->close(fd);
    return rc;
}

static int rename_ext(struct log_clean *c, const char *path, const char *from, const char *to)
{
    char a[PATH_MAX_LEN + 32], b[PATH_MAX_LEN + 32];
    file_name(a, sizeof a, path, from);
    file_name(b, sizeof b, path, to);
    if (c->l->io->rename(a, b) < 0) {
        slog_error(LOG_MOD, "cleaner: rename of %s to %s failed: %s", a, b, strerror(errno));
        return ERR_IO;
    }
    return 0;
}

/* Pool: finishes the open group: indexes written, everything fsynced, renamed to .swap. */
static int finish_group(struct log_clean *c)
{
    int rc = out_flush(c);

    if (rc == 0 && c->max_ts > c->tidx_last_ts) {
        /* The final time index entry (log_seg_finish). */
        int64_t gbase = c->segs[c->grp_first].base;
        rc = grow(&c->tidx, &c->tidx_cap, (c->tidx_n + 1) * LOG_TIDX_ENTRY);
        if (rc == 0) {
            log_put64(c->tidx + c->tidx_n * LOG_TIDX_ENTRY, (uint64_t)c->max_ts);
            log_put32(c->tidx + c->tidx_n * LOG_TIDX_ENTRY + 8,
                      (uint32_t)(int32_t)(c->max_ts_off - gbase));
            c->tidx_n++;
            c->tidx_last_ts = c->max_ts;
        }
    }
    if (rc == 0 && c->l->io->fsync(c->out_fd) < 0) {
        slog_error(LOG_MOD, "cleaner: fsync of %s.log.cleaned failed: %s", c->grp_path,
                   strerror(errno));
        rc = ERR_IO;
    }
    c->l->io->close(c->out_fd);
    c->out_fd = -1;
    if (rc == 0)
        rc = write_file(c, c->grp_path, ".index.cleaned", c->oidx, c->oidx_n * LOG_OIDX_ENTRY);
    if (rc == 0)
        rc = write_file(c, c->grp_path, ".timeindex.cleaned", c->tidx, c->tidx_n * LOG_TIDX_ENTRY);
    if (rc != 0)
        return rc;
    if (fault("cleaned"))
        return ERR_SHUTDOWN;
    /* Indexes first: <base>.log.swap, renamed last, is the commit point. */
    rc = rename_ext(c, c->grp_path, ".index.cleaned", ".index.swap");
    if (rc == 0)
        rc = rename_ext(c, c->grp_path, ".timeindex.cleaned", ".timeindex.swap");
    if (rc == 0)
        rc = rename_ext(c, c->grp_path, ".log.cleaned", ".log.swap");
    if (rc == 0 && sysio_fsync_dir(c->l->io, c->l->dir) < 0) {
        slog_error(LOG_MOD, "cleaner: fsync of directory %s failed", c->l->dir);
        rc = ERR_IO;
    }
    if (rc != 0)
        return rc;
    c->grp_open = false;
    c->swap_ready = true;
    c->swap_first = c->grp_first;
    c->swap_last = c->grp_last;
    memcpy(c->swap_path, c->grp_path, sizeof c->swap_path);
    if (fault("swap"))
        return ERR_SHUTDOWN;
    return 0;
}

/* Whether segs[i] may join the open group. */
static bool fits(const struct log_clean *c, size_t i)
{
    return c->out_size + c->segs[i].size <= c->segment_bytes &&
           c->segs[i].next - c->segs[c->grp_first].base <= INT32_MAX;
}

/* Copies segs[cur] into the open group. */
static int copy_segment(struct log_clean *c, size_t *wrote_batches)
{
    const uint8_t *batch;
    size_t len;
    int rc;

    *wrote_batches = 0;
    reader_start(c, c->cur);
    while ((rc = reader_next(&c->rd, &batch, &len)) == 0) {
        bool wrote;
        c->st.bytes_read += (int64_t)len;
        rc = clean_batch(c, batch, len, &wrote);
        if (rc != 0)
            return rc;
        *wrote_batches += wrote;
    }
    return rc == ERR_NOTFOUND ? 0 : rc;
}

int log_clean_step(struct log_clean *c)
{
    int rc = 0;

    if (c->rc != 0)
        return c->rc;
    if (c->phase == PH_MAP) {
        bool full;
        int64_t stop;
        rc = map_segment(c, &full, &stop);
        if (rc != 0)
            goto out;
        if (!full && ++c->cur < c->n_segs && c->segs[c->cur].base < c->end)
            goto out; /* map the next segment */
        c->map_end = full ? stop : c->end;
        if (c->map_end <= c->first_dirty) {
            slog_warn(LOG_MOD,
                      "%s: cleaner: log.cleaner.dedupe.buffer.size holds the keys of no whole "
                      "batch at offset %" PRId64 "; not cleaned",
                      c->l->dir, c->first_dirty);
            rc = ERR_NOMEM;
            goto out;
        }
        c->n_copy = 0;
        while (c->n_copy < c->n_segs && c->segs[c->n_copy].base < c->map_end)
            c->n_copy++;
        c->phase = PH_COPY;
        c->cur = 0;
        if (fault("map"))
            rc = ERR_SHUTDOWN;
        goto out;
    }
    if (c->phase != PH_COPY)
        goto out;
    /* A group's last old segment must have kept something (or be its only one): recovery
     * finds the old segments a new one replaces by the new one's last offset. Segments that
     * kept nothing (all superseded by later ones) wait, pending, after grp_last: a later one
     * that keeps something takes them into its group. */
    if (c->cur == c->n_copy) {
        if (c->grp_open) {
            /* The last group goes; pending segments after it (they can only hold expired
             * tombstones or keyless records) become empty segments, one group each. */
            c->tail = c->grp_last + 1;
            rc = finish_group(c);
        } else if (c->tail < c->n_copy) {
            rc = open_group(c, c->tail++);
            if (rc == 0)
                rc = finish_group(c);
        } else {
            c->phase = PH_DONE;
        }
        goto out;
    }
    if (c->grp_open && !fits(c, c->cur)) {
        /* The group ends at its last segment that kept something; the pending ones after
         * it start the next group (they add no bytes), and segs[cur] joins it next step. */
        size_t pending = c->grp_last + 1;
        rc = finish_group(c);
        if (rc == 0 && pending < c->cur)
            rc = open_group(c, pending);
        goto out;
    }
    if (!c->grp_open && (rc = open_group(c, c->cur)) != 0)
        goto out;
    size_t wrote;
    rc = copy_segment(c, &wrote);
    if (rc != 0)
        goto out;
    if (wrote > 0 || c->cur == c->grp_first)
        c->grp_last = c->cur;
    c->cur++;
out:
    if (rc != 0) {
        c->rc = rc;
        if (rc == ERR_SHUTDOWN)
            c->crashed = true;
    }
    return rc;
}

/* ---- the swap (event loop) ----------------------------------------------------------------- */

static int swap_in(struct log_clean *c)
{
    struct log *l = c->l;
    struct log_segment *ns;
    size_t first = c->swap_first, last = c->swap_last, k = last - first + 1, at;
    int64_t base = c->segs[first].base;
    int rc;

    /* The segments must still be the log's (a truncation may have removed them); if not,
     * the group's .swap files are removed by log_clean_end. */
    if (l->trunc_gen != c->trunc_gen)
        return ERR_SHUTDOWN;
    for (at = 0; at < l->n_segs && l->segs[at] != c->segs[first].s; at++)
        ;
    if (at + k > l->n_segs)
        return ERR_SHUTDOWN;
    for (size_t i = 0; i < k; i++)
        if (l->segs[at + i] != c->segs[first + i].s)
            return ERR_SHUTDOWN;
    /* Transactions (issue 10): the group's aborted-transaction entries go to the new
     * segment's .txnindex (the first old segment's name) before the others are unlinked. */
    if (k > 1 && log_txn_merge(l->segs + at, k) != 0)
        return ERR_SHUTDOWN;
    for (size_t i = first + 1; i <= last; i++)
        log_seg_unlink(c->segs[i].s);
    c->swap_ready = false;
    if (fault("swapin")) {
        c->crashed = true;
        return ERR_SHUTDOWN;
    }
    rc = rename_ext(c, c->swap_path, ".index.swap", ".index");
    if (rc == 0)
        rc = rename_ext(c, c->swap_path, ".timeindex.swap", ".timeindex");
    if (rc == 0)
        rc = rename_ext(c, c->swap_path, ".log.swap", ".log");
    if (rc == 0)
        rc = log_seg_open(l, base, &ns);
    if (rc != 0) {
        /* The old files are gone or half replaced: the log cannot serve them any more. The
         * next open completes the swap (log_clean_recover). */
        slog_error(LOG_MOD, "%s: cleaner: cannot swap segment %" PRId64 " in; refusing writes",
                   l->dir, base);
        atomic_store(&l->failed, true);
        return rc;
    }
    ns->next_offset = c->segs[last].next;
    ns->bytes_since_index = ns->oidx_n > 0 ? ns->size - ns->oidx_last_pos : ns->size;
    ns->dirty = false;
    ns->roll_ms = -1;
    for (size_t i = 0; i < k; i++)
        log_seg_unref(l->segs[at + i]);
    l->segs[at] = ns;
    memmove(l->segs + at + 1, l->segs + at + k, (l->n_segs - at - k) * sizeof *l->segs);
    l->n_segs -= k - 1;
    log_seg_seal(ns, true);
    l->dir_dirty = true;
    c->st.groups++;
    slog_debug(LOG_MOD, "%s: cleaner swapped in segment %" PRId64 " (%zu old, %" PRId64 " bytes)",
               l->dir, base, k, ns->size);
    /* The job's references stay until log_clean_end; these entries are done with. */
    if (fault("swapped")) {
        c->crashed = true;
        return ERR_SHUTDOWN;
    }
    /* A swap replaces sealed segments by one of the same offsets: no offset of the log moved. */
    assert(log_offsets_ordered(l));
    return 0;
}

int log_clean_advance(struct log_clean *c)
{
    int rc;

    unpin(c);
    if (c->rc != 0)
        return c->rc;
    if (c->swap_ready) {
        rc = swap_in(c);
        if (rc != 0) {
            c->rc = rc;
            return rc;
        }
    }
    if (c->phase == PH_DONE)
        return ERR_NOTFOUND;
    if (c->phase == PH_COPY && c->cur >= c->n_copy)
        return 0; /* the last step only finishes the group: nothing to read */
    rc = pin_for_step(c, c->cur);
    if (rc != 0)
        c->rc = rc;
    return rc;
}

int log_clean_end(struct log_clean *c, struct log_clean_stats *st)
{
    int rc = c->rc;

    unpin(c);
    if (c->out_fd >= 0)
        c->l->io->close(c->out_fd);
    if (!c->crashed) {
        if (c->grp_open) {
            unlink_ext(c, c->grp_path, ".log.cleaned");
            unlink_ext(c, c->grp_path, ".index.cleaned");
            unlink_ext(c, c->grp_path, ".timeindex.cleaned");
        }
        if (c->swap_ready) {
            /* Committed but not swapped in (the clean was stopped): drop it, log first. */
            unlink_ext(c, c->swap_path, ".log.swap");
            unlink_ext(c, c->swap_path, ".index.swap");
            unlink_ext(c, c->swap_path, ".timeindex.swap");
        }
    }
    if (rc == 0 && c->phase == PH_DONE)
        c->st.clean_upto = c->map_end;
    else if (rc == 0)
        rc = ERR_SHUTDOWN;
    if (st != NULL)
        *st = c->st;
    for (size_t i = 0; i < c->n_segs; i++) {
        log_seg_unref(c->segs[i].s);
        free(c->segs[i].holes);
    }
    c->l->cleaning = NULL;
    free(c->segs);
    free(c->keep);
    free(c->map.e);
    free(c->rd.buf);
    free(c->wbuf);
    free(c->oidx);
    free(c->tidx);
    free(c->rb);
    free(c->kept);
    free(c);
    return rc;
}

/* ---- recovery at open ---------------------------------------------------------------------- */

/* "<20 digits><suffix>" → base. */
static bool name_is(const char *name, const char *suffix, int64_t *base)
{
    int64_t v = 0;
    for (int i = 0; i < 20; i++) {
        if (name[i] < '0' || name[i] > '9' || v > (INT64_MAX - 9) / 10)
            return false;
        v = v * 10 + (name[i] - '0');
    }
    if (strcmp(name + 20, suffix) != 0)
        return false;
    *base = v;
    return true;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* The last offset of the batches in a .log.swap (base - 1 if it holds none). */
static int swap_last_offset(struct log *l, const char *path, int64_t base, int64_t *last)
{
    struct seg_reader r = {.io = l->io, .max_batch = SIZE_MAX};
    const uint8_t *batch;
    size_t len;
    off_t size;
    int rc;

    *last = base - 1;
    r.fd = l->io->open(path, O_RDONLY, 0);
    if (r.fd < 0) {
        slog_error(LOG_MOD, "open of %s failed: %s", path, strerror(errno));
        return ERR_IO;
    }
    size = lseek(r.fd, 0, SEEK_END);
    r.end = size < 0 ? 0 : (int64_t)size;
    while ((rc = reader_next(&r, &batch, &len)) == 0) {
        struct record_batch b;
        record_batch_parse_header(batch, len, &b);
        *last = record_batch_last_offset(&b);
    }
    l->io->close(r.fd);
    free(r.buf);
    /* It was fsynced before it was renamed to .swap: it is whole. */
    return rc == ERR_NOTFOUND ? 0 : ERR_IO;
}

int log_clean_recover(struct log *l)
{
    static const char *const exts[] = {".log", ".index", ".timeindex", ".txnindex"};
    DIR *d = l->io->opendir(l->dir);
    struct dirent *de;
    int64_t *bases = NULL, *swaps = NULL;
    size_t nb = 0, ns = 0, cb = 0, cs = 0;
    char p[PATH_MAX_LEN + 64], q[PATH_MAX_LEN + 64];
    int rc = 0;
    bool changed = false;

    if (d == NULL)
        return 0; /* list_bases reports it */
    while ((de = l->io->readdir(d)) != NULL) {
        int64_t base;
        snprintf(p, sizeof p, "%s/%s", l->dir, de->d_name);
        if (ends_with(de->d_name, ".cleaned")) {
            /* An uncommitted group: the old segments are whole. */
            if (l->io->unlink(p) == 0)
                changed = true;
            continue;
        }
        int64_t **v = NULL;
        size_t *n = NULL, *cap = NULL;
        if (name_is(de->d_name, ".log.swap", &base)) {
            v = &swaps;
            n = &ns;
            cap = &cs;
        } else if (name_is(de->d_name, ".log", &base)) {
            v = &bases;
            n = &nb;
            cap = &cb;
        }
        if (v == NULL)
            continue;
        if (*n == *cap) {
            size_t nc = *cap ? *cap * 2 : 16;
            int64_t *nv = realloc(*v, nc * sizeof *nv);
            if (nv == NULL) {
                rc = ERR_NOMEM;
                goto out;
            }
            *v = nv;
            *cap = nc;
        }
        (*v)[(*n)++] = base;
    }
    for (size_t i = 0; i < ns; i++) {
        int64_t x = swaps[i], last;
        snprintf(p, sizeof p, "%s/%020" PRId64 ".log.swap", l->dir, x);
        rc = swap_last_offset(l, p, x, &last);
        if (rc != 0)
            goto out;
        /* The old segments it replaces: bases in (x, last]; x's own files are renamed over.
         * Their aborted transactions move into x's .txnindex first (issue 10), in order. */
        qsort(bases, nb, sizeof *bases, cmp_i64);
        for (size_t j = 0; j < nb; j++) {
            if (bases[j] <= x || bases[j] > last)
                continue;
            snprintf(p, sizeof p, "%s/%020" PRId64 ".txnindex", l->dir, x);
            snprintf(q, sizeof q, "%s/%020" PRId64 ".txnindex", l->dir, bases[j]);
            if ((rc = log_txn_append_file(l->io, p, q)) != 0)
                goto out;
            for (size_t e = 0; e < sizeof exts / sizeof exts[0]; e++) {
                snprintf(q, sizeof q, "%s/%020" PRId64 "%s", l->dir, bases[j], exts[e]);
                if (l->io->unlink(q) < 0 && errno != ENOENT)
                    slog_warn(LOG_MOD, "unlink of %s failed: %s", q, strerror(errno));
            }
        }
        for (size_t e = 1; e < 3; e++) {
            snprintf(p, sizeof p, "%s/%020" PRId64 "%s.swap", l->dir, x, exts[e]);
            snprintf(q, sizeof q, "%s/%020" PRId64 "%s", l->dir, x, exts[e]);
            if (l->io->rename(p, q) < 0) {
                /* Renamed already (the swap stopped after it), or lost: rebuilt at open. */
                if (errno != ENOENT)
                    slog_warn(LOG_MOD, "rename of %s failed: %s", p, strerror(errno));
            }
        }
        snprintf(p, sizeof p, "%s/%020" PRId64 ".log.swap", l->dir, x);
        snprintf(q, sizeof q, "%s/%020" PRId64 ".log", l->dir, x);
        if (l->io->rename(p, q) < 0) {
            slog_error(LOG_MOD, "rename of %s failed: %s", p, strerror(errno));
            rc = ERR_IO;
            goto out;
        }
        slog_warn(LOG_MOD,
                  "%s: completed a cleaner swap at %020" PRId64 " cut short (offsets "
                  "up to %" PRId64 ")",
                  l->dir, x, last);
        changed = true;
    }
    /* Index .swap files without their .log.swap: a group that did not commit. The directory
     * is listed again (it changed). */
    l->io->closedir(d);
    d = l->io->opendir(l->dir);
    while (d != NULL && (de = l->io->readdir(d)) != NULL) {
        if (!ends_with(de->d_name, ".swap"))
            continue;
        snprintf(p, sizeof p, "%s/%s", l->dir, de->d_name);
        if (l->io->unlink(p) == 0)
            changed = true;
    }
    if (changed && sysio_fsync_dir(l->io, l->dir) < 0)
        slog_warn(LOG_MOD, "fsync of directory %s failed", l->dir);
out:
    if (d != NULL)
        l->io->closedir(d);
    free(bases);
    free(swaps);
    return rc;
}
