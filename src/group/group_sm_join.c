/* SPDX-License-Identifier: Apache-2.0 */
/* group_sm: JoinGroup and SyncGroup, and the rebalance they drive, after Kafka's classic
 * GroupCoordinator: the join phase (PreparingRebalance) waits for every known member to
 * rejoin, or for the rebalance timeout, or — for a group that was Empty — for the initial
 * rebalance delay, extended while new members keep arriving; the sync phase
 * (CompletingRebalance) waits for the leader's assignment, which the owner stores before the
 * group is Stable and every member's SyncGroup gets its part. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/slog.h"
#include "group_sm_int.h"

static int32_t max_rebalance_timeout(const struct group_sm *sm)
{
    int32_t t = 0;
    for (int32_t i = 0; i < sm->n_members; i++)
        if (sm->members[i]->rebalance_ms > t)
            t = sm->members[i]->rebalance_ms;
    return t;
}

static int32_t count_awaiting_join(const struct group_sm *sm)
{
    assert(sm->n_awaiting >= 0 && sm->n_awaiting <= sm->n_members);
    return sm->n_awaiting;
}

/* How many members support a protocol of this name (the slow way, when the common set
 * cannot be kept for want of memory). */
static int32_t count_supporting(const struct group_sm *sm, const char *name)
{
    int32_t n = 0;
    for (int32_t i = 0; i < sm->n_members; i++)
        n += gs_member_protocol(sm->members[i], name) != NULL;
    return n;
}

enum { MAX_CANDIDATES = 64 };

/* The protocols every member supports, in the first member's order; at most MAX_CANDIDATES
 * of them when they have to be counted afresh into `local`. */
static const char *const *candidates(struct group_sm *sm, const char **local, int32_t *n)
{
    if (gs_common_protocols(sm)) {
        *n = sm->n_common;
        return sm->common;
    }
    *n = 0;
    const struct gs_member *first = sm->members[0];
    for (int32_t c = 0; c < first->n_protocols && *n < MAX_CANDIDATES; c++)
        if (count_supporting(sm, first->protocols[c].name) == sm->n_members)
            local[(*n)++] = first->protocols[c].name;
    return local;
}

/* Kafka's supportsProtocols: an Empty group takes any non-empty type and protocol list;
 * otherwise the type must be the group's and one protocol must be supported by every member. */
static bool supports_protocols(struct group_sm *sm, const struct group_join_args *a)
{
    if (sm->state == GROUP_EMPTY)
        return a->protocol_type && *a->protocol_type && a->n_protocols > 0;
    if (!sm->protocol_type || !a->protocol_type || strcmp(sm->protocol_type, a->protocol_type))
        return false;
    if (sm->n_members == 0)
        return a->n_protocols > 0;
    const char *local[MAX_CANDIDATES];
    int32_t n;
    const char *const *cand = candidates(sm, local, &n);
    for (int32_t i = 0; i < a->n_protocols; i++)
        for (int32_t c = 0; a->protocols[i].name && c < n; c++)
            if (strcmp(a->protocols[i].name, cand[c]) == 0)
                return true;
    return false;
}

/* The protocol every member supports that most members list first among those (ties: the
 * first such in the first member's order); NULL when there is none. */
static const char *select_protocol(struct group_sm *sm)
{
    if (sm->n_members == 0)
        return NULL;
    const char *local[MAX_CANDIDATES];
    int32_t n, votes[MAX_CANDIDATES] = {0};
    const char *const *cand = candidates(sm, local, &n);
    if (n > MAX_CANDIDATES)
        n = MAX_CANDIDATES; /* a vote among 64 is plenty; later ones only win if none before */
    for (int32_t i = 0; i < sm->n_members; i++) {
        const struct gs_member *m = sm->members[i];
        bool voted = false;
        for (int32_t j = 0; j < m->n_protocols && !voted; j++)
            for (int32_t c = 0; c < n && !voted; c++)
                if (strcmp(m->protocols[j].name, cand[c]) == 0) {
                    votes[c]++;
                    voted = true;
                }
    }
    int32_t best = -1;
    for (int32_t c = 0; c < n; c++)
        if (best < 0 || votes[c] > votes[best])
            best = c;
    return best < 0 ? NULL : cand[best];
}

/* Kafka's MemberMetadata.matches: the same protocols, names and metadata, in the same order. */
static bool member_matches(const struct gs_member *m, const struct group_join_args *a)
{
    if (m->n_protocols != a->n_protocols)
        return false;
    for (int32_t i = 0; i < a->n_protocols; i++) {
        const struct group_protocol *p = &a->protocols[i];
        int32_t len = p->len > 0 && p->metadata ? p->len : 0;
        if (strcmp(m->protocols[i].name, p->name ? p->name : "") != 0 ||
            m->protocols[i].len != len ||
            (len > 0 && memcmp(m->protocols[i].md, p->metadata, (size_t)len) != 0))
            return false;
    }
    return true;
}

/* Kafka's acceptJoiningMember: group.max.size counts members awaiting join while preparing
 * (so the last to rejoin are the ones turned away), and members otherwise. */
static bool accept_joining_member(const struct group_sm *sm, const char *member_id)
{
    const struct gs_member *m = gs_find(sm, member_id);
    switch (sm->state) {
    case GROUP_EMPTY:
    case GROUP_DEAD:
        return true;
    case GROUP_PREPARING_REBALANCE:
        return (m && m->join_w) || count_awaiting_join(sm) < sm->cfg.max_size;
    case GROUP_COMPLETING_REBALANCE:
    case GROUP_STABLE:
        return m || sm->n_members < sm->cfg.max_size;
    }
    return false;
}

static int set_str(char **dst, const char *src)
{
    char *c = src ? strdup(src) : NULL;
    if (src && !c)
        return ERR_NOMEM;
    free(*dst);
    *dst = c;
    return 0;
}

/* Parks `w` as m's join. A join already parked for m (its client gave up and retried) is
 * answered first, so every waiter is answered exactly once. */
static void park_join(struct group_sm *sm, struct gs_member *m, struct group_join_waiter *w)
{
    if (m->join_w && m->join_w != w)
        gs_answer_join_error(sm, m->join_w, ERR_REBALANCE_IN_PROGRESS, m->id);
    gs_set_join_w(sm, m, w);
}

/* Kafka's updateMember: new protocols and timeouts, the join parked. Protocols equal to the
 * member's are kept as they are (the common set points into them). */
static int update_member(struct group_sm *sm, struct gs_member *m, const struct group_join_args *a,
                         struct group_join_waiter *w)
{
    if (!member_matches(m, a)) {
        struct gs_protocol *p;
        if (gs_copy_protocols(a->protocols, a->n_protocols, &p) != 0)
            return ERR_NOMEM;
        gs_free_protocols(m->protocols, m->n_protocols);
        m->protocols = p;
        m->n_protocols = a->n_protocols;
        sm->common_dirty = true;
    }
    m->session_ms = a->session_timeout_ms;
    m->rebalance_ms = a->rebalance_timeout_ms > 0 ? a->rebalance_timeout_ms : 0;
    park_join(sm, m, w);
    return 0;
}

static void add_member_and_rebalance(struct group_sm *sm, const struct group_join_args *a,
                                     const char *member_id, struct group_join_waiter *w)
{
    struct gs_member *m = gs_member_new(sm, a, member_id);
    if (!m || (sm->n_members == 0 && set_str(&sm->protocol_type, a->protocol_type) != 0) ||
        gs_add_member(sm, m) != 0) {
        gs_member_free(m);
        gs_answer_join_error(sm, w, ERR_UNKNOWN_SERVER_ERROR, member_id);
        return;
    }
    m->is_new = true;
    /* A member arriving during a new group's initial delay extends the delay. */
    if (sm->state == GROUP_PREPARING_REBALANCE && sm->generation == 0)
        sm->new_member_added = true;
    gs_set_join_w(sm, m, w);
    /* A new member cannot heartbeat (it has no id) and its parked join hides a disconnect,
     * so its join has a deadline of its own: GS_NEW_MEMBER_JOIN_TIMEOUT_MS. */
    gs_schedule_session(m);
    slog_info(GS_LOG, "group %s: new member %s (instance %s) joins in state %s; reason: %s",
              sm->group_id, m->id, m->instance_id ? m->instance_id : "none",
              group_state_name(sm->state), a->reason && *a->reason ? a->reason : "not provided");
    gs_maybe_prepare_rebalance(sm, "adding new member");
}

/* A static member (instance id known to the group) restarts with an empty member id: it
 * takes over the member under a new id, the old id is fenced, and — when the group is Stable
 * and the selected protocol does not change — it gets its assignment back without a
 * rebalance once the owner has stored the new id (Kafka's updateStaticMemberAndRebalance). */
static void update_static_member(struct group_sm *sm, struct gs_member *m, const char *new_id,
                                 const struct group_join_args *a, struct group_join_waiter *w)
{
    char *id = strdup(new_id), *old_id = strdup(m->id);
    char *old_leader = sm->leader ? strdup(sm->leader->id) : NULL;
    struct gs_protocol *protos = NULL;
    if (!id || !old_id || (sm->leader && !old_leader) ||
        gs_copy_protocols(a->protocols, a->n_protocols, &protos) != 0) {
        free(id);
        free(old_id);
        free(old_leader);
        gs_answer_join_error(sm, w, ERR_UNKNOWN_SERVER_ERROR, "");
        return;
    }
    slog_info(GS_LOG, "group %s: static member %s rejoins in state %s, replacing member %s with %s",
              sm->group_id, m->instance_id, group_state_name(sm->state), m->id, new_id);
    /* Fence whatever the old incarnation still has parked. */
    if (m->join_w) {
        gs_answer_join_error(sm, m->join_w, ERR_FENCED_INSTANCE_ID, m->id);
        gs_set_join_w(sm, m, NULL);
    }
    if (m->sync_w) {
        gs_answer_sync(sm, m->sync_w, ERR_FENCED_INSTANCE_ID, NULL);
        m->sync_w = NULL;
    }
    gs_rename_member(sm, m, id);
    gs_schedule_session(m);
    struct gs_protocol *old_protos = m->protocols;
    int32_t n_old = m->n_protocols, old_session = m->session_ms, old_rebalance = m->rebalance_ms;
    m->protocols = protos;
    m->n_protocols = a->n_protocols;
    sm->common_dirty = true;
    m->session_ms = a->session_timeout_ms;
    m->rebalance_ms = a->rebalance_timeout_ms > 0 ? a->rebalance_timeout_ms : 0;
    gs_set_join_w(sm, m, w);

    switch (sm->state) {
    case GROUP_STABLE: {
        const char *next = select_protocol(sm);
        struct gs_persist *p = NULL;
        if (next && sm->protocol_name && strcmp(next, sm->protocol_name) == 0)
            p = gs_persist_new(sm, GS_PERSIST_STATIC);
        if (p && (p->new_id = strdup(id)) != NULL) {
            /* The outbox asks the owner to store the new id; the join waits for that, and
             * the record keeps what undoing the replacement needs. */
            p->old_id = old_id;
            p->old_leader_id = old_leader;
            p->old_protocols = old_protos;
            p->n_old_protocols = n_old;
            p->old_session_ms = old_session;
            p->old_rebalance_ms = old_rebalance;
            p->supports_skip = a->supports_skip_assignment;
            return;
        }
        if (p)
            p->generation = -1; /* out of memory: the outbox drops it, a rebalance follows */
        gs_maybe_prepare_rebalance(sm, "static member changed the selected protocol");
        break;
    }
    case GROUP_COMPLETING_REBALANCE:
        /* The leader may already be assigning to the old id: start again. */
        gs_prepare_rebalance(sm, "static member rejoined during CompletingRebalance");
        break;
    case GROUP_PREPARING_REBALANCE:
        break; /* its join is parked like everyone else's */
    case GROUP_EMPTY:
    case GROUP_DEAD:
        assert(!"a static member in an Empty or Dead group");
        break;
    }
    free(old_id);
    free(old_leader);
    gs_free_protocols(old_protos, n_old);
}

static void new_member_join(struct group_sm *sm, const struct group_join_args *a,
                            struct group_join_waiter *w)
{
    char *id;
    const char *prefix = a->group_instance_id ? a->group_instance_id : a->client_id;
    if (gs_new_member_id(prefix, &id) != 0) {
        gs_answer_join_error(sm, w, ERR_UNKNOWN_SERVER_ERROR, "");
        return;
    }
    struct gs_member *known = gs_find_static(sm, a->group_instance_id);
    if (known) {
        update_static_member(sm, known, id, a, w);
    } else if (!a->group_instance_id && a->require_known_member_id) {
        /* KIP-394: the member must come back with this id; until then it is pending. */
        if (gs_pending_add(sm, id, a->session_timeout_ms) != 0)
            gs_answer_join_error(sm, w, ERR_UNKNOWN_SERVER_ERROR, "");
        else
            gs_answer_join_error(sm, w, ERR_MEMBER_ID_REQUIRED, id);
    } else {
        add_member_and_rebalance(sm, a, id, w);
    }
    free(id);
}

/* Kafka's answer to a member whose join changes nothing: the current generation. */
static void answer_current(struct group_sm *sm, struct gs_member *m, struct group_join_waiter *w)
{
    park_join(sm, m, w);
    gs_answer_join(sm, m, NULL, false, m == sm->leader);
}

static void current_member_join(struct group_sm *sm, const struct group_join_args *a,
                                struct group_join_waiter *w, const char *member_id)
{
    int pi = gs_find_pending(sm, member_id);
    if (pi >= 0) {
        if (a->group_instance_id) {
            /* Static members are never made pending; this one sent a dynamic member's id. */
            gs_answer_join_error(sm, w, ERR_UNKNOWN_MEMBER_ID, member_id);
            return;
        }
        gs_remove_pending_at(sm, pi);
        add_member_and_rebalance(sm, a, member_id, w);
        return;
    }
    struct gs_member *s = gs_find_static(sm, a->group_instance_id);
    if (s && strcmp(s->id, member_id) != 0) {
        gs_answer_join_error(sm, w, ERR_FENCED_INSTANCE_ID, member_id);
        return;
    }
    struct gs_member *m = gs_find(sm, member_id);
    if (!m || (a->group_instance_id && !s)) {
        gs_answer_join_error(sm, w, ERR_UNKNOWN_MEMBER_ID, member_id);
        return;
    }
    const char *why = a->reason && *a->reason ? a->reason : "not provided";
    switch (sm->state) {
    case GROUP_PREPARING_REBALANCE:
        if (update_member(sm, m, a, w) != 0)
            gs_answer_join_error(sm, w, ERR_UNKNOWN_SERVER_ERROR, member_id);
        return;
    case GROUP_COMPLETING_REBALANCE:
        /* The same metadata: it missed the answer to its join; give it again. */
        if (member_matches(m, a)) {
            answer_current(sm, m, w);
            return;
        }
        break;
    case GROUP_STABLE:
        /* The leader's join always rebalances (it may see changes the metadata does not
         * show, such as new partitions); a follower's only when its metadata changed. */
        if (m != sm->leader && member_matches(m, a)) {
            answer_current(sm, m, w);
            return;
        }
        break;
    case GROUP_EMPTY:
    case GROUP_DEAD:
        gs_answer_join_error(sm, w, ERR_UNKNOWN_MEMBER_ID, member_id);
        return;
    }
    if (update_member(sm, m, a, w) != 0) {
        gs_answer_join_error(sm, w, ERR_UNKNOWN_SERVER_ERROR, member_id);
        return;
    }
    slog_info(GS_LOG, "group %s: member %s rejoins in state %s; reason: %s", sm->group_id,
              member_id, group_state_name(sm->state), why);
    gs_maybe_prepare_rebalance(sm, "member rejoined");
}

static void do_join(struct group_sm *sm, const struct group_join_args *a,
                    struct group_join_waiter *w)
{
    const char *member_id = a->member_id ? a->member_id : "";
    bool unknown = *member_id == '\0';
    if (a->session_timeout_ms < sm->cfg.min_session_timeout_ms ||
        a->session_timeout_ms > sm->cfg.max_session_timeout_ms) {
        gs_answer_join_error(sm, w, ERR_INVALID_SESSION_TIMEOUT, member_id);
        return;
    }
    if (!accept_joining_member(sm, member_id)) {
        /* Turned away for good, as Kafka's group.remove: a member, or a pending id. */
        struct gs_member *m = gs_find(sm, member_id);
        int pi = gs_find_pending(sm, member_id);
        if (m)
            gs_remove_member(sm, m);
        if (pi >= 0)
            gs_remove_pending_at(sm, pi);
        gs_answer_join_error(sm, w, ERR_GROUP_MAX_SIZE_REACHED, "");
        return;
    }
    if (sm->state == GROUP_DEAD) {
        gs_answer_join_error(sm, w, ERR_COORDINATOR_NOT_AVAILABLE, member_id);
        return;
    }
    if (!supports_protocols(sm, a)) {
        gs_answer_join_error(sm, w, ERR_INCONSISTENT_GROUP_PROTOCOL, member_id);
        return;
    }
    if (unknown)
        new_member_join(sm, a, w);
    else
        current_member_join(sm, a, w, member_id);
}

void group_sm_join(struct group_sm *sm, const struct group_join_args *a,
                   struct group_join_waiter *w)
{
    w->sm_private[0] = w->sm_private[1] = w->sm_private[2] = w->sm_private[3] = NULL;
    gs_enter(sm);
    do_join(sm, a, w);
    gs_check_join_complete(sm);
    gs_leave(sm);
}

/* ---- the rebalance --------------------------------------------------------------------- */

/* Every parked SyncGroup gets `err`, assignments are forgotten (Kafka's
 * resetAndPropagateAssignmentError). */
static void reset_assignments(struct group_sm *sm, int16_t err)
{
    for (int32_t i = 0; i < sm->n_members; i++) {
        struct gs_member *m = sm->members[i];
        free(m->assignment);
        m->assignment = NULL;
        m->assignment_len = 0;
        if (m->sync_w) {
            gs_answer_sync(sm, m->sync_w, err, NULL);
            m->sync_w = NULL;
            gs_schedule_session(m);
        }
    }
}

void gs_prepare_rebalance(struct group_sm *sm, const char *reason)
{
    if (sm->state == GROUP_COMPLETING_REBALANCE)
        reset_assignments(sm, ERR_REBALANCE_IN_PROGRESS);
    tclock_timer_stop(&sm->sync_timer);
    int32_t timeout = max_rebalance_timeout(sm);
    int64_t after;
    if (sm->state == GROUP_EMPTY) {
        sm->initial_delay = true;
        sm->delay_ms =
            sm->cfg.initial_rebalance_delay_ms > 0 ? sm->cfg.initial_rebalance_delay_ms : 0;
        sm->remaining_ms = timeout > sm->delay_ms ? timeout - sm->delay_ms : 0;
        sm->new_member_added = false;
        after = sm->delay_ms;
    } else {
        sm->initial_delay = false;
        after = timeout;
    }
    slog_info(GS_LOG, "group %s: preparing to rebalance in state %s with old generation %d (%s)",
              sm->group_id, group_state_name(sm->state), sm->generation, reason);
    gs_set_state(sm, GROUP_PREPARING_REBALANCE);
    if (tclock_timer_start(&sm->join_timer, after, 0) != 0)
        slog_error(GS_LOG, "group %s: no rebalance timer (out of memory)", sm->group_id);
    gs_check_join_complete(sm);
}

void gs_maybe_prepare_rebalance(struct group_sm *sm, const char *reason)
{
    if (sm->state == GROUP_STABLE || sm->state == GROUP_COMPLETING_REBALANCE ||
        sm->state == GROUP_EMPTY)
        gs_prepare_rebalance(sm, reason);
}

/* Kafka's maybeElectNewJoinedLeader: keep the leader if it rejoined, else the first member
 * that did; false when none did. */
static bool elect_joined_leader(struct group_sm *sm)
{
    if (!sm->leader)
        return false;
    if (sm->leader->join_w)
        return true;
    for (int32_t i = 0; i < sm->n_members; i++)
        if (sm->members[i]->join_w) {
            sm->leader = sm->members[i];
            return true;
        }
    return false;
}

static void complete_join(struct group_sm *sm)
{
    tclock_timer_stop(&sm->join_timer);
    /* Dynamic members that did not rejoin are out; static ones keep their place until their
     * session expires. */
    for (int32_t i = sm->n_members - 1; i >= 0; i--) {
        struct gs_member *m = sm->members[i];
        if (!m->join_w && !m->instance_id) {
            slog_info(GS_LOG, "group %s: removing member %s, which did not rejoin", sm->group_id,
                      m->id);
            gs_remove_member(sm, m);
        }
    }
    if (!elect_joined_leader(sm) && sm->n_members > 0) {
        /* Only static members that did not rejoin remain: wait another rebalance timeout,
         * while their sessions run out. */
        slog_warn(GS_LOG, "group %s: could not complete the rebalance: no member rejoined",
                  sm->group_id);
        sm->initial_delay = false;
        if (tclock_timer_start(&sm->join_timer, max_rebalance_timeout(sm), 0) != 0)
            slog_error(GS_LOG, "group %s: no rebalance timer (out of memory)", sm->group_id);
        return;
    }
    sm->generation++;
    for (int32_t i = 0; i < sm->n_members; i++)
        sm->members[i]->pending_sync = false;
    if (sm->n_members == 0) {
        free(sm->protocol_name);
        sm->protocol_name = NULL;
        gs_set_state(sm, GROUP_EMPTY);
        slog_info(GS_LOG, "group %s with generation %d is now empty", sm->group_id, sm->generation);
        if (!gs_persist_new(sm, GS_PERSIST_EMPTY))
            slog_warn(GS_LOG, "group %s: cannot store the empty group (out of memory)",
                      sm->group_id);
        return;
    }
    if (set_str(&sm->protocol_name, select_protocol(sm)) != 0) {
        /* Without the name nothing can be answered; try the join phase again. */
        sm->initial_delay = false;
        tclock_timer_start(&sm->join_timer, max_rebalance_timeout(sm), 0);
        sm->generation--;
        return;
    }
    gs_set_state(sm, GROUP_COMPLETING_REBALANCE);
    slog_info(GS_LOG, "group %s: stabilized generation %d with %d members, protocol %s, leader %s",
              sm->group_id, sm->generation, sm->n_members, sm->protocol_name, sm->leader->id);
    for (int32_t i = 0; i < sm->n_members; i++) {
        struct gs_member *m = sm->members[i];
        gs_answer_join(sm, m, NULL, false, m == sm->leader);
        m->is_new = false;
        m->pending_sync = true;
        gs_schedule_session(m);
    }
    sm->sync_generation = sm->generation;
    if (tclock_timer_start(&sm->sync_timer, max_rebalance_timeout(sm), 0) != 0)
        slog_error(GS_LOG, "group %s: no sync timer (out of memory)", sm->group_id);
}

void gs_check_join_complete(struct group_sm *sm)
{
    if (sm->state != GROUP_PREPARING_REBALANCE || sm->initial_delay)
        return;
    if (count_awaiting_join(sm) == sm->n_members && sm->n_pending == 0)
        complete_join(sm);
}

void gs_join_timer_cb(struct tclock_timer *t)
{
    struct group_sm *sm = t->data;
    if (sm->state != GROUP_PREPARING_REBALANCE)
        return;
    gs_enter(sm);
    if (sm->initial_delay && sm->new_member_added && sm->remaining_ms != 0) {
        /* Kafka's InitialDelayedJoin: another delay, never past the rebalance timeout. */
        int32_t delay = sm->cfg.initial_rebalance_delay_ms < sm->remaining_ms
                            ? sm->cfg.initial_rebalance_delay_ms
                            : sm->remaining_ms;
        int32_t remaining = sm->remaining_ms - sm->delay_ms;
        sm->remaining_ms = remaining > 0 ? remaining : 0;
        sm->delay_ms = delay > 0 ? delay : 0;
        sm->new_member_added = false;
        tclock_timer_start(&sm->join_timer, sm->delay_ms, 0);
    } else {
        sm->initial_delay = false;
        complete_join(sm);
    }
    gs_leave(sm);
}

/* Removes a member and moves the group on: a rebalance from Stable or CompletingRebalance,
 * maybe the end of the join phase from PreparingRebalance (Kafka's removeMemberAndUpdateGroup). */
void gs_remove_member_and_update(struct group_sm *sm, struct gs_member *m, const char *reason)
{
    gs_remove_member(sm, m);
    switch (sm->state) {
    case GROUP_STABLE:
    case GROUP_COMPLETING_REBALANCE:
        gs_maybe_prepare_rebalance(sm, reason);
        break;
    case GROUP_PREPARING_REBALANCE:
        gs_check_join_complete(sm);
        break;
    case GROUP_EMPTY:
    case GROUP_DEAD:
        break;
    }
}

/* The sync phase's deadline: members that never sent SyncGroup (the leader included) are
 * removed and the group rebalances (Kafka's onExpirePendingSync). */
void gs_sync_timer_cb(struct tclock_timer *t)
{
    struct group_sm *sm = t->data;
    if (sm->generation != sm->sync_generation ||
        (sm->state != GROUP_COMPLETING_REBALANCE && sm->state != GROUP_STABLE))
        return;
    bool any = false;
    gs_enter(sm);
    for (int32_t i = sm->n_members - 1; i >= 0; i--) {
        struct gs_member *m = sm->members[i];
        if (m->pending_sync) {
            slog_info(GS_LOG, "group %s: removing member %s, which did not send its SyncGroup",
                      sm->group_id, m->id);
            gs_remove_member(sm, m);
            any = true;
        }
    }
    if (any)
        gs_prepare_rebalance(sm, "members did not sync in time");
    gs_leave(sm);
}

/* ---- SyncGroup ------------------------------------------------------------------------- */

static int16_t validate_sync(const struct group_sm *sm, const struct group_sync_args *a)
{
    if (sm->state == GROUP_DEAD)
        return ERR_COORDINATOR_NOT_AVAILABLE;
    int16_t err = gs_validate_member(sm, a->member_id, a->group_instance_id);
    if (err)
        return err;
    if (a->generation_id != sm->generation)
        return ERR_ILLEGAL_GENERATION;
    if (a->protocol_type && (!sm->protocol_type || strcmp(a->protocol_type, sm->protocol_type)))
        return ERR_INCONSISTENT_GROUP_PROTOCOL;
    if (a->protocol_name && (!sm->protocol_name || strcmp(a->protocol_name, sm->protocol_name)))
        return ERR_INCONSISTENT_GROUP_PROTOCOL;
    return 0;
}

/* The leader's assignment onto the members; members it leaves out get an empty one, and
 * entries for ids not in the group are ignored. */
static int apply_assignment(struct group_sm *sm, const struct group_sync_args *a)
{
    for (int32_t i = 0; i < sm->n_members; i++) {
        struct gs_member *m = sm->members[i];
        free(m->assignment);
        m->assignment = NULL;
        m->assignment_len = 0;
        m->assigned = false;
    }
    for (int32_t j = 0; j < a->n_assignments; j++) {
        const struct group_assignment *g = &a->assignments[j];
        struct gs_member *m = gs_find(sm, g->member_id);
        if (!m)
            continue;
        m->assigned = true;
        free(m->assignment);
        m->assignment = NULL;
        m->assignment_len = 0;
        if (g->len > 0 && g->assignment) {
            m->assignment = malloc((size_t)g->len);
            if (!m->assignment)
                return ERR_NOMEM;
            memcpy(m->assignment, g->assignment, (size_t)g->len);
            m->assignment_len = g->len;
        }
    }
    int32_t missing = 0;
    for (int32_t i = 0; i < sm->n_members; i++)
        missing += !sm->members[i]->assigned;
    if (missing > 0)
        slog_warn(GS_LOG,
                  "group %s: the leader's assignment for generation %d leaves out %d member(s); "
                  "they get an empty one",
                  sm->group_id, sm->generation, missing);
    return 0;
}

void group_sm_sync(struct group_sm *sm, const struct group_sync_args *a,
                   struct group_sync_waiter *w)
{
    w->sm_private[0] = w->sm_private[1] = w->sm_private[2] = w->sm_private[3] = NULL;
    gs_enter(sm);
    int16_t err = validate_sync(sm, a);
    struct gs_member *m = err ? NULL : gs_find(sm, a->member_id);
    if (err) {
        gs_answer_sync(sm, w, err, NULL);
    } else if (sm->state == GROUP_PREPARING_REBALANCE) {
        gs_answer_sync(sm, w, ERR_REBALANCE_IN_PROGRESS, NULL);
    } else if (sm->state == GROUP_STABLE) {
        m->pending_sync = false;
        gs_answer_sync(sm, w, 0, m);
        gs_schedule_session(m);
    } else if (sm->state == GROUP_COMPLETING_REBALANCE) {
        if (m->sync_w && m->sync_w != w)
            gs_answer_sync(sm, m->sync_w, ERR_REBALANCE_IN_PROGRESS, NULL);
        m->sync_w = w;
        m->pending_sync = false;
        if (m == sm->leader) {
            slog_info(GS_LOG, "group %s: assignment received from leader %s for generation %d",
                      sm->group_id, m->id, sm->generation);
            /* Only the newest store of a generation counts. */
            for (struct gs_persist *p = sm->persists; p; p = p->next)
                if (p->kind == GS_PERSIST_SYNC)
                    p->generation = -1;
            if (apply_assignment(sm, a) != 0 || !gs_persist_new(sm, GS_PERSIST_SYNC)) {
                reset_assignments(sm, ERR_UNKNOWN_SERVER_ERROR);
                gs_maybe_prepare_rebalance(sm, "out of memory storing the assignment");
            }
        }
    } else {
        gs_answer_sync(sm, w, ERR_UNKNOWN_MEMBER_ID, NULL);
    }
    gs_leave(sm);
}

void gs_persisted_sync(struct group_sm *sm, struct gs_persist *p, int16_t err)
{
    /* Another member may have joined meanwhile: only the generation it was asked for. */
    if (sm->state != GROUP_COMPLETING_REBALANCE || sm->generation != p->generation)
        return;
    if (err) {
        slog_warn(GS_LOG, "group %s: storing generation %d failed: %s", sm->group_id,
                  sm->generation, err_name(err));
        reset_assignments(sm, err);
        gs_maybe_prepare_rebalance(sm, "storing the assignment failed");
        return;
    }
    gs_set_state(sm, GROUP_STABLE);
    for (int32_t i = 0; i < sm->n_members; i++) {
        struct gs_member *m = sm->members[i];
        if (m->sync_w) {
            gs_answer_sync(sm, m->sync_w, 0, m);
            m->sync_w = NULL;
            gs_schedule_session(m);
        }
    }
}

void gs_persisted_static(struct group_sm *sm, struct gs_persist *p, int16_t err)
{
    struct gs_member *m = gs_find(sm, p->new_id);
    /* Moved on (a rebalance answers the join; a removal answered it already). */
    if (!m || !m->join_w || sm->state != GROUP_STABLE || sm->generation != p->generation)
        return;
    if (err) {
        slog_warn(GS_LOG, "group %s: storing static member %s as %s failed (%s); reverting",
                  sm->group_id, m->instance_id, p->new_id, err_name(err));
        gs_rename_member(sm, m, p->old_id);
        p->old_id = NULL;
        gs_free_protocols(m->protocols, m->n_protocols);
        sm->common_dirty = true;
        m->protocols = p->old_protocols;
        m->n_protocols = p->n_old_protocols;
        p->old_protocols = NULL;
        p->n_old_protocols = 0;
        m->session_ms = p->old_session_ms;
        m->rebalance_ms = p->old_rebalance_ms;
        struct group_join_waiter *w = m->join_w;
        gs_set_join_w(sm, m, NULL);
        gs_schedule_session(m);
        gs_answer_join_error(sm, w, err, "");
        return;
    }
    bool leader = m == sm->leader;
    if (p->supports_skip)
        gs_answer_join(sm, m, NULL, leader, leader);
    else
        gs_answer_join(sm, m, p->old_leader_id, false, false);
}
