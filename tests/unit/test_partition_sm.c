/* SPDX-License-Identifier: Apache-2.0 */
/* partition_sm unit tests: one partition's ISR replication on plain now_ms values, with a fake
 * epoch cache and a fake eligibility table. No log, no sockets, no clock. */
#include "harness.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/err.h"
#include "replica/partition_sm.h"

/* ---- the fake outside ------------------------------------------------------------------ */

/* A leader-epoch cache: epochs[i] starts at starts[i]; the last one ends at log_end. */
struct fake {
    int n;
    int32_t epochs[8];
    int64_t starts[8];
    int64_t log_end;
    bool ineligible[16];
};

static void fake_epoch_end(void *arg, int32_t epoch, int32_t *out_epoch, int64_t *out_end)
{
    const struct fake *fk = arg;
    *out_epoch = -1;
    *out_end = -1;
    for (int i = fk->n - 1; i >= 0; i--) {
        if (fk->epochs[i] <= epoch) {
            *out_epoch = fk->epochs[i];
            *out_end = i + 1 < fk->n ? fk->starts[i + 1] : fk->log_end;
            return;
        }
    }
}

static bool fake_eligible(void *arg, int32_t broker)
{
    const struct fake *fk = arg;
    return broker < 0 || broker >= 16 || !fk->ineligible[broker];
}

static void fake_epoch(struct fake *fk, int32_t epoch, int64_t start)
{
    fk->epochs[fk->n] = epoch;
    fk->starts[fk->n] = start;
    fk->n++;
}

static const struct psm_config cfg = {
    .replica_lag_time_max_ms = 30000,
    .alter_retry_ms = 2000,
    .min_insync = 1,
};

/* A partition on broker `node` with HW `hw` and the log [0, log_end). */
static struct partition_sm *mk(struct fake *fk, int32_t node, int32_t min_insync, int64_t hw,
                               int64_t log_end)
{
    memset(fk, 0, sizeof *fk);
    fk->log_end = log_end;
    struct psm_config c = cfg;
    c.min_insync = min_insync;
    struct psm_ops ops = {
        .epoch_end = fake_epoch_end, .replica_eligible = fake_eligible, .arg = fk};
    struct partition_sm *sm = psm_new(node, &c, &ops, hw);
    if (sm)
        psm_set_log(sm, 0, log_end);
    return sm;
}

/* "1,2,3" -> {1, 2, 3}; returns the count. */
static int32_t ids(const char *s, int32_t *out)
{
    int32_t n = 0;
    while (s && *s) {
        char *end;
        out[n++] = (int32_t)strtol(s, &end, 10);
        s = *end == ',' ? end + 1 : end;
    }
    return n;
}

static void assign_lrs(struct partition_sm *sm, int32_t leader, int32_t le, int32_t pe,
                       const char *replicas, const char *isr, int8_t lrs, int64_t now,
                       struct psm_effects *fx)
{
    int32_t r[16], i[16];
    struct psm_assignment a = {
        .leader = leader,
        .leader_epoch = le,
        .partition_epoch = pe,
        .replicas = r,
        .isr = i,
        .leader_recovery_state = lrs,
    };
    a.n_replicas = ids(replicas, r);
    a.n_isr = ids(isr, i);
    psm_apply(sm, &a, now, fx);
}

static void assign(struct partition_sm *sm, int32_t leader, int32_t le, int32_t pe,
                   const char *replicas, const char *isr, int64_t now, struct psm_effects *fx)
{
    assign_lrs(sm, leader, le, pe, replicas, isr, PSM_RECOVERED, now, fx);
}

/* The controller's answer: err 0 with ISR `isr` at partition epoch `pe` (no replica set, as
 * AlterPartition answers), or an error. */
static void answer(struct partition_sm *sm, int16_t err, int32_t pe, const char *isr, int64_t now,
                   struct psm_effects *fx)
{
    int32_t i[16];
    struct psm_assignment a = {
        .leader = psm_leader(sm),
        .leader_epoch = psm_leader_epoch(sm),
        .partition_epoch = pe,
        .isr = i,
        .leader_recovery_state = PSM_RECOVERED,
    };
    a.n_isr = ids(isr, i);
    psm_alter_answered(sm, err, err == 0 ? &a : NULL, now, fx);
}

static int fetch(struct partition_sm *sm, int32_t replica, int32_t cle, int64_t offset, int32_t lfe,
                 int64_t now, struct psm_fetch_verdict *v, struct psm_effects *fx)
{
    struct psm_fetch f = {
        .replica_id = replica,
        .current_leader_epoch = cle,
        .fetch_offset = offset,
        .last_fetched_epoch = lfe,
    };
    return psm_follower_fetch(sm, &f, now, v, fx);
}

/* A plain fetch at the current leader epoch, no LastFetchedEpoch. */
static int fetch_at(struct partition_sm *sm, int32_t replica, int64_t offset, int64_t now,
                    struct psm_effects *fx)
{
    struct psm_fetch_verdict v;
    return fetch(sm, replica, psm_leader_epoch(sm), offset, -1, now, &v, fx);
}

static void append(struct partition_sm *sm, struct fake *fk, int64_t end, int64_t now,
                   struct psm_effects *fx)
{
    fk->log_end = end;
    psm_appended(sm, end, now, fx);
}

static bool same_ids(const int32_t *v, int32_t n, const char *want)
{
    int32_t w[16];
    int32_t nw = ids(want, w);
    if (n != nw)
        return false;
    for (int32_t i = 0; i < n; i++) {
        bool found = false;
        for (int32_t j = 0; j < nw; j++)
            found = found || v[i] == w[j];
        if (!found)
            return false;
    }
    return true;
}

static bool alter_isr_is(const struct partition_sm *sm, const char *want)
{
    struct psm_alter_request r;
    psm_alter_request(sm, &r);
    return same_ids(r.isr, r.n_isr, want);
}

static bool fx_empty(const struct psm_effects *fx)
{
    return !fx->fail_waiters && !fx->role_changed && !fx->truncate && !fx->hw_changed &&
           !fx->fetch_changed && !fx->send_alter && !fx->isr_shrink_requested &&
           !fx->isr_expand_requested;
}

/* Broker 1 leads replicas 1,2,3 (ISR 1,2,3) at leader epoch 5, partition epoch 10, from t=0,
 * with the log [0, 10), HW 10. */
static struct partition_sm *leader3(struct fake *fk, int32_t min_insync)
{
    struct psm_effects fx;
    struct partition_sm *sm = mk(fk, 1, min_insync, 10, 10);
    if (sm)
        assign(sm, 1, 5, 10, "1,2,3", "1,2,3", 0, &fx);
    return sm;
}

/* ---- the leader's high watermark ------------------------------------------------------- */

TEST(partition_sm_hw_on_one_replica_follows_the_log_end)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = mk(&fk, 1, 1, 0, 0);
    REQUIRE(sm);
    assign(sm, 1, 0, 0, "1", "1", 0, &fx);
    CHECK_EQ_INT(psm_role(sm), PSM_LEADER);
    append(sm, &fk, 5, 1, &fx);
    CHECK(fx.hw_changed);
    CHECK_EQ_INT(psm_high_watermark(sm), 5);
    append(sm, &fk, 9, 2, &fx);
    CHECK_EQ_INT(psm_high_watermark(sm), 9);
    append(sm, &fk, 9, 3, &fx);
    CHECK(!fx.hw_changed);
    psm_free(sm);
}

/* psm_took_over_ms: the time of the apply that made this broker leader after another one,
 * and only that (produce.c answers a fresh sequence gap NOT_LEADER_OR_FOLLOWER meanwhile). */
TEST(partition_sm_took_over_only_when_the_leader_before_was_another_broker)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = mk(&fk, 1, 1, 0, 0);
    REQUIRE(sm);
    /* The first leader (at creation, or after a restart): no one to take over from. */
    assign(sm, 1, 0, 0, "1,2", "1,2", 100, &fx);
    CHECK_EQ_INT(psm_role(sm), PSM_LEADER);
    CHECK_EQ_INT(psm_took_over_ms(sm), -1);
    /* Broker 2 leads; then 1 again, from 2. */
    assign(sm, 2, 1, 1, "1,2", "1,2", 200, &fx);
    CHECK_EQ_INT(psm_took_over_ms(sm), -1);
    assign(sm, 1, 2, 2, "1,2", "1,2", 300, &fx);
    CHECK_EQ_INT(psm_took_over_ms(sm), 300);
    /* An ISR change within the epoch changes nothing. */
    assign(sm, 1, 2, 3, "1,2", "1", 400, &fx);
    CHECK_EQ_INT(psm_took_over_ms(sm), 300);
    /* A new epoch with itself as the leader before: not a takeover. */
    assign(sm, 1, 3, 4, "1,2", "1", 500, &fx);
    CHECK_EQ_INT(psm_took_over_ms(sm), -1);
    /* Not the leader: -1. */
    assign(sm, 2, 4, 5, "1,2", "1,2", 600, &fx);
    CHECK_EQ_INT(psm_took_over_ms(sm), -1);
    psm_free(sm);
}

TEST(partition_sm_hw_is_the_min_log_end_over_the_isr)
{
    struct fake fk;
    struct psm_effects fx;
    struct psm_fetch_verdict v;
    struct partition_sm *sm = leader3(&fk, 1);
    REQUIRE(sm);
    append(sm, &fk, 20, 1, &fx);
    CHECK_EQ_INT(psm_high_watermark(sm), 10);
    CHECK_EQ_INT(fetch(sm, 2, 5, 15, -1, 2, &v, &fx), 0);
    CHECK_EQ_INT(fetch(sm, 3, 5, 12, -1, 3, &v, &fx), 0);
    CHECK(fx.hw_changed);
    CHECK_EQ_INT(psm_high_watermark(sm), 12);
    CHECK_EQ_INT(v.high_watermark, 12); /* answered with the HW after this fetch counted */
    CHECK_EQ_INT(fetch(sm, 3, 5, 20, -1, 4, &v, &fx), 0);
    CHECK_EQ_INT(psm_high_watermark(sm), 15);
    CHECK_EQ_INT(fetch(sm, 2, 5, 20, -1, 5, &v, &fx), 0);
    CHECK_EQ_INT(psm_high_watermark(sm), 20);
    CHECK_EQ_INT(psm_follower_log_end(sm, 2), 20);
    psm_free(sm);
}

TEST(partition_sm_member_with_unknown_position_holds_the_hw)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = leader3(&fk, 1);
    REQUIRE(sm);
    append(sm, &fk, 20, 1, &fx);
    CHECK_EQ_INT(fetch_at(sm, 2, 20, 2, &fx), 0);
    CHECK(!fx.hw_changed);
    CHECK_EQ_INT(psm_high_watermark(sm), 10); /* 3 has not fetched since epoch 5 began */
    CHECK_EQ_INT(psm_follower_log_end(sm, 3), -1);
    CHECK_EQ_INT(fetch_at(sm, 3, 20, 3, &fx), 0);
    CHECK(fx.hw_changed);
    CHECK_EQ_INT(psm_high_watermark(sm), 20);
    psm_free(sm);
}

TEST(partition_sm_hw_never_moves_backwards_on_a_leader)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = leader3(&fk, 1);
    REQUIRE(sm);
    append(sm, &fk, 20, 1, &fx);
    fetch_at(sm, 2, 20, 2, &fx);
    fetch_at(sm, 3, 20, 2, &fx);
    CHECK_EQ_INT(psm_high_watermark(sm), 20);
    /* 2 truncated and fetches from lower down: its position moves back, the HW does not. */
    CHECK_EQ_INT(fetch_at(sm, 2, 14, 3, &fx), 0);
    CHECK_EQ_INT(psm_follower_log_end(sm, 2), 14);
    CHECK(!fx.hw_changed);
    CHECK_EQ_INT(psm_high_watermark(sm), 20);
    /* A larger ISR through the metadata does not pull it back either. */
    assign(sm, 1, 5, 11, "1,2,3,4", "1,2,3,4", 4, &fx);
    CHECK_EQ_INT(psm_high_watermark(sm), 20);
    psm_free(sm);
}

TEST(partition_sm_pending_expand_counts_the_new_member_toward_the_hw)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = mk(&fk, 1, 1, 10, 10);
    REQUIRE(sm);
    assign(sm, 1, 5, 10, "1,2,3", "1,2", 0, &fx);
    append(sm, &fk, 20, 1, &fx);
    fetch_at(sm, 2, 20, 2, &fx);
    CHECK_EQ_INT(psm_high_watermark(sm), 20);
    CHECK_EQ_INT(fetch_at(sm, 3, 20, 3, &fx), 0);
    CHECK(fx.send_alter);
    CHECK(fx.isr_expand_requested);
    REQUIRE(psm_alter_pending(sm));
    CHECK(alter_isr_is(sm, "1,2,3"));
    CHECK(!psm_in_isr(sm, 3));          /* not committed yet ... */
    CHECK_EQ_INT(psm_isr_count(sm), 3); /* ... but counted */
    append(sm, &fk, 30, 4, &fx);
    fetch_at(sm, 2, 30, 5, &fx);
    CHECK_EQ_INT(psm_high_watermark(sm), 20); /* held by 3, whose addition is pending */
    psm_free(sm);
}

TEST(partition_sm_pending_shrink_still_counts_the_members_it_removes)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = leader3(&fk, 1);
    REQUIRE(sm);
    append(sm, &fk, 20, 1, &fx);
    fetch_at(sm, 3, 10, 1, &fx); /* 3 is behind and stays there */
    fetch_at(sm, 2, 20, 30001, &fx);
    CHECK_EQ_INT(psm_high_watermark(sm), 10);
    psm_tick(sm, 30001, &fx);
    CHECK(fx.send_alter);
    CHECK(fx.isr_shrink_requested);
    CHECK(alter_isr_is(sm, "1,2"));
    fetch_at(sm, 2, 20, 30002, &fx);
    CHECK_EQ_INT(psm_high_watermark(sm), 10); /* 3 counts until the controller agrees */
    CHECK_EQ_INT(psm_isr_count(sm), 3);
    answer(sm, 0, 11, "1,2", 30003, &fx);
    CHECK(fx.hw_changed);
    CHECK_EQ_INT(psm_high_watermark(sm), 20);
    CHECK(!psm_in_isr(sm, 3));
    CHECK_EQ_INT(psm_isr_count(sm), 2);
    psm_free(sm);
}

TEST(partition_sm_kip966_hw_holds_while_fewer_than_min_insync_count)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = mk(&fk, 1, 2, 10, 10);
    REQUIRE(sm);
    assign(sm, 1, 5, 10, "1,2", "1", 0, &fx);
    append(sm, &fk, 20, 1, &fx);
    CHECK(!fx.hw_changed);
    CHECK_EQ_INT(psm_high_watermark(sm), 10);
    CHECK_EQ_INT(psm_isr_count(sm), 1);
    psm_set_min_insync(sm, 1, 2, &fx);
    CHECK(fx.hw_changed);
    CHECK_EQ_INT(psm_high_watermark(sm), 20);
    psm_free(sm);
}

/* Below min.insync.replicas, a member whose addition is pending counts for the maximal ISR
 * but not for the minimum: the HW waits until the controller has it in the ISR (until then
 * the controller holds the replicas that left below the minimum eligible, and they lack what
 * the new member would have helped commit). */
TEST(partition_sm_kip966_pending_member_does_not_make_min_insync)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = mk(&fk, 1, 2, 10, 10);
    REQUIRE(sm);
    assign(sm, 1, 5, 10, "1,2,3", "1", 0, &fx);
    append(sm, &fk, 20, 1, &fx);
    CHECK_EQ_INT(fetch_at(sm, 3, 20, 2, &fx), 0);
    REQUIRE(psm_alter_pending(sm));
    CHECK(alter_isr_is(sm, "1,3"));
    CHECK_EQ_INT(psm_isr_count(sm), 2); /* acks=all may append ... */
    CHECK(!fx.hw_changed);
    CHECK_EQ_INT(psm_high_watermark(sm), 10); /* ... but nothing commits yet */
    append(sm, &fk, 25, 3, &fx);
    fetch_at(sm, 3, 25, 4, &fx);
    CHECK_EQ_INT(psm_high_watermark(sm), 10);
    answer(sm, 0, 11, "1,3", 5, &fx);
    CHECK(fx.hw_changed);
    CHECK_EQ_INT(psm_high_watermark(sm), 25);
    psm_free(sm);
}

TEST(partition_sm_kip966_ineligible_members_do_not_make_min_insync)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = mk(&fk, 1, 2, 10, 10);
    REQUIRE(sm);
    assign(sm, 1, 5, 10, "1,2", "1,2", 0, &fx);
    append(sm, &fk, 20, 1, &fx);
    fetch_at(sm, 2, 20, 2, &fx);
    CHECK_EQ_INT(psm_high_watermark(sm), 20);
    fk.ineligible[2] = true; /* 2 shuts down: it no longer counts, and 1 alone is too few */
    CHECK_EQ_INT(psm_isr_count(sm), 1);
    append(sm, &fk, 30, 3, &fx);
    psm_tick(sm, 4, &fx);
    CHECK_EQ_INT(psm_high_watermark(sm), 20);
    fk.ineligible[2] = false;
    fetch_at(sm, 2, 30, 5, &fx);
    CHECK_EQ_INT(psm_high_watermark(sm), 30);
    psm_free(sm);
}

TEST(partition_sm_ineligible_member_does_not_hold_the_hw)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = leader3(&fk, 1);
    REQUIRE(sm);
    fk.ineligible[3] = true; /* fenced: it never fetches, and must not stop the HW */
    append(sm, &fk, 20, 1, &fx);
    fetch_at(sm, 2, 20, 2, &fx);
    CHECK(fx.hw_changed);
    CHECK_EQ_INT(psm_high_watermark(sm), 20);
    CHECK_EQ_INT(psm_isr_count(sm), 2);
    /* Eligible again, it holds the HW where it is until its position is known. */
    fk.ineligible[3] = false;
    append(sm, &fk, 30, 3, &fx);
    fetch_at(sm, 2, 30, 4, &fx);
    psm_tick(sm, 5, &fx);
    CHECK_EQ_INT(psm_high_watermark(sm), 20);
    psm_free(sm);
}

/* ---- the fetch checks ------------------------------------------------------------------ */

TEST(partition_sm_fetch_for_a_partition_not_led_here_is_not_leader_or_follower)
{
    struct fake fk;
    struct psm_effects fx;
    struct psm_fetch_verdict v;
    struct partition_sm *sm = mk(&fk, 1, 1, 0, 10);
    REQUIRE(sm);
    CHECK_EQ_INT(fetch(sm, 2, -1, 5, -1, 1, &v, &fx), ERR_NOT_LEADER_OR_FOLLOWER); /* PSM_NONE */
    assign(sm, 2, 5, 10, "1,2,3", "1,2,3", 0, &fx);
    CHECK_EQ_INT(fetch(sm, 3, 5, 5, -1, 1, &v, &fx), ERR_NOT_LEADER_OR_FOLLOWER);
    CHECK_EQ_INT(v.error, ERR_NOT_LEADER_OR_FOLLOWER);
    psm_free(sm);
}

TEST(partition_sm_fetch_from_a_non_replica_is_not_leader_or_follower)
{
    struct fake fk;
    struct psm_effects fx;
    struct psm_fetch_verdict v;
    struct partition_sm *sm = leader3(&fk, 1);
    REQUIRE(sm);
    CHECK_EQ_INT(fetch(sm, 9, 5, 10, -1, 1, &v, &fx), ERR_NOT_LEADER_OR_FOLLOWER);
    CHECK_EQ_INT(fetch(sm, 1, 5, 10, -1, 1, &v, &fx), ERR_NOT_LEADER_OR_FOLLOWER); /* itself */
    CHECK_EQ_INT(psm_follower_log_end(sm, 9), -1);
    psm_free(sm);
}

TEST(partition_sm_fetch_current_leader_epoch_older_fenced_newer_unknown_minus_one_unchecked)
{
    struct fake fk;
    struct psm_effects fx;
    struct psm_fetch_verdict v;
    struct partition_sm *sm = leader3(&fk, 1);
    REQUIRE(sm);
    CHECK_EQ_INT(fetch(sm, 2, 4, 10, -1, 1, &v, &fx), ERR_FENCED_LEADER_EPOCH);
    CHECK_EQ_INT(fetch(sm, 2, 6, 10, -1, 1, &v, &fx), ERR_UNKNOWN_LEADER_EPOCH);
    CHECK_EQ_INT(psm_follower_log_end(sm, 2), -1);
    CHECK_EQ_INT(fetch(sm, 2, -1, 10, -1, 1, &v, &fx), 0);
    CHECK_EQ_INT(psm_follower_log_end(sm, 2), 10);
    psm_free(sm);
}

TEST(partition_sm_fetch_checks_run_in_the_header_order)
{
    struct fake fk;
    struct psm_effects fx;
    struct psm_fetch_verdict v;
    struct partition_sm *sm = leader3(&fk, 1);
    REQUIRE(sm);
    fake_epoch(&fk, 3, 0);
    fake_epoch(&fk, 5, 8);
    /* Not a replica beats a fenced epoch. */
    CHECK_EQ_INT(fetch(sm, 9, 4, 10, -1, 1, &v, &fx), ERR_NOT_LEADER_OR_FOLLOWER);
    /* A fenced epoch beats divergence (epoch 4 ends at 8 here, the fetch is at 9). */
    CHECK_EQ_INT(fetch(sm, 2, 4, 9, 4, 1, &v, &fx), ERR_FENCED_LEADER_EPOCH);
    CHECK(!v.diverging);
    /* Divergence beats an offset out of range (30 is past the log end). */
    CHECK_EQ_INT(fetch(sm, 2, 5, 30, 4, 1, &v, &fx), 0);
    CHECK(v.diverging);
    CHECK_EQ_INT(v.diverging_epoch, 3);
    CHECK_EQ_INT(v.diverging_end_offset, 8);
    /* Without divergence the range is checked: epoch 5 ends at the log end (10), so a
     * fetch at 8 below the log start 9 passes the divergence check and fails the range. */
    psm_set_log(sm, 9, 10);
    CHECK_EQ_INT(fetch(sm, 2, 5, 8, 5, 1, &v, &fx), ERR_OFFSET_OUT_OF_RANGE);
    CHECK(!v.diverging);
    CHECK_EQ_INT(fetch(sm, 2, 5, 30, -1, 1, &v, &fx), ERR_OFFSET_OUT_OF_RANGE);
    CHECK_EQ_INT(psm_follower_log_end(sm, 2), -1);
    psm_free(sm);
}

/* The safety property: a follower's position counts only after its epoch and divergence
 * check. A diverged follower claiming offset 15 must not move the HW over records it lacks. */
TEST(partition_sm_diverging_fetch_does_not_count)
{
    struct fake fk;
    struct psm_effects fx;
    struct psm_fetch_verdict v;
    struct partition_sm *sm = mk(&fk, 1, 1, 8, 20);
    REQUIRE(sm);
    fake_epoch(&fk, 3, 0);
    fake_epoch(&fk, 5, 8);
    assign(sm, 1, 6, 10, "1,2", "1,2", 0, &fx);
    /* 2 holds epoch 4 (from a leader whose records never made it here) up to offset 15. */
    CHECK_EQ_INT(fetch(sm, 2, 6, 15, 4, 1, &v, &fx), 0);
    CHECK(v.diverging);
    CHECK_EQ_INT(v.diverging_epoch, 3);
    CHECK_EQ_INT(v.diverging_end_offset, 8);
    CHECK(!fx.hw_changed);
    CHECK_EQ_INT(psm_high_watermark(sm), 8);
    CHECK_EQ_INT(psm_follower_log_end(sm, 2), -1);
    /* Epoch 3 ends at 8: a fetch at 12 claiming epoch 3 diverges too. */
    CHECK_EQ_INT(fetch(sm, 2, 6, 12, 3, 2, &v, &fx), 0);
    CHECK(v.diverging);
    CHECK_EQ_INT(v.diverging_epoch, 3);
    CHECK_EQ_INT(v.diverging_end_offset, 8);
    CHECK_EQ_INT(psm_high_watermark(sm), 8);
    /* After truncating to 8, the follower's fetch counts. */
    CHECK_EQ_INT(fetch(sm, 2, 6, 8, 3, 3, &v, &fx), 0);
    CHECK(!v.diverging);
    CHECK_EQ_INT(psm_follower_log_end(sm, 2), 8);
    CHECK_EQ_INT(fetch(sm, 2, 6, 20, 5, 4, &v, &fx), 0);
    CHECK(!v.diverging);
    CHECK_EQ_INT(psm_high_watermark(sm), 20);
    psm_free(sm);
}

TEST(partition_sm_fenced_or_unknown_epoch_fetch_does_not_count)
{
    struct fake fk;
    struct psm_effects fx;
    struct psm_fetch_verdict v;
    struct partition_sm *sm = mk(&fk, 1, 1, 10, 20);
    REQUIRE(sm);
    assign(sm, 1, 5, 10, "1,2", "1,2", 0, &fx);
    /* A zombie still at epoch 4 claims the whole log. */
    CHECK_EQ_INT(fetch(sm, 2, 4, 20, -1, 1, &v, &fx), ERR_FENCED_LEADER_EPOCH);
    CHECK(!fx.hw_changed);
    CHECK_EQ_INT(fetch(sm, 2, 6, 20, -1, 1, &v, &fx), ERR_UNKNOWN_LEADER_EPOCH);
    CHECK(!fx.hw_changed);
    CHECK_EQ_INT(psm_high_watermark(sm), 10);
    CHECK_EQ_INT(psm_follower_log_end(sm, 2), -1);
    psm_free(sm);
}

TEST(partition_sm_out_of_range_fetch_does_not_count)
{
    struct fake fk;
    struct psm_effects fx;
    struct psm_fetch_verdict v;
    struct partition_sm *sm = mk(&fk, 1, 1, 10, 20);
    REQUIRE(sm);
    psm_set_log(sm, 5, 20);
    assign(sm, 1, 5, 10, "1,2", "1,2", 0, &fx);
    CHECK_EQ_INT(fetch(sm, 2, 5, 21, -1, 1, &v, &fx), ERR_OFFSET_OUT_OF_RANGE);
    CHECK_EQ_INT(v.log_start, 5);
    CHECK_EQ_INT(fetch(sm, 2, 5, 4, -1, 1, &v, &fx), ERR_OFFSET_OUT_OF_RANGE);
    CHECK(!fx.hw_changed);
    CHECK_EQ_INT(psm_high_watermark(sm), 10);
    CHECK_EQ_INT(psm_follower_log_end(sm, 2), -1);
    CHECK_EQ_INT(fetch(sm, 2, 5, 5, -1, 1, &v, &fx), 0); /* both ends are in range */
    CHECK_EQ_INT(fetch(sm, 2, 5, 20, -1, 1, &v, &fx), 0);
    CHECK_EQ_INT(psm_high_watermark(sm), 20);
    psm_free(sm);
}

TEST(partition_sm_fetch_naming_an_epoch_older_than_the_cache_is_out_of_range)
{
    struct fake fk;
    struct psm_effects fx;
    struct psm_fetch_verdict v;
    struct partition_sm *sm = mk(&fk, 1, 1, 10, 20);
    REQUIRE(sm);
    fake_epoch(&fk, 3, 0);
    assign(sm, 1, 5, 10, "1,2", "1,2", 0, &fx);
    CHECK_EQ_INT(fetch(sm, 2, 5, 15, 2, 1, &v, &fx), ERR_OFFSET_OUT_OF_RANGE);
    CHECK(!v.diverging);
    CHECK_EQ_INT(psm_follower_log_end(sm, 2), -1);
    CHECK_EQ_INT(psm_high_watermark(sm), 10);
    psm_free(sm);
}

/* ---- caught up, shrink, expand ---------------------------------------------------------- */

TEST(partition_sm_caught_up_now_when_fetching_at_the_log_end)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = leader3(&fk, 1);
    REQUIRE(sm);
    CHECK_EQ_INT(psm_follower_caught_up_ms(sm, 2), 0); /* an ISR member: caught up at t=0 */
    append(sm, &fk, 20, 100, &fx);
    fetch_at(sm, 2, 20, 500, &fx);
    CHECK_EQ_INT(psm_follower_caught_up_ms(sm, 2), 500);
    psm_free(sm);
}

TEST(partition_sm_caught_up_as_of_the_previous_fetch_when_reaching_its_log_end)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = leader3(&fk, 1);
    REQUIRE(sm);
    append(sm, &fk, 20, 50, &fx);
    fetch_at(sm, 2, 15, 100, &fx); /* behind the log end, no previous fetch */
    CHECK_EQ_INT(psm_follower_caught_up_ms(sm, 2), 0);
    append(sm, &fk, 30, 150, &fx);
    fetch_at(sm, 2, 20, 200, &fx); /* the log end as of the fetch at t=100 */
    CHECK_EQ_INT(psm_follower_caught_up_ms(sm, 2), 100);
    fetch_at(sm, 2, 25, 300, &fx); /* behind both the log end and the previous one (30) */
    CHECK_EQ_INT(psm_follower_caught_up_ms(sm, 2), 100);
    fetch_at(sm, 2, 30, 400, &fx);
    CHECK_EQ_INT(psm_follower_caught_up_ms(sm, 2), 400);
    psm_free(sm);
}

TEST(partition_sm_isr_shrinks_after_replica_lag_time_max_and_not_before)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = leader3(&fk, 1);
    REQUIRE(sm);
    append(sm, &fk, 20, 1, &fx);
    for (int64_t t = 1000; t <= 30000; t += 1000) {
        fetch_at(sm, 2, psm_log_end(sm), t, &fx);
        psm_tick(sm, t, &fx);
        CHECK(!fx.send_alter); /* at 30000, 3 is exactly replica.lag.time.max.ms behind */
    }
    psm_tick(sm, 30001, &fx);
    CHECK(fx.send_alter);
    CHECK(fx.isr_shrink_requested);
    CHECK(alter_isr_is(sm, "1,2"));
    struct psm_alter_request r;
    psm_alter_request(sm, &r);
    CHECK_EQ_INT(r.leader_epoch, 5);
    CHECK_EQ_INT(r.partition_epoch, 10);
    CHECK_EQ_INT(r.leader_recovery_state, PSM_RECOVERED);
    psm_free(sm);
}

TEST(partition_sm_follower_at_the_leader_log_end_is_not_shrunk)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = mk(&fk, 1, 1, 10, 10);
    REQUIRE(sm);
    assign(sm, 1, 5, 10, "1,2", "1,2", 0, &fx);
    append(sm, &fk, 20, 1, &fx);
    fetch_at(sm, 2, 20, 2, &fx);
    psm_tick(sm, 100000, &fx); /* silent for long, but nothing was appended it lacks */
    CHECK(!fx.send_alter);
    append(sm, &fk, 21, 100001, &fx);
    psm_tick(sm, 100002, &fx);
    CHECK(fx.send_alter);
    CHECK(alter_isr_is(sm, "1"));
    psm_free(sm);
}

TEST(partition_sm_expand_needs_a_log_end_at_or_past_the_hw)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = mk(&fk, 1, 1, 10, 10);
    REQUIRE(sm);
    assign(sm, 1, 5, 10, "1,2,3", "1,2", 0, &fx);
    append(sm, &fk, 20, 1, &fx);
    fetch_at(sm, 2, 20, 2, &fx);
    CHECK_EQ_INT(psm_high_watermark(sm), 20);
    fetch_at(sm, 3, 19, 3, &fx);
    CHECK(!fx.send_alter);
    CHECK(!psm_alter_pending(sm));
    fetch_at(sm, 3, 20, 4, &fx);
    CHECK(fx.send_alter);
    CHECK(alter_isr_is(sm, "1,2,3"));
    psm_free(sm);
}

/* KAFKA-7128: a new leader's HW may lag the old leader's; a follower at or past that HW but
 * short of the epoch start may lack committed records and must not rejoin. */
TEST(partition_sm_expand_needs_the_leader_epoch_start)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = mk(&fk, 1, 1, 5, 20);
    REQUIRE(sm);
    assign(sm, 1, 5, 10, "1,2,3", "1,2", 0, &fx);
    CHECK_EQ_INT(psm_epoch_start_offset(sm), 20);
    CHECK_EQ_INT(psm_high_watermark(sm), 5); /* held: 2's position is not known */
    fetch_at(sm, 3, 10, 1, &fx);             /* >= HW 5, < epoch start 20 */
    CHECK(!fx.send_alter);
    CHECK(!psm_alter_pending(sm));
    fetch_at(sm, 3, 20, 2, &fx);
    CHECK(fx.send_alter);
    CHECK(alter_isr_is(sm, "1,2,3"));
    psm_free(sm);
}

TEST(partition_sm_expand_needs_an_eligible_replica)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = mk(&fk, 1, 1, 10, 10);
    REQUIRE(sm);
    assign(sm, 1, 5, 10, "1,2", "1", 0, &fx);
    fk.ineligible[2] = true;
    fetch_at(sm, 2, 10, 1, &fx);
    CHECK(!fx.send_alter);
    fk.ineligible[2] = false;
    fetch_at(sm, 2, 10, 2, &fx);
    CHECK(fx.send_alter);
    CHECK(alter_isr_is(sm, "1,2"));
    psm_free(sm);
}

TEST(partition_sm_one_alter_partition_in_flight_at_a_time)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = mk(&fk, 1, 1, 10, 10);
    REQUIRE(sm);
    assign(sm, 1, 5, 10, "1,2,3,4", "1,2,3", 0, &fx);
    append(sm, &fk, 20, 1, &fx);
    fetch_at(sm, 2, 20, 2, &fx);
    psm_tick(sm, 30001, &fx); /* 3 is out: shrink */
    CHECK(fx.send_alter);
    fetch_at(sm, 4, 20, 30002, &fx); /* 4 would join, but a change is in flight */
    CHECK(!fx.send_alter);
    psm_tick(sm, 30003, &fx);
    CHECK(!fx.send_alter);
    CHECK(alter_isr_is(sm, "1,2"));
    answer(sm, 0, 11, "1,2", 30004, &fx);
    CHECK(!psm_alter_pending(sm));
    fetch_at(sm, 4, 20, 30005, &fx);
    CHECK(fx.send_alter);
    CHECK(alter_isr_is(sm, "1,2,4"));
    psm_free(sm);
}

/* ---- AlterPartition answers ------------------------------------------------------------ */

TEST(partition_sm_alter_answered_ok_commits_the_isr)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = mk(&fk, 1, 1, 10, 10);
    REQUIRE(sm);
    assign(sm, 1, 5, 10, "1,2,3", "1,2", 0, &fx);
    fetch_at(sm, 3, 10, 1, &fx);
    REQUIRE(psm_alter_pending(sm));
    answer(sm, 0, 11, "1,2,3", 2, &fx);
    CHECK(!psm_alter_pending(sm));
    CHECK(psm_in_isr(sm, 3));
    CHECK_EQ_INT(psm_partition_epoch(sm), 11);
    CHECK(!fx.fail_waiters);
    CHECK(!fx.role_changed);
    int32_t n;
    const int32_t *r = psm_replicas(sm, &n);
    CHECK(same_ids(r, n, "1,2,3")); /* the answer's empty replica set kept them */
    CHECK_EQ_INT(psm_role(sm), PSM_LEADER);
    psm_free(sm);
}

TEST(partition_sm_alter_answered_ok_with_nothing_changed_ends_the_request)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = mk(&fk, 1, 1, 10, 10);
    REQUIRE(sm);
    assign(sm, 1, 5, 10, "1,2,3", "1,2", 0, &fx);
    fetch_at(sm, 3, 10, 1, &fx);
    REQUIRE(psm_alter_pending(sm));
    /* An answer at the same epochs with another ISR belongs to an older request. */
    answer(sm, 0, 10, "1", 2, &fx);
    CHECK(psm_alter_pending(sm));
    CHECK(psm_in_isr(sm, 2));
    /* The controller already had the ISR asked for: no record, same epoch. */
    answer(sm, 0, 10, "1,2,3", 3, &fx);
    CHECK(!psm_alter_pending(sm));
    CHECK(psm_in_isr(sm, 3));
    CHECK_EQ_INT(psm_partition_epoch(sm), 10);
    psm_free(sm);
}

TEST(partition_sm_alter_invalid_update_version_is_dropped_until_the_metadata)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = mk(&fk, 1, 1, 10, 10);
    REQUIRE(sm);
    assign(sm, 1, 5, 10, "1,2,3", "1,2", 0, &fx);
    fetch_at(sm, 2, 10, 1, &fx);
    fetch_at(sm, 3, 10, 1, &fx);
    REQUIRE(psm_alter_pending(sm));
    answer(sm, ERR_INVALID_UPDATE_VERSION, 0, "", 100, &fx);
    CHECK(!psm_alter_pending(sm));
    CHECK(!fx.send_alter);
    psm_tick(sm, 100 + 1999, &fx);
    CHECK(!fx.send_alter); /* dropped: not resent */
    /* An earlier copy may have been applied: 3 still holds the HW until the metadata. */
    CHECK_EQ_INT(psm_isr_count(sm), 3);
    append(sm, &fk, 20, 2200, &fx);
    fetch_at(sm, 2, 20, 2201, &fx);
    CHECK_EQ_INT(psm_high_watermark(sm), 10);
    /* The metadata says what is true (3 was not added); decisions resume. */
    assign(sm, 1, 5, 12, "1,2,3", "1,2", 2300, &fx);
    CHECK(!fx.fail_waiters);
    CHECK_EQ_INT(psm_high_watermark(sm), 20);
    CHECK_EQ_INT(psm_isr_count(sm), 2);
    fetch_at(sm, 3, 20, 2301, &fx);
    CHECK(fx.send_alter);
    struct psm_alter_request r;
    psm_alter_request(sm, &r);
    CHECK_EQ_INT(r.partition_epoch, 12);
    psm_free(sm);
}

TEST(partition_sm_alter_dropped_is_sent_again_when_no_metadata_comes)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = mk(&fk, 1, 1, 10, 10);
    REQUIRE(sm);
    assign(sm, 1, 5, 10, "1,2,3", "1,2", 0, &fx);
    fetch_at(sm, 3, 10, 1, &fx);
    answer(sm, ERR_FENCED_LEADER_EPOCH, 0, "", 100, &fx);
    CHECK(!psm_alter_pending(sm));
    psm_tick(sm, 2100, &fx);
    CHECK(fx.send_alter);
    CHECK(psm_alter_pending(sm));
    CHECK(!fx.isr_expand_requested); /* the same request again, not a new decision */
    CHECK(alter_isr_is(sm, "1,2,3"));
    psm_free(sm);
}

TEST(partition_sm_alter_not_controller_is_resent_after_the_retry_time)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = mk(&fk, 1, 1, 10, 10);
    REQUIRE(sm);
    assign(sm, 1, 5, 10, "1,2,3", "1,2", 0, &fx);
    fetch_at(sm, 3, 10, 1, &fx);
    answer(sm, ERR_NOT_CONTROLLER, 0, "", 500, &fx);
    CHECK(psm_alter_pending(sm));
    CHECK(!fx.send_alter);
    psm_tick(sm, 500 + 1999, &fx);
    CHECK(!fx.send_alter);
    psm_tick(sm, 500 + 2000, &fx);
    CHECK(fx.send_alter);
    CHECK(alter_isr_is(sm, "1,2,3"));
    psm_free(sm);
}

TEST(partition_sm_alter_without_an_answer_is_resent_after_the_retry_time)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = mk(&fk, 1, 1, 10, 10);
    REQUIRE(sm);
    assign(sm, 1, 5, 10, "1,2,3", "1,2", 0, &fx);
    fetch_at(sm, 3, 10, 1000, &fx);
    CHECK(fx.send_alter);
    psm_tick(sm, 2999, &fx);
    CHECK(!fx.send_alter);
    psm_tick(sm, 3000, &fx);
    CHECK(fx.send_alter);
    psm_tick(sm, 3001, &fx);
    CHECK(!fx.send_alter);
    psm_free(sm);
}

TEST(partition_sm_alter_answer_when_nothing_is_pending_is_ignored)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = leader3(&fk, 1);
    REQUIRE(sm);
    answer(sm, 0, 11, "1", 1, &fx);
    CHECK(fx_empty(&fx));
    CHECK(psm_in_isr(sm, 3));
    CHECK_EQ_INT(psm_partition_epoch(sm), 10);
    psm_free(sm);
}

TEST(partition_sm_alter_answer_older_than_the_metadata_changes_nothing)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = mk(&fk, 1, 1, 10, 10);
    REQUIRE(sm);
    assign(sm, 1, 5, 12, "1,2,3", "1,2", 0, &fx);
    fetch_at(sm, 3, 10, 1, &fx);
    REQUIRE(psm_alter_pending(sm));
    answer(sm, 0, 11, "1", 2, &fx);
    CHECK(psm_alter_pending(sm));
    CHECK(psm_in_isr(sm, 2));
    CHECK_EQ_INT(psm_partition_epoch(sm), 12);
    psm_free(sm);
}

/* ---- roles and epochs ------------------------------------------------------------------ */

TEST(partition_sm_leader_to_follower_fails_waiters_and_starts_fetching)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = leader3(&fk, 1);
    REQUIRE(sm);
    assign(sm, 2, 6, 11, "1,2,3", "1,2,3", 1, &fx);
    CHECK(fx.fail_waiters);
    CHECK(fx.role_changed);
    CHECK(fx.fetch_changed);
    CHECK_EQ_INT(psm_role(sm), PSM_FOLLOWER);
    CHECK_EQ_INT(psm_leader(sm), 2);
    CHECK_EQ_INT(psm_leader_epoch(sm), 6);
    CHECK_EQ_INT(psm_epoch_start_offset(sm), -1);
    psm_free(sm);
}

TEST(partition_sm_new_leader_epoch_fails_waiters_and_forgets_follower_positions)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = leader3(&fk, 1);
    REQUIRE(sm);
    append(sm, &fk, 20, 1, &fx);
    fetch_at(sm, 2, 20, 2, &fx);
    fetch_at(sm, 3, 20, 2, &fx);
    append(sm, &fk, 30, 3, &fx);
    assign(sm, 1, 6, 11, "1,2,3", "1,2,3", 500, &fx);
    CHECK(fx.fail_waiters);
    CHECK(fx.role_changed);
    CHECK(!fx.fetch_changed);
    CHECK_EQ_INT(psm_role(sm), PSM_LEADER);
    CHECK_EQ_INT(psm_epoch_start_offset(sm), 30);
    CHECK_EQ_INT(psm_follower_log_end(sm, 2), -1);
    CHECK_EQ_INT(psm_follower_caught_up_ms(sm, 2), 500);
    CHECK_EQ_INT(psm_high_watermark(sm), 20);
    CHECK(!psm_hw_covers_epoch_start(sm));
    psm_free(sm);
}

TEST(partition_sm_follower_to_leader_fails_waiters_and_stops_fetching)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = mk(&fk, 1, 1, 10, 10);
    REQUIRE(sm);
    assign(sm, 2, 5, 10, "1,2,3", "1,2,3", 0, &fx);
    CHECK(fx.fetch_changed);
    CHECK(fx.role_changed);
    assign(sm, 1, 6, 11, "1,2,3", "1,3", 1, &fx);
    CHECK(fx.fail_waiters);
    CHECK(fx.role_changed);
    CHECK(fx.fetch_changed);
    CHECK_EQ_INT(psm_role(sm), PSM_LEADER);
    CHECK_EQ_INT(psm_follower_caught_up_ms(sm, 3), 1); /* ISR members: caught up now */
    CHECK_EQ_INT(psm_follower_caught_up_ms(sm, 2), -1);
    psm_free(sm);
}

TEST(partition_sm_becoming_none_fails_waiters_and_stops_fetching)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = mk(&fk, 1, 1, 10, 10);
    REQUIRE(sm);
    assign(sm, 2, 5, 10, "1,2,3", "1,2,3", 0, &fx);
    assign(sm, 2, 5, 11, "2,3,4", "2,3", 1, &fx);
    CHECK(fx.fail_waiters);
    CHECK(fx.role_changed);
    CHECK(fx.fetch_changed);
    CHECK_EQ_INT(psm_role(sm), PSM_NONE);
    CHECK_EQ_INT(psm_leader(sm), -1);
    /* A leader moved away fails its waiters too. */
    struct partition_sm *ld = leader3(&fk, 1);
    REQUIRE(ld);
    assign(ld, 2, 6, 11, "2,3,4", "2,3", 1, &fx);
    CHECK(fx.fail_waiters);
    CHECK(!fx.fetch_changed);
    CHECK_EQ_INT(psm_role(ld), PSM_NONE);
    psm_free(ld);
    psm_free(sm);
}

TEST(partition_sm_isr_only_change_fails_no_waiters)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = leader3(&fk, 1);
    REQUIRE(sm);
    append(sm, &fk, 20, 1, &fx);
    fetch_at(sm, 2, 20, 2, &fx);
    CHECK_EQ_INT(psm_high_watermark(sm), 10);
    assign(sm, 1, 5, 11, "1,2,3", "1,2", 3, &fx); /* the controller fenced 3 */
    CHECK(!fx.fail_waiters);
    CHECK(!fx.role_changed);
    CHECK(!fx.fetch_changed);
    CHECK(fx.hw_changed);
    CHECK_EQ_INT(psm_high_watermark(sm), 20);
    CHECK_EQ_INT(psm_follower_log_end(sm, 2), 20); /* positions kept within the epoch */
    /* The same on a follower: no restart of fetching. */
    struct partition_sm *fl = mk(&fk, 2, 1, 10, 10);
    REQUIRE(fl);
    assign(fl, 1, 5, 10, "1,2,3", "1,2,3", 0, &fx);
    assign(fl, 1, 5, 11, "1,2,3", "1,2", 1, &fx);
    CHECK(fx_empty(&fx));
    CHECK(!psm_in_isr(fl, 3));
    psm_free(fl);
    psm_free(sm);
}

TEST(partition_sm_stale_assignment_is_ignored)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = leader3(&fk, 1);
    REQUIRE(sm);
    assign(sm, 2, 4, 20, "1,2,3", "2", 1, &fx); /* older leader epoch */
    CHECK(fx_empty(&fx));
    assign(sm, 2, 5, 10, "1,2,3", "2", 1, &fx); /* same epochs */
    CHECK(fx_empty(&fx));
    assign(sm, 1, 5, 9, "1,2,3", "1", 1, &fx); /* older partition epoch */
    CHECK(fx_empty(&fx));
    CHECK_EQ_INT(psm_role(sm), PSM_LEADER);
    CHECK_EQ_INT(psm_leader_epoch(sm), 5);
    CHECK_EQ_INT(psm_partition_epoch(sm), 10);
    CHECK(psm_in_isr(sm, 2) && psm_in_isr(sm, 3));
    psm_free(sm);
}

TEST(partition_sm_recovering_leader_asks_to_become_recovered_with_itself)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = mk(&fk, 1, 1, 10, 10);
    REQUIRE(sm);
    assign_lrs(sm, 1, 5, 10, "1,2,3", "1", PSM_RECOVERING, 0, &fx);
    CHECK(fx.send_alter);
    REQUIRE(psm_alter_pending(sm));
    struct psm_alter_request r;
    psm_alter_request(sm, &r);
    CHECK_EQ_INT(r.leader_recovery_state, PSM_RECOVERED);
    CHECK(same_ids(r.isr, r.n_isr, "1"));
    CHECK_EQ_INT(psm_leader_recovery_state(sm), PSM_RECOVERING);
    answer(sm, 0, 11, "1", 1, &fx);
    CHECK_EQ_INT(psm_leader_recovery_state(sm), PSM_RECOVERED);
    CHECK(!psm_alter_pending(sm));
    fetch_at(sm, 2, 10, 2, &fx); /* only now may the ISR grow */
    CHECK(fx.send_alter);
    CHECK(alter_isr_is(sm, "1,2"));
    psm_free(sm);
}

TEST(partition_sm_recovering_leader_does_not_expand)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = mk(&fk, 1, 1, 10, 10);
    REQUIRE(sm);
    assign_lrs(sm, 1, 5, 10, "1,2,3", "1", PSM_RECOVERING, 0, &fx);
    answer(sm, ERR_INVALID_REQUEST, 0, "", 1, &fx); /* retriable: stays the recovery request */
    fetch_at(sm, 2, 10, 2, &fx);
    CHECK(!fx.send_alter);
    CHECK(alter_isr_is(sm, "1"));
    psm_free(sm);
}

TEST(partition_sm_hw_covers_epoch_start)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = mk(&fk, 1, 1, 5, 20);
    REQUIRE(sm);
    assign(sm, 2, 4, 9, "1,2", "1,2", 0, &fx);
    CHECK(!psm_hw_covers_epoch_start(sm)); /* a follower */
    assign(sm, 1, 5, 10, "1,2", "1,2", 1, &fx);
    CHECK_EQ_INT(psm_epoch_start_offset(sm), 20);
    CHECK(!psm_hw_covers_epoch_start(sm));
    fetch_at(sm, 2, 19, 2, &fx);
    CHECK_EQ_INT(psm_high_watermark(sm), 19);
    CHECK(!psm_hw_covers_epoch_start(sm));
    fetch_at(sm, 2, 20, 3, &fx);
    CHECK(psm_hw_covers_epoch_start(sm));
    psm_free(sm);
}

TEST(partition_sm_larger_replica_set_keeps_positions)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = leader3(&fk, 1);
    REQUIRE(sm);
    append(sm, &fk, 20, 1, &fx);
    fetch_at(sm, 2, 20, 2, &fx);
    assign(sm, 1, 5, 11, "1,2,3,4,5,6,7", "1,2,3", 3, &fx); /* a reassignment adds four */
    CHECK_EQ_INT(psm_follower_log_end(sm, 2), 20);
    CHECK_EQ_INT(psm_follower_log_end(sm, 7), -1);
    CHECK(psm_is_replica(sm, 7));
    fetch_at(sm, 7, 20, 4, &fx);
    CHECK_EQ_INT(psm_follower_log_end(sm, 7), 20);
    psm_free(sm);
}

/* ---- the follower ---------------------------------------------------------------------- */

static struct partition_sm *follower(struct fake *fk, int64_t hw, int64_t log_end)
{
    struct psm_effects fx;
    struct partition_sm *sm = mk(fk, 2, 1, hw, log_end);
    if (sm)
        assign(sm, 1, 5, 10, "1,2,3", "1,2,3", 0, &fx);
    return sm;
}

TEST(partition_sm_follower_hw_is_min_of_leader_hw_and_log_end_never_backwards)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = follower(&fk, 0, 0);
    REQUIRE(sm);
    psm_fetched(sm, 10, 20, 0, &fx);
    CHECK(fx.hw_changed);
    CHECK_EQ_INT(psm_high_watermark(sm), 10);
    CHECK_EQ_INT(psm_log_end(sm), 10);
    psm_fetched(sm, 15, 12, 0, &fx);
    CHECK_EQ_INT(psm_high_watermark(sm), 12);
    psm_fetched(sm, 16, 8, 0, &fx); /* a new leader whose HW lags */
    CHECK(!fx.hw_changed);
    CHECK_EQ_INT(psm_high_watermark(sm), 12);
    psm_free(sm);
}

/* OFFSET_OUT_OF_RANGE (issue 16), Kafka's fetchOffsetAndTruncate: a shorter leader truncates
 * the follower to its end, a leader whose log starts past the follower's end starts it over,
 * and an answer for an offset inside the leader's log (it refused LastFetchedEpoch) truncates
 * to the HW and sends the next fetch without the epoch, so it cannot repeat forever. */
TEST(partition_sm_follower_out_of_range_truncates_resets_or_drops_the_epoch_check)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = follower(&fk, 200, 300);
    REQUIRE(sm);
    CHECK(psm_fetch_checks_epoch(sm));
    psm_out_of_range(sm, -1, 120, &fx); /* an unclean leader with a shorter log */
    CHECK(fx.truncate && !fx.reset);
    CHECK_EQ_INT(fx.truncate_to, 120);
    CHECK(fx.truncate_below_hw);
    psm_out_of_range(sm, -1, 250, &fx); /* shorter, but above the HW */
    CHECK(fx.truncate && !fx.truncate_below_hw);
    CHECK_EQ_INT(fx.truncate_to, 250);
    psm_out_of_range(sm, 400, 900, &fx); /* retention moved the leader's start past us */
    CHECK(fx.reset && !fx.truncate);
    CHECK_EQ_INT(fx.reset_to, 400);
    CHECK(psm_fetch_checks_epoch(sm));
    psm_out_of_range(sm, 0, 900, &fx); /* in range: the epoch was refused */
    CHECK(fx.truncate && !fx.truncate_below_hw);
    CHECK_EQ_INT(fx.truncate_to, 200);
    CHECK(!psm_fetch_checks_epoch(sm));
    psm_truncated(sm, 200, &fx);
    psm_out_of_range(sm, 0, 900, &fx); /* again, at the HW: nothing to cut, still unchecked */
    CHECK(!fx.truncate && !fx.reset);
    CHECK(!psm_fetch_checks_epoch(sm));
    psm_fetched(sm, 210, 205, 0, &fx); /* a fetch answered: checked again */
    CHECK(psm_fetch_checks_epoch(sm));
    psm_out_of_range(sm, 0, -1, &fx); /* the end unknown: nothing decided */
    CHECK(!fx.truncate && !fx.reset);
    psm_free(sm);
}

TEST(partition_sm_follower_log_start_follows_the_leader_up_to_the_hw)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = follower(&fk, 0, 0);
    REQUIRE(sm);
    psm_fetched(sm, 10, 6, 4, &fx);
    CHECK_EQ_INT(psm_log_start(sm), 4);
    psm_fetched(sm, 10, 8, 9, &fx);
    CHECK_EQ_INT(psm_log_start(sm), 8);
    psm_fetched(sm, 10, 8, 2, &fx);
    CHECK_EQ_INT(psm_log_start(sm), 8);
    psm_free(sm);
}

TEST(partition_sm_truncation_holding_the_diverging_epoch)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = follower(&fk, 5, 15);
    REQUIRE(sm);
    fake_epoch(&fk, 3, 0);
    fake_epoch(&fk, 4, 8);
    psm_diverging(sm, 3, 10, &fx); /* own epoch 3 ends at 8: min(10, 8) */
    CHECK(fx.truncate);
    CHECK_EQ_INT(fx.truncate_to, 8);
    psm_diverging(sm, 4, 12, &fx); /* own epoch 4 ends at the log end: min(12, 15) */
    CHECK(fx.truncate);
    CHECK_EQ_INT(fx.truncate_to, 12);
    CHECK(!fx.truncate_below_hw);
    psm_free(sm);
}

TEST(partition_sm_truncation_holding_only_an_older_epoch)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = follower(&fk, 5, 15);
    REQUIRE(sm);
    fake_epoch(&fk, 2, 0);
    fake_epoch(&fk, 4, 8);
    /* The leader's epoch 3 is unknown here: to the end of the largest older one, 2. */
    psm_diverging(sm, 3, 12, &fx);
    CHECK(fx.truncate);
    CHECK_EQ_INT(fx.truncate_to, 8);
    psm_free(sm);
}

TEST(partition_sm_truncation_never_past_the_log_end)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = follower(&fk, 5, 15);
    REQUIRE(sm);
    fake_epoch(&fk, 4, 8);
    psm_diverging(sm, 4, 30, &fx);
    CHECK_EQ_INT(fx.truncate_to, 15);
    CHECK(fx.truncate); /* at the log end still: the epoch cache may hold a later epoch */
    psm_diverging(sm, 2, 40, &fx); /* no epoch <= 2 here: the leader's end, clamped */
    CHECK_EQ_INT(fx.truncate_to, 15);
    psm_diverging(sm, 2, 11, &fx);
    CHECK_EQ_INT(fx.truncate_to, 11);
    psm_free(sm);
}

TEST(partition_sm_truncate_below_hw_only_when_below_the_old_hw)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = follower(&fk, 8, 15);
    REQUIRE(sm);
    fake_epoch(&fk, 4, 0);
    psm_diverging(sm, 4, 8, &fx);
    CHECK_EQ_INT(fx.truncate_to, 8);
    CHECK(!fx.truncate_below_hw);
    psm_diverging(sm, 4, 7, &fx);
    CHECK_EQ_INT(fx.truncate_to, 7);
    CHECK(fx.truncate_below_hw);
    psm_truncated(sm, 7, &fx);
    CHECK(fx.hw_changed);
    CHECK_EQ_INT(psm_high_watermark(sm), 7);
    CHECK_EQ_INT(psm_log_end(sm), 7);
    psm_free(sm);
}

TEST(partition_sm_truncated_above_the_hw_keeps_it)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = follower(&fk, 8, 15);
    REQUIRE(sm);
    psm_truncated(sm, 12, &fx);
    CHECK(!fx.hw_changed);
    CHECK_EQ_INT(psm_high_watermark(sm), 8);
    CHECK_EQ_INT(psm_log_end(sm), 12);
    psm_free(sm);
}

TEST(partition_sm_diverging_answer_is_ignored_unless_a_follower)
{
    struct fake fk;
    struct psm_effects fx;
    struct partition_sm *sm = leader3(&fk, 1);
    REQUIRE(sm);
    fake_epoch(&fk, 4, 0);
    psm_diverging(sm, 4, 3, &fx); /* a late answer from when this broker followed */
    CHECK(!fx.truncate);
    CHECK_EQ_INT(psm_log_end(sm), 10);
    psm_free(sm);
}

TEST(partition_sm_new_partition_hw_is_clamped_to_the_log_end)
{
    struct fake fk;
    struct partition_sm *sm = mk(&fk, 1, 1, 50, 20);
    REQUIRE(sm);
    CHECK_EQ_INT(psm_high_watermark(sm), 20);
    CHECK_EQ_INT(psm_role(sm), PSM_NONE);
    CHECK_EQ_INT(psm_leader_epoch(sm), -1);
    psm_free(sm);
}
