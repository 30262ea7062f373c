/* SPDX-License-Identifier: Apache-2.0 */
/* partition: one hosted partition — its log, high watermark, settings and the marks deferred
 * requests wait on. */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"
#include "base/log.h"
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

/* 1 if dir holds a partition.metadata naming another topic id, 0 if it matches or is new. */
static int check_metadata_file(const char *dir, const uint8_t id[16])
{
    char path[PATH_MAX + 32], want[23], line[128];
    FILE *f;
    int other = 0;
    snprintf(path, sizeof path, "%s/partition.metadata", dir);
    topic_id_string(id, want);
    f = fopen(path, "r");
    if (f == NULL)
        return 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "topic_id: ", 10) == 0)
            other = strncmp(line + 10, want, 22) != 0;
    fclose(f);
    return other;
}

/* 0 or -errno (base/err.h). */
static int write_metadata_file(const char *dir, const uint8_t id[16])
{
    char path[PATH_MAX + 32], idstr[23];
    FILE *f;
    snprintf(path, sizeof path, "%s/partition.metadata", dir);
    topic_id_string(id, idstr);
    f = fopen(path, "w");
    if (f == NULL)
        return -errno;
    fprintf(f, "version: 0\ntopic_id: %s\n", idstr);
    return fclose(f) == 0 ? 0 : -errno;
}

/* Removes a partition directory: its files, then itself. Partition directories are flat. */
void partition_remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[PATH_MAX * 2];
    if (d == NULL)
        return;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (unlink(path) != 0)
            log_warn("replica", "cannot delete %s: %s", path, strerror(errno));
    }
    closedir(d);
    if (rmdir(dir) != 0)
        log_warn("replica", "cannot delete %s: %s", dir, strerror(errno));
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
    /* The older single bound still applies in both directions when set. */
    if (diff < s->ts_before_max_ms)
        s->ts_before_max_ms = diff;
    if (diff < s->ts_after_max_ms)
        s->ts_after_max_ms = diff;
    if (p->log) {
        log_config_for(p, &lc);
        log_set_config(p->log, &lc);
    }
}

/* Rebuilds producer state from the newest snapshot plus the batches after it, reading only
 * batch headers. */
static int load_producers(struct partition *p)
{
    int64_t from, leo = log_end_offset(p->log);
    int rc;

    p->pstate = pstate_new();
    if (p->pstate == NULL)
        return ERR_NOMEM;
    rc = pstate_snapshot_load(p->pstate, p->dir, leo, &from);
    if (rc != 0)
        return rc;
    if (from < log_start_offset(p->log))
        from = log_start_offset(p->log);
    while (from < leo) {
        struct log_slice sl;
        rc = log_read(p->log, from, leo, 1 << 20, &sl);
        if (rc != 0 || sl.len == 0)
            break;
        off_t pos = sl.pos, end = sl.pos + (off_t)sl.len;
        int64_t next = from;
        while (rc == 0 && end - pos >= RECORD_BATCH_HEADER) {
            uint8_t hdr[RECORD_BATCH_HEADER];
            struct record_batch b;
            if (pread(sl.fd, hdr, sizeof hdr, pos) != (ssize_t)sizeof hdr ||
                record_batch_parse_header(hdr, sizeof hdr, &b) != 0) {
                rc = ERR_IO;
                break;
            }
            if (b.producer_id >= 0 && record_batch_last_offset(&b) >= from)
                rc = pstate_update(p->pstate, &b, b.max_timestamp);
            pos += (off_t)record_batch_size(&b);
            next = record_batch_last_offset(&b) + 1;
        }
        log_slice_release(p->log, &sl);
        if (next <= from)
            break;
        from = next;
    }
    if (rc != 0)
        log_error("replica", "cannot rebuild producer state of %s-%d: %s", p->topic, p->index,
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

int partition_open(struct replica_mgr *rm, const char *topic, const uint8_t id[16], int32_t index,
                   int32_t leader_epoch, struct partition **out)
{
    struct partition *p = calloc(1, sizeof *p);
    struct log_config lc;
    int rc = ERR_NOMEM;

    if (p == NULL || (p->topic = strdup(topic)) == NULL)
        goto err;
    p->rm = rm;
    p->index = index;
    memcpy(p->topic_id, id, 16);
    p->leader_epoch = leader_epoch;
    p->refs = 1;
    p->online = true;
    int n = snprintf(p->dir, sizeof p->dir, "%s/%s-%d", rm->dir, topic, index);
    if (n < 0 || (size_t)n >= sizeof p->dir) {
        log_error("replica", "partition directory name for %s-%d is too long", topic, index);
        rc = ERR_IO;
        goto err;
    }

    if (check_metadata_file(p->dir, id)) {
        /* Another topic's data (a deleted topic of the same name, or a directory copied in by
         * hand): not ours to serve, and not ours to delete either. It is moved aside and this
         * partition stays offline until an operator has looked. */
        char aside[PATH_MAX + 64];
        snprintf(aside, sizeof aside, "%s.%lld-mismatch", p->dir,
                 (long long)tclock_now_ms(rm->clock));
        if (rename(p->dir, aside) == 0)
            log_error("replica",
                      "%s/partition.metadata names another topic id than topic %s's; moved the "
                      "directory aside to %s and left %s-%d offline",
                      p->dir, topic, aside, topic, index);
        else
            log_error("replica",
                      "%s/partition.metadata names another topic id than topic %s's and it "
                      "cannot be moved aside (%s); %s-%d stays offline",
                      p->dir, topic, strerror(errno), topic, index);
        rc = ERR_IO;
        goto err;
    }
    if (mkdir(p->dir, 0755) != 0 && errno != EEXIST) {
        log_error("replica", "cannot create %s: %s", p->dir, strerror(errno));
        rc = ERR_IO;
        goto err;
    }
    if ((rc = write_metadata_file(p->dir, id)) != 0) {
        log_error("replica", "cannot write %s/partition.metadata: %s", p->dir, strerror(-rc));
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
        log_warn("replica",
                 "%s-%d: log-start-offset-checkpoint says %lld, past the log end %lld; clamped "
                 "the log start to %lld, so no record below it is served",
                 topic, index, (long long)start, (long long)log_end_offset(p->log),
                 (long long)log_start_offset(p->log));
    log_epoch_assign(p->log, leader_epoch, log_end_offset(p->log));
    rc = load_producers(p);
    if (rc != 0) {
        log_close(p->log, false);
        pstate_free(p->pstate);
        goto err;
    }
    /* One replica: everything in the log is committed. */
    p->high_watermark = log_end_offset(p->log);
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
        pstate_snapshot_write(p->pstate, p->dir, log_end_offset(p->log)) == 0)
        pstate_snapshot_prune(p->dir, 2);
    pstate_free(p->pstate);
    /* A deleted partition's directory is gone: nothing to flush or trim. */
    log_close(p->log, !p->deleted);
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
    p->online = false;
    p->deleted = delete_dir;
    for (int m = PARTITION_LOG_END; m <= PARTITION_DURABLE; m++)
        purgatory_point_close(&p->marks[m]);
    if (delete_dir) {
        char gone[PATH_MAX + 64];
        int n = snprintf(gone, sizeof gone, "%s.%lld-delete", p->dir, (long long)getpid());
        if (n > 0 && (size_t)n < sizeof p->dir && rename(p->dir, gone) == 0)
            memcpy(p->dir, gone, (size_t)n + 1);
        partition_remove_dir(p->dir);
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
    /* Nobody flushes for a waiter unless asked: flush.messages and flush.ms default to
     * never, and durability comes from replication. */
    if (mark == PARTITION_DURABLE)
        partition_maybe_flush(p, true);
    return false;
}

void partition_marks_changed(struct partition *p)
{
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
    return p->leader_epoch;
}
int64_t partition_high_watermark(const struct partition *p)
{
    return p->high_watermark;
}
int64_t partition_last_stable_offset(const struct partition *p)
{
    /* No transactions yet: nothing is pending, so the LSO is the high watermark. */
    return p->high_watermark;
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
    int rc;

    *append_time = -1;
    if (hdr->producer_id >= 0) {
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
    rc = log_append(p->log, batch, len, hdr->last_offset_delta, max_ts, p->leader_epoch,
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
        if (pstate_update(p->pstate, &appended, tclock_now_ms(p->rm->clock)) != 0)
            log_error("replica", "out of memory recording producer %lld on %s-%d",
                      (long long)hdr->producer_id, p->topic, p->index);
    }
    p->high_watermark = log_end_offset(p->log);
    partition_maybe_flush(p, rolled);
    partition_marks_changed(p);
    return 0;
}
