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

struct arena;
struct tclock;
struct net_server;

/* One request in flight. Everything it points to (header strings, body, arena) lives until
 * the request is finished with net_respond, net_finish or net_close_connection. */
struct net_request {
    struct RequestHeader hdr;
    const struct proto_api *api; /* never NULL */
    /* False only for ApiVersions at a version outside the declared range: the body is not
     * decoded (body == NULL) and the answer must be a v0 response (net_respond_as). */
    bool version_supported;
    void *body;          /* the decoded request, layout api->request */
    struct arena *arena; /* per-request allocations, freed when the request finishes */
    const char *peer;    /* "ip:port" of the client, for log lines */
};

/* Called for every decoded request; the callee must eventually finish it exactly once. */
typedef void (*net_request_cb)(void *ctx, struct net_request *req);

struct net_options {
    struct tclock *clock; /* time service (the idle timer); borrowed */
    const char *host;
    int port;
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
};

/* Binds and listens. Returns 0 and *out, or an error after logging why. */
int net_server_start(uv_loop_t *loop, const struct net_options *opts, net_request_cb cb, void *ctx,
                     struct net_server **out);

/* The port actually bound (useful when opts->port was 0). */
int net_server_port(const struct net_server *s);

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

#endif
