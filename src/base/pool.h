/* SPDX-License-Identifier: Apache-2.0 */
/* pool: every task Tally gives libuv's thread pool goes through pool_submit, which counts it:
 * libuv does not expose its queue, so the depth (tasks queued, not started), the tasks running
 * and each task's wait for a thread and run time are kept here, process-wide (libuv has one
 * pool per process), in atomics the pool threads update without waiting for the loop.
 * The exporter reads them (pool_stats) as tally_threadpool_* (docs/metrics.md).
 *
 * Use: embed a struct pool_job where a uv_work_t was, set job.work.data as before, and call
 * pool_submit(loop, &x->job, run, done) where uv_queue_work(loop, &x->w, run, done) was. run
 * and done receive &job->work, as libuv's callbacks do; done runs on the loop with libuv's
 * status (UV_ECANCELED after a uv_cancel(&job->work) that caught it before it started).
 *
 * Each pool thread lowers its own CPU priority by POOL_NICE before its first task: the pool's
 * CPU-heavy work (decompressing a batch for a look-up, recompressing, cleaning a segment,
 * warming a cold range) then yields the CPU to the event loop, which answers every client,
 * whenever both want it; with a CPU to spare nothing changes. Without it, eight pool threads
 * decompressing on two CPUs held the loop off the CPU for up to 100 ms (bench/timers.py,
 * api_versions_during_lookups). */
#ifndef TALLY_BASE_POOL_H
#define TALLY_BASE_POOL_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

/* The nice increment of a pool thread over the process (a weight about a tenth of the loop's
 * under Linux's fair scheduler). */
#define POOL_NICE 10

/* One task. The caller owns it and keeps it alive from pool_submit until `done` has been
 * called (or pool_submit failed). Fields other than work are pool.c's. */
struct pool_job {
    uv_work_t work; /* work.data is the caller's */
    uv_work_cb run;
    uv_after_work_cb done;
    uint64_t queued_ns;  /* uv_hrtime at pool_submit */
    _Atomic int started; /* set by the pool thread; read by done to settle a cancelled job */
};

/* Queues `job` on loop's thread pool: run(&job->work) on a pool thread, then
 * done(&job->work, status) on the loop. Returns 0, or libuv's error from uv_queue_work (then
 * neither callback runs and nothing is counted). Loop thread only. */
int pool_submit(uv_loop_t *loop, struct pool_job *job, uv_work_cb run, uv_after_work_cb done);

/* The time buckets of the wait and run histograms (upper bounds, seconds). */
#define POOL_BUCKETS 16
extern const double pool_bounds[POOL_BUCKETS];

/* A snapshot of the counts since the process started (any thread; each field is read
 * atomically, the set of them is not one instant). */
struct pool_stats {
    int64_t queued;  /* submitted, not started (not cancelled) */
    int64_t running; /* started, run not returned */
    uint64_t submitted, finished, cancelled;
    /* Per bucket, not cumulative; [POOL_BUCKETS] is past every bound. */
    uint64_t wait_counts[POOL_BUCKETS + 1], run_counts[POOL_BUCKETS + 1];
    double wait_sum_s, run_sum_s;
};
void pool_stats(struct pool_stats *out);

#endif
