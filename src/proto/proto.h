/* SPDX-License-Identifier: Apache-2.0 */
/* proto: the Kafka wire protocol as data. Every API's request and response is declared once
 * (proto_msgs.h: C structs with the schema's field names; schema_*.c: the field tables)
 * and one generic decoder / sizer / encoder walks those tables for any version.
 *
 * C representation of each wire type, as used in the message structs:
 *   BOOL bool, INT8 int8_t, INT16 int16_t, UINT16 uint16_t, INT32 int32_t, UINT32 uint32_t,
 *   INT64 int64_t, FLOAT64 double, UUID struct proto_uuid,
 *   STRING char * (NUL-terminated; NULL = null string). A NUL byte inside a string on the
 *          wire is held as the two bytes C0 80 (Java's "modified UTF-8" form of U+0000),
 *          which the encoder turns back into one NUL: such a string stays distinct from its
 *          prefix, fails every name check, and is echoed to the client as it was sent,
 *   BYTES / RECORDS struct proto_bytes (len -1 = null),
 *   ARRAY PROTO_ARRAY(T) = { T *v; int32_t n; } (n -1 = null array),
 *   STRUCT an embedded struct.
 * Compact encodings, tagged fields and the header versions follow the API's flexible
 * versions; callers never see the difference. */
#ifndef TALLY_PROTO_H
#define TALLY_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct arena;

enum proto_type {
    PROTO_BOOL,
    PROTO_INT8,
    PROTO_INT16,
    PROTO_UINT16,
    PROTO_INT32,
    PROTO_UINT32,
    PROTO_INT64,
    PROTO_FLOAT64,
    PROTO_UUID,
    PROTO_STRING,
    PROTO_BYTES,
    PROTO_RECORDS,
    PROTO_ARRAY,
    PROTO_STRUCT,
};

struct proto_uuid {
    uint8_t b[16];
};

struct proto_bytes {
    const uint8_t *data; /* decoded: points into the input buffer, not copied */
    int32_t len;         /* -1 = null */
    /* Encoding only, for zero-copy sends: when not NULL, proto_encode_response_holes()
     * writes the length prefix for `len` bytes but not the bytes themselves, and records a
     * hole {at, len, ext} instead (see struct proto_hole); `ext` is the caller's, opaque
     * here (e.g. a segment file slice). Every other encoder ignores it and writes `data`
     * (zeros if `data` is NULL). Decoding always leaves it NULL. */
    const void *ext;
};

/* An array of T: layout shared by every element type, so the codec can fill any of them. */
#define PROTO_ARRAY(T)                                                                             \
    struct {                                                                                       \
        T *v;                                                                                      \
        int32_t n;                                                                                 \
    }

struct proto_struct;

/* One field of a struct, as the schema declares it. */
struct proto_field {
    const char *name;
    uint8_t type;                   /* enum proto_type */
    uint8_t elem_type;              /* PROTO_ARRAY: the element type */
    int16_t min_version;            /* present in versions [min_version, max_version] */
    int16_t max_version;            /* INT16_MAX = no upper bound */
    int16_t nullable_min;           /* first version in which null is allowed; -1 = never */
    int32_t tag;                    /* -1 = regular field; >= 0 = tagged field (flexible only) */
    uint32_t offset;                /* offsetof the field in the C struct */
    const struct proto_struct *sub; /* STRUCT, or ARRAY of STRUCT: the element's layout */
    int64_t def;                    /* integer/bool default when absent from a version */
};

struct proto_struct {
    const char *name;
    uint32_t size; /* sizeof the C struct (element stride for arrays) */
    uint16_t nfields;
    const struct proto_field *fields;
};

/* One API: key, supported version range, first flexible version (-1 = none). */
struct proto_api {
    int16_t key;
    const char *name;
    int16_t min_version, max_version;
    int16_t flexible_min;
    const struct proto_struct *request, *response;
};

/* The APIs this broker declares, in ascending key order; `*n` receives the count. */
const struct proto_api *proto_apis(size_t *n);

/* The declaration of API `key`, or NULL when the broker has none. */
const struct proto_api *proto_api_find(int16_t key);

static inline bool proto_api_flexible(const struct proto_api *api, int16_t version)
{
    return api->flexible_min >= 0 && version >= api->flexible_min;
}

/* Request header, v0-v2. ClientId is a nullable (never compact) string in every version. */
struct RequestHeader {
    int16_t RequestApiKey;
    int16_t RequestApiVersion;
    int32_t CorrelationId;
    char *ClientId;
};

/* Decodes the request header at buf[0..len) (the frame after its 4-byte size). The header
 * version follows from the API and version: v2 for flexible versions, v1 otherwise. For an
 * API or version the broker does not declare, the v1 fields are decoded and *hdr_len points
 * after them (tagged fields cannot be known). Strings are copied into `a`.
 * Returns 0, ERR_TRUNCATED / ERR_PARSE for a malformed header, ERR_NOMEM past the arena. */
int proto_decode_request_header(const uint8_t *buf, size_t len, struct RequestHeader *h,
                                size_t *hdr_len, struct arena *a);

/* Decodes a struct of layout `s` at `version` from buf[0..len) into `out` (zeroed by the
 * caller, `s->size` bytes); absent fields get their defaults. Arrays and strings are
 * allocated in `a`; BYTES/RECORDS point into buf. Unknown tagged fields are skipped; tags
 * must come in strictly ascending order (KIP-482), so a repeated or out-of-order tag is
 * malformed. *consumed receives the bytes read. Returns 0, ERR_TRUNCATED, ERR_PARSE (bad
 * length, null where not nullable, tags out of order, ...) or ERR_NOMEM (arena limit; array counts
 * are also bounded by the bytes left, so a huge count cannot allocate). */
int proto_decode(const struct proto_struct *s, int16_t version, bool flexible, const uint8_t *buf,
                 size_t len, size_t *consumed, void *out, struct arena *a);

/* The encoded size of `in` (layout `s`) at `version`: the size on the wire, hole bytes
 * (proto_bytes.ext) included. */
size_t proto_size(const struct proto_struct *s, int16_t version, bool flexible, const void *in);

/* Encodes `in` into buf, which must hold proto_size() bytes; returns the bytes written.
 * Fields absent from `version` are skipped; null where not nullable encodes as empty. */
size_t proto_encode(const struct proto_struct *s, int16_t version, bool flexible, const void *in,
                    uint8_t *buf);

/* Decodes a whole request body of `api` at `version` into a new struct allocated in `a`.
 * Returns 0 and *out, or an error as proto_decode (trailing bytes are ignored, as Kafka
 * does for forward compatibility). */
int proto_decode_request(const struct proto_api *api, int16_t version, const uint8_t *body,
                         size_t len, void **out, struct arena *a);

/* Encodes a complete response frame: 4-byte size, response header (v1 for flexible
 * versions, v0 otherwise, and always v0 for ApiVersions), then `resp` (layout
 * api->response). On success *frame is malloc()ed and owned by the caller. Returns 0 or
 * ERR_NOMEM. */
int proto_encode_response(const struct proto_api *api, int16_t version, int32_t correlation_id,
                          const void *resp, uint8_t **frame, size_t *frame_len);

/* One hole in a frame encoded by proto_encode_response_holes(): `len` bytes that belong
 * on the wire at buffer position `at` (where they would have started in the buffer, which
 * does not contain them), to be supplied from `ext` (the proto_bytes field's ext). */
struct proto_hole {
    size_t at;
    size_t len;
    const void *ext;
};

/* Like proto_encode_response, but BYTES/RECORDS fields with ext != NULL and len > 0 become
 * holes: *frame holds everything except the hole bytes, while its 4-byte size prefix counts
 * them, so the frame on the wire is
 *   frame[0..h0.at) + hole0 bytes + frame[h0.at..h1.at) + hole1 bytes + ... + frame[hN.at..)
 * *holes is malloc()ed and owned by the caller (NULL when there are none), in ascending
 * `at` order; *frame as for proto_encode_response. A null field (len -1 where nullable) or
 * an empty one (len 0) makes no hole. Returns 0 or ERR_NOMEM (nothing allocated then). */
int proto_encode_response_holes(const struct proto_api *api, int16_t version,
                                int32_t correlation_id, const void *resp, uint8_t **frame,
                                size_t *frame_len, struct proto_hole **holes, size_t *n_holes);

/* Encodes a complete request frame (4-byte size, request header v1/v2, body): for tests,
 * fuzz seeds and any broker-to-broker client. *frame is malloc()ed and owned by caller. */
int proto_encode_request(const struct proto_api *api, int16_t version, int32_t correlation_id,
                         const char *client_id, const void *req, uint8_t **frame,
                         size_t *frame_len);

/* Decodes a response frame (after its 4-byte size): the response header (v1 for flexible
 * versions except ApiVersions, else v0) and, when `out` is not NULL, the body of layout
 * api->response at `version` into a new struct allocated in `a`. With out == NULL only
 * *correlation_id is read (to find the request a frame answers before decoding it).
 * Returns 0, or an error as proto_decode. For the outbound client and tests. */
int proto_decode_response(const struct proto_api *api, int16_t version, const uint8_t *buf,
                          size_t len, int32_t *correlation_id, void **out, struct arena *a);

/* ---- authorized operations ---------------------------------------------------------------- */

/* Kafka's ACL resource types and operations (their wire codes). */
enum proto_resource_type {
    PROTO_RESOURCE_TOPIC = 2,
    PROTO_RESOURCE_GROUP = 3,
    PROTO_RESOURCE_CLUSTER = 4,
    PROTO_RESOURCE_TRANSACTIONAL_ID = 5,
    PROTO_RESOURCE_DELEGATION_TOKEN = 6,
    PROTO_RESOURCE_USER = 7,
};
enum proto_acl_op {
    PROTO_ACL_OP_READ = 3,
    PROTO_ACL_OP_WRITE = 4,
    PROTO_ACL_OP_CREATE = 5,
    PROTO_ACL_OP_DELETE = 6,
    PROTO_ACL_OP_ALTER = 7,
    PROTO_ACL_OP_DESCRIBE = 8,
    PROTO_ACL_OP_CLUSTER_ACTION = 9,
    PROTO_ACL_OP_DESCRIBE_CONFIGS = 10,
    PROTO_ACL_OP_ALTER_CONFIGS = 11,
    PROTO_ACL_OP_IDEMPOTENT_WRITE = 12,
    PROTO_ACL_OP_CREATE_TOKENS = 13,
    PROTO_ACL_OP_DESCRIBE_TOKENS = 14,
};

/* The *AuthorizedOperations bit field (bit n = operation code n) for a resource of the given
 * type when no authorizer is configured: every operation Kafka supports on that type, as
 * Kafka answers without an authorizer (TOPIC 3576, GROUP 328, CLUSTER 8096). 0 for an
 * unknown type. Callers answer INT32_MIN instead when the client did not ask. */
int32_t proto_authorized_ops(int8_t resource_type);

/* A versioned record format, not an API: the key or value of a record the coordinators write
 * to __consumer_offsets and __transaction_state, or the consumer's protocol metadata carried
 * opaquely in JoinGroup/SyncGroup. On the wire each is
 *
 **   SIZE  FIELD
 **      2  INT16 version
 **      n  the struct of `layout` at that version: compact, with tagged-field sections,
 **         from flexible_min on (the format's "flexibleVersions"), classic before
 *
 * The proto_record_* functions below do that framing. To work on a bare struct (no version
 * prefix), call proto_size / proto_encode / proto_decode with r->layout, the version and
 * proto_record_flexible(r, version). The declared formats are in proto_msgs.h
 * (proto_record_OffsetCommitKey, ...). */
struct proto_record {
    const char *name;
    int16_t min_version, max_version;
    int16_t flexible_min; /* first flexible version, -1 = none */
    /* A version past max_version decodes as max_version (the consumer protocol's rule: newer
     * versions only append fields); when false such a version is refused. */
    bool newer_as_max;
    const struct proto_struct *layout;
};

static inline bool proto_record_flexible(const struct proto_record *r, int16_t version)
{
    return r->flexible_min >= 0 && version >= r->flexible_min;
}

/* Reads the INT16 version that starts a record (for a __consumer_offsets key it tells which
 * format follows: PROTO_OFFSET_COMMIT_KEY_V0/V1 or PROTO_GROUP_METADATA_KEY_V). Returns 0 or
 * ERR_TRUNCATED (fewer than 2 bytes). */
int proto_record_version(const uint8_t *buf, size_t len, int16_t *version);

/* The size of `in` (layout r->layout) framed at `version`, the 2-byte prefix included. */
size_t proto_record_size(const struct proto_record *r, int16_t version, const void *in);

/* Writes the version prefix and `in` at `version` into buf, which must hold
 * proto_record_size() bytes; returns the bytes written. `version` must be in
 * [r->min_version, r->max_version] (the caller picks it; nothing is checked). */
size_t proto_record_encode(const struct proto_record *r, int16_t version, const void *in,
                           uint8_t *buf);

/* Decodes a framed record from buf[0..len) into `out` (zeroed by the caller, r->layout->size
 * bytes), as proto_decode does (strings and arrays in `a`, BYTES pointing into buf). Trailing
 * bytes after the struct are ignored, as Kafka ignores them. *version (may be NULL) receives
 * the version on the wire. Returns 0, ERR_TRUNCATED, ERR_PARSE, ERR_NOMEM, or
 * ERR_UNSUPPORTED_VERSION for a version below min_version, or above max_version unless
 * r->newer_as_max. */
int proto_record_decode(const struct proto_record *r, const uint8_t *buf, size_t len,
                        int16_t *version, void *out, struct arena *a);

#include "proto_msgs.h"

#endif
