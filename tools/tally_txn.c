/* SPDX-License-Identifier: Apache-2.0 */
/* tally transactions: list, describe, find-hanging and abort, as kafka-transactions.sh
 * (KIP-664). librdkafka 2.0.2 has no admin call for ListTransactions, DescribeTransactions,
 * DescribeProducers or WriteTxnMarkers, so they go over the blocking wire client
 * (tally_wire_*) encoded with Tally's own codec; librdkafka supplies the metadata.
 * Output is tab-separated with a header line, one row per transaction or partition. Also
 * tally_wire_call and tally_bootstrap_call (tally.h), the one-request helpers of `topics
 * describe`, `acls` and `quotas`. */
#include "tally.h"

#include "base/arena.h"
#include "proto/proto.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#define ARENA_BYTES (256 << 20)
#define DEFAULT_HANGING_MINUTES 15 /* kafka-transactions.sh --max-transaction-timeout */

static const char txn_usage[] =
    "usage: tally transactions COMMAND ...\n"
    "\n"
    "  list [--state S]\n"
    "      Every transactional id known to the coordinators (optionally only those in\n"
    "      state S: Empty, Ongoing, PrepareCommit, PrepareAbort, CompleteCommit,\n"
    "      CompleteAbort, PrepareEpochFence, Dead): id, coordinator, producer id, state.\n"
    "  describe TRANSACTIONAL_ID\n"
    "      Its coordinator, producer id and epoch, state, timeout, start time, age and the\n"
    "      partitions of its current transaction.\n"
    "  find-hanging [--broker N] [--max-transaction-timeout MINUTES]\n"
    "      Open transactions on the partitions (led by broker N) that no coordinator knows\n"
    "      as ongoing and that are older than MINUTES (default 15).\n"
    "  abort --topic T --partition P --start-offset O\n"
    "      Write an ABORT marker for the open transaction that starts at offset O of T-P\n"
    "      (a hanging transaction): its records are then never returned to read_committed\n"
    "      consumers and the partition's last stable offset moves on.\n";

static int64_t now_ms(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

/* ---- one request, one response -------------------------------------------------------- */

int tally_wire_call(const struct tally_ctx *ctx, const char *host, int port, int16_t api_key,
                    int16_t version, const void *req, struct arena *a, void **out, const char *what)
{
    const struct proto_api *api = proto_api_find(api_key);
    uint8_t *frame = NULL, *resp = NULL;
    size_t frame_len = 0, resp_len = 0;
    int rc = TALLY_FAIL;
    int32_t corr = -1;
    struct tally_wire *w = NULL;

    if (api == NULL)
        return tally_fail("%s: not in the protocol table", what);
    if (proto_encode_request(api, version, 1, "tally", req, &frame, &frame_len) != 0)
        return tally_fail("%s: cannot encode the request", what);
    w = tally_wire_connect(ctx, host, port);
    if (w == NULL)
        goto out;
    if (tally_wire_roundtrip(w, frame, frame_len, &resp, &resp_len, what) != 0)
        goto out;
    int err = proto_decode_response(api, version, resp, resp_len, &corr, out, a);
    if (err != 0) {
        tally_fail("%s: cannot decode the response (error %d)", what, err);
        goto out;
    }
    if (corr != 1) {
        tally_fail("%s: correlation id %d, expected 1", what, (int)corr);
        goto out;
    }
    rc = TALLY_OK;
out:
    tally_wire_close(w);
    free(frame);
    free(resp); /* the responses used here hold no BYTES: strings live in `a` */
    return rc;
}

/* The first bootstrap broker's host and port. */
static int first_broker(const struct tally_ctx *ctx, char *host, size_t cap, int *port)
{
    const char *b = ctx->bootstrap, *end = strchr(b, ',');
    size_t len = end ? (size_t)(end - b) : strlen(b);
    const char *colon = memrchr(b, ':', len);
    if (colon == NULL || (size_t)(colon - b) >= cap)
        return tally_usage_error("bootstrap server '%s' is not HOST:PORT", b);
    memcpy(host, b, (size_t)(colon - b));
    host[colon - b] = '\0';
    *port = atoi(colon + 1);
    return *port > 0 ? TALLY_OK : tally_usage_error("bootstrap server '%s' has no port", b);
}

int tally_bootstrap_call(const struct tally_ctx *ctx, int16_t api_key, int16_t version,
                         const void *req, struct arena *a, void **out, const char *what)
{
    char host[256];
    int port = 0;
    int rc = first_broker(ctx, host, sizeof host, &port);
    if (rc != TALLY_OK)
        return rc;
    return tally_wire_call(ctx, host, port, api_key, version, req, a, out, what);
}

static const struct rd_kafka_metadata_broker *find_broker(const struct rd_kafka_metadata *md,
                                                          int32_t id)
{
    for (int i = 0; i < md->broker_cnt; i++)
        if (md->brokers[i].id == id)
            return &md->brokers[i];
    return NULL;
}

static const struct rd_kafka_metadata_topic *find_topic(const struct rd_kafka_metadata *md,
                                                        const char *name)
{
    for (int i = 0; i < md->topic_cnt; i++)
        if (strcmp(md->topics[i].topic, name) == 0)
            return &md->topics[i];
    return NULL;
}

static const char *err_name(int16_t code)
{
    return rd_kafka_err2name((rd_kafka_resp_err_t)code);
}

/* ---- list ---------------------------------------------------------------------------- */

struct row {
    char *tid, *state;
    int32_t coordinator;
    int64_t producer_id;
};

static int cmp_row(const void *x, const void *y)
{
    const struct row *a = x, *b = y;
    return strcmp(a->tid, b->tid);
}

/* ListTransactions on every broker (each answers for the ids it coordinates). */
static int list_all(const struct tally_ctx *ctx, const struct rd_kafka_metadata *md,
                    struct ListTransactionsRequest *req, struct arena *a, struct row **rows,
                    size_t *nrows)
{
    size_t cap = 16, n = 0;
    bool failed = false;
    struct row *r = malloc(cap * sizeof *r);
    if (r == NULL)
        return tally_fail("out of memory");
    for (int i = 0; i < md->broker_cnt; i++) {
        const struct rd_kafka_metadata_broker *b = &md->brokers[i];
        char what[300];
        void *out = NULL;
        snprintf(what, sizeof what, "ListTransactions to broker %d (%s:%d)", (int)b->id, b->host,
                 b->port);
        if (tally_wire_call(ctx, b->host, b->port, PROTO_API_ListTransactions, 0, req, a, &out,
                            what) != TALLY_OK) {
            failed = true;
            continue;
        }
        struct ListTransactionsResponse *resp = out;
        if (resp->ErrorCode != 0) {
            fprintf(stderr, "tally: %s: %s\n", what, err_name(resp->ErrorCode));
            failed = true;
            continue;
        }
        for (int32_t k = 0; k < resp->UnknownStateFilters.n; k++)
            fprintf(stderr, "tally: broker %d does not know the state '%s'\n", (int)b->id,
                    resp->UnknownStateFilters.v[k]);
        for (int32_t k = 0; k < resp->TransactionStates.n; k++) {
            struct ListTransactionsTransactionState *s = &resp->TransactionStates.v[k];
            if (n == cap) {
                struct row *g = realloc(r, 2 * cap * sizeof *r);
                if (g == NULL) {
                    free(r);
                    return tally_fail("out of memory");
                }
                r = g;
                cap *= 2;
            }
            r[n++] =
                (struct row){s->TransactionalId ? s->TransactionalId : "",
                             s->TransactionState ? s->TransactionState : "", b->id, s->ProducerId};
        }
    }
    qsort(r, n, sizeof *r, cmp_row);
    *rows = r;
    *nrows = n;
    return failed ? TALLY_FAIL : TALLY_OK;
}

static int txn_list(const struct tally_ctx *ctx, const char *state)
{
    int rc = TALLY_FAIL;
    struct arena *a = NULL;
    struct row *rows = NULL;
    size_t n = 0;
    char *filters[1] = {(char *)state};
    struct ListTransactionsRequest req = {0};

    if (state != NULL) {
        req.StateFilters.v = filters;
        req.StateFilters.n = 1;
    }
    rd_kafka_t *rk = tally_connect(ctx);
    if (rk == NULL)
        return TALLY_FAIL;
    const struct rd_kafka_metadata *md = tally_metadata(rk, ctx, NULL);
    if (md == NULL)
        goto out;
    a = arena_new(ARENA_BYTES);
    if (a == NULL) {
        tally_fail("out of memory");
        goto out_md;
    }
    rc = list_all(ctx, md, &req, a, &rows, &n);
    printf("TransactionalId\tCoordinator\tProducerId\tTransactionState\n");
    for (size_t i = 0; i < n; i++)
        printf("%s\t%d\t%" PRId64 "\t%s\n", rows[i].tid, (int)rows[i].coordinator,
               rows[i].producer_id, rows[i].state);
    free(rows);
out_md:
    rd_kafka_metadata_destroy(md);
out:
    arena_free(a);
    rd_kafka_destroy(rk);
    return rc;
}

/* ---- describe ------------------------------------------------------------------------ */

/* FindCoordinator (key type 1, v3) through any broker: the coordinator's host and port. */
static int find_txn_coordinator(const struct tally_ctx *ctx, const struct rd_kafka_metadata *md,
                                const char *tid, struct arena *a, int32_t *node, char **host,
                                int *port)
{
    struct FindCoordinatorRequest req = {.Key = (char *)tid, .KeyType = 1};
    const int attempts = 50;
    for (int attempt = 0; attempt < attempts; attempt++) {
        for (int i = 0; i < md->broker_cnt; i++) {
            const struct rd_kafka_metadata_broker *b = &md->brokers[i];
            void *out = NULL;
            if (tally_wire_call(ctx, b->host, b->port, PROTO_API_FindCoordinator, 3, &req, a, &out,
                                "FindCoordinator") != TALLY_OK)
                continue;
            struct FindCoordinatorResponse *r = out;
            if (r->ErrorCode == RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE ||
                r->ErrorCode == RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS)
                break; /* being created or loaded: wait and ask again */
            if (r->ErrorCode != 0)
                return tally_fail("FindCoordinator for '%s': %s%s%s", tid, err_name(r->ErrorCode),
                                  r->ErrorMessage ? ": " : "",
                                  r->ErrorMessage ? r->ErrorMessage : "");
            *node = r->NodeId;
            *host = r->Host;
            *port = r->Port;
            return TALLY_OK;
        }
        usleep(100 * 1000);
    }
    return tally_fail("no transaction coordinator for '%s'", tid);
}

static void print_partitions(const struct DescribeTransactionsTransactionState *s)
{
    bool first = true;
    for (int32_t t = 0; t < s->Topics.n; t++)
        for (int32_t p = 0; p < s->Topics.v[t].Partitions.n; p++) {
            printf("%s%s-%d", first ? "" : ",", s->Topics.v[t].Topic,
                   (int)s->Topics.v[t].Partitions.v[p]);
            first = false;
        }
    if (first)
        printf("None");
}

static int txn_describe(const struct tally_ctx *ctx, const char *tid)
{
    int rc = TALLY_FAIL;
    struct arena *a = NULL;
    int32_t node = -1;
    char *host = NULL, what[300];
    int port = 0;
    void *out = NULL;
    char *ids[1] = {(char *)tid};
    struct DescribeTransactionsRequest req = {.TransactionalIds = {ids, 1}};

    rd_kafka_t *rk = tally_connect(ctx);
    if (rk == NULL)
        return TALLY_FAIL;
    const struct rd_kafka_metadata *md = tally_metadata(rk, ctx, NULL);
    if (md == NULL)
        goto out;
    a = arena_new(ARENA_BYTES);
    if (a == NULL) {
        tally_fail("out of memory");
        goto out_md;
    }
    if (find_txn_coordinator(ctx, md, tid, a, &node, &host, &port) != TALLY_OK)
        goto out_md;
    snprintf(what, sizeof what, "DescribeTransactions to broker %d (%s:%d)", (int)node, host, port);
    if (tally_wire_call(ctx, host, port, PROTO_API_DescribeTransactions, 0, &req, a, &out, what) !=
        TALLY_OK)
        goto out_md;
    struct DescribeTransactionsResponse *resp = out;
    if (resp->TransactionStates.n != 1) {
        tally_fail("%s: %d answers for one id", what, (int)resp->TransactionStates.n);
        goto out_md;
    }
    struct DescribeTransactionsTransactionState *s = &resp->TransactionStates.v[0];
    if (s->ErrorCode == 105 /* TRANSACTIONAL_ID_NOT_FOUND */) {
        tally_fail("transactional id '%s' not found", tid);
        goto out_md;
    }
    if (s->ErrorCode != 0) {
        tally_fail("%s: %s", what, err_name(s->ErrorCode));
        goto out_md;
    }
    printf("CoordinatorId\tTransactionalId\tProducerId\tProducerEpoch\tTransactionState\t"
           "TransactionTimeoutMs\tCurrentTransactionStartTimeMs\tTransactionDurationMs\t"
           "TopicPartitions\n");
    printf("%d\t%s\t%" PRId64 "\t%d\t%s\t%d\t", (int)node,
           s->TransactionalId ? s->TransactionalId : tid, s->ProducerId, (int)s->ProducerEpoch,
           s->TransactionState ? s->TransactionState : "?", (int)s->TransactionTimeoutMs);
    /* The age only of a transaction still open (Ongoing or Prepare*). */
    bool open = s->TransactionState != NULL && (strcmp(s->TransactionState, "Ongoing") == 0 ||
                                                strncmp(s->TransactionState, "Prepare", 7) == 0);
    if (s->TransactionStartTimeMs >= 0)
        printf("%" PRId64 "\t", s->TransactionStartTimeMs);
    else
        printf("None\t");
    if (s->TransactionStartTimeMs >= 0 && open)
        printf("%" PRId64 "\t", now_ms() - s->TransactionStartTimeMs);
    else
        printf("None\t");
    print_partitions(s);
    printf("\n");
    rc = TALLY_OK;
out_md:
    rd_kafka_metadata_destroy(md);
out:
    arena_free(a);
    rd_kafka_destroy(rk);
    return rc;
}

/* ---- DescribeProducers per leader ---------------------------------------------------- */

/* An open transaction seen on a partition. */
struct open_txn {
    const char *topic;
    int32_t partition, leader;
    struct ProducerState st;
};

/* DescribeProducers for every partition of `topics` (all topics when NULL) led by `broker`
 * (any when < 0): appends the producers with an open transaction to *out. */
static int collect_open(const struct tally_ctx *ctx, const struct rd_kafka_metadata *md,
                        int32_t broker, const char *only_topic, int32_t only_partition,
                        struct arena *a, struct open_txn **out, size_t *nout)
{
    size_t cap = 16, n = 0;
    bool failed = false;
    struct open_txn *o = malloc(cap * sizeof *o);
    if (o == NULL)
        return tally_fail("out of memory");

    for (int bi = 0; bi < md->broker_cnt; bi++) {
        const struct rd_kafka_metadata_broker *b = &md->brokers[bi];
        if (broker >= 0 && b->id != broker)
            continue;
        struct DescribeProducersTopicRequest *tr =
            arena_alloc(a, sizeof *tr * (size_t)(md->topic_cnt + 1));
        if (tr == NULL) {
            free(o);
            return tally_fail("out of memory");
        }
        int nt = 0;
        for (int ti = 0; ti < md->topic_cnt; ti++) {
            const struct rd_kafka_metadata_topic *t = &md->topics[ti];
            if (only_topic != NULL && strcmp(t->topic, only_topic) != 0)
                continue;
            int32_t *parts = arena_alloc(a, sizeof *parts * (size_t)(t->partition_cnt + 1));
            if (parts == NULL) {
                free(o);
                return tally_fail("out of memory");
            }
            int np = 0;
            for (int pi = 0; pi < t->partition_cnt; pi++)
                if (t->partitions[pi].leader == b->id &&
                    (only_partition < 0 || t->partitions[pi].id == only_partition))
                    parts[np++] = t->partitions[pi].id;
            if (np == 0)
                continue;
            tr[nt].Name = t->topic;
            tr[nt].PartitionIndexes.v = parts;
            tr[nt].PartitionIndexes.n = np;
            nt++;
        }
        if (nt == 0)
            continue;
        struct DescribeProducersRequest req = {.Topics = {tr, nt}};
        char what[300];
        void *resp_v = NULL;
        snprintf(what, sizeof what, "DescribeProducers to broker %d (%s:%d)", (int)b->id, b->host,
                 b->port);
        if (tally_wire_call(ctx, b->host, b->port, PROTO_API_DescribeProducers, 0, &req, a, &resp_v,
                            what) != TALLY_OK) {
            failed = true;
            continue;
        }
        struct DescribeProducersResponse *resp = resp_v;
        for (int32_t ti = 0; ti < resp->Topics.n; ti++) {
            struct DescribeProducersTopicResponse *t = &resp->Topics.v[ti];
            for (int32_t pi = 0; pi < t->Partitions.n; pi++) {
                struct DescribeProducersPartitionResponse *pr = &t->Partitions.v[pi];
                if (pr->ErrorCode != 0) {
                    fprintf(stderr, "tally: %s-%d: %s\n", t->Name, (int)pr->PartitionIndex,
                            err_name(pr->ErrorCode));
                    failed = true;
                    continue;
                }
                for (int32_t k = 0; k < pr->ActiveProducers.n; k++) {
                    if (pr->ActiveProducers.v[k].CurrentTxnStartOffset < 0)
                        continue;
                    if (n == cap) {
                        struct open_txn *g = realloc(o, 2 * cap * sizeof *o);
                        if (g == NULL) {
                            free(o);
                            return tally_fail("out of memory");
                        }
                        o = g;
                        cap *= 2;
                    }
                    o[n++] = (struct open_txn){t->Name, pr->PartitionIndex, b->id,
                                               pr->ActiveProducers.v[k]};
                }
            }
        }
    }
    *out = o;
    *nout = n;
    return failed ? TALLY_FAIL : TALLY_OK;
}

/* True when the coordinator of producer `pid` (found through ListTransactions) describes
 * an ongoing (or preparing) transaction of that producer that includes topic-partition. */
static bool coordinator_knows(const struct tally_ctx *ctx, const struct rd_kafka_metadata *md,
                              const struct open_txn *o, struct arena *a)
{
    int64_t pids[1] = {o->st.ProducerId};
    struct ListTransactionsRequest lreq = {.ProducerIdFilters = {pids, 1}};
    struct row *rows = NULL;
    size_t n = 0;
    bool known = false;

    list_all(ctx, md, &lreq, a, &rows, &n);
    for (size_t i = 0; i < n && !known; i++) {
        if (rows[i].producer_id != o->st.ProducerId)
            continue;
        const struct rd_kafka_metadata_broker *b = find_broker(md, rows[i].coordinator);
        if (b == NULL)
            continue;
        char *ids[1] = {rows[i].tid};
        struct DescribeTransactionsRequest dreq = {.TransactionalIds = {ids, 1}};
        void *out = NULL;
        if (tally_wire_call(ctx, b->host, b->port, PROTO_API_DescribeTransactions, 0, &dreq, a,
                            &out, "DescribeTransactions") != TALLY_OK)
            continue;
        struct DescribeTransactionsResponse *r = out;
        for (int32_t k = 0; k < r->TransactionStates.n; k++) {
            struct DescribeTransactionsTransactionState *s = &r->TransactionStates.v[k];
            if (s->ErrorCode != 0 || s->ProducerId != o->st.ProducerId ||
                s->TransactionState == NULL)
                continue;
            if (strcmp(s->TransactionState, "Ongoing") != 0 &&
                strcmp(s->TransactionState, "PrepareCommit") != 0 &&
                strcmp(s->TransactionState, "PrepareAbort") != 0)
                continue;
            for (int32_t t = 0; t < s->Topics.n; t++)
                if (strcmp(s->Topics.v[t].Topic, o->topic) == 0)
                    for (int32_t p = 0; p < s->Topics.v[t].Partitions.n; p++)
                        if (s->Topics.v[t].Partitions.v[p] == o->partition)
                            known = true;
        }
    }
    free(rows);
    return known;
}

static int txn_find_hanging(const struct tally_ctx *ctx, int32_t broker, long max_minutes)
{
    int rc = TALLY_FAIL;
    struct arena *a = NULL;
    struct open_txn *o = NULL;
    size_t n = 0;

    rd_kafka_t *rk = tally_connect(ctx);
    if (rk == NULL)
        return TALLY_FAIL;
    const struct rd_kafka_metadata *md = tally_metadata(rk, ctx, NULL);
    if (md == NULL)
        goto out;
    if (broker >= 0 && find_broker(md, broker) == NULL) {
        tally_fail("broker %d is not in the cluster", (int)broker);
        goto out_md;
    }
    a = arena_new(ARENA_BYTES);
    if (a == NULL) {
        tally_fail("out of memory");
        goto out_md;
    }
    rc = collect_open(ctx, md, broker, NULL, -1, a, &o, &n);
    int64_t now = now_ms();
    printf("Topic\tPartition\tProducerId\tProducerEpoch\tCoordinatorEpoch\tStartOffset\t"
           "LastTimestamp\tDuration(min)\n");
    for (size_t i = 0; i < n; i++) {
        int64_t age_ms = now - o[i].st.LastTimestamp;
        if (o[i].st.LastTimestamp >= 0 && age_ms < max_minutes * 60000)
            continue;
        if (coordinator_knows(ctx, md, &o[i], a))
            continue;
        printf("%s\t%d\t%" PRId64 "\t%d\t%d\t%" PRId64 "\t%" PRId64 "\t%" PRId64 "\n", o[i].topic,
               (int)o[i].partition, o[i].st.ProducerId, (int)o[i].st.ProducerEpoch,
               (int)o[i].st.CoordinatorEpoch, o[i].st.CurrentTxnStartOffset, o[i].st.LastTimestamp,
               age_ms / 60000);
    }
    free(o);
out_md:
    rd_kafka_metadata_destroy(md);
out:
    arena_free(a);
    rd_kafka_destroy(rk);
    return rc;
}

/* ---- abort --------------------------------------------------------------------------- */

static int txn_abort(const struct tally_ctx *ctx, const char *topic, int32_t partition,
                     int64_t start)
{
    int rc = TALLY_FAIL;
    struct arena *a = NULL;
    struct open_txn *o = NULL;
    size_t n = 0;

    rd_kafka_t *rk = tally_connect(ctx);
    if (rk == NULL)
        return TALLY_FAIL;
    const struct rd_kafka_metadata *md = tally_metadata(rk, ctx, NULL);
    if (md == NULL)
        goto out;
    const struct rd_kafka_metadata_topic *t = find_topic(md, topic);
    if (t == NULL || t->partition_cnt == 0) {
        tally_fail("topic '%s' does not exist", topic);
        goto out_md;
    }
    if (partition >= t->partition_cnt) {
        tally_fail("topic '%s' has no partition %d", topic, (int)partition);
        goto out_md;
    }
    a = arena_new(ARENA_BYTES);
    if (a == NULL) {
        tally_fail("out of memory");
        goto out_md;
    }
    if (collect_open(ctx, md, -1, topic, partition, a, &o, &n) != TALLY_OK)
        goto out_md;
    const struct open_txn *hit = NULL;
    for (size_t i = 0; i < n; i++)
        if (o[i].st.CurrentTxnStartOffset == start)
            hit = &o[i];
    if (hit == NULL) {
        tally_fail("no open transaction starts at offset %" PRId64 " of %s-%d", start, topic,
                   (int)partition);
        goto out_o;
    }
    const struct rd_kafka_metadata_broker *b = find_broker(md, hit->leader);
    if (b == NULL) {
        tally_fail("leader %d of %s-%d is not in the metadata", (int)hit->leader, topic,
                   (int)partition);
        goto out_o;
    }
    int32_t parts[1] = {partition};
    struct WritableTxnMarkerTopic mt = {.Name = (char *)topic, .PartitionIndexes = {parts, 1}};
    struct WritableTxnMarker m = {.ProducerId = hit->st.ProducerId,
                                  .ProducerEpoch = hit->st.ProducerEpoch,
                                  .TransactionResult = false,
                                  .Topics = {&mt, 1},
                                  .CoordinatorEpoch =
                                      hit->st.CoordinatorEpoch > 0 ? hit->st.CoordinatorEpoch : 0};
    struct WriteTxnMarkersRequest req = {.Markers = {&m, 1}};
    char what[300];
    void *out = NULL;
    snprintf(what, sizeof what, "WriteTxnMarkers to broker %d (%s:%d)", (int)b->id, b->host,
             b->port);
    if (tally_wire_call(ctx, b->host, b->port, PROTO_API_WriteTxnMarkers, 1, &req, a, &out, what) !=
        TALLY_OK)
        goto out_o;
    struct WriteTxnMarkersResponse *resp = out;
    int16_t code = -1;
    for (int32_t i = 0; i < resp->Markers.n; i++)
        for (int32_t ti = 0; ti < resp->Markers.v[i].Topics.n; ti++)
            for (int32_t pi = 0; pi < resp->Markers.v[i].Topics.v[ti].Partitions.n; pi++)
                code = resp->Markers.v[i].Topics.v[ti].Partitions.v[pi].ErrorCode;
    if (code != 0) {
        tally_fail("%s: %s", what, code < 0 ? "no answer for the partition" : err_name(code));
        goto out_o;
    }
    printf("Aborted the transaction of producer %" PRId64 " (epoch %d) that started at offset "
           "%" PRId64 " of %s-%d\n",
           hit->st.ProducerId, (int)hit->st.ProducerEpoch, start, topic, (int)partition);
    rc = TALLY_OK;
out_o:
    free(o);
out_md:
    rd_kafka_metadata_destroy(md);
out:
    arena_free(a);
    rd_kafka_destroy(rk);
    return rc;
}

/* ---- the LSO holder, for topics describe --------------------------------------------- */

int tally_open_txn_at(const struct tally_ctx *ctx, const char *host, int port, const char *topic,
                      int32_t partition, int64_t offset, int64_t *producer_id, int16_t *epoch)
{
    struct arena *a = arena_new(16 << 20);
    int32_t parts[1] = {partition};
    struct DescribeProducersTopicRequest t = {.Name = (char *)topic,
                                              .PartitionIndexes = {parts, 1}};
    struct DescribeProducersRequest req = {.Topics = {&t, 1}};
    void *out = NULL;
    int rc = TALLY_FAIL;

    if (a == NULL)
        return tally_fail("out of memory");
    if (tally_wire_call(ctx, host, port, PROTO_API_DescribeProducers, 0, &req, a, &out,
                        "DescribeProducers") != TALLY_OK)
        goto out;
    struct DescribeProducersResponse *r = out;
    for (int32_t ti = 0; ti < r->Topics.n; ti++)
        for (int32_t pi = 0; pi < r->Topics.v[ti].Partitions.n; pi++) {
            struct DescribeProducersPartitionResponse *pr = &r->Topics.v[ti].Partitions.v[pi];
            for (int32_t k = 0; k < pr->ActiveProducers.n; k++)
                if (pr->ActiveProducers.v[k].CurrentTxnStartOffset == offset) {
                    *producer_id = pr->ActiveProducers.v[k].ProducerId;
                    *epoch = pr->ActiveProducers.v[k].ProducerEpoch;
                    rc = TALLY_OK;
                }
        }
out:
    arena_free(a);
    return rc;
}

int tally_txn_id_of(const struct tally_ctx *ctx, const struct rd_kafka_metadata *md,
                    int64_t producer_id, char *buf, size_t cap)
{
    struct arena *a = arena_new(16 << 20);
    int64_t pids[1] = {producer_id};
    struct ListTransactionsRequest req = {.ProducerIdFilters = {pids, 1}};
    struct row *rows = NULL;
    size_t n = 0;
    int rc = TALLY_FAIL;

    if (a == NULL)
        return TALLY_FAIL;
    list_all(ctx, md, &req, a, &rows, &n);
    for (size_t i = 0; i < n; i++)
        if (rows[i].producer_id == producer_id) {
            snprintf(buf, cap, "%s", rows[i].tid);
            rc = TALLY_OK;
        }
    free(rows);
    arena_free(a);
    return rc;
}

/* ---- command line -------------------------------------------------------------------- */

static bool parse_long(const char *s, long min, long max, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
        return false;
    *out = v;
    return true;
}

int tally_txn_main(const struct tally_ctx *ctx, int argc, char **argv)
{
    if (argc < 2 || tally_is_help(argv[1])) {
        fputs(txn_usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? TALLY_USAGE : TALLY_OK;
    }
    const char *cmd = argv[1];
    const char *state = NULL, *topic = NULL, *tid = NULL;
    long broker = -1, partition = -1, start = -1, minutes = DEFAULT_HANGING_MINUTES;
    for (int i = 2; i < argc; i++) {
        const char *o = argv[i];
        bool has = i + 1 < argc;
        if (tally_is_help(o)) {
            fputs(txn_usage, stdout);
            return TALLY_OK;
        } else if (strcmp(o, "--state") == 0 && strcmp(cmd, "list") == 0) {
            if (!has || argv[i + 1][0] == '\0')
                return tally_usage_error("--state needs a state name");
            state = argv[++i];
        } else if (strcmp(o, "--broker") == 0 && strcmp(cmd, "find-hanging") == 0) {
            if (!has || !parse_long(argv[i + 1], 0, INT32_MAX, &broker))
                return tally_usage_error("--broker needs a broker id");
            i++;
        } else if (strcmp(o, "--max-transaction-timeout") == 0 &&
                   strcmp(cmd, "find-hanging") == 0) {
            if (!has || !parse_long(argv[i + 1], 0, 1000000, &minutes))
                return tally_usage_error("--max-transaction-timeout needs minutes >= 0");
            i++;
        } else if (strcmp(o, "--topic") == 0 && strcmp(cmd, "abort") == 0) {
            if (!has || argv[i + 1][0] == '\0')
                return tally_usage_error("--topic needs a topic name");
            topic = argv[++i];
        } else if (strcmp(o, "--partition") == 0 && strcmp(cmd, "abort") == 0) {
            if (!has || !parse_long(argv[i + 1], 0, 1000000, &partition))
                return tally_usage_error("--partition needs a partition number >= 0");
            i++;
        } else if (strcmp(o, "--start-offset") == 0 && strcmp(cmd, "abort") == 0) {
            if (!has || !parse_long(argv[i + 1], 0, LONG_MAX, &start))
                return tally_usage_error("--start-offset needs an offset >= 0");
            i++;
        } else if (o[0] != '-' && strcmp(cmd, "describe") == 0 && tid == NULL) {
            tid = o;
        } else {
            return tally_usage_error("unexpected argument '%s' for transactions %s", o, cmd);
        }
    }
    if (strcmp(cmd, "list") == 0)
        return txn_list(ctx, state);
    if (strcmp(cmd, "describe") == 0) {
        if (tid == NULL)
            return tally_usage_error("transactions describe needs a transactional id");
        return txn_describe(ctx, tid);
    }
    if (strcmp(cmd, "find-hanging") == 0)
        return txn_find_hanging(ctx, (int32_t)broker, minutes);
    if (strcmp(cmd, "abort") == 0) {
        if (topic == NULL || partition < 0 || start < 0)
            return tally_usage_error(
                "transactions abort needs --topic, --partition and --start-offset");
        return txn_abort(ctx, topic, (int32_t)partition, start);
    }
    return tally_usage_error("unknown transactions command '%s'", cmd);
}
