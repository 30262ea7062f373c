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
 * Longer buffers (a produced batch is usually tens or hundreds of KiB) go faster still by
 * folding with carry-less multiplication where the CPU has VPCLMULQDQ with AVX-512 (twice the
 * crc32 instruction's speed on this project's machines; 128-bit PCLMULQDQ was no faster than
 * the three streams there, so there is none): 64 bytes per 512-bit register. Four registers take
 * consecutive blocks; each step moves a register's value forward past the data the four
 * cover (one multiplication per 64-bit half by x^n mod P, precomputed) and adds the next
 * block there. What is left is one 128-bit value with the same remainder as everything
 * folded, whose CRC the crc32 instruction then takes over, with the tail. The constants come
 * from the same x^n arithmetic as the stream-joining tables.
 *
 * All the CRC arithmetic below works on the raw register (no pre/post inversion); only the
 * entry points invert, so that crc = record_crc32c(record_crc32c(0, a), b) continues a
 * checksum across calls as Kafka's Crc32C.update does. */
#include <pthread.h>
#include <string.h>

#include "record/record.h"
#include "record/record_int.h"

#if defined(__x86_64__)
#include <immintrin.h>
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

/* Buffers at least this long are folded (where the CPU can), shorter ones take the streams. */
#define CRC32C_FOLD_MIN 1024

static uint32_t sw_table[8][256];
static uint32_t shift_long[4][256];
static uint32_t shift_short[4][256];
static bool have_hw, have_clmul;
/* Folding constants, {for the low 64-bit half, for the high one} of a 128-bit value moved
 * forward by 2048, 512, 384, 256 and 128 bits (fold_constants). */
static uint64_t fold2048[2], fold512[2], fold384[2], fold256[2], fold128[2];
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

/* x^n modulo the polynomial, reflected (bit 31 = x^0). */
static uint32_t xpow_mod(uint64_t n)
{
    uint32_t result = 1u << 31; /* x^0 */
    uint32_t x2k = 1u << 30;    /* x^(2^k), starting at x^1 */

    while (n) {
        if (n & 1)
            result = multmodp(x2k, result);
        x2k = multmodp(x2k, x2k);
        n >>= 1;
    }
    return result;
}

/* x^(8 * nbytes) modulo the polynomial: the operator that moves a CRC register past nbytes
 * zero bytes. */
static uint32_t zeros_operator(size_t nbytes)
{
    return xpow_mod((uint64_t)nbytes * 8);
}

/* The multipliers that move a 128-bit value `bits` forward. Loaded little-endian, the value's
 * bit i stands for x^(127-i) (the first byte's low bit is the highest power), so its low half
 * is L(x)x^64 and its high half H(x), with bit i of either half standing for x^(63-i); a
 * carry-less product of such a half with a 64-bit c whose bit j stands for x^(64-j) lands in
 * the same 128-bit layout. Moving forward is a multiplication by x^bits: c must be congruent
 * to x^(64+bits) for the low half and to x^bits for the high one, and of degree 1..64 to fit,
 * so c = x * (x^(63+bits) mod P), which in that layout is the reflected remainder shifted up
 * 32 bits (and likewise with x^(bits-1)). */
static void fold_constants(uint64_t k[2], uint64_t bits)
{
    k[0] = (uint64_t)xpow_mod(63 + bits) << 32;
    k[1] = (uint64_t)xpow_mod(bits - 1) << 32;
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
    fold_constants(fold2048, 2048);
    fold_constants(fold512, 512);
    fold_constants(fold384, 384);
    fold_constants(fold256, 256);
    fold_constants(fold128, 128);
#if CRC32C_HAVE_HW
    __builtin_cpu_init();
    have_hw = __builtin_cpu_supports("sse4.2");
    have_clmul = have_hw && __builtin_cpu_supports("avx512f") &&
                 __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("vpclmulqdq");
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

/* The CRC register after the 16 bytes of v, from a zero register: v's remainder times x^32,
 * which is what the folded data left. */
__attribute__((target("sse4.2"))) static uint32_t crc_of_128(__m128i v)
{
    uint64_t c = _mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(v));
    return (uint32_t)_mm_crc32_u64(c, (uint64_t)_mm_extract_epi64(v, 1));
}

__attribute__((target("avx512f,avx512vl,vpclmulqdq"))) static inline __m512i
fold512_step(__m512i x, __m512i k, __m512i d)
{
    /* 0x96: a ^ b ^ c */
    return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00),
                                     _mm512_clmulepi64_epi128(x, k, 0x11), d, 0x96);
}

/* k as the {low, high} multipliers of each of a 512-bit register's four 128-bit lanes. */
__attribute__((target("avx512f"))) static inline __m512i in_every_lane(const uint64_t k[2])
{
    return _mm512_broadcast_i32x4(_mm_set_epi64x((long long)k[1], (long long)k[0]));
}

/* Folds [p, p + len), len >= 256: four 512-bit registers over 256-byte blocks, then one over
 * 64-byte blocks, whose four 128-bit lanes are folded into the last. Returns the register
 * after the folded bytes, with *done the bytes taken (the rest, under 64, is the caller's). */
__attribute__((target("sse4.2,avx512f,avx512vl,vpclmulqdq"))) static uint32_t
fold_by_512(uint32_t c, const uint8_t *p, size_t len, size_t *done)
{
    const uint8_t *start = p;
    __m512i k2048 = in_every_lane(fold2048), k512 = in_every_lane(fold512);
    /* Lane i of the last register moves past the lanes after it: 384, 256, 128 bits. */
    __m512i klanes =
        _mm512_set_epi64(0, 0, (long long)fold128[1], (long long)fold128[0], (long long)fold256[1],
                         (long long)fold256[0], (long long)fold384[1], (long long)fold384[0]);
    __m512i x0 =
        _mm512_xor_si512(_mm512_loadu_si512(p), _mm512_castsi128_si512(_mm_cvtsi32_si128((int)c)));
    __m512i x1 = _mm512_loadu_si512(p + 64);
    __m512i x2 = _mm512_loadu_si512(p + 128);
    __m512i x3 = _mm512_loadu_si512(p + 192);

    p += 256;
    len -= 256;
    while (len >= 256) {
        x0 = fold512_step(x0, k2048, _mm512_loadu_si512(p));
        x1 = fold512_step(x1, k2048, _mm512_loadu_si512(p + 64));
        x2 = fold512_step(x2, k2048, _mm512_loadu_si512(p + 128));
        x3 = fold512_step(x3, k2048, _mm512_loadu_si512(p + 192));
        p += 256;
        len -= 256;
    }
    x1 = fold512_step(x0, k512, x1);
    x2 = fold512_step(x1, k512, x2);
    x3 = fold512_step(x2, k512, x3);
    while (len >= 64) {
        x3 = fold512_step(x3, k512, _mm512_loadu_si512(p));
        p += 64;
        len -= 64;
    }
    __m512i t = _mm512_xor_si512(_mm512_clmulepi64_epi128(x3, klanes, 0x00),
                                 _mm512_clmulepi64_epi128(x3, klanes, 0x11));
    __m128i r = _mm_xor_si128(_mm512_extracti32x4_epi32(t, 0), _mm512_extracti32x4_epi32(t, 1));
    r = _mm_xor_si128(r, _mm512_extracti32x4_epi32(t, 2));
    r = _mm_xor_si128(r, _mm512_extracti32x4_epi32(x3, 3));
    *done = (size_t)(p - start);
    return crc_of_128(r);
}

/* The fold, then the tail (under 64 bytes) on the crc32 instruction, continuing from the
 * fold's register (record_crc32c_hw inverts what it is given and what it returns). */
static uint32_t crc32c_folded(uint32_t crc, const void *buf, size_t len)
{
    size_t done = 0;
    uint32_t c;

    if (len < 256)
        return record_crc32c_hw(crc, buf, len);
    c = fold_by_512(~crc, buf, len, &done);
    return record_crc32c_hw(~c, (const uint8_t *)buf + done, len - done);
}

uint32_t record_crc32c_clmul(uint32_t crc, const void *buf, size_t len)
{
    pthread_once(&init_once, crc32c_init);
    return crc32c_folded(crc, buf, len);
}
#else
uint32_t record_crc32c_hw(uint32_t crc, const void *buf, size_t len)
{
    return record_crc32c_sw(crc, buf, len);
}

uint32_t record_crc32c_clmul(uint32_t crc, const void *buf, size_t len)
{
    return record_crc32c_sw(crc, buf, len);
}
#endif

bool record_crc32c_hw_available(void)
{
    pthread_once(&init_once, crc32c_init);
    return have_hw;
}

bool record_crc32c_clmul_available(void)
{
    pthread_once(&init_once, crc32c_init);
    return have_clmul;
}

uint32_t record_crc32c(uint32_t crc, const void *buf, size_t len)
{
    pthread_once(&init_once, crc32c_init);
#if CRC32C_HAVE_HW
    if (len >= CRC32C_FOLD_MIN && have_clmul)
        return crc32c_folded(crc, buf, len);
#endif
    if (have_hw)
        return record_crc32c_hw(crc, buf, len);
    return record_crc32c_sw(crc, buf, len);
}
