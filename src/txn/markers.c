/* SPDX-License-Identifier: Apache-2.0 */
/* The marker channel: once a transaction's Prepare* is durable, a COMMIT or ABORT marker goes
 * to every partition of the transaction through WriteTxnMarkers v1 — one request per leader
 * node carrying every pending marker for it, sent through the outbound client (on one node:
 * to this broker itself, over loopback: the same path as in a cluster). Partitions answered
 * with a retriable error, or whose request failed, are sent again (to wherever the leader is
 * then) every RETRY_MS; partitions of deleted topics are dropped. When every partition has
 * its marker the Complete* state is written, as Kafka's TransactionMarkerChannelManager does.
 * A coordinator that is fenced (TRANSACTION_COORDINATOR_FENCED, INVALID_PRODUCER_EPOCH) stops
 * sending: a newer coordinator owns the transaction. */
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/err.h"
#include "base/fault.h"
#include "base/slog.h"
#include "meta/meta.h"
#include "txn_int.h"

#define RETRY_MS 100
#define COMPLETE_RETRY_MS 1000
/* TALLY_TEST_FAULT txn:late_markers: how long every transaction's markers are held back after
 * its Prepare*, as if their leaders could not be reached — past the partitions'
 * hanging-transaction threshold (transaction.max.timeout.ms + 60 s) with the tests' 2 s. */
#define LATE_MARKERS_MS 70000

/* MK_HELD: not sent yet, held by txn:late_markers. */
enum { MK_TO_SEND = 0, MK_IN_FLIGHT = 1, MK_DONE = 2, MK_HELD = 3 };

struct tmark {
    struct tmark *next;
    uint64_t seq;
    char *tid;
    int32_t tpart, coord_epoch;
    int64_t pid;
    int16_t epoch;
    bool commit;
    struct txn_tp *parts;
    int32_t n;
    uint8_t *st;
    int32_t left;
    bool completing; /* the Complete* write is out */
    bool retry_complete;
    int64_t born_ms; /* monotonic time of txn_markers_start */
    bool observed;   /* its marker latency went to m_marker_seconds */
};

/* One WriteTxnMarkers request in flight: which (mark, partition) each entry is. */
struct mreq {
    struct txn *t;
    int32_t node;
    int32_t n;
    struct {
        uint64_t seq;
        int32_t idx;
    } items[];
};

static void kick(struct txn *t);

static void mark_free(struct tmark *mk)
{
    for (int32_t i = 0; i < mk->n; i++)
        free(mk->parts[i].topic);
    free(mk->parts);
    free(mk->st);
    free(mk->tid);
    free(mk);
}

static void mark_unlink(struct txn *t, struct tmark *mk)
{
    for (struct tmark **pp = &t->marks; *pp; pp = &(*pp)->next) {
        if (*pp == mk) {
            *pp = mk->next;
            return;
        }
    }
}

static struct tmark *mark_by_seq(struct txn *t, uint64_t seq)
{
    for (struct tmark *mk = t->marks; mk; mk = mk->next)
        if (mk->seq == seq)
            return mk;
    return NULL;
}

static void schedule(struct txn *t, int64_t ms)
{
    if (t->stopping)
        return;
    if (!t->marker_timer.active || t->marker_timer.due_ms > tclock_mono_ms(t->clock) + ms)
        (void)tclock_timer_start(&t->marker_timer, ms, 0);
}

static void on_marker_timer(struct tclock_timer *tm)
{
    kick(tm->data);
}

void txn_markers_init(struct txn *t)
{
    tclock_timer_init(t->clock, &t->marker_timer, on_marker_timer, t);
}

int32_t txn_markers_pending(const struct txn *t)
{
    int32_t n = 0;
    for (struct tmark *mk = t->marks; mk; mk = mk->next)
        n++;
    return n;
}

void txn_markers_drop(struct txn *t, int32_t partition)
{
    struct tmark **pp = &t->marks;
    while (*pp) {
        struct tmark *mk = *pp;
        if (mk->tpart == partition) {
            *pp = mk->next;
            mark_free(mk);
        } else {
            pp = &mk->next;
        }
    }
}

void txn_markers_free_all(struct txn *t)
{
    while (t->marks) {
        struct tmark *mk = t->marks;
        t->marks = mk->next;
        mark_free(mk);
    }
    tclock_timer_close(&t->marker_timer);
}

/* ---- completion --------------------------------------------------------------------------- */

static void complete(struct txn *t, struct tmark *mk);

/* The Complete* write's context: the mark is found again by sequence. */
struct ccall {
    struct txn *t;
    uint64_t seq;
};

static void on_complete_written(void *arg, int16_t err, struct txn_meta *m)
{
    struct ccall *c = arg;
    struct txn *t = c->t;
    struct tmark *mk = mark_by_seq(t, c->seq);

    free(c);
    if (mk == NULL)
        return;
    mk->completing = false;
    if (err == 0) {
        slog_debug("txn", "%s: transaction %s (producer %lld, epoch %d)", mk->tid,
                   mk->commit ? "committed" : "aborted", (long long)mk->pid, mk->epoch);
        mark_unlink(t, mk);
        mark_free(mk);
        return;
    }
    struct tshard *sh = txn_shard_again(t, mk->tpart, mk->coord_epoch);
    if (sh == NULL || m == NULL) {
        mark_unlink(t, mk);
        mark_free(mk);
        return;
    }
    /* The decision stands: keep the entry pending and write Complete* again later. */
    slog_warn_limited(&t->warn, 10000, "txn", "writing the completion of %s failed (%s); retrying",
                      mk->tid, err_name(err));
    struct txn_transit tr;
    if (txn_sm_complete(m, tclock_now_ms(t->clock), &tr) == 0) {
        txn_sm_begin(m, &tr);
        txn_transit_clear(&tr);
    }
    mk->retry_complete = true;
    schedule(t, COMPLETE_RETRY_MS);
}

static void complete(struct txn *t, struct tmark *mk)
{
    struct tshard *sh = txn_shard_again(t, mk->tpart, mk->coord_epoch);
    struct txn_meta *m = sh ? txn_entry_find(sh, mk->tid) : NULL;
    struct txn_transit tr;
    struct ccall *c;

    mk->retry_complete = false;
    if (m == NULL || m->cur.producer_id != mk->pid ||
        (m->cur.state != TXN_PREPARE_COMMIT && m->cur.state != TXN_PREPARE_ABORT)) {
        mark_unlink(t, mk);
        mark_free(mk);
        return;
    }
    fault_point("txn:before_complete");
    if (txn_sm_complete(m, tclock_now_ms(t->clock), &tr) != 0 || (c = malloc(sizeof *c)) == NULL) {
        txn_transit_clear(&tr);
        mk->retry_complete = true;
        schedule(t, COMPLETE_RETRY_MS);
        return;
    }
    c->t = t;
    c->seq = mk->seq;
    mk->completing = true;
    txn_write(sh, m, &tr, on_complete_written, c);
}

/* ---- sending ------------------------------------------------------------------------------ */

static bool retriable(int16_t err)
{
    switch (err) {
    case ERR_UNKNOWN_TOPIC_OR_PARTITION:
    case ERR_NOT_LEADER_OR_FOLLOWER:
    case ERR_NOT_ENOUGH_REPLICAS:
    case ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND:
    case ERR_REQUEST_TIMED_OUT:
    case ERR_KAFKA_STORAGE_ERROR:
    case ERR_COORDINATOR_LOAD_IN_PROGRESS:
    case ERR_COORDINATOR_NOT_AVAILABLE:
    case ERR_NOT_COORDINATOR:
        return true;
    default:
        return false;
    }
}

static int16_t result_for(const struct WriteTxnMarkersResponse *rs, int64_t pid, const char *topic,
                          int32_t partition)
{
    for (int32_t i = 0; rs && i < rs->Markers.n; i++) {
        const struct WritableTxnMarkerResult *mr = &rs->Markers.v[i];
        if (mr->ProducerId != pid)
            continue;
        for (int32_t j = 0; j < mr->Topics.n; j++) {
            const struct WritableTxnMarkerTopicResult *tr = &mr->Topics.v[j];
            if (tr->Name == NULL || strcmp(tr->Name, topic) != 0)
                continue;
            for (int32_t k = 0; k < tr->Partitions.n; k++)
                if (tr->Partitions.v[k].PartitionIndex == partition)
                    return tr->Partitions.v[k].ErrorCode;
        }
    }
    return ERR_REQUEST_TIMED_OUT; /* not answered: send again */
}

static void after_progress(struct txn *t)
{
    for (struct tmark *mk = t->marks, *next; mk; mk = next) {
        next = mk->next;
        if (mk->left == 0 && !mk->completing && !mk->retry_complete) {
            fault_point("txn:after_markers");
            if (!mk->observed) {
                mk->observed = true;
                metrics_observe(t->m_marker_seconds,
                                (double)(tclock_mono_ms(t->clock) - mk->born_ms) / 1000);
            }
            complete(t, mk);
        }
    }
}

static void on_markers_answered(void *arg, int err, const void *resp)
{
    struct mreq *rq = arg;
    struct txn *t = rq->t;
    const struct WriteTxnMarkersResponse *rs = err == 0 ? resp : NULL;
    bool again = false;

    if (t->freed || t->stopping) {
        free(rq);
        txn_outstanding_done(t);
        return;
    }
    if (err != 0)
        slog_warn_limited(&t->warn, 10000, "txn",
                          "WriteTxnMarkers to node %d failed (%s); sending again", rq->node,
                          err_name(err));
    for (int32_t i = 0; i < rq->n; i++) {
        struct tmark *mk = mark_by_seq(t, rq->items[i].seq);
        int32_t idx = rq->items[i].idx;
        if (mk == NULL || mk->st[idx] != MK_IN_FLIGHT)
            continue;
        int16_t e = err != 0
                        ? ERR_REQUEST_TIMED_OUT
                        : result_for(rs, mk->pid, mk->parts[idx].topic, mk->parts[idx].partition);
        if (e == 0 || e == ERR_UNSUPPORTED_FOR_MESSAGE_FORMAT || e == ERR_UNSUPPORTED_VERSION) {
            mk->st[idx] = MK_DONE;
            mk->left--;
        } else if (e == ERR_TRANSACTION_COORDINATOR_FENCED || e == ERR_INVALID_PRODUCER_EPOCH) {
            slog_warn("txn",
                      "%s: the marker for %s-%d was refused (%s): a newer coordinator owns the "
                      "transaction; this one stops sending",
                      mk->tid, mk->parts[idx].topic, mk->parts[idx].partition, err_name(e));
            mark_unlink(t, mk);
            mark_free(mk);
        } else {
            if (!retriable(e))
                slog_warn_limited(&t->warn, 10000, "txn",
                                  "%s: the marker for %s-%d failed (%s); sending again", mk->tid,
                                  mk->parts[idx].topic, mk->parts[idx].partition, err_name(e));
            mk->st[idx] = MK_TO_SEND;
            again = true;
        }
    }
    free(rq);
    after_progress(t);
    if (again)
        schedule(t, RETRY_MS);
    txn_outstanding_done(t);
}

/* The leader of topic-partition: >= 0, -1 (no leader now: later), -2 (the partition is gone:
 * drop its marker). */
static int32_t leader_of(struct txn *t, const char *topic, int32_t partition)
{
    const struct meta_topic *tp = meta_topic_by_name(t->meta, topic);
    if (tp == NULL || partition < 0 || partition >= tp->n_partitions)
        return -2;
    return tp->partitions[partition].leader >= 0 ? tp->partitions[partition].leader : -1;
}

/* Builds and sends one request for `node` with every marker part to send there. */
static void send_to(struct txn *t, int32_t node)
{
    int32_t count = 0;
    for (struct tmark *mk = t->marks; mk; mk = mk->next)
        for (int32_t i = 0; i < mk->n; i++)
            if (mk->st[i] == MK_TO_SEND &&
                leader_of(t, mk->parts[i].topic, mk->parts[i].partition) == node)
                count++;
    if (count == 0)
        return;
    struct mreq *rq = calloc(1, sizeof *rq + (size_t)count * sizeof rq->items[0]);
    struct arena *ar = arena_new(1 << 20);
    struct WriteTxnMarkersRequest body = {0};
    int32_t n_marks = 0;
    if (rq == NULL || ar == NULL)
        goto nomem;
    for (struct tmark *mk = t->marks; mk; mk = mk->next)
        n_marks++;
    body.Markers.v = arena_alloc(ar, (size_t)n_marks * sizeof *body.Markers.v + 1);
    if (body.Markers.v == NULL)
        goto nomem;
    rq->t = t;
    rq->node = node;
    for (struct tmark *mk = t->marks; mk; mk = mk->next) {
        struct WritableTxnMarker *wm = &body.Markers.v[body.Markers.n];
        memset(wm, 0, sizeof *wm);
        wm->Topics.v = arena_alloc(ar, (size_t)mk->n * sizeof *wm->Topics.v + 1);
        int32_t *ids = arena_alloc(ar, (size_t)mk->n * sizeof *ids + 1);
        if (wm->Topics.v == NULL || ids == NULL)
            goto nomem;
        for (int32_t i = 0; i < mk->n; i++) {
            if (mk->st[i] != MK_TO_SEND ||
                leader_of(t, mk->parts[i].topic, mk->parts[i].partition) != node)
                continue;
            struct WritableTxnMarkerTopic *wt =
                wm->Topics.n > 0 ? &wm->Topics.v[wm->Topics.n - 1] : NULL;
            if (wt == NULL || strcmp(wt->Name, mk->parts[i].topic) != 0) {
                wt = &wm->Topics.v[wm->Topics.n++];
                wt->Name = mk->parts[i].topic;
                wt->PartitionIndexes.v = &ids[i];
                wt->PartitionIndexes.n = 0;
            }
            /* Parts are sorted by topic, so one topic's ids are contiguous here. */
            wt->PartitionIndexes.v[wt->PartitionIndexes.n++] = mk->parts[i].partition;
            rq->items[rq->n].seq = mk->seq;
            rq->items[rq->n].idx = i;
            rq->n++;
        }
        if (wm->Topics.n == 0)
            continue;
        wm->ProducerId = mk->pid;
        wm->ProducerEpoch = mk->epoch;
        wm->TransactionResult = mk->commit;
        wm->CoordinatorEpoch = mk->coord_epoch;
        body.Markers.n++;
    }
    if (txn_send(t, node, PROTO_API_WriteTxnMarkers, 1, &body, on_markers_answered, rq) != 0) {
        free(rq);
        arena_free(ar);
        schedule(t, RETRY_MS);
        return;
    }
    for (int32_t i = 0; i < rq->n; i++) {
        struct tmark *mk = mark_by_seq(t, rq->items[i].seq);
        mk->st[rq->items[i].idx] = MK_IN_FLIGHT;
    }
    arena_free(ar);
    return;

nomem:
    free(rq);
    arena_free(ar);
    slog_error("txn", "out of memory sending markers to node %d", node);
    schedule(t, RETRY_MS);
}

/* How long txn:late_markers holds markers back: LATE_MARKERS_MS, or in a test build
 * TALLY_TEST_LATE_MARKERS_MS (with a margin shortened by TALLY_TEST_HANGING_MARGIN_MS). */
static int64_t late_markers_ms(void)
{
#ifdef TALLY_TEST_HOOKS
    const char *v = getenv("TALLY_TEST_LATE_MARKERS_MS");
    if (v != NULL && *v != '\0')
        return atoll(v);
#endif
    return LATE_MARKERS_MS;
}

/* txn:late_markers: holds each mark's parts back until late_markers_ms() after its start,
 * then lets them go. Returns whether any is still held. */
static bool hold_late(struct txn *t)
{
    int64_t now = tclock_mono_ms(t->clock);
    bool held = false;

    for (struct tmark *mk = t->marks; mk; mk = mk->next) {
        bool hold = now - mk->born_ms < late_markers_ms();
        for (int32_t i = 0; i < mk->n; i++) {
            if (hold && mk->st[i] == MK_TO_SEND)
                mk->st[i] = MK_HELD;
            else if (!hold && mk->st[i] == MK_HELD)
                mk->st[i] = MK_TO_SEND;
        }
        held = held || hold;
    }
    return held;
}

/* Sends every marker waiting, one request per leader node; drops those of deleted partitions. */
static void kick(struct txn *t)
{
    bool later = false;

    if (t->stopping)
        return;
    if (fault_armed("txn:late_markers"))
        later = hold_late(t) || later;
    for (struct tmark *mk = t->marks; mk; mk = mk->next) {
        if (mk->retry_complete)
            later = true;
        for (int32_t i = 0; i < mk->n; i++) {
            if (mk->st[i] != MK_TO_SEND)
                continue;
            int32_t leader = leader_of(t, mk->parts[i].topic, mk->parts[i].partition);
            if (leader == -2) {
                mk->st[i] = MK_DONE;
                mk->left--;
            } else if (leader == -1) {
                later = true;
            }
        }
    }
    /* One request per node: find the nodes one at a time. */
    for (;;) {
        int32_t node = -1;
        for (struct tmark *mk = t->marks; mk && node < 0; mk = mk->next)
            for (int32_t i = 0; i < mk->n && node < 0; i++)
                if (mk->st[i] == MK_TO_SEND) {
                    int32_t l = leader_of(t, mk->parts[i].topic, mk->parts[i].partition);
                    if (l >= 0)
                        node = l;
                }
        if (node < 0)
            break;
        send_to(t, node);
        /* Anything still to send for this node means the send failed. */
        bool stuck = false;
        for (struct tmark *mk = t->marks; mk && !stuck; mk = mk->next)
            for (int32_t i = 0; i < mk->n; i++)
                if (mk->st[i] == MK_TO_SEND &&
                    leader_of(t, mk->parts[i].topic, mk->parts[i].partition) == node)
                    stuck = true;
        if (stuck)
            break;
    }
    for (struct tmark *mk = t->marks, *next; mk; mk = next) {
        next = mk->next;
        if (mk->retry_complete)
            complete(t, mk);
    }
    after_progress(t);
    if (later)
        schedule(t, RETRY_MS);
}

void txn_markers_start(struct tshard *sh, struct txn_meta *m)
{
    struct txn *t = sh->t;
    struct tmark *mk = calloc(1, sizeof *mk);
    struct txn_transit tr;
    int32_t n = m->cur.n_parts;

    if (mk == NULL || (mk->tid = strdup(m->tid)) == NULL ||
        (n > 0 && ((mk->parts = calloc((size_t)n, sizeof *mk->parts)) == NULL ||
                   (mk->st = calloc((size_t)n, 1)) == NULL)))
        goto nomem;
    for (int32_t i = 0; i < n; i++) {
        mk->parts[i].partition = m->cur.parts[i].partition;
        if ((mk->parts[i].topic = strdup(m->cur.parts[i].topic)) == NULL) {
            mk->n = i;
            goto nomem;
        }
    }
    mk->n = n;
    mk->left = n;
    mk->seq = ++t->next_mark_seq;
    mk->born_ms = tclock_mono_ms(t->clock);
    mk->tpart = sh->partition;
    mk->coord_epoch = sh->epoch;
    mk->pid = m->cur.producer_id;
    mk->epoch = m->cur.producer_epoch;
    mk->commit = m->cur.state == TXN_PREPARE_COMMIT;
    /* Concurrent requests wait (CONCURRENT_TRANSACTIONS) until Complete* is written. */
    if (txn_sm_complete(m, tclock_now_ms(t->clock), &tr) == 0) {
        txn_sm_begin(m, &tr);
        txn_transit_clear(&tr);
    }
    mk->next = t->marks;
    t->marks = mk;
    kick(t);
    return;

nomem:
    if (mk)
        mark_free(mk);
    slog_error("txn", "out of memory sending the markers of %s; they go after a reload", m->tid);
}
