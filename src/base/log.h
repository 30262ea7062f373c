/* SPDX-License-Identifier: Apache-2.0 */
/* log lines: one line per event on stderr, with UTC time, level and module. */
#ifndef TALLY_BASE_LOG_H
#define TALLY_BASE_LOG_H

enum log_level { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR };

/* Lines below this level are dropped. Default LOG_INFO; TALLY_LOG_LEVEL=debug lowers it. */
void log_set_level(enum log_level level);

/* Writes "2026-11-29T18:30:50.123Z INFO  [module] message\n" to stderr in one write(2). */
void log_line(enum log_level level, const char *module, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define log_debug(mod, ...) log_line(LOG_DEBUG, mod, __VA_ARGS__)
#define log_info(mod, ...) log_line(LOG_INFO, mod, __VA_ARGS__)
#define log_warn(mod, ...) log_line(LOG_WARN, mod, __VA_ARGS__)
#define log_error(mod, ...) log_line(LOG_ERROR, mod, __VA_ARGS__)

#endif
