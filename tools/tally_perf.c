/* SPDX-License-Identifier: Apache-2.0 */
/* tally perf: produce and consume load generators in the spirit of
 * kafka-producer-perf-test and kafka-consumer-perf-test, on librdkafka. Both print
 * a progress line on stderr about once a second and one summary line on stdout. */
#include "tally.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char perf_usage[] =
    "usage: tally perf COMMAND ...\n"
    "\n"
    "  produce --topic T --records N --record-size B [--acks all|1|0]\n"
    "          [--compression none|gzip|snappy|lz4|zstd] [--linger-ms L] [--batch-size S]\n"
    "          [--throughput R] [--idempotent] [--transactional [--transaction-duration-ms D]]\n"
    "          [-X key=value ...]\n"
    "      Send N records of B bytes (no key) as fast as possible, or at R records/s,\n"
    "      and report throughput and delivery latency (avg, p50, p99, p99.9, max).\n"
    "  consume --topic T --records N [--from-beginning] [-X key=value ...]\n"
    "      Read N records from the earliest offset of every partition (assign(), no\n"
    "      consumer group) and report throughput.\n";

static const char produce_usage[] =
    "usage: tally perf produce --topic T --records N --record-size B [--acks all|1|0]\n"
    "                          [--compression none|gzip|snappy|lz4|zstd] [--linger-ms L]\n"
    "                          [--batch-size S] [--throughput R] [--idempotent]\n"
    "                          [--transactional [--transaction-duration-ms D]]\n"
    "                          [-X key=value ...]\n";

static const char consume_usage[] =
    "usage: tally perf consume --topic T --records N [--from-beginning] [-X key=value ...]\n";

/* A run that sees no delivery report or message for this long is declared stuck,
 * unless the global --timeout is longer. */
#define PERF_STALL_MS 30000

#define MIB (1024.0 * 1024.0)

/* Set by SIGINT/SIGTERM so that a run stops early and still prints its summary. */
static volatile sig_atomic_t perf_stop;

static void perf_on_signal(int sig)
{
    (void)sig;
    perf_stop = 1;
}

static int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Parses an integer in [lo, hi]; returns false on junk or out of range. */
static bool parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
        return false;
    *out = (int64_t)v;
    return true;
}

/* ---------------------------------------------------------------- latency histogram */

/* Log-linear histogram of latencies in microseconds: values below 2^HIST_SUB_BITS are
 * exact, above that each power of two is split into 2^HIST_SUB_BITS buckets, so a
 * reported percentile is within 1/64 (1.6 %) of the true value at constant memory
 * whatever the record count. */
#define HIST_SUB_BITS 6
#define HIST_SUB (1 << HIST_SUB_BITS)
#define HIST_BUCKETS ((64 - HIST_SUB_BITS) * HIST_SUB)

struct latency_hist {
    uint64_t count[HIST_BUCKETS];
    uint64_t n;
    double sum_us;
    int64_t max_us;
};

static int hist_bucket(uint64_t v)
{
    if (v < HIST_SUB)
        return (int)v;
    int msb = 63 - __builtin_clzll(v); /* >= HIST_SUB_BITS */
    int shift = msb - HIST_SUB_BITS;   /* keep HIST_SUB_BITS + 1 top bits */
    int sub = (int)((v >> shift) & (HIST_SUB - 1));
    return (shift + 1) * HIST_SUB + sub;
}

/* The middle of bucket b's range, in microseconds. */
static double hist_value(int b)
{
    if (b < HIST_SUB)
        return b;
    int shift = b / HIST_SUB - 1;
    uint64_t lo = ((uint64_t)(HIST_SUB + b % HIST_SUB)) << shift;
    return (double)lo + (double)((uint64_t)1 << shift) / 2.0;
}

static void hist_add(struct latency_hist *h, int64_t us)
{
    if (us < 0)
        us = 0;
    h->count[hist_bucket((uint64_t)us)]++;
    h->n++;
    h->sum_us += (double)us;
    if (us > h->max_us)
        h->max_us = us;
}

/* The q-quantile (0 < q <= 1) in microseconds; 0 when empty. */
static double hist_quantile(const struct latency_hist *h, double q)
{
    if (h->n == 0)
        return 0;
    /* The smallest rank r with r >= q * n, without libm's ceil(). */
    double want = q * (double)h->n;
    uint64_t rank = (uint64_t)want;
    if ((double)rank < want || rank == 0)
        rank++;
    uint64_t seen = 0;
    for (int b = 0; b < HIST_BUCKETS; b++) {
        seen += h->count[b];
        if (seen >= rank) {
            double v = hist_value(b);
            return v > (double)h->max_us ? (double)h->max_us : v;
        }
    }
    return (double)h->max_us;
}

/* ---------------------------------------------------------------- shared setup */

/* The client options common to both commands, gathered from the command line. */
struct perf_conf {
    const char *topic;
    int64_t records;
    int n_extra;
    const char **extra; /* "key=value" from -X, applied last so they win */
};

static bool conf_set(rd_kafka_conf_t *conf, const char *key, const char *value)
{
    char errstr[512];
    if (rd_kafka_conf_set(conf, key, value, errstr, sizeof errstr) != RD_KAFKA_CONF_OK) {
        tally_fail("bad client configuration %s=%s: %s", key, value, errstr);
        return false;
    }
    return true;
}

static bool conf_set_extra(rd_kafka_conf_t *conf, const struct perf_conf *pc)
{
    for (int i = 0; i < pc->n_extra; i++) {
        const char *value;
        char *key = tally_split_kv(pc->extra[i], &value);
        if (key == NULL) {
            tally_fail("-X needs key=value, got '%s'", pc->extra[i]);
            return false;
        }
        bool ok = conf_set(conf, key, value);
        free(key);
        if (!ok)
            return false;
    }
    return true;
}

/* librdkafka logs on its own; the tool reports failures as one line instead. */
static void perf_quiet_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
    (void)rk;
    (void)level;
    (void)fac;
    (void)buf;
}

/* Progress and summary state shared by the callbacks and the main loop. */
struct perf_run {
    /* producer */
    int64_t record_size;
    int64_t sent;      /* produce() calls that succeeded */
    int64_t delivered; /* delivery reports without error */
    int64_t failed;    /* delivery reports with an error */
    char first_error[256];
    struct latency_hist hist;
    /* per progress window */
    int64_t win_records;
    int64_t win_bytes;
    double win_lat_sum_us;
    int64_t win_lat_max_us;
    int64_t win_start_us;
    /* whole run */
    int64_t bytes;
    int64_t start_us;
    int64_t last_event_us; /* last delivery report or message, for the stall check */
    char fatal[512];
    /* --transactional: commit_transaction() calls (the flush of the transaction's records
     * and EndTxn), their time in all and the longest */
    int64_t commits;
    int64_t commit_us, commit_max_us;
};

static void window_reset(struct perf_run *r, int64_t now)
{
    r->win_records = 0;
    r->win_bytes = 0;
    r->win_lat_sum_us = 0;
    r->win_lat_max_us = 0;
    r->win_start_us = now;
}

static void perf_error_cb(rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
    struct perf_run *r = opaque;
    if (err == RD_KAFKA_RESP_ERR__FATAL) {
        char buf[256];
        rd_kafka_resp_err_t orig = rd_kafka_fatal_error(rk, buf, sizeof buf);
        snprintf(r->fatal, sizeof r->fatal, "%s (%s)", buf, rd_kafka_err2name(orig));
    } else if (err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN && r->fatal[0] == '\0') {
        snprintf(r->fatal, sizeof r->fatal, "all brokers down: %s", reason);
    }
}

/* ---------------------------------------------------------------- produce */

/* The send time of each message travels in its opaque, so the delivery report
 * gives the latency without a lookup table. */
static void produce_dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    struct perf_run *r = opaque;
    int64_t now = now_us();
    r->last_event_us = now;
    if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        if (r->failed++ == 0)
            snprintf(r->first_error, sizeof r->first_error, "%s", rd_kafka_err2str(m->err));
        return;
    }
    int64_t lat = now - (int64_t)(intptr_t)m->_private;
    r->delivered++;
    r->bytes += (int64_t)m->len;
    hist_add(&r->hist, lat);
    r->win_records++;
    r->win_bytes += (int64_t)m->len;
    r->win_lat_sum_us += (double)lat;
    if (lat > r->win_lat_max_us)
        r->win_lat_max_us = lat;
}

static void produce_progress(struct perf_run *r, int64_t now)
{
    double secs = (double)(now - r->win_start_us) / 1e6;
    if (secs <= 0)
        return;
    fprintf(stderr,
            "%" PRId64 " records sent, %.1f records/sec (%.2f MB/sec), %.1f ms avg latency, "
            "%.1f ms max latency.\n",
            r->win_records, (double)r->win_records / secs, (double)r->win_bytes / MIB / secs,
            r->win_records ? r->win_lat_sum_us / (double)r->win_records / 1000.0 : 0.0,
            (double)r->win_lat_max_us / 1000.0);
    window_reset(r, now);
}

struct produce_opts {
    struct perf_conf pc;
    int64_t record_size;
    const char *acks;
    const char *compression;
    const char *linger_ms;
    const char *batch_size;
    int64_t throughput; /* records/s; <= 0 = unlimited */
    bool idempotent;
    bool transactional;
    int64_t txn_duration_ms;
};

/* Serves callbacks, prints progress and checks for a stall or a fatal error.
 * Returns false (after printing why) when the run must stop. */
static bool produce_poll(rd_kafka_t *rk, struct perf_run *r, int timeout_ms, int stall_ms)
{
    rd_kafka_poll(rk, timeout_ms);
    int64_t now = now_us();
    if (now - r->win_start_us >= 1000000)
        produce_progress(r, now);
    if (r->fatal[0] != '\0') {
        tally_fail("producer failed: %s", r->fatal);
        return false;
    }
    if (r->sent > r->delivered + r->failed && now - r->last_event_us > (int64_t)stall_ms * 1000) {
        tally_fail("no delivery report for %d s (%" PRId64 " of %" PRId64 " delivered)",
                   stall_ms / 1000, r->delivered, r->sent);
        return false;
    }
    return true;
}

static bool txn_check(rd_kafka_error_t *error, const char *what)
{
    if (error == NULL)
        return true;
    tally_fail("%s failed: %s (%s)", what, rd_kafka_error_string(error),
               rd_kafka_error_name(error));
    rd_kafka_error_destroy(error);
    return false;
}

/* commit_transaction(), timed into r. */
static bool timed_commit(rd_kafka_t *rk, struct perf_run *r)
{
    int64_t t0 = now_us();
    bool ok = txn_check(rd_kafka_commit_transaction(rk, -1), "commit_transaction");
    int64_t us = now_us() - t0;

    r->commits++;
    r->commit_us += us;
    if (us > r->commit_max_us)
        r->commit_max_us = us;
    return ok;
}

static int perf_produce(const struct tally_ctx *ctx, const struct produce_opts *o)
{
    char errstr[512];
    char num[32];
    int rc = TALLY_FAIL;
    int stall_ms = ctx->timeout_ms > PERF_STALL_MS ? ctx->timeout_ms : PERF_STALL_MS;
    struct perf_run *r = calloc(1, sizeof *r);
    char *payload = malloc((size_t)o->record_size > 0 ? (size_t)o->record_size : 1);
    rd_kafka_t *rk = NULL;
    rd_kafka_topic_t *rkt = NULL;

    if (r == NULL || payload == NULL) {
        tally_fail("out of memory");
        goto out;
    }
    /* Random upper-case letters, as kafka-producer-perf-test sends: compressible
     * like text, not like zeros. */
    srand(42);
    for (int64_t i = 0; i < o->record_size; i++)
        payload[i] = (char)('A' + rand() % 26);
    r->record_size = o->record_size;

    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    snprintf(num, sizeof num, "%d", ctx->timeout_ms);
    if (!conf_set(conf, "bootstrap.servers", ctx->bootstrap) ||
        !conf_set(conf, "client.id", "tally-perf") || !conf_set(conf, "socket.timeout.ms", num) ||
        !conf_set(conf, "acks", o->acks) || !conf_set(conf, "compression.type", o->compression) ||
        (o->linger_ms != NULL && !conf_set(conf, "linger.ms", o->linger_ms)) ||
        (o->batch_size != NULL && !conf_set(conf, "batch.size", o->batch_size)) ||
        (o->idempotent && !conf_set(conf, "enable.idempotence", "true"))) {
        rd_kafka_conf_destroy(conf);
        goto out;
    }
    if (o->transactional) {
        char txn_id[64];
        snprintf(txn_id, sizeof txn_id, "tally-perf-%ld", (long)getpid());
        if (!conf_set(conf, "transactional.id", txn_id)) {
            rd_kafka_conf_destroy(conf);
            goto out;
        }
    }
    /* The global security settings first, so that perf's own -X can override them. */
    if (!tally_security_conf(conf, ctx) || !conf_set_extra(conf, &o->pc)) {
        rd_kafka_conf_destroy(conf);
        goto out;
    }
    rd_kafka_conf_set_log_cb(conf, perf_quiet_log);
    rd_kafka_conf_set_error_cb(conf, perf_error_cb);
    rd_kafka_conf_set_dr_msg_cb(conf, produce_dr_cb);
    rd_kafka_conf_set_opaque(conf, r);

    rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr);
    if (rk == NULL) {
        rd_kafka_conf_destroy(conf);
        tally_fail("cannot create producer: %s", errstr);
        goto out;
    }
    rkt = rd_kafka_topic_new(rk, o->pc.topic, NULL);
    if (rkt == NULL) {
        tally_fail("cannot use topic '%s': %s", o->pc.topic,
                   rd_kafka_err2str(rd_kafka_last_error()));
        goto out;
    }

    /* Fail early, with one clear line, when the cluster is not there. */
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, rkt, &md, ctx->timeout_ms);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        tally_fail("cannot reach %s: %s", ctx->bootstrap, rd_kafka_err2str(err));
        goto out;
    }
    rd_kafka_metadata_destroy(md);

    if (o->transactional) {
        if (!txn_check(rd_kafka_init_transactions(rk, ctx->timeout_ms), "init_transactions") ||
            !txn_check(rd_kafka_begin_transaction(rk), "begin_transaction"))
            goto out;
    }

    signal(SIGINT, perf_on_signal);
    signal(SIGTERM, perf_on_signal);

    int64_t start = now_us();
    int64_t txn_start = start;
    r->start_us = start;
    r->last_event_us = start;
    window_reset(r, start);

    for (int64_t i = 0; i < o->pc.records && !perf_stop; i++) {
        if (o->throughput > 0) {
            /* Stay on schedule: message i is due at start + i / throughput. */
            int64_t due = start + (int64_t)((double)i * 1e6 / (double)o->throughput);
            while (!perf_stop) {
                int64_t now = now_us();
                if (now >= due)
                    break;
                int wait_ms = (int)((due - now) / 1000);
                if (!produce_poll(rk, r, wait_ms > 100 ? 100 : wait_ms, stall_ms))
                    goto out;
                if (wait_ms == 0)
                    break;
            }
        }
        if (o->transactional && now_us() - txn_start >= o->txn_duration_ms * 1000) {
            if (!timed_commit(rk, r) ||
                !txn_check(rd_kafka_begin_transaction(rk), "begin_transaction"))
                goto out;
            txn_start = now_us();
        }
        for (;;) {
            /* No copy: every message points at the same payload, which outlives the
             * producer. */
            int64_t ts = now_us();
            if (rd_kafka_produce(rkt, RD_KAFKA_PARTITION_UA, 0, payload, (size_t)o->record_size,
                                 NULL, 0, (void *)(intptr_t)ts) == 0)
                break;
            err = rd_kafka_last_error();
            if (err == RD_KAFKA_RESP_ERR__FATAL) {
                char buf[256];
                rd_kafka_resp_err_t orig = rd_kafka_fatal_error(rk, buf, sizeof buf);
                tally_fail("producer failed: %s (%s)", buf, rd_kafka_err2name(orig));
                goto out;
            }
            if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
                tally_fail("produce failed: %s", rd_kafka_err2str(err));
                goto out;
            }
            /* The local queue is full: let deliveries drain it. */
            if (!produce_poll(rk, r, 10, stall_ms))
                goto out;
        }
        r->sent++;
        if ((i & 1023) == 0 && !produce_poll(rk, r, 0, stall_ms))
            goto out;
    }

    while (r->delivered + r->failed < r->sent && !perf_stop) {
        if (!produce_poll(rk, r, 50, stall_ms))
            goto out;
    }
    if (o->transactional && !perf_stop && !timed_commit(rk, r))
        goto out;
    int64_t end = now_us();
    if (r->win_records > 0)
        produce_progress(r, end);

    double secs = (double)(end - start) / 1e6;
    if (secs <= 0)
        secs = 1e-6;
    printf("%" PRId64 " records sent, %.1f records/sec (%.2f MB/sec), %.2f ms avg latency, "
           "%.1f ms 50th, %.1f ms 99th, %.1f ms 99.9th, %.1f ms max latency.\n",
           r->delivered, (double)r->delivered / secs, (double)r->bytes / MIB / secs,
           r->hist.n ? r->hist.sum_us / (double)r->hist.n / 1000.0 : 0.0,
           hist_quantile(&r->hist, 0.50) / 1000.0, hist_quantile(&r->hist, 0.99) / 1000.0,
           hist_quantile(&r->hist, 0.999) / 1000.0, (double)r->hist.max_us / 1000.0);
    if (o->transactional && r->commits > 0)
        printf("%" PRId64 " transactions committed, %.2f ms per commit_transaction (flush and "
               "EndTxn), %.2f ms max, %.1f%% of the run\n",
               r->commits, (double)r->commit_us / (double)r->commits / 1000.0,
               (double)r->commit_max_us / 1000.0,
               100.0 * (double)r->commit_us / (double)(end - start));
    fflush(stdout);
    if (r->failed > 0) {
        tally_fail("%" PRId64 " records failed: %s", r->failed, r->first_error);
        goto out;
    }
    if (perf_stop) {
        tally_fail("interrupted after %" PRId64 " of %" PRId64 " records", r->delivered,
                   o->pc.records);
        goto out;
    }
    rc = TALLY_OK;

out:
    if (rkt != NULL)
        rd_kafka_topic_destroy(rkt);
    if (rk != NULL) {
        /* Undelivered messages would make destroy wait for message.timeout.ms. */
        rd_kafka_purge(rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
        rd_kafka_poll(rk, 0);
        rd_kafka_destroy(rk);
    }
    free(payload);
    free(r);
    return rc;
}

/* ---------------------------------------------------------------- consume */

static void consume_progress(struct perf_run *r, int64_t now, int64_t total)
{
    double secs = (double)(now - r->win_start_us) / 1e6;
    if (secs <= 0)
        return;
    fprintf(stderr,
            "%" PRId64 " records received (%" PRId64 " in total), %.1f records/sec "
            "(%.2f MB/sec).\n",
            r->win_records, total, (double)r->win_records / secs,
            (double)r->win_bytes / MIB / secs);
    window_reset(r, now);
}

static int perf_consume(const struct tally_ctx *ctx, const struct perf_conf *pc)
{
    char errstr[512];
    char num[32];
    int rc = TALLY_FAIL;
    int stall_ms = ctx->timeout_ms > PERF_STALL_MS ? ctx->timeout_ms : PERF_STALL_MS;
    struct perf_run *r = calloc(1, sizeof *r);
    rd_kafka_t *rk = NULL;
    rd_kafka_topic_partition_list_t *parts = NULL;
    const struct rd_kafka_metadata *md = NULL;
    int64_t received = 0;

    if (r == NULL)
        return tally_fail("out of memory");

    /* assign() needs a group id locally, but with no subscribe() and no commits the
     * group coordinator is never used for anything that matters here. */
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    snprintf(num, sizeof num, "%d", ctx->timeout_ms);
    if (!conf_set(conf, "bootstrap.servers", ctx->bootstrap) ||
        !conf_set(conf, "client.id", "tally-perf") || !conf_set(conf, "group.id", "tally-perf") ||
        !conf_set(conf, "enable.auto.commit", "false") ||
        !conf_set(conf, "enable.auto.offset.store", "false") ||
        !conf_set(conf, "socket.timeout.ms", num) || !tally_security_conf(conf, ctx) ||
        !conf_set_extra(conf, pc)) {
        rd_kafka_conf_destroy(conf);
        goto out;
    }
    rd_kafka_conf_set_log_cb(conf, perf_quiet_log);
    rd_kafka_conf_set_error_cb(conf, perf_error_cb);
    rd_kafka_conf_set_opaque(conf, r);

    rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr, sizeof errstr);
    if (rk == NULL) {
        rd_kafka_conf_destroy(conf);
        tally_fail("cannot create consumer: %s", errstr);
        goto out;
    }
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, pc->topic, NULL);
    if (rkt == NULL) {
        tally_fail("cannot use topic '%s'", pc->topic);
        goto out;
    }
    rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, rkt, &md, ctx->timeout_ms);
    rd_kafka_topic_destroy(rkt);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        tally_fail("cannot reach %s: %s", ctx->bootstrap, rd_kafka_err2str(err));
        goto out;
    }
    if (md->topic_cnt != 1 || md->topics[0].err != RD_KAFKA_RESP_ERR_NO_ERROR ||
        md->topics[0].partition_cnt == 0) {
        tally_fail("topic '%s': %s", pc->topic,
                   md->topic_cnt == 1 && md->topics[0].err ? rd_kafka_err2str(md->topics[0].err)
                                                           : "no partitions");
        goto out;
    }
    parts = rd_kafka_topic_partition_list_new(md->topics[0].partition_cnt);
    for (int i = 0; i < md->topics[0].partition_cnt; i++)
        rd_kafka_topic_partition_list_add(parts, pc->topic, md->topics[0].partitions[i].id)
            ->offset = RD_KAFKA_OFFSET_BEGINNING;
    err = rd_kafka_assign(rk, parts);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        tally_fail("assign failed: %s", rd_kafka_err2str(err));
        goto out;
    }

    signal(SIGINT, perf_on_signal);
    signal(SIGTERM, perf_on_signal);

    /* The clock starts at the first message, so connection set-up is not counted. */
    int64_t start = 0;
    r->last_event_us = now_us();
    window_reset(r, r->last_event_us);
    while (received < pc->records && !perf_stop) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 100);
        int64_t now = now_us();
        if (m != NULL) {
            if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
                if (start == 0) {
                    start = now;
                    window_reset(r, now);
                }
                received++;
                r->bytes += (int64_t)m->len + (int64_t)m->key_len;
                r->win_records++;
                r->win_bytes += (int64_t)m->len + (int64_t)m->key_len;
                r->last_event_us = now;
            } else if (m->err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART ||
                       m->err == RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE ||
                       m->err == RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED) {
                tally_fail("consume failed: %s", rd_kafka_message_errstr(m));
                rd_kafka_message_destroy(m);
                goto out;
            }
            /* Anything else (end of partition, a coordinator we do not use) is
             * transient or irrelevant to a reader of fixed offsets. */
            rd_kafka_message_destroy(m);
        }
        if (now - r->win_start_us >= 1000000)
            consume_progress(r, now, received);
        if (r->fatal[0] != '\0') {
            tally_fail("consumer failed: %s", r->fatal);
            goto out;
        }
        if (now - r->last_event_us > (int64_t)stall_ms * 1000) {
            tally_fail("only %" PRId64 " of %" PRId64 " records after %d s without a message",
                       received, pc->records, stall_ms / 1000);
            goto out;
        }
    }
    int64_t end = now_us();
    if (r->win_records > 0)
        consume_progress(r, end, received);
    double secs = start ? (double)(end - start) / 1e6 : 0;
    double div = secs > 0 ? secs : 1e-6;
    printf("%" PRId64 " records received, %.1f records/sec (%.2f MB/sec), %.3f s elapsed.\n",
           received, (double)received / div, (double)r->bytes / MIB / div, secs);
    fflush(stdout);
    if (perf_stop) {
        tally_fail("interrupted after %" PRId64 " of %" PRId64 " records", received, pc->records);
        goto out;
    }
    rc = TALLY_OK;

out:
    if (parts != NULL)
        rd_kafka_topic_partition_list_destroy(parts);
    if (md != NULL)
        rd_kafka_metadata_destroy(md);
    if (rk != NULL) {
        rd_kafka_consumer_close(rk);
        rd_kafka_destroy(rk);
    }
    free(r);
    return rc;
}

/* ---------------------------------------------------------------- command line */

static bool one_of(const char *s, const char *const *set)
{
    for (; *set != NULL; set++)
        if (strcmp(s, *set) == 0)
            return true;
    return false;
}

/* Parses the options of both commands; produce-only options are refused for
 * consume. Returns TALLY_OK, or the exit code after printing why. */
static int parse_opts(int argc, char **argv, bool produce, struct produce_opts *o,
                      bool *from_beginning)
{
    static const char *const acks_set[] = {"all", "-1", "1", "0", NULL};
    static const char *const codec_set[] = {"none", "gzip", "snappy", "lz4", "zstd", NULL};
    const char *usage = produce ? produce_usage : consume_usage;

    o->pc.extra = calloc((size_t)argc, sizeof *o->pc.extra);
    if (o->pc.extra == NULL)
        return tally_fail("out of memory");
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool takes_value = true;

        if (tally_is_help(a)) {
            fputs(usage, stdout);
            return -1;
        } else if (strcmp(a, "--topic") == 0) {
            if (v == NULL || *v == '\0')
                return tally_usage_error("--topic needs a name");
            o->pc.topic = v;
        } else if (strcmp(a, "--records") == 0 || strcmp(a, "--num-records") == 0) {
            if (v == NULL || !parse_i64(v, 1, INT64_MAX / 2, &o->pc.records))
                return tally_usage_error("--records needs a positive number");
        } else if (strcmp(a, "-X") == 0) {
            if (v == NULL || strchr(v, '=') == NULL)
                return tally_usage_error("-X needs key=value");
            o->pc.extra[o->pc.n_extra++] = v;
        } else if (!produce && strcmp(a, "--from-beginning") == 0) {
            *from_beginning = true;
            takes_value = false;
        } else if (!produce) {
            return tally_usage_error("unknown option '%s' for perf consume", a);
        } else if (strcmp(a, "--record-size") == 0) {
            if (v == NULL || !parse_i64(v, 0, 100 * 1024 * 1024, &o->record_size))
                return tally_usage_error("--record-size needs a size in bytes (0 to 100 MiB)");
        } else if (strcmp(a, "--acks") == 0) {
            if (v == NULL || !one_of(v, acks_set))
                return tally_usage_error("--acks needs all, 1 or 0");
            o->acks = strcmp(v, "-1") == 0 ? "all" : v;
        } else if (strcmp(a, "--compression") == 0) {
            if (v == NULL || !one_of(v, codec_set))
                return tally_usage_error("--compression needs none, gzip, snappy, lz4 or zstd");
            o->compression = v;
        } else if (strcmp(a, "--linger-ms") == 0) {
            int64_t x;
            if (v == NULL || !parse_i64(v, 0, 900000, &x))
                return tally_usage_error("--linger-ms needs a number of ms");
            o->linger_ms = v;
        } else if (strcmp(a, "--batch-size") == 0) {
            int64_t x;
            if (v == NULL || !parse_i64(v, 1, INT32_MAX, &x))
                return tally_usage_error("--batch-size needs a positive number of bytes");
            o->batch_size = v;
        } else if (strcmp(a, "--throughput") == 0) {
            /* -1 means unlimited, as in kafka-producer-perf-test. */
            if (v == NULL || !parse_i64(v, -1, INT64_MAX / 2, &o->throughput) || o->throughput == 0)
                return tally_usage_error("--throughput needs records/s (or -1 for no limit)");
        } else if (strcmp(a, "--transaction-duration-ms") == 0) {
            if (v == NULL || !parse_i64(v, 1, 3600000, &o->txn_duration_ms))
                return tally_usage_error("--transaction-duration-ms needs a positive number");
        } else if (strcmp(a, "--idempotent") == 0) {
            o->idempotent = true;
            takes_value = false;
        } else if (strcmp(a, "--transactional") == 0) {
            o->transactional = true;
            takes_value = false;
        } else {
            return tally_usage_error("unknown option '%s' for perf produce", a);
        }
        if (takes_value)
            i++;
    }
    if (o->pc.topic == NULL)
        return tally_usage_error("--topic is required");
    if (o->pc.records == 0)
        return tally_usage_error("--records is required");
    if (produce && o->record_size < 0)
        return tally_usage_error("--record-size is required");
    return TALLY_OK;
}

int tally_perf_main(const struct tally_ctx *ctx, int argc, char **argv)
{
    if (argc < 2 || tally_is_help(argv[1])) {
        fputs(perf_usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? TALLY_USAGE : TALLY_OK;
    }
    bool produce = strcmp(argv[1], "produce") == 0;
    if (!produce && strcmp(argv[1], "consume") != 0)
        return tally_usage_error("unknown perf command '%s'", argv[1]);

    struct produce_opts o = {
        .record_size = -1,
        .acks = "all",
        .compression = "none",
        .throughput = -1,
        .txn_duration_ms = 3000,
    };
    bool from_beginning = false;
    int rc = parse_opts(argc, argv, produce, &o, &from_beginning);
    if (rc == TALLY_OK) {
        /* Reading always starts at the earliest offset; --from-beginning says so
         * explicitly, for kafka-console-consumer habits. */
        (void)from_beginning;
        rc = produce ? perf_produce(ctx, &o) : perf_consume(ctx, &o.pc);
    } else if (rc == -1) {
        rc = TALLY_OK;
    }
    free(o.pc.extra);
    return rc;
}
