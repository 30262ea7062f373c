/* SPDX-License-Identifier: Apache-2.0 */
/* log lines: one line per event on stderr, with UTC time, level and module. */
#ifndef TALLY_BASE_LOG_H
#define TALLY_BASE_LOG_H

#include <stddef.h>
#include <stdint.h>

enum log_level { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR };

/* Lines below this level are dropped. Default LOG_INFO; TALLY_LOG_LEVEL=debug lowers it. */
void log_set_level(enum log_level level);

/* Writes "2026-11-29T18:30:50.123Z INFO  [module] message\n" to stderr in one write(2).
 * Control bytes in the formatted message (newline, escape, NUL-free binary a client sent)
 * are written as \xNN, so nothing a client supplies can forge or split a line. */
void log_line(enum log_level level, const char *module, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define log_debug(mod, ...) log_line(LOG_DEBUG, mod, __VA_ARGS__)
#define log_info(mod, ...) log_line(LOG_INFO, mod, __VA_ARGS__)
#define log_warn(mod, ...) log_line(LOG_WARN, mod, __VA_ARGS__)
#define log_error(mod, ...) log_line(LOG_ERROR, mod, __VA_ARGS__)

/* A limit on one repeated line (per connection, per partition, per cause): at most one
 * line per `interval_ms`; lines held back meanwhile are counted, and the next line that
 * passes says "(N similar lines suppressed)". Zero-initialise it; the owner keeps it. */
struct log_limit {
    int64_t next_ms;     /* monotonic time before which lines are held back */
    uint64_t suppressed; /* lines held back since the last one written */
};

/* As log_line, through `lim`. Returns true when the line was written. */
_Bool log_line_limited(struct log_limit *lim, int64_t interval_ms, enum log_level level,
                       const char *module, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#define log_warn_limited(lim, ms, mod, ...) log_line_limited(lim, ms, LOG_WARN, mod, __VA_ARGS__)

/* Copies s[0..len) into out (size cap > 4) for a log line: printable ASCII as is, every
 * other byte as \xNN, cut with "..." when it does not fit. Returns out. For client-supplied
 * strings that are not NUL-terminated or may hold NULs; log_line escapes the rest. */
const char *log_escape(const char *s, size_t len, char *out, size_t cap);

#endif
