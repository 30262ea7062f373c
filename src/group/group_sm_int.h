/* SPDX-License-Identifier: Apache-2.0 */
/* group_sm internals, shared by group_sm.c (the group, its members, timers, the outbox and the
 * simple requests) and group_sm_join.c (JoinGroup, SyncGroup and the rebalance phases). */
#ifndef TALLY_GROUP_GROUP_SM_INT_H
#define TALLY_GROUP_GROUP_SM_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "base/tclock.h"
#include "group_sm.h"

/* Kafka's GroupCoordinator.NewMemberJoinTimeoutMs: a new member waiting for the join phase
 * is dropped after this long (its client may have gone away while the request was parked). */
#define GS_NEW_MEMBER_JOIN_TIMEOUT_MS 300000

#define GS_LOG "group"

/* One protocol a member supports: its name and opaque metadata (owned copies). */
struct gs_protocol {
    char *name;
    uint8_t *md;
    int32_t len;
};

struct gs_member {
    struct group_sm *sm;
    char *id, *instance_id /* NULL = dynamic */, *client_id, *client_host;
    int32_t session_ms, rebalance_ms;
    int32_t n_protocols;
    struct gs_protocol *protocols; /* in the member's order of preference */
    uint8_t *assignment;           /* NULL until assigned */
    int32_t assignment_len;
    struct group_join_waiter *join_w;          /* its parked JoinGroup (awaiting join) */
    struct group_sync_waiter *sync_w;          /* its parked SyncGroup (awaiting sync) */
    struct gs_member *id_next, *instance_next; /* the group's hash chains */
    bool is_new;               /* joined and not yet through a completed join phase */
    bool assigned;             /* named in the leader's assignment being applied */
    bool pending_sync;         /* in the generation's set that still has to send SyncGroup */
    struct tclock_timer timer; /* session (heartbeat) expiry */
};

/* A member id handed out with MEMBER_ID_REQUIRED, waiting for the member's second join. */
struct gs_pending {
    struct group_sm *sm;
    char *id;
    struct tclock_timer timer;
};

enum gs_persist_kind {
    GS_PERSIST_SYNC,   /* the leader's assignment; Stable once durable */
    GS_PERSIST_EMPTY,  /* the group went Empty; nothing waits on it */
    GS_PERSIST_STATIC, /* a static member replaced in a Stable group; its join waits on it */
};

/* A persist asked of the owner (or about to be: `requested` false until the outbox asks). */
struct gs_persist {
    struct gs_persist *next;
    uint64_t token;
    enum gs_persist_kind kind;
    bool requested;
    int32_t generation;
    /* GS_PERSIST_STATIC: enough to answer the join and to undo the replacement on failure. */
    char *new_id, *old_id, *old_leader_id;
    int32_t n_old_protocols;
    struct gs_protocol *old_protocols;
    int32_t old_session_ms, old_rebalance_ms;
    bool supports_skip;
};

struct group_sm {
    char *group_id;
    struct tclock *clock;
    struct group_sm_config cfg;
    struct group_sm_owner owner;

    enum group_state state;
    int64_t state_ts; /* wall ms */
    int32_t generation;
    char *protocol_type, *protocol_name;

    struct gs_member **members; /* in join order */
    int32_t n_members, cap_members;
    /* Members by id and by instance id: chained hash tables of n_buckets (a power of 2). */
    struct gs_member **by_id, **by_instance;
    uint32_t n_buckets;
    /* The protocols every member supports, in the first member's order (names point into
     * that member); recomputed when `common_dirty`, narrowed in place when a member joins. */
    const char **common;
    int32_t n_common, cap_common;
    bool common_dirty;
    struct gs_member *leader;
    int32_t n_awaiting; /* members with a parked join (gs_set_join_w keeps it) */
    struct gs_pending **pending;
    int32_t n_pending, cap_pending;

    /* The join phase (PreparingRebalance). */
    struct tclock_timer join_timer;
    bool initial_delay; /* the timer is Kafka's InitialDelayedJoin, else its DelayedJoin */
    int32_t delay_ms, remaining_ms;
    bool new_member_added;

    /* The sync phase: members that have not sent SyncGroup are dropped when it fires. */
    struct tclock_timer sync_timer;
    int32_t sync_generation;

    /* The outbox, delivered when the outermost call into the group returns, so that every
     * callback sees a consistent group and may call back in. */
    int depth;       /* nesting of calls into the group */
    int in_callback; /* nesting of the outbox's calls out */
    bool free_pending, freeing;
    int16_t free_err;
    struct group_join_waiter *join_out_head, *join_out_tail;
    struct group_sync_waiter *sync_out_head, *sync_out_tail;
    struct gs_persist *persists;
    uint64_t next_token;
    struct {
        enum group_state from, to;
    } notes[8];
    int n_notes;

    struct group_member_info *info; /* group_sm_members' answer */
    int32_t cap_info;
};

/* Parks (or, with NULL, unparks) m's join, keeping the count of members awaiting join. */
static inline void gs_set_join_w(struct group_sm *sm, struct gs_member *m,
                                 struct group_join_waiter *w)
{
    sm->n_awaiting += (w != NULL) - (m->join_w != NULL);
    m->join_w = w;
}

/* group_sm.c */
void gs_enter(struct group_sm *sm);
void gs_leave(struct group_sm *sm);
void gs_set_state(struct group_sm *sm, enum group_state to);
struct gs_member *gs_find(const struct group_sm *sm, const char *member_id);
struct gs_member *gs_find_static(const struct group_sm *sm, const char *instance_id);
int gs_find_pending(const struct group_sm *sm, const char *member_id);
void gs_remove_pending_at(struct group_sm *sm, int i);
struct gs_member *gs_member_new(struct group_sm *sm, const struct group_join_args *a,
                                const char *member_id);
void gs_member_free(struct gs_member *m);
int gs_add_member(struct group_sm *sm, struct gs_member *m);
void gs_remove_member(struct group_sm *sm, struct gs_member *m);
void gs_rename_member(struct group_sm *sm, struct gs_member *m, char *id);
bool gs_common_protocols(struct group_sm *sm);
void gs_schedule_session(struct gs_member *m);
int gs_copy_protocols(const struct group_protocol *p, int32_t n, struct gs_protocol **out);
void gs_free_protocols(struct gs_protocol *p, int32_t n);
const struct gs_protocol *gs_member_protocol(const struct gs_member *m, const char *name);
void gs_answer_join_error(struct group_sm *sm, struct group_join_waiter *w, int16_t err,
                          const char *member_id);
void gs_answer_join(struct group_sm *sm, struct gs_member *m, const char *leader_id,
                    bool skip_assignment, bool with_members);
void gs_answer_sync(struct group_sm *sm, struct group_sync_waiter *w, int16_t err,
                    const struct gs_member *m);
struct gs_persist *gs_persist_new(struct group_sm *sm, enum gs_persist_kind kind);
void gs_persist_free(struct gs_persist *p);
int16_t gs_validate_member(const struct group_sm *sm, const char *member_id,
                           const char *instance_id);
int gs_new_member_id(const char *prefix, char **out);
int gs_pending_add(struct group_sm *sm, const char *id, int32_t session_ms);

/* group_sm_join.c */
void gs_maybe_prepare_rebalance(struct group_sm *sm, const char *reason);
void gs_prepare_rebalance(struct group_sm *sm, const char *reason);
void gs_check_join_complete(struct group_sm *sm);
void gs_remove_member_and_update(struct group_sm *sm, struct gs_member *m, const char *reason);
void gs_join_timer_cb(struct tclock_timer *t);
void gs_sync_timer_cb(struct tclock_timer *t);
void gs_persisted_sync(struct group_sm *sm, struct gs_persist *p, int16_t err);
void gs_persisted_static(struct group_sm *sm, struct gs_persist *p, int16_t err);

#endif
