/* SPDX-License-Identifier: Apache-2.0 */
/* sasl: the server side of SASL authentication as pure functions — the mechanisms a listener
 * enables, PLAIN users from Kafka's JAAS syntax, and one connection's exchange as a state
 * machine (a token in, a reply token and an outcome out). No sockets, no clock, no logging:
 * the caller (tallyd's dispatcher) frames the tokens (SaslHandshake / SaslAuthenticate),
 * delays the close of a failed connection and logs. */
#ifndef TALLY_SASL_H
#define TALLY_SASL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The mechanisms Tally knows by name. GSSAPI and OAUTHBEARER are Kafka's too, but Tally
 * serves neither: naming them in sasl.enabled.mechanisms is a configuration error. */
enum sasl_mech {
    SASL_MECH_NONE = 0,
    SASL_MECH_PLAIN,
    SASL_MECH_SCRAM_SHA_256,
    SASL_MECH_SCRAM_SHA_512,
};

#define SASL_MAX_MECHS 3
/* Longest user name or password accepted (bytes); longer ones fail authentication. */
#define SASL_MAX_NAME 255
/* Longest token accepted from a client in one step (bytes). */
#define SASL_MAX_TOKEN 8192

/* "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512". */
const char *sasl_mech_name(enum sasl_mech m);
/* The mechanism named `name` (case-sensitive, as Kafka), or SASL_MECH_NONE. */
enum sasl_mech sasl_mech_from_name(const char *name);

struct sasl_user {
    char *name;
    char *password;
};

/* A SCRAM credential (RFC 5802 §3): what the server keeps instead of the password. */
#define SASL_SCRAM_MAX_KEY 64 /* SHA-512 */
#define SASL_SCRAM_MAX_SALT 64
struct sasl_scram_cred {
    int32_t iterations;
    size_t salt_len;
    uint8_t salt[SASL_SCRAM_MAX_SALT];
    uint8_t stored_key[SASL_SCRAM_MAX_KEY]; /* H(ClientKey); length = the hash's */
    uint8_t server_key[SASL_SCRAM_MAX_KEY];
};

/* Finds user `name`'s credential for SCRAM mechanism `m`: 0 and *out, or non-zero when the
 * user has none. */
typedef int (*sasl_scram_lookup_fn)(void *arg, enum sasl_mech m, const char *name,
                                    struct sasl_scram_cred *out);

/* One listener's SASL configuration. Owned by whoever filled it; sasl_config_free releases
 * what sasl_config_set_mechanisms and sasl_config_add_jaas allocated. */
struct sasl_config {
    size_t n_mechs;
    enum sasl_mech mechs[SASL_MAX_MECHS]; /* enabled, in configuration order, no repeats */
    size_t n_users;
    struct sasl_user *users;           /* PLAIN users (the JAAS config's user_<name> entries) */
    sasl_scram_lookup_fn scram_lookup; /* NULL: no SCRAM user exists */
    void *scram_arg;
    /* Tests only (RFC 7677's vector): the server's part of the SCRAM nonce. NULL: 24 random
     * bytes, base64. */
    const char *scram_test_nonce;
    /* KIP-368: connections.max.reauth.ms of each mechanism (indexed by enum sasl_mech), as
     * listener.name.<l>.<mechanism>.connections.max.reauth.ms, listener.name.<l>.connections.
     * max.reauth.ms and connections.max.reauth.ms give it: the longest a session authenticated
     * with it lasts before the client must re-authenticate. 0 or less: no limit. */
    int64_t max_reauth_ms[SASL_MECH_SCRAM_SHA_512 + 1];
};

/* Sets the enabled mechanisms from a comma-separated list (sasl.enabled.mechanisms). Returns 0,
 * or -1 with a reason in why: an empty list, an unknown name, GSSAPI or OAUTHBEARER (not
 * supported), a repeat. */
int sasl_config_set_mechanisms(struct sasl_config *c, const char *list, char *why, size_t whylen);

/* Parses a JAAS config for mechanism `m` (listener.name.<l>.<mech>.sasl.jaas.config), strictly:
 * exactly one login module, of the mechanism's class (PlainLoginModule for PLAIN,
 * ScramLoginModule for SCRAM), a control flag (required, requisite, sufficient, optional),
 * options key=value with the value quoted ("..." with \" and \\ escapes) or a bare word, and
 * a final ';'. For PLAIN each user_<name>="<password>" option adds a user; username and
 * password (the broker's own client login) are accepted and unused. Returns 0, or -1 with a
 * reason in why (which never contains a password); on failure `c` keeps what it had. */
int sasl_config_add_jaas(struct sasl_config *c, enum sasl_mech m, const char *jaas, char *why,
                         size_t whylen);

/* The broker's own client login of a JAAS config for mechanism `m`: its username and
 * password options (the inter-broker client authenticates with them), as
 * sasl_config_add_jaas reads the syntax. Returns 0 with both filled (NUL-terminated), or -1
 * with a reason in why (bad syntax, either option missing); never a password in why. */
int sasl_jaas_login(enum sasl_mech m, const char *jaas, char *user, size_t user_cap, char *pass,
                    size_t pass_cap, char *why, size_t whylen);

/* Whether mechanism m is enabled in c. */
bool sasl_config_enabled(const struct sasl_config *c, enum sasl_mech m);

void sasl_config_free(struct sasl_config *c);

/* One connection's exchange. */
enum sasl_state {
    SASL_WAIT_HANDSHAKE, /* nothing yet, or a handshake refused */
    SASL_WAIT_TOKEN,     /* handshake accepted: the mechanism's first client token */
    SASL_WAIT_FINAL,     /* SCRAM: server-first sent, waiting for client-final */
    SASL_AUTHENTICATED,
    SASL_FAILED, /* terminal: the connection must close */
    /* Re-authentication named an enabled mechanism other than the session's: the handshake
     * is answered as accepted (as Kafka does) and the next token fails. */
    SASL_REAUTH_BAD_MECH,
};

/* Why a re-authentication failed, beyond a bad token (for the caller's log line). */
enum sasl_refusal {
    SASL_REFUSED_NONE,
    SASL_REFUSED_MECHANISM_CHANGE, /* another mechanism than the session's */
    SASL_REFUSED_PRINCIPAL_CHANGE, /* valid credentials of another user */
};

struct sasl_scram_state; /* scram.c */

struct sasl_session {
    const struct sasl_config *cfg; /* borrowed; must outlive the session */
    enum sasl_state state;
    enum sasl_mech mech;
    /* The user name the client gave (for the failure log line), and once authenticated the
     * one authenticated: the principal is "User:" followed by it. */
    char user[SASL_MAX_NAME + 1];
    /* The reply token of the last step (empty for PLAIN; SCRAM's server-first and
     * server-final). */
    uint8_t reply[512];
    size_t reply_len;
    struct sasl_scram_state *scram; /* SCRAM between its two steps */
    /* KIP-368, set by sasl_reauth_begin: the exchange under way re-authenticates a session
     * that was authenticated with reauth_mech as reauth_user, and must end with both
     * unchanged. */
    bool reauth;
    enum sasl_mech reauth_mech;
    char reauth_user[SASL_MAX_NAME + 1];
    enum sasl_refusal refusal; /* set when a re-authentication fails for one of its reasons */
};

/* Starts a session on listener configuration `cfg`. */
void sasl_session_init(struct sasl_session *s, const struct sasl_config *cfg);
/* Releases what a session holds (a SCRAM exchange cut short). */
void sasl_session_free(struct sasl_session *s);

/* SaslHandshake: the client picks `mechanism`. Returns 0 (state SASL_WAIT_TOKEN, or
 * SASL_REAUTH_BAD_MECH when re-authenticating with another mechanism: see sasl_reauth_begin),
 * ERR_UNSUPPORTED_SASL_MECHANISM (unknown or not enabled here) or ERR_ILLEGAL_SASL_STATE (not
 * at SASL_WAIT_HANDSHAKE). Either error moves the session to SASL_FAILED. */
int sasl_handshake(struct sasl_session *s, const char *mechanism);

/* One client token (SaslAuthenticate's AuthBytes, or a raw frame after a v0 handshake).
 * Returns 0 with the reply in s->reply (the session is then SASL_AUTHENTICATED, or
 * SASL_WAIT_FINAL for another step), ERR_ILLEGAL_SASL_STATE (no handshake yet, or after the
 * end) or ERR_SASL_AUTHENTICATION_FAILED (bad token, unknown user, wrong password: the caller
 * must not tell the client which; or, re-authenticating, a changed mechanism or principal:
 * s->refusal says which). Either error moves the session to SASL_FAILED. */
int sasl_step(struct sasl_session *s, const uint8_t *token, size_t len);

/* ---- KIP-368 re-authentication ------------------------------------------------------- */

/* A credential without an expiry of its own (every credential Tally serves today: PLAIN users
 * of the JAAS config, SCRAM credentials; delegation tokens would have one). */
#define SASL_NO_EXPIRY INT64_MIN

/* The lifetime of a session that has just authenticated, as Kafka's SaslServerAuthenticator
 * computes it: max_reauth_ms (connections.max.reauth.ms; 0 or less: none), capped by
 * credential_left_ms (how long the credential stays valid; SASL_NO_EXPIRY: forever), never
 * negative. Returns -1 when the session never expires (neither limit applies); otherwise the
 * lifetime in ms (0: a credential already expired, so the session is over at once), which is
 * what SaslAuthenticate v1+ answers in SessionLifetimeMs (-1 answers 0). */
int64_t sasl_session_lifetime_ms(int64_t max_reauth_ms, int64_t credential_left_ms);

/* Starts re-authenticating an authenticated session (a SaslHandshake on its connection):
 * remembers its mechanism and user and goes back to SASL_WAIT_HANDSHAKE. From then on
 * sasl_handshake accepts an enabled mechanism other than the session's but moves to
 * SASL_REAUTH_BAD_MECH, whose next sasl_step fails (refusal SASL_REFUSED_MECHANISM_CHANGE);
 * and an exchange that ends with valid credentials of another user fails
 * (SASL_REFUSED_PRINCIPAL_CHANGE) instead of authenticating. Returns 0, or
 * ERR_ILLEGAL_SASL_STATE (the session is not SASL_AUTHENTICATED; nothing changes). */
int sasl_reauth_begin(struct sasl_session *s);

/* Compares a[0..n) with b[0..n) in time that depends on n only. */
bool sasl_equal_ct(const uint8_t *a, const uint8_t *b, size_t n);

/* ---- SCRAM (scram.c, OpenSSL) -------------------------------------------------------- */

/* The digest length of a SCRAM mechanism: 32 or 64. */
size_t sasl_scram_hash_len(enum sasl_mech m);

/* Derives the credential of `password` with `salt` and `iterations` (RFC 5802: SaltedPassword
 * = Hi(password, salt, i), StoredKey = H(HMAC(SaltedPassword, "Client Key")), ServerKey =
 * HMAC(SaltedPassword, "Server Key")). Returns 0 or -1 (bad arguments, OpenSSL failure). */
int sasl_scram_derive(enum sasl_mech m, const uint8_t *password, size_t password_len,
                      const uint8_t *salt, size_t salt_len, int32_t iterations,
                      struct sasl_scram_cred *out);

/* The credential's keys from a salted password (SaltedPassword = Hi(password, salt, i), what
 * AlterUserScramCredentials carries): StoredKey = H(HMAC(SaltedPassword, "Client Key")),
 * ServerKey = HMAC(SaltedPassword, "Server Key"), each sasl_scram_hash_len(m) bytes. 0 or
 * -1 (salted_len is not the hash's length, OpenSSL failure). */
int sasl_scram_keys(enum sasl_mech m, const uint8_t *salted, size_t salted_len, uint8_t *stored_key,
                    uint8_t *server_key);

/* SaltedPassword = Hi(password, salt, iterations) (RFC 5802 §3), sasl_scram_hash_len(m) bytes
 * into out: what AlterUserScramCredentials carries and the client side derives its proof from.
 * 0 or -1 (not a SCRAM mechanism, iterations < 1, a salt of 0 or more than
 * SASL_SCRAM_MAX_SALT bytes, OpenSSL failure). */
int sasl_scram_salted_password(enum sasl_mech m, const uint8_t *password, size_t password_len,
                               const uint8_t *salt, size_t salt_len, int32_t iterations,
                               uint8_t *out);

/* Kafka's bounds on a SCRAM credential's iteration count (its ScramMechanism's). */
#define SASL_SCRAM_MIN_ITERATIONS 4096
#define SASL_SCRAM_MAX_ITERATIONS 16384

/* The client side of one SCRAM exchange (RFC 5802, no channel binding, as Kafka's client):
 * client-first, then client-final from the server-first, then the check of the server-final's
 * signature. Filled by sasl_scram_client_first; holds no password. */
struct sasl_scram_client {
    enum sasl_mech mech;
    char nonce[64];                          /* the client nonce */
    char first_bare[SASL_MAX_NAME * 3 + 72]; /* "n=" saslname ",r=" nonce */
    uint8_t server_sig[SASL_SCRAM_MAX_KEY];  /* the ServerSignature expected */
};

/* Starts an exchange for `user` with SCRAM mechanism m: the client-first message
 * ("n,,n=<user>,r=<nonce>", the name escaped) into out[0..cap). test_nonce: the client nonce
 * (tests only, RFC 7677's vector), else 24 random bytes, base64. Returns its length, or -1
 * (not a SCRAM mechanism, an empty or too long name, no room). */
int sasl_scram_client_first(struct sasl_scram_client *c, enum sasl_mech m, const char *user,
                            const char *test_nonce, char *out, size_t cap);

/* The client-final message ("c=biws,r=<nonce>,p=<proof>") answering server_first[0..len),
 * into out[0..cap), and keeps the ServerSignature to expect. Returns its length, or -1: a
 * malformed server-first, a nonce that does not start with the client's or adds nothing to it,
 * iterations outside [SASL_SCRAM_MIN_ITERATIONS, SASL_SCRAM_MAX_ITERATIONS], no room. Runs
 * PBKDF2 (Hi) for the server's iteration count. */
int sasl_scram_client_final(struct sasl_scram_client *c, const char *password,
                            const uint8_t *server_first, size_t len, char *out, size_t cap);

/* Checks the server-final message ("v=<ServerSignature>"): 0 when the server proved it knows
 * the credential, -1 otherwise (also for "e=..."). Wipes c either way. */
int sasl_scram_client_verify(struct sasl_scram_client *c, const uint8_t *server_final, size_t len);

/* Fills buf with n random bytes from OpenSSL's RAND_bytes. 0 or -1. */
int sasl_random(uint8_t *buf, size_t n);

/* scram.c's steps, called by sasl_step. */
int sasl_scram_first(struct sasl_session *s, const uint8_t *token, size_t len);
int sasl_scram_final(struct sasl_session *s, const uint8_t *token, size_t len);

#endif
