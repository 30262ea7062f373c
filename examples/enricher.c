/* SPDX-License-Identifier: Apache-2.0 */
/* enricher: an exactly-once consume-transform-produce service on librdkafka, the example
 * docs/exactly-once.md walks through.
 *
 * It consumes `order_events` (isolation.level=read_committed) in a consumer group, joins
 * each order with a small product table, produces the enriched order to `enriched_orders`
 * (to the partition of the same number, so each input partition's orders stay in order)
 * and, every N records or T ms, sends the consumed offsets to the transaction and commits
 * it: the output records and the group's offsets become visible together or not at all.
 *
 *   input  value: "order=<id> product=<n> qty=<n>"
 *   output value: "order=<id> product=<n> name=<name> qty=<n> unit_cents=<n> total_cents=<n>"
 *
 * Failures: a retriable commit error is retried; an abortable one aborts the transaction
 * and rewinds the consumer to the group's committed offsets; a fatal one (this instance was
 * fenced by a newer one with the same transactional.id, or by the group) ends the process
 * with status 1. A restarted instance with the same transactional.id fences any older one,
 * aborts its open transaction and continues from the last committed offsets.
 *
 * With --plain the same loop runs without transactions (read_uncommitted, offsets committed
 * after the produce is acknowledged, at-least-once): the baseline of bench/txn_enricher.py.
 * With --max-records M it exits after M records and prints "records=.. seconds=.. rate=.."
 * on stdout. SIGINT/SIGTERM commit the open transaction and exit 0. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <librdkafka/rdkafka.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct product {
    int id;
    const char *name;
    long price_cents;
};

/* The small table each order is joined with. */
static const struct product products[] = {
    {1, "espresso", 250}, {2, "cappuccino", 350}, {3, "croissant", 275}, {4, "bagel", 300},
    {5, "muffin", 325},   {6, "tea", 200},        {7, "brownie", 375},   {8, "sandwich", 650},
    {9, "salad", 725},    {10, "juice", 450},
};

struct opts {
    const char *brokers, *group, *in, *out, *tid;
    long every_n, every_ms, txn_timeout_ms, max_records;
    bool plain, quiet;
};

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static void logf_(const struct opts *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(const struct opts *o, const char *fmt, ...)
{
    if (o->quiet)
        return;
    va_list ap;
    fputs("enricher: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    va_list ap;
    fputs("enricher: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const struct product *find_product(int id)
{
    for (size_t i = 0; i < sizeof products / sizeof products[0]; i++)
        if (products[i].id == id)
            return &products[i];
    return NULL;
}

/* Enriches one order into buf; returns the length (the input is passed through, marked,
 * when it does not parse). */
static int enrich(const char *v, size_t len, char *buf, size_t cap)
{
    char in[512], order[128];
    int product = 0, qty = 0;
    if (len >= sizeof in)
        len = sizeof in - 1;
    memcpy(in, v, len);
    in[len] = '\0';
    if (sscanf(in, "order=%127s product=%d qty=%d", order, &product, &qty) != 3)
        return snprintf(buf, cap, "unparsed %s", in);
    const struct product *p = find_product(product);
    long unit = p ? p->price_cents : 0;
    int n = snprintf(buf, cap, "order=%s product=%d name=%s qty=%d unit_cents=%ld total_cents=%ld",
                     order, product, p ? p->name : "unknown", qty, unit, unit * qty);
    return n < (int)cap ? n : (int)cap - 1;
}

static rd_kafka_conf_t *base_conf(const struct opts *o)
{
    char err[512];
    rd_kafka_conf_t *c = rd_kafka_conf_new();
    if (rd_kafka_conf_set(c, "bootstrap.servers", o->brokers, err, sizeof err) != RD_KAFKA_CONF_OK)
        die("%s", err);
    return c;
}

static void set(rd_kafka_conf_t *c, const char *k, const char *v)
{
    char err[512];
    if (rd_kafka_conf_set(c, k, v, err, sizeof err) != RD_KAFKA_CONF_OK)
        die("config %s=%s: %s", k, v, err);
}

/* ---- the transaction ------------------------------------------------------------------- */

struct state {
    const struct opts *o;
    rd_kafka_t *producer, *consumer;
    rd_kafka_topic_partition_list_t *next; /* next offset per input partition, this txn */
    bool open;
    long in_txn;
    double txn_start;
    long records, commits, aborts;
};

/* Rewinds every assigned partition to the group's committed offset (after an abort the
 * consumer's position is past records whose output was thrown away). */
static void rewind_to_committed(struct state *s)
{
    rd_kafka_topic_partition_list_t *a = NULL;
    if (rd_kafka_assignment(s->consumer, &a) != RD_KAFKA_RESP_ERR_NO_ERROR || a == NULL)
        die("cannot read the assignment");
    if (a->cnt > 0) {
        rd_kafka_resp_err_t err = rd_kafka_committed(s->consumer, a, 30000);
        if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
            die("cannot fetch committed offsets: %s", rd_kafka_err2str(err));
        for (int i = 0; i < a->cnt; i++)
            if (a->elems[i].offset < 0)
                a->elems[i].offset = RD_KAFKA_OFFSET_BEGINNING;
        rd_kafka_error_t *e = rd_kafka_seek_partitions(s->consumer, a, 30000);
        if (e != NULL)
            die("cannot rewind: %s", rd_kafka_error_string(e));
    }
    rd_kafka_topic_partition_list_destroy(a);
}

static void txn_reset(struct state *s)
{
    rd_kafka_topic_partition_list_destroy(s->next);
    s->next = rd_kafka_topic_partition_list_new(8);
    s->open = false;
    s->in_txn = 0;
}

static void txn_abort(struct state *s)
{
    rd_kafka_error_t *e = rd_kafka_abort_transaction(s->producer, 60000);
    if (e != NULL) {
        if (rd_kafka_error_is_fatal(e))
            die("fatal error aborting: %s", rd_kafka_error_string(e));
        die("cannot abort: %s", rd_kafka_error_string(e));
    }
    s->aborts++;
    txn_reset(s);
    rewind_to_committed(s);
}

/* Exits on a fatal error, aborts and rewinds on an abortable one; returns true when the
 * call should be retried. */
static bool retry_or_fail(struct state *s, rd_kafka_error_t *e, const char *what)
{
    if (e == NULL)
        return false;
    if (rd_kafka_error_is_fatal(e)) {
        fprintf(stderr, "enricher: fatal error in %s (fenced?): %s — exiting\n", what,
                rd_kafka_error_string(e));
        exit(1);
    }
    if (rd_kafka_error_is_retriable(e)) {
        logf_(s->o, "%s: %s, retrying", what, rd_kafka_error_string(e));
        rd_kafka_error_destroy(e);
        return true;
    }
    if (rd_kafka_error_txn_requires_abort(e)) {
        logf_(s->o, "%s: %s, aborting the transaction", what, rd_kafka_error_string(e));
        rd_kafka_error_destroy(e);
        txn_abort(s);
        return false;
    }
    die("%s: %s", what, rd_kafka_error_string(e));
}

/* For calls that are not worth retrying. */
static void check_error(struct state *s, rd_kafka_error_t *e, const char *what)
{
    if (retry_or_fail(s, e, what))
        die("%s failed", what);
}

static void txn_commit(struct state *s)
{
    if (!s->open)
        return;
    if (s->o->plain) {
        /* The baseline: wait for the produce acks, then commit the offsets. */
        rd_kafka_flush(s->producer, 60000);
        rd_kafka_resp_err_t err = rd_kafka_commit(s->consumer, s->next, 0);
        if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
            die("offset commit: %s", rd_kafka_err2str(err));
        s->commits++;
        txn_reset(s);
        return;
    }
    rd_kafka_consumer_group_metadata_t *md = rd_kafka_consumer_group_metadata(s->consumer);
    for (;;) {
        rd_kafka_error_t *e = rd_kafka_send_offsets_to_transaction(s->producer, s->next, md, 60000);
        if (!retry_or_fail(s, e, "send_offsets_to_transaction"))
            break;
    }
    if (s->open) { /* not aborted meanwhile */
        for (;;) {
            rd_kafka_error_t *e = rd_kafka_commit_transaction(s->producer, 60000);
            if (e == NULL) {
                s->commits++;
                txn_reset(s);
                break;
            }
            if (!retry_or_fail(s, e, "commit_transaction"))
                break;
        }
    }
    rd_kafka_consumer_group_metadata_destroy(md);
}

static void txn_begin(struct state *s)
{
    if (s->open)
        return;
    if (!s->o->plain)
        check_error(s, rd_kafka_begin_transaction(s->producer), "begin_transaction");
    s->open = true;
    s->txn_start = now_s();
}

/* Partitions move: finish the transaction before they go, so that the next owner starts
 * from these offsets. */
static void rebalance_cb(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                         rd_kafka_topic_partition_list_t *parts, void *opaque)
{
    struct state *s = opaque;
    if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
        logf_(s->o, "assigned %d partition(s)", parts->cnt);
        rd_kafka_assign(rk, parts);
    } else {
        logf_(s->o, "revoked %d partition(s)", parts->cnt);
        txn_commit(s);
        rd_kafka_assign(rk, NULL);
    }
}

/* Delivery reports: in the transactional mode a failed delivery makes the commit fail
 * (librdkafka), so only the plain mode needs to look. */
static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    (void)opaque;
    if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR)
        fprintf(stderr, "enricher: delivery failed: %s\n", rd_kafka_err2str(m->err));
}

static void usage(FILE *f)
{
    fputs("usage: enricher [-b BROKERS] [-g GROUP] [-i IN_TOPIC] [-o OUT_TOPIC]\n"
          "                [-t TRANSACTIONAL_ID] [-n N] [-T MS] [--txn-timeout MS]\n"
          "                [--max-records M] [--plain] [-q]\n"
          "  defaults: -b 127.0.0.1:9092 -g enricher -i order_events -o enriched_orders\n"
          "            -t enricher-1 -n 1000 -T 100 --txn-timeout 10000\n"
          "  Commits a transaction every N records or T ms, whichever comes first.\n",
          f);
}

static long num_arg(const char *s, const char *what)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < 0)
        die("%s needs a number >= 0, not '%s'", what, s);
    return v;
}

int main(int argc, char **argv)
{
    struct opts o = {"127.0.0.1:9092",
                     "enricher",
                     "order_events",
                     "enriched_orders",
                     "enricher-1",
                     1000,
                     100,
                     10000,
                     0,
                     false,
                     false};
    static const struct option longopts[] = {{"txn-timeout", required_argument, 0, 'X'},
                                             {"max-records", required_argument, 0, 'M'},
                                             {"plain", no_argument, 0, 'P'},
                                             {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "b:g:i:o:t:n:T:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'b':
            o.brokers = optarg;
            break;
        case 'g':
            o.group = optarg;
            break;
        case 'i':
            o.in = optarg;
            break;
        case 'o':
            o.out = optarg;
            break;
        case 't':
            o.tid = optarg;
            break;
        case 'n':
            o.every_n = num_arg(optarg, "-n");
            break;
        case 'T':
            o.every_ms = num_arg(optarg, "-T");
            break;
        case 'X':
            o.txn_timeout_ms = num_arg(optarg, "--txn-timeout");
            break;
        case 'M':
            o.max_records = num_arg(optarg, "--max-records");
            break;
        case 'P':
            o.plain = true;
            break;
        case 'q':
            o.quiet = true;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind != argc) {
        usage(stderr);
        return 2;
    }

    char err[512], num[32];
    struct state s = {.o = &o, .next = rd_kafka_topic_partition_list_new(8)};

    rd_kafka_conf_t *pc = base_conf(&o);
    set(pc, "linger.ms", "5");
    if (!o.plain) {
        set(pc, "transactional.id", o.tid);
        snprintf(num, sizeof num, "%ld", o.txn_timeout_ms);
        set(pc, "transaction.timeout.ms", num);
    } else {
        set(pc, "enable.idempotence", "true");
    }
    rd_kafka_conf_set_dr_msg_cb(pc, dr_cb);
    s.producer = rd_kafka_new(RD_KAFKA_PRODUCER, pc, err, sizeof err);
    if (s.producer == NULL)
        die("producer: %s", err);
    if (!o.plain) {
        /* Fences any older instance with this transactional.id and aborts (or completes)
         * the transaction it left open. */
        rd_kafka_error_t *e = rd_kafka_init_transactions(s.producer, 60000);
        if (e != NULL)
            die("init_transactions: %s", rd_kafka_error_string(e));
    }

    rd_kafka_conf_t *cc = base_conf(&o);
    set(cc, "group.id", o.group);
    set(cc, "isolation.level", o.plain ? "read_uncommitted" : "read_committed");
    set(cc, "enable.auto.commit", "false");
    set(cc, "auto.offset.reset", "earliest");
    set(cc, "session.timeout.ms", "6000");
    set(cc, "heartbeat.interval.ms", "500");
    rd_kafka_conf_set_rebalance_cb(cc, rebalance_cb);
    rd_kafka_conf_set_opaque(cc, &s);
    s.consumer = rd_kafka_new(RD_KAFKA_CONSUMER, cc, err, sizeof err);
    if (s.consumer == NULL)
        die("consumer: %s", err);
    rd_kafka_poll_set_consumer(s.consumer);
    rd_kafka_topic_partition_list_t *sub = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(sub, o.in, RD_KAFKA_PARTITION_UA);
    rd_kafka_resp_err_t serr = rd_kafka_subscribe(s.consumer, sub);
    rd_kafka_topic_partition_list_destroy(sub);
    if (serr != RD_KAFKA_RESP_ERR_NO_ERROR)
        die("subscribe %s: %s", o.in, rd_kafka_err2str(serr));

    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    logf_(&o, "%s %s -> %s as %s in group %s, commit every %ld records or %ld ms", o.brokers, o.in,
          o.out, o.plain ? "(plain)" : o.tid, o.group, o.every_n, o.every_ms);

    double t0 = 0;
    char buf[1024];
    while (!stop_requested && (o.max_records == 0 || s.records < o.max_records)) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(s.consumer, 20);
        if (m != NULL) {
            if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                /* informational */
            } else if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
                if (m->err == RD_KAFKA_RESP_ERR__FATAL)
                    die("consumer: %s", rd_kafka_message_errstr(m));
                logf_(&o, "consumer: %s", rd_kafka_message_errstr(m));
            } else {
                if (t0 == 0)
                    t0 = now_s();
                txn_begin(&s);
                int n = enrich(m->payload, m->len, buf, sizeof buf);
                rd_kafka_resp_err_t perr;
                for (;;) {
                    perr = rd_kafka_producev(
                        s.producer, RD_KAFKA_V_TOPIC(o.out), RD_KAFKA_V_PARTITION(m->partition),
                        RD_KAFKA_V_KEY(m->key, m->key_len), RD_KAFKA_V_VALUE(buf, (size_t)n),
                        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
                    if (perr != RD_KAFKA_RESP_ERR__QUEUE_FULL)
                        break;
                    rd_kafka_poll(s.producer, 10);
                }
                if (perr == RD_KAFKA_RESP_ERR__FATAL || perr == RD_KAFKA_RESP_ERR__FENCED)
                    die("produce: fatal error (fenced?): %s", rd_kafka_err2str(perr));
                if (perr != RD_KAFKA_RESP_ERR_NO_ERROR) {
                    logf_(&o, "produce: %s, aborting the transaction", rd_kafka_err2str(perr));
                    rd_kafka_message_destroy(m);
                    if (!o.plain)
                        txn_abort(&s);
                    continue;
                }
                rd_kafka_topic_partition_list_t *nx = s.next;
                rd_kafka_topic_partition_t *tp = rd_kafka_topic_partition_list_find(
                    nx, rd_kafka_topic_name(m->rkt), m->partition);
                if (tp == NULL)
                    tp = rd_kafka_topic_partition_list_add(nx, rd_kafka_topic_name(m->rkt),
                                                           m->partition);
                tp->offset = m->offset + 1;
                s.in_txn++;
                s.records++;
            }
            rd_kafka_message_destroy(m);
        }
        rd_kafka_poll(s.producer, 0);
        if (s.open &&
            (s.in_txn >= o.every_n || (now_s() - s.txn_start) * 1000.0 >= (double)o.every_ms))
            txn_commit(&s);
    }
    txn_commit(&s);
    double secs = t0 > 0 ? now_s() - t0 : 0;
    if (o.max_records > 0)
        printf("records=%ld seconds=%.3f rate=%.0f commits=%ld aborts=%ld\n", s.records, secs,
               secs > 0 ? (double)s.records / secs : 0.0, s.commits, s.aborts);
    logf_(&o, "stopping after %ld records, %ld commits, %ld aborts", s.records, s.commits,
          s.aborts);
    rd_kafka_consumer_close(s.consumer);
    rd_kafka_destroy(s.consumer);
    rd_kafka_flush(s.producer, 10000);
    rd_kafka_destroy(s.producer);
    rd_kafka_topic_partition_list_destroy(s.next);
    return 0;
}
