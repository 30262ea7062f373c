/* SPDX-License-Identifier: Apache-2.0 */
/* The field tables of DescribeClientQuotas (48) and AlterClientQuotas (49), transcribed from
 * Kafka's JSON message schemas; see proto_int.h for the row format. */
#include "proto/proto_int.h"

static const struct proto_field ComponentData_fields[] = {
    PROTO_FIELD(ComponentData, EntityType, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(ComponentData, MatchType, INT8, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(ComponentData, Match, STRING, 0, PROTO_VMAX, 0, 0),
};
static const struct proto_struct proto_ComponentData = PROTO_LAYOUT(ComponentData);

static const struct proto_field DescribeClientQuotasRequest_fields[] = {
    PROTO_STRUCTS(DescribeClientQuotasRequest, Components, proto_ComponentData, 0, PROTO_VMAX,
                  PROTO_NEVER),
    PROTO_FIELD(DescribeClientQuotasRequest, Strict, BOOL, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
const struct proto_struct proto_DescribeClientQuotasRequest =
    PROTO_LAYOUT(DescribeClientQuotasRequest);

static const struct proto_field EntityData_fields[] = {
    PROTO_FIELD(EntityData, EntityType, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(EntityData, EntityName, STRING, 0, PROTO_VMAX, 0, 0),
};
static const struct proto_struct proto_EntityData = PROTO_LAYOUT(EntityData);

static const struct proto_field ValueData_fields[] = {
    PROTO_FIELD(ValueData, Key, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(ValueData, Value, FLOAT64, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
static const struct proto_struct proto_ValueData = PROTO_LAYOUT(ValueData);

static const struct proto_field EntryData_fields[] = {
    PROTO_STRUCTS(EntryData, Entity, proto_EntityData, 0, PROTO_VMAX, PROTO_NEVER),
    PROTO_STRUCTS(EntryData, Values, proto_ValueData, 0, PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_EntryData = PROTO_LAYOUT(EntryData);

static const struct proto_field DescribeClientQuotasResponse_fields[] = {
    PROTO_FIELD(DescribeClientQuotasResponse, ThrottleTimeMs, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DescribeClientQuotasResponse, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DescribeClientQuotasResponse, ErrorMessage, STRING, 0, PROTO_VMAX, 0, 0),
    PROTO_STRUCTS(DescribeClientQuotasResponse, Entries, proto_EntryData, 0, PROTO_VMAX, 0),
};
const struct proto_struct proto_DescribeClientQuotasResponse =
    PROTO_LAYOUT(DescribeClientQuotasResponse);

static const struct proto_field OpData_fields[] = {
    PROTO_FIELD(OpData, Key, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(OpData, Value, FLOAT64, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(OpData, Remove, BOOL, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
static const struct proto_struct proto_OpData = PROTO_LAYOUT(OpData);

static const struct proto_field AlterEntryData_fields[] = {
    PROTO_STRUCTS(AlterEntryData, Entity, proto_EntityData, 0, PROTO_VMAX, PROTO_NEVER),
    PROTO_STRUCTS(AlterEntryData, Ops, proto_OpData, 0, PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_AlterEntryData = PROTO_LAYOUT(AlterEntryData);

static const struct proto_field AlterClientQuotasRequest_fields[] = {
    PROTO_STRUCTS(AlterClientQuotasRequest, Entries, proto_AlterEntryData, 0, PROTO_VMAX,
                  PROTO_NEVER),
    PROTO_FIELD(AlterClientQuotasRequest, ValidateOnly, BOOL, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
const struct proto_struct proto_AlterClientQuotasRequest = PROTO_LAYOUT(AlterClientQuotasRequest);

static const struct proto_field AlterEntryResult_fields[] = {
    PROTO_FIELD(AlterEntryResult, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(AlterEntryResult, ErrorMessage, STRING, 0, PROTO_VMAX, 0, 0),
    PROTO_STRUCTS(AlterEntryResult, Entity, proto_EntityData, 0, PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_AlterEntryResult = PROTO_LAYOUT(AlterEntryResult);

static const struct proto_field AlterClientQuotasResponse_fields[] = {
    PROTO_FIELD(AlterClientQuotasResponse, ThrottleTimeMs, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(AlterClientQuotasResponse, Entries, proto_AlterEntryResult, 0, PROTO_VMAX,
                  PROTO_NEVER),
};
const struct proto_struct proto_AlterClientQuotasResponse = PROTO_LAYOUT(AlterClientQuotasResponse);
