/* SPDX-License-Identifier: Apache-2.0 */
/* TLS for the wire client of the `tally` commands (tally_wire_connect), with OpenSSL 3 on the
 * blocking socket and librdkafka's settings (tally.h: struct tally_ctx): TLS 1.2 or 1.3; the
 * broker's certificate verified against ssl.ca.location (else the system's CAs) unless
 * enable.ssl.certificate.verification=false; its host name (DNS or IP subjectAltName) checked
 * against the address connected to unless ssl.endpoint.identification.algorithm=none (https is
 * librdkafka's default since 2.0); a client certificate and key (PEM) for mutual TLS. */
#include "tally.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

struct tally_tls {
    SSL_CTX *ctx;
    SSL *ssl;
};

/* OpenSSL's first queued error as text ("" when none), the queue cleared. */
static const char *ssl_reason(char *buf, size_t cap)
{
    unsigned long e = ERR_get_error();
    buf[0] = '\0';
    if (e != 0)
        ERR_error_string_n(e, buf, cap);
    ERR_clear_error();
    return buf;
}

/* The PEM pass phrase of ssl.key.password (userdata), for an encrypted ssl.key.location. */
static int key_password(char *buf, int size, int rwflag, void *userdata)
{
    (void)rwflag;
    const char *pw = userdata;
    size_t n = pw ? strlen(pw) : 0;
    if (n > (size_t)size)
        return -1;
    memcpy(buf, pw, n);
    return (int)n;
}

static bool is_false(const char *v)
{
    return v != NULL && strcmp(v, "false") == 0;
}

/* The client context of ctx's settings, or NULL after printing why. */
static SSL_CTX *client_ctx(const struct tally_ctx *ctx, const char *what)
{
    char err[256];
    SSL_CTX *c = SSL_CTX_new(TLS_client_method());
    if (c == NULL) {
        tally_fail("%s: cannot set up TLS: %s", what, ssl_reason(err, sizeof err));
        return NULL;
    }
    SSL_CTX_set_min_proto_version(c, TLS1_2_VERSION);
    /* A broker that closes without close_notify (as after a refused login) reads as a plain
     * EOF, so the caller says "connection closed" once; a truncated frame is still caught by
     * the Kafka framing's size prefix. */
    SSL_CTX_set_options(c, SSL_OP_IGNORE_UNEXPECTED_EOF);
    if (ctx->ssl_ca_location != NULL) {
        if (SSL_CTX_load_verify_locations(c, ctx->ssl_ca_location, NULL) != 1) {
            tally_fail("ssl.ca.location %s: cannot load the CA certificates: %s",
                       ctx->ssl_ca_location, ssl_reason(err, sizeof err));
            goto fail;
        }
    } else if (SSL_CTX_set_default_verify_paths(c) != 1) {
        tally_fail("cannot load the system's CA certificates: %s", ssl_reason(err, sizeof err));
        goto fail;
    }
    SSL_CTX_set_verify(
        c, is_false(ctx->enable_ssl_certificate_verification) ? SSL_VERIFY_NONE : SSL_VERIFY_PEER,
        NULL);
    if ((ctx->ssl_certificate_location == NULL) != (ctx->ssl_key_location == NULL)) {
        tally_fail("mutual TLS needs both ssl.certificate.location and ssl.key.location");
        goto fail;
    }
    if (ctx->ssl_certificate_location != NULL) {
        SSL_CTX_set_default_passwd_cb(c, key_password);
        SSL_CTX_set_default_passwd_cb_userdata(c, (void *)ctx->ssl_key_password);
        if (SSL_CTX_use_certificate_chain_file(c, ctx->ssl_certificate_location) != 1) {
            tally_fail("ssl.certificate.location %s: %s", ctx->ssl_certificate_location,
                       ssl_reason(err, sizeof err));
            goto fail;
        }
        if (SSL_CTX_use_PrivateKey_file(c, ctx->ssl_key_location, SSL_FILETYPE_PEM) != 1) {
            tally_fail("ssl.key.location %s: %s (is ssl.key.password right?)",
                       ctx->ssl_key_location, ssl_reason(err, sizeof err));
            goto fail;
        }
        if (SSL_CTX_check_private_key(c) != 1) {
            tally_fail("ssl.key.location %s does not match ssl.certificate.location %s",
                       ctx->ssl_key_location, ctx->ssl_certificate_location);
            goto fail;
        }
    }
    return c;
fail:
    SSL_CTX_free(c);
    return NULL;
}

struct tally_tls *tally_tls_start(const struct tally_ctx *ctx, int fd, const char *host,
                                  const char *what)
{
    char err[256];
    unsigned char ip[16];
    bool is_ip = inet_pton(AF_INET, host, ip) == 1 || inet_pton(AF_INET6, host, ip) == 1;
    bool check_host = ctx->ssl_endpoint_identification_algorithm == NULL ||
                      strcmp(ctx->ssl_endpoint_identification_algorithm, "https") == 0;
    struct tally_tls *t = calloc(1, sizeof *t);
    if (t == NULL) {
        tally_fail("out of memory");
        return NULL;
    }
    if ((t->ctx = client_ctx(ctx, what)) == NULL)
        goto fail;
    if ((t->ssl = SSL_new(t->ctx)) == NULL || SSL_set_fd(t->ssl, fd) != 1) {
        tally_fail("%s: cannot set up TLS: %s", what, ssl_reason(err, sizeof err));
        goto fail;
    }
    /* SNI names the host as librdkafka sends it (never an address: RFC 6066). */
    if (!is_ip)
        SSL_set_tlsext_host_name(t->ssl, host);
    if (check_host) {
        X509_VERIFY_PARAM *vp = SSL_get0_param(t->ssl);
        X509_VERIFY_PARAM_set_hostflags(vp, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
        int ok = is_ip ? X509_VERIFY_PARAM_set1_ip_asc(vp, host)
                       : X509_VERIFY_PARAM_set1_host(vp, host, 0);
        if (ok != 1) {
            tally_fail("%s: cannot check the host name %s", what, host);
            goto fail;
        }
    }
    ERR_clear_error();
    if (SSL_connect(t->ssl) != 1) {
        long vr = SSL_get_verify_result(t->ssl);
        const char *why = ssl_reason(err, sizeof err);
        if (vr != X509_V_OK)
            tally_fail("%s: TLS handshake failed: the broker's certificate is not accepted: "
                       "%s%s",
                       what, X509_verify_cert_error_string(vr),
                       vr == X509_V_ERR_HOSTNAME_MISMATCH || vr == X509_V_ERR_IP_ADDRESS_MISMATCH
                           ? " (ssl.endpoint.identification.algorithm=https)"
                           : "");
        else
            tally_fail("%s: TLS handshake failed: %s", what,
                       *why ? why
                       : errno == EAGAIN || errno == EWOULDBLOCK
                           ? "timed out"
                           : "the broker closed the connection (is this a TLS listener?)");
        goto fail;
    }
    return t;
fail:
    tally_tls_free(t);
    return NULL;
}

/* -1 with errno for a failed SSL_read / SSL_write (ret its return value). */
static long io_error(struct tally_tls *t, int ret)
{
    char err[256];
    int e = SSL_get_error(t->ssl, ret);
    if (e == SSL_ERROR_ZERO_RETURN)
        return 0;
    if (e == SSL_ERROR_SYSCALL) {
        if (errno == 0)
            errno = ECONNRESET; /* EOF without close_notify */
        ERR_clear_error();
        return -1;
    }
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        errno = EAGAIN;
        return -1;
    }
    tally_fail("TLS: %s", ssl_reason(err, sizeof err));
    errno = EPROTO;
    return -1;
}

long tally_tls_send(struct tally_tls *t, const uint8_t *p, size_t n)
{
    int len = n > (1 << 30) ? 1 << 30 : (int)n;
    errno = 0;
    int w = SSL_write(t->ssl, p, len);
    return w > 0 ? w : io_error(t, w);
}

long tally_tls_recv(struct tally_tls *t, uint8_t *p, size_t n)
{
    int len = n > (1 << 30) ? 1 << 30 : (int)n;
    errno = 0;
    int r = SSL_read(t->ssl, p, len);
    return r > 0 ? r : io_error(t, r);
}

void tally_tls_free(struct tally_tls *t)
{
    if (t == NULL)
        return;
    if (t->ssl != NULL) {
        /* close_notify, so that the broker sees an orderly end (one try, not waiting). */
        if (SSL_is_init_finished(t->ssl))
            SSL_shutdown(t->ssl);
        SSL_free(t->ssl);
    }
    SSL_CTX_free(t->ctx);
    free(t);
}
