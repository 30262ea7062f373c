/* SPDX-License-Identifier: Apache-2.0 */
/* Loading a shard: the __consumer_offsets partition is replayed from its log start to its log
 * end by the coord_log (replica.h: 1 MiB slices read on the thread pool, one per loop turn),
 * which hands each record here. Groups come back from their last GroupMetadataValue
 * (group_sm_restore), offsets from their last OffsetCommitValue; tombstones delete; records of
 * transactional batches wait for their producer's marker (COMMIT: committed offsets; ABORT:
 * dropped). Requests meanwhile get COORDINATOR_LOAD_IN_PROGRESS. */
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/err.h"
#include "base/slog.h"
#include "group_int.h"
#include "record/record.h"

void coord_apply_record(struct shard *sh, const uint8_t *key, int32_t key_len, const uint8_t *value,
                        int32_t value_len, int64_t producer_id, int64_t timestamp)
{
    struct arena *ar = arena_new(16 << 20);
    struct coord_key k;
    struct coord_group *g;
    int rc;

    (void)timestamp;
    if (ar == NULL)
        goto nomem;
    rc = coord_key_decode(key, key_len, &k, ar);
    if (rc != 0 || k.type == COORD_KEY_OTHER) {
        if (rc != 0)
            slog_warn_limited(&sh->gc->replay_warn, 10000, "group",
                              "%s-%d: skipping a record whose key does not decode (%s)",
                              GROUP_TOPIC, sh->partition, err_name(rc));
        goto out;
    }
    if (k.type == COORD_KEY_OFFSET) {
        struct coord_offset_value v;
        if (value == NULL) {
            g = coord_group_find(sh, k.group);
            struct coord_offset *o = g ? coord_offset_find(g, k.topic, k.partition) : NULL;
            if (o)
                coord_offset_delete(g, o);
            goto out;
        }
        rc = coord_offset_value_decode(value, value_len, &v, ar);
        if (rc != 0) {
            slog_warn_limited(&sh->gc->replay_warn, 10000, "group",
                              "%s-%d: skipping an offset of group %s that does not decode (%s)",
                              GROUP_TOPIC, sh->partition, k.group, err_name(rc));
            goto out;
        }
        if (producer_id >= 0)
            rc = coord_pending_add(sh, producer_id, k.group, k.topic, k.partition, v.offset,
                                   v.leader_epoch, v.metadata, v.commit_ts);
        else if ((g = coord_group_get(sh, k.group)) != NULL)
            rc = coord_offset_set(g, k.topic, k.partition, v.offset, v.leader_epoch, v.metadata,
                                  v.commit_ts);
        else
            rc = ERR_NOMEM;
        if (rc != 0)
            goto nomem;
        goto out;
    }
    /* Group metadata: the last value wins; a tombstone forgets the membership. */
    g = value ? coord_group_get(sh, k.group) : coord_group_find(sh, k.group);
    if (g == NULL) {
        if (value)
            goto nomem;
        goto out;
    }
    struct group_sm_owner owner = coord_sm_owner_template;
    owner.arg = g;
    struct group_sm *fresh = group_sm_new(g->id, sh->gc->clock, &sh->gc->sm_cfg, &owner);
    if (fresh == NULL)
        goto nomem;
    group_sm_free(g->sm, ERR_NOT_COORDINATOR);
    g->sm = fresh;
    if (value == NULL) {
        g->metadata_in_log = false;
        if (g->offsets.n == 0)
            coord_group_free(g, ERR_NOT_COORDINATOR);
        goto out;
    }
    struct group_sm_snapshot snap;
    rc = coord_group_value_decode(value, value_len, &snap, ar);
    if (rc == 0)
        rc = group_sm_restore(fresh, &snap);
    if (rc != 0)
        slog_warn_limited(&sh->gc->replay_warn, 10000, "group",
                          "%s-%d: the metadata of group %s does not decode (%s); it starts Empty",
                          GROUP_TOPIC, sh->partition, g->id, err_name(rc));
    g->metadata_in_log = true;
    goto out;

nomem:
    slog_error("group", "out of memory replaying %s-%d", GROUP_TOPIC, sh->partition);
out:
    arena_free(ar);
}

void coord_replay(void *shard, const struct coord_log_record *r)
{
    struct shard *sh = shard;

    if (r->control) {
        coord_pending_complete(sh, r->producer_id, r->commit);
        return;
    }
    if (r->key == NULL)
        return;
    coord_apply_record(sh, r->key, r->key_len, r->value, r->value_len,
                       r->transactional && r->producer_id >= 0 ? r->producer_id : -1, r->timestamp);
}
