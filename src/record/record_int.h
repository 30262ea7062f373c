/* SPDX-License-Identifier: Apache-2.0 */
/* record internals: the CRC32C implementations behind record_crc32c (exposed so the
 * unit tests can check that they all give the same answers) and the varint readers that the
 * record walk and the timestamp look-ups share. Not for other modules. */
#ifndef TALLY_RECORD_INT_H
#define TALLY_RECORD_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Table-driven CRC32C (slicing by 8); works on every CPU. Same contract as record_crc32c. */
uint32_t record_crc32c_sw(uint32_t crc, const void *buf, size_t len);

/* SSE4.2 CRC32C, three streams interleaved. Only call when record_crc32c_hw_available(). */
uint32_t record_crc32c_hw(uint32_t crc, const void *buf, size_t len);

/* Whether this CPU has the SSE4.2 crc32 instruction (always false off x86-64). */
bool record_crc32c_hw_available(void);

/* CRC32C folded with carry-less multiplication, 512 bits at a time (VPCLMULQDQ, AVX-512), the
 * tail on the crc32 instruction; buffers under 256 bytes go to record_crc32c_hw. Only call
 * when record_crc32c_clmul_available(). */
uint32_t record_crc32c_clmul(uint32_t crc, const void *buf, size_t len);
bool record_crc32c_clmul_available(void);

struct record_batch;
struct record_scan;

/* record_batch_parse, then the checks that need no record walk: CRC32C, a known codec,
 * recordCount >= 0 and lastOffsetDelta == recordCount - 1 (>= 0 for an empty batch). Same
 * returns as record_batch_validate. */
int record_batch_check_header(const uint8_t *buf, size_t len, struct record_batch *b);

/* Walks count uncompressed records in [p, end): each must fill exactly its announced length,
 * carry offsetDelta == its index, and together they must end exactly at end. With scan, also
 * computes the records' timestamps (base_timestamp + timestampDelta, a sum that overflows is
 * an invalid record) into scan->max_timestamp / min_timestamp. Reads only; allocates nothing.
 * Returns 0 or ERR_INVALID_RECORD. */
int record_walk(const uint8_t *p, const uint8_t *end, int32_t count, int64_t base_timestamp,
                struct record_scan *scan);

/* Reads a zigzag varint of at most 5 bytes from [*pp, end) and advances *pp. Returns 0, or
 * -1 if the input ends first or the encoding runs longer (as Kafka's ByteUtils.readVarint,
 * bits beyond 32 in the fifth byte are ignored). */
static inline int get_varint(const uint8_t **pp, const uint8_t *end, int32_t *out)
{
    const uint8_t *p = *pp;
    uint32_t raw = 0;

    if (p < end && *p < 0x80) { /* the common case: lengths and deltas below 64 */
        raw = *p;
        *pp = p + 1;
        *out = (int32_t)((raw >> 1) ^ (0u - (raw & 1)));
        return 0;
    }
    if (end - p >= 2 && p[1] < 0x80) { /* two bytes: a 1 KiB value's length */
        raw = (uint32_t)(p[0] & 0x7f) | (uint32_t)p[1] << 7;
        *pp = p + 2;
        *out = (int32_t)((raw >> 1) ^ (0u - (raw & 1)));
        return 0;
    }
    for (unsigned shift = 0; shift < 35; shift += 7) {
        uint8_t byte;
        if (p == end)
            return -1;
        byte = *p++;
        raw |= (uint32_t)(byte & 0x7f) << shift;
        if ((byte & 0x80) == 0) {
            *pp = p;
            *out = (int32_t)((raw >> 1) ^ (0u - (raw & 1)));
            return 0;
        }
    }
    return -1;
}

/* As get_varint for a varlong of at most 10 bytes. */
static inline int get_varlong(const uint8_t **pp, const uint8_t *end, int64_t *out)
{
    const uint8_t *p = *pp;
    uint64_t raw = 0;

    if (p < end && *p < 0x80) { /* a timestamp delta below 64 ms */
        raw = *p;
        *pp = p + 1;
        *out = (int64_t)((raw >> 1) ^ (0u - (raw & 1)));
        return 0;
    }
    for (unsigned shift = 0; shift < 70; shift += 7) {
        uint8_t byte;
        if (p == end)
            return -1;
        byte = *p++;
        raw |= (uint64_t)(byte & 0x7f) << shift;
        if ((byte & 0x80) == 0) {
            *pp = p;
            *out = (int64_t)((raw >> 1) ^ (0u - (raw & 1)));
            return 0;
        }
    }
    return -1;
}

#endif
