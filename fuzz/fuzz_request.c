/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target for the request decoder. The input is a request frame after its 4-byte
 * size: the header is decoded, the API looked up, the body decoded in a 1 MiB arena (the
 * broker's per-request bound), and whatever decodes is re-encoded, checking that
 * proto_size and the encoder agree and that the re-encoded body decodes again. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/err.h"
#include "proto/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct arena *a = arena_new(1 << 20);
    const struct proto_api *api;
    struct RequestHeader h;
    size_t hdr_len, frame_len, body_size;
    uint8_t *frame = NULL;
    void *req = NULL, *again = NULL;
    bool flexible;

    if (a == NULL)
        return 0;
    if (proto_decode_request_header(data, size, &h, &hdr_len, a) != 0)
        goto out;
    api = proto_api_find(h.RequestApiKey);
    if (api == NULL || h.RequestApiVersion < api->min_version ||
        h.RequestApiVersion > api->max_version)
        goto out;
    if (proto_decode_request(api, h.RequestApiVersion, data + hdr_len, size - hdr_len, &req, a) !=
        0)
        goto out;

    flexible = proto_api_flexible(api, h.RequestApiVersion);
    body_size = proto_size(api->request, h.RequestApiVersion, flexible, req);
    if (proto_encode_request(api, h.RequestApiVersion, h.CorrelationId, h.ClientId, req, &frame,
                             &frame_len) != 0)
        goto out;
    /* The frame is size + header + body; the header is re-encoded without unknown tags. */
    {
        size_t id_len = h.ClientId ? strlen(h.ClientId) : 0;
        size_t want = 4 + 10 + id_len + (flexible ? 1 : 0) + body_size;
        if (frame_len != want)
            abort();
    }
    /* What we encoded must decode, to the same bytes again. */
    {
        size_t hl;
        uint8_t *frame2;
        size_t frame2_len;
        struct RequestHeader h2;
        if (proto_decode_request_header(frame + 4, frame_len - 4, &h2, &hl, a) != 0)
            abort();
        int rc = proto_decode_request(api, h.RequestApiVersion, frame + 4 + hl, frame_len - 4 - hl,
                                      &again, a);
        /* Only the arena may run out: the re-decode allocates a second copy in it. */
        if (rc == ERR_NOMEM)
            goto out;
        if (rc != 0)
            abort();
        if (proto_encode_request(api, h.RequestApiVersion, h.CorrelationId, h.ClientId, again,
                                 &frame2, &frame2_len) != 0)
            goto out;
        if (frame2_len != frame_len || memcmp(frame, frame2, frame_len) != 0)
            abort();
        free(frame2);
    }
out:
    free(frame);
    arena_free(a);
    return 0;
}
