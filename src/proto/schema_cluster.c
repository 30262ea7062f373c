/* SPDX-License-Identifier: Apache-2.0 */
/* The field tables of DescribeQuorum (55) and DescribeCluster (60), transcribed from Kafka's
 * JSON message schemas; see proto_int.h for the row format. Nested layouts come before the
 * structs that hold them. */
#include "proto/proto_int.h"

static const struct proto_field DescribeClusterRequest_fields[] = {
    PROTO_FIELD(DescribeClusterRequest, IncludeClusterAuthorizedOperations, BOOL, 0, PROTO_VMAX,
                PROTO_NEVER, 0),
    PROTO_FIELD(DescribeClusterRequest, EndpointType, INT8, 1, PROTO_VMAX, PROTO_NEVER, 1),
    PROTO_FIELD(DescribeClusterRequest, IncludeFencedBrokers, BOOL, 2, PROTO_VMAX, PROTO_NEVER, 0),
};
const struct proto_struct proto_DescribeClusterRequest = PROTO_LAYOUT(DescribeClusterRequest);

static const struct proto_field DescribeClusterBroker_fields[] = {
    PROTO_FIELD(DescribeClusterBroker, BrokerId, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DescribeClusterBroker, Host, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DescribeClusterBroker, Port, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DescribeClusterBroker, Rack, STRING, 0, PROTO_VMAX, 0, 0),
    PROTO_FIELD(DescribeClusterBroker, IsFenced, BOOL, 2, PROTO_VMAX, PROTO_NEVER, 0),
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

static const struct proto_field DescribeQuorumRequestPartitionData_fields[] = {
    PROTO_FIELD(DescribeQuorumRequestPartitionData, PartitionIndex, INT32, 0, PROTO_VMAX,
                PROTO_NEVER, 0),
};
static const struct proto_struct proto_DescribeQuorumRequestPartitionData =
    PROTO_LAYOUT(DescribeQuorumRequestPartitionData);

static const struct proto_field DescribeQuorumRequestTopicData_fields[] = {
    PROTO_FIELD(DescribeQuorumRequestTopicData, TopicName, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(DescribeQuorumRequestTopicData, Partitions,
                  proto_DescribeQuorumRequestPartitionData, 0, PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_DescribeQuorumRequestTopicData =
    PROTO_LAYOUT(DescribeQuorumRequestTopicData);

static const struct proto_field DescribeQuorumRequest_fields[] = {
    PROTO_STRUCTS(DescribeQuorumRequest, Topics, proto_DescribeQuorumRequestTopicData, 0,
                  PROTO_VMAX, PROTO_NEVER),
};
const struct proto_struct proto_DescribeQuorumRequest = PROTO_LAYOUT(DescribeQuorumRequest);

static const struct proto_field DescribeQuorumReplicaState_fields[] = {
    PROTO_FIELD(DescribeQuorumReplicaState, ReplicaId, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DescribeQuorumReplicaState, LogEndOffset, INT64, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DescribeQuorumReplicaState, LastFetchTimestamp, INT64, 1, PROTO_VMAX, PROTO_NEVER,
                -1),
    PROTO_FIELD(DescribeQuorumReplicaState, LastCaughtUpTimestamp, INT64, 1, PROTO_VMAX,
                PROTO_NEVER, -1),
};
static const struct proto_struct proto_DescribeQuorumReplicaState =
    PROTO_LAYOUT(DescribeQuorumReplicaState);

static const struct proto_field DescribeQuorumResponsePartitionData_fields[] = {
    PROTO_FIELD(DescribeQuorumResponsePartitionData, PartitionIndex, INT32, 0, PROTO_VMAX,
                PROTO_NEVER, 0),
    PROTO_FIELD(DescribeQuorumResponsePartitionData, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER,
                0),
    PROTO_FIELD(DescribeQuorumResponsePartitionData, LeaderId, INT32, 0, PROTO_VMAX, PROTO_NEVER,
                0),
    PROTO_FIELD(DescribeQuorumResponsePartitionData, LeaderEpoch, INT32, 0, PROTO_VMAX, PROTO_NEVER,
                0),
    PROTO_FIELD(DescribeQuorumResponsePartitionData, HighWatermark, INT64, 0, PROTO_VMAX,
                PROTO_NEVER, 0),
    PROTO_STRUCTS(DescribeQuorumResponsePartitionData, CurrentVoters,
                  proto_DescribeQuorumReplicaState, 0, PROTO_VMAX, PROTO_NEVER),
    PROTO_STRUCTS(DescribeQuorumResponsePartitionData, Observers, proto_DescribeQuorumReplicaState,
                  0, PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_DescribeQuorumResponsePartitionData =
    PROTO_LAYOUT(DescribeQuorumResponsePartitionData);

static const struct proto_field DescribeQuorumResponseTopicData_fields[] = {
    PROTO_FIELD(DescribeQuorumResponseTopicData, TopicName, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(DescribeQuorumResponseTopicData, Partitions,
                  proto_DescribeQuorumResponsePartitionData, 0, PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_DescribeQuorumResponseTopicData =
    PROTO_LAYOUT(DescribeQuorumResponseTopicData);

static const struct proto_field DescribeQuorumResponse_fields[] = {
    PROTO_FIELD(DescribeQuorumResponse, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(DescribeQuorumResponse, Topics, proto_DescribeQuorumResponseTopicData, 0,
                  PROTO_VMAX, PROTO_NEVER),
};
const struct proto_struct proto_DescribeQuorumResponse = PROTO_LAYOUT(DescribeQuorumResponse);
