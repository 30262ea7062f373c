/* SPDX-License-Identifier: Apache-2.0 */
/* The field tables of CreateTopics (19), DeleteTopics (20) and CreatePartitions (37), transcribed
 * from Kafka's JSON message schemas; see proto_int.h for the row format. Nested layouts come before
 * the structs that hold them. */
#include "proto/proto_int.h"

static const struct proto_field CreatableReplicaAssignment_fields[] = {
    PROTO_FIELD(CreatableReplicaAssignment, PartitionIndex, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_ARRAY_OF(CreatableReplicaAssignment, BrokerIds, INT32, 0, PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_CreatableReplicaAssignment =
    PROTO_LAYOUT(CreatableReplicaAssignment);

static const struct proto_field CreatableTopicConfig_fields[] = {
    PROTO_FIELD(CreatableTopicConfig, Name, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(CreatableTopicConfig, Value, STRING, 0, PROTO_VMAX, 0, 0),
};
static const struct proto_struct proto_CreatableTopicConfig = PROTO_LAYOUT(CreatableTopicConfig);

static const struct proto_field CreatableTopic_fields[] = {
    PROTO_FIELD(CreatableTopic, Name, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(CreatableTopic, NumPartitions, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(CreatableTopic, ReplicationFactor, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(CreatableTopic, Assignments, proto_CreatableReplicaAssignment, 0, PROTO_VMAX,
                  PROTO_NEVER),
    PROTO_STRUCTS(CreatableTopic, Configs, proto_CreatableTopicConfig, 0, PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_CreatableTopic = PROTO_LAYOUT(CreatableTopic);

static const struct proto_field CreateTopicsRequest_fields[] = {
    PROTO_STRUCTS(CreateTopicsRequest, Topics, proto_CreatableTopic, 0, PROTO_VMAX, PROTO_NEVER),
    PROTO_FIELD(CreateTopicsRequest, timeoutMs, INT32, 0, PROTO_VMAX, PROTO_NEVER, 60000),
    PROTO_FIELD(CreateTopicsRequest, validateOnly, BOOL, 1, PROTO_VMAX, PROTO_NEVER, 0),
};
const struct proto_struct proto_CreateTopicsRequest = PROTO_LAYOUT(CreateTopicsRequest);

static const struct proto_field CreatableTopicConfigs_fields[] = {
    PROTO_FIELD(CreatableTopicConfigs, Name, STRING, 5, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(CreatableTopicConfigs, Value, STRING, 5, PROTO_VMAX, 5, 0),
    PROTO_FIELD(CreatableTopicConfigs, ReadOnly, BOOL, 5, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(CreatableTopicConfigs, ConfigSource, INT8, 5, PROTO_VMAX, PROTO_NEVER, -1),
    PROTO_FIELD(CreatableTopicConfigs, IsSensitive, BOOL, 5, PROTO_VMAX, PROTO_NEVER, 0),
};
static const struct proto_struct proto_CreatableTopicConfigs = PROTO_LAYOUT(CreatableTopicConfigs);

static const struct proto_field CreatableTopicResult_fields[] = {
    PROTO_FIELD(CreatableTopicResult, Name, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(CreatableTopicResult, TopicId, UUID, 7, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(CreatableTopicResult, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(CreatableTopicResult, ErrorMessage, STRING, 1, PROTO_VMAX, 0, 0),
    PROTO_TAGGED(CreatableTopicResult, TopicConfigErrorCode, INT16, 5, PROTO_VMAX, 0, 0),
    PROTO_FIELD(CreatableTopicResult, NumPartitions, INT32, 5, PROTO_VMAX, PROTO_NEVER, -1),
    PROTO_FIELD(CreatableTopicResult, ReplicationFactor, INT16, 5, PROTO_VMAX, PROTO_NEVER, -1),
    PROTO_STRUCTS(CreatableTopicResult, Configs, proto_CreatableTopicConfigs, 5, PROTO_VMAX, 5),
};
static const struct proto_struct proto_CreatableTopicResult = PROTO_LAYOUT(CreatableTopicResult);

static const struct proto_field CreateTopicsResponse_fields[] = {
    PROTO_FIELD(CreateTopicsResponse, ThrottleTimeMs, INT32, 2, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(CreateTopicsResponse, Topics, proto_CreatableTopicResult, 0, PROTO_VMAX,
                  PROTO_NEVER),
};
const struct proto_struct proto_CreateTopicsResponse = PROTO_LAYOUT(CreateTopicsResponse);

static const struct proto_field DeleteTopicState_fields[] = {
    PROTO_FIELD(DeleteTopicState, Name, STRING, 6, PROTO_VMAX, 6, 0),
    PROTO_FIELD(DeleteTopicState, TopicId, UUID, 6, PROTO_VMAX, PROTO_NEVER, 0),
};
static const struct proto_struct proto_DeleteTopicState = PROTO_LAYOUT(DeleteTopicState);

static const struct proto_field DeleteTopicsRequest_fields[] = {
    PROTO_STRUCTS(DeleteTopicsRequest, Topics, proto_DeleteTopicState, 6, PROTO_VMAX, PROTO_NEVER),
    PROTO_ARRAY_OF(DeleteTopicsRequest, TopicNames, STRING, 0, 5, PROTO_NEVER),
    PROTO_FIELD(DeleteTopicsRequest, TimeoutMs, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
const struct proto_struct proto_DeleteTopicsRequest = PROTO_LAYOUT(DeleteTopicsRequest);

static const struct proto_field DeletableTopicResult_fields[] = {
    PROTO_FIELD(DeletableTopicResult, Name, STRING, 0, PROTO_VMAX, 6, 0),
    PROTO_FIELD(DeletableTopicResult, TopicId, UUID, 6, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DeletableTopicResult, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DeletableTopicResult, ErrorMessage, STRING, 5, PROTO_VMAX, 5, 0),
};
static const struct proto_struct proto_DeletableTopicResult = PROTO_LAYOUT(DeletableTopicResult);

static const struct proto_field DeleteTopicsResponse_fields[] = {
    PROTO_FIELD(DeleteTopicsResponse, ThrottleTimeMs, INT32, 1, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(DeleteTopicsResponse, Responses, proto_DeletableTopicResult, 0, PROTO_VMAX,
                  PROTO_NEVER),
};
const struct proto_struct proto_DeleteTopicsResponse = PROTO_LAYOUT(DeleteTopicsResponse);

static const struct proto_field CreatePartitionsAssignment_fields[] = {
    PROTO_ARRAY_OF(CreatePartitionsAssignment, BrokerIds, INT32, 0, PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_CreatePartitionsAssignment =
    PROTO_LAYOUT(CreatePartitionsAssignment);

static const struct proto_field CreatePartitionsTopic_fields[] = {
    PROTO_FIELD(CreatePartitionsTopic, Name, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(CreatePartitionsTopic, Count, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(CreatePartitionsTopic, Assignments, proto_CreatePartitionsAssignment, 0,
                  PROTO_VMAX, 0),
};
static const struct proto_struct proto_CreatePartitionsTopic = PROTO_LAYOUT(CreatePartitionsTopic);

static const struct proto_field CreatePartitionsRequest_fields[] = {
    PROTO_STRUCTS(CreatePartitionsRequest, Topics, proto_CreatePartitionsTopic, 0, PROTO_VMAX,
                  PROTO_NEVER),
    PROTO_FIELD(CreatePartitionsRequest, TimeoutMs, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(CreatePartitionsRequest, ValidateOnly, BOOL, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
const struct proto_struct proto_CreatePartitionsRequest = PROTO_LAYOUT(CreatePartitionsRequest);

static const struct proto_field CreatePartitionsTopicResult_fields[] = {
    PROTO_FIELD(CreatePartitionsTopicResult, Name, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(CreatePartitionsTopicResult, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(CreatePartitionsTopicResult, ErrorMessage, STRING, 0, PROTO_VMAX, 0, 0),
};
static const struct proto_struct proto_CreatePartitionsTopicResult =
    PROTO_LAYOUT(CreatePartitionsTopicResult);

static const struct proto_field CreatePartitionsResponse_fields[] = {
    PROTO_FIELD(CreatePartitionsResponse, ThrottleTimeMs, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(CreatePartitionsResponse, Results, proto_CreatePartitionsTopicResult, 0,
                  PROTO_VMAX, PROTO_NEVER),
};
const struct proto_struct proto_CreatePartitionsResponse = PROTO_LAYOUT(CreatePartitionsResponse);
