/* SPDX-License-Identifier: Apache-2.0 */
/* The field tables of the transaction coordinator's APIs: AddPartitionsToTxn (key 24),
 * AddOffsetsToTxn (25), EndTxn (26), WriteTxnMarkers (27), TxnOffsetCommit (28),
 * DescribeTransactions (65) and ListTransactions (66), transcribed from Kafka's JSON message
 * schemas; see proto_int.h for the row format. Nested layouts come before the structs that
 * hold them. */
#include "proto/proto_int.h"

static const struct proto_field AddPartitionsToTxnTopic_fields[] = {
    PROTO_FIELD(AddPartitionsToTxnTopic, Name, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_ARRAY_OF(AddPartitionsToTxnTopic, Partitions, INT32, 0, PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_AddPartitionsToTxnTopic =
    PROTO_LAYOUT(AddPartitionsToTxnTopic);

static const struct proto_field AddPartitionsToTxnTransaction_fields[] = {
    PROTO_FIELD(AddPartitionsToTxnTransaction, TransactionalId, STRING, 4, PROTO_VMAX, PROTO_NEVER,
                0),
    PROTO_FIELD(AddPartitionsToTxnTransaction, ProducerId, INT64, 4, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(AddPartitionsToTxnTransaction, ProducerEpoch, INT16, 4, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(AddPartitionsToTxnTransaction, VerifyOnly, BOOL, 4, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(AddPartitionsToTxnTransaction, Topics, proto_AddPartitionsToTxnTopic, 4,
                  PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_AddPartitionsToTxnTransaction =
    PROTO_LAYOUT(AddPartitionsToTxnTransaction);

static const struct proto_field AddPartitionsToTxnRequest_fields[] = {
    PROTO_STRUCTS(AddPartitionsToTxnRequest, Transactions, proto_AddPartitionsToTxnTransaction, 4,
                  PROTO_VMAX, PROTO_NEVER),
    PROTO_FIELD(AddPartitionsToTxnRequest, V3AndBelowTransactionalId, STRING, 0, 3, PROTO_NEVER, 0),
    PROTO_FIELD(AddPartitionsToTxnRequest, V3AndBelowProducerId, INT64, 0, 3, PROTO_NEVER, 0),
    PROTO_FIELD(AddPartitionsToTxnRequest, V3AndBelowProducerEpoch, INT16, 0, 3, PROTO_NEVER, 0),
    PROTO_STRUCTS(AddPartitionsToTxnRequest, V3AndBelowTopics, proto_AddPartitionsToTxnTopic, 0, 3,
                  PROTO_NEVER),
};
const struct proto_struct proto_AddPartitionsToTxnRequest = PROTO_LAYOUT(AddPartitionsToTxnRequest);

static const struct proto_field AddPartitionsToTxnPartitionResult_fields[] = {
    PROTO_FIELD(AddPartitionsToTxnPartitionResult, PartitionIndex, INT32, 0, PROTO_VMAX,
                PROTO_NEVER, 0),
    PROTO_FIELD(AddPartitionsToTxnPartitionResult, PartitionErrorCode, INT16, 0, PROTO_VMAX,
                PROTO_NEVER, 0),
};
static const struct proto_struct proto_AddPartitionsToTxnPartitionResult =
    PROTO_LAYOUT(AddPartitionsToTxnPartitionResult);

static const struct proto_field AddPartitionsToTxnTopicResult_fields[] = {
    PROTO_FIELD(AddPartitionsToTxnTopicResult, Name, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(AddPartitionsToTxnTopicResult, ResultsByPartition,
                  proto_AddPartitionsToTxnPartitionResult, 0, PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_AddPartitionsToTxnTopicResult =
    PROTO_LAYOUT(AddPartitionsToTxnTopicResult);

static const struct proto_field AddPartitionsToTxnResult_fields[] = {
    PROTO_FIELD(AddPartitionsToTxnResult, TransactionalId, STRING, 4, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(AddPartitionsToTxnResult, TopicResults, proto_AddPartitionsToTxnTopicResult, 4,
                  PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_AddPartitionsToTxnResult =
    PROTO_LAYOUT(AddPartitionsToTxnResult);

static const struct proto_field AddPartitionsToTxnResponse_fields[] = {
    PROTO_FIELD(AddPartitionsToTxnResponse, ThrottleTimeMs, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(AddPartitionsToTxnResponse, ErrorCode, INT16, 4, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(AddPartitionsToTxnResponse, ResultsByTransaction, proto_AddPartitionsToTxnResult,
                  4, PROTO_VMAX, PROTO_NEVER),
    PROTO_STRUCTS(AddPartitionsToTxnResponse, ResultsByTopicV3AndBelow,
                  proto_AddPartitionsToTxnTopicResult, 0, 3, PROTO_NEVER),
};
const struct proto_struct proto_AddPartitionsToTxnResponse =
    PROTO_LAYOUT(AddPartitionsToTxnResponse);

static const struct proto_field AddOffsetsToTxnRequest_fields[] = {
    PROTO_FIELD(AddOffsetsToTxnRequest, TransactionalId, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(AddOffsetsToTxnRequest, ProducerId, INT64, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(AddOffsetsToTxnRequest, ProducerEpoch, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(AddOffsetsToTxnRequest, GroupId, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
const struct proto_struct proto_AddOffsetsToTxnRequest = PROTO_LAYOUT(AddOffsetsToTxnRequest);

static const struct proto_field AddOffsetsToTxnResponse_fields[] = {
    PROTO_FIELD(AddOffsetsToTxnResponse, ThrottleTimeMs, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(AddOffsetsToTxnResponse, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
const struct proto_struct proto_AddOffsetsToTxnResponse = PROTO_LAYOUT(AddOffsetsToTxnResponse);

static const struct proto_field EndTxnRequest_fields[] = {
    PROTO_FIELD(EndTxnRequest, TransactionalId, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(EndTxnRequest, ProducerId, INT64, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(EndTxnRequest, ProducerEpoch, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(EndTxnRequest, Committed, BOOL, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
const struct proto_struct proto_EndTxnRequest = PROTO_LAYOUT(EndTxnRequest);

static const struct proto_field EndTxnResponse_fields[] = {
    PROTO_FIELD(EndTxnResponse, ThrottleTimeMs, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(EndTxnResponse, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
const struct proto_struct proto_EndTxnResponse = PROTO_LAYOUT(EndTxnResponse);

static const struct proto_field WritableTxnMarkerTopic_fields[] = {
    PROTO_FIELD(WritableTxnMarkerTopic, Name, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_ARRAY_OF(WritableTxnMarkerTopic, PartitionIndexes, INT32, 0, PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_WritableTxnMarkerTopic =
    PROTO_LAYOUT(WritableTxnMarkerTopic);

static const struct proto_field WritableTxnMarker_fields[] = {
    PROTO_FIELD(WritableTxnMarker, ProducerId, INT64, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(WritableTxnMarker, ProducerEpoch, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(WritableTxnMarker, TransactionResult, BOOL, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(WritableTxnMarker, Topics, proto_WritableTxnMarkerTopic, 0, PROTO_VMAX,
                  PROTO_NEVER),
    PROTO_FIELD(WritableTxnMarker, CoordinatorEpoch, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
static const struct proto_struct proto_WritableTxnMarker = PROTO_LAYOUT(WritableTxnMarker);

static const struct proto_field WriteTxnMarkersRequest_fields[] = {
    PROTO_STRUCTS(WriteTxnMarkersRequest, Markers, proto_WritableTxnMarker, 0, PROTO_VMAX,
                  PROTO_NEVER),
};
const struct proto_struct proto_WriteTxnMarkersRequest = PROTO_LAYOUT(WriteTxnMarkersRequest);

static const struct proto_field WritableTxnMarkerPartitionResult_fields[] = {
    PROTO_FIELD(WritableTxnMarkerPartitionResult, PartitionIndex, INT32, 0, PROTO_VMAX, PROTO_NEVER,
                0),
    PROTO_FIELD(WritableTxnMarkerPartitionResult, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
static const struct proto_struct proto_WritableTxnMarkerPartitionResult =
    PROTO_LAYOUT(WritableTxnMarkerPartitionResult);

static const struct proto_field WritableTxnMarkerTopicResult_fields[] = {
    PROTO_FIELD(WritableTxnMarkerTopicResult, Name, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(WritableTxnMarkerTopicResult, Partitions, proto_WritableTxnMarkerPartitionResult,
                  0, PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_WritableTxnMarkerTopicResult =
    PROTO_LAYOUT(WritableTxnMarkerTopicResult);

static const struct proto_field WritableTxnMarkerResult_fields[] = {
    PROTO_FIELD(WritableTxnMarkerResult, ProducerId, INT64, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(WritableTxnMarkerResult, Topics, proto_WritableTxnMarkerTopicResult, 0,
                  PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_WritableTxnMarkerResult =
    PROTO_LAYOUT(WritableTxnMarkerResult);

static const struct proto_field WriteTxnMarkersResponse_fields[] = {
    PROTO_STRUCTS(WriteTxnMarkersResponse, Markers, proto_WritableTxnMarkerResult, 0, PROTO_VMAX,
                  PROTO_NEVER),
};
const struct proto_struct proto_WriteTxnMarkersResponse = PROTO_LAYOUT(WriteTxnMarkersResponse);

static const struct proto_field TxnOffsetCommitRequestPartition_fields[] = {
    PROTO_FIELD(TxnOffsetCommitRequestPartition, PartitionIndex, INT32, 0, PROTO_VMAX, PROTO_NEVER,
                0),
    PROTO_FIELD(TxnOffsetCommitRequestPartition, CommittedOffset, INT64, 0, PROTO_VMAX, PROTO_NEVER,
                0),
    PROTO_FIELD(TxnOffsetCommitRequestPartition, CommittedLeaderEpoch, INT32, 2, PROTO_VMAX,
                PROTO_NEVER, -1),
    PROTO_FIELD(TxnOffsetCommitRequestPartition, CommittedMetadata, STRING, 0, PROTO_VMAX, 0, 0),
};
static const struct proto_struct proto_TxnOffsetCommitRequestPartition =
    PROTO_LAYOUT(TxnOffsetCommitRequestPartition);

static const struct proto_field TxnOffsetCommitRequestTopic_fields[] = {
    PROTO_FIELD(TxnOffsetCommitRequestTopic, Name, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(TxnOffsetCommitRequestTopic, Partitions, proto_TxnOffsetCommitRequestPartition, 0,
                  PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_TxnOffsetCommitRequestTopic =
    PROTO_LAYOUT(TxnOffsetCommitRequestTopic);

static const struct proto_field TxnOffsetCommitRequest_fields[] = {
    PROTO_FIELD(TxnOffsetCommitRequest, TransactionalId, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(TxnOffsetCommitRequest, GroupId, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(TxnOffsetCommitRequest, ProducerId, INT64, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(TxnOffsetCommitRequest, ProducerEpoch, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(TxnOffsetCommitRequest, GenerationId, INT32, 3, PROTO_VMAX, PROTO_NEVER, -1),
    PROTO_FIELD(TxnOffsetCommitRequest, MemberId, STRING, 3, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(TxnOffsetCommitRequest, GroupInstanceId, STRING, 3, PROTO_VMAX, 3, 0),
    PROTO_STRUCTS(TxnOffsetCommitRequest, Topics, proto_TxnOffsetCommitRequestTopic, 0, PROTO_VMAX,
                  PROTO_NEVER),
};
const struct proto_struct proto_TxnOffsetCommitRequest = PROTO_LAYOUT(TxnOffsetCommitRequest);

static const struct proto_field TxnOffsetCommitResponsePartition_fields[] = {
    PROTO_FIELD(TxnOffsetCommitResponsePartition, PartitionIndex, INT32, 0, PROTO_VMAX, PROTO_NEVER,
                0),
    PROTO_FIELD(TxnOffsetCommitResponsePartition, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
static const struct proto_struct proto_TxnOffsetCommitResponsePartition =
    PROTO_LAYOUT(TxnOffsetCommitResponsePartition);

static const struct proto_field TxnOffsetCommitResponseTopic_fields[] = {
    PROTO_FIELD(TxnOffsetCommitResponseTopic, Name, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(TxnOffsetCommitResponseTopic, Partitions, proto_TxnOffsetCommitResponsePartition,
                  0, PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_TxnOffsetCommitResponseTopic =
    PROTO_LAYOUT(TxnOffsetCommitResponseTopic);

static const struct proto_field TxnOffsetCommitResponse_fields[] = {
    PROTO_FIELD(TxnOffsetCommitResponse, ThrottleTimeMs, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(TxnOffsetCommitResponse, Topics, proto_TxnOffsetCommitResponseTopic, 0,
                  PROTO_VMAX, PROTO_NEVER),
};
const struct proto_struct proto_TxnOffsetCommitResponse = PROTO_LAYOUT(TxnOffsetCommitResponse);

static const struct proto_field DescribeTransactionsRequest_fields[] = {
    PROTO_ARRAY_OF(DescribeTransactionsRequest, TransactionalIds, STRING, 0, PROTO_VMAX,
                   PROTO_NEVER),
};
const struct proto_struct proto_DescribeTransactionsRequest =
    PROTO_LAYOUT(DescribeTransactionsRequest);

static const struct proto_field DescribeTransactionsTopicData_fields[] = {
    PROTO_FIELD(DescribeTransactionsTopicData, Topic, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_ARRAY_OF(DescribeTransactionsTopicData, Partitions, INT32, 0, PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_DescribeTransactionsTopicData =
    PROTO_LAYOUT(DescribeTransactionsTopicData);

static const struct proto_field DescribeTransactionsTransactionState_fields[] = {
    PROTO_FIELD(DescribeTransactionsTransactionState, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER,
                0),
    PROTO_FIELD(DescribeTransactionsTransactionState, TransactionalId, STRING, 0, PROTO_VMAX,
                PROTO_NEVER, 0),
    PROTO_FIELD(DescribeTransactionsTransactionState, TransactionState, STRING, 0, PROTO_VMAX,
                PROTO_NEVER, 0),
    PROTO_FIELD(DescribeTransactionsTransactionState, TransactionTimeoutMs, INT32, 0, PROTO_VMAX,
                PROTO_NEVER, 0),
    PROTO_FIELD(DescribeTransactionsTransactionState, TransactionStartTimeMs, INT64, 0, PROTO_VMAX,
                PROTO_NEVER, 0),
    PROTO_FIELD(DescribeTransactionsTransactionState, ProducerId, INT64, 0, PROTO_VMAX, PROTO_NEVER,
                0),
    PROTO_FIELD(DescribeTransactionsTransactionState, ProducerEpoch, INT16, 0, PROTO_VMAX,
                PROTO_NEVER, 0),
    PROTO_STRUCTS(DescribeTransactionsTransactionState, Topics, proto_DescribeTransactionsTopicData,
                  0, PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_DescribeTransactionsTransactionState =
    PROTO_LAYOUT(DescribeTransactionsTransactionState);

static const struct proto_field DescribeTransactionsResponse_fields[] = {
    PROTO_FIELD(DescribeTransactionsResponse, ThrottleTimeMs, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(DescribeTransactionsResponse, TransactionStates,
                  proto_DescribeTransactionsTransactionState, 0, PROTO_VMAX, PROTO_NEVER),
};
const struct proto_struct proto_DescribeTransactionsResponse =
    PROTO_LAYOUT(DescribeTransactionsResponse);

static const struct proto_field ListTransactionsRequest_fields[] = {
    PROTO_ARRAY_OF(ListTransactionsRequest, StateFilters, STRING, 0, PROTO_VMAX, PROTO_NEVER),
    PROTO_ARRAY_OF(ListTransactionsRequest, ProducerIdFilters, INT64, 0, PROTO_VMAX, PROTO_NEVER),
};
const struct proto_struct proto_ListTransactionsRequest = PROTO_LAYOUT(ListTransactionsRequest);

static const struct proto_field ListTransactionsTransactionState_fields[] = {
    PROTO_FIELD(ListTransactionsTransactionState, TransactionalId, STRING, 0, PROTO_VMAX,
                PROTO_NEVER, 0),
    PROTO_FIELD(ListTransactionsTransactionState, ProducerId, INT64, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(ListTransactionsTransactionState, TransactionState, STRING, 0, PROTO_VMAX,
                PROTO_NEVER, 0),
};
static const struct proto_struct proto_ListTransactionsTransactionState =
    PROTO_LAYOUT(ListTransactionsTransactionState);

static const struct proto_field ListTransactionsResponse_fields[] = {
    PROTO_FIELD(ListTransactionsResponse, ThrottleTimeMs, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(ListTransactionsResponse, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_ARRAY_OF(ListTransactionsResponse, UnknownStateFilters, STRING, 0, PROTO_VMAX,
                   PROTO_NEVER),
    PROTO_STRUCTS(ListTransactionsResponse, TransactionStates,
                  proto_ListTransactionsTransactionState, 0, PROTO_VMAX, PROTO_NEVER),
};
const struct proto_struct proto_ListTransactionsResponse = PROTO_LAYOUT(ListTransactionsResponse);
