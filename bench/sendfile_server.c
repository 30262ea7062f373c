/* SPDX-License-Identifier: Apache-2.0 */
/* sendfile_server: the least a broker can do to serve stored bytes, as the yardstick
 * of the read benchmark. It serves the concatenation of the files named on the
 * command line (a partition's segment files, say) to clients that ask for byte
 * ranges; the bytes go out with sendfile(), never through user space. One thread
 * per connection.
 *
 * Usage: sendfile_server PORT FILE... Prints "ready SIZE" (total bytes) on stdout
 * once listening; runs until killed.
 *
 * Request and response frames:
 **   SIZE  FIELD
 **      4  size (16)               4  size (4 + length)
 **      4  correlation_id          4  correlation_id
 **      8  offset                  length bytes of the files from offset
 **      4  length
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

struct file {
    int fd;
    int64_t start, size; /* place in the concatenation */
};

static struct file *files;
static int n_files;
static int64_t total;

static int read_all(int fd, void *buf, size_t len)
{
    uint8_t *p = buf;
    while (len > 0) {
        ssize_t n = read(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
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

/* Sends [off, off + len) of the concatenation, crossing file boundaries. */
static int send_range(int sock, int64_t off, int64_t len)
{
    for (int i = 0; i < n_files && len > 0; i++) {
        struct file *f = &files[i];
        if (off >= f->start + f->size)
            continue;
        off_t at = (off_t)(off - f->start);
        int64_t n = f->start + f->size - off;
        if (n > len)
            n = len;
        int64_t left = n;
        while (left > 0) {
            ssize_t s = sendfile(sock, f->fd, &at, (size_t)left);
            if (s < 0 && errno == EINTR)
                continue;
            if (s <= 0)
                return -1;
            left -= s;
        }
        off += n;
        len -= n;
    }
    return len == 0 ? 0 : -1;
}

static void *serve(void *arg)
{
    int fd = (int)(intptr_t)arg;
    uint8_t req[20];
    while (read_all(fd, req, sizeof req) == 0) {
        int64_t off = (int64_t)get64(req + 8);
        uint32_t len = ntohl(*(uint32_t *)(req + 16));
        if (ntohl(*(uint32_t *)req) != 16 || off < 0 || off + len > total)
            break;
        uint8_t hdr[8];
        uint32_t size = htonl(4 + len);
        memcpy(hdr, &size, 4);
        memcpy(hdr + 4, req + 4, 4);
        /* MSG_MORE keeps the header in the same segment as the first bytes. */
        if (send(fd, hdr, sizeof hdr, MSG_MORE) != (ssize_t)sizeof hdr ||
            send_range(fd, off, len) != 0)
            break;
    }
    close(fd);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: sendfile_server PORT FILE...\n");
        return 2;
    }
    n_files = argc - 2;
    files = calloc((size_t)n_files, sizeof *files);
    for (int i = 0; i < n_files; i++) {
        struct stat st;
        files[i].fd = open(argv[i + 2], O_RDONLY);
        if (files[i].fd < 0 || fstat(files[i].fd, &st) != 0) {
            perror(argv[i + 2]);
            return 1;
        }
        files[i].start = total;
        files[i].size = st.st_size;
        total += st.st_size;
    }
    int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[1]))};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(ls, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(ls, 64) != 0) {
        perror("sendfile_server: listen");
        return 1;
    }
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
