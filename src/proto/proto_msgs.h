/* SPDX-License-Identifier: Apache-2.0 */
/* proto_msgs: the C form of every request and response the broker declares. Struct and field
 * names are those of Kafka's JSON message schemas (clients/src/main/resources/common/message),
 * so code greps straight against the protocol; nested structs keep the schema's names, with the
 * message name prefixed where two messages use one name for different layouts
 * (IncrementalAlterConfigs*, Fetch*, DescribeProducers*, DescribeTransactions*,
 * ListTransactions*, ElectLeaders*, DescribeQuorum*, AlterPartition*,
 * ConsumerProtocolTopicPartition). The comment on each field gives its
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

/* SaslHandshake (key 17), versions 0-1, never flexible. v0: the SASL tokens that follow
 * travel as raw size-prefixed frames; v1: inside SaslAuthenticate (KIP-152). */
struct SaslHandshakeRequest {
    char *Mechanism; /* v0+ */
};

extern const struct proto_struct proto_SaslHandshakeRequest;

struct SaslHandshakeResponse {
    int16_t ErrorCode;              /* v0+ */
    PROTO_ARRAY(char *) Mechanisms; /* v0+ */
};

extern const struct proto_struct proto_SaslHandshakeResponse;

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

/* SaslAuthenticate (key 36), versions 0-2, flexible from 2. */
struct SaslAuthenticateRequest {
    struct proto_bytes AuthBytes; /* v0+ */
};

extern const struct proto_struct proto_SaslAuthenticateRequest;

struct SaslAuthenticateResponse {
    int16_t ErrorCode;            /* v0+ */
    char *ErrorMessage;           /* v0+, nullable v0+ */
    struct proto_bytes AuthBytes; /* v0+ */
    int64_t SessionLifetimeMs;    /* v1+ */
};

extern const struct proto_struct proto_SaslAuthenticateResponse;

/* DescribeClientQuotas (key 48), versions 0-1, flexible from 1 (KIP-546). MatchType 0: the
 * entity named Match, 1: the default entity, 2: any entity of the type. */
struct ComponentData {
    char *EntityType; /* v0+ */
    int8_t MatchType; /* v0+ */
    char *Match;      /* v0+, nullable v0+ */
};

struct DescribeClientQuotasRequest {
    PROTO_ARRAY(struct ComponentData) Components; /* v0+ */
    bool Strict;                                  /* v0+ */
};

extern const struct proto_struct proto_DescribeClientQuotasRequest;

struct EntityData {
    char *EntityType; /* v0+ */
    char *EntityName; /* v0+, nullable v0+ (the default entity) */
};

struct ValueData {
    char *Key;    /* v0+ */
    double Value; /* v0+ */
};

struct EntryData {
    PROTO_ARRAY(struct EntityData) Entity; /* v0+ */
    PROTO_ARRAY(struct ValueData) Values;  /* v0+ */
};

struct DescribeClientQuotasResponse {
    int32_t ThrottleTimeMs;                /* v0+ */
    int16_t ErrorCode;                     /* v0+ */
    char *ErrorMessage;                    /* v0+, nullable v0+ */
    PROTO_ARRAY(struct EntryData) Entries; /* v0+, nullable v0+ */
};

extern const struct proto_struct proto_DescribeClientQuotasResponse;

/* AlterClientQuotas (key 49), versions 0-1, flexible from 1 (KIP-546). */
struct OpData {
    char *Key;    /* v0+ */
    double Value; /* v0+ */
    bool Remove;  /* v0+ */
};

struct AlterEntryData {
    PROTO_ARRAY(struct EntityData) Entity; /* v0+ */
    PROTO_ARRAY(struct OpData) Ops;        /* v0+ */
};

struct AlterClientQuotasRequest {
    PROTO_ARRAY(struct AlterEntryData) Entries; /* v0+ */
    bool ValidateOnly;                          /* v0+ */
};

extern const struct proto_struct proto_AlterClientQuotasRequest;

struct AlterEntryResult {
    int16_t ErrorCode;                     /* v0+ */
    char *ErrorMessage;                    /* v0+, nullable v0+ */
    PROTO_ARRAY(struct EntityData) Entity; /* v0+ */
};

struct AlterClientQuotasResponse {
    int32_t ThrottleTimeMs;                       /* v0+ */
    PROTO_ARRAY(struct AlterEntryResult) Entries; /* v0+ */
};

extern const struct proto_struct proto_AlterClientQuotasResponse;

/* DescribeUserScramCredentials (key 50), version 0, flexible from 0 (KIP-554). Users null:
 * every user. */
struct UserName {
    char *Name; /* v0+ */
};

struct DescribeUserScramCredentialsRequest {
    PROTO_ARRAY(struct UserName) Users; /* v0+, nullable v0+ */
};

extern const struct proto_struct proto_DescribeUserScramCredentialsRequest;

struct CredentialInfo {
    int8_t Mechanism;   /* v0+ */
    int32_t Iterations; /* v0+ */
};

struct DescribeUserScramCredentialsResult {
    char *User;                                         /* v0+ */
    int16_t ErrorCode;                                  /* v0+ */
    char *ErrorMessage;                                 /* v0+, nullable v0+ */
    PROTO_ARRAY(struct CredentialInfo) CredentialInfos; /* v0+ */
};

struct DescribeUserScramCredentialsResponse {
    int32_t ThrottleTimeMs;                                         /* v0+ */
    int16_t ErrorCode;                                              /* v0+ */
    char *ErrorMessage;                                             /* v0+, nullable v0+ */
    PROTO_ARRAY(struct DescribeUserScramCredentialsResult) Results; /* v0+ */
};

extern const struct proto_struct proto_DescribeUserScramCredentialsResponse;

/* AlterUserScramCredentials (key 51), version 0, flexible from 0 (KIP-554). The client sends
 * the salted password (Hi(password, salt, i)), never the password. */
struct ScramCredentialDeletion {
    char *Name;       /* v0+ */
    int8_t Mechanism; /* v0+ */
};

struct ScramCredentialUpsertion {
    char *Name;                        /* v0+ */
    int8_t Mechanism;                  /* v0+ */
    int32_t Iterations;                /* v0+ */
    struct proto_bytes Salt;           /* v0+ */
    struct proto_bytes SaltedPassword; /* v0+ */
};

struct AlterUserScramCredentialsRequest {
    PROTO_ARRAY(struct ScramCredentialDeletion) Deletions;   /* v0+ */
    PROTO_ARRAY(struct ScramCredentialUpsertion) Upsertions; /* v0+ */
};

extern const struct proto_struct proto_AlterUserScramCredentialsRequest;

struct AlterUserScramCredentialsResult {
    char *User;         /* v0+ */
    int16_t ErrorCode;  /* v0+ */
    char *ErrorMessage; /* v0+, nullable v0+ */
};

struct AlterUserScramCredentialsResponse {
    int32_t ThrottleTimeMs;                                      /* v0+ */
    PROTO_ARRAY(struct AlterUserScramCredentialsResult) Results; /* v0+ */
};

extern const struct proto_struct proto_AlterUserScramCredentialsResponse;

/* DescribeAcls (29), CreateAcls (30), DeleteAcls (31): versions 0-3, flexible from 2. The
 * pattern type fields are v1+ (absent: 3, LITERAL). Enum fields carry Kafka's codes (proto.h's
 * PROTO_RESOURCE_* and PROTO_ACL_OP_*; meta.h's META_ACL_* for ANY, MATCH, patterns and
 * permissions). */
struct DescribeAclsRequest {
    int8_t ResourceTypeFilter; /* v0+ */
    char *ResourceNameFilter;  /* v0+, nullable v0+ */
    int8_t PatternTypeFilter;  /* v1+, default 3 */
    char *PrincipalFilter;     /* v0+, nullable v0+ */
    char *HostFilter;          /* v0+, nullable v0+ */
    int8_t Operation;          /* v0+ */
    int8_t PermissionType;     /* v0+ */
};

extern const struct proto_struct proto_DescribeAclsRequest;

struct AclDescription {
    char *Principal;       /* v0+ */
    char *Host;            /* v0+ */
    int8_t Operation;      /* v0+ */
    int8_t PermissionType; /* v0+ */
};

struct DescribeAclsResource {
    int8_t ResourceType;                     /* v0+ */
    char *ResourceName;                      /* v0+ */
    int8_t PatternType;                      /* v1+, default 3 */
    PROTO_ARRAY(struct AclDescription) Acls; /* v0+ */
};

struct DescribeAclsResponse {
    int32_t ThrottleTimeMs;                             /* v0+ */
    int16_t ErrorCode;                                  /* v0+ */
    char *ErrorMessage;                                 /* v0+, nullable v0+ */
    PROTO_ARRAY(struct DescribeAclsResource) Resources; /* v0+ */
};

extern const struct proto_struct proto_DescribeAclsResponse;

struct AclCreation {
    int8_t ResourceType;        /* v0+ */
    char *ResourceName;         /* v0+ */
    int8_t ResourcePatternType; /* v1+, default 3 */
    char *Principal;            /* v0+ */
    char *Host;                 /* v0+ */
    int8_t Operation;           /* v0+ */
    int8_t PermissionType;      /* v0+ */
};

struct CreateAclsRequest {
    PROTO_ARRAY(struct AclCreation) Creations; /* v0+ */
};

extern const struct proto_struct proto_CreateAclsRequest;

struct AclCreationResult {
    int16_t ErrorCode;  /* v0+ */
    char *ErrorMessage; /* v0+, nullable v0+ */
};

struct CreateAclsResponse {
    int32_t ThrottleTimeMs;                        /* v0+ */
    PROTO_ARRAY(struct AclCreationResult) Results; /* v0+ */
};

extern const struct proto_struct proto_CreateAclsResponse;

struct DeleteAclsFilter {
    int8_t ResourceTypeFilter; /* v0+ */
    char *ResourceNameFilter;  /* v0+, nullable v0+ */
    int8_t PatternTypeFilter;  /* v1+, default 3 */
    char *PrincipalFilter;     /* v0+, nullable v0+ */
    char *HostFilter;          /* v0+, nullable v0+ */
    int8_t Operation;          /* v0+ */
    int8_t PermissionType;     /* v0+ */
};

struct DeleteAclsRequest {
    PROTO_ARRAY(struct DeleteAclsFilter) Filters; /* v0+ */
};

extern const struct proto_struct proto_DeleteAclsRequest;

struct DeleteAclsMatchingAcl {
    int16_t ErrorCode;     /* v0+ */
    char *ErrorMessage;    /* v0+, nullable v0+ */
    int8_t ResourceType;   /* v0+ */
    char *ResourceName;    /* v0+ */
    int8_t PatternType;    /* v1+, default 3 */
    char *Principal;       /* v0+ */
    char *Host;            /* v0+ */
    int8_t Operation;      /* v0+ */
    int8_t PermissionType; /* v0+ */
};

struct DeleteAclsFilterResult {
    int16_t ErrorCode;                                      /* v0+ */
    char *ErrorMessage;                                     /* v0+, nullable v0+ */
    PROTO_ARRAY(struct DeleteAclsMatchingAcl) MatchingAcls; /* v0+ */
};

struct DeleteAclsResponse {
    int32_t ThrottleTimeMs;                                   /* v0+ */
    PROTO_ARRAY(struct DeleteAclsFilterResult) FilterResults; /* v0+ */
};

extern const struct proto_struct proto_DeleteAclsResponse;

/* DescribeCluster (key 60), versions 0-2, flexible from 0. v2 (Kafka 4.0, KIP-1073) lists
 * fenced brokers too when asked, each with IsFenced. */
struct DescribeClusterRequest {
    bool IncludeClusterAuthorizedOperations; /* v0+ */
    int8_t EndpointType;                     /* v1+, default 1 */
    bool IncludeFencedBrokers;               /* v2+ */
};

extern const struct proto_struct proto_DescribeClusterRequest;

struct DescribeClusterBroker {
    int32_t BrokerId; /* v0+ */
    char *Host;       /* v0+ */
    int32_t Port;     /* v0+ */
    char *Rack;       /* v0+, nullable v0+ */
    bool IsFenced;    /* v2+ */
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

/* BrokerRegistration (key 62), versions 0-3, flexible from 0. A broker-to-controller API. The
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
    bool IsMigratingZkBroker;                                 /* v1+ */
    PROTO_ARRAY(struct proto_uuid) LogDirs;                   /* v2+ */
    int64_t PreviousBrokerEpoch;                              /* v3+, default -1 */
};

extern const struct proto_struct proto_BrokerRegistrationRequest;

struct BrokerRegistrationResponse {
    int32_t ThrottleTimeMs; /* v0+ */
    int16_t ErrorCode;      /* v0+ */
    int64_t BrokerEpoch;    /* v0+, default -1 */
};

extern const struct proto_struct proto_BrokerRegistrationResponse;

/* BrokerHeartbeat (key 63), versions 0-1, flexible from 0. A broker-to-controller API. */
struct BrokerHeartbeatRequest {
    int32_t BrokerId;                              /* v0+ */
    int64_t BrokerEpoch;                           /* v0+, default -1 */
    int64_t CurrentMetadataOffset;                 /* v0+ */
    bool WantFence;                                /* v0+ */
    bool WantShutDown;                             /* v0+ */
    PROTO_ARRAY(struct proto_uuid) OfflineLogDirs; /* v1+, tag 0 */
};

extern const struct proto_struct proto_BrokerHeartbeatRequest;

struct BrokerHeartbeatResponse {
    int32_t ThrottleTimeMs; /* v0+ */
    int16_t ErrorCode;      /* v0+ */
    bool IsCaughtUp;        /* v0+ */
    bool IsFenced;          /* v0+, default true */
    bool ShouldShutDown;    /* v0+ */
};

extern const struct proto_struct proto_BrokerHeartbeatResponse;

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

/* Envelope (key 58), version 0, flexible from 0 (KIP-590): a request a broker forwards to the
 * controller, wrapped with the identity of the client that sent it. A broker-to-controller
 * API. */
struct EnvelopeRequest {
    struct proto_bytes RequestData;       /* v0+: the client's request, header and body */
    struct proto_bytes RequestPrincipal;  /* v0+, nullable v0+: DefaultPrincipalData */
    struct proto_bytes ClientHostAddress; /* v0+: the client's IP address, 4 or 16 bytes */
};

extern const struct proto_struct proto_EnvelopeRequest;

struct EnvelopeResponse {
    struct proto_bytes ResponseData; /* v0+, nullable v0+: the inner response, header and body */
    int16_t ErrorCode;               /* v0+ */
};

extern const struct proto_struct proto_EnvelopeResponse;

/* ---------------------------------------------------------------------------------------- */
/* Replication and partition administration (keys 23, 35, 43, 45, 46, 55, 56). */

/* OffsetForLeaderEpoch (key 23), versions 0-4, flexible from 4. ReplicaId -1 is a consumer,
 * -2 (the default, for v0-2) a debug client; a follower sends its broker id. */
struct OffsetForLeaderPartition {
    int32_t Partition;          /* v0+ */
    int32_t CurrentLeaderEpoch; /* v2+, default -1 */
    int32_t LeaderEpoch;        /* v0+ */
};

struct OffsetForLeaderTopic {
    char *Topic;                                             /* v0+ */
    PROTO_ARRAY(struct OffsetForLeaderPartition) Partitions; /* v0+ */
};

struct OffsetForLeaderEpochRequest {
    int32_t ReplicaId;                               /* v3+, default -2 */
    PROTO_ARRAY(struct OffsetForLeaderTopic) Topics; /* v0+ */
};

extern const struct proto_struct proto_OffsetForLeaderEpochRequest;

/* The response partition (schema name EpochEndOffset; Fetch's DivergingEpoch, which uses the
 * same name for another layout, is FetchEpochEndOffset). */
struct EpochEndOffset {
    int16_t ErrorCode;   /* v0+ */
    int32_t Partition;   /* v0+ */
    int32_t LeaderEpoch; /* v1+, default -1 */
    int64_t EndOffset;   /* v0+, default -1 */
};

struct OffsetForLeaderTopicResult {
    char *Topic;                                   /* v0+ */
    PROTO_ARRAY(struct EpochEndOffset) Partitions; /* v0+ */
};

struct OffsetForLeaderEpochResponse {
    int32_t ThrottleTimeMs;                                /* v2+ */
    PROTO_ARRAY(struct OffsetForLeaderTopicResult) Topics; /* v0+ */
};

extern const struct proto_struct proto_OffsetForLeaderEpochResponse;

/* DescribeLogDirs (key 35), versions 0-4, flexible from 2. Topics null = every partition. */
struct DescribableLogDirTopic {
    char *Topic;                     /* v0+ */
    PROTO_ARRAY(int32_t) Partitions; /* v0+ */
};

struct DescribeLogDirsRequest {
    PROTO_ARRAY(struct DescribableLogDirTopic) Topics; /* v0+, nullable v0+ */
};

extern const struct proto_struct proto_DescribeLogDirsRequest;

struct DescribeLogDirsPartition {
    int32_t PartitionIndex; /* v0+ */
    int64_t PartitionSize;  /* v0+ */
    int64_t OffsetLag;      /* v0+ */
    bool IsFutureKey;       /* v0+ */
};

struct DescribeLogDirsTopic {
    char *Name;                                              /* v0+ */
    PROTO_ARRAY(struct DescribeLogDirsPartition) Partitions; /* v0+ */
};

struct DescribeLogDirsResult {
    int16_t ErrorCode;                               /* v0+ */
    char *LogDir;                                    /* v0+ */
    PROTO_ARRAY(struct DescribeLogDirsTopic) Topics; /* v0+ */
    int64_t TotalBytes;                              /* v4+, default -1 */
    int64_t UsableBytes;                             /* v4+, default -1 */
};

struct DescribeLogDirsResponse {
    int32_t ThrottleTimeMs;                            /* v0+ */
    int16_t ErrorCode;                                 /* v3+ */
    PROTO_ARRAY(struct DescribeLogDirsResult) Results; /* v0+ */
};

extern const struct proto_struct proto_DescribeLogDirsResponse;

/* ElectLeaders (key 43), versions 0-2, flexible from 2. ElectionType 0 preferred, 1 unclean.
 * The schema's TopicPartitions and PartitionResult are prefixed: other messages use those
 * names. */
struct ElectLeadersTopicPartitions {
    char *Topic;                     /* v0+ */
    PROTO_ARRAY(int32_t) Partitions; /* v0+ */
};

struct ElectLeadersRequest {
    int8_t ElectionType;                                             /* v1+ */
    PROTO_ARRAY(struct ElectLeadersTopicPartitions) TopicPartitions; /* v0+, nullable v0+ */
    int32_t TimeoutMs;                                               /* v0+, default 60000 */
};

extern const struct proto_struct proto_ElectLeadersRequest;

struct ElectLeadersPartitionResult {
    int32_t PartitionId; /* v0+ */
    int16_t ErrorCode;   /* v0+ */
    char *ErrorMessage;  /* v0+, nullable v0+ */
};

struct ReplicaElectionResult {
    char *Topic;                                                     /* v0+ */
    PROTO_ARRAY(struct ElectLeadersPartitionResult) PartitionResult; /* v0+ */
};

struct ElectLeadersResponse {
    int32_t ThrottleTimeMs;                                           /* v0+ */
    int16_t ErrorCode;                                                /* v1+ */
    PROTO_ARRAY(struct ReplicaElectionResult) ReplicaElectionResults; /* v0+ */
};

extern const struct proto_struct proto_ElectLeadersResponse;

/* AlterPartitionReassignments (key 45), version 0, flexible from 0. Replicas null cancels the
 * partition's reassignment. */
struct ReassignablePartition {
    int32_t PartitionIndex;        /* v0+ */
    PROTO_ARRAY(int32_t) Replicas; /* v0+, nullable v0+, default null */
};

struct ReassignableTopic {
    char *Name;                                           /* v0+ */
    PROTO_ARRAY(struct ReassignablePartition) Partitions; /* v0+ */
};

struct AlterPartitionReassignmentsRequest {
    int32_t TimeoutMs;                            /* v0+, default 60000 */
    PROTO_ARRAY(struct ReassignableTopic) Topics; /* v0+ */
};

extern const struct proto_struct proto_AlterPartitionReassignmentsRequest;

struct ReassignablePartitionResponse {
    int32_t PartitionIndex; /* v0+ */
    int16_t ErrorCode;      /* v0+ */
    char *ErrorMessage;     /* v0+, nullable v0+ */
};

struct ReassignableTopicResponse {
    char *Name;                                                   /* v0+ */
    PROTO_ARRAY(struct ReassignablePartitionResponse) Partitions; /* v0+ */
};

struct AlterPartitionReassignmentsResponse {
    int32_t ThrottleTimeMs;                                  /* v0+ */
    int16_t ErrorCode;                                       /* v0+ */
    char *ErrorMessage;                                      /* v0+, nullable v0+ */
    PROTO_ARRAY(struct ReassignableTopicResponse) Responses; /* v0+ */
};

extern const struct proto_struct proto_AlterPartitionReassignmentsResponse;

/* ListPartitionReassignments (key 46), version 0, flexible from 0. Topics null = every
 * reassignment in progress. */
struct ListPartitionReassignmentsTopics {
    char *Name;                            /* v0+ */
    PROTO_ARRAY(int32_t) PartitionIndexes; /* v0+ */
};

struct ListPartitionReassignmentsRequest {
    int32_t TimeoutMs;                                           /* v0+, default 60000 */
    PROTO_ARRAY(struct ListPartitionReassignmentsTopics) Topics; /* v0+, nullable v0+ */
};

extern const struct proto_struct proto_ListPartitionReassignmentsRequest;

struct OngoingPartitionReassignment {
    int32_t PartitionIndex;                /* v0+ */
    PROTO_ARRAY(int32_t) Replicas;         /* v0+ */
    PROTO_ARRAY(int32_t) AddingReplicas;   /* v0+ */
    PROTO_ARRAY(int32_t) RemovingReplicas; /* v0+ */
};

struct OngoingTopicReassignment {
    char *Name;                                                  /* v0+ */
    PROTO_ARRAY(struct OngoingPartitionReassignment) Partitions; /* v0+ */
};

struct ListPartitionReassignmentsResponse {
    int32_t ThrottleTimeMs;                              /* v0+ */
    int16_t ErrorCode;                                   /* v0+ */
    char *ErrorMessage;                                  /* v0+, nullable v0+ */
    PROTO_ARRAY(struct OngoingTopicReassignment) Topics; /* v0+ */
};

extern const struct proto_struct proto_ListPartitionReassignmentsResponse;

/* DescribeQuorum (key 55), versions 0-1, flexible from 0. The schema's TopicData, PartitionData
 * (one layout in the request, another in the response) and ReplicaState are prefixed: other
 * messages use those names. ErrorMessage, Nodes and ReplicaDirectoryId (v2+) are past the
 * declared versions. */
struct DescribeQuorumRequestPartitionData {
    int32_t PartitionIndex; /* v0+ */
};

struct DescribeQuorumRequestTopicData {
    char *TopicName;                                                   /* v0+ */
    PROTO_ARRAY(struct DescribeQuorumRequestPartitionData) Partitions; /* v0+ */
};

struct DescribeQuorumRequest {
    PROTO_ARRAY(struct DescribeQuorumRequestTopicData) Topics; /* v0+ */
};

extern const struct proto_struct proto_DescribeQuorumRequest;

struct DescribeQuorumReplicaState {
    int32_t ReplicaId;             /* v0+ */
    int64_t LogEndOffset;          /* v0+ */
    int64_t LastFetchTimestamp;    /* v1+, default -1 */
    int64_t LastCaughtUpTimestamp; /* v1+, default -1 */
};

struct DescribeQuorumResponsePartitionData {
    int32_t PartitionIndex;                                       /* v0+ */
    int16_t ErrorCode;                                            /* v0+ */
    int32_t LeaderId;                                             /* v0+ */
    int32_t LeaderEpoch;                                          /* v0+ */
    int64_t HighWatermark;                                        /* v0+ */
    PROTO_ARRAY(struct DescribeQuorumReplicaState) CurrentVoters; /* v0+ */
    PROTO_ARRAY(struct DescribeQuorumReplicaState) Observers;     /* v0+ */
};

struct DescribeQuorumResponseTopicData {
    char *TopicName;                                                    /* v0+ */
    PROTO_ARRAY(struct DescribeQuorumResponsePartitionData) Partitions; /* v0+ */
};

struct DescribeQuorumResponse {
    int16_t ErrorCode;                                          /* v0+ */
    PROTO_ARRAY(struct DescribeQuorumResponseTopicData) Topics; /* v0+ */
};

extern const struct proto_struct proto_DescribeQuorumResponse;

/* AlterPartition (key 56), versions 0-3, flexible from 0. A broker-to-controller API: a leader
 * asks for a new ISR. v0-1 name topics, v2+ use topic ids; v3 gives each ISR member with its
 * broker epoch (NewIsrWithEpochs, KIP-903) instead of NewIsr. The schema's TopicData and
 * PartitionData (different layouts in request and response) are prefixed. */
struct BrokerState {
    int32_t BrokerId;    /* v3+ */
    int64_t BrokerEpoch; /* v3+, default -1 */
};

struct AlterPartitionRequestPartitionData {
    int32_t PartitionIndex;                           /* v0+ */
    int32_t LeaderEpoch;                              /* v0+ */
    PROTO_ARRAY(int32_t) NewIsr;                      /* v0-2 */
    PROTO_ARRAY(struct BrokerState) NewIsrWithEpochs; /* v3+ */
    int8_t LeaderRecoveryState;                       /* v1+ */
    int32_t PartitionEpoch;                           /* v0+ */
};

struct AlterPartitionRequestTopicData {
    char *TopicName;                                                   /* v0-1 */
    struct proto_uuid TopicId;                                         /* v2+ */
    PROTO_ARRAY(struct AlterPartitionRequestPartitionData) Partitions; /* v0+ */
};

struct AlterPartitionRequest {
    int32_t BrokerId;                                          /* v0+ */
    int64_t BrokerEpoch;                                       /* v0+, default -1 */
    PROTO_ARRAY(struct AlterPartitionRequestTopicData) Topics; /* v0+ */
};

extern const struct proto_struct proto_AlterPartitionRequest;

struct AlterPartitionResponsePartitionData {
    int32_t PartitionIndex;     /* v0+ */
    int16_t ErrorCode;          /* v0+ */
    int32_t LeaderId;           /* v0+ */
    int32_t LeaderEpoch;        /* v0+ */
    PROTO_ARRAY(int32_t) Isr;   /* v0+ */
    int8_t LeaderRecoveryState; /* v1+ */
    int32_t PartitionEpoch;     /* v0+ */
};

struct AlterPartitionResponseTopicData {
    char *TopicName;                                                    /* v0-1 */
    struct proto_uuid TopicId;                                          /* v2+ */
    PROTO_ARRAY(struct AlterPartitionResponsePartitionData) Partitions; /* v0+ */
};

struct AlterPartitionResponse {
    int32_t ThrottleTimeMs;                                     /* v0+ */
    int16_t ErrorCode;                                          /* v0+ */
    PROTO_ARRAY(struct AlterPartitionResponseTopicData) Topics; /* v0+ */
};

extern const struct proto_struct proto_AlterPartitionResponse;

/* ---------------------------------------------------------------------------------------- */
/* The group coordinator's APIs (keys 8-16, 42, 47). */

/* OffsetCommit (key 8), versions 0-8, flexible from 8. */
struct OffsetCommitRequestPartition {
    int32_t PartitionIndex;       /* v0+ */
    int64_t CommittedOffset;      /* v0+ */
    int32_t CommittedLeaderEpoch; /* v6+, default -1 */
    int64_t CommitTimestamp;      /* v1, default -1 */
    char *CommittedMetadata;      /* v0+, nullable v0+ */
};

struct OffsetCommitRequestTopic {
    char *Name;                                                  /* v0+ */
    PROTO_ARRAY(struct OffsetCommitRequestPartition) Partitions; /* v0+ */
};

struct OffsetCommitRequest {
    char *GroupId;                     /* v0+ */
    int32_t GenerationIdOrMemberEpoch; /* v1+, default -1 (GenerationId before KIP-848) */
    char *MemberId;                    /* v1+ */
    char *GroupInstanceId;             /* v7+, nullable v7+ */
    int64_t RetentionTimeMs;           /* v2-4, default -1 */
    PROTO_ARRAY(struct OffsetCommitRequestTopic) Topics; /* v0+ */
};

extern const struct proto_struct proto_OffsetCommitRequest;

struct OffsetCommitResponsePartition {
    int32_t PartitionIndex; /* v0+ */
    int16_t ErrorCode;      /* v0+ */
};

struct OffsetCommitResponseTopic {
    char *Name;                                                   /* v0+ */
    PROTO_ARRAY(struct OffsetCommitResponsePartition) Partitions; /* v0+ */
};

struct OffsetCommitResponse {
    int32_t ThrottleTimeMs;                               /* v3+ */
    PROTO_ARRAY(struct OffsetCommitResponseTopic) Topics; /* v0+ */
};

extern const struct proto_struct proto_OffsetCommitResponse;

/* OffsetFetch (key 9), versions 0-8, flexible from 6. v8 batches groups (Groups in and out);
 * v0-7 name one group. The schema's v0-7 and v8 nested structs differ by one letter (Topic /
 * Topics, Partition / Partitions), as in Kafka. MemberId and MemberEpoch (v9+) are past the
 * declared versions. */
struct OffsetFetchRequestTopic {
    char *Name;                            /* v0-7 */
    PROTO_ARRAY(int32_t) PartitionIndexes; /* v0-7 */
};

struct OffsetFetchRequestTopics {
    char *Name;                            /* v8+ */
    PROTO_ARRAY(int32_t) PartitionIndexes; /* v8+ */
};

struct OffsetFetchRequestGroup {
    char *GroupId;                                       /* v8+ */
    PROTO_ARRAY(struct OffsetFetchRequestTopics) Topics; /* v8+, nullable v8+ */
};

struct OffsetFetchRequest {
    char *GroupId;                                      /* v0-7 */
    PROTO_ARRAY(struct OffsetFetchRequestTopic) Topics; /* v0-7, nullable v2+ */
    PROTO_ARRAY(struct OffsetFetchRequestGroup) Groups; /* v8+ */
    bool RequireStable;                                 /* v7+ */
};

extern const struct proto_struct proto_OffsetFetchRequest;

struct OffsetFetchResponsePartition {
    int32_t PartitionIndex;       /* v0-7 */
    int64_t CommittedOffset;      /* v0-7 */
    int32_t CommittedLeaderEpoch; /* v5-7, default -1 */
    char *Metadata;               /* v0-7, nullable v0+ */
    int16_t ErrorCode;            /* v0-7 */
};

struct OffsetFetchResponseTopic {
    char *Name;                                                  /* v0-7 */
    PROTO_ARRAY(struct OffsetFetchResponsePartition) Partitions; /* v0-7 */
};

struct OffsetFetchResponsePartitions {
    int32_t PartitionIndex;       /* v8+ */
    int64_t CommittedOffset;      /* v8+ */
    int32_t CommittedLeaderEpoch; /* v8+, default -1 */
    char *Metadata;               /* v8+, nullable v8+ */
    int16_t ErrorCode;            /* v8+ */
};

struct OffsetFetchResponseTopics {
    char *Name;                                                   /* v8+ */
    PROTO_ARRAY(struct OffsetFetchResponsePartitions) Partitions; /* v8+ */
};

struct OffsetFetchResponseGroup {
    char *GroupId;                                        /* v8+ */
    PROTO_ARRAY(struct OffsetFetchResponseTopics) Topics; /* v8+ */
    int16_t ErrorCode;                                    /* v8+ */
};

struct OffsetFetchResponse {
    int32_t ThrottleTimeMs;                              /* v3+ */
    PROTO_ARRAY(struct OffsetFetchResponseTopic) Topics; /* v0-7 */
    int16_t ErrorCode;                                   /* v2-7 */
    PROTO_ARRAY(struct OffsetFetchResponseGroup) Groups; /* v8+ */
};

extern const struct proto_struct proto_OffsetFetchResponse;

/* FindCoordinator (key 10), versions 0-4, flexible from 3. KeyType: 0 group, 1 transaction.
 * v4 batches: CoordinatorKeys in, one Coordinators entry per key out. */
struct FindCoordinatorRequest {
    char *Key;                           /* v0-3 */
    int8_t KeyType;                      /* v1+ */
    PROTO_ARRAY(char *) CoordinatorKeys; /* v4+ */
};

extern const struct proto_struct proto_FindCoordinatorRequest;

struct Coordinator {
    char *Key;          /* v4+ */
    int32_t NodeId;     /* v4+ */
    char *Host;         /* v4+ */
    int32_t Port;       /* v4+ */
    int16_t ErrorCode;  /* v4+ */
    char *ErrorMessage; /* v4+, nullable v4+ */
};

struct FindCoordinatorResponse {
    int32_t ThrottleTimeMs;                       /* v1+ */
    int16_t ErrorCode;                            /* v0-3 */
    char *ErrorMessage;                           /* v1-3, nullable v1+ */
    int32_t NodeId;                               /* v0-3 */
    char *Host;                                   /* v0-3 */
    int32_t Port;                                 /* v0-3 */
    PROTO_ARRAY(struct Coordinator) Coordinators; /* v4+ */
};

extern const struct proto_struct proto_FindCoordinatorResponse;

/* JoinGroup (key 11), versions 0-9, flexible from 6. */
struct JoinGroupRequestProtocol {
    char *Name;                  /* v0+ */
    struct proto_bytes Metadata; /* v0+ */
};

struct JoinGroupRequest {
    char *GroupId;                                          /* v0+ */
    int32_t SessionTimeoutMs;                               /* v0+ */
    int32_t RebalanceTimeoutMs;                             /* v1+, default -1 */
    char *MemberId;                                         /* v0+ */
    char *GroupInstanceId;                                  /* v5+, nullable v5+ */
    char *ProtocolType;                                     /* v0+ */
    PROTO_ARRAY(struct JoinGroupRequestProtocol) Protocols; /* v0+ */
    char *Reason;                                           /* v8+, nullable v8+ */
};

extern const struct proto_struct proto_JoinGroupRequest;

struct JoinGroupResponseMember {
    char *MemberId;              /* v0+ */
    char *GroupInstanceId;       /* v5+, nullable v5+ */
    struct proto_bytes Metadata; /* v0+ */
};

struct JoinGroupResponse {
    int32_t ThrottleTimeMs;                              /* v2+ */
    int16_t ErrorCode;                                   /* v0+ */
    int32_t GenerationId;                                /* v0+, default -1 */
    char *ProtocolType;                                  /* v7+, nullable v7+ */
    char *ProtocolName;                                  /* v0+, nullable v7+ */
    char *Leader;                                        /* v0+ */
    bool SkipAssignment;                                 /* v9+ */
    char *MemberId;                                      /* v0+ */
    PROTO_ARRAY(struct JoinGroupResponseMember) Members; /* v0+ */
};

extern const struct proto_struct proto_JoinGroupResponse;

/* Heartbeat (key 12), versions 0-4, flexible from 4. */
struct HeartbeatRequest {
    char *GroupId;         /* v0+ */
    int32_t GenerationId;  /* v0+ */
    char *MemberId;        /* v0+ */
    char *GroupInstanceId; /* v3+, nullable v3+ */
};

extern const struct proto_struct proto_HeartbeatRequest;

struct HeartbeatResponse {
    int32_t ThrottleTimeMs; /* v1+ */
    int16_t ErrorCode;      /* v0+ */
};

extern const struct proto_struct proto_HeartbeatResponse;

/* LeaveGroup (key 13), versions 0-5, flexible from 4. */
struct MemberIdentity {
    char *MemberId;        /* v3+ */
    char *GroupInstanceId; /* v3+, nullable v3+ */
    char *Reason;          /* v5+, nullable v5+ */
};

struct LeaveGroupRequest {
    char *GroupId;                              /* v0+ */
    char *MemberId;                             /* v0-2 */
    PROTO_ARRAY(struct MemberIdentity) Members; /* v3+ */
};

extern const struct proto_struct proto_LeaveGroupRequest;

struct MemberResponse {
    char *MemberId;        /* v3+ */
    char *GroupInstanceId; /* v3+, nullable v3+ */
    int16_t ErrorCode;     /* v3+ */
};

struct LeaveGroupResponse {
    int32_t ThrottleTimeMs;                     /* v1+ */
    int16_t ErrorCode;                          /* v0+ */
    PROTO_ARRAY(struct MemberResponse) Members; /* v3+ */
};

extern const struct proto_struct proto_LeaveGroupResponse;

/* SyncGroup (key 14), versions 0-5, flexible from 4. */
struct SyncGroupRequestAssignment {
    char *MemberId;                /* v0+ */
    struct proto_bytes Assignment; /* v0+ */
};

struct SyncGroupRequest {
    char *GroupId;                                              /* v0+ */
    int32_t GenerationId;                                       /* v0+ */
    char *MemberId;                                             /* v0+ */
    char *GroupInstanceId;                                      /* v3+, nullable v3+ */
    char *ProtocolType;                                         /* v5+, nullable v5+ */
    char *ProtocolName;                                         /* v5+, nullable v5+ */
    PROTO_ARRAY(struct SyncGroupRequestAssignment) Assignments; /* v0+ */
};

extern const struct proto_struct proto_SyncGroupRequest;

struct SyncGroupResponse {
    int32_t ThrottleTimeMs;        /* v1+ */
    int16_t ErrorCode;             /* v0+ */
    char *ProtocolType;            /* v5+, nullable v5+ */
    char *ProtocolName;            /* v5+, nullable v5+ */
    struct proto_bytes Assignment; /* v0+ */
};

extern const struct proto_struct proto_SyncGroupResponse;

/* DescribeGroups (key 15), versions 0-5, flexible from 5. */
struct DescribeGroupsRequest {
    PROTO_ARRAY(char *) Groups;       /* v0+ */
    bool IncludeAuthorizedOperations; /* v3+ */
};

extern const struct proto_struct proto_DescribeGroupsRequest;

struct DescribedGroupMember {
    char *MemberId;                      /* v0+ */
    char *GroupInstanceId;               /* v4+, nullable v4+ */
    char *ClientId;                      /* v0+ */
    char *ClientHost;                    /* v0+ */
    struct proto_bytes MemberMetadata;   /* v0+ */
    struct proto_bytes MemberAssignment; /* v0+ */
};

struct DescribedGroup {
    int16_t ErrorCode;                                /* v0+ */
    char *GroupId;                                    /* v0+ */
    char *GroupState;                                 /* v0+ */
    char *ProtocolType;                               /* v0+ */
    char *ProtocolData;                               /* v0+ */
    PROTO_ARRAY(struct DescribedGroupMember) Members; /* v0+ */
    int32_t AuthorizedOperations;                     /* v3+, default INT32_MIN */
};

struct DescribeGroupsResponse {
    int32_t ThrottleTimeMs;                    /* v1+ */
    PROTO_ARRAY(struct DescribedGroup) Groups; /* v0+ */
};

extern const struct proto_struct proto_DescribeGroupsResponse;

/* ListGroups (key 16), versions 0-4, flexible from 3. TypesFilter and GroupType (v5+) are past
 * the declared versions. */
struct ListGroupsRequest {
    PROTO_ARRAY(char *) StatesFilter; /* v4+ */
};

extern const struct proto_struct proto_ListGroupsRequest;

struct ListedGroup {
    char *GroupId;      /* v0+ */
    char *ProtocolType; /* v0+ */
    char *GroupState;   /* v4+ */
};

struct ListGroupsResponse {
    int32_t ThrottleTimeMs;                 /* v1+ */
    int16_t ErrorCode;                      /* v0+ */
    PROTO_ARRAY(struct ListedGroup) Groups; /* v0+ */
};

extern const struct proto_struct proto_ListGroupsResponse;

/* DeleteGroups (key 42), versions 0-2, flexible from 2. */
struct DeleteGroupsRequest {
    PROTO_ARRAY(char *) GroupsNames; /* v0+ */
};

extern const struct proto_struct proto_DeleteGroupsRequest;

struct DeletableGroupResult {
    char *GroupId;     /* v0+ */
    int16_t ErrorCode; /* v0+ */
};

struct DeleteGroupsResponse {
    int32_t ThrottleTimeMs;                           /* v0+ */
    PROTO_ARRAY(struct DeletableGroupResult) Results; /* v0+ */
};

extern const struct proto_struct proto_DeleteGroupsResponse;

/* OffsetDelete (key 47), version 0, never flexible. */
struct OffsetDeleteRequestPartition {
    int32_t PartitionIndex; /* v0+ */
};

struct OffsetDeleteRequestTopic {
    char *Name;                                                  /* v0+ */
    PROTO_ARRAY(struct OffsetDeleteRequestPartition) Partitions; /* v0+ */
};

struct OffsetDeleteRequest {
    char *GroupId;                                       /* v0+ */
    PROTO_ARRAY(struct OffsetDeleteRequestTopic) Topics; /* v0+ */
};

extern const struct proto_struct proto_OffsetDeleteRequest;

struct OffsetDeleteResponsePartition {
    int32_t PartitionIndex; /* v0+ */
    int16_t ErrorCode;      /* v0+ */
};

struct OffsetDeleteResponseTopic {
    char *Name;                                                   /* v0+ */
    PROTO_ARRAY(struct OffsetDeleteResponsePartition) Partitions; /* v0+ */
};

struct OffsetDeleteResponse {
    int16_t ErrorCode;                                    /* v0+ */
    int32_t ThrottleTimeMs;                               /* v0+ */
    PROTO_ARRAY(struct OffsetDeleteResponseTopic) Topics; /* v0+ */
};

extern const struct proto_struct proto_OffsetDeleteResponse;

/* ---------------------------------------------------------------------------------------- */
/* The transaction coordinator's APIs (keys 24-28, 65, 66). */

/* AddPartitionsToTxn (key 24), versions 0-4, flexible from 3. v0-3 (clients) name one
 * transaction in the V3AndBelow* fields and get ResultsByTopicV3AndBelow; v4 (broker to
 * broker, KIP-890) batches Transactions, each with VerifyOnly, and gets ResultsByTransaction
 * plus a top-level ErrorCode. AddPartitionsToTxnTopic and AddPartitionsToTxnTopicResult are
 * the schema's common structs, shared by both forms. */
struct AddPartitionsToTxnTopic {
    char *Name;                      /* v0+ */
    PROTO_ARRAY(int32_t) Partitions; /* v0+ */
};

struct AddPartitionsToTxnTransaction {
    char *TransactionalId;                              /* v4+ */
    int64_t ProducerId;                                 /* v4+ */
    int16_t ProducerEpoch;                              /* v4+ */
    bool VerifyOnly;                                    /* v4+ */
    PROTO_ARRAY(struct AddPartitionsToTxnTopic) Topics; /* v4+ */
};

struct AddPartitionsToTxnRequest {
    PROTO_ARRAY(struct AddPartitionsToTxnTransaction) Transactions; /* v4+ */
    char *V3AndBelowTransactionalId;                                /* v0-3 */
    int64_t V3AndBelowProducerId;                                   /* v0-3 */
    int16_t V3AndBelowProducerEpoch;                                /* v0-3 */
    PROTO_ARRAY(struct AddPartitionsToTxnTopic) V3AndBelowTopics;   /* v0-3 */
};

extern const struct proto_struct proto_AddPartitionsToTxnRequest;

struct AddPartitionsToTxnPartitionResult {
    int32_t PartitionIndex;     /* v0+ */
    int16_t PartitionErrorCode; /* v0+ */
};

struct AddPartitionsToTxnTopicResult {
    char *Name;                                                               /* v0+ */
    PROTO_ARRAY(struct AddPartitionsToTxnPartitionResult) ResultsByPartition; /* v0+ */
};

struct AddPartitionsToTxnResult {
    char *TransactionalId;                                          /* v4+ */
    PROTO_ARRAY(struct AddPartitionsToTxnTopicResult) TopicResults; /* v4+ */
};

struct AddPartitionsToTxnResponse {
    int32_t ThrottleTimeMs;                                                     /* v0+ */
    int16_t ErrorCode;                                                          /* v4+ */
    PROTO_ARRAY(struct AddPartitionsToTxnResult) ResultsByTransaction;          /* v4+ */
    PROTO_ARRAY(struct AddPartitionsToTxnTopicResult) ResultsByTopicV3AndBelow; /* v0-3 */
};

extern const struct proto_struct proto_AddPartitionsToTxnResponse;

/* AddOffsetsToTxn (key 25), versions 0-3, flexible from 3. */
struct AddOffsetsToTxnRequest {
    char *TransactionalId; /* v0+ */
    int64_t ProducerId;    /* v0+ */
    int16_t ProducerEpoch; /* v0+ */
    char *GroupId;         /* v0+ */
};

extern const struct proto_struct proto_AddOffsetsToTxnRequest;

struct AddOffsetsToTxnResponse {
    int32_t ThrottleTimeMs; /* v0+ */
    int16_t ErrorCode;      /* v0+ */
};

extern const struct proto_struct proto_AddOffsetsToTxnResponse;

/* EndTxn (key 26), versions 0-3, flexible from 3. ProducerId/ProducerEpoch in the response
 * (v5+) are past the declared versions. */
struct EndTxnRequest {
    char *TransactionalId; /* v0+ */
    int64_t ProducerId;    /* v0+ */
    int16_t ProducerEpoch; /* v0+ */
    bool Committed;        /* v0+ */
};

extern const struct proto_struct proto_EndTxnRequest;

struct EndTxnResponse {
    int32_t ThrottleTimeMs; /* v0+ */
    int16_t ErrorCode;      /* v0+ */
};

extern const struct proto_struct proto_EndTxnResponse;

/* WriteTxnMarkers (key 27), versions 0-1, flexible from 1. */
struct WritableTxnMarkerTopic {
    char *Name;                            /* v0+ */
    PROTO_ARRAY(int32_t) PartitionIndexes; /* v0+ */
};

struct WritableTxnMarker {
    int64_t ProducerId;                                /* v0+ */
    int16_t ProducerEpoch;                             /* v0+ */
    bool TransactionResult;                            /* v0+ */
    PROTO_ARRAY(struct WritableTxnMarkerTopic) Topics; /* v0+ */
    int32_t CoordinatorEpoch;                          /* v0+ */
};

struct WriteTxnMarkersRequest {
    PROTO_ARRAY(struct WritableTxnMarker) Markers; /* v0+ */
};

extern const struct proto_struct proto_WriteTxnMarkersRequest;

struct WritableTxnMarkerPartitionResult {
    int32_t PartitionIndex; /* v0+ */
    int16_t ErrorCode;      /* v0+ */
};

struct WritableTxnMarkerTopicResult {
    char *Name;                                                      /* v0+ */
    PROTO_ARRAY(struct WritableTxnMarkerPartitionResult) Partitions; /* v0+ */
};

struct WritableTxnMarkerResult {
    int64_t ProducerId;                                      /* v0+ */
    PROTO_ARRAY(struct WritableTxnMarkerTopicResult) Topics; /* v0+ */
};

struct WriteTxnMarkersResponse {
    PROTO_ARRAY(struct WritableTxnMarkerResult) Markers; /* v0+ */
};

extern const struct proto_struct proto_WriteTxnMarkersResponse;

/* TxnOffsetCommit (key 28), versions 0-3, flexible from 3. */
struct TxnOffsetCommitRequestPartition {
    int32_t PartitionIndex;       /* v0+ */
    int64_t CommittedOffset;      /* v0+ */
    int32_t CommittedLeaderEpoch; /* v2+, default -1 */
    char *CommittedMetadata;      /* v0+, nullable v0+ */
};

struct TxnOffsetCommitRequestTopic {
    char *Name;                                                     /* v0+ */
    PROTO_ARRAY(struct TxnOffsetCommitRequestPartition) Partitions; /* v0+ */
};

struct TxnOffsetCommitRequest {
    char *TransactionalId;                                  /* v0+ */
    char *GroupId;                                          /* v0+ */
    int64_t ProducerId;                                     /* v0+ */
    int16_t ProducerEpoch;                                  /* v0+ */
    int32_t GenerationId;                                   /* v3+, default -1 */
    char *MemberId;                                         /* v3+ */
    char *GroupInstanceId;                                  /* v3+, nullable v3+ */
    PROTO_ARRAY(struct TxnOffsetCommitRequestTopic) Topics; /* v0+ */
};

extern const struct proto_struct proto_TxnOffsetCommitRequest;

struct TxnOffsetCommitResponsePartition {
    int32_t PartitionIndex; /* v0+ */
    int16_t ErrorCode;      /* v0+ */
};

struct TxnOffsetCommitResponseTopic {
    char *Name;                                                      /* v0+ */
    PROTO_ARRAY(struct TxnOffsetCommitResponsePartition) Partitions; /* v0+ */
};

struct TxnOffsetCommitResponse {
    int32_t ThrottleTimeMs;                                  /* v0+ */
    PROTO_ARRAY(struct TxnOffsetCommitResponseTopic) Topics; /* v0+ */
};

extern const struct proto_struct proto_TxnOffsetCommitResponse;

/* DescribeTransactions (key 65), version 0, flexible from 0. The schema's TransactionState and
 * TopicData are prefixed: ListTransactions uses TransactionState for another layout. */
struct DescribeTransactionsRequest {
    PROTO_ARRAY(char *) TransactionalIds; /* v0+ */
};

extern const struct proto_struct proto_DescribeTransactionsRequest;

struct DescribeTransactionsTopicData {
    char *Topic;                     /* v0+ */
    PROTO_ARRAY(int32_t) Partitions; /* v0+ */
};

struct DescribeTransactionsTransactionState {
    int16_t ErrorCode;                                        /* v0+ */
    char *TransactionalId;                                    /* v0+ */
    char *TransactionState;                                   /* v0+ */
    int32_t TransactionTimeoutMs;                             /* v0+ */
    int64_t TransactionStartTimeMs;                           /* v0+ */
    int64_t ProducerId;                                       /* v0+ */
    int16_t ProducerEpoch;                                    /* v0+ */
    PROTO_ARRAY(struct DescribeTransactionsTopicData) Topics; /* v0+ */
};

struct DescribeTransactionsResponse {
    int32_t ThrottleTimeMs;                                                     /* v0+ */
    PROTO_ARRAY(struct DescribeTransactionsTransactionState) TransactionStates; /* v0+ */
};

extern const struct proto_struct proto_DescribeTransactionsResponse;

/* ListTransactions (key 66), version 0, flexible from 0. DurationFilter (v1+) is past the
 * declared versions. */
struct ListTransactionsRequest {
    PROTO_ARRAY(char *) StateFilters;       /* v0+ */
    PROTO_ARRAY(int64_t) ProducerIdFilters; /* v0+ */
};

extern const struct proto_struct proto_ListTransactionsRequest;

struct ListTransactionsTransactionState {
    char *TransactionalId;  /* v0+ */
    int64_t ProducerId;     /* v0+ */
    char *TransactionState; /* v0+ */
};

struct ListTransactionsResponse {
    int32_t ThrottleTimeMs;                                                 /* v0+ */
    int16_t ErrorCode;                                                      /* v0+ */
    PROTO_ARRAY(char *) UnknownStateFilters;                                /* v0+ */
    PROTO_ARRAY(struct ListTransactionsTransactionState) TransactionStates; /* v0+ */
};

extern const struct proto_struct proto_ListTransactionsResponse;

/* ---------------------------------------------------------------------------------------- */
/* Record formats (struct proto_record in proto.h): not APIs. Field names are those of the
 * group-coordinator, transaction-coordinator and consumer JSON schemas (lower camel case in
 * the coordinators' records, as Kafka spells them). */

/* __consumer_offsets keys. The key's version says which format the record holds: 0 or 1 an
 * offset commit (OffsetCommitKey; the two are the same layout, Kafka writes 1), 2 a group's
 * metadata (GroupMetadataKey). A null value is a tombstone for that key. */
#define PROTO_OFFSET_COMMIT_KEY_V0 0
#define PROTO_OFFSET_COMMIT_KEY_V1 1
#define PROTO_GROUP_METADATA_KEY_V 2

/* OffsetCommitKey, versions 0-1, never flexible. */
struct OffsetCommitKey {
    char *group;       /* v0-1 */
    char *topic;       /* v0-1 */
    int32_t partition; /* v0-1 */
};

extern const struct proto_record proto_record_OffsetCommitKey;

/* OffsetCommitValue, versions 0-4, flexible from 4. */
struct OffsetCommitValue {
    int64_t offset;          /* v0+ */
    int32_t leaderEpoch;     /* v3+, default -1 */
    char *metadata;          /* v0+ */
    int64_t commitTimestamp; /* v0+ */
    int64_t expireTimestamp; /* v1 only, default -1 */
};

extern const struct proto_record proto_record_OffsetCommitValue;

/* GroupMetadataKey, version 2 only, never flexible. */
struct GroupMetadataKey {
    char *group; /* v2 */
};

extern const struct proto_record proto_record_GroupMetadataKey;

/* One member in a GroupMetadataValue. */
struct MemberMetadata {
    char *memberId;                  /* v0+ */
    char *groupInstanceId;           /* v3+, nullable v3+, default null */
    char *clientId;                  /* v0+ */
    char *clientHost;                /* v0+ */
    int32_t rebalanceTimeout;        /* v1+, default -1 */
    int32_t sessionTimeout;          /* v0+ */
    struct proto_bytes subscription; /* v0+ */
    struct proto_bytes assignment;   /* v0+ */
};

/* GroupMetadataValue, versions 0-4, flexible from 4. */
struct GroupMetadataValue {
    char *protocolType;                         /* v0+ */
    int32_t generation;                         /* v0+ */
    char *protocol;                             /* v0+, nullable v0+ */
    char *leader;                               /* v0+, nullable v0+ */
    int64_t currentStateTimestamp;              /* v2+, default -1 */
    PROTO_ARRAY(struct MemberMetadata) members; /* v0+ */
};

extern const struct proto_record proto_record_GroupMetadataValue;

/* __transaction_state: TransactionLogKey, version 0 only, never flexible. */
struct TransactionLogKey {
    char *TransactionalId; /* v0 */
};

extern const struct proto_record proto_record_TransactionLogKey;

struct PartitionsSchema {
    char *Topic;                       /* v0+ */
    PROTO_ARRAY(int32_t) PartitionIds; /* v0+ */
};

/* TransactionLogValue, versions 0-1, flexible from 1. TransactionStatus is Kafka's
 * TransactionState id (0 Empty, 1 Ongoing, 2 PrepareCommit, 3 PrepareAbort, 4 CompleteCommit,
 * 5 CompleteAbort, 6 Dead, 7 PrepareEpochFence). */
struct TransactionLogValue {
    int64_t ProducerId;                                         /* v0+ */
    int64_t PreviousProducerId;                                 /* v1+, tag 0, default -1 */
    int64_t NextProducerId;                                     /* v1+, tag 1, default -1 */
    int16_t ProducerEpoch;                                      /* v0+ */
    int32_t TransactionTimeoutMs;                               /* v0+ */
    int8_t TransactionStatus;                                   /* v0+ */
    PROTO_ARRAY(struct PartitionsSchema) TransactionPartitions; /* v0+, nullable v0+ */
    int64_t TransactionLastUpdateTimestampMs;                   /* v0+ */
    int64_t TransactionStartTimestampMs;                        /* v0+ */
    int16_t ClientTransactionVersion;                           /* v1+, tag 2 */
};

extern const struct proto_record proto_record_TransactionLogValue;

/* The consumer protocol (protocol type "consumer"): a member's JoinGroup protocol metadata is
 * a ConsumerProtocolSubscription, its SyncGroup assignment a ConsumerProtocolAssignment, both
 * versions 0-3, never flexible; a newer version decodes as 3 (Kafka's rule). The schemas'
 * TopicPartition (same layout in both) is prefixed: other messages use that name. UserData is
 * null by default in Kafka: set len -1 for null (a zeroed one encodes as empty). */
struct ConsumerProtocolTopicPartition {
    char *Topic;                     /* v0+ (v1+ in a subscription) */
    PROTO_ARRAY(int32_t) Partitions; /* v0+ */
};

struct ConsumerProtocolSubscription {
    PROTO_ARRAY(char *) Topics;                                         /* v0+ */
    struct proto_bytes UserData;                                        /* v0+, nullable v0+ */
    PROTO_ARRAY(struct ConsumerProtocolTopicPartition) OwnedPartitions; /* v1+ */
    int32_t GenerationId;                                               /* v2+, default -1 */
    char *RackId;                                                       /* v3+, nullable v3+ */
};

extern const struct proto_record proto_record_ConsumerProtocolSubscription;

struct ConsumerProtocolAssignment {
    PROTO_ARRAY(struct ConsumerProtocolTopicPartition) AssignedPartitions; /* v0+ */
    struct proto_bytes UserData;                                           /* v0+, nullable v0+ */
};

extern const struct proto_record proto_record_ConsumerProtocolAssignment;

/* The principal of an Envelope (RequestPrincipal), as Kafka's DefaultKafkaPrincipalBuilder
 * serializes it: version 0, flexible from 0. */
struct DefaultPrincipalData {
    char *Type;              /* v0+: "User" */
    char *Name;              /* v0+ */
    bool TokenAuthenticated; /* v0+ */
};

extern const struct proto_record proto_record_DefaultPrincipalData;

#endif
