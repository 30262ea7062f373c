/* SPDX-License-Identifier: Apache-2.0 */
/* net: detached requests, which belong to no connection, so that a unit test can call a
 * request handler directly and see how it finished. They are struct req_int with conn NULL;
 * net.c's finishing calls hand them to detached_finish instead of a connection's queue. */
#include <stdio.h>
#include <stdlib.h>

#include "base/arena.h"
#include "base/err.h"
#include "net_int.h"

struct net_request *net_request_detached_new(int16_t api_key, int16_t version, void *body,
                                             struct arena *arena, net_detached_cb cb, void *arg)
{
    const struct proto_api *api = proto_api_find(api_key);
    struct req_int *r;

    if (api == NULL || version < api->min_version || version > api->max_version ||
        (r = calloc(1, sizeof *r)) == NULL) {
        arena_free(arena);
        return NULL;
    }
    r->pub.hdr.RequestApiKey = api_key;
    r->pub.hdr.RequestApiVersion = version;
    r->pub.hdr.CorrelationId = 1;
    r->pub.hdr.ClientId = "detached";
    r->pub.api = api;
    r->pub.version_supported = true;
    r->pub.body = body;
    r->pub.arena = arena;
    r->pub.peer = "detached";
    r->detached_session.authenticated = true;
    snprintf(r->detached_session.principal, sizeof r->detached_session.principal, "User:ANONYMOUS");
    r->pub.session = &r->detached_session;
    r->detached_cb = cb;
    r->detached_arg = arg;
    return &r->pub;
}

void net_request_detached_close(struct net_request *req)
{
    struct req_int *r = (struct req_int *)req;
    void (*hook)(void *) = r->on_close;

    if (r->detached_closed)
        return;
    r->detached_closed = true;
    r->on_close = NULL;
    if (hook)
        hook(r->on_close_arg); /* may finish, and so free, the request */
}

void detached_finish(struct req_int *r, enum net_detached_end how, int16_t version,
                     const void *resp, bool files)
{
    if (r->detached_closed && how == NET_DETACHED_RESPONDED)
        how = NET_DETACHED_FINISHED; /* nobody to answer: dropped, as on a closed socket */
    if (how == NET_DETACHED_RESPONDED) {
        /* Encoded as it would be for a socket, so that an unencodable answer shows. */
        int rc =
            files ? proto_encode_response_holes(r->pub.api, version, r->pub.hdr.CorrelationId, resp,
                                                &r->resp, &r->resp_len, &r->holes, &r->n_holes)
                  : proto_encode_response(r->pub.api, version, r->pub.hdr.CorrelationId, resp,
                                          &r->resp, &r->resp_len);
        if (rc != 0)
            how = NET_DETACHED_CLOSED;
    }
    if (r->detached_cb)
        r->detached_cb(r->detached_arg, how, version, how == NET_DETACHED_RESPONDED ? resp : NULL);
    if (r->sent)
        r->sent(r->sent_arg);
    free(r->holes);
    arena_free(r->pub.arena);
    free(r->resp);
    free(r);
}
