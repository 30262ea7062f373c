/* SPDX-License-Identifier: Apache-2.0 */
/* group_sm unit tests: one group's membership state machine on virtual time, with a fake
 * owner whose persist answers at once, later, or with an error. No sockets, no coordinator. */
#include "harness.h"

#include <stdint.h>
#include <stdlib.h>

#include "base/err.h"
#include "base/tclock.h"
#include "group/group_sm.h"

/* ---- the fake owner -------------------------------------------------------------------- */

struct fx {
    struct tclock *clock;
    struct group_sm *sm;
    bool hold;           /* persist waits for fx_answer instead of answering at once */
    int16_t persist_err; /* what an immediate answer says */
    uint64_t held[16];
    int n_held;
    int n_persists;
    /* The group as the owner saw it at the last persist. */
    int32_t p_generation, p_members;
    enum group_state p_state;
    char p_assign[8][32];
    int n_notes;
    enum group_state note_from[32], note_to[32];
};

static void fx_persist(void *arg, struct group_sm *sm, uint64_t token)
{
    struct fx *f = arg;
    f->n_persists++;
    f->p_generation = group_sm_generation(sm);
    f->p_state = group_sm_state(sm);
    const struct group_member_info *mi = group_sm_members(sm, &f->p_members);
    for (int32_t i = 0; i < f->p_members && i < 8; i++)
        snprintf(f->p_assign[i], sizeof f->p_assign[i], "%.*s", (int)mi[i].assignment_len,
                 (const char *)mi[i].assignment);
    if (f->hold) {
        if (f->n_held < 16)
            f->held[f->n_held++] = token;
        return;
    }
    group_sm_persisted(sm, token, f->persist_err);
}

static void fx_state(void *arg, struct group_sm *sm, enum group_state from, enum group_state to)
{
    struct fx *f = arg;
    (void)sm;
    if (f->n_notes < 32) {
        f->note_from[f->n_notes] = from;
        f->note_to[f->n_notes] = to;
    }
    f->n_notes++;
}

/* Answers the oldest held persist with err. */
static void fx_answer(struct fx *f, int16_t err)
{
    REQUIRE(f->n_held > 0);
    uint64_t t = f->held[0];
    memmove(&f->held[0], &f->held[1], (size_t)(f->n_held - 1) * sizeof f->held[0]);
    f->n_held--;
    group_sm_persisted(f->sm, t, err);
}

static const struct group_sm_config default_cfg = {
    .min_session_timeout_ms = 6000,
    .max_session_timeout_ms = 1800000,
    .initial_rebalance_delay_ms = 3000,
    .max_size = INT32_MAX,
};

static void fx_init(struct fx *f, const struct group_sm_config *cfg)
{
    memset(f, 0, sizeof *f);
    f->clock = tclock_virtual_new(1700000000000);
    struct group_sm_owner o = {.persist = fx_persist, .state_changed = fx_state, .arg = f};
    f->sm = group_sm_new("g", f->clock, cfg ? cfg : &default_cfg, &o);
}

static void fx_done(struct fx *f)
{
    group_sm_free(f->sm, ERR_COORDINATOR_NOT_AVAILABLE);
    tclock_free(f->clock);
}

/* ---- waiters that record their answer -------------------------------------------------- */

struct jw {
    struct group_join_waiter w;
    int calls;
    int16_t error;
    int32_t gen, n_members;
    bool skip;
    char member_id[96], leader[96], protocol[32], members[8][96];
    void (*then)(struct jw *); /* runs inside done, for re-entry tests */
    void *ctx;
};

static void jw_done(struct group_join_waiter *w, const struct group_join_result *r)
{
    struct jw *j = (struct jw *)w;
    j->calls++;
    j->error = r->error;
    j->gen = r->generation_id;
    j->skip = r->skip_assignment;
    j->n_members = r->n_members;
    snprintf(j->member_id, sizeof j->member_id, "%s", r->member_id ? r->member_id : "(null)");
    snprintf(j->leader, sizeof j->leader, "%s", r->leader ? r->leader : "(null)");
    snprintf(j->protocol, sizeof j->protocol, "%s", r->protocol_name ? r->protocol_name : "(null)");
    for (int32_t i = 0; i < r->n_members && i < 8; i++)
        snprintf(j->members[i], sizeof j->members[i], "%s", r->members[i].member_id);
    if (j->then)
        j->then(j);
}

struct sw {
    struct group_sync_waiter w;
    int calls;
    int16_t error;
    char assignment[32];
    char protocol[32];
};

static void sw_done(struct group_sync_waiter *w, const struct group_sync_result *r)
{
    struct sw *s = (struct sw *)w;
    s->calls++;
    s->error = r->error;
    snprintf(s->assignment, sizeof s->assignment, "%.*s", (int)r->len, (const char *)r->assignment);
    snprintf(s->protocol, sizeof s->protocol, "%s", r->protocol_name ? r->protocol_name : "(null)");
}

/* A join: defaults are a consumer with protocol "range" (metadata "m"), session 10 s,
 * rebalance 30 s. */
struct jopt {
    const char *instance, *type;
    int32_t session, rebalance;
    const char *protos[4]; /* names; metadata = "m" unless md given */
    const char *md;
    bool require, skip;
};

static void join_cb(struct fx *f, struct jw *j, const char *member_id, const struct jopt *o,
                    void (*then)(struct jw *), void *ctx)
{
    struct jopt d = {0};
    if (!o)
        o = &d;
    struct group_protocol p[4];
    int32_t n = 0;
    if (!o->protos[0] && !(o->type && strcmp(o->type, "none") == 0)) {
        p[n++] = (struct group_protocol){"range", (const uint8_t *)(o->md ? o->md : "m"),
                                         (int32_t)strlen(o->md ? o->md : "m")};
    }
    for (int i = 0; i < 4 && o->protos[i]; i++)
        if (strcmp(o->protos[i], "-") != 0)
            p[n++] = (struct group_protocol){o->protos[i], (const uint8_t *)(o->md ? o->md : "m"),
                                             (int32_t)strlen(o->md ? o->md : "m")};
    struct group_join_args a = {
        .member_id = member_id,
        .group_instance_id = o->instance,
        .client_id = "c",
        .client_host = "/127.0.0.1",
        .protocol_type = o->type && strcmp(o->type, "none") != 0 ? o->type : "consumer",
        .session_timeout_ms = o->session ? o->session : 10000,
        .rebalance_timeout_ms = o->rebalance ? o->rebalance : 30000,
        .n_protocols = n,
        .protocols = p,
        .require_known_member_id = o->require,
        .supports_skip_assignment = o->skip,
    };
    memset(j, 0, sizeof *j);
    j->then = then;
    j->ctx = ctx;
    j->w.done = jw_done;
    group_sm_join(f->sm, &a, &j->w);
}

static void join(struct fx *f, struct jw *j, const char *member_id, const struct jopt *o)
{
    join_cb(f, j, member_id, o, NULL, NULL);
}

/* Two new members join and the initial delay (extended once by the second) runs out. */
static void join_two(struct fx *f, struct jw j[2])
{
    join(f, &j[0], "", NULL);
    join(f, &j[1], "", NULL);
    tclock_advance(f->clock, 6000);
}

static void sync_(struct fx *f, struct sw *s, const char *member_id, const char *instance,
                  int32_t gen, int n, const char *const *ids, const char *const *assign)
{
    struct group_assignment as[8];
    for (int i = 0; i < n; i++)
        as[i] = (struct group_assignment){ids[i], (const uint8_t *)assign[i],
                                          (int32_t)strlen(assign[i])};
    struct group_sync_args a = {
        .member_id = member_id,
        .group_instance_id = instance,
        .generation_id = gen,
        .n_assignments = n,
        .assignments = as,
    };
    memset(s, 0, sizeof *s);
    s->w.done = sw_done;
    group_sm_sync(f->sm, &a, &s->w);
}

/* Brings the group to Stable with `n` dynamic members (ids out[i]) at generation 1, each
 * assigned "a<i>". */
static void make_stable(struct fx *f, int n, char ids[][96])
{
    struct jw j[8];
    struct sw s[8];
    for (int i = 0; i < n; i++)
        join(f, &j[i], "", NULL);
    tclock_advance(f->clock, 3000);
    if (n > 1)
        tclock_advance(f->clock, 3000); /* later arrivals extended the initial delay once */
    const char *mids[8], *asg[8];
    static const char *names[] = {"a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7"};
    for (int i = 0; i < n; i++) {
        CHECK_EQ_INT(j[i].calls, 1);
        CHECK_EQ_INT(j[i].error, 0);
        snprintf(ids[i], 96, "%s", j[i].member_id);
        mids[i] = ids[i];
        asg[i] = names[i];
    }
    for (int i = n - 1; i >= 0; i--)
        sync_(f, &s[i], ids[i], NULL, j[i].gen, i == 0 ? n : 0, mids, asg);
    CHECK_EQ_INT(group_sm_state(f->sm), GROUP_STABLE);
    for (int i = 0; i < n; i++) {
        CHECK_EQ_INT(s[i].calls, 1);
        CHECK_EQ_STR(s[i].assignment, names[i]);
    }
}

/* ---- lifecycle ------------------------------------------------------------------------- */

TEST(group_sm_state_names_round_trip)
{
    CHECK_EQ_STR(group_state_name(GROUP_PREPARING_REBALANCE), "PreparingRebalance");
    CHECK_EQ_STR(group_state_name(GROUP_COMPLETING_REBALANCE), "CompletingRebalance");
    CHECK_EQ_INT(group_state_parse("stable"), GROUP_STABLE);
    CHECK_EQ_INT(group_state_parse("EMPTY"), GROUP_EMPTY);
    CHECK_EQ_INT(group_state_parse("Dead"), GROUP_DEAD);
    CHECK_EQ_INT(group_state_parse("Rebalancing"), -1);
    CHECK_EQ_INT(group_state_parse(NULL), -1);
}

TEST(group_sm_one_member_lifecycle)
{
    struct fx f;
    fx_init(&f, NULL);
    CHECK_EQ_INT(group_sm_state(f.sm), GROUP_EMPTY);
    CHECK_EQ_INT(group_sm_generation(f.sm), 0);
    CHECK(group_sm_protocol_type(f.sm) == NULL);
    struct jw j;
    join(&f, &j, "", NULL);
    CHECK_EQ_INT(j.calls, 0);
    CHECK_EQ_INT(group_sm_state(f.sm), GROUP_PREPARING_REBALANCE);
    CHECK_EQ_INT(f.n_notes, 1); /* left Empty */
    CHECK_EQ_INT(f.note_from[0], GROUP_EMPTY);
    tclock_advance(f.clock, 2999);
    CHECK_EQ_INT(j.calls, 0);
    tclock_advance(f.clock, 1);
    REQUIRE(j.calls == 1);
    CHECK_EQ_INT(j.error, 0);
    CHECK_EQ_INT(j.gen, 1);
    CHECK(strncmp(j.member_id, "c-", 2) == 0 && strlen(j.member_id) == 2 + 36);
    CHECK_EQ_STR(j.leader, j.member_id);
    CHECK_EQ_STR(j.protocol, "range");
    CHECK_EQ_INT(j.n_members, 1);
    CHECK_EQ_STR(j.members[0], j.member_id);
    CHECK_EQ_INT(group_sm_state(f.sm), GROUP_COMPLETING_REBALANCE);
    CHECK_EQ_STR(group_sm_protocol_type(f.sm), "consumer");
    CHECK_EQ_STR(group_sm_protocol_name(f.sm), "range");
    CHECK_EQ_INT(group_sm_heartbeat(f.sm, j.member_id, NULL, 1), 0);

    struct sw s;
    const char *ids[] = {j.member_id}, *as[] = {"A"};
    sync_(&f, &s, j.member_id, NULL, 1, 1, ids, as);
    CHECK_EQ_INT(f.n_persists, 1);
    CHECK_EQ_INT(f.p_members, 1);
    CHECK_EQ_STR(f.p_assign[0], "A");
    CHECK_EQ_INT(s.calls, 1);
    CHECK_EQ_INT(s.error, 0);
    CHECK_EQ_STR(s.assignment, "A");
    CHECK_EQ_STR(s.protocol, "range");
    CHECK_EQ_INT(group_sm_state(f.sm), GROUP_STABLE);
    CHECK_EQ_INT(group_sm_heartbeat(f.sm, j.member_id, NULL, 1), 0);
    CHECK_EQ_INT(group_sm_state_timestamp(f.sm), 1700000003000);
    fx_done(&f);
}

TEST(group_sm_three_members_lifecycle)
{
    struct fx f;
    fx_init(&f, NULL);
    f.hold = true;
    struct jw j[3];
    for (int i = 0; i < 3; i++)
        join(&f, &j[i], "", NULL);
    tclock_advance(f.clock, 3000); /* the 2nd and 3rd arrivals extend the delay once */
    CHECK_EQ_INT(j[0].calls, 0);
    tclock_advance(f.clock, 3000);
    for (int i = 0; i < 3; i++) {
        REQUIRE(j[i].calls == 1);
        CHECK_EQ_INT(j[i].error, 0);
        CHECK_EQ_INT(j[i].gen, 1);
        CHECK_EQ_STR(j[i].leader, j[0].member_id);
    }
    CHECK_EQ_INT(j[0].n_members, 3);
    CHECK_EQ_INT(j[1].n_members, 0);
    CHECK_EQ_INT(j[2].n_members, 0);
    CHECK(strcmp(j[1].member_id, j[2].member_id) != 0);

    /* Followers sync first and wait for the leader's assignment to be stored. */
    struct sw s[3];
    const char *ids[] = {j[0].member_id, j[1].member_id, j[2].member_id};
    const char *as[] = {"x0", "x1", "x2"};
    sync_(&f, &s[2], j[2].member_id, NULL, 1, 0, NULL, NULL);
    sync_(&f, &s[1], j[1].member_id, NULL, 1, 0, NULL, NULL);
    CHECK_EQ_INT(s[1].calls + s[2].calls, 0);
    sync_(&f, &s[0], j[0].member_id, NULL, 1, 3, ids, as);
    CHECK_EQ_INT(f.n_persists, 1);
    CHECK_EQ_INT(f.p_generation, 1);
    CHECK_EQ_INT(f.p_members, 3);
    CHECK_EQ_STR(f.p_assign[1], "x1");
    CHECK_EQ_INT(s[0].calls + s[1].calls + s[2].calls, 0);
    CHECK_EQ_INT(group_sm_state(f.sm), GROUP_COMPLETING_REBALANCE);
    fx_answer(&f, 0);
    CHECK_EQ_INT(group_sm_state(f.sm), GROUP_STABLE);
    for (int i = 0; i < 3; i++) {
        CHECK_EQ_INT(s[i].calls, 1);
        CHECK_EQ_INT(s[i].error, 0);
        CHECK_EQ_STR(s[i].assignment, as[i]);
    }

    /* The leader's rejoin starts generation 2; the others learn it from their heartbeats. */
    struct jw r[3];
    join(&f, &r[0], j[0].member_id, NULL);
    CHECK_EQ_INT(group_sm_state(f.sm), GROUP_PREPARING_REBALANCE);
    CHECK_EQ_INT(group_sm_heartbeat(f.sm, j[1].member_id, NULL, 1), ERR_REBALANCE_IN_PROGRESS);
    join(&f, &r[1], j[1].member_id, NULL);
    CHECK_EQ_INT(r[0].calls, 0);
    join(&f, &r[2], j[2].member_id, NULL); /* the last one completes the join phase at once */
    for (int i = 0; i < 3; i++) {
        CHECK_EQ_INT(r[i].calls, 1);
        CHECK_EQ_INT(r[i].gen, 2);
        CHECK_EQ_STR(r[i].member_id, j[i].member_id);
    }
    CHECK_EQ_INT(group_sm_generation(f.sm), 2);
    fx_done(&f);
}

TEST(group_sm_initial_delay_extends_up_to_the_rebalance_timeout)
{
    struct fx f;
    fx_init(&f, NULL);
    struct jw j[6];
    struct jopt o = {.rebalance = 10000};
    join(&f, &j[0], "", &o); /* t=0: delay 3000, remaining 7000 */
    tclock_advance(f.clock, 2000);
    join(&f, &j[1], "", &o); /* extends at 3000 to 6000 */
    tclock_advance(f.clock, 2000);
    join(&f, &j[2], "", &o); /* t=4000: extends at 6000 to 9000 */
    tclock_advance(f.clock, 2000);
    join(&f, &j[3], "", &o); /* t=6000 */
    tclock_advance(f.clock, 2000);
    join(&f, &j[4], "", &o); /* t=8000: at 9000 only 1000 remain */
    tclock_advance(f.clock, 1500);
    join(&f, &j[5], "", &o); /* t=9500 */
    tclock_advance(f.clock, 499);
    CHECK_EQ_INT(j[0].calls, 0);
    tclock_advance(f.clock, 1); /* t=10000 = the rebalance timeout: no further delay */
    for (int i = 0; i < 6; i++) {
        CHECK_EQ_INT(j[i].calls, 1);
        CHECK_EQ_INT(j[i].gen, 1);
    }
    CHECK_EQ_INT(j[0].n_members, 6);
    fx_done(&f);
}

TEST(group_sm_second_member_within_the_delay_joins_the_same_generation)
{
    struct fx f;
    fx_init(&f, NULL);
    struct jw a, b;
    join(&f, &a, "", NULL);
    tclock_advance(f.clock, 1000);
    join(&f, &b, "", NULL);
    tclock_advance(f.clock, 2000); /* t=3000: b arrived, one more delay */
    CHECK_EQ_INT(a.calls + b.calls, 0);
    tclock_advance(f.clock, 2999);
    CHECK_EQ_INT(a.calls + b.calls, 0);
    tclock_advance(f.clock, 1);
    CHECK_EQ_INT(a.calls, 1);
    CHECK_EQ_INT(b.calls, 1);
    CHECK_EQ_INT(a.gen, 1);
    CHECK_EQ_INT(b.gen, 1);
    CHECK_EQ_STR(b.leader, a.member_id);
    fx_done(&f);
}

TEST(group_sm_member_id_required_then_join_with_the_id)
{
    struct fx f;
    fx_init(&f, NULL);
    struct jw j;
    struct jopt o = {.require = true};
    join(&f, &j, "", &o);
    CHECK_EQ_INT(j.calls, 1);
    CHECK_EQ_INT(j.error, ERR_MEMBER_ID_REQUIRED);
    CHECK(strncmp(j.member_id, "c-", 2) == 0 && strlen(j.member_id) == 38);
    CHECK_EQ_INT(group_sm_state(f.sm), GROUP_EMPTY);
    char id[96];
    snprintf(id, sizeof id, "%s", j.member_id);
    join(&f, &j, id, &o);
    CHECK_EQ_INT(j.calls, 0);
    tclock_advance(f.clock, 3000);
    CHECK_EQ_INT(j.calls, 1);
    CHECK_EQ_INT(j.error, 0);
    CHECK_EQ_STR(j.member_id, id);
    CHECK_EQ_INT(j.gen, 1);
    /* An id never handed out is unknown. */
    struct jw u;
    join(&f, &u, "c-made-up", &o);
    CHECK_EQ_INT(u.error, ERR_UNKNOWN_MEMBER_ID);
    CHECK_EQ_STR(u.member_id, "c-made-up");
    fx_done(&f);
}

TEST(group_sm_pending_member_holds_the_join_phase_until_its_session_expires)
{
    struct fx f;
    fx_init(&f, NULL);
    char ids[1][96];
    make_stable(&f, 1, ids);
    struct jw p, a;
    struct jopt o = {.require = true, .session = 20000};
    join(&f, &p, "", &o); /* pending; never comes back */
    CHECK_EQ_INT(p.error, ERR_MEMBER_ID_REQUIRED);
    CHECK_EQ_INT(group_sm_state(f.sm), GROUP_STABLE);
    join(&f, &a, ids[0], NULL); /* the leader rejoins: a rebalance, waiting for the pending id */
    CHECK_EQ_INT(a.calls, 0);
    tclock_advance(f.clock, 19999);
    CHECK_EQ_INT(a.calls, 0);
    tclock_advance(f.clock, 1);
    CHECK_EQ_INT(a.calls, 1);
    CHECK_EQ_INT(a.gen, 2);
    fx_done(&f);
}

TEST(group_sm_invalid_session_timeout_both_bounds)
{
    struct fx f;
    fx_init(&f, NULL);
    struct jw j;
    struct jopt lo = {.session = 5999}, hi = {.session = 1800001}, ok = {.session = 6000};
    join(&f, &j, "", &lo);
    CHECK_EQ_INT(j.error, ERR_INVALID_SESSION_TIMEOUT);
    join(&f, &j, "someone", &hi);
    CHECK_EQ_INT(j.error, ERR_INVALID_SESSION_TIMEOUT);
    CHECK_EQ_STR(j.member_id, "someone");
    CHECK_EQ_INT(group_sm_state(f.sm), GROUP_EMPTY);
    join(&f, &j, "", &ok);
    CHECK_EQ_INT(j.calls, 0);
    CHECK_EQ_INT(group_sm_state(f.sm), GROUP_PREPARING_REBALANCE);
    fx_done(&f);
}

TEST(group_sm_group_max_size_reached)
{
    struct group_sm_config cfg = default_cfg;
    cfg.max_size = 2;
    struct fx f;
    fx_init(&f, &cfg);
    struct jw j[3];
    join(&f, &j[0], "", NULL);
    join(&f, &j[1], "", NULL);
    join(&f, &j[2], "", NULL); /* two already awaiting the join phase */
    CHECK_EQ_INT(j[2].calls, 1);
    CHECK_EQ_INT(j[2].error, ERR_GROUP_MAX_SIZE_REACHED);
    CHECK_EQ_STR(j[2].member_id, "");
    tclock_advance(f.clock, 6000);
    CHECK_EQ_INT(j[0].n_members, 2);
    join(&f, &j[2], "", NULL); /* CompletingRebalance: the group has 2 members */
    CHECK_EQ_INT(j[2].error, ERR_GROUP_MAX_SIZE_REACHED);
    /* A member of the group may always rejoin. */
    struct jw r;
    join(&f, &r, j[1].member_id, NULL);
    CHECK_EQ_INT(r.error, 0);
    fx_done(&f);
}

TEST(group_sm_inconsistent_group_protocol)
{
    struct fx f;
    fx_init(&f, NULL);
    struct jw j;
    struct jopt empty_list = {.type = "none"}, no_type = {.type = ""};
    join(&f, &j, "", &empty_list);
    CHECK_EQ_INT(j.error, ERR_INCONSISTENT_GROUP_PROTOCOL);
    join(&f, &j, "", &no_type);
    CHECK_EQ_INT(j.error, ERR_INCONSISTENT_GROUP_PROTOCOL);
    CHECK_EQ_INT(group_sm_state(f.sm), GROUP_EMPTY);
    struct jw a;
    join(&f, &a, "", NULL); /* consumer / range */
    struct jopt other_type = {.type = "connect"}, other_proto = {.protos = {"-", "sticky"}};
    join(&f, &j, "", &other_type);
    CHECK_EQ_INT(j.error, ERR_INCONSISTENT_GROUP_PROTOCOL);
    join(&f, &j, "", &other_proto);
    CHECK_EQ_INT(j.error, ERR_INCONSISTENT_GROUP_PROTOCOL);
    struct jopt none_with_type = {.type = "none"};
    join(&f, &j, "", &none_with_type);
    CHECK_EQ_INT(j.error, ERR_INCONSISTENT_GROUP_PROTOCOL);
    fx_done(&f);
}

TEST(group_sm_protocol_chosen_by_vote)
{
    struct fx f;
    fx_init(&f, NULL);
    struct jw j[3];
    struct jopt a = {.protos = {"-", "sticky", "roundrobin"}};
    struct jopt b = {.protos = {"roundrobin", "sticky", "range"}};
    struct jopt c = {.protos = {"roundrobin", "range"}};
    /* The ids below: "-" drops the default "range", so a = [sticky, roundrobin]. */
    join(&f, &j[0], "", &a);
    join(&f, &j[1], "", &b);
    join(&f, &j[2], "", &c); /* only roundrobin is common to all three */
    tclock_advance(f.clock, 6000);
    CHECK_EQ_STR(j[0].protocol, "roundrobin");
    CHECK_EQ_STR(group_sm_protocol_name(f.sm), "roundrobin");
    fx_done(&f);

    fx_init(&f, NULL);
    struct jopt x = {.protos = {"-", "range", "roundrobin"}};
    struct jopt y = {.protos = {"-", "roundrobin", "range"}};
    join(&f, &j[0], "", &x);
    join(&f, &j[1], "", &y);
    join(&f, &j[2], "", &y); /* two of three prefer roundrobin */
    tclock_advance(f.clock, 6000);
    CHECK_EQ_STR(group_sm_protocol_name(f.sm), "roundrobin");
    fx_done(&f);
}

TEST(group_sm_session_expiry_removes_a_member_and_rebalances)
{
    struct fx f;
    fx_init(&f, NULL);
    char ids[2][96];
    make_stable(&f, 2, ids);
    for (int t = 0; t < 3; t++) {
        tclock_advance(f.clock, 3000);
        CHECK_EQ_INT(group_sm_heartbeat(f.sm, ids[0], NULL, 1), 0);
    }
    CHECK_EQ_INT(group_sm_state(f.sm), GROUP_STABLE);
    tclock_advance(f.clock, 1000); /* 10 s since the second member's last sign of life */
    CHECK_EQ_INT(group_sm_state(f.sm), GROUP_PREPARING_REBALANCE);
    CHECK_EQ_INT(group_sm_heartbeat(f.sm, ids[1], NULL, 1), ERR_UNKNOWN_MEMBER_ID);
    CHECK_EQ_INT(group_sm_heartbeat(f.sm, ids[0], NULL, 1), ERR_REBALANCE_IN_PROGRESS);
    struct jw r;
    join(&f, &r, ids[0], NULL);
    CHECK_EQ_INT(r.calls, 1);
    CHECK_EQ_INT(r.gen, 2);
    CHECK_EQ_INT(r.n_members, 1);
    fx_done(&f);
}

TEST(group_sm_member_missing_the_join_phase_is_dropped_at_the_rebalance_timeout)
{
    struct fx f;
    fx_init(&f, NULL);
    char ids[2][96];
    make_stable(&f, 2, ids);
    struct jw r;
    join(&f, &r, ids[0], NULL); /* rebalance timeout 30 s */
    for (int t = 0; t < 9; t++) {
        tclock_advance(f.clock, 3000); /* the other keeps heartbeating but never rejoins */
        CHECK_EQ_INT(group_sm_heartbeat(f.sm, ids[1], NULL, 1), ERR_REBALANCE_IN_PROGRESS);
    }
    CHECK_EQ_INT(r.calls, 0);
    tclock_advance(f.clock, 3000);
    CHECK_EQ_INT(r.calls, 1);
    CHECK_EQ_INT(r.gen, 2);
    CHECK_EQ_INT(r.n_members, 1);
    CHECK_EQ_INT(group_sm_heartbeat(f.sm, ids[1], NULL, 2), ERR_UNKNOWN_MEMBER_ID);
    fx_done(&f);
}

TEST(group_sm_leader_never_syncs)
{
    struct fx f;
    fx_init(&f, NULL);
    struct jw j[2];
    join_two(&f, j);
    REQUIRE(j[1].calls == 1);
    struct sw s;
    sync_(&f, &s, j[1].member_id, NULL, 1, 0, NULL, NULL);
    CHECK_EQ_INT(s.calls, 0);
    /* The leader stays alive (heartbeats) but never sends its assignment. */
    for (int t = 0; t < 9; t++) {
        tclock_advance(f.clock, 3000);
        CHECK_EQ_INT(group_sm_heartbeat(f.sm, j[0].member_id, NULL, 1), 0);
    }
    tclock_advance(f.clock, 2999);
    CHECK_EQ_INT(s.calls, 0);
    tclock_advance(f.clock, 1); /* the rebalance timeout since the join phase ended */
    CHECK_EQ_INT(s.calls, 1);
    CHECK_EQ_INT(s.error, ERR_REBALANCE_IN_PROGRESS);
    CHECK_EQ_INT(group_sm_state(f.sm), GROUP_PREPARING_REBALANCE);
    CHECK_EQ_INT(group_sm_heartbeat(f.sm, j[0].member_id, NULL, 1), ERR_UNKNOWN_MEMBER_ID);
    struct jw r;
    join(&f, &r, j[1].member_id, NULL);
    CHECK_EQ_INT(r.calls, 1);
    CHECK_EQ_INT(r.gen, 2);
    CHECK_EQ_STR(r.leader, j[1].member_id);
    fx_done(&f);
}

TEST(group_sm_heartbeat_errors)
{
    struct fx f;
    fx_init(&f, NULL);
    char ids[2][96];
    make_stable(&f, 2, ids);
    CHECK_EQ_INT(group_sm_heartbeat(f.sm, "nobody", NULL, 1), ERR_UNKNOWN_MEMBER_ID);
    CHECK_EQ_INT(group_sm_heartbeat(f.sm, ids[0], NULL, 0), ERR_ILLEGAL_GENERATION);
    CHECK_EQ_INT(group_sm_heartbeat(f.sm, ids[0], NULL, 1), 0);
    CHECK_EQ_INT(group_sm_heartbeat(f.sm, ids[0], "not-static", 1), ERR_UNKNOWN_MEMBER_ID);
    /* A follower rejoining with the same metadata changes nothing; the leader rebalances. */
    struct jw r;
    join(&f, &r, ids[1], NULL);
    CHECK_EQ_INT(r.calls, 1);
    CHECK_EQ_INT(r.gen, 1);
    CHECK_EQ_INT(group_sm_heartbeat(f.sm, ids[1], NULL, 1), 0);
    join(&f, &r, ids[0], NULL);
    CHECK_EQ_INT(group_sm_heartbeat(f.sm, ids[0], NULL, 1), ERR_REBALANCE_IN_PROGRESS);
    CHECK_EQ_INT(group_sm_heartbeat(f.sm, ids[1], NULL, 1), ERR_REBALANCE_IN_PROGRESS);
    fx_done(&f);

    fx_init(&f, NULL);
    CHECK_EQ_INT(group_sm_delete(f.sm), 0);
    CHECK_EQ_INT(group_sm_heartbeat(f.sm, "x", NULL, 0), ERR_COORDINATOR_NOT_AVAILABLE);
    fx_done(&f);
}

/* ---- leaving --------------------------------------------------------------------------- */

TEST(group_sm_leave_dynamic_static_and_unknown)
{
    struct fx f;
    fx_init(&f, NULL);
    struct jw j[3];
    struct jopt st = {.instance = "i1"};
    join(&f, &j[0], "", NULL);
    join(&f, &j[1], "", &st);
    join(&f, &j[2], "", NULL);
    tclock_advance(f.clock, 6000);
    CHECK(strncmp(j[1].member_id, "i1-", 3) == 0);
    CHECK_EQ_INT(group_sm_leave(f.sm, "nobody", NULL, NULL), ERR_UNKNOWN_MEMBER_ID);
    CHECK_EQ_INT(group_sm_leave(f.sm, "", "nobody", NULL), ERR_UNKNOWN_MEMBER_ID);
    CHECK_EQ_INT(group_sm_leave(f.sm, "wrong-id", "i1", NULL), ERR_FENCED_INSTANCE_ID);
    CHECK_EQ_INT(group_sm_leave(f.sm, j[2].member_id, NULL, "bye"), 0);
    CHECK_EQ_INT(group_sm_state(f.sm), GROUP_PREPARING_REBALANCE);
    CHECK_EQ_INT(group_sm_leave(f.sm, "", "i1", "admin removal"), 0);
    int32_t n;
    group_sm_members(f.sm, &n);
    CHECK_EQ_INT(n, 1);
    CHECK_EQ_INT(group_sm_leave(f.sm, j[2].member_id, NULL, NULL), ERR_UNKNOWN_MEMBER_ID);
    fx_done(&f);
}

TEST(group_sm_last_member_leaving_makes_the_group_empty_with_a_persist)
{
    struct fx f;
    fx_init(&f, NULL);
    char ids[1][96];
    make_stable(&f, 1, ids);
    int persists = f.n_persists, notes = f.n_notes;
    CHECK_EQ_INT(group_sm_leave(f.sm, ids[0], NULL, NULL), 0);
    CHECK_EQ_INT(group_sm_state(f.sm), GROUP_EMPTY);
    CHECK_EQ_INT(group_sm_generation(f.sm), 2);
    CHECK_EQ_INT(f.n_persists, persists + 1);
    CHECK_EQ_INT(f.p_members, 0);
    CHECK_EQ_INT(f.p_generation, 2);
    CHECK_EQ_INT(f.p_state, GROUP_EMPTY);
    CHECK(group_sm_protocol_name(f.sm) == NULL);
    CHECK_EQ_STR(group_sm_protocol_type(f.sm), "consumer");
    REQUIRE(f.n_notes == notes + 1);
    CHECK_EQ_INT(f.note_to[notes], GROUP_EMPTY);
    CHECK(group_sm_leader(f.sm) == NULL);
    fx_done(&f);
}

/* ---- static membership ----------------------------------------------------------------- */

/* Stable at generation 1 with static leader "i0" and dynamic follower; ids out. */
static void make_static_stable(struct fx *f, char ids[2][96])
{
    struct jw j[2];
    struct jopt st = {.instance = "i0"};
    join(f, &j[0], "", &st);
    join(f, &j[1], "", NULL);
    tclock_advance(f->clock, 6000);
    snprintf(ids[0], 96, "%s", j[0].member_id);
    snprintf(ids[1], 96, "%s", j[1].member_id);
    struct sw s[2];
    const char *mids[] = {ids[0], ids[1]}, *as[] = {"s0", "s1"};
    sync_(f, &s[1], ids[1], NULL, 1, 0, NULL, NULL);
    sync_(f, &s[0], ids[0], "i0", 1, 2, mids, as);
    CHECK_EQ_INT(group_sm_state(f->sm), GROUP_STABLE);
}

TEST(group_sm_static_member_restart_keeps_assignment_without_rebalance)
{
    struct fx f;
    fx_init(&f, NULL);
    char ids[2][96];
    make_static_stable(&f, ids);
    int persists = f.n_persists;
    f.hold = true;
    struct jw r;
    struct jopt st = {.instance = "i0"};
    join(&f, &r, "", &st);
    CHECK_EQ_INT(r.calls, 0); /* waits for the new id to be stored */
    CHECK_EQ_INT(f.n_persists, persists + 1);
    CHECK_EQ_INT(f.p_members, 2);
    CHECK_EQ_STR(f.p_assign[0], "s0");
    fx_answer(&f, 0);
    REQUIRE(r.calls == 1);
    CHECK_EQ_INT(r.error, 0);
    CHECK_EQ_INT(r.gen, 1);
    CHECK(strcmp(r.member_id, ids[0]) != 0 && strncmp(r.member_id, "i0-", 3) == 0);
    /* Before v9 the old leader id comes back, so the new incarnation does not assign. */
    CHECK_EQ_STR(r.leader, ids[0]);
    CHECK_EQ_INT(r.n_members, 0);
    CHECK(!r.skip);
    CHECK_EQ_INT(group_sm_state(f.sm), GROUP_STABLE);
    CHECK_EQ_INT(group_sm_generation(f.sm), 1);
    CHECK_EQ_STR(group_sm_leader(f.sm), r.member_id);

    /* The old incarnation is fenced everywhere; the new one and the others carry on. */
    CHECK_EQ_INT(group_sm_heartbeat(f.sm, ids[0], "i0", 1), ERR_FENCED_INSTANCE_ID);
    CHECK_EQ_INT(group_sm_check_commit(f.sm, ids[0], "i0", 1, false), ERR_FENCED_INSTANCE_ID);
    struct sw s;
    sync_(&f, &s, ids[0], "i0", 1, 0, NULL, NULL);
    CHECK_EQ_INT(s.error, ERR_FENCED_INSTANCE_ID);
    CHECK_EQ_INT(group_sm_heartbeat(f.sm, r.member_id, "i0", 1), 0);
    CHECK_EQ_INT(group_sm_heartbeat(f.sm, ids[1], NULL, 1), 0);
    sync_(&f, &s, r.member_id, "i0", 1, 0, NULL, NULL);
    CHECK_EQ_INT(s.error, 0);
    CHECK_EQ_STR(s.assignment, "s0");
    for (int t = 0; t < 5; t++) {
        tclock_advance(f.clock, 3000);
        CHECK_EQ_INT(group_sm_heartbeat(f.sm, ids[1], NULL, 1), 0);
        CHECK_EQ_INT(group_sm_heartbeat(f.sm, r.member_id, "i0", 1), 0);
    }
    CHECK_EQ_INT(group_sm_state(f.sm), GROUP_STABLE);
    fx_done(&f);
}

TEST(group_sm_static_leader_restart_v9_skips_assignment)
{
    struct fx f;
    fx_init(&f, NULL);
    char ids[2][96];
    make_static_stable(&f, ids);
    struct jw r;
    struct jopt st = {.instance = "i0", .skip = true};
    join(&f, &r, "", &st);
    REQUIRE(r.calls == 1);
    CHECK_EQ_INT(r.error, 0);
    CHECK_EQ_STR(r.leader, r.member_id);
    CHECK(r.skip);
    CHECK_EQ_INT(r.n_members, 2);
    CHECK_EQ_INT(group_sm_state(f.sm), GROUP_STABLE);
    fx_done(&f);
}

TEST(group_sm_static_replacement_persist_failure_reverts)
{
    struct fx f;
    fx_init(&f, NULL);
    char ids[2][96];
    make_static_stable(&f, ids);
    f.hold = true;
    struct jw r;
    struct jopt st = {.instance = "i0"};
    join(&f, &r, "", &st);
    fx_answer(&f, ERR_NOT_LEADER_OR_FOLLOWER);
    CHECK_EQ_INT(r.calls, 1);
    CHECK_EQ_INT(r.error, ERR_NOT_COORDINATOR);
    CHECK_EQ_INT(group_sm_heartbeat(f.sm, ids[0], "i0", 1), 0);
    CHECK_EQ_INT(group_sm_state(f.sm), GROUP_STABLE);
    fx_done(&f);
}

TEST(group_sm_static_member_removed_after_its_session_timeout)
{
    struct fx f;
    fx_init(&f, NULL);
    char ids[2][96];
    make_static_stable(&f, ids);
    for (int t = 0; t < 3; t++) {
        tclock_advance(f.clock, 2500);
        CHECK_EQ_INT(group_sm_heartbeat(f.sm, ids[1], NULL, 1), 0);
    }
    tclock_advance(f.clock, 2499);
    CHECK_EQ_INT(group_sm_state(f.sm), GROUP_STABLE);
    tclock_advance(f.clock, 1); /* 10 s after the static member's sync */
    CHECK_EQ_INT(group_sm_state(f.sm), GROUP_PREPARING_REBALANCE);
    CHECK_EQ_INT(group_sm_heartbeat(f.sm, ids[1], NULL, 1), ERR_REBALANCE_IN_PROGRESS);
    CHECK_EQ_INT(group_sm_heartbeat(f.sm, ids[0], "i0", 1), ERR_UNKNOWN_MEMBER_ID);
    fx_done(&f);
}

/* ---- persist failure ------------------------------------------------------------------- */

TEST(group_sm_persist_failure_fails_syncs_and_rebalances)
{
    struct fx f;
    fx_init(&f, NULL);
    f.hold = true;
    struct jw j[2];
    join_two(&f, j);
    struct sw s[2];
    const char *ids[] = {j[0].member_id, j[1].member_id}, *as[] = {"x", "y"};
    sync_(&f, &s[1], j[1].member_id, NULL, 1, 0, NULL, NULL);
    sync_(&f, &s[0], j[0].member_id, NULL, 1, 2, ids, as);
    fx_answer(&f, ERR_NOT_ENOUGH_REPLICAS);
    CHECK_EQ_INT(s[0].calls, 1);
    CHECK_EQ_INT(s[1].calls, 1);
    CHECK_EQ_INT(s[0].error, ERR_COORDINATOR_NOT_AVAILABLE);
    CHECK_EQ_INT(s[1].error, ERR_COORDINATOR_NOT_AVAILABLE);
    CHECK_EQ_INT(group_sm_state(f.sm), GROUP_PREPARING_REBALANCE);
    int32_t n;
    const struct group_member_info *mi = group_sm_members(f.sm, &n);
    CHECK_EQ_INT(n, 2);
    CHECK_EQ_INT(mi[0].assignment_len, 0);
    /* A stale answer for the same token is ignored. */
    group_sm_persisted(f.sm, 1, 0);
    CHECK_EQ_INT(group_sm_state(f.sm), GROUP_PREPARING_REBALANCE);
    /* Both rejoin: generation 2. */
    struct jw r[2];
    join(&f, &r[0], j[0].member_id, NULL);
    join(&f, &r[1], j[1].member_id, NULL);
    CHECK_EQ_INT(r[0].gen, 2);
    fx_done(&f);
}

TEST(group_sm_persist_answered_after_a_new_rebalance_is_ignored)
{
    struct fx f;
    fx_init(&f, NULL);
    f.hold = true;
    struct jw j[2];
    join_two(&f, j);
    struct sw s;
    const char *ids[] = {j[0].member_id, j[1].member_id}, *as[] = {"x", "y"};
    sync_(&f, &s, j[0].member_id, NULL, 1, 2, ids, as);
    struct jw r;
    join(&f, &r, j[1].member_id, NULL); /* metadata unchanged in CompletingRebalance: same gen */
    CHECK_EQ_INT(r.calls, 1);
    CHECK_EQ_INT(r.gen, 1);
    struct jopt changed = {.md = "new"};
    join(&f, &r, j[1].member_id, &changed); /* changed: rebalance, the leader's sync fails */
    CHECK_EQ_INT(s.calls, 1);
    CHECK_EQ_INT(s.error, ERR_REBALANCE_IN_PROGRESS);
    fx_answer(&f, 0); /* the store of generation 1 lands late: no effect */
    CHECK_EQ_INT(group_sm_state(f.sm), GROUP_PREPARING_REBALANCE);
    fx_done(&f);
}

/* ---- offsets, subscriptions, deletion -------------------------------------------------- */

TEST(group_sm_check_commit_matrix)
{
    struct fx f;
    fx_init(&f, NULL);
    /* Empty: simple commits only; a member id is unknown. */
    CHECK_EQ_INT(group_sm_check_commit(f.sm, "", NULL, -1, false), 0);
    CHECK_EQ_INT(group_sm_check_commit(f.sm, NULL, NULL, -1, false), 0);
    CHECK_EQ_INT(group_sm_check_commit(f.sm, "m", NULL, -1, false), ERR_UNKNOWN_MEMBER_ID);
    CHECK_EQ_INT(group_sm_check_commit(f.sm, "", NULL, 0, false), ERR_UNKNOWN_MEMBER_ID);
    CHECK_EQ_INT(group_sm_check_commit(f.sm, "", NULL, -1, true), 0);
    struct jw j[2];
    join_two(&f, j);
    /* CompletingRebalance: members with the right generation are told to wait. */
    CHECK_EQ_INT(group_sm_check_commit(f.sm, j[0].member_id, NULL, 1, false),
                 ERR_REBALANCE_IN_PROGRESS);
    CHECK_EQ_INT(group_sm_check_commit(f.sm, j[0].member_id, NULL, 1, true), 0);
    CHECK_EQ_INT(group_sm_check_commit(f.sm, j[0].member_id, NULL, 0, false),
                 ERR_ILLEGAL_GENERATION);
    CHECK_EQ_INT(group_sm_check_commit(f.sm, "", NULL, -1, false), ERR_UNKNOWN_MEMBER_ID);
    CHECK_EQ_INT(group_sm_check_commit(f.sm, "", NULL, -1, true), 0);
    struct sw s[2];
    const char *ids[] = {j[0].member_id, j[1].member_id}, *as[] = {"x", "y"};
    sync_(&f, &s[0], j[0].member_id, NULL, 1, 2, ids, as);
    /* Stable. */
    CHECK_EQ_INT(group_sm_check_commit(f.sm, j[1].member_id, NULL, 1, false), 0);
    CHECK_EQ_INT(group_sm_check_commit(f.sm, j[1].member_id, NULL, 2, false),
                 ERR_ILLEGAL_GENERATION);
    CHECK_EQ_INT(group_sm_check_commit(f.sm, "ghost", NULL, 1, false), ERR_UNKNOWN_MEMBER_ID);
    CHECK_EQ_INT(group_sm_check_commit(f.sm, "ghost", NULL, 1, true), ERR_UNKNOWN_MEMBER_ID);
    CHECK_EQ_INT(group_sm_check_commit(f.sm, j[1].member_id, "inst", 1, false),
                 ERR_UNKNOWN_MEMBER_ID);
    /* PreparingRebalance: the current generation may still commit. */
    struct jw r;
    join(&f, &r, j[0].member_id, NULL);
    CHECK_EQ_INT(group_sm_check_commit(f.sm, j[1].member_id, NULL, 1, false), 0);
    fx_done(&f);

    fx_init(&f, NULL);
    CHECK_EQ_INT(group_sm_delete(f.sm), 0);
    CHECK_EQ_INT(group_sm_check_commit(f.sm, "", NULL, -1, false), ERR_COORDINATOR_NOT_AVAILABLE);
    CHECK_EQ_INT(group_sm_check_commit(f.sm, "", NULL, -1, true), ERR_COORDINATOR_NOT_AVAILABLE);
    fx_done(&f);
}

/* ConsumerProtocolSubscription v1 for topics "orders" and "t2", user data "u", one owned
 * partition (a v1 field, after what version 0 reads). */
static const uint8_t subscription_v1[] = {
    0x00, 0x01,                                    /* version 1 */
    0x00, 0x00, 0x00, 0x02,                        /* 2 topics */
    0x00, 0x06, 'o',  'r',  'd',  'e',  'r',  's', /* "orders" */
    0x00, 0x02, 't',  '2',                         /* "t2" */
    0x00, 0x00, 0x00, 0x01, 'u',                   /* user data */
    0x00, 0x00, 0x00, 0x01,                        /* owned partitions: 1 topic */
    0x00, 0x01, 'x',  0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
};

TEST(group_sm_subscribed_reads_consumer_subscriptions)
{
    struct fx f;
    fx_init(&f, NULL);
    CHECK(!group_sm_subscribed(f.sm, "orders")); /* no members */
    struct group_member_info mi[2] = {
        {.member_id = "m1",
         .client_id = "c",
         .client_host = "h",
         .session_timeout_ms = 10000,
         .rebalance_timeout_ms = 30000,
         .metadata = subscription_v1,
         .metadata_len = (int32_t)sizeof subscription_v1},
        {.member_id = "m2",
         .client_id = "c",
         .client_host = "h",
         .session_timeout_ms = 10000,
         .rebalance_timeout_ms = 30000,
         .metadata = subscription_v1,
         .metadata_len = 14},
    };
    struct group_sm_snapshot snap = {.protocol_type = "consumer",
                                     .protocol_name = "range",
                                     .leader = "m1",
                                     .generation_id = 4,
                                     .n_members = 1,
                                     .members = mi};
    REQUIRE(group_sm_restore(f.sm, &snap) == 0);
    CHECK(group_sm_subscribed(f.sm, "orders"));
    CHECK(group_sm_subscribed(f.sm, "t2"));
    CHECK(!group_sm_subscribed(f.sm, "order"));
    CHECK(!group_sm_subscribed(f.sm, "x")); /* an owned partition's topic is not a subscription */
    /* A member whose metadata is cut short: its subscription is unknown, so "subscribed". */
    snap.n_members = 2;
    REQUIRE(group_sm_restore(f.sm, &snap) == 0);
    CHECK(group_sm_subscribed(f.sm, "x"));
    /* Not the consumer protocol: never. */
    snap.protocol_type = "connect";
    snap.n_members = 1;
    REQUIRE(group_sm_restore(f.sm, &snap) == 0);
    CHECK(!group_sm_subscribed(f.sm, "orders"));
    fx_done(&f);
}

TEST(group_sm_delete_only_when_empty)
{
    struct fx f;
    fx_init(&f, NULL);
    struct jw j;
    join(&f, &j, "", NULL);
    CHECK_EQ_INT(group_sm_delete(f.sm), ERR_NON_EMPTY_GROUP);
    tclock_advance(f.clock, 3000);
    CHECK_EQ_INT(group_sm_delete(f.sm), ERR_NON_EMPTY_GROUP);
    CHECK_EQ_INT(group_sm_leave(f.sm, j.member_id, NULL, NULL), 0);
    CHECK_EQ_INT(group_sm_state(f.sm), GROUP_EMPTY);
    int notes = f.n_notes;
    CHECK_EQ_INT(group_sm_delete(f.sm), 0);
    CHECK_EQ_INT(group_sm_state(f.sm), GROUP_DEAD);
    REQUIRE(f.n_notes == notes + 1);
    CHECK_EQ_INT(f.note_to[notes], GROUP_DEAD);
    CHECK_EQ_INT(group_sm_delete(f.sm), ERR_GROUP_ID_NOT_FOUND);
    join(&f, &j, "", NULL);
    CHECK_EQ_INT(j.error, ERR_COORDINATOR_NOT_AVAILABLE);
    CHECK_EQ_INT(group_sm_leave(f.sm, "m", NULL, NULL), ERR_COORDINATOR_NOT_AVAILABLE);
    fx_done(&f);
}

/* ---- restore, free, re-entry ----------------------------------------------------------- */

TEST(group_sm_restore_stable_then_sessions_expire)
{
    struct fx f;
    fx_init(&f, NULL);
    struct group_member_info mi[2] = {
        {.member_id = "m1",
         .client_id = "c1",
         .client_host = "h",
         .session_timeout_ms = 10000,
         .rebalance_timeout_ms = 20000,
         .metadata = (const uint8_t *)"md1",
         .metadata_len = 3,
         .assignment = (const uint8_t *)"as1",
         .assignment_len = 3},
        {.member_id = "m2",
         .group_instance_id = "i2",
         .client_id = "c2",
         .client_host = "h",
         .session_timeout_ms = 15000,
         .rebalance_timeout_ms = 20000,
         .metadata = (const uint8_t *)"md2",
         .metadata_len = 3,
         .assignment = (const uint8_t *)"as2",
         .assignment_len = 3},
    };
    struct group_sm_snapshot snap = {.protocol_type = "consumer",
                                     .protocol_name = "range",
                                     .leader = "m2",
                                     .generation_id = 7,
                                     .state_timestamp = 1600000000000,
                                     .n_members = 2,
                                     .members = mi};
    REQUIRE(group_sm_restore(f.sm, &snap) == 0);
    CHECK_EQ_INT(f.n_notes, 0);
    CHECK_EQ_INT(group_sm_state(f.sm), GROUP_STABLE);
    CHECK_EQ_INT(group_sm_generation(f.sm), 7);
    CHECK_EQ_STR(group_sm_leader(f.sm), "m2");
    CHECK_EQ_STR(group_sm_protocol_name(f.sm), "range");
    CHECK_EQ_INT(group_sm_state_timestamp(f.sm), 1600000000000);
    int32_t n;
    const struct group_member_info *got = group_sm_members(f.sm, &n);
    REQUIRE(n == 2);
    CHECK_EQ_STR(got[1].group_instance_id, "i2");
    CHECK(got[0].metadata_len == 3 && memcmp(got[0].metadata, "md1", 3) == 0);
    CHECK_EQ_INT(group_sm_heartbeat(f.sm, "m1", NULL, 7), 0);
    CHECK_EQ_INT(group_sm_heartbeat(f.sm, "m2", "i2", 7), 0);
    struct sw s;
    sync_(&f, &s, "m2", "i2", 7, 0, NULL, NULL);
    CHECK_EQ_STR(s.assignment, "as2");
    /* Nobody heartbeats any more: m1 goes at 10 s, m2 (static) at 15 s, then Empty. */
    tclock_advance(f.clock, 10000);
    CHECK_EQ_INT(group_sm_state(f.sm), GROUP_PREPARING_REBALANCE);
    tclock_advance(f.clock, 5000);
    CHECK_EQ_INT(group_sm_state(f.sm), GROUP_EMPTY);
    CHECK_EQ_INT(group_sm_generation(f.sm), 8);
    CHECK_EQ_INT(f.p_state, GROUP_EMPTY);
    fx_done(&f);
}

TEST(group_sm_restore_empty)
{
    struct fx f;
    fx_init(&f, NULL);
    struct group_sm_snapshot snap = {.protocol_type = "consumer", .generation_id = 3};
    REQUIRE(group_sm_restore(f.sm, &snap) == 0);
    CHECK_EQ_INT(group_sm_state(f.sm), GROUP_EMPTY);
    CHECK_EQ_INT(group_sm_generation(f.sm), 3);
    CHECK_EQ_INT(group_sm_check_commit(f.sm, "", NULL, -1, false), 0);
    struct jw j;
    join(&f, &j, "", NULL);
    tclock_advance(f.clock, 3000);
    CHECK_EQ_INT(j.gen, 4);
    fx_done(&f);
}

TEST(group_sm_free_fails_waiters_with_the_given_error)
{
    struct fx f;
    fx_init(&f, NULL);
    struct jw j[2];
    join_two(&f, j);
    struct sw s;
    sync_(&f, &s, j[1].member_id, NULL, 1, 0, NULL, NULL);
    struct jw late;
    join(&f, &late, "", NULL); /* starts a new join phase; the sync fails with a rebalance */
    CHECK_EQ_INT(s.error, ERR_REBALANCE_IN_PROGRESS);
    sync_(&f, &s, j[1].member_id, NULL, 1, 0, NULL, NULL);
    CHECK_EQ_INT(s.error, ERR_REBALANCE_IN_PROGRESS);
    CHECK_EQ_INT(late.calls, 0);
    group_sm_free(f.sm, ERR_NOT_COORDINATOR);
    CHECK_EQ_INT(late.calls, 1);
    CHECK_EQ_INT(late.error, ERR_NOT_COORDINATOR);
    tclock_free(f.clock);
}

TEST(group_sm_free_fails_a_parked_sync)
{
    struct fx f;
    fx_init(&f, NULL);
    struct jw j[2];
    join_two(&f, j);
    struct sw s;
    sync_(&f, &s, j[1].member_id, NULL, 1, 0, NULL, NULL);
    CHECK_EQ_INT(s.calls, 0);
    group_sm_free(f.sm, ERR_COORDINATOR_NOT_AVAILABLE);
    CHECK_EQ_INT(s.calls, 1);
    CHECK_EQ_INT(s.error, ERR_COORDINATOR_NOT_AVAILABLE);
    tclock_free(f.clock);
}

/* A join answer that syncs at once, and a second member that rejoins from its callback. */
struct reentry {
    struct fx *f;
    struct sw s;
    struct jw again;
    int rejoins;
};

static void sync_from_done(struct jw *j)
{
    struct reentry *re = j->ctx;
    if (j->error != 0)
        return;
    const char *ids[] = {j->member_id}, *as[] = {"z"};
    char id[96];
    snprintf(id, sizeof id, "%s", j->member_id);
    sync_(re->f, &re->s, id, NULL, j->gen, j->n_members > 0 ? 1 : 0, ids, as);
}

static void rejoin_from_done(struct jw *j)
{
    struct reentry *re = j->ctx;
    if (j->error != 0 || re->rejoins++ > 0)
        return;
    char id[96];
    snprintf(id, sizeof id, "%s", j->member_id);
    /* The same waiter, parked again from inside its own callback. */
    join_cb(re->f, j, id, NULL, rejoin_from_done, re);
}

TEST(group_sm_callbacks_may_call_back_in)
{
    struct fx f;
    fx_init(&f, NULL);
    struct reentry re = {.f = &f};
    struct jw a;
    join_cb(&f, &a, "", NULL, sync_from_done, &re);
    tclock_advance(f.clock, 3000);
    CHECK_EQ_INT(a.calls, 1);
    CHECK_EQ_INT(re.s.calls, 1); /* synced from inside the join answer, persisted at once */
    CHECK_EQ_STR(re.s.assignment, "z");
    CHECK_EQ_INT(group_sm_state(f.sm), GROUP_STABLE);

    /* A second member joins; when its answer comes it rejoins with the same waiter. */
    struct jw b, a2;
    join_cb(&f, &b, "", NULL, rejoin_from_done, &re);
    join(&f, &a2, a.member_id, NULL);
    CHECK_EQ_INT(b.calls, 1); /* generation 2, then its rejoin is answered at once */
    CHECK_EQ_INT(b.gen, 2);
    CHECK_EQ_INT(b.error, 0);
    CHECK_EQ_INT(re.rejoins, 2);
    CHECK_EQ_INT(a2.gen, 2);
    CHECK_EQ_INT(group_sm_state(f.sm), GROUP_COMPLETING_REBALANCE);
    fx_done(&f);
}

TEST(group_sm_persist_answered_from_within_state_changed_path)
{
    /* The owner answering persist synchronously while a leave drives Stable -> Empty. */
    struct fx f;
    fx_init(&f, NULL);
    char ids[2][96];
    make_stable(&f, 2, ids);
    CHECK_EQ_INT(group_sm_leave(f.sm, ids[1], NULL, NULL), 0);
    CHECK_EQ_INT(group_sm_state(f.sm), GROUP_PREPARING_REBALANCE);
    CHECK_EQ_INT(group_sm_leave(f.sm, ids[0], NULL, NULL), 0);
    CHECK_EQ_INT(group_sm_state(f.sm), GROUP_EMPTY);
    CHECK_EQ_INT(group_sm_generation(f.sm), 2);
    fx_done(&f);
}

TEST(group_sm_new_member_join_times_out_after_five_minutes)
{
    struct fx f;
    fx_init(&f, NULL);
    char ids[1][96];
    struct jw a, late;
    struct jopt slow = {.rebalance = 600000, .session = 60000};
    join(&f, &a, "", &slow);
    tclock_advance(f.clock, 3000);
    REQUIRE(a.calls == 1);
    snprintf(ids[0], sizeof ids[0], "%s", a.member_id);
    struct sw s;
    const char *mids[] = {ids[0]}, *as[] = {"a"};
    sync_(&f, &s, ids[0], NULL, 1, 1, mids, as);
    /* A new member starts a rebalance the old one is slow to join (10 min timeout). */
    join(&f, &late, "", NULL);
    for (int t = 0; t < 9; t++) {
        tclock_advance(f.clock, 30000);
        CHECK_EQ_INT(group_sm_heartbeat(f.sm, ids[0], NULL, 1), ERR_REBALANCE_IN_PROGRESS);
    }
    tclock_advance(f.clock, 29999);
    CHECK_EQ_INT(late.calls, 0);
    tclock_advance(f.clock, 1); /* 300 s: the parked join of the new member gives up */
    CHECK_EQ_INT(late.calls, 1);
    CHECK_EQ_INT(late.error, ERR_UNKNOWN_MEMBER_ID);
    CHECK_EQ_STR(late.member_id, "");
    CHECK_EQ_INT(group_sm_state(f.sm), GROUP_PREPARING_REBALANCE);
    /* The old member rejoins and is alone in generation 2. */
    struct jw r;
    join(&f, &r, ids[0], &slow);
    CHECK_EQ_INT(r.gen, 2);
    CHECK_EQ_INT(r.n_members, 1);
    fx_done(&f);
}

TEST(group_sm_second_join_of_a_member_answers_the_first)
{
    struct fx f;
    fx_init(&f, NULL);
    char ids[2][96];
    make_stable(&f, 2, ids);
    struct jw first, second;
    join(&f, &first, ids[0], NULL); /* the leader: a rebalance, waiting for the other */
    CHECK_EQ_INT(first.calls, 0);
    join(&f, &second, ids[0], NULL); /* its client gave up and retried */
    CHECK_EQ_INT(first.calls, 1);
    CHECK_EQ_INT(first.error, ERR_REBALANCE_IN_PROGRESS);
    CHECK_EQ_INT(second.calls, 0);
    struct jw other;
    join(&f, &other, ids[1], NULL);
    CHECK_EQ_INT(second.calls, 1);
    CHECK_EQ_INT(second.gen, 2);
    CHECK_EQ_INT(first.calls, 1);
    fx_done(&f);
}

TEST(group_sm_static_member_rejoin_during_completing_rebalance_rebalances)
{
    struct fx f;
    fx_init(&f, NULL);
    struct jw j[2];
    struct jopt st = {.instance = "i0"};
    join(&f, &j[0], "", NULL);
    join(&f, &j[1], "", &st);
    tclock_advance(f.clock, 6000);
    REQUIRE(group_sm_state(f.sm) == GROUP_COMPLETING_REBALANCE);
    struct sw s;
    sync_(&f, &s, j[1].member_id, "i0", 1, 0, NULL, NULL);
    struct jw r;
    join(&f, &r, "", &st); /* restarted before the leader assigned */
    CHECK_EQ_INT(s.calls, 1);
    CHECK_EQ_INT(s.error, ERR_FENCED_INSTANCE_ID); /* the old incarnation's parked sync */
    CHECK_EQ_INT(group_sm_state(f.sm), GROUP_PREPARING_REBALANCE);
    struct jw l;
    join(&f, &l, j[0].member_id, NULL);
    CHECK_EQ_INT(r.calls, 1);
    CHECK_EQ_INT(r.gen, 2);
    CHECK(strcmp(r.member_id, j[1].member_id) != 0);
    fx_done(&f);
}

/* The owner frees the group from inside a waiter's callback (its shard moved). */
struct free_ctx {
    struct fx *f;
    int16_t err;
};

static void free_from_done(struct jw *j)
{
    struct free_ctx *c = j->ctx;
    group_sm_free(c->f->sm, c->err);
}

TEST(group_sm_free_from_inside_a_callback_waits_for_it)
{
    struct fx f;
    fx_init(&f, NULL);
    struct free_ctx c = {.f = &f, .err = ERR_NOT_COORDINATOR};
    struct jw a, b;
    struct jopt st = {.instance = "i1"};
    join_cb(&f, &a, "", NULL, free_from_done, &c);
    join(&f, &b, "", &st);
    tclock_advance(f.clock, 6000); /* a's answer frees the group once a's callback returns */
    CHECK_EQ_INT(a.calls, 1);
    CHECK_EQ_INT(a.error, 0);
    CHECK_EQ_INT(b.calls, 1); /* its answer was made before the free: delivered as made */
    CHECK_EQ_INT(b.error, 0);
    CHECK_EQ_INT(tclock_next_due(f.clock), -1);
    tclock_free(f.clock);
}

TEST(group_sm_common_protocols_follow_membership)
{
    struct fx f;
    fx_init(&f, NULL);
    struct jw a, b, c;
    struct jopt only_range = {0}, both = {.protos = {"range", "roundrobin"}},
                only_rr = {.protos = {"-", "roundrobin"}};
    join(&f, &a, "", &only_range);
    join(&f, &b, "", &both);
    tclock_advance(f.clock, 6000);
    REQUIRE(a.calls == 1 && b.calls == 1);
    join(&f, &c, "", &only_rr); /* a does not speak roundrobin */
    CHECK_EQ_INT(c.error, ERR_INCONSISTENT_GROUP_PROTOCOL);
    CHECK_EQ_INT(group_sm_leave(f.sm, a.member_id, NULL, NULL), 0);
    join(&f, &c, "", &only_rr); /* now only b is left, and it does */
    CHECK_EQ_INT(c.calls, 0);
    struct jw rb;
    join(&f, &rb, b.member_id, &both);
    CHECK_EQ_INT(c.calls, 1);
    CHECK_EQ_INT(c.error, 0);
    CHECK_EQ_STR(c.protocol, "roundrobin");
    /* b changes its protocols to range only: roundrobin is no longer common. */
    struct jw a2;
    join(&f, &rb, b.member_id, &only_range);
    join(&f, &a2, "", &only_range);
    CHECK_EQ_INT(a2.error, ERR_INCONSISTENT_GROUP_PROTOCOL);
    fx_done(&f);
}

TEST(group_sm_many_members_grow_the_index)
{
    struct fx f;
    fx_init(&f, NULL);
    enum { N = 100 };
    static struct jw j[N];
    struct jopt st = {.instance = NULL};
    char inst[N][24];
    for (int i = 0; i < N; i++) {
        snprintf(inst[i], sizeof inst[i], "inst-%d", i);
        st.instance = i % 2 ? inst[i] : NULL;
        join(&f, &j[i], "", &st);
    }
    tclock_advance(f.clock, 6000);
    for (int i = 0; i < N; i++) {
        REQUIRE(j[i].calls == 1);
        CHECK_EQ_INT(group_sm_heartbeat(f.sm, j[i].member_id, i % 2 ? inst[i] : NULL, 1), 0);
    }
    CHECK_EQ_INT(j[0].n_members, N);
    for (int i = 0; i < N; i += 3)
        CHECK_EQ_INT(
            group_sm_leave(f.sm, i % 2 ? "" : j[i].member_id, i % 2 ? inst[i] : NULL, NULL), 0);
    int32_t n;
    group_sm_members(f.sm, &n);
    CHECK_EQ_INT(n, N - (N + 2) / 3);
    for (int i = 0; i < N; i++)
        CHECK_EQ_INT(group_sm_heartbeat(f.sm, j[i].member_id, i % 2 ? inst[i] : NULL, 1),
                     i % 3 == 0 ? ERR_UNKNOWN_MEMBER_ID : ERR_REBALANCE_IN_PROGRESS);
    fx_done(&f);
}

TEST(group_sm_pending_id_turned_away_by_max_size_no_longer_holds_the_join_phase)
{
    struct group_sm_config cfg = default_cfg;
    cfg.max_size = 2;
    struct fx f;
    fx_init(&f, &cfg);
    char ids[1][96];
    make_stable(&f, 1, ids);
    struct jw x, y, l;
    struct jopt req = {.require = true};
    join(&f, &x, "", &req); /* one member, room for two: x gets an id to come back with */
    CHECK_EQ_INT(x.error, ERR_MEMBER_ID_REQUIRED);
    char xid[96];
    snprintf(xid, sizeof xid, "%s", x.member_id);
    join(&f, &y, "", NULL);     /* y takes the second place */
    join(&f, &l, ids[0], NULL); /* the leader rejoins: two awaiting, x still pending */
    CHECK_EQ_INT(l.calls, 0);
    join(&f, &x, xid, &req); /* full: x is turned away and its pending id dropped */
    CHECK_EQ_INT(x.error, ERR_GROUP_MAX_SIZE_REACHED);
    CHECK_EQ_INT(l.calls, 1); /* so the join phase ends now, not at x's session timeout */
    CHECK_EQ_INT(y.calls, 1);
    CHECK_EQ_INT(l.gen, 2);
    CHECK_EQ_INT(l.n_members, 2);
    fx_done(&f);
}

TEST(group_sm_static_member_that_does_not_rejoin_keeps_its_place)
{
    struct fx f;
    fx_init(&f, NULL);
    struct jw d, s;
    struct jopt st = {.instance = "i1", .session = 60000};
    join(&f, &d, "", NULL);
    join(&f, &s, "", &st);
    tclock_advance(f.clock, 6000);
    REQUIRE(d.calls == 1 && s.calls == 1);
    struct sw sd, ss;
    const char *ids[] = {d.member_id, s.member_id}, *as[] = {"d", "s"};
    sync_(&f, &ss, s.member_id, "i1", 1, 0, NULL, NULL);
    sync_(&f, &sd, d.member_id, NULL, 1, 2, ids, as);
    REQUIRE(group_sm_state(f.sm) == GROUP_STABLE);
    struct jw r;
    join(&f, &r, d.member_id, NULL); /* the leader rejoins; the static member does not */
    for (int t = 0; t < 10; t++) {
        tclock_advance(f.clock, 3000); /* the join phase ends at the rebalance timeout, 30 s */
        group_sm_heartbeat(f.sm, s.member_id, "i1", 1);
    }
    REQUIRE(r.calls == 1);
    CHECK_EQ_INT(r.gen, 2);
    CHECK_EQ_INT(r.n_members, 2); /* a dynamic member would have been dropped */
    CHECK_EQ_INT(group_sm_heartbeat(f.sm, s.member_id, "i1", 2), 0);
    fx_done(&f);
}

TEST(group_sm_follower_that_never_syncs_is_removed_even_when_stable)
{
    struct fx f;
    fx_init(&f, NULL);
    struct jw j[2];
    join_two(&f, j);
    struct sw s;
    const char *ids[] = {j[0].member_id, j[1].member_id}, *as[] = {"x", "y"};
    sync_(&f, &s, j[0].member_id, NULL, 1, 2, ids, as);
    REQUIRE(group_sm_state(f.sm) == GROUP_STABLE);
    for (int t = 0; t < 9; t++) { /* both heartbeat; the follower never asks for its part */
        tclock_advance(f.clock, 3000);
        CHECK_EQ_INT(group_sm_heartbeat(f.sm, j[0].member_id, NULL, 1), 0);
        CHECK_EQ_INT(group_sm_heartbeat(f.sm, j[1].member_id, NULL, 1), 0);
    }
    tclock_advance(f.clock, 2999);
    CHECK_EQ_INT(group_sm_state(f.sm), GROUP_STABLE);
    tclock_advance(f.clock, 1); /* the rebalance timeout since the join phase ended */
    CHECK_EQ_INT(group_sm_state(f.sm), GROUP_PREPARING_REBALANCE);
    CHECK_EQ_INT(group_sm_heartbeat(f.sm, j[1].member_id, NULL, 1), ERR_UNKNOWN_MEMBER_ID);
    CHECK_EQ_INT(group_sm_heartbeat(f.sm, j[0].member_id, NULL, 1), ERR_REBALANCE_IN_PROGRESS);
    fx_done(&f);
}
