/* SPDX-License-Identifier: Apache-2.0 */
/* tls: contexts from Kafka's ssl.* settings, principal mapping rules, and connections on two
 * memory BIOs (see tls.h). OpenSSL's error queue is per thread; every call here clears it
 * first and reads it before returning, so that a reason never leaks into another
 * connection's line. */
#include "tls.h"

#include <ctype.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

/* Largest keystore or truststore file read (they are a few KiB). */
#define TLS_STORE_MAX (1u << 20)
#define TLS_MAX_RULES 32

/* One rule of ssl.principal.mapping.rules: DEFAULT (the whole subject), or
 * RULE:pattern/replacement/ with an optional L or U (lower or upper case the result). */
struct tls_rule {
    bool is_default;
    regex_t re;
    char *repl;
    char fold; /* 0, 'L' or 'U' */
};

struct tls_ctx {
    unsigned refs; /* the owner's, and one per connection (a rotated context outlives it) */
    SSL_CTX *ssl;
    bool client;
    size_t n_rules;
    struct tls_rule rules[TLS_MAX_RULES];
};

struct tls_conn {
    struct tls_ctx *ctx;
    SSL *ssl;
    BIO *rb, *wb; /* ciphertext from the peer, and for it; owned by ssl */
    bool established, dead;
    bool fed;          /* a first byte came */
    bool not_a_record; /* and it was no TLS handshake record: the peer does not speak TLS */
    char err[200];
};

static bool unset(const char *s)
{
    return s == NULL || *s == '\0';
}

/* ---- principal mapping rules ------------------------------------------------------------ */

static void rules_free(struct tls_rule *rules, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!rules[i].is_default) {
            regfree(&rules[i].re);
            free(rules[i].repl);
        }
    }
}

/* Copies s up to the first '/' not escaped by a backslash ("\/" becomes "/"); returns a
 * pointer to that '/', or NULL if there is none. */
static const char *rule_part(const char *s, char **out)
{
    size_t n = strlen(s);
    char *o = malloc(n + 1);
    size_t k = 0;
    if (o == NULL)
        return NULL;
    for (; *s && *s != '/'; s++) {
        if (s[0] == '\\' && s[1] == '/')
            s++;
        o[k++] = *s;
    }
    o[k] = '\0';
    if (*s != '/') {
        free(o);
        return NULL;
    }
    *out = o;
    return s;
}

/* Parses Kafka's rule list: entries separated by commas (and spaces), each DEFAULT or
 * RULE:pattern/replacement/[L|U]. Patterns are POSIX extended expressions that must match
 * the whole subject. Returns the rule count, or -1 with why. */
static int rules_parse(const char *s, struct tls_rule *rules, char *why, size_t why_len)
{
    size_t n = 0;
    if (unset(s))
        s = "DEFAULT";
    while (*s) {
        while (*s == ',' || isspace((unsigned char)*s))
            s++;
        if (*s == '\0')
            break;
        if (n == TLS_MAX_RULES) {
            snprintf(why, why_len, "ssl.principal.mapping.rules: more than %d rules",
                     TLS_MAX_RULES);
            goto err;
        }
        struct tls_rule *r = &rules[n];
        memset(r, 0, sizeof *r);
        if (strncmp(s, "DEFAULT", 7) == 0) {
            r->is_default = true;
            s += 7;
            n++;
        } else if (strncmp(s, "RULE:", 5) == 0) {
            char *pat = NULL;
            const char *p = rule_part(s + 5, &pat);
            const char *q = p ? rule_part(p + 1, &r->repl) : NULL;
            if (q == NULL) {
                free(pat);
                snprintf(why, why_len,
                         "ssl.principal.mapping.rules: '%.60s' is not RULE:pattern/replacement/",
                         s);
                goto err;
            }
            s = q + 1;
            if (*s == 'L' || *s == 'U')
                r->fold = *s++;
            int rc = regcomp(&r->re, pat, REG_EXTENDED);
            if (rc != 0) {
                char msg[128];
                regerror(rc, &r->re, msg, sizeof msg);
                snprintf(why, why_len, "ssl.principal.mapping.rules: pattern '%.60s': %s", pat,
                         msg);
                free(pat);
                free(r->repl);
                goto err;
            }
            free(pat);
            n++;
        } else {
            snprintf(why, why_len,
                     "ssl.principal.mapping.rules: '%.60s' is neither DEFAULT nor RULE:...", s);
            goto err;
        }
        if (*s != '\0' && *s != ',' && !isspace((unsigned char)*s)) {
            snprintf(why, why_len, "ssl.principal.mapping.rules: unexpected '%.40s' after a rule",
                     s);
            rules_free(rules, n);
            return -1;
        }
    }
    return (int)n;

err:
    rules_free(rules, n);
    return -1;
}

/* Applies one rule; returns 0 with out filled, or -1 when it does not match. */
static int rule_apply(const struct tls_rule *r, const char *dn, char *out, size_t out_len)
{
    regmatch_t m[10];
    size_t k = 0;

    if (r->is_default) {
        snprintf(out, out_len, "%s", dn);
        return 0;
    }
    if (regexec(&r->re, dn, 10, m, 0) != 0 || m[0].rm_so != 0 || (size_t)m[0].rm_eo != strlen(dn))
        return -1;
    for (const char *p = r->repl; *p && k + 1 < out_len; p++) {
        if ((*p == '$' || *p == '\\') && p[1] >= '0' && p[1] <= '9') {
            int g = p[1] - '0';
            p++;
            if (m[g].rm_so < 0)
                continue;
            for (regoff_t i = m[g].rm_so; i < m[g].rm_eo && k + 1 < out_len; i++)
                out[k++] = dn[i];
            continue;
        }
        out[k++] = *p;
    }
    out[k] = '\0';
    for (size_t i = 0; i < k; i++)
        out[i] = (char)(r->fold == 'L'   ? tolower((unsigned char)out[i])
                        : r->fold == 'U' ? toupper((unsigned char)out[i])
                                         : out[i]);
    return 0;
}

int tls_rules_check(const char *rules, char *why, size_t why_len)
{
    struct tls_rule r[TLS_MAX_RULES];
    int n = rules_parse(rules, r, why, why_len);
    if (n < 0)
        return -1;
    rules_free(r, (size_t)n);
    return 0;
}

int tls_ctx_map_principal(const struct tls_ctx *ctx, const char *dn, char *out, size_t out_len)
{
    char name[512];
    for (size_t i = 0; i < ctx->n_rules; i++) {
        if (rule_apply(&ctx->rules[i], dn, name, sizeof name) == 0) {
            snprintf(out, out_len, "User:%s", name);
            return 0;
        }
    }
    return -1;
}

/* ---- stores ------------------------------------------------------------------------------ */

/* The first reason on OpenSSL's error queue (which it empties), or `dflt`. */
static const char *ossl_reason(char *buf, size_t len, const char *dflt)
{
    unsigned long e = ERR_get_error();
    const char *r = e ? ERR_reason_error_string(e) : NULL;
    snprintf(buf, len, "%s", r ? r : dflt);
    ERR_clear_error();
    return buf;
}

/* Reads a whole store file into a memory BIO. NULL with why on failure. */
static BIO *store_read(const char *key, const char *path, char *why, size_t why_len)
{
    FILE *f = fopen(path, "rb");
    BIO *b = NULL;
    char *buf = NULL;
    size_t n;

    if (f == NULL) {
        snprintf(why, why_len, "%s: cannot open %s", key, path);
        return NULL;
    }
    buf = malloc(TLS_STORE_MAX);
    if (buf == NULL) {
        snprintf(why, why_len, "%s: out of memory", key);
        goto out;
    }
    n = fread(buf, 1, TLS_STORE_MAX, f);
    if (ferror(f) || n == TLS_STORE_MAX) {
        snprintf(why, why_len, "%s: cannot read %s (or larger than 1 MiB)", key, path);
        goto out;
    }
    b = BIO_new(BIO_s_mem());
    if (b)
        BIO_set_flags(b, BIO_FLAGS_NONCLEAR_RST); /* BIO_reset rewinds: PEM is read twice */
    if (b == NULL || BIO_write(b, buf, (int)n) != (int)n) {
        BIO_free(b);
        b = NULL;
        snprintf(why, why_len, "%s: out of memory", key);
    }
out:
    free(buf);
    fclose(f);
    return b;
}

/* The store type: explicit (PEM, PKCS12; JKS refused), else guessed from the content. */
static int store_type(const char *type_key, const char *type, BIO *b, bool *pem, char *why,
                      size_t why_len)
{
    if (unset(type)) {
        char *data;
        long n = BIO_get_mem_data(b, &data);
        long i = 0;
        while (i < n && isspace((unsigned char)data[i]))
            i++;
        *pem = n - i >= 5 && memcmp(data + i, "-----", 5) == 0;
        return 0;
    }
    if (strcasecmp(type, "PEM") == 0) {
        *pem = true;
        return 0;
    }
    if (strcasecmp(type, "PKCS12") == 0) {
        *pem = false;
        return 0;
    }
    if (strcasecmp(type, "JKS") == 0)
        snprintf(why, why_len,
                 "%s=JKS is not supported (there is no Java here): convert the store to PKCS12 "
                 "(keytool -importkeystore -deststoretype PKCS12) or PEM",
                 type_key);
    else
        snprintf(why, why_len, "%s: unknown store type '%.32s' (PEM or PKCS12)", type_key, type);
    return -1;
}

static int pem_pass(char *buf, int size, int rwflag, void *u)
{
    const char *pass = u;
    (void)rwflag;
    if (pass == NULL)
        return 0; /* never prompt */
    int n = (int)strlen(pass);
    if (n > size)
        n = size;
    memcpy(buf, pass, (size_t)n);
    return n;
}

/* Every certificate of a PEM BIO, in order. NULL when there is none. */
static STACK_OF(X509) * pem_certs(BIO *b)
{
    STACK_OF(X509) *certs = sk_X509_new_null();
    X509 *x;
    if (certs == NULL)
        return NULL;
    while ((x = PEM_read_bio_X509(b, NULL, pem_pass, NULL)) != NULL) {
        if (!sk_X509_push(certs, x)) {
            X509_free(x);
            break;
        }
    }
    ERR_clear_error(); /* the end of the input reads as "no start line" */
    if (sk_X509_num(certs) == 0) {
        sk_X509_free(certs);
        return NULL;
    }
    return certs;
}

/* Inline PEM as a properties file can hold it, on one line ("-----BEGIN CERTIFICATE-----
 * MIIB... -----END CERTIFICATE-----", Kafka's parser accepts that): rebuilt into the lines
 * OpenSSL reads. PEM that has line breaks is taken as it is. */
static BIO *mem_bio(const char *s)
{
    if (strchr(s, '\n'))
        return BIO_new_mem_buf(s, -1);
    BIO *b = BIO_new(BIO_s_mem());
    while (b && (s = strstr(s, "-----BEGIN ")) != NULL) {
        const char *hend = strstr(s + 11, "-----");
        const char *end = hend ? strstr(hend + 5, "-----END ") : NULL;
        const char *tend = end ? strstr(end + 9, "-----") : NULL;
        if (tend == NULL)
            break;
        BIO_write(b, s, (int)(hend + 5 - s));
        int col = 0;
        for (const char *q = hend + 5; q < end; q++) {
            if (isspace((unsigned char)*q))
                continue;
            if (col++ % 64 == 0)
                BIO_write(b, "\n", 1);
            BIO_write(b, q, 1);
        }
        BIO_write(b, "\n", 1);
        BIO_write(b, end, (int)(tend + 5 - end));
        BIO_write(b, "\n", 1);
        s = tend + 5;
    }
    return b;
}

/* The keystore: a key and its certificate chain, into the context. */
static int load_keystore(SSL_CTX *sc, const struct tls_config *c, char *why, size_t why_len)
{
    EVP_PKEY *key = NULL;
    STACK_OF(X509) *chain = NULL;
    X509 *leaf = NULL;
    BIO *b = NULL;
    char r[128];
    int rc = -1;
    bool pem = true;
    const char *where;

    if (!unset(c->keystore_chain) || !unset(c->keystore_key)) {
        if (unset(c->keystore_chain) || unset(c->keystore_key)) {
            snprintf(why, why_len,
                     "ssl.keystore.certificate.chain and ssl.keystore.key go together");
            return -1;
        }
        where = "ssl.keystore.key";
        b = mem_bio(c->keystore_key);
        key = b ? PEM_read_bio_PrivateKey(b, NULL, pem_pass, (void *)c->key_password) : NULL;
        if (key == NULL) {
            snprintf(why, why_len, "ssl.keystore.key: no private key (%s; ssl.key.password?)",
                     ossl_reason(r, sizeof r, "not PEM"));
            goto out;
        }
        BIO_free(b);
        where = "ssl.keystore.certificate.chain";
        b = mem_bio(c->keystore_chain);
        chain = b ? pem_certs(b) : NULL;
        if (chain == NULL) {
            snprintf(why, why_len, "ssl.keystore.certificate.chain: no PEM certificate");
            goto out;
        }
        leaf = sk_X509_shift(chain);
    } else if (!unset(c->keystore_location)) {
        where = "ssl.keystore.location";
        b = store_read(where, c->keystore_location, why, why_len);
        if (b == NULL ||
            store_type("ssl.keystore.type", c->keystore_type, b, &pem, why, why_len) != 0)
            goto out;
        if (pem) {
            const char *kp = !unset(c->key_password) ? c->key_password : c->keystore_password;
            key = PEM_read_bio_PrivateKey(b, NULL, pem_pass, (void *)kp);
            if (key == NULL) {
                snprintf(why, why_len,
                         "ssl.keystore.location %s: no private key (%s; ssl.key.password?)",
                         c->keystore_location, ossl_reason(r, sizeof r, "not PEM"));
                goto out;
            }
            (void)BIO_reset(b);
            chain = pem_certs(b);
            if (chain == NULL) {
                snprintf(why, why_len, "ssl.keystore.location %s: no PEM certificate",
                         c->keystore_location);
                goto out;
            }
            leaf = sk_X509_shift(chain);
        } else {
            PKCS12 *p12 = d2i_PKCS12_bio(b, NULL);
            const char *pw = c->keystore_password ? c->keystore_password : "";
            if (p12 == NULL || !PKCS12_parse(p12, pw, &key, &leaf, &chain)) {
                PKCS12_free(p12);
                snprintf(why, why_len,
                         "ssl.keystore.location %s: not a PKCS12 store, or a wrong "
                         "ssl.keystore.password (%s)",
                         c->keystore_location, ossl_reason(r, sizeof r, "unreadable"));
                goto out;
            }
            PKCS12_free(p12);
            if (key == NULL || leaf == NULL) {
                snprintf(why, why_len,
                         "ssl.keystore.location %s: the PKCS12 store holds no key and "
                         "certificate",
                         c->keystore_location);
                goto out;
            }
        }
    } else {
        if (c->client)
            return 0;
        snprintf(why, why_len,
                 "a TLS listener needs ssl.keystore.location (or ssl.keystore.certificate.chain "
                 "and ssl.keystore.key)");
        return -1;
    }
    if (SSL_CTX_use_certificate(sc, leaf) != 1 || SSL_CTX_use_PrivateKey(sc, key) != 1 ||
        SSL_CTX_check_private_key(sc) != 1) {
        snprintf(why, why_len, "%s: the key does not fit the certificate (%s)", where,
                 ossl_reason(r, sizeof r, "unusable"));
        goto out;
    }
    for (int i = 0; chain && i < sk_X509_num(chain); i++) {
        if (SSL_CTX_add1_chain_cert(sc, sk_X509_value(chain, i)) != 1) {
            snprintf(why, why_len, "%s: cannot use the certificate chain", where);
            goto out;
        }
    }
    rc = 0;
out:
    BIO_free(b);
    EVP_PKEY_free(key);
    X509_free(leaf);
    sk_X509_pop_free(chain, X509_free);
    return rc;
}

/* The truststore: the certificates peers are verified against. Returns 1 when one is
 * configured and loaded, 0 when none is configured, -1 with why. */
static int load_truststore(SSL_CTX *sc, const struct tls_config *c, char *why, size_t why_len)
{
    STACK_OF(X509) *certs = NULL;
    BIO *b = NULL;
    int rc = -1;
    bool pem = true;
    const char *where = "ssl.truststore.certificates";

    if (!unset(c->truststore_certs)) {
        b = mem_bio(c->truststore_certs);
        certs = b ? pem_certs(b) : NULL;
    } else if (!unset(c->truststore_location)) {
        where = "ssl.truststore.location";
        b = store_read(where, c->truststore_location, why, why_len);
        if (b == NULL ||
            store_type("ssl.truststore.type", c->truststore_type, b, &pem, why, why_len) != 0)
            goto out;
        if (pem) {
            certs = pem_certs(b);
        } else {
            PKCS12 *p12 = d2i_PKCS12_bio(b, NULL);
            EVP_PKEY *key = NULL;
            X509 *x = NULL;
            const char *pw = c->truststore_password ? c->truststore_password : "";
            if (p12 == NULL || !PKCS12_parse(p12, pw, &key, &x, &certs)) {
                PKCS12_free(p12);
                char r[128];
                snprintf(why, why_len,
                         "ssl.truststore.location %s: not a PKCS12 store, or a wrong "
                         "ssl.truststore.password (%s)",
                         c->truststore_location, ossl_reason(r, sizeof r, "unreadable"));
                goto out;
            }
            PKCS12_free(p12);
            EVP_PKEY_free(key);
            if (x) {
                if (certs == NULL)
                    certs = sk_X509_new_null();
                if (certs == NULL || !sk_X509_push(certs, x))
                    X509_free(x);
            }
        }
    } else {
        return 0;
    }
    if (certs == NULL || sk_X509_num(certs) == 0) {
        snprintf(why, why_len, "%s: no certificate in it", where);
        goto out;
    }
    X509_STORE *st = SSL_CTX_get_cert_store(sc);
    for (int i = 0; i < sk_X509_num(certs); i++) {
        X509 *x = sk_X509_value(certs, i);
        if (X509_STORE_add_cert(st, x) != 1 || (!c->client && SSL_CTX_add_client_CA(sc, x) != 1)) {
            snprintf(why, why_len, "%s: cannot use certificate %d", where, i + 1);
            goto out;
        }
    }
    rc = 1;
out:
    ERR_clear_error();
    BIO_free(b);
    sk_X509_pop_free(certs, X509_free);
    return rc;
}

static int protocol_version(const char *name)
{
    static const struct {
        const char *name;
        int v;
    } protos[] = {{"TLSv1.3", TLS1_3_VERSION},
                  {"TLSv1.2", TLS1_2_VERSION},
                  {"TLSv1.1", TLS1_1_VERSION},
                  {"TLSv1", TLS1_VERSION}};
    for (size_t i = 0; i < sizeof protos / sizeof protos[0]; i++)
        if (strcmp(protos[i].name, name) == 0)
            return protos[i].v;
    return -1;
}

/* ssl.enabled.protocols: the lowest and the highest listed bound the versions offered. */
static int set_protocols(SSL_CTX *sc, const char *list, char *why, size_t why_len)
{
    char buf[256], *save, *item;
    int lo = 0, hi = 0;
    snprintf(buf, sizeof buf, "%s", unset(list) ? "TLSv1.2,TLSv1.3" : list);
    for (item = strtok_r(buf, ", ", &save); item; item = strtok_r(NULL, ", ", &save)) {
        int v = protocol_version(item);
        if (v < 0) {
            snprintf(why, why_len,
                     "ssl.enabled.protocols: unknown protocol '%.32s' (TLSv1.2, TLSv1.3)", item);
            return -1;
        }
        if (lo == 0 || v < lo)
            lo = v;
        if (v > hi)
            hi = v;
    }
    if (lo == 0) {
        snprintf(why, why_len, "ssl.enabled.protocols: no protocol listed");
        return -1;
    }
    if (SSL_CTX_set_min_proto_version(sc, lo) != 1 || SSL_CTX_set_max_proto_version(sc, hi) != 1) {
        snprintf(why, why_len, "ssl.enabled.protocols: not offered by this OpenSSL");
        return -1;
    }
    return 0;
}

/* ssl.cipher.suites: TLS 1.3 suites (TLS_AES_*, TLS_CHACHA20_*) go to the 1.3 list; others
 * may be IANA names (Kafka's) or OpenSSL names. */
static int set_ciphers(SSL_CTX *sc, const char *list, char *why, size_t why_len)
{
    char buf[2048], v12[2048] = "", v13[1024] = "", *save, *item;
    if (unset(list))
        return 0;
    snprintf(buf, sizeof buf, "%s", list);
    for (item = strtok_r(buf, ", ", &save); item; item = strtok_r(NULL, ", ", &save)) {
        bool is13 = strncmp(item, "TLS_AES_", 8) == 0 || strncmp(item, "TLS_CHACHA20_", 13) == 0;
        const char *name = item;
        if (!is13) {
            const char *o = OPENSSL_cipher_name(item);
            if (o && strcmp(o, "(NONE)") != 0)
                name = o;
        }
        char *dst = is13 ? v13 : v12;
        size_t cap = is13 ? sizeof v13 : sizeof v12;
        size_t len = strlen(dst);
        snprintf(dst + len, cap - len, "%s%s", len ? ":" : "", name);
    }
    if (v12[0] && SSL_CTX_set_cipher_list(sc, v12) != 1) {
        snprintf(why, why_len, "ssl.cipher.suites: none of '%.100s' is known", v12);
        ERR_clear_error();
        return -1;
    }
    if (v13[0] && SSL_CTX_set_ciphersuites(sc, v13) != 1) {
        snprintf(why, why_len, "ssl.cipher.suites: unknown TLS 1.3 suite in '%.100s'", v13);
        ERR_clear_error();
        return -1;
    }
    return 0;
}

int tls_ctx_new(const struct tls_config *cfg, struct tls_ctx **out, char *why, size_t why_len)
{
    struct tls_ctx *t = calloc(1, sizeof *t);
    int n, trust;

    ERR_clear_error();
    if (t == NULL) {
        snprintf(why, why_len, "out of memory");
        return -1;
    }
    t->client = cfg->client;
    t->refs = 1;
    n = rules_parse(cfg->principal_rules, t->rules, why, why_len);
    if (n < 0) {
        free(t);
        return -1;
    }
    t->n_rules = (size_t)n;
    t->ssl = SSL_CTX_new(cfg->client ? TLS_client_method() : TLS_server_method());
    if (t->ssl == NULL) {
        snprintf(why, why_len, "out of memory");
        goto err;
    }
    /* No renegotiation (a client could make the server redo handshakes for free), no session
     * tickets (nothing resumes: each connection is a full handshake), small idle buffers. */
    SSL_CTX_set_options(t->ssl, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_TICKET);
    SSL_CTX_set_num_tickets(t->ssl, 0);
    SSL_CTX_set_mode(t->ssl, SSL_MODE_RELEASE_BUFFERS);
    if (set_protocols(t->ssl, cfg->enabled_protocols, why, why_len) != 0 ||
        set_ciphers(t->ssl, cfg->cipher_suites, why, why_len) != 0 ||
        load_keystore(t->ssl, cfg, why, why_len) != 0)
        goto err;
    trust = load_truststore(t->ssl, cfg, why, why_len);
    if (trust < 0)
        goto err;
    if (cfg->client) {
        SSL_CTX_set_verify(t->ssl, trust ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, NULL);
    } else if (cfg->client_auth != TLS_AUTH_NONE) {
        if (!trust) {
            snprintf(why, why_len,
                     "ssl.client.auth=%s needs a truststore (ssl.truststore.location or "
                     "ssl.truststore.certificates) to verify client certificates",
                     cfg->client_auth == TLS_AUTH_REQUIRED ? "required" : "requested");
            goto err;
        }
        int mode = SSL_VERIFY_PEER;
        if (cfg->client_auth == TLS_AUTH_REQUIRED)
            mode |= SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
        SSL_CTX_set_verify(t->ssl, mode, NULL);
    } else {
        SSL_CTX_set_verify(t->ssl, SSL_VERIFY_NONE, NULL);
    }
    ERR_clear_error();
    *out = t;
    return 0;

err:
    ERR_clear_error();
    tls_ctx_free(t);
    return -1;
}

void tls_ctx_free(struct tls_ctx *t)
{
    if (t == NULL || --t->refs > 0)
        return;
    rules_free(t->rules, t->n_rules);
    SSL_CTX_free(t->ssl);
    free(t);
}

/* ---- connections -------------------------------------------------------------------------- */

struct tls_conn *tls_conn_new(struct tls_ctx *ctx)
{
    struct tls_conn *t = calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    t->ctx = ctx;
    ctx->refs++;
    t->ssl = SSL_new(ctx->ssl);
    t->rb = BIO_new(BIO_s_mem());
    t->wb = BIO_new(BIO_s_mem());
    if (t->ssl == NULL || t->rb == NULL || t->wb == NULL) {
        BIO_free(t->rb);
        BIO_free(t->wb);
        SSL_free(t->ssl);
        free(t);
        tls_ctx_free(ctx);
        ERR_clear_error();
        return NULL;
    }
    /* An empty memory BIO reads as "retry later", not as end of file. */
    BIO_set_mem_eof_return(t->rb, -1);
    SSL_set_bio(t->ssl, t->rb, t->wb);
    if (ctx->client) {
        SSL_set_connect_state(t->ssl);
        (void)tls_conn_feed(t, NULL, 0); /* the ClientHello */
    } else {
        SSL_set_accept_state(t->ssl);
    }
    return t;
}

void tls_conn_free(struct tls_conn *t)
{
    if (t == NULL)
        return;
    SSL_free(t->ssl);
    tls_ctx_free(t->ctx);
    free(t);
}

int tls_conn_verify_host(struct tls_conn *t, const char *host)
{
    X509_VERIFY_PARAM *vp = SSL_get0_param(t->ssl);
    int rc = -1;

    if (unset(host))
        return -1;
    ERR_clear_error();
    X509_VERIFY_PARAM_set_hostflags(vp, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    if (X509_VERIFY_PARAM_set1_ip_asc(vp, host) == 1 || SSL_set1_host(t->ssl, host) == 1)
        rc = 0;
    ERR_clear_error();
    return rc;
}

/* Records why the connection died, from the verify result or the error queue. */
static void conn_fail(struct tls_conn *t, int ssl_err)
{
    long v = SSL_get_verify_result(t->ssl);
    unsigned long e = ERR_get_error();
    const char *reason = e ? ERR_reason_error_string(e) : NULL;

    t->dead = true;
    if (v != X509_V_OK)
        snprintf(t->err, sizeof t->err, "certificate verify failed: %s",
                 X509_verify_cert_error_string(v));
    else if (reason && t->not_a_record && !t->established)
        snprintf(t->err, sizeof t->err, "%s (not TLS: a plaintext client on a TLS port?)", reason);
    else if (reason)
        snprintf(t->err, sizeof t->err, "%s", reason);
    else if (ssl_err == SSL_ERROR_ZERO_RETURN)
        t->err[0] = '\0'; /* close_notify: an orderly end, nothing to report */
    else
        snprintf(t->err, sizeof t->err, "TLS error %d", ssl_err);
    ERR_clear_error();
}

int tls_conn_feed(struct tls_conn *t, const void *p, size_t n)
{
    if (t->dead)
        return -1;
    ERR_clear_error();
    if (n > 0 && !t->fed) {
        t->fed = true;
        t->not_a_record = ((const unsigned char *)p)[0] != 0x16;
    }
    if (n > 0 && BIO_write(t->rb, p, (int)n) != (int)n) {
        snprintf(t->err, sizeof t->err, "out of memory");
        t->dead = true;
        return -1;
    }
    if (t->established)
        return 0;
    int r = SSL_do_handshake(t->ssl);
    if (r == 1) {
        t->established = true;
        return 0;
    }
    int e = SSL_get_error(t->ssl, r);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
        return 0;
    conn_fail(t, e);
    return -1;
}

bool tls_conn_established(const struct tls_conn *t)
{
    return t->established && !t->dead;
}

long tls_conn_read(struct tls_conn *t, void *buf, size_t cap)
{
    if (t->dead)
        return -1;
    if (!t->established || cap == 0)
        return 0;
    ERR_clear_error();
    int r = SSL_read(t->ssl, buf, cap > INT32_MAX ? INT32_MAX : (int)cap);
    if (r > 0)
        return r;
    int e = SSL_get_error(t->ssl, r);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
        return 0;
    conn_fail(t, e);
    return -1;
}

int tls_conn_write(struct tls_conn *t, const void *p, size_t n)
{
    const char *s = p;
    if (t->dead || !t->established)
        return -1;
    ERR_clear_error();
    while (n > 0) {
        int chunk = n > (1u << 30) ? (1 << 30) : (int)n;
        int r = SSL_write(t->ssl, s, chunk);
        if (r <= 0) {
            conn_fail(t, SSL_get_error(t->ssl, r));
            return -1;
        }
        s += r;
        n -= (size_t)r;
    }
    return 0;
}

size_t tls_conn_pending(const struct tls_conn *t)
{
    return BIO_ctrl_pending(t->wb);
}

size_t tls_conn_take(struct tls_conn *t, void *buf, size_t cap)
{
    int r = BIO_read(t->wb, buf, cap > INT32_MAX ? INT32_MAX : (int)cap);
    return r > 0 ? (size_t)r : 0;
}

int tls_conn_principal(const struct tls_conn *t, char *out, size_t out_len)
{
    X509 *peer = SSL_get0_peer_certificate(t->ssl);
    char dn[512];
    BIO *b;
    int n;

    if (peer == NULL) {
        snprintf(out, out_len, "User:ANONYMOUS");
        return 0;
    }
    b = BIO_new(BIO_s_mem());
    if (b == NULL || X509_NAME_print_ex(b, X509_get_subject_name(peer), 0, XN_FLAG_RFC2253) < 0) {
        BIO_free(b);
        ERR_clear_error();
        snprintf(out, out_len, "?");
        return -1;
    }
    n = BIO_read(b, dn, sizeof dn - 1);
    dn[n > 0 ? n : 0] = '\0';
    BIO_free(b);
    if (tls_ctx_map_principal(t->ctx, dn, out, out_len) != 0) {
        snprintf(out, out_len, "%s", dn);
        return -1;
    }
    return 0;
}

bool tls_conn_plaintext(const struct tls_conn *t)
{
    return t->not_a_record;
}

const char *tls_conn_error(const struct tls_conn *t)
{
    return t->err;
}
