/* SPDX-License-Identifier: Apache-2.0 */
/* The field tables of Metadata (key 3), transcribed from Kafka's JSON message
 * schemas; see proto_int.h for the row format. Nested layouts come before the structs that
 * hold them. */
#include "proto/proto_int.h"

static const struct proto_field MetadataRequestTopic_fields[] = {
    PROTO_FIELD(MetadataRequestTopic, TopicId, UUID, 10, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(MetadataRequestTopic, Name, STRING, 0, PROTO_VMAX, 10, 0),
};
static const struct proto_struct proto_MetadataRequestTopic = PROTO_LAYOUT(MetadataRequestTopic);

static const struct proto_field MetadataRequest_fields[] = {
    PROTO_STRUCTS(MetadataRequest, Topics, proto_MetadataRequestTopic, 0, PROTO_VMAX, 1),
    PROTO_FIELD(MetadataRequest, AllowAutoTopicCreation, BOOL, 4, PROTO_VMAX, PROTO_NEVER, true),
    PROTO_FIELD(MetadataRequest, IncludeClusterAuthorizedOperations, BOOL, 8, 10, PROTO_NEVER, 0),
    PROTO_FIELD(MetadataRequest, IncludeTopicAuthorizedOperations, BOOL, 8, PROTO_VMAX, PROTO_NEVER,
                0),
};
const struct proto_struct proto_MetadataRequest = PROTO_LAYOUT(MetadataRequest);

static const struct proto_field MetadataResponseBroker_fields[] = {
    PROTO_FIELD(MetadataResponseBroker, NodeId, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(MetadataResponseBroker, Host, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(MetadataResponseBroker, Port, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(MetadataResponseBroker, Rack, STRING, 1, PROTO_VMAX, 1, 0),
};
static const struct proto_struct proto_MetadataResponseBroker =
    PROTO_LAYOUT(MetadataResponseBroker);

static const struct proto_field MetadataResponsePartition_fields[] = {
    PROTO_FIELD(MetadataResponsePartition, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(MetadataResponsePartition, PartitionIndex, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(MetadataResponsePartition, LeaderId, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(MetadataResponsePartition, LeaderEpoch, INT32, 7, PROTO_VMAX, PROTO_NEVER, -1),
    PROTO_ARRAY_OF(MetadataResponsePartition, ReplicaNodes, INT32, 0, PROTO_VMAX, PROTO_NEVER),
    PROTO_ARRAY_OF(MetadataResponsePartition, IsrNodes, INT32, 0, PROTO_VMAX, PROTO_NEVER),
    PROTO_ARRAY_OF(MetadataResponsePartition, OfflineReplicas, INT32, 5, PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_MetadataResponsePartition =
    PROTO_LAYOUT(MetadataResponsePartition);

static const struct proto_field MetadataResponseTopic_fields[] = {
    PROTO_FIELD(MetadataResponseTopic, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(MetadataResponseTopic, Name, STRING, 0, PROTO_VMAX, 12, 0),
    PROTO_FIELD(MetadataResponseTopic, TopicId, UUID, 10, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(MetadataResponseTopic, IsInternal, BOOL, 1, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(MetadataResponseTopic, Partitions, proto_MetadataResponsePartition, 0, PROTO_VMAX,
                  PROTO_NEVER),
    PROTO_FIELD(MetadataResponseTopic, TopicAuthorizedOperations, INT32, 8, PROTO_VMAX, PROTO_NEVER,
                INT32_MIN),
};
static const struct proto_struct proto_MetadataResponseTopic = PROTO_LAYOUT(MetadataResponseTopic);

static const struct proto_field MetadataResponse_fields[] = {
    PROTO_FIELD(MetadataResponse, ThrottleTimeMs, INT32, 3, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(MetadataResponse, Brokers, proto_MetadataResponseBroker, 0, PROTO_VMAX,
                  PROTO_NEVER),
    PROTO_FIELD(MetadataResponse, ClusterId, STRING, 2, PROTO_VMAX, 2, 0),
    PROTO_FIELD(MetadataResponse, ControllerId, INT32, 1, PROTO_VMAX, PROTO_NEVER, -1),
    PROTO_STRUCTS(MetadataResponse, Topics, proto_MetadataResponseTopic, 0, PROTO_VMAX,
                  PROTO_NEVER),
    PROTO_FIELD(MetadataResponse, ClusterAuthorizedOperations, INT32, 8, 10, PROTO_NEVER,
                INT32_MIN),
};
const struct proto_struct proto_MetadataResponse = PROTO_LAYOUT(MetadataResponse);
