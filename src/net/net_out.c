/* SPDX-License-Identifier: Apache-2.0 */
/* net output: each connection's queue of response pieces, handed to the kernel in order.
 *
 * A response frame becomes a list of pieces: memory ranges of its encoded buffer, and file
 * ranges (net_respond_files) sent with sendfile() where the encoded buffer has a hole.
 * Memory pieces go through uv_write (several in flight); a file piece starts only once every
 * earlier write has completed. The answers of a poll phase's reads (conn_pump_now, from the
 * server's check handle) are first written with uv_try_write, and uv_write takes only what
 * the socket did not: libuv re-arms a stream's epoll registration after every completed
 * uv_write (one epoll_ctl per answered batch of requests, ~550 per GiB of 512 KiB Produce). The
 * queue is bounded from the input side: net.c stops reading a connection while out_frames and
 * out_bytes say it holds enough (conn_input), and every completed piece here gives it a chance to
 * resume.
 *
 * On a TLS connection every piece is encrypted with tls_conn_write as its turn comes (the
 * piece is then done: its memory may go) and the ciphertext goes out through uv_write
 * (conn_tls_flush), counted in out_bytes until written. A file piece is read on the libuv
 * pool in NET_TLS_FILE_CHUNK pieces (uv_fs_read: the loop never blocks on the disk), each
 * encrypted once read, while less than NET_TLS_FILE_WINDOW bytes of ciphertext are in
 * flight.
 *
 * A plaintext file piece is sent by the loop only from the page cache: before its first
 * sendfile() one probe (the server's sysio `resident`, one cachestat(2)) asks whether all its
 * pages are there, and when they are not the piece is first brought into the page cache on
 * the pool (sysio's warm: sendfile() to /dev/null, nothing copied) and sent once that is done.
 * A consumer catching up on cold data then waits for the disk alone, while the loop goes on
 * serving everyone else (Kafka's KAFKA-7504). The rest of a piece sent in several goes (a
 * full socket) is probed again before each later go (one cachestat per go): pages the pool
 * read for it were seen gone by the next go (test_cold_read, in about one run in twenty:
 * 786,881 bytes after a first go of 261,932, some pages with eviction shadows, with no
 * reclaim counted in /proc/vmstat; probing only in a later millisecond than the last probe
 * still let that through), and the rest then goes back to the pool to be read first. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/pool.h"
#include "base/slog.h"
#include "base/sysio.h"
#include "net_int.h"

static void tls_pump(struct net_conn *c);

static void frame_unref(struct out_frame *f)
{
    if (--f->refs > 0)
        return;
    struct net_server *s = f->conn->srv;
    if (f->timed && !f->conn->closing && s->opts.on_sent) {
        f->times.sent_ns = uv_hrtime();
        s->opts.on_sent(s->opts.on_sent_arg, &f->times);
    }
    f->conn->out_frames--;
    if (f->sent)
        f->sent(f->sent_arg);
    free(f->buf);
    free(f);
}

static void item_free(struct out_item *it)
{
    if (it->data)
        it->frame->conn->out_bytes -= it->len;
    frame_unref(it->frame);
    free(it);
}

struct file_send;
static void file_poll_close(struct net_conn *c);

void out_discard(struct net_conn *c)
{
    file_poll_close(c);
    while (c->out_head) {
        struct out_item *it = c->out_head;
        c->out_head = it->next;
        item_free(it);
    }
    c->out_tail = NULL;
}

/* Memory pieces written by one uv_write (one writev): consecutive ones, answers corked in
 * the same loop iteration among them. */
#define WRITE_GATHER 16

struct write_req {
    uv_write_t w;
    struct net_conn *conn;
    struct out_item *items[WRITE_GATHER];
    unsigned n;
};

static void on_write(uv_write_t *w, int status)
{
    struct write_req *wr = (struct write_req *)w;
    struct net_conn *c = wr->conn;
    if (status < 0 && status != UV_ECANCELED && !c->closing) {
        slog_info("net", "write to %s failed: %s; closing", c->peer, uv_strerror(status));
        conn_close(c);
    }
    if (status == 0)
        c->last_io_ms = uv_now(c->srv->loop);
    for (unsigned i = 0; i < wr->n; i++)
        item_free(wr->items[i]);
    free(wr);
    c->writes--;
    conn_pump(c);
    conn_input(c);
    conn_close_if_written(c);
    conn_unref(c);
}

/* A file piece that did not fit in the socket buffer at once: finished on the loop, a
 * non-blocking sendfile() each time the socket has room again, as told by a uv_poll handle.
 * The handle watches a dup() of the socket because libuv lets one loop watch a descriptor
 * only once (the uv_tcp handle already does); the duplicate also keeps the descriptor number
 * from being reused under us. The handle is made for a connection's first file piece that
 * has to wait and kept, stopped between pieces, until the connection closes: making one per
 * piece cost nine system calls (dup, the ioctl and four epoll_ctl of uv_poll_init and
 * uv_poll_start, two more and a close at the end) where a kept one costs the two epoll_ctl
 * of starting and stopping it (bench/cluster.py's counters: a leader serving two followers
 * waited about 2,300 times per GiB). A reader that takes nothing at all is closed by the
 * connection's idle rule (connections.max.idle.ms counts from the last byte sent), which
 * ends the send through out_discard. */
struct file_send {
    uv_poll_t poll;
    struct net_conn *conn;
    struct out_item *item; /* the piece being sent; NULL between pieces */
    int sock;
    bool active; /* a piece's send holds a reference on the connection */
};

/* The end of a piece's send (all of it sent, its rest sent back to the queue, or an error):
 * the handle stops and waits for the next piece. */
static void file_send_done(struct file_send *fs, int err)
{
    struct net_conn *c = fs->conn;

    uv_poll_stop(&fs->poll);
    fs->active = false;
    if (fs->item) {
        item_free(fs->item);
        fs->item = NULL;
    }
    c->sending_file = false;
    if (err != 0 && !c->closing) {
        slog_info("net", "sending to %s failed: %s; closing", c->peer, uv_strerror(err));
        conn_close(c);
    }
    conn_pump(c);
    conn_input(c);
    conn_unref(c);
}

static void file_poll_closed(uv_handle_t *h)
{
    struct file_send *fs = h->data;
    struct net_conn *c = fs->conn;

    close(fs->sock);
    if (fs->item)
        item_free(fs->item);
    if (fs->active) {
        c->sending_file = false;
        conn_pump(c);
        conn_input(c);
        conn_unref(c); /* the piece's */
    }
    free(fs);
    conn_unref(c); /* the handle's */
}

/* The connection is closing: its poll handle goes, with a piece's send if one is waiting
 * (finished in the close callback, as the handle's memory is freed only there). */
static void file_poll_close(struct net_conn *c)
{
    struct file_send *fs = c->file_poll;

    if (fs == NULL)
        return;
    c->file_poll = NULL;
    uv_poll_stop(&fs->poll);
    uv_close((uv_handle_t *)&fs->poll, file_poll_closed);
}

/* The connection's poll handle for file sends, made on first use; NULL with *rc set when it
 * cannot be. */
static struct file_send *file_poll_get(struct net_conn *c, int sock, int *rc)
{
    struct file_send *fs = c->file_poll;

    if (fs != NULL)
        return fs;
    fs = calloc(1, sizeof *fs);
    if (fs == NULL) {
        *rc = UV_ENOMEM;
        return NULL;
    }
    fs->conn = c;
    fs->sock = dup(sock);
    if (fs->sock < 0) {
        *rc = -errno;
        free(fs);
        return NULL;
    }
    *rc = uv_poll_init(c->srv->loop, &fs->poll, fs->sock);
    if (*rc != 0) {
        close(fs->sock);
        free(fs);
        return NULL;
    }
    fs->poll.data = fs;
    c->refs++; /* the handle's, until file_poll_closed */
    c->file_poll = fs;
    return fs;
}

/* One sendfile() on the loop copies at most this much: copying a 1 MiB range from the page
 * cache into a loopback socket held the loop about 0.3 ms, and a producer whose request came
 * meanwhile waited for it (bench/cold_read.py: the producer's p99 during a catch-up from the
 * page cache, 2-3.6x its p99 alone). */
#define NET_SENDFILE_TURN ((size_t)256 << 10)

/* Sends up to a turn of the piece, as much as the socket takes now. 0 when all went,
 * UV_EAGAIN when some is left (the socket is full, or the turn is over), or another negative
 * error. A sendfile() that sent less than asked has
 * filled the socket buffer: the rest waits for the socket to say it has room (as nginx's
 * sendfile chain does) rather than asking again only to hear EAGAIN, which doubled the calls
 * per response. A short send for another reason costs only a wake-up: the poll handle is
 * level-triggered, so a socket with room reports it at once. */
static int send_some(struct net_conn *c, int sock, struct out_item *it)
{
    while (it->len > 0) {
        off_t pos = (off_t)it->pos;
        size_t want = it->len < NET_SENDFILE_TURN ? it->len : NET_SENDFILE_TURN;
        ssize_t n = c->srv->opts.io->sendfile(sock, it->fd, &pos, want);
        if (n > 0) {
            c->last_io_ms = uv_now(c->srv->loop);
            it->pos += n;
            it->len -= (size_t)n;
            /* Short: the socket is full. Whole: a turn's worth has gone, and the rest goes
             * after whatever else is ready (the poll handle fires at once while the socket
             * has room). */
            return it->len > 0 ? UV_EAGAIN : 0;
        }
        if (n == 0)
            return UV_EOF; /* the file is shorter than the range: never send a torn frame */
        if (errno == EINTR)
            continue;
        return errno == EAGAIN ? UV_EAGAIN : -errno;
    }
    return 0;
}

static void on_writable(uv_poll_t *h, int status, int events)
{
    struct file_send *fs = h->data;
    struct net_conn *c = fs->conn;
    struct out_item *it = fs->item;
    int rc;

    (void)events;
    if (status < 0) {
        file_send_done(fs, status);
        return;
    }
    if (c->srv->opts.io->resident(it->fd, (off_t)it->pos, it->len) == 0) {
        /* The cache no longer holds all of the rest. Back to the head of the queue unprobed:
         * conn_pump warms it on the pool once this handle has closed, then sends the rest. */
        it->probed = false;
        it->next = c->out_head;
        c->out_head = it;
        if (c->out_tail == NULL)
            c->out_tail = it;
        fs->item = NULL;
        file_send_done(fs, 0);
        return;
    }
    rc = send_some(c, fs->sock, it);
    if (rc != UV_EAGAIN)
        file_send_done(fs, rc);
}

/* Tries a file piece on the loop without blocking; returns 0 when all of it went, 1 when
 * the rest waits for the socket to drain, or a negative error. */
static int send_file_piece(struct net_conn *c, struct out_item *it)
{
    uv_os_fd_t sock;
    struct file_send *fs;
    int rc;

    if (uv_fileno((uv_handle_t *)&c->tcp, &sock) != 0)
        return UV_EBADF;
    rc = send_some(c, sock, it);
    if (rc != UV_EAGAIN)
        return rc;
    fs = file_poll_get(c, sock, &rc);
    if (fs == NULL)
        return rc;
    rc = uv_poll_start(&fs->poll, UV_WRITABLE | UV_DISCONNECT, on_writable);
    if (rc != 0)
        return rc; /* the caller frees the piece and closes the connection */
    fs->item = it;
    fs->active = true;
    c->refs++; /* the piece's, until file_send_done or file_poll_closed */
    c->sending_file = true;
    return 1;
}

/* A send the kernel refused: one line, and the connection closes (its queue with it). */
static void close_on_send_error(struct net_conn *c, const char *what, int rc)
{
    slog_info("net", "%s %s failed: %s; closing", what, c->peer, uv_strerror(rc));
    conn_close(c);
}

/* A cold file piece being read on the pool; the piece is off the queue meanwhile (out_discard
 * cannot free it under the read) and goes back to its head to be sent. */
struct file_warm {
    struct pool_job work;
    struct net_conn *conn;
    struct out_item *item;
    const struct sysio *io;
    int err; /* -errno of a failed read, UV_EOF for a file shorter than the range */
};

/* Thread pool: brings the piece's range into the page cache (sysio's warm: nothing copied). */
static void file_warm_run(uv_work_t *w)
{
    struct file_warm *fw = w->data;
    ssize_t r = sysio_warm_full(fw->io, fw->item->fd, (off_t)fw->item->pos, fw->item->len);

    if (r < 0)
        fw->err = (int)r;
    else if ((size_t)r < fw->item->len)
        fw->err = UV_EOF;
}

static void file_warm_done(uv_work_t *w, int status)
{
    struct file_warm *fw = w->data;
    struct net_conn *c = fw->conn;
    struct out_item *it = fw->item;
    int err = status != 0 ? status : fw->err;

    free(fw);
    c->sending_file = false;
    if (c->closing) {
        item_free(it);
    } else if (err != 0) {
        /* The sendfile() would have failed the same way: never send a torn frame. */
        item_free(it);
        close_on_send_error(c, "sending to", err);
    } else {
        it->probed = true;
        it->next = c->out_head;
        c->out_head = it;
        if (c->out_tail == NULL)
            c->out_tail = it;
    }
    conn_pump(c);
    conn_input(c);
    conn_close_if_written(c);
    conn_unref(c);
}

/* Whether the file piece at the head of the queue must be warmed first; if so takes it off
 * the queue and starts its read on the pool (true). A failed probe or a pool that cannot take
 * the job leaves the piece to the loop, as before the probe existed. */
static bool file_warm_start(struct net_conn *c, struct out_item *it)
{
    const struct sysio *io = c->srv->opts.io;
    struct file_warm *fw;

    it->probed = true;
    if (io->resident(it->fd, (off_t)it->pos, it->len) != 0)
        return false; /* resident, or the kernel cannot tell */
    fw = calloc(1, sizeof *fw);
    if (fw == NULL)
        return false;
    fw->conn = c;
    fw->item = it;
    fw->io = io;
    fw->work.work.data = fw;
    if (pool_submit(c->srv->loop, &fw->work, file_warm_run, file_warm_done) != 0) {
        free(fw);
        return false;
    }
    c->out_head = it->next;
    if (c->out_head == NULL)
        c->out_tail = NULL;
    it->next = NULL;
    c->refs++;
    c->sending_file = true;
    return true;
}

/* Writes the gathered memory pieces items[0..n) (buffers b) at once with uv_try_write and
 * finishes those that went; the rest of a piece half taken stays at the head of the queue.
 * Returns 1 when all went, 0 when some are left for uv_write, or a negative error. */
static int write_now(struct net_conn *c, uv_buf_t *b, struct out_item **items, unsigned n)
{
    int r = uv_try_write((uv_stream_t *)&c->tcp, b, n);
    if (r == UV_EAGAIN)
        return 0;
    if (r < 0)
        return r;
    c->last_io_ms = uv_now(c->srv->loop);
    size_t left = (size_t)r;
    unsigned done = 0;
    while (done < n && left >= items[done]->len)
        left -= items[done++]->len;
    if (done < n) {
        /* Half taken (or not at all): the rest goes first, through uv_write. */
        items[done]->data += left;
        items[done]->len -= left;
        c->out_bytes -= left;
    }
    /* Off the queue before any is freed: a frame's `sent` callback may close the connection,
     * whose discard then never meets them. */
    if (done > 0) {
        c->out_head = items[done - 1]->next;
        if (c->out_head == NULL)
            c->out_tail = NULL;
    }
    for (unsigned i = 0; i < done; i++)
        item_free(items[i]);
    return done == n ? 1 : 0;
}

/* Hands queued output to the kernel in order: memory pieces through uv_write (several may
 * be in flight) or, with `now` (conn_pump_now), written at once while the socket takes them,
 * a file piece only once every earlier write has completed and its pages are in the page
 * cache. */
static void pump(struct net_conn *c, bool now)
{
    if (c->closing) {
        out_discard(c);
        return;
    }
    if (c->tls) {
        tls_pump(c);
        return;
    }
    while (c->out_head && !c->sending_file) {
        struct out_item *it = c->out_head;
        if (it->data == NULL) {
            if (c->writes > 0)
                return;
            if (!it->probed && file_warm_start(c, it))
                return; /* resumed by file_warm_done */
            c->out_head = it->next;
            if (c->out_head == NULL)
                c->out_tail = NULL;
            int rc = send_file_piece(c, it);
            if (rc == 1)
                return;
            item_free(it);
            if (rc < 0) {
                close_on_send_error(c, "sending to", rc);
                return;
            }
            continue;
        }
        uv_buf_t b[WRITE_GATHER];
        struct out_item *items[WRITE_GATHER];
        unsigned n = 0;
        for (struct out_item *g = it; g && g->data && n < WRITE_GATHER; g = g->next) {
            b[n] = uv_buf_init((char *)g->data, (unsigned)g->len);
            items[n++] = g;
        }
        if (now && c->writes == 0) {
            int rc = write_now(c, b, items, n);
            if (rc == 1)
                continue;
            if (rc < 0) {
                close_on_send_error(c, "write to", rc);
                return;
            }
            now = false; /* the socket is full: the rest waits in uv_write */
            continue;
        }
        struct write_req *wr = malloc(sizeof *wr);
        if (wr == NULL) {
            slog_error("net", "out of memory writing to %s; closing", c->peer);
            conn_close(c);
            out_discard(c);
            return;
        }
        wr->conn = c;
        wr->n = n;
        for (unsigned i = 0; i < n; i++)
            wr->items[i] = items[i];
        c->out_head = items[n - 1]->next;
        if (c->out_head == NULL)
            c->out_tail = NULL;
        c->refs++;
        c->writes++;
        if (uv_write(&wr->w, (uv_stream_t *)&c->tcp, b, n, on_write) < 0) {
            c->refs--;
            c->writes--;
            for (unsigned i = 0; i < wr->n; i++)
                item_free(wr->items[i]);
            free(wr);
            conn_close(c);
            out_discard(c);
            return;
        }
    }
}

void conn_pump(struct net_conn *c)
{
    pump(c, false);
}

void conn_pump_now(struct net_conn *c)
{
    pump(c, true);
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
    if (data)
        c->out_bytes += len;
    if (c->out_tail)
        c->out_tail->next = it;
    else
        c->out_head = it;
    c->out_tail = it;
    return true;
}

void conn_queue_response(struct net_conn *c, struct req_int *r)
{
    struct out_frame *f = calloc(1, sizeof *f);
    size_t at = 0;
    bool ok = f != NULL;

    if (f == NULL) {
        if (r->sent)
            r->sent(r->sent_arg);
        free(r->resp);
    } else {
        f->conn = c;
        f->buf = r->resp;
        f->refs = 1; /* held while queuing */
        c->out_frames++;
        f->sent = r->sent;
        f->sent_arg = r->sent_arg;
        if (c->srv->opts.on_sent) {
            f->times = r->times;
            f->times.queued_ns = uv_hrtime();
            f->timed = true;
        }
        for (size_t i = 0; ok && i < r->n_holes; i++) {
            const struct net_file_range *fr = r->holes[i].ext;
            ok = out_push(c, f, r->resp + at, r->holes[i].at - at, -1, 0) &&
                 out_push(c, f, NULL, fr->len, fr->fd, fr->pos);
            at = r->holes[i].at;
        }
        ok = ok && out_push(c, f, r->resp + at, r->resp_len - at, -1, 0);
        f->timed = f->timed && ok;
        frame_unref(f);
    }
    r->resp = NULL;
    r->sent = NULL;
    if (!ok) {
        slog_error("net", "out of memory writing to %s; closing", c->peer);
        conn_close(c);
    }
}

/* ---- TLS output ---------------------------------------------------------------------------- */

struct tls_write {
    uv_write_t w;
    struct net_conn *conn;
    size_t len;
    uint8_t data[];
};

static void on_tls_write(uv_write_t *w, int status)
{
    struct tls_write *tw = (struct tls_write *)w;
    struct net_conn *c = tw->conn;
    if (status < 0 && status != UV_ECANCELED && !c->closing) {
        slog_info("net", "write to %s failed: %s; closing", c->peer, uv_strerror(status));
        conn_close(c);
    }
    if (status == 0)
        c->last_io_ms = uv_now(c->srv->loop);
    c->out_bytes -= tw->len;
    c->tls_wire_bytes -= tw->len;
    free(tw);
    c->writes--;
    conn_pump(c);
    conn_input(c);
    conn_close_if_written(c);
    conn_unref(c);
}

void conn_tls_flush(struct net_conn *c)
{
    size_t n;
    while (!c->closing && (n = tls_conn_pending(c->tls)) > 0) {
        struct tls_write *tw = malloc(sizeof *tw + n);
        if (tw == NULL) {
            slog_error("net", "out of memory writing to %s; closing", c->peer);
            conn_close(c);
            return;
        }
        tw->conn = c;
        tw->len = tls_conn_take(c->tls, tw->data, n);
        uv_buf_t b = uv_buf_init((char *)tw->data, (unsigned)tw->len);
        c->refs++;
        c->writes++;
        c->out_bytes += tw->len;
        c->tls_wire_bytes += tw->len;
        if (uv_write(&tw->w, (uv_stream_t *)&c->tcp, &b, 1, on_tls_write) < 0) {
            c->refs--;
            c->writes--;
            c->out_bytes -= tw->len;
            c->tls_wire_bytes -= tw->len;
            free(tw);
            conn_close(c);
            return;
        }
    }
}

/* One chunk of a file piece being read for encryption; the piece is off the queue meanwhile
 * (out_discard cannot free it under the read) and goes back to its head if more is left. */
struct tls_file_read {
    uv_fs_t fs;
    struct net_conn *conn;
    struct out_item *item;
    size_t len;
    uint8_t data[];
};

static void tls_fail_output(struct net_conn *c, const char *why)
{
    slog_info("net", "sending to %s failed: %s; closing", c->peer, why);
    conn_close(c);
    out_discard(c);
}

static void on_tls_file_read(uv_fs_t *fs)
{
    struct tls_file_read *fr = fs->data;
    struct net_conn *c = fr->conn;
    struct out_item *it = fr->item;
    ssize_t n = fs->result;

    uv_fs_req_cleanup(fs);
    c->sending_file = false;
    if (!c->closing) {
        if (n <= 0) {
            /* A file shorter than its range: never send a torn frame. */
            tls_fail_output(c, n < 0 ? uv_strerror((int)n) : "end of file inside a range");
        } else if (tls_conn_write(c->tls, fr->data, (size_t)n) != 0) {
            tls_fail_output(c, tls_conn_error(c->tls));
        } else {
            it->pos += n;
            it->len -= (size_t)n;
            if (it->len > 0) {
                it->next = c->out_head;
                c->out_head = it;
                if (c->out_tail == NULL)
                    c->out_tail = it;
                it = NULL;
            }
        }
    }
    if (it)
        item_free(it);
    free(fr);
    conn_pump(c);
    conn_input(c);
    conn_close_if_written(c);
    conn_unref(c);
}

static void tls_pump(struct net_conn *c)
{
    while (c->out_head && !c->sending_file && !c->closing) {
        struct out_item *it = c->out_head;
        if (it->data == NULL && c->tls_wire_bytes >= NET_TLS_FILE_WINDOW)
            break; /* resumed by on_tls_write */
        c->out_head = it->next;
        if (c->out_head == NULL)
            c->out_tail = NULL;
        it->next = NULL;
        if (it->data) {
            int rc = tls_conn_write(c->tls, it->data, it->len);
            item_free(it);
            if (rc != 0) {
                tls_fail_output(c, tls_conn_error(c->tls));
                return;
            }
            continue;
        }
        size_t len = it->len < NET_TLS_FILE_CHUNK ? it->len : NET_TLS_FILE_CHUNK;
        struct tls_file_read *fr = malloc(sizeof *fr + len);
        if (fr == NULL) {
            item_free(it);
            tls_fail_output(c, "out of memory");
            return;
        }
        fr->conn = c;
        fr->item = it;
        fr->len = len;
        fr->fs.data = fr;
        uv_buf_t b = uv_buf_init((char *)fr->data, (unsigned)len);
        int rc = uv_fs_read(c->srv->loop, &fr->fs, it->fd, &b, 1, it->pos, on_tls_file_read);
        if (rc != 0) {
            free(fr);
            item_free(it);
            tls_fail_output(c, uv_strerror(rc));
            return;
        }
        c->refs++;
        c->sending_file = true;
    }
    conn_tls_flush(c);
}
