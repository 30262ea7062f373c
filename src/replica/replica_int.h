/* SPDX-License-Identifier: Apache-2.0 */
/* replica internals shared by partition.c and replica_mgr.c. */
#ifndef TALLY_REPLICA_INT_H
#define TALLY_REPLICA_INT_H

#include <limits.h>

#include "base/metrics.h"
#include "base/pool.h"
#include "base/purgatory.h"
#include "base/sysio.h"
#include "base/tclock.h"
#include "config/config.h"
#include "log/log.h"
#include "partition_sm.h"
#include "replica.h"
#include "throttle.h"

struct meta_partition;

#define REPLICA_OPENS_PER_TURN 32

/* A topic whose partitions assigned here are to be opened, from partition next_index on. */
struct replica_open_item {
    struct replica_open_item *next;
    uint8_t topic_id[16];
    int32_t next_index;
    int32_t opened; /* so far, for the line logged when done */
};

struct partition {
    struct replica_mgr *rm;
    struct partition *hash_next;
    char *topic;
    int32_t index;
    uint8_t topic_id[16];
    char dir[PATH_MAX];
    struct log *log;
    struct pstate *pstate;
    /* Role, epochs, replicas and ISR (from the image's partition records), the followers'
     * positions (on a leader), the log end as replication sees it and the high watermark:
     * the replication state machine. Everything that changes them goes through it and does
     * what its effects say (partition_effects). */
    struct partition_sm *sm;
    /* fetcher.c: the leader whose fetch session this follower is in (-1: none), its place in
     * that session's list, and until when a fetch error keeps it out of the requests. */
    int32_t fetch_leader;
    struct partition *fetch_prev, *fetch_next;
    int64_t fetch_delay_until;
    /* Replication throttles (throttle.h): the topic's leader/follower.replication.throttled.
     * replicas name this partition on this broker (refreshed with the settings). */
    bool leader_throttled, follower_throttled;
    /* alter.c: queued for the next AlterPartition request (the sm's pending change). */
    bool alter_queued;
    struct partition *alter_next;
    struct partition_settings settings;
    struct purgatory_point marks[4]; /* by enum partition_mark */
    unsigned refs;                   /* the table's reference + holders */
    unsigned flushing;               /* thread-pool flushes in flight */
    bool epochs_writing;             /* its leader-epoch checkpoint is being written */
    bool online;
    bool deleted; /* its directory is gone: no snapshot at close */
    /* cleaner.c: the cleaner checkpoint (offsets below are clean, -1 = never cleaned), the
     * earliest delete horizon of a tombstone kept by the last clean (a clean is due then even
     * without new dirty bytes), and whether a clean of it is in flight. */
    int64_t clean_offset;
    int64_t clean_horizon;
    bool cleaning;
    /* Monotonic time at open: how long a producer known only from the log or from replication
     * has been idle here counts from it (partition_idle_txns). */
    int64_t opened_mono_ms;
};

/* fetcher.c: one fetch session per leader broker this broker follows partitions of. */
struct replica_fetch_session;

struct replica_mgr {
    uv_loop_t *loop;
    /* ISR changes this broker asked for as a leader (NULL when metrics are off). */
    struct metrics_series *m_isr_shrinks, *m_isr_expands;
    /* Producer ids dropped from partitions' producer states (producer.id.expiration.ms). */
    struct metrics_series *m_pid_expired;
    struct meta *meta;
    struct config_ctx cfg;
    int32_t node_id;
    char dir[PATH_MAX];
    struct partition **buckets;
    size_t n_buckets, count;
    struct log_checkpoint_entry *recovery, *starts; /* read at start, for opening logs */
    size_t n_recovery, n_starts;
    bool clean_start;
    struct tclock *clock; /* borrowed */
    /* The one table of file system calls (base/sysio.h) every log, producer snapshot and
     * file of this manager goes through, a copy of sysio_default() that tests may change;
     * log_io is it with `clock`, for every log. */
    struct sysio sys;
    struct log_io log_io;
    struct tclock_timer timer; /* housekeeping; data is NULL once closed */
    int64_t last_retention_ms, last_checkpoint_ms, last_hw_checkpoint_ms, last_expiration_ms;
    int64_t last_sm_tick_ms; /* tick_partitions' last round */
    unsigned flushes;        /* in flight, all partitions (and log-start checkpoint writes) */
    /* log_starts.c: a log-start-offset-checkpoint write in flight, and who waits for the
     * next one. */
    bool starts_busy;
    struct replica_start_sync *starts_waiting;
    /* Partitions the image assigns here that failed to open after start-up (EMFILE, ...):
     * retried by the housekeeping tick every few seconds rather than left offline until a
     * restart. */
    size_t open_failed;
    /* file_writes.c: the writes on (or waiting for) the thread pool, by file; how many are
     * on the pool; those waiting for a slot (urgent ones first). */
    struct replica_write **writes;
    unsigned writes_running;
    struct replica_write *ready_urgent, *ready_bg, *ready_urgent_last, *ready_bg_last;
    int64_t last_open_retry_ms;
    /* Leadership events (replica_subscribe): queued during a metadata apply, delivered by
     * an idle handle at most REPLICA_EVENTS_PER_TURN per loop turn. */
    struct replica_sub {
        replica_event_cb cb;
        void *arg;
    } * subs;
    size_t n_subs;
    struct replica_event_item *ev_head, **ev_tail;
    size_t ev_count;
    /* Topics with partitions newly assigned here, opened by the same idle handle at most
     * REPLICA_OPENS_PER_TURN per turn: opening (and recovering) logs stays out of the
     * metadata apply. */
    struct replica_open_item *open_head, **open_tail;
    size_t opens_queued;
    uv_idle_t ev_idle;
    bool ev_idle_open;
    /* cleaner.c: the one clean in flight (NULL if none), when the cleaner last looked for
     * work, and the cleaner checkpoint read at start (until the partitions took it). */
    struct replica_clean *clean;
    int64_t last_clean_check_ms;
    /* check.c: the slice of the background file check in flight (NULL if none), and before
     * when no new one starts after a failed one. */
    struct replica_check *check;
    int64_t check_retry_ms;
    bool stopping;
    void (*stop_cb)(void *arg);
    void *stop_arg;
    /* Replication (read at start): replica.lag.time.max.ms and the AlterPartition retry. */
    int64_t replica_lag_time_max_ms, alter_retry_ms;
    /* The replication-offset-checkpoint read at start (each partition's high watermark),
     * until the partitions took it. */
    struct log_checkpoint_entry *hws;
    size_t n_hws;
    /* fetcher.c: the follower fetcher on its own client (borrowed), its sessions and their
     * settings (replica.fetch.*). */
    struct net_client *fetch_client;
    struct replica_fetch_session *sessions;
    /* Replication throttles (throttle.h): what this broker sent as a leader and fetched as a
     * follower of throttled partitions, against leader/follower.replication.throttled.rate. */
    struct throttle_meter leader_quota, follower_quota;
    int32_t fetch_wait_ms, fetch_min_bytes, fetch_max_bytes, fetch_response_max_bytes;
    int64_t fetch_backoff_ms;
    unsigned fetches_in_flight; /* a stop waits for them */
    bool fetch_kick;            /* replica_fetcher_kick at the next idle turn */
    /* alter.c: AlterPartition to the controller through the shared client (borrowed): the
     * partitions whose change waits for the next request, and whether one is in flight. */
    struct net_client *client;
    struct partition *alter_head;
    bool alter_in_flight;
    int64_t alter_backoff_until;
};

/* fetcher.c: puts `p` in the session of its leader (or takes it out of any: not a follower,
 * no leader, leader itself), as its state machine now says. Safe to call at any time. */
void replica_fetcher_update(struct replica_mgr *rm, struct partition *p);
/* fetcher.c: takes `p` out of its session (it is closing). */
void replica_fetcher_remove(struct replica_mgr *rm, struct partition *p);
/* fetcher.c: sends the fetches that are due (the housekeeping tick calls it too). */
void replica_fetcher_kick(struct replica_mgr *rm);
/* fetcher.c: stops every session (answers still out are dropped); replica_fetcher_free frees
 * them once no Fetch is out (the stop's end). */
void replica_fetcher_stop(struct replica_mgr *rm);
void replica_fetcher_free(struct replica_mgr *rm);
/* partition.c: the follower's side of the replication throttles — the bytes of `p` the next
 * Fetch may ask for (PartitionMaxBytes), out of `budget`, after `claimed` bytes the throttled
 * partitions before it in the same request took: less only when the topic's
 * follower.replication.throttled.replicas names `p` on this broker and this replica is not in
 * the ISR (0: leave it out this time). *counted says whether its bytes count toward
 * follower.replication.throttled.rate; partition_follower_fetched records them. */
int64_t partition_follower_throttle(struct partition *p, int64_t budget, int64_t claimed,
                                    bool *counted);
void partition_follower_fetched(struct partition *p, size_t bytes);
/* partition.c: a follower whose leader's log starts past this replica's end: the log is
 * emptied and starts at `offset` (producer state and the HW with it). */
int partition_reset_to(struct partition *p, int64_t offset);
/* alter.c: queues `p`'s pending AlterPartition for the next request (one at a time). */
void replica_alter_queue(struct replica_mgr *rm, struct partition *p);
/* alter.c: takes `p` out of the queue (it is closing). */
void replica_alter_remove(struct replica_mgr *rm, struct partition *p);

/* partition.c */
/* Opens (creating if new) the partition's directory, partition.metadata, log and producer
 * state. Returns 0 and *out; ERR_IO after one ERROR line naming what failed (the file and the
 * reason), the partition then stays offline; or ERR_NOMEM. */
int partition_open(struct replica_mgr *rm, const char *topic, const uint8_t id[16],
                   const struct meta_partition *mp, struct partition **out);
/* Takes role, epochs, replicas and ISR from the image's record (keeping known follower
 * positions). Returns true if the role or the leader epoch changed (a leadership event). On
 * a leader the high watermark may move (waiters are woken). */
bool partition_set_state(struct partition *p, const struct meta_partition *mp);
/* The partition's log: replica/ and its unit tests only (nothing above replica/ reads the log
 * directly). */
struct log *partition_log(struct partition *p);
/* Takes the partition offline: wakes the watches of its marks, drops the table's reference; the
 * directory is deleted (renamed away at once) when `delete_dir`. */
void partition_close(struct partition *p, bool delete_dir);
void partition_refresh_settings(struct partition *p);
/* Does what a replication state machine call asked (partition_sm.h's effects, in order). */
void partition_effects(struct partition *p, const struct psm_effects *fx);
/* The one truncation routine of a follower (partition.c says what moves with the log). */
int partition_truncate(struct partition *p, int64_t offset, bool below_hw);
/* The log start or end moved outside an append (retention, DeleteRecords, truncation): tell
 * the state machine. */
void partition_log_moved(struct partition *p);
/* Brings the marks (enum partition_mark) up to the partition's state, firing the watches
 * they reach: call whenever the log end, high watermark, last stable offset or flushed
 * offset may have moved. Safe to re-enter from a watch's callback. */
void partition_marks_changed(struct partition *p);
/* Removes a partition directory (flat: its files, then itself) through `io`; what cannot be
 * removed is logged (WARN) and left. */
void partition_remove_dir(const struct sysio *io, const char *dir);
/* Starts a thread-pool fsync if flush.messages / flush.ms ask for one, or with `force`
 * (after a roll: the sealed segment's data becomes recovered-for-good, so that a crash
 * rescans at most the active segment, as Kafka does). */
void partition_maybe_flush(struct partition *p, bool force);

/* replica_mgr.c: queues a leadership event for the subscribers (none: nothing queued). */
void replica_mgr_publish(struct replica_mgr *rm, const struct partition *p, enum replica_role role);

/* replica_mgr.c: makes sure queued events and opens are worked off from the next loop turn. */
void replica_mgr_kick(struct replica_mgr *rm);

/* file_writes.c: small whole files (checkpoints, leader epochs, producer snapshots) are
 * written on the thread pool, never on the loop. Writes with the same key (the file's path)
 * run one at a time, in submission order, so an older snapshot of a file never lands after
 * a newer one, even across partition objects (a topic deleted and created again under the
 * same name). Each counts in `flushes` until its `done` has run, so a stop waits for it. */
struct replica_write {
    void (*run)(struct replica_write *w);  /* pool thread: does the write, sets rc */
    void (*done)(struct replica_write *w); /* loop: afterwards; may free w */
    bool urgent; /* someone waits for it (DeleteRecords): ahead of background writes */
    int rc;
    /* Private to file_writes.c. */
    struct pool_job work;
    struct replica_mgr *rm;
    struct replica_write *chain;       /* the bucket's list of writes in flight */
    struct replica_write *after, *end; /* writes of the same key queued behind this one */
    struct replica_write *ready_next;  /* waiting for a pool slot */
    bool on_pool;
    uint64_t hash;
    char key[PATH_MAX + 64];
};
/* Queues w (filled in: run, done) for the file `key`. */
void replica_write_submit(struct replica_mgr *rm, struct replica_write *w, const char *key);
/* Writes the partition's leader-epoch checkpoint on the pool if its cache changed (one
 * write per partition in flight; later changes are picked up by the next call). */
void replica_write_epochs(struct partition *p);
/* Writes the producer snapshot as of `offset` into the page cache now, then fsyncs it and
 * prunes old ones on the pool. */
void replica_write_snapshot(struct partition *p, int64_t offset);
/* Writes a checkpoint file on the pool; takes ownership of `e` (malloc()ed). */
void replica_write_checkpoint(struct replica_mgr *rm, const char *path,
                              struct log_checkpoint_entry *e, size_t n);

/* replica_mgr.c: a piece of thread-pool work counted in `flushes` is over (a stop may be
 * waiting for it). */
void replica_mgr_work_done(struct replica_mgr *rm);
/* replica_mgr.c: a fetch or AlterPartition answer arrived during a stop: finish it if it was
 * the last thing out. */
void replica_mgr_check_stop(struct replica_mgr *rm);

/* cleaner.c: log compaction's scheduling. replica_cleaner_load reads the log dir's
 * cleaner-offset-checkpoint into the hosted partitions (at start); replica_cleaner_tick (each
 * housekeeping tick) starts a clean of the dirtiest compacted partition when one is due and
 * none runs. A clean in flight counts in `flushes`, so a stop waits for its slice and then
 * ends it. */
void replica_cleaner_load(struct replica_mgr *rm);
void replica_cleaner_tick(struct replica_mgr *rm);

/* check.c: drives log/check.c's background check of the files the opens trusted, one slice at
 * a time on the thread pool, back to back while there is work (counted in `flushes`, so a stop
 * waits for the slice in flight). Call after a log_check_start and at every housekeeping tick
 * (which resumes after a failed slice). */
void replica_check_kick(struct replica_mgr *rm);

/* clean_marker.c: the clean-shutdown marker's name, and its writing at the end of a clean
 * stop (naming the broker epoch of the note lifecycle.c keeps; its format is there).
 * Returns 0 or ERR_IO (no marker is left then). Runs on the thread pool. */
#define REPLICA_CLEAN_MARKER ".kafka_cleanshutdown"
int replica_write_clean_marker(const char *log_dir);

#endif
