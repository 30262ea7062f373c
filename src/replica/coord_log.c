/* SPDX-License-Identifier: Apache-2.0 */
/* Coordinator logs (replica.h): the shards of a coordinator topic led here, their replay on
 * the thread pool in slices, and their acks=all appends. Shared by the group and the
 * transaction coordinators. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "base/pool.h"
#include "base/slog.h"
#include "base/tclock.h"
#include "meta/meta.h"
#include "pstate/pstate.h"
#include "record/record.h"
#include "coord_log.h"
#include "replica.h"

#define LOAD_READ_BYTES ((size_t)1 << 20)
/* After a failed read the load tries again this much later (the owner answers
 * COORDINATOR_LOAD_IN_PROGRESS meanwhile). */
#define LOAD_RETRY_MS 1000
/* A read that waits for the background check of the partition's files (log/check.c): that
 * segment is checked next, so look again soon. */
#define LOAD_PENDING_MS 20

struct cl_load;

struct cl_shard {
    int32_t partition;
    int32_t epoch;
    void *owner;
    bool loading;
    struct cl_load *load;
    struct coord_log_append appends; /* sentinel of the appends in flight */
};

struct cl_load {
    struct coord_log *cl;
    struct cl_shard *sh; /* NULL once abandoned */
    struct pool_job work;
    struct partition *p; /* held while a read is out */
    struct partition_slice slice;
    uint8_t *buf;
    size_t len;
    int rc;
    int64_t next; /* the next offset to read */
    bool reading;
    int64_t records;
    int64_t start_ms;
    struct tclock_timer retry;
};

struct coord_log {
    uv_loop_t *loop;
    struct tclock *clock;
    struct replica_mgr *replicas;
    char *topic;
    const char *module;
    int64_t append_timeout_ms;
    const struct coord_log_ops *ops;
    void *arg;
    struct purgatory *pg;
    struct cl_shard **shards; /* indexed by partition; NULL = not led here */
    int32_t n_shards;
    unsigned reads_out;
    uint64_t reads_done;
    bool stopping;
    void (*stop_cb)(void *arg);
    void *stop_arg;
    struct slog_limit warn;
};

static void load_step(struct cl_load *ld);

/* ---- replay ------------------------------------------------------------------------------- */

/* Thread pool: the slice's bytes into a buffer. Touches only the slice (held). */
static void do_read(uv_work_t *w)
{
    struct cl_load *ld = w->data;
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

/* Hands the records of the batches read to the owner (on the loop). */
static void parse_batches(struct cl_load *ld)
{
    struct coord_log *cl = ld->cl;
    struct cl_shard *sh = ld->sh;
    size_t pos = 0;

    while (pos + RECORD_BATCH_HEADER <= ld->len && ld->sh == sh) {
        struct record_batch hdr;
        const uint8_t *b = ld->buf + pos;
        if (record_batch_parse(b, ld->len - pos, &hdr) != 0)
            break;
        size_t size = record_batch_size(&hdr);
        int64_t last = record_batch_last_offset(&hdr);
        pos += size;
        if (last < ld->next)
            continue; /* already applied (a re-read of a batch) */
        ld->next = last + 1;
        struct coord_log_record r = {
            .offset = hdr.base_offset,
            .timestamp = hdr.max_timestamp,
            .producer_id = hdr.producer_id,
            .producer_epoch = hdr.producer_epoch,
            .transactional = (hdr.attributes & RECORD_ATTR_TRANSACTIONAL) != 0,
            .coordinator_epoch = -1,
        };
        if (hdr.attributes & RECORD_ATTR_CONTROL) {
            enum record_control_type type;
            int32_t coordinator_epoch;
            if (record_control_parse(b, size, &type, &coordinator_epoch) == 0) {
                r.control = true;
                r.commit = type == RECORD_CONTROL_COMMIT;
                r.coordinator_epoch = coordinator_epoch;
                ld->records++;
                cl->ops->replay(sh->owner, &r);
            }
            continue;
        }
        struct record_iter it;
        struct record_item rec;
        int rc = record_iter_init(&it, b, size, RECORD_DECOMPRESS_MAX);
        while (rc == 0 && (rc = record_iter_next(&it, &rec)) == 0) {
            ld->records++;
            r.offset = rec.offset;
            r.timestamp = rec.timestamp;
            r.key = rec.key;
            r.key_len = rec.key_len;
            r.value = rec.value;
            r.value_len = rec.value_len;
            cl->ops->replay(sh->owner, &r);
        }
        record_iter_close(&it);
        if (rc != ERR_NOTFOUND)
            slog_warn_limited(&cl->warn, 10000, cl->module,
                              "%s-%d: a batch at offset %lld does not decode (%s); skipped",
                              cl->topic, sh->partition, (long long)hdr.base_offset, err_name(rc));
    }
}

static void load_free(struct cl_load *ld)
{
    tclock_timer_close(&ld->retry);
    free(ld->buf);
    free(ld);
}

static void maybe_finish_stop(struct coord_log *cl)
{
    if (!cl->stopping || cl->reads_out > 0 || cl->stop_cb == NULL)
        return;
    void (*cb)(void *) = cl->stop_cb;
    void *arg = cl->stop_arg;
    cl->stop_cb = NULL;
    purgatory_free(cl->pg);
    free(cl->shards);
    free(cl->topic);
    free(cl);
    cb(arg);
}

static void load_finish(struct cl_load *ld)
{
    struct cl_shard *sh = ld->sh;
    struct coord_log *cl = ld->cl;
    int64_t ms = tclock_mono_ms(cl->clock) - ld->start_ms;
    int64_t records = ld->records;

    sh->load = NULL;
    sh->loading = false;
    load_free(ld);
    cl->ops->loaded(sh->owner, records, ms);
}

static void retry_later(struct cl_load *ld, const char *why)
{
    struct coord_log *cl = ld->cl;
    slog_error(cl->module, "reading %s-%d at offset %lld failed (%s); retrying in %d ms", cl->topic,
               ld->sh->partition, (long long)ld->next, why, LOAD_RETRY_MS);
    if (tclock_timer_start(&ld->retry, LOAD_RETRY_MS, 0) != 0)
        slog_error(cl->module, "out of memory: %s-%d stays loading", cl->topic, ld->sh->partition);
}

static void after_read(uv_work_t *w, int status)
{
    struct cl_load *ld = w->data;
    struct coord_log *cl = ld->cl;

    ld->reading = false;
    cl->reads_out--;
    cl->reads_done++;
    partition_slice_release(ld->p, &ld->slice);
    partition_release(ld->p);
    ld->p = NULL;
    if (ld->sh == NULL) { /* abandoned: the shard went meanwhile */
        load_free(ld);
        maybe_finish_stop(cl);
        return;
    }
    if (status != 0 || ld->rc != 0) {
        free(ld->buf);
        ld->buf = NULL;
        retry_later(ld, status != 0 ? uv_strerror(status) : err_name(ld->rc));
        return;
    }
    struct cl_shard *sh = ld->sh;
    parse_batches(ld);
    if (sh->load != ld)
        return; /* a replay callback unloaded the shard (it freed ld) */
    free(ld->buf);
    ld->buf = NULL;
    ld->len = 0;
    load_step(ld);
}

static void load_step(struct cl_load *ld)
{
    struct coord_log *cl = ld->cl;
    struct cl_shard *sh = ld->sh;
    struct partition *p = replica_partition(cl->replicas, cl->topic, sh->partition);
    int rc;

    if (p == NULL) {
        /* The partition went; the event that says so unloads the shard. */
        slog_warn(cl->module, "%s-%d is not hosted any more; its load stops", cl->topic,
                  sh->partition);
        return;
    }
    if (ld->next < partition_log_start_offset(p))
        ld->next = partition_log_start_offset(p);
    rc = partition_read(p, ld->next, LOAD_READ_BYTES, PARTITION_READ_REPLICA, &ld->slice);
    if (rc == ERR_OFFSET_OUT_OF_RANGE && ld->next >= partition_log_end_offset(p))
        ld->slice.len = 0, rc = 0;
    if (rc != 0) {
        retry_later(ld, err_name(rc));
        return;
    }
    if (ld->slice.len == 0 && ld->slice.pending) {
        partition_slice_release(p, &ld->slice);
        if (tclock_timer_start(&ld->retry, LOAD_PENDING_MS, 0) != 0)
            slog_error(cl->module, "out of memory: %s-%d stays loading", cl->topic, sh->partition);
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
    ld->work.work.data = ld;
    cl->reads_out++;
    rc = pool_submit(cl->loop, &ld->work, do_read, after_read);
    if (rc != 0) {
        /* The pool refused: read here, once, rather than never load. */
        do_read(&ld->work.work);
        after_read(&ld->work.work, 0);
    }
}

static void on_retry(struct tclock_timer *t)
{
    load_step(t->data);
}

/* ---- shards ------------------------------------------------------------------------------- */

static int shards_reserve(struct coord_log *cl, int32_t partition)
{
    if (partition < cl->n_shards)
        return 0;
    int32_t n = partition + 1 > 2 * cl->n_shards ? partition + 1 : 2 * cl->n_shards;
    struct cl_shard **s = realloc(cl->shards, (size_t)n * sizeof *s);
    if (s == NULL)
        return ERR_NOMEM;
    for (int32_t i = cl->n_shards; i < n; i++)
        s[i] = NULL;
    cl->shards = s;
    cl->n_shards = n;
    return 0;
}

static void shard_load(struct coord_log *cl, int32_t partition, int32_t epoch)
{
    struct cl_shard *sh = NULL;
    struct cl_load *ld = NULL;

    if (shards_reserve(cl, partition) != 0 || (sh = calloc(1, sizeof *sh)) == NULL ||
        (ld = calloc(1, sizeof *ld)) == NULL)
        goto nomem;
    sh->partition = partition;
    sh->epoch = epoch;
    sh->loading = true;
    sh->appends.next = sh->appends.prev = &sh->appends;
    sh->owner = cl->ops->shard_new(cl->arg, partition, epoch);
    if (sh->owner == NULL)
        goto nomem;
    ld->cl = cl;
    ld->sh = sh;
    ld->start_ms = tclock_mono_ms(cl->clock);
    tclock_timer_init(cl->clock, &ld->retry, on_retry, ld);
    sh->load = ld;
    cl->shards[partition] = sh;
    slog_debug(cl->module, "loading %s-%d (epoch %d)", cl->topic, partition, epoch);
    load_step(ld);
    return;

nomem:
    slog_error(cl->module, "out of memory loading %s-%d", cl->topic, partition);
    free(ld);
    free(sh);
}

/* Leadership went: every append of the shard gets `err`, the owner drops its state. */
static void shard_unload(struct coord_log *cl, struct cl_shard *sh, int16_t err)
{
    cl->shards[sh->partition] = NULL;
    if (sh->load) {
        struct cl_load *ld = sh->load;
        sh->load = NULL;
        if (ld->reading)
            ld->sh = NULL; /* after_read frees it */
        else
            load_free(ld);
    }
    while (sh->appends.next != &sh->appends) {
        struct coord_log_append *ap = sh->appends.next;
        ap->unloaded = true;
        ap->err = err;
        purgatory_complete(&ap->op); /* unlinks it */
    }
    cl->ops->shard_free(sh->owner, err);
    free(sh);
}

static void on_leadership(void *arg, const struct replica_event *ev)
{
    struct coord_log *cl = arg;
    struct cl_shard *sh;

    if (cl->stopping || strcmp(ev->topic, cl->topic) != 0 || ev->partition < 0)
        return;
    sh = ev->partition < cl->n_shards ? cl->shards[ev->partition] : NULL;
    if (ev->role == REPLICA_LEADER) {
        if (sh && sh->epoch == ev->leader_epoch)
            return;
        /* A new epoch: what another leader wrote meanwhile is in the log, so load again. */
        if (sh)
            shard_unload(cl, sh, ERR_NOT_COORDINATOR);
        shard_load(cl, ev->partition, ev->leader_epoch);
        return;
    }
    if (sh)
        shard_unload(cl, sh, ERR_NOT_COORDINATOR);
}

uint64_t coord_log_reads(const struct coord_log *cl)
{
    return cl->reads_done;
}

size_t coord_log_waiting(const struct coord_log *cl)
{
    return cl ? purgatory_waiting(cl->pg) : 0;
}

void *coord_log_shard(struct coord_log *cl, int32_t partition, bool *loading)
{
    struct cl_shard *sh =
        partition >= 0 && partition < cl->n_shards && !cl->stopping ? cl->shards[partition] : NULL;
    if (loading)
        *loading = sh ? sh->loading : false;
    return sh ? sh->owner : NULL;
}

/* ---- lifecycle ---------------------------------------------------------------------------- */

int coord_log_new(const struct coord_log_options *o, struct coord_log **out)
{
    struct coord_log *cl = calloc(1, sizeof *cl);
    if (cl == NULL)
        return ERR_NOMEM;
    cl->loop = o->loop;
    cl->clock = o->clock;
    cl->replicas = o->replicas;
    cl->topic = strdup(o->topic);
    cl->module = o->module;
    cl->append_timeout_ms = o->append_timeout_ms > 0 ? o->append_timeout_ms : 5000;
    cl->ops = o->ops;
    cl->arg = o->arg;
    cl->pg = purgatory_new(cl->clock);
    if (cl->topic == NULL || cl->pg == NULL || shards_reserve(cl, 0) != 0 ||
        replica_subscribe(cl->replicas, on_leadership, cl) != 0) {
        if (cl->pg)
            purgatory_free(cl->pg);
        free(cl->shards);
        free(cl->topic);
        free(cl);
        return ERR_NOMEM;
    }
    /* Subscribers hear only of changes: the partitions led here already load now. */
    const struct meta_topic *t = meta_topic_by_name(o->meta, cl->topic);
    for (int32_t i = 0; t && i < t->n_partitions; i++) {
        struct partition *p = replica_partition(cl->replicas, cl->topic, i);
        if (p && partition_role(p) == REPLICA_LEADER)
            shard_load(cl, i, partition_leader_epoch(p));
    }
    *out = cl;
    return 0;
}

void coord_log_stop(struct coord_log *cl, void (*cb)(void *arg), void *arg)
{
    cl->stopping = true;
    cl->stop_cb = cb;
    cl->stop_arg = arg;
    replica_unsubscribe(cl->replicas, on_leadership, cl);
    for (int32_t i = 0; i < cl->n_shards; i++)
        if (cl->shards[i])
            shard_unload(cl, cl->shards[i], ERR_COORDINATOR_NOT_AVAILABLE);
    maybe_finish_stop(cl);
}

/* ---- appends ------------------------------------------------------------------------------ */

static void unlink_append(struct coord_log_append *ap)
{
    if (ap->next) {
        ap->prev->next = ap->next;
        ap->next->prev = ap->prev;
        ap->next = ap->prev = NULL;
    }
}

static void on_covered(struct purgatory_op *op, struct purgatory_watch *w)
{
    struct coord_log_append *ap = op->data;
    if (!w->reached)
        ap->err = ERR_NOT_COORDINATOR;
    purgatory_complete(op);
}

static void on_append_done(struct purgatory_op *op, int result)
{
    struct coord_log_append *ap = op->data;
    int16_t err = ap->err;

    unlink_append(ap);
    if (result == PURGATORY_TIMED_OUT && err == 0)
        err = ERR_REQUEST_TIMED_OUT;
    else if (result == PURGATORY_STOPPED && err == 0)
        err = ERR_COORDINATOR_NOT_AVAILABLE;
    ap->done(ap, err);
}

/* The sequence the coordinator's next transactional batch of this producer must carry: the
 * partition's producer state checks sequences of every batch, while Kafka's coordinator
 * appends skip that check, so the coordinator continues the producer's sequence here. */
static int32_t next_sequence(struct partition *p, int64_t producer_id, int16_t epoch)
{
    const struct pstate_producer *pp = pstate_get(partition_pstate(p), producer_id);
    if (pp == NULL || pp->epoch != epoch || pp->n_batches == 0)
        return 0;
    int32_t last = pp->batches[pp->n_batches - 1].last_seq;
    return last == INT32_MAX ? 0 : last + 1;
}

void coord_log_append(struct coord_log *cl, int32_t partition, const struct coord_log_kv *recs,
                      int32_t n, int64_t producer_id, int16_t producer_epoch,
                      struct coord_log_append *ap,
                      void (*done)(struct coord_log_append *ap, int16_t err), void *arg,
                      int64_t *base_offset)
{
    struct cl_shard *sh =
        partition >= 0 && partition < cl->n_shards && !cl->stopping ? cl->shards[partition] : NULL;
    struct partition *p = replica_partition(cl->replicas, cl->topic, partition);
    struct record_input *in = NULL;
    struct record_batch hdr;
    uint8_t *buf = NULL;
    size_t len;
    int64_t base, append_time, now = tclock_now_ms(cl->clock);
    int rc;

    memset(ap, 0, sizeof *ap);
    ap->cl = cl;
    ap->done = done;
    ap->arg = arg;
    if (base_offset)
        *base_offset = -1;
    if (sh == NULL || p == NULL || partition_role(p) != REPLICA_LEADER) {
        rc = ERR_NOT_LEADER_OR_FOLLOWER;
        goto fail;
    }
    /* A coordinator's write is an acks=all write: with fewer in-sync replicas than
     * min.insync.replicas it is refused before it is appended, as a producer's would be (a
     * lone leader of __transaction_state must not take a PrepareCommit it alone holds). */
    if (partition_isr_size(p) < partition_settings(p)->min_insync) {
        rc = ERR_NOT_ENOUGH_REPLICAS;
        goto fail;
    }
    in = calloc((size_t)(n > 0 ? n : 1), sizeof *in);
    if (in == NULL) {
        rc = ERR_NOMEM;
        goto fail;
    }
    for (int32_t i = 0; i < n; i++) {
        in[i].key = (uint8_t *)recs[i].key;
        in[i].key_len = recs[i].key_len;
        in[i].value = (uint8_t *)recs[i].value;
        in[i].value_len = recs[i].value ? recs[i].value_len : -1;
        in[i].timestamp = now;
    }
    struct record_build_options opt = {
        .base_offset = 0,
        .attributes = producer_id >= 0 ? RECORD_ATTR_TRANSACTIONAL : 0,
        .producer_id = producer_id >= 0 ? producer_id : -1,
        .producer_epoch = producer_id >= 0 ? producer_epoch : -1,
        .base_sequence = producer_id >= 0 ? next_sequence(p, producer_id, producer_epoch) : -1,
        .leader_epoch = -1,
    };
    rc = record_batch_build(&opt, in, n, &buf, &len);
    free(in);
    if (rc == 0)
        rc = record_batch_validate(buf, len, &hdr);
    if (rc == 0)
        rc = partition_append(p, buf, len, &hdr, &base, &append_time);
    free(buf);
    if (rc != 0)
        goto fail;
    if (base_offset)
        *base_offset = base;
    ap->need = base + hdr.last_offset_delta + 1;
    /* Linked before waiting: an unload completes every append of the shard. */
    ap->next = &sh->appends;
    ap->prev = sh->appends.prev;
    sh->appends.prev->next = ap;
    sh->appends.prev = ap;
    purgatory_op_init(cl->pg, &ap->op, on_covered, on_append_done, ap);
    purgatory_watch_init(&ap->op, &ap->watch);
    if (partition_watch(p, PARTITION_HIGH_WATERMARK, ap->need, &ap->watch)) {
        if (!ap->watch.reached)
            ap->err = ERR_NOT_COORDINATOR;
        purgatory_complete(&ap->op);
        return;
    }
    purgatory_op_start(&ap->op, cl->append_timeout_ms);
    return;

fail:
    if (rc == ERR_NOMEM)
        slog_error(cl->module, "out of memory appending to %s-%d", cl->topic, partition);
    else
        slog_debug(cl->module, "append to %s-%d failed: %s", cl->topic, partition, err_name(rc));
    ap->err = (int16_t)(rc == ERR_NOMEM ? ERR_COORDINATOR_NOT_AVAILABLE : rc);
    done(ap, ap->err);
}
