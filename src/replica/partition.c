/* SPDX-License-Identifier: Apache-2.0 */
/* partition: one hosted partition — its log, high watermark, settings and the marks deferred
 * requests wait on. */
#include <assert.h>
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"
#include "base/slog.h"
#include "log/log.h"
#include "meta/meta.h"
#include "pstate/pstate.h"
#include "record/record.h"
#include "replica_int.h"

/* partition.metadata, as Kafka writes it next to the segments:
 *   version: 0
 *   topic_id: <topic id, 22 characters of base64url>
 * It tells a directory of a deleted topic from one of a new topic of the same name. */
static void topic_id_string(const uint8_t id[16], char out[23])
{
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    uint8_t b[18] = {0};
    memcpy(b, id, 16);
    for (int i = 0, o = 0; i < 18 && o < 22; i += 3) {
        uint32_t v = (uint32_t)b[i] << 16 | (uint32_t)b[i + 1] << 8 | b[i + 2];
        for (int k = 3; k >= 0 && o < 22; k--)
            out[o++] = b64[(v >> (6 * k)) & 63];
    }
    out[22] = '\0';
}

/* 1 if dir holds a partition.metadata naming another topic id, 0 if it matches or is new
 * (no file, or no topic_id line in it), ERR_IO if it cannot be read (logged). */
static int check_metadata_file(const struct sysio *io, const char *dir, const uint8_t id[16])
{
    char path[PATH_MAX + 32], want[23], *buf;
    size_t len;
    int other = 0, rc;

    snprintf(path, sizeof path, "%s/partition.metadata", dir);
    topic_id_string(id, want);
    rc = sysio_read_file(io, "replica", path, 4096, &buf, &len);
    if (rc == ERR_NOTFOUND)
        return 0;
    if (rc != 0)
        return ERR_IO;
    for (const char *line = buf; line != NULL && *line != '\0';) {
        if (strncmp(line, "topic_id: ", 10) == 0)
            other = strncmp(line + 10, want, 22) != 0;
        line = strchr(line, '\n');
        if (line != NULL)
            line++;
    }
    free(buf);
    return other;
}

/* 0 or -errno (base/err.h). Not fsynced, as before: a torn file names no topic id, which
 * reads as a new directory and is written again. */
static int write_metadata_file(const struct sysio *io, const char *dir, const uint8_t id[16])
{
    char path[PATH_MAX + 32], idstr[23], text[64];
    int fd, n, rc;

    snprintf(path, sizeof path, "%s/partition.metadata", dir);
    topic_id_string(id, idstr);
    n = snprintf(text, sizeof text, "version: 0\ntopic_id: %s\n", idstr);
    fd = io->open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return -errno;
    rc = sysio_pwrite_all(io, fd, text, (size_t)n, 0);
    if (io->close(fd) != 0 && rc == 0)
        rc = -errno;
    return rc;
}

/* Removes a partition directory: its files, then itself. Partition directories are flat. */
void partition_remove_dir(const struct sysio *io, const char *dir)
{
    DIR *d = io->opendir(dir);
    struct dirent *e;
    char path[PATH_MAX * 2];
    if (d == NULL)
        return;
    while ((e = io->readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (io->unlink(path) != 0)
            slog_warn("replica", "cannot delete %s: %s", path, strerror(errno));
    }
    io->closedir(d);
    if (io->rmdir(dir) != 0)
        slog_warn("replica", "cannot delete %s: %s", dir, strerror(errno));
}

static void log_config_for(struct partition *p, struct log_config *lc)
{
    const struct config_ctx *c = &p->rm->cfg;
    log_config_default(lc);
    lc->segment_bytes = config_topic_int(c, p->topic, "segment.bytes", lc->segment_bytes);
    lc->segment_ms = config_topic_int(c, p->topic, "segment.ms", lc->segment_ms);
    lc->retention_bytes = config_topic_int(c, p->topic, "retention.bytes", lc->retention_bytes);
    lc->retention_ms = config_topic_int(c, p->topic, "retention.ms", lc->retention_ms);
    lc->flush_messages = config_topic_int(c, p->topic, "flush.messages", lc->flush_messages);
    lc->flush_ms = config_topic_int(c, p->topic, "flush.ms", lc->flush_ms);
    lc->index_interval_bytes =
        (int32_t)config_topic_int(c, p->topic, "index.interval.bytes", lc->index_interval_bytes);
    lc->max_index_bytes =
        (int32_t)config_topic_int(c, p->topic, "segment.index.bytes", lc->max_index_bytes);
    /* segment.jitter.ms brings the time-based roll forward by up to min(jitter, segment.ms),
     * so that partitions created together do not all roll at once. Kafka draws it at random
     * per segment; here it is a hash of the partition's name: stable, and spread over the
     * partitions. */
    int64_t jitter = config_topic_int(c, p->topic, "segment.jitter.ms", 0);
    if (jitter > 0 && lc->segment_ms > 1) {
        uint64_t h = 1469598103934665603ULL; /* FNV-1a */
        for (const char *q = p->topic; *q; q++)
            h = (h ^ (uint8_t)*q) * 1099511628211ULL;
        h = (h ^ (uint64_t)(uint32_t)p->index) * 1099511628211ULL;
        h ^= h >> 29;
        lc->segment_ms -=
            (int64_t)(h % (uint64_t)(jitter < lc->segment_ms ? jitter : lc->segment_ms));
    }
    /* cleanup.policy: "compact" lets the cleaner run (cleaner.c); without "delete", as in
     * Kafka, neither retention.ms nor retention.bytes deletes segments. */
    const char *policy = config_topic_str(c, p->topic, "cleanup.policy");
    lc->compact = strstr(policy, "compact") != NULL;
    if (strstr(policy, "delete") == NULL)
        lc->retention_ms = lc->retention_bytes = -1;
}

void partition_refresh_settings(struct partition *p)
{
    const struct config_ctx *c = &p->rm->cfg;
    struct partition_settings *s = &p->settings;
    struct log_config lc;
    int64_t diff = config_topic_int(c, p->topic, "message.timestamp.difference.max.ms", INT64_MAX);

    s->max_message_bytes = config_topic_int(c, p->topic, "max.message.bytes", 1048588);
    s->log_append_time =
        strcmp(config_topic_str(c, p->topic, "message.timestamp.type"), "LogAppendTime") == 0;
    s->ts_before_max_ms =
        config_topic_int(c, p->topic, "message.timestamp.before.max.ms", INT64_MAX);
    s->ts_after_max_ms = config_topic_int(c, p->topic, "message.timestamp.after.max.ms", INT64_MAX);
    s->down_conversion =
        strcmp(config_topic_str(c, p->topic, "message.downconversion.enable"), "false") != 0;
    /* "producer" (and anything unknown) maps to -1: keep the producer's codec. */
    s->compression = record_codec_by_name(config_topic_str(c, p->topic, "compression.type"));
    s->min_insync = config_topic_int(c, p->topic, "min.insync.replicas", 1);
    s->compact = strstr(config_topic_str(c, p->topic, "cleanup.policy"), "compact") != NULL;
    p->leader_throttled =
        throttle_listed(config_topic_str(c, p->topic, "leader.replication.throttled.replicas"),
                        p->index, p->rm->node_id);
    p->follower_throttled =
        throttle_listed(config_topic_str(c, p->topic, "follower.replication.throttled.replicas"),
                        p->index, p->rm->node_id);
    /* The older single bound still applies in both directions when set. */
    if (diff < s->ts_before_max_ms)
        s->ts_before_max_ms = diff;
    if (diff < s->ts_after_max_ms)
        s->ts_after_max_ms = diff;
    if (p->log) {
        log_config_for(p, &lc);
        log_set_config(p->log, &lc);
    }
    if (p->sm) {
        struct psm_effects fx;
        psm_set_min_insync(p->sm, s->min_insync > 0 ? (int32_t)s->min_insync : 1,
                           tclock_mono_ms(p->rm->clock), &fx);
        partition_effects(p, &fx);
    }
}

/* A COMMIT/ABORT control batch reached the log (appended here, replicated, or replayed):
 * closes the producer's transaction with the marker's coordinator epoch and, for an ABORT,
 * adds the aborted transaction to the segment's .txnindex. `b` has its offset assigned. */
static int record_marker(struct partition *p, const struct record_batch *b,
                         enum record_control_type type, int32_t coordinator_epoch, int64_t now_ms)
{
    struct pstate_txn_end end;
    int rc = pstate_update_marker(p->pstate, b, coordinator_epoch, now_ms, &end);

    if (rc != 0 || type != RECORD_CONTROL_ABORT)
        return rc;
    struct log_aborted_txn t = {
        .producer_id = b->producer_id,
        /* Kafka's rule: with no ongoing transaction the range starts at the marker. */
        .first_offset = end.first_offset >= 0 ? end.first_offset : b->base_offset,
        .last_offset = b->base_offset,
        .last_stable_offset = end.last_stable_offset,
    };
    rc = log_txn_append(p->log, &t);
    if (rc != 0)
        slog_error("replica",
                   "%s-%d: cannot record the aborted transaction of producer %lld "
                   "(offsets %lld..%lld) in the .txnindex: %s",
                   p->topic, p->index, (long long)t.producer_id, (long long)t.first_offset,
                   (long long)t.last_offset, err_name(rc));
    return 0; /* the marker is in the log; a restart's replay writes the entry again */
}

/* Replays a control batch found in the log: its body holds the marker type and the
 * coordinator epoch. A control batch that does not parse is skipped with a WARN. */
static int replay_marker(struct partition *p, struct log_batch_iter *it,
                         const struct record_batch *b)
{
    enum record_control_type type;
    int32_t coord_epoch;
    size_t size = record_batch_size(b);
    uint8_t *buf;
    int rc;

    if (size > 4096) {
        slog_warn("replica", "%s-%d: control batch at offset %lld is %zu bytes; skipped", p->topic,
                  p->index, (long long)b->base_offset, size);
        return 0;
    }
    buf = malloc(size);
    if (buf == NULL)
        return ERR_NOMEM;
    rc = log_batch_iter_read(it, b, buf);
    if (rc == 0 && record_control_parse(buf, size, &type, &coord_epoch) != 0) {
        slog_warn("replica", "%s-%d: control batch at offset %lld does not parse; skipped",
                  p->topic, p->index, (long long)b->base_offset);
        free(buf);
        return 0;
    }
    free(buf);
    if (rc != 0)
        return rc;
    return record_marker(p, b, type, coord_epoch, b->max_timestamp);
}

/* Rebuilds producer state from the newest snapshot plus the batches after it, reading only
 * batch headers (through the log's batch iterator; a control batch's body too). The
 * .txnindex entries past the snapshot are dropped first and written again by the replayed
 * ABORT markers, so that they match the log whatever the last stop left. */
static int load_producers(struct partition *p)
{
    int64_t from, leo = log_end_offset(p->log);
    int rc;

    p->pstate = pstate_new();
    if (p->pstate == NULL)
        return ERR_NOMEM;
    rc = pstate_snapshot_load(p->pstate, &p->rm->sys, p->dir, leo, &from);
    if (rc != 0)
        return rc;
    if (from < log_start_offset(p->log))
        from = log_start_offset(p->log);
    if (from < leo && (rc = log_txn_truncate(p->log, from)) != 0)
        return rc;
    while (from < leo) {
        struct log_slice sl;
        struct log_batch_iter it;
        struct record_batch b;
        int64_t next = from;

        rc = log_read(p->log, from, leo, 1 << 20, &sl);
        if (rc != 0 || sl.len == 0)
            break;
        log_batch_iter_init(&it, log_get_io(p->log), &sl, SIZE_MAX);
        while ((rc = log_batch_iter_next(&it, &b)) == 0) {
            if (b.producer_id >= 0 && record_batch_last_offset(&b) >= from) {
                if (b.attributes & RECORD_ATTR_CONTROL)
                    rc = replay_marker(p, &it, &b);
                else
                    rc = pstate_update(p->pstate, &b, b.max_timestamp);
            }
            if (rc != 0)
                break;
            next = record_batch_last_offset(&b) + 1;
        }
        if (rc == ERR_NOTFOUND)
            rc = 0;
        log_slice_release(p->log, &sl);
        if (rc != 0 || next <= from)
            break;
        from = next;
    }
    if (rc != 0)
        slog_error("replica", "cannot rebuild producer state of %s-%d: %s", p->topic, p->index,
                   err_name(rc));
    return rc;
}

static int64_t find_checkpoint(const struct log_checkpoint_entry *e, size_t n, const char *topic,
                               int32_t index, int64_t def)
{
    for (size_t i = 0; i < n; i++)
        if (e[i].partition == index && strcmp(e[i].topic, topic) == 0)
            return e[i].offset;
    return def;
}

/* ---- role and replication ----------------------------------------------------------------- */

/* psm_ops.epoch_end: the log's leader-epoch cache. */
static void sm_epoch_end(void *arg, int32_t epoch, int32_t *out_epoch, int64_t *out_end)
{
    struct partition *p = arg;
    log_epoch_end_offset(p->log, epoch, out_epoch, out_end);
}

/* psm_ops.replica_eligible: not known to be fenced or shutting down, as this broker's image
 * says. A broker the image does not know counts (it holds the HW like any ISR member): only
 * a state the controller wrote may take a member out of the count. */
static bool sm_replica_eligible(void *arg, int32_t broker)
{
    struct partition *p = arg;
    const struct meta_broker *b = meta_broker_by_id(p->rm->meta, broker);
    return b == NULL || (!b->fenced && !b->shutting_down);
}

static enum replica_role role_of(const struct partition *p)
{
    return psm_role(p->sm) == PSM_LEADER ? REPLICA_LEADER : REPLICA_FOLLOWER;
}

void partition_effects(struct partition *p, const struct psm_effects *fx)
{
    /* First, before anything can move a mark: a waiter of the old role or epoch must never
     * be answered "reached" by what the new role does (an acks=all produce parked on a
     * deposed leader would otherwise be acknowledged once the follower HW, fed by the new
     * leader after truncation, passes its offset). */
    if (fx->fail_waiters) {
        purgatory_point_fail(&p->marks[PARTITION_HIGH_WATERMARK]);
        purgatory_point_fail(&p->marks[PARTITION_LAST_STABLE]);
        purgatory_point_fail(&p->marks[PARTITION_LOG_END]);
    }
    if (fx->role_changed && psm_role(p->sm) == PSM_LEADER && p->log) {
        /* A leader's epoch starts at its log end (Kafka's makeLeader). */
        log_epoch_assign(p->log, psm_leader_epoch(p->sm), log_end_offset(p->log));
    }
    if (fx->truncate)
        partition_truncate(p, fx->truncate_to, fx->truncate_below_hw);
    if (fx->reset)
        partition_reset_to(p, fx->reset_to);
    if (fx->hw_changed)
        partition_marks_changed(p);
    if (fx->fetch_changed)
        replica_fetcher_update(p->rm, p);
    if (fx->send_alter)
        replica_alter_queue(p->rm, p);
    if (fx->isr_shrink_requested)
        metrics_add(p->rm->m_isr_shrinks, 1);
    if (fx->isr_expand_requested)
        metrics_add(p->rm->m_isr_expands, 1);
}

static void assignment_of(const struct meta_partition *mp, struct psm_assignment *a)
{
    *a = (struct psm_assignment){
        .leader = mp->leader,
        .leader_epoch = mp->leader_epoch,
        .partition_epoch = mp->partition_epoch,
        .n_replicas = mp->n_replicas,
        .replicas = mp->replicas,
        .n_isr = mp->n_isr,
        .isr = mp->isr,
        .leader_recovery_state = mp->leader_recovery_state,
    };
}

bool partition_set_state(struct partition *p, const struct meta_partition *mp)
{
    struct psm_assignment a;
    struct psm_effects fx;

    assignment_of(mp, &a);
    psm_apply(p->sm, &a, tclock_mono_ms(p->rm->clock), &fx);
    partition_effects(p, &fx);
    return fx.role_changed;
}

int partition_open(struct replica_mgr *rm, const char *topic, const uint8_t id[16],
                   const struct meta_partition *mp, struct partition **out)
{
    struct partition *p = calloc(1, sizeof *p);
    struct log_config lc;
    int32_t index = mp->partition;
    int rc = ERR_NOMEM;

    if (p == NULL || (p->topic = strdup(topic)) == NULL)
        goto err;
    p->rm = rm;
    p->index = index;
    memcpy(p->topic_id, id, 16);
    p->clean_offset = -1;
    p->clean_horizon = INT64_MAX;
    p->fetch_leader = -1;
    p->refs = 1;
    p->online = true;
    int n = snprintf(p->dir, sizeof p->dir, "%s/%s-%d", rm->dir, topic, index);
    if (n < 0 || (size_t)n >= sizeof p->dir) {
        slog_error("replica", "partition directory name for %s-%d is too long", topic, index);
        rc = ERR_IO;
        goto err;
    }

    rc = check_metadata_file(&rm->sys, p->dir, id);
    if (rc == ERR_IO)
        goto err; /* logged: what the directory holds cannot be told, so it is not served */
    if (rc != 0) {
        /* Another topic's data (a deleted topic of the same name, or a directory copied in by
         * hand): not ours to serve, and not ours to delete either. It is moved aside and this
         * partition stays offline until an operator has looked. */
        char aside[PATH_MAX + 64];
        snprintf(aside, sizeof aside, "%s.%lld-mismatch", p->dir,
                 (long long)tclock_now_ms(rm->clock));
        if (rm->sys.rename(p->dir, aside) == 0)
            slog_error("replica",
                       "%s/partition.metadata names another topic id than topic %s's; moved the "
                       "directory aside to %s and left %s-%d offline",
                       p->dir, topic, aside, topic, index);
        else
            slog_error("replica",
                       "%s/partition.metadata names another topic id than topic %s's and it "
                       "cannot be moved aside (%s); %s-%d stays offline",
                       p->dir, topic, strerror(errno), topic, index);
        rc = ERR_IO;
        goto err;
    }
    if (rm->sys.mkdir(p->dir, 0755) != 0 && errno != EEXIST) {
        slog_error("replica", "cannot create %s: %s", p->dir, strerror(errno));
        rc = ERR_IO;
        goto err;
    }
    if ((rc = write_metadata_file(&rm->sys, p->dir, id)) != 0) {
        slog_error("replica", "cannot write %s/partition.metadata: %s", p->dir, strerror(-rc));
        rc = ERR_IO;
        goto err;
    }
    partition_refresh_settings(p);
    log_config_for(p, &lc);
    int64_t start = find_checkpoint(rm->starts, rm->n_starts, topic, index, -1);
    rc = log_open(p->dir, &lc, &rm->log_io,
                  find_checkpoint(rm->recovery, rm->n_recovery, topic, index, 0), start,
                  rm->clean_start, &p->log);
    if (rc != 0)
        goto err;
    /* log_open clamps the start to the log end (records below a recorded start were deleted
     * and must stay so), but a start past the end means the checkpoint or the log was
     * damaged, and every record then hides: say so. */
    if (start > log_end_offset(p->log))
        slog_warn("replica",
                  "%s-%d: log-start-offset-checkpoint says %lld, past the log end %lld; clamped "
                  "the log start to %lld, so no record below it is served",
                  topic, index, (long long)start, (long long)log_end_offset(p->log),
                  (long long)log_start_offset(p->log));
    p->opened_mono_ms = tclock_mono_ms(rm->clock);
    rc = load_producers(p);
    if (rc != 0) {
        log_close(p->log, false);
        pstate_free(p->pstate);
        goto err;
    }
    /* What the open trusted without reading its CRC is checked from now on (replica/check.c). */
    log_check_start(p->log);
    replica_check_kick(rm);
    /* The high watermark starts where the replication-offset-checkpoint left it (clamped to
     * the log); the role, epochs and ISR come with partition_set_state once the partition is
     * in the manager's table, and then the HW moves as replication says (a leader whose ISR
     * is itself alone has everything committed at once). */
    struct psm_config sc = {
        .replica_lag_time_max_ms = rm->replica_lag_time_max_ms,
        .alter_retry_ms = rm->alter_retry_ms,
        .min_insync = p->settings.min_insync > 0 ? (int32_t)p->settings.min_insync : 1,
    };
    struct psm_ops ops = {
        .epoch_end = sm_epoch_end, .replica_eligible = sm_replica_eligible, .arg = p};
    int64_t hw = find_checkpoint(rm->hws, rm->n_hws, topic, index, log_start_offset(p->log));
    if (hw < log_start_offset(p->log))
        hw = log_start_offset(p->log);
    p->sm = psm_new(rm->node_id, &sc, &ops, hw);
    if (p->sm == NULL) {
        log_close(p->log, false);
        pstate_free(p->pstate);
        rc = ERR_NOMEM;
        goto err;
    }
    psm_set_log(p->sm, log_start_offset(p->log), log_end_offset(p->log));
    for (int m = PARTITION_LOG_END; m <= PARTITION_DURABLE; m++)
        purgatory_point_init(&p->marks[m], partition_mark(p, (enum partition_mark)m));
    *out = p;
    return 0;

err:
    if (p)
        free(p->topic);
    free(p);
    return rc;
}

static void partition_free(struct partition *p)
{
    /* A snapshot at the end makes the next start replay nothing. A partition that never
     * held a batch has nothing to replay and no producer to remember: skipping its snapshot
     * (two fsyncs) keeps the stop of a broker hosting thousands of idle partitions short. */
    size_t n_producers = 0;
    pstate_producers(p->pstate, &n_producers);
    bool never_written = log_end_offset(p->log) == 0 && n_producers == 0;
    if (!p->deleted && !never_written &&
        pstate_snapshot_write(p->pstate, &p->rm->sys, p->dir, log_end_offset(p->log)) == 0)
        pstate_snapshot_prune(&p->rm->sys, p->dir, 2);
    pstate_free(p->pstate);
    /* A deleted partition's directory is gone: nothing to flush or trim. */
    log_close(p->log, !p->deleted);
    psm_free(p->sm);
    free(p->topic);
    free(p);
}

void partition_hold(struct partition *p)
{
    p->refs++;
}

void partition_release(struct partition *p)
{
    if (--p->refs == 0)
        partition_free(p);
}

bool partition_online(const struct partition *p)
{
    return p->online;
}

void partition_close(struct partition *p, bool delete_dir)
{
    replica_fetcher_remove(p->rm, p);
    replica_alter_remove(p->rm, p);
    p->online = false;
    p->deleted = delete_dir;
    for (int m = PARTITION_LOG_END; m <= PARTITION_DURABLE; m++)
        purgatory_point_close(&p->marks[m]);
    if (delete_dir) {
        char gone[PATH_MAX + 64];
        int n = snprintf(gone, sizeof gone, "%s.%lld-delete", p->dir, (long long)getpid());
        if (n > 0 && (size_t)n < sizeof p->dir && p->rm->sys.rename(p->dir, gone) == 0)
            memcpy(p->dir, gone, (size_t)n + 1);
        partition_remove_dir(&p->rm->sys, p->dir);
    }
    partition_release(p);
}

int64_t partition_mark(const struct partition *p, enum partition_mark mark)
{
    switch (mark) {
    case PARTITION_LOG_END:
        return log_end_offset(p->log);
    case PARTITION_HIGH_WATERMARK:
        return partition_high_watermark(p);
    case PARTITION_LAST_STABLE:
        return partition_last_stable_offset(p);
    case PARTITION_DURABLE:
        return log_flushed_offset(p->log);
    }
    return -1;
}

bool partition_watch(struct partition *p, enum partition_mark mark, int64_t offset,
                     struct purgatory_watch *w)
{
    if (purgatory_watch_arm(w, &p->marks[mark], offset))
        return true;
    if (mark != PARTITION_DURABLE)
        return false;
    /* A failed log's flushed offset never moves again: its waiters are answered now. */
    if (log_failed(p->log)) {
        purgatory_watch_disarm(w);
        w->reached = false;
        return true;
    }
    /* The flush starts for the waiter if none runs; one that runs covers what was appended
     * before it began, and its end starts the next for what came after (flush_after). */
    partition_maybe_flush(p, true);
    return false;
}

bool partition_flush_required(const struct partition *p)
{
    return log_flush_due(p->log);
}

/* log start <= LSO <= HW <= LEO, the order every reader's bound rests on (for assert()): the
 * state machine keeps the log start <= HW <= its log end, which is this log's end or behind it
 * until the next psm_appended / psm_fetched; the LSO is the HW or an open transaction's first
 * offset held between the log start and the HW; retention deletes only below the LSO and
 * DeleteRecords only up to the HW, and both tell the state machine (partition_log_moved). */
static bool offsets_ordered(const struct partition *p)
{
    int64_t start = log_start_offset(p->log), lso = partition_last_stable_offset(p);
    int64_t hw = psm_high_watermark(p->sm);
    return start <= lso && lso <= hw && hw <= log_end_offset(p->log);
}

void partition_marks_changed(struct partition *p)
{
    assert(offsets_ordered(p));
    /* Each value is read when its turn comes: a callback of an earlier mark may have moved
     * the later ones (an append from within a wake). */
    for (int m = PARTITION_LOG_END; m <= PARTITION_DURABLE; m++)
        purgatory_point_set(&p->marks[m], partition_mark(p, (enum partition_mark)m));
    if (purgatory_point_waited(&p->marks[PARTITION_DURABLE]) &&
        log_flushed_offset(p->log) < log_end_offset(p->log))
        partition_maybe_flush(p, true);
}

const char *partition_topic(const struct partition *p)
{
    return p->topic;
}
int32_t partition_index(const struct partition *p)
{
    return p->index;
}
const uint8_t *partition_topic_id(const struct partition *p)
{
    return p->topic_id;
}
int32_t partition_leader_epoch(const struct partition *p)
{
    return psm_leader_epoch(p->sm);
}
int64_t partition_high_watermark(const struct partition *p)
{
    return psm_high_watermark(p->sm);
}
int64_t partition_last_stable_offset(const struct partition *p)
{
    /* The first offset of the earliest open transaction, else the high watermark. A
     * transaction whose first batches are gone (DeleteRecords moved the log start past them)
     * holds the LSO at the log start, as Kafka's does: nothing below it can be read anyway. */
    int64_t first = pstate_first_unstable_offset(p->pstate);
    int64_t hw = psm_high_watermark(p->sm), start = log_start_offset(p->log);
    if (first >= 0 && first < start)
        first = start;
    return first >= 0 && first < hw ? first : hw;
}

void partition_slice_warm(const struct partition_slice *s)
{
    (void)sysio_warm_full(s->io, s->warm_fd, (off_t)s->warm_pos, s->warm_len);
}

int partition_aborted_txns_ready(struct partition *p, int64_t from, int64_t upto, char *cold_path,
                                 size_t cap)
{
    return log_txn_ready_nowait(p->log, from, upto, cold_path, cap);
}

int partition_aborted_txns(struct partition *p, int64_t from, int64_t upto,
                           struct partition_aborted_txn **out, size_t *n)
{
    struct log_aborted_txn *v;
    int rc = log_txn_collect(p->log, from, upto, &v, n);

    *out = NULL;
    if (rc != 0 || *n == 0)
        return rc;
    /* The smaller struct fits in place. */
    struct partition_aborted_txn *o = (struct partition_aborted_txn *)v;
    for (size_t i = 0; i < *n; i++) {
        struct partition_aborted_txn t = {v[i].producer_id, v[i].first_offset};
        o[i] = t;
    }
    *out = o;
    return 0;
}
int64_t partition_log_start_offset(const struct partition *p)
{
    return log_start_offset(p->log);
}
int64_t partition_log_end_offset(const struct partition *p)
{
    return log_end_offset(p->log);
}
struct log *partition_log(struct partition *p)
{
    return p->log;
}
enum replica_role partition_role(const struct partition *p)
{
    return role_of(p);
}
int32_t partition_leader_id(const struct partition *p)
{
    return psm_leader(p->sm);
}
int32_t partition_partition_epoch(const struct partition *p)
{
    return psm_partition_epoch(p->sm);
}
bool partition_is_replica(const struct partition *p, int32_t node)
{
    return psm_is_replica(p->sm, node);
}
bool partition_in_isr(const struct partition *p, int32_t node)
{
    return psm_in_isr(p->sm, node);
}
int32_t partition_isr_size(const struct partition *p)
{
    return psm_isr_count(p->sm);
}
int64_t partition_follower_offset(const struct partition *p, int32_t node)
{
    return psm_follower_log_end(p->sm, node);
}
bool partition_leader_ready(const struct partition *p)
{
    return psm_role(p->sm) == PSM_LEADER && psm_hw_covers_epoch_start(p->sm);
}
void partition_epoch_end_offset(const struct partition *p, int32_t epoch, int32_t *out_epoch,
                                int64_t *out_end)
{
    log_epoch_end_offset(p->log, epoch, out_epoch, out_end);
}
int32_t partition_last_fetched_epoch(const struct partition *p)
{
    return log_latest_epoch(p->log);
}

/* ---- reading ------------------------------------------------------------------------------ */

enum partition_mark partition_reader_mark(enum partition_reader reader)
{
    switch (reader) {
    case PARTITION_READ_REPLICA:
        return PARTITION_LOG_END;
    case PARTITION_READ_COMMITTED:
        return PARTITION_LAST_STABLE;
    case PARTITION_READ_UNCOMMITTED:
        break;
    }
    return PARTITION_HIGH_WATERMARK;
}

int64_t partition_read_bound(const struct partition *p, enum partition_reader reader)
{
    return partition_mark(p, partition_reader_mark(reader));
}

static int read_slice(struct partition *p, int64_t from, size_t max_bytes,
                      enum partition_reader reader, bool nowait, struct partition_slice *out)
{
    int64_t bound = partition_read_bound(p, reader);
    struct log_slice sl = {.fd = -1};
    int rc;

    memset(out, 0, sizeof *out);
    out->fd = -1;
    if (from < log_start_offset(p->log) || from > log_end_offset(p->log))
        return ERR_OFFSET_OUT_OF_RANGE;
    if (from >= bound)
        return 0;
    rc = nowait ? log_read_nowait(p->log, from, bound, max_bytes, &sl)
                : log_read(p->log, from, bound, max_bytes, &sl);
    if (rc != 0)
        return rc;
    out->fd = sl.fd;
    out->pos = (int64_t)sl.pos;
    out->len = sl.len;
    out->ref = sl.segment;
    out->io = log_get_io(p->log);
    out->next_offset = sl.next_offset;
    out->pending = sl.pending;
    out->cold = sl.cold;
    out->warm_fd = sl.warm_fd;
    out->warm_pos = sl.warm_pos;
    out->warm_len = sl.warm_len;
    return 0;
}

int partition_read(struct partition *p, int64_t from, size_t max_bytes,
                   enum partition_reader reader, struct partition_slice *out)
{
    return read_slice(p, from, max_bytes, reader, false, out);
}

int partition_read_nowait(struct partition *p, int64_t from, size_t max_bytes,
                          enum partition_reader reader, struct partition_slice *out)
{
    return read_slice(p, from, max_bytes, reader, true, out);
}

void partition_slice_release(struct partition *p, struct partition_slice *s)
{
    struct log_slice sl = {.fd = s->fd, .pos = (off_t)s->pos, .len = s->len, .segment = s->ref};
    if (s->ref == NULL)
        return;
    log_slice_release(p->log, &sl);
    s->ref = NULL;
    s->len = 0;
}

int partition_slice_first_batch(const struct partition_slice *s, size_t max_batch, uint8_t **buf,
                                size_t *len)
{
    struct log_slice sl = {.fd = s->fd, .pos = (off_t)s->pos, .len = s->len, .segment = s->ref};
    struct log_batch_iter it;
    struct record_batch b;
    int rc;

    *buf = NULL;
    *len = 0;
    if (s->ref == NULL || s->len == 0)
        return ERR_NOTFOUND;
    log_batch_iter_init(&it, s->io, &sl, max_batch);
    rc = log_batch_iter_next(&it, &b);
    if (rc != 0)
        return rc;
    *buf = malloc(record_batch_size(&b));
    if (*buf == NULL)
        return ERR_NOMEM;
    rc = log_batch_iter_read(&it, &b, *buf);
    if (rc != 0) {
        free(*buf);
        *buf = NULL;
        return rc;
    }
    *len = record_batch_size(&b);
    return 0;
}

int partition_offset_for_time(struct partition *p, int64_t ts, int64_t *out_offset, int64_t *out_ts)
{
    return log_offset_for_time(p->log, ts, out_offset, out_ts);
}

int partition_offset_for_time_nowait(struct partition *p, int64_t ts, int64_t *out_offset,
                                     int64_t *out_ts, struct partition_slice *cold)
{
    struct log_slice sl;
    int rc = log_offset_for_time_nowait(p->log, ts, out_offset, out_ts, &sl);

    memset(cold, 0, sizeof *cold);
    cold->fd = -1;
    cold->warm_fd = -1;
    if (rc != ERR_WOULD_BLOCK)
        return rc;
    cold->ref = sl.segment;
    cold->io = log_get_io(p->log);
    cold->cold = true;
    cold->warm_fd = sl.warm_fd;
    cold->warm_pos = sl.warm_pos;
    cold->warm_len = sl.warm_len;
    return rc;
}

void partition_max_timestamp(const struct partition *p, int64_t *offset, int64_t *ts)
{
    log_max_timestamp(p->log, offset, ts);
}

int partition_delete_records(struct partition *p, int64_t offset, int64_t *low_watermark)
{
    int rc = 0;
    *low_watermark = -1;
    int64_t hw = psm_high_watermark(p->sm);
    if (psm_role(p->sm) != PSM_LEADER)
        return ERR_NOT_LEADER_OR_FOLLOWER;
    if (offset == -1)
        offset = hw;
    if (offset < 0 || offset > hw)
        return ERR_OFFSET_OUT_OF_RANGE;
    if (offset > log_start_offset(p->log))
        rc = log_delete_records(p->log, offset);
    if (rc == 0)
        *low_watermark = log_start_offset(p->log);
    partition_log_moved(p);
    return rc;
}
const struct pstate *partition_pstate(const struct partition *p)
{
    return p->pstate;
}
const struct partition_settings *partition_settings(const struct partition *p)
{
    return &p->settings;
}

int partition_append(struct partition *p, uint8_t *batch, size_t len,
                     const struct record_batch *hdr, int64_t *base_offset, int64_t *append_time)
{
    int64_t max_ts = hdr->max_timestamp, base_before = log_active_base(p->log);
    struct record_batch appended = *hdr;
    struct pstate_batch dup;
    bool is_marker = (hdr->attributes & RECORD_ATTR_CONTROL) != 0 && hdr->producer_id >= 0;
    enum record_control_type marker_type = RECORD_CONTROL_ABORT;
    int32_t coord_epoch = -1;
    int rc;

    *append_time = -1;
    if (psm_role(p->sm) != PSM_LEADER)
        return ERR_NOT_LEADER_OR_FOLLOWER;
    if (is_marker) {
        rc = record_control_parse(batch, len, &marker_type, &coord_epoch);
        if (rc == 0)
            rc = pstate_check_marker(p->pstate, hdr->producer_id, hdr->producer_epoch, coord_epoch);
        if (rc != 0)
            return rc;
    } else if (hdr->producer_id >= 0) {
        rc = pstate_check(p->pstate, hdr, &dup);
        if (rc == ERR_DUPLICATE_SEQUENCE_NUMBER)
            *base_offset = dup.first_offset;
        if (rc != 0)
            return rc;
    }
    if (p->settings.log_append_time) {
        *append_time = max_ts = tclock_now_ms(p->rm->clock);
        record_batch_set_log_append_time(batch, max_ts);
    }
    rc = log_append(p->log, batch, len, hdr->last_offset_delta, max_ts, psm_leader_epoch(p->sm),
                    base_offset);
    if (rc != 0)
        return rc;
    bool rolled = log_active_base(p->log) != base_before;
    if (rolled) {
        /* Rolled: snapshot the producers as of the new segment's base (this batch is the
         * first one past it), so a restart replays at most the active segment. Copied here,
         * written on the thread pool. */
        replica_write_snapshot(p, log_active_base(p->log));
    }
    if (hdr->producer_id >= 0) {
        appended.base_offset = *base_offset;
        appended.max_timestamp = max_ts;
        if (is_marker)
            rc = record_marker(p, &appended, marker_type, coord_epoch, tclock_now_ms(p->rm->clock));
        else
            rc = pstate_update(p->pstate, &appended, tclock_now_ms(p->rm->clock));
        pstate_note_write(p->pstate, hdr->producer_id, tclock_mono_ms(p->rm->clock));
        if (rc != 0)
            slog_error("replica", "out of memory recording producer %lld on %s-%d",
                       (long long)hdr->producer_id, p->topic, p->index);
    }
    struct psm_effects fx;
    psm_appended(p->sm, log_end_offset(p->log), tclock_mono_ms(p->rm->clock), &fx);
    partition_maybe_flush(p, rolled);
    /* The log end moved whatever the HW did: the marks are looked at in any case. */
    partition_marks_changed(p);
    fx.hw_changed = false;
    partition_effects(p, &fx);
    return 0;
}

int partition_append_as_follower(struct partition *p, uint8_t *buf, size_t len, int64_t leader_hw,
                                 int64_t leader_log_start)
{
    size_t off = 0;
    int rc = 0;

    if (psm_role(p->sm) != PSM_FOLLOWER)
        return ERR_NOT_LEADER_OR_FOLLOWER;
    while (off < len) {
        struct record_batch b;
        int64_t base, base_before = log_active_base(p->log);
        size_t size;

        rc = record_batch_parse(buf + off, len - off, &b);
        if (rc == ERR_TRUNCATED && off > 0) {
            rc = 0; /* a partial batch at the end of a response: fetched again next time */
            break;
        }
        if (rc != 0) {
            rc = ERR_CORRUPT_MESSAGE;
            break;
        }
        size = record_batch_size(&b);
        /* The leader's bytes are checked as a client's would be (Kafka's appendAsFollower
         * validates the CRC too): a batch damaged on the leader's disk or on the way is never
         * made part of this replica. */
        if (record_crc32c(0, buf + off + 21, size - 21) != b.crc) {
            rc = ERR_CORRUPT_MESSAGE;
            break;
        }
        if (b.base_offset != log_end_offset(p->log)) {
            rc = ERR_OFFSET_OUT_OF_RANGE;
            break;
        }
        /* log_append writes the log end as base offset (the same) and the given epoch (the
         * leader's, unchanged); neither is covered by the CRC. */
        rc = log_append(p->log, buf + off, size, b.last_offset_delta, b.max_timestamp,
                        b.leader_epoch, &base);
        if (rc != 0)
            break;
        if (log_active_base(p->log) != base_before)
            replica_write_snapshot(p, log_active_base(p->log)); /* as partition_append */
        /* Followers build producer state as they replicate, so it moves with leadership. */
        if (b.producer_id >= 0) {
            enum record_control_type type;
            int32_t coord_epoch;
            int urc;
            b.base_offset = base;
            if ((b.attributes & RECORD_ATTR_CONTROL) &&
                record_control_parse(buf + off, size, &type, &coord_epoch) == 0)
                urc = record_marker(p, &b, type, coord_epoch, b.max_timestamp);
            else
                urc = pstate_update(p->pstate, &b, b.max_timestamp);
            if (urc != 0)
                slog_error("replica", "out of memory recording producer %lld on %s-%d",
                           (long long)b.producer_id, p->topic, p->index);
        }
        partition_maybe_flush(p, log_active_base(p->log) != base_before);
        off += size;
    }
    struct psm_effects fx;
    psm_fetched(p->sm, log_end_offset(p->log), leader_hw, leader_log_start, &fx);
    /* The leader's log start moved up (retention, DeleteRecords): this replica follows, as
     * far as the state machine allows (never past the HW). */
    if (psm_log_start(p->sm) > log_start_offset(p->log))
        (void)log_delete_records(p->log, psm_log_start(p->sm)); /* kept by the checkpoint */
    if (off > 0)
        partition_marks_changed(p);
    fx.hw_changed = fx.hw_changed && off == 0;
    partition_effects(p, &fx);
    return rc;
}

int partition_follower_fetch(struct partition *p, const struct psm_fetch *f,
                             struct psm_fetch_verdict *v)
{
    struct psm_effects fx;
    int rc = psm_follower_fetch(p->sm, f, tclock_mono_ms(p->rm->clock), v, &fx);
    partition_effects(p, &fx);
    return rc;
}

/* ---- replication throttles (throttle.h) ---------------------------------------------------- */

size_t partition_leader_throttle(struct partition *p, int32_t replica_id, size_t budget,
                                 size_t claimed, bool *counted)
{
    struct replica_mgr *rm = p->rm;
    int64_t now, rate;
    *counted = p->leader_throttled;
    if (!p->leader_throttled)
        return budget;
    /* A dynamic broker config, read where it is used (per broker, then cluster-wide). */
    rate = config_broker_int(&rm->cfg, "leader.replication.throttled.rate", INT64_MAX);
    now = tclock_mono_ms(rm->clock);
    return (size_t)throttle_budget(true, psm_in_isr(p->sm, replica_id),
                                   throttle_headroom(&rm->leader_quota, now, rate),
                                   (int64_t)claimed, (int64_t)budget);
}

void partition_leader_sent(struct partition *p, size_t bytes)
{
    if (p->leader_throttled)
        throttle_record(&p->rm->leader_quota, tclock_mono_ms(p->rm->clock), (int64_t)bytes);
}

int64_t partition_follower_throttle(struct partition *p, int64_t budget, int64_t claimed,
                                    bool *counted)
{
    struct replica_mgr *rm = p->rm;
    int64_t now, rate;
    *counted = p->follower_throttled;
    if (!p->follower_throttled)
        return budget;
    rate = config_broker_int(&rm->cfg, "follower.replication.throttled.rate", INT64_MAX);
    now = tclock_mono_ms(rm->clock);
    return throttle_budget(true, psm_in_isr(p->sm, rm->node_id),
                           throttle_headroom(&rm->follower_quota, now, rate), claimed, budget);
}

void partition_follower_fetched(struct partition *p, size_t bytes)
{
    if (p->follower_throttled)
        throttle_record(&p->rm->follower_quota, tclock_mono_ms(p->rm->clock), (int64_t)bytes);
}

void partition_diverging(struct partition *p, int32_t epoch, int64_t end_offset)
{
    struct psm_effects fx;
    psm_diverging(p->sm, epoch, end_offset, &fx);
    partition_effects(p, &fx);
}

void partition_out_of_range(struct partition *p, int64_t leader_log_start, int64_t leader_log_end)
{
    struct psm_effects fx;
    psm_out_of_range(p->sm, leader_log_start, leader_log_end, &fx);
    if (fx.reset)
        slog_warn("replica",
                  "%s-%d: leader %d's log starts at %lld, past this replica's end %lld; "
                  "starting the replica over from there",
                  p->topic, p->index, psm_leader(p->sm), (long long)fx.reset_to,
                  (long long)log_end_offset(p->log));
    else if (!fx.truncate && !psm_fetch_checks_epoch(p->sm))
        slog_warn("replica",
                  "%s-%d: leader %d knows no leader epoch at or below this replica's latest %d; "
                  "fetching once without it",
                  p->topic, p->index, psm_leader(p->sm), (int)partition_last_fetched_epoch(p));
    partition_effects(p, &fx);
}

int32_t partition_fetch_last_epoch(const struct partition *p)
{
    return psm_fetch_checks_epoch(p->sm) ? log_latest_epoch(p->log) : -1;
}

/* The one way a follower's log moves down: the log, its epoch cache and .txnindex, the
 * producer state (rebuilt from the newest snapshot at or below the cut plus the log after it,
 * as a restart does), the high watermark and every mark, together. A cut below the old high
 * watermark (after an unclean election) drops records a consumer may have read: one WARN line
 * names the range. */
int partition_truncate(struct partition *p, int64_t offset, bool below_hw)
{
    int64_t leo = log_end_offset(p->log), hw = psm_high_watermark(p->sm);
    struct psm_effects fx;
    int rc;

    if (offset >= leo) {
        /* Only epochs the log holds no record of go (psm_diverging may ask for that). */
        rc = log_truncate_to(p->log, offset);
        psm_truncated(p->sm, log_end_offset(p->log), &fx);
        partition_effects(p, &fx);
        replica_write_epochs(p);
        return rc;
    }
    if (below_hw)
        slog_warn("replica",
                  "%s-%d: truncating to offset %lld, below the high watermark %lld: records "
                  "%lld..%lld, which consumers may have read, are dropped (an unclean leader "
                  "election chose a leader without them)",
                  p->topic, p->index, (long long)offset, (long long)hw, (long long)offset,
                  (long long)(hw - 1));
    else
        slog_info("replica",
                  "%s-%d: truncating the diverged tail %lld..%lld (the leader's log "
                  "differs there)",
                  p->topic, p->index, (long long)offset, (long long)(leo - 1));
    rc = log_truncate_to(p->log, offset);
    if (rc == 0) {
        struct pstate *old = p->pstate;
        p->pstate = NULL;
        rc = load_producers(p);
        if (rc == 0)
            pstate_free(old);
        else {
            pstate_free(p->pstate);
            p->pstate = old;
            pstate_truncate(p->pstate, offset); /* the best that is left */
        }
    }
    if (rc != 0)
        slog_error("replica", "%s-%d: truncation to %lld failed: %s", p->topic, p->index,
                   (long long)offset, err_name(rc));
    psm_truncated(p->sm, log_end_offset(p->log), &fx);
    partition_marks_changed(p);
    fx.hw_changed = false;
    partition_effects(p, &fx);
    replica_write_epochs(p);
    return rc;
}

int partition_reset_to(struct partition *p, int64_t offset)
{
    struct psm_effects fx;
    int rc = log_reset(p->log, offset);
    if (rc == 0) {
        struct pstate *old = p->pstate;
        p->pstate = NULL;
        rc = load_producers(p);
        if (rc == 0)
            pstate_free(old);
        else {
            pstate_free(p->pstate);
            p->pstate = old;
            pstate_truncate(p->pstate, 0);
        }
    }
    if (rc != 0)
        slog_error("replica", "%s-%d: cannot start the log over at %lld: %s", p->topic, p->index,
                   (long long)offset, err_name(rc));
    psm_set_log(p->sm, log_start_offset(p->log), log_end_offset(p->log));
    psm_truncated(p->sm, log_end_offset(p->log), &fx);
    partition_marks_changed(p);
    fx.hw_changed = false;
    partition_effects(p, &fx);
    replica_write_epochs(p);
    return rc;
}

void partition_log_moved(struct partition *p)
{
    psm_set_log(p->sm, log_start_offset(p->log), log_end_offset(p->log));
    assert(offsets_ordered(p));
}

int partition_write_marker(struct partition *p, int64_t producer_id, int16_t producer_epoch,
                           int32_t coordinator_epoch, bool commit, int64_t *offset)
{
    uint8_t *batch = NULL;
    size_t len = 0;
    struct record_batch hdr;
    int64_t append_time;
    int rc;

    *offset = -1;
    if (psm_role(p->sm) != PSM_LEADER)
        return ERR_NOT_LEADER_OR_FOLLOWER;
    rc = record_build_control(producer_id, producer_epoch, coordinator_epoch,
                              commit ? RECORD_CONTROL_COMMIT : RECORD_CONTROL_ABORT,
                              tclock_now_ms(p->rm->clock), &batch, &len);
    if (rc != 0)
        return rc;
    rc = record_batch_parse(batch, len, &hdr);
    if (rc == 0)
        rc = partition_append(p, batch, len, &hdr, offset, &append_time);
    free(batch);
    return rc;
}

bool partition_txn_verified(const struct partition *p, int64_t producer_id, int16_t epoch)
{
    return pstate_txn_verified(p->pstate, producer_id, epoch);
}

uint32_t partition_verify_begin(struct partition *p, int64_t producer_id, int16_t epoch)
{
    return pstate_verify_begin(p->pstate, producer_id, epoch);
}

bool partition_verify_park(struct partition *p, int64_t producer_id, int delta)
{
    return pstate_verify_park(p->pstate, producer_id, delta);
}

uint32_t partition_verify_parked(const struct partition *p, int64_t producer_id)
{
    return pstate_verify_parked(p->pstate, producer_id);
}

bool partition_verify_done(struct partition *p, int64_t producer_id, int16_t epoch, uint32_t token)
{
    return pstate_verify_done(p->pstate, producer_id, epoch, token);
}

/* How long the producer has not written here, by the monotonic clock. */
static int64_t idle_ms(const struct partition *p, const struct pstate_producer *pr, int64_t now)
{
    int64_t last = pr->last_write_mono_ms >= 0 ? pr->last_write_mono_ms : p->opened_mono_ms;
    return now - last;
}

size_t partition_idle_txns(const struct partition *p, int64_t older_than_ms,
                           struct partition_idle_txn *out, size_t max)
{
    const struct pstate_producer *prods;
    int64_t now = tclock_mono_ms(p->rm->clock);
    size_t n, k = 0;

    if (psm_role(p->sm) != PSM_LEADER || pstate_first_unstable_offset(p->pstate) < 0)
        return 0;
    prods = pstate_producers(p->pstate, &n);
    for (size_t i = 0; i < n; i++) {
        int64_t idle = idle_ms(p, &prods[i], now);
        if (prods[i].txn_first_offset < 0 || idle <= older_than_ms)
            continue;
        if (k < max)
            out[k] = (struct partition_idle_txn){.producer_id = prods[i].producer_id,
                                                 .producer_epoch = prods[i].epoch,
                                                 .first_offset = prods[i].txn_first_offset,
                                                 .idle_ms = idle};
        k++;
    }
    return k;
}

bool partition_gap_from_before(const struct partition *p, const struct record_batch *hdr,
                               int64_t now_ms)
{
    int64_t since = psm_took_over_ms(p->sm);
    if (since < 0 || now_ms - since >= PARTITION_TAKEOVER_GRACE_MS || hdr->producer_id < 0)
        return false;
    const struct pstate_producer *pr = pstate_get(p->pstate, hdr->producer_id);
    if (pr == NULL || pr->n_batches == 0)
        return true;
    const struct pstate_batch *last = &pr->batches[pr->n_batches - 1];
    if (last->last_offset >= psm_epoch_start_offset(p->sm))
        return false; /* it wrote here in this epoch: the gap is its own */
    return hdr->producer_epoch != pr->epoch || hdr->base_sequence > last->last_seq;
}

int partition_abort_txn(struct partition *p, int64_t producer_id, int64_t first_offset,
                        int64_t older_than_ms)
{
    const struct pstate_producer *pr = pstate_get(p->pstate, producer_id);
    int64_t idle, offset;
    int16_t epoch;
    int rc;

    if (psm_role(p->sm) != PSM_LEADER)
        return ERR_NOT_LEADER_OR_FOLLOWER;
    if (pr == NULL || pr->txn_first_offset != first_offset || pr->verify_parked > 0)
        return ERR_INVALID_TXN_STATE;
    idle = idle_ms(p, pr, tclock_mono_ms(p->rm->clock));
    if (idle <= older_than_ms)
        return ERR_INVALID_TXN_STATE;
    epoch = pr->epoch;
    rc = partition_write_marker(p, producer_id, epoch, pr->coordinator_epoch, false, &offset);
    if (rc != 0)
        return rc;
    slog_warn("replica",
              "%s-%d: aborted the hanging transaction of producer %lld (epoch %d) that started "
              "at offset %lld and last wrote here %lld ms ago, longer than "
              "transaction.max.timeout.ms allows, and that no transaction coordinator has "
              "open: ABORT marker at offset %lld",
              p->topic, p->index, (long long)producer_id, epoch, (long long)first_offset,
              (long long)idle, (long long)offset);
    return 0;
}
