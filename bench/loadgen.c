/* SPDX-License-Identifier: Apache-2.0 */
/* loadgen: a raw Kafka-protocol load generator for the efficiency benchmarks. It
 * skips every client-side cost a real client has (no per-record work while
 * running) so that the server's CPU is what the benchmark sees.
 *
 *   loadgen produce --port P --topic T [--partitions K] [--connections C]
 *                   [--inflight D] [--bytes TOTAL] [--batch-bytes B] [--record-size R]
 *       Sends pre-encoded Produce v7 requests (acks=1), each holding one uncompressed
 *       magic-2 batch of about B bytes of R-byte records with a valid CRC32C, over C
 *       connections with D requests in flight each, until TOTAL bytes of batches are
 *       acknowledged. Connection i writes partition i % K. Any error code in a
 *       response stops the run. Against bench/baseline_server the response carries
 *       no topics, which is accepted.
 *   loadgen fetch --port P --topic T [--partitions K] [--connections C]
 *                 [--max-bytes M] [--partition-max-bytes PM] [--passes N]
 *       Fetch v4 requests: connection i reads partition i % K from offset 0 until
 *       a response is empty at the high watermark, walking the returned batches to
 *       find the next offset; N passes.
 *   loadgen ranges --port P --size BYTES [--connections C] [--chunk PM] [--passes N]
 *       The same read load for bench/sendfile_server: the byte range [0, BYTES) is
 *       split into C slices, each read in PM-byte requests.
 *
 * Every command prints one line: "bytes=N seconds=S MiB/s=X". Exit 1 on error.
 *
 * Produce v7 request frame, as built here (big-endian):
 **   SIZE  FIELD
 **      4  frame size (bytes after this field)
 **      2  api_key 0, 2 api_version 7, 4 correlation_id, 2+n client_id
 **      2  transactional_id (-1 = null), 2 acks, 4 timeout_ms
 **      4  topics (1): 2+n name, 4 partitions (1): 4 index, 4+n records
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "record/record.h"

#define MIB (1024.0 * 1024.0)

struct opts {
    const char *cmd;
    int port;
    const char *topic;
    int partitions;
    int connections;
    int inflight;
    int64_t bytes;
    int64_t batch_bytes;
    int record_size;
    int32_t max_bytes;
    int32_t partition_max_bytes;
    int passes;
    int64_t size;
};

/* Per connection: what it did, for the summary. */
struct conn {
    const struct opts *o;
    int id;
    int64_t bytes;  /* batch bytes acknowledged / record bytes read */
    int64_t quota;  /* produce: batch bytes this connection must send */
    int64_t lo, hi; /* ranges: the slice [lo, hi) */
    char error[256];
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void put16(uint8_t *p, int16_t v)
{
    uint16_t u = (uint16_t)v;
    p[0] = (uint8_t)(u >> 8);
    p[1] = (uint8_t)u;
}
static void put32(uint8_t *p, int32_t v)
{
    uint32_t u = (uint32_t)v;
    p[0] = (uint8_t)(u >> 24);
    p[1] = (uint8_t)(u >> 16);
    p[2] = (uint8_t)(u >> 8);
    p[3] = (uint8_t)u;
}
static void put64(uint8_t *p, int64_t v)
{
    put32(p, (int32_t)((uint64_t)v >> 32));
    put32(p + 4, (int32_t)(uint32_t)v);
}
static int16_t get16(const uint8_t *p)
{
    return (int16_t)(((uint16_t)p[0] << 8) | p[1]);
}
static int32_t get32(const uint8_t *p)
{
    return (int32_t)(((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) |
                     p[3]);
}
static int64_t get64(const uint8_t *p)
{
    return (int64_t)(((uint64_t)(uint32_t)get32(p) << 32) | (uint32_t)get32(p + 4));
}

static int dial(int port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static bool write_all(int fd, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        p += n;
        len -= (size_t)n;
    }
    return true;
}

static bool read_all(int fd, void *buf, size_t len)
{
    uint8_t *p = buf;
    while (len > 0) {
        ssize_t n = read(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        p += n;
        len -= (size_t)n;
    }
    return true;
}

/* Reads one response frame into *buf (grown as needed). Returns its size or -1. */
static int64_t read_frame(int fd, uint8_t **buf, size_t *cap)
{
    uint8_t hdr[4];
    if (!read_all(fd, hdr, 4))
        return -1;
    int32_t size = get32(hdr);
    if (size < 4)
        return -1;
    if ((size_t)size > *cap) {
        uint8_t *nb = realloc(*buf, (size_t)size);
        if (nb == NULL)
            return -1;
        *buf = nb;
        *cap = (size_t)size;
    }
    if (!read_all(fd, *buf, (size_t)size))
        return -1;
    return size;
}

/* ---------------------------------------------------------------- produce */

static const char client_id[] = "loadgen";

/* Builds the one batch every request of a connection carries: the broker assigns
 * offsets, and the CRC does not cover the base offset, so one batch can be sent
 * again and again. */
static int build_batch(const struct opts *o, uint8_t **out, size_t *out_len)
{
    int n = (int)(o->batch_bytes / (o->record_size + 12));
    if (n < 1)
        n = 1;
    uint8_t *value = malloc((size_t)o->record_size);
    struct record_input *recs = calloc((size_t)n, sizeof *recs);
    if (value == NULL || recs == NULL)
        return -1;
    for (int i = 0; i < o->record_size; i++)
        value[i] = (uint8_t)('A' + (i * 7) % 26);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t now_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    for (int i = 0; i < n; i++) {
        recs[i].key_len = -1;
        recs[i].value = value;
        recs[i].value_len = o->record_size;
        recs[i].timestamp = now_ms;
    }
    struct record_build_options bo = {
        .base_offset = 0, .producer_id = -1, .producer_epoch = -1, .base_sequence = -1};
    int rc = record_batch_build(&bo, recs, n, out, out_len);
    free(recs);
    free(value);
    return rc;
}

static uint8_t *build_produce(const struct opts *o, int partition, const uint8_t *batch,
                              size_t batch_len, size_t *frame_len)
{
    size_t tlen = strlen(o->topic);
    size_t cid = sizeof client_id - 1;
    size_t len = 4 + 2 + 2 + 4 + 2 + cid + 2 + 2 + 4 + 4 + 2 + tlen + 4 + 4 + 4 + batch_len;
    uint8_t *f = malloc(len), *p = f;
    if (f == NULL)
        return NULL;
    put32(p, (int32_t)(len - 4)), p += 4;
    put16(p, 0), p += 2;
    put16(p, 7), p += 2;
    put32(p, 0), p += 4;
    put16(p, (int16_t)cid), p += 2;
    memcpy(p, client_id, cid), p += cid;
    put16(p, -1), p += 2;
    put16(p, 1), p += 2;
    put32(p, 30000), p += 4;
    put32(p, 1), p += 4;
    put16(p, (int16_t)tlen), p += 2;
    memcpy(p, o->topic, tlen), p += tlen;
    put32(p, 1), p += 4;
    put32(p, partition), p += 4;
    put32(p, (int32_t)batch_len), p += 4;
    memcpy(p, batch, batch_len);
    *frame_len = len;
    return f;
}

/* Checks a Produce v7 response: every partition's error code must be 0. */
static bool check_produce_response(const uint8_t *b, int64_t len, char *err, size_t errlen)
{
    int64_t pos = 4; /* correlation id */
    if (len < pos + 4)
        goto short_;
    int32_t topics = get32(b + pos);
    pos += 4;
    for (int32_t t = 0; t < topics; t++) {
        if (len < pos + 2)
            goto short_;
        pos += 2 + get16(b + pos);
        if (len < pos + 4)
            goto short_;
        int32_t parts = get32(b + pos);
        pos += 4;
        for (int32_t i = 0; i < parts; i++) {
            if (len < pos + 6 + 24)
                goto short_;
            int16_t ec = get16(b + pos + 4);
            if (ec != 0) {
                snprintf(err, errlen, "produce response: partition %d error code %d",
                         get32(b + pos), ec);
                return false;
            }
            /* v7: index, error_code, base_offset, log_append_time_ms, log_start_offset */
            pos += 6 + 24;
        }
    }
    return true;
short_:
    snprintf(err, errlen, "short produce response (%" PRId64 " bytes)", len);
    return false;
}

static void *produce_conn(void *arg)
{
    struct conn *c = arg;
    const struct opts *o = c->o;
    uint8_t *batch = NULL, *frame = NULL, *resp = NULL;
    size_t batch_len, frame_len, cap = 0;
    int fd = -1;

    if (build_batch(o, &batch, &batch_len) != 0) {
        snprintf(c->error, sizeof c->error, "cannot build batch");
        goto out;
    }
    frame = build_produce(o, c->id % o->partitions, batch, batch_len, &frame_len);
    fd = dial(o->port);
    if (frame == NULL || fd < 0) {
        snprintf(c->error, sizeof c->error, "cannot connect to port %d", o->port);
        goto out;
    }
    int64_t to_send = (c->quota + (int64_t)batch_len - 1) / (int64_t)batch_len;
    int64_t sent = 0, acked = 0;
    int32_t corr = 0;
    while (acked < to_send) {
        while (sent < to_send && sent - acked < o->inflight) {
            put32(frame + 8, corr++);
            if (!write_all(fd, frame, frame_len)) {
                snprintf(c->error, sizeof c->error, "write failed: %s", strerror(errno));
                goto out;
            }
            sent++;
        }
        int64_t n = read_frame(fd, &resp, &cap);
        if (n < 0) {
            snprintf(c->error, sizeof c->error, "connection closed after %" PRId64 " responses",
                     acked);
            goto out;
        }
        if (get32(resp) != (int32_t)acked) {
            snprintf(c->error, sizeof c->error, "response for correlation id %d, want %" PRId64,
                     get32(resp), acked);
            goto out;
        }
        if (!check_produce_response(resp, n, c->error, sizeof c->error))
            goto out;
        acked++;
        c->bytes += (int64_t)batch_len;
    }
out:
    if (fd >= 0)
        close(fd);
    free(batch);
    free(frame);
    free(resp);
    return NULL;
}

/* ---------------------------------------------------------------- fetch */

/* Fetch v4 request for one partition. */
static size_t build_fetch(const struct opts *o, uint8_t *f, int32_t corr, int partition,
                          int64_t offset)
{
    size_t tlen = strlen(o->topic);
    size_t cid = sizeof client_id - 1;
    uint8_t *p = f + 4;
    put16(p, 1), p += 2;
    put16(p, 4), p += 2;
    put32(p, corr), p += 4;
    put16(p, (int16_t)cid), p += 2;
    memcpy(p, client_id, cid), p += cid;
    put32(p, -1), p += 4;           /* replica_id */
    put32(p, 0), p += 4;            /* max_wait_ms */
    put32(p, 1), p += 4;            /* min_bytes */
    put32(p, o->max_bytes), p += 4; /* max_bytes */
    *p++ = 0;                       /* isolation_level */
    put32(p, 1), p += 4;
    put16(p, (int16_t)tlen), p += 2;
    memcpy(p, o->topic, tlen), p += tlen;
    put32(p, 1), p += 4;
    put32(p, partition), p += 4;
    put64(p, offset), p += 8;
    put32(p, o->partition_max_bytes), p += 4;
    put32(f, (int32_t)(p - f - 4));
    return (size_t)(p - f);
}

/* Parses a Fetch v4 response for one partition: sets *hw, *next (the offset after
 * the last whole batch, unchanged when there is none) and *bytes (record bytes). */
static bool parse_fetch(const uint8_t *b, int64_t len, int64_t *hw, int64_t *next, int64_t *bytes,
                        char *err, size_t errlen)
{
    int64_t pos = 4 + 4; /* correlation id, throttle_time_ms */
    if (len < pos + 4 || get32(b + pos) != 1)
        goto bad;
    pos += 4;
    pos += 2 + get16(b + pos);
    if (len < pos + 4 + 4 + 2 + 16 + 4 || get32(b + pos) != 1)
        goto bad;
    pos += 4 + 4;
    int16_t ec = get16(b + pos);
    if (ec != 0) {
        snprintf(err, errlen, "fetch response: error code %d", ec);
        return false;
    }
    *hw = get64(b + pos + 2);
    pos += 2 + 16;
    int32_t aborted = get32(b + pos);
    pos += 4 + (aborted > 0 ? (int64_t)aborted * 16 : 0);
    if (len < pos + 4)
        goto bad;
    int32_t rlen = get32(b + pos);
    pos += 4;
    if (rlen < 0)
        rlen = 0;
    if (len < pos + rlen)
        goto bad;
    *bytes = rlen;
    const uint8_t *r = b + pos;
    int64_t at = 0;
    while (at + RECORD_BATCH_HEADER <= rlen) {
        int32_t blen = get32(r + at + 8);
        if (blen < RECORD_BATCH_HEADER - RECORD_BATCH_OVERHEAD ||
            at + RECORD_BATCH_OVERHEAD + blen > rlen)
            break; /* a partial batch at the end, as brokers may send */
        *next = get64(r + at) + get32(r + at + 23) + 1;
        at += RECORD_BATCH_OVERHEAD + blen;
    }
    return true;
bad:
    snprintf(err, errlen, "malformed fetch response (%" PRId64 " bytes)", len);
    return false;
}

static void *fetch_conn(void *arg)
{
    struct conn *c = arg;
    const struct opts *o = c->o;
    uint8_t req[512], *resp = NULL;
    size_t cap = 0;
    int32_t corr = 0;
    int fd = dial(o->port);
    if (fd < 0) {
        snprintf(c->error, sizeof c->error, "cannot connect to port %d", o->port);
        return NULL;
    }
    for (int pass = 0; pass < o->passes; pass++) {
        int64_t offset = 0;
        for (;;) {
            size_t n = build_fetch(o, req, corr, c->id % o->partitions, offset);
            if (!write_all(fd, req, n)) {
                snprintf(c->error, sizeof c->error, "write failed");
                goto out;
            }
            int64_t len = read_frame(fd, &resp, &cap);
            if (len < 0 || get32(resp) != corr) {
                snprintf(c->error, sizeof c->error, "bad or missing fetch response");
                goto out;
            }
            corr++;
            int64_t hw = 0, next = offset, bytes = 0;
            if (!parse_fetch(resp, len, &hw, &next, &bytes, c->error, sizeof c->error))
                goto out;
            c->bytes += bytes;
            if (next == offset) {
                if (offset >= hw)
                    break;
                snprintf(c->error, sizeof c->error,
                         "no whole batch at offset %" PRId64 " (hw %" PRId64
                         "): raise --partition-max-bytes",
                         offset, hw);
                goto out;
            }
            offset = next;
        }
    }
out:
    close(fd);
    free(resp);
    return NULL;
}

/* ---------------------------------------------------------------- ranges */

/* Range request to sendfile_server: 4 size, 4 correlation id, 8 offset, 4 length.
 * Response: 4 size, 4 correlation id, then the bytes. */
static void *ranges_conn(void *arg)
{
    struct conn *c = arg;
    const struct opts *o = c->o;
    uint8_t req[20], *resp = NULL;
    size_t cap = 0;
    int32_t corr = 0;
    int fd = dial(o->port);
    if (fd < 0) {
        snprintf(c->error, sizeof c->error, "cannot connect to port %d", o->port);
        return NULL;
    }
    for (int pass = 0; pass < o->passes; pass++) {
        for (int64_t at = c->lo; at < c->hi;) {
            int64_t want = c->hi - at;
            if (want > o->partition_max_bytes)
                want = o->partition_max_bytes;
            put32(req, 16);
            put32(req + 4, corr);
            put64(req + 8, at);
            put32(req + 16, (int32_t)want);
            if (!write_all(fd, req, sizeof req)) {
                snprintf(c->error, sizeof c->error, "write failed");
                goto out;
            }
            int64_t len = read_frame(fd, &resp, &cap);
            if (len != want + 4 || get32(resp) != corr) {
                snprintf(c->error, sizeof c->error, "bad range response");
                goto out;
            }
            corr++;
            c->bytes += want;
            at += want;
        }
    }
out:
    close(fd);
    free(resp);
    return NULL;
}

/* ---------------------------------------------------------------- main */

static bool num(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || end == s || v < 0)
        return false;
    /* k, m, g suffixes in powers of 1024 */
    if (*end == 'k' || *end == 'K')
        v <<= 10, end++;
    else if (*end == 'm' || *end == 'M')
        v <<= 20, end++;
    else if (*end == 'g' || *end == 'G')
        v <<= 30, end++;
    if (*end != '\0')
        return false;
    *out = v;
    return true;
}

static int usage(void)
{
    fprintf(stderr,
            "usage: loadgen produce|fetch|ranges --port P [options] (see bench/loadgen.c)\n");
    return 2;
}

int main(int argc, char **argv)
{
    struct opts o = {
        .partitions = 4,
        .connections = 4,
        .inflight = 4,
        .bytes = (int64_t)2 << 30,
        .batch_bytes = 512 << 10,
        .record_size = 1024,
        .max_bytes = 50 << 20,
        .partition_max_bytes = 8 << 20,
        .passes = 1,
    };
    if (argc < 2)
        return usage();
    o.cmd = argv[1];
    for (int i = 2; i + 1 < argc; i += 2) {
        const char *k = argv[i];
        int64_t v = 0;
        if (strcmp(k, "--topic") == 0) {
            o.topic = argv[i + 1];
            continue;
        }
        if (!num(argv[i + 1], &v))
            return usage();
        if (strcmp(k, "--port") == 0)
            o.port = (int)v;
        else if (strcmp(k, "--partitions") == 0)
            o.partitions = (int)v;
        else if (strcmp(k, "--connections") == 0)
            o.connections = (int)v;
        else if (strcmp(k, "--inflight") == 0)
            o.inflight = (int)v;
        else if (strcmp(k, "--bytes") == 0)
            o.bytes = v;
        else if (strcmp(k, "--batch-bytes") == 0)
            o.batch_bytes = v;
        else if (strcmp(k, "--record-size") == 0)
            o.record_size = (int)v;
        else if (strcmp(k, "--max-bytes") == 0)
            o.max_bytes = (int32_t)v;
        else if (strcmp(k, "--partition-max-bytes") == 0 || strcmp(k, "--chunk") == 0)
            o.partition_max_bytes = (int32_t)v;
        else if (strcmp(k, "--passes") == 0)
            o.passes = (int)v;
        else if (strcmp(k, "--size") == 0)
            o.size = v;
        else
            return usage();
    }
    void *(*fn)(void *);
    if (strcmp(o.cmd, "produce") == 0)
        fn = produce_conn;
    else if (strcmp(o.cmd, "fetch") == 0)
        fn = fetch_conn;
    else if (strcmp(o.cmd, "ranges") == 0)
        fn = ranges_conn;
    else
        return usage();
    if (o.port <= 0 || o.connections < 1 || o.partitions < 1 || o.inflight < 1 ||
        (fn != ranges_conn && o.topic == NULL) || (fn == ranges_conn && o.size <= 0))
        return usage();

    struct conn *conns = calloc((size_t)o.connections, sizeof *conns);
    pthread_t *th = calloc((size_t)o.connections, sizeof *th);
    if (conns == NULL || th == NULL)
        return 1;
    for (int i = 0; i < o.connections; i++) {
        conns[i].o = &o;
        conns[i].id = i;
        conns[i].quota = o.bytes / o.connections;
        conns[i].lo = o.size * i / o.connections;
        conns[i].hi = o.size * (i + 1) / o.connections;
    }
    double t0 = now_s();
    for (int i = 0; i < o.connections; i++)
        pthread_create(&th[i], NULL, fn, &conns[i]);
    int64_t total = 0;
    int rc = 0;
    for (int i = 0; i < o.connections; i++) {
        pthread_join(th[i], NULL);
        total += conns[i].bytes;
        if (conns[i].error[0] != '\0') {
            fprintf(stderr, "loadgen: connection %d: %s\n", i, conns[i].error);
            rc = 1;
        }
    }
    double secs = now_s() - t0;
    printf("bytes=%" PRId64 " seconds=%.3f MiB/s=%.1f\n", total, secs,
           (double)total / MIB / (secs > 0 ? secs : 1e-9));
    free(conns);
    free(th);
    return rc;
}
