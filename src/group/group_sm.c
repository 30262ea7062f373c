/* SPDX-License-Identifier: Apache-2.0 */
/* group_sm: the classic group membership state machine (placeholder until the full one lands:
 * every request fails with UNKNOWN_SERVER_ERROR). */
#include "group_sm.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/err.h"

struct group_sm {
    char *group_id;
    struct tclock *clock;
    struct group_sm_config cfg;
    struct group_sm_owner owner;
    enum group_state state;
};

static const char *const state_names[] = {"Empty", "PreparingRebalance", "CompletingRebalance",
                                          "Stable", "Dead"};

const char *group_state_name(enum group_state s)
{
    if ((unsigned)s >= sizeof state_names / sizeof state_names[0])
        return "Unknown";
    return state_names[s];
}

int group_state_parse(const char *name)
{
    for (unsigned i = 0; i < sizeof state_names / sizeof state_names[0]; i++)
        if (name && strcasecmp(name, state_names[i]) == 0)
            return (int)i;
    return -1;
}

struct group_sm *group_sm_new(const char *group_id, struct tclock *clock,
                              const struct group_sm_config *cfg, const struct group_sm_owner *owner)
{
    struct group_sm *sm = calloc(1, sizeof *sm);
    if (!sm)
        return NULL;
    sm->group_id = strdup(group_id);
    if (!sm->group_id) {
        free(sm);
        return NULL;
    }
    sm->clock = clock;
    sm->cfg = *cfg;
    sm->owner = *owner;
    sm->state = GROUP_EMPTY;
    return sm;
}

void group_sm_free(struct group_sm *sm, int16_t err)
{
    (void)err;
    if (!sm)
        return;
    free(sm->group_id);
    free(sm);
}

const char *group_sm_id(const struct group_sm *sm)
{
    return sm->group_id;
}
enum group_state group_sm_state(const struct group_sm *sm)
{
    return sm->state;
}
int32_t group_sm_generation(const struct group_sm *sm)
{
    (void)sm;
    return 0;
}
const char *group_sm_protocol_type(const struct group_sm *sm)
{
    (void)sm;
    return NULL;
}
const char *group_sm_protocol_name(const struct group_sm *sm)
{
    (void)sm;
    return NULL;
}
const char *group_sm_leader(const struct group_sm *sm)
{
    (void)sm;
    return NULL;
}
int64_t group_sm_state_timestamp(const struct group_sm *sm)
{
    (void)sm;
    return 0;
}

const struct group_member_info *group_sm_members(const struct group_sm *sm, int32_t *n)
{
    (void)sm;
    *n = 0;
    return NULL;
}

void group_sm_join(struct group_sm *sm, const struct group_join_args *a,
                   struct group_join_waiter *w)
{
    (void)sm;
    struct group_join_result r = {
        .error = ERR_UNKNOWN_SERVER_ERROR, .generation_id = -1, .member_id = a->member_id};
    w->done(w, &r);
}

void group_sm_sync(struct group_sm *sm, const struct group_sync_args *a,
                   struct group_sync_waiter *w)
{
    (void)sm;
    (void)a;
    struct group_sync_result r = {.error = ERR_UNKNOWN_SERVER_ERROR};
    w->done(w, &r);
}

void group_sm_persisted(struct group_sm *sm, uint64_t token, int16_t err)
{
    (void)sm;
    (void)token;
    (void)err;
}

int16_t group_sm_heartbeat(struct group_sm *sm, const char *member_id,
                           const char *group_instance_id, int32_t generation_id)
{
    (void)sm, (void)member_id, (void)group_instance_id, (void)generation_id;
    return ERR_UNKNOWN_SERVER_ERROR;
}

int16_t group_sm_leave(struct group_sm *sm, const char *member_id, const char *group_instance_id,
                       const char *reason)
{
    (void)sm, (void)member_id, (void)group_instance_id, (void)reason;
    return ERR_UNKNOWN_SERVER_ERROR;
}

int16_t group_sm_check_commit(const struct group_sm *sm, const char *member_id,
                              const char *group_instance_id, int32_t generation_id, bool txn)
{
    (void)sm, (void)member_id, (void)group_instance_id, (void)generation_id, (void)txn;
    return ERR_UNKNOWN_SERVER_ERROR;
}

bool group_sm_subscribed(const struct group_sm *sm, const char *topic)
{
    (void)sm, (void)topic;
    return false;
}

int16_t group_sm_delete(struct group_sm *sm)
{
    (void)sm;
    return ERR_UNKNOWN_SERVER_ERROR;
}

int group_sm_restore(struct group_sm *sm, const struct group_sm_snapshot *s)
{
    (void)sm, (void)s;
    return ERR_UNKNOWN_SERVER_ERROR;
}
