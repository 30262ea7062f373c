/* SPDX-License-Identifier: Apache-2.0 */
/* group_reset_offsets: an operator's reset of an Empty group's committed offsets from inside the
 * broker (the web console's action; kafka-consumer-groups.sh --reset-offsets does the same with
 * an OffsetCommit at generation -1, which Kafka accepts only while the group has no members).
 * The new offsets go to __consumer_offsets as one batch of OffsetCommit records, as
 * group_offset_commit writes them, and are set once the batch is durable. */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/slog.h"
#include "group_int.h"

struct reset_item {
    char *topic;
    int32_t partition;
    int64_t offset;
};

struct reset_call {
    struct coord_append ap;
    char *group_id;
    uint64_t incarnation;
    int64_t commit_ts;
    struct reset_item *items;
    int32_t n, cap;
    /* While collecting: the caller's choice of each partition's new offset. */
    group_reset_target_fn target;
    void *arg;
};

static void reset_free(struct reset_call *c)
{
    for (int32_t i = 0; i < c->n; i++)
        free(c->items[i].topic);
    free(c->items);
    free(c->group_id);
    free(c);
}

static void collect(void *arg, struct ghash_node *node)
{
    struct reset_call *c = arg;
    struct coord_offset *o = (struct coord_offset *)node;
    if (c->n < 0)
        return; /* out of memory earlier */
    int64_t to = c->target(c->arg, o->topic, o->partition);
    if (to < 0 || to == o->offset)
        return;
    if (c->n == c->cap) {
        int32_t cap = c->cap ? c->cap * 2 : 8;
        struct reset_item *v = realloc(c->items, (size_t)cap * sizeof *v);
        if (v == NULL)
            goto err;
        c->items = v;
        c->cap = cap;
    }
    if ((c->items[c->n].topic = strdup(o->topic)) == NULL)
        goto err;
    c->items[c->n].partition = o->partition;
    c->items[c->n].offset = to;
    c->n++;
    return;
err:
    for (int32_t i = 0; i < c->n; i++)
        free(c->items[i].topic);
    c->n = -1;
}

static void on_reset(struct coord_append *ap, int16_t err)
{
    struct reset_call *c = ap->arg;
    struct coord_group *g = NULL;
    if (err == 0 && !ap->unloaded)
        g = coord_group_again(ap->sh, c->group_id, c->incarnation);
    if (err != 0)
        slog_warn("group", "group %s: offsets reset not stored: %s", c->group_id, err_name(err));
    for (int32_t i = 0; g != NULL && i < c->n; i++)
        if (coord_offset_set(g, c->items[i].topic, c->items[i].partition, c->items[i].offset, -1,
                             "", c->commit_ts) != 0)
            slog_warn("group", "group %s: offset of %s-%d not reset: out of memory", c->group_id,
                      c->items[i].topic, (int)c->items[i].partition);
    if (g != NULL)
        slog_info("group", "group %s: %d committed offsets reset", c->group_id, (int)c->n);
    reset_free(c);
}

int group_reset_offsets(struct group_coord *gc, const char *group_id, group_reset_target_fn target,
                        void *arg, int32_t *changed)
{
    struct shard *sh;
    struct coord_group *g;
    struct coord_record *recs = NULL;
    int32_t k = 0;
    int rc;

    *changed = 0;
    int16_t err = coord_find_group(gc, group_id, false, &sh, &g);
    if (err != 0)
        return err;
    if (g == NULL)
        return ERR_GROUP_ID_NOT_FOUND;
    if (group_sm_state(g->sm) != GROUP_EMPTY)
        return ERR_NON_EMPTY_GROUP;
    struct reset_call *c = calloc(1, sizeof *c);
    if (c == NULL || (c->group_id = strdup(group_id)) == NULL)
        goto err_nomem;
    c->incarnation = g->incarnation;
    c->commit_ts = tclock_now_ms(gc->clock);
    c->target = target;
    c->arg = arg;
    ghash_each(&g->offsets, collect, c);
    if (c->n < 0) {
        c->n = 0;
        goto err_nomem;
    }
    if (c->n == 0) {
        reset_free(c);
        return 0;
    }
    if ((recs = calloc((size_t)c->n, sizeof *recs)) == NULL)
        goto err_nomem;
    for (k = 0; k < c->n; k++) {
        struct coord_offset_value val = {c->items[k].offset, -1, "", c->commit_ts};
        rc = coord_offset_key_encode(group_id, c->items[k].topic, c->items[k].partition,
                                     &recs[k].key, &recs[k].key_len);
        if (rc == 0)
            rc = coord_offset_value_encode(&val, &recs[k].value, &recs[k].value_len);
        if (rc != 0) {
            k++;
            goto err_recs;
        }
    }
    *changed = c->n;
    coord_append_start(sh, recs, c->n, -1, -1, &c->ap, on_reset, c);
    for (int32_t i = 0; i < k; i++) {
        free(recs[i].key);
        free(recs[i].value);
    }
    free(recs);
    return 0;

err_recs:
    for (int32_t i = 0; i < k; i++) {
        free(recs[i].key);
        free(recs[i].value);
    }
    free(recs);
err_nomem:
    if (c)
        reset_free(c);
    return ERR_NOMEM;
}
