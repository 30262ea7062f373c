/* SPDX-License-Identifier: Apache-2.0 */
/* Produce: validates each partition's record batch as it arrived and appends it in place
 * (the request buffer is the write buffer: only the base offset, leader epoch and, for
 * LogAppendTime, the timestamp and CRC are patched). One bad partition fails alone. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/arena.h"
#include "base/err.h"
#include "base/log.h"
#include "broker_int.h"
#include "net/net.h"
#include "record/record.h"
#include "replica/replica.h"

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Appends one partition's records; fills `out` (ErrorCode, offsets) and may set a message. */
static void produce_partition(struct broker *b, struct arena *ar, const char *topic,
                              struct PartitionProduceData *in, struct PartitionProduceResponse *out,
                              int64_t now)
{
    struct partition *p = replica_partition(b->replicas, topic, in->Index);
    struct record_batch hdr;
    const struct partition_settings *set;
    uint8_t *data = (uint8_t *)in->Records.data; /* our own frame buffer: patched in place */
    size_t len = in->Records.len > 0 ? (size_t)in->Records.len : 0;
    int64_t base, append_time;
    int rc;

    out->Index = in->Index;
    out->BaseOffset = -1;
    out->LogAppendTimeMs = -1;
    out->LogStartOffset = -1;
    if (p == NULL) {
        out->ErrorCode = ERR_UNKNOWN_TOPIC_OR_PARTITION;
        return;
    }
    set = partition_settings(p);
    if (len == 0) {
        out->ErrorCode = ERR_INVALID_RECORD;
        out->ErrorMessage = "Produce request without records";
        return;
    }
    rc = record_batch_validate(data, len, &hdr);
    if (rc == ERR_TRUNCATED)
        rc = ERR_CORRUPT_MESSAGE;
    if (rc == 0 && hdr.record_count == 0) {
        rc = ERR_INVALID_RECORD;
        out->ErrorMessage = "A produced batch must hold at least one record";
    }
    if (rc == 0 && record_batch_size(&hdr) != len) {
        rc = ERR_INVALID_RECORD;
        out->ErrorMessage =
            "Produce requests v3+ must carry exactly one record batch per partition";
    }
    if (rc == 0 && (int64_t)len > set->max_message_bytes) {
        rc = ERR_MESSAGE_TOO_LARGE;
        out->ErrorMessage = arena_printf(ar,
                                         "The batch is %zu bytes, larger than "
                                         "max.message.bytes (%lld)",
                                         len, (long long)set->max_message_bytes);
    }
    if (rc == 0 && !set->log_append_time &&
        (now - hdr.base_timestamp > set->ts_before_max_ms ||
         hdr.max_timestamp - now > set->ts_after_max_ms)) {
        rc = ERR_INVALID_TIMESTAMP;
        out->ErrorMessage = arena_printf(ar,
                                         "Timestamp %lld of the batch is out of the allowed "
                                         "range around the broker's time %lld",
                                         (long long)hdr.base_timestamp, (long long)now);
    }
    if (rc == 0 && (hdr.attributes & RECORD_ATTR_CONTROL)) {
        rc = ERR_INVALID_RECORD;
        out->ErrorMessage = "Clients may not write control batches";
    }
    if (rc != 0) {
        out->ErrorCode = (int16_t)err_wire(rc);
        log_debug("broker", "produce to %s-%d rejected: %s", topic, in->Index, err_name(rc));
        return;
    }
    rc = partition_append(p, data, len, &hdr, &base, &append_time);
    if (rc == ERR_DUPLICATE_SEQUENCE_NUMBER) {
        /* An exact retry: the client gets the offsets of the copy already in the log. */
        out->BaseOffset = base;
        out->LogStartOffset = partition_log_start_offset(p);
        return;
    }
    if (rc != 0) {
        out->ErrorCode = (int16_t)(rc == ERR_IO ? ERR_KAFKA_STORAGE_ERROR : err_wire(rc));
        if (rc == ERR_OUT_OF_ORDER_SEQUENCE_NUMBER || rc == ERR_INVALID_PRODUCER_EPOCH ||
            rc == ERR_UNKNOWN_PRODUCER_ID)
            log_debug("broker", "produce to %s-%d from producer %lld epoch %d seq %d: %s", topic,
                      in->Index, (long long)hdr.producer_id, hdr.producer_epoch, hdr.base_sequence,
                      err_name(rc));
        return;
    }
    out->BaseOffset = base;
    out->LogAppendTimeMs = append_time;
    out->LogStartOffset = partition_log_start_offset(p);
}

void broker_produce(struct broker *b, struct net_request *req)
{
    struct ProduceRequest *rq = req->body;
    struct arena *ar = req->arena;
    struct ProduceResponse *rs = arena_alloc(ar, sizeof *rs);
    int16_t acks = rq->Acks;
    int64_t now = wall_ms();
    int32_t nt = rq->TopicData.n > 0 ? rq->TopicData.n : 0;

    if (rs == NULL)
        goto err_nomem;
    rs->Responses.n = nt;
    rs->Responses.v = arena_alloc(ar, ((size_t)nt + 1) * sizeof *rs->Responses.v);
    if (rs->Responses.v == NULL)
        goto err_nomem;
    for (int32_t i = 0; i < nt; i++) {
        struct TopicProduceData *td = &rq->TopicData.v[i];
        struct TopicProduceResponse *tr = &rs->Responses.v[i];
        int32_t np = td->PartitionData.n > 0 ? td->PartitionData.n : 0;
        tr->Name = td->Name;
        tr->PartitionResponses.n = np;
        tr->PartitionResponses.v =
            arena_alloc(ar, ((size_t)np + 1) * sizeof(*tr->PartitionResponses.v));
        if (tr->PartitionResponses.v == NULL)
            goto err_nomem;
        for (int32_t j = 0; j < np; j++) {
            struct PartitionProduceResponse *pr = &tr->PartitionResponses.v[j];
            if (acks != 0 && acks != 1 && acks != -1) {
                pr->Index = td->PartitionData.v[j].Index;
                pr->ErrorCode = ERR_INVALID_REQUIRED_ACKS;
                pr->BaseOffset = pr->LogAppendTimeMs = pr->LogStartOffset = -1;
                continue;
            }
            produce_partition(b, ar, td->Name ? td->Name : "", &td->PartitionData.v[j], pr, now);
        }
    }
    /* With acks=0 the client reads no answer; errors are only in our log at debug level. */
    if (acks == 0)
        net_finish(req);
    else
        net_respond(req, rs);
    return;

err_nomem:
    log_error("broker", "out of memory in Produce from %s; closing", req->peer);
    net_close_connection(req);
}
