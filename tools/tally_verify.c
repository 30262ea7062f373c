/* SPDX-License-Identifier: Apache-2.0 */
/* tally verify (issue 11): the exactly-once check any user can run against any Kafka-protocol
 * cluster. This is the driver: it parses the options, creates the topics, seeds the input
 * (verify_readers.c), runs K transactional copiers as child processes (verify_copier.c: this
 * same binary, `verify --copier-child`), injects copier and broker faults on a schedule fixed
 * by --seed (verify_faults.c), reads the output with read_committed, read_uncommitted and a
 * second read_committed reader, fetches the group's committed offsets and hands the history
 * to the checker (verify_check.h). Exit 0 only when no anomaly was found. docs/verify.md is
 * the user's guide. */
#include "tally.h"
#include "verify_int.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka_mock.h>

static const char verify_usage[] =
    "usage: tally verify [--partitions P] [--records N] [--copiers K] [--abort-ratio R]\n"
    "                    [--faults kill,pause,fence|none] [--faults-per-kind F]\n"
    "                    [--broker-faults-per-kind F]\n"
    "                    [--fault-interval-ms MS] [--seed S] [--txn-records M] [--rate R]\n"
    "                    [--broker-faults LIST] [--broker-fault-cmd CMD] [--tally-cluster DIR]\n"
    "                    [--broker-targets LIST] [--broker-settle-ms MS]\n"
    "                    [--hook-points LIST] [--session-timeout-ms MS] [--pause-ms MS]\n"
    "                    [--broker-pause-ms MS] [--broker-episode-ms MS] [--txn-timeout-ms MS]\n"
    "                    [--request-timeout-ms MS]\n"
    "                    [--replication-factor N] [--no-transactions] [--mock-cluster BROKERS]\n"
    "                    [--work-dir DIR] [--max-seconds S] [--max-transactions T]\n"
    "                    [--json FILE] [-X KEY=VALUE ...] [--command-config FILE]\n"
    "\n"
    "Proves exactly-once copying on a cluster: seeds an input topic (values encode partition\n"
    "and sequence) with an idempotent producer, runs K transactional copiers (consume\n"
    "read_committed in a group -> produce -> send offsets -> commit; --abort-ratio of the\n"
    "transactions aborted on purpose) as child processes, injects faults at seeded-random\n"
    "times, then reads the output with read_committed, read_uncommitted and a second reader,\n"
    "fetches the group's offsets and reports anomalies by class: lost, duplicated, reordered,\n"
    "aborted_read, torn_transaction, offsets_ahead_of_data, offsets_behind_data,\n"
    "inconsistent_offsets, unreadable.\n"
    "\n"
    "Copier faults (--faults): kill (kill -9, then a new instance), pause (SIGSTOP for\n"
    "--pause-ms, longer than the session timeout, then SIGCONT), fence (a second instance\n"
    "with the same transactional.id started beside the live one).\n"
    "Broker faults (--broker-faults; an episode lasts --broker-pause-ms for pause, else\n"
    "--broker-episode-ms, default 1000):\n"
    "  with --tally-cluster DIR (DIR/<node>/cmd: a shell line that runs one broker in the\n"
    "  foreground; DIR/<node>/pid: its pid, rewritten on restart): kill, pause, restart,\n"
    "  hook (restart with TALLY_TEST_FAULT set to one of --hook-points, test builds only);\n"
    "  with --broker-fault-cmd CMD: any name; runs `CMD NAME start NODE` and, when the\n"
    "  episode ends, `CMD NAME end NODE`.\n"
    "  --broker-targets LIST: whom the faults of each kind hit, in turn: any (the seeded\n"
    "  draw's broker), controller, txn-coordinator (the leader of a copier's\n"
    "  __transaction_state partition), group-coordinator (of the copiers' group's\n"
    "  __consumer_offsets partition), input-leader, output-leader (of a partition), as the\n"
    "  cluster's Metadata names them when the fault comes. A broker fault waits until\n"
    "  every partition has a leader and its whole ISR and every broker is back, at most\n"
    "  --broker-settle-ms (default 60000; 0: no wait).\n"
    "--mock-cluster B runs against librdkafka's in-memory mock cluster of B brokers (which\n"
    "keeps no transaction markers: expect anomalies).\n"
    "--max-seconds S stops the copy after S seconds, --max-transactions T once the copiers\n"
    "have committed or aborted T transactions (either leaves the history incomplete unless\n"
    "the group's offsets reached the input's end first).\n"
    "-X / --command-config: the client security settings (tally --help), for every client of\n"
    "the run; the copiers get them as WORK-DIR/client.properties (mode 0600).\n"
    "Prints a progress line every second on stderr and the report on stdout; --json FILE\n"
    "writes the same. Exit status: 0 no anomaly in a complete history; 1 anomalies; 2\n"
    "inconclusive (the history is incomplete: fewer records acknowledged than --records, a\n"
    "reader short of a partition's end, the group's offsets not fetched, the copy cut short,\n"
    "out of memory; or the run failed, or a bad command line).\n";

volatile sig_atomic_t verify_stop;

void verify_on_signal(int sig)
{
    (void)sig;
    verify_stop = 1;
}

static void quiet_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
    (void)rk;
    (void)level;
    (void)fac;
    (void)buf;
}

bool verify_conf_set(rd_kafka_conf_t *conf, const char *k, const char *v)
{
    char errstr[256];
    if (rd_kafka_conf_set(conf, k, v, errstr, sizeof errstr) != RD_KAFKA_CONF_OK) {
        tally_fail("client config %s=%s: %s", k, v, errstr);
        return false;
    }
    return true;
}

bool verify_conf_set_int(rd_kafka_conf_t *conf, const char *k, long v)
{
    char num[32];
    snprintf(num, sizeof num, "%ld", v);
    return verify_conf_set(conf, k, num);
}

rd_kafka_t *verify_new_client(rd_kafka_type_t type, rd_kafka_conf_t *conf)
{
    char errstr[512];
    rd_kafka_conf_set_log_cb(conf, quiet_log);
    rd_kafka_t *rk = rd_kafka_new(type, conf, errstr, sizeof errstr);
    if (rk == NULL) {
        rd_kafka_conf_destroy(conf);
        tally_fail("cannot create client: %s", errstr);
    }
    return rk;
}

double verify_since(const struct run *r)
{
    return (double)(mono_ms() - r->t0) / 1000.0;
}

void verify_log_event(struct run *r, struct fault *f, const char *fmt, ...)
{
    char buf[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (f != NULL) {
        f->done_ms = mono_ms() - r->t0;
        snprintf(f->what, sizeof f->what, "%s", buf);
    }
    fprintf(stderr, "verify: %7.1f s  %s\n", verify_since(r), buf);
}

static bool create_topics(struct run *r, const struct tally_ctx *ctx)
{
    rd_kafka_t *rk = tally_connect(ctx);
    if (rk == NULL)
        return false;
    bool ok = false;
    char errstr[256];
    rd_kafka_NewTopic_t *nt[2];
    nt[0] = rd_kafka_NewTopic_new(r->in, r->o->partitions, r->o->replication_factor, errstr,
                                  sizeof errstr);
    nt[1] = rd_kafka_NewTopic_new(r->out, r->o->partitions, r->o->replication_factor, errstr,
                                  sizeof errstr);
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_AdminOptions_t *opts = tally_admin_options(rk, ctx, RD_KAFKA_ADMIN_OP_CREATETOPICS);
    rd_kafka_CreateTopics(rk, nt, 2, opts, q);
    rd_kafka_event_t *ev =
        tally_admin_wait(q, ctx, RD_KAFKA_EVENT_CREATETOPICS_RESULT, "create topics");
    if (ev != NULL) {
        size_t n;
        const rd_kafka_topic_result_t **res =
            rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &n);
        ok = true;
        for (size_t i = 0; i < n; i++)
            if (rd_kafka_topic_result_error(res[i]) != RD_KAFKA_RESP_ERR_NO_ERROR) {
                tally_fail("create topic %s: %s", rd_kafka_topic_result_name(res[i]),
                           rd_kafka_topic_result_error_string(res[i]));
                ok = false;
            }
        rd_kafka_event_destroy(ev);
    }
    rd_kafka_AdminOptions_destroy(opts);
    rd_kafka_queue_destroy(q);
    rd_kafka_NewTopic_destroy_array(nt, 2);
    rd_kafka_destroy(rk);
    return ok;
}

static void write_json(struct run *r, const struct vc_report *rep, double copy_s, double read_s,
                       double check_s, int64_t read_n)
{
    FILE *f = fopen(r->o->json, "w");
    if (f == NULL) {
        tally_fail("--json %s: %s", r->o->json, strerror(errno));
        return;
    }
    fprintf(f,
            "{\"seed\": %" PRIu64 ", \"partitions\": %d, \"records\": %" PRId64
            ", \"copiers\": %d, \"abort_ratio\": %g, \"transactional\": %s, \"copy_seconds\": %.3f"
            ", \"read_seconds\": %.3f, \"check_seconds\": %.3f, \"records_read\": %" PRId64
            ", \"records_checked_per_second\": %.0f, \"faults\": [",
            r->o->seed, r->o->partitions, r->o->records, r->o->copiers, r->o->abort_ratio,
            r->o->transactional ? "true" : "false", copy_s, read_s, check_s, read_n,
            read_s + check_s > 0 ? (double)read_n / (read_s + check_s) : 0.0);
    int k = 0;
    for (int i = 0; i < r->nfaults; i++) {
        const struct fault *ft = &r->faults[i];
        if (ft->done_ms < 0)
            continue;
        fprintf(f, "%s{\"t\": %.3f, \"kind\": \"%s\", \"what\": \"", k++ ? ", " : "",
                (double)ft->done_ms / 1000.0, ft->kind);
        for (const char *c = ft->what; *c; c++)
            fputc(*c == '"' ? '\'' : *c, f);
        fputs("\"}", f);
    }
    fputs("], \"report\": ", f);
    vc_report_json(rep, f);
    fputs("}\n", f);
    fclose(f);
}

static int verify_driver(const struct tally_ctx *ctx, struct verify_opts *o)
{
    struct run *r = calloc(1, sizeof *r);
    struct vc_history *h = vc_history_new(o->partitions);
    rd_kafka_t *mock_rk = NULL, *mon = NULL;
    rd_kafka_mock_cluster_t *mc = NULL;
    /* Anything that stops the run before the checker's verdict leaves it inconclusive (2),
     * never "anomalies" (1): that status means the cluster did something wrong. */
    int rc = VC_INCONCLUSIVE;
    int64_t *coffs = calloc((size_t)o->partitions, sizeof *coffs);
    char why[VC_VALUE_MAX];
    if (r == NULL || h == NULL || coffs == NULL) {
        tally_fail("out of memory");
        free(r);
        vc_history_free(h);
        free(coffs);
        return VC_INCONCLUSIVE;
    }
    r->o = o;
    r->ctx = ctx;
    r->bootstrap = ctx->bootstrap;
    r->ends = calloc((size_t)o->partitions, sizeof *r->ends);
    if (r->ends == NULL) {
        tally_fail("out of memory");
        goto out;
    }
    ssize_t n = readlink("/proc/self/exe", r->exe, sizeof r->exe - 1);
    if (n <= 0) {
        tally_fail("cannot find my own executable");
        goto out;
    }
    r->exe[n] = '\0';
    unsigned tag = (unsigned)getpid() ^ (unsigned)(time(NULL) & 0xffff);
    snprintf(r->in, sizeof r->in, "verify-%" PRIu64 "-%x-in", o->seed, tag);
    snprintf(r->out, sizeof r->out, "verify-%" PRIu64 "-%x-out", o->seed, tag);
    snprintf(r->group, sizeof r->group, "verify-%" PRIu64 "-%x", o->seed, tag);
    if (o->work_dir != NULL)
        snprintf(r->dir, sizeof r->dir, "%s", o->work_dir);
    else
        snprintf(r->dir, sizeof r->dir, "/tmp/tally-verify-%x", tag);
    mkdir(r->dir, 0755);
    char jp[PATH_MAX + 16];
    snprintf(jp, sizeof jp, "%s/journal", r->dir);
    unlink(jp);
    /* The copiers are this binary again: they get the client security settings as a file
     * only we may read (never on their command line, where ps shows it). */
    if (tally_security_any(ctx)) {
        snprintf(r->security, sizeof r->security, "%s/client.properties", r->dir);
        if (tally_security_save(ctx, r->security) != TALLY_OK)
            goto out;
    }

    signal(SIGINT, verify_on_signal);
    signal(SIGTERM, verify_on_signal);

    if (o->mock_brokers > 0) {
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        mock_rk = verify_new_client(RD_KAFKA_PRODUCER, conf);
        mc = mock_rk ? rd_kafka_mock_cluster_new(mock_rk, o->mock_brokers) : NULL;
        if (mc == NULL) {
            tally_fail("cannot start librdkafka's mock cluster");
            goto out;
        }
        r->bootstrap = rd_kafka_mock_cluster_bootstraps(mc);
        rd_kafka_mock_topic_create(mc, r->in, o->partitions, 1);
        rd_kafka_mock_topic_create(mc, r->out, o->partitions, 1);
        fprintf(stderr, "verify: librdkafka mock cluster at %s\n", r->bootstrap);
    } else {
        struct tally_ctx c2 = *ctx;
        if (!create_topics(r, &c2))
            goto out;
    }
    if (o->tally_cluster != NULL && !verify_load_cluster(r))
        goto out;

    fprintf(stderr,
            "verify: seed %" PRIu64 ", %d partitions, %" PRId64
            " records, %d copiers, abort ratio %g, topics %s -> %s, work dir %s\n",
            o->seed, o->partitions, o->records, o->copiers, o->abort_ratio, r->in, r->out, r->dir);
    struct seed_state st = {0};
    int64_t t_seed = mono_ms();
    if (!verify_seed_input(r, h, &st))
        goto out;
    fprintf(stderr,
            "verify: seeded %" PRId64 " acknowledged records (%" PRId64 " failed) in %.1f s\n",
            st.acked, st.failed, (double)(mono_ms() - t_seed) / 1000.0);
    /* The checker vouches only for what was acknowledged: fewer than --records makes the
     * run inconclusive (a cluster that refused every record must not pass). */
    vc_expect_inputs(h, o->records);
    if (st.failed > 0) {
        snprintf(why, sizeof why,
                 "%" PRId64 " of the %" PRId64 " seed records were not delivered (see above)",
                 st.failed, o->records);
        vc_note_incomplete(h, why);
    }

    verify_schedule_faults(r);
    if (o->rate <= 0 && r->nfaults > 0) {
        /* Pace the copy so that it lasts as long as the fault schedule. */
        int64_t window = r->faults[r->nfaults - 1].at_ms + o->fault_interval_ms;
        o->rate = (double)o->records * 1000.0 / (double)window;
    }
    {
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        if (!verify_conf_set(conf, "bootstrap.servers", r->bootstrap) ||
            !tally_security_conf(conf, ctx) || !verify_conf_set(conf, "group.id", r->group) ||
            !verify_conf_set(conf, "isolation.level", "read_committed") ||
            !verify_conf_set(conf, "enable.auto.commit", "false")) {
            rd_kafka_conf_destroy(conf);
            goto out;
        }
        mon = verify_new_client(RD_KAFKA_CONSUMER, conf);
        if (mon == NULL)
            goto out;
    }

    if (o->broker_faults[0] != '\0' && o->mock_brokers == 0) {
        /* Whom a broker fault hits, and whether the cluster is whole again, come from its
         * Metadata: a client of its own, so that nothing else waits on those answers. */
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        if (!verify_conf_set(conf, "bootstrap.servers", r->bootstrap) ||
            !tally_security_conf(conf, ctx) ||
            !verify_conf_set(conf, "topic.metadata.refresh.interval.ms", "1000")) {
            rd_kafka_conf_destroy(conf);
            goto out;
        }
        r->meta = verify_new_client(RD_KAFKA_PRODUCER, conf);
        if (r->meta == NULL)
            goto out;
    }

    r->t0 = mono_ms();
    for (int s = 0; s < o->copiers; s++)
        verify_spawn_copier(r, s);
    int next_fault = 0;
    int64_t last_progress = 0, copied = 0, total = 0;
    for (int p = 0; p < o->partitions; p++)
        total += r->ends[p];
    bool complete = false;
    const char *stopped_by = "interrupted";
    while (!verify_stop) {
        verify_reap(r);
        verify_tick(r);
        int64_t now = mono_ms();
        while (next_fault < r->nfaults && now - r->t0 >= r->faults[next_fault].at_ms) {
            struct fault *f = &r->faults[next_fault];
            if (!verify_inject(r, f)) {
                f->at_ms = now - r->t0 + 500;
                break;
            }
            next_fault++;
        }
        if (now - last_progress >= 1000) {
            last_progress = now;
            if (verify_group_offsets(mon, r, coffs, 2000)) {
                copied = 0;
                complete = true;
                for (int p = 0; p < o->partitions; p++) {
                    copied += coffs[p] > 0 ? coffs[p] : 0;
                    complete &= coffs[p] >= r->ends[p];
                }
            }
            int live = 0, paused = 0;
            for (int s = 0; s < o->copiers; s++) {
                live += r->slots[s].pid > 0;
                paused += r->slots[s].paused;
            }
            fprintf(stderr,
                    "verify: %7.1f s  copied %" PRId64 "/%" PRId64
                    " (%.0f%%)  transactions %" PRId64 " committed, %" PRId64
                    " aborted  copiers %d live, %d paused, %d zombies  faults %d/%d\n",
                    verify_since(r), copied, total,
                    total ? 100.0 * (double)copied / (double)total : 100.0, r->txns_committed,
                    r->txns_aborted, live, paused, r->nzombies, next_fault, r->nfaults);
        }
        if (complete && next_fault >= r->nfaults && verify_brokers_settled(r))
            break;
        if (o->max_seconds > 0 && verify_since(r) > o->max_seconds) {
            stopped_by = "--max-seconds";
            fprintf(stderr, "verify: stopping after --max-seconds %d\n", o->max_seconds);
            break;
        }
        /* Counted from the journal, not the clock: on a slow machine the copiers take longer
         * to join the group and get going, and the run simply lasts longer. */
        verify_count_journal(r);
        if (o->max_transactions > 0 && r->txns_committed + r->txns_aborted >= o->max_transactions) {
            stopped_by = "--max-transactions";
            fprintf(stderr,
                    "verify: stopping after --max-transactions %d (%" PRId64 " committed, %" PRId64
                    " aborted)\n",
                    o->max_transactions, r->txns_committed, r->txns_aborted);
            break;
        }
        sleep_ms(50);
    }
    double copy_s = verify_since(r);
    /* Records never copied are not lost by the cluster: a copy cut short proves nothing of
     * them. */
    if (!complete) {
        if (verify_stop)
            stopped_by = "interrupted";
        snprintf(why, sizeof why,
                 "the copy was %s%s before the group's committed offsets reached the input's end",
                 verify_stop ? "" : "stopped by ", stopped_by);
        vc_note_incomplete(h, why);
    }

    /* Stop the copiers (SIGCONT first: a stopped process does not die of SIGTERM). */
    r->stopping = true;
    for (int s = 0; s < o->copiers; s++)
        if (r->slots[s].pid > 0) {
            kill(r->slots[s].pid, SIGCONT);
            kill(r->slots[s].pid, SIGTERM);
        }
    for (int z = 0; z < r->nzombies; z++)
        kill(r->zombies[z], SIGKILL);
    int64_t until = mono_ms() + 30000;
    for (;;) {
        verify_reap(r);
        verify_tick(r);
        bool any = r->nzombies > 0;
        for (int s = 0; s < o->copiers; s++)
            any |= r->slots[s].pid > 0;
        if (!any)
            break;
        if (mono_ms() > until)
            for (int s = 0; s < o->copiers; s++)
                if (r->slots[s].pid > 0)
                    kill(r->slots[s].pid, SIGKILL);
        sleep_ms(50);
    }
    /* Brokers back up for the reading. */
    verify_brokers_restore(r);

    fprintf(stderr, "verify: %7.1f s  copiers stopped; reading the output\n", verify_since(r));
    if (!verify_wait_stable(r, o->txn_timeout_ms + 30000))
        vc_note_incomplete(h, "the last stable offset still trailed the high watermark when "
                              "the output was read: transactions were left undecided");
    int64_t t_read = mono_ms();
    int64_t n_rc = verify_read_view(r, h, VC_READ_COMMITTED, "read_committed");
    int64_t n_ru = verify_read_view(r, h, VC_READ_UNCOMMITTED, "read_uncommitted");
    int64_t n_2 = verify_read_view(r, h, VC_SECOND_READER, "read_committed");
    for (int p = 0; p < o->partitions; p++)
        coffs[p] = -1;
    bool got = false;
    for (int attempt = 0; attempt < 20 && !got; attempt++)
        if (!(got = verify_group_offsets(mon, r, coffs, 10000)))
            sleep_ms(500);
    for (int p = 0; p < o->partitions; p++)
        vc_set_group_offset(h, p, coffs[p]);
    if (!got)
        vc_note_incomplete(h, "the group's committed offsets could not be fetched");
    verify_read_journal(r, h);
    double read_s = (double)(mono_ms() - t_read) / 1000.0;
    if (verify_stop)
        vc_note_incomplete(h, "interrupted (SIGINT or SIGTERM)");
    struct vc_report rep;
    int64_t t_check = mono_ms();
    if (!vc_check(h, &rep)) {
        tally_fail("out of memory while checking: inconclusive");
        goto out;
    }
    double check_s = (double)(mono_ms() - t_check) / 1000.0;
    int64_t read_n = (n_rc > 0 ? n_rc : 0) + (n_ru > 0 ? n_ru : 0) + (n_2 > 0 ? n_2 : 0);

    printf("tally verify: seed %" PRIu64 ", %d partitions, %" PRId64
           " records, %d copiers (%s), abort ratio %g, %s\n",
           o->seed, o->partitions, o->records, o->copiers,
           o->transactional ? "transactional" : "transactions off", o->abort_ratio,
           o->mock_brokers > 0 ? "librdkafka mock cluster" : r->bootstrap);
    printf("copy: %.1f s; read %" PRId64
           " records in %.2f s and checked in %.2f s (%.0f records/s)\n",
           copy_s, read_n, read_s, check_s,
           read_s + check_s > 0 ? (double)read_n / (read_s + check_s) : 0.0);
    int injected = 0;
    for (int i = 0; i < r->nfaults; i++)
        injected += r->faults[i].done_ms >= 0;
    printf("faults injected: %d\n", injected);
    for (int i = 0; i < r->nfaults; i++)
        if (r->faults[i].done_ms >= 0)
            printf("  %8.1f s  %-13s %s\n", (double)r->faults[i].done_ms / 1000.0,
                   r->faults[i].kind, r->faults[i].what);
    vc_report_print(&rep, stdout);
    if (o->json != NULL)
        write_json(r, &rep, copy_s, read_s, check_s, read_n);
    rc = vc_report_verdict(&rep);
out:
    if (r != NULL) {
        r->stopping = true;
        for (int s = 0; s < o->copiers; s++)
            if (r->slots[s].pid > 0) {
                kill(r->slots[s].pid, SIGKILL);
                waitpid(r->slots[s].pid, NULL, 0);
            }
        for (int z = 0; z < r->nzombies; z++) {
            kill(r->zombies[z], SIGKILL);
            waitpid(r->zombies[z], NULL, 0);
        }
        free(r->ends);
        if (r->meta != NULL)
            rd_kafka_destroy(r->meta);
    }
    if (mon != NULL) {
        rd_kafka_destroy(mon);
    }
    if (mc != NULL)
        rd_kafka_mock_cluster_destroy(mc);
    if (mock_rk != NULL)
        rd_kafka_destroy(mock_rk);
    vc_history_free(h);
    free(coffs);
    free(r);
    return rc;
}

static bool parse_int(const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

int tally_verify_main(const struct tally_ctx *ctx, int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "--copier-child") == 0)
        return verify_copier_child(ctx, argc, argv);
    /* The client security settings may follow `verify` too (as for acls, quotas, users). */
    struct tally_ctx vctx = *ctx;
    struct verify_opts o = {
        .partitions = 3,
        .copiers = 2,
        .txn_records = 50,
        .faults_per_kind = 5,
        .fault_interval_ms = 3000,
        .records = 10000,
        .abort_ratio = 0.1,
        .seed = 1,
        .kill = true,
        .pause = true,
        .fence = true,
        .transactional = true,
        .hook_points = "txn:after_prepare",
        .session_ms = 6000,
        .pause_ms = -1,
        .broker_pause_ms = -1,
        .broker_episode_ms = 1000,
        .txn_timeout_ms = 10000,
        .request_timeout_ms = 5000,
        .replication_factor = 1,
        .max_seconds = 1800,
        .broker_settle_ms = 60000,
        .broker_faults_per_kind = -1,
    };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        long long v;
        if (tally_is_help(a)) {
            fputs(verify_usage, stdout);
            return TALLY_OK;
        }
        if (strcmp(a, "--no-transactions") == 0) {
            o.transactional = false;
            continue;
        }
        if (i + 1 >= argc)
            return tally_usage_error("%s needs a value", a);
        const char *val = argv[++i];
        if (strcmp(a, "-X") == 0 || strcmp(a, "--command-config") == 0) {
            int src =
                a[1] == 'X' ? tally_security_option(&vctx, val) : tally_security_file(&vctx, val);
            if (src != TALLY_OK)
                return src;
            continue;
        }
#define INTOPT(name, field, lo, hi)                                                                \
    if (strcmp(a, name) == 0) {                                                                    \
        if (!parse_int(val, lo, hi, &v))                                                           \
            return tally_usage_error("%s needs a number in [%lld, %lld]", name, (long long)(lo),   \
                                     (long long)(hi));                                             \
        o.field = v;                                                                               \
        continue;                                                                                  \
    }
        INTOPT("--partitions", partitions, 1, 1000)
        INTOPT("--records", records, 1, 1000000000LL)
        INTOPT("--copiers", copiers, 1, MAX_COPIERS)
        INTOPT("--faults-per-kind", faults_per_kind, 0, 1000)
        INTOPT("--broker-faults-per-kind", broker_faults_per_kind, 0, 1000)
        INTOPT("--fault-interval-ms", fault_interval_ms, 10, 3600000)
        INTOPT("--txn-records", txn_records, 1, 100000)
        INTOPT("--session-timeout-ms", session_ms, 1000, 3600000)
        INTOPT("--pause-ms", pause_ms, 1, 3600000)
        INTOPT("--broker-pause-ms", broker_pause_ms, 1, 3600000)
        INTOPT("--broker-episode-ms", broker_episode_ms, 1, 3600000)
        INTOPT("--txn-timeout-ms", txn_timeout_ms, 1000, 3600000)
        INTOPT("--request-timeout-ms", request_timeout_ms, 100, 3600000)
        INTOPT("--replication-factor", replication_factor, 1, 100)
        INTOPT("--mock-cluster", mock_brokers, 1, 16)
        INTOPT("--max-seconds", max_seconds, 1, 86400)
        INTOPT("--max-transactions", max_transactions, 1, 100000000)
        INTOPT("--broker-settle-ms", broker_settle_ms, 0, 3600000)
#undef INTOPT
        if (strcmp(a, "--seed") == 0) {
            if (!parse_int(val, 0, LLONG_MAX, &v))
                return tally_usage_error("--seed needs a number");
            o.seed = (uint64_t)v;
        } else if (strcmp(a, "--abort-ratio") == 0 || strcmp(a, "--rate") == 0) {
            char *end;
            double d = strtod(val, &end);
            if (*end != '\0' || d < 0 || (a[2] == 'a' && d > 1))
                return tally_usage_error("%s needs a number%s", a, a[2] == 'a' ? " in [0, 1]" : "");
            if (a[2] == 'a')
                o.abort_ratio = d;
            else
                o.rate = d;
        } else if (strcmp(a, "--faults") == 0) {
            if (!verify_parse_kinds(&o, val))
                return tally_usage_error("--faults takes kill,pause,fence or none");
        } else if (strcmp(a, "--broker-faults") == 0) {
            snprintf(o.broker_faults, sizeof o.broker_faults, "%s", val);
        } else if (strcmp(a, "--broker-targets") == 0) {
            if (!verify_parse_targets(&o, val))
                return tally_usage_error("--broker-targets takes any, controller, "
                                         "txn-coordinator, group-coordinator, input-leader or "
                                         "output-leader (at most %d)",
                                         MAX_TARGETS);
        } else if (strcmp(a, "--broker-fault-cmd") == 0) {
            o.broker_fault_cmd = val;
        } else if (strcmp(a, "--tally-cluster") == 0) {
            o.tally_cluster = val;
        } else if (strcmp(a, "--hook-points") == 0) {
            o.hook_points = val;
        } else if (strcmp(a, "--json") == 0) {
            o.json = val;
        } else if (strcmp(a, "--work-dir") == 0) {
            o.work_dir = val;
        } else {
            return tally_usage_error("unknown verify option '%s'", a);
        }
    }
    if (o.broker_faults[0] != '\0' && o.broker_fault_cmd == NULL && o.tally_cluster == NULL)
        return tally_usage_error("--broker-faults needs --broker-fault-cmd or --tally-cluster");
    if (o.pause_ms < 0)
        o.pause_ms = o.session_ms + 3000;
    if (o.broker_pause_ms < 0)
        o.broker_pause_ms = o.request_timeout_ms + 2000;
    if (!o.transactional)
        o.abort_ratio = 0;
    return verify_driver(&vctx, &o);
}
