/* SPDX-License-Identifier: Apache-2.0 */
/* net: listener, connections, framing and in-order responses.
 *
 * A frame on the wire:
 **   OFFSET  SIZE  FIELD
 **        0     4  size: bytes after this field (int32, big-endian; 0..max_frame)
 **        4  size  request header (proto_decode_request_header) then request body
 *
 * Reading: while a frame body is incomplete, libuv reads straight into that frame's buffer
 * (no copy); between frames it reads into one scratch buffer shared by all connections (the
 * read callback consumes it before returning, so sharing is safe on one loop). Requests of a
 * connection are kept in arrival order; a finished request's response is written only once
 * every earlier request of that connection has been answered. */
#include "net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <sys/sendfile.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/err.h"
#include "base/log.h"

#define SCRATCH_SIZE (64 * 1024)

struct net_conn;

struct req_int {
    struct net_request pub;
    struct net_conn *conn;
    struct req_int *next;
    uint8_t *frame; /* the request frame (after the size field) */
    uint8_t *resp;  /* the encoded response frame, once finished */
    size_t resp_len;
    struct proto_hole *holes; /* file ranges to splice into resp (net_respond_files) */
    size_t n_holes;
    void (*sent)(void *arg);
    void *sent_arg;
    bool done;
};

/* One piece of output: bytes of a response frame, or a file range. A response frame's
 * buffer is shared by its pieces and freed with the last one. */
struct out_frame {
    uint8_t *buf;
    unsigned refs;
    void (*sent)(void *arg);
    void *sent_arg;
};

struct out_item {
    struct out_item *next;
    struct out_frame *frame;
    const uint8_t *data; /* memory piece, or NULL for a file piece */
    size_t len;
    int fd; /* file piece */
    int64_t pos;
};

struct net_conn {
    uv_tcp_t tcp;
    struct net_server *srv;
    struct net_conn *prev, *next; /* the server's list of open connections */
    char peer[64];
    uint8_t size_buf[4];
    unsigned size_got;
    uint8_t *frame; /* frame being read, NULL between frames */
    size_t frame_len, frame_got;
    struct req_int *head, *tail; /* requests in arrival order */
    unsigned inflight;
    struct out_item *out_head, *out_tail; /* output not yet handed to the kernel */
    unsigned writes;                      /* uv_writes in flight */
    bool sending_file;                    /* a thread-pool sendfile is running */
    bool reading, closing;
    unsigned refs; /* the handle until closed, plus each request not yet finished */
};

struct net_server {
    uv_loop_t *loop;
    uv_tcp_t tcp;
    struct net_options opts;
    net_request_cb cb;
    void *ctx;
    struct net_conn *conns;
    unsigned n_conns;
    bool stopping, listener_closed;
    void (*stop_cb)(void *arg);
    void *stop_arg;
    int port;
    uint8_t scratch[SCRATCH_SIZE];
};

static void conn_close(struct net_conn *c);
static void server_maybe_done(struct net_server *s);

static void conn_unref(struct net_conn *c)
{
    struct net_server *s = c->srv;
    if (--c->refs > 0)
        return;
    free(c->frame);
    free(c);
    s->n_conns--;
    server_maybe_done(s);
}

static void server_maybe_done(struct net_server *s)
{
    if (!s->stopping || !s->listener_closed || s->n_conns > 0)
        return;
    void (*cb)(void *) = s->stop_cb;
    void *arg = s->stop_arg;
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
    free(r->frame);
    free(r->resp);
    free(r);
}

static void frame_unref(struct out_frame *f)
{
    if (--f->refs > 0)
        return;
    if (f->sent)
        f->sent(f->sent_arg);
    free(f->buf);
    free(f);
}

static void item_free(struct out_item *it)
{
    frame_unref(it->frame);
    free(it);
}

/* Drops output that will never be sent (the connection is closing). */
static void out_discard(struct net_conn *c)
{
    while (c->out_head) {
        struct out_item *it = c->out_head;
        c->out_head = it->next;
        item_free(it);
    }
    c->out_tail = NULL;
}

struct write_req {
    uv_write_t w;
    struct net_conn *conn;
    struct out_item *item;
};

static void conn_pump(struct net_conn *c);

static void on_write(uv_write_t *w, int status)
{
    struct write_req *wr = (struct write_req *)w;
    struct net_conn *c = wr->conn;
    if (status < 0 && status != UV_ECANCELED && !c->closing) {
        log_info("net", "write to %s failed: %s; closing", c->peer, uv_strerror(status));
        conn_close(c);
    }
    item_free(wr->item);
    free(wr);
    c->writes--;
    conn_pump(c);
    conn_unref(c);
}

/* A file piece that did not fit in the socket buffer at once: finished on the thread pool,
 * which waits for the socket to drain. It works on a dup() of the socket so that closing the
 * connection cannot hand its descriptor number to someone else mid-send. */
struct file_send {
    uv_work_t w;
    struct net_conn *conn;
    struct out_item *item;
    int sock;
    int err;
};

static void file_send_run(uv_work_t *w)
{
    struct file_send *fs = (struct file_send *)w;
    struct out_item *it = fs->item;
    off_t pos = (off_t)it->pos;
    size_t left = it->len;
    int idle_ms = 0;

    while (left > 0) {
        ssize_t n = sendfile(fs->sock, it->fd, &pos, left);
        if (n > 0) {
            left -= (size_t)n;
            idle_ms = 0;
            continue;
        }
        if (n == 0) {
            fs->err = UV_EOF; /* the file is shorter than the range: never send a torn frame */
            return;
        }
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN) {
            fs->err = -errno;
            return;
        }
        struct pollfd pfd = {.fd = fs->sock, .events = POLLOUT};
        int pr = poll(&pfd, 1, 100);
        if (pr == 0 && (idle_ms += 100) >= 120000) {
            fs->err = UV_ETIMEDOUT; /* a reader that takes nothing for two minutes */
            return;
        }
        if (pr > 0 && (pfd.revents & (POLLERR | POLLHUP))) {
            fs->err = UV_EPIPE;
            return;
        }
    }
}

static void file_send_done(uv_work_t *w, int status)
{
    struct file_send *fs = (struct file_send *)w;
    struct net_conn *c = fs->conn;
    (void)status;
    close(fs->sock);
    if (fs->err != 0 && !c->closing) {
        log_info("net", "sending to %s failed: %s; closing", c->peer, uv_strerror(fs->err));
        conn_close(c);
    }
    item_free(fs->item);
    free(fs);
    c->sending_file = false;
    conn_pump(c);
    conn_unref(c);
}

/* Tries a file piece on the loop without blocking; returns 0 when all of it went, 1 when
 * the rest was handed to the thread pool, or a negative error. */
static int send_file_piece(struct net_conn *c, struct out_item *it)
{
    uv_os_fd_t sock;
    struct file_send *fs;
    if (uv_fileno((uv_handle_t *)&c->tcp, &sock) != 0)
        return UV_EBADF;
    while (it->len > 0) {
        off_t pos = (off_t)it->pos;
        ssize_t n = sendfile(sock, it->fd, &pos, it->len);
        if (n > 0) {
            it->pos += n;
            it->len -= (size_t)n;
            continue;
        }
        if (n == 0)
            return UV_EOF;
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN)
            return -errno;
        break;
    }
    if (it->len == 0)
        return 0;
    fs = calloc(1, sizeof *fs);
    if (fs == NULL)
        return UV_ENOMEM;
    fs->conn = c;
    fs->item = it;
    fs->sock = dup(sock);
    if (fs->sock < 0) {
        free(fs);
        return -errno;
    }
    c->refs++;
    c->sending_file = true;
    if (uv_queue_work(c->srv->loop, &fs->w, file_send_run, file_send_done) != 0) {
        close(fs->sock);
        free(fs);
        c->refs--;
        c->sending_file = false;
        return UV_ENOMEM;
    }
    return 1;
}

/* Hands queued output to the kernel in order: memory pieces through uv_write (several may
 * be in flight), a file piece only once every earlier write has completed. */
static void conn_pump(struct net_conn *c)
{
    if (c->closing) {
        out_discard(c);
        return;
    }
    while (c->out_head && !c->sending_file) {
        struct out_item *it = c->out_head;
        if (it->data == NULL) {
            if (c->writes > 0)
                return;
            c->out_head = it->next;
            if (c->out_head == NULL)
                c->out_tail = NULL;
            int rc = send_file_piece(c, it);
            if (rc == 1)
                return;
            item_free(it);
            if (rc < 0) {
                log_info("net", "sending to %s failed: %s; closing", c->peer, uv_strerror(rc));
                conn_close(c);
                out_discard(c);
                return;
            }
            continue;
        }
        struct write_req *wr = malloc(sizeof *wr);
        if (wr == NULL) {
            log_error("net", "out of memory writing to %s; closing", c->peer);
            conn_close(c);
            out_discard(c);
            return;
        }
        c->out_head = it->next;
        if (c->out_head == NULL)
            c->out_tail = NULL;
        wr->conn = c;
        wr->item = it;
        uv_buf_t b = uv_buf_init((char *)it->data, (unsigned)it->len);
        c->refs++;
        c->writes++;
        if (uv_write(&wr->w, (uv_stream_t *)&c->tcp, &b, 1, on_write) < 0) {
            c->refs--;
            c->writes--;
            item_free(it);
            free(wr);
            conn_close(c);
            out_discard(c);
            return;
        }
    }
}

static bool out_push(struct net_conn *c, struct out_frame *f, const uint8_t *data, size_t len,
                     int fd, int64_t pos)
{
    struct out_item *it;
    if (len == 0)
        return true;
    it = calloc(1, sizeof *it);
    if (it == NULL)
        return false;
    it->frame = f;
    f->refs++;
    it->data = data;
    it->len = len;
    it->fd = fd;
    it->pos = pos;
    if (c->out_tail)
        c->out_tail->next = it;
    else
        c->out_head = it;
    c->out_tail = it;
    return true;
}

/* Queues a finished request's response frame (and its file pieces) for output. */
static void conn_queue_response(struct net_conn *c, struct req_int *r)
{
    struct out_frame *f = calloc(1, sizeof *f);
    size_t at = 0;
    bool ok = f != NULL;

    if (f == NULL) {
        if (r->sent)
            r->sent(r->sent_arg);
        free(r->resp);
    } else {
        f->buf = r->resp;
        f->refs = 1; /* held while queuing */
        f->sent = r->sent;
        f->sent_arg = r->sent_arg;
        for (size_t i = 0; ok && i < r->n_holes; i++) {
            const struct net_file_range *fr = r->holes[i].ext;
            ok = out_push(c, f, r->resp + at, r->holes[i].at - at, -1, 0) &&
                 out_push(c, f, NULL, fr->len, fr->fd, fr->pos);
            at = r->holes[i].at;
        }
        ok = ok && out_push(c, f, r->resp + at, r->resp_len - at, -1, 0);
        frame_unref(f);
    }
    r->resp = NULL;
    r->sent = NULL;
    if (!ok) {
        log_error("net", "out of memory writing to %s; closing", c->peer);
        conn_close(c);
    }
}

static void conn_read_start(struct net_conn *c);

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
    conn_pump(c);
    if (!c->closing && !c->reading && c->inflight < c->srv->opts.max_inflight)
        conn_read_start(c);
    conn_unref(c);
}

static void req_finish(struct req_int *r)
{
    r->done = true;
    conn_flush(r->conn);
}

static void respond(struct net_request *pub, int16_t version, const void *resp, bool files)
{
    struct req_int *r = (struct req_int *)pub;
    if (!r->conn->closing) {
        int rc = files
                     ? proto_encode_response_holes(pub->api, version, pub->hdr.CorrelationId, resp,
                                                   &r->resp, &r->resp_len, &r->holes, &r->n_holes)
                     : proto_encode_response(pub->api, version, pub->hdr.CorrelationId, resp,
                                             &r->resp, &r->resp_len);
        if (rc != 0) {
            log_error("net", "cannot encode %s v%d response for %s: %s; closing", pub->api->name,
                      version, r->conn->peer, err_name(rc));
            r->done = true;
            conn_close(r->conn);
            conn_flush(r->conn);
            return;
        }
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

void net_finish(struct net_request *pub)
{
    req_finish((struct req_int *)pub);
}

void net_close_connection(struct net_request *pub)
{
    struct req_int *r = (struct req_int *)pub;
    r->done = true;
    conn_close(r->conn);
    conn_flush(r->conn);
}

static void on_conn_closed(uv_handle_t *h)
{
    conn_unref((struct net_conn *)h->data);
}

static void conn_close(struct net_conn *c)
{
    struct net_server *s = c->srv;
    if (c->closing)
        return;
    c->closing = true;
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
        log_error("net", "out of memory for a request from %s; closing", c->peer);
        free(r);
        free(frame);
        conn_close(c);
        return;
    }
    r->conn = c;
    r->frame = frame;
    r->pub.peer = c->peer;
    c->refs++;
    c->inflight++;
    if (c->tail)
        c->tail->next = r;
    else
        c->head = r;
    c->tail = r;

    rc = proto_decode_request_header(frame, len, &r->pub.hdr, &hdr_len, r->pub.arena);
    if (rc != 0) {
        log_warn("net", "malformed request header from %s (%s); closing", c->peer, err_name(rc));
        goto err_close;
    }
    r->pub.api = proto_api_find(r->pub.hdr.RequestApiKey);
    if (r->pub.api == NULL) {
        log_warn("net", "unknown API key %d from %s (client %s); closing", r->pub.hdr.RequestApiKey,
                 c->peer, r->pub.hdr.ClientId ? r->pub.hdr.ClientId : "-");
        goto err_close;
    }
    int16_t v = r->pub.hdr.RequestApiVersion;
    r->pub.version_supported = v >= r->pub.api->min_version && v <= r->pub.api->max_version;
    if (!r->pub.version_supported) {
        /* Only ApiVersions has a defined answer to an unknown version (a v0 error response
         * listing our ranges); for any other API the client broke negotiation. */
        if (r->pub.api->key == 18) {
            s->cb(s->ctx, &r->pub);
            return;
        }
        log_warn("net", "unsupported %s version %d from %s; closing", r->pub.api->name, v, c->peer);
        goto err_close;
    }
    rc = proto_decode_request(r->pub.api, v, frame + hdr_len, len - hdr_len, &r->pub.body,
                              r->pub.arena);
    if (rc != 0) {
        log_warn("net", "malformed %s v%d request from %s (%s); closing", r->pub.api->name, v,
                 c->peer, err_name(rc));
        goto err_close;
    }
    s->cb(s->ctx, &r->pub);
    return;

err_close:
    net_close_connection(&r->pub);
}

/* Consumes `n` bytes read into the scratch buffer: size fields and whole small frames. */
static void conn_consume(struct net_conn *c, const uint8_t *p, size_t n)
{
    struct net_server *s = c->srv;
    while (n > 0 && !c->closing) {
        if (c->frame) { /* the rest of a frame whose buffer exists */
            size_t take = c->frame_len - c->frame_got;
            if (take > n)
                take = n;
            memcpy(c->frame + c->frame_got, p, take);
            c->frame_got += take;
            p += take;
            n -= take;
        } else {
            while (c->size_got < 4 && n > 0) {
                c->size_buf[c->size_got++] = *p++;
                n--;
            }
            if (c->size_got < 4)
                return;
            int32_t size =
                (int32_t)((uint32_t)c->size_buf[0] << 24 | (uint32_t)c->size_buf[1] << 16 |
                          (uint32_t)c->size_buf[2] << 8 | c->size_buf[3]);
            c->size_got = 0;
            if (size < 0 || (size_t)size > s->opts.max_frame) {
                log_warn("net",
                         "frame of %d bytes from %s is outside 0..%zu "
                         "(socket.request.max.bytes); closing",
                         size, c->peer, s->opts.max_frame);
                conn_close(c);
                return;
            }
            c->frame = malloc(size > 0 ? (size_t)size : 1);
            if (c->frame == NULL) {
                log_error("net", "out of memory for a %d-byte frame from %s; closing", size,
                          c->peer);
                conn_close(c);
                return;
            }
            c->frame_len = (size_t)size;
            c->frame_got = 0;
        }
        if (c->frame && c->frame_got == c->frame_len) {
            uint8_t *f = c->frame;
            c->frame = NULL;
            conn_dispatch(c, f, c->frame_len);
        }
    }
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    struct net_conn *c = h->data;
    (void)suggested;
    if (c->frame && c->frame_len - c->frame_got >= 4096) {
        /* Large remainder: read straight into the frame, no copy. */
        *buf =
            uv_buf_init((char *)c->frame + c->frame_got, (unsigned)(c->frame_len - c->frame_got));
    } else {
        *buf = uv_buf_init((char *)c->srv->scratch, SCRATCH_SIZE);
    }
}

static void on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
    struct net_conn *c = st->data;
    if (nread < 0) {
        if (nread != UV_EOF)
            log_info("net", "read from %s failed: %s", c->peer, uv_strerror((int)nread));
        conn_close(c);
        return;
    }
    if ((const uint8_t *)buf->base == c->srv->scratch) {
        conn_consume(c, (const uint8_t *)buf->base, (size_t)nread);
    } else if (nread > 0) {
        c->frame_got += (size_t)nread;
        if (c->frame_got == c->frame_len) {
            uint8_t *f = c->frame;
            c->frame = NULL;
            conn_dispatch(c, f, c->frame_len);
        }
    }
    if (!c->closing && c->reading && c->inflight >= c->srv->opts.max_inflight) {
        uv_read_stop(st);
        c->reading = false;
    }
}

static void conn_read_start(struct net_conn *c)
{
    if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) == 0)
        c->reading = true;
    else
        conn_close(c);
}

static void on_connection(uv_stream_t *server, int status)
{
    struct net_server *s = server->data;
    struct net_conn *c;
    struct sockaddr_storage ss;
    int sslen = sizeof ss;

    if (status < 0) {
        /* EMFILE repeats for as long as descriptors are short: one line per 10 s. */
        static struct log_limit accept_warn;
        log_warn_limited(&accept_warn, 10000, "net", "accept failed: %s", uv_strerror(status));
        return;
    }
    c = calloc(1, sizeof *c);
    if (c == NULL) {
        log_error("net", "out of memory accepting a connection");
        return;
    }
    c->srv = s;
    c->refs = 1;
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
    if (s->opts.max_inflight == 0)
        s->opts.max_inflight = 64;
    s->cb = cb;
    s->ctx = ctx;
    if (uv_ip4_addr(opts->host, opts->port, (struct sockaddr_in *)&addr) != 0 &&
        uv_ip6_addr(opts->host, opts->port, (struct sockaddr_in6 *)&addr) != 0) {
        log_error("net", "listener host '%s' is not an IP address", opts->host);
        free(s);
        return ERR_INVALID_CONFIG;
    }
    uv_tcp_init(loop, &s->tcp);
    s->tcp.data = s;
    rc = uv_tcp_bind(&s->tcp, (struct sockaddr *)&addr, 0);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)&s->tcp, 1024, on_connection);
    if (rc != 0) {
        log_error("net", "cannot listen on %s:%d: %s", opts->host, opts->port, uv_strerror(rc));
        s->stopping = true;
        s->stop_cb = NULL;
        uv_close((uv_handle_t *)&s->tcp, NULL);
        /* The handle is owned by the loop until closed; the caller stops the loop and exits,
         * so the struct is left for process exit rather than freed under libuv's feet. */
        return ERR_IO;
    }
    struct sockaddr_storage bound;
    int blen = sizeof bound;
    s->port = opts->port;
    if (uv_tcp_getsockname(&s->tcp, (struct sockaddr *)&bound, &blen) == 0)
        s->port = ntohs(((struct sockaddr_in *)&bound)->sin_port);
    log_info("net", "listening on %s:%d", opts->host, s->port);
    *out = s;
    return 0;
}

int net_server_port(const struct net_server *s)
{
    return s->port;
}

static void on_listener_closed(uv_handle_t *h)
{
    struct net_server *s = h->data;
    s->listener_closed = true;
    server_maybe_done(s);
}

void net_server_stop(struct net_server *s, void (*cb)(void *arg), void *arg)
{
    s->stopping = true;
    s->stop_cb = cb;
    s->stop_arg = arg;
    while (s->conns)
        conn_close(s->conns);
    uv_close((uv_handle_t *)&s->tcp, on_listener_closed);
}
