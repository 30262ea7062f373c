/* SPDX-License-Identifier: Apache-2.0 */
/* The transaction coordinator on a real metadata quorum and replica manager, its handlers
 * driven through detached requests on virtual time. The outbound client is a hook: it
 * answers AllocateProducerIds with a block and records every WriteTxnMarkers request (the
 * test answers them, or holds them to play a crash before the markers). */
#include "harness.h"
#include "fixture.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "admin/admin.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/fault.h"
#include "base/jhash.h"
#include "base/props.h"
#include "base/tclock.h"
#include "meta/meta.h"
#include "net/net.h"
#include "proto/proto.h"
#include "replica/partition.h"
#include "replica/replica.h"
#include "txn/txn.h"
#include "txn/txn_int.h"

#define NODE 1
#define T0 1600000000000LL
#define N_TXN_PARTITIONS 3
#define OTHER 2

/* ---- the outbound hook -------------------------------------------------------------------- */

/* A WriteTxnMarkers request seen (the first marker's fields, and how many partitions). */
struct seen_marker {
    int32_t node;
    int64_t pid;
    int16_t epoch;
    bool commit;
    int32_t coordinator_epoch;
    int32_t n_parts;
    char topics[8][32]; /* per partition, of the first marker */
    int32_t parts[8];
    net_client_cb cb;
    void *cb_arg;
    bool answered;
};

struct tfx {
    struct fixture_coord c;
    struct txn *t;
    /* Answers to run from the pump (never inside the send). */
    struct {
        net_client_cb cb;
        void *arg;
        int16_t api;
    } due[64];
    int n_due;
    struct seen_marker markers[64];
    int n_markers;
    bool hold_markers; /* leave WriteTxnMarkers unanswered */
    bool no_wait;      /* call() returns once the handler was called, answered or not */
    int64_t next_block;
};

static int hook(void *arg, int32_t node, int16_t api, int16_t version, const void *req,
                net_client_cb cb, void *cb_arg)
{
    struct tfx *f = arg;
    (void)version;
    if (api == PROTO_API_WriteTxnMarkers) {
        const struct WriteTxnMarkersRequest *rq = req;
        struct seen_marker *s = &f->markers[f->n_markers++ % 64];
        memset(s, 0, sizeof *s);
        s->node = node;
        if (rq->Markers.n > 0) {
            const struct WritableTxnMarker *m = &rq->Markers.v[0];
            s->pid = m->ProducerId;
            s->epoch = m->ProducerEpoch;
            s->commit = m->TransactionResult;
            s->coordinator_epoch = m->CoordinatorEpoch;
            for (int32_t i = 0; i < m->Topics.n; i++)
                for (int32_t j = 0; j < m->Topics.v[i].PartitionIndexes.n; j++) {
                    if (s->n_parts < 8) {
                        snprintf(s->topics[s->n_parts], 32, "%s", m->Topics.v[i].Name);
                        s->parts[s->n_parts] = m->Topics.v[i].PartitionIndexes.v[j];
                    }
                    s->n_parts++;
                }
        }
        s->cb = cb;
        s->cb_arg = cb_arg;
        if (f->hold_markers)
            return 0;
    }
    f->due[f->n_due].cb = cb;
    f->due[f->n_due].arg = cb_arg;
    f->due[f->n_due].api = api;
    f->n_due++;
    return 0;
}

/* Answers the recorded request: every partition 0 (err 0), or the request failed (err). */
static void answer_markers(struct seen_marker *s, int err)
{
    struct WritableTxnMarkerPartitionResult pr[8];
    struct WritableTxnMarkerTopicResult tr[8];
    struct WritableTxnMarkerResult mr = {.ProducerId = s->pid};
    struct WriteTxnMarkersResponse rs = {0};

    s->answered = true;
    if (err != 0) {
        s->cb(s->cb_arg, err, NULL);
        return;
    }
    for (int32_t i = 0; i < s->n_parts && i < 8; i++) {
        pr[i] = (struct WritableTxnMarkerPartitionResult){s->parts[i], 0};
        tr[i].Name = s->topics[i];
        tr[i].Partitions.v = &pr[i];
        tr[i].Partitions.n = 1;
    }
    mr.Topics.v = tr;
    mr.Topics.n = s->n_parts < 8 ? s->n_parts : 8;
    rs.Markers.v = &mr;
    rs.Markers.n = 1;
    s->cb(s->cb_arg, 0, &rs);
}

static void pump(struct tfx *f)
{
    while (f->n_due > 0) {
        int n = f->n_due;
        f->n_due = 0;
        for (int i = 0; i < n; i++) {
            if (f->due[i].api == PROTO_API_AllocateProducerIds) {
                struct AllocateProducerIdsResponse rs = {.ProducerIdStart = f->next_block,
                                                         .ProducerIdLen = 1000};
                f->next_block += 1000;
                f->due[i].cb(f->due[i].arg, 0, &rs);
            } else {
                /* WriteTxnMarkers not held: answered below from the recorded request. */
                for (int k = 0; k < f->n_markers && k < 64; k++)
                    if (f->markers[k].cb_arg == f->due[i].arg && !f->markers[k].answered)
                        answer_markers(&f->markers[k], 0);
            }
        }
    }
}

static void answer_markers(struct seen_marker *s, int err);

/* ---- fixture ------------------------------------------------------------------------------ */

static bool txn_start(struct tfx *f)
{
    struct txn_options o = {
        .loop = &f->c.q.loop,
        .clock = f->c.clock,
        .send = hook,
        .send_arg = f,
        .replicas = f->c.rm,
        .meta = f->c.q.m,
        .config = f->c.props,
        .node_id = NODE,
    };
    f->t = txn_new(&o);
    return f->t != NULL;
}

static bool txn_stop_wait(struct tfx *f)
{
    bool stopped = false;
    txn_stop(f->t, fixture_set_flag, &stopped);
    f->t = NULL;
    if (!fixture_run_until(&f->c.q.loop, &stopped, 5000))
        return false;
    /* The client fails what is still out when it stops (ERR_SHUTDOWN). */
    for (int k = 0; k < f->n_markers && k < 64; k++)
        if (!f->markers[k].answered)
            answer_markers(&f->markers[k], ERR_SHUTDOWN);
    return true;
}

static bool settle(struct tfx *f)
{
    for (int i = 0; i < 50000; i++) {
        int32_t led = 0, loading = 0;
        pump(f);
        if (f->t)
            txn_shards(f->t, &led, &loading);
        if (replica_opens_pending(f->c.rm) == 0 && replica_events_pending(f->c.rm) == 0 &&
            loading == 0 && f->n_due == 0)
            return true;
        uv_run(&f->c.q.loop, UV_RUN_NOWAIT);
        usleep(100);
    }
    return false;
}

/* The shared coordinator fixture (fixture_coord), __transaction_state (3 partitions) and the
 * coordinator. */
static bool tfx_open(struct tfx *f, const char *const *kv)
{
    static const char *const defaults[] = {"transaction.state.log.num.partitions", "3", NULL};

    memset(f, 0, sizeof *f);
    f->next_block = 1000;
    if (!fixture_coord_open(&f->c, "/tmp/tally-txn-XXXXXX", T0, defaults, kv))
        return false;
    if (f->c.admin == NULL || !txn_start(f))
        return false;
    static const char *const keys[] = {"cleanup.policy"};
    static const char *const values[] = {"compact"};
    if (admin_ensure_internal_topic(f->c.admin, TXN_TOPIC, N_TXN_PARTITIONS, 1, 1, keys, values) !=
        0)
        return false;
    for (int j = 0; j < 30000 && meta_topic_by_name(f->c.q.m, TXN_TOPIC) == NULL; j++) {
        uv_run(&f->c.q.loop, UV_RUN_NOWAIT);
        usleep(100);
    }
    if (!settle(f))
        return false;
    int32_t led, loading;
    txn_shards(f->t, &led, &loading);
    return led == N_TXN_PARTITIONS;
}

static void tfx_close(struct tfx *f)
{
    if (f->t)
        CHECK(txn_stop_wait(f));
    CHECK(fixture_coord_close(&f->c));
}

/* ---- detached requests -------------------------------------------------------------------- */

struct reply {
    int calls;
    int16_t api;
    int16_t err;  /* top-level */
    int16_t perr; /* first partition's */
    int16_t perr2;
    int64_t pid;
    int16_t epoch;
    char state[32];
    int32_t n; /* partitions (Describe), transactions (List) */
    int32_t timeout_ms;
};

static void on_reply(void *arg, enum net_detached_end how, int16_t version, const void *resp)
{
    struct reply *r = arg;
    r->calls++;
    if (how != NET_DETACHED_RESPONDED || resp == NULL) {
        r->err = -9998;
        return;
    }
    switch (r->api) {
    case PROTO_API_InitProducerId: {
        const struct InitProducerIdResponse *rs = resp;
        r->err = rs->ErrorCode;
        r->pid = rs->ProducerId;
        r->epoch = rs->ProducerEpoch;
        break;
    }
    case PROTO_API_AddPartitionsToTxn: {
        const struct AddPartitionsToTxnResponse *rs = resp;
        const struct AddPartitionsToTxnTopicResult *tr = NULL;
        int32_t nt = 0;
        if (version >= 4) {
            r->err = rs->ErrorCode;
            if (rs->ResultsByTransaction.n > 0) {
                tr = rs->ResultsByTransaction.v[0].TopicResults.v;
                nt = rs->ResultsByTransaction.v[0].TopicResults.n;
            }
        } else {
            tr = rs->ResultsByTopicV3AndBelow.v;
            nt = rs->ResultsByTopicV3AndBelow.n;
        }
        r->perr = r->perr2 = -999;
        int k = 0;
        for (int32_t i = 0; i < nt; i++)
            for (int32_t j = 0; j < tr[i].ResultsByPartition.n; j++, k++) {
                if (k == 0)
                    r->perr = tr[i].ResultsByPartition.v[j].PartitionErrorCode;
                else if (k == 1)
                    r->perr2 = tr[i].ResultsByPartition.v[j].PartitionErrorCode;
            }
        break;
    }
    case PROTO_API_AddOffsetsToTxn:
        r->err = ((const struct AddOffsetsToTxnResponse *)resp)->ErrorCode;
        break;
    case PROTO_API_EndTxn:
        r->err = ((const struct EndTxnResponse *)resp)->ErrorCode;
        break;
    case PROTO_API_DescribeTransactions: {
        const struct DescribeTransactionsResponse *rs = resp;
        if (rs->TransactionStates.n > 0) {
            const struct DescribeTransactionsTransactionState *s = &rs->TransactionStates.v[0];
            r->err = s->ErrorCode;
            snprintf(r->state, sizeof r->state, "%s", s->TransactionState);
            r->pid = s->ProducerId;
            r->epoch = s->ProducerEpoch;
            r->timeout_ms = s->TransactionTimeoutMs;
            for (int32_t i = 0; i < s->Topics.n; i++)
                r->n += s->Topics.v[i].Partitions.n;
        }
        break;
    }
    case PROTO_API_ListTransactions: {
        const struct ListTransactionsResponse *rs = resp;
        r->err = rs->ErrorCode;
        r->n = rs->TransactionStates.n;
        r->perr = (int16_t)rs->UnknownStateFilters.n;
        break;
    }
    default:
        break;
    }
}

static void *body(struct arena **ar, size_t size)
{
    void *b;
    *ar = arena_new(8 << 20);
    b = *ar ? arena_alloc(*ar, size) : NULL;
    if (b)
        memset(b, 0, size);
    return b;
}

/* Calls the handler and runs the loop until it answered (or 3 s). */
static void call(struct tfx *f, int16_t api, int16_t version, void *b, struct arena *ar,
                 struct reply *r)
{
    struct net_request *req;
    memset(r, 0, sizeof *r);
    r->api = api;
    req = net_request_detached_new(api, version, b, ar, on_reply, r);
    if (req == NULL) {
        r->err = -9999;
        return;
    }
    switch (api) {
    case PROTO_API_InitProducerId:
        txn_init_producer_id(f->t, req);
        break;
    case PROTO_API_AddPartitionsToTxn:
        txn_add_partitions_to_txn(f->t, req);
        break;
    case PROTO_API_AddOffsetsToTxn:
        txn_add_offsets_to_txn(f->t, req);
        break;
    case PROTO_API_EndTxn:
        txn_end_txn(f->t, req);
        break;
    case PROTO_API_DescribeTransactions:
        txn_describe_transactions(f->t, req);
        break;
    case PROTO_API_ListTransactions:
        txn_list_transactions(f->t, req);
        break;
    default:
        break;
    }
    if (f->no_wait)
        return;
    for (int i = 0; i < 30000 && r->calls == 0; i++) {
        pump(f);
        uv_run(&f->c.q.loop, UV_RUN_NOWAIT);
        if (r->calls == 0)
            usleep(100);
    }
}

static void init_pid(struct tfx *f, int16_t version, const char *tid, int32_t timeout, int64_t pid,
                     int16_t epoch, struct reply *r)
{
    struct arena *ar;
    struct InitProducerIdRequest *rq = body(&ar, sizeof *rq);
    rq->TransactionalId = (char *)tid;
    rq->TransactionTimeoutMs = timeout;
    rq->ProducerId = pid;
    rq->ProducerEpoch = epoch;
    call(f, PROTO_API_InitProducerId, version, rq, ar, r);
}

static void add_parts(struct tfx *f, int16_t version, const char *tid, int64_t pid, int16_t epoch,
                      const char *topic, int32_t p0, int32_t p1, bool verify, struct reply *r)
{
    struct arena *ar;
    struct AddPartitionsToTxnRequest *rq = body(&ar, sizeof *rq);
    struct AddPartitionsToTxnTopic *tp = arena_alloc(ar, sizeof *tp);
    int32_t *ids = arena_alloc(ar, 2 * sizeof *ids);
    ids[0] = p0;
    ids[1] = p1;
    tp->Name = (char *)topic;
    tp->Partitions.v = ids;
    tp->Partitions.n = p1 >= 0 ? 2 : 1;
    if (version >= 4) {
        struct AddPartitionsToTxnTransaction *x = arena_alloc(ar, sizeof *x);
        memset(x, 0, sizeof *x);
        x->TransactionalId = (char *)tid;
        x->ProducerId = pid;
        x->ProducerEpoch = epoch;
        x->VerifyOnly = verify;
        x->Topics.v = tp;
        x->Topics.n = 1;
        rq->Transactions.v = x;
        rq->Transactions.n = 1;
    } else {
        rq->V3AndBelowTransactionalId = (char *)tid;
        rq->V3AndBelowProducerId = pid;
        rq->V3AndBelowProducerEpoch = epoch;
        rq->V3AndBelowTopics.v = tp;
        rq->V3AndBelowTopics.n = 1;
    }
    call(f, PROTO_API_AddPartitionsToTxn, version, rq, ar, r);
}

static void end_txn(struct tfx *f, int16_t version, const char *tid, int64_t pid, int16_t epoch,
                    bool commit, struct reply *r)
{
    struct arena *ar;
    struct EndTxnRequest *rq = body(&ar, sizeof *rq);
    rq->TransactionalId = (char *)tid;
    rq->ProducerId = pid;
    rq->ProducerEpoch = epoch;
    rq->Committed = commit;
    call(f, PROTO_API_EndTxn, version, rq, ar, r);
}

static void describe(struct tfx *f, const char *tid, struct reply *r)
{
    struct arena *ar;
    struct DescribeTransactionsRequest *rq = body(&ar, sizeof *rq);
    char **ids = arena_alloc(ar, sizeof *ids);
    ids[0] = (char *)tid;
    rq->TransactionalIds.v = ids;
    rq->TransactionalIds.n = 1;
    call(f, PROTO_API_DescribeTransactions, 0, rq, ar, r);
}

/* Runs the loop until no transaction has markers in flight (or 3 s). */
static bool markers_done(struct tfx *f)
{
    for (int i = 0; i < 30000; i++) {
        pump(f);
        uv_run(&f->c.q.loop, UV_RUN_NOWAIT);
        if (f->t && txn_markers_pending(f->t) == 0)
            return true;
        usleep(100);
    }
    return false;
}

/* init + AddPartitions(orders 0, 1): *pid, epoch 0. */
static bool ongoing(struct tfx *f, const char *tid, int32_t timeout, int64_t *pid)
{
    struct reply r;
    init_pid(f, 4, tid, timeout, -1, -1, &r);
    if (r.err != 0)
        return false;
    *pid = r.pid;
    add_parts(f, 3, tid, r.pid, r.epoch, "orders", 0, 1, false, &r);
    return r.perr == 0 && r.perr2 == 0;
}

/* ---- tests -------------------------------------------------------------------------------- */

/* The happy path: a new id gets a fresh producer id at epoch 0, partitions join, EndTxn
 * commits once PrepareCommit is durable, the markers go to the leader (this node) with the
 * coordinator epoch, then CompleteCommit. */
TEST(txn_coord_commit_sends_markers_then_completes)
{
    struct tfx f;
    struct reply r;
    int64_t pid;

    REQUIRE(tfx_open(&f, NULL));
    REQUIRE(ongoing(&f, "tx-1", 60000, &pid));
    CHECK_EQ_INT(pid, 1000);
    describe(&f, "tx-1", &r);
    CHECK_EQ_INT(r.err, 0);
    CHECK_EQ_STR(r.state, "Ongoing");
    CHECK_EQ_INT(r.n, 2);
    CHECK_EQ_INT(r.timeout_ms, 60000);
    /* Already added: answered without a write. */
    add_parts(&f, 3, "tx-1", pid, 0, "orders", 1, -1, false, &r);
    CHECK_EQ_INT(r.perr, 0);
    f.hold_markers = true;
    end_txn(&f, 3, "tx-1", pid, 0, true, &r);
    CHECK_EQ_INT(r.err, 0);
    REQUIRE(f.n_markers == 1);
    CHECK_EQ_INT(f.markers[0].node, NODE);
    CHECK_EQ_INT(f.markers[0].pid, pid);
    CHECK_EQ_INT(f.markers[0].epoch, 0);
    CHECK(f.markers[0].commit);
    CHECK_EQ_INT(f.markers[0].n_parts, 2);
    CHECK_EQ_INT(f.markers[0].coordinator_epoch, 0);
    /* Until Complete*, the id's requests wait. */
    describe(&f, "tx-1", &r);
    CHECK_EQ_STR(r.state, "PrepareCommit");
    struct reply held;
    f.no_wait = true;
    add_parts(&f, 3, "tx-1", pid, 0, "orders", 0, -1, false, &held);
    f.no_wait = false;
    end_txn(&f, 3, "tx-1", pid, 0, true, &r);
    CHECK_EQ_INT(r.err, ERR_CONCURRENT_TRANSACTIONS);
    /* A failed marker request is sent again. */
    answer_markers(&f.markers[0], ERR_NETWORK_EXCEPTION);
    tclock_advance(f.c.clock, 200);
    for (int i = 0; i < 100 && f.n_markers < 2; i++) {
        uv_run(&f.c.q.loop, UV_RUN_NOWAIT);
        usleep(100);
    }
    REQUIRE(f.n_markers == 2);
    /* The AddPartitionsToTxn held meanwhile (see txn_coord_add_is_held_*) ran out of time. */
    CHECK_EQ_INT(held.calls, 0);
    tclock_advance(f.c.clock, TXN_HOLD_MAX_MS);
    uv_run(&f.c.q.loop, UV_RUN_NOWAIT);
    CHECK_EQ_INT(held.calls, 1);
    CHECK_EQ_INT(held.perr, ERR_CONCURRENT_TRANSACTIONS);
    answer_markers(&f.markers[1], 0);
    f.hold_markers = false;
    REQUIRE(markers_done(&f));
    describe(&f, "tx-1", &r);
    CHECK_EQ_STR(r.state, "CompleteCommit");
    CHECK_EQ_INT(r.n, 0);
    /* A retried commit is fine; an abort now is not. */
    end_txn(&f, 3, "tx-1", pid, 0, true, &r);
    CHECK_EQ_INT(r.err, 0);
    end_txn(&f, 3, "tx-1", pid, 0, false, &r);
    CHECK_EQ_INT(r.err, ERR_INVALID_TXN_STATE);
    tfx_close(&f);
}

/* Safety: a coordinator's write is an acks=all write. With fewer in-sync replicas than the
 * topic's min.insync.replicas (here 1 < 2, set on __transaction_state behind the admin's cap),
 * InitProducerId appends nothing and answers COORDINATOR_NOT_AVAILABLE (retriable), as
 * Kafka's coordinator maps NOT_ENOUGH_REPLICAS; once the ISR is enough again it succeeds. A
 * lone leader taking a PrepareCommit only it holds would lose the decision with it. */
TEST(txn_coord_refuses_to_write_below_min_isr)
{
    struct tfx f;
    struct reply r;
    int64_t ends[N_TXN_PARTITIONS];

    REQUIRE(tfx_open(&f, NULL));
    struct meta_record cfg = {.type = META_REC_CONFIG};
    cfg.u.config.resource_type = 2; /* TOPIC */
    cfg.u.config.resource_name = TXN_TOPIC;
    cfg.u.config.key = "min.insync.replicas";
    cfg.u.config.value = "2";
    REQUIRE(fixture_meta_propose(&f.c.q, &cfg, 1) == 0);
    REQUIRE(settle(&f));
    for (int i = 0; i < N_TXN_PARTITIONS; i++) {
        struct partition *p = replica_partition(f.c.rm, TXN_TOPIC, i);
        REQUIRE(p != NULL);
        REQUIRE(partition_settings(p)->min_insync == 2);
        ends[i] = partition_log_end_offset(p);
    }
    init_pid(&f, 4, "tx-lonely", 60000, -1, -1, &r);
    CHECK_EQ_INT(r.err, ERR_COORDINATOR_NOT_AVAILABLE);
    REQUIRE(settle(&f));
    for (int i = 0; i < N_TXN_PARTITIONS; i++)
        CHECK_EQ_INT(partition_log_end_offset(replica_partition(f.c.rm, TXN_TOPIC, i)), ends[i]);

    cfg.u.config.value = "1";
    REQUIRE(fixture_meta_propose(&f.c.q, &cfg, 1) == 0);
    REQUIRE(settle(&f));
    init_pid(&f, 4, "tx-lonely", 60000, -1, -1, &r);
    CHECK_EQ_INT(r.err, 0);
    tfx_close(&f);
}

/* Prepare* is the point of no return: a coordinator that stops before the markers were
 * acknowledged, and loads again, sends them again and completes; Ongoing and Complete* entries
 * come back as they were. */
TEST(txn_coord_reload_resends_markers_of_prepared_transactions)
{
    struct tfx f;
    struct reply r;
    int64_t pid_a, pid_b, pid_c;

    REQUIRE(tfx_open(&f, NULL));
    REQUIRE(ongoing(&f, "prep", 60000, &pid_a));
    REQUIRE(ongoing(&f, "open", 60000, &pid_b));
    REQUIRE(ongoing(&f, "done", 60000, &pid_c));
    end_txn(&f, 3, "done", pid_c, 0, false, &r);
    CHECK_EQ_INT(r.err, 0);
    REQUIRE(markers_done(&f));
    f.hold_markers = true;
    end_txn(&f, 3, "prep", pid_a, 0, true, &r);
    CHECK_EQ_INT(r.err, 0);
    REQUIRE(f.n_markers == 2);

    REQUIRE(txn_stop_wait(&f));
    f.n_markers = 0;
    REQUIRE(txn_start(&f));
    REQUIRE(settle(&f));
    REQUIRE(f.n_markers == 1);
    CHECK(f.markers[0].commit);
    CHECK_EQ_INT(f.markers[0].pid, pid_a);
    CHECK_EQ_INT(f.markers[0].n_parts, 2);
    describe(&f, "prep", &r);
    CHECK_EQ_STR(r.state, "PrepareCommit");
    answer_markers(&f.markers[0], 0);
    f.hold_markers = false;
    REQUIRE(markers_done(&f));
    describe(&f, "prep", &r);
    CHECK_EQ_STR(r.state, "CompleteCommit");
    describe(&f, "open", &r);
    CHECK_EQ_STR(r.state, "Ongoing");
    CHECK_EQ_INT(r.n, 2);
    CHECK_EQ_INT(r.pid, pid_b);
    describe(&f, "done", &r);
    CHECK_EQ_STR(r.state, "CompleteAbort");
    describe(&f, "nobody", &r);
    CHECK_EQ_INT(r.err, ERR_TRANSACTIONAL_ID_NOT_FOUND);
    /* The reloaded ongoing transaction can still commit. */
    end_txn(&f, 3, "open", pid_b, 0, true, &r);
    CHECK_EQ_INT(r.err, 0);
    REQUIRE(markers_done(&f));
    tfx_close(&f);
}

/* An Ongoing transaction past transaction.timeout.ms is aborted at the next check with an
 * epoch bump, so the stalled producer is fenced (INVALID_PRODUCER_EPOCH before EndTxn v2). */
TEST(txn_coord_timed_out_transaction_is_aborted_with_an_epoch_bump)
{
    struct tfx f;
    struct reply r;
    int64_t pid;

    REQUIRE(tfx_open(&f, NULL));
    REQUIRE(ongoing(&f, "slow", 1000, &pid));
    tclock_advance(f.c.clock, 5000); /* past the timeout, before the check */
    CHECK_EQ_INT(f.n_markers, 0);
    tclock_advance(f.c.clock, 5000); /* the 10 s check */
    REQUIRE(markers_done(&f));
    REQUIRE(f.n_markers == 1);
    CHECK(!f.markers[0].commit);
    CHECK_EQ_INT(f.markers[0].epoch, 1);
    describe(&f, "slow", &r);
    CHECK_EQ_STR(r.state, "CompleteAbort");
    CHECK_EQ_INT(r.epoch, 1);
    end_txn(&f, 3, "slow", pid, 0, true, &r);
    CHECK_EQ_INT(r.err, ERR_PRODUCER_FENCED);
    end_txn(&f, 1, "slow", pid, 0, true, &r);
    CHECK_EQ_INT(r.err, ERR_INVALID_PRODUCER_EPOCH);
    tfx_close(&f);
}

/* A second InitProducerId with the same id aborts the first instance's transaction (markers
 * at a bumped epoch), answers CONCURRENT_TRANSACTIONS, and the retry gets the next epoch. */
TEST(txn_coord_second_instance_fences_the_first)
{
    struct tfx f;
    struct reply r;
    int64_t pid;

    REQUIRE(tfx_open(&f, NULL));
    REQUIRE(ongoing(&f, "copier", 60000, &pid));
    init_pid(&f, 4, "copier", 60000, -1, -1, &r);
    CHECK_EQ_INT(r.err, ERR_CONCURRENT_TRANSACTIONS);
    REQUIRE(markers_done(&f));
    REQUIRE(f.n_markers == 1);
    CHECK(!f.markers[0].commit);
    CHECK_EQ_INT(f.markers[0].epoch, 1);
    init_pid(&f, 4, "copier", 60000, -1, -1, &r);
    CHECK_EQ_INT(r.err, 0);
    CHECK_EQ_INT(r.pid, pid);
    CHECK_EQ_INT(r.epoch, 2);
    /* The zombie's requests are fenced. */
    add_parts(&f, 3, "copier", pid, 0, "orders", 0, -1, false, &r);
    CHECK_EQ_INT(r.perr, ERR_PRODUCER_FENCED);
    add_parts(&f, 1, "copier", pid, 0, "orders", 0, -1, false, &r);
    CHECK_EQ_INT(r.perr, ERR_INVALID_PRODUCER_EPOCH);
    end_txn(&f, 3, "copier", pid, 0, false, &r);
    CHECK_EQ_INT(r.err, ERR_PRODUCER_FENCED);
    /* KIP-360: the current instance recovers with its id and epoch; its retry too. */
    init_pid(&f, 4, "copier", 60000, pid, 2, &r);
    CHECK_EQ_INT(r.err, 0);
    CHECK_EQ_INT(r.epoch, 3);
    init_pid(&f, 4, "copier", 60000, pid, 2, &r);
    CHECK_EQ_INT(r.err, 0);
    CHECK_EQ_INT(r.epoch, 3);
    init_pid(&f, 4, "copier", 60000, pid + 1, 3, &r);
    CHECK_EQ_INT(r.err, ERR_PRODUCER_FENCED);
    init_pid(&f, 3, "copier", 60000, pid + 1, 3, &r);
    CHECK_EQ_INT(r.err, ERR_INVALID_PRODUCER_EPOCH);
    tfx_close(&f);
}

/* The API errors Kafka gives for bad input. */
TEST(txn_coord_bad_input_errors)
{
    static const char *const kv[] = {"transaction.max.timeout.ms", "60000", NULL};
    struct tfx f;
    struct reply r;
    int64_t pid;

    REQUIRE(tfx_open(&f, kv));
    init_pid(&f, 4, "t", 60001, -1, -1, &r);
    CHECK_EQ_INT(r.err, ERR_INVALID_TRANSACTION_TIMEOUT);
    init_pid(&f, 4, "t", 0, -1, -1, &r);
    CHECK_EQ_INT(r.err, ERR_INVALID_TRANSACTION_TIMEOUT);
    init_pid(&f, 4, "", 1000, -1, -1, &r);
    CHECK_EQ_INT(r.err, ERR_INVALID_REQUEST);
    end_txn(&f, 3, "never", 5, 0, true, &r);
    CHECK_EQ_INT(r.err, ERR_INVALID_PRODUCER_ID_MAPPING);
    init_pid(&f, 4, "t", 60000, -1, -1, &r);
    REQUIRE(r.err == 0);
    pid = r.pid;
    /* EndTxn with no transaction. */
    end_txn(&f, 3, "t", pid, 0, true, &r);
    CHECK_EQ_INT(r.err, ERR_INVALID_TXN_STATE);
    /* Unknown topics fail the whole request: the others are not attempted. */
    add_parts(&f, 3, "t", pid, 0, "nope", 0, -1, false, &r);
    CHECK_EQ_INT(r.perr, ERR_UNKNOWN_TOPIC_OR_PARTITION);
    add_parts(&f, 3, "t", pid, 0, "orders", 0, 7, false, &r);
    CHECK_EQ_INT(r.perr, ERR_OPERATION_NOT_ATTEMPTED);
    CHECK_EQ_INT(r.perr2, ERR_UNKNOWN_TOPIC_OR_PARTITION);
    describe(&f, "t", &r);
    CHECK_EQ_STR(r.state, "Empty");
    add_parts(&f, 3, "t", pid + 1, 0, "orders", 0, -1, false, &r);
    CHECK_EQ_INT(r.perr, ERR_INVALID_PRODUCER_ID_MAPPING);
    /* KIP-890 verification: added → 0, not added → INVALID_TXN_STATE. */
    add_parts(&f, 3, "t", pid, 0, "orders", 0, -1, false, &r);
    CHECK_EQ_INT(r.perr, 0);
    add_parts(&f, 4, "t", pid, 0, "orders", 0, 1, true, &r);
    CHECK_EQ_INT(r.err, 0);
    CHECK_EQ_INT(r.perr, 0);
    CHECK_EQ_INT(r.perr2, ERR_INVALID_TXN_STATE);
    add_parts(&f, 4, "t", pid, 1, "orders", 0, -1, true, &r);
    CHECK_EQ_INT(r.perr, ERR_PRODUCER_FENCED);
    /* AddOffsetsToTxn adds the group's __consumer_offsets partition. */
    struct arena *ar;
    struct AddOffsetsToTxnRequest *ao = body(&ar, sizeof *ao);
    ao->TransactionalId = "t";
    ao->ProducerId = pid;
    ao->ProducerEpoch = 0;
    ao->GroupId = "grp";
    call(&f, PROTO_API_AddOffsetsToTxn, 3, ao, ar, &r);
    CHECK_EQ_INT(r.err, 0);
    describe(&f, "t", &r);
    CHECK_EQ_INT(r.n, 2);
    ao = body(&ar, sizeof *ao);
    ao->TransactionalId = "t";
    ao->ProducerId = pid;
    ao->ProducerEpoch = 3;
    ao->GroupId = "grp";
    call(&f, PROTO_API_AddOffsetsToTxn, 1, ao, ar, &r);
    CHECK_EQ_INT(r.err, ERR_INVALID_PRODUCER_EPOCH);
    /* ListTransactions: state filters, unknown names echoed. */
    struct ListTransactionsRequest *lt = body(&ar, sizeof *lt);
    char **states = arena_alloc(ar, 2 * sizeof *states);
    states[0] = "Ongoing";
    states[1] = "Bogus";
    lt->StateFilters.v = states;
    lt->StateFilters.n = 2;
    call(&f, PROTO_API_ListTransactions, 0, lt, ar, &r);
    CHECK_EQ_INT(r.err, 0);
    CHECK_EQ_INT(r.n, 1);
    CHECK_EQ_INT(r.perr, 1);
    lt = body(&ar, sizeof *lt);
    states = arena_alloc(ar, sizeof *states);
    states[0] = "Empty";
    lt->StateFilters.v = states;
    lt->StateFilters.n = 1;
    call(&f, PROTO_API_ListTransactions, 0, lt, ar, &r);
    CHECK_EQ_INT(r.n, 0);
    tfx_close(&f);
}

/* Idle ids expire after transactional.id.expiration.ms with a tombstone: gone after reload. */
TEST(txn_coord_idle_ids_expire)
{
    static const char *const kv[] = {"transactional.id.expiration.ms", "1000", NULL};
    struct tfx f;
    struct reply r;

    REQUIRE(tfx_open(&f, kv));
    init_pid(&f, 4, "idle", 60000, -1, -1, &r);
    REQUIRE(r.err == 0);
    tclock_advance(f.c.clock, 2000);
    txn_check_expired(f.t);
    settle(&f);
    describe(&f, "idle", &r);
    CHECK_EQ_INT(r.err, ERR_TRANSACTIONAL_ID_NOT_FOUND);
    REQUIRE(txn_stop_wait(&f));
    REQUIRE(txn_start(&f));
    REQUIRE(settle(&f));
    describe(&f, "idle", &r);
    CHECK_EQ_INT(r.err, ERR_TRANSACTIONAL_ID_NOT_FOUND);
    tfx_close(&f);
}

/* Test-only TALLY_TEST_FAULT=txn:lose_entry: once VerifyOnly vouched for a partition, the
 * coordinator forgets the id (in memory), which makes the following batch a hanging
 * transaction; without the point nothing is forgotten. */
TEST(txn_coord_lose_entry_fault_forgets_after_verification)
{
    struct tfx f;
    struct reply r;
    int64_t pid;

    REQUIRE(tfx_open(&f, NULL));
    REQUIRE(ongoing(&f, "hang", 60000, &pid));
    add_parts(&f, 4, "hang", pid, 0, "orders", 0, -1, true, &r);
    CHECK_EQ_INT(r.perr, 0);
    describe(&f, "hang", &r);
    CHECK_EQ_STR(r.state, "Ongoing");
    setenv("TALLY_TEST_FAULT", "txn:lose_entry", 1);
    fault_init();
    add_parts(&f, 4, "hang", pid, 0, "orders", 0, -1, true, &r);
    unsetenv("TALLY_TEST_FAULT");
    fault_init();
    CHECK_EQ_INT(r.perr, 0);
    describe(&f, "hang", &r);
    CHECK_EQ_INT(r.err, ERR_TRANSACTIONAL_ID_NOT_FOUND);
    tfx_close(&f);
}

/* ---- requests held while the previous transaction completes ------------------------------ */

/* Moves leadership of __transaction_state partition `p` to `leader` at a new epoch. */
static int move_leader(struct tfx *f, int32_t p, int32_t leader)
{
    static const int32_t both[] = {NODE, OTHER};
    const struct meta_topic *t = meta_topic_by_name(f->c.q.m, TXN_TOPIC);
    struct meta_record r = {.type = META_REC_PARTITION};
    if (t == NULL || p >= t->n_partitions)
        return -1;
    memcpy(r.u.partition.topic_id, t->id, 16);
    r.u.partition.partition = p;
    r.u.partition.leader = leader;
    r.u.partition.leader_epoch = t->partitions[p].leader_epoch + 1;
    r.u.partition.partition_epoch = t->partitions[p].partition_epoch + 1;
    r.u.partition.n_replicas = r.u.partition.n_isr = 2;
    r.u.partition.replicas = r.u.partition.isr = both;
    return fixture_meta_propose(&f->c.q, &r, 1);
}

static void add_offsets(struct tfx *f, const char *tid, int64_t pid, int16_t epoch, struct reply *r)
{
    struct arena *ar;
    struct AddOffsetsToTxnRequest *ao = body(&ar, sizeof *ao);
    ao->TransactionalId = (char *)tid;
    ao->ProducerId = pid;
    ao->ProducerEpoch = epoch;
    ao->GroupId = "grp";
    call(f, PROTO_API_AddOffsetsToTxn, 3, ao, ar, r);
}

/* Runs the loop a while (pumping the hook): what is held stays held. */
static void spin(struct tfx *f, int n)
{
    for (int i = 0; i < n; i++) {
        pump(f);
        uv_run(&f->c.q.loop, UV_RUN_NOWAIT);
        usleep(100);
    }
}

/* Commits tid's ongoing transaction with its markers held, then sends the next
 * transaction's AddPartitionsToTxn (orders-0) without waiting for its answer. */
static bool commit_then_add(struct tfx *f, const char *tid, int64_t *pid, struct reply *held)
{
    struct reply r;
    if (!ongoing(f, tid, 60000, pid))
        return false;
    f->hold_markers = true;
    end_txn(f, 3, tid, *pid, 0, true, &r);
    if (r.err != 0 || f->n_markers != 1)
        return false;
    f->no_wait = true;
    add_parts(f, 3, tid, *pid, 0, "orders", 0, -1, false, held);
    f->no_wait = false;
    spin(f, 200);
    return true;
}

/* The next transaction's AddPartitionsToTxn and AddOffsetsToTxn, sent right after EndTxn,
 * wait while the markers are written and are answered NONE once CompleteCommit is: the
 * client is not told CONCURRENT_TRANSACTIONS (and does not back off). */
TEST(txn_coord_add_is_held_until_the_previous_transaction_completes)
{
    struct tfx f;
    struct reply r, held, held_offs;
    int64_t pid;

    REQUIRE(tfx_open(&f, NULL));
    REQUIRE(commit_then_add(&f, "tx-h", &pid, &held));
    f.no_wait = true;
    add_offsets(&f, "tx-h", pid, 0, &held_offs);
    f.no_wait = false;
    spin(&f, 200);
    CHECK_EQ_INT(held.calls, 0);
    CHECK_EQ_INT(held_offs.calls, 0);
    describe(&f, "tx-h", &r);
    CHECK_EQ_STR(r.state, "PrepareCommit");
    tclock_advance(f.c.clock, TXN_HOLD_MAX_MS - 1); /* not yet its bound */
    spin(&f, 50);
    CHECK_EQ_INT(held.calls, 0);
    answer_markers(&f.markers[0], 0);
    f.hold_markers = false;
    REQUIRE(markers_done(&f));
    spin(&f, 200);
    CHECK_EQ_INT(held.calls, 1);
    CHECK_EQ_INT(held.perr, 0);
    CHECK_EQ_INT(held_offs.calls, 1);
    CHECK_EQ_INT(held_offs.err, 0);
    /* The new transaction holds exactly what the held requests added. */
    describe(&f, "tx-h", &r);
    CHECK_EQ_STR(r.state, "Ongoing");
    CHECK_EQ_INT(r.n, 2);
    tclock_advance(f.c.clock, TXN_HOLD_MAX_MS); /* nothing answers twice */
    spin(&f, 50);
    CHECK_EQ_INT(held.calls, 1);
    CHECK_EQ_INT(held_offs.calls, 1);
    tfx_close(&f);
}

/* Bounded: markers that do not land within TXN_HOLD_MAX_MS leave the held request answered
 * CONCURRENT_TRANSACTIONS, as Kafka answers at once. */
TEST(txn_coord_held_add_times_out_with_concurrent_transactions)
{
    struct tfx f;
    struct reply held;
    int64_t pid;

    REQUIRE(tfx_open(&f, NULL));
    REQUIRE(commit_then_add(&f, "tx-t", &pid, &held));
    CHECK_EQ_INT(held.calls, 0);
    tclock_advance(f.c.clock, TXN_HOLD_MAX_MS);
    spin(&f, 50);
    CHECK_EQ_INT(held.calls, 1);
    CHECK_EQ_INT(held.perr, ERR_CONCURRENT_TRANSACTIONS);
    answer_markers(&f.markers[0], 0);
    f.hold_markers = false;
    REQUIRE(markers_done(&f));
    CHECK_EQ_INT(held.calls, 1);
    tfx_close(&f);
}

/* The coordinator loses the partition while a request is held: NOT_COORDINATOR (the client
 * looks the coordinator up again). */
TEST(txn_coord_held_add_answers_not_coordinator_when_the_shard_moves)
{
    struct tfx f;
    struct reply held;
    int64_t pid;
    const char *tid = "tx-m";

    REQUIRE(tfx_open(&f, NULL));
    struct meta_record other = fixture_broker_rec(OTHER, 9093);
    REQUIRE(fixture_meta_propose(&f.c.q, &other, 1) == 0);
    REQUIRE(settle(&f));
    REQUIRE(commit_then_add(&f, tid, &pid, &held));
    CHECK_EQ_INT(held.calls, 0);
    REQUIRE(move_leader(&f, java_partition_for(tid, N_TXN_PARTITIONS), OTHER) == 0);
    REQUIRE(settle(&f));
    spin(&f, 100);
    CHECK_EQ_INT(held.calls, 1);
    CHECK_EQ_INT(held.perr, ERR_NOT_COORDINATOR);
    f.hold_markers = false;
    tfx_close(&f);
}

/* A stop answers held requests COORDINATOR_NOT_AVAILABLE (retriable), once. */
TEST(txn_coord_stop_answers_held_requests)
{
    struct tfx f;
    struct reply held;
    int64_t pid;

    REQUIRE(tfx_open(&f, NULL));
    REQUIRE(commit_then_add(&f, "tx-s", &pid, &held));
    CHECK_EQ_INT(held.calls, 0);
    REQUIRE(txn_stop_wait(&f));
    CHECK_EQ_INT(held.calls, 1);
    CHECK_EQ_INT(held.perr, ERR_COORDINATOR_NOT_AVAILABLE);
    f.hold_markers = false;
    tfx_close(&f);
}
