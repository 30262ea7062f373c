/* SPDX-License-Identifier: Apache-2.0 */
/* latency: a librdkafka producer at a fixed rate that keeps every message's delivery
 * latency, for the cluster benchmarks (bench/cluster.py, failover.py, catchup.py).
 *
 *   latency --bootstrap B --topic T --rate R --seconds S [--record-size N] [--acks all|1]
 *           [--partition P] [--out FILE] [-X key=value ...]
 *
 * First one unrecorded message to each partition (to --partition), flushed, so that the
 * run does not count the metadata look-up and the connections to the leaders. Then
 * message i is due at start + i / R (a late loop catches up, so the offered rate stays R);
 * it carries its send time in its opaque. The run ends after S seconds of sending, or at
 * SIGTERM / SIGINT (whichever first), then waits up to 60 s for the outstanding delivery
 * reports. --partition sends every message to one partition (default: librdkafka's
 * partitioner). Defaults: 1024-byte values, acks=all, linger.ms=0, message.timeout.ms=60000.
 *
 * With --out, one line per delivery report, in the order they arrived:
 *     <send ms since start> <latency us> <error code, 0 = acknowledged> <broker id>
 * Always one summary line on stdout:
 *     records=N errors=E seconds=S p50_ms=X p99_ms=Y p999_ms=Z max_ms=M start_mono_us=T
 * (T: the start on CLOCK_MONOTONIC, Python's time.monotonic() * 1e6, to line the reports
 * up with events the caller timed).
 * Exit 1 on a bad argument or a producer that cannot be created. */
#include <errno.h>
#include <inttypes.h>
#include <librdkafka/rdkafka.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t stop_now;

static void on_signal(int sig)
{
    (void)sig;
    stop_now = 1;
}

static int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

struct report {
    int64_t send_us; /* since start */
    int64_t lat_us;
    int32_t err;
    int32_t broker;
};

struct run {
    int64_t start_us;
    struct report *r;
    size_t n, cap;
    int64_t errors;
};

static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    struct run *run = opaque;
    int64_t sent = (int64_t)(intptr_t)m->_private;
    if (run->n == run->cap) {
        size_t cap = run->cap ? run->cap * 2 : 65536;
        struct report *r = realloc(run->r, cap * sizeof *r);
        if (r == NULL) {
            run->errors++;
            return;
        }
        run->r = r;
        run->cap = cap;
    }
    run->r[run->n++] = (struct report){sent - run->start_us, now_us() - sent, (int32_t)m->err,
                                       rd_kafka_message_broker_id(m)};
    if (m->err)
        run->errors++;
}

static void quiet_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
    (void)rk;
    (void)level;
    (void)fac;
    (void)buf;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static double quantile_ms(const int64_t *v, size_t n, double q)
{
    if (n == 0)
        return 0;
    size_t i = (size_t)(q * (double)(n - 1) + 0.5);
    return (double)v[i] / 1000.0;
}

static int usage(const char *why)
{
    fprintf(stderr, "latency: %s\n", why);
    return 1;
}

static int set(rd_kafka_conf_t *c, const char *k, const char *v)
{
    char err[256];
    if (rd_kafka_conf_set(c, k, v, err, sizeof err) != RD_KAFKA_CONF_OK) {
        fprintf(stderr, "latency: %s=%s: %s\n", k, v, err);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *bootstrap = NULL, *topic = NULL, *out = NULL, *acks = "all";
    double rate = 0, seconds = 0;
    long size = 1024, partition = RD_KAFKA_PARTITION_UA;
    struct run run = {0};
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    char err[256];

    if (set(conf, "linger.ms", "0") || set(conf, "message.timeout.ms", "60000"))
        return 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (v == NULL)
            return usage("every option takes a value");
        i++;
        if (strcmp(a, "--bootstrap") == 0)
            bootstrap = v;
        else if (strcmp(a, "--topic") == 0)
            topic = v;
        else if (strcmp(a, "--rate") == 0)
            rate = atof(v);
        else if (strcmp(a, "--seconds") == 0)
            seconds = atof(v);
        else if (strcmp(a, "--record-size") == 0)
            size = atol(v);
        else if (strcmp(a, "--acks") == 0)
            acks = v;
        else if (strcmp(a, "--partition") == 0)
            partition = atol(v);
        else if (strcmp(a, "--out") == 0)
            out = v;
        else if (strcmp(a, "-X") == 0) {
            char kv[512];
            snprintf(kv, sizeof kv, "%s", v);
            char *eq = strchr(kv, '=');
            if (eq == NULL)
                return usage("-X needs key=value");
            *eq = '\0';
            if (set(conf, kv, eq + 1))
                return 1;
        } else
            return usage("unknown option");
    }
    if (bootstrap == NULL || topic == NULL || rate <= 0 || seconds <= 0 || size < 0)
        return usage("needs --bootstrap, --topic, --rate > 0 and --seconds > 0");
    if (set(conf, "bootstrap.servers", bootstrap) || set(conf, "acks", acks))
        return 1;
    rd_kafka_conf_set_log_cb(conf, quiet_log);
    rd_kafka_conf_set_dr_msg_cb(conf, dr_cb);
    rd_kafka_conf_set_opaque(conf, &run);
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
    if (rk == NULL)
        return usage(err);
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
    char *value = calloc(1, (size_t)size + 1);
    if (rkt == NULL || value == NULL)
        return usage("out of memory");
    memset(value, 'x', (size_t)size);
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);

    /* Warm-up, not recorded: one message to each partition (or to --partition), flushed, so
     * that the measured run does not wait for the metadata and the leaders' connections. */
    const struct rd_kafka_metadata *md = NULL;
    int n_parts = 1;
    if (rd_kafka_metadata(rk, 0, rkt, &md, 10000) == RD_KAFKA_RESP_ERR_NO_ERROR && md) {
        if (md->topic_cnt == 1 && md->topics[0].partition_cnt > 0)
            n_parts = md->topics[0].partition_cnt;
        rd_kafka_metadata_destroy(md);
    }
    run.start_us = now_us();
    for (int p = 0; p < n_parts; p++)
        rd_kafka_produce(rkt, partition != RD_KAFKA_PARTITION_UA ? (int32_t)partition : p,
                         RD_KAFKA_MSG_F_COPY, value, (size_t)size, NULL, 0,
                         (void *)(intptr_t)now_us());
    rd_kafka_flush(rk, 10000);
    run.n = 0;
    run.errors = 0;

    run.start_us = now_us();
    int64_t end_us = run.start_us + (int64_t)(seconds * 1e6), sent = 0;
    while (!stop_now) {
        int64_t now = now_us();
        if (now >= end_us)
            break;
        int64_t due = run.start_us + (int64_t)((double)sent * 1e6 / rate);
        if (now < due) {
            /* Waits in rd_kafka_poll, which a delivery report ends at once (its latency is
             * taken when it arrives), rounded up to the next millisecond: a message goes at
             * most 1 ms late (its latency counts from its own send), and the loop never
             * spins. Sleeping 100 us at a time instead took half a CPU at 500 records/s, the
             * CPU the broker's load shares (bench/cold_read.py). */
            int64_t wait_ms = (due - now + 999) / 1000;
            rd_kafka_poll(rk, wait_ms > 100 ? 100 : (int)wait_ms);
            continue;
        }
        if (rd_kafka_produce(rkt, (int32_t)partition, RD_KAFKA_MSG_F_COPY, value, (size_t)size,
                             NULL, 0, (void *)(intptr_t)now_us()) != 0) {
            if (rd_kafka_last_error() == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
                rd_kafka_poll(rk, 10);
                continue;
            }
            run.errors++;
        }
        sent++;
        rd_kafka_poll(rk, 0);
    }
    double secs = (double)(now_us() - run.start_us) / 1e6;
    rd_kafka_flush(rk, 60000);

    FILE *f = out ? fopen(out, "w") : NULL;
    if (out && f == NULL)
        fprintf(stderr, "latency: cannot write %s: %s\n", out, strerror(errno));
    int64_t *ok = malloc((run.n + 1) * sizeof *ok);
    size_t n_ok = 0;
    for (size_t i = 0; i < run.n; i++) {
        const struct report *r = &run.r[i];
        if (f)
            fprintf(f, "%.3f %" PRId64 " %d %d\n", (double)r->send_us / 1000.0, r->lat_us, r->err,
                    r->broker);
        if (r->err == 0 && ok)
            ok[n_ok++] = r->lat_us;
    }
    if (f)
        fclose(f);
    if (ok)
        qsort(ok, n_ok, sizeof *ok, cmp_i64);
    printf("records=%zu errors=%" PRId64 " seconds=%.3f p50_ms=%.3f p99_ms=%.3f p999_ms=%.3f "
           "max_ms=%.3f start_mono_us=%" PRId64 "\n",
           n_ok, run.errors, secs, quantile_ms(ok, n_ok, 0.50), quantile_ms(ok, n_ok, 0.99),
           quantile_ms(ok, n_ok, 0.999), n_ok ? (double)ok[n_ok - 1] / 1000.0 : 0.0, run.start_us);
    free(ok);
    free(run.r);
    free(value);
    rd_kafka_topic_destroy(rkt);
    rd_kafka_destroy(rk);
    return 0;
}
