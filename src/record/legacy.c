/* SPDX-License-Identifier: Apache-2.0 */
/* legacy: the message sets of magic 0 and 1 that Produce v0-2 and Fetch v0-3 carry, converted
 * to and from the magic 2 batches the log holds. Produce converts a whole message set (wrapper
 * messages decompressed, every CRC checked) into one uncompressed v2 batch; Fetch converts the
 * v2 batches it read back into uncompressed messages of the magic the client reads.
 *
 * A message set is messages back to back, each a log entry (big-endian):
 **   OFFSET  SIZE  FIELD
 **        0     8  offset
 **        8     4  messageSize: bytes after this field
 **       12     4  crc: CRC32 (IEEE, not Castagnoli) of bytes 16 .. end of message
 **       16     1  magic (0 or 1)
 **       17     1  attributes: bits 0-2 compression (0 none, 1 gzip, 2 snappy, 3 lz4),
 **                 bit 3 timestamp type (magic 1: 1 = LogAppendTime)
 **       18     8  timestamp (magic 1 only; the fields below move up 8 bytes in magic 0)
 **       26     4  key length (-1 = null), then the key
 **        .     4  value length (-1 = null), then the value
 *
 * A compressed message (a "wrapper") has a null key and a value that decompresses to a
 * message set of uncompressed inner messages of the wrapper's magic. Producers number inner
 * messages as they like (magic 1: 0 .. n-1 relative); the broker assigns offsets, so they are
 * ignored here. Magic 0 has no timestamps: its records become v2 records with timestamp -1. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "base/err.h"
#include "record/record.h"
#include "record_int.h"

#define LEGACY_OFF_CRC 12
#define LEGACY_OFF_MAGIC 16
#define LEGACY_LOG_OVERHEAD 12 /* offset + messageSize */
#define LEGACY_V0_HEADER 6     /* crc, magic, attributes (within messageSize) */
#define LEGACY_V1_HEADER 14    /* plus the timestamp */
#define LEGACY_MIN_V0 (LEGACY_V0_HEADER + 8)
#define LEGACY_TS_TYPE 0x08

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t rd64(const uint8_t *p)
{
    return (uint64_t)rd32(p) << 32 | rd32(p + 4);
}

static void wr32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static void wr64(uint8_t *p, uint64_t v)
{
    wr32(p, (uint32_t)(v >> 32));
    wr32(p + 4, (uint32_t)v);
}

static uint32_t crc32_ieee(const uint8_t *p, size_t len)
{
    uLong crc = crc32(0L, Z_NULL, 0);
    while (len > 0) {
        uInt n = len > (size_t)UINT32_MAX / 2 ? (uInt)(UINT32_MAX / 2) : (uInt)len;
        crc = crc32(crc, p, n);
        p += n;
        len -= n;
    }
    return (uint32_t)crc;
}

int record_legacy_magic(const uint8_t *buf, size_t len)
{
    if (len <= LEGACY_OFF_MAGIC)
        return -1;
    return buf[LEGACY_OFF_MAGIC];
}

/* ---- message set -> v2 batch -------------------------------------------------------------- */

/* The records collected so far; keys and values point into the input or into `bufs`. */
struct collect {
    struct record_input *recs;
    int32_t n, cap;
    uint8_t **bufs; /* decompressed wrapper values, freed at the end */
    size_t n_bufs, cap_bufs;
    size_t budget; /* decompressed bytes still allowed */
};

static int collect_add(struct collect *c, const struct record_input *r)
{
    if (c->n == c->cap) {
        int32_t cap = c->cap ? c->cap * 2 : 16;
        struct record_input *v;
        if (c->cap > INT32_MAX / 2)
            return ERR_INVALID_RECORD;
        v = realloc(c->recs, (size_t)cap * sizeof *v);
        if (v == NULL)
            return ERR_NOMEM;
        c->recs = v;
        c->cap = cap;
    }
    c->recs[c->n++] = *r;
    return 0;
}

static int collect_keep(struct collect *c, uint8_t *buf)
{
    if (c->n_bufs == c->cap_bufs) {
        size_t cap = c->cap_bufs ? c->cap_bufs * 2 : 4;
        uint8_t **v = realloc(c->bufs, cap * sizeof *v);
        if (v == NULL)
            return ERR_NOMEM;
        c->bufs = v;
        c->cap_bufs = cap;
    }
    c->bufs[c->n_bufs++] = buf;
    return 0;
}

/* Reads a 4-byte length and that many bytes from [*pp, end): -1 = null. */
static int get_bytes(const uint8_t **pp, const uint8_t *end, const uint8_t **data, int32_t *len)
{
    const uint8_t *p = *pp;
    int32_t n;

    if (end - p < 4)
        return ERR_CORRUPT_MESSAGE;
    n = (int32_t)rd32(p);
    p += 4;
    if (n < -1 || (n > 0 && (size_t)n > (size_t)(end - p)))
        return ERR_CORRUPT_MESSAGE;
    *data = n > 0 ? p : (n == 0 ? p : NULL);
    *len = n;
    *pp = p + (n > 0 ? n : 0);
    return 0;
}

static int parse_set(struct collect *c, const uint8_t *buf, size_t len, int outer_magic,
                     bool inner);

/* One message at m[0..size) (from its crc on). */
static int parse_message(struct collect *c, const uint8_t *m, size_t size, int outer_magic,
                         bool inner)
{
    const uint8_t *p, *end = m + size, *key, *value;
    int32_t key_len, value_len;
    int magic, codec, rc;
    int64_t ts = -1;

    if (size < LEGACY_MIN_V0)
        return ERR_CORRUPT_MESSAGE;
    magic = m[4];
    if (magic > 1)
        return ERR_INVALID_RECORD; /* a v2 batch cannot sit inside a message set */
    if (magic == 1 && size < LEGACY_V1_HEADER + 8)
        return ERR_CORRUPT_MESSAGE;
    if (rd32(m) != crc32_ieee(m + 4, size - 4))
        return ERR_CORRUPT_MESSAGE;
    if (outer_magic >= 0 && magic != outer_magic)
        return ERR_INVALID_RECORD;
    codec = m[5] & RECORD_ATTR_COMPRESSION_MASK;
    p = m + LEGACY_V0_HEADER;
    if (magic == 1) {
        ts = (int64_t)rd64(p);
        p += 8;
    }
    if ((rc = get_bytes(&p, end, &key, &key_len)) != 0 ||
        (rc = get_bytes(&p, end, &value, &value_len)) != 0)
        return rc;
    if (p != end)
        return ERR_CORRUPT_MESSAGE;
    if (codec == RECORD_CODEC_NONE) {
        struct record_input r = {
            .key = key,
            .key_len = key_len,
            .value = value,
            .value_len = value_len,
            .timestamp = ts < -1 ? -1 : ts,
        };
        return collect_add(c, &r);
    }
    if (inner)
        return ERR_INVALID_RECORD; /* compressed messages do not nest */
    if (codec == RECORD_CODEC_ZSTD)
        return ERR_UNSUPPORTED_COMPRESSION_TYPE; /* zstd exists only in magic 2 */
    if (codec > RECORD_CODEC_ZSTD || value_len <= 0)
        return ERR_INVALID_RECORD;
    uint8_t *out;
    size_t out_len;
    rc = record_decompress(codec, value, (size_t)value_len, c->budget, &out, &out_len);
    if (rc != 0)
        return rc == ERR_INVALID_RECORD ? ERR_CORRUPT_MESSAGE : rc;
    if ((rc = collect_keep(c, out)) != 0) {
        free(out);
        return rc;
    }
    c->budget -= out_len;
    if (out_len == 0)
        return ERR_INVALID_RECORD;
    return parse_set(c, out, out_len, magic, true);
}

static int parse_set(struct collect *c, const uint8_t *buf, size_t len, int outer_magic, bool inner)
{
    size_t pos = 0;

    while (pos < len) {
        int32_t size;
        int rc;
        if (len - pos < LEGACY_LOG_OVERHEAD)
            return ERR_CORRUPT_MESSAGE;
        size = (int32_t)rd32(buf + pos + 8);
        if (size < 0 || (size_t)size > len - pos - LEGACY_LOG_OVERHEAD)
            return ERR_CORRUPT_MESSAGE;
        rc = parse_message(c, buf + pos + LEGACY_LOG_OVERHEAD, (size_t)size, outer_magic, inner);
        if (rc != 0)
            return rc;
        pos += LEGACY_LOG_OVERHEAD + (size_t)size;
    }
    return 0;
}

int record_legacy_to_batch(const uint8_t *buf, size_t len, size_t max_records_size, uint8_t **out,
                           size_t *out_len, int32_t *n_records)
{
    struct collect c = {.budget = max_records_size};
    struct record_build_options opt = {
        .base_offset = 0,
        .attributes = 0,
        .producer_id = -1,
        .producer_epoch = -1,
        .base_sequence = -1,
        .leader_epoch = -1,
    };
    int rc;

    *out = NULL;
    *out_len = 0;
    if (len > max_records_size)
        return ERR_MESSAGE_TOO_LARGE;
    c.budget -= len;
    rc = parse_set(&c, buf, len, -1, false);
    if (rc == 0 && c.n == 0)
        rc = ERR_INVALID_RECORD;
    if (rc == 0) {
        rc = record_batch_build(&opt, c.recs, c.n, out, out_len);
        if (rc == 0 && n_records)
            *n_records = c.n;
    }
    for (size_t i = 0; i < c.n_bufs; i++)
        free(c.bufs[i]);
    free(c.bufs);
    free(c.recs);
    return rc;
}

/* ---- v2 batches -> message set ------------------------------------------------------------ */

static int out_reserve(struct record_legacy_buf *o, size_t more)
{
    size_t cap;
    uint8_t *d;

    if (o->cap - o->len >= more)
        return 0;
    if (more > (size_t)INT32_MAX || o->len > (size_t)INT32_MAX - more)
        return ERR_MESSAGE_TOO_LARGE; /* a Records field is at most INT32_MAX bytes */
    cap = o->cap ? o->cap : 1024;
    while (cap - o->len < more)
        cap *= 2;
    d = realloc(o->data, cap);
    if (d == NULL)
        return ERR_NOMEM;
    o->data = d;
    o->cap = cap;
    return 0;
}

static int put_message(struct record_legacy_buf *o, int magic, int64_t offset, int8_t attributes,
                       int64_t ts, const uint8_t *key, int32_t key_len, const uint8_t *value,
                       int32_t value_len)
{
    size_t klen = key_len > 0 ? (size_t)key_len : 0, vlen = value_len > 0 ? (size_t)value_len : 0;
    size_t size = (magic == 1 ? LEGACY_V1_HEADER : LEGACY_V0_HEADER) + 8 + klen + vlen;
    uint8_t *p, *m;
    int rc = out_reserve(o, LEGACY_LOG_OVERHEAD + size);

    if (rc != 0)
        return rc;
    p = o->data + o->len;
    wr64(p, (uint64_t)offset);
    wr32(p + 8, (uint32_t)size);
    m = p + LEGACY_LOG_OVERHEAD;
    m[4] = (uint8_t)magic;
    m[5] = (uint8_t)attributes;
    p = m + LEGACY_V0_HEADER;
    if (magic == 1) {
        wr64(p, (uint64_t)ts);
        p += 8;
    }
    wr32(p, (uint32_t)key_len);
    p += 4;
    if (klen)
        memcpy(p, key, klen);
    p += klen;
    wr32(p, (uint32_t)value_len);
    p += 4;
    if (vlen)
        memcpy(p, value, vlen);
    /* The message is exactly the size its length field says (the header, the timestamp of
     * v1, the two length-prefixed fields), which out_reserve made room for. */
    assert(p + vlen == m + size);
    wr32(m, crc32_ieee(m + 4, size - 4));
    o->len += LEGACY_LOG_OVERHEAD + size;
    return 0;
}

int record_legacy_append_batch(struct record_legacy_buf *o, const uint8_t *batch, size_t len,
                               int to_magic, int64_t first_offset, size_t max_records_size)
{
    struct record_batch b;
    struct record_iter it;
    struct record_item rec;
    bool log_append;
    int rc;

    /* The header first: neither markers nor zstd batches need decompressing. */
    rc = record_batch_parse(batch, len, &b);
    if (rc != 0)
        return rc;
    if (b.attributes & RECORD_ATTR_CONTROL)
        return 0; /* markers mean nothing to a reader of magic 0/1 */
    if ((b.attributes & RECORD_ATTR_COMPRESSION_MASK) == RECORD_CODEC_ZSTD)
        return ERR_UNSUPPORTED_COMPRESSION_TYPE;
    rc = record_iter_init(&it, batch, len, max_records_size);
    if (rc != 0)
        return rc == ERR_INVALID_RECORD ? ERR_CORRUPT_MESSAGE : rc;
    log_append = (b.attributes & RECORD_ATTR_LOG_APPEND_TIME) != 0;
    /* Headers have no place in magic 0/1 and are dropped, as Kafka does. */
    while ((rc = record_iter_next(&it, &rec)) == 0) {
        if (rec.offset < first_offset)
            continue;
        rc = put_message(o, to_magic, rec.offset, to_magic == 1 && log_append ? LEGACY_TS_TYPE : 0,
                         rec.timestamp, rec.key, rec.key_len, rec.value, rec.value_len);
        if (rc != 0)
            goto out;
    }
    rc = rc == ERR_NOTFOUND ? 0 : ERR_CORRUPT_MESSAGE;
out:
    record_iter_close(&it);
    return rc;
}

void record_legacy_buf_free(struct record_legacy_buf *o)
{
    free(o->data);
    o->data = NULL;
    o->len = o->cap = 0;
}
