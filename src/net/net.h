/* SPDX-License-Identifier: Apache-2.0 */
/* net: the Kafka listener on libuv. Reads size-prefixed frames, decodes the request header
 * and body with proto/, hands each request to the application, and writes responses back
 * in request order per connection, however the handlers finish (synchronously or later). */
#ifndef TALLY_NET_H
#define TALLY_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "proto/proto.h"

struct sysio;

struct arena;
struct authz;
struct tclock;
struct net_server;
struct tls_ctx;

/* Longest principal name kept on a connection ("User:" and a SASL user name). */
#define NET_PRINCIPAL_MAX 272

/* The connection a request came on: its listener and what authentication established. One
 * per connection, valid while any request of the connection is unfinished; net fills the
 * listener fields, the application (the SASL exchange in tallyd's dispatcher) the rest.
 * Later slices (ACLs, quotas) read the principal from here. */
struct net_session {
    const char *listener; /* the listener's name, e.g. "PLAINTEXT"; NULL: a detached request */
    /* The listener's security protocol is SASL_PLAINTEXT: until `authenticated`, only
     * ApiVersions, SaslHandshake and SaslAuthenticate may be served. */
    bool sasl;
    bool authenticated;
    /* "User:<name>" once authenticated; "User:ANONYMOUS" (Kafka's name) on a listener
     * without authentication. */
    char principal[NET_PRINCIPAL_MAX];
    /* Set by the application after a SaslHandshake v0: the frames that follow are raw SASL
     * tokens, not Kafka requests. Each is handed over as a SaslAuthenticate v0 request with
     * req->raw_sasl set, and its answer is written as a raw frame (4-byte size, AuthBytes).
     * The application clears it when the exchange ends. */
    bool sasl_raw;
    /* The application's per-connection authentication state; auth_free(auth) runs once, when
     * the connection is freed (after its last request finished). */
    void *auth;
    void (*auth_free)(void *auth);
    /* The application's other per-connection state (tallyd: the Produce handler's memory of
     * batches it turned away, broker/produce.c); app_free(app) runs once, when the
     * connection is freed. Never set on a detached request's session (listener NULL). */
    void *app;
    void (*app_free)(void *app);
    /* The broker's authorizer (authz/authz.h), set by the application on each request
     * before its handler runs; NULL: no authorizer, everything is allowed. */
    struct authz *authz;
};

/* One request in flight. Everything it points to (header strings, body, arena) lives until
 * the request is finished with net_respond, net_finish or net_close_connection. */
struct net_request {
    struct RequestHeader hdr;
    const struct proto_api *api; /* never NULL */
    /* False only for ApiVersions at a version outside the declared range: the body is not
     * decoded (body == NULL) and the answer must be a v0 response (net_respond_as). */
    bool version_supported;
    void *body;                  /* the decoded request, layout api->request */
    struct arena *arena;         /* per-request allocations, freed when the request finishes */
    const char *peer;            /* "ip:port" of the client, for log lines */
    struct net_session *session; /* never NULL (a detached request has one of its own) */
    /* A raw SASL token (see net_session.sasl_raw): api is SaslAuthenticate, version 0, body a
     * SaslAuthenticateRequest holding the frame; the answer's AuthBytes go back raw. */
    bool raw_sasl;
    /* A throttle the application owes this request besides the handler's (the request quota
     * of KIP-124, set before the handler runs): an answer given on a connection carries at
     * least this in its ThrottleTimeMs, where its version has one (the handler's own value,
     * e.g. a byte-rate throttle, wins when larger). The handler's struct is not written: a
     * copy of its top level is encoded. 0: none. */
    int32_t throttle_ms;
};

/* When one answered request passed each step (uv_hrtime(), ns), for net_options.on_sent:
 * Kafka's split of a request's time (queue, local, remote, response queue, send). */
struct net_request_times {
    const struct proto_api *api;
    uint64_t received_ns;  /* its frame was read off the socket whole */
    uint64_t started_ns;   /* handed to the request callback */
    uint64_t handled_ns;   /* the callback returned, or answered from within it */
    uint64_t responded_ns; /* net_respond*: the answer was given (>= handled_ns) */
    uint64_t queued_ns;    /* queued for output, after the answers before it on its connection */
    uint64_t sent_ns;      /* its last byte was handed to the kernel */
};

/* Called for every decoded request; the callee must eventually finish it exactly once. */
typedef void (*net_request_cb)(void *ctx, struct net_request *req);

struct net_options {
    struct tclock *clock; /* time service (the idle timer); borrowed */
    const char *host;
    int port;
    /* The listener's name (net_session.listener of its connections; borrowed, must outlive
     * the server) and whether its connections must authenticate with SASL first. NULL:
     * "PLAINTEXT". */
    const char *listener;
    bool sasl;
    /* SSL and SASL_SSL listeners: every connection completes a TLS handshake on this context
     * (net/tls.h; borrowed, must outlive the server) before its first request is read, within
     * max_idle_ms of its accept. Without SASL its principal is the client certificate's,
     * mapped by the context's rules ("User:ANONYMOUS" without one). NULL: plaintext. */
    struct tls_ctx *tls;
    size_t max_frame; /* socket.request.max.bytes */
    /* Per connection: requests not yet answered plus answers not yet handed to the kernel.
     * Reading pauses while a connection is at this bound (0: 64). */
    unsigned max_inflight;
    /* connections.max.idle.ms: a connection with no byte read or written for this long and
     * no request in progress is closed, and a frame must arrive whole within this time of
     * its first byte. Negative: never. */
    int64_t max_idle_ms;
    /* socket.send.buffer.bytes / socket.receive.buffer.bytes: SO_SNDBUF / SO_RCVBUF of every
     * connection, so the kernel too holds a bounded amount per connection. 0 or less: the
     * OS default (which autotunes up to megabytes). */
    int send_buffer_bytes, recv_buffer_bytes;
    /* Told of every answer given with net_respond* on a connection, before it is encoded
     * (metrics: the error codes it carries); `resp` has the layout of req->api->response at
     * `version` and is valid during the call only. NULL: nobody is told. */
    void (*on_response)(void *arg, const struct net_request *req, int16_t version,
                        const void *resp);
    void *on_response_arg;
    /* Told when the last byte of an answer reached the kernel, with the times of its request
     * (valid during the call only). Answers dropped with their connection, requests finished
     * without one (acks=0) and requests closed are not told. NULL: nobody is told, and no
     * time is taken. */
    void (*on_sent)(void *arg, const struct net_request_times *times);
    void *on_sent_arg;
    /* The file calls of file pieces (base/sysio.h: resident, pread, sendfile; borrowed). A
     * file piece whose pages are not all in the page cache (one `resident` probe per piece)
     * is read once on libuv's thread pool before the loop sends it, so that the loop never
     * waits for the disk (KAFKA-7504). NULL: sysio_default(). */
    const struct sysio *io;
};

/* Binds and listens. Returns 0 and *out, or an error after logging why. */
int net_server_start(uv_loop_t *loop, const struct net_options *opts, net_request_cb cb, void *ctx,
                     struct net_server **out);

/* Replaces the TLS context of a TLS server's new connections (keystore rotation); open
 * connections keep theirs (net/tls.h counts references). `ctx` is borrowed as opts.tls is.
 * No effect on a plaintext server. */
void net_server_set_tls(struct net_server *s, struct tls_ctx *ctx);

/* The port actually bound (useful when opts->port was 0). */
int net_server_port(const struct net_server *s);
/* Connections open now (metrics). */
unsigned net_server_connections(const struct net_server *s);

/* Encodes `resp` (layout req->api->response, at the request's version) and queues it; the
 * request is finished. `resp` may live in req->arena. If the connection is gone, the
 * response is dropped quietly. */
void net_respond(struct net_request *req, const void *resp);

/* As net_respond, at an explicit version (ApiVersions' v0 fallback). */
void net_respond_as(struct net_request *req, int16_t version, const void *resp);

/* A byte range of a file to send with sendfile() as part of a response: set a RECORDS
 * field's `ext` to one of these (and its len to range->len) and answer with
 * net_respond_files. The range must stay valid until `sent` runs. */
struct net_file_range {
    int fd;
    int64_t pos;
    size_t len;
};

/* As net_respond, but RECORDS fields whose ext points to a struct net_file_range go from the
 * file to the socket without passing through user space. `sent(arg)` runs exactly once,
 * after the last byte was handed to the kernel or the connection was dropped: release the
 * ranges there. */
void net_respond_files(struct net_request *req, const void *resp, void (*sent)(void *arg),
                       void *arg);

/* Answers `req` with `resp` (NULL: no answer) after `delay_ms`, then closes its connection
 * once the answer is written: a failed authentication (connection.failed.authentication.
 * delay.ms), so that a client guessing passwords gets one try per delay per connection.
 * Nothing more is read from the connection meanwhile; the delay runs on the loop's timers.
 * A detached request is answered at once (its connection is not real). */
void net_respond_close(struct net_request *req, const void *resp, int64_t delay_ms);
/* KIP-219's muted channel: the request's connection is not read for `ms` from now (a later
 * call may extend it, never shorten it); its answers still go out. For a quota's throttle
 * time, given in the answer's ThrottleTimeMs. No effect on a detached request, a closing
 * connection or ms <= 0. The request itself is not finished by this. */
void net_mute(struct net_request *req, int64_t ms);

/* Holds the request's connection's input: no later request of it is handed to a handler
 * (nor read) until net_release_input, so one whose work goes on elsewhere (a produced batch
 * decompressed on the thread pool) still comes before them, as the client sent them. Holds
 * count; each takes one release, before the request is finished. No effect on a detached
 * request. */
void net_hold_input(struct net_request *req);
void net_release_input(struct net_request *req);

/* Finishes a request that gets no response (Produce with acks=0). */
void net_finish(struct net_request *req);

/* Finishes the request and closes its connection (malformed or hostile input). Requests of
 * other connections are untouched. */
void net_close_connection(struct net_request *req);

/* Asks to be told when the request's connection closes while the request is unfinished,
 * so that a request parked for later (a long-poll Fetch, an acks=all Produce) can give up
 * early and free what it holds. `cb(arg)` runs at most once, from the loop once the
 * connection is closed (never from within a net_* call), and only if `req` is still
 * unfinished then; `req` stays valid and must still be finished (net_finish; any answer is
 * dropped). A second call replaces the hook; cb NULL removes it. Returns false, registering
 * nothing, when the connection is already closing: finish the request now. */
bool net_request_on_close(struct net_request *req, void (*cb)(void *arg), void *arg);

/* Stops listening, closes every connection, and calls cb once all handles are closed.
 * Requests still held by handlers stay valid until finished; their answers are dropped. */
void net_server_stop(struct net_server *s, void (*cb)(void *arg), void *arg);

/* ---- detached requests: handlers driven without a socket (unit tests) ------------------ */

/* How a detached request ended. */
enum net_detached_end {
    NET_DETACHED_RESPONDED, /* net_respond*: `resp` is the answer */
    NET_DETACHED_FINISHED,  /* net_finish, or an answer after net_request_detached_close */
    NET_DETACHED_CLOSED,    /* net_close_connection, or an answer that would not encode */
};

/* Told once, when the request is finished: `resp` (layout api->response at `version`) is
 * valid only during the call and only for NET_DETACHED_RESPONDED (NULL otherwise). The
 * request is freed when this returns (a net_respond_files `sent` callback runs just after). */
typedef void (*net_detached_cb)(void *arg, enum net_detached_end how, int16_t version,
                                const void *resp);

/* A request of API `api_key` at `version` that belongs to no connection, for calling a
 * handler directly: `body` is the decoded request (layout api->request) and lives in
 * `arena`, which the request takes (freed when it is finished, as for a real request). The
 * net_* calls on it behave as on a request read from a socket, except that the answer is
 * encoded (to check it) and handed to cb instead of written. Returns NULL (arena freed) on
 * out of memory or an API or version proto does not declare. */
struct net_request *net_request_detached_new(int16_t api_key, int16_t version, void *body,
                                             struct arena *arena, net_detached_cb cb, void *arg);

/* Plays "the client closed its connection" on an unfinished detached request: runs the hook
 * of net_request_on_close, if one is registered (from within this call, as the loop would);
 * any answer given afterwards is dropped (NET_DETACHED_FINISHED). */
void net_request_detached_close(struct net_request *req);

/* ---- outbound client: requests to other brokers and to the active controller ----------- */

struct tclock;
struct net_client;

/* The node id that means "the active controller, wherever it is now": the resolver is asked
 * for its address at every connection attempt, so a moved controller is found again after
 * the next disconnect. */
#define NET_CLIENT_CONTROLLER (-2)

/* Fills host (NUL-terminated, numeric IPv4 or IPv6) and *port for `node_id` (a broker id or
 * NET_CLIENT_CONTROLLER). Returns 0, or non-zero when the node's address is not known yet
 * (the attempt then counts as a failed connection and backs off). */
typedef int (*net_client_resolve_cb)(void *arg, int32_t node_id, char *host, size_t host_len,
                                     int *port);

struct net_client_options {
    struct tclock *clock;  /* every timeout and backoff; borrowed, must outlive the client */
    const char *client_id; /* request header ClientId; copied */
    net_client_resolve_cb resolve;
    void *resolve_arg;
    /* request.timeout.ms: a request not answered this long after net_client_send fails with
     * ERR_REQUEST_TIMED_OUT; if it was already sent, its connection is closed (the answer
     * could no longer be told apart from a late one). 0: 30000. */
    int64_t request_timeout_ms;
    /* reconnect.backoff.ms / reconnect.backoff.max.ms: after a failed attempt or a lost
     * connection the next attempt waits reconnect.backoff.ms, doubling per consecutive
     * failure up to the max; a successful connection resets it. 0: 50 and 1000. */
    int64_t reconnect_backoff_ms, reconnect_backoff_max_ms;
    size_t max_frame; /* largest response accepted; 0: 100 MiB */
    /* socket.connection.setup.timeout.ms / .max.ms (KIP-601): a connection attempt not set
     * up within the timeout is given up (and backed off, as a failed one); the timeout
     * doubles per consecutive attempt given up, to the max, and a connection set up resets
     * it. Without it an attempt whose SYNs a cut network drops waits for the kernel's
     * retries (about two minutes), and one made during a cut may still be waiting long
     * after the heal. 0: 10000 and 30000. */
    int64_t connect_timeout_ms, connect_timeout_max_ms;
    /* The inter-broker listener's security (security.inter.broker.protocol). With `tls` (a
     * client context, net/tls.h; borrowed, must outlive the client) every connection speaks
     * TLS and the peer is verified as the context says. With sasl_mechanism ("PLAIN",
     * "SCRAM-SHA-256", "SCRAM-SHA-512") every connection authenticates as sasl_username /
     * sasl_password (copied): SaslHandshake v1 then SaslAuthenticate v2 (twice for SCRAM,
     * whose server signature must verify), after TLS. Nothing queued is written before
     * both are done; the connection setup timeout covers them, and a failed handshake or
     * authentication backs off as a failed connect does. NULL: plaintext, no SASL. */
    struct tls_ctx *tls;
    /* With tls: the peer's certificate must also name the address connected to (the
     * resolver's host), as ssl.endpoint.identification.algorithm=https. */
    bool tls_verify_host;
    const char *sasl_mechanism, *sasl_username, *sasl_password;
};

/* The answer to one request: err 0 and `resp` (layout api->response at the version sent,
 * valid only during the call: copy what must live longer), or err != 0 and resp NULL:
 * ERR_REQUEST_TIMED_OUT, ERR_NETWORK_EXCEPTION (the connection was lost after the request
 * was written: it may or may not have been processed), ERR_PARSE (undecodable answer) or
 * ERR_SHUTDOWN (net_client_stop). The callback may send further requests. */
typedef void (*net_client_cb)(void *arg, int err, const void *resp);

/* Creates a client on `loop`. No connection is made until a request needs one. Returns 0
 * and *out, ERR_NOMEM, or ERR_UNSUPPORTED_SASL_MECHANISM (a sasl_mechanism not one of those
 * three, or one without a user name). */
int net_client_new(uv_loop_t *loop, const struct net_client_options *opts, struct net_client **out);

/* Sends `req` (layout of API `api_key`'s request at `version`) to `node_id` with a fresh
 * correlation id, connecting first if needed; requests to one node are written in call
 * order on one connection. `req` is encoded before this returns (the caller keeps it).
 * Returns 0, after which cb runs exactly once (never from inside this call), or
 * ERR_UNSUPPORTED_VERSION (API or version not declared in proto), ERR_NOMEM or ERR_SHUTDOWN
 * (cb is then never called). */
int net_client_send(struct net_client *c, int32_t node_id, int16_t api_key, int16_t version,
                    const void *req, net_client_cb cb, void *arg);

/* Closes the connection to `node_id`, if any, so that the next attempt resolves its address
 * again (e.g. after NOT_CONTROLLER: the controller moved). Requests already written fail
 * with ERR_NETWORK_EXCEPTION; waiting ones are sent on a new connection, made at once (no
 * backoff: nothing failed). */
void net_client_disconnect(struct net_client *c, int32_t node_id);

/* Fails every request still pending with ERR_SHUTDOWN (their callbacks run before this
 * returns), closes every connection and calls done(arg) once every handle is closed; the
 * client is freed by then. */
void net_client_stop(struct net_client *c, void (*done)(void *arg), void *arg);

#endif
