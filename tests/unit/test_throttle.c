/* SPDX-License-Identifier: Apache-2.0 */
/* replica/throttle unit tests: the replication quotas' meter, throttled-replicas lists and
 * per-fetch budget on plain now_ms values, and a leader feeding followers under a quota on
 * virtual time. */
#include "harness.h"

#include <stdint.h>

#include "replica/throttle.h"

TEST(throttle_meter_window_slides_by_slot)
{
    struct throttle_meter m;
    throttle_meter_init(&m);
    CHECK_EQ_INT(throttle_window_bytes(&m, 0), 0);
    throttle_record(&m, 0, 1000);
    throttle_record(&m, 450, 500);
    throttle_record(&m, 470, 25);
    CHECK_EQ_INT(throttle_window_bytes(&m, 500), 1525);
    CHECK_EQ_INT(throttle_window_bytes(&m, 999), 1525);
    /* The slot of t=0 leaves the window once the window's newest slot starts at 1000. */
    CHECK_EQ_INT(throttle_window_bytes(&m, 1000), 525);
    CHECK_EQ_INT(throttle_window_bytes(&m, 1399), 525);
    CHECK_EQ_INT(throttle_window_bytes(&m, 1400), 0);
    /* A slot reused windows later starts from zero (t=0's place holds t=2005's bytes). */
    throttle_record(&m, 1450, 3);
    throttle_record(&m, 2005, 7);
    CHECK_EQ_INT(throttle_window_bytes(&m, 2010), 10);
    CHECK_EQ_INT(throttle_window_bytes(&m, 2399), 10);
    CHECK_EQ_INT(throttle_window_bytes(&m, 2400), 7);
    /* Long idle: everything old is out. */
    CHECK_EQ_INT(throttle_window_bytes(&m, 100000), 0);
}

/* The allowance is the smaller of the rate over the 1 s window and over its last 200 ms. */
TEST(throttle_headroom_is_the_allowance_left)
{
    struct throttle_meter m;
    throttle_meter_init(&m);
    /* 10000 B/s: 10000 per window, 2000 per 200 ms. */
    CHECK_EQ_INT(throttle_headroom(&m, 0, 10000), 2000);
    throttle_record(&m, 10, 1500);
    CHECK_EQ_INT(throttle_headroom(&m, 20, 10000), 500);
    throttle_record(&m, 30, 600);
    CHECK_EQ_INT(throttle_headroom(&m, 40, 10000), -100); /* the burst bound is exceeded */
    CHECK_EQ_INT(throttle_headroom(&m, 200, 10000), 2000);
    /* A busy start leaves less than a burst of the window. */
    throttle_meter_init(&m);
    for (int64_t t = 0; t < 800; t += 100)
        throttle_record(&m, t, 1200);
    CHECK_EQ_INT(throttle_headroom(&m, 950, 10000), 400);
    CHECK_EQ_INT(throttle_headroom(&m, 1000, 10000), 1600); /* t=0's slot left */
    CHECK_EQ_INT(throttle_headroom(&m, 1800, 10000), 2000);
    /* Kafka's default Long.MAX_VALUE, and anything the window cannot hold, is unlimited. */
    CHECK_EQ_INT(throttle_headroom(&m, 40, INT64_MAX), INT64_MAX);
    CHECK_EQ_INT(throttle_headroom(&m, 40, INT64_MAX / 100), INT64_MAX);
    CHECK_EQ_INT(throttle_headroom(&m, 40, -1), INT64_MAX);
    CHECK(throttle_headroom(&m, 950, 0) < 0); /* rate 0: nothing passes */
}

TEST(throttle_listed_reads_the_config_forms)
{
    CHECK(throttle_listed("*", 7, 3));
    CHECK(throttle_listed("  *  ", 0, 1));
    CHECK(!throttle_listed("", 0, 1));
    CHECK(!throttle_listed(NULL, 0, 1));
    CHECK(!throttle_listed("   ", 0, 1));
    CHECK(throttle_listed("0:1,1:2", 0, 1));
    CHECK(throttle_listed("0:1,1:2", 1, 2));
    CHECK(!throttle_listed("0:1,1:2", 1, 1));
    CHECK(!throttle_listed("0:1,1:2", 2, 1));
    CHECK(throttle_listed(" 0 : 1 , 3:4 ", 3, 4));
    CHECK(throttle_listed(" 0 : 1 , 3:4 ", 0, 1));
    CHECK(!throttle_listed("10:1", 1, 1)); /* whole numbers, not prefixes */
    CHECK(!throttle_listed("1:10", 1, 1));
    CHECK(throttle_listed("10:11", 10, 11));
    CHECK(!throttle_listed("x:y,0", 0, 0));
    CHECK(throttle_listed("x:y,2:3", 2, 3)); /* a malformed item names nothing, the rest count */
}

TEST(throttle_budget_holds_back_only_replicas_out_of_sync)
{
    /* Not throttled here, or in sync: the whole budget, whatever the quota says. */
    CHECK_EQ_INT(throttle_budget(false, false, -5000, 0, 1048576), 1048576);
    CHECK_EQ_INT(throttle_budget(true, true, -5000, 0, 1048576), 1048576);
    CHECK_EQ_INT(throttle_budget(true, true, 0, 999, 1048576), 1048576);
    /* Out of sync: what the window still allows, after what the answer took already. */
    CHECK_EQ_INT(throttle_budget(true, false, 100, 30, 1048576), 70);
    CHECK_EQ_INT(throttle_budget(true, false, 100, 100, 1048576), 0);
    CHECK_EQ_INT(throttle_budget(true, false, 100, 130, 1048576), 0);
    CHECK_EQ_INT(throttle_budget(true, false, -1, 0, 1048576), 0);
    CHECK_EQ_INT(throttle_budget(true, false, 5000000, 0, 1048576), 1048576);
    CHECK_EQ_INT(throttle_budget(true, false, INT64_MAX, 5, 1048576), 1048576);
}

/* A leader with an unbounded backlog for a follower out of the ISR (a new replica catching up)
 * and two in-sync followers taking the ingest: every 20 virtual ms each fetches, asking for up
 * to 1 MiB, and the leader answers what throttle_budget allows, recording every byte. The new
 * replica moves at the quota less the in-sync traffic, within one window's allowance, and the
 * in-sync followers are never held back even while the quota is spent. */
TEST(throttle_leader_holds_a_catching_up_follower_to_the_rate)
{
    const int64_t rate = 500000, ingest = 20000, step = 20, seconds = 20;
    struct throttle_meter m;
    int64_t moved = 0, isr_sent = 0, isr_due = 0;
    throttle_meter_init(&m);
    for (int64_t now = 0; now < seconds * 1000; now += step) {
        /* The in-sync followers: each wants the step's ingest. */
        isr_due += ingest * step / 1000;
        for (int f = 0; f < 2; f++) {
            int64_t want = ingest * step / 1000;
            int64_t got = throttle_budget(true, true, throttle_headroom(&m, now, rate), 0, want);
            CHECK_EQ_INT(got, want);
            throttle_record(&m, now, got);
            isr_sent += got;
        }
        int64_t got = throttle_budget(true, false, throttle_headroom(&m, now, rate), 0, 1 << 20);
        throttle_record(&m, now, got);
        moved += got;
    }
    CHECK_EQ_INT(isr_sent, 2 * isr_due);
    int64_t expected = (rate - 2 * ingest) * seconds;
    /* At most one window's allowance above the rate (the first second), never below it. */
    CHECK(moved >= expected - rate / 10);
    CHECK(moved <= expected + rate * THROTTLE_WINDOW_MS / 1000);
}
