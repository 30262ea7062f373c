/* SPDX-License-Identifier: Apache-2.0 */
/* metrics unit tests: the registry and its text rendering (Prometheus exposition format
 * 0.0.4) — exact text for a small registry, escaping of label values and help text,
 * histograms with cumulative buckets up to +Inf and their _sum and _count, value formatting,
 * the per-family series cap, reset, and invalid declarations refused. */
#include "harness.h"

#include <math.h>
#include <stdlib.h>

#include "base/metrics.h"
#include "exporter/exporter.h"

/* Checks `text` against `want`, printing both when they differ. */
#define CHECK_TEXT(text, want) check_text(__FILE__, __LINE__, text, want)
static void check_text(const char *file, int line, const char *text, const char *want)
{
    if (text != NULL && strcmp(text, want) == 0)
        return;
    fprintf(stderr, "--- got:\n%s--- want:\n%s---\n", text ? text : "(null)\n", want);
    harness_fail(file, line, "rendered text differs");
}

static char *render(const struct metrics *m)
{
    char *text = NULL;
    size_t len = 0;
    if (metrics_render(m, &text, &len) != 0)
        return NULL;
    if (strlen(text) != len) {
        free(text);
        return NULL;
    }
    return text;
}

TEST(metrics_renders_counters_and_gauges_exactly)
{
    struct metrics *m = metrics_new(0);
    REQUIRE(m);
    const char *api[] = {"api"};
    const char *tp[] = {"topic", "partition"};
    struct metrics_family *req = metrics_family_new(m, METRICS_COUNTER, "tally_requests_total",
                                                    "Requests received.", 1, api, 0, NULL);
    struct metrics_family *up =
        metrics_family_new(m, METRICS_GAUGE, "tally_up", "Always 1.", 0, NULL, 0, NULL);
    struct metrics_family *hw = metrics_family_new(m, METRICS_GAUGE, "tally_partition_hw",
                                                   "High watermark.", 2, tp, 0, NULL);
    REQUIRE(req && up && hw);
    metrics_add(metrics_series1(req, "Produce"), 2);
    metrics_add(metrics_series1(req, "Fetch"), 1);
    metrics_add(metrics_series1(req, "Produce"), 1);
    metrics_set(metrics_series0(up), 1);
    metrics_set(metrics_series2(hw, "orders", "0"), 1234567890123);
    metrics_set(metrics_series2(hw, "orders", "1"), -1);
    char *text = render(m);
    CHECK_TEXT(text, "# HELP tally_requests_total Requests received.\n"
                     "# TYPE tally_requests_total counter\n"
                     "tally_requests_total{api=\"Produce\"} 3\n"
                     "tally_requests_total{api=\"Fetch\"} 1\n"
                     "# HELP tally_up Always 1.\n"
                     "# TYPE tally_up gauge\n"
                     "tally_up 1\n"
                     "# HELP tally_partition_hw High watermark.\n"
                     "# TYPE tally_partition_hw gauge\n"
                     "tally_partition_hw{topic=\"orders\",partition=\"0\"} 1234567890123\n"
                     "tally_partition_hw{topic=\"orders\",partition=\"1\"} -1\n");
    free(text);
    CHECK(metrics_value(metrics_series1(req, "Produce")) == 3);
    metrics_free(m);
}

TEST(metrics_family_without_labels_renders_zero)
{
    struct metrics *m = metrics_new(0);
    REQUIRE(m);
    REQUIRE(metrics_family_new(m, METRICS_COUNTER, "x_total", "X.", 0, NULL, 0, NULL));
    const char *l[] = {"a"};
    REQUIRE(metrics_family_new(m, METRICS_GAUGE, "y", "Y.", 1, l, 0, NULL));
    char *text = render(m);
    CHECK_TEXT(text, "# HELP x_total X.\n# TYPE x_total counter\nx_total 0\n"
                     "# HELP y Y.\n# TYPE y gauge\n");
    free(text);
    metrics_free(m);
}

TEST(metrics_escapes_label_values_and_help)
{
    struct metrics *m = metrics_new(0);
    REQUIRE(m);
    const char *l[] = {"topic"};
    struct metrics_family *f = metrics_family_new(
        m, METRICS_COUNTER, "t_total", "Back\\slash and\nnewline \"kept\".", 1, l, 0, NULL);
    REQUIRE(f);
    metrics_add(metrics_series1(f, "a\"b\\c\nd"), 1);
    metrics_add(metrics_series1(f, ""), 1);
    metrics_add(metrics_series1(f, "\"first and last\\"), 1);
    metrics_add(metrics_series1(f, "\n\n"), 1);
    char *text = render(m);
    CHECK_TEXT(text, "# HELP t_total Back\\\\slash and\\nnewline \"kept\".\n"
                     "# TYPE t_total counter\n"
                     "t_total{topic=\"a\\\"b\\\\c\\nd\"} 1\n"
                     "t_total{topic=\"\"} 1\n"
                     "t_total{topic=\"\\\"first and last\\\\\"} 1\n"
                     "t_total{topic=\"\\n\\n\"} 1\n");
    free(text);
    metrics_free(m);
}

TEST(metrics_histogram_buckets_are_cumulative)
{
    struct metrics *m = metrics_new(0);
    REQUIRE(m);
    const double b[] = {0.125, 0.5, 1}; /* binary fractions: the sum is exact */
    const char *l[] = {"api"};
    struct metrics_family *f =
        metrics_family_new(m, METRICS_HISTOGRAM, "lat_seconds", "Latency.", 1, l, 3, b);
    REQUIRE(f);
    struct metrics_series *s = metrics_series1(f, "Produce");
    metrics_observe(s, 0.0625);
    metrics_observe(s, 0.125); /* on the bound: in that bucket (le is "<=") */
    metrics_observe(s, 0.75);
    metrics_observe(s, 2.5); /* past every bound: only in +Inf */
    metrics_add(s, 7);       /* not a counter: ignored */
    char *text = render(m);
    CHECK_TEXT(text, "# HELP lat_seconds Latency.\n"
                     "# TYPE lat_seconds histogram\n"
                     "lat_seconds_bucket{api=\"Produce\",le=\"0.125\"} 2\n"
                     "lat_seconds_bucket{api=\"Produce\",le=\"0.5\"} 2\n"
                     "lat_seconds_bucket{api=\"Produce\",le=\"1\"} 3\n"
                     "lat_seconds_bucket{api=\"Produce\",le=\"+Inf\"} 4\n"
                     "lat_seconds_sum{api=\"Produce\"} 3.4375\n"
                     "lat_seconds_count{api=\"Produce\"} 4\n");
    free(text);
    CHECK(metrics_value(s) == 4);
    metrics_free(m);
}

TEST(metrics_histogram_without_labels)
{
    struct metrics *m = metrics_new(0);
    REQUIRE(m);
    const double b[] = {1, 2};
    struct metrics_family *f =
        metrics_family_new(m, METRICS_HISTOGRAM, "h_seconds", "H.", 0, NULL, 2, b);
    REQUIRE(f);
    metrics_observe(metrics_series0(f), 1.5);
    char *text = render(m);
    CHECK_TEXT(text, "# HELP h_seconds H.\n# TYPE h_seconds histogram\n"
                     "h_seconds_bucket{le=\"1\"} 0\n"
                     "h_seconds_bucket{le=\"2\"} 1\n"
                     "h_seconds_bucket{le=\"+Inf\"} 1\n"
                     "h_seconds_sum 1.5\n"
                     "h_seconds_count 1\n");
    free(text);
    metrics_free(m);
}

TEST(metrics_formats_values)
{
    char buf[32];
    CHECK_EQ_STR(metrics_format_value(0, buf), "0");
    CHECK_EQ_STR(metrics_format_value(42, buf), "42");
    CHECK_EQ_STR(metrics_format_value(-3, buf), "-3");
    CHECK_EQ_STR(metrics_format_value(0.1, buf), "0.1");
    CHECK_EQ_STR(metrics_format_value(0.00025, buf), "0.00025");
    CHECK_EQ_STR(metrics_format_value(1.0 / 3, buf), "0.3333333333333333");
    CHECK_EQ_STR(metrics_format_value(INFINITY, buf), "+Inf");
    CHECK_EQ_STR(metrics_format_value(-INFINITY, buf), "-Inf");
    CHECK_EQ_STR(metrics_format_value(NAN, buf), "NaN");
    CHECK_EQ_STR(metrics_format_value(1e300, buf), "1e+300");
}

TEST(metrics_caps_series_per_family)
{
    struct metrics *m = metrics_new(3);
    REQUIRE(m);
    const char *l[] = {"p"};
    struct metrics_family *f = metrics_family_new(m, METRICS_GAUGE, "g", "G.", 1, l, 0, NULL);
    REQUIRE(f);
    char name[16];
    for (int i = 0; i < 100; i++) {
        snprintf(name, sizeof name, "%d", i);
        metrics_set(metrics_series1(f, name), i);
    }
    CHECK_EQ_INT(metrics_dropped(m), 97);
    CHECK(metrics_series1(f, "2") != NULL); /* an existing series is still found */
    CHECK(metrics_series1(f, "3") == NULL);
    char *text = render(m);
    CHECK_TEXT(text, "# HELP g G.\n# TYPE g gauge\ng{p=\"0\"} 0\ng{p=\"1\"} 1\ng{p=\"2\"} 2\n");
    free(text);
    /* Reset frees room: the collector's next round starts over. */
    metrics_family_reset(f);
    metrics_set(metrics_series1(f, "99"), 99);
    text = render(m);
    CHECK_TEXT(text, "# HELP g G.\n# TYPE g gauge\ng{p=\"99\"} 99\n");
    free(text);
    metrics_free(m);
}

TEST(metrics_index_finds_many_series)
{
    struct metrics *m = metrics_new(0);
    REQUIRE(m);
    const char *l[] = {"topic", "partition"};
    struct metrics_family *f =
        metrics_family_new(m, METRICS_COUNTER, "c_total", "C.", 2, l, 0, NULL);
    REQUIRE(f);
    char t[32], p[16];
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < 2000; i++) {
            snprintf(t, sizeof t, "topic-%d", i % 50);
            snprintf(p, sizeof p, "%d", i);
            metrics_add(metrics_series2(f, t, p), 1);
        }
    for (int i = 0; i < 2000; i += 97) {
        snprintf(t, sizeof t, "topic-%d", i % 50);
        snprintf(p, sizeof p, "%d", i);
        CHECK(metrics_value(metrics_series2(f, t, p)) == 3);
    }
    /* A long label value (past the lookup's stack buffer). */
    char big[2000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    metrics_add(metrics_series2(f, big, "0"), 5);
    CHECK(metrics_value(metrics_series2(f, big, "0")) == 5);
    metrics_free(m);
}

TEST(metrics_refuses_invalid_declarations)
{
    struct metrics *m = metrics_new(0);
    REQUIRE(m);
    const char *le[] = {"le"}, *dunder[] = {"__x"}, *dash[] = {"a-b"}, *ok[] = {"a"};
    const double up[] = {1, 2}, down[] = {2, 1}, inf[] = {1, INFINITY};
    CHECK(metrics_family_new(m, METRICS_GAUGE, "1abc", "", 0, NULL, 0, NULL) == NULL);
    CHECK(metrics_family_new(m, METRICS_GAUGE, "a-b", "", 0, NULL, 0, NULL) == NULL);
    CHECK(metrics_family_new(m, METRICS_GAUGE, "", "", 0, NULL, 0, NULL) == NULL);
    CHECK(metrics_family_new(m, METRICS_GAUGE, "g", "", 1, le, 0, NULL) == NULL);
    CHECK(metrics_family_new(m, METRICS_GAUGE, "g", "", 1, dunder, 0, NULL) == NULL);
    CHECK(metrics_family_new(m, METRICS_GAUGE, "g", "", 1, dash, 0, NULL) == NULL);
    CHECK(metrics_family_new(m, METRICS_HISTOGRAM, "h", "", 0, NULL, 2, down) == NULL);
    CHECK(metrics_family_new(m, METRICS_HISTOGRAM, "h", "", 0, NULL, 2, inf) == NULL);
    CHECK(metrics_family_new(m, METRICS_HISTOGRAM, "h", "", 0, NULL, 0, up) == NULL);
    struct metrics_family *g = metrics_family_new(m, METRICS_GAUGE, "ns:g", "", 1, ok, 0, NULL);
    CHECK(g != NULL);
    /* The same declaration again is the same family; a different one clashes. */
    CHECK(metrics_family_new(m, METRICS_GAUGE, "ns:g", "other help", 1, ok, 0, NULL) == g);
    CHECK(metrics_family_new(m, METRICS_COUNTER, "ns:g", "", 1, ok, 0, NULL) == NULL);
    CHECK(metrics_family_new(m, METRICS_GAUGE, "ns:g", "", 0, NULL, 0, NULL) == NULL);
    /* Wrong arity through the shorthands, and NULL handles, are no-ops. */
    CHECK(metrics_series0(g) == NULL);
    CHECK(metrics_series2(g, "a", "b") == NULL);
    metrics_add(NULL, 1);
    metrics_set(NULL, 1);
    metrics_observe(NULL, 1);
    CHECK(metrics_family_new(NULL, METRICS_GAUGE, "g", "", 0, NULL, 0, NULL) == NULL);
    CHECK(metrics_series1(NULL, "x") == NULL);
    metrics_free(m);
}

TEST(metrics_mark_and_sweep_keeps_what_was_looked_up)
{
    struct metrics *m = metrics_new(0);
    REQUIRE(m);
    const char *l[] = {"p"};
    struct metrics_family *f = metrics_family_new(m, METRICS_GAUGE, "g", "G.", 1, l, 0, NULL);
    struct metrics_family *u = metrics_family_new(m, METRICS_GAUGE, "u", "U.", 0, NULL, 0, NULL);
    REQUIRE(f && u);
    char name[16];
    for (int i = 0; i < 40; i++) {
        snprintf(name, sizeof name, "%d", i);
        metrics_set(metrics_series1(f, name), i);
    }
    struct metrics_series *keep = metrics_series1(f, "7");
    metrics_set(metrics_series0(u), 5);
    /* A scrape that finds only 7 and 30 (in another order), and a new one, 99. */
    metrics_family_mark(f);
    metrics_family_mark(u);
    metrics_set(metrics_series1(f, "30"), 300);
    CHECK(metrics_series1(f, "7") == keep); /* the same series, not a new one */
    metrics_set(metrics_series1(f, "99"), 99);
    metrics_family_sweep(f);
    metrics_family_sweep(u); /* a family without labels keeps its series */
    CHECK(metrics_value(keep) == 7);
    char *text = render(m);
    CHECK_TEXT(text, "# HELP g G.\n# TYPE g gauge\ng{p=\"7\"} 7\ng{p=\"30\"} 300\ng{p=\"99\"} 99\n"
                     "# HELP u U.\n# TYPE u gauge\nu 5\n");
    free(text);
    /* The index still finds every series left, and a removed one comes back at zero. */
    CHECK(metrics_series1(f, "30") != NULL && metrics_value(metrics_series1(f, "30")) == 300);
    CHECK(metrics_value(metrics_series1(f, "99")) == 99);
    CHECK(metrics_value(metrics_series1(f, "8")) == 0);
    /* Nothing looked up: all go. */
    metrics_family_mark(f);
    metrics_family_sweep(f);
    text = render(m);
    CHECK_TEXT(text, "# HELP g G.\n# TYPE g gauge\n# HELP u U.\n# TYPE u gauge\nu 5\n");
    free(text);
    metrics_free(m);
}

TEST(metrics_openmetrics_names_counter_families_without_total_and_ends_in_eof)
{
    struct metrics *m = metrics_new(0);
    REQUIRE(m);
    const char *api[] = {"api"};
    static const double b[] = {0.5, 1};
    struct metrics_family *req = metrics_family_new(m, METRICS_COUNTER, "tally_requests_total",
                                                    "Requests \"received\".", 1, api, 0, NULL);
    struct metrics_family *lat =
        metrics_family_new(m, METRICS_HISTOGRAM, "tally_lat_seconds", "Latency.", 0, NULL, 2, b);
    REQUIRE(req && lat);
    metrics_add(metrics_series1(req, "Produce"), 3);
    metrics_observe(metrics_series0(lat), 0.75);
    char *text = NULL;
    size_t len = 0;
    REQUIRE(metrics_render_as(m, METRICS_OPENMETRICS, &text, &len) == 0);
    CHECK_EQ_INT((long long)len, (long long)strlen(text));
    CHECK_TEXT(text, "# HELP tally_requests Requests \\\"received\\\".\n"
                     "# TYPE tally_requests counter\n"
                     "tally_requests_total{api=\"Produce\"} 3\n"
                     "# HELP tally_lat_seconds Latency.\n"
                     "# TYPE tally_lat_seconds histogram\n"
                     "tally_lat_seconds_bucket{le=\"0.5\"} 0\n"
                     "tally_lat_seconds_bucket{le=\"1\"} 1\n"
                     "tally_lat_seconds_bucket{le=\"+Inf\"} 1\n"
                     "tally_lat_seconds_sum 0.75\n"
                     "tally_lat_seconds_count 1\n"
                     "# EOF\n");
    free(text);
    /* The 0.0.4 text of the same registry keeps the counter's full name and the quotes. */
    REQUIRE(metrics_render_as(m, METRICS_TEXT, &text, &len) == 0);
    CHECK(strstr(text, "# TYPE tally_requests_total counter\n") != NULL);
    CHECK(strstr(text, "Requests \"received\".\n") != NULL);
    CHECK(strstr(text, "# EOF") == NULL);
    free(text);
    metrics_free(m);
}

TEST(metrics_accept_header_chooses_openmetrics)
{
    /* What Prometheus 2.x sends: OpenMetrics first, the 0.0.4 text at a lower q. */
    CHECK(exporter_wants_openmetrics("application/openmetrics-text;version=1.0.0,"
                                     "application/openmetrics-text;version=0.0.1;q=0.75,"
                                     "text/plain;version=0.0.4;q=0.5,*/*;q=0.1"));
    CHECK(exporter_wants_openmetrics("application/openmetrics-text; version=1.0.0"));
    CHECK(exporter_wants_openmetrics("Application/OpenMetrics-Text"));
    CHECK(!exporter_wants_openmetrics(NULL));
    CHECK(!exporter_wants_openmetrics(""));
    CHECK(!exporter_wants_openmetrics("*/*"));
    CHECK(!exporter_wants_openmetrics("text/plain;version=0.0.4"));
    CHECK(!exporter_wants_openmetrics("application/openmetrics-text;q=0"));
    CHECK(!exporter_wants_openmetrics("text/plain, application/openmetrics-text;q=0.5"));
    CHECK(!exporter_wants_openmetrics("application/openmetrics-textx"));
}

TEST(metrics_group_lag_is_against_high_watermark_and_lso)
{
    /* HW 242, LSO 237 (a transaction open at 237), committed 100. */
    struct exporter_lag l = exporter_group_lag(242, 237, 100);
    CHECK_EQ_INT(l.records, 142);
    CHECK_EQ_INT(l.stable_records, 137);
    /* Caught up, and committed past the LSO (read_uncommitted consumer). */
    l = exporter_group_lag(242, 237, 242);
    CHECK_EQ_INT(l.records, 0);
    CHECK_EQ_INT(l.stable_records, 0);
    /* A client may commit past the high watermark: never a negative lag. */
    l = exporter_group_lag(10, 10, 15);
    CHECK_EQ_INT(l.records, 0);
    CHECK_EQ_INT(l.stable_records, 0);
}

/* The per-partition families the exporter formats off the loop (snapshot.c) read exactly as
 * the registry would render the same series: same names, HELP and TYPE lines, labels,
 * escaping and values, the age only where one is known, followers under their partition;
 * OpenMetrics ends with # EOF after them, and the text before them is kept. */
TEST(metrics_snapshot_renders_as_the_registry_would)
{
    static const char *const names[] = {"tally_partition_log_start_offset",
                                        "tally_partition_log_end_offset",
                                        "tally_partition_high_watermark",
                                        "tally_partition_last_stable_offset",
                                        "tally_partition_size_bytes",
                                        "tally_partition_segments",
                                        "tally_partition_oldest_open_txn_age_seconds"};
    static const char *const helps[] = {
        "The first offset the partition's log holds.",
        "The offset the next record appended will get (LEO).",
        "The high watermark: records below it are replicated to the ISR.",
        "The last stable offset: the first offset of the earliest open transaction, or the high "
        "watermark.",
        "Bytes of the partition's segment files.",
        "Segments of the partition's log, the active one included.",
        "Age of the oldest open transaction here, the one holding the last stable offset (from "
        "the timestamp of its first record); 0 when none is open."};
    static const char *const tpf[] = {"topic", "partition", "follower"};
    const char *topics[] = {"orders", "orders", "we\"ird\\topic"};
    const char *indexes[] = {"0", "7", "2147483647"};
    int32_t idx[] = {0, 7, 2147483647};
    double ages[] = {-1, 2.5, 0};

    for (int fmt = METRICS_TEXT; fmt <= METRICS_OPENMETRICS; fmt++) {
        struct metrics *m = metrics_new(0);
        struct exporter_snapshot *s = exporter_snapshot_new();
        REQUIRE(m && s);
        struct metrics_family *f[8];
        for (int k = 0; k < 7; k++)
            REQUIRE((f[k] = metrics_family_new(m, METRICS_GAUGE, names[k], helps[k], 2, tpf, 0,
                                               NULL)) != NULL);
        REQUIRE((f[7] = metrics_family_new(m, METRICS_GAUGE, "tally_partition_follower_lag_records",
                                           "On the leader: its log end offset minus each "
                                           "follower's, as the follower's last fetch showed it.",
                                           3, tpf, 0, NULL)) != NULL);
        for (int r = 0; r < 3; r++) {
            int64_t v[EXPORTER_PART_N_VALUES];
            for (int k = 0; k < EXPORTER_PART_N_VALUES; k++) {
                v[k] = (int64_t)r * 1000000007 + k - 1;
                metrics_set(metrics_series2(f[k], topics[r], indexes[r]), (double)v[k]);
            }
            CHECK(exporter_snapshot_add(s, topics[r], idx[r], v, ages[r]) == 0);
            if (ages[r] >= 0)
                metrics_set(metrics_series2(f[6], topics[r], indexes[r]), ages[r]);
            for (int32_t fo = 1; fo <= r; fo++) {
                CHECK(exporter_snapshot_add_follower(s, fo + 1, 40 + fo) == 0);
                const char *lv[3] = {topics[r], indexes[r], fo == 1 ? "2" : "3"};
                metrics_set(metrics_series(f[7], lv), 40 + fo);
            }
        }
        CHECK(exporter_snapshot_rows(s) == 3);
        char *want = NULL, *got = NULL;
        size_t want_len = 0, got_len = 0;
        REQUIRE(metrics_render_as(m, (enum metrics_format)fmt, &want, &want_len) == 0);
        REQUIRE(exporter_snapshot_render(s, (enum metrics_format)fmt, &got, &got_len) == 0);
        CHECK(got_len == strlen(got));
        CHECK_TEXT(got, want);
        free(got);
        free(want);

        /* After a text of its own: kept in front. */
        char *head = strdup("# HELP tally_up Up.\n");
        size_t head_len = strlen(head);
        REQUIRE(exporter_snapshot_render(NULL, (enum metrics_format)fmt, &head, &head_len) == 0);
        static const char lead[] = "# HELP tally_up Up.\n# HELP tally_partition_log_start_offset ";
        CHECK(strncmp(head, lead, sizeof lead - 1) == 0);
        CHECK((fmt == METRICS_OPENMETRICS) == (strstr(head, "# EOF\n") != NULL));
        CHECK(strstr(head, "tally_partition_follower_lag_records gauge\n") != NULL);
        free(head);
        exporter_snapshot_release(s);
        metrics_free(m);
    }
}

/* A snapshot held by the HTTP thread outlives the loop's release of it. */
TEST(metrics_snapshot_freed_with_its_last_reference)
{
    struct exporter_snapshot *s = exporter_snapshot_new();
    int64_t v[EXPORTER_PART_N_VALUES] = {0};
    REQUIRE(s);
    CHECK(exporter_snapshot_add(s, "t", 0, v, -1) == 0);
    exporter_snapshot_hold(s);
    exporter_snapshot_release(s);
    CHECK(exporter_snapshot_rows(s) == 1); /* still there: ASan would see a use after free */
    exporter_snapshot_release(s);
}
