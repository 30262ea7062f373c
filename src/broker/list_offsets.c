/* SPDX-License-Identifier: Apache-2.0 */
/* ListOffsets: earliest (-2), latest (-1), max timestamp (-3, v7) or the first offset at or
 * after a timestamp, per partition. */
#include "base/arena.h"
#include "base/err.h"
#include "base/log.h"
#include "broker_int.h"
#include "log/log.h"
#include "net/net.h"
#include "replica/replica.h"

#define LATEST_TIMESTAMP -1
#define EARLIEST_TIMESTAMP -2
#define MAX_TIMESTAMP -3

static void list_partition(struct broker *b, const char *topic, int8_t isolation,
                           const struct ListOffsetsPartition *in,
                           struct ListOffsetsPartitionResponse *out)
{
    struct partition *p = replica_partition(b->replicas, topic, in->PartitionIndex);
    int64_t visible;
    int rc;

    out->PartitionIndex = in->PartitionIndex;
    out->Timestamp = -1;
    out->Offset = -1;
    out->LeaderEpoch = -1;
    if (p == NULL) {
        out->ErrorCode = ERR_UNKNOWN_TOPIC_OR_PARTITION;
        return;
    }
    rc = broker_check_epoch(partition_leader_epoch(p), in->CurrentLeaderEpoch);
    if (rc != 0) {
        out->ErrorCode = (int16_t)rc;
        return;
    }
    out->LeaderEpoch = partition_leader_epoch(p);
    visible = isolation == 1 ? partition_last_stable_offset(p) : partition_high_watermark(p);
    switch (in->Timestamp) {
    case EARLIEST_TIMESTAMP:
        out->Offset = partition_log_start_offset(p);
        break;
    case LATEST_TIMESTAMP:
        out->Offset = visible;
        break;
    case MAX_TIMESTAMP:
        log_max_timestamp(partition_log(p), &out->Offset, &out->Timestamp);
        if (out->Offset >= visible)
            out->Offset = out->Timestamp = -1;
        break;
    default:
        if (in->Timestamp < 0) {
            out->ErrorCode = ERR_INVALID_REQUEST;
            return;
        }
        rc = log_offset_for_time(partition_log(p), in->Timestamp, &out->Offset, &out->Timestamp);
        if (rc != 0) {
            out->ErrorCode = ERR_KAFKA_STORAGE_ERROR;
            return;
        }
        /* Offsets a consumer cannot read yet are not answers. */
        if (out->Offset >= visible)
            out->Offset = out->Timestamp = -1;
        break;
    }
}

void broker_list_offsets(struct broker *b, struct net_request *req)
{
    struct ListOffsetsRequest *rq = req->body;
    struct arena *ar = req->arena;
    struct ListOffsetsResponse *rs = arena_alloc(ar, sizeof *rs);
    int32_t nt = rq->Topics.n > 0 ? rq->Topics.n : 0;

    if (rs == NULL)
        goto err_nomem;
    rs->Topics.n = nt;
    rs->Topics.v = arena_alloc(ar, ((size_t)nt + 1) * sizeof *rs->Topics.v);
    if (rs->Topics.v == NULL)
        goto err_nomem;
    for (int32_t i = 0; i < nt; i++) {
        struct ListOffsetsTopic *t = &rq->Topics.v[i];
        struct ListOffsetsTopicResponse *tr = &rs->Topics.v[i];
        int32_t np = t->Partitions.n > 0 ? t->Partitions.n : 0;
        tr->Name = t->Name;
        tr->Partitions.n = np;
        tr->Partitions.v = arena_alloc(ar, ((size_t)np + 1) * sizeof *tr->Partitions.v);
        if (tr->Partitions.v == NULL)
            goto err_nomem;
        for (int32_t j = 0; j < np; j++)
            list_partition(b, t->Name ? t->Name : "", rq->IsolationLevel, &t->Partitions.v[j],
                           &tr->Partitions.v[j]);
    }
    net_respond(req, rs);
    return;

err_nomem:
    log_error("broker", "out of memory in ListOffsets from %s; closing", req->peer);
    net_close_connection(req);
}
