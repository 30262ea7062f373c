/* SPDX-License-Identifier: Apache-2.0 */
/* Fetch: sessionless full fetches with long polling. Each partition's data is a byte range
 * of a segment file that the network layer sends with sendfile(); the broker never touches
 * the bytes. A fetch that finds fewer than MinBytes parks in the broker's purgatory, watching
 * the read bound of each of its partitions (log end for a follower, high watermark for a
 * consumer, last stable offset for read_committed) past what it saw; each wake looks again,
 * and it answers once: with MinBytes, on an error, at MaxWaitMs, or at a stop. A parked fetch
 * whose connection closes is dropped at once with what it holds.
 *
 * Old versions are the exception (Kafka 3.x serves them, KIP-896 dropped them in 4.0): Fetch
 * v0-3 clients read only magic 0/1 messages, so their data is read and converted (magic 0
 * for v0-1, 1 for v2-3) on libuv's thread pool and sent from memory, unless the topic says
 * message.downconversion.enable=false (UNSUPPORTED_VERSION then, as Kafka answers); Fetch v4-9
 * clients cannot decode zstd (KIP-110), so their batches' headers are read there too and a
 * partition holding a zstd batch answers UNSUPPORTED_COMPRESSION_TYPE. Everyone else keeps
 * sendfile().
 *
 * The event loop never waits for the disk here (KAFKA-7504): each partition is located with
 * partition_read_nowait, whose index and header reads fail rather than wait when a page is not
 * in the page cache. A fetch that meets such a "cold" partition reads the ranges named on
 * libuv's thread pool (warm_run) and then looks again, at most FETCH_WARM_ROUNDS times (a
 * partition still cold after that answers with no records, and the client fetches again); the
 * net layer does the same for the bytes sent (net_options.io). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "authz/authz.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/pool.h"
#include "base/slog.h"
#include "base/purgatory.h"
#include "base/sysio.h"
#include "broker_int.h"
#include "meta/meta.h"
#include "net/net.h"
#include "record/record.h"
#include "replica/partition_sm.h"
#include "replica/replica.h"
#include "replica/throttle.h"

/* The first Fetch version whose readers take magic 2 batches, and the first that takes zstd. */
#define FETCH_V_MAGIC2 4
#define FETCH_V_ZSTD 10

/* Warm-up rounds per fetch (an index page, then the batches, then a margin for pages the cache
 * dropped meanwhile). */
#define FETCH_WARM_ROUNDS 4

/* One requested partition. */
struct fetch_part {
    struct fetch_call *call;
    struct partition *p; /* held; NULL when unknown */
    const struct FetchPartition *in;
    struct FetchPartitionData *out;
    struct partition_slice slice;
    bool has_slice;
    struct net_file_range range;
    struct purgatory_watch watch;  /* on the partition's read bound, while parked */
    struct record_legacy_buf conv; /* Fetch v0-3: the slice as magic 0/1 messages */
    int conv_rc;                   /* from the thread pool: 0 or the partition's error */
    bool diverging;                /* a replica's log diverges: DivergingEpoch, no records */
    bool throttle_counted;         /* its bytes count toward the leader's replication quota */
    char *txn_warm; /* read_committed: a cold .txnindex to read on the pool (malloc()ed) */
};

struct fetch_call {
    struct broker *b;
    struct net_request *req;
    struct FetchResponse *rs;
    struct fetch_part *parts;
    int32_t n_parts;
    struct purgatory_op op; /* while parked */
    bool evaluated;         /* the slices in hand are the answer's (no second look) */
    bool held;              /* a partition was held back by a replication throttle */
    bool cold;              /* a partition's read needs pages not in the page cache */
    int warm_rounds;        /* warm-ups done (FETCH_WARM_ROUNDS) */
    struct pool_job work;   /* converting or checking old versions' data on the pool */
    struct pool_job warm;   /* reading cold partitions' ranges into the page cache */
};

static void release_slices(struct fetch_call *c)
{
    for (int32_t i = 0; i < c->n_parts; i++) {
        struct fetch_part *fp = &c->parts[i];
        if (fp->has_slice) {
            partition_slice_release(fp->p, &fp->slice);
            fp->has_slice = false;
        }
    }
}

static void call_free(struct fetch_call *c)
{
    struct broker *b = c->b;
    for (int32_t i = 0; c->parts && i < c->n_parts; i++) {
        record_legacy_buf_free(&c->parts[i].conv);
        free(c->parts[i].txn_warm);
    }
    free(c->parts);
    free(c);
    b->live_fetches--;
    broker_maybe_finish_stop(b);
}

/* Runs once the response left (or will never leave): drops the file ranges and holds. */
static void fetch_sent(void *arg)
{
    struct fetch_call *c = arg;
    release_slices(c);
    for (int32_t i = 0; i < c->n_parts; i++)
        if (c->parts[i].p)
            partition_release(c->parts[i].p);
    call_free(c);
}

/* Who reads, which decides how far (replica/ owns the bounds): a follower to the log end, a
 * consumer to the high watermark or, read_committed, the last stable offset. */
static enum partition_reader fetch_reader(const struct FetchRequest *rq)
{
    if (rq->ReplicaId >= 0)
        return PARTITION_READ_REPLICA;
    return rq->IsolationLevel == 1 ? PARTITION_READ_COMMITTED : PARTITION_READ_UNCOMMITTED;
}

/* Reads what each partition has now. Returns the bytes found; partitions with errors get
 * their ErrorCode; *any_error is set when one has. */
static size_t evaluate(struct fetch_call *c, bool *any_error)
{
    struct FetchRequest *rq = c->req->body;
    size_t total = 0, max_total = rq->MaxBytes > 0 ? (size_t)rq->MaxBytes : 0;
    size_t throttled = 0; /* bytes of partitions whose bytes count toward the leader's quota */
    enum partition_reader reader = fetch_reader(rq);

    *any_error = false;
    c->cold = false;
    for (int32_t i = 0; i < c->n_parts; i++) {
        struct fetch_part *fp = &c->parts[i];
        struct FetchPartitionData *o = fp->out;
        struct partition *p = fp->p;
        int rc;

        if (o->ErrorCode != 0 || fp->diverging) {
            /* An error, or a divergence the follower must hear of at once (no records). */
            *any_error = true;
            continue;
        }
        if (!partition_online(p)) {
            o->ErrorCode = ERR_UNKNOWN_TOPIC_OR_PARTITION;
            *any_error = true;
            continue;
        }
        if (partition_role(p) != REPLICA_LEADER) {
            /* Leadership moved while the fetch waited. */
            o->ErrorCode = ERR_NOT_LEADER_OR_FOLLOWER;
            *any_error = true;
            continue;
        }
        rc = broker_check_epoch(partition_leader_epoch(p), fp->in->CurrentLeaderEpoch);
        if (rc == 0 && c->req->hdr.RequestApiVersion < FETCH_V_MAGIC2 && rq->ReplicaId < 0 &&
            !partition_settings(p)->down_conversion)
            rc = ERR_UNSUPPORTED_VERSION; /* the client reads only what needs converting */
        o->HighWatermark = partition_high_watermark(p);
        o->LastStableOffset = partition_last_stable_offset(p);
        o->LogStartOffset = partition_log_start_offset(p);
        if (rc != 0) {
            o->ErrorCode = (int16_t)rc;
            *any_error = true;
            continue;
        }
        if (fp->has_slice) {
            partition_slice_release(p, &fp->slice);
            fp->has_slice = false;
        }
        size_t budget = fp->in->PartitionMaxBytes > 0 ? (size_t)fp->in->PartitionMaxBytes : 0;
        bool held = false;
        if (total >= max_total && total > 0)
            budget = 0; /* only the offset is checked */
        else if (max_total - total < budget)
            budget = max_total - total;
        /* Replication throttles (Kafka's ReplicationQuotaManager): a follower out of the ISR
         * of a throttled partition gets what leader.replication.throttled.rate still allows,
         * nothing once it is spent (the fetch then waits like one that found no data). */
        fp->throttle_counted = false;
        if (reader == PARTITION_READ_REPLICA && budget > 0) {
            size_t allowed = partition_leader_throttle(p, rq->ReplicaId, budget, throttled,
                                                       &fp->throttle_counted);
            held = allowed == 0;
            budget = held ? 0 : allowed;
            c->held = c->held || held;
        }
        rc = partition_read_nowait(p, fp->in->FetchOffset, budget, reader, &fp->slice);
        if (rc != 0) {
            o->ErrorCode = (int16_t)(rc == ERR_IO ? ERR_KAFKA_STORAGE_ERROR : err_wire(rc));
            *any_error = true;
            continue;
        }
        fp->has_slice = true;
        if (fp->slice.cold) {
            c->cold = true; /* held (it names what to warm), no bytes yet */
            continue;
        }
        /* read_committed: the aborted transactions send_answer adds come from the segments'
         * .txnindex files, read into memory once; one not in the page cache is read on the
         * pool first, as the slice's own pages are. */
        free(fp->txn_warm);
        fp->txn_warm = NULL;
        if (rq->IsolationLevel == 1 && rq->ReplicaId < 0 && fp->slice.len > 0) {
            char path[PATH_MAX];
            if (partition_aborted_txns_ready(p, fp->in->FetchOffset, fp->slice.next_offset, path,
                                             sizeof path) == ERR_WOULD_BLOCK &&
                (fp->txn_warm = strdup(path)) != NULL) {
                partition_slice_release(p, &fp->slice);
                fp->has_slice = false;
                c->cold = true;
                continue;
            }
        }
        /* Only the first partition with data may exceed the limits (KIP-74: so that a batch
         * larger than the limits can still be consumed); a throttled one held back sends
         * nothing (its offset was checked). */
        if (held || (total >= max_total && total > 0) || (total > 0 && fp->slice.len > budget)) {
            partition_slice_release(p, &fp->slice);
            fp->has_slice = false;
            continue;
        }
        total += fp->slice.len;
        if (fp->throttle_counted)
            throttled += fp->slice.len;
    }
    return total;
}

/* read_committed: the aborted transactions overlapping what is returned, from the fetch
 * offset up to the offset after the slice's last batch (Kafka's upper bound). */
static void add_aborted(struct fetch_call *c, struct fetch_part *fp)
{
    struct FetchPartitionData *o = fp->out;
    struct partition_aborted_txn *v = NULL;
    size_t n = 0;
    int rc = partition_aborted_txns(fp->p, fp->in->FetchOffset, fp->slice.next_offset, &v, &n);

    if (rc != 0) {
        static struct slog_limit lim;
        slog_warn_limited(&lim, 10000, "broker", "%s-%d: cannot read aborted transactions: %s",
                          partition_topic(fp->p), o->PartitionIndex, err_name(rc));
        o->ErrorCode = (int16_t)(rc == ERR_IO ? ERR_KAFKA_STORAGE_ERROR : err_wire(rc));
        return;
    }
    if (n > 0) {
        o->AbortedTransactions.v = arena_alloc(c->req->arena, n * sizeof *o->AbortedTransactions.v);
        if (o->AbortedTransactions.v == NULL) {
            o->ErrorCode = ERR_UNKNOWN_SERVER_ERROR;
            n = 0;
        }
        for (size_t k = 0; k < n; k++) {
            o->AbortedTransactions.v[k].ProducerId = v[k].producer_id;
            o->AbortedTransactions.v[k].FirstOffset = v[k].first_offset;
        }
        o->AbortedTransactions.n = (int32_t)n;
    }
    free(v);
}

/* docs/metrics.md: bytes of records answered, to consumers per topic, to followers in all. */
static void count_bytes_out(struct fetch_call *c)
{
    struct FetchRequest *rq = c->req->body;
    if (c->b->m_bytes_out == NULL)
        return;
    for (int32_t i = 0; i < c->n_parts; i++) {
        const struct fetch_part *fp = &c->parts[i];
        if (fp->p == NULL || fp->out->Records.len <= 0)
            continue;
        if (rq->ReplicaId >= 0)
            metrics_add(c->b->m_replication_out, fp->out->Records.len);
        else
            metrics_add(metrics_series1(c->b->m_bytes_out, partition_topic(fp->p)),
                        fp->out->Records.len);
    }
}

static void send_answer(struct fetch_call *c)
{
    struct FetchRequest *rq = c->req->body;
    bool converted = c->req->hdr.RequestApiVersion < FETCH_V_MAGIC2;
    for (int32_t i = 0; i < c->n_parts; i++) {
        struct fetch_part *fp = &c->parts[i];
        struct FetchPartitionData *o = fp->out;
        o->AbortedTransactions.n = rq->IsolationLevel == 1 ? 0 : -1;
        o->Records.data = NULL;
        o->Records.len = 0;
        o->Records.ext = NULL;
        if (o->ErrorCode == 0 && fp->conv_rc != 0)
            o->ErrorCode =
                (int16_t)(fp->conv_rc == ERR_IO ? ERR_KAFKA_STORAGE_ERROR : err_wire(fp->conv_rc));
        if (converted) {
            /* From memory: the converted messages (freed with the call). */
            if (o->ErrorCode == 0 && fp->conv.len > 0) {
                o->Records.data = fp->conv.data;
                o->Records.len = (int32_t)fp->conv.len;
            }
            continue;
        }
        if (rq->IsolationLevel == 1 && rq->ReplicaId < 0 && fp->has_slice && fp->slice.len > 0 &&
            o->ErrorCode == 0)
            add_aborted(c, fp);
        if (fp->has_slice && fp->slice.len > 0 && o->ErrorCode == 0) {
            /* Every byte of a throttled partition counts, an in-sync follower's too (Kafka:
             * the whole replication traffic of throttled replicas stays under the rate). */
            if (fp->throttle_counted)
                partition_leader_sent(fp->p, fp->slice.len);
            fp->range.fd = fp->slice.fd;
            fp->range.pos = (int64_t)fp->slice.pos;
            fp->range.len = fp->slice.len;
            o->Records.len = (int32_t)fp->slice.len;
            o->Records.ext = &fp->range;
        }
    }
    count_bytes_out(c);
    /* consumer_byte_rate (KIP-219) on the bytes returned to a consumer (a follower's fetches
     * have replication quotas instead). */
    if (rq->ReplicaId < 0) {
        int64_t bytes = 0;
        for (int32_t i = 0; i < c->n_parts; i++)
            if (c->parts[i].out->Records.len > 0)
                bytes += c->parts[i].out->Records.len;
        c->rs->ThrottleTimeMs =
            broker_client_throttle(c->b, c->req, META_QUOTA_CONSUMER_BYTE_RATE, bytes);
    }
    net_respond_files(c->req, c->rs, fetch_sent, c);
}

/* Fetch v4-9: whether the slice holds a zstd batch. The slice is read in one go (it is at
 * most the fetch's budget, or one batch past it) and only the batch headers are looked at. */
static int check_zstd(const struct partition_slice *s)
{
    uint8_t *buf = malloc(s->len);
    size_t got = 0, pos = 0;
    int rc = 0;

    if (buf == NULL)
        return ERR_NOMEM;
    while (got < s->len) {
        ssize_t n = pread(s->fd, buf + got, s->len - got, (off_t)s->pos + (off_t)got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            rc = ERR_IO;
            goto out;
        }
        got += (size_t)n;
    }
    while (pos < got) {
        struct record_batch hdr;
        rc = record_batch_parse_header(buf + pos, got - pos, &hdr);
        if (rc != 0)
            break;
        if ((hdr.attributes & RECORD_ATTR_COMPRESSION_MASK) == RECORD_CODEC_ZSTD) {
            rc = ERR_UNSUPPORTED_COMPRESSION_TYPE;
            break;
        }
        pos += record_batch_size(&hdr);
    }
out:
    free(buf);
    return rc;
}

/* Thread pool, for Fetch below v10: reads the slice (the slice pins the segment; nothing else
 * is touched) and, below v4, converts its batches one by one to magic 0/1 messages; from v4,
 * only looks for zstd. Returns 0 or the partition's error. */
static int convert_part(struct fetch_part *fp, int16_t version)
{
    struct partition_slice s = fp->slice; /* a moving window over the held slice */
    int to_magic = version <= 1 ? 0 : 1;

    if (version >= FETCH_V_MAGIC2)
        return check_zstd(&fp->slice);

    while (s.len > 0) {
        uint8_t *buf;
        size_t len;
        int rc = partition_slice_first_batch(&s, s.len, &buf, &len);
        if (rc == ERR_NOTFOUND)
            break;
        if (rc == 0)
            rc = record_legacy_append_batch(&fp->conv, buf, len, to_magic, fp->in->FetchOffset,
                                            RECORD_DECOMPRESS_MAX);
        free(buf);
        if (rc != 0)
            return rc;
        s.pos += (int64_t)len;
        s.len -= len;
    }
    return 0;
}

static void convert_run(uv_work_t *w)
{
    struct fetch_call *c = w->data;
    int16_t version = c->req->hdr.RequestApiVersion;
    for (int32_t i = 0; i < c->n_parts; i++) {
        struct fetch_part *fp = &c->parts[i];
        if (fp->has_slice && fp->slice.len > 0 && fp->out->ErrorCode == 0)
            fp->conv_rc = convert_part(fp, version);
    }
}

static void convert_done(uv_work_t *w, int status)
{
    struct fetch_call *c = w->data;
    if (status != 0)
        for (int32_t i = 0; i < c->n_parts; i++)
            c->parts[i].conv_rc = ERR_NOMEM;
    send_answer(c);
}

static void respond(struct fetch_call *c);

/* Thread pool: brings a whole (small) file into the page cache. A file gone meanwhile (a
 * segment deleted) is no error: the next look finds what is there. */
static void warm_file(const char *path)
{
    const struct sysio *io = sysio_default();
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    (void)sysio_warm_full(io, fd, 0, SIZE_MAX >> 1);
    close(fd);
}

/* Thread pool: brings each cold partition's range into the page cache. Touches only the held
 * slices. A failed read is not an error here: the next look on the loop finds the page still
 * cold, or the log reports it. */
static void warm_run(uv_work_t *w)
{
    struct fetch_call *c = w->data;

    for (int32_t i = 0; i < c->n_parts; i++) {
        const struct partition_slice *s = &c->parts[i].slice;
        if (c->parts[i].txn_warm)
            warm_file(c->parts[i].txn_warm);
        if (c->parts[i].has_slice && s->cold)
            partition_slice_warm(s);
    }
}

static void warm_done(uv_work_t *w, int status)
{
    struct fetch_call *c = w->data;
    bool any_error;

    (void)status;
    c->warm_rounds++;
    evaluate(c, &any_error);
    respond(c);
}

/* Answers with what the fetch holds; a partition whose pages are not in the page cache is
 * warmed on the thread pool first, and Fetch below v10 passes through it too. */
static void respond(struct fetch_call *c)
{
    bool work = false;

    if (c->cold && c->warm_rounds < FETCH_WARM_ROUNDS) {
        /* The call stays whole until warm_done: a close now only drops the answer. */
        net_request_on_close(c->req, NULL, NULL);
        c->warm.work.data = c;
        if (pool_submit(c->b->loop, &c->warm, warm_run, warm_done) == 0)
            return;
        c->warm_rounds = FETCH_WARM_ROUNDS; /* answer with what is warm */
    }

    if (c->req->hdr.RequestApiVersion < FETCH_V_ZSTD)
        for (int32_t i = 0; i < c->n_parts && !work; i++)
            work = c->parts[i].has_slice && c->parts[i].slice.len > 0 &&
                   c->parts[i].out->ErrorCode == 0;
    if (!work) {
        send_answer(c);
        return;
    }
    /* The call stays whole until convert_done: a close now only drops the answer. */
    net_request_on_close(c->req, NULL, NULL);
    c->work.work.data = c;
    if (pool_submit(c->b->loop, &c->work, convert_run, convert_done) != 0) {
        for (int32_t i = 0; i < c->n_parts; i++)
            c->parts[i].conv_rc = ERR_NOMEM;
        send_answer(c);
    }
}

/* Watches the partition's read bound for data past both the fetch offset and what the last
 * look saw. Returns true when there is no need to wait (the bound is already past, or the
 * partition went offline). */
static bool watch_part(struct fetch_call *c, struct fetch_part *fp)
{
    struct FetchRequest *rq = c->req->body;
    enum partition_mark m = partition_reader_mark(fetch_reader(rq));
    int64_t seen = partition_mark(fp->p, m);
    int64_t from = fp->in->FetchOffset > seen ? fp->in->FetchOffset : seen;
    return partition_watch(fp->p, m, from + 1, &fp->watch);
}

/* Looks at every partition; true when the fetch should answer with what it found. */
static bool ready(struct fetch_call *c)
{
    struct FetchRequest *rq = c->req->body;
    bool any_error;
    size_t total = evaluate(c, &any_error);
    return total >= (size_t)(rq->MinBytes > 0 ? rq->MinBytes : 1) || any_error || c->cold ||
           c->b->stopping;
}

/* A watched bound moved (or its partition went offline). */
static void on_wake(struct purgatory_op *op, struct purgatory_watch *w)
{
    struct fetch_call *c = op->data;
    struct fetch_part *fp = (struct fetch_part *)((char *)w - offsetof(struct fetch_part, watch));

    if (ready(c)) {
        c->evaluated = true;
        purgatory_complete(op);
        return;
    }
    release_slices(c);
    if (watch_part(c, fp))
        purgatory_complete(op);
}

/* Answers once, whatever ended the wait (the data, MaxWaitMs, a stop). */
static void on_done(struct purgatory_op *op, int result)
{
    struct fetch_call *c = op->data;
    bool any_error;
    (void)result;
    if (!c->evaluated)
        evaluate(c, &any_error);
    respond(c);
}

/* The client went away while the fetch was parked: nothing to answer, drop it now. */
static void on_connection_closed(void *arg)
{
    struct fetch_call *c = arg;
    struct net_request *req = c->req;
    slog_debug("broker", "dropped a waiting Fetch from %s: the client closed its connection",
               req->peer);
    purgatory_cancel(&c->op);
    fetch_sent(c); /* releases the holds and frees c */
    net_finish(req);
}

/* Parks the fetch until one of its partitions has more to read, or MaxWaitMs. */
static void park(struct broker *b, struct fetch_call *c)
{
    struct FetchRequest *rq = c->req->body;
    bool now = false;

    release_slices(c);
    purgatory_op_init(b->pg, &c->op, on_wake, on_done, c);
    for (int32_t i = 0; i < c->n_parts; i++) {
        struct fetch_part *fp = &c->parts[i];
        purgatory_watch_init(&c->op, &fp->watch);
        if (fp->p && !now)
            now = watch_part(c, fp);
    }
    if (now || !net_request_on_close(c->req, on_connection_closed, c)) {
        purgatory_complete(&c->op);
        return;
    }
    /* Held back by a throttle: the quota frees up slot by slot whether data comes or not, so
     * the fetch looks again after a slot rather than replica.fetch.wait.max.ms. */
    purgatory_op_start(&c->op, c->held && rq->MaxWaitMs > THROTTLE_SLOT_MS ? THROTTLE_SLOT_MS
                                                                           : rq->MaxWaitMs);
}

/* A replica's fetch of one partition, through the partition's replication state machine.
 * Returns the partition's error; a divergence is answered with DivergingEpoch and no data. */
static int follower_fetch(struct fetch_part *fp, int32_t replica_id)
{
    struct psm_fetch f = {
        .replica_id = replica_id,
        .current_leader_epoch = fp->in->CurrentLeaderEpoch,
        .fetch_offset = fp->in->FetchOffset,
        .last_fetched_epoch = fp->in->LastFetchedEpoch,
    };
    struct psm_fetch_verdict v;
    int rc = partition_follower_fetch(fp->p, &f, &v);
    fp->out->HighWatermark = v.high_watermark;
    fp->out->LogStartOffset = v.log_start;
    if (rc == 0 && v.diverging) {
        fp->diverging = true;
        fp->out->DivergingEpoch.Epoch = v.diverging_epoch;
        fp->out->DivergingEpoch.EndOffset = v.diverging_end_offset;
    }
    return rc;
}

/* Builds the response skeleton and resolves every requested partition. */
static int prepare(struct broker *b, struct fetch_call *c)
{
    struct net_request *req = c->req;
    struct FetchRequest *rq = req->body;
    struct arena *ar = req->arena;
    bool by_id = req->hdr.RequestApiVersion >= 13;
    int32_t nt = rq->Topics.n > 0 ? rq->Topics.n : 0, n_parts = 0, k = 0;
    static const struct broker_shape shape = {
        sizeof(struct FetchTopic),
        offsetof(struct FetchTopic, Topic),
        offsetof(struct FetchTopic, Partitions),
        sizeof(struct FetchPartition),
        offsetof(struct FetchPartition, Partition),
        sizeof(struct FetchableTopicResponse),
        offsetof(struct FetchableTopicResponse, Topic),
        offsetof(struct FetchableTopicResponse, Partitions),
        sizeof(struct FetchPartitionData),
        offsetof(struct FetchPartitionData, PartitionIndex),
    };

    for (int32_t i = 0; i < nt; i++)
        n_parts += rq->Topics.v[i].Partitions.n > 0 ? rq->Topics.v[i].Partitions.n : 0;
    c->rs = arena_alloc(ar, sizeof *c->rs);
    c->parts = calloc((size_t)n_parts + 1, sizeof *c->parts);
    if (c->rs == NULL || c->parts == NULL)
        return ERR_NOMEM;
    c->n_parts = n_parts;
    if (broker_response_skeleton(ar, &rq->Topics, &c->rs->Responses, &shape) != 0)
        return ERR_NOMEM;
    /* A replica's fetch needs CLUSTER_ACTION on the cluster, a consumer's READ on each topic
     * (Kafka answers TOPIC_AUTHORIZATION_FAILED in each partition for both). */
    bool replica_denied =
        rq->ReplicaId >= 0 &&
        !authz_allowed(req, PROTO_ACL_OP_CLUSTER_ACTION, PROTO_RESOURCE_CLUSTER, AUTHZ_CLUSTER);
    for (int32_t i = 0; i < nt; i++) {
        struct FetchTopic *t = &rq->Topics.v[i];
        struct FetchableTopicResponse *tr = &c->rs->Responses.v[i];
        int32_t np = tr->Partitions.n;
        tr->TopicId = t->TopicId;
        bool denied = replica_denied;
        if (!denied && rq->ReplicaId < 0 && authz_on(req)) {
            /* By id (v13): the name from the image; an id it does not know is answered
             * UNKNOWN_TOPIC_ID below, and a broker without an image (tests) refuses. */
            const struct meta_topic *mt =
                by_id && b->meta ? meta_topic_by_id(b->meta, t->TopicId.b) : NULL;
            const char *name = by_id ? (mt ? mt->name : NULL) : (t->Topic ? t->Topic : "");
            denied = name != NULL
                         ? !authz_allowed(req, PROTO_ACL_OP_READ, PROTO_RESOURCE_TOPIC, name)
                         : b->meta == NULL;
        }
        for (int32_t j = 0; j < np; j++) {
            static const struct FetchPartitionData defaults = FETCH_PARTITION_DATA_DEFAULTS;
            struct fetch_part *fp = &c->parts[k++];
            struct FetchPartitionData *o = &tr->Partitions.v[j];
            *o = defaults;
            o->PartitionIndex = t->Partitions.v[j].Partition; /* defaults cleared it */
            o->HighWatermark = -1;
            o->AbortedTransactions.n = -1;
            fp->call = c;
            fp->in = &t->Partitions.v[j];
            fp->out = o;
            /* Consumers and followers alike fetch from the leader (no KIP-392 follower
             * fetching). */
            int rc = denied  ? ERR_TOPIC_AUTHORIZATION_FAILED
                     : by_id ? replica_leader_partition_by_id(b->replicas, t->TopicId.b,
                                                              o->PartitionIndex, &fp->p)
                             : replica_leader_partition(b->replicas, t->Topic ? t->Topic : "",
                                                        o->PartitionIndex, &fp->p);
            /* A replica's fetch: checked first — a replica of the partition, at the leader's
             * epoch, whose log does not diverge — and only then is its fetch offset taken as
             * its log end (which may move the high watermark and grow the ISR). */
            if (rc == 0 && rq->ReplicaId >= 0)
                rc = rq->ReplicaId == b->node_id ? ERR_NOT_LEADER_OR_FOLLOWER
                                                 : follower_fetch(fp, rq->ReplicaId);
            if (rc == 0) {
                partition_hold(fp->p);
                if (rq->ReplicaId < 0)
                    metrics_add(metrics_series1(b->m_fetch_requests, partition_topic(fp->p)), 1);
            } else {
                fp->p = NULL;
                o->ErrorCode = (int16_t)rc;
            }
        }
    }
    return 0;
}

void broker_fetch(struct broker *b, struct net_request *req)
{
    struct FetchRequest *rq = req->body;
    struct fetch_call *c = calloc(1, sizeof *c);
    bool any_error;

    if (c == NULL) {
        net_close_connection(req);
        return;
    }
    c->b = b;
    c->req = req;
    b->live_fetches++;
    if (prepare(b, c) != 0) {
        slog_error("broker", "out of memory in Fetch from %s; closing", req->peer);
        for (int32_t i = 0; c->parts && i < c->n_parts; i++)
            if (c->parts[i].p)
                partition_release(c->parts[i].p);
        call_free(c);
        net_close_connection(req);
        return;
    }
    /* Sessions (KIP-227) are not offered: SessionId 0 in every answer tells the client to
     * keep sending full fetches. An id we never gave out is an error. */
    if (req->hdr.RequestApiVersion >= 7 && (rq->SessionId != 0 || rq->SessionEpoch > 0)) {
        c->rs->ErrorCode =
            rq->SessionId != 0 ? ERR_FETCH_SESSION_ID_NOT_FOUND : ERR_INVALID_FETCH_SESSION_EPOCH;
        c->rs->Responses.n = 0;
        respond(c);
        return;
    }
    size_t total = evaluate(c, &any_error);
    if (total >= (size_t)(rq->MinBytes > 0 ? rq->MinBytes : 1) || any_error || c->cold ||
        rq->MaxWaitMs <= 0 || c->n_parts == 0 || b->stopping) {
        respond(c);
        return;
    }
    park(b, c);
}
