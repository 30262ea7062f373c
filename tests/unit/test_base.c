/* SPDX-License-Identifier: Apache-2.0 */
/* base unit tests: the error list, log lines escape what a client could use to forge a line, and a
 * rate limit holds back repeats and counts them. Lines are captured by pointing stderr at a
 * temporary file. */
#include "harness.h"

#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/err.h"
#include "base/fault.h"
#include "base/jhash.h"
#include "base/slog.h"

/* Runs fn with stderr redirected; returns what it wrote (static buffer). */
static const char *capture(void (*fn)(void))
{
    static char out[8192];
    FILE *tmp = tmpfile();
    int saved = dup(STDERR_FILENO);
    size_t n;

    if (!tmp || saved < 0)
        return "";
    dup2(fileno(tmp), STDERR_FILENO);
    fn();
    dup2(saved, STDERR_FILENO);
    close(saved);
    rewind(tmp);
    n = fread(out, 1, sizeof out - 1, tmp);
    out[n] = '\0';
    fclose(tmp);
    return out;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static void forge_attempt(void)
{
    slog_warn("net", "client id %s", "evil\n2026-01-01T00:00:00.000Z ERROR [main] \x1b[31mforged");
}

TEST(log_line_escapes_control_bytes_from_clients)
{
    const char *out = capture(forge_attempt);
    CHECK_EQ_INT(count_lines(out), 1);
    CHECK(strstr(out, "evil\\x0a2026") != NULL);
    CHECK(strstr(out, "\\x1b[31mforged") != NULL);
    CHECK(strchr(out, 0x1b) == NULL);
}

TEST(log_escape_bounds_and_escapes_binary)
{
    char buf[16];
    CHECK_EQ_STR(slog_escape("ab\0c", 4, buf, sizeof buf), "ab\\x00c");
    CHECK_EQ_STR(slog_escape("0123456789abcdefghij", 20, buf, sizeof buf), "0123456789ab...");
    CHECK(strlen(slog_escape("\n\n\n\n\n\n", 6, buf, sizeof buf)) < sizeof buf);
}

static void repeated(void)
{
    struct slog_limit lim = {0};
    int written = 0;
    for (int i = 0; i < 1000; i++)
        written += slog_warn_limited(&lim, 60000, "net", "unsupported API %d", i);
    /* The window is a minute: only the first passes; the rest are counted. */
    CHECK_EQ_INT(written, 1);
    CHECK_EQ_INT(lim.suppressed, 999);
    lim.next_ms = 1; /* as if the window had passed */
    CHECK(slog_warn_limited(&lim, 60000, "net", "unsupported API again"));
    CHECK_EQ_INT(lim.suppressed, 0);
}

TEST(log_limit_counts_suppressed_repeats)
{
    const char *out = capture(repeated);
    CHECK_EQ_INT(count_lines(out), 2);
    CHECK(strstr(out, "(999 similar lines suppressed)") != NULL);
}

/* The enum and the names come from one X-macro list: every code has its own name, values
 * are distinct, and a code outside the list has none. */
TEST(err_list_names_every_code_once)
{
    static const struct {
        int value;
        const char *name;
    } all[] = {
#define ERR_ROW(name, value) {value, #name},
        ERR_LIST(ERR_ROW)
#undef ERR_ROW
    };
    size_t n = sizeof all / sizeof all[0];

    CHECK(n > 60);
    for (size_t i = 0; i < n; i++) {
        CHECK_EQ_STR(err_name(all[i].value), all[i].name);
        for (size_t j = i + 1; j < n; j++)
            CHECK(all[i].value != all[j].value);
    }
    CHECK_EQ_STR(err_name(ERR_UNKNOWN_TOPIC_OR_PARTITION), "UNKNOWN_TOPIC_OR_PARTITION");
    CHECK_EQ_INT(ERR_UNKNOWN_TOPIC_OR_PARTITION, 3);
    CHECK_EQ_INT(ERR_INCONSISTENT_TOPIC_ID, 103);
    CHECK_EQ_INT(ERR_IO, -1002);
    CHECK_EQ_STR(err_name(ERR_SHUTDOWN), "SHUTDOWN");
    CHECK_EQ_STR(err_name(12345), "UNKNOWN");
}

TEST(fault_points_armed_only_by_name_from_the_environment)
{
    setenv("TALLY_TEST_FAULT", "txn:after_prepare,txn:lose_entry", 1);
    fault_init();
    CHECK(fault_armed("txn:after_prepare"));
    CHECK(fault_armed("txn:lose_entry"));
    CHECK(!fault_armed("txn:after"));
    CHECK(!fault_armed("txn:before_prepare"));
    fault_point("txn:before_prepare"); /* not armed: returns */
    unsetenv("TALLY_TEST_FAULT");
    fault_init();
    CHECK(!fault_armed("txn:lose_entry"));
}

/* The in-process stop (unit tests) answers for its one name only, and never arms the
 * process-ending point of the same name. */
TEST(fault_stop_at_names_one_point)
{
    unsetenv("TALLY_TEST_FAULT");
    fault_init();
    CHECK(!fault_stop("cleaner:swap"));
    fault_stop_at("cleaner:swap");
    CHECK(fault_stop("cleaner:swap"));
    CHECK(!fault_stop("cleaner:swapin"));
    CHECK(!fault_armed("cleaner:swap"));
    fault_stop_at(NULL);
    CHECK(!fault_stop("cleaner:swap"));
}

TEST(java_partition_for_maps_int_min_to_zero)
{
    CHECK_EQ_INT(java_string_hash("polygenelubricants"), INT32_MIN);
    CHECK_EQ_INT(java_partition_for("polygenelubricants", 50), 0);
    CHECK_EQ_INT(java_partition_for("ab", 50), 3105 % 50);
    CHECK_EQ_INT(java_partition_for("x", 0), 0);
}
