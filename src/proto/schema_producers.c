/* SPDX-License-Identifier: Apache-2.0 */
/* The field tables of InitProducerId (key 22) and DescribeProducers (61), transcribed from
 * Kafka's JSON message schemas; see proto_int.h for the row format. Nested layouts come before
 * the structs that hold them. */
#include "proto/proto_int.h"

static const struct proto_field InitProducerIdRequest_fields[] = {
    PROTO_FIELD(InitProducerIdRequest, TransactionalId, STRING, 0, PROTO_VMAX, 0, 0),
    PROTO_FIELD(InitProducerIdRequest, TransactionTimeoutMs, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(InitProducerIdRequest, ProducerId, INT64, 3, PROTO_VMAX, PROTO_NEVER, -1),
    PROTO_FIELD(InitProducerIdRequest, ProducerEpoch, INT16, 3, PROTO_VMAX, PROTO_NEVER, -1),
};
const struct proto_struct proto_InitProducerIdRequest = PROTO_LAYOUT(InitProducerIdRequest);

static const struct proto_field InitProducerIdResponse_fields[] = {
    PROTO_FIELD(InitProducerIdResponse, ThrottleTimeMs, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(InitProducerIdResponse, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(InitProducerIdResponse, ProducerId, INT64, 0, PROTO_VMAX, PROTO_NEVER, -1),
    PROTO_FIELD(InitProducerIdResponse, ProducerEpoch, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
const struct proto_struct proto_InitProducerIdResponse = PROTO_LAYOUT(InitProducerIdResponse);

static const struct proto_field DescribeProducersTopicRequest_fields[] = {
    PROTO_FIELD(DescribeProducersTopicRequest, Name, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_ARRAY_OF(DescribeProducersTopicRequest, PartitionIndexes, INT32, 0, PROTO_VMAX,
                   PROTO_NEVER),
};
static const struct proto_struct proto_DescribeProducersTopicRequest =
    PROTO_LAYOUT(DescribeProducersTopicRequest);

static const struct proto_field DescribeProducersRequest_fields[] = {
    PROTO_STRUCTS(DescribeProducersRequest, Topics, proto_DescribeProducersTopicRequest, 0,
                  PROTO_VMAX, PROTO_NEVER),
};
const struct proto_struct proto_DescribeProducersRequest = PROTO_LAYOUT(DescribeProducersRequest);

static const struct proto_field ProducerState_fields[] = {
    PROTO_FIELD(ProducerState, ProducerId, INT64, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(ProducerState, ProducerEpoch, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(ProducerState, LastSequence, INT32, 0, PROTO_VMAX, PROTO_NEVER, -1),
    PROTO_FIELD(ProducerState, LastTimestamp, INT64, 0, PROTO_VMAX, PROTO_NEVER, -1),
    PROTO_FIELD(ProducerState, CoordinatorEpoch, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(ProducerState, CurrentTxnStartOffset, INT64, 0, PROTO_VMAX, PROTO_NEVER, -1),
};
static const struct proto_struct proto_ProducerState = PROTO_LAYOUT(ProducerState);

static const struct proto_field DescribeProducersPartitionResponse_fields[] = {
    PROTO_FIELD(DescribeProducersPartitionResponse, PartitionIndex, INT32, 0, PROTO_VMAX,
                PROTO_NEVER, 0),
    PROTO_FIELD(DescribeProducersPartitionResponse, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER,
                0),
    PROTO_FIELD(DescribeProducersPartitionResponse, ErrorMessage, STRING, 0, PROTO_VMAX, 0, 0),
    PROTO_STRUCTS(DescribeProducersPartitionResponse, ActiveProducers, proto_ProducerState, 0,
                  PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_DescribeProducersPartitionResponse =
    PROTO_LAYOUT(DescribeProducersPartitionResponse);

static const struct proto_field DescribeProducersTopicResponse_fields[] = {
    PROTO_FIELD(DescribeProducersTopicResponse, Name, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(DescribeProducersTopicResponse, Partitions,
                  proto_DescribeProducersPartitionResponse, 0, PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_DescribeProducersTopicResponse =
    PROTO_LAYOUT(DescribeProducersTopicResponse);

static const struct proto_field DescribeProducersResponse_fields[] = {
    PROTO_FIELD(DescribeProducersResponse, ThrottleTimeMs, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(DescribeProducersResponse, Topics, proto_DescribeProducersTopicResponse, 0,
                  PROTO_VMAX, PROTO_NEVER),
};
const struct proto_struct proto_DescribeProducersResponse = PROTO_LAYOUT(DescribeProducersResponse);
