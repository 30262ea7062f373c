/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of proto: every declared message round-trips at every version, hand-written
 * byte vectors from the protocol guide, malformed input, and unknown tagged fields. */
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/err.h"
#include "harness.h"
#include "proto/proto.h"

/* ---------------------------------------------------------------------------------------- */
/* A filler that walks a layout and sets every field to a value other than its default, so
 * that a round trip exercises every field the version carries. `null_variant` makes every
 * field that is nullable at `version` null instead. */

struct filler {
    struct arena *a;
    int16_t version;
    bool null_variant;
    unsigned counter;
};

static bool nullable_at(const struct proto_field *f, int16_t version)
{
    return f->nullable_min >= 0 && version >= f->nullable_min;
}

static void fill_struct(struct filler *fl, const struct proto_struct *s, uint8_t *out);

static size_t stride_of(uint8_t type, const struct proto_struct *sub)
{
    switch (type) {
    case PROTO_BOOL:
        return sizeof(bool);
    case PROTO_INT8:
        return 1;
    case PROTO_INT16:
    case PROTO_UINT16:
        return 2;
    case PROTO_INT32:
    case PROTO_UINT32:
        return 4;
    case PROTO_INT64:
    case PROTO_FLOAT64:
        return 8;
    case PROTO_UUID:
        return 16;
    case PROTO_STRING:
        return sizeof(char *);
    case PROTO_BYTES:
    case PROTO_RECORDS:
        return sizeof(struct proto_bytes);
    default:
        return sub->size;
    }
}

static void fill_value(struct filler *fl, uint8_t type, const struct proto_struct *sub,
                       bool may_null, int64_t def, uint8_t *p)
{
    /* Values step through both signs and several magnitudes, never the default. */
    int64_t v = (int64_t)(++fl->counter * 37u % 113u) - 50;
    if (v == def)
        v++;
    switch (type) {
    case PROTO_BOOL: {
        bool b = def == 0;
        memcpy(p, &b, sizeof b);
        break;
    }
    case PROTO_INT8: {
        int8_t x = (int8_t)v;
        memcpy(p, &x, sizeof x);
        break;
    }
    case PROTO_INT16: {
        int16_t x = (int16_t)(v * 300);
        if (x == def)
            x++;
        memcpy(p, &x, sizeof x);
        break;
    }
    case PROTO_UINT16: {
        uint16_t x = (uint16_t)(v + 60000);
        memcpy(p, &x, sizeof x);
        break;
    }
    case PROTO_INT32: {
        int32_t x = (int32_t)(v * 40000000);
        if (x == def)
            x++;
        memcpy(p, &x, sizeof x);
        break;
    }
    case PROTO_UINT32: {
        uint32_t x = (uint32_t)(v + 4000000000);
        memcpy(p, &x, sizeof x);
        break;
    }
    case PROTO_INT64: {
        int64_t x = v * 100000000000LL;
        if (x == def)
            x++;
        memcpy(p, &x, sizeof x);
        break;
    }
    case PROTO_FLOAT64: {
        double x = (double)v + 0.5;
        memcpy(p, &x, sizeof x);
        break;
    }
    case PROTO_UUID:
        for (int i = 0; i < 16; i++)
            p[i] = (uint8_t)(fl->counter * 16 + (unsigned)i);
        break;
    case PROTO_STRING: {
        char *s = NULL;
        if (!(fl->null_variant && may_null))
            s = arena_printf(fl->a, "s%u-%s", fl->counter, fl->counter % 2 ? "é" : "topic.x");
        memcpy(p, &s, sizeof s);
        break;
    }
    case PROTO_BYTES:
    case PROTO_RECORDS: {
        struct proto_bytes b = {NULL, -1, NULL};
        if (!(fl->null_variant && may_null)) {
            uint8_t *d = arena_alloc(fl->a, 5);
            for (int i = 0; i < 5; i++)
                d[i] = (uint8_t)(fl->counter + (unsigned)i);
            b.data = d;
            b.len = 5;
        }
        memcpy(p, &b, sizeof b);
        break;
    }
    case PROTO_STRUCT:
        fill_struct(fl, sub, p);
        break;
    }
}

static void fill_struct(struct filler *fl, const struct proto_struct *s, uint8_t *out)
{
    for (uint16_t i = 0; i < s->nfields; i++) {
        const struct proto_field *f = &s->fields[i];
        uint8_t *p = out + f->offset;
        bool may_null = nullable_at(f, fl->version);

        if (f->type != PROTO_ARRAY) {
            fill_value(fl, f->type, f->sub, may_null, f->def, p);
            continue;
        }
        struct {
            void *v;
            int32_t n;
        } arr = {NULL, -1};
        if (!(fl->null_variant && may_null)) {
            size_t stride = stride_of(f->elem_type, f->sub);
            arr.n = 2;
            arr.v = arena_alloc(fl->a, 2 * stride);
            for (int j = 0; j < arr.n; j++)
                fill_value(fl, f->elem_type, f->sub, false, 0, (uint8_t *)arr.v + j * stride);
        }
        memcpy(p, &arr, sizeof arr);
    }
}

/* Encodes, decodes and re-encodes one filled struct; returns the number of failures. */
static int round_trip(const struct proto_struct *s, int16_t version, bool flexible,
                      bool null_variant, const char *what)
{
    struct arena *a = arena_new(1 << 22);
    struct filler fl = {a, version, null_variant, 0};
    uint8_t *in = arena_alloc(a, s->size), *out = arena_alloc(a, s->size);
    uint8_t *buf1, *buf2;
    size_t n1, n2, n3, consumed = 0;
    int rc, fails = 0;

    fill_struct(&fl, s, in);
    n1 = proto_size(s, version, flexible, in);
    buf1 = malloc(n1 + 1);
    n2 = proto_encode(s, version, flexible, in, buf1);
    rc = proto_decode(s, version, flexible, buf1, n2, &consumed, out, a);
    n3 = proto_size(s, version, flexible, out);
    buf2 = malloc(n3 + 1);
    if (rc == 0)
        proto_encode(s, version, flexible, out, buf2);
    if (n1 != n2 || rc != 0 || consumed != n2 || n3 != n2 || memcmp(buf1, buf2, n2) != 0) {
        char m[256];
        snprintf(m, sizeof m, "round trip %s v%d%s: size %zu enc %zu rc %d consumed %zu re %zu",
                 what, version, null_variant ? " (nulls)" : "", n1, n2, rc, consumed, n3);
        harness_fail(__FILE__, __LINE__, m);
        fails++;
    }
    free(buf1);
    free(buf2);
    arena_free(a);
    return fails;
}

TEST(proto_round_trip_every_message_every_version)
{
    size_t napis;
    const struct proto_api *apis = proto_apis(&napis);
    int checked = 0;

    REQUIRE(napis >= 28);
    for (size_t i = 0; i < napis; i++) {
        const struct proto_api *api = &apis[i];
        for (int16_t v = api->min_version; v <= api->max_version; v++) {
            bool flex = proto_api_flexible(api, v);
            for (int nv = 0; nv < 2; nv++) {
                round_trip(api->request, v, flex, nv, api->request->name);
                round_trip(api->response, v, flex, nv, api->response->name);
                checked += 2;
            }
        }
    }
    CHECK(checked > 100);
}

/* Responses as whole frames: the size, the correlation id, the header's tagged section for
 * flexible versions (not for ApiVersions), then exactly what proto_encode writes. */
static bool response_frame_ok(const struct proto_api *api, int16_t v, const void *resp,
                              size_t *frame_len)
{
    bool flex = proto_api_flexible(api, v);
    size_t hdr = 4 + (flex && api->key != PROTO_API_ApiVersions ? 1 : 0);
    size_t body = proto_size(api->response, v, flex, resp);
    uint8_t *frame, *want = malloc(body + 1);
    size_t len;
    bool ok;

    if (want == NULL || proto_encode_response(api, v, 77, resp, &frame, &len) != 0) {
        free(want);
        return false;
    }
    proto_encode(api->response, v, flex, resp, want);
    ok = len == 4 + hdr + body &&
         ((uint32_t)frame[0] << 24 | frame[1] << 16 | frame[2] << 8 | frame[3]) == len - 4 &&
         frame[4] == 0 && frame[5] == 0 && frame[6] == 0 && frame[7] == 77 &&
         (hdr == 4 || frame[8] == 0) && memcmp(frame + 4 + hdr, want, body) == 0;
    *frame_len = len;
    free(frame);
    free(want);
    return ok;
}

/* Requests also round-trip as whole frames: header + body, through the public entry points;
 * responses come out as response_frame_ok says (all of them smaller than the buffer
 * proto_encode_response tries first: a larger one below). */
TEST(proto_round_trip_request_and_response_frames)
{
    size_t napis;
    const struct proto_api *apis = proto_apis(&napis);

    for (size_t i = 0; i < napis; i++) {
        const struct proto_api *api = &apis[i];
        for (int16_t v = api->min_version; v <= api->max_version; v++) {
            struct arena *a = arena_new(1 << 22);
            struct filler fl = {a, v, false, 0};
            uint8_t *req = arena_alloc(a, api->request->size), *frame, *frame2;
            size_t len, len2, hdr_len;
            struct RequestHeader h;
            void *dec = NULL;
            int rc;

            fill_struct(&fl, api->request, req);
            REQUIRE(proto_encode_request(api, v, 1234, "client-1", req, &frame, &len) == 0);
            CHECK_EQ_INT(((uint32_t)frame[0] << 24 | frame[1] << 16 | frame[2] << 8 | frame[3]),
                         len - 4);
            rc = proto_decode_request_header(frame + 4, len - 4, &h, &hdr_len, a);
            CHECK_EQ_INT(rc, 0);
            CHECK_EQ_INT(h.RequestApiKey, api->key);
            CHECK_EQ_INT(h.RequestApiVersion, v);
            CHECK_EQ_INT(h.CorrelationId, 1234);
            CHECK_EQ_STR(h.ClientId, "client-1");
            rc = proto_decode_request(api, v, frame + 4 + hdr_len, len - 4 - hdr_len, &dec, a);
            CHECK_EQ_INT(rc, 0);
            if (rc == 0) {
                REQUIRE(proto_encode_request(api, v, 1234, "client-1", dec, &frame2, &len2) == 0);
                CHECK(len2 == len && memcmp(frame, frame2, len) == 0);
                free(frame2);
            }
            free(frame);
            uint8_t *resp = arena_alloc(a, api->response->size);
            fill_struct(&fl, api->response, resp);
            CHECK(response_frame_ok(api, v, resp, &len));
            arena_free(a);
        }
    }
}

TEST(proto_response_frame_larger_than_the_first_buffer)
{
    /* A Metadata answer of 40 topics with 100-character names: several KiB. */
    const struct proto_api *md = proto_api_find(PROTO_API_Metadata);
    struct MetadataResponse rs = {0};
    struct MetadataResponseTopic topics[40];
    char names[40][101];
    size_t len = 0;
    memset(topics, 0, sizeof topics);
    for (int i = 0; i < 40; i++) {
        memset(names[i], 'a' + i % 26, 100);
        names[i][100] = '\0';
        topics[i].Name = names[i];
    }
    rs.Topics.v = topics;
    rs.Topics.n = 40;
    CHECK(response_frame_ok(md, 1, &rs, &len));
    CHECK(len > 4000);
    CHECK(response_frame_ok(md, 12, &rs, &len));
}

/* ---------------------------------------------------------------------------------------- */
/* Byte-exact vectors, written by hand from the protocol guide. */

static void check_bytes(const uint8_t *got, size_t got_len, const uint8_t *want, size_t want_len,
                        const char *what)
{
    if (got_len != want_len || memcmp(got, want, want_len) != 0) {
        char m[1024];
        int o = snprintf(m, sizeof m, "%s: got %zu bytes:", what, got_len);
        for (size_t i = 0; i < got_len && o < (int)sizeof m - 4; i++)
            o += snprintf(m + o, sizeof m - (size_t)o, " %02x", got[i]);
        harness_fail(__FILE__, __LINE__, m);
    }
}

TEST(proto_vector_api_versions_v0_request)
{
    static const uint8_t want[] = {
        0x00, 0x00, 0x00, 0x0d,      /* size 13 */
        0x00, 0x12, 0x00, 0x00,      /* key 18, version 0 */
        0x00, 0x00, 0x00, 0x01,      /* correlation id 1 */
        0x00, 0x03, 'a',  'b',  'c', /* client id "abc" (INT16 length) */
    };
    struct ApiVersionsRequest req = {0};
    uint8_t *frame;
    size_t len;

    REQUIRE(proto_encode_request(proto_api_find(PROTO_API_ApiVersions), 0, 1, "abc", &req, &frame,
                                 &len) == 0);
    check_bytes(frame, len, want, sizeof want, "ApiVersions v0 request");
    free(frame);
}

TEST(proto_vector_api_versions_v3_request)
{
    static const uint8_t want[] = {
        0x00, 0x00, 0x00, 0x16,      /* size 22 */
        0x00, 0x12, 0x00, 0x03,      /* key 18, version 3 */
        0x00, 0x00, 0x00, 0x07,      /* correlation id 7 */
        0x00, 0x03, 'c',  'l',  'i', /* client id: INT16 length even in header v2 */
        0x00,                        /* header tagged fields: none */
        0x03, 's',  'w',             /* ClientSoftwareName: compact, length+1 */
        0x04, '1',  '.',  '0',       /* ClientSoftwareVersion */
        0x00,                        /* body tagged fields: none */
    };
    struct ApiVersionsRequest req = {.ClientSoftwareName = "sw", .ClientSoftwareVersion = "1.0"};
    const struct proto_api *api = proto_api_find(PROTO_API_ApiVersions);
    struct arena *a = arena_new(1 << 16);
    struct ApiVersionsRequest *dec = NULL;
    struct RequestHeader h;
    uint8_t *frame;
    size_t len, hdr_len;

    REQUIRE(proto_encode_request(api, 3, 7, "cli", &req, &frame, &len) == 0);
    check_bytes(frame, len, want, sizeof want, "ApiVersions v3 request");
    REQUIRE(proto_decode_request_header(want + 4, sizeof want - 4, &h, &hdr_len, a) == 0);
    CHECK_EQ_INT(hdr_len, 14);
    REQUIRE(proto_decode_request(api, 3, want + 4 + hdr_len, sizeof want - 4 - hdr_len,
                                 (void **)&dec, a) == 0);
    CHECK_EQ_STR(dec->ClientSoftwareName, "sw");
    CHECK_EQ_STR(dec->ClientSoftwareVersion, "1.0");
    free(frame);
    arena_free(a);
}

TEST(proto_vector_metadata_v1_request)
{
    static const uint8_t want[] = {
        0x00, 0x00, 0x00, 0x14,      /* size 20 */
        0x00, 0x03, 0x00, 0x01,      /* key 3, version 1 */
        0x00, 0x00, 0x00, 0x02,      /* correlation id 2 */
        0x00, 0x01, 'c',             /* client id "c" */
        0x00, 0x00, 0x00, 0x01,      /* Topics: INT32 count 1 */
        0x00, 0x03, 'f',  'o',  'o', /* Name "foo" */
    };
    struct MetadataRequestTopic t = {.Name = "foo"};
    struct MetadataRequest req = {.Topics = {&t, 1}, .AllowAutoTopicCreation = true};
    const struct proto_api *api = proto_api_find(PROTO_API_Metadata);
    struct arena *a = arena_new(1 << 16);
    struct MetadataRequest *dec = NULL;
    uint8_t *frame;
    size_t len;

    REQUIRE(proto_encode_request(api, 1, 2, "c", &req, &frame, &len) == 0);
    check_bytes(frame, len, want, sizeof want, "Metadata v1 request");
    REQUIRE(proto_decode_request(api, 1, want + 15, sizeof want - 15, (void **)&dec, a) == 0);
    REQUIRE(dec->Topics.n == 1);
    CHECK_EQ_STR(dec->Topics.v[0].Name, "foo");
    CHECK(dec->AllowAutoTopicCreation); /* absent before v4: the schema default, true */
    free(frame);
    arena_free(a);
}

TEST(proto_vector_metadata_v9_request)
{
    static const uint8_t want[] = {
        0x00, 0x00, 0x00, 0x16, /* size 22 */
        0x00, 0x03, 0x00, 0x09, /* key 3, version 9 */
        0x00, 0x00, 0x00, 0x03, /* correlation id 3 */
        0x00, 0x01, 'c',        /* client id "c" */
        0x00,                   /* header tagged fields */
        0x02,                   /* Topics: compact count 1+1 */
        0x04, 'f',  'o',  'o',  /* Name: compact "foo" */
        0x00,                   /* topic tagged fields */
        0x01,                   /* AllowAutoTopicCreation */
        0x00,                   /* IncludeClusterAuthorizedOperations (v8-10) */
        0x01,                   /* IncludeTopicAuthorizedOperations */
        0x00,                   /* tagged fields */
    };
    struct MetadataRequestTopic t = {.Name = "foo"};
    struct MetadataRequest req = {.Topics = {&t, 1},
                                  .AllowAutoTopicCreation = true,
                                  .IncludeTopicAuthorizedOperations = true};
    uint8_t *frame;
    size_t len;

    REQUIRE(proto_encode_request(proto_api_find(PROTO_API_Metadata), 9, 3, "c", &req, &frame,
                                 &len) == 0);
    check_bytes(frame, len, want, sizeof want, "Metadata v9 request");
    free(frame);
}

TEST(proto_vector_api_versions_v3_response_header_v0)
{
    static const uint8_t want[] = {
        0x00, 0x00, 0x00, 0x1a,                   /* size 26 */
        0x00, 0x00, 0x00, 0x05,                   /* correlation id; header v0: no tags */
        0x00, 0x00,                               /* ErrorCode */
        0x03,                                     /* ApiKeys: compact count 2+1 */
        0x00, 0x12, 0x00, 0x00, 0x00, 0x03, 0x00, /* 18: 0-3, tagged fields */
        0x00, 0x03, 0x00, 0x00, 0x00, 0x0c, 0x00, /* 3: 0-12, tagged fields */
        0x00, 0x00, 0x00, 0x00,                   /* ThrottleTimeMs */
        0x00,                                     /* tagged fields: all at their defaults */
    };
    struct ApiVersion keys[] = {{18, 0, 3}, {3, 0, 12}};
    struct ApiVersionsResponse resp = {.ApiKeys = {keys, 2}, .FinalizedFeaturesEpoch = -1};
    uint8_t *frame;
    size_t len;

    REQUIRE(proto_encode_response(proto_api_find(PROTO_API_ApiVersions), 3, 5, &resp, &frame,
                                  &len) == 0);
    check_bytes(frame, len, want, sizeof want, "ApiVersions v3 response");
    free(frame);
}

TEST(proto_vector_api_versions_v3_response_tagged_fields)
{
    static const uint8_t want[] = {
        0x00, 0x00, 0x00, 0x23, /* size 35 */
        0x00, 0x00, 0x00, 0x05, /* correlation id */
        0x00, 0x23,             /* ErrorCode 35 */
        0x01,                   /* ApiKeys: empty */
        0x00, 0x00, 0x00, 0x00, /* ThrottleTimeMs */
        0x03,                   /* three tagged fields, ascending tags */
        0x00, 0x08,             /* tag 0 SupportedFeatures, 8 bytes */
        0x02, 0x02, 'x',  0x00, 0x01, 0x00,
        0x02, 0x00, 0x01, 0x08, /* tag 1 FinalizedFeaturesEpoch, 8 bytes */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x05, 0x03, 0x01, 0x01, /* tag 3 ZkMigrationReady = true */
    };
    struct SupportedFeatureKey feat = {"x", 1, 2};
    struct ApiVersionsResponse resp = {.ErrorCode = 35,
                                       .SupportedFeatures = {&feat, 1},
                                       .FinalizedFeaturesEpoch = 5,
                                       .ZkMigrationReady = true};
    const struct proto_api *api = proto_api_find(PROTO_API_ApiVersions);
    struct arena *a = arena_new(1 << 16);
    struct ApiVersionsResponse dec = {0};
    uint8_t *frame;
    size_t len, consumed;

    REQUIRE(proto_encode_response(api, 3, 5, &resp, &frame, &len) == 0);
    check_bytes(frame, len, want, sizeof want, "ApiVersions v3 response, tagged");
    REQUIRE(proto_decode(api->response, 3, true, want + 8, sizeof want - 8, &consumed, &dec, a) ==
            0);
    CHECK_EQ_INT(consumed, sizeof want - 8);
    CHECK_EQ_INT(dec.FinalizedFeaturesEpoch, 5);
    CHECK(dec.ZkMigrationReady);
    REQUIRE(dec.SupportedFeatures.n == 1);
    CHECK_EQ_STR(dec.SupportedFeatures.v[0].Name, "x");
    CHECK_EQ_INT(dec.SupportedFeatures.v[0].MaxVersion, 2);
    CHECK_EQ_INT(dec.FinalizedFeatures.n, 0);
    free(frame);
    arena_free(a);
}

TEST(proto_vector_flexible_response_header_v1)
{
    static const uint8_t want[] = {
        0x00, 0x00, 0x00, 0x18, /* size 24 */
        0x00, 0x00, 0x00, 0x09, /* correlation id */
        0x00,                   /* header v1 tagged fields */
        0x00, 0x00, 0x00, 0x00, /* ThrottleTimeMs */
        0x00, 0x00,             /* ErrorCode */
        0x00,                   /* ErrorMessage: compact null */
        0x02, 'k',              /* ClusterId */
        0x00, 0x00, 0x00, 0x01, /* ControllerId */
        0x01,                   /* Brokers: empty */
        0x80, 0x00, 0x00, 0x00, /* ClusterAuthorizedOperations: INT32_MIN */
        0x00,                   /* tagged fields */
    };
    struct DescribeClusterResponse resp = {
        .ClusterId = "k", .ControllerId = 1, .ClusterAuthorizedOperations = INT32_MIN};
    uint8_t *frame;
    size_t len;

    REQUIRE(proto_encode_response(proto_api_find(PROTO_API_DescribeCluster), 0, 9, &resp, &frame,
                                  &len) == 0);
    check_bytes(frame, len, want, sizeof want, "DescribeCluster v0 response");
    free(frame);
}

TEST(proto_vector_produce_v3_request)
{
    static const uint8_t want[] = {
        0x00, 0x00, 0x00, 0x29, /* size 41 */
        0x00, 0x00, 0x00, 0x03, /* key 0, version 3 */
        0x00, 0x00, 0x00, 0x01, /* correlation id 1 */
        0x00, 0x01, 'c',        /* client id "c" */
        0xff, 0xff,             /* TransactionalId: null */
        0xff, 0xff,             /* Acks -1 */
        0x00, 0x00, 0x03, 0xe8, /* TimeoutMs 1000 */
        0x00, 0x00, 0x00, 0x01, /* TopicData: 1 */
        0x00, 0x01, 't',        /* Name "t" */
        0x00, 0x00, 0x00, 0x01, /* PartitionData: 1 */
        0x00, 0x00, 0x00, 0x02, /* Index 2 */
        0x00, 0x00, 0x00, 0x03, /* Records: INT32 length 3 */
        0xde, 0xad, 0x01,       /* the records blob */
    };
    static const uint8_t blob[] = {0xde, 0xad, 0x01};
    struct PartitionProduceData part = {.Index = 2, .Records = {blob, 3, NULL}};
    struct TopicProduceData topic = {.Name = "t", .PartitionData = {&part, 1}};
    struct ProduceRequest req = {.Acks = -1, .TimeoutMs = 1000, .TopicData = {&topic, 1}};
    const struct proto_api *api = proto_api_find(PROTO_API_Produce);
    struct arena *a = arena_new(1 << 16);
    struct ProduceRequest *dec = NULL;
    uint8_t *frame;
    size_t len;

    REQUIRE(api != NULL);
    REQUIRE(proto_encode_request(api, 3, 1, "c", &req, &frame, &len) == 0);
    check_bytes(frame, len, want, sizeof want, "Produce v3 request");
    REQUIRE(proto_decode_request(api, 3, want + 15, sizeof want - 15, (void **)&dec, a) == 0);
    CHECK(dec->TransactionalId == NULL);
    CHECK_EQ_INT(dec->Acks, -1);
    CHECK_EQ_INT(dec->TimeoutMs, 1000);
    REQUIRE(dec->TopicData.n == 1);
    CHECK_EQ_STR(dec->TopicData.v[0].Name, "t");
    REQUIRE(dec->TopicData.v[0].PartitionData.n == 1);
    CHECK_EQ_INT(dec->TopicData.v[0].PartitionData.v[0].Index, 2);
    CHECK_EQ_INT(dec->TopicData.v[0].PartitionData.v[0].Records.len, 3);
    /* Records are not copied: they point into the input. */
    CHECK(dec->TopicData.v[0].PartitionData.v[0].Records.data == want + sizeof want - 3);
    CHECK(dec->TopicData.v[0].PartitionData.v[0].Records.ext == NULL);
    free(frame);
    arena_free(a);
}

/* A tagged struct goes on the wire only when it differs from its fields' defaults, and an
 * absent one decodes to those defaults (not to zeros, which would read as a divergence). */
TEST(proto_tagged_struct_fetch_diverging_epoch)
{
    static const uint8_t want_tags[] = {
        0x01,                                           /* one tagged field */
        0x00, 0x0d,                                     /* tag 0 DivergingEpoch, 13 bytes */
        0x00, 0x00, 0x00, 0x05,                         /* Epoch 5 */
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, /* EndOffset -1 (its default) */
        0x00, /* the struct's own tagged fields; then topic and response tags */
    };
    struct FetchPartitionData p = FETCH_PARTITION_DATA_DEFAULTS;
    struct FetchableTopicResponse t = {.TopicId = {{1}}, .Partitions = {&p, 1}};
    struct FetchResponse resp = {.Responses = {&t, 1}};
    struct arena *a = arena_new(1 << 16);
    struct FetchResponse dec = {0};
    uint8_t buf[256];
    size_t n, consumed;

    /* All defaults: the partition ends with an empty tagged section. */
    n = proto_encode(&proto_FetchResponse, 13, true, &resp, buf);
    REQUIRE(n == proto_size(&proto_FetchResponse, 13, true, &resp));
    /* ... Records (compact empty: 0x01), partition tags (0x00), topic tags, response tags. */
    CHECK(buf[n - 4] == 0x01 && buf[n - 3] == 0x00 && buf[n - 2] == 0x00 && buf[n - 1] == 0x00);
    REQUIRE(proto_decode(&proto_FetchResponse, 13, true, buf, n, &consumed, &dec, a) == 0);
    REQUIRE(dec.Responses.n == 1 && dec.Responses.v[0].Partitions.n == 1);
    {
        const struct FetchPartitionData *d = &dec.Responses.v[0].Partitions.v[0];
        CHECK_EQ_INT(d->DivergingEpoch.Epoch, -1);
        CHECK_EQ_INT(d->DivergingEpoch.EndOffset, -1);
        CHECK_EQ_INT(d->CurrentLeader.LeaderId, -1);
        CHECK_EQ_INT(d->CurrentLeader.LeaderEpoch, -1);
        CHECK_EQ_INT(d->SnapshotId.EndOffset, -1);
        CHECK_EQ_INT(d->SnapshotId.Epoch, -1);
    }

    /* One field off its default: DivergingEpoch alone is written, whole. */
    p.DivergingEpoch.Epoch = 5;
    n = proto_encode(&proto_FetchResponse, 13, true, &resp, buf);
    REQUIRE(n > sizeof want_tags + 2);
    check_bytes(buf + n - 2 - sizeof want_tags, sizeof want_tags, want_tags, sizeof want_tags,
                "FetchResponse v13 partition tags");
    memset(&dec, 0, sizeof dec);
    REQUIRE(proto_decode(&proto_FetchResponse, 13, true, buf, n, &consumed, &dec, a) == 0);
    CHECK_EQ_INT(consumed, n);
    REQUIRE(dec.Responses.n == 1 && dec.Responses.v[0].Partitions.n == 1);
    CHECK_EQ_INT(dec.Responses.v[0].Partitions.v[0].DivergingEpoch.Epoch, 5);
    CHECK_EQ_INT(dec.Responses.v[0].Partitions.v[0].CurrentLeader.LeaderId, -1);
    arena_free(a);
}

/* ---------------------------------------------------------------------------------------- */
/* Holes: RECORDS left out of the buffer for sendfile() */

/* Builds the wire bytes of a holed frame, filling each hole from its ext (here the bytes
 * themselves), as the sender would from a file. */
static uint8_t *assemble(const uint8_t *frame, size_t frame_len, const struct proto_hole *holes,
                         size_t n_holes, size_t *out_len)
{
    size_t total = frame_len, pos = 0, w = 0;
    uint8_t *out;

    for (size_t i = 0; i < n_holes; i++)
        total += holes[i].len;
    out = malloc(total);
    for (size_t i = 0; i < n_holes; i++) {
        memcpy(out + w, frame + pos, holes[i].at - pos);
        w += holes[i].at - pos;
        pos = holes[i].at;
        memcpy(out + w, holes[i].ext, holes[i].len);
        w += holes[i].len;
    }
    memcpy(out + w, frame + pos, frame_len - pos);
    *out_len = w + frame_len - pos;
    return out;
}

TEST(proto_holes_fetch_response_equals_inline)
{
    static const uint8_t rec_a[] = "records of partition zero";
    static const uint8_t rec_b[] = "partition one: a longer blob of record batches ...";
    static const int16_t versions[] = {4, 11, 12, 13};
    const struct proto_api *api = proto_api_find(PROTO_API_Fetch);

    REQUIRE(api != NULL);
    for (size_t vi = 0; vi < sizeof versions / sizeof versions[0]; vi++) {
        int16_t v = versions[vi];
        struct FetchPartitionData parts[4] = {
            FETCH_PARTITION_DATA_DEFAULTS, FETCH_PARTITION_DATA_DEFAULTS,
            FETCH_PARTITION_DATA_DEFAULTS, FETCH_PARTITION_DATA_DEFAULTS};
        struct AbortedTransaction aborted = {77, 1000};
        struct FetchableTopicResponse topics[2] = {
            {.Topic = "orders", .TopicId = {{9, 9}}, .Partitions = {parts, 2}},
            {.Topic = "payments", .TopicId = {{8}}, .Partitions = {parts + 2, 2}},
        };
        struct FetchResponse resp = {
            .ThrottleTimeMs = 3, .SessionId = 11, .Responses = {topics, 2}};
        uint8_t *inl, *holed, *wire;
        size_t inl_len, holed_len, wire_len, n_holes = 99;
        struct proto_hole *holes = NULL;

        parts[0].HighWatermark = 100;
        parts[0].Records = (struct proto_bytes){rec_a, (int32_t)sizeof rec_a, NULL};
        parts[0].AbortedTransactions.v = &aborted;
        parts[0].AbortedTransactions.n = 1;
        parts[1].PartitionIndex = 1;
        parts[1].HighWatermark = 200;
        parts[1].DivergingEpoch.Epoch = 4; /* a tagged field between the two holes (v12+) */
        parts[1].Records = (struct proto_bytes){rec_b, (int32_t)sizeof rec_b, NULL};
        parts[2].ErrorCode = 6; /* no data: an empty Records, never a hole */
        parts[3].Records = (struct proto_bytes){NULL, -1, NULL}; /* null Records */

        REQUIRE(proto_encode_response(api, v, 42, &resp, &inl, &inl_len) == 0);

        /* The same response with the two Records as holes: data NULL, ext says where. */
        parts[0].Records = (struct proto_bytes){NULL, (int32_t)sizeof rec_a, rec_a};
        parts[1].Records = (struct proto_bytes){NULL, (int32_t)sizeof rec_b, rec_b};
        parts[3].Records.ext = rec_a; /* null: no hole whatever ext says */
        REQUIRE(proto_encode_response_holes(api, v, 42, &resp, &holed, &holed_len, &holes,
                                            &n_holes) == 0);
        REQUIRE(n_holes == 2);
        CHECK_EQ_INT(holed_len + sizeof rec_a + sizeof rec_b, inl_len);
        CHECK(holes[0].ext == rec_a && holes[0].len == sizeof rec_a);
        CHECK(holes[1].ext == rec_b && holes[1].len == sizeof rec_b);
        CHECK(holes[0].at < holes[1].at && holes[1].at <= holed_len);
        /* The size prefix counts the hole bytes: it is the wire size. */
        CHECK(memcmp(holed, inl, 4) == 0);
        CHECK_EQ_INT(proto_size(api->response, v, proto_api_flexible(api, v), &resp) + 4 +
                         (v >= 12 ? 5 : 4),
                     inl_len);

        wire = assemble(holed, holed_len, holes, n_holes, &wire_len);
        {
            char what[64];
            snprintf(what, sizeof what, "Fetch v%d response with holes", v);
            check_bytes(wire, wire_len, inl, inl_len, what);
        }
        free(wire);
        free(holes);
        free(holed);
        free(inl);
    }
}

TEST(proto_holes_none_and_plain_encode_ignores_ext)
{
    static const uint8_t rec[] = {1, 2, 3, 4};
    struct FetchPartitionData p = FETCH_PARTITION_DATA_DEFAULTS;
    struct FetchableTopicResponse t = {.Topic = "t", .Partitions = {&p, 1}};
    struct FetchResponse resp = {.Responses = {&t, 1}};
    const struct proto_api *api = proto_api_find(PROTO_API_Fetch);
    struct proto_hole *holes = (struct proto_hole *)&holes;
    uint8_t *a, *b;
    size_t a_len, b_len, n_holes = 5;

    /* No ext anywhere: the same frame as proto_encode_response, and no hole array. */
    p.Records = (struct proto_bytes){rec, 4, NULL};
    REQUIRE(proto_encode_response(api, 12, 1, &resp, &a, &a_len) == 0);
    REQUIRE(proto_encode_response_holes(api, 12, 1, &resp, &b, &b_len, &holes, &n_holes) == 0);
    CHECK(holes == NULL);
    CHECK_EQ_INT(n_holes, 0);
    check_bytes(b, b_len, a, a_len, "Fetch v12 response, no holes");
    free(b);

    /* The plain encoder writes `data` whatever ext holds. */
    p.Records.ext = rec + 2;
    REQUIRE(proto_encode_response(api, 12, 1, &resp, &b, &b_len) == 0);
    check_bytes(b, b_len, a, a_len, "Fetch v12 response, ext ignored");
    free(b);
    free(a);
}

TEST(proto_defaults_for_absent_fields)
{
    /* A Metadata v0 response lacks ControllerId, LeaderEpoch and TopicAuthorizedOperations:
     * they decode as the schema's defaults, not as zero. */
    static const uint8_t body[] = {
        0x00, 0x00, 0x00, 0x00,                                     /* Brokers: 0 */
        0x00, 0x00, 0x00, 0x01,                                     /* Topics: 1 */
        0x00, 0x00, 0x00, 0x01, 't',                                /* ErrorCode, Name "t" */
        0x00, 0x00, 0x00, 0x01,                                     /* Partitions: 1 */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* error, index, leader */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,             /* replicas, isr: empty */
    };
    struct arena *a = arena_new(1 << 16);
    struct MetadataResponse r = {0};
    size_t consumed;

    REQUIRE(proto_decode(&proto_MetadataResponse, 0, false, body, sizeof body, &consumed, &r, a) ==
            0);
    CHECK_EQ_INT(consumed, sizeof body);
    CHECK_EQ_INT(r.ControllerId, -1);
    REQUIRE(r.Topics.n == 1);
    CHECK_EQ_INT(r.Topics.v[0].TopicAuthorizedOperations, INT32_MIN);
    REQUIRE(r.Topics.v[0].Partitions.n == 1);
    CHECK_EQ_INT(r.Topics.v[0].Partitions.v[0].LeaderEpoch, -1);
    CHECK(r.ClusterId == NULL);
    arena_free(a);
}

TEST(proto_api_table)
{
    size_t n;
    const struct proto_api *apis = proto_apis(&n);

    for (size_t i = 1; i < n; i++)
        CHECK(apis[i - 1].key < apis[i].key);
    CHECK(proto_api_find(PROTO_API_LeaderAndIsr) == NULL);
    REQUIRE(proto_api_find(PROTO_API_CreateTopics) != NULL);
    CHECK_EQ_INT(proto_api_find(PROTO_API_CreateTopics)->min_version, 0);
    CHECK_EQ_INT(proto_api_find(PROTO_API_DescribeCluster)->flexible_min, 0);

    /* The data-path APIs, with exactly the ranges the broker advertises. */
    static const struct {
        int16_t key, min, max, flex;
    } want[] = {
        {PROTO_API_Produce, 0, 9, 9},        {PROTO_API_Fetch, 0, 13, 12},
        {PROTO_API_ListOffsets, 0, 7, 6},    {PROTO_API_DeleteRecords, 0, 2, 2},
        {PROTO_API_InitProducerId, 0, 4, 2}, {PROTO_API_DescribeProducers, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const struct proto_api *api = proto_api_find(want[i].key);
        REQUIRE(api != NULL);
        CHECK_EQ_INT(api->min_version, want[i].min);
        CHECK_EQ_INT(api->max_version, want[i].max);
        CHECK_EQ_INT(api->flexible_min, want[i].flex);
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Malformed input */

TEST(proto_truncated_at_every_offset_fails)
{
    size_t napis;
    const struct proto_api *apis = proto_apis(&napis);

    for (size_t i = 0; i < napis; i++) {
        const struct proto_api *api = &apis[i];
        for (int16_t v = api->min_version; v <= api->max_version; v++) {
            struct arena *a = arena_new(1 << 22);
            struct filler fl = {a, v, false, 0};
            uint8_t *req = arena_alloc(a, api->request->size), *frame;
            size_t len, hdr_len;

            fill_struct(&fl, api->request, req);
            REQUIRE(proto_encode_request(api, v, 1, "c", req, &frame, &len) == 0);
            REQUIRE(proto_decode_request_header(frame + 4, len - 4, &(struct RequestHeader){0},
                                                &hdr_len, a) == 0);
            /* Every strict prefix of the frame body lacks bytes the decoder needs. Each
             * prefix is copied to its own allocation so ASan catches any read past it. */
            for (size_t cut = 0; cut < len - 4; cut++) {
                uint8_t *copy = malloc(cut + 1);
                struct RequestHeader h;
                size_t hl;
                void *out;
                int rc;

                memcpy(copy, frame + 4, cut);
                rc = proto_decode_request_header(copy, cut, &h, &hl, a);
                if (rc == 0)
                    rc = proto_decode_request(api, v, copy + hl, cut - hl, &out, a);
                if (rc == 0) {
                    char m[128];
                    snprintf(m, sizeof m, "%s v%d cut at %zu decoded", api->name, v, cut);
                    harness_fail(__FILE__, __LINE__, m);
                }
                free(copy);
            }
            free(frame);
            arena_free(a);
        }
    }
}

TEST(proto_huge_array_count_fails_without_allocating)
{
    static const uint8_t classic[] = {0x7f, 0xff, 0xff, 0xff, 0x00, 0x01, 'x'};
    static const uint8_t compact[] = {0xfe, 0xff, 0xff, 0xff, 0x07, 0x02, 'x', 0x00};
    static const uint8_t varint_too_long[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    const struct proto_api *api = proto_api_find(PROTO_API_Metadata);
    struct arena *a = arena_new(4096);
    void *out;
    int rc;

    rc = proto_decode_request(api, 1, classic, sizeof classic, &out, a);
    CHECK(rc == ERR_TRUNCATED || rc == ERR_PARSE);
    rc = proto_decode_request(api, 9, compact, sizeof compact, &out, a);
    CHECK(rc == ERR_TRUNCATED || rc == ERR_PARSE);
    CHECK_EQ_INT(proto_decode_request(api, 9, varint_too_long, sizeof varint_too_long, &out, a),
                 ERR_PARSE);
    CHECK(arena_used(a) < 1024);
    arena_free(a);
}

TEST(proto_negative_string_length_is_parse_error)
{
    /* Metadata v1: Topics count 1, then a topic Name (nullable only from v10). */
    static const uint8_t minus_two[] = {0x00, 0x00, 0x00, 0x01, 0xff, 0xfe};
    static const uint8_t null_name[] = {0x00, 0x00, 0x00, 0x01, 0xff, 0xff};
    /* Metadata v10: the same null Name is allowed. */
    static const uint8_t null_name_v10[] = {
        0x02,                                                    /* Topics: 1 */
        0,    0,    0,    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* TopicId */
        0x00,                                                    /* Name: compact null */
        0x00,                                                    /* topic tagged fields */
        0x01, 0x00, 0x00,                                        /* the three bools */
        0x00,                                                    /* tagged fields */
    };
    const struct proto_api *api = proto_api_find(PROTO_API_Metadata);
    struct arena *a = arena_new(1 << 16);
    struct MetadataRequest *r = NULL;

    CHECK_EQ_INT(proto_decode_request(api, 1, minus_two, sizeof minus_two, (void **)&r, a),
                 ERR_PARSE);
    CHECK_EQ_INT(proto_decode_request(api, 1, null_name, sizeof null_name, (void **)&r, a),
                 ERR_PARSE);
    REQUIRE(proto_decode_request(api, 10, null_name_v10, sizeof null_name_v10, (void **)&r, a) ==
            0);
    REQUIRE(r->Topics.n == 1);
    CHECK(r->Topics.v[0].Name == NULL);
    /* A null array where the schema allows it (Topics, v1+) is n = -1. */
    static const uint8_t null_topics[] = {0xff, 0xff, 0xff, 0xff};
    REQUIRE(proto_decode_request(api, 1, null_topics, sizeof null_topics, (void **)&r, a) == 0);
    CHECK_EQ_INT(r->Topics.n, -1);
    CHECK_EQ_INT(proto_decode_request(api, 0, null_topics, sizeof null_topics, (void **)&r, a),
                 ERR_PARSE);
    arena_free(a);
}

TEST(proto_bad_header)
{
    static const uint8_t bad_client_id[] = {0x00, 0x03, 0x00, 0x01, 0, 0, 0, 1, 0xff, 0xfd};
    static const uint8_t unknown_api[] = {0x03, 0xe7, 0x00, 0x07, 0, 0, 0, 1, 0xff, 0xff, 0x55};
    struct arena *a = arena_new(1 << 16);
    struct RequestHeader h;
    size_t hl;

    CHECK_EQ_INT(proto_decode_request_header(bad_client_id, sizeof bad_client_id, &h, &hl, a),
                 ERR_PARSE);
    REQUIRE(proto_decode_request_header(unknown_api, sizeof unknown_api, &h, &hl, a) == 0);
    CHECK_EQ_INT(h.RequestApiKey, 999);
    CHECK_EQ_INT(h.RequestApiVersion, 7);
    CHECK(h.ClientId == NULL);
    CHECK_EQ_INT(hl, 10);
    CHECK_EQ_INT(proto_decode_request(proto_api_find(PROTO_API_Metadata), 13, unknown_api, 0,
                                      &(void *){NULL}, a),
                 ERR_UNSUPPORTED_VERSION);
    arena_free(a);
}

/* A NUL inside a string used to fail the whole request (the connection closed) where Kafka
 * answers INVALID_TOPIC_EXCEPTION for that topic: it decodes to a string that is distinct
 * from its prefix and goes back on the wire as it came. */
TEST(proto_string_with_nul_decodes_distinct_and_round_trips)
{
    /* Metadata v1: Topics count 1, Name "a\0b"; then v9 (compact) with Name "\0". */
    static const uint8_t classic[] = {0x00, 0x00, 0x00, 0x01, 0x00, 0x03, 'a', 0x00, 'b'};
    static const uint8_t compact[] = {0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00};
    const struct proto_api *api = proto_api_find(PROTO_API_Metadata);
    struct arena *a = arena_new(1 << 16);
    struct MetadataRequest *r = NULL;
    uint8_t *frame;
    size_t len;

    REQUIRE(proto_decode_request(api, 1, classic, sizeof classic, (void **)&r, a) == 0);
    REQUIRE(r->Topics.n == 1);
    CHECK_EQ_STR(r->Topics.v[0].Name, "a\xc0\x80"
                                      "b");
    CHECK(strcmp(r->Topics.v[0].Name, "a") != 0);
    REQUIRE(proto_encode_request(api, 1, 2, "c", r, &frame, &len) == 0);
    check_bytes(frame + 15, len - 15, classic, sizeof classic, "Metadata v1, NUL in a name");
    free(frame);

    REQUIRE(proto_decode_request(api, 9, compact, sizeof compact, (void **)&r, a) == 0);
    REQUIRE(r->Topics.n == 1);
    CHECK_EQ_STR(r->Topics.v[0].Name, "\xc0\x80");
    REQUIRE(proto_encode_request(api, 9, 2, "c", r, &frame, &len) == 0);
    check_bytes(frame + 16, len - 16, compact, sizeof compact, "Metadata v9, NUL name");
    free(frame);
    arena_free(a);
}

/* KIP-482: tagged fields come in strictly ascending tag order. A repeated tag used to be
 * accepted (the second value silently replaced the first) and so was any order. */
TEST(proto_tagged_fields_out_of_order_refused)
{
    /* ApiVersions v3 response body: known tags 3 then 1. */
    static const uint8_t known[] = {
        0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, /* ErrorCode, ApiKeys empty, Throttle */
        0x02,                                     /* two tagged fields */
        0x03, 0x01, 0x01,                         /* ZkMigrationReady */
        0x01, 0x08, 0,    0,    0,    0,    0,    0, 0x01, 0x00, /* FinalizedFeaturesEpoch */
    };
    /* Metadata v9 request: unknown tags 9 then 7 in the topic; then the header's tags. */
    static const uint8_t unknown[] = {
        0x02, 0x04, 'f',  'o',  'o',              /* Topics: 1, Name */
        0x02, 0x09, 0x01, 0x99, 0x07, 0x00, 0x00, /* tags 9, 7 */
        0x00, 0x00, 0x00,                         /* bools, no tags */
    };
    static const uint8_t header[] = {
        0x00, 0x03, 0x00, 0x09, 0x00, 0x00, 0x00, 0x03,
        0x00, 0x01, 'c',  0x02, 0x05, 0x00, 0x04, 0x00, /* header tags 5, 4 */
    };
    struct arena *a = arena_new(1 << 16);
    struct ApiVersionsResponse rs = {0};
    struct MetadataRequest *r = NULL;
    struct RequestHeader h;
    size_t consumed, hl;

    CHECK_EQ_INT(
        proto_decode(&proto_ApiVersionsResponse, 3, true, known, sizeof known, &consumed, &rs, a),
        ERR_PARSE);
    CHECK_EQ_INT(proto_decode_request(proto_api_find(PROTO_API_Metadata), 9, unknown,
                                      sizeof unknown, (void **)&r, a),
                 ERR_PARSE);
    CHECK_EQ_INT(proto_decode_request_header(header, sizeof header, &h, &hl, a), ERR_PARSE);
    arena_free(a);
}

TEST(proto_tagged_fields_duplicate_refused)
{
    /* ApiVersions v3 response body: known tag 1 twice (epoch 256, then 512). */
    static const uint8_t known[] = {
        0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, /* ErrorCode, ApiKeys empty, Throttle */
        0x02,                                     /* two tagged fields */
        0x01, 0x08, 0,    0,    0,    0,    0,    0, 0x01, 0x00, /* FinalizedFeaturesEpoch */
        0x01, 0x08, 0,    0,    0,    0,    0,    0, 0x02, 0x00, /* ... again */
    };
    /* Metadata v9 request: unknown tag 7 twice in the topic; then tag 0 twice at the end. */
    static const uint8_t unknown_topic[] = {
        0x02, 0x04, 'f',  'o',  'o',              /* Topics: 1, Name */
        0x02, 0x07, 0x01, 0x99, 0x07, 0x00, 0x00, /* tags 7, 7 */
        0x00, 0x00, 0x00,                         /* bools, no tags */
    };
    static const uint8_t unknown_end[] = {
        0x02, 0x04, 'f',  'o',  'o',  0x00, /* Topics: 1, Name, no tags */
        0x00, 0x00, 0x00,                   /* bools */
        0x02, 0x00, 0x00, 0x00, 0x00,       /* tags 0, 0 */
    };
    /* The same request with tags 0 and 1 is fine. */
    static const uint8_t ascending[] = {
        0x02, 0x04, 'f', 'o', 'o', 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x01, 0x00,
    };
    const struct proto_api *api = proto_api_find(PROTO_API_Metadata);
    struct arena *a = arena_new(1 << 16);
    struct ApiVersionsResponse rs = {0};
    struct MetadataRequest *r = NULL;
    size_t consumed;

    CHECK_EQ_INT(
        proto_decode(&proto_ApiVersionsResponse, 3, true, known, sizeof known, &consumed, &rs, a),
        ERR_PARSE);
    CHECK_EQ_INT(proto_decode_request(api, 9, unknown_topic, sizeof unknown_topic, (void **)&r, a),
                 ERR_PARSE);
    CHECK_EQ_INT(proto_decode_request(api, 9, unknown_end, sizeof unknown_end, (void **)&r, a),
                 ERR_PARSE);
    CHECK_EQ_INT(proto_decode_request(api, 9, ascending, sizeof ascending, (void **)&r, a), 0);
    arena_free(a);
}

/* ---------------------------------------------------------------------------------------- */
/* Unknown tagged fields */

TEST(proto_unknown_tagged_fields_are_skipped)
{
    static const uint8_t frame[] = {
        0x00, 0x03, 0x00, 0x09, 0x00, 0x00, 0x00, 0x03, 0x00, 0x01, 'c', /* header v2 */
        0x01, 0x05, 0x02, 0xaa, 0xbb,                                    /* header: unknown tag 5 */
        0x02,                                                            /* Topics: 1 */
        0x04, 'f',  'o',  'o',                                           /* Name */
        0x02, 0x07, 0x01, 0x99, 0x7f, 0x00, /* two unknown tags in topic */
        0x00, 0x00, 0x01,                   /* the three bools */
        0x01, 0x40, 0x03, 0x01, 0x02, 0x03, /* unknown tag 64 */
    };
    const struct proto_api *api = proto_api_find(PROTO_API_Metadata);
    struct arena *a = arena_new(1 << 16);
    struct MetadataRequest *r = NULL;
    struct RequestHeader h;
    size_t hl;

    REQUIRE(proto_decode_request_header(frame, sizeof frame, &h, &hl, a) == 0);
    CHECK_EQ_INT(hl, 16);
    REQUIRE(proto_decode_request(api, 9, frame + hl, sizeof frame - hl, (void **)&r, a) == 0);
    REQUIRE(r->Topics.n == 1);
    CHECK_EQ_STR(r->Topics.v[0].Name, "foo");
    CHECK(!r->AllowAutoTopicCreation);
    CHECK(r->IncludeTopicAuthorizedOperations);

    /* A tag's size past the end of the input is truncation, not a skip past the buffer. */
    static const uint8_t overrun[] = {0x01, 0x00, 0x01, 0x01, 0x01, 0x05, 0x09, 0x01};
    CHECK_EQ_INT(proto_decode_request(api, 9, overrun, sizeof overrun, (void **)&r, a),
                 ERR_TRUNCATED);
    arena_free(a);
}

TEST(proto_known_tag_mixed_with_unknown)
{
    /* ApiVersions v3 response body with known tags 1 and 3 and an unknown tag 2000 after
     * them (tags come in ascending order). */
    static const uint8_t body[] = {
        0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, /* ErrorCode, ApiKeys empty, Throttle */
        0x03,                                     /* three tagged fields */
        0x01, 0x08, 0,    0,    0,    0,    0,    0, 0x01, 0x00, /* FinalizedFeaturesEpoch = 256 */
        0x03, 0x01, 0x01,                                        /* ZkMigrationReady */
        0xd0, 0x0f, 0x02, 0xee, 0xee,                            /* tag 2000: unknown */
    };
    struct arena *a = arena_new(1 << 16);
    struct ApiVersionsResponse r = {0};
    size_t consumed;

    REQUIRE(proto_decode(&proto_ApiVersionsResponse, 3, true, body, sizeof body, &consumed, &r,
                         a) == 0);
    CHECK_EQ_INT(consumed, sizeof body);
    CHECK_EQ_INT(r.FinalizedFeaturesEpoch, 256);
    CHECK(r.ZkMigrationReady);
    /* Not present in the input: the default. */
    memset(&r, 0, sizeof r);
    REQUIRE(proto_decode(&proto_ApiVersionsResponse, 3, true, body, 8, &consumed, &r, a) != 0);
    static const uint8_t none[] = {0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00};
    REQUIRE(proto_decode(&proto_ApiVersionsResponse, 3, true, none, sizeof none, &consumed, &r,
                         a) == 0);
    CHECK_EQ_INT(r.FinalizedFeaturesEpoch, -1);
    arena_free(a);
}

/* ---------------------------------------------------------------------------------------- */
/* Record formats (struct proto_record): the coordinators' records and the consumer protocol.
 * Vectors written by hand from the group-coordinator, transaction-coordinator and consumer
 * JSON schemas. */

static const struct proto_record *const all_records[] = {
    &proto_record_OffsetCommitKey,
    &proto_record_OffsetCommitValue,
    &proto_record_GroupMetadataKey,
    &proto_record_GroupMetadataValue,
    &proto_record_TransactionLogKey,
    &proto_record_TransactionLogValue,
    &proto_record_ConsumerProtocolSubscription,
    &proto_record_ConsumerProtocolAssignment,
};

TEST(proto_record_round_trip_every_format_every_version)
{
    int checked = 0;

    for (size_t i = 0; i < sizeof all_records / sizeof all_records[0]; i++) {
        const struct proto_record *r = all_records[i];
        for (int16_t v = r->min_version; v <= r->max_version; v++) {
            for (int nv = 0; nv < 2; nv++) {
                round_trip(r->layout, v, proto_record_flexible(r, v), nv, r->name);
                checked++;
            }
        }
    }
    CHECK_EQ_INT(checked, 2 * (2 + 5 + 1 + 5 + 1 + 2 + 4 + 4));
}

TEST(proto_record_flexible_versions)
{
    CHECK(!proto_record_flexible(&proto_record_OffsetCommitKey, 1));
    CHECK(!proto_record_flexible(&proto_record_OffsetCommitValue, 3));
    CHECK(proto_record_flexible(&proto_record_OffsetCommitValue, 4));
    CHECK(!proto_record_flexible(&proto_record_GroupMetadataKey, 2));
    CHECK(!proto_record_flexible(&proto_record_GroupMetadataValue, 3));
    CHECK(proto_record_flexible(&proto_record_GroupMetadataValue, 4));
    CHECK(!proto_record_flexible(&proto_record_TransactionLogKey, 0));
    CHECK(!proto_record_flexible(&proto_record_TransactionLogValue, 0));
    CHECK(proto_record_flexible(&proto_record_TransactionLogValue, 1));
    CHECK(!proto_record_flexible(&proto_record_ConsumerProtocolSubscription, 3));
    CHECK(!proto_record_flexible(&proto_record_ConsumerProtocolAssignment, 3));
}

/* Encodes `in` framed at `version`, compares with `want`, decodes `want` back into `out`. */
static void record_vector(const struct proto_record *r, int16_t version, const void *in,
                          const uint8_t *want, size_t want_len, void *out, struct arena *a,
                          const char *what)
{
    size_t n = proto_record_size(r, version, in);
    uint8_t *buf = malloc(n + 1);
    int16_t got_v = -99;

    CHECK_EQ_INT(proto_record_encode(r, version, in, buf), n);
    check_bytes(buf, n, want, want_len, what);
    free(buf);
    memset(out, 0, r->layout->size);
    CHECK_EQ_INT(proto_record_decode(r, want, want_len, &got_v, out, a), 0);
    CHECK_EQ_INT(got_v, version);
}

TEST(proto_record_vector_offset_commit_key)
{
    static const uint8_t want[] = {
        0x00, 0x01,             /* version 1 */
        0x00, 0x01, 'g',        /* group */
        0x00, 0x01, 't',        /* topic */
        0x00, 0x00, 0x00, 0x00, /* partition 0 */
    };
    struct OffsetCommitKey k = {.group = "g", .topic = "t", .partition = 0}, d;
    struct arena *a = arena_new(1 << 16);
    int16_t v;

    record_vector(&proto_record_OffsetCommitKey, 1, &k, want, sizeof want, &d, a,
                  "OffsetCommitKey v1");
    CHECK_EQ_STR(d.group, "g");
    CHECK_EQ_STR(d.topic, "t");
    CHECK_EQ_INT(d.partition, 0);
    REQUIRE(proto_record_version(want, sizeof want, &v) == 0);
    CHECK_EQ_INT(v, PROTO_OFFSET_COMMIT_KEY_V1);
    CHECK_EQ_INT(proto_record_version(want, 1, &v), ERR_TRUNCATED);
    /* A group metadata key is not an offset commit key. */
    CHECK_EQ_INT(
        proto_record_decode(&proto_record_GroupMetadataKey, want, sizeof want, NULL, &d, a),
        ERR_UNSUPPORTED_VERSION);
    arena_free(a);
}

TEST(proto_record_vector_offset_commit_value)
{
    static const uint8_t want_v1[] = {
        0x00, 0x01,                                     /* version 1 */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05, /* offset 5 */
        0x00, 0x01, 'm',                                /* metadata (no leaderEpoch before v3) */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xe8, /* commitTimestamp 1000 */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, 0xd0, /* expireTimestamp 2000 (v1 only) */
    };
    static const uint8_t want_v3[] = {
        0x00, 0x03,                                     /* version 3 */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05, /* offset 5 */
        0x00, 0x00, 0x00, 0x02,                         /* leaderEpoch 2 */
        0x00, 0x01, 'm',                                /* metadata */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xe8, /* commitTimestamp 1000 */
    };
    static const uint8_t want_v4[] = {
        0x00, 0x04,                                     /* version 4: flexible */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05, /* offset 5 */
        0x00, 0x00, 0x00, 0x02,                         /* leaderEpoch 2 */
        0x02, 'm',                                      /* metadata: compact */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xe8, /* commitTimestamp 1000 */
        0x00,                                           /* no tagged fields */
    };
    struct OffsetCommitValue in = {.offset = 5,
                                   .leaderEpoch = 2,
                                   .metadata = "m",
                                   .commitTimestamp = 1000,
                                   .expireTimestamp = 2000},
                             d;
    struct arena *a = arena_new(1 << 16);

    record_vector(&proto_record_OffsetCommitValue, 1, &in, want_v1, sizeof want_v1, &d, a,
                  "OffsetCommitValue v1");
    CHECK_EQ_INT(d.leaderEpoch, -1); /* absent before v3: the default */
    CHECK_EQ_INT(d.expireTimestamp, 2000);
    record_vector(&proto_record_OffsetCommitValue, 3, &in, want_v3, sizeof want_v3, &d, a,
                  "OffsetCommitValue v3");
    CHECK_EQ_INT(d.offset, 5);
    CHECK_EQ_INT(d.leaderEpoch, 2);
    CHECK_EQ_STR(d.metadata, "m");
    CHECK_EQ_INT(d.commitTimestamp, 1000);
    CHECK_EQ_INT(d.expireTimestamp, -1);
    record_vector(&proto_record_OffsetCommitValue, 4, &in, want_v4, sizeof want_v4, &d, a,
                  "OffsetCommitValue v4");
    CHECK_EQ_STR(d.metadata, "m");
    CHECK_EQ_INT(d.commitTimestamp, 1000);

    /* A version this broker does not know is refused, not misread. */
    uint8_t v5[sizeof want_v4];
    memcpy(v5, want_v4, sizeof v5);
    v5[1] = 5;
    CHECK_EQ_INT(proto_record_decode(&proto_record_OffsetCommitValue, v5, sizeof v5, NULL, &d, a),
                 ERR_UNSUPPORTED_VERSION);
    CHECK_EQ_INT(proto_record_decode(&proto_record_OffsetCommitValue, want_v3, 10, NULL, &d, a),
                 ERR_TRUNCATED);
    arena_free(a);
}

TEST(proto_record_vector_group_metadata)
{
    static const uint8_t want_key[] = {0x00, 0x02, 0x00, 0x03, 'g', 'r', 'p'};
    static const uint8_t want_v3[] = {
        0x00, 0x03,                                               /* version 3 */
        0x00, 0x08, 'c',  'o',  'n',  's',  'u',  'm',  'e', 'r', /* protocolType */
        0x00, 0x00, 0x00, 0x01,                                   /* generation 1 */
        0x00, 0x05, 'r',  'a',  'n',  'g',  'e',                  /* protocol */
        0x00, 0x02, 'm',  '1',                                    /* leader */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07,           /* currentStateTimestamp */
        0x00, 0x00, 0x00, 0x01,                                   /* members: 1 */
        0x00, 0x02, 'm',  '1',                                    /* memberId */
        0xff, 0xff,                                               /* groupInstanceId null */
        0x00, 0x01, 'c',                                          /* clientId */
        0x00, 0x02, '/',  'h',                                    /* clientHost */
        0x00, 0x00, 0x01, 0x2c,                                   /* rebalanceTimeout 300 */
        0x00, 0x00, 0x00, 0x64,                                   /* sessionTimeout 100 */
        0x00, 0x00, 0x00, 0x02, 0xab, 0xcd,                       /* subscription */
        0x00, 0x00, 0x00, 0x00,                                   /* assignment: empty */
    };
    static const uint8_t want_v4[] = {
        0x00, 0x04,                                          /* version 4: flexible */
        0x09, 'c',  'o',  'n',  's',  'u',  'm',  'e',  'r', /* protocolType */
        0x00, 0x00, 0x00, 0x01,                              /* generation 1 */
        0x06, 'r',  'a',  'n',  'g',  'e',                   /* protocol */
        0x03, 'm',  '1',                                     /* leader */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07,      /* currentStateTimestamp */
        0x02,                                                /* members: 1 (compact) */
        0x03, 'm',  '1',                                     /* memberId */
        0x00,                                                /* groupInstanceId null */
        0x02, 'c',                                           /* clientId */
        0x03, '/',  'h',                                     /* clientHost */
        0x00, 0x00, 0x01, 0x2c,                              /* rebalanceTimeout 300 */
        0x00, 0x00, 0x00, 0x64,                              /* sessionTimeout 100 */
        0x03, 0xab, 0xcd,                                    /* subscription */
        0x01,                                                /* assignment: empty */
        0x00,                                                /* member: no tagged fields */
        0x00,                                                /* value: no tagged fields */
    };
    static const uint8_t sub[] = {0xab, 0xcd};
    struct MemberMetadata m = {.memberId = "m1",
                               .clientId = "c",
                               .clientHost = "/h",
                               .rebalanceTimeout = 300,
                               .sessionTimeout = 100,
                               .subscription = {sub, 2, NULL},
                               .assignment = {NULL, 0, NULL}};
    struct GroupMetadataValue in = {.protocolType = "consumer",
                                    .generation = 1,
                                    .protocol = "range",
                                    .leader = "m1",
                                    .currentStateTimestamp = 7,
                                    .members = {&m, 1}},
                              d;
    struct GroupMetadataKey k = {.group = "grp"}, dk;
    struct arena *a = arena_new(1 << 16);

    record_vector(&proto_record_GroupMetadataKey, PROTO_GROUP_METADATA_KEY_V, &k, want_key,
                  sizeof want_key, &dk, a, "GroupMetadataKey v2");
    CHECK_EQ_STR(dk.group, "grp");
    for (int16_t v = 3; v <= 4; v++) {
        record_vector(&proto_record_GroupMetadataValue, v, &in, v == 3 ? want_v3 : want_v4,
                      v == 3 ? sizeof want_v3 : sizeof want_v4, &d, a,
                      v == 3 ? "GroupMetadataValue v3" : "GroupMetadataValue v4");
        CHECK_EQ_STR(d.protocolType, "consumer");
        CHECK_EQ_INT(d.generation, 1);
        CHECK_EQ_STR(d.protocol, "range");
        CHECK_EQ_STR(d.leader, "m1");
        CHECK_EQ_INT(d.currentStateTimestamp, 7);
        REQUIRE(d.members.n == 1);
        CHECK_EQ_STR(d.members.v[0].memberId, "m1");
        CHECK(d.members.v[0].groupInstanceId == NULL);
        CHECK_EQ_STR(d.members.v[0].clientHost, "/h");
        CHECK_EQ_INT(d.members.v[0].rebalanceTimeout, 300);
        CHECK_EQ_INT(d.members.v[0].sessionTimeout, 100);
        REQUIRE(d.members.v[0].subscription.len == 2);
        CHECK(memcmp(d.members.v[0].subscription.data, sub, 2) == 0);
        CHECK_EQ_INT(d.members.v[0].assignment.len, 0);
    }
    /* An Empty group: no protocol, no leader, no members (v0 has neither timestamp nor
     * rebalanceTimeout: both decode as -1). */
    static const uint8_t want_empty_v0[] = {
        0x00, 0x00, /* version 0 */
        0x00, 0x08, 'c',  'o',  'n',  's',  'u',
        'm',  'e',  'r',  0x00, 0x00, 0x00, 0x03, /* generation 3 */
        0xff, 0xff, 0xff, 0xff,                   /* protocol, leader: null */
        0x00, 0x00, 0x00, 0x00,                   /* members: 0 */
    };
    struct GroupMetadataValue empty = {.protocolType = "consumer", .generation = 3};
    record_vector(&proto_record_GroupMetadataValue, 0, &empty, want_empty_v0, sizeof want_empty_v0,
                  &d, a, "GroupMetadataValue v0 empty");
    CHECK(d.protocol == NULL && d.leader == NULL);
    CHECK_EQ_INT(d.currentStateTimestamp, -1);
    CHECK_EQ_INT(d.members.n, 0);
    arena_free(a);
}

TEST(proto_record_vector_transaction_log)
{
    static const uint8_t want_key[] = {0x00, 0x00, 0x00, 0x02, 't', 'x'};
    static const uint8_t want_v0[] = {
        0x00, 0x00,                                                 /* version 0 */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xe8,             /* ProducerId 1000 */
        0x00, 0x03,                                                 /* ProducerEpoch 3 */
        0x00, 0x00, 0xea, 0x60,                                     /* TransactionTimeoutMs 60000 */
        0x01,                                                       /* TransactionStatus Ongoing */
        0x00, 0x00, 0x00, 0x01,                                     /* TransactionPartitions: 1 */
        0x00, 0x01, 't',                                            /* Topic */
        0x00, 0x00, 0x00, 0x02, 0,    0,    0,    0,    0, 0, 0, 1, /* PartitionIds [0, 1] */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a,             /* LastUpdateTimestampMs 10 */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x09,             /* StartTimestampMs 9 */
    };
    static const uint8_t want_v1[] = {
        0x00, 0x01,                                        /* version 1: flexible */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xe8,    /* ProducerId 1000 */
        0x00, 0x03,                                        /* ProducerEpoch 3 */
        0x00, 0x00, 0xea, 0x60,                            /* TransactionTimeoutMs 60000 */
        0x01,                                              /* TransactionStatus Ongoing */
        0x02,                                              /* TransactionPartitions: 1 */
        0x02, 't',                                         /* Topic */
        0x03, 0,    0,    0,    0,    0,    0,    0,    1, /* PartitionIds [0, 1] */
        0x00,                                              /* partition: no tagged fields */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a,    /* LastUpdateTimestampMs 10 */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x09,    /* StartTimestampMs 9 */
        0x02,                                              /* two tagged fields (tag 0 default) */
        0x01, 0x08, 0,    0,    0,    0,    0,    0,    0, 5, /* tag 1 NextProducerId 5 */
        0x02, 0x02, 0x00, 0x02,                               /* tag 2 ClientTransactionVersion 2 */
    };
    static int32_t ids[] = {0, 1};
    struct PartitionsSchema p = {.Topic = "t", .PartitionIds = {ids, 2}};
    struct TransactionLogValue in = {.ProducerId = 1000,
                                     .PreviousProducerId = -1,
                                     .NextProducerId = 5,
                                     .ProducerEpoch = 3,
                                     .TransactionTimeoutMs = 60000,
                                     .TransactionStatus = 1,
                                     .TransactionPartitions = {&p, 1},
                                     .TransactionLastUpdateTimestampMs = 10,
                                     .TransactionStartTimestampMs = 9,
                                     .ClientTransactionVersion = 2},
                               d;
    struct TransactionLogKey k = {.TransactionalId = "tx"}, dk;
    struct arena *a = arena_new(1 << 16);

    record_vector(&proto_record_TransactionLogKey, 0, &k, want_key, sizeof want_key, &dk, a,
                  "TransactionLogKey v0");
    CHECK_EQ_STR(dk.TransactionalId, "tx");
    record_vector(&proto_record_TransactionLogValue, 0, &in, want_v0, sizeof want_v0, &d, a,
                  "TransactionLogValue v0");
    CHECK_EQ_INT(d.NextProducerId, -1); /* tagged, absent from v0: the default */
    CHECK_EQ_INT(d.ClientTransactionVersion, 0);
    REQUIRE(d.TransactionPartitions.n == 1);
    CHECK_EQ_INT(d.TransactionPartitions.v[0].PartitionIds.n, 2);
    record_vector(&proto_record_TransactionLogValue, 1, &in, want_v1, sizeof want_v1, &d, a,
                  "TransactionLogValue v1");
    CHECK_EQ_INT(d.ProducerId, 1000);
    CHECK_EQ_INT(d.PreviousProducerId, -1);
    CHECK_EQ_INT(d.NextProducerId, 5);
    CHECK_EQ_INT(d.ProducerEpoch, 3);
    CHECK_EQ_INT(d.TransactionTimeoutMs, 60000);
    CHECK_EQ_INT(d.TransactionStatus, 1);
    REQUIRE(d.TransactionPartitions.n == 1);
    CHECK_EQ_STR(d.TransactionPartitions.v[0].Topic, "t");
    REQUIRE(d.TransactionPartitions.v[0].PartitionIds.n == 2);
    CHECK_EQ_INT(d.TransactionPartitions.v[0].PartitionIds.v[1], 1);
    CHECK_EQ_INT(d.TransactionLastUpdateTimestampMs, 10);
    CHECK_EQ_INT(d.TransactionStartTimestampMs, 9);
    CHECK_EQ_INT(d.ClientTransactionVersion, 2);

    /* Complete transactions store a null partition set (nullable v0+). */
    struct TransactionLogValue none = in;
    none.TransactionPartitions.v = NULL;
    none.TransactionPartitions.n = -1;
    uint8_t buf[64];
    size_t n = proto_record_encode(&proto_record_TransactionLogValue, 0, &none, buf);
    CHECK_EQ_INT(n, proto_record_size(&proto_record_TransactionLogValue, 0, &none));
    CHECK(buf[17] == 0xff && buf[18] == 0xff && buf[19] == 0xff && buf[20] == 0xff);
    memset(&d, 0, sizeof d);
    REQUIRE(proto_record_decode(&proto_record_TransactionLogValue, buf, n, NULL, &d, a) == 0);
    CHECK_EQ_INT(d.TransactionPartitions.n, -1);
    arena_free(a);
}

TEST(proto_record_vector_consumer_protocol)
{
    static const uint8_t want_sub_v0[] = {
        0x00, 0x00,                                                /* version 0 */
        0x00, 0x00, 0x00, 0x02,                                    /* Topics: 2 */
        0x00, 0x01, 'a',  0x00, 0x01, 'b', 0xff, 0xff, 0xff, 0xff, /* UserData: null */
    };
    static const uint8_t want_sub_v3[] = {
        0x00, 0x03,                                     /* version 3 */
        0x00, 0x00, 0x00, 0x01,                         /* Topics: 1 */
        0x00, 0x01, 'a',  0x00, 0x00, 0x00, 0x01, 0x55, /* UserData: 1 byte */
        0x00, 0x00, 0x00, 0x01,                         /* OwnedPartitions: 1 */
        0x00, 0x01, 'a',                                /* Topic */
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02, /* Partitions [2] */
        0x00, 0x00, 0x00, 0x04,                         /* GenerationId 4 */
        0x00, 0x02, 'r',  '1',                          /* RackId */
    };
    static const uint8_t want_asg_v1[] = {
        0x00, 0x01,             /* version 1 */
        0x00, 0x00, 0x00, 0x01, /* AssignedPartitions: 1 */
        0x00, 0x01, 't',  0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, /* Partitions [0] */
        0xff, 0xff, 0xff, 0xff,                                           /* UserData: null */
    };
    static const uint8_t ud[] = {0x55};
    char *topics2[] = {"a", "b"};
    static int32_t p2[] = {2}, p0[] = {0};
    struct ConsumerProtocolTopicPartition owned = {.Topic = "a", .Partitions = {p2, 1}};
    struct ConsumerProtocolTopicPartition asg_tp = {.Topic = "t", .Partitions = {p0, 1}};
    struct ConsumerProtocolSubscription s0 = {.Topics = {topics2, 2}, .UserData = {NULL, -1, NULL}};
    struct ConsumerProtocolSubscription s3 = {.Topics = {topics2, 1},
                                              .UserData = {ud, 1, NULL},
                                              .OwnedPartitions = {&owned, 1},
                                              .GenerationId = 4,
                                              .RackId = "r1"},
                                        d;
    struct ConsumerProtocolAssignment as1 = {.AssignedPartitions = {&asg_tp, 1},
                                             .UserData = {NULL, -1, NULL}},
                                      da;
    struct arena *a = arena_new(1 << 16);
    int16_t v = -1;

    record_vector(&proto_record_ConsumerProtocolSubscription, 0, &s0, want_sub_v0,
                  sizeof want_sub_v0, &d, a, "ConsumerProtocolSubscription v0");
    REQUIRE(d.Topics.n == 2);
    CHECK_EQ_STR(d.Topics.v[1], "b");
    CHECK_EQ_INT(d.UserData.len, -1);
    CHECK_EQ_INT(d.GenerationId, -1);
    CHECK(d.RackId == NULL);
    record_vector(&proto_record_ConsumerProtocolSubscription, 3, &s3, want_sub_v3,
                  sizeof want_sub_v3, &d, a, "ConsumerProtocolSubscription v3");
    REQUIRE(d.OwnedPartitions.n == 1);
    CHECK_EQ_INT(d.OwnedPartitions.v[0].Partitions.v[0], 2);
    CHECK_EQ_INT(d.GenerationId, 4);
    CHECK_EQ_STR(d.RackId, "r1");
    record_vector(&proto_record_ConsumerProtocolAssignment, 1, &as1, want_asg_v1,
                  sizeof want_asg_v1, &da, a, "ConsumerProtocolAssignment v1");
    REQUIRE(da.AssignedPartitions.n == 1);
    CHECK_EQ_STR(da.AssignedPartitions.v[0].Topic, "t");
    CHECK_EQ_INT(da.UserData.len, -1);

    /* A newer subscription (v7, with fields appended) decodes as v3, as Kafka's consumer
     * does; the version on the wire is reported as sent. */
    uint8_t newer[sizeof want_sub_v3 + 3];
    memcpy(newer, want_sub_v3, sizeof want_sub_v3);
    newer[1] = 7;
    memset(newer + sizeof want_sub_v3, 0x77, 3);
    memset(&d, 0, sizeof d);
    REQUIRE(proto_record_decode(&proto_record_ConsumerProtocolSubscription, newer, sizeof newer, &v,
                                &d, a) == 0);
    CHECK_EQ_INT(v, 7);
    CHECK_EQ_STR(d.RackId, "r1");
    /* A negative version is refused. */
    newer[0] = 0xff;
    CHECK_EQ_INT(proto_record_decode(&proto_record_ConsumerProtocolSubscription, newer,
                                     sizeof newer, &v, &d, a),
                 ERR_UNSUPPORTED_VERSION);
    arena_free(a);
}

/* ---------------------------------------------------------------------------------------- */
/* Group and transaction APIs: requests built byte by byte from the JSON schemas (not by the
 * encoder), decoded at their lowest, a middle and their highest version. */

/* A hand-written request body. `flex` picks the compact forms and the tagged sections. */
struct wbuf {
    uint8_t b[1024];
    size_t n;
    bool flex;
};

static void w_be(struct wbuf *w, uint64_t v, int width)
{
    for (int i = width - 1; i >= 0; i--)
        w->b[w->n++] = (uint8_t)(v >> (8 * i));
}

static void w_i8(struct wbuf *w, int8_t v)
{
    w_be(w, (uint8_t)v, 1);
}

static void w_i16(struct wbuf *w, int16_t v)
{
    w_be(w, (uint16_t)v, 2);
}

static void w_i32(struct wbuf *w, int32_t v)
{
    w_be(w, (uint32_t)v, 4);
}

static void w_i64(struct wbuf *w, int64_t v)
{
    w_be(w, (uint64_t)v, 8);
}

static void w_uvarint(struct wbuf *w, uint32_t v)
{
    while (v >= 0x80) {
        w->b[w->n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    w->b[w->n++] = (uint8_t)v;
}

/* A length or count: INT16/INT32 classic, unsigned varint of n+1 compact; -1 = null. */
static void w_len(struct wbuf *w, int32_t n, int width)
{
    if (w->flex)
        w_uvarint(w, (uint32_t)(n + 1));
    else
        w_be(w, (uint32_t)n, width);
}

static void w_str(struct wbuf *w, const char *s)
{
    int32_t n = s ? (int32_t)strlen(s) : -1;
    w_len(w, n, 2);
    for (int32_t i = 0; i < n; i++)
        w->b[w->n++] = (uint8_t)s[i];
}

static void w_bytes(struct wbuf *w, const char *s)
{
    int32_t n = s ? (int32_t)strlen(s) : -1;
    w_len(w, n, 4);
    for (int32_t i = 0; i < n; i++)
        w->b[w->n++] = (uint8_t)s[i];
}

static void w_arr(struct wbuf *w, int32_t n)
{
    w_len(w, n, 4);
}

/* The end of a struct: an empty tagged-field section in flexible versions. */
static void w_end(struct wbuf *w)
{
    if (w->flex)
        w_uvarint(w, 0);
}

static struct wbuf wbuf_for(int16_t key, int16_t version)
{
    struct wbuf w = {{0}, 0, proto_api_flexible(proto_api_find(key), version)};
    return w;
}

/* Decodes w as a request of API `key` at `version`; every byte must be consumed. */
static void *decode_req(int16_t key, int16_t version, const struct wbuf *w, struct arena *a)
{
    const struct proto_api *api = proto_api_find(key);
    void *out;
    size_t consumed = 0;
    int rc;

    if (api == NULL || version < api->min_version || version > api->max_version) {
        harness_fail(__FILE__, __LINE__, "API or version not declared");
        return NULL;
    }
    out = arena_alloc(a, api->request->size);
    memset(out, 0, api->request->size);
    rc = proto_decode(api->request, version, proto_api_flexible(api, version), w->b, w->n,
                      &consumed, out, a);
    if (rc != 0 || consumed != w->n) {
        char m[160];
        snprintf(m, sizeof m, "%s v%d: rc %d, consumed %zu of %zu", api->name, version, rc,
                 consumed, w->n);
        harness_fail(__FILE__, __LINE__, m);
        return NULL;
    }
    return out;
}

TEST(proto_group_api_table)
{
    static const struct {
        int16_t key, min, max, flex;
    } want[] = {
        {PROTO_API_OffsetCommit, 0, 8, 8},    {PROTO_API_OffsetFetch, 0, 8, 6},
        {PROTO_API_FindCoordinator, 0, 4, 3}, {PROTO_API_JoinGroup, 0, 9, 6},
        {PROTO_API_Heartbeat, 0, 4, 4},       {PROTO_API_LeaveGroup, 0, 5, 4},
        {PROTO_API_SyncGroup, 0, 5, 4},       {PROTO_API_DescribeGroups, 0, 5, 5},
        {PROTO_API_ListGroups, 0, 4, 3},      {PROTO_API_DeleteGroups, 0, 2, 2},
        {PROTO_API_OffsetDelete, 0, 0, -1},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const struct proto_api *api = proto_api_find(want[i].key);
        REQUIRE(api != NULL);
        CHECK_EQ_INT(api->min_version, want[i].min);
        CHECK_EQ_INT(api->max_version, want[i].max);
        CHECK_EQ_INT(api->flexible_min, want[i].flex);
    }
}

TEST(proto_decode_find_coordinator)
{
    struct arena *a = arena_new(1 << 16);
    struct FindCoordinatorRequest *r;
    struct wbuf w;

    w = wbuf_for(PROTO_API_FindCoordinator, 0);
    w_str(&w, "g1");
    REQUIRE((r = decode_req(PROTO_API_FindCoordinator, 0, &w, a)) != NULL);
    CHECK_EQ_STR(r->Key, "g1");
    CHECK_EQ_INT(r->KeyType, 0);

    w = wbuf_for(PROTO_API_FindCoordinator, 3);
    CHECK(w.flex);
    w_str(&w, "tx");
    w_i8(&w, 1);
    w_end(&w);
    REQUIRE((r = decode_req(PROTO_API_FindCoordinator, 3, &w, a)) != NULL);
    CHECK_EQ_STR(r->Key, "tx");
    CHECK_EQ_INT(r->KeyType, 1);

    w = wbuf_for(PROTO_API_FindCoordinator, 4);
    w_i8(&w, 0);
    w_arr(&w, 2);
    w_str(&w, "a");
    w_str(&w, "b");
    w_end(&w);
    REQUIRE((r = decode_req(PROTO_API_FindCoordinator, 4, &w, a)) != NULL);
    CHECK(r->Key == NULL);
    REQUIRE(r->CoordinatorKeys.n == 2);
    CHECK_EQ_STR(r->CoordinatorKeys.v[1], "b");
    arena_free(a);
}

TEST(proto_decode_join_group)
{
    struct arena *a = arena_new(1 << 16);
    struct JoinGroupRequest *r;
    struct wbuf w;

    w = wbuf_for(PROTO_API_JoinGroup, 0);
    w_str(&w, "g");
    w_i32(&w, 10000);
    w_str(&w, "");
    w_str(&w, "consumer");
    w_arr(&w, 1);
    w_str(&w, "range");
    w_bytes(&w, "md");
    REQUIRE((r = decode_req(PROTO_API_JoinGroup, 0, &w, a)) != NULL);
    CHECK_EQ_STR(r->GroupId, "g");
    CHECK_EQ_INT(r->SessionTimeoutMs, 10000);
    CHECK_EQ_INT(r->RebalanceTimeoutMs, -1); /* v1+: the default */
    CHECK_EQ_STR(r->MemberId, "");
    CHECK(r->GroupInstanceId == NULL);
    CHECK_EQ_STR(r->ProtocolType, "consumer");
    REQUIRE(r->Protocols.n == 1);
    CHECK_EQ_STR(r->Protocols.v[0].Name, "range");
    CHECK_EQ_INT(r->Protocols.v[0].Metadata.len, 2);
    CHECK(r->Reason == NULL);

    w = wbuf_for(PROTO_API_JoinGroup, 5);
    CHECK(!w.flex);
    w_str(&w, "g");
    w_i32(&w, 10000);
    w_i32(&w, 30000);
    w_str(&w, "m-1");
    w_str(&w, "inst");
    w_str(&w, "consumer");
    w_arr(&w, 0);
    REQUIRE((r = decode_req(PROTO_API_JoinGroup, 5, &w, a)) != NULL);
    CHECK_EQ_INT(r->RebalanceTimeoutMs, 30000);
    CHECK_EQ_STR(r->GroupInstanceId, "inst");
    CHECK_EQ_INT(r->Protocols.n, 0);

    w = wbuf_for(PROTO_API_JoinGroup, 9);
    CHECK(w.flex);
    w_str(&w, "g");
    w_i32(&w, 45000);
    w_i32(&w, 300000);
    w_str(&w, "m-2");
    w_str(&w, NULL);
    w_str(&w, "consumer");
    w_arr(&w, 2);
    w_str(&w, "range");
    w_bytes(&w, "x");
    w_end(&w);
    w_str(&w, "cooperative-sticky");
    w_bytes(&w, "");
    w_end(&w);
    w_str(&w, "rejoin");
    w_end(&w);
    REQUIRE((r = decode_req(PROTO_API_JoinGroup, 9, &w, a)) != NULL);
    CHECK_EQ_STR(r->MemberId, "m-2");
    CHECK(r->GroupInstanceId == NULL);
    REQUIRE(r->Protocols.n == 2);
    CHECK_EQ_STR(r->Protocols.v[1].Name, "cooperative-sticky");
    CHECK_EQ_INT(r->Protocols.v[1].Metadata.len, 0);
    CHECK_EQ_STR(r->Reason, "rejoin");
    arena_free(a);
}

TEST(proto_decode_heartbeat)
{
    struct arena *a = arena_new(1 << 16);
    struct HeartbeatRequest *r;
    struct wbuf w;

    for (int16_t v = 0; v <= 4; v += v == 0 ? 3 : 1) { /* 0, 3, 4 */
        w = wbuf_for(PROTO_API_Heartbeat, v);
        CHECK(w.flex == (v == 4));
        w_str(&w, "g");
        w_i32(&w, 7);
        w_str(&w, "m");
        if (v >= 3)
            w_str(&w, v == 3 ? "i" : NULL);
        w_end(&w);
        REQUIRE((r = decode_req(PROTO_API_Heartbeat, v, &w, a)) != NULL);
        CHECK_EQ_STR(r->GroupId, "g");
        CHECK_EQ_INT(r->GenerationId, 7);
        CHECK_EQ_STR(r->MemberId, "m");
        if (v == 3)
            CHECK_EQ_STR(r->GroupInstanceId, "i");
        else
            CHECK(r->GroupInstanceId == NULL);
    }
    arena_free(a);
}

TEST(proto_decode_leave_group)
{
    struct arena *a = arena_new(1 << 16);
    struct LeaveGroupRequest *r;
    struct wbuf w;

    w = wbuf_for(PROTO_API_LeaveGroup, 0);
    w_str(&w, "g");
    w_str(&w, "m");
    REQUIRE((r = decode_req(PROTO_API_LeaveGroup, 0, &w, a)) != NULL);
    CHECK_EQ_STR(r->MemberId, "m");
    CHECK_EQ_INT(r->Members.n, 0);

    w = wbuf_for(PROTO_API_LeaveGroup, 3);
    w_str(&w, "g");
    w_arr(&w, 2);
    w_str(&w, "m1");
    w_str(&w, NULL);
    w_str(&w, "");
    w_str(&w, "i2");
    REQUIRE((r = decode_req(PROTO_API_LeaveGroup, 3, &w, a)) != NULL);
    CHECK(r->MemberId == NULL);
    REQUIRE(r->Members.n == 2);
    CHECK_EQ_STR(r->Members.v[0].MemberId, "m1");
    CHECK(r->Members.v[0].GroupInstanceId == NULL);
    CHECK_EQ_STR(r->Members.v[1].GroupInstanceId, "i2");

    w = wbuf_for(PROTO_API_LeaveGroup, 5);
    CHECK(w.flex);
    w_str(&w, "g");
    w_arr(&w, 1);
    w_str(&w, "m1");
    w_str(&w, NULL);
    w_str(&w, "the consumer is being closed");
    w_end(&w);
    w_end(&w);
    REQUIRE((r = decode_req(PROTO_API_LeaveGroup, 5, &w, a)) != NULL);
    REQUIRE(r->Members.n == 1);
    CHECK_EQ_STR(r->Members.v[0].Reason, "the consumer is being closed");
    arena_free(a);
}

TEST(proto_decode_sync_group)
{
    struct arena *a = arena_new(1 << 16);
    struct SyncGroupRequest *r;
    struct wbuf w;

    w = wbuf_for(PROTO_API_SyncGroup, 0);
    w_str(&w, "g");
    w_i32(&w, 1);
    w_str(&w, "m1");
    w_arr(&w, 1);
    w_str(&w, "m1");
    w_bytes(&w, "asg");
    REQUIRE((r = decode_req(PROTO_API_SyncGroup, 0, &w, a)) != NULL);
    CHECK_EQ_INT(r->GenerationId, 1);
    REQUIRE(r->Assignments.n == 1);
    CHECK_EQ_STR(r->Assignments.v[0].MemberId, "m1");
    CHECK(r->Assignments.v[0].Assignment.len == 3 &&
          memcmp(r->Assignments.v[0].Assignment.data, "asg", 3) == 0);

    w = wbuf_for(PROTO_API_SyncGroup, 3);
    w_str(&w, "g");
    w_i32(&w, 2);
    w_str(&w, "m1");
    w_str(&w, "i1");
    w_arr(&w, 0);
    REQUIRE((r = decode_req(PROTO_API_SyncGroup, 3, &w, a)) != NULL);
    CHECK_EQ_STR(r->GroupInstanceId, "i1");
    CHECK(r->ProtocolType == NULL && r->ProtocolName == NULL);

    w = wbuf_for(PROTO_API_SyncGroup, 5);
    CHECK(w.flex);
    w_str(&w, "g");
    w_i32(&w, 3);
    w_str(&w, "m1");
    w_str(&w, NULL);
    w_str(&w, "consumer");
    w_str(&w, "range");
    w_arr(&w, 1);
    w_str(&w, "m1");
    w_bytes(&w, "a");
    w_end(&w);
    w_end(&w);
    REQUIRE((r = decode_req(PROTO_API_SyncGroup, 5, &w, a)) != NULL);
    CHECK_EQ_STR(r->ProtocolType, "consumer");
    CHECK_EQ_STR(r->ProtocolName, "range");
    REQUIRE(r->Assignments.n == 1);
    CHECK_EQ_INT(r->Assignments.v[0].Assignment.len, 1);
    arena_free(a);
}

TEST(proto_decode_offset_commit)
{
    struct arena *a = arena_new(1 << 16);
    struct OffsetCommitRequest *r;
    struct wbuf w;

    w = wbuf_for(PROTO_API_OffsetCommit, 0);
    w_str(&w, "g");
    w_arr(&w, 1);
    w_str(&w, "t");
    w_arr(&w, 1);
    w_i32(&w, 0);
    w_i64(&w, 42);
    w_str(&w, NULL);
    REQUIRE((r = decode_req(PROTO_API_OffsetCommit, 0, &w, a)) != NULL);
    CHECK_EQ_INT(r->GenerationIdOrMemberEpoch, -1);
    CHECK(r->MemberId == NULL);
    CHECK_EQ_INT(r->RetentionTimeMs, -1);
    REQUIRE(r->Topics.n == 1 && r->Topics.v[0].Partitions.n == 1);
    CHECK_EQ_INT(r->Topics.v[0].Partitions.v[0].CommittedOffset, 42);
    CHECK_EQ_INT(r->Topics.v[0].Partitions.v[0].CommittedLeaderEpoch, -1);
    CHECK_EQ_INT(r->Topics.v[0].Partitions.v[0].CommitTimestamp, -1);
    CHECK(r->Topics.v[0].Partitions.v[0].CommittedMetadata == NULL);

    w = wbuf_for(PROTO_API_OffsetCommit, 1);
    w_str(&w, "g");
    w_i32(&w, 5);
    w_str(&w, "m");
    w_arr(&w, 1);
    w_str(&w, "t");
    w_arr(&w, 1);
    w_i32(&w, 3);
    w_i64(&w, 7);
    w_i64(&w, 123456);
    w_str(&w, "meta");
    REQUIRE((r = decode_req(PROTO_API_OffsetCommit, 1, &w, a)) != NULL);
    CHECK_EQ_INT(r->GenerationIdOrMemberEpoch, 5);
    CHECK_EQ_INT(r->Topics.v[0].Partitions.v[0].CommitTimestamp, 123456);
    CHECK_EQ_STR(r->Topics.v[0].Partitions.v[0].CommittedMetadata, "meta");

    w = wbuf_for(PROTO_API_OffsetCommit, 2);
    w_str(&w, "g");
    w_i32(&w, 5);
    w_str(&w, "m");
    w_i64(&w, 86400000);
    w_arr(&w, 0);
    REQUIRE((r = decode_req(PROTO_API_OffsetCommit, 2, &w, a)) != NULL);
    CHECK_EQ_INT(r->RetentionTimeMs, 86400000);

    w = wbuf_for(PROTO_API_OffsetCommit, 8);
    CHECK(w.flex);
    w_str(&w, "g");
    w_i32(&w, 6);
    w_str(&w, "m");
    w_str(&w, "inst");
    w_arr(&w, 1);
    w_str(&w, "t");
    w_arr(&w, 2);
    w_i32(&w, 0);
    w_i64(&w, 10);
    w_i32(&w, 3);
    w_str(&w, "");
    w_end(&w);
    w_i32(&w, 1);
    w_i64(&w, 11);
    w_i32(&w, -1);
    w_str(&w, NULL);
    w_end(&w);
    w_end(&w);
    w_end(&w);
    REQUIRE((r = decode_req(PROTO_API_OffsetCommit, 8, &w, a)) != NULL);
    CHECK_EQ_STR(r->GroupInstanceId, "inst");
    CHECK_EQ_INT(r->RetentionTimeMs, -1);
    REQUIRE(r->Topics.n == 1 && r->Topics.v[0].Partitions.n == 2);
    CHECK_EQ_INT(r->Topics.v[0].Partitions.v[0].CommittedLeaderEpoch, 3);
    CHECK_EQ_STR(r->Topics.v[0].Partitions.v[0].CommittedMetadata, "");
    CHECK_EQ_INT(r->Topics.v[0].Partitions.v[1].CommittedOffset, 11);
    CHECK(r->Topics.v[0].Partitions.v[1].CommittedMetadata == NULL);
    arena_free(a);
}

TEST(proto_decode_offset_fetch)
{
    struct arena *a = arena_new(1 << 16);
    struct OffsetFetchRequest *r;
    struct wbuf w;

    w = wbuf_for(PROTO_API_OffsetFetch, 0);
    w_str(&w, "g");
    w_arr(&w, 1);
    w_str(&w, "t");
    w_arr(&w, 2);
    w_i32(&w, 0);
    w_i32(&w, 1);
    REQUIRE((r = decode_req(PROTO_API_OffsetFetch, 0, &w, a)) != NULL);
    CHECK_EQ_STR(r->GroupId, "g");
    REQUIRE(r->Topics.n == 1);
    CHECK_EQ_INT(r->Topics.v[0].PartitionIndexes.n, 2);
    CHECK(!r->RequireStable);

    w = wbuf_for(PROTO_API_OffsetFetch, 7);
    CHECK(w.flex);
    w_str(&w, "g");
    w_arr(&w, -1); /* null: every partition the group has */
    w_i8(&w, 1);
    w_end(&w);
    REQUIRE((r = decode_req(PROTO_API_OffsetFetch, 7, &w, a)) != NULL);
    CHECK_EQ_INT(r->Topics.n, -1);
    CHECK(r->RequireStable);

    w = wbuf_for(PROTO_API_OffsetFetch, 8);
    w_arr(&w, 2);
    w_str(&w, "g1");
    w_arr(&w, -1);
    w_end(&w);
    w_str(&w, "g2");
    w_arr(&w, 1);
    w_str(&w, "t");
    w_arr(&w, 1);
    w_i32(&w, 4);
    w_end(&w);
    w_end(&w);
    w_i8(&w, 0);
    w_end(&w);
    REQUIRE((r = decode_req(PROTO_API_OffsetFetch, 8, &w, a)) != NULL);
    CHECK(r->GroupId == NULL);
    CHECK_EQ_INT(r->Topics.n, 0);
    REQUIRE(r->Groups.n == 2);
    CHECK_EQ_STR(r->Groups.v[0].GroupId, "g1");
    CHECK_EQ_INT(r->Groups.v[0].Topics.n, -1);
    REQUIRE(r->Groups.v[1].Topics.n == 1);
    CHECK_EQ_STR(r->Groups.v[1].Topics.v[0].Name, "t");
    CHECK_EQ_INT(r->Groups.v[1].Topics.v[0].PartitionIndexes.v[0], 4);
    arena_free(a);
}

TEST(proto_decode_list_describe_delete_groups)
{
    struct arena *a = arena_new(1 << 16);
    struct ListGroupsRequest *l;
    struct DescribeGroupsRequest *d;
    struct DeleteGroupsRequest *x;
    struct OffsetDeleteRequest *o;
    struct wbuf w;

    w = wbuf_for(PROTO_API_ListGroups, 0);
    REQUIRE((l = decode_req(PROTO_API_ListGroups, 0, &w, a)) != NULL);
    CHECK_EQ_INT(l->StatesFilter.n, 0);
    w = wbuf_for(PROTO_API_ListGroups, 3);
    w_end(&w);
    CHECK_EQ_INT(w.n, 1);
    REQUIRE((l = decode_req(PROTO_API_ListGroups, 3, &w, a)) != NULL);
    w = wbuf_for(PROTO_API_ListGroups, 4);
    w_arr(&w, 2);
    w_str(&w, "Stable");
    w_str(&w, "Empty");
    w_end(&w);
    REQUIRE((l = decode_req(PROTO_API_ListGroups, 4, &w, a)) != NULL);
    REQUIRE(l->StatesFilter.n == 2);
    CHECK_EQ_STR(l->StatesFilter.v[1], "Empty");

    w = wbuf_for(PROTO_API_DescribeGroups, 0);
    w_arr(&w, 1);
    w_str(&w, "g");
    REQUIRE((d = decode_req(PROTO_API_DescribeGroups, 0, &w, a)) != NULL);
    REQUIRE(d->Groups.n == 1);
    CHECK(!d->IncludeAuthorizedOperations);
    w = wbuf_for(PROTO_API_DescribeGroups, 3);
    w_arr(&w, 0);
    w_i8(&w, 1);
    REQUIRE((d = decode_req(PROTO_API_DescribeGroups, 3, &w, a)) != NULL);
    CHECK(d->IncludeAuthorizedOperations);
    w = wbuf_for(PROTO_API_DescribeGroups, 5);
    CHECK(w.flex);
    w_arr(&w, 2);
    w_str(&w, "a");
    w_str(&w, "b");
    w_i8(&w, 0);
    w_end(&w);
    REQUIRE((d = decode_req(PROTO_API_DescribeGroups, 5, &w, a)) != NULL);
    REQUIRE(d->Groups.n == 2);
    CHECK_EQ_STR(d->Groups.v[1], "b");

    for (int16_t v = 0; v <= 2; v++) {
        w = wbuf_for(PROTO_API_DeleteGroups, v);
        CHECK(w.flex == (v == 2));
        w_arr(&w, 1);
        w_str(&w, "g");
        w_end(&w);
        REQUIRE((x = decode_req(PROTO_API_DeleteGroups, v, &w, a)) != NULL);
        REQUIRE(x->GroupsNames.n == 1);
        CHECK_EQ_STR(x->GroupsNames.v[0], "g");
    }

    w = wbuf_for(PROTO_API_OffsetDelete, 0);
    CHECK(!w.flex);
    w_str(&w, "g");
    w_arr(&w, 1);
    w_str(&w, "t");
    w_arr(&w, 2);
    w_i32(&w, 0);
    w_i32(&w, 9);
    REQUIRE((o = decode_req(PROTO_API_OffsetDelete, 0, &w, a)) != NULL);
    CHECK_EQ_STR(o->GroupId, "g");
    REQUIRE(o->Topics.n == 1 && o->Topics.v[0].Partitions.n == 2);
    CHECK_EQ_INT(o->Topics.v[0].Partitions.v[1].PartitionIndex, 9);
    arena_free(a);
}

/* Responses: the round trips above cover every field at every version; these pin the wire
 * form of the two answers every consumer reads first. */
TEST(proto_vector_group_responses)
{
    static const uint8_t want_fc_v4[] = {
        0x00, 0x00, 0x00, 0x00, /* ThrottleTimeMs */
        0x02,                   /* Coordinators: 1 */
        0x02, 'g',              /* Key */
        0x00, 0x00, 0x00, 0x01, /* NodeId 1 */
        0x02, 'h',              /* Host */
        0x00, 0x00, 0x23, 0x84, /* Port 9092 */
        0x00, 0x00,             /* ErrorCode */
        0x00,                   /* ErrorMessage: null */
        0x00,                   /* coordinator: no tagged fields */
        0x00,                   /* no tagged fields */
    };
    static const uint8_t want_fc_v0[] = {
        0x00, 0x0f,             /* ErrorCode COORDINATOR_NOT_AVAILABLE */
        0xff, 0xff, 0xff, 0xff, /* NodeId -1 */
        0x00, 0x00,             /* Host "" */
        0xff, 0xff, 0xff, 0xff, /* Port -1 */
    };
    static const uint8_t want_hb_v4[] = {0x00, 0x00, 0x00, 0x00, 0x00, 0x1b, 0x00};
    struct Coordinator c = {.Key = "g", .NodeId = 1, .Host = "h", .Port = 9092};
    struct FindCoordinatorResponse fc4 = {.Coordinators = {&c, 1}};
    struct FindCoordinatorResponse fc0 = {
        .ErrorCode = 15, .NodeId = -1, .Host = "", .Port = -1, .ErrorMessage = "x"};
    struct HeartbeatResponse hb = {.ErrorCode = 27}; /* REBALANCE_IN_PROGRESS */
    uint8_t buf[64];
    size_t n;

    n = proto_encode(&proto_FindCoordinatorResponse, 4, true, &fc4, buf);
    check_bytes(buf, n, want_fc_v4, sizeof want_fc_v4, "FindCoordinator v4 response");
    n = proto_encode(&proto_FindCoordinatorResponse, 0, false, &fc0, buf);
    check_bytes(buf, n, want_fc_v0, sizeof want_fc_v0, "FindCoordinator v0 response");
    n = proto_encode(&proto_HeartbeatResponse, 4, true, &hb, buf);
    check_bytes(buf, n, want_hb_v4, sizeof want_hb_v4, "Heartbeat v4 response");
}

TEST(proto_txn_api_table)
{
    static const struct {
        int16_t key, min, max, flex;
    } want[] = {
        {PROTO_API_AddPartitionsToTxn, 0, 4, 3},
        {PROTO_API_AddOffsetsToTxn, 0, 3, 3},
        {PROTO_API_EndTxn, 0, 3, 3},
        {PROTO_API_WriteTxnMarkers, 0, 1, 1},
        {PROTO_API_TxnOffsetCommit, 0, 3, 3},
        {PROTO_API_DescribeTransactions, 0, 0, 0},
        {PROTO_API_ListTransactions, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const struct proto_api *api = proto_api_find(want[i].key);
        REQUIRE(api != NULL);
        CHECK_EQ_INT(api->min_version, want[i].min);
        CHECK_EQ_INT(api->max_version, want[i].max);
        CHECK_EQ_INT(api->flexible_min, want[i].flex);
    }
}

/* One topic with partitions [0, 1], as AddPartitionsToTxnTopic. */
static void w_txn_topic(struct wbuf *w, const char *name)
{
    w_str(w, name);
    w_arr(w, 2);
    w_i32(w, 0);
    w_i32(w, 1);
    w_end(w);
}

TEST(proto_decode_add_partitions_to_txn)
{
    struct arena *a = arena_new(1 << 16);
    struct AddPartitionsToTxnRequest *r;
    struct wbuf w;

    for (int16_t v = 0; v <= 3; v += 3) {
        w = wbuf_for(PROTO_API_AddPartitionsToTxn, v);
        CHECK(w.flex == (v == 3));
        w_str(&w, "tx");
        w_i64(&w, 4000);
        w_i16(&w, 2);
        w_arr(&w, 1);
        w_txn_topic(&w, "t");
        w_end(&w);
        REQUIRE((r = decode_req(PROTO_API_AddPartitionsToTxn, v, &w, a)) != NULL);
        CHECK_EQ_STR(r->V3AndBelowTransactionalId, "tx");
        CHECK_EQ_INT(r->V3AndBelowProducerId, 4000);
        CHECK_EQ_INT(r->V3AndBelowProducerEpoch, 2);
        REQUIRE(r->V3AndBelowTopics.n == 1);
        CHECK_EQ_STR(r->V3AndBelowTopics.v[0].Name, "t");
        REQUIRE(r->V3AndBelowTopics.v[0].Partitions.n == 2);
        CHECK_EQ_INT(r->V3AndBelowTopics.v[0].Partitions.v[1], 1);
        CHECK_EQ_INT(r->Transactions.n, 0);
    }

    w = wbuf_for(PROTO_API_AddPartitionsToTxn, 4);
    w_arr(&w, 2);
    w_str(&w, "tx1");
    w_i64(&w, 1);
    w_i16(&w, 0);
    w_i8(&w, 1);
    w_arr(&w, 1);
    w_txn_topic(&w, "a");
    w_end(&w);
    w_str(&w, "tx2");
    w_i64(&w, 2);
    w_i16(&w, 5);
    w_i8(&w, 0);
    w_arr(&w, 2);
    w_txn_topic(&w, "b");
    w_txn_topic(&w, "c");
    w_end(&w);
    w_end(&w);
    REQUIRE((r = decode_req(PROTO_API_AddPartitionsToTxn, 4, &w, a)) != NULL);
    CHECK(r->V3AndBelowTransactionalId == NULL);
    REQUIRE(r->Transactions.n == 2);
    CHECK_EQ_STR(r->Transactions.v[0].TransactionalId, "tx1");
    CHECK(r->Transactions.v[0].VerifyOnly);
    CHECK(!r->Transactions.v[1].VerifyOnly);
    CHECK_EQ_INT(r->Transactions.v[1].ProducerEpoch, 5);
    REQUIRE(r->Transactions.v[1].Topics.n == 2);
    CHECK_EQ_STR(r->Transactions.v[1].Topics.v[1].Name, "c");
    arena_free(a);
}

TEST(proto_decode_add_offsets_end_txn)
{
    struct arena *a = arena_new(1 << 16);
    struct AddOffsetsToTxnRequest *ao;
    struct EndTxnRequest *et;
    struct wbuf w;

    for (int16_t v = 0; v <= 3; v += v == 0 ? 2 : 1) { /* 0, 2, 3 */
        w = wbuf_for(PROTO_API_AddOffsetsToTxn, v);
        CHECK(w.flex == (v == 3));
        w_str(&w, "tx");
        w_i64(&w, 77);
        w_i16(&w, 1);
        w_str(&w, "grp");
        w_end(&w);
        REQUIRE((ao = decode_req(PROTO_API_AddOffsetsToTxn, v, &w, a)) != NULL);
        CHECK_EQ_STR(ao->TransactionalId, "tx");
        CHECK_EQ_INT(ao->ProducerId, 77);
        CHECK_EQ_INT(ao->ProducerEpoch, 1);
        CHECK_EQ_STR(ao->GroupId, "grp");

        w = wbuf_for(PROTO_API_EndTxn, v);
        CHECK(w.flex == (v == 3));
        w_str(&w, "tx");
        w_i64(&w, 77);
        w_i16(&w, 1);
        w_i8(&w, v == 2 ? 0 : 1);
        w_end(&w);
        REQUIRE((et = decode_req(PROTO_API_EndTxn, v, &w, a)) != NULL);
        CHECK_EQ_STR(et->TransactionalId, "tx");
        CHECK_EQ_INT(et->ProducerId, 77);
        CHECK(et->Committed == (v != 2));
    }
    arena_free(a);
}

TEST(proto_decode_write_txn_markers)
{
    struct arena *a = arena_new(1 << 16);
    struct WriteTxnMarkersRequest *r;
    struct wbuf w;

    for (int16_t v = 0; v <= 1; v++) {
        w = wbuf_for(PROTO_API_WriteTxnMarkers, v);
        CHECK(w.flex == (v == 1));
        w_arr(&w, 1);
        w_i64(&w, 9);
        w_i16(&w, 3);
        w_i8(&w, 1);
        w_arr(&w, 1);
        w_str(&w, "t");
        w_arr(&w, 1);
        w_i32(&w, 2);
        w_end(&w);
        w_i32(&w, 11);
        w_end(&w);
        w_end(&w);
        REQUIRE((r = decode_req(PROTO_API_WriteTxnMarkers, v, &w, a)) != NULL);
        REQUIRE(r->Markers.n == 1);
        CHECK_EQ_INT(r->Markers.v[0].ProducerId, 9);
        CHECK_EQ_INT(r->Markers.v[0].ProducerEpoch, 3);
        CHECK(r->Markers.v[0].TransactionResult);
        REQUIRE(r->Markers.v[0].Topics.n == 1);
        CHECK_EQ_INT(r->Markers.v[0].Topics.v[0].PartitionIndexes.v[0], 2);
        CHECK_EQ_INT(r->Markers.v[0].CoordinatorEpoch, 11);
    }
    arena_free(a);
}

TEST(proto_decode_txn_offset_commit)
{
    struct arena *a = arena_new(1 << 16);
    struct TxnOffsetCommitRequest *r;
    struct wbuf w;

    for (int16_t v = 0; v <= 3; v++) {
        w = wbuf_for(PROTO_API_TxnOffsetCommit, v);
        CHECK(w.flex == (v == 3));
        w_str(&w, "tx");
        w_str(&w, "grp");
        w_i64(&w, 5);
        w_i16(&w, 0);
        if (v >= 3) {
            w_i32(&w, 4);
            w_str(&w, "m");
            w_str(&w, NULL);
        }
        w_arr(&w, 1);
        w_str(&w, "t");
        w_arr(&w, 1);
        w_i32(&w, 0);
        w_i64(&w, 100);
        if (v >= 2)
            w_i32(&w, 6);
        w_str(&w, v == 1 ? NULL : "md");
        w_end(&w);
        w_end(&w);
        w_end(&w);
        REQUIRE((r = decode_req(PROTO_API_TxnOffsetCommit, v, &w, a)) != NULL);
        CHECK_EQ_STR(r->TransactionalId, "tx");
        CHECK_EQ_STR(r->GroupId, "grp");
        CHECK_EQ_INT(r->GenerationId, v >= 3 ? 4 : -1);
        if (v >= 3)
            CHECK_EQ_STR(r->MemberId, "m");
        else
            CHECK(r->MemberId == NULL);
        CHECK(r->GroupInstanceId == NULL);
        REQUIRE(r->Topics.n == 1 && r->Topics.v[0].Partitions.n == 1);
        CHECK_EQ_INT(r->Topics.v[0].Partitions.v[0].CommittedOffset, 100);
        CHECK_EQ_INT(r->Topics.v[0].Partitions.v[0].CommittedLeaderEpoch, v >= 2 ? 6 : -1);
        if (v == 1)
            CHECK(r->Topics.v[0].Partitions.v[0].CommittedMetadata == NULL);
        else
            CHECK_EQ_STR(r->Topics.v[0].Partitions.v[0].CommittedMetadata, "md");
    }
    arena_free(a);
}

TEST(proto_decode_describe_list_transactions)
{
    struct arena *a = arena_new(1 << 16);
    struct DescribeTransactionsRequest *d;
    struct ListTransactionsRequest *l;
    struct wbuf w;

    w = wbuf_for(PROTO_API_DescribeTransactions, 0);
    CHECK(w.flex);
    w_arr(&w, 2);
    w_str(&w, "tx1");
    w_str(&w, "tx2");
    w_end(&w);
    REQUIRE((d = decode_req(PROTO_API_DescribeTransactions, 0, &w, a)) != NULL);
    REQUIRE(d->TransactionalIds.n == 2);
    CHECK_EQ_STR(d->TransactionalIds.v[1], "tx2");

    w = wbuf_for(PROTO_API_ListTransactions, 0);
    CHECK(w.flex);
    w_arr(&w, 1);
    w_str(&w, "Ongoing");
    w_arr(&w, 2);
    w_i64(&w, 1);
    w_i64(&w, -2);
    w_end(&w);
    REQUIRE((l = decode_req(PROTO_API_ListTransactions, 0, &w, a)) != NULL);
    REQUIRE(l->StateFilters.n == 1);
    CHECK_EQ_STR(l->StateFilters.v[0], "Ongoing");
    REQUIRE(l->ProducerIdFilters.n == 2);
    CHECK_EQ_INT(l->ProducerIdFilters.v[1], -2);
    arena_free(a);
}

TEST(proto_vector_txn_responses)
{
    static const uint8_t want_apt_v3[] = {
        0x00, 0x00, 0x00, 0x00, /* ThrottleTimeMs */
        0x02,                   /* ResultsByTopicV3AndBelow: 1 */
        0x02, 't',              /* Name */
        0x02,                   /* ResultsByPartition: 1 */
        0x00, 0x00, 0x00, 0x01, /* PartitionIndex 1 */
        0x00, 0x30,             /* PartitionErrorCode INVALID_TXN_STATE */
        0x00, 0x00, 0x00,       /* partition, topic, response: no tagged fields */
    };
    static const uint8_t want_list_v0[] = {
        0x00, 0x00, 0x00, 0x00,                         /* ThrottleTimeMs */
        0x00, 0x00,                                     /* ErrorCode */
        0x02, 0x02, 'X',                                /* UnknownStateFilters ["X"] */
        0x02,                                           /* TransactionStates: 1 */
        0x03, 't',  'x',                                /* TransactionalId */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, /* ProducerId 7 */
        0x08, 'O',  'n',  'g',  'o',  'i',  'n',  'g',  /* TransactionState */
        0x00, 0x00,                                     /* no tagged fields */
    };
    struct AddPartitionsToTxnPartitionResult pr = {.PartitionIndex = 1, .PartitionErrorCode = 48};
    struct AddPartitionsToTxnTopicResult tr = {.Name = "t", .ResultsByPartition = {&pr, 1}};
    struct AddPartitionsToTxnResponse apt = {.ErrorCode = 5, /* v4+ only */
                                             .ResultsByTopicV3AndBelow = {&tr, 1}};
    char *unknown[] = {"X"};
    struct ListTransactionsTransactionState ts = {"tx", 7, "Ongoing"};
    struct ListTransactionsResponse lt = {.UnknownStateFilters = {unknown, 1},
                                          .TransactionStates = {&ts, 1}};
    uint8_t buf[64];
    size_t n;

    n = proto_encode(&proto_AddPartitionsToTxnResponse, 3, true, &apt, buf);
    check_bytes(buf, n, want_apt_v3, sizeof want_apt_v3, "AddPartitionsToTxn v3 response");
    n = proto_encode(&proto_ListTransactionsResponse, 0, true, &lt, buf);
    check_bytes(buf, n, want_list_v0, sizeof want_list_v0, "ListTransactions v0 response");
}

/* ---------------------------------------------------------------------------------------- */
/* Replication, partition administration and the controller's APIs (OffsetForLeaderEpoch,
 * DescribeLogDirs, ElectLeaders, Alter/ListPartitionReassignments, DescribeQuorum,
 * AlterPartition, BrokerRegistration, BrokerHeartbeat). Each request and response is written
 * by hand from the Kafka 3.9 JSON schema at every version of the API, so at its lowest, first
 * flexible and highest (a second transcription, independent of the schema_*.c tables), then
 * compared byte for byte with what the encoder makes of the same values, decoded, and re-encoded.
 * The C structs hold every field at a non-default value, so a field written outside its versions,
 * a swapped field or a wrong type changes the bytes. */

TEST(proto_replication_api_table)
{
    static const struct {
        int16_t key, min, max, flex;
    } want[] = {
        {PROTO_API_OffsetForLeaderEpoch, 0, 4, 4},
        {PROTO_API_DescribeLogDirs, 0, 4, 2},
        {PROTO_API_ElectLeaders, 0, 2, 2},
        {PROTO_API_AlterPartitionReassignments, 0, 0, 0},
        {PROTO_API_ListPartitionReassignments, 0, 0, 0},
        {PROTO_API_DescribeQuorum, 0, 1, 0},
        {PROTO_API_AlterPartition, 0, 3, 0},
        {PROTO_API_BrokerRegistration, 0, 3, 0},
        {PROTO_API_BrokerHeartbeat, 0, 1, 0},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const struct proto_api *api = proto_api_find(want[i].key);
        REQUIRE(api != NULL);
        CHECK_EQ_INT(api->min_version, want[i].min);
        CHECK_EQ_INT(api->max_version, want[i].max);
        CHECK_EQ_INT(api->flexible_min, want[i].flex);
    }
}

static void w_uuid(struct wbuf *w, uint8_t first)
{
    for (int i = 0; i < 16; i++)
        w->b[w->n++] = i == 0 ? first : 0;
}

/* Every version of API `key` (its lowest, first flexible and highest among them): *n receives
 * how many. */
static void all_versions(int16_t key, int16_t out[8], int *n)
{
    const struct proto_api *api = proto_api_find(key);
    *n = 0;
    for (int16_t v = api->min_version; v <= api->max_version && *n < 8; v++)
        out[(*n)++] = v;
}

/* Encodes `in` (the request, or the response, of `key`) at `version` and compares it with the
 * hand-written w; then decodes w and checks that the result encodes to w again. Returns the
 * decoded struct (in `a`), or NULL after recording a failure. */
static void *check_vector(int16_t key, bool response, int16_t version, const void *in,
                          const struct wbuf *w, struct arena *a)
{
    const struct proto_api *api = proto_api_find(key);
    const struct proto_struct *s = response ? api->response : api->request;
    bool flex = proto_api_flexible(api, version);
    uint8_t *buf, *buf2;
    void *out;
    size_t n, consumed = 0;
    char what[96];
    int rc;

    snprintf(what, sizeof what, "%s v%d", s->name, version);
    n = proto_size(s, version, flex, in);
    buf = malloc(n + 1);
    n = proto_encode(s, version, flex, in, buf);
    check_bytes(buf, n, w->b, w->n, what);
    free(buf);
    out = arena_alloc(a, s->size);
    memset(out, 0, s->size);
    rc = proto_decode(s, version, flex, w->b, w->n, &consumed, out, a);
    if (rc != 0 || consumed != w->n) {
        char m[160];
        snprintf(m, sizeof m, "%s: decode rc %d, consumed %zu of %zu", what, rc, consumed, w->n);
        harness_fail(__FILE__, __LINE__, m);
        return NULL;
    }
    buf2 = malloc(w->n + 1);
    n = proto_encode(s, version, flex, out, buf2);
    check_bytes(buf2, n, w->b, w->n, what);
    free(buf2);
    return out;
}

TEST(proto_vectors_offset_for_leader_epoch)
{
    struct arena *a = arena_new(1 << 16);
    struct OffsetForLeaderPartition rp = {
        .Partition = 2, .CurrentLeaderEpoch = 9, .LeaderEpoch = 8};
    struct OffsetForLeaderTopic rt = {.Topic = "t", .Partitions = {&rp, 1}};
    struct OffsetForLeaderEpochRequest rq = {.ReplicaId = 7, .Topics = {&rt, 1}};
    struct EpochEndOffset sp = {
        .ErrorCode = 74, .Partition = 2, .LeaderEpoch = 6, .EndOffset = 300};
    struct OffsetForLeaderTopicResult st = {.Topic = "t", .Partitions = {&sp, 1}};
    struct OffsetForLeaderEpochResponse rs = {.ThrottleTimeMs = 5, .Topics = {&st, 1}};
    int16_t vs[8];
    int nv;

    all_versions(PROTO_API_OffsetForLeaderEpoch, vs, &nv);
    for (int i = 0; i < nv; i++) {
        int16_t v = vs[i];
        struct wbuf w = wbuf_for(PROTO_API_OffsetForLeaderEpoch, v);
        struct OffsetForLeaderEpochRequest *d;
        struct OffsetForLeaderEpochResponse *e;

        if (v >= 3)
            w_i32(&w, 7); /* ReplicaId */
        w_arr(&w, 1);     /* Topics */
        w_str(&w, "t");
        w_arr(&w, 1); /* Partitions */
        w_i32(&w, 2); /* Partition */
        if (v >= 2)
            w_i32(&w, 9); /* CurrentLeaderEpoch */
        w_i32(&w, 8);     /* LeaderEpoch */
        w_end(&w);
        w_end(&w);
        w_end(&w);
        d = check_vector(PROTO_API_OffsetForLeaderEpoch, false, v, &rq, &w, a);
        REQUIRE(d != NULL);
        CHECK_EQ_INT(d->ReplicaId, v >= 3 ? 7 : -2);
        REQUIRE(d->Topics.n == 1 && d->Topics.v[0].Partitions.n == 1);
        CHECK_EQ_INT(d->Topics.v[0].Partitions.v[0].CurrentLeaderEpoch, v >= 2 ? 9 : -1);
        CHECK_EQ_INT(d->Topics.v[0].Partitions.v[0].LeaderEpoch, 8);

        w = wbuf_for(PROTO_API_OffsetForLeaderEpoch, v);
        if (v >= 2)
            w_i32(&w, 5); /* ThrottleTimeMs */
        w_arr(&w, 1);
        w_str(&w, "t");
        w_arr(&w, 1);
        w_i16(&w, 74); /* ErrorCode */
        w_i32(&w, 2);  /* Partition */
        if (v >= 1)
            w_i32(&w, 6); /* LeaderEpoch */
        w_i64(&w, 300);   /* EndOffset */
        w_end(&w);
        w_end(&w);
        w_end(&w);
        e = check_vector(PROTO_API_OffsetForLeaderEpoch, true, v, &rs, &w, a);
        REQUIRE(e != NULL);
        CHECK_EQ_INT(e->Topics.v[0].Partitions.v[0].LeaderEpoch, v >= 1 ? 6 : -1);
        CHECK_EQ_INT(e->Topics.v[0].Partitions.v[0].EndOffset, 300);
    }
    arena_free(a);
}

/* Whole frames, header included, written byte by byte from OffsetForLeaderEpochRequest.json
 * and OffsetForLeaderEpochResponse.json at v4 (the first flexible version: header v2 / v1). */
TEST(proto_frame_offset_for_leader_epoch_v4)
{
    static const uint8_t want_req[] = {
        0x00, 0x00, 0x00, 0x25, /* size 37 */
        0x00, 0x17, 0x00, 0x04, /* key 23, version 4 */
        0x00, 0x00, 0x00, 0x2a, /* correlation id 42 */
        0x00, 0x01, 'c',        /* client id "c" (INT16 length, even in header v2) */
        0x00,                   /* header tagged fields */
        0x00, 0x00, 0x00, 0x03, /* ReplicaId 3 */
        0x02,                   /* Topics: 1 */
        0x04, 'a',  'b',  'c',  /* Topic "abc" */
        0x02,                   /* Partitions: 1 */
        0x00, 0x00, 0x00, 0x01, /* Partition 1 */
        0x00, 0x00, 0x00, 0x05, /* CurrentLeaderEpoch 5 */
        0x00, 0x00, 0x00, 0x04, /* LeaderEpoch 4 */
        0x00, 0x00, 0x00,       /* partition, topic, request: no tagged fields */
    };
    static const uint8_t want_resp[] = {
        0x00, 0x00, 0x00, 0x24,                         /* size 36 */
        0x00, 0x00, 0x00, 0x2a,                         /* correlation id 42 */
        0x00,                                           /* header v1 tagged fields */
        0x00, 0x00, 0x00, 0x00,                         /* ThrottleTimeMs 0 */
        0x02,                                           /* Topics: 1 */
        0x04, 'a',  'b',  'c',                          /* Topic "abc" */
        0x02,                                           /* Partitions: 1 */
        0x00, 0x00,                                     /* ErrorCode 0 */
        0x00, 0x00, 0x00, 0x01,                         /* Partition 1 */
        0x00, 0x00, 0x00, 0x04,                         /* LeaderEpoch 4 */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, /* EndOffset 256 */
        0x00, 0x00, 0x00,                               /* no tagged fields */
    };
    const struct proto_api *api = proto_api_find(PROTO_API_OffsetForLeaderEpoch);
    struct OffsetForLeaderPartition rp = {1, 5, 4};
    struct OffsetForLeaderTopic rt = {"abc", {&rp, 1}};
    struct OffsetForLeaderEpochRequest rq = {3, {&rt, 1}};
    struct EpochEndOffset sp = {0, 1, 4, 256};
    struct OffsetForLeaderTopicResult st = {"abc", {&sp, 1}};
    struct OffsetForLeaderEpochResponse rs = {0, {&st, 1}};
    struct arena *a = arena_new(1 << 16);
    struct RequestHeader h;
    struct OffsetForLeaderEpochRequest *d;
    void *body = NULL;
    uint8_t *frame;
    size_t len, hdr_len;
    int32_t corr;

    REQUIRE(api != NULL);
    REQUIRE(proto_encode_request(api, 4, 42, "c", &rq, &frame, &len) == 0);
    check_bytes(frame, len, want_req, sizeof want_req, "OffsetForLeaderEpoch v4 request frame");
    free(frame);
    REQUIRE(proto_decode_request_header(want_req + 4, sizeof want_req - 4, &h, &hdr_len, a) == 0);
    CHECK_EQ_INT(h.RequestApiKey, 23);
    CHECK_EQ_INT(hdr_len, 12);
    REQUIRE(proto_decode_request(api, 4, want_req + 4 + hdr_len, sizeof want_req - 4 - hdr_len,
                                 &body, a) == 0);
    d = body;
    CHECK_EQ_INT(d->ReplicaId, 3);
    REQUIRE(d->Topics.n == 1 && d->Topics.v[0].Partitions.n == 1);
    CHECK_EQ_STR(d->Topics.v[0].Topic, "abc");
    CHECK_EQ_INT(d->Topics.v[0].Partitions.v[0].Partition, 1);
    CHECK_EQ_INT(d->Topics.v[0].Partitions.v[0].CurrentLeaderEpoch, 5);
    CHECK_EQ_INT(d->Topics.v[0].Partitions.v[0].LeaderEpoch, 4);

    REQUIRE(proto_encode_response(api, 4, 42, &rs, &frame, &len) == 0);
    check_bytes(frame, len, want_resp, sizeof want_resp, "OffsetForLeaderEpoch v4 response frame");
    free(frame);
    body = NULL;
    REQUIRE(proto_decode_response(api, 4, want_resp + 4, sizeof want_resp - 4, &corr, &body, a) ==
            0);
    CHECK_EQ_INT(corr, 42);
    CHECK_EQ_INT(
        ((struct OffsetForLeaderEpochResponse *)body)->Topics.v[0].Partitions.v[0].EndOffset, 256);
    arena_free(a);
}

/* AlterPartition v3 (KIP-903): the request frame byte by byte from AlterPartitionRequest.json.
 * NewIsr (v0-2) is set in the struct and must not be written; NewIsrWithEpochs comes in its
 * place, before LeaderRecoveryState and PartitionEpoch. */
TEST(proto_frame_alter_partition_v3)
{
    static const uint8_t want_req[] = {
        0x00, 0x00, 0x00, 0x56,                         /* size 86 */
        0x00, 0x38, 0x00, 0x03,                         /* key 56, version 3 */
        0x00, 0x00, 0x00, 0x07,                         /* correlation id 7 */
        0x00, 0x02, 'b',  '1',                          /* client id "b1" */
        0x00,                                           /* header tagged fields */
        0x00, 0x00, 0x00, 0x01,                         /* BrokerId 1 */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a, /* BrokerEpoch 10 */
        0x02,                                           /* Topics: 1 */
        0xaa, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* TopicId aa00..00bb */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xbb, /*   (no TopicName from v2 on) */
        0x02,                                           /* Partitions: 1 */
        0x00, 0x00, 0x00, 0x02,                         /* PartitionIndex 2 */
        0x00, 0x00, 0x00, 0x05,                         /* LeaderEpoch 5 */
        0x03,                                           /* NewIsrWithEpochs: 2 */
        0x00, 0x00, 0x00, 0x01,                         /* BrokerId 1 */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a, /* BrokerEpoch 10 */
        0x00,                                           /* tagged fields */
        0x00, 0x00, 0x00, 0x03,                         /* BrokerId 3 */
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, /* BrokerEpoch -1 */
        0x00,                                           /* tagged fields */
        0x01,                                           /* LeaderRecoveryState 1 */
        0x00, 0x00, 0x00, 0x09,                         /* PartitionEpoch 9 */
        0x00, 0x00, 0x00,                               /* partition, topic, request */
    };
    static const uint8_t want_resp[] = {
        0x00, 0x00, 0x00, 0x38,                         /* size 56 */
        0x00, 0x00, 0x00, 0x07,                         /* correlation id 7 */
        0x00,                                           /* header v1 tagged fields */
        0x00, 0x00, 0x00, 0x00,                         /* ThrottleTimeMs */
        0x00, 0x00,                                     /* ErrorCode */
        0x02,                                           /* Topics: 1 */
        0xaa, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* TopicId */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xbb, /*  */
        0x02,                                           /* Partitions: 1 */
        0x00, 0x00, 0x00, 0x02,                         /* PartitionIndex 2 */
        0x00, 0x00,                                     /* ErrorCode */
        0x00, 0x00, 0x00, 0x01,                         /* LeaderId 1 */
        0x00, 0x00, 0x00, 0x05,                         /* LeaderEpoch 5 */
        0x02, 0x00, 0x00, 0x00, 0x01,                   /* Isr [1] */
        0x00,                                           /* LeaderRecoveryState 0 */
        0x00, 0x00, 0x00, 0x0a,                         /* PartitionEpoch 10 */
        0x00, 0x00, 0x00,                               /* no tagged fields */
    };
    const struct proto_api *api = proto_api_find(PROTO_API_AlterPartition);
    int32_t old_isr[] = {1, 3};
    struct BrokerState isr[] = {{1, 10}, {3, -1}};
    struct AlterPartitionRequestPartitionData rp = {2, 5, {old_isr, 2}, {isr, 2}, 1, 9};
    struct AlterPartitionRequestTopicData rt = {"ignored", {{0xaa}}, {&rp, 1}};
    struct AlterPartitionRequest rq = {1, 10, {&rt, 1}};
    int32_t new_isr[] = {1};
    struct AlterPartitionResponsePartitionData sp = {2, 0, 1, 5, {new_isr, 1}, 0, 10};
    struct AlterPartitionResponseTopicData st = {"ignored", {{0xaa}}, {&sp, 1}};
    struct AlterPartitionResponse rs = {0, 0, {&st, 1}};
    struct arena *a = arena_new(1 << 16);
    struct AlterPartitionRequest *d;
    struct RequestHeader h;
    void *body = NULL;
    uint8_t *frame;
    size_t len, hdr_len;

    rt.TopicId.b[15] = 0xbb;
    st.TopicId.b[15] = 0xbb;
    REQUIRE(api != NULL);
    REQUIRE(proto_encode_request(api, 3, 7, "b1", &rq, &frame, &len) == 0);
    check_bytes(frame, len, want_req, sizeof want_req, "AlterPartition v3 request frame");
    free(frame);
    REQUIRE(proto_decode_request_header(want_req + 4, sizeof want_req - 4, &h, &hdr_len, a) == 0);
    REQUIRE(proto_decode_request(api, 3, want_req + 4 + hdr_len, sizeof want_req - 4 - hdr_len,
                                 &body, a) == 0);
    d = body;
    CHECK_EQ_INT(d->BrokerEpoch, 10);
    REQUIRE(d->Topics.n == 1 && d->Topics.v[0].Partitions.n == 1);
    CHECK(d->Topics.v[0].TopicName == NULL);
    CHECK_EQ_INT(d->Topics.v[0].TopicId.b[15], 0xbb);
    CHECK_EQ_INT(d->Topics.v[0].Partitions.v[0].NewIsr.n, 0);
    REQUIRE(d->Topics.v[0].Partitions.v[0].NewIsrWithEpochs.n == 2);
    CHECK_EQ_INT(d->Topics.v[0].Partitions.v[0].NewIsrWithEpochs.v[1].BrokerId, 3);
    CHECK_EQ_INT(d->Topics.v[0].Partitions.v[0].NewIsrWithEpochs.v[1].BrokerEpoch, -1);
    CHECK_EQ_INT(d->Topics.v[0].Partitions.v[0].LeaderRecoveryState, 1);
    CHECK_EQ_INT(d->Topics.v[0].Partitions.v[0].PartitionEpoch, 9);

    REQUIRE(proto_encode_response(api, 3, 7, &rs, &frame, &len) == 0);
    check_bytes(frame, len, want_resp, sizeof want_resp, "AlterPartition v3 response frame");
    free(frame);
    arena_free(a);
}

TEST(proto_vectors_alter_partition)
{
    struct arena *a = arena_new(1 << 16);
    int32_t old_isr[] = {1, 3};
    struct BrokerState isr[] = {{1, 10}, {3, 11}};
    struct AlterPartitionRequestPartitionData rp = {2, 5, {old_isr, 2}, {isr, 2}, 1, 9};
    struct AlterPartitionRequestTopicData rt = {"t", {{0xaa}}, {&rp, 1}};
    struct AlterPartitionRequest rq = {1, 10, {&rt, 1}};
    int32_t new_isr[] = {1, 3};
    struct AlterPartitionResponsePartitionData sp = {2, 106, 1, 5, {new_isr, 2}, 1, 10};
    struct AlterPartitionResponseTopicData st = {"t", {{0xaa}}, {&sp, 1}};
    struct AlterPartitionResponse rs = {3, 41, {&st, 1}};
    int16_t vs[8];
    int nv;

    all_versions(PROTO_API_AlterPartition, vs, &nv);
    for (int i = 0; i < nv; i++) {
        int16_t v = vs[i];
        struct wbuf w = wbuf_for(PROTO_API_AlterPartition, v);
        struct AlterPartitionRequest *d;

        w_i32(&w, 1);  /* BrokerId */
        w_i64(&w, 10); /* BrokerEpoch */
        w_arr(&w, 1);  /* Topics */
        if (v <= 1)
            w_str(&w, "t"); /* TopicName */
        else
            w_uuid(&w, 0xaa); /* TopicId */
        w_arr(&w, 1);         /* Partitions */
        w_i32(&w, 2);         /* PartitionIndex */
        w_i32(&w, 5);         /* LeaderEpoch */
        if (v <= 2) {
            w_arr(&w, 2); /* NewIsr */
            w_i32(&w, 1);
            w_i32(&w, 3);
        } else {
            w_arr(&w, 2); /* NewIsrWithEpochs */
            w_i32(&w, 1);
            w_i64(&w, 10);
            w_end(&w);
            w_i32(&w, 3);
            w_i64(&w, 11);
            w_end(&w);
        }
        if (v >= 1)
            w_i8(&w, 1); /* LeaderRecoveryState */
        w_i32(&w, 9);    /* PartitionEpoch */
        w_end(&w);
        w_end(&w);
        w_end(&w);
        d = check_vector(PROTO_API_AlterPartition, false, v, &rq, &w, a);
        REQUIRE(d != NULL);
        CHECK_EQ_INT(d->Topics.v[0].Partitions.v[0].LeaderRecoveryState, v >= 1 ? 1 : 0);
        CHECK_EQ_INT(d->Topics.v[0].Partitions.v[0].NewIsr.n, v <= 2 ? 2 : 0);

        w = wbuf_for(PROTO_API_AlterPartition, v);
        w_i32(&w, 3);  /* ThrottleTimeMs */
        w_i16(&w, 41); /* ErrorCode */
        w_arr(&w, 1);
        if (v <= 1)
            w_str(&w, "t");
        else
            w_uuid(&w, 0xaa);
        w_arr(&w, 1);
        w_i32(&w, 2);   /* PartitionIndex */
        w_i16(&w, 106); /* ErrorCode */
        w_i32(&w, 1);   /* LeaderId */
        w_i32(&w, 5);   /* LeaderEpoch */
        w_arr(&w, 2);   /* Isr */
        w_i32(&w, 1);
        w_i32(&w, 3);
        if (v >= 1)
            w_i8(&w, 1); /* LeaderRecoveryState */
        w_i32(&w, 10);   /* PartitionEpoch */
        w_end(&w);
        w_end(&w);
        w_end(&w);
        CHECK(check_vector(PROTO_API_AlterPartition, true, v, &rs, &w, a) != NULL);
    }
    arena_free(a);
}

TEST(proto_vectors_describe_log_dirs)
{
    struct arena *a = arena_new(1 << 16);
    int32_t parts[] = {0, 4};
    struct DescribableLogDirTopic rt = {"t", {parts, 2}};
    struct DescribeLogDirsRequest rq = {{&rt, 1}}, all = {{NULL, -1}};
    struct DescribeLogDirsPartition sp = {4, 123456789, 3, true};
    struct DescribeLogDirsTopic st = {"t", {&sp, 1}};
    struct DescribeLogDirsResult sr = {57, "/d", {&st, 1}, 1000, 600};
    struct DescribeLogDirsResponse rs = {2, 31, {&sr, 1}};
    int16_t vs[8];
    int nv;

    all_versions(PROTO_API_DescribeLogDirs, vs, &nv);
    for (int i = 0; i < nv; i++) {
        int16_t v = vs[i];
        struct wbuf w = wbuf_for(PROTO_API_DescribeLogDirs, v);
        struct DescribeLogDirsRequest *d;
        struct DescribeLogDirsResponse *e;

        w_arr(&w, 1); /* Topics */
        w_str(&w, "t");
        w_arr(&w, 2); /* Partitions */
        w_i32(&w, 0);
        w_i32(&w, 4);
        w_end(&w);
        w_end(&w);
        CHECK(check_vector(PROTO_API_DescribeLogDirs, false, v, &rq, &w, a) != NULL);

        /* A null Topics (every partition) stays null. */
        w = wbuf_for(PROTO_API_DescribeLogDirs, v);
        w_arr(&w, -1);
        w_end(&w);
        d = check_vector(PROTO_API_DescribeLogDirs, false, v, &all, &w, a);
        REQUIRE(d != NULL);
        CHECK_EQ_INT(d->Topics.n, -1);

        w = wbuf_for(PROTO_API_DescribeLogDirs, v);
        w_i32(&w, 2); /* ThrottleTimeMs */
        if (v >= 3)
            w_i16(&w, 31); /* ErrorCode */
        w_arr(&w, 1);      /* Results */
        w_i16(&w, 57);     /* ErrorCode */
        w_str(&w, "/d");   /* LogDir */
        w_arr(&w, 1);      /* Topics */
        w_str(&w, "t");
        w_arr(&w, 1);         /* Partitions */
        w_i32(&w, 4);         /* PartitionIndex */
        w_i64(&w, 123456789); /* PartitionSize */
        w_i64(&w, 3);         /* OffsetLag */
        w_i8(&w, 1);          /* IsFutureKey */
        w_end(&w);
        w_end(&w);
        if (v >= 4) {
            w_i64(&w, 1000); /* TotalBytes */
            w_i64(&w, 600);  /* UsableBytes */
        }
        w_end(&w);
        w_end(&w);
        e = check_vector(PROTO_API_DescribeLogDirs, true, v, &rs, &w, a);
        REQUIRE(e != NULL);
        CHECK_EQ_INT(e->Results.v[0].TotalBytes, v >= 4 ? 1000 : -1);
        CHECK_EQ_INT(e->Results.v[0].Topics.v[0].Partitions.v[0].PartitionSize, 123456789);
    }
    arena_free(a);
}

TEST(proto_vectors_elect_leaders)
{
    struct arena *a = arena_new(1 << 16);
    int32_t parts[] = {3};
    struct ElectLeadersTopicPartitions rt = {"t", {parts, 1}};
    struct ElectLeadersRequest rq = {1, {&rt, 1}, 500};
    struct ElectLeadersPartitionResult sp = {3, 84, "none"};
    struct ReplicaElectionResult st = {"t", {&sp, 1}};
    struct ElectLeadersResponse rs = {1, 7, {&st, 1}};
    int16_t vs[8];
    int nv;

    all_versions(PROTO_API_ElectLeaders, vs, &nv);
    for (int i = 0; i < nv; i++) {
        int16_t v = vs[i];
        struct wbuf w = wbuf_for(PROTO_API_ElectLeaders, v);
        struct ElectLeadersRequest *d;

        if (v >= 1)
            w_i8(&w, 1); /* ElectionType */
        w_arr(&w, 1);    /* TopicPartitions */
        w_str(&w, "t");
        w_arr(&w, 1); /* Partitions */
        w_i32(&w, 3);
        w_end(&w);
        w_i32(&w, 500); /* TimeoutMs */
        w_end(&w);
        d = check_vector(PROTO_API_ElectLeaders, false, v, &rq, &w, a);
        REQUIRE(d != NULL);
        CHECK_EQ_INT(d->ElectionType, v >= 1 ? 1 : 0);
        CHECK_EQ_INT(d->TimeoutMs, 500);

        w = wbuf_for(PROTO_API_ElectLeaders, v);
        w_i32(&w, 1); /* ThrottleTimeMs */
        if (v >= 1)
            w_i16(&w, 7); /* ErrorCode */
        w_arr(&w, 1);     /* ReplicaElectionResults */
        w_str(&w, "t");
        w_arr(&w, 1);  /* PartitionResult */
        w_i32(&w, 3);  /* PartitionId */
        w_i16(&w, 84); /* ErrorCode */
        w_str(&w, "none");
        w_end(&w);
        w_end(&w);
        w_end(&w);
        CHECK(check_vector(PROTO_API_ElectLeaders, true, v, &rs, &w, a) != NULL);
    }
    arena_free(a);
}

TEST(proto_vectors_partition_reassignments)
{
    struct arena *a = arena_new(1 << 16);
    int32_t replicas[] = {1, 2}, adding[] = {2}, removing[] = {3};
    struct ReassignablePartition ap[] = {{0, {replicas, 2}}, {1, {NULL, -1}}};
    struct ReassignableTopic at = {"t", {ap, 2}};
    struct AlterPartitionReassignmentsRequest arq = {700, {&at, 1}};
    struct ReassignablePartitionResponse apr = {1, 85, NULL};
    struct ReassignableTopicResponse atr = {"t", {&apr, 1}};
    struct AlterPartitionReassignmentsResponse ars = {4, 0, "m", {&atr, 1}};
    int32_t idx[] = {0};
    struct ListPartitionReassignmentsTopics lt = {"t", {idx, 1}};
    struct ListPartitionReassignmentsRequest lrq = {800, {&lt, 1}};
    struct OngoingPartitionReassignment op = {0, {replicas, 2}, {adding, 1}, {removing, 1}};
    struct OngoingTopicReassignment ot = {"t", {&op, 1}};
    struct ListPartitionReassignmentsResponse lrs = {0, 0, NULL, {&ot, 1}};
    struct ReassignablePartition *p;
    struct wbuf w;

    /* Version 0 is the only one, and flexible. */
    w = wbuf_for(PROTO_API_AlterPartitionReassignments, 0);
    CHECK(w.flex);
    w_i32(&w, 700); /* TimeoutMs */
    w_arr(&w, 1);   /* Topics */
    w_str(&w, "t");
    w_arr(&w, 2); /* Partitions */
    w_i32(&w, 0);
    w_arr(&w, 2); /* Replicas */
    w_i32(&w, 1);
    w_i32(&w, 2);
    w_end(&w);
    w_i32(&w, 1);
    w_arr(&w, -1); /* Replicas: null cancels */
    w_end(&w);
    w_end(&w);
    w_end(&w);
    struct AlterPartitionReassignmentsRequest *d =
        check_vector(PROTO_API_AlterPartitionReassignments, false, 0, &arq, &w, a);
    REQUIRE(d != NULL && d->Topics.n == 1 && d->Topics.v[0].Partitions.n == 2);
    p = d->Topics.v[0].Partitions.v;
    CHECK_EQ_INT(p[0].Replicas.n, 2);
    CHECK_EQ_INT(p[1].Replicas.n, -1);

    w = wbuf_for(PROTO_API_AlterPartitionReassignments, 0);
    w_i32(&w, 4);   /* ThrottleTimeMs */
    w_i16(&w, 0);   /* ErrorCode */
    w_str(&w, "m"); /* ErrorMessage */
    w_arr(&w, 1);   /* Responses */
    w_str(&w, "t");
    w_arr(&w, 1);
    w_i32(&w, 1);    /* PartitionIndex */
    w_i16(&w, 85);   /* ErrorCode */
    w_str(&w, NULL); /* ErrorMessage */
    w_end(&w);
    w_end(&w);
    w_end(&w);
    CHECK(check_vector(PROTO_API_AlterPartitionReassignments, true, 0, &ars, &w, a) != NULL);

    w = wbuf_for(PROTO_API_ListPartitionReassignments, 0);
    CHECK(w.flex);
    w_i32(&w, 800);
    w_arr(&w, 1);
    w_str(&w, "t");
    w_arr(&w, 1); /* PartitionIndexes */
    w_i32(&w, 0);
    w_end(&w);
    w_end(&w);
    CHECK(check_vector(PROTO_API_ListPartitionReassignments, false, 0, &lrq, &w, a) != NULL);

    w = wbuf_for(PROTO_API_ListPartitionReassignments, 0);
    w_i32(&w, 0);
    w_i16(&w, 0);
    w_str(&w, NULL);
    w_arr(&w, 1); /* Topics */
    w_str(&w, "t");
    w_arr(&w, 1);
    w_i32(&w, 0);
    w_arr(&w, 2); /* Replicas */
    w_i32(&w, 1);
    w_i32(&w, 2);
    w_arr(&w, 1); /* AddingReplicas */
    w_i32(&w, 2);
    w_arr(&w, 1); /* RemovingReplicas */
    w_i32(&w, 3);
    w_end(&w);
    w_end(&w);
    w_end(&w);
    CHECK(check_vector(PROTO_API_ListPartitionReassignments, true, 0, &lrs, &w, a) != NULL);
    arena_free(a);
}

TEST(proto_vectors_describe_quorum)
{
    struct arena *a = arena_new(1 << 16);
    struct DescribeQuorumRequestPartitionData rp = {0};
    struct DescribeQuorumRequestTopicData rt = {"__cluster_metadata", {&rp, 1}};
    struct DescribeQuorumRequest rq = {{&rt, 1}};
    struct DescribeQuorumReplicaState voter = {1, 50, 1000, 990}, observer = {4, 40, 980, 970};
    struct DescribeQuorumResponsePartitionData sp = {0, 0, 1, 3, 45, {&voter, 1}, {&observer, 1}};
    struct DescribeQuorumResponseTopicData st = {"__cluster_metadata", {&sp, 1}};
    struct DescribeQuorumResponse rs = {0, {&st, 1}};
    int16_t vs[8];
    int nv;

    all_versions(PROTO_API_DescribeQuorum, vs, &nv);
    for (int i = 0; i < nv; i++) {
        int16_t v = vs[i];
        struct wbuf w = wbuf_for(PROTO_API_DescribeQuorum, v);
        struct DescribeQuorumResponse *e;

        w_arr(&w, 1);
        w_str(&w, "__cluster_metadata");
        w_arr(&w, 1);
        w_i32(&w, 0);
        w_end(&w);
        w_end(&w);
        w_end(&w);
        CHECK(check_vector(PROTO_API_DescribeQuorum, false, v, &rq, &w, a) != NULL);

        w = wbuf_for(PROTO_API_DescribeQuorum, v);
        w_i16(&w, 0); /* ErrorCode */
        w_arr(&w, 1); /* Topics */
        w_str(&w, "__cluster_metadata");
        w_arr(&w, 1);  /* Partitions */
        w_i32(&w, 0);  /* PartitionIndex */
        w_i16(&w, 0);  /* ErrorCode */
        w_i32(&w, 1);  /* LeaderId */
        w_i32(&w, 3);  /* LeaderEpoch */
        w_i64(&w, 45); /* HighWatermark */
        for (int j = 0; j < 2; j++) {
            const struct DescribeQuorumReplicaState *r = j == 0 ? &voter : &observer;
            w_arr(&w, 1); /* CurrentVoters, then Observers */
            w_i32(&w, r->ReplicaId);
            w_i64(&w, r->LogEndOffset);
            if (v >= 1) {
                w_i64(&w, r->LastFetchTimestamp);
                w_i64(&w, r->LastCaughtUpTimestamp);
            }
            w_end(&w);
        }
        w_end(&w);
        w_end(&w);
        w_end(&w);
        e = check_vector(PROTO_API_DescribeQuorum, true, v, &rs, &w, a);
        REQUIRE(e != NULL);
        CHECK_EQ_INT(e->Topics.v[0].Partitions.v[0].Observers.v[0].LastCaughtUpTimestamp,
                     v >= 1 ? 970 : -1);
    }
    arena_free(a);
}

TEST(proto_vectors_broker_registration)
{
    struct arena *a = arena_new(1 << 16);
    struct BrokerRegistrationListener ls = {"PLAINTEXT", "h", 9092, 0};
    struct BrokerRegistrationFeature fs = {"metadata.version", 1, 21};
    struct proto_uuid dirs[] = {{{0x11}}};
    struct BrokerRegistrationRequest rq = {2,    "c",  {{0x22}},  {&ls, 1}, {&fs, 1},
                                           NULL, true, {dirs, 1}, 77};
    struct BrokerRegistrationResponse rs = {0, 0, 78};
    int16_t vs[8];
    int nv;

    all_versions(PROTO_API_BrokerRegistration, vs, &nv);
    for (int i = 0; i < nv; i++) {
        int16_t v = vs[i];
        struct wbuf w = wbuf_for(PROTO_API_BrokerRegistration, v);
        struct BrokerRegistrationRequest *d;

        CHECK(w.flex);
        w_i32(&w, 2);     /* BrokerId */
        w_str(&w, "c");   /* ClusterId */
        w_uuid(&w, 0x22); /* IncarnationId */
        w_arr(&w, 1);     /* Listeners */
        w_str(&w, "PLAINTEXT");
        w_str(&w, "h");
        w_be(&w, 9092, 2); /* Port (uint16) */
        w_i16(&w, 0);      /* SecurityProtocol */
        w_end(&w);
        w_arr(&w, 1); /* Features */
        w_str(&w, "metadata.version");
        w_i16(&w, 1);
        w_i16(&w, 21);
        w_end(&w);
        w_str(&w, NULL); /* Rack */
        if (v >= 1)
            w_i8(&w, 1); /* IsMigratingZkBroker */
        if (v >= 2) {
            w_arr(&w, 1); /* LogDirs */
            w_uuid(&w, 0x11);
        }
        if (v >= 3)
            w_i64(&w, 77); /* PreviousBrokerEpoch */
        w_end(&w);
        d = check_vector(PROTO_API_BrokerRegistration, false, v, &rq, &w, a);
        REQUIRE(d != NULL);
        CHECK_EQ_INT(d->PreviousBrokerEpoch, v >= 3 ? 77 : -1);
        CHECK_EQ_INT(d->LogDirs.n, v >= 2 ? 1 : 0);
        CHECK(d->IsMigratingZkBroker == (v >= 1));

        w = wbuf_for(PROTO_API_BrokerRegistration, v);
        w_i32(&w, 0);
        w_i16(&w, 0);
        w_i64(&w, 78);
        w_end(&w);
        CHECK(check_vector(PROTO_API_BrokerRegistration, true, v, &rs, &w, a) != NULL);
    }
    arena_free(a);
}

TEST(proto_vectors_broker_heartbeat)
{
    struct arena *a = arena_new(1 << 16);
    struct proto_uuid offline[] = {{{0x33}}};
    struct BrokerHeartbeatRequest rq = {2, 100, 42, true, false, {offline, 1}};
    struct BrokerHeartbeatResponse rs = {0, 0, true, false, true};
    struct BrokerHeartbeatResponse *e;
    int16_t vs[8];
    int nv;
    size_t consumed;

    all_versions(PROTO_API_BrokerHeartbeat, vs, &nv);
    for (int i = 0; i < nv; i++) {
        int16_t v = vs[i];
        struct wbuf w = wbuf_for(PROTO_API_BrokerHeartbeat, v);
        struct BrokerHeartbeatRequest *d;

        w_i32(&w, 2);   /* BrokerId */
        w_i64(&w, 100); /* BrokerEpoch */
        w_i64(&w, 42);  /* CurrentMetadataOffset */
        w_i8(&w, 1);    /* WantFence */
        w_i8(&w, 0);    /* WantShutDown */
        if (v >= 1) {
            w_uvarint(&w, 1);  /* one tagged field */
            w_uvarint(&w, 0);  /* tag 0: OfflineLogDirs */
            w_uvarint(&w, 17); /* its size: count + one uuid */
            w_arr(&w, 1);
            w_uuid(&w, 0x33);
        } else {
            w_end(&w);
        }
        d = check_vector(PROTO_API_BrokerHeartbeat, false, v, &rq, &w, a);
        REQUIRE(d != NULL);
        CHECK_EQ_INT(d->OfflineLogDirs.n, v >= 1 ? 1 : 0);

        w = wbuf_for(PROTO_API_BrokerHeartbeat, v);
        w_i32(&w, 0);
        w_i16(&w, 0);
        w_i8(&w, 1); /* IsCaughtUp */
        w_i8(&w, 0); /* IsFenced */
        w_i8(&w, 1); /* ShouldShutDown */
        w_end(&w);
        CHECK(check_vector(PROTO_API_BrokerHeartbeat, true, v, &rs, &w, a) != NULL);
    }
    /* An empty OfflineLogDirs is not written; IsFenced defaults to true. */
    rq.OfflineLogDirs.n = 0;
    {
        struct wbuf w = wbuf_for(PROTO_API_BrokerHeartbeat, 1);
        w_i32(&w, 2);
        w_i64(&w, 100);
        w_i64(&w, 42);
        w_i8(&w, 1);
        w_i8(&w, 0);
        w_end(&w);
        CHECK(check_vector(PROTO_API_BrokerHeartbeat, false, 1, &rq, &w, a) != NULL);
    }
    e = arena_alloc(a, sizeof *e);
    memset(e, 0, sizeof *e);
    static const uint8_t short_resp[] = {0, 0, 0, 0, 0, 0, 0};
    /* Every field is required in v0; a truncated body is refused rather than defaulted. */
    CHECK(proto_decode(&proto_BrokerHeartbeatResponse, 0, true, short_resp, sizeof short_resp,
                       &consumed, e, a) != 0);
    arena_free(a);
}
