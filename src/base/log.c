/* SPDX-License-Identifier: Apache-2.0 */
/* log lines: formatting and the level filter. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static enum log_level min_level = LOG_INFO;

void log_set_level(enum log_level level)
{
    min_level = level;
}

void log_line(enum log_level level, const char *module, const char *fmt, ...)
{
    static const char *names[] = {"DEBUG", "INFO ", "WARN ", "ERROR"};
    char line[2048];
    struct timespec ts;
    struct tm tm;
    size_t n;
    va_list ap;
    int w;

    if (level < min_level)
        return;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    n = strftime(line, sizeof line, "%Y-%m-%dT%H:%M:%S", &tm);
    w = snprintf(line + n, sizeof line - n, ".%03ldZ %s [%s] ", ts.tv_nsec / 1000000, names[level],
                 module);
    n += (size_t)w;
    va_start(ap, fmt);
    w = vsnprintf(line + n, sizeof line - n - 1, fmt, ap);
    va_end(ap);
    /* A line longer than the buffer is cut, never split: one event, one line. */
    n = w < 0 ? n : n + (size_t)w;
    if (n > sizeof line - 2)
        n = sizeof line - 2;
    line[n++] = '\n';
    if (write(STDERR_FILENO, line, n) < 0) {
        /* Nowhere left to report a failing stderr. */
    }
}
