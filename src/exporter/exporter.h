/* SPDX-License-Identifier: Apache-2.0 */
/* exporter: the Prometheus endpoint and the web console (issue 19). Owns the metrics registry
 * (base/metrics.h) the modules count into, adds what is read at scrape time (partition offsets, the
 * cluster's health as the metadata image shows it, the metadata quorum's raft state, consumer
 * groups and their lag, transactions, the process's file descriptors, memory, connections, fsyncs
 * and thread pool, the event loop's lag) and serves GET /metrics in the text format 0.0.4,
 * or OpenMetrics when the scrape asks for it, on `metrics.listener` through libmicrohttpd
 * (http.c); the same listener serves the web console at / and its JSON API at /api/
 * (console_api.c, docs/console.md). The per-request times come from net (exporter_sent).
 * docs/metrics.md lists every series.
 *
 * Threads: libmicrohttpd answers on a thread of its own; everything else runs on the event
 * loop: a scrape wakes the loop (uv_async), the loop copies the per-partition numbers into a
 * snapshot (snapshot.c) in slices of about 1 ms over its iterations, renders the registry
 * after the last, and hands both back under a mutex;
 * the HTTP thread formats the snapshot's families after the registry's text. The HTTP
 * thread never reads broker state. */
#ifndef TALLY_EXPORTER_H
#define TALLY_EXPORTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

struct meta;
struct metrics;
struct net_request;
struct props;
struct replica_mgr;
struct sasl_user;

struct exporter;

/* Creates a topic for the console (console.write.enable): the shape of group.h's
 * group_ensure_topic_fn; 0 when proposed, else an error code. */
typedef int (*exporter_create_topic_fn)(void *arg, const char *name, int32_t partitions,
                                        int16_t replication_factor, int32_t n_configs,
                                        const char *const *keys, const char *const *values);

struct exporter_options {
    uv_loop_t *loop;
    const struct props *config; /* metrics.listener, metrics.partition.*, console.*; borrowed */
    struct meta *meta;          /* borrowed; read only while the exporter runs */
    int32_t node_id;
    /* The console's "create topic" (NULL: refused as unavailable). */
    exporter_create_topic_fn create_topic;
    void *create_topic_arg;
    /* console.authentication=plain: the PLAIN users (JAAS user_<name>) of the SASL listeners,
     * borrowed for exporter_start, which copies them. */
    const struct sasl_user *const *plain_users;
    size_t n_plain_users;
};

/* Whether `config` asks for the endpoint (metrics.listener set and not empty). */
bool exporter_wanted(const struct props *config);

/* Parses metrics.listener (host:port, [v6]:port; port 0 = any free one), creates the
 * registry, binds and starts the HTTP thread. Returns 0 and *out, or 1 after logging why
 * (bad address, port taken, out of memory). */
int exporter_start(const struct exporter_options *opts, struct exporter **out);

/* The registry the modules are given (broker_options.metrics, replica_options.metrics). */
struct metrics *exporter_metrics(struct exporter *e);
/* The port bound. */
int exporter_port(const struct exporter *e);

/* The partitions to report (from start_modules on; NULL once they stop). NULL e: no-op. */
void exporter_set_replicas(struct exporter *e, struct replica_mgr *rm);
/* The group coordinator whose groups to report (state, members, committed offsets and lag);
 * NULL once it stops. NULL e: no-op. */
struct group_coord;
void exporter_set_groups(struct exporter *e, struct group_coord *gc);
/* A Kafka listener whose open connections to report (tally_connections{listener}); `name`
 * is borrowed and must outlive the exporter. At most EXPORTER_MAX_LISTENERS. */
#define EXPORTER_MAX_LISTENERS 8
struct net_server;
void exporter_add_listener(struct exporter *e, const char *name, struct net_server *s);
/* The broker whose purgatory to report. */
struct broker;
void exporter_set_broker(struct exporter *e, struct broker *b);
/* The transaction coordinator whose transactions to count by state; NULL once it stops. */
struct txn;
void exporter_set_txn(struct exporter *e, struct txn *t);

/* dispatch: a request of `api` reached its handler (or was forwarded to the controller), whose
 * synchronous part took `local_ns` (docs/metrics.md: requests and the local-time histogram,
 * by API). Takes the API, not the request: a handler that answered at once freed it. NULL e:
 * no-op. */
struct proto_api;
void exporter_request(struct exporter *e, const struct proto_api *api, uint64_t local_ns);
/* net_options.on_response (arg: the exporter): counts the non-zero ErrorCode fields of an
 * answer, every level of it (a Produce answer's per-partition codes too), by API and name. */
void exporter_response(void *arg, const struct net_request *req, int16_t version, const void *resp);
/* net_options.on_sent (arg: the exporter): an answer's last byte reached the kernel; observes
 * its request's queue, remote, response-queue, send and total times by API. */
struct net_request_times;
void exporter_sent(void *arg, const struct net_request_times *t);

/* Closes the listener (joining the HTTP thread; a scrape waiting for the loop gets 503) and
 * stops reading any module: call first in shutdown, before the modules stop. The handles
 * close on the loop; free after uv_run returned. NULL: no-op. */
void exporter_stop(struct exporter *e);
/* Frees the exporter and its registry (after exporter_stop and the loop ran). NULL: no-op. */
void exporter_free(struct exporter *e);

/* A consumer group's lag on one partition (docs/metrics.md), for exporter.c and its tests:
 * records behind the high watermark and behind the last stable offset (never negative: an
 * offset committed past either, by a client's choice, is 0 behind). */
struct exporter_lag {
    int64_t records, stable_records;
};
struct exporter_lag exporter_group_lag(int64_t high_watermark, int64_t last_stable_offset,
                                       int64_t committed);

/* ---- snapshot.c: the per-partition series, copied on the loop, formatted off it ----------- */

/* One scrape's per-partition rows. Built on the loop (new, add, add_follower), then read
 * only; formatted on the HTTP thread. Reference-counted with an atomic count: new gives one
 * reference, hold adds one, release drops one and frees the snapshot with the last, on
 * whichever thread that is. */
struct exporter_snapshot;
/* The gauges of each row, in the order their families render. */
enum exporter_part_value {
    EXPORTER_PART_LOG_START,
    EXPORTER_PART_LEO,
    EXPORTER_PART_HW,
    EXPORTER_PART_LSO,
    EXPORTER_PART_SIZE,
    EXPORTER_PART_SEGMENTS,
    EXPORTER_PART_N_VALUES
};
/* NULL when out of memory. */
struct exporter_snapshot *exporter_snapshot_new(void);
void exporter_snapshot_hold(struct exporter_snapshot *s);
/* NULL: no-op. */
void exporter_snapshot_release(struct exporter_snapshot *s);
/* Appends a partition's row (topic copied; txn_age < 0: no age series). 0 or ERR_NOMEM (the
 * row is left out). */
int exporter_snapshot_add(struct exporter_snapshot *s, const char *topic, int32_t index,
                          const int64_t v[EXPORTER_PART_N_VALUES], double txn_age);
/* Adds a follower's lag to the last row added. 0 or ERR_NOMEM (left out). */
int exporter_snapshot_add_follower(struct exporter_snapshot *s, int32_t follower, int64_t lag);
/* Rows added. NULL: 0. */
size_t exporter_snapshot_rows(const struct exporter_snapshot *s);
/* Any thread: appends the partition families of `s` (NULL: the families without series) in
 * `fmt`, then the text's end ("# EOF" in OpenMetrics), to the malloc'd text *text (*len
 * bytes; NULL: none). Takes *text: 0 with the longer text in *text and *len, or ERR_NOMEM
 * (*text freed and NULL). */
enum metrics_format;
int exporter_snapshot_render(const struct exporter_snapshot *s, enum metrics_format fmt,
                             char **text, size_t *len);

/* ---- http.c: the listener, for exporter.c ------------------------------------------------ */

/* Called on the loop when scrapes wait: renders each format in `formats` (bit 1 << enum
 * metrics_format), at once or over several loop iterations, and hands each one's text to
 * exporter_http_publish, then calls exporter_http_done once. No other call of it comes
 * before exporter_http_done. */
typedef void (*exporter_render_fn)(void *arg, unsigned formats);
struct exporter_http;
/* On the loop: the rendering of `fmt` for the scrapes waiting: `text` (malloc'd, taken; NULL:
 * none could be made, the scrapes answer 503) without the per-partition families and the
 * text's end, which the HTTP thread appends from `tail` (one reference taken; NULL: none). */
void exporter_http_publish(struct exporter_http *h, enum metrics_format fmt, char *text, size_t len,
                           struct exporter_snapshot *tail);
/* On the loop: the rendering started by exporter_render_fn is over. */
void exporter_http_done(struct exporter_http *h);
/* Whether a scrape's Accept header (NULL: none) asks for OpenMetrics: it lists
 * application/openmetrics-text with a q above 0 and not below text/plain's (Prometheus
 * sends both, OpenMetrics first and higher). Otherwise the 0.0.4 text is served. */
bool exporter_wants_openmetrics(const char *accept);
/* Answers one console /api/ request on the loop (console_int.h's console_call). */
struct console_call;
typedef void (*exporter_console_fn)(void *arg, struct console_call *c);
/* Binds host:port (numeric IPv4 or IPv6) and starts the HTTP thread; scrapes call `render`
 * and /api/ requests `console` (NULL: no console, / and /api/ are 404) on `loop`, both with
 * `arg`. 0 and *out, or 1 after logging why. */
/* The listener's HTTPS and the console's authentication (docs/console.md, Security). */
struct exporter_http_security {
    /* metrics.ssl.keystore.location's contents: a PEM key and certificate chain (NULL: plain
     * HTTP). Copied. */
    const char *keystore_pem;
    /* console.authentication=scram: HTTP Basic checked against the metadata image's SCRAM
     * credentials (the credential looked up on the loop, the PBKDF2 on the HTTP thread). */
    bool scram;
    /* console.authentication=plain: HTTP Basic checked against these PLAIN users (copied);
     * n_plain 0 with plain set: nobody logs in. */
    bool plain;
    const struct sasl_user *const *plain_users;
    size_t n_plain;
    int64_t failed_delay_ms; /* connection.failed.authentication.delay.ms */
};
int exporter_http_start(uv_loop_t *loop, const char *host, int port, exporter_render_fn render,
                        exporter_console_fn console, void *arg,
                        const struct exporter_http_security *sec, struct exporter_http **out);
int exporter_http_port(const struct exporter_http *h);
/* Stops the thread (waiting scrapes get 503), closes the async handle; frees itself once
 * closed. */
void exporter_http_stop(struct exporter_http *h);

#endif
