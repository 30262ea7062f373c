/* SPDX-License-Identifier: Apache-2.0 */
/* The field tables of Produce (key 0), transcribed from Kafka's JSON message schemas; see
 * proto_int.h for the row format. Nested layouts come before the structs that hold them. */
#include "proto/proto_int.h"

static const struct proto_field PartitionProduceData_fields[] = {
    PROTO_FIELD(PartitionProduceData, Index, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(PartitionProduceData, Records, RECORDS, 0, PROTO_VMAX, 0, 0),
};
static const struct proto_struct proto_PartitionProduceData = PROTO_LAYOUT(PartitionProduceData);

static const struct proto_field TopicProduceData_fields[] = {
    PROTO_FIELD(TopicProduceData, Name, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(TopicProduceData, PartitionData, proto_PartitionProduceData, 0, PROTO_VMAX,
                  PROTO_NEVER),
};
static const struct proto_struct proto_TopicProduceData = PROTO_LAYOUT(TopicProduceData);

static const struct proto_field ProduceRequest_fields[] = {
    PROTO_FIELD(ProduceRequest, TransactionalId, STRING, 3, PROTO_VMAX, 3, 0),
    PROTO_FIELD(ProduceRequest, Acks, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(ProduceRequest, TimeoutMs, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(ProduceRequest, TopicData, proto_TopicProduceData, 0, PROTO_VMAX, PROTO_NEVER),
};
const struct proto_struct proto_ProduceRequest = PROTO_LAYOUT(ProduceRequest);

static const struct proto_field BatchIndexAndErrorMessage_fields[] = {
    PROTO_FIELD(BatchIndexAndErrorMessage, BatchIndex, INT32, 8, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(BatchIndexAndErrorMessage, BatchIndexErrorMessage, STRING, 8, PROTO_VMAX, 8, 0),
};
static const struct proto_struct proto_BatchIndexAndErrorMessage =
    PROTO_LAYOUT(BatchIndexAndErrorMessage);

static const struct proto_field PartitionProduceResponse_fields[] = {
    PROTO_FIELD(PartitionProduceResponse, Index, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(PartitionProduceResponse, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(PartitionProduceResponse, BaseOffset, INT64, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(PartitionProduceResponse, LogAppendTimeMs, INT64, 2, PROTO_VMAX, PROTO_NEVER, -1),
    PROTO_FIELD(PartitionProduceResponse, LogStartOffset, INT64, 5, PROTO_VMAX, PROTO_NEVER, -1),
    PROTO_STRUCTS(PartitionProduceResponse, RecordErrors, proto_BatchIndexAndErrorMessage, 8,
                  PROTO_VMAX, PROTO_NEVER),
    PROTO_FIELD(PartitionProduceResponse, ErrorMessage, STRING, 8, PROTO_VMAX, 8, 0),
};
static const struct proto_struct proto_PartitionProduceResponse =
    PROTO_LAYOUT(PartitionProduceResponse);

static const struct proto_field TopicProduceResponse_fields[] = {
    PROTO_FIELD(TopicProduceResponse, Name, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(TopicProduceResponse, PartitionResponses, proto_PartitionProduceResponse, 0,
                  PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_TopicProduceResponse = PROTO_LAYOUT(TopicProduceResponse);

static const struct proto_field ProduceResponse_fields[] = {
    PROTO_STRUCTS(ProduceResponse, Responses, proto_TopicProduceResponse, 0, PROTO_VMAX,
                  PROTO_NEVER),
    PROTO_FIELD(ProduceResponse, ThrottleTimeMs, INT32, 1, PROTO_VMAX, PROTO_NEVER, 0),
};
const struct proto_struct proto_ProduceResponse = PROTO_LAYOUT(ProduceResponse);
