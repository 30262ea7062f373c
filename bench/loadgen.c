/* SPDX-License-Identifier: Apache-2.0 */
/* loadgen: a raw Kafka-protocol load generator for the efficiency benchmarks. It
 * skips every client-side cost a real client has (no per-record work while
 * running) so that the server's CPU is what the benchmark sees.
 *
 *   loadgen produce --port P --topic T [--partitions K] [--connections C]
 *                   [--inflight D] [--bytes TOTAL] [--batch-bytes B] [--record-size R]
 *                   [--mode plain|idempotent|transactional] [--txn-ms D] [--txn-batches N]
 *                   [--abort-every K]
 *                   [--acks 1|all]
 *       Sends pre-encoded Produce v7 requests (acks=1 unless --acks all; always acks=all
 *       in the idempotent and transactional modes), each holding one uncompressed
 *       magic-2 batch of about B bytes of R-byte records with a valid CRC32C, over C
 *       connections with D requests in flight each, until TOTAL bytes of batches are
 *       acknowledged. Connection i writes partition i % K. Any error code in a
 *       response stops the run. Against bench/baseline_server the response carries
 *       no topics, which is accepted.
 *       --mode idempotent: each connection first gets a producer id (InitProducerId
 *       v1 without transactional id) and its batches carry it, with sequence numbers
 *       (patched, CRC recomputed, per request). --mode transactional: connection i is
 *       transactional id "loadgen-<run>-<i>" (FindCoordinator until the coordinator is
 *       ready, InitProducerId v1); each transaction adds its partition
 *       (AddPartitionsToTxn v1, retried on CONCURRENT_TRANSACTIONS), sends transactional
 *       batches for --txn-ms D (default 100) ms, or N batches with --txn-batches N (a
 *       count that does not depend on the machine's speed, for counting instructions
 *       under valgrind), waits for their acks and ends with
 *       EndTxn v1: commit, or abort for every --abort-every K'th transaction (0: never).
 *       Produce requests then carry the transactional id. The summary adds
 *       "txns=N aborted=M endtxn_p50_ms=X endtxn_p99_ms=Y".
 *   loadgen fetch --port P --topic T [--partitions K] [--connections C]
 *                 [--max-bytes M] [--partition-max-bytes PM] [--passes N] [--isolation I]
 *                 [--fetch-version 12|4]
 *       Fetch v12 requests (flexible: compact strings and arrays, tagged fields; what
 *       modern clients send, served with sendfile alone), or v4 (whose slices the broker
 *       reads on its pool to look for zstd, KIP-110): connection i reads partition i % K from
 *offset 0 until a response is empty at the high watermark (with --isolation 1, read_committed: at
 *the last stable offset), walking the returned batches to find the next offset; N passes. loadgen
 *ranges --port P --size BYTES [--connections C] [--chunk PM] [--passes N] The same read load for
 *bench/sendfile_server: the byte range [0, BYTES) is split into C slices, each read in PM-byte
 *requests.
 *
 * Every command takes --tls CAFILE: each connection speaks TLS (OpenSSL 3, its default
 * suites and versions) and verifies the server's certificate against CAFILE ("-": no
 * verification); without it, plaintext as before.
 *
 * Every command prints one line: "bytes=N seconds=S MiB/s=X" (fetch and ranges add
 * "responses=N"). Exit 1 on error.
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

#include <openssl/err.h>
#include <openssl/ssl.h>

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
    int mode; /* MODE_* */
    int64_t txn_ms;
    int64_t txn_batches; /* > 0: a transaction per this many batches, not per txn_ms */
    int64_t abort_every;
    int isolation;
    int64_t run_id;
    int acks;          /* plain mode: 1 (default) or -1 (all) */
    int fetch_version; /* fetch: 12 (default, flexible) or 4 */
};

enum { MODE_PLAIN, MODE_IDEMPOTENT, MODE_TRANSACTIONAL };

/* Per connection: what it did, for the summary. */
struct conn {
    const struct opts *o;
    int id;
    int64_t bytes;     /* batch bytes acknowledged / record bytes read */
    int64_t responses; /* fetch, ranges: responses read */
    int64_t quota;     /* produce: batch bytes this connection must send */
    int64_t lo, hi;    /* ranges: the slice [lo, hi) */
    char error[256];
    int64_t txns, aborted; /* transactional: ended transactions */
    double *endtxn_ms;     /* their EndTxn latencies */
    size_t n_endtxn, cap_endtxn;
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

/* --tls: the client context, and each connection thread's TLS session (one connection per
 * thread), which write_all, read_all and hang_up use when set. */
static SSL_CTX *tls_ctx;
static __thread SSL *tls;

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
    if (tls_ctx != NULL) {
        tls = SSL_new(tls_ctx);
        if (tls == NULL || SSL_set_fd(tls, fd) != 1 || SSL_connect(tls) != 1) {
            ERR_print_errors_fp(stderr);
            SSL_free(tls);
            tls = NULL;
            close(fd);
            return -1;
        }
    }
    return fd;
}

static void hang_up(int fd)
{
    if (tls != NULL) {
        SSL_free(tls);
        tls = NULL;
    }
    close(fd);
}

static bool write_all(int fd, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    while (len > 0) {
        if (tls != NULL) {
            size_t n = 0;
            if (SSL_write_ex(tls, p, len, &n) != 1)
                return false;
            p += n;
            len -= n;
            continue;
        }
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
        if (tls != NULL) {
            size_t n = 0;
            if (SSL_read_ex(tls, p, len, &n) != 1)
                return false;
            p += n;
            len -= n;
            continue;
        }
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
static int build_batch_pid(const struct opts *o, int64_t pid, int16_t epoch, bool txn,
                           uint8_t **out, size_t *out_len);
static int build_batch(const struct opts *o, uint8_t **out, size_t *out_len)
{
    return build_batch_pid(o, -1, -1, false, out, out_len);
}

static int build_batch_pid(const struct opts *o, int64_t pid, int16_t epoch, bool txn,
                           uint8_t **out, size_t *out_len)
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
    struct record_build_options bo = {.base_offset = 0,
                                      .attributes = txn ? 0x10 : 0,
                                      .producer_id = pid,
                                      .producer_epoch = epoch,
                                      .base_sequence = pid >= 0 ? 0 : -1};
    int rc = record_batch_build(&bo, recs, n, out, out_len);
    free(recs);
    free(value);
    return rc;
}

static uint8_t *build_produce_tid(const struct opts *o, const char *tid, int partition,
                                  const uint8_t *batch, size_t batch_len, size_t *frame_len,
                                  size_t *batch_at);
static uint8_t *build_produce(const struct opts *o, int partition, const uint8_t *batch,
                              size_t batch_len, size_t *frame_len)
{
    size_t at;
    return build_produce_tid(o, NULL, partition, batch, batch_len, frame_len, &at);
}

static uint8_t *build_produce_tid(const struct opts *o, const char *tid, int partition,
                                  const uint8_t *batch, size_t batch_len, size_t *frame_len,
                                  size_t *batch_at)
{
    size_t tlen = strlen(o->topic);
    size_t cid = sizeof client_id - 1;
    size_t tidlen = tid ? strlen(tid) : 0;
    size_t len =
        4 + 2 + 2 + 4 + 2 + cid + 2 + tidlen + 2 + 4 + 4 + 2 + tlen + 4 + 4 + 4 + batch_len;
    uint8_t *f = malloc(len), *p = f;
    if (f == NULL)
        return NULL;
    put32(p, (int32_t)(len - 4)), p += 4;
    put16(p, 0), p += 2;
    put16(p, 7), p += 2;
    put32(p, 0), p += 4;
    put16(p, (int16_t)cid), p += 2;
    memcpy(p, client_id, cid), p += cid;
    if (tid != NULL) {
        put16(p, (int16_t)tidlen), p += 2;
        memcpy(p, tid, tidlen), p += tidlen;
    } else {
        put16(p, -1), p += 2;
    }
    put16(p, tid != NULL || o->mode != MODE_PLAIN ? -1 : (int16_t)o->acks), p += 2; /* acks */
    put32(p, 30000), p += 4;
    put32(p, 1), p += 4;
    put16(p, (int16_t)tlen), p += 2;
    memcpy(p, o->topic, tlen), p += tlen;
    put32(p, 1), p += 4;
    put32(p, partition), p += 4;
    put32(p, (int32_t)batch_len), p += 4;
    memcpy(p, batch, batch_len);
    *batch_at = (size_t)(p - f);
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
        hang_up(fd);
    free(batch);
    free(frame);
    free(resp);
    return NULL;
}

/* ---------------------------------------------------------------- idempotent / txn */

/* A blocking request/response on fd: frame f (correlation id patched to corr), then the
 * response into *resp. Returns the response length or -1. */
static int64_t call(int fd, uint8_t *f, size_t len, int32_t corr, uint8_t **resp, size_t *cap)
{
    put32(f + 8, corr);
    if (!write_all(fd, f, len))
        return -1;
    int64_t n = read_frame(fd, resp, cap);
    if (n < 8 || get32(*resp) != corr)
        return -1;
    return n;
}

/* Request header v1 (non-flexible) for api/version into f; returns the bytes written. */
static size_t put_header(uint8_t *f, int16_t api, int16_t version)
{
    size_t cid = sizeof client_id - 1;
    uint8_t *p = f + 4;
    put16(p, api), p += 2;
    put16(p, version), p += 2;
    put32(p, 0), p += 4;
    put16(p, (int16_t)cid), p += 2;
    memcpy(p, client_id, cid), p += cid;
    return (size_t)(p - f);
}

static size_t put_str(uint8_t *p, const char *s)
{
    if (s == NULL) {
        put16(p, -1);
        return 2;
    }
    size_t n = strlen(s);
    put16(p, (int16_t)n);
    memcpy(p + 2, s, n);
    return 2 + n;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* FindCoordinator v1 (transaction) until answered, then InitProducerId v1. Retriable
 * coordinator errors (not available 15, loading 14, not coordinator 16, concurrent 51)
 * are retried for up to 30 s. */
static bool init_pid(struct conn *c, int fd, const char *tid, int64_t *pid, int16_t *epoch,
                     int32_t *corr)
{
    uint8_t f[512], *resp = NULL;
    size_t cap = 0;
    double deadline = now_s() + 30;
    bool ok = false;
    if (tid != NULL) {
        for (;;) {
            size_t n = put_header(f, 10, 1);
            n += put_str(f + n, tid);
            f[n++] = 1; /* key type: transaction */
            put32(f, (int32_t)(n - 4));
            int64_t len = call(fd, f, n, (*corr)++, &resp, &cap);
            if (len < 4 + 4 + 2) {
                snprintf(c->error, sizeof c->error, "bad FindCoordinator response");
                goto out;
            }
            int16_t ec = get16(resp + 8);
            if (ec == 0)
                break;
            if (now_s() > deadline) {
                snprintf(c->error, sizeof c->error, "FindCoordinator: error %d", ec);
                goto out;
            }
            sleep_ms(50);
        }
    }
    for (;;) {
        size_t n = put_header(f, 22, 1);
        n += put_str(f + n, tid);
        put32(f + n, 60000), n += 4;
        put32(f, (int32_t)(n - 4));
        int64_t len = call(fd, f, n, (*corr)++, &resp, &cap);
        if (len < 4 + 4 + 2 + 8 + 2) {
            snprintf(c->error, sizeof c->error, "bad InitProducerId response");
            goto out;
        }
        int16_t ec = get16(resp + 8);
        if (ec == 0) {
            *pid = get64(resp + 10);
            *epoch = get16(resp + 18);
            ok = true;
            goto out;
        }
        if ((ec != 14 && ec != 15 && ec != 16 && ec != 51) || now_s() > deadline) {
            snprintf(c->error, sizeof c->error, "InitProducerId: error %d", ec);
            goto out;
        }
        sleep_ms(50);
    }
out:
    free(resp);
    return ok;
}

/* AddPartitionsToTxn v1 for (topic, partition), retried on CONCURRENT_TRANSACTIONS (the
 * previous transaction still completing). */
static bool add_partition(struct conn *c, int fd, const char *tid, int64_t pid, int16_t epoch,
                          int partition, int32_t *corr)
{
    uint8_t f[512], *resp = NULL;
    size_t cap = 0;
    bool ok = false;
    double deadline = now_s() + 30;
    for (;;) {
        size_t n = put_header(f, 24, 1);
        n += put_str(f + n, tid);
        put64(f + n, pid), n += 8;
        put16(f + n, epoch), n += 2;
        put32(f + n, 1), n += 4;
        n += put_str(f + n, c->o->topic);
        put32(f + n, 1), n += 4;
        put32(f + n, partition), n += 4;
        put32(f, (int32_t)(n - 4));
        int64_t len = call(fd, f, n, (*corr)++, &resp, &cap);
        /* corr, throttle, [topics: name, [partition, error]] */
        if (len < 8 + 4 + 2) {
            snprintf(c->error, sizeof c->error, "bad AddPartitionsToTxn response");
            goto out;
        }
        int64_t pos = 8 + 4;
        pos += 2 + get16(resp + pos);
        if (len < pos + 4 + 4 + 2) {
            snprintf(c->error, sizeof c->error, "short AddPartitionsToTxn response");
            goto out;
        }
        int16_t ec = get16(resp + pos + 8);
        if (ec == 0) {
            ok = true;
            goto out;
        }
        if (ec != 51 || now_s() > deadline) {
            snprintf(c->error, sizeof c->error, "AddPartitionsToTxn: error %d", ec);
            goto out;
        }
        sleep_ms(1);
    }
out:
    free(resp);
    return ok;
}

/* EndTxn v1; records its latency. */
static bool end_txn(struct conn *c, int fd, const char *tid, int64_t pid, int16_t epoch,
                    bool commit, int32_t *corr)
{
    uint8_t f[512], *resp = NULL;
    size_t cap = 0;
    size_t n = put_header(f, 26, 1);
    n += put_str(f + n, tid);
    put64(f + n, pid), n += 8;
    put16(f + n, epoch), n += 2;
    f[n++] = commit ? 1 : 0;
    put32(f, (int32_t)(n - 4));
    double t0 = now_s();
    int64_t len = call(fd, f, n, (*corr)++, &resp, &cap);
    double ms = (now_s() - t0) * 1000.0;
    bool ok = false;
    if (len < 8 + 2) {
        snprintf(c->error, sizeof c->error, "bad EndTxn response");
    } else if (get16(resp + 8) != 0) {
        snprintf(c->error, sizeof c->error, "EndTxn: error %d", get16(resp + 8));
    } else {
        ok = true;
        if (c->n_endtxn == c->cap_endtxn) {
            size_t nc = c->cap_endtxn ? 2 * c->cap_endtxn : 256;
            double *g = realloc(c->endtxn_ms, nc * sizeof *g);
            if (g != NULL) {
                c->endtxn_ms = g;
                c->cap_endtxn = nc;
            }
        }
        if (c->n_endtxn < c->cap_endtxn)
            c->endtxn_ms[c->n_endtxn++] = ms;
        c->txns++;
        if (!commit)
            c->aborted++;
    }
    free(resp);
    return ok;
}

/* Idempotent or transactional produce: like produce_conn, but every batch carries the
 * connection's producer id and the next sequence number (patched into the frame, CRC
 * recomputed), and in the transactional mode the requests are grouped in transactions of
 * --txn-ms each. Responses to Produce are read in order; the non-produce requests of the
 * transaction are sent only when no Produce is in flight. */
static void *produce_conn_pid(void *arg)
{
    struct conn *c = arg;
    const struct opts *o = c->o;
    bool txn = o->mode == MODE_TRANSACTIONAL;
    uint8_t *batch = NULL, *frame = NULL, *resp = NULL;
    size_t batch_len, frame_len, batch_at, cap = 0;
    char tid[64];
    int64_t pid = -1;
    int16_t epoch = -1;
    int32_t corr = 0, records = 0;
    int partition = c->id % o->partitions;
    int fd = dial(o->port);

    snprintf(tid, sizeof tid, "loadgen-%" PRId64 "-%d", o->run_id, c->id);
    if (fd < 0) {
        snprintf(c->error, sizeof c->error, "cannot connect to port %d", o->port);
        goto out;
    }
    if (!init_pid(c, fd, txn ? tid : NULL, &pid, &epoch, &corr))
        goto out;
    if (build_batch_pid(o, pid, epoch, txn, &batch, &batch_len) != 0) {
        snprintf(c->error, sizeof c->error, "cannot build batch");
        goto out;
    }
    records = get32(batch + 57);
    frame =
        build_produce_tid(o, txn ? tid : NULL, partition, batch, batch_len, &frame_len, &batch_at);
    if (frame == NULL) {
        snprintf(c->error, sizeof c->error, "out of memory");
        goto out;
    }
    int64_t to_send = (c->quota + (int64_t)batch_len - 1) / (int64_t)batch_len;
    int64_t sent = 0, acked = 0;
    int32_t seq = 0;
    uint8_t *b = frame + batch_at;
    int32_t expect = 0; /* correlation id of the next produce response */
    bool open = false;
    double txn_start = 0;
    int64_t txn_first = 0; /* sent when the transaction began */
    while (acked < to_send) {
        if (txn && !open) {
            if (!add_partition(c, fd, tid, pid, epoch, partition, &corr))
                goto out;
            open = true;
            txn_start = now_s();
            txn_first = sent;
        }
        bool closing =
            txn && (o->txn_batches > 0 ? sent - txn_first >= o->txn_batches
                                       : (now_s() - txn_start) * 1000.0 >= (double)o->txn_ms);
        if (sent == acked)
            expect = corr; /* the next produce's; produces in flight are consecutive */
        while (!closing && sent < to_send && sent - acked < o->inflight &&
               (!txn || o->txn_batches <= 0 || sent - txn_first < o->txn_batches)) {
            put32(b + 53, seq); /* base sequence */
            put32(b + 17, (int32_t)record_crc32c(0, b + 21, batch_len - 21));
            seq += records;
            put32(frame + 8, corr++);
            if (!write_all(fd, frame, frame_len)) {
                snprintf(c->error, sizeof c->error, "write failed: %s", strerror(errno));
                goto out;
            }
            sent++;
        }
        if (sent > acked) {
            int64_t n = read_frame(fd, &resp, &cap);
            if (n < 0) {
                snprintf(c->error, sizeof c->error, "connection closed after %" PRId64 " responses",
                         acked);
                goto out;
            }
            if (get32(resp) != expect) {
                snprintf(c->error, sizeof c->error, "response for correlation id %d, want %d",
                         get32(resp), expect);
                goto out;
            }
            expect++;
            if (!check_produce_response(resp, n, c->error, sizeof c->error))
                goto out;
            acked++;
            c->bytes += (int64_t)batch_len;
        }
        if (txn && open && sent == acked && (closing || acked >= to_send)) {
            bool commit = o->abort_every <= 0 || (c->txns + 1) % o->abort_every != 0;
            if (!end_txn(c, fd, tid, pid, epoch, commit, &corr))
                goto out;
            open = false;
        }
    }
out:
    if (fd >= 0)
        hang_up(fd);
    free(batch);
    free(frame);
    free(resp);
    return NULL;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* ---------------------------------------------------------------- fetch */

/* Fetch v4 request for one partition. */
static size_t build_fetch_v4(const struct opts *o, uint8_t *f, int32_t corr, int partition,
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
    *p++ = (uint8_t)o->isolation;   /* isolation_level */
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
static bool parse_fetch_v4(const uint8_t *b, int64_t len, int64_t *hw, int64_t *lso, int64_t *next,
                           int64_t *bytes, char *err, size_t errlen)
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
    *lso = get64(b + pos + 10);
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

static uint8_t *put_uvarint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

/* Reads an unsigned varint at b[*pos] (below len); false when it runs off the end. */
static bool get_uvarint(const uint8_t *b, int64_t len, int64_t *pos, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; shift < 64 && *pos < len; shift += 7) {
        uint8_t x = b[(*pos)++];
        *v |= (uint64_t)(x & 0x7f) << shift;
        if (!(x & 0x80))
            return true;
    }
    return false;
}

/* Skips a tagged-field section (a count, then tag, size, bytes each). */
static bool skip_tags(const uint8_t *b, int64_t len, int64_t *pos)
{
    uint64_t n, tag, size;
    if (!get_uvarint(b, len, pos, &n))
        return false;
    while (n-- > 0) {
        if (!get_uvarint(b, len, pos, &tag) || !get_uvarint(b, len, pos, &size) ||
            (int64_t)size > len - *pos)
            return false;
        *pos += (int64_t)size;
    }
    return true;
}

/* Fetch v12 request for one partition (request header v2: client_id stays a non-compact
 * string, then an empty tagged-field section; the body is flexible, topics by name). */
static size_t build_fetch_v12(const struct opts *o, uint8_t *f, int32_t corr, int partition,
                              int64_t offset)
{
    size_t tlen = strlen(o->topic);
    size_t cid = sizeof client_id - 1;
    uint8_t *p = f + 4;
    put16(p, 1), p += 2;
    put16(p, 12), p += 2;
    put32(p, corr), p += 4;
    put16(p, (int16_t)cid), p += 2;
    memcpy(p, client_id, cid), p += cid;
    *p++ = 0;                       /* header tagged fields */
    put32(p, -1), p += 4;           /* replica_id */
    put32(p, 0), p += 4;            /* max_wait_ms */
    put32(p, 1), p += 4;            /* min_bytes */
    put32(p, o->max_bytes), p += 4; /* max_bytes */
    *p++ = (uint8_t)o->isolation;   /* isolation_level */
    put32(p, 0), p += 4;            /* session_id: a full fetch */
    put32(p, -1), p += 4;           /* session_epoch */
    p = put_uvarint(p, 1 + 1);      /* topics (compact array of 1) */
    p = put_uvarint(p, tlen + 1);
    memcpy(p, o->topic, tlen), p += tlen;
    p = put_uvarint(p, 1 + 1); /* partitions */
    put32(p, partition), p += 4;
    put32(p, -1), p += 4; /* current_leader_epoch: unknown */
    put64(p, offset), p += 8;
    put32(p, -1), p += 4; /* last_fetched_epoch */
    put64(p, -1), p += 8; /* log_start_offset (a consumer's: -1) */
    put32(p, o->partition_max_bytes), p += 4;
    *p++ = 0; /* partition tagged fields */
    *p++ = 0; /* topic tagged fields */
    *p++ = 1; /* forgotten_topics_data: empty */
    *p++ = 1; /* rack_id: "" */
    *p++ = 0; /* body tagged fields */
    put32(f, (int32_t)(p - f - 4));
    return (size_t)(p - f);
}

/* Parses a Fetch v12 response for one partition, as parse_fetch_v4 does. */
static bool parse_fetch_v12(const uint8_t *b, int64_t len, int64_t *hw, int64_t *lso, int64_t *next,
                            int64_t *bytes, char *err, size_t errlen)
{
    int64_t pos = 4; /* correlation id */
    uint64_t n;
    if (!skip_tags(b, len, &pos) || len < pos + 4 + 2 + 4)
        goto bad;
    pos += 4; /* throttle_time_ms */
    int16_t top = get16(b + pos);
    if (top != 0) {
        snprintf(err, errlen, "fetch response: top-level error code %d", top);
        return false;
    }
    pos += 2 + 4; /* error_code, session_id */
    if (!get_uvarint(b, len, &pos, &n) || n != 2 || !get_uvarint(b, len, &pos, &n) || n == 0 ||
        (int64_t)n - 1 > len - pos)
        goto bad;
    pos += (int64_t)n - 1; /* topic name */
    if (!get_uvarint(b, len, &pos, &n) || n != 2 || len < pos + 4 + 2 + 24)
        goto bad;
    pos += 4;
    int16_t ec = get16(b + pos);
    if (ec != 0) {
        snprintf(err, errlen, "fetch response: error code %d", ec);
        return false;
    }
    *hw = get64(b + pos + 2);
    *lso = get64(b + pos + 10);
    pos += 2 + 24;
    if (!get_uvarint(b, len, &pos, &n)) /* aborted_transactions: compact nullable */
        goto bad;
    for (uint64_t k = 1; k < n; k++) {
        pos += 16;
        if (pos > len || !skip_tags(b, len, &pos))
            goto bad;
    }
    pos += 4; /* preferred_read_replica */
    if (pos > len || !get_uvarint(b, len, &pos, &n))
        goto bad;
    int64_t rlen = n > 0 ? (int64_t)n - 1 : 0;
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
    snprintf(err, errlen, "malformed fetch v12 response (%" PRId64 " bytes)", len);
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
            size_t n = o->fetch_version == 4
                           ? build_fetch_v4(o, req, corr, c->id % o->partitions, offset)
                           : build_fetch_v12(o, req, corr, c->id % o->partitions, offset);
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
            c->responses++;
            int64_t hw = 0, lso = 0, next = offset, bytes = 0;
            bool ok = o->fetch_version == 4 ? parse_fetch_v4(resp, len, &hw, &lso, &next, &bytes,
                                                             c->error, sizeof c->error)
                                            : parse_fetch_v12(resp, len, &hw, &lso, &next, &bytes,
                                                              c->error, sizeof c->error);
            if (!ok)
                goto out;
            c->bytes += bytes;
            if (o->isolation == 1)
                hw = lso; /* read_committed reads up to the last stable offset */
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
    hang_up(fd);
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
            c->responses++;
            c->bytes += want;
            at += want;
        }
    }
out:
    hang_up(fd);
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
        .txn_ms = 100,
        .acks = 1,
        .fetch_version = 12,
    };
    const char *tls_ca = NULL;
    o.run_id = (int64_t)getpid();
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
        if (strcmp(k, "--tls") == 0) {
            tls_ca = argv[i + 1];
            continue;
        }
        if (strcmp(k, "--acks") == 0) {
            if (strcmp(argv[i + 1], "all") == 0)
                o.acks = -1;
            else if (strcmp(argv[i + 1], "1") == 0)
                o.acks = 1;
            else
                return usage();
            continue;
        }
        if (strcmp(k, "--mode") == 0) {
            const char *m = argv[i + 1];
            if (strcmp(m, "plain") == 0)
                o.mode = MODE_PLAIN;
            else if (strcmp(m, "idempotent") == 0)
                o.mode = MODE_IDEMPOTENT;
            else if (strcmp(m, "transactional") == 0)
                o.mode = MODE_TRANSACTIONAL;
            else
                return usage();
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
        else if (strcmp(k, "--txn-ms") == 0)
            o.txn_ms = v;
        else if (strcmp(k, "--txn-batches") == 0)
            o.txn_batches = v;
        else if (strcmp(k, "--abort-every") == 0)
            o.abort_every = v;
        else if (strcmp(k, "--isolation") == 0)
            o.isolation = (int)(v != 0);
        else if (strcmp(k, "--fetch-version") == 0 && (v == 4 || v == 12))
            o.fetch_version = (int)v;

        else
            return usage();
    }
    void *(*fn)(void *);
    if (strcmp(o.cmd, "produce") == 0)
        fn = o.mode == MODE_PLAIN ? produce_conn : produce_conn_pid;
    else if (strcmp(o.cmd, "fetch") == 0)
        fn = fetch_conn;
    else if (strcmp(o.cmd, "ranges") == 0)
        fn = ranges_conn;
    else
        return usage();
    if (o.port <= 0 || o.connections < 1 || o.partitions < 1 || o.inflight < 1 ||
        (fn != ranges_conn && o.topic == NULL) || (fn == ranges_conn && o.size <= 0))
        return usage();

    if (tls_ca != NULL) {
        tls_ctx = SSL_CTX_new(TLS_client_method());
        if (tls_ctx == NULL)
            return 1;
        SSL_CTX_set_read_ahead(tls_ctx, 1);
        SSL_CTX_set_default_read_buffer_len(tls_ctx, 1 << 20);
        if (strcmp(tls_ca, "-") != 0) {
            if (SSL_CTX_load_verify_locations(tls_ctx, tls_ca, NULL) != 1) {
                ERR_print_errors_fp(stderr);
                return 1;
            }
            SSL_CTX_set_verify(tls_ctx, SSL_VERIFY_PEER, NULL);
        }
    }

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
    int64_t total = 0, txns = 0, aborted = 0, responses = 0;
    size_t n_lat = 0;
    int rc = 0;
    for (int i = 0; i < o.connections; i++) {
        pthread_join(th[i], NULL);
        total += conns[i].bytes;
        responses += conns[i].responses;
        txns += conns[i].txns;
        aborted += conns[i].aborted;
        n_lat += conns[i].n_endtxn;
        if (conns[i].error[0] != '\0') {
            fprintf(stderr, "loadgen: connection %d: %s\n", i, conns[i].error);
            rc = 1;
        }
    }
    double secs = now_s() - t0;
    printf("bytes=%" PRId64 " seconds=%.3f MiB/s=%.1f", total, secs,
           (double)total / MIB / (secs > 0 ? secs : 1e-9));
    if (strcmp(o.cmd, "fetch") == 0 || strcmp(o.cmd, "ranges") == 0)
        printf(" responses=%" PRId64, responses);
    if (o.mode == MODE_TRANSACTIONAL && strcmp(o.cmd, "produce") == 0) {
        double *lat = calloc(n_lat + 1, sizeof *lat);
        size_t k = 0;
        for (int i = 0; lat != NULL && i < o.connections; i++)
            for (size_t j = 0; j < conns[i].n_endtxn; j++)
                lat[k++] = conns[i].endtxn_ms[j];
        if (lat != NULL && k > 0)
            qsort(lat, k, sizeof *lat, cmp_double);
        printf(" txns=%" PRId64 " aborted=%" PRId64 " endtxn_p50_ms=%.2f endtxn_p99_ms=%.2f", txns,
               aborted, k ? lat[k / 2] : 0.0,
               k ? lat[(k * 99) / 100 < k ? (k * 99) / 100 : k - 1] : 0.0);
        free(lat);
    }
    printf("\n");
    for (int i = 0; i < o.connections; i++)
        free(conns[i].endtxn_ms);
    free(conns);
    free(th);
    return rc;
}
