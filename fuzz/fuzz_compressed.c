/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target for compressed record batches: record_batch_check (decompress, bounded,
 * then walk the records) and the timestamp look-ups must never crash, read outside their
 * input or allocate past their bound, and must agree with each other.
 *
 * The fuzzer's bytes are not a batch: they become the records section of a well-formed
 * batch header with a valid CRC, so every input reaches the decompressors:
 **   OFFSET  SIZE  FIELD
 **        0     1  bits 0-2: codec (0 none .. 4 zstd; 5-7 unknown);
 **                 bit 3: "compress": the payload is plain records, compressed here with the
 **                 codec before the check (so the record walk behind each decompressor is
 **                 reached without seeds); otherwise the payload is the section as is;
 **                 bit 4 (with bit 3): "synthesize": the payload is not records but a recipe
 **                 for valid ones (see synthesize()), so that batches the check accepts are
 **                 common, not a lucky find
 **        1     2  recordCount (big-endian; lastOffsetDelta is recordCount - 1); when
 **                 synthesizing, byte 1 with its top bit clear means "the real count" and
 **                 byte 2, if not 0, flips one bit of the records before compression
 **        3     8  baseTimestamp (big-endian)
 **       11        payload
 * In "compress" mode the batch is also checked uncompressed, and both answers must match:
 * a codec never changes what the records say. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <lz4frame.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include "base/err.h"
#include "record/record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_RECORDS_SIZE ((size_t)1 << 20)
#define PREFIX 11

static void be16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static void be64(uint8_t *p, uint64_t v)
{
    be32(p, (uint32_t)(v >> 32));
    be32(p + 4, (uint32_t)v);
}

/* A malloc()ed batch: header (codec, count, base timestamp, valid CRC) + section. */
static uint8_t *make_batch(int codec, int32_t count, int64_t base_ts, const uint8_t *section,
                           size_t section_len, size_t *len)
{
    uint8_t *b = malloc(RECORD_BATCH_HEADER + section_len);

    if (b == NULL)
        return NULL;
    memset(b, 0, RECORD_BATCH_HEADER);
    be32(b + 8, (uint32_t)(RECORD_BATCH_HEADER - RECORD_BATCH_OVERHEAD + section_len));
    be32(b + 12, (uint32_t)-1);
    b[16] = 2;
    be16(b + 21, (uint16_t)codec);
    be32(b + 23, (uint32_t)(count - 1));
    be64(b + 27, (uint64_t)base_ts);
    be64(b + 35, (uint64_t)-1);
    be64(b + 43, (uint64_t)-1);
    be16(b + 51, 0xffff);
    be32(b + 53, 0xffffffff);
    be32(b + 57, (uint32_t)count);
    if (section_len > 0)
        memcpy(b + RECORD_BATCH_HEADER, section, section_len);
    be32(b + 17, record_crc32c(0, b + 21, RECORD_BATCH_HEADER - 21 + section_len));
    *len = RECORD_BATCH_HEADER + section_len;
    return b;
}

/* in[0..n) compressed with codec into a malloc()ed buffer, or NULL. */
static uint8_t *compress_section(int codec, const uint8_t *in, size_t n, size_t *out_len)
{
    size_t cap = n + n / 8 + 4096, len = 0;
    uint8_t *out;

    if (codec == RECORD_CODEC_SNAPPY)
        cap = snappy_max_compressed_length(n);
    else if (codec == RECORD_CODEC_LZ4)
        cap = LZ4F_compressFrameBound(n, NULL);
    else if (codec == RECORD_CODEC_ZSTD)
        cap = ZSTD_compressBound(n);
    out = malloc(cap);
    if (out == NULL)
        return NULL;
    if (codec == RECORD_CODEC_GZIP) {
        z_stream zs;
        memset(&zs, 0, sizeof zs);
        if (deflateInit2(&zs, 1, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK) {
            zs.next_in = (Bytef *)(uintptr_t)in;
            zs.avail_in = (uInt)n;
            zs.next_out = out;
            zs.avail_out = (uInt)cap;
            if (deflate(&zs, Z_FINISH) == Z_STREAM_END)
                len = cap - zs.avail_out;
            deflateEnd(&zs);
        }
    } else if (codec == RECORD_CODEC_SNAPPY) {
        size_t clen = cap;
        if (snappy_compress((const char *)in, n, (char *)out, &clen) == SNAPPY_OK)
            len = clen;
    } else if (codec == RECORD_CODEC_LZ4) {
        size_t r = LZ4F_compressFrame(out, cap, in, n, NULL);
        len = LZ4F_isError(r) ? 0 : r;
    } else {
        size_t r = ZSTD_compress(out, cap, in, n, 1);
        len = ZSTD_isError(r) ? 0 : r;
    }
    if (len == 0) {
        free(out);
        return NULL;
    }
    *out_len = len;
    return out;
}

static uint8_t *put_zigzag(uint8_t *p, int64_t v)
{
    uint64_t z = ((uint64_t)v << 1) ^ (0u - (uint64_t)(v < 0));

    while (z >= 0x80) {
        *p++ = (uint8_t)(z | 0x80);
        z >>= 7;
    }
    *p++ = (uint8_t)z;
    return p;
}

/* A length-prefixed field of n bytes (n == 0xff: null) taken from the recipe's data. */
static uint8_t *put_field(uint8_t *p, unsigned n, const uint8_t *src, size_t src_len)
{
    if (n == 0xff)
        return put_zigzag(p, -1);
    p = put_zigzag(p, n);
    for (unsigned i = 0; i < n; i++)
        *p++ = src_len ? src[i % src_len] : 0;
    return p;
}

/* Valid records from a recipe: 4 bytes per record (key length, value length, a signed
 * timestamp delta, header count mod 4), then 2 per header (key and value lengths); the
 * field bytes cycle through the recipe itself. Writes into out (at least 64 KiB + 1 KiB per
 * record of room: every field is under 256 bytes) and returns the records' length. */
static size_t synthesize(const uint8_t *in, size_t n, uint8_t *out, int32_t *count)
{
    uint8_t *p = out;
    size_t at = 0;
    int32_t i = 0;

    while (at + 4 <= n && i < 64) {
        uint8_t body[4096], *q = body;
        unsigned klen = in[at], vlen = in[at + 1], nh = in[at + 3] % 4;
        int64_t ts_delta = (int8_t)in[at + 2] * 1000;
        at += 4;
        *q++ = 0; /* attributes */
        q = put_zigzag(q, ts_delta);
        q = put_zigzag(q, i);
        q = put_field(q, klen, in, n);
        q = put_field(q, vlen, in, n);
        q = put_zigzag(q, nh);
        for (unsigned h = 0; h < nh; h++) {
            unsigned hk = at < n ? in[at] % 0xff : 0, hv = at + 1 < n ? in[at + 1] : 0;
            at += 2;
            q = put_field(q, hk, in, n);
            q = put_field(q, hv, in, n);
        }
        p = put_zigzag(p, q - body);
        memcpy(p, body, (size_t)(q - body));
        p += q - body;
        i++;
    }
    *count = i;
    return (size_t)(p - out);
}

/* record_batch_check on the batch, with the invariants every answer must meet. Returns rc. */
static int check(const uint8_t *b, size_t len, int32_t count, struct record_scan *scan)
{
    struct record_batch hb;
    int64_t off, ts, off2, ts2;
    int rc = record_batch_check(b, len, MAX_RECORDS_SIZE, &hb, scan);

    if (rc != 0 && rc != ERR_CORRUPT_MESSAGE && rc != ERR_INVALID_RECORD &&
        rc != ERR_MESSAGE_TOO_LARGE && rc != ERR_NOMEM)
        abort();
    if (rc == ERR_CORRUPT_MESSAGE && (hb.attributes & RECORD_ATTR_COMPRESSION_MASK) == 0)
        abort(); /* the CRC is right: only a compressed stream can be corrupt */
    if (rc != 0)
        return rc;
    /* Accepted: the header checks pass on their own, the records fit the bound, and the
     * timestamps are ordered. */
    if (record_batch_validate(b, len, NULL) != 0 || scan->records_size > MAX_RECORDS_SIZE ||
        hb.record_count != count || (count > 0 && scan->max_timestamp < -1))
        abort();
    if (scan->min_timestamp != INT64_MAX && scan->max_timestamp != -1 &&
        scan->min_timestamp > scan->max_timestamp)
        abort();
    /* The look-ups read the same records: the max is what the scan found, and finding that
     * timestamp gives a record at or before the max's offset. */
    if (count > 0) {
        if (record_batch_max_timestamp(b, len, MAX_RECORDS_SIZE, &off, &ts) != 0)
            abort();
        if (ts > scan->max_timestamp && scan->max_timestamp != -1)
            abort();
        if (ts != -1 && scan->max_timestamp != -1 && ts != scan->max_timestamp)
            abort();
        if (record_batch_find_timestamp(b, len, MAX_RECORDS_SIZE, ts, &off2, &ts2) != 0 ||
            off2 > off || ts2 < ts)
            abort();
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int codec, rc;
    int32_t count;
    int64_t base_ts;
    const uint8_t *payload;
    size_t payload_len, len;
    uint8_t *b;
    struct record_scan scan;

    if (size < PREFIX)
        return 0;
    codec = data[0] & 7;
    count = (int32_t)((uint32_t)data[1] << 8 | data[2]);
    base_ts = 0;
    for (int i = 0; i < 8; i++)
        base_ts = (int64_t)((uint64_t)base_ts << 8 | data[3 + i]);
    payload = data + PREFIX;
    payload_len = size - PREFIX;

    if ((data[0] & 8) == 0 || codec == RECORD_CODEC_NONE || codec > RECORD_CODEC_ZSTD) {
        /* The payload is the section as it is: the decompressors meet arbitrary bytes. */
        int64_t off, ts;
        b = make_batch(codec, count, base_ts, payload, payload_len, &len);
        if (b == NULL)
            return 0;
        (void)check(b, len, count, &scan);
        rc = record_batch_find_timestamp(b, len, MAX_RECORDS_SIZE, base_ts, &off, &ts);
        if (rc != 0 && rc != ERR_NOTFOUND && rc != ERR_INVALID_RECORD && rc != ERR_NOMEM)
            abort();
        free(b);
        return 0;
    }

    /* "compress" mode: the same records, plain and compressed, must get the same answer. */
    {
        struct record_scan plain_scan;
        size_t clen;
        uint8_t *c, *made = NULL;
        int plain_rc;

        if (data[0] & 0x10) {
            int32_t real;
            made = malloc(64 * 5000);
            if (made == NULL)
                return 0;
            payload_len = synthesize(payload, payload_len, made, &real);
            payload = made;
            if ((data[1] & 0x80) == 0)
                count = real;
            if (data[2] != 0 && payload_len > 0)
                made[data[2] % payload_len] ^= (uint8_t)(1u << (data[2] % 8));
        }
        c = compress_section(codec, payload, payload_len, &clen);
        if (c == NULL) {
            free(made);
            return 0;
        }
        b = make_batch(RECORD_CODEC_NONE, count, base_ts, payload, payload_len, &len);
        free(made);
        if (b == NULL) {
            free(c);
            return 0;
        }
        plain_rc = check(b, len, count, &plain_scan);
        free(b);
        b = make_batch(codec, count, base_ts, c, clen, &len);
        free(c);
        if (b == NULL)
            return 0;
        rc = check(b, len, count, &scan);
        free(b);
        if (rc == ERR_NOMEM || plain_rc == ERR_NOMEM)
            return 0;
        if (rc != plain_rc)
            abort();
        if (rc == 0 && (scan.max_timestamp != plain_scan.max_timestamp ||
                        scan.min_timestamp != plain_scan.min_timestamp ||
                        scan.records_size != plain_scan.records_size))
            abort();
    }
    return 0;
}
