/* SPDX-License-Identifier: Apache-2.0 */
/* ListOffsets: earliest (-2), latest (-1), max timestamp (-3, v7) or the first offset at or
 * after a timestamp, per partition. */
#include <stdlib.h>
#include <unistd.h>

#include "base/arena.h"
#include "base/err.h"
#include "base/log.h"
#include "broker_int.h"
#include "log/log.h"
#include "net/net.h"
#include "record/record.h"
#include "replica/replica.h"

#define LATEST_TIMESTAMP -1
#define EARLIEST_TIMESTAMP -2
#define MAX_TIMESTAMP -3

/* Reads the whole batch that holds `offset` (below `max_offset`), if it is at most max_size
 * bytes, into a malloc()ed buffer. Returns 0, ERR_NOTFOUND, ERR_IO (also for a batch past
 * max_size) or ERR_NOMEM. */
static int read_batch_at(struct log *l, int64_t offset, int64_t max_offset, size_t max_size,
                         uint8_t **out, size_t *out_len)
{
    struct log_slice sl;
    uint8_t hdr[RECORD_BATCH_HEADER];
    struct record_batch b;
    uint8_t *buf = NULL;
    int rc = log_read(l, offset, max_offset, 1, &sl);

    if (rc != 0)
        return rc;
    if (sl.len < RECORD_BATCH_HEADER) {
        rc = ERR_NOTFOUND;
        goto out;
    }
    if (pread(sl.fd, hdr, sizeof hdr, sl.pos) != (ssize_t)sizeof hdr ||
        record_batch_parse_header(hdr, sizeof hdr, &b) != 0 || record_batch_size(&b) > sl.len ||
        record_batch_size(&b) > max_size) {
        rc = ERR_IO;
        goto out;
    }
    buf = malloc(record_batch_size(&b));
    if (buf == NULL) {
        rc = ERR_NOMEM;
        goto out;
    }
    if (pread(sl.fd, buf, record_batch_size(&b), sl.pos) != (ssize_t)record_batch_size(&b)) {
        free(buf);
        rc = ERR_IO;
        goto out;
    }
    *out = buf;
    *out_len = record_batch_size(&b);
out:
    log_slice_release(l, &sl);
    return rc;
}

/* Narrows a batch-level answer (the batch holding *offset) to the record Kafka names: the
 * first record at or after `target`, or with `max` the record with the largest timestamp.
 * Runs on the event loop, so it is bounded: only the one batch is read, and only if it and
 * its decompressed records fit the topic's max.message.bytes, which Produce enforces on
 * append (a batch stored before that check, or before the limit was lowered, keeps the
 * batch-level answer). Leaves the batch-level answer if the batch cannot be read. */
static void refine_to_record(struct partition *p, int64_t visible, int64_t target, bool max,
                             int64_t *offset, int64_t *ts)
{
    int64_t limit = partition_settings(p)->max_message_bytes;
    size_t bound = limit > 0 ? (size_t)limit : 0;
    uint8_t *buf;
    size_t len;
    int64_t o, t;
    if (read_batch_at(partition_log(p), *offset, visible, bound, &buf, &len) != 0)
        return;
    if ((max ? record_batch_max_timestamp(buf, len, bound, &o, &t)
             : record_batch_find_timestamp(buf, len, bound, target, &o, &t)) == 0) {
        *offset = o;
        *ts = t;
    }
    free(buf);
}

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
        if (out->Offset >= 0 && out->Offset < visible)
            refine_to_record(p, visible, 0, true, &out->Offset, &out->Timestamp);
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
        if (out->Offset >= 0 && out->Offset < visible)
            refine_to_record(p, visible, in->Timestamp, false, &out->Offset, &out->Timestamp);
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
