/* SPDX-License-Identifier: Apache-2.0 */
/* metrics: the registry of counters, gauges and histograms and its text rendering
 * (Prometheus exposition format 0.0.4). Each family keeps its series in creation order (the
 * order they render in) and an open-addressing index from the label values to them, so that
 * a produce path looking up its topic's series costs one hash of the topic name. */
#include "base/metrics.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"

#define METRICS_DEFAULT_MAX_SERIES 100000

struct metrics_series {
    struct metrics_family *f;
    char *key; /* the label values, each NUL-terminated, one after the other */
    size_t key_len;
    uint64_t hash;
    bool used;                              /* looked up since metrics_family_mark */
    const char *values[METRICS_MAX_LABELS]; /* into key */
    double value;                           /* counter, gauge; histogram: the sum */
    uint64_t count;                         /* histogram: observations */
    uint64_t buckets[];                     /* histogram: per bucket, not cumulative */
};

struct metrics_family {
    struct metrics *m;
    struct metrics_family *next; /* declaration order */
    enum metrics_type type;
    char *name, *help;
    size_t n_labels;
    char *labels[METRICS_MAX_LABELS];
    size_t n_buckets;
    double buckets[METRICS_MAX_BUCKETS];
    struct metrics_series **series; /* creation order */
    size_t n, cap;
    uint32_t *index; /* 1 + position in series, 0 = empty; index_cap is a power of two */
    size_t index_cap;
};

struct metrics {
    struct metrics_family *head, *tail;
    size_t max_series;
    uint64_t dropped;
};

struct metrics *metrics_new(size_t max_series)
{
    struct metrics *m = calloc(1, sizeof *m);
    if (m)
        m->max_series = max_series ? max_series : METRICS_DEFAULT_MAX_SERIES;
    return m;
}

static void family_free_series(struct metrics_family *f)
{
    for (size_t i = 0; i < f->n; i++) {
        free(f->series[i]->key);
        free(f->series[i]);
    }
    f->n = 0;
    if (f->index)
        memset(f->index, 0, f->index_cap * sizeof *f->index);
}

/* Frees a family with its series and names. */
static void family_free(struct metrics_family *f)
{
    family_free_series(f);
    free(f->series);
    free(f->index);
    for (size_t i = 0; i < f->n_labels; i++)
        free(f->labels[i]);
    free(f->name);
    free(f->help);
    free(f);
}

void metrics_free(struct metrics *m)
{
    if (m == NULL)
        return;
    struct metrics_family *f = m->head;
    while (f) {
        struct metrics_family *next = f->next;
        family_free(f);
        f = next;
    }
    free(m);
}

uint64_t metrics_dropped(const struct metrics *m)
{
    return m ? m->dropped : 0;
}

static bool name_ok(const char *s, bool colon)
{
    if (s == NULL || *s == '\0')
        return false;
    for (const char *p = s; *p; p++) {
        char c = *p;
        bool alpha =
            (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':');
        if (!alpha && !(p > s && c >= '0' && c <= '9'))
            return false;
    }
    return true;
}

static bool label_name_ok(const char *s)
{
    return name_ok(s, false) && strncmp(s, "__", 2) != 0 && strcmp(s, "le") != 0;
}

static bool same_shape(const struct metrics_family *f, enum metrics_type type, size_t n_labels,
                       const char *const *label_names, size_t n_buckets, const double *buckets)
{
    if (f->type != type || f->n_labels != n_labels)
        return false;
    for (size_t i = 0; i < n_labels; i++)
        if (strcmp(f->labels[i], label_names[i]) != 0)
            return false;
    if (type != METRICS_HISTOGRAM)
        return true;
    if (f->n_buckets != n_buckets)
        return false;
    for (size_t i = 0; i < n_buckets; i++)
        if (f->buckets[i] != buckets[i])
            return false;
    return true;
}

struct metrics_family *metrics_family_new(struct metrics *m, enum metrics_type type,
                                          const char *name, const char *help, size_t n_labels,
                                          const char *const *label_names, size_t n_buckets,
                                          const double *buckets)
{
    struct metrics_family *f;

    if (m == NULL || !name_ok(name, true) || n_labels > METRICS_MAX_LABELS)
        return NULL;
    for (size_t i = 0; i < n_labels; i++)
        if (!label_name_ok(label_names[i]))
            return NULL;
    if (type == METRICS_HISTOGRAM) {
        if (n_buckets < 1 || n_buckets > METRICS_MAX_BUCKETS)
            return NULL;
        for (size_t i = 0; i < n_buckets; i++)
            if (!isfinite(buckets[i]) || (i > 0 && buckets[i] <= buckets[i - 1]))
                return NULL;
    } else
        n_buckets = 0;
    for (f = m->head; f; f = f->next)
        if (strcmp(f->name, name) == 0)
            return same_shape(f, type, n_labels, label_names, n_buckets, buckets) ? f : NULL;

    f = calloc(1, sizeof *f);
    if (f == NULL)
        return NULL;
    f->m = m;
    f->type = type;
    f->name = strdup(name);
    f->help = strdup(help ? help : "");
    if (f->name == NULL || f->help == NULL)
        goto err;
    for (size_t i = 0; i < n_labels; i++) {
        f->labels[i] = strdup(label_names[i]);
        if (f->labels[i] == NULL)
            goto err;
        f->n_labels = i + 1;
    }
    f->n_buckets = n_buckets;
    if (n_buckets)
        memcpy(f->buckets, buckets, n_buckets * sizeof *buckets);
    if (n_labels == 0 && metrics_series(f, NULL) == NULL)
        goto err;
    if (m->tail)
        m->tail->next = f;
    else
        m->head = f;
    m->tail = f;
    return f;

err:
    family_free(f);
    return NULL;
}

/* FNV-1a over the joined label values. */
static uint64_t key_hash(const char *key, size_t len)
{
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < len; i++) {
        h ^= (uint8_t)key[i];
        h *= 1099511628211ull;
    }
    return h;
}

/* Rebuilds the index at twice the series' capacity (load at most one half). */
static int index_grow(struct metrics_family *f, size_t want)
{
    size_t cap = 16;
    while (cap < 2 * want)
        cap *= 2;
    if (cap <= f->index_cap)
        return 0;
    uint32_t *idx = calloc(cap, sizeof *idx);
    if (idx == NULL)
        return ERR_NOMEM;
    for (size_t i = 0; i < f->n; i++) {
        size_t slot = f->series[i]->hash & (cap - 1);
        while (idx[slot])
            slot = (slot + 1) & (cap - 1);
        idx[slot] = (uint32_t)(i + 1);
    }
    free(f->index);
    f->index = idx;
    f->index_cap = cap;
    return 0;
}

struct metrics_series *metrics_series(struct metrics_family *f, const char *const *values)
{
    char stack[512], *key = stack;
    size_t len = 0;
    struct metrics_series *s = NULL;

    if (f == NULL)
        return NULL;
    for (size_t i = 0; i < f->n_labels; i++)
        len += strlen(values[i]) + 1;
    if (len > sizeof stack && (key = malloc(len)) == NULL)
        return NULL;
    len = 0;
    for (size_t i = 0; i < f->n_labels; i++) {
        size_t l = strlen(values[i]) + 1;
        memcpy(key + len, values[i], l);
        len += l;
    }
    uint64_t h = key_hash(key, len);
    if (f->index_cap) {
        size_t slot = h & (f->index_cap - 1);
        while (f->index[slot]) {
            struct metrics_series *c = f->series[f->index[slot] - 1];
            if (c->hash == h && c->key_len == len && memcmp(c->key, key, len) == 0) {
                s = c;
                s->used = true;
                goto out;
            }
            slot = (slot + 1) & (f->index_cap - 1);
        }
    }
    if (f->n >= f->m->max_series) {
        f->m->dropped++;
        goto out;
    }
    if (f->n == f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 8;
        struct metrics_series **v = realloc(f->series, cap * sizeof *v);
        if (v == NULL)
            goto out;
        f->series = v;
        f->cap = cap;
    }
    if (index_grow(f, f->n + 1) != 0)
        goto out;
    s = calloc(1, sizeof *s + (f->n_buckets + 1) * sizeof s->buckets[0]);
    if (s == NULL)
        goto out;
    s->key = malloc(len ? len : 1);
    if (s->key == NULL) {
        free(s);
        s = NULL;
        goto out;
    }
    memcpy(s->key, key, len);
    s->key_len = len;
    s->hash = h;
    s->used = true;
    s->f = f;
    for (size_t i = 0, at = 0; i < f->n_labels; i++) {
        s->values[i] = s->key + at;
        at += strlen(s->key + at) + 1;
    }
    f->series[f->n++] = s;
    size_t slot = h & (f->index_cap - 1);
    while (f->index[slot])
        slot = (slot + 1) & (f->index_cap - 1);
    f->index[slot] = (uint32_t)f->n;
out:
    if (key != stack)
        free(key);
    return s;
}

struct metrics_series *metrics_series0(struct metrics_family *f)
{
    return f && f->n_labels == 0 ? metrics_series(f, NULL) : NULL;
}

struct metrics_series *metrics_series1(struct metrics_family *f, const char *v0)
{
    return f && f->n_labels == 1 ? metrics_series(f, &v0) : NULL;
}

struct metrics_series *metrics_series2(struct metrics_family *f, const char *v0, const char *v1)
{
    const char *v[2] = {v0, v1};
    return f && f->n_labels == 2 ? metrics_series(f, v) : NULL;
}

void metrics_family_reset(struct metrics_family *f)
{
    if (f == NULL)
        return;
    family_free_series(f);
    /* The one series of a family without labels exists from the start, so it stays. */
    if (f->n_labels == 0)
        (void)metrics_series(f, NULL);
}

void metrics_family_mark(struct metrics_family *f)
{
    for (size_t i = 0; f && i < f->n; i++)
        f->series[i]->used = f->n_labels == 0;
}

void metrics_family_sweep(struct metrics_family *f)
{
    size_t kept = 0;
    if (f == NULL)
        return;
    for (size_t i = 0; i < f->n; i++) {
        struct metrics_series *s = f->series[i];
        if (s->used || f->n_labels == 0) {
            f->series[kept++] = s;
            continue;
        }
        free(s->key);
        free(s);
    }
    if (kept == f->n)
        return;
    f->n = kept;
    /* The positions moved: index them again (the index is at least as large as needed). */
    memset(f->index, 0, f->index_cap * sizeof *f->index);
    for (size_t i = 0; i < f->n; i++) {
        size_t slot = f->series[i]->hash & (f->index_cap - 1);
        while (f->index[slot])
            slot = (slot + 1) & (f->index_cap - 1);
        f->index[slot] = (uint32_t)(i + 1);
    }
}

void metrics_add(struct metrics_series *s, double v)
{
    if (s && s->f->type != METRICS_HISTOGRAM)
        s->value += v;
}

void metrics_set(struct metrics_series *s, double v)
{
    if (s && s->f->type != METRICS_HISTOGRAM)
        s->value = v;
}

void metrics_observe(struct metrics_series *s, double v)
{
    if (s == NULL || s->f->type != METRICS_HISTOGRAM)
        return;
    size_t i = 0;
    while (i < s->f->n_buckets && !(v <= s->f->buckets[i]))
        i++;
    s->buckets[i]++; /* i == n_buckets: only in +Inf (NaN too) */
    s->count++;
    s->value += v;
}

void metrics_histogram_load(struct metrics_series *s, const uint64_t *counts, size_t n, double sum)
{
    if (s == NULL || s->f->type != METRICS_HISTOGRAM || n != s->f->n_buckets + 1)
        return;
    s->count = 0;
    for (size_t i = 0; i < n; i++) {
        s->buckets[i] = counts[i];
        s->count += counts[i];
    }
    s->value = sum;
}

double metrics_value(const struct metrics_series *s)
{
    if (s == NULL)
        return 0;
    return s->f->type == METRICS_HISTOGRAM ? (double)s->count : s->value;
}

char *metrics_format_value(double v, char buf[32])
{
    if (isnan(v))
        return strcpy(buf, "NaN");
    if (isinf(v))
        return strcpy(buf, v > 0 ? "+Inf" : "-Inf");
    if (v == floor(v) && fabs(v) < 9007199254740992.0) {
        snprintf(buf, 32, "%lld", (long long)v);
        return buf;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, 32, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    return buf;
}

/* ---- rendering --------------------------------------------------------------------------- */

static void out_reserve(struct metrics_text *o, size_t more)
{
    if (o->oom || o->len + more + 1 <= o->cap)
        return;
    size_t cap = o->cap ? o->cap : 4096;
    while (cap < o->len + more + 1)
        cap *= 2;
    char *p = realloc(o->p, cap);
    if (p == NULL) {
        o->oom = true;
        return;
    }
    o->p = p;
    o->cap = cap;
}

static void out_put(struct metrics_text *o, const char *s, size_t n)
{
    out_reserve(o, n);
    if (o->oom)
        return;
    memcpy(o->p + o->len, s, n);
    o->len += n;
    o->p[o->len] = '\0';
}

static void out_str(struct metrics_text *o, const char *s)
{
    out_put(o, s, strlen(s));
}

/* Label values escape \, " and newline; help text \ and newline (the format's rules). */
static void out_escaped(struct metrics_text *o, const char *s, bool quote)
{
    const char *special = quote ? "\\\n\"" : "\\\n";
    for (const char *p = s; *p; p++) {
        size_t run = strcspn(p, special); /* copied as they are, in one go */
        if (run) {
            out_put(o, p, run);
            p += run;
            if (*p == '\0')
                break;
        }
        if (*p == '\\')
            out_put(o, "\\\\", 2);
        else if (*p == '\n')
            out_put(o, "\\n", 2);
        else if (quote && *p == '"')
            out_put(o, "\\\"", 2);
        else
            out_put(o, p, 1);
    }
}

/* name suffix{labels[,le="x"]} value\n */
static void out_line(struct metrics_text *o, const char *name, const char *suffix, size_t n_labels,
                     const char *const *labels, const char *const *values, const char *le, double v)
{
    char num[32];
    out_str(o, name);
    out_str(o, suffix);
    if (n_labels || le) {
        out_put(o, "{", 1);
        for (size_t i = 0; i < n_labels; i++) {
            if (i)
                out_put(o, ",", 1);
            out_str(o, labels[i]);
            out_put(o, "=\"", 2);
            out_escaped(o, values[i], true);
            out_put(o, "\"", 1);
        }
        if (le) {
            if (n_labels)
                out_put(o, ",", 1);
            out_str(o, "le=\"");
            out_str(o, le);
            out_put(o, "\"", 1);
        }
        out_put(o, "}", 1);
    }
    out_put(o, " ", 1);
    out_str(o, metrics_format_value(v, num));
    out_put(o, "\n", 1);
}

static void out_sample(struct metrics_text *o, const struct metrics_family *f, const char *suffix,
                       const struct metrics_series *s, const char *le, double v)
{
    out_line(o, f->name, suffix, f->n_labels, (const char *const *)f->labels, s->values, le, v);
}

static const char *type_name(enum metrics_type t)
{
    return t == METRICS_COUNTER ? "counter" : t == METRICS_GAUGE ? "gauge" : "histogram";
}

int metrics_render(const struct metrics *m, char **out, size_t *len)
{
    return metrics_render_as(m, METRICS_TEXT, out, len);
}

/* The family's name as its HELP and TYPE lines give it: OpenMetrics names a counter family
 * without the "_total" its samples carry. */
static void out_family_name(struct metrics_text *o, const char *name, enum metrics_type type,
                            enum metrics_format fmt)
{
    size_t n = strlen(name);
    if (fmt == METRICS_OPENMETRICS && type == METRICS_COUNTER && n > 6 &&
        strcmp(name + n - 6, "_total") == 0)
        n -= 6;
    out_put(o, name, n);
}

void metrics_text_family(struct metrics_text *t, enum metrics_format fmt, enum metrics_type type,
                         const char *name, const char *help)
{
    out_str(t, "# HELP ");
    out_family_name(t, name, type, fmt);
    out_put(t, " ", 1);
    /* OpenMetrics escapes a double quote in help text too; 0.0.4 leaves it. */
    out_escaped(t, help, fmt == METRICS_OPENMETRICS);
    out_str(t, "\n# TYPE ");
    out_family_name(t, name, type, fmt);
    out_put(t, " ", 1);
    out_str(t, type_name(type));
    out_put(t, "\n", 1);
}

void metrics_text_sample(struct metrics_text *t, const char *name, size_t n_labels,
                         const char *const *label_names, const char *const *values, double v)
{
    out_line(t, name, "", n_labels, label_names, values, NULL, v);
}

void metrics_text_put(struct metrics_text *t, const char *s, size_t n)
{
    out_put(t, s, n);
}

void metrics_text_end(struct metrics_text *t, enum metrics_format fmt)
{
    if (fmt == METRICS_OPENMETRICS)
        out_str(t, "# EOF\n");
}

int metrics_text_take(struct metrics_text *t, char **out, size_t *len)
{
    out_reserve(t, 0);
    if (t->oom || t->p == NULL) {
        free(t->p);
        memset(t, 0, sizeof *t);
        return ERR_NOMEM;
    }
    if (t->len == 0)
        t->p[0] = '\0';
    *out = t->p;
    *len = t->len;
    memset(t, 0, sizeof *t);
    return 0;
}

void metrics_render_into(const struct metrics *m, enum metrics_format fmt, struct metrics_text *t)
{
    for (const struct metrics_family *f = m ? m->head : NULL; f; f = f->next) {
        metrics_text_family(t, fmt, f->type, f->name, f->help);
        for (size_t i = 0; i < f->n; i++) {
            const struct metrics_series *s = f->series[i];
            if (f->type != METRICS_HISTOGRAM) {
                out_sample(t, f, "", s, NULL, s->value);
                continue;
            }
            uint64_t cum = 0;
            char le[32];
            for (size_t b = 0; b < f->n_buckets; b++) {
                cum += s->buckets[b];
                out_sample(t, f, "_bucket", s, metrics_format_value(f->buckets[b], le),
                           (double)cum);
            }
            out_sample(t, f, "_bucket", s, "+Inf", (double)s->count);
            out_sample(t, f, "_sum", s, NULL, s->value);
            out_sample(t, f, "_count", s, NULL, (double)s->count);
        }
    }
}

int metrics_render_as(const struct metrics *m, enum metrics_format fmt, char **out, size_t *len)
{
    struct metrics_text t = {0};
    metrics_render_into(m, fmt, &t);
    metrics_text_end(&t, fmt);
    return metrics_text_take(&t, out, len);
}
