/* SPDX-License-Identifier: Apache-2.0 */
/* arena: chained blocks; a large allocation gets a block of its own. */
#include "arena.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_BLOCK 8192
#define ARENA_ALIGN 16

struct block {
    struct block *next;
    size_t used, cap;
    _Alignas(ARENA_ALIGN) unsigned char data[];
};

struct arena {
    struct block *head;
    size_t limit, used;
};

struct arena *arena_new(size_t limit)
{
    struct arena *a = calloc(1, sizeof *a);
    if (a)
        a->limit = limit;
    return a;
}

void *arena_alloc(struct arena *a, size_t size)
{
    struct block *b = a->head;
    size_t need = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    void *p;

    if (need < size || need > a->limit - a->used)
        return NULL;
    if (b == NULL || b->cap - b->used < need) {
        size_t cap = need > ARENA_BLOCK ? need : ARENA_BLOCK;
        b = malloc(sizeof *b + cap);
        if (b == NULL)
            return NULL;
        b->used = 0;
        b->cap = cap;
        /* A big block goes second so the current small block keeps serving small requests. */
        if (a->head && need > ARENA_BLOCK) {
            b->next = a->head->next;
            a->head->next = b;
        } else {
            b->next = a->head;
            a->head = b;
        }
    }
    p = b->data + b->used;
    b->used += need;
    a->used += need;
    memset(p, 0, size);
    return p;
}

char *arena_strndup(struct arena *a, const char *s, size_t len)
{
    char *p = arena_alloc(a, len + 1);
    if (p) {
        memcpy(p, s, len);
        p[len] = '\0';
    }
    return p;
}

char *arena_printf(struct arena *a, const char *fmt, ...)
{
    va_list ap;
    int n;
    char *p;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    p = arena_alloc(a, (size_t)n + 1);
    if (p == NULL)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

size_t arena_used(const struct arena *a)
{
    return a->used;
}

void arena_free(struct arena *a)
{
    struct block *b, *next;
    if (a == NULL)
        return;
    for (b = a->head; b; b = next) {
        next = b->next;
        free(b);
    }
    free(a);
}
