/* SPDX-License-Identifier: Apache-2.0 */
/* admin: the cluster-administration and metadata APIs — Metadata, CreateTopics,
 * DeleteTopics, CreatePartitions, DescribeConfigs, AlterConfigs, IncrementalAlterConfigs,
 * DescribeCluster — answered from,
 * and written through, the metadata image (meta/); and DescribeQuorum, answered from the
 * metadata quorum's own state. */
#ifndef TALLY_ADMIN_H
#define TALLY_ADMIN_H

#include <stddef.h>
#include <stdint.h>

struct meta;
struct net_request;
struct props;

struct admin;

struct admin_options {
    int32_t node_id;
    int32_t n_voters; /* controller.quorum.voters: caps internal topics' replication factor */
    /* The broker's static configuration (file + --set), used for defaults and for
     * DescribeConfigs of the broker; borrowed, must outlive the admin. */
    const struct props *config;
};

/* A new admin bound to `m` (borrowed). NULL on out of memory. */
struct admin *admin_new(struct meta *m, const struct admin_options *opts);
void admin_free(struct admin *a);

/* Request handlers: each finishes `req` exactly once (now or after a metadata proposal
 * applies). The request's API must match the handler. */
void admin_metadata(struct admin *a, struct net_request *req);
void admin_create_topics(struct admin *a, struct net_request *req);
void admin_delete_topics(struct admin *a, struct net_request *req);
void admin_create_partitions(struct admin *a, struct net_request *req);
void admin_describe_configs(struct admin *a, struct net_request *req);
void admin_alter_configs(struct admin *a, struct net_request *req);
void admin_incremental_alter_configs(struct admin *a, struct net_request *req);
void admin_describe_cluster(struct admin *a, struct net_request *req);
void admin_describe_quorum(struct admin *a, struct net_request *req);

/* Creates an internal topic (a coordinator's: __consumer_offsets, __transaction_state) unless
 * it exists: `partitions`, replication factor capped at the live brokers (one WARN line
 * when capped), configs as parallel key/value arrays (copied). Returns 0 when the topic exists
 * or its creation was proposed (it appears in the image once applied; a failed proposal is
 * logged), ERR_NOT_CONTROLLER on a node that is not the active controller,
 * ERR_COORDINATOR_NOT_AVAILABLE with no live broker, ERR_INVALID_REQUEST or ERR_NOMEM. The
 * shape of group.h's group_ensure_topic_fn, with the admin as its argument. */
int admin_ensure_internal_topic(struct admin *a, const char *name, int32_t partitions,
                                int16_t replication_factor, int32_t n_configs,
                                const char *const *keys, const char *const *values);

/* Checks a static broker configuration's topic-default and broker keys (types, ranges).
 * Returns 0, or ERR_INVALID_CONFIG with a message in err (size errlen). */
int admin_check_config(const struct props *config, char *err, size_t errlen);

#endif
