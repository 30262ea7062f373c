/* SPDX-License-Identifier: Apache-2.0 */
/* pool unit tests: the accounting of base/pool.c on a real loop and libuv's real thread pool.
 * Jobs block on a gate, so that the pool's threads are all busy and the rest wait in the
 * queue: queue depth and tasks running are observed while they wait, then every job's wait
 * and run are counted once it ran, and a job cancelled before it started leaves the queue
 * without counting as run. */
#include "harness.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "base/pool.h"

#define N_JOBS 12

struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool open;
    int ran, done, cancelled;
};

struct gated_job {
    struct pool_job job; /* first: the callbacks cast back from it */
    struct gate *g;
};

static void gated_run(uv_work_t *w)
{
    struct gate *g = ((struct gated_job *)w)->g;
    pthread_mutex_lock(&g->mu);
    while (!g->open)
        pthread_cond_wait(&g->cv, &g->mu);
    g->ran++;
    pthread_mutex_unlock(&g->mu);
}

static void gated_done(uv_work_t *w, int status)
{
    struct gate *g = ((struct gated_job *)w)->g;
    if (status == UV_ECANCELED)
        g->cancelled++;
    else
        g->done++;
}

static uint64_t total(const uint64_t *counts)
{
    uint64_t n = 0;
    for (size_t i = 0; i <= POOL_BUCKETS; i++)
        n += counts[i];
    return n;
}

/* The pool's thread count as libuv picks it (UV_THREADPOOL_SIZE, default 4). */
static int64_t pool_threads(void)
{
    const char *env = getenv("UV_THREADPOOL_SIZE");
    long n = env ? strtol(env, NULL, 10) : 4;
    return n < 1 ? 1 : n > 1024 ? 1024 : n;
}

TEST(pool_counts_queue_depth_running_and_each_task)
{
    uv_loop_t loop;
    struct gate g = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    struct gated_job jobs[N_JOBS + 1];
    struct pool_stats before, now;
    int64_t threads = pool_threads();

    REQUIRE(threads < N_JOBS); /* some must wait in the queue */
    REQUIRE(uv_loop_init(&loop) == 0);
    pool_stats(&before);
    for (int i = 0; i <= N_JOBS; i++) {
        jobs[i].g = &g;
        jobs[i].job.work.data = NULL;
        REQUIRE(pool_submit(&loop, &jobs[i].job, gated_run, gated_done) == 0);
    }
    /* Every thread takes a job and blocks on the gate; the others stay queued. Polled, as the
     * threads start at their own pace (bounded: 10 s). */
    for (int tries = 0; tries < 10000; tries++) {
        pool_stats(&now);
        if (now.running - before.running == threads)
            break;
        nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
    }
    CHECK(now.running - before.running == threads);
    CHECK(now.queued - before.queued == N_JOBS + 1 - threads);
    CHECK(now.submitted - before.submitted == N_JOBS + 1);
    CHECK(now.finished == before.finished);
    /* Every started job's wait is counted when it starts; no run is counted yet. */
    CHECK(total(now.wait_counts) - total(before.wait_counts) == (uint64_t)threads);
    CHECK(total(now.run_counts) == total(before.run_counts));

    /* The last job is still queued (threads < N_JOBS): a cancel takes it out of the queue. */
    REQUIRE(uv_cancel((uv_req_t *)&jobs[N_JOBS].job.work) == 0);
    pthread_mutex_lock(&g.mu);
    g.open = true;
    pthread_cond_broadcast(&g.cv);
    pthread_mutex_unlock(&g.mu);
    while (g.done + g.cancelled < N_JOBS + 1)
        uv_run(&loop, UV_RUN_ONCE);
    CHECK(g.done == N_JOBS);
    CHECK(g.ran == N_JOBS);
    CHECK(g.cancelled == 1);
    pool_stats(&now);
    CHECK(now.queued == before.queued);
    CHECK(now.running == before.running);
    CHECK(now.finished - before.finished == N_JOBS);
    CHECK(now.cancelled - before.cancelled == 1);
    CHECK(total(now.wait_counts) - total(before.wait_counts) == N_JOBS);
    CHECK(total(now.run_counts) - total(before.run_counts) == N_JOBS);
    CHECK(now.run_sum_s >= before.run_sum_s && now.wait_sum_s >= before.wait_sum_s);
    REQUIRE(uv_loop_close(&loop) == 0);
}
