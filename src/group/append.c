/* SPDX-License-Identifier: Apache-2.0 */
/* Coordinator appends: one record batch per state change (offsets, group metadata,
 * tombstones), appended to the shard's __consumer_offsets partition and answered once the
 * high watermark covers it — acks=all, through coord_log_append (replica.h). Transactional offset
 * commits go in a transactional batch of the producer's id and epoch, as Kafka writes
 * TxnOffsetCommit. */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/slog.h"
#include "group_int.h"

int16_t coord_append_error(int rc, bool offsets)
{
    switch (rc) {
    case 0:
        return 0;
    case ERR_UNKNOWN_TOPIC_OR_PARTITION:
    case ERR_NOT_ENOUGH_REPLICAS:
    case ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND:
        return ERR_COORDINATOR_NOT_AVAILABLE;
    case ERR_NOT_LEADER_OR_FOLLOWER:
    case ERR_KAFKA_STORAGE_ERROR:
    case ERR_IO:
        return ERR_NOT_COORDINATOR;
    case ERR_MESSAGE_TOO_LARGE:
    case ERR_RECORD_LIST_TOO_LARGE:
    case ERR_INVALID_FETCH_SIZE:
        return offsets ? ERR_INVALID_COMMIT_OFFSET_SIZE : ERR_UNKNOWN_SERVER_ERROR;
    case ERR_REQUEST_TIMED_OUT:
        /* A group's metadata not stored in time: its members rejoin. */
        return offsets ? ERR_REQUEST_TIMED_OUT : ERR_REBALANCE_IN_PROGRESS;
    case ERR_NOT_COORDINATOR:
    case ERR_COORDINATOR_NOT_AVAILABLE:
    case ERR_INVALID_PRODUCER_EPOCH:
    case ERR_PRODUCER_FENCED:
        return (int16_t)rc;
    default:
        return offsets && rc > 0 ? (int16_t)rc : ERR_UNKNOWN_SERVER_ERROR;
    }
}

static void on_logged(struct coord_log_append *la, int16_t err)
{
    struct coord_append *ap = la->arg;
    ap->unloaded = la->unloaded;
    ap->done(ap, err);
}

void coord_append_start(struct shard *sh, const struct coord_record *recs, int32_t n,
                        int64_t producer_id, int16_t producer_epoch, struct coord_append *ap,
                        void (*done)(struct coord_append *ap, int16_t err), void *arg)
{
    struct coord_log_kv kv[64] = {{0}}, *in = kv;

    ap->sh = sh;
    ap->unloaded = false;
    ap->done = done;
    ap->arg = arg;
    if (n > 64 && (in = calloc((size_t)n, sizeof *in)) == NULL) {
        slog_error("group", "out of memory appending to %s-%d", GROUP_TOPIC, sh->partition);
        done(ap, ERR_COORDINATOR_NOT_AVAILABLE);
        return;
    }
    for (int32_t i = 0; i < n; i++)
        in[i] =
            (struct coord_log_kv){recs[i].key, recs[i].key_len, recs[i].value, recs[i].value_len};
    coord_log_append(sh->gc->log, sh->partition, in, n, producer_id, producer_epoch, &ap->la,
                     on_logged, ap, NULL);
    if (in != kv)
        free(in);
}
