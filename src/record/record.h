/* SPDX-License-Identifier: Apache-2.0 */
/* record: Kafka record batches, magic 2 — parse and validate what producers send, patch
 * the few header fields the broker assigns, and build batches (control records, tests).
 * Knows nothing of files or sockets.
 *
 * Batch header (big-endian), then the records:
 **   OFFSET  SIZE  FIELD
 **        0     8  baseOffset
 **        8     4  batchLength: bytes after this field (so a batch is batchLength + 12)
 **       12     4  partitionLeaderEpoch
 **       16     1  magic (2)
 **       17     4  crc: CRC32C of bytes 21 .. end of batch
 **       21     2  attributes: bits 0-2 compression (0 none, 1 gzip, 2 snappy, 3 lz4,
 **                 4 zstd), bit 3 timestamp type (1 = LogAppendTime), bit 4 transactional,
 **                 bit 5 control, bit 6 delete horizon set
 **       23     4  lastOffsetDelta
 **       27     8  baseTimestamp
 **       35     8  maxTimestamp
 **       43     8  producerId
 **       51     2  producerEpoch
 **       53     4  baseSequence
 **       57     4  recordCount
 **       61        records (compressed as a whole when compression != 0)
 */
#ifndef TALLY_RECORD_H
#define TALLY_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RECORD_BATCH_HEADER 61
#define RECORD_BATCH_OVERHEAD 12 /* baseOffset + batchLength: not counted in batchLength */

#define RECORD_ATTR_COMPRESSION_MASK 0x07
#define RECORD_ATTR_LOG_APPEND_TIME 0x08
#define RECORD_ATTR_TRANSACTIONAL 0x10
#define RECORD_ATTR_CONTROL 0x20
#define RECORD_ATTR_DELETE_HORIZON 0x40
/* Bits 7-15 have no meaning yet (Kafka drops them when it rewrites a batch's attributes). */
#define RECORD_ATTR_KNOWN 0x7f

struct record_batch {
    int64_t base_offset;
    int32_t batch_length;
    int32_t leader_epoch;
    int8_t magic;
    uint32_t crc;
    int16_t attributes;
    int32_t last_offset_delta;
    int64_t base_timestamp;
    int64_t max_timestamp;
    int64_t producer_id;
    int16_t producer_epoch;
    int32_t base_sequence;
    int32_t record_count;
};

/* Total size of the batch: batch_length + 12. */
static inline size_t record_batch_size(const struct record_batch *b)
{
    return (size_t)b->batch_length + RECORD_BATCH_OVERHEAD;
}

/* baseOffset + lastOffsetDelta. Both may come from a damaged file: the sum wraps rather than
 * overflowing (callers that read files check that offsets only grow). */
static inline int64_t record_batch_last_offset(const struct record_batch *b)
{
    return (int64_t)((uint64_t)b->base_offset + (uint64_t)(int64_t)b->last_offset_delta);
}

/* Decodes the header of the batch at buf[0..len) without checking the CRC. Returns 0;
 * ERR_TRUNCATED if len is shorter than the header or than the whole batch its length
 * announces; ERR_CORRUPT_MESSAGE if batchLength is below the header's size;
 * ERR_UNSUPPORTED_FOR_MESSAGE_FORMAT if magic is not 2 (magic is at the same place in v0/v1
 * messages, so old clients are recognised). */
int record_batch_parse(const uint8_t *buf, size_t len, struct record_batch *b);

/* As record_batch_parse, but needs only the 61 header bytes, not the whole batch (for
 * scanning a log by reading headers). */
int record_batch_parse_header(const uint8_t *buf, size_t len, struct record_batch *b);

/* record_batch_parse, then the checks a broker makes before appending: CRC32C,
 * lastOffsetDelta == recordCount - 1 (>= 0), a known compression codec, and, for
 * uncompressed batches, that the records walk exactly to the end of the batch with
 * consistent varint lengths and recordCount records. Returns 0, or ERR_CORRUPT_MESSAGE /
 * ERR_INVALID_RECORD / ERR_TRUNCATED / ERR_UNSUPPORTED_FOR_MESSAGE_FORMAT. */
int record_batch_validate(const uint8_t *buf, size_t len, struct record_batch *b);

/* What record_batch_check learns from walking the records. */
struct record_scan {
    /* The largest record timestamp, never below -1 (Kafka's NO_TIMESTAMP starts the search,
     * as in Kafka's LogValidator): what the header's maxTimestamp should say. */
    int64_t max_timestamp;
    /* The smallest record timestamp other than -1 (records with -1 are not range-checked);
     * INT64_MAX when every record has -1. */
    int64_t min_timestamp;
    /* Bytes of the records section, decompressed. */
    size_t records_size;
    /* Some record has a null key (a compacted topic refuses the batch: INVALID_RECORD). */
    bool null_key;
};

/* Every check a broker makes on a batch a client produced, as Kafka's LogValidator does:
 * record_batch_validate's header checks, then — compressed or not — the records themselves:
 * exactly recordCount records, offset deltas 0 .. n-1 in order, every length consistent, no
 * bytes after the last record, and each timestamp (baseTimestamp + timestampDelta) an int64.
 * A compressed records section is decompressed into a temporary buffer of at most
 * max_records_size bytes (a bomb stops there: decoding never writes past that bound, so it
 * costs at most that much memory and the CPU to produce it); uncompressed sections are walked
 * in place and also count against the bound. Fills *b (the header) and *scan. Returns 0;
 * record_batch_validate's errors; ERR_CORRUPT_MESSAGE if the compressed section does not
 * decode (garbage, truncated, or an empty stream); ERR_MESSAGE_TOO_LARGE if the records
 * section is, or decompresses to, more than max_records_size bytes; ERR_INVALID_RECORD if
 * the records do not walk as above; ERR_NOMEM. LogAppendTime batches are walked like the
 * others (their record timestamps are then not meaningful: the caller decides). */
int record_batch_check(const uint8_t *buf, size_t len, size_t max_records_size,
                       struct record_batch *b, struct record_scan *scan);

/* Field patches on a batch in place (the CRC does not cover offset 0..20, so the first two
 * need no CRC update; the third recomputes it). */
void record_batch_set_base_offset(uint8_t *batch, int64_t base_offset);
void record_batch_set_leader_epoch(uint8_t *batch, int32_t epoch);
/* Sets attributes and maxTimestamp, then recomputes the CRC. */
void record_batch_set_max_timestamp(uint8_t *batch, int16_t attributes, int64_t max_timestamp);
/* Sets the LogAppendTime attribute bit and maxTimestamp = ts, then recomputes the CRC. */
void record_batch_set_log_append_time(uint8_t *batch, int64_t ts);

/* CRC32C (Castagnoli), continuing from `crc` (0 to start). Uses SSE4.2 where the CPU has
 * it, a table otherwise. */
uint32_t record_crc32c(uint32_t crc, const void *buf, size_t len);

/* One record to build. key/value NULL = null. */
struct record_header {
    const char *key;
    const uint8_t *value;
    int32_t value_len;
};
struct record_input {
    const uint8_t *key;
    int32_t key_len; /* -1 = null */
    const uint8_t *value;
    int32_t value_len; /* -1 = null */
    int64_t timestamp;
    int32_t n_headers;
    const struct record_header *headers;
};

struct record_build_options {
    int64_t base_offset;
    int16_t attributes;  /* compression must be 0: the builder writes uncompressed batches */
    int64_t producer_id; /* -1 = none */
    int16_t producer_epoch;
    int32_t base_sequence; /* -1 = none */
    int32_t leader_epoch;
};

/* Builds one uncompressed batch of n records into a malloc()ed buffer (caller owns).
 * Returns 0 or ERR_NOMEM. */
int record_batch_build(const struct record_build_options *opt, const struct record_input *recs,
                       int32_t n, uint8_t **out, size_t *out_len);

/* Control record types, and the one-record control batch (COMMIT / ABORT marker) that
 * transactions write: key = {version 0, type}, value = {version 0, coordinatorEpoch}. */
enum record_control_type { RECORD_CONTROL_ABORT = 0, RECORD_CONTROL_COMMIT = 1 };
int record_build_control(int64_t producer_id, int16_t producer_epoch, int32_t coordinator_epoch,
                         enum record_control_type type, int64_t timestamp, uint8_t **out,
                         size_t *out_len);

/* Reads the marker of the control batch at batch[0..len) (parsed, not CRC-checked: call
 * record_batch_validate first for untrusted bytes). Returns 0 and sets *type and
 * *coordinator_epoch; ERR_INVALID_RECORD if the batch is not an uncompressed control batch
 * whose first record is a COMMIT or ABORT marker; or record_batch_parse's errors. */
int record_control_parse(const uint8_t *batch, size_t len, enum record_control_type *type,
                         int32_t *coordinator_epoch);

/* ---- compressed records and per-record timestamps (compression.c) ----------------------- */

/* Compression codecs: the value of attributes & RECORD_ATTR_COMPRESSION_MASK. */
#define RECORD_CODEC_NONE 0
#define RECORD_CODEC_GZIP 1
#define RECORD_CODEC_SNAPPY 2
#define RECORD_CODEC_LZ4 3
#define RECORD_CODEC_ZSTD 4

/* The most a batch's records section may decompress to, whatever a caller asks for. */
#define RECORD_DECOMPRESS_MAX ((size_t)64 << 20)

/* Within one whole batch (buf[0..len)): the first record whose timestamp >= target —
 * *offset = baseOffset + offsetDelta, *ts = baseTimestamp + timestampDelta. With
 * LogAppendTime batches every record's timestamp is maxTimestamp. Returns 0 (found),
 * ERR_NOTFOUND (no record qualifies, or the batch has none), ERR_CORRUPT_MESSAGE (the header
 * does not parse or len is shorter than the batch), ERR_INVALID_RECORD (unknown codec,
 * undecodable payload, records that do not walk, or more than max_records_size bytes
 * decompressed — decoding stops there), ERR_NOMEM. Compressed batches (gzip, snappy, lz4, zstd) are
 * decompressed into a temporary buffer. The CRC is not checked (the batch was validated on append).
 * Stops at the first match, so records after it are not looked at. */
int record_batch_find_timestamp(const uint8_t *buf, size_t len, size_t max_records_size,
                                int64_t target, int64_t *offset, int64_t *ts);

/* The record with the largest timestamp (the first one on ties): its offset and timestamp.
 * Walks every record; same returns as record_batch_find_timestamp (ERR_NOTFOUND for a batch
 * without records). */
int record_batch_max_timestamp(const uint8_t *buf, size_t len, size_t max_records_size,
                               int64_t *offset, int64_t *ts);

/* Decompresses a batch's records section in[0..in_len) compressed with codec (1 gzip, possibly
 * several members; 2 snappy, raw or xerial snappy-java framed; 3 lz4 frame; 4 zstd, frame
 * content size optional; several frames are decoded back to back) into a malloc()ed buffer
 * (caller frees; never NULL on success, even when *out_len is 0). For codec 0 returns a copy.
 * Returns 0; ERR_INVALID_RECORD if the codec is unknown or the input does not decode (truncated
 * included); ERR_MESSAGE_TOO_LARGE if the output would pass max_out bytes (decoding stops
 * there: a compression bomb costs at most max_out); ERR_NOMEM. *out is set only on success. */
int record_decompress(int codec, const uint8_t *in, size_t in_len, size_t max_out, uint8_t **out,
                      size_t *out_len);

/* ---- magic 0/1 message sets: Produce v0-2 and Fetch v0-3 (legacy.c) ----------------------- */

/* The magic byte of the first entry of a message set or batch at buf[0..len) (it sits at
 * offset 16 in every format), or -1 when len is too short to hold it. */
int record_legacy_magic(const uint8_t *buf, size_t len);

/* Converts the magic 0/1 message set at buf[0..len) (as Produce v0-2 carries it: whole
 * messages, wrappers compressed with gzip, snappy or lz4) into one uncompressed v2 batch of
 * all its records, in order, in a malloc()ed buffer (*out, *out_len; caller frees): base
 * offset 0, no producer id, timestamps as sent (-1 for magic 0), keys and values as sent.
 * Every message's CRC32 is checked, inner messages of wrappers included. At most
 * max_records_size bytes are accepted and decompressed in all. *n_records (may be NULL)
 * receives the record count. Returns 0; ERR_CORRUPT_MESSAGE (a CRC mismatch, a truncated or
 * inconsistent message, a wrapper that does not decompress); ERR_INVALID_RECORD (no messages,
 * nested compression, an inner magic unlike its wrapper's, a v2 batch inside, an unknown
 * codec); ERR_UNSUPPORTED_COMPRESSION_TYPE (zstd, which magic 0/1 cannot carry);
 * ERR_MESSAGE_TOO_LARGE (past max_records_size); ERR_NOMEM. */
int record_legacy_to_batch(const uint8_t *buf, size_t len, size_t max_records_size, uint8_t **out,
                           size_t *out_len, int32_t *n_records);

/* A growing message set (data malloc()ed; start zeroed, free with record_legacy_buf_free). */
struct record_legacy_buf {
    uint8_t *data;
    size_t len, cap;
};

/* Appends the records of the whole v2 batch batch[0..len) whose offsets are >= first_offset
 * to `o` as uncompressed messages of magic `to_magic` (0 or 1): absolute offsets, key and
 * value kept, headers dropped, and for magic 1 the record's timestamp (or the batch's
 * maxTimestamp with the LogAppendTime bit for LogAppendTime batches). Compressed batches are
 * decompressed (at most max_records_size bytes); control batches add nothing. The CRC is not
 * checked (the batch comes from the log). Returns 0; ERR_UNSUPPORTED_COMPRESSION_TYPE for a
 * zstd batch; ERR_CORRUPT_MESSAGE for records that do not walk; record_decompress's errors;
 * ERR_MESSAGE_TOO_LARGE when `o` would pass INT32_MAX bytes; ERR_NOMEM. On error `o` may hold
 * messages of the batch's first records. */
int record_legacy_append_batch(struct record_legacy_buf *o, const uint8_t *batch, size_t len,
                               int to_magic, int64_t first_offset, size_t max_records_size);

void record_legacy_buf_free(struct record_legacy_buf *o);

/* ---- iterating over the records of one batch (record_iter.c) ---------------------------- */

/* One record, as record_iter_next yields it. Pointers point into the batch the iterator was
 * given (uncompressed batches) or into the iterator's decompressed copy (compressed ones):
 * either way they stay valid until record_iter_close, and no longer than the caller's batch. */
struct record_item {
    int64_t offset;    /* baseOffset + offsetDelta */
    int64_t timestamp; /* baseTimestamp + timestampDelta; maxTimestamp in LogAppendTime batches */
    int32_t offset_delta;
    const uint8_t *key; /* NULL when key_len is -1 (null key) */
    int32_t key_len;
    const uint8_t *value; /* NULL when value_len is -1 (null value: a tombstone) */
    int32_t value_len;
    int32_t header_count;
    /* The encoded headers (header_count of them), for record_header_first/next. */
    const uint8_t *headers;
    const uint8_t *headers_end;
    /* The whole encoded record, its length varint included: what a rewriter copies when it
     * keeps the record in a batch with the same baseOffset and baseTimestamp. */
    const uint8_t *raw;
    size_t raw_len;
};

/* One header of a record. value is NULL when value_len is -1. Header keys are never null. */
struct record_header_view {
    const uint8_t *key;
    int32_t key_len;
    const uint8_t *value;
    int32_t value_len;
};

/* Walks a record's headers; fields are private (a value struct so that it lives on the
 * caller's stack). */
struct record_header_iter {
    const uint8_t *p, *end;
    int32_t left;
};

/* An iterator over the records of one batch. A value struct for the caller's stack; the
 * fields are private except `batch`, the parsed header, which callers may read after a
 * successful record_iter_init. */
struct record_iter {
    struct record_batch batch;
    const uint8_t *p, *end; /* the records not yet yielded */
    uint8_t *plain;         /* the decompressed records section, owned; NULL if uncompressed */
    int32_t next;           /* records yielded so far */
    int32_t prev_delta;     /* offsetDelta of the last record yielded, -1 before the first */
    int err;                /* sticky: what every later record_iter_next returns */
};

/* Starts iterating over the batch at buf[0..len), compressed or not. The header is parsed
 * (record_batch_parse: len must hold the whole batch) but the CRC is not checked: call
 * record_batch_validate first on bytes that are not trusted. A compressed records section is
 * decompressed here, at most max_records_size bytes (record_decompress's bound; decoding stops
 * there), into a buffer the iterator owns until record_iter_close; an uncompressed one is
 * walked in place, so buf must outlive the iteration. Returns 0; record_batch_parse's errors
 * (ERR_TRUNCATED, ERR_CORRUPT_MESSAGE, ERR_UNSUPPORTED_FOR_MESSAGE_FORMAT); ERR_INVALID_RECORD
 * for an unknown codec, a negative recordCount or a compressed section that does not decode;
 * ERR_MESSAGE_TOO_LARGE if it decompresses to more than max_records_size bytes; ERR_NOMEM. On
 * error nothing is held, and record_iter_close may still be called. */
int record_iter_init(struct record_iter *it, const uint8_t *buf, size_t len,
                     size_t max_records_size);

/* The next record, in batch order, into *rec. Returns 0; ERR_NOTFOUND after the last of
 * recordCount records (and again on every later call); ERR_INVALID_RECORD if the record is
 * malformed — a length that runs past the section or does not match the record's fields, a
 * negative header count, a null header key, an offsetDelta that does not grow or passes
 * lastOffsetDelta (holes are allowed: a compacted batch keeps the offsets it retained), fewer
 * records than recordCount, or bytes left after the last one. Records before a malformed one
 * were yielded; after an error every later call returns it again. Timestamps wrap rather than
 * fail on overflow (the batch was validated when it was appended). */
int record_iter_next(struct record_iter *it, struct record_item *rec);

/* record_batch_validate for a batch read back from a log, which compaction may have
 * rewritten: CRC32C, a known codec, 0 <= recordCount <= lastOffsetDelta + 1 (retained records
 * keep their offsets, so a cleaned batch has holes; an empty batch keeps a producer's last
 * sequence), and for uncompressed batches a walk with record_iter_next (offsetDeltas growing
 * within lastOffsetDelta, no bytes left). Same returns as record_batch_validate. */
int record_batch_validate_stored(const uint8_t *buf, size_t len, struct record_batch *b);

/* Frees the decompressed buffer (pointers of yielded records die with it). Idempotent. */
void record_iter_close(struct record_iter *it);

/* Walks the headers of rec (already checked by record_iter_next, so this cannot fail):
 * record_header_first sets up *hi; record_header_next returns 0 and fills *h, or
 * ERR_NOTFOUND after the last header. rec's pointers must still be valid. */
void record_header_first(const struct record_item *rec, struct record_header_iter *hi);
int record_header_next(struct record_header_iter *hi, struct record_header_view *h);

/* ---- compressing (compression.c) ------------------------------------------------------------ */

/* Compresses in[0..in_len) with codec (0 none: a copy; 1 gzip, one member at zlib's default
 * level; 2 snappy, snappy-java's framing with 32 KiB blocks, which Java clients, librdkafka and
 * kafka-python all read; 3 lz4, one LZ4 frame of independent 64 KiB blocks without content
 * size or checksums, as Kafka's Java producer writes; 4 zstd, one frame at level 3, Kafka's
 * default) into a malloc()ed buffer (caller frees; never NULL on success). Returns 0;
 * ERR_INVALID_RECORD for an unknown codec; ERR_NOMEM. */
int record_compress(int codec, const uint8_t *in, size_t in_len, uint8_t **out, size_t *out_len);

/* The name of a codec as Kafka spells it in compression.type ("none" for 0, NULL when
 * unknown), and back (-1 when unknown; "uncompressed" and "none" give 0). */
const char *record_codec_name(int codec);
int record_codec_by_name(const char *name);

/* Rewrites the whole batch buf[0..len) with its records section in `codec`: the records are
 * decompressed (at most max_records_size bytes, as record_batch_check bounds them) and
 * compressed again, and the header keeps every field but attributes' codec bits,
 * batchLength and the CRC, which are recomputed. The caller has validated the batch
 * (record_batch_check). Writes a malloc()ed batch to *out (caller frees). Returns 0;
 * record_decompress's errors (ERR_INVALID_RECORD, ERR_MESSAGE_TOO_LARGE, ERR_NOMEM);
 * ERR_MESSAGE_TOO_LARGE if the new batch would pass INT32_MAX bytes. */
int record_batch_recompress(const uint8_t *buf, size_t len, int codec, size_t max_records_size,
                            uint8_t **out, size_t *out_len);

/* record_batch_check and, when the batch passes and is not already in `codec`,
 * record_batch_recompress from the records the check decompressed (one decompression, not
 * two): *out is then the new malloc()ed batch (caller frees) and *b its header; when the
 * batch already is in `codec`, *out is NULL and *b the batch's own header. *scan describes
 * the records either way. Returns record_batch_check's errors, then record_compress's. */
int record_batch_check_recompress(const uint8_t *buf, size_t len, size_t max_records_size,
                                  int codec, struct record_batch *b, struct record_scan *scan,
                                  uint8_t **out, size_t *out_len);

#endif
