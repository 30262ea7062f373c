/* SPDX-License-Identifier: Apache-2.0 */
/* fault: test-only crash points. With TALLY_TEST_FAULT=<name>[,<name>...] in the environment,
 * reaching fault_point(<name>) ends the process at once with _exit(137) — as kill -9 would,
 * nothing flushed — so integration tests can stop the broker at a chosen step (e.g.
 * "txn:after_prepare") and check what a restart makes of it. Names are "module:step".
 * Unset (production): fault_point is one load and a branch. Never set it outside tests. */
#ifndef TALLY_BASE_FAULT_H
#define TALLY_BASE_FAULT_H

#include <stdbool.h>

/* Reads TALLY_TEST_FAULT once (call at start; fault_point calls it too on first use). */
void fault_init(void);

/* True when `name` is one of the configured points (without exiting): for points whose
 * effect is not a crash (e.g. "txn:lose_entry"). */
bool fault_armed(const char *name);

/* Exits with _exit(137), after one line on stderr, when `name` is configured. */
void fault_point(const char *name);

#endif
