/* SPDX-License-Identifier: Apache-2.0 */
/* log: one partition's log — open and close, append (offset assignment, rolling), reads
 * for sendfile, lookups by time, and the three-step flush. Segments, indexes, recovery,
 * retention and the epoch cache live in the neighbouring files (log_int.h has the map). */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"
#include "base/fault.h"
#include "base/slog.h"
#include "log/log_int.h"
#include "record/record.h"

void log_config_default(struct log_config *cfg)
{
    cfg->segment_bytes = 1073741824; /* 1 GiB */
    cfg->segment_ms = 604800000;     /* 7 days */
    cfg->retention_bytes = -1;
    cfg->retention_ms = 604800000;   /* 7 days */
    cfg->flush_messages = INT64_MAX; /* Kafka leaves flushing to the OS and replication */
    cfg->flush_ms = INT64_MAX;
    cfg->index_interval_bytes = 4096;
    cfg->max_index_bytes = 10485760;
    cfg->compact = false;
}

/* ---- the segment list ---------------------------------------------------------------- */

int log_segs_push(struct log *l, struct log_segment *s)
{
    if (l->n_segs == l->cap_segs) {
        size_t cap = l->cap_segs ? l->cap_segs * 2 : 8;
        struct log_segment **n = realloc(l->segs, cap * sizeof *n);
        if (!n)
            return ERR_NOMEM;
        l->segs = n;
        l->cap_segs = cap;
    }
    if (l->n_segs > 0)
        log_seg_seal(l->segs[l->n_segs - 1], true);
    l->segs[l->n_segs++] = s;
    return 0;
}

void log_segs_delete(struct log *l, size_t i)
{
    struct log_segment *s = l->segs[i];
    memmove(l->segs + i, l->segs + i + 1, (l->n_segs - i - 1) * sizeof *l->segs);
    l->n_segs--;
    log_seg_unlink(s);
    l->dir_dirty = true;
    log_seg_unref(s);
}

size_t log_segs_find(const struct log *l, int64_t offset)
{
    size_t lo = 0, hi = l->n_segs; /* first i with base > offset */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l->segs[mid]->base <= offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 ? lo - 1 : 0;
}

/* ---- open and close ------------------------------------------------------------------- */

#ifdef TALLY_TEST_HOOKS
/* TALLY_TEST_FAULT=log:lose_unflushed_tail (test builds only): an unclean open behaves as
 * after a crash of the machine, not of the process alone. A killed process loses nothing it
 * had written (the page cache keeps it), so the files still hold the whole tail; a machine
 * that goes down keeps what was fsynced and may lose anything else. While the hook is armed,
 * every change of the flushed offset (a completed flush, a truncation) is written to
 * SYNCED_NOTE in the log's directory, so a run armed before the kill knows exactly how far
 * the last fsync reached: the cut goes there, what was fsynced survives, nothing else does.
 * Without the note (the run before the kill was not armed) the log knows only that what lies
 * below the checkpointed recovery point was fsynced, and takes the worst case: it cuts all
 * past it. The cut goes through log_truncate_to, as a follower's truncation does, so
 * segments, indexes and the epoch cache stay consistent; replica/ then rebuilds the producer
 * state and clamps the high watermark to the shorter log, as after a real loss.
 *
 * The note is a decimal offset and a newline; it is itself not fsynced: it models what the
 * disk holds, and a kill -9 keeps the page cache. */
#define SYNCED_NOTE "tally-test-synced-offset"

void log_note_synced(const struct log *l)
{
    char path[PATH_MAX + 32], line[32];
    int n, fd;

    if (!fault_armed("log:lose_unflushed_tail"))
        return;
    snprintf(path, sizeof path, "%s/%s", l->dir, SYNCED_NOTE);
    n = snprintf(line, sizeof line, "%" PRId64 "\n", atomic_load(&l->flushed));
    fd = l->io->open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || sysio_pwrite_all(l->io, fd, line, (size_t)n, 0) != 0)
        slog_error(LOG_MOD, "TALLY_TEST_FAULT: cannot write %s", path);
    if (fd >= 0)
        l->io->close(fd);
}

/* The offset SYNCED_NOTE holds, or -1 without one. */
static int64_t read_synced(const struct log *l)
{
    char path[PATH_MAX + 32], line[32] = {0};
    int64_t v = -1;
    int fd;

    snprintf(path, sizeof path, "%s/%s", l->dir, SYNCED_NOTE);
    fd = l->io->open(path, O_RDONLY, 0);
    if (fd < 0)
        return -1;
    if (l->io->pread(fd, line, sizeof line - 1, 0) > 0 && sscanf(line, "%" SCNd64, &v) != 1)
        v = -1;
    l->io->close(fd);
    return v;
}

static int lose_unflushed_tail(struct log *l, int64_t recovery_point)
{
    const char *name = strrchr(l->dir, '/');
    int64_t synced = read_synced(l);
    int64_t known = synced >= 0 ? synced : recovery_point;
    /* Below the log start nothing is served: no record there can be lost. */
    int64_t cut = known > l->start ? known : l->start;
    int64_t end = l->leo;
    int rc = 0;

    if (cut < end) {
        slog_warn(LOG_MOD,
                  "TALLY_TEST_FAULT: dropped the unflushed tail of %s: offsets %" PRId64
                  "..%" PRId64 " (%s %" PRId64 ")",
                  name ? name + 1 : l->dir, cut, end - 1,
                  synced >= 0 ? "the last fsync reached" : "the recovery point is", known);
        rc = log_truncate_to(l, cut);
    }
    /* What is left was fsynced before the crash, as far as the note knows: the flushed
     * offset (the recovery point until now) says so, and the next note keeps it. */
    if (rc == 0 && synced >= 0 && atomic_load(&l->flushed) < l->leo)
        atomic_store(&l->flushed, l->leo);
    return rc;
}
#else
#define lose_unflushed_tail(l, recovery_point) 0
#endif

static void log_free(struct log *l)
{
    for (size_t i = 0; i < l->n_segs; i++)
        log_seg_unref(l->segs[i]);
    for (size_t i = 0; i < l->n_flush; i++) {
        log_seg_unpin(l->flush_segs[i]);
        log_seg_unref(l->flush_segs[i]);
    }
    free(l->flush_segs);
    free(l->flush_fds);
    free(l->segs);
    free(l->epochs);
    free(l->dir);
    free(l);
}

int log_open(const char *dir, const struct log_config *cfg, const struct log_io *io,
             int64_t recovery_point, int64_t log_start_offset, bool clean, struct log **out)
{
    struct log *l = calloc(1, sizeof *l);
    int64_t flushed;
    int rc;

    *out = NULL;
    if (!l)
        return ERR_NOMEM;
    l->dir = strdup(dir);
    if (!l->dir) {
        free(l);
        return ERR_NOMEM;
    }
    if (cfg)
        l->cfg = *cfg;
    else
        log_config_default(&l->cfg);
    assert(io != NULL && io->sys != NULL && io->clock != NULL);
    l->io = io->sys;
    l->clock = io->clock;
    l->start = log_start_offset;
    atomic_init(&l->flushed, 0);
    atomic_init(&l->failed, false);
    atomic_init(&l->flush_result, 0);

    if (l->io->mkdir(dir, 0755) < 0 && errno != EEXIST) {
        slog_error(LOG_MOD, "mkdir %s failed: %s", dir, strerror(errno));
        rc = ERR_IO;
        goto err;
    }
    /* The epoch cache first: the recovery gives it the epochs of the batches it walks. */
    rc = log_epochs_load(l);
    if (rc)
        goto err;
    rc = log_recover_open(l, recovery_point, clean);
    if (rc)
        goto err;

    if (l->start < l->segs[0]->base)
        l->start = l->segs[0]->base;
    if (l->start > l->leo)
        l->start = l->leo;
    flushed = clean ? l->leo : recovery_point;
    if (flushed > l->leo)
        flushed = l->leo;
    if (flushed < 0)
        flushed = 0;
    atomic_store(&l->flushed, flushed);
    l->last_flush_ms = log_mono_ms(l);

    log_epochs_truncate_end(l, l->leo, false);
    log_epochs_truncate_start(l, l->start);
    if (!clean && fault_armed("log:lose_unflushed_tail") &&
        (rc = lose_unflushed_tail(l, recovery_point)) != 0)
        goto err;
    /* Opening read index entries and headers; a log at rest holds no descriptors. */
    for (size_t i = 0; i < l->n_segs; i++)
        log_seg_close_idle(l->segs[i]);

    assert(log_offsets_ordered(l));
    /* A new partition's empty log is not news (a topic of thousands of partitions would
     * write thousands of lines; replica/ says what it created); an existing one is. */
    if (l->created)
        slog_debug(LOG_MOD, "created %s", dir);
    else
        slog_info(LOG_MOD, "opened %s (%s): %zu segment(s), offsets %" PRId64 "..%" PRId64, dir,
                  clean ? "clean" : "recovered", l->n_segs, l->start, l->leo);
    *out = l;
    return 0;

err:
    log_free(l);
    return rc;
}

void log_set_config(struct log *l, const struct log_config *cfg)
{
    l->cfg = *cfg;
    for (size_t i = 0; i < l->n_segs; i++)
        l->segs[i]->compact = cfg->compact;
}

/* Drops the flush snapshot's references; on failure the segments stay dirty so that the
 * next flush tries them again. */
static void flush_release(struct log *l, bool ok)
{
    for (size_t i = 0; i < l->n_flush; i++) {
        if (!ok)
            l->flush_segs[i]->dirty = true;
        log_seg_unpin(l->flush_segs[i]);
        log_seg_unref(l->flush_segs[i]);
    }
    free(l->flush_segs);
    free(l->flush_fds);
    l->flush_segs = NULL;
    l->flush_fds = NULL;
    l->n_flush = 0;
    l->flush_busy = false;
    if (!ok)
        l->dir_dirty |= l->flush_dir;
}

static int flush_sync(struct log *l)
{
    int64_t upto;
    int rc = log_flush_prepare(l, &upto);
    if (rc)
        return rc;
    rc = log_flush_run(l, upto);
    log_flush_done(l, upto);
    return rc;
}

const char *log_dir(const struct log *l)
{
    return l->dir;
}

void log_close(struct log *l, bool clean)
{
    if (!l)
        return;
    log_check_forget(l);
    if (l->flush_busy) {
        /* The caller must wait for log_flush_done first; if it did not, at least do not
         * leak the snapshot. */
        slog_warn(LOG_MOD, "%s closed with a flush in flight", l->dir);
        flush_release(l, false);
    }
    if (clean && !atomic_load(&l->failed)) {
        /* The final time index entry makes the next open find the active segment's
         * largest timestamp without a scan. */
        if (log_seg_finish(log_active(l)) == 0)
            flush_sync(l);
        if (log_epochs_flush_sync(l) != 0)
            slog_error(LOG_MOD, "cannot write %s/leader-epoch-checkpoint at close", l->dir);
    }
    log_free(l);
}

/* ---- append --------------------------------------------------------------------------- */

static bool should_roll(struct log *l, struct log_segment *s, size_t len, int32_t lod)
{
    if (s->size == 0)
        return false;
    if (s->size + (int64_t)len > l->cfg.segment_bytes || s->size + (int64_t)len > INT32_MAX)
        return true;
    if (s->roll_ms >= 0 && log_now_ms(l) - s->roll_ms > l->cfg.segment_ms)
        return true;
    if (s->oidx_n >= l->cfg.max_index_bytes / LOG_OIDX_ENTRY ||
        s->tidx_n >= l->cfg.max_index_bytes / LOG_TIDX_ENTRY)
        return true;
    /* Relative offsets in the indexes are int32. */
    return l->leo + lod - s->base > INT32_MAX;
}

static int roll(struct log *l)
{
    struct log_segment *old = log_active(l), *s;
    int rc = log_seg_finish(old);

    if (rc)
        return rc;
    rc = log_seg_create(l, l->leo, &s);
    if (rc)
        return rc;
    rc = log_segs_push(l, s);
    if (rc) {
        log_seg_unlink(s);
        log_seg_unref(s);
        return rc;
    }
    l->dir_dirty = true;
    slog_debug(LOG_MOD, "%s: rolled new segment at offset %" PRId64, l->dir, l->leo);
    return 0;
}

int log_append(struct log *l, uint8_t *batch, size_t len, int32_t last_offset_delta,
               int64_t max_timestamp, int32_t leader_epoch, int64_t *base_offset)
{
    struct log_segment *s;
    struct log_batch_hdr h;
    int64_t pos;
    int fd, rc;

    if (atomic_load(&l->failed))
        return ERR_KAFKA_STORAGE_ERROR;
    if (len < RECORD_BATCH_HEADER || last_offset_delta < 0 || len > INT32_MAX)
        return ERR_CORRUPT_MESSAGE;
    if (should_roll(l, log_active(l), len, last_offset_delta)) {
        rc = roll(l);
        if (rc)
            return ERR_IO;
    }
    s = log_active(l);
    /* A sealed segment is never written again (its end is the next segment's base, its
     * indexes are final): only the active one takes batches, and it is never sealed. */
    assert(!s->sealed && s->next_offset == l->leo);
    pos = s->size;
    fd = log_seg_fd(s, LOG_FILE_LOG);
    if (fd < 0)
        return ERR_IO; /* cannot open it (EMFILE, ...): logged, nothing written */
    record_batch_set_base_offset(batch, l->leo);
    record_batch_set_leader_epoch(batch, leader_epoch);
    rc = sysio_pwrite_all(l->io, fd, batch, len, (off_t)pos);
    if (rc < 0) {
        slog_error(LOG_MOD, "write of %s.log at %" PRId64 " failed: %s", s->path, pos,
                   strerror(-rc));
        goto err_rollback;
    }
    h.base_offset = l->leo;
    h.batch_length = (int32_t)(len - RECORD_BATCH_OVERHEAD);
    h.magic = 2;
    h.last_offset_delta = last_offset_delta;
    h.max_timestamp = max_timestamp;
    h.leader_epoch = leader_epoch;
    if (log_seg_index_batch(l, s, pos, &h, max_timestamp) != 0)
        goto err_rollback;
    if (s->roll_ms < 0)
        s->roll_ms = log_now_ms(l);
    *base_offset = l->leo;
    l->leo += (int64_t)last_offset_delta + 1;
    /* The end moved forward by the batch, exactly where the segment's end did. */
    assert(l->leo > *base_offset && log_offsets_ordered(l));
    if (leader_epoch >= 0 && leader_epoch > log_latest_epoch(l))
        log_epoch_assign(l, leader_epoch, *base_offset);
    return 0;

err_rollback:
    /* Nothing half-written may stay: a torn batch at the end would be served to readers
     * and would poison the next append's position. */
    if (l->io->ftruncate(fd, (off_t)pos) < 0) {
        slog_error(LOG_MOD, "%s.log: cannot cut a failed write back (%s); refusing writes", s->path,
                   strerror(errno));
        atomic_store(&l->failed, true);
    }
    return ERR_IO;
}

/* ---- simple accessors ----------------------------------------------------------------- */

int64_t log_end_offset(const struct log *l)
{
    return l->leo;
}

int64_t log_active_base(const struct log *l)
{
    return log_active(l)->base;
}

int64_t log_start_offset(const struct log *l)
{
    return l->start;
}

int64_t log_flushed_offset(const struct log *l)
{
    return atomic_load(&l->flushed);
}

bool log_failed(const struct log *l)
{
    return atomic_load(&l->failed);
}

size_t log_segment_count(const struct log *l)
{
    return l->n_segs;
}

int64_t log_size_bytes(const struct log *l)
{
    int64_t total = 0;
    for (size_t i = 0; i < l->n_segs; i++)
        total += l->segs[i]->size;
    return total;
}

/* ---- reads ----------------------------------------------------------------------------- */

/* Extends [pos, *end) of segment s with whole batches below max_offset while the range
 * stays within max_bytes. Every batch header in the range is read (through a window, so
 * small batches cost one pread per 4 KiB) and must follow the one before it: a batch whose
 * offsets do not fit (a damaged header) ends the range, and the next read from there is
 * refused. */
static int read_extend(struct log *l, struct log_segment *s, int64_t pos,
                       const struct log_batch_hdr *first, int64_t *end, int64_t limit,
                       int64_t max_offset, size_t max_bytes, int64_t *next_out)
{
    static struct slog_limit corrupt_warn;
    int64_t bound = (int64_t)(max_bytes > (size_t)INT64_MAX / 2 ? INT64_MAX / 2 : max_bytes);
    struct log_hdr_window w = {.at = 0, .n = 0};
    int64_t e, next, start = *end;
    int rc = log_seg_walk(s, &w, *end, log_hdr_last(first) + 1, limit, s->next_offset, max_offset,
                          pos + bound, &e, &next);

    if (rc == ERR_CORRUPT_MESSAGE) {
        slog_warn_limited(&corrupt_warn, 10000, LOG_MOD,
                          "%s: batch at position %" PRId64 " of %s.log does not follow offset "
                          "%" PRId64 " (damaged header); not served",
                          l->dir, e, s->path, next);
        rc = 0;
    }
    if (rc)
        return rc;
    if (e > *end)
        *end = e;
    *next_out = e > start ? next : log_hdr_last(first) + 1;
    return 0;
}

int log_read(struct log *l, int64_t offset, int64_t max_offset, size_t max_bytes,
             struct log_slice *out)
{
    static struct slog_limit read_warn;
    struct log_segment *s = NULL;
    struct log_batch_hdr h;
    int64_t pos = 0, end, limit = 0;
    int fd, rc = ERR_NOTFOUND;
    bool servable;

    out->fd = -1;
    out->pos = 0;
    out->len = 0;
    out->segment = NULL;
    out->next_offset = offset;
    out->pending = false;
    out->cold = false;
    out->warm_fd = -1;
    out->warm_pos = 0;
    out->warm_len = 0;
    if (offset < l->start || offset > l->leo)
        return ERR_OFFSET_OUT_OF_RANGE;
    if (offset >= l->leo || offset >= max_offset)
        return 0;
    for (size_t i = log_segs_find(l, offset); i < l->n_segs; i++) {
        s = l->segs[i];
        limit = s->size;
        rc = log_seg_find(s, offset, limit, &pos, &h);
        if (rc != ERR_NOTFOUND)
            break;
    }
    if (rc == ERR_NOTFOUND)
        return 0;
    if (rc == ERR_WOULD_BLOCK)
        return rc; /* log_read_nowait: a page not in the page cache */
    /* Bytes the background check has not passed are not served, nor is a damaged header
     * found in them refused: the check gets there first (this segment next) and quarantines
     * what is damaged; the reader comes back. */
    if ((rc == 0 || rc == ERR_CORRUPT_MESSAGE) && log_seg_unchecked(l, s) &&
        (rc != 0 || !log_seg_servable(l, s, pos, limit, &limit))) {
        log_check_want(l, s);
        out->pending = true;
        return 0;
    }
    if (rc) {
        /* A damaged batch header is refused, never served; the line is rate-limited since
         * a consumer retries the same read. */
        slog_warn_limited(&read_warn, 10000, LOG_MOD, "%s: read at offset %" PRId64 " refused: %s",
                          l->dir, offset,
                          rc == ERR_CORRUPT_MESSAGE ? "batch offsets do not fit (damaged header)"
                                                    : err_name(rc));
        return rc == ERR_CORRUPT_MESSAGE ? rc : ERR_IO;
    }
    if (log_hdr_last(&h) >= max_offset)
        return 0;
    /* A read stops before a quarantined range and before bytes not yet checked (the next read
     * starts there: it skips the range, or waits). */
    servable = log_seg_servable(l, s, pos, limit, &limit);
    assert(servable); /* log_seg_find skips holes; unchecked bytes were answered above */
    (void)servable;
    end = pos + log_hdr_size(&h); /* the first batch goes whole (KIP-74) */
    rc = read_extend(l, s, pos, &h, &end, limit, max_offset, max_bytes, &out->next_offset);
    if (rc)
        return rc;
    fd = log_seg_fd(s, LOG_FILE_LOG);
    if (fd < 0)
        return ERR_IO;
    log_seg_ref(s);
    log_seg_pin(s);
    out->fd = fd;
    out->pos = (off_t)pos;
    out->len = (size_t)(end - pos);
    out->segment = s;
    return 0;
}

/* The .log bytes a cold read warms: what the fetch asked for, within these bounds. */
#define LOG_WARM_MIN ((int64_t)64 << 10)
#define LOG_WARM_MAX ((int64_t)16 << 20)

/* After a nowait read failed on `note`: fills `out` as the cold slice that names what to warm
 * (log.h, log_read_nowait), holding the segment. `max_bytes`: how much of the .log the read
 * would have taken from there. 0 or ERR_IO. */
static int cold_slice(const struct log_cold *note, size_t max_bytes, struct log_slice *out)
{
    struct log_segment *s = note->seg;
    int64_t pos = 0, len, want;
    int fd;

    assert(s != NULL && out->segment == NULL);
    if (note->file == LOG_FILE_LOG) {
        /* The bytes asked for and a margin: the first batch goes whole even when it is a little
         * larger than max_bytes (KIP-74), and a page the pool did not read itself may be one
         * the kernel's readahead has only begun to fill (the probe before sendfile counts it
         * as cached). */
        want = max_bytes > (size_t)LOG_WARM_MAX ? LOG_WARM_MAX : (int64_t)max_bytes;
        want += LOG_WARM_MIN;
        pos = note->pos;
        len = s->size - pos < want ? s->size - pos : want;
    } else if (note->file == LOG_FILE_IDX) {
        len = (s->oidx_n - s->oidx_pend_n) * LOG_OIDX_ENTRY;
    } else {
        len = s->tidx_n * LOG_TIDX_ENTRY;
    }
    fd = log_seg_fd(s, note->file);
    if (fd < 0)
        return ERR_IO;
    log_seg_ref(s);
    log_seg_pin(s);
    out->fd = -1;
    out->len = 0;
    out->segment = s;
    out->cold = true;
    out->warm_fd = fd;
    out->warm_pos = pos;
    out->warm_len = len > 0 ? (size_t)len : 1; /* at least the byte the read stopped at */
    return 0;
}

int log_read_nowait(struct log *l, int64_t offset, int64_t max_offset, size_t max_bytes,
                    struct log_slice *out)
{
    struct log_cold note;
    int rc;

    log_nowait_begin(&note);
    rc = log_read(l, offset, max_offset, max_bytes, out);
    log_nowait_end();
    if (rc != ERR_WOULD_BLOCK)
        return rc;
    /* Nothing is held yet: log_read takes the segment only once the slice is whole. */
    return cold_slice(&note, max_bytes, out);
}

int log_offset_for_time_nowait(struct log *l, int64_t ts, int64_t *out_offset, int64_t *out_ts,
                               struct log_slice *cold)
{
    struct log_cold note;
    int rc;

    memset(cold, 0, sizeof *cold);
    cold->fd = cold->warm_fd = -1;
    log_nowait_begin(&note);
    rc = log_offset_for_time(l, ts, out_offset, out_ts);
    log_nowait_end();
    if (rc != ERR_WOULD_BLOCK)
        return rc;
    *out_offset = *out_ts = -1;
    rc = cold_slice(&note, 0, cold);
    return rc == 0 ? ERR_WOULD_BLOCK : rc;
}

void log_slice_release(struct log *l, struct log_slice *s)
{
    (void)l;
    if (s->segment)
        log_seg_unpin(s->segment);
    log_seg_unref(s->segment);
    s->segment = NULL;
    s->fd = -1;
    s->len = 0;
}

int log_offset_for_time(struct log *l, int64_t ts, int64_t *out_offset, int64_t *out_ts)
{
    *out_offset = -1;
    *out_ts = -1;
    for (size_t i = 0; i < l->n_segs; i++) {
        struct log_segment *s = l->segs[i];
        struct log_batch_hdr h;
        int64_t toff, tidx, p;
        int rc;

        if (s->next_offset <= l->start || s->max_ts < ts || s->size == 0)
            continue;
        /* Every batch up to the one of the last entry below ts is older than ts. */
        rc = log_tidx_floor_below(s, ts, &toff, &tidx);
        if (rc == 0)
            rc = log_seg_find(s, toff > l->start ? toff : l->start, s->size, &p, &h);
        if (rc == ERR_NOTFOUND)
            continue;
        while (rc == 0) {
            if (log_hdr_last(&h) >= l->start && h.max_timestamp >= ts) {
                *out_offset = h.base_offset > l->start ? h.base_offset : l->start;
                *out_ts = h.max_timestamp;
                return 0;
            }
            p += log_hdr_size(&h);
            log_seg_skip_holes(s, &p, NULL);
            if (p >= s->size)
                break;
            rc = log_seg_read_hdr(s, p, s->size, &h);
        }
        if (rc == ERR_WOULD_BLOCK)
            return rc; /* log_offset_for_time_nowait: a page not in the page cache */
        if (rc) {
            slog_error(LOG_MOD, "%s: time lookup failed: %s", s->path, err_name(rc));
            return ERR_IO;
        }
    }
    return 0;
}

void log_max_timestamp(const struct log *l, int64_t *offset, int64_t *ts)
{
    *offset = -1;
    *ts = -1;
    for (size_t i = 0; i < l->n_segs; i++) {
        const struct log_segment *s = l->segs[i];
        if (s->max_ts > *ts) {
            *ts = s->max_ts;
            *offset = s->max_ts_offset;
        }
    }
}

/* ---- flush ------------------------------------------------------------------------------ */

bool log_flush_due(const struct log *l)
{
    int64_t unflushed = l->leo - log_flushed_offset(l);
    if (unflushed <= 0 && !l->dir_dirty)
        return false;
    if (unflushed >= (l->cfg.flush_messages > 0 ? l->cfg.flush_messages : 1))
        return true;
    /* The default (never by time) costs no clock read: the produce path asks after every
     * append whether an ack must wait (partition_flush_required). */
    if (l->cfg.flush_ms == INT64_MAX)
        return false;
    return log_mono_ms(l) - l->last_flush_ms >= l->cfg.flush_ms;
}

int log_flush_prepare(struct log *l, int64_t *upto)
{
    size_t n = 0;

    if (l->flush_busy)
        return ERR_EXISTS;
    /* After a failed fsync the page cache may have dropped the data: a later fsync that
     * succeeds would say nothing of it. */
    if (atomic_load(&l->failed))
        return ERR_KAFKA_STORAGE_ERROR;
    for (size_t i = 0; i < l->n_segs; i++) {
        /* The .index entries still in memory go to the file the flush is about to sync. */
        int rc = l->segs[i]->dirty ? log_oidx_sync(l->segs[i]) : 0;
        if (rc)
            return rc;
        n += l->segs[i]->dirty;
    }
    l->flush_segs = n ? malloc(n * sizeof *l->flush_segs) : NULL;
    l->flush_fds = n ? malloc(n * sizeof *l->flush_fds) : NULL;
    if (n && (!l->flush_segs || !l->flush_fds)) {
        free(l->flush_segs);
        free(l->flush_fds);
        l->flush_segs = NULL;
        l->flush_fds = NULL;
        return ERR_NOMEM;
    }
    l->n_flush = 0;
    for (size_t i = 0; i < l->n_segs; i++) {
        struct log_segment *s = l->segs[i];
        if (!s->dirty)
            continue;
        /* A file not open now has nothing unflushed: written files stay open until a flush
         * has synced them (segment.c). */
        log_seg_ref(s);
        log_seg_pin(s);
        s->dirty = false;
        for (int f = 0; f < LOG_NFILES; f++)
            l->flush_fds[l->n_flush][f] = s->fds[f];
        l->flush_segs[l->n_flush++] = s;
    }
    l->flush_dir = l->dir_dirty;
    l->dir_dirty = false;
    l->flush_gen = l->trunc_gen;
    atomic_store(&l->flush_result, 0);
    l->flush_busy = true;
    *upto = l->leo;
    return 0;
}

int log_flush_run(struct log *l, int64_t upto)
{
    (void)upto;
    /* Test builds: a slow disk, so that tests can act while a flush is under way. */
    if (fault_armed("log:slow_fsync"))
        usleep(1500 * 1000);
    for (size_t i = 0; i < l->n_flush; i++) {
        struct log_segment *s = l->flush_segs[i];
        for (int k = 0; k < LOG_NFILES; k++) {
            if (l->flush_fds[i][k] >= 0 && l->io->fsync(l->flush_fds[i][k]) < 0) {
                /* After a failed fsync the page cache may have dropped the data: the only
                 * safe course is to stop writing (Kafka takes the log dir offline). */
                slog_error(LOG_MOD, "fsync of %s failed: %s; refusing writes", s->path,
                           strerror(errno));
                atomic_store(&l->failed, true);
                atomic_store(&l->flush_result, ERR_IO);
                return ERR_IO;
            }
        }
    }
    int rc = l->flush_dir ? sysio_fsync_dir(l->io, l->dir) : 0;
    if (rc < 0) {
        slog_error(LOG_MOD, "fsync of directory %s failed: %s; refusing writes", l->dir,
                   strerror(-rc));
        atomic_store(&l->failed, true);
        atomic_store(&l->flush_result, ERR_IO);
        return ERR_IO;
    }
    return 0;
}

void log_flush_done(struct log *l, int64_t upto)
{
    bool ok = atomic_load(&l->flush_result) == 0;

    if (!l->flush_busy)
        return;
    flush_release(l, ok);
    if (!ok)
        return;
    l->last_flush_ms = log_mono_ms(l);
    /* A truncation since prepare may have replaced what was flushed. Without one, the
     * flushed offset only moves forward: it was at most the end when prepare took `upto`,
     * and the end has not moved down since. */
    if (l->flush_gen == l->trunc_gen) {
        int64_t f = upto < l->leo ? upto : l->leo;
        assert(f >= atomic_load(&l->flushed));
        atomic_store(&l->flushed, f);
        log_note_synced(l);
    }
    assert(log_offsets_ordered(l));
}
