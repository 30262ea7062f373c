/* SPDX-License-Identifier: Apache-2.0 */
/* purgatory: operations that answer later, the points they wait on, and their timeouts. An
 * operation goes IDLE -> WAITING -> DONE (or IDLE -> DONE); DONE is final, and the one
 * transition into it is where on_done runs, which is what makes completion exactly-once. */
#include "purgatory.h"

#include <assert.h>
#include <stdlib.h>

struct purgatory {
    struct tclock *clock;
    struct purgatory_link waiting; /* WAITING operations, oldest first */
    size_t n_waiting;
};

/* ---- lists ------------------------------------------------------------------------------ */

static void link_init(struct purgatory_link *l)
{
    l->prev = l->next = l;
}

static bool link_linked(const struct purgatory_link *l)
{
    return l->next != l;
}

static void link_remove(struct purgatory_link *l)
{
    l->prev->next = l->next;
    l->next->prev = l->prev;
    link_init(l);
}

/* Inserts `l` after `at`. */
static void link_insert_after(struct purgatory_link *at, struct purgatory_link *l)
{
    l->prev = at;
    l->next = at->next;
    at->next->prev = l;
    at->next = l;
}

static struct purgatory_watch *watch_of(struct purgatory_link *l)
{
    return (struct purgatory_watch *)((char *)l - offsetof(struct purgatory_watch, link));
}

static struct purgatory_op *op_of(struct purgatory_link *l)
{
    return (struct purgatory_op *)((char *)l - offsetof(struct purgatory_op, waiting));
}

/* ---- the purgatory ---------------------------------------------------------------------- */

struct purgatory *purgatory_new(struct tclock *clock)
{
    struct purgatory *pg = calloc(1, sizeof *pg);
    if (pg == NULL)
        return NULL;
    pg->clock = clock;
    link_init(&pg->waiting);
    return pg;
}

void purgatory_free(struct purgatory *pg)
{
    if (pg)
        assert(pg->n_waiting == 0);
    free(pg);
}

size_t purgatory_waiting(const struct purgatory *pg)
{
    return pg->n_waiting;
}

/* ---- operations ------------------------------------------------------------------------- */

static void on_timeout(struct tclock_timer *t);

void purgatory_op_init(struct purgatory *pg, struct purgatory_op *op, purgatory_wake_cb on_wake,
                       purgatory_done_cb on_done, void *data)
{
    *op = (struct purgatory_op){
        .data = data, .pg = pg, .on_wake = on_wake, .on_done = on_done, .state = PURGATORY_OP_IDLE};
    link_init(&op->waiting);
    tclock_timer_init(pg->clock, &op->timer, on_timeout, op);
}

/* Leaves the operation DONE with nothing armed, linked or allocated; no callback. */
static void finish(struct purgatory_op *op)
{
    assert(op->state != PURGATORY_OP_DONE);
    if (op->state == PURGATORY_OP_WAITING) {
        link_remove(&op->waiting);
        op->pg->n_waiting--;
    }
    op->state = PURGATORY_OP_DONE;
    for (struct purgatory_watch *w = op->watches; w; w = w->op_next)
        purgatory_watch_disarm(w);
    tclock_timer_close(&op->timer);
}

/* The one way into DONE with a callback. */
static void complete(struct purgatory_op *op, int result)
{
    finish(op);
    op->on_done(op, result); /* may free op */
}

static void on_timeout(struct tclock_timer *t)
{
    struct purgatory_op *op = t->data;
    if (op->state == PURGATORY_OP_WAITING)
        complete(op, PURGATORY_TIMED_OUT);
}

void purgatory_op_start(struct purgatory_op *op, int64_t timeout_ms)
{
    struct purgatory *pg = op->pg;

    assert(op->state == PURGATORY_OP_IDLE);
    op->state = PURGATORY_OP_WAITING;
    link_insert_after(pg->waiting.prev, &op->waiting);
    pg->n_waiting++;
    if (timeout_ms >= 0 && tclock_timer_start(&op->timer, timeout_ms, 0) != 0)
        complete(op, PURGATORY_TIMED_OUT);
}

bool purgatory_complete(struct purgatory_op *op)
{
    if (op->state == PURGATORY_OP_DONE)
        return false;
    complete(op, PURGATORY_DONE);
    return true;
}

void purgatory_cancel(struct purgatory_op *op)
{
    if (op->state != PURGATORY_OP_DONE)
        finish(op);
}

bool purgatory_op_done(const struct purgatory_op *op)
{
    return op->state == PURGATORY_OP_DONE;
}

void purgatory_complete_all(struct purgatory *pg)
{
    while (link_linked(&pg->waiting))
        complete(op_of(pg->waiting.next), PURGATORY_STOPPED);
}

/* ---- watches ---------------------------------------------------------------------------- */

void purgatory_watch_init(struct purgatory_op *op, struct purgatory_watch *w)
{
    *w = (struct purgatory_watch){.op = op, .op_next = op->watches};
    link_init(&w->link);
    op->watches = w;
}

bool purgatory_watch_arm(struct purgatory_watch *w, struct purgatory_point *pt, int64_t threshold)
{
    struct purgatory_link *at;

    assert(w->op->state != PURGATORY_OP_DONE);
    purgatory_watch_disarm(w);
    if (pt->closed) {
        w->reached = false;
        return true;
    }
    if (pt->value >= threshold) {
        w->reached = true;
        return true;
    }
    w->reached = false;
    w->point = pt;
    w->threshold = threshold;
    /* From the tail: waiters mostly arrive with thresholds at or past the newest ones. */
    at = pt->watches.prev;
    while (at != &pt->watches && watch_of(at)->threshold > threshold)
        at = at->prev;
    link_insert_after(at, &w->link);
    return false;
}

void purgatory_watch_disarm(struct purgatory_watch *w)
{
    if (link_linked(&w->link))
        link_remove(&w->link);
    w->point = NULL;
}

/* ---- points ----------------------------------------------------------------------------- */

void purgatory_point_init(struct purgatory_point *pt, int64_t value)
{
    pt->value = value;
    pt->closed = false;
    link_init(&pt->watches);
}

/* Fires the watches on the detached list `due` (in order). Each is taken off the list before
 * its callback, so a callback that ends an operation (which disarms, hence unlinks, its
 * other watches, wherever they are) never leaves a stale watch behind. Touches nothing but
 * `due` and the watches it still holds. */
static void fire(struct purgatory_link *due, bool reached)
{
    while (link_linked(due)) {
        struct purgatory_watch *w = watch_of(due->next);
        link_remove(&w->link);
        w->point = NULL;
        w->reached = reached;
        if (w->op->state != PURGATORY_OP_DONE && w->op->on_wake)
            w->op->on_wake(w->op, w);
    }
}

/* Moves the watches of `pt` from the first up to and including `last` onto `due`. */
static void detach(struct purgatory_point *pt, struct purgatory_link *last,
                   struct purgatory_link *due)
{
    struct purgatory_link *first = pt->watches.next;
    link_init(due);
    if (last == &pt->watches)
        return;
    pt->watches.next = last->next;
    last->next->prev = &pt->watches;
    due->next = first;
    first->prev = due;
    due->prev = last;
    last->next = due;
}

void purgatory_point_set(struct purgatory_point *pt, int64_t value)
{
    struct purgatory_link due, *last = &pt->watches;

    pt->value = value;
    while (last->next != &pt->watches && watch_of(last->next)->threshold <= value)
        last = last->next;
    detach(pt, last, &due);
    fire(&due, true);
}

void purgatory_point_close(struct purgatory_point *pt)
{
    struct purgatory_link due;

    pt->closed = true;
    detach(pt, pt->watches.prev, &due);
    fire(&due, false);
}

void purgatory_point_fail(struct purgatory_point *pt)
{
    struct purgatory_link due;

    detach(pt, pt->watches.prev, &due);
    fire(&due, false);
}

bool purgatory_point_waited(const struct purgatory_point *pt)
{
    return link_linked(&pt->watches);
}
