/* SPDX-License-Identifier: Apache-2.0 */
/* The faults of `tally verify` (verify_int.h): the seeded schedule, copier faults (kill -9,
 * SIGSTOP, a same-id zombie), broker faults (kill, pause, restart, hook with --tally-cluster;
 * any name through --broker-fault-cmd) aimed at a broker the schedule drew or at one the
 * cluster's Metadata names (--broker-targets: the controller, a coordinator the copiers use,
 * a partition's leader), and the reaping and restarting of what they stopped. */
#include "tally.h"
#include "verify_int.h"

#include "base/jhash.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

void verify_spawn_copier(struct run *r, int s)
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
        /* The client security settings, when any, as the file the driver wrote: before the
         * command, where they apply to every client of the child. */
        char *args[32];
        int k = tally_child_argv(r->exe, r->bootstrap, r->security, args);
        char *const rest[] = {"verify", "--copier-child",
                              r->in,    r->out,
                              r->group, tid,
                              a_slot,   a_inc,
                              a_abort,  a_txn,
                              a_rate,   a_seed,
                              journal,  a_sess,
                              a_tto,    a_rto,
                              a_outp,   o->transactional ? "1" : "0"};
        for (size_t i = 0; i < sizeof rest / sizeof rest[0]; i++)
            args[k++] = rest[i];
        args[k] = NULL;
        execv(r->exe, args);
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
        verify_log_event(r, NULL, "broker %d: %s ended", b->node, b->episode);
    } else if (b->paused) {
        kill(b->pid, SIGCONT);
        verify_log_event(r, NULL, "broker %d resumed (SIGCONT)", b->node);
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
            verify_log_event(r, NULL, "broker %d started again (pid %d)%s%s", b->node, (int)b->pid,
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

/* ---- broker targets */

static const char *const target_names[] = {
    [VT_ANY] = "any",
    [VT_CONTROLLER] = "controller",
    [VT_TXN_COORDINATOR] = "txn-coordinator",
    [VT_GROUP_COORDINATOR] = "group-coordinator",
    [VT_INPUT_LEADER] = "input-leader",
    [VT_OUTPUT_LEADER] = "output-leader",
};

bool verify_parse_targets(struct verify_opts *o, const char *s)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    o->ntargets = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        size_t k = 0;
        while (k < sizeof target_names / sizeof *target_names && strcmp(t, target_names[k]) != 0)
            k++;
        if (k == sizeof target_names / sizeof *target_names || o->ntargets == MAX_TARGETS)
            return false;
        o->targets[o->ntargets++] = (int)k;
    }
    return o->ntargets > 0;
}

static const struct rd_kafka_metadata_topic *md_topic(const struct rd_kafka_metadata *md,
                                                      const char *name)
{
    for (int i = 0; i < md->topic_cnt; i++)
        if (strcmp(md->topics[i].topic, name) == 0 && md->topics[i].err == 0)
            return &md->topics[i];
    return NULL;
}

/* The leader of topic-partition in md, -1 when it has none (or md does not know it). */
static int32_t md_leader(const struct rd_kafka_metadata *md, const char *topic, int32_t part)
{
    const struct rd_kafka_metadata_topic *t = md_topic(md, topic);
    for (int i = 0; t != NULL && i < t->partition_cnt; i++)
        if (t->partitions[i].id == part)
            return t->partitions[i].err == 0 ? t->partitions[i].leader : -1;
    return -1;
}

/* The node fault f is aimed at, from a fresh Metadata answer, described in what; -1 when it
 * cannot be told now (no Metadata, no leader, no controller). */
static int32_t resolve_target(struct run *r, const struct fault *f, char *what, size_t len)
{
    const struct rd_kafka_metadata *md = NULL;
    int32_t node = -1;
    if (r->meta == NULL || rd_kafka_metadata(r->meta, 1, NULL, &md, 5000) != 0)
        return -1;
    int k = f->target;
    switch ((enum verify_target)f->target_class) {
    case VT_ANY:
        break;
    case VT_CONTROLLER:
        /* The Metadata answer just fetched has updated librdkafka's view of it. */
        node = rd_kafka_controllerid(r->meta, 2000);
        snprintf(what, len, "the controller");
        break;
    case VT_TXN_COORDINATOR:
    case VT_GROUP_COORDINATOR: {
        /* Kafka's rule (and Tally's): the coordinator of a key is the leader of partition
         * abs(javaHash(key)) % partitions of the coordinators' topic. */
        bool txn = f->target_class == VT_TXN_COORDINATOR;
        const char *topic = txn ? "__transaction_state" : "__consumer_offsets";
        const struct rd_kafka_metadata_topic *t = md_topic(md, topic);
        char key[200];
        if (txn)
            snprintf(key, sizeof key, "%s-copier-%d", r->group, k % r->o->copiers);
        else
            snprintf(key, sizeof key, "%s", r->group);
        if (t == NULL || t->partition_cnt < 1)
            break;
        int32_t part = java_partition_for(key, t->partition_cnt);
        node = md_leader(md, topic, part);
        if (txn)
            snprintf(what, len, "the transaction coordinator of copier %d (%s-%d)",
                     k % r->o->copiers, topic, part);
        else
            snprintf(what, len, "the group coordinator (%s-%d)", topic, part);
        break;
    }
    case VT_INPUT_LEADER:
    case VT_OUTPUT_LEADER: {
        const char *topic = f->target_class == VT_INPUT_LEADER ? r->in : r->out;
        int32_t part = k % r->o->partitions;
        node = md_leader(md, topic, part);
        snprintf(what, len, "the leader of %.80s-%d", topic, part);
        break;
    }
    }
    rd_kafka_metadata_destroy(md);
    return node;
}

/* The broker fault f goes to: the seeded draw's (VT_ANY), or the node its target class names
 * now. With --broker-fault-cmd alone, node ids are the cluster's own: a node not seen before
 * gets an entry. NULL (try again later) when the target cannot be told; a target that stays
 * unknown for 30 s falls back to the draw. */
static struct broker *pick_broker(struct run *r, struct fault *f, char *what, size_t len)
{
    what[0] = '\0';
    if (f->target_class != VT_ANY) {
        int32_t node = resolve_target(r, f, what, len);
        for (int i = 0; node >= 0 && i < r->nbrokers; i++)
            if (r->brokers[i].node == node)
                return &r->brokers[i];
        if (node >= 0 && r->o->tally_cluster == NULL && r->nbrokers < MAX_BROKERS) {
            struct broker *b = &r->brokers[r->nbrokers++];
            memset(b, 0, sizeof *b);
            b->node = node;
            return b;
        }
        int64_t now = mono_ms();
        if (f->tried_ms == 0)
            f->tried_ms = now;
        if (now - f->tried_ms < 30000)
            return NULL;
        fprintf(stderr, "verify: %7.1f s  %s: no broker known for 30 s; any broker instead\n",
                verify_since(r), what[0] ? what : target_names[f->target_class]);
        what[0] = '\0';
    }
    if (r->nbrokers == 0) { /* --broker-fault-cmd alone: node ids are the user's */
        r->nbrokers = 1;
        r->brokers[0].node = 1;
    }
    return &r->brokers[f->target % r->nbrokers];
}

/* Whether the cluster has recovered from the last broker fault: every partition of the two
 * topics and of the coordinators' topics has a leader and its whole replica set in sync, and
 * (with --tally-cluster) every broker is in the Metadata (unfenced). A fault that finds it
 * still recovering waits, at most --broker-settle-ms: faults then meet a whole cluster, so
 * that each one tests a failover of its own rather than piling up into an outage. */
static bool cluster_settled(struct run *r)
{
    if (r->meta == NULL || r->o->broker_settle_ms <= 0)
        return true;
    const struct rd_kafka_metadata *md = NULL;
    char why[160] = "no Metadata answer";
    bool ok = rd_kafka_metadata(r->meta, 1, NULL, &md, 5000) == 0;
    if (ok && r->o->tally_cluster != NULL && md->broker_cnt < r->nbrokers) {
        snprintf(why, sizeof why, "%d of the %d brokers in the Metadata", md->broker_cnt,
                 r->nbrokers);
        ok = false;
    }
    const char *topics[] = {r->in, r->out, "__consumer_offsets", "__transaction_state"};
    for (size_t i = 0; ok && i < sizeof topics / sizeof *topics; i++) {
        const struct rd_kafka_metadata_topic *t = md_topic(md, topics[i]);
        for (int j = 0; ok && t != NULL && j < t->partition_cnt; j++) {
            const struct rd_kafka_metadata_partition *pt = &t->partitions[j];
            ok = pt->err == 0 && pt->leader >= 0 && pt->isr_cnt >= pt->replica_cnt;
            if (!ok)
                snprintf(why, sizeof why, "%s-%d: error %d, leader %d, ISR %d of %d replicas",
                         topics[i], pt->id, pt->err, pt->leader, pt->isr_cnt, pt->replica_cnt);
        }
    }
    if (md != NULL)
        rd_kafka_metadata_destroy(md);
    int64_t now = mono_ms();
    if (ok) {
        /* A long wait is worth a line: on a slow machine it is what delays the faults. */
        if (r->unsettled_since != 0 && now - r->unsettled_since >= 10000)
            fprintf(stderr,
                    "verify: %7.1f s  the cluster settled after %.1f s (last missing: %s)\n",
                    verify_since(r), (double)(now - r->unsettled_since) / 1000.0, r->unsettled_why);
        r->unsettled_since = 0;
        return true;
    }
    snprintf(r->unsettled_why, sizeof r->unsettled_why, "%s", why);
    if (r->unsettled_since == 0)
        r->unsettled_since = now;
    if (now - r->unsettled_since < r->o->broker_settle_ms)
        return false;
    fprintf(stderr,
            "verify: %7.1f s  the cluster has not settled (a partition without a leader or "
            "its whole ISR, or a broker missing) for %d ms, last seen: %s; the next broker "
            "fault goes now\n",
            verify_since(r), r->o->broker_settle_ms, why);
    r->unsettled_since = 0;
    return true;
}

/* Injects fault f; false when its target is not available now (try again later). */
bool verify_inject(struct run *r, struct fault *f)
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
            verify_log_event(r, f, "kill -9 copier %d (pid %d, instance %d)", s, (int)sl->pid,
                             sl->inc);
        } else if (strcmp(f->kind, "pause") == 0) {
            kill(sl->pid, SIGSTOP);
            sl->paused = true;
            sl->resume_at = now + o->pause_ms;
            verify_log_event(r, f, "SIGSTOP copier %d (pid %d, instance %d) for %d ms", s,
                             (int)sl->pid, sl->inc, o->pause_ms);
        } else {
            if (r->nzombies >= MAX_ZOMBIES)
                return false;
            pid_t old = sl->pid;
            int old_inc = sl->inc;
            r->zombie_kill_at[r->nzombies] = now + 3 * o->pause_ms + o->txn_timeout_ms;
            r->zombies[r->nzombies++] = old;
            verify_spawn_copier(r, s);
            verify_log_event(
                r, f, "fence copier %d: instance %d (pid %d) started beside instance %d (pid %d)",
                s, sl->inc, (int)sl->pid, old_inc, (int)old);
        }
        return true;
    }
    /* Broker faults: f->kind is "broker-<name>". */
    const char *name = f->kind + 7;
    if (r->nbrokers == 0 && o->broker_fault_cmd == NULL)
        return true;
    for (int i = 0; i < r->nbrokers; i++)
        if (broker_busy(&r->brokers[i]))
            return false; /* one broker episode at a time */
    if (!cluster_settled(r))
        return false;
    char aim[120], on[140];
    struct broker *b = pick_broker(r, f, aim, sizeof aim);
    if (b == NULL)
        return false;
    /* "; <whom the target class named>" after the broker, in the event line. */
    snprintf(on, sizeof on, "%s%s", aim[0] ? ", " : "", aim);
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
        verify_log_event(r, f, "broker %d%s: %s started (%s)", b->node, on, name,
                         o->broker_fault_cmd);
        return true;
    }
    if (strcmp(name, "pause") == 0) {
        kill(b->pid, SIGSTOP);
        b->paused = true;
        b->resume_at = now + o->broker_pause_ms;
        verify_log_event(r, f, "SIGSTOP broker %d (pid %d%s) for %d ms", b->node, (int)b->pid, on,
                         o->broker_pause_ms);
        return true;
    }
    pid_t pid = b->pid;
    b->down = true; /* the reaper must not restart it on its own */
    if (strcmp(name, "restart") == 0) {
        kill(pid, SIGTERM);
        broker_wait_gone(b, 30000);
        verify_log_event(r, f, "restart broker %d (SIGTERM, pid %d%s)", b->node, (int)pid, on);
    } else {
        kill(pid, SIGKILL);
        broker_wait_gone(b, 10000);
        if (strcmp(name, "hook") == 0) {
            int n = 1;
            for (const char *c = o->hook_points; c && *c; c++)
                n += *c == ',';
            b->hook_idx = f->target / MAX_BROKERS % n;
            verify_log_event(r, f, "kill -9 broker %d (pid %d%s) to restart it with a fault hook",
                             b->node, (int)pid, on);
        } else {
            verify_log_event(r, f, "kill -9 broker %d (pid %d%s)", b->node, (int)pid, on);
        }
    }
    b->restart_at = mono_ms() + o->broker_episode_ms;
    return true;
}

/* Reaps exited children: copiers (respawned unless stopping), zombies, brokers. */
void verify_reap(struct run *r)
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
                                verify_since(r), s, r->slots[s].inc,
                                WIFSIGNALED(st) ? "signal" : "status",
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
                verify_log_event(r, NULL, "broker %d (pid %d) exited by itself (%s %d)", b->node,
                                 (int)pid, WIFSIGNALED(st) ? "signal" : "status",
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
void verify_tick(struct run *r)
{
    int64_t now = mono_ms();
    for (int s = 0; s < r->o->copiers; s++) {
        struct slot *sl = &r->slots[s];
        if (sl->paused && now >= sl->resume_at) {
            kill(sl->pid, SIGCONT);
            sl->paused = false;
        }
        if (!r->stopping && sl->pid == 0 && sl->respawn_at && now >= sl->respawn_at)
            verify_spawn_copier(r, s);
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

bool verify_brokers_settled(const struct run *r)
{
    for (int i = 0; i < r->nbrokers; i++)
        if (broker_busy(&r->brokers[i]))
            return false;
    return true;
}

void verify_brokers_restore(struct run *r)
{
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
                verify_log_event(r, NULL, "broker %d restarted without its fault hook (pid %d)",
                                 b->node, (int)b->pid);
        }
    }
}

bool verify_load_cluster(struct run *r)
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
void verify_schedule_faults(struct run *r)
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
    for (int k = 0; k < nk; k++) {
        int per_kind = k >= first_broker && o->broker_faults_per_kind >= 0
                           ? o->broker_faults_per_kind
                           : o->faults_per_kind;
        for (int i = 0; i < per_kind && r->nfaults < MAX_FAULTS; i++) {
            struct fault *f = &r->faults[r->nfaults++];
            /* Broker faults and copier faults share names (kill, pause): tag them. */
            snprintf(f->kind, sizeof f->kind, "%s%.16s", k >= first_broker ? "broker-" : "",
                     kinds[k]);
            f->target = (int)(rng_next(&rng) % (uint64_t)(MAX_BROKERS * 64));
            /* The faults of one kind take the --broker-targets in turn, each kind from the
             * next target on: a few faults of several kinds still cover every target. */
            f->target_class = k >= first_broker && o->ntargets > 0
                                  ? o->targets[(i + k - first_broker) % o->ntargets]
                                  : VT_ANY;
            f->done_ms = -1;
        }
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

bool verify_parse_kinds(struct verify_opts *o, const char *s)
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
