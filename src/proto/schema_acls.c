/* SPDX-License-Identifier: Apache-2.0 */
/* The field tables of DescribeAcls (29), CreateAcls (30) and DeleteAcls (31), transcribed from
 * Kafka's JSON message schemas; see proto_int.h for the row format. */
#include "proto/proto_int.h"

static const struct proto_field DescribeAclsRequest_fields[] = {
    PROTO_FIELD(DescribeAclsRequest, ResourceTypeFilter, INT8, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DescribeAclsRequest, ResourceNameFilter, STRING, 0, PROTO_VMAX, 0, 0),
    PROTO_FIELD(DescribeAclsRequest, PatternTypeFilter, INT8, 1, PROTO_VMAX, PROTO_NEVER, 3),
    PROTO_FIELD(DescribeAclsRequest, PrincipalFilter, STRING, 0, PROTO_VMAX, 0, 0),
    PROTO_FIELD(DescribeAclsRequest, HostFilter, STRING, 0, PROTO_VMAX, 0, 0),
    PROTO_FIELD(DescribeAclsRequest, Operation, INT8, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DescribeAclsRequest, PermissionType, INT8, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
const struct proto_struct proto_DescribeAclsRequest = PROTO_LAYOUT(DescribeAclsRequest);

static const struct proto_field AclDescription_fields[] = {
    PROTO_FIELD(AclDescription, Principal, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(AclDescription, Host, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(AclDescription, Operation, INT8, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(AclDescription, PermissionType, INT8, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
static const struct proto_struct proto_AclDescription = PROTO_LAYOUT(AclDescription);

static const struct proto_field DescribeAclsResource_fields[] = {
    PROTO_FIELD(DescribeAclsResource, ResourceType, INT8, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DescribeAclsResource, ResourceName, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DescribeAclsResource, PatternType, INT8, 1, PROTO_VMAX, PROTO_NEVER, 3),
    PROTO_STRUCTS(DescribeAclsResource, Acls, proto_AclDescription, 0, PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_DescribeAclsResource = PROTO_LAYOUT(DescribeAclsResource);

static const struct proto_field DescribeAclsResponse_fields[] = {
    PROTO_FIELD(DescribeAclsResponse, ThrottleTimeMs, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DescribeAclsResponse, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DescribeAclsResponse, ErrorMessage, STRING, 0, PROTO_VMAX, 0, 0),
    PROTO_STRUCTS(DescribeAclsResponse, Resources, proto_DescribeAclsResource, 0, PROTO_VMAX,
                  PROTO_NEVER),
};
const struct proto_struct proto_DescribeAclsResponse = PROTO_LAYOUT(DescribeAclsResponse);

static const struct proto_field AclCreation_fields[] = {
    PROTO_FIELD(AclCreation, ResourceType, INT8, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(AclCreation, ResourceName, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(AclCreation, ResourcePatternType, INT8, 1, PROTO_VMAX, PROTO_NEVER, 3),
    PROTO_FIELD(AclCreation, Principal, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(AclCreation, Host, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(AclCreation, Operation, INT8, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(AclCreation, PermissionType, INT8, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
static const struct proto_struct proto_AclCreation = PROTO_LAYOUT(AclCreation);

static const struct proto_field CreateAclsRequest_fields[] = {
    PROTO_STRUCTS(CreateAclsRequest, Creations, proto_AclCreation, 0, PROTO_VMAX, PROTO_NEVER),
};
const struct proto_struct proto_CreateAclsRequest = PROTO_LAYOUT(CreateAclsRequest);

static const struct proto_field AclCreationResult_fields[] = {
    PROTO_FIELD(AclCreationResult, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(AclCreationResult, ErrorMessage, STRING, 0, PROTO_VMAX, 0, 0),
};
static const struct proto_struct proto_AclCreationResult = PROTO_LAYOUT(AclCreationResult);

static const struct proto_field CreateAclsResponse_fields[] = {
    PROTO_FIELD(CreateAclsResponse, ThrottleTimeMs, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(CreateAclsResponse, Results, proto_AclCreationResult, 0, PROTO_VMAX, PROTO_NEVER),
};
const struct proto_struct proto_CreateAclsResponse = PROTO_LAYOUT(CreateAclsResponse);

static const struct proto_field DeleteAclsFilter_fields[] = {
    PROTO_FIELD(DeleteAclsFilter, ResourceTypeFilter, INT8, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DeleteAclsFilter, ResourceNameFilter, STRING, 0, PROTO_VMAX, 0, 0),
    PROTO_FIELD(DeleteAclsFilter, PatternTypeFilter, INT8, 1, PROTO_VMAX, PROTO_NEVER, 3),
    PROTO_FIELD(DeleteAclsFilter, PrincipalFilter, STRING, 0, PROTO_VMAX, 0, 0),
    PROTO_FIELD(DeleteAclsFilter, HostFilter, STRING, 0, PROTO_VMAX, 0, 0),
    PROTO_FIELD(DeleteAclsFilter, Operation, INT8, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DeleteAclsFilter, PermissionType, INT8, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
static const struct proto_struct proto_DeleteAclsFilter = PROTO_LAYOUT(DeleteAclsFilter);

static const struct proto_field DeleteAclsRequest_fields[] = {
    PROTO_STRUCTS(DeleteAclsRequest, Filters, proto_DeleteAclsFilter, 0, PROTO_VMAX, PROTO_NEVER),
};
const struct proto_struct proto_DeleteAclsRequest = PROTO_LAYOUT(DeleteAclsRequest);

static const struct proto_field DeleteAclsMatchingAcl_fields[] = {
    PROTO_FIELD(DeleteAclsMatchingAcl, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DeleteAclsMatchingAcl, ErrorMessage, STRING, 0, PROTO_VMAX, 0, 0),
    PROTO_FIELD(DeleteAclsMatchingAcl, ResourceType, INT8, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DeleteAclsMatchingAcl, ResourceName, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DeleteAclsMatchingAcl, PatternType, INT8, 1, PROTO_VMAX, PROTO_NEVER, 3),
    PROTO_FIELD(DeleteAclsMatchingAcl, Principal, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DeleteAclsMatchingAcl, Host, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DeleteAclsMatchingAcl, Operation, INT8, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DeleteAclsMatchingAcl, PermissionType, INT8, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
static const struct proto_struct proto_DeleteAclsMatchingAcl = PROTO_LAYOUT(DeleteAclsMatchingAcl);

static const struct proto_field DeleteAclsFilterResult_fields[] = {
    PROTO_FIELD(DeleteAclsFilterResult, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DeleteAclsFilterResult, ErrorMessage, STRING, 0, PROTO_VMAX, 0, 0),
    PROTO_STRUCTS(DeleteAclsFilterResult, MatchingAcls, proto_DeleteAclsMatchingAcl, 0, PROTO_VMAX,
                  PROTO_NEVER),
};
static const struct proto_struct proto_DeleteAclsFilterResult =
    PROTO_LAYOUT(DeleteAclsFilterResult);

static const struct proto_field DeleteAclsResponse_fields[] = {
    PROTO_FIELD(DeleteAclsResponse, ThrottleTimeMs, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(DeleteAclsResponse, FilterResults, proto_DeleteAclsFilterResult, 0, PROTO_VMAX,
                  PROTO_NEVER),
};
const struct proto_struct proto_DeleteAclsResponse = PROTO_LAYOUT(DeleteAclsResponse);
