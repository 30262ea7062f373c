/* SPDX-License-Identifier: Apache-2.0 */
/* The API table: every API the broker declares, with the version range it advertises in
 * ApiVersions. Kept in ascending key order (proto_apis() promises it and ApiVersions lists
 * it as is). */
#include "proto/proto_int.h"

static const struct proto_api apis[] = {
    {PROTO_API_Produce, "Produce", 0, 9, 9, &proto_ProduceRequest, &proto_ProduceResponse},
    {PROTO_API_Fetch, "Fetch", 0, 13, 12, &proto_FetchRequest, &proto_FetchResponse},
    {PROTO_API_ListOffsets, "ListOffsets", 0, 7, 6, &proto_ListOffsetsRequest,
     &proto_ListOffsetsResponse},
    {PROTO_API_Metadata, "Metadata", 0, 12, 9, &proto_MetadataRequest, &proto_MetadataResponse},
    {PROTO_API_OffsetCommit, "OffsetCommit", 0, 8, 8, &proto_OffsetCommitRequest,
     &proto_OffsetCommitResponse},
    {PROTO_API_OffsetFetch, "OffsetFetch", 0, 8, 6, &proto_OffsetFetchRequest,
     &proto_OffsetFetchResponse},
    {PROTO_API_FindCoordinator, "FindCoordinator", 0, 4, 3, &proto_FindCoordinatorRequest,
     &proto_FindCoordinatorResponse},
    {PROTO_API_JoinGroup, "JoinGroup", 0, 9, 6, &proto_JoinGroupRequest, &proto_JoinGroupResponse},
    {PROTO_API_Heartbeat, "Heartbeat", 0, 4, 4, &proto_HeartbeatRequest, &proto_HeartbeatResponse},
    {PROTO_API_LeaveGroup, "LeaveGroup", 0, 5, 4, &proto_LeaveGroupRequest,
     &proto_LeaveGroupResponse},
    {PROTO_API_SyncGroup, "SyncGroup", 0, 5, 4, &proto_SyncGroupRequest, &proto_SyncGroupResponse},
    {PROTO_API_DescribeGroups, "DescribeGroups", 0, 5, 5, &proto_DescribeGroupsRequest,
     &proto_DescribeGroupsResponse},
    {PROTO_API_ListGroups, "ListGroups", 0, 4, 3, &proto_ListGroupsRequest,
     &proto_ListGroupsResponse},
    {PROTO_API_SaslHandshake, "SaslHandshake", 0, 1, -1, &proto_SaslHandshakeRequest,
     &proto_SaslHandshakeResponse},
    {PROTO_API_ApiVersions, "ApiVersions", 0, 3, 3, &proto_ApiVersionsRequest,
     &proto_ApiVersionsResponse},
    {PROTO_API_CreateTopics, "CreateTopics", 0, 7, 5, &proto_CreateTopicsRequest,
     &proto_CreateTopicsResponse},
    {PROTO_API_DeleteTopics, "DeleteTopics", 0, 6, 4, &proto_DeleteTopicsRequest,
     &proto_DeleteTopicsResponse},
    {PROTO_API_DeleteRecords, "DeleteRecords", 0, 2, 2, &proto_DeleteRecordsRequest,
     &proto_DeleteRecordsResponse},
    {PROTO_API_InitProducerId, "InitProducerId", 0, 4, 2, &proto_InitProducerIdRequest,
     &proto_InitProducerIdResponse},
    {PROTO_API_OffsetForLeaderEpoch, "OffsetForLeaderEpoch", 0, 4, 4,
     &proto_OffsetForLeaderEpochRequest, &proto_OffsetForLeaderEpochResponse},
    {PROTO_API_AddPartitionsToTxn, "AddPartitionsToTxn", 0, 4, 3, &proto_AddPartitionsToTxnRequest,
     &proto_AddPartitionsToTxnResponse},
    {PROTO_API_AddOffsetsToTxn, "AddOffsetsToTxn", 0, 3, 3, &proto_AddOffsetsToTxnRequest,
     &proto_AddOffsetsToTxnResponse},
    {PROTO_API_EndTxn, "EndTxn", 0, 3, 3, &proto_EndTxnRequest, &proto_EndTxnResponse},
    {PROTO_API_WriteTxnMarkers, "WriteTxnMarkers", 0, 1, 1, &proto_WriteTxnMarkersRequest,
     &proto_WriteTxnMarkersResponse},
    {PROTO_API_TxnOffsetCommit, "TxnOffsetCommit", 0, 3, 3, &proto_TxnOffsetCommitRequest,
     &proto_TxnOffsetCommitResponse},
    {PROTO_API_DescribeConfigs, "DescribeConfigs", 0, 4, 4, &proto_DescribeConfigsRequest,
     &proto_DescribeConfigsResponse},
    {PROTO_API_AlterConfigs, "AlterConfigs", 0, 2, 2, &proto_AlterConfigsRequest,
     &proto_AlterConfigsResponse},
    {PROTO_API_DescribeLogDirs, "DescribeLogDirs", 0, 4, 2, &proto_DescribeLogDirsRequest,
     &proto_DescribeLogDirsResponse},
    {PROTO_API_SaslAuthenticate, "SaslAuthenticate", 0, 2, 2, &proto_SaslAuthenticateRequest,
     &proto_SaslAuthenticateResponse},
    {PROTO_API_CreatePartitions, "CreatePartitions", 0, 3, 2, &proto_CreatePartitionsRequest,
     &proto_CreatePartitionsResponse},
    {PROTO_API_DeleteGroups, "DeleteGroups", 0, 2, 2, &proto_DeleteGroupsRequest,
     &proto_DeleteGroupsResponse},
    {PROTO_API_ElectLeaders, "ElectLeaders", 0, 2, 2, &proto_ElectLeadersRequest,
     &proto_ElectLeadersResponse},
    {PROTO_API_IncrementalAlterConfigs, "IncrementalAlterConfigs", 0, 1, 1,
     &proto_IncrementalAlterConfigsRequest, &proto_IncrementalAlterConfigsResponse},
    {PROTO_API_AlterPartitionReassignments, "AlterPartitionReassignments", 0, 0, 0,
     &proto_AlterPartitionReassignmentsRequest, &proto_AlterPartitionReassignmentsResponse},
    {PROTO_API_ListPartitionReassignments, "ListPartitionReassignments", 0, 0, 0,
     &proto_ListPartitionReassignmentsRequest, &proto_ListPartitionReassignmentsResponse},
    {PROTO_API_OffsetDelete, "OffsetDelete", 0, 0, -1, &proto_OffsetDeleteRequest,
     &proto_OffsetDeleteResponse},
    {PROTO_API_DescribeUserScramCredentials, "DescribeUserScramCredentials", 0, 0, 0,
     &proto_DescribeUserScramCredentialsRequest, &proto_DescribeUserScramCredentialsResponse},
    {PROTO_API_AlterUserScramCredentials, "AlterUserScramCredentials", 0, 0, 0,
     &proto_AlterUserScramCredentialsRequest, &proto_AlterUserScramCredentialsResponse},
    {PROTO_API_DescribeQuorum, "DescribeQuorum", 0, 1, 0, &proto_DescribeQuorumRequest,
     &proto_DescribeQuorumResponse},
    {PROTO_API_AlterPartition, "AlterPartition", 0, 3, 0, &proto_AlterPartitionRequest,
     &proto_AlterPartitionResponse},
    {PROTO_API_DescribeCluster, "DescribeCluster", 0, 2, 0, &proto_DescribeClusterRequest,
     &proto_DescribeClusterResponse},
    {PROTO_API_DescribeProducers, "DescribeProducers", 0, 0, 0, &proto_DescribeProducersRequest,
     &proto_DescribeProducersResponse},
    {PROTO_API_BrokerRegistration, "BrokerRegistration", 0, 3, 0, &proto_BrokerRegistrationRequest,
     &proto_BrokerRegistrationResponse},
    {PROTO_API_BrokerHeartbeat, "BrokerHeartbeat", 0, 1, 0, &proto_BrokerHeartbeatRequest,
     &proto_BrokerHeartbeatResponse},
    {PROTO_API_DescribeTransactions, "DescribeTransactions", 0, 0, 0,
     &proto_DescribeTransactionsRequest, &proto_DescribeTransactionsResponse},
    {PROTO_API_ListTransactions, "ListTransactions", 0, 0, 0, &proto_ListTransactionsRequest,
     &proto_ListTransactionsResponse},
    {PROTO_API_AllocateProducerIds, "AllocateProducerIds", 0, 0, 0,
     &proto_AllocateProducerIdsRequest, &proto_AllocateProducerIdsResponse},
};

const struct proto_api *proto_apis(size_t *n)
{
    *n = sizeof(apis) / sizeof(apis[0]);
    return apis;
}

const struct proto_api *proto_api_find(int16_t key)
{
    for (size_t i = 0; i < sizeof(apis) / sizeof(apis[0]); i++)
        if (apis[i].key == key)
            return &apis[i];
    return NULL;
}
