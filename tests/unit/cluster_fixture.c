/* SPDX-License-Identifier: Apache-2.0 */
/* cluster_fixture: brokers, controller, raft oracle, fake network and clients on one virtual
 * clock (see cluster_fixture.h). The real state machines decide; this file only carries
 * their effects out, in the order partition_sm.h lists them, and watches the outcome. */
#include "cluster_fixture.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "controller/controller_sm.h"
#include "meta/meta.h"
#include "replica/partition_sm.h"

#define N_EP (1 + CF_MAX_NODES + CF_MAX_CLIENTS)
#define TOPIC "t"
#define CLUSTER_ID "cf-cluster"

/* Timers of the model (virtual ms). */
#define NODE_TICK_MS 100
#define RAFT_TICK_MS 100
#define CTL_TICK_MS 250
#define REGISTER_RETRY_MS 1000
#define SHUTDOWN_HB_MS 500
#define META_POLL_MS 500     /* the controller parks a metadata fetch this long */
#define META_TIMEOUT_MS 2000 /* a metadata fetch without an answer is sent again */
#define RFETCH_WAIT_MS 500   /* replica.fetch.wait.max.ms */
#define RFETCH_TIMEOUT_MS 2000
#define RFETCH_BACKOFF_MS 100
#define RFETCH_MAX 64            /* records per partition per fetch (replica.fetch.max.bytes) */
#define PRODUCE_TIMEOUT_MS 10000 /* the request's timeout.ms (the broker's waiter) */
#define CLIENT_TIMEOUT_MS 12000  /* the client's request.timeout.ms */
#define DELIVERY_TIMEOUT_MS 120000
#define RETRY_BACKOFF_MS 100
#define META_REQ_TIMEOUT_MS 1000
#define CONSUMER_POLL_MS 50
#define CONSUMER_TIMEOUT_MS 2000
#define CONSUMER_MAX 50
#define CF_ERR_REFUSED (-2000) /* a client's request reached a node that is down */

enum node_state { NODE_UP, NODE_PAUSED, NODE_DOWN };

enum msg_kind {
    M_PRODUCE,
    M_PRODUCE_R,
    M_CFETCH, /* a consumer's Fetch */
    M_CFETCH_R,
    M_METADATA,
    M_METADATA_R,
    M_RFETCH, /* a follower's Fetch */
    M_RFETCH_R,
    M_META_FETCH, /* a broker fetching committed metadata batches */
    M_META_FETCH_R,
    M_REGISTER,
    M_REGISTER_R,
    M_HEARTBEAT,
    M_HEARTBEAT_R,
    M_ALTER,
    M_ALTER_R,
    M_REFUSED,
};

/* One partition of a follower's Fetch and of its answer. */
struct fetch_entry {
    int32_t part;
    int32_t current_leader_epoch;
    int64_t fetch_offset;
    int32_t last_fetched_epoch;
    /* answer */
    int16_t err;
    bool diverging;
    int32_t div_epoch;
    int64_t div_end;
    int64_t hw, log_start, log_end;
    int32_t n_recs;
    struct cf_entry *recs;
};

struct msg {
    enum msg_kind kind;
    int32_t from, to;
    uint64_t req;
    int64_t deadline; /* parked requests */
    int32_t part;
    int16_t err;
    int16_t acks;
    uint64_t rid;
    int64_t offset;
    int32_t epoch;
    int64_t hw;
    int32_t n_fe;
    struct fetch_entry *fe;
    int32_t n_recs; /* consumer fetch answer */
    struct cf_entry *recs;
    int32_t leaders[CF_MAX_PARTS], epochs[CF_MAX_PARTS]; /* metadata answer */
    int32_t n_parts;
    int64_t from_off, n_batches, committed; /* metadata fetch */
    int64_t broker_epoch, meta_offset;
    int64_t prev_epoch; /* registration: PreviousBrokerEpoch */
    bool want_shutdown, fenced, should_shutdown, caught_up;
    uint8_t incarnation[16], dir[16];
    enum msg_kind orig; /* M_REFUSED: the request refused */
    /* AlterPartition and its answer */
    int32_t leader, leader_epoch, partition_epoch, n_isr;
    int32_t isr[CF_MAX_NODES];
    int64_t isr_epochs[CF_MAX_NODES];
    int8_t lrs;
};

enum ev_kind { EV_MSG, EV_NODE_TICK, EV_CLIENT_TICK, EV_RAFT_TICK, EV_COMMIT };

struct ev {
    int64_t at;
    uint64_t seq;
    enum ev_kind kind;
    int32_t who;
    struct msg *m;
};

struct cf_epoch {
    int32_t epoch;
    int64_t start;
};

struct waiter {
    int32_t client;
    uint64_t req;
    int64_t offset;
    uint64_t rid;
    int64_t deadline;
};

struct cf_node;

struct cf_part {
    struct cf *c;
    struct cf_node *n;
    int32_t idx;
    struct partition_sm *sm; /* NULL while closed (not a replica, or the node not ready) */
    struct cf_entry *log;
    int64_t n_log, cap_log;
    struct cf_epoch *cache;
    int32_t n_cache, cap_cache;
    int64_t flushed;       /* entries below this reached the disk */
    int64_t hw_checkpoint; /* the replication-offset checkpoint, written at each flush */
    struct waiter *w;
    int32_t n_w, cap_w;
    struct cf_entry *ghost; /* entries a crash lost from the page cache (checker 7) */
    int64_t n_ghost, cap_ghost;
    int64_t fetch_retry_at;
    int64_t last_hw;    /* the HW when the fixture last looked (checker 7) */
    int32_t seen_epoch; /* checker (6): the leader epoch and HW last seen as leader */
    int64_t seen_hw;
};

struct cf_node {
    int32_t id;
    enum node_state state;
    struct meta_image *img;
    int64_t persisted; /* batches applied when it went down (its raft log on disk) */
    bool ready;        /* caught up once since it started: partitions are open */
    uint8_t incarnation[16], dir[16];
    bool registered;
    int64_t broker_epoch;
    /* What its log directory says of the last stop: the epoch it was registered at then, and
     * whether its logs lost nothing (a controlled shutdown, or a kill that kept the page
     * cache); the PreviousBrokerEpoch of its first registration after a start. */
    int64_t last_epoch;
    bool logs_intact;
    int64_t prev_epoch;
    int64_t next_register, next_hb;
    bool shutting_down;
    bool meta_in_flight;
    uint64_t meta_req;
    int64_t meta_sent;
    struct cf_part parts[CF_MAX_PARTS];
    struct {
        bool in_flight;
        uint64_t req;
        int64_t sent;
    } fetcher[CF_MAX_NODES + 1];
    struct msg **parked; /* replica fetches parked here as leader */
    int32_t n_parked, cap_parked;
    struct msg **inbox; /* delivered while paused */
    int32_t n_inbox, cap_inbox;
    bool flush_frozen;
    int64_t next_flush;
    /* as the active controller */
    struct ctl_sm *ctl;
    struct ctl_out out;
    int64_t next_ctl_tick;
    bool tick_in_flight;
    struct msg **meta_parked;
    int32_t n_meta_parked, cap_meta_parked;
    uint64_t next_req;
    int64_t acks_sent;
    int64_t appends[2]; /* [0] acks=1, [1] acks=all */
};

/* A committed metadata batch. */
struct batch {
    uint8_t *buf;
    size_t len;
};

enum prop_kind { P_REGISTER, P_HEARTBEAT, P_ALTER, P_TICK, P_ADMIN };

struct prop {
    uint8_t *buf;
    size_t len;
    enum prop_kind kind;
    int64_t term;
    int64_t ready_at;
    int32_t reply_to;
    uint64_t req;
    int32_t part;
    int16_t rv; /* the decision's own answer (NEW_LEADER_ELECTED comes with records) */
    struct ctl_heartbeat_answer hb;
};

enum rec_state { R_PENDING, R_ACKED, R_FAILED };

struct prec {
    uint64_t rid;
    int32_t part;
    enum rec_state state;
    int64_t offset;
    int32_t broker, epoch;
    int64_t deadline;
};

struct seen {
    int32_t part;
    int64_t offset;
    uint64_t rid;
};

struct client {
    bool used;
    bool producer;
    int16_t acks;
    int64_t interval_ms, max_records;
    bool stopped;
    int64_t next_tick;
    /* metadata view */
    int32_t leaders[CF_MAX_PARTS], epochs[CF_MAX_PARTS];
    bool meta_stale, meta_in_flight;
    uint64_t meta_req;
    int64_t meta_sent;
    uint64_t next_req;
    /* producer */
    struct prec *recs;
    int64_t n_recs, cap_recs;
    int64_t head[CF_MAX_PARTS]; /* first record of the partition not yet done */
    struct {
        bool on;
        int64_t rec;
        uint64_t req;
        int64_t sent;
    } inflight[CF_MAX_PARTS];
    int64_t retry_at[CF_MAX_PARTS];
    struct cf_producer_stats st;
    /* consumer */
    int64_t next[CF_MAX_PARTS];
    struct seen *seen;
    int64_t n_seen, cap_seen;
};

/* An acks=all success a broker sent. */
struct ack {
    int32_t part, broker, epoch;
    int64_t offset;
    uint64_t rid;
    int64_t at;
};

struct ack_index {
    int32_t *epoch_broker; /* by leader epoch: the broker that acknowledged in it, 0 none */
    int64_t n_epochs, cap_epochs;
    uint64_t *offset_rid; /* by offset: the record acknowledged there, 0 none */
    int64_t n_offsets, cap_offsets;
};

struct cf {
    struct cf_options o;
    uint64_t rng;
    int64_t now;
    uint64_t seq, events;
    struct ev *heap;
    size_t n_heap, cap_heap;
    bool cut[N_EP][N_EP];
    int64_t last_at[N_EP][N_EP];
    struct cf_node nodes[CF_MAX_NODES + 1];
    struct client clients[CF_MAX_CLIENTS];
    int32_t n_parts;
    uint8_t topic_id[16];
    /* raft oracle */
    int32_t controller;
    int64_t term;
    int64_t lost_since, unreach_since, election_wait;
    struct batch *log;
    int64_t n_log, cap_log;
    struct prop *props;
    int32_t n_props, cap_props;
    struct meta_image *truth;
    /* watched while running */
    struct ack *acks;
    int64_t n_acks, cap_acks;
    struct ack_index ack_index[CF_MAX_PARTS];
    struct cf_truncation *truncs;
    int32_t n_truncs, cap_truncs;
    struct cf_report live; /* (5), (6), (7) and anomalies, counted as they happen */
};

/* ---- small helpers --------------------------------------------------------------------- */

static bool grow_array(void **p, int64_t *cap, int64_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    int64_t nc = *cap ? *cap * 2 : 16;
    while (nc < need)
        nc *= 2;
    void *np = realloc(*p, (size_t)nc * elem);
    if (np == NULL)
        return false;
    *p = np;
    *cap = nc;
    return true;
}

/* The fixture does not survive running out of memory: a test host that cannot give it a few
 * megabytes has nothing to test. */
#define GROW(arr, n, cap)                                                                          \
    do {                                                                                           \
        int64_t cap64_ = (cap);                                                                    \
        if (!grow_array((void **)&(arr), &cap64_, (int64_t)(n) + 1, sizeof *(arr)))                \
            abort();                                                                               \
        (cap) = cap64_;                                                                            \
    } while (0)

static void note(struct cf *c, int64_t *counter, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void note(struct cf *c, int64_t *counter, const char *fmt, ...)
{
    (*counter)++;
    if (c->live.first[0] != '\0')
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = snprintf(c->live.first, sizeof c->live.first, "t=%lld ", (long long)c->now);
    if (k > 0 && (size_t)k < sizeof c->live.first)
        vsnprintf(c->live.first + k, sizeof c->live.first - (size_t)k, fmt, ap);
    va_end(ap);
}

/* CF_TRACE=1 in the environment prints the cluster's story: controllers, partition changes,
 * faults, truncations. */
static void trace(const struct cf *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void trace(const struct cf *c, const char *fmt, ...)
{
    static int on = -1;
    if (on < 0)
        on = getenv("CF_TRACE") != NULL;
    if (!on)
        return;
    va_list ap;
    va_start(ap, fmt);
    printf("      %8.3f ", (double)c->now / 1000.0);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
}

static uint64_t rnd(struct cf *c)
{
    uint64_t z = (c->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int64_t rnd_range(struct cf *c, int64_t lo, int64_t hi)
{
    if (hi <= lo)
        return lo;
    return lo + (int64_t)(rnd(c) % (uint64_t)(hi - lo + 1));
}

static bool rnd_chance(struct cf *c, double p)
{
    return p > 0 && (double)(rnd(c) >> 11) * 0x1.0p-53 < p;
}

static bool is_node(const struct cf *c, int32_t id)
{
    return id >= 1 && id <= c->o.n_nodes;
}

static int ep(int32_t id)
{
    if (id >= CF_CLIENT_BASE)
        return 1 + CF_MAX_NODES + (id - CF_CLIENT_BASE);
    return id;
}

static struct cf_node *node(struct cf *c, int32_t id)
{
    assert(id >= 1 && id <= c->o.n_nodes);
    return &c->nodes[id];
}

static bool has_id(const int32_t *v, int32_t n, int32_t x)
{
    for (int32_t i = 0; i < n; i++)
        if (v[i] == x)
            return true;
    return false;
}

/* ---- events ---------------------------------------------------------------------------- */

static bool ev_before(const struct ev *a, const struct ev *b)
{
    return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

static void ev_push(struct cf *c, int64_t at, enum ev_kind kind, int32_t who, struct msg *m)
{
    int64_t cap = (int64_t)c->cap_heap;
    GROW(c->heap, c->n_heap, cap);
    c->cap_heap = (size_t)cap;
    size_t i = c->n_heap++;
    struct ev e = {at, c->seq++, kind, who, m};
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!ev_before(&e, &c->heap[p]))
            break;
        c->heap[i] = c->heap[p];
        i = p;
    }
    c->heap[i] = e;
}

static struct ev ev_pop(struct cf *c)
{
    struct ev top = c->heap[0];
    struct ev last = c->heap[--c->n_heap];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        const struct ev *best = &last;
        if (l < c->n_heap && ev_before(&c->heap[l], best)) {
            m = l;
            best = &c->heap[l];
        }
        if (r < c->n_heap && ev_before(&c->heap[r], best))
            m = r;
        if (m == i)
            break;
        c->heap[i] = c->heap[m];
        i = m;
    }
    if (c->n_heap > 0)
        c->heap[i] = last;
    return top;
}

/* ---- network --------------------------------------------------------------------------- */

static void msg_free(struct msg *m)
{
    if (m == NULL)
        return;
    for (int32_t i = 0; i < m->n_fe; i++)
        free(m->fe[i].recs);
    free(m->fe);
    free(m->recs);
    free(m);
}

static struct msg *msg_new(enum msg_kind kind, int32_t from, int32_t to)
{
    struct msg *m = calloc(1, sizeof *m);
    if (m == NULL)
        abort();
    m->kind = kind;
    m->from = from;
    m->to = to;
    return m;
}

/* Takes ownership of `m`. */
static void net_send(struct cf *c, struct msg *m)
{
    int f = ep(m->from), t = ep(m->to);
    if (c->cut[f][t] || rnd_chance(c, c->o.drop)) {
        msg_free(m);
        return;
    }
    int64_t at = c->now + rnd_range(c, c->o.delay_min_ms, c->o.delay_max_ms);
    if (!c->o.reorder) {
        if (at < c->last_at[f][t])
            at = c->last_at[f][t];
        c->last_at[f][t] = at;
    }
    ev_push(c, at, EV_MSG, 0, m);
}

/* ---- the log and its epoch cache -------------------------------------------------------- */

static int32_t cache_latest(const struct cf_part *p)
{
    return p->n_cache > 0 ? p->cache[p->n_cache - 1].epoch : -1;
}

/* Kafka's LeaderEpochFileCache.assign: entries at or past `epoch` or `start` give way. */
static void cache_assign(struct cf_part *p, int32_t epoch, int64_t start)
{
    if (p->n_cache > 0 && p->cache[p->n_cache - 1].epoch == epoch)
        return;
    while (p->n_cache > 0 &&
           (p->cache[p->n_cache - 1].epoch >= epoch || p->cache[p->n_cache - 1].start >= start))
        p->n_cache--;
    GROW(p->cache, p->n_cache, p->cap_cache);
    p->cache[p->n_cache++] = (struct cf_epoch){epoch, start};
}

/* truncateFromEnd: entries starting at or past `end` go. */
static void cache_truncate(struct cf_part *p, int64_t end)
{
    while (p->n_cache > 0 && p->cache[p->n_cache - 1].start >= end)
        p->n_cache--;
}

static void op_epoch_end(void *arg, int32_t epoch, int32_t *out_epoch, int64_t *out_end)
{
    const struct cf_part *p = arg;
    *out_epoch = -1;
    *out_end = -1;
    for (int32_t i = p->n_cache - 1; i >= 0; i--) {
        if (p->cache[i].epoch <= epoch) {
            *out_epoch = p->cache[i].epoch;
            *out_end = i + 1 < p->n_cache ? p->cache[i + 1].start : p->n_log;
            return;
        }
    }
}

static bool op_eligible(void *arg, int32_t broker)
{
    const struct cf_part *p = arg;
    const struct meta_broker *b = meta_image_broker_by_id(p->n->img, broker);
    return b != NULL && !b->fenced && !b->shutting_down;
}

static void log_append(struct cf *c, struct cf_part *p, int32_t epoch, uint64_t rid)
{
    if (epoch < cache_latest(p))
        note(c, &c->live.anomalies, "node %d p%d appends epoch %d after epoch %d", p->n->id, p->idx,
             epoch, cache_latest(p));
    if (epoch > cache_latest(p))
        cache_assign(p, epoch, p->n_log);
    GROW(p->log, p->n_log, p->cap_log);
    p->log[p->n_log] = (struct cf_entry){p->n_log, epoch, rid};
    p->n_log++;
}

static void log_truncate(struct cf_part *p, int64_t to)
{
    if (to < p->n_log)
        p->n_log = to;
    cache_truncate(p, to);
    if (p->flushed > to)
        p->flushed = to;
    if (p->hw_checkpoint > to)
        p->hw_checkpoint = to;
}

/* ---- partitions on a node -------------------------------------------------------------- */

static const struct meta_topic *topic_of(const struct meta_image *img)
{
    return meta_image_topic_by_name(img, TOPIC);
}

static int32_t topic_min_isr(const struct meta_image *img)
{
    const char *v = meta_image_config_get(img, 2, TOPIC, "min.insync.replicas");
    return v ? (int32_t)atoi(v) : 1;
}

static void node_send(struct cf *c, struct cf_node *n, struct msg *m)
{
    (void)n;
    net_send(c, m);
}

/* Checker (5), at every acks=all success: per partition, the record acknowledged at each
 * offset and the broker that acknowledged in each leader epoch. */
static void record_ack(struct cf *c, struct cf_part *p, int64_t offset, uint64_t rid)
{
    int32_t epoch = psm_leader_epoch(p->sm);
    struct ack_index *x = &c->ack_index[p->idx];
    if (epoch >= 0) {
        while (x->n_epochs <= epoch) {
            GROW(x->epoch_broker, x->n_epochs, x->cap_epochs);
            x->epoch_broker[x->n_epochs++] = 0;
        }
        int32_t b = x->epoch_broker[epoch];
        if (b != 0 && b != p->n->id)
            note(c, &c->live.two_leaders, "p%d epoch %d acked by brokers %d and %d", p->idx, epoch,
                 b, p->n->id);
        x->epoch_broker[epoch] = p->n->id;
    }
    while (x->n_offsets <= offset) {
        GROW(x->offset_rid, x->n_offsets, x->cap_offsets);
        x->offset_rid[x->n_offsets++] = 0;
    }
    uint64_t had = x->offset_rid[offset];
    if (had != 0 && had != rid)
        note(c, &c->live.two_records, "p%d offset %lld acked as %llx and %llx (broker %d)", p->idx,
             (long long)offset, (unsigned long long)had, (unsigned long long)rid, p->n->id);
    x->offset_rid[offset] = rid;
    GROW(c->acks, c->n_acks, c->cap_acks);
    c->acks[c->n_acks++] = (struct ack){p->idx, p->n->id, epoch, offset, rid, c->now};
    p->n->acks_sent++;
}

static void produce_answer(struct cf *c, struct cf_part *p, int32_t client, uint64_t req,
                           int16_t err, int64_t offset)
{
    struct msg *r = msg_new(M_PRODUCE_R, p->n->id, client);
    r->req = req;
    r->part = p->idx;
    r->err = err;
    r->offset = offset;
    r->epoch = p->sm ? psm_leader_epoch(p->sm) : -1;
    node_send(c, p->n, r);
}

static void waiter_remove(struct cf_part *p, int32_t i)
{
    p->w[i] = p->w[--p->n_w];
}

static void fail_waiters(struct cf *c, struct cf_part *p, int16_t err)
{
    for (int32_t i = 0; i < p->n_w; i++)
        produce_answer(c, p, p->w[i].client, p->w[i].req, err, -1);
    p->n_w = 0;
}

/* acks=all waiters are keyed on the HW mark, whatever the role (as the broker's purgatory
 * is): only fail_waiters keeps a follower from answering them. */
static void complete_waiters(struct cf *c, struct cf_part *p)
{
    int64_t hw = psm_high_watermark(p->sm);
    for (int32_t i = 0; i < p->n_w;) {
        if (p->w[i].offset < hw) {
            record_ack(c, p, p->w[i].offset, p->w[i].rid);
            produce_answer(c, p, p->w[i].client, p->w[i].req, 0, p->w[i].offset);
            waiter_remove(p, i);
        } else {
            i++;
        }
    }
}

/* Whether replica `q` holds entry `e`, or held it until a crash lost its unflushed tail: a
 * leader counts the position a follower reported, and cannot know what its page cache
 * lost since (acks=all means "in memory on the ISR", as in Kafka). */
static bool entry_eq(const struct cf_entry *a, const struct cf_entry *b)
{
    return a->offset == b->offset && a->epoch == b->epoch && a->rid == b->rid;
}

static bool holds(const struct cf_part *q, const struct cf_entry *e)
{
    if (q->n_log > e->offset && q->log[e->offset].rid == e->rid &&
        q->log[e->offset].epoch == e->epoch)
        return true;
    for (int64_t i = 0; i < q->n_ghost; i++)
        if (q->ghost[i].offset == e->offset && q->ghost[i].rid == e->rid &&
            q->ghost[i].epoch == e->epoch)
            return true;
    return false;
}

/* Checker (6) and (7), each time the fixture looks at a partition after an effect. */
static void watch_hw(struct cf *c, struct cf_part *p)
{
    int64_t hw = psm_high_watermark(p->sm);
    if (psm_role(p->sm) == PSM_LEADER) {
        int32_t le = psm_leader_epoch(p->sm);
        if (le == p->seen_epoch && hw < p->seen_hw)
            note(c, &c->live.hw_backwards, "node %d p%d HW %lld -> %lld in epoch %d", p->n->id,
                 p->idx, (long long)p->seen_hw, (long long)hw, le);
        if (hw > p->last_hw) {
            int32_t need = topic_min_isr(p->n->img);
            for (int64_t o = p->last_hw; o < hw; o++) {
                const struct cf_entry *e = &p->log[o];
                int32_t holders = 0;
                for (int32_t id = 1; id <= c->o.n_nodes; id++)
                    if (holds(&c->nodes[id].parts[p->idx], e))
                        holders++;
                if (holders < need) {
                    note(c, &c->live.unreplicated_commit,
                         "node %d p%d HW passes offset %lld held by %d replicas (min.isr %d)",
                         p->n->id, p->idx, (long long)o, holders, need);
                    break;
                }
            }
        }
        p->seen_epoch = le;
        p->seen_hw = hw;
    } else {
        p->seen_epoch = -1;
    }
    p->last_hw = hw;
}

static void answer_parked_for(struct cf *c, struct cf_node *n, int32_t part);

static void send_alter(struct cf *c, struct cf_part *p)
{
    struct cf_node *n = p->n;
    if (c->controller < 0 || !psm_alter_pending(p->sm))
        return; /* psm_tick sends it again after alter_retry_ms */
    struct psm_alter_request rq;
    psm_alter_request(p->sm, &rq);
    struct msg *m = msg_new(M_ALTER, n->id, c->controller);
    m->req = ++n->next_req;
    m->part = p->idx;
    m->broker_epoch = n->broker_epoch;
    m->leader_epoch = rq.leader_epoch;
    m->partition_epoch = rq.partition_epoch;
    m->n_isr = rq.n_isr;
    for (int32_t i = 0; i < rq.n_isr && i < CF_MAX_NODES; i++) {
        m->isr[i] = rq.isr[i];
        const struct meta_broker *b = meta_image_broker_by_id(n->img, rq.isr[i]);
        m->isr_epochs[i] = b ? b->epoch : -1;
    }
    m->lrs = rq.leader_recovery_state;
    node_send(c, n, m);
}

/* Does what `fx` says, in partition_sm.h's order. */
static void part_effects(struct cf *c, struct cf_part *p, const struct psm_effects *fx)
{
    struct cf_node *n = p->n;
    if (fx->fail_waiters) {
        fail_waiters(c, p, ERR_NOT_LEADER_OR_FOLLOWER);
        answer_parked_for(c, n, p->idx);
    }
    if (fx->role_changed && psm_role(p->sm) == PSM_LEADER)
        cache_assign(p, psm_leader_epoch(p->sm), p->n_log);
    if (fx->truncate) {
        int64_t old_end = p->n_log, old_hw = psm_high_watermark(p->sm);
        if (fx->truncate_to > p->n_log || fx->truncate_to < 0)
            note(c, &c->live.anomalies, "node %d p%d truncate to %lld of %lld", n->id, p->idx,
                 (long long)fx->truncate_to, (long long)p->n_log);
        trace(c, "node %d p%d truncates %lld..%lld (HW %lld)", n->id, p->idx,
              (long long)fx->truncate_to, (long long)old_end, (long long)old_hw);
        if (fx->truncate_below_hw) {
            GROW(c->truncs, c->n_truncs, c->cap_truncs);
            c->truncs[c->n_truncs++] =
                (struct cf_truncation){n->id, p->idx, fx->truncate_to, old_end, old_hw, c->now};
        }
        log_truncate(p, fx->truncate_to);
        struct psm_effects fx2;
        psm_truncated(p->sm, p->n_log, &fx2);
        part_effects(c, p, &fx2);
    }
    if (fx->reset)
        /* Every log here starts at 0: no leader's log can start past a follower's end. */
        note(c, &c->live.anomalies, "node %d p%d starts its log over at %lld", n->id, p->idx,
             (long long)fx->reset_to);
    if (fx->hw_changed)
        complete_waiters(c, p);
    watch_hw(c, p);
    if (fx->fetch_changed)
        p->fetch_retry_at = c->now;
    if (fx->send_alter)
        send_alter(c, p);
    /* NOT_ENOUGH_REPLICAS_AFTER_APPEND: the ISR shrank below min.insync.replicas while
     * waiting. */
    if (p->n_w > 0 && psm_role(p->sm) == PSM_LEADER && psm_isr_count(p->sm) < topic_min_isr(n->img))
        fail_waiters(c, p, ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND);
}

static void part_open(struct cf *c, struct cf_node *n, struct cf_part *p)
{
    struct psm_config cfg = {
        .replica_lag_time_max_ms = c->o.lag_ms,
        .alter_retry_ms = 2000,
        .min_insync = topic_min_isr(n->img),
    };
    struct psm_ops ops = {.epoch_end = op_epoch_end, .replica_eligible = op_eligible, .arg = p};
    p->sm = psm_new(n->id, &cfg, &ops, p->hw_checkpoint);
    if (p->sm == NULL)
        abort();
    psm_set_log(p->sm, 0, p->n_log);
    p->last_hw = psm_high_watermark(p->sm);
    p->seen_epoch = -1;
    p->fetch_retry_at = c->now;
}

static void part_assign(struct cf *c, struct cf_node *n, int32_t idx,
                        const struct psm_assignment *a)
{
    struct cf_part *p = &n->parts[idx];
    if (p->sm == NULL) {
        if (!has_id(a->replicas, a->n_replicas, n->id))
            return;
        part_open(c, n, p);
    }
    struct psm_effects fx;
    psm_apply(p->sm, a, c->now, &fx);
    part_effects(c, p, &fx);
}

static void assignment_of(const struct meta_partition *mp, struct psm_assignment *a)
{
    *a = (struct psm_assignment){
        .leader = mp->leader,
        .leader_epoch = mp->leader_epoch,
        .partition_epoch = mp->partition_epoch,
        .n_replicas = mp->n_replicas,
        .replicas = mp->replicas,
        .n_isr = mp->n_isr,
        .isr = mp->isr,
        .leader_recovery_state = mp->leader_recovery_state,
    };
}

/* The node has caught up with the committed metadata once: its partitions open. */
static void node_become_ready(struct cf *c, struct cf_node *n)
{
    n->ready = true;
    const struct meta_topic *t = topic_of(n->img);
    if (t == NULL)
        return;
    for (int32_t i = 0; i < t->n_partitions && i < CF_MAX_PARTS; i++) {
        struct psm_assignment a;
        assignment_of(&t->partitions[i], &a);
        part_assign(c, n, i, &a);
    }
}

/* A broker acts on its image (opens its partitions) only once it has applied its own
 * registration, as Kafka's broker waits for its initial catch-up to the registration's
 * offset: a restarted broker's replayed image may still name it leader at an epoch whose
 * tail it lost in the crash, and the registration's batch is what fences that incarnation
 * and moves its leaderships to a new epoch. Acting earlier, it would append other records
 * at offsets it had already written in that epoch, which no divergence check can tell
 * apart (the cluster_restarted_leader_* tests). */
static void maybe_ready(struct cf *c, struct cf_node *n)
{
    if (!n->ready && n->registered && n->broker_epoch >= 0 &&
        meta_image_offset(n->img) >= n->broker_epoch)
        node_become_ready(c, n);
}

struct apply_ctx {
    struct cf *c;
    struct cf_node *n;
};

static void on_records(void *arg, const struct meta_record *recs, size_t nrec)
{
    struct apply_ctx *x = arg;
    if (!x->n->ready)
        return;
    for (size_t i = 0; i < nrec; i++) {
        const struct meta_record *r = &recs[i];
        if (r->type != META_REC_PARTITION && r->type != META_REC_PARTITION_CHANGE)
            continue;
        if (memcmp(r->u.partition.topic_id, x->c->topic_id, 16) != 0 ||
            r->u.partition.partition >= CF_MAX_PARTS)
            continue;
        struct psm_assignment a = {
            .leader = r->u.partition.leader,
            .leader_epoch = r->u.partition.leader_epoch,
            .partition_epoch = r->u.partition.partition_epoch,
            .n_replicas = r->u.partition.n_replicas,
            .replicas = r->u.partition.replicas,
            .n_isr = r->u.partition.n_isr,
            .isr = r->u.partition.isr,
            .leader_recovery_state = r->type == META_REC_PARTITION_CHANGE
                                         ? r->u.partition.leader_recovery_state
                                         : PSM_RECOVERED,
        };
        part_assign(x->c, x->n, r->u.partition.partition, &a);
    }
}

/* Applies committed batch `idx` to the node's image and its partitions. */
static int node_apply(struct cf *c, struct cf_node *n, int64_t idx)
{
    assert(meta_image_offset(n->img) == idx && idx < c->n_log);
    struct apply_ctx x = {c, n};
    int rv = meta_image_apply(n->img, c->log[idx].buf, c->log[idx].len, on_records, &x);
    if (rv == 0 && n->ready) {
        /* Brokers may have been fenced or unfenced: eligibility is read at every tick. */
        for (int32_t i = 0; i < c->n_parts; i++) {
            struct cf_part *p = &n->parts[i];
            if (p->sm == NULL || psm_role(p->sm) != PSM_LEADER)
                continue;
            struct psm_effects fx;
            psm_tick(p->sm, c->now, &fx);
            part_effects(c, p, &fx);
        }
    }
    return rv;
}

/* ---- a leader's handlers --------------------------------------------------------------- */

static struct cf_part *led_part(struct cf_node *n, int32_t idx)
{
    if (!n->ready || idx < 0 || idx >= CF_MAX_PARTS)
        return NULL;
    struct cf_part *p = &n->parts[idx];
    return p->sm && psm_role(p->sm) == PSM_LEADER ? p : NULL;
}

static void on_produce(struct cf *c, struct cf_node *n, struct msg *m)
{
    struct cf_part *p = led_part(n, m->part);
    if (p == NULL) {
        struct msg *r = msg_new(M_PRODUCE_R, n->id, m->from);
        r->req = m->req;
        r->part = m->part;
        r->err = ERR_NOT_LEADER_OR_FOLLOWER;
        node_send(c, n, r);
        return;
    }
    if (m->acks == -1 && psm_isr_count(p->sm) < topic_min_isr(n->img)) {
        produce_answer(c, p, m->from, m->req, ERR_NOT_ENOUGH_REPLICAS, -1);
        return;
    }
    int64_t offset = p->n_log;
    log_append(c, p, psm_leader_epoch(p->sm), m->rid);
    n->appends[m->acks == -1 ? 1 : 0]++;
    if (m->acks == -1) {
        GROW(p->w, p->n_w, p->cap_w);
        p->w[p->n_w++] =
            (struct waiter){m->from, m->req, offset, m->rid, c->now + PRODUCE_TIMEOUT_MS};
    }
    struct psm_effects fx;
    psm_appended(p->sm, p->n_log, c->now, &fx);
    part_effects(c, p, &fx);
    if (m->acks != -1)
        produce_answer(c, p, m->from, m->req, 0, offset);
    answer_parked_for(c, n, p->idx);
}

/* Fills a follower's Fetch answer from the logs as they are now and sends it. */
static void rfetch_answer(struct cf *c, struct cf_node *n, struct msg *m)
{
    for (int32_t i = 0; i < m->n_fe; i++) {
        struct fetch_entry *e = &m->fe[i];
        if (e->err != 0 || e->diverging)
            continue;
        struct cf_part *p = led_part(n, e->part);
        if (p == NULL ||
            (e->current_leader_epoch != -1 && e->current_leader_epoch != psm_leader_epoch(p->sm))) {
            e->err = ERR_NOT_LEADER_OR_FOLLOWER;
            continue;
        }
        e->hw = psm_high_watermark(p->sm);
        e->log_start = psm_log_start(p->sm);
        e->log_end = p->n_log;
        int64_t end = p->n_log;
        if (end > e->fetch_offset + RFETCH_MAX)
            end = e->fetch_offset + RFETCH_MAX;
        if (end > e->fetch_offset) {
            e->n_recs = (int32_t)(end - e->fetch_offset);
            e->recs = malloc((size_t)e->n_recs * sizeof *e->recs);
            if (e->recs == NULL)
                abort();
            memcpy(e->recs, &p->log[e->fetch_offset], (size_t)e->n_recs * sizeof *e->recs);
        }
    }
    m->kind = M_RFETCH_R;
    int32_t t = m->to;
    m->to = m->from;
    m->from = t;
    node_send(c, n, m);
}

static bool parked_has(const struct msg *m, int32_t part)
{
    for (int32_t i = 0; i < m->n_fe; i++)
        if (m->fe[i].part == part)
            return true;
    return false;
}

/* New data, a role change or a new epoch on `part` (-1: any): the parked fetches naming it
 * are answered now. */
static void answer_parked_for(struct cf *c, struct cf_node *n, int32_t part)
{
    for (int32_t i = 0; i < n->n_parked;) {
        struct msg *m = n->parked[i];
        if (part < 0 || parked_has(m, part) || c->now >= m->deadline) {
            n->parked[i] = n->parked[--n->n_parked];
            rfetch_answer(c, n, m);
        } else {
            i++;
        }
    }
}

/* A follower's Fetch. Returns true when it keeps `m` (parked or answered with it). */
static bool on_rfetch(struct cf *c, struct cf_node *n, struct msg *m)
{
    bool any_data = false, any_answer = false;
    for (int32_t i = 0; i < m->n_fe; i++) {
        struct fetch_entry *e = &m->fe[i];
        struct cf_part *p = n->ready && e->part < CF_MAX_PARTS ? &n->parts[e->part] : NULL;
        if (p == NULL || p->sm == NULL) {
            e->err = ERR_NOT_LEADER_OR_FOLLOWER;
            any_answer = true;
            continue;
        }
        struct psm_fetch f = {
            .replica_id = m->from,
            .current_leader_epoch = e->current_leader_epoch,
            .fetch_offset = e->fetch_offset,
            .last_fetched_epoch = e->last_fetched_epoch,
        };
        struct psm_fetch_verdict v;
        struct psm_effects fx;
        psm_follower_fetch(p->sm, &f, c->now, &v, &fx);
        e->err = v.error;
        e->diverging = v.diverging;
        e->div_epoch = v.diverging_epoch;
        e->div_end = v.diverging_end_offset;
        e->hw = v.high_watermark;
        e->log_start = v.log_start;
        e->log_end = p->n_log;
        part_effects(c, p, &fx);
        if (v.error != 0 || v.diverging)
            any_answer = true;
        else if (e->fetch_offset < p->n_log)
            any_data = true;
    }
    if (any_data || any_answer) {
        rfetch_answer(c, n, m);
    } else {
        m->deadline = c->now + RFETCH_WAIT_MS;
        GROW(n->parked, n->n_parked, n->cap_parked);
        n->parked[n->n_parked++] = m;
    }
    return true;
}

static void on_cfetch(struct cf *c, struct cf_node *n, struct msg *m)
{
    struct msg *r = msg_new(M_CFETCH_R, n->id, m->from);
    r->req = m->req;
    r->part = m->part;
    r->offset = m->offset;
    struct cf_part *p = led_part(n, m->part);
    if (p == NULL) {
        r->err = ERR_NOT_LEADER_OR_FOLLOWER;
    } else if (m->epoch != -1 && m->epoch != psm_leader_epoch(p->sm)) {
        r->err =
            m->epoch < psm_leader_epoch(p->sm) ? ERR_FENCED_LEADER_EPOCH : ERR_UNKNOWN_LEADER_EPOCH;
    } else if (m->offset < 0 || m->offset > p->n_log) {
        r->err = ERR_OFFSET_OUT_OF_RANGE;
        r->hw = psm_high_watermark(p->sm);
    } else {
        int64_t hw = psm_high_watermark(p->sm), end = hw;
        if (end > m->offset + CONSUMER_MAX)
            end = m->offset + CONSUMER_MAX;
        r->hw = hw;
        if (end > m->offset) {
            r->n_recs = (int32_t)(end - m->offset);
            r->recs = malloc((size_t)r->n_recs * sizeof *r->recs);
            if (r->recs == NULL)
                abort();
            memcpy(r->recs, &p->log[m->offset], (size_t)r->n_recs * sizeof *r->recs);
        }
    }
    node_send(c, n, r);
}

static void on_metadata(struct cf *c, struct cf_node *n, struct msg *m)
{
    struct msg *r = msg_new(M_METADATA_R, n->id, m->from);
    r->req = m->req;
    const struct meta_topic *t = topic_of(n->img);
    r->n_parts = t ? t->n_partitions : 0;
    for (int32_t i = 0; i < r->n_parts && i < CF_MAX_PARTS; i++) {
        r->leaders[i] = t->partitions[i].leader;
        r->epochs[i] = t->partitions[i].leader_epoch;
    }
    node_send(c, n, r);
}

/* ---- a follower's fetcher -------------------------------------------------------------- */

static void fetcher_pump(struct cf *c, struct cf_node *n)
{
    if (n->state != NODE_UP || !n->ready)
        return;
    for (int32_t l = 1; l <= c->o.n_nodes; l++) {
        if (l == n->id || n->fetcher[l].in_flight)
            continue;
        struct msg *m = NULL;
        for (int32_t i = 0; i < c->n_parts; i++) {
            struct cf_part *p = &n->parts[i];
            if (p->sm == NULL || psm_role(p->sm) != PSM_FOLLOWER || psm_leader(p->sm) != l ||
                c->now < p->fetch_retry_at)
                continue;
            if (m == NULL) {
                m = msg_new(M_RFETCH, n->id, l);
                m->fe = calloc(CF_MAX_PARTS, sizeof *m->fe);
                if (m->fe == NULL)
                    abort();
            }
            struct fetch_entry *e = &m->fe[m->n_fe++];
            e->part = i;
            e->current_leader_epoch = psm_leader_epoch(p->sm);
            e->fetch_offset = p->n_log;
            e->last_fetched_epoch = psm_fetch_checks_epoch(p->sm) ? cache_latest(p) : -1;
        }
        if (m == NULL)
            continue;
        m->req = ++n->next_req;
        n->fetcher[l].in_flight = true;
        n->fetcher[l].req = m->req;
        n->fetcher[l].sent = c->now;
        node_send(c, n, m);
    }
}

static void on_rfetch_answer(struct cf *c, struct cf_node *n, struct msg *m)
{
    int32_t l = m->from;
    if (!n->fetcher[l].in_flight || n->fetcher[l].req != m->req)
        return; /* given up on: a newer one is in flight or will be */
    n->fetcher[l].in_flight = false;
    for (int32_t i = 0; i < m->n_fe; i++) {
        struct fetch_entry *e = &m->fe[i];
        struct cf_part *p = n->ready ? &n->parts[e->part] : NULL;
        if (p == NULL || p->sm == NULL || psm_role(p->sm) != PSM_FOLLOWER ||
            psm_leader(p->sm) != l || psm_leader_epoch(p->sm) != e->current_leader_epoch)
            continue; /* the partition's fetch state changed since it was sent */
        struct psm_effects fx;
        if (e->err == ERR_OFFSET_OUT_OF_RANGE) {
            /* The real fetcher asks the leader where its log runs with ListOffsets (fetcher.c);
             * here the answer carries it, as of the answer's time. */
            psm_out_of_range(p->sm, e->log_start, e->log_end, &fx);
            part_effects(c, p, &fx);
        } else if (e->err != 0) {
            p->fetch_retry_at = c->now + RFETCH_BACKOFF_MS;
        } else if (e->diverging) {
            psm_diverging(p->sm, e->div_epoch, e->div_end, &fx);
            part_effects(c, p, &fx);
        } else if (e->fetch_offset == p->n_log) {
            for (int32_t k = 0; k < e->n_recs; k++) {
                if (e->recs[k].offset != p->n_log) {
                    note(c, &c->live.anomalies, "node %d p%d fetched offset %lld at end %lld",
                         n->id, p->idx, (long long)e->recs[k].offset, (long long)p->n_log);
                    break;
                }
                log_append(c, p, e->recs[k].epoch, e->recs[k].rid);
            }
            psm_fetched(p->sm, p->n_log, e->hw, e->log_start, &fx);
            part_effects(c, p, &fx);
        }
    }
}

/* ---- the raft oracle ------------------------------------------------------------------- */

static bool node_is_controller(const struct cf *c, const struct cf_node *n)
{
    return c->controller == n->id && n->ctl != NULL;
}

/* Whether `n` reaches a majority of the voters: itself up, and each counted voter up with
 * both directions of the link up. */
static bool reaches_majority(const struct cf *c, const struct cf_node *n)
{
    if (n->state != NODE_UP)
        return false;
    int32_t count = 0;
    for (int32_t v = 1; v <= c->o.n_nodes; v++)
        if (v == n->id || (c->nodes[v].state == NODE_UP && !c->cut[ep(n->id)][ep(v)] &&
                           !c->cut[ep(v)][ep(n->id)]))
            count++;
    return 2 * count > c->o.n_nodes;
}

static void meta_fetch_answer(struct cf *c, struct cf_node *n, struct msg *m, int16_t err)
{
    m->kind = M_META_FETCH_R;
    m->to = m->from;
    m->from = n->id;
    m->err = err;
    m->committed = c->n_log;
    m->n_batches = 0;
    if (err == 0 && m->from_off < c->n_log) {
        m->n_batches = c->n_log - m->from_off;
        if (m->n_batches > 64)
            m->n_batches = 64;
    }
    node_send(c, n, m);
}

static void answer_meta_parked(struct cf *c, struct cf_node *n, bool all, int16_t err)
{
    for (int32_t i = 0; i < n->n_meta_parked;) {
        struct msg *m = n->meta_parked[i];
        if (all || m->from_off < c->n_log || c->now >= m->deadline) {
            n->meta_parked[i] = n->meta_parked[--n->n_meta_parked];
            meta_fetch_answer(c, n, m, err);
        } else {
            i++;
        }
    }
}

static void props_drop(struct cf *c)
{
    for (int32_t i = 0; i < c->n_props; i++)
        free(c->props[i].buf);
    c->n_props = 0;
}

static void step_down(struct cf *c)
{
    if (c->controller < 0)
        return;
    struct cf_node *n = node(c, c->controller);
    ctl_sm_free(n->ctl);
    n->ctl = NULL;
    n->tick_in_flight = false;
    answer_meta_parked(c, n, true, ERR_NOT_CONTROLLER);
    props_drop(c);
    trace(c, "controller %d steps down", c->controller);
    c->controller = -1;
    c->term++;
    c->lost_since = c->now;
    c->unreach_since = -1;
    c->election_wait = c->o.election_timeout_ms + rnd_range(c, 0, c->o.election_timeout_ms / 2);
}

static void activate(struct cf *c, struct cf_node *n)
{
    /* Raft elects a voter holding every committed entry; it applies them all first. */
    while (meta_image_offset(n->img) < c->n_log)
        node_apply(c, n, meta_image_offset(n->img));
    maybe_ready(c, n);
    struct ctl_config cfg = {
        .cluster_id = CLUSTER_ID,
        .session_timeout_ms = c->o.session_ms,
        .unclean_leader_election = c->o.unclean,
        .auto_leader_rebalance = c->o.auto_rebalance,
        .leader_imbalance_interval_ms = c->o.rebalance_interval_ms,
        .rebalance_batch = 4,
    };
    n->ctl = ctl_sm_new(&cfg);
    if (n->ctl == NULL)
        abort();
    ctl_sm_activate(n->ctl, n->img, c->now);
    c->controller = n->id;
    c->term++;
    c->unreach_since = -1;
    trace(c, "node %d is the controller", n->id);
    n->next_ctl_tick = c->now;
    n->meta_in_flight = false;
}

/* Elects a voter that reaches a majority (other than `except`), if any. */
static bool elect(struct cf *c, int32_t except)
{
    int32_t cand[CF_MAX_NODES], k = 0;
    for (int32_t v = 1; v <= c->o.n_nodes; v++)
        if (v != except && reaches_majority(c, &c->nodes[v]))
            cand[k++] = v;
    if (k == 0)
        return false;
    int32_t pick = cand[rnd_range(c, 0, k - 1)];
    if (c->n_log == 0 && c->o.first_controller > 0 && has_id(cand, k, c->o.first_controller))
        pick = c->o.first_controller;
    activate(c, node(c, pick));
    return true;
}

static void reply_register(struct cf *c, struct cf_node *ctl, int32_t to, uint64_t req, int16_t err)
{
    struct msg *r = msg_new(M_REGISTER_R, ctl->id, to);
    r->req = req;
    r->err = err;
    const struct meta_broker *b = meta_image_broker_by_id(ctl->img, to);
    r->broker_epoch = b ? b->epoch : -1;
    node_send(c, ctl, r);
}

static void reply_heartbeat(struct cf *c, struct cf_node *ctl, int32_t to, uint64_t req,
                            const struct ctl_heartbeat_answer *a)
{
    struct msg *r = msg_new(M_HEARTBEAT_R, ctl->id, to);
    r->req = req;
    r->err = a->error;
    r->caught_up = a->is_caught_up;
    r->should_shutdown = a->should_shutdown;
    const struct meta_broker *b = meta_image_broker_by_id(ctl->img, to);
    r->fenced = b ? b->fenced : true;
    node_send(c, ctl, r);
}

static void reply_alter(struct cf *c, struct cf_node *ctl, int32_t to, uint64_t req, int32_t part,
                        int16_t err)
{
    struct msg *r = msg_new(M_ALTER_R, ctl->id, to);
    r->req = req;
    r->part = part;
    r->err = err;
    const struct meta_topic *t = topic_of(ctl->img);
    if (err == 0 && t != NULL && part < t->n_partitions) {
        const struct meta_partition *mp = &t->partitions[part];
        r->leader = mp->leader;
        r->leader_epoch = mp->leader_epoch;
        r->partition_epoch = mp->partition_epoch;
        r->n_isr = mp->n_isr;
        for (int32_t i = 0; i < mp->n_isr && i < CF_MAX_NODES; i++)
            r->isr[i] = mp->isr[i];
        r->lrs = mp->leader_recovery_state;
    }
    node_send(c, ctl, r);
}

static void schedule_commit(struct cf *c)
{
    if (c->n_props > 0)
        ev_push(c, c->props[0].ready_at, EV_COMMIT, 0, NULL);
}

/* Proposes the records of `recs` as one batch. */
static void propose(struct cf *c, struct cf_node *n, const struct meta_record *recs, size_t nrec,
                    enum prop_kind kind, int32_t reply_to, uint64_t req, int32_t part,
                    const struct ctl_heartbeat_answer *hb)
{
    struct prop p = {.kind = kind, .term = c->term, .reply_to = reply_to, .req = req, .part = part};
    if (meta_batch_encode(recs, nrec, &p.buf, &p.len) != 0)
        abort();
    if (hb)
        p.hb = *hb;
    p.ready_at = c->now + rnd_range(c, c->o.commit_min_ms, c->o.commit_max_ms);
    if (c->n_props > 0 && p.ready_at < c->props[c->n_props - 1].ready_at)
        p.ready_at = c->props[c->n_props - 1].ready_at;
    GROW(c->props, c->n_props, c->cap_props);
    c->props[c->n_props++] = p;
    if (c->n_props == 1)
        schedule_commit(c);
    (void)n;
}

static const struct meta_partition *truth_part(const struct cf *c, int32_t part);

static void trace_records(void *arg, const struct meta_record *recs, size_t nrec)
{
    const struct cf *c = arg;
    for (size_t i = 0; i < nrec; i++) {
        const struct meta_record *r = &recs[i];
        char isr[64] = "";
        size_t k = 0;
        switch (r->type) {
        case META_REC_PARTITION:
        case META_REC_PARTITION_CHANGE:
            for (int32_t j = 0; j < r->u.partition.n_isr && k + 8 < sizeof isr; j++)
                k += (size_t)snprintf(isr + k, sizeof isr - k, "%s%d", j ? "," : "",
                                      r->u.partition.isr[j]);
            trace(c, "p%d leader %d epoch %d/%d isr [%s] replicas %d (+%d -%d)%s",
                  r->u.partition.partition, r->u.partition.leader, r->u.partition.leader_epoch,
                  r->u.partition.partition_epoch, isr, r->u.partition.n_replicas,
                  r->u.partition.n_adding, r->u.partition.n_removing,
                  r->u.partition.leader_recovery_state ? " RECOVERING" : "");
            break;
        case META_REC_REGISTER_BROKER2:
            trace(c, "broker %d registered", r->u.broker.id);
            break;
        case META_REC_BROKER_CHANGE:
            trace(c, "broker %d%s%s", r->u.broker_change.id,
                  r->u.broker_change.fenced == 1   ? " fenced"
                  : r->u.broker_change.fenced == 0 ? " unfenced"
                                                   : "",
                  r->u.broker_change.shutting_down == 1 ? " shutting down" : "");
            break;
        default:
            break;
        }
    }
}

/* A partition's replicas before a batch, and those it was adding: checker (8). */
struct replicas_before {
    int32_t n, n_adding;
    int32_t ids[CF_MAX_NODES], adding[CF_MAX_NODES];
};

static void replicas_snapshot(const struct cf *c, struct replicas_before *rb)
{
    for (int32_t part = 0; part < CF_MAX_PARTS; part++) {
        const struct meta_partition *mp = truth_part(c, part);
        rb[part].n = rb[part].n_adding = 0;
        for (int32_t k = 0; mp && k < mp->n_replicas && k < CF_MAX_NODES; k++)
            rb[part].ids[rb[part].n++] = mp->replicas[k];
        for (int32_t k = 0; mp && k < mp->n_adding && k < CF_MAX_NODES; k++)
            rb[part].adding[rb[part].n_adding++] = mp->adding[k];
    }
}

/* Checker (8), after a batch applied to the oracle: when a replica left the replicas that was
 * not one a reassignment was adding (those leave on a cancellation), a reassignment ended —
 * every replica that stays must then be in the ISR and hold the leader's log up to the
 * leader's HW. */
static void check_removals(struct cf *c, const struct replicas_before *rb)
{
    for (int32_t part = 0; part < CF_MAX_PARTS; part++) {
        const struct meta_partition *mp = truth_part(c, part);
        bool ended = false;
        for (int32_t k = 0; mp && k < rb[part].n; k++)
            ended = ended || (!has_id(mp->replicas, mp->n_replicas, rb[part].ids[k]) &&
                              !has_id(rb[part].adding, rb[part].n_adding, rb[part].ids[k]));
        if (!ended)
            continue;
        const struct cf_part *lp = NULL;
        for (int32_t id = 1; id <= c->o.n_nodes; id++) {
            const struct cf_part *q = &c->nodes[id].parts[part];
            if (q->sm && psm_role(q->sm) == PSM_LEADER &&
                (lp == NULL || psm_leader_epoch(q->sm) > psm_leader_epoch(lp->sm)))
                lp = q;
        }
        for (int32_t k = 0; k < mp->n_replicas; k++) {
            int32_t r = mp->replicas[k];
            const struct cf_part *q = &c->nodes[r].parts[part];
            int64_t hw = lp ? psm_high_watermark(lp->sm) : 0, o = 0;
            while (lp && o < hw && o < q->n_log && o < lp->n_log &&
                   entry_eq(&q->log[o], &lp->log[o]))
                o++;
            if (!has_id(mp->isr, mp->n_isr, r) || (lp && o < hw))
                note(c, &c->live.early_removal,
                     "p%d: a reassignment ended with replica %d %s (holds %lld of HW %lld)", part,
                     r, has_id(mp->isr, mp->n_isr, r) ? "behind" : "out of the ISR", (long long)o,
                     (long long)hw);
        }
    }
}

static void commit_one(struct cf *c, struct cf_node *ctl, struct prop *p)
{
    struct replicas_before rb[CF_MAX_PARTS];
    GROW(c->log, c->n_log, c->cap_log);
    int64_t idx = c->n_log;
    c->log[c->n_log++] = (struct batch){p->buf, p->len};
    p->buf = NULL;
    replicas_snapshot(c, rb);
    int terr = meta_image_apply(c->truth, c->log[idx].buf, c->log[idx].len, trace_records, c);
    if (terr != 0)
        trace(c, "batch %lld (kind %d) refused: %s", (long long)idx, p->kind, err_name(terr));
    else
        check_removals(c, rb);
    int err = node_apply(c, ctl, idx);
    maybe_ready(c, ctl);
    switch (p->kind) {
    case P_REGISTER:
        reply_register(c, ctl, p->reply_to, p->req, (int16_t)err);
        break;
    case P_HEARTBEAT:
        reply_heartbeat(c, ctl, p->reply_to, p->req, &p->hb);
        break;
    case P_ALTER:
        reply_alter(c, ctl, p->reply_to, p->req, p->part, p->rv ? p->rv : (int16_t)err);
        break;
    case P_TICK:
        ctl->tick_in_flight = false;
        break;
    case P_ADMIN:
        break;
    }
}

/* Commits the proposals that are due, in order, while the controller reaches a majority. */
static void raft_commit(struct cf *c)
{
    while (c->n_props > 0) {
        struct prop *p = &c->props[0];
        if (c->controller < 0 || p->term != c->term) {
            props_drop(c);
            return;
        }
        if (p->ready_at > c->now) {
            schedule_commit(c);
            return;
        }
        struct cf_node *ctl = node(c, c->controller);
        if (!reaches_majority(c, ctl))
            return; /* the raft tick tries again */
        struct prop head = *p;
        memmove(&c->props[0], &c->props[1], (size_t)(c->n_props - 1) * sizeof *c->props);
        c->n_props--;
        commit_one(c, ctl, &head);
        if (c->controller != ctl->id)
            return;
    }
    if (c->controller >= 0)
        answer_meta_parked(c, node(c, c->controller), false, 0);
}

static void raft_tick(struct cf *c)
{
    ev_push(c, c->now + RAFT_TICK_MS, EV_RAFT_TICK, 0, NULL);
    if (c->controller >= 0) {
        struct cf_node *ctl = node(c, c->controller);
        if (ctl->state == NODE_DOWN) {
            step_down(c);
        } else if (reaches_majority(c, ctl)) {
            c->unreach_since = -1;
        } else if (c->unreach_since < 0) {
            c->unreach_since = c->now;
        } else if (c->now - c->unreach_since >= c->o.election_timeout_ms) {
            /* Check-quorum: it steps down, and the voters have waited as long already. */
            step_down(c);
            c->lost_since = c->now - c->election_wait;
        }
    }
    if (c->controller < 0 && c->now - c->lost_since >= c->election_wait)
        elect(c, -1);
    raft_commit(c);
}

/* ---- the controller's handlers --------------------------------------------------------- */

static void on_register(struct cf *c, struct cf_node *n, struct msg *m)
{
    if (!node_is_controller(c, n)) {
        reply_register(c, n, m->from, m->req, ERR_NOT_CONTROLLER);
        return;
    }
    char host[16];
    snprintf(host, sizeof host, "node%d", m->from);
    struct meta_listener l = {.name = "PLAINTEXT", .host = host, .port = 9092};
    struct ctl_registration r = {
        .broker_id = m->from,
        .cluster_id = CLUSTER_ID,
        .n_listeners = 1,
        .listeners = &l,
        .n_dirs = 1,
        .dirs = (const uint8_t(*)[16])m->dir,
        .previous_broker_epoch = m->prev_epoch,
    };
    memcpy(r.incarnation, m->incarnation, 16);
    ctl_out_reset(&n->out);
    int rv = ctl_sm_register(n->ctl, n->img, &r, c->now, &n->out);
    if (n->out.oom)
        return;
    if (rv != 0 || n->out.n == 0)
        reply_register(c, n, m->from, m->req, (int16_t)rv);
    else
        propose(c, n, n->out.recs, n->out.n, P_REGISTER, m->from, m->req, -1, NULL);
}

static void on_heartbeat(struct cf *c, struct cf_node *n, struct msg *m)
{
    struct ctl_heartbeat_answer a = {.error = ERR_NOT_CONTROLLER};
    if (!node_is_controller(c, n)) {
        reply_heartbeat(c, n, m->from, m->req, &a);
        return;
    }
    struct ctl_heartbeat hb = {
        .broker_id = m->from,
        .broker_epoch = m->broker_epoch,
        .metadata_offset = m->meta_offset,
        .want_shutdown = m->want_shutdown,
    };
    ctl_out_reset(&n->out);
    ctl_sm_heartbeat(n->ctl, n->img, &hb, c->now, &n->out, &a);
    if (n->out.oom)
        return;
    if (n->out.n == 0)
        reply_heartbeat(c, n, m->from, m->req, &a);
    else
        propose(c, n, n->out.recs, n->out.n, P_HEARTBEAT, m->from, m->req, -1, &a);
}

static void on_alter(struct cf *c, struct cf_node *n, struct msg *m)
{
    if (!node_is_controller(c, n)) {
        reply_alter(c, n, m->from, m->req, m->part, ERR_NOT_CONTROLLER);
        return;
    }
    struct ctl_alter_partition a = {
        .broker_id = m->from,
        .broker_epoch = m->broker_epoch,
        .partition = m->part,
        .leader_epoch = m->leader_epoch,
        .partition_epoch = m->partition_epoch,
        .n_isr = m->n_isr,
        .isr = m->isr,
        .isr_epochs = m->isr_epochs,
        .leader_recovery_state = m->lrs,
    };
    memcpy(a.topic_id, c->topic_id, 16);
    ctl_out_reset(&n->out);
    int rv = ctl_sm_alter_partition(n->ctl, n->img, &a, &n->out);
    if (n->out.oom)
        return;
    if (n->out.n == 0) {
        reply_alter(c, n, m->from, m->req, m->part, (int16_t)rv);
        return;
    }
    propose(c, n, n->out.recs, n->out.n, P_ALTER, m->from, m->req, m->part, NULL);
    c->props[c->n_props - 1].rv = (int16_t)rv;
}

/* Returns true when it keeps `m`. */
static bool on_meta_fetch(struct cf *c, struct cf_node *n, struct msg *m)
{
    if (!node_is_controller(c, n)) {
        meta_fetch_answer(c, n, m, ERR_NOT_CONTROLLER);
        return true;
    }
    if (m->from_off < c->n_log) {
        meta_fetch_answer(c, n, m, 0);
        return true;
    }
    m->deadline = c->now + META_POLL_MS;
    GROW(n->meta_parked, n->n_meta_parked, n->cap_meta_parked);
    n->meta_parked[n->n_meta_parked++] = m;
    return true;
}

/* ---- a broker's lifecycle -------------------------------------------------------------- */

static void send_register(struct cf *c, struct cf_node *n)
{
    n->next_register = c->now + REGISTER_RETRY_MS;
    if (c->controller < 0)
        return;
    struct msg *m = msg_new(M_REGISTER, n->id, c->controller);
    m->req = ++n->next_req;
    memcpy(m->incarnation, n->incarnation, 16);
    memcpy(m->dir, n->dir, 16);
    /* Registering again without a restart (fenced meanwhile): the process kept everything. */
    m->prev_epoch = n->broker_epoch >= 0 ? n->broker_epoch : n->prev_epoch;
    node_send(c, n, m);
}

static void send_heartbeat(struct cf *c, struct cf_node *n)
{
    n->next_hb = c->now + (n->shutting_down ? SHUTDOWN_HB_MS : c->o.heartbeat_ms);
    if (c->controller < 0)
        return;
    struct msg *m = msg_new(M_HEARTBEAT, n->id, c->controller);
    m->req = ++n->next_req;
    m->broker_epoch = n->broker_epoch;
    m->meta_offset = meta_image_offset(n->img);
    m->want_shutdown = n->shutting_down;
    node_send(c, n, m);
}

static void send_meta_fetch(struct cf *c, struct cf_node *n)
{
    if (c->controller < 0 || node_is_controller(c, n))
        return;
    struct msg *m = msg_new(M_META_FETCH, n->id, c->controller);
    m->req = ++n->next_req;
    m->from_off = meta_image_offset(n->img);
    n->meta_in_flight = true;
    n->meta_req = m->req;
    n->meta_sent = c->now;
    node_send(c, n, m);
}

static void on_meta_fetch_answer(struct cf *c, struct cf_node *n, struct msg *m)
{
    if (!n->meta_in_flight || m->req != n->meta_req)
        return;
    n->meta_in_flight = false;
    if (m->err != 0 || m->from_off != meta_image_offset(n->img))
        return;
    for (int64_t i = 0; i < m->n_batches; i++)
        node_apply(c, n, m->from_off + i);
    maybe_ready(c, n);
}

static void node_stop_clean(struct cf *c, struct cf_node *n);

static void on_register_answer(struct cf *c, struct cf_node *n, struct msg *m)
{
    (void)c;
    if (m->err != 0 || n->registered)
        return;
    n->registered = true;
    n->broker_epoch = m->broker_epoch;
    n->next_hb = c->now;
    maybe_ready(c, n);
}

static void on_heartbeat_answer(struct cf *c, struct cf_node *n, struct msg *m)
{
    if (m->err == ERR_STALE_BROKER_EPOCH || m->err == ERR_BROKER_NOT_AVAILABLE) {
        n->registered = false;
        n->next_register = c->now;
        return;
    }
    if (m->err == 0 && m->should_shutdown && n->shutting_down)
        node_stop_clean(c, n);
}

static void on_alter_answer(struct cf *c, struct cf_node *n, struct msg *m)
{
    struct cf_part *p =
        n->ready && m->part >= 0 && m->part < CF_MAX_PARTS ? &n->parts[m->part] : NULL;
    if (p == NULL || p->sm == NULL)
        return;
    struct psm_assignment a = {
        .leader = m->leader,
        .leader_epoch = m->leader_epoch,
        .partition_epoch = m->partition_epoch,
        .n_isr = m->n_isr,
        .isr = m->isr,
        .leader_recovery_state = m->lrs,
    };
    struct psm_effects fx;
    psm_alter_answered(p->sm, m->err, m->err == 0 ? &a : NULL, c->now, &fx);
    part_effects(c, p, &fx);
}

static void flush(struct cf_node *n, int32_t n_parts)
{
    for (int32_t i = 0; i < n_parts; i++) {
        struct cf_part *p = &n->parts[i];
        p->flushed = p->n_log;
        if (p->sm)
            p->hw_checkpoint = psm_high_watermark(p->sm);
    }
}

static void node_tick(struct cf *c, struct cf_node *n)
{
    ev_push(c, c->now + NODE_TICK_MS, EV_NODE_TICK, n->id, NULL);
    if (n->state != NODE_UP)
        return;
    if (!n->registered && c->now >= n->next_register)
        send_register(c, n);
    if (n->registered && c->now >= n->next_hb)
        send_heartbeat(c, n);
    if (n->meta_in_flight && c->now - n->meta_sent >= META_TIMEOUT_MS)
        n->meta_in_flight = false;
    if (!n->meta_in_flight)
        send_meta_fetch(c, n);
    for (int32_t i = 0; i < c->n_parts; i++) {
        struct cf_part *p = &n->parts[i];
        if (p->sm == NULL)
            continue;
        struct psm_effects fx;
        psm_tick(p->sm, c->now, &fx);
        part_effects(c, p, &fx);
        for (int32_t k = 0; k < p->n_w;) {
            if (c->now >= p->w[k].deadline) {
                produce_answer(c, p, p->w[k].client, p->w[k].req, ERR_REQUEST_TIMED_OUT, -1);
                waiter_remove(p, k);
            } else {
                k++;
            }
        }
    }
    for (int32_t i = 0; i < n->n_parked;) {
        if (c->now >= n->parked[i]->deadline) {
            struct msg *m = n->parked[i];
            n->parked[i] = n->parked[--n->n_parked];
            rfetch_answer(c, n, m);
        } else {
            i++;
        }
    }
    for (int32_t l = 1; l <= c->o.n_nodes; l++)
        if (n->fetcher[l].in_flight && c->now - n->fetcher[l].sent >= RFETCH_TIMEOUT_MS)
            n->fetcher[l].in_flight = false;
    if (!n->flush_frozen && c->now >= n->next_flush) {
        flush(n, c->n_parts);
        n->next_flush = c->now + c->o.flush_ms;
    }
    if (node_is_controller(c, n)) {
        answer_meta_parked(c, n, false, 0);
        if (c->now >= n->next_ctl_tick && !n->tick_in_flight) {
            n->next_ctl_tick = c->now + CTL_TICK_MS;
            ctl_out_reset(&n->out);
            ctl_sm_tick(n->ctl, n->img, c->now, &n->out);
            if (!n->out.oom && n->out.n > 0) {
                propose(c, n, n->out.recs, n->out.n, P_TICK, -1, 0, -1, NULL);
                n->tick_in_flight = true;
            }
        }
    }
    fetcher_pump(c, n);
}

/* Everything a process holds in memory goes; the logs, their epoch caches and checkpoints
 * and the applied metadata count (its raft log) stay. */
static void node_down(struct cf *c, struct cf_node *n)
{
    if (c->controller == n->id)
        step_down(c);
    n->state = NODE_DOWN;
    n->persisted = meta_image_offset(n->img);
    meta_image_free(n->img);
    n->img = NULL;
    n->ready = false;
    n->registered = false;
    n->shutting_down = false;
    n->meta_in_flight = false;
    for (int32_t i = 0; i < CF_MAX_PARTS; i++) {
        struct cf_part *p = &n->parts[i];
        psm_free(p->sm);
        p->sm = NULL;
        p->n_w = 0;
    }
    for (int32_t l = 0; l <= CF_MAX_NODES; l++)
        n->fetcher[l].in_flight = false;
    for (int32_t i = 0; i < n->n_parked; i++)
        msg_free(n->parked[i]);
    n->n_parked = 0;
    for (int32_t i = 0; i < n->n_meta_parked; i++)
        msg_free(n->meta_parked[i]);
    n->n_meta_parked = 0;
    for (int32_t i = 0; i < n->n_inbox; i++)
        msg_free(n->inbox[i]);
    n->n_inbox = 0;
}

static void node_stop_clean(struct cf *c, struct cf_node *n)
{
    bool was_controller = c->controller == n->id;
    trace(c, "node %d stops (controlled shutdown)", n->id);
    flush(n, c->n_parts);
    n->last_epoch = n->broker_epoch;
    n->logs_intact = true;
    node_down(c, n);
    /* The active controller hands raft leadership over before it goes (raft_transfer). */
    if (was_controller)
        elect(c, n->id);
}

static void new_incarnation(struct cf *c, struct cf_node *n)
{
    uint64_t a = rnd(c), b = rnd(c);
    memcpy(n->incarnation, &a, 8);
    memcpy(n->incarnation + 8, &b, 8);
}

static void node_start(struct cf *c, struct cf_node *n)
{
    n->state = NODE_UP;
    n->img = meta_image_new();
    if (n->img == NULL)
        abort();
    /* Its own raft log replays; whatever came later it fetches. */
    for (int64_t i = 0; i < n->persisted; i++)
        meta_image_apply(n->img, c->log[i].buf, c->log[i].len, NULL, NULL);
    for (int32_t i = 0; i < CF_MAX_PARTS; i++)
        cache_truncate(&n->parts[i], n->parts[i].n_log);
    new_incarnation(c, n);
    n->ready = false;
    n->registered = false;
    n->prev_epoch = n->logs_intact ? n->last_epoch : -1;
    n->broker_epoch = -1;
    n->next_register = c->now;
    n->next_flush = c->now + c->o.flush_ms;
}

/* ---- delivery -------------------------------------------------------------------------- */

static bool is_request(enum msg_kind k)
{
    return k == M_PRODUCE || k == M_CFETCH || k == M_METADATA || k == M_RFETCH ||
           k == M_META_FETCH || k == M_REGISTER || k == M_HEARTBEAT || k == M_ALTER;
}

/* Returns true when the handler kept `m`. */
static bool node_handle(struct cf *c, struct cf_node *n, struct msg *m)
{
    bool kept = false;
    switch (m->kind) {
    case M_PRODUCE:
        on_produce(c, n, m);
        break;
    case M_CFETCH:
        on_cfetch(c, n, m);
        break;
    case M_METADATA:
        on_metadata(c, n, m);
        break;
    case M_RFETCH:
        kept = on_rfetch(c, n, m);
        break;
    case M_RFETCH_R:
        on_rfetch_answer(c, n, m);
        break;
    case M_META_FETCH:
        kept = on_meta_fetch(c, n, m);
        break;
    case M_META_FETCH_R:
        on_meta_fetch_answer(c, n, m);
        break;
    case M_REGISTER:
        on_register(c, n, m);
        break;
    case M_REGISTER_R:
        on_register_answer(c, n, m);
        break;
    case M_HEARTBEAT:
        on_heartbeat(c, n, m);
        break;
    case M_HEARTBEAT_R:
        on_heartbeat_answer(c, n, m);
        break;
    case M_ALTER:
        on_alter(c, n, m);
        break;
    case M_ALTER_R:
        on_alter_answer(c, n, m);
        break;
    default:
        break;
    }
    if (n->state == NODE_UP)
        fetcher_pump(c, n);
    return kept;
}

/* ---- clients --------------------------------------------------------------------------- */

static int32_t client_id(int32_t i)
{
    return CF_CLIENT_BASE + i;
}

static void client_send(struct cf *c, struct client *cl, int32_t i, struct msg *m)
{
    (void)cl;
    m->from = client_id(i);
    net_send(c, m);
}

static void client_metadata(struct cf *c, struct client *cl, int32_t i)
{
    if (cl->meta_in_flight && c->now - cl->meta_sent < META_REQ_TIMEOUT_MS)
        return;
    /* Any broker may answer, from its own (possibly stale) image. */
    struct msg *m = msg_new(M_METADATA, 0, (int32_t)rnd_range(c, 1, c->o.n_nodes));
    m->req = ++cl->next_req;
    cl->meta_in_flight = true;
    cl->meta_req = m->req;
    cl->meta_sent = c->now;
    client_send(c, cl, i, m);
}

static void producer_pump(struct cf *c, struct client *cl, int32_t i)
{
    for (int32_t part = 0; part < c->n_parts; part++) {
        if (cl->inflight[part].on && c->now - cl->inflight[part].sent >= CLIENT_TIMEOUT_MS) {
            cl->inflight[part].on = false;
            cl->st.timeouts++;
            cl->retry_at[part] = c->now + RETRY_BACKOFF_MS;
            cl->meta_stale = true;
        }
        if (cl->inflight[part].on)
            continue;
        int64_t h = cl->head[part];
        while (h < cl->n_recs && (cl->recs[h].part != part || cl->recs[h].state != R_PENDING))
            h++;
        cl->head[part] = h;
        if (h >= cl->n_recs)
            continue;
        struct prec *r = &cl->recs[h];
        if (c->now >= r->deadline) {
            r->state = R_FAILED;
            cl->st.failed++;
            cl->st.pending--;
            part--; /* the partition's next record */
            continue;
        }
        if (c->now < cl->retry_at[part])
            continue;
        int32_t leader = cl->leaders[part];
        if (leader < 1 || leader > c->o.n_nodes) {
            cl->meta_stale = true;
            continue;
        }
        struct msg *m = msg_new(M_PRODUCE, 0, leader);
        m->req = ++cl->next_req;
        m->part = part;
        m->acks = cl->acks;
        m->rid = r->rid;
        cl->inflight[part].on = true;
        cl->inflight[part].rec = h;
        cl->inflight[part].req = m->req;
        cl->inflight[part].sent = c->now;
        client_send(c, cl, i, m);
    }
    if (cl->meta_stale)
        client_metadata(c, cl, i);
}

static void consumer_pump(struct cf *c, struct client *cl, int32_t i)
{
    for (int32_t part = 0; part < c->n_parts; part++) {
        if (cl->inflight[part].on && c->now - cl->inflight[part].sent >= CONSUMER_TIMEOUT_MS) {
            cl->inflight[part].on = false;
            cl->meta_stale = true;
        }
        if (cl->inflight[part].on || c->now < cl->retry_at[part])
            continue;
        int32_t leader = cl->leaders[part];
        if (leader < 1 || leader > c->o.n_nodes) {
            cl->meta_stale = true;
            continue;
        }
        struct msg *m = msg_new(M_CFETCH, 0, leader);
        m->req = ++cl->next_req;
        m->part = part;
        m->offset = cl->next[part];
        m->epoch = cl->epochs[part];
        cl->inflight[part].on = true;
        cl->inflight[part].req = m->req;
        cl->inflight[part].sent = c->now;
        client_send(c, cl, i, m);
    }
    if (cl->meta_stale)
        client_metadata(c, cl, i);
}

static void client_pump(struct cf *c, int32_t i)
{
    struct client *cl = &c->clients[i];
    if (cl->producer)
        producer_pump(c, cl, i);
    else
        consumer_pump(c, cl, i);
}

static void client_tick(struct cf *c, int32_t i)
{
    struct client *cl = &c->clients[i];
    int64_t every = cl->producer ? cl->interval_ms : CONSUMER_POLL_MS;
    ev_push(c, c->now + every, EV_CLIENT_TICK, i, NULL);
    if (cl->producer && !cl->stopped &&
        (cl->max_records == 0 || cl->st.created < cl->max_records)) {
        GROW(cl->recs, cl->n_recs, cl->cap_recs);
        cl->recs[cl->n_recs++] = (struct prec){
            .rid = ((uint64_t)(i + 1) << 40) | (uint64_t)cl->st.created,
            .part = (int32_t)(cl->st.created % c->n_parts),
            .state = R_PENDING,
            .offset = -1,
            .deadline = c->now + DELIVERY_TIMEOUT_MS,
        };
        cl->st.created++;
        cl->st.pending++;
    }
    client_pump(c, i);
}

static void client_retry(struct cf *c, struct client *cl, int32_t part)
{
    cl->retry_at[part] = c->now + RETRY_BACKOFF_MS;
    cl->meta_stale = true;
}

static void client_handle(struct cf *c, int32_t i, struct msg *m)
{
    struct client *cl = &c->clients[i];
    if (m->kind == M_REFUSED && m->orig == M_METADATA) {
        if (m->req == cl->meta_req)
            cl->meta_in_flight = false;
    } else if (m->kind == M_METADATA_R) {
        if (m->req == cl->meta_req) {
            cl->meta_in_flight = false;
            cl->meta_stale = false;
            for (int32_t p = 0; p < m->n_parts && p < CF_MAX_PARTS; p++) {
                cl->leaders[p] = m->leaders[p];
                cl->epochs[p] = m->epochs[p];
            }
        }
    } else if (m->part >= 0 && m->part < CF_MAX_PARTS && cl->inflight[m->part].on &&
               cl->inflight[m->part].req == m->req) {
        int32_t part = m->part;
        cl->inflight[part].on = false;
        if (m->kind == M_REFUSED) {
            if (cl->producer)
                cl->st.refused++;
            client_retry(c, cl, part);
        } else if (m->kind == M_PRODUCE_R) {
            struct prec *r = &cl->recs[cl->inflight[part].rec];
            if (m->err >= 0 && m->err < 128)
                cl->st.errors[m->err]++;
            if (m->err == 0 && r->state == R_PENDING) {
                r->state = R_ACKED;
                r->offset = m->offset;
                r->broker = m->from;
                r->epoch = m->epoch;
                cl->st.acked++;
                cl->st.pending--;
            } else if (m->err != 0) {
                client_retry(c, cl, part);
            }
        } else if (m->kind == M_CFETCH_R) {
            if (m->err == ERR_OFFSET_OUT_OF_RANGE) {
                cl->next[part] = m->hw; /* auto.offset.reset=latest */
                client_retry(c, cl, part);
            } else if (m->err != 0) {
                client_retry(c, cl, part);
            } else if (m->offset == cl->next[part]) {
                for (int32_t k = 0; k < m->n_recs; k++) {
                    GROW(cl->seen, cl->n_seen, cl->cap_seen);
                    cl->seen[cl->n_seen++] = (struct seen){part, m->recs[k].offset, m->recs[k].rid};
                }
                cl->next[part] += m->n_recs;
                if (m->n_recs == 0)
                    cl->retry_at[part] = c->now + CONSUMER_POLL_MS;
            }
        }
    }
    client_pump(c, i);
}

/* ---- the event loop -------------------------------------------------------------------- */

static void deliver(struct cf *c, struct msg *m)
{
    if (c->cut[ep(m->from)][ep(m->to)]) {
        msg_free(m);
        return;
    }
    if (m->to >= CF_CLIENT_BASE) {
        client_handle(c, m->to - CF_CLIENT_BASE, m);
        msg_free(m);
        return;
    }
    struct cf_node *n = node(c, m->to);
    if (n->state == NODE_DOWN) {
        if (m->from >= CF_CLIENT_BASE && is_request(m->kind)) {
            struct msg *r = msg_new(M_REFUSED, m->to, m->from);
            r->orig = m->kind;
            r->req = m->req;
            r->part = m->part;
            net_send(c, r);
        }
        msg_free(m);
        return;
    }
    if (n->state == NODE_PAUSED) {
        GROW(n->inbox, n->n_inbox, n->cap_inbox);
        n->inbox[n->n_inbox++] = m;
        return;
    }
    if (!node_handle(c, n, m))
        msg_free(m);
}

static void step(struct cf *c)
{
    struct ev e = ev_pop(c);
    assert(e.at >= c->now);
    c->now = e.at;
    c->events++;
    switch (e.kind) {
    case EV_MSG:
        deliver(c, e.m);
        break;
    case EV_NODE_TICK:
        node_tick(c, node(c, e.who));
        break;
    case EV_CLIENT_TICK:
        client_tick(c, e.who);
        break;
    case EV_RAFT_TICK:
        raft_tick(c);
        break;
    case EV_COMMIT:
        raft_commit(c);
        break;
    }
}

int64_t cf_now(const struct cf *c)
{
    return c->now;
}

uint64_t cf_events(const struct cf *c)
{
    return c->events;
}

void cf_run(struct cf *c, int64_t ms)
{
    int64_t end = c->now + ms;
    while (c->n_heap > 0 && c->heap[0].at <= end)
        step(c);
    c->now = end;
}

bool cf_run_until(struct cf *c, bool (*pred)(struct cf *, void *), void *arg, int64_t max_ms)
{
    int64_t end = c->now + max_ms;
    if (pred(c, arg))
        return true;
    while (c->n_heap > 0 && c->heap[0].at <= end) {
        step(c);
        if (pred(c, arg))
            return true;
    }
    c->now = end;
    return false;
}

/* ---- creation -------------------------------------------------------------------------- */

struct cf *cf_new(const struct cf_options *o)
{
    struct cf *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    c->o = *o;
    if (c->o.n_nodes <= 0)
        c->o.n_nodes = 3;
    if (c->o.n_nodes > CF_MAX_NODES)
        c->o.n_nodes = CF_MAX_NODES;
    if (c->o.delay_min_ms <= 0)
        c->o.delay_min_ms = 1;
    if (c->o.delay_max_ms < c->o.delay_min_ms)
        c->o.delay_max_ms = c->o.delay_min_ms + 4;
    if (c->o.commit_min_ms <= 0)
        c->o.commit_min_ms = 2;
    if (c->o.commit_max_ms < c->o.commit_min_ms)
        c->o.commit_max_ms = c->o.commit_min_ms + 8;
    if (c->o.election_timeout_ms <= 0)
        c->o.election_timeout_ms = 1000;
    if (c->o.lag_ms <= 0)
        c->o.lag_ms = 30000;
    if (c->o.session_ms <= 0)
        c->o.session_ms = 9000;
    if (c->o.heartbeat_ms <= 0)
        c->o.heartbeat_ms = 2000;
    if (c->o.flush_ms <= 0)
        c->o.flush_ms = 1000;
    if (c->o.rebalance_interval_ms <= 0)
        c->o.rebalance_interval_ms = 300000;
    c->rng = o->seed * 0x2545f4914f6cdd1dull + 1;
    c->truth = meta_image_new();
    if (c->truth == NULL) {
        free(c);
        return NULL;
    }
    for (int i = 0; i < 16; i++)
        c->topic_id[i] = (uint8_t)(0xa0 + i);
    c->controller = -1;
    c->lost_since = 0;
    c->unreach_since = -1;
    c->election_wait = c->o.election_timeout_ms + rnd_range(c, 0, c->o.election_timeout_ms / 2);
    for (int32_t id = 1; id <= c->o.n_nodes; id++) {
        struct cf_node *n = &c->nodes[id];
        n->id = id;
        for (int i = 0; i < 16; i++)
            n->dir[i] = (uint8_t)(id * 16 + i);
        for (int32_t i = 0; i < CF_MAX_PARTS; i++) {
            n->parts[i] = (struct cf_part){.c = c, .n = n, .idx = i, .seen_epoch = -1};
        }
        ctl_out_init(&n->out);
        n->last_epoch = -1; /* a new log directory */
        node_start(c, n);
        ev_push(c, rnd_range(c, 0, NODE_TICK_MS - 1), EV_NODE_TICK, id, NULL);
    }
    ev_push(c, RAFT_TICK_MS, EV_RAFT_TICK, 0, NULL);
    return c;
}

void cf_free(struct cf *c)
{
    if (c == NULL)
        return;
    for (int32_t id = 1; id <= c->o.n_nodes; id++)
        if (c->nodes[id].state != NODE_DOWN)
            node_down(c, &c->nodes[id]);
    for (size_t i = 0; i < c->n_heap; i++)
        msg_free(c->heap[i].m);
    free(c->heap);
    for (int32_t id = 1; id <= c->o.n_nodes; id++) {
        struct cf_node *n = &c->nodes[id];
        ctl_out_free(&n->out);
        for (int32_t i = 0; i < CF_MAX_PARTS; i++) {
            free(n->parts[i].log);
            free(n->parts[i].ghost);
            free(n->parts[i].cache);
            free(n->parts[i].w);
        }
        free(n->parked);
        free(n->inbox);
        free(n->meta_parked);
    }
    for (int32_t i = 0; i < CF_MAX_CLIENTS; i++) {
        free(c->clients[i].recs);
        free(c->clients[i].seen);
    }
    props_drop(c);
    free(c->props);
    for (int64_t i = 0; i < c->n_log; i++)
        free(c->log[i].buf);
    free(c->log);
    meta_image_free(c->truth);
    free(c->acks);
    for (int32_t i = 0; i < CF_MAX_PARTS; i++) {
        free(c->ack_index[i].epoch_broker);
        free(c->ack_index[i].offset_rid);
    }
    free(c->truncs);
    free(c);
}

/* ---- the cluster ----------------------------------------------------------------------- */

static bool all_unfenced(struct cf *c, void *arg)
{
    (void)arg;
    if (c->controller < 0)
        return false;
    for (int32_t id = 1; id <= c->o.n_nodes; id++) {
        const struct meta_broker *b = meta_image_broker_by_id(c->truth, id);
        if (b == NULL || b->fenced)
            return false;
    }
    return true;
}

static bool topic_led(struct cf *c, void *arg)
{
    (void)arg;
    const struct meta_topic *t = topic_of(c->truth);
    if (t == NULL)
        return false;
    for (int32_t i = 0; i < t->n_partitions; i++) {
        const struct meta_partition *mp = &t->partitions[i];
        if (mp->leader < 0)
            return false;
        for (int32_t k = 0; k < mp->n_replicas; k++) {
            const struct cf_part *p = &c->nodes[mp->replicas[k]].parts[i];
            if (p->sm == NULL || psm_leader_epoch(p->sm) != mp->leader_epoch ||
                psm_leader(p->sm) != mp->leader)
                return false;
        }
    }
    return true;
}

bool cf_start_assigned(struct cf *c, int32_t partitions, int32_t rf, const int32_t *assignment,
                       int32_t min_isr, bool unclean, int64_t max_ms)
{
    int64_t end = c->now + max_ms;
    if (partitions < 1 || partitions > CF_MAX_PARTS || rf < 1 || rf > c->o.n_nodes ||
        !cf_run_until(c, all_unfenced, NULL, max_ms))
        return false;
    struct cf_node *ctl = node(c, c->controller);
    int32_t place[CF_MAX_PARTS * CF_MAX_NODES];
    if (assignment)
        memcpy(place, assignment, (size_t)(partitions * rf) * sizeof *place);
    else if (ctl_place_replicas(ctl->img, partitions, rf, 0, (uint32_t)rnd(c), place) != 0)
        return false;
    char min_isr_s[16];
    snprintf(min_isr_s, sizeof min_isr_s, "%d", min_isr);
    struct meta_record recs[3 + CF_MAX_PARTS];
    size_t n = 0;
    memset(recs, 0, sizeof recs);
    recs[n].type = META_REC_TOPIC;
    recs[n].u.topic.name = TOPIC;
    memcpy(recs[n++].u.topic.id, c->topic_id, 16);
    for (int k = 0; k < 2; k++) {
        recs[n].type = META_REC_CONFIG;
        recs[n].u.config.resource_type = 2;
        recs[n].u.config.resource_name = TOPIC;
        recs[n].u.config.key = k == 0 ? "min.insync.replicas" : "unclean.leader.election.enable";
        recs[n++].u.config.value = k == 0 ? min_isr_s : unclean ? "true" : "false";
    }
    for (int32_t i = 0; i < partitions; i++) {
        struct meta_record *r = &recs[n++];
        r->type = META_REC_PARTITION;
        memcpy(r->u.partition.topic_id, c->topic_id, 16);
        r->u.partition.partition = i;
        r->u.partition.leader = place[i * rf];
        r->u.partition.n_replicas = rf;
        r->u.partition.replicas = &place[i * rf];
        r->u.partition.n_isr = rf;
        r->u.partition.isr = &place[i * rf];
    }
    c->n_parts = partitions;
    propose(c, ctl, recs, n, P_ADMIN, -1, 0, -1, NULL);
    return cf_run_until(c, topic_led, NULL, end - c->now);
}

bool cf_start(struct cf *c, int32_t partitions, int32_t rf, int32_t min_isr, bool unclean,
              int64_t max_ms)
{
    return cf_start_assigned(c, partitions, rf, NULL, min_isr, unclean, max_ms);
}

bool cf_set_topic_config(struct cf *c, const char *key, const char *value)
{
    if (c->controller < 0)
        return false;
    struct meta_record r;
    memset(&r, 0, sizeof r);
    r.type = META_REC_CONFIG;
    r.u.config.resource_type = 2;
    r.u.config.resource_name = TOPIC;
    r.u.config.key = key;
    r.u.config.value = value;
    propose(c, node(c, c->controller), &r, 1, P_ADMIN, -1, 0, -1, NULL);
    return true;
}

int cf_reassign(struct cf *c, int32_t part, const int32_t *target, int32_t n)
{
    char why[256];
    if (c->controller < 0)
        return ERR_NOT_CONTROLLER;
    struct cf_node *ctl = node(c, c->controller);
    if (!node_is_controller(c, ctl))
        return ERR_NOT_CONTROLLER;
    ctl_out_reset(&ctl->out);
    int rv =
        ctl_sm_reassign(ctl->ctl, ctl->img, TOPIC, part, target, n, &ctl->out, why, sizeof why);
    if (ctl->out.oom)
        abort();
    trace(c, "reassignment of p%d: %s%s%s", part, err_name(rv), why[0] ? ": " : "", why);
    if (rv == 0 && ctl->out.n > 0)
        propose(c, ctl, ctl->out.recs, ctl->out.n, P_ADMIN, -1, 0, -1, NULL);
    return rv;
}

static const struct meta_partition *truth_part(const struct cf *c, int32_t part)
{
    const struct meta_topic *t = topic_of(c->truth);
    return t && part >= 0 && part < t->n_partitions ? &t->partitions[part] : NULL;
}

int32_t cf_adding(const struct cf *c, int32_t part, int32_t *out)
{
    const struct meta_partition *mp = truth_part(c, part);
    if (mp == NULL)
        return 0;
    if (mp->n_adding > 0)
        memcpy(out, mp->adding, (size_t)mp->n_adding * sizeof *out);
    return mp->n_adding;
}

int32_t cf_removing(const struct cf *c, int32_t part, int32_t *out)
{
    const struct meta_partition *mp = truth_part(c, part);
    if (mp == NULL)
        return 0;
    if (mp->n_removing > 0)
        memcpy(out, mp->removing, (size_t)mp->n_removing * sizeof *out);
    return mp->n_removing;
}

int32_t cf_controller(const struct cf *c)
{
    return c->controller;
}

int32_t cf_leader(const struct cf *c, int32_t part)
{
    const struct meta_partition *mp = truth_part(c, part);
    return mp ? mp->leader : -1;
}

int32_t cf_leader_epoch(const struct cf *c, int32_t part)
{
    const struct meta_partition *mp = truth_part(c, part);
    return mp ? mp->leader_epoch : -1;
}

int8_t cf_leader_recovery_state(const struct cf *c, int32_t part)
{
    const struct meta_partition *mp = truth_part(c, part);
    return mp ? mp->leader_recovery_state : -1;
}

int32_t cf_isr(const struct cf *c, int32_t part, int32_t *out)
{
    const struct meta_partition *mp = truth_part(c, part);
    if (mp == NULL)
        return 0;
    for (int32_t i = 0; i < mp->n_isr; i++)
        out[i] = mp->isr[i];
    return mp->n_isr;
}

int32_t cf_replicas(const struct cf *c, int32_t part, int32_t *out)
{
    const struct meta_partition *mp = truth_part(c, part);
    if (mp == NULL)
        return 0;
    for (int32_t i = 0; i < mp->n_replicas; i++)
        out[i] = mp->replicas[i];
    return mp->n_replicas;
}

bool cf_in_isr(const struct cf *c, int32_t part, int32_t node_id)
{
    const struct meta_partition *mp = truth_part(c, part);
    return mp && has_id(mp->isr, mp->n_isr, node_id);
}

bool cf_fenced(const struct cf *c, int32_t node_id)
{
    const struct meta_broker *b = meta_image_broker_by_id(c->truth, node_id);
    return b == NULL || b->fenced;
}

static const struct cf_part *node_part(const struct cf *c, int32_t node_id, int32_t part)
{
    if (!is_node(c, node_id) || part < 0 || part >= CF_MAX_PARTS)
        return NULL;
    return &c->nodes[node_id].parts[part];
}

int cf_node_role(const struct cf *c, int32_t node_id, int32_t part)
{
    const struct cf_part *p = node_part(c, node_id, part);
    return p && p->sm ? (int)psm_role(p->sm) : PSM_NONE;
}

int32_t cf_node_leader_epoch(const struct cf *c, int32_t node_id, int32_t part)
{
    const struct cf_part *p = node_part(c, node_id, part);
    return p && p->sm ? psm_leader_epoch(p->sm) : -1;
}

int64_t cf_node_hw(const struct cf *c, int32_t node_id, int32_t part)
{
    const struct cf_part *p = node_part(c, node_id, part);
    return p && p->sm ? psm_high_watermark(p->sm) : -1;
}

bool cf_alter_pending(const struct cf *c, int32_t node_id, int32_t part)
{
    const struct cf_part *p = node_part(c, node_id, part);
    return p && p->sm && psm_alter_pending(p->sm);
}

const struct cf_entry *cf_log(const struct cf *c, int32_t node_id, int32_t part, int64_t *n)
{
    const struct cf_part *p = node_part(c, node_id, part);
    *n = p ? p->n_log : 0;
    return p ? p->log : NULL;
}

/* ---- faults ---------------------------------------------------------------------------- */

void cf_cut(struct cf *c, int32_t from, int32_t to)
{
    c->cut[ep(from)][ep(to)] = true;
}

void cf_cut2(struct cf *c, int32_t a, int32_t b)
{
    cf_cut(c, a, b);
    cf_cut(c, b, a);
}

void cf_isolate(struct cf *c, int32_t node_id, bool clients)
{
    for (int32_t id = 1; id <= c->o.n_nodes; id++)
        if (id != node_id)
            cf_cut2(c, node_id, id);
    if (clients)
        for (int32_t i = 0; i < CF_MAX_CLIENTS; i++)
            cf_cut2(c, node_id, client_id(i));
}

void cf_split(struct cf *c, const int32_t *a, int32_t n_a, const bool *client_side_a)
{
    for (int32_t x = 1; x <= c->o.n_nodes; x++) {
        bool xa = has_id(a, n_a, x);
        for (int32_t y = 1; y <= c->o.n_nodes; y++)
            if (xa != has_id(a, n_a, y))
                cf_cut(c, x, y);
        if (client_side_a)
            for (int32_t i = 0; i < CF_MAX_CLIENTS; i++)
                if (xa != client_side_a[i])
                    cf_cut2(c, x, client_id(i));
    }
}

void cf_heal(struct cf *c)
{
    memset(c->cut, 0, sizeof c->cut);
}

void cf_set_drop(struct cf *c, double p)
{
    c->o.drop = p;
}

void cf_kill(struct cf *c, int32_t node_id, bool lose_unflushed)
{
    struct cf_node *n = node(c, node_id);
    if (n->state == NODE_DOWN)
        return;
    trace(c, "node %d killed%s", node_id, lose_unflushed ? ", losing its unflushed tail" : "");
    /* A kill that keeps the page cache is a process crash on a machine that stays up: the
     * broker finds the same boot id and names its last epoch (lifecycle.c); one that loses
     * the tail is the machine's crash: a new boot, no clean-shutdown marker, -1. */
    n->last_epoch = n->broker_epoch;
    n->logs_intact = !lose_unflushed;
    node_down(c, n);
    for (int32_t i = 0; lose_unflushed && i < CF_MAX_PARTS; i++) {
        struct cf_part *p = &n->parts[i];
        for (int64_t o = p->flushed; o < p->n_log; o++) {
            GROW(p->ghost, p->n_ghost, p->cap_ghost);
            p->ghost[p->n_ghost++] = p->log[o];
        }
        log_truncate(p, p->flushed);
    }
}

void cf_lose_epoch_caches(struct cf *c, int32_t node_id)
{
    struct cf_node *n = node(c, node_id);
    if (n->state != NODE_DOWN)
        return;
    trace(c, "node %d loses its leader-epoch caches", node_id);
    for (int32_t i = 0; i < CF_MAX_PARTS; i++)
        n->parts[i].n_cache = 0;
}

void cf_restart(struct cf *c, int32_t node_id)
{
    struct cf_node *n = node(c, node_id);
    if (n->state == NODE_DOWN) {
        trace(c, "node %d restarts", node_id);
        node_start(c, n);
    }
}

void cf_pause(struct cf *c, int32_t node_id)
{
    struct cf_node *n = node(c, node_id);
    if (n->state == NODE_UP) {
        trace(c, "node %d paused", node_id);
        n->state = NODE_PAUSED;
    }
}

void cf_resume(struct cf *c, int32_t node_id)
{
    struct cf_node *n = node(c, node_id);
    if (n->state != NODE_PAUSED)
        return;
    trace(c, "node %d resumed (%d messages queued)", node_id, n->n_inbox);
    n->state = NODE_UP;
    /* What the kernel buffered while it was stopped, in order. */
    for (int32_t i = 0; i < n->n_inbox && n->state == NODE_UP; i++) {
        struct msg *m = n->inbox[i];
        n->inbox[i] = NULL;
        if (!node_handle(c, n, m))
            msg_free(m);
    }
    for (int32_t i = 0; i < n->n_inbox; i++)
        msg_free(n->inbox[i]);
    n->n_inbox = 0;
}

void cf_shutdown(struct cf *c, int32_t node_id)
{
    struct cf_node *n = node(c, node_id);
    if (n->state != NODE_UP)
        return;
    n->shutting_down = true;
    if (n->registered)
        send_heartbeat(c, n);
}

bool cf_up(const struct cf *c, int32_t node_id)
{
    return is_node(c, node_id) && c->nodes[node_id].state == NODE_UP;
}

bool cf_down(const struct cf *c, int32_t node_id)
{
    return is_node(c, node_id) && c->nodes[node_id].state == NODE_DOWN;
}

void cf_freeze_flush(struct cf *c, int32_t node_id, bool frozen)
{
    struct cf_node *n = node(c, node_id);
    n->flush_frozen = frozen;
    if (!frozen)
        n->next_flush = c->now;
}

/* ---- clients --------------------------------------------------------------------------- */

static int32_t client_new(struct cf *c, bool producer)
{
    for (int32_t i = 0; i < CF_MAX_CLIENTS; i++) {
        struct client *cl = &c->clients[i];
        if (cl->used)
            continue;
        cl->used = true;
        cl->producer = producer;
        cl->meta_stale = true;
        for (int32_t p = 0; p < CF_MAX_PARTS; p++) {
            cl->leaders[p] = -1;
            cl->epochs[p] = -1;
        }
        ev_push(c, c->now + rnd_range(c, 0, 9), EV_CLIENT_TICK, i, NULL);
        return i;
    }
    abort();
}

int32_t cf_producer(struct cf *c, int16_t acks, int64_t interval_ms, int64_t max_records)
{
    int32_t i = client_new(c, true);
    c->clients[i].acks = acks;
    c->clients[i].interval_ms = interval_ms > 0 ? interval_ms : 20;
    c->clients[i].max_records = max_records;
    return i;
}

void cf_producer_stop(struct cf *c, int32_t client)
{
    c->clients[client].stopped = true;
}

int32_t cf_consumer(struct cf *c)
{
    return client_new(c, false);
}

void cf_producer_stats(const struct cf *c, int32_t client, struct cf_producer_stats *out)
{
    *out = c->clients[client].st;
}

int64_t cf_consumed(const struct cf *c, int32_t client)
{
    return c->clients[client].n_seen;
}

int64_t cf_acks_by(const struct cf *c, int32_t node_id)
{
    return is_node(c, node_id) ? c->nodes[node_id].acks_sent : 0;
}

int64_t cf_appends_by(const struct cf *c, int32_t node_id, int16_t acks)
{
    return is_node(c, node_id) ? c->nodes[node_id].appends[acks == -1 ? 1 : 0] : 0;
}

const struct cf_truncation *cf_truncations(const struct cf *c, int32_t *n)
{
    *n = c->n_truncs;
    return c->truncs;
}

/* ---- settling and checking ------------------------------------------------------------- */

static bool settled(struct cf *c, void *arg)
{
    (void)arg;
    if (c->controller < 0)
        return false;
    for (int32_t part = 0; part < c->n_parts; part++) {
        const struct meta_partition *mp = truth_part(c, part);
        if (mp == NULL || mp->leader < 0 || !cf_up(c, mp->leader))
            return false;
        const struct cf_part *lp = &c->nodes[mp->leader].parts[part];
        if (lp->sm == NULL || psm_role(lp->sm) != PSM_LEADER ||
            psm_partition_epoch(lp->sm) != mp->partition_epoch ||
            psm_high_watermark(lp->sm) != lp->n_log)
            return false;
        for (int32_t k = 0; k < mp->n_replicas; k++) {
            int32_t r = mp->replicas[k];
            if (!cf_up(c, r))
                continue;
            const struct cf_part *q = &c->nodes[r].parts[part];
            if (!has_id(mp->isr, mp->n_isr, r) || q->sm == NULL ||
                psm_leader_epoch(q->sm) != mp->leader_epoch || q->n_log != lp->n_log ||
                psm_high_watermark(q->sm) != lp->n_log)
                return false;
        }
    }
    for (int32_t i = 0; i < CF_MAX_CLIENTS; i++) {
        const struct client *cl = &c->clients[i];
        if (!cl->used)
            continue;
        if (cl->producer && cl->st.pending > 0)
            return false;
        if (!cl->producer)
            for (int32_t part = 0; part < c->n_parts; part++)
                if (cl->next[part] != c->nodes[cf_leader(c, part)].parts[part].n_log)
                    return false;
    }
    return true;
}

bool cf_settle(struct cf *c, int64_t max_ms)
{
    cf_heal(c);
    for (int32_t id = 1; id <= c->o.n_nodes; id++)
        cf_resume(c, id);
    for (int32_t i = 0; i < CF_MAX_CLIENTS; i++)
        c->clients[i].stopped = true;
    if (!cf_run_until(c, settled, NULL, max_ms))
        return false;
    cf_run(c, 1000);
    return settled(c, NULL);
}

static void first(struct cf_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void first(struct cf_report *r, const char *fmt, ...)
{
    if (r->first[0] != '\0')
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->first, sizeof r->first, fmt, ap);
    va_end(ap);
}

/* Whether the final log of `part` holds `rid` at `offset`. */
static bool final_holds(const struct cf *c, int32_t part, int64_t offset, uint64_t rid)
{
    int32_t l = cf_leader(c, part);
    if (l < 1)
        return false;
    const struct cf_part *p = &c->nodes[l].parts[part];
    return offset >= 0 && offset < p->n_log && p->log[offset].rid == rid;
}

void cf_check(struct cf *c, struct cf_report *r)
{
    *r = c->live;
    for (int32_t i = 0; i < CF_MAX_CLIENTS; i++) {
        const struct client *cl = &c->clients[i];
        if (!cl->used)
            continue;
        for (int64_t k = 0; cl->producer && k < cl->n_recs; k++) {
            const struct prec *pr = &cl->recs[k];
            if (pr->state != R_ACKED)
                continue;
            if (cl->acks != -1) {
                r->acked_one++;
                continue;
            }
            r->acked_all++;
            if (!final_holds(c, pr->part, pr->offset, pr->rid)) {
                r->lost_acked++;
                first(r, "(1) acked %llx lost: p%d offset %lld (acked by %d in epoch %d)",
                      (unsigned long long)pr->rid, pr->part, (long long)pr->offset, pr->broker,
                      pr->epoch);
            }
        }
        for (int64_t k = 0; !cl->producer && k < cl->n_seen; k++) {
            const struct seen *s = &cl->seen[k];
            r->consumed++;
            if (!final_holds(c, s->part, s->offset, s->rid)) {
                r->consumer_diverged++;
                first(r, "(3) consumed %llx at p%d offset %lld, not in the final log",
                      (unsigned long long)s->rid, s->part, (long long)s->offset);
            }
        }
    }
    for (int64_t k = 0; k < c->n_acks; k++) {
        const struct ack *a = &c->acks[k];
        if (!final_holds(c, a->part, a->offset, a->rid)) {
            r->false_acks++;
            first(r, "(2) broker %d acked %llx at p%d offset %lld in epoch %d (t=%lld), not kept",
                  a->broker, (unsigned long long)a->rid, a->part, (long long)a->offset, a->epoch,
                  (long long)a->at);
        }
    }
    for (int32_t part = 0; part < c->n_parts; part++) {
        const struct meta_partition *mp = truth_part(c, part);
        if (mp == NULL || mp->leader < 1)
            continue;
        const struct cf_part *lp = &c->nodes[mp->leader].parts[part];
        for (int32_t k = 0; k < mp->n_isr; k++) {
            int32_t m = mp->isr[k];
            if (m == mp->leader || !cf_up(c, m))
                continue;
            const struct cf_part *q = &c->nodes[m].parts[part];
            /* Field by field: struct cf_entry has padding, which memcmp would compare too. */
            int64_t o = 0;
            while (o < q->n_log && o < lp->n_log && entry_eq(&q->log[o], &lp->log[o]))
                o++;
            bool same = q->n_log == lp->n_log && o == q->n_log;
            if (!same) {
                r->isr_diverged++;
                first(r,
                      "(4) p%d: ISR member %d's log (%lld) differs from leader %d's (%lld) at "
                      "offset %lld: epoch %d %llx, leader's epoch %d %llx",
                      part, m, (long long)q->n_log, mp->leader, (long long)lp->n_log, (long long)o,
                      o < q->n_log ? q->log[o].epoch : -1,
                      o < q->n_log ? (unsigned long long)q->log[o].rid : 0ull,
                      o < lp->n_log ? lp->log[o].epoch : -1,
                      o < lp->n_log ? (unsigned long long)lp->log[o].rid : 0ull);
            }
        }
    }
}

void cf_report_print(const struct cf *c, const struct cf_report *r, const char *label)
{
    printf("    %s: t=%llds events=%llu acked_all=%lld acked_one=%lld consumed=%lld"
           " lost=%lld false=%lld cons=%lld isr=%lld 2lead=%lld 2rec=%lld hwback=%lld"
           " unrepl=%lld early=%lld anom=%lld trunc<hw=%d%s%s\n",
           label, (long long)(c->now / 1000), (unsigned long long)c->events,
           (long long)r->acked_all, (long long)r->acked_one, (long long)r->consumed,
           (long long)r->lost_acked, (long long)r->false_acks, (long long)r->consumer_diverged,
           (long long)r->isr_diverged, (long long)r->two_leaders, (long long)r->two_records,
           (long long)r->hw_backwards, (long long)r->unreplicated_commit,
           (long long)r->early_removal, (long long)r->anomalies, c->n_truncs,
           r->first[0] ? " first: " : "", r->first);
}
