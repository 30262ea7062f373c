/* SPDX-License-Identifier: Apache-2.0 */
/* The field tables of Fetch (key 1), transcribed from Kafka's JSON message schemas; see
 * proto_int.h for the row format. Nested layouts come before the structs that hold them. */
#include "proto/proto_int.h"

static const struct proto_field FetchPartition_fields[] = {
    PROTO_FIELD(FetchPartition, Partition, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(FetchPartition, CurrentLeaderEpoch, INT32, 9, PROTO_VMAX, PROTO_NEVER, -1),
    PROTO_FIELD(FetchPartition, FetchOffset, INT64, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(FetchPartition, LastFetchedEpoch, INT32, 12, PROTO_VMAX, PROTO_NEVER, -1),
    PROTO_FIELD(FetchPartition, LogStartOffset, INT64, 5, PROTO_VMAX, PROTO_NEVER, -1),
    PROTO_FIELD(FetchPartition, PartitionMaxBytes, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
static const struct proto_struct proto_FetchPartition = PROTO_LAYOUT(FetchPartition);

static const struct proto_field FetchTopic_fields[] = {
    PROTO_FIELD(FetchTopic, Topic, STRING, 0, 12, PROTO_NEVER, 0),
    PROTO_FIELD(FetchTopic, TopicId, UUID, 13, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(FetchTopic, Partitions, proto_FetchPartition, 0, PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_FetchTopic = PROTO_LAYOUT(FetchTopic);

static const struct proto_field ForgottenTopic_fields[] = {
    PROTO_FIELD(ForgottenTopic, Topic, STRING, 7, 12, PROTO_NEVER, 0),
    PROTO_FIELD(ForgottenTopic, TopicId, UUID, 13, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_ARRAY_OF(ForgottenTopic, Partitions, INT32, 7, PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_ForgottenTopic = PROTO_LAYOUT(ForgottenTopic);

static const struct proto_field FetchRequest_fields[] = {
    PROTO_TAGGED_NULLABLE(FetchRequest, ClusterId, STRING, 12, PROTO_VMAX, 12, 0),
    PROTO_FIELD(FetchRequest, ReplicaId, INT32, 0, 14, PROTO_NEVER, -1),
    PROTO_FIELD(FetchRequest, MaxWaitMs, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(FetchRequest, MinBytes, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(FetchRequest, MaxBytes, INT32, 3, PROTO_VMAX, PROTO_NEVER, INT32_MAX),
    PROTO_FIELD(FetchRequest, IsolationLevel, INT8, 4, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(FetchRequest, SessionId, INT32, 7, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(FetchRequest, SessionEpoch, INT32, 7, PROTO_VMAX, PROTO_NEVER, -1),
    PROTO_STRUCTS(FetchRequest, Topics, proto_FetchTopic, 0, PROTO_VMAX, PROTO_NEVER),
    PROTO_STRUCTS(FetchRequest, ForgottenTopicsData, proto_ForgottenTopic, 7, PROTO_VMAX,
                  PROTO_NEVER),
    PROTO_FIELD(FetchRequest, RackId, STRING, 11, PROTO_VMAX, PROTO_NEVER, 0),
};
const struct proto_struct proto_FetchRequest = PROTO_LAYOUT(FetchRequest);

static const struct proto_field FetchEpochEndOffset_fields[] = {
    PROTO_FIELD(FetchEpochEndOffset, Epoch, INT32, 12, PROTO_VMAX, PROTO_NEVER, -1),
    PROTO_FIELD(FetchEpochEndOffset, EndOffset, INT64, 12, PROTO_VMAX, PROTO_NEVER, -1),
};
static const struct proto_struct proto_FetchEpochEndOffset = PROTO_LAYOUT(FetchEpochEndOffset);

static const struct proto_field FetchLeaderIdAndEpoch_fields[] = {
    PROTO_FIELD(FetchLeaderIdAndEpoch, LeaderId, INT32, 12, PROTO_VMAX, PROTO_NEVER, -1),
    PROTO_FIELD(FetchLeaderIdAndEpoch, LeaderEpoch, INT32, 12, PROTO_VMAX, PROTO_NEVER, -1),
};
static const struct proto_struct proto_FetchLeaderIdAndEpoch = PROTO_LAYOUT(FetchLeaderIdAndEpoch);

static const struct proto_field FetchSnapshotId_fields[] = {
    PROTO_FIELD(FetchSnapshotId, EndOffset, INT64, 0, PROTO_VMAX, PROTO_NEVER, -1),
    PROTO_FIELD(FetchSnapshotId, Epoch, INT32, 0, PROTO_VMAX, PROTO_NEVER, -1),
};
static const struct proto_struct proto_FetchSnapshotId = PROTO_LAYOUT(FetchSnapshotId);

static const struct proto_field AbortedTransaction_fields[] = {
    PROTO_FIELD(AbortedTransaction, ProducerId, INT64, 4, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(AbortedTransaction, FirstOffset, INT64, 4, PROTO_VMAX, PROTO_NEVER, 0),
};
static const struct proto_struct proto_AbortedTransaction = PROTO_LAYOUT(AbortedTransaction);

static const struct proto_field FetchPartitionData_fields[] = {
    PROTO_FIELD(FetchPartitionData, PartitionIndex, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(FetchPartitionData, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(FetchPartitionData, HighWatermark, INT64, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(FetchPartitionData, LastStableOffset, INT64, 4, PROTO_VMAX, PROTO_NEVER, -1),
    PROTO_FIELD(FetchPartitionData, LogStartOffset, INT64, 5, PROTO_VMAX, PROTO_NEVER, -1),
    PROTO_TAGGED_STRUCT(FetchPartitionData, DivergingEpoch, proto_FetchEpochEndOffset, 12,
                        PROTO_VMAX, 0),
    PROTO_TAGGED_STRUCT(FetchPartitionData, CurrentLeader, proto_FetchLeaderIdAndEpoch, 12,
                        PROTO_VMAX, 1),
    PROTO_TAGGED_STRUCT(FetchPartitionData, SnapshotId, proto_FetchSnapshotId, 12, PROTO_VMAX, 2),
    PROTO_STRUCTS(FetchPartitionData, AbortedTransactions, proto_AbortedTransaction, 4, PROTO_VMAX,
                  4),
    PROTO_FIELD(FetchPartitionData, PreferredReadReplica, INT32, 11, PROTO_VMAX, PROTO_NEVER, -1),
    PROTO_FIELD(FetchPartitionData, Records, RECORDS, 0, PROTO_VMAX, 0, 0),
};
static const struct proto_struct proto_FetchPartitionData = PROTO_LAYOUT(FetchPartitionData);

static const struct proto_field FetchableTopicResponse_fields[] = {
    PROTO_FIELD(FetchableTopicResponse, Topic, STRING, 0, 12, PROTO_NEVER, 0),
    PROTO_FIELD(FetchableTopicResponse, TopicId, UUID, 13, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(FetchableTopicResponse, Partitions, proto_FetchPartitionData, 0, PROTO_VMAX,
                  PROTO_NEVER),
};
static const struct proto_struct proto_FetchableTopicResponse =
    PROTO_LAYOUT(FetchableTopicResponse);

static const struct proto_field FetchResponse_fields[] = {
    PROTO_FIELD(FetchResponse, ThrottleTimeMs, INT32, 1, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(FetchResponse, ErrorCode, INT16, 7, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(FetchResponse, SessionId, INT32, 7, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(FetchResponse, Responses, proto_FetchableTopicResponse, 0, PROTO_VMAX,
                  PROTO_NEVER),
};
const struct proto_struct proto_FetchResponse = PROTO_LAYOUT(FetchResponse);
