/* SPDX-License-Identifier: Apache-2.0 */
/* tclock: the real clock (clock_gettime + libuv timers) and the virtual one (a due-ordered
 * list of timers, advanced by tests). */
#include "tclock.h"

#include <assert.h>
#include <stdlib.h>
#include <time.h>

#include "err.h"

struct tclock {
    uv_loop_t *loop; /* NULL for a virtual clock */
    int64_t wall_at_zero;
    int64_t mono;
    struct tclock_timer *due; /* virtual: armed timers, earliest first */
};

struct tclock *tclock_real_new(uv_loop_t *loop)
{
    struct tclock *c = calloc(1, sizeof *c);
    if (c)
        c->loop = loop;
    return c;
}

struct tclock *tclock_virtual_new(int64_t wall_ms)
{
    struct tclock *c = calloc(1, sizeof *c);
    if (c)
        c->wall_at_zero = wall_ms;
    return c;
}

void tclock_free(struct tclock *c)
{
    if (c)
        assert(c->due == NULL);
    free(c);
}

static int64_t read_ms(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t tclock_now_ms(const struct tclock *c)
{
    return c->loop ? read_ms(CLOCK_REALTIME) : c->wall_at_zero + c->mono;
}

int64_t tclock_mono_ms(const struct tclock *c)
{
    return c->loop ? read_ms(CLOCK_MONOTONIC) : c->mono;
}

void tclock_timer_init(struct tclock *c, struct tclock_timer *t, tclock_cb cb, void *data)
{
    *t = (struct tclock_timer){.data = data, .clock = c, .cb = cb};
}

/* ---- virtual ---------------------------------------------------------------------------- */

static void unlink_due(struct tclock_timer *t)
{
    struct tclock_timer **pp = &t->clock->due;
    while (*pp && *pp != t)
        pp = &(*pp)->next;
    if (*pp)
        *pp = t->next;
    t->next = NULL;
}

/* Keeps the list ordered by due time; equal times fire in the order they were armed. */
static void link_due(struct tclock_timer *t)
{
    struct tclock_timer **pp = &t->clock->due;
    while (*pp && (*pp)->due_ms <= t->due_ms)
        pp = &(*pp)->next;
    t->next = *pp;
    *pp = t;
}

unsigned tclock_advance(struct tclock *c, int64_t ms)
{
    int64_t until = c->mono + (ms > 0 ? ms : 0);
    unsigned fired = 0;

    assert(c->loop == NULL);
    while (c->due && c->due->due_ms <= until) {
        struct tclock_timer *t = c->due;
        c->due = t->next;
        t->next = NULL;
        if (t->due_ms > c->mono)
            c->mono = t->due_ms;
        if (t->repeat_ms > 0) {
            t->due_ms = c->mono + t->repeat_ms;
            link_due(t);
        } else {
            t->active = false;
        }
        fired++;
        t->cb(t);
    }
    c->mono = until;
    return fired;
}

void tclock_set_wall(struct tclock *c, int64_t wall_ms)
{
    assert(c->loop == NULL);
    c->wall_at_zero = wall_ms - c->mono;
}

int64_t tclock_next_due(const struct tclock *c)
{
    return c->due ? c->due->due_ms : -1;
}

/* ---- real ------------------------------------------------------------------------------- */

static void on_uv_timer(uv_timer_t *h)
{
    struct tclock_timer *t = h->data;
    /* libuv counts a timeout from the loop's cached time, which lags the monotonic clock by
     * however long the loop has run since it last read it; a timer started late in a busy
     * iteration would fire that much before due_ms. A caller comparing tclock_mono_ms with
     * its own deadline would then see the deadline not reached yet: wait for the rest. */
    int64_t now = tclock_mono_ms(t->clock);
    if (t->repeat_ms <= 0 && now < t->due_ms) {
        uv_timer_start(h, on_uv_timer, (uint64_t)(t->due_ms - now), 0);
        return;
    }
    if (t->repeat_ms <= 0)
        t->active = false;
    t->cb(t);
}

static void free_handle(uv_handle_t *h)
{
    free(h);
}

int tclock_timer_start(struct tclock_timer *t, int64_t after_ms, int64_t repeat_ms)
{
    struct tclock *c = t->clock;

    if (after_ms < 0)
        after_ms = 0;
    if (repeat_ms < 0)
        repeat_ms = 0;
    tclock_timer_stop(t);
    t->repeat_ms = repeat_ms;
    t->due_ms = tclock_mono_ms(c) + after_ms;
    if (c->loop == NULL) {
        t->active = true;
        link_due(t);
        return 0;
    }
    if (t->uv == NULL) {
        t->uv = malloc(sizeof *t->uv);
        if (t->uv == NULL)
            return ERR_NOMEM;
        uv_timer_init(c->loop, t->uv);
        t->uv->data = t;
    }
    t->active = true;
    uv_timer_start(t->uv, on_uv_timer, (uint64_t)after_ms, (uint64_t)repeat_ms);
    return 0;
}

void tclock_timer_stop(struct tclock_timer *t)
{
    if (!t->active)
        return;
    t->active = false;
    if (t->clock->loop == NULL)
        unlink_due(t);
    else
        uv_timer_stop(t->uv);
}

void tclock_timer_close(struct tclock_timer *t)
{
    tclock_timer_stop(t);
    if (t->uv) {
        /* The handle outlives `t` until libuv has closed it; it no longer points back. */
        t->uv->data = NULL;
        uv_close((uv_handle_t *)t->uv, free_handle);
        t->uv = NULL;
    }
}
