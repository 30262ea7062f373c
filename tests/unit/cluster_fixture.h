/* SPDX-License-Identifier: Apache-2.0 */
/* cluster_fixture: N brokers' replication state machines (replica/partition_sm) and the
 * controller's decisions (controller/controller_sm) on one virtual clock, over a fake
 * network, in the manner of canonical/raft's own fixture. No sockets, no files, no libuv:
 * plain C, deterministic from a seed. Time advances to the next event.
 *
 * What is modelled, and how:
 * - The network carries messages with a sender, a receiver and a delivery time (a delay
 *   drawn from [delay_min_ms, delay_max_ms]). Each one-way link can be cut (a message in
 *   flight on a link cut before its delivery is lost); a message is dropped with
 *   probability `drop`; a link keeps its order unless `reorder` is on. A request to a node
 *   that is down is refused at once when it comes from a client (a closed port), and lost
 *   when it comes from a broker (its own timeouts retry it).
 * - Brokers 1..n_nodes, every one a voter and a broker (process.roles=broker,controller).
 *   A broker is up, paused (SIGSTOP: messages queue and are handled on resume, its timers
 *   stop) or down (killed: its metadata and every log survive, except an unflushed tail
 *   when the kill says so; the rest is gone). Its registration names its last broker epoch
 *   (PreviousBrokerEpoch, lifecycle.c) after a controlled shutdown and after a kill that
 *   keeps the unflushed tail (a process crash on a machine that stays up: the broker finds
 *   the same boot id), and -1 after one that loses it (the machine crashed).
 * - Raft is an oracle: one committed batch log. The active controller's proposal commits
 *   after [commit_min_ms, commit_max_ms] if the controller reaches a majority of voters
 *   (both directions of each link up, the voter up); a controller that does not for
 *   election_timeout_ms steps down, and a voter that does becomes the controller
 *   (ctl_sm_activate on its image once it has applied the whole committed log). Each
 *   batch applies, with meta_image_apply and its compare-and-set rules, to the oracle's
 *   image and to the controller's; every other node fetches the committed batches from the
 *   controller over the network (long-poll, in order), so its image may lag or be cut off.
 *   A node applies a batch and feeds each partition record to its partition_sm. A
 *   restarted node replays what it had applied and opens its partitions only once it has
 *   applied its own registration (Kafka's initial catch-up; see maybe_ready).
 * - Per hosted partition: a partition_sm, an in-memory log of struct cf_entry and its
 *   leader-epoch cache, acks=all waiters on the HW, a follower fetcher (one Fetch in flight
 *   per leader, Kafka's fields), AlterPartition to the controller; heartbeats every
 *   heartbeat_ms with CurrentMetadataOffset; registration at start and after a restart.
 * - Clients: producers (acks=all or acks=1, one request in flight per partition, retry with
 *   backoff on every error, until a delivery timeout) and consumers (read from the leader
 *   up to the HW) that use a possibly stale metadata view from any broker.
 * - Checkers (cf_check): the safety properties of the cluster issue, see struct cf_report.
 *   Some are watched while the cluster runs (at every ack and every HW move).
 *
 * One topic, "t", with up to CF_MAX_PARTS partitions. Node ids are 1..n_nodes; client i has
 * the network id CF_CLIENT_BASE + i. */
#ifndef TALLY_TEST_CLUSTER_FIXTURE_H
#define TALLY_TEST_CLUSTER_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CF_MAX_NODES 5
#define CF_MAX_CLIENTS 8
#define CF_MAX_PARTS 4
#define CF_CLIENT_BASE 100

struct cf;

/* Zero means the default named. */
struct cf_options {
    int32_t n_nodes; /* 3 */
    uint64_t seed;
    int64_t delay_min_ms, delay_max_ms;   /* 1, 5 */
    double drop;                          /* 0 */
    bool reorder;                         /* false */
    int64_t commit_min_ms, commit_max_ms; /* 2, 10 */
    int64_t election_timeout_ms;          /* 1000 */
    int64_t lag_ms;                       /* replica.lag.time.max.ms, 30000 */
    int64_t session_ms;                   /* broker.session.timeout.ms, 9000 */
    int64_t heartbeat_ms;                 /* broker.heartbeat.interval.ms, 2000 */
    int64_t flush_ms;                     /* how often logs reach the disk, 1000 */
    bool unclean;                         /* unclean.leader.election.enable default */
    bool auto_rebalance;                  /* auto.leader.rebalance.enable (default off here) */
    int64_t rebalance_interval_ms;        /* 300000 */
    int32_t first_controller;             /* the voter the first election picks (0: any) */
};

/* One log entry: one record at `offset`, written in `epoch`, carrying a client's id. */
struct cf_entry {
    int64_t offset;
    int32_t epoch;
    uint64_t rid;
};

/* NULL when out of memory. */
struct cf *cf_new(const struct cf_options *o);
void cf_free(struct cf *c);

/* ---- time ------------------------------------------------------------------------------ */

int64_t cf_now(const struct cf *c);
/* Handles every event due within the next `ms` virtual milliseconds. */
void cf_run(struct cf *c, int64_t ms);
/* Runs until pred(c, arg) holds (checked after every event) or `max_ms` pass; returns it. */
bool cf_run_until(struct cf *c, bool (*pred)(struct cf *, void *), void *arg, int64_t max_ms);
/* Events handled so far (for the report). */
uint64_t cf_events(const struct cf *c);

/* ---- the cluster ----------------------------------------------------------------------- */

/* Runs until every node is registered and unfenced, then creates topic "t" with
 * `partitions` partitions of `rf` replicas (min.insync.replicas `min_isr`, the topic's
 * unclean.leader.election.enable `unclean`) and runs until each has a leader that every
 * replica follows. Returns true when all that happened within `max_ms`. */
bool cf_start(struct cf *c, int32_t partitions, int32_t rf, int32_t min_isr, bool unclean,
              int64_t max_ms);
/* The same with the replicas given (CreateTopics with assignments): partition i's replicas
 * are assignment[i * rf .. i * rf + rf), the first one its leader. */
bool cf_start_assigned(struct cf *c, int32_t partitions, int32_t rf, const int32_t *assignment,
                       int32_t min_isr, bool unclean, int64_t max_ms);

/* Sets a config of topic "t" (IncrementalAlterConfigs): the active controller proposes the
 * record now. Returns false when there is no controller. */
bool cf_set_topic_config(struct cf *c, const char *key, const char *value);

/* The oracle's committed view (what the controller knows). */
int32_t cf_controller(const struct cf *c); /* -1 = none */
int32_t cf_leader(const struct cf *c, int32_t part);
int32_t cf_leader_epoch(const struct cf *c, int32_t part);
int8_t cf_leader_recovery_state(const struct cf *c, int32_t part);
int32_t cf_isr(const struct cf *c, int32_t part, int32_t *out);      /* returns the count */
int32_t cf_replicas(const struct cf *c, int32_t part, int32_t *out); /* returns the count */
bool cf_in_isr(const struct cf *c, int32_t part, int32_t node);
bool cf_fenced(const struct cf *c, int32_t node);

/* A node's own view of a partition (its partition_sm), -1 / 0 when it hosts none. */
int cf_node_role(const struct cf *c, int32_t node, int32_t part); /* enum psm_role */
int32_t cf_node_leader_epoch(const struct cf *c, int32_t node, int32_t part);
int64_t cf_node_hw(const struct cf *c, int32_t node, int32_t part);
/* Whether the node, as leader, has an AlterPartition in flight (psm_alter_pending). */
bool cf_alter_pending(const struct cf *c, int32_t node, int32_t part);
/* The node's log (kept while it is down). */
const struct cf_entry *cf_log(const struct cf *c, int32_t node, int32_t part, int64_t *n);

/* ---- reassignment ---------------------------------------------------------------------- */

/* AlterPartitionReassignments of partition `part` of "t" on the active controller: its
 * decision (ctl_sm_reassign; n < 0 cancels) now, on its image, and the records proposed at
 * once. Returns the decision's answer (0 or its error), ERR_NOT_CONTROLLER without a
 * controller. A proposal the compare-and-set refuses when it commits (a concurrent change of
 * the partition) changes nothing: look at the oracle's view. */
int cf_reassign(struct cf *c, int32_t part, const int32_t *target, int32_t n);
/* The oracle's adding / removing replicas of a partition; each returns the count. */
int32_t cf_adding(const struct cf *c, int32_t part, int32_t *out);
int32_t cf_removing(const struct cf *c, int32_t part, int32_t *out);

/* ---- faults ---------------------------------------------------------------------------- */

void cf_cut(struct cf *c, int32_t from, int32_t to); /* one way */
void cf_cut2(struct cf *c, int32_t a, int32_t b);    /* both ways */
/* Cuts `node` from every other node, and from every client when `clients` is set. */
void cf_isolate(struct cf *c, int32_t node, bool clients);
/* Splits the nodes in two: side A = the nodes in `a`, side B = the others. Client i stays
 * on side A when client_side_a[i], else on side B (NULL: every client reaches both). */
void cf_split(struct cf *c, const int32_t *a, int32_t n_a, const bool *client_side_a);
void cf_heal(struct cf *c); /* every link up again */
void cf_set_drop(struct cf *c, double p);

void cf_kill(struct cf *c, int32_t node, bool lose_unflushed);
void cf_restart(struct cf *c, int32_t node);
/* A down node's leader-epoch caches go, its logs stay: it comes back knowing no epoch of its
 * batches (a leader-epoch-checkpoint never written and not rebuilt), so it fetches with
 * LastFetchedEpoch -1 and no leader can tell where its log diverges. */
void cf_lose_epoch_caches(struct cf *c, int32_t node);
void cf_pause(struct cf *c, int32_t node);
void cf_resume(struct cf *c, int32_t node);
/* Controlled shutdown: BrokerHeartbeat WantShutDown until the controller answers
 * ShouldShutDown, then the node stops cleanly (everything flushed; the active controller
 * hands raft leadership over first). */
void cf_shutdown(struct cf *c, int32_t node);
bool cf_up(const struct cf *c, int32_t node);
bool cf_down(const struct cf *c, int32_t node);
/* Stops (or restarts) the node's periodic flush: what it appends from now on stays
 * unflushed, so cf_kill(.., true) loses it. */
void cf_freeze_flush(struct cf *c, int32_t node, bool frozen);

/* ---- clients --------------------------------------------------------------------------- */

/* A producer writing one record every `interval_ms`, round robin over the partitions, until
 * `max_records` (0: until stopped). Returns its client index. */
int32_t cf_producer(struct cf *c, int16_t acks, int64_t interval_ms, int64_t max_records);
void cf_producer_stop(struct cf *c, int32_t client); /* no new records; retries go on */
/* A consumer of every partition from offset 0. Returns its client index. */
int32_t cf_consumer(struct cf *c);

struct cf_producer_stats {
    int64_t created, acked, failed, pending;
    int64_t errors[128]; /* produce answers by broker error code (0..127) */
    int64_t refused;     /* requests to a node that was down */
    int64_t timeouts;    /* requests without an answer */
};
void cf_producer_stats(const struct cf *c, int32_t client, struct cf_producer_stats *out);
/* Records consumed so far. */
int64_t cf_consumed(const struct cf *c, int32_t client);
/* acks=all answers sent by `node` with success since the fixture began. */
int64_t cf_acks_by(const struct cf *c, int32_t node);
/* Produce requests `node` appended as a leader, for records of acks `acks`. */
int64_t cf_appends_by(const struct cf *c, int32_t node, int16_t acks);

/* ---- checking -------------------------------------------------------------------------- */

/* A follower truncation of records at or past its HW (only an unclean election causes
 * one): the WARN line a broker logs. */
struct cf_truncation {
    int32_t node, part;
    int64_t to, old_end, old_hw;
    int64_t at_ms;
};
const struct cf_truncation *cf_truncations(const struct cf *c, int32_t *n);

/* Heals the network, resumes paused nodes, stops every producer from creating records and
 * runs until the cluster is quiet: a controller; each partition led, its ISR = its replicas
 * that are up, every up replica at the leader's epochs with the leader's log end and HW;
 * no record pending at a producer; every consumer at the HW. Returns whether that happened
 * within `max_ms`. */
bool cf_settle(struct cf *c, int64_t max_ms);

/* Counts of violations; 0 everywhere is a pass. `first` describes the first one found. */
struct cf_report {
    /* (1) an acks=all record a producer was told is acknowledged is not in the final
     *     leader's log at its offset (or the partition has no leader at the end) */
    int64_t lost_acked;
    /* (2) an acks=all success a broker sent for a record the final log does not hold there */
    int64_t false_acks;
    /* (3) a record a consumer read at an offset the final log holds differently */
    int64_t consumer_diverged;
    /* (4) an up ISR member whose log differs from the leader's, once settled */
    int64_t isr_diverged;
    /* (5) two brokers acknowledging acks=all writes in one leader epoch, or two records
     *     acknowledged at one offset */
    int64_t two_leaders;
    int64_t two_records;
    /* (6) a leader's HW moving backwards within a leader epoch */
    int64_t hw_backwards;
    /* (7) a leader's HW passing an offset that fewer than min.insync.replicas replicas hold
     *     with the leader's record there (commit without replication) */
    int64_t unreplicated_commit;
    /* (8) a committed change that took a replica out of the replicas (one a reassignment
     *     was not adding: it ended one) while a replica that stays was out of the ISR or did
     *     not hold the leader's log up to its HW: the old copies went before the new ones
     *     had caught up */
    int64_t early_removal;
    /* the fixture's own consistency (a follower appending an older epoch after a newer one,
     * an effect that cannot be carried out) */
    int64_t anomalies;
    int64_t acked_all, acked_one, consumed; /* what was checked */
    char first[512];
};
void cf_check(struct cf *c, struct cf_report *r);
/* The report in one line, for test logs. */
void cf_report_print(const struct cf *c, const struct cf_report *r, const char *label);

#endif
