/* SPDX-License-Identifier: Apache-2.0 */
/* The parts of `tally verify` (tools/tally_verify.c, the driver) and what they share: the
 * copier child (verify_copier.c), the fault injector (verify_faults.c: the schedule, copier
 * and broker faults, reaping and restarting) and the readers (verify_readers.c: seeding the
 * input, reading the output views, the group's offsets and the copiers' journal). The
 * checker they feed is verify_check.h; docs/verify.md is the user's guide. */
#ifndef TALLY_TOOLS_VERIFY_INT_H
#define TALLY_TOOLS_VERIFY_INT_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <librdkafka/rdkafka.h>

#include "tally.h"
#include "verify_check.h"

#define MAX_COPIERS 64
#define MAX_BROKERS 16
#define MAX_FAULTS 4096
#define MAX_ZOMBIES 64
#define MAX_TARGETS 8

/* --broker-targets: whom a broker fault hits. Resolved from the cluster's Metadata when the
 * fault is injected (verify_faults.c). */
enum verify_target {
    VT_ANY,               /* the broker the seeded draw picks */
    VT_CONTROLLER,        /* the active controller */
    VT_TXN_COORDINATOR,   /* the leader of a copier's __transaction_state partition */
    VT_GROUP_COORDINATOR, /* the leader of the copiers' group's __consumer_offsets partition */
    VT_INPUT_LEADER,      /* the leader of an input partition */
    VT_OUTPUT_LEADER,     /* the leader of an output partition */
};

/* Set by SIGINT/SIGTERM (verify_on_signal): every loop of the driver and the copier ends. */
extern volatile sig_atomic_t verify_stop;
void verify_on_signal(int sig);

static inline int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* splitmix64: the seeded generator of the fault schedule and of the copiers' choices. */
static inline uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline double rng_unit(uint64_t *s)
{
    return (double)(rng_next(s) >> 11) / 9007199254740992.0;
}

/* A client property; false (printed) when librdkafka refuses it. */
bool verify_conf_set(rd_kafka_conf_t *conf, const char *k, const char *v);
bool verify_conf_set_int(rd_kafka_conf_t *conf, const char *k, long v);
/* A client with the log silenced; takes ownership of conf. NULL (printed) on failure. */
rd_kafka_t *verify_new_client(rd_kafka_type_t type, rd_kafka_conf_t *conf);

struct verify_opts {
    int partitions, copiers, txn_records, faults_per_kind, fault_interval_ms;
    int broker_faults_per_kind; /* -1: faults_per_kind */
    int64_t records;
    double abort_ratio, rate;
    uint64_t seed;
    bool kill, pause, fence, transactional;
    char broker_faults[256];
    const char *broker_fault_cmd, *tally_cluster, *hook_points, *json, *work_dir;
    int session_ms, pause_ms, broker_pause_ms, broker_episode_ms, txn_timeout_ms,
        request_timeout_ms;
    int replication_factor, mock_brokers, max_seconds;
    int max_transactions; /* 0: none; else the copy stops once the journal holds this many */
    int targets[MAX_TARGETS], ntargets; /* --broker-targets; none: VT_ANY */
    int broker_settle_ms;               /* --broker-settle-ms */
};

struct fault {
    int64_t at_ms; /* from the start of the copy phase */
    char kind[24];
    int target;       /* copier slot, or broker index (the seeded draw) */
    int target_class; /* broker faults: enum verify_target */
    int64_t done_ms;  /* -1 until injected */
    int64_t tried_ms; /* first attempt whose target could not be resolved (0: none) */
    char what[200];
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
    const struct tally_ctx *ctx; /* the client security settings of every client */
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
    /* The copiers' journal as read so far (verify_count_journal): the offset after its last
     * complete line, and the transactions those lines say were decided. */
    long journal_off;
    int64_t txns_committed, txns_aborted;
    rd_kafka_t *meta;             /* Metadata for broker targets and settling; NULL: none */
    char security[PATH_MAX + 32]; /* the copiers' --command-config ("": none set) */
    int64_t unsettled_since;      /* first look at a cluster not settled yet (0: settled) */
    char unsettled_why[160];      /* what the last look at it found missing */
};

/* Seconds since the copy phase started. */
double verify_since(const struct run *r);
/* Prints a timestamped event on stderr; with f, records it as that fault's injection. */
void verify_log_event(struct run *r, struct fault *f, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- the copier (verify_copier.c) */

/* `tally verify --copier-child ...`: one transactional copier, spawned by the driver. */
int verify_copier_child(const struct tally_ctx *ctx, int argc, char **argv);

/* ---- faults (verify_faults.c) */

/* Starts (or restarts) copier slot s as a new instance. */
void verify_spawn_copier(struct run *r, int s);
/* Injects fault f; false when its target is not available now (try again later). */
bool verify_inject(struct run *r, struct fault *f);
/* Reaps exited children: copiers (respawned unless stopping), zombies, brokers. */
void verify_reap(struct run *r);
/* Restarts and resumes what is due; kills zombies that outlived their time. */
void verify_tick(struct run *r);
/* No broker in a fault episode, just restarted, or armed with a hook that has not fired. */
bool verify_brokers_settled(const struct run *r);
/* Ends every broker episode and restarts a broker still armed with a fault hook without it,
 * so that the readers meet brokers that serve them. */
void verify_brokers_restore(struct run *r);
/* Reads --tally-cluster DIR (DIR/<node>/pid). False (printed) when it names no broker. */
bool verify_load_cluster(struct run *r);
/* Builds the fault schedule from the options and the seed. */
void verify_schedule_faults(struct run *r);
/* Parses --faults (kill,pause,fence or none) into o; false on an unknown kind. */
bool verify_parse_kinds(struct verify_opts *o, const char *s);
/* Parses --broker-targets (any, controller, txn-coordinator, group-coordinator,
 * input-leader, output-leader) into o; false on an unknown name or too many. */
bool verify_parse_targets(struct verify_opts *o, const char *s);

/* ---- readers (verify_readers.c) */

struct seed_state {
    struct vc_history *h;
    int64_t acked, failed;
};

/* Seeds the input topic with --records records through an idempotent producer, adding each
 * acknowledged one to st->h, and reads the input's end offsets into r->ends. False (printed)
 * when seeding could not be done at all. */
bool verify_seed_input(struct run *r, struct vc_history *h, struct seed_state *st);
/* The group's committed offsets of the input partitions into offs[] (-1: none). False when
 * they could not be fetched. */
bool verify_group_offsets(rd_kafka_t *mon, const struct run *r, int64_t *offs, int timeout_ms);
/* Reads every output partition from the beginning to its end for this isolation level and
 * adds what was read to h as view; a partition whose end it did not learn or reach is noted
 * in h (vc_view_short), so the history is incomplete. Returns the records read, -1 (noted in
 * h) when the reader could not start. */
int64_t verify_read_view(struct run *r, struct vc_history *h, enum vc_view view,
                         const char *isolation);
/* Waits until read_committed's end (the LSO) equals the high watermark on every output
 * partition, for up to max_ms; false when it did not. */
bool verify_wait_stable(struct run *r, int max_ms);
/* Adds the copiers' journal (transactions they committed or aborted) to h. */
void verify_read_journal(struct run *r, struct vc_history *h);
/* Reads the journal's lines written since the last call into r->txns_committed and
 * r->txns_aborted: how far the copy has got, whether or not the cluster keeps the group's
 * offsets (librdkafka's mock keeps no transactional ones). */
void verify_count_journal(struct run *r);

#endif
