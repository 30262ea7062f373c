/* SPDX-License-Identifier: Apache-2.0 */
/* Fetch: sessionless full fetches with long polling. Each partition's data is a byte range
 * of a segment file that the network layer sends with sendfile(); the broker never touches
 * the bytes. A fetch that finds fewer than MinBytes parks in the broker's purgatory, watching
 * the read bound of each of its partitions (log end for a follower, high watermark for a
 * consumer, last stable offset for read_committed) past what it saw; each wake looks again,
 * and it answers once: with MinBytes, on an error, at MaxWaitMs, or at a stop. A parked fetch
 * whose connection closes is dropped at once with what it holds. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/err.h"
#include "base/log.h"
#include "base/purgatory.h"
#include "broker_int.h"
#include "log/log.h"
#include "net/net.h"
#include "replica/replica.h"

/* One requested partition. */
struct fetch_part {
    struct fetch_call *call;
    struct partition *p; /* held; NULL when unknown */
    const struct FetchPartition *in;
    struct FetchPartitionData *out;
    struct log_slice slice;
    bool has_slice;
    struct net_file_range range;
    struct purgatory_watch watch; /* on the partition's read bound, while parked */
};

struct fetch_call {
    struct broker *b;
    struct net_request *req;
    struct FetchResponse *rs;
    struct fetch_part *parts;
    int32_t n_parts;
    struct purgatory_op op; /* while parked */
    bool evaluated;         /* the slices in hand are the answer's (no second look) */
};

static void release_slices(struct fetch_call *c)
{
    for (int32_t i = 0; i < c->n_parts; i++) {
        struct fetch_part *fp = &c->parts[i];
        if (fp->has_slice) {
            log_slice_release(partition_log(fp->p), &fp->slice);
            fp->has_slice = false;
        }
    }
}

static void call_free(struct fetch_call *c)
{
    struct broker *b = c->b;
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

/* Reads what each partition has now. Returns the bytes found; partitions with errors get
 * their ErrorCode; *any_error is set when one has. */
static size_t evaluate(struct fetch_call *c, bool *any_error)
{
    struct FetchRequest *rq = c->req->body;
    size_t total = 0, max_total = rq->MaxBytes > 0 ? (size_t)rq->MaxBytes : 0;
    bool follower = rq->ReplicaId >= 0;

    *any_error = false;
    for (int32_t i = 0; i < c->n_parts; i++) {
        struct fetch_part *fp = &c->parts[i];
        struct FetchPartitionData *o = fp->out;
        struct partition *p = fp->p;
        int rc;

        if (o->ErrorCode != 0) {
            *any_error = true;
            continue;
        }
        if (!partition_online(p)) {
            o->ErrorCode = ERR_UNKNOWN_TOPIC_OR_PARTITION;
            *any_error = true;
            continue;
        }
        rc = broker_check_epoch(partition_leader_epoch(p), fp->in->CurrentLeaderEpoch);
        o->HighWatermark = partition_high_watermark(p);
        o->LastStableOffset = partition_last_stable_offset(p);
        o->LogStartOffset = partition_log_start_offset(p);
        if (rc != 0) {
            o->ErrorCode = (int16_t)rc;
            *any_error = true;
            continue;
        }
        int64_t offset = fp->in->FetchOffset;
        int64_t max_offset = follower                  ? partition_log_end_offset(p)
                             : rq->IsolationLevel == 1 ? o->LastStableOffset
                                                       : o->HighWatermark;
        if (offset < o->LogStartOffset || offset > partition_log_end_offset(p)) {
            o->ErrorCode = ERR_OFFSET_OUT_OF_RANGE;
            *any_error = true;
            continue;
        }
        if (fp->has_slice) {
            log_slice_release(partition_log(p), &fp->slice);
            fp->has_slice = false;
        }
        size_t budget = fp->in->PartitionMaxBytes > 0 ? (size_t)fp->in->PartitionMaxBytes : 0;
        if (total >= max_total && total > 0)
            continue;
        if (max_total - total < budget)
            budget = max_total - total;
        if (offset >= max_offset)
            continue;
        rc = log_read(partition_log(p), offset, max_offset, budget, &fp->slice);
        if (rc != 0) {
            o->ErrorCode = (int16_t)(rc == ERR_IO ? ERR_KAFKA_STORAGE_ERROR : err_wire(rc));
            *any_error = true;
            continue;
        }
        fp->has_slice = true;
        /* Only the first partition with data may exceed the limits (KIP-74: so that a batch
         * larger than the limits can still be consumed). */
        if (total > 0 && fp->slice.len > budget) {
            log_slice_release(partition_log(p), &fp->slice);
            fp->has_slice = false;
            continue;
        }
        total += fp->slice.len;
    }
    return total;
}

static void respond(struct fetch_call *c)
{
    struct FetchRequest *rq = c->req->body;
    for (int32_t i = 0; i < c->n_parts; i++) {
        struct fetch_part *fp = &c->parts[i];
        struct FetchPartitionData *o = fp->out;
        o->AbortedTransactions.n = rq->IsolationLevel == 1 ? 0 : -1;
        o->Records.data = NULL;
        o->Records.len = 0;
        o->Records.ext = NULL;
        if (fp->has_slice && fp->slice.len > 0 && o->ErrorCode == 0) {
            fp->range.fd = fp->slice.fd;
            fp->range.pos = (int64_t)fp->slice.pos;
            fp->range.len = fp->slice.len;
            o->Records.len = (int32_t)fp->slice.len;
            o->Records.ext = &fp->range;
        }
    }
    net_respond_files(c->req, c->rs, fetch_sent, c);
}

/* The mark that bounds what this fetch may read (see evaluate). */
static enum partition_mark read_bound(const struct FetchRequest *rq)
{
    if (rq->ReplicaId >= 0)
        return PARTITION_LOG_END;
    return rq->IsolationLevel == 1 ? PARTITION_LAST_STABLE : PARTITION_HIGH_WATERMARK;
}

/* Watches the partition's read bound for data past both the fetch offset and what the last
 * look saw. Returns true when there is no need to wait (the bound is already past, or the
 * partition went offline). */
static bool watch_part(struct fetch_call *c, struct fetch_part *fp)
{
    struct FetchRequest *rq = c->req->body;
    enum partition_mark m = read_bound(rq);
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
    return total >= (size_t)(rq->MinBytes > 0 ? rq->MinBytes : 1) || any_error || c->b->stopping;
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
    log_debug("broker", "dropped a waiting Fetch from %s: the client closed its connection",
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
    purgatory_op_start(&c->op, rq->MaxWaitMs);
}

/* Builds the response skeleton and resolves every requested partition. */
static int prepare(struct broker *b, struct fetch_call *c)
{
    struct net_request *req = c->req;
    struct FetchRequest *rq = req->body;
    struct arena *ar = req->arena;
    bool by_id = req->hdr.RequestApiVersion >= 13;
    int32_t nt = rq->Topics.n > 0 ? rq->Topics.n : 0, n_parts = 0, k = 0;

    for (int32_t i = 0; i < nt; i++)
        n_parts += rq->Topics.v[i].Partitions.n > 0 ? rq->Topics.v[i].Partitions.n : 0;
    c->rs = arena_alloc(ar, sizeof *c->rs);
    c->parts = calloc((size_t)n_parts + 1, sizeof *c->parts);
    if (c->rs == NULL || c->parts == NULL)
        return ERR_NOMEM;
    c->n_parts = n_parts;
    c->rs->Responses.n = nt;
    c->rs->Responses.v = arena_alloc(ar, ((size_t)nt + 1) * sizeof *c->rs->Responses.v);
    if (c->rs->Responses.v == NULL)
        return ERR_NOMEM;
    for (int32_t i = 0; i < nt; i++) {
        struct FetchTopic *t = &rq->Topics.v[i];
        struct FetchableTopicResponse *tr = &c->rs->Responses.v[i];
        int32_t np = t->Partitions.n > 0 ? t->Partitions.n : 0;
        tr->Topic = t->Topic;
        tr->TopicId = t->TopicId;
        tr->Partitions.n = np;
        tr->Partitions.v = arena_alloc(ar, ((size_t)np + 1) * sizeof *tr->Partitions.v);
        if (tr->Partitions.v == NULL)
            return ERR_NOMEM;
        for (int32_t j = 0; j < np; j++) {
            static const struct FetchPartitionData defaults = FETCH_PARTITION_DATA_DEFAULTS;
            struct fetch_part *fp = &c->parts[k++];
            struct FetchPartitionData *o = &tr->Partitions.v[j];
            *o = defaults;
            o->PartitionIndex = t->Partitions.v[j].Partition;
            o->HighWatermark = -1;
            o->AbortedTransactions.n = -1;
            fp->call = c;
            fp->in = &t->Partitions.v[j];
            fp->out = o;
            fp->p =
                by_id ? replica_partition_by_id(b->replicas, t->TopicId.b, o->PartitionIndex)
                      : replica_partition(b->replicas, t->Topic ? t->Topic : "", o->PartitionIndex);
            if (fp->p)
                partition_hold(fp->p);
            else
                o->ErrorCode = by_id ? ERR_UNKNOWN_TOPIC_ID : ERR_UNKNOWN_TOPIC_OR_PARTITION;
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
        log_error("broker", "out of memory in Fetch from %s; closing", req->peer);
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
    if (total >= (size_t)(rq->MinBytes > 0 ? rq->MinBytes : 1) || any_error || rq->MaxWaitMs <= 0 ||
        c->n_parts == 0 || b->stopping) {
        respond(c);
        return;
    }
    park(b, c);
}
