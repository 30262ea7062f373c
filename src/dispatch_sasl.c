/* SPDX-License-Identifier: Apache-2.0 */
/* dispatch_sasl: SaslHandshake and SaslAuthenticate on SASL_PLAINTEXT listeners, and the gate
 * that keeps every other API from a connection until it authenticated. The exchange itself
 * is src/sasl/'s state machine; this file frames it (KIP-152's SaslAuthenticate, or raw tokens
 * after a v0 handshake, as kafka-python sends them), keeps it on the connection's
 * net_session, logs failures (rate-limited) and closes failed connections after
 * connection.failed.authentication.delay.ms. Kafka's behaviour throughout: a failure's
 * message never says whether the user exists.
 *
 * KIP-368 (connections.max.reauth.ms): a successful authentication gives the session a
 * lifetime, answered in SaslAuthenticate v1+'s SessionLifetimeMs (older clients are not told,
 * and their sessions end all the same, as in Kafka). Past it, any request but a SaslHandshake
 * closes the connection unanswered; a SaslHandshake on an authenticated connection starts a
 * re-authentication on it, which must keep the mechanism and the principal. */
#include "server.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/err.h"
#include "base/metrics.h"
#include "base/slog.h"
#include "base/tclock.h"
#include "meta/meta.h"
#include "net/net.h"

#define SASL_WARN_INTERVAL_MS 10000
/* Kafka's KafkaChannel.MIN_REAUTH_INTERVAL_ONE_SECOND_NANOS: a connection re-authenticates at
 * most once a second; a SaslHandshake sooner is an illegal state. */
#define SASL_MIN_REAUTH_INTERVAL_MS 1000

/* One connection's SASL state (its net_session's `auth`): the exchange, and when the session
 * it established ends. */
struct sasl_conn {
    struct sasl_session s;
    int64_t expires_ms;        /* tclock_mono_ms the session ends at; -1: never */
    int64_t reauth_started_ms; /* the last re-authentication's start; -1: none yet */
};

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
    struct sasl_conn *c = auth;
    sasl_session_free(&c->s);
    free(c);
}

/* The connection's SASL state, made on first use; NULL when out of memory or when the
 * listener has no SASL configuration. */
static struct sasl_conn *conn_of(struct dispatch *d, struct net_request *req)
{
    struct net_session *ns = req->session;
    if (ns->auth)
        return ns->auth;
    const struct server_listener *l = listener_of(d, req);
    if (l == NULL ||
        (l->security_protocol != SERVER_SASL_PLAINTEXT && l->security_protocol != SERVER_SASL_SSL))
        return NULL;
    struct sasl_conn *c = malloc(sizeof *c);
    if (c == NULL)
        return NULL;
    sasl_session_init(&c->s, &l->sasl);
    c->expires_ms = -1;
    c->reauth_started_ms = -1;
    ns->auth = c;
    ns->auth_free = session_free;
    return c;
}

static int64_t now_ms(const struct dispatch *d)
{
    return d->clock ? tclock_mono_ms(d->clock) : 0;
}

void dispatch_sasl_metrics(struct dispatch *d, struct metrics *m)
{
    static const char *const reauth_labels[] = {"listener", "result"};
    static const char *const expired_labels[] = {"listener"};
    d->m_reauth = metrics_family_new(
        m, METRICS_COUNTER, "tally_sasl_reauthentications_total",
        "SASL re-authentications (KIP-368) on open connections, by listener and result", 2,
        reauth_labels, 0, NULL);
    d->m_expired = metrics_family_new(
        m, METRICS_COUNTER, "tally_sasl_expired_connections_total",
        "Connections closed because a request came after their SASL session expired "
        "(connections.max.reauth.ms)",
        1, expired_labels, 0, NULL);
}

static void count_reauth(struct dispatch *d, const struct net_request *req, bool ok)
{
    metrics_add(metrics_series2(d->m_reauth, req->session->listener, ok ? "success" : "failure"),
                1);
}

/* Whether the connection's session has ended (KIP-368). */
static bool session_expired(const struct dispatch *d, const struct sasl_conn *c)
{
    return c && c->expires_ms >= 0 && now_ms(d) >= c->expires_ms;
}

/* Kafka closes a connection used past its session's end, without an answer (and drops the
 * answers still owed on it). */
static void close_expired(struct dispatch *d, struct net_request *req, const struct sasl_conn *c)
{
    slog_info_limited(&d->expired_log, SASL_WARN_INTERVAL_MS, "sasl",
                      "%s from %s on listener %s after the SASL session of %s expired %lld ms "
                      "ago (connections.max.reauth.ms); closing",
                      req->api->name, req->peer, req->session->listener, req->session->principal,
                      (long long)(now_ms(d) - c->expires_ms));
    metrics_add(metrics_series1(d->m_expired, req->session->listener), 1);
    net_close_connection(req);
}

bool dispatch_sasl_gate(struct dispatch *d, struct net_request *req)
{
    struct net_session *ns = req->session;
    int16_t key = req->api->key;
    if (!ns->sasl)
        return true;
    if (ns->authenticated) {
        /* Past the session's end only a SaslHandshake (a re-authentication) may come. */
        if (key == PROTO_API_SaslHandshake || !session_expired(d, ns->auth))
            return true;
        close_expired(d, req, ns->auth);
        return false;
    }
    if (key == PROTO_API_ApiVersions || key == PROTO_API_SaslHandshake ||
        key == PROTO_API_SaslAuthenticate)
        return true;
    const struct sasl_conn *c = ns->auth;
    slog_warn_limited(
        &d->unauthed_log, SASL_WARN_INTERVAL_MS, "sasl", "%s from %s on listener %s %s; closing",
        req->api->name, req->peer, ns->listener,
        c && c->s.reauth ? "during SASL re-authentication" : "before SASL authentication");
    net_close_connection(req);
    return false;
}

/* One line per interval across all connections: who tried, as whom, how (and, for a
 * re-authentication, what it tried to change). */
static void log_failure(struct dispatch *d, struct net_request *req, const struct sasl_session *s,
                        int err)
{
    char user[SASL_MAX_NAME * 4 + 1], why[SASL_MAX_NAME * 4 + 96] = "";
    slog_escape(s ? s->user : "", s ? strlen(s->user) : 0, user, sizeof user);
    if (s && s->refusal == SASL_REFUSED_PRINCIPAL_CHANGE) {
        char was[SASL_MAX_NAME * 4 + 1];
        slog_escape(s->reauth_user, strlen(s->reauth_user), was, sizeof was);
        snprintf(why, sizeof why,
                 " (the connection is authenticated as 'User:%s': a principal "
                 "cannot change)",
                 was);
    } else if (s && s->refusal == SASL_REFUSED_MECHANISM_CHANGE) {
        snprintf(why, sizeof why,
                 " (the session was authenticated with %s: the mechanism "
                 "cannot change)",
                 sasl_mech_name(s->reauth_mech));
    }
    struct slog_limit *lim = !s || s->refusal == SASL_REFUSED_NONE ? &d->auth_failed_log
                             : s->refusal == SASL_REFUSED_PRINCIPAL_CHANGE
                                 ? &d->reauth_refused_log[0]
                                 : &d->reauth_refused_log[1];
    slog_warn_limited(lim, SASL_WARN_INTERVAL_MS, "sasl",
                      "failed %s from %s on listener %s (principal 'User:%s', "
                      "mechanism %s): %s%s; closing in %lld ms",
                      s && s->reauth ? "re-authentication" : "authentication", req->peer,
                      req->session->listener, user, s && s->mech ? sasl_mech_name(s->mech) : "-",
                      err_name(err), why, (long long)failure_delay(d));
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
    if (!req->session->sasl) {
        /* Kafka's answer without SASL; the connection stays. */
        rs->ErrorCode = ERR_ILLEGAL_SASL_STATE;
        net_respond(req, rs);
        return;
    }
    struct sasl_conn *c = conn_of(d, req);
    if (c == NULL) {
        net_close_connection(req);
        return;
    }
    struct sasl_session *s = &c->s;
    if (req->session->authenticated) {
        /* KIP-368: a session with a lifetime re-authenticates on its open connection, at most
         * once a second. Otherwise, as in Kafka, the handshake is an illegal state, answered,
         * and the connection stays (unless its session is over). */
        int64_t now = now_ms(d);
        if (c->expires_ms < 0 ||
            (c->reauth_started_ms >= 0 &&
             now - c->reauth_started_ms < SASL_MIN_REAUTH_INTERVAL_MS) ||
            sasl_reauth_begin(s) != 0) {
            if (session_expired(d, c)) {
                close_expired(d, req, c);
                return;
            }
            rs->ErrorCode = ERR_ILLEGAL_SASL_STATE;
            net_respond(req, rs);
            return;
        }
        c->reauth_started_ms = now;
        req->session->authenticated = false;
        slog_debug("sasl", "%s re-authenticating %s on listener %s", req->peer,
                   req->session->principal, req->session->listener);
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
        if (s->reauth)
            count_reauth(d, req, false);
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
    struct sasl_conn *c = conn_of(d, req);
    if (c == NULL) {
        net_close_connection(req);
        return;
    }
    struct sasl_session *s = &c->s;
    size_t len = rq->AuthBytes.len > 0 ? (size_t)rq->AuthBytes.len : 0;
    int rc = sasl_step(s, rq->AuthBytes.data, len);
    if (rc != 0) {
        log_failure(d, req, s, rc);
        if (s->reauth)
            count_reauth(d, req, false);
        rs->ErrorCode = (int16_t)rc;
        rs->ErrorMessage = rc == ERR_SASL_AUTHENTICATION_FAILED
                               ? (char *)auth_failed_msg
                               : "Unexpected SaslAuthenticate: no SaslHandshake before it";
        if (s->refusal == SASL_REFUSED_PRINCIPAL_CHANGE) {
            /* The client proved both identities, so naming them tells it nothing new. */
            char *m = arena_alloc(req->arena, 2 * NET_PRINCIPAL_MAX + 96);
            if (m)
                snprintf(m, 2 * NET_PRINCIPAL_MAX + 96,
                         "Cannot change principals during re-authentication from %s to User:%s",
                         req->session->principal, s->user);
            rs->ErrorMessage = m ? m : (char *)auth_failed_msg;
        }
        /* A raw token has no way to carry an error, and Kafka answers nothing to the token
         * after a changed mechanism's handshake: the connection just closes. */
        bool answer = !req->raw_sasl && s->refusal != SASL_REFUSED_MECHANISM_CHANGE;
        net_respond_close(req, answer ? rs : NULL, failure_delay(d));
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
        /* KIP-368: the session lasts connections.max.reauth.ms of its mechanism (no credential
         * Tally serves expires by itself). v0 answers have no field to tell the client. */
        int64_t life =
            d->clock ? sasl_session_lifetime_ms(s->cfg->max_reauth_ms[s->mech], SASL_NO_EXPIRY)
                     : -1;
        c->expires_ms = life < 0 ? -1 : now_ms(d) + life;
        rs->SessionLifetimeMs = life < 0 ? 0 : life;
        req->session->authenticated = true;
        req->session->sasl_raw = false;
        snprintf(req->session->principal, sizeof req->session->principal, "User:%s", s->user);
        if (s->reauth)
            count_reauth(d, req, true);
        slog_debug("sasl", "%s %s as %s with %s on listener %s (session lifetime %lld ms)",
                   req->peer, s->reauth ? "re-authenticated" : "authenticated",
                   req->session->principal, sasl_mech_name(s->mech), req->session->listener,
                   (long long)life);
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
