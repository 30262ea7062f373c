/* SPDX-License-Identifier: Apache-2.0 */
/* replica log starts: makes acknowledged log start offsets durable. DeleteRecords moves a
 * log start offset in memory; before it answers, the log-start-offset-checkpoint holding the
 * new offset must be on disk, or a kill -9 brings the deleted records back. The file is
 * written (temp, fsync, rename, fsync of the directory) on the thread pool, through
 * file_writes.c, which orders it with the periodic checkpoint of the same file. One write of
 * ours is in flight at a time, so waiters that arrive meanwhile share the next write (group
 * commit). */
#include <stdio.h>
#include <stdlib.h>

#include "base/err.h"
#include "base/slog.h"
#include "replica_int.h"

struct starts_work {
    struct replica_write w; /* first: the write is the work */
    struct replica_mgr *rm;
    struct replica_start_sync *waiters; /* answered when this write is done */
    struct log_checkpoint_entry *e;
    size_t n;
    char path[PATH_MAX + 64];
    int rc;
};

/* The log start offset of every hosted partition, as of now. NULL on out of memory. */
static struct log_checkpoint_entry *snapshot_starts(struct replica_mgr *rm, size_t *n)
{
    struct log_checkpoint_entry *e = calloc(rm->count + 1, sizeof *e);
    *n = 0;
    if (e == NULL)
        return NULL;
    for (size_t i = 0; i < rm->n_buckets; i++) {
        for (struct partition *p = rm->buckets[i]; p; p = p->hash_next) {
            snprintf(e[*n].topic, sizeof e[*n].topic, "%s", p->topic);
            e[*n].partition = p->index;
            e[*n].offset = log_start_offset(p->log);
            (*n)++;
        }
    }
    return e;
}

static void answer(struct replica_start_sync *w, int rc)
{
    while (w) {
        struct replica_start_sync *next = w->next;
        w->next = NULL;
        w->cb(w, rc);
        w = next;
    }
}

static void starts_run(struct replica_write *req)
{
    struct starts_work *sw = (struct starts_work *)req;
    sw->rc = log_checkpoint_write(&sw->rm->sys, sw->path, sw->e, sw->n);
}

static void start_write(struct replica_mgr *rm);
static void write_now(struct replica_mgr *rm, struct replica_start_sync *waiters);

static void starts_after(struct replica_write *req)
{
    struct starts_work *sw = (struct starts_work *)req;
    struct replica_mgr *rm = sw->rm;
    int rc = req->rc != 0 ? req->rc : sw->rc;

    if (rc != 0)
        slog_error("replica", "cannot write %s: %s", sw->path, err_name(rc));
    rm->starts_busy = false;
    answer(sw->waiters, rc);
    free(sw->e);
    free(sw);
    /* A stop waits for this write too (file_writes.c counts it). */
    if (rm->starts_waiting)
        start_write(rm);
}

/* Writes synchronously (on the loop): the fallback without memory for the pool's copy, and
 * for a request arriving once the stop has begun (the broker stops before the replica
 * manager, so none does). */
static void write_now(struct replica_mgr *rm, struct replica_start_sync *waiters)
{
    char path[PATH_MAX + 64];
    size_t n;
    struct log_checkpoint_entry *e = snapshot_starts(rm, &n);
    int rc = ERR_NOMEM;

    snprintf(path, sizeof path, "%s/log-start-offset-checkpoint", rm->dir);
    if (e != NULL)
        rc = log_checkpoint_write(&rm->sys, path, e, n);
    if (rc != 0)
        slog_error("replica", "cannot write %s: %s", path, err_name(rc));
    free(e);
    answer(waiters, rc);
}

static void start_write(struct replica_mgr *rm)
{
    struct starts_work *sw = calloc(1, sizeof *sw);
    struct replica_start_sync *waiters = rm->starts_waiting;

    rm->starts_waiting = NULL;
    if (sw == NULL || (sw->e = snapshot_starts(rm, &sw->n)) == NULL) {
        free(sw);
        write_now(rm, waiters);
        return;
    }
    sw->rm = rm;
    sw->waiters = waiters;
    snprintf(sw->path, sizeof sw->path, "%s/log-start-offset-checkpoint", rm->dir);
    rm->starts_busy = true;
    sw->w.run = starts_run;
    sw->w.done = starts_after;
    sw->w.urgent = true; /* DeleteRecords answers wait for it */
    /* Through file_writes.c, so it is ordered with the periodic checkpoint of this file. */
    replica_write_submit(rm, &sw->w, sw->path);
}

void replica_sync_log_starts(struct replica_mgr *rm, struct replica_start_sync *w)
{
    struct replica_start_sync **tail = &rm->starts_waiting;

    w->next = NULL;
    if (rm->stopping) {
        write_now(rm, w);
        return;
    }
    while (*tail)
        tail = &(*tail)->next;
    *tail = w;
    if (!rm->starts_busy)
        start_write(rm);
}
