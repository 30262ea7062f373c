/* SPDX-License-Identifier: Apache-2.0 */
/* proto_msgs: the C form of every request and response the broker declares. Struct and field
 * names are those of Kafka's JSON message schemas (clients/src/main/resources/common/message),
 * so code greps straight against the protocol; nested structs keep the schema's names, with the
 * message name prefixed where two messages use one name for different layouts
 * (IncrementalAlterConfigs*, Fetch*, DescribeProducers*). The comment on each field gives its
 * versions, the versions in which it may be null, its tag when tagged, and its default when not 0 /
 * false.
 *
 * Decoded strings are NUL-terminated copies in the request's arena; a string field absent
 * from the decoded version is NULL, an absent array is empty, an absent integer has its
 * default. The field tables that give these structs their wire form are in schema_*.c. */
#ifndef TALLY_PROTO_MSGS_H
#define TALLY_PROTO_MSGS_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/proto.h"

/* Kafka's API keys. Only those proto_api_find() knows are declared below. */
enum proto_api_key {
    PROTO_API_Produce = 0,
    PROTO_API_Fetch = 1,
    PROTO_API_ListOffsets = 2,
    PROTO_API_Metadata = 3,
    PROTO_API_LeaderAndIsr = 4,
    PROTO_API_StopReplica = 5,
    PROTO_API_UpdateMetadata = 6,
    PROTO_API_ControlledShutdown = 7,
    PROTO_API_OffsetCommit = 8,
    PROTO_API_OffsetFetch = 9,
    PROTO_API_FindCoordinator = 10,
    PROTO_API_JoinGroup = 11,
    PROTO_API_Heartbeat = 12,
    PROTO_API_LeaveGroup = 13,
    PROTO_API_SyncGroup = 14,
    PROTO_API_DescribeGroups = 15,
    PROTO_API_ListGroups = 16,
    PROTO_API_SaslHandshake = 17,
    PROTO_API_ApiVersions = 18,
    PROTO_API_CreateTopics = 19,
    PROTO_API_DeleteTopics = 20,
    PROTO_API_DeleteRecords = 21,
    PROTO_API_InitProducerId = 22,
    PROTO_API_OffsetForLeaderEpoch = 23,
    PROTO_API_AddPartitionsToTxn = 24,
    PROTO_API_AddOffsetsToTxn = 25,
    PROTO_API_EndTxn = 26,
    PROTO_API_WriteTxnMarkers = 27,
    PROTO_API_TxnOffsetCommit = 28,
    PROTO_API_DescribeAcls = 29,
    PROTO_API_CreateAcls = 30,
    PROTO_API_DeleteAcls = 31,
    PROTO_API_DescribeConfigs = 32,
    PROTO_API_AlterConfigs = 33,
    PROTO_API_AlterReplicaLogDirs = 34,
    PROTO_API_DescribeLogDirs = 35,
    PROTO_API_SaslAuthenticate = 36,
    PROTO_API_CreatePartitions = 37,
    PROTO_API_CreateDelegationToken = 38,
    PROTO_API_RenewDelegationToken = 39,
    PROTO_API_ExpireDelegationToken = 40,
    PROTO_API_DescribeDelegationToken = 41,
    PROTO_API_DeleteGroups = 42,
    PROTO_API_ElectLeaders = 43,
    PROTO_API_IncrementalAlterConfigs = 44,
    PROTO_API_AlterPartitionReassignments = 45,
    PROTO_API_ListPartitionReassignments = 46,
    PROTO_API_OffsetDelete = 47,
    PROTO_API_DescribeClientQuotas = 48,
    PROTO_API_AlterClientQuotas = 49,
    PROTO_API_DescribeUserScramCredentials = 50,
    PROTO_API_AlterUserScramCredentials = 51,
    PROTO_API_Vote = 52,
    PROTO_API_BeginQuorumEpoch = 53,
    PROTO_API_EndQuorumEpoch = 54,
    PROTO_API_DescribeQuorum = 55,
    PROTO_API_AlterPartition = 56,
    PROTO_API_UpdateFeatures = 57,
    PROTO_API_Envelope = 58,
    PROTO_API_FetchSnapshot = 59,
    PROTO_API_DescribeCluster = 60,
    PROTO_API_DescribeProducers = 61,
    PROTO_API_BrokerRegistration = 62,
    PROTO_API_BrokerHeartbeat = 63,
    PROTO_API_UnregisterBroker = 64,
    PROTO_API_DescribeTransactions = 65,
    PROTO_API_ListTransactions = 66,
    PROTO_API_AllocateProducerIds = 67,
    PROTO_API_ConsumerGroupHeartbeat = 68,
    PROTO_API_ConsumerGroupDescribe = 69,
    PROTO_API_ControllerRegistration = 70,
    PROTO_API_GetTelemetrySubscriptions = 71,
    PROTO_API_PushTelemetry = 72,
    PROTO_API_AssignReplicasToDirs = 73,
    PROTO_API_ListClientMetricsResources = 74,
    PROTO_API_DescribeTopicPartitions = 75,
    PROTO_API_ShareGroupHeartbeat = 76,
    PROTO_API_ShareGroupDescribe = 77,
    PROTO_API_ShareFetch = 78,
    PROTO_API_ShareAcknowledge = 79,
    PROTO_API_AddRaftVoter = 80,
    PROTO_API_RemoveRaftVoter = 81,
    PROTO_API_UpdateRaftVoter = 82,
    PROTO_API_InitializeShareGroupState = 83,
    PROTO_API_ReadShareGroupState = 84,
    PROTO_API_WriteShareGroupState = 85,
    PROTO_API_DeleteShareGroupState = 86,
    PROTO_API_ReadShareGroupStateSummary = 87,
};

/* Produce (key 0), versions 0-9, flexible from 9. */
struct PartitionProduceData {
    int32_t Index;              /* v0+ */
    struct proto_bytes Records; /* v0+, nullable v0+ */
};

struct TopicProduceData {
    char *Name;                                             /* v0+ */
    PROTO_ARRAY(struct PartitionProduceData) PartitionData; /* v0+ */
};

struct ProduceRequest {
    char *TransactionalId;                          /* v3+, nullable v3+ */
    int16_t Acks;                                   /* v0+ */
    int32_t TimeoutMs;                              /* v0+ */
    PROTO_ARRAY(struct TopicProduceData) TopicData; /* v0+ */
};

extern const struct proto_struct proto_ProduceRequest;

struct BatchIndexAndErrorMessage {
    int32_t BatchIndex;           /* v8+ */
    char *BatchIndexErrorMessage; /* v8+, nullable v8+ */
};

/* CurrentLeader (tag 0, v10+) is past the declared versions. */
struct PartitionProduceResponse {
    int32_t Index;                                              /* v0+ */
    int16_t ErrorCode;                                          /* v0+ */
    int64_t BaseOffset;                                         /* v0+ */
    int64_t LogAppendTimeMs;                                    /* v2+, default -1 */
    int64_t LogStartOffset;                                     /* v5+, default -1 */
    PROTO_ARRAY(struct BatchIndexAndErrorMessage) RecordErrors; /* v8+ */
    char *ErrorMessage;                                         /* v8+, nullable v8+ */
};

struct TopicProduceResponse {
    char *Name;                                                      /* v0+ */
    PROTO_ARRAY(struct PartitionProduceResponse) PartitionResponses; /* v0+ */
};

/* NodeEndpoints (tag 0, v10+) is past the declared versions. */
struct ProduceResponse {
    PROTO_ARRAY(struct TopicProduceResponse) Responses; /* v0+ */
    int32_t ThrottleTimeMs;                             /* v1+ */
};

extern const struct proto_struct proto_ProduceResponse;

/* Fetch (key 1), versions 0-13, flexible from 12. ReplicaState (tag 1, v15+) and
 * FetchPartition.ReplicaDirectoryId (tag 0, v17+) are past the declared versions. */
struct FetchPartition {
    int32_t Partition;          /* v0+ */
    int32_t CurrentLeaderEpoch; /* v9+, default -1 */
    int64_t FetchOffset;        /* v0+ */
    int32_t LastFetchedEpoch;   /* v12+, default -1 */
    int64_t LogStartOffset;     /* v5+, default -1 */
    int32_t PartitionMaxBytes;  /* v0+ */
};

struct FetchTopic {
    char *Topic;                                   /* v0-12 */
    struct proto_uuid TopicId;                     /* v13+ */
    PROTO_ARRAY(struct FetchPartition) Partitions; /* v0+ */
};

struct ForgottenTopic {
    char *Topic;                     /* v7-12 */
    struct proto_uuid TopicId;       /* v13+ */
    PROTO_ARRAY(int32_t) Partitions; /* v7+ */
};

struct FetchRequest {
    char *ClusterId;                                        /* v12+, nullable v12+, tag 0 */
    int32_t ReplicaId;                                      /* v0-14, default -1 */
    int32_t MaxWaitMs;                                      /* v0+ */
    int32_t MinBytes;                                       /* v0+ */
    int32_t MaxBytes;                                       /* v3+, default INT32_MAX */
    int8_t IsolationLevel;                                  /* v4+ */
    int32_t SessionId;                                      /* v7+ */
    int32_t SessionEpoch;                                   /* v7+, default -1 */
    PROTO_ARRAY(struct FetchTopic) Topics;                  /* v0+ */
    PROTO_ARRAY(struct ForgottenTopic) ForgottenTopicsData; /* v7+ */
    char *RackId;                                           /* v11+, default "" */
};

extern const struct proto_struct proto_FetchRequest;

/* The tagged structs of a FetchResponse partition (schema names EpochEndOffset,
 * LeaderIdAndEpoch, SnapshotId, prefixed as other messages use the same names). One is sent
 * whenever any of its fields differs from -1, so start every partition from
 * FETCH_PARTITION_DATA_DEFAULTS: a zeroed DivergingEpoch {0, 0} reads as a divergence to
 * clients. */
struct FetchEpochEndOffset {
    int32_t Epoch;     /* v12+, default -1 */
    int64_t EndOffset; /* v12+, default -1 */
};

struct FetchLeaderIdAndEpoch {
    int32_t LeaderId;    /* v12+, default -1 */
    int32_t LeaderEpoch; /* v12+, default -1 */
};

struct FetchSnapshotId {
    int64_t EndOffset; /* v0+, default -1 */
    int32_t Epoch;     /* v0+, default -1 */
};

struct AbortedTransaction {
    int64_t ProducerId;  /* v4+ */
    int64_t FirstOffset; /* v4+ */
};

/* Schema name PartitionData, prefixed: many messages use that name. */
struct FetchPartitionData {
    int32_t PartitionIndex;                                     /* v0+ */
    int16_t ErrorCode;                                          /* v0+ */
    int64_t HighWatermark;                                      /* v0+ */
    int64_t LastStableOffset;                                   /* v4+, default -1 */
    int64_t LogStartOffset;                                     /* v5+, default -1 */
    struct FetchEpochEndOffset DivergingEpoch;                  /* v12+, tag 0 */
    struct FetchLeaderIdAndEpoch CurrentLeader;                 /* v12+, tag 1 */
    struct FetchSnapshotId SnapshotId;                          /* v12+, tag 2 */
    PROTO_ARRAY(struct AbortedTransaction) AbortedTransactions; /* v4+, nullable v4+ */
    int32_t PreferredReadReplica;                               /* v11+, default -1 */
    struct proto_bytes Records;                                 /* v0+, nullable v0+ */
};

/* Every field of a FetchPartitionData at its schema default (Records empty, not null). */
#define FETCH_PARTITION_DATA_DEFAULTS                                                              \
    {                                                                                              \
        .LastStableOffset = -1, .LogStartOffset = -1, .DivergingEpoch = {-1, -1},                  \
        .CurrentLeader = {-1, -1}, .SnapshotId = {-1, -1}, .PreferredReadReplica = -1              \
    }

struct FetchableTopicResponse {
    char *Topic;                                       /* v0-12 */
    struct proto_uuid TopicId;                         /* v13+ */
    PROTO_ARRAY(struct FetchPartitionData) Partitions; /* v0+ */
};

/* NodeEndpoints (tag 0, v16+) is past the declared versions. */
struct FetchResponse {
    int32_t ThrottleTimeMs;                               /* v1+ */
    int16_t ErrorCode;                                    /* v7+ */
    int32_t SessionId;                                    /* v7+ */
    PROTO_ARRAY(struct FetchableTopicResponse) Responses; /* v0+ */
};

extern const struct proto_struct proto_FetchResponse;

/* ListOffsets (key 2), versions 0-7, flexible from 6. */
struct ListOffsetsPartition {
    int32_t PartitionIndex;     /* v0+ */
    int32_t CurrentLeaderEpoch; /* v4+, default -1 */
    int64_t Timestamp;          /* v0+ */
    int32_t MaxNumOffsets;      /* v0, default 1 */
};

struct ListOffsetsTopic {
    char *Name;                                          /* v0+ */
    PROTO_ARRAY(struct ListOffsetsPartition) Partitions; /* v0+ */
};

struct ListOffsetsRequest {
    int32_t ReplicaId;                           /* v0+ */
    int8_t IsolationLevel;                       /* v2+ */
    PROTO_ARRAY(struct ListOffsetsTopic) Topics; /* v0+ */
};

extern const struct proto_struct proto_ListOffsetsRequest;

struct ListOffsetsPartitionResponse {
    int32_t PartitionIndex;               /* v0+ */
    int16_t ErrorCode;                    /* v0+ */
    PROTO_ARRAY(int64_t) OldStyleOffsets; /* v0 */
    int64_t Timestamp;                    /* v1+, default -1 */
    int64_t Offset;                       /* v1+, default -1 */
    int32_t LeaderEpoch;                  /* v4+, default -1 */
};

struct ListOffsetsTopicResponse {
    char *Name;                                                  /* v0+ */
    PROTO_ARRAY(struct ListOffsetsPartitionResponse) Partitions; /* v0+ */
};

struct ListOffsetsResponse {
    int32_t ThrottleTimeMs;                              /* v2+ */
    PROTO_ARRAY(struct ListOffsetsTopicResponse) Topics; /* v0+ */
};

extern const struct proto_struct proto_ListOffsetsResponse;

/* Metadata (key 3), versions 0-12, flexible from 9. */
struct MetadataRequestTopic {
    struct proto_uuid TopicId; /* v10+ */
    char *Name;                /* v0+, nullable v10+ */
};

struct MetadataRequest {
    PROTO_ARRAY(struct MetadataRequestTopic) Topics; /* v0+, nullable v1+ */
    bool AllowAutoTopicCreation;                     /* v4+, default true */
    bool IncludeClusterAuthorizedOperations;         /* v8-10 */
    bool IncludeTopicAuthorizedOperations;           /* v8+ */
};

extern const struct proto_struct proto_MetadataRequest;

struct MetadataResponseBroker {
    int32_t NodeId; /* v0+ */
    char *Host;     /* v0+ */
    int32_t Port;   /* v0+ */
    char *Rack;     /* v1+, nullable v1+ */
};

struct MetadataResponsePartition {
    int16_t ErrorCode;                    /* v0+ */
    int32_t PartitionIndex;               /* v0+ */
    int32_t LeaderId;                     /* v0+ */
    int32_t LeaderEpoch;                  /* v7+, default -1 */
    PROTO_ARRAY(int32_t) ReplicaNodes;    /* v0+ */
    PROTO_ARRAY(int32_t) IsrNodes;        /* v0+ */
    PROTO_ARRAY(int32_t) OfflineReplicas; /* v5+ */
};

struct MetadataResponseTopic {
    int16_t ErrorCode;                                        /* v0+ */
    char *Name;                                               /* v0+, nullable v12+ */
    struct proto_uuid TopicId;                                /* v10+ */
    bool IsInternal;                                          /* v1+ */
    PROTO_ARRAY(struct MetadataResponsePartition) Partitions; /* v0+ */
    int32_t TopicAuthorizedOperations;                        /* v8+, default INT32_MIN */
};

struct MetadataResponse {
    int32_t ThrottleTimeMs;                             /* v3+ */
    PROTO_ARRAY(struct MetadataResponseBroker) Brokers; /* v0+ */
    char *ClusterId;                                    /* v2+, nullable v2+ */
    int32_t ControllerId;                               /* v1+, default -1 */
    PROTO_ARRAY(struct MetadataResponseTopic) Topics;   /* v0+ */
    int32_t ClusterAuthorizedOperations;                /* v8-10, default INT32_MIN */
};

extern const struct proto_struct proto_MetadataResponse;

/* ApiVersions (key 18), versions 0-3, flexible from 3. */
struct ApiVersionsRequest {
    char *ClientSoftwareName;    /* v3+ */
    char *ClientSoftwareVersion; /* v3+ */
};

extern const struct proto_struct proto_ApiVersionsRequest;

struct ApiVersion {
    int16_t ApiKey;     /* v0+ */
    int16_t MinVersion; /* v0+ */
    int16_t MaxVersion; /* v0+ */
};

struct SupportedFeatureKey {
    char *Name;         /* v3+ */
    int16_t MinVersion; /* v3+ */
    int16_t MaxVersion; /* v3+ */
};

struct FinalizedFeatureKey {
    char *Name;              /* v3+ */
    int16_t MaxVersionLevel; /* v3+ */
    int16_t MinVersionLevel; /* v3+ */
};

struct ApiVersionsResponse {
    int16_t ErrorCode;                                         /* v0+ */
    PROTO_ARRAY(struct ApiVersion) ApiKeys;                    /* v0+ */
    int32_t ThrottleTimeMs;                                    /* v1+ */
    PROTO_ARRAY(struct SupportedFeatureKey) SupportedFeatures; /* v3+, tag 0 */
    int64_t FinalizedFeaturesEpoch;                            /* v3+, tag 1, default -1 */
    PROTO_ARRAY(struct FinalizedFeatureKey) FinalizedFeatures; /* v3+, tag 2 */
    bool ZkMigrationReady;                                     /* v3+, tag 3 */
};

extern const struct proto_struct proto_ApiVersionsResponse;

/* CreateTopics (key 19), versions 0-7, flexible from 5. */
struct CreatableReplicaAssignment {
    int32_t PartitionIndex;         /* v0+ */
    PROTO_ARRAY(int32_t) BrokerIds; /* v0+ */
};

struct CreatableTopicConfig {
    char *Name;  /* v0+ */
    char *Value; /* v0+, nullable v0+ */
};

struct CreatableTopic {
    char *Name;                                                 /* v0+ */
    int32_t NumPartitions;                                      /* v0+ */
    int16_t ReplicationFactor;                                  /* v0+ */
    PROTO_ARRAY(struct CreatableReplicaAssignment) Assignments; /* v0+ */
    PROTO_ARRAY(struct CreatableTopicConfig) Configs;           /* v0+ */
};

struct CreateTopicsRequest {
    PROTO_ARRAY(struct CreatableTopic) Topics; /* v0+ */
    int32_t timeoutMs;                         /* v0+, default 60000 */
    bool validateOnly;                         /* v1+ */
};

extern const struct proto_struct proto_CreateTopicsRequest;

struct CreatableTopicConfigs {
    char *Name;          /* v5+ */
    char *Value;         /* v5+, nullable v5+ */
    bool ReadOnly;       /* v5+ */
    int8_t ConfigSource; /* v5+, default -1 */
    bool IsSensitive;    /* v5+ */
};

struct CreatableTopicResult {
    char *Name;                                        /* v0+ */
    struct proto_uuid TopicId;                         /* v7+ */
    int16_t ErrorCode;                                 /* v0+ */
    char *ErrorMessage;                                /* v1+, nullable v0+ */
    int16_t TopicConfigErrorCode;                      /* v5+, tag 0 */
    int32_t NumPartitions;                             /* v5+, default -1 */
    int16_t ReplicationFactor;                         /* v5+, default -1 */
    PROTO_ARRAY(struct CreatableTopicConfigs) Configs; /* v5+, nullable v5+ */
};

struct CreateTopicsResponse {
    int32_t ThrottleTimeMs;                          /* v2+ */
    PROTO_ARRAY(struct CreatableTopicResult) Topics; /* v0+ */
};

extern const struct proto_struct proto_CreateTopicsResponse;

/* DeleteTopics (key 20), versions 0-6, flexible from 4. */
struct DeleteTopicState {
    char *Name;                /* v6+, nullable v6+ */
    struct proto_uuid TopicId; /* v6+ */
};

struct DeleteTopicsRequest {
    PROTO_ARRAY(struct DeleteTopicState) Topics; /* v6+ */
    PROTO_ARRAY(char *) TopicNames;              /* v0-5 */
    int32_t TimeoutMs;                           /* v0+ */
};

extern const struct proto_struct proto_DeleteTopicsRequest;

struct DeletableTopicResult {
    char *Name;                /* v0+, nullable v6+ */
    struct proto_uuid TopicId; /* v6+ */
    int16_t ErrorCode;         /* v0+ */
    char *ErrorMessage;        /* v5+, nullable v5+ */
};

struct DeleteTopicsResponse {
    int32_t ThrottleTimeMs;                             /* v1+ */
    PROTO_ARRAY(struct DeletableTopicResult) Responses; /* v0+ */
};

extern const struct proto_struct proto_DeleteTopicsResponse;

/* DeleteRecords (key 21), versions 0-2, flexible from 2. */
struct DeleteRecordsPartition {
    int32_t PartitionIndex; /* v0+ */
    int64_t Offset;         /* v0+ */
};

struct DeleteRecordsTopic {
    char *Name;                                            /* v0+ */
    PROTO_ARRAY(struct DeleteRecordsPartition) Partitions; /* v0+ */
};

struct DeleteRecordsRequest {
    PROTO_ARRAY(struct DeleteRecordsTopic) Topics; /* v0+ */
    int32_t TimeoutMs;                             /* v0+ */
};

extern const struct proto_struct proto_DeleteRecordsRequest;

struct DeleteRecordsPartitionResult {
    int32_t PartitionIndex; /* v0+ */
    int64_t LowWatermark;   /* v0+ */
    int16_t ErrorCode;      /* v0+ */
};

struct DeleteRecordsTopicResult {
    char *Name;                                                  /* v0+ */
    PROTO_ARRAY(struct DeleteRecordsPartitionResult) Partitions; /* v0+ */
};

struct DeleteRecordsResponse {
    int32_t ThrottleTimeMs;                              /* v0+ */
    PROTO_ARRAY(struct DeleteRecordsTopicResult) Topics; /* v0+ */
};

extern const struct proto_struct proto_DeleteRecordsResponse;

/* InitProducerId (key 22), versions 0-4, flexible from 2. */
struct InitProducerIdRequest {
    char *TransactionalId;        /* v0+, nullable v0+ */
    int32_t TransactionTimeoutMs; /* v0+ */
    int64_t ProducerId;           /* v3+, default -1 */
    int16_t ProducerEpoch;        /* v3+, default -1 */
};

extern const struct proto_struct proto_InitProducerIdRequest;

struct InitProducerIdResponse {
    int32_t ThrottleTimeMs; /* v0+ */
    int16_t ErrorCode;      /* v0+ */
    int64_t ProducerId;     /* v0+, default -1 */
    int16_t ProducerEpoch;  /* v0+ */
};

extern const struct proto_struct proto_InitProducerIdResponse;

/* DescribeConfigs (key 32), versions 0-4, flexible from 4. */
struct DescribeConfigsResource {
    int8_t ResourceType;                   /* v0+ */
    char *ResourceName;                    /* v0+ */
    PROTO_ARRAY(char *) ConfigurationKeys; /* v0+, nullable v0+ */
};

struct DescribeConfigsRequest {
    PROTO_ARRAY(struct DescribeConfigsResource) Resources; /* v0+ */
    bool IncludeSynonyms;                                  /* v1+ */
    bool IncludeDocumentation;                             /* v3+ */
};

extern const struct proto_struct proto_DescribeConfigsRequest;

struct DescribeConfigsSynonym {
    char *Name;    /* v1+ */
    char *Value;   /* v1+, nullable v0+ */
    int8_t Source; /* v1+ */
};

struct DescribeConfigsResourceResult {
    char *Name;                                          /* v0+ */
    char *Value;                                         /* v0+, nullable v0+ */
    bool ReadOnly;                                       /* v0+ */
    bool IsDefault;                                      /* v0 */
    int8_t ConfigSource;                                 /* v1+, default -1 */
    bool IsSensitive;                                    /* v0+ */
    PROTO_ARRAY(struct DescribeConfigsSynonym) Synonyms; /* v1+ */
    int8_t ConfigType;                                   /* v3+ */
    char *Documentation;                                 /* v3+, nullable v0+ */
};

struct DescribeConfigsResult {
    int16_t ErrorCode;                                         /* v0+ */
    char *ErrorMessage;                                        /* v0+, nullable v0+ */
    int8_t ResourceType;                                       /* v0+ */
    char *ResourceName;                                        /* v0+ */
    PROTO_ARRAY(struct DescribeConfigsResourceResult) Configs; /* v0+ */
};

struct DescribeConfigsResponse {
    int32_t ThrottleTimeMs;                            /* v0+ */
    PROTO_ARRAY(struct DescribeConfigsResult) Results; /* v0+ */
};

extern const struct proto_struct proto_DescribeConfigsResponse;

/* AlterConfigs (key 33), versions 0-2, flexible from 2. */
struct AlterableConfig {
    char *Name;  /* v0+ */
    char *Value; /* v0+, nullable v0+ */
};

struct AlterConfigsResource {
    int8_t ResourceType;                         /* v0+ */
    char *ResourceName;                          /* v0+ */
    PROTO_ARRAY(struct AlterableConfig) Configs; /* v0+ */
};

struct AlterConfigsRequest {
    PROTO_ARRAY(struct AlterConfigsResource) Resources; /* v0+ */
    bool ValidateOnly;                                  /* v0+ */
};

extern const struct proto_struct proto_AlterConfigsRequest;

struct AlterConfigsResourceResponse {
    int16_t ErrorCode;   /* v0+ */
    char *ErrorMessage;  /* v0+, nullable v0+ */
    int8_t ResourceType; /* v0+ */
    char *ResourceName;  /* v0+ */
};

struct AlterConfigsResponse {
    int32_t ThrottleTimeMs;                                     /* v0+ */
    PROTO_ARRAY(struct AlterConfigsResourceResponse) Responses; /* v0+ */
};

extern const struct proto_struct proto_AlterConfigsResponse;

/* CreatePartitions (key 37), versions 0-3, flexible from 2. */
struct CreatePartitionsAssignment {
    PROTO_ARRAY(int32_t) BrokerIds; /* v0+ */
};

struct CreatePartitionsTopic {
    char *Name;                                                 /* v0+ */
    int32_t Count;                                              /* v0+ */
    PROTO_ARRAY(struct CreatePartitionsAssignment) Assignments; /* v0+, nullable v0+ */
};

struct CreatePartitionsRequest {
    PROTO_ARRAY(struct CreatePartitionsTopic) Topics; /* v0+ */
    int32_t TimeoutMs;                                /* v0+ */
    bool ValidateOnly;                                /* v0+ */
};

extern const struct proto_struct proto_CreatePartitionsRequest;

struct CreatePartitionsTopicResult {
    char *Name;         /* v0+ */
    int16_t ErrorCode;  /* v0+ */
    char *ErrorMessage; /* v0+, nullable v0+ */
};

struct CreatePartitionsResponse {
    int32_t ThrottleTimeMs;                                  /* v0+ */
    PROTO_ARRAY(struct CreatePartitionsTopicResult) Results; /* v0+ */
};

extern const struct proto_struct proto_CreatePartitionsResponse;

/* IncrementalAlterConfigs (key 44), versions 0-1, flexible from 1. */
struct IncrementalAlterableConfig {
    char *Name;             /* v0+ */
    int8_t ConfigOperation; /* v0+ */
    char *Value;            /* v0+, nullable v0+ */
};

struct IncrementalAlterConfigsResource {
    int8_t ResourceType;                                    /* v0+ */
    char *ResourceName;                                     /* v0+ */
    PROTO_ARRAY(struct IncrementalAlterableConfig) Configs; /* v0+ */
};

struct IncrementalAlterConfigsRequest {
    PROTO_ARRAY(struct IncrementalAlterConfigsResource) Resources; /* v0+ */
    bool ValidateOnly;                                             /* v0+ */
};

extern const struct proto_struct proto_IncrementalAlterConfigsRequest;

struct IncrementalAlterConfigsResourceResponse {
    int16_t ErrorCode;   /* v0+ */
    char *ErrorMessage;  /* v0+, nullable v0+ */
    int8_t ResourceType; /* v0+ */
    char *ResourceName;  /* v0+ */
};

struct IncrementalAlterConfigsResponse {
    int32_t ThrottleTimeMs;                                                /* v0+ */
    PROTO_ARRAY(struct IncrementalAlterConfigsResourceResponse) Responses; /* v0+ */
};

extern const struct proto_struct proto_IncrementalAlterConfigsResponse;

/* DescribeCluster (key 60), versions 0-1, flexible from 0. */
struct DescribeClusterRequest {
    bool IncludeClusterAuthorizedOperations; /* v0+ */
    int8_t EndpointType;                     /* v1+, default 1 */
};

extern const struct proto_struct proto_DescribeClusterRequest;

struct DescribeClusterBroker {
    int32_t BrokerId; /* v0+ */
    char *Host;       /* v0+ */
    int32_t Port;     /* v0+ */
    char *Rack;       /* v0+, nullable v0+ */
};

struct DescribeClusterResponse {
    int32_t ThrottleTimeMs;                            /* v0+ */
    int16_t ErrorCode;                                 /* v0+ */
    char *ErrorMessage;                                /* v0+, nullable v0+ */
    int8_t EndpointType;                               /* v1+, default 1 */
    char *ClusterId;                                   /* v0+ */
    int32_t ControllerId;                              /* v0+, default -1 */
    PROTO_ARRAY(struct DescribeClusterBroker) Brokers; /* v0+ */
    int32_t ClusterAuthorizedOperations;               /* v0+, default INT32_MIN */
};

extern const struct proto_struct proto_DescribeClusterResponse;

/* DescribeProducers (key 61), version 0, flexible from 0. The schema's TopicRequest,
 * TopicResponse and PartitionResponse are prefixed: other messages use those names. */
struct DescribeProducersTopicRequest {
    char *Name;                            /* v0+ */
    PROTO_ARRAY(int32_t) PartitionIndexes; /* v0+ */
};

struct DescribeProducersRequest {
    PROTO_ARRAY(struct DescribeProducersTopicRequest) Topics; /* v0+ */
};

extern const struct proto_struct proto_DescribeProducersRequest;

struct ProducerState {
    int64_t ProducerId;            /* v0+ */
    int32_t ProducerEpoch;         /* v0+ */
    int32_t LastSequence;          /* v0+, default -1 */
    int64_t LastTimestamp;         /* v0+, default -1 */
    int32_t CoordinatorEpoch;      /* v0+ */
    int64_t CurrentTxnStartOffset; /* v0+, default -1 */
};

struct DescribeProducersPartitionResponse {
    int32_t PartitionIndex;                            /* v0+ */
    int16_t ErrorCode;                                 /* v0+ */
    char *ErrorMessage;                                /* v0+, nullable v0+ */
    PROTO_ARRAY(struct ProducerState) ActiveProducers; /* v0+ */
};

struct DescribeProducersTopicResponse {
    char *Name;                                                        /* v0+ */
    PROTO_ARRAY(struct DescribeProducersPartitionResponse) Partitions; /* v0+ */
};

struct DescribeProducersResponse {
    int32_t ThrottleTimeMs;                                    /* v0+ */
    PROTO_ARRAY(struct DescribeProducersTopicResponse) Topics; /* v0+ */
};

extern const struct proto_struct proto_DescribeProducersResponse;

/* BrokerRegistration (key 62), version 0, flexible from 0. A broker-to-controller API. The
 * schema's Listener and Feature are prefixed: other messages use those names. */
struct BrokerRegistrationListener {
    char *Name;               /* v0+ */
    char *Host;               /* v0+ */
    uint16_t Port;            /* v0+ */
    int16_t SecurityProtocol; /* v0+ */
};

struct BrokerRegistrationFeature {
    char *Name;                  /* v0+ */
    int16_t MinSupportedVersion; /* v0+ */
    int16_t MaxSupportedVersion; /* v0+ */
};

struct BrokerRegistrationRequest {
    int32_t BrokerId;                                         /* v0+ */
    char *ClusterId;                                          /* v0+ */
    struct proto_uuid IncarnationId;                          /* v0+ */
    PROTO_ARRAY(struct BrokerRegistrationListener) Listeners; /* v0+ */
    PROTO_ARRAY(struct BrokerRegistrationFeature) Features;   /* v0+ */
    char *Rack;                                               /* v0+, nullable v0+ */
};

extern const struct proto_struct proto_BrokerRegistrationRequest;

struct BrokerRegistrationResponse {
    int32_t ThrottleTimeMs; /* v0+ */
    int16_t ErrorCode;      /* v0+ */
    int64_t BrokerEpoch;    /* v0+, default -1 */
};

extern const struct proto_struct proto_BrokerRegistrationResponse;

/* AllocateProducerIds (key 67), version 0, flexible from 0. A broker-to-controller API. */
struct AllocateProducerIdsRequest {
    int32_t BrokerId;    /* v0+ */
    int64_t BrokerEpoch; /* v0+, default -1 */
};

extern const struct proto_struct proto_AllocateProducerIdsRequest;

struct AllocateProducerIdsResponse {
    int32_t ThrottleTimeMs;  /* v0+ */
    int16_t ErrorCode;       /* v0+ */
    int64_t ProducerIdStart; /* v0+ */
    int32_t ProducerIdLen;   /* v0+ */
};

extern const struct proto_struct proto_AllocateProducerIdsResponse;

#endif
