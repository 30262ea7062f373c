/* SPDX-License-Identifier: Apache-2.0 */
/* DeleteRecords: moves partitions' log start offsets forward (offset -1 = the high
 * watermark) on the partitions this broker leads; segments wholly below the new start are
 * deleted. The answer waits until the
 * new log start offsets are durable (the log-start-offset-checkpoint is written and fsynced
 * on the thread pool), so that an acknowledged deletion survives a kill -9. */
#include <stddef.h>

#include "authz/authz.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/slog.h"
#include "broker_int.h"
#include "net/net.h"
#include "replica/replica.h"

/* The request while its checkpoint write is in flight (lives in the request's arena). */
struct delete_records_ctx {
    struct replica_start_sync sync; /* first: the callback gets a pointer to it */
    struct net_request *req;
    struct DeleteRecordsResponse *rs;
};

/* Returns true if the partition's log start offset moved. */
static bool delete_partition(struct broker *b, const char *topic,
                             const struct DeleteRecordsPartition *in,
                             struct DeleteRecordsPartitionResult *out)
{
    struct partition *p;
    int64_t before;
    int rc = replica_leader_partition(b->replicas, topic, in->PartitionIndex, &p);

    out->LowWatermark = -1;
    if (rc != 0) {
        out->ErrorCode = (int16_t)rc;
        return false;
    }
    before = partition_log_start_offset(p);
    rc = partition_delete_records(p, in->Offset, &out->LowWatermark);
    if (rc != 0) {
        out->ErrorCode = (int16_t)(rc == ERR_IO ? ERR_KAFKA_STORAGE_ERROR : err_wire(rc));
        return false;
    }
    if (out->LowWatermark == before)
        return false;
    slog_info("broker", "records of %s-%d below %lld deleted", topic, in->PartitionIndex,
              (long long)out->LowWatermark);
    return true;
}

static void on_durable(struct replica_start_sync *w, int rc)
{
    struct delete_records_ctx *c = (struct delete_records_ctx *)w;
    struct DeleteRecordsResponse *rs = c->rs;

    if (rc != 0) {
        /* The new starts hold in memory but may not survive a crash: do not acknowledge. */
        for (int32_t i = 0; i < rs->Topics.n; i++) {
            struct DeleteRecordsTopicResult *tr = &rs->Topics.v[i];
            for (int32_t j = 0; j < tr->Partitions.n; j++) {
                struct DeleteRecordsPartitionResult *pr = &tr->Partitions.v[j];
                if (pr->ErrorCode == 0) {
                    pr->ErrorCode = ERR_KAFKA_STORAGE_ERROR;
                    pr->LowWatermark = -1;
                }
            }
        }
    }
    net_respond(c->req, rs);
}

void broker_delete_records(struct broker *b, struct net_request *req)
{
    struct DeleteRecordsRequest *rq = req->body;
    struct arena *ar = req->arena;
    struct DeleteRecordsResponse *rs = arena_alloc(ar, sizeof *rs);
    struct delete_records_ctx *c = arena_alloc(ar, sizeof *c);
    bool moved = false;

    static const struct broker_shape shape = {
        sizeof(struct DeleteRecordsTopic),
        offsetof(struct DeleteRecordsTopic, Name),
        offsetof(struct DeleteRecordsTopic, Partitions),
        sizeof(struct DeleteRecordsPartition),
        offsetof(struct DeleteRecordsPartition, PartitionIndex),
        sizeof(struct DeleteRecordsTopicResult),
        offsetof(struct DeleteRecordsTopicResult, Name),
        offsetof(struct DeleteRecordsTopicResult, Partitions),
        sizeof(struct DeleteRecordsPartitionResult),
        offsetof(struct DeleteRecordsPartitionResult, PartitionIndex),
    };

    if (rs == NULL || c == NULL ||
        broker_response_skeleton(ar, &rq->Topics, &rs->Topics, &shape) != 0)
        goto err_nomem;
    for (int32_t i = 0; i < rs->Topics.n; i++) {
        struct DeleteRecordsTopic *t = &rq->Topics.v[i];
        struct DeleteRecordsTopicResult *tr = &rs->Topics.v[i];
        /* DELETE on the topic, before anything moves. */
        if (!authz_allowed(req, PROTO_ACL_OP_DELETE, PROTO_RESOURCE_TOPIC,
                           t->Name ? t->Name : "")) {
            for (int32_t j = 0; j < tr->Partitions.n; j++) {
                tr->Partitions.v[j].ErrorCode = ERR_TOPIC_AUTHORIZATION_FAILED;
                tr->Partitions.v[j].LowWatermark = -1;
            }
            continue;
        }
        for (int32_t j = 0; j < tr->Partitions.n; j++)
            moved |= delete_partition(b, t->Name ? t->Name : "", &t->Partitions.v[j],
                                      &tr->Partitions.v[j]);
    }
    if (!moved) {
        net_respond(req, rs);
        return;
    }
    c->req = req;
    c->rs = rs;
    c->sync.cb = on_durable;
    replica_sync_log_starts(b->replicas, &c->sync);
    return;

err_nomem:
    slog_error("broker", "out of memory in DeleteRecords from %s; closing", req->peer);
    net_close_connection(req);
}
