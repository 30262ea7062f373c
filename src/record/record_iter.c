/* SPDX-License-Identifier: Apache-2.0 */
/* record: an iterator over the records of one batch, compressed or not, for readers that need
 * every field of every record (the group coordinator's replay, the log cleaner). The record
 * layout is the one record.c describes; unlike record_walk (which checks what a producer sent),
 * this walk accepts the offset holes that compaction leaves: offsetDelta must only grow and stay
 * within lastOffsetDelta. */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "record/record.h"
#include "record_int.h"

int record_iter_init(struct record_iter *it, const uint8_t *buf, size_t len,
                     size_t max_records_size)
{
    int codec, rc;
    size_t plain_len;

    memset(it, 0, sizeof *it);
    it->prev_delta = -1;
    rc = record_batch_parse(buf, len, &it->batch);
    if (rc != 0)
        goto fail;
    codec = it->batch.attributes & RECORD_ATTR_COMPRESSION_MASK;
    if (codec > RECORD_CODEC_ZSTD || it->batch.record_count < 0) {
        rc = ERR_INVALID_RECORD;
        goto fail;
    }
    it->p = buf + RECORD_BATCH_HEADER;
    it->end = buf + record_batch_size(&it->batch);
    if (codec != RECORD_CODEC_NONE) {
        rc = record_decompress(codec, it->p, (size_t)(it->end - it->p), max_records_size,
                               &it->plain, &plain_len);
        if (rc != 0)
            goto fail;
        it->p = it->plain;
        it->end = it->plain + plain_len;
    }
    return 0;

fail:
    it->plain = NULL;
    it->p = it->end = NULL;
    it->err = rc;
    return rc;
}

/* Reads a length-prefixed field (length varint, then the bytes) inside [*pp, end): *data is
 * NULL for length -1 when null_ok. */
static int get_bytes(const uint8_t **pp, const uint8_t *end, bool null_ok, const uint8_t **data,
                     int32_t *len)
{
    int32_t n;

    if (get_varint(pp, end, &n) != 0 || n < (null_ok ? -1 : 0))
        return -1;
    if (n == -1) {
        *data = NULL;
        *len = -1;
        return 0;
    }
    if ((size_t)n > (size_t)(end - *pp))
        return -1;
    *data = *pp;
    *len = n;
    *pp += n;
    return 0;
}

int record_iter_next(struct record_iter *it, struct record_item *rec)
{
    const uint8_t *p = it->p, *start = it->p, *rec_end;
    int32_t length, offset_delta, n_headers;
    int64_t ts_delta;

    if (it->err != 0)
        return it->err;
    if (it->next == it->batch.record_count) {
        /* Every record was yielded: the section must end here. */
        it->err = p == it->end ? ERR_NOTFOUND : ERR_INVALID_RECORD;
        return it->err;
    }
    if (get_varint(&p, it->end, &length) != 0 || length < 1 ||
        (size_t)length > (size_t)(it->end - p))
        goto invalid;
    rec_end = p + length;
    p++; /* attributes: unused */
    if (get_varlong(&p, rec_end, &ts_delta) != 0 || get_varint(&p, rec_end, &offset_delta) != 0)
        goto invalid;
    if (offset_delta <= it->prev_delta || offset_delta > it->batch.last_offset_delta)
        goto invalid;
    if (get_bytes(&p, rec_end, true, &rec->key, &rec->key_len) != 0 ||
        get_bytes(&p, rec_end, true, &rec->value, &rec->value_len) != 0)
        goto invalid;
    if (get_varint(&p, rec_end, &n_headers) != 0 || n_headers < 0)
        goto invalid;
    rec->headers = p;
    for (int32_t h = 0; h < n_headers; h++) {
        const uint8_t *unused;
        int32_t unused_len;
        if (get_bytes(&p, rec_end, false, &unused, &unused_len) != 0 ||
            get_bytes(&p, rec_end, true, &unused, &unused_len) != 0)
            goto invalid;
    }
    if (p != rec_end)
        goto invalid;

    rec->headers_end = rec_end;
    rec->header_count = n_headers;
    rec->offset_delta = offset_delta;
    rec->offset = (int64_t)((uint64_t)it->batch.base_offset + (uint64_t)(int64_t)offset_delta);
    if (it->batch.attributes & RECORD_ATTR_LOG_APPEND_TIME)
        rec->timestamp = it->batch.max_timestamp;
    else
        rec->timestamp = (int64_t)((uint64_t)it->batch.base_timestamp + (uint64_t)ts_delta);
    rec->raw = start;
    rec->raw_len = (size_t)(rec_end - start);
    it->p = rec_end;
    it->prev_delta = offset_delta;
    it->next++;
    return 0;

invalid:
    it->err = ERR_INVALID_RECORD;
    return it->err;
}

void record_iter_close(struct record_iter *it)
{
    free(it->plain);
    it->plain = NULL;
    it->p = it->end = NULL;
    if (it->err == 0)
        it->err = ERR_NOTFOUND;
}

void record_header_first(const struct record_item *rec, struct record_header_iter *hi)
{
    hi->p = rec->headers;
    hi->end = rec->headers_end;
    hi->left = rec->header_count;
}

int record_header_next(struct record_header_iter *hi, struct record_header_view *h)
{
    if (hi->left <= 0)
        return ERR_NOTFOUND;
    /* record_iter_next checked every header of the record: these reads cannot fail. */
    if (get_bytes(&hi->p, hi->end, false, &h->key, &h->key_len) != 0 ||
        get_bytes(&hi->p, hi->end, true, &h->value, &h->value_len) != 0) {
        hi->left = 0;
        return ERR_NOTFOUND;
    }
    hi->left--;
    return 0;
}

int record_batch_validate_stored(const uint8_t *buf, size_t len, struct record_batch *b)
{
    struct record_batch local;
    struct record_iter it;
    struct record_item rec;
    int rc;

    if (b == NULL)
        b = &local;
    rc = record_batch_parse(buf, len, b);
    if (rc != 0)
        return rc;
    if (record_crc32c(0, buf + 21, record_batch_size(b) - 21) != b->crc)
        return ERR_CORRUPT_MESSAGE;
    if ((b->attributes & RECORD_ATTR_COMPRESSION_MASK) > RECORD_CODEC_ZSTD)
        return ERR_INVALID_RECORD;
    if (b->record_count < 0 || b->last_offset_delta < 0 ||
        (int64_t)b->record_count > (int64_t)b->last_offset_delta + 1)
        return ERR_INVALID_RECORD;
    /* Compressed records are checked when a reader decompresses them, as on append. */
    if ((b->attributes & RECORD_ATTR_COMPRESSION_MASK) != 0)
        return 0;
    rc = record_iter_init(&it, buf, len, SIZE_MAX);
    while (rc == 0)
        rc = record_iter_next(&it, &rec);
    record_iter_close(&it);
    return rc == ERR_NOTFOUND ? 0 : ERR_INVALID_RECORD;
}
