/* SPDX-License-Identifier: Apache-2.0 */
/* The transaction coordinator's core: creation and stop, the shards (one per
 * __transaction_state partition led here, through replica's coord_log), the entries of a
 * shard, state writes answered once durable, replay, and the periodic checks (timed-out
 * transactions aborted, idle ids expired). */
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/err.h"
#include "base/fault.h"
#include "base/jhash.h"
#include "base/props.h"
#include "base/purgatory.h"
#include "base/slog.h"
#include "meta/meta.h"
#include "net/net.h"
#include "txn_int.h"

/* ---- sending ------------------------------------------------------------------------------ */

int txn_send(struct txn *t, int32_t node_id, int16_t api_key, int16_t version, const void *req,
             net_client_cb cb, void *cb_arg)
{
    int rc = t->send ? t->send(t->send_arg, node_id, api_key, version, req, cb, cb_arg)
                     : net_client_send(t->client, node_id, api_key, version, req, cb, cb_arg);
    if (rc == 0)
        t->outstanding++;
    return rc;
}

void txn_outstanding_done(struct txn *t)
{
    t->outstanding--;
    if (t->freed && t->outstanding == 0 && !t->claiming)
        free(t);
}

/* ---- entries ------------------------------------------------------------------------------ */

static uint64_t hash_str(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ULL;
    }
    return h;
}

struct txn_meta *txn_entry_find(struct tshard *sh, const char *tid)
{
    uint64_t h;
    if (sh->n_buckets == 0)
        return NULL;
    h = hash_str(tid);
    for (struct tentry *e = sh->buckets[h & (sh->n_buckets - 1)]; e; e = e->next)
        if (e->hash == h && strcmp(e->m->tid, tid) == 0)
            return e->m;
    return NULL;
}

static int grow(struct tshard *sh)
{
    size_t nb = sh->n_buckets ? sh->n_buckets * 2 : 16;
    struct tentry **b = calloc(nb, sizeof *b);
    if (b == NULL)
        return ERR_NOMEM;
    for (size_t i = 0; i < sh->n_buckets; i++) {
        struct tentry *e = sh->buckets[i], *next;
        for (; e; e = next) {
            next = e->next;
            e->next = b[e->hash & (nb - 1)];
            b[e->hash & (nb - 1)] = e;
        }
    }
    free(sh->buckets);
    sh->buckets = b;
    sh->n_buckets = nb;
    return 0;
}

int txn_entry_add(struct tshard *sh, struct txn_meta *m)
{
    struct tentry *e = calloc(1, sizeof *e);
    if (e == NULL || (sh->n + 1 > sh->n_buckets && grow(sh) != 0 && sh->n_buckets == 0)) {
        free(e);
        txn_meta_free(m);
        return ERR_NOMEM;
    }
    e->m = m;
    e->hash = hash_str(m->tid);
    e->next = sh->buckets[e->hash & (sh->n_buckets - 1)];
    sh->buckets[e->hash & (sh->n_buckets - 1)] = e;
    sh->n++;
    return 0;
}

void txn_entry_remove(struct tshard *sh, const char *tid)
{
    uint64_t h;
    if (sh->n_buckets == 0)
        return;
    h = hash_str(tid);
    for (struct tentry **pp = &sh->buckets[h & (sh->n_buckets - 1)]; *pp; pp = &(*pp)->next) {
        struct tentry *e = *pp;
        if (e->hash == h && strcmp(e->m->tid, tid) == 0) {
            *pp = e->next;
            sh->n--;
            txn_meta_free(e->m);
            free(e);
            return;
        }
    }
}

void txn_entry_each(struct tshard *sh, void (*fn)(void *arg, struct txn_meta *m), void *arg)
{
    for (size_t i = 0; i < sh->n_buckets; i++) {
        struct tentry *e = sh->buckets[i], *next;
        for (; e; e = next) {
            next = e->next;
            fn(arg, e->m);
        }
    }
}

/* ---- held requests ------------------------------------------------------------------------ */

struct txn_hold {
    struct purgatory_op op;
    struct txn_hold *next; /* in t->holds while waiting */
    struct txn *t;
    int32_t partition;
    int16_t why; /* set before a hand completion: 0 = serve again, else the error */
    txn_hold_cb cb;
    void *arg;
    char tid[];
};

static void hold_unlink(struct txn_hold *h)
{
    for (struct txn_hold **pp = &h->t->holds; *pp; pp = &(*pp)->next) {
        if (*pp == h) {
            *pp = h->next;
            return;
        }
    }
}

static void on_hold_done(struct purgatory_op *op, int result)
{
    struct txn_hold *h = op->data;
    txn_hold_cb cb = h->cb;
    void *arg = h->arg;
    int16_t err = result == PURGATORY_TIMED_OUT ? ERR_CONCURRENT_TRANSACTIONS
                  : result == PURGATORY_STOPPED ? ERR_COORDINATOR_NOT_AVAILABLE
                                                : h->why;

    hold_unlink(h);
    free(h);
    cb(arg, err);
}

void txn_hold(struct tshard *sh, const char *tid, int64_t wait_ms, txn_hold_cb cb, void *arg)
{
    struct txn *t = sh->t;
    size_t len = strlen(tid);
    struct txn_hold *h = t->pg ? malloc(sizeof *h + len + 1) : NULL;

    if (h == NULL) {
        cb(arg, ERR_CONCURRENT_TRANSACTIONS);
        return;
    }
    h->t = t;
    h->partition = sh->partition;
    h->why = 0;
    h->cb = cb;
    h->arg = arg;
    memcpy(h->tid, tid, len + 1);
    h->next = t->holds;
    t->holds = h;
    purgatory_op_init(t->pg, &h->op, NULL, on_hold_done, h);
    purgatory_op_start(&h->op, wait_ms > 0 ? wait_ms : 0);
}

/* Completes the held requests that match (every one of the partition when tid is NULL) with
 * `why`; those held from within the callbacks wait on. */
static void holds_complete(struct txn *t, int32_t partition, const char *tid, int16_t why)
{
    struct txn_hold *mine = NULL, **pp = &t->holds;

    while (*pp) {
        struct txn_hold *h = *pp;
        if (h->partition == partition && (tid == NULL || strcmp(h->tid, tid) == 0)) {
            *pp = h->next;
            h->next = mine;
            mine = h;
        } else {
            pp = &h->next;
        }
    }
    while (mine) {
        struct txn_hold *h = mine;
        mine = h->next;
        h->next = NULL;
        h->why = why;
        purgatory_complete(&h->op); /* frees h */
    }
}

void txn_holds_wake(struct txn *t, int32_t partition, const char *tid)
{
    if (t->holds)
        holds_complete(t, partition, tid, 0);
}

void txn_holds_drop(struct txn *t, int32_t partition)
{
    if (t->holds)
        holds_complete(t, partition, NULL, ERR_NOT_COORDINATOR);
}

/* ---- shards ------------------------------------------------------------------------------- */

int32_t txn_n_partitions(struct txn *t)
{
    const struct meta_topic *tp = meta_topic_by_name(t->meta, TXN_TOPIC);
    return tp && tp->n_partitions > 0 ? tp->n_partitions : t->n_partitions_cfg;
}

int16_t txn_shard_for(struct txn *t, const char *tid, struct tshard **out)
{
    const struct meta_topic *tp;
    int32_t p;
    struct tshard *sh;

    if (t->stopping || t->log == NULL)
        return ERR_COORDINATOR_NOT_AVAILABLE;
    tp = meta_topic_by_name(t->meta, TXN_TOPIC);
    if (tp == NULL)
        return ERR_COORDINATOR_NOT_AVAILABLE;
    p = java_partition_for(tid, tp->n_partitions);
    sh = p < t->n_shards ? t->shards[p] : NULL;
    if (sh == NULL)
        return tp->partitions[p].leader < 0 ? ERR_COORDINATOR_NOT_AVAILABLE : ERR_NOT_COORDINATOR;
    if (sh->loading)
        return ERR_COORDINATOR_LOAD_IN_PROGRESS;
    *out = sh;
    return 0;
}

struct tshard *txn_shard_again(struct txn *t, int32_t partition, int32_t epoch)
{
    struct tshard *sh =
        partition >= 0 && partition < t->n_shards && !t->stopping ? t->shards[partition] : NULL;
    return sh && sh->epoch == epoch ? sh : NULL;
}

static int shards_reserve(struct txn *t, int32_t partition)
{
    if (partition < t->n_shards)
        return 0;
    int32_t n = partition + 1 > t->n_partitions_cfg ? partition + 1 : t->n_partitions_cfg;
    struct tshard **s = realloc(t->shards, (size_t)n * sizeof *s);
    if (s == NULL)
        return ERR_NOMEM;
    for (int32_t i = t->n_shards; i < n; i++)
        s[i] = NULL;
    t->shards = s;
    t->n_shards = n;
    return 0;
}

static void *shard_new(void *arg, int32_t partition, int32_t epoch)
{
    struct txn *t = arg;
    struct tshard *sh;

    if (shards_reserve(t, partition) != 0 || (sh = calloc(1, sizeof *sh)) == NULL)
        return NULL;
    sh->t = t;
    sh->partition = partition;
    sh->epoch = epoch;
    sh->loading = true;
    t->shards[partition] = sh;
    return sh;
}

/* Replay: the last value of each id wins; a tombstone (or a Dead value) removes it. */
static void shard_replay(void *shard, const struct coord_log_record *r)
{
    struct tshard *sh = shard;
    struct arena *ar;
    const char *tid;
    struct txn_transit tr;
    int rc;

    if (r->control || r->key == NULL)
        return;
    ar = arena_new(1 << 20);
    if (ar == NULL)
        goto nomem;
    rc = txn_key_decode(r->key, r->key_len, ar, &tid);
    if (rc == ERR_NOTFOUND)
        goto out;
    if (rc != 0) {
        slog_warn_limited(&sh->t->warn, 10000, "txn", "%s-%d: skipping a key that does not decode",
                          TXN_TOPIC, sh->partition);
        goto out;
    }
    if (r->value == NULL) {
        txn_entry_remove(sh, tid);
        goto out;
    }
    rc = txn_value_decode(r->value, r->value_len, ar, &tr);
    if (rc != 0) {
        slog_warn_limited(&sh->t->warn, 10000, "txn",
                          "%s-%d: skipping the state of %s that does not decode (%s)", TXN_TOPIC,
                          sh->partition, tid, err_name(rc));
        goto out;
    }
    if (tr.state == TXN_DEAD) {
        txn_transit_clear(&tr);
        txn_entry_remove(sh, tid);
        goto out;
    }
    struct txn_meta *m = txn_entry_find(sh, tid);
    if (m == NULL) {
        m = txn_meta_new(tid, tr.producer_id, tr.timeout_ms, tr.update_ms);
        if (m == NULL || txn_entry_add(sh, m) != 0) {
            txn_transit_clear(&tr);
            goto nomem;
        }
    }
    txn_sm_apply(m, &tr);
    goto out;

nomem:
    slog_error("txn", "out of memory replaying %s-%d", TXN_TOPIC, sh->partition);
out:
    arena_free(ar);
}

static void resend_prepared(void *arg, struct txn_meta *m)
{
    struct tshard *sh = arg;
    if (m->cur.state == TXN_PREPARE_COMMIT || m->cur.state == TXN_PREPARE_ABORT) {
        slog_info("txn", "%s: completing its %s transaction (producer %lld, epoch %d) after load",
                  m->tid, m->cur.state == TXN_PREPARE_COMMIT ? "committed" : "aborted",
                  (long long)m->cur.producer_id, m->cur.producer_epoch);
        txn_markers_start(sh, m);
    }
}

static void shard_loaded(void *shard, int64_t records, int64_t ms)
{
    struct tshard *sh = shard;
    sh->loading = false;
    slog_line(records > 0 ? SLOG_INFO : SLOG_DEBUG, "txn",
              "loaded %s-%d (coordinator epoch %d): %zu transactional ids from %lld records in "
              "%lld ms",
              TXN_TOPIC, sh->partition, sh->epoch, sh->n, (long long)records, (long long)ms);
    /* Prepare* is the point of no return: what was decided is carried out. */
    txn_entry_each(sh, resend_prepared, sh);
}

static void shard_free(void *shard, int16_t err)
{
    struct tshard *sh = shard;
    struct txn *t = sh->t;

    (void)err;
    t->shards[sh->partition] = NULL;
    txn_markers_drop(t, sh->partition);
    txn_holds_drop(t, sh->partition);
    for (size_t i = 0; i < sh->n_buckets; i++) {
        struct tentry *e = sh->buckets[i], *next;
        for (; e; e = next) {
            next = e->next;
            txn_meta_free(e->m);
            free(e);
        }
    }
    free(sh->buckets);
    if (!t->stopping)
        slog_info("txn", "unloaded %s-%d (coordinator epoch %d)", TXN_TOPIC, sh->partition,
                  sh->epoch);
    free(sh);
}

static const struct coord_log_ops shard_ops = {
    .shard_new = shard_new,
    .replay = shard_replay,
    .loaded = shard_loaded,
    .shard_free = shard_free,
};

static void count_state(void *arg, struct txn_meta *m)
{
    int64_t *counts = arg;
    if ((int)m->cur.state >= 0 && m->cur.state < TXN_N_STATES)
        counts[m->cur.state]++;
}

size_t txn_waiting(const struct txn *t)
{
    return t ? coord_log_waiting(t->log) : 0;
}

void txn_count_states(const struct txn *t, int64_t *counts, size_t n)
{
    memset(counts, 0, n * sizeof *counts);
    if (t == NULL || n < TXN_N_STATES)
        return;
    for (int32_t i = 0; i < t->n_shards; i++)
        if (t->shards[i] && !t->shards[i]->loading)
            txn_entry_each(t->shards[i], count_state, counts);
}

struct for_each_arg {
    void (*fn)(void *arg, const struct txn_meta *m);
    void *arg;
};

static void for_each_one(void *arg, struct txn_meta *m)
{
    struct for_each_arg *a = arg;
    a->fn(a->arg, m);
}

void txn_for_each(const struct txn *t, void (*fn)(void *arg, const struct txn_meta *m), void *arg)
{
    struct for_each_arg a = {fn, arg};
    if (t == NULL)
        return;
    for (int32_t i = 0; i < t->n_shards; i++)
        if (t->shards[i] && !t->shards[i]->loading)
            txn_entry_each(t->shards[i], for_each_one, &a);
}

void txn_shards(const struct txn *t, int32_t *led, int32_t *loading)
{
    *led = *loading = 0;
    for (int32_t i = 0; i < t->n_shards; i++) {
        if (t->shards[i]) {
            (*led)++;
            *loading += t->shards[i]->loading;
        }
    }
}

/* ---- writes ------------------------------------------------------------------------------- */

struct twrite {
    struct coord_log_append la;
    struct txn *t;
    int32_t partition, epoch;
    char *tid;
    struct txn_transit tr;
    txn_write_cb done;
    void *arg;
};

static int16_t write_error(int16_t err)
{
    switch (err) {
    case 0:
        return 0;
    case ERR_UNKNOWN_TOPIC_OR_PARTITION:
    case ERR_NOT_ENOUGH_REPLICAS:
    case ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND:
    case ERR_REQUEST_TIMED_OUT:
    case ERR_COORDINATOR_NOT_AVAILABLE:
        return ERR_COORDINATOR_NOT_AVAILABLE;
    case ERR_NOT_LEADER_OR_FOLLOWER:
    case ERR_KAFKA_STORAGE_ERROR:
    case ERR_IO:
    case ERR_NOT_COORDINATOR:
        return ERR_NOT_COORDINATOR;
    default:
        return ERR_UNKNOWN_SERVER_ERROR;
    }
}

static void on_written(struct coord_log_append *la, int16_t err)
{
    struct twrite *w = la->arg;
    struct txn *t = w->t;
    struct tshard *sh = la->unloaded ? NULL : txn_shard_again(t, w->partition, w->epoch);
    struct txn_meta *m = sh ? txn_entry_find(sh, w->tid) : NULL;

    if (m == NULL) {
        txn_transit_clear(&w->tr);
        w->done(w->arg, err ? write_error(err) : ERR_NOT_COORDINATOR, NULL);
        goto out;
    }
    if (err != 0) {
        txn_sm_cancel(m);
        txn_transit_clear(&w->tr);
        slog_debug("txn", "writing the %s state of %s failed: %s", txn_state_name(w->tr.state),
                   w->tid, err_name(err));
        w->done(w->arg, write_error(err), m);
        goto out;
    }
    if (w->tr.state == TXN_DEAD) {
        txn_transit_clear(&w->tr);
        txn_entry_remove(sh, w->tid);
        w->done(w->arg, 0, NULL);
        goto out;
    }
    txn_sm_apply(m, &w->tr);
    w->done(w->arg, 0, m);
out:
    /* Applied or not, the entry is no longer pending this write: what waited on it goes on. */
    txn_holds_wake(t, w->partition, w->tid);
    free(w->tid);
    free(w);
}

void txn_write(struct tshard *sh, struct txn_meta *m, struct txn_transit *tr, txn_write_cb done,
               void *arg)
{
    struct twrite *w = calloc(1, sizeof *w);
    struct coord_log_kv kv = {0};
    uint8_t *key = NULL, *value = NULL;
    int32_t key_len = 0, value_len = 0;
    int rc = ERR_NOMEM;

    if (w == NULL || (w->tid = strdup(m->tid)) == NULL)
        goto fail;
    rc = txn_key_encode(m->tid, &key, &key_len);
    if (rc == 0 && tr->state != TXN_DEAD)
        rc = txn_value_encode(tr, &value, &value_len);
    if (rc != 0)
        goto fail;
    w->t = sh->t;
    w->partition = sh->partition;
    w->epoch = sh->epoch;
    w->tr = *tr;
    memset(tr, 0, sizeof *tr);
    w->done = done;
    w->arg = arg;
    kv = (struct coord_log_kv){key, key_len, value, value_len};
    txn_sm_begin(m, &w->tr);
    coord_log_append(sh->t->log, sh->partition, &kv, 1, -1, -1, &w->la, on_written, w, NULL);
    free(key);
    free(value);
    return;

fail:
    free(key);
    free(value);
    if (w)
        free(w->tid);
    free(w);
    txn_transit_clear(tr);
    slog_error("txn", "out of memory writing the state of %s", m->tid);
    done(arg, ERR_COORDINATOR_NOT_AVAILABLE, m);
}

int16_t txn_fenced_for(int16_t err, int16_t version, int16_t fenced_from)
{
    return err == ERR_PRODUCER_FENCED && version < fenced_from ? ERR_INVALID_PRODUCER_EPOCH : err;
}

int16_t txn_answer_code(struct net_request *req, int16_t err, int16_t fenced_from)
{
    return (int16_t)err_wire(txn_fenced_for(err, req->hdr.RequestApiVersion, fenced_from));
}

void *txn_response_new(struct net_request *req, size_t size)
{
    void *rs = arena_alloc(req->arena, size);
    if (rs == NULL) {
        net_close_connection(req);
        return NULL;
    }
    memset(rs, 0, size);
    return rs;
}

void txn_after_prepare(struct tshard *sh, struct txn_meta *m)
{
    fault_point("txn:after_prepare");
    txn_markers_start(sh, m);
}

/* ---- periodic checks ---------------------------------------------------------------------- */

struct sweep {
    struct tshard *sh;
    int64_t now;
    int32_t n;
};

struct abort_call {
    struct txn *t;
    int32_t partition, epoch;
    char tid[];
};

static void on_timeout_prepared(void *arg, int16_t err, struct txn_meta *m)
{
    struct abort_call *c = arg;
    struct tshard *sh = txn_shard_again(c->t, c->partition, c->epoch);
    if (err == 0 && m && sh)
        txn_after_prepare(sh, m);
    else if (err != 0)
        slog_warn("txn", "aborting the timed-out transaction of %s failed: %s", c->tid,
                  err_name(err));
    free(c);
}

static void abort_if_timed_out(void *arg, struct txn_meta *m)
{
    struct sweep *s = arg;
    struct txn_transit tr;
    struct abort_call *c;

    if (!txn_sm_timed_out(m, s->now) || txn_sm_abort_timed_out(m, s->now, &tr) != 0)
        return;
    c = malloc(sizeof *c + strlen(m->tid) + 1);
    if (c == NULL) {
        txn_transit_clear(&tr);
        return;
    }
    c->t = s->sh->t;
    c->partition = s->sh->partition;
    c->epoch = s->sh->epoch;
    strcpy(c->tid, m->tid);
    slog_info("txn",
              "aborting the transaction of %s (producer %lld, epoch %d): open for %lld ms, past "
              "its timeout of %d ms",
              m->tid, (long long)m->cur.producer_id, m->cur.producer_epoch,
              (long long)(s->now - m->cur.start_ms), m->cur.timeout_ms);
    s->n++;
    metrics_add(c->t->m_timed_out, 1);
    txn_write(s->sh, m, &tr, on_timeout_prepared, c);
}

void txn_check_timeouts(struct txn *t)
{
    int64_t now = tclock_now_ms(t->clock);
    for (int32_t i = 0; i < t->n_shards; i++) {
        struct tshard *sh = t->shards[i];
        if (sh == NULL || sh->loading)
            continue;
        struct sweep s = {.sh = sh, .now = now};
        txn_entry_each(sh, abort_if_timed_out, &s);
    }
}

static void on_expired_written(void *arg, int16_t err, struct txn_meta *m)
{
    char *tid = arg;
    (void)m;
    if (err != 0)
        slog_warn("txn", "removing the expired transactional id %s failed: %s", tid, err_name(err));
    free(tid);
}

static void expire_if_idle(void *arg, struct txn_meta *m)
{
    struct sweep *s = arg;
    struct txn_transit tr;
    char *tid;

    if (!txn_sm_expired(m, s->now, s->sh->t->expiration_ms) || txn_sm_dead(m, s->now, &tr) != 0)
        return;
    if ((tid = strdup(m->tid)) == NULL)
        return;
    s->n++;
    txn_write(s->sh, m, &tr, on_expired_written, tid);
}

void txn_check_expired(struct txn *t)
{
    int64_t now = tclock_now_ms(t->clock);
    int32_t total = 0;
    for (int32_t i = 0; i < t->n_shards; i++) {
        struct tshard *sh = t->shards[i];
        if (sh == NULL || sh->loading)
            continue;
        struct sweep s = {.sh = sh, .now = now};
        txn_entry_each(sh, expire_if_idle, &s);
        total += s.n;
    }
    if (total > 0)
        slog_info("txn", "removing %d expired transactional ids", total);
}

static void on_abort_timer(struct tclock_timer *tm)
{
    txn_check_timeouts(tm->data);
}

static void on_expire_timer(struct tclock_timer *tm)
{
    txn_check_expired(tm->data);
}

/* ---- lifecycle ---------------------------------------------------------------------------- */

static int64_t cfg(const struct props *p, const char *key, int64_t def)
{
    int64_t v = p ? props_get_int(p, key, def, NULL) : def;
    return v < 1 ? def : v;
}

struct txn *txn_new(const struct txn_options *o)
{
    struct txn *t = calloc(1, sizeof *t);

    if (t == NULL)
        return NULL;
    t->loop = o->loop;
    t->clock = o->clock;
    t->client = o->client;
    t->send = o->send;
    t->send_arg = o->send_arg;
    t->replicas = o->replicas;
    t->meta = o->meta;
    /* Kafka's TransactionCoordinator has no such series; docs/metrics.md. */
    static const double marker_buckets[] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                            0.25,  0.5,    1,     2.5,  5,     10,   30};
    t->m_timed_out = metrics_series0(metrics_family_new(
        o->metrics, METRICS_COUNTER, "tally_txn_timed_out_aborts_total",
        "Transactions this coordinator aborted because they passed their timeout.", 0, NULL, 0,
        NULL));
    t->m_marker_seconds = metrics_series0(metrics_family_new(
        o->metrics, METRICS_HISTOGRAM, "tally_txn_marker_send_seconds",
        "Time from a transaction's Prepare to the last of its COMMIT or ABORT markers written "
        "by its partitions' leaders.",
        0, NULL, sizeof marker_buckets / sizeof marker_buckets[0], marker_buckets));
    t->config = o->config;
    t->node_id = o->node_id;
    t->n_partitions_cfg = (int32_t)cfg(o->config, "transaction.state.log.num.partitions", 50);
    t->max_timeout_ms = (int32_t)cfg(o->config, "transaction.max.timeout.ms", 900000);
    t->expiration_ms = cfg(o->config, "transactional.id.expiration.ms", 604800000);
    t->abort_interval_ms =
        cfg(o->config, "transaction.abort.timed.out.transaction.cleanup.interval.ms", 10000);
    t->expire_interval_ms =
        cfg(o->config, "transaction.remove.expired.transaction.cleanup.interval.ms", 3600000);
    if (t->replicas == NULL)
        return t; /* producer ids only */
    if (shards_reserve(t, t->n_partitions_cfg - 1) != 0)
        goto err;
    txn_markers_init(t);
    if ((t->pg = purgatory_new(t->clock)) == NULL)
        goto err;
    struct coord_log_options lo = {
        .loop = t->loop,
        .clock = t->clock,
        .replicas = t->replicas,
        .meta = t->meta,
        .topic = TXN_TOPIC,
        .module = "txn",
        .append_timeout_ms = 5000,
        .ops = &shard_ops,
        .arg = t,
    };
    if (coord_log_new(&lo, &t->log) != 0)
        goto err;
    tclock_timer_init(t->clock, &t->abort_timer, on_abort_timer, t);
    tclock_timer_init(t->clock, &t->expire_timer, on_expire_timer, t);
    t->timers_on = true;
    if (tclock_timer_start(&t->abort_timer, t->abort_interval_ms, t->abort_interval_ms) != 0 ||
        tclock_timer_start(&t->expire_timer, t->expire_interval_ms, t->expire_interval_ms) != 0)
        slog_error("txn", "out of memory: transaction timeouts are not checked");
    return t;

err:
    tclock_timer_close(&t->marker_timer);
    if (t->pg)
        purgatory_free(t->pg);
    free(t->shards);
    free(t);
    return NULL;
}

static void finish_stop(struct txn *t)
{
    void (*cb)(void *) = t->stop_cb;
    void *arg = t->stop_arg;
    free(t->shards);
    t->shards = NULL;
    t->n_shards = 0;
    if (t->pg) {
        purgatory_complete_all(t->pg); /* none should be left: stop answered them */
        purgatory_free(t->pg);
        t->pg = NULL;
    }
    if (t->outstanding == 0 && !t->claiming)
        free(t);
    else
        t->freed = true; /* the last callback of the client frees it */
    if (cb)
        cb(arg);
}

static void on_log_stopped(void *arg)
{
    finish_stop(arg);
}

void txn_stop(struct txn *t, void (*cb)(void *arg), void *arg)
{
    if (t == NULL) {
        if (cb)
            cb(arg);
        return;
    }
    t->stopping = true;
    t->stop_cb = cb;
    t->stop_arg = arg;
    txn_pid_fail_all(t, ERR_COORDINATOR_NOT_AVAILABLE);
    if (t->pg)
        purgatory_complete_all(t->pg); /* held requests: COORDINATOR_NOT_AVAILABLE */
    if (t->timers_on) {
        tclock_timer_close(&t->abort_timer);
        tclock_timer_close(&t->expire_timer);
    }
    if (t->log) {
        txn_markers_free_all(t);
        coord_log_stop(t->log, on_log_stopped, t);
        return;
    }
    finish_stop(t);
}
