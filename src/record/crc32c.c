/* SPDX-License-Identifier: Apache-2.0 */
/* CRC32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of Kafka record
 * batches. Every produced batch is checksummed once on the way in, so this is on the hot
 * path: on x86-64 with SSE4.2 the crc32 instruction does 8 bytes at a time in three
 * independent streams (the instruction has a latency of 3 cycles but issues every cycle,
 * so one stream would leave two thirds of the unit idle). The streams are joined by
 * "shifting" a CRC over a run of zero bytes, which is a multiplication by x^(8n) modulo the
 * polynomial, done with four byte-indexed tables per stream length. Elsewhere a
 * slicing-by-8 table gives the same result.
 *
 * All the CRC arithmetic below works on the raw register (no pre/post inversion); only the
 * entry points invert, so that crc = record_crc32c(record_crc32c(0, a), b) continues a
 * checksum across calls as Kafka's Crc32C.update does. */
#include <pthread.h>
#include <string.h>

#include "record/record.h"
#include "record/record_int.h"

#if defined(__x86_64__)
#include <nmmintrin.h>
#define CRC32C_HAVE_HW 1
#else
#define CRC32C_HAVE_HW 0
#endif

#define CRC32C_POLY 0x82F63B78u

/* Stream lengths for the interleaved hardware loop: LONG for big batches, SHORT for the
 * typical 16 KiB producer batch and its tail. Both are multiples of 8. */
#define CRC32C_LONG 8192
#define CRC32C_SHORT 256

static uint32_t sw_table[8][256];
static uint32_t shift_long[4][256];
static uint32_t shift_short[4][256];
static bool have_hw;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* a * b modulo the polynomial, both in the reflected representation (bit 31 = x^0).
 * a must be non-zero. */
static uint32_t multmodp(uint32_t a, uint32_t b)
{
    uint32_t prod = 0;

    for (uint32_t m = 1u << 31; m != 0; m >>= 1) {
        if (a & m)
            prod ^= b;
        b = (b & 1) ? (b >> 1) ^ CRC32C_POLY : b >> 1;
    }
    return prod;
}

/* x^(8 * nbytes) modulo the polynomial: the operator that moves a CRC register past nbytes
 * zero bytes. */
static uint32_t zeros_operator(size_t nbytes)
{
    uint32_t result = 1u << 31; /* x^0 */
    uint32_t x2k = 1u << 30;    /* x^(2^k), starting at x^1 */
    uint64_t n = (uint64_t)nbytes * 8;

    while (n) {
        if (n & 1)
            result = multmodp(x2k, result);
        x2k = multmodp(x2k, x2k);
        n >>= 1;
    }
    return result;
}

static void build_shift_table(uint32_t table[4][256], size_t nbytes)
{
    uint32_t op = zeros_operator(nbytes);

    for (int k = 0; k < 4; k++)
        for (uint32_t n = 0; n < 256; n++)
            table[k][n] = multmodp(op, n << (8 * k));
}

static void crc32c_init(void)
{
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int i = 0; i < 8; i++)
            c = (c & 1) ? (c >> 1) ^ CRC32C_POLY : c >> 1;
        sw_table[0][n] = c;
    }
    for (uint32_t n = 0; n < 256; n++)
        for (int k = 1; k < 8; k++)
            sw_table[k][n] = (sw_table[k - 1][n] >> 8) ^ sw_table[0][sw_table[k - 1][n] & 0xff];
    build_shift_table(shift_long, CRC32C_LONG);
    build_shift_table(shift_short, CRC32C_SHORT);
#if CRC32C_HAVE_HW
    __builtin_cpu_init();
    have_hw = __builtin_cpu_supports("sse4.2");
#endif
}

/* Little-endian 64-bit load from any alignment; compiles to one mov on x86-64. */
static inline uint64_t load_le64(const uint8_t *p)
{
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
           (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 |
           (uint64_t)p[7] << 56;
}

uint32_t record_crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
    const uint8_t *p = buf;

    pthread_once(&init_once, crc32c_init);
    crc = ~crc;
    while (len >= 8) {
        uint64_t w = load_le64(p) ^ crc;
        crc = sw_table[7][w & 0xff] ^ sw_table[6][(w >> 8) & 0xff] ^ sw_table[5][(w >> 16) & 0xff] ^
              sw_table[4][(w >> 24) & 0xff] ^ sw_table[3][(w >> 32) & 0xff] ^
              sw_table[2][(w >> 40) & 0xff] ^ sw_table[1][(w >> 48) & 0xff] ^ sw_table[0][w >> 56];
        p += 8;
        len -= 8;
    }
    while (len--)
        crc = sw_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

#if CRC32C_HAVE_HW
static inline uint32_t shift_crc(const uint32_t table[4][256], uint32_t crc)
{
    return table[0][crc & 0xff] ^ table[1][(crc >> 8) & 0xff] ^ table[2][(crc >> 16) & 0xff] ^
           table[3][crc >> 24];
}

__attribute__((target("sse4.2"))) uint32_t record_crc32c_hw(uint32_t crc, const void *buf,
                                                            size_t len)
{
    const uint8_t *p = buf;
    uint64_t c0 = ~crc;

    pthread_once(&init_once, crc32c_init);
    while (len > 0 && ((uintptr_t)p & 7) != 0) {
        c0 = _mm_crc32_u8((uint32_t)c0, *p++);
        len--;
    }
    while (len >= 3 * CRC32C_LONG) {
        uint64_t c1 = 0, c2 = 0;
        const uint8_t *end = p + CRC32C_LONG;
        do {
            c0 = _mm_crc32_u64(c0, load_le64(p));
            c1 = _mm_crc32_u64(c1, load_le64(p + CRC32C_LONG));
            c2 = _mm_crc32_u64(c2, load_le64(p + 2 * CRC32C_LONG));
            p += 8;
        } while (p < end);
        c0 = shift_crc(shift_long, (uint32_t)c0) ^ (uint32_t)c1;
        c0 = shift_crc(shift_long, (uint32_t)c0) ^ (uint32_t)c2;
        p += 2 * CRC32C_LONG;
        len -= 3 * CRC32C_LONG;
    }
    while (len >= 3 * CRC32C_SHORT) {
        uint64_t c1 = 0, c2 = 0;
        const uint8_t *end = p + CRC32C_SHORT;
        do {
            c0 = _mm_crc32_u64(c0, load_le64(p));
            c1 = _mm_crc32_u64(c1, load_le64(p + CRC32C_SHORT));
            c2 = _mm_crc32_u64(c2, load_le64(p + 2 * CRC32C_SHORT));
            p += 8;
        } while (p < end);
        c0 = shift_crc(shift_short, (uint32_t)c0) ^ (uint32_t)c1;
        c0 = shift_crc(shift_short, (uint32_t)c0) ^ (uint32_t)c2;
        p += 2 * CRC32C_SHORT;
        len -= 3 * CRC32C_SHORT;
    }
    while (len >= 8) {
        c0 = _mm_crc32_u64(c0, load_le64(p));
        p += 8;
        len -= 8;
    }
    while (len > 0) {
        c0 = _mm_crc32_u8((uint32_t)c0, *p++);
        len--;
    }
    return ~(uint32_t)c0;
}
#else
uint32_t record_crc32c_hw(uint32_t crc, const void *buf, size_t len)
{
    return record_crc32c_sw(crc, buf, len);
}
#endif

bool record_crc32c_hw_available(void)
{
    pthread_once(&init_once, crc32c_init);
    return have_hw;
}

uint32_t record_crc32c(uint32_t crc, const void *buf, size_t len)
{
    pthread_once(&init_once, crc32c_init);
    if (have_hw)
        return record_crc32c_hw(crc, buf, len);
    return record_crc32c_sw(crc, buf, len);
}
