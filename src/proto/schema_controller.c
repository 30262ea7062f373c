/* SPDX-License-Identifier: Apache-2.0 */
/* The field tables of the broker-to-controller APIs AlterPartition (key 56), BrokerRegistration
 * (62), BrokerHeartbeat (63), AllocateProducerIds (67) and Envelope (58, KIP-590), transcribed from
 * Kafka's JSON message schemas; see proto_int.h for the row format. Nested layouts come before the
 * structs that hold them. */
#include "proto/proto_int.h"

static const struct proto_field BrokerState_fields[] = {
    PROTO_FIELD(BrokerState, BrokerId, INT32, 3, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(BrokerState, BrokerEpoch, INT64, 3, PROTO_VMAX, PROTO_NEVER, -1),
};
static const struct proto_struct proto_BrokerState = PROTO_LAYOUT(BrokerState);

static const struct proto_field AlterPartitionRequestPartitionData_fields[] = {
    PROTO_FIELD(AlterPartitionRequestPartitionData, PartitionIndex, INT32, 0, PROTO_VMAX,
                PROTO_NEVER, 0),
    PROTO_FIELD(AlterPartitionRequestPartitionData, LeaderEpoch, INT32, 0, PROTO_VMAX, PROTO_NEVER,
                0),
    PROTO_ARRAY_OF(AlterPartitionRequestPartitionData, NewIsr, INT32, 0, 2, PROTO_NEVER),
    PROTO_STRUCTS(AlterPartitionRequestPartitionData, NewIsrWithEpochs, proto_BrokerState, 3,
                  PROTO_VMAX, PROTO_NEVER),
    PROTO_FIELD(AlterPartitionRequestPartitionData, LeaderRecoveryState, INT8, 1, PROTO_VMAX,
                PROTO_NEVER, 0),
    PROTO_FIELD(AlterPartitionRequestPartitionData, PartitionEpoch, INT32, 0, PROTO_VMAX,
                PROTO_NEVER, 0),
};
static const struct proto_struct proto_AlterPartitionRequestPartitionData =
    PROTO_LAYOUT(AlterPartitionRequestPartitionData);

static const struct proto_field AlterPartitionRequestTopicData_fields[] = {
    PROTO_FIELD(AlterPartitionRequestTopicData, TopicName, STRING, 0, 1, PROTO_NEVER, 0),
    PROTO_FIELD(AlterPartitionRequestTopicData, TopicId, UUID, 2, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(AlterPartitionRequestTopicData, Partitions,
                  proto_AlterPartitionRequestPartitionData, 0, PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_AlterPartitionRequestTopicData =
    PROTO_LAYOUT(AlterPartitionRequestTopicData);

static const struct proto_field AlterPartitionRequest_fields[] = {
    PROTO_FIELD(AlterPartitionRequest, BrokerId, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(AlterPartitionRequest, BrokerEpoch, INT64, 0, PROTO_VMAX, PROTO_NEVER, -1),
    PROTO_STRUCTS(AlterPartitionRequest, Topics, proto_AlterPartitionRequestTopicData, 0,
                  PROTO_VMAX, PROTO_NEVER),
};
const struct proto_struct proto_AlterPartitionRequest = PROTO_LAYOUT(AlterPartitionRequest);

static const struct proto_field AlterPartitionResponsePartitionData_fields[] = {
    PROTO_FIELD(AlterPartitionResponsePartitionData, PartitionIndex, INT32, 0, PROTO_VMAX,
                PROTO_NEVER, 0),
    PROTO_FIELD(AlterPartitionResponsePartitionData, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER,
                0),
    PROTO_FIELD(AlterPartitionResponsePartitionData, LeaderId, INT32, 0, PROTO_VMAX, PROTO_NEVER,
                0),
    PROTO_FIELD(AlterPartitionResponsePartitionData, LeaderEpoch, INT32, 0, PROTO_VMAX, PROTO_NEVER,
                0),
    PROTO_ARRAY_OF(AlterPartitionResponsePartitionData, Isr, INT32, 0, PROTO_VMAX, PROTO_NEVER),
    PROTO_FIELD(AlterPartitionResponsePartitionData, LeaderRecoveryState, INT8, 1, PROTO_VMAX,
                PROTO_NEVER, 0),
    PROTO_FIELD(AlterPartitionResponsePartitionData, PartitionEpoch, INT32, 0, PROTO_VMAX,
                PROTO_NEVER, 0),
};
static const struct proto_struct proto_AlterPartitionResponsePartitionData =
    PROTO_LAYOUT(AlterPartitionResponsePartitionData);

static const struct proto_field AlterPartitionResponseTopicData_fields[] = {
    PROTO_FIELD(AlterPartitionResponseTopicData, TopicName, STRING, 0, 1, PROTO_NEVER, 0),
    PROTO_FIELD(AlterPartitionResponseTopicData, TopicId, UUID, 2, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(AlterPartitionResponseTopicData, Partitions,
                  proto_AlterPartitionResponsePartitionData, 0, PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_AlterPartitionResponseTopicData =
    PROTO_LAYOUT(AlterPartitionResponseTopicData);

static const struct proto_field AlterPartitionResponse_fields[] = {
    PROTO_FIELD(AlterPartitionResponse, ThrottleTimeMs, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(AlterPartitionResponse, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(AlterPartitionResponse, Topics, proto_AlterPartitionResponseTopicData, 0,
                  PROTO_VMAX, PROTO_NEVER),
};
const struct proto_struct proto_AlterPartitionResponse = PROTO_LAYOUT(AlterPartitionResponse);

static const struct proto_field BrokerRegistrationListener_fields[] = {
    PROTO_FIELD(BrokerRegistrationListener, Name, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(BrokerRegistrationListener, Host, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(BrokerRegistrationListener, Port, UINT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(BrokerRegistrationListener, SecurityProtocol, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
static const struct proto_struct proto_BrokerRegistrationListener =
    PROTO_LAYOUT(BrokerRegistrationListener);

static const struct proto_field BrokerRegistrationFeature_fields[] = {
    PROTO_FIELD(BrokerRegistrationFeature, Name, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(BrokerRegistrationFeature, MinSupportedVersion, INT16, 0, PROTO_VMAX, PROTO_NEVER,
                0),
    PROTO_FIELD(BrokerRegistrationFeature, MaxSupportedVersion, INT16, 0, PROTO_VMAX, PROTO_NEVER,
                0),
};
static const struct proto_struct proto_BrokerRegistrationFeature =
    PROTO_LAYOUT(BrokerRegistrationFeature);

static const struct proto_field BrokerRegistrationRequest_fields[] = {
    PROTO_FIELD(BrokerRegistrationRequest, BrokerId, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(BrokerRegistrationRequest, ClusterId, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(BrokerRegistrationRequest, IncarnationId, UUID, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(BrokerRegistrationRequest, Listeners, proto_BrokerRegistrationListener, 0,
                  PROTO_VMAX, PROTO_NEVER),
    PROTO_STRUCTS(BrokerRegistrationRequest, Features, proto_BrokerRegistrationFeature, 0,
                  PROTO_VMAX, PROTO_NEVER),
    PROTO_FIELD(BrokerRegistrationRequest, Rack, STRING, 0, PROTO_VMAX, 0, 0),
    PROTO_FIELD(BrokerRegistrationRequest, IsMigratingZkBroker, BOOL, 1, PROTO_VMAX, PROTO_NEVER,
                0),
    PROTO_ARRAY_OF(BrokerRegistrationRequest, LogDirs, UUID, 2, PROTO_VMAX, PROTO_NEVER),
    PROTO_FIELD(BrokerRegistrationRequest, PreviousBrokerEpoch, INT64, 3, PROTO_VMAX, PROTO_NEVER,
                -1),
};
const struct proto_struct proto_BrokerRegistrationRequest = PROTO_LAYOUT(BrokerRegistrationRequest);

static const struct proto_field BrokerRegistrationResponse_fields[] = {
    PROTO_FIELD(BrokerRegistrationResponse, ThrottleTimeMs, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(BrokerRegistrationResponse, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(BrokerRegistrationResponse, BrokerEpoch, INT64, 0, PROTO_VMAX, PROTO_NEVER, -1),
};
const struct proto_struct proto_BrokerRegistrationResponse =
    PROTO_LAYOUT(BrokerRegistrationResponse);

static const struct proto_field BrokerHeartbeatRequest_fields[] = {
    PROTO_FIELD(BrokerHeartbeatRequest, BrokerId, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(BrokerHeartbeatRequest, BrokerEpoch, INT64, 0, PROTO_VMAX, PROTO_NEVER, -1),
    PROTO_FIELD(BrokerHeartbeatRequest, CurrentMetadataOffset, INT64, 0, PROTO_VMAX, PROTO_NEVER,
                0),
    PROTO_FIELD(BrokerHeartbeatRequest, WantFence, BOOL, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(BrokerHeartbeatRequest, WantShutDown, BOOL, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_TAGGED_ARRAY_OF(BrokerHeartbeatRequest, OfflineLogDirs, UUID, 1, PROTO_VMAX, 0),
};
const struct proto_struct proto_BrokerHeartbeatRequest = PROTO_LAYOUT(BrokerHeartbeatRequest);

static const struct proto_field BrokerHeartbeatResponse_fields[] = {
    PROTO_FIELD(BrokerHeartbeatResponse, ThrottleTimeMs, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(BrokerHeartbeatResponse, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(BrokerHeartbeatResponse, IsCaughtUp, BOOL, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(BrokerHeartbeatResponse, IsFenced, BOOL, 0, PROTO_VMAX, PROTO_NEVER, 1),
    PROTO_FIELD(BrokerHeartbeatResponse, ShouldShutDown, BOOL, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
const struct proto_struct proto_BrokerHeartbeatResponse = PROTO_LAYOUT(BrokerHeartbeatResponse);

static const struct proto_field AllocateProducerIdsRequest_fields[] = {
    PROTO_FIELD(AllocateProducerIdsRequest, BrokerId, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(AllocateProducerIdsRequest, BrokerEpoch, INT64, 0, PROTO_VMAX, PROTO_NEVER, -1),
};
const struct proto_struct proto_AllocateProducerIdsRequest =
    PROTO_LAYOUT(AllocateProducerIdsRequest);

static const struct proto_field AllocateProducerIdsResponse_fields[] = {
    PROTO_FIELD(AllocateProducerIdsResponse, ThrottleTimeMs, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(AllocateProducerIdsResponse, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(AllocateProducerIdsResponse, ProducerIdStart, INT64, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(AllocateProducerIdsResponse, ProducerIdLen, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
const struct proto_struct proto_AllocateProducerIdsResponse =
    PROTO_LAYOUT(AllocateProducerIdsResponse);

static const struct proto_field EnvelopeRequest_fields[] = {
    PROTO_FIELD(EnvelopeRequest, RequestData, BYTES, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(EnvelopeRequest, RequestPrincipal, BYTES, 0, PROTO_VMAX, 0, 0),
    PROTO_FIELD(EnvelopeRequest, ClientHostAddress, BYTES, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
const struct proto_struct proto_EnvelopeRequest = PROTO_LAYOUT(EnvelopeRequest);

static const struct proto_field EnvelopeResponse_fields[] = {
    PROTO_FIELD(EnvelopeResponse, ResponseData, BYTES, 0, PROTO_VMAX, 0, 0),
    PROTO_FIELD(EnvelopeResponse, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
const struct proto_struct proto_EnvelopeResponse = PROTO_LAYOUT(EnvelopeResponse);
