/* SPDX-License-Identifier: Apache-2.0 */
/* The authorized-operations bit fields Metadata, DescribeCluster and DescribeGroups answer
 * when a client asks for them. Tally has no authorizer, so, as Kafka does without one, every
 * operation the resource type supports is authorized (Kafka's AclEntry.supportedOperations). */
#include "proto/proto.h"

#define OP(o) (1 << PROTO_ACL_OP_##o)

int32_t proto_authorized_ops(int8_t resource_type)
{
    switch (resource_type) {
    case PROTO_RESOURCE_TOPIC:
        return OP(READ) | OP(WRITE) | OP(CREATE) | OP(DESCRIBE) | OP(DELETE) | OP(ALTER) |
               OP(DESCRIBE_CONFIGS) | OP(ALTER_CONFIGS);
    case PROTO_RESOURCE_GROUP:
        return OP(READ) | OP(DESCRIBE) | OP(DELETE);
    case PROTO_RESOURCE_CLUSTER:
        return OP(CREATE) | OP(CLUSTER_ACTION) | OP(DESCRIBE_CONFIGS) | OP(ALTER_CONFIGS) |
               OP(IDEMPOTENT_WRITE) | OP(ALTER) | OP(DESCRIBE);
    case PROTO_RESOURCE_TRANSACTIONAL_ID:
        return OP(DESCRIBE) | OP(WRITE);
    case PROTO_RESOURCE_DELEGATION_TOKEN:
        return OP(DESCRIBE);
    case PROTO_RESOURCE_USER:
        return OP(CREATE_TOKENS) | OP(DESCRIBE_TOKENS);
    default:
        return 0;
    }
}
