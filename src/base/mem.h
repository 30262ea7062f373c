/* SPDX-License-Identifier: Apache-2.0 */
/* mem: growing a large buffer without holding a malloc arena while it is copied.
 *
 * glibc's realloc copies a block it cannot extend while it holds the block's arena lock; a
 * buffer of tens of MiB grown that way on the thread pool (a batch decompressed for a
 * look-up, a batch rebuilt by the cleaner) held the lock for milliseconds — tens of them when
 * the pool thread was preempted — and every malloc and free of the event loop in that arena
 * waited behind it (bench/timers.py, api_versions_during_lookups: 65–106 ms). mem_grow takes
 * a fresh block and copies into it with no lock held. */
#ifndef TALLY_BASE_MEM_H
#define TALLY_BASE_MEM_H

#include <stdlib.h>
#include <string.h>

/* A new block of cap bytes holding the first `keep` bytes of p (keep <= cap, p may be NULL
 * when keep is 0); p is freed. NULL when out of memory, and then p is untouched. */
static inline void *mem_grow(void *p, size_t keep, size_t cap)
{
    void *n = malloc(cap ? cap : 1);
    if (n == NULL)
        return NULL;
    if (keep > 0)
        memcpy(n, p, keep);
    free(p);
    return n;
}

#endif
