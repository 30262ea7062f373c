/* SPDX-License-Identifier: Apache-2.0 */
/* Unit-test certificates made in memory (EC P-256, SHA-256), for the TLS test files. No
 * TEST()s live here. */
#ifndef TALLY_TEST_TLS_FIXTURE_H
#define TALLY_TEST_TLS_FIXTURE_H

#include <openssl/evp.h>
#include <openssl/x509.h>

/* A key and its certificate, as PEM text and as OpenSSL objects. The objects are owned by
 * the pem and freed by fixture_pem_free. */
struct pem {
    char key[1024];
    char cert[2048];
    EVP_PKEY *pkey;
    X509 *x;
};

/* Makes a certificate for O=Tally[,OU=`ou`],CN=`cn` (ou NULL: no OU) signed by `ca` (NULL: a
 * self-signed CA, with basicConstraints CA:TRUE), with subjectAltName `san` ("IP:127.0.0.1";
 * NULL: none), valid from `from_s` to `to_s` seconds from now. */
void fixture_make_cert(struct pem *p, const char *cn, const char *ou, const struct pem *ca,
                       const char *san, long from_s, long to_s);

/* Frees the key and certificate objects of `p`. */
void fixture_pem_free(struct pem *p);

#endif
