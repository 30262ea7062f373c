/* SPDX-License-Identifier: Apache-2.0 */
/* The field tables of the broker-to-controller APIs BrokerRegistration (key 62) and
 * AllocateProducerIds (67), transcribed from Kafka's JSON message schemas; see proto_int.h
 * for the row format. Nested layouts come before the structs that hold them. */
#include "proto/proto_int.h"

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
};
const struct proto_struct proto_BrokerRegistrationRequest = PROTO_LAYOUT(BrokerRegistrationRequest);

static const struct proto_field BrokerRegistrationResponse_fields[] = {
    PROTO_FIELD(BrokerRegistrationResponse, ThrottleTimeMs, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(BrokerRegistrationResponse, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(BrokerRegistrationResponse, BrokerEpoch, INT64, 0, PROTO_VMAX, PROTO_NEVER, -1),
};
const struct proto_struct proto_BrokerRegistrationResponse =
    PROTO_LAYOUT(BrokerRegistrationResponse);

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
