/* SPDX-License-Identifier: Apache-2.0 */
/* tally producers describe: the active producers of a topic's partitions, as
 * kafka-transactions.sh describe-producers prints them. librdkafka has no
 * DescribeProducers admin call, so the request goes over a small blocking TCP client
 * to each partition leader, encoded and decoded with Tally's own protocol codec
 * (src/proto); librdkafka only supplies the metadata (partitions, leaders, addresses). */
#include "tally.h"

#include "base/arena.h"
#include "proto/proto.h"

#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define MAX_RESPONSE (64 << 20) /* refuse to buffer a bigger frame */
#define DESCRIBE_PRODUCERS_VERSION 0

static const char producers_usage[] =
    "usage: tally producers COMMAND ...\n"
    "\n"
    "  describe --topic T [--partition N]\n"
    "      Print the active (idempotent or transactional) producers of each partition\n"
    "      of T (or of partition N only): producer id, epoch, coordinator epoch, last\n"
    "      sequence, last timestamp and the start offset of an open transaction.\n";

static const char describe_usage[] = "usage: tally producers describe --topic T [--partition N]\n";

/* ---- a blocking request/response client (tally.h: tally_wire_*) ---------------------- */

struct tally_wire {
    int fd;
    struct tally_tls *tls; /* NULL: PLAINTEXT or SASL_PLAINTEXT */
};

static bool protocol_is(const struct tally_ctx *ctx, const char *a, const char *b)
{
    const char *p = ctx->security_protocol;
    return p != NULL && (strcmp(p, a) == 0 || strcmp(p, b) == 0);
}

/* Connects to host:port with ctx's timeout on connect, send and receive, then TLS and SASL
 * as security.protocol asks. Returns the connection or NULL after printing why. */
struct tally_wire *tally_wire_connect(const struct tally_ctx *ctx, const char *host, int port)
{
    char portstr[16];
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res = NULL;
    int fd = -1, last_errno = 0;

    snprintf(portstr, sizeof portstr, "%d", port);
    int gai = getaddrinfo(host, portstr, &hints, &res);
    if (gai != 0) {
        tally_fail("cannot resolve %s: %s", host, gai_strerror(gai));
        return NULL;
    }
    struct timeval tv = {.tv_sec = ctx->timeout_ms / 1000,
                         .tv_usec = (ctx->timeout_ms % 1000) * 1000};
    for (struct addrinfo *ai = res; ai != NULL; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            last_errno = errno;
            continue;
        }
        /* On Linux SO_SNDTIMEO bounds connect() too. */
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
            break;
        last_errno = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        tally_fail("cannot connect to %s:%d: %s", host, port, strerror(last_errno));
        return NULL;
    }
    struct tally_wire *w = calloc(1, sizeof *w);
    if (w == NULL) {
        close(fd);
        tally_fail("out of memory");
        return NULL;
    }
    w->fd = fd;
    char what[300];
    snprintf(what, sizeof what, "%s:%d", host, port);
    /* SSL and SASL_SSL (tally_wire_tls.c): TLS first, the host name checked against `host`. */
    if (protocol_is(ctx, "SSL", "SASL_SSL") &&
        (w->tls = tally_tls_start(ctx, fd, host, what)) == NULL)
        goto fail;
    /* SASL_PLAINTEXT and SASL_SSL (tally_wire_sasl.c): log in before any request. */
    if (protocol_is(ctx, "SASL_PLAINTEXT", "SASL_SSL") && tally_wire_sasl(ctx, w, what) != TALLY_OK)
        goto fail;
    return w;
fail:
    tally_wire_close(w);
    return NULL;
}

void tally_wire_close(struct tally_wire *w)
{
    if (w == NULL)
        return;
    tally_tls_free(w->tls);
    close(w->fd);
    free(w);
}

static int send_all(struct tally_wire *w, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t s = w->tls ? tally_tls_send(w->tls, p, n) : send(w->fd, p, n, MSG_NOSIGNAL);
        if (s < 0 && errno == EINTR)
            continue;
        if (s <= 0)
            return -1;
        p += s;
        n -= (size_t)s;
    }
    return 0;
}

/* Reads exactly n bytes. Returns 0, -1 on error (errno set) or 1 on EOF. */
static int recv_all(struct tally_wire *w, uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t r = w->tls ? tally_tls_recv(w->tls, p, n) : recv(w->fd, p, n, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r == 0)
            return 1;
        if (r < 0)
            return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

/* Sends one request frame and reads the response frame (after its size prefix) into a
 * malloc()ed buffer. Returns 0 or TALLY_FAIL after printing why; what names the peer. */
int tally_wire_roundtrip(struct tally_wire *w, const uint8_t *req, size_t req_len, uint8_t **resp,
                         size_t *resp_len, const char *what)
{
    uint8_t sz[4];
    if (send_all(w, req, req_len) != 0)
        return tally_fail("%s: send failed: %s", what, strerror(errno));
    int r = recv_all(w, sz, 4);
    if (r == 1)
        return tally_fail("%s: connection closed by the broker (does it support this "
                          "request's version?)",
                          what);
    if (r != 0)
        return tally_fail("%s: %s", what,
                          errno == EAGAIN || errno == EWOULDBLOCK ? "timed out" : strerror(errno));
    uint32_t n = (uint32_t)sz[0] << 24 | (uint32_t)sz[1] << 16 | (uint32_t)sz[2] << 8 | sz[3];
    if (n < 4 || n > MAX_RESPONSE)
        return tally_fail("%s: bad response size %" PRIu32, what, n);
    uint8_t *buf = malloc(n);
    if (buf == NULL)
        return tally_fail("out of memory");
    r = recv_all(w, buf, n);
    if (r != 0) {
        free(buf);
        return tally_fail("%s: %s", what,
                          r == 1 ? "connection closed mid-response" : strerror(errno));
    }
    *resp = buf;
    *resp_len = n;
    return 0;
}

/* Skips a tagged-field section (response header v1). Returns the bytes used or 0 when
 * malformed. */
size_t tally_wire_skip_tags(const uint8_t *p, size_t len)
{
    size_t pos = 0;
    uint64_t count = 0, v;
    int shift;

#define UVARINT(out)                                                                               \
    do {                                                                                           \
        (out) = 0;                                                                                 \
        shift = 0;                                                                                 \
        for (;;) {                                                                                 \
            if (pos >= len || shift > 28)                                                          \
                return 0;                                                                          \
            uint8_t b_ = p[pos++];                                                                 \
            (out) |= (uint64_t)(b_ & 0x7f) << shift;                                               \
            if (!(b_ & 0x80))                                                                      \
                break;                                                                             \
            shift += 7;                                                                            \
        }                                                                                          \
    } while (0)

    UVARINT(count);
    for (uint64_t i = 0; i < count; i++) {
        UVARINT(v); /* tag */
        UVARINT(v); /* size */
        if (v > len - pos)
            return 0;
        pos += v;
    }
#undef UVARINT
    return pos;
}

/* ---- describe ---------------------------------------------------------------------- */

struct leader_group {
    int32_t broker_id;
    int32_t *parts;
    int32_t n;
};

static const char *col_names[] = {"Partition",
                                  "ProducerId",
                                  "ProducerEpoch",
                                  "LatestCoordinatorEpoch",
                                  "LastSequence",
                                  "LastTimestamp",
                                  "CurrentTransactionStartOffset"};

static void print_header(void)
{
    printf("%-10s %-20s %-14s %-23s %-13s %-15s %s\n", col_names[0], col_names[1], col_names[2],
           col_names[3], col_names[4], col_names[5], col_names[6]);
}

static void print_producer(int32_t partition, const struct ProducerState *s)
{
    char txn[32];
    if (s->CurrentTxnStartOffset >= 0)
        snprintf(txn, sizeof txn, "%" PRId64, s->CurrentTxnStartOffset);
    else
        snprintf(txn, sizeof txn, "None");
    printf("%-10" PRId32 " %-20" PRId64 " %-14" PRId32 " %-23" PRId32 " %-13" PRId32 " %-15" PRId64
           " %s\n",
           partition, s->ProducerId, s->ProducerEpoch, s->CoordinatorEpoch, s->LastSequence,
           s->LastTimestamp, txn);
}

/* One DescribeProducers round trip to broker `b` for the partitions of g. The decoded
 * response is allocated in `a`. Returns 0 or TALLY_FAIL (printed). */
static int describe_at(const struct tally_ctx *ctx, const struct rd_kafka_metadata_broker *b,
                       const char *topic, const struct leader_group *g, struct arena *a,
                       struct DescribeProducersResponse *out)
{
    const struct proto_api *api = proto_api_find(PROTO_API_DescribeProducers);
    struct DescribeProducersTopicRequest t = {.Name = (char *)topic};
    struct DescribeProducersRequest req = {0};
    uint8_t *frame = NULL, *resp = NULL;
    size_t frame_len = 0, resp_len = 0;
    char what[300];
    int rc = TALLY_FAIL;

    if (api == NULL)
        return tally_fail("DescribeProducers is not in the protocol table");
    t.PartitionIndexes.v = g->parts;
    t.PartitionIndexes.n = g->n;
    req.Topics.v = &t;
    req.Topics.n = 1;
    if (proto_encode_request(api, DESCRIBE_PRODUCERS_VERSION, 1, "tally", &req, &frame,
                             &frame_len) != 0)
        return tally_fail("out of memory");

    snprintf(what, sizeof what, "DescribeProducers to broker %d (%s:%d)", (int)b->id, b->host,
             b->port);
    struct tally_wire *w = tally_wire_connect(ctx, b->host, b->port);
    if (w == NULL)
        goto out;
    if (tally_wire_roundtrip(w, frame, frame_len, &resp, &resp_len, what) != 0)
        goto out;

    int32_t corr = (int32_t)((uint32_t)resp[0] << 24 | (uint32_t)resp[1] << 16 |
                             (uint32_t)resp[2] << 8 | resp[3]);
    if (corr != 1) {
        tally_fail("%s: correlation id %d, expected 1", what, (int)corr);
        goto out;
    }
    size_t hdr = tally_wire_skip_tags(resp + 4, resp_len - 4); /* response header v1 */
    if (hdr == 0) {
        tally_fail("%s: malformed response header", what);
        goto out;
    }
    size_t used = 0;
    memset(out, 0, sizeof *out);
    int err = proto_decode(&proto_DescribeProducersResponse, DESCRIBE_PRODUCERS_VERSION,
                           proto_api_flexible(api, DESCRIBE_PRODUCERS_VERSION), resp + 4 + hdr,
                           resp_len - 4 - hdr, &used, out, a);
    if (err != 0) {
        tally_fail("%s: cannot decode the response (error %d)", what, err);
        goto out;
    }
    /* BYTES would point into resp, but this response has none: strings are copied. */
    rc = TALLY_OK;
out:
    tally_wire_close(w);
    free(frame);
    free(resp);
    return rc;
}

static int producers_describe(const struct tally_ctx *ctx, const char *topic, int partition)
{
    int rc = TALLY_FAIL;
    struct leader_group *groups = NULL;
    int ngroups = 0;
    struct DescribeProducersPartitionResponse **byp = NULL;
    struct arena *a = NULL;
    bool any_error = false;

    rd_kafka_t *rk = tally_connect(ctx);
    if (rk == NULL)
        return TALLY_FAIL;
    /* All topics: asking for just this one would auto-create it on brokers that do that. */
    const struct rd_kafka_metadata *md = tally_metadata(rk, ctx, NULL);
    if (md == NULL)
        goto out;

    const struct rd_kafka_metadata_topic *mt = NULL;
    for (int i = 0; i < md->topic_cnt; i++)
        if (strcmp(md->topics[i].topic, topic) == 0)
            mt = &md->topics[i];
    if (mt == NULL || mt->err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART ||
        (mt->err == RD_KAFKA_RESP_ERR_NO_ERROR && mt->partition_cnt == 0)) {
        tally_fail("topic '%s' does not exist", topic);
        goto out_md;
    }
    if (mt->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        tally_fail("topic '%s': %s", topic, rd_kafka_err2str(mt->err));
        goto out_md;
    }
    if (partition >= 0 && partition >= mt->partition_cnt) {
        tally_fail("topic '%s' has no partition %d (it has %d)", topic, partition,
                   mt->partition_cnt);
        goto out_md;
    }

    /* Group the wanted partitions by leader: one request per leader. */
    groups = calloc((size_t)mt->partition_cnt, sizeof *groups);
    if (groups == NULL) {
        tally_fail("out of memory");
        goto out_md;
    }
    for (int i = 0; i < mt->partition_cnt; i++) {
        const struct rd_kafka_metadata_partition *p = &mt->partitions[i];
        if (partition >= 0 && p->id != partition)
            continue;
        if (p->leader < 0) {
            fprintf(stderr, "tally: %s-%d has no leader\n", topic, (int)p->id);
            any_error = true;
            continue;
        }
        int g = 0;
        while (g < ngroups && groups[g].broker_id != p->leader)
            g++;
        if (g == ngroups) {
            groups[g].broker_id = p->leader;
            groups[g].parts = calloc((size_t)mt->partition_cnt, sizeof(int32_t));
            if (groups[g].parts == NULL) {
                tally_fail("out of memory");
                goto out_groups;
            }
            ngroups++;
        }
        groups[g].parts[groups[g].n++] = p->id;
    }

    /* Collect every partition's result, then print them in partition order. */
    byp = calloc((size_t)mt->partition_cnt, sizeof *byp);
    if (byp == NULL) {
        tally_fail("out of memory");
        goto out_groups;
    }
    a = arena_new((size_t)MAX_RESPONSE * 4);
    if (a == NULL) {
        tally_fail("out of memory");
        goto out_byp;
    }
    for (int g = 0; g < ngroups; g++) {
        const struct rd_kafka_metadata_broker *b = NULL;
        for (int i = 0; i < md->broker_cnt; i++)
            if (md->brokers[i].id == groups[g].broker_id)
                b = &md->brokers[i];
        if (b == NULL) {
            fprintf(stderr, "tally: leader %d of %s is not in the metadata\n",
                    (int)groups[g].broker_id, topic);
            any_error = true;
            continue;
        }
        struct DescribeProducersResponse *resp = arena_alloc(a, sizeof *resp);
        if (resp == NULL) {
            tally_fail("out of memory");
            goto out_byp;
        }
        if (describe_at(ctx, b, topic, &groups[g], a, resp) != TALLY_OK) {
            any_error = true;
            continue;
        }
        for (int32_t ti = 0; ti < resp->Topics.n; ti++) {
            struct DescribeProducersTopicResponse *t = &resp->Topics.v[ti];
            if (t->Name == NULL || strcmp(t->Name, topic) != 0)
                continue;
            for (int32_t pi = 0; pi < t->Partitions.n; pi++) {
                struct DescribeProducersPartitionResponse *pr = &t->Partitions.v[pi];
                if (pr->PartitionIndex >= 0 && pr->PartitionIndex < mt->partition_cnt)
                    byp[pr->PartitionIndex] = pr;
            }
        }
    }

    print_header();
    for (int i = 0; i < mt->partition_cnt; i++) {
        int32_t id = mt->partitions[i].id;
        if (partition >= 0 && id != partition)
            continue;
        if (id < 0 || id >= mt->partition_cnt)
            continue;
        struct DescribeProducersPartitionResponse *pr = byp[id];
        if (pr == NULL) {
            if (mt->partitions[i].leader >= 0)
                fprintf(stderr, "tally: no answer for %s-%d\n", topic, (int)id);
            any_error = true;
            continue;
        }
        if (pr->ErrorCode != 0) {
            fprintf(stderr, "tally: %s-%d: %s%s%s\n", topic, (int)id,
                    rd_kafka_err2str((rd_kafka_resp_err_t)pr->ErrorCode),
                    pr->ErrorMessage ? ": " : "", pr->ErrorMessage ? pr->ErrorMessage : "");
            any_error = true;
            continue;
        }
        for (int32_t k = 0; k < pr->ActiveProducers.n; k++)
            print_producer(id, &pr->ActiveProducers.v[k]);
    }
    rc = any_error ? TALLY_FAIL : TALLY_OK;

out_byp:
    free(byp);
out_groups:
    for (int g = 0; g < ngroups; g++)
        free(groups[g].parts);
    free(groups);
out_md:
    rd_kafka_metadata_destroy(md);
out:
    arena_free(a);
    rd_kafka_destroy(rk);
    return rc;
}

static bool parse_partition(const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < 0 || v > 1000000)
        return false;
    *out = (int)v;
    return true;
}

static int describe_main(const struct tally_ctx *ctx, int argc, char **argv)
{
    const char *topic = NULL;
    int partition = -1;

    for (int i = 2; i < argc; i++) {
        if (tally_is_help(argv[i])) {
            fputs(describe_usage, stdout);
            return TALLY_OK;
        } else if (strcmp(argv[i], "--topic") == 0) {
            if (i + 1 >= argc || argv[i + 1][0] == '\0')
                return tally_usage_error("--topic needs a topic name");
            topic = argv[++i];
        } else if (strcmp(argv[i], "--partition") == 0) {
            if (i + 1 >= argc || !parse_partition(argv[i + 1], &partition))
                return tally_usage_error("--partition needs a partition number >= 0");
            i++;
        } else {
            return tally_usage_error("unexpected argument '%s'", argv[i]);
        }
    }
    if (topic == NULL)
        return tally_usage_error("producers describe needs --topic");
    return producers_describe(ctx, topic, partition);
}

int tally_producers_main(const struct tally_ctx *ctx, int argc, char **argv)
{
    if (argc < 2 || tally_is_help(argv[1])) {
        fputs(producers_usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? TALLY_USAGE : TALLY_OK;
    }
    if (strcmp(argv[1], "describe") == 0)
        return describe_main(ctx, argc, argv);
    return tally_usage_error("unknown producers command '%s'", argv[1]);
}
