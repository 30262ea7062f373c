/* SPDX-License-Identifier: Apache-2.0 */
/* net output: each connection's queue of response pieces, handed to the kernel in order.
 *
 * A response frame becomes a list of pieces: memory ranges of its encoded buffer, and file
 * ranges (net_respond_files) sent with sendfile() where the encoded buffer has a hole.
 * Memory pieces go through uv_write (several in flight); a file piece starts only once every
 * earlier write has completed. The queue is bounded from the input side: net.c stops
 * reading a connection while out_frames and out_bytes say it holds enough (conn_input), and
 * every completed piece here gives it a chance to resume. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include "base/log.h"
#include "net_int.h"

static void frame_unref(struct out_frame *f)
{
    if (--f->refs > 0)
        return;
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

void out_discard(struct net_conn *c)
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

static void on_write(uv_write_t *w, int status)
{
    struct write_req *wr = (struct write_req *)w;
    struct net_conn *c = wr->conn;
    if (status < 0 && status != UV_ECANCELED && !c->closing) {
        log_info("net", "write to %s failed: %s; closing", c->peer, uv_strerror(status));
        conn_close(c);
    }
    if (status == 0)
        c->last_io_ms = uv_now(c->srv->loop);
    item_free(wr->item);
    free(wr);
    c->writes--;
    conn_pump(c);
    conn_input(c);
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
    if (fs->err == 0)
        c->last_io_ms = uv_now(c->srv->loop);
    item_free(fs->item);
    free(fs);
    c->sending_file = false;
    conn_pump(c);
    conn_input(c);
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
            c->last_io_ms = uv_now(c->srv->loop);
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
void conn_pump(struct net_conn *c)
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
