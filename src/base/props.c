/* SPDX-License-Identifier: Apache-2.0 */
/* props: a small ordered key/value list; configs hold tens of entries, so lookups scan. */
#include "props.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "err.h"
#include "slog.h"

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

int props_load(struct props *p, const char *path, int *bad_line)
{
    FILE *f = fopen(path, "r");
    char line[4096];
    int no = 0, rc = 0;
    if (f == NULL) {
        int e = errno;
        if (e == ENOENT)
            return ERR_NOTFOUND;
        slog_error("props", "cannot open %s: %s", path, strerror(e));
        return ERR_IO;
    }
    while (fgets(line, sizeof line, f)) {
        char *s = trim(line);
        no++;
        if (*s == '\0' || *s == '#' || *s == '!')
            continue;
        rc = props_set_line(p, s);
        if (rc != 0) {
            if (bad_line)
                *bad_line = no;
            break;
        }
    }
    fclose(f);
    return rc;
}

int props_store(const struct props *p, const char *path, const char *comment)
{
    char tmp[4096];
    const char *what;
    FILE *f;
    int fd, e;
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    f = fopen(tmp, "w");
    if (f == NULL) {
        e = errno;
        what = "create";
        goto err;
    }
    if (comment)
        fprintf(f, "# %s\n", comment);
    for (size_t i = 0; i < p->n; i++)
        fprintf(f, "%s=%s\n", p->v[i].key, p->v[i].value);
    if (fflush(f) != 0 || fsync(fileno(f)) != 0) {
        e = errno; /* before fclose, which may change it */
        what = "write";
        fclose(f);
        goto err;
    }
    if (fclose(f) != 0) {
        e = errno;
        what = "write";
        goto err;
    }
    if (rename(tmp, path) != 0) {
        e = errno;
        what = "rename";
        goto err;
    }
    /* Make the rename itself durable. */
    snprintf(tmp, sizeof tmp, "%s", path);
    char *slash = strrchr(tmp, '/');
    if (slash) {
        *slash = '\0';
        fd = open(tmp[0] ? tmp : "/", O_RDONLY | O_DIRECTORY);
        if (fd >= 0) {
            fsync(fd);
            close(fd);
        }
    }
    return 0;

err:
    slog_error("props", "cannot %s %s: %s", what, tmp, strerror(e));
    return ERR_IO;
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
