/* SPDX-License-Identifier: Apache-2.0 */
/* The field tables of DescribeConfigs (32), AlterConfigs (33) and IncrementalAlterConfigs (44),
 * transcribed from Kafka's JSON message schemas; see proto_int.h for the row format. Nested layouts
 * come before the structs that hold them. */
#include "proto/proto_int.h"

static const struct proto_field DescribeConfigsResource_fields[] = {
    PROTO_FIELD(DescribeConfigsResource, ResourceType, INT8, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DescribeConfigsResource, ResourceName, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_ARRAY_OF(DescribeConfigsResource, ConfigurationKeys, STRING, 0, PROTO_VMAX, 0),
};
static const struct proto_struct proto_DescribeConfigsResource =
    PROTO_LAYOUT(DescribeConfigsResource);

static const struct proto_field DescribeConfigsRequest_fields[] = {
    PROTO_STRUCTS(DescribeConfigsRequest, Resources, proto_DescribeConfigsResource, 0, PROTO_VMAX,
                  PROTO_NEVER),
    PROTO_FIELD(DescribeConfigsRequest, IncludeSynonyms, BOOL, 1, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DescribeConfigsRequest, IncludeDocumentation, BOOL, 3, PROTO_VMAX, PROTO_NEVER, 0),
};
const struct proto_struct proto_DescribeConfigsRequest = PROTO_LAYOUT(DescribeConfigsRequest);

static const struct proto_field DescribeConfigsSynonym_fields[] = {
    PROTO_FIELD(DescribeConfigsSynonym, Name, STRING, 1, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DescribeConfigsSynonym, Value, STRING, 1, PROTO_VMAX, 0, 0),
    PROTO_FIELD(DescribeConfigsSynonym, Source, INT8, 1, PROTO_VMAX, PROTO_NEVER, 0),
};
static const struct proto_struct proto_DescribeConfigsSynonym =
    PROTO_LAYOUT(DescribeConfigsSynonym);

static const struct proto_field DescribeConfigsResourceResult_fields[] = {
    PROTO_FIELD(DescribeConfigsResourceResult, Name, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DescribeConfigsResourceResult, Value, STRING, 0, PROTO_VMAX, 0, 0),
    PROTO_FIELD(DescribeConfigsResourceResult, ReadOnly, BOOL, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DescribeConfigsResourceResult, IsDefault, BOOL, 0, 0, PROTO_NEVER, 0),
    PROTO_FIELD(DescribeConfigsResourceResult, ConfigSource, INT8, 1, PROTO_VMAX, PROTO_NEVER, -1),
    PROTO_FIELD(DescribeConfigsResourceResult, IsSensitive, BOOL, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(DescribeConfigsResourceResult, Synonyms, proto_DescribeConfigsSynonym, 1,
                  PROTO_VMAX, PROTO_NEVER),
    PROTO_FIELD(DescribeConfigsResourceResult, ConfigType, INT8, 3, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DescribeConfigsResourceResult, Documentation, STRING, 3, PROTO_VMAX, 0, 0),
};
static const struct proto_struct proto_DescribeConfigsResourceResult =
    PROTO_LAYOUT(DescribeConfigsResourceResult);

static const struct proto_field DescribeConfigsResult_fields[] = {
    PROTO_FIELD(DescribeConfigsResult, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DescribeConfigsResult, ErrorMessage, STRING, 0, PROTO_VMAX, 0, 0),
    PROTO_FIELD(DescribeConfigsResult, ResourceType, INT8, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DescribeConfigsResult, ResourceName, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(DescribeConfigsResult, Configs, proto_DescribeConfigsResourceResult, 0,
                  PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_DescribeConfigsResult = PROTO_LAYOUT(DescribeConfigsResult);

static const struct proto_field DescribeConfigsResponse_fields[] = {
    PROTO_FIELD(DescribeConfigsResponse, ThrottleTimeMs, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(DescribeConfigsResponse, Results, proto_DescribeConfigsResult, 0, PROTO_VMAX,
                  PROTO_NEVER),
};
const struct proto_struct proto_DescribeConfigsResponse = PROTO_LAYOUT(DescribeConfigsResponse);

static const struct proto_field AlterableConfig_fields[] = {
    PROTO_FIELD(AlterableConfig, Name, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(AlterableConfig, Value, STRING, 0, PROTO_VMAX, 0, 0),
};
static const struct proto_struct proto_AlterableConfig = PROTO_LAYOUT(AlterableConfig);

static const struct proto_field AlterConfigsResource_fields[] = {
    PROTO_FIELD(AlterConfigsResource, ResourceType, INT8, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(AlterConfigsResource, ResourceName, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(AlterConfigsResource, Configs, proto_AlterableConfig, 0, PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_AlterConfigsResource = PROTO_LAYOUT(AlterConfigsResource);

static const struct proto_field AlterConfigsRequest_fields[] = {
    PROTO_STRUCTS(AlterConfigsRequest, Resources, proto_AlterConfigsResource, 0, PROTO_VMAX,
                  PROTO_NEVER),
    PROTO_FIELD(AlterConfigsRequest, ValidateOnly, BOOL, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
const struct proto_struct proto_AlterConfigsRequest = PROTO_LAYOUT(AlterConfigsRequest);

static const struct proto_field AlterConfigsResourceResponse_fields[] = {
    PROTO_FIELD(AlterConfigsResourceResponse, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(AlterConfigsResourceResponse, ErrorMessage, STRING, 0, PROTO_VMAX, 0, 0),
    PROTO_FIELD(AlterConfigsResourceResponse, ResourceType, INT8, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(AlterConfigsResourceResponse, ResourceName, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
static const struct proto_struct proto_AlterConfigsResourceResponse =
    PROTO_LAYOUT(AlterConfigsResourceResponse);

static const struct proto_field AlterConfigsResponse_fields[] = {
    PROTO_FIELD(AlterConfigsResponse, ThrottleTimeMs, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(AlterConfigsResponse, Responses, proto_AlterConfigsResourceResponse, 0,
                  PROTO_VMAX, PROTO_NEVER),
};
const struct proto_struct proto_AlterConfigsResponse = PROTO_LAYOUT(AlterConfigsResponse);

static const struct proto_field IncrementalAlterableConfig_fields[] = {
    PROTO_FIELD(IncrementalAlterableConfig, Name, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(IncrementalAlterableConfig, ConfigOperation, INT8, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(IncrementalAlterableConfig, Value, STRING, 0, PROTO_VMAX, 0, 0),
};
static const struct proto_struct proto_IncrementalAlterableConfig =
    PROTO_LAYOUT(IncrementalAlterableConfig);

static const struct proto_field IncrementalAlterConfigsResource_fields[] = {
    PROTO_FIELD(IncrementalAlterConfigsResource, ResourceType, INT8, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(IncrementalAlterConfigsResource, ResourceName, STRING, 0, PROTO_VMAX, PROTO_NEVER,
                0),
    PROTO_STRUCTS(IncrementalAlterConfigsResource, Configs, proto_IncrementalAlterableConfig, 0,
                  PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_IncrementalAlterConfigsResource =
    PROTO_LAYOUT(IncrementalAlterConfigsResource);

static const struct proto_field IncrementalAlterConfigsRequest_fields[] = {
    PROTO_STRUCTS(IncrementalAlterConfigsRequest, Resources, proto_IncrementalAlterConfigsResource,
                  0, PROTO_VMAX, PROTO_NEVER),
    PROTO_FIELD(IncrementalAlterConfigsRequest, ValidateOnly, BOOL, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
const struct proto_struct proto_IncrementalAlterConfigsRequest =
    PROTO_LAYOUT(IncrementalAlterConfigsRequest);

static const struct proto_field IncrementalAlterConfigsResourceResponse_fields[] = {
    PROTO_FIELD(IncrementalAlterConfigsResourceResponse, ErrorCode, INT16, 0, PROTO_VMAX,
                PROTO_NEVER, 0),
    PROTO_FIELD(IncrementalAlterConfigsResourceResponse, ErrorMessage, STRING, 0, PROTO_VMAX, 0, 0),
    PROTO_FIELD(IncrementalAlterConfigsResourceResponse, ResourceType, INT8, 0, PROTO_VMAX,
                PROTO_NEVER, 0),
    PROTO_FIELD(IncrementalAlterConfigsResourceResponse, ResourceName, STRING, 0, PROTO_VMAX,
                PROTO_NEVER, 0),
};
static const struct proto_struct proto_IncrementalAlterConfigsResourceResponse =
    PROTO_LAYOUT(IncrementalAlterConfigsResourceResponse);

static const struct proto_field IncrementalAlterConfigsResponse_fields[] = {
    PROTO_FIELD(IncrementalAlterConfigsResponse, ThrottleTimeMs, INT32, 0, PROTO_VMAX, PROTO_NEVER,
                0),
    PROTO_STRUCTS(IncrementalAlterConfigsResponse, Responses,
                  proto_IncrementalAlterConfigsResourceResponse, 0, PROTO_VMAX, PROTO_NEVER),
};
const struct proto_struct proto_IncrementalAlterConfigsResponse =
    PROTO_LAYOUT(IncrementalAlterConfigsResponse);
