/* SPDX-License-Identifier: Apache-2.0 */
/* envelope: KIP-590's Envelope (API key 58), which carries a forwarded request to the
 * controller with the identity of the client that sent it, so that the controller decides it
 * — quotas and ACLs — for that client and not for the forwarding broker.
 *
 * EnvelopeRequest v0 (flexible):
 *   RequestData        BYTES           the client's request as a frame without its 4-byte
 *                                      size: request header (its ClientId, correlation id)
 *                                      and body, at the client's version
 *   RequestPrincipal   nullable BYTES  DefaultPrincipalData, version-prefixed (below)
 *   ClientHostAddress  BYTES           the client's IP address: 4 bytes (IPv4) or 16 (IPv6)
 * EnvelopeResponse v0 (flexible):
 *   ResponseData       nullable BYTES  the inner response without its size: response header
 *                                      (the inner correlation id) and body; null on error
 *   ErrorCode          INT16           the envelope's own error (the inner one is inside)
 *
 * The principal, as Kafka's DefaultKafkaPrincipalBuilder serializes it:
 **   SIZE  FIELD
 **      2  INT16 version (0)
 **      n  DefaultPrincipalData v0, flexible: COMPACT_STRING Type ("User"),
 **         COMPACT_STRING Name, BOOL TokenAuthenticated, tagged fields
 *
 * On the controller (admin_envelope): only a principal with CLUSTER_ACTION on the cluster may
 * send one (CLUSTER_AUTHORIZATION_FAILED otherwise, as Kafka's ControllerApis refuse it); only
 * the active controller unwraps one (NOT_CONTROLLER otherwise, which the forwarding broker
 * retries); a principal that does not decode is PRINCIPAL_DESERIALIZATION_FAILURE, and an
 * address, header or body that does not, or an API that is not forwarded, INVALID_REQUEST —
 * each with one log line. The inner request runs as a detached request (net.h) whose session
 * holds the client's principal and whose header its ClientId, through the same handler a
 * client's own request reaches, so the controller mutation quota and the authorizer see the
 * client. Its answer is encoded into the EnvelopeResponse. The inner throttle is in the inner
 * answer's ThrottleTimeMs; the forwarding broker mutes its client's connection for it
 * (forward.c), since the controller's connection is the broker's. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin_int.h"
#include "authz/authz.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/slog.h"
#include "meta/meta.h"
#include "net/net.h"
#include "proto/proto.h"

#define ENVELOPE_WARN_MS 10000

int admin_envelope_principal_encode(const char *principal, struct arena *ar,
                                    struct proto_bytes *out)
{
    const char *colon = strchr(principal, ':');
    struct DefaultPrincipalData d = {0};
    uint8_t *buf;
    size_t n;

    if (colon == NULL)
        return ERR_PARSE;
    d.Type = arena_strndup(ar, principal, (size_t)(colon - principal));
    d.Name = arena_strndup(ar, colon + 1, strlen(colon + 1));
    if (d.Type == NULL || d.Name == NULL)
        return ERR_NOMEM;
    n = proto_record_size(&proto_record_DefaultPrincipalData, 0, &d);
    if (n > INT32_MAX || (buf = arena_alloc(ar, n)) == NULL)
        return ERR_NOMEM;
    proto_record_encode(&proto_record_DefaultPrincipalData, 0, &d, buf);
    out->data = buf;
    out->len = (int32_t)n;
    out->ext = NULL;
    return 0;
}

int admin_envelope_principal_decode(const struct proto_bytes *in, struct arena *ar, char *out,
                                    size_t cap)
{
    struct DefaultPrincipalData d = {0};
    int rc;

    if (in->len < 0 || in->data == NULL)
        return ERR_PARSE;
    rc = proto_record_decode(&proto_record_DefaultPrincipalData, in->data, (size_t)in->len, NULL,
                             &d, ar);
    if (rc != 0)
        return rc == ERR_NOMEM ? rc : ERR_PARSE;
    if (d.Type == NULL || d.Name == NULL || d.Type[0] == '\0' || strchr(d.Type, ':') != NULL ||
        (size_t)snprintf(out, cap, "%s:%s", d.Type, d.Name) >= cap)
        return ERR_PARSE;
    return 0;
}

int admin_envelope_host_encode(const char *peer, uint8_t out[16], int32_t *len)
{
    char host[64];
    size_t n;

    authz_peer_host(peer, host, sizeof host);
    n = strlen(host);
    /* "[::1]" as net writes an IPv6 peer. */
    if (n >= 2 && host[0] == '[' && host[n - 1] == ']') {
        memmove(host, host + 1, n - 2);
        host[n - 2] = '\0';
    }
    if (inet_pton(AF_INET, host, out) == 1) {
        *len = 4;
        return 0;
    }
    if (inet_pton(AF_INET6, host, out) == 1) {
        *len = 16;
        return 0;
    }
    return ERR_PARSE;
}

int admin_envelope_wrap(const struct net_request *req, struct arena *ar,
                        struct EnvelopeRequest *out)
{
    uint8_t *frame = NULL, *data, *host;
    size_t len = 0;
    int32_t host_len = 0;
    int rc;

    memset(out, 0, sizeof *out);
    host = arena_alloc(ar, 16);
    if (host == NULL)
        return ERR_NOMEM;
    if (admin_envelope_host_encode(req->peer, host, &host_len) != 0)
        return ERR_PARSE;
    rc = admin_envelope_principal_encode(req->session->principal, ar, &out->RequestPrincipal);
    if (rc != 0)
        return rc;
    rc = proto_encode_request(req->api, req->hdr.RequestApiVersion, req->hdr.CorrelationId,
                              req->hdr.ClientId, req->body, &frame, &len);
    if (rc != 0)
        return rc;
    /* Without the frame's 4-byte size: RequestData is the header and body. */
    data = len >= 4 && len - 4 <= INT32_MAX ? arena_alloc(ar, len - 4) : NULL;
    if (data == NULL) {
        free(frame);
        return ERR_NOMEM;
    }
    memcpy(data, frame + 4, len - 4);
    free(frame);
    out->RequestData.data = data;
    out->RequestData.len = (int32_t)(len - 4);
    out->ClientHostAddress.data = host;
    out->ClientHostAddress.len = host_len;
    return 0;
}

int admin_envelope_unwrap_response(const struct proto_api *api, int16_t version,
                                   const struct EnvelopeResponse *rs, struct arena *ar, void **out)
{
    int32_t corr;
    if (rs->ResponseData.len <= 0 || rs->ResponseData.data == NULL)
        return ERR_PARSE;
    return proto_decode_response(api, version, rs->ResponseData.data, (size_t)rs->ResponseData.len,
                                 &corr, out, ar);
}

/* ---- the controller's side ----------------------------------------------------------------- */

/* What the inner request's answer needs to reach the envelope's. */
struct envelope_call {
    struct net_request *outer;
    const struct proto_api *api;
    int32_t correlation_id;
};

static void answer(struct net_request *outer, int16_t err, const uint8_t *data, size_t len)
{
    struct EnvelopeResponse *rs = arena_alloc(outer->arena, sizeof *rs);
    if (rs == NULL) {
        net_close_connection(outer);
        return;
    }
    rs->ErrorCode = err;
    rs->ResponseData.data = data;
    rs->ResponseData.len = data ? (int32_t)len : -1;
    net_respond(outer, rs);
}

static void inner_done(void *arg, enum net_detached_end how, int16_t version, const void *resp)
{
    struct envelope_call *call = arg;
    struct net_request *outer = call->outer;
    uint8_t *frame = NULL, *data;
    size_t len = 0;

    if (how != NET_DETACHED_RESPONDED) {
        /* The handler dropped the request as malformed (it would have closed a client's
         * connection): the envelope says so instead. */
        slog_warn("admin", "a forwarded %s from %s got no answer; INVALID_REQUEST", call->api->name,
                  outer->peer);
        answer(outer, ERR_INVALID_REQUEST, NULL, 0);
        return;
    }
    if (proto_encode_response(call->api, version, call->correlation_id, resp, &frame, &len) != 0 ||
        len < 4 || (data = arena_alloc(outer->arena, len - 4)) == NULL) {
        free(frame);
        slog_error("admin", "out of memory answering an envelope from %s; closing", outer->peer);
        net_close_connection(outer);
        return;
    }
    memcpy(data, frame + 4, len - 4);
    free(frame);
    answer(outer, 0, data, len - 4);
}

static void refuse(struct admin *a, struct net_request *req, int16_t err, const char *why)
{
    slog_warn_limited(&a->forward_warn, ENVELOPE_WARN_MS, "admin", "envelope from %s (%s): %s; %s",
                      req->peer, req->session->principal, why, err_name(err));
    answer(req, err, NULL, 0);
}

void admin_envelope(struct admin *a, struct net_request *req, admin_envelope_run_fn run, void *ctx)
{
    const struct EnvelopeRequest *rq = req->body;
    struct RequestHeader hdr = {0};
    const struct proto_api *api;
    struct envelope_call *call;
    struct net_request *inner;
    struct arena *ar;
    char principal[NET_PRINCIPAL_MAX], host[INET6_ADDRSTRLEN], *peer;
    size_t hdr_len = 0, len;
    void *body = NULL;

    /* Kafka's ControllerApis.handleEnvelopeRequest: CLUSTER_ACTION first (logged as a denial). */
    if (!authz_allowed(req, PROTO_ACL_OP_CLUSTER_ACTION, PROTO_RESOURCE_CLUSTER, AUTHZ_CLUSTER)) {
        refuse(a, req, ERR_CLUSTER_AUTHORIZATION_FAILED, "no CLUSTER_ACTION on the cluster");
        return;
    }
    if (!meta_is_controller(a->meta)) {
        answer(req, ERR_NOT_CONTROLLER, NULL, 0);
        return;
    }
    if (admin_envelope_principal_decode(&rq->RequestPrincipal, req->arena, principal,
                                        sizeof principal) != 0) {
        refuse(a, req, ERR_PRINCIPAL_DESERIALIZATION_FAILURE, "the principal does not decode");
        return;
    }
    if ((rq->ClientHostAddress.len != 4 && rq->ClientHostAddress.len != 16) ||
        inet_ntop(rq->ClientHostAddress.len == 4 ? AF_INET : AF_INET6, rq->ClientHostAddress.data,
                  host, sizeof host) == NULL) {
        refuse(a, req, ERR_INVALID_REQUEST, "the client address is not an IP address");
        return;
    }
    len = rq->RequestData.len > 0 ? (size_t)rq->RequestData.len : 0;
    /* The inner request's own memory, bounded as net bounds a client's frame. */
    size_t limit = len * 16 + (1u << 20);
    ar = arena_new(limit > (256u << 20) ? 256u << 20 : limit);
    if (ar == NULL) {
        slog_error("admin", "out of memory for an envelope from %s; closing", req->peer);
        net_close_connection(req);
        return;
    }
    if (len == 0 ||
        proto_decode_request_header(rq->RequestData.data, len, &hdr, &hdr_len, ar) != 0 ||
        (api = proto_api_find(hdr.RequestApiKey)) == NULL || !admin_api_forwarded(api->key) ||
        hdr.RequestApiVersion < api->min_version || hdr.RequestApiVersion > api->max_version ||
        proto_decode_request(api, hdr.RequestApiVersion, rq->RequestData.data + hdr_len,
                             len - hdr_len, &body, ar) != 0) {
        arena_free(ar);
        refuse(a, req, ERR_INVALID_REQUEST, "the inner request is malformed or not forwardable");
        return;
    }
    call = arena_alloc(req->arena, sizeof *call);
    peer = arena_alloc(ar, strlen(host) + 3);
    if (call == NULL || peer == NULL) {
        arena_free(ar);
        slog_error("admin", "out of memory for an envelope from %s; closing", req->peer);
        net_close_connection(req);
        return;
    }
    /* "host:0": a peer as authz_peer_host reads it (the client's port is not forwarded). */
    snprintf(peer, strlen(host) + 3, "%s:0", host);
    call->outer = req;
    call->api = api;
    call->correlation_id = hdr.CorrelationId;
    inner = net_request_detached_new(api->key, hdr.RequestApiVersion, body, ar, inner_done, call);
    if (inner == NULL) { /* the arena is freed */
        slog_error("admin", "out of memory for an envelope from %s; closing", req->peer);
        net_close_connection(req);
        return;
    }
    inner->hdr = hdr;
    inner->peer = peer;
    snprintf(inner->session->principal, sizeof inner->session->principal, "%s", principal);
    inner->session->authz = req->session->authz;
    slog_debug("admin", "envelope from %s: %s v%d of %s (%s, client id %s)", req->peer, api->name,
               hdr.RequestApiVersion, principal, host, hdr.ClientId ? hdr.ClientId : "");
    run(ctx, inner);
}
