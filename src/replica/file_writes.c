/* SPDX-License-Identifier: Apache-2.0 */
/* replica file writes: every small whole file the replica layer keeps — the per-directory
 * checkpoints, each partition's leader-epoch-checkpoint and producer snapshots — is made
 * durable (temp, fsync, rename, fsync of the directory) on libuv's thread pool, so the event
 * loop never waits for these files' writes or fsyncs (it still waits for the disk elsewhere:
 * libraft's term and vote, a Fetch's reads; docs/operations.md, "Threads"). The loop takes
 * a copy of what to write; the pool writes it;
 * the `done` callback runs back on the loop. Producer snapshots are the exception in one
 * step: the loop writes them into the page cache itself (pstate_snapshot_write_nosync) and
 * only their fsyncs run on the pool, because the segments they replace may be deleted right
 * after the roll, and a killed process must not lose both.
 *
 * Writes of one file are serialized: while one is in flight, later ones of the same key wait
 * behind it in submission order, and each carries a newer copy, so the file always ends
 * with the newest state. Writes of different files run in parallel (as many as the pool has
 * threads). In-flight writes are found by a small hash table of their keys. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "base/pool.h"
#include "base/slog.h"
#include "pstate/pstate.h"
#include "replica_int.h"

#define WRITE_BUCKETS 1024

static uint64_t key_hash(const char *key)
{
    uint64_t h = 1469598103934665603ULL;
    for (const char *c = key; *c; c++)
        h = (h ^ (uint8_t)*c) * 1099511628211ULL;
    return h;
}

static void work_run(uv_work_t *work)
{
    struct replica_write *w =
        (struct replica_write *)((char *)work - offsetof(struct replica_write, work));
    w->run(w);
}

static void start(struct replica_write *w);
static void dispatch(struct replica_mgr *rm);

static void work_after(uv_work_t *work, int status)
{
    struct replica_write *w =
        (struct replica_write *)((char *)work - offsetof(struct replica_write, work));
    struct replica_mgr *rm = w->rm;
    struct replica_write **pp = &rm->writes[w->hash % WRITE_BUCKETS];
    struct replica_write *next = w->after;

    (void)status; /* a queued write is never cancelled */
    rm->writes_running--;
    while (*pp != w)
        pp = &(*pp)->chain;
    *pp = w->chain;
    if (next) {
        /* The next write of this file takes its place, before `done` may queue another. */
        next->end = w->end;
        next->chain = rm->writes[next->hash % WRITE_BUCKETS];
        rm->writes[next->hash % WRITE_BUCKETS] = next;
        start(next);
    }
    dispatch(rm);
    w->done(w);
    replica_mgr_work_done(rm);
}

/* At most half the pool's threads write these files at a time (thousands may be due at
 * once, e.g. the leader epochs of a 10,000-partition topic just created): the other half
 * stays free for segment flushes, the metadata quorum's writes and cold reads. */
static unsigned max_running(void)
{
    static unsigned max;
    if (max == 0) {
        const char *env = getenv("UV_THREADPOOL_SIZE");
        long n = env ? strtol(env, NULL, 10) : 4;
        max = n >= 4 ? (unsigned)(n / 2) : 1 + (n >= 3);
    }
    return max;
}

static void queue_on_pool(struct replica_write *w)
{
    w->rm->writes_running++;
    w->on_pool = true;
    if (pool_submit(w->rm->loop, &w->work, work_run, work_after) != 0) {
        /* Cannot happen with a valid loop; rather than lose the write, do it here. */
        w->run(w);
        work_after(&w->work.work, 0);
    }
}

static void ready_push(struct replica_write *w)
{
    struct replica_mgr *rm = w->rm;
    struct replica_write **head = w->urgent ? &rm->ready_urgent : &rm->ready_bg;
    struct replica_write **last = w->urgent ? &rm->ready_urgent_last : &rm->ready_bg_last;

    w->ready_next = NULL;
    if (*head == NULL)
        *head = w;
    else
        (*last)->ready_next = w;
    *last = w;
}

static struct replica_write *ready_pop(struct replica_mgr *rm)
{
    bool urgent = rm->ready_urgent != NULL;
    struct replica_write **head = urgent ? &rm->ready_urgent : &rm->ready_bg;
    struct replica_write *w = *head;

    if (w != NULL) {
        *head = w->ready_next;
        if (*head == NULL)
            *(urgent ? &rm->ready_urgent_last : &rm->ready_bg_last) = NULL;
    }
    return w;
}

/* Moves waiting writes onto the pool while there are slots, urgent ones first. */
static void dispatch(struct replica_mgr *rm)
{
    struct replica_write *w;
    while (rm->writes_running < max_running() && (w = ready_pop(rm)) != NULL)
        queue_on_pool(w);
}

/* w heads its key's queue: it runs now, or when a slot frees in order of arrival. */
static void start(struct replica_write *w)
{
    w->on_pool = false;
    ready_push(w);
    dispatch(w->rm);
}

/* An urgent write is queued behind a background one of the same file that still waits for
 * a slot: that one becomes urgent too, or the urgent write would wait for every background
 * write queued before it. */
static void promote(struct replica_write *head)
{
    struct replica_mgr *rm = head->rm;
    struct replica_write **pp = &rm->ready_bg, *prev = NULL;

    if (head->urgent || head->on_pool)
        return;
    while (*pp != head) {
        prev = *pp;
        pp = &(*pp)->ready_next;
    }
    *pp = head->ready_next;
    if (rm->ready_bg_last == head)
        rm->ready_bg_last = prev;
    head->urgent = true;
    ready_push(head);
}

void replica_write_submit(struct replica_mgr *rm, struct replica_write *w, const char *key)
{
    struct replica_write *head;

    if (rm->writes == NULL && (rm->writes = calloc(WRITE_BUCKETS, sizeof *rm->writes)) == NULL) {
        w->rc = ERR_NOMEM;
        w->done(w);
        return;
    }
    snprintf(w->key, sizeof w->key, "%s", key);
    w->hash = key_hash(w->key);
    w->rm = rm;
    w->after = NULL;
    w->end = w;
    w->rc = 0;
    rm->flushes++; /* a stop waits for it like for a flush */
    for (head = rm->writes[w->hash % WRITE_BUCKETS]; head; head = head->chain) {
        if (head->hash == w->hash && strcmp(head->key, w->key) == 0) {
            head->end->after = w;
            head->end = w;
            /* Every write ahead of an urgent one in this file's queue becomes urgent. */
            if (w->urgent) {
                promote(head);
                for (struct replica_write *x = head->after; x != w; x = x->after)
                    x->urgent = true;
            }
            return;
        }
    }
    w->chain = rm->writes[w->hash % WRITE_BUCKETS];
    rm->writes[w->hash % WRITE_BUCKETS] = w;
    start(w);
}

/* ---- leader-epoch-checkpoint -------------------------------------------------------------- */

struct epochs_write {
    struct replica_write w;
    struct partition *p;
    char *buf;
    size_t len;
    char dir[PATH_MAX];
};

/* A partition deleted since the write was queued has had its directory renamed away: there
 * is nothing to write then, and no error to report. (The check narrows the window; a
 * directory removed during the write costs one logged error, and a directory of the same
 * name made for a new topic gets its own, later write of this file.) */
static bool dir_gone(const struct sysio *io, const char *dir)
{
    struct stat st;
    return io->stat(dir, &st) != 0 && errno == ENOENT;
}

static void epochs_run(struct replica_write *w)
{
    struct epochs_write *ew = (struct epochs_write *)w;
    if (!dir_gone(&w->rm->sys, ew->dir))
        w->rc = log_epochs_write(&w->rm->sys, ew->dir, ew->buf, ew->len);
}

static void epochs_done(struct replica_write *w)
{
    struct epochs_write *ew = (struct epochs_write *)w;
    struct partition *p = ew->p;

    /* A failed write is logged by log/; the cache is written again at its next change and
     * at a clean close. A deleted partition's directory is gone: nothing to report. */
    p->epochs_writing = false;
    free(ew->buf);
    free(ew);
    partition_release(p);
}

void replica_write_epochs(struct partition *p)
{
    struct epochs_write *ew;
    char *buf;
    size_t len;

    /* Called for every partition on every tick: nothing is allocated unless the cache
     * changed. */
    if (p->epochs_writing || !p->online || log_epochs_take(p->log, &buf, &len) != 0 || buf == NULL)
        return;
    ew = calloc(1, sizeof *ew);
    if (ew == NULL) {
        free(buf);
        log_epochs_retry(p->log); /* the next call tries again */
        return;
    }
    ew->buf = buf;
    ew->len = len;
    ew->p = p;
    snprintf(ew->dir, sizeof ew->dir, "%s", p->dir);
    ew->w.run = epochs_run;
    ew->w.done = epochs_done;
    p->epochs_writing = true;
    partition_hold(p);
    char key[PATH_MAX + 64];
    snprintf(key, sizeof key, "%s/leader-epoch-checkpoint", p->dir);
    replica_write_submit(p->rm, &ew->w, key);
}

/* ---- producer snapshots --------------------------------------------------------------------- */

struct snapshot_sync {
    struct replica_write w;
    struct partition *p;
    int64_t offset;
    char dir[PATH_MAX];
};

static void snapshot_run(struct replica_write *w)
{
    struct snapshot_sync *ss = (struct snapshot_sync *)w;
    if (dir_gone(&w->rm->sys, ss->dir))
        return;
    w->rc = pstate_snapshot_sync(&w->rm->sys, ss->dir, ss->offset);
    pstate_snapshot_prune(&w->rm->sys, ss->dir, 2);
}

static void snapshot_done(struct replica_write *w)
{
    struct snapshot_sync *ss = (struct snapshot_sync *)w;
    struct partition *p = ss->p;

    if (w->rc != 0 && p->online)
        slog_warn("replica", "cannot fsync the producer snapshot of %s-%d at %lld", p->topic,
                  p->index, (long long)ss->offset);
    free(ss);
    partition_release(p);
}

void replica_write_snapshot(struct partition *p, int64_t offset)
{
    struct snapshot_sync *ss;
    char key[PATH_MAX + 64];

    /* Into the page cache now, so that a killed process keeps it (the segments it stands
     * for may be deleted soon after); made durable on the pool. */
    if (pstate_snapshot_write_nosync(p->pstate, &p->rm->sys, p->dir, offset) != 0) {
        slog_warn("replica", "cannot write the producer snapshot of %s-%d (see above)", p->topic,
                  p->index);
        return;
    }
    ss = calloc(1, sizeof *ss);
    if (ss == NULL)
        return; /* made durable by the next snapshot's sync, or the next clean stop */
    ss->p = p;
    ss->offset = offset;
    snprintf(ss->dir, sizeof ss->dir, "%s", p->dir);
    ss->w.run = snapshot_run;
    ss->w.done = snapshot_done;
    partition_hold(p);
    /* One key per directory: a sync and the pruning after it must not overlap another. */
    snprintf(key, sizeof key, "%s/*.snapshot", p->dir);
    replica_write_submit(p->rm, &ss->w, key);
}

/* ---- checkpoint files --------------------------------------------------------------------- */

struct checkpoint_write {
    struct replica_write w;
    struct log_checkpoint_entry *e;
    size_t n;
    char path[PATH_MAX + 64];
};

static void checkpoint_run(struct replica_write *w)
{
    struct checkpoint_write *cw = (struct checkpoint_write *)w;
    w->rc = log_checkpoint_write(&w->rm->sys, cw->path, cw->e, cw->n);
}

static void checkpoint_done(struct replica_write *w)
{
    struct checkpoint_write *cw = (struct checkpoint_write *)w;
    if (w->rc != 0)
        slog_error("replica", "cannot write %s: %s", cw->path, err_name(w->rc));
    free(cw->e);
    free(cw);
}

void replica_write_checkpoint(struct replica_mgr *rm, const char *path,
                              struct log_checkpoint_entry *e, size_t n)
{
    struct checkpoint_write *cw = calloc(1, sizeof *cw);
    if (cw == NULL) {
        free(e);
        return; /* written again at the next interval */
    }
    cw->e = e;
    cw->n = n;
    snprintf(cw->path, sizeof cw->path, "%s", path);
    cw->w.run = checkpoint_run;
    cw->w.done = checkpoint_done;
    replica_write_submit(rm, &cw->w, path);
}
