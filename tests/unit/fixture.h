/* SPDX-License-Identifier: Apache-2.0 */
/* Shared unit-test fixtures: a free loopback port, a recursive temporary-directory remover,
 * running a uv loop until a flag or a deadline, and a real single-voter metadata quorum
 * (node id 1) on its own loop in a temporary directory. No TEST()s live here. */
#ifndef TALLY_TEST_FIXTURE_H
#define TALLY_TEST_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "base/tclock.h"
#include "meta/meta.h"

struct props;
struct replica_mgr;
struct admin;

/* A TCP port on 127.0.0.1 that was free a moment ago, or -1. */
int fixture_free_port(void);

/* Removes `dir` and everything below it (best effort). */
void fixture_rm_tree(const char *dir);

/* Runs the loop until *flag or `ms` pass (a ticking timer bounds each UV_RUN_ONCE); returns
 * *flag. */
bool fixture_run_until(uv_loop_t *loop, const bool *flag, uint64_t ms);

/* A done callback for stop functions: sets the bool `arg` points to. */
void fixture_set_flag(void *arg);

/* A meta_propose_cb target: done once `want` verdicts came (the first, with want 0); err is
 * the last verdict. */
struct fixture_wait {
    bool done;
    int err;
    int count, want;
};
void fixture_propose_cb(void *arg, int err);

/* Runs the loop until meta_ready(m) or `ms` pass. */
bool fixture_wait_ready(uv_loop_t *loop, struct meta *m, uint64_t ms);

/* meta_stop(m) and runs the loop until it finished (5 s at most). */
bool fixture_stop_meta(uv_loop_t *loop, struct meta *m);

/* A single-voter quorum, node id 1, on its own loop. */
struct fixture_meta {
    char base[32];   /* the temporary directory, removed by fixture_meta_fini */
    char dir[64];    /* the quorum's directory: base, or base/<sub> */
    char listen[64]; /* 127.0.0.1:<free port> */
    uv_loop_t loop;
    struct tclock *clock; /* the quorum's: real, on `loop` */
    struct meta_voter voter;
    struct meta *m; /* NULL while stopped */
    meta_apply_cb on_apply;
    void *on_apply_arg;
};

/* Makes the temporary directory from `tmp_template` ("/tmp/...-XXXXXX"), inits the loop and
 * picks the listener; the quorum lives in base/<sub> (base itself if sub is NULL) and is not
 * started. on_apply may be NULL. */
bool fixture_meta_init(struct fixture_meta *q, const char *tmp_template, const char *sub,
                       meta_apply_cb on_apply, void *arg);

/* Starts the quorum (again, after a stop: same directory and listener) and waits until it is
 * ready (3 s at most). */
bool fixture_meta_start(struct fixture_meta *q);

/* init + start. */
bool fixture_meta_open(struct fixture_meta *q, const char *tmp_template, const char *sub,
                       meta_apply_cb on_apply, void *arg);

/* Proposes records and runs the loop until they applied; returns the apply verdict, the
 * proposal's own error, or -9999 on a time-out (3 s). */
int fixture_meta_propose(struct fixture_meta *q, const struct meta_record *recs, size_t n);

/* Stops the quorum if it runs and waits for it (m becomes NULL); true if it stopped in time. */
bool fixture_meta_stop(struct fixture_meta *q);

/* Frees the clock, closes the loop (the quorum must be stopped) and removes the temporary
 * directory; returns uv_loop_close's result. */
int fixture_meta_fini(struct fixture_meta *q);

/* A replica's Fetch of partition `p` from `offset` (no epoch checks: CurrentLeaderEpoch and
 * LastFetchedEpoch -1), as the leader's Fetch handler passes it on: returns the verdict's
 * error (0 when the position counted). */
struct partition;
int fixture_follower_fetched(struct partition *p, int32_t replica, int64_t offset);

/* A broker registration record (host 127.0.0.1). */
struct meta_record fixture_broker_rec(int32_t id, int port);

/* What the coordinator tests share: a quorum (fixture_meta) with broker 1 and topic "orders"
 * (2 partitions led by broker 1), a virtual clock at t0, props, a replica manager logging
 * under base/logs and an admin. */
struct fixture_coord {
    struct fixture_meta q;
    struct tclock *clock;
    char log_dir[64];
    struct props *props;
    struct replica_mgr *rm;
    struct admin *admin;
};

/* Zeroes c and opens all of it in a temporary directory from tmp_template; `defaults` then
 * `kv` are config pairs (NULL-terminated, either NULL) set in that order. false on a failure
 * (what opened is left for fixture_coord_close). */
bool fixture_coord_open(struct fixture_coord *c, const char *tmp_template, int64_t t0,
                        const char *const *defaults, const char *const *kv);

/* Stops the replica manager (if started) and the quorum, frees the rest; true if every step
 * succeeded in time. Whatever runs on top (a coordinator) is stopped first by the caller. */
bool fixture_coord_close(struct fixture_coord *c);

#endif
