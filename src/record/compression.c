/* SPDX-License-Identifier: Apache-2.0 */
/* record: decompress and compress a batch's records section (and rewrite a batch in another
 * codec, for compression.type), and find a record by timestamp within one
 * batch (ListOffsets by timestamp and MAX_TIMESTAMP answer per record, not per batch).
 *
 * Codecs, as Kafka clients write them in magic 2 batches (the whole records section is one
 * compressed stream):
 **   1 gzip    a gzip stream (RFC 1952); several members are decoded back to back, bytes
 **             after the last member that do not start another one are ignored (as Java's
 **             GZIPInputStream does).
 **   2 snappy  Java clients use snappy-java's framing: 16-byte header (8-byte magic
 **             "\x82SNAPPY\0", int32 version, int32 compatible version), then blocks of
 **             [int32 big-endian compressed length][raw snappy block]. librdkafka writes one
 **             raw snappy block without framing. The magic tells them apart.
 **   3 lz4     LZ4 frame format (magic 2 batches carry a correct header checksum); frames that
 **             follow the first are decoded when they start with an LZ4 (or skippable) frame
 **             magic, other trailing bytes are ignored.
 **   4 zstd    zstd frames; the frame content size may be absent (streaming writers), so it
 **             is decoded as a stream.
 * The output is bounded by max_out: decoding never writes (nor allocates) more than
 * max_out + 1 bytes, whatever the input claims.
 *
 * This file stays apart from record.c so that record.c links without the codec libraries
 * (-lz -lsnappy -llz4 -lzstd are needed only with this file).
 */
#include <assert.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <lz4frame.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "base/err.h"
#include "base/mem.h"
#include "base/sysio.h"
#include "record/record.h"
#include "record_int.h"

#define OFF_BASE_OFFSET 0
#define OFF_ATTRIBUTES 21
#define OFF_BASE_TIMESTAMP 27
#define OFF_MAX_TIMESTAMP 35
#define OFF_RECORD_COUNT 57

#define SNAPPY_JAVA_MAGIC "\x82SNAPPY\0"
#define SNAPPY_JAVA_MAGIC_LEN 8
#define SNAPPY_JAVA_HEADER_LEN 16 /* magic + version + compatible version */

#define OUT_INITIAL 4096

static inline uint32_t rd32be(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint32_t rd32le(const uint8_t *p)
{
    return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

/* ---- a bounded output buffer ------------------------------------------------------------ */

/* Output grows by doubling up to limit = max_out + 1 bytes: filling the last byte means the
 * stream decodes to more than max_out. */
struct outbuf {
    uint8_t *p;
    size_t len, cap, limit;
};

static int out_init(struct outbuf *o, size_t max_out, size_t hint)
{
    o->limit = max_out < SIZE_MAX ? max_out + 1 : SIZE_MAX;
    o->cap = hint < OUT_INITIAL ? OUT_INITIAL : hint;
    if (o->cap > o->limit)
        o->cap = o->limit;
    o->len = 0;
    o->p = malloc(o->cap);
    return o->p ? 0 : ERR_NOMEM;
}

/* Makes room for at least `want` more bytes (or as many as the limit allows, at least one).
 * Returns ERR_MESSAGE_TOO_LARGE once the limit is reached. */
static int out_reserve(struct outbuf *o, size_t want)
{
    size_t cap;
    uint8_t *p;

    if (o->cap - o->len >= want && o->cap > o->len)
        return 0;
    if (o->cap >= o->limit) {
        if (o->cap > o->len)
            return 0; /* what is left is all the limit allows */
        return ERR_MESSAGE_TOO_LARGE;
    }
    cap = o->cap;
    while (cap - o->len < want || cap == o->len) {
        if (cap > o->limit / 2) {
            cap = o->limit;
            break;
        }
        cap *= 2;
    }
    /* Not realloc: this runs on the thread pool for batches of tens of MiB (base/mem.h). */
    p = mem_grow(o->p, o->len, cap);
    if (p == NULL)
        return ERR_NOMEM;
    o->p = p;
    o->cap = cap;
    return 0;
}

/* Hands the buffer over, or frees it and returns rc. */
static int out_finish(struct outbuf *o, int rc, uint8_t **out, size_t *out_len)
{
    if (rc == 0 && o->len >= o->limit)
        rc = ERR_MESSAGE_TOO_LARGE; /* the (max_out + 1)th byte was produced */
    if (rc != 0) {
        free(o->p);
        return rc;
    }
    *out = o->p;
    *out_len = o->len;
    return 0;
}

/* ---- gzip ------------------------------------------------------------------------------- */

static int gunzip(const uint8_t *in, size_t in_len, struct outbuf *o)
{
    z_stream zs;
    int rc = 0;

    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
        return ERR_NOMEM;
    for (;;) {
        uInt avail_in = in_len > UINT_MAX ? UINT_MAX : (uInt)in_len, avail_out;
        int zrc;

        rc = out_reserve(o, 1);
        if (rc != 0)
            break;
        avail_out = o->cap - o->len > UINT_MAX ? UINT_MAX : (uInt)(o->cap - o->len);
        zs.next_in = (Bytef *)(uintptr_t)in;
        zs.avail_in = avail_in;
        zs.next_out = o->p + o->len;
        zs.avail_out = avail_out;
        zrc = inflate(&zs, Z_NO_FLUSH);
        in += avail_in - zs.avail_in;
        in_len -= avail_in - zs.avail_in;
        o->len += avail_out - zs.avail_out;
        if (zrc == Z_STREAM_END) {
            /* Another member follows, or trailing bytes that are ignored. */
            if (in_len >= 2 && in[0] == 0x1f && in[1] == 0x8b) {
                if (inflateReset(&zs) != Z_OK) {
                    rc = ERR_INVALID_RECORD;
                    break;
                }
                continue;
            }
            break;
        }
        if (zrc == Z_OK)
            continue;
        if (zrc == Z_BUF_ERROR && zs.avail_out == 0)
            continue; /* output full: grow and go on */
        /* Z_BUF_ERROR with room to write: the input ended inside the stream. */
        rc = zrc == Z_MEM_ERROR ? ERR_NOMEM : ERR_INVALID_RECORD;
        break;
    }
    inflateEnd(&zs);
    return rc;
}

/* ---- snappy ----------------------------------------------------------------------------- */

/* One raw snappy block, appended to o: its announced length is checked against the limit
 * before anything is allocated. */
static int snappy_block(const uint8_t *in, size_t in_len, struct outbuf *o)
{
    size_t n;
    int rc;

    if (snappy_uncompressed_length((const char *)in, in_len, &n) != SNAPPY_OK)
        return ERR_INVALID_RECORD;
    if (n >= o->limit - o->len)
        return ERR_MESSAGE_TOO_LARGE;
    if (n == 0)
        return snappy_validate_compressed_buffer((const char *)in, in_len) == SNAPPY_OK
                   ? 0
                   : ERR_INVALID_RECORD;
    rc = out_reserve(o, n);
    if (rc != 0)
        return rc;
    if (o->cap - o->len < n)
        return ERR_INVALID_RECORD;
    if (snappy_uncompress((const char *)in, in_len, (char *)o->p + o->len, &n) != SNAPPY_OK)
        return ERR_INVALID_RECORD;
    o->len += n;
    return 0;
}

static int unsnappy(const uint8_t *in, size_t in_len, struct outbuf *o)
{
    if (in_len < SNAPPY_JAVA_MAGIC_LEN || memcmp(in, SNAPPY_JAVA_MAGIC, SNAPPY_JAVA_MAGIC_LEN) != 0)
        return snappy_block(in, in_len, o);
    if (in_len < SNAPPY_JAVA_HEADER_LEN)
        return ERR_INVALID_RECORD;
    in += SNAPPY_JAVA_HEADER_LEN;
    in_len -= SNAPPY_JAVA_HEADER_LEN;
    while (in_len > 0) {
        size_t block;
        int rc;

        if (in_len < 4)
            return ERR_INVALID_RECORD;
        block = rd32be(in);
        in += 4;
        in_len -= 4;
        if (block > in_len)
            return ERR_INVALID_RECORD;
        rc = snappy_block(in, block, o);
        if (rc != 0)
            return rc;
        in += block;
        in_len -= block;
    }
    return 0;
}

/* ---- lz4 -------------------------------------------------------------------------------- */

static bool lz4_frame_starts(const uint8_t *in, size_t in_len)
{
    uint32_t magic;

    if (in_len < 4)
        return false;
    magic = rd32le(in);
    return magic == LZ4F_MAGICNUMBER || (magic & 0xFFFFFFF0u) == LZ4F_MAGIC_SKIPPABLE_START;
}

static int unlz4(const uint8_t *in, size_t in_len, struct outbuf *o)
{
    LZ4F_dctx *dctx = NULL;
    size_t hint = 1;
    int rc = 0;

    if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION)))
        return ERR_NOMEM;
    for (;;) {
        size_t dst, src, r;

        if (hint == 0 && !lz4_frame_starts(in, in_len))
            break; /* the last frame ended; trailing bytes are ignored */
        rc = out_reserve(o, 1);
        if (rc != 0)
            break;
        dst = o->cap - o->len;
        src = in_len;
        r = LZ4F_decompress(dctx, o->p + o->len, &dst, in, &src, NULL);
        if (LZ4F_isError(r)) {
            rc = ERR_INVALID_RECORD;
            break;
        }
        in += src;
        in_len -= src;
        o->len += dst;
        hint = r;
        if (r == 0)
            continue;
        /* The frame goes on. With room left in the output, LZ4F has flushed all it holds:
         * it needs input, and there is none (truncated) — or, never expected, it made no
         * progress at all. With the output full, loop to grow it and let LZ4F flush. */
        if (o->len < o->cap && (in_len == 0 || (src == 0 && dst == 0))) {
            rc = ERR_INVALID_RECORD;
            break;
        }
    }
    LZ4F_freeDecompressionContext(dctx);
    return rc;
}

/* ---- zstd ------------------------------------------------------------------------------- */

static int unzstd(const uint8_t *in, size_t in_len, struct outbuf *o)
{
    ZSTD_DCtx *dctx = ZSTD_createDCtx();
    ZSTD_inBuffer ib = {in, in_len, 0};
    int rc = 0;

    if (dctx == NULL)
        return ERR_NOMEM;
    if (in_len == 0)
        rc = ERR_INVALID_RECORD; /* not even a frame header */
    while (rc == 0) {
        ZSTD_outBuffer ob;
        size_t r;

        rc = out_reserve(o, 1);
        if (rc != 0)
            break;
        ob.dst = o->p + o->len;
        ob.size = o->cap - o->len;
        ob.pos = 0;
        r = ZSTD_decompressStream(dctx, &ob, &ib);
        if (ZSTD_isError(r)) {
            rc = ZSTD_getErrorCode(r) == ZSTD_error_memory_allocation ? ERR_NOMEM
                                                                      : ERR_INVALID_RECORD;
            break;
        }
        o->len += ob.pos;
        if (r == 0) { /* a frame ended: done, or another follows */
            if (ib.pos == ib.size)
                break;
            continue;
        }
        if (ib.pos == ib.size && ob.pos < ob.size) {
            rc = ERR_INVALID_RECORD; /* input ended inside a frame */
            break;
        }
    }
    ZSTD_freeDCtx(dctx);
    return rc;
}

/* ---- record_decompress ------------------------------------------------------------------ */

int record_decompress(int codec, const uint8_t *in, size_t in_len, size_t max_out, uint8_t **out,
                      size_t *out_len)
{
    struct outbuf o;
    int rc;

    if (codec < RECORD_CODEC_NONE || codec > RECORD_CODEC_ZSTD)
        return ERR_INVALID_RECORD;
    if (codec != RECORD_CODEC_NONE)
        sysio_note_codec_call();
    if (codec == RECORD_CODEC_NONE) {
        uint8_t *copy;
        if (in_len > max_out)
            return ERR_MESSAGE_TOO_LARGE;
        copy = malloc(in_len ? in_len : 1);
        if (copy == NULL)
            return ERR_NOMEM;
        if (in_len > 0)
            memcpy(copy, in, in_len);
        *out = copy;
        *out_len = in_len;
        return 0;
    }
    /* Records compress a few times over; start there and let the buffer double. */
    rc = out_init(&o, max_out, in_len < SIZE_MAX / 4 ? in_len * 4 : in_len);
    if (rc != 0)
        return rc;
    switch (codec) {
    case RECORD_CODEC_GZIP:
        rc = gunzip(in, in_len, &o);
        break;
    case RECORD_CODEC_SNAPPY:
        rc = unsnappy(in, in_len, &o);
        break;
    case RECORD_CODEC_LZ4:
        rc = unlz4(in, in_len, &o);
        break;
    default:
        rc = unzstd(in, in_len, &o);
        break;
    }
    return out_finish(&o, rc, out, out_len);
}

/* ---- record_batch_check ---------------------------------------------------------------- */

/* record_batch_check's work, the plain records kept: *p..*end are the batch's records, in
 * *plain (malloc()ed, the caller frees it; NULL when the batch is not compressed) or in buf.
 * The error codes are record_batch_check's; *plain is NULL on an error. */
static int check_walk(const uint8_t *buf, size_t len, size_t max_records_size,
                      struct record_batch *b, struct record_scan *scan, const uint8_t **p,
                      const uint8_t **end, uint8_t **plain)
{
    size_t plain_len;
    int codec, rc;

    *plain = NULL;
    rc = record_batch_check_header(buf, len, b);
    if (rc != 0)
        return rc;
    codec = b->attributes & RECORD_ATTR_COMPRESSION_MASK;
    *p = buf + RECORD_BATCH_HEADER;
    *end = buf + record_batch_size(b);
    if (codec != RECORD_CODEC_NONE) {
        rc = record_decompress(codec, *p, (size_t)(*end - *p), max_records_size, plain, &plain_len);
        if (rc == ERR_INVALID_RECORD)
            rc = ERR_CORRUPT_MESSAGE; /* the stream itself is damaged */
        if (rc != 0)
            return rc;
        *p = *plain;
        *end = *plain + plain_len;
    } else if ((size_t)(*end - *p) > max_records_size) {
        return ERR_MESSAGE_TOO_LARGE;
    }
    scan->records_size = (size_t)(*end - *p);
    return record_walk(*p, *end, b->record_count, b->base_timestamp, scan);
}

int record_batch_check(const uint8_t *buf, size_t len, size_t max_records_size,
                       struct record_batch *b, struct record_scan *scan)
{
    const uint8_t *p, *end;
    uint8_t *plain;
    int rc = check_walk(buf, len, max_records_size, b, scan, &p, &end, &plain);
    free(plain);
    return rc;
}

/* ---- timestamp look-ups ----------------------------------------------------------------- */

static inline int64_t add_wrap(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a + (uint64_t)b);
}

enum ts_mode { TS_FIND, TS_MAX };

/* Walks the batch's records in order: TS_FIND stops at the first with timestamp >= target,
 * TS_MAX keeps the first record of the largest timestamp. */
static int ts_lookup(const uint8_t *buf, size_t len, size_t max_plain, enum ts_mode mode,
                     int64_t target, int64_t *offset, int64_t *ts)
{
    struct record_batch b;
    const uint8_t *p, *end;
    uint8_t *plain = NULL;
    size_t plain_len;
    int64_t base_offset, base_ts, max_ts, best_off = 0, best_ts = 0;
    bool log_append, found = false;
    int codec, rc;

    if (record_batch_parse(buf, len, &b) != 0)
        return ERR_CORRUPT_MESSAGE;
    codec = b.attributes & RECORD_ATTR_COMPRESSION_MASK;
    if (codec > RECORD_CODEC_ZSTD || b.record_count < 0)
        return ERR_INVALID_RECORD;
    if (b.record_count == 0)
        return ERR_NOTFOUND;
    base_offset = b.base_offset;
    base_ts = b.base_timestamp;
    max_ts = b.max_timestamp;
    log_append = (b.attributes & RECORD_ATTR_LOG_APPEND_TIME) != 0;
    /* Every record of a LogAppendTime batch has the batch's timestamp: no need to decompress
     * to know that none qualifies. */
    if (mode == TS_FIND && log_append && max_ts < target)
        return ERR_NOTFOUND;

    p = buf + RECORD_BATCH_HEADER;
    end = buf + record_batch_size(&b);
    if (codec != RECORD_CODEC_NONE) {
        if (max_plain > RECORD_DECOMPRESS_MAX)
            max_plain = RECORD_DECOMPRESS_MAX;
        rc = record_decompress(codec, p, (size_t)(end - p), max_plain, &plain, &plain_len);
        if (rc != 0)
            return rc == ERR_NOMEM ? rc : ERR_INVALID_RECORD;
        p = plain;
        end = plain + plain_len;
    }

    rc = ERR_NOTFOUND;
    for (int32_t i = 0; i < b.record_count; i++) {
        const uint8_t *rec_end;
        int32_t length, offset_delta;
        int64_t delta, rec_ts, rec_off;

        if (get_varint(&p, end, &length) != 0 || length < 1 || (size_t)length > (size_t)(end - p)) {
            rc = ERR_INVALID_RECORD;
            goto out;
        }
        rec_end = p + length;
        p++; /* attributes */
        if (get_varlong(&p, rec_end, &delta) != 0 || get_varint(&p, rec_end, &offset_delta) != 0) {
            rc = ERR_INVALID_RECORD;
            goto out;
        }
        p = rec_end; /* key, value and headers are not needed */
        rec_ts = log_append ? max_ts : add_wrap(base_ts, delta);
        rec_off = add_wrap(base_offset, offset_delta);
        if (mode == TS_FIND) {
            if (rec_ts >= target) {
                best_off = rec_off;
                best_ts = rec_ts;
                found = true;
                break;
            }
        } else if (!found || rec_ts > best_ts) {
            best_off = rec_off;
            best_ts = rec_ts;
            found = true;
        }
    }
    if (found) {
        *offset = best_off;
        *ts = best_ts;
        rc = 0;
    }

out:
    free(plain);
    return rc;
}

int record_batch_find_timestamp(const uint8_t *buf, size_t len, size_t max_records_size,
                                int64_t target, int64_t *offset, int64_t *ts)
{
    return ts_lookup(buf, len, max_records_size, TS_FIND, target, offset, ts);
}

int record_batch_max_timestamp(const uint8_t *buf, size_t len, size_t max_records_size,
                               int64_t *offset, int64_t *ts)
{
    return ts_lookup(buf, len, max_records_size, TS_MAX, 0, offset, ts);
}

/* ---- compression ------------------------------------------------------------------------ */

static inline void wr32be(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static int gzip_compress(const uint8_t *in, size_t in_len, uint8_t **out, size_t *out_len)
{
    z_stream zs;
    uLong cap;
    uint8_t *p;
    int zrc;

    if (in_len > UINT_MAX / 2)
        return ERR_MESSAGE_TOO_LARGE;
    memset(&zs, 0, sizeof zs);
    /* 16 + MAX_WBITS: a gzip wrapper (RFC 1952), what Java's GZIPOutputStream writes. */
    if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8,
                     Z_DEFAULT_STRATEGY) != Z_OK)
        return ERR_NOMEM;
    cap = deflateBound(&zs, (uLong)in_len);
    p = malloc(cap ? cap : 1);
    if (p == NULL) {
        deflateEnd(&zs);
        return ERR_NOMEM;
    }
    zs.next_in = (Bytef *)(uintptr_t)in;
    zs.avail_in = (uInt)in_len;
    zs.next_out = p;
    zs.avail_out = (uInt)cap;
    zrc = deflate(&zs, Z_FINISH);
    *out_len = zs.total_out;
    deflateEnd(&zs);
    if (zrc != Z_STREAM_END) {
        free(p);
        return zrc == Z_MEM_ERROR ? ERR_NOMEM : ERR_INVALID_RECORD;
    }
    *out = p;
    return 0;
}

#define SNAPPY_JAVA_BLOCK 32768 /* snappy-java's default block size */

static int snappy_compress_framed(const uint8_t *in, size_t in_len, uint8_t **out, size_t *out_len)
{
    size_t nblocks = in_len / SNAPPY_JAVA_BLOCK + 1;
    size_t cap =
        SNAPPY_JAVA_HEADER_LEN + nblocks * (4 + snappy_max_compressed_length(SNAPPY_JAVA_BLOCK));
    uint8_t *p = malloc(cap), *w;

    if (p == NULL)
        return ERR_NOMEM;
    memcpy(p, SNAPPY_JAVA_MAGIC, SNAPPY_JAVA_MAGIC_LEN);
    wr32be(p + 8, 1);  /* version */
    wr32be(p + 12, 1); /* compatible version */
    w = p + SNAPPY_JAVA_HEADER_LEN;
    for (size_t off = 0; off < in_len; off += SNAPPY_JAVA_BLOCK) {
        size_t n = in_len - off < SNAPPY_JAVA_BLOCK ? in_len - off : SNAPPY_JAVA_BLOCK;
        size_t clen = snappy_max_compressed_length(n);
        if (snappy_compress((const char *)in + off, n, (char *)w + 4, &clen) != SNAPPY_OK) {
            free(p);
            return ERR_NOMEM;
        }
        wr32be(w, (uint32_t)clen);
        w += 4 + clen;
        /* Each block compresses to at most snappy_max_compressed_length of a whole block, the
         * room `cap` gave every block. */
        assert((size_t)(w - p) <= cap);
    }
    *out = p;
    *out_len = (size_t)(w - p);
    return 0;
}

static int lz4_compress(const uint8_t *in, size_t in_len, uint8_t **out, size_t *out_len)
{
    LZ4F_preferences_t prefs;
    size_t cap, r;
    uint8_t *p;

    memset(&prefs, 0, sizeof prefs);
    prefs.frameInfo.blockSizeID = LZ4F_max64KB;
    prefs.frameInfo.blockMode = LZ4F_blockIndependent;
    prefs.frameInfo.contentChecksumFlag = LZ4F_noContentChecksum;
    cap = LZ4F_compressFrameBound(in_len, &prefs);
    p = malloc(cap ? cap : 1);
    if (p == NULL)
        return ERR_NOMEM;
    r = LZ4F_compressFrame(p, cap, in, in_len, &prefs);
    if (LZ4F_isError(r)) {
        free(p);
        return ERR_NOMEM;
    }
    *out = p;
    *out_len = r;
    return 0;
}

#define ZSTD_KAFKA_LEVEL 3 /* Kafka's (and zstd's) default level */

static int zstd_compress(const uint8_t *in, size_t in_len, uint8_t **out, size_t *out_len)
{
    size_t cap = ZSTD_compressBound(in_len), r;
    uint8_t *p = malloc(cap ? cap : 1);

    if (p == NULL)
        return ERR_NOMEM;
    r = ZSTD_compress(p, cap, in, in_len, ZSTD_KAFKA_LEVEL);
    if (ZSTD_isError(r)) {
        free(p);
        return ERR_NOMEM;
    }
    *out = p;
    *out_len = r;
    return 0;
}

int record_compress(int codec, const uint8_t *in, size_t in_len, uint8_t **out, size_t *out_len)
{
    if (codec != RECORD_CODEC_NONE)
        sysio_note_codec_call();
    switch (codec) {
    case RECORD_CODEC_NONE:
        return record_decompress(RECORD_CODEC_NONE, in, in_len, in_len, out, out_len);
    case RECORD_CODEC_GZIP:
        return gzip_compress(in, in_len, out, out_len);
    case RECORD_CODEC_SNAPPY:
        return snappy_compress_framed(in, in_len, out, out_len);
    case RECORD_CODEC_LZ4:
        return lz4_compress(in, in_len, out, out_len);
    case RECORD_CODEC_ZSTD:
        return zstd_compress(in, in_len, out, out_len);
    default:
        return ERR_INVALID_RECORD;
    }
}

static const char *const codec_names[] = {"none", "gzip", "snappy", "lz4", "zstd"};

const char *record_codec_name(int codec)
{
    return codec >= RECORD_CODEC_NONE && codec <= RECORD_CODEC_ZSTD ? codec_names[codec] : NULL;
}

int record_codec_by_name(const char *name)
{
    if (name == NULL)
        return -1;
    if (strcmp(name, "uncompressed") == 0)
        return RECORD_CODEC_NONE;
    for (int c = RECORD_CODEC_NONE; c <= RECORD_CODEC_ZSTD; c++)
        if (strcmp(name, codec_names[c]) == 0)
            return c;
    return -1;
}

/* The batch whose header is hdr_src's (b parsed from it) and whose records section is
 * plain[0..plain_len) in `codec`: a new malloc()ed batch, batchLength, attributes' codec bits
 * and the CRC set. */
static int rebuild(const uint8_t *hdr_src, const struct record_batch *b, const uint8_t *plain,
                   size_t plain_len, int codec, uint8_t **out, size_t *out_len)
{
    uint8_t *packed = NULL, *batch;
    const uint8_t *section = plain;
    size_t section_len = plain_len, total;
    uint16_t attrs;
    int rc;

    if (codec != RECORD_CODEC_NONE) {
        rc = record_compress(codec, plain, plain_len, &packed, &section_len);
        if (rc != 0)
            return rc;
        section = packed;
    }
    total = RECORD_BATCH_HEADER + section_len;
    if (total - RECORD_BATCH_OVERHEAD > INT32_MAX) {
        free(packed);
        return ERR_MESSAGE_TOO_LARGE;
    }
    batch = malloc(total);
    if (batch == NULL) {
        free(packed);
        return ERR_NOMEM;
    }
    memcpy(batch, hdr_src, RECORD_BATCH_HEADER);
    memcpy(batch + RECORD_BATCH_HEADER, section, section_len);
    free(packed);
    wr32be(batch + 8, (uint32_t)(total - RECORD_BATCH_OVERHEAD));
    attrs = (uint16_t)(((uint16_t)b->attributes & ~RECORD_ATTR_COMPRESSION_MASK) | (uint16_t)codec);
    batch[OFF_ATTRIBUTES] = (uint8_t)(attrs >> 8);
    batch[OFF_ATTRIBUTES + 1] = (uint8_t)attrs;
    /* The CRC covers attributes to the end. */
    wr32be(batch + 17, record_crc32c(0, batch + OFF_ATTRIBUTES, total - OFF_ATTRIBUTES));
    *out = batch;
    *out_len = total;
    return 0;
}

int record_batch_recompress(const uint8_t *buf, size_t len, int codec, size_t max_records_size,
                            uint8_t **out, size_t *out_len)
{
    struct record_batch b;
    uint8_t *plain = NULL;
    size_t plain_len;
    int rc;

    if (codec < RECORD_CODEC_NONE || codec > RECORD_CODEC_ZSTD)
        return ERR_INVALID_RECORD;
    rc = record_batch_parse(buf, len, &b);
    if (rc != 0)
        return rc;
    rc = record_decompress(b.attributes & RECORD_ATTR_COMPRESSION_MASK, buf + RECORD_BATCH_HEADER,
                           record_batch_size(&b) - RECORD_BATCH_HEADER, max_records_size, &plain,
                           &plain_len);
    if (rc != 0)
        return rc;
    rc = rebuild(buf, &b, plain, plain_len, codec, out, out_len);
    free(plain);
    return rc;
}

int record_batch_check_recompress(const uint8_t *buf, size_t len, size_t max_records_size,
                                  int codec, struct record_batch *b, struct record_scan *scan,
                                  uint8_t **out, size_t *out_len)
{
    const uint8_t *p, *end;
    uint8_t *plain;
    int from, rc;

    if (codec < RECORD_CODEC_NONE || codec > RECORD_CODEC_ZSTD)
        return ERR_INVALID_RECORD;
    rc = check_walk(buf, len, max_records_size, b, scan, &p, &end, &plain);
    if (rc != 0) {
        free(plain);
        return rc;
    }
    from = b->attributes & RECORD_ATTR_COMPRESSION_MASK;
    if (codec != from) {
        rc = rebuild(buf, b, p, (size_t)(end - p), codec, out, out_len);
        if (rc == 0)
            rc = record_batch_parse(*out, *out_len, b);
    } else {
        *out = NULL; /* already in that codec */
        *out_len = 0;
    }
    free(plain);
    return rc;
}
