/* SPDX-License-Identifier: Apache-2.0 */
/* controller_sm: the active controller's decisions as pure functions of a metadata image, the
 * broker sessions it keeps and the time it is told — broker registration, heartbeats and
 * fencing, replica placement (rack-aware), leader elections (clean, unclean, preferred), ISR
 * changes (AlterPartition), controlled shutdown and reassignments. A decision is a list of
 * metadata records to propose as one batch (struct ctl_out) and, for a request, its answer.
 * No sockets, no raft, no clock: controller/controller.c proposes the records through meta/
 * and answers the RPCs; the unit tests' cluster fixture applies them to a bare meta_image on
 * virtual time.
 *
 * Decisions are taken on the image as committed. Two decisions taken on the same state
 * cannot both apply: partition changes are compare-and-set on the partition epoch and
 * broker changes name the broker epoch (meta.h's apply rules), so the later batch is refused
 * whole (INVALID_UPDATE_VERSION / STALE_BROKER_EPOCH) and decided again on the new image.
 *
 * Rules, Kafka's (KRaft's ReplicationControlManager, BrokerHeartbeatManager) unless said:
 * - Every leader change bumps the leader epoch, and so does a change that takes a replica out
 *   of the replicas (a reassignment's end or cancellation, as Kafka's PartitionChangeBuilder
 *   does); an ISR-only change bumps only the partition epoch (KAFKA-15021). Every change
 *   bumps the partition epoch by one.
 * - A clean election picks the first replica (in replica order) that is in the ISR and
 *   unfenced and not shutting down; with none, the first such replica in the ELR (below),
 *   which becomes the ISR alone — a clean election, not RECOVERING: it holds every committed
 *   record. With none, an unclean election (topic config unclean.leader.election.enable,
 *   else the broker default) picks the first unfenced replica that is not shutting down,
 *   makes the ISR that replica alone, empties the ELR and sets LeaderRecoveryState
 *   RECOVERING; otherwise the leader is -1 (the partition is offline; clients get
 *   LEADER_NOT_AVAILABLE) and the ISR is left as it was. Nothing is truncated by the
 *   controller.
 * - KIP-966's eligible leader replicas (ELR). The HW does not advance while the committed
 *   ISR is below min.insync.replicas (partition_sm.h), so a replica that leaves the ISR
 *   while the ISR that remains is below the minimum (equivalently, for one leaving, while
 *   the ISR is at or below it) holds every record committed until then and from then on:
 *   it joins the ELR. Every change keeps that set: ISR members that leave join it, a replica
 *   back in the ISR (or no longer a replica) leaves it, an ISR at or above the minimum
 *   empties it (the HW moves on without its members), and so does an unclean election. A
 *   fenced ELR member stays in it. The minimum is the topic's min.insync.replicas, else the
 *   lowest of the cluster-wide dynamic default (else ctl_config's) and its replicas'
 *   per-broker dynamic values: a leader enforcing a lower minimum than the controller
 *   assumes would break the rule, so the brokers' static min.insync.replicas must not be
 *   below the controller's (Kafka forbids per-broker values with ELR on for this reason).
 * - Unclean shutdown (KIP-966): a registration whose PreviousBrokerEpoch is not the epoch
 *   of the registration the image holds for that broker may have lost its unflushed tail
 *   (the broker sends its last epoch only when its logs lost nothing since: lifecycle.c),
 *   so the broker leaves every ELR, and it is never elected from one.
 * - Fencing a broker (session expired, or re-registered as a new incarnation): every ISR it
 *   is in loses it (joining the ELR as above), but an ISR does not become empty: its last
 *   member stays, as the one complete copy, elected again when it comes back. One
 *   exception, the case that loses acknowledged records without ELR: the last member
 *   registers after an unclean shutdown while the ELR holds a member with a clean record
 *   (two ISR members crash, the one that kept its log re-registers first and leaves the ISR
 *   for the ELR, the other lost its unflushed tail). Then the ISR becomes empty and the ELR
 *   member is elected once it is unfenced — never the lossy one, whose log may lack records
 *   the ELR member holds and would truncate them away. Without such an ELR member the lossy
 *   last member stays in the ISR and is elected when it comes back, as before ELR existed,
 *   rather than the partition staying offline until an unclean election is allowed: no
 *   replica is known to hold more (the others left the ISR while the HW moved on), it lost
 *   at most its unflushed tail, and a one-broker cluster (or the last replica standing)
 *   must come back after a crash. Likewise an empty ISR whose last ELR member registers
 *   uncleanly gets it back as its ISR. Every partition it leads gets a new leader as above.
 *   All in one batch with the fence (or registration) record.
 * - A broker starts fenced; a heartbeat whose CurrentMetadataOffset has reached the broker's
 *   epoch (it has applied its own registration) unfences it, in one batch with the elections
 *   of offline partitions it can now lead.
 * - Controlled shutdown (WantShutDown): the broker is marked shutting down, leaves every ISR
 *   (never emptying one) and its leaderships move; ShouldShutDown is answered once it leads
 *   nothing (or no other replica could take over: such a partition stays with it until
 *   then). Answering ShouldShutDown fences the broker in the same batch, as Kafka's
 *   SHUTDOWN_NOW does, so what it still led goes offline (or to an unclean election).
 * - AlterPartition is accepted only from the leader, at its current leader epoch and
 *   partition epoch, with an ISR that is a subset of the replicas, holds the leader, and
 *   whose added members are eligible (registered, unfenced, not shutting down, and — v3 —
 *   at the broker epoch stated).
 * - Preferred leaders: the first replica. Every leader.imbalance.check.interval.ms (with
 *   auto.leader.rebalance.enable) at most `rebalance_batch` partitions per tick move back to
 *   their preferred replica, and only when it is in the ISR, unfenced, not shutting down and
 *   has been unfenced for at least one session timeout (so that a broker that just came back
 *   and is still catching up a cold page cache is not handed traffic at once: KAFKA-20708).
 *
 * Threading: one loop; nothing here is thread-safe. */
#ifndef TALLY_CONTROLLER_SM_H
#define TALLY_CONTROLLER_SM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "meta/meta.h"

struct arena;
struct ctl_sm;

struct ctl_config {
    const char *cluster_id;               /* copied */
    int64_t session_timeout_ms;           /* broker.session.timeout.ms, 9000 */
    bool unclean_leader_election;         /* unclean.leader.election.enable default, false */
    bool auto_leader_rebalance;           /* auto.leader.rebalance.enable, true */
    int64_t leader_imbalance_interval_ms; /* leader.imbalance.check.interval.seconds, 300 s */
    int32_t rebalance_batch;              /* preferred elections per tick, 0: 4 */
    int32_t min_insync_replicas;          /* min.insync.replicas default, 0: 1 */
};

/* Records of one decision, to be proposed as one batch. Record arrays and strings live in
 * `arena`. ctl_out_reset empties it for the next decision. */
struct ctl_out {
    struct arena *arena;
    struct meta_record *recs;
    size_t n, cap;
    bool oom; /* an allocation failed: the decision is incomplete, propose nothing */
};
void ctl_out_init(struct ctl_out *o);
void ctl_out_reset(struct ctl_out *o);
void ctl_out_free(struct ctl_out *o);

/* NULL when out of memory. `cfg` is copied. */
struct ctl_sm *ctl_sm_new(const struct ctl_config *cfg);
void ctl_sm_free(struct ctl_sm *c);

/* This node became the active controller (or the image was replaced): every registered,
 * unfenced broker's session starts now — a new controller cannot know when it last heard
 * from a broker, so each gets a whole session timeout to heartbeat. */
void ctl_sm_activate(struct ctl_sm *c, const struct meta_image *img, int64_t now_ms);

/* ---- registration and heartbeats ------------------------------------------------------- */

struct ctl_registration {
    int32_t broker_id;
    const char *cluster_id;
    uint8_t incarnation[16];
    int32_t n_listeners;
    const struct meta_listener *listeners; /* the first one is the broker's address */
    const char *rack;                      /* NULL = none */
    int32_t n_dirs;
    const uint8_t (*dirs)[16];
    /* PreviousBrokerEpoch (v3; -1 for older versions): the epoch the broker last registered
     * with, sent only when its logs lost nothing since; -1 = unknown or an unclean shutdown */
    int64_t previous_broker_epoch;
};

/* BrokerRegistration. Returns 0 with a REGISTER_BROKER2 record in `out` (plus, when it
 * replaces a registration, the fencing of the old incarnation: its ISRs and leaderships,
 * and its ELR places after an unclean shutdown, as above); the broker's epoch is the image
 * offset at which the batch
 * applies (read it from the image in the proposal's callback). Errors:
 * INCONSISTENT_CLUSTER_ID; INVALID_REQUEST (negative id, no listener, a listener without
 * host or port); DUPLICATE_BROKER_REGISTRATION when another incarnation of the id still
 * holds a live session and does not have the same log directories (a broker restarted in
 * place from its own data dir names the same directory ids and may register again at once;
 * anyone else waits until the old session expires). Re-registering the same incarnation
 * (a retry) answers 0 with no record. */
int ctl_sm_register(struct ctl_sm *c, const struct meta_image *img,
                    const struct ctl_registration *r, int64_t now_ms, struct ctl_out *out);
/* Whether registration `r` follows a clean shutdown as the rules above judge it: it names
 * the epoch the image holds for the broker (false for a broker the image does not know). */
bool ctl_sm_clean_shutdown(const struct meta_image *img, const struct ctl_registration *r);

struct ctl_heartbeat {
    int32_t broker_id;
    int64_t broker_epoch;
    int64_t metadata_offset; /* CurrentMetadataOffset: meta_image_offset on the broker */
    bool want_fence;
    bool want_shutdown;
};
struct ctl_heartbeat_answer {
    int16_t error; /* 0, STALE_BROKER_EPOCH, BROKER_NOT_AVAILABLE (not registered) */
    bool is_caught_up;
    bool is_fenced; /* as the image will be once `out` applies */
    bool should_shutdown;
};
/* BrokerHeartbeat: renews the broker's session and decides unfence / fence / shutdown
 * records (in `out`, possibly none). Returns ans->error. */
int ctl_sm_heartbeat(struct ctl_sm *c, const struct meta_image *img, const struct ctl_heartbeat *hb,
                     int64_t now_ms, struct ctl_out *out, struct ctl_heartbeat_answer *ans);

/* The periodic look (call every few hundred ms): expired sessions fence their brokers,
 * offline partitions get a leader when one is eligible, and preferred leaders come back as
 * the config says. `out` may stay empty. */
void ctl_sm_tick(struct ctl_sm *c, const struct meta_image *img, int64_t now_ms,
                 struct ctl_out *out);

/* When the controller wants its next tick (the earliest session expiry or rebalance). */
int64_t ctl_sm_next_deadline(const struct ctl_sm *c, int64_t now_ms);

/* ---- partitions ------------------------------------------------------------------------ */

struct ctl_alter_partition {
    int32_t broker_id;    /* the leader sending it */
    int64_t broker_epoch; /* -1 = not checked (AlterPartition v0-1) */
    uint8_t topic_id[16];
    int32_t partition;
    int32_t leader_epoch;
    int32_t partition_epoch;
    int32_t n_isr;
    const int32_t *isr;
    const int64_t *isr_epochs; /* v3 NewIsrWithEpochs: each member's broker epoch, -1 =
                                  unchecked; NULL = none given */
    int8_t leader_recovery_state;
};
/* AlterPartition for one partition. Returns 0 with the PARTITION_CHANGE in `out` (the
 * answer's state is that record's; an ISR equal to the current one answers 0 with the
 * current state and no record), or: STALE_BROKER_EPOCH, UNKNOWN_TOPIC_ID /
 * UNKNOWN_TOPIC_OR_PARTITION, FENCED_LEADER_EPOCH (an older leader epoch),
 * NOT_CONTROLLER (a newer one: this image lags), INVALID_REQUEST (not from the leader, an
 * ISR without the leader or with a non-replica, RECOVERING -> more than the leader),
 * INVALID_UPDATE_VERSION (another partition epoch), INELIGIBLE_REPLICA (an added member
 * fenced, shutting down or at another broker epoch), NEW_LEADER_ELECTED (the change moved
 * leadership, e.g. a reassignment's end or a leader in controlled shutdown handing over; the
 * PARTITION_CHANGE is in `out` and is proposed all the same, as Kafka writes it). */
int ctl_sm_alter_partition(struct ctl_sm *c, const struct meta_image *img,
                           const struct ctl_alter_partition *a, struct ctl_out *out);

/* ElectLeaders (API 43) for one partition: `unclean` false = preferred election (the first
 * replica, if in the ISR and eligible; else PREFERRED_LEADER_NOT_AVAILABLE; already leader:
 * ELECTION_NOT_NEEDED), true = unclean (a clean leader if possible, else any eligible
 * replica with RECOVERING; ELECTION_NOT_NEEDED when the partition has a leader;
 * ELIGIBLE_LEADERS_NOT_AVAILABLE when no replica is eligible). 0 with the record in `out`. */
int ctl_sm_elect(struct ctl_sm *c, const struct meta_image *img, const uint8_t topic_id[16],
                 int32_t partition, bool unclean, struct ctl_out *out);

/* ---- reassignment (KIP-455) ------------------------------------------------------------- */

/* Checks a replica list given by hand — a CreateTopics or CreatePartitions assignment, a
 * reassignment's target — as Kafka's validateManualPartitionAssignment does: at least one
 * replica, no broker twice, every broker registered (a fenced one too), and, when rf >= 0,
 * exactly rf replicas (a new partition of an existing topic, or of a topic whose other
 * partitions are given, has the replication factor of its siblings). Returns 0, or
 * INVALID_REPLICA_ASSIGNMENT with the reason written into why[0..why_len). */
int ctl_check_assignment(const struct meta_image *img, const int32_t *replicas, int32_t n,
                         int32_t rf, char *why, size_t why_len);

/* AlterPartitionReassignments (API 45) for one partition, Kafka's KRaft rules (its
 * ReplicationControlManager and PartitionReassignmentReplicas):
 * - A target (n_target >= 0, checked by ctl_check_assignment) starts a reassignment: the
 *   replicas become the target followed by the current replicas it leaves out (those are
 *   `removing`), the target's replicas that are new are `adding`, and the ISR and leader
 *   stay. The current replicas are the partition's replicas as they are, so a second target
 *   given while one is in progress replaces it: a replica the first one was adding and the
 *   second leaves out is removed again, and the original replicas it leaves out stay
 *   removing.
 * - It completes once every replica of the target is in the ISR — in the same decision when
 *   that holds already (a reordering, a replica dropped), else in the AlterPartition or the
 *   periodic look that finds it so (a fencing's, a registration's, a tick's): the replicas
 *   become the target, the removed ones leave the ISR, the leader epoch goes up (a replica
 *   left), and a leader that was removed hands over to the first target replica in the ISR
 *   that is usable. Tally completes only into a partition that keeps a leader; Kafka would
 *   complete into an offline one.
 * - n_target < 0 cancels: the replicas that were being added leave the replicas and the ISR
 *   (the replica order is the reassignment's: Kafka keeps no other), nothing is removing,
 *   and the leader moves if it was one of the added. NO_REASSIGNMENT_IN_PROGRESS when none
 *   is. When the ISR would become empty (only added replicas were in sync) the revert is an
 *   unclean election: refused (INVALID_REPLICA_ASSIGNMENT) unless
 *   unclean.leader.election.enable holds for the topic; then the first usable replica of the
 *   original ones becomes the ISR and leader, RECOVERING (Kafka takes the first one
 *   whatever its state).
 * Returns 0 with the PARTITION_CHANGE in `out` (none when nothing changes: the target is the
 * current assignment), or UNKNOWN_TOPIC_OR_PARTITION, INVALID_REPLICA_ASSIGNMENT (why set),
 * NO_REASSIGNMENT_IN_PROGRESS, INVALID_REQUEST (`out` already changes this partition: one
 * request named it twice), ERR_NOMEM. Records of several calls into one `out` apply as one
 * batch. */
int ctl_sm_reassign(struct ctl_sm *c, const struct meta_image *img, const char *topic,
                    int32_t partition, const int32_t *target, int32_t n_target, struct ctl_out *out,
                    char *why, size_t why_len);

/* Whether a reassignment of the partition is in progress (ListPartitionReassignments lists
 * those: replicas, adding, removing as the image holds them). */
bool ctl_reassigning(const struct meta_partition *p);

/* Replica placement for `n_partitions` new partitions numbered from `first_partition`, `rf`
 * replicas each, over the registered, unfenced brokers that are not shutting down:
 * rack-aware (Kafka's rack-alternating round robin: each partition's replicas spread over
 * as many racks as there are, the first replica — the preferred leader — rotating over the
 * brokers, starting at an offset drawn from `seed`). `out` gets n_partitions * rf broker ids,
 * partition by partition. Returns 0, or INVALID_REPLICATION_FACTOR when rf < 1 or rf is
 * larger than the eligible brokers. */
int ctl_place_replicas(const struct meta_image *img, int32_t n_partitions, int32_t rf,
                       int32_t first_partition, uint32_t seed, int32_t *out);

/* Reading, for tests and DescribeCluster-style answers. */
bool ctl_sm_session_alive(const struct ctl_sm *c, int32_t broker_id, int64_t now_ms);

#endif
