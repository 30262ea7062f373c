/* SPDX-License-Identifier: Apache-2.0 */
/* admin internals shared by the handler files. */
#ifndef TALLY_ADMIN_INT_H
#define TALLY_ADMIN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "admin.h"
#include "base/slog.h"
#include "config/config.h"

struct arena;
struct meta;
struct meta_record;
struct fwd;
struct cq_table;
struct cq_bucket;
struct net_request;

struct admin {
    struct meta *meta;
    int32_t node_id;
    int32_t n_voters;                /* the metadata quorum's voters (internal topics' RF cap) */
    struct slog_limit internal_warn; /* internal topic RF capped */
    struct slog_limit internal_wait; /* internal topic waits for brokers */
    const struct props *config;
    struct config_ctx cfg; /* meta + static config + node id, for config look-ups */
    /* Metadata requests naming topics that may not be auto-created: any client can repeat
     * them, so the line saying so is rate-limited. */
    struct slog_limit refused_auto_create;
    /* Forwarding (forward.c). */
    struct net_client *client;
    struct tclock *clock;
    int64_t forward_timeout_ms;
    struct fwd *forwards;   /* live forwards, newest first */
    int32_t n_own_forwards; /* of which this broker's own creations */
    bool stopping;          /* admin_stop was called */
    struct slog_limit forward_warn;
    /* Controller mutation quotas (mutation_quota.c): a token bucket per client. */
    struct cq_table *mutations;
};

/* ---- mutation_quota.c: controller_mutation_rate (KIP-599) -------------------------------- */

/* One request's view of its client's mutation bucket. */
struct admin_mutation {
    struct cq_bucket *bucket; /* NULL: no quota applies (nothing is refused or throttled) */
    double rate, burst;
    bool strict;         /* the request's version is answered THROTTLING_QUOTA_EXCEEDED */
    int64_t throttle_ms; /* what the answer is to carry so far */
};
/* admin_new's part: the buckets' table, of controller.quota.window.num samples of
 * controller.quota.window.size.seconds. Returns 0 or -1 (out of memory). */
int admin_mutation_setup(struct admin *a);
/* Fills *m for `req` (its principal and client id), strict from version `strict_since`. The
 * bucket stays valid for the request's life (an entry used now is kept for an hour). */
void admin_mutation_begin(struct admin *a, struct net_request *req, int16_t strict_since,
                          struct admin_mutation *m);
/* Before mutating `partitions` partitions: 0 (taken from the bucket; the mutation must then
 * be proposed), or ERR_THROTTLING_QUOTA_EXCEEDED (strict and over: refuse the topic, nothing
 * taken). */
int admin_mutation_take(struct admin *a, struct admin_mutation *m, int32_t partitions);
/* When answering: the ThrottleTimeMs the mutations earned (0 without), after muting the
 * connection for as long. */
int32_t admin_mutation_end(struct net_request *req, const struct admin_mutation *m);

/* A config resource's permission for `op` (DESCRIBE_CONFIGS or ALTER_CONFIGS): a topic's is
 * on the topic (else TOPIC_AUTHORIZATION_FAILED), a broker's on the cluster (else
 * CLUSTER_AUTHORIZATION_FAILED), as Kafka checks them. 0 when allowed (or another type, which
 * the handler refuses itself). */
int16_t admin_config_authz(struct net_request *req, int8_t rtype, const char *rname, int8_t op);

/* The answer of a DescribeAcls, CreateAcls or DeleteAcls request (req's API) with `err` and
 * `msg` (copied; NULL for none) in every item (and at the top for DescribeAcls), in req's
 * arena; NULL when out of memory or for another API. */
void *admin_acls_error(struct net_request *req, int16_t err, const char *msg);

/* The end of a controller-side alter whose answer `rs` (of req's API) is filled in: with no
 * records (n 0) responds `rs` at once; else proposes `batch` (borrowed until this returns)
 * and leaves the answer to `applied(arg, err)`, which is also called, with the refusal, when
 * meta_propose refuses the batch at once. */
void admin_propose_or_respond(struct admin *a, struct net_request *req, void *rs,
                              const struct meta_record *batch, size_t n,
                              void (*applied)(void *arg, int err), void *arg);

/* Topic names: [a-zA-Z0-9._-]{1,249}, not "." or "..". */
bool topic_name_valid(const char *name, const char **why);

/* The names of the topics the broker keeps for itself. The metadata log lives in
 * <metadata.log.dir>/__cluster_metadata-0, which is exactly where a topic of that name would
 * keep partition 0, so no client may create it (Kafka answers INVALID_REQUEST). The
 * coordinators' topics will be created by the broker; Kafka lets a client create them too,
 * and so does Tally, but Metadata never auto-creates them with the ordinary defaults. */
#define TOPIC_CLUSTER_METADATA "__cluster_metadata"
#define TOPIC_CONSUMER_OFFSETS "__consumer_offsets"
#define TOPIC_TRANSACTION_STATE "__transaction_state"

/* Kafka's internal topics (Metadata's IsInternal): the two coordinators' topics. */
bool topic_is_internal(const char *name);

/* The most partitions one topic may have, whether created or grown: Kafka's limit on the
 * partitions one request may create. More is refused with INVALID_PARTITIONS before any
 * memory is spent on it. */
#define TOPIC_PARTITIONS_MAX 10000

/* Whether a client may create a topic called `name` (CreateTopics, Metadata auto-creation).
 * Returns 0, or with *why set (in `ar` when it names another topic):
 * INVALID_TOPIC_EXCEPTION for a name topic_name_valid refuses, or one that collides with an
 * existing topic or an internal name once '.' and '_' are taken as equal (metric names
 * cannot tell them apart; a name never collides with itself); INVALID_REQUEST for
 * __cluster_metadata; ERR_NOMEM. An existing topic of exactly that name is not checked
 * here (TOPIC_ALREADY_EXISTS is the caller's). */
int topic_name_creatable(const struct admin *a, struct arena *ar, const char *name,
                         const char **why);

/* Integer broker settings with a default (num.partitions, ...). */
int64_t admin_config_int(const struct admin *a, const char *key, int64_t def);
/* One WARN line (rate limited) when a CF_DEPRECATED config is set on `resource`. */
void admin_warn_deprecated(const struct config_def *d, const char *resource);
bool admin_config_bool(const struct admin *a, const char *key, bool def);

/* Unfenced brokers, ascending id, allocated in `ar`; *n gets the count. */
int32_t *live_broker_ids(const struct admin *a, struct arena *ar, int32_t *n);

/* Fills a random (version 4) UUID that is not all zero. */
void uuid_random(uint8_t id[16]);

/* forward.c: admin_new's part (the options' client, clock and timeout), and admin_free's
 * (every forward still held: only once the outbound client has stopped). */
void admin_forward_setup(struct admin *a, const struct admin_options *opts);
void admin_forward_free_all(struct admin *a);
/* Whether a client's `key` is one of the APIs a broker forwards to the controller (and so one an
 * envelope may carry). */
bool admin_api_forwarded(int16_t key);

/* A broker's own CreateTopics, sent to the controller and forgotten (Kafka's
 * AutoTopicCreationManager): one topic, `partitions` and `replication_factor` as given (-1:
 * the controller's defaults), configs copied. At most one per topic is out at a time: a
 * second call while one is returns 0 too. The caller answers its own client meanwhile; the
 * topic appears in the image once created, and a refusal is logged (rate-limited). Returns 0,
 * ERR_NOT_CONTROLLER (no client, or stopping) or ERR_NOMEM (including too many out). */
int admin_forward_create(struct admin *a, const char *name, int32_t partitions,
                         int16_t replication_factor, int32_t n_configs, const char *const *keys,
                         const char *const *values);

/* Shared by CreateTopics and Metadata auto-creation: builds the records of a new topic
 * (TOPIC, PARTITION × n, CONFIG × n_configs) in `ar`; replicas are placed by the
 * controller's rack-aware placement (ctl_place_replicas over the unfenced brokers that are
 * not shutting down, starting at a place drawn from the topic's name). Returns 0 with *out /
 * *n_out, INVALID_REPLICATION_FACTOR, INVALID_PARTITIONS or ERR_NOMEM. */
struct topic_spec {
    const char *name;
    int32_t partitions, replication_factor;
    int32_t n_configs;
    const char *const *config_keys, *const *config_values;
    const uint8_t *id; /* NULL = a fresh random id */
    /* Explicit replica lists, one per partition (NULL = ctl_place_replicas). */
    const int32_t *const *replicas;
    const int32_t *n_replicas;
};
int topic_records(const struct admin *a, const struct topic_spec *spec, struct arena *ar,
                  struct meta_record **out, size_t *n_out);
/* The placement seed of a topic (from its name: partitions added later continue the same
 * rotation of preferred leaders). */
uint32_t topic_placement_seed(const char *name);

#endif
