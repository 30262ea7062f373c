/* SPDX-License-Identifier: Apache-2.0 */
/* Cluster tests on the virtual-time fixture (cluster_fixture.h): brokers' partition_sm and
 * the controller's decisions over a fake network, with kills, pauses, cuts and clients, and
 * the safety checkers of the cluster issue. Each scenario runs minutes of virtual time in
 * milliseconds, over several seeds. */
#include "harness.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/err.h"
#include "cluster_fixture.h"
#include "replica/partition_sm.h"

#define SETTLE_MS 180000

static struct cf *boot_opts(struct cf_options *o, int32_t parts, int32_t rf, int32_t min_isr,
                            bool unclean)
{
    struct cf *c = cf_new(o);
    if (c == NULL)
        return NULL;
    if (!cf_start(c, parts, rf, min_isr, unclean, 60000)) {
        cf_free(c);
        return NULL;
    }
    return c;
}

static struct cf *boot(uint64_t seed, int32_t nodes, int32_t parts, int32_t min_isr, bool unclean)
{
    struct cf_options o = {.n_nodes = nodes, .seed = seed};
    return boot_opts(&o, parts, nodes < 3 ? nodes : 3, min_isr, unclean);
}

/* Settles the cluster and requires every checker to pass. */
static void verify(struct cf *c, const char *label)
{
    CHECK(cf_settle(c, SETTLE_MS));
    struct cf_report r;
    cf_check(c, &r);
    cf_report_print(c, &r, label);
    CHECK_EQ_INT(r.lost_acked, 0);
    CHECK_EQ_INT(r.false_acks, 0);
    CHECK_EQ_INT(r.consumer_diverged, 0);
    CHECK_EQ_INT(r.isr_diverged, 0);
    CHECK_EQ_INT(r.two_leaders, 0);
    CHECK_EQ_INT(r.two_records, 0);
    CHECK_EQ_INT(r.hw_backwards, 0);
    CHECK_EQ_INT(r.unreplicated_commit, 0);
    CHECK_EQ_INT(r.early_removal, 0);
    CHECK_EQ_INT(r.anomalies, 0);
    CHECK(r.acked_all > 0);
}

struct leader_is {
    int32_t part;
    int32_t not_node; /* wait for a leader other than this one (and not -1) */
};

static bool new_leader(struct cf *c, void *arg)
{
    const struct leader_is *w = arg;
    int32_t l = cf_leader(c, w->part);
    return l > 0 && l != w->not_node && cf_node_role(c, l, w->part) == PSM_LEADER;
}

struct node_in {
    int32_t node;
    int32_t n_parts;
};

/* Every partition that has `node` as a replica has it in its ISR again. */
static bool back_in_isr(struct cf *c, void *arg)
{
    const struct node_in *w = arg;
    for (int32_t p = 0; p < w->n_parts; p++)
        if (!cf_in_isr(c, p, w->node))
            return false;
    return true;
}

static __attribute__((unused)) bool full_isr(struct cf *c, void *arg)
{
    const int32_t *n_parts = arg;
    int32_t isr[CF_MAX_NODES];
    for (int32_t p = 0; p < *n_parts; p++)
        if (cf_isr(c, p, isr) != 3)
            return false;
    return true;
}

static bool is_down(struct cf *c, void *arg)
{
    return cf_down(c, *(const int32_t *)arg);
}

static int64_t acked(const struct cf *c, int32_t client)
{
    struct cf_producer_stats st;
    cf_producer_stats(c, client, &st);
    return st.acked;
}

/* ---- the basic case ---------------------------------------------------------------------- */

TEST(cluster_steady_load_replicates_everything)
{
    for (uint64_t seed = 1; seed <= 3; seed++) {
        struct cf *c = boot(seed, 3, 3, 2, false);
        REQUIRE(c != NULL);
        cf_producer(c, -1, 20, 0);
        cf_producer(c, 1, 30, 0);
        int32_t co = cf_consumer(c);
        cf_run(c, 20000);
        verify(c, "steady");
        CHECK(cf_consumed(c, co) > 1000);
        cf_free(c);
    }
}

/* ---- leader failure (Kafka's replication_test: hard_shutdown) ---------------------------- */

/* Kills the leader of partition 0 — `controller_too` picks a partition whose leader is the
 * active controller — and checks the new leader comes from the ISR and clients go on. */
static void leader_kill(uint64_t seed, bool controller_too)
{
    struct cf *c = boot(seed, 3, 3, 2, false);
    REQUIRE(c != NULL);
    int32_t pa = cf_producer(c, -1, 20, 0);
    cf_producer(c, 1, 40, 0);
    cf_consumer(c);
    cf_run(c, 5000);
    int32_t part = -1;
    for (int32_t p = 0; p < 3 && part < 0; p++)
        if ((cf_leader(c, p) == cf_controller(c)) == controller_too)
            part = p;
    REQUIRE(part >= 0);
    int32_t old = cf_leader(c, part), isr[CF_MAX_NODES];
    int32_t n_isr = cf_isr(c, part, isr);
    cf_kill(c, old, false);
    struct leader_is w = {part, old};
    CHECK(cf_run_until(c, new_leader, &w, 30000));
    bool from_isr = false;
    for (int32_t i = 0; i < n_isr; i++)
        from_isr |= isr[i] == cf_leader(c, part);
    CHECK(from_isr);
    if (controller_too)
        CHECK(cf_controller(c) != old && cf_controller(c) > 0);
    int64_t before = acked(c, pa);
    cf_run(c, 10000);
    CHECK(acked(c, pa) > before + 100); /* the producer goes on */
    cf_restart(c, old);
    verify(c, controller_too ? "kill leader+controller" : "kill leader");
    cf_free(c);
}

TEST(cluster_leader_killed_new_leader_from_isr)
{
    for (uint64_t seed = 1; seed <= 4; seed++)
        leader_kill(seed, false);
}

TEST(cluster_leader_and_controller_killed)
{
    for (uint64_t seed = 1; seed <= 4; seed++)
        leader_kill(seed, true);
}

/* ---- bounces (replication_test: clean_bounce, hard_bounce) ------------------------------- */

static void bounce(uint64_t seed, bool clean)
{
    struct cf *c = boot(seed, 3, 3, 2, false);
    REQUIRE(c != NULL);
    int32_t pa = cf_producer(c, -1, 20, 0);
    cf_consumer(c);
    int32_t n_parts = 3;
    cf_run(c, 3000);
    for (int i = 0; i < 5; i++) {
        int32_t l = cf_leader(c, i % 3);
        REQUIRE(l > 0);
        if (clean) {
            cf_shutdown(c, l);
            CHECK(cf_run_until(c, is_down, &l, 30000));
        } else {
            cf_kill(c, l, false);
            cf_run(c, 1000);
        }
        cf_restart(c, l);
        struct node_in w = {l, n_parts};
        CHECK(cf_run_until(c, back_in_isr, &w, 60000));
        cf_run(c, 2000);
    }
    int64_t before = acked(c, pa);
    cf_run(c, 5000);
    CHECK(acked(c, pa) > before);
    verify(c, clean ? "clean bounce x5" : "hard bounce x5");
    cf_free(c);
}

TEST(cluster_clean_bounce_leader_x5)
{
    for (uint64_t seed = 1; seed <= 3; seed++)
        bounce(seed, true);
}

TEST(cluster_hard_bounce_leader_x5)
{
    for (uint64_t seed = 1; seed <= 3; seed++)
        bounce(seed, false);
}

/* ---- preferred leaders ------------------------------------------------------------------- */

struct leads {
    int32_t part, node;
};

static bool leads_again(struct cf *c, void *arg)
{
    const struct leads *w = arg;
    return cf_leader(c, w->part) == w->node && cf_node_role(c, w->node, w->part) == PSM_LEADER;
}

/* auto.leader.rebalance.enable: a preferred leader that was killed and came back gets its
 * partition back once it is in the ISR and has been unfenced a whole session, under load,
 * without loss. */
TEST(cluster_preferred_leader_comes_back)
{
    for (uint64_t seed = 1; seed <= 3; seed++) {
        struct cf_options o = {
            .seed = seed, .auto_rebalance = true, .rebalance_interval_ms = 10000};
        struct cf *c = boot_opts(&o, 3, 3, 2, false);
        REQUIRE(c != NULL);
        cf_producer(c, -1, 20, 0);
        cf_producer(c, 1, 30, 0);
        cf_consumer(c);
        cf_run(c, 3000);
        int32_t r[CF_MAX_NODES];
        REQUIRE(cf_replicas(c, 0, r) == 3);
        int32_t preferred = r[0];
        REQUIRE(cf_leader(c, 0) == preferred);
        cf_kill(c, preferred, false);
        struct leader_is w = {0, preferred};
        CHECK(cf_run_until(c, new_leader, &w, 30000));
        cf_restart(c, preferred);
        struct leads back = {0, preferred};
        CHECK(cf_run_until(c, leads_again, &back, 120000));
        verify(c, "preferred leader");
        cf_free(c);
    }
}

/* ---- ISR shrink and expand ------------------------------------------------------------- */

static int32_t follower_of(const struct cf *c, int32_t part, int32_t k)
{
    int32_t isr[CF_MAX_NODES], n = cf_isr(c, part, isr), seen = 0;
    for (int32_t i = 0; i < n; i++)
        if (isr[i] != cf_leader(c, part) && seen++ == k)
            return isr[i];
    return -1;
}

struct out_of_isr {
    int32_t part, node;
};

static bool left_isr(struct cf *c, void *arg)
{
    const struct out_of_isr *w = arg;
    return !cf_in_isr(c, w->part, w->node);
}

static bool rejoined_isr(struct cf *c, void *arg)
{
    const struct out_of_isr *w = arg;
    return cf_in_isr(c, w->part, w->node);
}

/* A follower that stops fetching (paused, or cut off from the leader only so that its
 * heartbeats still reach the controller) leaves the ISR after replica.lag.time.max.ms and
 * joins again once it has caught up. */
static void follower_lags(uint64_t seed, bool pause)
{
    struct cf *c = boot(seed, 3, 1, 2, false);
    REQUIRE(c != NULL);
    cf_producer(c, -1, 20, 0);
    cf_consumer(c);
    cf_run(c, 3000);
    int32_t l = cf_leader(c, 0), f = follower_of(c, 0, 0);
    REQUIRE(f > 0);
    /* Cutting a follower off its leader alone keeps its session only when the leader is not
     * the controller: pick the follower that is not the controller and, for a cut, cut the
     * leader–follower link only. */
    if (f == cf_controller(c))
        f = follower_of(c, 0, 1);
    int64_t t0 = cf_now(c);
    if (pause)
        cf_pause(c, f);
    else
        cf_cut2(c, l, f);
    struct out_of_isr w = {0, f};
    CHECK(cf_run_until(c, left_isr, &w, 60000));
    if (!pause && l != cf_controller(c)) {
        /* Still registered and unfenced: it left by lag, not by its session. */
        CHECK(!cf_fenced(c, f));
        CHECK(cf_now(c) - t0 >= 30000 - 1000); /* lag, from its last caught-up fetch */
    }
    CHECK(cf_leader(c, 0) == l);
    cf_run(c, 5000);
    if (pause)
        cf_resume(c, f);
    else
        cf_heal(c);
    CHECK(cf_run_until(c, rejoined_isr, &w, 60000));
    verify(c, pause ? "follower paused" : "follower cut off");
    cf_free(c);
}

TEST(cluster_follower_paused_leaves_isr_and_rejoins)
{
    for (uint64_t seed = 1; seed <= 3; seed++)
        follower_lags(seed, true);
}

TEST(cluster_follower_cut_off_leaves_isr_and_rejoins)
{
    for (uint64_t seed = 1; seed <= 3; seed++)
        follower_lags(seed, false);
}

/* Both followers away with min.insync.replicas=2: acks=all is refused with
 * NOT_ENOUGH_REPLICAS, and nothing acknowledged is lost once they return. Five nodes, so
 * that the metadata quorum lives on while two replicas are stopped. */
TEST(cluster_both_followers_away_not_enough_replicas)
{
    for (uint64_t seed = 1; seed <= 3; seed++) {
        struct cf *c = boot(seed, 5, 1, 2, false);
        REQUIRE(c != NULL);
        int32_t pa = cf_producer(c, -1, 20, 0);
        cf_consumer(c);
        cf_run(c, 3000);
        int32_t l = cf_leader(c, 0), f1 = follower_of(c, 0, 0), f2 = follower_of(c, 0, 1);
        REQUIRE(f1 > 0 && f2 > 0);
        cf_pause(c, f1);
        cf_pause(c, f2);
        struct out_of_isr w1 = {0, f1}, w2 = {0, f2};
        CHECK(cf_run_until(c, left_isr, &w1, 60000));
        CHECK(cf_run_until(c, left_isr, &w2, 60000));
        CHECK(cf_leader(c, 0) == l);
        struct cf_producer_stats st;
        cf_producer_stats(c, pa, &st);
        int64_t ner = st.errors[ERR_NOT_ENOUGH_REPLICAS], acks = cf_acks_by(c, l);
        cf_run(c, 10000);
        cf_producer_stats(c, pa, &st);
        CHECK(st.errors[ERR_NOT_ENOUGH_REPLICAS] > ner);
        CHECK_EQ_INT(cf_acks_by(c, l), acks); /* the lone leader acknowledged nothing */
        cf_resume(c, f1);
        cf_resume(c, f2);
        CHECK(cf_run_until(c, rejoined_isr, &w1, 60000));
        CHECK(cf_run_until(c, rejoined_isr, &w2, 60000));
        verify(c, "both followers away");
        cf_free(c);
    }
}

/* ---- the zombie leader ------------------------------------------------------------------- */

/* The leader of partition 0 is paused (or cut off from the other brokers, its clients still
 * reaching it) while the others elect a new leader. On its return none of its parked or new
 * acks=all writes is acknowledged, its divergent acks=1 tail is truncated, and no consumer
 * saw a record past the HW that was later removed. */
static void zombie(uint64_t seed, bool pause)
{
    struct cf *c = boot(seed, 3, 1, 2, false);
    REQUIRE(c != NULL);
    cf_producer(c, -1, 20, 0);
    int32_t p1 = cf_producer(c, 1, 20, 0);
    cf_consumer(c);
    cf_run(c, 4000);
    int32_t z = cf_leader(c, 0);
    int64_t z_acks = cf_acks_by(c, z), z_one = cf_appends_by(c, z, 1);
    if (pause)
        cf_pause(c, z);
    else
        cf_isolate(c, z, false);
    struct leader_is w = {0, z};
    CHECK(cf_run_until(c, new_leader, &w, 30000));
    /* A paused zombie returns before its clients give up on what they sent it, so that
     * its answers reach them; a partitioned one keeps taking acks=1 writes meanwhile. */
    cf_run(c, pause ? 1000 : 8000);
    if (pause)
        cf_resume(c, z);
    else
        cf_heal(c);
    cf_run(c, 5000);
    CHECK(cf_node_role(c, z, 0) == PSM_FOLLOWER);
    CHECK_EQ_INT(cf_acks_by(c, z), z_acks); /* not one acks=all write acknowledged */
    CHECK(cf_appends_by(c, z, 1) > z_one);  /* it did take acks=1 writes as a zombie */
    verify(c, pause ? "zombie paused" : "zombie partitioned");
    (void)p1;
    cf_free(c);
}

TEST(cluster_zombie_leader_paused)
{
    for (uint64_t seed = 1; seed <= 4; seed++)
        zombie(seed, true);
}

TEST(cluster_zombie_leader_partitioned)
{
    for (uint64_t seed = 1; seed <= 4; seed++)
        zombie(seed, false);
}

/* ---- network partitions ------------------------------------------------------------------ */

static bool healed(struct cf *c, void *arg)
{
    const int32_t *n_parts = arg;
    int32_t isr[CF_MAX_NODES];
    if (cf_controller(c) < 0)
        return false;
    for (int32_t p = 0; p < *n_parts; p++)
        if (cf_leader(c, p) < 0 || cf_isr(c, p, isr) != 3)
            return false;
    return true;
}

/* Cuts `victim` off (side A = {victim}, with producer `pa` on its side) for 20 s: the
 * minority side acknowledges no acks=all write while cut, and everything heals. */
static void cut_off(struct cf *c, int32_t victim, int32_t pa, int32_t n_parts)
{
    bool side[CF_MAX_CLIENTS] = {false};
    side[pa] = true;
    int32_t a[1] = {victim};
    cf_split(c, a, 1, side);
    int64_t acks = cf_acks_by(c, victim);
    cf_run(c, 20000);
    CHECK_EQ_INT(cf_acks_by(c, victim), acks);
    cf_heal(c);
    CHECK(cf_run_until(c, healed, &n_parts, 90000));
    cf_run(c, 2000);
}

/* Isolate one broker, then the controller, then split 1|2 with a producer on each side. */
TEST(cluster_network_partitions)
{
    for (uint64_t seed = 1; seed <= 3; seed++) {
        struct cf *c = boot(seed, 3, 3, 2, false);
        REQUIRE(c != NULL);
        int32_t pa = cf_producer(c, -1, 20, 0); /* on the minority side of each cut */
        int32_t pb = cf_producer(c, -1, 25, 0);
        cf_producer(c, 1, 30, 0);
        cf_consumer(c);
        int32_t n_parts = 3;
        cf_run(c, 3000);
        int32_t ctl = cf_controller(c), other = ctl % 3 + 1;
        cut_off(c, other, pa, n_parts);
        ctl = cf_controller(c);
        cut_off(c, ctl, pa, n_parts);
        CHECK(cf_controller(c) > 0);
        /* 1|2: the node that leads partition 0 alone on one side. */
        cut_off(c, cf_leader(c, 0), pa, n_parts);
        int64_t before = acked(c, pb);
        cf_run(c, 5000);
        CHECK(acked(c, pb) > before);
        verify(c, "partitions");
        cf_free(c);
    }
}

/* One-way cuts: a leader that can send but not receive, and one that can receive but not
 * send, lose their partitions without two leaders acknowledging in one epoch. */
TEST(cluster_one_way_cuts)
{
    for (uint64_t seed = 1; seed <= 3; seed++) {
        struct cf *c = boot(seed, 3, 3, 2, false);
        REQUIRE(c != NULL);
        cf_producer(c, -1, 20, 0);
        cf_producer(c, 1, 30, 0);
        cf_consumer(c);
        int32_t n_parts = 3;
        cf_run(c, 3000);
        for (int dir = 0; dir < 2; dir++) {
            int32_t l = cf_leader(c, 0);
            for (int32_t o = 1; o <= 3; o++)
                if (o != l) {
                    if (dir == 0)
                        cf_cut(c, o, l);
                    else
                        cf_cut(c, l, o);
                }
            cf_run(c, 20000);
            cf_heal(c);
            CHECK(cf_run_until(c, healed, &n_parts, 90000));
        }
        verify(c, "one-way cuts");
        cf_free(c);
    }
}

/* ---- unclean leader election ------------------------------------------------------------- */

struct offline {
    int32_t part;
};

static bool is_offline(struct cf *c, void *arg)
{
    return cf_leader(c, ((const struct offline *)arg)->part) == -1;
}

/* Five nodes, partition 0 on three of them (l, f1, f2): f2 is paused and leaves the ISR
 * (fenced by its session) while the HW moves on with {l, f1}; then f1 dies (losing its
 * unflushed tail when `f1_loses`) and leaves the ISR — below min.insync.replicas, so it
 * joins the ELR — then l, the last member, dies, and f2 comes back. Returns the cluster with
 * f2 behind the old HW and unfenced, f1 and l down, or NULL. */
static struct cf *last_isr_member_dies(uint64_t seed, bool unclean, bool f1_loses, int32_t *l,
                                       int32_t *f1, int32_t *f2, int64_t *old_hw)
{
    struct cf *c = boot(seed, 5, 1, 2, unclean);
    if (c == NULL)
        return NULL;
    cf_producer(c, -1, 20, 0);
    cf_producer(c, 1, 30, 0);
    cf_consumer(c);
    cf_run(c, 3000);
    *l = cf_leader(c, 0);
    *f1 = follower_of(c, 0, 0);
    *f2 = follower_of(c, 0, 1);
    cf_pause(c, *f2);
    struct out_of_isr w2 = {0, *f2}, w1 = {0, *f1};
    if (!cf_run_until(c, left_isr, &w2, 60000))
        goto fail;
    cf_run(c, 5000); /* the HW moves past f2's log end */
    cf_kill(c, *f1, f1_loses);
    if (!cf_run_until(c, left_isr, &w1, 60000))
        goto fail;
    *old_hw = cf_node_hw(c, *l, 0);
    cf_kill(c, *l, false);
    cf_resume(c, *f2);
    return c;
fail:
    cf_free(c);
    return NULL;
}

/* f1 comes back after an unclean shutdown (its machine crashed): it is out of the ELR, so
 * with f2 not eligible either the partition waits for l. */
TEST(cluster_unclean_off_last_isr_member_dead_is_offline)
{
    for (uint64_t seed = 1; seed <= 3; seed++) {
        int32_t l, f1, f2;
        int64_t old_hw;
        struct cf *c = last_isr_member_dies(seed, false, true, &l, &f1, &f2, &old_hw);
        REQUIRE(c != NULL);
        int64_t n_before, n_after;
        cf_log(c, f2, 0, &n_before);
        CHECK(n_before < old_hw); /* f2 lacks committed records */
        struct offline off = {0};
        CHECK(cf_run_until(c, is_offline, &off, 60000));
        cf_restart(c, f1);
        cf_run(c, 30000);
        CHECK_EQ_INT(cf_leader(c, 0), -1); /* offline, not handed to f2 */
        cf_log(c, f2, 0, &n_after);
        CHECK_EQ_INT(n_after, n_before); /* nothing truncated */
        int32_t nt;
        cf_truncations(c, &nt);
        CHECK_EQ_INT(nt, 0);
        cf_restart(c, l);
        struct leader_is w = {0, -1};
        CHECK(cf_run_until(c, new_leader, &w, 60000));
        CHECK_EQ_INT(cf_leader(c, 0), l);
        verify(c, "unclean off");
        cf_free(c);
    }
}

/* f1 comes back with its log intact (its process died, its machine did not): it left the
 * ISR below min.insync.replicas, so it holds every committed record and leads from the ELR
 * — the availability KIP-966 buys — while f2, behind the HW, never leads. */
TEST(cluster_unclean_off_elr_member_leads_when_last_isr_member_dead)
{
    for (uint64_t seed = 1; seed <= 3; seed++) {
        int32_t l, f1, f2;
        int64_t old_hw;
        struct cf *c = last_isr_member_dies(seed, false, false, &l, &f1, &f2, &old_hw);
        REQUIRE(c != NULL);
        struct offline off = {0};
        CHECK(cf_run_until(c, is_offline, &off, 60000));
        cf_run(c, 10000);
        CHECK_EQ_INT(cf_leader(c, 0), -1); /* f2 alone is not eligible */
        cf_restart(c, f1);
        struct leader_is w = {0, -1};
        CHECK(cf_run_until(c, new_leader, &w, 60000));
        CHECK_EQ_INT(cf_leader(c, 0), f1);
        CHECK_EQ_INT(cf_leader_recovery_state(c, 0), PSM_RECOVERED); /* a clean election */
        int32_t nt;
        cf_truncations(c, &nt);
        CHECK_EQ_INT(nt, 0);
        cf_restart(c, l);
        verify(c, "ELR member leads");
        cf_free(c);
    }
}

struct recovering {
    int32_t leader;
    bool seen;
};

static bool led_recovering(struct cf *c, void *arg)
{
    struct recovering *w = arg;
    if (cf_leader(c, 0) == w->leader && cf_leader_recovery_state(c, 0) == PSM_RECOVERING)
        w->seen = true;
    return cf_leader(c, 0) == w->leader;
}

TEST(cluster_unclean_on_recovering_leader_and_reported_truncation)
{
    for (uint64_t seed = 1; seed <= 3; seed++) {
        int32_t l, f1, f2;
        int64_t old_hw;
        struct cf *c = last_isr_member_dies(seed, true, false, &l, &f1, &f2, &old_hw);
        REQUIRE(c != NULL);
        struct recovering w = {f2, false};
        CHECK(cf_run_until(c, led_recovering, &w, 60000));
        CHECK(w.seen); /* elected uncleanly: RECOVERING first */
        int64_t f2_end;
        cf_log(c, f2, 0, &f2_end);
        cf_run(c, 5000);
        CHECK_EQ_INT(cf_leader_recovery_state(c, 0), PSM_RECOVERED);
        cf_restart(c, l);
        cf_restart(c, f1);
        struct node_in back = {l, 1};
        CHECK(cf_run_until(c, back_in_isr, &back, 60000));
        /* The old leader truncated below its old HW, and said so. */
        int32_t nt;
        const struct cf_truncation *t = cf_truncations(c, &nt);
        bool reported = false;
        for (int32_t i = 0; i < nt; i++)
            if (t[i].node == l && t[i].part == 0 && t[i].to < t[i].old_hw && t[i].to <= f2_end &&
                t[i].old_hw >= old_hw)
                reported = true;
        CHECK(reported);
        CHECK(cf_settle(c, SETTLE_MS));
        struct cf_report r;
        cf_check(c, &r);
        cf_report_print(c, &r, "unclean on");
        /* What an unclean election costs, as the WARN line says: acknowledged records lost,
         * and others acknowledged at their offsets since. */
        CHECK(r.lost_acked > 0);
        CHECK_EQ_INT(r.isr_diverged, 0);
        CHECK_EQ_INT(r.two_leaders, 0);
        CHECK_EQ_INT(r.hw_backwards, 0);
        CHECK_EQ_INT(r.unreplicated_commit, 0);
        CHECK_EQ_INT(r.anomalies, 0);
        cf_free(c);
    }
}

struct all_in_isr {
    int32_t a, b;
};

static bool both_in_isr(struct cf *c, void *arg)
{
    const struct all_in_isr *w = arg;
    return cf_in_isr(c, 0, w->a) && cf_in_isr(c, 0, w->b) && cf_leader(c, 0) > 0 &&
           cf_leader_recovery_state(c, 0) == PSM_RECOVERED;
}

/* Issue 16: an unclean election chooses f2, whose log is shorter than the old leader's and
 * f1's, and these two come back knowing no leader epoch of their batches (no checkpoint
 * written before they died). Their fetches name no LastFetchedEpoch, so the leader skips its
 * divergence check and answers OFFSET_OUT_OF_RANGE (the offset is past its log end): each
 * must ask where the leader's log ends and truncate there — with a WARN, below its HW —
 * rather than ask again forever. */
TEST(cluster_unclean_on_longer_follower_without_epochs_truncates_to_the_leader)
{
    for (uint64_t seed = 1; seed <= 3; seed++) {
        struct cf *c = boot(seed, 5, 1, 2, true); /* five voters: the quorum outlives two */
        REQUIRE(c != NULL);
        int32_t prod = cf_producer(c, 1, 20, 0);
        cf_consumer(c);
        cf_run(c, 3000);
        int32_t l = cf_leader(c, 0), f1 = follower_of(c, 0, 0), f2 = follower_of(c, 0, 1);
        REQUIRE(l > 0 && f1 > 0 && f2 > 0);
        cf_pause(c, f2);
        struct out_of_isr w2 = {0, f2}, w1 = {0, f1};
        REQUIRE(cf_run_until(c, left_isr, &w2, 60000));
        cf_run(c, 5000); /* l and f1 move on without f2 */
        cf_kill(c, f1, false);
        REQUIRE(cf_run_until(c, left_isr, &w1, 60000));
        cf_producer_stop(c, prod);
        cf_run(c, 2000);
        int64_t old_hw = cf_node_hw(c, l, 0), f2_end;
        cf_kill(c, l, false);
        cf_log(c, f2, 0, &f2_end);
        REQUIRE(f2_end < old_hw);
        cf_resume(c, f2);
        struct leader_is w = {0, -1};
        REQUIRE(cf_run_until(c, new_leader, &w, 60000));
        CHECK_EQ_INT(cf_leader(c, 0), f2); /* the only replica up: elected uncleanly */
        cf_lose_epoch_caches(c, l);
        cf_lose_epoch_caches(c, f1);
        cf_restart(c, l);
        cf_restart(c, f1);
        struct all_in_isr back = {l, f1};
        CHECK(cf_run_until(c, both_in_isr, &back, 60000));
        int64_t l_end, f1_end;
        cf_log(c, l, 0, &l_end);
        cf_log(c, f1, 0, &f1_end);
        CHECK_EQ_INT(l_end, f1_end);
        int32_t nt;
        const struct cf_truncation *t = cf_truncations(c, &nt);
        bool reported = false;
        for (int32_t i = 0; i < nt; i++)
            /* A producer's retry may have reached f2 since f2_end was read. */
            if (t[i].node == l && t[i].part == 0 && t[i].to >= f2_end && t[i].to < old_hw &&
                t[i].old_hw > t[i].to)
                reported = true;
        CHECK(reported); /* truncated to the leader's end, below its HW, and said so */
        CHECK(l_end < old_hw);
        CHECK(cf_settle(c, SETTLE_MS));
        struct cf_report r;
        cf_check(c, &r);
        cf_report_print(c, &r, "longer follower without epochs");
        CHECK_EQ_INT(r.isr_diverged, 0);
        CHECK_EQ_INT(r.two_leaders, 0);
        CHECK_EQ_INT(r.hw_backwards, 0);
        CHECK_EQ_INT(r.anomalies, 0);
        cf_free(c);
    }
}

/* ---- KIP-966: last replica standing ------------------------------------------------------ */

/* The ISR shrinks to the leader alone (its followers die one after the other: f2, the
 * second, leaves it below min.insync.replicas and joins the ELR); then the leader crashes
 * and loses what it had not flushed. With unclean election off nothing acknowledged by
 * acks=all is lost, and no consumer read what was lost: the HW does not advance while fewer
 * than min.insync.replicas replicas count (partition_sm.h). f2, back with its log intact,
 * leads from the ELR; the lossy leader, back after its unclean shutdown, does not. */
TEST(cluster_last_replica_standing_loses_unflushed_tail)
{
    for (uint64_t seed = 1; seed <= 3; seed++) {
        struct cf *c = boot(seed, 5, 1, 2, false);
        REQUIRE(c != NULL);
        int32_t pa = cf_producer(c, -1, 20, 0);
        cf_producer(c, 1, 20, 0);
        cf_consumer(c);
        cf_run(c, 3000);
        int32_t l = cf_leader(c, 0), f1 = follower_of(c, 0, 0), f2 = follower_of(c, 0, 1);
        cf_kill(c, f1, false);
        struct out_of_isr w1 = {0, f1}, w2 = {0, f2};
        CHECK(cf_run_until(c, left_isr, &w1, 60000));
        cf_run(c, 3000);
        cf_kill(c, f2, false);
        CHECK(cf_run_until(c, left_isr, &w2, 60000));
        cf_run(c, 2000);
        /* From here the lone leader's writes stay in its page cache. */
        cf_freeze_flush(c, l, true);
        int64_t hw = cf_node_hw(c, l, 0), end0, end1;
        cf_log(c, l, 0, &end0);
        cf_run(c, 5000);
        cf_log(c, l, 0, &end1);
        CHECK(end1 > end0);                    /* acks=1 writes it took alone */
        CHECK_EQ_INT(cf_node_hw(c, l, 0), hw); /* ... and did not commit */
        struct cf_producer_stats st;
        cf_producer_stats(c, pa, &st);
        CHECK(st.errors[ERR_NOT_ENOUGH_REPLICAS] > 0);
        cf_kill(c, l, true);
        cf_log(c, l, 0, &end1);
        CHECK(end1 <= end0);
        cf_restart(c, f1);
        cf_run(c, 15000);
        CHECK_EQ_INT(cf_leader(c, 0), -1); /* unclean off: f1 is not eligible */
        cf_restart(c, l);
        cf_run(c, 15000);
        CHECK_EQ_INT(cf_leader(c, 0), -1); /* l lost its tail: not while f2 is eligible */
        cf_restart(c, f2);
        struct leader_is w = {0, -1};
        CHECK(cf_run_until(c, new_leader, &w, 60000));
        CHECK_EQ_INT(cf_leader(c, 0), f2);
        cf_freeze_flush(c, l, false);
        verify(c, "last replica standing");
        cf_free(c);
    }
}

/* ---- KIP-966: an intact replica fenced out before a lossy one ---------------------------- */

/* The failure class the random searches found (three nodes, seed 73 the smallest; 199; five
 * nodes, seed 90), spelled out. Partition 0 on brokers 1 (leader), 2 and 3 of five (the
 * controller on 5, so that the quorum outlives them), min.insync.replicas 2. Broker 3 is
 * paused and leaves the ISR ({1, 2}, still at the minimum: 3 is not eligible). Broker 2
 * stops flushing, so acknowledged records sit in its page cache, then crashes with its
 * machine (losing them); broker 1 is killed right after, its page cache kept. Both come
 * back before their sessions expire, 1 first: its registration fences its old incarnation
 * out of the ISR, which leaves {2} — below the minimum, so 1 joins the ELR, holding every
 * acknowledged record. 1 then stays fenced for a while (it hears nothing from the
 * controller, so it cannot catch up), and 2 registers after its unclean shutdown and is
 * unfenced first. Without the ELR, "an ISR never becomes empty" kept 2, the lossy one, and
 * elected it: 1 truncated the acknowledged records away. Now the ISR empties, the partition
 * waits for 1, and 1 leads from the ELR. */
TEST(cluster_intact_replica_fenced_out_first_is_elected_not_the_lossy_one)
{
    for (uint64_t seed = 1; seed <= 3; seed++) {
        struct cf_options o = {.n_nodes = 5, .seed = seed, .first_controller = 5};
        struct cf *c = cf_new(&o);
        REQUIRE(c != NULL);
        const int32_t assign[3] = {1, 2, 3};
        REQUIRE(cf_start_assigned(c, 1, 3, assign, 2, false, 60000));
        REQUIRE(cf_controller(c) == 5);
        cf_producer(c, -1, 20, 0);
        cf_producer(c, 1, 30, 0);
        cf_consumer(c);
        cf_run(c, 3000);
        REQUIRE(cf_leader(c, 0) == 1);
        cf_pause(c, 3);
        struct out_of_isr w3 = {0, 3}, w1 = {0, 1};
        CHECK(cf_run_until(c, left_isr, &w3, 60000));
        CHECK(cf_in_isr(c, 0, 1) && cf_in_isr(c, 0, 2));
        cf_freeze_flush(c, 2, true);
        cf_run(c, 3000);
        int64_t hw = cf_node_hw(c, 1, 0), end2;
        cf_kill(c, 2, true);
        cf_kill(c, 1, false);
        cf_log(c, 2, 0, &end2);
        CHECK(end2 < hw); /* 2 lost records that were acknowledged */
        cf_restart(c, 1);
        /* 1's registration applies (it leaves the ISR in that batch); what the controller
         * sends it from then on is lost, so it stays fenced. */
        CHECK(cf_run_until(c, left_isr, &w1, 10000));
        cf_cut(c, 5, 1);
        CHECK(cf_fenced(c, 1));
        cf_restart(c, 2);
        cf_freeze_flush(c, 2, false);
        cf_run(c, 5000);
        CHECK(!cf_fenced(c, 2));
        CHECK_EQ_INT(cf_leader(c, 0), -1); /* waiting for 1, not led by the lossy 2 */
        int32_t isr[CF_MAX_NODES];
        CHECK_EQ_INT(cf_isr(c, 0, isr), 0);
        cf_heal(c);
        struct leader_is w = {0, -1};
        CHECK(cf_run_until(c, new_leader, &w, 30000));
        CHECK_EQ_INT(cf_leader(c, 0), 1); /* from the ELR */
        int32_t nt;
        cf_truncations(c, &nt);
        CHECK_EQ_INT(nt, 0);
        cf_resume(c, 3);
        verify(c, "intact replica fenced out first");
        cf_free(c);
    }
}

/* ---- controlled shutdown ----------------------------------------------------------------- */

/* Each node in turn is shut down (WantShutDown, leaderships moved first) under load and
 * restarted: the producers see no error but the retriable NOT_LEADER_OR_FOLLOWER. */
TEST(cluster_controlled_shutdown_each_node)
{
    for (uint64_t seed = 1; seed <= 3; seed++) {
        struct cf *c = boot(seed, 3, 3, 2, false);
        REQUIRE(c != NULL);
        int32_t pa = cf_producer(c, -1, 20, 0), pb = cf_producer(c, 1, 30, 0);
        cf_consumer(c);
        int32_t n_parts = 3;
        cf_run(c, 3000);
        for (int32_t n = 1; n <= 3; n++) {
            CHECK(cf_run_until(c, healed, &n_parts, 60000));
            cf_shutdown(c, n);
            CHECK(cf_run_until(c, is_down, &n, 30000));
            cf_run(c, 2000);
            cf_restart(c, n);
        }
        CHECK(cf_run_until(c, healed, &n_parts, 60000));
        verify(c, "controlled shutdown");
        for (int k = 0; k < 2; k++) {
            struct cf_producer_stats st;
            cf_producer_stats(c, k == 0 ? pa : pb, &st);
            for (int e = 1; e < 128; e++)
                if (e != ERR_NOT_LEADER_OR_FOLLOWER && st.errors[e] != 0) {
                    printf("    producer %d got %lld x %s\n", k, (long long)st.errors[e],
                           err_name(e));
                    CHECK(st.errors[e] == 0);
                }
            CHECK_EQ_INT(st.failed, 0);
            CHECK_EQ_INT(st.timeouts, 0);
            printf("    producer %d: %lld acked, %lld NOT_LEADER_OR_FOLLOWER retried, %lld refused "
                   "connections\n",
                   k, (long long)st.acked, (long long)st.errors[ERR_NOT_LEADER_OR_FOLLOWER],
                   (long long)st.refused);
        }
        cf_free(c);
    }
}

/* ---- a diverged follower's position ------------------------------------------------------- */

struct follows {
    int32_t node, epoch;
};

static bool follows_epoch(struct cf *c, void *arg)
{
    const struct follows *w = arg;
    return cf_node_role(c, w->node, 0) == PSM_FOLLOWER &&
           cf_node_leader_epoch(c, w->node, 0) == w->epoch;
}

/* Partition 0 on brokers 1 (leader), 2 and 3 of five, the controller on 5. Broker 2 stops
 * receiving from its leader, so 3 runs ahead of it with acks=1 records of epoch 0; 3 stops
 * hearing the controller (its heartbeats still arrive); 1 dies. 2 is elected (first in
 * replica order) and takes new writes at epoch 1 from its shorter log end; then 3 learns
 * of it and fetches at its longer log end with LastFetchedEpoch 0. That fetch must answer
 * DivergingEpoch without counting 3's position: counted first, it would carry the HW over
 * 2's epoch-1 records, which 3 holds differently. */
TEST(cluster_diverged_follower_position_not_counted)
{
    for (uint64_t seed = 1; seed <= 4; seed++) {
        struct cf_options o = {.n_nodes = 5, .seed = seed, .first_controller = 5};
        struct cf *c = cf_new(&o);
        REQUIRE(c != NULL);
        const int32_t assign[3] = {1, 2, 3};
        REQUIRE(cf_start_assigned(c, 1, 3, assign, 2, false, 60000));
        REQUIRE(cf_controller(c) == 5);
        cf_producer(c, -1, 20, 0);
        cf_producer(c, 1, 5, 0);
        cf_consumer(c);
        cf_run(c, 3000);
        cf_cut(c, 1, 2);
        cf_run(c, 2000);
        int64_t end2, end3;
        cf_log(c, 2, 0, &end2);
        cf_log(c, 3, 0, &end3);
        CHECK(end3 > end2 + 50); /* 3 holds epoch-0 records 2 lacks */
        cf_cut(c, 5, 3);
        cf_kill(c, 1, false);
        struct leader_is w = {0, 1};
        CHECK(cf_run_until(c, new_leader, &w, 30000));
        CHECK_EQ_INT(cf_leader(c, 0), 2);
        cf_run(c, 3000);
        int64_t end2b;
        cf_log(c, 2, 0, &end2b);
        CHECK(end2b > end3); /* 2's epoch-1 records cover 3's divergent ones */
        CHECK(cf_node_leader_epoch(c, 3, 0) == 0);
        cf_heal(c);
        struct follows f = {3, cf_leader_epoch(c, 0)};
        CHECK(cf_run_until(c, follows_epoch, &f, 10000));
        cf_run(c, 3000);
        cf_restart(c, 1);
        verify(c, "diverged follower");
        cf_free(c);
    }
}

/* ---- a restarted leader that lost its tail --------------------------------------------------- */

struct stale_lead {
    int32_t node, epoch;
    bool seen;
};

static bool leads_stale_epoch(struct cf *c, void *arg)
{
    struct stale_lead *w = arg;
    if (cf_node_role(c, w->node, 0) == PSM_LEADER &&
        cf_node_leader_epoch(c, w->node, 0) == w->epoch)
        w->seen = true;
    return false;
}

/* The leader crashes, losing two seconds of writes it had not flushed, and restarts before
 * its session expires, so that its replayed image still names it leader at its old epoch.
 * It must not act on that image before it has applied its own registration (which fences
 * the old incarnation and moves its leaderships): leading the old epoch again, it would
 * write other records at offsets its followers hold from that same epoch. Slow commits
 * widen the window. */
TEST(cluster_restarted_leader_does_not_lead_its_lost_epoch)
{
    for (uint64_t seed = 1; seed <= 4; seed++) {
        struct cf_options o = {
            .seed = seed, .commit_min_ms = 50, .commit_max_ms = 100, .first_controller = 3};
        struct cf *c = cf_new(&o);
        REQUIRE(c != NULL);
        const int32_t assign[3] = {1, 2, 3};
        REQUIRE(cf_start_assigned(c, 1, 3, assign, 2, false, 60000));
        REQUIRE(cf_controller(c) == 3);
        cf_producer(c, -1, 20, 0);
        cf_producer(c, 1, 5, 0);
        cf_consumer(c);
        cf_run(c, 3000);
        int32_t l = cf_leader(c, 0);
        struct stale_lead w = {l, cf_leader_epoch(c, 0), false};
        cf_freeze_flush(c, l, true);
        cf_run(c, 2000);
        cf_kill(c, l, true);
        cf_freeze_flush(c, l, false);
        cf_run(c, 500);
        cf_restart(c, l);
        /* Another batch commits before its registration does: the restarted broker is then
         * caught up with the committed log while its registration is still in flight. */
        CHECK(cf_set_topic_config(c, "retention.ms", "604800000"));
        cf_run_until(c, leads_stale_epoch, &w, 10000);
        CHECK(!w.seen);
        verify(c, "restarted leader lost its tail");
        cf_free(c);
    }
}

/* ---- two decisions on one partition epoch -------------------------------------------------- */

struct alter_of {
    int32_t node;
};

static bool alter_in_flight(struct cf *c, void *arg)
{
    return cf_alter_pending(c, ((const struct alter_of *)arg)->node, 0);
}

/* Partition 0 on brokers 1 (leader), 2 and 3 of five, the controller on 5, commits slow.
 * Broker 2 is cut off its leader; after replica.lag.time.max.ms the leader asks to shrink
 * the ISR to {1, 3}. While that AlterPartition waits for its commit, broker 3 restarts and
 * registers again, and the controller decides, on the same partition epoch, to fence its old
 * incarnation out of the ISR: {1, 2}. Only one of the two may apply (the partition epoch's
 * compare-and-set); both applying would leave the metadata naming the lagging broker 2 in
 * the ISR while the leader commits with broker 3 — and 2 elected when the leader dies. */
TEST(cluster_isr_change_and_fencing_on_one_partition_epoch)
{
    for (uint64_t seed = 1; seed <= 3; seed++) {
        struct cf_options o = {
            .n_nodes = 5,
            .seed = seed,
            .commit_min_ms = 500,
            .commit_max_ms = 1000,
            .first_controller = 5,
        };
        struct cf *c = cf_new(&o);
        REQUIRE(c != NULL);
        const int32_t assign[3] = {1, 2, 3};
        REQUIRE(cf_start_assigned(c, 1, 3, assign, 2, false, 60000));
        REQUIRE(cf_controller(c) == 5);
        cf_producer(c, -1, 20, 0);
        cf_consumer(c);
        cf_run(c, 3000);
        cf_cut2(c, 1, 2);
        struct alter_of w = {1};
        CHECK(cf_run_until(c, alter_in_flight, &w, 60000));
        cf_kill(c, 3, false);
        cf_restart(c, 3);
        cf_run(c, 5000);
        CHECK(!cf_in_isr(c, 0, 2)); /* the lagging broker is out, whichever applied */
        cf_run(c, 10000);
        cf_kill(c, 1, false);
        cf_run(c, 20000);
        cf_heal(c);
        cf_restart(c, 1);
        verify(c, "ISR change and fencing race");
        cf_free(c);
    }
}

/* ---- random faults ------------------------------------------------------------------------ */

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Twelve random faults in a row — kill (with or without the unflushed tail), restart,
 * pause, resume, isolate, one-way cut, heal — on a network that drops 1% of the messages,
 * with delays up to 30 ms, reordered on odd seeds; then everything heals and every checker
 * must pass. Longer searches (CF_SEEDS=600) found one failure class that the ELR closed
 * (seeds 73 and 199 of three nodes, 90 of five: the regression test above). What they find
 * since is beyond min.insync.replicas - 1 = 1 lossy crash, the tolerance KIP-966 gives:
 * two or more ISR members crash with their machines and lose acknowledged records from
 * their page caches (three nodes: seeds 227, 460, 565; five: 164, 232); no replica holds
 * them, and the last one back is elected as before. KIP-966's unclean recovery (asking
 * the replicas for their log ends) would pick the longest; Tally does not have it.
 * CF_NOLOSS=1 keeps every page cache: no failure then. */
static void random_faults(uint64_t seed, int32_t nodes)
{
    struct cf_options o = {
        .n_nodes = nodes,
        .seed = seed,
        .drop = 0.01,
        .reorder = seed % 2 == 1,
        .delay_min_ms = 1,
        .delay_max_ms = 30,
    };
    /* CF_WILD=1: more of the knobs vary with the seed (for long searches, not the suite). */
    if (getenv("CF_WILD")) {
        o.drop = (double)(seed % 5) * 0.02;
        o.auto_rebalance = seed % 3 == 0;
        o.rebalance_interval_ms = 20000;
        o.lag_ms = seed % 4 == 0 ? 3000 : 30000;
        o.commit_max_ms = seed % 7 == 0 ? 800 : 10;
        o.delay_max_ms = seed % 2 ? 30 : 200;
    }
    struct cf *c = boot_opts(&o, 3, 3, 2, false);
    REQUIRE(c != NULL);
    cf_producer(c, -1, 20, 0);
    cf_producer(c, 1, 25, 0);
    cf_consumer(c);
    uint64_t s = seed * 7919;
    cf_run(c, 3000);
    for (int step = 0; step < 12; step++) {
        int32_t n = (int32_t)(splitmix(&s) % (uint64_t)nodes) + 1;
        int32_t m = (int32_t)(splitmix(&s) % (uint64_t)nodes) + 1;
        switch (splitmix(&s) % 8) {
        case 0:
            cf_kill(c, n, false);
            break;
        case 1:
            cf_kill(c, n, getenv("CF_NOLOSS") == NULL);
            break;
        case 2:
        case 3:
            for (int32_t k = 1; k <= nodes; k++)
                cf_restart(c, k);
            break;
        case 4:
            cf_pause(c, n);
            break;
        case 5:
            for (int32_t k = 1; k <= nodes; k++)
                cf_resume(c, k);
            break;
        case 6:
            if (n != m)
                cf_cut(c, n, m);
            else
                cf_isolate(c, n, splitmix(&s) % 2 == 0);
            break;
        case 7:
            cf_heal(c);
            break;
        }
        cf_run(c, 2000 + (int64_t)(splitmix(&s) % 8000));
    }
    for (int32_t k = 1; k <= nodes; k++)
        cf_restart(c, k);
    cf_set_drop(c, 0);
    char label[64];
    snprintf(label, sizeof label, "random faults, %d nodes, seed %llu", nodes,
             (unsigned long long)seed);
    verify(c, label);
    cf_free(c);
}

/* CF_SEED=n runs that seed alone (to trace it with CF_TRACE=1); CF_SEEDS=n runs n seeds. */
static void random_seeds(uint64_t n, int32_t nodes)
{
    const char *one = getenv("CF_SEED"), *many = getenv("CF_SEEDS");
    if (one) {
        random_faults(strtoull(one, NULL, 10), nodes);
        return;
    }
    if (many)
        n = strtoull(many, NULL, 10);
    for (uint64_t seed = 1; seed <= n; seed++)
        random_faults(seed, nodes);
}

TEST(cluster_random_faults_three_nodes)
{
    random_seeds(5, 3);
}

TEST(cluster_random_faults_five_nodes)
{
    random_seeds(4, 5);
}

/* The seeds of the random searches that lost acknowledged records before the ELR (see
 * cluster_intact_replica_fenced_out_first_is_elected_not_the_lossy_one), kept. */
TEST(cluster_random_faults_seeds_that_lost_acknowledged_records)
{
    random_faults(73, 3);
    random_faults(199, 3);
    random_faults(90, 5);
}

/* ---- reassignment (KIP-455) -------------------------------------------------------------- */

struct target_is {
    int32_t part, n;
    const int32_t *target;
    const int32_t *gone; /* replicas that must have let go of the partition */
    int32_t n_gone;
};

/* The partition's replicas are the target, nothing is adding or removing, its leader (a
 * target replica) leads at the committed epoch, and the replicas that left hold it no more. */
static bool reassigned(struct cf *c, void *arg)
{
    const struct target_is *w = arg;
    int32_t reps[CF_MAX_NODES], tmp[CF_MAX_NODES];
    int32_t n = cf_replicas(c, w->part, reps), l = cf_leader(c, w->part);
    if (n != w->n || cf_adding(c, w->part, tmp) != 0 || cf_removing(c, w->part, tmp) != 0)
        return false;
    for (int32_t i = 0; i < n; i++)
        if (reps[i] != w->target[i])
            return false;
    if (l < 1 || cf_node_role(c, l, w->part) != PSM_LEADER ||
        cf_node_leader_epoch(c, l, w->part) != cf_leader_epoch(c, w->part))
        return false;
    for (int32_t i = 0; i < w->n_gone; i++)
        if (cf_up(c, w->gone[i]) && cf_node_role(c, w->gone[i], w->part) != PSM_NONE)
            return false;
    return true;
}

/* The replicas begin with the target: the reassignment started (or is done). */
static bool started(struct cf *c, void *arg)
{
    const struct target_is *w = arg;
    int32_t reps[CF_MAX_NODES];
    int32_t n = cf_replicas(c, w->part, reps);
    if (n < w->n)
        return false;
    for (int32_t i = 0; i < w->n; i++)
        if (reps[i] != w->target[i])
            return false;
    return true;
}

/* Asks for the target until the image shows it: a proposal that lost the compare-and-set to
 * a concurrent ISR change is decided again (as an operator's tool would retry). */
static bool start_reassign(struct cf *c, struct target_is *w)
{
    for (int i = 0; i < 20; i++) {
        int rv = cf_reassign(c, w->part, w->target, w->n);
        if (rv != 0)
            return false;
        if (cf_run_until(c, started, w, 500))
            return true;
    }
    return false;
}

static bool cancelled(struct cf *c, void *arg)
{
    const struct target_is *w = arg; /* target: the original replicas, in any order */
    int32_t reps[CF_MAX_NODES], tmp[CF_MAX_NODES];
    int32_t n = cf_replicas(c, w->part, reps);
    if (n != w->n || cf_adding(c, w->part, tmp) != 0 || cf_removing(c, w->part, tmp) != 0)
        return false;
    for (int32_t i = 0; i < w->n; i++) {
        bool found = false;
        for (int32_t k = 0; k < n; k++)
            found = found || reps[k] == w->target[i];
        if (!found)
            return false;
    }
    return true;
}

/* 1,2,3 -> 2,3,4 under acks=all load: 4 catches up and joins the ISR, and only then does 1
 * leave (checker 8); 1 led, so leadership moves to a target replica at a new epoch; nothing
 * acknowledged is lost and the producer goes on. */
TEST(cluster_reassignment_under_load_moves_replicas_then_leadership)
{
    static const int32_t assignment[] = {1, 2, 3, 2, 3, 4}, target[] = {2, 3, 4}, gone[] = {1};
    for (uint64_t seed = 1; seed <= 3; seed++) {
        struct cf_options o = {.n_nodes = 4, .seed = seed, .first_controller = 3};
        struct cf *c = cf_new(&o);
        REQUIRE(c != NULL);
        REQUIRE(cf_start_assigned(c, 2, 3, assignment, 2, false, 60000));
        int32_t pa = cf_producer(c, -1, 10, 0);
        int32_t co = cf_consumer(c);
        cf_run(c, 5000);
        REQUIRE(cf_leader(c, 0) == 1);
        int32_t epoch = cf_leader_epoch(c, 0);
        struct target_is w = {0, 3, target, gone, 1};
        REQUIRE(start_reassign(c, &w));
        int32_t tmp[CF_MAX_NODES];
        /* Started, not done: 4 has a whole log to fetch. */
        CHECK(cf_adding(c, 0, tmp) == 1 && tmp[0] == 4);
        CHECK(cf_removing(c, 0, tmp) == 1 && tmp[0] == 1);
        CHECK(cf_run_until(c, reassigned, &w, 60000));
        CHECK(cf_in_isr(c, 0, 4));
        CHECK(cf_leader(c, 0) != 1);
        CHECK(cf_leader_epoch(c, 0) > epoch);
        int64_t before = acked(c, pa);
        cf_run(c, 5000);
        CHECK(acked(c, pa) > before + 100);
        verify(c, "reassign 1,2,3 -> 2,3,4");
        CHECK(cf_consumed(c, co) > 500);
        cf_free(c);
    }
}

/* A new replica that cannot catch up (paused): the reassignment stays in progress, the
 * cancellation takes it out again and the partition is back on 1, 2, 3, led as before. */
TEST(cluster_reassignment_cancelled_reverts)
{
    static const int32_t assignment[] = {1, 2, 3}, target[] = {2, 3, 4}, original[] = {1, 2, 3},
                         gone[] = {4};
    for (uint64_t seed = 1; seed <= 3; seed++) {
        struct cf_options o = {.n_nodes = 4, .seed = seed};
        struct cf *c = cf_new(&o);
        REQUIRE(c != NULL);
        REQUIRE(cf_start_assigned(c, 1, 3, assignment, 2, false, 60000));
        cf_producer(c, -1, 10, 0);
        cf_consumer(c);
        cf_run(c, 3000);
        cf_pause(c, 4);
        struct target_is w = {0, 3, target, NULL, 0};
        REQUIRE(start_reassign(c, &w));
        cf_run(c, 5000);
        int32_t tmp[CF_MAX_NODES];
        CHECK(cf_adding(c, 0, tmp) == 1); /* still in progress */
        CHECK(!cf_in_isr(c, 0, 4));
        int32_t leader = cf_leader(c, 0);
        CHECK_EQ_INT(cf_reassign(c, 0, NULL, -1), 0);
        struct target_is back = {0, 3, original, NULL, 0};
        CHECK(cf_run_until(c, cancelled, &back, 10000));
        CHECK_EQ_INT(cf_leader(c, 0), leader);
        CHECK_EQ_INT(cf_reassign(c, 0, NULL, -1), ERR_NO_REASSIGNMENT_IN_PROGRESS);
        cf_resume(c, 4);
        cf_run(c, 3000);
        CHECK_EQ_INT(cf_node_role(c, 4, 0), PSM_NONE);
        verify(c, "reassign cancelled");
        (void)gone;
        cf_free(c);
    }
}

/* A second target while the first is in progress replaces it (Kafka's rule): 4, paused,
 * never catches up; 2,3,5 is where the partition ends, 1 and 4 both let go of it. */
TEST(cluster_reassignment_second_target_replaces_the_first)
{
    static const int32_t assignment[] = {1, 2, 3}, first_target[] = {2, 3, 4}, second[] = {2, 3, 5},
                         gone[] = {1, 4};
    for (uint64_t seed = 1; seed <= 3; seed++) {
        struct cf_options o = {.n_nodes = 5, .seed = seed};
        struct cf *c = cf_new(&o);
        REQUIRE(c != NULL);
        REQUIRE(cf_start_assigned(c, 1, 3, assignment, 2, false, 60000));
        cf_producer(c, -1, 10, 0);
        cf_consumer(c);
        cf_run(c, 3000);
        cf_pause(c, 4);
        struct target_is w1 = {0, 3, first_target, NULL, 0};
        REQUIRE(start_reassign(c, &w1));
        cf_run(c, 2000);
        struct target_is w2 = {0, 3, second, gone, 2};
        REQUIRE(start_reassign(c, &w2));
        int32_t tmp[CF_MAX_NODES];
        if (!reassigned(c, &w2))
            CHECK(cf_removing(c, 0, tmp) == 2 && tmp[0] == 1 && tmp[1] == 4);
        cf_resume(c, 4);
        CHECK(cf_run_until(c, reassigned, &w2, 60000));
        verify(c, "reassign replaced");
        cf_free(c);
    }
}
