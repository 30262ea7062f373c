/* SPDX-License-Identifier: Apache-2.0 */
/* fault: test-only crash points, compiled only into test builds (-DTALLY_TEST_HOOKS: the ASan
 * tallyd and the unit tests). With TALLY_TEST_FAULT=<name>[,<name>...] in the environment,
 * reaching fault_point(<name>) ends the process at once with _exit(137) — as kill -9 would,
 * nothing flushed — so integration tests can stop the broker at a chosen step (e.g.
 * "txn:after_prepare", "cleaner:swap") and check what a restart makes of it. Names are
 * "module:step". In a release build every call below is an empty macro: neither the
 * variable's name nor any point's name is in the binary, and the environment is never read
 * (a test greps build/tallyd for them). */
#ifndef TALLY_BASE_FAULT_H
#define TALLY_BASE_FAULT_H

#include <stdbool.h>

#ifdef TALLY_TEST_HOOKS

/* Reads TALLY_TEST_FAULT. Call once at start, on the event loop, before any other thread
 * runs: the points are read-only afterwards, so pool threads may test them too. */
void fault_init(void);

/* True when `name` is one of the configured points (without exiting): for points whose
 * effect is not a crash (e.g. "txn:lose_entry", "log:lose_unflushed_tail"). */
bool fault_armed(const char *name);

/* Exits with _exit(137), after one line on stderr, when `name` is configured. */
void fault_point(const char *name);

/* fault_point for steps that can also stop in-process: exits as fault_point does when `name`
 * is configured, else returns true when it is the point set by fault_stop_at (unit tests:
 * the caller gives up there with its files left as the crash would leave them), else false.
 * May run on a pool thread. */
bool fault_stop(const char *name);

/* Unit tests: makes fault_stop(name) return true for this one name (NULL clears). The name
 * is not copied; set it before the work that reaches the point is queued. */
void fault_stop_at(const char *name);

#else

#define fault_init() ((void)0)
#define fault_armed(name) false
#define fault_point(name) ((void)0)
#define fault_stop(name) false

#endif

#endif
