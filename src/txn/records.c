/* SPDX-License-Identifier: Apache-2.0 */
/* The coordinator's records in __transaction_state, as Kafka 3.x writes them (tables in
 * proto's schema_records.c). Each record is a key and a value, each an INT16 version and the
 * struct at that version:
 *
 **   TransactionLogKey v0     TransactionalId STRING
 **   TransactionLogValue v0   ProducerId INT64, ProducerEpoch INT16,
 **                            TransactionTimeoutMs INT32, TransactionStatus INT8,
 **                            TransactionPartitions NULLABLE ARRAY of {Topic STRING,
 **                            PartitionIds ARRAY of INT32} (null when Empty),
 **                            TransactionLastUpdateTimestampMs INT64,
 **                            TransactionStartTimestampMs INT64
 *
 * A null value (tombstone) removes the id (written when it expires). Value v1 (flexible,
 * tagged previous/next producer ids) is read too. */
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/err.h"
#include "proto/proto.h"
#include "txn_int.h"

#define KEY_VERSION 0
#define VALUE_VERSION 0

int txn_key_encode(const char *tid, uint8_t **out, int32_t *len)
{
    struct TransactionLogKey k = {(char *)tid};
    return proto_record_encode_alloc(&proto_record_TransactionLogKey, KEY_VERSION, &k, out, len);
}

int txn_value_encode(const struct txn_transit *tr, uint8_t **out, int32_t *len)
{
    struct TransactionLogValue v = {
        .ProducerId = tr->producer_id,
        .PreviousProducerId = tr->last_producer_id,
        .NextProducerId = -1,
        .ProducerEpoch = tr->producer_epoch,
        .TransactionTimeoutMs = tr->timeout_ms,
        .TransactionStatus = (int8_t)tr->state,
        .TransactionLastUpdateTimestampMs = tr->update_ms,
        .TransactionStartTimestampMs = tr->start_ms,
    };
    struct PartitionsSchema *groups = NULL;
    int32_t *ids = NULL;
    int rc;

    if (tr->state == TXN_EMPTY) {
        v.TransactionPartitions.n = -1; /* null, as Kafka writes an Empty entry */
    } else {
        groups = calloc((size_t)tr->n_parts + 1, sizeof *groups);
        ids = calloc((size_t)tr->n_parts + 1, sizeof *ids);
        if (groups == NULL || ids == NULL) {
            free(groups);
            free(ids);
            return ERR_NOMEM;
        }
        int32_t ng = 0;
        for (int32_t i = 0; i < tr->n_parts; i++) {
            /* Partitions are sorted by topic: one group per run. */
            if (ng == 0 || strcmp(groups[ng - 1].Topic, tr->parts[i].topic) != 0) {
                groups[ng].Topic = tr->parts[i].topic;
                groups[ng].PartitionIds.v = &ids[i];
                groups[ng].PartitionIds.n = 0;
                ng++;
            }
            ids[i] = tr->parts[i].partition;
            groups[ng - 1].PartitionIds.n++;
        }
        v.TransactionPartitions.v = groups;
        v.TransactionPartitions.n = ng;
    }
    rc = proto_record_encode_alloc(&proto_record_TransactionLogValue, VALUE_VERSION, &v, out, len);
    free(groups);
    free(ids);
    return rc;
}

int txn_key_decode(const uint8_t *buf, int32_t len, struct arena *ar, const char **tid)
{
    struct TransactionLogKey k = {0};
    int16_t v;
    int rc;

    if (buf == NULL || len < 2)
        return ERR_PARSE;
    rc = proto_record_version(buf, (size_t)len, &v);
    if (rc != 0)
        return rc;
    if (v != KEY_VERSION)
        return ERR_NOTFOUND;
    rc = proto_record_decode(&proto_record_TransactionLogKey, buf, (size_t)len, NULL, &k, ar);
    if (rc != 0)
        return rc;
    if (k.TransactionalId == NULL)
        return ERR_PARSE;
    *tid = k.TransactionalId;
    return 0;
}

int txn_value_decode(const uint8_t *buf, int32_t len, struct arena *ar, struct txn_transit *tr)
{
    struct TransactionLogValue v = {0};
    int rc;

    memset(tr, 0, sizeof *tr);
    rc = proto_record_decode(&proto_record_TransactionLogValue, buf, (size_t)len, NULL, &v, ar);
    if (rc != 0)
        return rc;
    if (v.TransactionStatus < 0 || v.TransactionStatus >= TXN_N_STATES)
        return ERR_PARSE;
    tr->producer_id = v.ProducerId;
    tr->last_producer_id = v.PreviousProducerId;
    tr->producer_epoch = v.ProducerEpoch;
    tr->last_producer_epoch = -1; /* not in the log: in memory only, as Kafka */
    tr->timeout_ms = v.TransactionTimeoutMs;
    tr->state = (enum txn_state)v.TransactionStatus;
    tr->update_ms = v.TransactionLastUpdateTimestampMs;
    tr->start_ms = v.TransactionStartTimestampMs;
    for (int32_t i = 0; i < v.TransactionPartitions.n; i++) {
        const struct PartitionsSchema *g = &v.TransactionPartitions.v[i];
        if (g->Topic == NULL)
            continue;
        for (int32_t j = 0; j < g->PartitionIds.n; j++) {
            if (txn_transit_add(tr, g->Topic, g->PartitionIds.v[j]) != 0) {
                txn_transit_clear(tr);
                return ERR_NOMEM;
            }
        }
    }
    return 0;
}
