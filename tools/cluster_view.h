/* SPDX-License-Identifier: Apache-2.0 */
/* cluster_view: the pure pieces of the cluster commands (tally_cluster.c, tally_topics.c,
 * tally_partitions.c) — cluster ids, a partition's health, the metadata quorum's lag, what an
 * election's error code means — without I/O or librdkafka, so that the unit tests link them. */
#ifndef TALLY_TOOLS_CLUSTER_VIEW_H
#define TALLY_TOOLS_CLUSTER_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- cluster ids ------------------------------------------------------------------------ */

#define TALLY_CLUSTER_ID_LEN 22

/* The 22-character unpadded base64url form of a 16-byte UUID (Kafka's Uuid.toString) into
 * out (TALLY_CLUSTER_ID_LEN + 1 bytes, NUL-terminated). */
void tally_cluster_id_encode(const uint8_t uuid[16], char out[TALLY_CLUSTER_ID_LEN + 1]);

/* The 16 bytes of such an id: 0, or -1 when s is not exactly the encoding of 16 bytes (wrong
 * length, a character outside A-Z a-z 0-9 - _, or stray bits in the last character). */
int tally_cluster_id_decode(const char *s, uint8_t out[16]);

/* Turns 16 random bytes into a new cluster id, Kafka's way (kafka-storage.sh random-uuid): a
 * version-4 UUID, encoded as above. Returns false (the caller draws again) for an id Kafka
 * never hands out: all zeros, or one starting with '-' (a command line would read it as an
 * option). */
bool tally_cluster_id_from_random(const uint8_t random[16], char out[TALLY_CLUSTER_ID_LEN + 1]);

/* A new cluster id from getrandom(2). 0, or -1 when the system has no randomness to give. */
int tally_cluster_id_new(char out[TALLY_CLUSTER_ID_LEN + 1]);

/* ---- partitions ------------------------------------------------------------------------- */

enum {
    TALLY_PART_UNDER_REPLICATED = 1, /* fewer in-sync replicas than replicas */
    TALLY_PART_OFFLINE = 2,          /* no leader, or a leader that is not a live broker */
};

/* The health of one partition as kafka-topics.sh judges it: `live` lists the brokers
 * Metadata lists (the unfenced ones). Returns TALLY_PART_* flags, 0 when healthy. */
unsigned tally_partition_flags(int32_t leader, int32_t n_replicas, int32_t n_isr,
                               const int32_t *live, int32_t n_live);

/* "ok", "under-replicated", "offline" or "offline,under-replicated". */
const char *tally_partition_status(unsigned flags);

/* ---- the metadata quorum ---------------------------------------------------------------- */

/* How many entries a member's log is behind the leader's: leader_end - end, or -1 when either
 * position is unknown (-1). Never negative otherwise. */
int64_t tally_quorum_lag(int64_t leader_end, int64_t end);

/* A DescribeQuorum timestamp for humans, relative to now_ms: "-" when unknown (< 0), else
 * "N ms ago" (0 for one from the future, another clock's). */
void tally_format_ago(int64_t now_ms, int64_t ts_ms, char *buf, size_t cap);

/* ---- elections -------------------------------------------------------------------------- */

enum tally_elect_outcome {
    TALLY_ELECTED,             /* error 0: the partition has the leader asked for */
    TALLY_ELECTION_NOT_NEEDED, /* ELECTION_NOT_NEEDED: a valid leader leads already */
    TALLY_ELECTION_FAILED,     /* anything else */
};

/* What one partition's ElectLeaders result code means for the command's exit status: only
 * TALLY_ELECTION_FAILED fails it (kafka-leader-election.sh reports "valid replica already
 * elected" without failing). */
enum tally_elect_outcome tally_elect_outcome(int16_t error_code);

#endif
