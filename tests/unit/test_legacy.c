/* SPDX-License-Identifier: Apache-2.0 */
/* record/legacy unit tests: magic 0/1 message sets (written here byte by byte, CRC32 from
 * zlib) converted to one v2 batch — plain and gzip-wrapped, every refusal — and v2 batches
 * converted back to magic 0/1 (offset filter, control batches, LogAppendTime, zstd). */
#include "harness.h"

#include <stdbool.h>
#include <stdlib.h>

#include <zlib.h>

#include "base/err.h"
#include "record/record.h"
#include "record/record_int.h"

/* ---- writing message sets by hand --------------------------------------------------------- */

struct mset {
    uint8_t b[8192];
    size_t n;
};

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static void put64(uint8_t *p, uint64_t v)
{
    put32(p, (uint32_t)(v >> 32));
    put32(p + 4, (uint32_t)v);
}

/* Appends one message: key/value NULL = null. Returns the message's start (its offset). */
static uint8_t *add_msg(struct mset *s, int magic, int64_t offset, int attributes, int64_t ts,
                        const void *key, int32_t key_len, const void *value, int32_t value_len)
{
    uint8_t *start = s->b + s->n, *m = start + 12, *p;
    size_t size = 4 + 1 + 1 + (magic == 1 ? 8 : 0) + 4 + (key ? (size_t)key_len : 0) + 4 +
                  (value ? (size_t)value_len : 0);

    put64(start, (uint64_t)offset);
    put32(start + 8, (uint32_t)size);
    m[4] = (uint8_t)magic;
    m[5] = (uint8_t)attributes;
    p = m + 6;
    if (magic == 1) {
        put64(p, (uint64_t)ts);
        p += 8;
    }
    put32(p, key ? (uint32_t)key_len : 0xffffffffu);
    p += 4;
    if (key) {
        memcpy(p, key, (size_t)key_len);
        p += key_len;
    }
    put32(p, value ? (uint32_t)value_len : 0xffffffffu);
    p += 4;
    if (value)
        memcpy(p, value, (size_t)value_len);
    put32(m, (uint32_t)crc32(0, m + 4, (uInt)(size - 4)));
    s->n += 12 + size;
    return start;
}

static size_t gzip(const uint8_t *in, size_t len, uint8_t *out, size_t cap)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return 0;
    z.next_in = (uint8_t *)in;
    z.avail_in = (uInt)len;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    int rc = deflate(&z, Z_FINISH);
    size_t n = cap - z.avail_out;
    deflateEnd(&z);
    return rc == Z_STREAM_END ? n : 0;
}

/* One record of a v2 batch, read back. */
struct rec {
    int64_t offset_delta, ts;
    int32_t key_len, value_len;
    const uint8_t *key, *value;
};

/* Walks an uncompressed v2 batch's records into r[0..max). Returns the count or -1. */
static int walk(const uint8_t *batch, size_t len, struct rec *r, int max)
{
    struct record_batch b;
    const uint8_t *p, *end;
    if (record_batch_parse(batch, len, &b) != 0)
        return -1;
    p = batch + RECORD_BATCH_HEADER;
    end = batch + len;
    for (int i = 0; i < b.record_count && i < max; i++) {
        int32_t length, od, nh;
        int64_t tsd;
        if (get_varint(&p, end, &length) != 0)
            return -1;
        const uint8_t *rend = p + length;
        p++;
        if (get_varlong(&p, rend, &tsd) != 0 || get_varint(&p, rend, &od) != 0 ||
            get_varint(&p, rend, &r[i].key_len) != 0)
            return -1;
        r[i].key = r[i].key_len >= 0 ? p : NULL;
        p += r[i].key_len > 0 ? r[i].key_len : 0;
        if (get_varint(&p, rend, &r[i].value_len) != 0)
            return -1;
        r[i].value = r[i].value_len >= 0 ? p : NULL;
        p += r[i].value_len > 0 ? r[i].value_len : 0;
        if (get_varint(&p, rend, &nh) != 0 || nh != 0)
            return -1;
        r[i].offset_delta = od;
        r[i].ts = b.base_timestamp + tsd;
        p = rend;
    }
    return b.record_count;
}

/* ---- message set -> batch ----------------------------------------------------------------- */

TEST(legacy_v0_message_set_becomes_one_v2_batch)
{
    struct mset s = {.n = 0};
    uint8_t *out;
    size_t out_len;
    int32_t n;
    struct record_batch b;
    struct record_scan scan;
    struct rec r[4];

    add_msg(&s, 0, 0, 0, 0, "k1", 2, "v1", 2);
    add_msg(&s, 0, 1, 0, 0, NULL, 0, "value-2", 7);
    add_msg(&s, 0, 7, 0, 0, "", 0, NULL, 0); /* producers' offsets are not kept */
    CHECK_EQ_INT(record_legacy_magic(s.b, s.n), 0);
    REQUIRE(record_legacy_to_batch(s.b, s.n, 1 << 20, &out, &out_len, &n) == 0);
    CHECK_EQ_INT(n, 3);
    REQUIRE(record_batch_check(out, out_len, 1 << 20, &b, &scan) == 0);
    CHECK_EQ_INT(b.record_count, 3);
    CHECK_EQ_INT(b.producer_id, -1);
    CHECK_EQ_INT(b.attributes, 0);
    CHECK_EQ_INT(b.max_timestamp, -1); /* magic 0 has no timestamps */
    REQUIRE(walk(out, out_len, r, 4) == 3);
    CHECK(r[0].key_len == 2 && memcmp(r[0].key, "k1", 2) == 0);
    CHECK(r[0].value_len == 2 && memcmp(r[0].value, "v1", 2) == 0);
    CHECK(r[1].key == NULL && r[1].key_len == -1);
    CHECK(r[1].value_len == 7 && memcmp(r[1].value, "value-2", 7) == 0);
    CHECK(r[2].key_len == 0 && r[2].value == NULL && r[2].value_len == -1);
    CHECK_EQ_INT(r[2].offset_delta, 2);
    CHECK_EQ_INT(r[1].ts, -1);
    free(out);
}

TEST(legacy_v1_timestamps_kept_and_round_trip_byte_exact)
{
    struct mset s = {.n = 0};
    uint8_t *out;
    size_t out_len;
    struct record_batch b;
    struct record_legacy_buf back = {0};

    add_msg(&s, 1, 0, 0, 1700000000123, "a", 1, "one", 3);
    add_msg(&s, 1, 1, 0, 1700000000100, "b", 1, "two", 3);
    add_msg(&s, 1, 2, 0, 1700000000999, NULL, 0, "three", 5);
    REQUIRE(record_legacy_to_batch(s.b, s.n, 1 << 20, &out, &out_len, NULL) == 0);
    REQUIRE(record_batch_parse(out, out_len, &b) == 0);
    CHECK_EQ_INT(b.base_timestamp, 1700000000123);
    CHECK_EQ_INT(b.max_timestamp, 1700000000999);
    /* Back to magic 1 from offset 0: the very bytes the client sent. */
    REQUIRE(record_legacy_append_batch(&back, out, out_len, 1, 0, 1 << 20) == 0);
    CHECK_EQ_INT(back.len, s.n);
    CHECK(back.len == s.n && memcmp(back.data, s.b, s.n) == 0);
    record_legacy_buf_free(&back);
    free(out);
}

TEST(legacy_gzip_wrapper_unpacks_its_inner_messages)
{
    struct mset inner = {.n = 0}, s = {.n = 0};
    uint8_t z[4096];
    size_t zn;
    uint8_t *out;
    size_t out_len;
    int32_t n;
    struct rec r[8];

    for (int i = 0; i < 5; i++) {
        char v[16];
        int vl = snprintf(v, sizeof v, "gz-%d", i);
        add_msg(&inner, 1, i, 0, 1000 + i, NULL, 0, v, vl);
    }
    zn = gzip(inner.b, inner.n, z, sizeof z);
    REQUIRE(zn > 0);
    add_msg(&s, 1, 4, RECORD_CODEC_GZIP, 1004, NULL, 0, z, (int32_t)zn);
    /* A second, plain message after the wrapper. */
    add_msg(&s, 1, 5, 0, 2000, "k", 1, "plain", 5);
    REQUIRE(record_legacy_to_batch(s.b, s.n, 1 << 20, &out, &out_len, &n) == 0);
    CHECK_EQ_INT(n, 6);
    REQUIRE(walk(out, out_len, r, 8) == 6);
    CHECK(r[3].value_len == 4 && memcmp(r[3].value, "gz-3", 4) == 0);
    CHECK_EQ_INT(r[4].ts, 1004);
    CHECK(r[5].value_len == 5 && memcmp(r[5].value, "plain", 5) == 0);
    CHECK_EQ_INT(r[5].offset_delta, 5);
    free(out);
}

TEST(legacy_refusals)
{
    struct mset s = {.n = 0}, inner = {.n = 0}, w = {.n = 0};
    uint8_t *out = NULL, z[4096];
    size_t out_len, zn;

    /* A flipped value byte: the CRC32 no longer matches. */
    add_msg(&s, 1, 0, 0, 5, "k", 1, "value", 5);
    s.b[s.n - 1] ^= 1;
    CHECK_EQ_INT(record_legacy_to_batch(s.b, s.n, 1 << 20, &out, &out_len, NULL),
                 ERR_CORRUPT_MESSAGE);
    CHECK(out == NULL);
    /* Truncated: a message size past the end. */
    s.n = 0;
    add_msg(&s, 0, 0, 0, 0, "k", 1, "value", 5);
    CHECK_EQ_INT(record_legacy_to_batch(s.b, s.n - 1, 1 << 20, &out, &out_len, NULL),
                 ERR_CORRUPT_MESSAGE);
    /* Nothing at all. */
    CHECK_EQ_INT(record_legacy_to_batch(s.b, 0, 1 << 20, &out, &out_len, NULL), ERR_INVALID_RECORD);
    /* zstd cannot be carried by magic 0/1. */
    s.n = 0;
    add_msg(&s, 1, 0, RECORD_CODEC_ZSTD, 0, NULL, 0, "xx", 2);
    CHECK_EQ_INT(record_legacy_to_batch(s.b, s.n, 1 << 20, &out, &out_len, NULL),
                 ERR_UNSUPPORTED_COMPRESSION_TYPE);
    /* Larger than allowed. */
    s.n = 0;
    add_msg(&s, 1, 0, 0, 0, NULL, 0, "0123456789", 10);
    CHECK_EQ_INT(record_legacy_to_batch(s.b, s.n, 20, &out, &out_len, NULL), ERR_MESSAGE_TOO_LARGE);
    /* A wrapper inside a wrapper. */
    add_msg(&inner, 1, 0, 0, 0, NULL, 0, "x", 1);
    zn = gzip(inner.b, inner.n, z, sizeof z);
    add_msg(&w, 1, 0, RECORD_CODEC_GZIP, 0, NULL, 0, z, (int32_t)zn);
    zn = gzip(w.b, w.n, z, sizeof z);
    s.n = 0;
    add_msg(&s, 1, 0, RECORD_CODEC_GZIP, 0, NULL, 0, z, (int32_t)zn);
    CHECK_EQ_INT(record_legacy_to_batch(s.b, s.n, 1 << 20, &out, &out_len, NULL),
                 ERR_INVALID_RECORD);
    /* An inner message whose CRC is wrong. */
    inner.b[inner.n - 1] ^= 0x40;
    zn = gzip(inner.b, inner.n, z, sizeof z);
    s.n = 0;
    add_msg(&s, 1, 0, RECORD_CODEC_GZIP, 0, NULL, 0, z, (int32_t)zn);
    CHECK_EQ_INT(record_legacy_to_batch(s.b, s.n, 1 << 20, &out, &out_len, NULL),
                 ERR_CORRUPT_MESSAGE);
    /* A magic 0 message inside a magic 1 wrapper. */
    inner.n = 0;
    add_msg(&inner, 0, 0, 0, 0, NULL, 0, "x", 1);
    zn = gzip(inner.b, inner.n, z, sizeof z);
    s.n = 0;
    add_msg(&s, 1, 0, RECORD_CODEC_GZIP, 0, NULL, 0, z, (int32_t)zn);
    CHECK_EQ_INT(record_legacy_to_batch(s.b, s.n, 1 << 20, &out, &out_len, NULL),
                 ERR_INVALID_RECORD);
    /* A wrapper that does not decompress. */
    s.n = 0;
    add_msg(&s, 1, 0, RECORD_CODEC_GZIP, 0, NULL, 0, "not gzip", 8);
    CHECK_EQ_INT(record_legacy_to_batch(s.b, s.n, 1 << 20, &out, &out_len, NULL),
                 ERR_CORRUPT_MESSAGE);
}

/* ---- batch -> message set ----------------------------------------------------------------- */

static uint8_t *build(int64_t base, int16_t attributes, int n, size_t *len)
{
    struct record_input r[8];
    struct record_header h = {"h", (const uint8_t *)"hv", 2};
    struct record_build_options opt = {.base_offset = base,
                                       .attributes = attributes,
                                       .producer_id = -1,
                                       .base_sequence = -1,
                                       .leader_epoch = 0};
    uint8_t *out;
    for (int i = 0; i < n; i++)
        r[i] = (struct record_input){
            (const uint8_t *)"key", 3, (const uint8_t *)"val", 3, 100 + i, 1, &h};
    if (record_batch_build(&opt, r, n, &out, len) != 0)
        return NULL;
    return out;
}

TEST(legacy_batch_to_magic0_and_1)
{
    size_t len;
    uint8_t *b = build(40, 0, 4, &len);
    struct record_legacy_buf o = {0};
    uint8_t *back;
    size_t back_len;
    int32_t n;
    struct rec r[8];

    REQUIRE(b != NULL);
    /* From offset 42: the batch's first two records are left out. */
    REQUIRE(record_legacy_append_batch(&o, b, len, 0, 42, 1 << 20) == 0);
    CHECK_EQ_INT(o.len, 2 * (12 + 14 + 3 + 3));
    CHECK_EQ_INT((int64_t)((uint64_t)o.data[7]), 42); /* absolute offsets */
    CHECK_EQ_INT(record_legacy_magic(o.data, o.len), 0);
    /* What we wrote parses as a message set (CRCs right), headers gone. */
    REQUIRE(record_legacy_to_batch(o.data, o.len, 1 << 20, &back, &back_len, &n) == 0);
    CHECK_EQ_INT(n, 2);
    REQUIRE(walk(back, back_len, r, 8) == 2);
    CHECK(r[0].key_len == 3 && memcmp(r[0].key, "key", 3) == 0);
    free(back);
    record_legacy_buf_free(&o);

    /* Magic 1 keeps each record's timestamp. */
    REQUIRE(record_legacy_append_batch(&o, b, len, 1, 0, 1 << 20) == 0);
    REQUIRE(record_legacy_to_batch(o.data, o.len, 1 << 20, &back, &back_len, &n) == 0);
    CHECK_EQ_INT(n, 4);
    REQUIRE(walk(back, back_len, r, 8) == 4);
    CHECK_EQ_INT(r[3].ts, 103);
    free(back);
    record_legacy_buf_free(&o);
    free(b);
}

TEST(legacy_log_append_time_control_and_zstd)
{
    size_t len, ctl_len;
    uint8_t *b = build(0, 0, 2, &len), *ctl;
    struct record_legacy_buf o = {0};

    REQUIRE(b != NULL);
    record_batch_set_log_append_time(b, 5555);
    REQUIRE(record_legacy_append_batch(&o, b, len, 1, 0, 1 << 20) == 0);
    /* The first message: attributes carry the LogAppendTime bit, timestamp the batch's. */
    CHECK_EQ_INT(o.data[12 + 5], 0x08);
    CHECK_EQ_INT(o.data[12 + 6 + 7], 5555 & 0xff);
    record_legacy_buf_free(&o);

    /* A COMMIT marker adds nothing. */
    REQUIRE(record_build_control(7, 0, 0, RECORD_CONTROL_COMMIT, 1, &ctl, &ctl_len) == 0);
    REQUIRE(record_legacy_append_batch(&o, ctl, ctl_len, 1, 0, 1 << 20) == 0);
    CHECK_EQ_INT(o.len, 0);
    free(ctl);

    /* A zstd batch cannot be served to a magic 0/1 reader. */
    b[22] = (uint8_t)((b[22] & ~RECORD_ATTR_COMPRESSION_MASK) | RECORD_CODEC_ZSTD);
    CHECK_EQ_INT(record_legacy_append_batch(&o, b, len, 1, 0, 1 << 20),
                 ERR_UNSUPPORTED_COMPRESSION_TYPE);
    record_legacy_buf_free(&o);
    free(b);
}
