/* SPDX-License-Identifier: Apache-2.0 */
/* reassign_plan: the pure pieces of `tally partitions reassign` (tally_reassign.c), in the
 * manner of kafka-reassign-partitions.sh — its JSON files read and written, the plan --generate
 * proposes, the throttled-replicas lists --execute sets — without I/O or librdkafka, so that
 * the unit tests link them.
 *
 * The files, Kafka's formats (version 1):
 *   reassignment:     {"version":1,"partitions":[{"topic":"t","partition":0,
 *                      "replicas":[2,3,4],"log_dirs":["any","any","any"]}, ...]}
 *   topics to move:   {"version":1,"topics":[{"topic":"t"}, ...]}
 * Unknown keys are ignored, as Kafka's reader does; "log_dirs" may be left out. */
#ifndef TALLY_TOOLS_REASSIGN_PLAN_H
#define TALLY_TOOLS_REASSIGN_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define RP_MAX_REPLICAS 64

/* One partition and a list of brokers (a target, a current assignment, or throttle sources). */
struct rp_move {
    char *topic; /* owned by the plan */
    int32_t partition;
    int32_t n_replicas;
    int32_t replicas[RP_MAX_REPLICAS];
};

struct rp_plan {
    struct rp_move *moves;
    size_t n, cap;
};

void rp_plan_free(struct rp_plan *p);
/* Appends a copy (at most RP_MAX_REPLICAS replicas). 0, or -1 when out of memory or too many
 * replicas. */
int rp_plan_add(struct rp_plan *p, const char *topic, int32_t partition, const int32_t *replicas,
                int32_t n_replicas);
/* By topic, then partition (Kafka's order for everything it prints). */
void rp_plan_sort(struct rp_plan *p);
/* The move of topic-partition, or NULL. */
const struct rp_move *rp_plan_find(const struct rp_plan *p, const char *topic, int32_t partition);

/* Reads a reassignment file as Kafka's parsePartitionReassignmentData and checks it as its
 * parseExecuteAssignmentArgs: at least one partition, none twice, every replica list non-empty
 * and without a broker twice, "log_dirs" (if given) as long as "replicas" and "any" throughout
 * (Tally keeps one log directory per broker: moves between directories are refused). 0 with
 * *out filled (sorted), or -1 with the reason in err. */
int rp_parse_reassignment(const char *json, struct rp_plan *out, char *err, size_t errlen);

/* Reads a topics-to-move file: 0 with *topics (malloc()ed strings, *n of them, none twice),
 * or -1 with the reason in err. rp_free_topics frees them. */
int rp_parse_topics(const char *json, char ***topics, size_t *n, char *err, size_t errlen);
void rp_free_topics(char **topics, size_t n);

/* Writes the plan as Kafka's formatAsReassignmentJson does: one line, sorted, "log_dirs" all
 * "any", no newline at the end. */
void rp_print_json(FILE *f, const struct rp_plan *p);

/* --generate's placement of one topic, Kafka's rack-unaware assignReplicasToBrokers: the
 * brokers in id order, partition i's first replica the (i + start)th of them, the others
 * following at a shift that grows by one every round of partitions. Kafka draws `start` (and
 * the first shift) at random; Tally takes both from `start`, so that a plan can be generated
 * again. `out` gets n_partitions * rf ids, partition by partition. 0, or -1 when rf < 1 or rf
 * is larger than the number of brokers. */
int rp_assign(const int32_t *brokers, int32_t n_brokers, int32_t n_partitions, int32_t rf,
              uint32_t start, int32_t *out);

/* --execute's throttles, as Kafka's calculateLeaderThrottles / calculateFollowerThrottles:
 * `sources` lists each moving partition's source replicas (its current replicas, or, when a
 * reassignment of it is in progress, its replicas less those being added), `targets` its
 * destinations' superset (the target asked for, or the replicas being added). For every topic
 * of `sources`: leader = "partition:broker" for each source, follower = "partition:broker" for
 * each target broker that is not a source, each sorted as strings and comma-separated (""
 * when none). */
struct rp_throttle {
    char *topic, *leader, *follower; /* malloc()ed */
};
int rp_throttles(const struct rp_plan *sources, const struct rp_plan *targets,
                 struct rp_throttle **out, size_t *n);
void rp_throttles_free(struct rp_throttle *t, size_t n);
/* The brokers a reassignment involves (every source and target), ascending, without
 * repeats, into out (room for every replica of both plans); returns the count. */
size_t rp_brokers(const struct rp_plan *sources, const struct rp_plan *targets, int32_t *out);

#endif
