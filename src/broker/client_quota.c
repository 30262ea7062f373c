/* SPDX-License-Identifier: Apache-2.0 */
/* client_quota: see client_quota.h. The table is an array searched by a hash of the key and
 * then the strings: it holds one entry per client connection identity, a few hundred at most
 * on the brokers Tally is for. */
#include "broker/client_quota.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CQ_EXPIRE_MS (3600 * 1000)

void cq_sensor_init(struct cq_sensor *s, int samples, int64_t sample_ms)
{
    memset(s, 0, sizeof *s);
    s->samples = samples >= 2 && samples <= CQ_MAX_SAMPLES ? samples : CQ_DEFAULT_SAMPLES;
    s->sample_ms = sample_ms >= 1 ? sample_ms : CQ_DEFAULT_SAMPLE_MS;
    for (int i = 0; i < CQ_MAX_SAMPLES; i++)
        s->start[i] = -1;
}

/* Whether sample i still counts at now_ms: it started within the whole window. */
static bool live(const struct cq_sensor *s, int i, int64_t now_ms)
{
    return s->start[i] >= 0 && now_ms - s->start[i] < (int64_t)s->samples * s->sample_ms;
}

void cq_record(struct cq_sensor *s, int64_t now_ms, double value)
{
    if (s->start[s->cur] < 0) {
        s->start[s->cur] = now_ms;
    } else if (now_ms >= s->start[s->cur] + s->sample_ms) {
        s->cur = (s->cur + 1) % s->samples;
        s->start[s->cur] = now_ms;
        s->value[s->cur] = 0;
    }
    s->value[s->cur] += value;
}

/* The span the rate divides by (Kafka's Rate.windowSize), in ms. */
static int64_t span_ms(const struct cq_sensor *s, int64_t now_ms)
{
    int64_t oldest = now_ms;
    for (int i = 0; i < s->samples; i++)
        if (live(s, i, now_ms) && s->start[i] < oldest)
            oldest = s->start[i];
    int64_t span = now_ms - oldest;
    int64_t full = span / s->sample_ms, min_full = s->samples - 1;
    if (full < min_full)
        span += (min_full - full) * s->sample_ms;
    return span;
}

double cq_rate(const struct cq_sensor *s, int64_t now_ms)
{
    double total = 0;
    for (int i = 0; i < s->samples; i++)
        if (live(s, i, now_ms))
            total += s->value[i];
    return total * 1000.0 / (double)span_ms(s, now_ms);
}

/* The bytes of the current and the previous sample and the ms since the older of them began
 * (at least one sample): the recent window of the header's refinement. */
static double recent(const struct cq_sensor *s, int64_t now_ms, double *span)
{
    int prev = (s->cur + s->samples - 1) % s->samples;
    double total = 0;
    int64_t oldest = now_ms;
    for (int k = 0; k < 2; k++) {
        int i = k ? prev : s->cur;
        if (s->start[i] >= 0 && now_ms - s->start[i] < 2 * s->sample_ms) {
            total += s->value[i];
            if (s->start[i] < oldest)
                oldest = s->start[i];
        }
    }
    *span = (double)(now_ms - oldest < s->sample_ms ? s->sample_ms : now_ms - oldest);
    return total;
}

int64_t cq_throttle_ms(const struct cq_sensor *s, int64_t now_ms, double quota)
{
    if (!(quota > 0))
        return 0;
    double t = 0, span;
    double rate = cq_rate(s, now_ms);
    if (rate > quota)
        t = (rate - quota) / quota * (double)span_ms(s, now_ms);
    double bytes = recent(s, now_ms, &span);
    if (bytes * 1000.0 > quota * span) {
        double tr = (bytes * 1000.0 / span - quota) / quota * span;
        if (tr > t)
            t = tr;
    }
    double cap = (double)s->samples * (double)s->sample_ms;
    return (int64_t)(t < cap ? t : cap);
}

double cq_bucket_tokens(struct cq_bucket *b, int64_t now_ms, double rate, double burst)
{
    if (!(rate > 0))
        return burst;
    if (!b->started) {
        b->started = true;
        b->tokens = burst;
        b->last_ms = now_ms;
    } else if (now_ms > b->last_ms) {
        b->tokens += rate * (double)(now_ms - b->last_ms) / 1000.0;
        b->last_ms = now_ms;
    }
    /* A lowered quota lowers the burst at once. */
    if (b->tokens > burst)
        b->tokens = burst;
    return b->tokens;
}

bool cq_bucket_exceeded(struct cq_bucket *b, int64_t now_ms, double rate, double burst)
{
    return rate > 0 && cq_bucket_tokens(b, now_ms, rate, burst) < 0;
}

int64_t cq_bucket_throttle_ms(struct cq_bucket *b, int64_t now_ms, double rate, double burst)
{
    if (!(rate > 0))
        return 0;
    double tokens = cq_bucket_tokens(b, now_ms, rate, burst);
    return tokens < 0 ? (int64_t)llround(-tokens / rate * 1000.0) : 0;
}

int64_t cq_bucket_record(struct cq_bucket *b, int64_t now_ms, double rate, double burst,
                         double permits)
{
    if (!(rate > 0))
        return 0;
    cq_bucket_tokens(b, now_ms, rate, burst);
    b->tokens -= permits;
    return cq_bucket_throttle_ms(b, now_ms, rate, burst);
}

struct cq_entry {
    uint32_t hash;
    char *principal, *client_id;
    int64_t last_ms;
    struct cq_sensor sensor[CQ_KINDS];
    struct cq_bucket bucket;
};

struct cq_table {
    int samples;
    int64_t sample_ms;
    struct cq_entry **e;
    size_t n, cap;
};

struct cq_table *cq_table_new(int samples, int64_t sample_ms)
{
    struct cq_table *t = calloc(1, sizeof *t);
    if (t) {
        t->samples = samples;
        t->sample_ms = sample_ms;
    }
    return t;
}

static void entry_free(struct cq_entry *e)
{
    free(e->principal);
    free(e->client_id);
    free(e);
}

void cq_table_free(struct cq_table *t)
{
    if (t == NULL)
        return;
    for (size_t i = 0; i < t->n; i++)
        entry_free(t->e[i]);
    free(t->e);
    free(t);
}

size_t cq_table_size(const struct cq_table *t)
{
    return t->n;
}

/* FNV-1a over both strings, with a separator that cannot occur in a C string. */
static uint32_t key_hash(const char *p, const char *c)
{
    uint32_t h = 2166136261u;
    for (; *p; p++)
        h = (h ^ (uint8_t)*p) * 16777619u;
    h = (h ^ 0xFFu) * 16777619u;
    for (; *c; c++)
        h = (h ^ (uint8_t)*c) * 16777619u;
    return h;
}

static struct cq_entry *lookup(struct cq_table *t, const char *p, const char *c, int64_t now_ms)
{
    uint32_t h = key_hash(p, c);
    for (size_t i = 0; i < t->n;) {
        struct cq_entry *e = t->e[i];
        if (e->hash == h && strcmp(e->principal, p) == 0 && strcmp(e->client_id, c) == 0)
            return e;
        if (now_ms - e->last_ms > CQ_EXPIRE_MS) {
            entry_free(e);
            t->e[i] = t->e[--t->n];
            continue;
        }
        i++;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        struct cq_entry **a = realloc(t->e, cap * sizeof *a);
        if (a == NULL)
            return NULL;
        t->e = a;
        t->cap = cap;
    }
    struct cq_entry *e = calloc(1, sizeof *e);
    if (e == NULL)
        return NULL;
    e->principal = strdup(p);
    e->client_id = strdup(c);
    if (e->principal == NULL || e->client_id == NULL) {
        entry_free(e);
        return NULL;
    }
    e->hash = h;
    for (int k = 0; k < CQ_KINDS; k++)
        cq_sensor_init(&e->sensor[k], t->samples, t->sample_ms);
    t->e[t->n++] = e;
    return e;
}

struct cq_entry *cq_table_entry(struct cq_table *t, const char *principal, const char *client_id,
                                int64_t now_ms)
{
    struct cq_entry *e = lookup(t, principal ? principal : "", client_id ? client_id : "", now_ms);
    if (e)
        e->last_ms = now_ms;
    return e;
}

int64_t cq_entry_record(struct cq_table *t, struct cq_entry *e, enum cq_kind kind, int64_t now_ms,
                        double value, double quota)
{
    if (e == NULL || !(quota > 0) || kind < 0 || kind >= CQ_KINDS)
        return 0;
    if (now_ms > e->last_ms)
        e->last_ms = now_ms;
    cq_record(&e->sensor[kind], now_ms, value);
    int64_t ms = cq_throttle_ms(&e->sensor[kind], now_ms, quota);
    (void)t;
    /* The sensor's sample, which has Kafka's default when the table was given none. */
    int64_t cap = e->sensor[kind].sample_ms;
    return kind == CQ_REQUEST && ms > cap ? cap : ms;
}

int64_t cq_table_record(struct cq_table *t, const char *principal, const char *client_id,
                        enum cq_kind kind, int64_t now_ms, double bytes, double quota)
{
    if (!(quota > 0) || kind < 0 || kind >= CQ_KINDS)
        return 0;
    return cq_entry_record(t, cq_table_entry(t, principal, client_id, now_ms), kind, now_ms, bytes,
                           quota);
}

struct cq_bucket *cq_entry_bucket(struct cq_entry *e)
{
    return &e->bucket;
}

double cq_table_burst(const struct cq_table *t, double rate)
{
    int samples = t->samples >= 1 ? t->samples : CQ_DEFAULT_SAMPLES;
    int64_t sample_ms = t->sample_ms >= 1 ? t->sample_ms : CQ_DEFAULT_SAMPLE_MS;
    return rate * (double)samples * (double)sample_ms / 1000.0;
}
