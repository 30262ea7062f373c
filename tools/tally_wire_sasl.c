/* SPDX-License-Identifier: Apache-2.0 */
/* The SASL login the wire client of the `tally` commands (tally_wire_connect) does on each
 * connection when security.protocol is SASL_PLAINTEXT or SASL_SSL (after TLS,
 * tally_wire_tls.c): SaslHandshake v1, then SaslAuthenticate v2 with PLAIN's token, or
 * SCRAM-SHA-256/512's two steps (src/sasl's client side, the server's signature verified). */
#include "tally.h"

#include "base/arena.h"
#include "proto/proto.h"
#include "sasl/sasl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

/* One request of the login on w, its response decoded into `a` (the response buffer is kept
 * in *keep: SaslAuthenticate's AuthBytes point into it). */
static int login_call(struct tally_wire *w, int16_t key, int16_t version, const void *req,
                      struct arena *a, void **out, uint8_t **keep, const char *what)
{
    const struct proto_api *api = proto_api_find(key);
    uint8_t *frame = NULL;
    size_t frame_len = 0, resp_len = 0;
    int32_t corr = -1;
    if (proto_encode_request(api, version, 1, "tally", req, &frame, &frame_len) != 0)
        return tally_fail("%s: cannot encode %s", what, api->name);
    int rc = tally_wire_roundtrip(w, frame, frame_len, keep, &resp_len, what);
    OPENSSL_cleanse(frame, frame_len);
    free(frame);
    if (rc != 0)
        return TALLY_FAIL;
    if (proto_decode_response(api, version, *keep, resp_len, &corr, out, a) != 0 || corr != 1)
        return tally_fail("%s: cannot decode the %s response", what, api->name);
    return TALLY_OK;
}

/* A SaslAuthenticate step: TALLY_OK with the server's token, or TALLY_FAIL after printing. */
static int auth_step(struct tally_wire *w, const uint8_t *tok, size_t len, struct arena *a,
                     const struct SaslAuthenticateResponse **out, uint8_t **keep, const char *user,
                     const char *what)
{
    struct SaslAuthenticateRequest rq = {{tok, (int32_t)len, NULL}};
    struct SaslAuthenticateResponse *rs = NULL;
    free(*keep);
    *keep = NULL;
    if (login_call(w, PROTO_API_SaslAuthenticate, 2, &rq, a, (void **)&rs, keep, what) != 0)
        return TALLY_FAIL;
    if (rs->ErrorCode != 0)
        return tally_fail("%s: SASL authentication as %s failed: %s", what, user,
                          rs->ErrorMessage ? rs->ErrorMessage : "SASL_AUTHENTICATION_FAILED");
    *out = rs;
    return TALLY_OK;
}

int tally_wire_sasl(const struct tally_ctx *ctx, struct tally_wire *w, const char *what)
{
    enum sasl_mech m = sasl_mech_from_name(ctx->sasl_mechanism ? ctx->sasl_mechanism : "GSSAPI");
    const char *user = ctx->sasl_username, *pass = ctx->sasl_password;
    struct arena *a;
    uint8_t *keep = NULL, tok[2 * SASL_MAX_NAME + 2];
    char msg[700];
    int rc = TALLY_FAIL;

    if (m == SASL_MECH_NONE)
        return tally_fail("sasl.mechanism=%s: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512",
                          ctx->sasl_mechanism ? ctx->sasl_mechanism : "(unset)");
    if (user == NULL || pass == NULL || strlen(user) > SASL_MAX_NAME ||
        strlen(pass) > SASL_MAX_NAME)
        return tally_fail("%s needs sasl.username and sasl.password (at most %d bytes each)",
                          ctx->security_protocol, SASL_MAX_NAME);
    if ((a = arena_new(1 << 20)) == NULL)
        return tally_fail("out of memory");
    struct SaslHandshakeRequest hs = {(char *)sasl_mech_name(m)};
    struct SaslHandshakeResponse *hr = NULL;
    const struct SaslAuthenticateResponse *ar = NULL;
    if (login_call(w, PROTO_API_SaslHandshake, 1, &hs, a, (void **)&hr, &keep, what) != 0)
        goto out;
    if (hr->ErrorCode != 0) {
        tally_fail("%s: the broker does not enable SASL %s on this listener", what,
                   sasl_mech_name(m));
        goto out;
    }
    if (m == SASL_MECH_PLAIN) {
        /* RFC 4616: authzid (empty) NUL authcid NUL password. */
        size_t ul = strlen(user), pl = strlen(pass);
        tok[0] = '\0';
        memcpy(tok + 1, user, ul);
        tok[1 + ul] = '\0';
        memcpy(tok + 2 + ul, pass, pl);
        rc = auth_step(w, tok, ul + pl + 2, a, &ar, &keep, user, what);
        goto out;
    }
    struct sasl_scram_client sc;
    int n = sasl_scram_client_first(&sc, m, user, NULL, msg, sizeof msg);
    if (n < 0 || auth_step(w, (const uint8_t *)msg, (size_t)n, a, &ar, &keep, user, what) != 0)
        goto out;
    n = sasl_scram_client_final(&sc, pass, ar->AuthBytes.data, (size_t)ar->AuthBytes.len, msg,
                                sizeof msg);
    if (n < 0) {
        tally_fail("%s: the broker's SCRAM server-first message is not acceptable", what);
        goto out;
    }
    if (auth_step(w, (const uint8_t *)msg, (size_t)n, a, &ar, &keep, user, what) != 0)
        goto out;
    if (sasl_scram_client_verify(&sc, ar->AuthBytes.data, (size_t)ar->AuthBytes.len) != 0) {
        tally_fail("%s: the broker's SCRAM signature does not verify", what);
        goto out;
    }
    rc = TALLY_OK;
out:
    OPENSSL_cleanse(tok, sizeof tok);
    OPENSSL_cleanse(msg, sizeof msg);
    free(keep);
    arena_free(a);
    return rc;
}
