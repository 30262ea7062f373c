/* SPDX-License-Identifier: Apache-2.0 */
/* tally verify (issue 11): the exactly-once check any user can run against any Kafka-protocol
 * cluster. It seeds an input topic with an idempotent producer (recording what was
 * acknowledged), runs K transactional copiers as child processes (this same binary,
 * `verify --copier-child`), injects copier and broker faults on a schedule fixed by --seed,
 * reads the output with read_committed, read_uncommitted and a second read_committed reader,
 * fetches the group's committed offsets and hands the history to the checker
 * (verify_check.h). Exit 0 only when no anomaly was found. docs/verify.md is the user's guide. */
#include "tally.h"
#include "verify_check.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka_mock.h>

static const char verify_usage[] =
    "usage: tally verify [--partitions P] [--records N] [--copiers K] [--abort-ratio R]\n"
    "                    [--faults kill,pause,fence|none] [--faults-per-kind F]\n"
    "                    [--fault-interval-ms MS] [--seed S] [--txn-records M] [--rate R]\n"
    "                    [--broker-faults LIST] [--broker-fault-cmd CMD] [--tally-cluster DIR]\n"
    "                    [--hook-points LIST] [--session-timeout-ms MS] [--pause-ms MS]\n"
    "                    [--broker-pause-ms MS] [--broker-episode-ms MS] [--txn-timeout-ms MS]\n"
    "                    [--request-timeout-ms MS]\n"
    "                    [--replication-factor N] [--no-transactions] [--mock-cluster BROKERS]\n"
    "                    [--work-dir DIR] [--max-seconds S] [--json FILE]\n"
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
    "--mock-cluster B runs against librdkafka's in-memory mock cluster of B brokers (which\n"
    "keeps no transaction markers: expect anomalies).\n"
    "Prints a progress line every second on stderr and the report on stdout; --json FILE\n"
    "writes the same. Exit status: 0 no anomaly, 1 anomalies or a failed run, 2 bad usage.\n";

#define MAX_COPIERS 64
#define MAX_BROKERS 16
#define MAX_FAULTS 4096
#define MAX_ZOMBIES 64

static volatile sig_atomic_t v_stop;

static void v_on_signal(int sig)
{
    (void)sig;
    v_stop = 1;
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* splitmix64: the seeded generator of the fault schedule and of the copiers' choices. */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double rng_unit(uint64_t *s)
{
    return (double)(rng_next(s) >> 11) / 9007199254740992.0;
}

static void quiet_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
    (void)rk;
    (void)level;
    (void)fac;
    (void)buf;
}

static bool conf_set(rd_kafka_conf_t *conf, const char *k, const char *v)
{
    char errstr[256];
    if (rd_kafka_conf_set(conf, k, v, errstr, sizeof errstr) != RD_KAFKA_CONF_OK) {
        tally_fail("client config %s=%s: %s", k, v, errstr);
        return false;
    }
    return true;
}

static bool conf_set_int(rd_kafka_conf_t *conf, const char *k, long v)
{
    char num[32];
    snprintf(num, sizeof num, "%ld", v);
    return conf_set(conf, k, num);
}

static rd_kafka_t *new_client(rd_kafka_type_t type, rd_kafka_conf_t *conf)
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

/* ================================================================ the copier (child) */

struct copier_args {
    const char *bootstrap, *in, *out, *group, *tid, *journal;
    int slot, inc, txn_records, session_ms, txn_timeout_ms, request_timeout_ms, out_partitions;
    double abort_ratio, rate;
    uint64_t seed;
    bool transactional;
};

static bool c_revoked;

static void c_rebalance(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                        rd_kafka_topic_partition_list_t *parts, void *opaque)
{
    (void)opaque;
    if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
        rd_kafka_assign(rk, parts);
    } else {
        c_revoked = true; /* the batch being gathered belongs to the old assignment */
        rd_kafka_assign(rk, NULL);
    }
}

/* Seeks every assigned partition back to the group's committed offset (after an abort).
 * False when that cannot be done: the copier then exits and is replaced. */
static bool c_rewind(rd_kafka_t *c)
{
    rd_kafka_topic_partition_list_t *a = NULL;
    bool ok = false;
    if (rd_kafka_assignment(c, &a) != RD_KAFKA_RESP_ERR_NO_ERROR)
        return false;
    if (a->cnt == 0) {
        ok = true;
        goto out;
    }
    for (int attempt = 0; attempt < 20 && !v_stop; attempt++) {
        rd_kafka_resp_err_t err = rd_kafka_committed(c, a, 10000);
        bool part_err = false;
        for (int i = 0; i < a->cnt; i++)
            part_err |= a->elems[i].err != RD_KAFKA_RESP_ERR_NO_ERROR;
        if (err == RD_KAFKA_RESP_ERR_NO_ERROR && !part_err) {
            ok = true;
            break;
        }
        sleep_ms(250);
    }
    if (!ok)
        goto out;
    for (int i = 0; i < a->cnt; i++)
        if (a->elems[i].offset < 0)
            a->elems[i].offset = RD_KAFKA_OFFSET_BEGINNING;
    rd_kafka_error_t *e = rd_kafka_seek_partitions(c, a, 10000);
    if (e != NULL) {
        fprintf(stderr, "copier: seek: %s\n", rd_kafka_error_string(e));
        rd_kafka_error_destroy(e);
        ok = false;
    }
out:
    rd_kafka_topic_partition_list_destroy(a);
    return ok;
}

static void c_journal(const struct copier_args *a, char what, int64_t txn)
{
    FILE *f = fopen(a->journal, "a");
    if (f == NULL)
        return;
    fprintf(f, "%c %d %" PRId64 "\n", what, a->inc, txn);
    fclose(f);
}

/* Handles a failed transactional call: exits on a fatal error, else aborts the transaction
 * and rewinds. Returns normally only when the copier can go on. */
static void c_txn_failed(const struct copier_args *a, rd_kafka_t *p, rd_kafka_t *c,
                         rd_kafka_error_t *e, const char *what, int64_t txn)
{
    fprintf(stderr, "copier %d/%d: %s: %s%s\n", a->slot, a->inc, what, rd_kafka_error_string(e),
            rd_kafka_error_is_fatal(e) ? " (fatal)" : "");
    if (rd_kafka_error_is_fatal(e)) {
        rd_kafka_error_destroy(e);
        _exit(3);
    }
    rd_kafka_error_destroy(e);
    rd_kafka_error_t *ae = rd_kafka_abort_transaction(p, 60000);
    if (ae != NULL) {
        fprintf(stderr, "copier %d/%d: abort: %s\n", a->slot, a->inc, rd_kafka_error_string(ae));
        _exit(rd_kafka_error_is_fatal(ae) ? 3 : 4);
    }
    c_journal(a, 'A', txn);
    if (!c_rewind(c))
        _exit(4);
}

static int copier_run(const struct copier_args *a)
{
    rd_kafka_conf_t *cc = rd_kafka_conf_new(), *pc = rd_kafka_conf_new();
    char tmp[64];
    uint64_t rng = a->seed ^ ((uint64_t)a->inc << 32);

    if (!conf_set(cc, "bootstrap.servers", a->bootstrap) || !conf_set(cc, "group.id", a->group) ||
        !conf_set(cc, "isolation.level", "read_committed") ||
        !conf_set(cc, "enable.auto.commit", "false") ||
        !conf_set(cc, "auto.offset.reset", "earliest") ||
        !conf_set_int(cc, "session.timeout.ms", a->session_ms) ||
        !conf_set_int(cc, "heartbeat.interval.ms", a->session_ms / 4) ||
        !conf_set_int(cc, "max.poll.interval.ms",
                      a->session_ms * 2 > 10000 ? a->session_ms * 2 : 10000))
        return 1;
    rd_kafka_conf_set_rebalance_cb(cc, c_rebalance);
    if (!conf_set(pc, "bootstrap.servers", a->bootstrap) || !conf_set(pc, "linger.ms", "5") ||
        !conf_set_int(pc, "request.timeout.ms", a->request_timeout_ms))
        return 1;
    if (a->transactional) {
        if (!conf_set(pc, "transactional.id", a->tid) ||
            !conf_set_int(pc, "transaction.timeout.ms", a->txn_timeout_ms))
            return 1;
    } else if (!conf_set(pc, "enable.idempotence", "true")) {
        return 1;
    }
    snprintf(tmp, sizeof tmp, "verify-copier-%d", a->inc);
    conf_set(pc, "client.id", tmp);
    conf_set(cc, "client.id", tmp);

    rd_kafka_t *p = new_client(RD_KAFKA_PRODUCER, pc);
    rd_kafka_t *c = new_client(RD_KAFKA_CONSUMER, cc);
    if (p == NULL || c == NULL)
        return 1;
    if (a->transactional) {
        rd_kafka_error_t *e = rd_kafka_init_transactions(p, 120000);
        if (e != NULL) {
            fprintf(stderr, "copier %d/%d: init_transactions: %s\n", a->slot, a->inc,
                    rd_kafka_error_string(e));
            _exit(rd_kafka_error_is_fatal(e) ? 3 : 4);
        }
    }
    rd_kafka_poll_set_consumer(c);
    rd_kafka_topic_partition_list_t *sub = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(sub, a->in, RD_KAFKA_PARTITION_UA);
    if (rd_kafka_subscribe(c, sub) != RD_KAFKA_RESP_ERR_NO_ERROR)
        _exit(4);
    rd_kafka_topic_partition_list_destroy(sub);

    rd_kafka_message_t **batch = calloc((size_t)a->txn_records, sizeof *batch);
    if (batch == NULL)
        return 1;
    int64_t txn = 0, copied = 0, start = mono_ms();
    while (!v_stop) {
        int nb = 0;
        int target = 1 + (int)(rng_next(&rng) % (uint64_t)a->txn_records);
        int64_t deadline = mono_ms() + 500;
        c_revoked = false;
        while (nb < target && !v_stop) {
            rd_kafka_message_t *m = rd_kafka_consumer_poll(c, 100);
            if (c_revoked) {
                for (int i = 0; i < nb; i++)
                    rd_kafka_message_destroy(batch[i]);
                nb = 0;
                c_revoked = false;
            }
            if (m == NULL) {
                if (nb > 0 && mono_ms() > deadline)
                    break;
                continue;
            }
            if (m->err) {
                if (m->err == RD_KAFKA_RESP_ERR__FATAL)
                    _exit(3);
                rd_kafka_message_destroy(m);
                continue;
            }
            batch[nb++] = m;
        }
        if (nb == 0 || v_stop) {
            for (int i = 0; i < nb; i++)
                rd_kafka_message_destroy(batch[i]);
            continue;
        }
        txn++;
        bool abort = a->transactional && rng_unit(&rng) < a->abort_ratio;
        rd_kafka_error_t *e = NULL;
        if (a->transactional && (e = rd_kafka_begin_transaction(p)) != NULL) {
            c_txn_failed(a, p, c, e, "begin", txn);
            goto next;
        }
        rd_kafka_topic_partition_list_t *offs = rd_kafka_topic_partition_list_new(nb);
        bool produce_failed = false;
        for (int i = 0; i < nb && !produce_failed; i++) {
            rd_kafka_message_t *m = batch[i];
            int ip = -1;
            long long seq = -1;
            char in[64], out[200];
            size_t l = m->len < sizeof in - 1 ? m->len : sizeof in - 1;
            memcpy(in, m->payload ? m->payload : "", l);
            in[l] = '\0';
            if (sscanf(in, "vi p=%d s=%lld", &ip, &seq) != 2)
                ip = -1;
            int len = vc_format_output(out, sizeof out, ip, seq, m->offset, a->slot, a->inc, txn,
                                       nb, i, abort);
            for (;;) {
                rd_kafka_resp_err_t perr =
                    rd_kafka_producev(p, RD_KAFKA_V_TOPIC(a->out),
                                      RD_KAFKA_V_PARTITION(m->partition % a->out_partitions),
                                      RD_KAFKA_V_VALUE(out, (size_t)len),
                                      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
                if (perr == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
                    rd_kafka_poll(p, 10);
                    continue;
                }
                if (perr != RD_KAFKA_RESP_ERR_NO_ERROR) {
                    fprintf(stderr, "copier: produce: %s\n", rd_kafka_err2str(perr));
                    produce_failed = true;
                }
                break;
            }
            rd_kafka_topic_partition_t *tp =
                rd_kafka_topic_partition_list_find(offs, a->in, m->partition);
            if (tp == NULL)
                tp = rd_kafka_topic_partition_list_add(offs, a->in, m->partition);
            if (m->offset + 1 > tp->offset)
                tp->offset = m->offset + 1;
        }
        if (!a->transactional) {
            rd_kafka_flush(p, 60000);
            rd_kafka_commit(c, offs, 0);
            rd_kafka_topic_partition_list_destroy(offs);
            copied += nb;
            goto next;
        }
        if (produce_failed) {
            rd_kafka_topic_partition_list_destroy(offs);
            c_txn_failed(a, p, c, rd_kafka_error_new(RD_KAFKA_RESP_ERR__STATE, "produce failed"),
                         "produce", txn);
            goto next;
        }
        rd_kafka_consumer_group_metadata_t *md = rd_kafka_consumer_group_metadata(c);
        e = rd_kafka_send_offsets_to_transaction(p, offs, md, 60000);
        rd_kafka_consumer_group_metadata_destroy(md);
        rd_kafka_topic_partition_list_destroy(offs);
        if (e != NULL) {
            c_txn_failed(a, p, c, e, "send_offsets", txn);
            goto next;
        }
        if (abort) {
            /* Deliver first: abort_transaction purges what is still queued, and an aborted
             * transaction that never reached the broker proves nothing. */
            rd_kafka_flush(p, 30000);
            e = rd_kafka_abort_transaction(p, 60000);
            if (e != NULL) {
                c_txn_failed(a, p, c, e, "abort", txn);
                goto next;
            }
            c_journal(a, 'A', txn);
            if (!c_rewind(c))
                _exit(4);
            goto next;
        }
        for (int attempt = 0;; attempt++) {
            e = rd_kafka_commit_transaction(p, 60000);
            if (e == NULL) {
                c_journal(a, 'C', txn);
                copied += nb;
                break;
            }
            if (rd_kafka_error_is_retriable(e) && attempt < 10 && !v_stop) {
                rd_kafka_error_destroy(e);
                continue;
            }
            c_txn_failed(a, p, c, e, "commit", txn);
            break;
        }
    next:
        for (int i = 0; i < nb; i++)
            rd_kafka_message_destroy(batch[i]);
        if (a->rate > 0) {
            int64_t due = start + (int64_t)((double)copied * 1000.0 / a->rate);
            int64_t now = mono_ms();
            if (due > now)
                sleep_ms((int)(due - now > 2000 ? 2000 : due - now));
        }
    }
    free(batch);
    rd_kafka_consumer_close(c);
    rd_kafka_destroy(c);
    rd_kafka_flush(p, 10000);
    rd_kafka_destroy(p);
    return 0;
}

/* ================================================================ the driver */

struct verify_opts {
    int partitions, copiers, txn_records, faults_per_kind, fault_interval_ms;
    int64_t records;
    double abort_ratio, rate;
    uint64_t seed;
    bool kill, pause, fence, transactional;
    char broker_faults[256];
    const char *broker_fault_cmd, *tally_cluster, *hook_points, *json, *work_dir;
    int session_ms, pause_ms, broker_pause_ms, broker_episode_ms, txn_timeout_ms,
        request_timeout_ms;
    int replication_factor, mock_brokers, max_seconds;
};

struct fault {
    int64_t at_ms; /* from the start of the copy phase */
    char kind[24];
    int target;      /* copier slot, or broker index */
    int64_t done_ms; /* -1 until injected */
    char what[128];
};

struct slot {
    pid_t pid;
    int inc;
    bool paused;
    int64_t resume_at, respawn_at;
};

struct broker {
    char dir[PATH_MAX];
    int node;
    pid_t pid;
    bool ours, paused, down, via_cmd;
    int64_t resume_at, restart_at; /* 0: none */
    char episode[24];              /* the fault whose end is pending */
    int hook_idx;                  /* which of --hook-points the next start arms */
    int64_t started_at;            /* when this run last started it (0: not by us) */
    int64_t armed_until;           /* started with a fault hook: wait this long for it */
};

struct run {
    struct verify_opts *o;
    const char *bootstrap;
    char exe[PATH_MAX], dir[PATH_MAX], in[128], out[128], group[128];
    struct slot slots[MAX_COPIERS];
    pid_t zombies[MAX_ZOMBIES];
    int64_t zombie_kill_at[MAX_ZOMBIES];
    int nzombies, next_inc;
    struct broker brokers[MAX_BROKERS];
    int nbrokers;
    struct fault faults[MAX_FAULTS];
    int nfaults;
    int64_t t0;
    int64_t *ends; /* input end offsets */
    bool stopping;
};

static double since(const struct run *r)
{
    return (double)(mono_ms() - r->t0) / 1000.0;
}

static void log_event(struct run *r, struct fault *f, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void log_event(struct run *r, struct fault *f, const char *fmt, ...)
{
    char buf[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (f != NULL) {
        f->done_ms = mono_ms() - r->t0;
        snprintf(f->what, sizeof f->what, "%s", buf);
    }
    fprintf(stderr, "verify: %7.1f s  %s\n", since(r), buf);
}

static void spawn_copier(struct run *r, int s)
{
    const struct verify_opts *o = r->o;
    int inc = ++r->next_inc;
    char a_slot[16], a_inc[16], a_abort[32], a_txn[16], a_rate[32], a_seed[32], a_sess[16],
        a_tto[16], a_rto[16], a_outp[16], tid[160], journal[PATH_MAX + 32], log[PATH_MAX + 32];
    snprintf(a_slot, sizeof a_slot, "%d", s);
    snprintf(a_inc, sizeof a_inc, "%d", inc);
    snprintf(a_abort, sizeof a_abort, "%g", o->abort_ratio);
    snprintf(a_txn, sizeof a_txn, "%d", o->txn_records);
    snprintf(a_rate, sizeof a_rate, "%g", o->rate / o->copiers);
    snprintf(a_seed, sizeof a_seed, "%" PRIu64, o->seed);
    snprintf(a_sess, sizeof a_sess, "%d", o->session_ms);
    snprintf(a_tto, sizeof a_tto, "%d", o->txn_timeout_ms);
    snprintf(a_rto, sizeof a_rto, "%d", o->request_timeout_ms);
    snprintf(a_outp, sizeof a_outp, "%d", o->partitions);
    snprintf(tid, sizeof tid, "%s-copier-%d", r->group, s);
    snprintf(journal, sizeof journal, "%s/journal", r->dir);
    snprintf(log, sizeof log, "%s/copier-%d.log", r->dir, inc);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        FILE *f = freopen(log, "w", stderr);
        (void)f;
        execl(r->exe, r->exe, "-b", r->bootstrap, "verify", "--copier-child", r->in, r->out,
              r->group, tid, a_slot, a_inc, a_abort, a_txn, a_rate, a_seed, journal, a_sess, a_tto,
              a_rto, a_outp, o->transactional ? "1" : "0", (char *)NULL);
        _exit(127);
    }
    r->slots[s].pid = pid > 0 ? pid : 0;
    r->slots[s].inc = inc;
    r->slots[s].paused = false;
    r->slots[s].respawn_at = pid > 0 ? 0 : mono_ms() + 1000;
}

static bool pid_alive(pid_t pid)
{
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *rp = strrchr(buf, ')');
    return rp != NULL && rp[1] == ' ' && rp[2] != 'Z' && rp[2] != 'X';
}

static void broker_write_pid(struct broker *b)
{
    char path[PATH_MAX + 8];
    snprintf(path, sizeof path, "%s/pid", b->dir);
    FILE *f = fopen(path, "w");
    if (f != NULL) {
        fprintf(f, "%d\n", (int)b->pid);
        fclose(f);
    }
}

static bool broker_start(struct run *r, struct broker *b, const char *hook)
{
    char path[PATH_MAX + 8], cmd[8192];
    snprintf(path, sizeof path, "%s/cmd", b->dir);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return false;
    size_t n = fread(cmd, 1, sizeof cmd - 1, f);
    fclose(f);
    cmd[n] = '\0';
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        setsid();
        if (hook != NULL)
            setenv("TALLY_TEST_FAULT", hook, 1);
        else
            unsetenv("TALLY_TEST_FAULT");
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    if (pid < 0)
        return false;
    b->pid = pid;
    b->ours = true;
    b->down = false;
    b->started_at = mono_ms();
    b->armed_until = hook != NULL ? b->started_at + 20000 : 0;
    broker_write_pid(b);
    (void)r;
    return true;
}

/* Waits up to ms for a broker we signalled to be gone. */
static void broker_wait_gone(struct broker *b, int ms)
{
    int64_t until = mono_ms() + ms;
    while (mono_ms() < until) {
        if (b->ours) {
            int st;
            pid_t w = waitpid(b->pid, &st, WNOHANG);
            if (w == b->pid || (w < 0 && errno == ECHILD))
                return;
        } else if (!pid_alive(b->pid)) {
            return;
        }
        sleep_ms(20);
    }
}

static void run_cmd(struct run *r, const char *name, const char *phase, int node)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s %s %s %d", r->o->broker_fault_cmd, name, phase, node);
    int rc = system(cmd);
    if (rc != 0)
        fprintf(stderr, "verify: `%s` exited with %d\n", cmd, rc);
}

/* Ends a broker episode (resume, restart, or `CMD NAME end`). */
static void broker_episode_end(struct run *r, struct broker *b)
{
    if (b->via_cmd) {
        run_cmd(r, b->episode, "end", b->node);
        log_event(r, NULL, "broker %d: %s ended", b->node, b->episode);
    } else if (b->paused) {
        kill(b->pid, SIGCONT);
        log_event(r, NULL, "broker %d resumed (SIGCONT)", b->node);
    } else if (b->down) {
        const char *hook = NULL;
        static char hookbuf[64];
        if (strcmp(b->episode, "hook") == 0 && r->o->hook_points != NULL) {
            /* hook: one of the points, chosen by the fault's seeded draw. */
            int idx = b->hook_idx;
            const char *p = r->o->hook_points;
            for (int i = 0; i < idx; i++) {
                const char *c = strchr(p, ',');
                if (c == NULL)
                    break;
                p = c + 1;
            }
            size_t l = strcspn(p, ",");
            snprintf(hookbuf, sizeof hookbuf, "%.*s", (int)l, p);
            hook = hookbuf;
        }
        if (broker_start(r, b, hook))
            log_event(r, NULL, "broker %d started again (pid %d)%s%s", b->node, (int)b->pid,
                      hook ? " with TALLY_TEST_FAULT=" : "", hook ? hook : "");
        else
            b->restart_at = mono_ms() + 1000;
    }
    b->paused = false;
    b->via_cmd = false;
    b->resume_at = 0;
    if (!b->down)
        b->episode[0] = '\0';
}

/* A broker in a fault episode, restarted less than 3 s ago (a fault should meet a broker
 * that has loaded its state and serves the copiers again), or armed with a fault hook that
 * has not fired yet (for up to 20 s: it fires when a transaction reaches that step). */
static bool broker_busy(const struct broker *b)
{
    int64_t now = mono_ms();
    return b->paused || b->down || b->via_cmd ||
           (b->started_at != 0 && now - b->started_at < 3000) || now < b->armed_until;
}

/* Injects fault f; false when its target is not available now (try again later). */
static bool inject(struct run *r, struct fault *f)
{
    const struct verify_opts *o = r->o;
    int64_t now = mono_ms();
    if (strncmp(f->kind, "broker-", 7) != 0) {
        int s = -1;
        for (int i = 0; i < o->copiers; i++) {
            int c = (f->target + i) % o->copiers;
            if (r->slots[c].pid > 0 && !r->slots[c].paused) {
                s = c;
                break;
            }
        }
        if (s < 0)
            return false;
        struct slot *sl = &r->slots[s];
        if (strcmp(f->kind, "kill") == 0) {
            kill(sl->pid, SIGKILL);
            log_event(r, f, "kill -9 copier %d (pid %d, instance %d)", s, (int)sl->pid, sl->inc);
        } else if (strcmp(f->kind, "pause") == 0) {
            kill(sl->pid, SIGSTOP);
            sl->paused = true;
            sl->resume_at = now + o->pause_ms;
            log_event(r, f, "SIGSTOP copier %d (pid %d, instance %d) for %d ms", s, (int)sl->pid,
                      sl->inc, o->pause_ms);
        } else {
            if (r->nzombies >= MAX_ZOMBIES)
                return false;
            pid_t old = sl->pid;
            int old_inc = sl->inc;
            r->zombie_kill_at[r->nzombies] = now + 3 * o->pause_ms + o->txn_timeout_ms;
            r->zombies[r->nzombies++] = old;
            spawn_copier(r, s);
            log_event(r, f,
                      "fence copier %d: instance %d (pid %d) started beside instance %d (pid %d)",
                      s, sl->inc, (int)sl->pid, old_inc, (int)old);
        }
        return true;
    }
    /* Broker faults: f->kind is "broker-<name>". */
    const char *name = f->kind + 7;
    if (r->nbrokers == 0 && o->broker_fault_cmd == NULL)
        return true;
    if (r->nbrokers == 0) { /* --broker-fault-cmd alone: node ids are the user's */
        r->nbrokers = 1;
        r->brokers[0].node = 1;
    }
    struct broker *b = &r->brokers[f->target % r->nbrokers];
    for (int i = 0; i < r->nbrokers; i++)
        if (broker_busy(&r->brokers[i]))
            return false; /* one broker episode at a time */
    snprintf(b->episode, sizeof b->episode, "%s", name);
    bool builtin =
        o->tally_cluster != NULL && (strcmp(name, "kill") == 0 || strcmp(name, "pause") == 0 ||
                                     strcmp(name, "restart") == 0 || strcmp(name, "hook") == 0);
    if (!builtin) {
        if (o->broker_fault_cmd == NULL)
            return true;
        run_cmd(r, name, "start", b->node);
        b->via_cmd = true;
        b->resume_at =
            now + (strcmp(name, "pause") == 0 ? o->broker_pause_ms : o->broker_episode_ms);
        log_event(r, f, "broker %d: %s started (%s)", b->node, name, o->broker_fault_cmd);
        return true;
    }
    if (strcmp(name, "pause") == 0) {
        kill(b->pid, SIGSTOP);
        b->paused = true;
        b->resume_at = now + o->broker_pause_ms;
        log_event(r, f, "SIGSTOP broker %d (pid %d) for %d ms", b->node, (int)b->pid,
                  o->broker_pause_ms);
        return true;
    }
    pid_t pid = b->pid;
    b->down = true; /* the reaper must not restart it on its own */
    if (strcmp(name, "restart") == 0) {
        kill(pid, SIGTERM);
        broker_wait_gone(b, 30000);
        log_event(r, f, "restart broker %d (SIGTERM, pid %d)", b->node, (int)pid);
    } else {
        kill(pid, SIGKILL);
        broker_wait_gone(b, 10000);
        if (strcmp(name, "hook") == 0) {
            int n = 1;
            for (const char *c = o->hook_points; c && *c; c++)
                n += *c == ',';
            b->hook_idx = f->target / MAX_BROKERS % n;
            log_event(r, f, "kill -9 broker %d (pid %d) to restart it with a fault hook", b->node,
                      (int)pid);
        } else {
            log_event(r, f, "kill -9 broker %d (pid %d)", b->node, (int)pid);
        }
    }
    b->restart_at = mono_ms() + o->broker_episode_ms;
    return true;
}

/* Reaps exited children: copiers (respawned unless stopping), zombies, brokers. */
static void reap(struct run *r)
{
    int st;
    pid_t pid;
    while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
        for (int s = 0; s < r->o->copiers; s++)
            if (r->slots[s].pid == pid) {
                r->slots[s].pid = 0;
                r->slots[s].paused = false;
                if (!r->stopping) {
                    r->slots[s].respawn_at = mono_ms() + 500;
                    if (!(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL))
                        fprintf(stderr, "verify: %7.1f s  copier %d (instance %d) exited (%s %d)\n",
                                since(r), s, r->slots[s].inc, WIFSIGNALED(st) ? "signal" : "status",
                                WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
                }
            }
        for (int z = 0; z < r->nzombies; z++)
            if (r->zombies[z] == pid) {
                r->zombies[z] = r->zombies[--r->nzombies];
                r->zombie_kill_at[z] = r->zombie_kill_at[r->nzombies];
                break;
            }
        for (int i = 0; i < r->nbrokers; i++) {
            struct broker *b = &r->brokers[i];
            if (b->ours && b->pid == pid && !b->down) {
                log_event(r, NULL, "broker %d (pid %d) exited by itself (%s %d)", b->node, (int)pid,
                          WIFSIGNALED(st) ? "signal" : "status",
                          WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
                b->down = true;
                b->armed_until = 0;
                b->episode[0] = '\0';
                b->restart_at = mono_ms() + 1000;
            }
        }
    }
}

/* Restarts and resumes what is due; kills zombies that outlived their time. */
static void tick(struct run *r)
{
    int64_t now = mono_ms();
    for (int s = 0; s < r->o->copiers; s++) {
        struct slot *sl = &r->slots[s];
        if (sl->paused && now >= sl->resume_at) {
            kill(sl->pid, SIGCONT);
            sl->paused = false;
        }
        if (!r->stopping && sl->pid == 0 && sl->respawn_at && now >= sl->respawn_at)
            spawn_copier(r, s);
    }
    for (int z = 0; z < r->nzombies; z++)
        if (now >= r->zombie_kill_at[z])
            kill(r->zombies[z], SIGKILL);
    for (int i = 0; i < r->nbrokers; i++) {
        struct broker *b = &r->brokers[i];
        if ((b->paused || b->via_cmd) && now >= b->resume_at)
            broker_episode_end(r, b);
        if (b->down && b->restart_at && now >= b->restart_at) {
            b->restart_at = 0;
            broker_episode_end(r, b);
            b->episode[0] = '\0';
        }
    }
}

static bool brokers_settled(const struct run *r)
{
    for (int i = 0; i < r->nbrokers; i++)
        if (broker_busy(&r->brokers[i]))
            return false;
    return true;
}

/* The group's committed offsets of the input partitions into offs[] (-1: none). */
static bool group_offsets(rd_kafka_t *mon, const struct run *r, int64_t *offs, int timeout_ms)
{
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(r->o->partitions);
    for (int p = 0; p < r->o->partitions; p++)
        rd_kafka_topic_partition_list_add(l, r->in, p);
    rd_kafka_resp_err_t err = rd_kafka_committed(mon, l, timeout_ms);
    bool ok = err == RD_KAFKA_RESP_ERR_NO_ERROR;
    for (int i = 0; ok && i < l->cnt; i++) {
        if (l->elems[i].err != RD_KAFKA_RESP_ERR_NO_ERROR)
            ok = false;
        offs[l->elems[i].partition] = l->elems[i].offset < 0 ? -1 : l->elems[i].offset;
    }
    rd_kafka_topic_partition_list_destroy(l);
    return ok;
}

static rd_kafka_t *new_consumer(const struct run *r, const char *group, const char *isolation)
{
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    if (!conf_set(conf, "bootstrap.servers", r->bootstrap) || !conf_set(conf, "group.id", group) ||
        !conf_set(conf, "isolation.level", isolation) ||
        !conf_set(conf, "enable.auto.commit", "false") ||
        !conf_set(conf, "enable.partition.eof", "true") ||
        !conf_set(conf, "auto.offset.reset", "earliest")) {
        rd_kafka_conf_destroy(conf);
        return NULL;
    }
    return new_client(RD_KAFKA_CONSUMER, conf);
}

/* Reads every output partition from the beginning to its end for this isolation level and
 * adds what was read to h as view. Returns the records read, -1 on failure. */
static int64_t read_view(struct run *r, struct vc_history *h, enum vc_view view,
                         const char *isolation)
{
    char group[160];
    snprintf(group, sizeof group, "%s-reader-%d", r->group, (int)view);
    rd_kafka_t *c = new_consumer(r, group, isolation);
    if (c == NULL)
        return -1;
    int P = r->o->partitions;
    int64_t *hi = calloc((size_t)P, sizeof *hi);
    bool *eof = calloc((size_t)P, sizeof *eof);
    int64_t n = 0;
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(P);
    for (int p = 0; p < P; p++) {
        int64_t lo = 0;
        if (rd_kafka_query_watermark_offsets(c, r->out, p, &lo, &hi[p], 30000) !=
            RD_KAFKA_RESP_ERR_NO_ERROR)
            hi[p] = -1;
        rd_kafka_topic_partition_list_add(l, r->out, p)->offset = RD_KAFKA_OFFSET_BEGINNING;
    }
    rd_kafka_assign(c, l);
    rd_kafka_topic_partition_list_destroy(l);
    int done = 0;
    int64_t last_progress = mono_ms();
    while (done < P && !v_stop && mono_ms() - last_progress < 60000) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(c, 200);
        if (m == NULL)
            continue;
        last_progress = mono_ms();
        if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
            if (m->partition >= 0 && m->partition < P && !eof[m->partition] &&
                m->offset >= hi[m->partition]) {
                eof[m->partition] = true;
                done++;
            }
        } else if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
            vc_add_read(h, view, m->partition, m->offset, m->payload, m->len);
            n++;
        }
        rd_kafka_message_destroy(m);
    }
    for (int p = 0; p < P; p++)
        if (!eof[p])
            fprintf(stderr,
                    "verify: the %s reader did not reach offset %" PRId64 " of partition %d\n",
                    isolation, hi[p], p);
    rd_kafka_consumer_close(c);
    rd_kafka_destroy(c);
    free(hi);
    free(eof);
    return n;
}

/* Waits until read_committed's end (the LSO) equals the high watermark on every output
 * partition, so that the readers see every decided transaction. */
static void wait_stable(struct run *r, int max_ms)
{
    rd_kafka_t *rc = new_consumer(r, "verify-watermarks", "read_committed");
    rd_kafka_t *ru = new_consumer(r, "verify-watermarks", "read_uncommitted");
    int64_t until = mono_ms() + max_ms;
    bool stable = false;
    while (rc && ru && !stable && mono_ms() < until && !v_stop) {
        stable = true;
        for (int p = 0; p < r->o->partitions && stable; p++) {
            int64_t lo, h1 = -1, h2 = -2;
            rd_kafka_query_watermark_offsets(rc, r->out, p, &lo, &h1, 10000);
            rd_kafka_query_watermark_offsets(ru, r->out, p, &lo, &h2, 10000);
            stable = h1 == h2;
        }
        if (!stable)
            sleep_ms(500);
    }
    if (!stable)
        fprintf(stderr, "verify: the last stable offset still trails the high watermark\n");
    if (rc)
        rd_kafka_destroy(rc);
    if (ru)
        rd_kafka_destroy(ru);
}

static void read_journal(struct run *r, struct vc_history *h)
{
    char path[PATH_MAX + 16], line[128];
    snprintf(path, sizeof path, "%s/journal", r->dir);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return;
    while (fgets(line, sizeof line, f) != NULL) {
        char what;
        int inc;
        long long txn;
        if (sscanf(line, "%c %d %lld", &what, &inc, &txn) == 3)
            vc_add_txn_outcome(h, inc, txn, what == 'C');
    }
    fclose(f);
}

/* ---------------------------------------------------------------- seeding */

struct seed_state {
    struct vc_history *h;
    int64_t acked, failed;
};

static void seed_dr(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    struct seed_state *s = opaque;
    if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        s->failed++;
        return;
    }
    int p;
    long long seq;
    char buf[64];
    size_t l = m->len < sizeof buf - 1 ? m->len : sizeof buf - 1;
    memcpy(buf, m->payload, l);
    buf[l] = '\0';
    if (sscanf(buf, "vi p=%d s=%lld", &p, &seq) == 2) {
        vc_add_input(s->h, p, seq, m->offset);
        s->acked++;
    }
}

static bool seed_input(struct run *r, struct vc_history *h, struct seed_state *st)
{
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    if (!conf_set(conf, "bootstrap.servers", r->bootstrap) ||
        !conf_set(conf, "enable.idempotence", "true") || !conf_set(conf, "linger.ms", "5") ||
        !conf_set(conf, "message.timeout.ms", "120000")) {
        rd_kafka_conf_destroy(conf);
        return false;
    }
    st->h = h;
    rd_kafka_conf_set_dr_msg_cb(conf, seed_dr);
    rd_kafka_conf_set_opaque(conf, st);
    rd_kafka_t *p = new_client(RD_KAFKA_PRODUCER, conf);
    if (p == NULL)
        return false;
    int P = r->o->partitions;
    for (int64_t i = 0; i < r->o->records && !v_stop; i++) {
        char v[64];
        int part = (int)(i % P);
        int len = vc_format_input(v, sizeof v, part, i / P);
        for (;;) {
            rd_kafka_resp_err_t err =
                rd_kafka_producev(p, RD_KAFKA_V_TOPIC(r->in), RD_KAFKA_V_PARTITION(part),
                                  RD_KAFKA_V_VALUE(v, (size_t)len),
                                  RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
            if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
                rd_kafka_poll(p, 10);
                continue;
            }
            if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
                rd_kafka_destroy(p);
                return tally_fail("seeding: %s", rd_kafka_err2str(err)) == TALLY_OK;
            }
            break;
        }
        rd_kafka_poll(p, 0);
    }
    rd_kafka_flush(p, 180000);
    /* The input's ends, which the group's offsets must reach. */
    for (int part = 0; part < P; part++) {
        int64_t lo = 0, hi = 0;
        if (rd_kafka_query_watermark_offsets(p, r->in, part, &lo, &hi, 30000) !=
            RD_KAFKA_RESP_ERR_NO_ERROR) {
            rd_kafka_destroy(p);
            return tally_fail("cannot read the input's end offsets") == TALLY_OK;
        }
        r->ends[part] = hi;
    }
    rd_kafka_destroy(p);
    return true;
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

static bool load_cluster(struct run *r)
{
    DIR *d = opendir(r->o->tally_cluster);
    if (d == NULL)
        return tally_fail("--tally-cluster %s: %s", r->o->tally_cluster, strerror(errno)) ==
               TALLY_OK;
    struct dirent *de;
    while ((de = readdir(d)) != NULL && r->nbrokers < MAX_BROKERS) {
        if (de->d_name[0] == '.')
            continue;
        struct broker *b = &r->brokers[r->nbrokers];
        memset(b, 0, sizeof *b);
        snprintf(b->dir, sizeof b->dir, "%s/%s", r->o->tally_cluster, de->d_name);
        char path[PATH_MAX + 8];
        snprintf(path, sizeof path, "%s/pid", b->dir);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            continue;
        int pid = 0;
        if (fscanf(f, "%d", &pid) != 1)
            pid = 0;
        fclose(f);
        b->pid = pid;
        b->node = atoi(de->d_name);
        r->nbrokers++;
    }
    closedir(d);
    if (r->nbrokers == 0)
        return tally_fail("--tally-cluster %s: no DIR/<node>/pid", r->o->tally_cluster) == TALLY_OK;
    return true;
}

/* Builds the fault schedule: faults_per_kind of each kind, shuffled by the seed, one every
 * fault_interval_ms on average. */
static void schedule_faults(struct run *r)
{
    const struct verify_opts *o = r->o;
    uint64_t rng = o->seed;
    const char *kinds[32];
    int nk = 0;
    if (o->kill)
        kinds[nk++] = "kill";
    if (o->pause)
        kinds[nk++] = "pause";
    if (o->fence)
        kinds[nk++] = "fence";
    static char bf[256];
    snprintf(bf, sizeof bf, "%s", o->broker_faults);
    int first_broker = nk;
    for (char *save = NULL, *t = strtok_r(bf, ",", &save); t && nk < 32;
         t = strtok_r(NULL, ",", &save))
        kinds[nk++] = t;
    for (int k = 0; k < nk; k++)
        for (int i = 0; i < o->faults_per_kind && r->nfaults < MAX_FAULTS; i++) {
            struct fault *f = &r->faults[r->nfaults++];
            /* Broker faults and copier faults share names (kill, pause): tag them. */
            snprintf(f->kind, sizeof f->kind, "%s%.16s", k >= first_broker ? "broker-" : "",
                     kinds[k]);
            f->target = (int)(rng_next(&rng) % (uint64_t)(MAX_BROKERS * 64));
            f->done_ms = -1;
        }
    for (int i = r->nfaults - 1; i > 0; i--) { /* Fisher-Yates */
        int j = (int)(rng_next(&rng) % (uint64_t)(i + 1));
        struct fault t = r->faults[i];
        r->faults[i] = r->faults[j];
        r->faults[j] = t;
    }
    int64_t t = o->fault_interval_ms;
    for (int i = 0; i < r->nfaults; i++) {
        r->faults[i].at_ms = t;
        t += o->fault_interval_ms / 2 +
             (int64_t)(rng_next(&rng) % (uint64_t)(o->fault_interval_ms + 1));
    }
}

static bool parse_kinds(struct verify_opts *o, const char *s)
{
    o->kill = o->pause = o->fence = false;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (strcmp(t, "kill") == 0)
            o->kill = true;
        else if (strcmp(t, "pause") == 0)
            o->pause = true;
        else if (strcmp(t, "fence") == 0)
            o->fence = true;
        else if (strcmp(t, "none") != 0)
            return false;
    }
    return true;
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
    int rc = TALLY_FAIL;
    int64_t *coffs = calloc((size_t)o->partitions, sizeof *coffs);
    if (r == NULL || h == NULL || coffs == NULL)
        return tally_fail("out of memory");
    r->o = o;
    r->bootstrap = ctx->bootstrap;
    r->ends = calloc((size_t)o->partitions, sizeof *r->ends);
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

    signal(SIGINT, v_on_signal);
    signal(SIGTERM, v_on_signal);

    if (o->mock_brokers > 0) {
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        mock_rk = new_client(RD_KAFKA_PRODUCER, conf);
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
    if (o->tally_cluster != NULL && !load_cluster(r))
        goto out;

    fprintf(stderr,
            "verify: seed %" PRIu64 ", %d partitions, %" PRId64
            " records, %d copiers, abort ratio %g, topics %s -> %s, work dir %s\n",
            o->seed, o->partitions, o->records, o->copiers, o->abort_ratio, r->in, r->out, r->dir);
    struct seed_state st = {0};
    int64_t t_seed = mono_ms();
    if (!seed_input(r, h, &st))
        goto out;
    fprintf(stderr,
            "verify: seeded %" PRId64 " acknowledged records (%" PRId64 " failed) in %.1f s\n",
            st.acked, st.failed, (double)(mono_ms() - t_seed) / 1000.0);

    schedule_faults(r);
    if (o->rate <= 0 && r->nfaults > 0) {
        /* Pace the copy so that it lasts as long as the fault schedule. */
        int64_t window = r->faults[r->nfaults - 1].at_ms + o->fault_interval_ms;
        o->rate = (double)o->records * 1000.0 / (double)window;
    }
    {
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        if (!conf_set(conf, "bootstrap.servers", r->bootstrap) ||
            !conf_set(conf, "group.id", r->group) ||
            !conf_set(conf, "isolation.level", "read_committed") ||
            !conf_set(conf, "enable.auto.commit", "false")) {
            rd_kafka_conf_destroy(conf);
            goto out;
        }
        mon = new_client(RD_KAFKA_CONSUMER, conf);
        if (mon == NULL)
            goto out;
    }

    r->t0 = mono_ms();
    for (int s = 0; s < o->copiers; s++)
        spawn_copier(r, s);
    int next_fault = 0;
    int64_t last_progress = 0, copied = 0, total = 0;
    for (int p = 0; p < o->partitions; p++)
        total += r->ends[p];
    bool complete = false;
    while (!v_stop) {
        reap(r);
        tick(r);
        int64_t now = mono_ms();
        while (next_fault < r->nfaults && now - r->t0 >= r->faults[next_fault].at_ms) {
            struct fault *f = &r->faults[next_fault];
            if (!inject(r, f)) {
                f->at_ms = now - r->t0 + 500;
                break;
            }
            next_fault++;
        }
        if (now - last_progress >= 1000) {
            last_progress = now;
            if (group_offsets(mon, r, coffs, 2000)) {
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
                    " (%.0f%%)  copiers %d live, %d paused, %d zombies  faults %d/%d\n",
                    since(r), copied, total, total ? 100.0 * (double)copied / (double)total : 100.0,
                    live, paused, r->nzombies, next_fault, r->nfaults);
        }
        if (complete && next_fault >= r->nfaults && brokers_settled(r))
            break;
        if (o->max_seconds > 0 && since(r) > o->max_seconds) {
            fprintf(stderr, "verify: stopping after --max-seconds %d\n", o->max_seconds);
            break;
        }
        sleep_ms(50);
    }
    double copy_s = since(r);

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
        reap(r);
        tick(r);
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
    for (int i = 0; i < r->nbrokers; i++) {
        struct broker *b = &r->brokers[i];
        if (b->paused || b->down || b->via_cmd)
            broker_episode_end(r, b);
        if (b->armed_until != 0 && b->ours && !b->down) {
            /* Still armed with a fault hook: it must not stop itself under the readers. */
            kill(b->pid, SIGKILL);
            broker_wait_gone(b, 10000);
            b->episode[0] = '\0';
            if (broker_start(r, b, NULL))
                log_event(r, NULL, "broker %d restarted without its fault hook (pid %d)", b->node,
                          (int)b->pid);
        }
    }

    fprintf(stderr, "verify: %7.1f s  copiers stopped; reading the output\n", since(r));
    wait_stable(r, o->txn_timeout_ms + 30000);
    int64_t t_read = mono_ms();
    int64_t n_rc = read_view(r, h, VC_READ_COMMITTED, "read_committed");
    int64_t n_ru = read_view(r, h, VC_READ_UNCOMMITTED, "read_uncommitted");
    int64_t n_2 = read_view(r, h, VC_SECOND_READER, "read_committed");
    for (int p = 0; p < o->partitions; p++)
        coffs[p] = -1;
    bool got = false;
    for (int attempt = 0; attempt < 20 && !got; attempt++)
        if (!(got = group_offsets(mon, r, coffs, 10000)))
            sleep_ms(500);
    for (int p = 0; p < o->partitions; p++)
        vc_set_group_offset(h, p, coffs[p]);
    read_journal(r, h);
    double read_s = (double)(mono_ms() - t_read) / 1000.0;
    if (n_rc < 0 || n_ru < 0 || n_2 < 0) {
        tally_fail("cannot read the output topic");
        goto out;
    }
    struct vc_report rep;
    int64_t t_check = mono_ms();
    if (!vc_check(h, &rep)) {
        tally_fail("out of memory while checking");
        goto out;
    }
    double check_s = (double)(mono_ms() - t_check) / 1000.0;
    int64_t read_n = n_rc + n_ru + n_2;

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
    if (!got)
        printf("note: the group's committed offsets could not be fetched\n");
    vc_report_print(&rep, stdout);
    if (o->json != NULL)
        write_json(r, &rep, copy_s, read_s, check_s, read_n);
    rc = vc_report_anomalies(&rep) == 0 && got ? TALLY_OK : TALLY_FAIL;
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

static int copier_child(const struct tally_ctx *ctx, int argc, char **argv)
{
    if (argc != 18)
        return tally_usage_error("--copier-child: %d arguments", argc);
    struct copier_args a = {.bootstrap = ctx->bootstrap};
    a.in = argv[2];
    a.out = argv[3];
    a.group = argv[4];
    a.tid = argv[5];
    a.slot = atoi(argv[6]);
    a.inc = atoi(argv[7]);
    a.abort_ratio = atof(argv[8]);
    a.txn_records = atoi(argv[9]);
    a.rate = atof(argv[10]);
    a.seed = strtoull(argv[11], NULL, 10);
    a.journal = argv[12];
    a.session_ms = atoi(argv[13]);
    a.txn_timeout_ms = atoi(argv[14]);
    a.request_timeout_ms = atoi(argv[15]);
    a.out_partitions = atoi(argv[16]);
    a.transactional = strcmp(argv[17], "1") == 0;
    if (a.txn_records < 1 || a.out_partitions < 1)
        return TALLY_USAGE;
    signal(SIGTERM, v_on_signal);
    signal(SIGINT, v_on_signal);
    return copier_run(&a);
}

int tally_verify_main(const struct tally_ctx *ctx, int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "--copier-child") == 0)
        return copier_child(ctx, argc, argv);
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
            if (!parse_kinds(&o, val))
                return tally_usage_error("--faults takes kill,pause,fence or none");
        } else if (strcmp(a, "--broker-faults") == 0) {
            snprintf(o.broker_faults, sizeof o.broker_faults, "%s", val);
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
    return verify_driver(ctx, &o);
}
