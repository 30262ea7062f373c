/* SPDX-License-Identifier: Apache-2.0 */
/* Self-healing of hanging transactions, the broker's half (replica/ has the partition's:
 * partition_idle_txns, partition_abort_txn). A transaction open on a partition led here whose
 * producer has not written for longer than transaction.max.timeout.ms plus a margin is
 * either hanging (its coordinator lost it: KIP-664's failure) or still being decided — a
 * coordinator in PrepareCommit that is slow, failing over, or retrying its COMMIT markers to
 * a leader it cannot reach. Aborting the second kind here would tear the transaction (COMMIT
 * on the other partitions, ABORT here), and only the coordinators can tell the two apart,
 * while the partition knows only the producer id. So every `hanging_check_ms`:
 *
 *   1. the candidates: idle ongoing transactions on the partitions led here, by the
 *      monotonic clock (a wall-clock step makes none);
 *   2. the question: ListTransactions v0 with the candidates' producer ids
 *      (ProducerIdFilters), sent through the outbound client to every registered, unfenced
 *      broker — each answers for the coordinator shards it leads;
 *   3. the verdict: a candidate is orphaned when every broker answered without error (a lost
 *      connection, a time-out, NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS from any
 *      broker blocks the round), every __transaction_state partition was led by one of the
 *      asked brokers with the same leader and leader epoch from the round's start to its end,
 *      and no answer has the producer id in a state other than Empty, CompleteCommit or
 *      CompleteAbort (Ongoing, PrepareCommit, PrepareAbort — or a state name this broker does
 *      not know — keep it);
 *   4. the abort: a candidate found orphaned by two consecutive rounds, with the same shard
 *      leaders in both, gets its ABORT marker here (partition_abort_txn re-checks that the
 *      producer has not written since), with one WARN line.
 *
 * The second round guards against the one thing an answer cannot show: a shard whose new
 * leader, by this broker's image, has not loaded it yet because its own image lags. A round
 * still out when the timer fires again is not doubled; its answers come within the client's
 * request timeout. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/slog.h"
#include "base/tclock.h"
#include "broker_int.h"
#include "meta/meta.h"
#include "net/net.h"
#include "proto/proto.h"
#include "replica/replica.h"

#define TXN_STATE_TOPIC "__transaction_state"
#define GROUP_TOPIC "__consumer_offsets"
/* Candidates asked about per round; more wait for later rounds. */
#define HANG_MAX_CANDIDATES 4096

/* One idle ongoing transaction on a partition led here. */
struct hang_cand {
    char *topic; /* malloc()ed */
    int32_t index, leader_epoch;
    int64_t producer_id, first_offset;
};

/* The leader and leader epoch of every __transaction_state partition, as this broker's image
 * has them: whose answers cover which coordinator shards. */
struct hang_shards {
    int32_t n;
    int32_t *leader, *leader_epoch;
};

struct hang_round;

/* One ListTransactions out. */
struct hang_ask {
    struct hang_round *r;
    int32_t node;
};

struct hang_round {
    struct broker_hanging *h; /* NULL once the broker stopped: the last answer frees the round */
    unsigned waiting;         /* answers not in yet */
    int blocked;              /* the first reason not to abort (an error code), 0 = none */
    int32_t blocked_node;     /* whose answer blocked it, -1 = none */
    struct hang_cand *cands;
    size_t n_cands;
    int64_t *pids; /* the distinct producer ids asked about, ascending */
    bool *open;    /* by pid: some coordinator has it Ongoing or Prepare* */
    size_t n_pids;
    struct hang_shards shards; /* at the round's start */
    struct hang_ask *asks;
};

struct broker_hanging {
    struct broker *b;
    struct tclock_timer timer;
    int64_t after_ms;
    uint64_t rounds;
    struct hang_round *round; /* out now, or NULL */
    /* Found orphaned by the last round and not aborted yet, with that round's shards. */
    struct hang_cand *prev;
    size_t n_prev;
    struct hang_shards prev_shards;
    struct slog_limit block_lim, fail_lim;
};

/* ---- small helpers ------------------------------------------------------------------------ */

static void cands_free(struct hang_cand *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(c[i].topic);
    free(c);
}

static void shards_clear(struct hang_shards *s)
{
    free(s->leader);
    free(s->leader_epoch);
    memset(s, 0, sizeof *s);
}

static bool shards_equal(const struct hang_shards *x, const struct hang_shards *y)
{
    if (x->n != y->n)
        return false;
    for (int32_t i = 0; i < x->n; i++)
        if (x->leader[i] != y->leader[i] || x->leader_epoch[i] != y->leader_epoch[i])
            return false;
    return true;
}

/* Whether `node` is registered and unfenced: a broker the round asks. */
static bool asked_broker(const struct broker *b, int32_t node)
{
    const struct meta_broker *mb = meta_broker_by_id(b->meta, node);
    return mb != NULL && !mb->fenced;
}

/* Fills *s from the image. Returns 0, ERR_NOMEM, or COORDINATOR_NOT_AVAILABLE when there is
 * no __transaction_state topic or one of its partitions is led by nobody or by a broker the
 * round does not ask (fenced or unregistered): its shard's transactions cannot be seen. */
static int shards_snapshot(const struct broker *b, struct hang_shards *s)
{
    const struct meta_topic *t = meta_topic_by_name(b->meta, TXN_STATE_TOPIC);

    memset(s, 0, sizeof *s);
    if (t == NULL || t->n_partitions <= 0)
        return ERR_COORDINATOR_NOT_AVAILABLE;
    s->leader = malloc((size_t)t->n_partitions * sizeof *s->leader);
    s->leader_epoch = malloc((size_t)t->n_partitions * sizeof *s->leader_epoch);
    if (s->leader == NULL || s->leader_epoch == NULL) {
        shards_clear(s);
        return ERR_NOMEM;
    }
    s->n = t->n_partitions;
    for (int32_t i = 0; i < s->n; i++) {
        s->leader[i] = t->partitions[i].leader;
        s->leader_epoch[i] = t->partitions[i].leader_epoch;
        if (s->leader[i] < 0 || !asked_broker(b, s->leader[i]))
            return ERR_COORDINATOR_NOT_AVAILABLE;
    }
    return 0;
}

static int cmp_pid(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, c = *(const int64_t *)y;
    return a < c ? -1 : a > c;
}

/* The index of `pid` in the round's pids, or -1. */
static long pid_index(const struct hang_round *r, int64_t pid)
{
    const int64_t *hit = bsearch(&pid, r->pids, r->n_pids, sizeof *r->pids, cmp_pid);
    return hit ? (long)(hit - r->pids) : -1;
}

/* A state in which the coordinator no longer sends markers for the producer's transaction:
 * its last one is decided and every marker written (or it has none). */
static bool settled_state(const char *name)
{
    return name != NULL && (strcmp(name, "Empty") == 0 || strcmp(name, "CompleteCommit") == 0 ||
                            strcmp(name, "CompleteAbort") == 0);
}

static void round_free(struct hang_round *r)
{
    cands_free(r->cands, r->n_cands);
    free(r->pids);
    free(r->open);
    free(r->asks);
    shards_clear(&r->shards);
    free(r);
}

static void block(struct hang_round *r, int err, int32_t node)
{
    if (r->blocked == 0) {
        r->blocked = err != 0 ? err : ERR_UNKNOWN_SERVER_ERROR;
        r->blocked_node = node;
    }
}

/* ---- candidates --------------------------------------------------------------------------- */

/* Adds the idle ongoing transactions of every partition led here to r->cands. */
static int collect(struct broker_hanging *h, struct hang_round *r)
{
    struct broker *b = h->b;
    size_t nt, cap = 0;
    const struct meta_topic *const *topics = meta_topics(b->meta, &nt);
    struct partition_idle_txn *idle = NULL;
    int rc = 0;

    for (size_t t = 0; t < nt && rc == 0 && r->n_cands < HANG_MAX_CANDIDATES; t++) {
        for (int32_t i = 0; i < topics[t]->n_partitions && r->n_cands < HANG_MAX_CANDIDATES; i++) {
            struct partition *p;
            size_t n, room = HANG_MAX_CANDIDATES - r->n_cands;

            if (topics[t]->partitions[i].leader != b->node_id ||
                replica_leader_partition(b->replicas, topics[t]->name, i, &p) != 0)
                continue;
            n = partition_idle_txns(p, h->after_ms, NULL, 0);
            if (n == 0)
                continue;
            if (n > room)
                n = room;
            if (n > cap) {
                struct partition_idle_txn *v = realloc(idle, n * sizeof *v);
                if (v == NULL) {
                    rc = ERR_NOMEM;
                    break;
                }
                idle = v;
                cap = n;
            }
            size_t got = partition_idle_txns(p, h->after_ms, idle, n);
            if (got < n)
                n = got;
            struct hang_cand *c = realloc(r->cands, (r->n_cands + n) * sizeof *c);
            if (c == NULL) {
                rc = ERR_NOMEM;
                break;
            }
            r->cands = c;
            for (size_t k = 0; k < n; k++) {
                struct hang_cand *o = &r->cands[r->n_cands];
                o->topic = strdup(topics[t]->name);
                if (o->topic == NULL) {
                    rc = ERR_NOMEM;
                    break;
                }
                o->index = i;
                o->leader_epoch = partition_leader_epoch(p);
                o->producer_id = idle[k].producer_id;
                o->first_offset = idle[k].first_offset;
                r->n_cands++;
            }
            if (rc != 0)
                break;
        }
    }
    free(idle);
    return rc;
}

/* The distinct producer ids of r->cands, ascending, into r->pids (and r->open cleared). */
static int distinct_pids(struct hang_round *r)
{
    size_t w = 0;

    r->pids = malloc(r->n_cands * sizeof *r->pids);
    r->open = calloc(r->n_cands, sizeof *r->open);
    if (r->pids == NULL || r->open == NULL)
        return ERR_NOMEM;
    for (size_t i = 0; i < r->n_cands; i++)
        r->pids[i] = r->cands[i].producer_id;
    qsort(r->pids, r->n_cands, sizeof *r->pids, cmp_pid);
    for (size_t i = 0; i < r->n_cands; i++)
        if (w == 0 || r->pids[w - 1] != r->pids[i])
            r->pids[w++] = r->pids[i];
    r->n_pids = w;
    return 0;
}

/* ---- the verdict -------------------------------------------------------------------------- */

static void forget_prev(struct broker_hanging *h)
{
    cands_free(h->prev, h->n_prev);
    h->prev = NULL;
    h->n_prev = 0;
    shards_clear(&h->prev_shards);
}

static bool was_orphaned(const struct broker_hanging *h, const struct hang_cand *c)
{
    for (size_t i = 0; i < h->n_prev; i++) {
        const struct hang_cand *o = &h->prev[i];
        if (o->producer_id == c->producer_id && o->index == c->index &&
            o->leader_epoch == c->leader_epoch && o->first_offset == c->first_offset &&
            strcmp(o->topic, c->topic) == 0)
            return true;
    }
    return false;
}

static void abort_one(struct broker_hanging *h, const struct hang_cand *c)
{
    struct broker *b = h->b;
    struct partition *p;
    int rc = replica_leader_partition(b->replicas, c->topic, c->index, &p);

    if (rc == 0 && partition_leader_epoch(p) != c->leader_epoch)
        rc = ERR_NOT_LEADER_OR_FOLLOWER; /* led here again, but not as when it was asked */
    if (rc == 0)
        rc = partition_abort_txn(p, c->producer_id, c->first_offset, h->after_ms);
    if (rc == 0) {
        metrics_add(b->m_hanging, 1);
        /* The group coordinator drops the producer's pending offsets (an ABORT needs no
         * durability for that: the transaction is over either way). */
        if (strcmp(c->topic, GROUP_TOPIC) == 0 && b->txn_complete != NULL)
            b->txn_complete(b->txn_complete_arg, c->index, c->producer_id, false);
        return;
    }
    if (rc == ERR_INVALID_TXN_STATE)
        return; /* the producer came back, or the transaction ended meanwhile */
    slog_warn_limited(&h->fail_lim, 60000, "broker",
                      "%s-%d: cannot abort the hanging transaction of producer %lld at offset "
                      "%lld: %s",
                      c->topic, c->index, (long long)c->producer_id, (long long)c->first_offset,
                      err_name(rc));
}

static void verdict(struct broker_hanging *h, struct hang_round *r)
{
    struct hang_shards now;
    struct hang_cand *keep;
    size_t n_keep = 0;
    int rc;

    if (r->blocked == 0) {
        rc = shards_snapshot(h->b, &now);
        if (rc == 0 && !shards_equal(&now, &r->shards))
            rc = ERR_NOT_COORDINATOR; /* a shard moved while the question was out */
        shards_clear(&now);
        if (rc != 0)
            block(r, rc, -1);
    }
    if (r->blocked != 0) {
        char node[32] = "";
        if (r->blocked_node >= 0)
            snprintf(node, sizeof node, " from node %d", r->blocked_node);
        slog_line_limited(&h->block_lim, 60000, SLOG_INFO, "broker",
                          "%zu transaction(s) idle longer than %lld ms on partitions led here are "
                          "not aborted for now: the coordinators could not all be asked (%s%s)",
                          r->n_cands, (long long)h->after_ms, err_name(r->blocked), node);
        forget_prev(h);
        return;
    }
    keep = malloc((r->n_cands + 1) * sizeof *keep);
    if (keep == NULL) {
        forget_prev(h);
        return;
    }
    for (size_t i = 0; i < r->n_cands; i++) {
        struct hang_cand *c = &r->cands[i];
        if (r->open[pid_index(r, c->producer_id)])
            continue;
        if (was_orphaned(h, c) && shards_equal(&h->prev_shards, &r->shards)) {
            abort_one(h, c);
            continue;
        }
        keep[n_keep++] = *c; /* the topic string moves along */
        c->topic = NULL;
    }
    forget_prev(h);
    h->prev = keep;
    h->n_prev = n_keep;
    h->prev_shards = r->shards;
    memset(&r->shards, 0, sizeof r->shards);
}

static void finish(struct hang_round *r)
{
    struct broker_hanging *h = r->h;

    if (h != NULL) {
        h->round = NULL;
        verdict(h, r);
        h->rounds++;
    }
    round_free(r);
}

static void on_answer(void *arg, int err, const void *resp)
{
    struct hang_ask *a = arg;
    struct hang_round *r = a->r;
    const struct ListTransactionsResponse *rs = resp;

    if (err != 0) {
        block(r, err, a->node);
    } else if (rs->ErrorCode != 0) {
        block(r, rs->ErrorCode, a->node);
    } else {
        for (int32_t i = 0; i < rs->TransactionStates.n; i++) {
            const struct ListTransactionsTransactionState *s = &rs->TransactionStates.v[i];
            long k = pid_index(r, s->ProducerId);
            if (k >= 0 && !settled_state(s->TransactionState))
                r->open[k] = true;
        }
    }
    if (--r->waiting == 0)
        finish(r);
}

/* ---- a round ------------------------------------------------------------------------------ */

static void start_round(struct broker_hanging *h)
{
    struct broker *b = h->b;
    struct hang_round *r = calloc(1, sizeof *r);
    const struct meta_broker *brokers;
    struct ListTransactionsRequest rq = {0};
    size_t nb, asked = 0;
    int rc;

    if (r == NULL)
        return; /* next round */
    r->h = h;
    r->blocked_node = -1;
    rc = collect(h, r);
    if (rc == 0 && r->n_cands == 0) {
        forget_prev(h); /* nothing idle: what was orphaned is gone */
        h->rounds++;
        round_free(r);
        return;
    }
    if (rc == 0)
        rc = distinct_pids(r);
    if (rc == 0)
        rc = shards_snapshot(b, &r->shards);
    brokers = meta_brokers(b->meta, &nb);
    if (rc == 0 && (r->asks = calloc(nb + 1, sizeof *r->asks)) == NULL)
        rc = ERR_NOMEM;
    if (rc != 0) {
        block(r, rc, -1);
        finish(r);
        return;
    }
    rq.ProducerIdFilters.v = r->pids;
    rq.ProducerIdFilters.n = (int32_t)r->n_pids;
    h->round = r;
    /* Held while sending, so that no answer can finish the round in between (none comes from
     * inside net_client_send, but a failed send must not finish it either). */
    r->waiting = 1;
    for (size_t i = 0; i < nb; i++) {
        if (brokers[i].fenced)
            continue;
        r->asks[asked] = (struct hang_ask){.r = r, .node = brokers[i].id};
        rc = net_client_send(b->client, brokers[i].id, PROTO_API_ListTransactions, 0, &rq,
                             on_answer, &r->asks[asked]);
        if (rc != 0) {
            block(r, rc, brokers[i].id);
            continue;
        }
        r->waiting++;
        asked++;
    }
    if (asked == 0)
        block(r, ERR_BROKER_NOT_AVAILABLE, -1); /* nobody can vouch for anything */
    if (--r->waiting == 0)
        finish(r);
}

static void on_timer(struct tclock_timer *t)
{
    struct broker_hanging *h = t->data;

    if (h->round == NULL)
        start_round(h);
}

/* ---- lifetime ----------------------------------------------------------------------------- */

int broker_hanging_start(struct broker *b, int64_t check_ms, int64_t after_ms)
{
    struct broker_hanging *h;

    if (check_ms <= 0 || b->client == NULL || b->meta == NULL)
        return 0;
    h = calloc(1, sizeof *h);
    if (h == NULL)
        return ERR_NOMEM;
    h->b = b;
    h->after_ms = after_ms;
    tclock_timer_init(b->clock, &h->timer, on_timer, h);
    if (tclock_timer_start(&h->timer, check_ms, check_ms) != 0) {
        tclock_timer_close(&h->timer);
        free(h);
        return ERR_NOMEM;
    }
    b->hanging = h;
    return 0;
}

void broker_hanging_stop(struct broker *b)
{
    struct broker_hanging *h = b->hanging;

    if (h == NULL)
        return;
    tclock_timer_close(&h->timer);
    if (h->round != NULL)
        h->round->h = NULL;
    forget_prev(h);
    free(h);
    b->hanging = NULL;
}

uint64_t broker_hanging_rounds(const struct broker *b)
{
    return b->hanging ? b->hanging->rounds : 0;
}
