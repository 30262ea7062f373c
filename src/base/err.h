/* SPDX-License-Identifier: Apache-2.0 */
/* err: the one error enum. Kafka wire codes are the positive values (they go on the wire
 * unchanged); conditions internal to the broker are negative and map to
 * UNKNOWN_SERVER_ERROR (-1) on the wire. Functions return int: 0 = ok.
 *
 * errno and ERR_IO. errno is read once, at the system call that failed, before any other
 * call (a log line, a close or an unlink on the error path may change it), and from there
 * it travels as a value, as libuv does with UV__ERR(errno):
 * - a small helper that wraps system calls returns 0 (or a count) or `-errno` of the call
 *   that failed — never -1 leaving the reason in errno for its caller to read later;
 * - the code that turns the failure into ERR_IO logs the call, the path and strerror() of
 *   that value on the spot, and returns ERR_IO;
 * - a caller that gets ERR_IO never looks at errno: the reason is already logged. A reason a
 *   caller must act on gets its own code instead (ERR_NOTFOUND for a missing file).
 * The table of system calls that tests replace (struct sysio, base/sysio.h) holds the system
 * calls themselves and keeps POSIX's -1-and-errno. */
#ifndef TALLY_BASE_ERR_H
#define TALLY_BASE_ERR_H

/* Every error: X(NAME, value), one line per code, Kafka wire codes in numeric order, then
 * the internal ones from -1001 down. The enum below and err_name() are generated from it, so
 * a new code is one line here. */
#define ERR_LIST(X)                                                                                \
    X(NONE, 0)                                                                                     \
    X(UNKNOWN_SERVER_ERROR, -1) /* the one wire code that is negative */                           \
    X(OFFSET_OUT_OF_RANGE, 1)                                                                      \
    X(CORRUPT_MESSAGE, 2)                                                                          \
    X(UNKNOWN_TOPIC_OR_PARTITION, 3)                                                               \
    X(INVALID_FETCH_SIZE, 4)                                                                       \
    X(LEADER_NOT_AVAILABLE, 5)                                                                     \
    X(NOT_LEADER_OR_FOLLOWER, 6)                                                                   \
    X(REQUEST_TIMED_OUT, 7)                                                                        \
    X(BROKER_NOT_AVAILABLE, 8)                                                                     \
    X(REPLICA_NOT_AVAILABLE, 9)                                                                    \
    X(MESSAGE_TOO_LARGE, 10)                                                                       \
    X(OFFSET_METADATA_TOO_LARGE, 12)                                                               \
    X(NETWORK_EXCEPTION, 13)                                                                       \
    X(COORDINATOR_LOAD_IN_PROGRESS, 14)                                                            \
    X(COORDINATOR_NOT_AVAILABLE, 15)                                                               \
    X(NOT_COORDINATOR, 16)                                                                         \
    X(INVALID_TOPIC_EXCEPTION, 17)                                                                 \
    X(RECORD_LIST_TOO_LARGE, 18)                                                                   \
    X(NOT_ENOUGH_REPLICAS, 19)                                                                     \
    X(NOT_ENOUGH_REPLICAS_AFTER_APPEND, 20)                                                        \
    X(INVALID_REQUIRED_ACKS, 21)                                                                   \
    X(ILLEGAL_GENERATION, 22)                                                                      \
    X(INCONSISTENT_GROUP_PROTOCOL, 23)                                                             \
    X(INVALID_GROUP_ID, 24)                                                                        \
    X(UNKNOWN_MEMBER_ID, 25)                                                                       \
    X(INVALID_SESSION_TIMEOUT, 26)                                                                 \
    X(REBALANCE_IN_PROGRESS, 27)                                                                   \
    X(INVALID_COMMIT_OFFSET_SIZE, 28)                                                              \
    X(TOPIC_AUTHORIZATION_FAILED, 29)                                                              \
    X(GROUP_AUTHORIZATION_FAILED, 30)                                                              \
    X(CLUSTER_AUTHORIZATION_FAILED, 31)                                                            \
    X(INVALID_TIMESTAMP, 32)                                                                       \
    X(UNSUPPORTED_SASL_MECHANISM, 33)                                                              \
    X(ILLEGAL_SASL_STATE, 34)                                                                      \
    X(UNSUPPORTED_VERSION, 35)                                                                     \
    X(TOPIC_ALREADY_EXISTS, 36)                                                                    \
    X(INVALID_PARTITIONS, 37)                                                                      \
    X(INVALID_REPLICATION_FACTOR, 38)                                                              \
    X(INVALID_REPLICA_ASSIGNMENT, 39)                                                              \
    X(INVALID_CONFIG, 40)                                                                          \
    X(NOT_CONTROLLER, 41)                                                                          \
    X(INVALID_REQUEST, 42)                                                                         \
    X(UNSUPPORTED_FOR_MESSAGE_FORMAT, 43)                                                          \
    X(POLICY_VIOLATION, 44)                                                                        \
    X(OUT_OF_ORDER_SEQUENCE_NUMBER, 45)                                                            \
    X(DUPLICATE_SEQUENCE_NUMBER, 46)                                                               \
    X(INVALID_PRODUCER_EPOCH, 47)                                                                  \
    X(INVALID_TXN_STATE, 48)                                                                       \
    X(INVALID_PRODUCER_ID_MAPPING, 49)                                                             \
    X(INVALID_TRANSACTION_TIMEOUT, 50)                                                             \
    X(CONCURRENT_TRANSACTIONS, 51)                                                                 \
    X(TRANSACTION_COORDINATOR_FENCED, 52)                                                          \
    X(TRANSACTIONAL_ID_AUTHORIZATION_FAILED, 53)                                                   \
    X(SECURITY_DISABLED, 54)                                                                       \
    X(OPERATION_NOT_ATTEMPTED, 55)                                                                 \
    X(KAFKA_STORAGE_ERROR, 56)                                                                     \
    X(LOG_DIR_NOT_FOUND, 57)                                                                       \
    X(SASL_AUTHENTICATION_FAILED, 58)                                                              \
    X(UNKNOWN_PRODUCER_ID, 59)                                                                     \
    X(REASSIGNMENT_IN_PROGRESS, 60)                                                                \
    X(NON_EMPTY_GROUP, 68)                                                                         \
    X(GROUP_ID_NOT_FOUND, 69)                                                                      \
    X(FETCH_SESSION_ID_NOT_FOUND, 70)                                                              \
    X(INVALID_FETCH_SESSION_EPOCH, 71)                                                             \
    X(TOPIC_DELETION_DISABLED, 73)                                                                 \
    X(FENCED_LEADER_EPOCH, 74)                                                                     \
    X(UNKNOWN_LEADER_EPOCH, 75)                                                                    \
    X(UNSUPPORTED_COMPRESSION_TYPE, 76)                                                            \
    X(STALE_BROKER_EPOCH, 77)                                                                      \
    X(OFFSET_NOT_AVAILABLE, 78)                                                                    \
    X(MEMBER_ID_REQUIRED, 79)                                                                      \
    X(PREFERRED_LEADER_NOT_AVAILABLE, 80)                                                          \
    X(GROUP_MAX_SIZE_REACHED, 81)                                                                  \
    X(FENCED_INSTANCE_ID, 82)                                                                      \
    X(ELIGIBLE_LEADERS_NOT_AVAILABLE, 83)                                                          \
    X(ELECTION_NOT_NEEDED, 84)                                                                     \
    X(NO_REASSIGNMENT_IN_PROGRESS, 85)                                                             \
    X(GROUP_SUBSCRIBED_TO_TOPIC, 86)                                                               \
    X(INVALID_RECORD, 87)                                                                          \
    X(UNSTABLE_OFFSET_COMMIT, 88)                                                                  \
    X(THROTTLING_QUOTA_EXCEEDED, 89)                                                               \
    X(PRODUCER_FENCED, 90)                                                                         \
    X(RESOURCE_NOT_FOUND, 91)                                                                      \
    X(DUPLICATE_RESOURCE, 92)                                                                      \
    X(UNACCEPTABLE_CREDENTIAL, 93)                                                                 \
    X(INVALID_UPDATE_VERSION, 95)                                                                  \
    X(PRINCIPAL_DESERIALIZATION_FAILURE, 97)                                                       \
    X(UNKNOWN_TOPIC_ID, 100)                                                                       \
    X(DUPLICATE_BROKER_REGISTRATION, 101)                                                          \
    X(INCONSISTENT_TOPIC_ID, 103)                                                                  \
    X(INCONSISTENT_CLUSTER_ID, 104)                                                                \
    X(TRANSACTIONAL_ID_NOT_FOUND, 105)                                                             \
    X(INELIGIBLE_REPLICA, 107)                                                                     \
    X(NEW_LEADER_ELECTED, 108)                                                                     \
    /* Internal conditions: never on the wire as such. */                                          \
    X(NOMEM, -1001)     /* allocation failed or a per-request bound was hit */                     \
    X(IO, -1002)        /* a system call failed; the caller logged which */                        \
    X(PARSE, -1003)     /* malformed input (frame, file, record) */                                \
    X(TRUNCATED, -1004) /* input ended early */                                                    \
    X(EXISTS, -1005)                                                                               \
    X(NOTFOUND, -1006)                                                                             \
    X(SHUTDOWN, -1007)                                                                             \
    X(WOULD_BLOCK, -1008) /* an event-loop read found a page not in the page cache */              \
    /* end of ERR_LIST */

enum err {
#define ERR_ENUM_ENTRY(name, value) ERR_##name = (value),
    ERR_LIST(ERR_ENUM_ENTRY)
#undef ERR_ENUM_ENTRY
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
