/* SPDX-License-Identifier: Apache-2.0 */
/* log recovery: what log_open does to the files it finds.
 *
 * Clean open (the caller found the clean-shutdown marker): nothing is rescanned. Per
 * segment: open the three files, fstat them, read the last .index and .timeindex entries
 * and check them against the .log (the last .index entry must name the batch at its
 * position) — O(segments) system calls. The log end offset comes from the active segment
 * alone: its last .index entry gives a position at most index.interval.bytes (plus one
 * batch) before the end, and a header-only scan from there finds the last batch. The
 * largest timestamp of a sealed segment is its last .timeindex entry (written when it was
 * rolled and on clean close).
 *
 * Unclean open: segments below the one holding the recovery point are treated as on a
 * clean open (they were fsynced); that segment and every later one are rescanned batch by
 * batch (header, CRC32C, records, offset order), their indexes rebuilt, and the log is
 * truncated at the first torn or corrupt batch, deleting any later segment.
 *
 * Either way, a segment whose index is missing, misshapen or disagrees with the .log is
 * rescanned like an unclean one.
 *
 * The leader-epoch cache is loaded before and learns from the batches: every rescanned batch
 * gives it its epoch (as Kafka's LogLoader assigns them), and so does every batch of the
 * other segments when the checkpoint file is missing or malformed, or of those from where the
 * file's latest epoch began when the log's last batch names a newer one (a file behind the
 * log). Without that, a follower whose file had not been written yet fetches with no
 * LastFetchedEpoch and the leader cannot tell that its log diverges.
 *
 * What is not rescanned is trusted only until the background check (check.c) has read it:
 * every segment taken on its index here gets its bytes queued for that check, which
 * quarantines a damaged batch rather than truncating. Only the end of the log is cut here
 * (the active segment's batches after its last index entry, and everything from the first
 * torn or corrupt batch past the recovery point): the open must know where the log ends. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/err.h"
#include "base/slog.h"
#include "log/log_int.h"

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Is name "<20 digits>.log"? */
static bool segment_name(const char *name, int64_t *base)
{
    int64_t v = 0;
    for (int i = 0; i < 20; i++) {
        if (name[i] < '0' || name[i] > '9')
            return false;
        if (v > (INT64_MAX - 9) / 10)
            return false;
        v = v * 10 + (name[i] - '0');
    }
    if (strcmp(name + 20, ".log") != 0)
        return false;
    *base = v;
    return true;
}

static int list_bases(struct log *l, int64_t **out, size_t *n)
{
    DIR *d = l->io->opendir(l->dir);
    struct dirent *de;
    int64_t *bases = NULL;
    size_t cap = 0;

    *n = 0;
    if (!d) {
        slog_error(LOG_MOD, "opendir %s failed: %s", l->dir, strerror(errno));
        return ERR_IO;
    }
    for (;;) {
        int64_t base;
        errno = 0; /* readdir reports an error only through errno */
        if ((de = l->io->readdir(d)) == NULL)
            break;
        if (!segment_name(de->d_name, &base))
            continue;
        if (*n == cap) {
            size_t nc = cap ? cap * 2 : 16;
            int64_t *nb = realloc(bases, nc * sizeof *nb);
            if (!nb) {
                free(bases);
                l->io->closedir(d);
                return ERR_NOMEM;
            }
            bases = nb;
            cap = nc;
        }
        bases[(*n)++] = base;
    }
    if (errno != 0) {
        /* A listing cut short would open the log without some of its segments. */
        slog_error(LOG_MOD, "readdir %s failed: %s", l->dir, strerror(errno));
        free(bases);
        l->io->closedir(d);
        *n = 0;
        return ERR_IO;
    }
    l->io->closedir(d);
    if (*n > 1)
        qsort(bases, *n, sizeof *bases, cmp_i64);
    *out = bases;
    return 0;
}

/* The cheap header check of a sealed segment on a clean open: the batches from its last
 * .index entry (which must start with the offset the entry names) to the end of the file
 * tile, follow one another, and end below the next segment's base — a header damaged
 * outside the CRC (a flipped base offset) shows here. At most index.interval.bytes plus one
 * batch are walked, usually in one read. */
static bool tail_looks_sane(struct log_segment *s, int64_t next_base, int *err)
{
    struct log_hdr_window w = {.at = 0, .n = 0};
    int64_t pos = s->oidx_n > 0 ? s->oidx_last_pos : 0;
    int64_t expect = s->oidx_n > 0 ? s->oidx_last_off : s->base, end, next;
    int rc =
        log_seg_walk(s, &w, pos, expect, s->size, next_base, INT64_MAX, INT64_MAX, &end, &next);
    *err = rc == ERR_IO ? rc : 0;
    return rc == 0 && end == s->size;
}

/* The O(1) sanity check of a clean segment's indexes against its .log. `next_base` is the
 * following segment's base, or -1 for the active segment. */
static bool index_looks_sane(struct log_segment *s, int64_t next_base)
{
    int64_t off, pos, first_ts;

    if (s->idx_damaged)
        return false;
    if (s->oidx_n > 0) {
        if (log_oidx_entry(s, 0, &off, &pos) || off < s->base || off > s->oidx_last_off ||
            pos > s->oidx_last_pos)
            return false;
        if (s->oidx_last_pos >= s->size)
            return false;
        if (next_base >= 0 && s->oidx_last_off >= next_base)
            return false;
        /* The batch at the last entry is checked by the tail walk that follows. */
    }
    if (s->tidx_n > 0) {
        if (log_tidx_entry(s, 0, &first_ts, &off) || first_ts > s->tidx_last_ts || off < s->base ||
            s->tidx_last_off < off)
            return false;
        if (next_base >= 0 && s->tidx_last_off >= next_base)
            return false;
    }
    if (s->size == 0 && (s->oidx_n > 0 || s->tidx_n > 0))
        return false;
    return true;
}

/* Walks the batch headers of `s` from byte `pos` to its end, giving each batch's epoch to
 * the cache when `note`; *last receives the epoch of the last batch walked (-1 if none). A
 * header that does not fit ends the walk quietly: the open and the check deal with it.
 * 0 or ERR_IO. */
static int walk_epochs(struct log *l, struct log_segment *s, int64_t pos, bool note, int32_t *last)
{
    struct log_hdr_window w = {.at = 0, .n = 0};
    struct log_batch_hdr h;

    *last = -1;
    while (pos < s->size) {
        int rc = log_seg_read_hdr_w(s, &w, pos, s->size, &h);
        if (rc == ERR_IO)
            return rc;
        if (rc)
            break;
        if (note)
            log_epochs_note(l, h.leader_epoch, h.base_offset);
        *last = h.leader_epoch;
        pos += log_hdr_size(&h);
    }
    return 0;
}

/* The first segment whose batches must give their epochs to the cache besides the rescanned
 * ones (which always do), or l->n_segs for none: every segment when the cache file was
 * missing or malformed; when the last batch of the log names an epoch newer than the file's
 * latest (the file was written before that epoch began and the broker died before the next
 * write), the segments from the one where the file's latest epoch began. Only the tail of
 * the last segment is read to tell: a long-lived leader's log is not walked at every open. */
static int epoch_walk_from(struct log *l, size_t *from)
{
    struct log_segment *s = NULL;
    int32_t last;
    int rc;

    *from = l->epochs_unknown ? 0 : l->n_segs;
    if (l->epochs_unknown)
        return 0;
    for (size_t i = l->n_segs; i > 0 && s == NULL; i--)
        if (l->segs[i - 1]->size > 0)
            s = l->segs[i - 1];
    if (s == NULL)
        return 0;
    rc = walk_epochs(l, s, s->oidx_n > 0 && s->oidx_last_pos < s->size ? s->oidx_last_pos : 0,
                     false, &last);
    if (rc)
        return rc;
    if (last > log_latest_epoch(l)) {
        slog_info(LOG_MOD,
                  "%s: leader epoch %d is newer than the leader-epoch-checkpoint; "
                  "rebuilding the cache from the batches",
                  l->dir, (int)last);
        *from = l->n_epochs > 0 ? log_segs_find(l, l->epochs[l->n_epochs - 1].start) : 0;
    }
    return 0;
}

int log_recover_open(struct log *l, int64_t recovery_point, bool clean)
{
    int64_t *bases = NULL;
    size_t n = 0, first_rescan;
    int rc;

    rc = log_clean_recover(l);
    if (rc)
        return rc;
    rc = list_bases(l, &bases, &n);
    if (rc)
        return rc;
    if (n == 0) {
        struct log_segment *s;
        int64_t base = l->start > 0 ? l->start : 0;
        free(bases);
        rc = log_seg_create(l, base, &s);
        if (rc)
            return rc;
        rc = log_segs_push(l, s);
        if (rc) {
            log_seg_unlink(s);
            log_seg_unref(s);
            return rc;
        }
        l->dir_dirty = true;
        l->created = true;
        l->leo = base;
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        struct log_segment *s;
        rc = log_seg_open(l, bases[i], &s);
        if (rc == 0) {
            rc = log_segs_push(l, s);
            if (rc)
                log_seg_unref(s);
        }
        if (rc) {
            free(bases);
            return rc;
        }
    }
    free(bases);

    first_rescan = clean ? l->n_segs : 0;
    if (!clean && recovery_point >= 0)
        first_rescan = log_segs_find(l, recovery_point);
    size_t epochs_from;
    rc = epoch_walk_from(l, &epochs_from);
    if (rc)
        return rc;

    for (size_t i = 0; i < l->n_segs; i++) {
        struct log_segment *s = l->segs[i];
        bool active = i == l->n_segs - 1;
        int64_t next_base = active ? -1 : l->segs[i + 1]->base;
        bool rescan = i >= first_rescan;
        const char *why;
        int64_t lost;

        if (!rescan && !index_looks_sane(s, next_base)) {
            slog_warn(LOG_MOD, "%s: index missing or damaged; rebuilding it", s->path);
            rescan = true;
        }
        if (!rescan && (active || (s->size > 0 && s->tidx_n == 0))) {
            rc = log_seg_scan_tail(l, s);
            if (rc == ERR_IO)
                return rc;
            if (rc) {
                slog_warn(LOG_MOD,
                          "%s: batches after the last index entry do not tile or their offsets "
                          "do not follow one another; rescanning the segment",
                          s->path);
                rescan = true;
            }
        } else if (!rescan && !tail_looks_sane(s, next_base, &rc)) {
            if (rc)
                return rc;
            /* A damaged batch in a sealed segment, as anywhere else in one: the background
             * check quarantines it and says so (check.c), keeping the batches around it, and
             * reads do not serve it meanwhile. Its end offset is the next segment's base
             * whatever its last batches say, so nothing here depends on them. */
            slog_debug(LOG_MOD,
                       "%s: batch headers at the end of the segment do not fit; left to "
                       "the check",
                       s->path);
        }
        if (!rescan) {
            s->next_offset = active ? s->next_offset : next_base;
            s->bytes_since_index = s->oidx_n > 0 ? s->size - s->oidx_last_pos : s->size;
            /* Trusted on its index and a few headers: every batch of it is checked in the
             * background once the log is started (log_check_start). */
            s->chk_end = s->size;
            s->chk_done = 0;
            s->chk_expect = s->base;
            s->chk_end_offset = s->next_offset;
            if (i >= epochs_from) {
                int32_t last;
                rc = walk_epochs(l, s, 0, true, &last);
                if (rc)
                    return rc;
            }
            continue;
        }
        rc = log_seg_recover(l, s, active ? INT64_MAX : next_base, &lost, &why);
        /* Aborted transactions whose marker did not survive the rescan go too. */
        if (rc == 0)
            rc = log_txn_truncate_seg(s, s->next_offset);
        if (rc)
            return rc;
        if (lost > 0 && i < first_rescan) {
            /* A damaged sealed segment found on a clean open (bit rot, not a crash): its
             * successors were written after it and are intact, so keep them, as Kafka does;
             * reads skip the gap. */
            slog_warn(LOG_MOD,
                      "%s.log: %s at position %" PRId64 " (offset %" PRId64 "); truncated "
                      "%" PRId64 " bytes, later segments kept",
                      s->path, why, s->size, s->next_offset, lost);
        } else if (lost > 0) {
            /* Past the recovery point nothing after a torn batch can be trusted. */
            size_t later = l->n_segs - 1 - i;
            char more[64] = "";
            if (later)
                snprintf(more, sizeof more, " and deleted %zu later segment(s)", later);
            slog_warn(LOG_MOD,
                      "%s.log: %s at position %" PRId64 " (offset %" PRId64 "); truncated "
                      "%" PRId64 " bytes%s",
                      s->path, why, s->size, s->next_offset, lost, more);
            while (l->n_segs > i + 1)
                log_segs_delete(l, l->n_segs - 1);
            log_seg_seal(s, false);
            break;
        }
        if (!active && s->next_offset > next_base) {
            slog_warn(LOG_MOD, "%s.log runs past the next segment's base %" PRId64, s->path,
                      next_base);
        }
        if (!active)
            s->next_offset = next_base;
    }
    l->leo = log_active(l)->next_offset;
    return 0;
}
