/* SPDX-License-Identifier: Apache-2.0 */
/* log internals: the segment and log structures shared by the files of src/log/, the
 * index primitives (index.c), segment primitives (segment.c), open-time recovery
 * (recovery.c) and the leader epoch cache (epoch.c). File access goes through base/sysio.h.
 *
 * Threading: everything here belongs to the event loop thread, except what
 * log_flush_run touches from a pool thread: the descriptors log_flush_prepare copied for it
 * (their segments stay pinned, so they stay open, until log_flush_done), `refs`, `failed`,
 * `flush_result` and `flushed` (atomics). */
#ifndef TALLY_LOG_INT_H
#define TALLY_LOG_INT_H

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/sysio.h"
#include "base/tclock.h"
#include "log/log.h"

#define LOG_MOD "log"

#define LOG_OIDX_ENTRY 8  /* .index entry: relative offset + position */
#define LOG_OIDX_PEND 32  /* .index entries gathered in memory before a write */
#define LOG_TIDX_ENTRY 12 /* .timeindex entry: timestamp + relative offset */

/* The batch header fields the log needs (see record/record.h for the layout). Decoded from
 * the first 61 bytes only, so it can be read with one small pread. */
struct log_batch_hdr {
    int64_t base_offset;
    int32_t batch_length;
    int8_t magic;
    int32_t last_offset_delta;
    int64_t max_timestamp;
    int32_t leader_epoch; /* partitionLeaderEpoch, -1 when none */
};

static inline int64_t log_hdr_size(const struct log_batch_hdr *h)
{
    return (int64_t)h->batch_length + 12;
}

static inline int64_t log_hdr_last(const struct log_batch_hdr *h)
{
    return h->base_offset + h->last_offset_delta;
}

enum log_file { LOG_FILE_LOG, LOG_FILE_IDX, LOG_FILE_TIDX, LOG_NFILES };

/* A quarantined range of a segment (check.c): bytes [pos, end) of its .log, which held (as
 * far as the batches around it tell) the offsets [offset, end_offset). `end` is the start of
 * the next intact batch or the end of the checked bytes. */
struct log_hole {
    int64_t pos, end;
    int64_t offset, end_offset;
};

/* One segment: <base>.log, <base>.index, <base>.timeindex and an empty <base>.txnindex.
 * Reference counted: the log holds one reference while the segment is in its list; a
 * log_slice and a pending flush each hold one. The last unref closes the descriptors, so a
 * segment deleted by retention (files unlinked at once) stays readable under a slice. */
struct log_segment {
    atomic_int refs;
    const struct sysio *io;
    char *path; /* "<dir>/<20-digit base>", no extension */
    int64_t base;
    /* Descriptors of .log, .index, .timeindex; -1 until first needed (log_seg_fd). */
    int fds[LOG_NFILES];
    int pins;    /* read slices and flushes using the descriptors: they stay open */
    bool sealed; /* not the active segment: its descriptors are in the bounded cache */
    bool in_lru;
    struct log_segment *lru_prev, *lru_next;

    /* Loop-thread state. */
    int64_t size;          /* bytes of .log holding whole, accepted batches */
    int64_t next_offset;   /* offset after the last batch (the next segment's base if sealed) */
    int64_t oidx_n;        /* entries in .index, the last oidx_pend_n of them not yet written */
    int64_t oidx_last_off; /* absolute offset of the last .index entry, -1 if none */
    int64_t oidx_last_pos; /* its position, 0 if none */
    int64_t tidx_n;        /* entries in .timeindex */
    int64_t tidx_last_ts;  /* timestamp of the last .timeindex entry, -1 if none */
    int64_t tidx_last_off; /* its absolute offset, -1 if none */
    int64_t bytes_since_index;
    /* The newest .index entries, written in one pwrite when LOG_OIDX_PEND have gathered or
     * before the segment's files are flushed or sealed (log_oidx_sync). A crash loses only
     * entries that describe unflushed bytes: the recovery rescans from the last entry on
     * disk, and an index with fewer entries is still a valid sparse index. */
    uint8_t oidx_pend[LOG_OIDX_PEND * LOG_OIDX_ENTRY];
    int oidx_pend_n;
    int64_t max_ts;        /* largest batch max timestamp, -1 if none */
    int64_t max_ts_offset; /* last offset of the batch that holds it, -1 if none */
    int64_t roll_ms;       /* wall clock when the segment took its first batch; -1 if empty */
    bool dirty;            /* written since the last flush snapshot */
    bool compact;          /* the log's cfg.compact (offset gaps allowed even when active) */
    bool idx_damaged;      /* set by log_seg_open: an index file is missing or misshapen */
    /* txnindex.c: the .txnindex entries, read on first need. */
    struct log_aborted_txn *txns;
    size_t n_txns, cap_txns;
    bool txns_loaded;
    /* check.c: the background check of the bytes the open trusted without reading their CRC.
     * Bytes [0, chk_end) were trusted (0: nothing to check); batches in [chk_done, chk_end)
     * are not served while the log is being checked. The batch at chk_done must start at or
     * after offset chk_expect, and every batch below chk_end ends below chk_end_offset.
     * chk_bad is the position of a damaged batch whose end the check still looks for (-1 if
     * none); chk_gen changes when a truncation makes a check in flight stale. */
    int64_t chk_end, chk_done, chk_expect, chk_end_offset, chk_bad, chk_bad_offset;
    const char *chk_why; /* what was wrong with the batch at chk_bad (a static string) */
    uint64_t chk_gen;
    int chk_io_errors;
    /* Damaged ranges the check found: never served, skipped by every walk (by position). */
    struct log_hole *holes;
    size_t n_holes;
};

struct log_epoch_entry {
    int32_t epoch;
    int64_t start;
};

struct log {
    char *dir;
    struct log_config cfg;
    const struct sysio *io; /* the system calls (struct log_io's `sys`) */
    struct tclock *clock;   /* the time service (struct log_io's `clock`) */

    struct log_segment **segs; /* sorted by base; the last one is the active segment */
    size_t n_segs, cap_segs;

    int64_t leo;   /* log end offset */
    int64_t start; /* log start offset */
    _Atomic int64_t flushed;
    atomic_bool failed;    /* set after an fsync failure or a failed rollback: refuse writes */
    int64_t last_flush_ms; /* monotonic */
    uint64_t trunc_gen;    /* bumped by truncation: a flush snapshot from before is stale */
    bool dir_dirty;        /* files created or removed since the last flush snapshot */
    bool created;          /* the directory held no segment: log_open made the first one */

    /* The one flush in flight (prepare → run → done). */
    bool flush_busy;
    struct log_segment **flush_segs;
    int (*flush_fds)[LOG_NFILES]; /* their descriptors, copied on the loop for the pool */
    size_t n_flush;
    bool flush_dir;
    uint64_t flush_gen;
    atomic_int flush_result;

    struct log_epoch_entry *epochs;
    size_t n_epochs, cap_epochs;
    bool epochs_dirty; /* changed since the file was last taken for writing */
    /* log_open: the leader-epoch-checkpoint was missing or malformed, so every batch the
     * open walks past (not only the rescanned ones) gives its epoch to the cache. */
    bool epochs_unknown;

    /* compact.c: a clean in flight. Segments are then not deleted by retention or
     * DeleteRecords (log_retain deletes them after the clean): the cleaner renames files of
     * the segments it read, and a deletion by path would hit its new files. */
    struct log_clean *cleaning;

    /* check.c: queued for (or in) the background check; reads are then gated (a batch not yet
     * checked is not served). chk_want is the base of a segment a reader waits for (checked
     * next), -1 if none. */
    bool checking;
    struct log *chk_prev, *chk_next;
    int64_t chk_want;
};

/* Wall-clock milliseconds (segment.ms, retention.ms) and monotonic ones (flush.ms). */
static inline int64_t log_now_ms(const struct log *l)
{
    return tclock_now_ms(l->clock);
}
static inline int64_t log_mono_ms(const struct log *l)
{
    return tclock_mono_ms(l->clock);
}

/* Whether batches of this segment may skip offsets (compaction removed batches): sealed
 * segments and every segment of a compacted log. Elsewhere a batch must start where the
 * previous one ended, which catches a base offset damaged outside the CRC. */
static inline bool log_seg_gaps_ok(const struct log_segment *s)
{
    return s->sealed || s->compact;
}

/* Whether a batch starting at `base` may follow one that ended before `expect`. */
static inline bool log_seg_follows(const struct log_segment *s, int64_t base, int64_t expect)
{
    return base == expect || (base > expect && log_seg_gaps_ok(s));
}

static inline struct log_segment *log_active(const struct log *l)
{
    return l->segs[l->n_segs - 1];
}

/* Test builds, TALLY_TEST_FAULT=log:lose_unflushed_tail armed: writes the flushed offset to
 * the log directory's note, which the hook's next unclean open cuts back to (log.c). Call on
 * every change of `flushed` after open. */
#ifdef TALLY_TEST_HOOKS
void log_note_synced(const struct log *l);
#else
#define log_note_synced(l) ((void)0)
#endif

/* The log's offsets as every call leaves them (for assert(); an invariant, not a check of
 * anything read from a file or a request):
 * - the first segment starts at or below the log start, which is at or below the log end: the
 *   start only rises (retention and DeleteRecords raise it to a segment base or an offset <=
 *   the end, and delete only segments wholly below it); only a truncation lowers it, to the
 *   new end;
 * - the flushed offset is at or below the log end: a flush records at most the end it
 *   snapshotted, and a truncation lowers it with the end;
 * - the log end is the active segment's next offset: an append advances both by the batch,
 *   a roll starts the new segment at the end, a truncation sets both;
 * - the active segment is not sealed and the one before it is: log_segs_push seals the old
 *   active segment as it pushes the new one, a truncation unseals the segment it makes
 *   active.
 * A log that has failed (`failed`: an I/O error in the middle of a change) is exempt: it
 * refuses writes, and its memory holds what the failure left. */
static inline bool log_offsets_ordered(const struct log *l)
{
    const struct log_segment *a;

    if (atomic_load(&l->failed))
        return true;
    a = l->n_segs > 0 ? log_active(l) : NULL;
    return a != NULL && l->segs[0]->base <= l->start && l->start <= l->leo &&
           atomic_load(&l->flushed) <= l->leo && a->next_offset == l->leo && !a->sealed &&
           (l->n_segs < 2 || l->segs[l->n_segs - 2]->sealed);
}

/* Big-endian helpers. */
static inline uint32_t log_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t log_be64(const uint8_t *p)
{
    return (uint64_t)log_be32(p) << 32 | log_be32(p + 4);
}
static inline void log_put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}
static inline void log_put64(uint8_t *p, uint64_t v)
{
    log_put32(p, (uint32_t)(v >> 32));
    log_put32(p + 4, (uint32_t)v);
}

/* ---- system calls ---------------------------------------------------------------------- */

/* Every file access of src/log/ goes through the table the log was opened with (l->io, and a
 * copy in each segment and pool job), with base/sysio.h's helpers: those return -errno of the
 * call that failed, and a negative `fd` (log_seg_fd's -errno) is passed through as the result,
 * so `sysio_pwrite_all(s->io, log_seg_fd(s, f), ...)` reports the open. */

/* The checkpoint files and leader-epoch-checkpoint are small; a larger one is refused. */
#define LOG_SMALL_FILE_MAX ((size_t)64 << 20)

/* ---- checkpoint.c: the text format shared by checkpoint files and leader-epoch-checkpoint */

/* Splits buf (NUL-terminated) as "0\n<count>\n" + count lines. Returns 0 with *count and
 * *lines pointing at the first entry line, or ERR_PARSE. */
int log_ckpt_parse_head(const char *buf, int64_t *count, const char **lines);
/* Next line of the entries: copies it (without '\n') into line[cap] and advances *p.
 * Returns 0, ERR_NOTFOUND at the end of the buffer, or ERR_PARSE (too long or no '\n'). */
int log_ckpt_next_line(const char **p, char *line, size_t cap);

/* ---- index.c --------------------------------------------------------------------------- */

/* Appends one .index entry (offset absolute, position in .log): into the segment's pending
 * entries, written with them once LOG_OIDX_PEND have gathered. On a failed write the file is
 * cut back to its previous length, the pending entries dropped and ERR_IO returned. */
int log_oidx_append(struct log_segment *s, int64_t offset, int64_t pos);
/* Writes the pending .index entries (one pwrite; none pending: nothing). 0 or ERR_IO (the
 * entries are then dropped: the index stays valid, only sparser). Called before the
 * segment's descriptors are flushed and when it is sealed. */
int log_oidx_sync(struct log_segment *s);
/* Reads entry i. 0 or ERR_IO. */
int log_oidx_entry(struct log_segment *s, int64_t i, int64_t *offset, int64_t *pos);
/* The largest entry with offset <= target: *offset and *pos, or (base, 0) if there is none. */
int log_oidx_floor(struct log_segment *s, int64_t target, int64_t *offset, int64_t *pos);
/* The number of leading entries with offset < limit_off and position <= limit_pos. */
int log_oidx_count_below(struct log_segment *s, int64_t limit_off, int64_t limit_pos,
                         int64_t *count);
/* Keeps the first n entries. 0 or ERR_IO. */
int log_oidx_truncate(struct log_segment *s, int64_t n);

int log_tidx_append(struct log_segment *s, int64_t ts, int64_t offset);
int log_tidx_entry(struct log_segment *s, int64_t i, int64_t *ts, int64_t *offset);
/* The last entry with timestamp < ts: its index, or -1 if none (then *offset = base). */
int log_tidx_floor_below(struct log_segment *s, int64_t ts, int64_t *offset, int64_t *idx);
/* The number of leading entries with offset < limit_off. */
int log_tidx_count_below(struct log_segment *s, int64_t limit_off, int64_t *count);
int log_tidx_truncate(struct log_segment *s, int64_t n);

/* ---- segment.c ------------------------------------------------------------------------- */

/* Creates the four files of a new, empty segment (truncating leftovers). 0, ERR_IO or
 * ERR_NOMEM. The new segment holds one reference (the caller's). */
int log_seg_create(struct log *l, int64_t base, struct log_segment **out);
/* Opens the files of an existing segment (creating missing index files and noting it in
 * idx_damaged). Loads sizes only. 0, ERR_IO or ERR_NOMEM. */
int log_seg_open(struct log *l, int64_t base, struct log_segment **out);
/* The descriptor of one of the segment's files, opened now if it is not open (sealed
 * segments: through the bounded cache, closing the least recently used idle ones). -errno
 * if it cannot be opened (EMFILE, ...; logged, rate-limited). Event loop only. */
int log_seg_fd(struct log_segment *s, enum log_file f);
/* ftruncate through log_seg_fd: 0 or -errno. */
int log_seg_ftruncate(struct log_segment *s, enum log_file f, off_t len);
/* Marks the segment sealed (its descriptors join the cache) or active again (after a
 * truncation removed its successors: they leave it). */
void log_seg_seal(struct log_segment *s, bool sealed);
/* A pinned segment's open descriptors are not closed by the cache. */
void log_seg_pin(struct log_segment *s);
void log_seg_unpin(struct log_segment *s);
/* Closes the segment's descriptors if nothing needs them (not pinned, nothing unflushed). */
void log_seg_close_idle(struct log_segment *s);
/* The .log file's modification time in ms, -1 if unknown. */
int64_t log_seg_mtime_ms(const struct log_segment *s);
void log_seg_ref(struct log_segment *s);
void log_seg_unref(struct log_segment *s);
/* Unlinks the segment's files; descriptors stay open until the last unref. */
void log_seg_unlink(struct log_segment *s);

/* Reads that must not wait for the disk (log_read_nowait, on the event loop). Between
 * log_nowait_begin and log_nowait_end the calling thread's reads through log_seg_pread are
 * preadv2(RWF_NOWAIT) (sysio's pread_nowait): one that finds a page not in the page cache
 * notes the segment, file and position in `note` and fails with LOG_COLD, which the index
 * and header readers turn into ERR_WOULD_BLOCK (nothing logged) and every caller passes up
 * unchanged. Other threads (pool jobs) are not affected. */
struct log_cold {
    struct log_segment *seg;
    enum log_file file;
    int64_t pos;
};
#define LOG_COLD (-EAGAIN)
void log_nowait_begin(struct log_cold *note);
void log_nowait_end(void);
/* Reads len bytes of file f at off (retrying short reads and EINTR, as sysio_pread_full):
 * the bytes read (fewer at the end of the file), -errno, or LOG_COLD (see above). */
ssize_t log_seg_pread(struct log_segment *s, enum log_file f, void *buf, size_t len, off_t off);
/* As log_seg_pread, but a read that must not wait is content with `need` bytes (<= len): what
 * lies past them in pages not in the page cache is not read, rather than LOG_COLD. */
ssize_t log_seg_pread_some(struct log_segment *s, enum log_file f, void *buf, size_t len,
                           size_t need, off_t off);

/* A window of a .log file's bytes, so that walking the headers of small batches costs one
 * pread per window rather than one per batch. Zero `n` before first use. */
struct log_hdr_window {
    int64_t at, n;
    uint8_t buf[4096];
};
/* As log_seg_read_hdr, through the window. */
int log_seg_read_hdr_w(struct log_segment *s, struct log_hdr_window *w, int64_t pos, int64_t limit,
                       struct log_batch_hdr *h);
/* Walks the headers from `pos`, where the batch with base offset `expect` must start,
 * checking that batches tile, follow one another without gaps and end below `end_offset`.
 * Stops at `limit` bytes, or before a batch whose last offset >= max_offset or that would
 * end past byte `max_end`. *end and *next receive the position and offset after the last
 * batch passed. Returns 0, ERR_IO, or ERR_CORRUPT_MESSAGE when the batch at *end does not
 * fit (the batches before it do). */
int log_seg_walk(struct log_segment *s, struct log_hdr_window *w, int64_t pos, int64_t expect,
                 int64_t limit, int64_t end_offset, int64_t max_offset, int64_t max_end,
                 int64_t *end, int64_t *next);

/* Reads and sanity-checks the batch header at pos (which must leave 61 bytes before
 * `limit`). Returns 0, ERR_IO, ERR_TRUNCATED (header or batch runs past limit) or
 * ERR_CORRUPT_MESSAGE (bad magic or length). */
int log_seg_read_hdr(struct log_segment *s, int64_t pos, int64_t limit, struct log_batch_hdr *h);
/* The first batch at or after the index entry for `offset` whose last offset >= offset,
 * scanning no further than `limit` bytes. Returns 0 with *pos and *h, ERR_NOTFOUND if no
 * such batch, ERR_IO, or ERR_CORRUPT_MESSAGE if the batches do not tile or their offsets do
 * not follow one another from the segment's base (or the index entry) up to its end. */
int log_seg_find(struct log_segment *s, int64_t offset, int64_t limit, int64_t *pos,
                 struct log_batch_hdr *h);
/* Accounts for a batch written at `pos` of this segment: adds the index entries due
 * (index.interval.bytes rule) and advances size, next offset and max timestamp. On failure
 * (ERR_IO) the index files are as before and nothing in memory changed. */
int log_seg_index_batch(struct log *l, struct log_segment *s, int64_t pos,
                        const struct log_batch_hdr *h, int64_t max_ts);
/* Writes the final .timeindex entry for the segment's max timestamp, if not already its
 * last entry (Kafka does this when a segment becomes inactive and on close). */
int log_seg_finish(struct log_segment *s);
/* Recomputes next offset, max timestamp and bytes since the last index entry by scanning
 * headers from the last index entries to the end (clean open of the active segment, and
 * after truncation). 0, ERR_IO, or ERR_CORRUPT_MESSAGE if the tail does not tile. */
int log_seg_scan_tail(struct log *l, struct log_segment *s);
/* Rescans the whole segment with CRC checks, rebuilding both indexes, and truncates it at
 * the first torn or corrupt batch, offset that does not follow the previous batch, or batch
 * reaching `end_offset` (the next segment's base; INT64_MAX for the active segment); *lost
 * gets the bytes cut and *why what was found there (the caller logs it). 0, ERR_IO or
 * ERR_NOMEM. */
int log_seg_recover(struct log *l, struct log_segment *s, int64_t end_offset, int64_t *lost,
                    const char **why);
/* Removes every offset >= offset from this segment (cut at the start of the batch holding
 * it). 0 or ERR_IO. */
int log_seg_truncate(struct log *l, struct log_segment *s, int64_t offset);

/* ---- txnindex.c ------------------------------------------------------------------------ */

#define PATH_MAX_TXN 4200
/* Drops the entries whose marker is at or past `offset` (truncation, recovery). 0, ERR_IO or
 * ERR_NOMEM. */
int log_txn_truncate_seg(struct log_segment *s, int64_t offset);
/* Frees the in-memory entries (segment freed). */
void log_txn_free_seg(struct log_segment *s);
/* Compaction's swap: segs[0..k) (in order) become one segment under segs[0]'s name, so the
 * entries of segs[1..k) are appended to segs[0]'s .txnindex (an aborted transaction stays
 * listed for read_committed while any of its batches may remain). 0, ERR_IO or ERR_NOMEM. */
int log_txn_merge(struct log_segment *const *segs, size_t k);
/* The same at open, on files (a swap completed by log_clean_recover): appends the whole
 * entries of the .txnindex file `from` (missing: none) to the file `to`. 0 or ERR_IO. */
int log_txn_append_file(const struct sysio *io, const char *to, const char *from);

/* ---- recovery.c ------------------------------------------------------------------------ */

/* Lists the directory, opens every segment and brings the log to a consistent state
 * (clean: index sanity checks only; unclean: rescan from the recovery point). Fills
 * segs, leo. 0, ERR_IO or ERR_NOMEM. */
int log_recover_open(struct log *l, int64_t recovery_point, bool clean);

/* ---- check.c: the background check and its quarantined ranges ------------------------- */

/* The hole holding byte `pos` of s, or the first one after it; NULL if none. */
const struct log_hole *log_seg_hole_from(const struct log_segment *s, int64_t pos);
/* If `pos` lies in a hole, moves it (and *expect, when not NULL) to the hole's end and returns
 * true (repeatedly: holes may touch). */
bool log_seg_skip_holes(const struct log_segment *s, int64_t *pos, int64_t *expect);
/* Whether the batch at `pos` (found by log_seg_find) may be served, and the position a read
 * starting there must stop before (the next hole or the first byte not yet checked; at most
 * `limit`). */
bool log_seg_servable(const struct log *l, const struct log_segment *s, int64_t pos, int64_t limit,
                      int64_t *serve_end);
/* Whether s still has bytes to check while its log is being checked. */
bool log_seg_unchecked(const struct log *l, const struct log_segment *s);
/* A reader waits for segment s: check it next. */
void log_check_want(struct log *l, const struct log_segment *s);
/* A truncation cut s at byte `pos` (offset `next` is its new end): the check state and the
 * holes past it go, and a check in flight on s is stale. */
void log_seg_check_cut(struct log_segment *s, int64_t pos, int64_t next);
/* The log closes: leaves the queue; a check in flight on it drops its result. */
void log_check_forget(struct log *l);
/* Frees the segment's holes (segment freed). */
void log_seg_holes_free(struct log_segment *s);

/* ---- log.c / retention.c --------------------------------------------------------------- */

/* Appends s to the segment list (taking over the caller's reference). 0 or ERR_NOMEM. */
int log_segs_push(struct log *l, struct log_segment *s);
/* Removes segment i from the list, unlinks its files and drops the log's reference. */
void log_segs_delete(struct log *l, size_t i);
/* Index of the segment whose base is the largest <= offset (0 if offset is below all). */
size_t log_segs_find(const struct log *l, int64_t offset);

/* ---- compact.c ------------------------------------------------------------------------- */

/* Before the segments are listed at open: deletes a clean's leftovers (*.cleaned files, and
 * .swap files without the .log.swap that commits them) and completes every committed swap
 * (<base>.log.swap: the old segments it replaces — those with a base in (base, its last
 * offset] — are deleted and the .swap files renamed in). 0 or ERR_IO. */
int log_clean_recover(struct log *l);

/* ---- epoch.c --------------------------------------------------------------------------- */

/* Loads leader-epoch-checkpoint; a missing or malformed file leaves the cache empty and sets
 * l->epochs_unknown. 0 or ERR_IO / ERR_NOMEM. */
int log_epochs_load(struct log *l);
/* Log open only (the log end is not known yet, so nothing is asserted against it): the batch
 * at `base_offset` carries `epoch`; a newer epoch than the latest known starts there, and
 * the entries at or past `base_offset` it contradicts go (Kafka's LogLoader assigns every
 * batch it rescans the same way). Batches must come in offset order. */
void log_epochs_note(struct log *l, int32_t epoch, int64_t base_offset);
/* Marks the cache changed: the file is rewritten by its owner (log_epochs_take) or at a
 * clean close. */
void log_epochs_store(struct log *l);
/* Writes a changed cache now, blocking (clean close). 0, ERR_IO or ERR_NOMEM. */
int log_epochs_flush_sync(struct log *l);
/* Drops entries with start >= offset (truncation), rewriting the file if anything changed. */
void log_epochs_truncate_end(struct log *l, int64_t offset, bool inclusive);
/* Drops entries wholly before offset and moves the one holding it to start there. */
void log_epochs_truncate_start(struct log *l, int64_t offset);

#endif
