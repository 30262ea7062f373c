/* SPDX-License-Identifier: Apache-2.0 */
/* sasl/scram: the server side of SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677) on
 * OpenSSL, as Kafka speaks them (no channel binding).
 *
 *   client-first  gs2-header client-first-bare      gs2-header = "n,," or "n,a=<authzid>,"
 *                 client-first-bare = "n=" saslname ",r=" c-nonce [",tokenauth=..."...]
 *   server-first  "r=" c-nonce s-nonce ",s=" base64(salt) ",i=" iterations
 *   client-final  "c=" base64(gs2-header) ",r=" nonce ",p=" base64(ClientProof)
 *                 (nonce ends with server-first's: librdkafka 2.0 puts its own in front)
 *   server-final  "v=" base64(ServerSignature)
 *
 * AuthMessage = client-first-bare "," server-first "," client-final-without-proof;
 * ClientKey = ClientProof XOR HMAC(StoredKey, AuthMessage) must hash to StoredKey. A user
 * without a credential gets a server-first like any other (random salt) and fails at the
 * final step, so the exchange does not tell which users exist. */
#include "sasl/sasl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "base/err.h"

#define SCRAM_DEFAULT_ITERATIONS 4096
#define SCRAM_MAX_MSG 1024

struct sasl_scram_state {
    bool known; /* the user has a credential for this mechanism */
    struct sasl_scram_cred cred;
    char gs2[SASL_MAX_NAME + 8];
    char first_bare[SCRAM_MAX_MSG];
    char server_first[SCRAM_MAX_MSG];
    char nonce[SCRAM_MAX_MSG]; /* c-nonce s-nonce */
};

static const EVP_MD *md_of(enum sasl_mech m)
{
    return m == SASL_MECH_SCRAM_SHA_256   ? EVP_sha256()
           : m == SASL_MECH_SCRAM_SHA_512 ? EVP_sha512()
                                          : NULL;
}

size_t sasl_scram_hash_len(enum sasl_mech m)
{
    return m == SASL_MECH_SCRAM_SHA_256 ? 32 : m == SASL_MECH_SCRAM_SHA_512 ? 64 : 0;
}

int sasl_random(uint8_t *buf, size_t n)
{
    return RAND_bytes(buf, (int)n) == 1 ? 0 : -1;
}

static int hmac(const EVP_MD *md, const uint8_t *key, size_t klen, const uint8_t *d, size_t dlen,
                uint8_t *out)
{
    unsigned olen = 0;
    return HMAC(md, key, (int)klen, d, dlen, out, &olen) ? 0 : -1;
}

int sasl_scram_salted_password(enum sasl_mech m, const uint8_t *password, size_t password_len,
                               const uint8_t *salt, size_t salt_len, int32_t iterations,
                               uint8_t *out)
{
    const EVP_MD *md = md_of(m);
    if (md == NULL || iterations < 1 || salt_len == 0 || salt_len > SASL_SCRAM_MAX_SALT)
        return -1;
    /* Hi() of RFC 5802 §2.2 is PBKDF2 with HMAC-H and one block of H's length. */
    return PKCS5_PBKDF2_HMAC((const char *)password, (int)password_len, salt, (int)salt_len,
                             iterations, md, (int)sasl_scram_hash_len(m), out) == 1
               ? 0
               : -1;
}

int sasl_scram_derive(enum sasl_mech m, const uint8_t *password, size_t password_len,
                      const uint8_t *salt, size_t salt_len, int32_t iterations,
                      struct sasl_scram_cred *out)
{
    size_t h = sasl_scram_hash_len(m);
    uint8_t salted[SASL_SCRAM_MAX_KEY];
    int rc = -1;

    memset(out, 0, sizeof *out);
    if (sasl_scram_salted_password(m, password, password_len, salt, salt_len, iterations, salted) !=
            0 ||
        sasl_scram_keys(m, salted, h, out->stored_key, out->server_key) != 0)
        goto out;
    out->iterations = iterations;
    out->salt_len = salt_len;
    memcpy(out->salt, salt, salt_len);
    rc = 0;
out:
    OPENSSL_cleanse(salted, sizeof salted);
    return rc;
}

int sasl_scram_keys(enum sasl_mech m, const uint8_t *salted, size_t salted_len, uint8_t *stored_key,
                    uint8_t *server_key)
{
    const EVP_MD *md = md_of(m);
    size_t h = sasl_scram_hash_len(m);
    uint8_t client_key[SASL_SCRAM_MAX_KEY];
    int rc = -1;
    if (md == NULL || salted_len != h)
        return -1;
    if (hmac(md, salted, h, (const uint8_t *)"Client Key", 10, client_key) == 0 &&
        hmac(md, salted, h, (const uint8_t *)"Server Key", 10, server_key) == 0 &&
        EVP_Digest(client_key, h, stored_key, NULL, md, NULL) == 1)
        rc = 0;
    OPENSSL_cleanse(client_key, sizeof client_key);
    return rc;
}

static size_t b64_encode(const uint8_t *in, size_t n, char *out)
{
    return (size_t)EVP_EncodeBlock((unsigned char *)out, in, (int)n);
}

/* Strict base64 (with padding) into out[0..cap). Returns the length or -1. */
static int b64_decode(const char *in, size_t n, uint8_t *out, size_t cap)
{
    static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0;
    if (n % 4 != 0)
        return -1;
    for (size_t i = 0; i < n; i += 4) {
        uint32_t v = 0;
        int pad = 0;
        for (int k = 0; k < 4; k++) {
            char ch = in[i + (size_t)k];
            const char *pch = ch ? strchr(al, ch) : NULL;
            if (ch == '=' && i + 4 == n && k >= 2) {
                pad++;
                v <<= 6;
                continue;
            }
            if (pch == NULL || pad)
                return -1;
            v = v << 6 | (uint32_t)(pch - al);
        }
        for (int k = 0; k < 3 - pad; k++) {
            if (o == cap)
                return -1;
            out[o++] = (uint8_t)(v >> (16 - 8 * k));
        }
    }
    return (int)o;
}

/* saslname (RFC 5802 §5.1: "=2C" is ',', "=3D" is '='; any other '=' is an error). */
static int unescape_name(const char *in, size_t n, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        char ch = in[i];
        if (ch == '=') {
            if (n - i >= 3 && in[i + 1] == '2' && in[i + 2] == 'C')
                ch = ',';
            else if (n - i >= 3 && in[i + 1] == '3' && in[i + 2] == 'D')
                ch = '=';
            else
                return -1;
            i += 2;
        } else if (ch == ',' || ch == '\0') {
            return -1;
        }
        if (o + 1 >= cap)
            return -1;
        out[o++] = ch;
    }
    out[o] = '\0';
    return (int)o;
}

static bool printable_nonce(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] < 0x21 || p[i] > 0x7e || p[i] == ',')
            return false;
    return n > 0;
}

int sasl_scram_first(struct sasl_session *s, const uint8_t *token, size_t len)
{
    const char *t = (const char *)token;
    struct sasl_scram_state *st;
    char user[SASL_MAX_NAME + 1];

    if (len >= SCRAM_MAX_MSG || memchr(token, 0, len) != NULL)
        return ERR_SASL_AUTHENTICATION_FAILED;
    st = calloc(1, sizeof *st);
    if (st == NULL)
        return ERR_SASL_AUTHENTICATION_FAILED;
    s->scram = st;
    /* gs2-header: "n," then an optional "a=<authzid>", then ",". */
    if (len < 3 || t[0] != 'n' || t[1] != ',')
        return ERR_SASL_AUTHENTICATION_FAILED;
    const char *comma = memchr(t + 2, ',', len - 2);
    if (comma == NULL)
        return ERR_SASL_AUTHENTICATION_FAILED;
    size_t gs2_len = (size_t)(comma - t) + 1;
    if (gs2_len >= sizeof st->gs2)
        return ERR_SASL_AUTHENTICATION_FAILED;
    memcpy(st->gs2, t, gs2_len);
    st->gs2[gs2_len] = '\0';
    /* Parsed from the NUL-terminated copy: the token itself is not terminated. */
    size_t bare_len = len - gs2_len;
    memcpy(st->first_bare, t + gs2_len, bare_len);
    st->first_bare[bare_len] = '\0';
    const char *bare = st->first_bare;
    /* "n=" saslname ",r=" nonce [",ext..."] */
    if (bare_len < 2 || strncmp(bare, "n=", 2) != 0)
        return ERR_SASL_AUTHENTICATION_FAILED;
    const char *name = bare + 2;
    const char *name_end = memchr(name, ',', bare_len - 2);
    if (name_end == NULL || strncmp(name_end, ",r=", 3) != 0)
        return ERR_SASL_AUTHENTICATION_FAILED;
    if (unescape_name(name, (size_t)(name_end - name), user, sizeof user) <= 0)
        return ERR_SASL_AUTHENTICATION_FAILED;
    snprintf(s->user, sizeof s->user, "%s", user);
    if (gs2_len > 3) {
        /* "n,a=<authzid>,": Kafka accepts an authorization id equal to the user only. */
        char authz[SASL_MAX_NAME + 1];
        if (strncmp(t + 2, "a=", 2) != 0 ||
            unescape_name(t + 4, gs2_len - 5, authz, sizeof authz) < 0 || strcmp(authz, user) != 0)
            return ERR_SASL_AUTHENTICATION_FAILED;
    }
    const char *cn = name_end + 3;
    size_t cn_len = strcspn(cn, ",");
    if (!printable_nonce(cn, cn_len))
        return ERR_SASL_AUTHENTICATION_FAILED;

    st->known = s->cfg->scram_lookup &&
                s->cfg->scram_lookup(s->cfg->scram_arg, s->mech, user, &st->cred) == 0 &&
                st->cred.iterations > 0 && st->cred.salt_len > 0;
    if (!st->known) {
        memset(&st->cred, 0, sizeof st->cred);
        st->cred.iterations = SCRAM_DEFAULT_ITERATIONS;
        st->cred.salt_len = 16;
        if (sasl_random(st->cred.salt, st->cred.salt_len) != 0)
            return ERR_SASL_AUTHENTICATION_FAILED;
    }
    char snonce[64];
    if (s->cfg->scram_test_nonce) {
        snprintf(snonce, sizeof snonce, "%s", s->cfg->scram_test_nonce);
    } else {
        uint8_t rnd[24];
        if (sasl_random(rnd, sizeof rnd) != 0)
            return ERR_SASL_AUTHENTICATION_FAILED;
        b64_encode(rnd, sizeof rnd, snonce);
    }
    int nl = snprintf(st->nonce, sizeof st->nonce, "%.*s%s", (int)cn_len, cn, snonce);
    if (nl < 0 || (size_t)nl >= sizeof st->nonce)
        return ERR_SASL_AUTHENTICATION_FAILED;
    char salt64[SASL_SCRAM_MAX_SALT * 2];
    b64_encode(st->cred.salt, st->cred.salt_len, salt64);
    int sl = snprintf(st->server_first, sizeof st->server_first, "r=%s,s=%s,i=%d", st->nonce,
                      salt64, (int)st->cred.iterations);
    if (sl < 0 || (size_t)sl >= sizeof s->reply)
        return ERR_SASL_AUTHENTICATION_FAILED;
    memcpy(s->reply, st->server_first, (size_t)sl);
    s->reply_len = (size_t)sl;
    s->state = SASL_WAIT_FINAL;
    return 0;
}

int sasl_scram_final(struct sasl_session *s, const uint8_t *token, size_t len)
{
    struct sasl_scram_state *st = s->scram;
    char t[SCRAM_MAX_MSG]; /* the token, NUL-terminated */
    const EVP_MD *md = md_of(s->mech);
    size_t h = sasl_scram_hash_len(s->mech);
    char want_c[SASL_MAX_NAME * 2 + 16], auth[SCRAM_MAX_MSG * 3 + 4];
    uint8_t proof[SASL_SCRAM_MAX_KEY], sig[SASL_SCRAM_MAX_KEY], key[SASL_SCRAM_MAX_KEY],
        stored[SASL_SCRAM_MAX_KEY];
    int rc = ERR_SASL_AUTHENTICATION_FAILED;

    if (st == NULL || md == NULL || len >= SCRAM_MAX_MSG || memchr(token, 0, len) != NULL)
        goto out;
    memcpy(t, token, len);
    t[len] = '\0';
    /* "c=" base64(gs2-header) ",r=" nonce ",p=" proof: the proof is last. */
    const char *p = NULL;
    for (size_t i = len; i >= 3; i--)
        if (strncmp(t + i - 3, ",p=", 3) == 0) {
            p = t + i - 3;
            break;
        }
    if (p == NULL)
        goto out;
    size_t without_proof = (size_t)(p - t);
    size_t wl = b64_encode((const uint8_t *)st->gs2, strlen(st->gs2), want_c + 2);
    want_c[0] = 'c';
    want_c[1] = '=';
    wl += 2;
    if (without_proof < wl + 3 || memcmp(t, want_c, wl) != 0 || strncmp(t + wl, ",r=", 3) != 0)
        goto out;
    const char *nonce = t + wl + 3;
    size_t nonce_len = strcspn(nonce, ",");
    /* The nonce must end with the server-first one, Kafka's check (not RFC 5802's equality):
     * librdkafka 2.0 sends its own nonce again in front of it. */
    size_t want = strlen(st->nonce);
    if (nonce + nonce_len > p || nonce_len < want ||
        memcmp(nonce + nonce_len - want, st->nonce, want) != 0)
        goto out;
    int pl = b64_decode(p + 3, len - without_proof - 3, proof, sizeof proof);
    if (pl != (int)h)
        goto out;
    int al = snprintf(auth, sizeof auth, "%s,%s,%.*s", st->first_bare, st->server_first,
                      (int)without_proof, t);
    if (al < 0 || (size_t)al >= sizeof auth)
        goto out;
    if (hmac(md, st->cred.stored_key, h, (const uint8_t *)auth, (size_t)al, sig) != 0)
        goto out;
    for (size_t i = 0; i < h; i++)
        key[i] = proof[i] ^ sig[i];
    if (EVP_Digest(key, h, stored, NULL, md, NULL) != 1)
        goto out;
    if (CRYPTO_memcmp(stored, st->cred.stored_key, h) != 0 || !st->known)
        goto out;
    if (hmac(md, st->cred.server_key, h, (const uint8_t *)auth, (size_t)al, sig) != 0)
        goto out;
    s->reply[0] = 'v';
    s->reply[1] = '=';
    s->reply_len = 2 + b64_encode(sig, h, (char *)s->reply + 2);
    s->state = SASL_AUTHENTICATED;
    rc = 0;
out:
    OPENSSL_cleanse(key, sizeof key);
    sasl_session_free(s);
    return rc;
}

void sasl_session_free(struct sasl_session *s)
{
    if (s->scram) {
        OPENSSL_cleanse(s->scram, sizeof *s->scram);
        free(s->scram);
        s->scram = NULL;
    }
}

/* ---- the client side (the inter-broker client) ----------------------------------------- */

/* saslname of RFC 5802 §5.1: ',' as "=2C", '=' as "=3D". Returns the length or -1. */
static int escape_name(const char *in, char *out, size_t cap)
{
    size_t o = 0;
    for (const char *p = in; *p; p++) {
        const char *rep = *p == ',' ? "=2C" : *p == '=' ? "=3D" : NULL;
        size_t k = rep ? 3 : 1;
        if (o + k >= cap)
            return -1;
        if (rep)
            memcpy(out + o, rep, 3);
        else
            out[o] = *p;
        o += k;
    }
    out[o] = '\0';
    return (int)o;
}

int sasl_scram_client_first(struct sasl_scram_client *c, enum sasl_mech m, const char *user,
                            const char *test_nonce, char *out, size_t cap)
{
    char name[SASL_MAX_NAME * 3 + 1];
    memset(c, 0, sizeof *c);
    if (md_of(m) == NULL || *user == '\0' || strlen(user) > SASL_MAX_NAME ||
        escape_name(user, name, sizeof name) < 0)
        return -1;
    c->mech = m;
    if (test_nonce) {
        if (!printable_nonce(test_nonce, strlen(test_nonce)) ||
            strlen(test_nonce) >= sizeof c->nonce)
            return -1;
        snprintf(c->nonce, sizeof c->nonce, "%s", test_nonce);
    } else {
        uint8_t rnd[24];
        if (sasl_random(rnd, sizeof rnd) != 0)
            return -1;
        b64_encode(rnd, sizeof rnd, c->nonce);
    }
    int bl = snprintf(c->first_bare, sizeof c->first_bare, "n=%s,r=%s", name, c->nonce);
    if (bl < 0 || (size_t)bl >= sizeof c->first_bare)
        return -1;
    /* gs2-header "n,,": no channel binding, no authorization id (as Kafka's client sends). */
    int l = snprintf(out, cap, "n,,%s", c->first_bare);
    return l < 0 || (size_t)l >= cap ? -1 : l;
}

/* The value of attribute `a` ("r", "s", "i") of a server-first message t (NUL-terminated):
 * a pointer to it and its length in *len, or NULL. Attributes are in RFC 5802's order. */
static const char *attr(const char *t, char a, size_t *len)
{
    for (const char *p = t; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
        if (p[0] == a && p[1] == '=') {
            *len = strcspn(p + 2, ",");
            return p + 2;
        }
    }
    return NULL;
}

int sasl_scram_client_final(struct sasl_scram_client *c, const char *password,
                            const uint8_t *server_first, size_t len, char *out, size_t cap)
{
    const EVP_MD *md = md_of(c->mech);
    size_t h = sasl_scram_hash_len(c->mech);
    char t[SCRAM_MAX_MSG], auth[SCRAM_MAX_MSG * 3 + 4], num[16];
    uint8_t salt[SASL_SCRAM_MAX_SALT], salted[SASL_SCRAM_MAX_KEY], ckey[SASL_SCRAM_MAX_KEY],
        stored[SASL_SCRAM_MAX_KEY], sig[SASL_SCRAM_MAX_KEY], skey[SASL_SCRAM_MAX_KEY];
    size_t rl = 0, sl = 0, il = 0;
    int rc = -1;

    if (md == NULL || len >= sizeof t || memchr(server_first, 0, len) != NULL)
        return -1;
    memcpy(t, server_first, len);
    t[len] = '\0';
    /* "r=" nonce ",s=" salt ",i=" iterations; the nonce must start with ours and add to it. */
    const char *r = attr(t, 'r', &rl), *s = attr(t, 's', &sl), *i = attr(t, 'i', &il);
    size_t cl = strlen(c->nonce);
    if (r != t + 2 || s == NULL || i == NULL || rl <= cl || memcmp(r, c->nonce, cl) != 0 ||
        !printable_nonce(r, rl) || il == 0 || il >= sizeof num)
        return -1;
    memcpy(num, i, il);
    num[il] = '\0';
    char *end;
    long iters = strtol(num, &end, 10);
    /* Kafka's bounds for a SCRAM credential: a server asking for more is refused, not obeyed
     * (it would make this broker spend its loop on PBKDF2). */
    if (*end != '\0' || iters < SASL_SCRAM_MIN_ITERATIONS || iters > SASL_SCRAM_MAX_ITERATIONS)
        return -1;
    int saltl = b64_decode(s, sl, salt, sizeof salt);
    if (saltl <= 0)
        return -1;
    /* client-final-without-proof: "c=biws" is base64("n,,"). */
    int wl = snprintf(out, cap, "c=biws,r=%.*s", (int)rl, r);
    if (wl < 0 || (size_t)wl >= cap)
        return -1;
    int al = snprintf(auth, sizeof auth, "%s,%s,%.*s", c->first_bare, t, wl, out);
    if (al < 0 || (size_t)al >= sizeof auth)
        return -1;
    if (sasl_scram_salted_password(c->mech, (const uint8_t *)password, strlen(password), salt,
                                   (size_t)saltl, (int32_t)iters, salted) != 0 ||
        hmac(md, salted, h, (const uint8_t *)"Client Key", 10, ckey) != 0 ||
        EVP_Digest(ckey, h, stored, NULL, md, NULL) != 1 ||
        hmac(md, stored, h, (const uint8_t *)auth, (size_t)al, sig) != 0 ||
        hmac(md, salted, h, (const uint8_t *)"Server Key", 10, skey) != 0 ||
        hmac(md, skey, h, (const uint8_t *)auth, (size_t)al, c->server_sig) != 0)
        goto out;
    /* ClientProof = ClientKey XOR ClientSignature. */
    for (size_t k = 0; k < h; k++)
        ckey[k] ^= sig[k];
    char proof64[SASL_SCRAM_MAX_KEY * 2];
    b64_encode(ckey, h, proof64);
    int fl = snprintf(out + wl, cap - (size_t)wl, ",p=%s", proof64);
    if (fl < 0 || (size_t)fl >= cap - (size_t)wl)
        goto out;
    rc = wl + fl;
out:
    OPENSSL_cleanse(salted, sizeof salted);
    OPENSSL_cleanse(ckey, sizeof ckey);
    OPENSSL_cleanse(skey, sizeof skey);
    return rc;
}

int sasl_scram_client_verify(struct sasl_scram_client *c, const uint8_t *server_final, size_t len)
{
    size_t h = sasl_scram_hash_len(c->mech);
    uint8_t sig[SASL_SCRAM_MAX_KEY];
    int rc = -1;
    /* "v=" base64(ServerSignature); "e=..." (a server error) fails like a wrong signature. */
    if (h > 0 && len > 2 && server_final[0] == 'v' && server_final[1] == '=' &&
        b64_decode((const char *)server_final + 2, len - 2, sig, sizeof sig) == (int)h &&
        CRYPTO_memcmp(sig, c->server_sig, h) == 0)
        rc = 0;
    OPENSSL_cleanse(c, sizeof *c);
    return rc;
}
