/* SPDX-License-Identifier: Apache-2.0 */
/* group: the group coordinator. Group `g` is served by the leader of __consumer_offsets
 * partition abs(javaHash(g)) % offsets.topic.num.partitions; this broker keeps one shard per
 * partition it leads. A shard is rebuilt by replaying its partition (groups from their last
 * GroupMetadataValue, offsets from their last OffsetCommitValue, transactional offsets held
 * until their marker), then every state change is appended to it in Kafka's own key/value
 * formats and answered once the high watermark covers it (acks=all). The handlers below serve
 * Kafka's classic group protocol and offset APIs; the membership state machine of each group
 * is group_sm (internal). */
#ifndef TALLY_GROUP_H
#define TALLY_GROUP_H

#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

struct meta;
struct net_request;
struct props;
struct replica_mgr;
struct tclock;

struct group_coord;

/* The group coordinator's topic. */
#define GROUP_TOPIC "__consumer_offsets"

/* Asks that an internal topic be created (the caller's admin module proposes it): `name`,
 * `partitions`, the wished replication factor (the callee caps it at the live brokers) and
 * topic configs as parallel key/value arrays. Returns 0 when asked (or the topic exists), or
 * an error (not the controller, out of memory); the caller retries later either way until the
 * topic appears in the metadata. The same shape serves the transaction coordinator's
 * __transaction_state. */
typedef int (*group_ensure_topic_fn)(void *arg, const char *name, int32_t partitions,
                                     int16_t replication_factor, int32_t n_configs,
                                     const char *const *keys, const char *const *values);

struct group_coord_options {
    uv_loop_t *loop;
    struct tclock *clock;         /* every timer and clock read; borrowed */
    struct replica_mgr *replicas; /* borrowed; must outlive the coordinator */
    struct meta *meta;            /* borrowed: brokers (FindCoordinator), the topic */
    const struct props *config;   /* static broker config (offsets.*, group.*); borrowed */
    int32_t node_id;
    group_ensure_topic_fn ensure_topic; /* NULL: the topic is never created here */
    void *ensure_arg;
};

/* Creates the coordinator, subscribes it to leadership events and starts loading the shards
 * of the __consumer_offsets partitions this broker already leads. NULL on out of memory. */
struct group_coord *group_coord_new(const struct group_coord_options *opts);

/* Stops: every waiting request is answered (COORDINATOR_NOT_AVAILABLE / NOT_COORDINATOR),
 * loads are abandoned, groups freed; `cb(arg)` runs once nothing is in flight any more (a
 * thread-pool read may still have to come back), after which the coordinator is freed. Stop
 * it before the replica manager. */
void group_coord_stop(struct group_coord *gc, void (*cb)(void *arg), void *arg);

/* The __consumer_offsets partition of `group_id`: java_partition_for (base/jhash.h). */
int32_t group_partition_for(const char *group_id, int32_t n_partitions);

/* ---- request handlers (dispatch): each finishes `req` exactly once -------------------- */

/* FindCoordinator v0–4. Key type 0 (GROUP): the leader of the group's partition; when
 * __consumer_offsets does not exist yet it is asked for (ensure_topic) and the answer is
 * COORDINATOR_NOT_AVAILABLE meanwhile. Key type 1 (TRANSACTION): the same for
 * __transaction_state (transaction.state.log.* settings). Other key types: INVALID_REQUEST. */
void group_find_coordinator(struct group_coord *gc, struct net_request *req);
void group_join_group(struct group_coord *gc, struct net_request *req);
void group_sync_group(struct group_coord *gc, struct net_request *req);
void group_heartbeat(struct group_coord *gc, struct net_request *req);
void group_leave_group(struct group_coord *gc, struct net_request *req);
void group_offset_commit(struct group_coord *gc, struct net_request *req);
void group_offset_fetch(struct group_coord *gc, struct net_request *req);
void group_list_groups(struct group_coord *gc, struct net_request *req);
void group_describe_groups(struct group_coord *gc, struct net_request *req);
void group_delete_groups(struct group_coord *gc, struct net_request *req);
void group_offset_delete(struct group_coord *gc, struct net_request *req);

/* ---- hooks for the transaction coordinator (issue 10) ---------------------------------- */

/* One partition's offset in a transactional commit. */
struct group_txn_offset {
    const char *topic;
    int32_t partition;
    int64_t offset;
    int32_t leader_epoch; /* -1 = none */
    const char *metadata; /* NULL = "" */
};

/* TxnOffsetCommit's storage step, after the caller checked the request (group_sm_check_commit
 * with txn = true is done here too): appends the offsets as OffsetCommit records in one
 * transactional batch of (producer_id, producer_epoch) to the group's partition — as Kafka
 * writes them — and keeps them pending for that producer until group_txn_complete. `done`
 * runs exactly once (possibly before this returns) with 0 once the batch is durable, or the
 * error for the whole request (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS,
 * COORDINATOR_NOT_AVAILABLE, INVALID_PRODUCER_EPOCH, a commit check's error, …); `errs` (n
 * entries, caller's, filled before done runs) receives each partition's own error
 * (OFFSET_METADATA_TOO_LARGE, UNKNOWN_TOPIC_OR_PARTITION) — partitions with an error are
 * not stored. */
typedef void (*group_txn_done_fn)(void *arg, int16_t err);
void group_txn_offset_commit(struct group_coord *gc, const char *group_id, int64_t producer_id,
                             int16_t producer_epoch, const char *member_id,
                             const char *group_instance_id, int32_t generation_id,
                             const struct group_txn_offset *offsets, int32_t n, int16_t *errs,
                             group_txn_done_fn done, void *arg);

/* TxnOffsetCommit v0-3 (txn_offset_commit.c): decodes the request and answers through
 * group_txn_offset_commit. */
void group_txn_offset_commit_request(struct group_coord *gc, struct net_request *req);

/* A COMMIT (commit = true) or ABORT marker of `producer_id` landed in __consumer_offsets
 * partition `partition` (the caller appended it): the producer's pending offsets of every
 * group of that partition become committed offsets, or are dropped. A no-op when this broker
 * has no shard for the partition or the producer has nothing pending. */
void group_txn_complete(struct group_coord *gc, int32_t partition, int64_t producer_id,
                        bool commit);

/* Whether any transactional offset of `group_id` for topic-partition is pending (OffsetFetch
 * with RequireStable answers UNSTABLE_OFFSET_COMMIT then). */
bool group_offsets_pending(struct group_coord *gc, const char *group_id, const char *topic,
                           int32_t partition);

/* The web console: visits the members of group `group_id` as its state machine holds them
 * (group_sm.h's struct group_member_info, valid during the call only; the callback must not
 * call into the coordinator). Returns how many were visited (0 also when the group is not
 * coordinated here). */
struct group_member_info;
typedef void (*group_each_member_fn)(void *arg, const struct group_member_info *m);
size_t group_coord_members(struct group_coord *gc, const char *group_id, group_each_member_fn fn,
                           void *arg);

/* ---- an operator's reset (the web console, console.write.enable) ------------------------ */

/* The new committed offset of one of the group's partitions; < 0 leaves it as it is. Must not
 * call into the coordinator. */
typedef int64_t (*group_reset_target_fn)(void *arg, const char *topic, int32_t partition);
/* Resets the committed offsets of the Empty group `group_id`, each partition it has an offset
 * for to `target`'s choice, as one batch of OffsetCommit records (kafka-consumer-groups.sh
 * --reset-offsets's effect, which Kafka allows only for a group without members); they are set
 * once the batch is durable (a failure then is logged). *changed receives how many offsets the
 * batch holds. Returns 0 when the batch was started (or nothing changes), GROUP_ID_NOT_FOUND,
 * NON_EMPTY_GROUP (members, or a rebalance), NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS,
 * or ERR_NOMEM. */
int group_reset_offsets(struct group_coord *gc, const char *group_id, group_reset_target_fn target,
                        void *arg, int32_t *changed);

/* ---- diagnostics and tests ------------------------------------------------------------ */

/* Shards of this broker: how many are led here, and how many of those are still loading. */
void group_coord_shards(const struct group_coord *gc, int32_t *led, int32_t *loading);
/* Thread-pool reads the loads have made so far (each at most 1 MiB, parsed in a loop turn of
 * its own). */
uint64_t group_coord_load_reads(const struct group_coord *gc);
/* Appends (offset commits, group metadata) waiting to be replicated (metrics). */
size_t group_coord_waiting(const struct group_coord *gc);

/* ---- metrics: the groups as this coordinator holds them (docs/metrics.md) --------------- */

/* Visits every group of every shard led here and loaded: `on_group(arg, id, state, members)`
 * (state: group_state_name, e.g. "Stable"), then `on_offset(arg, id, topic, partition,
 * offset)` for each of its committed offsets, in no order. Strings are valid during the call
 * only; the callbacks must not call into the coordinator. Returns how many groups were
 * visited. */
typedef void (*group_each_group_fn)(void *arg, const char *group_id, const char *state,
                                    int32_t members);
typedef void (*group_each_offset_fn)(void *arg, const char *group_id, const char *topic,
                                     int32_t partition, int64_t offset);
size_t group_coord_for_each(struct group_coord *gc, group_each_group_fn on_group,
                            group_each_offset_fn on_offset, void *arg);

#endif
