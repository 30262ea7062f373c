/* SPDX-License-Identifier: Apache-2.0 */
/* tclock unit tests: virtual timers fire in due order at their due time, repeat, and may be
 * re-armed or stopped from callbacks; the real clock's timers fire on a libuv loop. */
#include "harness.h"

#include <stdlib.h>
#include <time.h>

#include "base/tclock.h"

struct rec {
    struct tclock_timer t;
    int fired;
    int64_t seen_at[8];
    struct tclock_timer *stop_other;
};

static void on_fire(struct tclock_timer *t)
{
    struct rec *r = t->data;
    if (r->fired < 8)
        r->seen_at[r->fired] = tclock_mono_ms(t->clock);
    r->fired++;
    if (r->stop_other)
        tclock_timer_stop(r->stop_other);
}

TEST(tclock_virtual_fires_in_due_order_at_due_time)
{
    struct tclock *c = tclock_virtual_new(1700000000000LL);
    struct rec a = {0}, b = {0};

    REQUIRE(c != NULL);
    tclock_timer_init(c, &a.t, on_fire, &a);
    tclock_timer_init(c, &b.t, on_fire, &b);
    tclock_timer_start(&a.t, 300, 0);
    tclock_timer_start(&b.t, 100, 0);
    CHECK_EQ_INT(tclock_next_due(c), 100);
    CHECK_EQ_INT(tclock_advance(c, 99), 0);
    CHECK_EQ_INT(tclock_advance(c, 1), 1);
    CHECK_EQ_INT(b.seen_at[0], 100);
    CHECK_EQ_INT(tclock_advance(c, 1000), 1);
    CHECK_EQ_INT(a.seen_at[0], 300);
    CHECK_EQ_INT(tclock_mono_ms(c), 1100);
    CHECK_EQ_INT(tclock_now_ms(c), 1700000001100LL);
    CHECK_EQ_INT(tclock_next_due(c), -1);
    tclock_timer_close(&a.t);
    tclock_timer_close(&b.t);
    tclock_free(c);
}

TEST(tclock_virtual_repeats_and_stops_from_a_callback)
{
    struct tclock *c = tclock_virtual_new(0);
    struct rec tick = {0}, killer = {0};

    REQUIRE(c != NULL);
    tclock_timer_init(c, &tick.t, on_fire, &tick);
    tclock_timer_init(c, &killer.t, on_fire, &killer);
    killer.stop_other = &tick.t;
    tclock_timer_start(&tick.t, 10, 10);
    tclock_timer_start(&killer.t, 35, 0);
    /* Ticks at 10, 20, 30; the killer at 35 stops the repeat before 40. */
    CHECK_EQ_INT(tclock_advance(c, 100), 4);
    CHECK_EQ_INT(tick.fired, 3);
    CHECK_EQ_INT(tick.seen_at[2], 30);
    CHECK(!tick.t.active);
    /* Re-arming restarts from now. */
    tclock_timer_start(&tick.t, 5, 0);
    CHECK_EQ_INT(tclock_advance(c, 5), 1);
    CHECK_EQ_INT(tick.seen_at[3], 105);
    tclock_timer_close(&tick.t);
    tclock_timer_close(&killer.t);
    tclock_free(c);
}

TEST(tclock_real_timer_fires_on_the_loop)
{
    uv_loop_t loop;
    struct tclock *c;
    struct rec r = {0};
    int64_t t0;

    REQUIRE(uv_loop_init(&loop) == 0);
    c = tclock_real_new(&loop);
    REQUIRE(c != NULL);
    tclock_timer_init(c, &r.t, on_fire, &r);
    t0 = tclock_mono_ms(c);
    REQUIRE(tclock_timer_start(&r.t, 20, 0) == 0);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK_EQ_INT(r.fired, 1);
    CHECK(r.seen_at[0] - t0 >= 19);
    CHECK(tclock_now_ms(c) > 1600000000000LL);
    tclock_timer_close(&r.t);
    uv_run(&loop, UV_RUN_DEFAULT); /* lets the handle close */
    CHECK(uv_loop_close(&loop) == 0);
    tclock_free(c);
}

/* Started from an I/O callback after the loop has been busy for 60 ms since it last read the
 * time (libuv reads it when epoll returns, before the callbacks): libuv counts the 100 ms
 * from that stale time, so without a check the timer fires ~60 ms early by tclock_mono_ms —
 * and a forwarded request whose deadline timer fired early waited for the outbound client's
 * 30 s instead of its own 3 s (test_forwarding.py, under load). */
struct late_start {
    uv_async_t async;
    struct tclock *c;
    struct rec r;
    int64_t due;
};

static void on_async(uv_async_t *h)
{
    struct late_start *ls = h->data;
    struct timespec busy = {0, 60 * 1000000L};
    nanosleep(&busy, NULL);
    ls->due = tclock_mono_ms(ls->c) + 100;
    tclock_timer_start(&ls->r.t, 100, 0);
    uv_close((uv_handle_t *)h, NULL);
}

TEST(tclock_real_timer_started_late_in_a_busy_iteration_fires_no_earlier_than_due)
{
    uv_loop_t loop;
    struct late_start ls = {0};

    REQUIRE(uv_loop_init(&loop) == 0);
    ls.c = tclock_real_new(&loop);
    REQUIRE(ls.c != NULL);
    tclock_timer_init(ls.c, &ls.r.t, on_fire, &ls.r);
    REQUIRE(uv_async_init(&loop, &ls.async, on_async) == 0);
    ls.async.data = &ls;
    REQUIRE(uv_async_send(&ls.async) == 0);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK_EQ_INT(ls.r.fired, 1);
    CHECK(ls.r.seen_at[0] >= ls.due);
    tclock_timer_close(&ls.r.t);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK(uv_loop_close(&loop) == 0);
    tclock_free(ls.c);
}

TEST(tclock_virtual_wall_step_leaves_monotonic_time_and_timers)
{
    struct tclock *c = tclock_virtual_new(5000);
    struct rec a = {0};

    REQUIRE(c != NULL);
    tclock_timer_init(c, &a.t, on_fire, &a);
    tclock_timer_start(&a.t, 100, 0);
    CHECK_EQ_INT(tclock_advance(c, 50), 0);
    tclock_set_wall(c, 1000); /* backwards */
    CHECK_EQ_INT(tclock_now_ms(c), 1000);
    CHECK_EQ_INT(tclock_mono_ms(c), 50);
    CHECK_EQ_INT(tclock_next_due(c), 100);
    CHECK_EQ_INT(tclock_advance(c, 50), 1);
    CHECK_EQ_INT(tclock_now_ms(c), 1050);
    tclock_set_wall(c, 900000); /* forwards: still no timer fires */
    CHECK_EQ_INT(tclock_now_ms(c), 900000);
    CHECK_EQ_INT(tclock_mono_ms(c), 100);
    tclock_timer_close(&a.t);
    tclock_free(c);
}
