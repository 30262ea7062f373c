/* SPDX-License-Identifier: Apache-2.0 */
/* arena: a bump allocator with a byte limit, one per request, freed in one call. Every
 * allocation a client can cause goes through one, so a hostile request fails itself
 * (ERR_NOMEM) instead of the process. */
#ifndef TALLY_BASE_ARENA_H
#define TALLY_BASE_ARENA_H

#include <stddef.h>

struct arena;

/* A new arena that hands out at most `limit` bytes in total. NULL on out of memory. */
struct arena *arena_new(size_t limit);

/* `size` bytes, zeroed, aligned for any type; NULL past the limit or on out of memory.
 * The memory lives until arena_free. */
void *arena_alloc(struct arena *a, size_t size);

/* A NUL-terminated copy of the `len` bytes at s; NULL as arena_alloc. */
char *arena_strndup(struct arena *a, const char *s, size_t len);

/* printf into the arena; NULL as arena_alloc. */
char *arena_printf(struct arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Bytes handed out so far. */
size_t arena_used(const struct arena *a);

/* Frees every block of the arena and the arena itself. NULL is ignored. */
void arena_free(struct arena *a);

#endif
