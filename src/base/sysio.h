/* SPDX-License-Identifier: Apache-2.0 */
/* sysio: the one table of file-system calls through which the storage code — log/, pstate/,
 * props and replica/'s own files (partition.metadata, checkpoints, directory removal) — reaches
 * the disk, so that a unit test can fail, shorten or observe any file operation (SQLite's
 * aSyscall[], raft's raft_io). Plus the few helpers every owner of a file needs on top of it:
 * whole writes and reads, a directory fsync, atomic replacement of a small file and reading a
 * small file whole.
 *
 * The table entries are the system calls themselves and keep POSIX's contract: -1 (or NULL)
 * with errno set on failure. The helpers follow base/err.h: errno is read at the call that
 * failed and travels as a value (-errno), or is turned into ERR_IO with one log line naming the
 * call, the path and the reason.
 *
 * Who holds a table: the replica manager keeps one (a copy of sysio_default()) and hands it to
 * every log, producer-state snapshot and partition file it opens; tools and the start-up code
 * outside it use sysio_default(). A table is read from the event loop and from thread-pool
 * jobs at once: change its entries only while nothing runs (tests). */
#ifndef TALLY_BASE_SYSIO_H
#define TALLY_BASE_SYSIO_H

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

struct sysio {
    /* open(2); the default adds O_CLOEXEC. */
    int (*open)(const char *path, int flags, mode_t mode);
    ssize_t (*pread)(int fd, void *buf, size_t len, off_t off);
    ssize_t (*pwrite)(int fd, const void *buf, size_t len, off_t off);
    int (*fsync)(int fd);
    int (*ftruncate)(int fd, off_t len);
    int (*fstat)(int fd, struct stat *st);
    int (*close)(int fd);
    int (*stat)(const char *path, struct stat *st);
    int (*unlink)(const char *path);
    int (*rename)(const char *from, const char *to);
    int (*mkdir)(const char *path, mode_t mode);
    int (*rmdir)(const char *path);
    DIR *(*opendir)(const char *path);
    /* readdir(3): NULL at the end, or NULL with errno set on an error (the caller zeroes
     * errno before each call to tell them apart). */
    struct dirent *(*readdir)(DIR *d);
    int (*closedir)(DIR *d);
    /* The event loop's reads (log/'s look-ups for a Fetch): preadv2(..., RWF_NOWAIT), which
     * fails with EAGAIN instead of waiting for the disk when a page is not in the page cache
     * (it may return fewer bytes first: those that were). */
    ssize_t (*pread_nowait)(int fd, void *buf, size_t len, off_t off);
    /* Whether every page of [off, off + len) of fd is in the page cache: 1 yes, 0 no, -1 with
     * errno when the kernel cannot tell (no cachestat(2): callers then act as if it were).
     * The default is one cachestat(2) call, whatever the length. */
    int (*resident)(int fd, off_t off, size_t len);
    /* sendfile(2) of up to len bytes of fd from *off to socket `sock` (non-blocking). */
    ssize_t (*sendfile)(int sock, int fd, off_t *off, size_t len);
    /* posix_fadvise(2): 0 or an error number (its contract, not -1 and errno). */
    int (*fadvise)(int fd, off_t off, off_t len, int advice);
    /* A warm-up (the thread pool's, for a range the loop found cold): brings up to len bytes
     * of fd from off into the page cache, waiting for the disk, and copies none of them out.
     * The bytes now cached from off (fewer at the end of the file, 0 past it; it may stop
     * short of len, as a read does), or -1 with errno. The default splices the range through
     * a pipe into /dev/null: the cached pages pass by reference, for about a twentieth of
     * the CPU of a pread into a buffer thrown away (which it falls back to where the kernel
     * will not splice from the file). */
    ssize_t (*warm)(int fd, off_t off, size_t len);
};

/* The operating system's calls. Static; never NULL. */
const struct sysio *sysio_default(void);

/* Test builds (TALLY_TEST_HOOKS): the calling thread is the event loop. From then on every
 * pread and sendfile of the default table made on this thread first asks the kernel whether
 * its pages are in the page cache, and counts the calls that touched one that was not (a read
 * that may have waited for the disk: DESIGN.md §3 says the loop never does). Release builds:
 * nothing, and the count stays 0. */
void sysio_mark_loop_thread(void);
uint64_t sysio_loop_cold_reads(void);
/* Test builds: counts a compression or decompression (record/compression.c) when the calling
 * thread is the event loop (DESIGN.md §3 puts a produced batch's codec work on the pool);
 * sysio_loop_codec_calls reads the count. Release builds: nothing, and it stays 0. */
void sysio_note_codec_call(void);
uint64_t sysio_loop_codec_calls(void);

/* Writes all of buf at off, retrying short writes and EINTR. 0 or -errno (-ENOSPC for a write
 * that makes no progress). A negative `fd` (an -errno of a failed open) is returned as it is. */
int sysio_pwrite_all(const struct sysio *io, int fd, const void *buf, size_t len, off_t off);

/* Reads up to len bytes at off, retrying short reads and EINTR until EOF. The number of bytes
 * read, or -errno; a negative `fd` is returned as it is. */
ssize_t sysio_pread_full(const struct sysio *io, int fd, void *buf, size_t len, off_t off);

/* Warms [off, off + len) of fd with io->warm, retrying short calls and EINTR until EOF. The
 * number of bytes now cached from off, or -errno; a negative `fd` is returned as it is. */
ssize_t sysio_warm_full(const struct sysio *io, int fd, off_t off, size_t len);

/* The fsyncs made through the default table's fsync, by any thread, since the start: per
 * bucket of duration (seconds, upper bounds sysio_fsync_bounds; counts[SYSIO_FSYNC_BUCKETS]
 * holds the longer ones), not cumulative, and their total seconds. For the metrics
 * (docs/metrics.md: tally_fsync_seconds). */
#define SYSIO_FSYNC_BUCKETS 14
extern const double sysio_fsync_bounds[SYSIO_FSYNC_BUCKETS];
void sysio_fsync_stats(uint64_t counts[SYSIO_FSYNC_BUCKETS + 1], double *sum_s);

/* fsyncs a directory, so that names created, renamed or unlinked in it are durable. 0 or
 * -errno. */
int sysio_fsync_dir(const struct sysio *io, const char *dir);

/* Replaces the file at `path` by buf[0..len) atomically: a temporary file of its own
 * (<path>.<n>.tmp), written whole, fsynced, closed, renamed over `path`, then the directory
 * fsynced. Returns 0 or ERR_IO after one line under `module` naming the call that failed and
 * its reason; the temporary file is removed on failure. A failure after the rename (the
 * directory fsync) leaves the new contents in place, not yet durable. */
int sysio_write_atomic(const struct sysio *io, const char *module, const char *path,
                       const void *buf, size_t len);

/* Reads the whole file at `path` (at most `max` bytes) into a malloc()ed buffer with a NUL
 * after the last byte (the caller frees *out). Returns 0, ERR_NOTFOUND if it does not exist
 * (nothing logged), ERR_IO (logged under `module`; a file larger than `max` is one too) or
 * ERR_NOMEM. */
int sysio_read_file(const struct sysio *io, const char *module, const char *path, size_t max,
                    char **out, size_t *len);

#endif
