/* SPDX-License-Identifier: Apache-2.0 */
/* log checkpoint: the per-directory offset checkpoint files of Kafka
 * (recovery-point-offset-checkpoint, log-start-offset-checkpoint,
 * replication-offset-checkpoint), and the line format they share with
 * leader-epoch-checkpoint (epoch.c).
 *
 * Text, one item per line, '\n' terminated, decimal numbers:
 **   LINE   CONTENT
 **      1   version: 0
 **      2   count: number of entry lines that follow
 **    3..   "<topic> <partition> <offset>" (topic names hold no spaces)
 *
 * Written to "<path>.tmp", fsynced, renamed over <path>, then the directory fsynced, so a
 * reader sees the old file or the new one, never a mix. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/slog.h"
#include "log/log_int.h"

/* Parses a whole decimal int64 (optionally negative) from s, which must be all digits. */
static int parse_i64(const char *s, int64_t *out)
{
    char *end;
    long long v;
    if (*s == '\0' || *s == ' ' || *s == '+')
        return ERR_PARSE;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno || *end != '\0')
        return ERR_PARSE;
    *out = v;
    return 0;
}

int log_ckpt_next_line(const char **p, char *line, size_t cap)
{
    const char *nl;
    size_t n;

    if (**p == '\0')
        return ERR_NOTFOUND;
    nl = strchr(*p, '\n');
    if (!nl)
        return ERR_PARSE;
    n = (size_t)(nl - *p);
    if (n >= cap)
        return ERR_PARSE;
    memcpy(line, *p, n);
    line[n] = '\0';
    *p = nl + 1;
    return 0;
}

int log_ckpt_parse_head(const char *buf, int64_t *count, const char **lines)
{
    const char *p = buf;
    char line[64];
    int64_t v;

    if (log_ckpt_next_line(&p, line, sizeof line) || parse_i64(line, &v) || v != 0)
        return ERR_PARSE;
    if (log_ckpt_next_line(&p, line, sizeof line) || parse_i64(line, &v) || v < 0)
        return ERR_PARSE;
    /* Every entry line takes at least 4 bytes, which bounds the allocation a damaged count
     * can cause. */
    if (v > (int64_t)strlen(p) / 4 + 1)
        return ERR_PARSE;
    *count = v;
    *lines = p;
    return 0;
}

int log_checkpoint_write(const struct sysio *io, const char *path,
                         const struct log_checkpoint_entry *e, size_t n)
{
    size_t cap = 32 + n * (sizeof e->topic + 40), len;
    char *buf = malloc(cap);
    int rc, w;

    if (!buf)
        return ERR_NOMEM;
    w = snprintf(buf, cap, "0\n%zu\n", n);
    len = (size_t)w;
    for (size_t i = 0; i < n; i++) {
        if (e[i].topic[0] == '\0' || memchr(e[i].topic, '\0', sizeof e[i].topic) == NULL ||
            strpbrk(e[i].topic, " \n") != NULL) {
            slog_error(LOG_MOD, "checkpoint %s: entry %zu has an invalid topic name", path, i);
            free(buf);
            return ERR_IO;
        }
        w = snprintf(buf + len, cap - len, "%s %" PRId32 " %" PRId64 "\n", e[i].topic,
                     e[i].partition, e[i].offset);
        len += (size_t)w;
    }
    rc = sysio_write_atomic(io, LOG_MOD, path, buf, len);
    free(buf);
    return rc;
}

int log_checkpoint_read(const struct sysio *io, const char *path, struct log_checkpoint_entry **out,
                        size_t *n)
{
    struct log_checkpoint_entry *e = NULL;
    const char *p;
    char *buf;
    char line[sizeof e->topic + 64];
    size_t len;
    int64_t count;
    int rc;

    *out = NULL;
    *n = 0;
    rc = sysio_read_file(io, LOG_MOD, path, LOG_SMALL_FILE_MAX, &buf, &len);
    if (rc == ERR_NOTFOUND)
        return 0;
    if (rc)
        return rc;
    if (strlen(buf) != len || log_ckpt_parse_head(buf, &count, &p) != 0)
        goto err_parse;
    e = calloc(count > 0 ? (size_t)count : 1, sizeof *e);
    if (!e) {
        free(buf);
        return ERR_NOMEM;
    }
    for (int64_t i = 0; i < count; i++) {
        char *sp1, *sp2;
        int64_t part, off;
        if (log_ckpt_next_line(&p, line, sizeof line))
            goto err_parse;
        sp1 = strchr(line, ' ');
        sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
        if (!sp1 || !sp2 || sp1 == line || (size_t)(sp1 - line) >= sizeof e->topic)
            goto err_parse;
        *sp1 = *sp2 = '\0';
        if (parse_i64(sp1 + 1, &part) || part < 0 || part > INT32_MAX || parse_i64(sp2 + 1, &off))
            goto err_parse;
        memcpy(e[i].topic, line, (size_t)(sp1 - line) + 1);
        e[i].partition = (int32_t)part;
        e[i].offset = off;
    }
    if (*p != '\0')
        goto err_parse;
    free(buf);
    *out = e;
    *n = (size_t)count;
    return 0;

err_parse:
    slog_error(LOG_MOD, "checkpoint file %s is malformed", path);
    free(e);
    free(buf);
    return ERR_PARSE;
}
