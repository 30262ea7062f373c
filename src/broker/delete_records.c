/* SPDX-License-Identifier: Apache-2.0 */
/* DeleteRecords: moves partitions' log start offsets forward (offset -1 = the high
 * watermark); segments wholly below the new start are deleted. */
#include "base/arena.h"
#include "base/err.h"
#include "base/log.h"
#include "broker_int.h"
#include "log/log.h"
#include "net/net.h"
#include "replica/replica.h"

static void delete_partition(struct broker *b, const char *topic,
                             const struct DeleteRecordsPartition *in,
                             struct DeleteRecordsPartitionResult *out)
{
    struct partition *p = replica_partition(b->replicas, topic, in->PartitionIndex);
    int64_t offset = in->Offset;
    int rc;

    out->PartitionIndex = in->PartitionIndex;
    out->LowWatermark = -1;
    if (p == NULL) {
        out->ErrorCode = ERR_UNKNOWN_TOPIC_OR_PARTITION;
        return;
    }
    if (offset == -1)
        offset = partition_high_watermark(p);
    if (offset < 0 || offset > partition_high_watermark(p)) {
        out->ErrorCode = ERR_OFFSET_OUT_OF_RANGE;
        return;
    }
    rc = offset > partition_log_start_offset(p) ? log_delete_records(partition_log(p), offset) : 0;
    if (rc != 0) {
        out->ErrorCode = (int16_t)(rc == ERR_IO ? ERR_KAFKA_STORAGE_ERROR : err_wire(rc));
        return;
    }
    out->LowWatermark = partition_log_start_offset(p);
    log_info("broker", "records of %s-%d below %lld deleted", topic, in->PartitionIndex,
             (long long)out->LowWatermark);
}

void broker_delete_records(struct broker *b, struct net_request *req)
{
    struct DeleteRecordsRequest *rq = req->body;
    struct arena *ar = req->arena;
    struct DeleteRecordsResponse *rs = arena_alloc(ar, sizeof *rs);
    int32_t nt = rq->Topics.n > 0 ? rq->Topics.n : 0;

    if (rs == NULL)
        goto err_nomem;
    rs->Topics.n = nt;
    rs->Topics.v = arena_alloc(ar, ((size_t)nt + 1) * sizeof *rs->Topics.v);
    if (rs->Topics.v == NULL)
        goto err_nomem;
    for (int32_t i = 0; i < nt; i++) {
        struct DeleteRecordsTopic *t = &rq->Topics.v[i];
        struct DeleteRecordsTopicResult *tr = &rs->Topics.v[i];
        int32_t np = t->Partitions.n > 0 ? t->Partitions.n : 0;
        tr->Name = t->Name;
        tr->Partitions.n = np;
        tr->Partitions.v = arena_alloc(ar, ((size_t)np + 1) * sizeof *tr->Partitions.v);
        if (tr->Partitions.v == NULL)
            goto err_nomem;
        for (int32_t j = 0; j < np; j++)
            delete_partition(b, t->Name ? t->Name : "", &t->Partitions.v[j], &tr->Partitions.v[j]);
    }
    net_respond(req, rs);
    return;

err_nomem:
    log_error("broker", "out of memory in DeleteRecords from %s; closing", req->peer);
    net_close_connection(req);
}
