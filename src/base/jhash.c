/* SPDX-License-Identifier: Apache-2.0 */
/* Java's String.hashCode over UTF-8 input (see jhash.h). */
#include "jhash.h"

/* Decodes one UTF-8 sequence at s (NUL-terminated); returns its code point and moves *s past
 * it. A byte that does not start a valid, shortest-form sequence is one U+FFFD, as Java's
 * decoder replaces a malformed input. */
static uint32_t utf8_next(const unsigned char **s)
{
    const unsigned char *p = *s;
    uint32_t c = p[0], min;
    int n;

    if (c < 0x80) {
        *s = p + 1;
        return c;
    }
    if ((c & 0xe0) == 0xc0) {
        n = 1;
        c &= 0x1f;
        min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
        n = 2;
        c &= 0x0f;
        min = 0x800;
    } else if ((c & 0xf8) == 0xf0) {
        n = 3;
        c &= 0x07;
        min = 0x10000;
    } else {
        *s = p + 1;
        return 0xfffd;
    }
    for (int i = 1; i <= n; i++) {
        if ((p[i] & 0xc0) != 0x80) {
            *s = p + 1;
            return 0xfffd;
        }
        c = (c << 6) | (p[i] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) {
        *s = p + 1;
        return 0xfffd;
    }
    *s = p + n + 1;
    return c;
}

int32_t java_string_hash(const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    uint32_t h = 0;

    while (*s) {
        uint32_t c = utf8_next(&s);
        if (c >= 0x10000) {
            /* A supplementary character is two UTF-16 code units: its surrogate pair. */
            c -= 0x10000;
            h = 31 * h + (0xd800 + (c >> 10));
            h = 31 * h + (0xdc00 + (c & 0x3ff));
        } else {
            h = 31 * h + c;
        }
    }
    return (int32_t)h;
}

int32_t java_partition_for(const char *key, int32_t n_partitions)
{
    int32_t h = java_string_hash(key);
    /* Kafka's Utils.abs: INT32_MIN maps to 0 (h & 0x7fffffff), not to itself. */
    int32_t a = h == INT32_MIN ? 0 : (h < 0 ? -h : h);
    return n_partitions > 0 ? a % n_partitions : 0;
}
