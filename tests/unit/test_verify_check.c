/* SPDX-License-Identifier: Apache-2.0 */
/* The checker of `tally verify` (tools/verify_check.h): a clean recorded history reports no
 * anomaly, and each anomaly class put into it is reported, with its count and an example; an
 * incomplete history (fewer inputs than asked for, a record dropped for want of memory, a
 * reader short of an end, a reason the driver noted) is inconclusive, never a pass. */
#include "../../tools/verify_check.h"
#include "harness.h"

#include <stdlib.h>

/* One output record of a test history. */
struct rec {
    int part;
    int64_t off;
    int in_p;
    int64_t seq;
    int inc;
    int64_t txn;
    int n;
    int k;
    int abort;
    bool rc; /* visible to read_committed (always to read_uncommitted) */
};

#define MAXREC 64

/* The clean history: 2 input partitions of 7 records (offset = seq), copied to output
 * partition = input partition. Per partition: a committed transaction (seq 0..2, offsets
 * 0..2), an aborted one (seq 3..5 at 3..5, marked a=1), its ABORT marker at 6, the retry
 * (seq 3..5 at 7..9); then one transaction over both partitions (seq 6 at offset 10 of each). */
static int clean_history(struct rec *r)
{
    int n = 0;
    for (int p = 0; p < 2; p++) {
        for (int i = 0; i < 3; i++)
            r[n++] = (struct rec){p, i, p, i, 1, p * 10, 3, i, 0, true};
        for (int i = 0; i < 3; i++)
            r[n++] = (struct rec){p, 3 + i, p, 3 + i, 1, p * 10 + 1, 3, i, 1, false};
        for (int i = 0; i < 3; i++)
            r[n++] = (struct rec){p, 7 + i, p, 3 + i, 2, p * 10 + 2, 3, i, 0, true};
        r[n++] = (struct rec){p, 10, p, 6, 3, 0, 2, p, 0, true};
    }
    return n;
}

static void add_rec(struct vc_history *h, enum vc_view view, const struct rec *x)
{
    char v[200];
    int len = vc_format_output(v, sizeof v, x->in_p, x->seq, x->seq, 0, x->inc, x->txn, x->n, x->k,
                               x->abort != 0);
    CHECK(vc_add_read(h, view, x->part, x->off, v, (size_t)len));
}

/* The history's allocator: realloc, except that it fails once when fail_next is set. */
static bool fail_next;

static void *test_realloc(void *ptr, size_t size)
{
    if (fail_next) {
        fail_next = false;
        return NULL;
    }
    return realloc(ptr, size);
}

/* Builds the history of recs (7 inputs per partition, group offsets 7) and checks it. */
static void check_history(const struct rec *recs, int n, struct vc_report *rep,
                          void (*extra)(struct vc_history *))
{
    struct vc_history *h = vc_history_new_with(2, test_realloc);
    CHECK(h != NULL);
    if (h == NULL)
        return;
    for (int p = 0; p < 2; p++) {
        for (int s = 0; s < 7; s++)
            CHECK(vc_add_input(h, p, s, s));
        vc_set_group_offset(h, p, 7);
    }
    for (int i = 0; i < n; i++) {
        add_rec(h, VC_READ_UNCOMMITTED, &recs[i]);
        if (recs[i].rc)
            add_rec(h, VC_READ_COMMITTED, &recs[i]);
    }
    if (extra != NULL)
        extra(h);
    CHECK(vc_check(h, rep));
    vc_history_free(h);
}

/* Only class c has a non-zero count, and it is want. */
static void expect_only(const struct vc_report *rep, enum vc_class c, int64_t want)
{
    for (int i = 0; i < VC_CLASSES; i++) {
        int64_t expect = i == (int)c ? want : 0;
        if (rep->cls[i].count != expect) {
            char m[128];
            snprintf(m, sizeof m, "class %s: %lld, expected %lld", vc_class_name(i),
                     (long long)rep->cls[i].count, (long long)expect);
            harness_fail(__FILE__, __LINE__, m);
        }
    }
}

TEST(verify_check_clean_history_reports_nothing)
{
    struct rec r[MAXREC];
    struct vc_report rep;
    int n = clean_history(r);
    check_history(r, n, &rep, NULL);
    CHECK_EQ_INT(vc_report_anomalies(&rep), 0);
    CHECK_EQ_INT(rep.inputs_acked, 14);
    CHECK_EQ_INT(rep.visible, 14);
    CHECK_EQ_INT(rep.uncommitted, 20);
    CHECK_EQ_INT(rep.aborted_seen, 6);
    CHECK_EQ_INT(rep.txns_visible, 5);
    CHECK_EQ_INT(rep.offsets_checked, 14);
}

TEST(verify_check_duplicate)
{
    struct rec r[MAXREC];
    struct vc_report rep;
    int n = clean_history(r);
    /* seq 1 of partition 0 copied again by another transaction, after the retry. */
    r[n++] = (struct rec){0, 11, 0, 1, 4, 0, 1, 0, 0, true};
    check_history(r, n, &rep, NULL);
    expect_only(&rep, VC_DUPLICATED, 1);
    CHECK_EQ_INT(rep.cls[VC_DUPLICATED].examples[0].partition, 0);
    CHECK_EQ_INT(rep.cls[VC_DUPLICATED].examples[0].offset, 11);
    CHECK(strstr(rep.cls[VC_DUPLICATED].examples[0].value, "s=1 ") != NULL);
}

static void add_unread_input(struct vc_history *h)
{
    CHECK(vc_add_input(h, 1, 7, 7));
}

TEST(verify_check_gap_is_lost)
{
    struct rec r[MAXREC];
    struct vc_report rep;
    int n = clean_history(r);
    check_history(r, n, &rep, add_unread_input);
    expect_only(&rep, VC_LOST, 1);
    CHECK_EQ_INT(rep.cls[VC_LOST].examples[0].partition, 1);
    CHECK_EQ_INT(rep.cls[VC_LOST].examples[0].offset, 7);
}

static void add_unread_input_offset_committed(struct vc_history *h)
{
    CHECK(vc_add_input(h, 1, 7, 7));
    vc_set_group_offset(h, 1, 8);
}

TEST(verify_check_offsets_ahead_of_data)
{
    struct rec r[MAXREC];
    struct vc_report rep;
    int n = clean_history(r);
    check_history(r, n, &rep, add_unread_input_offset_committed);
    CHECK_EQ_INT(rep.cls[VC_OFFSETS_AHEAD].count, 1);
    CHECK_EQ_INT(rep.cls[VC_LOST].count, 1);
    CHECK_EQ_INT(vc_report_anomalies(&rep), 2);
}

static void group_offset_behind(struct vc_history *h)
{
    vc_set_group_offset(h, 1, 3);
}

TEST(verify_check_offsets_behind_data)
{
    struct rec r[MAXREC];
    struct vc_report rep;
    int n = clean_history(r);
    check_history(r, n, &rep, group_offset_behind);
    expect_only(&rep, VC_OFFSETS_BEHIND, 4); /* seq 3..6 of partition 1 */
    CHECK_EQ_INT(rep.cls[VC_OFFSETS_BEHIND].examples[0].partition, 1);
    CHECK_EQ_INT(rep.cls[VC_OFFSETS_BEHIND].examples[0].offset, 7);
}

TEST(verify_check_reorder)
{
    struct rec r[MAXREC];
    struct vc_report rep;
    int n = clean_history(r);
    /* The retry of partition 0 wrote seq 4 before seq 3. */
    r[6].seq = 4;
    r[6].k = 1;
    r[7].seq = 3;
    r[7].k = 0;
    check_history(r, n, &rep, NULL);
    expect_only(&rep, VC_REORDERED, 1);
    CHECK_EQ_INT(rep.cls[VC_REORDERED].examples[0].offset, 8);
}

TEST(verify_check_aborted_read_by_marker_value)
{
    struct rec r[MAXREC];
    struct vc_report rep;
    int n = clean_history(r);
    for (int i = 3; i < 6; i++)
        r[i].rc = true; /* the aborted attempt of partition 0 is visible */
    check_history(r, n, &rep, NULL);
    CHECK_EQ_INT(rep.cls[VC_ABORTED_READ].count, 3);
    CHECK_EQ_INT(rep.cls[VC_ABORTED_READ].examples[0].offset, 3);
    CHECK_EQ_INT(rep.cls[VC_TORN_TXN].count, 0);
}

static void journal_says_aborted(struct vc_history *h)
{
    CHECK(vc_add_txn_outcome(h, 2, 12, false));
    CHECK(vc_add_txn_outcome(h, 1, 0, true));
}

TEST(verify_check_aborted_read_by_journal)
{
    struct rec r[MAXREC];
    struct vc_report rep;
    int n = clean_history(r);
    check_history(r, n, &rep, journal_says_aborted);
    expect_only(&rep, VC_ABORTED_READ, 3); /* partition 1's retry (inc 2, txn 12) */
    CHECK_EQ_INT(rep.cls[VC_ABORTED_READ].examples[0].partition, 1);
}

TEST(verify_check_torn_transaction_across_partitions)
{
    struct rec r[MAXREC];
    struct vc_report rep;
    int n = clean_history(r);
    /* The cross-partition transaction's record on partition 1 is missing; its input is also
     * never copied, so it is lost too, and the group's offset is past it. */
    r[19].rc = false;
    check_history(r, n, &rep, NULL);
    CHECK_EQ_INT(rep.cls[VC_TORN_TXN].count, 1);
    CHECK_EQ_INT(rep.cls[VC_TORN_TXN].examples[0].partition, 0);
    CHECK_EQ_INT(rep.cls[VC_TORN_TXN].examples[0].offset, 10);
    CHECK_EQ_INT(rep.cls[VC_LOST].count, 1);
    CHECK_EQ_INT(rep.cls[VC_OFFSETS_AHEAD].count, 1);
    CHECK_EQ_INT(vc_report_anomalies(&rep), 3);
}

static void second_reader_differs(struct vc_history *h)
{
    char v[200];
    int len = vc_format_output(v, sizeof v, 0, 1, 1, 0, 9, 9, 1, 0, false);
    CHECK(vc_add_read(h, VC_SECOND_READER, 0, 1, v, (size_t)len));
}

TEST(verify_check_inconsistent_offsets)
{
    struct rec r[MAXREC];
    struct vc_report rep;
    int n = clean_history(r);
    check_history(r, n, &rep, second_reader_differs);
    CHECK_EQ_INT(rep.cls[VC_INCONSISTENT_OFFSETS].count, 1);
    CHECK_EQ_INT(rep.cls[VC_INCONSISTENT_OFFSETS].examples[0].offset, 1);
    CHECK(strstr(rep.cls[VC_INCONSISTENT_OFFSETS].examples[0].value, "second_reader") != NULL);
    /* The second reader's own record is a well-formed copy of an input seen already. */
    CHECK_EQ_INT(rep.cls[VC_DUPLICATED].count, 0);
}

static void garbage_read(struct vc_history *h)
{
    CHECK(vc_add_read(h, VC_READ_COMMITTED, 1, 11, "hello", 5));
}

TEST(verify_check_unreadable_and_report_forms)
{
    struct rec r[MAXREC];
    struct vc_report rep;
    int n = clean_history(r);
    check_history(r, n, &rep, garbage_read);
    expect_only(&rep, VC_UNREADABLE, 1);

    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    REQUIRE(f != NULL);
    vc_report_json(&rep, f);
    fclose(f);
    CHECK(strstr(buf, "\"anomalies\": 1") != NULL);
    CHECK(strstr(buf, "\"unreadable\": {\"count\": 1, \"examples\": [{\"partition\": 1, "
                      "\"offset\": 11, \"value\": \"hello\"}]}") != NULL);
    free(buf);

    f = open_memstream(&buf, &len);
    REQUIRE(f != NULL);
    vc_report_print(&rep, f);
    fclose(f);
    CHECK(strstr(buf, "partition 1 offset 11: hello") != NULL);
    CHECK(strstr(buf, "anomalies: 1") != NULL);
    free(buf);
}

/* ---------------------------------------------------------------- incomplete histories */

static void expect_14_inputs(struct vc_history *h)
{
    vc_expect_inputs(h, 14);
}

TEST(verify_check_every_seed_acknowledged_passes)
{
    struct rec r[MAXREC];
    struct vc_report rep;
    int n = clean_history(r);
    check_history(r, n, &rep, expect_14_inputs);
    CHECK_EQ_INT(vc_report_anomalies(&rep), 0);
    CHECK_EQ_INT(rep.reasons_total, 0);
    CHECK_EQ_INT(rep.inputs_expected, 14);
    CHECK_EQ_INT(vc_report_verdict(&rep), VC_PASS);
}

static void expect_15_inputs(struct vc_history *h)
{
    vc_expect_inputs(h, 15);
}

TEST(verify_check_fewer_acknowledged_inputs_than_records_is_inconclusive)
{
    struct rec r[MAXREC];
    struct vc_report rep;
    int n = clean_history(r);
    check_history(r, n, &rep, expect_15_inputs);
    CHECK_EQ_INT(vc_report_anomalies(&rep), 0);
    CHECK_EQ_INT(rep.reasons_total, 1);
    CHECK(strstr(rep.reasons[0], "14 distinct inputs acknowledged of the 15") != NULL);
    CHECK_EQ_INT(vc_report_verdict(&rep), VC_INCONCLUSIVE);
}

TEST(verify_check_nothing_acknowledged_is_inconclusive_not_a_pass)
{
    /* A cluster that refused every seed record and copied nothing: no anomaly to find. */
    struct vc_history *h = vc_history_new(3);
    struct vc_report rep;
    REQUIRE(h != NULL);
    CHECK(vc_check(h, &rep));
    CHECK_EQ_INT(vc_report_verdict(&rep), VC_PASS); /* what nobody said must not matter... */
    vc_expect_inputs(h, 1000);
    CHECK(vc_check(h, &rep));
    CHECK_EQ_INT(vc_report_anomalies(&rep), 0);
    CHECK_EQ_INT(vc_report_verdict(&rep), VC_INCONCLUSIVE); /* ...what the run asked for does */
    vc_history_free(h);
}

static void drop_a_duplicate(struct vc_history *h)
{
    char v[200];
    /* The second copy of seq 1 of partition 0: the record the history cannot keep. */
    int len = vc_format_output(v, sizeof v, 0, 1, 1, 0, 4, 0, 1, 0, false);
    fail_next = true;
    CHECK(!vc_add_read(h, VC_READ_COMMITTED, 0, 11, v, (size_t)len));
    CHECK(!fail_next);
}

TEST(verify_check_record_dropped_out_of_memory_is_inconclusive)
{
    struct rec r[MAXREC];
    struct vc_report rep;
    int n = clean_history(r);
    check_history(r, n, &rep, drop_a_duplicate);
    /* The duplicate went unseen: without the rule this history would pass. */
    CHECK_EQ_INT(vc_report_anomalies(&rep), 0);
    CHECK_EQ_INT(rep.reasons_total, 1);
    CHECK(strstr(rep.reasons[0], "out of memory while recording the history: 1 records dropped") !=
          NULL);
    CHECK_EQ_INT(vc_report_verdict(&rep), VC_INCONCLUSIVE);
}

TEST(verify_check_input_or_outcome_dropped_out_of_memory_is_inconclusive)
{
    struct vc_report rep;
    struct vc_history *h = vc_history_new_with(1, test_realloc);
    REQUIRE(h != NULL);
    fail_next = true;
    CHECK(!vc_add_input(h, 0, 0, 0));
    fail_next = true;
    CHECK(!vc_add_txn_outcome(h, 1, 1, false));
    CHECK(vc_check(h, &rep));
    CHECK_EQ_INT(vc_report_anomalies(&rep), 0);
    CHECK(strstr(rep.reasons[0], "2 records dropped") != NULL);
    CHECK_EQ_INT(vc_report_verdict(&rep), VC_INCONCLUSIVE);
    vc_history_free(h);
}

static void reader_short(struct vc_history *h)
{
    vc_view_short(h, VC_READ_COMMITTED, 1, 8, 11);
    vc_view_short(h, VC_SECOND_READER, 0, 0, -1);
}

TEST(verify_check_reader_short_of_its_end_is_inconclusive)
{
    struct rec r[MAXREC];
    struct vc_report rep;
    int n = clean_history(r);
    /* The read_committed reader stopped at offset 8 of partition 1: seq 4..6 look lost. */
    for (int i = 0; i < n; i++)
        if (r[i].part == 1 && r[i].off >= 8)
            r[i].rc = false;
    check_history(r, n, &rep, reader_short);
    CHECK_EQ_INT(rep.cls[VC_LOST].count, 3);
    CHECK_EQ_INT(rep.reasons_total, 2);
    CHECK(strstr(rep.reasons[0], "read_committed reader stopped at offset 8 of output partition 1, "
                                 "short of its end 11") != NULL);
    CHECK(strstr(rep.reasons[1], "second_reader reader could not learn the end of output "
                                 "partition 0") != NULL);
    /* Lost in an incomplete history may be what was not read: no verdict. */
    CHECK_EQ_INT(vc_report_verdict(&rep), VC_INCONCLUSIVE);
}

static void noted_and_lost(struct vc_history *h)
{
    CHECK(vc_add_input(h, 1, 7, 7));
    vc_note_incomplete(h, "the group's committed offsets could not be fetched");
}

TEST(verify_check_noted_reason_is_inconclusive)
{
    struct rec r[MAXREC];
    struct vc_report rep;
    int n = clean_history(r);
    check_history(r, n, &rep, noted_and_lost);
    expect_only(&rep, VC_LOST, 1);
    CHECK_EQ_STR(rep.reasons[0], "the group's committed offsets could not be fetched");
    CHECK_EQ_INT(vc_report_verdict(&rep), VC_INCONCLUSIVE);
    /* The same anomaly in a complete history is a finding. */
    check_history(r, n, &rep, add_unread_input);
    CHECK_EQ_INT(vc_report_verdict(&rep), VC_ANOMALIES);
}

static void noted(struct vc_history *h)
{
    vc_note_incomplete(h, "the copy was stopped by --max-seconds");
}

TEST(verify_check_witnessed_anomaly_holds_in_an_incomplete_history)
{
    struct rec r[MAXREC];
    struct vc_report rep;
    int n = clean_history(r);
    r[n++] = (struct rec){0, 11, 0, 1, 4, 0, 1, 0, 0, true}; /* a second copy */
    check_history(r, n, &rep, noted);
    CHECK_EQ_INT(rep.cls[VC_DUPLICATED].count, 1);
    CHECK_EQ_INT(rep.reasons_total, 1);
    CHECK_EQ_INT(vc_report_verdict(&rep), VC_ANOMALIES);
    /* So are an aborted read, two values at one offset and an unreadable record. */
    n = clean_history(r);
    r[3].rc = true;
    check_history(r, n, &rep, noted);
    CHECK(rep.cls[VC_ABORTED_READ].count > 0);
    CHECK_EQ_INT(vc_report_verdict(&rep), VC_ANOMALIES);
}

static void many_reasons(struct vc_history *h)
{
    for (int i = 0; i < VC_REASONS + 2; i++) {
        char why[32];
        snprintf(why, sizeof why, "reason %d", i);
        vc_note_incomplete(h, why);
    }
}

TEST(verify_check_incomplete_report_forms)
{
    struct rec r[MAXREC];
    struct vc_report rep;
    int n = clean_history(r);
    check_history(r, n, &rep, many_reasons);
    CHECK_EQ_INT(rep.reasons_total, VC_REASONS + 2);
    CHECK_EQ_INT(rep.n_reasons, VC_REASONS);
    CHECK_EQ_INT(vc_report_verdict(&rep), VC_INCONCLUSIVE);
    CHECK_EQ_STR(vc_verdict_name(VC_INCONCLUSIVE), "inconclusive");

    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    REQUIRE(f != NULL);
    vc_report_print(&rep, f);
    fclose(f);
    CHECK(strstr(buf, "incomplete: reason 0\n") != NULL);
    CHECK(strstr(buf, "incomplete: ... and 2 more reasons\n") != NULL);
    CHECK(strstr(buf, "anomalies: 0\nverdict: inconclusive") != NULL);
    free(buf);

    f = open_memstream(&buf, &len);
    REQUIRE(f != NULL);
    vc_report_json(&rep, f);
    fclose(f);
    CHECK(strstr(buf, "{\"verdict\": \"inconclusive\", \"anomalies\": 0, ") != NULL);
    CHECK(strstr(buf, "\"incomplete_total\": 10, \"incomplete\": [\"reason 0\", ") != NULL);
    free(buf);
}
