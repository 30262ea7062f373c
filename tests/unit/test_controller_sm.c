/* SPDX-License-Identifier: Apache-2.0 */
/* controller_sm unit tests: every decision is taken on a bare meta_image built from encoded
 * batches, on plain now_ms values, and its records are applied back to the image (each
 * decision's batch must apply cleanly) before the next decision looks at it. */
#include "harness.h"

#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "controller/controller_sm.h"
#include "meta/meta.h"

#define SESSION 9000
#define UNCLEAN "unclean.leader.election.enable"

struct cfx {
    struct meta_image *img;
    struct ctl_sm *c;
    struct ctl_out out;
    struct ctl_config cfg;
    int64_t now;
    int64_t epoch[16]; /* broker epochs, by id */
};

static const struct ctl_config default_cfg = {
    .cluster_id = "cluster-1",
    .session_timeout_ms = SESSION,
    .unclean_leader_election = false,
    .auto_leader_rebalance = true,
    .leader_imbalance_interval_ms = 300000,
    .rebalance_batch = 0,
};

static bool cfx_init(struct cfx *f, const struct ctl_config *cfg)
{
    memset(f, 0, sizeof *f);
    f->cfg = cfg ? *cfg : default_cfg;
    f->img = meta_image_new();
    f->c = ctl_sm_new(&f->cfg);
    ctl_out_init(&f->out);
    if (f->img == NULL || f->c == NULL || f->out.oom)
        return false;
    ctl_sm_activate(f->c, f->img, 0);
    return true;
}

static void cfx_fini(struct cfx *f)
{
    ctl_out_free(&f->out);
    ctl_sm_free(f->c);
    meta_image_free(f->img);
}

static int apply_recs(struct meta_image *img, const struct meta_record *recs, size_t n)
{
    uint8_t *buf;
    size_t len;
    int rv = meta_batch_encode(recs, n, &buf, &len);
    if (rv != 0)
        return rv;
    rv = meta_image_apply(img, buf, len, NULL, NULL);
    free(buf);
    return rv;
}

/* Applies the last decision's records as one batch and empties `out`; the result of the
 * apply (0 when nothing was decided). */
static int apply_out(struct cfx *f)
{
    int rv = 0;
    if (f->out.oom)
        return ERR_NOMEM;
    if (f->out.n > 0)
        rv = apply_recs(f->img, f->out.recs, f->out.n);
    ctl_out_reset(&f->out);
    return rv;
}

static void make_id(uint8_t id[16], int n)
{
    memset(id, 0, 16);
    id[0] = 0xC7;
    id[15] = (uint8_t)n;
}

static void add_topic(struct cfx *f, const char *name, int id)
{
    struct meta_record r = {.type = META_REC_TOPIC};
    r.u.topic.name = name;
    make_id(r.u.topic.id, id);
    CHECK_EQ_INT(apply_recs(f->img, &r, 1), 0);
}

/* Adds the next partition of topic `id` (partition and leader epochs 0). */
static void add_partition(struct cfx *f, int id, int32_t partition, int32_t leader,
                          const int32_t *replicas, int32_t n_replicas, const int32_t *isr,
                          int32_t n_isr)
{
    struct meta_record r = {.type = META_REC_PARTITION};
    make_id(r.u.partition.topic_id, id);
    r.u.partition.partition = partition;
    r.u.partition.leader = leader;
    r.u.partition.n_replicas = n_replicas;
    r.u.partition.replicas = replicas;
    r.u.partition.n_isr = n_isr;
    r.u.partition.isr = isr;
    CHECK_EQ_INT(apply_recs(f->img, &r, 1), 0);
}

static const struct meta_partition *part(struct cfx *f, int id, int32_t partition)
{
    uint8_t tid[16];
    const struct meta_topic *t;
    make_id(tid, id);
    t = meta_image_topic_by_id(f->img, tid);
    return t && partition < t->n_partitions ? &t->partitions[partition] : NULL;
}

static bool isr_is(const struct meta_partition *p, const int32_t *v, int32_t n)
{
    return p && p->n_isr == n && memcmp(p->isr, v, (size_t)n * sizeof *v) == 0;
}

static bool has_member(const struct meta_partition *p, int32_t id)
{
    for (int32_t i = 0; p && i < p->n_isr; i++)
        if (p->isr[i] == id)
            return true;
    return false;
}

#define ISR_IS(p, ...)                                                                             \
    isr_is(p, (int32_t[]){__VA_ARGS__}, sizeof((int32_t[]){__VA_ARGS__}) / sizeof(int32_t))

static void set_config(struct cfx *f, int8_t type, const char *name, const char *key,
                       const char *value)
{
    struct meta_record r = {.type = META_REC_CONFIG};
    r.u.config.resource_type = type;
    r.u.config.resource_name = name;
    r.u.config.key = key;
    r.u.config.value = value;
    CHECK_EQ_INT(apply_recs(f->img, &r, 1), 0);
}

/* A registration request with its storage. */
struct regbuf {
    struct meta_listener l[2];
    char host[32];
    uint8_t dirs[2][16];
    struct ctl_registration r;
};

static const struct ctl_registration *reg_of(struct regbuf *b, int32_t id, uint8_t incarnation,
                                             const char *rack, uint8_t dir_tag)
{
    memset(b, 0, sizeof *b);
    snprintf(b->host, sizeof b->host, "10.0.0.%d", id);
    b->l[0] = (struct meta_listener){.name = "PLAINTEXT", .host = b->host, .port = 9092};
    b->l[1] = (struct meta_listener){.name = "CONTROLLER", .host = b->host, .port = 9093};
    b->dirs[0][0] = dir_tag;
    b->dirs[1][0] = (uint8_t)(dir_tag + 100);
    b->r = (struct ctl_registration){
        .broker_id = id,
        .cluster_id = "cluster-1",
        .n_listeners = 2,
        .listeners = b->l,
        .rack = rack,
        .n_dirs = 2,
        .dirs = (const uint8_t(*)[16])b->dirs,
    };
    memset(b->r.incarnation, incarnation, 16);
    return &b->r;
}

/* Registers broker `id` and applies the registration; returns its epoch. */
static int64_t do_register(struct cfx *f, int32_t id, uint8_t incarnation, const char *rack)
{
    struct regbuf b;
    const struct meta_broker *m;
    CHECK_EQ_INT(ctl_sm_register(f->c, f->img, reg_of(&b, id, incarnation, rack, (uint8_t)id),
                                 f->now, &f->out),
                 0);
    CHECK_EQ_INT(apply_out(f), 0);
    m = meta_image_broker_by_id(f->img, id);
    CHECK(m != NULL);
    if (m == NULL)
        return -1;
    f->epoch[id] = m->epoch;
    return m->epoch;
}

/* A heartbeat of broker `id` at its epoch, caught up with the image. */
static int heartbeat(struct cfx *f, int32_t id, bool want_fence, bool want_shutdown,
                     struct ctl_heartbeat_answer *ans)
{
    struct ctl_heartbeat hb = {
        .broker_id = id,
        .broker_epoch = f->epoch[id],
        .metadata_offset = meta_image_offset(f->img),
        .want_fence = want_fence,
        .want_shutdown = want_shutdown,
    };
    return ctl_sm_heartbeat(f->c, f->img, &hb, f->now, &f->out, ans);
}

/* Registers and unfences broker `id`. */
static void join(struct cfx *f, int32_t id, const char *rack)
{
    struct ctl_heartbeat_answer ans;
    do_register(f, id, (uint8_t)(0x10 + id), rack);
    CHECK_EQ_INT(heartbeat(f, id, false, false, &ans), 0);
    CHECK(!ans.is_fenced);
    CHECK_EQ_INT(apply_out(f), 0);
    CHECK(!meta_image_broker_by_id(f->img, id)->fenced);
}

/* Keeps the sessions of the listed brokers alive at f->now. */
static void keep_alive(struct cfx *f, const int32_t *ids, int n)
{
    struct ctl_heartbeat_answer ans;
    for (int i = 0; i < n; i++) {
        CHECK_EQ_INT(heartbeat(f, ids[i], false, false, &ans), 0);
        CHECK_EQ_INT(f->out.n, 0);
        CHECK_EQ_INT(apply_out(f), 0);
    }
}

static const struct meta_record *find_rec(const struct ctl_out *o, enum meta_record_type type,
                                          int topic, int32_t partition)
{
    uint8_t tid[16];
    make_id(tid, topic);
    for (size_t i = 0; i < o->n; i++) {
        const struct meta_record *r = &o->recs[i];
        if (r->type != type)
            continue;
        if (type != META_REC_PARTITION_CHANGE || (memcmp(r->u.partition.topic_id, tid, 16) == 0 &&
                                                  r->u.partition.partition == partition))
            return r;
    }
    return NULL;
}

static const int32_t r123[] = {1, 2, 3}, r12[] = {1, 2}, r21[] = {2, 1}, r1[] = {1};

/* ---- registration ----------------------------------------------------------------------- */

TEST(ctl_register_checks_and_epoch_is_offset)
{
    struct cfx f;
    struct regbuf b;
    struct ctl_registration r;
    const struct meta_broker *m;
    REQUIRE(cfx_init(&f, NULL));

    r = *reg_of(&b, 1, 0x11, NULL, 1);
    r.cluster_id = "another";
    CHECK_EQ_INT(ctl_sm_register(f.c, f.img, &r, 0, &f.out), ERR_INCONSISTENT_CLUSTER_ID);
    r = *reg_of(&b, -1, 0x11, NULL, 1);
    CHECK_EQ_INT(ctl_sm_register(f.c, f.img, &r, 0, &f.out), ERR_INVALID_REQUEST);
    r = *reg_of(&b, 1, 0x11, NULL, 1);
    r.n_listeners = 0;
    CHECK_EQ_INT(ctl_sm_register(f.c, f.img, &r, 0, &f.out), ERR_INVALID_REQUEST);
    r = *reg_of(&b, 1, 0x11, NULL, 1);
    b.l[1].host = "";
    CHECK_EQ_INT(ctl_sm_register(f.c, f.img, &r, 0, &f.out), ERR_INVALID_REQUEST);
    r = *reg_of(&b, 1, 0x11, NULL, 1);
    b.l[0].port = 0;
    CHECK_EQ_INT(ctl_sm_register(f.c, f.img, &r, 0, &f.out), ERR_INVALID_REQUEST);
    CHECK_EQ_INT(f.out.n, 0);

    /* Two unrelated batches first, so that the epoch is visibly the offset. */
    add_topic(&f, "a", 1);
    add_topic(&f, "b", 2);
    CHECK_EQ_INT(ctl_sm_register(f.c, f.img, reg_of(&b, 1, 0x11, "r1", 1), 0, &f.out), 0);
    REQUIRE(f.out.n == 1);
    CHECK_EQ_INT(f.out.recs[0].type, META_REC_REGISTER_BROKER2);
    CHECK_EQ_INT(apply_out(&f), 0);
    m = meta_image_broker_by_id(f.img, 1);
    REQUIRE(m);
    CHECK_EQ_INT(m->epoch, 3);
    CHECK_EQ_INT(m->epoch, meta_image_offset(f.img));
    CHECK(m->fenced);
    CHECK_EQ_STR(m->host, "10.0.0.1");
    CHECK_EQ_STR(m->rack, "r1");
    CHECK_EQ_INT(m->n_listeners, 2);
    CHECK_EQ_INT(m->n_dirs, 2);
    cfx_fini(&f);
}

TEST(ctl_register_retry_is_idempotent)
{
    struct cfx f;
    struct regbuf b;
    int64_t epoch, offset;
    REQUIRE(cfx_init(&f, NULL));
    epoch = do_register(&f, 1, 0x11, NULL);
    offset = meta_image_offset(f.img);
    /* The same incarnation again (its answer was lost): nothing to write, same epoch. */
    f.now = 50;
    CHECK_EQ_INT(ctl_sm_register(f.c, f.img, reg_of(&b, 1, 0x11, NULL, 1), f.now, &f.out), 0);
    CHECK_EQ_INT(f.out.n, 0);
    CHECK_EQ_INT(apply_out(&f), 0);
    CHECK_EQ_INT(meta_image_broker_by_id(f.img, 1)->epoch, epoch);
    CHECK_EQ_INT(meta_image_offset(f.img), offset);
    cfx_fini(&f);
}

TEST(ctl_register_refuses_a_duplicate_live_incarnation)
{
    struct cfx f;
    struct regbuf b;
    const struct meta_partition *p;
    const struct meta_broker *m;
    int64_t old_epoch;
    REQUIRE(cfx_init(&f, NULL));
    join(&f, 1, NULL);
    join(&f, 2, NULL);
    join(&f, 3, NULL);
    old_epoch = f.epoch[1];
    add_topic(&f, "t", 1);
    add_partition(&f, 1, 0, 1, r123, 3, r123, 3);

    /* Another process claims id 1 while its session lives: refused, unless it names the same
     * log directories (the broker itself, restarted in place). */
    f.now = 1000;
    CHECK_EQ_INT(ctl_sm_register(f.c, f.img, reg_of(&b, 1, 0x99, NULL, 77), f.now, &f.out),
                 ERR_DUPLICATE_BROKER_REGISTRATION);
    CHECK_EQ_INT(f.out.n, 0);
    CHECK_EQ_INT(ctl_sm_register(f.c, f.img, reg_of(&b, 1, 0x99, NULL, 1), f.now, &f.out), 0);
    /* The old incarnation is fenced out in the same batch: its leadership and ISR places. */
    REQUIRE(f.out.n == 2);
    CHECK(find_rec(&f.out, META_REC_PARTITION_CHANGE, 1, 0) != NULL);
    CHECK_EQ_INT(f.out.recs[1].type, META_REC_REGISTER_BROKER2);
    CHECK_EQ_INT(apply_out(&f), 0);
    m = meta_image_broker_by_id(f.img, 1);
    CHECK(m->fenced);
    CHECK(m->epoch > old_epoch);
    CHECK_EQ_INT(m->epoch, meta_image_offset(f.img));
    CHECK_EQ_INT(m->incarnation[0], 0x99);
    p = part(&f, 1, 0);
    CHECK_EQ_INT(p->leader, 2);
    CHECK_EQ_INT(p->leader_epoch, 1);
    CHECK(ISR_IS(p, 2, 3));
    /* The old incarnation's heartbeats are stale now. */
    struct ctl_heartbeat hb = {.broker_id = 1, .broker_epoch = old_epoch, .metadata_offset = 99};
    struct ctl_heartbeat_answer ans;
    CHECK_EQ_INT(ctl_sm_heartbeat(f.c, f.img, &hb, f.now, &f.out, &ans), ERR_STALE_BROKER_EPOCH);
    CHECK_EQ_INT(ans.error, ERR_STALE_BROKER_EPOCH);

    /* Once a session has expired, anyone may take the id. */
    f.now = SESSION - 1; /* broker 3 was last heard of at 0 */
    CHECK_EQ_INT(ctl_sm_register(f.c, f.img, reg_of(&b, 3, 0x77, NULL, 77), f.now, &f.out),
                 ERR_DUPLICATE_BROKER_REGISTRATION);
    f.now = SESSION;
    CHECK(!ctl_sm_session_alive(f.c, 3, f.now));
    CHECK_EQ_INT(ctl_sm_register(f.c, f.img, reg_of(&b, 3, 0x77, NULL, 77), f.now, &f.out), 0);
    CHECK_EQ_INT(apply_out(&f), 0);
    CHECK_EQ_INT(meta_image_broker_by_id(f.img, 3)->incarnation[0], 0x77);
    CHECK(ISR_IS(part(&f, 1, 0), 2));
    cfx_fini(&f);
}

/* ---- heartbeats ----------------------------------------------------------------------------- */

TEST(ctl_heartbeat_unfences_only_when_caught_up)
{
    struct cfx f;
    struct ctl_heartbeat_answer ans;
    struct ctl_heartbeat hb;
    const struct meta_partition *p;
    int64_t epoch;
    REQUIRE(cfx_init(&f, NULL));
    /* An offline partition broker 1 will be able to lead. */
    add_topic(&f, "t", 1);
    add_partition(&f, 1, 0, -1, r1, 1, r1, 1);
    epoch = do_register(&f, 1, 0x11, NULL);

    hb =
        (struct ctl_heartbeat){.broker_id = 1, .broker_epoch = epoch, .metadata_offset = epoch - 1};
    CHECK_EQ_INT(ctl_sm_heartbeat(f.c, f.img, &hb, 10, &f.out, &ans), 0);
    CHECK(!ans.is_caught_up);
    CHECK(ans.is_fenced);
    CHECK_EQ_INT(f.out.n, 0);
    /* Caught up but asking to stay fenced. */
    hb.metadata_offset = epoch;
    hb.want_fence = true;
    CHECK_EQ_INT(ctl_sm_heartbeat(f.c, f.img, &hb, 20, &f.out, &ans), 0);
    CHECK(ans.is_caught_up);
    CHECK(ans.is_fenced);
    CHECK_EQ_INT(f.out.n, 0);
    hb.want_fence = false;
    CHECK_EQ_INT(ctl_sm_heartbeat(f.c, f.img, &hb, 30, &f.out, &ans), 0);
    CHECK(ans.is_caught_up);
    CHECK(!ans.is_fenced);
    CHECK(!ans.should_shutdown);
    REQUIRE(f.out.n == 2);
    CHECK_EQ_INT(f.out.recs[0].type, META_REC_BROKER_CHANGE);
    CHECK_EQ_INT(f.out.recs[0].u.broker_change.fenced, 0);
    CHECK_EQ_INT(f.out.recs[0].u.broker_change.epoch, epoch);
    CHECK_EQ_INT(apply_out(&f), 0);
    CHECK(!meta_image_broker_by_id(f.img, 1)->fenced);
    /* ... with the election of the offline partition in the same batch. */
    p = part(&f, 1, 0);
    CHECK_EQ_INT(p->leader, 1);
    CHECK_EQ_INT(p->leader_epoch, 1);
    CHECK_EQ_INT(p->partition_epoch, 1);
    /* Unfenced already: a heartbeat only renews the session. */
    CHECK_EQ_INT(heartbeat(&f, 1, false, false, &ans), 0);
    CHECK_EQ_INT(f.out.n, 0);
    CHECK(!ans.is_fenced);
    cfx_fini(&f);
}

TEST(ctl_heartbeat_stale_epoch_renews_nothing)
{
    struct cfx f;
    struct ctl_heartbeat_answer ans;
    struct ctl_heartbeat hb;
    REQUIRE(cfx_init(&f, NULL));
    join(&f, 1, NULL);
    hb = (struct ctl_heartbeat){.broker_id = 1, .broker_epoch = f.epoch[1] + 1};
    f.now = SESSION - 1;
    CHECK_EQ_INT(ctl_sm_heartbeat(f.c, f.img, &hb, f.now, &f.out, &ans), ERR_STALE_BROKER_EPOCH);
    CHECK_EQ_INT(f.out.n, 0);
    hb.broker_id = 7;
    CHECK_EQ_INT(ctl_sm_heartbeat(f.c, f.img, &hb, f.now, &f.out, &ans), ERR_BROKER_NOT_AVAILABLE);
    CHECK_EQ_INT(ans.error, ERR_BROKER_NOT_AVAILABLE);
    /* The stale heartbeat did not keep the session alive. */
    CHECK(ctl_sm_session_alive(f.c, 1, SESSION - 1));
    CHECK(!ctl_sm_session_alive(f.c, 1, SESSION));
    ctl_sm_tick(f.c, f.img, SESSION, &f.out);
    REQUIRE(f.out.n == 1);
    CHECK_EQ_INT(f.out.recs[0].type, META_REC_BROKER_CHANGE);
    CHECK_EQ_INT(f.out.recs[0].u.broker_change.fenced, 1);
    CHECK_EQ_INT(apply_out(&f), 0);
    CHECK(meta_image_broker_by_id(f.img, 1)->fenced);
    cfx_fini(&f);
}

/* ---- fencing and elections -------------------------------------------------------------- */

/* Three brokers; topic 1: p0 on {1,2,3} led by 1, p1 on {1,2} led by 1 with ISR {1}, p2 on
 * {2,1} led by 2 with ISR {2,1}. Broker 1 was last heard of at 0, 2 and 3 at 5000. */
static void three_brokers(struct cfx *f)
{
    static const int32_t keep[] = {2, 3};
    join(f, 1, NULL);
    join(f, 2, NULL);
    join(f, 3, NULL);
    add_topic(f, "t", 1);
    add_partition(f, 1, 0, 1, r123, 3, r123, 3);
    add_partition(f, 1, 1, 1, r12, 2, r1, 1);
    add_partition(f, 1, 2, 2, r21, 2, r21, 2);
    f->now = 5000;
    keep_alive(f, keep, 2);
}

TEST(ctl_session_expiry_fences_moves_leaders_shrinks_isrs)
{
    struct cfx f;
    const struct meta_partition *p;
    const struct meta_record *r;
    REQUIRE(cfx_init(&f, NULL));
    three_brokers(&f);

    ctl_sm_tick(f.c, f.img, SESSION - 1, &f.out);
    CHECK_EQ_INT(f.out.n, 0);
    CHECK_EQ_INT(ctl_sm_next_deadline(f.c, SESSION - 1), SESSION);
    f.now = SESSION;
    ctl_sm_tick(f.c, f.img, f.now, &f.out);
    REQUIRE(f.out.n == 4);
    r = find_rec(&f.out, META_REC_BROKER_CHANGE, 0, 0);
    REQUIRE(r);
    CHECK_EQ_INT(r->u.broker_change.id, 1);
    CHECK_EQ_INT(r->u.broker_change.fenced, 1);
    CHECK_EQ_INT(apply_out(&f), 0);
    CHECK(meta_image_broker_by_id(f.img, 1)->fenced);
    CHECK(!ctl_sm_session_alive(f.c, 1, f.now));

    /* p0: the first eligible ISR member leads, at a new leader epoch. */
    p = part(&f, 1, 0);
    CHECK_EQ_INT(p->leader, 2);
    CHECK_EQ_INT(p->leader_epoch, 1);
    CHECK_EQ_INT(p->partition_epoch, 1);
    CHECK(ISR_IS(p, 2, 3));
    /* p1: broker 1 held the only complete copy: it stays the ISR, the partition is offline,
     * and nothing is cut from its replicas. */
    p = part(&f, 1, 1);
    CHECK_EQ_INT(p->leader, -1);
    CHECK_EQ_INT(p->leader_epoch, 1);
    CHECK(ISR_IS(p, 1));
    CHECK_EQ_INT(p->n_replicas, 2);
    CHECK_EQ_INT(p->leader_recovery_state, 0);
    /* p2: an ISR-only change: the leader epoch stays. */
    p = part(&f, 1, 2);
    CHECK_EQ_INT(p->leader, 2);
    CHECK_EQ_INT(p->leader_epoch, 0);
    CHECK_EQ_INT(p->partition_epoch, 1);
    CHECK(ISR_IS(p, 2));

    /* Nothing more to do, even with broker 2 eligible (it is not in p1's ISR, unclean off). */
    f.now += 1000;
    static const int32_t keep[] = {2, 3};
    keep_alive(&f, keep, 2);
    ctl_sm_tick(f.c, f.img, f.now, &f.out);
    CHECK_EQ_INT(f.out.n, 0);
    CHECK_EQ_INT(part(&f, 1, 1)->leader, -1);

    /* Broker 1 comes back: its heartbeat unfences it and it leads p1 again. */
    struct ctl_heartbeat_answer ans;
    CHECK_EQ_INT(heartbeat(&f, 1, false, false, &ans), 0);
    CHECK(!ans.is_fenced);
    CHECK(find_rec(&f.out, META_REC_PARTITION_CHANGE, 1, 1) != NULL);
    CHECK(find_rec(&f.out, META_REC_PARTITION_CHANGE, 1, 0) == NULL);
    CHECK_EQ_INT(apply_out(&f), 0);
    p = part(&f, 1, 1);
    CHECK_EQ_INT(p->leader, 1);
    CHECK_EQ_INT(p->leader_epoch, 2);
    CHECK(ISR_IS(p, 1));
    cfx_fini(&f);
}

/* A broker fenced for a missed session is caught up again only once it has applied the batch
 * that fenced it (and moved its leaderships): unfenced on its registration alone (Kafka's
 * rule), it would serve as the leader its stale image still names. */
/* Three brokers whose sessions all ran out but 2's and 3's: broker 1 fenced, its leadership
 * of t-0 moved to 2. Returns the offset of the fencing. */
static int64_t fence_broker_1(struct cfx *f)
{
    three_brokers(f);
    f->now = SESSION;
    ctl_sm_tick(f->c, f->img, f->now, &f->out);
    CHECK_EQ_INT(apply_out(f), 0);
    CHECK(meta_image_broker_by_id(f->img, 1)->fenced);
    CHECK_EQ_INT(part(f, 1, 0)->leader, 2);
    return meta_image_broker_by_id(f->img, 1)->fenced_at;
}

TEST(ctl_fenced_broker_unfenced_only_after_applying_its_fencing)
{
    struct cfx f;
    struct ctl_heartbeat_answer ans;
    struct ctl_heartbeat hb;
    int64_t fenced_at;
    REQUIRE(cfx_init(&f, NULL));
    fenced_at = fence_broker_1(&f);
    CHECK(fenced_at > f.epoch[1]);

    /* Back, with its registration applied but not the fencing batch: still fenced. */
    hb = (struct ctl_heartbeat){
        .broker_id = 1, .broker_epoch = f.epoch[1], .metadata_offset = fenced_at - 1};
    CHECK_EQ_INT(ctl_sm_heartbeat(f.c, f.img, &hb, f.now + 100, &f.out, &ans), 0);
    CHECK(!ans.is_caught_up);
    CHECK(ans.is_fenced);
    CHECK_EQ_INT(f.out.n, 0);
    /* Once it has applied it: unfenced. */
    hb.metadata_offset = fenced_at;
    CHECK_EQ_INT(ctl_sm_heartbeat(f.c, f.img, &hb, f.now + 200, &f.out, &ans), 0);
    CHECK(ans.is_caught_up);
    CHECK(!ans.is_fenced);
    CHECK_EQ_INT(apply_out(&f), 0);
    CHECK(!meta_image_broker_by_id(f.img, 1)->fenced);
    cfx_fini(&f);
}

/* The same after the controller's image came from a snapshot taken after the fencing (the
 * snapshot keeps no fencing offset): the bound is then the snapshot's offset. */
TEST(ctl_fenced_broker_restored_from_a_snapshot_still_waits_for_its_fencing)
{
    struct cfx f;
    struct ctl_heartbeat_answer ans;
    struct ctl_heartbeat hb;
    struct meta_image *restored = meta_image_new();
    uint8_t *snap = NULL;
    size_t len = 0;
    int64_t fenced_at;
    REQUIRE(restored != NULL);
    REQUIRE(cfx_init(&f, NULL));
    fenced_at = fence_broker_1(&f);
    REQUIRE(meta_image_snapshot(f.img, &snap, &len) == 0);
    REQUIRE(meta_image_restore(restored, snap, len) == 0);
    CHECK(meta_image_broker_by_id(restored, 1)->fenced_at >= fenced_at);

    hb = (struct ctl_heartbeat){
        .broker_id = 1, .broker_epoch = f.epoch[1], .metadata_offset = fenced_at - 1};
    CHECK_EQ_INT(ctl_sm_heartbeat(f.c, restored, &hb, f.now + 100, &f.out, &ans), 0);
    CHECK(!ans.is_caught_up);
    CHECK(ans.is_fenced);
    CHECK_EQ_INT(f.out.n, 0);
    hb.metadata_offset = meta_image_broker_by_id(restored, 1)->fenced_at;
    CHECK_EQ_INT(ctl_sm_heartbeat(f.c, restored, &hb, f.now + 200, &f.out, &ans), 0);
    CHECK(ans.is_caught_up);
    CHECK(!ans.is_fenced);
    free(snap);
    meta_image_free(restored);
    cfx_fini(&f);
}

/* With unclean election on, an offline partition goes to the first eligible replica, which
 * becomes the ISR alone, RECOVERING; the setting comes from the topic, else the cluster-wide
 * dynamic default, else the controller's config. */
TEST(ctl_unclean_election_recovering_with_isr_of_new_leader)
{
    for (int variant = 0; variant < 4; variant++) {
        struct ctl_config cfg = default_cfg;
        struct cfx f;
        const struct meta_partition *p;
        cfg.unclean_leader_election = variant == 2 || variant == 3;
        REQUIRE(cfx_init(&f, &cfg));
        three_brokers(&f);
        if (variant == 0)
            set_config(&f, 2, "t", UNCLEAN, "true");
        if (variant == 1)
            set_config(&f, 4, "", UNCLEAN, "true");
        if (variant == 3) /* the topic says no, whatever the default */
            set_config(&f, 2, "t", UNCLEAN, "false");
        f.now = SESSION;
        ctl_sm_tick(f.c, f.img, f.now, &f.out);
        CHECK_EQ_INT(apply_out(&f), 0);
        p = part(&f, 1, 1);
        if (variant == 3) {
            CHECK_EQ_INT(p->leader, -1);
            CHECK(ISR_IS(p, 1));
            cfx_fini(&f);
            continue;
        }
        CHECK_EQ_INT(p->leader, 2);
        CHECK_EQ_INT(p->leader_epoch, 1);
        CHECK(ISR_IS(p, 2));
        CHECK_EQ_INT(p->leader_recovery_state, 1);
        /* A clean election elsewhere stays clean. */
        CHECK_EQ_INT(part(&f, 1, 0)->leader_recovery_state, 0);

        /* The new leader may not grow the ISR while recovering, nor go back to recovering;
         * it reports recovery done with itself alone. */
        struct ctl_alter_partition a = {
            .broker_id = 2,
            .broker_epoch = f.epoch[2],
            .partition = 1,
            .leader_epoch = p->leader_epoch,
            .partition_epoch = p->partition_epoch,
            .n_isr = 2,
            .isr = r21,
            .leader_recovery_state = 1,
        };
        make_id(a.topic_id, 1);
        CHECK_EQ_INT(ctl_sm_alter_partition(f.c, f.img, &a, &f.out), ERR_INVALID_REQUEST);
        a.n_isr = 1;
        a.leader_recovery_state = 0;
        CHECK_EQ_INT(ctl_sm_alter_partition(f.c, f.img, &a, &f.out), 0);
        REQUIRE(f.out.n == 1);
        CHECK_EQ_INT(f.out.recs[0].u.partition.leader_epoch, 1);
        CHECK_EQ_INT(f.out.recs[0].u.partition.partition_epoch, 2);
        CHECK_EQ_INT(apply_out(&f), 0);
        CHECK_EQ_INT(part(&f, 1, 1)->leader_recovery_state, 0);
        cfx_fini(&f);
    }
}

/* ---- AlterPartition ---------------------------------------------------------------------- */

TEST(ctl_alter_partition_isr_change_bumps_partition_epoch_only)
{
    struct cfx f;
    const struct meta_partition *p;
    struct ctl_alter_partition a;
    REQUIRE(cfx_init(&f, NULL));
    three_brokers(&f);
    a = (struct ctl_alter_partition){
        .broker_id = 1, .broker_epoch = f.epoch[1], .n_isr = 2, .isr = r12};
    make_id(a.topic_id, 1);
    CHECK_EQ_INT(ctl_sm_alter_partition(f.c, f.img, &a, &f.out), 0);
    REQUIRE(f.out.n == 1);
    CHECK_EQ_INT(apply_out(&f), 0);
    p = part(&f, 1, 0);
    CHECK(ISR_IS(p, 1, 2));
    CHECK_EQ_INT(p->leader, 1);
    CHECK_EQ_INT(p->leader_epoch, 0);
    CHECK_EQ_INT(p->partition_epoch, 1);
    /* Back to three, v3-style with each member's broker epoch. */
    int64_t epochs[] = {f.epoch[1], f.epoch[2], f.epoch[3]};
    a.partition_epoch = 1;
    a.n_isr = 3;
    a.isr = r123;
    a.isr_epochs = epochs;
    CHECK_EQ_INT(ctl_sm_alter_partition(f.c, f.img, &a, &f.out), 0);
    CHECK_EQ_INT(apply_out(&f), 0);
    p = part(&f, 1, 0);
    CHECK(ISR_IS(p, 1, 2, 3));
    CHECK_EQ_INT(p->leader_epoch, 0);
    CHECK_EQ_INT(p->partition_epoch, 2);
    /* The same ISR again: the current state, no record. */
    a.partition_epoch = 2;
    CHECK_EQ_INT(ctl_sm_alter_partition(f.c, f.img, &a, &f.out), 0);
    CHECK_EQ_INT(f.out.n, 0);
    cfx_fini(&f);
}

TEST(ctl_alter_partition_errors)
{
    struct cfx f;
    struct ctl_alter_partition a, base;
    struct ctl_heartbeat_answer ans;
    static const int32_t r14[] = {1, 4}, r11[] = {1, 1}, r23[] = {2, 3}, r13[] = {1, 3};
    int64_t bad_epochs[] = {0, 0};
    REQUIRE(cfx_init(&f, NULL));
    three_brokers(&f);
    /* p0's ISR shrinks to {1, 2} first, so that 3 is an added member below. */
    base = (struct ctl_alter_partition){
        .broker_id = 1, .broker_epoch = f.epoch[1], .n_isr = 2, .isr = r12};
    make_id(base.topic_id, 1);
    CHECK_EQ_INT(ctl_sm_alter_partition(f.c, f.img, &base, &f.out), 0);
    CHECK_EQ_INT(apply_out(&f), 0);
    base.partition_epoch = 1;
    base.n_isr = 3;
    base.isr = r123;

#define ALTER(field, value, err)                                                                   \
    do {                                                                                           \
        a = base;                                                                                  \
        a.field = value;                                                                           \
        CHECK_EQ_INT(ctl_sm_alter_partition(f.c, f.img, &a, &f.out), err);                         \
        CHECK_EQ_INT(f.out.n, 0);                                                                  \
    } while (0)

    ALTER(broker_epoch, f.epoch[1] + 1, ERR_STALE_BROKER_EPOCH);
    ALTER(topic_id[3], 0x42, ERR_UNKNOWN_TOPIC_ID);
    ALTER(partition, 7, ERR_UNKNOWN_TOPIC_OR_PARTITION);
    ALTER(leader_epoch, -1, ERR_FENCED_LEADER_EPOCH);
    ALTER(leader_epoch, 1, ERR_NOT_CONTROLLER);
    ALTER(partition_epoch, 0, ERR_INVALID_UPDATE_VERSION);
    /* Not the leader (at its own, valid epoch). */
    a = base;
    a.broker_id = 2;
    a.broker_epoch = f.epoch[2];
    CHECK_EQ_INT(ctl_sm_alter_partition(f.c, f.img, &a, &f.out), ERR_INVALID_REQUEST);
    a.broker_epoch = -1; /* v0-1: unchecked */
    CHECK_EQ_INT(ctl_sm_alter_partition(f.c, f.img, &a, &f.out), ERR_INVALID_REQUEST);
    base.n_isr = 2;
    ALTER(isr, r23, ERR_INVALID_REQUEST); /* without the leader */
    ALTER(isr, r14, ERR_INVALID_REQUEST); /* 4 is no replica */
    ALTER(isr, r11, ERR_INVALID_REQUEST); /* twice the same */
    base.n_isr = 3;
    ALTER(n_isr, 0, ERR_INVALID_REQUEST);                 /* empty */
    ALTER(leader_recovery_state, 1, ERR_INVALID_REQUEST); /* RECOVERED -> RECOVERING */
    /* Added members must be eligible: the broker epoch stated must be theirs. */
    a = base;
    a.n_isr = 2;
    a.isr = r13;
    bad_epochs[0] = f.epoch[1];
    bad_epochs[1] = f.epoch[3] - 1;
    a.isr_epochs = bad_epochs;
    CHECK_EQ_INT(ctl_sm_alter_partition(f.c, f.img, &a, &f.out), ERR_INELIGIBLE_REPLICA);
    bad_epochs[1] = -1;
    CHECK_EQ_INT(ctl_sm_alter_partition(f.c, f.img, &a, &f.out), 0);
    ctl_out_reset(&f.out);
    /* ... and neither shutting down nor fenced. */
    CHECK_EQ_INT(heartbeat(&f, 3, false, true, &ans), 0);
    CHECK(ans.should_shutdown); /* 3 leads nothing: fenced at once */
    CHECK_EQ_INT(apply_out(&f), 0);
    CHECK(meta_image_broker_by_id(f.img, 3)->fenced);
    ALTER(isr, r123, ERR_INELIGIBLE_REPLICA);
    cfx_fini(&f);
#undef ALTER
}

/* A leader in controlled shutdown keeps a partition no one else can take; once its ISR grows,
 * AlterPartition moves the leadership (NEW_LEADER_ELECTED, with the record to propose). */
TEST(ctl_alter_partition_new_leader_elected)
{
    struct cfx f;
    struct ctl_heartbeat_answer ans;
    struct ctl_alter_partition a;
    const struct meta_partition *p;
    REQUIRE(cfx_init(&f, NULL));
    three_brokers(&f);
    CHECK_EQ_INT(heartbeat(&f, 1, false, true, &ans), 0);
    CHECK(!ans.should_shutdown);
    CHECK(find_rec(&f.out, META_REC_PARTITION_CHANGE, 1, 1) == NULL);
    CHECK_EQ_INT(apply_out(&f), 0);
    p = part(&f, 1, 1);
    CHECK_EQ_INT(p->leader, 1);
    /* While shutting down (not yet fenced) it may not join an ISR either. */
    a = (struct ctl_alter_partition){.broker_id = 2,
                                     .broker_epoch = f.epoch[2],
                                     .partition = 2,
                                     .leader_epoch = part(&f, 1, 2)->leader_epoch,
                                     .partition_epoch = part(&f, 1, 2)->partition_epoch,
                                     .n_isr = 2,
                                     .isr = r21};
    make_id(a.topic_id, 1);
    CHECK(ISR_IS(part(&f, 1, 2), 2));
    CHECK(!meta_image_broker_by_id(f.img, 1)->fenced);
    CHECK_EQ_INT(ctl_sm_alter_partition(f.c, f.img, &a, &f.out), ERR_INELIGIBLE_REPLICA);
    a = (struct ctl_alter_partition){.broker_id = 1,
                                     .broker_epoch = f.epoch[1],
                                     .partition = 1,
                                     .leader_epoch = p->leader_epoch,
                                     .partition_epoch = p->partition_epoch,
                                     .n_isr = 2,
                                     .isr = r12};
    make_id(a.topic_id, 1);
    CHECK_EQ_INT(ctl_sm_alter_partition(f.c, f.img, &a, &f.out), ERR_NEW_LEADER_ELECTED);
    REQUIRE(f.out.n == 1);
    CHECK_EQ_INT(apply_out(&f), 0);
    p = part(&f, 1, 1);
    CHECK_EQ_INT(p->leader, 2);
    CHECK_EQ_INT(p->leader_epoch, 1);
    CHECK(ISR_IS(p, 1, 2));

    /* A reassignment from {1,2,3} to {2,3} ends once 3 is in sync: 1 leaves and, being the
     * leader, hands over. */
    struct meta_record r = {.type = META_REC_PARTITION_CHANGE};
    const int32_t removing[] = {1};
    p = part(&f, 1, 0);
    make_id(r.u.partition.topic_id, 1);
    r.u.partition.partition = 0;
    r.u.partition.leader = 1;
    r.u.partition.leader_epoch = p->leader_epoch;
    r.u.partition.partition_epoch = p->partition_epoch + 1;
    r.u.partition.n_replicas = 3;
    r.u.partition.replicas = r123;
    r.u.partition.n_isr = 2;
    r.u.partition.isr = r12;
    r.u.partition.n_removing = 1;
    r.u.partition.removing = removing;
    CHECK_EQ_INT(apply_recs(f.img, &r, 1), 0);
    p = part(&f, 1, 0);
    a = (struct ctl_alter_partition){.broker_id = 1,
                                     .broker_epoch = -1,
                                     .partition = 0,
                                     .leader_epoch = p->leader_epoch,
                                     .partition_epoch = p->partition_epoch,
                                     .n_isr = 3,
                                     .isr = r123};
    make_id(a.topic_id, 1);
    /* Broker 1 is shutting down, so the handover would happen anyway; the reassignment's
     * end is what takes it out of the replicas. */
    CHECK_EQ_INT(ctl_sm_alter_partition(f.c, f.img, &a, &f.out), ERR_NEW_LEADER_ELECTED);
    CHECK_EQ_INT(apply_out(&f), 0);
    p = part(&f, 1, 0);
    CHECK_EQ_INT(p->leader, 2);
    CHECK_EQ_INT(p->n_replicas, 2);
    CHECK(ISR_IS(p, 2, 3));
    CHECK_EQ_INT(p->n_removing, 0);
    cfx_fini(&f);
}

/* Two decisions taken on one image: the first batch applies, the second is refused whole by
 * the image's compare-and-set, and decided again on the new image it applies. */
TEST(ctl_two_decisions_on_one_state_second_refused)
{
    struct cfx f;
    struct ctl_out second;
    struct ctl_alter_partition a;
    struct ctl_heartbeat_answer ans;
    REQUIRE(cfx_init(&f, NULL));
    three_brokers(&f);
    ctl_out_init(&second);
    /* The leader drops 3 from p0's ISR; meanwhile 2 asks for a controlled shutdown. */
    a = (struct ctl_alter_partition){
        .broker_id = 1, .broker_epoch = f.epoch[1], .n_isr = 2, .isr = r12};
    make_id(a.topic_id, 1);
    CHECK_EQ_INT(ctl_sm_alter_partition(f.c, f.img, &a, &f.out), 0);
    struct ctl_heartbeat hb = {.broker_id = 2,
                               .broker_epoch = f.epoch[2],
                               .metadata_offset = meta_image_offset(f.img),
                               .want_shutdown = true};
    CHECK_EQ_INT(ctl_sm_heartbeat(f.c, f.img, &hb, f.now, &second, &ans), 0);
    CHECK(find_rec(&second, META_REC_PARTITION_CHANGE, 1, 0) != NULL);
    CHECK_EQ_INT(apply_out(&f), 0);
    CHECK_EQ_INT(apply_recs(f.img, second.recs, second.n), ERR_INVALID_UPDATE_VERSION);
    /* Nothing of the refused batch applied, its broker change included. */
    CHECK(ISR_IS(part(&f, 1, 0), 1, 2));
    CHECK(!meta_image_broker_by_id(f.img, 2)->shutting_down);
    /* Decided again on the new image. */
    CHECK_EQ_INT(heartbeat(&f, 2, false, true, &ans), 0);
    CHECK_EQ_INT(apply_out(&f), 0);
    CHECK(meta_image_broker_by_id(f.img, 2)->shutting_down);
    CHECK(ISR_IS(part(&f, 1, 0), 1));
    ctl_out_free(&second);
    cfx_fini(&f);
}

/* ---- controlled shutdown ----------------------------------------------------------------- */

TEST(ctl_controlled_shutdown_moves_leaders_then_allows_shutdown)
{
    struct cfx f;
    struct ctl_heartbeat_answer ans;
    const struct meta_partition *p;
    REQUIRE(cfx_init(&f, NULL));
    three_brokers(&f);

    CHECK_EQ_INT(heartbeat(&f, 1, false, true, &ans), 0);
    CHECK(!ans.should_shutdown);
    CHECK(!ans.is_fenced);
    REQUIRE(f.out.n == 3); /* the mark, p0 (leader moves), p2 (ISR); p1 stays with 1 */
    CHECK_EQ_INT(f.out.recs[0].type, META_REC_BROKER_CHANGE);
    CHECK_EQ_INT(f.out.recs[0].u.broker_change.shutting_down, 1);
    CHECK_EQ_INT(apply_out(&f), 0);
    CHECK(meta_image_broker_by_id(f.img, 1)->shutting_down);
    p = part(&f, 1, 0);
    CHECK_EQ_INT(p->leader, 2);
    CHECK_EQ_INT(p->leader_epoch, 1);
    CHECK(ISR_IS(p, 2, 3));
    CHECK(ISR_IS(part(&f, 1, 2), 2));
    CHECK_EQ_INT(part(&f, 1, 2)->leader_epoch, 0);
    /* p1 has no one else in sync: 1 keeps serving it until it may stop. */
    CHECK_EQ_INT(part(&f, 1, 1)->leader, 1);
    /* Meanwhile a partition appears that 1 leads (placed by someone who did not know). */
    add_partition(&f, 1, 3, 1, r12, 2, r12, 2);
    f.now += 100;
    CHECK_EQ_INT(heartbeat(&f, 1, false, true, &ans), 0);
    CHECK(!ans.should_shutdown);
    REQUIRE(f.out.n == 1);
    CHECK_EQ_INT(apply_out(&f), 0);
    CHECK_EQ_INT(part(&f, 1, 3)->leader, 2);
    CHECK(ISR_IS(part(&f, 1, 3), 2));

    /* Next heartbeat: nothing can move any more, so it may shut down, and is fenced (p1 goes
     * offline: unclean election is off). */
    f.now += 100;
    CHECK_EQ_INT(heartbeat(&f, 1, false, true, &ans), 0);
    CHECK(ans.should_shutdown);
    CHECK(ans.is_fenced);
    CHECK_EQ_INT(apply_out(&f), 0);
    CHECK(meta_image_broker_by_id(f.img, 1)->fenced);
    p = part(&f, 1, 1);
    CHECK_EQ_INT(p->leader, -1);
    CHECK(ISR_IS(p, 1));
    /* And stays answered so. */
    CHECK_EQ_INT(heartbeat(&f, 1, false, true, &ans), 0);
    CHECK(ans.should_shutdown);
    CHECK_EQ_INT(f.out.n, 0);
    /* Nor can it rejoin an ISR. */
    struct ctl_alter_partition a = {.broker_id = 2,
                                    .broker_epoch = f.epoch[2],
                                    .partition = 2,
                                    .leader_epoch = part(&f, 1, 2)->leader_epoch,
                                    .partition_epoch = part(&f, 1, 2)->partition_epoch,
                                    .n_isr = 2,
                                    .isr = r21};
    make_id(a.topic_id, 1);
    CHECK_EQ_INT(ctl_sm_alter_partition(f.c, f.img, &a, &f.out), ERR_INELIGIBLE_REPLICA);
    cfx_fini(&f);
}

/* Two brokers shutting down at once: the second to leave a partition both are in keeps it
 * (and its ISR place) rather than taking it offline while both still serve. */
TEST(ctl_controlled_shutdown_of_two_keeps_the_partition_led)
{
    struct cfx f;
    struct ctl_heartbeat_answer ans;
    struct meta_record r = {.type = META_REC_BROKER_CHANGE};
    const struct meta_partition *p;
    REQUIRE(cfx_init(&f, NULL));
    join(&f, 1, NULL);
    join(&f, 2, NULL);
    add_topic(&f, "t", 1);
    add_partition(&f, 1, 0, 1, r12, 2, r12, 2);
    /* Broker 2 marked shutting down while still in the ISR (as a record would leave it). */
    r.u.broker_change.id = 2;
    r.u.broker_change.epoch = f.epoch[2];
    r.u.broker_change.fenced = -1;
    r.u.broker_change.shutting_down = 1;
    CHECK_EQ_INT(apply_recs(f.img, &r, 1), 0);
    CHECK_EQ_INT(heartbeat(&f, 1, false, true, &ans), 0);
    CHECK(!ans.should_shutdown);
    CHECK_EQ_INT(apply_out(&f), 0);
    p = part(&f, 1, 0);
    CHECK_EQ_INT(p->leader, 1);
    CHECK(has_member(p, 1));
    cfx_fini(&f);
}

/* ---- preferred leaders --------------------------------------------------------------------- */

TEST(ctl_preferred_rebalance_bounded_and_waits_a_session)
{
    enum { P = 5 };
    struct ctl_config cfg = default_cfg;
    struct cfx f;
    const int32_t both[] = {1, 2};
    int moved = 0;
    cfg.leader_imbalance_interval_ms = 1000;
    cfg.rebalance_batch = 2;
    REQUIRE(cfx_init(&f, &cfg));
    join(&f, 1, NULL); /* unfenced at 0 */
    join(&f, 2, NULL);
    add_topic(&f, "t", 1);
    for (int i = 0; i < P; i++)
        add_partition(&f, 1, i, 2, r12, 2, r12, 2); /* preferred leader 1, led by 2 */

    /* Each interval a round runs, but broker 1 has not been unfenced a session long. */
    for (f.now = 1000; f.now < SESSION; f.now += 1000) {
        keep_alive(&f, both, 2);
        ctl_sm_tick(f.c, f.img, f.now, &f.out);
        CHECK_EQ_INT(f.out.n, 0);
        CHECK_EQ_INT(ctl_sm_next_deadline(f.c, f.now), f.now + 1000);
    }
    /* Now it has: at most two per tick, the next tick at once while more remain. */
    keep_alive(&f, both, 2);
    for (int tick = 0; tick < 3; tick++) {
        ctl_sm_tick(f.c, f.img, f.now, &f.out);
        CHECK_EQ_INT(f.out.n, tick < 2 ? 2 : 1);
        for (size_t i = 0; i < f.out.n; i++) {
            CHECK_EQ_INT(f.out.recs[i].u.partition.leader, 1);
            CHECK_EQ_INT(f.out.recs[i].u.partition.leader_epoch, 1);
        }
        moved += (int)f.out.n;
        CHECK_EQ_INT(apply_out(&f), 0);
        CHECK_EQ_INT(ctl_sm_next_deadline(f.c, f.now), tick < 2 ? f.now : f.now + 1000);
    }
    CHECK_EQ_INT(moved, P);
    for (int i = 0; i < P; i++)
        CHECK_EQ_INT(part(&f, 1, i)->leader, 1);
    ctl_sm_tick(f.c, f.img, f.now, &f.out);
    CHECK_EQ_INT(f.out.n, 0);
    cfx_fini(&f);

    /* With auto.leader.rebalance.enable off, never. */
    cfg.auto_leader_rebalance = false;
    REQUIRE(cfx_init(&f, &cfg));
    join(&f, 1, NULL);
    join(&f, 2, NULL);
    add_topic(&f, "t", 1);
    add_partition(&f, 1, 0, 2, r12, 2, r12, 2);
    f.now = 2 * SESSION;
    keep_alive(&f, both, 2);
    ctl_sm_tick(f.c, f.img, f.now, &f.out);
    CHECK_EQ_INT(f.out.n, 0);
    cfx_fini(&f);
}

/* ---- ElectLeaders ------------------------------------------------------------------------ */

TEST(ctl_elect_leaders_preferred_and_unclean)
{
    struct cfx f;
    uint8_t tid[16], nope[16];
    const struct meta_partition *p;
    static const int32_t r31[] = {3, 1}, r14[] = {1, 4}, r4[] = {4};
    REQUIRE(cfx_init(&f, NULL));
    join(&f, 1, NULL);
    join(&f, 2, NULL);
    join(&f, 3, NULL);
    do_register(&f, 4, 0x44, NULL); /* registered, fenced */
    add_topic(&f, "e", 1);
    add_partition(&f, 1, 0, 2, r123, 3, r123, 3);
    add_partition(&f, 1, 1, 1, r31, 2, r1, 1);
    add_partition(&f, 1, 2, -1, r14, 2, r4, 1);
    add_partition(&f, 1, 3, -1, r4, 1, r4, 1);
    make_id(tid, 1);
    make_id(nope, 9);

    CHECK_EQ_INT(ctl_sm_elect(f.c, f.img, nope, 0, false, &f.out), ERR_UNKNOWN_TOPIC_OR_PARTITION);
    CHECK_EQ_INT(ctl_sm_elect(f.c, f.img, tid, 4, false, &f.out), ERR_UNKNOWN_TOPIC_OR_PARTITION);
    /* Preferred: to the first replica, at a new leader epoch; then not needed. */
    CHECK_EQ_INT(ctl_sm_elect(f.c, f.img, tid, 0, false, &f.out), 0);
    REQUIRE(f.out.n == 1);
    CHECK_EQ_INT(apply_out(&f), 0);
    p = part(&f, 1, 0);
    CHECK_EQ_INT(p->leader, 1);
    CHECK_EQ_INT(p->leader_epoch, 1);
    CHECK(ISR_IS(p, 1, 2, 3));
    CHECK_EQ_INT(ctl_sm_elect(f.c, f.img, tid, 0, false, &f.out), ERR_ELECTION_NOT_NEEDED);
    /* The preferred replica out of the ISR. */
    CHECK_EQ_INT(ctl_sm_elect(f.c, f.img, tid, 1, false, &f.out),
                 ERR_PREFERRED_LEADER_NOT_AVAILABLE);
    /* Unclean: not for a partition with a leader; any eligible replica otherwise. */
    CHECK_EQ_INT(ctl_sm_elect(f.c, f.img, tid, 0, true, &f.out), ERR_ELECTION_NOT_NEEDED);
    CHECK_EQ_INT(ctl_sm_elect(f.c, f.img, tid, 3, true, &f.out),
                 ERR_ELIGIBLE_LEADERS_NOT_AVAILABLE);
    CHECK_EQ_INT(f.out.n, 0);
    CHECK_EQ_INT(ctl_sm_elect(f.c, f.img, tid, 2, true, &f.out), 0);
    CHECK_EQ_INT(apply_out(&f), 0);
    p = part(&f, 1, 2);
    CHECK_EQ_INT(p->leader, 1);
    CHECK_EQ_INT(p->leader_epoch, 1);
    CHECK(ISR_IS(p, 1));
    CHECK_EQ_INT(p->leader_recovery_state, 1);
    cfx_fini(&f);
}

/* ---- eligible leader replicas (KIP-966) ------------------------------------------------------ */

#define MIN_ISR "min.insync.replicas"

static bool elr_is(const struct meta_partition *p, const int32_t *v, int32_t n)
{
    return p && p->n_elr == n && (n == 0 || memcmp(p->elr, v, (size_t)n * sizeof *v) == 0);
}

#define ELR_IS(p, ...)                                                                             \
    elr_is(p, (int32_t[]){__VA_ARGS__}, sizeof((int32_t[]){__VA_ARGS__}) / sizeof(int32_t))
#define ELR_EMPTY(p) elr_is(p, NULL, 0)

/* Broker `id` asks to be fenced (WantFence): the decision applied. */
static void fence_one(struct cfx *f, int32_t id)
{
    struct ctl_heartbeat_answer ans;
    CHECK_EQ_INT(heartbeat(f, id, true, false, &ans), 0);
    CHECK(ans.is_fenced);
    CHECK_EQ_INT(apply_out(f), 0);
}

/* A fenced broker's heartbeat, caught up: unfenced, with what it can lead now (applied). */
static void unfence_one(struct cfx *f, int32_t id)
{
    struct ctl_heartbeat_answer ans;
    CHECK_EQ_INT(heartbeat(f, id, false, false, &ans), 0);
    CHECK(!ans.is_fenced);
    CHECK_EQ_INT(apply_out(f), 0);
}

/* A new incarnation of broker `id` registers naming `previous` as PreviousBrokerEpoch
 * (applied); returns the number of records its decision held. */
static size_t reregister(struct cfx *f, int32_t id, uint8_t incarnation, int64_t previous)
{
    struct regbuf b;
    const struct ctl_registration *r = reg_of(&b, id, incarnation, NULL, (uint8_t)id);
    size_t n;
    b.r.previous_broker_epoch = previous;
    CHECK_EQ_INT(ctl_sm_register(f->c, f->img, r, f->now, &f->out), 0);
    n = f->out.n;
    CHECK_EQ_INT(apply_out(f), 0);
    f->epoch[id] = meta_image_broker_by_id(f->img, id)->epoch;
    return n;
}

/* Replicas leave the ISR below min.insync.replicas into the ELR (not at or above it); an
 * election without an eligible ISR member takes the first unfenced ELR member, cleanly, and
 * the ISR member it replaces joins the ELR; an ISR back at the minimum empties it. The
 * minimum comes from the topic, else the cluster-wide default or the controller's config,
 * lowered by a replica's own dynamic value. */
TEST(ctl_elr_joined_below_min_isr_and_elected_from)
{
    for (int variant = 0; variant < 4; variant++) {
        struct ctl_config cfg = default_cfg;
        struct cfx f;
        const struct meta_partition *p;
        cfg.min_insync_replicas = variant >= 2 ? 2 : 1;
        REQUIRE(cfx_init(&f, &cfg));
        join(&f, 1, NULL);
        join(&f, 2, NULL);
        join(&f, 3, NULL);
        add_topic(&f, "t", 1);
        if (variant == 0)
            set_config(&f, 2, "t", MIN_ISR, "2");
        if (variant == 1)
            set_config(&f, 4, "", MIN_ISR, "2");
        if (variant == 3) /* broker 2 (a replica) enforces 1: the HW may move with one */
            set_config(&f, 4, "2", MIN_ISR, "1");
        add_partition(&f, 1, 0, 1, r123, 3, r123, 3);

        /* 3 leaves: the ISR stays at the minimum, the HW moves on without 3. */
        fence_one(&f, 3);
        p = part(&f, 1, 0);
        CHECK(ISR_IS(p, 1, 2));
        CHECK(ELR_EMPTY(p));
        /* 2 leaves: below it; the HW stops, so 2 holds every committed record. */
        fence_one(&f, 2);
        p = part(&f, 1, 0);
        CHECK(ISR_IS(p, 1));
        if (variant == 3) {
            CHECK(ELR_EMPTY(p));
            cfx_fini(&f);
            continue;
        }
        CHECK(ELR_IS(p, 2));
        CHECK_EQ_INT(p->partition_epoch, 2);
        /* 1, the last member, stays; the partition is offline. */
        fence_one(&f, 1);
        p = part(&f, 1, 0);
        CHECK_EQ_INT(p->leader, -1);
        CHECK(ISR_IS(p, 1));
        CHECK(ELR_IS(p, 2));
        /* 3 comes back: not eligible, nothing changes. */
        unfence_one(&f, 3);
        CHECK_EQ_INT(part(&f, 1, 0)->leader, -1);
        CHECK_EQ_INT(part(&f, 1, 0)->partition_epoch, 3);
        /* 2 comes back: elected from the ELR, a clean election; 1 leaves the ISR for it. */
        unfence_one(&f, 2);
        p = part(&f, 1, 0);
        CHECK_EQ_INT(p->leader, 2);
        CHECK_EQ_INT(p->leader_epoch, 2);
        CHECK_EQ_INT(p->leader_recovery_state, 0);
        CHECK(ISR_IS(p, 2));
        CHECK(ELR_IS(p, 1));
        /* 2 takes 3 back in: at the minimum again, nobody outside the ISR is complete. */
        struct ctl_alter_partition a = {.broker_id = 2,
                                        .broker_epoch = f.epoch[2],
                                        .partition = 0,
                                        .leader_epoch = p->leader_epoch,
                                        .partition_epoch = p->partition_epoch,
                                        .n_isr = 2,
                                        .isr = (const int32_t[]){2, 3}};
        make_id(a.topic_id, 1);
        CHECK_EQ_INT(ctl_sm_alter_partition(f.c, f.img, &a, &f.out), 0);
        CHECK_EQ_INT(apply_out(&f), 0);
        p = part(&f, 1, 0);
        CHECK(ISR_IS(p, 2, 3));
        CHECK(ELR_EMPTY(p));
        /* A shrink back below it: the member the leader drops joins the ELR. */
        a.partition_epoch = p->partition_epoch;
        a.n_isr = 1;
        CHECK_EQ_INT(ctl_sm_alter_partition(f.c, f.img, &a, &f.out), 0);
        CHECK_EQ_INT(apply_out(&f), 0);
        p = part(&f, 1, 0);
        CHECK(ISR_IS(p, 2));
        CHECK(ELR_IS(p, 3));
        /* An ELR member taken back into the ISR leaves the ELR. */
        a.partition_epoch = p->partition_epoch;
        a.isr = (const int32_t[]){2, 3};
        a.n_isr = 2;
        CHECK_EQ_INT(ctl_sm_alter_partition(f.c, f.img, &a, &f.out), 0);
        CHECK_EQ_INT(apply_out(&f), 0);
        CHECK(ELR_EMPTY(part(&f, 1, 0)));
        cfx_fini(&f);
    }
}

/* The fixture's failure class: two ISR members crash, the one that kept its log registers
 * first (naming its last epoch) and leaves the ISR for the ELR; the other registers after
 * an unclean shutdown. Its ISR place is not kept: the partition waits for the ELR member,
 * and the lossy one is not elected even when it is unfenced first. */
TEST(ctl_elr_member_preferred_over_a_lossy_last_isr_member)
{
    struct cfx f;
    const struct meta_partition *p;
    REQUIRE(cfx_init(&f, NULL));
    join(&f, 1, NULL);
    join(&f, 2, NULL);
    join(&f, 3, NULL);
    add_topic(&f, "t", 1);
    set_config(&f, 2, "t", MIN_ISR, "2");
    add_partition(&f, 1, 0, 1, r123, 3, r12, 2);

    /* 1 back in place with its log intact: fenced out of the ISR, into the ELR; 2 (whose
     * session still lives) takes over. */
    reregister(&f, 1, 0x31, f.epoch[1]);
    p = part(&f, 1, 0);
    CHECK(ISR_IS(p, 2));
    CHECK(ELR_IS(p, 1));
    CHECK_EQ_INT(p->leader, 2);
    /* 2 back after an unclean shutdown: the ISR empties, nobody leads. */
    reregister(&f, 2, 0x32, -1);
    p = part(&f, 1, 0);
    CHECK_EQ_INT(p->n_isr, 0);
    CHECK(ELR_IS(p, 1));
    CHECK_EQ_INT(p->leader, -1);
    /* 2 unfenced first: it is in neither set, so nothing changes. */
    struct ctl_heartbeat_answer ans;
    CHECK_EQ_INT(heartbeat(&f, 2, false, false, &ans), 0);
    CHECK(!ans.is_fenced);
    CHECK(find_rec(&f.out, META_REC_PARTITION_CHANGE, 1, 0) == NULL);
    CHECK_EQ_INT(apply_out(&f), 0);
    /* Nor does a tick. */
    ctl_sm_tick(f.c, f.img, f.now, &f.out);
    CHECK(find_rec(&f.out, META_REC_PARTITION_CHANGE, 1, 0) == NULL);
    CHECK_EQ_INT(apply_out(&f), 0);
    /* 1 unfenced: it leads, cleanly, alone in the ISR. */
    unfence_one(&f, 1);
    p = part(&f, 1, 0);
    CHECK_EQ_INT(p->leader, 1);
    CHECK_EQ_INT(p->leader_recovery_state, 0);
    CHECK(ISR_IS(p, 1));
    CHECK(ELR_EMPTY(p));
    cfx_fini(&f);
}

/* A registration after an unclean shutdown (no PreviousBrokerEpoch, or another epoch than
 * the image's) takes the broker out of every ELR; one naming its epoch keeps it there. */
TEST(ctl_elr_left_on_unclean_shutdown_kept_on_a_clean_one)
{
    struct cfx f;
    static const int32_t r12_3[] = {1, 2, 3};
    REQUIRE(cfx_init(&f, NULL));
    join(&f, 1, NULL);
    join(&f, 2, NULL);
    join(&f, 3, NULL);
    add_topic(&f, "t", 1);
    set_config(&f, 2, "t", MIN_ISR, "3");
    add_partition(&f, 1, 0, 1, r12_3, 3, r12_3, 3);
    fence_one(&f, 3);
    fence_one(&f, 2);
    CHECK(ELR_IS(part(&f, 1, 0), 3, 2));
    /* 3 in place, clean: stays. */
    reregister(&f, 3, 0x43, f.epoch[3]);
    CHECK(ELR_IS(part(&f, 1, 0), 3, 2));
    /* 3 again, naming an older epoch: out. */
    int64_t old = f.epoch[3];
    reregister(&f, 3, 0x53, old - 1);
    CHECK(ELR_IS(part(&f, 1, 0), 2));
    /* 2, naming none: out. */
    reregister(&f, 2, 0x42, -1);
    CHECK(ELR_EMPTY(part(&f, 1, 0)));
    CHECK(ISR_IS(part(&f, 1, 0), 1));
    cfx_fini(&f);
}

/* Without an ELR member with a clean record, a lossy last member is elected as before ELR
 * existed (a one-broker cluster after kill -9 or a crash comes back); an empty ISR whose
 * last ELR member registers uncleanly gets it back as its ISR, and it leads. */
TEST(ctl_elr_lossy_last_copy_still_elected)
{
    struct cfx f;
    const struct meta_partition *p;
    REQUIRE(cfx_init(&f, NULL));
    join(&f, 1, NULL);
    join(&f, 2, NULL);
    add_topic(&f, "t", 1);
    add_topic(&f, "u", 2);
    set_config(&f, 2, "u", MIN_ISR, "2");
    add_partition(&f, 1, 0, 1, r1, 1, r1, 1);
    add_partition(&f, 2, 0, 1, r12, 2, r12, 2);

    /* u: 2 leaves below the minimum (ELR {2}); 1 re-registers uncleanly: ISR empty. */
    fence_one(&f, 2);
    CHECK(ELR_IS(part(&f, 2, 0), 2));
    reregister(&f, 1, 0x61, -1);
    /* t: the one replica stays in its ISR; offline while it is fenced. */
    p = part(&f, 1, 0);
    CHECK(ISR_IS(p, 1));
    CHECK_EQ_INT(p->leader, -1);
    p = part(&f, 2, 0);
    CHECK_EQ_INT(p->n_isr, 0);
    CHECK(ELR_IS(p, 2));
    unfence_one(&f, 1);
    CHECK_EQ_INT(part(&f, 1, 0)->leader, 1);
    CHECK_EQ_INT(part(&f, 1, 0)->leader_recovery_state, 0);
    CHECK_EQ_INT(part(&f, 2, 0)->leader, -1); /* u waits for 2 */
    /* u: 2 re-registers uncleanly too: no clean copy is left, 2 is its ISR and leads. */
    reregister(&f, 2, 0x62, -1);
    p = part(&f, 2, 0);
    CHECK(ISR_IS(p, 2));
    CHECK(ELR_EMPTY(p));
    unfence_one(&f, 2);
    p = part(&f, 2, 0);
    CHECK_EQ_INT(p->leader, 2);
    CHECK_EQ_INT(p->leader_recovery_state, 0);
    cfx_fini(&f);
}

/* An unclean election (automatic or ElectLeaders) comes only when no ISR or ELR member is
 * unfenced, and leaves no ELR; ElectLeaders takes an unfenced ELR member first, cleanly. */
TEST(ctl_elr_before_unclean_election_which_empties_it)
{
    for (int via_elect = 0; via_elect < 2; via_elect++) {
        struct ctl_config cfg = default_cfg;
        struct cfx f;
        const struct meta_partition *p;
        uint8_t tid[16];
        cfg.unclean_leader_election = via_elect == 0;
        REQUIRE(cfx_init(&f, &cfg));
        join(&f, 1, NULL);
        join(&f, 2, NULL);
        join(&f, 3, NULL);
        add_topic(&f, "t", 1);
        set_config(&f, 2, "t", MIN_ISR, "2");
        add_partition(&f, 1, 0, 1, r123, 3, r12, 2);
        make_id(tid, 1);
        fence_one(&f, 2);
        CHECK(ELR_IS(part(&f, 1, 0), 2));
        fence_one(&f, 1);
        p = part(&f, 1, 0);
        if (via_elect == 0) {
            /* Unclean election on: with 1 and 2 fenced, 3 leads, RECOVERING, ELR gone. */
            CHECK_EQ_INT(p->leader, 3);
            CHECK_EQ_INT(p->leader_recovery_state, 1);
            CHECK(ISR_IS(p, 3));
            CHECK(ELR_EMPTY(p));
            cfx_fini(&f);
            continue;
        }
        CHECK_EQ_INT(p->leader, -1);
        CHECK(ISR_IS(p, 1));
        CHECK(ELR_IS(p, 2));
        /* 2 unfenced behind the controller's back (as an older controller's record would
         * leave it): ElectLeaders unclean takes it, cleanly; 1 leaves the ISR for the ELR. */
        struct meta_record r = {.type = META_REC_BROKER_CHANGE};
        r.u.broker_change.id = 2;
        r.u.broker_change.epoch = f.epoch[2];
        r.u.broker_change.fenced = 0;
        r.u.broker_change.shutting_down = -1;
        CHECK_EQ_INT(apply_recs(f.img, &r, 1), 0);
        CHECK_EQ_INT(ctl_sm_elect(f.c, f.img, tid, 0, true, &f.out), 0);
        CHECK_EQ_INT(apply_out(&f), 0);
        p = part(&f, 1, 0);
        CHECK_EQ_INT(p->leader, 2);
        CHECK_EQ_INT(p->leader_recovery_state, 0);
        CHECK(ISR_IS(p, 2));
        CHECK(ELR_IS(p, 1));
        /* 2 fenced again: with no ISR or ELR member unfenced, an unclean election of 3. */
        fence_one(&f, 2);
        CHECK_EQ_INT(part(&f, 1, 0)->leader, -1);
        CHECK_EQ_INT(ctl_sm_elect(f.c, f.img, tid, 0, true, &f.out), 0);
        CHECK_EQ_INT(apply_out(&f), 0);
        p = part(&f, 1, 0);
        CHECK_EQ_INT(p->leader, 3);
        CHECK_EQ_INT(p->leader_recovery_state, 1);
        CHECK(ISR_IS(p, 3));
        CHECK(ELR_EMPTY(p));
        cfx_fini(&f);
    }
}

/* ---- reassignment (KIP-455) ------------------------------------------------------------ */

static bool list_is(const int32_t *have, int32_t n_have, const int32_t *v, int32_t n)
{
    return n_have == n && (n == 0 || memcmp(have, v, (size_t)n * sizeof *v) == 0);
}

#define IDS(...)                                                                                   \
    (int32_t[]){__VA_ARGS__}, (int32_t)(sizeof((int32_t[]){__VA_ARGS__}) / sizeof(int32_t))
#define REPLICAS_ARE(p, ...) list_is((p)->replicas, (p)->n_replicas, IDS(__VA_ARGS__))
#define ADDING_ARE(p, ...) list_is((p)->adding, (p)->n_adding, IDS(__VA_ARGS__))
#define REMOVING_ARE(p, ...) list_is((p)->removing, (p)->n_removing, IDS(__VA_ARGS__))

/* Brokers 1..n, topic "t" (id 1) with partition 0 on 1, 2, 3 (leader 1, all in sync). */
static void brokers(struct cfx *f, int32_t n)
{
    static const int32_t all[] = {1, 2, 3, 4, 5};
    for (int32_t id = 1; id <= n; id++)
        join(f, id, NULL);
    add_topic(f, "t", 1);
    add_partition(f, 1, 0, 1, r123, 3, r123, 3);
    f->now = 5000;
    keep_alive(f, all, n);
}

static void four_brokers(struct cfx *f)
{
    brokers(f, 4);
}

static char why[512];

/* A reassignment of t-0 (n < 0: cancel), decided and — when 0 — applied. */
static int reassign(struct cfx *f, const int32_t *target, int32_t n)
{
    int rc = ctl_sm_reassign(f->c, f->img, "t", 0, target, n, &f->out, why, sizeof why);
    if (rc == 0)
        CHECK_EQ_INT(apply_out(f), 0);
    else
        CHECK_EQ_INT(f->out.n, 0);
    return rc;
}

/* t-0's leader asks for ISR `isr` at the current epochs; the decision applied. */
static int alter_isr(struct cfx *f, const int32_t *isr, int32_t n)
{
    const struct meta_partition *p = part(f, 1, 0);
    struct ctl_alter_partition a = {.broker_id = p->leader,
                                    .broker_epoch = f->epoch[p->leader],
                                    .leader_epoch = p->leader_epoch,
                                    .partition_epoch = p->partition_epoch,
                                    .n_isr = n,
                                    .isr = isr};
    int rc;
    make_id(a.topic_id, 1);
    rc = ctl_sm_alter_partition(f->c, f->img, &a, &f->out);
    CHECK_EQ_INT(apply_out(f), 0);
    return rc;
}

/* 1,2,3 -> 2,3,4: the replicas grow to the target plus the one leaving, the ISR and leader
 * stay; 4 in sync while 3 is not completes nothing (every target replica must be in sync,
 * Kafka's rule); once 3 is back the AlterPartition ends it: 1 leaves the replicas and the ISR
 * and hands leadership to the first target replica in sync, at a new leader epoch. */
TEST(ctl_reassign_adds_then_removes_and_moves_the_leader)
{
    struct cfx f;
    const struct meta_partition *p;
    static const int32_t target[] = {2, 3, 4};
    REQUIRE(cfx_init(&f, NULL));
    four_brokers(&f);
    CHECK(!ctl_reassigning(part(&f, 1, 0)));
    CHECK_EQ_INT(reassign(&f, target, 3), 0);
    p = part(&f, 1, 0);
    CHECK(ctl_reassigning(p));
    CHECK(REPLICAS_ARE(p, 2, 3, 4, 1));
    CHECK(ADDING_ARE(p, 4));
    CHECK(REMOVING_ARE(p, 1));
    CHECK(ISR_IS(p, 1, 2, 3));
    CHECK_EQ_INT(p->leader, 1);
    CHECK_EQ_INT(p->leader_epoch, 0); /* nothing left the replicas yet */
    CHECK_EQ_INT(p->partition_epoch, 1);

    /* 3 falls behind, 4 catches up: not done, 3 is a target replica. */
    CHECK_EQ_INT(alter_isr(&f, IDS(1, 2)), 0);
    CHECK_EQ_INT(alter_isr(&f, IDS(1, 2, 4)), 0);
    p = part(&f, 1, 0);
    CHECK(REPLICAS_ARE(p, 2, 3, 4, 1));
    CHECK(ISR_IS(p, 1, 2, 4));
    CHECK_EQ_INT(p->leader, 1);
    CHECK_EQ_INT(p->leader_epoch, 0);

    CHECK_EQ_INT(alter_isr(&f, IDS(1, 2, 4, 3)), ERR_NEW_LEADER_ELECTED);
    p = part(&f, 1, 0);
    CHECK(!ctl_reassigning(p));
    CHECK(REPLICAS_ARE(p, 2, 3, 4));
    CHECK(ISR_IS(p, 2, 4, 3));
    CHECK_EQ_INT(p->leader, 2);
    CHECK_EQ_INT(p->leader_epoch, 1);
    CHECK_EQ_INT(p->partition_epoch, 4);
    cfx_fini(&f);
}

/* A leader that stays keeps leading; its epoch still goes up when a replica leaves (the
 * removed replica's fetches are fenced), not when one is only added. */
TEST(ctl_reassign_leader_staying_gets_a_new_epoch_when_a_replica_leaves)
{
    struct cfx f;
    const struct meta_partition *p;
    REQUIRE(cfx_init(&f, NULL));
    four_brokers(&f);
    CHECK_EQ_INT(reassign(&f, IDS(1, 2, 3, 4)), 0); /* RF 3 -> 4 */
    p = part(&f, 1, 0);
    CHECK(ADDING_ARE(p, 4));
    CHECK_EQ_INT(p->n_removing, 0);
    CHECK_EQ_INT(alter_isr(&f, IDS(1, 2, 3, 4)), 0);
    p = part(&f, 1, 0);
    CHECK(!ctl_reassigning(p));
    CHECK(REPLICAS_ARE(p, 1, 2, 3, 4));
    CHECK_EQ_INT(p->leader, 1);
    CHECK_EQ_INT(p->leader_epoch, 0);
    /* RF 4 -> 3 without 3: nothing to add, done in the same decision. */
    CHECK_EQ_INT(reassign(&f, IDS(1, 2, 4)), 0);
    p = part(&f, 1, 0);
    CHECK(!ctl_reassigning(p));
    CHECK(REPLICAS_ARE(p, 1, 2, 4));
    CHECK(ISR_IS(p, 1, 2, 4));
    CHECK_EQ_INT(p->leader, 1);
    CHECK_EQ_INT(p->leader_epoch, 1);
    cfx_fini(&f);
}

/* A reordering or a dropped replica needs no catching up: one record, at once; the leader
 * stays when it may (no preferred election), moves when it was dropped. The current
 * assignment again changes nothing. */
TEST(ctl_reassign_without_new_replicas_completes_at_once)
{
    struct cfx f;
    const struct meta_partition *p;
    REQUIRE(cfx_init(&f, NULL));
    four_brokers(&f);
    CHECK_EQ_INT(reassign(&f, IDS(3, 2, 1)), 0);
    p = part(&f, 1, 0);
    CHECK(!ctl_reassigning(p));
    CHECK(REPLICAS_ARE(p, 3, 2, 1));
    CHECK_EQ_INT(p->leader, 1);
    CHECK_EQ_INT(p->leader_epoch, 0);
    CHECK_EQ_INT(p->partition_epoch, 1);
    CHECK_EQ_INT(reassign(&f, IDS(3, 2, 1)), 0);
    CHECK_EQ_INT(part(&f, 1, 0)->partition_epoch, 1); /* no record */
    CHECK_EQ_INT(reassign(&f, IDS(3, 2)), 0);
    p = part(&f, 1, 0);
    CHECK(REPLICAS_ARE(p, 3, 2));
    CHECK(ISR_IS(p, 2, 3));
    CHECK_EQ_INT(p->leader, 3);
    CHECK_EQ_INT(p->leader_epoch, 1);
    cfx_fini(&f);
}

/* A second target while one is in progress replaces it (Kafka's rule: computed from the
 * replicas as they are): the replica the first was adding is removed again, the one leaving
 * stays removing, and the new target's end is what completes. */
TEST(ctl_reassign_second_target_replaces_the_first)
{
    struct cfx f;
    const struct meta_partition *p;
    REQUIRE(cfx_init(&f, NULL));
    brokers(&f, 5);
    CHECK_EQ_INT(reassign(&f, IDS(2, 3, 4)), 0);
    CHECK_EQ_INT(reassign(&f, IDS(2, 3, 5)), 0);
    p = part(&f, 1, 0);
    CHECK(REPLICAS_ARE(p, 2, 3, 5, 1, 4));
    CHECK(ADDING_ARE(p, 5));
    CHECK(REMOVING_ARE(p, 1, 4));
    CHECK(ISR_IS(p, 1, 2, 3));
    CHECK_EQ_INT(p->leader_epoch, 0);
    /* 4 caught up in between: its being in sync ends nothing any more. */
    CHECK_EQ_INT(alter_isr(&f, IDS(1, 2, 3, 4)), 0);
    CHECK(ctl_reassigning(part(&f, 1, 0)));
    CHECK_EQ_INT(alter_isr(&f, IDS(1, 2, 3, 4, 5)), ERR_NEW_LEADER_ELECTED);
    p = part(&f, 1, 0);
    CHECK(!ctl_reassigning(p));
    CHECK(REPLICAS_ARE(p, 2, 3, 5));
    CHECK(ISR_IS(p, 2, 3, 5));
    CHECK_EQ_INT(p->leader, 2);
    cfx_fini(&f);
}

/* Cancelling takes the added replicas out of the replicas and the ISR (the order is the
 * reassignment's, as in Kafka) and the leader stays; nothing to cancel afterwards. An added
 * replica that led hands back. */
TEST(ctl_reassign_cancel_reverts)
{
    struct cfx f;
    const struct meta_partition *p;
    REQUIRE(cfx_init(&f, NULL));
    four_brokers(&f);
    CHECK_EQ_INT(reassign(&f, NULL, -1), ERR_NO_REASSIGNMENT_IN_PROGRESS);
    CHECK_EQ_INT(reassign(&f, IDS(2, 3, 4)), 0);
    CHECK_EQ_INT(alter_isr(&f, IDS(1, 2, 4)), 0); /* 3 behind, 4 in sync: not done */
    CHECK_EQ_INT(reassign(&f, NULL, -1), 0);
    p = part(&f, 1, 0);
    CHECK(!ctl_reassigning(p));
    CHECK(REPLICAS_ARE(p, 2, 3, 1));
    CHECK(ISR_IS(p, 1, 2));
    CHECK_EQ_INT(p->leader, 1);
    CHECK_EQ_INT(p->leader_epoch, 1); /* 4 left the replicas */
    CHECK_EQ_INT(reassign(&f, NULL, -1), ERR_NO_REASSIGNMENT_IN_PROGRESS);

    /* An added replica leading (1 handed over while in controlled shutdown): back to 2. */
    CHECK_EQ_INT(reassign(&f, IDS(4, 2, 3)), 0);
    CHECK_EQ_INT(alter_isr(&f, IDS(1, 2, 4)), 0);
    {
        uint8_t tid[16];
        make_id(tid, 1);
        CHECK_EQ_INT(ctl_sm_elect(f.c, f.img, tid, 0, false, &f.out), 0); /* 4 preferred */
        CHECK_EQ_INT(apply_out(&f), 0);
    }
    CHECK_EQ_INT(part(&f, 1, 0)->leader, 4);
    CHECK_EQ_INT(reassign(&f, NULL, -1), 0);
    p = part(&f, 1, 0);
    CHECK(REPLICAS_ARE(p, 2, 3, 1));
    CHECK(ISR_IS(p, 1, 2));
    CHECK_EQ_INT(p->leader, 2);
    cfx_fini(&f);
}

/* When only added replicas are in sync, the revert is an unclean election: refused unless
 * the topic allows one; then the first usable original replica leads alone, RECOVERING. */
TEST(ctl_reassign_cancel_needing_an_unclean_election)
{
    struct cfx f;
    const struct meta_partition *p;
    REQUIRE(cfx_init(&f, NULL));
    four_brokers(&f);
    CHECK_EQ_INT(reassign(&f, IDS(2, 3, 4)), 0);
    CHECK_EQ_INT(alter_isr(&f, IDS(1, 4)), 0);
    /* The leader leaves the ISR (fenced): 4 alone holds everything committed. */
    fence_one(&f, 1);
    p = part(&f, 1, 0);
    CHECK(ISR_IS(p, 4));
    CHECK_EQ_INT(p->leader, 4);
    CHECK_EQ_INT(reassign(&f, NULL, -1), ERR_INVALID_REPLICA_ASSIGNMENT);
    CHECK(strstr(why, "unclean leader election") != NULL);
    set_config(&f, 2, "t", UNCLEAN, "true");
    CHECK_EQ_INT(reassign(&f, NULL, -1), 0);
    p = part(&f, 1, 0);
    CHECK(REPLICAS_ARE(p, 2, 3, 1));
    CHECK(ISR_IS(p, 2)); /* 1 is fenced: the first usable original replica */
    CHECK_EQ_INT(p->leader, 2);
    CHECK_EQ_INT(p->leader_recovery_state, 1);
    cfx_fini(&f);
}

/* The checks of a target (Kafka's validateManualPartitionAssignment), shared with
 * CreateTopics and CreatePartitions; one request naming a partition twice. */
TEST(ctl_reassign_checks_the_target)
{
    struct cfx f;
    REQUIRE(cfx_init(&f, NULL));
    four_brokers(&f);
    CHECK_EQ_INT(ctl_sm_reassign(f.c, f.img, "nope", 0, r123, 3, &f.out, why, sizeof why),
                 ERR_UNKNOWN_TOPIC_OR_PARTITION);
    CHECK_EQ_INT(ctl_sm_reassign(f.c, f.img, "t", 1, r123, 3, &f.out, why, sizeof why),
                 ERR_UNKNOWN_TOPIC_OR_PARTITION);
    CHECK_EQ_INT(reassign(&f, r123, 0), ERR_INVALID_REPLICA_ASSIGNMENT);
    CHECK(strstr(why, "empty replica list") != NULL);
    CHECK_EQ_INT(reassign(&f, IDS(2, 3, 2)), ERR_INVALID_REPLICA_ASSIGNMENT);
    CHECK(strstr(why, "broker 2 more than once") != NULL);
    CHECK_EQ_INT(reassign(&f, IDS(2, 3, 9)), ERR_INVALID_REPLICA_ASSIGNMENT);
    CHECK(strstr(why, "broker 9, but no such broker is registered") != NULL);
    CHECK_EQ_INT(ctl_check_assignment(f.img, IDS(1, 2), 3, why, sizeof why),
                 ERR_INVALID_REPLICA_ASSIGNMENT);
    CHECK(strstr(why, "with 2 replica(s)") != NULL);
    CHECK_EQ_INT(ctl_check_assignment(f.img, IDS(4, 1, 2), 3, why, sizeof why), 0);
    /* Twice in one request: the second would be refused by the compare-and-set. */
    CHECK_EQ_INT(ctl_sm_reassign(f.c, f.img, "t", 0, IDS(2, 3, 4), &f.out, why, sizeof why), 0);
    CHECK_EQ_INT(ctl_sm_reassign(f.c, f.img, "t", 0, IDS(1, 2, 4), &f.out, why, sizeof why),
                 ERR_INVALID_REQUEST);
    CHECK_EQ_INT(f.out.n, 1);
    CHECK_EQ_INT(apply_out(&f), 0);
    cfx_fini(&f);
}

/* The periodic look ends a reassignment whose ISR already allows it (the AlterPartition that
 * grew it could not: every staying replica was shutting down then), and Tally never ends one
 * into an offline partition. */
TEST(ctl_reassign_completed_by_the_tick_never_into_an_offline_partition)
{
    struct cfx f;
    const struct meta_partition *p;
    struct meta_record r = {.type = META_REC_BROKER_CHANGE};
    REQUIRE(cfx_init(&f, NULL));
    four_brokers(&f);
    /* 2 and 3 marked shutting down without leaving the ISR (as an older controller could
     * leave them): dropping 1 would leave no usable leader, so the reassignment waits. */
    for (int32_t id = 2; id <= 3; id++) {
        r.u.broker_change.id = id;
        r.u.broker_change.epoch = f.epoch[id];
        r.u.broker_change.fenced = -1;
        r.u.broker_change.shutting_down = 1;
        CHECK_EQ_INT(apply_recs(f.img, &r, 1), 0);
    }
    CHECK_EQ_INT(reassign(&f, IDS(2, 3)), 0);
    p = part(&f, 1, 0);
    CHECK(ctl_reassigning(p));
    CHECK(REMOVING_ARE(p, 1));
    CHECK_EQ_INT(p->leader, 1);
    ctl_sm_tick(f.c, f.img, f.now, &f.out);
    CHECK(find_rec(&f.out, META_REC_PARTITION_CHANGE, 1, 0) == NULL);
    ctl_out_reset(&f.out);
    for (int32_t id = 2; id <= 3; id++) {
        r.u.broker_change.id = id;
        r.u.broker_change.epoch = f.epoch[id];
        r.u.broker_change.fenced = -1;
        r.u.broker_change.shutting_down = 0;
        CHECK_EQ_INT(apply_recs(f.img, &r, 1), 0);
    }
    ctl_sm_tick(f.c, f.img, f.now, &f.out);
    REQUIRE(find_rec(&f.out, META_REC_PARTITION_CHANGE, 1, 0) != NULL);
    CHECK_EQ_INT(apply_out(&f), 0);
    p = part(&f, 1, 0);
    CHECK(!ctl_reassigning(p));
    CHECK(REPLICAS_ARE(p, 2, 3));
    CHECK(ISR_IS(p, 2, 3));
    CHECK_EQ_INT(p->leader, 2);
    CHECK_EQ_INT(p->leader_epoch, 1);
    cfx_fini(&f);
}

/* ---- placement ----------------------------------------------------------------------------- */

static int rack_of(struct cfx *f, int32_t id)
{
    const char *r = meta_image_broker_by_id(f->img, id)->rack;
    return r ? r[0] : 0;
}

TEST(ctl_placement_rack_aware)
{
    enum { P = 12, RF = 3 };
    struct cfx f;
    int32_t out[P * RF], leads[8] = {0};
    static const char *racks[] = {NULL, "a", "a", "b", "b", "c", "c"};
    REQUIRE(cfx_init(&f, NULL));
    for (int32_t id = 1; id <= 6; id++)
        join(&f, id, racks[id]);

    CHECK_EQ_INT(ctl_place_replicas(f.img, P, RF, 0, 7, out), 0);
    for (int p = 0; p < P; p++) {
        int32_t *r = &out[p * RF];
        for (int i = 0; i < RF; i++) {
            CHECK(r[i] >= 1 && r[i] <= 6);
            for (int j = 0; j < i; j++) {
                CHECK(r[i] != r[j]);
                CHECK(rack_of(&f, r[i]) != rack_of(&f, r[j])); /* one replica per rack */
            }
        }
        leads[r[0]]++;
    }
    /* Preferred leaders rotate evenly over the brokers. */
    for (int32_t id = 1; id <= 6; id++)
        CHECK_EQ_INT(leads[id], P / 6);
    /* Another seed, another start; the same seed, the same placement. */
    int32_t again[P * RF];
    CHECK_EQ_INT(ctl_place_replicas(f.img, P, RF, 0, 7, again), 0);
    CHECK(memcmp(out, again, sizeof out) == 0);

    CHECK_EQ_INT(ctl_place_replicas(f.img, 1, 7, 0, 0, out), ERR_INVALID_REPLICATION_FACTOR);
    CHECK_EQ_INT(ctl_place_replicas(f.img, 1, 0, 0, 0, out), ERR_INVALID_REPLICATION_FACTOR);
    /* Fenced and shutting-down brokers are not placed on. */
    struct ctl_heartbeat_answer ans;
    CHECK_EQ_INT(heartbeat(&f, 6, true, false, &ans), 0);
    CHECK_EQ_INT(apply_out(&f), 0);
    CHECK_EQ_INT(heartbeat(&f, 5, false, true, &ans), 0); /* leads nothing: fenced too */
    CHECK_EQ_INT(apply_out(&f), 0);
    CHECK_EQ_INT(ctl_place_replicas(f.img, 1, 5, 0, 0, out), ERR_INVALID_REPLICATION_FACTOR);
    CHECK_EQ_INT(ctl_place_replicas(f.img, P, 2, 3, 1, out), 0);
    for (int p = 0; p < P; p++) {
        CHECK(out[2 * p] <= 4 && out[2 * p + 1] <= 4);
        CHECK(rack_of(&f, out[2 * p]) != rack_of(&f, out[2 * p + 1]));
    }
    cfx_fini(&f);

    /* Without racks: distinct replicas, leaders still rotating. */
    REQUIRE(cfx_init(&f, NULL));
    for (int32_t id = 1; id <= 3; id++)
        join(&f, id, NULL);
    memset(leads, 0, sizeof leads);
    CHECK_EQ_INT(ctl_place_replicas(f.img, 6, 2, 0, 3, out), 0);
    for (int p = 0; p < 6; p++) {
        CHECK(out[2 * p] != out[2 * p + 1]);
        leads[out[2 * p]]++;
    }
    for (int32_t id = 1; id <= 3; id++)
        CHECK_EQ_INT(leads[id], 2);
    CHECK_EQ_INT(ctl_place_replicas(f.img, 1, 4, 0, 3, out), ERR_INVALID_REPLICATION_FACTOR);
    cfx_fini(&f);
}

/* ---- sessions ------------------------------------------------------------------------------ */

TEST(ctl_activate_gives_every_broker_a_whole_session)
{
    struct cfx f;
    REQUIRE(cfx_init(&f, NULL));
    join(&f, 1, NULL);
    join(&f, 2, NULL);
    /* A new controller at 50000 cannot know when they were last heard of. */
    ctl_sm_free(f.c);
    f.c = ctl_sm_new(&f.cfg);
    REQUIRE(f.c);
    ctl_sm_activate(f.c, f.img, 50000);
    CHECK(ctl_sm_session_alive(f.c, 1, 50000 + SESSION - 1));
    CHECK_EQ_INT(ctl_sm_next_deadline(f.c, 50000), 50000 + SESSION);
    ctl_sm_tick(f.c, f.img, 50000 + SESSION - 1, &f.out);
    CHECK_EQ_INT(f.out.n, 0);
    f.now = 55000;
    struct ctl_heartbeat_answer ans;
    CHECK_EQ_INT(heartbeat(&f, 2, false, false, &ans), 0);
    ctl_sm_tick(f.c, f.img, 50000 + SESSION, &f.out);
    REQUIRE(f.out.n == 1);
    CHECK_EQ_INT(f.out.recs[0].u.broker_change.id, 1);
    CHECK_EQ_INT(apply_out(&f), 0);
    CHECK_EQ_INT(ctl_sm_next_deadline(f.c, 50000 + SESSION), 55000 + SESSION);
    cfx_fini(&f);
}
