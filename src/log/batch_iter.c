/* SPDX-License-Identifier: Apache-2.0 */
/* The batch iterator: walks the record batches of a log slice by their headers, reading
 * through the log's system calls. Headers of small batches are read through one 4 KiB
 * window, so a walk costs one pread per window rather than one per batch. */
#include <string.h>

#include "base/err.h"
#include "log/log_int.h"
#include "record/record.h"

const struct sysio *log_get_io(const struct log *l)
{
    return l->io;
}

void log_batch_iter_init(struct log_batch_iter *it, const struct sysio *io,
                         const struct log_slice *s, size_t max_batch)
{
    memset(it, 0, sizeof *it);
    it->io = io;
    it->fd = s->fd;
    it->pos = it->cur = s->pos;
    it->end = s->pos + (off_t)s->len;
    it->max_batch = max_batch;
    it->win_at = -1;
}

/* Makes the header at it->pos readable in the window. 0, ERR_IO or ERR_CORRUPT_MESSAGE (the
 * range ends inside the header). */
static int fill(struct log_batch_iter *it)
{
    ssize_t r;
    size_t want;

    if (it->end - it->pos < RECORD_BATCH_HEADER)
        return ERR_CORRUPT_MESSAGE;
    if (it->win_at >= 0 && it->pos >= it->win_at &&
        it->pos + RECORD_BATCH_HEADER <= it->win_at + (off_t)it->win_n)
        return 0;
    want = it->end - it->pos < (off_t)sizeof it->win ? (size_t)(it->end - it->pos) : sizeof it->win;
    r = sysio_pread_full(it->io, it->fd, it->win, want, it->pos);
    if (r < 0)
        return ERR_IO;
    it->win_at = it->pos;
    it->win_n = (size_t)r;
    return r < RECORD_BATCH_HEADER ? ERR_CORRUPT_MESSAGE : 0;
}

int log_batch_iter_next(struct log_batch_iter *it, struct record_batch *hdr)
{
    size_t size;
    int rc;

    if (it->pos >= it->end)
        return ERR_NOTFOUND;
    rc = fill(it);
    if (rc != 0)
        return rc;
    if (record_batch_parse_header(it->win + (it->pos - it->win_at), RECORD_BATCH_HEADER, hdr) != 0)
        return ERR_CORRUPT_MESSAGE;
    size = record_batch_size(hdr);
    if ((off_t)size > it->end - it->pos)
        return ERR_CORRUPT_MESSAGE;
    if (size > it->max_batch)
        return ERR_MESSAGE_TOO_LARGE;
    it->cur = it->pos;
    it->pos += (off_t)size;
    return 0;
}

int log_batch_iter_read(const struct log_batch_iter *it, const struct record_batch *hdr,
                        uint8_t *buf)
{
    size_t size = record_batch_size(hdr);
    ssize_t r = sysio_pread_full(it->io, it->fd, buf, size, it->cur);
    return r == (ssize_t)size ? 0 : ERR_IO;
}
