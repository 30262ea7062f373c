/* SPDX-License-Identifier: Apache-2.0 */
/* slog: the server's log lines, one per event on stderr, with UTC time, level and module.
 * (The prefix is slog_ so that log_ means the partition log of src/log/ only.) */
#ifndef TALLY_BASE_SLOG_H
#define TALLY_BASE_SLOG_H

#include <stddef.h>
#include <stdint.h>

enum slog_level { SLOG_DEBUG, SLOG_INFO, SLOG_WARN, SLOG_ERROR };

/* Lines below this level are dropped. Default SLOG_INFO; TALLY_LOG_LEVEL=debug lowers it. */
void slog_set_level(enum slog_level level);

/* Writes "2026-11-29T18:30:50.123Z INFO  [module] message\n" to stderr in one write(2).
 * Control bytes in the formatted message (newline, escape, NUL-free binary a client sent)
 * are written as \xNN, so nothing a client supplies can forge or split a line. */
void slog_line(enum slog_level level, const char *module, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define slog_debug(mod, ...) slog_line(SLOG_DEBUG, mod, __VA_ARGS__)
#define slog_info(mod, ...) slog_line(SLOG_INFO, mod, __VA_ARGS__)
#define slog_warn(mod, ...) slog_line(SLOG_WARN, mod, __VA_ARGS__)
#define slog_error(mod, ...) slog_line(SLOG_ERROR, mod, __VA_ARGS__)

/* A limit on one repeated line (per connection, per partition, per cause): at most one
 * line per `interval_ms`; lines held back meanwhile are counted, and the next line that
 * passes says "(N similar lines suppressed)". Zero-initialise it; the owner keeps it. */
struct slog_limit {
    int64_t next_ms;     /* monotonic time before which lines are held back */
    uint64_t suppressed; /* lines held back since the last one written */
};

/* As slog_line, through `lim`. Returns true when the line was written. */
_Bool slog_line_limited(struct slog_limit *lim, int64_t interval_ms, enum slog_level level,
                        const char *module, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#define slog_warn_limited(lim, ms, mod, ...) slog_line_limited(lim, ms, SLOG_WARN, mod, __VA_ARGS__)
#define slog_info_limited(lim, ms, mod, ...) slog_line_limited(lim, ms, SLOG_INFO, mod, __VA_ARGS__)

/* Copies s[0..len) into out (size cap > 4) for a log line: printable ASCII as is, every
 * other byte as \xNN, cut with "..." when it does not fit. Returns out. For client-supplied
 * strings that are not NUL-terminated or may hold NULs; slog_line escapes the rest. */
const char *slog_escape(const char *s, size_t len, char *out, size_t cap);

#endif
