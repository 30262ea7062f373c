/* SPDX-License-Identifier: Apache-2.0 */
/* net client: outbound connections to other brokers and to the active controller.
 *
 * One node per destination id, each with at most one connection and two queues: requests
 * waiting for the connection (in call order) and requests written and awaiting their
 * answer. A node's connection goes IDLE → CONNECTING → READY; a failed attempt or a lost
 * connection puts it in BACKOFF for the current backoff (doubling per consecutive failure,
 * reset by a successful connect), after which it connects again if requests are waiting.
 * Waiting requests survive failures until their own timeout; written ones fail with
 * NETWORK_EXCEPTION when their connection goes. Every timer is a tclock timer, so a test
 * can drive timeouts and backoff on virtual time.
 *
 * On a secure inter-broker listener CONNECTING has two more steps before READY, both within
 * the connection setup timeout: the TLS handshake (the socket's bytes go through
 * tls_conn_feed / tls_conn_take, the framing reads tls_conn_read and writes tls_conn_write),
 * then SASL: SaslHandshake and SaslAuthenticate, sent as the node's own requests (they use
 * the written queue and the correlation ids like any other): one SaslAuthenticate for PLAIN,
 * two for SCRAM-SHA-256/512 (client-first, then client-final; the server-final's signature
 * must verify, so a peer that does not hold the credential is not trusted either). A failure
 * in either backs off as a failed connect, and the backoff is reset only once a connection is
 * READY.
 *
 * A response frame on the wire:
 **   OFFSET  SIZE  FIELD
 **        0     4  size: bytes after this field (int32, big-endian)
 **        4     4  CorrelationId (matches the request it answers)
 **        8     …  (flexible versions) tagged fields, then the response body */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/err.h"
#include "base/slog.h"
#include "base/tclock.h"
#include "net.h"
#include "proto/proto.h"
#include "sasl/sasl.h"
#include "tls.h"

#define DEFAULT_TIMEOUT_MS 30000
#define DEFAULT_BACKOFF_MS 50
#define DEFAULT_BACKOFF_MAX_MS 1000
#define DEFAULT_CONNECT_TIMEOUT_MS 10000
#define DEFAULT_CONNECT_TIMEOUT_MAX_MS 30000
#define DEFAULT_MAX_FRAME (100u << 20)
#define READ_CHUNK 65536

enum node_state { NODE_IDLE, NODE_CONNECTING, NODE_READY, NODE_BACKOFF };

struct nc_node;

struct nc_req {
    struct nc_req *next;
    struct net_client *client;
    struct nc_node *node;
    const struct proto_api *api;
    int16_t version;
    int32_t corr;
    uint8_t *frame; /* encoded, until written */
    size_t frame_len;
    bool sent;
    struct tclock_timer timer;
    net_client_cb cb;
    void *arg;
};

/* A connection. Detached (node == NULL) once its node gave it up; it is freed when libuv
 * has closed it. */
struct nc_sock {
    uv_tcp_t tcp;
    uv_connect_t connect;
    struct net_client *client;
    struct nc_node *node;
    uint8_t *rbuf; /* plaintext received, not yet framed */
    size_t rlen, rcap;
    struct tls_conn *tls; /* NULL on a plaintext connection */
    uint8_t *cbuf;        /* TLS: READ_CHUNK bytes for the ciphertext read */
    char host[128];       /* the address connected to (tls_verify_host) */
};

struct nc_write {
    uv_write_t w;
    uint8_t *buf;
};

struct nc_node {
    struct nc_node *next;
    struct net_client *client;
    int32_t id;
    enum node_state state;
    struct nc_sock *sock;
    struct nc_req *wait_head, *wait_tail; /* not yet written */
    struct nc_req *sent_head, *sent_tail; /* written, awaiting the answer */
    int64_t backoff_ms;                   /* the next backoff */
    struct tclock_timer backoff_timer;
    int64_t connect_timeout_ms; /* the next attempt's setup timeout */
    struct tclock_timer connect_timer;
    struct sasl_scram_client scram; /* SCRAM between its two SaslAuthenticate steps */
};

struct net_client {
    uv_loop_t *loop;
    struct net_client_options opts;
    char *client_id;
    struct nc_node *nodes;
    int32_t next_corr;
    unsigned open_socks;
    bool stopping;
    void (*done)(void *arg);
    void *done_arg;
    struct slog_limit warn;
    /* Authentication failures (a wrong password, a SCRAM user not created yet) have their own
     * limit: one of them is never held back behind an earlier, unrelated connect failure. */
    struct slog_limit auth_warn;
    struct slog_limit secured;   /* the "connected ... over TLS / SASL" line */
    enum sasl_mech sasl_mech;    /* of opts.sasl_mechanism; SASL_MECH_NONE: no SASL */
    char *sasl_user, *sasl_pass; /* opts.sasl_mechanism set */
};

static void node_kick(struct nc_node *n);
static void node_fail(struct nc_node *n, int err);
static void node_fail_why(struct nc_node *n, int err, const char *why);
static void node_setup(struct nc_node *n);
static void on_backoff_done(struct tclock_timer *t);
static void on_connect_timeout(struct tclock_timer *t);

static void client_free(struct net_client *c)
{
    free(c->client_id);
    if (c->sasl_pass)
        memset(c->sasl_pass, 0, strlen(c->sasl_pass));
    free(c->sasl_pass);
    free(c->sasl_user);
    free(c);
}

int net_client_new(uv_loop_t *loop, const struct net_client_options *opts, struct net_client **out)
{
    struct net_client *c = calloc(1, sizeof *c);
    if (c == NULL)
        return ERR_NOMEM;
    c->loop = loop;
    c->opts = *opts;
    if (c->opts.request_timeout_ms <= 0)
        c->opts.request_timeout_ms = DEFAULT_TIMEOUT_MS;
    if (c->opts.reconnect_backoff_ms <= 0)
        c->opts.reconnect_backoff_ms = DEFAULT_BACKOFF_MS;
    if (c->opts.reconnect_backoff_max_ms <= 0)
        c->opts.reconnect_backoff_max_ms = DEFAULT_BACKOFF_MAX_MS;
    if (c->opts.reconnect_backoff_max_ms < c->opts.reconnect_backoff_ms)
        c->opts.reconnect_backoff_max_ms = c->opts.reconnect_backoff_ms;
    if (c->opts.connect_timeout_ms <= 0)
        c->opts.connect_timeout_ms = DEFAULT_CONNECT_TIMEOUT_MS;
    if (c->opts.connect_timeout_max_ms <= 0)
        c->opts.connect_timeout_max_ms = DEFAULT_CONNECT_TIMEOUT_MAX_MS;
    if (c->opts.connect_timeout_max_ms < c->opts.connect_timeout_ms)
        c->opts.connect_timeout_max_ms = c->opts.connect_timeout_ms;
    if (c->opts.max_frame == 0)
        c->opts.max_frame = DEFAULT_MAX_FRAME;
    c->sasl_mech =
        opts->sasl_mechanism ? sasl_mech_from_name(opts->sasl_mechanism) : SASL_MECH_NONE;
    if (opts->sasl_mechanism && (c->sasl_mech == SASL_MECH_NONE || opts->sasl_username == NULL)) {
        free(c);
        return ERR_UNSUPPORTED_SASL_MECHANISM;
    }
    c->client_id = strdup(opts->client_id ? opts->client_id : "tally");
    if (opts->sasl_mechanism) {
        c->sasl_user = strdup(opts->sasl_username);
        c->sasl_pass = strdup(opts->sasl_password ? opts->sasl_password : "");
    }
    if (c->client_id == NULL || (opts->sasl_mechanism && (!c->sasl_user || !c->sasl_pass))) {
        client_free(c);
        return ERR_NOMEM;
    }
    c->opts.client_id = c->client_id;
    c->next_corr = 1;
    *out = c;
    return 0;
}

/* ---- requests --------------------------------------------------------------------------- */

static void req_free(struct nc_req *r)
{
    tclock_timer_close(&r->timer);
    free(r->frame);
    free(r);
}

/* Unlinks r from whichever queue of its node holds it. */
static void req_unlink(struct nc_req *r)
{
    struct nc_node *n = r->node;
    struct nc_req **head = r->sent ? &n->sent_head : &n->wait_head;
    struct nc_req **tail = r->sent ? &n->sent_tail : &n->wait_tail;
    struct nc_req *prev = NULL;

    for (struct nc_req *x = *head; x; prev = x, x = x->next) {
        if (x != r)
            continue;
        if (prev)
            prev->next = r->next;
        else
            *head = r->next;
        if (*tail == r)
            *tail = prev;
        r->next = NULL;
        return;
    }
}

static void req_complete(struct nc_req *r, int err, const void *resp)
{
    net_client_cb cb = r->cb;
    void *arg = r->arg;
    req_free(r);
    cb(arg, err, resp);
}

static void on_req_timeout(struct tclock_timer *t)
{
    struct nc_req *r = t->data;
    struct net_client *c = r->client;
    struct nc_node *n = r->node;
    bool was_sent = r->sent;

    req_unlink(r);
    slog_debug("net", "%s request %d to node %d timed out", r->api->name, r->corr, n->id);
    req_complete(r, ERR_REQUEST_TIMED_OUT, NULL);
    if (!c->stopping && was_sent && n->sock)
        node_fail(n, ERR_REQUEST_TIMED_OUT);
}

static void push(struct nc_req **head, struct nc_req **tail, struct nc_req *r)
{
    r->next = NULL;
    if (*tail)
        (*tail)->next = r;
    else
        *head = r;
    *tail = r;
}

static struct nc_node *node_get(struct net_client *c, int32_t id)
{
    struct nc_node *n;
    for (n = c->nodes; n; n = n->next)
        if (n->id == id)
            return n;
    n = calloc(1, sizeof *n);
    if (n == NULL)
        return NULL;
    n->client = c;
    n->id = id;
    n->backoff_ms = c->opts.reconnect_backoff_ms;
    tclock_timer_init(c->opts.clock, &n->backoff_timer, on_backoff_done, n);
    n->connect_timeout_ms = c->opts.connect_timeout_ms;
    tclock_timer_init(c->opts.clock, &n->connect_timer, on_connect_timeout, n);
    n->next = c->nodes;
    c->nodes = n;
    return n;
}

/* An encoded request to n with a fresh correlation id and its timeout running: 0 and *out,
 * or an error (nothing allocated). */
static int req_new(struct nc_node *n, int16_t api_key, int16_t version, const void *req,
                   net_client_cb cb, void *arg, struct nc_req **out)
{
    struct net_client *c = n->client;
    const struct proto_api *api = proto_api_find(api_key);
    struct nc_req *r;
    int rc;

    if (api == NULL || version < api->min_version || version > api->max_version)
        return ERR_UNSUPPORTED_VERSION;
    r = calloc(1, sizeof *r);
    if (r == NULL)
        return ERR_NOMEM;
    r->client = c;
    r->node = n;
    r->api = api;
    r->version = version;
    r->corr = c->next_corr;
    c->next_corr = c->next_corr == INT32_MAX ? 1 : c->next_corr + 1;
    r->cb = cb;
    r->arg = arg;
    tclock_timer_init(c->opts.clock, &r->timer, on_req_timeout, r);
    rc = proto_encode_request(api, version, r->corr, c->client_id, req, &r->frame, &r->frame_len);
    if (rc)
        goto err_after_timer;
    rc = tclock_timer_start(&r->timer, c->opts.request_timeout_ms, 0);
    if (rc)
        goto err_after_timer;
    *out = r;
    return 0;
err_after_timer:
    req_free(r);
    return rc;
}

int net_client_send(struct net_client *c, int32_t node_id, int16_t api_key, int16_t version,
                    const void *req, net_client_cb cb, void *arg)
{
    struct nc_node *n;
    struct nc_req *r;
    int rc;

    if (c->stopping)
        return ERR_SHUTDOWN;
    n = node_get(c, node_id);
    if (n == NULL)
        return ERR_NOMEM;
    rc = req_new(n, api_key, version, req, cb, arg, &r);
    if (rc)
        return rc;
    push(&n->wait_head, &n->wait_tail, r);
    node_kick(n);
    return 0;
}

/* ---- connections ------------------------------------------------------------------------ */

static void client_maybe_done(struct net_client *c)
{
    if (!c->stopping || c->open_socks > 0 || c->nodes != NULL)
        return;
    void (*done)(void *) = c->done;
    void *arg = c->done_arg;
    client_free(c);
    if (done)
        done(arg);
}

static void on_sock_closed(uv_handle_t *h)
{
    struct nc_sock *s = h->data;
    struct net_client *c = s->client;
    tls_conn_free(s->tls);
    free(s->cbuf);
    free(s->rbuf);
    free(s);
    c->open_socks--;
    client_maybe_done(c);
}

static void sock_close(struct nc_sock *s)
{
    s->node = NULL;
    uv_close((uv_handle_t *)&s->tcp, on_sock_closed);
}

static void on_backoff_done(struct tclock_timer *t)
{
    struct nc_node *n = t->data;
    n->state = NODE_IDLE;
    node_kick(n);
}

/* "node 3" or "the controller", for log lines. */
static const char *node_name(const struct nc_node *n, char *buf, size_t len)
{
    if (n->id == NET_CLIENT_CONTROLLER)
        return "the controller";
    snprintf(buf, len, "node %d", n->id);
    return buf;
}

static void node_fail(struct nc_node *n, int err)
{
    node_fail_why(n, err, NULL);
}

/* The connection failed or was given up: fail what was written, keep what waits, back off.
 * `why` (NULL: the error's name) goes into the log line. */
static void node_fail_why(struct nc_node *n, int err, const char *why)
{
    struct net_client *c = n->client;
    struct nc_req *r;
    char name[32];

    tclock_timer_stop(&n->connect_timer);
    if (n->sock) {
        sock_close(n->sock);
        n->sock = NULL;
    }
    /* A peer closing an idle connection (connections.max.idle.ms) is routine. */
    if (err == ERR_REQUEST_TIMED_OUT || (n->sent_head == NULL && n->state == NODE_READY))
        slog_debug("net", "connection to %s closed (%s)", node_name(n, name, sizeof name),
                   err_name(err));
    else
        slog_warn_limited(err == ERR_SASL_AUTHENTICATION_FAILED ? &c->auth_warn : &c->warn, 10000,
                          "net", "connection to %s failed (%s); retrying in %lld ms",
                          node_name(n, name, sizeof name), why ? why : err_name(err),
                          (long long)n->backoff_ms);
    n->state = NODE_BACKOFF;
    tclock_timer_start(&n->backoff_timer, n->backoff_ms, 0);
    n->backoff_ms *= 2;
    if (n->backoff_ms > c->opts.reconnect_backoff_max_ms)
        n->backoff_ms = c->opts.reconnect_backoff_max_ms;
    while ((r = n->sent_head) != NULL) {
        n->sent_head = r->next;
        if (n->sent_head == NULL)
            n->sent_tail = NULL;
        req_complete(r, ERR_NETWORK_EXCEPTION, NULL);
        if (c->stopping)
            return;
    }
}

static void on_write(uv_write_t *w, int status)
{
    struct nc_write *wr = (struct nc_write *)w;
    (void)status; /* a failed write shows up as a read error or EOF */
    free(wr->buf);
    free(wr);
}

/* Hands buf (taken, freed once written) to the kernel. Returns 0 or -1. */
static int sock_write_raw(struct nc_sock *s, uint8_t *buf, size_t len)
{
    struct nc_write *wr = calloc(1, sizeof *wr);
    uv_buf_t b = uv_buf_init((char *)buf, (unsigned)len);
    if (wr == NULL) {
        free(buf);
        return -1;
    }
    wr->buf = buf;
    if (uv_write(&wr->w, (uv_stream_t *)&s->tcp, &b, 1, on_write) != 0) {
        free(buf);
        free(wr);
        return -1;
    }
    return 0;
}

/* TLS: writes the ciphertext waiting in s->tls (handshake records, alerts, requests). */
static int sock_tls_flush(struct nc_sock *s)
{
    size_t n;
    while ((n = tls_conn_pending(s->tls)) > 0) {
        uint8_t *buf = malloc(n);
        if (buf == NULL)
            return -1;
        n = tls_conn_take(s->tls, buf, n);
        if (sock_write_raw(s, buf, n) != 0)
            return -1;
    }
    return 0;
}

/* Writes one request frame (taken), through TLS on a TLS connection. Returns 0 or -1. */
static int sock_send(struct nc_sock *s, uint8_t *frame, size_t len)
{
    if (s->tls == NULL)
        return sock_write_raw(s, frame, len);
    int rc = tls_conn_write(s->tls, frame, len);
    free(frame);
    return rc == 0 ? sock_tls_flush(s) : -1;
}

/* Moves r to the written queue and writes it; false when the connection failed. */
static bool req_write(struct nc_node *n, struct nc_req *r)
{
    uint8_t *frame = r->frame;
    r->frame = NULL;
    r->sent = true;
    push(&n->sent_head, &n->sent_tail, r);
    if (sock_send(n->sock, frame, r->frame_len) != 0) {
        node_fail(n, ERR_NETWORK_EXCEPTION);
        return false;
    }
    return true;
}

/* Writes every waiting request (READY only). */
static void node_flush(struct nc_node *n)
{
    struct nc_req *r;
    while (n->state == NODE_READY && (r = n->wait_head) != NULL) {
        n->wait_head = r->next;
        if (n->wait_head == NULL)
            n->wait_tail = NULL;
        if (!req_write(n, r))
            return;
    }
}

/* Handles one complete response frame; returns false when the connection must go. */
static bool handle_frame(struct nc_node *n, const uint8_t *buf, size_t len)
{
    struct nc_req *r;
    struct arena *a;
    void *resp = NULL;
    int32_t corr;
    int rc;

    corr =
        (int32_t)((uint32_t)buf[0] << 24 | (uint32_t)buf[1] << 16 | (uint32_t)buf[2] << 8 | buf[3]);
    for (r = n->sent_head; r && r->corr != corr; r = r->next)
        ;
    if (r == NULL) {
        slog_warn_limited(&n->client->warn, 10000, "net",
                          "node %d answered correlation id %d, which no request has", n->id, corr);
        return false;
    }
    req_unlink(r);
    a = arena_new(len * 16 + (1u << 20));
    if (a == NULL) {
        req_complete(r, ERR_NOMEM, NULL);
        return true;
    }
    rc = proto_decode_response(r->api, r->version, buf, len, &corr, &resp, a);
    if (rc) {
        slog_warn_limited(&n->client->warn, 10000, "net",
                          "cannot decode %s v%d answer of node %d: %s", r->api->name, r->version,
                          n->id, err_name(rc));
        resp = NULL;
    }
    req_complete(r, rc, resp);
    arena_free(a);
    return true;
}

/* Makes room for READ_CHUNK more bytes in s->rbuf: 0, or -1 when out of memory. */
static int rbuf_room(struct nc_sock *s)
{
    if (s->rcap - s->rlen >= READ_CHUNK)
        return 0;
    size_t cap = s->rcap ? s->rcap * 2 : READ_CHUNK * 2;
    uint8_t *p = realloc(s->rbuf, cap);
    if (p == NULL)
        return -1;
    s->rbuf = p;
    s->rcap = cap;
    return 0;
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b)
{
    struct nc_sock *s = h->data;
    (void)suggested;
    if (s->tls) {
        *b = uv_buf_init((char *)s->cbuf, READ_CHUNK);
        return;
    }
    if (rbuf_room(s) != 0) {
        *b = uv_buf_init(NULL, 0); /* libuv reports UV_ENOBUFS */
        return;
    }
    *b = uv_buf_init((char *)s->rbuf + s->rlen, (unsigned)(s->rcap - s->rlen));
}

/* TLS: feeds the ciphertext read into s->cbuf, answers the handshake, and once it is done
 * moves the plaintext into s->rbuf. Returns false when there is nothing to frame (the
 * handshake goes on, or the connection failed). */
static bool sock_tls_input(struct nc_sock *s, struct nc_node *n, size_t nread)
{
    bool was_up = tls_conn_established(s->tls);
    char why[256];
    long got;

    if (tls_conn_feed(s->tls, s->cbuf, nread) != 0) {
        (void)sock_tls_flush(s); /* the alert, if any: the peer learns why */
        snprintf(why, sizeof why, "TLS handshake: %s",
                 *tls_conn_error(s->tls) ? tls_conn_error(s->tls) : "the peer closed");
        node_fail_why(n, ERR_BROKER_NOT_AVAILABLE, why);
        return false;
    }
    if (sock_tls_flush(s) != 0) {
        node_fail(n, ERR_NETWORK_EXCEPTION);
        return false;
    }
    if (!tls_conn_established(s->tls))
        return false;
    if (!was_up) {
        node_setup(n);
        if (s->node != n)
            return false;
    }
    for (;;) {
        if (rbuf_room(s) != 0) {
            node_fail(n, ERR_NOMEM);
            return false;
        }
        got = tls_conn_read(s->tls, s->rbuf + s->rlen, s->rcap - s->rlen);
        if (got == 0)
            return true;
        if (got < 0) {
            snprintf(why, sizeof why, "TLS: %s",
                     *tls_conn_error(s->tls) ? tls_conn_error(s->tls) : "the peer closed");
            node_fail_why(n, ERR_NETWORK_EXCEPTION, why);
            return false;
        }
        s->rlen += (size_t)got;
    }
}

static void on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *b)
{
    struct nc_sock *s = st->data;
    struct nc_node *n = s->node;
    size_t off = 0;
    (void)b;

    if (n == NULL || nread == 0)
        return;
    if (nread < 0) {
        node_fail(n, nread == UV_EOF ? ERR_NETWORK_EXCEPTION : ERR_IO);
        return;
    }
    if (s->tls == NULL)
        s->rlen += (size_t)nread;
    else if (!sock_tls_input(s, n, (size_t)nread))
        return;
    while (s->rlen - off >= 4) {
        const uint8_t *p = s->rbuf + off;
        size_t size = (size_t)p[0] << 24 | (size_t)p[1] << 16 | (size_t)p[2] << 8 | p[3];
        if (size < 4 || size > n->client->opts.max_frame) {
            node_fail(n, ERR_PARSE);
            return;
        }
        if (s->rlen - off - 4 < size)
            break;
        if (!handle_frame(n, p + 4, size)) {
            if (s->node == n)
                node_fail(n, ERR_PARSE);
            return;
        }
        off += 4 + size;
        if (s->node != n) /* a callback gave the connection up (stop, timeout) */
            return;
    }
    memmove(s->rbuf, s->rbuf + off, s->rlen - off);
    s->rlen -= off;
}

static void on_connect(uv_connect_t *req, int status)
{
    struct nc_sock *s = req->data;
    struct nc_node *n = s->node;

    if (n == NULL)
        return; /* given up meanwhile; the handle is closing */
    if (status < 0 || uv_read_start((uv_stream_t *)&s->tcp, on_alloc, on_read) != 0) {
        node_fail(n, ERR_BROKER_NOT_AVAILABLE);
        return;
    }
    if (n->client->opts.tls == NULL) {
        node_setup(n);
        return;
    }
    s->cbuf = malloc(READ_CHUNK);
    s->tls = s->cbuf ? tls_conn_new(n->client->opts.tls) : NULL;
    if (s->tls == NULL ||
        (n->client->opts.tls_verify_host && tls_conn_verify_host(s->tls, s->host) != 0) ||
        sock_tls_flush(s) != 0) /* the ClientHello */
        node_fail(n, ERR_NOMEM);
}

/* The connection is set up (and secured, and authenticated): requests go. */
static void node_ready(struct nc_node *n)
{
    struct net_client *c = n->client;
    char name[32];

    tclock_timer_stop(&n->connect_timer);
    n->state = NODE_READY;
    n->backoff_ms = c->opts.reconnect_backoff_ms;
    n->connect_timeout_ms = c->opts.connect_timeout_ms;
    if (c->opts.tls || c->opts.sasl_mechanism)
        slog_info_limited(
            &c->secured, 60000, "net", "connected to %s over %s%s%s%s%s%s",
            node_name(n, name, sizeof name),
            c->opts.tls ? (c->opts.sasl_mechanism ? "SASL_SSL" : "SSL") : "SASL_PLAINTEXT",
            c->opts.tls ? " (TLS, peer verified as configured)" : "",
            c->opts.sasl_mechanism ? ", SASL " : "",
            c->opts.sasl_mechanism ? sasl_mech_name(c->sasl_mech) : "",
            c->opts.sasl_mechanism ? " as " : "", c->opts.sasl_mechanism ? c->sasl_user : "");
    else
        slog_debug("net", "connected to node %d", n->id);
    node_flush(n);
}

/* ---- SASL (the node's own requests, before any queued one) --------------------------- */

/* Whether err is the end of the node's connection or of the client, which whoever ended it
 * has already dealt with (node_fail, on_req_timeout, net_client_stop). */
static bool conn_gone(int err)
{
    return err == ERR_NETWORK_EXCEPTION || err == ERR_REQUEST_TIMED_OUT || err == ERR_SHUTDOWN;
}

/* A failed SaslAuthenticate step (or a server message the client refuses): one line naming
 * the mechanism and user, never the password. */
static void sasl_auth_failed(struct nc_node *n, int err, const struct SaslAuthenticateResponse *rs,
                             const char *what)
{
    char why[320];
    snprintf(why, sizeof why, "SASL %s authentication as %s failed: %s",
             sasl_mech_name(n->client->sasl_mech), n->client->sasl_user,
             what  ? what
             : err ? err_name(err)
             : rs && rs->ErrorMessage
                 ? rs->ErrorMessage
                 : err_name(rs ? rs->ErrorCode : ERR_SASL_AUTHENTICATION_FAILED));
    node_fail_why(n, ERR_SASL_AUTHENTICATION_FAILED, why);
}

static void on_sasl_authenticate(void *arg, int err, const void *resp)
{
    struct nc_node *n = arg;
    const struct SaslAuthenticateResponse *rs = resp;

    if (conn_gone(err))
        return;
    if (err != 0 || rs->ErrorCode != 0) {
        sasl_auth_failed(n, err, rs, NULL);
        return;
    }
    node_ready(n);
}

/* Sends one SaslAuthenticate (v2) with token[0..len), answered to cb. */
static void sasl_send(struct nc_node *n, const uint8_t *token, size_t len, net_client_cb cb)
{
    struct nc_req *r;
    struct SaslAuthenticateRequest rq = {.AuthBytes = {.data = token, .len = (int32_t)len}};
    int rc = req_new(n, PROTO_API_SaslAuthenticate, 2, &rq, cb, n, &r);
    if (rc != 0) {
        node_fail(n, rc);
        return;
    }
    (void)req_write(n, r);
}

/* SCRAM's server-final: the connection is ready only once the server proved it holds the
 * credential (its signature over the exchange). */
static void on_scram_final(void *arg, int err, const void *resp)
{
    struct nc_node *n = arg;
    const struct SaslAuthenticateResponse *rs = resp;

    if (conn_gone(err))
        return;
    if (err != 0 || rs->ErrorCode != 0) {
        sasl_auth_failed(n, err, rs, NULL);
        return;
    }
    if (sasl_scram_client_verify(&n->scram, rs->AuthBytes.data, (size_t)rs->AuthBytes.len) != 0) {
        sasl_auth_failed(n, 0, rs, "the server's signature does not verify");
        return;
    }
    node_ready(n);
}

/* SCRAM's server-first: answer with the client-final (the proof). */
static void on_scram_first(void *arg, int err, const void *resp)
{
    struct nc_node *n = arg;
    const struct SaslAuthenticateResponse *rs = resp;
    char final[700];

    if (conn_gone(err))
        return;
    if (err != 0 || rs->ErrorCode != 0) {
        sasl_auth_failed(n, err, rs, NULL);
        return;
    }
    int len = sasl_scram_client_final(&n->scram, n->client->sasl_pass, rs->AuthBytes.data,
                                      (size_t)rs->AuthBytes.len, final, sizeof final);
    if (len < 0) {
        sasl_auth_failed(n, 0, rs, "malformed or unacceptable server-first message");
        return;
    }
    sasl_send(n, (const uint8_t *) final, (size_t)len, on_scram_final);
    memset(final, 0, sizeof final);
}

static void on_sasl_handshake(void *arg, int err, const void *resp)
{
    struct nc_node *n = arg;
    struct net_client *c = n->client;
    const struct SaslHandshakeResponse *rs = resp;
    char why[320];

    if (conn_gone(err))
        return;
    if (err != 0 || rs->ErrorCode != 0) {
        size_t k = (size_t)snprintf(why, sizeof why, "SaslHandshake: %s",
                                    err_name(err ? err : rs->ErrorCode));
        for (int32_t i = 0; err == 0 && i < rs->Mechanisms.n && k < sizeof why; i++)
            k += (size_t)snprintf(why + k, sizeof why - k, "%s%s", i ? ", " : " (it enables ",
                                  rs->Mechanisms.v[i]);
        if (err == 0 && rs->Mechanisms.n > 0 && k < sizeof why)
            snprintf(why + k, sizeof why - k, ")");
        node_fail_why(n, err ? ERR_SASL_AUTHENTICATION_FAILED : rs->ErrorCode, why);
        return;
    }
    if (c->sasl_mech != SASL_MECH_PLAIN) {
        char first[SASL_MAX_NAME * 3 + 80];
        int len = sasl_scram_client_first(&n->scram, c->sasl_mech, c->sasl_user, NULL, first,
                                          sizeof first);
        if (len < 0) {
            node_fail(n, ERR_NOMEM);
            return;
        }
        sasl_send(n, (const uint8_t *)first, (size_t)len, on_scram_first);
        return;
    }
    /* PLAIN (RFC 4616): authzid (empty) NUL authcid NUL password. */
    size_t ul = strlen(c->sasl_user), pl = strlen(c->sasl_pass);
    uint8_t *tok = malloc(ul + pl + 2);
    if (tok == NULL) {
        node_fail(n, ERR_NOMEM);
        return;
    }
    tok[0] = '\0';
    memcpy(tok + 1, c->sasl_user, ul);
    tok[1 + ul] = '\0';
    memcpy(tok + 2 + ul, c->sasl_pass, pl);
    sasl_send(n, tok, ul + pl + 2, on_sasl_authenticate);
    memset(tok, 0, ul + pl + 2);
    free(tok);
}

/* TCP is connected (and TLS established): authenticate first when SASL is on. */
static void node_setup(struct nc_node *n)
{
    /* The mechanism's own (static) name: opts.sasl_mechanism is the caller's string. */
    struct SaslHandshakeRequest rq = {.Mechanism = (char *)sasl_mech_name(n->client->sasl_mech)};
    struct nc_req *r;
    int rc;

    if (n->client->opts.sasl_mechanism == NULL) {
        node_ready(n);
        return;
    }
    rc = req_new(n, PROTO_API_SaslHandshake, 1, &rq, on_sasl_handshake, n, &r);
    if (rc != 0) {
        node_fail(n, rc);
        return;
    }
    (void)req_write(n, r);
}

static void node_connect(struct nc_node *n)
{
    struct net_client *c = n->client;
    char host[128];
    int port = 0;
    struct sockaddr_storage addr;
    struct nc_sock *s;

    memset(&addr, 0, sizeof addr);
    if (c->opts.resolve(c->opts.resolve_arg, n->id, host, sizeof host, &port) != 0 ||
        (uv_ip4_addr(host, port, (struct sockaddr_in *)&addr) != 0 &&
         uv_ip6_addr(host, port, (struct sockaddr_in6 *)&addr) != 0)) {
        node_fail(n, ERR_BROKER_NOT_AVAILABLE);
        return;
    }
    s = calloc(1, sizeof *s);
    if (s == NULL) {
        node_fail(n, ERR_NOMEM);
        return;
    }
    s->client = c;
    s->node = n;
    snprintf(s->host, sizeof s->host, "%s", host);
    if (uv_tcp_init(c->loop, &s->tcp) != 0) {
        free(s);
        node_fail(n, ERR_IO);
        return;
    }
    c->open_socks++;
    s->tcp.data = s;
    s->connect.data = s;
    n->sock = s;
    n->state = NODE_CONNECTING;
    uv_tcp_nodelay(&s->tcp, 1);
    if (uv_tcp_connect(&s->connect, &s->tcp, (const struct sockaddr *)&addr, on_connect) != 0)
        node_fail(n, ERR_BROKER_NOT_AVAILABLE);
    else
        tclock_timer_start(&n->connect_timer, n->connect_timeout_ms, 0);
}

/* The attempt was not set up within its timeout: given up as a failed one, and the next
 * attempt gets twice as long (to the max). */
static void on_connect_timeout(struct tclock_timer *t)
{
    struct nc_node *n = t->data;
    struct net_client *c = n->client;
    char name[32];

    if (n->state != NODE_CONNECTING || c->stopping)
        return;
    slog_debug("net", "connecting to %s timed out after %lld ms", node_name(n, name, sizeof name),
               (long long)n->connect_timeout_ms);
    n->connect_timeout_ms *= 2;
    if (n->connect_timeout_ms > c->opts.connect_timeout_max_ms)
        n->connect_timeout_ms = c->opts.connect_timeout_max_ms;
    node_fail(n, ERR_BROKER_NOT_AVAILABLE);
}

static void node_kick(struct nc_node *n)
{
    switch (n->state) {
    case NODE_IDLE:
        if (n->wait_head)
            node_connect(n);
        break;
    case NODE_READY:
        node_flush(n);
        break;
    case NODE_CONNECTING:
    case NODE_BACKOFF:
        break;
    }
}

void net_client_disconnect(struct net_client *c, int32_t node_id)
{
    struct nc_node *n;
    struct nc_req *r;

    for (n = c->nodes; n && n->id != node_id; n = n->next)
        ;
    if (n == NULL || c->stopping || n->sock == NULL)
        return;
    tclock_timer_stop(&n->connect_timer);
    sock_close(n->sock);
    n->sock = NULL;
    n->state = NODE_IDLE;
    while ((r = n->sent_head) != NULL) {
        n->sent_head = r->next;
        if (n->sent_head == NULL)
            n->sent_tail = NULL;
        req_complete(r, ERR_NETWORK_EXCEPTION, NULL);
        if (c->stopping)
            return;
    }
    node_kick(n);
}

void net_client_stop(struct net_client *c, void (*done)(void *arg), void *arg)
{
    struct nc_node *n;
    c->stopping = true;
    c->done = done;
    c->done_arg = arg;
    while ((n = c->nodes) != NULL) {
        struct nc_req *r;
        c->nodes = n->next;
        tclock_timer_close(&n->backoff_timer);
        tclock_timer_close(&n->connect_timer);
        if (n->sock)
            sock_close(n->sock);
        while ((r = n->sent_head) != NULL || (r = n->wait_head) != NULL) {
            req_unlink(r);
            req_complete(r, ERR_SHUTDOWN, NULL);
        }
        free(n);
    }
    client_maybe_done(c);
}
