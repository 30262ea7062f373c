/* SPDX-License-Identifier: Apache-2.0 */
/* The field tables of ApiVersions (key 18), transcribed from Kafka's JSON message
 * schemas; see proto_int.h for the row format. Nested layouts come before the structs that
 * hold them. */
#include "proto/proto_int.h"

static const struct proto_field ApiVersionsRequest_fields[] = {
    PROTO_FIELD(ApiVersionsRequest, ClientSoftwareName, STRING, 3, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(ApiVersionsRequest, ClientSoftwareVersion, STRING, 3, PROTO_VMAX, PROTO_NEVER, 0),
};
const struct proto_struct proto_ApiVersionsRequest = PROTO_LAYOUT(ApiVersionsRequest);

static const struct proto_field ApiVersion_fields[] = {
    PROTO_FIELD(ApiVersion, ApiKey, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(ApiVersion, MinVersion, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(ApiVersion, MaxVersion, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
static const struct proto_struct proto_ApiVersion = PROTO_LAYOUT(ApiVersion);

static const struct proto_field SupportedFeatureKey_fields[] = {
    PROTO_FIELD(SupportedFeatureKey, Name, STRING, 3, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(SupportedFeatureKey, MinVersion, INT16, 3, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(SupportedFeatureKey, MaxVersion, INT16, 3, PROTO_VMAX, PROTO_NEVER, 0),
};
static const struct proto_struct proto_SupportedFeatureKey = PROTO_LAYOUT(SupportedFeatureKey);

static const struct proto_field FinalizedFeatureKey_fields[] = {
    PROTO_FIELD(FinalizedFeatureKey, Name, STRING, 3, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(FinalizedFeatureKey, MaxVersionLevel, INT16, 3, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(FinalizedFeatureKey, MinVersionLevel, INT16, 3, PROTO_VMAX, PROTO_NEVER, 0),
};
static const struct proto_struct proto_FinalizedFeatureKey = PROTO_LAYOUT(FinalizedFeatureKey);

static const struct proto_field ApiVersionsResponse_fields[] = {
    PROTO_FIELD(ApiVersionsResponse, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(ApiVersionsResponse, ApiKeys, proto_ApiVersion, 0, PROTO_VMAX, PROTO_NEVER),
    PROTO_FIELD(ApiVersionsResponse, ThrottleTimeMs, INT32, 1, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_TAGGED_STRUCTS(ApiVersionsResponse, SupportedFeatures, proto_SupportedFeatureKey, 3,
                         PROTO_VMAX, 0),
    PROTO_TAGGED(ApiVersionsResponse, FinalizedFeaturesEpoch, INT64, 3, PROTO_VMAX, 1, -1),
    PROTO_TAGGED_STRUCTS(ApiVersionsResponse, FinalizedFeatures, proto_FinalizedFeatureKey, 3,
                         PROTO_VMAX, 2),
    PROTO_TAGGED(ApiVersionsResponse, ZkMigrationReady, BOOL, 3, PROTO_VMAX, 3, 0),
};
const struct proto_struct proto_ApiVersionsResponse = PROTO_LAYOUT(ApiVersionsResponse);
