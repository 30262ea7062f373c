/* SPDX-License-Identifier: Apache-2.0 */
/* log retention: what removes data — retention.ms / retention.bytes (whole old segments),
 * DeleteRecords (the log start offset moves, whole segments below it go) and truncation
 * from the end (recovery, follower divergence). Deleted segments are unlinked at once; a
 * reader's slice or a flush in flight keeps the descriptor alive (segment.c). */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/err.h"
#include "base/slog.h"
#include "log/log_int.h"

/* The segment's largest timestamp, or its file's modification time when no batch carried
 * one (Kafka falls back the same way). */
static int64_t segment_largest_ts(const struct log_segment *s)
{
    int64_t mtime;
    if (s->max_ts >= 0)
        return s->max_ts;
    mtime = log_seg_mtime_ms(s);
    return mtime >= 0 ? mtime : INT64_MAX; /* unknown: keep it */
}

static void delete_oldest(struct log *l, const char *reason)
{
    struct log_segment *s = l->segs[0];
    slog_info(LOG_MOD,
              "%s: deleting segment %" PRId64 " (%" PRId64 " bytes, offsets up to %" PRId64
              ") by %s",
              l->dir, s->base, s->size, s->next_offset, reason);
    log_segs_delete(l, 0);
}

static void raise_start(struct log *l, int64_t offset)
{
    if (offset > l->start) {
        l->start = offset;
        log_epochs_truncate_start(l, offset);
    }
}

int log_retain(struct log *l)
{
    return log_retain_below(l, INT64_MAX);
}

int log_retain_below(struct log *l, int64_t bound)
{
    int deleted = 0;

    /* Not while a clean is in flight (log_int.h): the next call after it does the work. */
    if (l->cleaning != NULL)
        return 0;

    /* Segments wholly below the log start offset (DeleteRecords) go first. */
    while (l->n_segs > 1 && l->segs[1]->base <= l->start) {
        delete_oldest(l, "log start offset");
        deleted++;
    }
    if (l->cfg.retention_ms >= 0) {
        int64_t horizon = log_now_ms(l) - l->cfg.retention_ms;
        while (l->n_segs > 1 && l->segs[1]->base <= bound &&
               segment_largest_ts(l->segs[0]) < horizon) {
            delete_oldest(l, "retention.ms");
            deleted++;
        }
    }
    if (l->cfg.retention_bytes >= 0) {
        int64_t diff = log_size_bytes(l) - l->cfg.retention_bytes;
        while (l->n_segs > 1 && l->segs[1]->base <= bound && diff - l->segs[0]->size >= 0) {
            diff -= l->segs[0]->size;
            delete_oldest(l, "retention.bytes");
            deleted++;
        }
    }
    if (deleted)
        raise_start(l, l->segs[0]->base);
    assert(log_offsets_ordered(l));
    return deleted;
}

int log_delete_records(struct log *l, int64_t offset)
{
    if (offset > l->leo)
        return ERR_OFFSET_OUT_OF_RANGE;
    if (offset <= l->start)
        return 0;
    raise_start(l, offset);
    /* During a clean the segments below the new start stay until log_retain deletes them
     * (reads below the log start are refused meanwhile). */
    while (l->cleaning == NULL && l->n_segs > 1 && l->segs[1]->base <= offset)
        delete_oldest(l, "DeleteRecords");
    assert(l->start == offset && log_offsets_ordered(l));
    return 0;
}

/* Deletes every segment and starts again with one empty segment at `offset`. */
static int truncate_fully(struct log *l, int64_t offset)
{
    struct log_segment *s;
    int rc;

    while (l->n_segs > 0)
        log_segs_delete(l, l->n_segs - 1);
    rc = log_seg_create(l, offset, &s);
    if (rc == 0) {
        rc = log_segs_push(l, s);
        if (rc) {
            log_seg_unlink(s);
            log_seg_unref(s);
        }
    }
    if (rc) {
        /* No segment left to append to: the log cannot go on. */
        atomic_store(&l->failed, true);
        return ERR_IO;
    }
    l->start = offset;
    l->leo = offset;
    return 0;
}

int log_reset(struct log *l, int64_t offset)
{
    int rc;
    if (atomic_load(&l->failed))
        return ERR_KAFKA_STORAGE_ERROR;
    if (offset < 0)
        offset = 0;
    l->trunc_gen++;
    slog_info(LOG_MOD, "%s: emptied, starting again at offset %" PRId64 " (end was %" PRId64 ")",
              l->dir, offset, l->leo);
    rc = truncate_fully(l, offset);
    if (rc)
        return rc;
    atomic_store(&l->flushed, l->leo);
    log_note_synced(l);
    log_epochs_truncate_end(l, l->leo, true);
    log_epochs_truncate_start(l, l->start);
    assert(log_offsets_ordered(l));
    return 0;
}

int log_truncate_to(struct log *l, int64_t offset)
{
    size_t i;
    int rc;

    if (atomic_load(&l->failed))
        return ERR_KAFKA_STORAGE_ERROR;
    if (offset >= l->leo) {
        /* Nothing to cut, but epochs starting at the end (a leader's epoch assigned at its log
         * end before it wrote anything) go: this replica holds no record of them. */
        log_epochs_truncate_end(l, l->leo, true);
        return 0;
    }
    if (offset < 0)
        offset = 0;
    l->trunc_gen++;
    slog_info(LOG_MOD, "%s: truncating to offset %" PRId64 " (end was %" PRId64 ")", l->dir, offset,
              l->leo);
    if (offset < l->start || offset < l->segs[0]->base) {
        rc = truncate_fully(l, offset);
        if (rc)
            return rc;
    } else {
        i = log_segs_find(l, offset);
        /* A segment that starts exactly at the cut goes whole; its predecessor becomes
         * active and already ends at the cut. */
        if (i > 0 && l->segs[i]->base == offset)
            i--;
        while (l->n_segs > i + 1)
            log_segs_delete(l, l->n_segs - 1);
        log_seg_seal(log_active(l), false);
        rc = log_seg_truncate(l, log_active(l), offset);
        if (rc) {
            atomic_store(&l->failed, true);
            return ERR_IO;
        }
        l->leo = log_active(l)->next_offset;
        if (l->leo > offset)
            l->leo = offset;
        log_active(l)->next_offset = l->leo;
    }
    if (l->start > l->leo)
        l->start = l->leo;
    if (atomic_load(&l->flushed) > l->leo)
        atomic_store(&l->flushed, l->leo);
    log_note_synced(l);
    log_epochs_truncate_end(l, l->leo, true);
    /* The one way the end moves down: it is now at or below the cut. */
    assert(l->leo <= offset && log_offsets_ordered(l));
    return 0;
}
