/* SPDX-License-Identifier: Apache-2.0 */
/* Loading a shard: the __consumer_offsets partition is replayed from its log start to its log
 * end. Each step reads at most LOAD_READ_BYTES of whole batches on the thread pool, then
 * parses them on the loop — one step per loop turn, so ten thousand groups never hold the
 * loop for long. Groups come back from their last GroupMetadataValue (group_sm_restore),
 * offsets from their last OffsetCommitValue; tombstones delete; records of transactional
 * batches wait for their producer's marker (COMMIT: committed offsets; ABORT: dropped).
 * Requests meanwhile get COORDINATOR_LOAD_IN_PROGRESS. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/arena.h"
#include "base/err.h"
#include "base/slog.h"
#include "group_int.h"
#include "record/record.h"

#define LOAD_READ_BYTES ((size_t)1 << 20)
/* After a failed read the load tries again this much later (the shard answers
 * COORDINATOR_LOAD_IN_PROGRESS meanwhile). */
#define LOAD_RETRY_MS 1000

void coord_maybe_finish_stop(struct group_coord *gc);

struct load {
    struct shard *sh;
    uv_work_t work;
    struct partition *p; /* held while a read is out */
    struct partition_slice slice;
    uint8_t *buf;
    size_t len;
    int rc;
    int64_t next; /* the next offset to read */
    bool reading;
    bool abandoned;
    int64_t batches, records;
    struct tclock_timer retry;
};

static void load_step(struct load *ld);

/* Thread pool: the slice's bytes into a buffer. Touches only the slice (held). */
static void do_read(uv_work_t *w)
{
    struct load *ld = w->data;
    size_t got = 0;

    ld->buf = malloc(ld->slice.len);
    if (ld->buf == NULL) {
        ld->rc = ERR_NOMEM;
        return;
    }
    while (got < ld->slice.len) {
        ssize_t n = pread(ld->slice.fd, ld->buf + got, ld->slice.len - got,
                          (off_t)(ld->slice.pos + (int64_t)got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            ld->rc = ERR_IO;
            return;
        }
        got += (size_t)n;
    }
    ld->len = got;
    ld->rc = 0;
}

void coord_apply_record(struct shard *sh, const uint8_t *key, int32_t key_len, const uint8_t *value,
                        int32_t value_len, int64_t producer_id, int64_t timestamp)
{
    struct arena *ar = arena_new(16 << 20);
    struct coord_key k;
    struct coord_group *g;
    int rc;

    (void)timestamp;
    if (ar == NULL)
        goto nomem;
    rc = coord_key_decode(key, key_len, &k, ar);
    if (rc != 0 || k.type == COORD_KEY_OTHER) {
        if (rc != 0)
            slog_warn_limited(&sh->gc->replay_warn, 10000, "group",
                              "%s-%d: skipping a record whose key does not decode (%s)",
                              GROUP_TOPIC, sh->partition, err_name(rc));
        goto out;
    }
    if (k.type == COORD_KEY_OFFSET) {
        struct coord_offset_value v;
        if (value == NULL) {
            g = coord_group_find(sh, k.group);
            struct coord_offset *o = g ? coord_offset_find(g, k.topic, k.partition) : NULL;
            if (o)
                coord_offset_delete(g, o);
            goto out;
        }
        rc = coord_offset_value_decode(value, value_len, &v, ar);
        if (rc != 0) {
            slog_warn_limited(&sh->gc->replay_warn, 10000, "group",
                              "%s-%d: skipping an offset of group %s that does not decode (%s)",
                              GROUP_TOPIC, sh->partition, k.group, err_name(rc));
            goto out;
        }
        if (producer_id >= 0)
            rc = coord_pending_add(sh, producer_id, k.group, k.topic, k.partition, v.offset,
                                   v.leader_epoch, v.metadata, v.commit_ts);
        else if ((g = coord_group_get(sh, k.group)) != NULL)
            rc = coord_offset_set(g, k.topic, k.partition, v.offset, v.leader_epoch, v.metadata,
                                  v.commit_ts);
        else
            rc = ERR_NOMEM;
        if (rc != 0)
            goto nomem;
        goto out;
    }
    /* Group metadata: the last value wins; a tombstone forgets the membership. */
    g = value ? coord_group_get(sh, k.group) : coord_group_find(sh, k.group);
    if (g == NULL) {
        if (value)
            goto nomem;
        goto out;
    }
    struct group_sm_owner owner = coord_sm_owner_template;
    owner.arg = g;
    struct group_sm *fresh = group_sm_new(g->id, sh->gc->clock, &sh->gc->sm_cfg, &owner);
    if (fresh == NULL)
        goto nomem;
    group_sm_free(g->sm, ERR_NOT_COORDINATOR);
    g->sm = fresh;
    if (value == NULL) {
        g->metadata_in_log = false;
        if (g->offsets.n == 0)
            coord_group_free(g, ERR_NOT_COORDINATOR);
        goto out;
    }
    struct group_sm_snapshot snap;
    rc = coord_group_value_decode(value, value_len, &snap, ar);
    if (rc == 0)
        rc = group_sm_restore(fresh, &snap);
    if (rc != 0)
        slog_warn_limited(&sh->gc->replay_warn, 10000, "group",
                          "%s-%d: the metadata of group %s does not decode (%s); it starts Empty",
                          GROUP_TOPIC, sh->partition, g->id, err_name(rc));
    g->metadata_in_log = true;
    goto out;

nomem:
    slog_error("group", "out of memory replaying %s-%d", GROUP_TOPIC, sh->partition);
out:
    arena_free(ar);
}

/* Parses the batches read (on the loop). Returns the offset after the last whole batch. */
static void parse_batches(struct load *ld)
{
    struct shard *sh = ld->sh;
    size_t pos = 0;

    while (pos + RECORD_BATCH_HEADER <= ld->len) {
        struct record_batch hdr;
        const uint8_t *b = ld->buf + pos;
        size_t left = ld->len - pos;
        if (record_batch_parse(b, left, &hdr) != 0)
            break;
        size_t size = record_batch_size(&hdr);
        int64_t last = record_batch_last_offset(&hdr);
        pos += size;
        if (last < ld->next)
            continue; /* already applied (a re-read of a batch) */
        ld->next = last + 1;
        ld->batches++;
        if (hdr.attributes & RECORD_ATTR_CONTROL) {
            enum record_control_type type;
            int32_t coordinator_epoch;
            if (record_control_parse(b, size, &type, &coordinator_epoch) == 0)
                coord_pending_complete(sh, hdr.producer_id, type == RECORD_CONTROL_COMMIT);
            continue;
        }
        bool txn = (hdr.attributes & RECORD_ATTR_TRANSACTIONAL) && hdr.producer_id >= 0;
        struct record_iter it;
        struct record_item rec;
        int rc = record_iter_init(&it, b, size, RECORD_DECOMPRESS_MAX);
        while (rc == 0 && (rc = record_iter_next(&it, &rec)) == 0) {
            ld->records++;
            if (rec.key == NULL)
                continue;
            coord_apply_record(sh, rec.key, rec.key_len, rec.value, rec.value_len,
                               txn ? hdr.producer_id : -1, rec.timestamp);
        }
        record_iter_close(&it);
        if (rc != ERR_NOTFOUND)
            slog_warn_limited(&sh->gc->replay_warn, 10000, "group",
                              "%s-%d: a batch at offset %lld does not decode (%s); skipped",
                              GROUP_TOPIC, sh->partition, (long long)hdr.base_offset, err_name(rc));
    }
}

static void load_free(struct load *ld)
{
    tclock_timer_close(&ld->retry);
    free(ld->buf);
    free(ld);
}

static void load_finish(struct load *ld)
{
    struct shard *sh = ld->sh;
    int64_t ms = tclock_mono_ms(sh->gc->clock) - sh->load_start_ms;
    sh->load = NULL;
    sh->loading = false;
    /* Fifty empty partitions load at every start: only loads with something in them say so. */
    slog_line(ld->records > 0 ? SLOG_INFO : SLOG_DEBUG, "group",
              "loaded %s-%d (epoch %d): %zu groups from %lld records in %lld ms", GROUP_TOPIC,
              sh->partition, sh->epoch, sh->groups.n, (long long)ld->records, (long long)ms);
    load_free(ld);
}

static void after_read(uv_work_t *w, int status)
{
    struct load *ld = w->data;
    struct shard *sh = ld->sh;
    struct group_coord *gc = sh->gc;

    ld->reading = false;
    gc->reads_out--;
    gc->reads_done++;
    partition_slice_release(ld->p, &ld->slice);
    partition_release(ld->p);
    ld->p = NULL;
    if (ld->abandoned) {
        load_free(ld);
        if (sh->dead)
            coord_shard_free(sh);
        coord_maybe_finish_stop(gc);
        return;
    }
    if (status != 0 || ld->rc != 0) {
        slog_error("group", "reading %s-%d at offset %lld failed (%s); retrying in %d ms",
                   GROUP_TOPIC, sh->partition, (long long)ld->next,
                   status != 0 ? uv_strerror(status) : err_name(ld->rc), LOAD_RETRY_MS);
        free(ld->buf);
        ld->buf = NULL;
        if (tclock_timer_start(&ld->retry, LOAD_RETRY_MS, 0) != 0)
            slog_error("group", "out of memory: %s-%d stays loading", GROUP_TOPIC, sh->partition);
        return;
    }
    parse_batches(ld);
    free(ld->buf);
    ld->buf = NULL;
    ld->len = 0;
    load_step(ld);
}

static void load_step(struct load *ld)
{
    struct shard *sh = ld->sh;
    struct group_coord *gc = sh->gc;
    struct partition *p = replica_partition(gc->replicas, GROUP_TOPIC, sh->partition);
    int rc;

    if (p == NULL) {
        /* The partition went; the event that says so unloads the shard. */
        slog_warn("group", "%s-%d is not hosted any more; its load stops", GROUP_TOPIC,
                  sh->partition);
        return;
    }
    if (ld->next < partition_log_start_offset(p))
        ld->next = partition_log_start_offset(p);
    rc = partition_read(p, ld->next, LOAD_READ_BYTES, PARTITION_READ_REPLICA, &ld->slice);
    if (rc == ERR_OFFSET_OUT_OF_RANGE && ld->next >= partition_log_end_offset(p))
        ld->slice.len = 0, rc = 0;
    if (rc != 0) {
        slog_error("group", "reading %s-%d at offset %lld failed (%s); retrying in %d ms",
                   GROUP_TOPIC, sh->partition, (long long)ld->next, err_name(rc), LOAD_RETRY_MS);
        if (tclock_timer_start(&ld->retry, LOAD_RETRY_MS, 0) != 0)
            slog_error("group", "out of memory: %s-%d stays loading", GROUP_TOPIC, sh->partition);
        return;
    }
    if (ld->slice.len == 0) {
        partition_slice_release(p, &ld->slice);
        load_finish(ld);
        return;
    }
    partition_hold(p);
    ld->p = p;
    ld->reading = true;
    ld->work.data = ld;
    gc->reads_out++;
    rc = uv_queue_work(gc->loop, &ld->work, do_read, after_read);
    if (rc != 0) {
        /* The pool refused: read here, once, rather than never load. */
        do_read(&ld->work);
        after_read(&ld->work, 0);
    }
}

static void on_retry(struct tclock_timer *t)
{
    load_step(t->data);
}

void coord_load_start(struct shard *sh)
{
    struct load *ld = calloc(1, sizeof *ld);
    if (ld == NULL) {
        slog_error("group", "out of memory loading %s-%d", GROUP_TOPIC, sh->partition);
        return;
    }
    ld->sh = sh;
    tclock_timer_init(sh->gc->clock, &ld->retry, on_retry, ld);
    sh->load = ld;
    sh->load_start_ms = tclock_mono_ms(sh->gc->clock);
    slog_debug("group", "loading %s-%d (epoch %d)", GROUP_TOPIC, sh->partition, sh->epoch);
    load_step(ld);
}

void coord_load_abandon(struct shard *sh)
{
    struct load *ld = sh->load;
    if (ld == NULL)
        return;
    if (ld->reading) {
        ld->abandoned = true; /* after_read frees it (and the shard, once dead) */
        return;
    }
    sh->load = NULL;
    load_free(ld);
}
