/* SPDX-License-Identifier: Apache-2.0 */
/* throttle: Kafka's replication quotas (ReplicationQuotaManager, KIP-73) as pure pieces — a
 * byte-rate meter over a short sliding window, the throttled-replicas lists of the topic
 * configs, and the decision how much of a partition one replication Fetch may carry. No
 * clock of its own: every call is told the time (monotonic ms). partition.c keeps one meter
 * per direction for the broker (leader.replication.throttled.rate for what a leader sends,
 * follower.replication.throttled.rate for what a follower fetches) and reads the lists.
 *
 * Rules, Kafka's unless said:
 * - A partition is throttled on a broker when the topic's leader.replication.throttled.replicas
 *   (as its leader) or follower.replication.throttled.replicas (as a follower) names it on that
 *   broker ("partition:broker", or "*" for every replica).
 * - Every byte of a throttled partition that the broker sends (as leader) or fetches (as
 *   follower) counts toward that direction's rate, in-sync replicas' traffic included, so that
 *   the whole replication traffic of throttled partitions stays under the rate.
 * - Only a replica out of the ISR is ever held back: an in-sync replica is never throttled (it
 *   would fall out of the ISR and stall acks=all producers).
 * - Tally's own refinements: Kafka lets a whole fetch through while the measured rate is below
 *   the quota; Tally lets through only what the meter still allows (at least one batch,
 *   KIP-74), so one fetch of replica.fetch.max.bytes cannot overshoot a small quota, and the
 *   allowance is bounded over the last fifth of a second too, so that it comes in small steps
 *   (Kafka measures over 11 s and lets whole fetches through: seconds of bursts and stalls).
 *
 * Threading: one loop; nothing here is thread-safe. */
#ifndef TALLY_REPLICA_THROTTLE_H
#define TALLY_REPLICA_THROTTLE_H

#include <stdbool.h>
#include <stdint.h>

/* The meter's window: THROTTLE_SLOTS slots of THROTTLE_SLOT_MS (1 s), sliding by slot; and
 * its last THROTTLE_BURST_MS, which bounds how much passes at once. */
#define THROTTLE_SLOTS 10
#define THROTTLE_SLOT_MS 100
#define THROTTLE_WINDOW_MS (THROTTLE_SLOTS * THROTTLE_SLOT_MS)
#define THROTTLE_BURST_MS (2 * THROTTLE_SLOT_MS)

struct throttle_meter {
    int64_t slot_start[THROTTLE_SLOTS]; /* the slot's first ms (a multiple of the slot), -1 */
    int64_t bytes[THROTTLE_SLOTS];
};

void throttle_meter_init(struct throttle_meter *m);
/* `bytes` (>= 0) passed at now_ms. Time never runs backwards for a meter (monotonic ms). */
void throttle_record(struct throttle_meter *m, int64_t now_ms, int64_t bytes);
/* The bytes recorded within the window that ends at now_ms (its THROTTLE_SLOTS slots). */
int64_t throttle_window_bytes(const struct throttle_meter *m, int64_t now_ms);
/* What may still pass at now_ms under `rate` bytes/s: the smaller of the rate over the window
 * less what the window holds and the rate over THROTTLE_BURST_MS less what its last
 * THROTTLE_BURST_MS hold, so that a quiet second is not spent in one burst (<= 0: the quota is
 * exceeded); INT64_MAX when the rate is unlimited (negative, or so large that the window's
 * allowance overflows: Kafka's default Long.MAX_VALUE). */
int64_t throttle_headroom(const struct throttle_meter *m, int64_t now_ms, int64_t rate);

/* Whether a throttled-replicas config value names `partition` on `broker`: "*" names every
 * replica, else comma-separated partition:broker pairs, blanks around items allowed (the form
 * config/check.c accepts). NULL or "" names none; a malformed item names nothing. */
bool throttle_listed(const char *list, int32_t partition, int32_t broker);

/* The bytes one replication Fetch may carry for a partition, out of `budget`: all of it when
 * the partition is not throttled here (`listed` false) or the replica is in sync; else what the
 * meter's `headroom` leaves after `claimed` (bytes the throttled partitions before it in the
 * same request or answer took), never below 0 (0: none this time). */
int64_t throttle_budget(bool listed, bool in_sync, int64_t headroom, int64_t claimed,
                        int64_t budget);

#endif
