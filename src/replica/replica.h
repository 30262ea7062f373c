/* SPDX-License-Identifier: Apache-2.0 */
/* replica: the manager of the partitions this broker hosts (one partition: partition.h; a
 * coordinator's partitions: coord_log.h), kept in step with the metadata image — opened when
 * assigned here, closed and deleted when their topic goes, their roles, epochs and ISRs
 * following the image's partition records — plus the housekeeping around them: flush policy
 * (fsync on the thread pool), retention, checkpoints, the clean-shutdown marker and the
 * follower fetcher that replicates from the leaders. Leadership changes are published to
 * subscribers (coordinators) in bounded slices off the metadata apply. */
#ifndef TALLY_REPLICA_H
#define TALLY_REPLICA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "replica/partition.h"

struct meta;
struct metrics;
struct tclock;
struct props;
struct net_client;

struct replica_mgr;

struct replica_options {
    uv_loop_t *loop;
    struct tclock *clock; /* time service (housekeeping, segment.ms, expiry); borrowed */
    struct meta *meta;
    const struct props *config; /* static broker config, borrowed */
    int32_t node_id;
    const char *log_dir;
    /* Outbound clients (net/net.h), borrowed: `client` carries AlterPartition to the
     * controller; `fetch_client` only the follower fetcher's Fetch requests, so that a
     * long-polling replica fetch never waits in front of coordinator traffic. NULL (unit
     * tests): nothing is sent, followers are appended to by the caller. */
    struct net_client *client;
    struct net_client *fetch_client;
    /* Where the ISR change counters go (docs/metrics.md); borrowed, must outlive the
     * manager. NULL: not counted. */
    struct metrics *metrics;
};

/* Opens every partition the image assigns to this node (recovering unflushed tails when
 * the last stop was not clean), deletes directories of topics that no longer exist, and
 * starts housekeeping. Call once metadata is ready. Returns 0 and *out, or an error. */
int replica_mgr_start(const struct replica_options *opts, struct replica_mgr **out);

/* The manager subscribes itself to the metadata (meta_subscribe) at start and leaves at stop:
 * every batch applied brings the hosted partitions in line (new partitions, roles and
 * epochs, deleted topics, changed configs). */

/* Flushes and closes every log, writes checkpoints and the clean-shutdown marker (naming the
 * broker epoch of the last replica_note_broker_epoch), then frees; `cb` runs when done
 * (pending thread-pool flushes are waited for). */
void replica_mgr_stop(struct replica_mgr *rm, void (*cb)(void *arg), void *arg);

/* BrokerRegistration's PreviousBrokerEpoch from the log directory (clean_marker.c): the
 * broker epoch the previous process of this broker was registered at, when its logs cannot
 * have lost anything since — it stopped cleanly (the clean-shutdown marker names the epoch),
 * or it was killed but the machine did not restart (the note of replica_note_broker_epoch
 * is from this boot, so the page cache kept every write) — else -1. Read it at start before
 * replica_mgr_start, which removes the marker. Blocking file reads: call before the loop
 * serves anything. */
int64_t replica_previous_broker_epoch(const char *log_dir);
/* Notes in the log directory that this broker registered at `epoch`, with this boot's id.
 * Not fsynced (clean_marker.c says why). Returns 0, or ERR_IO (no note is left then, and the
 * next start after a crash registers as unclean). */
int replica_note_broker_epoch(const char *log_dir, int64_t epoch);

/* Look-ups; NULL when this broker does not host the partition (in any role). */
struct partition *replica_partition(struct replica_mgr *rm, const char *topic, int32_t index);
struct partition *replica_partition_by_id(struct replica_mgr *rm, const uint8_t topic_id[16],
                                          int32_t index);
/* Number of hosted partitions. */
size_t replica_count(const struct replica_mgr *rm);

/* Calls fn(arg, p) for every hosted partition (any role), in no particular order, until fn
 * returns non-zero; returns that value, or 0. fn must not open or close partitions. */
int replica_for_each(struct replica_mgr *rm, int (*fn)(void *arg, struct partition *p), void *arg);

/* A walk over every hosted partition spread over several loop iterations, so that a walk of
 * thousands of partitions does not hold the loop at once (the metrics exporter's). Start with
 * a zeroed struct replica_walk. Each replica_walk_slice call visits whole hash buckets from
 * where the last stopped, calling fn(arg, p) for each partition, until `budget_ns` (measured
 * with now_ns) has passed or every bucket was visited: REPLICA_WALK_DONE (the walk is over),
 * REPLICA_WALK_MORE (call again later), or REPLICA_WALK_RESTART when the table was rebuilt
 * between two calls (partitions were added): nothing was visited, and the caller starts over
 * with a zeroed walk. A partition added or removed between calls is seen once or not at all;
 * none is seen twice. fn must not open or close partitions. */
struct replica_walk {
    size_t next, n_buckets;
};
enum { REPLICA_WALK_DONE = 0, REPLICA_WALK_MORE = 1, REPLICA_WALK_RESTART = 2 };
int replica_walk_slice(struct replica_mgr *rm, struct replica_walk *w, uint64_t (*now_ns)(void),
                       uint64_t budget_ns, void (*fn)(void *arg, struct partition *p), void *arg);

/* The log directory, for DescribeLogDirs: its absolute path into path[0..path_len) (the
 * configured one if it cannot be resolved), and the total and usable bytes of the volume it
 * is on (statvfs; usable = what an unprivileged writer may still take). Returns 0, or ERR_IO
 * when the volume cannot be asked (*total and *usable are then -1). */
int replica_log_dir(const struct replica_mgr *rm, char *path, size_t path_len, int64_t *total,
                    int64_t *usable);

/* The partition a client request (Produce, Fetch, ListOffsets, DeleteRecords,
 * DescribeProducers) must find led here. Returns 0 and *out when this broker leads it;
 * NOT_LEADER_OR_FOLLOWER when the image knows the partition but this broker does not lead
 * it (a follower here, or not hosted here: the client refreshes its metadata, as with
 * Kafka); UNKNOWN_TOPIC_OR_PARTITION (by name) or UNKNOWN_TOPIC_ID (by id) when the image
 * does not know it. */
int replica_leader_partition(struct replica_mgr *rm, const char *topic, int32_t index,
                             struct partition **out);
int replica_leader_partition_by_id(struct replica_mgr *rm, const uint8_t topic_id[16],
                                   int32_t index, struct partition **out);

/* ---- leadership events --------------------------------------------------------------------- */

/* "This broker became leader / follower of, or stopped hosting, topic-partition at epoch".
 * The topic string is valid during the callback only. */
struct replica_event {
    const char *topic;
    const uint8_t *topic_id; /* 16 bytes */
    int32_t partition;
    enum replica_role role;
    int32_t leader_epoch;
};
typedef void (*replica_event_cb)(void *arg, const struct replica_event *ev);

/* Adds a subscriber: from now on every leadership change is delivered to it, in the order
 * they happened, after the metadata apply that caused them has returned and in slices of at
 * most REPLICA_EVENTS_PER_TURN events (over all subscribers) per event-loop turn — so a
 * subscriber's reaction (loading a coordinator) never runs inside the apply, and ten
 * thousand partitions changing at once do not hold the loop. A new subscriber is not told
 * about the roles already in place: it reads them with replica_partition / partition_role.
 * Returns 0, ERR_NOMEM, or ERR_EXISTS for a (cb, arg) pair already subscribed. */
#define REPLICA_EVENTS_PER_TURN 64
int replica_subscribe(struct replica_mgr *rm, replica_event_cb cb, void *arg);
/* Removes the subscriber with this (cb, arg): no event reaches it after this returns. */
void replica_unsubscribe(struct replica_mgr *rm, replica_event_cb cb, void *arg);
/* Events queued and not yet delivered, and topics whose new partitions wait to be opened
 * (partitions newly assigned by a metadata change open after the apply, a bounded number
 * per loop turn; until then requests for them get NOT_LEADER_OR_FOLLOWER and retry). For
 * tests and diagnostics. */
size_t replica_events_pending(const struct replica_mgr *rm);
size_t replica_opens_pending(const struct replica_mgr *rm);

/* Makes the log start offsets durable (DeleteRecords answers only after): writes the
 * log-start-offset-checkpoint with every hosted partition's log start offset as of this
 * call, fsynced, on the thread pool, then calls w->cb on the loop with 0 or ERR_IO (or
 * ERR_NOMEM). Writes are serialized; callers that arrive during one share the next. `w` is
 * the caller's and must live until its callback runs; the callback may run before this
 * returns (during shutdown, or if the pool refuses work). */
struct replica_start_sync {
    struct replica_start_sync *next;
    void (*cb)(struct replica_start_sync *w, int rc);
};
void replica_sync_log_starts(struct replica_mgr *rm, struct replica_start_sync *w);

#endif
