/* SPDX-License-Identifier: Apache-2.0 */
/* tallyd's top: the parsed server configuration and the request dispatcher that routes each
 * API to its module. Only main.c, dispatch.c and server_config.c include this. */
#ifndef TALLY_SERVER_H
#define TALLY_SERVER_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "base/slog.h"
#include "meta/meta.h"
#include "sasl/sasl.h"

struct admin;
struct metrics;
struct metrics_family;
struct net_request;
struct props;
struct tclock;
struct tls_ctx;

#define SERVER_MAX_VOTERS 16
#define SERVER_MAX_LISTENERS 8

/* Kafka's security protocol numbers (BrokerRegistration's SecurityProtocol). */
#define SERVER_PLAINTEXT 0
#define SERVER_SSL 1
#define SERVER_SASL_PLAINTEXT 2
#define SERVER_SASL_SSL 3

/* One Kafka listener of `listeners` (the CONTROLLER one, raft's, is not among them). */
struct server_listener {
    char name[64]; /* as written in listeners, e.g. "PLAINTEXT", "SASL_PLAINTEXT" */
    char host[128];
    int port;
    char adv_host[128]; /* its entry in advertised.listeners, else host:port */
    int adv_port;
    int16_t security_protocol; /* SERVER_PLAINTEXT, _SSL, _SASL_PLAINTEXT or _SASL_SSL */
    struct sasl_config sasl;   /* SASL_PLAINTEXT, SASL_SSL: mechanisms and PLAIN users */
    /* SSL, SASL_SSL: the TLS context built from the listener's ssl.* settings (net/tls.h),
     * for the process's lifetime; NULL on a plaintext listener. */
    struct tls_ctx *tls;
};

struct server_config {
    struct props *props; /* everything, after defaults, file and --set */
    int32_t node_id;
    /* The Kafka listeners, the inter-broker one first (it is the first listener registered,
     * and the address other brokers use); host, port, adv_host and adv_port repeat its. */
    size_t n_listeners;
    struct server_listener listeners[SERVER_MAX_LISTENERS];
    char host[128]; /* the inter-broker listener (inter.broker.listener.name) */
    int port;
    char adv_host[128]; /* its advertised address (= listener unless set) */
    int adv_port;
    int64_t auth_failure_delay_ms; /* connection.failed.authentication.delay.ms */
    /* The broker's client side of the inter-broker listener (listeners[0]), for every
     * outbound connection (net_client_options): SSL / SASL_SSL: a client TLS context from
     * the listener's own ssl.* settings (its truststore verifies the peer, its keystore is
     * presented when the peer asks), else NULL. SASL_PLAINTEXT / SASL_SSL: the mechanism of
     * sasl.mechanism.inter.broker.protocol (PLAIN, SCRAM-SHA-256/512) and the login of the
     * listener's listener.name.<l>.<mechanism>.sasl.jaas.config (username, password), else
     * ib_sasl_mech "". */
    struct tls_ctx *ib_tls;
    bool ib_verify_host; /* ssl.endpoint.identification.algorithm=https (Kafka's default) */
    char ib_sasl_mech[32];
    char ib_sasl_user[SASL_MAX_NAME + 1], ib_sasl_pass[SASL_MAX_NAME + 1];
    char controller[160]; /* CONTROLLER listener host:port (raft) */
    size_t n_voters;
    struct meta_voter voters[SERVER_MAX_VOTERS];
    char log_dir[PATH_MAX];       /* first entry of log.dirs */
    char meta_parent[PATH_MAX];   /* metadata.log.dir, else log_dir */
    char meta_dir[PATH_MAX + 32]; /* meta_parent/__cluster_metadata-0: the raft log */
    char cluster_id[64];          /* cluster.id if configured, else "" */
    size_t max_frame;             /* socket.request.max.bytes */
    /* socket.connection.setup.timeout.ms / .max.ms: the broker's own connections */
    int64_t connect_timeout_ms, connect_timeout_max_ms;
    bool broker_only;   /* process.roles=broker: a standby of the quorum */
    uint8_t dir_id[16]; /* the log dir's directory.id (meta.properties) */
    int lock_fds[2];    /* flock()ed .lock files of log_dir and meta_parent */
};

/* Builds the configuration from the embedded defaults, then --config FILE, then each
 * --set key=value in argv order. Returns 0, or 2 after printing a one-line reason (bad
 * argument, unreadable file, invalid value). --help prints usage and returns 1. */
int server_config_parse(int argc, char **argv, struct server_config *cfg);
void server_config_free(struct server_config *cfg);

/* A dynamic config look-up (the broker's AlterConfigs values): the value of `key`, or NULL. */
typedef const char *(*server_dynamic_fn)(void *arg, const char *key);
/* Builds SSL / SASL_SSL listener l's TLS context from its ssl.* settings: `dyn`'s
 * listener.name.<l>.<key> values first (NULL: none), then the static configuration's
 * listener.name.<l>.<key>, then <key>. Returns 0 and *out (the caller's reference), or -1
 * with a sentence in why naming the key. */
int server_tls_ctx_build(const struct props *p, const struct server_listener *l,
                         server_dynamic_fn dyn, void *dyn_arg, struct tls_ctx **out, char *why,
                         size_t why_len);

/* Checks or creates <log.dir>/meta.properties: node.id must match, cluster.id (if
 * configured) must match; on first start a cluster id is generated. Fills cluster_id.
 * A directory without meta.properties that already holds partitions or a metadata log is
 * refused rather than formatted as a new cluster. Before anything is read or written, takes
 * an exclusive lock (flock) on <dir>/.lock of the log dir and the metadata dir, held until
 * server_config_free, so a second tallyd on the same data is refused.
 * Returns 0, or 1 after logging why the directory is refused. */
int server_format_dir(struct server_config *cfg);

/* Checks made before the metadata quorum starts: every listener's port is free, the
 * metadata dir's file system has room for the quorum's log segments, and a data dir holding
 * partition directories has a metadata log (missing or empty metadata would start an empty
 * cluster). Returns 0, or 1 after logging why start-up is refused. */
int server_check_start(const struct server_config *cfg);

/* Counts the partition directories ("<topic>-<number>") in cfg->log_dir; the metadata log's
 * directories and directories renamed away (…-delete, …-stray) do not count. */
size_t server_count_partition_dirs(const struct server_config *cfg);

struct broker;
struct exporter;
struct group_coord;
struct txn;
struct controller;

struct dispatch {
    struct admin *admin;
    struct broker *broker;
    struct group_coord *group;
    struct txn *txn;
    struct controller *controller; /* NULL on a broker-only node */
    struct exporter *exporter;     /* NULL when metrics.listener is unset */
    struct authz *authz;           /* NULL: no authorizer (authorizer.class.name unset) */
    /* False until the controller first unfenced this broker: until then only ApiVersions and
     * the broker-to-controller APIs are served, every other request closes its connection
     * (as a Kafka broker's client listener is not open yet), so no client is served from an
     * image that may still be behind the cluster's. */
    bool serving;
    struct slog_limit not_served_log; /* "is not served" lines, across all connections */
    struct slog_limit starting_log;   /* "not serving yet" lines */
    /* The listeners' SASL configurations (NULL: no SASL listener, as in fuzz_dispatch). */
    const struct server_config *cfg;
    struct slog_limit auth_failed_log; /* failed authentications, across all connections */
    struct slog_limit unauthed_log;    /* requests before authentication */
    /* KIP-368: the time service the SASL sessions' lifetimes run on (NULL: sessions never
     * expire), the "session expired" lines, and the counters of dispatch_sasl_metrics. */
    struct tclock *clock;
    struct slog_limit expired_log;
    /* Re-authentications refused for a changed principal [0] or mechanism [1]: clients that
     * proved valid credentials, logged apart from failed guesses. */
    struct slog_limit reauth_refused_log[2];
    struct metrics_family *m_reauth, *m_expired;
};

/* ---- lifecycle.c: this broker's registration and heartbeats ---------------------------- */

struct lifecycle;
struct net_client;
struct tclock;

struct lifecycle_options {
    struct tclock *clock;
    struct meta *meta;
    struct net_client *client; /* to NET_CLIENT_CONTROLLER */
    const struct server_config *cfg;
    void (*on_running)(void *arg);       /* first unfenced: serve clients */
    void (*on_shutdown_done)(void *arg); /* controlled shutdown answered (or gave up) */
    void (*on_fatal)(void *arg);         /* refused for good (INCONSISTENT_CLUSTER_ID) */
    void *arg;
    /* PreviousBrokerEpoch of this process's first registration: what the log directory says
     * of the last stop (replica_previous_broker_epoch), -1 = unclean or unknown. Later
     * registrations of the same process (fenced meanwhile) name its own last epoch. */
    int64_t previous_broker_epoch;
};
/* Starts registering at once (retrying until a controller answers). 0 or ERR_NOMEM. */
int lifecycle_start(const struct lifecycle_options *o, struct lifecycle **out);
/* The broker epoch the controller answered the registration with (-2 while not registered). */
int64_t lifecycle_epoch(const struct lifecycle *lc);
/* Whether the controller has unfenced this broker at least once. */
bool lifecycle_running(const struct lifecycle *lc);
/* Whether this broker, once running, has had no heartbeat answered for longer than
 * broker.session.timeout.ms (the controller then has most likely fenced it), or the last
 * answer said it is fenced (it has not caught up with the metadata log since). */
bool lifecycle_out_of_touch(const struct lifecycle *lc);
/* Asks the controller to move this broker's leaderships away (WantShutDown); on_shutdown_done
 * runs once it says ShouldShutDown, at once if the broker never ran, or after
 * broker.session.timeout.ms. */
void lifecycle_controlled_shutdown(struct lifecycle *lc);
/* Stops sending (requests still out are ignored when they answer); free after the client
 * stopped. */
void lifecycle_stop(struct lifecycle *lc);
void lifecycle_free(struct lifecycle *lc);

/* net_request_cb: routes one decoded request to its handler. ctx is a struct dispatch. */
void dispatch_request(void *ctx, struct net_request *req);

/* ---- dispatch_sasl.c: SASL on SASL_PLAINTEXT listeners --------------------------------- */

/* Whether req may be served on its connection: always on a listener without SASL and once
 * authenticated; before that (and during a re-authentication) only ApiVersions, SaslHandshake
 * and SaslAuthenticate. Past the end of its session (KIP-368, connections.max.reauth.ms) only
 * a SaslHandshake, which starts a re-authentication. Anything else closes the connection,
 * unanswered (one rate-limited line), and false is returned. */
bool dispatch_sasl_gate(struct dispatch *d, struct net_request *req);
/* SaslHandshake (17) and SaslAuthenticate (36), raw v0 tokens included: the exchange of
 * src/sasl/ on the connection's net_session (its `auth` holds the struct sasl_session); a
 * success sets authenticated and the principal "User:<name>" and starts the session's
 * lifetime (SessionLifetimeMs in v1+); a failure answers SASL_AUTHENTICATION_FAILED /
 * UNSUPPORTED_SASL_MECHANISM / ILLEGAL_SASL_STATE and closes the connection after
 * connection.failed.authentication.delay.ms. On an authenticated connection whose session has
 * a lifetime, a SaslHandshake starts a re-authentication (KIP-368; at most one a second, as
 * Kafka): the same mechanism and principal, the answers of earlier requests unaffected. */
void dispatch_sasl_handshake(struct dispatch *d, struct net_request *req);
void dispatch_sasl_authenticate(struct dispatch *d, struct net_request *req);
/* Declares the SASL re-authentication counters in `m` (tally_sasl_reauthentications_total,
 * tally_sasl_expired_connections_total; docs/metrics.md) and counts into them from then on.
 * m NULL: nothing is counted. */
void dispatch_sasl_metrics(struct dispatch *d, struct metrics *m);
/* sasl_scram_lookup_fn over the metadata image (`meta` is a struct meta): the SCRAM users of
 * AlterUserScramCredentials. */
int dispatch_sasl_scram_lookup(void *meta, enum sasl_mech m, const char *name,
                               struct sasl_scram_cred *out);

#endif
