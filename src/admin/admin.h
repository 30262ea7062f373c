/* SPDX-License-Identifier: Apache-2.0 */
/* admin: the cluster-administration and metadata APIs — Metadata, CreateTopics,
 * DeleteTopics, CreatePartitions, DescribeConfigs, AlterConfigs, IncrementalAlterConfigs,
 * DescribeCluster — answered from,
 * and written through, the metadata image (meta/); DescribeQuorum, answered from the metadata
 * quorum's own state; and forwarding (forward.c): on a broker that is not the active
 * controller, what only the controller may decide goes there. */
#ifndef TALLY_ADMIN_H
#define TALLY_ADMIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct arena;
struct meta;
struct net_client;
struct net_request;
struct props;
struct proto_api;
struct proto_bytes;
struct tclock;
struct EnvelopeRequest;
struct EnvelopeResponse;

struct admin;

struct admin_options {
    int32_t node_id;
    int32_t n_voters; /* controller.quorum.voters: caps internal topics' replication factor */
    /* The broker's static configuration (file + --set), used for defaults and for
     * DescribeConfigs of the broker; borrowed, must outlive the admin. */
    const struct props *config;
    /* Forwarding to the active controller: the shared outbound client (borrowed, must
     * outlive the admin's use of it: see admin_stop) and the clock of its deadlines and of
     * the controller mutation quotas. NULL client: nothing is forwarded (a non-controller
     * answers NOT_CONTROLLER); NULL clock: no mutation quota either. */
    struct net_client *client;
    struct tclock *clock;
    /* request.timeout.ms: the longest a forwarded request waits for the controller, retries
     * included (0: 30000). */
    int64_t forward_timeout_ms;
};

/* Every broker's own outbound client sends this ClientId prefix, followed by its node id
 * ("tally-broker-2"); a request carrying it is never forwarded again (forward.c). */
#define ADMIN_BROKER_CLIENT_ID_PREFIX "tally-broker-"

/* A new admin bound to `m` (borrowed). NULL on out of memory. */
struct admin *admin_new(struct meta *m, const struct admin_options *opts);
/* Stops forwarding: every forwarded request still unanswered is answered NOT_CONTROLLER
 * (its client looks for another broker; the listener is closing), no retry is made any
 * more, and from now on nothing is forwarded. Call it before the outbound client stops; forwards
 * the client still holds are freed when it fails them (net_client_stop). */
void admin_stop(struct admin *a);
/* Frees the admin; call after the outbound client stopped. NULL is ignored. */
void admin_free(struct admin *a);

/* Forwarding (Kafka's ForwardingManager, with KIP-590's envelope). When this node is not
 * the active controller and `req` is CreateTopics, DeleteTopics, CreatePartitions,
 * AlterConfigs, IncrementalAlterConfigs, ElectLeaders, AlterPartitionReassignments or
 * ListPartitionReassignments from a client, sends the request, at its own version, wrapped in
 * an Envelope with its principal and address, to the controller (NET_CLIENT_CONTROLLER) and
 * returns true:
 * `req` is then finished with the controller's answer, or — once the request's own timeout
 * (at most forward_timeout_ms) has passed without one, NOT_CONTROLLER answers and lost
 * connections retried until then — with REQUEST_TIMED_OUT in every item. Returns false,
 * leaving `req` to the caller's handler, on the controller, for any other API, without a
 * client, once stopped, and for a request another broker forwarded here (ClientId
 * ADMIN_BROKER_CLIENT_ID_PREFIX...): that one is answered here, NOT_CONTROLLER, so that two
 * brokers that take each other for the controller cannot bounce it. With an authorizer, a
 * request with an item its principal may not do (the handler's own check) is not forwarded
 * either: the handler answers it here. A request whose peer or principal an envelope cannot
 * carry is not forwarded (its handler answers NOT_CONTROLLER). CreateAcls, DeleteAcls,
 * AlterUserScramCredentials and AlterClientQuotas are forwarded too. */
bool admin_forward(struct admin *a, struct net_request *req);

/* ---- KIP-590's Envelope (envelope.c) ------------------------------------------------------ */

/* Runs a request unwrapped from an envelope through the handler of its API (dispatch's table);
 * the handler finishes it. */
typedef void (*admin_envelope_run_fn)(void *ctx, struct net_request *inner);

/* The controller's Envelope handler: refuses it (answered with the envelope's ErrorCode and no
 * ResponseData) without CLUSTER_ACTION on the cluster (CLUSTER_AUTHORIZATION_FAILED), on a
 * node that is not the active controller (NOT_CONTROLLER), for a principal that does not
 * decode (PRINCIPAL_DESERIALIZATION_FAILURE), or for a client address, inner header or body
 * that does not, or an API that is not forwarded (INVALID_REQUEST). Else makes the inner
 * request (a detached request with the client's header, principal and address) and hands it
 * to run(ctx, inner); its answer becomes the envelope's ResponseData. */
void admin_envelope(struct admin *a, struct net_request *req, admin_envelope_run_fn run, void *ctx);

/* "Type:Name" (e.g. "User:alice") as a version-prefixed DefaultPrincipalData v0 into *out
 * (allocated in `ar`). Returns 0, ERR_PARSE (no ':') or ERR_NOMEM. */
int admin_envelope_principal_encode(const char *principal, struct arena *ar,
                                    struct proto_bytes *out);
/* The reverse, into out[0..cap) as "Type:Name". Returns 0, ERR_PARSE (null, malformed, an
 * unknown version, an empty type or one that would not fit) or ERR_NOMEM. */
int admin_envelope_principal_decode(const struct proto_bytes *in, struct arena *ar, char *out,
                                    size_t cap);
/* The IP address of a peer "ip:port" ("[v6]:port" too) as its 4 or 16 bytes. Returns 0 with
 * *len, or ERR_PARSE. */
int admin_envelope_host_encode(const char *peer, uint8_t out[16], int32_t *len);
/* The EnvelopeRequest of a client's request: its header (ClientId, correlation id) and body
 * re-encoded at its version, its session's principal and its peer's address, all in `ar`.
 * Returns 0, ERR_PARSE (a principal or peer that does not encode) or ERR_NOMEM. */
int admin_envelope_wrap(const struct net_request *req, struct arena *ar,
                        struct EnvelopeRequest *out);
/* Decodes an EnvelopeResponse's ResponseData as the answer of `api` at `version` into a new
 * struct in `ar`. Returns 0 with *out, or ERR_PARSE (null or malformed data), ERR_NOMEM. */
int admin_envelope_unwrap_response(const struct proto_api *api, int16_t version,
                                   const struct EnvelopeResponse *rs, struct arena *ar, void **out);

/* Request handlers: each finishes `req` exactly once (now or after a metadata proposal
 * applies). The request's API must match the handler. */
void admin_metadata(struct admin *a, struct net_request *req);
/* DescribeAcls, CreateAcls, DeleteAcls (acls.c): SECURITY_DISABLED without an authorizer. */
void admin_describe_acls(struct admin *a, struct net_request *req);
void admin_create_acls(struct admin *a, struct net_request *req);
void admin_delete_acls(struct admin *a, struct net_request *req);
void admin_create_topics(struct admin *a, struct net_request *req);
void admin_delete_topics(struct admin *a, struct net_request *req);
void admin_create_partitions(struct admin *a, struct net_request *req);
void admin_describe_configs(struct admin *a, struct net_request *req);
void admin_alter_configs(struct admin *a, struct net_request *req);
void admin_incremental_alter_configs(struct admin *a, struct net_request *req);
void admin_describe_cluster(struct admin *a, struct net_request *req);
/* KIP-554 (scram_credentials.c): DescribeUserScramCredentials answers from the image (the
 * mechanisms and iteration counts, never a key); AlterUserScramCredentials turns each salted
 * password into its StoredKey and ServerKey and proposes them as SCRAM records (on the
 * controller: forwarded there). Per-user errors as Kafka's: UNACCEPTABLE_CREDENTIAL (empty
 * name, iterations outside 4096..16384, a bad salt or salted password),
 * UNSUPPORTED_SASL_MECHANISM, DUPLICATE_RESOURCE (a user twice in one request),
 * RESOURCE_NOT_FOUND (deleting or describing a credential that does not exist). */
void admin_describe_user_scram_credentials(struct admin *a, struct net_request *req);
void admin_alter_user_scram_credentials(struct admin *a, struct net_request *req);
/* KIP-546 (client_quotas.c): DescribeClientQuotas answers from the image with Kafka's filters
 * (match exact / default / any per entity type, strict); AlterClientQuotas proposes each
 * entry's ops as CLIENT_QUOTA records (on the controller: forwarded there), an entry with an
 * unknown entity type or key, a key twice or a value <= 0 failing whole with
 * INVALID_REQUEST. DESCRIBE_CONFIGS / ALTER_CONFIGS on the cluster, as Kafka checks. */
void admin_describe_client_quotas(struct admin *a, struct net_request *req);
void admin_alter_client_quotas(struct admin *a, struct net_request *req);
void admin_describe_quorum(struct admin *a, struct net_request *req);

/* Creates an internal topic (a coordinator's: __consumer_offsets, __transaction_state) unless
 * it exists: `partitions`, replication factor capped at the quorum's voters (one WARN line
 * when capped), min.insync.replicas capped at that, configs as parallel key/value arrays
 * (copied). Returns 0 when the topic exists or its creation was proposed — on the active
 * controller — or sent to the controller as a CreateTopics — elsewhere; it appears in the
 * image once applied, and a refusal is logged —, ERR_COORDINATOR_NOT_AVAILABLE while fewer
 * brokers than the replication factor are unfenced (as this node's image sees them),
 * ERR_NOT_CONTROLLER on a non-controller that cannot forward (no client, stopping),
 * ERR_INVALID_REQUEST or ERR_NOMEM. The shape of group.h's group_ensure_topic_fn, with the
 * admin as its argument. */
int admin_ensure_internal_topic(struct admin *a, const char *name, int32_t partitions,
                                int16_t replication_factor, int32_t n_configs,
                                const char *const *keys, const char *const *values);

/* Checks a static broker configuration's topic-default and broker keys (types, ranges).
 * Returns 0, or ERR_INVALID_CONFIG with a message in err (size errlen). */
int admin_check_config(const struct props *config, char *err, size_t errlen);

#endif
