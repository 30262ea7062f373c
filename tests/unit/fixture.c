/* SPDX-License-Identifier: Apache-2.0 */
/* Shared unit-test fixtures (fixture.h). */
#include "fixture.h"

#include <arpa/inet.h>
#include <ftw.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "admin/admin.h"
#include "base/props.h"
#include "replica/partition_sm.h"
#include "replica/replica.h"

int fixture_free_port(void)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t sl = sizeof sa;
    int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;
    if (fd < 0)
        return -1;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
        getsockname(fd, (struct sockaddr *)&sa, &sl) == 0)
        port = ntohs(sa.sin_port);
    close(fd);
    return port;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void fixture_rm_tree(const char *dir)
{
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void tick_cb(uv_timer_t *t)
{
    (void)t;
}

bool fixture_run_until(uv_loop_t *loop, const bool *flag, uint64_t ms)
{
    uv_timer_t tick;
    uint64_t deadline;
    uv_update_time(loop);
    deadline = uv_now(loop) + ms;
    uv_timer_init(loop, &tick);
    uv_timer_start(&tick, tick_cb, 5, 5);
    while (!*flag && uv_now(loop) < deadline)
        uv_run(loop, UV_RUN_ONCE);
    uv_close((uv_handle_t *)&tick, NULL);
    uv_run(loop, UV_RUN_NOWAIT);
    return *flag;
}

void fixture_set_flag(void *arg)
{
    *(bool *)arg = true;
}

void fixture_propose_cb(void *arg, int err)
{
    struct fixture_wait *w = arg;
    w->err = err;
    if (++w->count >= w->want)
        w->done = true;
}

static bool ready_flag;
static struct meta *ready_meta;
static void ready_poll(uv_timer_t *t)
{
    (void)t;
    if (ready_meta && meta_ready(ready_meta))
        ready_flag = true;
}

bool fixture_wait_ready(uv_loop_t *loop, struct meta *m, uint64_t ms)
{
    uv_timer_t poll;
    bool ok;
    ready_flag = false;
    ready_meta = m;
    uv_timer_init(loop, &poll);
    uv_timer_start(&poll, ready_poll, 1, 1);
    ok = fixture_run_until(loop, &ready_flag, ms);
    uv_close((uv_handle_t *)&poll, NULL);
    uv_run(loop, UV_RUN_NOWAIT);
    ready_meta = NULL;
    return ok;
}

bool fixture_stop_meta(uv_loop_t *loop, struct meta *m)
{
    bool stopped = false;
    meta_stop(m, fixture_set_flag, &stopped);
    return fixture_run_until(loop, &stopped, 5000);
}

/* ---- a single-voter quorum ----------------------------------------------------------------- */

bool fixture_meta_init(struct fixture_meta *q, const char *tmp_template, const char *sub,
                       meta_apply_cb on_apply, void *arg)
{
    memset(q, 0, sizeof *q);
    snprintf(q->base, sizeof q->base, "%s", tmp_template);
    if (mkdtemp(q->base) == NULL || uv_loop_init(&q->loop) != 0)
        return false;
    q->clock = tclock_real_new(&q->loop);
    if (q->clock == NULL)
        return false;
    if (sub)
        snprintf(q->dir, sizeof q->dir, "%s/%s", q->base, sub);
    else
        snprintf(q->dir, sizeof q->dir, "%s", q->base);
    snprintf(q->listen, sizeof q->listen, "127.0.0.1:%d", fixture_free_port());
    q->voter.id = 1;
    snprintf(q->voter.address, sizeof q->voter.address, "%s", q->listen);
    q->on_apply = on_apply;
    q->on_apply_arg = arg;
    return true;
}

bool fixture_meta_start(struct fixture_meta *q)
{
    struct meta_options o = {.clock = q->clock,
                             .node_id = q->voter.id,
                             .dir = q->dir,
                             .cluster_id = "fixture-cluster",
                             .n_voters = 1,
                             .voters = &q->voter,
                             .listen_address = q->listen,
                             .on_apply = q->on_apply,
                             .on_apply_arg = q->on_apply_arg};
    q->m = NULL;
    if (meta_start(&q->loop, &o, &q->m) != 0)
        return false;
    return fixture_wait_ready(&q->loop, q->m, 3000);
}

bool fixture_meta_open(struct fixture_meta *q, const char *tmp_template, const char *sub,
                       meta_apply_cb on_apply, void *arg)
{
    return fixture_meta_init(q, tmp_template, sub, on_apply, arg) && fixture_meta_start(q);
}

int fixture_meta_propose(struct fixture_meta *q, const struct meta_record *recs, size_t n)
{
    struct fixture_wait w = {0};
    int rc = meta_propose(q->m, recs, n, fixture_propose_cb, &w);
    if (rc != 0)
        return rc;
    if (!fixture_run_until(&q->loop, &w.done, 3000))
        return -9999;
    return w.err;
}

bool fixture_meta_stop(struct fixture_meta *q)
{
    struct meta *m = q->m;
    if (m == NULL)
        return true;
    q->m = NULL;
    return fixture_stop_meta(&q->loop, m);
}

int fixture_meta_fini(struct fixture_meta *q)
{
    int rc;
    tclock_free(q->clock);
    q->clock = NULL;
    rc = uv_loop_close(&q->loop);
    fixture_rm_tree(q->base);
    return rc;
}

int fixture_follower_fetched(struct partition *p, int32_t replica, int64_t offset)
{
    struct psm_fetch f = {.replica_id = replica,
                          .current_leader_epoch = -1,
                          .fetch_offset = offset,
                          .last_fetched_epoch = -1};
    struct psm_fetch_verdict v;
    return partition_follower_fetch(p, &f, &v);
}

struct meta_record fixture_broker_rec(int32_t id, int port)
{
    struct meta_record r = {.type = META_REC_REGISTER_BROKER};
    r.u.broker.id = id;
    r.u.broker.host = "127.0.0.1";
    r.u.broker.port = port;
    return r;
}

bool fixture_coord_open(struct fixture_coord *c, const char *tmp_template, int64_t t0,
                        const char *const *defaults, const char *const *kv)
{
    static const int32_t here[] = {1};
    struct meta_record recs[4] = {fixture_broker_rec(1, 9092),
                                  {.type = META_REC_TOPIC},
                                  {.type = META_REC_PARTITION},
                                  {.type = META_REC_PARTITION}};

    memset(c, 0, sizeof *c);
    if (!fixture_meta_open(&c->q, tmp_template, "meta", NULL, NULL))
        return false;
    snprintf(c->log_dir, sizeof c->log_dir, "%s/logs", c->q.base);
    if (mkdir(c->log_dir, 0755) != 0)
        return false;
    c->props = props_new();
    c->clock = tclock_virtual_new(t0);
    if (c->props == NULL || c->clock == NULL)
        return false;
    for (; defaults && defaults[0]; defaults += 2)
        props_set(c->props, defaults[0], defaults[1]);
    for (; kv && kv[0]; kv += 2)
        props_set(c->props, kv[0], kv[1]);
    recs[1].u.topic.name = "orders";
    recs[1].u.topic.id[0] = 0x0D;
    for (int i = 0; i < 2; i++) {
        struct meta_record *r = &recs[2 + i];
        r->u.partition.topic_id[0] = 0x0D;
        r->u.partition.partition = i;
        r->u.partition.leader = 1;
        r->u.partition.n_replicas = r->u.partition.n_isr = 1;
        r->u.partition.replicas = r->u.partition.isr = here;
    }
    if (fixture_meta_propose(&c->q, recs, 4) != 0)
        return false;
    struct replica_options ro = {.loop = &c->q.loop,
                                 .clock = c->clock,
                                 .meta = c->q.m,
                                 .config = c->props,
                                 .node_id = 1,
                                 .log_dir = c->log_dir};
    struct admin_options ao = {.node_id = 1, .n_voters = 1, .config = c->props};
    if (replica_mgr_start(&ro, &c->rm) != 0)
        return false;
    c->admin = admin_new(c->q.m, &ao);
    return c->admin != NULL;
}

bool fixture_coord_close(struct fixture_coord *c)
{
    bool ok = true, stopped = false;
    if (c->rm) {
        replica_mgr_stop(c->rm, fixture_set_flag, &stopped);
        ok = fixture_run_until(&c->q.loop, &stopped, 5000) && ok;
    }
    admin_free(c->admin);
    ok = fixture_meta_stop(&c->q) && ok;
    ok = fixture_meta_fini(&c->q) == 0 && ok;
    props_free(c->props);
    tclock_free(c->clock);
    return ok;
}
