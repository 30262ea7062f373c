/* SPDX-License-Identifier: Apache-2.0 */
/* baseline_server: the least a broker can do with Produce requests, as the yardstick
 * of the ingest benchmark. One thread and epoll, like tallyd's event loop: each
 * connection's bytes are read into a buffer, every whole 4-byte-size frame is
 * write()n to that connection's own file (as a broker writes each partition to its
 * own log; one shared file would make the threads of a writer fight over the inode
 * lock) and answered with a fixed 16-byte response that carries the request's
 * correlation id and an empty topic list (loadgen needs nothing more).
 *
 * Usage: baseline_server PORT DIR. Prints "ready" on stdout once listening; runs
 * until killed. Files are DIR/conn-N.
 *
 * Response frame:
 **   SIZE  FIELD
 **      4  size (12)
 **      4  correlation_id (copied from the request)
 **      4  responses: 0
 **      4  throttle_time_ms: 0
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_FRAME (100 << 20)
#define READ_CHUNK (4 << 20)

struct conn {
    int fd, file;
    uint8_t *buf;
    size_t cap, len; /* bytes buffered, from buf[0] */
};

static int write_all(int fd, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static void conn_close(struct conn *c)
{
    close(c->fd);
    close(c->file);
    free(c->buf);
    free(c);
}

/* Reads what is there, handles the whole frames. Returns -1 to close. */
static int conn_readable(struct conn *c)
{
    for (;;) {
        if (c->cap - c->len < READ_CHUNK) {
            size_t ncap = c->cap * 2 > c->len + READ_CHUNK ? c->cap * 2 : c->len + READ_CHUNK;
            uint8_t *nb = realloc(c->buf, ncap);
            if (nb == NULL)
                return -1;
            c->buf = nb;
            c->cap = ncap;
        }
        ssize_t n = read(c->fd, c->buf + c->len, c->cap - c->len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return 0;
        if (n <= 0)
            return -1;
        c->len += (size_t)n;

        /* Every whole frame: append it to the file, then one response each. */
        uint8_t resp[16 * 64];
        size_t at = 0, nresp = 0;
        while (c->len - at >= 4) {
            uint32_t size = ntohl(*(uint32_t *)(c->buf + at));
            if (size < 8 || size > MAX_FRAME)
                return -1;
            if (c->len - at < 4 + (size_t)size)
                break;
            if (write_all(c->file, c->buf + at, 4 + (size_t)size) != 0) {
                perror("baseline_server: write");
                exit(1);
            }
            uint8_t *r = resp + 16 * nresp++;
            uint32_t len = htonl(12);
            memset(r, 0, 16);
            memcpy(r, &len, 4);
            memcpy(r + 4, c->buf + at + 8, 4); /* api_key 2, api_version 2, correlation_id 4 */
            at += 4 + (size_t)size;
            if (nresp == 64) {
                if (write_all(c->fd, resp, 16 * nresp) != 0)
                    return -1;
                nresp = 0;
            }
        }
        if (nresp > 0 && write_all(c->fd, resp, 16 * nresp) != 0)
            return -1;
        memmove(c->buf, c->buf + at, c->len - at);
        c->len -= at;
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: baseline_server PORT DIR\n");
        return 2;
    }
    int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[1]))};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(ls, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(ls, 64) != 0) {
        perror("baseline_server: listen");
        return 1;
    }
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
    epoll_ctl(ep, EPOLL_CTL_ADD, ls, &ev);
    printf("ready\n");
    fflush(stdout);
    int n_conns = 0;
    for (;;) {
        struct epoll_event evs[64];
        int n = epoll_wait(ep, evs, 64, -1);
        for (int i = 0; i < n; i++) {
            struct conn *c = evs[i].data.ptr;
            if (c == NULL) {
                int fd = accept4(ls, NULL, NULL, SOCK_NONBLOCK);
                if (fd < 0)
                    continue;
                setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                char path[4096];
                snprintf(path, sizeof path, "%s/conn-%d", argv[2], n_conns++);
                c = calloc(1, sizeof *c);
                c->fd = fd;
                c->file = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
                if (c->file < 0) {
                    perror(path);
                    exit(1);
                }
                struct epoll_event cev = {.events = EPOLLIN, .data.ptr = c};
                epoll_ctl(ep, EPOLL_CTL_ADD, fd, &cev);
            } else if (conn_readable(c) != 0) {
                epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
                conn_close(c);
            }
        }
    }
}
