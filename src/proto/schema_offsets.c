/* SPDX-License-Identifier: Apache-2.0 */
/* The field tables of ListOffsets (key 2) and DeleteRecords (21), transcribed from Kafka's
 * JSON message schemas; see proto_int.h for the row format. Nested layouts come before the
 * structs that hold them. */
#include "proto/proto_int.h"

static const struct proto_field ListOffsetsPartition_fields[] = {
    PROTO_FIELD(ListOffsetsPartition, PartitionIndex, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(ListOffsetsPartition, CurrentLeaderEpoch, INT32, 4, PROTO_VMAX, PROTO_NEVER, -1),
    PROTO_FIELD(ListOffsetsPartition, Timestamp, INT64, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(ListOffsetsPartition, MaxNumOffsets, INT32, 0, 0, PROTO_NEVER, 1),
};
static const struct proto_struct proto_ListOffsetsPartition = PROTO_LAYOUT(ListOffsetsPartition);

static const struct proto_field ListOffsetsTopic_fields[] = {
    PROTO_FIELD(ListOffsetsTopic, Name, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(ListOffsetsTopic, Partitions, proto_ListOffsetsPartition, 0, PROTO_VMAX,
                  PROTO_NEVER),
};
static const struct proto_struct proto_ListOffsetsTopic = PROTO_LAYOUT(ListOffsetsTopic);

static const struct proto_field ListOffsetsRequest_fields[] = {
    PROTO_FIELD(ListOffsetsRequest, ReplicaId, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(ListOffsetsRequest, IsolationLevel, INT8, 2, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(ListOffsetsRequest, Topics, proto_ListOffsetsTopic, 0, PROTO_VMAX, PROTO_NEVER),
};
const struct proto_struct proto_ListOffsetsRequest = PROTO_LAYOUT(ListOffsetsRequest);

static const struct proto_field ListOffsetsPartitionResponse_fields[] = {
    PROTO_FIELD(ListOffsetsPartitionResponse, PartitionIndex, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(ListOffsetsPartitionResponse, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_ARRAY_OF(ListOffsetsPartitionResponse, OldStyleOffsets, INT64, 0, 0, PROTO_NEVER),
    PROTO_FIELD(ListOffsetsPartitionResponse, Timestamp, INT64, 1, PROTO_VMAX, PROTO_NEVER, -1),
    PROTO_FIELD(ListOffsetsPartitionResponse, Offset, INT64, 1, PROTO_VMAX, PROTO_NEVER, -1),
    PROTO_FIELD(ListOffsetsPartitionResponse, LeaderEpoch, INT32, 4, PROTO_VMAX, PROTO_NEVER, -1),
};
static const struct proto_struct proto_ListOffsetsPartitionResponse =
    PROTO_LAYOUT(ListOffsetsPartitionResponse);

static const struct proto_field ListOffsetsTopicResponse_fields[] = {
    PROTO_FIELD(ListOffsetsTopicResponse, Name, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(ListOffsetsTopicResponse, Partitions, proto_ListOffsetsPartitionResponse, 0,
                  PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_ListOffsetsTopicResponse =
    PROTO_LAYOUT(ListOffsetsTopicResponse);

static const struct proto_field ListOffsetsResponse_fields[] = {
    PROTO_FIELD(ListOffsetsResponse, ThrottleTimeMs, INT32, 2, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(ListOffsetsResponse, Topics, proto_ListOffsetsTopicResponse, 0, PROTO_VMAX,
                  PROTO_NEVER),
};
const struct proto_struct proto_ListOffsetsResponse = PROTO_LAYOUT(ListOffsetsResponse);

static const struct proto_field DeleteRecordsPartition_fields[] = {
    PROTO_FIELD(DeleteRecordsPartition, PartitionIndex, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DeleteRecordsPartition, Offset, INT64, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
static const struct proto_struct proto_DeleteRecordsPartition =
    PROTO_LAYOUT(DeleteRecordsPartition);

static const struct proto_field DeleteRecordsTopic_fields[] = {
    PROTO_FIELD(DeleteRecordsTopic, Name, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(DeleteRecordsTopic, Partitions, proto_DeleteRecordsPartition, 0, PROTO_VMAX,
                  PROTO_NEVER),
};
static const struct proto_struct proto_DeleteRecordsTopic = PROTO_LAYOUT(DeleteRecordsTopic);

static const struct proto_field DeleteRecordsRequest_fields[] = {
    PROTO_STRUCTS(DeleteRecordsRequest, Topics, proto_DeleteRecordsTopic, 0, PROTO_VMAX,
                  PROTO_NEVER),
    PROTO_FIELD(DeleteRecordsRequest, TimeoutMs, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
const struct proto_struct proto_DeleteRecordsRequest = PROTO_LAYOUT(DeleteRecordsRequest);

static const struct proto_field DeleteRecordsPartitionResult_fields[] = {
    PROTO_FIELD(DeleteRecordsPartitionResult, PartitionIndex, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DeleteRecordsPartitionResult, LowWatermark, INT64, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DeleteRecordsPartitionResult, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
static const struct proto_struct proto_DeleteRecordsPartitionResult =
    PROTO_LAYOUT(DeleteRecordsPartitionResult);

static const struct proto_field DeleteRecordsTopicResult_fields[] = {
    PROTO_FIELD(DeleteRecordsTopicResult, Name, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(DeleteRecordsTopicResult, Partitions, proto_DeleteRecordsPartitionResult, 0,
                  PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_DeleteRecordsTopicResult =
    PROTO_LAYOUT(DeleteRecordsTopicResult);

static const struct proto_field DeleteRecordsResponse_fields[] = {
    PROTO_FIELD(DeleteRecordsResponse, ThrottleTimeMs, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(DeleteRecordsResponse, Topics, proto_DeleteRecordsTopicResult, 0, PROTO_VMAX,
                  PROTO_NEVER),
};
const struct proto_struct proto_DeleteRecordsResponse = PROTO_LAYOUT(DeleteRecordsResponse);
