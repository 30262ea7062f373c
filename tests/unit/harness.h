/* SPDX-License-Identifier: Apache-2.0 */
/* A tiny unit-test harness: TEST(name) registers a test, CHECK* record failures and go on,
 * REQUIRE* stop the test. The runner (harness.c) runs all, or those matching argv[1]. */
#ifndef TALLY_TEST_HARNESS_H
#define TALLY_TEST_HARNESS_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

struct test_case {
    const char *name;
    void (*fn)(void);
    struct test_case *next;
};

void harness_register(struct test_case *tc);
void harness_fail(const char *file, int line, const char *what);
extern int harness_current_failed;

/* Flushes fd and drops its pages from `from` to the end out of the page cache, asking again
 * until mincore(2) finds none of them there: a folio that another CPU's LRU batch or the
 * kernel's own page scanner (DAMON, seen on these machines) holds for a moment is skipped by
 * one POSIX_FADV_DONTNEED. False if they were still cached after a second of asking. */
bool harness_drop_cached(int fd, off_t from);

#define TEST(name)                                                                                 \
    static void test_##name(void);                                                                 \
    static struct test_case tc_##name = {#name, test_##name, NULL};                                \
    __attribute__((constructor)) static void reg_##name(void)                                      \
    {                                                                                              \
        harness_register(&tc_##name);                                                              \
    }                                                                                              \
    static void test_##name(void)

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            harness_fail(__FILE__, __LINE__, #cond);                                               \
    } while (0)

#define REQUIRE(cond)                                                                              \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            harness_fail(__FILE__, __LINE__, #cond);                                               \
            return;                                                                                \
        }                                                                                          \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                                         \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        if (a_ != b_) {                                                                            \
            char m_[256];                                                                          \
            snprintf(m_, sizeof m_, "%s == %s (%lld != %lld)", #a, #b, a_, b_);                    \
            harness_fail(__FILE__, __LINE__, m_);                                                  \
        }                                                                                          \
    } while (0)

#define CHECK_EQ_STR(a, b)                                                                         \
    do {                                                                                           \
        const char *a_ = (a), *b_ = (b);                                                           \
        if (!a_ || !b_ || strcmp(a_, b_) != 0) {                                                   \
            char m_[512];                                                                          \
            snprintf(m_, sizeof m_, "%s == %s (\"%s\" != \"%s\")", #a, #b, a_ ? a_ : "(null)",     \
                     b_ ? b_ : "(null)");                                                          \
            harness_fail(__FILE__, __LINE__, m_);                                                  \
        }                                                                                          \
    } while (0)

#endif
