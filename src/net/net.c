/* SPDX-License-Identifier: Apache-2.0 */
/* net: listener, connections, framing, in-order responses and connection limits.
 *
 * A frame on the wire:
 **   OFFSET  SIZE  FIELD
 **        0     4  size: bytes after this field (int32, big-endian; 0..max_frame)
 **        4  size  request header (proto_decode_request_header) then request body
 *
 * Reading: while a frame body is incomplete and large, libuv reads straight into that
 * frame's buffer (no copy), which grows geometrically as bytes arrive, capped at the
 * announced size; otherwise it reads into one scratch buffer shared by all connections (the
 * read callback consumes it before returning, so sharing is safe on one loop). Requests of a
 * connection are kept in arrival order; a finished request's response is written only once
 * every earlier request of that connection has been answered (net_out.c).
 *
 * Limits, so that one client cannot starve or bloat the broker:
 * - A connection is full when its requests not yet answered plus its answers not yet handed
 *   to the kernel reach max_inflight, or those answers hold NET_OUT_MAX_BYTES of memory.
 *   A full connection is not read; bytes already read past the last frame it dispatched wait
 *   in its backlog (at most one scratch buffer) and are fed once it has room again.
 * - connections.max.idle.ms (opts.max_idle_ms): a connection with no byte read or written
 *   for that long, and no request held by a handler, is closed. A frame must also arrive
 *   whole within that time of its first byte while the connection is being read: a sender
 *   that trickles a frame byte by byte cannot hold a connection and its buffer for ever.
 * - Lines about client misbehaviour are rate-limited per kind across all connections.
 *
 * TLS listeners put tls.h between the socket and the framing: reads go to a ciphertext
 * scratch buffer and into tls_conn_feed, and the framing takes plaintext from tls_conn_read
 * (conn_tls_input) instead of the socket; the output side is net_out.c's. The handshake must
 * end within connections.max.idle.ms of the accept, however slowly its bytes trickle in. */
#include "net.h"

#include <assert.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/err.h"
#include "base/slog.h"
#include "base/sysio.h"
#include "net_int.h"
#include "proto/proto_msgs.h"

/* A frame of at most FRAME_EAGER bytes gets all of its buffer at once. A larger one's starts
 * at FRAME_MIN_CAP and doubles as bytes arrive, but once bytes have come it makes room for
 * FRAME_GROWTH times them at once (all of the frame when that covers it): a 512 KiB Produce
 * whose first few KiB came with its size is read in one more read, not in a read per
 * doubling. (A buffer that grows is often moved by realloc: a 64 KiB Produce whose size
 * came with the end of a read was copied two thirds over.) A frame of at least
 * FRAME_SLACK_MIN bytes gets FRAME_SLACK bytes more than it needs, so that the read of its
 * last bytes can take the next frame's size and first bytes with it (on_read hands those
 * on), and the frame after it is read whole into a buffer of its size (on_alloc): from
 * there up, one read per frame that copies 2 x FRAME_SLACK costs less than reading several
 * frames into the scratch and copying all of them out. */
#define FRAME_MIN_CAP 4096
#define FRAME_GROWTH 128
#define FRAME_EAGER (128 * 1024)
#define FRAME_SLACK 8192
#define FRAME_SLACK_MIN (32 * 1024)

static void server_maybe_done(struct net_server *s);

void conn_unref(struct net_conn *c)
{
    struct net_server *s = c->srv;
    if (--c->refs > 0)
        return;
    if (c->session.auth_free)
        c->session.auth_free(c->session.auth);
    if (c->session.app_free)
        c->session.app_free(c->session.app);
    tls_conn_free(c->tls);
    frame_free(c->frame);
    free(c->spec);
    free(c->backlog);
    free(c);
    s->n_conns--;
    server_maybe_done(s);
}

static void server_maybe_done(struct net_server *s)
{
    if (!s->stopping || s->handles > 0 || s->n_conns > 0)
        return;
    void (*cb)(void *) = s->stop_cb;
    void *arg = s->stop_arg;
    free(s->tls_scratch);
    free(s);
    if (cb)
        cb(arg);
}

static void req_free(struct req_int *r)
{
    if (r->sent)
        r->sent(r->sent_arg); /* never queued: the connection went first */
    free(r->holes);
    arena_free(r->pub.arena);
    frame_free(r->frame);
    free(r->resp);
    free(r);
}

/* Holds the connection's answers until the check phase that follows this poll phase
 * (on_uncork), which writes them together. */
static void conn_cork(struct net_conn *c)
{
    struct net_server *s = c->srv;
    c->corked = true;
    c->refs++;
    c->cork_next = s->cork_head;
    s->cork_head = c;
}

/* Writes the answers of finished requests at the head of the queue, in order. */
static void conn_flush(struct net_conn *c)
{
    /* Hold the connection: finishing its last request may otherwise free it mid-loop. */
    c->refs++;
    while (c->head && c->head->done) {
        struct req_int *r = c->head;
        c->head = r->next;
        if (c->head == NULL)
            c->tail = NULL;
        c->inflight--;
        if (r->resp && !c->closing)
            conn_queue_response(c, r);
        req_free(r);
        conn_unref(c);
    }
    if (!c->corked) {
        /* Finished in the poll phase (another connection's read, a pool job): written with
         * the other corked answers at its end, at once (uv_try_write) rather than through
         * a uv_write, whose completion costs an epoll_ctl; anywhere else (a timer) now. */
        if (c->srv->in_poll && !c->srv->stopping && !c->closing)
            conn_cork(c);
        else
            conn_pump(c);
    }
    conn_input(c);
    conn_close_if_written(c);
    conn_unref(c);
}

void conn_close_if_written(struct net_conn *c)
{
    if (c->close_when_written && !c->closing && c->head == NULL && c->out_head == NULL &&
        c->writes == 0 && !c->sending_file)
        conn_close(c);
}

static void req_finish(struct req_int *r)
{
    r->done = true;
    conn_flush(r->conn);
}

/* Encodes the answer to r into r->resp (a raw SASL token's as a bare frame). Returns 0, or
 * -1 after logging why (the caller closes the connection). */
/* net_request.throttle_ms: `resp`, or a copy of its top level (*copy, malloc()ed, the
 * caller frees it) whose ThrottleTimeMs is raised to it. `resp` itself when nothing is owed,
 * the version has no ThrottleTimeMs, it already carries as much, or out of memory (the
 * connection is muted all the same; only the client is not told). */
static const void *owed_throttle(const struct net_request *pub, int16_t version, const void *resp,
                                 void **copy)
{
    const struct proto_struct *s = pub->api->response;

    *copy = NULL;
    if (pub->throttle_ms <= 0 || resp == NULL || s == NULL)
        return resp;
    for (uint16_t i = 0; i < s->nfields; i++) {
        const struct proto_field *f = &s->fields[i];
        int32_t have;
        if (f->type != PROTO_INT32 || f->tag >= 0 || version < f->min_version ||
            version > f->max_version || strcmp(f->name, "ThrottleTimeMs") != 0)
            continue;
        memcpy(&have, (const uint8_t *)resp + f->offset, sizeof have);
        if (have >= pub->throttle_ms || (*copy = malloc(s->size)) == NULL)
            return resp;
        memcpy(*copy, resp, s->size);
        memcpy((uint8_t *)*copy + f->offset, &pub->throttle_ms, sizeof pub->throttle_ms);
        return *copy;
    }
    return resp;
}

static int encode_answer(struct req_int *r, int16_t version, const void *resp, bool files)
{
    struct net_request *pub = &r->pub;
    void *copy;
    if (pub->raw_sasl) {
        /* A raw SASL token's answer: its bytes in a size-prefixed frame, nothing else. */
        const struct SaslAuthenticateResponse *rs = resp;
        size_t n = rs->AuthBytes.len > 0 ? (size_t)rs->AuthBytes.len : 0;
        if ((r->resp = malloc(4 + n)) == NULL) {
            slog_error("net", "out of memory answering %s; closing", r->conn->peer);
            return -1;
        }
        r->resp[0] = (uint8_t)(n >> 24);
        r->resp[1] = (uint8_t)(n >> 16);
        r->resp[2] = (uint8_t)(n >> 8);
        r->resp[3] = (uint8_t)n;
        if (n)
            memcpy(r->resp + 4, rs->AuthBytes.data, n);
        r->resp_len = 4 + n;
        return 0;
    }
    resp = owed_throttle(pub, version, resp, &copy);
    int rc = files ? proto_encode_response_holes(pub->api, version, pub->hdr.CorrelationId, resp,
                                                 &r->resp, &r->resp_len, &r->holes, &r->n_holes)
                   : proto_encode_response(pub->api, version, pub->hdr.CorrelationId, resp,
                                           &r->resp, &r->resp_len);
    free(copy);
    if (rc != 0) {
        slog_error("net", "cannot encode %s v%d response for %s: %s; closing", pub->api->name,
                   version, r->conn->peer, err_name(rc));
        return -1;
    }
    return 0;
}

/* The request is being finished (answered, or not): its times, when they are taken. A
 * request finished from within its own callback is done with its local work now. */
static void times_finished(struct req_int *r, bool answered)
{
    struct net_server *s = r->conn->srv;
    if (s->opts.on_sent == NULL)
        return;
    uint64_t now = uv_hrtime();
    for (struct net_handler_frame *fr = s->handlers; fr; fr = fr->up)
        if (fr->r == r) {
            fr->finished = true;
            r->times.handled_ns = now;
        }
    if (answered)
        r->times.responded_ns = now;
}

/* Hands r to the request callback; takes the times around it when they are wanted. */
static void call_handler(struct net_server *s, struct req_int *r)
{
    if (s->opts.on_sent == NULL) {
        s->cb(s->ctx, &r->pub);
        return;
    }
    /* The frame tells whether r was finished (and maybe freed) inside the callback. */
    struct net_handler_frame fr = {.r = r, .up = s->handlers};
    s->handlers = &fr;
    r->times.api = r->pub.api;
    r->times.started_ns = uv_hrtime();
    s->cb(s->ctx, &r->pub);
    s->handlers = fr.up;
    if (!fr.finished)
        r->times.handled_ns = uv_hrtime();
}

static void respond(struct net_request *pub, int16_t version, const void *resp, bool files)
{
    struct req_int *r = (struct req_int *)pub;
    if (r->conn == NULL) {
        detached_finish(r, NET_DETACHED_RESPONDED, version, resp, files);
        return;
    }
    times_finished(r, true);
    if (r->conn->srv->opts.on_response)
        r->conn->srv->opts.on_response(r->conn->srv->opts.on_response_arg, pub, version, resp);
    if (!r->conn->closing && encode_answer(r, version, resp, files) != 0) {
        r->done = true;
        conn_close(r->conn);
        conn_flush(r->conn);
        return;
    }
    req_finish(r);
}

void net_respond_as(struct net_request *pub, int16_t version, const void *resp)
{
    respond(pub, version, resp, false);
}

void net_respond_files(struct net_request *pub, const void *resp, void (*sent)(void *arg),
                       void *arg)
{
    struct req_int *r = (struct req_int *)pub;
    r->sent = sent;
    r->sent_arg = arg;
    respond(pub, pub->hdr.RequestApiVersion, resp, true);
}

void net_respond(struct net_request *pub, const void *resp)
{
    net_respond_as(pub, pub->hdr.RequestApiVersion, resp);
}

/* The delay of net_respond_close is over: the answer goes out, then the connection closes. */
static void close_delay_over(struct net_conn *c)
{
    struct req_int *r = c->close_req;

    c->close_req = NULL;
    c->close_when_written = true;
    r->done = true;
    conn_flush(c);
}

static void on_close_delay(struct tclock_timer *t)
{
    struct net_conn *c = t->data;
    c->close_timer_armed = false;
    tclock_timer_close(&c->close_timer);
    close_delay_over(c);
}

void net_respond_close(struct net_request *pub, const void *resp, int64_t delay_ms)
{
    struct req_int *r = (struct req_int *)pub;
    struct net_conn *c = r->conn;

    if (c == NULL) {
        if (resp)
            detached_finish(r, NET_DETACHED_RESPONDED, pub->hdr.RequestApiVersion, resp, false);
        else
            detached_finish(r, NET_DETACHED_CLOSED, 0, NULL, false);
        return;
    }
    times_finished(r, resp != NULL);
    if (c->closing || c->close_req != NULL) {
        /* Already going (or going after an earlier answer): no answer for this one. */
        r->done = true;
        conn_flush(c);
        return;
    }
    if (resp) {
        if (c->srv->opts.on_response)
            c->srv->opts.on_response(c->srv->opts.on_response_arg, pub, pub->hdr.RequestApiVersion,
                                     resp);
        /* Encoded now: resp may live in the request's arena, but the answer is queued only
         * once the delay is over. */
        if (encode_answer(r, pub->hdr.RequestApiVersion, resp, false) != 0) {
            r->done = true;
            conn_close(c);
            conn_flush(c);
            return;
        }
    }
    c->close_req = r;
    conn_input(c); /* stops reading */
    if (delay_ms > 0) {
        tclock_timer_init(c->srv->opts.clock, &c->close_timer, on_close_delay, c);
        if (tclock_timer_start(&c->close_timer, delay_ms, 0) == 0) {
            c->close_timer_armed = true;
            return;
        }
        tclock_timer_close(&c->close_timer); /* out of memory: no delay then */
    }
    close_delay_over(c);
}

static void on_mute_over(struct tclock_timer *t)
{
    struct net_conn *c = t->data;
    c->muted = false;
    tclock_timer_close(&c->mute_timer);
    conn_input(c);
}

void net_mute(struct net_request *pub, int64_t ms)
{
    struct req_int *r = (struct req_int *)pub;
    struct net_conn *c = r->conn;
    struct tclock *clock;

    if (c == NULL || c->closing || ms <= 0)
        return;
    clock = c->srv->opts.clock;
    int64_t until = tclock_mono_ms(clock) + ms;
    if (c->muted && until <= c->mute_until)
        return;
    if (!c->muted)
        tclock_timer_init(clock, &c->mute_timer, on_mute_over, c);
    if (tclock_timer_start(&c->mute_timer, ms, 0) != 0) {
        if (!c->muted)
            tclock_timer_close(&c->mute_timer); /* out of memory: not muted then */
        return;
    }
    c->muted = true;
    c->mute_until = until;
    conn_input(c); /* stops reading */
}

void net_hold_input(struct net_request *pub)
{
    struct req_int *r = (struct req_int *)pub;
    if (r->conn != NULL)
        r->conn->held++;
}

void net_release_input(struct net_request *pub)
{
    struct req_int *r = (struct req_int *)pub;
    struct net_conn *c = r->conn;
    if (c == NULL || c->held == 0)
        return;
    if (--c->held == 0)
        conn_input(c); /* reads again, or feeds the backlog first (on the loop's idle turn) */
}

void net_finish(struct net_request *pub)
{
    struct req_int *r = (struct req_int *)pub;
    if (r->conn == NULL) {
        detached_finish(r, NET_DETACHED_FINISHED, 0, NULL, false);
        return;
    }
    times_finished(r, false);
    req_finish(r);
}

void net_close_connection(struct net_request *pub)
{
    struct req_int *r = (struct req_int *)pub;
    if (r->conn == NULL) {
        detached_finish(r, NET_DETACHED_CLOSED, 0, NULL, false);
        return;
    }
    times_finished(r, false);
    r->done = true;
    conn_close(r->conn);
    conn_flush(r->conn);
}

bool net_request_on_close(struct net_request *pub, void (*cb)(void *arg), void *arg)
{
    struct req_int *r = (struct req_int *)pub;
    if (r->conn ? r->conn->closing : r->detached_closed)
        return false;
    r->on_close = cb;
    r->on_close_arg = arg;
    return true;
}

static void on_conn_closed(uv_handle_t *h)
{
    struct net_conn *c = h->data;
    struct req_int *r = c->head;

    /* Holders of unfinished requests asked to hear of the close. A hook usually finishes its
     * request, which unlinks it (and maybe others before it): walk again from the head after
     * each one. The handle's reference keeps `c` alive until the end. */
    while (r) {
        if (r->done || r->on_close == NULL) {
            r = r->next;
            continue;
        }
        void (*cb)(void *) = r->on_close;
        r->on_close = NULL;
        cb(r->on_close_arg);
        r = c->head;
    }
    /* An answer net_respond_close was holding goes with the connection. */
    if (c->close_req) {
        c->close_req->done = true;
        c->close_req = NULL;
        conn_flush(c);
    }
    conn_unref(c);
}

void conn_close(struct net_conn *c)
{
    struct net_server *s = c->srv;
    if (c->closing)
        return;
    c->closing = true;
    if (c->close_timer_armed) {
        c->close_timer_armed = false;
        tclock_timer_close(&c->close_timer);
    }
    if (c->muted) {
        c->muted = false;
        tclock_timer_close(&c->mute_timer);
    }
    if (c->prev)
        c->prev->next = c->next;
    else
        s->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    uv_close((uv_handle_t *)&c->tcp, on_conn_closed);
    out_discard(c);
}

/* Decodes one complete frame and hands it to the application; takes ownership of frame. */
static void conn_dispatch(struct net_conn *c, uint8_t *frame, size_t len)
{
    struct net_server *s = c->srv;
    struct req_int *r = calloc(1, sizeof *r);
    size_t hdr_len = 0;
    int rc;

    /* A decoded request can take more memory than its wire form (empty strings decode to
     * pointers); bound it by a multiple of the frame so a hostile frame fails itself. */
    size_t limit = len * 16 + (1u << 20);
    if (limit > (256u << 20))
        limit = 256u << 20;
    if (r == NULL || (r->pub.arena = arena_new(limit)) == NULL) {
        slog_error("net", "out of memory for a request from %s; closing", c->peer);
        free(r);
        frame_free(frame);
        conn_close(c);
        return;
    }
    r->conn = c;
    r->frame = frame;
    if (s->opts.on_sent)
        r->times.received_ns = uv_hrtime();
    r->pub.peer = c->peer;
    r->pub.session = &c->session;
    c->refs++;
    c->inflight++;
    if (c->tail)
        c->tail->next = r;
    else
        c->head = r;
    c->tail = r;

    if (c->session.sasl_raw) {
        /* A raw SASL token after a SaslHandshake v0: no header, the frame is the token. */
        struct SaslAuthenticateRequest *body = arena_alloc(r->pub.arena, sizeof *body);
        if (body == NULL)
            goto err_close;
        body->AuthBytes.data = frame;
        body->AuthBytes.len = (int32_t)len;
        body->AuthBytes.ext = NULL;
        r->pub.hdr.RequestApiKey = PROTO_API_SaslAuthenticate;
        r->pub.hdr.RequestApiVersion = 0;
        r->pub.api = proto_api_find(PROTO_API_SaslAuthenticate);
        r->pub.version_supported = true;
        r->pub.raw_sasl = true;
        r->pub.body = body;
        call_handler(s, r);
        return;
    }
    rc = proto_decode_request_header(frame, len, &r->pub.hdr, &hdr_len, r->pub.arena);
    if (rc != 0) {
        slog_warn_limited(&s->warn.header, NET_WARN_INTERVAL_MS, "net",
                          "malformed request header from %s (%s); closing", c->peer, err_name(rc));
        goto err_close;
    }
    r->pub.api = proto_api_find(r->pub.hdr.RequestApiKey);
    if (r->pub.api == NULL) {
        /* The client id is the client's own bytes: escaped (slog_line would too) and cut, so
         * that a 32 KiB id cannot crowd the rest of the line out. */
        const char *id = r->pub.hdr.ClientId ? r->pub.hdr.ClientId : "-";
        char cid[160];
        slog_warn_limited(&s->warn.api_key, NET_WARN_INTERVAL_MS, "net",
                          "unknown API key %d from %s (client %s); closing",
                          r->pub.hdr.RequestApiKey, c->peer,
                          slog_escape(id, strlen(id), cid, sizeof cid));
        goto err_close;
    }
    int16_t v = r->pub.hdr.RequestApiVersion;
    r->pub.version_supported = v >= r->pub.api->min_version && v <= r->pub.api->max_version;
    if (!r->pub.version_supported) {
        /* Only ApiVersions has a defined answer to an unknown version (a v0 error response
         * listing our ranges); for any other API the client broke negotiation. */
        if (r->pub.api->key == 18) {
            call_handler(s, r);
            return;
        }
        slog_warn_limited(&s->warn.version, NET_WARN_INTERVAL_MS, "net",
                          "unsupported %s version %d from %s; closing", r->pub.api->name, v,
                          c->peer);
        goto err_close;
    }
    rc = proto_decode_request(r->pub.api, v, frame + hdr_len, len - hdr_len, &r->pub.body,
                              r->pub.arena);
    if (rc != 0) {
        slog_warn_limited(&s->warn.body, NET_WARN_INTERVAL_MS, "net",
                          "malformed %s v%d request from %s (%s); closing", r->pub.api->name, v,
                          c->peer, err_name(rc));
        goto err_close;
    }
    call_handler(s, r);
    return;

err_close:
    net_close_connection(&r->pub);
}

/* Whether the connection holds as much as it may (see the file comment): reading pauses
 * while it does, so a client that does not read its answers cannot grow them unbounded. A
 * muted connection (net_mute) or one holding its input (net_hold_input) counts as full. */
static bool conn_full(const struct net_conn *c)
{
    return c->muted || c->held > 0 || c->inflight + c->out_frames >= c->srv->opts.max_inflight ||
           c->out_bytes >= NET_OUT_MAX_BYTES;
}

/* Makes room for `want` bytes of the current frame (want <= frame_len), of which `received`
 * have come or are being copied in: all of a frame of at most FRAME_EAGER bytes; a larger
 * one's doubles from FRAME_MIN_CAP, or grows to FRAME_GROWTH times `received` if that is
 * more, never past the announced size (plus FRAME_SLACK for a large frame); so a frame
 * header announcing 100 MB costs FRAME_EAGER or FRAME_GROWTH times the bytes received,
 * whichever is more, at most (the pages not yet written are not even resident).
 * Returns 0 or ERR_NOMEM. */
static int frame_reserve(struct net_conn *c, size_t want, size_t received)
{
    size_t cap = c->frame_cap ? c->frame_cap : FRAME_MIN_CAP;
    size_t limit = c->frame_len + (c->frame_len >= FRAME_SLACK_MIN ? FRAME_SLACK : 0);
    uint8_t *p;

    if (want <= c->frame_cap && c->frame != NULL)
        return 0;
    while (cap < want)
        cap *= 2;
    if (c->frame_len <= FRAME_EAGER || received >= c->frame_len / FRAME_GROWTH)
        cap = limit;
    else if (cap < received * FRAME_GROWTH)
        cap = received * FRAME_GROWTH;
    if (cap > limit)
        cap = limit;
    p = realloc(c->frame ? c->frame - FRAME_HEAD : NULL, FRAME_HEAD + cap);
    if (p == NULL)
        return ERR_NOMEM;
    c->frame = p + FRAME_HEAD;
    c->frame_cap = cap;
    return 0;
}

void frame_free(uint8_t *frame)
{
    if (frame)
        free(frame - FRAME_HEAD);
}

/* Hands the completed frame to conn_dispatch and resets the framer for the next one. */
static void conn_frame_done(struct net_conn *c)
{
    size_t len = c->frame_len;
    if (frame_reserve(c, len, len) != 0) { /* a 0-byte frame still gets a buffer */
        slog_error("net", "out of memory for a frame from %s; closing", c->peer);
        conn_close(c);
        return;
    }
    uint8_t *f = c->frame;
    c->frame = NULL;
    c->frame_cap = c->frame_len = c->frame_got = 0;
    c->in_frame = false;
    c->next_guess = len >= FRAME_SLACK_MIN ? len : 0;
    conn_dispatch(c, f, len);
}

/* Reads a size field from p[0..n); returns the bytes used. On a complete, valid size the
 * connection is in_frame; on an invalid one it is closed. */
static size_t conn_take_size(struct net_conn *c, const uint8_t *p, size_t n)
{
    struct net_server *s = c->srv;
    size_t used = 0;

    if (c->size_got == 0)
        c->frame_start_ms = uv_now(s->loop);
    while (c->size_got < 4 && used < n)
        c->size_buf[c->size_got++] = p[used++];
    if (c->size_got < 4)
        return used;
    int32_t size = (int32_t)((uint32_t)c->size_buf[0] << 24 | (uint32_t)c->size_buf[1] << 16 |
                             (uint32_t)c->size_buf[2] << 8 | c->size_buf[3]);
    c->size_got = 0;
    if (c->tls == NULL && c->size_buf[0] == 0x16 && c->size_buf[1] == 0x03 &&
        (size < 0 || (size_t)size > s->opts.max_frame)) {
        /* A TLS record header (handshake, version 3.x): a client configured for SSL. */
        slog_warn_limited(&s->warn.tls_hello, NET_WARN_INTERVAL_MS, "net",
                          "TLS handshake from %s on listener %s, which is not a TLS listener "
                          "(security.protocol=SSL against a PLAINTEXT port?); closing",
                          c->peer, c->session.listener);
        conn_close(c);
        return used;
    }
    if (size < 0 || (size_t)size > s->opts.max_frame) {
        slog_warn_limited(&s->warn.frame_size, NET_WARN_INTERVAL_MS, "net",
                          "frame of %d bytes from %s is outside 0..%zu "
                          "(socket.request.max.bytes); closing",
                          size, c->peer, s->opts.max_frame);
        conn_close(c);
        return used;
    }
    c->in_frame = true;
    c->frame_len = (size_t)size;
    c->frame_got = 0;
    return used;
}

/* Frames p[0..n) and dispatches every complete frame, until the bytes run out or the
 * connection is full or closed. Returns the bytes used; the caller keeps the rest. */
static size_t conn_feed(struct net_conn *c, const uint8_t *p, size_t n)
{
    size_t used = 0;

    while (used < n && !c->closing && !conn_full(c)) {
        if (!c->in_frame) {
            used += conn_take_size(c, p + used, n - used);
        } else {
            size_t take = c->frame_len - c->frame_got;
            if (take > n - used)
                take = n - used;
            if (frame_reserve(c, c->frame_got + take, c->frame_got + take) != 0) {
                slog_error("net", "out of memory for a %zu-byte frame from %s; closing",
                           c->frame_len, c->peer);
                conn_close(c);
                break;
            }
            memcpy(c->frame + c->frame_got, p + used, take);
            c->frame_got += take;
            used += take;
        }
        if (c->in_frame && c->frame_got == c->frame_len)
            conn_frame_done(c);
    }
    return used;
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    struct net_conn *c = h->data;
    (void)suggested;
    if (c->tls) {
        *buf = uv_buf_init((char *)c->srv->tls_scratch, SCRATCH_SIZE);
        return;
    }
    if (c->in_frame && c->frame_len - c->frame_got >= 4096) {
        /* Large remainder: read straight into the frame (and its slack), no copy. The
         * buffer grows only once what it has is filled, so memory stays within
         * FRAME_GROWTH times the bytes received. */
        if (c->frame_cap - c->frame_got >= 4096 ||
            frame_reserve(c, c->frame_got + 4096, c->frame_got) == 0) {
            *buf = uv_buf_init((char *)c->frame + c->frame_got,
                               (unsigned)(c->frame_cap - c->frame_got));
            return;
        }
        /* Out of memory: the scratch path fails the connection with a line. */
    }
    if (!c->in_frame && c->size_got == 0 && c->next_guess > 0) {
        /* The next frame, size field and all, as large as the last one and its slack. */
        size_t want = FRAME_HEAD + c->next_guess + FRAME_SLACK;
        if (c->spec && c->spec_cap != want) {
            free(c->spec);
            c->spec = NULL;
        }
        if (c->spec == NULL && (c->spec = malloc(want)) != NULL)
            c->spec_cap = want;
        if (c->spec) {
            *buf = uv_buf_init((char *)c->spec, (unsigned)want);
            return;
        }
    }
    *buf = uv_buf_init((char *)c->srv->scratch, SCRATCH_SIZE);
}

/* A TLS connection failed (not TLS, a refused certificate, an alert): one rate-limited line,
 * the alert OpenSSL may have for the peer, then the close. */
static void conn_tls_fail(struct net_conn *c)
{
    struct net_server *s = c->srv;
    const char *why = tls_conn_error(c->tls);
    if (!c->tls_up)
        slog_warn_limited(tls_conn_plaintext(c->tls) ? &s->warn.tls_plain : &s->warn.tls,
                          NET_WARN_INTERVAL_MS, "net",
                          "TLS handshake with %s on listener %s failed: %s; closing", c->peer,
                          c->session.listener, why);
    else if (why[0] != '\0') /* else the client's close_notify: an orderly close */
        slog_line_limited(&s->warn.tls, NET_WARN_INTERVAL_MS, SLOG_INFO, "net",
                          "TLS connection from %s on listener %s failed: %s; closing", c->peer,
                          c->session.listener, why);
    conn_tls_flush(c);
    c->close_when_written = true;
    conn_input(c); /* stops reading */
    conn_close_if_written(c);
}

/* The handshake just completed: the principal of a listener without SASL is the client
 * certificate's (a subject no mapping rule applies to closes the connection). */
static int conn_tls_up(struct net_conn *c)
{
    struct net_server *s = c->srv;
    char p[NET_PRINCIPAL_MAX];

    c->tls_up = true;
    if (tls_conn_principal(c->tls, p, sizeof p) != 0) {
        slog_warn_limited(&s->warn.tls, NET_WARN_INTERVAL_MS, "net",
                          "no ssl.principal.mapping.rules rule applies to the certificate "
                          "subject '%s' of %s on listener %s; closing",
                          p, c->peer, c->session.listener);
        conn_close(c);
        return -1;
    }
    if (!c->session.sasl) {
        memcpy(c->session.principal, p, sizeof p);
        if (strcmp(p, "User:ANONYMOUS") != 0)
            slog_info("net", "TLS client %s on listener %s authenticated as %s", c->peer,
                      c->session.listener, p);
    }
    return 0;
}

void conn_tls_input(struct net_conn *c)
{
    struct net_server *s = c->srv;

    c->tls_in_pending = false;
    while (!c->closing && !c->close_when_written && c->close_req == NULL) {
        if (conn_full(c) || c->backlog) {
            c->tls_in_pending = true;
            return;
        }
        if (c->in_frame && c->frame_len - c->frame_got >= 4096 &&
            (c->frame_cap - c->frame_got >= 4096 ||
             frame_reserve(c, c->frame_got + 4096, c->frame_got) == 0)) {
            /* Large remainder: decrypted straight into the frame, as on_alloc reads it (but
             * never into its slack: the next frame's bytes go through the scratch). */
            size_t room =
                (c->frame_cap < c->frame_len ? c->frame_cap : c->frame_len) - c->frame_got;
            long n = tls_conn_read(c->tls, c->frame + c->frame_got, room);
            if (n <= 0) {
                if (n < 0)
                    conn_tls_fail(c);
                return;
            }
            c->frame_got += (size_t)n;
            if (c->frame_got == c->frame_len)
                conn_frame_done(c);
            continue;
        }
        long n = tls_conn_read(c->tls, s->scratch, SCRATCH_SIZE);
        if (n == 0)
            return;
        if (n < 0) {
            conn_tls_fail(c);
            return;
        }
        size_t used = conn_feed(c, s->scratch, (size_t)n);
        if (used < (size_t)n && !c->closing) {
            c->backlog = malloc((size_t)n - used);
            if (c->backlog == NULL) {
                slog_error("net", "out of memory reading from %s; closing", c->peer);
                conn_close(c);
                return;
            }
            memcpy(c->backlog, s->scratch + used, (size_t)n - used);
            c->backlog_len = (size_t)n - used;
            c->backlog_off = 0;
        }
    }
}

/* Ciphertext read from a TLS connection's socket. */
static void conn_tls_read(struct net_conn *c, const uint8_t *p, size_t n)
{
    c->refs++; /* a request answered at once may close the connection mid-way */
    if (tls_conn_feed(c->tls, p, n) != 0) {
        conn_tls_fail(c);
        goto out;
    }
    if (!c->tls_up && tls_conn_established(c->tls) && conn_tls_up(c) != 0)
        goto out;
    conn_tls_flush(c); /* handshake records */
    if (c->tls_up)
        conn_tls_input(c);
    conn_pump(c);
    conn_input(c);
out:
    conn_unref(c);
}

/* Frames the n bytes just read into the server's scratch; what a full connection cannot take
 * yet is kept in its backlog (the scratch is shared). Returns -1 if the connection closed
 * for want of memory. */
static int conn_feed_copy(struct net_conn *c, const uint8_t *p, size_t n)
{
    size_t used = conn_feed(c, p, n);
    if (used < n && !c->closing) {
        c->backlog = malloc(n - used);
        if (c->backlog == NULL) {
            slog_error("net", "out of memory reading from %s; closing", c->peer);
            conn_close(c);
            return -1;
        }
        memcpy(c->backlog, p + used, n - used);
        c->backlog_len = n - used;
        c->backlog_off = 0;
    }
    return 0;
}

static int conn_feed_scratch(struct net_conn *c, size_t n)
{
    return conn_feed_copy(c, c->srv->scratch, n);
}

/* n bytes read into c->spec, a new frame's size field first. A large frame whose bytes past
 * its end (the next frame's first ones) fit the scratch keeps the buffer as its own, read
 * in place; anything else is framed by copy, as from the scratch, and the buffer stays for
 * the next read. Returns 0, or -1 after closing the connection (out of memory). */
static int conn_read_spec(struct net_conn *c, size_t n)
{
    uint8_t *base = c->spec;

    if (n >= FRAME_HEAD) {
        size_t len = (size_t)((uint32_t)base[0] << 24 | (uint32_t)base[1] << 16 |
                              (uint32_t)base[2] << 8 | base[3]);
        size_t body = n - FRAME_HEAD;
        size_t take = body < len ? body : len;
        if (len >= FRAME_SLACK_MIN && len <= c->srv->opts.max_frame &&
            body - take <= SCRATCH_SIZE) {
            conn_take_size(c, base, FRAME_HEAD);
            if (c->closing || !c->in_frame)
                return 0;
            size_t room = c->spec_cap - FRAME_HEAD, extra = body - take;
            c->spec = NULL;
            c->frame = base + FRAME_HEAD;
            /* The capacity the framer counts on: no more slack than a grown buffer has (the
             * allocation itself may be larger). */
            c->frame_cap = room < len + FRAME_SLACK ? room : len + FRAME_SLACK;
            c->frame_got = take;
            if (take < len)
                return 0;
            memcpy(c->srv->scratch, c->frame + len, extra);
            conn_frame_done(c);
            return extra > 0 && !c->closing ? conn_feed_scratch(c, extra) : 0;
        }
    }
    return conn_feed_copy(c, base, n);
}

static void on_poll_mark(uv_prepare_t *h)
{
    struct net_server *s = h->data;
    s->in_poll = true;
}

/* The end of the poll phase: the answers the corked connections' reads produced go out. */
static void on_uncork(uv_check_t *h)
{
    struct net_server *s = h->data;
    struct net_conn *list = s->cork_head;

    s->in_poll = false;
    s->cork_head = NULL;
    while (list) {
        struct net_conn *c = list;
        list = c->cork_next;
        c->cork_next = NULL;
        c->corked = false;
        conn_pump_now(c);
        conn_input(c); /* answers written here may have made room */
        conn_close_if_written(c);
        conn_unref(c);
    }
}

static void on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
    struct net_conn *c = st->data;
    struct net_server *s = c->srv;
    if (nread < 0) {
        if (nread != UV_EOF)
            slog_line_limited(&s->warn.io, NET_WARN_INTERVAL_MS, SLOG_INFO, "net",
                              "read from %s failed: %s", c->peer, uv_strerror((int)nread));
        conn_close(c);
        return;
    }
    if (nread == 0)
        return;
    c->last_io_ms = uv_now(s->loop);
    if (c->tls) {
        conn_tls_read(c, (const uint8_t *)buf->base, (size_t)nread);
        return;
    }
    if (!c->corked && !s->stopping)
        conn_cork(c); /* read callbacks run in the poll phase */
    if ((const uint8_t *)buf->base == s->scratch) {
        if (conn_feed_scratch(c, (size_t)nread) != 0)
            return;
    } else if (c->spec != NULL && (const uint8_t *)buf->base == c->spec) {
        if (conn_read_spec(c, (size_t)nread) != 0)
            return;
    } else if ((size_t)nread <= c->frame_len - c->frame_got) {
        c->frame_got += (size_t)nread;
        if (c->frame_got == c->frame_len)
            conn_frame_done(c);
    } else {
        /* The read ran into the frame's slack: the frame is whole, and what follows it (the
         * next size field and first bytes, at most FRAME_SLACK) goes on like a scratch read.
         * It is moved out before the frame is handed on with its buffer. */
        size_t extra = (size_t)nread - (c->frame_len - c->frame_got);
        assert(extra <= FRAME_SLACK && extra <= SCRATCH_SIZE);
        memcpy(s->scratch, c->frame + c->frame_len, extra);
        c->frame_got = c->frame_len;
        conn_frame_done(c);
        if (!c->closing && conn_feed_scratch(c, extra) != 0)
            return;
    }
    conn_input(c);
}

/* Feeds the backlogs of connections that gained room. This runs from the loop rather than
 * from conn_input, because conn_input is called inside handlers (through net_respond), and
 * a handler must never see a new request dispatched in the middle of its own work. */
static void on_feed(uv_idle_t *h)
{
    struct net_server *s = h->data;
    struct net_conn *list = s->feed_head;

    s->feed_head = s->feed_tail = NULL;
    uv_idle_stop(h);
    while (list) {
        struct net_conn *c = list;
        list = c->feed_next;
        c->feed_next = NULL;
        c->feed_queued = false;
        if (!c->closing && c->backlog) {
            c->backlog_off +=
                conn_feed(c, c->backlog + c->backlog_off, c->backlog_len - c->backlog_off);
            if (c->backlog_off == c->backlog_len) {
                free(c->backlog);
                c->backlog = NULL;
                c->backlog_len = c->backlog_off = 0;
            }
        }
        if (!c->closing && c->tls && c->backlog == NULL) {
            conn_tls_input(c);
            conn_tls_flush(c); /* what reading produced (a TLS 1.3 key update's answer) */
        }
        conn_input(c);
        conn_unref(c);
    }
}

static void conn_read_start(struct net_conn *c)
{
    if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) == 0)
        c->reading = true;
    else
        conn_close(c);
}

void conn_input(struct net_conn *c)
{
    struct net_server *s = c->srv;

    if (c->closing)
        return;
    if (c->close_req || c->close_when_written) {
        /* net_respond_close: nothing more is read. */
        if (c->reading) {
            uv_read_stop((uv_stream_t *)&c->tcp);
            c->reading = false;
        }
        return;
    }
    if (conn_full(c) || c->backlog || c->tls_in_pending) {
        /* Bytes in the backlog (or plaintext inside TLS) come before any new read, so
         * reading waits for them. */
        if (c->reading) {
            uv_read_stop((uv_stream_t *)&c->tcp);
            c->reading = false;
        }
        if ((c->backlog || c->tls_in_pending) && !conn_full(c) && !c->feed_queued && !s->stopping) {
            c->feed_queued = true;
            c->refs++;
            if (s->feed_tail)
                s->feed_tail->feed_next = c;
            else
                s->feed_head = c;
            s->feed_tail = c;
            uv_idle_start(&s->feeder, on_feed);
        }
        return;
    }
    if (!c->reading)
        conn_read_start(c);
}

/* The idle rule (see the file comment), checked for every connection on each tick. */
static void on_idle_tick(struct tclock_timer *t)
{
    struct net_server *s = t->data;
    uint64_t now = uv_now(s->loop);
    uint64_t limit = (uint64_t)s->opts.max_idle_ms;
    struct net_conn *c = s->conns;

    while (c) {
        struct net_conn *next = c->next; /* conn_close unlinks c */
        bool partial = c->in_frame || c->size_got > 0;
        if (c->tls && !c->tls_up && now - c->accepted_ms >= limit) {
            slog_info("net",
                      "closing the connection from %s: its TLS handshake is not done after "
                      "%llu ms (connections.max.idle.ms is %lld)",
                      c->peer, (unsigned long long)(now - c->accepted_ms),
                      (long long)s->opts.max_idle_ms);
            conn_close(c);
        } else if (partial && c->reading && now - c->frame_start_ms >= limit) {
            slog_info("net",
                      "closing the connection from %s: its request is still incomplete after "
                      "%llu ms (%zu of %zu bytes; connections.max.idle.ms is %lld)",
                      c->peer, (unsigned long long)(now - c->frame_start_ms),
                      c->in_frame ? c->frame_got : 0, c->in_frame ? c->frame_len : 0,
                      (long long)s->opts.max_idle_ms);
            conn_close(c);
        } else if (c->inflight == 0 && now - c->last_io_ms >= limit) {
            slog_info("net",
                      "closing the connection from %s: idle for %llu ms "
                      "(connections.max.idle.ms)",
                      c->peer, (unsigned long long)(now - c->last_io_ms));
            conn_close(c);
        }
        c = next;
    }
}

static void on_connection(uv_stream_t *server, int status)
{
    struct net_server *s = server->data;
    struct net_conn *c;
    struct sockaddr_storage ss;
    int sslen = sizeof ss;

    if (status < 0) {
        slog_warn_limited(&s->warn.accept, NET_WARN_INTERVAL_MS, "net", "accept failed: %s",
                          uv_strerror(status));
        return;
    }
    c = calloc(1, sizeof *c);
    if (c == NULL) {
        slog_error("net", "out of memory accepting a connection");
        return;
    }
    c->srv = s;
    c->refs = 1;
    c->session.listener = s->opts.listener ? s->opts.listener : "PLAINTEXT";
    c->session.sasl = s->opts.sasl;
    c->session.authenticated = !s->opts.sasl;
    snprintf(c->session.principal, sizeof c->session.principal, "User:ANONYMOUS");
    if (s->opts.tls && (c->tls = tls_conn_new(s->opts.tls)) == NULL) {
        slog_error("net", "out of memory accepting a TLS connection");
        free(c);
        return;
    }
    uv_tcp_init(s->loop, &c->tcp);
    c->tcp.data = c;
    s->n_conns++;
    c->next = s->conns;
    if (s->conns)
        s->conns->prev = c;
    s->conns = c;
    if (uv_accept(server, (uv_stream_t *)&c->tcp) != 0) {
        conn_close(c);
        return;
    }
    uv_tcp_nodelay(&c->tcp, 1);
    c->last_io_ms = c->accepted_ms = uv_now(s->loop);
    strcpy(c->peer, "?");
    if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&ss, &sslen) == 0) {
        char ip[48] = "?";
        int port = 0;
        if (ss.ss_family == AF_INET) {
            struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
            uv_ip4_name(sin, ip, sizeof ip);
            port = ntohs(sin->sin_port);
        } else if (ss.ss_family == AF_INET6) {
            struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
            uv_ip6_name(sin6, ip, sizeof ip);
            port = ntohs(sin6->sin6_port);
        }
        snprintf(c->peer, sizeof c->peer, "%s:%d", ip, port);
    }
    conn_read_start(c);
}

/* A listener that could not listen: freed once libuv is done with its handle. */
static void on_unstarted_closed(uv_handle_t *h)
{
    struct net_server *s = h->data;
    free(s->tls_scratch);
    free(s);
}

int net_server_start(uv_loop_t *loop, const struct net_options *opts, net_request_cb cb, void *ctx,
                     struct net_server **out)
{
    struct net_server *s = calloc(1, sizeof *s);
    struct sockaddr_storage addr;
    int rc;

    if (s == NULL)
        return ERR_NOMEM;
    s->loop = loop;
    s->opts = *opts;
    if (s->opts.io == NULL)
        s->opts.io = sysio_default();
    if (s->opts.max_inflight == 0)
        s->opts.max_inflight = 64;
    s->cb = cb;
    s->ctx = ctx;
    if (opts->tls && (s->tls_scratch = malloc(SCRATCH_SIZE)) == NULL) {
        free(s);
        return ERR_NOMEM;
    }
    if (uv_ip4_addr(opts->host, opts->port, (struct sockaddr_in *)&addr) != 0 &&
        uv_ip6_addr(opts->host, opts->port, (struct sockaddr_in6 *)&addr) != 0) {
        slog_error("net", "listener host '%s' is not an IP address", opts->host);
        free(s->tls_scratch);
        free(s);
        return ERR_INVALID_CONFIG;
    }
    uv_tcp_init(loop, &s->tcp);
    s->tcp.data = s;
    rc = uv_tcp_bind(&s->tcp, (struct sockaddr *)&addr, 0);
    /* Accepted sockets inherit the listener's buffer sizes. */
    if (rc == 0 && opts->send_buffer_bytes > 0)
        rc = uv_send_buffer_size((uv_handle_t *)&s->tcp, &(int){opts->send_buffer_bytes});
    if (rc == 0 && opts->recv_buffer_bytes > 0)
        rc = uv_recv_buffer_size((uv_handle_t *)&s->tcp, &(int){opts->recv_buffer_bytes});
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)&s->tcp, 1024, on_connection);
    if (rc != 0) {
        slog_error("net", "cannot listen on %s:%d: %s", opts->host, opts->port, uv_strerror(rc));
        /* The handle is the loop's until closed: the server goes with it. */
        uv_close((uv_handle_t *)&s->tcp, on_unstarted_closed);
        return ERR_IO;
    }
    struct sockaddr_storage bound;
    int blen = sizeof bound;
    s->port = opts->port;
    if (uv_tcp_getsockname(&s->tcp, (struct sockaddr *)&bound, &blen) == 0)
        s->port = ntohs(((struct sockaddr_in *)&bound)->sin_port);
    s->handles = 4; /* the listener, the feeder, the uncorker and the poll mark */
    uv_idle_init(loop, &s->feeder);
    s->feeder.data = s;
    /* Both run in every loop iteration (they keep no loop alive): the mark before the poll
     * phase, the uncorker after it. */
    uv_check_init(loop, &s->uncorker);
    s->uncorker.data = s;
    uv_check_start(&s->uncorker, on_uncork);
    uv_unref((uv_handle_t *)&s->uncorker);
    uv_prepare_init(loop, &s->poll_mark);
    s->poll_mark.data = s;
    uv_prepare_start(&s->poll_mark, on_poll_mark);
    uv_unref((uv_handle_t *)&s->poll_mark);
    tclock_timer_init(s->opts.clock, &s->idle_timer, on_idle_tick, s);
    if (s->opts.max_idle_ms >= 0) {
        /* Checking ten times per period closes an idle connection at most 10% late. */
        int64_t tick = s->opts.max_idle_ms / 10;
        tick = tick < 10 ? 10 : tick > 1000 ? 1000 : tick;
        if (tclock_timer_start(&s->idle_timer, tick, tick) != 0)
            slog_error("net", "out of memory starting the idle timer: "
                              "connections.max.idle.ms is not enforced");
    }
    slog_info("net", "listening on %s:%d", opts->host, s->port);
    *out = s;
    return 0;
}

void net_server_set_tls(struct net_server *s, struct tls_ctx *ctx)
{
    if (s->opts.tls && ctx)
        s->opts.tls = ctx;
}

unsigned net_server_connections(const struct net_server *s)
{
    return s ? s->n_conns : 0;
}

int net_server_port(const struct net_server *s)
{
    return s->port;
}

static void on_server_handle_closed(uv_handle_t *h)
{
    struct net_server *s = h->data;
    s->handles--;
    server_maybe_done(s);
}

void net_server_stop(struct net_server *s, void (*cb)(void *arg), void *arg)
{
    s->stopping = true;
    s->stop_cb = cb;
    s->stop_arg = arg;
    while (s->conns)
        conn_close(s->conns);
    while (s->feed_head) {
        struct net_conn *c = s->feed_head;
        s->feed_head = c->feed_next;
        c->feed_queued = false;
        conn_unref(c);
    }
    s->feed_tail = NULL;
    while (s->cork_head) {
        struct net_conn *c = s->cork_head;
        s->cork_head = c->cork_next;
        c->corked = false;
        conn_unref(c);
    }
    uv_close((uv_handle_t *)&s->feeder, on_server_handle_closed);
    uv_close((uv_handle_t *)&s->uncorker, on_server_handle_closed);
    uv_close((uv_handle_t *)&s->poll_mark, on_server_handle_closed);
    s->in_poll = false;
    tclock_timer_close(&s->idle_timer);
    uv_close((uv_handle_t *)&s->tcp, on_server_handle_closed);
}
