/* SPDX-License-Identifier: Apache-2.0 */
/* WriteTxnMarkers (v0-1): the transaction coordinator's call to a partition leader — for each
 * marker, a COMMIT or ABORT control batch on each named partition for the producer id/epoch,
 * carrying the coordinator epoch (partition_write_marker: the producer's ongoing transaction
 * closes, the last stable offset moves, an ABORT enters the segment's .txnindex). Each
 * partition is answered once its marker is durable by the acks=all rule (the high watermark
 * covers it), within the request timeout; a marker on `__consumer_offsets` then also tells
 * the group coordinator (broker_options.txn_complete), which makes the producer's pending
 * offsets committed or drops them. Errors are per partition, as Kafka gives them:
 * UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER, INVALID_PRODUCER_EPOCH,
 * TRANSACTION_COORDINATOR_FENCED, KAFKA_STORAGE_ERROR, REQUEST_TIMED_OUT. */
#include <stddef.h>
#include <string.h>

#include "authz/authz.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/purgatory.h"
#include "base/slog.h"
#include "broker_int.h"
#include "net/net.h"
#include "replica/replica.h"

#define MARKER_TIMEOUT_MS 30000 /* request.timeout.ms of Kafka's marker channel */
#define GROUP_TOPIC "__consumer_offsets"

struct marker_wait_part {
    struct purgatory_watch watch;
    struct partition *p; /* for arming only: not held */
    int64_t need;
    struct WritableTxnMarkerPartitionResult *out;
    int64_t producer_id;
    bool commit;
    bool group; /* a __consumer_offsets partition */
    bool done;
};

struct marker_wait {
    struct purgatory_op op;
    struct broker *b;
    struct net_request *req;
    struct WriteTxnMarkersResponse *rs;
    size_t n, pending;
    struct marker_wait_part parts[];
};

/* The marker of `wp` is durable (or it never will be): the group coordinator learns of a
 * durable one on its partition. */
static void part_done(struct marker_wait *mw, struct marker_wait_part *wp)
{
    wp->done = true;
    if (wp->group && wp->out->ErrorCode == 0 && mw->b->txn_complete != NULL)
        mw->b->txn_complete(mw->b->txn_complete_arg, wp->out->PartitionIndex, wp->producer_id,
                            wp->commit);
}

static void on_replicated(struct purgatory_op *op, struct purgatory_watch *w)
{
    struct marker_wait *mw = op->data;
    struct marker_wait_part *wp =
        (struct marker_wait_part *)((char *)w - offsetof(struct marker_wait_part, watch));
    if (!w->reached)
        wp->out->ErrorCode = ERR_NOT_LEADER_OR_FOLLOWER;
    part_done(mw, wp);
    if (--mw->pending == 0)
        purgatory_complete(op);
}

static void on_answer(struct purgatory_op *op, int result)
{
    struct marker_wait *mw = op->data;
    if (result != PURGATORY_DONE)
        for (size_t i = 0; i < mw->n; i++)
            if (!mw->parts[i].done)
                mw->parts[i].out->ErrorCode = ERR_REQUEST_TIMED_OUT;
    net_respond(mw->req, mw->rs);
}

static void on_connection_closed(void *arg)
{
    struct marker_wait *mw = arg;
    purgatory_cancel(&mw->op);
    net_finish(mw->req);
}

/* Writes one partition's marker; on success records what to wait for in `mw`. */
static void write_one(struct broker *b, struct marker_wait *mw, const struct WritableTxnMarker *m,
                      const char *topic, struct WritableTxnMarkerPartitionResult *out)
{
    struct partition *p;
    int64_t offset;
    int rc = replica_leader_partition(b->replicas, topic, out->PartitionIndex, &p);

    if (rc == 0)
        rc = partition_write_marker(p, m->ProducerId, m->ProducerEpoch, m->CoordinatorEpoch,
                                    m->TransactionResult, &offset);
    if (rc != 0) {
        out->ErrorCode = (int16_t)(rc == ERR_IO ? ERR_KAFKA_STORAGE_ERROR : err_wire(rc));
        slog_debug("broker", "%s marker for producer %lld epoch %d on %s-%d refused: %s",
                   m->TransactionResult ? "COMMIT" : "ABORT", (long long)m->ProducerId,
                   m->ProducerEpoch, topic, out->PartitionIndex, err_name(rc));
        return;
    }
    struct marker_wait_part *wp = &mw->parts[mw->n++];
    wp->p = p;
    wp->need = offset + 1;
    wp->out = out;
    wp->producer_id = m->ProducerId;
    wp->commit = m->TransactionResult;
    wp->group = strcmp(topic, GROUP_TOPIC) == 0;
    wp->done = false;
}

void broker_write_txn_markers(struct broker *b, struct net_request *req)
{
    struct WriteTxnMarkersRequest *rq = req->body;
    struct arena *ar = req->arena;
    struct WriteTxnMarkersResponse *rs = arena_alloc(ar, sizeof *rs);
    int32_t nm = rq->Markers.n > 0 ? rq->Markers.n : 0;
    struct marker_wait *mw;
    size_t total = 0;

    static const struct broker_shape shape = {
        sizeof(struct WritableTxnMarkerTopic),
        offsetof(struct WritableTxnMarkerTopic, Name),
        offsetof(struct WritableTxnMarkerTopic, PartitionIndexes),
        sizeof(int32_t),
        0,
        sizeof(struct WritableTxnMarkerTopicResult),
        offsetof(struct WritableTxnMarkerTopicResult, Name),
        offsetof(struct WritableTxnMarkerTopicResult, Partitions),
        sizeof(struct WritableTxnMarkerPartitionResult),
        offsetof(struct WritableTxnMarkerPartitionResult, PartitionIndex),
    };

    if (rs == NULL)
        goto err_nomem;
    memset(rs, 0, sizeof *rs);
    rs->Markers.n = nm;
    rs->Markers.v = arena_alloc(ar, ((size_t)nm + 1) * sizeof *rs->Markers.v);
    if (rs->Markers.v == NULL)
        goto err_nomem;
    for (int32_t i = 0; i < nm; i++) {
        const struct WritableTxnMarker *m = &rq->Markers.v[i];
        for (int32_t t = 0; t < m->Topics.n; t++)
            total += m->Topics.v[t].PartitionIndexes.n > 0
                         ? (size_t)m->Topics.v[t].PartitionIndexes.n
                         : 0;
    }
    mw = arena_alloc(ar, sizeof *mw + (total + 1) * sizeof mw->parts[0]);
    if (mw == NULL)
        goto err_nomem;
    memset(mw, 0, sizeof *mw);
    mw->b = b;
    mw->req = req;
    mw->rs = rs;
    /* A broker-internal API: CLUSTER_ACTION on the cluster, else nothing is written. */
    bool denied =
        !authz_allowed(req, PROTO_ACL_OP_CLUSTER_ACTION, PROTO_RESOURCE_CLUSTER, AUTHZ_CLUSTER);
    for (int32_t i = 0; i < nm; i++) {
        const struct WritableTxnMarker *m = &rq->Markers.v[i];
        struct WritableTxnMarkerResult *mr = &rs->Markers.v[i];
        mr->ProducerId = m->ProducerId;
        if (broker_response_skeleton(ar, &m->Topics, &mr->Topics, &shape) != 0)
            goto err_nomem;
        for (int32_t t = 0; t < mr->Topics.n; t++) {
            struct WritableTxnMarkerTopicResult *tr = &mr->Topics.v[t];
            for (int32_t j = 0; j < tr->Partitions.n; j++) {
                if (denied)
                    tr->Partitions.v[j].ErrorCode = ERR_CLUSTER_AUTHORIZATION_FAILED;
                else
                    write_one(b, mw, m, tr->Name ? tr->Name : "", &tr->Partitions.v[j]);
            }
        }
    }

    /* Durability: each marker waits for the high watermark (on one node at once). */
    purgatory_op_init(b->pg, &mw->op, on_replicated, on_answer, mw);
    for (size_t i = 0; i < mw->n; i++) {
        struct marker_wait_part *wp = &mw->parts[i];
        purgatory_watch_init(&mw->op, &wp->watch);
        if (!partition_watch(wp->p, PARTITION_HIGH_WATERMARK, wp->need, &wp->watch)) {
            mw->pending++;
            continue;
        }
        if (!wp->watch.reached)
            wp->out->ErrorCode = ERR_NOT_LEADER_OR_FOLLOWER;
        part_done(mw, wp);
    }
    if (mw->pending == 0) {
        purgatory_complete(&mw->op);
        return;
    }
    if (!net_request_on_close(req, on_connection_closed, mw)) {
        on_connection_closed(mw);
        return;
    }
    purgatory_op_start(&mw->op, MARKER_TIMEOUT_MS);
    return;

err_nomem:
    slog_error("broker", "out of memory in WriteTxnMarkers from %s; closing", req->peer);
    net_close_connection(req);
}
