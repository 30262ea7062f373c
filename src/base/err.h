/* SPDX-License-Identifier: Apache-2.0 */
/* err: the one error enum. Kafka wire codes are the positive values (they go on the wire
 * unchanged); conditions internal to the broker are negative and map to
 * UNKNOWN_SERVER_ERROR (-1) on the wire. Functions return int: 0 = ok. */
#ifndef TALLY_BASE_ERR_H
#define TALLY_BASE_ERR_H

enum err {
    ERR_NONE = 0,
    ERR_UNKNOWN_SERVER_ERROR = -1, /* the one wire code that is negative */
    ERR_OFFSET_OUT_OF_RANGE = 1,
    ERR_CORRUPT_MESSAGE = 2,
    ERR_UNKNOWN_TOPIC_OR_PARTITION = 3,
    ERR_INVALID_FETCH_SIZE = 4,
    ERR_LEADER_NOT_AVAILABLE = 5,
    ERR_NOT_LEADER_OR_FOLLOWER = 6,
    ERR_REQUEST_TIMED_OUT = 7,
    ERR_BROKER_NOT_AVAILABLE = 8,
    ERR_REPLICA_NOT_AVAILABLE = 9,
    ERR_MESSAGE_TOO_LARGE = 10,
    ERR_NETWORK_EXCEPTION = 13,
    ERR_COORDINATOR_LOAD_IN_PROGRESS = 14,
    ERR_COORDINATOR_NOT_AVAILABLE = 15,
    ERR_NOT_COORDINATOR = 16,
    ERR_INVALID_TOPIC_EXCEPTION = 17,
    ERR_RECORD_LIST_TOO_LARGE = 18,
    ERR_NOT_ENOUGH_REPLICAS = 19,
    ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND = 20,
    ERR_INVALID_REQUIRED_ACKS = 21,
    ERR_ILLEGAL_GENERATION = 22,
    ERR_TOPIC_AUTHORIZATION_FAILED = 29,
    ERR_CLUSTER_AUTHORIZATION_FAILED = 31,
    ERR_INVALID_TIMESTAMP = 32,
    ERR_UNSUPPORTED_VERSION = 35,
    ERR_TOPIC_ALREADY_EXISTS = 36,
    ERR_INVALID_PARTITIONS = 37,
    ERR_INVALID_REPLICATION_FACTOR = 38,
    ERR_INVALID_REPLICA_ASSIGNMENT = 39,
    ERR_INVALID_CONFIG = 40,
    ERR_NOT_CONTROLLER = 41,
    ERR_INVALID_REQUEST = 42,
    ERR_UNSUPPORTED_FOR_MESSAGE_FORMAT = 43,
    ERR_POLICY_VIOLATION = 44,
    ERR_OUT_OF_ORDER_SEQUENCE_NUMBER = 45,
    ERR_DUPLICATE_SEQUENCE_NUMBER = 46,
    ERR_INVALID_PRODUCER_EPOCH = 47,
    ERR_INVALID_TXN_STATE = 48,
    ERR_INVALID_PRODUCER_ID_MAPPING = 49,
    ERR_INVALID_TRANSACTION_TIMEOUT = 50,
    ERR_CONCURRENT_TRANSACTIONS = 51,
    ERR_TRANSACTION_COORDINATOR_FENCED = 52,
    ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53,
    ERR_KAFKA_STORAGE_ERROR = 56,
    ERR_UNKNOWN_PRODUCER_ID = 59,
    ERR_FETCH_SESSION_ID_NOT_FOUND = 70,
    ERR_INVALID_FETCH_SESSION_EPOCH = 71,
    ERR_TOPIC_DELETION_DISABLED = 73,
    ERR_FENCED_LEADER_EPOCH = 74,
    ERR_UNKNOWN_LEADER_EPOCH = 75,
    ERR_INVALID_RECORD = 87,
    ERR_THROTTLING_QUOTA_EXCEEDED = 89,
    ERR_PRODUCER_FENCED = 90,
    ERR_RESOURCE_NOT_FOUND = 91,
    ERR_DUPLICATE_RESOURCE = 92,
    ERR_UNKNOWN_TOPIC_ID = 100,
    ERR_INCONSISTENT_TOPIC_ID = 103,

    /* Internal conditions: never on the wire as such. */
    ERR_NOMEM = -1001,     /* allocation failed or a per-request bound was hit */
    ERR_IO = -1002,        /* a system call failed; the caller logged which */
    ERR_PARSE = -1003,     /* malformed input (frame, file, record) */
    ERR_TRUNCATED = -1004, /* input ended early */
    ERR_EXISTS = -1005,
    ERR_NOTFOUND = -1006,
    ERR_SHUTDOWN = -1007,
};

/* The Kafka name of an error (e.g. "TOPIC_ALREADY_EXISTS"), or "UNKNOWN" for codes this
 * table lacks. Never NULL. */
const char *err_name(int err);

/* The code to put on the wire for err: itself when positive or zero, -1 otherwise. */
static inline int err_wire(int err)
{
    return err >= 0 ? err : -1;
}

#endif
