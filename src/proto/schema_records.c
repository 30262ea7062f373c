/* SPDX-License-Identifier: Apache-2.0 */
/* The record formats that are not APIs, transcribed from Kafka's JSON message schemas: the
 * keys and values of __consumer_offsets (group-coordinator OffsetCommitKey/Value,
 * GroupMetadataKey/Value), of __transaction_state (transaction-coordinator
 * TransactionLogKey/Value), and the consumer's embedded protocol (clients
 * ConsumerProtocolSubscription/Assignment, and the Envelope's DefaultPrincipalData). See
 * proto_int.h for the row format and proto.h (struct proto_record) for their framing. */
#include "proto/proto_int.h"

/* ---- __consumer_offsets ---- */

static const struct proto_field OffsetCommitKey_fields[] = {
    PROTO_FIELD(OffsetCommitKey, group, STRING, 0, 1, PROTO_NEVER, 0),
    PROTO_FIELD(OffsetCommitKey, topic, STRING, 0, 1, PROTO_NEVER, 0),
    PROTO_FIELD(OffsetCommitKey, partition, INT32, 0, 1, PROTO_NEVER, 0),
};
static const struct proto_struct OffsetCommitKey_layout = PROTO_LAYOUT(OffsetCommitKey);
const struct proto_record proto_record_OffsetCommitKey = {"OffsetCommitKey",      0, 1, -1, false,
                                                          &OffsetCommitKey_layout};

static const struct proto_field OffsetCommitValue_fields[] = {
    PROTO_FIELD(OffsetCommitValue, offset, INT64, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(OffsetCommitValue, leaderEpoch, INT32, 3, PROTO_VMAX, PROTO_NEVER, -1),
    PROTO_FIELD(OffsetCommitValue, metadata, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(OffsetCommitValue, commitTimestamp, INT64, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(OffsetCommitValue, expireTimestamp, INT64, 1, 1, PROTO_NEVER, -1),
};
static const struct proto_struct OffsetCommitValue_layout = PROTO_LAYOUT(OffsetCommitValue);
const struct proto_record proto_record_OffsetCommitValue = {
    "OffsetCommitValue", 0, 4, 4, false, &OffsetCommitValue_layout};

static const struct proto_field GroupMetadataKey_fields[] = {
    PROTO_FIELD(GroupMetadataKey, group, STRING, 2, 2, PROTO_NEVER, 0),
};
static const struct proto_struct GroupMetadataKey_layout = PROTO_LAYOUT(GroupMetadataKey);
const struct proto_record proto_record_GroupMetadataKey = {"GroupMetadataKey",      2, 2, -1, false,
                                                           &GroupMetadataKey_layout};

static const struct proto_field MemberMetadata_fields[] = {
    PROTO_FIELD(MemberMetadata, memberId, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(MemberMetadata, groupInstanceId, STRING, 3, PROTO_VMAX, 3, 0),
    PROTO_FIELD(MemberMetadata, clientId, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(MemberMetadata, clientHost, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(MemberMetadata, rebalanceTimeout, INT32, 1, PROTO_VMAX, PROTO_NEVER, -1),
    PROTO_FIELD(MemberMetadata, sessionTimeout, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(MemberMetadata, subscription, BYTES, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(MemberMetadata, assignment, BYTES, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
static const struct proto_struct proto_MemberMetadata = PROTO_LAYOUT(MemberMetadata);

static const struct proto_field GroupMetadataValue_fields[] = {
    PROTO_FIELD(GroupMetadataValue, protocolType, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(GroupMetadataValue, generation, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(GroupMetadataValue, protocol, STRING, 0, PROTO_VMAX, 0, 0),
    PROTO_FIELD(GroupMetadataValue, leader, STRING, 0, PROTO_VMAX, 0, 0),
    PROTO_FIELD(GroupMetadataValue, currentStateTimestamp, INT64, 2, PROTO_VMAX, PROTO_NEVER, -1),
    PROTO_STRUCTS(GroupMetadataValue, members, proto_MemberMetadata, 0, PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct GroupMetadataValue_layout = PROTO_LAYOUT(GroupMetadataValue);
const struct proto_record proto_record_GroupMetadataValue = {
    "GroupMetadataValue", 0, 4, 4, false, &GroupMetadataValue_layout};

/* ---- __transaction_state ---- */

static const struct proto_field TransactionLogKey_fields[] = {
    PROTO_FIELD(TransactionLogKey, TransactionalId, STRING, 0, 0, PROTO_NEVER, 0),
};
static const struct proto_struct TransactionLogKey_layout = PROTO_LAYOUT(TransactionLogKey);
const struct proto_record proto_record_TransactionLogKey = {
    "TransactionLogKey", 0, 0, -1, false, &TransactionLogKey_layout};

static const struct proto_field PartitionsSchema_fields[] = {
    PROTO_FIELD(PartitionsSchema, Topic, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_ARRAY_OF(PartitionsSchema, PartitionIds, INT32, 0, PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_PartitionsSchema = PROTO_LAYOUT(PartitionsSchema);

static const struct proto_field TransactionLogValue_fields[] = {
    PROTO_FIELD(TransactionLogValue, ProducerId, INT64, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_TAGGED(TransactionLogValue, PreviousProducerId, INT64, 1, PROTO_VMAX, 0, -1),
    PROTO_TAGGED(TransactionLogValue, NextProducerId, INT64, 1, PROTO_VMAX, 1, -1),
    PROTO_FIELD(TransactionLogValue, ProducerEpoch, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(TransactionLogValue, TransactionTimeoutMs, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(TransactionLogValue, TransactionStatus, INT8, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(TransactionLogValue, TransactionPartitions, proto_PartitionsSchema, 0, PROTO_VMAX,
                  0),
    PROTO_FIELD(TransactionLogValue, TransactionLastUpdateTimestampMs, INT64, 0, PROTO_VMAX,
                PROTO_NEVER, 0),
    PROTO_FIELD(TransactionLogValue, TransactionStartTimestampMs, INT64, 0, PROTO_VMAX, PROTO_NEVER,
                0),
    PROTO_TAGGED(TransactionLogValue, ClientTransactionVersion, INT16, 1, PROTO_VMAX, 2, 0),
};
static const struct proto_struct TransactionLogValue_layout = PROTO_LAYOUT(TransactionLogValue);
const struct proto_record proto_record_TransactionLogValue = {
    "TransactionLogValue", 0, 1, 1, false, &TransactionLogValue_layout};

/* ---- the consumer's embedded protocol (JoinGroup/SyncGroup metadata and assignments) ---- */

static const struct proto_field ConsumerProtocolTopicPartition_fields[] = {
    PROTO_FIELD(ConsumerProtocolTopicPartition, Topic, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_ARRAY_OF(ConsumerProtocolTopicPartition, Partitions, INT32, 0, PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_ConsumerProtocolTopicPartition =
    PROTO_LAYOUT(ConsumerProtocolTopicPartition);

static const struct proto_field ConsumerProtocolSubscription_fields[] = {
    PROTO_ARRAY_OF(ConsumerProtocolSubscription, Topics, STRING, 0, PROTO_VMAX, PROTO_NEVER),
    PROTO_FIELD(ConsumerProtocolSubscription, UserData, BYTES, 0, PROTO_VMAX, 0, 0),
    PROTO_STRUCTS(ConsumerProtocolSubscription, OwnedPartitions,
                  proto_ConsumerProtocolTopicPartition, 1, PROTO_VMAX, PROTO_NEVER),
    PROTO_FIELD(ConsumerProtocolSubscription, GenerationId, INT32, 2, PROTO_VMAX, PROTO_NEVER, -1),
    PROTO_FIELD(ConsumerProtocolSubscription, RackId, STRING, 3, PROTO_VMAX, 3, 0),
};
static const struct proto_struct ConsumerProtocolSubscription_layout =
    PROTO_LAYOUT(ConsumerProtocolSubscription);
const struct proto_record proto_record_ConsumerProtocolSubscription = {
    "ConsumerProtocolSubscription", 0, 3, -1, true, &ConsumerProtocolSubscription_layout};

static const struct proto_field ConsumerProtocolAssignment_fields[] = {
    PROTO_STRUCTS(ConsumerProtocolAssignment, AssignedPartitions,
                  proto_ConsumerProtocolTopicPartition, 0, PROTO_VMAX, PROTO_NEVER),
    PROTO_FIELD(ConsumerProtocolAssignment, UserData, BYTES, 0, PROTO_VMAX, 0, 0),
};
static const struct proto_struct ConsumerProtocolAssignment_layout =
    PROTO_LAYOUT(ConsumerProtocolAssignment);
const struct proto_record proto_record_ConsumerProtocolAssignment = {
    "ConsumerProtocolAssignment", 0, 3, -1, true, &ConsumerProtocolAssignment_layout};

static const struct proto_field DefaultPrincipalData_fields[] = {
    PROTO_FIELD(DefaultPrincipalData, Type, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DefaultPrincipalData, Name, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DefaultPrincipalData, TokenAuthenticated, BOOL, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
static const struct proto_struct DefaultPrincipalData_layout = PROTO_LAYOUT(DefaultPrincipalData);
const struct proto_record proto_record_DefaultPrincipalData = {
    "DefaultPrincipalData", 0, 0, 0, false, &DefaultPrincipalData_layout};
