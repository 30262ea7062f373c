/* SPDX-License-Identifier: Apache-2.0 */
/* Writes the fuzzers' seed corpora: one small, valid request per declared API at its lowest,
 * first flexible and highest version. Plain, each is a frame without its 4-byte size prefix
 * (what fuzz_request.c takes). With --dispatch, each is [API key][version - min][body] (what
 * fuzz_dispatch.c takes), plus requests that make sense to a single broker: topics with one
 * replica, an idempotent and a gzip-compressed Produce, and (*-sasl, the key's bit 7 set) some
 * on fuzz_dispatch's SASL listener. Usage: make_seeds [--dispatch] [dir]
 * (default fuzz/seeds). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "proto/proto.h"

static int32_t broker_ids[] = {1, 2, 3};
static int32_t partition_ids[] = {0, 1, 2};
static char *config_keys[] = {"retention.ms", "cleanup.policy"};
static char *topic_names[] = {"orders", "payments"};

static struct MetadataRequestTopic metadata_topics[] = {{{{0}}, "orders"}, {{{1}}, "payments"}};
static struct MetadataRequest metadata = {.Topics = {metadata_topics, 2},
                                          .AllowAutoTopicCreation = true,
                                          .IncludeTopicAuthorizedOperations = true};

static struct ApiVersionsRequest api_versions = {"tally-seed", "1.0"};

static struct CreatableReplicaAssignment assignments[] = {{0, {broker_ids, 3}},
                                                          {1, {broker_ids + 1, 2}}};
static struct CreatableTopicConfig topic_configs[] = {{"retention.ms", "1000"},
                                                      {"compression.type", NULL}};
static struct CreatableTopic creatable[] = {
    {"orders", 3, 2, {NULL, 0}, {topic_configs, 2}},
    {"payments", -1, -1, {assignments, 2}, {NULL, 0}},
};
static struct CreateTopicsRequest create_topics = {{creatable, 2}, 30000, true};

static struct DeleteTopicState delete_states[] = {{"orders", {{0}}}, {NULL, {{7, 7, 7}}}};
static struct DeleteTopicsRequest delete_topics = {{delete_states, 2}, {topic_names, 2}, 15000};

static struct DescribeConfigsResource describe_resources[] = {
    {2, "orders", {config_keys, 2}},
    {4, "1", {NULL, -1}},
};
static struct DescribeConfigsRequest describe_configs = {{describe_resources, 2}, true, true};

static struct AlterableConfig alter_entries[] = {{"retention.ms", "5000"}, {"segment.ms", NULL}};
static struct AlterConfigsResource alter_resources[] = {{2, "orders", {alter_entries, 2}}};
static struct AlterConfigsRequest alter_configs = {{alter_resources, 1}, false};

static struct CreatePartitionsAssignment partition_assignments[] = {{{broker_ids, 2}},
                                                                    {{broker_ids + 2, 1}}};
static struct CreatePartitionsTopic partition_topics[] = {
    {"orders", 5, {partition_assignments, 2}},
    {"payments", 4, {NULL, -1}},
};
static struct CreatePartitionsRequest create_partitions = {{partition_topics, 2}, 10000, false};

static struct IncrementalAlterableConfig incremental_entries[] = {
    {"retention.ms", 0, "7000"}, {"cleanup.policy", 2, "compact"}, {"segment.ms", 1, NULL}};
static struct IncrementalAlterConfigsResource incremental_resources[] = {
    {2, "orders", {incremental_entries, 3}}};
static struct IncrementalAlterConfigsRequest incremental_alter_configs = {
    {incremental_resources, 1}, true};

static struct DescribeClusterRequest describe_cluster = {true, 1, true};

/* A RecordBatch v2 holding one record (key null, value "hello"), so Produce seeds carry
 * what a real producer sends; its CRC is filled in by make_record_batch(). */
static uint8_t record_batch[] = {
    0,    0,    0,    0,    0,    0,    0,    0,    /* baseOffset */
    0,    0,    0,    61,                           /* batchLength: the bytes after this field */
    0xff, 0xff, 0xff, 0xff,                         /* partitionLeaderEpoch -1 */
    2,                                              /* magic */
    0,    0,    0,    0,                            /* crc: CRC-32C of attributes..end */
    0,    0,                                        /* attributes */
    0,    0,    0,    0,                            /* lastOffsetDelta */
    0,    0,    1,    0x8c, 0xb5, 0x0b, 0x7b, 0x00, /* baseTimestamp */
    0,    0,    1,    0x8c, 0xb5, 0x0b, 0x7b, 0x00, /* maxTimestamp */
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, /* producerId -1 */
    0xff, 0xff,                                     /* producerEpoch -1 */
    0xff, 0xff, 0xff, 0xff,                         /* baseSequence -1 */
    0,    0,    0,    1,                            /* records: 1 */
    0x16,                                           /* record length 11 (zigzag varint) */
    0,                                              /* attributes */
    0,    0,                                        /* timestampDelta, offsetDelta */
    0x01,                                           /* key length -1: null */
    0x0a, 'h',  'e',  'l',  'l',  'o',              /* value length 5, value */
    0,                                              /* headers: 0 */
};

static uint32_t crc32c(const uint8_t *p, size_t n)
{
    uint32_t c = 0xffffffff;
    while (n--) {
        c ^= *p++;
        for (int k = 0; k < 8; k++)
            c = c >> 1 ^ (0x82f63b78 & (0u - (c & 1)));
    }
    return ~c;
}

static void make_record_batch(void)
{
    uint32_t crc = crc32c(record_batch + 21, sizeof record_batch - 21);
    for (int i = 0; i < 4; i++)
        record_batch[17 + i] = (uint8_t)(crc >> (24 - 8 * i));
}

static struct PartitionProduceData produce_partitions[] = {
    {0, {record_batch, (int32_t)sizeof record_batch, NULL}},
    {1, {NULL, -1, NULL}},
};
static struct TopicProduceData produce_topics[] = {{"orders", {produce_partitions, 2}}};
static struct ProduceRequest produce = {"txn-1", -1, 30000, {produce_topics, 1}};

static struct FetchPartition fetch_partitions[] = {{0, 5, 100, 4, -1, 1048576},
                                                   {1, -1, 0, -1, 0, 65536}};
static struct FetchTopic fetch_topics[] = {{"orders", {{0x4f, 0x72}}, {fetch_partitions, 2}}};
static struct ForgottenTopic forgotten_topics[] = {
    {"payments", {{0x70, 0x61}}, {partition_ids, 2}}};
static struct FetchRequest fetch = {
    "cluster-1",           -1,      500, 1, 52428800, 1, 17, 3, {fetch_topics, 1},
    {forgotten_topics, 1}, "rack-a"};

static struct ListOffsetsPartition list_offsets_partitions[] = {{0, 5, -1, 1}, {1, -1, -2, 1}};
static struct ListOffsetsTopic list_offsets_topics[] = {{"orders", {list_offsets_partitions, 2}}};
static struct ListOffsetsRequest list_offsets = {-1, 1, {list_offsets_topics, 1}};

static struct DeleteRecordsPartition delete_records_partitions[] = {{0, 42}, {2, -1}};
static struct DeleteRecordsTopic delete_records_topics[] = {
    {"orders", {delete_records_partitions, 2}}};
static struct DeleteRecordsRequest delete_records = {{delete_records_topics, 1}, 30000};

static struct InitProducerIdRequest init_producer_id = {"txn-1", 60000, 1000, 3};

static struct DescribeProducersTopicRequest describe_producers_topics[] = {
    {"orders", {partition_ids, 3}}, {"payments", {NULL, 0}}};
static struct DescribeProducersRequest describe_producers = {{describe_producers_topics, 2}};

/* The group coordinator's APIs. */
static char *group_ids[] = {"orders-app", "billing"};
static struct OffsetCommitRequestPartition commit_partitions[] = {{0, 42, 3, -1, "m"},
                                                                  {1, 7, -1, 1700000000000, NULL}};
static struct OffsetCommitRequestTopic commit_topics[] = {{"orders", {commit_partitions, 2}}};
static struct OffsetCommitRequest offset_commit = {"orders-app", 5,        "member-1",
                                                   "instance-1", 86400000, {commit_topics, 1}};
static struct OffsetFetchRequestTopic fetch_offsets_topics[] = {{"orders", {partition_ids, 2}}};
static struct OffsetFetchRequestTopics fetch_offsets_topics8[] = {{"orders", {partition_ids, 3}}};
static struct OffsetFetchRequestGroup fetch_offsets_groups[] = {
    {"orders-app", {fetch_offsets_topics8, 1}}, {"billing", {NULL, -1}}};
static struct OffsetFetchRequest offset_fetch = {
    "orders-app", {fetch_offsets_topics, 1}, {fetch_offsets_groups, 2}, true};
static struct FindCoordinatorRequest find_coordinator = {"orders-app", 0, {group_ids, 2}};
static struct JoinGroupRequestProtocol join_protocols[] = {
    /* ConsumerProtocolSubscription v0: topics ["orders"], no user data */
    {"range", {(const uint8_t *)"\0\0\0\0\0\1\0\6orders\377\377\377\377", 18, NULL}},
    {"cooperative-sticky", {NULL, 0, NULL}}};
static struct JoinGroupRequest join_group = {
    "orders-app", 45000, 300000, "", "instance-1", "consumer", {join_protocols, 2}, "rejoin"};
static struct HeartbeatRequest heartbeat = {"orders-app", 5, "member-1", "instance-1"};
static struct MemberIdentity leaving[] = {{"member-1", NULL, "closing"}, {"", "instance-2", NULL}};
static struct LeaveGroupRequest leave_group = {"orders-app", "member-1", {leaving, 2}};
static struct SyncGroupRequestAssignment sync_assignments[] = {
    {"member-1",
     {(const uint8_t *)"\0\0\0\0\0\0\377\377\377\377", 10, NULL}}}; /* empty assignment */
static struct SyncGroupRequest sync_group = {"orders-app", 5,       "member-1",           NULL,
                                             "consumer",   "range", {sync_assignments, 1}};
static struct DescribeGroupsRequest describe_groups = {{group_ids, 2}, true};
static char *group_states[] = {"Stable", "Empty"};
static struct ListGroupsRequest list_groups = {{group_states, 2}};
static struct DeleteGroupsRequest delete_groups = {{group_ids, 2}};
static struct OffsetDeleteRequestPartition offset_delete_partitions[] = {{0}, {2}};
static struct OffsetDeleteRequestTopic offset_delete_topics[] = {
    {"orders", {offset_delete_partitions, 2}}};
static struct OffsetDeleteRequest offset_delete = {"orders-app", {offset_delete_topics, 1}};

/* The transaction coordinator's APIs. */
static struct AddPartitionsToTxnTopic txn_topics[] = {{"orders", {partition_ids, 2}},
                                                      {"payments", {partition_ids, 1}}};
static struct AddPartitionsToTxnTransaction txn_batch[] = {
    {"txn-1", 1000, 3, false, {txn_topics, 2}}, {"txn-2", 1001, 0, true, {txn_topics, 1}}};
static struct AddPartitionsToTxnRequest add_partitions_to_txn = {
    {txn_batch, 2}, "txn-1", 1000, 3, {txn_topics, 2}};
static struct AddOffsetsToTxnRequest add_offsets_to_txn = {"txn-1", 1000, 3, "orders-app"};
static struct EndTxnRequest end_txn = {"txn-1", 1000, 3, true};
static struct WritableTxnMarkerTopic marker_topics[] = {{"orders", {partition_ids, 2}}};
static struct WritableTxnMarker markers[] = {{1000, 3, true, {marker_topics, 1}, 7}};
static struct WriteTxnMarkersRequest write_txn_markers = {{markers, 1}};
static struct TxnOffsetCommitRequestPartition txn_commit_partitions[] = {{0, 42, 3, "m"},
                                                                         {1, 7, -1, NULL}};
static struct TxnOffsetCommitRequestTopic txn_commit_topics[] = {
    {"orders", {txn_commit_partitions, 2}}};
static struct TxnOffsetCommitRequest txn_offset_commit = {
    "txn-1", "orders-app", 1000, 3, 5, "member-1", NULL, {txn_commit_topics, 1}};
static char *transactional_ids[] = {"txn-1", "txn-2"};
static struct DescribeTransactionsRequest describe_transactions = {{transactional_ids, 2}};
static char *txn_states[] = {"Ongoing", "PrepareCommit"};
static int64_t producer_id_filters[] = {1000, 1001};
static struct ListTransactionsRequest list_transactions = {{txn_states, 2},
                                                           {producer_id_filters, 2}};

/* Replication and partition administration. */
static struct OffsetForLeaderPartition epoch_partitions[] = {{0, 5, 4}, {1, -1, 0}};
static struct OffsetForLeaderTopic epoch_topics[] = {{"orders", {epoch_partitions, 2}}};
static struct OffsetForLeaderEpochRequest offset_for_leader_epoch = {-1, {epoch_topics, 1}};
static struct DescribableLogDirTopic log_dir_topics[] = {{"orders", {partition_ids, 3}},
                                                         {"payments", {NULL, 0}}};
static struct DescribeLogDirsRequest describe_log_dirs = {{log_dir_topics, 2}};
static struct ElectLeadersTopicPartitions elect_topics[] = {{"orders", {partition_ids, 2}}};
static struct ElectLeadersRequest elect_leaders = {1, {elect_topics, 1}, 30000};
static struct ReassignablePartition reassign_partitions[] = {{0, {broker_ids, 3}}, {1, {NULL, -1}}};
static struct ReassignableTopic reassign_topics[] = {{"orders", {reassign_partitions, 2}}};
static struct AlterPartitionReassignmentsRequest alter_reassignments = {30000,
                                                                        {reassign_topics, 1}};
static struct ListPartitionReassignmentsTopics list_reassign_topics[] = {
    {"orders", {partition_ids, 2}}};
static struct ListPartitionReassignmentsRequest list_reassignments = {30000,
                                                                      {list_reassign_topics, 1}};
static struct DescribeQuorumRequestPartitionData quorum_partitions[] = {{0}};
static struct DescribeQuorumRequestTopicData quorum_topics[] = {
    {"__cluster_metadata", {quorum_partitions, 1}}};
static struct DescribeQuorumRequest describe_quorum = {{quorum_topics, 1}};

/* Broker-to-controller APIs. */
static struct BrokerState isr_with_epochs[] = {{1, 100}, {2, 101}};
static struct AlterPartitionRequestPartitionData alter_isr[] = {
    {0, 5, {broker_ids, 2}, {isr_with_epochs, 2}, 0, 9}};
static struct AlterPartitionRequestTopicData alter_isr_topics[] = {
    {"orders", {{0x4f, 0x72}}, {alter_isr, 1}}};
static struct AlterPartitionRequest alter_partition = {1, 100, {alter_isr_topics, 1}};
static struct BrokerRegistrationListener listeners[] = {{"PLAINTEXT", "localhost", 9092, 0}};
static struct BrokerRegistrationFeature features[] = {{"metadata.version", 1, 20}};
static struct proto_uuid log_dir_ids[] = {{{0x6c, 0x64}}};
static struct BrokerRegistrationRequest broker_registration = {
    2,     "cluster-1",      {{1, 2, 3}}, {listeners, 1}, {features, 1}, "rack-a",
    false, {log_dir_ids, 1}, 99};
static struct BrokerHeartbeatRequest broker_heartbeat = {2,     100,   42,
                                                         false, false, {log_dir_ids, 1}};
static struct AllocateProducerIdsRequest allocate_producer_ids = {2, 17};

/* Security (issue 17): SASL, ACLs, client quotas, SCRAM credentials. The SASL seeds are the
 * first steps of PLAIN and of SCRAM-SHA-256 (RFC 7677's client-first); the ACLs name the
 * resources and operations an enricher needs (docs/security.md). */
static struct SaslHandshakeRequest sasl_handshake = {"PLAIN"};
static const char plain_token[] = "\0alice\0alice-secret";
static struct SaslAuthenticateRequest sasl_authenticate = {
    {(const uint8_t *)plain_token, (int32_t)sizeof plain_token - 1, NULL}};
static struct AclCreation acl_creations[] = {
    {2, "orders", 3, "User:enricher", "*", 3, 3},      /* TOPIC LITERAL READ ALLOW */
    {5, "enricher-", 4, "User:enricher", "*", 4, 3},   /* TRANSACTIONAL_ID PREFIXED WRITE */
    {3, "enricher", 3, "User:bob", "127.0.0.1", 3, 2}, /* GROUP READ DENY from one host */
    {4, "kafka-cluster", 3, "User:admin", "*", 2, 3}}; /* CLUSTER ALL */
static struct CreateAclsRequest create_acls = {{acl_creations, 4}};
static struct DescribeAclsRequest describe_acls = {2, "ord", 2, "User:enricher", NULL, 1, 1};
static struct DeleteAclsFilter delete_filters[] = {{2, "orders", 3, "User:enricher", "*", 3, 3},
                                                   {1, NULL, 1, NULL, NULL, 1, 1}};
static struct DeleteAclsRequest delete_acls = {{delete_filters, 2}};
static struct ComponentData quota_components[] = {{"user", 0, "alice"}, {"client-id", 1, NULL}};
static struct DescribeClientQuotasRequest describe_quotas = {{quota_components, 2}, false};
static struct EntityData quota_entity[] = {{"user", "alice"}, {"client-id", NULL}};
static struct OpData quota_ops[] = {{"producer_byte_rate", 1048576, false},
                                    {"consumer_byte_rate", 0, true}};
static struct AlterEntryData quota_entries[] = {{{quota_entity, 2}, {quota_ops, 2}}};
static struct AlterClientQuotasRequest alter_quotas = {{quota_entries, 1}, false};
static struct UserName scram_users[] = {{"alice"}, {"nobody"}};
static struct DescribeUserScramCredentialsRequest describe_scram = {{scram_users, 2}};
static uint8_t scram_salt[16] = {0x5b, 0x6d, 0x99, 0x68, 0x9d, 0x12, 0x35, 0x8e,
                                 0xec, 0xa0, 0x4b, 0x14, 0x12, 0x36, 0xfa, 0x81};
static uint8_t scram_salted[64]; /* any 32 (SHA-256) or 64 (SHA-512) bytes are accepted */
static struct ScramCredentialDeletion scram_deletions[] = {{"bob", 1}};
static struct ScramCredentialUpsertion scram_upsertions[] = {
    {"alice", 1, 4096, {scram_salt, 16, NULL}, {scram_salted, 32, NULL}},
    {"alice", 2, 8192, {scram_salt, 16, NULL}, {scram_salted, 64, NULL}}};
static struct AlterUserScramCredentialsRequest alter_scram = {{scram_deletions, 1},
                                                              {scram_upsertions, 2}};

static const void *request_for(int16_t key);

/* KIP-590: a broker's Envelope around the CreateTopics seed (v7, client id "seed"), as
 * User:alice at 127.0.0.1; the principal is DefaultPrincipalData v0, version-prefixed. */
static const uint8_t envelope_principal[] = {0,   0,   5,   'U', 's', 'e', 'r', 6,
                                             'a', 'l', 'i', 'c', 'e', 0,   0};
static const uint8_t envelope_host[] = {127, 0, 0, 1};
static struct EnvelopeRequest envelope;

static const void *envelope_request(void)
{
    uint8_t *frame;
    size_t len;
    if (envelope.RequestData.data == NULL) {
        if (proto_encode_request(proto_api_find(PROTO_API_CreateTopics), 7, 1, "seed",
                                 request_for(PROTO_API_CreateTopics), &frame, &len) != 0)
            return NULL;
        envelope.RequestData.data = frame + 4; /* the tool's lifetime: never freed */
        envelope.RequestData.len = (int32_t)(len - 4);
        envelope.RequestPrincipal.data = envelope_principal;
        envelope.RequestPrincipal.len = sizeof envelope_principal;
        envelope.ClientHostAddress.data = envelope_host;
        envelope.ClientHostAddress.len = sizeof envelope_host;
    }
    return &envelope;
}

static const void *request_for(int16_t key)
{
    switch (key) {
    case PROTO_API_Produce:
        return &produce;
    case PROTO_API_Fetch:
        return &fetch;
    case PROTO_API_ListOffsets:
        return &list_offsets;
    case PROTO_API_DeleteRecords:
        return &delete_records;
    case PROTO_API_InitProducerId:
        return &init_producer_id;
    case PROTO_API_DescribeProducers:
        return &describe_producers;
    case PROTO_API_Metadata:
        return &metadata;
    case PROTO_API_ApiVersions:
        return &api_versions;
    case PROTO_API_CreateTopics:
        return &create_topics;
    case PROTO_API_DeleteTopics:
        return &delete_topics;
    case PROTO_API_DescribeConfigs:
        return &describe_configs;
    case PROTO_API_AlterConfigs:
        return &alter_configs;
    case PROTO_API_CreatePartitions:
        return &create_partitions;
    case PROTO_API_IncrementalAlterConfigs:
        return &incremental_alter_configs;
    case PROTO_API_DescribeCluster:
        return &describe_cluster;
    case PROTO_API_OffsetCommit:
        return &offset_commit;
    case PROTO_API_OffsetFetch:
        return &offset_fetch;
    case PROTO_API_FindCoordinator:
        return &find_coordinator;
    case PROTO_API_JoinGroup:
        return &join_group;
    case PROTO_API_Heartbeat:
        return &heartbeat;
    case PROTO_API_LeaveGroup:
        return &leave_group;
    case PROTO_API_SyncGroup:
        return &sync_group;
    case PROTO_API_DescribeGroups:
        return &describe_groups;
    case PROTO_API_ListGroups:
        return &list_groups;
    case PROTO_API_DeleteGroups:
        return &delete_groups;
    case PROTO_API_OffsetDelete:
        return &offset_delete;
    case PROTO_API_AddPartitionsToTxn:
        return &add_partitions_to_txn;
    case PROTO_API_AddOffsetsToTxn:
        return &add_offsets_to_txn;
    case PROTO_API_EndTxn:
        return &end_txn;
    case PROTO_API_WriteTxnMarkers:
        return &write_txn_markers;
    case PROTO_API_TxnOffsetCommit:
        return &txn_offset_commit;
    case PROTO_API_DescribeTransactions:
        return &describe_transactions;
    case PROTO_API_ListTransactions:
        return &list_transactions;
    case PROTO_API_OffsetForLeaderEpoch:
        return &offset_for_leader_epoch;
    case PROTO_API_DescribeLogDirs:
        return &describe_log_dirs;
    case PROTO_API_ElectLeaders:
        return &elect_leaders;
    case PROTO_API_AlterPartitionReassignments:
        return &alter_reassignments;
    case PROTO_API_ListPartitionReassignments:
        return &list_reassignments;
    case PROTO_API_DescribeQuorum:
        return &describe_quorum;
    case PROTO_API_AlterPartition:
        return &alter_partition;
    case PROTO_API_BrokerRegistration:
        return &broker_registration;
    case PROTO_API_BrokerHeartbeat:
        return &broker_heartbeat;
    case PROTO_API_AllocateProducerIds:
        return &allocate_producer_ids;
    case PROTO_API_SaslHandshake:
        return &sasl_handshake;
    case PROTO_API_SaslAuthenticate:
        return &sasl_authenticate;
    case PROTO_API_CreateAcls:
        return &create_acls;
    case PROTO_API_DescribeAcls:
        return &describe_acls;
    case PROTO_API_DeleteAcls:
        return &delete_acls;
    case PROTO_API_DescribeClientQuotas:
        return &describe_quotas;
    case PROTO_API_AlterClientQuotas:
        return &alter_quotas;
    case PROTO_API_DescribeUserScramCredentials:
        return &describe_scram;
    case PROTO_API_AlterUserScramCredentials:
        return &alter_scram;
    case PROTO_API_Envelope:
        return envelope_request();
    }
    return NULL;
}

static bool dispatch_format;
/* fuzz_dispatch's session bit (bit 7 of the key byte): the SASL listener. */
static uint8_t session_bit;

/* Writes `req` of `api` at `version` as dir/<API>-v<version><suffix>. */
static int write_request(const char *dir, const struct proto_api *api, int16_t version,
                         const void *req, const char *suffix)
{
    uint8_t *frame;
    size_t len, hdr_len, skip;
    char path[512];
    FILE *f;
    int ok;

    if (proto_encode_request(api, version, 42, "seed", req, &frame, &len) != 0)
        return -1;
    snprintf(path, sizeof path, "%s/%s-v%d%s", dir, api->name, version, suffix);
    f = fopen(path, "wb");
    if (dispatch_format) {
        /* Size, then key, version, correlation id, client id "seed", tagged fields if
         * flexible: fuzz_dispatch writes that header itself from two bytes. */
        hdr_len = 2 + 2 + 4 + 2 + 4 + (proto_api_flexible(api, version) ? 1 : 0);
        skip = 4 + hdr_len;
        frame[skip - 2] = (uint8_t)(api->key | session_bit);
        frame[skip - 1] = (uint8_t)(version - api->min_version);
        skip -= 2;
    } else {
        skip = 4;
    }
    ok = f && fwrite(frame + skip, 1, len - skip, f) == len - skip;
    if (f && fclose(f) != 0)
        ok = 0;
    free(frame);
    if (!ok) {
        perror(path);
        return -1;
    }
    return 0;
}

static int write_seed(const char *dir, const struct proto_api *api, int16_t version)
{
    const void *req = request_for(api->key);
    if (req == NULL) {
        fprintf(stderr, "make_seeds: no sample request for %s\n", api->name);
        return -1;
    }
    return write_request(dir, api, version, req, "");
}

/* ---- requests a single broker can serve (fuzz_dispatch) -------------------------------- */

static struct CreatableTopicConfig small_segments[] = {{"segment.bytes", "65536"},
                                                       {"retention.ms", "60000"}};
static struct CreatableTopic local_topics[] = {
    {"orders", 3, 1, {NULL, 0}, {small_segments, 2}},
    {"payments", -1, -1, {NULL, 0}, {NULL, 0}},
};
static struct CreateTopicsRequest create_local = {{local_topics, 2}, 30000, false};

static int32_t one_partition[] = {0};
static struct CreatePartitionsTopic grow_topics[] = {{"payments", 2, {NULL, -1}}};
static struct CreatePartitionsRequest grow = {{grow_topics, 1}, 10000, false};

static uint8_t idem_batch[sizeof record_batch];
static uint8_t gzip_batch[sizeof record_batch + 64];
static size_t gzip_batch_len;

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (24 - 8 * i));
}

static void fix_crc(uint8_t *b, size_t len)
{
    put32(b + 17, crc32c(b + 21, len - 21));
}

/* The sample batch as producer 1000, epoch 0, sequence 0; and gzip-compressed. */
static int make_batches(void)
{
    z_stream z;
    memcpy(idem_batch, record_batch, sizeof record_batch);
    memset(idem_batch + 43, 0, 8);
    put32(idem_batch + 47, 1000);
    memset(idem_batch + 51, 0, 2 + 4);
    fix_crc(idem_batch, sizeof idem_batch);

    memcpy(gzip_batch, record_batch, 61);
    gzip_batch[22] = 1; /* attributes: gzip */
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -1;
    z.next_in = record_batch + 61;
    z.avail_in = sizeof record_batch - 61;
    z.next_out = gzip_batch + 61;
    z.avail_out = sizeof gzip_batch - 61;
    if (deflate(&z, Z_FINISH) != Z_STREAM_END)
        return -1;
    gzip_batch_len = 61 + z.total_out;
    deflateEnd(&z);
    put32(gzip_batch + 8, (uint32_t)(gzip_batch_len - 12));
    fix_crc(gzip_batch, gzip_batch_len);
    return 0;
}

static struct PartitionProduceData idem_partitions[1];
static struct TopicProduceData idem_topics[] = {{"orders", {idem_partitions, 1}}};
static struct ProduceRequest produce_idem = {NULL, -1, 30000, {idem_topics, 1}};
static struct PartitionProduceData gzip_partitions[1];
static struct TopicProduceData gzip_topics[] = {{"orders", {gzip_partitions, 1}}};
static struct ProduceRequest produce_gzip = {NULL, 1, 30000, {gzip_topics, 1}};

static struct ListOffsetsPartition by_time[] = {{0, -1, 0x18cb50b7b00, 1}, {1, -1, -3, 1}};
static struct ListOffsetsTopic by_time_topics[] = {{"orders", {by_time, 2}}};
static struct ListOffsetsRequest list_by_time = {-1, 0, {by_time_topics, 1}};

static struct FetchPartition fetch_from_start[] = {{0, -1, 0, -1, -1, 1048576},
                                                   {1, -1, 0, -1, -1, 1048576}};
static struct FetchTopic fetch_orders[] = {{"orders", {{0}}, {fetch_from_start, 2}}};
static struct FetchRequest fetch_local = {
    NULL, -1, 0, 1, 52428800, 0, 0, -1, {fetch_orders, 1}, {NULL, 0}, ""};

static struct DeleteRecordsPartition delete_some[] = {{0, 1}, {1, -1}};
static struct DeleteRecordsTopic delete_orders[] = {{"orders", {delete_some, 2}}};
static struct DeleteRecordsRequest delete_local = {{delete_orders, 1}, 30000};

static struct DescribeProducersTopicRequest orders_producers[] = {{"orders", {one_partition, 1}}};
static struct DescribeProducersRequest describe_orders = {{orders_producers, 1}};

static struct DescribeLogDirsRequest describe_all_log_dirs = {{NULL, -1}};

static int write_extra(const char *dir, int16_t key, const void *req, const char *suffix)
{
    const struct proto_api *api = proto_api_find(key);
    if (write_request(dir, api, api->min_version, req, suffix) != 0 ||
        write_request(dir, api, api->max_version, req, suffix) != 0)
        return -1;
    return 0;
}

/* With TALLY_FUZZ_AUTHZ, on the SASL listener: the SASL APIs unauthenticated (PLAIN and
 * SCRAM-SHA-256's first step), the others authenticated as User:alice. */
static struct SaslHandshakeRequest sasl_handshake_scram = {"SCRAM-SHA-256"};
static const char scram_first[] = "n,,n=alice,r=rOprNGfwEbeRWgbNEkqO";
static struct SaslAuthenticateRequest sasl_authenticate_scram = {
    {(const uint8_t *)scram_first, (int32_t)sizeof scram_first - 1, NULL}};

static int write_sasl_sessions(const char *dir)
{
    int rc;
    session_bit = 0x80;
    rc = write_extra(dir, PROTO_API_SaslHandshake, &sasl_handshake, "-sasl") ||
         write_extra(dir, PROTO_API_SaslHandshake, &sasl_handshake_scram, "-sasl-scram") ||
         write_extra(dir, PROTO_API_SaslAuthenticate, &sasl_authenticate, "-sasl") ||
         write_extra(dir, PROTO_API_SaslAuthenticate, &sasl_authenticate_scram, "-sasl-scram") ||
         write_extra(dir, PROTO_API_CreateAcls, &create_acls, "-sasl") ||
         write_extra(dir, PROTO_API_DescribeAcls, &describe_acls, "-sasl") ||
         write_extra(dir, PROTO_API_AlterUserScramCredentials, &alter_scram, "-sasl") ||
         write_extra(dir, PROTO_API_CreateTopics, &create_local, "-local-sasl") ||
         write_extra(dir, PROTO_API_Produce, &produce_idem, "-idempotent-sasl") ||
         write_extra(dir, PROTO_API_Metadata, &metadata, "-sasl");
    session_bit = 0;
    return rc;
}

static int write_dispatch_extras(const char *dir)
{
    if (make_batches() != 0)
        return -1;
    idem_partitions[0] =
        (struct PartitionProduceData){0, {idem_batch, (int32_t)sizeof idem_batch, NULL}};
    gzip_partitions[0] =
        (struct PartitionProduceData){1, {gzip_batch, (int32_t)gzip_batch_len, NULL}};
    return write_extra(dir, PROTO_API_CreateTopics, &create_local, "-local") ||
           write_extra(dir, PROTO_API_CreatePartitions, &grow, "-local") ||
           write_extra(dir, PROTO_API_Produce, &produce_idem, "-idempotent") ||
           write_extra(dir, PROTO_API_Produce, &produce_gzip, "-gzip") ||
           write_extra(dir, PROTO_API_ListOffsets, &list_by_time, "-by-time") ||
           write_extra(dir, PROTO_API_DescribeProducers, &describe_orders, "-orders") ||
           write_extra(dir, PROTO_API_DescribeLogDirs, &describe_all_log_dirs, "-all") ||
           write_extra(dir, PROTO_API_Fetch, &fetch_local, "-from-start") ||
           write_extra(dir, PROTO_API_DeleteRecords, &delete_local, "-local") ||
           write_sasl_sessions(dir);
}

int main(int argc, char **argv)
{
    const char *dir;
    size_t n;
    const struct proto_api *apis = proto_apis(&n);

    if (argc > 1 && strcmp(argv[1], "--dispatch") == 0) {
        dispatch_format = true;
        argc--;
        argv++;
    }
    dir = argc > 1 ? argv[1] : "fuzz/seeds";
    make_record_batch();
    for (size_t i = 0; i < n; i++) {
        const struct proto_api *api = &apis[i];
        int16_t versions[3] = {api->min_version, api->flexible_min, api->max_version};
        for (int j = 0; j < 3; j++) {
            if (versions[j] < api->min_version || versions[j] > api->max_version)
                continue;
            if (j > 0 && versions[j] == versions[j - 1])
                continue;
            if (write_seed(dir, api, versions[j]) != 0)
                return 1;
        }
    }
    if (dispatch_format && write_dispatch_extras(dir) != 0)
        return 1;
    return 0;
}
