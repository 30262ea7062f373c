/* SPDX-License-Identifier: Apache-2.0 */
/* group_sm: one consumer group's membership state machine, Kafka's classic group protocol
 * (JoinGroup / SyncGroup / Heartbeat / LeaveGroup, KIP-345 static membership, KIP-394
 * MEMBER_ID_REQUIRED, KIP-814 skip_assignment, KIP-800 reasons). No sockets, no storage, no
 * protocol structs: plain C arguments in, callbacks out, every timer through the
 * `struct tclock *` it is given, so it runs on virtual time in a unit test.
 *
 * States, as Kafka's DescribeGroups/ListGroups print them:
 *   Empty --join--> PreparingRebalance --join phase ends--> CompletingRebalance
 *   CompletingRebalance --leader's SyncGroup persisted--> Stable
 *   Stable --join / leave / session expiry--> PreparingRebalance
 *   PreparingRebalance --join phase ends with no member--> Empty (generation bumped, persisted)
 *   Empty --group_sm_delete--> Dead
 *
 * Threading: one loop; nothing here is thread-safe. Callbacks (a waiter's done, the owner's
 * persist/state_changed) run when the group is consistent and may call back into it. */
#ifndef TALLY_GROUP_GROUP_SM_H
#define TALLY_GROUP_GROUP_SM_H

#include <stdbool.h>
#include <stdint.h>

struct tclock;
struct group_sm;

/* Names as Kafka's DescribeGroups/ListGroups print them. */
enum group_state {
    GROUP_EMPTY,                /* "Empty" */
    GROUP_PREPARING_REBALANCE,  /* "PreparingRebalance" */
    GROUP_COMPLETING_REBALANCE, /* "CompletingRebalance" */
    GROUP_STABLE,               /* "Stable" */
    GROUP_DEAD                  /* "Dead" */
};

/* Kafka's name of a state ("Empty", "PreparingRebalance", ...); never NULL. */
const char *group_state_name(enum group_state s);

/* Parses a state name case-insensitively (ListGroups v4 StatesFilter); -1 if unknown. */
int group_state_parse(const char *name);

struct group_sm_config {
    int32_t min_session_timeout_ms;     /* group.min.session.timeout.ms, 6000 */
    int32_t max_session_timeout_ms;     /* group.max.session.timeout.ms, 1800000 */
    int32_t initial_rebalance_delay_ms; /* group.initial.rebalance.delay.ms, 3000 */
    int32_t max_size;                   /* group.max.size, INT32_MAX */
};

/* What the state machine asks of its owner (the coordinator). */
struct group_sm_owner {
    /* Store the group as it is now (GroupMetadataValue: generation, protocol type/name,
     * leader, members with subscription and assignment; an Empty group with generation
     * and no members) and call group_sm_persisted(sm, token, err) once it is durable or
     * failed (may be called from within persist). Asked when the leader's SyncGroup brings
     * the assignment, when the group becomes Empty through a completed rebalance, and when a
     * static member replaces its old member id in a Stable group (its JoinGroup waits for
     * the answer; on an error the replacement is undone and the join gets the error).
     * Read the group through the accessors below during the call: group_sm_members then
     * carries each member's assignment. Several may be outstanding (each token is answered
     * once); the owner stores them in the order asked. Required. */
    void (*persist)(void *arg, struct group_sm *sm, uint64_t token);
    /* The group became Empty or Dead, or left Empty (offset expiry starts/stops). Optional.
     * Not called by group_sm_new or group_sm_restore: read group_sm_state after them. */
    void (*state_changed)(void *arg, struct group_sm *sm, enum group_state from,
                          enum group_state to);
    void *arg;
};

/* A new group, Empty at generation 0. `group_id`, `cfg` and `owner` are copied; `clock`
 * must outlive the group. Returns NULL when out of memory. */
struct group_sm *group_sm_new(const char *group_id, struct tclock *clock,
                              const struct group_sm_config *cfg,
                              const struct group_sm_owner *owner);

/* Fails every pending join/sync waiter with `err` (NOT_COORDINATOR when the coordinator
 * moves; COORDINATOR_NOT_AVAILABLE at shutdown), stops timers, frees. A persist still
 * outstanding is forgotten: its group_sm_persisted must not be called after this. Waiters
 * answered here must not call into `sm`. May be called from inside a callback of this group
 * (a waiter's done, persist, state_changed): the group is then freed when the outermost call
 * into it returns, and nothing else goes out meanwhile. NULL is a no-op. */
void group_sm_free(struct group_sm *sm, int16_t err);

const char *group_sm_id(const struct group_sm *sm);
enum group_state group_sm_state(const struct group_sm *sm);
int32_t group_sm_generation(const struct group_sm *sm);
const char *group_sm_protocol_type(const struct group_sm *sm); /* NULL if none */
const char *group_sm_protocol_name(const struct group_sm *sm); /* NULL if none */
const char *group_sm_leader(const struct group_sm *sm);        /* NULL if none */
int64_t group_sm_state_timestamp(const struct group_sm *sm);   /* ms, when the state last changed */

struct group_protocol {
    const char *name;
    const uint8_t *metadata;
    int32_t len;
};

struct group_member_info {
    const char *member_id, *group_instance_id /* NULL = dynamic */, *client_id, *client_host;
    int32_t session_timeout_ms, rebalance_timeout_ms;
    const uint8_t *metadata;
    int32_t metadata_len; /* the selected protocol's metadata */
    const uint8_t *assignment;
    int32_t assignment_len; /* empty until assigned */
};

/* The members now (valid until the next group_sm_* call or loop turn), *n their count. In
 * join order; the pointers stay owned by the group. */
const struct group_member_info *group_sm_members(const struct group_sm *sm, int32_t *n);

/* JoinGroup. The args are copied; `w` is the caller's and must stay valid until w->done runs
 * (exactly once: now, or when the join phase ends, or at group_sm_free). */
struct group_join_args {
    const char *member_id;         /* "" = new member */
    const char *group_instance_id; /* NULL = dynamic membership */
    const char *client_id, *client_host;
    const char *protocol_type;
    int32_t session_timeout_ms, rebalance_timeout_ms; /* v0: rebalance = session */
    int32_t n_protocols;
    const struct group_protocol *protocols;
    bool require_known_member_id; /* JoinGroup v4+ (KIP-394): MEMBER_ID_REQUIRED first */
    const char *reason;           /* v8+, logged */
    /* JoinGroup v9+ (KIP-814). A static leader that rejoins a Stable group without changing
     * the selected protocol then gets itself as leader, the members and skip_assignment;
     * before v9 it gets the previous leader id and no members, so it does not assign. */
    bool supports_skip_assignment;
};
struct group_join_result {
    int16_t error;
    int32_t generation_id;
    const char *protocol_type, *protocol_name, *leader, *member_id;
    bool skip_assignment; /* v9: static leader rejoining a Stable group */
    int32_t n_members;
    const struct group_member_info *members; /* leader only, else 0 */
};
struct group_join_waiter {
    /* r valid during call */
    void (*done)(struct group_join_waiter *w, const struct group_join_result *r);
    void *sm_private[4]; /* the state machine's links; caller leaves alone */
};
/* On an error, r->member_id is what Kafka answers: the id the caller sent, the generated one
 * for MEMBER_ID_REQUIRED, "" for GROUP_MAX_SIZE_REACHED and for a join cut short (member
 * removed meanwhile: UNKNOWN_MEMBER_ID); generation_id is -1 and the other strings NULL (the
 * adapter writes "" where the wire field is not nullable). Errors: INVALID_SESSION_TIMEOUT,
 * GROUP_MAX_SIZE_REACHED, COORDINATOR_NOT_AVAILABLE (Dead), INCONSISTENT_GROUP_PROTOCOL,
 * MEMBER_ID_REQUIRED, FENCED_INSTANCE_ID, UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS (a second
 * join of the same member replaced this one), UNKNOWN_SERVER_ERROR (out of memory). */
void group_sm_join(struct group_sm *sm, const struct group_join_args *a,
                   struct group_join_waiter *w);

/* SyncGroup. Same waiter rules. Errors: COORDINATOR_NOT_AVAILABLE (Dead), UNKNOWN_MEMBER_ID,
 * FENCED_INSTANCE_ID, ILLEGAL_GENERATION, INCONSISTENT_GROUP_PROTOCOL (v5 type/name given and
 * not the group's), REBALANCE_IN_PROGRESS (PreparingRebalance, or a rebalance began while it
 * waited). In CompletingRebalance it waits until the leader's assignment is stored (the
 * leader's own included), then every waiting member gets its part; in Stable it answers at
 * once with the member's assignment. Members the leader leaves out get an empty one. */
struct group_assignment {
    const char *member_id;
    const uint8_t *assignment;
    int32_t len;
};
struct group_sync_args {
    const char *member_id, *group_instance_id;
    int32_t generation_id;
    const char *protocol_type, *protocol_name; /* v5+, NULL = not checked */
    int32_t n_assignments;
    const struct group_assignment *assignments; /* leader only */
};
struct group_sync_result {
    int16_t error;
    const char *protocol_type, *protocol_name;
    const uint8_t *assignment;
    int32_t len;
};
struct group_sync_waiter {
    void (*done)(struct group_sync_waiter *w, const struct group_sync_result *r);
    void *sm_private[4];
};
void group_sm_sync(struct group_sm *sm, const struct group_sync_args *a,
                   struct group_sync_waiter *w);

/* The owner's answer to persist(): 0 = durable. On error the waiting SyncGroups get it (mapped as
 * Kafka maps append errors: COORDINATOR_NOT_AVAILABLE / NOT_COORDINATOR / UNKNOWN_SERVER_ERROR)
 * and the group goes back to PreparingRebalance. A token no longer current is ignored. */
void group_sm_persisted(struct group_sm *sm, uint64_t token, int16_t err);

/* Heartbeat: 0 or Kafka's error (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS,
 * FENCED_INSTANCE_ID, COORDINATOR_NOT_AVAILABLE for a Dead group); refreshes the session.
 * Checked in Kafka's order: Dead, member (and instance id), generation, then the state. */
int16_t group_sm_heartbeat(struct group_sm *sm, const char *member_id,
                           const char *group_instance_id, int32_t generation_id);

/* LeaveGroup of one member (v0–2: member_id; v3+: one call per listed member, which may name
 * only a group_instance_id): 0, UNKNOWN_MEMBER_ID or FENCED_INSTANCE_ID; a Dead group answers
 * COORDINATOR_NOT_AVAILABLE, which Kafka puts in the response's top-level ErrorCode. */
int16_t group_sm_leave(struct group_sm *sm, const char *member_id, const char *group_instance_id,
                       const char *reason);

/* May a member commit offsets now? generation -1 with an empty member id and no instance id
 * from an Empty group = a simple (non-group) commit: 0. Else 0, UNKNOWN_MEMBER_ID,
 * ILLEGAL_GENERATION, FENCED_INSTANCE_ID, REBALANCE_IN_PROGRESS (CompletingRebalance), or
 * COORDINATOR_NOT_AVAILABLE (Dead) — exactly as Kafka's OffsetCommit validation.
 * `txn` = TxnOffsetCommit's rules (KIP-447: generation/member checked only when given).
 * Unlike Kafka it does not count as a heartbeat (the group is const here): consumers heartbeat
 * on their own thread anyway. */
int16_t group_sm_check_commit(const struct group_sm *sm, const char *member_id,
                              const char *group_instance_id, int32_t generation_id, bool txn);

/* Whether a member's subscription (protocol type "consumer": ConsumerProtocolSubscription in
 * the selected protocol's metadata) names `topic` — OffsetDelete's GROUP_SUBSCRIBED_TO_TOPIC.
 * False for other protocol types and for a group with no members. As Kafka does, true when a
 * member's metadata does not decode or no protocol is selected yet (the subscription is then
 * unknown, and offsets a member may be using are not deleted). */
bool group_sm_subscribed(const struct group_sm *sm, const char *topic);

/* DeleteGroups: Dead if Empty (returns 0), else NON_EMPTY_GROUP; Dead already: GROUP_ID_NOT_FOUND.
 */
int16_t group_sm_delete(struct group_sm *sm);

/* Rebuilds the group from its last stored GroupMetadataValue (replay): Stable with those
 * members (each member's session timer starts now) or Empty when there are none. Everything
 * is copied. Returns 0, or ERR_NOMEM (the group is then Empty with no members). */
struct group_sm_snapshot {
    const char *protocol_type, *protocol_name, *leader;
    int32_t generation_id;
    int64_t state_timestamp;
    int32_t n_members;
    const struct group_member_info *members;
};
int group_sm_restore(struct group_sm *sm, const struct group_sm_snapshot *s);

#endif
