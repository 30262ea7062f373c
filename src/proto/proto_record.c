/* SPDX-License-Identifier: Apache-2.0 */
/* proto_record: the INT16-version framing of the record formats (proto.h, struct
 * proto_record) around the generic codec of proto.c. */
#include "proto/proto_int.h"

#include <stdlib.h>

#include "base/err.h"

int proto_record_version(const uint8_t *buf, size_t len, int16_t *version)
{
    if (len < 2)
        return ERR_TRUNCATED;
    *version = (int16_t)(uint16_t)((unsigned)buf[0] << 8 | buf[1]);
    return 0;
}

size_t proto_record_size(const struct proto_record *r, int16_t version, const void *in)
{
    return 2 + proto_size(r->layout, version, proto_record_flexible(r, version), in);
}

size_t proto_record_encode(const struct proto_record *r, int16_t version, const void *in,
                           uint8_t *buf)
{
    buf[0] = (uint8_t)((uint16_t)version >> 8);
    buf[1] = (uint8_t)version;
    return 2 + proto_encode(r->layout, version, proto_record_flexible(r, version), in, buf + 2);
}

int proto_record_decode(const struct proto_record *r, const uint8_t *buf, size_t len,
                        int16_t *version, void *out, struct arena *a)
{
    int16_t v, as;
    size_t consumed;
    int rc;

    rc = proto_record_version(buf, len, &v);
    if (rc)
        return rc;
    as = v;
    if (v > r->max_version && r->newer_as_max)
        as = r->max_version;
    if (as < r->min_version || as > r->max_version)
        return ERR_UNSUPPORTED_VERSION;
    rc = proto_decode(r->layout, as, proto_record_flexible(r, as), buf + 2, len - 2, &consumed, out,
                      a);
    if (rc)
        return rc;
    if (version)
        *version = v;
    return 0;
}

int proto_record_encode_alloc(const struct proto_record *r, int16_t version, const void *in,
                              uint8_t **out, int32_t *len)
{
    size_t n = proto_record_size(r, version, in);
    uint8_t *buf = malloc(n);
    if (buf == NULL)
        return ERR_NOMEM;
    *len = (int32_t)proto_record_encode(r, version, in, buf);
    *out = buf;
    return 0;
}
