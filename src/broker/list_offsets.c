/* SPDX-License-Identifier: Apache-2.0 */
/* ListOffsets: earliest (-2), latest (-1), max timestamp (-3, v7) or the first offset at or
 * after a timestamp, per partition. The batch-level answers come from the indexes on the
 * event loop; narrowing one to a record (which reads and may decompress a batch) runs on
 * libuv's thread pool, and the request is answered when every look-up is back.
 *
 * The loop's index and header reads wait for no disk (partition_offset_for_time_nowait,
 * partition_read_nowait): a partition whose look-up meets a page not in the page cache has
 * the range named read on the pool (a warm-up), then its look-up runs again from the start;
 * after LIST_WARM_ROUNDS warm-ups (the cache dropping the pages each time) it reads on the
 * loop as before. */
#include <stddef.h>
#include <stdlib.h>

#include "authz/authz.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/pool.h"
#include "base/slog.h"
#include "base/sysio.h"
#include "broker_int.h"
#include "net/net.h"
#include "record/record.h"
#include "replica/replica.h"

#define LATEST_TIMESTAMP -1
#define EARLIEST_TIMESTAMP -2
#define MAX_TIMESTAMP -3
#define DEBUGGING_REPLICA_ID -2

#define LIST_WARM_ROUNDS 4

/* A request whose answer waits for look-ups on the thread pool. */
struct lookup_call {
    struct broker *b;
    struct net_request *req;
    struct ListOffsetsResponse *rs;
    unsigned pending; /* look-ups queued and not yet back, plus one while queuing */
};

/* One partition's look-up, as list_partition takes it (all in the request's arena), and the
 * warm-ups it has had. */
struct list_args {
    const char *topic;
    int32_t replica_id;
    int8_t isolation;
    const struct ListOffsetsPartition *in;
    struct ListOffsetsPartitionResponse *out;
    int rounds;
};

/* A look-up waiting for its cold range to be read on the pool. */
struct warmup {
    struct pool_job w;
    struct lookup_call *call;
    struct partition *p;          /* held until the range is read */
    struct partition_slice slice; /* cold: names the range, pins the segment */
    struct list_args args;
};

/* Narrowing one partition's batch-level answer to a record: the batch that holds the answer
 * is read and (if compressed) decompressed on the thread pool, so that no look-up holds the
 * event loop. Bounded all the same: the batch and its decompressed records must fit the
 * topic's max.message.bytes, which Produce enforces on append (a batch stored before that
 * check, or before the limit was lowered, keeps the batch-level answer). */
struct lookup {
    struct pool_job w;
    struct lookup_call *call;
    struct ListOffsetsPartitionResponse *out; /* in the request's arena */
    struct partition *p;                      /* held until the answer is in */
    struct partition_slice slice;             /* pins the segment until the answer is in */
    size_t bound;
    int64_t target;
    bool max;
    int rc; /* the worker's answer: 0 with offset/ts, or an error (batch-level answer kept) */
    int64_t offset, ts;
};

/* Thread pool: reads the batch at the start of the slice and finds the record. Touches only
 * the lookup and the file. */
static void lookup_run(uv_work_t *w)
{
    struct lookup *lk = w->data;
    uint8_t *buf;
    size_t size;

    lk->rc = partition_slice_first_batch(&lk->slice, lk->bound, &buf, &size);
    if (lk->rc != 0)
        return;
    lk->rc = lk->max ? record_batch_max_timestamp(buf, size, lk->bound, &lk->offset, &lk->ts)
                     : record_batch_find_timestamp(buf, size, lk->bound, lk->target, &lk->offset,
                                                   &lk->ts);
    free(buf);
}

/* v0 answers in OldStyleOffsets, a list of at most MaxNumOffsets offsets. Kafka's v0 walks
 * segment base offsets there; Tally answers the one offset later versions answer (log start
 * for earliest, the read bound for latest, the first offset at or after a timestamp), which
 * is what consumers of v0 use the first element for. */
static void fill_old_style_offsets(struct lookup_call *call)
{
    struct ListOffsetsRequest *rq = call->req->body;
    struct ListOffsetsResponse *rs = call->rs;

    for (int32_t i = 0; i < rs->Topics.n; i++) {
        struct ListOffsetsTopicResponse *tr = &rs->Topics.v[i];
        for (int32_t j = 0; j < tr->Partitions.n; j++) {
            struct ListOffsetsPartitionResponse *o = &tr->Partitions.v[j];
            const struct ListOffsetsPartition *in = &rq->Topics.v[i].Partitions.v[j];
            o->OldStyleOffsets.n = 0;
            if (o->ErrorCode != 0 || o->Offset < 0 || in->MaxNumOffsets < 1)
                continue;
            o->OldStyleOffsets.v = &o->Offset; /* lives in the request's arena, as o does */
            o->OldStyleOffsets.n = 1;
        }
    }
}

/* Drops one pending look-up of the call; the last one answers. */
static void call_unref(struct lookup_call *call)
{
    struct broker *b = call->b;

    if (--call->pending > 0)
        return;
    if (call->req->hdr.RequestApiVersion == 0)
        fill_old_style_offsets(call);
    net_respond(call->req, call->rs);
    free(call);
    b->live_lookups--;
    broker_maybe_finish_stop(b);
}

static void list_partition(struct lookup_call *call, const struct list_args *a);

/* Thread pool: brings the cold range into the page cache. */
static void warm_run(uv_work_t *w)
{
    struct warmup *wu = w->data;
    partition_slice_warm(&wu->slice);
}

static void warm_done(uv_work_t *w, int status)
{
    struct warmup *wu = w->data;
    struct lookup_call *call = wu->call;
    struct list_args a = wu->args;

    (void)status;
    partition_slice_release(wu->p, &wu->slice);
    partition_release(wu->p);
    free(wu);
    a.rounds++;
    list_partition(call, &a);
    call_unref(call);
}

/* Queues the warm-up of `cold` (taking it over) and the look-up's second try. False when it
 * cannot be queued (the slice is then released: the caller reads on the loop). */
static bool warm_start(struct lookup_call *call, struct partition *p, struct partition_slice *cold,
                       const struct list_args *a)
{
    struct warmup *wu = calloc(1, sizeof *wu);

    if (wu == NULL)
        goto err;
    wu->w.work.data = wu;
    wu->call = call;
    wu->p = p;
    wu->slice = *cold;
    wu->args = *a;
    partition_hold(p);
    if (pool_submit(call->b->loop, &wu->w, warm_run, warm_done) != 0) {
        partition_release(p);
        free(wu);
        goto err;
    }
    call->pending++;
    return true;

err:
    partition_slice_release(p, cold);
    return false;
}

static void lookup_done(uv_work_t *w, int status)
{
    struct lookup *lk = w->data;
    struct lookup_call *call = lk->call;

    if (status == 0 && lk->rc == 0) {
        lk->out->Offset = lk->offset;
        lk->out->Timestamp = lk->ts;
    }
    partition_slice_release(lk->p, &lk->slice);
    partition_release(lk->p);
    free(lk);
    call_unref(call);
}

/* Queues the narrowing of out's batch-level answer (the batch holding out->Offset, below the
 * reader's bound) to the first record at or after `target`, or with `max` the record with the
 * largest timestamp. Leaves the batch-level answer if it cannot be queued. */
static void lookup_start(struct lookup_call *call, struct partition *p,
                         enum partition_reader reader, int64_t target, bool max,
                         const struct list_args *a)
{
    struct ListOffsetsPartitionResponse *out = a->out;
    int64_t limit = partition_settings(p)->max_message_bytes;
    struct lookup *lk = calloc(1, sizeof *lk);
    int rc;

    if (lk == NULL)
        return;
    rc = a->rounds < LIST_WARM_ROUNDS ? partition_read_nowait(p, out->Offset, 1, reader, &lk->slice)
                                      : partition_read(p, out->Offset, 1, reader, &lk->slice);
    if (rc != 0) {
        free(lk);
        return;
    }
    if (lk->slice.cold) {
        struct partition_slice cold = lk->slice;
        free(lk);
        if (!warm_start(call, p, &cold, a))
            return;                        /* the batch-level answer stands */
        out->Offset = out->Timestamp = -1; /* answered again after the warm-up */
        return;
    }
    if (lk->slice.len < RECORD_BATCH_HEADER)
        goto err_release;
    lk->w.work.data = lk;
    lk->p = p;
    lk->call = call;
    lk->out = out;
    lk->bound = limit > 0 ? (size_t)limit : 0;
    lk->target = target;
    lk->max = max;
    partition_hold(p);
    if (pool_submit(call->b->loop, &lk->w, lookup_run, lookup_done) != 0) {
        partition_release(p);
        goto err_release;
    }
    call->pending++;
    return;

err_release:
    partition_slice_release(p, &lk->slice);
    free(lk);
}

static void list_partition(struct lookup_call *call, const struct list_args *a)
{
    const char *topic = a->topic;
    int32_t replica_id = a->replica_id;
    int8_t isolation = a->isolation;
    const struct ListOffsetsPartition *in = a->in;
    struct ListOffsetsPartitionResponse *out = a->out;
    struct partition_slice cold;
    struct partition *p;
    enum partition_reader reader =
        isolation == 1 ? PARTITION_READ_COMMITTED : PARTITION_READ_UNCOMMITTED;
    int64_t visible;
    int rc = replica_leader_partition(call->b->replicas, topic, in->PartitionIndex, &p);

    out->Timestamp = -1;
    out->Offset = -1;
    out->LeaderEpoch = -1;
    /* Only the debugging replica id (-2) may ask a follower (as in Kafka). */
    if (rc == ERR_NOT_LEADER_OR_FOLLOWER && replica_id == DEBUGGING_REPLICA_ID &&
        (p = replica_partition(call->b->replicas, topic, in->PartitionIndex)) != NULL)
        rc = 0;
    if (rc != 0) {
        out->ErrorCode = (int16_t)rc;
        return;
    }
    rc = broker_check_epoch(partition_leader_epoch(p), in->CurrentLeaderEpoch);
    /* A new leader's high watermark may lag the one its predecessor exposed until the
     * followers' fetches bring it to the start of its own epoch: answering "latest" from it
     * would send consumers backwards (Kafka answers OFFSET_NOT_AVAILABLE until then). */
    if (rc == 0 && replica_id < 0 && replica_id != DEBUGGING_REPLICA_ID &&
        !partition_leader_ready(p))
        rc = ERR_OFFSET_NOT_AVAILABLE;
    if (rc != 0) {
        out->ErrorCode = (int16_t)rc;
        return;
    }
    out->LeaderEpoch = partition_leader_epoch(p);
    /* A replica (ReplicaId >= 0: a follower after OFFSET_OUT_OF_RANGE, fetcher.c) asks for
     * the log end, as Kafka answers it, not for what consumers may read. */
    visible = replica_id >= 0 ? partition_log_end_offset(p) : partition_read_bound(p, reader);
    switch (in->Timestamp) {
    case EARLIEST_TIMESTAMP:
        out->Offset = partition_log_start_offset(p);
        break;
    case LATEST_TIMESTAMP:
        out->Offset = visible;
        break;
    case MAX_TIMESTAMP:
        partition_max_timestamp(p, &out->Offset, &out->Timestamp);
        if (out->Offset >= visible)
            out->Offset = out->Timestamp = -1;
        else if (out->Offset >= 0)
            lookup_start(call, p, reader, 0, true, a);
        break;
    default:
        if (in->Timestamp < 0) {
            out->ErrorCode = ERR_INVALID_REQUEST;
            return;
        }
        rc = a->rounds < LIST_WARM_ROUNDS
                 ? partition_offset_for_time_nowait(p, in->Timestamp, &out->Offset, &out->Timestamp,
                                                    &cold)
                 : partition_offset_for_time(p, in->Timestamp, &out->Offset, &out->Timestamp);
        if (rc == ERR_WOULD_BLOCK) {
            if (warm_start(call, p, &cold, a))
                return; /* looked up again after the warm-up */
            rc = partition_offset_for_time(p, in->Timestamp, &out->Offset, &out->Timestamp);
        }
        if (rc != 0) {
            out->ErrorCode = ERR_KAFKA_STORAGE_ERROR;
            return;
        }
        /* Offsets a consumer cannot read yet are not answers. */
        if (out->Offset >= visible)
            out->Offset = out->Timestamp = -1;
        else if (out->Offset >= 0)
            lookup_start(call, p, reader, in->Timestamp, false, a);
        break;
    }
}

void broker_list_offsets(struct broker *b, struct net_request *req)
{
    struct ListOffsetsRequest *rq = req->body;
    struct arena *ar = req->arena;
    struct ListOffsetsResponse *rs = arena_alloc(ar, sizeof *rs);
    struct lookup_call *call;

    static const struct broker_shape shape = {
        sizeof(struct ListOffsetsTopic),
        offsetof(struct ListOffsetsTopic, Name),
        offsetof(struct ListOffsetsTopic, Partitions),
        sizeof(struct ListOffsetsPartition),
        offsetof(struct ListOffsetsPartition, PartitionIndex),
        sizeof(struct ListOffsetsTopicResponse),
        offsetof(struct ListOffsetsTopicResponse, Name),
        offsetof(struct ListOffsetsTopicResponse, Partitions),
        sizeof(struct ListOffsetsPartitionResponse),
        offsetof(struct ListOffsetsPartitionResponse, PartitionIndex),
    };

    if (rs == NULL || broker_response_skeleton(ar, &rq->Topics, &rs->Topics, &shape) != 0)
        goto err_nomem;
    /* The call holds one reference while look-ups are queued, so that none answers early. */
    call = malloc(sizeof *call);
    if (call == NULL)
        goto err_nomem;
    *call = (struct lookup_call){.b = b, .req = req, .rs = rs, .pending = 1};
    b->live_lookups++;
    for (int32_t i = 0; i < rs->Topics.n; i++) {
        struct ListOffsetsTopic *t = &rq->Topics.v[i];
        struct ListOffsetsTopicResponse *tr = &rs->Topics.v[i];
        /* DESCRIBE on the topic, as Kafka checks it. */
        if (!authz_allowed(req, PROTO_ACL_OP_DESCRIBE, PROTO_RESOURCE_TOPIC,
                           t->Name ? t->Name : "")) {
            for (int32_t j = 0; j < tr->Partitions.n; j++) {
                tr->Partitions.v[j].ErrorCode = ERR_TOPIC_AUTHORIZATION_FAILED;
                tr->Partitions.v[j].Timestamp = tr->Partitions.v[j].Offset = -1;
                tr->Partitions.v[j].LeaderEpoch = -1;
            }
            continue;
        }
        for (int32_t j = 0; j < tr->Partitions.n; j++) {
            struct list_args a = {.topic = t->Name ? t->Name : "",
                                  .replica_id = rq->ReplicaId,
                                  .isolation = rq->IsolationLevel,
                                  .in = &t->Partitions.v[j],
                                  .out = &tr->Partitions.v[j]};
            list_partition(call, &a);
        }
    }
    call_unref(call);
    return;

err_nomem:
    slog_error("broker", "out of memory in ListOffsets from %s; closing", req->peer);
    net_close_connection(req);
}
