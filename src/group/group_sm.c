/* SPDX-License-Identifier: Apache-2.0 */
/* group_sm: the group object, its members and pending member ids, session timers, the outbox
 * that delivers answers and owner calls once the group is consistent again, and the requests
 * that answer at once (Heartbeat, LeaveGroup, the offset-commit check, DeleteGroups, restore).
 * JoinGroup, SyncGroup and the rebalance phases live in group_sm_join.c. */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include "base/arena.h"
#include "base/err.h"
#include "base/slog.h"
#include "group_sm_int.h"

static const char *const state_names[] = {"Empty", "PreparingRebalance", "CompletingRebalance",
                                          "Stable", "Dead"};
#define N_STATES ((int)(sizeof state_names / sizeof state_names[0]))

const char *group_state_name(enum group_state s)
{
    if ((int)s < 0 || (int)s >= N_STATES)
        return "Unknown";
    return state_names[s];
}

int group_state_parse(const char *name)
{
    if (!name)
        return -1;
    for (int i = 0; i < N_STATES; i++)
        if (strcasecmp(name, state_names[i]) == 0)
            return i;
    return -1;
}

/* ---- small helpers ---------------------------------------------------------------------- */

static char *dup_or_empty(const char *s)
{
    return strdup(s ? s : "");
}

static uint8_t *dup_bytes(const uint8_t *p, int32_t len)
{
    uint8_t *c = malloc(len > 0 ? (size_t)len : 1);
    if (c && len > 0)
        memcpy(c, p, (size_t)len);
    return c;
}

void gs_free_protocols(struct gs_protocol *p, int32_t n)
{
    if (!p)
        return;
    for (int32_t i = 0; i < n; i++) {
        free(p[i].name);
        free(p[i].md);
    }
    free(p);
}

int gs_copy_protocols(const struct group_protocol *p, int32_t n, struct gs_protocol **out)
{
    *out = NULL;
    if (n <= 0)
        return 0;
    struct gs_protocol *c = calloc((size_t)n, sizeof *c);
    if (!c)
        return ERR_NOMEM;
    for (int32_t i = 0; i < n; i++) {
        int32_t len = p[i].len > 0 && p[i].metadata ? p[i].len : 0;
        c[i].name = dup_or_empty(p[i].name);
        c[i].md = dup_bytes(p[i].metadata, len);
        c[i].len = len;
        if (!c[i].name || !c[i].md) {
            gs_free_protocols(c, n);
            return ERR_NOMEM;
        }
    }
    *out = c;
    return 0;
}

const struct gs_protocol *gs_member_protocol(const struct gs_member *m, const char *name)
{
    if (!name)
        return NULL;
    for (int32_t i = 0; i < m->n_protocols; i++)
        if (strcmp(m->protocols[i].name, name) == 0)
            return &m->protocols[i];
    return NULL;
}

/* ---- the outbox ---------------------------------------------------------------------------
 * A parked or answered waiter's sm_private: [0] the next waiter in the outbox, [1] the arena
 * holding the result and every string it points to, [2] the result, [3] unused. */

static void deliver_join(struct group_join_waiter *w)
{
    struct arena *a = w->sm_private[1];
    struct group_join_result *r = w->sm_private[2];
    struct group_join_result oom = {
        .error = ERR_UNKNOWN_SERVER_ERROR, .generation_id = -1, .member_id = ""};
    w->sm_private[0] = w->sm_private[1] = w->sm_private[2] = NULL;
    w->done(w, r ? r : &oom);
    arena_free(a);
}

static void deliver_sync(struct group_sync_waiter *w)
{
    struct arena *a = w->sm_private[1];
    struct group_sync_result *r = w->sm_private[2];
    struct group_sync_result oom = {.error = ERR_UNKNOWN_SERVER_ERROR};
    w->sm_private[0] = w->sm_private[1] = w->sm_private[2] = NULL;
    w->done(w, r ? r : &oom);
    arena_free(a);
}

static void queue_join(struct group_sm *sm, struct group_join_waiter *w)
{
    w->sm_private[0] = NULL;
    if (sm->join_out_tail)
        sm->join_out_tail->sm_private[0] = w;
    else
        sm->join_out_head = w;
    sm->join_out_tail = w;
}

static void queue_sync(struct group_sm *sm, struct group_sync_waiter *w)
{
    w->sm_private[0] = NULL;
    if (sm->sync_out_tail)
        sm->sync_out_tail->sm_private[0] = w;
    else
        sm->sync_out_head = w;
    sm->sync_out_tail = w;
}

/* Whether a persist not yet asked of the owner still describes the group: one the group has
 * moved past is dropped (what it would store is stale, and whatever waits on it is answered
 * by the move). */
static bool persist_still_wanted(const struct group_sm *sm, const struct gs_persist *p)
{
    switch (p->kind) {
    case GS_PERSIST_SYNC:
        return sm->state == GROUP_COMPLETING_REBALANCE && sm->generation == p->generation;
    case GS_PERSIST_EMPTY:
        return sm->state == GROUP_EMPTY && sm->generation == p->generation;
    case GS_PERSIST_STATIC:
        return sm->state == GROUP_STABLE && sm->generation == p->generation &&
               gs_find(sm, p->new_id) != NULL;
    }
    return false;
}

static void flush(struct group_sm *sm)
{
    /* Every call out is counted, so that a group_sm_free from inside one waits for it. Once
     * a free is pending nothing more goes out: the free answers what is left. */
    while (!sm->free_pending) {
        if (sm->join_out_head) {
            struct group_join_waiter *w = sm->join_out_head;
            sm->join_out_head = w->sm_private[0];
            if (!sm->join_out_head)
                sm->join_out_tail = NULL;
            sm->in_callback++;
            deliver_join(w);
            sm->in_callback--;
            continue;
        }
        if (sm->sync_out_head) {
            struct group_sync_waiter *w = sm->sync_out_head;
            sm->sync_out_head = w->sm_private[0];
            if (!sm->sync_out_head)
                sm->sync_out_tail = NULL;
            sm->in_callback++;
            deliver_sync(w);
            sm->in_callback--;
            continue;
        }
        struct gs_persist **pp = &sm->persists, *p = NULL;
        while (*pp && (*pp)->requested)
            pp = &(*pp)->next;
        if (*pp) {
            p = *pp;
            if (!persist_still_wanted(sm, p)) {
                *pp = p->next;
                gs_persist_free(p);
                continue;
            }
            p->requested = true;
            /* The owner may answer from within; p is not touched after this. */
            sm->in_callback++;
            sm->owner.persist(sm->owner.arg, sm, p->token);
            sm->in_callback--;
            continue;
        }
        if (sm->n_notes > 0) {
            enum group_state from = sm->notes[0].from, to = sm->notes[0].to;
            memmove(&sm->notes[0], &sm->notes[1], (size_t)(sm->n_notes - 1) * sizeof sm->notes[0]);
            sm->n_notes--;
            sm->in_callback++;
            sm->owner.state_changed(sm->owner.arg, sm, from, to);
            sm->in_callback--;
            continue;
        }
        break;
    }
}

void gs_enter(struct group_sm *sm)
{
    sm->depth++;
}

static void really_free(struct group_sm *sm, int16_t err);

/* The outermost call into the group delivers the outbox, and performs a free asked for from
 * inside a callback; nothing touches `sm` after gs_leave. */
void gs_leave(struct group_sm *sm)
{
    assert(sm->depth > 0);
    if (--sm->depth > 0)
        return;
    flush(sm);
    if (sm->free_pending && sm->in_callback == 0)
        really_free(sm, sm->free_err);
}

void gs_set_state(struct group_sm *sm, enum group_state to)
{
    enum group_state from = sm->state;
    if (from == to)
        return;
    sm->state = to;
    sm->state_ts = tclock_now_ms(sm->clock);
    slog_debug(GS_LOG, "group %s: %s -> %s (generation %d)", sm->group_id, state_names[from],
               state_names[to], sm->generation);
    if (!sm->owner.state_changed)
        return;
    if (from != GROUP_EMPTY && to != GROUP_EMPTY && to != GROUP_DEAD)
        return;
    if (sm->n_notes == (int)(sizeof sm->notes / sizeof sm->notes[0])) {
        /* Full (only a burst of transitions inside one call does this): the last note keeps
         * its `from` and takes the newest `to`, which is what the owner acts on. */
        sm->notes[sm->n_notes - 1].to = to;
        return;
    }
    sm->notes[sm->n_notes].from = from;
    sm->notes[sm->n_notes].to = to;
    sm->n_notes++;
}

/* The result for a join that failed: `member_id` as Kafka answers it for that error. */
void gs_answer_join_error(struct group_sm *sm, struct group_join_waiter *w, int16_t err,
                          const char *member_id)
{
    struct arena *a = arena_new(SIZE_MAX);
    struct group_join_result *r = a ? arena_alloc(a, sizeof *r) : NULL;
    if (r) {
        r->error = err;
        r->generation_id = -1;
        r->member_id =
            arena_strndup(a, member_id ? member_id : "", strlen(member_id ? member_id : ""));
        if (!r->member_id)
            r = NULL;
    }
    if (!r) {
        arena_free(a);
        a = NULL;
    }
    w->sm_private[1] = a;
    w->sm_private[2] = r;
    queue_join(sm, w);
}

static const char *arena_str(struct arena *a, const char *s, bool *ok)
{
    if (!s)
        return NULL;
    char *c = arena_strndup(a, s, strlen(s));
    if (!c)
        *ok = false;
    return c;
}

/* Answers m's parked join with the group as it is now: generation, protocol, `leader_id`
 * (the current leader unless given), the members when `with_members`. Detaches the waiter. */
void gs_answer_join(struct group_sm *sm, struct gs_member *m, const char *leader_id,
                    bool skip_assignment, bool with_members)
{
    struct group_join_waiter *w = m->join_w;
    if (!w)
        return;
    gs_set_join_w(sm, m, NULL);
    bool ok = true;
    struct arena *a = arena_new(SIZE_MAX);
    struct group_join_result *r = a ? arena_alloc(a, sizeof *r) : NULL;
    if (!r)
        goto oom;
    r->error = 0;
    r->generation_id = sm->generation;
    r->protocol_type = arena_str(a, sm->protocol_type, &ok);
    r->protocol_name = arena_str(a, sm->protocol_name, &ok);
    if (!leader_id && sm->leader)
        leader_id = sm->leader->id;
    r->leader = arena_str(a, leader_id, &ok);
    r->member_id = arena_str(a, m->id, &ok);
    r->skip_assignment = skip_assignment;
    if (with_members && sm->n_members > 0) {
        struct group_member_info *mi = arena_alloc(a, (size_t)sm->n_members * sizeof *mi);
        if (!mi)
            goto oom;
        for (int32_t i = 0; i < sm->n_members; i++) {
            const struct gs_member *x = sm->members[i];
            const struct gs_protocol *p = gs_member_protocol(x, sm->protocol_name);
            mi[i].member_id = arena_str(a, x->id, &ok);
            mi[i].group_instance_id = arena_str(a, x->instance_id, &ok);
            mi[i].client_id = arena_str(a, x->client_id, &ok);
            mi[i].client_host = arena_str(a, x->client_host, &ok);
            mi[i].session_timeout_ms = x->session_ms;
            mi[i].rebalance_timeout_ms = x->rebalance_ms;
            if (p && p->len > 0) {
                uint8_t *md = arena_alloc(a, (size_t)p->len);
                if (!md)
                    goto oom;
                memcpy(md, p->md, (size_t)p->len);
                mi[i].metadata = md;
                mi[i].metadata_len = p->len;
            }
        }
        r->members = mi;
        r->n_members = sm->n_members;
    }
    if (!ok)
        goto oom;
    w->sm_private[1] = a;
    w->sm_private[2] = r;
    queue_join(sm, w);
    return;
oom:
    arena_free(a);
    w->sm_private[1] = w->sm_private[2] = NULL;
    queue_join(sm, w);
}

/* Answers a SyncGroup: on success with the group's protocol and m's assignment. */
void gs_answer_sync(struct group_sm *sm, struct group_sync_waiter *w, int16_t err,
                    const struct gs_member *m)
{
    bool ok = true;
    struct arena *a = arena_new(SIZE_MAX);
    struct group_sync_result *r = a ? arena_alloc(a, sizeof *r) : NULL;
    if (!r)
        goto oom;
    r->error = err;
    if (err == 0 && m) {
        r->protocol_type = arena_str(a, sm->protocol_type, &ok);
        r->protocol_name = arena_str(a, sm->protocol_name, &ok);
        if (m->assignment_len > 0) {
            uint8_t *b = arena_alloc(a, (size_t)m->assignment_len);
            if (!b)
                goto oom;
            memcpy(b, m->assignment, (size_t)m->assignment_len);
            r->assignment = b;
            r->len = m->assignment_len;
        }
    }
    if (!ok)
        goto oom;
    w->sm_private[1] = a;
    w->sm_private[2] = r;
    queue_sync(sm, w);
    return;
oom:
    arena_free(a);
    w->sm_private[1] = w->sm_private[2] = NULL;
    queue_sync(sm, w);
}

/* ---- persists -------------------------------------------------------------------------- */

struct gs_persist *gs_persist_new(struct group_sm *sm, enum gs_persist_kind kind)
{
    struct gs_persist *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->kind = kind;
    p->token = ++sm->next_token;
    p->generation = sm->generation;
    /* Appended, so the owner is asked in the order the group changed. */
    struct gs_persist **pp = &sm->persists;
    while (*pp)
        pp = &(*pp)->next;
    *pp = p;
    return p;
}

void gs_persist_free(struct gs_persist *p)
{
    if (!p)
        return;
    free(p->new_id);
    free(p->old_id);
    free(p->old_leader_id);
    gs_free_protocols(p->old_protocols, p->n_old_protocols);
    free(p);
}

/* Kafka's mapping of an append error to what the group's members are told. */
static int16_t map_store_error(int16_t err)
{
    switch (err) {
    case 0:
        return 0;
    case ERR_UNKNOWN_TOPIC_OR_PARTITION:
    case ERR_NOT_ENOUGH_REPLICAS:
    case ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND:
        return ERR_COORDINATOR_NOT_AVAILABLE;
    case ERR_NOT_LEADER_OR_FOLLOWER:
    case ERR_KAFKA_STORAGE_ERROR:
        return ERR_NOT_COORDINATOR;
    case ERR_REQUEST_TIMED_OUT:
        return ERR_REBALANCE_IN_PROGRESS;
    case ERR_MESSAGE_TOO_LARGE:
    case ERR_RECORD_LIST_TOO_LARGE:
    case ERR_INVALID_FETCH_SIZE:
        return ERR_UNKNOWN_SERVER_ERROR;
    default:
        return err < 0 ? ERR_UNKNOWN_SERVER_ERROR : err;
    }
}

void group_sm_persisted(struct group_sm *sm, uint64_t token, int16_t err)
{
    struct gs_persist **pp = &sm->persists;
    while (*pp && !((*pp)->token == token && (*pp)->requested))
        pp = &(*pp)->next;
    if (!*pp)
        return;
    struct gs_persist *p = *pp;
    *pp = p->next;
    int16_t mapped = map_store_error(err);
    gs_enter(sm);
    switch (p->kind) {
    case GS_PERSIST_SYNC:
        gs_persisted_sync(sm, p, mapped);
        break;
    case GS_PERSIST_STATIC:
        gs_persisted_static(sm, p, mapped);
        break;
    case GS_PERSIST_EMPTY:
        /* Nothing waits on it; if the broker fails before the next store, the previous
         * generation comes back and its members' sessions expire, as in Kafka. */
        if (err)
            slog_warn(GS_LOG, "group %s: storing the empty group failed: %s", sm->group_id,
                      err_name(err));
        break;
    }
    gs_leave(sm);
    gs_persist_free(p);
}

/* ---- members --------------------------------------------------------------------------- */

static uint32_t hash_str(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

struct gs_member *gs_find(const struct group_sm *sm, const char *member_id)
{
    if (!member_id || sm->n_buckets == 0)
        return NULL;
    struct gs_member *m = sm->by_id[hash_str(member_id) & (sm->n_buckets - 1)];
    while (m && strcmp(m->id, member_id) != 0)
        m = m->id_next;
    return m;
}

struct gs_member *gs_find_static(const struct group_sm *sm, const char *instance_id)
{
    if (!instance_id || sm->n_buckets == 0)
        return NULL;
    struct gs_member *m = sm->by_instance[hash_str(instance_id) & (sm->n_buckets - 1)];
    while (m && strcmp(m->instance_id, instance_id) != 0)
        m = m->instance_next;
    return m;
}

static void link_member(struct group_sm *sm, struct gs_member *m)
{
    struct gs_member **b = &sm->by_id[hash_str(m->id) & (sm->n_buckets - 1)];
    m->id_next = *b;
    *b = m;
    if (m->instance_id) {
        b = &sm->by_instance[hash_str(m->instance_id) & (sm->n_buckets - 1)];
        m->instance_next = *b;
        *b = m;
    }
}

static void unlink_member(struct group_sm *sm, struct gs_member *m)
{
    struct gs_member **pp = &sm->by_id[hash_str(m->id) & (sm->n_buckets - 1)];
    while (*pp != m)
        pp = &(*pp)->id_next;
    *pp = m->id_next;
    if (m->instance_id) {
        pp = &sm->by_instance[hash_str(m->instance_id) & (sm->n_buckets - 1)];
        while (*pp != m)
            pp = &(*pp)->instance_next;
        *pp = m->instance_next;
    }
}

static int rehash(struct group_sm *sm, uint32_t n_buckets)
{
    struct gs_member **by_id = calloc(n_buckets, sizeof *by_id);
    struct gs_member **by_instance = calloc(n_buckets, sizeof *by_instance);
    if (!by_id || !by_instance) {
        free(by_id);
        free(by_instance);
        return ERR_NOMEM;
    }
    free(sm->by_id);
    free(sm->by_instance);
    sm->by_id = by_id;
    sm->by_instance = by_instance;
    sm->n_buckets = n_buckets;
    for (int32_t i = 0; i < sm->n_members; i++)
        link_member(sm, sm->members[i]);
    return 0;
}

/* Gives m the id `id` (owned from now on) and re-files it. */
void gs_rename_member(struct group_sm *sm, struct gs_member *m, char *id)
{
    unlink_member(sm, m);
    free(m->id);
    m->id = id;
    link_member(sm, m);
}

/* Fills sm->common when it is stale. False when out of memory (callers then count). */
bool gs_common_protocols(struct group_sm *sm)
{
    if (!sm->common_dirty)
        return true;
    sm->n_common = 0;
    if (sm->n_members == 0) {
        sm->common_dirty = false;
        return true;
    }
    const struct gs_member *first = sm->members[0];
    if (first->n_protocols > sm->cap_common) {
        void *p = realloc(sm->common, (size_t)first->n_protocols * sizeof *sm->common);
        if (!p)
            return false;
        sm->common = p;
        sm->cap_common = first->n_protocols;
    }
    for (int32_t c = 0; c < first->n_protocols; c++) {
        const char *name = first->protocols[c].name;
        /* A name the first member lists twice counts once. */
        bool everyone = gs_member_protocol(first, name) == &first->protocols[c];
        for (int32_t i = 1; everyone && i < sm->n_members; i++)
            everyone = gs_member_protocol(sm->members[i], name) != NULL;
        if (everyone)
            sm->common[sm->n_common++] = name;
    }
    sm->common_dirty = false;
    return true;
}

int gs_find_pending(const struct group_sm *sm, const char *member_id)
{
    if (!member_id)
        return -1;
    for (int32_t i = 0; i < sm->n_pending; i++)
        if (strcmp(sm->pending[i]->id, member_id) == 0)
            return i;
    return -1;
}

static void pending_cb(struct tclock_timer *t)
{
    struct gs_pending *p = t->data;
    struct group_sm *sm = p->sm;
    int i = gs_find_pending(sm, p->id);
    assert(i >= 0);
    slog_info(GS_LOG, "group %s: pending member %s removed after its session timeout", sm->group_id,
              p->id);
    gs_enter(sm);
    gs_remove_pending_at(sm, i);
    gs_check_join_complete(sm);
    gs_leave(sm);
}

static int add_pending(struct group_sm *sm, const char *id, int32_t session_ms)
{
    if (sm->n_pending == sm->cap_pending) {
        int32_t cap = sm->cap_pending ? sm->cap_pending * 2 : 4;
        void *n = realloc(sm->pending, (size_t)cap * sizeof *sm->pending);
        if (!n)
            return ERR_NOMEM;
        sm->pending = n;
        sm->cap_pending = cap;
    }
    struct gs_pending *p = calloc(1, sizeof *p);
    if (!p || !(p->id = strdup(id))) {
        free(p);
        return ERR_NOMEM;
    }
    p->sm = sm;
    tclock_timer_init(sm->clock, &p->timer, pending_cb, p);
    if (tclock_timer_start(&p->timer, session_ms, 0) != 0) {
        tclock_timer_close(&p->timer);
        free(p->id);
        free(p);
        return ERR_NOMEM;
    }
    sm->pending[sm->n_pending++] = p;
    return 0;
}

void gs_remove_pending_at(struct group_sm *sm, int i)
{
    struct gs_pending *p = sm->pending[i];
    memmove(&sm->pending[i], &sm->pending[i + 1],
            (size_t)(sm->n_pending - i - 1) * sizeof *sm->pending);
    sm->n_pending--;
    tclock_timer_close(&p->timer);
    free(p->id);
    free(p);
}

/* Session expiry, Kafka's onExpireHeartbeat: a member parked in a join or sync satisfies its
 * heartbeat (its timer is armed again when it is answered), except a new member, whose join
 * has a deadline of its own. */
static void session_cb(struct tclock_timer *t)
{
    struct gs_member *m = t->data;
    struct group_sm *sm = m->sm;
    if (sm->state == GROUP_DEAD)
        return;
    if (!m->is_new && (m->join_w || m->sync_w))
        return;
    slog_info(GS_LOG, "group %s: member %s has failed (session timeout %d ms), removing it",
              sm->group_id, m->id, m->session_ms);
    gs_enter(sm);
    gs_remove_member_and_update(sm, m, "session expired");
    gs_leave(sm);
}

void gs_schedule_session(struct gs_member *m)
{
    int64_t after = m->is_new ? GS_NEW_MEMBER_JOIN_TIMEOUT_MS : m->session_ms;
    /* The virtual clock cannot fail; the real one fails only when a handle cannot be
     * allocated, and then the member simply has no expiry until its next heartbeat. */
    if (tclock_timer_start(&m->timer, after, 0) != 0)
        slog_warn(GS_LOG, "group %s: no session timer for member %s (out of memory)",
                  m->sm->group_id, m->id);
}

struct gs_member *gs_member_new(struct group_sm *sm, const struct group_join_args *a,
                                const char *member_id)
{
    struct gs_member *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->sm = sm;
    tclock_timer_init(sm->clock, &m->timer, session_cb, m);
    m->id = strdup(member_id);
    m->instance_id = a->group_instance_id ? strdup(a->group_instance_id) : NULL;
    m->client_id = dup_or_empty(a->client_id);
    m->client_host = dup_or_empty(a->client_host);
    m->session_ms = a->session_timeout_ms;
    m->rebalance_ms = a->rebalance_timeout_ms > 0 ? a->rebalance_timeout_ms : 0;
    m->n_protocols = a->n_protocols;
    if (!m->id || (a->group_instance_id && !m->instance_id) || !m->client_id || !m->client_host ||
        gs_copy_protocols(a->protocols, a->n_protocols, &m->protocols) != 0) {
        m->n_protocols = m->protocols ? m->n_protocols : 0;
        gs_member_free(m);
        return NULL;
    }
    return m;
}

void gs_member_free(struct gs_member *m)
{
    if (!m)
        return;
    tclock_timer_close(&m->timer);
    free(m->id);
    free(m->instance_id);
    free(m->client_id);
    free(m->client_host);
    gs_free_protocols(m->protocols, m->n_protocols);
    free(m->assignment);
    free(m);
}

static int grow_info(struct group_sm *sm, int32_t n)
{
    if (n <= sm->cap_info)
        return 0;
    int32_t cap = sm->cap_info ? sm->cap_info : 4;
    while (cap < n)
        cap *= 2;
    void *p = realloc(sm->info, (size_t)cap * sizeof *sm->info);
    if (!p)
        return ERR_NOMEM;
    sm->info = p;
    sm->cap_info = cap;
    return 0;
}

int gs_add_member(struct group_sm *sm, struct gs_member *m)
{
    if (sm->n_members == sm->cap_members) {
        int32_t cap = sm->cap_members ? sm->cap_members * 2 : 4;
        void *n = realloc(sm->members, (size_t)cap * sizeof *sm->members);
        if (!n)
            return ERR_NOMEM;
        sm->members = n;
        sm->cap_members = cap;
    }
    /* group_sm_members never allocates: its array grows with the group. */
    if (grow_info(sm, sm->n_members + 1) != 0)
        return ERR_NOMEM;
    if ((uint32_t)sm->n_members + 1 > sm->n_buckets / 2 &&
        rehash(sm, sm->n_buckets ? sm->n_buckets * 2 : 16) != 0)
        return ERR_NOMEM;
    sm->members[sm->n_members++] = m;
    link_member(sm, m);
    if (!sm->leader)
        sm->leader = m;
    /* A newcomer can only narrow what everyone supports. */
    if (sm->n_members == 1) {
        sm->common_dirty = true;
    } else if (!sm->common_dirty) {
        int32_t k = 0;
        for (int32_t c = 0; c < sm->n_common; c++)
            if (gs_member_protocol(m, sm->common[c]))
                sm->common[k++] = sm->common[c];
        sm->n_common = k;
    }
    return 0;
}

/* Takes m out of the group and frees it. Its parked join is answered UNKNOWN_MEMBER_ID (as
 * Kafka's removeMemberAndUpdateGroup does), and so is a parked sync (Kafka drops it). */
void gs_remove_member(struct group_sm *sm, struct gs_member *m)
{
    int32_t i = 0;
    while (i < sm->n_members && sm->members[i] != m)
        i++;
    assert(i < sm->n_members);
    memmove(&sm->members[i], &sm->members[i + 1],
            (size_t)(sm->n_members - i - 1) * sizeof *sm->members);
    sm->n_members--;
    unlink_member(sm, m);
    sm->common_dirty = true;
    if (sm->leader == m)
        sm->leader = sm->n_members > 0 ? sm->members[0] : NULL;
    if (m->join_w) {
        gs_answer_join_error(sm, m->join_w, ERR_UNKNOWN_MEMBER_ID, "");
        gs_set_join_w(sm, m, NULL);
    }
    if (m->sync_w) {
        gs_answer_sync(sm, m->sync_w, ERR_UNKNOWN_MEMBER_ID, NULL);
        m->sync_w = NULL;
    }
    gs_member_free(m);
}

/* Kafka's validateCurrentMember: a static member must be the one mapped to its instance id;
 * a dynamic one must exist. */
int16_t gs_validate_member(const struct group_sm *sm, const char *member_id,
                           const char *instance_id)
{
    if (instance_id) {
        const struct gs_member *s = gs_find_static(sm, instance_id);
        if (!s)
            return ERR_UNKNOWN_MEMBER_ID;
        if (!member_id || strcmp(s->id, member_id) != 0)
            return ERR_FENCED_INSTANCE_ID;
        return 0;
    }
    return gs_find(sm, member_id) ? 0 : ERR_UNKNOWN_MEMBER_ID;
}

/* A member id as Kafka makes one: "<client id or instance id>-<random UUID>". */
int gs_new_member_id(const char *prefix, char **out)
{
    uint8_t b[16];
    if (getrandom(b, sizeof b, GRND_NONBLOCK) != (ssize_t)sizeof b) {
        /* No entropy yet (early boot): ids need only be unique, not secret. */
        static uint64_t counter;
        uint64_t x = (uint64_t)(uintptr_t)out ^ (++counter * 0x9e3779b97f4a7c15ull);
        for (int i = 0; i < 16; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            b[i] = (uint8_t)x;
        }
    }
    b[6] = (uint8_t)((b[6] & 0x0f) | 0x40);
    b[8] = (uint8_t)((b[8] & 0x3f) | 0x80);
    const char *p = prefix ? prefix : "";
    size_t n = strlen(p) + 1 + 36 + 1;
    char *s = malloc(n);
    if (!s)
        return ERR_NOMEM;
    snprintf(s, n, "%s-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", p,
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
    *out = s;
    return 0;
}

int gs_pending_add(struct group_sm *sm, const char *id, int32_t session_ms)
{
    return add_pending(sm, id, session_ms);
}

/* ---- the group ------------------------------------------------------------------------- */

struct group_sm *group_sm_new(const char *group_id, struct tclock *clock,
                              const struct group_sm_config *cfg, const struct group_sm_owner *owner)
{
    struct group_sm *sm = calloc(1, sizeof *sm);
    if (!sm)
        return NULL;
    sm->group_id = strdup(group_id ? group_id : "");
    if (!sm->group_id) {
        free(sm);
        return NULL;
    }
    sm->clock = clock;
    sm->cfg = *cfg;
    sm->owner = *owner;
    sm->state = GROUP_EMPTY;
    sm->state_ts = tclock_now_ms(clock);
    sm->common_dirty = true;
    tclock_timer_init(clock, &sm->join_timer, gs_join_timer_cb, sm);
    tclock_timer_init(clock, &sm->sync_timer, gs_sync_timer_cb, sm);
    return sm;
}

static void clear_members(struct group_sm *sm, int16_t err)
{
    while (sm->n_members > 0) {
        struct gs_member *m = sm->members[sm->n_members - 1];
        unlink_member(sm, m);
        sm->n_members--;
        if (m->join_w) {
            gs_answer_join_error(sm, m->join_w, err, m->id);
            gs_set_join_w(sm, m, NULL);
        }
        if (m->sync_w) {
            gs_answer_sync(sm, m->sync_w, err, NULL);
            m->sync_w = NULL;
        }
        gs_member_free(m);
    }
    sm->leader = NULL;
    sm->common_dirty = true;
    while (sm->n_pending > 0)
        gs_remove_pending_at(sm, sm->n_pending - 1);
}

void group_sm_free(struct group_sm *sm, int16_t err)
{
    if (!sm || sm->freeing)
        return;
    if (sm->depth > 0 || sm->in_callback > 0) {
        /* From inside a callback: done when the outermost call returns. */
        sm->free_pending = true;
        sm->free_err = err;
        return;
    }
    really_free(sm, err);
}

static void really_free(struct group_sm *sm, int16_t err)
{
    sm->freeing = true;
    tclock_timer_close(&sm->join_timer);
    tclock_timer_close(&sm->sync_timer);
    /* Answers are delivered right here; the owner is not asked anything more. */
    clear_members(sm, err);
    while (sm->join_out_head) {
        struct group_join_waiter *w = sm->join_out_head;
        sm->join_out_head = w->sm_private[0];
        deliver_join(w);
    }
    while (sm->sync_out_head) {
        struct group_sync_waiter *w = sm->sync_out_head;
        sm->sync_out_head = w->sm_private[0];
        deliver_sync(w);
    }
    while (sm->persists) {
        struct gs_persist *p = sm->persists;
        sm->persists = p->next;
        gs_persist_free(p);
    }
    free(sm->members);
    free(sm->by_id);
    free(sm->by_instance);
    free(sm->common);
    free(sm->pending);
    free(sm->info);
    free(sm->protocol_type);
    free(sm->protocol_name);
    free(sm->group_id);
    free(sm);
}

const char *group_sm_id(const struct group_sm *sm)
{
    return sm->group_id;
}

enum group_state group_sm_state(const struct group_sm *sm)
{
    return sm->state;
}

int32_t group_sm_generation(const struct group_sm *sm)
{
    return sm->generation;
}

const char *group_sm_protocol_type(const struct group_sm *sm)
{
    return sm->protocol_type;
}

const char *group_sm_protocol_name(const struct group_sm *sm)
{
    return sm->protocol_name;
}

const char *group_sm_leader(const struct group_sm *sm)
{
    return sm->leader ? sm->leader->id : NULL;
}

int64_t group_sm_state_timestamp(const struct group_sm *sm)
{
    return sm->state_ts;
}

const struct group_member_info *group_sm_members(const struct group_sm *sm, int32_t *n)
{
    /* The array is sized as members join (gs_add_member), so this never allocates. */
    struct group_member_info *info = sm->info;
    for (int32_t i = 0; i < sm->n_members; i++) {
        const struct gs_member *m = sm->members[i];
        const struct gs_protocol *p = gs_member_protocol(m, sm->protocol_name);
        info[i] = (struct group_member_info){
            .member_id = m->id,
            .group_instance_id = m->instance_id,
            .client_id = m->client_id,
            .client_host = m->client_host,
            .session_timeout_ms = m->session_ms,
            .rebalance_timeout_ms = m->rebalance_ms,
            .metadata = p ? p->md : NULL,
            .metadata_len = p ? p->len : 0,
            .assignment = m->assignment,
            .assignment_len = m->assignment_len,
        };
    }
    *n = sm->n_members;
    return sm->n_members > 0 ? info : NULL;
}

/* ---- Heartbeat, LeaveGroup, offset commits, DeleteGroups ------------------------------- */

int16_t group_sm_heartbeat(struct group_sm *sm, const char *member_id,
                           const char *group_instance_id, int32_t generation_id)
{
    if (sm->state == GROUP_DEAD)
        return ERR_COORDINATOR_NOT_AVAILABLE;
    int16_t err = gs_validate_member(sm, member_id, group_instance_id);
    if (err)
        return err;
    if (generation_id != sm->generation)
        return ERR_ILLEGAL_GENERATION;
    struct gs_member *m = gs_find(sm, member_id);
    switch (sm->state) {
    case GROUP_EMPTY:
    case GROUP_DEAD:
        return ERR_UNKNOWN_MEMBER_ID;
    case GROUP_PREPARING_REBALANCE:
        gs_schedule_session(m);
        return ERR_REBALANCE_IN_PROGRESS;
    case GROUP_COMPLETING_REBALANCE:
    case GROUP_STABLE:
        /* In CompletingRebalance a member may heartbeat between its join and its sync. */
        gs_schedule_session(m);
        return 0;
    }
    return ERR_UNKNOWN_SERVER_ERROR;
}

int16_t group_sm_leave(struct group_sm *sm, const char *member_id, const char *group_instance_id,
                       const char *reason)
{
    if (sm->state == GROUP_DEAD)
        return ERR_COORDINATOR_NOT_AVAILABLE;
    const char *why = reason && *reason ? reason : "not provided";
    int16_t err = 0;
    gs_enter(sm);
    if (!member_id || !*member_id) {
        /* Administrative removal by instance id alone (LeaveGroup v3+). */
        struct gs_member *m = gs_find_static(sm, group_instance_id);
        if (!m) {
            err = ERR_UNKNOWN_MEMBER_ID;
        } else {
            slog_info(GS_LOG, "group %s: static member %s (instance %s) leaves; reason: %s",
                      sm->group_id, m->id, group_instance_id, why);
            gs_remove_member_and_update(sm, m, "member left");
        }
    } else {
        int i = gs_find_pending(sm, member_id);
        if (i >= 0) {
            slog_info(GS_LOG, "group %s: pending member %s leaves; reason: %s", sm->group_id,
                      member_id, why);
            gs_remove_pending_at(sm, i);
            gs_check_join_complete(sm);
        } else if ((err = gs_validate_member(sm, member_id, group_instance_id)) == 0) {
            slog_info(GS_LOG, "group %s: member %s leaves; reason: %s", sm->group_id, member_id,
                      why);
            gs_remove_member_and_update(sm, gs_find(sm, member_id), "member left");
        }
    }
    gs_leave(sm);
    return err;
}

int16_t group_sm_check_commit(const struct group_sm *sm, const char *member_id,
                              const char *group_instance_id, int32_t generation_id, bool txn)
{
    if (sm->state == GROUP_DEAD)
        return ERR_COORDINATOR_NOT_AVAILABLE;
    if (generation_id >= 0 || (member_id && *member_id) || group_instance_id) {
        int16_t err = gs_validate_member(sm, member_id, group_instance_id);
        if (err)
            return err;
        if (generation_id != sm->generation)
            return ERR_ILLEGAL_GENERATION;
    } else if (!txn && sm->state != GROUP_EMPTY) {
        /* Only members commit to a group that has members. Transactional commits are exempt:
         * their older versions carry no member id or generation. */
        return ERR_UNKNOWN_MEMBER_ID;
    }
    /* A member whose join answered but whose sync has not cannot have an assignment yet. */
    if (!txn && sm->state == GROUP_COMPLETING_REBALANCE)
        return ERR_REBALANCE_IN_PROGRESS;
    return 0;
}

/* ConsumerProtocolSubscription, read with its version-0 schema, which every later version
 * extends (Kafka reads it the same way, so a newer client's metadata still parses):
 **   OFFSET  SIZE  FIELD
 **        0     2  version (int16, >= 0)
 **        2     4  topics count (int32, >= 0)
 **        6     -  each topic: int16 length (>= 0), then that many bytes of name
 **        -     4  user data length (int32; -1 = null), then that many bytes
 **        -     -  fields of later versions, ignored
 * Returns 1 when `topic` is among the topics, 0 when not, -1 when the bytes do not parse. */
static int subscription_names(const uint8_t *p, int32_t len, const char *topic)
{
    size_t tlen = strlen(topic), off = 0, n = len > 0 ? (size_t)len : 0;
    int found = 0;
    if (n < 6)
        return -1;
    int16_t version = (int16_t)(p[0] << 8 | p[1]);
    int32_t count =
        (int32_t)((uint32_t)p[2] << 24 | (uint32_t)p[3] << 16 | (uint32_t)p[4] << 8 | p[5]);
    if (version < 0 || count < 0)
        return -1;
    off = 6;
    for (int32_t i = 0; i < count; i++) {
        if (n - off < 2)
            return -1;
        int16_t sl = (int16_t)(p[off] << 8 | p[off + 1]);
        off += 2;
        if (sl < 0 || n - off < (size_t)sl)
            return -1;
        if ((size_t)sl == tlen && memcmp(p + off, topic, tlen) == 0)
            found = 1;
        off += (size_t)sl;
    }
    if (n - off < 4)
        return -1;
    int32_t ul = (int32_t)((uint32_t)p[off] << 24 | (uint32_t)p[off + 1] << 16 |
                           (uint32_t)p[off + 2] << 8 | p[off + 3]);
    off += 4;
    if (ul < -1 || (ul > 0 && n - off < (size_t)ul))
        return -1;
    return found;
}

bool group_sm_subscribed(const struct group_sm *sm, const char *topic)
{
    if (!topic || !sm->protocol_type || strcmp(sm->protocol_type, "consumer") != 0)
        return false;
    if (sm->n_members == 0)
        return false;
    /* Before the first generation picks a protocol, Kafka knows no subscription and counts
     * the group as subscribed to everything; so does undecodable metadata. */
    if (!sm->protocol_name)
        return true;
    for (int32_t i = 0; i < sm->n_members; i++) {
        const struct gs_protocol *p = gs_member_protocol(sm->members[i], sm->protocol_name);
        int r = p ? subscription_names(p->md, p->len, topic) : -1;
        if (r != 0)
            return true;
    }
    return false;
}

int16_t group_sm_delete(struct group_sm *sm)
{
    switch (sm->state) {
    case GROUP_DEAD:
        return ERR_GROUP_ID_NOT_FOUND;
    case GROUP_EMPTY:
        gs_enter(sm);
        tclock_timer_stop(&sm->join_timer);
        tclock_timer_stop(&sm->sync_timer);
        while (sm->n_pending > 0)
            gs_remove_pending_at(sm, sm->n_pending - 1);
        gs_set_state(sm, GROUP_DEAD);
        gs_leave(sm);
        return 0;
    default:
        return ERR_NON_EMPTY_GROUP;
    }
}

/* ---- replay ---------------------------------------------------------------------------- */

static int restore_member(struct group_sm *sm, const struct group_sm_snapshot *s,
                          const struct group_member_info *mi)
{
    struct group_protocol proto = {
        .name = s->protocol_name ? s->protocol_name : "",
        .metadata = mi->metadata,
        .len = mi->metadata_len,
    };
    struct group_join_args a = {
        .member_id = mi->member_id,
        .group_instance_id = mi->group_instance_id,
        .client_id = mi->client_id,
        .client_host = mi->client_host,
        .session_timeout_ms = mi->session_timeout_ms,
        .rebalance_timeout_ms = mi->rebalance_timeout_ms,
        .n_protocols = 1,
        .protocols = &proto,
    };
    struct gs_member *m = gs_member_new(sm, &a, mi->member_id ? mi->member_id : "");
    if (!m)
        return ERR_NOMEM;
    if (mi->assignment_len > 0) {
        m->assignment = dup_bytes(mi->assignment, mi->assignment_len);
        if (!m->assignment) {
            gs_member_free(m);
            return ERR_NOMEM;
        }
        m->assignment_len = mi->assignment_len;
    }
    if (gs_add_member(sm, m) != 0) {
        gs_member_free(m);
        return ERR_NOMEM;
    }
    gs_schedule_session(m);
    return 0;
}

int group_sm_restore(struct group_sm *sm, const struct group_sm_snapshot *s)
{
    int rc = 0;
    gs_enter(sm);
    tclock_timer_stop(&sm->join_timer);
    tclock_timer_stop(&sm->sync_timer);
    clear_members(sm, ERR_NOT_COORDINATOR);
    free(sm->protocol_type);
    free(sm->protocol_name);
    sm->protocol_type = s->protocol_type ? strdup(s->protocol_type) : NULL;
    sm->protocol_name = s->protocol_name && s->n_members > 0 ? strdup(s->protocol_name) : NULL;
    sm->generation = s->generation_id;
    if ((s->protocol_type && !sm->protocol_type) ||
        (s->protocol_name && s->n_members > 0 && !sm->protocol_name))
        rc = ERR_NOMEM;
    for (int32_t i = 0; rc == 0 && i < s->n_members; i++)
        rc = restore_member(sm, s, &s->members[i]);
    if (rc != 0)
        clear_members(sm, ERR_NOT_COORDINATOR);
    if (sm->n_members > 0) {
        struct gs_member *l = gs_find(sm, s->leader);
        if (l)
            sm->leader = l;
    }
    /* Replay is not a transition the owner hears of: it reads the state afterwards. */
    sm->state = sm->n_members > 0 ? GROUP_STABLE : GROUP_EMPTY;
    sm->state_ts = s->state_timestamp > 0 ? s->state_timestamp : tclock_now_ms(sm->clock);
    gs_leave(sm);
    return rc;
}
