/* SPDX-License-Identifier: Apache-2.0 */
/* pool: uv_queue_work with accounting (pool.h). The counters are process-wide atomics with
 * relaxed ordering: each is a count on its own, and the loop reads them only to report. */
#include "base/pool.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/resource.h>
#include <unistd.h>

#define JOB_OF(w) ((struct pool_job *)(void *)((char *)(w)-offsetof(struct pool_job, work)))

const double pool_bounds[POOL_BUCKETS] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                          0.01,   0.025,   0.05,   0.1,   0.25,   0.5,
                                          1,      2.5,     5,      10};

static _Atomic int64_t queued, running;
static _Atomic uint64_t submitted, finished, cancelled;
static _Atomic uint64_t wait_counts[POOL_BUCKETS + 1], run_counts[POOL_BUCKETS + 1];
static _Atomic uint64_t wait_sum_ns, run_sum_ns;

static void observe(_Atomic uint64_t *counts, _Atomic uint64_t *sum, uint64_t ns)
{
    double s = (double)ns / 1e9;
    size_t i = 0;
    while (i < POOL_BUCKETS && s > pool_bounds[i])
        i++;
    atomic_fetch_add_explicit(&counts[i], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(sum, ns, memory_order_relaxed);
}

/* On a pool thread, once per thread (pool.h, POOL_NICE). A failure leaves the thread as it
 * was: the priority is a preference, not a requirement. */
static void lower_this_thread(void)
{
    static _Thread_local bool lowered;
    if (lowered)
        return;
    lowered = true;
    /* The nice value is per thread on Linux: PRIO_PROCESS with a thread id names the thread. */
    id_t tid = (id_t)gettid();
    int now = getpriority(PRIO_PROCESS, tid);
    (void)setpriority(PRIO_PROCESS, tid, now + POOL_NICE);
}

/* On a pool thread. */
static void job_run(uv_work_t *w)
{
    struct pool_job *job = JOB_OF(w);
    lower_this_thread();
    uint64_t t0 = uv_hrtime();
    atomic_store_explicit(&job->started, 1, memory_order_relaxed);
    atomic_fetch_sub_explicit(&queued, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&running, 1, memory_order_relaxed);
    observe(wait_counts, &wait_sum_ns, t0 > job->queued_ns ? t0 - job->queued_ns : 0);
    job->run(w);
    uint64_t t1 = uv_hrtime();
    observe(run_counts, &run_sum_ns, t1 > t0 ? t1 - t0 : 0);
    atomic_fetch_sub_explicit(&running, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&finished, 1, memory_order_relaxed);
}

/* On the loop. */
static void job_done(uv_work_t *w, int status)
{
    struct pool_job *job = JOB_OF(w);
    if (!atomic_load_explicit(&job->started, memory_order_relaxed)) {
        /* Cancelled before a thread took it: it leaves the queue here. */
        atomic_fetch_sub_explicit(&queued, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&cancelled, 1, memory_order_relaxed);
    }
    job->done(w, status);
}

int pool_submit(uv_loop_t *loop, struct pool_job *job, uv_work_cb run, uv_after_work_cb done)
{
    job->run = run;
    job->done = done;
    job->queued_ns = uv_hrtime();
    atomic_store_explicit(&job->started, 0, memory_order_relaxed);
    /* Counted before queuing: a pool thread may start it before uv_queue_work returns. */
    atomic_fetch_add_explicit(&queued, 1, memory_order_relaxed);
    int rc = uv_queue_work(loop, &job->work, job_run, job_done);
    if (rc != 0) {
        atomic_fetch_sub_explicit(&queued, 1, memory_order_relaxed);
        return rc;
    }
    atomic_fetch_add_explicit(&submitted, 1, memory_order_relaxed);
    return 0;
}

void pool_stats(struct pool_stats *o)
{
    o->queued = atomic_load_explicit(&queued, memory_order_relaxed);
    o->running = atomic_load_explicit(&running, memory_order_relaxed);
    o->submitted = atomic_load_explicit(&submitted, memory_order_relaxed);
    o->finished = atomic_load_explicit(&finished, memory_order_relaxed);
    o->cancelled = atomic_load_explicit(&cancelled, memory_order_relaxed);
    for (size_t i = 0; i <= POOL_BUCKETS; i++) {
        o->wait_counts[i] = atomic_load_explicit(&wait_counts[i], memory_order_relaxed);
        o->run_counts[i] = atomic_load_explicit(&run_counts[i], memory_order_relaxed);
    }
    o->wait_sum_s = (double)atomic_load_explicit(&wait_sum_ns, memory_order_relaxed) / 1e9;
    o->run_sum_s = (double)atomic_load_explicit(&run_sum_ns, memory_order_relaxed) / 1e9;
}
