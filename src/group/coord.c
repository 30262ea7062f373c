/* SPDX-License-Identifier: Apache-2.0 */
/* The group coordinator's core: creation and stop, the shards (one per __consumer_offsets
 * partition this broker leads, loaded on a leadership event and unloaded when leadership
 * goes), the groups and offsets of a shard, the group → partition hash, and offset expiry. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/err.h"
#include "base/jhash.h"
#include "base/props.h"
#include "base/slog.h"
#include "group_int.h"
#include "meta/meta.h"
#include "net/net.h"

int32_t group_partition_for(const char *group_id, int32_t n_partitions)
{
    return java_partition_for(group_id, n_partitions);
}

/* ---- hash table --------------------------------------------------------------------------- */

uint64_t ghash_bytes(const void *key, size_t len)
{
    /* FNV-1a, 64 bit. */
    const unsigned char *p = key;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

struct ghash_node *ghash_find(const struct ghash *h, const void *key, size_t len)
{
    uint64_t hv;
    if (h->n_buckets == 0)
        return NULL;
    hv = ghash_bytes(key, len);
    for (struct ghash_node *n = h->buckets[hv & (h->n_buckets - 1)]; n; n = n->next)
        if (n->hash == hv && n->key_len == len && memcmp(n->key, key, len) == 0)
            return n;
    return NULL;
}

static int ghash_grow(struct ghash *h)
{
    size_t nb = h->n_buckets ? h->n_buckets * 2 : 8;
    struct ghash_node **b = calloc(nb, sizeof *b);
    if (b == NULL)
        return ERR_NOMEM;
    for (size_t i = 0; i < h->n_buckets; i++) {
        struct ghash_node *n = h->buckets[i], *next;
        for (; n; n = next) {
            next = n->next;
            n->next = b[n->hash & (nb - 1)];
            b[n->hash & (nb - 1)] = n;
        }
    }
    free(h->buckets);
    h->buckets = b;
    h->n_buckets = nb;
    return 0;
}

int ghash_insert(struct ghash *h, struct ghash_node *n)
{
    if (h->n + 1 > h->n_buckets && ghash_grow(h) != 0 && h->n_buckets == 0)
        return ERR_NOMEM;
    n->hash = ghash_bytes(n->key, n->key_len);
    n->next = h->buckets[n->hash & (h->n_buckets - 1)];
    h->buckets[n->hash & (h->n_buckets - 1)] = n;
    h->n++;
    return 0;
}

void ghash_remove(struct ghash *h, struct ghash_node *n)
{
    struct ghash_node **pp = &h->buckets[n->hash & (h->n_buckets - 1)];
    for (; *pp; pp = &(*pp)->next) {
        if (*pp == n) {
            *pp = n->next;
            h->n--;
            return;
        }
    }
}

void ghash_free(struct ghash *h)
{
    free(h->buckets);
    h->buckets = NULL;
    h->n_buckets = h->n = 0;
}

void ghash_each(struct ghash *h, void (*fn)(void *arg, struct ghash_node *n), void *arg)
{
    for (size_t i = 0; i < h->n_buckets; i++) {
        struct ghash_node *n = h->buckets[i], *next;
        for (; n; n = next) {
            next = n->next;
            fn(arg, n);
        }
    }
}

/* ---- offsets ------------------------------------------------------------------------------ */

static size_t offset_key(char *buf, size_t cap, const char *topic, int32_t part)
{
    size_t tl = strlen(topic);
    if (tl + 5 > cap)
        return 0;
    memcpy(buf, topic, tl + 1);
    buf[tl + 1] = (char)((uint32_t)part >> 24);
    buf[tl + 2] = (char)((uint32_t)part >> 16);
    buf[tl + 3] = (char)((uint32_t)part >> 8);
    buf[tl + 4] = (char)part;
    return tl + 5;
}

struct coord_offset *coord_offset_find(struct coord_group *g, const char *topic, int32_t part)
{
    char buf[512];
    size_t len = offset_key(buf, sizeof buf, topic, part);
    struct ghash_node *n = len ? ghash_find(&g->offsets, buf, len) : NULL;
    return n ? (struct coord_offset *)n : NULL;
}

int coord_offset_set(struct coord_group *g, const char *topic, int32_t partition, int64_t offset,
                     int32_t leader_epoch, const char *metadata, int64_t commit_ts)
{
    struct coord_offset *o = coord_offset_find(g, topic, partition);
    char *md = strdup(metadata ? metadata : "");

    if (md == NULL)
        return ERR_NOMEM;
    if (o == NULL) {
        size_t tl = strlen(topic);
        o = calloc(1, sizeof *o);
        if (o)
            o->key = malloc(tl + 5);
        if (o == NULL || o->key == NULL) {
            if (o)
                free(o);
            free(md);
            return ERR_NOMEM;
        }
        o->key_len = offset_key(o->key, tl + 5, topic, partition);
        o->topic = o->key;
        o->partition = partition;
        o->node.key = o->key;
        o->node.key_len = o->key_len;
        if (ghash_insert(&g->offsets, &o->node) != 0) {
            free(o->key);
            free(o);
            free(md);
            return ERR_NOMEM;
        }
    } else {
        free(o->metadata);
    }
    o->metadata = md;
    o->offset = offset;
    o->leader_epoch = leader_epoch;
    o->commit_ts = commit_ts;
    return 0;
}

static void offset_free(struct coord_offset *o)
{
    free(o->key);
    free(o->metadata);
    free(o);
}

void coord_offset_delete(struct coord_group *g, struct coord_offset *o)
{
    ghash_remove(&g->offsets, &o->node);
    offset_free(o);
}

static void free_offset_node(void *arg, struct ghash_node *n)
{
    (void)arg;
    offset_free((struct coord_offset *)n);
}

/* ---- groups ------------------------------------------------------------------------------- */

struct coord_group *coord_group_find(struct shard *sh, const char *group_id)
{
    struct ghash_node *n = ghash_find(&sh->groups, group_id, strlen(group_id));
    return n ? (struct coord_group *)n : NULL;
}

struct coord_group *coord_group_again(struct shard *sh, const char *group_id, uint64_t incarnation)
{
    struct coord_group *g = coord_group_find(sh, group_id);
    return g && g->incarnation == incarnation ? g : NULL;
}

struct coord_group *coord_group_get(struct shard *sh, const char *group_id)
{
    struct coord_group *g = coord_group_find(sh, group_id);
    struct group_sm_owner owner = coord_sm_owner_template;

    if (g)
        return g;
    g = calloc(1, sizeof *g);
    if (g == NULL)
        return NULL;
    g->id_len = strlen(group_id);
    g->id = strdup(group_id);
    g->sh = sh;
    g->incarnation = ++sh->gc->next_incarnation;
    owner.arg = g;
    if (g->id)
        g->sm = group_sm_new(group_id, sh->gc->clock, &sh->gc->sm_cfg, &owner);
    g->node.key = g->id;
    g->node.key_len = g->id_len;
    if (g->sm == NULL || ghash_insert(&sh->groups, &g->node) != 0) {
        group_sm_free(g->sm, ERR_COORDINATOR_NOT_AVAILABLE);
        free(g->id);
        free(g);
        return NULL;
    }
    return g;
}

static void group_release(struct coord_group *g, int16_t err)
{
    struct group_sm *sm = g->sm;
    g->sm = NULL;
    group_sm_free(sm, err);
    ghash_each(&g->offsets, free_offset_node, NULL);
    ghash_free(&g->offsets);
    free(g->id);
    free(g);
}

void coord_group_free(struct coord_group *g, int16_t err)
{
    ghash_remove(&g->sh->groups, &g->node);
    group_release(g, err);
}

/* ---- pending transactional offsets -------------------------------------------------------- */

static void pending_free(struct coord_pending *p)
{
    free(p->group_id);
    free(p->topic);
    free(p->metadata);
    free(p);
}

int coord_pending_add(struct shard *sh, int64_t producer_id, const char *group_id,
                      const char *topic, int32_t partition, int64_t offset, int32_t leader_epoch,
                      const char *metadata, int64_t commit_ts)
{
    struct coord_pending *p = calloc(1, sizeof *p);
    if (p == NULL)
        return ERR_NOMEM;
    p->producer_id = producer_id;
    p->group_id = strdup(group_id);
    p->topic = strdup(topic);
    p->metadata = strdup(metadata ? metadata : "");
    if (p->group_id == NULL || p->topic == NULL || p->metadata == NULL) {
        pending_free(p);
        return ERR_NOMEM;
    }
    p->partition = partition;
    p->offset = offset;
    p->leader_epoch = leader_epoch;
    p->commit_ts = commit_ts;
    /* Appended at the tail: a later commit of the same partition must win at the marker. */
    struct coord_pending **pp = &sh->pending;
    while (*pp)
        pp = &(*pp)->next;
    *pp = p;
    return 0;
}

void coord_pending_complete(struct shard *sh, int64_t producer_id, bool commit)
{
    struct coord_pending **pp = &sh->pending;
    while (*pp) {
        struct coord_pending *p = *pp;
        if (p->producer_id != producer_id) {
            pp = &p->next;
            continue;
        }
        *pp = p->next;
        if (commit) {
            struct coord_group *g = coord_group_get(sh, p->group_id);
            if (g == NULL || coord_offset_set(g, p->topic, p->partition, p->offset, p->leader_epoch,
                                              p->metadata, p->commit_ts) != 0)
                slog_error("group", "out of memory materialising a transactional offset of %s",
                           p->group_id);
        }
        pending_free(p);
    }
}

void coord_pending_drop_group(struct shard *sh, const char *group_id)
{
    struct coord_pending **pp = &sh->pending;
    while (*pp) {
        struct coord_pending *p = *pp;
        if (strcmp(p->group_id, group_id) == 0) {
            *pp = p->next;
            pending_free(p);
        } else {
            pp = &p->next;
        }
    }
}

/* ---- shards ------------------------------------------------------------------------------- */

int32_t coord_n_partitions(struct group_coord *gc)
{
    const struct meta_topic *t = meta_topic_by_name(gc->meta, GROUP_TOPIC);
    return t && t->n_partitions > 0 ? t->n_partitions : gc->n_partitions_cfg;
}

int16_t coord_shard_for(struct group_coord *gc, const char *group_id, struct shard **out)
{
    const struct meta_topic *t = meta_topic_by_name(gc->meta, GROUP_TOPIC);
    int32_t p;
    struct shard *sh;

    if (gc->stopping)
        return ERR_COORDINATOR_NOT_AVAILABLE;
    if (t == NULL) {
        coord_ask_for_topic(gc, COORD_KEY_TYPE_GROUP);
        return ERR_COORDINATOR_NOT_AVAILABLE;
    }
    p = group_partition_for(group_id, t->n_partitions);
    sh = p < gc->n_shards ? gc->shards[p] : NULL;
    if (sh == NULL)
        return t->partitions[p].leader < 0 ? ERR_COORDINATOR_NOT_AVAILABLE : ERR_NOT_COORDINATOR;
    if (sh->loading)
        return ERR_COORDINATOR_LOAD_IN_PROGRESS;
    *out = sh;
    return 0;
}

static int shards_reserve(struct group_coord *gc, int32_t partition)
{
    if (partition < gc->n_shards)
        return 0;
    int32_t n = partition + 1 > gc->n_partitions_cfg ? partition + 1 : gc->n_partitions_cfg;
    struct shard **s = realloc(gc->shards, (size_t)n * sizeof *s);
    if (s == NULL)
        return ERR_NOMEM;
    for (int32_t i = gc->n_shards; i < n; i++)
        s[i] = NULL;
    gc->shards = s;
    gc->n_shards = n;
    return 0;
}

static void free_group_node(void *arg, struct ghash_node *n)
{
    int16_t *err = arg;
    group_release((struct coord_group *)n, *err);
}

/* coord_log ops: this broker leads `partition` now; its replay follows. */
static void *shard_new(void *arg, int32_t partition, int32_t epoch)
{
    struct group_coord *gc = arg;
    struct shard *sh;

    if (shards_reserve(gc, partition) != 0 || (sh = calloc(1, sizeof *sh)) == NULL)
        return NULL;
    sh->gc = gc;
    sh->partition = partition;
    sh->epoch = epoch;
    sh->loading = true;
    gc->shards[partition] = sh;
    return sh;
}

static void shard_loaded(void *shard, int64_t records, int64_t ms)
{
    struct shard *sh = shard;
    sh->loading = false;
    /* Fifty empty partitions load at every start: only loads with something in them say so. */
    slog_line(records > 0 ? SLOG_INFO : SLOG_DEBUG, "group",
              "loaded %s-%d (epoch %d): %zu groups from %lld records in %lld ms", GROUP_TOPIC,
              sh->partition, sh->epoch, sh->groups.n, (long long)records, (long long)ms);
}

/* Leadership went (its appends have completed): every waiter of the shard gets `err`, its
 * state is dropped. */
static void shard_free(void *shard, int16_t err)
{
    struct shard *sh = shard;
    struct group_coord *gc = sh->gc;

    gc->shards[sh->partition] = NULL;
    ghash_each(&sh->groups, free_group_node, &err);
    ghash_free(&sh->groups);
    while (sh->pending) {
        struct coord_pending *p = sh->pending;
        sh->pending = p->next;
        pending_free(p);
    }
    if (!gc->stopping)
        slog_info("group", "unloaded %s-%d (epoch %d)", GROUP_TOPIC, sh->partition, sh->epoch);
    free(sh);
}

static const struct coord_log_ops shard_ops = {
    .shard_new = shard_new,
    .replay = coord_replay,
    .loaded = shard_loaded,
    .shard_free = shard_free,
};

/* ---- offset expiry ------------------------------------------------------------------------ */

struct expiry {
    struct shard *sh;
    int64_t now;
    struct coord_record *recs;
    int32_t n, cap;
    struct coord_group *g;
    int64_t base;    /* -1: each offset's commit timestamp */
    bool subscribed; /* only offsets of topics the group does not subscribe to */
    int32_t expired;
    bool nomem;
};

static bool expiry_push(struct expiry *x, uint8_t *key, int32_t key_len)
{
    if (x->n == x->cap) {
        int32_t cap = x->cap ? x->cap * 2 : 64;
        struct coord_record *r = realloc(x->recs, (size_t)cap * sizeof *r);
        if (r == NULL)
            return false;
        x->recs = r;
        x->cap = cap;
    }
    x->recs[x->n++] = (struct coord_record){.key = key, .key_len = key_len};
    return true;
}

static void expire_offset(void *arg, struct ghash_node *n)
{
    struct expiry *x = arg;
    struct coord_offset *o = (struct coord_offset *)n;
    int64_t base = x->base >= 0 ? x->base : o->commit_ts;
    uint8_t *key;
    int32_t len;

    if (x->nomem || x->now - base < x->sh->gc->retention_ms)
        return;
    if (x->subscribed && group_sm_subscribed(x->g->sm, o->topic))
        return;
    if (coord_offset_key_encode(x->g->id, o->topic, o->partition, &key, &len) != 0 ||
        !expiry_push(x, key, len)) {
        x->nomem = true;
        return;
    }
    coord_offset_delete(x->g, o);
    x->expired++;
}

static void expire_group(void *arg, struct ghash_node *n)
{
    struct expiry *x = arg;
    struct coord_group *g = (struct coord_group *)n;
    enum group_state st = group_sm_state(g->sm);
    const char *ptype = group_sm_protocol_type(g->sm);

    if (x->nomem)
        return;
    x->g = g;
    x->subscribed = false;
    if (st == GROUP_EMPTY && ptype != NULL)
        x->base = group_sm_state_timestamp(g->sm);
    else if (st == GROUP_EMPTY)
        x->base = -1;
    else if (st == GROUP_STABLE && ptype != NULL && strcmp(ptype, "consumer") == 0) {
        /* KIP-496: a Stable consumer group loses the offsets of topics it no longer
         * subscribes to. */
        x->base = -1;
        x->subscribed = true;
    } else
        return;
    ghash_each(&g->offsets, expire_offset, x);
    if (x->nomem || st != GROUP_EMPTY || g->offsets.n > 0)
        return;
    /* An Empty group with no offsets left is dead; its metadata gets a tombstone unless only
     * offsets were ever stored for it (generation 0), as Kafka does. */
    bool tombstone = g->metadata_in_log || group_sm_generation(g->sm) > 0;
    if (tombstone) {
        uint8_t *key;
        int32_t len;
        if (coord_group_key_encode(g->id, &key, &len) != 0 || !expiry_push(x, key, len)) {
            x->nomem = true;
            return;
        }
    }
    slog_info("group", "group %s expired: Empty with no committed offsets left", g->id);
    group_sm_delete(g->sm);
    coord_pending_drop_group(x->sh, g->id);
    coord_group_free(g, ERR_COORDINATOR_NOT_AVAILABLE);
}

static void on_tombstones_written(struct coord_append *ap, int16_t err)
{
    if (err != 0 && !ap->unloaded)
        slog_warn("group", "writing expiry tombstones to %s-%d failed: %s", GROUP_TOPIC,
                  ap->sh->partition, err_name(err));
    free(ap);
}

/* Expires the shard's offsets now; returns how many went. */
static int32_t shard_expire(struct shard *sh, int64_t now)
{
    struct expiry x = {.sh = sh, .now = now};
    ghash_each(&sh->groups, expire_group, &x);
    if (x.nomem)
        slog_error("group", "out of memory expiring offsets of %s-%d", GROUP_TOPIC, sh->partition);
    if (x.n > 0) {
        struct coord_append *ap = calloc(1, sizeof *ap);
        if (ap)
            coord_append_start(sh, x.recs, x.n, -1, -1, ap, on_tombstones_written, NULL);
        else
            slog_error("group", "out of memory writing expiry tombstones");
    }
    for (int32_t i = 0; i < x.n; i++)
        free(x.recs[i].key);
    free(x.recs);
    return x.expired;
}

static void on_expiry_timer(struct tclock_timer *t)
{
    struct group_coord *gc = t->data;
    int64_t now = tclock_now_ms(gc->clock);
    int32_t total = 0;

    for (int32_t i = 0; i < gc->n_shards; i++)
        if (gc->shards[i] && !gc->shards[i]->loading)
            total += shard_expire(gc->shards[i], now);
    if (total > 0)
        slog_info("group", "removed %d expired offsets", total);
}

/* ---- lifecycle ---------------------------------------------------------------------------- */

static int32_t cfg_int(const struct props *p, const char *key, int64_t def, int64_t lo, int64_t hi)
{
    int64_t v = props_get_int(p, key, def, NULL);
    return (int32_t)(v < lo ? lo : v > hi ? hi : v);
}

static void stopped_early(void *arg)
{
    (void)arg;
}

struct group_coord *group_coord_new(const struct group_coord_options *o)
{
    struct group_coord *gc = calloc(1, sizeof *gc);

    if (gc == NULL)
        return NULL;
    gc->loop = o->loop;
    gc->clock = o->clock;
    gc->replicas = o->replicas;
    gc->meta = o->meta;
    gc->config = o->config;
    gc->node_id = o->node_id;
    gc->ensure_topic = o->ensure_topic;
    gc->ensure_arg = o->ensure_arg;
    for (size_t i = 0; i < sizeof gc->ensure_asked_ms / sizeof gc->ensure_asked_ms[0]; i++)
        gc->ensure_asked_ms[i] = -1;
    gc->n_partitions_cfg = cfg_int(o->config, "offsets.topic.num.partitions", 50, 1, INT32_MAX);
    gc->retention_ms =
        (int64_t)cfg_int(o->config, "offsets.retention.minutes", 10080, 1, INT32_MAX) * 60000;
    gc->retention_check_ms =
        props_get_int(o->config, "offsets.retention.check.interval.ms", 600000, NULL);
    if (gc->retention_check_ms < 1)
        gc->retention_check_ms = 600000;
    gc->metadata_max_bytes = cfg_int(o->config, "offset.metadata.max.bytes", 4096, 0, INT32_MAX);
    gc->commit_timeout_ms = props_get_int(o->config, "offsets.commit.timeout.ms", 5000, NULL);
    gc->sm_cfg.min_session_timeout_ms =
        cfg_int(o->config, "group.min.session.timeout.ms", 6000, 0, INT32_MAX);
    gc->sm_cfg.max_session_timeout_ms =
        cfg_int(o->config, "group.max.session.timeout.ms", 1800000, 0, INT32_MAX);
    gc->sm_cfg.initial_rebalance_delay_ms =
        cfg_int(o->config, "group.initial.rebalance.delay.ms", 3000, 0, INT32_MAX);
    gc->sm_cfg.max_size = cfg_int(o->config, "group.max.size", INT32_MAX, 1, INT32_MAX);
    if (shards_reserve(gc, gc->n_partitions_cfg - 1) != 0)
        goto err;
    struct coord_log_options lo = {
        .loop = gc->loop,
        .clock = gc->clock,
        .replicas = gc->replicas,
        .meta = gc->meta,
        .topic = GROUP_TOPIC,
        .module = "group",
        .append_timeout_ms = gc->commit_timeout_ms > 0 ? gc->commit_timeout_ms : 5000,
        .ops = &shard_ops,
        .arg = gc,
    };
    if (coord_log_new(&lo, &gc->log) != 0)
        goto err;
    tclock_timer_init(gc->clock, &gc->expiry_timer, on_expiry_timer, gc);
    if (tclock_timer_start(&gc->expiry_timer, gc->retention_check_ms, gc->retention_check_ms) !=
        0) {
        tclock_timer_close(&gc->expiry_timer);
        gc->stopping = true;
        coord_log_stop(gc->log, stopped_early, NULL);
        goto err;
    }
    return gc;

err:
    free(gc->shards);
    free(gc);
    return NULL;
}

static void on_log_stopped(void *arg)
{
    struct group_coord *gc = arg;
    void (*cb)(void *) = gc->stop_cb;
    void *cb_arg = gc->stop_arg;
    free(gc->shards);
    free(gc);
    cb(cb_arg);
}

void group_coord_stop(struct group_coord *gc, void (*cb)(void *arg), void *arg)
{
    gc->stopping = true;
    gc->stop_cb = cb;
    gc->stop_arg = arg;
    tclock_timer_close(&gc->expiry_timer);
    coord_log_stop(gc->log, on_log_stopped, gc);
}

void group_coord_shards(const struct group_coord *gc, int32_t *led, int32_t *loading)
{
    *led = *loading = 0;
    for (int32_t i = 0; i < gc->n_shards; i++) {
        if (gc->shards[i]) {
            (*led)++;
            *loading += gc->shards[i]->loading;
        }
    }
}

struct each_walk {
    group_each_group_fn on_group;
    group_each_offset_fn on_offset;
    void *arg;
    const char *group_id;
    size_t n;
};

static void each_offset(void *arg, struct ghash_node *n)
{
    struct each_walk *w = arg;
    struct coord_offset *o = (struct coord_offset *)n;
    w->on_offset(w->arg, w->group_id, o->topic, o->partition, o->offset);
}

static void each_group(void *arg, struct ghash_node *n)
{
    struct each_walk *w = arg;
    struct coord_group *g = (struct coord_group *)n;
    int32_t members = 0;
    group_sm_members(g->sm, &members);
    w->n++;
    if (w->on_group)
        w->on_group(w->arg, g->id, group_state_name(group_sm_state(g->sm)), members);
    w->group_id = g->id;
    if (w->on_offset)
        ghash_each(&g->offsets, each_offset, w);
}

size_t group_coord_members(struct group_coord *gc, const char *group_id, group_each_member_fn fn,
                           void *arg)
{
    struct shard *sh;
    struct coord_group *g = NULL;
    int32_t n = 0;
    if (gc == NULL || coord_find_group(gc, group_id, false, &sh, &g) != 0 || g == NULL)
        return 0;
    const struct group_member_info *m = group_sm_members(g->sm, &n);
    for (int32_t i = 0; i < n; i++)
        fn(arg, &m[i]);
    return (size_t)n;
}

size_t group_coord_for_each(struct group_coord *gc, group_each_group_fn on_group,
                            group_each_offset_fn on_offset, void *arg)
{
    struct each_walk w = {.on_group = on_group, .on_offset = on_offset, .arg = arg};
    for (int32_t i = 0; gc && i < gc->n_shards; i++)
        if (gc->shards[i] && !gc->shards[i]->loading)
            ghash_each(&gc->shards[i]->groups, each_group, &w);
    return w.n;
}

/* ---- request helpers ---------------------------------------------------------------------- */

const char *coord_client_host(struct arena *ar, const char *peer)
{
    const char *colon = peer ? strrchr(peer, ':') : NULL;
    size_t len = colon ? (size_t)(colon - peer) : (peer ? strlen(peer) : 0);
    char *s = arena_alloc(ar, len + 2);
    if (s == NULL)
        return "";
    s[0] = '/';
    if (len)
        memcpy(s + 1, peer, len);
    s[len + 1] = '\0';
    return s;
}

uint8_t *coord_dup_bytes(struct arena *ar, const uint8_t *p, int32_t len)
{
    uint8_t *d;
    if (len <= 0)
        return (uint8_t *)"";
    d = arena_alloc(ar, (size_t)len);
    if (d)
        memcpy(d, p, (size_t)len);
    return d;
}

bool coord_partition_known(struct group_coord *gc, const char *topic, int32_t partition)
{
    const struct meta_topic *t = topic ? meta_topic_by_name(gc->meta, topic) : NULL;
    return t && partition >= 0 && partition < t->n_partitions;
}

int16_t coord_find_group(struct group_coord *gc, const char *group_id, bool create,
                         struct shard **sh, struct coord_group **g)
{
    int16_t err = coord_shard_for(gc, group_id, sh);
    if (err != 0)
        return err;
    *g = create ? coord_group_get(*sh, group_id) : coord_group_find(*sh, group_id);
    if (create && *g == NULL)
        return ERR_COORDINATOR_NOT_AVAILABLE;
    return 0;
}

void coord_nomem(struct net_request *req, const char *api)
{
    slog_error("group", "out of memory in %s from %s; closing", api, req->peer);
    net_close_connection(req);
}

size_t group_coord_waiting(const struct group_coord *gc)
{
    return gc ? coord_log_waiting(gc->log) : 0;
}

uint64_t group_coord_load_reads(const struct group_coord *gc)
{
    return coord_log_reads(gc->log);
}
