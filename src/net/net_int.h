/* SPDX-License-Identifier: Apache-2.0 */
/* net internals shared by net.c (listener, input, requests, timers) and net_out.c (the
 * per-connection output queue). Nothing outside src/net includes this. */
#ifndef TALLY_NET_INT_H
#define TALLY_NET_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "base/slog.h"
#include "base/tclock.h"
#include "net.h"
#include "tls.h"

#define SCRATCH_SIZE (64 * 1024)

/* Reading from a connection pauses while its answers not yet handed to the kernel hold this
 * many bytes of memory (file ranges sent with sendfile do not count: they are not in
 * memory). One answer larger than this is still queued whole; reading then waits for it. */
#define NET_OUT_MAX_BYTES (1u << 20)

/* At most one line per this interval for each kind of client misbehaviour, across all
 * connections, so that a retrying or reconnecting client cannot flood the log. */
#define NET_WARN_INTERVAL_MS 10000

/* TLS listeners (net_options.tls): a file range of a response is read on the libuv pool in
 * chunks of this size and encrypted, since sendfile() cannot encrypt (no kTLS here); the
 * next chunk is read only while less than NET_TLS_FILE_WINDOW bytes of ciphertext wait in
 * uv_writes, so a slow reader holds a bounded amount of memory. */
#define NET_TLS_FILE_CHUNK (256u * 1024)
#define NET_TLS_FILE_WINDOW (512u * 1024)

struct net_conn;

struct req_int {
    struct net_request pub;
    struct net_conn *conn;
    struct req_int *next;
    uint8_t *frame; /* the request frame (after the size field; frame_free) */
    uint8_t *resp;  /* the encoded response frame, once finished */
    size_t resp_len;
    struct proto_hole *holes; /* file ranges to splice into resp (net_respond_files) */
    size_t n_holes;
    void (*sent)(void *arg);
    void *sent_arg;
    void (*on_close)(void *arg); /* net_request_on_close */
    void *on_close_arg;
    bool done;
    struct net_request_times times; /* taken only when opts.on_sent is set */
    /* A detached request (detached.c) has conn NULL and reports its end here. */
    net_detached_cb detached_cb;
    void *detached_arg;
    bool detached_closed;                /* net_request_detached_close was called */
    struct net_session detached_session; /* a detached request's session */
};

/* One queued response frame: its buffer is shared by its pieces and freed with the last
 * one, which also ends the frame's count in conn->out_frames. */
struct out_frame {
    struct net_conn *conn;
    uint8_t *buf;
    unsigned refs;
    void (*sent)(void *arg);
    void *sent_arg;
    bool timed; /* tell opts.on_sent once the last piece went */
    struct net_request_times times;
};

/* One piece of output: bytes of a response frame, or a file range. */
struct out_item {
    struct out_item *next;
    struct out_frame *frame;
    const uint8_t *data; /* memory piece, or NULL for a file piece */
    size_t len;
    int fd; /* file piece */
    int64_t pos;
    bool probed; /* file piece: found in the page cache, or warmed on the pool */
};

struct net_conn {
    uv_tcp_t tcp;
    struct net_server *srv;
    struct net_conn *prev, *next; /* the server's list of open connections */
    char peer[64];

    /* Input. A frame's buffer grows as its bytes arrive (never past the announced size), so
     * memory follows what a client sent, not what it announced. */
    uint8_t size_buf[4];
    unsigned size_got;
    bool in_frame;  /* the size field is complete; the frame body is being read */
    uint8_t *frame; /* frame[0..frame_got) received so far; NULL until the first byte */
    size_t frame_len, frame_got, frame_cap;
    /* A buffer for the next frame, read into with its size field in front (FRAME_HEAD),
     * handed out while no frame is under way once a large frame came (next_guess: the
     * length of the last frame, when large): a client sending large requests back to back
     * has the next one read whole in one read, not its first 64 KiB through the scratch
     * and then the rest. */
    uint8_t *spec;
    size_t spec_cap, next_guess;
    uint64_t frame_start_ms; /* loop time the frame's first size byte arrived */
    /* Bytes read but not yet framed, held while the connection is full (reading paused);
     * fed on the server's idle handle once it has room again. */
    uint8_t *backlog;
    size_t backlog_len, backlog_off;
    bool feed_queued;           /* on the server's feed list */
    struct net_conn *feed_next; /* next on the server's feed list */
    /* Read from in this loop iteration (plaintext only): the answers of its requests wait for
     * the server's check handle, so that those of every read of the iteration go out in one
     * write (conn_pump gathers them), not one write each. */
    bool corked;
    struct net_conn *cork_next; /* next on the server's cork list */
    uint64_t last_io_ms;        /* loop time of the last byte read or written */

    /* Requests and output. */
    struct req_int *head, *tail;          /* requests in arrival order */
    unsigned inflight;                    /* requests not yet answered (or waiting behind one) */
    struct out_item *out_head, *out_tail; /* output not yet handed to the kernel */
    unsigned out_frames; /* answers queued whose last byte has not reached the kernel */
    size_t out_bytes;    /* memory bytes of output not yet handed to the kernel */
    unsigned writes;     /* uv_writes in flight */
    /* a file piece waits for room in the socket, or for its warm-up read on the thread pool
     * (net_out.c) */
    bool sending_file;
    /* the poll handle file sends wait on (its `active` while one does), kept from the first
     * that had to wait until the connection closes (net_out.c) */
    struct file_send *file_poll;

    /* TLS (NULL on a plaintext listener). The seam to tls.h is four calls: ciphertext read
     * from the socket goes to tls_conn_feed, tls_conn_read gives the framing its plaintext
     * (conn_tls_input), answers go through tls_conn_write, and what tls_conn_take gives goes
     * to uv_write (conn_tls_flush). Nothing else in net/ sees OpenSSL. */
    struct tls_conn *tls;
    bool tls_up;           /* the handshake completed and the principal was set */
    bool tls_in_pending;   /* plaintext may wait inside tls: drained once there is room */
    uint64_t accepted_ms;  /* loop time of accept: the handshake must end within max_idle_ms */
    size_t tls_wire_bytes; /* ciphertext in uv_writes not yet completed (also in out_bytes) */

    bool reading, closing;
    struct net_session session;
    /* net_respond_close: the request whose answer waits for close_timer, and whether the
     * connection closes once every answer is written. */
    struct req_int *close_req;
    struct tclock_timer close_timer;
    bool close_timer_armed;
    /* net_mute: the connection is not read until mute_timer fires (KIP-219's muted channel). */
    struct tclock_timer mute_timer;
    bool muted;
    unsigned held;      /* net_hold_input: requests whose work goes on elsewhere */
    int64_t mute_until; /* tclock_mono_ms when it ends */
    bool close_when_written;
    unsigned refs; /* the handle until closed, each request not yet finished, each write */
};

/* Per-kind limits on log lines about client misbehaviour (see NET_WARN_INTERVAL_MS). */
struct net_warn_limits {
    struct slog_limit frame_size, header, api_key, version, body, io, accept;
    /* TLS: failed handshakes, plaintext on a TLS listener, TLS on a plaintext one. */
    struct slog_limit tls, tls_plain, tls_hello;
};

/* A request callback running (net.c's call_handler), innermost first: a request finished
 * from within its own callback took no remote time. */
struct net_handler_frame {
    struct req_int *r;
    bool finished;
    struct net_handler_frame *up;
};

struct net_server {
    struct net_handler_frame *handlers;
    uv_loop_t *loop;
    uv_tcp_t tcp;
    struct tclock_timer idle_timer; /* connections.max.idle.ms and the frame deadline */
    uv_idle_t feeder;               /* feeds backlogs of connections that have room again */
    uv_check_t uncorker; /* after the poll phase: writes the corked connections' answers */
    struct net_conn *cork_head;
    uv_prepare_t poll_mark; /* before the poll phase: in_poll, cleared by the uncorker */
    bool in_poll;           /* callbacks now run in the poll phase, which the check phase follows */
    struct net_options opts;
    net_request_cb cb;
    void *ctx;
    struct net_conn *conns;
    unsigned n_conns;
    struct net_conn *feed_head, *feed_tail;
    struct net_warn_limits warn;
    unsigned handles; /* server handles (listener, timer, feeder) not yet closed */
    bool stopping;
    void (*stop_cb)(void *arg);
    void *stop_arg;
    int port;
    uint8_t scratch[SCRATCH_SIZE];
    uint8_t *tls_scratch; /* SCRATCH_SIZE bytes of ciphertext reads (TLS listeners only) */
};

/* net.c */
void conn_close(struct net_conn *c);
void conn_unref(struct net_conn *c);
/* Called whenever the connection may have gained room: resumes input when it has. */
void conn_input(struct net_conn *c);

/* detached.c: finishes a detached request (r->conn NULL): encodes `resp` (when not NULL, with
 * file holes if `files`), tells its callback how it ended, and frees it. */
void detached_finish(struct req_int *r, enum net_detached_end how, int16_t version,
                     const void *resp, bool files);

/* Closes a connection marked close_when_written once nothing is left to write. */
void conn_close_if_written(struct net_conn *c);

/* Every request frame buffer has FRAME_HEAD bytes in front of the frame, where a read into
 * a next-frame buffer (net_conn.spec) put its size field; frame_free frees one. */
#define FRAME_HEAD 4
void frame_free(uint8_t *frame);

/* net_out.c */
/* Queues a finished request's response frame (and its file pieces) for output; takes the
 * response buffer and the `sent` callback from r. Closes the connection when out of memory. */
void conn_queue_response(struct net_conn *c, struct req_int *r);
/* Hands queued output to the kernel in order. */
void conn_pump(struct net_conn *c);
/* conn_pump from the loop itself (the server's check handle), never inside a handler: memory
 * pieces the socket takes at once are written with uv_try_write and finished here, their
 * frames' `sent` callbacks included, instead of on a uv_write callback. */
void conn_pump_now(struct net_conn *c);
/* Drops output that will never be sent (the connection is closing). */
void out_discard(struct net_conn *c);
/* TLS: hands the ciphertext tls_conn_take has to the kernel (handshake records, alerts,
 * encrypted answers). */
void conn_tls_flush(struct net_conn *c);

/* net.c, TLS: reads plaintext out of c->tls into the framing while the connection has room
 * (what is left waits: tls_in_pending). */
void conn_tls_input(struct net_conn *c);

#endif
