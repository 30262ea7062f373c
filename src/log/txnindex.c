/* SPDX-License-Identifier: Apache-2.0 */
/* log txnindex: each segment's `<base>.txnindex`, the aborted transactions whose ABORT marker
 * lies in that segment, in Kafka's format (TransactionIndex / AbortedTxn), 34 bytes each,
 * big-endian:
 **   OFFSET  SIZE  FIELD
 **        0     2  version (0)
 **        2     8  producer id
 **       10     8  first offset of the transaction
 **       18     8  last offset (the ABORT marker's)
 **       26     8  last stable offset right after the abort
 * Entries are appended in marker order. The file is read into memory the first time a
 * segment's entries are needed (aborts are rare; most files are empty) and appended with
 * pwrite; a torn last entry (a crash mid-write) is ignored on load and cut by the next
 * append. Not fsynced on its own: producer-state replay after an unclean stop rebuilds the
 * entries past the producer snapshot (log_txn_truncate, then the replayed ABORT markers are
 * appended again). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"
#include "base/slog.h"
#include "log/log_int.h"

#define TXN_ENTRY 34
#define TXN_VERSION 0

static void txn_path(const struct log_segment *s, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s.txnindex", s->path);
}

static void encode(uint8_t *b, const struct log_aborted_txn *t)
{
    b[0] = 0;
    b[1] = TXN_VERSION;
    log_put64(b + 2, (uint64_t)t->producer_id);
    log_put64(b + 10, (uint64_t)t->first_offset);
    log_put64(b + 18, (uint64_t)t->last_offset);
    log_put64(b + 26, (uint64_t)t->last_stable_offset);
}

static int push(struct log_segment *s, const struct log_aborted_txn *t)
{
    if (s->n_txns == s->cap_txns) {
        size_t cap = s->cap_txns ? s->cap_txns * 2 : 4;
        struct log_aborted_txn *v = realloc(s->txns, cap * sizeof *v);
        if (v == NULL)
            return ERR_NOMEM;
        s->txns = v;
        s->cap_txns = cap;
    }
    s->txns[s->n_txns++] = *t;
    return 0;
}

/* pread of up to len bytes at off that never waits for the disk (RWF_NOWAIT), retrying
 * short reads: the bytes read (fewer at the end of the file), -errno, or LOG_COLD when a page
 * is not in the page cache. */
static ssize_t pread_nowait_full(struct log_segment *s, int fd, uint8_t *buf, size_t len, off_t off)
{
    size_t got = 0;
    while (got < len) {
        ssize_t r = s->io->pread_nowait(fd, buf + got, len - got, off + (off_t)got);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return errno == EAGAIN ? LOG_COLD : -errno;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

/* Reads the segment's .txnindex into memory once. 0, ERR_IO or ERR_NOMEM; with `nowait` (the
 * event loop) also ERR_WOULD_BLOCK when a page of the file is not in the page cache, and then
 * nothing is loaded. */
static int load_with(struct log_segment *s, bool nowait)
{
    char path[PATH_MAX_TXN];
    uint8_t buf[TXN_ENTRY * 64];
    off_t at = 0;
    int fd, rc = 0;

    if (s->txns_loaded)
        return 0;
    txn_path(s, path, sizeof path);
    fd = s->io->open(path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) {
        if (errno == ENOENT) {
            s->txns_loaded = true;
            return 0;
        }
        slog_error(LOG_MOD, "open of %s failed: %s", path, strerror(errno));
        return ERR_IO;
    }
    for (;;) {
        ssize_t r = nowait ? pread_nowait_full(s, fd, buf, sizeof buf, at)
                           : sysio_pread_full(s->io, fd, buf, sizeof buf, at);
        if (r == LOG_COLD) {
            rc = ERR_WOULD_BLOCK;
            break;
        }
        if (r < 0) {
            slog_error(LOG_MOD, "read of %s failed: %s", path, strerror((int)-r));
            rc = ERR_IO;
            break;
        }
        for (ssize_t k = 0; k + TXN_ENTRY <= r && rc == 0; k += TXN_ENTRY) {
            const uint8_t *b = buf + k;
            struct log_aborted_txn t = {
                .producer_id = (int64_t)log_be64(b + 2),
                .first_offset = (int64_t)log_be64(b + 10),
                .last_offset = (int64_t)log_be64(b + 18),
                .last_stable_offset = (int64_t)log_be64(b + 26),
            };
            if (b[0] != 0 || b[1] != TXN_VERSION) {
                slog_warn(LOG_MOD,
                          "%s: entry %" PRId64 " has unknown version %d; ignoring the rest", path,
                          (int64_t)(at + k) / TXN_ENTRY, b[0] << 8 | b[1]);
                r = 0;
                break;
            }
            rc = push(s, &t);
        }
        if (rc != 0 || r < (ssize_t)sizeof buf)
            break;
        at += r;
    }
    s->io->close(fd);
    if (rc != 0) {
        free(s->txns);
        s->txns = NULL;
        s->n_txns = s->cap_txns = 0;
        return rc;
    }
    s->txns_loaded = true;
    return 0;
}

static int load(struct log_segment *s)
{
    return load_with(s, false);
}

/* Rewrites the file's tail from entry `from` on (after an append or a truncation). */
static int write_from(struct log_segment *s, size_t from)
{
    char path[PATH_MAX_TXN];
    uint8_t b[TXN_ENTRY];
    int fd, rc = 0;

    txn_path(s, path, sizeof path);
    fd = s->io->open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        slog_error(LOG_MOD, "open of %s failed: %s", path, strerror(errno));
        return ERR_IO;
    }
    for (size_t i = from; i < s->n_txns && rc == 0; i++) {
        encode(b, &s->txns[i]);
        int w = sysio_pwrite_all(s->io, fd, b, sizeof b, (off_t)(i * TXN_ENTRY));
        if (w < 0) {
            slog_error(LOG_MOD, "write of %s failed: %s", path, strerror(-w));
            rc = ERR_IO;
        }
    }
    if (rc == 0 && s->io->ftruncate(fd, (off_t)(s->n_txns * TXN_ENTRY)) != 0) {
        slog_error(LOG_MOD, "truncate of %s failed: %s", path, strerror(errno));
        rc = ERR_IO;
    }
    s->io->close(fd);
    return rc;
}

void log_txn_free_seg(struct log_segment *s)
{
    free(s->txns);
    s->txns = NULL;
    s->n_txns = s->cap_txns = 0;
}

int log_txn_truncate_seg(struct log_segment *s, int64_t offset)
{
    size_t keep = 0;
    int rc = load(s);

    if (rc != 0)
        return rc;
    while (keep < s->n_txns && s->txns[keep].last_offset < offset)
        keep++;
    if (keep == s->n_txns)
        return 0;
    s->n_txns = keep;
    return write_from(s, keep);
}

int log_txn_append(struct log *l, const struct log_aborted_txn *t)
{
    struct log_segment *s;
    int rc;

    if (t->last_offset < l->segs[0]->base || t->last_offset >= l->leo)
        return ERR_OFFSET_OUT_OF_RANGE;
    s = l->segs[log_segs_find(l, t->last_offset)];
    rc = load(s);
    if (rc == 0)
        rc = push(s, t);
    if (rc == 0) {
        rc = write_from(s, s->n_txns - 1);
        if (rc != 0)
            s->n_txns--;
    }
    return rc;
}

int log_txn_truncate(struct log *l, int64_t offset)
{
    int rc = 0;

    for (size_t i = log_segs_find(l, offset); i < l->n_segs && rc == 0; i++)
        rc = log_txn_truncate_seg(l->segs[i], offset);
    return rc;
}

int log_txn_collect(struct log *l, int64_t from, int64_t upto, struct log_aborted_txn **out,
                    size_t *n_out)
{
    struct log_aborted_txn *v = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;

    *out = NULL;
    *n_out = 0;
    /* An entry lives in the segment of its marker, which is past its first offset: the
     * segments before the one holding `from` only hold transactions that ended before it.
     * Later segments may hold markers of transactions that began before `upto`, so the walk
     * goes on until an entry's LSO shows that nothing open at `upto` is left (Kafka's rule). */
    for (size_t i = log_segs_find(l, from); i < l->n_segs; i++) {
        struct log_segment *s = l->segs[i];
        bool complete = false;

        if ((rc = load(s)) != 0)
            break;
        for (size_t k = 0; k < s->n_txns; k++) {
            const struct log_aborted_txn *t = &s->txns[k];
            if (t->last_offset >= from && t->first_offset < upto) {
                if (n == cap) {
                    size_t c = cap ? cap * 2 : 8;
                    struct log_aborted_txn *nv = realloc(v, c * sizeof *nv);
                    if (nv == NULL) {
                        rc = ERR_NOMEM;
                        break;
                    }
                    v = nv;
                    cap = c;
                }
                v[n++] = *t;
            }
            /* Kafka's stop rule: an entry whose LSO is past the bound closes the search. */
            if (t->last_stable_offset >= upto)
                complete = true;
        }
        if (rc != 0 || complete)
            break;
    }
    if (rc != 0) {
        free(v);
        return rc;
    }
    *out = v;
    *n_out = n;
    return 0;
}

int log_txn_ready_nowait(struct log *l, int64_t from, int64_t upto, char *cold_path, size_t cap)
{
    /* The segments log_txn_collect would walk, loaded without waiting for the disk. */
    for (size_t i = log_segs_find(l, from); i < l->n_segs; i++) {
        struct log_segment *s = l->segs[i];
        bool complete = false;
        int rc = load_with(s, true);

        if (rc == ERR_WOULD_BLOCK) {
            txn_path(s, cold_path, cap);
            return rc;
        }
        if (rc != 0)
            return 0; /* log_txn_collect meets it again and reports it */
        for (size_t k = 0; k < s->n_txns && !complete; k++)
            complete = s->txns[k].last_stable_offset >= upto;
        if (complete)
            break;
    }
    return 0;
}

int log_txn_merge(struct log_segment *const *segs, size_t k)
{
    struct log_segment *first = segs[0];
    size_t n0;
    int rc = load(first);

    if (rc != 0)
        return rc;
    n0 = first->n_txns;
    for (size_t i = 1; i < k && rc == 0; i++) {
        struct log_segment *s = segs[i];
        if ((rc = load(s)) != 0)
            break;
        for (size_t j = 0; j < s->n_txns && rc == 0; j++)
            rc = push(first, &s->txns[j]);
    }
    if (rc == 0 && first->n_txns > n0)
        rc = write_from(first, n0);
    if (rc != 0)
        first->n_txns = n0;
    return rc;
}

int log_txn_append_file(const struct sysio *io, const char *to, const char *from)
{
    uint8_t buf[TXN_ENTRY * 64];
    off_t at = 0, out;
    struct stat st;
    int src, dst, rc = 0;

    src = io->open(from, O_RDONLY | O_CLOEXEC, 0);
    if (src < 0)
        return errno == ENOENT ? 0 : ERR_IO;
    dst = io->open(to, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (dst < 0 || io->fstat(dst, &st) != 0) {
        slog_error(LOG_MOD, "open of %s failed: %s", to, strerror(errno));
        if (dst >= 0)
            io->close(dst);
        io->close(src);
        return ERR_IO;
    }
    out = st.st_size - st.st_size % TXN_ENTRY; /* a torn last entry is written over */
    for (;;) {
        ssize_t r = sysio_pread_full(io, src, buf, sizeof buf, at);
        if (r < 0) {
            rc = ERR_IO;
            break;
        }
        r -= r % TXN_ENTRY;
        if (r > 0 && sysio_pwrite_all(io, dst, buf, (size_t)r, out) < 0) {
            rc = ERR_IO;
            break;
        }
        out += r;
        at += r;
        if (r < (ssize_t)sizeof buf)
            break;
    }
    if (rc != 0)
        slog_error(LOG_MOD, "cannot move the aborted transactions of %s into %s", from, to);
    io->close(dst);
    io->close(src);
    return rc;
}
