/* SPDX-License-Identifier: Apache-2.0 */
/* Unit-test certificates made in memory (tls_fixture.h). */
#include "tls_fixture.h"

#include <openssl/pem.h>
#include <openssl/x509v3.h>

static void bio_to(BIO *b, char *out, size_t cap)
{
    int n = BIO_read(b, out, (int)cap - 1);
    out[n > 0 ? n : 0] = '\0';
    BIO_free(b);
}

void fixture_make_cert(struct pem *p, const char *cn, const char *ou, const struct pem *ca,
                       const char *san, long from_s, long to_s)
{
    static long serial = 1;
    EVP_PKEY *k = EVP_EC_gen("P-256");
    X509 *x = X509_new();
    X509_NAME *n = X509_NAME_new();
    BIO *b;

    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), serial++);
    X509_gmtime_adj(X509_getm_notBefore(x), from_s);
    X509_gmtime_adj(X509_getm_notAfter(x), to_s);
    X509_NAME_add_entry_by_txt(n, "O", MBSTRING_ASC, (const unsigned char *)"Tally", -1, -1, 0);
    if (ou)
        X509_NAME_add_entry_by_txt(n, "OU", MBSTRING_ASC, (const unsigned char *)ou, -1, -1, 0);
    X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
    X509_set_subject_name(x, n);
    X509_set_issuer_name(x, ca ? X509_get_subject_name(ca->x) : n);
    X509_set_pubkey(x, k);
    if (ca == NULL) {
        X509V3_CTX v3;
        X509V3_set_ctx_nodb(&v3);
        X509V3_set_ctx(&v3, x, x, NULL, NULL, 0);
        X509_EXTENSION *e =
            X509V3_EXT_conf_nid(NULL, &v3, NID_basic_constraints, "critical,CA:TRUE");
        X509_add_ext(x, e, -1);
        X509_EXTENSION_free(e);
    }
    if (san) {
        X509_EXTENSION *e = X509V3_EXT_conf_nid(NULL, NULL, NID_subject_alt_name, san);
        X509_add_ext(x, e, -1);
        X509_EXTENSION_free(e);
    }
    X509_sign(x, ca ? ca->pkey : k, EVP_sha256());
    X509_NAME_free(n);
    b = BIO_new(BIO_s_mem());
    PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL);
    bio_to(b, p->key, sizeof p->key);
    b = BIO_new(BIO_s_mem());
    PEM_write_bio_X509(b, x);
    bio_to(b, p->cert, sizeof p->cert);
    p->pkey = k;
    p->x = x;
}

void fixture_pem_free(struct pem *p)
{
    EVP_PKEY_free(p->pkey);
    X509_free(p->x);
}
