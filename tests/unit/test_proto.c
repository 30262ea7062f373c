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

    REQUIRE(napis == 17);
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

/* Requests also round-trip as whole frames: header + body, through the public entry points. */
TEST(proto_round_trip_request_frames)
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
            arena_free(a);
        }
    }
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
