/* SPDX-License-Identifier: Apache-2.0 */
/* replica cleaner: when and what the log cleaner (log/compact.c) cleans — Kafka's
 * LogCleanerManager with one cleaner thread.
 *
 * Every housekeeping tick, unless a clean runs, log.cleaner.enable is false or the last look
 * found nothing less than log.cleaner.backoff.ms ago, it looks at every hosted partition whose
 * cleanup.policy contains "compact" and takes the one with the largest dirty ratio (bytes from
 * the cleaner checkpoint to the cleanable end ÷ all bytes below the cleanable end), if that
 * ratio is at least min.cleanable.dirty.ratio. A partition is due whatever its ratio when its
 * first dirty batch is older than max.compaction.lag.ms, or when a tombstone the last clean
 * kept has reached its delete horizon (so deleted keys disappear from an idle topic). The
 * cleanable end stops before the active segment, before segments with records younger than
 * min.compaction.lag.ms, and at the last stable offset.
 *
 * A clean runs as a chain of thread-pool slices (log_clean_step), each followed by
 * log_clean_advance on the loop. The cleaner checkpoint of a finished clean is kept in memory
 * and written to <log dir>/cleaner-offset-checkpoint (Kafka's format: version 0, a count,
 * "topic partition offset" lines) on the pool. A crash before that write only makes the next
 * clean start from the older offset (cleaning is idempotent). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/pool.h"
#include "base/slog.h"
#include "pstate/pstate.h"
#include "record/record.h"
#include "replica_int.h"

#define CHECKPOINT_NAME "cleaner-offset-checkpoint"

struct replica_clean {
    struct pool_job w; /* first: the callbacks cast back from it */
    struct replica_mgr *rm;
    struct partition *p;
    struct log_clean *job;
};

static const char *broker_value(struct replica_mgr *rm, const char *key)
{
    const struct config_def *d = config_find_broker(key);
    enum config_source src;
    char node[16];

    snprintf(node, sizeof node, "%d", rm->node_id);
    return d ? config_effective(&rm->cfg, RESOURCE_BROKER, node, d, &src) : "";
}

static int64_t broker_int(struct replica_mgr *rm, const char *key, int64_t def)
{
    const char *v = broker_value(rm, key);
    char *end;
    long long x = strtoll(v, &end, 10);
    return *v && *end == '\0' ? x : def;
}

static bool compacted(const struct replica_mgr *rm, const struct partition *p)
{
    return strstr(config_topic_str(&rm->cfg, p->topic, "cleanup.policy"), "compact") != NULL;
}

void replica_cleaner_load(struct replica_mgr *rm)
{
    struct log_checkpoint_entry *e = NULL;
    char path[PATH_MAX + 64];
    size_t n = 0;

    snprintf(path, sizeof path, "%s/%s", rm->dir, CHECKPOINT_NAME);
    if (log_checkpoint_read(&rm->sys, path, &e, &n) != 0) {
        slog_warn("replica", "ignoring unreadable %s: compacted logs are cleaned from the start",
                  path);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        struct partition *p = replica_partition(rm, e[i].topic, e[i].partition);
        if (p != NULL)
            p->clean_offset = e[i].offset;
    }
    free(e);
}

/* Queues the cleaner checkpoint (every hosted partition cleaned at least once) for writing. */
static void write_checkpoint(struct replica_mgr *rm)
{
    struct log_checkpoint_entry *e = calloc(rm->count + 1, sizeof *e);
    char path[PATH_MAX + 64];
    size_t n = 0;

    if (e == NULL)
        return; /* written after the next clean */
    for (size_t i = 0; i < rm->n_buckets; i++)
        for (struct partition *p = rm->buckets[i]; p; p = p->hash_next) {
            if (p->clean_offset < 0)
                continue;
            snprintf(e[n].topic, sizeof e[n].topic, "%s", p->topic);
            e[n].partition = p->index;
            e[n].offset = p->clean_offset;
            n++;
        }
    snprintf(path, sizeof path, "%s/%s", rm->dir, CHECKPOINT_NAME);
    replica_write_checkpoint(rm, path, e, n);
}

static void finish(struct replica_clean *rc, int rc_in)
{
    static struct slog_limit fail_warn;
    struct replica_mgr *rm = rc->rm;
    struct partition *p = rc->p;
    struct log_clean_stats st;
    int rc_end = log_clean_end(rc->job, &st);
    int64_t now = tclock_mono_ms(rm->clock);

    (void)rc_in;
    if (rc_end == 0) {
        p->clean_offset = st.clean_upto;
        p->clean_horizon = st.next_horizon;
        slog_info("replica",
                  "cleaned %s-%d up to offset %lld: read %lld bytes, wrote %lld bytes in %lld "
                  "segment(s), kept %lld of %lld records",
                  p->topic, p->index, (long long)st.clean_upto, (long long)st.bytes_read,
                  (long long)st.bytes_written, (long long)st.groups, (long long)st.records_kept,
                  (long long)st.records_read);
        write_checkpoint(rm);
        /* Look for more at the next tick rather than after the back-off. */
        rm->last_clean_check_ms = INT64_MIN / 2;
    } else {
        if (rc_end != ERR_SHUTDOWN)
            slog_warn_limited(&fail_warn, 10000, "replica", "cleaning %s-%d failed: %s", p->topic,
                              p->index, err_name(rc_end));
        rm->last_clean_check_ms = now;
    }
    p->cleaning = false;
    rm->clean = NULL;
    free(rc);
    partition_release(p);
    replica_mgr_work_done(rm);
}

static void step_run(uv_work_t *w)
{
    struct replica_clean *rc = (struct replica_clean *)w;
    log_clean_step(rc->job);
}

static void step_after(uv_work_t *w, int status)
{
    struct replica_clean *rc = (struct replica_clean *)w;
    struct replica_mgr *rm = rc->rm;
    int rc_adv;

    (void)status;
    /* Stopping, or the partition went away: end here (the job removes its unfinished files). */
    if (rm->stopping || !partition_online(rc->p)) {
        finish(rc, ERR_SHUTDOWN);
        return;
    }
    rc_adv = log_clean_advance(rc->job);
    if (rc_adv == 0 && pool_submit(rm->loop, &rc->w, step_run, step_after) == 0)
        return;
    finish(rc, rc_adv);
}

static void start(struct replica_mgr *rm, struct partition *p)
{
    static struct slog_limit start_warn;
    const struct config_ctx *c = &rm->cfg;
    struct log_clean_config cfg = {0};
    const struct pstate_producer *prod;
    struct replica_clean *rc;
    int64_t *keep = NULL;
    size_t n_prod = 0, n_keep = 0;
    int64_t map_bytes = broker_int(rm, "log.cleaner.dedupe.buffer.size", 134217728);
    int err;

    prod = pstate_producers(p->pstate, &n_prod);
    if (n_prod > 0 && (keep = malloc(n_prod * sizeof *keep)) == NULL)
        return;
    for (size_t i = 0; i < n_prod; i++)
        if (prod[i].n_batches > 0)
            keep[n_keep++] = prod[i].batches[prod[i].n_batches - 1].first_offset;
    cfg.first_dirty = p->clean_offset;
    cfg.upper_bound = partition_last_stable_offset(p);
    cfg.now_ms = tclock_now_ms(rm->clock);
    cfg.min_lag_ms = config_topic_int(c, p->topic, "min.compaction.lag.ms", 0);
    cfg.delete_retention_ms = config_topic_int(c, p->topic, "delete.retention.ms", 86400000);
    cfg.map_bytes = map_bytes > 0 ? (size_t)map_bytes : 0;
    cfg.max_batch = RECORD_DECOMPRESS_MAX + RECORD_BATCH_HEADER;
    cfg.keep = keep;
    cfg.n_keep = n_keep;
    rc = calloc(1, sizeof *rc);
    if (rc == NULL) {
        free(keep);
        return;
    }
    err = log_clean_begin(partition_log(p), &cfg, &rc->job);
    free(keep);
    if (err != 0) {
        if (err != ERR_NOTFOUND)
            slog_warn_limited(&start_warn, 10000, "replica", "cannot start cleaning %s-%d: %s",
                              p->topic, p->index, err_name(err));
        free(rc);
        return;
    }
    rc->rm = rm;
    rc->p = p;
    partition_hold(p);
    p->cleaning = true;
    rm->clean = rc;
    rm->flushes++; /* a stop waits for the slice in flight */
    if (pool_submit(rm->loop, &rc->w, step_run, step_after) != 0)
        finish(rc, ERR_IO);
}

void replica_cleaner_tick(struct replica_mgr *rm)
{
    const struct config_ctx *c = &rm->cfg;
    int64_t now = tclock_mono_ms(rm->clock), wall = tclock_now_ms(rm->clock);
    int64_t backoff = broker_int(rm, "log.cleaner.backoff.ms", 15000);
    struct partition *best = NULL;
    double best_score = -1;

    if (rm->clean != NULL || rm->stopping || strcmp(broker_value(rm, "log.cleaner.enable"), "true"))
        return;
    if (now - rm->last_clean_check_ms < backoff)
        return;
    rm->last_clean_check_ms = now;
    for (size_t i = 0; i < rm->n_buckets; i++) {
        for (struct partition *p = rm->buckets[i]; p; p = p->hash_next) {
            struct log_clean_info info;
            double ratio, min_ratio, score;
            int64_t max_lag;
            bool forced;

            if (!p->online || p->log == NULL || !compacted(rm, p))
                continue;
            log_clean_info(p->log, p->clean_offset, partition_last_stable_offset(p), wall,
                           config_topic_int(c, p->topic, "min.compaction.lag.ms", 0), &info);
            if (info.clean_bytes + info.dirty_bytes == 0)
                continue; /* no sealed segment below the cleanable end */
            ratio = (double)info.dirty_bytes / (double)(info.clean_bytes + info.dirty_bytes);
            min_ratio = strtod(config_topic_str(c, p->topic, "min.cleanable.dirty.ratio"), NULL);
            max_lag = config_topic_int(c, p->topic, "max.compaction.lag.ms", INT64_MAX);
            forced = (info.dirty_bytes > 0 && info.first_dirty_ts >= 0 &&
                      wall - info.first_dirty_ts > max_lag) ||
                     p->clean_horizon <= wall;
            if (!forced && (info.dirty_bytes == 0 || ratio < min_ratio))
                continue;
            score = forced ? 2.0 + ratio : ratio;
            if (score > best_score) {
                best = p;
                best_score = score;
            }
        }
    }
    if (best != NULL)
        start(rm, best);
}
