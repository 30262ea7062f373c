/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target for the TLS input path of net/tls.h, as a listener drives it: bytes from
 * a peer fed to an accepting connection in chunks, plaintext read out, ciphertext taken.
 * The first input byte picks the chunk size and whether the bytes come instead of a
 * ClientHello (even) or after a real handshake with an in-memory client (odd: the fuzzer
 * then reaches the record layer of an established connection). Nothing may crash, leak or
 * read outside its buffers; a connection that failed must stay failed. Keys and certificates
 * are made once, in memory (EC P-256, self-signed). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "net/tls.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct tls_ctx *server, *client;

/* A self-signed certificate for CN=localhost: PEM key and certificate into key, cert. */
static void make_pem(char *key, size_t key_len, char *cert, size_t cert_len)
{
    EVP_PKEY *k = EVP_EC_gen("P-256");
    X509 *x = X509_new();
    X509_NAME *n = X509_NAME_new();
    BIO *b = BIO_new(BIO_s_mem());
    int len;

    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
    X509_gmtime_adj(X509_getm_notBefore(x), 0);
    X509_gmtime_adj(X509_getm_notAfter(x), 86400 * 365);
    X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC, (const unsigned char *)"localhost", -1, -1,
                               0);
    X509_set_subject_name(x, n);
    X509_set_issuer_name(x, n);
    X509_set_pubkey(x, k);
    X509_sign(x, k, EVP_sha256());
    PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL);
    len = BIO_read(b, key, (int)key_len - 1);
    key[len > 0 ? len : 0] = '\0';
    PEM_write_bio_X509(b, x);
    len = BIO_read(b, cert, (int)cert_len - 1);
    cert[len > 0 ? len : 0] = '\0';
    BIO_free(b);
    X509_NAME_free(n);
    X509_free(x);
    EVP_PKEY_free(k);
}

static void setup(void)
{
    static char key[1024], cert[2048];
    char why[256];
    make_pem(key, sizeof key, cert, sizeof cert);
    struct tls_config sc = {.keystore_chain = cert, .keystore_key = key};
    struct tls_config cc = {.client = true, .truststore_certs = cert};
    if (tls_ctx_new(&sc, &server, why, sizeof why) != 0 ||
        tls_ctx_new(&cc, &client, why, sizeof why) != 0)
        abort();
}

/* Moves what `from` has for its peer into `to`; -1 if `to` failed on it. */
static int move(struct tls_conn *from, struct tls_conn *to)
{
    uint8_t buf[4096];
    size_t n;
    while ((n = tls_conn_take(from, buf, sizeof buf)) > 0)
        if (tls_conn_feed(to, buf, n) != 0)
            return -1;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t plain[16384], out[4096];
    struct tls_conn *s, *c = NULL;
    size_t chunk;

    if (server == NULL)
        setup();
    if (size < 1)
        return 0;
    chunk = (size_t)(data[0] >> 1) * 37 + 1;
    s = tls_conn_new(server);
    if (s == NULL)
        abort();
    if (data[0] & 1) {
        /* A real handshake first; the fuzz bytes then arrive as more records. */
        c = tls_conn_new(client);
        if (c == NULL)
            abort();
        for (int i = 0; i < 10 && !tls_conn_established(s); i++) {
            if (move(c, s) != 0 || move(s, c) != 0)
                abort();
            (void)tls_conn_read(s, plain, 0);
        }
        if (!tls_conn_established(s))
            abort();
    }
    bool dead = false;
    for (size_t at = 1; at < size; at += chunk) {
        size_t n = size - at < chunk ? size - at : chunk;
        if (tls_conn_feed(s, data + at, n) != 0) {
            dead = true;
            break;
        }
        long r;
        while ((r = tls_conn_read(s, plain, sizeof plain)) > 0)
            ;
        while (tls_conn_take(s, out, sizeof out) > 0)
            ;
        if (r < 0) {
            dead = true;
            break;
        }
    }
    if (dead && (tls_conn_established(s) || tls_conn_feed(s, "x", 1) != -1 ||
                 tls_conn_read(s, plain, sizeof plain) != -1 || tls_conn_write(s, "x", 1) != -1))
        abort(); /* a failed connection must stay failed */
    if (tls_conn_established(s)) {
        char p[300];
        (void)tls_conn_principal(s, p, sizeof p);
        if (tls_conn_write(s, "answer", 6) != 0)
            abort();
    }
    tls_conn_free(s);
    tls_conn_free(c);
    return 0;
}
