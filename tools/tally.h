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
    /* Client security of the wire-codec commands (acls, quotas, users scram: -X key=value or
     * --command-config FILE, librdkafka's names): security.protocol NULL or "PLAINTEXT" (no
     * login) or "SASL_PLAINTEXT" (tally_wire_connect logs in with sasl.mechanism PLAIN,
     * SCRAM-SHA-256 or SCRAM-SHA-512 as sasl.username / sasl.password). */
    const char *security_protocol, *sasl_mechanism, *sasl_username, *sasl_password;
};

/* One -X key=value of the above into ctx (tally_wire_sasl.c): TALLY_OK, TALLY_USAGE for a key
 * other than those four or a protocol other than PLAINTEXT / SASL_PLAINTEXT, TALLY_FAIL for SSL
 * and SASL_SSL (no TLS in the wire client yet); printed. tally_security_file reads a
 * properties file of such lines (# and ! comments). Values live as long as the process. */
int tally_security_option(struct tally_ctx *ctx, const char *kv);
int tally_security_file(struct tally_ctx *ctx, const char *path);

/* The SASL login of ctx on a connected socket (SaslHandshake v1, SaslAuthenticate v2: PLAIN,
 * or SCRAM's two steps with the server's signature verified): TALLY_OK, or TALLY_FAIL after
 * printing why, `what` naming the peer. */
int tally_wire_sasl(const struct tally_ctx *ctx, int fd, const char *what);

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
 * connects with ctx's timeout on connect, send and receive (the socket, or -1 after
 * printing why). tally_wire_roundtrip sends one request frame and reads the response frame
 * (after its size prefix) into a malloc()ed buffer: 0, or TALLY_FAIL after printing why,
 * `what` naming the peer. tally_wire_skip_tags skips a tagged-field section (response
 * header v1): the bytes used, or 0 when malformed. */
int tally_wire_connect(const struct tally_ctx *ctx, const char *host, int port);
int tally_wire_roundtrip(int fd, const uint8_t *req, size_t req_len, uint8_t **resp,
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
