/* SPDX-License-Identifier: Apache-2.0 */
/* Fetch: sessionless full fetches with long polling. Each partition's data is a byte range
 * of a segment file that the network layer sends with sendfile(); the broker never touches
 * the bytes. A fetch that finds fewer than MinBytes parks on its partitions and is woken by
 * the next append to any of them (or its MaxWaitMs timer), then looks again. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/err.h"
#include "base/log.h"
#include "broker_int.h"
#include "net/net.h"
#include "replica/replica.h"

/* One requested partition. */
struct fetch_part {
    struct fetch_call *call;
    struct partition *p; /* held; NULL when unknown */
    const struct FetchPartition *in;
    struct FetchPartitionData *out;
    struct partition_slice slice;
    bool has_slice;
    struct net_file_range range;
    struct partition_watch watch;
};

struct fetch_call {
    struct broker *b;
    struct net_request *req;
    struct FetchResponse *rs;
    struct fetch_part *parts;
    int32_t n_parts;
    uv_timer_t timer;
    bool timer_started, parked, answered;
    struct fetch_call *prev, *next; /* the broker's parked list */
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

static void unwatch(struct fetch_call *c)
{
    for (int32_t i = 0; i < c->n_parts; i++)
        partition_watch_remove(&c->parts[i].watch);
}

static void call_free(struct fetch_call *c)
{
    struct broker *b = c->b;
    free(c->parts);
    free(c);
    b->live_fetches--;
    broker_maybe_finish_stop(b);
}

static void on_timer_closed(uv_handle_t *h)
{
    call_free(h->data);
}

/* Runs once the response left (or will never leave): drops the file ranges and holds. */
static void fetch_sent(void *arg)
{
    struct fetch_call *c = arg;
    release_slices(c);
    for (int32_t i = 0; i < c->n_parts; i++)
        if (c->parts[i].p)
            partition_release(c->parts[i].p);
    if (c->timer_started)
        uv_close((uv_handle_t *)&c->timer, on_timer_closed);
    else
        call_free(c);
}

/* Reads what each partition has now. Returns the bytes found; partitions with errors get
 * their ErrorCode; *any_error is set when one has. */
static size_t evaluate(struct fetch_call *c, bool *any_error)
{
    struct FetchRequest *rq = c->req->body;
    size_t total = 0, max_total = rq->MaxBytes > 0 ? (size_t)rq->MaxBytes : 0;
    /* replica/ decides how far each reader may go: a follower to the log end, a consumer to
     * the high watermark or (read_committed) the last stable offset. */
    enum partition_reader reader = rq->ReplicaId >= 0        ? PARTITION_READ_REPLICA
                                   : rq->IsolationLevel == 1 ? PARTITION_READ_COMMITTED
                                                             : PARTITION_READ_UNCOMMITTED;

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
        if (partition_role(p) != REPLICA_LEADER) {
            /* Leadership moved while the fetch waited. */
            o->ErrorCode = ERR_NOT_LEADER_OR_FOLLOWER;
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
        if (fp->has_slice) {
            partition_slice_release(p, &fp->slice);
            fp->has_slice = false;
        }
        size_t budget = fp->in->PartitionMaxBytes > 0 ? (size_t)fp->in->PartitionMaxBytes : 0;
        if (total >= max_total && total > 0)
            budget = 0; /* only the offset is checked */
        else if (max_total - total < budget)
            budget = max_total - total;
        rc = partition_read(p, fp->in->FetchOffset, budget, reader, &fp->slice);
        if (rc != 0) {
            o->ErrorCode = (int16_t)(rc == ERR_IO ? ERR_KAFKA_STORAGE_ERROR : err_wire(rc));
            *any_error = true;
            continue;
        }
        fp->has_slice = true;
        /* Only the first partition with data may exceed the limits (KIP-74: so that a batch
         * larger than the limits can still be consumed). */
        if ((total >= max_total && total > 0) || (total > 0 && fp->slice.len > budget)) {
            partition_slice_release(p, &fp->slice);
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
    c->answered = true;
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

static void park(struct fetch_call *c);

static void unpark(struct fetch_call *c)
{
    struct broker *b = c->b;
    if (!c->parked)
        return;
    c->parked = false;
    unwatch(c);
    if (c->prev)
        c->prev->next = c->next;
    else
        b->parked = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->prev = c->next = NULL;
}

static void on_wake(struct partition_watch *w)
{
    struct fetch_call *c = w->arg;
    struct FetchRequest *rq = c->req->body;
    bool any_error;
    if (!c->parked)
        return;
    unpark(c);
    size_t total = evaluate(c, &any_error);
    if (total >= (size_t)(rq->MinBytes > 0 ? rq->MinBytes : 1) || any_error || c->b->stopping) {
        uv_timer_stop(&c->timer);
        respond(c);
    } else {
        release_slices(c);
        park(c);
    }
}

static void on_timeout(uv_timer_t *t)
{
    struct fetch_call *c = t->data;
    bool any_error;
    unpark(c);
    evaluate(c, &any_error);
    respond(c);
}

static void park(struct fetch_call *c)
{
    struct broker *b = c->b;
    for (int32_t i = 0; i < c->n_parts; i++) {
        struct fetch_part *fp = &c->parts[i];
        if (fp->p == NULL)
            continue;
        fp->watch.cb = on_wake;
        fp->watch.arg = c;
        partition_watch_add(fp->p, &fp->watch);
    }
    c->parked = true;
    c->next = b->parked;
    if (b->parked)
        b->parked->prev = c;
    b->parked = c;
}

void fetch_release_parked(struct broker *b)
{
    while (b->parked) {
        struct fetch_call *c = b->parked;
        bool any_error;
        unpark(c);
        uv_timer_stop(&c->timer);
        evaluate(c, &any_error);
        respond(c);
    }
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
    for (int32_t i = 0; i < nt; i++) {
        struct FetchTopic *t = &rq->Topics.v[i];
        struct FetchableTopicResponse *tr = &c->rs->Responses.v[i];
        int32_t np = tr->Partitions.n;
        tr->TopicId = t->TopicId;
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
            fp->watch.next = fp->watch.prev = &fp->watch;
            /* Consumers and followers alike fetch from the leader (no KIP-392 follower
             * fetching). */
            int rc = by_id ? replica_leader_partition_by_id(b->replicas, t->TopicId.b,
                                                            o->PartitionIndex, &fp->p)
                           : replica_leader_partition(b->replicas, t->Topic ? t->Topic : "",
                                                      o->PartitionIndex, &fp->p);
            /* A follower's fetch must come from a replica of the partition; its fetch offset
             * is its log end, which may move the high watermark. */
            if (rc == 0 && rq->ReplicaId >= 0)
                rc = rq->ReplicaId == b->node_id
                         ? ERR_NOT_LEADER_OR_FOLLOWER
                         : partition_follower_fetched(fp->p, rq->ReplicaId, fp->in->FetchOffset);
            if (rc == 0)
                partition_hold(fp->p);
            else {
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
    release_slices(c);
    uv_timer_init(b->loop, &c->timer);
    c->timer.data = c;
    c->timer_started = true;
    uv_timer_start(&c->timer, on_timeout, (uint64_t)rq->MaxWaitMs, 0);
    park(c);
}
