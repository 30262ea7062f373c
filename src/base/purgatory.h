/* SPDX-License-Identifier: Apache-2.0 */
/* purgatory: deferred answers. A request handler that cannot answer yet parks an operation
 * here; the operation completes exactly once — when its owner says so (typically from its
 * wake callback, run because a watched value reached a threshold), or when its timeout
 * fires — unless it is cancelled first, after which none of its callbacks runs.
 *
 * The core knows nothing of partitions or requests. Its pieces, all embedded in their
 * owners' structs (nothing here allocates, except the real clock's timer handle):
 * - a point (struct purgatory_point): an int64 value its owner moves (a partition's log
 *   end, high watermark, last stable offset, durable offset) with waiting watches sorted by
 *   threshold;
 * - a watch (struct purgatory_watch): one operation waiting for one point to reach a
 *   threshold; it fires once (disarmed when it fires) and may be re-armed;
 * - an operation (struct purgatory_op): the deferred answer, with its timeout timer, its
 *   watches and two callbacks; the purgatory (struct purgatory) lists the ones waiting so
 *   that a stop can complete them all.
 * A waiter on something that is not a value (a remote answer, a coordinator append) is an
 * operation with no watch that its owner completes by hand with purgatory_complete.
 *
 * Everything runs on one thread (the event loop). Callbacks may start, complete, cancel or
 * free any operation (their own included) and arm or disarm any watch. */
#ifndef TALLY_BASE_PURGATORY_H
#define TALLY_BASE_PURGATORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tclock.h"

struct purgatory;
struct purgatory_op;
struct purgatory_watch;

/* An intrusive doubly-linked list node (circular, with the list head as sentinel). A node
 * that is in no list points to itself. */
struct purgatory_link {
    struct purgatory_link *prev, *next;
};

/* A value that watches wait on. Fields are the purgatory's; read `value` freely. */
struct purgatory_point {
    int64_t value;
    bool closed;                   /* purgatory_point_close ran: nothing waits here again */
    struct purgatory_link watches; /* armed watches, by threshold, then arming order */
};

/* Why an operation completed: the argument of its on_done callback. */
enum purgatory_result {
    PURGATORY_DONE = 0,      /* purgatory_complete */
    PURGATORY_TIMED_OUT = 1, /* its timeout fired first */
    PURGATORY_STOPPED = 2,   /* purgatory_complete_all (the owner is stopping) */
};

/* A watch fired: `w` is already disarmed; w->reached tells whether the point reached the
 * threshold (true) or was closed (false). The owner decides: complete the operation, re-arm
 * this watch (say, past the value just seen), or keep waiting on its other watches. Runs
 * only while the operation is not done. */
typedef void (*purgatory_wake_cb)(struct purgatory_op *op, struct purgatory_watch *w);

/* The operation completed; `result` is an enum purgatory_result. Runs exactly once per
 * operation that is not cancelled, after its timer and watches are released: the owner may
 * free the operation's memory inside it. */
typedef void (*purgatory_done_cb)(struct purgatory_op *op, int result);

struct purgatory_watch {
    struct purgatory_link link; /* in the point's list while armed */
    struct purgatory_op *op;
    struct purgatory_watch *op_next; /* the operation's watches */
    struct purgatory_point *point;   /* while armed */
    int64_t threshold;
    bool reached; /* the last arming ended with the point at or past the threshold */
};

enum purgatory_op_state { PURGATORY_OP_IDLE, PURGATORY_OP_WAITING, PURGATORY_OP_DONE };

struct purgatory_op {
    void *data; /* the owner's */
    struct purgatory *pg;
    purgatory_wake_cb on_wake;
    purgatory_done_cb on_done;
    struct tclock_timer timer;
    struct purgatory_watch *watches;
    struct purgatory_link waiting; /* in pg's list while WAITING */
    enum purgatory_op_state state;
};

/* A purgatory whose timeouts run on `clock` (borrowed; must outlive it). NULL when out of
 * memory. */
struct purgatory *purgatory_new(struct tclock *clock);

/* Frees the purgatory. No operation may be waiting (complete or cancel them first). */
void purgatory_free(struct purgatory *pg);

/* Operations started and not yet done. */
size_t purgatory_waiting(const struct purgatory *pg);

/* Completes every waiting operation now with PURGATORY_STOPPED, oldest first (a stop).
 * Operations started from within these callbacks are completed too. */
void purgatory_complete_all(struct purgatory *pg);

/* ---- operations ------------------------------------------------------------------------- */

/* Prepares `op` (IDLE: not yet waiting). `on_wake` may be NULL when it has no watch. */
void purgatory_op_init(struct purgatory *pg, struct purgatory_op *op, purgatory_wake_cb on_wake,
                       purgatory_done_cb on_done, void *data);

/* Starts waiting: the operation completes with PURGATORY_TIMED_OUT after `timeout_ms`
 * (0: at the next turn of the clock) unless completed or cancelled before; a negative
 * timeout waits without limit. Call once, on an IDLE operation; its watches may be armed
 * before or after. If the timer cannot be armed (out of memory) the operation times out at
 * once: on_done runs before this returns. */
void purgatory_op_start(struct purgatory_op *op, int64_t timeout_ms);

/* Completes the operation with PURGATORY_DONE (on_done runs before this returns), unless it
 * is already done or cancelled. Returns whether it completed it. Allowed on an IDLE
 * operation too (the condition held before any wait). */
bool purgatory_complete(struct purgatory_op *op);

/* Ends the operation without any callback: watches disarmed, timer released. A no-op when
 * it is already done. The owner then frees what it holds. */
void purgatory_cancel(struct purgatory_op *op);

/* Whether the operation is done (completed, timed out, stopped or cancelled). */
bool purgatory_op_done(const struct purgatory_op *op);

/* ---- watches ---------------------------------------------------------------------------- */

/* Attaches watch `w` to `op` (disarmed). Every watch of an operation is disarmed when the
 * operation ends; a watch's memory may go only once it is disarmed. */
void purgatory_watch_init(struct purgatory_op *op, struct purgatory_watch *w);

/* Arms `w` to fire once `pt` reaches `threshold` (value >= threshold) or is closed; a watch
 * already armed is moved. Returns true, without arming, when the point is already there (or
 * closed): the caller then acts at once. The operation must not be done. */
bool purgatory_watch_arm(struct purgatory_watch *w, struct purgatory_point *pt, int64_t threshold);

/* Disarms `w` if armed. */
void purgatory_watch_disarm(struct purgatory_watch *w);

static inline bool purgatory_watch_armed(const struct purgatory_watch *w)
{
    return w->point != NULL;
}

/* ---- points ----------------------------------------------------------------------------- */

void purgatory_point_init(struct purgatory_point *pt, int64_t value);

/* Sets the value and fires, in threshold order (ties in arming order), every watch it
 * reaches. A value may go down (a truncated log); nothing fires then. Watches armed from
 * within the callbacks wait for a later call. The point's memory is not touched once the
 * first callback runs, so a callback may free the point's owner. */
void purgatory_point_set(struct purgatory_point *pt, int64_t value);

/* The point goes away (its partition went offline): every armed watch fires with
 * reached = false, and later arming returns true at once. Same callback rules as set. */
void purgatory_point_close(struct purgatory_point *pt);

/* Every watch armed now fires with reached = false, as at a close, but the point stays open:
 * watches armed afterwards wait as usual (a partition whose leadership moved: the waiters of
 * the old role can no longer be answered "reached", the point serves the new role). Same
 * callback rules as set. */
void purgatory_point_fail(struct purgatory_point *pt);

/* Whether any watch is armed on the point. */
bool purgatory_point_waited(const struct purgatory_point *pt);

#endif
