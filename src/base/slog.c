/* SPDX-License-Identifier: Apache-2.0 */
/* slog: formatting, escaping, the level filter and per-line rate limits. */
#include "slog.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LINE_MAX_BYTES 2048

static enum slog_level min_level = SLOG_INFO;

void slog_set_level(enum slog_level level)
{
    min_level = level;
}

static bool is_plain(unsigned char c)
{
    return c >= 0x20 && c != 0x7f;
}

/* Appends msg to line[n..cap) with control bytes as \xNN; keeps room for the newline.
 * Returns the new length. */
static size_t append_escaped(char *line, size_t n, size_t cap, const char *msg)
{
    static const char hex[] = "0123456789abcdef";
    for (const unsigned char *p = (const unsigned char *)msg; *p && n < cap - 1; p++) {
        if (is_plain(*p)) {
            line[n++] = (char)*p;
        } else if (n + 4 < cap) {
            line[n++] = '\\';
            line[n++] = 'x';
            line[n++] = hex[*p >> 4];
            line[n++] = hex[*p & 15];
        } else {
            break;
        }
    }
    return n;
}

static void vlog(enum slog_level level, const char *module, const char *suffix, const char *fmt,
                 va_list ap)
{
    static const char *names[] = {"DEBUG", "INFO ", "WARN ", "ERROR"};
    char line[LINE_MAX_BYTES], msg[LINE_MAX_BYTES];
    struct timespec ts;
    struct tm tm;
    size_t n;

    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    n = strftime(line, sizeof line, "%Y-%m-%dT%H:%M:%S", &tm);
    n += (size_t)snprintf(line + n, sizeof line - n, ".%03ldZ %s [%s] ", ts.tv_nsec / 1000000,
                          names[level], module);
    if (n > sizeof line - 2)
        n = sizeof line - 2;
    /* A line longer than the buffer is cut, never split: one event, one line. */
    if (vsnprintf(msg, sizeof msg, fmt, ap) < 0)
        msg[0] = '\0';
    n = append_escaped(line, n, sizeof line, msg);
    if (suffix)
        n = append_escaped(line, n, sizeof line, suffix);
    line[n++] = '\n';
    if (write(STDERR_FILENO, line, n) < 0) {
        /* Nowhere left to report a failing stderr. */
    }
}

void slog_line(enum slog_level level, const char *module, const char *fmt, ...)
{
    va_list ap;

    if (level < min_level)
        return;
    va_start(ap, fmt);
    vlog(level, module, NULL, fmt, ap);
    va_end(ap);
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bool slog_line_limited(struct slog_limit *lim, int64_t interval_ms, enum slog_level level,
                       const char *module, const char *fmt, ...)
{
    char suffix[64] = "";
    int64_t now;
    va_list ap;

    if (level < min_level)
        return false;
    now = mono_ms();
    if (lim->next_ms != 0 && now < lim->next_ms) {
        lim->suppressed++;
        return false;
    }
    if (lim->suppressed)
        snprintf(suffix, sizeof suffix, " (%llu similar lines suppressed)",
                 (unsigned long long)lim->suppressed);
    lim->suppressed = 0;
    lim->next_ms = now + (interval_ms > 0 ? interval_ms : 1);
    va_start(ap, fmt);
    vlog(level, module, suffix, fmt, ap);
    va_end(ap);
    return true;
}

const char *slog_escape(const char *s, size_t len, char *out, size_t cap)
{
    static const char hex[] = "0123456789abcdef";
    size_t n = 0;

    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        size_t need = (c >= 0x20 && c < 0x7f) ? 1 : 4;
        if (n + need + 4 > cap) {
            memcpy(out + n, "...", 3);
            n += 3;
            break;
        }
        if (need == 1) {
            out[n++] = (char)c;
        } else {
            out[n++] = '\\';
            out[n++] = 'x';
            out[n++] = hex[c >> 4];
            out[n++] = hex[c & 15];
        }
    }
    out[n] = '\0';
    return out;
}
