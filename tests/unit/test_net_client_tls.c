/* SPDX-License-Identifier: Apache-2.0 */
/* net client on a secure inter-broker listener: TLS (the server verified against the
 * truststore, the client's own certificate for client auth) and SASL PLAIN before any queued
 * request, against an in-test libuv server on loopback that speaks TLS through net/tls.h and
 * SASL through sasl/, and answers AllocateProducerIds. Certificates come from tls_fixture.h
 * (in memory). Backoff after a failed authentication is checked on the virtual clock. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <uv.h>

#include "base/arena.h"
#include "base/err.h"
#include "base/tclock.h"
#include "fixture.h"
#include "harness.h"
#include "net/net.h"
#include "net_fixture.h"
#include "net/tls.h"
#include "sasl/sasl.h"
#include "tls_fixture.h"

/* ---- certificates ------------------------------------------------------------------------ */

struct pki {
    struct pem ca, broker1, broker2, other_ca, impostor, elsewhere;
};

static void pki_make(struct pki *k)
{
    fixture_make_cert(&k->ca, "Tally Test CA", NULL, NULL, NULL, 0, 86400);
    fixture_make_cert(&k->broker1, "broker1", NULL, &k->ca, "IP:127.0.0.1", 0, 86400);
    fixture_make_cert(&k->broker2, "broker2", NULL, &k->ca, "IP:127.0.0.1", 0, 86400);
    fixture_make_cert(&k->other_ca, "Other CA", NULL, NULL, NULL, 0, 86400);
    fixture_make_cert(&k->impostor, "broker1", NULL, &k->other_ca, "IP:127.0.0.1", 0, 86400);
    /* The right CA, but for another address: a broker's certificate must name its own. */
    fixture_make_cert(&k->elsewhere, "broker9", NULL, &k->ca, "IP:127.0.0.2", 0, 86400);
}

static void pki_free(struct pki *k)
{
    struct pem *all[] = {&k->ca,       &k->broker1,  &k->broker2,
                         &k->other_ca, &k->impostor, &k->elsewhere};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        fixture_pem_free(all[i]);
}

/* A context with `cert` as its keystore (NULL: none) and `trust` as its truststore (NULL:
 * none); an accepting one requires client certificates when it has a truststore. */
static struct tls_ctx *ctx_make(bool client, const struct pem *cert, const struct pem *trust)
{
    struct tls_config cfg = {
        .client = client,
        .keystore_chain = cert ? cert->cert : NULL,
        .keystore_key = cert ? cert->key : NULL,
        .truststore_certs = trust ? trust->cert : NULL,
        .client_auth = !client && trust ? TLS_AUTH_REQUIRED : TLS_AUTH_NONE,
    };
    char why[256];
    struct tls_ctx *ctx = NULL;
    if (tls_ctx_new(&cfg, &ctx, why, sizeof why) != 0)
        harness_fail(__FILE__, __LINE__, why);
    return ctx;
}

/* ---- the test server: TLS and SASL, then AllocateProducerIds ------------------------------ */

struct srv {
    uv_tcp_t tcp;
    int port;
    struct tls_ctx *tls;     /* NULL: plaintext */
    struct sasl_config sasl; /* n_mechs 0: no SASL */
    int accepted;
    int eofs;     /* connections the client closed, or broke off with a TLS alert */
    int answered; /* AllocateProducerIds answered */
    int early;    /* AllocateProducerIds before authentication (then closed) */
    int auth_ok, auth_failed, tls_failed;
    char principal[128];          /* the TLS peer's, of the last handshake */
    char user[SASL_MAX_NAME + 1]; /* the SASL user authenticated last */
    /* SCRAM (the mechanism set by srv_start): user "broker"'s credential, and a server that
     * flips a bit of its server-final signature (one that does not hold the credential). */
    enum sasl_mech scram_mech;
    struct sasl_scram_cred scram_cred;
    bool forge_signature;
};

struct srv_conn {
    uv_tcp_t tcp;
    struct srv *srv;
    struct tls_conn *tls;
    struct sasl_session ss;
    bool closing;
    uint8_t cbuf[1 << 16];
    uint8_t buf[1 << 16];
    size_t len;
};

static void srv_alloc(uv_handle_t *h, size_t sz, uv_buf_t *b)
{
    struct srv_conn *c = h->data;
    (void)sz;
    if (c->tls)
        *b = uv_buf_init((char *)c->cbuf, sizeof c->cbuf);
    else
        *b = uv_buf_init((char *)c->buf + c->len, (unsigned)(sizeof c->buf - c->len));
}

static void srv_conn_closed(uv_handle_t *h)
{
    struct srv_conn *c = h->data;
    tls_conn_free(c->tls);
    sasl_session_free(&c->ss);
    free(c);
}

static void srv_close(struct srv_conn *c)
{
    if (c->closing)
        return;
    c->closing = true;
    uv_close((uv_handle_t *)&c->tcp, srv_conn_closed);
}

static void srv_written(uv_write_t *w, int status)
{
    (void)status;
    free(w->data);
    free(w);
}

static void srv_write_raw(struct srv_conn *c, uint8_t *buf, size_t len)
{
    uv_write_t *w = malloc(sizeof *w);
    uv_buf_t b = uv_buf_init((char *)buf, (unsigned)len);
    w->data = buf;
    uv_write(w, (uv_stream_t *)&c->tcp, &b, 1, srv_written);
}

static void srv_flush(struct srv_conn *c)
{
    size_t n;
    while (c->tls && (n = tls_conn_pending(c->tls)) > 0) {
        uint8_t *buf = malloc(n);
        srv_write_raw(c, buf, tls_conn_take(c->tls, buf, n));
    }
}

static void srv_send(struct srv_conn *c, int16_t api_key, int16_t version, int32_t corr,
                     const void *resp)
{
    uint8_t *out;
    size_t out_len;
    if (proto_encode_response(proto_api_find(api_key), version, corr, resp, &out, &out_len) != 0)
        return;
    if (c->tls == NULL) {
        srv_write_raw(c, out, out_len);
        return;
    }
    tls_conn_write(c->tls, out, out_len);
    free(out);
    srv_flush(c);
}

/* One request frame; returns false once the connection is closed. */
static bool srv_frame(struct srv_conn *c, const uint8_t *f, size_t len)
{
    struct srv *s = c->srv;
    struct arena *a = arena_new(1 << 20);
    struct RequestHeader h = {0};
    size_t hl;
    void *body;
    bool open = true;

    if (proto_decode_request_header(f, len, &h, &hl, a) != 0 ||
        proto_decode_request(proto_api_find(h.RequestApiKey), h.RequestApiVersion, f + hl, len - hl,
                             &body, a) != 0) {
        arena_free(a);
        return true;
    }
    if (h.RequestApiKey == PROTO_API_SaslHandshake) {
        const struct SaslHandshakeRequest *rq = body;
        char *mechs[] = {(char *)"PLAIN"};
        struct SaslHandshakeResponse rs = {.ErrorCode =
                                               (int16_t)sasl_handshake(&c->ss, rq->Mechanism)};
        rs.Mechanisms.v = mechs;
        rs.Mechanisms.n = 1;
        srv_send(c, h.RequestApiKey, h.RequestApiVersion, h.CorrelationId, &rs);
    } else if (h.RequestApiKey == PROTO_API_SaslAuthenticate) {
        const struct SaslAuthenticateRequest *rq = body;
        int rc = sasl_step(&c->ss, rq->AuthBytes.data, (size_t)rq->AuthBytes.len);
        struct SaslAuthenticateResponse rs = {
            .ErrorCode = (int16_t)rc,
            .AuthBytes = {.data = c->ss.reply, .len = rc ? 0 : (int32_t)c->ss.reply_len}};
        if (rc == 0 && c->ss.state == SASL_AUTHENTICATED && s->forge_signature)
            c->ss.reply[5] ^= 1; /* inside the base64 of "v=..." */
        if (rc == 0 && c->ss.state == SASL_AUTHENTICATED) {
            s->auth_ok++;
            snprintf(s->user, sizeof s->user, "%s", c->ss.user);
        } else if (rc == 0) {
            /* SCRAM's server-first: one more step. */
        } else {
            s->auth_failed++;
            rs.ErrorMessage = (char *)"Authentication failed: invalid credentials";
        }
        srv_send(c, h.RequestApiKey, h.RequestApiVersion, h.CorrelationId, &rs);
    } else if (s->sasl.n_mechs > 0 && c->ss.state != SASL_AUTHENTICATED) {
        s->early++;
        srv_close(c);
        open = false;
    } else {
        const struct AllocateProducerIdsRequest *rq = body;
        struct AllocateProducerIdsResponse rs = {
            .ProducerIdStart = (int64_t)rq->BrokerId * 1000 + h.CorrelationId,
            .ProducerIdLen = 1000,
        };
        s->answered++;
        srv_send(c, h.RequestApiKey, h.RequestApiVersion, h.CorrelationId, &rs);
    }
    arena_free(a);
    return open;
}

static void srv_read(uv_stream_t *st, ssize_t n, const uv_buf_t *b)
{
    struct srv_conn *c = st->data;
    struct srv *s = c->srv;
    size_t off = 0;
    (void)b;
    if (c->closing || n == 0)
        return;
    if (n < 0) {
        s->eofs++;
        srv_close(c);
        return;
    }
    if (c->tls) {
        bool was_up = tls_conn_established(c->tls);
        if (tls_conn_feed(c->tls, c->cbuf, (size_t)n) != 0) {
            s->tls_failed++;
            s->eofs++;
            srv_flush(c);
            srv_close(c);
            return;
        }
        srv_flush(c);
        if (tls_conn_established(c->tls) && !was_up)
            tls_conn_principal(c->tls, s->principal, sizeof s->principal);
        long got;
        while ((got = tls_conn_read(c->tls, c->buf + c->len, sizeof c->buf - c->len)) > 0)
            c->len += (size_t)got;
    } else {
        c->len += (size_t)n;
    }
    while (c->len - off >= 4) {
        const uint8_t *p = c->buf + off;
        size_t size = (size_t)p[0] << 24 | (size_t)p[1] << 16 | (size_t)p[2] << 8 | p[3];
        if (c->len - off - 4 < size)
            break;
        if (!srv_frame(c, p + 4, size))
            return;
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
    sasl_session_init(&c->ss, &s->sasl);
    uv_tcp_init(st->loop, &c->tcp);
    c->tcp.data = c;
    if (uv_accept(st, (uv_stream_t *)&c->tcp) != 0) {
        srv_close(c);
        return;
    }
    s->accepted++;
    if (s->tls)
        c->tls = tls_conn_new(s->tls);
    uv_read_start((uv_stream_t *)&c->tcp, srv_alloc, srv_read);
}

static int srv_scram_lookup(void *arg, enum sasl_mech m, const char *name,
                            struct sasl_scram_cred *out)
{
    struct srv *s = arg;
    if (m != s->scram_mech || strcmp(name, "broker") != 0)
        return -1;
    *out = s->scram_cred;
    return 0;
}

/* Listens on loopback with `tls` (NULL: plaintext; taken) and, when `sasl_password` is set,
 * SASL `mech` (PLAIN or SCRAM) with one user "broker" of that password. */
static int srv_start(uv_loop_t *loop, struct srv *s, struct tls_ctx *tls, enum sasl_mech mech,
                     const char *sasl_password)
{
    char why[128], jaas[256];

    memset(s, 0, sizeof *s);
    s->tls = tls;
    if (sasl_password && mech != SASL_MECH_PLAIN) {
        uint8_t salt[16];
        s->scram_mech = mech;
        s->sasl.scram_lookup = srv_scram_lookup;
        s->sasl.scram_arg = s;
        if (sasl_config_set_mechanisms(&s->sasl, sasl_mech_name(mech), why, sizeof why) != 0 ||
            sasl_random(salt, sizeof salt) != 0 ||
            sasl_scram_derive(mech, (const uint8_t *)sasl_password, strlen(sasl_password), salt,
                              sizeof salt, 4096, &s->scram_cred) != 0)
            return -1;
    } else if (sasl_password) {
        snprintf(jaas, sizeof jaas,
                 "org.apache.kafka.common.security.plain.PlainLoginModule required "
                 "user_broker=\"%s\";",
                 sasl_password);
        if (sasl_config_set_mechanisms(&s->sasl, "PLAIN", why, sizeof why) != 0 ||
            sasl_config_add_jaas(&s->sasl, SASL_MECH_PLAIN, jaas, why, sizeof why) != 0)
            return -1;
    }
    return fixture_listen(loop, &s->tcp, s, srv_accept, &s->port);
}

/* ---- the client side -------------------------------------------------------------------- */

struct fx {
    uv_loop_t loop;
    struct tclock *clock;
    struct net_client *client;
    struct tls_ctx *client_tls;
    struct srv srv;
    int resolves;
};

static int resolve(void *arg, int32_t id, char *host, size_t host_len, int *port)
{
    struct fx *f = arg;
    (void)id;
    f->resolves++;
    snprintf(host, host_len, "127.0.0.1");
    *port = f->srv.port;
    return 0;
}

/* The server with srv_tls (taken) and SASL `mech` when srv_password; the client with
 * client_tls (taken, checking the server's address in its certificate) and SASL `mech` as
 * "broker" / client_password when that is set. */
static bool fx_start_mech(struct fx *f, enum sasl_mech mech, struct tls_ctx *srv_tls,
                          const char *srv_password, struct tls_ctx *client_tls,
                          const char *client_password)
{
    struct net_client_options o = {0};
    memset(f, 0, sizeof *f);
    f->client_tls = client_tls;
    if (uv_loop_init(&f->loop) != 0 ||
        srv_start(&f->loop, &f->srv, srv_tls, mech, srv_password) != 0)
        return false;
    f->clock = tclock_virtual_new(1700000000000);
    o.clock = f->clock;
    o.client_id = "unit-client";
    o.resolve = resolve;
    o.resolve_arg = f;
    o.tls = client_tls;
    o.tls_verify_host = true;
    if (client_password) {
        o.sasl_mechanism = sasl_mech_name(mech);
        o.sasl_username = "broker";
        o.sasl_password = client_password;
    }
    return f->clock && net_client_new(&f->loop, &o, &f->client) == 0;
}

static bool fx_start(struct fx *f, struct tls_ctx *srv_tls, const char *srv_password,
                     struct tls_ctx *client_tls, const char *client_password)
{
    return fx_start_mech(f, SASL_MECH_PLAIN, srv_tls, srv_password, client_tls, client_password);
}

static int send_alloc(struct fx *f, int32_t broker_id, struct fixture_answer *a)
{
    struct AllocateProducerIdsRequest rq = {.BrokerId = broker_id, .BrokerEpoch = -1};
    return net_client_send(f->client, 1, PROTO_API_AllocateProducerIds, 0, &rq, fixture_on_answer,
                           a);
}

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
    tls_ctx_free(f->client_tls);
    tls_ctx_free(f->srv.tls);
    sasl_config_free(&f->srv.sasl);
}

/* ---- tests ------------------------------------------------------------------------------ */

TEST(net_client_tls_verifies_the_server_and_presents_its_certificate)
{
    struct pki k;
    struct fx f;
    struct fixture_answer a[3] = {{0}};
    pki_make(&k);
    /* The server requires a client certificate from the CA; the client trusts the CA. */
    REQUIRE(fx_start(&f, ctx_make(false, &k.broker1, &k.ca), NULL,
                     ctx_make(true, &k.broker2, &k.ca), NULL));
    for (int i = 0; i < 3; i++)
        REQUIRE(send_alloc(&f, 10 + i, &a[i]) == 0);
    REQUIRE(run_until(&f, &a[2].done));
    for (int i = 0; i < 3; i++) {
        CHECK_EQ_INT(a[i].err, 0);
        CHECK_EQ_INT(a[i].start / 1000, 10 + i);
    }
    CHECK_EQ_INT(f.srv.accepted, 1);
    CHECK_EQ_INT(f.srv.tls_failed, 0);
    CHECK_EQ_STR(f.srv.principal, "User:CN=broker2,O=Tally");
    fx_stop(&f);
    pki_free(&k);
}

TEST(net_client_tls_refuses_a_server_of_another_ca)
{
    struct pki k;
    struct fx f;
    struct fixture_answer a = {0};
    pki_make(&k);
    REQUIRE(
        fx_start(&f, ctx_make(false, &k.impostor, NULL), NULL, ctx_make(true, NULL, &k.ca), NULL));
    REQUIRE(send_alloc(&f, 1, &a) == 0);
    /* The client aborts the handshake (its alert fails the server's side too) and backs off. */
    REQUIRE(run_until_int(&f, &f.srv.eofs, 1));
    CHECK_EQ_INT(f.srv.answered, 0);
    CHECK(!a.done); /* the request waits for a connection that verifies */
    CHECK_EQ_INT(f.resolves, 1);
    tclock_advance(f.clock, 50);
    CHECK_EQ_INT(f.resolves, 2);
    tclock_advance(f.clock, 30000);
    CHECK(a.done);
    CHECK_EQ_INT(a.err, ERR_REQUEST_TIMED_OUT);
    CHECK_EQ_INT(f.srv.answered, 0);
    fx_stop(&f);
    pki_free(&k);
}

TEST(net_client_sasl_plain_authenticates_before_any_request)
{
    struct fx f;
    struct fixture_answer a[2] = {{0}};
    /* SASL_PLAINTEXT: requests queued before the connection wait for authentication. */
    REQUIRE(fx_start(&f, NULL, "s3cret", NULL, "s3cret"));
    REQUIRE(send_alloc(&f, 7, &a[0]) == 0);
    REQUIRE(send_alloc(&f, 8, &a[1]) == 0);
    REQUIRE(run_until(&f, &a[1].done));
    CHECK_EQ_INT(a[0].err, 0);
    CHECK_EQ_INT(a[1].err, 0);
    CHECK_EQ_INT(a[0].start / 1000, 7);
    CHECK_EQ_INT(f.srv.early, 0);
    CHECK_EQ_INT(f.srv.auth_ok, 1);
    CHECK_EQ_STR(f.srv.user, "broker");
    CHECK_EQ_INT(f.srv.answered, 2);
    fx_stop(&f);
}

/* SCRAM-SHA-512 and -256 (the inter-broker mechanisms beside PLAIN): the two-step exchange
 * before any queued request, the server's signature checked. */
TEST(net_client_sasl_scram_authenticates_before_any_request)
{
    static const enum sasl_mech mechs[] = {SASL_MECH_SCRAM_SHA_512, SASL_MECH_SCRAM_SHA_256};
    for (size_t i = 0; i < 2; i++) {
        struct fx f;
        struct fixture_answer a[2] = {{0}};
        REQUIRE(fx_start_mech(&f, mechs[i], NULL, "s3cret", NULL, "s3cret"));
        REQUIRE(send_alloc(&f, 7, &a[0]) == 0);
        REQUIRE(send_alloc(&f, 8, &a[1]) == 0);
        REQUIRE(run_until(&f, &a[1].done));
        CHECK_EQ_INT(a[0].err, 0);
        CHECK_EQ_INT(a[1].err, 0);
        CHECK_EQ_INT(f.srv.early, 0);
        CHECK_EQ_INT(f.srv.auth_ok, 1);
        CHECK_EQ_STR(f.srv.user, "broker");
        CHECK_EQ_INT(f.srv.answered, 2);
        fx_stop(&f);
    }
}

/* A wrong password fails at the server (and backs off, retrying: the user may not exist yet);
 * a server whose signature does not verify (it does not hold the credential) is refused by
 * the client even though it said yes: nothing queued is written to it. */
TEST(net_client_sasl_scram_refusals_back_off)
{
    struct fx f;
    struct fixture_answer a = {0};
    REQUIRE(fx_start_mech(&f, SASL_MECH_SCRAM_SHA_512, NULL, "s3cret", NULL, "wrong"));
    REQUIRE(send_alloc(&f, 1, &a) == 0);
    REQUIRE(run_until_int(&f, &f.srv.eofs, 1));
    CHECK_EQ_INT(f.srv.auth_failed, 1);
    CHECK_EQ_INT(f.srv.answered, 0);
    CHECK(!a.done);
    tclock_advance(f.clock, 50);
    REQUIRE(run_until_int(&f, &f.srv.eofs, 2));
    CHECK_EQ_INT(f.srv.auth_failed, 2);
    CHECK_EQ_INT(f.srv.answered, 0);
    fx_stop(&f);

    struct fixture_answer b = {0};
    REQUIRE(fx_start_mech(&f, SASL_MECH_SCRAM_SHA_512, NULL, "s3cret", NULL, "s3cret"));
    f.srv.forge_signature = true;
    REQUIRE(send_alloc(&f, 1, &b) == 0);
    REQUIRE(run_until_int(&f, &f.srv.eofs, 1));
    CHECK_EQ_INT(f.srv.auth_ok, 1); /* the server took the proof */
    CHECK_EQ_INT(f.srv.answered, 0);
    CHECK_EQ_INT(f.srv.early, 0);
    CHECK(!b.done);
    fx_stop(&f);
}

TEST(net_client_sasl_ssl_failed_authentication_backs_off)
{
    struct pki k;
    struct fx f;
    struct fixture_answer a = {0};
    pki_make(&k);
    REQUIRE(fx_start(&f, ctx_make(false, &k.broker1, NULL), "s3cret", ctx_make(true, NULL, &k.ca),
                     "wrong"));
    REQUIRE(send_alloc(&f, 1, &a) == 0);
    REQUIRE(run_until_int(&f, &f.srv.eofs, 1)); /* the client gave the connection up */
    CHECK_EQ_INT(f.srv.auth_failed, 1);
    CHECK_EQ_INT(f.srv.early, 0);
    CHECK_EQ_INT(f.srv.answered, 0);
    CHECK(!a.done);
    /* Backoff as after failed connects: 50 ms, then 100 (a TCP connect that then fails to
     * authenticate does not reset it). */
    CHECK_EQ_INT(f.resolves, 1);
    tclock_advance(f.clock, 49);
    CHECK_EQ_INT(f.resolves, 1);
    tclock_advance(f.clock, 1);
    CHECK_EQ_INT(f.resolves, 2);
    REQUIRE(run_until_int(&f, &f.srv.eofs, 2));
    CHECK_EQ_INT(f.srv.auth_failed, 2);
    tclock_advance(f.clock, 99);
    CHECK_EQ_INT(f.resolves, 2);
    tclock_advance(f.clock, 1);
    CHECK_EQ_INT(f.resolves, 3);
    CHECK_EQ_INT(f.srv.answered, 0);
    fx_stop(&f);
    pki_free(&k);
}

TEST(net_client_tls_refuses_a_certificate_for_another_address)
{
    struct pki k;
    struct fx f;
    struct fixture_answer a = {0};
    pki_make(&k);
    /* Signed by the trusted CA, but naming 127.0.0.2: not the broker connected to. */
    REQUIRE(
        fx_start(&f, ctx_make(false, &k.elsewhere, NULL), NULL, ctx_make(true, NULL, &k.ca), NULL));
    REQUIRE(send_alloc(&f, 1, &a) == 0);
    REQUIRE(run_until_int(&f, &f.srv.eofs, 1));
    CHECK_EQ_INT(f.srv.tls_failed, 1);
    CHECK_EQ_INT(f.srv.answered, 0);
    CHECK(!a.done);
    fx_stop(&f);
    pki_free(&k);
}
