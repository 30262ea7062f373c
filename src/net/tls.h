/* SPDX-License-Identifier: Apache-2.0 */
/* tls: TLS on OpenSSL 3 memory BIOs, with no socket of its own. A connection's ciphertext
 * is fed in and taken out by its owner (net.c drives it from the libuv loop); plaintext is
 * read and queued here. Contexts are built from Kafka's ssl.* settings, and client
 * certificate subjects become principals through ssl.principal.mapping.rules.
 *
 * The per-connection functions serve both ends: the listener's accepted connections and, in
 * a later slice, the outbound client (src/net/client.c). */
#ifndef TALLY_NET_TLS_H
#define TALLY_NET_TLS_H

#include <stdbool.h>
#include <stddef.h>

struct tls_ctx;
struct tls_conn;

enum tls_client_auth { TLS_AUTH_NONE, TLS_AUTH_REQUESTED, TLS_AUTH_REQUIRED };

/* One side's settings, as Kafka names them (ssl.<name>); every string is borrowed during
 * tls_ctx_new only. NULL or "" means unset. */
struct tls_config {
    bool client;               /* a connecting side (else accepting) */
    const char *keystore_type; /* "PEM" or "PKCS12"; unset: PEM if the file starts "-----" */
    const char *keystore_location, *keystore_password, *key_password;
    const char *keystore_chain, *keystore_key; /* inline PEM */
    const char *truststore_type;               /* "PEM" or "PKCS12"; unset: as above */
    const char *truststore_location, *truststore_password;
    const char *truststore_certs; /* inline PEM */
    enum tls_client_auth client_auth;
    const char *enabled_protocols; /* "TLSv1.2,TLSv1.3" when unset */
    const char *cipher_suites;     /* IANA or OpenSSL names; unset: OpenSSL's defaults */
    const char *principal_rules;   /* ssl.principal.mapping.rules; unset: "DEFAULT" */
};

/* Builds a context. Returns 0 and *out, or -1 with a sentence in why naming the ssl.* key at
 * fault (never a password). An accepting side needs a keystore; client_auth other than none
 * needs a truststore. JKS stores are refused (there is no Java here). */
int tls_ctx_new(const struct tls_config *cfg, struct tls_ctx **out, char *why, size_t why_len);
/* Drops the caller's reference: each connection holds one of its own, so a context replaced
 * (keystore rotation) lives on until its last connection is freed. NULL: nothing. */
void tls_ctx_free(struct tls_ctx *ctx);

/* Maps a certificate subject in RFC 2253 form ("CN=alice,OU=eng,O=Tally") through the
 * context's rules into "User:<name>" (out, NUL-terminated). Returns 0, or -1 when no rule
 * applies (Kafka then refuses the connection). */
int tls_ctx_map_principal(const struct tls_ctx *ctx, const char *dn, char *out, size_t out_len);

/* Only the rules, for checking ssl.principal.mapping.rules alone: 0, or -1 and why. */
int tls_rules_check(const char *rules, char *why, size_t why_len);

/* A connection on `ctx` (referenced until tls_conn_free), ready for its first bytes: an accepting
 * side waits for the ClientHello, a connecting side has its ClientHello waiting in tls_conn_take.
 * NULL when out of memory. */
struct tls_conn *tls_conn_new(struct tls_ctx *ctx);
void tls_conn_free(struct tls_conn *t);

/* A connecting side: the peer's certificate must also name `host` — an IP address matched
 * against its IP subjectAltNames, else a DNS name (subjectAltName, or the CN without one),
 * as Kafka's ssl.endpoint.identification.algorithm=https checks it. Call before feeding
 * the peer's first bytes; a mismatch then fails the handshake ("certificate verify failed:
 * IP address mismatch"). Returns 0, or -1 (out of memory, or host empty). */
int tls_conn_verify_host(struct tls_conn *t, const char *host);

/* Feeds ciphertext received from the peer (n may be 0) and advances the handshake. Returns
 * 0, or -1 once the peer sent something that is not TLS, failed verification or sent an
 * alert: the connection is dead, tls_conn_error says why (the output may hold an alert
 * worth sending first). */
int tls_conn_feed(struct tls_conn *t, const void *p, size_t n);

/* Whether the handshake has completed (the peer is verified as configured). */
bool tls_conn_established(const struct tls_conn *t);

/* Plaintext the peer sent: up to cap bytes into buf. Returns the bytes (> 0), 0 when nothing
 * is available until more ciphertext is fed, or -1 on an error or the peer's close_notify. */
long tls_conn_read(struct tls_conn *t, void *buf, size_t cap);

/* Queues plaintext for the peer (encrypted at once into the output; copied). Only once
 * established. Returns 0 or -1 (out of memory, or the connection is dead). */
int tls_conn_write(struct tls_conn *t, const void *p, size_t n);

/* Ciphertext waiting to be sent to the peer: its size, and a take of up to cap bytes into
 * buf (returns the bytes taken). */
size_t tls_conn_pending(const struct tls_conn *t);
size_t tls_conn_take(struct tls_conn *t, void *buf, size_t cap);

/* The peer's principal once established: "User:<mapped subject>" when it presented a
 * certificate (verified), else "User:ANONYMOUS". Returns 0, or -1 when no mapping rule
 * applies to the subject (out then holds the subject, for the log line). */
int tls_conn_principal(const struct tls_conn *t, char *out, size_t out_len);

/* Whether the peer's first byte was no TLS handshake record (a plaintext client). */
bool tls_conn_plaintext(const struct tls_conn *t);

/* A short reason for the last failure ("certificate verify failed: certificate has
 * expired", "wrong version number"); "" when none, and after the peer's close_notify (an
 * orderly end). Valid until the next call on t. */
const char *tls_conn_error(const struct tls_conn *t);

#endif
