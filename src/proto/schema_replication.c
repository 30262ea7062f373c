/* SPDX-License-Identifier: Apache-2.0 */
/* The field tables of the replication and partition-administration APIs OffsetForLeaderEpoch
 * (key 23), DescribeLogDirs (35), ElectLeaders (43), AlterPartitionReassignments (45) and
 * ListPartitionReassignments (46), transcribed from Kafka's JSON message schemas; see
 * proto_int.h for the row format. Nested layouts come before the structs that hold them. */
#include "proto/proto_int.h"

/* ---- OffsetForLeaderEpoch ---------------------------------------------------------------- */

static const struct proto_field OffsetForLeaderPartition_fields[] = {
    PROTO_FIELD(OffsetForLeaderPartition, Partition, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(OffsetForLeaderPartition, CurrentLeaderEpoch, INT32, 2, PROTO_VMAX, PROTO_NEVER,
                -1),
    PROTO_FIELD(OffsetForLeaderPartition, LeaderEpoch, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
static const struct proto_struct proto_OffsetForLeaderPartition =
    PROTO_LAYOUT(OffsetForLeaderPartition);

static const struct proto_field OffsetForLeaderTopic_fields[] = {
    PROTO_FIELD(OffsetForLeaderTopic, Topic, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(OffsetForLeaderTopic, Partitions, proto_OffsetForLeaderPartition, 0, PROTO_VMAX,
                  PROTO_NEVER),
};
static const struct proto_struct proto_OffsetForLeaderTopic = PROTO_LAYOUT(OffsetForLeaderTopic);

static const struct proto_field OffsetForLeaderEpochRequest_fields[] = {
    PROTO_FIELD(OffsetForLeaderEpochRequest, ReplicaId, INT32, 3, PROTO_VMAX, PROTO_NEVER, -2),
    PROTO_STRUCTS(OffsetForLeaderEpochRequest, Topics, proto_OffsetForLeaderTopic, 0, PROTO_VMAX,
                  PROTO_NEVER),
};
const struct proto_struct proto_OffsetForLeaderEpochRequest =
    PROTO_LAYOUT(OffsetForLeaderEpochRequest);

static const struct proto_field EpochEndOffset_fields[] = {
    PROTO_FIELD(EpochEndOffset, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(EpochEndOffset, Partition, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(EpochEndOffset, LeaderEpoch, INT32, 1, PROTO_VMAX, PROTO_NEVER, -1),
    PROTO_FIELD(EpochEndOffset, EndOffset, INT64, 0, PROTO_VMAX, PROTO_NEVER, -1),
};
static const struct proto_struct proto_EpochEndOffset = PROTO_LAYOUT(EpochEndOffset);

static const struct proto_field OffsetForLeaderTopicResult_fields[] = {
    PROTO_FIELD(OffsetForLeaderTopicResult, Topic, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(OffsetForLeaderTopicResult, Partitions, proto_EpochEndOffset, 0, PROTO_VMAX,
                  PROTO_NEVER),
};
static const struct proto_struct proto_OffsetForLeaderTopicResult =
    PROTO_LAYOUT(OffsetForLeaderTopicResult);

static const struct proto_field OffsetForLeaderEpochResponse_fields[] = {
    PROTO_FIELD(OffsetForLeaderEpochResponse, ThrottleTimeMs, INT32, 2, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(OffsetForLeaderEpochResponse, Topics, proto_OffsetForLeaderTopicResult, 0,
                  PROTO_VMAX, PROTO_NEVER),
};
const struct proto_struct proto_OffsetForLeaderEpochResponse =
    PROTO_LAYOUT(OffsetForLeaderEpochResponse);

/* ---- DescribeLogDirs --------------------------------------------------------------------- */

static const struct proto_field DescribableLogDirTopic_fields[] = {
    PROTO_FIELD(DescribableLogDirTopic, Topic, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_ARRAY_OF(DescribableLogDirTopic, Partitions, INT32, 0, PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_DescribableLogDirTopic =
    PROTO_LAYOUT(DescribableLogDirTopic);

static const struct proto_field DescribeLogDirsRequest_fields[] = {
    PROTO_STRUCTS(DescribeLogDirsRequest, Topics, proto_DescribableLogDirTopic, 0, PROTO_VMAX, 0),
};
const struct proto_struct proto_DescribeLogDirsRequest = PROTO_LAYOUT(DescribeLogDirsRequest);

static const struct proto_field DescribeLogDirsPartition_fields[] = {
    PROTO_FIELD(DescribeLogDirsPartition, PartitionIndex, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DescribeLogDirsPartition, PartitionSize, INT64, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DescribeLogDirsPartition, OffsetLag, INT64, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DescribeLogDirsPartition, IsFutureKey, BOOL, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
static const struct proto_struct proto_DescribeLogDirsPartition =
    PROTO_LAYOUT(DescribeLogDirsPartition);

static const struct proto_field DescribeLogDirsTopic_fields[] = {
    PROTO_FIELD(DescribeLogDirsTopic, Name, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(DescribeLogDirsTopic, Partitions, proto_DescribeLogDirsPartition, 0, PROTO_VMAX,
                  PROTO_NEVER),
};
static const struct proto_struct proto_DescribeLogDirsTopic = PROTO_LAYOUT(DescribeLogDirsTopic);

static const struct proto_field DescribeLogDirsResult_fields[] = {
    PROTO_FIELD(DescribeLogDirsResult, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DescribeLogDirsResult, LogDir, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(DescribeLogDirsResult, Topics, proto_DescribeLogDirsTopic, 0, PROTO_VMAX,
                  PROTO_NEVER),
    PROTO_FIELD(DescribeLogDirsResult, TotalBytes, INT64, 4, PROTO_VMAX, PROTO_NEVER, -1),
    PROTO_FIELD(DescribeLogDirsResult, UsableBytes, INT64, 4, PROTO_VMAX, PROTO_NEVER, -1),
};
static const struct proto_struct proto_DescribeLogDirsResult = PROTO_LAYOUT(DescribeLogDirsResult);

static const struct proto_field DescribeLogDirsResponse_fields[] = {
    PROTO_FIELD(DescribeLogDirsResponse, ThrottleTimeMs, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DescribeLogDirsResponse, ErrorCode, INT16, 3, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(DescribeLogDirsResponse, Results, proto_DescribeLogDirsResult, 0, PROTO_VMAX,
                  PROTO_NEVER),
};
const struct proto_struct proto_DescribeLogDirsResponse = PROTO_LAYOUT(DescribeLogDirsResponse);

/* ---- ElectLeaders ------------------------------------------------------------------------ */

static const struct proto_field ElectLeadersTopicPartitions_fields[] = {
    PROTO_FIELD(ElectLeadersTopicPartitions, Topic, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_ARRAY_OF(ElectLeadersTopicPartitions, Partitions, INT32, 0, PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_ElectLeadersTopicPartitions =
    PROTO_LAYOUT(ElectLeadersTopicPartitions);

static const struct proto_field ElectLeadersRequest_fields[] = {
    PROTO_FIELD(ElectLeadersRequest, ElectionType, INT8, 1, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(ElectLeadersRequest, TopicPartitions, proto_ElectLeadersTopicPartitions, 0,
                  PROTO_VMAX, 0),
    PROTO_FIELD(ElectLeadersRequest, TimeoutMs, INT32, 0, PROTO_VMAX, PROTO_NEVER, 60000),
};
const struct proto_struct proto_ElectLeadersRequest = PROTO_LAYOUT(ElectLeadersRequest);

static const struct proto_field ElectLeadersPartitionResult_fields[] = {
    PROTO_FIELD(ElectLeadersPartitionResult, PartitionId, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(ElectLeadersPartitionResult, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(ElectLeadersPartitionResult, ErrorMessage, STRING, 0, PROTO_VMAX, 0, 0),
};
static const struct proto_struct proto_ElectLeadersPartitionResult =
    PROTO_LAYOUT(ElectLeadersPartitionResult);

static const struct proto_field ReplicaElectionResult_fields[] = {
    PROTO_FIELD(ReplicaElectionResult, Topic, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(ReplicaElectionResult, PartitionResult, proto_ElectLeadersPartitionResult, 0,
                  PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_ReplicaElectionResult = PROTO_LAYOUT(ReplicaElectionResult);

static const struct proto_field ElectLeadersResponse_fields[] = {
    PROTO_FIELD(ElectLeadersResponse, ThrottleTimeMs, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(ElectLeadersResponse, ErrorCode, INT16, 1, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(ElectLeadersResponse, ReplicaElectionResults, proto_ReplicaElectionResult, 0,
                  PROTO_VMAX, PROTO_NEVER),
};
const struct proto_struct proto_ElectLeadersResponse = PROTO_LAYOUT(ElectLeadersResponse);

/* ---- AlterPartitionReassignments --------------------------------------------------------- */

static const struct proto_field ReassignablePartition_fields[] = {
    PROTO_FIELD(ReassignablePartition, PartitionIndex, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_ARRAY_OF(ReassignablePartition, Replicas, INT32, 0, PROTO_VMAX, 0),
};
static const struct proto_struct proto_ReassignablePartition = PROTO_LAYOUT(ReassignablePartition);

static const struct proto_field ReassignableTopic_fields[] = {
    PROTO_FIELD(ReassignableTopic, Name, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(ReassignableTopic, Partitions, proto_ReassignablePartition, 0, PROTO_VMAX,
                  PROTO_NEVER),
};
static const struct proto_struct proto_ReassignableTopic = PROTO_LAYOUT(ReassignableTopic);

static const struct proto_field AlterPartitionReassignmentsRequest_fields[] = {
    PROTO_FIELD(AlterPartitionReassignmentsRequest, TimeoutMs, INT32, 0, PROTO_VMAX, PROTO_NEVER,
                60000),
    PROTO_STRUCTS(AlterPartitionReassignmentsRequest, Topics, proto_ReassignableTopic, 0,
                  PROTO_VMAX, PROTO_NEVER),
};
const struct proto_struct proto_AlterPartitionReassignmentsRequest =
    PROTO_LAYOUT(AlterPartitionReassignmentsRequest);

static const struct proto_field ReassignablePartitionResponse_fields[] = {
    PROTO_FIELD(ReassignablePartitionResponse, PartitionIndex, INT32, 0, PROTO_VMAX, PROTO_NEVER,
                0),
    PROTO_FIELD(ReassignablePartitionResponse, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(ReassignablePartitionResponse, ErrorMessage, STRING, 0, PROTO_VMAX, 0, 0),
};
static const struct proto_struct proto_ReassignablePartitionResponse =
    PROTO_LAYOUT(ReassignablePartitionResponse);

static const struct proto_field ReassignableTopicResponse_fields[] = {
    PROTO_FIELD(ReassignableTopicResponse, Name, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(ReassignableTopicResponse, Partitions, proto_ReassignablePartitionResponse, 0,
                  PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_ReassignableTopicResponse =
    PROTO_LAYOUT(ReassignableTopicResponse);

static const struct proto_field AlterPartitionReassignmentsResponse_fields[] = {
    PROTO_FIELD(AlterPartitionReassignmentsResponse, ThrottleTimeMs, INT32, 0, PROTO_VMAX,
                PROTO_NEVER, 0),
    PROTO_FIELD(AlterPartitionReassignmentsResponse, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER,
                0),
    PROTO_FIELD(AlterPartitionReassignmentsResponse, ErrorMessage, STRING, 0, PROTO_VMAX, 0, 0),
    PROTO_STRUCTS(AlterPartitionReassignmentsResponse, Responses, proto_ReassignableTopicResponse,
                  0, PROTO_VMAX, PROTO_NEVER),
};
const struct proto_struct proto_AlterPartitionReassignmentsResponse =
    PROTO_LAYOUT(AlterPartitionReassignmentsResponse);

/* ---- ListPartitionReassignments ---------------------------------------------------------- */

static const struct proto_field ListPartitionReassignmentsTopics_fields[] = {
    PROTO_FIELD(ListPartitionReassignmentsTopics, Name, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_ARRAY_OF(ListPartitionReassignmentsTopics, PartitionIndexes, INT32, 0, PROTO_VMAX,
                   PROTO_NEVER),
};
static const struct proto_struct proto_ListPartitionReassignmentsTopics =
    PROTO_LAYOUT(ListPartitionReassignmentsTopics);

static const struct proto_field ListPartitionReassignmentsRequest_fields[] = {
    PROTO_FIELD(ListPartitionReassignmentsRequest, TimeoutMs, INT32, 0, PROTO_VMAX, PROTO_NEVER,
                60000),
    PROTO_STRUCTS(ListPartitionReassignmentsRequest, Topics, proto_ListPartitionReassignmentsTopics,
                  0, PROTO_VMAX, 0),
};
const struct proto_struct proto_ListPartitionReassignmentsRequest =
    PROTO_LAYOUT(ListPartitionReassignmentsRequest);

static const struct proto_field OngoingPartitionReassignment_fields[] = {
    PROTO_FIELD(OngoingPartitionReassignment, PartitionIndex, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_ARRAY_OF(OngoingPartitionReassignment, Replicas, INT32, 0, PROTO_VMAX, PROTO_NEVER),
    PROTO_ARRAY_OF(OngoingPartitionReassignment, AddingReplicas, INT32, 0, PROTO_VMAX, PROTO_NEVER),
    PROTO_ARRAY_OF(OngoingPartitionReassignment, RemovingReplicas, INT32, 0, PROTO_VMAX,
                   PROTO_NEVER),
};
static const struct proto_struct proto_OngoingPartitionReassignment =
    PROTO_LAYOUT(OngoingPartitionReassignment);

static const struct proto_field OngoingTopicReassignment_fields[] = {
    PROTO_FIELD(OngoingTopicReassignment, Name, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(OngoingTopicReassignment, Partitions, proto_OngoingPartitionReassignment, 0,
                  PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_OngoingTopicReassignment =
    PROTO_LAYOUT(OngoingTopicReassignment);

static const struct proto_field ListPartitionReassignmentsResponse_fields[] = {
    PROTO_FIELD(ListPartitionReassignmentsResponse, ThrottleTimeMs, INT32, 0, PROTO_VMAX,
                PROTO_NEVER, 0),
    PROTO_FIELD(ListPartitionReassignmentsResponse, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER,
                0),
    PROTO_FIELD(ListPartitionReassignmentsResponse, ErrorMessage, STRING, 0, PROTO_VMAX, 0, 0),
    PROTO_STRUCTS(ListPartitionReassignmentsResponse, Topics, proto_OngoingTopicReassignment, 0,
                  PROTO_VMAX, PROTO_NEVER),
};
const struct proto_struct proto_ListPartitionReassignmentsResponse =
    PROTO_LAYOUT(ListPartitionReassignmentsResponse);
