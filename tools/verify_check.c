/* SPDX-License-Identifier: Apache-2.0 */
/* verify_check: the checker of `tally verify` (contract in verify_check.h). Everything is
 * done by sorting flat arrays, so a history of a few million records checks in seconds. */
#include "verify_check.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct vc_input {
    int partition;
    int64_t seq;
    int64_t offset;
};

struct vc_read {
    int partition;
    int view;
    int64_t offset;
    char *value; /* NUL-terminated copy */
    size_t len;
};

struct vc_outcome {
    int incarnation;
    int64_t txn;
    bool committed;
};

struct vc_history {
    int in_partitions;
    void *(*realloc_fn)(void *ptr, size_t size);
    int64_t inputs_expected; /* -1: not said */
    int64_t dropped;         /* records vc_add_* could not keep */
    int64_t reasons_total;
    int n_reasons;
    char reasons[VC_REASONS][VC_VALUE_MAX];
    struct vc_input *inputs;
    size_t n_inputs, cap_inputs;
    struct vc_read *reads;
    size_t n_reads, cap_reads;
    struct vc_outcome *outcomes;
    size_t n_outcomes, cap_outcomes;
    int64_t *group_offsets;
};

/* One parsed record of the read_committed view. */
struct vc_vis {
    int partition;
    int64_t offset;
    int in_p;
    int64_t seq;
    int64_t in_off;
    int copier;
    int inc;
    int64_t txn;
    int n;
    int k;
    int abort;
    bool first; /* the first occurrence of its input */
    const struct vc_read *rd;
};

static const char *const class_names[VC_CLASSES] = {
    [VC_LOST] = "lost",
    [VC_DUPLICATED] = "duplicated",
    [VC_REORDERED] = "reordered",
    [VC_ABORTED_READ] = "aborted_read",
    [VC_TORN_TXN] = "torn_transaction",
    [VC_OFFSETS_AHEAD] = "offsets_ahead_of_data",
    [VC_OFFSETS_BEHIND] = "offsets_behind_data",
    [VC_INCONSISTENT_OFFSETS] = "inconsistent_offsets",
    [VC_UNREADABLE] = "unreadable",
};

const char *vc_class_name(enum vc_class c)
{
    return (unsigned)c < VC_CLASSES ? class_names[c] : "?";
}

struct vc_history *vc_history_new(int in_partitions)
{
    return vc_history_new_with(in_partitions, realloc);
}

struct vc_history *vc_history_new_with(int in_partitions,
                                       void *(*realloc_fn)(void *ptr, size_t size))
{
    if (in_partitions <= 0)
        return NULL;
    struct vc_history *h = calloc(1, sizeof *h);
    if (h == NULL)
        return NULL;
    h->in_partitions = in_partitions;
    h->realloc_fn = realloc_fn;
    h->inputs_expected = -1;
    h->group_offsets = malloc((size_t)in_partitions * sizeof *h->group_offsets);
    if (h->group_offsets == NULL) {
        free(h);
        return NULL;
    }
    for (int i = 0; i < in_partitions; i++)
        h->group_offsets[i] = -1;
    return h;
}

void vc_history_free(struct vc_history *h)
{
    if (h == NULL)
        return;
    for (size_t i = 0; i < h->n_reads; i++)
        free(h->reads[i].value);
    free(h->reads);
    free(h->inputs);
    free(h->outcomes);
    free(h->group_offsets);
    free(h);
}

/* Grows *arr (of elements of size elt) so that one more fits. */
static bool grow(struct vc_history *h, void **arr, size_t *cap, size_t n, size_t elt)
{
    if (n < *cap)
        return true;
    size_t ncap = *cap ? *cap * 2 : 1024;
    void *p = h->realloc_fn(*arr, ncap * elt);
    if (p == NULL)
        return false;
    *arr = p;
    *cap = ncap;
    return true;
}

/* A record the history could not keep: it is incomplete from now on. */
static bool dropped(struct vc_history *h)
{
    h->dropped++;
    return false;
}

bool vc_add_input(struct vc_history *h, int partition, int64_t seq, int64_t offset)
{
    if (!grow(h, (void **)&h->inputs, &h->cap_inputs, h->n_inputs, sizeof *h->inputs))
        return dropped(h);
    h->inputs[h->n_inputs++] = (struct vc_input){partition, seq, offset};
    return true;
}

bool vc_add_read(struct vc_history *h, enum vc_view view, int partition, int64_t offset,
                 const void *value, size_t len)
{
    if (!grow(h, (void **)&h->reads, &h->cap_reads, h->n_reads, sizeof *h->reads))
        return dropped(h);
    char *v = h->realloc_fn(NULL, len + 1);
    if (v == NULL)
        return dropped(h);
    if (len > 0)
        memcpy(v, value, len);
    v[len] = '\0';
    h->reads[h->n_reads++] = (struct vc_read){
        .partition = partition, .view = view, .offset = offset, .value = v, .len = len};
    return true;
}

void vc_set_group_offset(struct vc_history *h, int partition, int64_t offset)
{
    if (partition >= 0 && partition < h->in_partitions)
        h->group_offsets[partition] = offset;
}

bool vc_add_txn_outcome(struct vc_history *h, int incarnation, int64_t txn, bool committed)
{
    if (!grow(h, (void **)&h->outcomes, &h->cap_outcomes, h->n_outcomes, sizeof *h->outcomes))
        return dropped(h);
    h->outcomes[h->n_outcomes++] = (struct vc_outcome){incarnation, txn, committed};
    return true;
}

void vc_expect_inputs(struct vc_history *h, int64_t n)
{
    h->inputs_expected = n;
}

static void note(struct vc_history *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(struct vc_history *h, const char *fmt, ...)
{
    h->reasons_total++;
    if (h->n_reasons >= VC_REASONS)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(h->reasons[h->n_reasons++], VC_VALUE_MAX, fmt, ap);
    va_end(ap);
}

static const char *const view_names[VC_VIEWS] = {"read_committed", "read_uncommitted",
                                                 "second_reader"};

void vc_view_short(struct vc_history *h, enum vc_view view, int partition, int64_t reached,
                   int64_t end)
{
    const char *name = (unsigned)view < VC_VIEWS ? view_names[view] : "?";
    if (end < 0)
        note(h, "the %s reader could not learn the end of output partition %d", name, partition);
    else
        note(h,
             "the %s reader stopped at offset %" PRId64 " of output partition %d, short of its "
             "end %" PRId64,
             name, reached, partition, end);
}

void vc_note_incomplete(struct vc_history *h, const char *reason)
{
    note(h, "%s", reason);
}

/* Copies a reason into the report (the first VC_REASONS are kept as text). */
static void report_reason(struct vc_report *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void report_reason(struct vc_report *r, const char *fmt, ...)
{
    r->reasons_total++;
    if (r->n_reasons >= VC_REASONS)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->reasons[r->n_reasons++], VC_VALUE_MAX, fmt, ap);
    va_end(ap);
}

int vc_format_output(char *buf, size_t size, int in_partition, int64_t seq, int64_t in_offset,
                     int copier, int incarnation, int64_t txn, int n, int k, bool abort)
{
    return snprintf(buf, size,
                    "vo p=%d s=%" PRId64 " o=%" PRId64 " c=%d e=%d t=%" PRId64 " n=%d k=%d a=%d",
                    in_partition, seq, in_offset, copier, incarnation, txn, n, k, abort ? 1 : 0);
}

int vc_format_input(char *buf, size_t size, int partition, int64_t seq)
{
    return snprintf(buf, size, "vi p=%d s=%" PRId64, partition, seq);
}

/* Parses an output value; false when it is not of that form. */
static bool parse_output(const struct vc_read *rd, int in_partitions, struct vc_vis *v)
{
    int used = 0;
    if (sscanf(rd->value,
               "vo p=%d s=%" SCNd64 " o=%" SCNd64 " c=%d e=%d t=%" SCNd64 " n=%d k=%d a=%d%n",
               &v->in_p, &v->seq, &v->in_off, &v->copier, &v->inc, &v->txn, &v->n, &v->k, &v->abort,
               &used) != 9)
        return false;
    if ((size_t)used != rd->len || v->in_p < 0 || v->in_p >= in_partitions || v->n <= 0 ||
        v->k < 0 || v->k >= v->n)
        return false;
    v->partition = rd->partition;
    v->offset = rd->offset;
    v->rd = rd;
    return true;
}

static void add_example(struct vc_report *r, enum vc_class c, int partition, int64_t offset,
                        const char *value)
{
    struct vc_class_report *cr = &r->cls[c];
    cr->count++;
    if (cr->n_examples >= VC_EXAMPLES)
        return;
    struct vc_example *ex = &cr->examples[cr->n_examples++];
    ex->partition = partition;
    ex->offset = offset;
    size_t i = 0;
    for (; value != NULL && value[i] != '\0' && i + 1 < sizeof ex->value; i++) {
        unsigned char ch = (unsigned char)value[i];
        ex->value[i] = (ch >= 0x20 && ch < 0x7f) ? (char)ch : '?';
    }
    ex->value[i] = '\0';
}

#define CMP(a, b)                                                                                  \
    do {                                                                                           \
        if ((a) != (b))                                                                            \
            return (a) < (b) ? -1 : 1;                                                             \
    } while (0)

static int cmp_by_input(const void *pa, const void *pb)
{
    const struct vc_vis *a = pa, *b = pb;
    CMP(a->in_p, b->in_p);
    CMP(a->seq, b->seq);
    CMP(a->partition, b->partition);
    CMP(a->offset, b->offset);
    return 0;
}

static int cmp_by_output(const void *pa, const void *pb)
{
    const struct vc_vis *a = pa, *b = pb;
    CMP(a->partition, b->partition);
    CMP(a->offset, b->offset);
    return 0;
}

static int cmp_by_txn(const void *pa, const void *pb)
{
    const struct vc_vis *a = pa, *b = pb;
    CMP(a->inc, b->inc);
    CMP(a->txn, b->txn);
    CMP(a->k, b->k);
    CMP(a->partition, b->partition);
    CMP(a->offset, b->offset);
    return 0;
}

static int cmp_inputs(const void *pa, const void *pb)
{
    const struct vc_input *a = pa, *b = pb;
    CMP(a->partition, b->partition);
    CMP(a->seq, b->seq);
    return 0;
}

static int cmp_outcomes(const void *pa, const void *pb)
{
    const struct vc_outcome *a = pa, *b = pb;
    CMP(a->incarnation, b->incarnation);
    CMP(a->txn, b->txn);
    return 0;
}

static int cmp_reads(const void *pa, const void *pb)
{
    const struct vc_read *a = *(const struct vc_read *const *)pa;
    const struct vc_read *b = *(const struct vc_read *const *)pb;
    CMP(a->partition, b->partition);
    CMP(a->offset, b->offset);
    CMP(a->view, b->view);
    return 0;
}

/* Inconsistent offsets: an offset of a partition read with two different values. */
static bool check_offsets(const struct vc_history *h, struct vc_report *r)
{
    const struct vc_read **all = malloc((h->n_reads + 1) * sizeof *all);
    if (all == NULL)
        return false;
    for (size_t i = 0; i < h->n_reads; i++)
        all[i] = &h->reads[i];
    qsort(all, h->n_reads, sizeof *all, cmp_reads);
    for (size_t i = 0; i < h->n_reads;) {
        size_t j = i + 1;
        while (j < h->n_reads && all[j]->partition == all[i]->partition &&
               all[j]->offset == all[i]->offset)
            j++;
        bool has_rc = false, has_ru = false;
        const struct vc_read *diff = NULL;
        for (size_t x = i; x < j; x++) {
            has_rc |= all[x]->view == VC_READ_COMMITTED;
            has_ru |= all[x]->view == VC_READ_UNCOMMITTED;
            if (diff == NULL && (all[x]->len != all[i]->len ||
                                 memcmp(all[x]->value, all[i]->value, all[i]->len) != 0))
                diff = all[x];
        }
        if (j - i >= 2)
            r->offsets_checked++;
        if (has_ru && !has_rc)
            r->aborted_seen++;
        if (diff != NULL) {
            char msg[VC_VALUE_MAX];
            snprintf(msg, sizeof msg, "%s: %.60s | %s: %.60s", view_names[all[i]->view],
                     all[i]->value, view_names[diff->view], diff->value);
            add_example(r, VC_INCONSISTENT_OFFSETS, all[i]->partition, all[i]->offset, msg);
        }
        i = j;
    }
    free(all);
    return true;
}

bool vc_check(const struct vc_history *h, struct vc_report *r)
{
    bool ok = false;
    struct vc_vis *vis = NULL;
    struct vc_input *in = NULL;
    struct vc_outcome *oc = NULL;
    int64_t *last = NULL;
    size_t nv = 0;

    memset(r, 0, sizeof *r);
    r->inputs_acked = (int64_t)h->n_inputs;
    r->inputs_expected = h->inputs_expected;
    if (h->dropped > 0)
        report_reason(r, "out of memory while recording the history: %" PRId64 " records dropped",
                      h->dropped);
    for (int i = 0; i < h->n_reasons; i++)
        report_reason(r, "%s", h->reasons[i]);
    r->reasons_total += h->reasons_total - h->n_reasons;
    vis = malloc((h->n_reads + 1) * sizeof *vis);
    in = malloc((h->n_inputs + 1) * sizeof *in);
    oc = malloc((h->n_outcomes + 1) * sizeof *oc);
    last = malloc((size_t)h->in_partitions * sizeof *last);
    if (vis == NULL || in == NULL || oc == NULL || last == NULL)
        goto cleanup;

    /* The read_committed view, parsed. */
    for (size_t i = 0; i < h->n_reads; i++) {
        const struct vc_read *rd = &h->reads[i];
        if (rd->view == VC_READ_UNCOMMITTED)
            continue;
        struct vc_vis v = {0};
        if (!parse_output(rd, h->in_partitions, &v)) {
            add_example(r, VC_UNREADABLE, rd->partition, rd->offset, rd->value);
            continue;
        }
        if (rd->view == VC_READ_COMMITTED)
            vis[nv++] = v;
    }
    for (size_t i = 0; i < h->n_reads; i++)
        r->uncommitted += h->reads[i].view == VC_READ_UNCOMMITTED;
    r->visible = (int64_t)nv;

    /* Duplicates: the same input visible twice. */
    qsort(vis, nv, sizeof *vis, cmp_by_input);
    for (size_t i = 0; i < nv; i++) {
        vis[i].first = i == 0 || vis[i - 1].in_p != vis[i].in_p || vis[i - 1].seq != vis[i].seq;
        if (!vis[i].first)
            add_example(r, VC_DUPLICATED, vis[i].partition, vis[i].offset, vis[i].rd->value);
    }

    /* Lost inputs, and the group's offsets against the data. */
    if (h->n_inputs > 0)
        memcpy(in, h->inputs, h->n_inputs * sizeof *in);
    qsort(in, h->n_inputs, sizeof *in, cmp_inputs);
    size_t v = 0;
    int64_t n_distinct = 0;
    for (size_t i = 0; i < h->n_inputs; i++) {
        if (i > 0 && in[i].partition == in[i - 1].partition && in[i].seq == in[i - 1].seq)
            continue; /* acknowledged twice: one input */
        n_distinct++;
        while (v < nv && (vis[v].in_p < in[i].partition ||
                          (vis[v].in_p == in[i].partition && vis[v].seq < in[i].seq)))
            v++;
        if (v < nv && vis[v].in_p == in[i].partition && vis[v].seq == in[i].seq)
            continue;
        char val[64];
        vc_format_input(val, sizeof val, in[i].partition, in[i].seq);
        add_example(r, VC_LOST, in[i].partition, in[i].offset, val);
        int p = in[i].partition;
        if (p >= 0 && p < h->in_partitions && h->group_offsets[p] > in[i].offset)
            add_example(r, VC_OFFSETS_AHEAD, p, in[i].offset, val);
    }
    /* A record the cluster did not acknowledge is one the check cannot vouch for. */
    if (h->inputs_expected >= 0 && n_distinct != h->inputs_expected)
        report_reason(r,
                      "%" PRId64 " distinct inputs acknowledged of the %" PRId64
                      " the seeder was asked to write",
                      n_distinct, h->inputs_expected);
    for (size_t i = 0; i < nv; i++)
        if (vis[i].first && vis[i].in_off >= h->group_offsets[vis[i].in_p])
            add_example(r, VC_OFFSETS_BEHIND, vis[i].partition, vis[i].offset, vis[i].rd->value);

    /* Aborted reads: a transaction the copier meant to abort, or knows aborted. */
    if (h->n_outcomes > 0)
        memcpy(oc, h->outcomes, h->n_outcomes * sizeof *oc);
    qsort(oc, h->n_outcomes, sizeof *oc, cmp_outcomes);

    /* Order: per output partition, the first occurrences of each input partition's
     * records in sequence order. */
    qsort(vis, nv, sizeof *vis, cmp_by_output);
    for (size_t i = 0; i < nv; i++) {
        if (i == 0 || vis[i].partition != vis[i - 1].partition)
            for (int p = 0; p < h->in_partitions; p++)
                last[p] = -1;
        if (vis[i].first) {
            if (vis[i].seq < last[vis[i].in_p])
                add_example(r, VC_REORDERED, vis[i].partition, vis[i].offset, vis[i].rd->value);
            else
                last[vis[i].in_p] = vis[i].seq;
        }
        struct vc_outcome key = {vis[i].inc, vis[i].txn, false};
        const struct vc_outcome *o = bsearch(&key, oc, h->n_outcomes, sizeof *oc, cmp_outcomes);
        if (vis[i].abort || (o != NULL && !o->committed))
            add_example(r, VC_ABORTED_READ, vis[i].partition, vis[i].offset, vis[i].rd->value);
    }

    /* Torn transactions: visible, but not all n of their records. */
    qsort(vis, nv, sizeof *vis, cmp_by_txn);
    for (size_t i = 0; i < nv;) {
        size_t j = i + 1;
        int distinct = 1;
        while (j < nv && vis[j].inc == vis[i].inc && vis[j].txn == vis[i].txn) {
            distinct += vis[j].k != vis[j - 1].k;
            j++;
        }
        r->txns_visible++;
        if (distinct != vis[i].n) {
            /* The example is the earliest visible record of the transaction. */
            size_t first = i;
            for (size_t x = i; x < j; x++)
                if (cmp_by_output(&vis[x], &vis[first]) < 0)
                    first = x;
            add_example(r, VC_TORN_TXN, vis[first].partition, vis[first].offset,
                        vis[first].rd->value);
        }
        i = j;
    }

    if (!check_offsets(h, r))
        goto cleanup;
    ok = true;
cleanup:
    free(vis);
    free(in);
    free(oc);
    free(last);
    return ok;
}

int64_t vc_report_anomalies(const struct vc_report *r)
{
    int64_t n = 0;
    for (int c = 0; c < VC_CLASSES; c++)
        n += r->cls[c].count;
    return n;
}

enum vc_verdict vc_report_verdict(const struct vc_report *r)
{
    /* Classes that records seen prove, whatever the history lacks: a second copy, a record of
     * an aborted transaction, two values at one offset, a value of no known form. */
    static const enum vc_class witnessed[] = {VC_DUPLICATED, VC_ABORTED_READ,
                                              VC_INCONSISTENT_OFFSETS, VC_UNREADABLE};
    for (size_t i = 0; i < sizeof witnessed / sizeof witnessed[0]; i++)
        if (r->cls[witnessed[i]].count > 0)
            return VC_ANOMALIES;
    if (r->reasons_total > 0)
        return VC_INCONCLUSIVE;
    return vc_report_anomalies(r) > 0 ? VC_ANOMALIES : VC_PASS;
}

const char *vc_verdict_name(enum vc_verdict v)
{
    switch (v) {
    case VC_PASS:
        return "pass";
    case VC_ANOMALIES:
        return "anomalies";
    case VC_INCONCLUSIVE:
        return "inconclusive";
    }
    return "?";
}

void vc_report_print(const struct vc_report *r, FILE *out)
{
    fprintf(out,
            "checked: %" PRId64 " acknowledged inputs, %" PRId64
            " read_committed records in %" PRId64 " transactions, %" PRId64
            " read_uncommitted records (%" PRId64 " of aborted attempts), %" PRId64
            " offsets read by two views\n",
            r->inputs_acked, r->visible, r->txns_visible, r->uncommitted, r->aborted_seen,
            r->offsets_checked);
    for (int c = 0; c < VC_CLASSES; c++) {
        const struct vc_class_report *cr = &r->cls[c];
        fprintf(out, "  %-22s %" PRId64 "\n", class_names[c], cr->count);
        for (int e = 0; e < cr->n_examples; e++)
            fprintf(out, "      partition %d offset %" PRId64 ": %s\n", cr->examples[e].partition,
                    cr->examples[e].offset, cr->examples[e].value);
    }
    for (int i = 0; i < r->n_reasons; i++)
        fprintf(out, "incomplete: %s\n", r->reasons[i]);
    if (r->reasons_total > r->n_reasons)
        fprintf(out, "incomplete: ... and %" PRId64 " more reasons\n",
                r->reasons_total - r->n_reasons);
    fprintf(out, "anomalies: %" PRId64 "\n", vc_report_anomalies(r));
    enum vc_verdict v = vc_report_verdict(r);
    fprintf(out, "verdict: %s%s\n", vc_verdict_name(v),
            v == VC_INCONCLUSIVE ? " (the history is incomplete, and what it holds proves no "
                                   "anomaly: no verdict)"
                                 : "");
}

static void json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(out, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(out, "\\u%04x", (unsigned char)*s);
        else
            fputc(*s, out);
    }
    fputc('"', out);
}

void vc_report_json(const struct vc_report *r, FILE *out)
{
    fprintf(out,
            "{\"verdict\": \"%s\", \"anomalies\": %" PRId64 ", \"inputs_expected\": %" PRId64
            ", \"inputs_acked\": %" PRId64 ", \"visible\": %" PRId64
            ", \"transactions_visible\": %" PRId64 ", \"read_uncommitted\": %" PRId64
            ", \"aborted_seen\": %" PRId64 ", \"offsets_checked\": %" PRId64
            ", \"incomplete_total\": %" PRId64 ", \"incomplete\": [",
            vc_verdict_name(vc_report_verdict(r)), vc_report_anomalies(r), r->inputs_expected,
            r->inputs_acked, r->visible, r->txns_visible, r->uncommitted, r->aborted_seen,
            r->offsets_checked, r->reasons_total);
    for (int i = 0; i < r->n_reasons; i++) {
        fputs(i ? ", " : "", out);
        json_string(out, r->reasons[i]);
    }
    fputs("], \"classes\": {", out);
    for (int c = 0; c < VC_CLASSES; c++) {
        const struct vc_class_report *cr = &r->cls[c];
        fprintf(out, "%s\"%s\": {\"count\": %" PRId64 ", \"examples\": [", c ? ", " : "",
                class_names[c], cr->count);
        for (int e = 0; e < cr->n_examples; e++) {
            fprintf(out,
                    "%s{\"partition\": %d, \"offset\": %" PRId64 ", \"value\": ", e ? ", " : "",
                    cr->examples[e].partition, cr->examples[e].offset);
            json_string(out, cr->examples[e].value);
            fputc('}', out);
        }
        fputs("]}", out);
    }
    fputs("}}", out);
}
