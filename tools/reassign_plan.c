/* SPDX-License-Identifier: Apache-2.0 */
/* reassign_plan: Kafka's reassignment files, --generate's placement and --execute's throttle
 * lists (reassign_plan.h). The JSON reader is a small recursive-descent one that knows just
 * objects, arrays, strings, integers and the literals — what these files hold. */
#include "reassign_plan.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define RP_KEY_MAX 256
#define RP_DEPTH_MAX 32

/* ---- plans ----------------------------------------------------------------------------------- */

void rp_plan_free(struct rp_plan *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->moves[i].topic);
    free(p->moves);
    memset(p, 0, sizeof *p);
}

int rp_plan_add(struct rp_plan *p, const char *topic, int32_t partition, const int32_t *replicas,
                int32_t n_replicas)
{
    struct rp_move *m;
    if (n_replicas < 0 || n_replicas > RP_MAX_REPLICAS)
        return -1;
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 16;
        struct rp_move *v = realloc(p->moves, cap * sizeof *v);
        if (v == NULL)
            return -1;
        p->moves = v;
        p->cap = cap;
    }
    m = &p->moves[p->n];
    memset(m, 0, sizeof *m);
    if ((m->topic = strdup(topic)) == NULL)
        return -1;
    m->partition = partition;
    m->n_replicas = n_replicas;
    if (n_replicas > 0)
        memcpy(m->replicas, replicas, (size_t)n_replicas * sizeof *replicas);
    p->n++;
    return 0;
}

static int cmp_move(const void *x, const void *y)
{
    const struct rp_move *a = x, *b = y;
    int c = strcmp(a->topic, b->topic);
    return c != 0 ? c : (a->partition > b->partition) - (a->partition < b->partition);
}

void rp_plan_sort(struct rp_plan *p)
{
    if (p->n > 1)
        qsort(p->moves, p->n, sizeof *p->moves, cmp_move);
}

const struct rp_move *rp_plan_find(const struct rp_plan *p, const char *topic, int32_t partition)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->moves[i].partition == partition && strcmp(p->moves[i].topic, topic) == 0)
            return &p->moves[i];
    return NULL;
}

/* ---- a small JSON reader ----------------------------------------------------------------------
 */

struct jp {
    const char *s;
    size_t i;
    char *err;
    size_t errlen;
    bool failed;
};

static bool jfail(struct jp *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool jfail(struct jp *j, const char *fmt, ...)
{
    va_list ap;
    char what[256];
    if (j->failed)
        return false;
    j->failed = true;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(j->err, j->errlen, "the input string is not valid JSON: %s at offset %zu", what, j->i);
    return false;
}

static void ws(struct jp *j)
{
    while (j->s[j->i] == ' ' || j->s[j->i] == '\t' || j->s[j->i] == '\n' || j->s[j->i] == '\r')
        j->i++;
}

static bool peek(struct jp *j, char c)
{
    ws(j);
    return j->s[j->i] == c;
}

static bool expect(struct jp *j, char c)
{
    ws(j);
    if (j->s[j->i] != c)
        return jfail(j, "'%c' expected", c);
    j->i++;
    return true;
}

static int hex(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* A string into buf (NUL-terminated); \u escapes beyond ASCII are refused (names here are
 * ASCII). */
static bool jstring(struct jp *j, char *buf, size_t cap)
{
    size_t n = 0;
    if (!expect(j, '"'))
        return false;
    for (;;) {
        char c = j->s[j->i++];
        if (c == '\0')
            return jfail(j, "unterminated string");
        if (c == '"')
            break;
        if ((unsigned char)c < 0x20)
            return jfail(j, "control character in a string");
        if (c == '\\') {
            char e = j->s[j->i++];
            switch (e) {
            case '"':
            case '\\':
            case '/':
                c = e;
                break;
            case 'b':
                c = '\b';
                break;
            case 'f':
                c = '\f';
                break;
            case 'n':
                c = '\n';
                break;
            case 'r':
                c = '\r';
                break;
            case 't':
                c = '\t';
                break;
            case 'u': {
                int v = 0;
                for (int k = 0; k < 4; k++) {
                    int h = hex(j->s[j->i++]);
                    if (h < 0)
                        return jfail(j, "bad \\u escape");
                    v = v * 16 + h;
                }
                if (v == 0 || v > 0x7f)
                    return jfail(j, "\\u escape outside ASCII");
                c = (char)v;
                break;
            }
            default:
                return jfail(j, "bad escape");
            }
        }
        if (n + 1 >= cap)
            return jfail(j, "string longer than %zu bytes", cap - 1);
        buf[n++] = c;
    }
    buf[n] = '\0';
    return true;
}

static bool jint(struct jp *j, int64_t *out)
{
    bool neg = false;
    int64_t v = 0;
    size_t digits = 0;
    ws(j);
    if (j->s[j->i] == '-') {
        neg = true;
        j->i++;
    }
    while (j->s[j->i] >= '0' && j->s[j->i] <= '9') {
        if (++digits > 12)
            return jfail(j, "integer out of range");
        v = v * 10 + (j->s[j->i++] - '0');
    }
    if (digits == 0)
        return jfail(j, "integer expected");
    if (j->s[j->i] == '.' || j->s[j->i] == 'e' || j->s[j->i] == 'E')
        return jfail(j, "integer expected");
    *out = neg ? -v : v;
    return true;
}

static bool skip_value(struct jp *j, int depth);

/* Iterates an object: call with *first true; returns 1 with the next key (positioned at its
 * value), 0 at the end, -1 on an error. */
static int jobject_next(struct jp *j, bool *first, char *key, size_t cap)
{
    if (*first) {
        *first = false;
        if (!expect(j, '{'))
            return -1;
        if (peek(j, '}')) {
            j->i++;
            return 0;
        }
    } else if (peek(j, ',')) {
        j->i++;
    } else if (peek(j, '}')) {
        j->i++;
        return 0;
    } else {
        jfail(j, "',' or '}' expected");
        return -1;
    }
    if (!jstring(j, key, cap) || !expect(j, ':'))
        return -1;
    return 1;
}

/* The same for an array: returns 1 positioned at the next element, 0 at the end. */
static int jarray_next(struct jp *j, bool *first)
{
    if (*first) {
        *first = false;
        if (!expect(j, '['))
            return -1;
        if (peek(j, ']')) {
            j->i++;
            return 0;
        }
        return 1;
    }
    if (peek(j, ',')) {
        j->i++;
        return 1;
    }
    if (peek(j, ']')) {
        j->i++;
        return 0;
    }
    jfail(j, "',' or ']' expected");
    return -1;
}

static bool skip_literal(struct jp *j, const char *lit)
{
    size_t n = strlen(lit);
    if (strncmp(j->s + j->i, lit, n) != 0)
        return jfail(j, "unexpected character");
    j->i += n;
    return true;
}

static bool skip_value(struct jp *j, int depth)
{
    char key[RP_KEY_MAX];
    bool first = true;
    int r;
    if (depth > RP_DEPTH_MAX)
        return jfail(j, "nested too deeply");
    ws(j);
    switch (j->s[j->i]) {
    case '{':
        while ((r = jobject_next(j, &first, key, sizeof key)) == 1)
            if (!skip_value(j, depth + 1))
                return false;
        return r == 0;
    case '[':
        while ((r = jarray_next(j, &first)) == 1)
            if (!skip_value(j, depth + 1))
                return false;
        return r == 0;
    case '"': {
        char buf[4096];
        return jstring(j, buf, sizeof buf);
    }
    case 't':
        return skip_literal(j, "true");
    case 'f':
        return skip_literal(j, "false");
    case 'n':
        return skip_literal(j, "null");
    default: {
        /* A number, integer or not. */
        size_t start = j->i;
        while (strchr("+-0123456789.eE", j->s[j->i]) != NULL && j->s[j->i] != '\0')
            j->i++;
        return j->i > start || jfail(j, "a value expected");
    }
    }
}

static bool jint_array(struct jp *j, int32_t *v, int32_t *n, int32_t cap)
{
    bool first = true;
    int r;
    *n = 0;
    while ((r = jarray_next(j, &first)) == 1) {
        int64_t x;
        if (!jint(j, &x))
            return false;
        if (x < 0 || x > INT32_MAX)
            return jfail(j, "broker id out of range");
        if (*n == cap)
            return jfail(j, "more than %d replicas", (int)cap);
        v[(*n)++] = (int32_t)x;
    }
    return r == 0;
}

static bool check_version(struct jp *j, int64_t version)
{
    if (version != 1) {
        snprintf(j->err, j->errlen, "Not supported version field value %lld", (long long)version);
        j->failed = true;
        return false;
    }
    return true;
}

/* The end of the text: only blanks may follow the value. */
static bool jend(struct jp *j)
{
    ws(j);
    return j->s[j->i] == '\0' || jfail(j, "trailing characters");
}

/* ---- the reassignment file --------------------------------------------------------------------
 */

/* One element of "partitions" into the plan. */
static bool parse_partition(struct jp *j, struct rp_plan *out)
{
    char key[RP_KEY_MAX], topic[RP_KEY_MAX] = "";
    int32_t replicas[RP_MAX_REPLICAS], n_replicas = -1, n_dirs = -1;
    int64_t partition = -1;
    bool first = true, have_topic = false, have_partition = false, other_dir = false;
    int r;

    while ((r = jobject_next(j, &first, key, sizeof key)) == 1) {
        if (strcmp(key, "topic") == 0) {
            if (!jstring(j, topic, sizeof topic))
                return false;
            have_topic = true;
        } else if (strcmp(key, "partition") == 0) {
            if (!jint(j, &partition))
                return false;
            if (partition < 0 || partition > INT32_MAX)
                return jfail(j, "partition out of range");
            have_partition = true;
        } else if (strcmp(key, "replicas") == 0) {
            if (!jint_array(j, replicas, &n_replicas, RP_MAX_REPLICAS))
                return false;
        } else if (strcmp(key, "log_dirs") == 0) {
            bool f2 = true;
            int r2;
            n_dirs = 0;
            while ((r2 = jarray_next(j, &f2)) == 1) {
                char dir[4096];
                if (!jstring(j, dir, sizeof dir))
                    return false;
                other_dir = other_dir || strcmp(dir, "any") != 0;
                n_dirs++;
            }
            if (r2 < 0)
                return false;
        } else if (!skip_value(j, 1)) {
            return false;
        }
    }
    if (r < 0)
        return false;
    if (!have_topic || !have_partition || n_replicas < 0) {
        snprintf(j->err, j->errlen, "a partition of the reassignment lacks \"%s\"",
                 !have_topic       ? "topic"
                 : !have_partition ? "partition"
                                   : "replicas");
        j->failed = true;
        return false;
    }
    if (n_dirs >= 0 && n_dirs != n_replicas) {
        snprintf(j->err, j->errlen,
                 "Size of replicas list is different from size of log dirs list for partition "
                 "%s-%lld",
                 topic, (long long)partition);
        j->failed = true;
        return false;
    }
    if (other_dir) {
        snprintf(j->err, j->errlen,
                 "%s-%lld: log directory moves are not supported (Tally keeps one log directory "
                 "per broker): every log_dirs entry must be \"any\"",
                 topic, (long long)partition);
        j->failed = true;
        return false;
    }
    if (rp_plan_add(out, topic, (int32_t)partition, replicas, n_replicas) != 0) {
        snprintf(j->err, j->errlen, "out of memory");
        j->failed = true;
        return false;
    }
    return true;
}

int rp_parse_reassignment(const char *json, struct rp_plan *out, char *err, size_t errlen)
{
    struct jp j = {json, 0, err, errlen, false};
    char key[RP_KEY_MAX];
    bool first = true;
    int r;

    memset(out, 0, sizeof *out);
    while ((r = jobject_next(&j, &first, key, sizeof key)) == 1) {
        if (strcmp(key, "version") == 0) {
            int64_t v;
            if (!jint(&j, &v) || !check_version(&j, v))
                goto err;
        } else if (strcmp(key, "partitions") == 0) {
            bool f2 = true;
            int r2;
            while ((r2 = jarray_next(&j, &f2)) == 1)
                if (!parse_partition(&j, out))
                    goto err;
            if (r2 < 0)
                goto err;
        } else if (!skip_value(&j, 1)) {
            goto err;
        }
    }
    if (r < 0 || !jend(&j))
        goto err;
    if (out->n == 0) {
        snprintf(err, errlen, "Partition reassignment list cannot be empty");
        goto err;
    }
    rp_plan_sort(out);
    for (size_t i = 0; i < out->n; i++) {
        const struct rp_move *m = &out->moves[i];
        if (m->n_replicas == 0) {
            snprintf(err, errlen, "Partition replica list cannot be empty");
            goto err;
        }
        if (i > 0 && cmp_move(&out->moves[i - 1], m) == 0) {
            snprintf(err, errlen,
                     "Partition reassignment contains duplicate topic partitions: %s-%d", m->topic,
                     (int)m->partition);
            goto err;
        }
        for (int32_t a = 0; a < m->n_replicas; a++)
            for (int32_t b = 0; b < a; b++)
                if (m->replicas[a] == m->replicas[b]) {
                    snprintf(err, errlen,
                             "Partition replica lists may not contain duplicate entries: %s-%d "
                             "contains multiple entries for %d",
                             m->topic, (int)m->partition, (int)m->replicas[a]);
                    goto err;
                }
    }
    return 0;
err:
    rp_plan_free(out);
    return -1;
}

/* ---- the topics file --------------------------------------------------------------------------
 */

void rp_free_topics(char **topics, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(topics[i]);
    free(topics);
}

int rp_parse_topics(const char *json, char ***topics, size_t *n, char *err, size_t errlen)
{
    struct jp j = {json, 0, err, errlen, false};
    char key[RP_KEY_MAX];
    bool first = true;
    size_t cap = 0;
    int r;

    *topics = NULL;
    *n = 0;
    while ((r = jobject_next(&j, &first, key, sizeof key)) == 1) {
        if (strcmp(key, "version") == 0) {
            int64_t v;
            if (!jint(&j, &v) || !check_version(&j, v))
                goto err;
        } else if (strcmp(key, "topics") == 0) {
            bool f2 = true;
            int r2;
            while ((r2 = jarray_next(&j, &f2)) == 1) {
                char k2[RP_KEY_MAX], name[RP_KEY_MAX] = "";
                bool f3 = true;
                int r3;
                while ((r3 = jobject_next(&j, &f3, k2, sizeof k2)) == 1) {
                    if (strcmp(k2, "topic") == 0) {
                        if (!jstring(&j, name, sizeof name))
                            goto err;
                    } else if (!skip_value(&j, 2)) {
                        goto err;
                    }
                }
                if (r3 < 0)
                    goto err;
                if (name[0] == '\0') {
                    snprintf(err, errlen, "a topic to move lacks \"topic\"");
                    goto err;
                }
                for (size_t i = 0; i < *n; i++)
                    if (strcmp((*topics)[i], name) == 0) {
                        snprintf(err, errlen,
                                 "List of topics to reassign contains duplicate entries: %s", name);
                        goto err;
                    }
                if (*n == cap) {
                    size_t c2 = cap ? 2 * cap : 8;
                    char **v = realloc(*topics, c2 * sizeof *v);
                    if (v == NULL)
                        goto oom;
                    *topics = v;
                    cap = c2;
                }
                if (((*topics)[*n] = strdup(name)) == NULL)
                    goto oom;
                (*n)++;
            }
            if (r2 < 0)
                goto err;
        } else if (!skip_value(&j, 1)) {
            goto err;
        }
    }
    if (r < 0 || !jend(&j))
        goto err;
    if (*n == 0) {
        snprintf(err, errlen, "the topics-to-move file lists no topic");
        goto err;
    }
    return 0;
oom:
    snprintf(err, errlen, "out of memory");
err:
    rp_free_topics(*topics, *n);
    *topics = NULL;
    *n = 0;
    return -1;
}

/* ---- writing ----------------------------------------------------------------------------------
 */

static void print_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", (unsigned)(unsigned char)*s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

void rp_print_json(FILE *f, const struct rp_plan *p)
{
    struct rp_plan sorted = *p;
    struct rp_move *v = p->n ? malloc(p->n * sizeof *v) : NULL;
    if (v != NULL) {
        memcpy(v, p->moves, p->n * sizeof *v);
        sorted.moves = v;
        rp_plan_sort(&sorted);
    }
    fputs("{\"version\":1,\"partitions\":[", f);
    for (size_t i = 0; i < sorted.n; i++) {
        const struct rp_move *m = &sorted.moves[i];
        fputs(i ? ",{\"topic\":" : "{\"topic\":", f);
        print_string(f, m->topic);
        fprintf(f, ",\"partition\":%d,\"replicas\":[", (int)m->partition);
        for (int32_t k = 0; k < m->n_replicas; k++)
            fprintf(f, "%s%d", k ? "," : "", (int)m->replicas[k]);
        fputs("],\"log_dirs\":[", f);
        for (int32_t k = 0; k < m->n_replicas; k++)
            fputs(k ? ",\"any\"" : "\"any\"", f);
        fputs("]}", f);
    }
    fputs("]}", f);
    free(v);
}

/* ---- --generate -------------------------------------------------------------------------------
 */

static int cmp_i32(const void *x, const void *y)
{
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return (a > b) - (a < b);
}

int rp_assign(const int32_t *brokers, int32_t n_brokers, int32_t n_partitions, int32_t rf,
              uint32_t start, int32_t *out)
{
    int32_t *b;
    int32_t first_at, shift;
    if (rf < 1 || n_brokers < 1 || rf > n_brokers || n_partitions < 0)
        return -1;
    b = malloc((size_t)n_brokers * sizeof *b);
    if (b == NULL)
        return -1;
    memcpy(b, brokers, (size_t)n_brokers * sizeof *b);
    qsort(b, (size_t)n_brokers, sizeof *b, cmp_i32);
    first_at = (int32_t)(start % (uint32_t)n_brokers);
    shift = first_at;
    for (int32_t p = 0; p < n_partitions; p++) {
        int32_t first;
        if (p > 0 && p % n_brokers == 0)
            shift++;
        first = (p + first_at) % n_brokers;
        out[(size_t)p * (size_t)rf] = b[first];
        for (int32_t k = 0; k < rf - 1; k++) {
            int32_t step = 1 + (shift + k) % (n_brokers - 1);
            out[(size_t)p * (size_t)rf + 1 + (size_t)k] = b[(first + step) % n_brokers];
        }
    }
    free(b);
    return 0;
}

/* ---- --execute's throttles --------------------------------------------------------------------
 */

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* The sorted, de-duplicated, comma-joined items (malloc()ed), or NULL when out of memory. */
static char *join_sorted(char **items, size_t n)
{
    size_t len = 1, k = 0;
    char *s;
    qsort(items, n, sizeof *items, cmp_str);
    for (size_t i = 0; i < n; i++)
        len += strlen(items[i]) + 1;
    if ((s = malloc(len)) == NULL)
        return NULL;
    s[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && strcmp(items[i], items[i - 1]) == 0)
            continue;
        k += (size_t)sprintf(s + k, "%s%s", k ? "," : "", items[i]);
    }
    return s;
}

static bool has(const int32_t *v, int32_t n, int32_t x)
{
    for (int32_t i = 0; i < n; i++)
        if (v[i] == x)
            return true;
    return false;
}

int rp_throttles(const struct rp_plan *sources, const struct rp_plan *targets,
                 struct rp_throttle **out, size_t *n)
{
    struct rp_plan src = *sources;
    struct rp_move *v = sources->n ? malloc(sources->n * sizeof *v) : NULL;
    char **lead = NULL, **fol = NULL;
    size_t cap = 0;

    *out = NULL;
    *n = 0;
    if (sources->n == 0)
        return 0;
    if (v == NULL)
        return -1;
    memcpy(v, sources->moves, sources->n * sizeof *v);
    src.moves = v;
    rp_plan_sort(&src);
    for (size_t i = 0; i < src.n;) {
        size_t end = i, n_lead = 0, n_fol = 0, room = 0;
        struct rp_throttle *t;
        while (end < src.n && strcmp(src.moves[end].topic, src.moves[i].topic) == 0) {
            const struct rp_move *tg =
                rp_plan_find(targets, src.moves[end].topic, src.moves[end].partition);
            room += (size_t)src.moves[end].n_replicas + (tg ? (size_t)tg->n_replicas : 0);
            end++;
        }
        lead = calloc(room + 1, sizeof *lead);
        fol = calloc(room + 1, sizeof *fol);
        if (lead == NULL || fol == NULL)
            goto oom;
        for (size_t k = i; k < end; k++) {
            const struct rp_move *s = &src.moves[k];
            const struct rp_move *tg = rp_plan_find(targets, s->topic, s->partition);
            char item[32];
            for (int32_t r = 0; r < s->n_replicas; r++) {
                snprintf(item, sizeof item, "%d:%d", (int)s->partition, (int)s->replicas[r]);
                if ((lead[n_lead++] = strdup(item)) == NULL)
                    goto oom;
            }
            for (int32_t r = 0; tg && r < tg->n_replicas; r++) {
                if (has(s->replicas, s->n_replicas, tg->replicas[r]))
                    continue;
                snprintf(item, sizeof item, "%d:%d", (int)s->partition, (int)tg->replicas[r]);
                if ((fol[n_fol++] = strdup(item)) == NULL)
                    goto oom;
            }
        }
        if (*n == cap) {
            size_t c2 = cap ? 2 * cap : 4;
            struct rp_throttle *w = realloc(*out, c2 * sizeof *w);
            if (w == NULL)
                goto oom;
            *out = w;
            cap = c2;
        }
        t = &(*out)[*n];
        memset(t, 0, sizeof *t);
        (*n)++;
        t->topic = strdup(src.moves[i].topic);
        t->leader = join_sorted(lead, n_lead);
        t->follower = join_sorted(fol, n_fol);
        for (size_t k = 0; k < room; k++) {
            free(lead[k]);
            free(fol[k]);
        }
        free(lead);
        free(fol);
        lead = fol = NULL;
        if (t->topic == NULL || t->leader == NULL || t->follower == NULL)
            goto oom;
        i = end;
    }
    free(v);
    return 0;
oom:
    if (lead)
        for (size_t k = 0; lead[k]; k++)
            free(lead[k]);
    if (fol)
        for (size_t k = 0; fol[k]; k++)
            free(fol[k]);
    free(lead);
    free(fol);
    free(v);
    rp_throttles_free(*out, *n);
    *out = NULL;
    *n = 0;
    return -1;
}

void rp_throttles_free(struct rp_throttle *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(t[i].topic);
        free(t[i].leader);
        free(t[i].follower);
    }
    free(t);
}

size_t rp_brokers(const struct rp_plan *sources, const struct rp_plan *targets, int32_t *out)
{
    size_t n = 0, k = 0;
    for (int pass = 0; pass < 2; pass++) {
        const struct rp_plan *p = pass == 0 ? sources : targets;
        for (size_t i = 0; i < p->n; i++)
            for (int32_t r = 0; r < p->moves[i].n_replicas; r++)
                out[n++] = p->moves[i].replicas[r];
    }
    if (n == 0)
        return 0;
    qsort(out, n, sizeof *out, cmp_i32);
    for (size_t i = 0; i < n; i++)
        if (i == 0 || out[i] != out[k - 1])
            out[k++] = out[i];
    return k;
}
