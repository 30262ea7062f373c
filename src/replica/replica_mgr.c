/* SPDX-License-Identifier: Apache-2.0 */
/* replica manager: the table of hosted partitions, kept in step with the metadata image,
 * and housekeeping — flushes on the thread pool, retention, checkpoints, clean shutdown.
 *
 * Files it owns in the log directory:
 *   recovery-point-offset-checkpoint   offsets below which each partition is fsynced
 *   log-start-offset-checkpoint        each partition's log start offset
 *   cleaner-offset-checkpoint          how far each compacted partition is clean (cleaner.c)
 *   .kafka_cleanshutdown               present only while stopped cleanly; removed at start,
 *                                      so its absence at the next start means a crash
 *   .tally_broker_epoch                the broker epoch of the last registration and the boot
 *                                      it was on (clean_marker.c has both formats) */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"
#include "base/pool.h"
#include "base/slog.h"
#include "base/props.h"
#include "meta/meta.h"
#include "pstate/pstate.h"
#include "replica_int.h"

#define HOUSEKEEPING_MS 200
#define OPEN_RETRY_MS 5000
/* How often every partition's replication state machine looks at its ISR (lag shrinks are
 * decided at this granularity: replica.lag.time.max.ms is tens of seconds). */
#define REPLICATION_TICK_MS 1000

/* ---- the table -------------------------------------------------------------------------- */

static size_t slot(const struct replica_mgr *rm, const char *topic, int32_t index)
{
    uint64_t h = 1469598103934665603ULL;
    for (const char *c = topic; *c; c++)
        h = (h ^ (uint8_t)*c) * 1099511628211ULL;
    h = (h ^ (uint32_t)index) * 1099511628211ULL;
    return (size_t)(h % rm->n_buckets);
}

struct partition *replica_partition(struct replica_mgr *rm, const char *topic, int32_t index)
{
    for (struct partition *p = rm->buckets[slot(rm, topic, index)]; p; p = p->hash_next)
        if (p->index == index && strcmp(p->topic, topic) == 0)
            return p;
    return NULL;
}

struct partition *replica_partition_by_id(struct replica_mgr *rm, const uint8_t topic_id[16],
                                          int32_t index)
{
    const struct meta_topic *t = meta_topic_by_id(rm->meta, topic_id);
    return t ? replica_partition(rm, t->name, index) : NULL;
}

size_t replica_count(const struct replica_mgr *rm)
{
    return rm->count;
}

static bool assigned_here(const struct replica_mgr *rm, const struct meta_partition *mp);
static void open_one(struct replica_mgr *rm, const struct meta_topic *t,
                     const struct meta_partition *mp);

/* True if topic `id` waits in the open queue. */
static bool open_queued(const struct replica_mgr *rm, const uint8_t id[16])
{
    for (const struct replica_open_item *o = rm->open_head; o; o = o->next)
        if (memcmp(o->topic_id, id, 16) == 0)
            return true;
    return false;
}

static int leader_of(struct replica_mgr *rm, const struct meta_topic *t, int32_t index, int unknown,
                     struct partition **out)
{
    struct partition *p;
    *out = NULL;
    if (t == NULL || index < 0 || index >= t->n_partitions)
        return unknown;
    p = replica_partition(rm, t->name, index);
    if (p == NULL && t->partitions[index].leader == rm->node_id &&
        assigned_here(rm, &t->partitions[index]) && open_queued(rm, t->id)) {
        /* Assigned here by a batch just applied and not opened yet: a request for it opens it
         * now (it would have been opened within a few loop turns anyway), rather than turning
         * a client away — an acks=0 producer would lose the batch. */
        open_one(rm, t, &t->partitions[index]);
        p = replica_partition(rm, t->name, index);
    }
    if (p == NULL || partition_role(p) != REPLICA_LEADER || memcmp(p->topic_id, t->id, 16) != 0)
        return ERR_NOT_LEADER_OR_FOLLOWER;
    *out = p;
    return 0;
}

int replica_leader_partition(struct replica_mgr *rm, const char *topic, int32_t index,
                             struct partition **out)
{
    return leader_of(rm, meta_topic_by_name(rm->meta, topic), index, ERR_UNKNOWN_TOPIC_OR_PARTITION,
                     out);
}

int replica_leader_partition_by_id(struct replica_mgr *rm, const uint8_t topic_id[16],
                                   int32_t index, struct partition **out)
{
    return leader_of(rm, meta_topic_by_id(rm->meta, topic_id), index, ERR_UNKNOWN_TOPIC_ID, out);
}

/* ---- leadership events and deferred opens -------------------------------------------------- */

static size_t open_pending(struct replica_mgr *rm, size_t budget);

struct replica_event_item {
    struct replica_event_item *next;
    char *topic;
    uint8_t topic_id[16];
    int32_t partition;
    enum replica_role role;
    int32_t leader_epoch;
};

void replica_mgr_publish(struct replica_mgr *rm, const struct partition *p, enum replica_role role)
{
    struct replica_event_item *e;
    if (rm->n_subs == 0 || rm->stopping)
        return;
    e = calloc(1, sizeof *e);
    if (e == NULL || (e->topic = strdup(p->topic)) == NULL) {
        /* A subscriber that misses an event would serve a stale role: say so loudly. */
        slog_error("replica", "out of memory: leadership event for %s-%d at epoch %d lost",
                   p->topic, p->index, partition_leader_epoch(p));
        free(e);
        return;
    }
    memcpy(e->topic_id, p->topic_id, 16);
    e->partition = p->index;
    e->role = role;
    e->leader_epoch = partition_leader_epoch(p);
    *rm->ev_tail = e;
    rm->ev_tail = &e->next;
    rm->ev_count++;
    replica_mgr_kick(rm);
}

/* Runs once per loop turn while anything is queued: at most REPLICA_OPENS_PER_TURN opens and
 * REPLICA_EVENTS_PER_TURN events, then back to the loop. */
static void on_idle(uv_idle_t *h)
{
    struct replica_mgr *rm = h->data;
    size_t budget = REPLICA_EVENTS_PER_TURN;

    open_pending(rm, REPLICA_OPENS_PER_TURN);
    if (rm->fetch_kick) {
        rm->fetch_kick = false;
        replica_fetcher_kick(rm);
    }
    while (rm->ev_head && budget-- > 0) {
        struct replica_event_item *e = rm->ev_head;
        struct replica_event ev = {.topic = e->topic,
                                   .topic_id = e->topic_id,
                                   .partition = e->partition,
                                   .role = e->role,
                                   .leader_epoch = e->leader_epoch};
        rm->ev_head = e->next;
        if (rm->ev_head == NULL)
            rm->ev_tail = &rm->ev_head;
        rm->ev_count--;
        /* A callback may subscribe or unsubscribe: index, do not cache the count. */
        for (size_t i = 0; i < rm->n_subs; i++) {
            struct replica_sub sub = rm->subs[i];
            sub.cb(sub.arg, &ev);
            if (i < rm->n_subs && (rm->subs[i].cb != sub.cb || rm->subs[i].arg != sub.arg))
                i--;
        }
        free(e->topic);
        free(e);
    }
    if (rm->ev_head == NULL && rm->open_head == NULL && !rm->fetch_kick)
        uv_idle_stop(h);
}

void replica_mgr_kick(struct replica_mgr *rm)
{
    if (rm->ev_idle_open && !rm->stopping)
        uv_idle_start(&rm->ev_idle, on_idle);
}

int replica_subscribe(struct replica_mgr *rm, replica_event_cb cb, void *arg)
{
    struct replica_sub *v;
    for (size_t i = 0; i < rm->n_subs; i++)
        if (rm->subs[i].cb == cb && rm->subs[i].arg == arg)
            return ERR_EXISTS;
    v = realloc(rm->subs, (rm->n_subs + 1) * sizeof *v);
    if (v == NULL)
        return ERR_NOMEM;
    rm->subs = v;
    rm->subs[rm->n_subs].cb = cb;
    rm->subs[rm->n_subs].arg = arg;
    rm->n_subs++;
    return 0;
}

void replica_unsubscribe(struct replica_mgr *rm, replica_event_cb cb, void *arg)
{
    for (size_t i = 0; i < rm->n_subs; i++) {
        if (rm->subs[i].cb == cb && rm->subs[i].arg == arg) {
            memmove(&rm->subs[i], &rm->subs[i + 1], (rm->n_subs - i - 1) * sizeof rm->subs[0]);
            rm->n_subs--;
            return;
        }
    }
}

size_t replica_events_pending(const struct replica_mgr *rm)
{
    return rm->ev_count;
}

static void events_free(struct replica_mgr *rm)
{
    while (rm->ev_head) {
        struct replica_event_item *e = rm->ev_head;
        rm->ev_head = e->next;
        free(e->topic);
        free(e);
    }
    rm->ev_tail = &rm->ev_head;
    rm->ev_count = 0;
    while (rm->open_head) {
        struct replica_open_item *o = rm->open_head;
        rm->open_head = o->next;
        free(o);
    }
    rm->open_tail = &rm->open_head;
    rm->opens_queued = 0;
    free(rm->subs);
    rm->subs = NULL;
    rm->n_subs = 0;
}

static int table_grow(struct replica_mgr *rm)
{
    size_t n = rm->n_buckets ? rm->n_buckets * 2 : 256;
    struct partition **b = calloc(n, sizeof *b);
    if (b == NULL)
        return ERR_NOMEM;
    for (size_t i = 0; i < rm->n_buckets; i++) {
        struct partition *p = rm->buckets[i], *next;
        for (; p; p = next) {
            next = p->hash_next;
            uint64_t h = 1469598103934665603ULL;
            for (const char *c = p->topic; *c; c++)
                h = (h ^ (uint8_t)*c) * 1099511628211ULL;
            h = (h ^ (uint32_t)p->index) * 1099511628211ULL;
            p->hash_next = b[h % n];
            b[h % n] = p;
        }
    }
    free(rm->buckets);
    rm->buckets = b;
    rm->n_buckets = n;
    return 0;
}

static void table_remove(struct replica_mgr *rm, struct partition *p)
{
    struct partition **pp = &rm->buckets[slot(rm, p->topic, p->index)];
    while (*pp && *pp != p)
        pp = &(*pp)->hash_next;
    if (*pp) {
        *pp = p->hash_next;
        rm->count--;
    }
}

static bool assigned_here(const struct replica_mgr *rm, const struct meta_partition *mp)
{
    for (int32_t r = 0; r < mp->n_replicas; r++)
        if (mp->replicas[r] == rm->node_id)
            return true;
    return false;
}

/* True if a partition of topic `name` may have a directory in this log dir: the name is not
 * one the broker uses for itself, cannot leave the log dir, and the directory it maps to is
 * not the metadata log's. */
static bool partition_dir_allowed(const struct replica_mgr *rm, const char *name, int32_t index)
{
    char path[PATH_MAX * 2];
    if (name[0] == '\0' || strcmp(name, ".") == 0 || strcmp(name, "..") == 0 ||
        strchr(name, '/') != NULL || strncmp(name, "__cluster_metadata", 18) == 0)
        return false;
    snprintf(path, sizeof path, "%s/%s-%d", rm->dir, name, index);
    return !meta_dir_holds_log(path);
}

/* Opens partition `mp` of topic `t` (assigned here, not hosted yet) and announces its role. */
static void open_one(struct replica_mgr *rm, const struct meta_topic *t,
                     const struct meta_partition *mp)
{
    struct partition *p;
    if (!partition_dir_allowed(rm, t->name, mp->partition)) {
        slog_error("replica",
                   "topic name %s is reserved or maps onto the metadata log's directory; "
                   "partition %d stays offline and nothing is created or deleted",
                   t->name, mp->partition);
        return;
    }
    if (rm->count + 1 > rm->n_buckets && table_grow(rm) != 0) {
        slog_error("replica", "out of memory opening %s-%d", t->name, mp->partition);
        return;
    }
    int rc = partition_open(rm, t->name, t->id, mp, &p);
    if (rc != 0) {
        /* Thousands may fail together (EMFILE): one line per 10 s, the rest counted. An
         * ERR_IO has had its ERROR line (the file and the reason): this one says what follows. */
        static struct slog_limit open_fail;
        slog_line_limited(&open_fail, 10000, rc == ERR_IO ? SLOG_WARN : SLOG_ERROR, "replica",
                          "cannot open partition %s-%d; it stays offline (retried every "
                          "%d s)",
                          t->name, mp->partition, OPEN_RETRY_MS / 1000);
        rm->open_failed++;
        return;
    }
    size_t s = slot(rm, t->name, mp->partition);
    p->hash_next = rm->buckets[s];
    rm->buckets[s] = p;
    rm->count++;
    /* In the table: now the role, epochs and ISR, with all they set going (the fetcher, an
     * AlterPartition). */
    partition_set_state(p, mp);
    replica_mgr_publish(rm, p, partition_role(p));
}

/* Brings the hosted partitions of topic `t` in line with the image: roles and epochs follow
 * it, partitions no longer assigned here close. Partitions newly assigned here are opened at
 * once when `open_now` (start-up), else queued for open_pending (after the apply). */
static void sync_topic(struct replica_mgr *rm, const struct meta_topic *t, bool open_now);

/* Queues topic `t` for opening its partitions assigned here (one queue entry per topic). */
static void queue_opens(struct replica_mgr *rm, const struct meta_topic *t)
{
    struct replica_open_item *o;
    for (o = rm->open_head; o; o = o->next)
        if (memcmp(o->topic_id, t->id, 16) == 0) {
            o->next_index = 0; /* look at every partition again */
            return;
        }
    o = calloc(1, sizeof *o);
    if (o == NULL) {
        slog_error("replica", "out of memory queueing the partitions of %s to open", t->name);
        rm->open_failed++; /* the retry tick picks them up */
        return;
    }
    memcpy(o->topic_id, t->id, 16);
    *rm->open_tail = o;
    rm->open_tail = &o->next;
    rm->opens_queued++;
    replica_mgr_kick(rm);
}

/* Brings one hosted partition in line with its record; returns true when the partition is
 * assigned here and not hosted yet (to be opened). */
static bool sync_partition(struct replica_mgr *rm, const struct meta_topic *t,
                           const struct meta_partition *mp)
{
    struct partition *p = replica_partition(rm, t->name, mp->partition);
    if (p && memcmp(p->topic_id, t->id, 16) != 0) {
        /* Same name, new topic: the old partition's data is not this topic's. */
        table_remove(rm, p);
        replica_mgr_publish(rm, p, REPLICA_GONE);
        partition_close(p, true);
        p = NULL;
    }
    if (p && !assigned_here(rm, mp)) {
        /* Moved away (a reassignment removed this replica): the copy is no longer part of the
         * partition, and a later assignment back starts from an empty log, as in Kafka. */
        table_remove(rm, p);
        replica_mgr_publish(rm, p, REPLICA_GONE);
        slog_info("replica", "%s-%d is no longer assigned to this broker; deleting its replica",
                  p->topic, p->index);
        partition_close(p, true);
        return false;
    }
    if (p) {
        if (partition_set_state(p, mp))
            replica_mgr_publish(rm, p, partition_role(p));
        return false;
    }
    return assigned_here(rm, mp);
}

static void sync_topic(struct replica_mgr *rm, const struct meta_topic *t, bool open_now)
{
    bool to_open = false;
    for (int32_t i = 0; i < t->n_partitions; i++) {
        const struct meta_partition *mp = &t->partitions[i];
        if (!sync_partition(rm, t, mp))
            continue;
        if (open_now)
            open_one(rm, t, mp);
        else
            to_open = true;
    }
    if (to_open)
        queue_opens(rm, t);
}

/* Opens at most `budget` queued partitions; returns how many it opened (or looked at). */
static size_t open_pending(struct replica_mgr *rm, size_t budget)
{
    size_t done = 0;
    while (rm->open_head && done < budget) {
        struct replica_open_item *o = rm->open_head;
        const struct meta_topic *t = meta_topic_by_id(rm->meta, o->topic_id);
        while (t && o->next_index < t->n_partitions && done < budget) {
            const struct meta_partition *mp = &t->partitions[o->next_index++];
            if (assigned_here(rm, mp) && replica_partition(rm, t->name, mp->partition) == NULL) {
                open_one(rm, t, mp);
                o->opened += replica_partition(rm, t->name, mp->partition) != NULL;
                done++;
            }
        }
        if (t && o->next_index < t->n_partitions)
            break; /* budget spent: the rest next turn */
        if (t && o->opened > 0)
            slog_info("replica", "opened %d new partition%s of topic %s", o->opened,
                      o->opened == 1 ? "" : "s", t->name);
        rm->open_head = o->next;
        if (rm->open_head == NULL)
            rm->open_tail = &rm->open_head;
        rm->opens_queued--;
        free(o);
    }
    return done;
}

size_t replica_opens_pending(const struct replica_mgr *rm)
{
    return rm->opens_queued;
}

/* Closes and deletes every hosted partition of a topic that is gone (by id). */
static void drop_topic_id(struct replica_mgr *rm, const uint8_t id[16])
{
    for (size_t i = 0; i < rm->n_buckets; i++) {
        struct partition *p = rm->buckets[i], *next;
        for (; p; p = next) {
            next = p->hash_next;
            if (memcmp(p->topic_id, id, 16) == 0) {
                table_remove(rm, p);
                replica_mgr_publish(rm, p, REPLICA_GONE);
                slog_info("replica", "deleting partition %s-%d", p->topic, p->index);
                partition_close(p, true);
            }
        }
    }
}

static void refresh_topic_settings(struct replica_mgr *rm, const char *topic)
{
    for (size_t i = 0; i < rm->n_buckets; i++)
        for (struct partition *p = rm->buckets[i]; p; p = p->hash_next)
            if (topic == NULL || strcmp(p->topic, topic) == 0)
                partition_refresh_settings(p);
}

/* Time passed, or the brokers changed: every partition's state machine looks at its ISR
 * (shrinks by lag, AlterPartition retries) and high watermark. */
static void tick_partitions(struct replica_mgr *rm)
{
    int64_t now = tclock_mono_ms(rm->clock);
    for (size_t i = 0; i < rm->n_buckets; i++)
        for (struct partition *p = rm->buckets[i]; p; p = p->hash_next) {
            struct psm_effects fx;
            psm_tick(p->sm, now, &fx);
            partition_effects(p, &fx);
        }
}

/* meta_apply_cb (meta_subscribe): follows every applied batch. Nothing here opens a log;
 * new partitions are queued (open_pending) and leadership events delivered after the apply. */
static void on_meta_apply(void *arg, const struct meta_record *recs, size_t n)
{
    struct replica_mgr *rm = arg;
    bool brokers_changed = false;
    if (rm == NULL || rm->stopping)
        return;
    for (size_t i = 0; i < n; i++) {
        const struct meta_record *r = &recs[i];
        const struct meta_topic *t;
        switch (r->type) {
        case META_REC_TOPIC:
            if ((t = meta_topic_by_name(rm->meta, r->u.topic.name)) != NULL)
                sync_topic(rm, t, false);
            break;
        case META_REC_PARTITION:
        case META_REC_PARTITION_CHANGE:
            /* One partition changed: only it is looked at (a broker's fencing changes
             * thousands in one batch). */
            if ((t = meta_topic_by_id(rm->meta, r->u.partition.topic_id)) != NULL &&
                r->u.partition.partition >= 0 && r->u.partition.partition < t->n_partitions &&
                sync_partition(rm, t, &t->partitions[r->u.partition.partition]))
                queue_opens(rm, t);
            break;
        case META_REC_REGISTER_BROKER:
        case META_REC_REGISTER_BROKER2:
        case META_REC_FENCE_BROKER:
        case META_REC_BROKER_CHANGE:
            /* Which replicas may count in an ISR changed: every led partition looks again
             * at its high watermark and ISR (at most once per batch). */
            brokers_changed = true;
            break;
        case META_REC_REMOVE_TOPIC:
            drop_topic_id(rm, r->u.remove_topic.topic_id);
            break;
        case META_REC_CONFIG:
            refresh_topic_settings(rm, r->u.config.resource_type == 2 ? r->u.config.resource_name
                                                                      : NULL);
            break;
        default:
            break;
        }
    }
    if (brokers_changed)
        tick_partitions(rm);
}

/* ---- flushes ------------------------------------------------------------------------------ */

struct flush_work {
    struct pool_job w; /* first: the callbacks cast back from it */
    struct partition *p;
    int64_t upto;
    int rc;
};

static void flush_run(uv_work_t *w)
{
    struct flush_work *fw = (struct flush_work *)w;
    fw->rc = log_flush_run(fw->p->log, fw->upto);
}

static void maybe_finish_stop(struct replica_mgr *rm);

static void flush_after(uv_work_t *w, int status)
{
    struct flush_work *fw = (struct flush_work *)w;
    struct partition *p = fw->p;
    struct replica_mgr *rm = p->rm;
    (void)status;
    /* Releases the flush's snapshot either way (a failed log refuses the next one). */
    log_flush_done(p->log, fw->upto);
    p->flushing--;
    rm->flushes--;
    if (fw->rc != 0) {
        /* log_flush_run said so in one line; the log refuses writes from now on, as after
         * any storage error, and the produces waiting for this flush learn it
         * (KAFKA_STORAGE_ERROR). */
        purgatory_point_fail(&p->marks[PARTITION_DURABLE]);
    } else {
        /* Group commit: the next round, for what was appended while this one ran, starts
         * before this one's answers go out, so that the disk stays busy. */
        partition_maybe_flush(p, false);
        partition_marks_changed(p); /* PARTITION_DURABLE moved */
        /* A follower held out of its Fetches for this flush asks again (fetcher.c). */
        if (p->fetch_leader >= 0) {
            rm->fetch_kick = true;
            replica_mgr_kick(rm);
        }
    }
    partition_release(p);
    free(fw);
    maybe_finish_stop(rm);
}

void partition_maybe_flush(struct partition *p, bool force)
{
    struct replica_mgr *rm = p->rm;
    struct flush_work *fw;
    if (p->flushing || rm->stopping || !(force || log_flush_due(p->log)))
        return;
    fw = calloc(1, sizeof *fw);
    if (fw == NULL)
        return; /* retried at the next housekeeping tick */
    fw->p = p;
    if (log_flush_prepare(p->log, &fw->upto) != 0) {
        free(fw);
        return;
    }
    partition_hold(p);
    p->flushing++;
    rm->flushes++;
    if (pool_submit(rm->loop, &fw->w, flush_run, flush_after) != 0) {
        p->flushing--;
        rm->flushes--;
        partition_release(p);
        free(fw);
    }
}

/* ---- checkpoints -------------------------------------------------------------------------- */

/* The recovery point, log start and high watermark of each of `n` partitions, in three
 * malloc()ed arrays. ERR_NOMEM (nothing allocated) or 0. */
static int collect_checkpoints(struct partition *const *parts, size_t n,
                               struct log_checkpoint_entry **rec, struct log_checkpoint_entry **st,
                               struct log_checkpoint_entry **hw)
{
    *rec = calloc(n + 1, sizeof **rec);
    *st = calloc(n + 1, sizeof **st);
    *hw = calloc(n + 1, sizeof **hw);
    if (*rec == NULL || *st == NULL || *hw == NULL) {
        free(*rec);
        free(*st);
        free(*hw);
        *rec = *st = *hw = NULL;
        return ERR_NOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        const struct partition *p = parts[i];
        snprintf((*rec)[i].topic, sizeof(*rec)[i].topic, "%s", p->topic);
        snprintf((*st)[i].topic, sizeof(*st)[i].topic, "%s", p->topic);
        snprintf((*hw)[i].topic, sizeof(*hw)[i].topic, "%s", p->topic);
        (*rec)[i].partition = (*st)[i].partition = (*hw)[i].partition = p->index;
        (*rec)[i].offset = log_flushed_offset(p->log);
        (*st)[i].offset = log_start_offset(p->log);
        (*hw)[i].offset = partition_high_watermark(p);
    }
    return 0;
}

/* Every hosted partition, in a malloc()ed array of rm->count. NULL when out of memory. */
static struct partition **hosted(struct replica_mgr *rm)
{
    struct partition **v = calloc(rm->count + 1, sizeof *v);
    size_t n = 0;
    if (v == NULL)
        return NULL;
    for (size_t i = 0; i < rm->n_buckets; i++)
        for (struct partition *p = rm->buckets[i]; p; p = p->hash_next)
            v[n++] = p;
    return v;
}

/* Queues both checkpoint files for writing on the thread pool (file_writes.c keeps them in
 * order with any other write of the same file). */
/* `all`: the recovery points and log starts too (log.flush.offset.checkpoint.interval.ms);
 * otherwise only the high watermarks (replica.high.watermark.checkpoint.interval.ms, Kafka's
 * 5 s: a restarted replica's HW is then at most that stale, which is what tells a truncation
 * below it — records consumers may have read — from one of a diverged tail). */
static void write_checkpoints(struct replica_mgr *rm, bool all)
{
    struct log_checkpoint_entry *rec, *st, *hw;
    struct partition **parts = hosted(rm);
    char path[PATH_MAX + 64];

    if (parts == NULL || collect_checkpoints(parts, rm->count, &rec, &st, &hw) != 0) {
        free(parts);
        return; /* written again at the next interval */
    }
    if (all) {
        snprintf(path, sizeof path, "%s/recovery-point-offset-checkpoint", rm->dir);
        replica_write_checkpoint(rm, path, rec, rm->count);
        snprintf(path, sizeof path, "%s/log-start-offset-checkpoint", rm->dir);
        replica_write_checkpoint(rm, path, st, rm->count);
    } else {
        free(rec);
        free(st);
    }
    snprintf(path, sizeof path, "%s/replication-offset-checkpoint", rm->dir);
    replica_write_checkpoint(rm, path, hw, rm->count);
    free(parts);
}

/* ---- housekeeping ------------------------------------------------------------------------- */

static void on_tick(struct tclock_timer *h)
{
    struct replica_mgr *rm = h->data;
    /* Intervals run on monotonic time; producer expiry compares wall-clock stamps. */
    int64_t now = tclock_mono_ms(rm->clock);
    int64_t retention_every =
        props_get_int(rm->cfg.props, "log.retention.check.interval.ms", 300000, NULL);
    int64_t hw_checkpoint_every =
        props_get_int(rm->cfg.props, "replica.high.watermark.checkpoint.interval.ms", 5000, NULL);
    int64_t checkpoint_every =
        props_get_int(rm->cfg.props, "log.flush.offset.checkpoint.interval.ms", 60000, NULL);
    bool retain = now - rm->last_retention_ms >= retention_every;
    int64_t expire_every =
        props_get_int(rm->cfg.props, "producer.id.expiration.check.interval.ms", 600000, NULL);
    /* Dynamic (IncrementalAlterConfigs on the broker): read where it is used. */
    int64_t expiration = config_broker_int(&rm->cfg, "producer.id.expiration.ms", 86400000);
    bool expire = now - rm->last_expiration_ms >= expire_every;

    for (size_t i = 0; i < rm->n_buckets; i++) {
        for (struct partition *p = rm->buckets[i]; p; p = p->hash_next) {
            /* Sealed segments not yet fsynced (a flush was busy when the log rolled). */
            partition_maybe_flush(p, log_flushed_offset(p->log) < log_active_base(p->log));
            if (expire)
                metrics_add(rm->m_pid_expired,
                            (double)pstate_expire(p->pstate, tclock_now_ms(rm->clock), expiration));
            if (retain && log_retain_below(p->log, partition_last_stable_offset(p)) > 0) {
                slog_info("replica", "retention moved %s-%d's log start to %lld", p->topic,
                          p->index, (long long)log_start_offset(p->log));
                partition_log_moved(p);
            }
            /* Leader epochs changed by an open, an append at a new epoch, retention or
             * DeleteRecords since the last tick. */
            replica_write_epochs(p);
        }
    }
    if (retain)
        rm->last_retention_ms = now;
    if (expire)
        rm->last_expiration_ms = now;
    if (now - rm->last_sm_tick_ms >= REPLICATION_TICK_MS) {
        tick_partitions(rm);
        rm->last_sm_tick_ms = now;
    }
    replica_fetcher_kick(rm);
    replica_cleaner_tick(rm);
    replica_check_kick(rm);
    if (now - rm->last_checkpoint_ms >= checkpoint_every) {
        write_checkpoints(rm, true);
        rm->last_checkpoint_ms = rm->last_hw_checkpoint_ms = now;
    } else if (now - rm->last_hw_checkpoint_ms >= hw_checkpoint_every) {
        write_checkpoints(rm, false);
        rm->last_hw_checkpoint_ms = now;
    }
    if (rm->open_failed > 0 && now - rm->last_open_retry_ms >= OPEN_RETRY_MS) {
        size_t nt;
        const struct meta_topic *const *topics = meta_topics(rm->meta, &nt);
        rm->open_failed = 0;
        rm->last_open_retry_ms = now;
        for (size_t i = 0; i < nt; i++)
            sync_topic(rm, topics[i], false);
    }
}

/* ---- lifecycle ---------------------------------------------------------------------------- */

/* Moves a partition directory aside as "<dir>.<time>-stray" (Kafka's name for a log no
 * metadata claims): it is no longer opened or scanned, and nothing is deleted. */
static void move_stray(struct replica_mgr *rm, const char *path, const char *why)
{
    char aside[PATH_MAX * 2 + 64];
    snprintf(aside, sizeof aside, "%s.%lld-stray", path, (long long)tclock_now_ms(rm->clock));
    if (rm->sys.rename(path, aside) == 0)
        slog_warn("replica", "%s: %s; moved it aside to %s (delete it once it is not needed)", path,
                  why, aside);
    else
        slog_error("replica", "%s: %s; cannot move it aside: %s; leaving it in place", path, why,
                   strerror(errno));
}

/* Finishes deletions cut short by a stop (directories renamed to "…-delete", which only a
 * REMOVE_TOPIC applied from the metadata log does) and moves aside partition directories the
 * metadata does not place here. Those are never deleted: the metadata may be what is wrong. */
static void remove_orphans(struct replica_mgr *rm)
{
    DIR *d = rm->sys.opendir(rm->dir);
    struct dirent *e;
    if (d == NULL)
        return;
    while ((e = rm->sys.readdir(d)) != NULL) {
        char name[256], path[PATH_MAX * 2];
        char *dash;
        if (e->d_name[0] == '.' || (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN) ||
            strncmp(e->d_name, "__cluster_metadata", 18) == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", rm->dir, e->d_name);
        if (meta_dir_holds_log(path))
            continue;
        size_t len = strlen(e->d_name);
        /* A live partition directory ends in its partition number; one renamed away for
         * deletion ends in "-delete" (a topic may well contain "-delete" in its name). */
        if (len > 7 && strcmp(e->d_name + len - 7, "-delete") == 0) {
            partition_remove_dir(&rm->sys, path);
            continue;
        }
        snprintf(name, sizeof name, "%s", e->d_name);
        dash = strrchr(name, '-');
        if (dash == NULL)
            continue;
        *dash = '\0';
        if (dash[1] == '\0' || strspn(dash + 1, "0123456789") != strlen(dash + 1))
            continue; /* not "<topic>-<partition>" */
        if (e->d_type == DT_UNKNOWN) {
            struct stat st;
            if (rm->sys.stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
                continue;
        }
        const struct meta_topic *t = meta_topic_by_name(rm->meta, name);
        int32_t index = atoi(dash + 1);
        if (t == NULL)
            move_stray(rm, path, "no topic of that name in the metadata");
        else if (index >= t->n_partitions || !assigned_here(rm, &t->partitions[index]))
            move_stray(rm, path, "the metadata does not place this partition on this broker");
    }
    rm->sys.closedir(d);
}

/* True if the log dir holds any partition directory (live or being deleted). */
static bool has_partition_dirs(const struct replica_mgr *rm)
{
    DIR *d = rm->sys.opendir(rm->dir);
    struct dirent *e;
    bool any = false;
    if (d == NULL)
        return false;
    while (!any && (e = rm->sys.readdir(d)) != NULL) {
        const char *dash = strrchr(e->d_name, '-');
        char path[PATH_MAX * 2];
        snprintf(path, sizeof path, "%s/%s", rm->dir, e->d_name);
        any = e->d_name[0] != '.' && dash && dash[1] >= '0' && dash[1] <= '9' &&
              strncmp(e->d_name, "__cluster_metadata", 18) != 0 && !meta_dir_holds_log(path);
    }
    rm->sys.closedir(d);
    return any;
}

int replica_mgr_start(const struct replica_options *opts, struct replica_mgr **out)
{
    struct replica_mgr *rm = calloc(1, sizeof *rm);
    char path[PATH_MAX + 64];
    struct stat st;
    size_t nt;
    int rc;

    if (rm == NULL || table_grow(rm) != 0) {
        free(rm);
        return ERR_NOMEM;
    }
    rm->loop = opts->loop;
    rm->clock = opts->clock;
    rm->sys = *sysio_default();
    rm->log_io.sys = &rm->sys;
    rm->log_io.clock = opts->clock;
    rm->meta = opts->meta;
    rm->cfg.meta = opts->meta;
    rm->cfg.props = opts->config;
    rm->cfg.node_id = opts->node_id;
    rm->node_id = opts->node_id;
    snprintf(rm->dir, sizeof rm->dir, "%s", opts->log_dir);
    rm->ev_tail = &rm->ev_head;
    rm->open_tail = &rm->open_head;
    rm->client = opts->client;
    rm->fetch_client = opts->fetch_client;
    /* Kafka's ReplicaManager IsrShrinksPerSec / IsrExpandsPerSec (docs/metrics.md). */
    rm->m_pid_expired = metrics_series0(metrics_family_new(
        opts->metrics, METRICS_COUNTER, "tally_producer_ids_expired_total",
        "Producer ids dropped from partitions' producer states after producer.id.expiration.ms "
        "without a write.",
        0, NULL, 0, NULL));
    rm->m_isr_shrinks = metrics_series0(metrics_family_new(
        opts->metrics, METRICS_COUNTER, "tally_isr_shrinks_total",
        "ISR shrinks this broker proposed as a partition leader (AlterPartition).", 0, NULL, 0,
        NULL));
    rm->m_isr_expands = metrics_series0(metrics_family_new(
        opts->metrics, METRICS_COUNTER, "tally_isr_expands_total",
        "ISR expansions this broker proposed as a partition leader (AlterPartition).", 0, NULL, 0,
        NULL));
    rm->replica_lag_time_max_ms =
        props_get_int(opts->config, "replica.lag.time.max.ms", 30000, NULL);
    rm->alter_retry_ms = 2000;
    rm->fetch_wait_ms =
        (int32_t)props_get_int(opts->config, "replica.fetch.wait.max.ms", 500, NULL);
    rm->fetch_min_bytes = (int32_t)props_get_int(opts->config, "replica.fetch.min.bytes", 1, NULL);
    rm->fetch_max_bytes =
        (int32_t)props_get_int(opts->config, "replica.fetch.max.bytes", 1048576, NULL);
    rm->fetch_response_max_bytes =
        (int32_t)props_get_int(opts->config, "replica.fetch.response.max.bytes", 10485760, NULL);
    rm->fetch_backoff_ms = props_get_int(opts->config, "replica.fetch.backoff.ms", 1000, NULL);
    throttle_meter_init(&rm->leader_quota);
    throttle_meter_init(&rm->follower_quota);

    snprintf(path, sizeof path, "%s/%s", rm->dir, REPLICA_CLEAN_MARKER);
    rm->clean_start = rm->sys.stat(path, &st) == 0;
    /* From now on a crash must look like one. */
    rm->sys.unlink(path);
    snprintf(path, sizeof path, "%s/recovery-point-offset-checkpoint", rm->dir);
    rc = log_checkpoint_read(&rm->sys, path, &rm->recovery, &rm->n_recovery);
    if (rc != 0)
        slog_warn("replica", "ignoring unreadable %s: every log will be rescanned", path);
    snprintf(path, sizeof path, "%s/log-start-offset-checkpoint", rm->dir);
    if (log_checkpoint_read(&rm->sys, path, &rm->starts, &rm->n_starts) != 0)
        slog_warn("replica", "ignoring unreadable %s", path);
    snprintf(path, sizeof path, "%s/replication-offset-checkpoint", rm->dir);
    if (log_checkpoint_read(&rm->sys, path, &rm->hws, &rm->n_hws) != 0)
        slog_warn("replica",
                  "ignoring unreadable %s: high watermarks start at the log start "
                  "and catch up as the replicas fetch",
                  path);
    if (rc != 0)
        rm->clean_start = false;
    snprintf(path, sizeof path, "%s/recovery-point-offset-checkpoint", rm->dir);
    /* Without checkpoints a dir is new only if it holds no partition yet; with partitions,
     * it was killed before its first checkpoint. */
    if (rm->sys.stat(path, &st) != 0 && !rm->clean_start && !has_partition_dirs(rm))
        slog_info("replica", "opening logs in %s: first start (no checkpoints yet)", rm->dir);
    else
        slog_info("replica", "opening logs in %s after %s shutdown", rm->dir,
                  rm->clean_start ? "a clean" : "an unclean");

    remove_orphans(rm);
    const struct meta_topic *const *topics = meta_topics(rm->meta, &nt);
    for (size_t i = 0; i < nt; i++)
        sync_topic(rm, topics[i], true);
    replica_cleaner_load(rm);
    free(rm->recovery);
    free(rm->starts);
    free(rm->hws);
    rm->recovery = rm->starts = rm->hws = NULL;
    rm->n_recovery = rm->n_starts = rm->n_hws = 0;
    /* Later opens (new partitions) start empty and clean. Only they are retried after a
     * failure: a partition that failed here needs the checkpoints just dropped, so it stays
     * offline until a restart. */
    rm->clean_start = true;
    rm->open_failed = 0;

    rm->last_retention_ms = rm->last_checkpoint_ms = rm->last_hw_checkpoint_ms =
        rm->last_expiration_ms = rm->last_clean_check_ms = rm->last_sm_tick_ms =
            tclock_mono_ms(rm->clock);
    tclock_timer_init(rm->clock, &rm->timer, on_tick, rm);
    if (tclock_timer_start(&rm->timer, HOUSEKEEPING_MS, HOUSEKEEPING_MS) != 0)
        slog_error("replica", "out of memory starting the housekeeping timer: no retention, "
                              "checkpoints or producer expiry until a restart");
    uv_idle_init(rm->loop, &rm->ev_idle);
    rm->ev_idle.data = rm;
    rm->ev_idle_open = true;
    /* From here on every applied metadata batch reaches the partitions. */
    if (meta_subscribe(rm->meta, on_meta_apply, rm) != 0)
        slog_error("replica", "cannot subscribe to metadata changes: partitions will not follow "
                              "them");
    slog_info("replica", "hosting %zu partitions", rm->count);
    *out = rm;
    return 0;
}

/* The stop's last work, done on the thread pool so that the loop waits for no fsync even
 * then: every write queued earlier has finished (the stop waited for them), the partitions
 * are offline and nothing on the loop touches them any more. Flushes every log, writes the
 * final checkpoints, closes the partitions (producer snapshots, leader epochs, indexes) and
 * leaves the clean-shutdown marker only if all of that succeeded. The logs' descriptor cache
 * is process-wide and belongs to the loop thread otherwise: this is safe because nothing
 * else in the process uses a log once the replica manager (one per process) stops. */
struct stop_work {
    struct pool_job w; /* first: the callbacks cast back from it */
    struct replica_mgr *rm;
    struct partition **parts;
    size_t n;
};

static void stop_run(uv_work_t *w)
{
    struct stop_work *sw = (struct stop_work *)w;
    struct replica_mgr *rm = sw->rm;
    struct log_checkpoint_entry *rec, *st, *hw;
    char path[PATH_MAX + 64];
    int rc = 0;

    for (size_t i = 0; i < sw->n; i++) {
        struct partition *p = sw->parts[i];
        int64_t upto;
        if (log_flush_prepare(p->log, &upto) == 0 && log_flush_run(p->log, upto) == 0)
            log_flush_done(p->log, upto);
        else
            rc = ERR_IO;
    }
    if (rc == 0)
        rc = collect_checkpoints(sw->parts, sw->n, &rec, &st, &hw);
    if (rc == 0) {
        snprintf(path, sizeof path, "%s/recovery-point-offset-checkpoint", rm->dir);
        rc = log_checkpoint_write(&rm->sys, path, rec, sw->n);
        snprintf(path, sizeof path, "%s/log-start-offset-checkpoint", rm->dir);
        if (rc == 0)
            rc = log_checkpoint_write(&rm->sys, path, st, sw->n);
        snprintf(path, sizeof path, "%s/replication-offset-checkpoint", rm->dir);
        if (rc == 0)
            rc = log_checkpoint_write(&rm->sys, path, hw, sw->n);
        if (rc != 0)
            slog_error("replica", "cannot write checkpoints in %s: %s", rm->dir, err_name(rc));
        free(rec);
        free(st);
        free(hw);
    }
    /* The partitions' last references (taken by finish_stop): snapshots and clean closes. */
    for (size_t i = 0; i < sw->n; i++)
        partition_release(sw->parts[i]);
    if (rc == 0 && replica_write_clean_marker(rm->dir) != 0)
        slog_error("replica",
                   "cannot write the clean-shutdown marker in %s: the next start "
                   "rescans the logs and registers as after a crash",
                   rm->dir);
}

static void stop_after(uv_work_t *w, int status)
{
    struct stop_work *sw = (struct stop_work *)w;
    struct replica_mgr *rm = sw->rm;
    void (*cb)(void *) = rm->stop_cb;
    void *arg = rm->stop_arg;

    (void)status;
    free(sw->parts);
    free(sw);
    replica_fetcher_free(rm);
    events_free(rm);
    free(rm->writes);
    free(rm->buckets);
    free(rm);
    if (cb)
        cb(arg);
}

static void finish_stop(struct replica_mgr *rm)
{
    struct stop_work *sw = calloc(1, sizeof *sw);
    struct partition **parts = hosted(rm);

    if (sw == NULL || parts == NULL) {
        /* Without memory for the list, close here on the loop, without the checkpoints
         * and the marker: the next start recovers as after a crash. */
        slog_error("replica", "out of memory stopping; the next start will rescan the logs");
        free(sw);
        free(parts);
        for (size_t i = 0; i < rm->n_buckets; i++) {
            struct partition *p = rm->buckets[i], *next;
            for (; p; p = next) {
                next = p->hash_next;
                partition_close(p, false);
            }
        }
        void (*cb)(void *) = rm->stop_cb;
        void *arg = rm->stop_arg;
        replica_fetcher_free(rm);
        events_free(rm);
        free(rm->writes);
        free(rm->buckets);
        free(rm);
        if (cb)
            cb(arg);
        return;
    }
    sw->rm = rm;
    sw->parts = parts;
    sw->n = rm->count;
    /* Offline on the loop (waiters are woken here), closed on the pool. */
    for (size_t i = 0; i < sw->n; i++) {
        partition_hold(parts[i]);
        table_remove(rm, parts[i]);
        partition_close(parts[i], false);
    }
    if (pool_submit(rm->loop, &sw->w, stop_run, stop_after) != 0) {
        stop_run(&sw->w.work);
        stop_after(&sw->w.work, 0);
    }
}

static void on_idle_closed(uv_handle_t *h)
{
    struct replica_mgr *rm = h->data;
    rm->ev_idle_open = false;
    maybe_finish_stop(rm);
}

static void maybe_finish_stop(struct replica_mgr *rm)
{
    /* Fetches and an AlterPartition still out hold partitions: their answers (or the
     * clients' stop, which fails them) come first. */
    if (rm->stopping && rm->flushes == 0 && rm->timer.data == NULL && !rm->ev_idle_open &&
        rm->fetches_in_flight == 0 && !rm->alter_in_flight)
        finish_stop(rm);
}

void replica_mgr_check_stop(struct replica_mgr *rm)
{
    maybe_finish_stop(rm);
}

void replica_mgr_work_done(struct replica_mgr *rm)
{
    rm->flushes--;
    maybe_finish_stop(rm);
}

void replica_mgr_stop(struct replica_mgr *rm, void (*cb)(void *arg), void *arg)
{
    rm->stopping = true;
    rm->stop_cb = cb;
    rm->stop_arg = arg;
    meta_unsubscribe(rm->meta, on_meta_apply, rm);
    replica_fetcher_stop(rm);
    tclock_timer_close(&rm->timer);
    rm->timer.data = NULL;
    /* Queued events and opens are dropped: nothing follows the metadata any more. The stop
     * finishes once the idle handle is closed. */
    uv_idle_stop(&rm->ev_idle);
    uv_close((uv_handle_t *)&rm->ev_idle, on_idle_closed);
    maybe_finish_stop(rm);
}
