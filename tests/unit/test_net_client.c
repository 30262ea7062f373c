/* SPDX-License-Identifier: Apache-2.0 */
/* net client: correlation of answers, request timeouts, reconnect backoff and shutdown, on a
 * virtual clock (tclock_advance), against a tiny in-test libuv server on loopback that
 * answers AllocateProducerIds frames (or stays silent, or hangs up). Backoff is checked
 * without sockets: the resolver refuses, so each attempt fails at once and only virtual
 * time decides when the next one comes. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <uv.h>

#include "base/arena.h"
#include "base/err.h"
#include "base/tclock.h"
#include "fixture.h"
#include "harness.h"
#include "net/net.h"
#include "net_fixture.h"

/* ---- the test server -------------------------------------------------------------------- */

enum srv_mode { SRV_ANSWER, SRV_SILENT, SRV_HANG_UP };

struct srv {
    uv_tcp_t tcp;
    int port;
    enum srv_mode mode;
    int frames;         /* request frames received */
    int eofs;           /* connections the client closed */
    int accepted;       /* connections accepted */
    char client_id[64]; /* of the last request */
    uv_tcp_t *conn;     /* the last connection */
};

struct srv_conn {
    uv_tcp_t tcp;
    struct srv *srv;
    uint8_t buf[1 << 16];
    size_t len;
};

static void srv_alloc(uv_handle_t *h, size_t sz, uv_buf_t *b)
{
    struct srv_conn *c = h->data;
    (void)sz;
    *b = uv_buf_init((char *)c->buf + c->len, (unsigned)(sizeof c->buf - c->len));
}

static void srv_conn_closed(uv_handle_t *h)
{
    free(h->data);
}

static void srv_written(uv_write_t *w, int status)
{
    (void)status;
    free(w->data);
    free(w);
}

/* Answers AllocateProducerIds with ProducerIdStart = BrokerId * 1000 + CorrelationId. */
static void srv_answer(struct srv_conn *c, const uint8_t *f, size_t len)
{
    struct arena *a = arena_new(1 << 20);
    struct RequestHeader h = {0};
    size_t hl;
    void *body;
    struct AllocateProducerIdsResponse rs = {0};
    uint8_t *out;
    size_t out_len;

    if (proto_decode_request_header(f, len, &h, &hl, a) != 0 ||
        proto_decode_request(proto_api_find(h.RequestApiKey), h.RequestApiVersion, f + hl, len - hl,
                             &body, a) != 0) {
        arena_free(a);
        return;
    }
    snprintf(c->srv->client_id, sizeof c->srv->client_id, "%s", h.ClientId ? h.ClientId : "");
    rs.ProducerIdStart =
        (int64_t)((struct AllocateProducerIdsRequest *)body)->BrokerId * 1000 + h.CorrelationId;
    rs.ProducerIdLen = 1000;
    if (proto_encode_response(proto_api_find(PROTO_API_AllocateProducerIds), 0, h.CorrelationId,
                              &rs, &out, &out_len) == 0) {
        uv_write_t *w = malloc(sizeof *w);
        uv_buf_t b = uv_buf_init((char *)out, (unsigned)out_len);
        w->data = out;
        uv_write(w, (uv_stream_t *)&c->tcp, &b, 1, srv_written);
    }
    arena_free(a);
}

static void srv_read(uv_stream_t *st, ssize_t n, const uv_buf_t *b)
{
    struct srv_conn *c = st->data;
    size_t off = 0;
    (void)b;
    if (n < 0) {
        c->srv->eofs++;
        if (c->srv->conn == &c->tcp)
            c->srv->conn = NULL;
        uv_close((uv_handle_t *)&c->tcp, srv_conn_closed);
        return;
    }
    c->len += (size_t)n;
    while (c->len - off >= 4) {
        const uint8_t *p = c->buf + off;
        size_t size = (size_t)p[0] << 24 | (size_t)p[1] << 16 | (size_t)p[2] << 8 | p[3];
        if (c->len - off - 4 < size)
            break;
        c->srv->frames++;
        if (c->srv->mode == SRV_ANSWER)
            srv_answer(c, p + 4, size);
        else if (c->srv->mode == SRV_HANG_UP) {
            if (c->srv->conn == &c->tcp)
                c->srv->conn = NULL;
            uv_close((uv_handle_t *)&c->tcp, srv_conn_closed);
            return;
        }
        off += 4 + size;
    }
    memmove(c->buf, c->buf + off, c->len - off);
    c->len -= off;
}

static void srv_accept(uv_stream_t *st, int status)
{
    struct srv *s = st->data;
    struct srv_conn *c = calloc(1, sizeof *c);
    (void)status;
    c->srv = s;
    uv_tcp_init(st->loop, &c->tcp);
    c->tcp.data = c;
    if (uv_accept(st, (uv_stream_t *)&c->tcp) != 0) {
        uv_close((uv_handle_t *)&c->tcp, srv_conn_closed);
        return;
    }
    s->accepted++;
    s->conn = &c->tcp;
    uv_read_start((uv_stream_t *)&c->tcp, srv_alloc, srv_read);
}

static int srv_start(uv_loop_t *loop, struct srv *s, enum srv_mode mode)
{
    memset(s, 0, sizeof *s);
    s->mode = mode;
    return fixture_listen(loop, &s->tcp, s, srv_accept, &s->port);
}

/* ---- the client side -------------------------------------------------------------------- */

struct fx {
    uv_loop_t loop;
    struct tclock *clock;
    struct net_client *client;
    struct srv srv;
    bool refuse; /* the resolver says "unknown" */
    int resolves;
    int port; /* where the resolver points when not 0 (else the test server) */
};

static int resolve(void *arg, int32_t id, char *host, size_t host_len, int *port)
{
    struct fx *f = arg;
    (void)id;
    f->resolves++;
    if (f->refuse)
        return -1;
    snprintf(host, host_len, "127.0.0.1");
    *port = f->port ? f->port : f->srv.port;
    return 0;
}

static bool fx_start_timeout(struct fx *f, enum srv_mode mode, int64_t request_timeout_ms)
{
    struct net_client_options o = {.request_timeout_ms = request_timeout_ms};
    memset(f, 0, sizeof *f);
    if (uv_loop_init(&f->loop) != 0 || srv_start(&f->loop, &f->srv, mode) != 0)
        return false;
    f->clock = tclock_virtual_new(1700000000000);
    o.clock = f->clock;
    o.client_id = "unit-client";
    o.resolve = resolve;
    o.resolve_arg = f;
    return f->clock && net_client_new(&f->loop, &o, &f->client) == 0;
}

static bool fx_start(struct fx *f, enum srv_mode mode)
{
    return fx_start_timeout(f, mode, 0);
}

static int send_alloc(struct fx *f, int32_t node, int32_t broker_id, struct fixture_answer *a)
{
    struct AllocateProducerIdsRequest rq = {.BrokerId = broker_id, .BrokerEpoch = -1};
    return net_client_send(f->client, node, PROTO_API_AllocateProducerIds, 0, &rq,
                           fixture_on_answer, a);
}

/* Runs the loop (real sockets) until *flag, at most 5 s of wall time. */
static bool run_until(struct fx *f, const bool *flag)
{
    return fixture_run_until(&f->loop, flag, 5000);
}

static bool run_until_int(struct fx *f, const int *v, int want)
{
    return fixture_run_until_count(&f->loop, v, want, 5000);
}

static void fx_stop(struct fx *f)
{
    CHECK(fixture_net_teardown(&f->loop, f->client, &f->srv.tcp, srv_conn_closed));
    tclock_free(f->clock);
}

/* ---- tests ------------------------------------------------------------------------------ */

TEST(net_client_answers_match_their_requests)
{
    struct fx f;
    struct fixture_answer a[3] = {{0}};
    REQUIRE(fx_start(&f, SRV_ANSWER));
    for (int i = 0; i < 3; i++)
        REQUIRE(send_alloc(&f, 4, 10 + i, &a[i]) == 0);
    CHECK(!a[0].done); /* never answered from inside the call */
    REQUIRE(run_until(&f, &a[2].done));
    for (int i = 0; i < 3; i++) {
        CHECK(a[i].done);
        CHECK_EQ_INT(a[i].err, 0);
        CHECK_EQ_INT(a[i].start / 1000, 10 + i); /* the answer of this request, not another's */
    }
    CHECK(a[0].start % 1000 != a[1].start % 1000); /* distinct correlation ids */
    CHECK_EQ_INT(f.srv.accepted, 1);               /* one connection per node */
    CHECK_EQ_STR(f.srv.client_id, "unit-client");
    fx_stop(&f);
}

TEST(net_client_unknown_api_version_is_refused)
{
    struct fx f;
    struct AllocateProducerIdsRequest rq = {0};
    REQUIRE(fx_start(&f, SRV_ANSWER));
    CHECK_EQ_INT(net_client_send(f.client, 1, PROTO_API_AllocateProducerIds, 1, &rq,
                                 fixture_on_answer, NULL),
                 ERR_UNSUPPORTED_VERSION);
    CHECK_EQ_INT(net_client_send(f.client, 1, 9999, 0, &rq, fixture_on_answer, NULL),
                 ERR_UNSUPPORTED_VERSION);
    fx_stop(&f);
}

TEST(net_client_request_times_out_on_virtual_time)
{
    struct fx f;
    struct fixture_answer a = {0};
    REQUIRE(fx_start(&f, SRV_SILENT));
    REQUIRE(send_alloc(&f, 1, 1, &a) == 0);
    REQUIRE(run_until_int(&f, &f.srv.frames, 1));
    tclock_advance(f.clock, 29999);
    CHECK(!a.done);
    tclock_advance(f.clock, 1); /* request.timeout.ms default: 30000 */
    CHECK(a.done);
    CHECK_EQ_INT(a.err, ERR_REQUEST_TIMED_OUT);
    /* A written request that timed out takes its connection with it. */
    CHECK(run_until_int(&f, &f.srv.eofs, 1));
    fx_stop(&f);
}

TEST(net_client_reconnect_backoff_doubles_up_to_the_max)
{
    struct fx f;
    struct fixture_answer a = {0};
    int64_t expect[] = {50, 100, 200, 400, 800, 1000, 1000};
    REQUIRE(fx_start(&f, SRV_ANSWER));
    f.refuse = true;
    REQUIRE(send_alloc(&f, 1, 1, &a) == 0);
    CHECK_EQ_INT(f.resolves, 1);
    for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++) {
        tclock_advance(f.clock, expect[i] - 1);
        CHECK_EQ_INT(f.resolves, (int)i + 1);
        tclock_advance(f.clock, 1);
        CHECK_EQ_INT(f.resolves, (int)i + 2);
    }
    CHECK(!a.done); /* a request waiting for a connection survives failed attempts */
    /* The address becomes known: the next attempt connects and the request is answered. */
    f.refuse = false;
    tclock_advance(f.clock, 1000);
    REQUIRE(run_until(&f, &a.done));
    CHECK_EQ_INT(a.err, 0);
    CHECK_EQ_INT(a.start / 1000, 1);
    fx_stop(&f);
}

TEST(net_client_waiting_request_times_out_without_a_connection)
{
    struct fx f;
    struct fixture_answer a = {0};
    REQUIRE(fx_start(&f, SRV_ANSWER));
    f.refuse = true;
    REQUIRE(send_alloc(&f, 1, 1, &a) == 0);
    tclock_advance(f.clock, 29999);
    CHECK(!a.done);
    tclock_advance(f.clock, 1);
    CHECK(a.done);
    CHECK_EQ_INT(a.err, ERR_REQUEST_TIMED_OUT);
    fx_stop(&f);
}

TEST(net_client_lost_connection_fails_written_requests)
{
    struct fx f;
    struct fixture_answer a = {0}, b = {0};
    REQUIRE(fx_start(&f, SRV_HANG_UP));
    REQUIRE(send_alloc(&f, 1, 1, &a) == 0);
    REQUIRE(run_until(&f, &a.done));
    CHECK_EQ_INT(a.err, ERR_NETWORK_EXCEPTION);
    /* The next request reconnects only after the backoff. */
    f.srv.mode = SRV_ANSWER;
    REQUIRE(send_alloc(&f, 1, 2, &b) == 0);
    for (int i = 0; i < 20; i++)
        uv_run(&f.loop, UV_RUN_NOWAIT);
    CHECK_EQ_INT(f.srv.accepted, 1);
    CHECK(!b.done);
    tclock_advance(f.clock, 50);
    REQUIRE(run_until(&f, &b.done));
    CHECK_EQ_INT(b.err, 0);
    CHECK_EQ_INT(f.srv.accepted, 2);
    fx_stop(&f);
}

TEST(net_client_stop_fails_pending_requests)
{
    struct fx f;
    struct fixture_answer a = {0}, b = {0};
    bool stopped = false;
    REQUIRE(fx_start(&f, SRV_SILENT));
    REQUIRE(send_alloc(&f, 1, 1, &a) == 0);
    REQUIRE(run_until_int(&f, &f.srv.frames, 1));
    f.refuse = true;
    REQUIRE(send_alloc(&f, 2, 1, &b) == 0); /* waiting: node 2 has no address */
    net_client_stop(f.client, fixture_set_flag, &stopped);
    f.client = NULL;
    CHECK(a.done && b.done);
    CHECK_EQ_INT(a.err, ERR_SHUTDOWN);
    CHECK_EQ_INT(b.err, ERR_SHUTDOWN);
    CHECK(run_until(&f, &stopped));
    fx_stop(&f);
}

TEST(net_client_disconnect_reconnects_without_backoff)
{
    struct fx f;
    struct fixture_answer a = {0}, b = {0};
    REQUIRE(fx_start(&f, SRV_ANSWER));
    REQUIRE(send_alloc(&f, NET_CLIENT_CONTROLLER, 1, &a) == 0);
    REQUIRE(run_until(&f, &a.done));
    CHECK_EQ_INT(f.resolves, 1);
    net_client_disconnect(f.client, NET_CLIENT_CONTROLLER);
    CHECK(run_until_int(&f, &f.srv.eofs, 1));
    /* The next request resolves the address again and connects at once: no time passes. */
    REQUIRE(send_alloc(&f, NET_CLIENT_CONTROLLER, 2, &b) == 0);
    REQUIRE(run_until(&f, &b.done));
    CHECK_EQ_INT(b.err, 0);
    CHECK_EQ_INT(f.resolves, 2);
    CHECK_EQ_INT(f.srv.accepted, 2);
    fx_stop(&f);
}

/* What lifecycle.c relies on when the quorum names a new controller: a request written to the
 * old one, which was cut off and answers nothing (TCP says nothing for minutes), fails at
 * once with NETWORK_EXCEPTION when the connection is dropped — not after request.timeout.ms,
 * by which time the new controller has fenced this broker — and the request sent next goes
 * to the address the resolver names now, with no backoff. */
TEST(net_client_disconnect_fails_a_request_the_cut_off_peer_never_answers)
{
    struct fx f;
    struct fixture_answer a = {0}, b = {0};
    REQUIRE(fx_start(&f, SRV_SILENT));
    REQUIRE(send_alloc(&f, NET_CLIENT_CONTROLLER, 1, &a) == 0);
    REQUIRE(run_until_int(&f, &f.srv.frames, 1)); /* written, never to be answered */
    CHECK(!a.done);
    net_client_disconnect(f.client, NET_CLIENT_CONTROLLER);
    CHECK(a.done); /* no time passed: failed by the disconnect itself */
    CHECK_EQ_INT(a.err, ERR_NETWORK_EXCEPTION);
    f.srv.mode = SRV_ANSWER; /* the new controller */
    REQUIRE(send_alloc(&f, NET_CLIENT_CONTROLLER, 2, &b) == 0);
    REQUIRE(run_until(&f, &b.done));
    CHECK_EQ_INT(b.err, 0);
    CHECK_EQ_INT(f.resolves, 2);
    CHECK_EQ_INT(f.srv.accepted, 2);
    fx_stop(&f);
}

/* A listener that never completes a handshake: backlog 0 and its accept queue filled by
 * connections nobody accepts, so the kernel drops further SYNs (as a cut network would).
 * Returns its port (fds[0] the listener, fds[1..2] the fillers), or -1. */
static int black_hole(int fds[3])
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    fds[0] = socket(AF_INET, SOCK_STREAM, 0);
    if (fds[0] < 0 || bind(fds[0], (struct sockaddr *)&a, sizeof a) != 0 ||
        listen(fds[0], 0) != 0 || getsockname(fds[0], (struct sockaddr *)&a, &len) != 0)
        return -1;
    for (int i = 1; i < 3; i++) {
        fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        if (fds[i] < 0)
            return -1;
        (void)connect(fds[i], (struct sockaddr *)&a, sizeof a);
    }
    uv_sleep(50);
    return ntohs(a.sin_port);
}

/* socket.connection.setup.timeout.ms: an attempt whose SYNs are dropped is given up after
 * the timeout (10 s, then 20 s: doubled), backed off, and made again; once the peer answers,
 * the waiting request goes through. Without it the attempt waits for the kernel. */
TEST(net_client_connect_attempt_gives_up_after_the_setup_timeout)
{
    struct fx f;
    struct fixture_answer a = {0};
    int fds[3] = {-1, -1, -1};
    REQUIRE(fx_start_timeout(&f, SRV_ANSWER, 600000));
    f.port = black_hole(fds);
    REQUIRE(f.port > 0);
    REQUIRE(send_alloc(&f, 1, 1, &a) == 0);
    for (int i = 0; i < 20; i++) {
        uv_run(&f.loop, UV_RUN_NOWAIT);
        uv_sleep(1);
    }
    CHECK_EQ_INT(f.resolves, 1);
    tclock_advance(f.clock, 9999);
    CHECK_EQ_INT(f.resolves, 1);
    tclock_advance(f.clock, 1 + 50); /* given up, then the first backoff */
    CHECK_EQ_INT(f.resolves, 2);
    tclock_advance(f.clock, 19999);
    CHECK_EQ_INT(f.resolves, 2);
    f.port = 0; /* the next attempt reaches the test server */
    tclock_advance(f.clock, 1 + 100);
    CHECK_EQ_INT(f.resolves, 3);
    REQUIRE(run_until(&f, &a.done));
    CHECK_EQ_INT(a.err, 0);
    fx_stop(&f);
    for (int i = 0; i < 3; i++)
        if (fds[i] >= 0)
            close(fds[i]);
}

/* ---- net_request.throttle_ms: what a net server owes an answer ---------------------------
 * A real net server whose handler owes each request a throttle (the request quota's) and
 * answers ApiVersions with a ThrottleTimeMs of its own (a byte rate's), from a read-only
 * struct (net must encode a copy, never write the handler's): the answer carries the larger;
 * a version without the field (v0) is answered all the same. */

struct owing {
    int32_t owe;
    const struct ApiVersionsResponse *answer;
};

static const struct ApiVersionsResponse owing_none = {.ThrottleTimeMs = 0};
static const struct ApiVersionsResponse owing_900 = {.ThrottleTimeMs = 900};

static void owing_request(void *ctx, struct net_request *req)
{
    struct owing *o = ctx;
    req->throttle_ms = o->owe;
    net_respond(req, o->answer);
}

struct owed_answer {
    int done;
    int err;
    int32_t throttle;
};

static void on_owed(void *arg, int err, const void *resp)
{
    struct owed_answer *a = arg;
    a->err = err;
    a->throttle = err == 0 ? ((const struct ApiVersionsResponse *)resp)->ThrottleTimeMs : -1;
    a->done++;
}

static int owing_resolve(void *arg, int32_t id, char *host, size_t host_len, int *port)
{
    (void)id;
    snprintf(host, host_len, "127.0.0.1");
    *port = *(int *)arg;
    return 0;
}

TEST(net_answer_carries_the_larger_of_owed_and_own_throttle)
{
    uv_loop_t loop;
    struct tclock *clock = tclock_virtual_new(1700000000000);
    struct net_server *srv = NULL;
    struct net_client *client = NULL;
    struct owing o = {0};
    struct ApiVersionsRequest rq = {0};
    int port;
    bool stopped = false;

    REQUIRE(clock != NULL && uv_loop_init(&loop) == 0);
    struct net_options no = {
        .clock = clock, .host = "127.0.0.1", .port = 0, .max_frame = 1 << 20, .max_idle_ms = -1};
    REQUIRE(net_server_start(&loop, &no, owing_request, &o, &srv) == 0);
    port = net_server_port(srv);
    struct net_client_options co = {
        .clock = clock, .client_id = "owed", .resolve = owing_resolve, .resolve_arg = &port};
    REQUIRE(net_client_new(&loop, &co, &client) == 0);

    static const struct {
        int32_t owe;
        const struct ApiVersionsResponse *answer;
        int16_t version;
        int32_t want;
    } cases[] = {
        {700, &owing_none, 2, 700}, /* owed, nothing of its own: the owed throttle */
        {700, &owing_900, 2, 900},  /* its own is larger: kept */
        {0, &owing_900, 2, 900},    /* nothing owed */
        {0, &owing_none, 2, 0},
        {700, &owing_none, 0, 0}, /* v0 has no ThrottleTimeMs: answered, nothing to carry */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct owed_answer a = {0};
        o.owe = cases[i].owe;
        o.answer = cases[i].answer;
        REQUIRE(net_client_send(client, 1, PROTO_API_ApiVersions, cases[i].version, &rq, on_owed,
                                &a) == 0);
        REQUIRE(fixture_run_until_count(&loop, &a.done, 1, 5000));
        CHECK_EQ_INT(a.err, 0);
        CHECK_EQ_INT(a.throttle, cases[i].want);
    }
    /* The handler's structs were never written. */
    CHECK_EQ_INT(owing_none.ThrottleTimeMs, 0);
    CHECK_EQ_INT(owing_900.ThrottleTimeMs, 900);

    net_client_stop(client, fixture_set_flag, &stopped);
    CHECK(fixture_run_until(&loop, &stopped, 5000));
    stopped = false;
    net_server_stop(srv, fixture_set_flag, &stopped);
    CHECK(fixture_run_until(&loop, &stopped, 5000));
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK_EQ_INT(uv_loop_close(&loop), 0);
    tclock_free(clock);
}
