/* SPDX-License-Identifier: Apache-2.0 */
/* sasl unit tests: sasl.enabled.mechanisms, the strict JAAS parser, the session's state
 * machine with PLAIN, and SCRAM-SHA-256 against RFC 7677's exchange (plus SHA-512 and the
 * refusals: wrong proof, unknown user, tampered nonce). */
#include "harness.h"

#include <stdlib.h>

#include "base/err.h"
#include "sasl/sasl.h"

static int scram_client_run_nonce(const struct sasl_config *c, enum sasl_mech m, const char *user,
                                  const char *password, bool doubled, bool *server_ok);

#define JAAS_PLAIN                                                                                 \
    "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"admin\" "         \
    "password=\"admin-secret\" user_admin=\"admin-secret\" user_alice=\"alice-secret\";"

static int plain(struct sasl_session *s, const char *authz, const char *user, const char *pass)
{
    uint8_t tok[600];
    size_t n = 0;
    memcpy(tok + n, authz, strlen(authz));
    n += strlen(authz);
    tok[n++] = 0;
    memcpy(tok + n, user, strlen(user));
    n += strlen(user);
    tok[n++] = 0;
    memcpy(tok + n, pass, strlen(pass));
    n += strlen(pass);
    return sasl_step(s, tok, n);
}

TEST(sasl_mechanisms_parse_and_refuse)
{
    struct sasl_config c = {0};
    char why[256];
    CHECK_EQ_INT(sasl_config_set_mechanisms(&c, "PLAIN, SCRAM-SHA-512", why, sizeof why), 0);
    CHECK_EQ_INT(c.n_mechs, 2);
    CHECK(c.mechs[0] == SASL_MECH_PLAIN && c.mechs[1] == SASL_MECH_SCRAM_SHA_512);
    CHECK(sasl_config_enabled(&c, SASL_MECH_PLAIN));
    CHECK(!sasl_config_enabled(&c, SASL_MECH_SCRAM_SHA_256));
    CHECK_EQ_INT(sasl_config_set_mechanisms(&c, "GSSAPI", why, sizeof why), -1);
    CHECK(strstr(why, "GSSAPI is not supported") != NULL);
    CHECK(strstr(why, "PLAIN, SCRAM-SHA-256, SCRAM-SHA-512") != NULL);
    CHECK_EQ_INT(sasl_config_set_mechanisms(&c, "PLAIN,OAUTHBEARER", why, sizeof why), -1);
    CHECK_EQ_INT(sasl_config_set_mechanisms(&c, "PLAIN,PLAIN", why, sizeof why), -1);
    CHECK_EQ_INT(sasl_config_set_mechanisms(&c, "", why, sizeof why), -1);
    CHECK_EQ_INT(sasl_config_set_mechanisms(&c, "plain", why, sizeof why), -1);
    /* A refused list leaves the previous one. */
    CHECK_EQ_INT(c.n_mechs, 2);
}

TEST(sasl_jaas_plain_users)
{
    struct sasl_config c = {0};
    char why[256];
    REQUIRE(sasl_config_add_jaas(&c, SASL_MECH_PLAIN, JAAS_PLAIN, why, sizeof why) == 0);
    REQUIRE(c.n_users == 2);
    CHECK_EQ_STR(c.users[0].name, "admin");
    CHECK_EQ_STR(c.users[0].password, "admin-secret");
    CHECK_EQ_STR(c.users[1].name, "alice");
    CHECK_EQ_STR(c.users[1].password, "alice-secret");
    sasl_config_free(&c);

    /* Escapes inside quotes, bare words, other flags, newlines. */
    REQUIRE(sasl_config_add_jaas(&c, SASL_MECH_PLAIN,
                                 "org.apache.kafka.common.security.plain.PlainLoginModule\n"
                                 "  optional user_bob=\"a\\\"b\\\\c\"\n user_carol=word ;  ",
                                 why, sizeof why) == 0);
    REQUIRE(c.n_users == 2);
    CHECK_EQ_STR(c.users[0].password, "a\"b\\c");
    CHECK_EQ_STR(c.users[1].password, "word");
    sasl_config_free(&c);
}

TEST(sasl_jaas_refuses_malformed_configs)
{
    static const char *const bad[] = {
        "",                                                                      /* empty */
        "org.apache.kafka.common.security.scram.ScramLoginModule required;",     /* wrong class */
        "org.apache.kafka.common.security.plain.PlainLoginModule user_a=\"x\";", /* no flag */
        "org.apache.kafka.common.security.plain.PlainLoginModule mandatory user_a=\"x\";",
        "org.apache.kafka.common.security.plain.PlainLoginModule required user_a=\"x\"", /* ; */
        "org.apache.kafka.common.security.plain.PlainLoginModule required user_a=\"x;",
        "org.apache.kafka.common.security.plain.PlainLoginModule required user_a=\"\\n\";",
        "org.apache.kafka.common.security.plain.PlainLoginModule required user_=\"x\";",
        "org.apache.kafka.common.security.plain.PlainLoginModule required usr_a=\"x\";",
        "org.apache.kafka.common.security.plain.PlainLoginModule required user_a \"x\";",
        "org.apache.kafka.common.security.plain.PlainLoginModule required user_a=\"x\" "
        "user_a=\"y\";", /* twice */
        "org.apache.kafka.common.security.plain.PlainLoginModule required user_a=\"x\"; "
        "org.apache.kafka.common.security.plain.PlainLoginModule required;", /* two modules */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct sasl_config c = {0};
        char why[256] = "";
        CHECK_EQ_INT(sasl_config_add_jaas(&c, SASL_MECH_PLAIN, bad[i], why, sizeof why), -1);
        CHECK(why[0] != '\0');
        CHECK_EQ_INT(c.n_users, 0);
    }
    /* The reason never echoes a password. */
    struct sasl_config c = {0};
    char why[256];
    CHECK_EQ_INT(sasl_config_add_jaas(&c, SASL_MECH_PLAIN,
                                      "org.apache.kafka.common.security.plain.PlainLoginModule "
                                      "required user_a=\"s3cret\" junk",
                                      why, sizeof why),
                 -1);
    CHECK(strstr(why, "s3cret") == NULL);
    /* SCRAM's module takes no user_ entries. */
    CHECK_EQ_INT(sasl_config_add_jaas(&c, SASL_MECH_SCRAM_SHA_256,
                                      "org.apache.kafka.common.security.scram.ScramLoginModule "
                                      "required user_a=\"x\";",
                                      why, sizeof why),
                 -1);
    CHECK_EQ_INT(sasl_config_add_jaas(&c, SASL_MECH_SCRAM_SHA_256,
                                      "org.apache.kafka.common.security.scram.ScramLoginModule "
                                      "required username=\"admin\" password=\"x\";",
                                      why, sizeof why),
                 0);
}

TEST(sasl_plain_accepts_the_right_password_only)
{
    struct sasl_config c = {0};
    struct sasl_session s;
    char why[256];
    REQUIRE(sasl_config_set_mechanisms(&c, "PLAIN", why, sizeof why) == 0);
    REQUIRE(sasl_config_add_jaas(&c, SASL_MECH_PLAIN, JAAS_PLAIN, why, sizeof why) == 0);

    sasl_session_init(&s, &c);
    CHECK_EQ_INT(sasl_handshake(&s, "PLAIN"), 0);
    CHECK_EQ_INT(plain(&s, "", "alice", "alice-secret"), 0);
    CHECK_EQ_INT(s.state, SASL_AUTHENTICATED);
    CHECK_EQ_STR(s.user, "alice");
    CHECK_EQ_INT(s.reply_len, 0);
    /* Nothing after the end. */
    CHECK_EQ_INT(plain(&s, "", "alice", "alice-secret"), ERR_ILLEGAL_SASL_STATE);

    /* authzid equal to the user is fine; another one is not. */
    sasl_session_init(&s, &c);
    CHECK_EQ_INT(sasl_handshake(&s, "PLAIN"), 0);
    CHECK_EQ_INT(plain(&s, "admin", "admin", "admin-secret"), 0);
    sasl_session_init(&s, &c);
    CHECK_EQ_INT(sasl_handshake(&s, "PLAIN"), 0);
    CHECK_EQ_INT(plain(&s, "admin", "alice", "alice-secret"), ERR_SASL_AUTHENTICATION_FAILED);

    static const char *const wrong[][2] = {
        {"alice", "alice-secreT"},   {"alice", "alice-secret2"},
        {"alice", "alice-secre"},    {"alice", ""},
        {"mallory", "alice-secret"}, {"", "alice-secret"},
        {"ALICE", "alice-secret"},
    };
    for (size_t i = 0; i < sizeof wrong / sizeof wrong[0]; i++) {
        sasl_session_init(&s, &c);
        CHECK_EQ_INT(sasl_handshake(&s, "PLAIN"), 0);
        CHECK_EQ_INT(plain(&s, "", wrong[i][0], wrong[i][1]), ERR_SASL_AUTHENTICATION_FAILED);
        CHECK_EQ_INT(s.state, SASL_FAILED);
        /* The name attempted is kept for the log line. */
        CHECK_EQ_STR(s.user, wrong[i][0]);
    }
    /* Malformed tokens: one NUL, three NULs. */
    sasl_session_init(&s, &c);
    CHECK_EQ_INT(sasl_handshake(&s, "PLAIN"), 0);
    CHECK_EQ_INT(sasl_step(&s, (const uint8_t *)"alice\0alice-secret", 18),
                 ERR_SASL_AUTHENTICATION_FAILED);
    sasl_session_init(&s, &c);
    CHECK_EQ_INT(sasl_handshake(&s, "PLAIN"), 0);
    CHECK_EQ_INT(sasl_step(&s, (const uint8_t *)"\0alice\0alice-secret\0", 20),
                 ERR_SASL_AUTHENTICATION_FAILED);
    sasl_config_free(&c);
}

TEST(sasl_session_states_and_mechanism_refusals)
{
    struct sasl_config c = {0};
    struct sasl_session s;
    char why[256];
    REQUIRE(sasl_config_set_mechanisms(&c, "PLAIN", why, sizeof why) == 0);

    /* SaslAuthenticate before SaslHandshake. */
    sasl_session_init(&s, &c);
    CHECK_EQ_INT(sasl_step(&s, (const uint8_t *)"\0a\0b", 4), ERR_ILLEGAL_SASL_STATE);
    CHECK_EQ_INT(s.state, SASL_FAILED);
    /* A mechanism not enabled here, one unknown, and a second handshake. */
    sasl_session_init(&s, &c);
    CHECK_EQ_INT(sasl_handshake(&s, "SCRAM-SHA-256"), ERR_UNSUPPORTED_SASL_MECHANISM);
    CHECK_EQ_INT(s.state, SASL_FAILED);
    sasl_session_init(&s, &c);
    CHECK_EQ_INT(sasl_handshake(&s, "GSSAPI"), ERR_UNSUPPORTED_SASL_MECHANISM);
    sasl_session_init(&s, &c);
    CHECK_EQ_INT(sasl_handshake(&s, "PLAIN"), 0);
    CHECK_EQ_INT(sasl_handshake(&s, "PLAIN"), ERR_ILLEGAL_SASL_STATE);
}

/* ---- SCRAM --------------------------------------------------------------------------------- */

struct cred_store {
    enum sasl_mech mech;
    const char *user;
    struct sasl_scram_cred cred;
};

static int lookup(void *arg, enum sasl_mech m, const char *name, struct sasl_scram_cred *out)
{
    struct cred_store *cs = arg;
    if (m != cs->mech || strcmp(name, cs->user) != 0)
        return -1;
    *out = cs->cred;
    return 0;
}

static int b64d(const char *in, uint8_t *out)
{
    static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = strlen(in), o = 0;
    uint32_t v = 0;
    int bits = 0;
    for (size_t i = 0; i < n && in[i] != '='; i++) {
        v = v << 6 | (uint32_t)(strchr(al, in[i]) - al);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (uint8_t)(v >> bits);
        }
    }
    return (int)o;
}

/* The token in a buffer of exactly its length, as it arrives in a frame (no NUL after it):
 * a parser that reads past it is caught by ASan. */
static int step_str(struct sasl_session *s, const char *t)
{
    size_t n = strlen(t);
    uint8_t *b = malloc(n ? n : 1);
    memcpy(b, t, n);
    int rc = sasl_step(s, b, n);
    free(b);
    return rc;
}

/* ---- KIP-368 re-authentication --------------------------------------------------------- */

/* Kafka's SaslServerAuthenticator: connections.max.reauth.ms, capped by the credential's own
 * remaining lifetime, never negative; neither: the session never ends. */
TEST(sasl_session_lifetime_as_kafka_computes_it)
{
    CHECK_EQ_INT(sasl_session_lifetime_ms(0, SASL_NO_EXPIRY), -1);
    CHECK_EQ_INT(sasl_session_lifetime_ms(-5, SASL_NO_EXPIRY), -1);
    CHECK_EQ_INT(sasl_session_lifetime_ms(1500, SASL_NO_EXPIRY), 1500);
    CHECK_EQ_INT(sasl_session_lifetime_ms(0, 700), 700);
    CHECK_EQ_INT(sasl_session_lifetime_ms(1500, 700), 700);
    CHECK_EQ_INT(sasl_session_lifetime_ms(500, 700), 500);
    CHECK_EQ_INT(sasl_session_lifetime_ms(1500, -30), 0); /* the credential already expired */
    CHECK_EQ_INT(sasl_session_lifetime_ms(0, -30), 0);
}

static void authenticated_as(struct sasl_session *s, const struct sasl_config *c, const char *user,
                             const char *pass)
{
    sasl_session_init(s, c);
    REQUIRE(sasl_handshake(s, "PLAIN") == 0);
    REQUIRE(plain(s, "", user, pass) == 0);
    REQUIRE(s->state == SASL_AUTHENTICATED);
}

TEST(sasl_reauth_keeps_the_mechanism_and_the_principal)
{
    struct sasl_config c = {0};
    struct sasl_session s;
    char why[256];
    REQUIRE(sasl_config_set_mechanisms(&c, "PLAIN,SCRAM-SHA-256", why, sizeof why) == 0);
    REQUIRE(sasl_config_add_jaas(&c, SASL_MECH_PLAIN, JAAS_PLAIN, why, sizeof why) == 0);

    /* Only an authenticated session re-authenticates. */
    sasl_session_init(&s, &c);
    CHECK_EQ_INT(sasl_reauth_begin(&s), ERR_ILLEGAL_SASL_STATE);
    CHECK_EQ_INT(s.state, SASL_WAIT_HANDSHAKE);
    CHECK(!s.reauth);

    /* The same user again, twice: each time a fresh exchange that ends authenticated. */
    authenticated_as(&s, &c, "alice", "alice-secret");
    for (int i = 0; i < 2; i++) {
        CHECK_EQ_INT(sasl_reauth_begin(&s), 0);
        CHECK_EQ_INT(s.state, SASL_WAIT_HANDSHAKE);
        CHECK_EQ_STR(s.reauth_user, "alice");
        CHECK_EQ_INT(sasl_handshake(&s, "PLAIN"), 0);
        CHECK_EQ_INT(s.state, SASL_WAIT_TOKEN);
        CHECK_EQ_INT(plain(&s, "", "alice", "alice-secret"), 0);
        CHECK_EQ_INT(s.state, SASL_AUTHENTICATED);
        CHECK_EQ_INT(s.refusal, SASL_REFUSED_NONE);
    }

    /* Valid credentials of another user: refused, the session is over. */
    CHECK_EQ_INT(sasl_reauth_begin(&s), 0);
    CHECK_EQ_INT(sasl_handshake(&s, "PLAIN"), 0);
    CHECK_EQ_INT(plain(&s, "", "admin", "admin-secret"), ERR_SASL_AUTHENTICATION_FAILED);
    CHECK_EQ_INT(s.state, SASL_FAILED);
    CHECK_EQ_INT(s.refusal, SASL_REFUSED_PRINCIPAL_CHANGE);
    CHECK_EQ_INT(s.reply_len, 0);
    CHECK_EQ_INT(sasl_reauth_begin(&s), ERR_ILLEGAL_SASL_STATE);

    /* Another enabled mechanism: the handshake passes (as in Kafka), its first token fails. */
    authenticated_as(&s, &c, "alice", "alice-secret");
    CHECK_EQ_INT(sasl_reauth_begin(&s), 0);
    CHECK_EQ_INT(sasl_handshake(&s, "SCRAM-SHA-256"), 0);
    CHECK_EQ_INT(s.state, SASL_REAUTH_BAD_MECH);
    CHECK_EQ_INT(step_str(&s, "n,,n=alice,r=abc"), ERR_SASL_AUTHENTICATION_FAILED);
    CHECK_EQ_INT(s.state, SASL_FAILED);
    CHECK_EQ_INT(s.refusal, SASL_REFUSED_MECHANISM_CHANGE);

    /* A wrong password, and a mechanism not enabled: the ordinary refusals. */
    authenticated_as(&s, &c, "alice", "alice-secret");
    CHECK_EQ_INT(sasl_reauth_begin(&s), 0);
    CHECK_EQ_INT(sasl_handshake(&s, "PLAIN"), 0);
    CHECK_EQ_INT(plain(&s, "", "alice", "wrong"), ERR_SASL_AUTHENTICATION_FAILED);
    CHECK_EQ_INT(s.refusal, SASL_REFUSED_NONE);
    authenticated_as(&s, &c, "alice", "alice-secret");
    CHECK_EQ_INT(sasl_reauth_begin(&s), 0);
    CHECK_EQ_INT(sasl_handshake(&s, "SCRAM-SHA-512"), ERR_UNSUPPORTED_SASL_MECHANISM);
    sasl_config_free(&c);
}

/* RFC 7677 §3: user "user", password "pencil", the exchange given there byte for byte. */
TEST(sasl_scram_sha256_rfc7677_vector)
{
    struct cred_store cs = {SASL_MECH_SCRAM_SHA_256, "user", {0}};
    uint8_t salt[32];
    int sl = b64d("W22ZaJ0SNY7soEsUEjb6gQ==", salt);
    REQUIRE(sl == 16);
    REQUIRE(sasl_scram_derive(SASL_MECH_SCRAM_SHA_256, (const uint8_t *)"pencil", 6, salt,
                              (size_t)sl, 4096, &cs.cred) == 0);
    struct sasl_config c = {.scram_lookup = lookup,
                            .scram_arg = &cs,
                            .scram_test_nonce = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"};
    char why[256];
    REQUIRE(sasl_config_set_mechanisms(&c, "SCRAM-SHA-256", why, sizeof why) == 0);
    struct sasl_session s;
    sasl_session_init(&s, &c);
    REQUIRE(sasl_handshake(&s, "SCRAM-SHA-256") == 0);
    REQUIRE(step_str(&s, "n,,n=user,r=rOprNGfwEbeRWgbNEkqO") == 0);
    CHECK_EQ_INT(s.state, SASL_WAIT_FINAL);
    char got[160];
    snprintf(got, sizeof got, "%.*s", (int)s.reply_len, (char *)s.reply);
    CHECK_EQ_STR(got, "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                      "s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096");
    REQUIRE(step_str(&s, "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                         "p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=") == 0);
    CHECK_EQ_INT(s.state, SASL_AUTHENTICATED);
    snprintf(got, sizeof got, "%.*s", (int)s.reply_len, (char *)s.reply);
    CHECK_EQ_STR(got, "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=");
    CHECK_EQ_STR(s.user, "user");
    sasl_session_free(&s);

    /* librdkafka 2.0 repeats its nonce in front of the full one (Kafka accepts a nonce that
     * ends with the server's): the proof is over the message as sent. */
    {
        struct cred_store cs2 = cs;
        struct sasl_config c2 = c;
        c2.scram_arg = &cs2;
        bool ok = false;
        CHECK_EQ_INT(
            scram_client_run_nonce(&c2, SASL_MECH_SCRAM_SHA_256, "user", "pencil", true, &ok), 0);
        CHECK(ok);
    }

    /* The same exchange with one bit of the proof flipped, a changed nonce, another channel
     * binding, and an unknown user (who still gets a server-first). */
    static const char *const finals[] = {
        "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
        "p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVU=",
        "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k1,"
        "p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
        "c=eSws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
        "p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
        "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0",
    };
    for (size_t i = 0; i < sizeof finals / sizeof finals[0]; i++) {
        sasl_session_init(&s, &c);
        REQUIRE(sasl_handshake(&s, "SCRAM-SHA-256") == 0);
        REQUIRE(step_str(&s, "n,,n=user,r=rOprNGfwEbeRWgbNEkqO") == 0);
        CHECK_EQ_INT(step_str(&s, finals[i]), ERR_SASL_AUTHENTICATION_FAILED);
        CHECK_EQ_INT(s.state, SASL_FAILED);
        sasl_session_free(&s);
    }
    sasl_session_init(&s, &c);
    REQUIRE(sasl_handshake(&s, "SCRAM-SHA-256") == 0);
    REQUIRE(step_str(&s, "n,,n=nobody,r=rOprNGfwEbeRWgbNEkqO") == 0);
    CHECK_EQ_INT(s.state, SASL_WAIT_FINAL);
    CHECK_EQ_INT(step_str(&s, finals[0]), ERR_SASL_AUTHENTICATION_FAILED);
    sasl_session_free(&s);
    /* Malformed client-first messages. */
    static const char *const firsts[] = {
        "y,,n=user,r=abc",        "n,,r=abc",     "n,,n=user", "n,,n=us=er,r=abc",
        "n,a=other,n=user,r=abc", "n,,n=user,r=",
    };
    for (size_t i = 0; i < sizeof firsts / sizeof firsts[0]; i++) {
        sasl_session_init(&s, &c);
        REQUIRE(sasl_handshake(&s, "SCRAM-SHA-256") == 0);
        CHECK_EQ_INT(step_str(&s, firsts[i]), ERR_SASL_AUTHENTICATION_FAILED);
        sasl_session_free(&s);
    }
}

/* A client side written from RFC 5802 against the server, for SHA-512 (no published vector):
 * the right password authenticates and the server's signature verifies, a wrong one fails. */
static int scram_client_run(const struct sasl_config *c, enum sasl_mech m, const char *user,
                            const char *password, bool *server_ok)
{
    return scram_client_run_nonce(c, m, user, password, false, server_ok);
}

#include <openssl/evp.h>
#include <openssl/hmac.h>

static int scram_client_run_nonce(const struct sasl_config *c, enum sasl_mech m, const char *user,
                                  const char *password, bool doubled, bool *server_ok)
{
    const EVP_MD *md = m == SASL_MECH_SCRAM_SHA_256 ? EVP_sha256() : EVP_sha512();
    size_t h = sasl_scram_hash_len(m);
    struct sasl_session s;
    char first[256], final_np[512], final[700], auth[1400];
    uint8_t salt[64], salted[64], ck[64], sk[64], stored[64], sig[64], proof[64];
    unsigned ol;
    int rc;

    sasl_session_init(&s, c);
    if ((rc = sasl_handshake(&s, sasl_mech_name(m))) != 0)
        return rc;
    snprintf(first, sizeof first, "n,,n=%s,r=clientnonce", user);
    if ((rc = step_str(&s, first)) != 0)
        goto out;
    char sf[512];
    memcpy(sf, s.reply, s.reply_len);
    sf[s.reply_len] = '\0';
    char *r = strstr(sf, "r="), *sp = strstr(sf, ",s="), *ip = strstr(sf, ",i=");
    if (!r || !sp || !ip)
        return -1;
    char nonce[256], salt64[128];
    snprintf(nonce, sizeof nonce, "%.*s", (int)(sp - r - 2), r + 2);
    snprintf(salt64, sizeof salt64, "%.*s", (int)(ip - sp - 3), sp + 3);
    int iters = atoi(ip + 3);
    int sl = b64d(salt64, salt);
    PKCS5_PBKDF2_HMAC(password, (int)strlen(password), salt, sl, iters, md, (int)h, salted);
    HMAC(md, salted, (int)h, (const uint8_t *)"Client Key", 10, ck, &ol);
    HMAC(md, salted, (int)h, (const uint8_t *)"Server Key", 10, sk, &ol);
    EVP_Digest(ck, h, stored, NULL, md, NULL);
    snprintf(final_np, sizeof final_np, "c=biws,r=%s%s", doubled ? "clientnonce" : "", nonce);
    snprintf(auth, sizeof auth, "%s,%s,%s", first + 3, sf, final_np);
    HMAC(md, stored, (int)h, (const uint8_t *)auth, strlen(auth), sig, &ol);
    for (size_t i = 0; i < h; i++)
        proof[i] = ck[i] ^ sig[i];
    char p64[100];
    EVP_EncodeBlock((unsigned char *)p64, proof, (int)h);
    snprintf(final, sizeof final, "%s,p=%s", final_np, p64);
    if ((rc = step_str(&s, final)) != 0)
        goto out;
    HMAC(md, sk, (int)h, (const uint8_t *)auth, strlen(auth), sig, &ol);
    char v64[100] = "v=";
    EVP_EncodeBlock((unsigned char *)v64 + 2, sig, (int)h);
    *server_ok = s.reply_len == strlen(v64) && memcmp(s.reply, v64, s.reply_len) == 0;
out:
    sasl_session_free(&s);
    return rc;
}

TEST(sasl_scram_sha512_round_trip)
{
    struct cred_store cs = {SASL_MECH_SCRAM_SHA_512, "alice", {0}};
    uint8_t salt[16];
    REQUIRE(sasl_random(salt, sizeof salt) == 0);
    REQUIRE(sasl_scram_derive(SASL_MECH_SCRAM_SHA_512, (const uint8_t *)"alice-secret", 12, salt,
                              sizeof salt, 4096, &cs.cred) == 0);
    struct sasl_config c = {.scram_lookup = lookup, .scram_arg = &cs};
    char why[256];
    REQUIRE(sasl_config_set_mechanisms(&c, "SCRAM-SHA-512,SCRAM-SHA-256", why, sizeof why) == 0);
    bool ok = false;
    CHECK_EQ_INT(scram_client_run(&c, SASL_MECH_SCRAM_SHA_512, "alice", "alice-secret", &ok), 0);
    CHECK(ok);
    CHECK_EQ_INT(scram_client_run(&c, SASL_MECH_SCRAM_SHA_512, "alice", "alice-secreT", &ok),
                 ERR_SASL_AUTHENTICATION_FAILED);
    /* The credential is SHA-512's: SHA-256 with the same password finds no user. */
    CHECK_EQ_INT(scram_client_run(&c, SASL_MECH_SCRAM_SHA_256, "alice", "alice-secret", &ok),
                 ERR_SASL_AUTHENTICATION_FAILED);
}

TEST(sasl_jaas_login_reads_the_brokers_own_login)
{
    char user[SASL_MAX_NAME + 1], pass[SASL_MAX_NAME + 1], why[256];
    const char *jaas = "org.apache.kafka.common.security.plain.PlainLoginModule required "
                       "username=\"admin\" password=\"a\\\"b\" user_admin=\"a\\\"b\";";
    CHECK_EQ_INT(sasl_jaas_login(SASL_MECH_PLAIN, jaas, user, sizeof user, pass, sizeof pass, why,
                                 sizeof why),
                 0);
    CHECK_EQ_STR(user, "admin");
    CHECK_EQ_STR(pass, "a\"b");
    /* No login of its own (only users it accepts): refused, naming what is missing. */
    CHECK_EQ_INT(sasl_jaas_login(SASL_MECH_PLAIN,
                                 "org.apache.kafka.common.security.plain.PlainLoginModule "
                                 "required user_a=\"x\";",
                                 user, sizeof user, pass, sizeof pass, why, sizeof why),
                 -1);
    CHECK(strstr(why, "username") != NULL);
    CHECK_EQ_INT(sasl_jaas_login(SASL_MECH_PLAIN, NULL, user, sizeof user, pass, sizeof pass, why,
                                 sizeof why),
                 -1);
    CHECK_EQ_INT(sasl_jaas_login(SASL_MECH_PLAIN,
                                 "org.apache.kafka.common.security.plain.PlainLoginModule "
                                 "required username=\"a\" password=\"unterminated;",
                                 user, sizeof user, pass, sizeof pass, why, sizeof why),
                 -1);
    CHECK(strstr(why, "the value of password") != NULL);
}

/* ---- the client side (sasl_scram_client_*, the inter-broker client's) --------------------- */

/* RFC 7677 §3 from the client's side: the client-first and client-final messages byte for
 * byte, and the server-final's signature verifies (a flipped bit of it does not). */
TEST(sasl_scram_client_rfc7677_vector)
{
    struct sasl_scram_client c;
    char out[200];
    static const char sf[] = "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                             "s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
    static const char sv[] = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=";
    int n = sasl_scram_client_first(&c, SASL_MECH_SCRAM_SHA_256, "user", "rOprNGfwEbeRWgbNEkqO",
                                    out, sizeof out);
    REQUIRE(n > 0);
    CHECK_EQ_STR(out, "n,,n=user,r=rOprNGfwEbeRWgbNEkqO");
    n = sasl_scram_client_final(&c, "pencil", (const uint8_t *)sf, strlen(sf), out, sizeof out);
    REQUIRE(n > 0);
    CHECK_EQ_INT(n, (int)strlen(out));
    CHECK_EQ_STR(out, "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                      "p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=");
    struct sasl_scram_client c2 = c;
    CHECK_EQ_INT(sasl_scram_client_verify(&c, (const uint8_t *)sv, strlen(sv)), 0);
    char bad[sizeof sv];
    memcpy(bad, sv, sizeof sv);
    bad[10] ^= 1;
    CHECK_EQ_INT(sasl_scram_client_verify(&c2, (const uint8_t *)bad, strlen(bad)), -1);
}

/* The client against the server side, SHA-512 and SHA-256: the right password authenticates
 * and the server's signature verifies; a wrong one is refused by the server. */
static int client_vs_server(enum sasl_mech m, const char *password, bool *verified)
{
    struct cred_store cs = {m, "bro=ker,1", {0}};
    uint8_t salt[16];
    if (!(sasl_random(salt, sizeof salt) == 0))
        return -2;
    if (!(sasl_scram_derive(m, (const uint8_t *)"broker-secret", 13, salt, sizeof salt, 8192,
                            &cs.cred) == 0))
        return -2;
    struct sasl_config cfg = {.scram_lookup = lookup, .scram_arg = &cs};
    char why[256], out[700];
    if (!(sasl_config_set_mechanisms(&cfg, "SCRAM-SHA-256,SCRAM-SHA-512", why, sizeof why) == 0))
        return -2;
    struct sasl_session s;
    struct sasl_scram_client c;
    sasl_session_init(&s, &cfg);
    if (!(sasl_handshake(&s, sasl_mech_name(m)) == 0))
        return -2;
    int n = sasl_scram_client_first(&c, m, cs.user, NULL, out, sizeof out);
    if (!(n > 0))
        return -2;
    int rc = step_str(&s, out);
    if (rc == 0) {
        n = sasl_scram_client_final(&c, password, s.reply, s.reply_len, out, sizeof out);
        if (!(n > 0))
            return -2;
        rc = step_str(&s, out);
    }
    if (rc == 0)
        *verified = sasl_scram_client_verify(&c, s.reply, s.reply_len) == 0;
    if (rc == 0)
        CHECK_EQ_STR(s.user, "bro=ker,1"); /* the escaped name came through whole */
    sasl_session_free(&s);
    return rc;
}

TEST(sasl_scram_client_against_the_server)
{
    bool ok = false;
    CHECK_EQ_INT(client_vs_server(SASL_MECH_SCRAM_SHA_512, "broker-secret", &ok), 0);
    CHECK(ok);
    ok = false;
    CHECK_EQ_INT(client_vs_server(SASL_MECH_SCRAM_SHA_256, "broker-secret", &ok), 0);
    CHECK(ok);
    CHECK_EQ_INT(client_vs_server(SASL_MECH_SCRAM_SHA_512, "broker-secreT", &ok),
                 ERR_SASL_AUTHENTICATION_FAILED);
}

/* A server-first the client must not answer: another nonce, one that adds nothing to the
 * client's, iterations beyond Kafka's bounds, a bad salt, no iterations; and a server-final
 * that is an error. */
TEST(sasl_scram_client_refuses_a_bad_server)
{
    static const char *const firsts[] = {
        "r=XOprNGfwEbeRWgbNEkqOsrv,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
        "r=rOprNGfwEbeRWgbNEkqO,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
        "r=rOprNGfwEbeRWgbNEkqOsrv,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=100000000",
        "r=rOprNGfwEbeRWgbNEkqOsrv,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=1",
        "r=rOprNGfwEbeRWgbNEkqOsrv,s=W22ZaJ0SNY7soEsUEjb6gQ=,i=4096",
        "r=rOprNGfwEbeRWgbNEkqOsrv,s=W22ZaJ0SNY7soEsUEjb6gQ==",
        "m=ext,r=rOprNGfwEbeRWgbNEkqOsrv,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
        "",
    };
    struct sasl_scram_client c;
    char out[512];
    for (size_t i = 0; i < sizeof firsts / sizeof firsts[0]; i++) {
        REQUIRE(sasl_scram_client_first(&c, SASL_MECH_SCRAM_SHA_256, "user", "rOprNGfwEbeRWgbNEkqO",
                                        out, sizeof out) > 0);
        CHECK_EQ_INT(sasl_scram_client_final(&c, "pencil", (const uint8_t *)firsts[i],
                                             strlen(firsts[i]), out, sizeof out),
                     -1);
    }
    REQUIRE(sasl_scram_client_first(&c, SASL_MECH_SCRAM_SHA_256, "user", "rOprNGfwEbeRWgbNEkqO",
                                    out, sizeof out) > 0);
    CHECK_EQ_INT(sasl_scram_client_verify(&c, (const uint8_t *)"e=invalid-proof", 15), -1);
    CHECK_EQ_INT(sasl_scram_client_first(&c, SASL_MECH_PLAIN, "user", NULL, out, sizeof out), -1);
    CHECK_EQ_INT(sasl_scram_client_first(&c, SASL_MECH_SCRAM_SHA_256, "", NULL, out, sizeof out),
                 -1);
}
