/* SPDX-License-Identifier: Apache-2.0 */
/* The coordinator as the owner of each group's state machine: a group's metadata is stored
 * (GroupMetadataValue) when group_sm asks, and the state machine hears back once it is
 * durable or failed. */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/slog.h"
#include "group_int.h"

struct persist_call {
    struct coord_append ap;
    char *group_id;
    uint64_t incarnation;
    struct group_sm *sm;
    uint64_t token;
};

static void on_persisted(struct coord_append *ap, int16_t err)
{
    struct persist_call *pc = ap->arg;
    struct coord_group *g = NULL;

    /* The group may have been unloaded, deleted or replaced meanwhile: only the same group
     * with the same state machine hears the answer. */
    if (!ap->unloaded)
        g = coord_group_again(ap->sh, pc->group_id, pc->incarnation);
    if (g && g->sm == pc->sm) {
        if (err == 0)
            g->metadata_in_log = true;
        else
            slog_warn("group", "storing the metadata of group %s failed: %s", pc->group_id,
                      err_name(err));
        group_sm_persisted(g->sm, pc->token, err == 0 ? 0 : coord_append_error(err, false));
    }
    free(pc->group_id);
    free(pc);
}

static void persist(void *arg, struct group_sm *sm, uint64_t token)
{
    struct coord_group *g = arg;
    struct persist_call *pc = calloc(1, sizeof *pc);
    struct coord_record rec = {0};
    int rc = ERR_NOMEM;

    if (pc == NULL || (pc->group_id = strdup(g->id)) == NULL)
        goto fail;
    rc = coord_group_key_encode(g->id, &rec.key, &rec.key_len);
    if (rc == 0)
        rc = coord_group_value_encode(sm, &rec.value, &rec.value_len);
    if (rc != 0)
        goto fail;
    pc->incarnation = g->incarnation;
    pc->sm = sm;
    pc->token = token;
    coord_append_start(g->sh, &rec, 1, -1, -1, &pc->ap, on_persisted, pc);
    free(rec.key);
    free(rec.value);
    return;

fail:
    free(rec.key);
    free(rec.value);
    if (pc)
        free(pc->group_id);
    free(pc);
    slog_error("group", "out of memory storing the metadata of group %s", g->id);
    group_sm_persisted(sm, token, ERR_COORDINATOR_NOT_AVAILABLE);
}

const struct group_sm_owner coord_sm_owner_template = {
    .persist = persist,
    .state_changed = NULL,
    .arg = NULL,
};
