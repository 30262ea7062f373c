/* SPDX-License-Identifier: Apache-2.0 */
/* Coordinator appends: one record batch per state change (offsets, group metadata,
 * tombstones), appended to the shard's __consumer_offsets partition and answered once the
 * high watermark covers it — acks=all, through the coordinator's purgatory, as Kafka's
 * coordinator waits in its delayed-produce purgatory. Transactional offset commits go in a
 * transactional batch of the producer's id and epoch, as Kafka writes TxnOffsetCommit. */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/slog.h"
#include "group_int.h"
#include "pstate/pstate.h"
#include "record/record.h"

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

static void unlink_append(struct coord_append *ap)
{
    if (ap->next) {
        ap->prev->next = ap->next;
        ap->next->prev = ap->prev;
        ap->next = ap->prev = NULL;
    }
}

static void on_covered(struct purgatory_op *op, struct purgatory_watch *w)
{
    struct coord_append *ap = op->data;
    if (!w->reached)
        ap->err = ERR_NOT_COORDINATOR;
    purgatory_complete(op);
}

static void on_append_done(struct purgatory_op *op, int result)
{
    struct coord_append *ap = op->data;
    int16_t err = ap->err;

    unlink_append(ap);
    if (result == PURGATORY_TIMED_OUT && err == 0)
        err = ERR_REQUEST_TIMED_OUT;
    else if (result == PURGATORY_STOPPED && err == 0)
        err = ERR_COORDINATOR_NOT_AVAILABLE;
    ap->done(ap, err);
}

/* The sequence the coordinator's next transactional batch of this producer must carry: the
 * partition's producer state checks sequences of every batch, while Kafka's coordinator
 * appends skip that check, so the coordinator continues the producer's sequence here. */
static int32_t next_sequence(struct partition *p, int64_t producer_id, int16_t epoch)
{
    const struct pstate_producer *pp = pstate_get(partition_pstate(p), producer_id);
    if (pp == NULL || pp->epoch != epoch || pp->n_batches == 0)
        return 0;
    int32_t last = pp->batches[pp->n_batches - 1].last_seq;
    return last == INT32_MAX ? 0 : last + 1;
}

void coord_append_start(struct shard *sh, const struct coord_record *recs, int32_t n,
                        int64_t producer_id, int16_t producer_epoch, struct coord_append *ap,
                        void (*done)(struct coord_append *ap, int16_t err), void *arg)
{
    struct group_coord *gc = sh->gc;
    struct partition *p = replica_partition(gc->replicas, GROUP_TOPIC, sh->partition);
    struct record_input *in = NULL;
    struct record_batch hdr;
    uint8_t *buf = NULL;
    size_t len;
    int64_t base, append_time, now = tclock_now_ms(gc->clock);
    int rc;

    memset(ap, 0, sizeof *ap);
    ap->sh = sh;
    ap->done = done;
    ap->arg = arg;
    if (p == NULL || partition_role(p) != REPLICA_LEADER) {
        rc = ERR_NOT_LEADER_OR_FOLLOWER;
        goto fail;
    }
    in = calloc((size_t)(n > 0 ? n : 1), sizeof *in);
    if (in == NULL) {
        rc = ERR_NOMEM;
        goto fail;
    }
    for (int32_t i = 0; i < n; i++) {
        in[i].key = recs[i].key;
        in[i].key_len = recs[i].key_len;
        in[i].value = recs[i].value;
        in[i].value_len = recs[i].value ? recs[i].value_len : -1;
        in[i].timestamp = now;
    }
    struct record_build_options opt = {
        .base_offset = 0,
        .attributes = producer_id >= 0 ? RECORD_ATTR_TRANSACTIONAL : 0,
        .producer_id = producer_id >= 0 ? producer_id : -1,
        .producer_epoch = producer_id >= 0 ? producer_epoch : -1,
        .base_sequence = producer_id >= 0 ? next_sequence(p, producer_id, producer_epoch) : -1,
        .leader_epoch = -1,
    };
    rc = record_batch_build(&opt, in, n, &buf, &len);
    free(in);
    if (rc == 0)
        rc = record_batch_validate(buf, len, &hdr);
    if (rc == 0)
        rc = partition_append(p, buf, len, &hdr, &base, &append_time);
    free(buf);
    if (rc != 0)
        goto fail;
    ap->need = base + hdr.last_offset_delta + 1;
    /* Linked before waiting: an unload completes every append of the shard. */
    ap->next = &sh->appends;
    ap->prev = sh->appends.prev;
    sh->appends.prev->next = ap;
    sh->appends.prev = ap;
    purgatory_op_init(gc->pg, &ap->op, on_covered, on_append_done, ap);
    purgatory_watch_init(&ap->op, &ap->watch);
    if (partition_watch(p, PARTITION_HIGH_WATERMARK, ap->need, &ap->watch)) {
        if (!ap->watch.reached)
            ap->err = ERR_NOT_COORDINATOR;
        purgatory_complete(&ap->op);
        return;
    }
    purgatory_op_start(&ap->op, gc->commit_timeout_ms > 0 ? gc->commit_timeout_ms : 5000);
    return;

fail:
    if (rc == ERR_NOMEM)
        slog_error("group", "out of memory appending to %s-%d", GROUP_TOPIC, sh->partition);
    else
        slog_debug("group", "append to %s-%d failed: %s", GROUP_TOPIC, sh->partition, err_name(rc));
    ap->err = (int16_t)(rc == ERR_NOMEM ? ERR_COORDINATOR_NOT_AVAILABLE : rc);
    done(ap, ap->err);
}
