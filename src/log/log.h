/* SPDX-License-Identifier: Apache-2.0 */
/* log: one partition's append-only log on disk, in Kafka's layout — segments
 * <20-digit base offset>.log with sparse .index (offset → position) and .timeindex
 * (timestamp → offset), an empty-able .txnindex slot, and leader-epoch-checkpoint — plus the
 * per-directory checkpoint files. Batches arrive already validated (record/); the log
 * assigns offsets, appends, rolls, retains, recovers, and hands out file ranges for
 * sendfile(). No network code. All file and clock access goes through struct log_io (the
 * system-call table of base/sysio.h and a clock) so tests can inject short writes, fsync
 * failure, ENOSPC and run on virtual time. */
#ifndef TALLY_LOG_H
#define TALLY_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct log;
struct sysio;
struct tclock;

/* What a log reaches the outside through: the system calls (base/sysio.h; tests replace them
 * to inject short writes, fsync failure, ENOSPC) and the time service — wall time for
 * segment.ms and retention.ms, monotonic time for flush.ms. Both borrowed; log_open requires
 * both. The functions of this header that take a bare `const struct sysio *` (checkpoints,
 * the epoch file, the batch iterator) read no time. */
struct log_io {
    const struct sysio *sys;
    struct tclock *clock;
};

/* Per-partition settings (Kafka topic config names in comments). */
struct log_config {
    int64_t segment_bytes;        /* segment.bytes */
    int64_t segment_ms;           /* segment.ms */
    int64_t retention_bytes;      /* retention.bytes, -1 = unlimited */
    int64_t retention_ms;         /* retention.ms, -1 = unlimited */
    int64_t flush_messages;       /* flush.messages */
    int64_t flush_ms;             /* flush.ms */
    int32_t index_interval_bytes; /* index.interval.bytes, 4096 */
    int32_t max_index_bytes;      /* segment.index.bytes, 10485760 */
    /* cleanup.policy contains compact: batches may leave offset gaps in any segment (the
     * cleaner removes batches; readers skip the holes). Sealed segments always accept gaps,
     * since a log cleaned once keeps its holes when its policy changes. */
    bool compact;
};

/* Fills Kafka's defaults. */
void log_config_default(struct log_config *cfg);

/* Opens (creating if missing) the log in directory `dir`. `recovery_point`: every offset below
 * it is known flushed; when `clean` is false (no clean-shutdown marker), each segment at or
 * past the recovery point is rescanned batch by batch (header + CRC32C) and the log is
 * truncated at the first torn or corrupt batch (one WARN line says where and how much);
 * indexes of rescanned segments are rebuilt. When `clean` is true nothing is rescanned, so
 * opening costs O(segments), not O(bytes). Missing or damaged index files are rebuilt.
 * `log_start_offset` (from the checkpoint, -1 = unknown) is raised to the first segment's
 * base if lower. `io` (with its clock) is borrowed and must outlive the log. Returns 0 and
 * *out, or ERR_IO / ERR_NOMEM after logging a line. Test builds only: with
 * TALLY_TEST_FAULT=log:lose_unflushed_tail an unclean open then cuts the log back to what the
 * last fsync covered, as a crash of the machine would: to the offset a run armed with the same
 * hook noted after each flush, or without that note to `recovery_point` (log.c). */
int log_open(const char *dir, const struct log_config *cfg, const struct log_io *io,
             int64_t recovery_point, int64_t log_start_offset, bool clean, struct log **out);

/* Sealed segments (all but each log's active one) keep their descriptors in one cache of
 * at most `cap` segments per process; the least recently used idle ones are closed first.
 * Returns the previous bound; cap 0 only reads it. Default 128. Event loop only. */
size_t log_fd_cache_limit(size_t cap);

/* Applies new settings (topic configs changed). */
void log_set_config(struct log *l, const struct log_config *cfg);

/* Closes files and frees. With `clean`, flushes first and writes the producer-independent
 * state needed for a fast open (indexes trimmed to size). NULL is ignored. */
void log_close(struct log *l, bool clean);

/* Appends one validated batch: sets its base offset to the log end offset (and its leader
 * epoch) in place, writes it, indexes it, and rolls first if the active segment is full by
 * size or age. `max_timestamp` is the batch's max timestamp (after any LogAppendTime
 * rewrite), for the time index. On success *base_offset receives the assigned offset and the
 * log end offset advances by last_offset_delta + 1. Returns 0, ERR_IO (e.g. ENOSPC: nothing
 * is left half-written — the segment is truncated back), or ERR_KAFKA_STORAGE_ERROR once the
 * log has failed and refuses writes. */
int log_append(struct log *l, uint8_t *batch, size_t len, int32_t last_offset_delta,
               int64_t max_timestamp, int32_t leader_epoch, int64_t *base_offset);

int64_t log_end_offset(const struct log *l);
int64_t log_start_offset(const struct log *l);
/* Base offset of the active (last) segment: it changes when the log rolls. */
int64_t log_active_base(const struct log *l);
/* Offset below which everything is fsynced. */
int64_t log_flushed_offset(const struct log *l);
/* Whether the log has failed (an fsync or a write it could not undo failed): it then refuses
 * writes with ERR_KAFKA_STORAGE_ERROR and its flushed offset no longer moves. Any thread. */
bool log_failed(const struct log *l);
/* Total bytes of all segments. */
int64_t log_size_bytes(const struct log *l);
/* Segments of the log (the active one included). */
size_t log_segment_count(const struct log *l);

/* A contiguous byte range of one segment file, to be sent with sendfile(). It holds a
 * reference on the segment (so retention cannot close the fd under a reader) until
 * log_slice_release. len 0 = nothing to read. */
struct log_slice {
    int fd;
    off_t pos;
    size_t len;
    void *segment;       /* opaque reference */
    int64_t next_offset; /* the offset after the slice's last batch (len 0: the one asked) */
    /* len 0 because the batch asked for is not checked yet (log_check_*): read again later,
     * this is not the end of the log. */
    bool pending;
    /* log_read_nowait only: len 0 because a page the read needed is not in the page cache.
     * [warm_pos, warm_pos + warm_len) of descriptor warm_fd (the segment's .log, .index or
     * .timeindex, open while the slice holds the segment) is what to read into the cache
     * (off the event loop, e.g. on the thread pool) before reading again. */
    bool cold;
    int warm_fd;
    int64_t warm_pos;
    size_t warm_len;
};

/* Finds the batches starting with the one that contains `offset`, up to but not past
 * `max_offset` (the high watermark / LSO: batches whose last offset >= max_offset are not
 * included), at most `max_bytes` — except that the first batch is always included whole if
 * it is below max_offset, even when larger than max_bytes (KIP-74). Reads do not cross a
 * segment boundary (the caller fetches again), nor a quarantined range (log_check_*: its
 * offsets are skipped, as a compaction gap is), nor bytes the background check has not
 * reached: a read of those returns an empty slice with `pending` set (and asks for that
 * segment to be checked next). Returns 0 (slice may be empty when offset == max_offset or
 * the log end), ERR_OFFSET_OUT_OF_RANGE if offset < log start or > log end,
 * ERR_CORRUPT_MESSAGE for a damaged batch header in checked bytes (never served), ERR_IO. */
int log_read(struct log *l, int64_t offset, int64_t max_offset, size_t max_bytes,
             struct log_slice *out);
void log_slice_release(struct log *l, struct log_slice *s);

/* As log_read, for the event loop: waits for no disk. Its index and header reads are
 * preadv2(RWF_NOWAIT) (the same number of system calls as log_read's preads); when one finds
 * a page not in the page cache the answer is an empty slice with `cold` set, holding the
 * segment, and naming the range to warm: the whole index file for an index page, else the
 * .log bytes from that page on, as many as max_bytes asks (at most 16 MiB) and 64 KiB more,
 * never past the segment's end. Release it as any slice. Other results as log_read's. */
int log_read_nowait(struct log *l, int64_t offset, int64_t max_offset, size_t max_bytes,
                    struct log_slice *out);

/* The batch iterator: walks the record batches of a slice (from log_read) in order, by their
 * headers, reading through the log's system calls — the one way code above log/ reads batch
 * headers or whole batches back from a segment (producer-state replay, coordinator replay,
 * ListOffsets' narrowing, compaction). next/read touch only the iterator, `io` and the
 * slice's descriptor, so they may run on the thread pool while the slice is held. Bounded: no batch
 * larger than `max_batch` bytes is returned, and nothing past the slice is read. Caller-allocated;
 * nothing to free. */
struct record_batch;
struct log_batch_iter {
    const struct sysio *io;
    int fd;
    off_t pos, cur, end; /* next batch, batch last returned, end of the range */
    size_t max_batch;
    off_t win_at; /* header window: file position of win[0], -1 = empty */
    size_t win_n;
    uint8_t win[4096];
};
void log_batch_iter_init(struct log_batch_iter *it, const struct sysio *io,
                         const struct log_slice *s, size_t max_batch);
/* The system calls a log was opened with (for log_batch_iter_init). */
const struct sysio *log_get_io(const struct log *l);
/* The next batch's header (CRC not checked). Returns 0 with *hdr; ERR_NOTFOUND at the end of
 * the slice; ERR_IO; ERR_CORRUPT_MESSAGE if the bytes there are not a whole batch inside the
 * slice; ERR_MESSAGE_TOO_LARGE if the batch is larger than max_batch (the walk cannot go on
 * past either). */
int log_batch_iter_next(struct log_batch_iter *it, struct record_batch *hdr);
/* Reads the whole batch last returned by log_batch_iter_next (`hdr`, record_batch_size(hdr)
 * bytes, at most max_batch) into buf. 0 or ERR_IO. */
int log_batch_iter_read(const struct log_batch_iter *it, const struct record_batch *hdr,
                        uint8_t *buf);

/* ListOffsets by timestamp: the first offset whose batch max timestamp >= ts (time index,
 * then a scan of that segment's batches); -1 if none. *out_ts receives that batch's max
 * timestamp. Returns 0 or ERR_IO. */
int log_offset_for_time(struct log *l, int64_t ts, int64_t *out_offset, int64_t *out_ts);
/* As log_offset_for_time, for the event loop: its index and header reads wait for no disk
 * (log_read_nowait). When one would, returns ERR_WOULD_BLOCK with *cold the slice naming what
 * to warm (release it as any slice) and the offsets -1; else *cold is empty and the result is
 * log_offset_for_time's. */
int log_offset_for_time_nowait(struct log *l, int64_t ts, int64_t *out_offset, int64_t *out_ts,
                               struct log_slice *cold);
/* The batch with the largest max timestamp: its offset (the last offset in it, as Kafka
 * answers MAX_TIMESTAMP) and timestamp; -1/-1 for an empty log. */
void log_max_timestamp(const struct log *l, int64_t *offset, int64_t *ts);

/* Moves the log start offset forward to `offset` (DeleteRecords), deleting segments that
 * lie wholly below it. Returns 0, or ERR_OFFSET_OUT_OF_RANGE if offset > log end. */
int log_delete_records(struct log *l, int64_t offset);

/* Retention: deletes whole old segments by retention.ms (segment's largest timestamp older
 * than now - retention.ms) and retention.bytes; never the active segment. Raises the log
 * start offset. Returns the number of segments deleted. */
int log_retain(struct log *l);

/* ---- the background check of trusted bytes (check.c) ------------------------------------- */

/* An open trusts what it does not rescan: after a clean stop every segment, after an unclean
 * one those below the recovery point, are taken on their index and a few batch headers. The
 * background check reads every batch of those bytes once — header, offsets in order, CRC32C
 * — and quarantines a damaged one: its bytes are never served and reads skip its offsets (one
 * ERROR line per damaged range names the file, the position and the offsets); the batches
 * around it stay readable and appends go on. Until the check has passed a batch, a read of
 * it waits (log_read's `pending`).
 *
 * One check runs at a time in the process, in slices: log_check_next on the event loop takes
 * the next slice (a segment a reader waits for first, else the oldest unchecked segment of
 * the first log queued) and pins its file; log_check_run on the thread pool reads at most
 * log_check_slice_bytes of it (touching only the job and the pinned descriptor);
 * log_check_done back on the loop records the result and frees the job. */
struct log_check;

/* Queues the bytes log_open trusted for checking and gates reads of them. Call once, after
 * the log's own start-up reads (producer-state replay): reads before it are not gated.
 * Nothing to check (a new or fully rescanned log): nothing happens. Event loop. */
void log_check_start(struct log *l);
/* True while any log has bytes to check (then log_check_next has work). */
bool log_check_queued(void);
/* Takes the next slice. Returns 0 and *out, ERR_NOTFOUND when nothing is left to check,
 * ERR_NOMEM, or ERR_IO (a file cannot be opened now: logged; try again later). */
int log_check_next(struct log_check **out);
/* Thread pool: checks the slice. */
void log_check_run(struct log_check *c);
/* Event loop: applies the slice's result (quarantining a damaged batch) and frees the job.
 * Returns 0, or the slice's ERR_IO / ERR_NOMEM (logged; its bytes are checked again later:
 * the caller waits a while before the next slice). */
int log_check_done(struct log_check *c);
/* Whether the log still has bytes to check; *damaged (may be NULL) receives the number of
 * ranges quarantined so far. */
bool log_check_pending(const struct log *l, size_t *damaged);
/* Bytes checked and ranges quarantined since the process started (diagnostics). */
void log_check_totals(uint64_t *bytes, uint64_t *damaged);
/* The bytes one log_check_run reads at most (a batch larger than it is read whole, in
 * pieces). Returns the previous value; 0 only reads it. Default 1 MiB. */
size_t log_check_slice_bytes(size_t bytes);

/* ---- aborted transactions (.txnindex, Kafka's format) ---------------------------------- */

/* One aborted transaction, as Kafka's AbortedTxn. */
struct log_aborted_txn {
    int64_t producer_id;
    int64_t first_offset;       /* its first batch */
    int64_t last_offset;        /* its ABORT marker */
    int64_t last_stable_offset; /* the partition's LSO right after the abort */
};
/* Appends an entry to the .txnindex of the segment holding t->last_offset (which must be in
 * the log). Returns 0, ERR_OFFSET_OUT_OF_RANGE, ERR_IO or ERR_NOMEM. */
int log_txn_append(struct log *l, const struct log_aborted_txn *t);
/* Drops every entry whose marker is at or past `offset` (before producer-state replay from
 * `offset` appends them again). 0, ERR_IO or ERR_NOMEM. */
int log_txn_truncate(struct log *l, int64_t offset);
/* The aborted transactions overlapping [from, upto): last_offset >= from and first_offset <
 * upto, from the segment holding `from` on (Kafka's collectAbortedTransactions, stopping at
 * an entry whose LSO reaches `upto`). *out is malloc()ed (NULL when none; the caller frees).
 * Returns 0, ERR_IO or ERR_NOMEM. */
int log_txn_collect(struct log *l, int64_t from, int64_t upto, struct log_aborted_txn **out,
                    size_t *n);
/* For the event loop, before log_txn_collect: loads the .txnindex entries that collect would
 * read, without waiting for the disk. 0 (collect then reads memory only, or meets an error of
 * its own), or ERR_WOULD_BLOCK with the path of a .txnindex whose pages are not in the page
 * cache in cold_path (read it off the loop, then ask again). */
int log_txn_ready_nowait(struct log *l, int64_t from, int64_t upto, char *cold_path, size_t cap);

/* Retention as log_retain, but a segment is deleted only when it lies wholly below `bound`
 * (the last stable offset: read_committed consumers still need what is past it, and its
 * .txnindex entries). log_retain(l) is log_retain_below(l, INT64_MAX). */
int log_retain_below(struct log *l, int64_t bound);

/* Removes every offset >= `offset` (a follower's diverged tail; recovery's torn tail). */
int log_truncate_to(struct log *l, int64_t offset);
/* Deletes every segment and starts again with one empty segment at `offset`, log start and
 * end both `offset` (a follower whose leader's log starts past this log's end). Returns 0,
 * ERR_IO (the log then refuses writes) or ERR_KAFKA_STORAGE_ERROR. */
int log_reset(struct log *l, int64_t offset);

/* Whether flush.messages / flush.ms ask for an fsync now: the unflushed offsets reach
 * flush.messages, or flush.ms has passed since the last flush. With neither set (the
 * default) it is false without reading the clock. */
bool log_flush_due(const struct log *l);
/* fsyncs the segments up to the current end. Blocking: call it off the event loop (from
 * the thread pool); it touches only the file descriptors and an atomic flushed offset, so it
 * may run while the loop appends. Returns 0 or ERR_IO. Then call log_flush_done on the loop
 * with the offset that was passed in as `upto` (after a failed run too: it releases the
 * snapshot). log_flush_prepare returns ERR_EXISTS while a flush is in flight, ERR_NOMEM, or
 * ERR_KAFKA_STORAGE_ERROR once the log has failed (nothing more is flushed). */
int log_flush_prepare(struct log *l, int64_t *upto); /* loop: snapshot what to flush */
int log_flush_run(struct log *l, int64_t upto);      /* thread: fsync */
void log_flush_done(struct log *l, int64_t upto);    /* loop: advance the recovery point */

/* Leader epochs (leader-epoch-checkpoint): records that `epoch` starts at `start_offset`
 * (ignored if not newer than the last entry). Changes memory only (see log_epochs_take).
 * Returns 0 or ERR_NOMEM. */
int log_epoch_assign(struct log *l, int32_t epoch, int64_t start_offset);
/* The leader-epoch checkpoint is written off the event loop. The calls that change the
 * cache (log_open, log_append at a new epoch, log_epoch_assign, truncation, retention,
 * log_delete_records) only mark it changed; its owner then, on the loop, takes the file's
 * new contents with log_epochs_take (*buf malloc()ed, the caller frees; *buf NULL when
 * nothing changed since the last take; ERR_NOMEM leaves it marked), writes them from any
 * thread with log_epochs_write (temp, fsync, rename, fsync of `dir`; 0 or ERR_IO), and after
 * a failed write calls log_epochs_retry on the loop so the next take rewrites it. Writes of
 * one directory's file must not overlap: the owner keeps at most one in flight, so an older
 * snapshot never lands after a newer one. log_close(l, true) writes a changed cache itself
 * (blocking: call it where blocking is allowed). */
int log_epochs_take(struct log *l, char **buf, size_t *len);
int log_epochs_write(const struct sysio *io, const char *dir, const char *buf, size_t len);
void log_epochs_retry(struct log *l);
/* The directory the log was opened in. */
const char *log_dir(const struct log *l);
/* The latest epoch, -1 if none. */
int32_t log_latest_epoch(const struct log *l);
/* For OffsetForLeaderEpoch: the end offset of `epoch` (start of the next epoch, or the log
 * end for the latest) and the largest epoch <= `epoch`; -1/-1 if unknown. */
void log_epoch_end_offset(const struct log *l, int32_t epoch, int32_t *out_epoch, int64_t *out_end);

/* Per-directory checkpoint files ("<version>\n<count>\n<topic> <partition> <offset>\n..."),
 * used for recovery-point-offset-checkpoint and log-start-offset-checkpoint. */
struct log_checkpoint_entry {
    char topic[256];
    int32_t partition;
    int64_t offset;
};
/* Writes atomically (temp, fsync, rename). Returns 0 or ERR_IO. */
int log_checkpoint_write(const struct sysio *io, const char *path,
                         const struct log_checkpoint_entry *e, size_t n);
/* Reads; a missing file gives n = 0. *out is malloc()ed (caller frees). Returns 0, ERR_IO,
 * or ERR_PARSE for a malformed file. */
int log_checkpoint_read(const struct sysio *io, const char *path, struct log_checkpoint_entry **out,
                        size_t *n);

/* ---- compaction (compact.c) -------------------------------------------------------------- */

/* The log cleaner for cleanup.policy=compact (compact.c says how it works and what it keeps).
 * A clean is a job its owner drives in bounded slices: log_clean_begin on the event loop; then,
 * in turn, log_clean_step on the thread pool (one slice: at most one segment read, at most one
 * group of segments written) and log_clean_advance back on the loop (swaps a finished group
 * in, prepares the next slice), until log_clean_advance returns ERR_NOTFOUND; then
 * log_clean_end on the loop. Appends, reads and flushes go on meanwhile; retention and
 * DeleteRecords delete no segment until log_clean_end (log_retain catches up). One clean per
 * log at a time; end it before log_close. */
struct log_clean_config {
    int64_t first_dirty;         /* the cleaner checkpoint: below it the log is clean; -1 = none */
    int64_t upper_bound;         /* nothing at or past it is cleaned (high watermark / LSO) */
    int64_t now_ms;              /* wall clock: tombstone delete horizons */
    int64_t min_lag_ms;          /* min.compaction.lag.ms */
    int64_t delete_retention_ms; /* delete.retention.ms */
    size_t map_bytes;            /* log.cleaner.dedupe.buffer.size: the key map's bound */
    size_t max_batch;            /* the largest batch (and decompressed records) read */
    /* Base offsets of each producer's last batch (ascending): those batches stay, empty if
     * every record in them is cleaned, so the producer's sequence state survives. Copied. */
    const int64_t *keep;
    size_t n_keep;
};

/* What a scheduler weighs before starting a clean (event loop; reads one batch header). */
struct log_clean_info {
    int64_t first_dirty;    /* cfg first_dirty, raised to the log's first segment and start */
    int64_t cleanable_end;  /* a segment base: below the active segment, min.compaction.lag.ms
                               and upper_bound */
    int64_t clean_bytes;    /* bytes of segments wholly below first_dirty */
    int64_t dirty_bytes;    /* bytes of segments from first_dirty's to cleanable_end */
    int64_t first_dirty_ts; /* max timestamp of the batch holding first_dirty; -1 if none */
};
void log_clean_info(struct log *l, int64_t first_dirty, int64_t upper_bound, int64_t now_ms,
                    int64_t min_lag_ms, struct log_clean_info *out);

struct log_clean;

/* Starts a clean of every segment below the cleanable end (log_clean_info). Returns 0 and
 * *out; ERR_NOTFOUND when there is nothing to clean (no sealed segment below the end) or
 * nothing yet (the background check, log_check_*, has not read every segment below the end);
 * ERR_EXISTS if a clean of this log is in flight; ERR_NOMEM; ERR_IO. */
int log_clean_begin(struct log *l, const struct log_clean_config *cfg, struct log_clean **out);
/* Thread pool: one slice. Touches only the job, the descriptors log_clean_advance pinned for
 * it and new files. Returns 0 or the error that stops the job (also kept in the job). */
int log_clean_step(struct log_clean *c);
/* Event loop, after each step: swaps a finished group into the log (unlinks the old
 * segments, renames the new files in, rebuilds the segment list), then pins what the next
 * step reads. Returns 0 (step again), ERR_NOTFOUND (done), or the job's error. */
int log_clean_advance(struct log_clean *c);

/* What a clean did. */
struct log_clean_stats {
    int64_t clean_upto;    /* the new cleaner checkpoint (-1 if the clean failed) */
    int64_t bytes_read;    /* of segments, both passes */
    int64_t bytes_written; /* of new segments */
    int64_t records_read;  /* in the copy pass */
    int64_t records_kept;
    int64_t groups;       /* new segments swapped in */
    int64_t next_horizon; /* earliest delete horizon of a kept tombstone, INT64_MAX if none */
};
/* Event loop: frees the job, removes its unfinished files (unless a test fault stopped it,
 * which leaves them as a crash would), and lets retention delete segments again. Returns the
 * job's outcome (0 when it cleaned everything it began). `st` may be NULL. */
int log_clean_end(struct log_clean *c, struct log_clean_stats *st);

/* Test-only crash points of a clean, in order: "map" (keys read, nothing written), "cleaned"
 * (new segment written as .cleaned), "swap" (renamed to .swap: the commit point), "swapin"
 * (old segments of the group unlinked, new files not yet renamed), "swapped" (group in place,
 * checkpoint not yet written), named "cleaner:<stage>" in base/fault.h's mechanism (test
 * builds only): with TALLY_TEST_FAULT=cleaner:<stage> the process _exit(137)s there;
 * fault_stop_at("cleaner:<stage>") (unit tests) instead makes the job stop there with
 * ERR_SHUTDOWN, leaving the files as the crash would. */

#endif
