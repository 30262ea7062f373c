/* SPDX-License-Identifier: Apache-2.0 */
/* The field tables of DescribeCluster (60), transcribed from Kafka's JSON message
 * schemas; see proto_int.h for the row format. Nested layouts come before the structs that
 * hold them. */
#include "proto/proto_int.h"

static const struct proto_field DescribeClusterRequest_fields[] = {
    PROTO_FIELD(DescribeClusterRequest, IncludeClusterAuthorizedOperations, BOOL, 0, PROTO_VMAX,
                PROTO_NEVER, 0),
    PROTO_FIELD(DescribeClusterRequest, EndpointType, INT8, 1, PROTO_VMAX, PROTO_NEVER, 1),
};
const struct proto_struct proto_DescribeClusterRequest = PROTO_LAYOUT(DescribeClusterRequest);

static const struct proto_field DescribeClusterBroker_fields[] = {
    PROTO_FIELD(DescribeClusterBroker, BrokerId, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DescribeClusterBroker, Host, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DescribeClusterBroker, Port, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DescribeClusterBroker, Rack, STRING, 0, PROTO_VMAX, 0, 0),
};
static const struct proto_struct proto_DescribeClusterBroker = PROTO_LAYOUT(DescribeClusterBroker);

static const struct proto_field DescribeClusterResponse_fields[] = {
    PROTO_FIELD(DescribeClusterResponse, ThrottleTimeMs, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DescribeClusterResponse, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DescribeClusterResponse, ErrorMessage, STRING, 0, PROTO_VMAX, 0, 0),
    PROTO_FIELD(DescribeClusterResponse, EndpointType, INT8, 1, PROTO_VMAX, PROTO_NEVER, 1),
    PROTO_FIELD(DescribeClusterResponse, ClusterId, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DescribeClusterResponse, ControllerId, INT32, 0, PROTO_VMAX, PROTO_NEVER, -1),
    PROTO_STRUCTS(DescribeClusterResponse, Brokers, proto_DescribeClusterBroker, 0, PROTO_VMAX,
                  PROTO_NEVER),
    PROTO_FIELD(DescribeClusterResponse, ClusterAuthorizedOperations, INT32, 0, PROTO_VMAX,
                PROTO_NEVER, INT32_MIN),
};
const struct proto_struct proto_DescribeClusterResponse = PROTO_LAYOUT(DescribeClusterResponse);
