/* SPDX-License-Identifier: Apache-2.0 */
/* record unit tests: CRC32C on every path against known vectors and a bitwise reference,
 * build -> validate round trips decoded field by field, a byte-exact build, two batches
 * written by a real Kafka broker, every validation error, the in-place patches, control
 * batches, the header of a real gzip-compressed batch, and per-record timestamp look-ups
 * through every codec (compressed here with zlib, snappy, lz4 and zstd), with corrupt and
 * oversized payloads; the record iterator over plain, compressed, compacted (holes) and
 * malformed batches. */
#include "harness.h"

#include <stdbool.h>
#include <stdlib.h>

#include <lz4frame.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include "base/err.h"
#include "record/record.h"
#include "record/record_int.h"

/* ---- helpers ------------------------------------------------------------------------------ */

/* One bit at a time, straight from the definition: the reference both fast paths must match. */
static uint32_t crc_bitwise(const uint8_t *p, size_t len)
{
    uint32_t crc = 0xFFFFFFFFu;

    for (size_t i = 0; i < len; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++)
            crc = (crc & 1) ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
    }
    return ~crc;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t be64(const uint8_t *p)
{
    return (uint64_t)be32(p) << 32 | be32(p + 4);
}

static void put_be16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static void put_be64(uint8_t *p, uint64_t v)
{
    put_be32(p, (uint32_t)(v >> 32));
    put_be32(p + 4, (uint32_t)v);
}

/* Recomputes the CRC of a batch whose header or records a test has edited. */
static void fix_crc(uint8_t *batch)
{
    size_t size = (size_t)be32(batch + 8) + 12;
    put_be32(batch + 17, crc_bitwise(batch + 21, size - 21));
}

static void fill_random(uint8_t *p, size_t len, uint32_t seed)
{
    uint32_t x = seed ? seed : 1;
    for (size_t i = 0; i < len; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        p[i] = (uint8_t)(x >> 24);
    }
}

/* A decoder for the tests only, independent of record.c, so that a round trip checks the
 * encoding rather than the encoder against itself. */
struct dec {
    const uint8_t *p, *end;
    bool bad;
};

static int64_t dec_varlong(struct dec *d)
{
    uint64_t raw = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (d->p >= d->end) {
            d->bad = true;
            return 0;
        }
        uint8_t b = *d->p++;
        raw |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return (int64_t)(raw >> 1) ^ -(int64_t)(raw & 1);
    }
    d->bad = true;
    return 0;
}

/* Returns the bytes of a length-prefixed field, NULL for null (with *len = -1). */
static const uint8_t *dec_bytes(struct dec *d, int64_t *len)
{
    const uint8_t *s;
    *len = dec_varlong(d);
    if (*len < 0)
        return NULL;
    if (*len > d->end - d->p) {
        d->bad = true;
        return NULL;
    }
    s = d->p;
    d->p += *len;
    return s;
}

static bool bytes_eq(const uint8_t *got, int64_t got_len, const void *want, int32_t want_len)
{
    if (want == NULL || want_len < 0)
        return got == NULL && got_len == -1;
    return got != NULL && got_len == want_len && memcmp(got, want, (size_t)want_len) == 0;
}

/* Decodes every record of an uncompressed batch and compares it with what was built. */
static void check_records(const uint8_t *batch, const struct record_input *recs, int32_t n)
{
    struct dec d = {batch + RECORD_BATCH_HEADER, batch + be32(batch + 8) + 12, false};
    int64_t base_ts = (int64_t)be64(batch + 27);

    for (int32_t i = 0; i < n; i++) {
        int64_t len = dec_varlong(&d), key_len, value_len, n_headers;
        const uint8_t *rec_end = d.p + len, *key, *value;
        REQUIRE(!d.bad && len > 0 && len <= d.end - d.p);
        CHECK_EQ_INT(*d.p++, 0);
        CHECK_EQ_INT(base_ts + dec_varlong(&d), recs[i].timestamp);
        CHECK_EQ_INT(dec_varlong(&d), i);
        key = dec_bytes(&d, &key_len);
        CHECK(bytes_eq(key, key_len, recs[i].key, recs[i].key_len));
        value = dec_bytes(&d, &value_len);
        CHECK(bytes_eq(value, value_len, recs[i].value, recs[i].value_len));
        n_headers = dec_varlong(&d);
        REQUIRE(n_headers == recs[i].n_headers);
        for (int32_t h = 0; h < n_headers; h++) {
            const struct record_header *hd = &recs[i].headers[h];
            int64_t hk_len, hv_len;
            const uint8_t *hk = dec_bytes(&d, &hk_len), *hv = dec_bytes(&d, &hv_len);
            CHECK(bytes_eq(hk, hk_len, hd->key, (int32_t)strlen(hd->key)));
            CHECK(bytes_eq(hv, hv_len, hd->value, hd->value_len));
        }
        REQUIRE(!d.bad);
        CHECK(d.p == rec_end);
        d.p = rec_end;
    }
    CHECK(d.p == d.end);
}

/* A small batch for the error tests: three records, one with headers. */
static uint8_t *sample_batch(size_t *len)
{
    static const struct record_header hdrs[] = {{"trace", (const uint8_t *)"abc", 3},
                                                {"empty", NULL, -1}};
    const struct record_input recs[] = {
        {(const uint8_t *)"k0", 2, (const uint8_t *)"v0", 2, 1000, 0, NULL},
        {NULL, -1, (const uint8_t *)"value-1", 7, 1001, 2, hdrs},
        {(const uint8_t *)"k2", 2, NULL, -1, 999, 0, NULL},
    };
    struct record_build_options opt = {100, 0, 4000, 3, 17, 5};
    uint8_t *buf = NULL;
    int rc = record_batch_build(&opt, recs, 3, &buf, len);
    return rc == 0 ? buf : NULL;
}

/* ---- CRC32C ------------------------------------------------------------------------------- */

TEST(crc32c_known_vectors)
{
    uint8_t zeros[32] = {0}, ones[32], inc[32], dec[32];
    const char *digits = "123456789";
    bool hw = record_crc32c_hw_available();

    memset(ones, 0xff, sizeof ones);
    for (int i = 0; i < 32; i++) {
        inc[i] = (uint8_t)i;
        dec[i] = (uint8_t)(31 - i);
    }
    /* "123456789" is the CRC catalogue's check value; the 32-byte ones are RFC 3720's. */
    CHECK_EQ_INT(record_crc32c_sw(0, digits, 9), 0xE3069283u);
    CHECK_EQ_INT(record_crc32c_sw(0, zeros, 32), 0x8A9136AAu);
    CHECK_EQ_INT(record_crc32c_sw(0, ones, 32), 0x62A8AB43u);
    CHECK_EQ_INT(record_crc32c_sw(0, inc, 32), 0x46DD794Eu);
    CHECK_EQ_INT(record_crc32c_sw(0, dec, 32), 0x113FDB5Cu);
    CHECK_EQ_INT(record_crc32c(0, digits, 9), 0xE3069283u);
    CHECK_EQ_INT(record_crc32c(0, zeros, 32), 0x8A9136AAu);
    CHECK_EQ_INT(record_crc32c(0, NULL, 0), 0);
    if (hw) {
        CHECK_EQ_INT(record_crc32c_hw(0, digits, 9), 0xE3069283u);
        CHECK_EQ_INT(record_crc32c_hw(0, zeros, 32), 0x8A9136AAu);
        CHECK_EQ_INT(record_crc32c_hw(0, ones, 32), 0x62A8AB43u);
        CHECK_EQ_INT(record_crc32c_hw(0, inc, 32), 0x46DD794Eu);
        CHECK_EQ_INT(record_crc32c_hw(0, dec, 32), 0x113FDB5Cu);
    } else {
        printf("    (no SSE4.2 on this CPU: hardware path not tested)\n");
    }
    if (!record_crc32c_clmul_available())
        printf("    (no VPCLMULQDQ with AVX-512 on this CPU: folding path not tested)\n");
}

TEST(crc32c_all_short_lengths_and_alignments)
{
    uint8_t buf[128 + 8];
    bool hw = record_crc32c_hw_available();

    fill_random(buf, sizeof buf, 7);
    for (size_t start = 0; start < 8; start++) {
        for (size_t len = 0; len <= 100; len++) {
            uint32_t want = crc_bitwise(buf + start, len);
            CHECK_EQ_INT(record_crc32c_sw(0, buf + start, len), want);
            CHECK_EQ_INT(record_crc32c(0, buf + start, len), want);
            if (hw)
                CHECK_EQ_INT(record_crc32c_hw(0, buf + start, len), want);
        }
    }
}

/* The fold's every length from 0 to 3,000 bytes (its 256-byte start, each count of 256- and
 * 64-byte blocks, every tail under 64), at odd starts and from a non-zero CRC: each must
 * equal the table's. And the bitwise reference at the lengths where its blocks change. */
TEST(crc32c_fold_every_length_equals_table)
{
    size_t max = 3000 + 8;
    uint8_t *buf = malloc(max);

    if (!record_crc32c_clmul_available()) {
        printf("    (no VPCLMULQDQ with AVX-512 on this CPU: folding path not tested)\n");
        free(buf);
        return;
    }
    REQUIRE(buf != NULL);
    fill_random(buf, max, 17);
    for (size_t start = 0; start < 8; start += 3) {
        for (size_t len = 0; len <= 3000; len++) {
            uint32_t seed = (uint32_t)(len * 2654435761u);
            CHECK_EQ_INT(record_crc32c_clmul(seed, buf + start, len),
                         record_crc32c_sw(seed, buf + start, len));
        }
    }
    static const size_t edges[] = {255, 256, 257, 319, 320, 511, 512, 513, 1023, 1024, 1025};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        CHECK_EQ_INT(record_crc32c_clmul(0, buf + 1, edges[i]), crc_bitwise(buf + 1, edges[i]));
        CHECK_EQ_INT(record_crc32c(0, buf + 1, edges[i]), crc_bitwise(buf + 1, edges[i]));
    }
    free(buf);
}

/* Lengths around the interleaved loops' thresholds (3 x 256 and 3 x 8192 bytes) and up to a
 * MiB, on every path. */
TEST(crc32c_long_buffers_hw_equals_table)
{
    static const size_t lens[] = {255,   256,   767,   768,   769,   1000,  4096,   16384,
                                  24575, 24576, 24577, 24583, 49152, 65536, 100000, 1 << 20};
    size_t max = (1 << 20) + 8;
    uint8_t *buf = malloc(max);
    bool hw = record_crc32c_hw_available(), clmul = record_crc32c_clmul_available();

    REQUIRE(buf != NULL);
    fill_random(buf, max, 99);
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        for (size_t start = 0; start < 8; start += 3) {
            uint32_t want = crc_bitwise(buf + start, lens[i]);
            CHECK_EQ_INT(record_crc32c_sw(0, buf + start, lens[i]), want);
            CHECK_EQ_INT(record_crc32c(0, buf + start, lens[i]), want);
            if (hw)
                CHECK_EQ_INT(record_crc32c_hw(0, buf + start, lens[i]), want);
            if (clmul)
                CHECK_EQ_INT(record_crc32c_clmul(0, buf + start, lens[i]), want);
        }
    }
    free(buf);
}

TEST(crc32c_continues_across_calls)
{
    uint8_t buf[30000];
    uint32_t whole;

    fill_random(buf, sizeof buf, 3);
    whole = crc_bitwise(buf, sizeof buf);
    for (size_t cut = 0; cut <= sizeof buf; cut += 997) {
        CHECK_EQ_INT(record_crc32c(record_crc32c(0, buf, cut), buf + cut, sizeof buf - cut), whole);
        CHECK_EQ_INT(record_crc32c_sw(record_crc32c_sw(0, buf, cut), buf + cut, sizeof buf - cut),
                     whole);
    }
}

/* ---- build and validate ------------------------------------------------------------------- */

TEST(build_validate_round_trip)
{
    static const struct record_header hdrs[] = {
        {"content-type", (const uint8_t *)"json", 4},
        {"nullval", NULL, -1},
        {"", (const uint8_t *)"", 0},
    };
    uint8_t *big = malloc(100000);
    struct record_input recs[6] = {
        {(const uint8_t *)"key", 3, (const uint8_t *)"value", 5, 1700000000000, 0, NULL},
        {NULL, -1, (const uint8_t *)"no key", 6, 1700000000005, 0, NULL},
        {(const uint8_t *)"tomb", 4, NULL, -1, 1699999999000, 0, NULL}, /* earlier: delta < 0 */
        {(const uint8_t *)"", 0, (const uint8_t *)"", 0, 1700000000001, 3, hdrs},
        {NULL, -1, NULL, -1, 1700000000002, 1, hdrs},
        {(const uint8_t *)"big", 3, NULL, 100000, 1700000009999, 0, NULL},
    };
    struct record_build_options opt = {0, RECORD_ATTR_TRANSACTIONAL, 12345, 7, 42, 9};
    struct record_batch b;
    uint8_t *buf = NULL;
    size_t len = 0;

    REQUIRE(big != NULL);
    fill_random(big, 100000, 5);
    recs[5].value = big;
    REQUIRE(record_batch_build(&opt, recs, 6, &buf, &len) == 0);
    CHECK_EQ_INT(record_batch_validate(buf, len, &b), 0);
    CHECK_EQ_INT(record_batch_size(&b), len);
    CHECK_EQ_INT(b.base_offset, 0);
    CHECK_EQ_INT(b.leader_epoch, 9);
    CHECK_EQ_INT(b.magic, 2);
    CHECK_EQ_INT(b.crc, crc_bitwise(buf + 21, len - 21));
    CHECK_EQ_INT(b.attributes, RECORD_ATTR_TRANSACTIONAL);
    CHECK_EQ_INT(b.last_offset_delta, 5);
    CHECK_EQ_INT(b.base_timestamp, 1700000000000);
    CHECK_EQ_INT(b.max_timestamp, 1700000009999);
    CHECK_EQ_INT(b.producer_id, 12345);
    CHECK_EQ_INT(b.producer_epoch, 7);
    CHECK_EQ_INT(b.base_sequence, 42);
    CHECK_EQ_INT(b.record_count, 6);
    CHECK_EQ_INT(record_batch_last_offset(&b), 5);
    check_records(buf, recs, 6);
    free(buf);
    free(big);
}

TEST(build_compression_bits_ignored_and_empty_rejected)
{
    const struct record_input rec = {NULL, -1, (const uint8_t *)"v", 1, 5, 0, NULL};
    struct record_build_options opt = {0, 3 | RECORD_ATTR_LOG_APPEND_TIME, -1, -1, -1, 0};
    struct record_batch b;
    uint8_t *buf = NULL;
    size_t len = 0;

    REQUIRE(record_batch_build(&opt, &rec, 1, &buf, &len) == 0);
    CHECK_EQ_INT(record_batch_validate(buf, len, &b), 0);
    CHECK_EQ_INT(b.attributes, RECORD_ATTR_LOG_APPEND_TIME);
    CHECK_EQ_INT(b.producer_id, -1);
    free(buf);
    buf = NULL;
    CHECK_EQ_INT(record_batch_build(&opt, &rec, 0, &buf, &len), ERR_INVALID_RECORD);
    CHECK(buf == NULL);
}

/* The builder's output for one small record, worked out by hand from the layout. */
TEST(build_byte_exact)
{
    static const struct record_header hdr = {"h", (const uint8_t *)"x", 1};
    const struct record_input rec = {
        (const uint8_t *)"k", 1, (const uint8_t *)"v", 1, 1000, 1, &hdr};
    struct record_build_options opt = {5, 0, 1000, 2, 7, 3};
    static const uint8_t want[] = {
        0,    0,   0,    0,   0, 0, 0,    5,    /* baseOffset 5 */
        0,    0,   0,    62,                    /* batchLength: 49 + 13 */
        0,    0,   0,    3,                     /* partitionLeaderEpoch */
        2,                                      /* magic */
        0,    0,   0,    0,                     /* crc: checked separately */
        0,    0,                                /* attributes */
        0,    0,   0,    0,                     /* lastOffsetDelta */
        0,    0,   0,    0,   0, 0, 0x03, 0xe8, /* baseTimestamp 1000 */
        0,    0,   0,    0,   0, 0, 0x03, 0xe8, /* maxTimestamp 1000 */
        0,    0,   0,    0,   0, 0, 0x03, 0xe8, /* producerId 1000 */
        0,    2,                                /* producerEpoch */
        0,    0,   0,    7,                     /* baseSequence */
        0,    0,   0,    1,                     /* recordCount */
        0x18,                                   /* length 12 (zigzag 24) */
        0,                                      /* attributes */
        0,                                      /* timestampDelta 0 */
        0,                                      /* offsetDelta 0 */
        0x02, 'k',                              /* key */
        0x02, 'v',                              /* value */
        0x02,                                   /* 1 header */
        0x02, 'h', 0x02, 'x',                   /* header key, value */
    };
    uint8_t *buf = NULL;
    size_t len = 0;

    REQUIRE(record_batch_build(&opt, &rec, 1, &buf, &len) == 0);
    REQUIRE(len == sizeof want);
    CHECK(memcmp(buf, want, 17) == 0);
    CHECK(memcmp(buf + 21, want + 21, sizeof want - 21) == 0);
    CHECK_EQ_INT(be32(buf + 17), crc_bitwise(want + 21, sizeof want - 21));
    free(buf);
}

/* ---- validation errors -------------------------------------------------------------------- */

TEST(validate_flipped_byte_anywhere)
{
    size_t len;
    uint8_t *buf = sample_batch(&len);

    REQUIRE(buf != NULL);
    REQUIRE(record_batch_validate(buf, len, NULL) == 0);
    for (size_t i = 0; i < len; i++) {
        for (int bit = 0; bit < 8; bit++) {
            int rc;
            buf[i] ^= (uint8_t)(1 << bit);
            rc = record_batch_validate(buf, len, NULL);
            if (i < 8 || (i >= 12 && i < 16))
                CHECK_EQ_INT(rc, 0); /* baseOffset and leader epoch: not under the CRC */
            else if (i < 12)
                CHECK(rc == ERR_CORRUPT_MESSAGE || rc == ERR_TRUNCATED); /* batchLength */
            else if (i == 16)
                CHECK_EQ_INT(rc, ERR_UNSUPPORTED_FOR_MESSAGE_FORMAT);
            else
                CHECK_EQ_INT(rc, ERR_CORRUPT_MESSAGE);
            buf[i] ^= (uint8_t)(1 << bit);
        }
    }
    free(buf);
}

TEST(validate_truncated_at_every_length)
{
    size_t len;
    uint8_t *buf = sample_batch(&len);

    REQUIRE(buf != NULL);
    for (size_t cut = 0; cut < len; cut++) {
        /* A fresh copy of exactly cut bytes, so ASan catches any read past it. */
        uint8_t *part = malloc(cut ? cut : 1);
        REQUIRE(part != NULL);
        memcpy(part, buf, cut);
        CHECK_EQ_INT(record_batch_validate(part, cut, NULL), ERR_TRUNCATED);
        CHECK_EQ_INT(record_batch_parse(part, cut, &(struct record_batch){0}), ERR_TRUNCATED);
        free(part);
    }
    free(buf);
}

TEST(validate_old_magic_unsupported)
{
    size_t len;
    uint8_t *buf = sample_batch(&len);
    /* A v0 message: offset, size 14, crc, magic 0, attributes, null key, null value. */
    uint8_t v0[26] = {0, 0, 0, 0, 0, 0,    0,    0,    0,    0,    0,    14,   1,
                      2, 3, 4, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

    REQUIRE(buf != NULL);
    CHECK_EQ_INT(record_batch_validate(v0, sizeof v0, NULL), ERR_UNSUPPORTED_FOR_MESSAGE_FORMAT);
    for (int magic = 0; magic <= 3; magic++) {
        if (magic == 2)
            continue;
        buf[16] = (uint8_t)magic;
        CHECK_EQ_INT(record_batch_validate(buf, len, NULL), ERR_UNSUPPORTED_FOR_MESSAGE_FORMAT);
        CHECK_EQ_INT(record_batch_parse(buf, len, &(struct record_batch){0}),
                     ERR_UNSUPPORTED_FOR_MESSAGE_FORMAT);
    }
    free(buf);
}

TEST(validate_batch_length_too_small)
{
    size_t len;
    uint8_t *buf = sample_batch(&len);
    static const int32_t bad[] = {48, 0, 1, -1, INT32_MIN};

    REQUIRE(buf != NULL);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        put_be32(buf + 8, (uint32_t)bad[i]);
        CHECK_EQ_INT(record_batch_validate(buf, len, NULL), ERR_CORRUPT_MESSAGE);
    }
    /* Larger than the buffer: truncated, and never read past it. */
    put_be32(buf + 8, (uint32_t)INT32_MAX);
    CHECK_EQ_INT(record_batch_validate(buf, len, NULL), ERR_TRUNCATED);
    /* Shorter than the records: the CRC no longer matches. */
    put_be32(buf + 8, (uint32_t)(len - 12 - 1));
    CHECK_EQ_INT(record_batch_validate(buf, len, NULL), ERR_CORRUPT_MESSAGE);
    free(buf);
}

TEST(validate_count_mismatch)
{
    size_t len;
    uint8_t *buf = sample_batch(&len);

    REQUIRE(buf != NULL);
    /* recordCount says 2 and lastOffsetDelta 1, but 3 records follow. */
    put_be32(buf + 57, 2);
    put_be32(buf + 23, 1);
    fix_crc(buf);
    CHECK_EQ_INT(record_batch_validate(buf, len, NULL), ERR_INVALID_RECORD);
    /* recordCount says 4: the records end early. */
    put_be32(buf + 57, 4);
    put_be32(buf + 23, 3);
    fix_crc(buf);
    CHECK_EQ_INT(record_batch_validate(buf, len, NULL), ERR_INVALID_RECORD);
    /* recordCount right, lastOffsetDelta wrong. */
    put_be32(buf + 57, 3);
    put_be32(buf + 23, 3);
    fix_crc(buf);
    CHECK_EQ_INT(record_batch_validate(buf, len, NULL), ERR_INVALID_RECORD);
    /* Negative recordCount. */
    put_be32(buf + 57, (uint32_t)-1);
    put_be32(buf + 23, (uint32_t)-2);
    fix_crc(buf);
    CHECK_EQ_INT(record_batch_validate(buf, len, NULL), ERR_INVALID_RECORD);
    /* Put back: valid again. */
    put_be32(buf + 57, 3);
    put_be32(buf + 23, 2);
    fix_crc(buf);
    CHECK_EQ_INT(record_batch_validate(buf, len, NULL), 0);
    free(buf);
}

TEST(validate_bad_codec)
{
    size_t len;
    uint8_t *buf = sample_batch(&len);

    REQUIRE(buf != NULL);
    for (int codec = 5; codec <= 7; codec++) {
        put_be16(buf + 21, (uint16_t)codec);
        fix_crc(buf);
        CHECK_EQ_INT(record_batch_validate(buf, len, NULL), ERR_INVALID_RECORD);
    }
    free(buf);
}

TEST(validate_record_level_errors)
{
    size_t len;
    uint8_t *buf = sample_batch(&len), *grown;
    size_t first = RECORD_BATCH_HEADER; /* first record: length, attrs, tsDelta, offsetDelta */

    REQUIRE(buf != NULL);
    /* offsetDelta of the first record 1 instead of 0. */
    CHECK_EQ_INT(buf[first + 3], 0);
    buf[first + 3] = 2;
    fix_crc(buf);
    CHECK_EQ_INT(record_batch_validate(buf, len, NULL), ERR_INVALID_RECORD);
    buf[first + 3] = 0;
    /* Record length one too long, then one too short. */
    buf[first] += 2;
    fix_crc(buf);
    CHECK_EQ_INT(record_batch_validate(buf, len, NULL), ERR_INVALID_RECORD);
    buf[first] -= 4;
    fix_crc(buf);
    CHECK_EQ_INT(record_batch_validate(buf, len, NULL), ERR_INVALID_RECORD);
    buf[first] += 2;
    /* Key length -2. */
    buf[first + 4] = 3;
    fix_crc(buf);
    CHECK_EQ_INT(record_batch_validate(buf, len, NULL), ERR_INVALID_RECORD);
    buf[first + 4] = 4;
    /* Header count -1 (the record still ends where its length says). */
    CHECK_EQ_INT(buf[first + 10], 0);
    buf[first + 10] = 1;
    fix_crc(buf);
    CHECK_EQ_INT(record_batch_validate(buf, len, NULL), ERR_INVALID_RECORD);
    buf[first + 10] = 0;
    fix_crc(buf);
    CHECK_EQ_INT(record_batch_validate(buf, len, NULL), 0);
    /* A length varint that never ends. */
    memset(buf + first, 0xff, 6);
    fix_crc(buf);
    CHECK_EQ_INT(record_batch_validate(buf, len, NULL), ERR_INVALID_RECORD);
    free(buf);

    /* One byte of garbage after the last record, inside batchLength. */
    buf = sample_batch(&len);
    REQUIRE(buf != NULL);
    grown = realloc(buf, len + 1);
    REQUIRE(grown != NULL);
    grown[len] = 0;
    put_be32(grown + 8, (uint32_t)(len + 1 - 12));
    fix_crc(grown);
    CHECK_EQ_INT(record_batch_validate(grown, len + 1, NULL), ERR_INVALID_RECORD);
    free(grown);
}

TEST(validate_null_header_key_rejected)
{
    const struct record_input rec = {
        NULL, -1, NULL, -1, 0, 1, &(struct record_header){"a", NULL, -1}};
    struct record_build_options opt = {0, 0, -1, -1, -1, 0};
    uint8_t *buf = NULL;
    size_t len = 0;

    REQUIRE(record_batch_build(&opt, &rec, 1, &buf, &len) == 0);
    REQUIRE(record_batch_validate(buf, len, NULL) == 0);
    /* Record: len, attrs, ts, offset, key -1, value -1, 1 header, key length 1 -> -1. */
    CHECK_EQ_INT(buf[RECORD_BATCH_HEADER + 7], 2);
    buf[RECORD_BATCH_HEADER + 7] = 1;
    fix_crc(buf);
    CHECK_EQ_INT(record_batch_validate(buf, len, NULL), ERR_INVALID_RECORD);
    free(buf);
}

TEST(validate_empty_batch)
{
    uint8_t buf[RECORD_BATCH_HEADER + 1] = {0};

    put_be32(buf + 8, RECORD_BATCH_HEADER - 12);
    buf[16] = 2;
    put_be32(buf + 23, 4); /* compaction keeps the last offset of what was removed */
    fix_crc(buf);
    CHECK_EQ_INT(record_batch_validate(buf, RECORD_BATCH_HEADER, NULL), 0);
    /* With a byte of records but a count of zero. */
    put_be32(buf + 8, RECORD_BATCH_HEADER - 12 + 1);
    fix_crc(buf);
    CHECK_EQ_INT(record_batch_validate(buf, sizeof buf, NULL), ERR_INVALID_RECORD);
}

/* ---- patches ------------------------------------------------------------------------------ */

TEST(patch_base_offset_and_leader_epoch_keep_crc)
{
    size_t len;
    uint8_t *buf = sample_batch(&len);
    struct record_batch b;

    REQUIRE(buf != NULL);
    record_batch_set_base_offset(buf, 0x0102030405060708);
    record_batch_set_leader_epoch(buf, 77);
    CHECK_EQ_INT(record_batch_validate(buf, len, &b), 0);
    CHECK_EQ_INT(b.base_offset, 0x0102030405060708);
    CHECK_EQ_INT(b.leader_epoch, 77);
    CHECK_EQ_INT(record_batch_last_offset(&b), 0x0102030405060708 + 2);
    record_batch_set_leader_epoch(buf, -1);
    CHECK_EQ_INT(record_batch_validate(buf, len, &b), 0);
    CHECK_EQ_INT(b.leader_epoch, -1);
    free(buf);
}

TEST(patch_log_append_time)
{
    size_t len;
    uint8_t *buf = sample_batch(&len);
    struct record_batch b;

    REQUIRE(buf != NULL);
    record_batch_set_log_append_time(buf, 1800000000123);
    CHECK_EQ_INT(record_batch_validate(buf, len, &b), 0);
    CHECK(b.attributes & RECORD_ATTR_LOG_APPEND_TIME);
    CHECK_EQ_INT(b.attributes & ~RECORD_ATTR_LOG_APPEND_TIME, 0);
    CHECK_EQ_INT(b.max_timestamp, 1800000000123);
    CHECK_EQ_INT(b.base_timestamp, 1000);
    CHECK_EQ_INT(b.crc, crc_bitwise(buf + 21, len - 21));
    /* Idempotent, and the other attribute bits survive. */
    put_be16(buf + 21, RECORD_ATTR_TRANSACTIONAL);
    record_batch_set_log_append_time(buf, 5);
    CHECK_EQ_INT(record_batch_validate(buf, len, &b), 0);
    CHECK_EQ_INT(b.attributes, RECORD_ATTR_TRANSACTIONAL | RECORD_ATTR_LOG_APPEND_TIME);
    CHECK_EQ_INT(b.max_timestamp, 5);
    free(buf);
}

/* ---- control batches ---------------------------------------------------------------------- */

TEST(control_batch_contents)
{
    for (int t = RECORD_CONTROL_ABORT; t <= RECORD_CONTROL_COMMIT; t++) {
        struct record_batch b;
        enum record_control_type type;
        int32_t coordinator_epoch;
        uint8_t *buf = NULL, want_key[4] = {0, 0, 0, (uint8_t)t};
        uint8_t want_value[6] = {0, 0, 0x01, 0x02, 0x03, 0x04};
        struct record_input want = {want_key, 4, want_value, 6, 1700000000000, 0, NULL};
        size_t len = 0;

        REQUIRE(record_build_control(9000, 4, 0x01020304, (enum record_control_type)t,
                                     1700000000000, &buf, &len) == 0);
        CHECK_EQ_INT(record_batch_validate(buf, len, &b), 0);
        CHECK_EQ_INT(b.attributes, RECORD_ATTR_CONTROL | RECORD_ATTR_TRANSACTIONAL);
        CHECK_EQ_INT(b.producer_id, 9000);
        CHECK_EQ_INT(b.producer_epoch, 4);
        CHECK_EQ_INT(b.base_sequence, -1);
        CHECK_EQ_INT(b.record_count, 1);
        CHECK_EQ_INT(b.last_offset_delta, 0);
        CHECK_EQ_INT(b.base_timestamp, 1700000000000);
        CHECK_EQ_INT(b.max_timestamp, 1700000000000);
        check_records(buf, &want, 1);
        CHECK_EQ_INT(record_control_parse(buf, len, &type, &coordinator_epoch), 0);
        CHECK_EQ_INT(type, t);
        CHECK_EQ_INT(coordinator_epoch, 0x01020304);
        free(buf);
    }
}

TEST(control_parse_rejects_data_batches)
{
    size_t len;
    uint8_t *buf = sample_batch(&len);
    enum record_control_type type;
    int32_t epoch;

    REQUIRE(buf != NULL);
    CHECK_EQ_INT(record_control_parse(buf, len, &type, &epoch), ERR_INVALID_RECORD);
    /* Control bit set but the key is "k0": too short for a marker. */
    put_be16(buf + 21, RECORD_ATTR_CONTROL);
    CHECK_EQ_INT(record_control_parse(buf, len, &type, &epoch), ERR_INVALID_RECORD);
    free(buf);
}

/* ---- compressed batches ------------------------------------------------------------------- */

/* The records section of three records (key<i>, "value-<i>" x 5, timestampDelta 10 i),
 * gzip-compressed (mtime 0) by Python's gzip module. */
static const uint8_t gzip_records[] = {
    0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x8b, 0x62, 0x60, 0x60, 0xe0, 0xc8,
    0x4e, 0xad, 0x34, 0x70, 0x2b, 0x4b, 0xcc, 0x29, 0x4d, 0xd5, 0x35, 0xc0, 0x47, 0x31, 0x44, 0x31,
    0x88, 0x30, 0x81, 0x54, 0x1b, 0x42, 0x55, 0x1b, 0xe2, 0xa3, 0x80, 0xaa, 0x35, 0x58, 0x40, 0xaa,
    0x8d, 0xa0, 0xaa, 0x8d, 0xf0, 0x51, 0x0c, 0x00, 0xb4, 0x11, 0x65, 0xa4, 0x8a, 0x00, 0x00, 0x00,
};

static size_t make_gzip_batch(uint8_t *buf, const uint8_t *payload, size_t payload_len)
{
    size_t len = RECORD_BATCH_HEADER + payload_len;

    memset(buf, 0, RECORD_BATCH_HEADER);
    put_be64(buf, 0);
    put_be32(buf + 8, (uint32_t)(len - 12));
    put_be32(buf + 12, 0);
    buf[16] = 2;
    put_be16(buf + 21, 1); /* gzip */
    put_be32(buf + 23, 2);
    put_be64(buf + 27, 1700000000000);
    put_be64(buf + 35, 1700000000020);
    put_be64(buf + 43, (uint64_t)-1);
    put_be16(buf + 51, 0xffff);
    put_be32(buf + 53, 0xffffffff);
    put_be32(buf + 57, 3);
    if (payload_len > 0)
        memcpy(buf + RECORD_BATCH_HEADER, payload, payload_len);
    fix_crc(buf);
    return len;
}

TEST(validate_gzip_batch_header_only)
{
    uint8_t buf[RECORD_BATCH_HEADER + sizeof gzip_records];
    struct record_batch b;
    size_t len = make_gzip_batch(buf, gzip_records, sizeof gzip_records);

    CHECK_EQ_INT(record_batch_validate(buf, len, &b), 0);
    CHECK_EQ_INT(b.attributes & RECORD_ATTR_COMPRESSION_MASK, 1);
    CHECK_EQ_INT(b.record_count, 3);
    CHECK_EQ_INT(record_batch_last_offset(&b), 2);
    /* record_batch_validate (what log recovery uses) does not look into the payload:
     * anything under a good CRC passes. Produce uses record_batch_check, which does (the
     * check_* tests below). */
    for (size_t i = 0; i < sizeof gzip_records; i++)
        buf[RECORD_BATCH_HEADER + i] = (uint8_t)i;
    fix_crc(buf);
    CHECK_EQ_INT(record_batch_validate(buf, len, NULL), 0);
    /* But the header checks and the CRC still apply. */
    buf[RECORD_BATCH_HEADER + 5] ^= 1;
    CHECK_EQ_INT(record_batch_validate(buf, len, NULL), ERR_CORRUPT_MESSAGE);
    put_be32(buf + 23, 3);
    fix_crc(buf);
    CHECK_EQ_INT(record_batch_validate(buf, len, NULL), ERR_INVALID_RECORD);
    for (int codec = 2; codec <= 4; codec++) {
        put_be32(buf + 23, 2);
        put_be16(buf + 21, (uint16_t)codec);
        fix_crc(buf);
        CHECK_EQ_INT(record_batch_validate(buf, len, NULL), 0);
    }
}

/* ---- per-record timestamp look-ups and decompression -------------------------------------- */

/* The ways a test compresses a records section: every codec, plus the variants a reader must
 * also take (two gzip members, snappy-java framing, zstd without a frame content size). */
enum zvariant {
    ZV_GZIP,
    ZV_GZIP_2MEMBERS,
    ZV_SNAPPY_RAW,
    ZV_SNAPPY_JAVA,
    ZV_LZ4,
    ZV_ZSTD,
    ZV_ZSTD_NOSIZE,
    ZV_N
};
static const int zv_codec[ZV_N] = {1, 1, 2, 2, 3, 4, 4};

static size_t gzip_member(const uint8_t *in, size_t n, uint8_t *out, size_t cap)
{
    z_stream zs;
    size_t len;

    memset(&zs, 0, sizeof zs);
    if (deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return 0;
    zs.next_in = (Bytef *)(uintptr_t)in;
    zs.avail_in = (uInt)n;
    zs.next_out = out;
    zs.avail_out = (uInt)cap;
    len = deflate(&zs, Z_FINISH) == Z_STREAM_END ? cap - zs.avail_out : 0;
    deflateEnd(&zs);
    return len;
}

/* Compresses in[0..n) the way v says, with the real libraries, into a malloc()ed buffer. */
static uint8_t *zcompress(enum zvariant v, const uint8_t *in, size_t n, size_t *out_len)
{
    size_t cap = n + n / 8 + 4096, len = 0;
    uint8_t *out;

    if (v == ZV_SNAPPY_RAW || v == ZV_SNAPPY_JAVA)
        cap = 16 + snappy_max_compressed_length(n) * 2 + (n / 16 + 1) * 4 + 64;
    else if (v == ZV_LZ4)
        cap = LZ4F_compressFrameBound(n, NULL);
    else if (v == ZV_ZSTD || v == ZV_ZSTD_NOSIZE)
        cap = ZSTD_compressBound(n);
    out = malloc(cap);
    if (out == NULL)
        return NULL;
    switch (v) {
    case ZV_GZIP:
        len = gzip_member(in, n, out, cap);
        break;
    case ZV_GZIP_2MEMBERS: {
        size_t half = n / 2, a = gzip_member(in, half, out, cap);
        size_t b = a ? gzip_member(in + half, n - half, out + a, cap - a) : 0;
        len = b ? a + b : 0;
        break;
    }
    case ZV_SNAPPY_RAW: {
        size_t clen = cap;
        len = snappy_compress((const char *)in, n, (char *)out, &clen) == SNAPPY_OK ? clen : 0;
        break;
    }
    case ZV_SNAPPY_JAVA: {
        /* snappy-java writes 32 KiB blocks; small inputs use 16 bytes to get several. */
        size_t block = n < 4096 ? 16 : 32768;
        memcpy(out, "\x82SNAPPY\0", 8);
        put_be32(out + 8, 1);
        put_be32(out + 12, 1);
        len = 16;
        for (size_t at = 0; at < n; at += block) {
            size_t part = n - at < block ? n - at : block, clen = cap - len - 4;
            if (snappy_compress((const char *)in + at, part, (char *)out + len + 4, &clen) !=
                SNAPPY_OK) {
                len = 0;
                break;
            }
            put_be32(out + len, (uint32_t)clen);
            len += 4 + clen;
        }
        break;
    }
    case ZV_LZ4: {
        size_t r = LZ4F_compressFrame(out, cap, in, n, NULL);
        len = LZ4F_isError(r) ? 0 : r;
        break;
    }
    case ZV_ZSTD: {
        size_t r = ZSTD_compress(out, cap, in, n, 3);
        len = ZSTD_isError(r) ? 0 : r;
        break;
    }
    case ZV_ZSTD_NOSIZE: {
        ZSTD_CCtx *cctx = ZSTD_createCCtx();
        size_t r;
        if (cctx == NULL)
            break;
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 0);
        r = ZSTD_compress2(cctx, out, cap, in, n);
        len = ZSTD_isError(r) ? 0 : r;
        ZSTD_freeCCtx(cctx);
        break;
    }
    default:
        break;
    }
    if (len == 0) {
        free(out);
        return NULL;
    }
    *out_len = len;
    return out;
}

/* The batch `plain` (uncompressed) with its records section compressed as v: codec bits,
 * batchLength and CRC set to match. */
static uint8_t *compress_batch(enum zvariant v, const uint8_t *plain, size_t plain_len,
                               size_t *out_len)
{
    size_t clen, len;
    uint8_t *c = zcompress(v, plain + RECORD_BATCH_HEADER, plain_len - RECORD_BATCH_HEADER, &clen);
    uint8_t *b;

    if (c == NULL)
        return NULL;
    len = RECORD_BATCH_HEADER + clen;
    b = malloc(len);
    if (b != NULL) {
        memcpy(b, plain, RECORD_BATCH_HEADER);
        memcpy(b + RECORD_BATCH_HEADER, c, clen);
        put_be32(b + 8, (uint32_t)(len - 12));
        put_be16(b + 21, (uint16_t)(((plain[21] << 8 | plain[22]) & ~7) | zv_codec[v]));
        put_be32(b + 17, record_crc32c(0, b + 21, len - 21));
        *out_len = len;
    }
    free(c);
    return b;
}

/* Six records at offsets 500..505, timestamps out of order, 1010 twice (503 and 504). */
static const int64_t ts_sample[] = {1000, 1005, 990, 1010, 1010, 1003};
#define TS_BASE_OFFSET 500

static uint8_t *ts_batch(size_t *len)
{
    static const struct record_header hdrs[] = {{"h", (const uint8_t *)"hv", 2}};
    static const uint8_t value[] = "a value that repeats, a value that repeats, a value";
    struct record_input recs[6];
    struct record_build_options opt = {TS_BASE_OFFSET, 0, -1, -1, -1, 3};
    uint8_t *buf = NULL;

    for (int i = 0; i < 6; i++) {
        recs[i] = (struct record_input){
            (const uint8_t *)"key", 3,   value, (int32_t)sizeof value, ts_sample[i],
            i == 2 ? 1 : 0,         hdrs};
    }
    return record_batch_build(&opt, recs, 6, &buf, len) == 0 ? buf : NULL;
}

/* record_batch_find_timestamp(batch, target) gives want_rc and, when 0, want_off/want_ts. */
static void check_find(const uint8_t *b, size_t len, int64_t target, int want_rc, int64_t want_off,
                       int64_t want_ts)
{
    int64_t off = -42, ts = -42;
    int rc = record_batch_find_timestamp(b, len, RECORD_DECOMPRESS_MAX, target, &off, &ts);

    CHECK_EQ_INT(rc, want_rc);
    if (rc == 0 && want_rc == 0) {
        CHECK_EQ_INT(off, want_off);
        CHECK_EQ_INT(ts, want_ts);
    } else {
        CHECK(off == -42 && ts == -42); /* untouched unless found */
    }
}

static void check_max(const uint8_t *b, size_t len, int want_rc, int64_t want_off, int64_t want_ts)
{
    int64_t off = -42, ts = -42;
    int rc = record_batch_max_timestamp(b, len, RECORD_DECOMPRESS_MAX, &off, &ts);

    CHECK_EQ_INT(rc, want_rc);
    if (rc == 0 && want_rc == 0) {
        CHECK_EQ_INT(off, want_off);
        CHECK_EQ_INT(ts, want_ts);
    }
}

/* The answers for the sample: below all, equal to the first, between, equal to later ones
 * (first of the tie), above all. */
static void check_sample_answers(const uint8_t *b, size_t len)
{
    check_find(b, len, INT64_MIN, 0, 500, 1000);
    check_find(b, len, 0, 0, 500, 1000);
    check_find(b, len, 990, 0, 500, 1000); /* 990 is the smallest, but 1000 comes first */
    check_find(b, len, 1000, 0, 500, 1000);
    check_find(b, len, 1001, 0, 501, 1005);
    check_find(b, len, 1003, 0, 501, 1005); /* 1003 (offset 505) is later than 1005 */
    check_find(b, len, 1005, 0, 501, 1005);
    check_find(b, len, 1006, 0, 503, 1010);
    check_find(b, len, 1010, 0, 503, 1010);
    check_find(b, len, 1011, ERR_NOTFOUND, 0, 0);
    check_find(b, len, INT64_MAX, ERR_NOTFOUND, 0, 0);
    check_max(b, len, 0, 503, 1010);
}

TEST(ts_find_uncompressed)
{
    size_t len;
    uint8_t *b = ts_batch(&len);

    REQUIRE(b != NULL);
    REQUIRE(record_batch_validate(b, len, NULL) == 0);
    check_sample_answers(b, len);
    /* A longer buffer than the batch is fine: only the batch is read. */
    {
        uint8_t *longer = malloc(len + 100);
        REQUIRE(longer != NULL);
        memcpy(longer, b, len);
        memset(longer + len, 0xee, 100);
        check_sample_answers(longer, len + 100);
        free(longer);
    }
    free(b);
}

TEST(ts_find_every_codec)
{
    size_t plain_len;
    uint8_t *plain = ts_batch(&plain_len);

    REQUIRE(plain != NULL);
    for (int v = 0; v < ZV_N; v++) {
        size_t len, out_len = 0;
        uint8_t *b = compress_batch((enum zvariant)v, plain, plain_len, &len), *out = NULL;
        struct record_batch hb;

        REQUIRE(b != NULL);
        if (v == ZV_ZSTD_NOSIZE)
            CHECK(ZSTD_getFrameContentSize(b + RECORD_BATCH_HEADER, len - RECORD_BATCH_HEADER) ==
                  ZSTD_CONTENTSIZE_UNKNOWN);
        CHECK_EQ_INT(record_batch_validate(b, len, &hb), 0);
        CHECK_EQ_INT(hb.attributes & RECORD_ATTR_COMPRESSION_MASK, zv_codec[v]);
        /* The section decompresses to exactly what was compressed. */
        CHECK_EQ_INT(record_decompress(zv_codec[v], b + RECORD_BATCH_HEADER,
                                       len - RECORD_BATCH_HEADER, RECORD_DECOMPRESS_MAX, &out,
                                       &out_len),
                     0);
        CHECK_EQ_INT(out_len, plain_len - RECORD_BATCH_HEADER);
        CHECK(out != NULL && out_len == plain_len - RECORD_BATCH_HEADER &&
              memcmp(out, plain + RECORD_BATCH_HEADER, out_len) == 0);
        free(out);
        check_sample_answers(b, len);
        free(b);
    }
    free(plain);
}

TEST(ts_max_ties_and_single_record)
{
    const struct record_input same[] = {
        {NULL, -1, NULL, -1, 7, 0, NULL},
        {NULL, -1, NULL, -1, 7, 0, NULL},
        {NULL, -1, NULL, -1, 7, 0, NULL},
    };
    const struct record_input peak_last[] = {
        {NULL, -1, NULL, -1, 50, 0, NULL},
        {NULL, -1, NULL, -1, -5, 0, NULL},
        {NULL, -1, NULL, -1, 51, 0, NULL},
    };
    struct record_build_options opt = {9, 0, -1, -1, -1, 0};
    uint8_t *b = NULL;
    size_t len;

    REQUIRE(record_batch_build(&opt, same, 3, &b, &len) == 0);
    check_max(b, len, 0, 9, 7);
    check_find(b, len, 7, 0, 9, 7);
    for (int v = 0; v < ZV_N; v++) {
        size_t clen;
        uint8_t *c = compress_batch((enum zvariant)v, b, len, &clen);
        REQUIRE(c != NULL);
        check_max(c, clen, 0, 9, 7);
        free(c);
    }
    free(b);

    REQUIRE(record_batch_build(&opt, peak_last, 3, &b, &len) == 0);
    check_max(b, len, 0, 11, 51);
    check_find(b, len, -100, 0, 9, 50);
    check_find(b, len, 51, 0, 11, 51);
    free(b);

    REQUIRE(record_batch_build(&opt, peak_last + 1, 1, &b, &len) == 0);
    check_max(b, len, 0, 9, -5);
    check_find(b, len, -5, 0, 9, -5);
    check_find(b, len, -4, ERR_NOTFOUND, 0, 0);
    free(b);
}

TEST(ts_log_append_time)
{
    size_t plain_len;
    uint8_t *plain = ts_batch(&plain_len);

    REQUIRE(plain != NULL);
    for (int v = -1; v < ZV_N; v++) {
        size_t len = plain_len;
        uint8_t *b = v < 0 ? plain : compress_batch((enum zvariant)v, plain, plain_len, &len);

        REQUIRE(b != NULL);
        record_batch_set_log_append_time(b, 2000);
        REQUIRE(record_batch_validate(b, len, NULL) == 0);
        /* Every record has timestamp 2000: the first record answers, whatever the deltas. */
        check_find(b, len, INT64_MIN, 0, 500, 2000);
        check_find(b, len, 1500, 0, 500, 2000);
        check_find(b, len, 2000, 0, 500, 2000);
        check_find(b, len, 2001, ERR_NOTFOUND, 0, 0);
        check_max(b, len, 0, 500, 2000);
        if (v >= 0)
            free(b);
    }
    free(plain);
}

TEST(ts_real_gzip_batch)
{
    /* Python's gzip module, not zlib from this process: three records, deltas 0, 10, 20. */
    uint8_t buf[RECORD_BATCH_HEADER + sizeof gzip_records];
    size_t len = make_gzip_batch(buf, gzip_records, sizeof gzip_records);

    check_find(buf, len, 1700000000000, 0, 0, 1700000000000);
    check_find(buf, len, 1700000000001, 0, 1, 1700000000010);
    check_find(buf, len, 1700000000015, 0, 2, 1700000000020);
    check_find(buf, len, 1700000000020, 0, 2, 1700000000020);
    check_find(buf, len, 1700000000021, ERR_NOTFOUND, 0, 0);
    check_max(buf, len, 0, 2, 1700000000020);
}

TEST(ts_batch_level_errors)
{
    size_t len;
    uint8_t *b = ts_batch(&len);
    int64_t off, ts;

    REQUIRE(b != NULL);
    /* Shorter than the batch, or than a header; not magic 2. */
    CHECK_EQ_INT(record_batch_find_timestamp(b, len - 1, RECORD_DECOMPRESS_MAX, 0, &off, &ts),
                 ERR_CORRUPT_MESSAGE);
    CHECK_EQ_INT(record_batch_max_timestamp(b, 10, RECORD_DECOMPRESS_MAX, &off, &ts),
                 ERR_CORRUPT_MESSAGE);
    b[16] = 1;
    CHECK_EQ_INT(record_batch_max_timestamp(b, len, RECORD_DECOMPRESS_MAX, &off, &ts),
                 ERR_CORRUPT_MESSAGE);
    b[16] = 2;
    /* Unknown codecs. */
    for (uint16_t codec = 5; codec <= 7; codec++) {
        put_be16(b + 21, codec);
        CHECK_EQ_INT(record_batch_find_timestamp(b, len, RECORD_DECOMPRESS_MAX, 0, &off, &ts),
                     ERR_INVALID_RECORD);
    }
    put_be16(b + 21, 0);
    /* More records announced than there are: the walk runs out. A find that stops before
     * still answers; the max walks everything. */
    put_be32(b + 57, 7);
    check_find(b, len, 1006, 0, 503, 1010);
    check_max(b, len, ERR_INVALID_RECORD, 0, 0);
    check_find(b, len, 5000, ERR_INVALID_RECORD, 0, 0);
    put_be32(b + 57, (uint32_t)-1);
    check_max(b, len, ERR_INVALID_RECORD, 0, 0);
    /* No records at all. */
    put_be32(b + 57, 0);
    check_find(b, len, 0, ERR_NOTFOUND, 0, 0);
    check_max(b, len, ERR_NOTFOUND, 0, 0);
    put_be32(b + 57, 6);
    /* A record length pointing past the end. */
    b[RECORD_BATCH_HEADER] = 0xfe; /* zigzag varint: about 1 MiB */
    b[RECORD_BATCH_HEADER + 1] = 0xff;
    b[RECORD_BATCH_HEADER + 2] = 0x7f;
    check_find(b, len, 0, ERR_INVALID_RECORD, 0, 0);
    b[RECORD_BATCH_HEADER] = 0x00; /* length 0: not even the attributes byte */
    check_find(b, len, 0, ERR_INVALID_RECORD, 0, 0);
    free(b);
}

TEST(decompress_none_and_unknown)
{
    static const uint8_t in[] = {1, 2, 3, 4, 5};
    uint8_t *out = NULL;
    size_t out_len = 99;

    CHECK_EQ_INT(record_decompress(0, in, sizeof in, 5, &out, &out_len), 0);
    CHECK(out != NULL && out_len == 5 && memcmp(out, in, 5) == 0);
    free(out);
    out = NULL;
    CHECK_EQ_INT(record_decompress(0, in, 0, 0, &out, &out_len), 0);
    CHECK(out != NULL && out_len == 0);
    free(out);
    out = NULL;
    CHECK_EQ_INT(record_decompress(0, in, sizeof in, 4, &out, &out_len), ERR_MESSAGE_TOO_LARGE);
    CHECK_EQ_INT(record_decompress(5, in, sizeof in, 100, &out, &out_len), ERR_INVALID_RECORD);
    CHECK_EQ_INT(record_decompress(-1, in, sizeof in, 100, &out, &out_len), ERR_INVALID_RECORD);
    /* Empty input is not a valid stream for any codec. */
    for (int codec = 1; codec <= 4; codec++)
        CHECK_EQ_INT(record_decompress(codec, in, 0, 100, &out, &out_len), ERR_INVALID_RECORD);
    CHECK(out == NULL);
}

TEST(decompress_corrupt_payloads)
{
    size_t plain_len;
    uint8_t *plain = ts_batch(&plain_len);

    REQUIRE(plain != NULL);
    for (int v = 0; v < ZV_N; v++) {
        size_t len, section, full = plain_len - RECORD_BATCH_HEADER;
        uint8_t *b = compress_batch((enum zvariant)v, plain, plain_len, &len), *cut;

        REQUIRE(b != NULL);
        section = len - RECORD_BATCH_HEADER;
        cut = malloc(len);
        REQUIRE(cut != NULL);
        /* Every truncation: an error, or (cut between gzip members or snappy-java blocks) a
         * shorter output — and either way the batch no longer walks. */
        for (size_t n = 0; n < section; n++) {
            uint8_t *out = NULL;
            size_t out_len = 0;
            int rc = record_decompress(zv_codec[v], b + RECORD_BATCH_HEADER, n,
                                       RECORD_DECOMPRESS_MAX, &out, &out_len);
            if (rc == 0) {
                CHECK(v == ZV_GZIP_2MEMBERS || v == ZV_SNAPPY_JAVA);
                CHECK(out_len < full);
                free(out);
            } else {
                CHECK_EQ_INT(rc, ERR_INVALID_RECORD);
            }
            memcpy(cut, b, RECORD_BATCH_HEADER + n);
            put_be32(cut + 8, (uint32_t)(RECORD_BATCH_HEADER + n - 12));
            check_max(cut, RECORD_BATCH_HEADER + n, ERR_INVALID_RECORD, 0, 0);
        }
        /* Every single-byte flip and every byte set to 0xff: whatever the codec's checks
         * catch or miss, the answer is a result or an error, never a crash (ASan watches). */
        for (size_t i = RECORD_BATCH_HEADER; i < len; i++) {
            for (int k = 0; k < 2; k++) {
                int64_t off, ts;
                int rc;
                memcpy(cut, b, len);
                cut[i] = k ? 0xff : (uint8_t)(cut[i] ^ (1u << (i % 8)));
                rc = record_batch_max_timestamp(cut, len, RECORD_DECOMPRESS_MAX, &off, &ts);
                CHECK(rc == 0 || rc == ERR_INVALID_RECORD || rc == ERR_NOTFOUND);
                rc = record_batch_find_timestamp(cut, len, RECORD_DECOMPRESS_MAX, 1006, &off, &ts);
                CHECK(rc == 0 || rc == ERR_INVALID_RECORD || rc == ERR_NOTFOUND);
            }
        }
        free(cut);
        free(b);
    }
    /* Random bytes: gzip, lz4 and zstd check their magic (snappy has none; no crash). */
    for (uint32_t seed = 1; seed <= 200; seed++) {
        uint8_t junk[300];
        size_t n = 1 + seed % sizeof junk;
        fill_random(junk, n, seed);
        for (int codec = 1; codec <= 4; codec++) {
            uint8_t *out = NULL;
            size_t out_len;
            int rc = record_decompress(codec, junk, n, 1 << 20, &out, &out_len);
            if (codec != 2)
                CHECK_EQ_INT(rc, ERR_INVALID_RECORD);
            if (rc == 0)
                free(out);
        }
    }
    /* Snappy whose length header claims 1 GiB: refused before anything is allocated. */
    {
        static const uint8_t liar[] = {0x80, 0x80, 0x80, 0x80, 0x04, 0x00};
        uint8_t *out = NULL;
        size_t out_len;
        CHECK_EQ_INT(record_decompress(2, liar, sizeof liar, RECORD_DECOMPRESS_MAX, &out, &out_len),
                     ERR_MESSAGE_TOO_LARGE);
    }
    /* A snappy-java header alone is an empty stream; a header cut short is not one. */
    {
        uint8_t hdr[16], *out = NULL;
        size_t out_len = 99;
        memcpy(hdr, "\x82SNAPPY\0", 8);
        put_be32(hdr + 8, 1);
        put_be32(hdr + 12, 1);
        CHECK_EQ_INT(record_decompress(2, hdr, 16, 10, &out, &out_len), 0);
        CHECK(out_len == 0);
        free(out);
        CHECK_EQ_INT(record_decompress(2, hdr, 12, 10, &out, &out_len), ERR_INVALID_RECORD);
    }
    free(plain);
}

TEST(decompress_bomb_bounded_by_max_out)
{
    const size_t n = (size_t)8 << 20;
    uint8_t *zeros = calloc(n, 1);

    REQUIRE(zeros != NULL);
    for (int v = 0; v < ZV_N; v++) {
        size_t clen, out_len;
        uint8_t *c = zcompress((enum zvariant)v, zeros, n, &clen), *out = NULL;

        REQUIRE(c != NULL);
        CHECK(clen < n / 20); /* a bomb indeed */
        CHECK_EQ_INT(record_decompress(zv_codec[v], c, clen, (size_t)1 << 20, &out, &out_len),
                     ERR_MESSAGE_TOO_LARGE);
        CHECK_EQ_INT(record_decompress(zv_codec[v], c, clen, n - 1, &out, &out_len),
                     ERR_MESSAGE_TOO_LARGE);
        CHECK_EQ_INT(record_decompress(zv_codec[v], c, clen, 0, &out, &out_len),
                     ERR_MESSAGE_TOO_LARGE);
        CHECK(out == NULL);
        CHECK_EQ_INT(record_decompress(zv_codec[v], c, clen, n, &out, &out_len), 0);
        CHECK(out != NULL && out_len == n && memcmp(out, zeros, n) == 0);
        free(out);
        free(c);
    }
    free(zeros);
}

/* A batch of one record whose value is value_len zero bytes, compressed as v. */
static uint8_t *big_batch(enum zvariant v, size_t value_len, size_t *len)
{
    uint8_t *value = calloc(value_len, 1), *plain = NULL, *b = NULL;
    struct record_input rec = {NULL, -1, value, (int32_t)value_len, 123, 0, NULL};
    struct record_build_options opt = {77, 0, -1, -1, -1, 0};
    size_t plain_len;

    if (value != NULL && record_batch_build(&opt, &rec, 1, &plain, &plain_len) == 0)
        b = compress_batch(v, plain, plain_len, len);
    free(plain);
    free(value);
    return b;
}

TEST(ts_batch_bomb_over_64mib)
{
    /* Records that decompress to just under RECORD_DECOMPRESS_MAX are read; just over, the
     * batch is refused rather than inflated further. One variant per codec, for time. */
    static const enum zvariant vs[] = {ZV_GZIP, ZV_SNAPPY_JAVA, ZV_LZ4, ZV_ZSTD_NOSIZE};
    for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++) {
        enum zvariant v = vs[i];
        size_t len;
        uint8_t *b = big_batch(v, RECORD_DECOMPRESS_MAX - 64, &len);

        REQUIRE(b != NULL);
        CHECK(len < RECORD_DECOMPRESS_MAX / 16); /* snappy: about 1/21, the others far less */
        check_find(b, len, 0, 0, 77, 123);
        free(b);
        b = big_batch(v, RECORD_DECOMPRESS_MAX, &len);
        REQUIRE(b != NULL);
        check_find(b, len, 0, ERR_INVALID_RECORD, 0, 0);
        check_max(b, len, ERR_INVALID_RECORD, 0, 0);
        free(b);
    }
}

/* ---- record_batch_check: compressed batches are checked on append (issue 7, defect 3) ---- */

/* record_batch_check with a generous bound. */
static int check_batch(const uint8_t *b, size_t len, struct record_scan *scan)
{
    struct record_batch hb;
    struct record_scan local;

    return record_batch_check(b, len, (size_t)1 << 20, &hb, scan ? scan : &local);
}

TEST(check_valid_batches_every_codec)
{
    size_t plain_len;
    uint8_t *plain = ts_batch(&plain_len);
    struct record_scan scan;

    REQUIRE(plain != NULL);
    CHECK_EQ_INT(check_batch(plain, plain_len, &scan), 0);
    CHECK_EQ_INT(scan.max_timestamp, 1010);
    CHECK_EQ_INT(scan.min_timestamp, 990);
    CHECK_EQ_INT(scan.records_size, plain_len - RECORD_BATCH_HEADER);
    for (int v = 0; v < ZV_N; v++) {
        size_t len;
        uint8_t *b = compress_batch((enum zvariant)v, plain, plain_len, &len);
        REQUIRE(b != NULL);
        memset(&scan, 0, sizeof scan);
        CHECK_EQ_INT(check_batch(b, len, &scan), 0);
        CHECK_EQ_INT(scan.max_timestamp, 1010);
        CHECK_EQ_INT(scan.min_timestamp, 990);
        CHECK_EQ_INT(scan.records_size, plain_len - RECORD_BATCH_HEADER);
        free(b);
    }
    free(plain);
}

TEST(check_compressed_garbage_refused)
{
    uint8_t buf[RECORD_BATCH_HEADER + sizeof gzip_records];
    size_t len = make_gzip_batch(buf, gzip_records, sizeof gzip_records);

    CHECK_EQ_INT(check_batch(buf, len, NULL), 0); /* the real gzip batch of 3 records */
    for (size_t i = 0; i < sizeof gzip_records; i++)
        buf[RECORD_BATCH_HEADER + i] = (uint8_t)(i * 37 + 11);
    for (int codec = 1; codec <= 4; codec++) {
        put_be16(buf + 21, (uint16_t)codec);
        fix_crc(buf);
        /* Under a good CRC, but the stream does not decode (or, for snappy without a magic,
         * decodes to something that is not 3 records). */
        int rc = check_batch(buf, len, NULL);
        CHECK(rc == ERR_CORRUPT_MESSAGE || (codec == 2 && rc == ERR_INVALID_RECORD));
    }
}

TEST(check_compressed_count_mismatch_refused)
{
    uint8_t buf[RECORD_BATCH_HEADER + sizeof gzip_records];
    size_t len = make_gzip_batch(buf, gzip_records, sizeof gzip_records);

    /* 3 records, the header claims 7 (a consistent lastOffsetDelta of 6). */
    put_be32(buf + 23, 6);
    put_be32(buf + 57, 7);
    fix_crc(buf);
    CHECK_EQ_INT(record_batch_validate(buf, len, NULL), 0); /* the header alone is fine */
    CHECK_EQ_INT(check_batch(buf, len, NULL), ERR_INVALID_RECORD);
    /* Fewer than there are: the records left over are trailing bytes. */
    put_be32(buf + 23, 1);
    put_be32(buf + 57, 2);
    fix_crc(buf);
    CHECK_EQ_INT(check_batch(buf, len, NULL), ERR_INVALID_RECORD);
}

TEST(check_count_int32_max_refused)
{
    size_t plain_len;
    uint8_t *plain = ts_batch(&plain_len);

    REQUIRE(plain != NULL);
    /* recordCount 2^31-1 and lastOffsetDelta 2^31-2 would move the log end by 2^31-1. */
    put_be32(plain + 23, INT32_MAX - 1);
    put_be32(plain + 57, INT32_MAX);
    fix_crc(plain);
    CHECK_EQ_INT(check_batch(plain, plain_len, NULL), ERR_INVALID_RECORD);
    for (int v = 0; v < ZV_N; v++) {
        size_t len;
        uint8_t *b = compress_batch((enum zvariant)v, plain, plain_len, &len);
        REQUIRE(b != NULL);
        CHECK_EQ_INT(record_batch_validate(b, len, NULL), 0);
        CHECK_EQ_INT(check_batch(b, len, NULL), ERR_INVALID_RECORD);
        free(b);
    }
    /* A lastOffsetDelta that does not match the count is refused from the header. */
    put_be32(plain + 57, 6);
    fix_crc(plain);
    CHECK_EQ_INT(check_batch(plain, plain_len, NULL), ERR_INVALID_RECORD);
    free(plain);
}

TEST(check_empty_compressed_stream_refused)
{
    uint8_t hdr[RECORD_BATCH_HEADER];
    uint8_t empty_gzip[64];
    size_t n;

    /* No bytes at all under each codec. */
    for (int codec = 1; codec <= 4; codec++) {
        make_gzip_batch(hdr, NULL, 0);
        put_be16(hdr + 21, (uint16_t)codec);
        fix_crc(hdr);
        CHECK_EQ_INT(check_batch(hdr, sizeof hdr, NULL), ERR_CORRUPT_MESSAGE);
    }
    /* A well-formed gzip stream of nothing, under a header that claims 3 records. */
    n = gzip_member((const uint8_t *)"", 0, empty_gzip, sizeof empty_gzip);
    REQUIRE(n > 0);
    {
        uint8_t buf[RECORD_BATCH_HEADER + sizeof empty_gzip];
        size_t len = make_gzip_batch(buf, empty_gzip, n);
        CHECK_EQ_INT(check_batch(buf, len, NULL), ERR_INVALID_RECORD);
    }
}

TEST(check_compressed_trailing_bytes_and_offset_deltas)
{
    size_t plain_len;
    uint8_t *plain = ts_batch(&plain_len), *longer;

    REQUIRE(plain != NULL);
    /* The records followed by 3 stray bytes, inside the compressed stream. */
    longer = malloc(plain_len + 3);
    REQUIRE(longer != NULL);
    memcpy(longer, plain, plain_len);
    memcpy(longer + plain_len, "xyz", 3);
    put_be32(longer + 8, (uint32_t)(plain_len + 3 - 12));
    fix_crc(longer);
    CHECK_EQ_INT(check_batch(longer, plain_len + 3, NULL), ERR_INVALID_RECORD);
    for (int v = 0; v < ZV_N; v++) {
        size_t len;
        uint8_t *b = compress_batch((enum zvariant)v, longer, plain_len + 3, &len);
        REQUIRE(b != NULL);
        CHECK_EQ_INT(check_batch(b, len, NULL), ERR_INVALID_RECORD);
        free(b);
    }
    free(longer);
    /* Record 0 says offsetDelta 1 (its varint is the fourth byte: length, attributes,
     * timestampDelta 0, offsetDelta). */
    REQUIRE(plain[RECORD_BATCH_HEADER + 2] == 0 && plain[RECORD_BATCH_HEADER + 3] == 0);
    plain[RECORD_BATCH_HEADER + 3] = 2; /* zigzag 1 */
    fix_crc(plain);
    CHECK_EQ_INT(check_batch(plain, plain_len, NULL), ERR_INVALID_RECORD);
    for (int v = 0; v < ZV_N; v++) {
        size_t len;
        uint8_t *b = compress_batch((enum zvariant)v, plain, plain_len, &len);
        REQUIRE(b != NULL);
        CHECK_EQ_INT(check_batch(b, len, NULL), ERR_INVALID_RECORD);
        free(b);
    }
    free(plain);
}

TEST(check_bomb_stopped_at_bound)
{
    /* 8 MiB of zeros in one record compresses to a few KiB: refused at a 1 MiB bound without
     * decoding (or allocating) more than the bound; taken with a bound that fits. */
    for (int v = 0; v < ZV_N; v++) {
        size_t len;
        struct record_batch hb;
        struct record_scan scan;
        uint8_t *b = big_batch((enum zvariant)v, (size_t)8 << 20, &len);

        REQUIRE(b != NULL);
        CHECK(len < ((size_t)8 << 20) / 20);
        CHECK_EQ_INT(record_batch_check(b, len, (size_t)1 << 20, &hb, &scan),
                     ERR_MESSAGE_TOO_LARGE);
        CHECK_EQ_INT(record_batch_check(b, len, (size_t)9 << 20, &hb, &scan), 0);
        CHECK(scan.records_size > ((size_t)8 << 20));
        free(b);
    }
    /* Uncompressed records count against the bound too. */
    {
        size_t plain_len;
        uint8_t *plain = ts_batch(&plain_len);
        struct record_batch hb;
        struct record_scan scan;
        REQUIRE(plain != NULL);
        CHECK_EQ_INT(
            record_batch_check(plain, plain_len, plain_len - RECORD_BATCH_HEADER - 1, &hb, &scan),
            ERR_MESSAGE_TOO_LARGE);
        CHECK_EQ_INT(
            record_batch_check(plain, plain_len, plain_len - RECORD_BATCH_HEADER, &hb, &scan), 0);
        free(plain);
    }
}

/* A batch of n one-byte records with the given timestamps. */
static uint8_t *batch_with_timestamps(const int64_t *ts, int32_t n, size_t *len)
{
    struct record_input recs[8];
    struct record_build_options opt = {0, 0, -1, -1, -1, 0};
    uint8_t *buf = NULL;

    for (int32_t i = 0; i < n; i++)
        recs[i] = (struct record_input){NULL, -1, (const uint8_t *)"v", 1, ts[i], 0, NULL};
    return record_batch_build(&opt, recs, n, &buf, len) == 0 ? buf : NULL;
}

TEST(check_scan_timestamps_and_overflow)
{
    struct record_scan scan;
    size_t len;
    uint8_t *b;

    /* -1 (no timestamp) is left out of the minimum; the maximum starts at -1, as Kafka's. */
    {
        static const int64_t ts[] = {-1, 50, 20};
        b = batch_with_timestamps(ts, 3, &len);
        REQUIRE(b != NULL);
        CHECK_EQ_INT(check_batch(b, len, &scan), 0);
        CHECK_EQ_INT(scan.max_timestamp, 50);
        CHECK_EQ_INT(scan.min_timestamp, 20);
        free(b);
    }
    {
        static const int64_t ts[] = {-1, -1};
        b = batch_with_timestamps(ts, 2, &len);
        REQUIRE(b != NULL);
        CHECK_EQ_INT(check_batch(b, len, &scan), 0);
        CHECK_EQ_INT(scan.max_timestamp, -1);
        CHECK(scan.min_timestamp == INT64_MAX);
        free(b);
    }
    /* baseTimestamp INT64_MIN is a timestamp like another (the broker refuses it by range). */
    {
        static const int64_t ts[] = {INT64_MIN, INT64_MIN + 5};
        b = batch_with_timestamps(ts, 2, &len);
        REQUIRE(b != NULL);
        CHECK_EQ_INT(check_batch(b, len, &scan), 0);
        CHECK(scan.min_timestamp == INT64_MIN);
        CHECK(scan.max_timestamp == -1);
        /* A delta that carries the sum past INT64_MAX is not a timestamp. */
        put_be64(b + 27, (uint64_t)INT64_MAX);
        fix_crc(b);
        CHECK_EQ_INT(check_batch(b, len, &scan), ERR_INVALID_RECORD);
        free(b);
    }
}

TEST(patch_max_timestamp_keeps_crc)
{
    size_t len;
    uint8_t *b = ts_batch(&len);
    struct record_batch hb;

    REQUIRE(b != NULL);
    record_batch_set_max_timestamp(b, 0x0400 | 0, 1010); /* stray bit 10 kept as asked */
    CHECK_EQ_INT(record_batch_validate(b, len, &hb), 0);
    CHECK_EQ_INT(hb.max_timestamp, 1010);
    CHECK_EQ_INT(hb.attributes, 0x0400);
    record_batch_set_max_timestamp(b, 0, -1);
    CHECK_EQ_INT(record_batch_validate(b, len, &hb), 0);
    CHECK_EQ_INT(hb.max_timestamp, -1);
    CHECK_EQ_INT(hb.attributes, 0);
    free(b);
}

TEST(last_offset_of_damaged_header_wraps)
{
    /* A file's baseOffset near INT64_MAX plus lastOffsetDelta: no signed overflow (UBSan
     * aborts on one); the wrapped value is for the caller's offset checks to refuse. */
    struct record_batch b = {.base_offset = INT64_MAX, .last_offset_delta = 5};

    CHECK(record_batch_last_offset(&b) == INT64_MIN + 4);
    b.base_offset = 100;
    CHECK_EQ_INT(record_batch_last_offset(&b), 105);
}

/* ---- record_iter -------------------------------------------------------------------------- */

/* What sample_batch holds, record by record. */
static void check_sample_item(const struct record_item *r, int i, bool log_append_time)
{
    static const int64_t ts[] = {1000, 1001, 999};
    struct record_header_iter hi;
    struct record_header_view h;

    CHECK_EQ_INT(r->offset, 100 + i);
    CHECK_EQ_INT(r->offset_delta, i);
    CHECK_EQ_INT(r->timestamp, log_append_time ? 5000 : ts[i]);
    record_header_first(r, &hi);
    switch (i) {
    case 0:
        CHECK(bytes_eq(r->key, r->key_len, "k0", 2));
        CHECK(bytes_eq(r->value, r->value_len, "v0", 2));
        CHECK_EQ_INT(r->header_count, 0);
        CHECK_EQ_INT(record_header_next(&hi, &h), ERR_NOTFOUND);
        break;
    case 1:
        CHECK(r->key == NULL && r->key_len == -1);
        CHECK(bytes_eq(r->value, r->value_len, "value-1", 7));
        CHECK_EQ_INT(r->header_count, 2);
        REQUIRE(record_header_next(&hi, &h) == 0);
        CHECK(bytes_eq(h.key, h.key_len, "trace", 5));
        CHECK(bytes_eq(h.value, h.value_len, "abc", 3));
        REQUIRE(record_header_next(&hi, &h) == 0);
        CHECK(bytes_eq(h.key, h.key_len, "empty", 5));
        CHECK(h.value == NULL && h.value_len == -1);
        CHECK_EQ_INT(record_header_next(&hi, &h), ERR_NOTFOUND);
        CHECK_EQ_INT(record_header_next(&hi, &h), ERR_NOTFOUND);
        break;
    default:
        CHECK(bytes_eq(r->key, r->key_len, "k2", 2));
        CHECK(r->value == NULL && r->value_len == -1);
        CHECK_EQ_INT(r->header_count, 0);
        break;
    }
}

/* Iterates the whole of a sample batch (any codec): three records as built, then the end,
 * and the raw records back to back are the uncompressed section. */
static void check_sample_iter(const uint8_t *b, size_t len, const uint8_t *plain_section,
                              size_t section_len, bool log_append_time)
{
    struct record_iter it;
    struct record_item r;
    size_t at = 0;

    REQUIRE(record_iter_init(&it, b, len, RECORD_DECOMPRESS_MAX) == 0);
    CHECK_EQ_INT(it.batch.base_offset, 100);
    CHECK_EQ_INT(it.batch.producer_id, 4000);
    for (int i = 0; i < 3; i++) {
        REQUIRE(record_iter_next(&it, &r) == 0);
        check_sample_item(&r, i, log_append_time);
        CHECK(at + r.raw_len <= section_len && memcmp(r.raw, plain_section + at, r.raw_len) == 0);
        at += r.raw_len;
    }
    CHECK_EQ_INT(at, section_len);
    CHECK_EQ_INT(record_iter_next(&it, &r), ERR_NOTFOUND);
    CHECK_EQ_INT(record_iter_next(&it, &r), ERR_NOTFOUND);
    record_iter_close(&it);
    record_iter_close(&it); /* idempotent */
}

TEST(iter_uncompressed_fields)
{
    size_t len;
    uint8_t *b = sample_batch(&len);

    REQUIRE(b != NULL);
    check_sample_iter(b, len, b + RECORD_BATCH_HEADER, len - RECORD_BATCH_HEADER, false);
    free(b);
}

TEST(iter_every_codec)
{
    size_t plain_len;
    uint8_t *plain = sample_batch(&plain_len);

    REQUIRE(plain != NULL);
    for (int v = 0; v < ZV_N; v++) {
        size_t len, section = plain_len - RECORD_BATCH_HEADER;
        uint8_t *b = compress_batch((enum zvariant)v, plain, plain_len, &len);
        struct record_iter it;
        struct record_item r;

        REQUIRE(b != NULL);
        CHECK_EQ_INT(record_batch_validate(b, len, NULL), 0);
        check_sample_iter(b, len, plain + RECORD_BATCH_HEADER, section, false);
        /* The bound is the decompressed size: one byte short is refused, exact is fine. */
        CHECK_EQ_INT(record_iter_init(&it, b, len, section - 1), ERR_MESSAGE_TOO_LARGE);
        CHECK_EQ_INT(record_iter_next(&it, &r), ERR_MESSAGE_TOO_LARGE);
        record_iter_close(&it);
        CHECK_EQ_INT(record_iter_init(&it, b, len, section), 0);
        record_iter_close(&it);
        /* LogAppendTime: every record carries maxTimestamp, compressed or not. */
        record_batch_set_log_append_time(b, 5000);
        check_sample_iter(b, len, plain + RECORD_BATCH_HEADER, section, true);
        /* A damaged stream (bytes of the payload flipped) does not decode. */
        for (size_t i = RECORD_BATCH_HEADER; i < len; i++)
            b[i] ^= 0x5a;
        int rc = record_iter_init(&it, b, len, RECORD_DECOMPRESS_MAX);
        if (rc == 0) { /* snappy has no checksum: then the records do not walk */
            while ((rc = record_iter_next(&it, &r)) == 0)
                ;
        }
        CHECK(rc == ERR_INVALID_RECORD || rc == ERR_MESSAGE_TOO_LARGE);
        record_iter_close(&it);
        free(b);
    }
    free(plain);
}

/* A v2 header for hand-made records: base offset 10, base timestamp 1000, count records,
 * lastOffsetDelta last_delta, codec; the section follows. */
static uint8_t *raw_batch(const uint8_t *section, size_t n, int32_t count, int32_t last_delta,
                          int codec, size_t *len)
{
    uint8_t *b = calloc(1, RECORD_BATCH_HEADER + n + 1);

    if (b == NULL)
        return NULL;
    put_be64(b, 10);
    put_be32(b + 8, (uint32_t)(RECORD_BATCH_HEADER + n - 12));
    b[16] = 2;
    put_be16(b + 21, (uint16_t)codec);
    put_be32(b + 23, (uint32_t)last_delta);
    put_be64(b + 27, 1000);
    put_be64(b + 35, 1000);
    put_be64(b + 43, (uint64_t)-1);
    put_be16(b + 51, (uint16_t)-1);
    put_be32(b + 53, (uint32_t)-1);
    put_be32(b + 57, (uint32_t)count);
    if (n > 0)
        memcpy(b + RECORD_BATCH_HEADER, section, n);
    fix_crc(b);
    *len = RECORD_BATCH_HEADER + n;
    return b;
}

/* Iterates a hand-made batch to its end: the records yielded and the final code. */
static int iter_all(const uint8_t *section, size_t n, int32_t count, int32_t last_delta,
                    int *yielded)
{
    size_t len;
    uint8_t *b = raw_batch(section, n, count, last_delta, 0, &len);
    struct record_iter it;
    struct record_item r;
    int rc;

    *yielded = 0;
    if (b == NULL)
        return ERR_NOMEM;
    rc = record_iter_init(&it, b, len, RECORD_DECOMPRESS_MAX);
    while (rc == 0 && (rc = record_iter_next(&it, &r)) == 0)
        (*yielded)++;
    /* The error sticks. */
    if (rc != 0 && record_iter_next(&it, &r) != rc)
        rc = -12345;
    record_iter_close(&it);
    free(b);
    return rc;
}

TEST(iter_holes_and_empty_batch)
{
    /* Records at deltas 0, 2 and 5 of a batch whose lastOffsetDelta is 6: what the cleaner
     * leaves. Record: len, attr, tsDelta, offsetDelta, key -1, value "v", 0 headers. */
    const uint8_t holes[] = {0x0e, 0, 0x02, 0x00, 0x01, 0x02, 'v', 0x00,
                             0x0e, 0, 0x04, 0x04, 0x01, 0x02, 'w', 0x00,
                             0x0e, 0, 0x06, 0x0a, 0x01, 0x02, 'x', 0x00};
    const int64_t want_off[] = {10, 12, 15}, want_ts[] = {1001, 1002, 1003};
    size_t len;
    uint8_t *b = raw_batch(holes, sizeof holes, 3, 6, 0, &len);
    struct record_iter it;
    struct record_item r;
    int yielded;

    REQUIRE(b != NULL);
    REQUIRE(record_iter_init(&it, b, len, 0) == 0); /* uncompressed: the bound is not used */
    for (int i = 0; i < 3; i++) {
        REQUIRE(record_iter_next(&it, &r) == 0);
        CHECK_EQ_INT(r.offset, want_off[i]);
        CHECK_EQ_INT(r.timestamp, want_ts[i]);
        CHECK(r.key == NULL && r.key_len == -1 && r.value_len == 1 && r.value[0] == "vwx"[i]);
        CHECK(r.raw == b + RECORD_BATCH_HEADER + 8 * i && r.raw_len == 8);
    }
    CHECK_EQ_INT(record_iter_next(&it, &r), ERR_NOTFOUND);
    record_iter_close(&it);
    free(b);

    /* A delta past lastOffsetDelta (5 > 4), or not growing, is malformed. */
    CHECK_EQ_INT(iter_all(holes, sizeof holes, 3, 4, &yielded), ERR_INVALID_RECORD);
    CHECK_EQ_INT(yielded, 2);
    {
        uint8_t dup[sizeof holes];
        memcpy(dup, holes, sizeof holes);
        dup[11] = 0x00; /* second record's offsetDelta 0 again */
        CHECK_EQ_INT(iter_all(dup, sizeof dup, 3, 6, &yielded), ERR_INVALID_RECORD);
        CHECK_EQ_INT(yielded, 1);
    }
    /* An empty batch (a producer's last batch, all records cleaned) ends at once; bytes in
     * it are malformed. */
    CHECK_EQ_INT(iter_all(NULL, 0, 0, 6, &yielded), ERR_NOTFOUND);
    CHECK_EQ_INT(yielded, 0);
    CHECK_EQ_INT(iter_all(holes, 8, 0, 6, &yielded), ERR_INVALID_RECORD);
}

TEST(iter_malformed_records)
{
    /* One good record: value "v", no key, no headers. */
    const uint8_t good[] = {0x0e, 0, 0x00, 0x00, 0x01, 0x02, 'v', 0x00};
    const uint8_t neg_headers[] = {0x0e, 0, 0x00, 0x00, 0x01, 0x02, 'v', 0x01};
    const uint8_t null_hdr_key[] = {0x12, 0, 0x00, 0x00, 0x01, 0x02, 'v', 0x02, 0x01, 0x01};
    const uint8_t hdr_ok[] = {0x12, 0, 0x00, 0x00, 0x01, 0x02, 'v', 0x02, 0x00, 0x01};
    const uint8_t too_long[] = {0x7e, 0, 0x00, 0x00, 0x01, 0x02, 'v', 0x00};
    const uint8_t zero_len[] = {0x00};
    const uint8_t slack[] = {0x10, 0, 0x00, 0x00, 0x01, 0x02, 'v', 0x00, 0x00};
    const uint8_t key_past[] = {0x0e, 0, 0x00, 0x00, 0x20, 0x02, 'v', 0x00};
    const uint8_t value_neg2[] = {0x0e, 0, 0x00, 0x00, 0x01, 0x03, 'v', 0x00};
    const uint8_t bad_varint[] = {0x0e, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    uint8_t trailing[sizeof good + 1];
    int yielded;

    CHECK_EQ_INT(iter_all(good, sizeof good, 1, 0, &yielded), ERR_NOTFOUND);
    CHECK_EQ_INT(yielded, 1);
    CHECK_EQ_INT(iter_all(hdr_ok, sizeof hdr_ok, 1, 0, &yielded), ERR_NOTFOUND);
    CHECK_EQ_INT(iter_all(neg_headers, sizeof neg_headers, 1, 0, &yielded), ERR_INVALID_RECORD);
    CHECK_EQ_INT(iter_all(null_hdr_key, sizeof null_hdr_key, 1, 0, &yielded), ERR_INVALID_RECORD);
    CHECK_EQ_INT(iter_all(too_long, sizeof too_long, 1, 0, &yielded), ERR_INVALID_RECORD);
    CHECK_EQ_INT(iter_all(zero_len, sizeof zero_len, 1, 0, &yielded), ERR_INVALID_RECORD);
    CHECK_EQ_INT(iter_all(slack, sizeof slack, 1, 0, &yielded), ERR_INVALID_RECORD);
    CHECK_EQ_INT(iter_all(key_past, sizeof key_past, 1, 0, &yielded), ERR_INVALID_RECORD);
    CHECK_EQ_INT(iter_all(value_neg2, sizeof value_neg2, 1, 0, &yielded), ERR_INVALID_RECORD);
    CHECK_EQ_INT(iter_all(bad_varint, sizeof bad_varint, 1, 0, &yielded), ERR_INVALID_RECORD);
    /* recordCount says two, there is one; or one, and a byte follows it. */
    CHECK_EQ_INT(iter_all(good, sizeof good, 2, 1, &yielded), ERR_INVALID_RECORD);
    CHECK_EQ_INT(yielded, 1);
    memcpy(trailing, good, sizeof good);
    trailing[sizeof good] = 0;
    CHECK_EQ_INT(iter_all(trailing, sizeof trailing, 1, 0, &yielded), ERR_INVALID_RECORD);
    CHECK_EQ_INT(yielded, 1);

    /* Every truncation of the sample's section (recordCount still 3) is malformed, never a
     * short success. */
    {
        size_t len;
        uint8_t *b = sample_batch(&len);
        REQUIRE(b != NULL);
        for (size_t n = 0; n < len - RECORD_BATCH_HEADER; n++) {
            int rc = iter_all(b + RECORD_BATCH_HEADER, n, 3, 2, &yielded);
            CHECK_EQ_INT(rc, ERR_INVALID_RECORD);
            CHECK(yielded < 3);
        }
        free(b);
    }
}

TEST(iter_header_errors_and_compressed_bad_records)
{
    const uint8_t good[] = {0x0e, 0, 0x00, 0x00, 0x01, 0x02, 'v', 0x00};
    uint8_t dup[2 * sizeof good], *b, *c;
    size_t len, clen;
    struct record_iter it;
    struct record_item r;

    b = raw_batch(good, sizeof good, 1, 0, 0, &len);
    REQUIRE(b != NULL);
    /* Shorter than the batch, another magic, an unknown codec, a negative count. */
    CHECK_EQ_INT(record_iter_init(&it, b, len - 1, RECORD_DECOMPRESS_MAX), ERR_TRUNCATED);
    record_iter_close(&it);
    b[16] = 1;
    CHECK_EQ_INT(record_iter_init(&it, b, len, RECORD_DECOMPRESS_MAX),
                 ERR_UNSUPPORTED_FOR_MESSAGE_FORMAT);
    CHECK_EQ_INT(record_iter_next(&it, &r), ERR_UNSUPPORTED_FOR_MESSAGE_FORMAT);
    b[16] = 2;
    put_be16(b + 21, 6);
    CHECK_EQ_INT(record_iter_init(&it, b, len, RECORD_DECOMPRESS_MAX), ERR_INVALID_RECORD);
    put_be16(b + 21, 0);
    put_be32(b + 57, (uint32_t)-1);
    CHECK_EQ_INT(record_iter_init(&it, b, len, RECORD_DECOMPRESS_MAX), ERR_INVALID_RECORD);
    free(b);

    /* A compressed section that decodes to records that do not walk (two at delta 0). */
    memcpy(dup, good, sizeof good);
    memcpy(dup + sizeof good, good, sizeof good);
    c = zcompress(ZV_ZSTD, dup, sizeof dup, &clen);
    REQUIRE(c != NULL);
    b = raw_batch(c, clen, 2, 1, RECORD_CODEC_ZSTD, &len);
    free(c);
    REQUIRE(b != NULL);
    REQUIRE(record_iter_init(&it, b, len, RECORD_DECOMPRESS_MAX) == 0);
    CHECK_EQ_INT(record_iter_next(&it, &r), 0);
    CHECK_EQ_INT(record_iter_next(&it, &r), ERR_INVALID_RECORD);
    record_iter_close(&it);
    free(b);
}

TEST(iter_control_batch)
{
    uint8_t *b = NULL;
    size_t len;
    struct record_iter it;
    struct record_item r;

    REQUIRE(record_build_control(77, 2, 9, RECORD_CONTROL_COMMIT, 1234, &b, &len) == 0);
    REQUIRE(record_iter_init(&it, b, len, RECORD_DECOMPRESS_MAX) == 0);
    CHECK(it.batch.attributes & RECORD_ATTR_CONTROL);
    REQUIRE(record_iter_next(&it, &r) == 0);
    CHECK_EQ_INT(r.key_len, 4);
    CHECK_EQ_INT(r.value_len, 6);
    CHECK_EQ_INT(r.key[3], RECORD_CONTROL_COMMIT);
    CHECK_EQ_INT(r.timestamp, 1234);
    CHECK_EQ_INT(record_iter_next(&it, &r), ERR_NOTFOUND);
    record_iter_close(&it);
    free(b);
}

TEST(check_scan_sees_null_keys_compressed_or_not)
{
    size_t len, klen;
    uint8_t *with_null = sample_batch(&len), *keyed = ts_batch(&klen);
    struct record_batch b;
    struct record_scan scan;

    REQUIRE(with_null != NULL && keyed != NULL);
    REQUIRE(record_batch_check(with_null, len, 1 << 20, &b, &scan) == 0);
    CHECK(scan.null_key);
    REQUIRE(record_batch_check(keyed, klen, 1 << 20, &b, &scan) == 0);
    CHECK(!scan.null_key);
    for (int v = 0; v < ZV_N; v++) {
        size_t clen;
        uint8_t *c = compress_batch((enum zvariant)v, with_null, len, &clen);
        REQUIRE(c != NULL);
        CHECK_EQ_INT(record_batch_check(c, clen, 1 << 20, &b, &scan), 0);
        CHECK(scan.null_key);
        free(c);
        c = compress_batch((enum zvariant)v, keyed, klen, &clen);
        REQUIRE(c != NULL);
        CHECK_EQ_INT(record_batch_check(c, clen, 1 << 20, &b, &scan), 0);
        CHECK(!scan.null_key);
        free(c);
    }
    free(with_null);
    free(keyed);
}

TEST(validate_stored_accepts_holes_and_empty_batches)
{
    /* What the cleaner leaves: deltas 0, 2, 5 of lastOffsetDelta 6; an empty batch. */
    const uint8_t holes[] = {0x0e, 0, 0x02, 0x00, 0x01, 0x02, 'v', 0x00,
                             0x0e, 0, 0x04, 0x04, 0x01, 0x02, 'w', 0x00,
                             0x0e, 0, 0x06, 0x0a, 0x01, 0x02, 'x', 0x00};
    size_t len;
    uint8_t *b = raw_batch(holes, sizeof holes, 3, 6, 0, &len);
    struct record_batch h;

    REQUIRE(b != NULL);
    CHECK_EQ_INT(record_batch_validate_stored(b, len, &h), 0);
    CHECK(record_batch_validate(b, len, NULL) != 0); /* a producer may not send it */
    b[RECORD_BATCH_HEADER + 19] = 0x0c;              /* third delta 6: the last offset itself */
    fix_crc(b);
    CHECK_EQ_INT(record_batch_validate_stored(b, len, NULL), 0);
    b[RECORD_BATCH_HEADER + 19] = 0x0e; /* delta 7 > lastOffsetDelta 6 */
    fix_crc(b);
    CHECK_EQ_INT(record_batch_validate_stored(b, len, NULL), ERR_INVALID_RECORD);
    b[RECORD_BATCH_HEADER + 19] = 0x0a;
    fix_crc(b);
    b[30] ^= 1; /* baseTimestamp is under the CRC */
    CHECK_EQ_INT(record_batch_validate_stored(b, len, NULL), ERR_CORRUPT_MESSAGE);
    free(b);
    /* 4 records claimed with lastOffsetDelta 2: more records than offsets. */
    b = raw_batch(holes, sizeof holes, 4, 2, 0, &len);
    REQUIRE(b != NULL);
    CHECK_EQ_INT(record_batch_validate_stored(b, len, NULL), ERR_INVALID_RECORD);
    free(b);
    b = raw_batch(NULL, 0, 0, 6, 0, &len);
    REQUIRE(b != NULL);
    CHECK_EQ_INT(record_batch_validate_stored(b, len, &h), 0);
    CHECK_EQ_INT(h.record_count, 0);
    free(b);
}

/* ---- record_compress / record_batch_recompress (compression.type, issue 12) -------------- */

TEST(compress_round_trip_every_codec)
{
    size_t n = 200000; /* several snappy-java blocks and lz4 blocks */
    uint8_t *in = malloc(n);
    REQUIRE(in != NULL);
    for (size_t i = 0; i < n; i++)
        in[i] = (uint8_t)((i * 7) % 13 + (i % 1000 == 0 ? i / 1000 : 0));
    for (int codec = 0; codec <= 4; codec++) {
        uint8_t *c = NULL, *d = NULL;
        size_t clen = 0, dlen = 0;
        CHECK_EQ_INT(record_compress(codec, in, n, &c, &clen), 0);
        REQUIRE(c != NULL);
        if (codec != 0)
            CHECK(clen < n / 2);
        CHECK_EQ_INT(record_decompress(codec, c, clen, n, &d, &dlen), 0);
        CHECK_EQ_INT(dlen, n);
        CHECK(d && memcmp(d, in, n) == 0);
        free(d);
        free(c);
        /* An empty input compresses to a stream that decodes to nothing. */
        CHECK_EQ_INT(record_compress(codec, in, 0, &c, &clen), 0);
        if (codec != 0 && codec != 4) { /* an empty zstd stream is refused by design */
            CHECK_EQ_INT(record_decompress(codec, c, clen, 10, &d, &dlen), 0);
            CHECK_EQ_INT(dlen, 0);
            free(d);
        }
        free(c);
    }
    /* snappy is written framed as snappy-java does. */
    {
        uint8_t *c;
        size_t clen;
        CHECK_EQ_INT(record_compress(2, in, 100, &c, &clen), 0);
        CHECK(clen > 16 && memcmp(c, "\x82SNAPPY\0", 8) == 0);
        free(c);
    }
    CHECK_EQ_INT(record_compress(5, in, 10, NULL, NULL), ERR_INVALID_RECORD);
    free(in);
}

TEST(codec_names)
{
    CHECK_EQ_INT(record_codec_by_name("gzip"), 1);
    CHECK_EQ_INT(record_codec_by_name("snappy"), 2);
    CHECK_EQ_INT(record_codec_by_name("lz4"), 3);
    CHECK_EQ_INT(record_codec_by_name("zstd"), 4);
    CHECK_EQ_INT(record_codec_by_name("uncompressed"), 0);
    CHECK_EQ_INT(record_codec_by_name("none"), 0);
    CHECK_EQ_INT(record_codec_by_name("producer"), -1);
    CHECK_EQ_INT(record_codec_by_name("ZSTD"), -1);
    CHECK_EQ_INT(record_codec_by_name(NULL), -1);
    CHECK_EQ_STR(record_codec_name(4), "zstd");
    CHECK(record_codec_name(5) == NULL);
}

/* Every codec to every codec: the rewritten batch passes the broker's checks, carries the
 * new codec, and its records (and every header field but codec, length and CRC) are the
 * original's. */
TEST(recompress_every_pair)
{
    size_t plain_len;
    uint8_t *plain = ts_batch(&plain_len);
    REQUIRE(plain != NULL);
    for (int v = -1; v < ZV_N; v++) {
        size_t len;
        uint8_t *src = v < 0 ? plain : compress_batch((enum zvariant)v, plain, plain_len, &len);
        if (v < 0)
            len = plain_len;
        REQUIRE(src != NULL);
        for (int to = 0; to <= 4; to++) {
            uint8_t *out = NULL, *back = NULL;
            size_t out_len = 0, back_len = 0;
            struct record_scan scan;
            struct record_batch hb;
            CHECK_EQ_INT(record_batch_recompress(src, len, to, 1 << 20, &out, &out_len), 0);
            REQUIRE(out != NULL);
            CHECK_EQ_INT(record_batch_check(out, out_len, 1 << 20, &hb, &scan), 0);
            CHECK_EQ_INT(hb.attributes & RECORD_ATTR_COMPRESSION_MASK, to);
            CHECK_EQ_INT(hb.record_count, 6);
            CHECK_EQ_INT(hb.base_offset, TS_BASE_OFFSET);
            CHECK_EQ_INT(scan.max_timestamp, 1010);
            CHECK_EQ_INT(record_batch_size(&hb), out_len);
            /* Back to none gives the original bytes exactly. */
            CHECK_EQ_INT(record_batch_recompress(out, out_len, 0, 1 << 20, &back, &back_len), 0);
            CHECK_EQ_INT(back_len, plain_len);
            CHECK(back && memcmp(back, plain, plain_len) == 0);
            free(back);
            free(out);
        }
        if (src != plain)
            free(src);
    }
    free(plain);
}

TEST(recompress_bounded_and_bad_codec)
{
    size_t plain_len, len;
    uint8_t *plain = ts_batch(&plain_len), *b, *out = NULL;
    size_t out_len;
    REQUIRE(plain != NULL);
    b = compress_batch(ZV_GZIP, plain, plain_len, &len);
    REQUIRE(b != NULL);
    /* The decompressed records are bounded as record_batch_check bounds them. */
    CHECK_EQ_INT(record_batch_recompress(b, len, 4, 10, &out, &out_len), ERR_MESSAGE_TOO_LARGE);
    CHECK_EQ_INT(record_batch_recompress(b, len, 7, 1 << 20, &out, &out_len), ERR_INVALID_RECORD);
    CHECK(out == NULL);
    free(b);
    free(plain);
}

/* The check-and-rewrite produce uses: the same answers as record_batch_check, and the same
 * batch as record_batch_recompress, from one decompression. */
TEST(check_recompress_matches_check_then_recompress)
{
    size_t plain_len;
    uint8_t *plain = ts_batch(&plain_len);
    REQUIRE(plain != NULL);
    for (int v = -1; v < ZV_N; v++) {
        size_t len;
        uint8_t *src = v < 0 ? plain : compress_batch((enum zvariant)v, plain, plain_len, &len);
        if (v < 0)
            len = plain_len;
        REQUIRE(src != NULL);
        int from = v < 0 ? 0 : zv_codec[v];
        for (int to = 0; to <= 4; to++) {
            struct record_batch hb, hb2;
            struct record_scan scan, scan2;
            uint8_t *out = NULL, *want = NULL;
            size_t out_len = 0, want_len = 0;
            CHECK_EQ_INT(
                record_batch_check_recompress(src, len, 1 << 20, to, &hb, &scan, &out, &out_len),
                0);
            CHECK_EQ_INT(record_batch_check(src, len, 1 << 20, &hb2, &scan2), 0);
            CHECK_EQ_INT(scan.max_timestamp, scan2.max_timestamp);
            CHECK_EQ_INT(scan.records_size, scan2.records_size);
            if (to == from) {
                CHECK(out == NULL);
                CHECK_EQ_INT(hb.attributes, hb2.attributes);
                continue;
            }
            REQUIRE(out != NULL);
            CHECK_EQ_INT(hb.attributes & RECORD_ATTR_COMPRESSION_MASK, to);
            CHECK_EQ_INT(record_batch_size(&hb), out_len);
            CHECK_EQ_INT(record_batch_recompress(src, len, to, 1 << 20, &want, &want_len), 0);
            CHECK_EQ_INT(out_len, want_len);
            CHECK(want && memcmp(out, want, out_len) == 0);
            free(want);
            free(out);
        }
        if (src != plain)
            free(src);
    }
    /* A damaged batch: the check's error, and no batch. */
    uint8_t *out = NULL;
    size_t out_len;
    struct record_batch hb;
    struct record_scan scan;
    plain[plain_len - 1] ^= 1; /* breaks the CRC */
    CHECK_EQ_INT(
        record_batch_check_recompress(plain, plain_len, 1 << 20, 4, &hb, &scan, &out, &out_len),
        ERR_CORRUPT_MESSAGE);
    CHECK(out == NULL);
    free(plain);
}
