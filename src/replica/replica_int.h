/* SPDX-License-Identifier: Apache-2.0 */
/* replica internals shared by partition.c and replica_mgr.c. */
#ifndef TALLY_REPLICA_INT_H
#define TALLY_REPLICA_INT_H

#include <limits.h>

#include "base/tclock.h"
#include "config/config.h"
#include "log/log.h"
#include "replica.h"

struct partition {
    struct replica_mgr *rm;
    struct partition *hash_next;
    char *topic;
    int32_t index;
    uint8_t topic_id[16];
    char dir[PATH_MAX];
    struct log *log;
    struct pstate *pstate;
    int32_t leader_epoch;
    int64_t high_watermark;
    struct partition_settings settings;
    struct partition_watch watchers; /* list head (sentinel) */
    unsigned refs;                   /* the table's reference + holders */
    unsigned flushing;               /* thread-pool flushes in flight */
    bool online;
    bool deleted; /* its directory is gone: no snapshot at close */
};

struct replica_mgr {
    uv_loop_t *loop;
    struct meta *meta;
    struct config_ctx cfg;
    int32_t node_id;
    char dir[PATH_MAX];
    struct partition **buckets;
    size_t n_buckets, count;
    struct log_checkpoint_entry *recovery, *starts; /* read at start, for opening logs */
    size_t n_recovery, n_starts;
    bool clean_start;
    struct tclock *clock;      /* borrowed */
    struct log_io log_io;      /* the default system calls with `clock`, for every log */
    struct tclock_timer timer; /* housekeeping; data is NULL once closed */
    int64_t last_retention_ms, last_checkpoint_ms, last_expiration_ms;
    unsigned flushes; /* in flight, all partitions (and log-start checkpoint writes) */
    /* log_starts.c: a log-start-offset-checkpoint write in flight, and who waits for the
     * next one. */
    bool starts_busy;
    struct replica_start_sync *starts_waiting;
    /* Partitions the image assigns here that failed to open after start-up (EMFILE, ...):
     * retried by the housekeeping tick every few seconds rather than left offline until a
     * restart. */
    size_t open_failed;
    int64_t last_open_retry_ms;
    bool stopping;
    void (*stop_cb)(void *arg);
    void *stop_arg;
};

/* partition.c */
int partition_open(struct replica_mgr *rm, const char *topic, const uint8_t id[16], int32_t index,
                   int32_t leader_epoch, struct partition **out);
/* Takes the partition offline: wakes its waiters, drops the table's reference; the
 * directory is deleted (renamed away at once) when `delete_dir`. */
void partition_close(struct partition *p, bool delete_dir);
void partition_refresh_settings(struct partition *p);
void partition_remove_dir(const char *dir);
/* Starts a thread-pool fsync if flush.messages / flush.ms ask for one, or with `force`
 * (after a roll: the sealed segment's data becomes recovered-for-good, so that a crash
 * rescans at most the active segment, as Kafka does). */
void partition_maybe_flush(struct partition *p, bool force);

/* replica_mgr.c: a piece of thread-pool work counted in `flushes` is over (a stop may be
 * waiting for it). */
void replica_mgr_work_done(struct replica_mgr *rm);

#endif
