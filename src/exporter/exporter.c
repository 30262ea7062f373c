/* SPDX-License-Identifier: Apache-2.0 */
/* exporter: the registry, the series read at scrape time, the per-API counters and the event
 * loop's lag. docs/metrics.md is the list of every series; a name changed here must change
 * there. */
#include <dirent.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "authz/authz.h"
#include "base/err.h"
#include "base/metrics.h"
#include "base/pool.h"
#include "base/props.h"
#include "base/slog.h"
#include "base/sysio.h"
#include "broker/broker.h"
#include "console_int.h"
#include "exporter.h"
#include "group/group.h"
#include "meta/meta.h"
#include "pstate/pstate.h"
#include "net/net.h"
#include "proto/proto.h"
#include "record/record.h"
#include "replica/replica.h"
#include "txn/txn.h"
#include "txn/txn_sm.h"

/* A scrape's walk over the partitions holds the loop at most about this long at a time (it
 * stops after the hash bucket in which this much has passed). */
#define SLICE_NS 1000000u
/* At most this many timestamp reads per pass of a scrape (ts_read_start), so that a scrape
 * after thousands of commits is not held up by them: the entries left over are read by the
 * next scrapes (and have no seconds series until then). */
#define TS_READS_PER_SCRAPE 32
/* A scrape whose pass started timestamp reads on the pool passes again once they are done, so
 * that it shows what they read (ts_resume); at most this many passes (a cold batch is first
 * brought into the page cache, then read, then shown). */
#define TS_PASSES 3
/* The loop's lag is sampled by a timer this often: each firing observes how late it came. */
#define LAG_INTERVAL_MS 100
/* Per-API series are cached by API key below this (Kafka's keys are well under it). */
#define API_SLOTS 128
/* ErrorCode fields are looked for this deep in an answer (Fetch: topics, partitions). */
#define ERROR_WALK_DEPTH 6

static const double lag_buckets[] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                     0.25,  0.5,    1,     2.5,  5,     10};
/* The parts that can wait (remote: a long-poll Fetch up to its max.wait.ms; send: a slow
 * reader) and the total reach further than local work does. */
static const double wait_buckets[] = {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                      0.01,    0.025,  0.05,    0.1,    0.25,  0.5,    1,
                                      2.5,     5,      10,      30,     60};
static const double local_buckets[] = {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                       0.025,   0.05,   0.1,     0.25,   0.5,   1,      2.5};

/* The timestamp of the record at a group's committed offset, kept per group partition while
 * the committed offset stays where it is: reading it costs a read of the batch there, which
 * a scrape must not repeat for every group partition every time. Open addressing on a
 * power-of-two table; entries not seen by a scrape are dropped at its end. */
struct ts_entry {
    char *key; /* group NUL topic NUL, then the partition's 4 bytes; NULL = free slot */
    size_t key_len;
    uint64_t hash;
    int64_t offset, ts; /* ts -1: no record there could be read */
    bool seen;
    bool reading; /* a ts_read for it is on the pool */
};

struct ts_cache {
    struct ts_entry *v;
    size_t cap, n;
    uint64_t reads; /* batches read for a timestamp, since start */
};

/* A scrape's walk over the hosted partitions, in slices (collect_partition). */
struct partition_walk {
    struct exporter *e;
    int64_t left;
    long omitted;
    int64_t now_ms;
    long producers;
};

struct exporter {
    uv_loop_t *loop;
    struct authz *authz; /* the console's: authorizer.class.name's rules; NULL: none */
    struct meta *meta;
    struct replica_mgr *replicas;
    struct group_coord *groups;
    struct txn *txn;
    struct broker *broker;
    struct ts_cache ts_cache;
    int ts_budget;   /* timestamp reads left in this pass (TS_READS_PER_SCRAPE) */
    int ts_reading;  /* ts_reads on the pool */
    int ts_started;  /* ts_reads this pass of the scrape started */
    int ts_passes;   /* passes of this scrape so far (TS_PASSES) */
    bool ts_rewalk;  /* some were for the partitions' rows: the next pass walks them again */
    bool ts_waiting; /* the scrape waits for ts_reading to reach 0, then passes again */
    struct {
        struct net_server *srv;
        struct metrics_series *s;
    } listeners[EXPORTER_MAX_LISTENERS];
    size_t n_listeners;
    struct metrics_family *f_connections;
    /* The thread pool, as base/pool.c counts every task. */
    struct metrics_series *s_pool_wait, *s_pool_run, *s_pool_depth, *s_pool_running;
    struct metrics_series *s_fsync;
    struct metrics_series *s_pg_broker, *s_pg_group, *s_pg_txn;
    int32_t node_id;
    const struct props *config;
    bool write_enable; /* console.write.enable */
    exporter_create_topic_fn create_topic;
    void *create_topic_arg;
    bool partition_level;
    int64_t partition_max;
    bool stopped;
    struct metrics *m;
    struct exporter_http *http;
    uv_timer_t lag_timer;
    uint64_t lag_due_ns; /* when the lag timer should fire next (uv_hrtime), 0 = not yet */

    /* Per API (label api). */
    struct metrics_family *f_requests, *f_errors, *f_local;
    struct metrics_series *s_requests[API_SLOTS], *s_local[API_SLOTS];
    /* Kafka's split of the rest of a request's time (exporter_sent), per API. */
    struct metrics_family *f_queue, *f_remote, *f_resp_queue, *f_send, *f_total;
    struct metrics_series *s_queue[API_SLOTS], *s_remote[API_SLOTS], *s_resp_queue[API_SLOTS],
        *s_send[API_SLOTS], *s_total[API_SLOTS];
    /* The process and the loop. */
    struct metrics_series *s_lag, *s_lag_max, *s_cold_reads, *s_codec_calls, *s_fds, *s_max_fds,
        *s_rss, *s_render, *s_dropped;
    struct metrics_series *s_renders[2]; /* by enum metrics_format */
    /* The metadata quorum. */
    struct metrics_series *s_q_leader, *s_q_term, *s_q_commit, *s_q_applied;
    /* The cluster as the image shows it, and this broker's share of it. */
    struct metrics_series *s_active, *s_under, *s_offline, *s_partitions, *s_leaders;
    /* Per partition: the rows of the scrape being rendered (snapshot.c formats them), copied
     * in slices of the loop's time (SLICE_NS) between which the loop runs its other work. */
    struct exporter_snapshot *snap;
    struct partition_walk walk;
    struct replica_walk rwalk;
    uv_idle_t slice_idle; /* runs the next slice at the loop's next turn */
    bool walking;
    int phase; /* 0: the partitions' walk, 1: the process and cluster, 2: the rest and the text */
    unsigned want_formats; /* bit 1 << enum metrics_format */
    uint64_t hold_max_ns;  /* the longest slice of the rendering under way */
    uint64_t slice_ns;     /* SLICE_NS, or the test hook's */
    struct metrics_series *s_omitted;
    /* Consumer groups. */
    struct metrics_family *f_group_state, *f_group_members, *f_group_committed, *f_group_lag,
        *f_group_lag_stable, *f_group_lag_seconds, *f_groups;
    struct metrics_series *s_group_omitted, *s_group_ts_reads;
    /* Transactions and producers. */
    struct metrics_series *s_txn_state[TXN_N_STATES], *s_txn_ongoing, *s_producers;
};

bool exporter_wanted(const struct props *config)
{
    const char *l = props_get(config, "metrics.listener");
    return l != NULL && *l != '\0';
}

static struct metrics_series *gauge0(struct exporter *e, const char *name, const char *help)
{
    return metrics_series0(metrics_family_new(e->m, METRICS_GAUGE, name, help, 0, NULL, 0, NULL));
}

/* Every family the registry holds, in the order they render (the per-partition families
 * follow them all: snapshot.c). False when out of memory. */
static bool declare(struct exporter *e)
{
    static const char *const api[] = {"api"};
    static const char *const api_error[] = {"api", "error"};

    e->f_requests =
        metrics_family_new(e->m, METRICS_COUNTER, "tally_requests_total",
                           "Requests that reached their handler, by API.", 1, api, 0, NULL);
    e->f_errors = metrics_family_new(
        e->m, METRICS_COUNTER, "tally_request_errors_total",
        "Non-zero error codes in answers (every level: a Produce answer counts each failed "
        "partition), by API and error name.",
        2, api_error, 0, NULL);
    e->f_local = metrics_family_new(
        e->m, METRICS_HISTOGRAM, "tally_request_local_seconds",
        "Time a request's handler ran on the event loop when it arrived (local work only: "
        "queueing, waiting in the purgatory and sending are not in it), by API.",
        1, api, sizeof local_buckets / sizeof local_buckets[0], local_buckets);
    size_t n_wait = sizeof wait_buckets / sizeof wait_buckets[0];
    e->f_queue = metrics_family_new(
        e->m, METRICS_HISTOGRAM, "tally_request_queue_seconds",
        "Time from a request's frame read off the socket to its handler's start, by API.", 1, api,
        n_wait, wait_buckets);
    e->f_remote = metrics_family_new(
        e->m, METRICS_HISTOGRAM, "tally_request_remote_seconds",
        "Time a request waited after its handler returned until it was answered (the "
        "purgatory: acks=all Produce, long-polling Fetch, forwarded requests), by API.",
        1, api, n_wait, wait_buckets);
    e->f_resp_queue = metrics_family_new(
        e->m, METRICS_HISTOGRAM, "tally_request_response_queue_seconds",
        "Time an answer waited behind earlier answers of its connection before it was "
        "queued for sending, by API.",
        1, api, n_wait, wait_buckets);
    e->f_send = metrics_family_new(
        e->m, METRICS_HISTOGRAM, "tally_request_response_send_seconds",
        "Time from an answer queued for sending to its last byte handed to the kernel, by "
        "API.",
        1, api, n_wait, wait_buckets);
    e->f_total = metrics_family_new(
        e->m, METRICS_HISTOGRAM, "tally_request_total_seconds",
        "Time from a request's frame read off the socket to its answer's last byte handed to "
        "the kernel, by API.",
        1, api, n_wait, wait_buckets);
    e->s_lag = metrics_series0(metrics_family_new(
        e->m, METRICS_HISTOGRAM, "tally_event_loop_lag_seconds",
        "How late a 100 ms timer on the event loop fired: how long the loop was held by other "
        "work when it should have run.",
        0, NULL, sizeof lag_buckets / sizeof lag_buckets[0], lag_buckets));
    e->s_lag_max =
        gauge0(e, "tally_event_loop_lag_max_seconds",
               "The longest the event loop was held by other work since the start, "
               "as tally_event_loop_lag_seconds observes it (the benchmarks report it).");
#ifdef TALLY_TEST_HOOKS
    e->s_cold_reads = gauge0(e, "tally_test_loop_cold_reads",
                             "Test builds: reads and sendfiles made on the event loop that touched "
                             "a page not in the page cache (each may have waited for the disk).");
    e->s_codec_calls = gauge0(e, "tally_test_loop_codec_calls",
                              "Test builds: compressions and decompressions of records made on "
                              "the event loop.");
#endif
    e->s_fds = gauge0(e, "tally_process_open_fds", "Open file descriptors of the process.");
    e->s_max_fds = gauge0(e, "tally_process_max_fds", "The process's open file limit (soft).");
    e->s_rss = gauge0(e, "tally_process_resident_memory_bytes", "Resident memory of the process.");
    e->s_q_leader = gauge0(e, "tally_metadata_quorum_leader",
                           "Node id of the metadata quorum's leader (the active controller), "
                           "-1 when none is known.");
    e->s_q_term = gauge0(e, "tally_metadata_quorum_term",
                         "The metadata quorum's current raft term (Kafka's quorum epoch).");
    e->s_q_commit = gauge0(e, "tally_metadata_quorum_commit_index",
                           "The highest metadata log index this node knows committed.");
    e->s_q_applied = gauge0(e, "tally_metadata_quorum_applied_index",
                            "The last metadata log index applied to this node's image.");
    e->s_active = gauge0(e, "tally_active_controller",
                         "1 on the active controller (the quorum's leader), else 0.");
    e->s_offline = gauge0(e, "tally_offline_partitions",
                          "Partitions without a leader; reported by the active controller "
                          "only (0 elsewhere).");
    e->s_under = gauge0(e, "tally_under_replicated_partitions",
                        "Partitions led by this broker whose ISR is smaller than their "
                        "replica set (replicas a reassignment is adding not counted).");
    e->s_partitions = gauge0(e, "tally_partitions", "Partitions hosted by this broker.");
    e->s_leaders = gauge0(e, "tally_leader_partitions", "Partitions led by this broker.");
    static const char *const group[] = {"group"};
    static const char *const group_state[] = {"group", "state"};
    static const char *const state[] = {"state"};
    static const char *const gtp[] = {"group", "topic", "partition"};
    e->f_groups =
        metrics_family_new(e->m, METRICS_GAUGE, "tally_groups",
                           "Consumer groups this broker coordinates, by state.", 1, state, 0, NULL);
    e->f_group_state = metrics_family_new(e->m, METRICS_GAUGE, "tally_group_state",
                                          "1 for a group coordinated here, its state in the label.",
                                          2, group_state, 0, NULL);
    e->f_group_members =
        metrics_family_new(e->m, METRICS_GAUGE, "tally_group_members",
                           "Members of a group coordinated here.", 1, group, 0, NULL);
    e->f_group_committed =
        metrics_family_new(e->m, METRICS_GAUGE, "tally_group_committed_offset",
                           "A group's committed offset for a partition.", 3, gtp, 0, NULL);
    e->f_group_lag = metrics_family_new(
        e->m, METRICS_GAUGE, "tally_group_lag_records",
        "A group's lag on a partition hosted here: high watermark minus committed offset.", 3, gtp,
        0, NULL);
    e->f_group_lag_stable = metrics_family_new(
        e->m, METRICS_GAUGE, "tally_group_lag_stable_records",
        "A group's lag on a partition hosted here for read_committed consumers: last stable "
        "offset minus committed offset.",
        3, gtp, 0, NULL);
    e->f_group_lag_seconds = metrics_family_new(
        e->m, METRICS_GAUGE, "tally_group_lag_seconds",
        "Age of the record at a group's committed offset (the oldest it has not consumed), 0 "
        "when it is caught up.",
        3, gtp, 0, NULL);
    e->s_group_omitted = gauge0(e, "tally_metrics_group_partitions_omitted",
                                "Group partitions left out of the per-group-partition series "
                                "(metrics.partition.max.series).");
    e->s_group_ts_reads = metrics_series0(metrics_family_new(
        e->m, METRICS_COUNTER, "tally_metrics_group_timestamp_reads_total",
        "Batches read to find the timestamp at a committed offset (once per committed offset).", 0,
        NULL, 0, NULL));
    static const char *const txn_state_label[] = {"state"};
    struct metrics_family *txns =
        metrics_family_new(e->m, METRICS_GAUGE, "tally_txn_transactions",
                           "Transactional ids this broker's coordinator holds, by state.", 1,
                           txn_state_label, 0, NULL);
    bool txn_ok = txns != NULL;
    for (int s = 0; s < TXN_N_STATES; s++)
        txn_ok = txn_ok && (e->s_txn_state[s] =
                                metrics_series1(txns, txn_state_name((enum txn_state)s))) != NULL;
    e->s_txn_ongoing =
        gauge0(e, "tally_txn_ongoing", "Transactions open (Ongoing) at this broker's coordinator.");
    e->s_producers = gauge0(e, "tally_producers_tracked",
                            "Producer ids in the producer states of the partitions hosted here "
                            "(idempotent and transactional producers; one per partition).");
    static const char *const listener[] = {"listener"};
    static const char *const purgatory[] = {"purgatory"};
    e->f_connections =
        metrics_family_new(e->m, METRICS_GAUGE, "tally_connections",
                           "Client connections open now, by Kafka listener.", 1, listener, 0, NULL);
    e->s_pool_depth = gauge0(e, "tally_threadpool_queue_depth",
                             "Tasks queued on the I/O thread pool that no thread has started yet.");
    e->s_pool_running =
        gauge0(e, "tally_threadpool_tasks_running", "Tasks the I/O thread pool's threads run now.");
    e->s_pool_wait = metrics_series0(
        metrics_family_new(e->m, METRICS_HISTOGRAM, "tally_threadpool_wait_seconds",
                           "How long each task queued on the I/O thread pool waited for a thread.",
                           0, NULL, POOL_BUCKETS, pool_bounds));
    e->s_pool_run = metrics_series0(
        metrics_family_new(e->m, METRICS_HISTOGRAM, "tally_threadpool_run_seconds",
                           "How long each task of the I/O thread pool ran on its thread.", 0, NULL,
                           POOL_BUCKETS, pool_bounds));
    e->s_fsync = metrics_series0(metrics_family_new(
        e->m, METRICS_HISTOGRAM, "tally_fsync_seconds",
        "Duration of every fsync (segments, indexes, snapshots, checkpoints), from any thread.", 0,
        NULL, SYSIO_FSYNC_BUCKETS, sysio_fsync_bounds));
    struct metrics_family *pg = metrics_family_new(
        e->m, METRICS_GAUGE, "tally_purgatory_size",
        "Operations waiting in each purgatory: the broker's (acks=all Produce, long-poll "
        "Fetch), the group and transaction coordinators' (appends waiting for replication).",
        1, purgatory, 0, NULL);
    e->s_pg_broker = metrics_series1(pg, "broker");
    e->s_pg_group = metrics_series1(pg, "group_coordinator");
    e->s_pg_txn = metrics_series1(pg, "txn_coordinator");
    e->s_omitted = gauge0(e, "tally_metrics_partitions_omitted",
                          "Partitions left out of the per-partition series "
                          "(metrics.partition.max.series).");
    e->s_render =
        gauge0(e, "tally_metrics_render_seconds",
               "The longest the previous scrape held the event loop at once (a slice of its "
               "walk over the partitions, or the rendering of the rest).");
    e->s_dropped = metrics_series0(metrics_family_new(
        e->m, METRICS_COUNTER, "tally_metrics_series_dropped_total",
        "Series not created because their family reached the registry's cap.", 0, NULL, 0, NULL));
    static const char *const format[] = {"format"};
    struct metrics_family *renders = metrics_family_new(
        e->m, METRICS_COUNTER, "tally_metrics_renders_total",
        "Renderings of the metrics text, by format (scrapes that arrive together share one).", 1,
        format, 0, NULL);
    e->s_renders[METRICS_TEXT] = metrics_series1(renders, "text");
    e->s_renders[METRICS_OPENMETRICS] = metrics_series1(renders, "openmetrics");
    return e->s_renders[METRICS_TEXT] && e->s_renders[METRICS_OPENMETRICS] && e->f_queue &&
           e->f_remote && e->f_resp_queue && e->f_send && e->f_total && e->f_groups &&
           e->f_group_state && e->f_group_members && e->f_group_committed && e->f_group_lag &&
           e->f_group_lag_stable && e->f_group_lag_seconds && e->s_group_omitted && txn_ok &&
           e->s_txn_ongoing && e->s_producers && e->f_connections && e->s_pool_wait &&
           e->s_pool_run && e->s_pool_depth && e->s_pool_running && e->s_fsync && e->s_pg_broker &&
           e->s_pg_group && e->s_pg_txn && e->s_group_ts_reads && e->f_requests && e->f_errors &&
           e->f_local && e->s_lag && e->s_lag_max && e->s_fds && e->s_max_fds && e->s_rss &&
           e->s_q_leader && e->s_q_term && e->s_q_commit && e->s_q_applied && e->s_active &&
           e->s_offline && e->s_under && e->s_partitions && e->s_leaders && e->s_omitted &&
           e->s_render && e->s_dropped;
}

/* ---- read at scrape time ------------------------------------------------------------------ */

static void collect_process(struct exporter *e)
{
    long n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (d) {
        struct dirent *de;
        while ((de = readdir(d)) != NULL)
            n += de->d_name[0] != '.';
        closedir(d);
        n--; /* the directory stream's own descriptor */
        metrics_set(e->s_fds, (double)n);
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
        metrics_set(e->s_max_fds, rl.rlim_cur == RLIM_INFINITY ? -1 : (double)rl.rlim_cur);
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        unsigned long size, resident;
        if (fscanf(f, "%lu %lu", &size, &resident) == 2)
            metrics_set(e->s_rss, (double)resident * (double)sysconf(_SC_PAGESIZE));
        fclose(f);
    }
    if (e->s_cold_reads)
        metrics_set(e->s_cold_reads, (double)sysio_loop_cold_reads());
    if (e->s_codec_calls)
        metrics_set(e->s_codec_calls, (double)sysio_loop_codec_calls());
}

static void collect_quorum(struct exporter *e)
{
    struct meta_raft_state rs;
    meta_raft_state(e->meta, &rs);
    metrics_set(e->s_q_leader, meta_controller_id(e->meta));
    metrics_set(e->s_q_term, (double)rs.term);
    metrics_set(e->s_q_commit, (double)rs.commit_index);
    metrics_set(e->s_q_applied, (double)rs.applied_index);
}

/* From the image: what this broker leads, what is under-replicated, what has no leader. */
static void collect_cluster(struct exporter *e)
{
    size_t n_topics;
    const struct meta_topic *const *topics = meta_topics(e->meta, &n_topics);
    long leaders = 0, under = 0, offline = 0;
    bool controller = meta_is_controller(e->meta);

    for (size_t i = 0; i < n_topics; i++)
        for (int32_t k = 0; k < topics[i]->n_partitions; k++) {
            const struct meta_partition *mp = &topics[i]->partitions[k];
            if (mp->leader < 0)
                offline++;
            if (mp->leader != e->node_id)
                continue;
            leaders++;
            /* Replicas a reassignment is adding are not yet part of the replication factor
             * (Kafka's UnderReplicatedPartitions counts the original replicas only). */
            under += mp->n_isr < mp->n_replicas - mp->n_adding;
        }
    metrics_set(e->s_active, controller ? 1 : 0);
    metrics_set(e->s_offline, controller ? (double)offline : 0);
    metrics_set(e->s_under, (double)under);
    metrics_set(e->s_leaders, (double)leaders);
    metrics_set(e->s_partitions, e->replicas ? (double)replica_count(e->replicas) : 0);
}

static int64_t wall_ms(void)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

static int64_t cached_ts_at(struct exporter *e, struct partition *p, const char *key, size_t kl,
                            int64_t offset);

static int collect_partition(void *arg, struct partition *p)
{
    struct partition_walk *w = arg;
    struct exporter *e = w->e;
    const char *topic = partition_topic(p);
    w->producers += (long)pstate_count(partition_pstate(p));
    if (w->left <= 0) {
        w->omitted++;
        return 0;
    }
    w->left--;
    int64_t leo = partition_log_end_offset(p);
    int64_t v[EXPORTER_PART_N_VALUES] = {
        [EXPORTER_PART_LOG_START] = partition_log_start_offset(p),
        [EXPORTER_PART_LEO] = leo,
        [EXPORTER_PART_HW] = partition_high_watermark(p),
        [EXPORTER_PART_LSO] = partition_last_stable_offset(p),
        [EXPORTER_PART_SIZE] = partition_size_bytes(p),
        [EXPORTER_PART_SEGMENTS] = (int64_t)partition_segment_count(p),
    };
    /* The oldest open transaction starts at the first unstable offset; its first record's
     * timestamp is read once per such offset (key: NUL NUL topic NUL partition, which no
     * group partition's key can be: a topic name is never empty). */
    int64_t first = pstate_first_unstable_offset(partition_pstate(p));
    double age = 0; /* stays -1 when the timestamp is not known (yet): no series then */
    if (first >= 0) {
        age = -1;
        char key[300];
        size_t tl = strlen(topic) + 1;
        int32_t pi = partition_index(p);
        if (tl + 6 <= sizeof key) {
            key[0] = key[1] = '\0';
            memcpy(key + 2, topic, tl);
            memcpy(key + 2 + tl, &pi, 4);
            int64_t ts = cached_ts_at(e, p, key, tl + 6, first);
            if (ts >= 0)
                age = w->now_ms > ts ? (double)(w->now_ms - ts) / 1000 : 0;
        }
    }
    if (exporter_snapshot_add(e->snap, topic, partition_index(p), v, age) != 0)
        return 0; /* out of memory: this partition has no series in this scrape */
    if (partition_role(p) != REPLICA_LEADER)
        return 0;
    const struct meta_topic *mt = meta_topic_by_name(e->meta, topic);
    if (mt == NULL || partition_index(p) >= mt->n_partitions)
        return 0;
    const struct meta_partition *mp = &mt->partitions[partition_index(p)];
    for (int32_t r = 0; r < mp->n_replicas; r++) {
        if (mp->replicas[r] == e->node_id)
            continue;
        int64_t at = partition_follower_offset(p, mp->replicas[r]);
        if (at < 0)
            continue;
        exporter_snapshot_add_follower(e->snap, mp->replicas[r], leo > at ? leo - at : 0);
    }
    return 0;
}

/* At most this many partitions get rows, whatever metrics.partition.max.series says: the
 * registry's cap of series per family (metrics_new), which the rows once counted against. */
#define PARTITION_ROWS_MAX 100000

/* A fresh walk over the partitions into a fresh e->snap (NULL when out of memory: the scrape
 * then has no partition series, every partition counts as omitted). */
static void walk_begin(struct exporter *e)
{
    int64_t max = e->partition_max < PARTITION_ROWS_MAX ? e->partition_max : PARTITION_ROWS_MAX;

    e->walk = (struct partition_walk){.e = e, .left = max, .now_ms = wall_ms()};
    e->rwalk = (struct replica_walk){0};
    exporter_snapshot_release(e->snap);
    e->snap = exporter_snapshot_new();
    if (!e->partition_level || e->snap == NULL)
        e->walk.left = 0; /* the walk still counts the producers; every partition is omitted */
    e->ts_budget = TS_READS_PER_SCRAPE;
    e->ts_started = 0;
    e->ts_rewalk = false;
}

/* TALLY_TEST_METRICS_SLICE_NS (test builds only): another slice budget, so that tests with a
 * few partitions walk them over many slices (0: one hash bucket per slice). */
static uint64_t slice_budget_ns(void)
{
#ifdef TALLY_TEST_HOOKS
    const char *v = getenv("TALLY_TEST_METRICS_SLICE_NS");
    if (v != NULL && *v != '\0')
        return strtoull(v, NULL, 10);
#endif
    return SLICE_NS;
}

static uint64_t mono_ns(void)
{
    return uv_hrtime();
}

static void collect_partition_cb(void *arg, struct partition *p)
{
    (void)collect_partition(arg, p);
}

/* One slice of the walk: true when every partition has been seen. */
static bool walk_slice(struct exporter *e)
{
    if (e->replicas == NULL)
        return true;
    int rc = replica_walk_slice(e->replicas, &e->rwalk, mono_ns, e->slice_ns, collect_partition_cb,
                                &e->walk);
    if (rc == REPLICA_WALK_RESTART) {
        walk_begin(e); /* partitions were added and the table rebuilt: start over */
        return false;
    }
    return rc == REPLICA_WALK_DONE;
}

/* ---- consumer groups ------------------------------------------------------------------------ */

struct exporter_lag exporter_group_lag(int64_t high_watermark, int64_t last_stable_offset,
                                       int64_t committed)
{
    struct exporter_lag l = {
        .records = high_watermark > committed ? high_watermark - committed : 0,
        .stable_records = last_stable_offset > committed ? last_stable_offset - committed : 0,
    };
    return l;
}

static uint64_t key_hash(const char *k, size_t n)
{
    uint64_t h = 1469598103934665603u; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)k[i]) * 1099511628211u;
    return h;
}

static struct ts_entry *ts_find(struct ts_cache *c, const char *key, size_t len, uint64_t h)
{
    if (c->cap == 0)
        return NULL;
    for (size_t i = h & (c->cap - 1);; i = (i + 1) & (c->cap - 1)) {
        struct ts_entry *t = &c->v[i];
        if (t->key == NULL)
            return t;
        if (t->hash == h && t->key_len == len && memcmp(t->key, key, len) == 0)
            return t;
    }
}

/* Doubles the table (kept at most half full). False when out of memory. */
static bool ts_grow(struct ts_cache *c)
{
    size_t cap = c->cap ? c->cap * 2 : 64;
    struct ts_entry *v = calloc(cap, sizeof *v);
    if (v == NULL)
        return false;
    struct ts_cache n = {.v = v, .cap = cap, .n = c->n, .reads = c->reads};
    for (size_t i = 0; i < c->cap; i++)
        if (c->v[i].key)
            *ts_find(&n, c->v[i].key, c->v[i].key_len, c->v[i].hash) = c->v[i];
    free(c->v);
    *c = n;
    return true;
}

/* Drops the entries the scrape did not see (their group partition went) and clears the
 * marks; rebuilt in place by reinserting what stays. */
static void ts_sweep(struct ts_cache *c)
{
    size_t kept = 0;
    for (size_t i = 0; i < c->cap; i++) {
        struct ts_entry *t = &c->v[i];
        if (t->key && !t->seen) {
            free(t->key);
            t->key = NULL;
        }
        kept += t->key != NULL;
    }
    if (kept == c->n)
        goto unmark;
    /* Removal from open addressing: reinsert every survivor into a fresh table. */
    struct ts_entry *old = c->v;
    size_t cap = c->cap;
    c->v = calloc(cap, sizeof *c->v);
    if (c->v == NULL) { /* out of memory: start over empty */
        for (size_t i = 0; i < cap; i++)
            free(old[i].key);
        free(old);
        c->cap = c->n = 0;
        return;
    }
    for (size_t i = 0; i < cap; i++)
        if (old[i].key)
            *ts_find(c, old[i].key, old[i].key_len, old[i].hash) = old[i];
    free(old);
    c->n = kept;
unmark:
    for (size_t i = 0; i < c->cap; i++)
        c->v[i].seen = false;
}

static void ts_free(struct ts_cache *c)
{
    for (size_t i = 0; i < c->cap; i++)
        free(c->v[i].key);
    free(c->v);
    memset(c, 0, sizeof *c);
}

/* Batches read for a committed offset's timestamp are bounded: a larger one gives no
 * seconds series. */
#define TS_MAX_BATCH (1u << 20)

/* The read of a committed offset's (or an open transaction's first) timestamp, on the
 * thread pool: the batch there may be cold (the pool then only brings its pages into the
 * page cache, and the next pass reads it) or compressed, and the loop never waits for either
 * (issue 20 item 4). */
struct ts_read {
    struct pool_job job;
    struct exporter *e;
    struct partition *p; /* held */
    struct partition_slice slice;
    bool warm;
    int64_t offset, ts;
    size_t key_len;
    char key[]; /* the entry's */
};

static void ts_resume(struct exporter *e);

/* The timestamp of the record at `offset` (or the first after it, in a compacted log) in the
 * first batch of `sl`, or -1 when none can be read. Any thread (the slice is held). */
static int64_t slice_ts_at(const struct partition_slice *sl, int64_t offset)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    int64_t ts = -1;

    if (sl->len == 0 || partition_slice_first_batch(sl, TS_MAX_BATCH, &buf, &len) != 0)
        return -1;
    struct record_iter it;
    struct record_item rec;
    if (record_iter_init(&it, buf, len, TS_MAX_BATCH) == 0)
        while (record_iter_next(&it, &rec) == 0)
            if (rec.offset >= offset) {
                ts = rec.timestamp;
                break;
            }
    record_iter_close(&it);
    free(buf);
    return ts;
}

static void ts_read_run(uv_work_t *w)
{
    struct ts_read *r = w->data;
    if (!r->warm) {
        r->ts = slice_ts_at(&r->slice, r->offset);
        return;
    }
    partition_slice_warm(&r->slice);
}

static void ts_read_done(uv_work_t *w, int status)
{
    struct ts_read *r = w->data;
    struct exporter *e = r->e;
    struct ts_entry *t = ts_find(&e->ts_cache, r->key, r->key_len, key_hash(r->key, r->key_len));

    partition_slice_release(r->p, &r->slice);
    partition_release(r->p);
    /* The entry may have gone meanwhile (its group partition did); a warm-up leaves it for
     * the next pass to read, now from the page cache. */
    if (t != NULL && t->key != NULL) {
        t->reading = false;
        if (status == 0 && !r->warm) {
            t->offset = r->offset;
            t->ts = r->ts;
        }
    }
    free(r);
    if (--e->ts_reading == 0 && e->ts_waiting && !e->stopped)
        ts_resume(e);
}

/* Starts the read of entry t's timestamp at `offset` of `p`: on the pool, or settled here
 * when there is nothing to read (the entry then says -1 for that offset). */
static void ts_read_start(struct exporter *e, struct partition *p, struct ts_entry *t,
                          int64_t offset)
{
    struct partition_slice sl;
    struct ts_read *r;

    if (partition_read_nowait(p, offset, 1, PARTITION_READ_UNCOMMITTED, &sl) != 0)
        goto none;
    if (sl.len == 0 && !sl.cold) {
        partition_slice_release(p, &sl);
        goto none;
    }
    if ((r = calloc(1, sizeof *r + t->key_len)) == NULL) {
        partition_slice_release(p, &sl);
        return; /* out of memory: a later scrape asks again */
    }
    r->job.work.data = r;
    r->e = e;
    r->p = p;
    r->slice = sl;
    r->warm = sl.cold;
    r->offset = offset;
    r->ts = -1;
    r->key_len = t->key_len;
    memcpy(r->key, t->key, t->key_len);
    partition_hold(p);
    if (pool_submit(e->loop, &r->job, ts_read_run, ts_read_done) != 0) {
        partition_release(p);
        partition_slice_release(p, &sl);
        free(r);
        return;
    }
    t->reading = true;
    e->ts_reading++;
    e->ts_started++;
    e->ts_rewalk |= e->phase == 0; /* an open transaction's, for its partition's row */
    return;

none:
    t->offset = offset;
    t->ts = -1;
}

/* The timestamp at `offset` of `p` under `key` in the cache; -1 when it cannot be read (or
 * out of memory), or is not read yet: the read of an offset not cached starts on the pool,
 * and the scrape walks again once it is done (render_finish). Marks the entry seen. */
static int64_t cached_ts_at(struct exporter *e, struct partition *p, const char *key, size_t kl,
                            int64_t offset)
{
    struct ts_cache *c = &e->ts_cache;
    uint64_t h = key_hash(key, kl);
    struct ts_entry *t = ts_find(c, key, kl, h);
    if (t == NULL || t->key == NULL) {
        if ((c->n + 1) * 2 > c->cap && !ts_grow(c))
            return -1;
        t = ts_find(c, key, kl, h);
        if ((t->key = malloc(kl)) == NULL)
            return -1;
        memcpy(t->key, key, kl);
        t->key_len = kl;
        t->hash = h;
        t->offset = -1;
        t->reading = false;
        c->n++;
    }
    t->seen = true;
    if (t->offset == offset)
        return t->ts;
    if (t->reading || e->ts_budget <= 0)
        return -1; /* not now: a later pass has it */
    e->ts_budget--;
    metrics_add(e->s_group_ts_reads, 1);
    ts_read_start(e, p, t, offset);
    return t->offset == offset ? t->ts : -1;
}

struct group_walk {
    struct exporter *e;
    int64_t left;
    long omitted;
    int64_t now_ms;
    long by_state[8];
};

static const char *const group_states[] = {"Empty", "PreparingRebalance", "CompletingRebalance",
                                           "Stable", "Dead"};
#define N_GROUP_STATES (sizeof group_states / sizeof group_states[0])

static void collect_group(void *arg, const char *group_id, const char *state, int32_t members)
{
    struct group_walk *w = arg;
    for (size_t i = 0; i < N_GROUP_STATES; i++)
        w->by_state[i] += strcmp(state, group_states[i]) == 0;
    metrics_set(metrics_series2(w->e->f_group_state, group_id, state), 1);
    metrics_set(metrics_series1(w->e->f_group_members, group_id), members);
}

static void collect_group_offset(void *arg, const char *group_id, const char *topic,
                                 int32_t partition, int64_t offset)
{
    struct group_walk *w = arg;
    struct exporter *e = w->e;
    char index[16];

    if (w->left <= 0) {
        w->omitted++;
        return;
    }
    w->left--;
    snprintf(index, sizeof index, "%d", partition);
    const char *v[3] = {group_id, topic, index};
    metrics_set(metrics_series(e->f_group_committed, v), (double)offset);
    struct partition *p = e->replicas ? replica_partition(e->replicas, topic, partition) : NULL;
    if (p == NULL)
        return; /* hosted elsewhere: that broker knows its high watermark */
    int64_t hw = partition_high_watermark(p);
    struct exporter_lag lag = exporter_group_lag(hw, partition_last_stable_offset(p), offset);
    metrics_set(metrics_series(e->f_group_lag, v), (double)lag.records);
    metrics_set(metrics_series(e->f_group_lag_stable, v), (double)lag.stable_records);
    if (lag.records == 0) {
        metrics_set(metrics_series(e->f_group_lag_seconds, v), 0);
        return;
    }
    /* The key: group NUL topic NUL partition (4 bytes). */
    size_t gl = strlen(group_id) + 1, tl = strlen(topic) + 1;
    char stack[512];
    size_t kl = gl + tl + 4;
    char *key = kl <= sizeof stack ? stack : malloc(kl);
    if (key == NULL)
        return;
    memcpy(key, group_id, gl);
    memcpy(key + gl, topic, tl);
    memcpy(key + gl + tl, &partition, 4);
    int64_t ts = cached_ts_at(e, p, key, kl, offset);
    if (ts >= 0)
        metrics_set(metrics_series(e->f_group_lag_seconds, v),
                    w->now_ms > ts ? (double)(w->now_ms - ts) / 1000 : 0);

    if (key != stack)
        free(key);
}

static void collect_groups(struct exporter *e)
{
    struct group_walk w = {
        .e = e,
        .left = e->partition_level ? e->partition_max : 0,
        .now_ms = wall_ms(),
    };
    struct metrics_family *fams[] = {e->f_group_state,      e->f_group_members,
                                     e->f_group_committed,  e->f_group_lag,
                                     e->f_group_lag_stable, e->f_group_lag_seconds};
    size_t n_fams = sizeof fams / sizeof fams[0];

    for (size_t i = 0; i < n_fams; i++)
        metrics_family_mark(fams[i]);
    if (e->groups)
        group_coord_for_each(e->groups, collect_group, collect_group_offset, &w);
    for (size_t i = 0; i < n_fams; i++)
        metrics_family_sweep(fams[i]);
    for (size_t i = 0; i < N_GROUP_STATES; i++)
        metrics_set(metrics_series1(e->f_groups, group_states[i]), (double)w.by_state[i]);
    metrics_set(e->s_group_omitted, (double)w.omitted);
}

static void collect_io(struct exporter *e)
{
    for (size_t i = 0; i < e->n_listeners; i++)
        metrics_set(e->listeners[i].s, net_server_connections(e->listeners[i].srv));
    uint64_t counts[SYSIO_FSYNC_BUCKETS + 1];
    double sum;
    sysio_fsync_stats(counts, &sum);
    metrics_histogram_load(e->s_fsync, counts, SYSIO_FSYNC_BUCKETS + 1, sum);
    struct pool_stats ps;
    pool_stats(&ps);
    metrics_set(e->s_pool_depth, (double)ps.queued);
    metrics_set(e->s_pool_running, (double)ps.running);
    metrics_histogram_load(e->s_pool_wait, ps.wait_counts, POOL_BUCKETS + 1, ps.wait_sum_s);
    metrics_histogram_load(e->s_pool_run, ps.run_counts, POOL_BUCKETS + 1, ps.run_sum_s);
    metrics_set(e->s_pg_broker, (double)broker_waiting(e->broker));
    metrics_set(e->s_pg_group, (double)group_coord_waiting(e->groups));
    metrics_set(e->s_pg_txn, (double)txn_waiting(e->txn));
}

static void collect_txn(struct exporter *e)
{
    int64_t counts[TXN_N_STATES];
    txn_count_states(e->txn, counts, TXN_N_STATES);
    for (int s = 0; s < TXN_N_STATES; s++)
        metrics_set(e->s_txn_state[s], (double)counts[s]);
    metrics_set(e->s_txn_ongoing, (double)counts[TXN_ONGOING]);
}

/* The last slice: the groups and the rest are collected, and each format asked is rendered
 * and published with the partitions' rows. `t0`: when this slice began. */
static void render_finish(struct exporter *e, uint64_t t0)
{
    collect_groups(e);
    if (e->ts_started > 0 && ++e->ts_passes < TS_PASSES) {
        /* Timestamps being read on the pool: the scrape is shown once they are done, from
         * another pass with them (ts_read_done, ts_resume). */
        e->ts_waiting = true;
        if (e->ts_reading == 0)
            ts_resume(e);
        return;
    }
    metrics_set(e->s_producers, (double)e->walk.producers);
    metrics_set(e->s_omitted, (double)e->walk.omitted);
    collect_txn(e);
    collect_io(e);
    ts_sweep(&e->ts_cache); /* after every pass over partitions and groups: they share it */
    metrics_set(e->s_dropped, (double)metrics_dropped(e->m));
    for (int fmt = 0; fmt < 2; fmt++)
        if (e->want_formats & (1u << fmt))
            metrics_add(e->s_renders[fmt], 1);
    for (int fmt = 0; fmt < 2; fmt++) {
        if (!(e->want_formats & (1u << fmt)))
            continue;
        struct metrics_text t = {0};
        char *text = NULL;
        size_t len = 0;
        metrics_render_into(e->m, (enum metrics_format)fmt, &t);
        if (metrics_text_take(&t, &text, &len) == 0 && e->snap) {
            exporter_snapshot_hold(e->snap);
            exporter_http_publish(e->http, (enum metrics_format)fmt, text, len, e->snap);
        } else {
            free(text);
            exporter_http_publish(e->http, (enum metrics_format)fmt, NULL, 0, NULL);
        }
    }
    exporter_snapshot_release(e->snap);
    e->snap = NULL;
    e->walking = false;
    e->want_formats = 0;
    uint64_t dt = uv_hrtime() - t0;
    if (dt > e->hold_max_ns)
        e->hold_max_ns = dt;
    metrics_set(e->s_render, (double)e->hold_max_ns / 1e9);
    exporter_http_done(e->http);
}

static void on_slice(uv_idle_t *h);

/* One slice of a rendering, on the loop; the next runs at the loop's next turn. */
static void render_step(struct exporter *e)
{
    uint64_t t0 = uv_hrtime();
    if (e->phase == 2) {
        uv_idle_stop(&e->slice_idle);
        render_finish(e, t0);
        return;
    }
    if (e->phase == 0 && walk_slice(e))
        e->phase = 1; /* the next turn: the process, the quorum and the cluster's image */
    else if (e->phase == 1) {
        collect_process(e);
        collect_quorum(e);
        collect_cluster(e); /* a walk over the image's partitions, thousands of them */
        e->phase = 2;       /* the next turn: the groups, then the text */
    }
    uint64_t dt = uv_hrtime() - t0;
    if (dt > e->hold_max_ns)
        e->hold_max_ns = dt;
    uv_idle_start(&e->slice_idle, on_slice); /* already started: a no-op */
}

static void on_slice(uv_idle_t *h)
{
    struct exporter *e = h->data;
    if (e->stopped) {
        uv_idle_stop(h);
        return;
    }
    render_step(e);
}

static void walk_again(struct exporter *e)
{
    e->ts_waiting = false;
    e->phase = 0;
    walk_begin(e);
    render_step(e);
}

/* The timestamp reads a pass of the scrape started are done: the partitions are walked again
 * when some were for their rows, else only the last step runs again (the groups). */
static void ts_resume(struct exporter *e)
{
    if (e->ts_rewalk) {
        walk_again(e);
        return;
    }
    e->ts_waiting = false;
    e->ts_started = 0;
    e->ts_budget = TS_READS_PER_SCRAPE;
    e->phase = 2;
    render_step(e);
}

/* exporter_render_fn, on the loop: starts the walk over the partitions, which runs in slices
 * (SLICE_NS) until render_finish publishes every format asked. */
static void render(void *arg, unsigned formats)
{
    struct exporter *e = arg;

    if (e->stopped || e->walking)
        return; /* stopped: the HTTP side is gone; walking: http.c does not ask twice */
    e->want_formats = formats;
    e->walking = true;
    e->hold_max_ns = 0;
    e->ts_passes = 0;
    walk_again(e);
}

static void on_lag_timer(uv_timer_t *t)
{
    struct exporter *e = t->data;
    uint64_t now = uv_hrtime();
    if (e->lag_due_ns) {
        double lag = now > e->lag_due_ns ? (double)(now - e->lag_due_ns) / 1e9 : 0;
        metrics_observe(e->s_lag, lag);
        if (lag > metrics_value(e->s_lag_max))
            metrics_set(e->s_lag_max, lag);
    }
    e->lag_due_ns = now + (uint64_t)LAG_INTERVAL_MS * 1000000u;
}

/* ---- per request --------------------------------------------------------------------------- */

static struct metrics_series *api_series(struct metrics_family *f, struct metrics_series **cache,
                                         const struct proto_api *api)
{
    if (api->key < 0 || api->key >= API_SLOTS)
        return metrics_series1(f, api->name);
    if (cache[api->key] == NULL)
        cache[api->key] = metrics_series1(f, api->name);
    return cache[api->key];
}

void exporter_request(struct exporter *e, const struct proto_api *api, uint64_t local_ns)
{
    if (e == NULL || e->stopped)
        return;
    metrics_add(api_series(e->f_requests, e->s_requests, api), 1);
    metrics_observe(api_series(e->f_local, e->s_local, api), (double)local_ns / 1e9);
}

static double seconds_between(uint64_t from, uint64_t to)
{
    return to > from ? (double)(to - from) / 1e9 : 0;
}

void exporter_sent(void *arg, const struct net_request_times *t)
{
    struct exporter *e = arg;
    if (e == NULL || e->stopped || t->api == NULL)
        return;
    const struct proto_api *api = t->api;
    metrics_observe(api_series(e->f_queue, e->s_queue, api),
                    seconds_between(t->received_ns, t->started_ns));
    metrics_observe(api_series(e->f_remote, e->s_remote, api),
                    seconds_between(t->handled_ns, t->responded_ns));
    metrics_observe(api_series(e->f_resp_queue, e->s_resp_queue, api),
                    seconds_between(t->responded_ns, t->queued_ns));
    metrics_observe(api_series(e->f_send, e->s_send, api),
                    seconds_between(t->queued_ns, t->sent_ns));
    metrics_observe(api_series(e->f_total, e->s_total, api),
                    seconds_between(t->received_ns, t->sent_ns));
}

/* Visits every ErrorCode (INT16) field present at `version`, in structs and arrays of structs
 * of the answer. */
static void walk_errors(struct exporter *e, const char *api, const struct proto_struct *s,
                        int16_t version, bool flexible, const void *in, int depth)
{
    if (s == NULL || in == NULL || depth > ERROR_WALK_DEPTH)
        return;
    for (uint16_t i = 0; i < s->nfields; i++) {
        const struct proto_field *f = &s->fields[i];
        const char *at = (const char *)in + f->offset;
        if (version < f->min_version || version > f->max_version || (f->tag >= 0 && !flexible))
            continue;
        if (f->type == PROTO_INT16 && strcmp(f->name, "ErrorCode") == 0) {
            int16_t code;
            memcpy(&code, at, sizeof code);
            if (code != 0)
                metrics_add(metrics_series2(e->f_errors, api, err_name(code)), 1);
        } else if (f->type == PROTO_STRUCT) {
            walk_errors(e, api, f->sub, version, flexible, at, depth + 1);
        } else if (f->type == PROTO_ARRAY && f->elem_type == PROTO_STRUCT && f->sub) {
            PROTO_ARRAY(char) arr;
            memcpy(&arr, at, sizeof arr);
            for (int32_t k = 0; k < arr.n; k++)
                walk_errors(e, api, f->sub, version, flexible, arr.v + (size_t)k * f->sub->size,
                            depth + 1);
        }
    }
}

void exporter_response(void *arg, const struct net_request *req, int16_t version, const void *resp)
{
    struct exporter *e = arg;
    if (e == NULL || e->stopped || resp == NULL)
        return;
    walk_errors(e, req->api->name, req->api->response, version,
                proto_api_flexible(req->api, version), resp, 0);
}

/* ---- the console's view (console_int.h) --------------------------------------------------- */

static void on_console(void *arg, struct console_call *c)
{
    if (c->lookup)
        console_lookup(arg, c);
    else
        console_api(arg, c);
}

struct meta *exporter_meta(struct exporter *e)
{
    return e->stopped ? NULL : e->meta;
}

struct replica_mgr *exporter_replicas(struct exporter *e)
{
    return e->replicas;
}

struct group_coord *exporter_groups(struct exporter *e)
{
    return e->groups;
}

struct txn *exporter_txn(struct exporter *e)
{
    return e->txn;
}

const struct props *exporter_config(const struct exporter *e)
{
    return e->config;
}

int32_t exporter_node_id(const struct exporter *e)
{
    return e->node_id;
}

struct authz *exporter_authz(struct exporter *e)
{
    return e->authz;
}

bool exporter_write_enabled(const struct exporter *e)
{
    return e->write_enable;
}

int exporter_create_topic(struct exporter *e, const char *name, int32_t partitions,
                          int16_t replication_factor)
{
    if (e->create_topic == NULL || e->stopped)
        return ERR_COORDINATOR_NOT_AVAILABLE;
    return e->create_topic(e->create_topic_arg, name, partitions, replication_factor, 0, NULL,
                           NULL);
}

/* ---- lifecycle ----------------------------------------------------------------------------- */

/* host:port or [v6]:port into host (no brackets) and *port. */
static int parse_listener(const char *s, char *host, size_t host_len, int *port)
{
    const char *colon, *h = s;
    size_t hl;
    if (*s == '[') {
        const char *close = strchr(s, ']');
        if (close == NULL || close[1] != ':')
            return -1;
        h = s + 1;
        hl = (size_t)(close - h);
        colon = close + 1;
    } else {
        colon = strrchr(s, ':');
        if (colon == NULL)
            return -1;
        hl = (size_t)(colon - s);
    }
    if (hl == 0 || hl >= host_len)
        return -1;
    char *end;
    long p = strtol(colon + 1, &end, 10);
    if (colon[1] == '\0' || *end != '\0' || p < 0 || p > 65535)
        return -1;
    memcpy(host, h, hl);
    host[hl] = '\0';
    *port = (int)p;
    return 0;
}

static bool host_is_loopback(const char *host)
{
    return strncmp(host, "127.", 4) == 0 || strcmp(host, "::1") == 0;
}

/* metrics.ssl.keystore.location's file (PEM only), malloc'd into *pem; 0, or 1 after logging. */
static int read_keystore(const struct props *config, char **pem)
{
    const char *path = props_get(config, "metrics.ssl.keystore.location");
    const char *type = props_get(config, "metrics.ssl.keystore.type");
    *pem = NULL;
    if (path == NULL || path[0] == '\0')
        return 0;
    if (type && type[0] && strcmp(type, "PEM") != 0) {
        slog_error("exporter",
                   "metrics.ssl.keystore.type=%s: the metrics listener's TLS (GnuTLS, through "
                   "libmicrohttpd) takes PEM only; PKCS12 is not supported there",
                   type);
        return 1;
    }
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0;
    if (f) {
        buf = malloc(1 << 20);
        len = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
        fclose(f);
    }
    if (buf == NULL || len == 0 || strstr((buf[len] = '\0', buf), "-----BEGIN") == NULL) {
        free(buf);
        slog_error("exporter",
                   "metrics.ssl.keystore.location: cannot read a PEM key and certificate chain "
                   "from %s",
                   path);
        return 1;
    }
    *pem = buf;
    return 0;
}

int exporter_start(const struct exporter_options *o, struct exporter **out)
{
    const char *listener = props_get(o->config, "metrics.listener");
    char host[64];
    int port;

    if (listener == NULL || parse_listener(listener, host, sizeof host, &port) != 0) {
        slog_error("exporter", "metrics.listener \"%s\": not host:port", listener ? listener : "");
        return 1;
    }
    const char *auth = props_get(o->config, "console.authentication");
    bool scram = auth != NULL && strcmp(auth, "scram") == 0;
    bool plain = auth != NULL && strcmp(auth, "plain") == 0;
    if (auth != NULL && auth[0] != '\0' && !scram && !plain && strcmp(auth, "none") != 0) {
        slog_error("exporter", "console.authentication=%s: none, scram or plain", auth);
        return 1;
    }
    char *pem = NULL;
    if (read_keystore(o->config, &pem) != 0)
        return 1;
    /* A console on a public address shows every topic's records to whoever asks: it must
     * check who asks, over TLS, unless the operator says otherwise. */
    if (!host_is_loopback(host) && !(pem && (scram || plain)) &&
        !props_get_bool(o->config, "console.insecure.ok", false, NULL)) {
        slog_error("exporter",
                   "metrics.listener %s is not a loopback address: the console needs HTTPS "
                   "(metrics.ssl.keystore.location) and console.authentication=scram or plain "
                   "there, or "
                   "console.insecure.ok=true",
                   listener);
        free(pem);
        return 1;
    }
    bool authz_on = false;
    char why[256];
    if (authz_config(o->config, &authz_on, why, sizeof why) != 0) {
        slog_error("exporter", "%s", why);
        free(pem);
        return 1;
    }
    struct exporter *e = calloc(1, sizeof *e);
    if (e == NULL || (e->m = metrics_new(0)) == NULL || !declare(e) ||
        (authz_on && (e->authz = authz_new(o->meta, o->config)) == NULL)) {
        free(pem);
        if (e)
            metrics_free(e->m);
        if (e)
            authz_free(e->authz);
        free(e);
        slog_error("exporter", "out of memory");
        return 1;
    }
    e->loop = o->loop;
    e->meta = o->meta;
    e->node_id = o->node_id;
    e->partition_level = props_get_bool(o->config, "metrics.partition.level", true, NULL);
    e->partition_max = props_get_int(o->config, "metrics.partition.max.series", 10000, NULL);
    e->config = o->config;
    e->write_enable = props_get_bool(o->config, "console.write.enable", false, NULL);
    e->create_topic = o->create_topic;
    e->create_topic_arg = o->create_topic_arg;
    struct exporter_http_security sec = {
        .keystore_pem = pem,
        .scram = scram,
        .plain = plain,
        .plain_users = o->plain_users,
        .n_plain = o->n_plain_users,
        .failed_delay_ms =
            props_get_int(o->config, "connection.failed.authentication.delay.ms", 100, NULL),
    };
    int hrc = exporter_http_start(o->loop, host, port, render, on_console, e, &sec, &e->http);
    if (pem)
        OPENSSL_cleanse(pem, strlen(pem));
    free(pem);
    if (hrc != 0) {
        metrics_free(e->m);
        authz_free(e->authz);
        free(e);
        return 1;
    }
    e->slice_ns = slice_budget_ns();
    uv_idle_init(o->loop, &e->slice_idle);
    e->slice_idle.data = e;
    uv_timer_init(o->loop, &e->lag_timer);
    e->lag_timer.data = e;
    uv_timer_start(&e->lag_timer, on_lag_timer, LAG_INTERVAL_MS, LAG_INTERVAL_MS);
    /* The timer does not keep the loop running: shutdown closes it, but nothing waits on
     * it. */
    uv_unref((uv_handle_t *)&e->lag_timer);
    slog_info("exporter",
              strchr(host, ':') ? "metrics on %s://[%s]:%d/metrics, console at /%s%s%s"
                                : "metrics on %s://%s:%d/metrics, console at /%s%s%s",
              sec.keystore_pem ? "https" : "http", host, exporter_http_port(e->http),
              e->write_enable ? " (writes enabled)" : "",
              scram   ? " (SCRAM users log in)"
              : plain ? " (PLAIN users log in)"
                      : "",
              e->authz ? " (ACLs enforced)" : "");
    *out = e;
    return 0;
}

struct metrics *exporter_metrics(struct exporter *e)
{
    return e ? e->m : NULL;
}

int exporter_port(const struct exporter *e)
{
    return exporter_http_port(e->http);
}

void exporter_set_replicas(struct exporter *e, struct replica_mgr *rm)
{
    if (e)
        e->replicas = rm;
}

void exporter_set_groups(struct exporter *e, struct group_coord *gc)
{
    if (e)
        e->groups = gc;
}

void exporter_add_listener(struct exporter *e, const char *name, struct net_server *s)
{
    if (e == NULL || s == NULL || e->n_listeners >= EXPORTER_MAX_LISTENERS)
        return;
    struct metrics_series *ms = metrics_series1(e->f_connections, name);
    if (ms == NULL)
        return;
    e->listeners[e->n_listeners].srv = s;
    e->listeners[e->n_listeners].s = ms;
    e->n_listeners++;
}

void exporter_set_broker(struct exporter *e, struct broker *b)
{
    if (e)
        e->broker = b;
}

void exporter_set_txn(struct exporter *e, struct txn *t)
{
    if (e)
        e->txn = t;
}

void exporter_stop(struct exporter *e)
{
    if (e == NULL || e->stopped)
        return;
    e->stopped = true;
    e->replicas = NULL;
    e->groups = NULL;
    e->txn = NULL;
    e->broker = NULL;
    e->n_listeners = 0;
    exporter_http_stop(e->http);
    e->http = NULL;
    uv_close((uv_handle_t *)&e->lag_timer, NULL);
    uv_close((uv_handle_t *)&e->slice_idle, NULL);
}

void exporter_free(struct exporter *e)
{
    if (e == NULL)
        return;
    metrics_free(e->m);
    authz_free(e->authz);
    ts_free(&e->ts_cache);
    exporter_snapshot_release(e->snap);
    free(e);
}
