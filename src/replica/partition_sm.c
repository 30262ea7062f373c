/* SPDX-License-Identifier: Apache-2.0 */
/* partition_sm: one partition's ISR replication as a pure state machine (see partition_sm.h):
 * the metadata it was told, the leader's view of each follower, the HW rules, the fetch
 * checks, the one AlterPartition it may have in flight, and the follower's truncation
 * point. No log, no clock, no I/O: every fact comes in through a call or psm_ops. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "partition_sm.h"

#define DEFAULT_LAG_MS 30000
#define DEFAULT_RETRY_MS 2000

/* What the leader knows of one replica (Kafka's ReplicaState). */
struct psm_follower {
    int64_t log_end;               /* -1: no counted fetch since this leader epoch began */
    int64_t caught_up_ms;          /* -1: never */
    int64_t last_fetch_leader_end; /* the leader's log end at the previous fetch, -1 none */
    int64_t last_fetch_ms;
};

enum alter_kind { ALTER_NONE = 0, ALTER_SHRINK, ALTER_EXPAND, ALTER_RECOVER };

struct partition_sm {
    int32_t node_id;
    struct psm_config cfg;
    struct psm_ops ops;

    enum psm_role role;
    int32_t leader;
    int32_t leader_epoch;    /* -1 before the first assignment */
    int32_t partition_epoch; /* -1 before the first assignment */
    int8_t recovery;         /* PSM_RECOVERED / PSM_RECOVERING */

    /* Arrays of `cap` entries: cap > max(n_replicas, n_isr), so that an ISR of the committed
     * members plus one fits in alter_isr. followers[i] is replicas[i]'s state. */
    int32_t cap;
    int32_t n_replicas;
    int32_t *replicas;
    struct psm_follower *followers;
    int32_t n_isr;
    int32_t *isr;

    int64_t log_start, log_end, hw;
    int64_t epoch_start; /* leader: its log end when the current leader epoch began; else -1 */
    /* Leader: when its epoch began, if it took the leadership over from another broker then
     * (now_ms of that apply); else -1. */
    int64_t took_over_ms;
    /* follower: the leader refused LastFetchedEpoch (it knows no epoch at or below it): the
     * next fetch goes without it (psm_out_of_range) */
    bool skip_epoch_check;

    /* The ISR change this leader asked for. While kind != ALTER_NONE its ISR is part of the
     * maximal ISR. in_flight: sent and not answered (psm_alter_pending); parked: answered with
     * an error that drops it, waiting for the metadata. `at_ms`: when it was last sent, or
     * when it was parked or answered with a retriable error. */
    enum alter_kind alter;
    bool alter_in_flight;
    bool alter_parked;
    int64_t alter_at_ms;
    int32_t alter_base_pe;
    int8_t alter_recovery;
    int32_t n_alter_isr;
    int32_t *alter_isr;
};

/* ---- small helpers --------------------------------------------------------------------- */

/* log start <= HW <= log end, on a leader and on a follower, once psm_set_log has told the log
 * (for assert()). The HW rises only to a member's log end no higher than the leader's own
 * (leader) or to min(leader's HW, own log end) (follower); the log start rises only to at
 * most the HW (psm_fetched; a leader's owner moves it by retention below the LSO and by
 * DeleteRecords up to the HW); psm_set_log and psm_truncated pull the HW into the log's
 * bounds when the owner moves them. */
static bool offsets_ordered(const struct partition_sm *sm)
{
    return sm->log_start <= sm->hw && sm->hw <= sm->log_end;
}

static bool contains(const int32_t *v, int32_t n, int32_t x)
{
    for (int32_t i = 0; i < n; i++)
        if (v[i] == x)
            return true;
    return false;
}

static int32_t replica_index(const struct partition_sm *sm, int32_t broker)
{
    for (int32_t i = 0; i < sm->n_replicas; i++)
        if (sm->replicas[i] == broker)
            return i;
    return -1;
}

static bool eligible(const struct partition_sm *sm, int32_t broker)
{
    if (broker == sm->node_id)
        return true; /* the leader's own copy always counts: it is the log the HW is on */
    return sm->ops.replica_eligible == NULL || sm->ops.replica_eligible(sm->ops.arg, broker);
}

static void fresh_follower(struct psm_follower *f)
{
    f->log_end = -1;
    f->caught_up_ms = -1;
    f->last_fetch_leader_end = -1;
    f->last_fetch_ms = -1;
}

static bool in_maximal_isr(const struct partition_sm *sm, int32_t broker)
{
    return contains(sm->isr, sm->n_isr, broker) ||
           (sm->alter != ALTER_NONE && contains(sm->alter_isr, sm->n_alter_isr, broker));
}

static void clear_alter(struct partition_sm *sm)
{
    sm->alter = ALTER_NONE;
    sm->alter_in_flight = false;
    sm->alter_parked = false;
    sm->n_alter_isr = 0;
}

/* Calls `fn` once for each member of the maximal ISR: the committed ISR, then the members
 * the change in progress adds. Returns the count of members for which fn returned true. */
static int32_t count_maximal(const struct partition_sm *sm,
                             bool (*fn)(const struct partition_sm *, int32_t, void *), void *arg)
{
    int32_t n = 0;
    for (int32_t i = 0; i < sm->n_isr; i++)
        if (fn(sm, sm->isr[i], arg))
            n++;
    if (sm->alter != ALTER_NONE)
        for (int32_t i = 0; i < sm->n_alter_isr; i++)
            if (!contains(sm->isr, sm->n_isr, sm->alter_isr[i]) && fn(sm, sm->alter_isr[i], arg))
                n++;
    return n;
}

static bool count_eligible(const struct partition_sm *sm, int32_t broker, void *arg)
{
    (void)arg;
    return broker != sm->node_id && eligible(sm, broker);
}

struct hw_scan {
    int64_t hw;   /* min log end so far */
    bool blocked; /* a counting member's position is unknown */
};

static bool scan_member(const struct partition_sm *sm, int32_t broker, void *arg)
{
    struct hw_scan *s = arg;
    if (broker == sm->node_id || !eligible(sm, broker))
        return false;
    int32_t i = replica_index(sm, broker);
    /* An ISR member that is not a replica cannot come from a sane controller; it holds the
     * HW, like any member whose position is unknown, rather than being skipped. */
    if (i < 0 || sm->followers[i].log_end < 0)
        s->blocked = true;
    else if (sm->followers[i].log_end < s->hw)
        s->hw = sm->followers[i].log_end;
    return true;
}

/* The leader's HW rule (see the header). Moves the HW up only. */
static void leader_update_hw(struct partition_sm *sm, struct psm_effects *fx)
{
    if (sm->role != PSM_LEADER)
        return;
    struct hw_scan s = {.hw = sm->log_end, .blocked = false};
    int32_t counted = 1 + count_maximal(sm, scan_member, &s); /* 1: the leader itself */
    int32_t committed = 1;
    /* The committed ISR must reach the minimum too, not only the maximal one: a member whose
     * addition is still pending is not in the controller's ISR, so records it helped commit
     * would be missing from the replicas the controller holds eligible (the ELR). */
    for (int32_t i = 0; i < sm->n_isr; i++)
        if (count_eligible(sm, sm->isr[i], NULL))
            committed++;
    if (s.blocked || counted < sm->cfg.min_insync || committed < sm->cfg.min_insync)
        return;
    if (s.hw > sm->hw) {
        sm->hw = s.hw;
        fx->hw_changed = true;
    }
    assert(offsets_ordered(sm));
}

/* ---- AlterPartition -------------------------------------------------------------------- */

static void alter_send(struct partition_sm *sm, int64_t now_ms, struct psm_effects *fx)
{
    sm->alter_in_flight = true;
    sm->alter_parked = false;
    sm->alter_at_ms = now_ms;
    fx->send_alter = true;
}

/* Proposes the ISR in alter_isr[0..n) (already filled in) and sends it. */
static void alter_propose(struct partition_sm *sm, enum alter_kind kind, int32_t n, int8_t recovery,
                          int64_t now_ms, struct psm_effects *fx)
{
    assert(sm->alter == ALTER_NONE && n >= 1 && n <= sm->cap);
    sm->alter = kind;
    sm->n_alter_isr = n;
    sm->alter_base_pe = sm->partition_epoch;
    sm->alter_recovery = recovery;
    if (kind == ALTER_SHRINK)
        fx->isr_shrink_requested = true;
    else if (kind == ALTER_EXPAND)
        fx->isr_expand_requested = true;
    alter_send(sm, now_ms, fx);
}

/* KIP-704: a leader elected uncleanly has nothing to recover here (the follower's truncation
 * does it), so it asks at once to become RECOVERED with an ISR of itself, the only ISR the
 * controller accepts for that change. Until then the ISR does not grow. */
static void maybe_recover(struct partition_sm *sm, int64_t now_ms, struct psm_effects *fx)
{
    if (sm->role != PSM_LEADER || sm->recovery != PSM_RECOVERING || sm->alter != ALTER_NONE)
        return;
    sm->alter_isr[0] = sm->node_id;
    alter_propose(sm, ALTER_RECOVER, 1, PSM_RECOVERED, now_ms, fx);
}

static bool follower_out_of_sync(const struct partition_sm *sm, int32_t broker, int64_t now_ms)
{
    int32_t i = replica_index(sm, broker);
    if (i < 0)
        return true;
    const struct psm_follower *f = &sm->followers[i];
    /* Kafka's rule: a follower at the leader's log end is in sync however long ago it
     * fetched (nothing was appended that it lacks). */
    return f->log_end != sm->log_end && now_ms - f->caught_up_ms > sm->cfg.replica_lag_time_max_ms;
}

static void maybe_shrink(struct partition_sm *sm, int64_t now_ms, struct psm_effects *fx)
{
    if (sm->role != PSM_LEADER || sm->alter != ALTER_NONE)
        return;
    int32_t n = 0;
    bool any = false;
    for (int32_t i = 0; i < sm->n_isr; i++) {
        int32_t b = sm->isr[i];
        if (b != sm->node_id && follower_out_of_sync(sm, b, now_ms))
            any = true;
        else
            sm->alter_isr[n++] = b;
    }
    if (any && n > 0)
        alter_propose(sm, ALTER_SHRINK, n, sm->recovery, now_ms, fx);
}

static void maybe_expand(struct partition_sm *sm, int32_t broker, int64_t now_ms,
                         struct psm_effects *fx)
{
    if (sm->role != PSM_LEADER || sm->alter != ALTER_NONE || sm->recovery != PSM_RECOVERED)
        return;
    int32_t i = replica_index(sm, broker);
    if (i < 0 || broker == sm->node_id || contains(sm->isr, sm->n_isr, broker))
        return;
    int64_t end = sm->followers[i].log_end;
    /* KAFKA-7128: at or past the HW is not enough, the follower must also hold everything up
     * to the start of this leader epoch — below it the new leader's HW may still lag records
     * the previous leader had committed, and the follower could lack them. */
    if (end < sm->hw || end < sm->epoch_start || !eligible(sm, broker))
        return;
    memcpy(sm->alter_isr, sm->isr, (size_t)sm->n_isr * sizeof *sm->isr);
    sm->alter_isr[sm->n_isr] = broker;
    alter_propose(sm, ALTER_EXPAND, sm->n_isr + 1, PSM_RECOVERED, now_ms, fx);
}

/* ---- creation -------------------------------------------------------------------------- */

static int grow(int32_t cap, int32_t **r, struct psm_follower **f, int32_t **isr, int32_t **alter)
{
    *r = malloc((size_t)cap * sizeof **r);
    *f = malloc((size_t)cap * sizeof **f);
    *isr = malloc((size_t)cap * sizeof **isr);
    *alter = malloc((size_t)cap * sizeof **alter);
    if (*r && *f && *isr && *alter)
        return 0;
    free(*r);
    free(*f);
    free(*isr);
    free(*alter);
    return ERR_NOMEM;
}

struct partition_sm *psm_new(int32_t node_id, const struct psm_config *cfg,
                             const struct psm_ops *ops, int64_t hw)
{
    struct partition_sm *sm = calloc(1, sizeof *sm);
    if (sm == NULL)
        return NULL;
    if (grow(4, &sm->replicas, &sm->followers, &sm->isr, &sm->alter_isr) != 0) {
        free(sm);
        return NULL;
    }
    sm->cap = 4;
    sm->node_id = node_id;
    sm->cfg = *cfg;
    if (sm->cfg.replica_lag_time_max_ms <= 0)
        sm->cfg.replica_lag_time_max_ms = DEFAULT_LAG_MS;
    if (sm->cfg.alter_retry_ms <= 0)
        sm->cfg.alter_retry_ms = DEFAULT_RETRY_MS;
    if (sm->cfg.min_insync < 1)
        sm->cfg.min_insync = 1;
    sm->ops = *ops;
    sm->role = PSM_NONE;
    sm->leader = -1;
    sm->leader_epoch = -1;
    sm->partition_epoch = -1;
    sm->recovery = PSM_RECOVERED;
    sm->hw = hw > 0 ? hw : 0;
    sm->epoch_start = -1;
    sm->took_over_ms = -1;
    return sm;
}

void psm_free(struct partition_sm *sm)
{
    if (sm == NULL)
        return;
    free(sm->replicas);
    free(sm->followers);
    free(sm->isr);
    free(sm->alter_isr);
    free(sm);
}

static void zero_fx(struct psm_effects *fx)
{
    memset(fx, 0, sizeof *fx);
}

void psm_set_log(struct partition_sm *sm, int64_t log_start, int64_t log_end)
{
    assert(log_start <= log_end);
    sm->log_start = log_start;
    sm->log_end = log_end;
    /* The HW stays within the log, as Kafka's updateHighWatermark keeps it: a follower whose
     * log starts over past its HW (its leader's log starts there) has nothing below it. */
    if (sm->hw > log_end)
        sm->hw = log_end;
    if (sm->hw < log_start)
        sm->hw = log_start;
    assert(offsets_ordered(sm));
}

void psm_set_min_insync(struct partition_sm *sm, int32_t min_insync, int64_t now_ms,
                        struct psm_effects *fx)
{
    (void)now_ms;
    zero_fx(fx);
    sm->cfg.min_insync = min_insync < 1 ? 1 : min_insync;
    leader_update_hw(sm, fx);
}

/* ---- the metadata ---------------------------------------------------------------------- */

/* Copies the replica set and ISR of `a`, carrying each replica's follower state over by
 * broker id (fresh for a new replica). Out of memory: nothing changes. */
static int set_members(struct partition_sm *sm, const struct psm_assignment *a)
{
    int32_t need = (a->n_replicas > a->n_isr ? a->n_replicas : a->n_isr) + 1;
    bool same = a->n_replicas == sm->n_replicas &&
                (a->n_replicas == 0 || memcmp(a->replicas, sm->replicas,
                                              (size_t)a->n_replicas * sizeof *a->replicas) == 0);
    if (same && need <= sm->cap) {
        if (a->n_isr > 0)
            memmove(sm->isr, a->isr, (size_t)a->n_isr * sizeof *a->isr);
        sm->n_isr = a->n_isr;
        return 0;
    }
    int32_t cap = need > sm->cap ? need : sm->cap;
    int32_t *r, *isr, *alter;
    struct psm_follower *f;
    if (grow(cap, &r, &f, &isr, &alter) != 0)
        return ERR_NOMEM;
    for (int32_t i = 0; i < a->n_replicas; i++) {
        r[i] = a->replicas[i];
        int32_t old = replica_index(sm, r[i]);
        if (old >= 0)
            f[i] = sm->followers[old];
        else
            fresh_follower(&f[i]);
    }
    if (a->n_isr > 0)
        memcpy(isr, a->isr, (size_t)a->n_isr * sizeof *a->isr);
    if (sm->n_alter_isr > 0)
        memcpy(alter, sm->alter_isr, (size_t)sm->n_alter_isr * sizeof *alter);
    free(sm->replicas);
    free(sm->followers);
    free(sm->isr);
    free(sm->alter_isr);
    sm->replicas = r;
    sm->followers = f;
    sm->isr = isr;
    sm->alter_isr = alter;
    sm->cap = cap;
    sm->n_replicas = a->n_replicas;
    sm->n_isr = a->n_isr;
    return 0;
}

static bool is_stale(const struct partition_sm *sm, const struct psm_assignment *a)
{
    return a->leader_epoch < sm->leader_epoch ||
           (a->leader_epoch == sm->leader_epoch && a->partition_epoch <= sm->partition_epoch);
}

/* Applies a non-stale assignment. */
static void apply(struct partition_sm *sm, const struct psm_assignment *a, int64_t now_ms,
                  struct psm_effects *fx)
{
    if (set_members(sm, a) != 0)
        return; /* out of memory: still at the old epochs, so the record may come again */

    enum psm_role old_role = sm->role;
    int32_t old_leader = sm->leader, old_epoch = sm->leader_epoch;
    enum psm_role role = PSM_NONE;
    if (contains(sm->replicas, sm->n_replicas, sm->node_id))
        role = a->leader == sm->node_id ? PSM_LEADER : PSM_FOLLOWER;

    sm->role = role;
    sm->leader = role == PSM_NONE ? -1 : a->leader;
    sm->leader_epoch = a->leader_epoch;
    sm->partition_epoch = a->partition_epoch;
    sm->recovery = a->leader_recovery_state;
    /* Whatever was asked of the controller, the metadata now says what is true. */
    clear_alter(sm);

    bool moved = role != old_role || a->leader_epoch != old_epoch || sm->leader != old_leader;
    if (moved && (role != PSM_NONE || old_role != PSM_NONE)) {
        /* Before any follower append or truncation the owner fails every waiter: one parked
         * on the old role or epoch must never be answered by marks the new one moves. */
        fx->fail_waiters = true;
        fx->role_changed = true;
    }
    if ((role == PSM_FOLLOWER && moved) || (old_role == PSM_FOLLOWER && role != PSM_FOLLOWER))
        fx->fetch_changed = true;
    if (moved)
        sm->skip_epoch_check = false;

    if (role != PSM_LEADER) {
        sm->epoch_start = -1;
        sm->took_over_ms = -1;
        return;
    }
    if (old_role != PSM_LEADER || a->leader_epoch != old_epoch) {
        /* A new leader epoch: it starts at the log end, no follower position from before
         * counts, and every ISR member is given a full lag period to show up. */
        sm->epoch_start = sm->log_end;
        sm->took_over_ms = old_leader >= 0 && old_leader != sm->node_id ? now_ms : -1;
        for (int32_t i = 0; i < sm->n_replicas; i++) {
            fresh_follower(&sm->followers[i]);
            if (contains(sm->isr, sm->n_isr, sm->replicas[i]))
                sm->followers[i].caught_up_ms = now_ms;
        }
    }
    maybe_recover(sm, now_ms, fx);
    leader_update_hw(sm, fx);
}

void psm_apply(struct partition_sm *sm, const struct psm_assignment *a, int64_t now_ms,
               struct psm_effects *fx)
{
    zero_fx(fx);
    if (is_stale(sm, a))
        return;
    apply(sm, a, now_ms, fx);
}

/* ---- leader ---------------------------------------------------------------------------- */

void psm_appended(struct partition_sm *sm, int64_t log_end, int64_t now_ms, struct psm_effects *fx)
{
    (void)now_ms;
    zero_fx(fx);
    assert(log_end >= sm->log_end);
    sm->log_end = log_end;
    leader_update_hw(sm, fx);
    assert(offsets_ordered(sm));
}

static void verdict_marks(const struct partition_sm *sm, struct psm_fetch_verdict *v)
{
    v->high_watermark = sm->hw;
    v->log_start = sm->log_start;
}

int psm_follower_fetch(struct partition_sm *sm, const struct psm_fetch *f, int64_t now_ms,
                       struct psm_fetch_verdict *v, struct psm_effects *fx)
{
    zero_fx(fx);
    memset(v, 0, sizeof *v);
    v->diverging_epoch = -1;
    v->diverging_end_offset = -1;
    verdict_marks(sm, v);

    int32_t i = replica_index(sm, f->replica_id);
    if (sm->role != PSM_LEADER || i < 0 || f->replica_id == sm->node_id) {
        v->error = ERR_NOT_LEADER_OR_FOLLOWER;
        return v->error;
    }
    if (f->current_leader_epoch != -1 && f->current_leader_epoch != sm->leader_epoch) {
        v->error = f->current_leader_epoch < sm->leader_epoch ? ERR_FENCED_LEADER_EPOCH
                                                              : ERR_UNKNOWN_LEADER_EPOCH;
        return v->error;
    }
    if (f->last_fetched_epoch >= 0) {
        int32_t epoch = -1;
        int64_t end = -1;
        sm->ops.epoch_end(sm->ops.arg, f->last_fetched_epoch, &epoch, &end);
        if (epoch < 0 || end < 0) {
            /* No epoch at or below the follower's: where it diverges cannot be told, as in
             * Kafka; the follower resets its position as for any out-of-range fetch. */
            v->error = ERR_OFFSET_OUT_OF_RANGE;
            return v->error;
        }
        if (epoch < f->last_fetched_epoch || end < f->fetch_offset) {
            v->diverging = true;
            v->diverging_epoch = epoch;
            v->diverging_end_offset = end;
            return 0;
        }
    }
    if (f->fetch_offset < sm->log_start || f->fetch_offset > sm->log_end) {
        v->error = ERR_OFFSET_OUT_OF_RANGE;
        return v->error;
    }

    /* Every check passed: only now is the fetch offset the follower's log end. */
    struct psm_follower *st = &sm->followers[i];
    st->log_end = f->fetch_offset;
    if (f->fetch_offset >= sm->log_end) {
        if (now_ms > st->caught_up_ms)
            st->caught_up_ms = now_ms;
    } else if (st->last_fetch_leader_end >= 0 && f->fetch_offset >= st->last_fetch_leader_end) {
        if (st->last_fetch_ms > st->caught_up_ms)
            st->caught_up_ms = st->last_fetch_ms;
    }
    st->last_fetch_leader_end = sm->log_end;
    st->last_fetch_ms = now_ms;

    maybe_expand(sm, f->replica_id, now_ms, fx);
    leader_update_hw(sm, fx);
    verdict_marks(sm, v);
    return 0;
}

void psm_tick(struct partition_sm *sm, int64_t now_ms, struct psm_effects *fx)
{
    zero_fx(fx);
    if (sm->role != PSM_LEADER)
        return;
    /* Eligibility is read from outside and may have changed since the last call. */
    leader_update_hw(sm, fx);
    if (sm->alter != ALTER_NONE) {
        if ((sm->alter_in_flight || sm->alter_parked) &&
            now_ms - sm->alter_at_ms >= sm->cfg.alter_retry_ms)
            alter_send(sm, now_ms, fx);
        return;
    }
    maybe_recover(sm, now_ms, fx);
    maybe_shrink(sm, now_ms, fx);
}

bool psm_alter_pending(const struct partition_sm *sm)
{
    return sm->alter != ALTER_NONE && sm->alter_in_flight;
}

void psm_alter_request(const struct partition_sm *sm, struct psm_alter_request *out)
{
    out->leader_epoch = sm->leader_epoch;
    out->partition_epoch = sm->alter_base_pe;
    out->n_isr = sm->n_alter_isr;
    out->isr = sm->alter_isr;
    out->leader_recovery_state = sm->alter_recovery;
}

static bool same_set(const int32_t *a, int32_t na, const int32_t *b, int32_t nb)
{
    if (na != nb)
        return false;
    for (int32_t i = 0; i < na; i++)
        if (!contains(b, nb, a[i]))
            return false;
    return true;
}

void psm_alter_answered(struct partition_sm *sm, int16_t err, const struct psm_assignment *now,
                        int64_t now_ms, struct psm_effects *fx)
{
    zero_fx(fx);
    if (sm->role != PSM_LEADER || !psm_alter_pending(sm))
        return;
    switch (err) {
    case ERR_NONE:
        break;
    case ERR_INVALID_UPDATE_VERSION:
    case ERR_FENCED_LEADER_EPOCH:
    case ERR_NEW_LEADER_ELECTED:
    case ERR_INELIGIBLE_REPLICA:
    case ERR_UNKNOWN_TOPIC_OR_PARTITION:
        /* Not sent again at once, but its ISR keeps counting toward the HW: an earlier copy
         * of the request may have been applied (a retry after a lost answer), and reverting
         * an expansion the controller made would let the HW pass the new member's log end. */
        sm->alter_in_flight = false;
        sm->alter_parked = true;
        sm->alter_at_ms = now_ms;
        return;
    default:
        sm->alter_at_ms = now_ms; /* kept in flight: psm_tick sends it again */
        return;
    }
    if (now == NULL)
        return;

    /* AlterPartition's answer carries no replica set: an empty one keeps the current. */
    struct psm_assignment a = *now;
    if (a.n_replicas == 0) {
        a.n_replicas = sm->n_replicas;
        a.replicas = sm->replicas;
    }
    if (a.leader_epoch == sm->leader_epoch && a.partition_epoch == sm->partition_epoch) {
        /* The controller had nothing to change: the ISR asked for already was the ISR. An
         * answer with another ISR belongs to an older request and changes nothing. */
        if (a.partition_epoch != sm->alter_base_pe ||
            !same_set(a.isr, a.n_isr, sm->alter_isr, sm->n_alter_isr))
            return;
        if (set_members(sm, &a) != 0)
            return;
        sm->recovery = a.leader_recovery_state;
        clear_alter(sm);
        leader_update_hw(sm, fx);
        return;
    }
    if (is_stale(sm, &a))
        return; /* an answer older than the metadata: the request in flight stays */
    apply(sm, &a, now_ms, fx);
}

bool psm_hw_covers_epoch_start(const struct partition_sm *sm)
{
    return sm->role == PSM_LEADER && sm->hw >= sm->epoch_start;
}

int64_t psm_epoch_start_offset(const struct partition_sm *sm)
{
    return sm->role == PSM_LEADER ? sm->epoch_start : -1;
}

int64_t psm_took_over_ms(const struct partition_sm *sm)
{
    return sm->role == PSM_LEADER ? sm->took_over_ms : -1;
}

/* ---- follower -------------------------------------------------------------------------- */

void psm_fetched(struct partition_sm *sm, int64_t log_end, int64_t leader_hw,
                 int64_t leader_log_start, struct psm_effects *fx)
{
    zero_fx(fx);
    /* The local log's end, whatever the role. It moves down only through psm_truncated (or
     * psm_set_log when the log starts over), never between two fetches. */
    assert(log_end >= sm->log_end);
    sm->log_end = log_end;
    if (sm->role != PSM_FOLLOWER)
        return;
    sm->skip_epoch_check = false;
    int64_t hw = leader_hw < log_end ? leader_hw : log_end;
    if (hw > sm->hw) {
        sm->hw = hw;
        fx->hw_changed = true;
    }
    /* The leader's log start moved past ours (retention, DeleteRecords): ours follows, never
     * past the HW, as Kafka's follower does; the owner drops whole segments below it. */
    int64_t start = leader_log_start < sm->hw ? leader_log_start : sm->hw;
    if (start > sm->log_start)
        sm->log_start = start;
    assert(offsets_ordered(sm));
}

void psm_diverging(struct partition_sm *sm, int32_t epoch, int64_t end_offset,
                   struct psm_effects *fx)
{
    zero_fx(fx);
    if (sm->role != PSM_FOLLOWER)
        return; /* a late answer to a fetch of an older role: nothing may be truncated */
    int64_t to;
    if (end_offset < 0) {
        to = sm->hw; /* the leader knows no end: back to what is known committed */
    } else if (epoch < 0) {
        to = end_offset;
    } else {
        int32_t mine = -1;
        int64_t my_end = -1;
        sm->ops.epoch_end(sm->ops.arg, epoch, &mine, &my_end);
        if (mine == epoch)
            to = end_offset < my_end ? end_offset : my_end;
        else if (mine >= 0)
            /* Only an older epoch here: truncate to its end; the next fetch names it as
             * LastFetchedEpoch and the leader checks again (KIP-279). */
            to = my_end;
        else
            /* No epoch at or below the leader's: its end offset is the only bound known. */
            to = end_offset;
    }
    if (to > sm->log_end)
        to = sm->log_end;
    if (to < 0)
        to = 0;
    /* Even at the log end the owner truncates: an epoch-cache entry that starts there, from
     * a leader this follower once heard, must go. */
    fx->truncate = true;
    fx->truncate_to = to;
    fx->truncate_below_hw = to < sm->hw;
}

void psm_out_of_range(struct partition_sm *sm, int64_t leader_log_start, int64_t leader_log_end,
                      struct psm_effects *fx)
{
    zero_fx(fx);
    if (sm->role != PSM_FOLLOWER || leader_log_end < 0)
        return;
    if (leader_log_end < sm->log_end) {
        /* A leader with a shorter log (an unclean election chose it): everything past its
         * end goes, committed as this replica saw it or not. */
        fx->truncate = true;
        fx->truncate_to = leader_log_end;
        fx->truncate_below_hw = leader_log_end < sm->hw;
        return;
    }
    if (leader_log_start > sm->log_end) {
        fx->reset = true;
        fx->reset_to = leader_log_start;
        return;
    }
    /* The fetch offset is in the leader's log, so it refused LastFetchedEpoch: it knows no
     * epoch at or below it, and where the logs diverge cannot be told. Kafka's rule for an
     * undefined epoch end: back to the high watermark, and fetch from there unchecked. */
    sm->skip_epoch_check = true;
    if (sm->hw < sm->log_end) {
        fx->truncate = true;
        fx->truncate_to = sm->hw;
    }
}

bool psm_fetch_checks_epoch(const struct partition_sm *sm)
{
    return !sm->skip_epoch_check;
}

void psm_truncated(struct partition_sm *sm, int64_t log_end, struct psm_effects *fx)
{
    zero_fx(fx);
    sm->log_end = log_end;
    if (sm->log_start > log_end)
        sm->log_start = log_end;
    if (sm->hw > log_end) {
        sm->hw = log_end;
        fx->hw_changed = true;
    }
    assert(offsets_ordered(sm));
}

/* ---- reading --------------------------------------------------------------------------- */

enum psm_role psm_role(const struct partition_sm *sm)
{
    return sm->role;
}

int32_t psm_leader(const struct partition_sm *sm)
{
    return sm->leader;
}

int32_t psm_leader_epoch(const struct partition_sm *sm)
{
    return sm->leader_epoch;
}

int32_t psm_partition_epoch(const struct partition_sm *sm)
{
    return sm->partition_epoch;
}

int8_t psm_leader_recovery_state(const struct partition_sm *sm)
{
    return sm->recovery;
}

int64_t psm_high_watermark(const struct partition_sm *sm)
{
    return sm->hw;
}

int64_t psm_log_end(const struct partition_sm *sm)
{
    return sm->log_end;
}

int64_t psm_log_start(const struct partition_sm *sm)
{
    return sm->log_start;
}

const int32_t *psm_isr(const struct partition_sm *sm, int32_t *n)
{
    *n = sm->n_isr;
    return sm->isr;
}

const int32_t *psm_replicas(const struct partition_sm *sm, int32_t *n)
{
    *n = sm->n_replicas;
    return sm->replicas;
}

bool psm_in_isr(const struct partition_sm *sm, int32_t broker)
{
    return contains(sm->isr, sm->n_isr, broker);
}

bool psm_is_replica(const struct partition_sm *sm, int32_t broker)
{
    return replica_index(sm, broker) >= 0;
}

int32_t psm_isr_count(const struct partition_sm *sm)
{
    bool self = sm->role == PSM_LEADER || in_maximal_isr(sm, sm->node_id);
    return (self ? 1 : 0) + count_maximal(sm, count_eligible, NULL);
}

int64_t psm_follower_log_end(const struct partition_sm *sm, int32_t broker)
{
    int32_t i = replica_index(sm, broker);
    if (sm->role != PSM_LEADER || i < 0 || broker == sm->node_id)
        return -1;
    return sm->followers[i].log_end;
}

int64_t psm_follower_caught_up_ms(const struct partition_sm *sm, int32_t broker)
{
    int32_t i = replica_index(sm, broker);
    if (sm->role != PSM_LEADER || i < 0 || broker == sm->node_id)
        return -1;
    return sm->followers[i].caught_up_ms;
}
