/* SPDX-License-Identifier: Apache-2.0 */
/* tally: the command-line admin tool. This header is the contract between the
 * dispatcher (tally.c) and the per-noun command files (tally_topics.c,
 * tally_configs.c, tally_perf.c, tally_producers.c). Every command returns a process
 * exit code: 0 = ok, 1 = the operation failed (one line on stderr says why), 2 = the
 * command line was wrong. */
#ifndef TALLY_TOOLS_TALLY_H
#define TALLY_TOOLS_TALLY_H

#include <librdkafka/rdkafka.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { TALLY_OK = 0, TALLY_FAIL = 1, TALLY_USAGE = 2 };

/* What every command needs: where the cluster is and how long to wait for it. */
struct tally_ctx {
    const char *bootstrap; /* host:port[,host:port...] */
    int timeout_ms;        /* per admin call and per metadata request */
    /* Print as Kafka's tool of the same name does (the kafka-*.sh names of kafka_names.c):
     * the commands that honour it say so at their printers; the data asked for is the same. */
    bool kafka_format;
    /* The client security settings (-X key=value or --command-config FILE, librdkafka's names
     * and values; tally_security_option): every command passes them to librdkafka
     * (tally_security_conf), and the wire client (tally_wire_connect) speaks them itself.
     * security.protocol NULL or PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL; SASL logs in with
     * sasl.mechanism PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 as sasl.username / sasl.password.
     * TLS verifies the broker's certificate against ssl.ca.location (a PEM file; the system's
     * CAs when unset) unless enable.ssl.certificate.verification is false, and its host name
     * unless ssl.endpoint.identification.algorithm is none (https, the default since
     * librdkafka 2.0); ssl.certificate.location and ssl.key.location (PEM, ssl.key.password
     * when encrypted) give a client certificate for mutual TLS. NULL: not set. */
    const char *security_protocol, *sasl_mechanism, *sasl_username, *sasl_password;
    const char *ssl_ca_location, *ssl_certificate_location, *ssl_key_location, *ssl_key_password,
        *ssl_endpoint_identification_algorithm, *enable_ssl_certificate_verification;
};

/* One -X key=value of the above into ctx (tally_security.c): TALLY_OK, or TALLY_USAGE
 * (printed) for another key or a value librdkafka would not take. tally_security_file reads a
 * properties file of such lines (# and ! comments). Values live as long as the process. */
int tally_security_option(struct tally_ctx *ctx, const char *kv);
int tally_security_file(struct tally_ctx *ctx, const char *path);

/* The settings of ctx that are set, into a librdkafka configuration (tally.c): true, or false
 * after printing librdkafka's refusal. */
bool tally_security_conf(rd_kafka_conf_t *conf, const struct tally_ctx *ctx);

/* The settings one by one (tally_security.c): there are tally_security_count(); setting i's
 * librdkafka name into *name and its value returned (NULL: not set). tally_security_any: is
 * any set. */
int tally_security_count(void);
const char *tally_security_get(const struct tally_ctx *ctx, int i, const char **name);
bool tally_security_any(const struct tally_ctx *ctx);

/* Writes the settings of ctx that are set to `path` as a properties file only its owner may
 * read (for a child process's --command-config): TALLY_OK, or TALLY_FAIL after printing. */
int tally_security_save(const struct tally_ctx *ctx, const char *path);

/* The start of a child's command line that runs this binary (exe) against bootstrap with the
 * settings in the file `security` (NULL or "": none) before its command: fills args[0..k-1]
 * (room for 5), pointers to the arguments, and returns k. Secrets never go on a command line,
 * where ps shows them: only the file's name does. */
int tally_child_argv(const char *exe, const char *bootstrap, const char *security, char **args);

/* A connection of the wire client (tally_producers.c: tally_wire_connect). */
struct tally_wire;

/* The SASL login of ctx on a connection (SaslHandshake v1, SaslAuthenticate v2: PLAIN, or
 * SCRAM's two steps with the server's signature verified): TALLY_OK, or TALLY_FAIL after
 * printing why, `what` naming the peer. */
int tally_wire_sasl(const struct tally_ctx *ctx, struct tally_wire *w, const char *what);

/* TLS on a connected socket (tally_wire_tls.c), with ctx's ssl.* settings: the handshake
 * done and the broker's certificate (and host name `host`) verified as they ask. Returns the
 * session, or NULL after printing why, `what` naming the peer. The caller frees it with
 * tally_tls_free (which does not close fd). tally_tls_send / tally_tls_recv move at least one
 * byte as send() and recv() do: the count, 0 on a clean close (recv), or -1 with errno set
 * (EAGAIN when the socket's timeout passed, EPROTO for a TLS error, printed). */
struct tally_tls;
struct tally_tls *tally_tls_start(const struct tally_ctx *ctx, int fd, const char *host,
                                  const char *what);
long tally_tls_send(struct tally_tls *t, const uint8_t *p, size_t n);
long tally_tls_recv(struct tally_tls *t, uint8_t *p, size_t n);
void tally_tls_free(struct tally_tls *t);

/* Prints "tally: <message>" on stderr and returns TALLY_FAIL. */
int tally_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints "tally: <message>" plus a hint to use --help on stderr and returns
 * TALLY_USAGE. */
int tally_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* True when arg is "-h" or "--help". */
bool tally_is_help(const char *arg);

/* Creates an admin-capable client for ctx. librdkafka's own log lines are silenced
 * so that failures are reported as one line by the command. On failure prints the
 * reason and returns NULL; the caller owns the handle (rd_kafka_destroy). */
rd_kafka_t *tally_connect(const struct tally_ctx *ctx);

/* Fetches cluster metadata (all topics when topic is NULL, else just that topic).
 * On failure prints the reason and returns NULL; the caller frees the result with
 * rd_kafka_metadata_destroy. */
const struct rd_kafka_metadata *tally_metadata(rd_kafka_t *rk, const struct tally_ctx *ctx,
                                               const char *topic);

/* Admin options for one call of kind api with ctx's timeouts. Caller destroys. */
rd_kafka_AdminOptions_t *tally_admin_options(rd_kafka_t *rk, const struct tally_ctx *ctx,
                                             rd_kafka_admin_op_t api);

/* Waits on q for the result event of type want. Returns the event (caller destroys
 * it) or NULL after printing why (timeout or a request-level error), in which case
 * what names the operation in the message. */
rd_kafka_event_t *tally_admin_wait(rd_kafka_queue_t *q, const struct tally_ctx *ctx,
                                   rd_kafka_event_type_t want, const char *what);

/* Splits "key=value" into a freshly allocated key (returned; caller frees) and a
 * pointer into arg for the value. Returns NULL when there is no '=' or the key is
 * empty. */
char *tally_split_kv(const char *arg, const char **value);

/* The shape shared by the noun commands on Tally's own codec (acls, quotas, users scram):
 * `NOUN VERB [OPTIONS]`. tally_noun_main prints `usage` (on stderr without a verb, on stdout
 * for -h/--help), refuses a verb not in `verbs` (naming those there are), takes the client
 * security options (-X key=value, --command-config FILE) out of the line, parses the rest
 * (argv[2] on) into `args` with `parse`, and runs the verb with an arena of `arena_bytes`
 * (freed after it). argv[0] is the noun, argv[1] the verb. Returns the verb's exit code. */
struct arena;
struct tally_verb {
    const char *name; /* NULL ends the table */
    int (*run)(const struct tally_ctx *ctx, void *args, struct arena *a);
};
struct tally_noun {
    const char *name; /* "acls", as the messages name it */
    const char *usage;
    int (*parse)(int argc, char **argv, void *args);
    const struct tally_verb *verbs;
    size_t arena_bytes;
};
int tally_noun_main(const struct tally_noun *noun, const struct tally_ctx *ctx, int argc,
                    char **argv, void *args);

/* The noun commands: argv[0] is the noun ("topics", "configs"). */
/* `cluster describe|new-id` (tally_cluster.c). */
int tally_cluster_main(const struct tally_ctx *ctx, int argc, char **argv);
/* `partitions elect-leaders` (tally_partitions.c): ElectLeaders over Tally's own codec. */
int tally_partitions_main(const struct tally_ctx *ctx, int argc, char **argv);
/* `partitions reassign` (tally_reassign.c): kafka-reassign-partitions.sh's actions, with
 * AlterPartitionReassignments, ListPartitionReassignments and IncrementalAlterConfigs over
 * Tally's own codec. argv[0] is "partitions", argv[1] "reassign". */
int tally_reassign_main(const struct tally_ctx *ctx, int argc, char **argv);
int tally_topics_main(const struct tally_ctx *ctx, int argc, char **argv);
int tally_configs_main(const struct tally_ctx *ctx, int argc, char **argv);
/* `perf produce|consume` (tally_perf.c): load generators with a summary line on stdout. */
int tally_perf_main(const struct tally_ctx *ctx, int argc, char **argv);
/* `producers describe` (tally_producers.c): DescribeProducers over Tally's own codec,
 * since librdkafka has no admin call for it. */
int tally_producers_main(const struct tally_ctx *ctx, int argc, char **argv);
/* `groups list|describe|delete|delete-offsets|reset-offsets` (tally_groups.c): consumer
 * groups on librdkafka's group admin calls, as kafka-consumer-groups.sh shows them. */
int tally_groups_main(const struct tally_ctx *ctx, int argc, char **argv);

/* `verify` (tally_verify.c): the exactly-once check of issue 11 (docs/verify.md); exit 0 only
 * when no anomaly was found. */
int tally_verify_main(const struct tally_ctx *ctx, int argc, char **argv);

/* A blocking request/response client for requests librdkafka has no admin call for,
 * encoded with Tally's own codec (src/proto); in tally_producers.c. tally_wire_connect
 * connects with ctx's timeout on connect, send and receive, then speaks ctx's
 * security.protocol (TLS, then the SASL login, as asked): the connection, or NULL after
 * printing why; tally_wire_close closes it (NULL is fine). tally_wire_roundtrip sends one
 * request frame and reads the response frame (after its size prefix) into a malloc()ed
 * buffer: 0, or TALLY_FAIL after printing why, `what` naming the peer. tally_wire_skip_tags
 * skips a tagged-field section (response header v1): the bytes used, or 0 when malformed. */
struct tally_wire *tally_wire_connect(const struct tally_ctx *ctx, const char *host, int port);
void tally_wire_close(struct tally_wire *w);
int tally_wire_roundtrip(struct tally_wire *w, const uint8_t *req, size_t req_len, uint8_t **resp,
                         size_t *resp_len, const char *what);
size_t tally_wire_skip_tags(const uint8_t *p, size_t len);

/* Metadata for every topic (no auto-creation) over the wire client, at the highest version
 * both sides serve, from broker `prefer` of md when it answers, else from the first other
 * broker that does (tally_topics.c). TALLY_OK and *out allocated in `a`, or TALLY_FAIL
 * (printed). */
struct arena;
struct MetadataResponse;
int tally_wire_metadata(const struct tally_ctx *ctx, const struct rd_kafka_metadata *md,
                        int32_t prefer, struct arena *a, const struct MetadataResponse **out);

/* The broker of md with that id, or NULL (tally_cluster.c). */
const struct rd_kafka_metadata_broker *tally_md_broker(const struct rd_kafka_metadata *md,
                                                       int32_t id);

/* The highest version of api_key, at most `want`, that the broker at host:port serves (its
 * ApiVersions answer), or -1 when it serves none up to `want` or cannot be asked (the
 * reason printed) (tally_cluster.c). */
int16_t tally_api_version(const struct tally_ctx *ctx, const char *host, int port, int16_t api_key,
                          int16_t want);

/* `log-dirs describe [--topic-list T,...] [--broker-list N,...]` (tally_logdirs.c):
 * DescribeLogDirs over Tally's own codec to each broker, printed as kafka-log-dirs.sh does (two
 * header lines, then one JSON line). */
int tally_logdirs_main(const struct tally_ctx *ctx, int argc, char **argv);

/* `acls add|list|remove` (tally_acls.c): CreateAcls, DescribeAcls and DeleteAcls over Tally's
 * own codec, with kafka-acls.sh's options and its listing format. */
int tally_acls_main(const struct tally_ctx *ctx, int argc, char **argv);

/* `quotas set|describe` (tally_quotas.c): client quotas, as kafka-configs.sh --entity-type
 * users|clients. */
int tally_quotas_main(const struct tally_ctx *ctx, int argc, char **argv);

/* `users scram set|describe|delete` (tally_users.c): SCRAM credentials
 * (AlterUserScramCredentials, DescribeUserScramCredentials), as kafka-configs.sh
 * --entity-type users manages them; the salted password is computed here, the password never
 * sent. */
int tally_users_main(const struct tally_ctx *ctx, int argc, char **argv);

/* `transactions list|describe|find-hanging|abort` (tally_txn.c), as kafka-transactions.sh. */
int tally_txn_main(const struct tally_ctx *ctx, int argc, char **argv);

/* One request to host:port over the wire client (tally_txn.c): encodes `req` (the request
 * struct of api_key at version), decodes the response into *out, allocated in `a` (strings
 * copied; responses with BYTES fields must not be read through it). Returns TALLY_OK or
 * TALLY_FAIL after printing why, `what` naming the peer. */
struct arena;
int tally_wire_call(const struct tally_ctx *ctx, const char *host, int port, int16_t api_key,
                    int16_t version, const void *req, struct arena *a, void **out,
                    const char *what);

/* tally_wire_call to the first bootstrap broker of ctx (its HOST:PORT); returns TALLY_USAGE
 * after printing why when that is not HOST:PORT. */
int tally_bootstrap_call(const struct tally_ctx *ctx, int16_t api_key, int16_t version,
                         const void *req, struct arena *a, void **out, const char *what);

/* The producer whose open transaction starts at `offset` of topic-partition, asked of the
 * partition's leader at host:port with DescribeProducers (tally_txn.c): TALLY_OK with
 * *producer_id and *epoch, or TALLY_FAIL (none such, or the call failed: printed). */
int tally_open_txn_at(const struct tally_ctx *ctx, const char *host, int port, const char *topic,
                      int32_t partition, int64_t offset, int64_t *producer_id, int16_t *epoch);

/* The transactional id of producer_id, from ListTransactions on every broker of md
 * (tally_txn.c): TALLY_OK with the id in buf, else TALLY_FAIL (nothing printed). */
int tally_txn_id_of(const struct tally_ctx *ctx, const struct rd_kafka_metadata *md,
                    int64_t producer_id, char *buf, size_t cap);

/* Prints the non-default ("dynamic") configs of topic on one line in
 * "k=v,k=v" form into stdout; used by `topics describe`. Returns TALLY_OK or
 * TALLY_FAIL (reason printed). */
int tally_print_topic_configs(rd_kafka_t *rk, const struct tally_ctx *ctx, const char *topic);

#endif
