/* SPDX-License-Identifier: Apache-2.0 */
/* Transactional offsets (the transaction coordinator's hooks, issue 10): TxnOffsetCommit's
 * offsets are appended as OffsetCommit records in one transactional batch of the producer
 * (as Kafka writes them) and stay pending for that producer until its COMMIT marker makes
 * them the group's committed offsets or its ABORT marker drops them. */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/slog.h"
#include "group_int.h"

struct txn_call {
    struct coord_append ap;
    int64_t producer_id;
    int64_t commit_ts;
    char *group_id;
    int32_t n;
    struct group_txn_offset *offsets; /* copies of the stored ones */
    group_txn_done_fn done;
    void *arg;
};

static void txn_call_free(struct txn_call *c)
{
    for (int32_t i = 0; i < c->n; i++) {
        free((char *)c->offsets[i].topic);
        free((char *)c->offsets[i].metadata);
    }
    free(c->offsets);
    free(c->group_id);
    free(c);
}

static void on_txn_appended(struct coord_append *ap, int16_t err)
{
    struct txn_call *c = ap->arg;

    if (err == 0 && !ap->unloaded) {
        for (int32_t i = 0; i < c->n; i++) {
            const struct group_txn_offset *o = &c->offsets[i];
            if (coord_pending_add(ap->sh, c->producer_id, c->group_id, o->topic, o->partition,
                                  o->offset, o->leader_epoch, o->metadata, c->commit_ts) != 0) {
                err = ERR_COORDINATOR_NOT_AVAILABLE;
                break;
            }
        }
    }
    c->done(c->arg, err == 0 ? 0 : coord_append_error(err, true));
    txn_call_free(c);
}

void group_txn_offset_commit(struct group_coord *gc, const char *group_id, int64_t producer_id,
                             int16_t producer_epoch, const char *member_id,
                             const char *group_instance_id, int32_t generation_id,
                             const struct group_txn_offset *offsets, int32_t n, int16_t *errs,
                             group_txn_done_fn done, void *arg)
{
    struct shard *sh = NULL;
    struct coord_group *g;
    struct coord_record *recs = NULL;
    struct txn_call *c = NULL;
    int32_t k = 0;
    int16_t err;

    for (int32_t i = 0; i < n; i++)
        errs[i] = 0;
    err = coord_shard_for(gc, group_id, &sh);
    if (err != 0)
        goto fail;
    g = coord_group_get(sh, group_id);
    if (g == NULL) {
        err = ERR_COORDINATOR_NOT_AVAILABLE;
        goto fail;
    }
    err = group_sm_check_commit(g->sm, member_id ? member_id : "", group_instance_id, generation_id,
                                true);
    if (err != 0)
        goto fail;
    c = calloc(1, sizeof *c);
    recs = calloc((size_t)(n > 0 ? n : 1), sizeof *recs);
    if (c == NULL || recs == NULL || (c->group_id = strdup(group_id)) == NULL ||
        (c->offsets = calloc((size_t)(n > 0 ? n : 1), sizeof *c->offsets)) == NULL) {
        err = ERR_COORDINATOR_NOT_AVAILABLE;
        goto fail;
    }
    c->producer_id = producer_id;
    c->commit_ts = tclock_now_ms(gc->clock);
    c->done = done;
    c->arg = arg;
    for (int32_t i = 0; i < n; i++) {
        const struct group_txn_offset *o = &offsets[i];
        const char *md = o->metadata ? o->metadata : "";
        if (strlen(md) > (size_t)gc->metadata_max_bytes) {
            errs[i] = ERR_OFFSET_METADATA_TOO_LARGE;
            continue;
        }
        if (!coord_partition_known(gc, o->topic, o->partition)) {
            errs[i] = ERR_UNKNOWN_TOPIC_OR_PARTITION;
            continue;
        }
        struct group_txn_offset *copy = &c->offsets[c->n];
        *copy = *o;
        copy->topic = strdup(o->topic);
        copy->metadata = strdup(md);
        if (copy->topic == NULL || copy->metadata == NULL) {
            free((char *)copy->topic);
            free((char *)copy->metadata);
            err = ERR_COORDINATOR_NOT_AVAILABLE;
            goto fail;
        }
        c->n++;
        struct coord_offset_value v = {o->offset, o->leader_epoch, md, c->commit_ts};
        if (coord_offset_key_encode(group_id, o->topic, o->partition, &recs[k].key,
                                    &recs[k].key_len) != 0 ||
            coord_offset_value_encode(&v, &recs[k].value, &recs[k].value_len) != 0) {
            k++;
            err = ERR_COORDINATOR_NOT_AVAILABLE;
            goto fail;
        }
        k++;
    }
    if (k == 0) {
        txn_call_free(c);
        free(recs);
        done(arg, 0);
        return;
    }
    coord_append_start(sh, recs, k, producer_id, producer_epoch, &c->ap, on_txn_appended, c);
    for (int32_t i = 0; i < k; i++) {
        free(recs[i].key);
        free(recs[i].value);
    }
    free(recs);
    return;

fail:
    for (int32_t i = 0; recs && i < k; i++) {
        free(recs[i].key);
        free(recs[i].value);
    }
    free(recs);
    if (c)
        txn_call_free(c);
    done(arg, err);
}

void group_txn_complete(struct group_coord *gc, int32_t partition, int64_t producer_id, bool commit)
{
    struct shard *sh = partition >= 0 && partition < gc->n_shards ? gc->shards[partition] : NULL;
    if (sh)
        coord_pending_complete(sh, producer_id, commit);
}

bool group_offsets_pending(struct group_coord *gc, const char *group_id, const char *topic,
                           int32_t partition)
{
    struct shard *sh;
    if (coord_shard_for(gc, group_id, &sh) != 0)
        return false;
    for (struct coord_pending *p = sh->pending; p; p = p->next)
        if (p->partition == partition && strcmp(p->topic, topic) == 0 &&
            strcmp(p->group_id, group_id) == 0)
            return true;
    return false;
}
