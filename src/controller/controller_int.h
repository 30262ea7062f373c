/* SPDX-License-Identifier: Apache-2.0 */
/* controller internals shared by controller_sm.c (sessions, registration, heartbeats, the
 * tick), partition_change.c (how a partition changes: ISR eviction, elections,
 * AlterPartition, ElectLeaders) and placement.c. */
#ifndef TALLY_CONTROLLER_INT_H
#define TALLY_CONTROLLER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "controller/controller_sm.h"

/* A broker's session as this controller keeps it (sessions are not metadata: a new
 * controller starts them afresh, ctl_sm_activate). */
struct ctl_session {
    int32_t id;
    int64_t last_contact_ms;   /* the last heartbeat (or registration, or activation) */
    int64_t unfenced_since_ms; /* when it was seen or made unfenced; -1 while fenced */
};

struct ctl_sm {
    struct ctl_config cfg; /* cluster_id points at cluster_id below */
    char *cluster_id;
    struct ctl_session *sessions; /* sorted by id */
    size_t n_sessions, cap_sessions;
    int64_t rebalance_at_ms; /* the next preferred-leader round */
    bool rebalance_running;  /* a round that has more to move: next tick at once */
};

/* How a decision changes a broker before its records apply: partition changes are computed
 * against the image as it will be. `evict` brokers leave every ISR (the rules of
 * controller_sm.h say when one may become empty) and lose their leaderships; `unclean` ones
 * (registering after an unclean shutdown) also leave every ELR. */
struct ctl_override {
    int32_t id;
    bool fenced, shutting_down, evict, unclean;
};

/* One decision under way: the image it is taken on, the overrides, and the records. */
struct ctl_plan {
    const struct ctl_sm *c;
    const struct meta_image *img;
    struct ctl_out *out;
    struct ctl_override *over;
    size_t n_over, cap_over;
    /* Partitions to consider: those with this broker among their replicas (-1: all). */
    int32_t focus;
    int32_t *scratch; /* the ISR and ELR of the partition being planned, in out's arena */
    int32_t cap_scratch;
};

/* ---- controller_sm.c ------------------------------------------------------------------- */

/* The session of broker `id`, or NULL. */
const struct ctl_session *ctl_session_find(const struct ctl_sm *c, int32_t id);

/* A zeroed record appended to `out`, or NULL (and out->oom) when out of memory. */
struct meta_record *ctl_out_add(struct ctl_out *o);
/* `n` int32s in out's arena copied from v (NULL for n == 0, or on out of memory with
 * out->oom set). */
int32_t *ctl_out_i32s(struct ctl_out *o, const int32_t *v, int32_t n);

/* ---- partition_change.c ------------------------------------------------------------------ */

bool ctl_plan_init(struct ctl_plan *pl, const struct ctl_sm *c, const struct meta_image *img,
                   struct ctl_out *out);
/* Sets how broker `id` will be once the decision applies (false on out of memory). */
bool ctl_plan_override(struct ctl_plan *pl, int32_t id, bool fenced, bool shutting_down,
                       bool evict);
/* Marks broker `id`, overridden already, as registering after an unclean shutdown. */
void ctl_plan_unclean(struct ctl_plan *pl, int32_t id);
/* Whether broker `id` can lead or join an ISR once the decision applies: registered,
 * unfenced, not shutting down. */
bool ctl_plan_usable(const struct ctl_plan *pl, int32_t id);
/* Walks the partitions in focus and adds one PARTITION_CHANGE for each that the overrides
 * (or an offline or fenced leader) call for. Returns the number of records added. */
size_t ctl_plan_partitions(struct ctl_plan *pl);
/* The preferred-leader round of a tick: up to `budget` partitions whose first replica is
 * usable, in the ISR, not the leader and unfenced for a session timeout move to it. Returns
 * how many moved; *more = some partition was left for the next tick. */
size_t ctl_plan_preferred(struct ctl_plan *pl, int32_t budget, int64_t now_ms, bool *more);
/* Whether broker `id` leads a partition in the image. */
bool ctl_leads_any(const struct meta_image *img, int32_t id);

#endif
