/* SPDX-License-Identifier: Apache-2.0 */
/* purgatory unit tests, on virtual time and without sockets: operations wake when a point
 * (standing for a partition's log end, high watermark or last stable offset) reaches their
 * threshold, time out, complete by hand, never call back after cancel, complete exactly
 * once when the condition and the timeout coincide, and many waiters on one point wake in
 * threshold order. */
#include "harness.h"

#include <stdlib.h>

#include "base/purgatory.h"
#include "base/tclock.h"

/* A test operation: records what happened to it. Wakes complete it unless `keep_waiting`,
 * in which case the fired watch is re-armed one past the value seen. */
struct top {
    struct purgatory_op op;
    struct purgatory_watch w[2];
    struct purgatory_point *pt[2];
    int wakes, dones, result;
    int64_t done_at; /* virtual time of on_done */
    bool keep_waiting;
    bool reached; /* w->reached of the last wake */
    int *order;   /* appends its id here when done */
    int *n_order, id;
    bool free_on_done;
};

static void top_wake(struct purgatory_op *op, struct purgatory_watch *w)
{
    struct top *t = op->data;
    t->wakes++;
    t->reached = w->reached;
    if (t->keep_waiting && w->reached) {
        struct purgatory_point *pt = w == &t->w[0] ? t->pt[0] : t->pt[1];
        CHECK(!purgatory_watch_arm(w, pt, pt->value + 1));
        return;
    }
    purgatory_complete(op);
}

static struct tclock *the_clock;

static void top_done(struct purgatory_op *op, int result)
{
    struct top *t = op->data;
    t->dones++;
    t->result = result;
    t->done_at = tclock_mono_ms(the_clock);
    if (t->order)
        t->order[(*t->n_order)++] = t->id;
    CHECK(purgatory_op_done(op));
    CHECK(!purgatory_watch_armed(&t->w[0]) && !purgatory_watch_armed(&t->w[1]));
    if (t->free_on_done)
        free(t);
}

static void top_init(struct purgatory *pg, struct top *t)
{
    purgatory_op_init(pg, &t->op, top_wake, top_done, t);
    purgatory_watch_init(&t->op, &t->w[0]);
    purgatory_watch_init(&t->op, &t->w[1]);
    t->result = -1;
}

struct env {
    struct tclock *clock;
    struct purgatory *pg;
    struct purgatory_point log_end, hw, lso;
};

static bool env_init(struct env *e)
{
    e->clock = the_clock = tclock_virtual_new(1700000000000LL);
    e->pg = e->clock ? purgatory_new(e->clock) : NULL;
    purgatory_point_init(&e->log_end, 0);
    purgatory_point_init(&e->hw, 0);
    purgatory_point_init(&e->lso, 0);
    return e->pg != NULL;
}

static void env_fini(struct env *e)
{
    CHECK_EQ_INT(purgatory_waiting(e->pg), 0);
    CHECK(!purgatory_point_waited(&e->log_end) && !purgatory_point_waited(&e->hw) &&
          !purgatory_point_waited(&e->lso));
    CHECK_EQ_INT(tclock_next_due(e->clock), -1);
    purgatory_free(e->pg);
    tclock_free(e->clock);
}

/* An acks=all produce: waits until the high watermark covers its last offset (9 → HW 10). */
TEST(purgatory_wakes_on_high_watermark)
{
    struct env e;
    struct top t = {0};

    REQUIRE(env_init(&e));
    purgatory_point_set(&e.log_end, 10);
    top_init(e.pg, &t);
    CHECK(!purgatory_watch_arm(&t.w[0], &e.hw, 10));
    purgatory_op_start(&t.op, 30000);
    CHECK_EQ_INT(purgatory_waiting(e.pg), 1);
    tclock_advance(e.clock, 100);
    purgatory_point_set(&e.hw, 9); /* not yet */
    CHECK_EQ_INT(t.wakes, 0);
    purgatory_point_set(&e.hw, 10);
    CHECK_EQ_INT(t.wakes, 1);
    CHECK(t.reached);
    CHECK_EQ_INT(t.dones, 1);
    CHECK_EQ_INT(t.result, PURGATORY_DONE);
    CHECK_EQ_INT(t.done_at, 100);
    /* Its timer went with it: nothing fires later. */
    CHECK_EQ_INT(tclock_advance(e.clock, 60000), 0);
    CHECK_EQ_INT(t.dones, 1);
    env_fini(&e);
}

/* A read_committed fetch: the log end and the HW move past it, only the LSO wakes it. */
TEST(purgatory_wakes_on_last_stable_offset)
{
    struct env e;
    struct top t = {0};

    REQUIRE(env_init(&e));
    top_init(e.pg, &t);
    CHECK(!purgatory_watch_arm(&t.w[0], &e.lso, 1));
    purgatory_op_start(&t.op, 500);
    purgatory_point_set(&e.log_end, 5);
    purgatory_point_set(&e.hw, 5);
    CHECK_EQ_INT(t.wakes, 0);
    tclock_advance(e.clock, 499);
    purgatory_point_set(&e.lso, 3);
    CHECK_EQ_INT(t.dones, 1);
    CHECK_EQ_INT(t.result, PURGATORY_DONE);
    CHECK_EQ_INT(t.done_at, 499);
    env_fini(&e);
}

/* A follower's fetch waits on the log end; a MinBytes fetch that is not yet satisfied re-arms
 * past each value it saw and keeps its original deadline. */
TEST(purgatory_wakes_on_log_end_and_rearms)
{
    struct env e;
    struct top t = {0};

    REQUIRE(env_init(&e));
    top_init(e.pg, &t);
    t.pt[0] = &e.log_end;
    t.keep_waiting = true;
    CHECK(!purgatory_watch_arm(&t.w[0], &e.log_end, 1));
    purgatory_op_start(&t.op, 1000);
    purgatory_point_set(&e.hw, 10);
    CHECK_EQ_INT(t.wakes, 0);
    tclock_advance(e.clock, 200);
    purgatory_point_set(&e.log_end, 1);
    CHECK_EQ_INT(t.wakes, 1);
    purgatory_point_set(&e.log_end, 1); /* no change: the re-armed watch waits for 2 */
    CHECK_EQ_INT(t.wakes, 1);
    purgatory_point_set(&e.log_end, 4);
    CHECK_EQ_INT(t.wakes, 2);
    CHECK_EQ_INT(t.dones, 0);
    t.keep_waiting = false;
    purgatory_point_set(&e.log_end, 5);
    CHECK_EQ_INT(t.wakes, 3);
    CHECK_EQ_INT(t.dones, 1);
    CHECK_EQ_INT(t.result, PURGATORY_DONE);
    env_fini(&e);
}

TEST(purgatory_times_out)
{
    struct env e;
    struct top t = {0}, forever = {0};

    REQUIRE(env_init(&e));
    top_init(e.pg, &t);
    top_init(e.pg, &forever);
    CHECK(!purgatory_watch_arm(&t.w[0], &e.hw, 100));
    CHECK(!purgatory_watch_arm(&t.w[1], &e.lso, 100));
    purgatory_op_start(&t.op, 500);
    purgatory_op_start(&forever.op, -1); /* no limit */
    CHECK_EQ_INT(tclock_advance(e.clock, 499), 0);
    CHECK_EQ_INT(t.dones, 0);
    CHECK_EQ_INT(tclock_advance(e.clock, 1), 1);
    CHECK_EQ_INT(t.dones, 1);
    CHECK_EQ_INT(t.result, PURGATORY_TIMED_OUT);
    CHECK_EQ_INT(t.done_at, 500);
    /* Its watches were disarmed: the condition arriving later does nothing. */
    purgatory_point_set(&e.hw, 100);
    purgatory_point_set(&e.lso, 100);
    CHECK_EQ_INT(t.wakes, 0);
    CHECK_EQ_INT(t.dones, 1);
    /* A zero timeout expires at the next turn of the clock, not inside start. */
    struct top z = {0};
    top_init(e.pg, &z);
    purgatory_op_start(&z.op, 0);
    CHECK_EQ_INT(z.dones, 0);
    tclock_advance(e.clock, 0);
    CHECK_EQ_INT(z.dones, 1);
    CHECK_EQ_INT(z.result, PURGATORY_TIMED_OUT);
    CHECK_EQ_INT(tclock_advance(e.clock, 1000000), 0);
    CHECK_EQ_INT(forever.dones, 0);
    CHECK(purgatory_complete(&forever.op));
    env_fini(&e);
}

/* A coordinator append or a remote answer: no watch, the owner completes it by hand, once. */
TEST(purgatory_completes_by_hand)
{
    struct env e;
    struct top t = {0}, idle = {0};

    REQUIRE(env_init(&e));
    top_init(e.pg, &t);
    purgatory_op_start(&t.op, 1000);
    tclock_advance(e.clock, 10);
    CHECK(purgatory_complete(&t.op));
    CHECK_EQ_INT(t.dones, 1);
    CHECK_EQ_INT(t.result, PURGATORY_DONE);
    CHECK(!purgatory_complete(&t.op)); /* once */
    CHECK_EQ_INT(tclock_advance(e.clock, 5000), 0);
    CHECK_EQ_INT(t.dones, 1);
    /* Completing before waiting (the condition already held) goes through on_done too. */
    top_init(e.pg, &idle);
    CHECK(purgatory_watch_arm(&idle.w[0], &e.hw, 0)); /* already there: not armed */
    CHECK(idle.w[0].reached && !purgatory_watch_armed(&idle.w[0]));
    CHECK(purgatory_complete(&idle.op));
    CHECK_EQ_INT(idle.dones, 1);
    env_fini(&e);
}

TEST(purgatory_cancel_runs_no_callback)
{
    struct env e;
    struct top t = {0}, u = {0};

    REQUIRE(env_init(&e));
    top_init(e.pg, &t);
    CHECK(!purgatory_watch_arm(&t.w[0], &e.hw, 5));
    CHECK(!purgatory_watch_arm(&t.w[1], &e.log_end, 5));
    purgatory_op_start(&t.op, 100);
    purgatory_cancel(&t.op);
    CHECK(purgatory_op_done(&t.op));
    CHECK_EQ_INT(purgatory_waiting(e.pg), 0);
    CHECK(!purgatory_point_waited(&e.hw) && !purgatory_point_waited(&e.log_end));
    purgatory_point_set(&e.hw, 10);
    purgatory_point_set(&e.log_end, 10);
    CHECK_EQ_INT(tclock_advance(e.clock, 1000), 0);
    CHECK(!purgatory_complete(&t.op));
    purgatory_cancel(&t.op); /* twice: harmless */
    CHECK_EQ_INT(t.wakes + t.dones, 0);
    /* Cancelled while idle (a connection that closed before the wait began). */
    top_init(e.pg, &u);
    CHECK(!purgatory_watch_arm(&u.w[0], &e.hw, 50));
    purgatory_cancel(&u.op);
    purgatory_point_set(&e.hw, 50);
    CHECK_EQ_INT(u.wakes + u.dones, 0);
    env_fini(&e);
}

/* A point advanced by a timer due at the same instant as the operation's timeout: whichever
 * runs first wins and the other finds the operation done. Both orders. */
struct bump {
    struct tclock_timer timer;
    struct purgatory_point *pt;
    int64_t to;
};

static void on_bump(struct tclock_timer *timer)
{
    struct bump *b = timer->data;
    purgatory_point_set(b->pt, b->to);
}

TEST(purgatory_condition_and_timeout_coincide_completes_once)
{
    struct env e;
    struct bump bm = {0};
    struct top first = {0}, second = {0};

    REQUIRE(env_init(&e));
    bm.pt = &e.hw;
    bm.to = 10;
    tclock_timer_init(e.clock, &bm.timer, on_bump, &bm);

    /* The timeout was armed first, so it runs first at t=100. */
    top_init(e.pg, &first);
    CHECK(!purgatory_watch_arm(&first.w[0], &e.hw, 10));
    purgatory_op_start(&first.op, 100);
    tclock_timer_start(&bm.timer, 100, 0);
    tclock_advance(e.clock, 100);
    CHECK_EQ_INT(first.dones, 1);
    CHECK_EQ_INT(first.wakes, 0);
    CHECK_EQ_INT(first.result, PURGATORY_TIMED_OUT);

    /* The bump was armed first: the condition wins and the timeout finds nothing. */
    bm.to = 20;
    tclock_timer_start(&bm.timer, 100, 0);
    top_init(e.pg, &second);
    CHECK(!purgatory_watch_arm(&second.w[0], &e.hw, 20));
    purgatory_op_start(&second.op, 100);
    CHECK_EQ_INT(tclock_advance(e.clock, 100), 1); /* the op's timer was closed, not fired */
    CHECK_EQ_INT(second.dones, 1);
    CHECK_EQ_INT(second.wakes, 1);
    CHECK_EQ_INT(second.result, PURGATORY_DONE);
    CHECK_EQ_INT(second.done_at, 200);
    tclock_timer_close(&bm.timer);
    env_fini(&e);
}

/* One operation watching two points that both pass at once (one set covering both of its
 * watches on the same point, too): one completion. */
TEST(purgatory_two_watches_one_completion)
{
    struct env e;
    struct top t = {0};

    REQUIRE(env_init(&e));
    top_init(e.pg, &t);
    CHECK(!purgatory_watch_arm(&t.w[0], &e.hw, 3));
    CHECK(!purgatory_watch_arm(&t.w[1], &e.hw, 4));
    purgatory_op_start(&t.op, 100);
    purgatory_point_set(&e.hw, 10);
    CHECK_EQ_INT(t.wakes, 1);
    CHECK_EQ_INT(t.dones, 1);
    env_fini(&e);
}

/* Waiters on one point wake in threshold order, ties in arming order; those past the new
 * value keep waiting; an operation freed inside its callback does not disturb the rest. */
TEST(purgatory_many_waiters_wake_in_order)
{
    struct env e;
    int order[16], n_order = 0;
    int64_t thresholds[8] = {5, 3, 7, 3, 9, 1, 5, 20};
    struct top *t[8];

    REQUIRE(env_init(&e));
    for (int i = 0; i < 8; i++) {
        t[i] = calloc(1, sizeof *t[i]);
        REQUIRE(t[i]);
        top_init(e.pg, t[i]);
        t[i]->order = order;
        t[i]->n_order = &n_order;
        t[i]->id = i;
        t[i]->free_on_done = i != 7;
        CHECK(!purgatory_watch_arm(&t[i]->w[0], &e.log_end, thresholds[i]));
        purgatory_op_start(&t[i]->op, 1000);
    }
    purgatory_point_set(&e.log_end, 9);
    REQUIRE(n_order == 7);
    int want[7] = {5, 1, 3, 0, 6, 2, 4};
    for (int i = 0; i < 7; i++)
        CHECK_EQ_INT(order[i], want[i]);
    CHECK_EQ_INT(purgatory_waiting(e.pg), 1);
    CHECK(purgatory_point_waited(&e.log_end));
    CHECK_EQ_INT(t[7]->dones, 0);
    purgatory_point_set(&e.log_end, 20);
    CHECK_EQ_INT(t[7]->dones, 1);
    free(t[7]);
    env_fini(&e);
}

/* Closing a point (its partition went offline) fires its watches with reached = false, and
 * arming on it afterwards answers at once. */
TEST(purgatory_point_close_wakes_everyone)
{
    struct env e;
    struct top a = {0}, b = {0};

    REQUIRE(env_init(&e));
    top_init(e.pg, &a);
    top_init(e.pg, &b);
    CHECK(!purgatory_watch_arm(&a.w[0], &e.hw, 1));
    CHECK(!purgatory_watch_arm(&b.w[0], &e.hw, 1000));
    purgatory_op_start(&a.op, 100);
    purgatory_op_start(&b.op, 100);
    purgatory_point_close(&e.hw);
    CHECK_EQ_INT(a.dones + b.dones, 2);
    CHECK(!a.reached && !b.reached);
    struct top c = {0};
    top_init(e.pg, &c);
    CHECK(purgatory_watch_arm(&c.w[0], &e.hw, 1000000));
    CHECK(!c.w[0].reached);
    purgatory_cancel(&c.op);
    env_fini(&e);
}

/* Failing a point (its partition's leadership moved) fires its watches with reached = false
 * but leaves it open: a watch armed afterwards waits for the value as usual. */
TEST(purgatory_point_fail_wakes_everyone_and_stays_open)
{
    struct env e;
    struct top a = {0}, b = {0}, c = {0};

    REQUIRE(env_init(&e));
    top_init(e.pg, &a);
    top_init(e.pg, &b);
    CHECK(!purgatory_watch_arm(&a.w[0], &e.hw, 1));
    CHECK(!purgatory_watch_arm(&b.w[0], &e.hw, 1000));
    purgatory_op_start(&a.op, 100);
    purgatory_op_start(&b.op, 100);
    purgatory_point_fail(&e.hw);
    CHECK_EQ_INT(a.dones + b.dones, 2);
    CHECK(!a.reached && !b.reached);
    top_init(e.pg, &c);
    CHECK(!purgatory_watch_arm(&c.w[0], &e.hw, 5));
    purgatory_op_start(&c.op, 100);
    CHECK_EQ_INT(c.dones, 0);
    purgatory_point_set(&e.hw, 5);
    CHECK_EQ_INT(c.dones, 1);
    CHECK(c.reached);
    env_fini(&e);
}

/* A stop completes every waiting operation, oldest first, with PURGATORY_STOPPED. */
TEST(purgatory_complete_all_on_stop)
{
    struct env e;
    struct top a = {0}, b = {0};
    int order[4], n_order = 0;

    REQUIRE(env_init(&e));
    top_init(e.pg, &a);
    top_init(e.pg, &b);
    a.order = b.order = order;
    a.n_order = b.n_order = &n_order;
    a.id = 1;
    b.id = 2;
    CHECK(!purgatory_watch_arm(&b.w[0], &e.lso, 7));
    purgatory_op_start(&a.op, 100);
    purgatory_op_start(&b.op, -1);
    purgatory_complete_all(e.pg);
    CHECK_EQ_INT(n_order, 2);
    CHECK_EQ_INT(order[0], 1);
    CHECK_EQ_INT(order[1], 2);
    CHECK_EQ_INT(a.result, PURGATORY_STOPPED);
    CHECK_EQ_INT(b.result, PURGATORY_STOPPED);
    env_fini(&e);
}

/* The real clock: an operation's timeout fires on a libuv loop. */
TEST(purgatory_real_clock_timeout)
{
    uv_loop_t loop;
    struct tclock *c;
    struct purgatory *pg;
    struct top t = {0};

    REQUIRE(uv_loop_init(&loop) == 0);
    c = the_clock = tclock_real_new(&loop);
    REQUIRE(c);
    pg = purgatory_new(c);
    REQUIRE(pg);
    top_init(pg, &t);
    purgatory_op_start(&t.op, 5);
    uv_run(&loop, UV_RUN_DEFAULT); /* returns once the timer fired and its handle closed */
    CHECK_EQ_INT(t.dones, 1);
    CHECK_EQ_INT(t.result, PURGATORY_TIMED_OUT);
    purgatory_free(pg);
    tclock_free(c);
    CHECK(uv_loop_close(&loop) == 0);
}
