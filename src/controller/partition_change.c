/* SPDX-License-Identifier: Apache-2.0 */
/* partition_change: how the controller changes a partition — brokers leaving ISRs, clean and
 * unclean elections, preferred leaders, AlterPartition, ElectLeaders and reassignments —
 * always as one PARTITION_CHANGE per partition and decision, computed against the image as
 * the decision's broker overrides will leave it. The rules are controller_sm.h's. */
#include "controller/controller_int.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/arena.h"
#include "base/err.h"

#define UNCLEAN_KEY "unclean.leader.election.enable"
#define MIN_ISR_KEY "min.insync.replicas"
#define RESOURCE_TOPIC 2
#define RESOURCE_BROKER 4
#define RECOVERED 0
#define RECOVERING 1

/* ---- the plan and its view of the brokers ------------------------------------------------- */

bool ctl_plan_init(struct ctl_plan *pl, const struct ctl_sm *c, const struct meta_image *img,
                   struct ctl_out *out)
{
    size_t n;
    meta_image_brokers(img, &n);
    memset(pl, 0, sizeof *pl);
    pl->c = c;
    pl->img = img;
    pl->out = out;
    pl->focus = -1;
    /* Every registered broker, and one that is registering now. */
    pl->cap_over = n + 1;
    pl->over = out->arena ? arena_alloc(out->arena, pl->cap_over * sizeof *pl->over) : NULL;
    if (pl->over == NULL) {
        out->oom = true;
        return false;
    }
    return true;
}

static struct ctl_override *find_override(const struct ctl_plan *pl, int32_t id)
{
    for (size_t i = 0; i < pl->n_over; i++)
        if (pl->over[i].id == id)
            return &pl->over[i];
    return NULL;
}

bool ctl_plan_override(struct ctl_plan *pl, int32_t id, bool fenced, bool shutting_down, bool evict)
{
    struct ctl_override *o = find_override(pl, id);
    if (o == NULL) {
        if (pl->n_over == pl->cap_over) {
            pl->out->oom = true;
            return false;
        }
        o = &pl->over[pl->n_over++];
    }
    *o = (struct ctl_override){id, fenced, shutting_down, evict, false};
    return true;
}

void ctl_plan_unclean(struct ctl_plan *pl, int32_t id)
{
    struct ctl_override *o = find_override(pl, id);
    assert(o != NULL);
    o->unclean = true;
}

/* Broker `id` as the decision leaves it: false if it is not registered. */
static bool view(const struct ctl_plan *pl, int32_t id, bool *fenced, bool *shutting_down)
{
    const struct ctl_override *o = find_override(pl, id);
    const struct meta_broker *b;
    if (o) {
        *fenced = o->fenced;
        *shutting_down = o->shutting_down;
        return true;
    }
    b = meta_image_broker_by_id(pl->img, id);
    if (b == NULL)
        return false;
    *fenced = b->fenced;
    *shutting_down = b->shutting_down;
    return true;
}

bool ctl_plan_usable(const struct ctl_plan *pl, int32_t id)
{
    bool fenced, shutting;
    return view(pl, id, &fenced, &shutting) && !fenced && !shutting;
}

/* Registered and unfenced, perhaps shutting down: it still serves what it leads. */
static bool alive(const struct ctl_plan *pl, int32_t id)
{
    bool fenced, shutting;
    return view(pl, id, &fenced, &shutting) && !fenced;
}

static bool evicted(const struct ctl_plan *pl, int32_t id)
{
    const struct ctl_override *o = find_override(pl, id);
    return o && o->evict;
}

static bool unclean(const struct ctl_plan *pl, int32_t id)
{
    const struct ctl_override *o = find_override(pl, id);
    return o && o->unclean;
}

static bool has(const int32_t *v, int32_t n, int32_t x)
{
    for (int32_t i = 0; i < n; i++)
        if (v[i] == x)
            return true;
    return false;
}

static bool same_list(const int32_t *a, int32_t na, const int32_t *b, int32_t nb)
{
    return na == nb && (na == 0 || memcmp(a, b, (size_t)na * sizeof *a) == 0);
}

static bool same_set(const int32_t *a, int32_t na, const int32_t *b, int32_t nb)
{
    if (na != nb)
        return false;
    for (int32_t i = 0; i < na; i++)
        if (!has(b, nb, a[i]))
            return false;
    return true;
}

/* Every member of b is in a. */
static bool has_all(const int32_t *a, int32_t na, const int32_t *b, int32_t nb)
{
    for (int32_t i = 0; i < nb; i++)
        if (!has(a, na, b[i]))
            return false;
    return true;
}

/* -1 not set (or not a boolean), 0 false, 1 true. */
static int config_bool(const char *v)
{
    if (v == NULL)
        return -1;
    if (strcasecmp(v, "true") == 0)
        return 1;
    if (strcasecmp(v, "false") == 0)
        return 0;
    return -1;
}

/* unclean.leader.election.enable: the topic's, else the cluster-wide dynamic default, else
 * the controller's static config. */
static bool unclean_enabled(const struct ctl_plan *pl, const char *topic)
{
    int v = config_bool(meta_image_config_get(pl->img, RESOURCE_TOPIC, topic, UNCLEAN_KEY));
    if (v < 0)
        v = config_bool(meta_image_config_get(pl->img, RESOURCE_BROKER, "", UNCLEAN_KEY));
    if (v < 0)
        return pl->c->cfg.unclean_leader_election;
    return v == 1;
}

/* min.insync.replicas as a parsed value >= 1, or 0 when `v` is not one. */
static int32_t config_min_isr(const char *v)
{
    char *end;
    long long x;
    if (v == NULL || *v == '\0')
        return 0;
    x = strtoll(v, &end, 10);
    return *end == '\0' && x >= 1 && x <= INT32_MAX ? (int32_t)x : 0;
}

/* The min.insync.replicas the partition's leader enforces, as low as it may be: the topic's,
 * else the lowest of the cluster-wide dynamic default (else the controller's static config)
 * and the per-broker dynamic values of its replicas (a broker's own static value cannot be
 * seen from here: controller_sm.h says why it must not be lower). A lower value only keeps
 * replicas out of the ELR, which is the safe side. */
static int32_t min_isr(const struct ctl_plan *pl, const char *topic, const struct meta_partition *p)
{
    int32_t v = config_min_isr(meta_image_config_get(pl->img, RESOURCE_TOPIC, topic, MIN_ISR_KEY));
    char id[16];
    if (v > 0)
        return v;
    v = config_min_isr(meta_image_config_get(pl->img, RESOURCE_BROKER, "", MIN_ISR_KEY));
    if (v == 0)
        v = pl->c->cfg.min_insync_replicas > 0 ? pl->c->cfg.min_insync_replicas : 1;
    for (int32_t i = 0; i < p->n_replicas; i++) {
        snprintf(id, sizeof id, "%d", p->replicas[i]);
        int32_t b =
            config_min_isr(meta_image_config_get(pl->img, RESOURCE_BROKER, id, MIN_ISR_KEY));
        if (b > 0 && b < v)
            v = b;
    }
    return v;
}

bool ctl_leads_any(const struct meta_image *img, int32_t id)
{
    size_t n;
    const struct meta_topic *const *ts = meta_image_topics(img, &n);
    for (size_t i = 0; i < n; i++)
        for (int32_t j = 0; j < ts[i]->n_partitions; j++)
            if (ts[i]->partitions[j].leader == id)
                return true;
    return false;
}

/* ---- building one change ------------------------------------------------------------------ */

/* A partition as a decision leaves it. Arrays are borrowed (from the image or the plan's
 * scratch) until emit() copies them into the out's arena. */
struct target {
    int32_t leader;
    int8_t recovery;
    int32_t n_replicas, n_isr, n_adding, n_removing, n_elr;
    const int32_t *replicas, *adding, *removing;
    int32_t *isr; /* room for n_replicas (at least one) */
    int32_t *elr; /* as much room; set by target_elr() once the ISR and leader are decided */
    bool unclean_election; /* the new leader was elected uncleanly: no ELR survives it */
};

/* A target equal to the partition, with room to change the ISR (the plan's scratch, which
 * serves one target at a time); false on out of memory. */
static bool target_of(struct ctl_plan *pl, const struct meta_partition *p, struct target *t)
{
    int32_t room = p->n_replicas > p->n_isr ? p->n_replicas : p->n_isr;
    struct ctl_out *o = pl->out;
    if (p->n_elr > room)
        room = p->n_elr;
    *t = (struct target){
        .leader = p->leader,
        .recovery = p->leader_recovery_state,
        .n_replicas = p->n_replicas,
        .replicas = p->replicas,
        .n_isr = p->n_isr,
        .n_adding = p->n_adding,
        .adding = p->adding,
        .n_removing = p->n_removing,
        .removing = p->removing,
        .n_elr = p->n_elr,
    };
    if (room < 1)
        room = 1;
    if (2 * room > pl->cap_scratch) {
        int32_t cap = 2 * room > 2 * pl->cap_scratch ? 2 * room : 2 * pl->cap_scratch;
        pl->scratch = o->arena ? arena_alloc(o->arena, (size_t)cap * sizeof *pl->scratch) : NULL;
        if (pl->scratch == NULL) {
            pl->cap_scratch = 0;
            o->oom = true;
            return false;
        }
        pl->cap_scratch = cap;
    }
    t->isr = pl->scratch;
    t->elr = pl->scratch + pl->cap_scratch / 2;
    if (p->n_isr)
        memcpy(t->isr, p->isr, (size_t)p->n_isr * sizeof *t->isr);
    if (p->n_elr)
        memcpy(t->elr, p->elr, (size_t)p->n_elr * sizeof *t->elr);
    return true;
}

static bool target_changes(const struct meta_partition *p, const struct target *t)
{
    return t->leader != p->leader || t->recovery != p->leader_recovery_state ||
           !same_list(t->isr, t->n_isr, p->isr, p->n_isr) ||
           !same_list(t->elr, t->n_elr, p->elr, p->n_elr) ||
           !same_list(t->replicas, t->n_replicas, p->replicas, p->n_replicas) ||
           !same_list(t->adding, t->n_adding, p->adding, p->n_adding) ||
           !same_list(t->removing, t->n_removing, p->removing, p->n_removing);
}

/* Appends the PARTITION_CHANGE that turns `p` into `t`: the partition epoch goes up by one,
 * the leader epoch when the leader changes or a replica leaves the replicas (Kafka's
 * PartitionChangeBuilder: the removed replica's fetches are fenced), never for the ISR alone
 * (KAFKA-15021). */
static bool emit(struct ctl_out *o, const struct meta_topic *topic, const struct meta_partition *p,
                 const struct target *t)
{
    struct meta_record *r = ctl_out_add(o);
    if (r == NULL)
        return false;
    r->type = META_REC_PARTITION_CHANGE;
    memcpy(r->u.partition.topic_id, topic->id, 16);
    r->u.partition.partition = p->partition;
    r->u.partition.leader = t->leader;
    r->u.partition.leader_epoch =
        p->leader_epoch +
        (t->leader != p->leader || !has_all(t->replicas, t->n_replicas, p->replicas, p->n_replicas)
             ? 1
             : 0);
    r->u.partition.partition_epoch = p->partition_epoch + 1;
    r->u.partition.leader_recovery_state = t->recovery;
    r->u.partition.n_replicas = t->n_replicas;
    r->u.partition.replicas = ctl_out_i32s(o, t->replicas, t->n_replicas);
    r->u.partition.n_isr = t->n_isr;
    r->u.partition.isr = ctl_out_i32s(o, t->isr, t->n_isr);
    r->u.partition.n_adding = t->n_adding;
    r->u.partition.adding = ctl_out_i32s(o, t->adding, t->n_adding);
    r->u.partition.n_removing = t->n_removing;
    r->u.partition.removing = ctl_out_i32s(o, t->removing, t->n_removing);
    r->u.partition.n_elr = t->n_elr;
    r->u.partition.elr = ctl_out_i32s(o, t->elr, t->n_elr);
    return !o->oom;
}

/* Whether the partition keeps an ELR member with a clean record once this decision applies:
 * one that is not registering after an unclean shutdown and is still a replica. */
static bool clean_elr_left(const struct ctl_plan *pl, const struct meta_partition *p)
{
    for (int32_t i = 0; i < p->n_elr; i++)
        if (!unclean(pl, p->elr[i]) && has(p->replicas, p->n_replicas, p->elr[i]))
            return true;
    return false;
}

/* The evicted brokers leave the ISR. When every member goes, the last one (the leader when
 * it was one, else the first member) stays as the one complete copy — unless it registers
 * after an unclean shutdown while the ELR keeps a member with a clean record: then the ISR
 * becomes empty and that member will lead. A partition whose ISR is empty already and whose
 * last ELR member registers uncleanly gets that member back as its ISR (the last copy known,
 * as for an ISR member). */
static void evict_isr(const struct ctl_plan *pl, const struct meta_partition *p, struct target *t)
{
    int32_t n = 0;
    for (int32_t i = 0; i < p->n_isr; i++)
        if (!evicted(pl, p->isr[i]))
            t->isr[n++] = p->isr[i];
    if (n == 0 && p->n_isr > 0) {
        int32_t last = has(p->isr, p->n_isr, p->leader) ? p->leader : p->isr[0];
        if (!unclean(pl, last) || !clean_elr_left(pl, p))
            t->isr[n++] = last;
    } else if (p->n_isr == 0 && p->n_elr > 0 && !clean_elr_left(pl, p)) {
        t->isr[n++] = p->elr[0];
    }
    t->n_isr = n;
}

/* The target's ELR, from the partition's and the ISR and leader the decision chose: while the
 * new ISR is below min.insync.replicas the HW does not advance, so whoever was in the ISR or
 * the ELR until now holds every committed record and stays eligible — the old ELR and the
 * members leaving the ISR — except a replica back in the ISR, one registering after an
 * unclean shutdown and one no longer a replica. At or above the minimum the HW moves on
 * without them: no ELR. An unclean election leaves none either (the new leader's log is the
 * partition's history from then on). */
static void target_elr(const struct ctl_plan *pl, const struct meta_topic *topic,
                       const struct meta_partition *p, struct target *t)
{
    int32_t n = 0;
    bool left = false;
    t->n_elr = 0;
    for (int32_t i = 0; i < p->n_isr && !left; i++)
        left = !has(t->isr, t->n_isr, p->isr[i]);
    /* Nobody had or gains a place: skip the config look-ups (every tick walks every
     * partition). */
    if (t->unclean_election || (p->n_elr == 0 && !left) || t->n_isr >= min_isr(pl, topic->name, p))
        return;
    for (int32_t k = 0; k < p->n_elr + p->n_isr; k++) {
        int32_t x = k < p->n_elr ? p->elr[k] : p->isr[k - p->n_elr];
        if (has(t->isr, t->n_isr, x) || unclean(pl, x) || !has(t->replicas, t->n_replicas, x) ||
            has(t->elr, n, x))
            continue;
        t->elr[n++] = x;
    }
    t->n_elr = n;
}

/* The first replica in replica order that is in the target ISR and usable, or -1. */
static int32_t clean_candidate(const struct ctl_plan *pl, const struct target *t)
{
    for (int32_t i = 0; i < t->n_replicas; i++)
        if (has(t->isr, t->n_isr, t->replicas[i]) && ctl_plan_usable(pl, t->replicas[i]))
            return t->replicas[i];
    return -1;
}

/* The first replica in replica order that is in the partition's ELR, usable, and not
 * registering after an unclean shutdown in this decision, or -1. */
static int32_t elr_candidate(const struct ctl_plan *pl, const struct meta_partition *p,
                             const struct target *t)
{
    for (int32_t i = 0; i < t->n_replicas; i++)
        if (has(p->elr, p->n_elr, t->replicas[i]) && !unclean(pl, t->replicas[i]) &&
            ctl_plan_usable(pl, t->replicas[i]))
            return t->replicas[i];
    return -1;
}

/* Elects the target's leader: clean if possible, from the ISR, else from the ELR (the ISR
 * becomes that replica alone: it holds every committed record); a leader that is only
 * shutting down keeps its partitions when no one else could take them (it still serves
 * them, and they move at its fencing); else unclean when the topic allows it (the ISR
 * becomes the new leader alone, RECOVERING); else none, with the ISR left as it is. */
static void elect(const struct ctl_plan *pl, const struct meta_topic *topic,
                  const struct meta_partition *p, struct target *t)
{
    int32_t cand = clean_candidate(pl, t);
    if (cand >= 0) {
        t->leader = cand;
        return;
    }
    cand = elr_candidate(pl, p, t);
    if (cand >= 0) {
        t->leader = cand;
        t->isr[0] = cand;
        t->n_isr = 1;
        return;
    }
    if (p->leader >= 0 && has(p->isr, p->n_isr, p->leader) && alive(pl, p->leader)) {
        /* It stays in the ISR it leads, even when leaving the others'. */
        t->leader = p->leader;
        if (!has(t->isr, t->n_isr, t->leader))
            t->isr[t->n_isr++] = t->leader;
        return;
    }
    if (unclean_enabled(pl, topic->name)) {
        for (int32_t i = 0; i < t->n_replicas; i++) {
            if (ctl_plan_usable(pl, t->replicas[i])) {
                t->leader = t->replicas[i];
                t->isr[0] = t->leader;
                t->n_isr = 1;
                t->recovery = RECOVERING;
                t->unclean_election = true;
                return;
            }
        }
    }
    t->leader = -1;
}

/* Whether the target's leader must be elected again: none, out of the ISR, fenced, or
 * shutting down and leaving its leaderships in this decision. A leader this image does not
 * know is left alone. */
static bool needs_election(const struct ctl_plan *pl, const struct target *t)
{
    bool fenced, shutting;
    if (t->leader < 0 || !has(t->isr, t->n_isr, t->leader))
        return true;
    if (!view(pl, t->leader, &fenced, &shutting))
        return false;
    return fenced || (shutting && evicted(pl, t->leader));
}

/* ---- a reassignment's end ---------------------------------------------------------------- */

/* Kafka's rule (PartitionReassignmentReplicas.maybeCompleteReassignment): a reassignment in
 * progress in `t` is done once, with the replicas being removed left out of the replicas and
 * the ISR, neither is empty and the ISR holds every replica that stays; the target's replicas
 * and ISR become those and nothing is adding or removing any more. Tally adds that some
 * replica that stays is usable, so that a reassignment never ends in an offline partition (it
 * ends at a later look). False only on out of memory. */
static bool try_complete(struct ctl_plan *pl, struct target *t)
{
    int32_t *reps, n_reps = 0, n_isr = 0;
    bool usable = false;

    if (t->n_adding == 0 && t->n_removing == 0)
        return true;
    for (int32_t i = 0; i < t->n_isr; i++)
        n_isr += !has(t->removing, t->n_removing, t->isr[i]);
    for (int32_t i = 0; i < t->n_replicas; i++) {
        int32_t r = t->replicas[i];
        if (has(t->removing, t->n_removing, r))
            continue;
        if (!has(t->isr, t->n_isr, r))
            return true; /* a replica that stays is not in sync yet */
        n_reps++;
        usable = usable || ctl_plan_usable(pl, r);
    }
    if (n_isr == 0 || n_reps == 0 || !usable)
        return true;
    reps = arena_alloc(pl->out->arena, (size_t)n_reps * sizeof *reps);
    if (reps == NULL) {
        pl->out->oom = true;
        return false;
    }
    n_reps = 0;
    for (int32_t i = 0; i < t->n_replicas; i++)
        if (!has(t->removing, t->n_removing, t->replicas[i]))
            reps[n_reps++] = t->replicas[i];
    n_isr = 0;
    for (int32_t i = 0; i < t->n_isr; i++)
        if (!has(t->removing, t->n_removing, t->isr[i]))
            t->isr[n_isr++] = t->isr[i];
    t->n_isr = n_isr;
    t->replicas = reps;
    t->n_replicas = n_reps;
    t->adding = t->removing = NULL;
    t->n_adding = t->n_removing = 0;
    return true;
}

/* After a change of the replicas or the ISR the leader asked for: it stays while it is a
 * replica in the ISR and usable; otherwise the first usable replica in the ISR takes over;
 * with none, a leader still in the ISR keeps it (it is shutting down: the periodic look moves
 * it once someone can take over), else the partition is offline. */
static void settle_leader(const struct ctl_plan *pl, struct target *t)
{
    bool in = has(t->isr, t->n_isr, t->leader) && has(t->replicas, t->n_replicas, t->leader);
    int32_t cand;
    if (in && ctl_plan_usable(pl, t->leader))
        return;
    cand = clean_candidate(pl, t);
    if (cand >= 0)
        t->leader = cand;
    else if (!in)
        t->leader = -1;
}

size_t ctl_plan_partitions(struct ctl_plan *pl)
{
    size_t n_topics, added = 0;
    const struct meta_topic *const *ts = meta_image_topics(pl->img, &n_topics);

    for (size_t i = 0; i < n_topics && !pl->out->oom; i++) {
        for (int32_t j = 0; j < ts[i]->n_partitions && !pl->out->oom; j++) {
            const struct meta_partition *p = &ts[i]->partitions[j];
            struct target t;
            if (pl->focus >= 0 && !has(p->replicas, p->n_replicas, pl->focus))
                continue;
            if (!target_of(pl, p, &t))
                break;
            evict_isr(pl, p, &t);
            /* A reassignment may end with any change of the ISR (Kafka's builder looks at
             * every change): one whose adding replica joined while a removed one was still
             * needed, or whose last laggard was fenced out. */
            if (!try_complete(pl, &t))
                break;
            if (needs_election(pl, &t))
                elect(pl, ts[i], p, &t);
            target_elr(pl, ts[i], p, &t);
            if (!target_changes(p, &t))
                continue;
            if (!emit(pl->out, ts[i], p, &t))
                break;
            added++;
        }
    }
    return added;
}

size_t ctl_plan_preferred(struct ctl_plan *pl, int32_t budget, int64_t now_ms, bool *more)
{
    size_t n_topics, moved = 0;
    const struct meta_topic *const *ts = meta_image_topics(pl->img, &n_topics);
    int64_t settle = pl->c->cfg.session_timeout_ms;

    *more = false;
    for (size_t i = 0; i < n_topics && !pl->out->oom; i++) {
        for (int32_t j = 0; j < ts[i]->n_partitions && !pl->out->oom; j++) {
            const struct meta_partition *p = &ts[i]->partitions[j];
            const struct ctl_session *s;
            struct target t;
            int32_t pref;
            if (p->n_replicas == 0 || (pref = p->replicas[0]) == p->leader)
                continue;
            if (!has(p->isr, p->n_isr, pref) || !ctl_plan_usable(pl, pref))
                continue;
            /* A broker back from a restart is still warming its page cache: it gets its
             * leaderships back only after a whole session unfenced. */
            s = ctl_session_find(pl->c, pref);
            if (s == NULL || s->unfenced_since_ms < 0 || now_ms - s->unfenced_since_ms < settle)
                continue;
            if ((int32_t)moved == budget) {
                *more = true;
                return moved;
            }
            if (!target_of(pl, p, &t))
                return moved;
            t.leader = pref;
            target_elr(pl, ts[i], p, &t);
            if (!emit(pl->out, ts[i], p, &t))
                return moved;
            moved++;
        }
    }
    return moved;
}

/* ---- AlterPartition ------------------------------------------------------------------------ */

/* Each member of v is in the replicas, once. */
static bool valid_isr(const int32_t *v, int32_t n, const struct meta_partition *p)
{
    for (int32_t i = 0; i < n; i++)
        if (!has(p->replicas, p->n_replicas, v[i]) || has(v, i, v[i]))
            return false;
    return true;
}

int ctl_sm_alter_partition(struct ctl_sm *c, const struct meta_image *img,
                           const struct ctl_alter_partition *a, struct ctl_out *out)
{
    const struct meta_broker *b = meta_image_broker_by_id(img, a->broker_id);
    const struct meta_topic *topic;
    const struct meta_partition *p;
    struct ctl_plan pl;
    struct target t;

    if (a->broker_epoch != -1 && (b == NULL || b->epoch != a->broker_epoch))
        return ERR_STALE_BROKER_EPOCH;
    topic = meta_image_topic_by_id(img, a->topic_id);
    if (topic == NULL)
        return ERR_UNKNOWN_TOPIC_ID;
    if (a->partition < 0 || a->partition >= topic->n_partitions)
        return ERR_UNKNOWN_TOPIC_OR_PARTITION;
    p = &topic->partitions[a->partition];
    /* An older leader epoch is a deposed leader; a newer one means this image lags behind
     * the one the leader acted on. */
    if (a->leader_epoch < p->leader_epoch)
        return ERR_FENCED_LEADER_EPOCH;
    if (a->leader_epoch > p->leader_epoch)
        return ERR_NOT_CONTROLLER;
    if (a->broker_id != p->leader)
        return ERR_INVALID_REQUEST;
    if (a->partition_epoch != p->partition_epoch)
        return ERR_INVALID_UPDATE_VERSION;
    if (a->n_isr < 1 || a->isr == NULL || !valid_isr(a->isr, a->n_isr, p) ||
        !has(a->isr, a->n_isr, p->leader))
        return ERR_INVALID_REQUEST;
    /* KIP-704: a leader still recovering holds the ISR alone, and recovery never restarts. */
    if (a->leader_recovery_state < RECOVERED || a->leader_recovery_state > RECOVERING ||
        (a->leader_recovery_state == RECOVERING &&
         (a->n_isr > 1 || p->leader_recovery_state == RECOVERED)))
        return ERR_INVALID_REQUEST;
    for (int32_t i = 0; i < a->n_isr; i++) {
        const struct meta_broker *m;
        if (has(p->isr, p->n_isr, a->isr[i]))
            continue;
        m = meta_image_broker_by_id(img, a->isr[i]);
        if (m == NULL || m->fenced || m->shutting_down ||
            (a->isr_epochs && a->isr_epochs[i] != -1 && a->isr_epochs[i] != m->epoch))
            return ERR_INELIGIBLE_REPLICA;
    }
    if (same_set(a->isr, a->n_isr, p->isr, p->n_isr) &&
        a->leader_recovery_state == p->leader_recovery_state)
        return 0;

    if (!ctl_plan_init(&pl, c, img, out) || !target_of(&pl, p, &t))
        return ERR_NOMEM;
    memcpy(t.isr, a->isr, (size_t)a->n_isr * sizeof *t.isr);
    t.n_isr = a->n_isr;
    t.recovery = a->leader_recovery_state;
    /* A reassignment whose last replica joins the ISR ends here; the leader leaves when it
     * ended the leader's place, or when it is shutting down and the new ISR holds someone who
     * can take over. */
    if (!try_complete(&pl, &t))
        return ERR_NOMEM;
    settle_leader(&pl, &t);
    target_elr(&pl, topic, p, &t);
    if (out->oom || !emit(out, topic, p, &t))
        return ERR_NOMEM;
    return t.leader != p->leader ? ERR_NEW_LEADER_ELECTED : 0;
}

/* ---- ElectLeaders ------------------------------------------------------------------------- */

int ctl_sm_elect(struct ctl_sm *c, const struct meta_image *img, const uint8_t topic_id[16],
                 int32_t partition, bool unclean, struct ctl_out *out)
{
    const struct meta_topic *topic = meta_image_topic_by_id(img, topic_id);
    const struct meta_partition *p;
    struct ctl_plan pl;
    struct target t;
    int32_t cand = -1;

    if (topic == NULL || partition < 0 || partition >= topic->n_partitions)
        return ERR_UNKNOWN_TOPIC_OR_PARTITION;
    p = &topic->partitions[partition];
    if (!ctl_plan_init(&pl, c, img, out) || !target_of(&pl, p, &t))
        return ERR_NOMEM;
    if (!unclean) {
        int32_t pref = p->n_replicas > 0 ? p->replicas[0] : -1;
        if (pref >= 0 && p->leader == pref)
            return ERR_ELECTION_NOT_NEEDED;
        if (pref < 0 || !has(p->isr, p->n_isr, pref) || !ctl_plan_usable(&pl, pref))
            return ERR_PREFERRED_LEADER_NOT_AVAILABLE;
        t.leader = pref;
    } else {
        /* An unclean election is for a partition without a (live) leader. */
        if (p->leader >= 0 && alive(&pl, p->leader))
            return ERR_ELECTION_NOT_NEEDED;
        cand = clean_candidate(&pl, &t);
        if (cand < 0 && (cand = elr_candidate(&pl, p, &t)) >= 0) {
            t.isr[0] = cand;
            t.n_isr = 1;
        } else if (cand < 0) {
            for (int32_t i = 0; i < p->n_replicas && cand < 0; i++)
                if (ctl_plan_usable(&pl, p->replicas[i]))
                    cand = p->replicas[i];
            if (cand < 0)
                return ERR_ELIGIBLE_LEADERS_NOT_AVAILABLE;
            t.isr[0] = cand;
            t.n_isr = 1;
            t.recovery = RECOVERING;
            t.unclean_election = true;
        }
        t.leader = cand;
    }
    target_elr(&pl, topic, p, &t);
    if (!emit(out, topic, p, &t))
        return ERR_NOMEM;
    return 0;
}

/* ---- reassignments ------------------------------------------------------------------------ */

int ctl_check_assignment(const struct meta_image *img, const int32_t *replicas, int32_t n,
                         int32_t rf, char *why, size_t why_len)
{
    if (n < 1 || replicas == NULL) {
        snprintf(why, why_len, "The manual partition assignment includes an empty replica list.");
        return ERR_INVALID_REPLICA_ASSIGNMENT;
    }
    for (int32_t i = 0; i < n; i++) {
        if (has(replicas, i, replicas[i])) {
            snprintf(why, why_len,
                     "The manual partition assignment includes the broker %d more than once.",
                     replicas[i]);
            return ERR_INVALID_REPLICA_ASSIGNMENT;
        }
        if (meta_image_broker_by_id(img, replicas[i]) == NULL) {
            snprintf(why, why_len,
                     "The manual partition assignment includes broker %d, but no such broker is "
                     "registered.",
                     replicas[i]);
            return ERR_INVALID_REPLICA_ASSIGNMENT;
        }
    }
    if (rf >= 0 && n != rf) {
        snprintf(why, why_len,
                 "The manual partition assignment includes a partition with %d replica(s), but "
                 "this is not consistent with previous partitions, which have %d replica(s).",
                 n, rf);
        return ERR_INVALID_REPLICA_ASSIGNMENT;
    }
    return 0;
}

bool ctl_reassigning(const struct meta_partition *p)
{
    return p->n_adding > 0 || p->n_removing > 0;
}

/* `n` int32s of out's arena (at least one), or NULL with out->oom set. */
static int32_t *out_array(struct ctl_out *o, int32_t n)
{
    int32_t *v = o->arena ? arena_alloc(o->arena, (size_t)(n > 0 ? n : 1) * sizeof *v) : NULL;
    if (v == NULL)
        o->oom = true;
    return v;
}

static void sort_ids(int32_t *v, int32_t n)
{
    for (int32_t i = 1; i < n; i++)
        for (int32_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
            int32_t x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
}

/* A new target in `t`, as Kafka's PartitionReassignmentReplicas computes it from the
 * partition's replicas as they are: removing = the current replicas the target leaves out,
 * adding = the target's replicas that are not current ones (each in id order), replicas = the
 * target followed by the removing ones. */
static bool start_target(struct ctl_out *o, const struct meta_partition *p, struct target *t,
                         const int32_t *target, int32_t n_target)
{
    int32_t *reps = out_array(o, n_target + p->n_replicas);
    int32_t *adding = out_array(o, n_target), *removing = out_array(o, p->n_replicas);
    int32_t n_reps = 0, n_adding = 0, n_removing = 0;

    if (reps == NULL || adding == NULL || removing == NULL)
        return false;
    for (int32_t i = 0; i < n_target; i++)
        if (!has(p->replicas, p->n_replicas, target[i]))
            adding[n_adding++] = target[i];
    for (int32_t i = 0; i < p->n_replicas; i++)
        if (!has(target, n_target, p->replicas[i]))
            removing[n_removing++] = p->replicas[i];
    sort_ids(adding, n_adding);
    sort_ids(removing, n_removing);
    for (int32_t i = 0; i < n_target; i++)
        reps[n_reps++] = target[i];
    for (int32_t i = 0; i < n_removing; i++)
        reps[n_reps++] = removing[i];
    t->replicas = reps;
    t->n_replicas = n_reps;
    t->adding = adding;
    t->n_adding = n_adding;
    t->removing = removing;
    t->n_removing = n_removing;
    return true;
}

/* Kafka's PartitionReassignmentRevert into `t`: the replicas and the ISR without the replicas
 * being added; nothing adding or removing. Returns 0, or INVALID_REPLICA_ASSIGNMENT when only
 * added replicas are in sync and the topic does not allow the unclean election the revert
 * would then be (with it: the first usable original replica alone, RECOVERING). */
static int revert_target(struct ctl_plan *pl, const struct meta_topic *topic,
                         const struct meta_partition *p, struct target *t, char *why,
                         size_t why_len)
{
    int32_t *reps = out_array(pl->out, p->n_replicas);
    int32_t n_reps = 0, n_isr = 0;

    if (reps == NULL)
        return ERR_NOMEM;
    for (int32_t i = 0; i < p->n_replicas; i++)
        if (!has(p->adding, p->n_adding, p->replicas[i]))
            reps[n_reps++] = p->replicas[i];
    for (int32_t i = 0; i < p->n_isr; i++)
        if (!has(p->adding, p->n_adding, p->isr[i]))
            t->isr[n_isr++] = p->isr[i];
    t->n_isr = n_isr;
    t->replicas = reps;
    t->n_replicas = n_reps;
    t->adding = t->removing = NULL;
    t->n_adding = t->n_removing = 0;
    if (n_isr > 0)
        return 0;
    if (!unclean_enabled(pl, topic->name)) {
        snprintf(why, why_len,
                 "Unable to revert partition assignment for %s:%d because it would require an "
                 "unclean leader election.",
                 topic->name, p->partition);
        return ERR_INVALID_REPLICA_ASSIGNMENT;
    }
    for (int32_t i = 0; i < n_reps; i++)
        if (ctl_plan_usable(pl, reps[i])) {
            t->isr[0] = t->leader = reps[i];
            t->n_isr = 1;
            t->recovery = RECOVERING;
            t->unclean_election = true;
            return 0;
        }
    snprintf(why, why_len,
             "Unable to revert partition assignment for %s:%d: no replica of the original "
             "assignment is available to lead.",
             topic->name, p->partition);
    return ERR_INVALID_REPLICA_ASSIGNMENT;
}

int ctl_sm_reassign(struct ctl_sm *c, const struct meta_image *img, const char *topic_name,
                    int32_t partition, const int32_t *target, int32_t n_target, struct ctl_out *out,
                    char *why, size_t why_len)
{
    const struct meta_topic *topic = topic_name ? meta_image_topic_by_name(img, topic_name) : NULL;
    const struct meta_partition *p;
    struct ctl_plan pl;
    struct target t;
    int rc;

    if (why_len > 0)
        why[0] = '\0';
    if (topic == NULL || partition < 0 || partition >= topic->n_partitions)
        return ERR_UNKNOWN_TOPIC_OR_PARTITION;
    p = &topic->partitions[partition];
    /* Both records would be decided on the same partition epoch: the batch would be refused
     * whole. */
    for (size_t i = 0; i < out->n; i++)
        if (out->recs[i].type == META_REC_PARTITION_CHANGE &&
            memcmp(out->recs[i].u.partition.topic_id, topic->id, 16) == 0 &&
            out->recs[i].u.partition.partition == partition) {
            snprintf(why, why_len, "The partition %s:%d is named twice.", topic->name, partition);
            return ERR_INVALID_REQUEST;
        }
    if (n_target >= 0 && (rc = ctl_check_assignment(img, target, n_target, -1, why, why_len)) != 0)
        return rc;
    if (n_target < 0 && !ctl_reassigning(p))
        return ERR_NO_REASSIGNMENT_IN_PROGRESS;
    if (!ctl_plan_init(&pl, c, img, out) || !target_of(&pl, p, &t))
        return ERR_NOMEM;
    if (n_target < 0) {
        if ((rc = revert_target(&pl, topic, p, &t, why, why_len)) != 0)
            return rc;
    } else if (!start_target(out, p, &t, target, n_target)) {
        return ERR_NOMEM;
    }
    /* A reassignment that adds nothing new to the ISR (a reordering, a replica dropped) ends
     * at once. */
    if (!try_complete(&pl, &t))
        return ERR_NOMEM;
    if (!t.unclean_election)
        settle_leader(&pl, &t);
    target_elr(&pl, topic, p, &t);
    if (!target_changes(p, &t))
        return out->oom ? ERR_NOMEM : 0;
    if (!emit(out, topic, p, &t))
        return ERR_NOMEM;
    return 0;
}
