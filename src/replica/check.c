/* SPDX-License-Identifier: Apache-2.0 */
/* replica check: runs log/check.c's background check of the segment bytes that the opens
 * trusted without reading their CRC (after a clean stop, every segment), one slice at a time
 * on libuv's thread pool, back to back until nothing is left. One slice in flight in the
 * process keeps the check to one pool thread: fsyncs and the other pool work never queue
 * behind more than one slice (at most log_check_slice_bytes read). */
#include <stdlib.h>

#include "base/err.h"
#include "base/pool.h"
#include "base/slog.h"
#include "replica_int.h"

/* After a slice that failed (no descriptor, no memory, a read error), the next waits this
 * long: a housekeeping tick resumes the check. */
#define CHECK_RETRY_MS 1000

struct replica_check {
    struct pool_job w; /* first: the callbacks cast back from it */
    struct replica_mgr *rm;
    struct log_check *job;
};

/* The check's current run (from the first slice after an idle queue to the queue empty), for
 * its one INFO line. Event loop only. */
static struct {
    bool running;
    int64_t start_ms;
    uint64_t bytes0, damaged0, slices;
} run;

static void run_ended(struct replica_mgr *rm)
{
    uint64_t bytes, damaged;

    if (!run.running)
        return;
    run.running = false;
    log_check_totals(&bytes, &damaged);
    slog_info("replica",
              "checked the segment files the start trusted: %.1f MiB in %llu slices, %lld ms; "
              "%llu damaged range(s) quarantined",
              (double)(bytes - run.bytes0) / (1 << 20), (unsigned long long)run.slices,
              (long long)(tclock_mono_ms(rm->clock) - run.start_ms),
              (unsigned long long)(damaged - run.damaged0));
}

static void slice_run(uv_work_t *w)
{
    log_check_run(((struct replica_check *)w)->job);
}

static void slice_after(uv_work_t *w, int status)
{
    struct replica_check *rc = (struct replica_check *)w;
    struct replica_mgr *rm = rc->rm;
    int r = log_check_done(rc->job);

    (void)status; /* a slice that did not run changed nothing: log_check_done knows */
    free(rc);
    rm->check = NULL;
    if (r != 0)
        rm->check_retry_ms = tclock_mono_ms(rm->clock) + CHECK_RETRY_MS;
    else
        replica_check_kick(rm);
    replica_mgr_work_done(rm); /* last: a stop may finish (and free rm) here */
}

void replica_check_kick(struct replica_mgr *rm)
{
    struct replica_check *rc;
    struct log_check *job;
    int r;

    if (rm->check != NULL || rm->stopping)
        return;
    if (!log_check_queued()) {
        run_ended(rm);
        return;
    }
    if (tclock_mono_ms(rm->clock) < rm->check_retry_ms)
        return;
    r = log_check_next(&job);
    if (r != 0) {
        if (r != ERR_NOTFOUND)
            rm->check_retry_ms = tclock_mono_ms(rm->clock) + CHECK_RETRY_MS;
        else
            run_ended(rm);
        return;
    }
    if (!run.running) {
        run.running = true;
        run.start_ms = tclock_mono_ms(rm->clock);
        log_check_totals(&run.bytes0, &run.damaged0);
        run.slices = 0;
    }
    run.slices++;
    rc = calloc(1, sizeof *rc);
    if (rc == NULL) {
        log_check_done(job); /* nothing ran: nothing changes */
        rm->check_retry_ms = tclock_mono_ms(rm->clock) + CHECK_RETRY_MS;
        return;
    }
    rc->rm = rm;
    rc->job = job;
    rm->check = rc;
    rm->flushes++; /* a stop waits for the slice in flight */
    if (pool_submit(rm->loop, &rc->w, slice_run, slice_after) != 0) {
        slog_warn("replica", "cannot queue a file check on the thread pool; retrying later");
        log_check_done(job);
        free(rc);
        rm->check = NULL;
        rm->flushes--;
        rm->check_retry_ms = tclock_mono_ms(rm->clock) + CHECK_RETRY_MS;
    }
}
