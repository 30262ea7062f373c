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

static const struct proto_field UserName_fields[] = {
    PROTO_FIELD(UserName, Name, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
static const struct proto_struct proto_UserName = PROTO_LAYOUT(UserName);

static const struct proto_field DescribeUserScramCredentialsRequest_fields[] = {
    PROTO_STRUCTS(DescribeUserScramCredentialsRequest, Users, proto_UserName, 0, PROTO_VMAX, 0),
};
const struct proto_struct proto_DescribeUserScramCredentialsRequest =
    PROTO_LAYOUT(DescribeUserScramCredentialsRequest);

static const struct proto_field CredentialInfo_fields[] = {
    PROTO_FIELD(CredentialInfo, Mechanism, INT8, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(CredentialInfo, Iterations, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
static const struct proto_struct proto_CredentialInfo = PROTO_LAYOUT(CredentialInfo);

static const struct proto_field DescribeUserScramCredentialsResult_fields[] = {
    PROTO_FIELD(DescribeUserScramCredentialsResult, User, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DescribeUserScramCredentialsResult, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER,
                0),
    PROTO_FIELD(DescribeUserScramCredentialsResult, ErrorMessage, STRING, 0, PROTO_VMAX, 0, 0),
    PROTO_STRUCTS(DescribeUserScramCredentialsResult, CredentialInfos, proto_CredentialInfo, 0,
                  PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_DescribeUserScramCredentialsResult =
    PROTO_LAYOUT(DescribeUserScramCredentialsResult);

static const struct proto_field DescribeUserScramCredentialsResponse_fields[] = {
    PROTO_FIELD(DescribeUserScramCredentialsResponse, ThrottleTimeMs, INT32, 0, PROTO_VMAX,
                PROTO_NEVER, 0),
    PROTO_FIELD(DescribeUserScramCredentialsResponse, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER,
                0),
    PROTO_FIELD(DescribeUserScramCredentialsResponse, ErrorMessage, STRING, 0, PROTO_VMAX, 0, 0),
    PROTO_STRUCTS(DescribeUserScramCredentialsResponse, Results,
                  proto_DescribeUserScramCredentialsResult, 0, PROTO_VMAX, PROTO_NEVER),
};
const struct proto_struct proto_DescribeUserScramCredentialsResponse =
    PROTO_LAYOUT(DescribeUserScramCredentialsResponse);

static const struct proto_field ScramCredentialDeletion_fields[] = {
    PROTO_FIELD(ScramCredentialDeletion, Name, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(ScramCredentialDeletion, Mechanism, INT8, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
static const struct proto_struct proto_ScramCredentialDeletion =
    PROTO_LAYOUT(ScramCredentialDeletion);

static const struct proto_field ScramCredentialUpsertion_fields[] = {
    PROTO_FIELD(ScramCredentialUpsertion, Name, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(ScramCredentialUpsertion, Mechanism, INT8, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(ScramCredentialUpsertion, Iterations, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(ScramCredentialUpsertion, Salt, BYTES, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(ScramCredentialUpsertion, SaltedPassword, BYTES, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
static const struct proto_struct proto_ScramCredentialUpsertion =
    PROTO_LAYOUT(ScramCredentialUpsertion);

static const struct proto_field AlterUserScramCredentialsRequest_fields[] = {
    PROTO_STRUCTS(AlterUserScramCredentialsRequest, Deletions, proto_ScramCredentialDeletion, 0,
                  PROTO_VMAX, PROTO_NEVER),
    PROTO_STRUCTS(AlterUserScramCredentialsRequest, Upsertions, proto_ScramCredentialUpsertion, 0,
                  PROTO_VMAX, PROTO_NEVER),
};
const struct proto_struct proto_AlterUserScramCredentialsRequest =
    PROTO_LAYOUT(AlterUserScramCredentialsRequest);

static const struct proto_field AlterUserScramCredentialsResult_fields[] = {
    PROTO_FIELD(AlterUserScramCredentialsResult, User, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(AlterUserScramCredentialsResult, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(AlterUserScramCredentialsResult, ErrorMessage, STRING, 0, PROTO_VMAX, 0, 0),
};
static const struct proto_struct proto_AlterUserScramCredentialsResult =
    PROTO_LAYOUT(AlterUserScramCredentialsResult);

static const struct proto_field AlterUserScramCredentialsResponse_fields[] = {
    PROTO_FIELD(AlterUserScramCredentialsResponse, ThrottleTimeMs, INT32, 0, PROTO_VMAX,
                PROTO_NEVER, 0),
    PROTO_STRUCTS(AlterUserScramCredentialsResponse, Results, proto_AlterUserScramCredentialsResult,
                  0, PROTO_VMAX, PROTO_NEVER),
};
const struct proto_struct proto_AlterUserScramCredentialsResponse =
    PROTO_LAYOUT(AlterUserScramCredentialsResponse);
