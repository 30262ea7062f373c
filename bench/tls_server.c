/* SPDX-License-Identifier: Apache-2.0 */
/* tls_server: the crypto floor of the TLS benchmarks (bench/tls.py), the least a server
 * can do over TLS with OpenSSL 3, the library tallyd's SSL listener uses, with the same
 * defaults (TLS 1.2-1.3, OpenSSL's default suites: TLS_AES_256_GCM_SHA384 with a TLS 1.3
 * client), no session tickets, no renegotiation. Two modes:
 *
 *   tls_server sink PORT DIR CERT KEY
 *       baseline_server over TLS: one thread and epoll, non-blocking sockets; each
 *       connection's plaintext is read with SSL_read (with 64 KiB of read-ahead, so that a
 *       socket read takes several records), every whole 4-byte-size
 *       frame write()n to DIR/conn-N and answered with the fixed 16-byte response of
 *       baseline_server (the answers of one read in one SSL_write).
 *   tls_server range PORT CERT KEY FILE...
 *       sendfile_server over TLS: one thread per connection, the same range requests;
 *       each range is pread() from the concatenation of FILEs 64 KiB at a time (the
 *       8-byte header in front of the first piece), each piece sent with SSL_write, whose
 *       records gather in a 1 MiB buffering BIO (flushed once per answer) so that a socket
 *       write carries many records, not one 16 KiB record each.
 *
 * CERT is a PEM certificate chain, KEY a PEM private key (the same file may hold both).
 * Prints "ready" (sink) or "ready SIZE" (range) on stdout once listening; runs until
 * killed. Frames: see baseline_server.c and sendfile_server.c. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#define MAX_FRAME (100 << 20)
#define READ_CHUNK (4 << 20)
/* Read-ahead (sink) and write buffer (range) sizes; TLS_SERVER_READ_AHEAD and
 * TLS_SERVER_WRITE_BUF override them (bytes; 0 = none). Chosen by measuring: 64 KiB of
 * read-ahead cost 0.73 CPU s/GiB of ingest where 1 MiB cost 0.93 (the ciphertext leaves
 * the cache before it is decrypted) and none 0.77 (two reads per record); write buffers of
 * 0, 64 KiB, 256 KiB and 1 MiB cost the same (0.65-0.68), 1 MiB makes the fewest writes. */
#define TLS_READ_AHEAD (64 << 10)
#define TLS_WRITE_BUF (1 << 20)
/* A range is read and encrypted in pieces of this size (TLS_SERVER_RANGE_CHUNK overrides):
 * best of 3, 64 KiB cost 0.55 CPU s/GiB, 256 KiB (tallyd's NET_TLS_FILE_CHUNK) 0.59, the
 * whole 8 MiB range at once 0.65 (the plaintext leaves the cache before it is encrypted). */
#define TLS_RANGE_CHUNK (64 << 10)

static SSL_CTX *ctx;

static void die(const char *what)
{
    fprintf(stderr, "tls_server: %s\n", what);
    ERR_print_errors_fp(stderr);
    exit(1);
}

static void make_ctx(const char *cert, const char *key)
{
    ctx = SSL_CTX_new(TLS_server_method());
    if (ctx == NULL || SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
        SSL_CTX_use_certificate_chain_file(ctx, cert) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1)
        die("cannot load the certificate and key");
    SSL_CTX_set_options(ctx,
                        SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_TICKET | SSL_OP_IGNORE_UNEXPECTED_EOF);
    SSL_CTX_set_num_tickets(ctx, 0);
    const char *ra = getenv("TLS_SERVER_READ_AHEAD");
    long read_ahead = ra ? atol(ra) : TLS_READ_AHEAD;
    if (read_ahead > 0) {
        SSL_CTX_set_read_ahead(ctx, 1);
        SSL_CTX_set_default_read_buffer_len(ctx, (size_t)read_ahead);
    }
}

static int listen_on(const char *port)
{
    int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port))};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(ls, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(ls, 64) != 0) {
        perror("tls_server: listen");
        exit(1);
    }
    return ls;
}

/* ---------------------------------------------------------------- sink */

struct conn {
    int fd, file;
    SSL *ssl;
    uint8_t *buf;
    size_t cap, len; /* plaintext buffered, from buf[0] */
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

/* SSL_write on a non-blocking socket: the answers are small, so the socket has room but
 * for the rarest of cases, where this waits for it. */
static int ssl_write_all(SSL *ssl, int fd, const void *buf, size_t len)
{
    while (len > 0) {
        size_t n = 0;
        if (SSL_write_ex(ssl, buf, len, &n) == 1) {
            buf = (const uint8_t *)buf + n;
            len -= n;
            continue;
        }
        int e = SSL_get_error(ssl, 0);
        if (e != SSL_ERROR_WANT_WRITE && e != SSL_ERROR_WANT_READ)
            return -1;
        struct pollfd pf = {.fd = fd, .events = e == SSL_ERROR_WANT_WRITE ? POLLOUT : POLLIN};
        poll(&pf, 1, 1000);
    }
    return 0;
}

static void conn_close(struct conn *c)
{
    SSL_free(c->ssl);
    close(c->fd);
    close(c->file);
    free(c->buf);
    free(c);
}

/* Reads what is there (the handshake first), handles the whole frames. -1 to close. */
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
        size_t n = 0;
        if (SSL_read_ex(c->ssl, c->buf + c->len, c->cap - c->len, &n) != 1) {
            int e = SSL_get_error(c->ssl, 0);
            if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
                return 0;
            if (e != SSL_ERROR_ZERO_RETURN && !(e == SSL_ERROR_SYSCALL && errno == 0)) {
                fprintf(stderr, "tls_server: connection %d: SSL error %d (errno %d)\n", c->fd, e,
                        errno);
                ERR_print_errors_fp(stderr);
            }
            ERR_clear_error();
            return -1;
        }
        c->len += n;

        uint8_t resp[16 * 64];
        size_t at = 0, nresp = 0;
        while (c->len - at >= 4) {
            uint32_t size = ntohl(*(uint32_t *)(c->buf + at));
            if (size < 8 || size > MAX_FRAME)
                return -1;
            if (c->len - at < 4 + (size_t)size)
                break;
            if (write_all(c->file, c->buf + at, 4 + (size_t)size) != 0) {
                perror("tls_server: write");
                exit(1);
            }
            uint8_t *r = resp + 16 * nresp++;
            uint32_t len = htonl(12);
            memset(r, 0, 16);
            memcpy(r, &len, 4);
            memcpy(r + 4, c->buf + at + 8, 4); /* correlation id */
            at += 4 + (size_t)size;
            if (nresp == 64) {
                if (ssl_write_all(c->ssl, c->fd, resp, 16 * nresp) != 0)
                    return -1;
                nresp = 0;
            }
        }
        if (nresp > 0 && ssl_write_all(c->ssl, c->fd, resp, 16 * nresp) != 0)
            return -1;
        if (at > 0) { /* SSL_read gives one record (16 KiB) a call: move only when consumed */
            memmove(c->buf, c->buf + at, c->len - at);
            c->len -= at;
        }
    }
}

static int sink(const char *port, const char *dir)
{
    int ls = listen_on(port), one = 1;
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
                snprintf(path, sizeof path, "%s/conn-%d", dir, n_conns++);
                c = calloc(1, sizeof *c);
                c->fd = fd;
                c->file = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
                c->ssl = SSL_new(ctx);
                if (c->file < 0 || c->ssl == NULL || SSL_set_fd(c->ssl, fd) != 1) {
                    perror(path);
                    exit(1);
                }
                SSL_set_accept_state(c->ssl);
                struct epoll_event cev = {.events = EPOLLIN, .data.ptr = c};
                epoll_ctl(ep, EPOLL_CTL_ADD, fd, &cev);
            } else if (conn_readable(c) != 0) {
                epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
                conn_close(c);
            }
        }
    }
}

/* ---------------------------------------------------------------- range */

struct file {
    int fd;
    int64_t start, size; /* place in the concatenation */
};

static struct file *files;
static int n_files;
static int64_t total;

static int ssl_read_all(SSL *ssl, void *buf, size_t len)
{
    while (len > 0) {
        size_t n = 0;
        if (SSL_read_ex(ssl, buf, len, &n) != 1)
            return -1;
        buf = (uint8_t *)buf + n;
        len -= n;
    }
    return 0;
}

static uint64_t get64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

/* Reads [off, off + len) of the concatenation into dst, crossing file boundaries. */
static int read_range(uint8_t *dst, int64_t off, int64_t len)
{
    for (int i = 0; i < n_files && len > 0; i++) {
        struct file *f = &files[i];
        if (off >= f->start + f->size)
            continue;
        int64_t n = f->start + f->size - off;
        if (n > len)
            n = len;
        for (int64_t got = 0; got < n;) {
            ssize_t r = pread(f->fd, dst + got, (size_t)(n - got), (off_t)(off - f->start + got));
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                return -1;
            got += r;
        }
        dst += n;
        off += n;
        len -= n;
    }
    return len == 0 ? 0 : -1;
}

static void *serve(void *arg)
{
    int fd = (int)(intptr_t)arg;
    SSL *ssl = SSL_new(ctx);
    const char *wb = getenv("TLS_SERVER_WRITE_BUF");
    long wbuf = wb ? atol(wb) : TLS_WRITE_BUF;
    BIO *sock = BIO_new_socket(fd, BIO_NOCLOSE), *out = sock;
    const char *rc = getenv("TLS_SERVER_RANGE_CHUNK");
    long chunk = rc && atol(rc) > 0 ? atol(rc) : TLS_RANGE_CHUNK;
    uint8_t req[20], *buf = NULL;
    if (wbuf > 0)
        out = BIO_new(BIO_f_buffer());
    if (ssl == NULL || sock == NULL || out == NULL ||
        (wbuf > 0 && BIO_set_write_buffer_size(out, wbuf) != 1)) {
        close(fd);
        return NULL;
    }
    if (out != sock) {
        BIO_push(out, sock);
        BIO_up_ref(sock);
        SSL_set_bio(ssl, sock, out); /* reads from the socket, writes through the buffer */
    } else {
        SSL_set_bio(ssl, sock, sock);
    }
    if (SSL_accept(ssl) != 1)
        goto done;
    while (ssl_read_all(ssl, req, sizeof req) == 0) {
        int64_t off = (int64_t)get64(req + 8);
        uint32_t len = ntohl(*(uint32_t *)(req + 16));
        if (ntohl(*(uint32_t *)req) != 16 || off < 0 || off + len > total)
            break;
        if (buf == NULL && (buf = malloc(8 + (size_t)chunk)) == NULL)
            break;
        /* The header goes in front of the first piece: no record of its own. */
        uint32_t size = htonl(4 + len);
        memcpy(buf, &size, 4);
        memcpy(buf + 4, req + 4, 4);
        size_t head = 8, n = 0;
        int ok = 1;
        for (int64_t at = off, end = off + len; ok && (at < end || head > 0);) {
            int64_t piece = end - at < chunk ? end - at : chunk;
            ok = read_range(buf + head, at, piece) == 0 &&
                 SSL_write_ex(ssl, buf, head + (size_t)piece, &n) == 1;
            at += piece;
            head = 0;
        }
        if (!ok || BIO_flush(out) != 1)
            break;
    }
done:
    SSL_free(ssl); /* frees both BIOs */
    free(buf);
    close(fd);
    return NULL;
}

static int range(const char *port, int argc, char **argv)
{
    n_files = argc;
    files = calloc((size_t)n_files, sizeof *files);
    for (int i = 0; i < n_files; i++) {
        struct stat st;
        files[i].fd = open(argv[i], O_RDONLY);
        if (files[i].fd < 0 || fstat(files[i].fd, &st) != 0) {
            perror(argv[i]);
            return 1;
        }
        files[i].start = total;
        files[i].size = st.st_size;
        total += st.st_size;
    }
    int ls = listen_on(port), one = 1;
    printf("ready %lld\n", (long long)total);
    fflush(stdout);
    for (;;) {
        int fd = accept(ls, NULL, NULL);
        if (fd < 0)
            continue;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        pthread_t th;
        if (pthread_create(&th, NULL, serve, (void *)(intptr_t)fd) != 0)
            close(fd);
        else
            pthread_detach(th);
    }
}

int main(int argc, char **argv)
{
    if (argc == 6 && strcmp(argv[1], "sink") == 0) {
        make_ctx(argv[4], argv[5]);
        return sink(argv[2], argv[3]);
    }
    if (argc >= 6 && strcmp(argv[1], "range") == 0) {
        make_ctx(argv[3], argv[4]);
        return range(argv[2], argc - 5, argv + 5);
    }
    fprintf(stderr, "usage: tls_server sink PORT DIR CERT KEY | range PORT CERT KEY FILE...\n");
    return 2;
}
