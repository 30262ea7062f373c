/* SPDX-License-Identifier: Apache-2.0 */
/* The field tables of SaslHandshake (17) and SaslAuthenticate (36), transcribed from Kafka's
 * JSON message schemas; see proto_int.h for the row format. */
#include "proto/proto_int.h"

static const struct proto_field SaslHandshakeRequest_fields[] = {
    PROTO_FIELD(SaslHandshakeRequest, Mechanism, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
const struct proto_struct proto_SaslHandshakeRequest = PROTO_LAYOUT(SaslHandshakeRequest);

static const struct proto_field SaslHandshakeResponse_fields[] = {
    PROTO_FIELD(SaslHandshakeResponse, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_ARRAY_OF(SaslHandshakeResponse, Mechanisms, STRING, 0, PROTO_VMAX, PROTO_NEVER),
};
const struct proto_struct proto_SaslHandshakeResponse = PROTO_LAYOUT(SaslHandshakeResponse);

static const struct proto_field SaslAuthenticateRequest_fields[] = {
    PROTO_FIELD(SaslAuthenticateRequest, AuthBytes, BYTES, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
const struct proto_struct proto_SaslAuthenticateRequest = PROTO_LAYOUT(SaslAuthenticateRequest);

static const struct proto_field SaslAuthenticateResponse_fields[] = {
    PROTO_FIELD(SaslAuthenticateResponse, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(SaslAuthenticateResponse, ErrorMessage, STRING, 0, PROTO_VMAX, 0, 0),
    PROTO_FIELD(SaslAuthenticateResponse, AuthBytes, BYTES, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(SaslAuthenticateResponse, SessionLifetimeMs, INT64, 1, PROTO_VMAX, PROTO_NEVER, 0),
};
const struct proto_struct proto_SaslAuthenticateResponse = PROTO_LAYOUT(SaslAuthenticateResponse);
