/* SPDX-License-Identifier: Apache-2.0 */
/* log epoch: the leader epoch cache of a partition — which leader epoch began at which
 * offset — kept in memory and in <dir>/leader-epoch-checkpoint, Kafka's format:
 **   LINE   CONTENT
 **      1   version: 0
 **      2   count
 **    3..   "<epoch> <start offset>", epochs and start offsets strictly increasing
 *
 * Rewritten atomically (checkpoint.c's temp + fsync + rename) after every change; changes
 * are rare (one per leader election, plus truncation and retention). A change only marks the
 * cache dirty: the calls that change it run on the event loop, which must not wait for a
 * disk, so the owner takes the new contents (log_epochs_take) and writes them on the thread
 * pool (log_epochs_write); log_close(l, true) writes a dirty cache itself. The memory copy
 * is authoritative: a failed write is reported and retried (log_epochs_retry). */
#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/slog.h"
#include "log/log_int.h"

#define EPOCH_FILE "leader-epoch-checkpoint"

static void epoch_path(const struct log *l, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s/" EPOCH_FILE, l->dir);
}

/* Entries strictly increase in epoch and in start offset, and none starts past the log end:
 * OffsetForLeaderEpoch and follower truncation search the cache on that (for assert()). The
 * file is checked as it is loaded; a new entry drops those it contradicts; truncation drops
 * from the end, and from the start only moves the first kept entry up to the new log start,
 * still below the next one. */
static bool epochs_ordered(const struct log *l)
{
    for (size_t i = 0; i < l->n_epochs; i++) {
        if (l->epochs[i].start > l->leo)
            return false;
        if (i > 0 && (l->epochs[i].epoch <= l->epochs[i - 1].epoch ||
                      l->epochs[i].start <= l->epochs[i - 1].start))
            return false;
    }
    return true;
}

static int epochs_reserve(struct log *l, size_t n)
{
    struct log_epoch_entry *e;
    size_t cap = l->cap_epochs ? l->cap_epochs : 8;
    if (n <= l->cap_epochs)
        return 0;
    while (cap < n)
        cap *= 2;
    e = realloc(l->epochs, cap * sizeof *e);
    if (!e)
        return ERR_NOMEM;
    l->epochs = e;
    l->cap_epochs = cap;
    return 0;
}

int log_epochs_load(struct log *l)
{
    char path[4096], line[64];
    const char *p;
    char *buf;
    size_t len;
    int64_t count;
    int rc;

    epoch_path(l, path, sizeof path);
    l->n_epochs = 0;
    l->epochs_unknown = false;
    rc = sysio_read_file(l->io, LOG_MOD, path, LOG_SMALL_FILE_MAX, &buf, &len);
    if (rc == ERR_NOTFOUND) {
        l->epochs_unknown = true;
        return 0;
    }
    if (rc)
        return rc;
    if (strlen(buf) != len || log_ckpt_parse_head(buf, &count, &p) != 0)
        goto err_parse;
    rc = epochs_reserve(l, (size_t)count);
    if (rc) {
        free(buf);
        return rc;
    }
    for (int64_t i = 0; i < count; i++) {
        long long epoch, start;
        char tail;
        if (log_ckpt_next_line(&p, line, sizeof line) ||
            sscanf(line, "%lld %lld%c", &epoch, &start, &tail) != 2 || epoch < 0 ||
            epoch > INT32_MAX || start < 0)
            goto err_parse;
        if (l->n_epochs > 0 && (epoch <= l->epochs[l->n_epochs - 1].epoch ||
                                start <= l->epochs[l->n_epochs - 1].start))
            goto err_parse;
        l->epochs[l->n_epochs].epoch = (int32_t)epoch;
        l->epochs[l->n_epochs].start = start;
        l->n_epochs++;
    }
    if (*p != '\0')
        goto err_parse;
    free(buf);
    return 0;

err_parse:
    /* Rebuilt from the batches' epochs as the open walks their headers (recovery.c). */
    slog_warn(LOG_MOD, "%s is malformed; rebuilding the leader epoch cache from the batches", path);
    l->n_epochs = 0;
    l->epochs_unknown = true;
    free(buf);
    return 0;
}

void log_epochs_note(struct log *l, int32_t epoch, int64_t base_offset)
{
    if (epoch < 0 || (l->n_epochs > 0 && epoch <= l->epochs[l->n_epochs - 1].epoch))
        return;
    if (epochs_reserve(l, l->n_epochs + 1) != 0)
        return; /* out of memory: the cache stays behind, which only blunts truncation */
    while (l->n_epochs > 0 && l->epochs[l->n_epochs - 1].start >= base_offset)
        l->n_epochs--;
    l->epochs[l->n_epochs].epoch = epoch;
    l->epochs[l->n_epochs].start = base_offset;
    l->n_epochs++;
    log_epochs_store(l);
}

/* The file's contents for the current cache, malloc()ed. NULL when out of memory. */
static char *epochs_encode(const struct log *l, size_t *len)
{
    size_t cap = 32 + l->n_epochs * 40;
    char *buf = malloc(cap);

    if (!buf)
        return NULL;
    *len = (size_t)snprintf(buf, cap, "0\n%zu\n", l->n_epochs);
    for (size_t i = 0; i < l->n_epochs; i++)
        *len += (size_t)snprintf(buf + *len, cap - *len, "%" PRId32 " %" PRId64 "\n",
                                 l->epochs[i].epoch, l->epochs[i].start);
    return buf;
}

void log_epochs_store(struct log *l)
{
    l->epochs_dirty = true;
}

int log_epochs_flush_sync(struct log *l)
{
    size_t len;
    char *buf;
    int rc;

    if (!l->epochs_dirty)
        return 0;
    buf = epochs_encode(l, &len);
    if (!buf)
        return ERR_NOMEM;
    rc = log_epochs_write(l->io, l->dir, buf, len);
    free(buf);
    if (rc == 0)
        l->epochs_dirty = false;
    return rc;
}

int log_epochs_take(struct log *l, char **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    if (!l->epochs_dirty)
        return 0;
    *buf = epochs_encode(l, len);
    if (!*buf)
        return ERR_NOMEM;
    l->epochs_dirty = false;
    return 0;
}

void log_epochs_retry(struct log *l)
{
    l->epochs_dirty = true;
}

int log_epochs_write(const struct sysio *io, const char *dir, const char *buf, size_t len)
{
    char path[4096];

    if (snprintf(path, sizeof path, "%s/" EPOCH_FILE, dir) >= (int)sizeof path)
        return ERR_IO;
    return sysio_write_atomic(io, LOG_MOD, path, buf, len);
}

void log_epochs_truncate_end(struct log *l, int64_t offset, bool inclusive)
{
    size_t n = l->n_epochs;
    while (n > 0 &&
           (inclusive ? l->epochs[n - 1].start >= offset : l->epochs[n - 1].start > offset))
        n--;
    if (n != l->n_epochs) {
        l->n_epochs = n;
        log_epochs_store(l);
    }
    assert(epochs_ordered(l));
}

void log_epochs_truncate_start(struct log *l, int64_t offset)
{
    size_t keep = 0; /* index of the last entry with start <= offset */
    bool found = false;

    for (size_t i = 0; i < l->n_epochs && l->epochs[i].start <= offset; i++) {
        keep = i;
        found = true;
    }
    if (!found || (keep == 0 && l->epochs[0].start == offset))
        return;
    memmove(l->epochs, l->epochs + keep, (l->n_epochs - keep) * sizeof *l->epochs);
    l->n_epochs -= keep;
    l->epochs[0].start = offset;
    log_epochs_store(l);
    assert(epochs_ordered(l));
}

int log_epoch_assign(struct log *l, int32_t epoch, int64_t start_offset)
{
    int rc;

    if (epoch < 0 || start_offset < 0)
        return 0;
    if (l->n_epochs > 0 && epoch <= l->epochs[l->n_epochs - 1].epoch)
        return 0;
    rc = epochs_reserve(l, l->n_epochs + 1);
    if (rc)
        return rc;
    /* Entries that start at or after the new epoch's start are contradicted by it (Kafka
     * removes them the same way). */
    while (l->n_epochs > 0 && l->epochs[l->n_epochs - 1].start >= start_offset)
        l->n_epochs--;
    l->epochs[l->n_epochs].epoch = epoch;
    l->epochs[l->n_epochs].start = start_offset;
    l->n_epochs++;
    log_epochs_store(l);
    /* Callers assign an epoch at the log end (a new leader) or at the batch just appended. */
    assert(epochs_ordered(l));
    return 0;
}

int32_t log_latest_epoch(const struct log *l)
{
    return l->n_epochs ? l->epochs[l->n_epochs - 1].epoch : -1;
}

void log_epoch_end_offset(const struct log *l, int32_t epoch, int32_t *out_epoch, int64_t *out_end)
{
    size_t i;

    *out_epoch = -1;
    *out_end = -1;
    if (epoch < 0 || l->n_epochs == 0)
        return;
    if (epoch == l->epochs[l->n_epochs - 1].epoch) {
        *out_epoch = epoch;
        *out_end = l->leo;
        return;
    }
    /* The first entry with a higher epoch ends the requested one. */
    for (i = 0; i < l->n_epochs && l->epochs[i].epoch <= epoch; i++)
        ;
    if (i == l->n_epochs)
        return; /* newer than anything known */
    *out_end = l->epochs[i].start;
    /* Older than every entry: Kafka answers with the requested epoch itself. */
    *out_epoch = i == 0 ? epoch : l->epochs[i - 1].epoch;
}
