/* SPDX-License-Identifier: Apache-2.0 */
/* tls: a client and a server connection talking through memory only (each one's output is
 * the other's input): handshake, data both ways, client certificates from the right CA, from
 * another CA and expired, garbage instead of a ClientHello, principal mapping rules, and the
 * config errors that must name their key. Certificates come from tls_fixture.h. */
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "harness.h"
#include "tls_fixture.h"
#include "net/tls.h"

/* ---- certificates ------------------------------------------------------------------------ */

struct pki {
    struct pem ca, server, alice, other_ca, mallory, expired;
};

static void pki_make(struct pki *k)
{
    fixture_make_cert(&k->ca, "Tally Test CA", "ca", NULL, NULL, 0, 86400);
    fixture_make_cert(&k->server, "localhost", "brokers", &k->ca, NULL, 0, 86400);
    fixture_make_cert(&k->alice, "alice", "eng", &k->ca, NULL, 0, 86400);
    fixture_make_cert(&k->other_ca, "Other CA", "ca", NULL, NULL, 0, 86400);
    fixture_make_cert(&k->mallory, "mallory", "eng", &k->other_ca, NULL, 0, 86400);
    fixture_make_cert(&k->expired, "old", "eng", &k->ca, NULL, -2 * 86400, -86400);
}

static void pki_free(struct pki *k)
{
    fixture_pem_free(&k->ca);
    fixture_pem_free(&k->server);
    fixture_pem_free(&k->alice);
    fixture_pem_free(&k->other_ca);
    fixture_pem_free(&k->mallory);
    fixture_pem_free(&k->expired);
}

/* ---- memory transport --------------------------------------------------------------------- */

/* Moves every pending byte from `from` to `to`; returns -1 if the receiver failed. */
static int move(struct tls_conn *from, struct tls_conn *to)
{
    uint8_t buf[4096];
    size_t n;
    while ((n = tls_conn_take(from, buf, sizeof buf)) > 0)
        if (tls_conn_feed(to, buf, n) != 0)
            return -1;
    return 0;
}

/* Runs the exchange until nothing moves; returns 0, or -1 when either side failed. Reading
 * lets a TLS 1.3 server see the client's Finished (and a client see the server's alert). */
static int pump(struct tls_conn *c, struct tls_conn *s)
{
    uint8_t sink[64];
    for (int i = 0; i < 20; i++) {
        if (move(c, s) != 0 || move(s, c) != 0)
            return -1;
        if (tls_conn_read(s, sink, 0) < 0)
            return -1;
        if (tls_conn_pending(c) == 0 && tls_conn_pending(s) == 0)
            break;
    }
    return 0;
}

static struct tls_ctx *server_ctx(const struct pki *k, enum tls_client_auth auth, const char *rules)
{
    struct tls_config cfg = {
        .keystore_chain = k->server.cert,
        .keystore_key = k->server.key,
        .truststore_certs = k->ca.cert,
        .client_auth = auth,
        .principal_rules = rules,
    };
    struct tls_ctx *ctx = NULL;
    char why[256];
    if (tls_ctx_new(&cfg, &ctx, why, sizeof why) != 0)
        fprintf(stderr, "server ctx: %s\n", why);
    return ctx;
}

static struct tls_ctx *client_ctx(const struct pki *k, const struct pem *cert)
{
    struct tls_config cfg = {
        .client = true,
        .keystore_chain = cert ? cert->cert : NULL,
        .keystore_key = cert ? cert->key : NULL,
        .truststore_certs = k->ca.cert,
    };
    struct tls_ctx *ctx = NULL;
    char why[256];
    if (tls_ctx_new(&cfg, &ctx, why, sizeof why) != 0)
        fprintf(stderr, "client ctx: %s\n", why);
    return ctx;
}

TEST(tls_handshake_and_data_both_ways)
{
    struct pki k;
    pki_make(&k);
    struct tls_ctx *sc = server_ctx(&k, TLS_AUTH_NONE, NULL);
    struct tls_ctx *cc = client_ctx(&k, NULL);
    REQUIRE(sc && cc);
    struct tls_conn *c = tls_conn_new(cc), *s = tls_conn_new(sc);
    REQUIRE(c && s);
    CHECK(tls_conn_pending(c) > 0); /* the ClientHello */
    CHECK(!tls_conn_established(s));
    CHECK(tls_conn_write(s, "x", 1) != 0); /* nothing before the handshake */
    CHECK_EQ_INT(pump(c, s), 0);
    CHECK(tls_conn_established(c));
    CHECK(tls_conn_established(s));

    /* 200 KiB from the client (several records), echoed back. */
    size_t big = 200 * 1024;
    uint8_t *out = malloc(big), *in = malloc(big);
    REQUIRE(out && in);
    for (size_t i = 0; i < big; i++)
        out[i] = (uint8_t)(i * 7 + 3);
    CHECK_EQ_INT(tls_conn_write(c, out, big), 0);
    CHECK(tls_conn_pending(c) > big); /* ciphertext: framing and tags on top */
    CHECK_EQ_INT(move(c, s), 0);
    size_t got = 0;
    long r;
    while ((r = tls_conn_read(s, in + got, big - got)) > 0)
        got += (size_t)r;
    CHECK_EQ_INT(r, 0);
    CHECK_EQ_INT(got, big);
    CHECK(memcmp(in, out, big) == 0);
    CHECK_EQ_INT(tls_conn_write(s, in, big), 0);
    CHECK_EQ_INT(move(s, c), 0);
    memset(in, 0, big);
    got = 0;
    while ((r = tls_conn_read(c, in + got, big - got)) > 0)
        got += (size_t)r;
    CHECK_EQ_INT(got, big);
    CHECK(memcmp(in, out, big) == 0);

    char p[300];
    CHECK_EQ_INT(tls_conn_principal(s, p, sizeof p), 0);
    CHECK_EQ_STR(p, "User:ANONYMOUS"); /* no client certificate */
    free(out);
    free(in);
    tls_conn_free(c);
    tls_conn_free(s);
    tls_ctx_free(sc);
    tls_ctx_free(cc);
    pki_free(&k);
}

/* A client certificate on a listener with ssl.client.auth=required: from the listener's CA it
 * passes and names the principal; from another CA, expired, or missing it fails. */
TEST(tls_client_certificates)
{
    struct pki k;
    pki_make(&k);
    struct tls_ctx *sc = server_ctx(&k, TLS_AUTH_REQUIRED, NULL);
    REQUIRE(sc);
    const struct {
        const struct pem *cert;
        bool ok;
        const char *why;
    } cases[] = {
        {&k.alice, true, NULL},
        {&k.mallory, false, "certificate verify failed"},
        {&k.expired, false, "certificate verify failed: certificate has expired"},
        {NULL, false, "certificate"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct tls_ctx *cc = client_ctx(&k, cases[i].cert);
        REQUIRE(cc);
        struct tls_conn *c = tls_conn_new(cc), *s = tls_conn_new(sc);
        REQUIRE(c && s);
        int rc = pump(c, s);
        CHECK_EQ_INT(rc == 0 && tls_conn_established(s), cases[i].ok);
        if (cases[i].ok) {
            char p[300];
            CHECK_EQ_INT(tls_conn_principal(s, p, sizeof p), 0);
            CHECK_EQ_STR(p, "User:CN=alice,OU=eng,O=Tally");
        } else {
            CHECK(strstr(tls_conn_error(s), cases[i].why) != NULL);
            CHECK_EQ_INT(tls_conn_write(s, "x", 1), -1);
        }
        tls_conn_free(c);
        tls_conn_free(s);
        tls_ctx_free(cc);
    }
    tls_ctx_free(sc);
    pki_free(&k);
}

/* A plaintext Kafka request (an ApiVersions frame) instead of a ClientHello. */
TEST(tls_garbage_refused)
{
    struct pki k;
    pki_make(&k);
    struct tls_ctx *sc = server_ctx(&k, TLS_AUTH_NONE, NULL);
    REQUIRE(sc);
    struct tls_conn *s = tls_conn_new(sc);
    REQUIRE(s);
    static const uint8_t frame[] = {0, 0, 0, 14, 0, 18, 0, 3, 0, 0, 0, 1, 0, 4, 'k', 'c', 'a', 't'};
    CHECK_EQ_INT(tls_conn_feed(s, frame, sizeof frame), -1);
    CHECK(!tls_conn_established(s));
    CHECK(strlen(tls_conn_error(s)) > 0);
    uint8_t buf[16];
    CHECK_EQ_INT(tls_conn_read(s, buf, sizeof buf), -1);
    CHECK_EQ_INT(tls_conn_feed(s, "more", 4), -1); /* dead stays dead */
    tls_conn_free(s);

    /* After a good handshake, a corrupted record kills the connection. */
    struct tls_ctx *cc = client_ctx(&k, NULL);
    struct tls_conn *c = tls_conn_new(cc);
    s = tls_conn_new(sc);
    REQUIRE(cc && c && s);
    REQUIRE(pump(c, s) == 0);
    CHECK_EQ_INT(tls_conn_write(c, "hello", 5), 0);
    uint8_t rec[256];
    size_t n = tls_conn_take(c, rec, sizeof rec);
    REQUIRE(n > 8);
    rec[n - 1] ^= 0x55; /* the tag */
    CHECK_EQ_INT(tls_conn_feed(s, rec, n), 0);
    CHECK_EQ_INT(tls_conn_read(s, buf, sizeof buf), -1);
    tls_conn_free(c);
    tls_conn_free(s);
    tls_ctx_free(cc);
    tls_ctx_free(sc);
    pki_free(&k);
}

TEST(tls_principal_mapping_rules)
{
    struct pki k;
    pki_make(&k);
    struct tls_ctx *sc = server_ctx(
        &k, TLS_AUTH_REQUIRED,
        "RULE:^CN=([a-z]+),OU=ops,O=Tally$/ops-$1/U, RULE:^CN=(.*),OU=(.*),O=Tally$/$1@$2/,"
        "DEFAULT");
    REQUIRE(sc);
    char out[300];
    CHECK_EQ_INT(tls_ctx_map_principal(sc, "CN=bob,OU=ops,O=Tally", out, sizeof out), 0);
    CHECK_EQ_STR(out, "User:OPS-BOB");
    CHECK_EQ_INT(tls_ctx_map_principal(sc, "CN=alice,OU=eng,O=Tally", out, sizeof out), 0);
    CHECK_EQ_STR(out, "User:alice@eng");
    CHECK_EQ_INT(tls_ctx_map_principal(sc, "CN=x,O=Elsewhere", out, sizeof out), 0);
    CHECK_EQ_STR(out, "User:CN=x,O=Elsewhere"); /* DEFAULT: the whole subject */

    /* On a real handshake. */
    struct tls_ctx *cc = client_ctx(&k, &k.alice);
    struct tls_conn *c = tls_conn_new(cc), *s = tls_conn_new(sc);
    REQUIRE(cc && c && s);
    REQUIRE(pump(c, s) == 0);
    CHECK_EQ_INT(tls_conn_principal(s, out, sizeof out), 0);
    CHECK_EQ_STR(out, "User:alice@eng");
    tls_conn_free(c);
    tls_conn_free(s);
    tls_ctx_free(cc);
    tls_ctx_free(sc);

    /* No rule applies (no DEFAULT at the end). */
    sc = server_ctx(&k, TLS_AUTH_REQUIRED, "RULE:^CN=(.*),OU=ops,O=Tally$/$1/L");
    REQUIRE(sc);
    CHECK_EQ_INT(tls_ctx_map_principal(sc, "CN=alice,OU=eng,O=Tally", out, sizeof out), -1);
    CHECK_EQ_INT(tls_ctx_map_principal(sc, "CN=Bob,OU=ops,O=Tally", out, sizeof out), 0);
    CHECK_EQ_STR(out, "User:bob");
    tls_ctx_free(sc);

    char why[256];
    CHECK_EQ_INT(tls_rules_check("DEFAULT", why, sizeof why), 0);
    CHECK_EQ_INT(tls_rules_check("RULE:^CN=(.*)$/$1/L,DEFAULT", why, sizeof why), 0);
    CHECK_EQ_INT(tls_rules_check("RULE:^CN=(.*)$/$1", why, sizeof why), -1);
    CHECK(strstr(why, "ssl.principal.mapping.rules") != NULL);
    CHECK_EQ_INT(tls_rules_check("RULE:^CN=((.*$/$1/", why, sizeof why), -1);
    CHECK_EQ_INT(tls_rules_check("NOPE", why, sizeof why), -1);
    CHECK_EQ_INT(tls_rules_check("RULE:a/b/X", why, sizeof why), -1);
    pki_free(&k);
}

/* Each bad setting fails with a sentence naming its key. */
TEST(tls_config_errors_name_the_key)
{
    struct pki k;
    pki_make(&k);
    const struct {
        struct tls_config cfg;
        const char *key;
    } cases[] = {
        {{.keystore_type = "JKS", .keystore_location = "/etc/hostname"}, "ssl.keystore.type=JKS"},
        {{.keystore_location = "/nonexistent/ks.p12"}, "ssl.keystore.location"},
        {{0}, "ssl.keystore.location"},
        {{.keystore_chain = k.server.cert}, "ssl.keystore.key"},
        {{.keystore_chain = k.server.cert, .keystore_key = k.alice.key}, "ssl.keystore"},
        {{.keystore_chain = k.server.cert,
          .keystore_key = k.server.key,
          .client_auth = TLS_AUTH_REQUIRED},
         "ssl.client.auth=required"},
        {{.keystore_chain = k.server.cert,
          .keystore_key = k.server.key,
          .enabled_protocols = "TLSv1.2,SSLv3"},
         "ssl.enabled.protocols"},
        {{.keystore_chain = k.server.cert, .keystore_key = k.server.key, .cipher_suites = "NOPE"},
         "ssl.cipher.suites"},
        {{.keystore_chain = k.server.cert, .keystore_key = k.server.key, .truststore_certs = "x"},
         "ssl.truststore.certificates"},
        {{.keystore_chain = k.server.cert,
          .keystore_key = k.server.key,
          .truststore_type = "JKS",
          .truststore_location = "/etc/hostname"},
         "ssl.truststore.type=JKS"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct tls_ctx *ctx = NULL;
        char why[512] = "";
        CHECK_EQ_INT(tls_ctx_new(&cases[i].cfg, &ctx, why, sizeof why), -1);
        CHECK(ctx == NULL);
        if (strstr(why, cases[i].key) == NULL) {
            char m[700];
            snprintf(m, sizeof m, "case %zu: '%s' does not name %s", i, why, cases[i].key);
            harness_fail(__FILE__, __LINE__, m);
        }
    }
    /* Protocols and IANA cipher names that are fine. */
    struct tls_config ok = {.keystore_chain = k.server.cert,
                            .keystore_key = k.server.key,
                            .enabled_protocols = "TLSv1.3",
                            .cipher_suites = "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,"
                                             "TLS_AES_256_GCM_SHA384"};
    struct tls_ctx *ctx = NULL;
    char why[512] = "";
    CHECK_EQ_INT(tls_ctx_new(&ok, &ctx, why, sizeof why), 0);
    tls_ctx_free(ctx);

    /* Inline PEM on one line, as a properties file holds it. */
    char chain[sizeof k.server.cert], key[sizeof k.server.key];
    snprintf(chain, sizeof chain, "%s", k.server.cert);
    snprintf(key, sizeof key, "%s", k.server.key);
    for (char *q = chain; *q; q++)
        *q = *q == '\n' ? ' ' : *q;
    for (char *q = key; *q; q++)
        *q = *q == '\n' ? ' ' : *q;
    struct tls_config one = {.keystore_chain = chain, .keystore_key = key};
    ctx = NULL;
    CHECK_EQ_INT(tls_ctx_new(&one, &ctx, why, sizeof why), 0);
    tls_ctx_free(ctx);
    pki_free(&k);
}
