/* SPDX-License-Identifier: Apache-2.0 */
/* tclock: the time service. Wall time, monotonic time and timers behind one handle, so
 * that every state machine above base/ can run on virtual time in a unit test (advanced by
 * the test, no sleeping, no sockets) and on the libuv loop in tallyd. */
#ifndef TALLY_BASE_TCLOCK_H
#define TALLY_BASE_TCLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

struct tclock;
struct tclock_timer;

/* Runs on the loop (or inside tclock_advance) when the timer is due. The callback may
 * start, stop or close any timer, its own included. */
typedef void (*tclock_cb)(struct tclock_timer *timer);

/* A timer, embedded in its owner's struct. Fields are the time service's; `data` is the
 * owner's. Initialise with tclock_timer_init; release with tclock_timer_close, after which
 * the struct may be freed at once. */
struct tclock_timer {
    void *data;
    struct tclock *clock;
    tclock_cb cb;
    int64_t due_ms;    /* monotonic time it fires at, while active */
    int64_t repeat_ms; /* 0 = one-shot */
    bool active;
    struct tclock_timer *next; /* virtual clock: the due-ordered list */
    uv_timer_t *uv;            /* real clock: its libuv handle, allocated on first start */
};

/* The real clock on `loop`. Returns NULL when out of memory. */
struct tclock *tclock_real_new(uv_loop_t *loop);

/* A virtual clock whose wall time starts at `wall_ms` (ms since the epoch) and whose
 * monotonic time starts at 0. Time moves only through tclock_advance. */
struct tclock *tclock_virtual_new(int64_t wall_ms);

/* Frees the clock. Every timer must have been closed. */
void tclock_free(struct tclock *c);

/* Wall-clock milliseconds since the epoch (record timestamps, retention). */
int64_t tclock_now_ms(const struct tclock *c);

/* Monotonic milliseconds (timeouts, intervals): never goes backwards. */
int64_t tclock_mono_ms(const struct tclock *c);

void tclock_timer_init(struct tclock *c, struct tclock_timer *t, tclock_cb cb, void *data);

/* (Re)arms the timer to fire after `after_ms` (>= 0), then every `repeat_ms` if > 0; a
 * one-shot timer never fires before tclock_mono_ms has reached its due time (start time +
 * after_ms), on the real clock too. Returns 0, or ERR_NOMEM (real clock: no handle could be
 * allocated). */
int tclock_timer_start(struct tclock_timer *t, int64_t after_ms, int64_t repeat_ms);

/* Disarms the timer; a no-op when it is not armed. */
void tclock_timer_stop(struct tclock_timer *t);

/* Disarms the timer and releases what it holds; the caller may free `t` right after. */
void tclock_timer_close(struct tclock_timer *t);

/* Virtual clock only: moves time forward by `ms`, firing every timer that falls due on the
 * way, in due order and each at its due time (tclock_mono_ms equals its due_ms inside the
 * callback). Returns how many callbacks ran. */
unsigned tclock_advance(struct tclock *c, int64_t ms);

/* Virtual clock only: steps the wall clock to `wall_ms` (backwards too), as an NTP step does
 * to the real one; monotonic time does not move and no timer fires. */
void tclock_set_wall(struct tclock *c, int64_t wall_ms);

/* Virtual clock only: the due time of the earliest armed timer, or -1 when none. */
int64_t tclock_next_due(const struct tclock *c);

#endif
