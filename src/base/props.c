/* SPDX-License-Identifier: Apache-2.0 */
/* props: a small ordered key/value list; configs hold tens of entries, so lookups scan. */
#include "props.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "err.h"
#include "sysio.h"

struct entry {
    char *key, *value;
};

struct props {
    struct entry *v;
    size_t n, cap;
};

struct props *props_new(void)
{
    return calloc(1, sizeof(struct props));
}

void props_free(struct props *p)
{
    if (p == NULL)
        return;
    for (size_t i = 0; i < p->n; i++) {
        free(p->v[i].key);
        free(p->v[i].value);
    }
    free(p->v);
    free(p);
}

int props_set(struct props *p, const char *key, const char *value)
{
    char *v = strdup(value);
    if (v == NULL)
        return ERR_NOMEM;
    for (size_t i = 0; i < p->n; i++) {
        if (strcmp(p->v[i].key, key) == 0) {
            free(p->v[i].value);
            p->v[i].value = v;
            return 0;
        }
    }
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 16;
        struct entry *nv = realloc(p->v, cap * sizeof *nv);
        if (nv == NULL)
            goto err;
        p->v = nv;
        p->cap = cap;
    }
    p->v[p->n].key = strdup(key);
    if (p->v[p->n].key == NULL)
        goto err;
    p->v[p->n++].value = v;
    return 0;
err:
    free(v);
    return ERR_NOMEM;
}

static char *trim(char *s)
{
    char *e;
    while (isspace((unsigned char)*s))
        s++;
    e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

int props_set_line(struct props *p, const char *line)
{
    char buf[4096];
    char *sep, *k;
    if (strlen(line) >= sizeof buf)
        return ERR_PARSE;
    strcpy(buf, line);
    sep = strpbrk(buf, "=:");
    if (sep == NULL)
        return ERR_PARSE;
    *sep = '\0';
    k = trim(buf);
    if (*k == '\0')
        return ERR_PARSE;
    return props_set(p, k, trim(sep + 1));
}

/* A properties file holds at most this many bytes; a larger one is refused. */
#define PROPS_FILE_MAX ((size_t)1 << 20)

int props_load(struct props *p, const struct sysio *io, const char *path, int *bad_line)
{
    char *buf, *line, *next;
    size_t len;
    int no = 0, rc = sysio_read_file(io, "props", path, PROPS_FILE_MAX, &buf, &len);

    if (rc != 0)
        return rc;
    if (strlen(buf) != len) {
        /* A NUL byte in a text file: say where, as for any line that does not parse. */
        no = 1;
        for (const char *q = buf; *q; q++)
            no += *q == '\n';
        rc = ERR_PARSE;
        goto out;
    }
    for (line = buf; line != NULL && *line != '\0'; line = next) {
        char *s;
        next = strchr(line, '\n');
        if (next != NULL)
            *next++ = '\0';
        no++;
        s = trim(line);
        if (*s == '\0' || *s == '#' || *s == '!')
            continue;
        rc = props_set_line(p, s);
        if (rc != 0)
            break;
    }
out:
    if (rc != 0 && bad_line)
        *bad_line = no;
    free(buf);
    return rc;
}

int props_store(const struct props *p, const struct sysio *io, const char *path,
                const char *comment)
{
    size_t cap = 64 + (comment ? strlen(comment) : 0), len = 0;
    char *buf;
    int rc;

    for (size_t i = 0; i < p->n; i++)
        cap += strlen(p->v[i].key) + strlen(p->v[i].value) + 2;
    buf = malloc(cap);
    if (buf == NULL)
        return ERR_NOMEM;
    if (comment)
        len += (size_t)snprintf(buf + len, cap - len, "# %s\n", comment);
    for (size_t i = 0; i < p->n; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s=%s\n", p->v[i].key, p->v[i].value);
    rc = sysio_write_atomic(io, "props", path, buf, len);
    free(buf);
    return rc;
}

const char *props_get(const struct props *p, const char *key)
{
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->v[i].key, key) == 0)
            return p->v[i].value;
    return NULL;
}

int64_t props_get_int(const struct props *p, const char *key, int64_t def, bool *ok)
{
    const char *v = props_get(p, key);
    char *end;
    long long x;
    if (ok)
        *ok = true;
    if (v == NULL)
        return def;
    errno = 0;
    x = strtoll(v, &end, 10);
    if (errno || end == v || *end != '\0') {
        if (ok)
            *ok = false;
        return def;
    }
    return x;
}

bool props_get_bool(const struct props *p, const char *key, bool def, bool *ok)
{
    const char *v = props_get(p, key);
    if (ok)
        *ok = true;
    if (v == NULL)
        return def;
    if (strcasecmp(v, "true") == 0)
        return true;
    if (strcasecmp(v, "false") == 0)
        return false;
    if (ok)
        *ok = false;
    return def;
}

size_t props_count(const struct props *p)
{
    return p->n;
}

void props_at(const struct props *p, size_t i, const char **key, const char **value)
{
    *key = p->v[i].key;
    *value = p->v[i].value;
}
