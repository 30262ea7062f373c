/* SPDX-License-Identifier: Apache-2.0 */
/* record: parse, validate, patch and build Kafka v2 record batches. This file owns the
 * format; record.h repeats the batch header for callers.
 *
 * A batch, all integers big-endian:
 **   OFFSET  SIZE  FIELD
 **        0     8  baseOffset
 **        8     4  batchLength: bytes after this field (batch size = batchLength + 12)
 **       12     4  partitionLeaderEpoch
 **       16     1  magic (2; v0/v1 messages have their magic at this offset too)
 **       17     4  crc: CRC32C of bytes 21 .. end of batch
 **       21     2  attributes: bits 0-2 compression (0 none, 1 gzip, 2 snappy, 3 lz4,
 **                 4 zstd), bit 3 timestamp type (1 = LogAppendTime), bit 4 transactional,
 **                 bit 5 control, bit 6 delete horizon set
 **       23     4  lastOffsetDelta
 **       27     8  baseTimestamp
 **       35     8  maxTimestamp
 **       43     8  producerId (-1 = none)
 **       51     2  producerEpoch
 **       53     4  baseSequence (-1 = none)
 **       57     4  recordCount
 **       61        recordCount records, back to back; when compression != 0 this whole
 **                 section is one compressed stream instead
 *
 * A record inside a batch. Every "varint" is zigzag-encoded and signed: 32-bit ones take
 * at most 5 bytes, the 64-bit "varlong" at most 10.
 **   SIZE    FIELD
 **   varint  length: bytes of the record after this field
 **   1       attributes (unused, 0)
 **   varlong timestampDelta: timestamp - baseTimestamp
 **   varint  offsetDelta: offset - baseOffset (the record's index in the batch)
 **   varint  keyLength (-1 = null key)
 **   keyLength bytes  key
 **   varint  valueLength (-1 = null value)
 **   valueLength bytes  value
 **   varint  headerCount
 **           headerCount headers, each:
 **   varint    headerKeyLength (>= 0: header keys are never null)
 **   headerKeyLength bytes  headerKey (UTF-8)
 **   varint    headerValueLength (-1 = null)
 **   headerValueLength bytes  headerValue
 *
 * A control record (COMMIT / ABORT marker, in a batch with the control and transactional
 * bits set and exactly one record) has a 4-byte key {int16 version 0, int16 type
 * (0 abort, 1 commit)} and a 6-byte value {int16 version 0, int32 coordinatorEpoch}.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "record/record.h"
#include "record_int.h"

#define OFF_BASE_OFFSET 0
#define OFF_BATCH_LENGTH 8
#define OFF_LEADER_EPOCH 12
#define OFF_MAGIC 16
#define OFF_CRC 17
#define OFF_ATTRIBUTES 21
#define OFF_LAST_OFFSET_DELTA 23
#define OFF_BASE_TIMESTAMP 27
#define OFF_MAX_TIMESTAMP 35
#define OFF_PRODUCER_ID 43
#define OFF_PRODUCER_EPOCH 51
#define OFF_BASE_SEQUENCE 53
#define OFF_RECORD_COUNT 57

#define RECORD_MAGIC 2
#define RECORD_CODEC_MAX 4 /* zstd */
#define CONTROL_KEY_SIZE 4
#define CONTROL_VALUE_SIZE 6

static inline uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t rd64(const uint8_t *p)
{
    return (uint64_t)rd32(p) << 32 | rd32(p + 4);
}

static inline void wr16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static inline void wr32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static inline void wr64(uint8_t *p, uint64_t v)
{
    wr32(p, (uint32_t)(v >> 32));
    wr32(p + 4, (uint32_t)v);
}

/* ---- varints ---------------------------------------------------------------------------- */

static inline uint64_t zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (0u - (uint64_t)(v < 0));
}

static size_t varint_size(int64_t v)
{
    uint64_t z = zigzag(v);
    size_t n = 1;

    while (z >= 0x80) {
        z >>= 7;
        n++;
    }
    return n;
}

static uint8_t *put_varint(uint8_t *p, int64_t v)
{
    uint64_t z = zigzag(v);

    while (z >= 0x80) {
        *p++ = (uint8_t)(z | 0x80);
        z >>= 7;
    }
    *p++ = (uint8_t)z;
    return p;
}

/* ---- parse and validate ----------------------------------------------------------------- */

int record_batch_parse(const uint8_t *buf, size_t len, struct record_batch *b)
{
    int rc = record_batch_parse_header(buf, len, b);
    if (rc == 0 && len < record_batch_size(b))
        return ERR_TRUNCATED;
    return rc;
}

int record_batch_parse_header(const uint8_t *buf, size_t len, struct record_batch *b)
{
    int32_t batch_length;

    if (len < OFF_MAGIC + 1)
        return ERR_TRUNCATED;
    if ((int8_t)buf[OFF_MAGIC] != RECORD_MAGIC)
        return ERR_UNSUPPORTED_FOR_MESSAGE_FORMAT;
    batch_length = (int32_t)rd32(buf + OFF_BATCH_LENGTH);
    if (batch_length < RECORD_BATCH_HEADER - RECORD_BATCH_OVERHEAD)
        return ERR_CORRUPT_MESSAGE;
    if (len < RECORD_BATCH_HEADER)
        return ERR_TRUNCATED;

    b->base_offset = (int64_t)rd64(buf + OFF_BASE_OFFSET);
    b->batch_length = batch_length;
    b->leader_epoch = (int32_t)rd32(buf + OFF_LEADER_EPOCH);
    b->magic = (int8_t)buf[OFF_MAGIC];
    b->crc = rd32(buf + OFF_CRC);
    b->attributes = (int16_t)rd16(buf + OFF_ATTRIBUTES);
    b->last_offset_delta = (int32_t)rd32(buf + OFF_LAST_OFFSET_DELTA);
    b->base_timestamp = (int64_t)rd64(buf + OFF_BASE_TIMESTAMP);
    b->max_timestamp = (int64_t)rd64(buf + OFF_MAX_TIMESTAMP);
    b->producer_id = (int64_t)rd64(buf + OFF_PRODUCER_ID);
    b->producer_epoch = (int16_t)rd16(buf + OFF_PRODUCER_EPOCH);
    b->base_sequence = (int32_t)rd32(buf + OFF_BASE_SEQUENCE);
    b->record_count = (int32_t)rd32(buf + OFF_RECORD_COUNT);
    return 0;
}

/* Skips a length-prefixed field (length varint, then that many bytes) inside [*pp, end).
 * min_len is -1 where the field may be null, 0 where it may not. */
static inline int skip_bytes_field(const uint8_t **pp, const uint8_t *end, int32_t min_len)
{
    int32_t n;

    if (get_varint(pp, end, &n) != 0 || n < min_len)
        return -1;
    if (n > 0) {
        if ((size_t)n > (size_t)(end - *pp))
            return -1;
        *pp += n;
    }
    return 0;
}

/* Reads one record timestamp: base + delta, refused (rather than wrapped) when the sum does
 * not fit an int64. */
static inline int record_timestamp(int64_t base, int64_t delta, int64_t *ts)
{
    return __builtin_add_overflow(base, delta, ts) ? -1 : 0;
}

int record_walk(const uint8_t *p, const uint8_t *end, int32_t count, int64_t base_timestamp,
                struct record_scan *scan)
{
    int64_t max_ts = -1, min_ts = INT64_MAX;

    if (scan != NULL)
        scan->null_key = false;
    for (int32_t i = 0; i < count; i++) {
        const uint8_t *rec_end;
        int32_t length, offset_delta, n_headers;
        int64_t timestamp_delta, ts;

        if (get_varint(&p, end, &length) != 0 || length < 0 || (size_t)length > (size_t)(end - p))
            goto invalid;
        rec_end = p + length;
        if (p == rec_end)
            goto invalid;
        p++; /* attributes */
        if (get_varlong(&p, rec_end, &timestamp_delta) != 0)
            goto invalid;
        if (get_varint(&p, rec_end, &offset_delta) != 0 || offset_delta != i)
            goto invalid;
        if (scan != NULL) { /* the key's length, -1 for a null key */
            const uint8_t *k = p;
            int32_t key_len;
            if (get_varint(&k, rec_end, &key_len) == 0 && key_len == -1)
                scan->null_key = true;
        }
        if (skip_bytes_field(&p, rec_end, -1) != 0) /* key */
            goto invalid;
        if (skip_bytes_field(&p, rec_end, -1) != 0) /* value */
            goto invalid;
        if (get_varint(&p, rec_end, &n_headers) != 0 || n_headers < 0)
            goto invalid;
        for (int32_t h = 0; h < n_headers; h++) {
            if (skip_bytes_field(&p, rec_end, 0) != 0 || skip_bytes_field(&p, rec_end, -1) != 0)
                goto invalid;
        }
        if (p != rec_end)
            goto invalid;
        if (scan != NULL) {
            if (record_timestamp(base_timestamp, timestamp_delta, &ts) != 0)
                goto invalid;
            if (ts > max_ts)
                max_ts = ts;
            if (ts != -1 && ts < min_ts)
                min_ts = ts;
        }
    }
    if (p != end)
        goto invalid;
    if (scan != NULL) {
        scan->max_timestamp = max_ts;
        scan->min_timestamp = min_ts;
    }
    return 0;

invalid:
    return ERR_INVALID_RECORD;
}

int record_batch_check_header(const uint8_t *buf, size_t len, struct record_batch *b)
{
    int rc = record_batch_parse(buf, len, b);

    if (rc != 0)
        return rc;
    if (record_crc32c(0, buf + OFF_ATTRIBUTES, record_batch_size(b) - OFF_ATTRIBUTES) != b->crc)
        return ERR_CORRUPT_MESSAGE;
    if ((b->attributes & RECORD_ATTR_COMPRESSION_MASK) > RECORD_CODEC_MAX)
        return ERR_INVALID_RECORD;
    /* An empty batch (what compaction leaves to keep a producer's last sequence) keeps the
     * lastOffsetDelta of the records it had, so only its sign can be checked. Whether a
     * produce request may carry one is the produce handler's call (Kafka refuses them). */
    if (b->record_count < 0 || b->last_offset_delta < 0)
        return ERR_INVALID_RECORD;
    if (b->record_count > 0 && b->last_offset_delta != b->record_count - 1)
        return ERR_INVALID_RECORD;
    return 0;
}

int record_batch_validate(const uint8_t *buf, size_t len, struct record_batch *b)
{
    struct record_batch local;
    int rc;

    if (b == NULL)
        b = &local;
    rc = record_batch_check_header(buf, len, b);
    if (rc != 0)
        return rc;
    /* Compressed records are checked by record_batch_check (with the codecs), on append. */
    if ((b->attributes & RECORD_ATTR_COMPRESSION_MASK) != 0)
        return 0;
    return record_walk(buf + RECORD_BATCH_HEADER, buf + record_batch_size(b), b->record_count, 0,
                       NULL);
}

/* ---- in-place patches ------------------------------------------------------------------- */

void record_batch_set_base_offset(uint8_t *batch, int64_t base_offset)
{
    wr64(batch + OFF_BASE_OFFSET, (uint64_t)base_offset);
}

void record_batch_set_leader_epoch(uint8_t *batch, int32_t epoch)
{
    wr32(batch + OFF_LEADER_EPOCH, (uint32_t)epoch);
}

static void update_crc(uint8_t *batch)
{
    size_t size = (size_t)rd32(batch + OFF_BATCH_LENGTH) + RECORD_BATCH_OVERHEAD;

    wr32(batch + OFF_CRC, record_crc32c(0, batch + OFF_ATTRIBUTES, size - OFF_ATTRIBUTES));
}

void record_batch_set_max_timestamp(uint8_t *batch, int16_t attributes, int64_t max_timestamp)
{
    wr16(batch + OFF_ATTRIBUTES, (uint16_t)attributes);
    wr64(batch + OFF_MAX_TIMESTAMP, (uint64_t)max_timestamp);
    update_crc(batch);
}

void record_batch_set_log_append_time(uint8_t *batch, int64_t ts)
{
    uint16_t attributes = rd16(batch + OFF_ATTRIBUTES);

    wr16(batch + OFF_ATTRIBUTES, (uint16_t)(attributes | RECORD_ATTR_LOG_APPEND_TIME));
    wr64(batch + OFF_MAX_TIMESTAMP, (uint64_t)ts);
    update_crc(batch);
}

/* ---- build ------------------------------------------------------------------------------ */

/* The largest batch the builder makes: batchLength must fit an int32. */
#define BUILD_MAX_SIZE ((size_t)INT32_MAX + RECORD_BATCH_OVERHEAD)

static inline bool input_is_null(const void *ptr, int32_t len)
{
    return ptr == NULL || len < 0;
}

static inline int64_t timestamp_delta(int64_t ts, int64_t base)
{
    return (int64_t)((uint64_t)ts - (uint64_t)base);
}

/* Bytes of record i after its length varint, or 0 (never a real size) once the running
 * total would pass BUILD_MAX_SIZE, so that absurd inputs cannot overflow the sums. */
static size_t record_body_size(const struct record_input *r, int32_t i, int64_t base_ts)
{
    size_t size = 1 + varint_size(timestamp_delta(r->timestamp, base_ts)) + varint_size(i);

    if (input_is_null(r->key, r->key_len))
        size += varint_size(-1);
    else
        size += varint_size(r->key_len) + (size_t)r->key_len;
    if (input_is_null(r->value, r->value_len))
        size += varint_size(-1);
    else
        size += varint_size(r->value_len) + (size_t)r->value_len;
    if (r->n_headers < 0)
        return 0;
    size += varint_size(r->n_headers);
    for (int32_t h = 0; h < r->n_headers; h++) {
        const struct record_header *hd = &r->headers[h];
        size_t key_len = hd->key ? strlen(hd->key) : 0;
        if (key_len > INT32_MAX)
            return 0;
        size += varint_size((int64_t)key_len) + key_len;
        if (input_is_null(hd->value, hd->value_len))
            size += varint_size(-1);
        else
            size += varint_size(hd->value_len) + (size_t)hd->value_len;
        if (size > BUILD_MAX_SIZE)
            return 0;
    }
    return size > BUILD_MAX_SIZE ? 0 : size;
}

static uint8_t *put_bytes(uint8_t *p, const void *data, int32_t len)
{
    if (input_is_null(data, len))
        return put_varint(p, -1);
    p = put_varint(p, len);
    if (len > 0)
        memcpy(p, data, (size_t)len);
    return p + len;
}

static uint8_t *put_record(uint8_t *p, const struct record_input *r, int32_t i, int64_t base_ts,
                           size_t body)
{
    p = put_varint(p, (int64_t)body);
    *p++ = 0; /* attributes */
    p = put_varint(p, timestamp_delta(r->timestamp, base_ts));
    p = put_varint(p, i);
    p = put_bytes(p, r->key, r->key_len);
    p = put_bytes(p, r->value, r->value_len);
    p = put_varint(p, r->n_headers);
    for (int32_t h = 0; h < r->n_headers; h++) {
        const struct record_header *hd = &r->headers[h];
        const char *key = hd->key ? hd->key : "";
        p = put_bytes(p, key, (int32_t)strlen(key));
        p = put_bytes(p, hd->value, hd->value_len);
    }
    return p;
}

/* Besides ERR_NOMEM (allocation failed, or the batch would pass 2 GiB), returns
 * ERR_INVALID_RECORD when n < 1 or a record has a negative header count: a batch needs at
 * least one record for lastOffsetDelta to mean anything. The compression bits of
 * opt->attributes are ignored, since what is written is uncompressed. */
int record_batch_build(const struct record_build_options *opt, const struct record_input *recs,
                       int32_t n, uint8_t **out, size_t *out_len)
{
    int64_t base_ts, max_ts;
    size_t size = RECORD_BATCH_HEADER;
    uint8_t *buf, *p;
    int16_t attributes;

    if (n < 1)
        return ERR_INVALID_RECORD;
    base_ts = max_ts = recs[0].timestamp;
    for (int32_t i = 0; i < n; i++) {
        size_t body;
        if (recs[i].n_headers < 0)
            return ERR_INVALID_RECORD;
        body = record_body_size(&recs[i], i, base_ts);
        if (body == 0)
            return ERR_NOMEM;
        size += varint_size((int64_t)body) + body;
        if (size > BUILD_MAX_SIZE)
            return ERR_NOMEM;
        if (recs[i].timestamp > max_ts)
            max_ts = recs[i].timestamp;
    }

    buf = malloc(size);
    if (buf == NULL)
        return ERR_NOMEM;
    attributes = (int16_t)(opt->attributes & ~RECORD_ATTR_COMPRESSION_MASK);
    wr64(buf + OFF_BASE_OFFSET, (uint64_t)opt->base_offset);
    wr32(buf + OFF_BATCH_LENGTH, (uint32_t)(size - RECORD_BATCH_OVERHEAD));
    wr32(buf + OFF_LEADER_EPOCH, (uint32_t)opt->leader_epoch);
    buf[OFF_MAGIC] = RECORD_MAGIC;
    wr16(buf + OFF_ATTRIBUTES, (uint16_t)attributes);
    wr32(buf + OFF_LAST_OFFSET_DELTA, (uint32_t)(n - 1));
    wr64(buf + OFF_BASE_TIMESTAMP, (uint64_t)base_ts);
    wr64(buf + OFF_MAX_TIMESTAMP, (uint64_t)max_ts);
    wr64(buf + OFF_PRODUCER_ID, (uint64_t)opt->producer_id);
    wr16(buf + OFF_PRODUCER_EPOCH, (uint16_t)opt->producer_epoch);
    wr32(buf + OFF_BASE_SEQUENCE, (uint32_t)opt->base_sequence);
    wr32(buf + OFF_RECORD_COUNT, (uint32_t)n);
    p = buf + RECORD_BATCH_HEADER;
    for (int32_t i = 0; i < n; i++)
        p = put_record(p, &recs[i], i, base_ts, record_body_size(&recs[i], i, base_ts));
    /* The sizing pass above and put_record write the same fields with the same varints, so the
     * records end exactly where batchLength said: anything else would leave bytes outside the
     * CRC (or write past the buffer). */
    assert((size_t)(p - buf) == size);
    update_crc(buf);
    *out = buf;
    *out_len = size;
    return 0;
}

int record_build_control(int64_t producer_id, int16_t producer_epoch, int32_t coordinator_epoch,
                         enum record_control_type type, int64_t timestamp, uint8_t **out,
                         size_t *out_len)
{
    uint8_t key[CONTROL_KEY_SIZE], value[CONTROL_VALUE_SIZE];
    struct record_build_options opt = {
        .base_offset = 0,
        .attributes = RECORD_ATTR_TRANSACTIONAL | RECORD_ATTR_CONTROL,
        .producer_id = producer_id,
        .producer_epoch = producer_epoch,
        .base_sequence = -1,
        .leader_epoch = -1,
    };
    struct record_input rec = {
        .key = key,
        .key_len = sizeof key,
        .value = value,
        .value_len = sizeof value,
        .timestamp = timestamp,
        .n_headers = 0,
        .headers = NULL,
    };

    wr16(key, 0); /* version */
    wr16(key + 2, (uint16_t)type);
    wr16(value, 0); /* version */
    wr32(value + 2, (uint32_t)coordinator_epoch);
    return record_batch_build(&opt, &rec, 1, out, out_len);
}

int record_control_parse(const uint8_t *batch, size_t len, enum record_control_type *type,
                         int32_t *coordinator_epoch)
{
    struct record_batch b;
    const uint8_t *p, *end, *key, *value;
    int32_t length, offset_delta, key_len, value_len;
    int64_t timestamp_delta_unused;
    int rc;

    rc = record_batch_parse(batch, len, &b);
    if (rc != 0)
        return rc;
    if ((b.attributes & RECORD_ATTR_CONTROL) == 0 ||
        (b.attributes & RECORD_ATTR_COMPRESSION_MASK) != 0 || b.record_count < 1)
        goto invalid;
    p = batch + RECORD_BATCH_HEADER;
    end = batch + record_batch_size(&b);
    if (get_varint(&p, end, &length) != 0 || length < 1 || (size_t)length > (size_t)(end - p))
        goto invalid;
    end = p + length;
    p++; /* attributes */
    if (get_varlong(&p, end, &timestamp_delta_unused) != 0 ||
        get_varint(&p, end, &offset_delta) != 0)
        goto invalid;
    if (get_varint(&p, end, &key_len) != 0 || key_len < CONTROL_KEY_SIZE ||
        (size_t)key_len > (size_t)(end - p))
        goto invalid;
    key = p;
    p += key_len;
    /* Only the type is read from the key, whatever its version, as Kafka does; other types
     * (KRaft's LEADER_CHANGE and snapshot markers) are not transaction markers. */
    if (rd16(key + 2) > RECORD_CONTROL_COMMIT)
        goto invalid;
    if (get_varint(&p, end, &value_len) != 0 || value_len < CONTROL_VALUE_SIZE ||
        (size_t)value_len > (size_t)(end - p))
        goto invalid;
    value = p;
    *type = (enum record_control_type)rd16(key + 2);
    *coordinator_epoch = (int32_t)rd32(value + 2);
    return 0;

invalid:
    return ERR_INVALID_RECORD;
}
