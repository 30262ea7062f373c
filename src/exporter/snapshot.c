/* SPDX-License-Identifier: Apache-2.0 */
/* exporter snapshot: the per-partition series (docs/metrics.md, "Partitions") of one scrape,
 * copied on the loop as flat rows of numbers, and formatted into text on the HTTP thread.
 * A 10,000-partition scrape holds the loop for the walk and the copy only: the label
 * hashing, number formatting and text of its ~80,000 samples are done off the loop. The
 * rows are never changed once published, and a snapshot is freed by whichever thread drops
 * its last reference (an atomic count), so the two threads share nothing else. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/metrics.h"
#include "exporter.h"

/* The gauges of a partition, in the order their families render (enum exporter_part_value). */
static const struct {
    const char *name, *help;
} part_families[EXPORTER_PART_N_VALUES] = {
    {"tally_partition_log_start_offset", "The first offset the partition's log holds."},
    {"tally_partition_log_end_offset", "The offset the next record appended will get (LEO)."},
    {"tally_partition_high_watermark",
     "The high watermark: records below it are replicated to the ISR."},
    {"tally_partition_last_stable_offset",
     "The last stable offset: the first offset of the earliest open transaction, or the high "
     "watermark."},
    {"tally_partition_size_bytes", "Bytes of the partition's segment files."},
    {"tally_partition_segments", "Segments of the partition's log, the active one included."},
};
static const char txn_age_name[] = "tally_partition_oldest_open_txn_age_seconds";
static const char txn_age_help[] =
    "Age of the oldest open transaction here, the one holding the last stable offset (from "
    "the timestamp of its first record); 0 when none is open.";
static const char follower_lag_name[] = "tally_partition_follower_lag_records";
static const char follower_lag_help[] =
    "On the leader: its log end offset minus each follower's, as the follower's last fetch "
    "showed it.";

struct snap_row {
    size_t topic; /* offset of its name in names */
    int32_t index;
    int64_t v[EXPORTER_PART_N_VALUES];
    double txn_age; /* < 0: no series */
    size_t first_follower, n_followers;
};

struct snap_follower {
    int32_t id;
    int64_t lag;
};

struct exporter_snapshot {
    _Atomic int refs;
    bool oom; /* an add failed: the snapshot renders, but without the rows it lost */
    struct snap_row *rows;
    size_t n, cap;
    struct snap_follower *fol;
    size_t n_fol, cap_fol;
    char *names; /* NUL-terminated topic names, one after the other */
    size_t names_len, names_cap;
};

struct exporter_snapshot *exporter_snapshot_new(void)
{
    struct exporter_snapshot *s = calloc(1, sizeof *s);
    if (s)
        atomic_init(&s->refs, 1);
    return s;
}

void exporter_snapshot_hold(struct exporter_snapshot *s)
{
    if (s)
        atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
}

void exporter_snapshot_release(struct exporter_snapshot *s)
{
    if (s == NULL || atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1)
        return;
    free(s->rows);
    free(s->fol);
    free(s->names);
    free(s);
}

/* Grows *v (of *cap elements of `size`) to hold `need`. False when out of memory. */
static bool grow(void **v, size_t *cap, size_t need, size_t size, size_t first)
{
    if (need <= *cap)
        return true;
    size_t c = *cap ? *cap : first;
    while (c < need)
        c *= 2;
    void *n = realloc(*v, c * size);
    if (n == NULL)
        return false;
    *v = n;
    *cap = c;
    return true;
}

int exporter_snapshot_add(struct exporter_snapshot *s, const char *topic, int32_t index,
                          const int64_t v[EXPORTER_PART_N_VALUES], double txn_age)
{
    size_t tl = strlen(topic) + 1;
    /* Partitions come topic by topic as often as not: a name equal to the last row's is
     * shared. */
    size_t at;
    if (s->n > 0 && strcmp(s->names + s->rows[s->n - 1].topic, topic) == 0)
        at = s->rows[s->n - 1].topic;
    else {
        if (!grow((void **)&s->names, &s->names_cap, s->names_len + tl, 1, 4096))
            goto oom;
        at = s->names_len;
        memcpy(s->names + at, topic, tl);
        s->names_len += tl;
    }
    if (!grow((void **)&s->rows, &s->cap, s->n + 1, sizeof *s->rows, 256))
        goto oom;
    struct snap_row *r = &s->rows[s->n++];
    r->topic = at;
    r->index = index;
    memcpy(r->v, v, sizeof r->v);
    r->txn_age = txn_age;
    r->first_follower = s->n_fol;
    r->n_followers = 0;
    return 0;
oom:
    s->oom = true;
    return ERR_NOMEM;
}

int exporter_snapshot_add_follower(struct exporter_snapshot *s, int32_t follower, int64_t lag)
{
    if (s->n == 0)
        return ERR_NOMEM; /* no row to belong to; not reached */
    if (!grow((void **)&s->fol, &s->cap_fol, s->n_fol + 1, sizeof *s->fol, 256)) {
        s->oom = true;
        return ERR_NOMEM;
    }
    s->fol[s->n_fol++] = (struct snap_follower){.id = follower, .lag = lag};
    s->rows[s->n - 1].n_followers++;
    return 0;
}

size_t exporter_snapshot_rows(const struct exporter_snapshot *s)
{
    return s ? s->n : 0;
}

int exporter_snapshot_render(const struct exporter_snapshot *s, enum metrics_format fmt,
                             char **text, size_t *len)
{
    static const char *const tp[] = {"topic", "partition", "follower"};
    struct metrics_text t = {.p = *text, .len = *text ? *len : 0, .cap = *text ? *len + 1 : 0};
    size_t n = s ? s->n : 0;
    char index[16], follower[16];

    for (int f = 0; f < EXPORTER_PART_N_VALUES; f++) {
        metrics_text_family(&t, fmt, METRICS_GAUGE, part_families[f].name, part_families[f].help);
        for (size_t i = 0; i < n; i++) {
            const struct snap_row *r = &s->rows[i];
            snprintf(index, sizeof index, "%d", r->index);
            const char *v[2] = {s->names + r->topic, index};
            metrics_text_sample(&t, part_families[f].name, 2, tp, v, (double)r->v[f]);
        }
    }
    metrics_text_family(&t, fmt, METRICS_GAUGE, txn_age_name, txn_age_help);
    for (size_t i = 0; i < n; i++) {
        const struct snap_row *r = &s->rows[i];
        if (r->txn_age < 0)
            continue;
        snprintf(index, sizeof index, "%d", r->index);
        const char *v[2] = {s->names + r->topic, index};
        metrics_text_sample(&t, txn_age_name, 2, tp, v, r->txn_age);
    }
    metrics_text_family(&t, fmt, METRICS_GAUGE, follower_lag_name, follower_lag_help);
    for (size_t i = 0; i < n; i++) {
        const struct snap_row *r = &s->rows[i];
        snprintf(index, sizeof index, "%d", r->index);
        for (size_t k = 0; k < r->n_followers; k++) {
            const struct snap_follower *fo = &s->fol[r->first_follower + k];
            snprintf(follower, sizeof follower, "%d", fo->id);
            const char *v[3] = {s->names + r->topic, index, follower};
            metrics_text_sample(&t, follower_lag_name, 3, tp, v, (double)fo->lag);
        }
    }
    metrics_text_end(&t, fmt);
    *text = NULL;
    return metrics_text_take(&t, text, len);
}
