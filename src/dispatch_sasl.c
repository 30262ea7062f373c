/* SPDX-License-Identifier: Apache-2.0 */
/* dispatch_sasl: SaslHandshake and SaslAuthenticate on SASL_PLAINTEXT listeners, and the gate
 * that keeps every other API from a connection until it authenticated. The exchange itself
 * is src/sasl/'s state machine; this file frames it (KIP-152's SaslAuthenticate, or raw tokens
 * after a v0 handshake, as kafka-python sends them), keeps it on the connection's
 * net_session, logs failures (rate-limited) and closes failed connections after
 * connection.failed.authentication.delay.ms. Kafka's behaviour throughout: a failure's
 * message never says whether the user exists. */
#include "server.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/err.h"
#include "base/slog.h"
#include "meta/meta.h"
#include "net/net.h"

#define SASL_WARN_INTERVAL_MS 10000

static const char auth_failed_msg[] = "Authentication failed: Invalid username or password";

static const struct server_listener *listener_of(const struct dispatch *d,
                                                 const struct net_request *req)
{
    const char *name = req->session->listener;
    if (d->cfg == NULL || name == NULL)
        return NULL;
    for (size_t i = 0; i < d->cfg->n_listeners; i++)
        if (strcmp(d->cfg->listeners[i].name, name) == 0)
            return &d->cfg->listeners[i];
    return NULL;
}

static int64_t failure_delay(const struct dispatch *d)
{
    return d->cfg ? d->cfg->auth_failure_delay_ms : 100;
}

static void session_free(void *auth)
{
    struct sasl_session *s = auth;
    sasl_session_free(s);
    free(s);
}

/* The connection's SASL session, made on first use; NULL when out of memory or when the
 * listener has no SASL configuration. */
static struct sasl_session *session_of(struct dispatch *d, struct net_request *req)
{
    struct net_session *ns = req->session;
    if (ns->auth)
        return ns->auth;
    const struct server_listener *l = listener_of(d, req);
    if (l == NULL ||
        (l->security_protocol != SERVER_SASL_PLAINTEXT && l->security_protocol != SERVER_SASL_SSL))
        return NULL;
    struct sasl_session *s = malloc(sizeof *s);
    if (s == NULL)
        return NULL;
    sasl_session_init(s, &l->sasl);
    ns->auth = s;
    ns->auth_free = session_free;
    return s;
}

bool dispatch_sasl_gate(struct dispatch *d, struct net_request *req)
{
    int16_t key = req->api->key;
    if (!req->session->sasl || req->session->authenticated || key == PROTO_API_ApiVersions ||
        key == PROTO_API_SaslHandshake || key == PROTO_API_SaslAuthenticate)
        return true;
    slog_warn_limited(&d->unauthed_log, SASL_WARN_INTERVAL_MS, "sasl",
                      "%s from %s on listener %s before SASL authentication; closing",
                      req->api->name, req->peer, req->session->listener);
    net_close_connection(req);
    return false;
}

/* One line per interval across all connections: who tried, as whom, how. */
static void log_failure(struct dispatch *d, struct net_request *req, const struct sasl_session *s,
                        int err)
{
    char user[SASL_MAX_NAME * 4 + 1];
    slog_escape(s ? s->user : "", s ? strlen(s->user) : 0, user, sizeof user);
    slog_warn_limited(&d->auth_failed_log, SASL_WARN_INTERVAL_MS, "sasl",
                      "failed authentication from %s on listener %s (principal 'User:%s', "
                      "mechanism %s): %s; closing in %lld ms",
                      req->peer, req->session->listener, user,
                      s && s->mech ? sasl_mech_name(s->mech) : "-", err_name(err),
                      (long long)failure_delay(d));
}

void dispatch_sasl_handshake(struct dispatch *d, struct net_request *req)
{
    struct SaslHandshakeRequest *rq = req->body;
    struct SaslHandshakeResponse *rs = arena_alloc(req->arena, sizeof *rs);
    if (rs == NULL) {
        net_close_connection(req);
        return;
    }
    memset(rs, 0, sizeof *rs);
    if (!req->session->sasl || req->session->authenticated) {
        /* Kafka's answer past (or without) authentication; the connection stays. */
        rs->ErrorCode = ERR_ILLEGAL_SASL_STATE;
        net_respond(req, rs);
        return;
    }
    struct sasl_session *s = session_of(d, req);
    if (s == NULL) {
        net_close_connection(req);
        return;
    }
    rs->Mechanisms.v = arena_alloc(req->arena, (s->cfg->n_mechs + 1) * sizeof(char *));
    if (rs->Mechanisms.v == NULL) {
        net_close_connection(req);
        return;
    }
    for (size_t i = 0; i < s->cfg->n_mechs; i++)
        rs->Mechanisms.v[rs->Mechanisms.n++] = (char *)sasl_mech_name(s->cfg->mechs[i]);
    int rc = sasl_handshake(s, rq->Mechanism);
    rs->ErrorCode = (int16_t)rc;
    if (rc != 0) {
        char mech[96];
        const char *m = rq->Mechanism ? rq->Mechanism : "";
        slog_warn_limited(&d->auth_failed_log, SASL_WARN_INTERVAL_MS, "sasl",
                          "SaslHandshake from %s on listener %s: mechanism '%s' refused (%s); "
                          "closing in %lld ms",
                          req->peer, req->session->listener,
                          slog_escape(m, strlen(m), mech, sizeof mech), err_name(rc),
                          (long long)failure_delay(d));
        net_respond_close(req, rs, failure_delay(d));
        return;
    }
    /* v0: the tokens come as raw frames from now on (v1: inside SaslAuthenticate). */
    if (req->hdr.RequestApiVersion == 0)
        req->session->sasl_raw = true;
    net_respond(req, rs);
}

void dispatch_sasl_authenticate(struct dispatch *d, struct net_request *req)
{
    struct SaslAuthenticateRequest *rq = req->body;
    struct SaslAuthenticateResponse *rs = arena_alloc(req->arena, sizeof *rs);
    if (rs == NULL) {
        net_close_connection(req);
        return;
    }
    memset(rs, 0, sizeof *rs);
    if (!req->session->sasl || req->session->authenticated) {
        rs->ErrorCode = ERR_ILLEGAL_SASL_STATE;
        rs->ErrorMessage = "SaslAuthenticate request received after successful authentication";
        net_respond(req, rs);
        return;
    }
    struct sasl_session *s = session_of(d, req);
    if (s == NULL) {
        net_close_connection(req);
        return;
    }
    size_t len = rq->AuthBytes.len > 0 ? (size_t)rq->AuthBytes.len : 0;
    int rc = sasl_step(s, rq->AuthBytes.data, len);
    if (rc != 0) {
        log_failure(d, req, s, rc);
        rs->ErrorCode = (int16_t)rc;
        rs->ErrorMessage = rc == ERR_SASL_AUTHENTICATION_FAILED
                               ? (char *)auth_failed_msg
                               : "Unexpected SaslAuthenticate: no SaslHandshake before it";
        /* A raw token has no way to carry an error: the connection just closes. */
        net_respond_close(req, req->raw_sasl ? NULL : rs, failure_delay(d));
        return;
    }
    if (s->reply_len > 0) {
        uint8_t *b = arena_alloc(req->arena, s->reply_len);
        if (b == NULL) {
            net_close_connection(req);
            return;
        }
        memcpy(b, s->reply, s->reply_len);
        rs->AuthBytes.data = b;
    }
    rs->AuthBytes.len = (int32_t)s->reply_len;
    if (s->state == SASL_AUTHENTICATED) {
        req->session->authenticated = true;
        req->session->sasl_raw = false;
        snprintf(req->session->principal, sizeof req->session->principal, "User:%s", s->user);
        slog_debug("sasl", "%s authenticated as %s with %s on listener %s", req->peer,
                   req->session->principal, sasl_mech_name(s->mech), req->session->listener);
    }
    net_respond(req, rs);
}

int dispatch_sasl_scram_lookup(void *meta, enum sasl_mech m, const char *name,
                               struct sasl_scram_cred *out)
{
    int8_t km = m == SASL_MECH_SCRAM_SHA_256   ? META_SCRAM_SHA_256
                : m == SASL_MECH_SCRAM_SHA_512 ? META_SCRAM_SHA_512
                                               : 0;
    const struct meta_scram *c = km ? meta_scram_find(meta, name, km) : NULL;
    if (c == NULL || (size_t)c->key_len != sasl_scram_hash_len(m) ||
        (size_t)c->salt_len > sizeof out->salt)
        return -1;
    memset(out, 0, sizeof *out);
    out->iterations = c->iterations;
    out->salt_len = (size_t)c->salt_len;
    memcpy(out->salt, c->salt, out->salt_len);
    memcpy(out->stored_key, c->stored_key, (size_t)c->key_len);
    memcpy(out->server_key, c->server_key, (size_t)c->key_len);
    return 0;
}
