/* SPDX-License-Identifier: Apache-2.0 */
/* controller_sm: broker sessions, registration, heartbeats (unfence, fence, controlled
 * shutdown) and the periodic tick (expired sessions, offline partitions, preferred leaders).
 * Partition changes themselves are partition_change.c's; the rules are controller_sm.h's. */
#include "controller/controller_int.h"

#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/err.h"

/* What one decision may allocate for its records: far above any real cluster's needs, only a
 * guard against a runaway loop. */
#define CTL_OUT_LIMIT ((size_t)256 << 20)
#define CTL_DEFAULT_REBALANCE_BATCH 4

/* ---- decisions' records ------------------------------------------------------------------- */

void ctl_out_init(struct ctl_out *o)
{
    memset(o, 0, sizeof *o);
    o->arena = arena_new(CTL_OUT_LIMIT);
    o->oom = o->arena == NULL;
}

void ctl_out_reset(struct ctl_out *o)
{
    arena_free(o->arena);
    o->arena = arena_new(CTL_OUT_LIMIT);
    o->n = 0;
    o->oom = o->arena == NULL;
}

void ctl_out_free(struct ctl_out *o)
{
    arena_free(o->arena);
    free(o->recs);
    memset(o, 0, sizeof *o);
}

struct meta_record *ctl_out_add(struct ctl_out *o)
{
    if (o->oom)
        return NULL;
    if (o->n == o->cap) {
        size_t cap = o->cap ? 2 * o->cap : 16;
        struct meta_record *r = realloc(o->recs, cap * sizeof *r);
        if (r == NULL) {
            o->oom = true;
            return NULL;
        }
        o->recs = r;
        o->cap = cap;
    }
    memset(&o->recs[o->n], 0, sizeof o->recs[0]);
    return &o->recs[o->n++];
}

int32_t *ctl_out_i32s(struct ctl_out *o, const int32_t *v, int32_t n)
{
    int32_t *p;
    if (n <= 0 || o->oom)
        return NULL;
    p = arena_alloc(o->arena, (size_t)n * sizeof *p);
    if (p == NULL) {
        o->oom = true;
        return NULL;
    }
    memcpy(p, v, (size_t)n * sizeof *p);
    return p;
}

static struct meta_record *add_broker_change(struct ctl_out *o, const struct meta_broker *b,
                                             int8_t fenced, int8_t shutting_down)
{
    struct meta_record *r = ctl_out_add(o);
    if (r == NULL)
        return NULL;
    r->type = META_REC_BROKER_CHANGE;
    r->u.broker_change.id = b->id;
    r->u.broker_change.epoch = b->epoch;
    r->u.broker_change.fenced = fenced;
    r->u.broker_change.shutting_down = shutting_down;
    return r;
}

/* ---- the state machine and its sessions ---------------------------------------------------- */

struct ctl_sm *ctl_sm_new(const struct ctl_config *cfg)
{
    struct ctl_sm *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    c->cfg = *cfg;
    c->cluster_id = strdup(cfg->cluster_id ? cfg->cluster_id : "");
    if (c->cluster_id == NULL) {
        free(c);
        return NULL;
    }
    c->cfg.cluster_id = c->cluster_id;
    if (c->cfg.rebalance_batch <= 0)
        c->cfg.rebalance_batch = CTL_DEFAULT_REBALANCE_BATCH;
    return c;
}

void ctl_sm_free(struct ctl_sm *c)
{
    if (c == NULL)
        return;
    free(c->sessions);
    free(c->cluster_id);
    free(c);
}

static size_t session_pos(const struct ctl_sm *c, int32_t id, bool *found)
{
    size_t lo = 0, hi = c->n_sessions;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->sessions[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = lo < c->n_sessions && c->sessions[lo].id == id;
    return lo;
}

const struct ctl_session *ctl_session_find(const struct ctl_sm *c, int32_t id)
{
    bool found;
    size_t i = session_pos(c, id, &found);
    return found ? &c->sessions[i] : NULL;
}

static struct ctl_session *session_find(struct ctl_sm *c, int32_t id)
{
    bool found;
    size_t i = session_pos(c, id, &found);
    return found ? &c->sessions[i] : NULL;
}

/* The session of `id`, created (contact now, fenced) if missing; NULL on out of memory. */
static struct ctl_session *session_get(struct ctl_sm *c, int32_t id, int64_t now_ms)
{
    bool found;
    size_t i = session_pos(c, id, &found);
    if (found)
        return &c->sessions[i];
    if (c->n_sessions == c->cap_sessions) {
        size_t cap = c->cap_sessions ? 2 * c->cap_sessions : 8;
        struct ctl_session *s = realloc(c->sessions, cap * sizeof *s);
        if (s == NULL)
            return NULL;
        c->sessions = s;
        c->cap_sessions = cap;
    }
    memmove(&c->sessions[i + 1], &c->sessions[i], (c->n_sessions - i) * sizeof *c->sessions);
    c->n_sessions++;
    c->sessions[i] = (struct ctl_session){id, now_ms, -1};
    return &c->sessions[i];
}

bool ctl_sm_session_alive(const struct ctl_sm *c, int32_t broker_id, int64_t now_ms)
{
    const struct ctl_session *s = ctl_session_find(c, broker_id);
    return s && now_ms - s->last_contact_ms < c->cfg.session_timeout_ms;
}

void ctl_sm_activate(struct ctl_sm *c, const struct meta_image *img, int64_t now_ms)
{
    size_t n;
    const struct meta_broker *b = meta_image_brokers(img, &n);
    c->n_sessions = 0;
    for (size_t i = 0; i < n; i++) {
        struct ctl_session *s = session_get(c, b[i].id, now_ms);
        if (s)
            s->unfenced_since_ms = b[i].fenced ? -1 : now_ms;
    }
    c->rebalance_at_ms = now_ms + c->cfg.leader_imbalance_interval_ms;
    c->rebalance_running = false;
}

/* ---- registration ------------------------------------------------------------------------- */

static bool same_dirs(const struct meta_broker *b, const struct ctl_registration *r)
{
    if (r->n_dirs == 0 || r->n_dirs != b->n_dirs)
        return false;
    for (int32_t i = 0; i < r->n_dirs; i++) {
        bool found = false;
        for (int32_t j = 0; j < b->n_dirs && !found; j++)
            found = memcmp(r->dirs[i], b->dirs[j], 16) == 0;
        if (!found)
            return false;
    }
    return true;
}

static bool registration_valid(const struct ctl_registration *r)
{
    if (r->broker_id < 0 || r->n_listeners < 1 || r->listeners == NULL || r->n_dirs < 0 ||
        (r->n_dirs > 0 && r->dirs == NULL))
        return false;
    for (int32_t i = 0; i < r->n_listeners; i++) {
        const struct meta_listener *l = &r->listeners[i];
        if (l->name == NULL || l->host == NULL || l->host[0] == '\0' || l->port <= 0 ||
            l->port > 65535)
            return false;
    }
    return true;
}

/* The REGISTER_BROKER2 record, its strings and arrays copied into out's arena. */
static bool add_registration(struct ctl_out *o, const struct ctl_registration *r)
{
    struct meta_record *rec = ctl_out_add(o);
    struct meta_listener *ls;
    if (rec == NULL)
        return false;
    ls = arena_alloc(o->arena, (size_t)r->n_listeners * sizeof *ls);
    if (ls == NULL)
        goto oom;
    for (int32_t i = 0; i < r->n_listeners; i++) {
        ls[i] = r->listeners[i];
        ls[i].name = arena_strndup(o->arena, r->listeners[i].name, strlen(r->listeners[i].name));
        ls[i].host = arena_strndup(o->arena, r->listeners[i].host, strlen(r->listeners[i].host));
        if (ls[i].name == NULL || ls[i].host == NULL)
            goto oom;
    }
    rec->type = META_REC_REGISTER_BROKER2;
    rec->u.broker.id = r->broker_id;
    rec->u.broker.host = ls[0].host;
    rec->u.broker.port = ls[0].port;
    memcpy(rec->u.broker.incarnation, r->incarnation, 16);
    rec->u.broker.n_listeners = r->n_listeners;
    rec->u.broker.listeners = ls;
    if (r->rack) {
        rec->u.broker.rack = arena_strndup(o->arena, r->rack, strlen(r->rack));
        if (rec->u.broker.rack == NULL)
            goto oom;
    }
    if (r->n_dirs > 0) {
        uint8_t(*dirs)[16] = arena_alloc(o->arena, (size_t)r->n_dirs * sizeof *dirs);
        if (dirs == NULL)
            goto oom;
        memcpy(dirs, r->dirs, (size_t)r->n_dirs * sizeof *dirs);
        rec->u.broker.dirs = (const uint8_t(*)[16])dirs;
        rec->u.broker.n_dirs = r->n_dirs;
    }
    return true;
oom:
    o->oom = true;
    return false;
}

bool ctl_sm_clean_shutdown(const struct meta_image *img, const struct ctl_registration *r)
{
    const struct meta_broker *b = meta_image_broker_by_id(img, r->broker_id);
    return b != NULL && r->previous_broker_epoch >= 0 && r->previous_broker_epoch == b->epoch;
}

int ctl_sm_register(struct ctl_sm *c, const struct meta_image *img,
                    const struct ctl_registration *r, int64_t now_ms, struct ctl_out *out)
{
    const struct meta_broker *b;
    struct ctl_session *s;
    struct ctl_plan pl;

    if (strcmp(r->cluster_id ? r->cluster_id : "", c->cluster_id) != 0)
        return ERR_INCONSISTENT_CLUSTER_ID;
    if (!registration_valid(r))
        return ERR_INVALID_REQUEST;
    b = meta_image_broker_by_id(img, r->broker_id);
    if (b) {
        /* A retry of a registration that applied: the broker reads its epoch from it. */
        if (b->epoch != 0 && memcmp(b->incarnation, r->incarnation, 16) == 0)
            return 0;
        /* Another process holds the id while its session lives, unless it is this very
         * broker restarted in place (same log directories). */
        if (!b->fenced && ctl_sm_session_alive(c, b->id, now_ms) && !same_dirs(b, r))
            return ERR_DUPLICATE_BROKER_REGISTRATION;
    }
    s = session_get(c, r->broker_id, now_ms);
    if (s == NULL || !ctl_plan_init(&pl, c, img, out))
        return ERR_NOMEM;
    if (b) {
        /* The old incarnation is gone: it leaves its ISRs and leaderships in the same batch
         * (the new one starts fenced). Unless it names the epoch of the registration it
         * stopped under — its logs lost nothing since — it may have lost what it had not
         * flushed, and it leaves every ELR too. */
        pl.focus = b->id;
        if (!ctl_plan_override(&pl, b->id, true, false, true))
            return ERR_NOMEM;
        if (!ctl_sm_clean_shutdown(img, r))
            ctl_plan_unclean(&pl, b->id);
        ctl_plan_partitions(&pl);
    }
    if (!add_registration(out, r) || out->oom)
        return ERR_NOMEM;
    s->last_contact_ms = now_ms;
    s->unfenced_since_ms = -1;
    return 0;
}

/* ---- heartbeats ----------------------------------------------------------------------------- */

/* Fences `b` now: its fence record, then its ISRs and leaderships. */
static bool fence(struct ctl_sm *c, const struct meta_image *img, const struct meta_broker *b,
                  struct ctl_out *out)
{
    struct ctl_plan pl;
    struct ctl_session *s;
    if (!ctl_plan_init(&pl, c, img, out) || add_broker_change(out, b, 1, -1) == NULL)
        return false;
    pl.focus = b->id;
    if (!ctl_plan_override(&pl, b->id, true, b->shutting_down, true))
        return false;
    ctl_plan_partitions(&pl);
    if ((s = session_find(c, b->id)) != NULL)
        s->unfenced_since_ms = -1;
    return !out->oom;
}

int ctl_sm_heartbeat(struct ctl_sm *c, const struct meta_image *img, const struct ctl_heartbeat *hb,
                     int64_t now_ms, struct ctl_out *out, struct ctl_heartbeat_answer *ans)
{
    const struct meta_broker *b = meta_image_broker_by_id(img, hb->broker_id);
    struct ctl_session *s;
    struct ctl_plan pl;

    memset(ans, 0, sizeof *ans);
    if (b == NULL)
        return ans->error = ERR_BROKER_NOT_AVAILABLE;
    if (hb->broker_epoch != b->epoch)
        return ans->error = ERR_STALE_BROKER_EPOCH;
    s = session_get(c, b->id, now_ms);
    if (s == NULL)
        return ans->error = ERR_NOMEM;
    s->last_contact_ms = now_ms;
    /* Caught up once it has applied its own registration (Kafka's rule) and, after being
     * fenced, the batch that fenced it and moved its leaderships away: unfenced before that,
     * it would serve clients as the leader its stale image still names (and its Metadata
     * would send them back to it). */
    ans->is_caught_up = hb->metadata_offset >= b->epoch && hb->metadata_offset >= b->fenced_at;
    ans->is_fenced = b->fenced;

    if (b->shutting_down && b->fenced) {
        /* Done with its controlled shutdown (or fenced during it): nothing left to move. */
        ans->should_shutdown = true;
    } else if (b->shutting_down) {
        /* In controlled shutdown: move what can move now (an ISR may have grown); once
         * nothing can, the broker is fenced and may stop. */
        if (!ctl_plan_init(&pl, c, img, out))
            return ans->error = ERR_NOMEM;
        pl.focus = b->id;
        if (!ctl_plan_override(&pl, b->id, false, true, true))
            return ans->error = ERR_NOMEM;
        if (ctl_plan_partitions(&pl) == 0) {
            if (!fence(c, img, b, out))
                return ans->error = ERR_NOMEM;
            ans->is_fenced = ans->should_shutdown = true;
        }
    } else if (b->fenced) {
        if (hb->want_shutdown) {
            ans->should_shutdown = true;
        } else if (!hb->want_fence && ans->is_caught_up) {
            /* Unfenced, with the offline partitions it can now lead. */
            if (!ctl_plan_init(&pl, c, img, out) || add_broker_change(out, b, 0, -1) == NULL)
                return ans->error = ERR_NOMEM;
            pl.focus = b->id;
            if (!ctl_plan_override(&pl, b->id, false, false, false))
                return ans->error = ERR_NOMEM;
            ctl_plan_partitions(&pl);
            s->unfenced_since_ms = now_ms;
            ans->is_fenced = false;
        }
    } else if (hb->want_fence || (hb->want_shutdown && !ctl_leads_any(img, b->id))) {
        /* Asked to be fenced, or to stop while leading nothing: fenced at once. */
        if (!fence(c, img, b, out))
            return ans->error = ERR_NOMEM;
        ans->is_fenced = true;
        ans->should_shutdown = hb->want_shutdown;
    } else if (hb->want_shutdown) {
        /* Controlled shutdown: marked, out of its ISRs, its leaderships moved. */
        if (!ctl_plan_init(&pl, c, img, out) || add_broker_change(out, b, -1, 1) == NULL)
            return ans->error = ERR_NOMEM;
        pl.focus = b->id;
        if (!ctl_plan_override(&pl, b->id, false, true, true))
            return ans->error = ERR_NOMEM;
        ctl_plan_partitions(&pl);
    }
    if (out->oom)
        return ans->error = ERR_NOMEM;
    return 0;
}

/* ---- the tick ------------------------------------------------------------------------------- */

void ctl_sm_tick(struct ctl_sm *c, const struct meta_image *img, int64_t now_ms,
                 struct ctl_out *out)
{
    size_t n;
    const struct meta_broker *b = meta_image_brokers(img, &n);
    struct ctl_plan pl;
    size_t first = out->n;
    bool more;

    if (!ctl_plan_init(&pl, c, img, out))
        return;
    for (size_t i = 0; i < n; i++) {
        struct ctl_session *s = session_get(c, b[i].id, now_ms);
        if (s == NULL) {
            out->oom = true;
            return;
        }
        if (b[i].fenced) {
            s->unfenced_since_ms = -1;
            continue;
        }
        /* Unfenced by a decision this controller did not take (a registration of the old
         * record type, or before it became active): its time starts now. */
        if (s->unfenced_since_ms < 0)
            s->unfenced_since_ms = now_ms;
        if (now_ms - s->last_contact_ms < c->cfg.session_timeout_ms)
            continue;
        if (add_broker_change(out, &b[i], 1, -1) == NULL ||
            !ctl_plan_override(&pl, b[i].id, true, b[i].shutting_down, true))
            return;
        s->unfenced_since_ms = -1;
    }
    /* One pass over every partition: the expired brokers' ISRs and leaderships, and offline
     * partitions that someone can lead now. */
    ctl_plan_partitions(&pl);
    if (out->oom || !c->cfg.auto_leader_rebalance)
        return;
    /* Preferred leaders only in a tick that had nothing else to do, so that every
     * partition changes at most once per batch. */
    if (out->n != first || (!c->rebalance_running && now_ms < c->rebalance_at_ms))
        return;
    ctl_plan_preferred(&pl, c->cfg.rebalance_batch, now_ms, &more);
    if (out->oom)
        return;
    c->rebalance_running = more;
    if (!more)
        c->rebalance_at_ms = now_ms + c->cfg.leader_imbalance_interval_ms;
}

int64_t ctl_sm_next_deadline(const struct ctl_sm *c, int64_t now_ms)
{
    int64_t next = now_ms + c->cfg.session_timeout_ms;
    for (size_t i = 0; i < c->n_sessions; i++) {
        const struct ctl_session *s = &c->sessions[i];
        if (s->unfenced_since_ms >= 0 && s->last_contact_ms + c->cfg.session_timeout_ms < next)
            next = s->last_contact_ms + c->cfg.session_timeout_ms;
    }
    if (c->cfg.auto_leader_rebalance) {
        int64_t r = c->rebalance_running ? now_ms : c->rebalance_at_ms;
        if (r < next)
            next = r;
    }
    return next < now_ms ? now_ms : next;
}
