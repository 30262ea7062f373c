/* SPDX-License-Identifier: Apache-2.0 */
/* The field tables of the group coordinator's APIs: OffsetCommit (key 8), OffsetFetch (9),
 * FindCoordinator (10), JoinGroup (11), Heartbeat (12), LeaveGroup (13), SyncGroup (14),
 * DescribeGroups (15), ListGroups (16), DeleteGroups (42) and OffsetDelete (47), transcribed
 * from Kafka's JSON message schemas; see proto_int.h for the row format. Nested layouts come
 * before the structs that hold them. */
#include "proto/proto_int.h"

static const struct proto_field OffsetCommitRequestPartition_fields[] = {
    PROTO_FIELD(OffsetCommitRequestPartition, PartitionIndex, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(OffsetCommitRequestPartition, CommittedOffset, INT64, 0, PROTO_VMAX, PROTO_NEVER,
                0),
    PROTO_FIELD(OffsetCommitRequestPartition, CommittedLeaderEpoch, INT32, 6, PROTO_VMAX,
                PROTO_NEVER, -1),
    PROTO_FIELD(OffsetCommitRequestPartition, CommitTimestamp, INT64, 1, 1, PROTO_NEVER, -1),
    PROTO_FIELD(OffsetCommitRequestPartition, CommittedMetadata, STRING, 0, PROTO_VMAX, 0, 0),
};
static const struct proto_struct proto_OffsetCommitRequestPartition =
    PROTO_LAYOUT(OffsetCommitRequestPartition);

static const struct proto_field OffsetCommitRequestTopic_fields[] = {
    PROTO_FIELD(OffsetCommitRequestTopic, Name, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(OffsetCommitRequestTopic, Partitions, proto_OffsetCommitRequestPartition, 0,
                  PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_OffsetCommitRequestTopic =
    PROTO_LAYOUT(OffsetCommitRequestTopic);

static const struct proto_field OffsetCommitRequest_fields[] = {
    PROTO_FIELD(OffsetCommitRequest, GroupId, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(OffsetCommitRequest, GenerationIdOrMemberEpoch, INT32, 1, PROTO_VMAX, PROTO_NEVER,
                -1),
    PROTO_FIELD(OffsetCommitRequest, MemberId, STRING, 1, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(OffsetCommitRequest, GroupInstanceId, STRING, 7, PROTO_VMAX, 7, 0),
    PROTO_FIELD(OffsetCommitRequest, RetentionTimeMs, INT64, 2, 4, PROTO_NEVER, -1),
    PROTO_STRUCTS(OffsetCommitRequest, Topics, proto_OffsetCommitRequestTopic, 0, PROTO_VMAX,
                  PROTO_NEVER),
};
const struct proto_struct proto_OffsetCommitRequest = PROTO_LAYOUT(OffsetCommitRequest);

static const struct proto_field OffsetCommitResponsePartition_fields[] = {
    PROTO_FIELD(OffsetCommitResponsePartition, PartitionIndex, INT32, 0, PROTO_VMAX, PROTO_NEVER,
                0),
    PROTO_FIELD(OffsetCommitResponsePartition, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
static const struct proto_struct proto_OffsetCommitResponsePartition =
    PROTO_LAYOUT(OffsetCommitResponsePartition);

static const struct proto_field OffsetCommitResponseTopic_fields[] = {
    PROTO_FIELD(OffsetCommitResponseTopic, Name, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(OffsetCommitResponseTopic, Partitions, proto_OffsetCommitResponsePartition, 0,
                  PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_OffsetCommitResponseTopic =
    PROTO_LAYOUT(OffsetCommitResponseTopic);

static const struct proto_field OffsetCommitResponse_fields[] = {
    PROTO_FIELD(OffsetCommitResponse, ThrottleTimeMs, INT32, 3, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(OffsetCommitResponse, Topics, proto_OffsetCommitResponseTopic, 0, PROTO_VMAX,
                  PROTO_NEVER),
};
const struct proto_struct proto_OffsetCommitResponse = PROTO_LAYOUT(OffsetCommitResponse);

static const struct proto_field OffsetFetchRequestTopic_fields[] = {
    PROTO_FIELD(OffsetFetchRequestTopic, Name, STRING, 0, 7, PROTO_NEVER, 0),
    PROTO_ARRAY_OF(OffsetFetchRequestTopic, PartitionIndexes, INT32, 0, 7, PROTO_NEVER),
};
static const struct proto_struct proto_OffsetFetchRequestTopic =
    PROTO_LAYOUT(OffsetFetchRequestTopic);

static const struct proto_field OffsetFetchRequestTopics_fields[] = {
    PROTO_FIELD(OffsetFetchRequestTopics, Name, STRING, 8, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_ARRAY_OF(OffsetFetchRequestTopics, PartitionIndexes, INT32, 8, PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_OffsetFetchRequestTopics =
    PROTO_LAYOUT(OffsetFetchRequestTopics);

static const struct proto_field OffsetFetchRequestGroup_fields[] = {
    PROTO_FIELD(OffsetFetchRequestGroup, GroupId, STRING, 8, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(OffsetFetchRequestGroup, Topics, proto_OffsetFetchRequestTopics, 8, PROTO_VMAX,
                  8),
};
static const struct proto_struct proto_OffsetFetchRequestGroup =
    PROTO_LAYOUT(OffsetFetchRequestGroup);

static const struct proto_field OffsetFetchRequest_fields[] = {
    PROTO_FIELD(OffsetFetchRequest, GroupId, STRING, 0, 7, PROTO_NEVER, 0),
    PROTO_STRUCTS(OffsetFetchRequest, Topics, proto_OffsetFetchRequestTopic, 0, 7, 2),
    PROTO_STRUCTS(OffsetFetchRequest, Groups, proto_OffsetFetchRequestGroup, 8, PROTO_VMAX,
                  PROTO_NEVER),
    PROTO_FIELD(OffsetFetchRequest, RequireStable, BOOL, 7, PROTO_VMAX, PROTO_NEVER, 0),
};
const struct proto_struct proto_OffsetFetchRequest = PROTO_LAYOUT(OffsetFetchRequest);

static const struct proto_field OffsetFetchResponsePartition_fields[] = {
    PROTO_FIELD(OffsetFetchResponsePartition, PartitionIndex, INT32, 0, 7, PROTO_NEVER, 0),
    PROTO_FIELD(OffsetFetchResponsePartition, CommittedOffset, INT64, 0, 7, PROTO_NEVER, 0),
    PROTO_FIELD(OffsetFetchResponsePartition, CommittedLeaderEpoch, INT32, 5, 7, PROTO_NEVER, -1),
    PROTO_FIELD(OffsetFetchResponsePartition, Metadata, STRING, 0, 7, 0, 0),
    PROTO_FIELD(OffsetFetchResponsePartition, ErrorCode, INT16, 0, 7, PROTO_NEVER, 0),
};
static const struct proto_struct proto_OffsetFetchResponsePartition =
    PROTO_LAYOUT(OffsetFetchResponsePartition);

static const struct proto_field OffsetFetchResponseTopic_fields[] = {
    PROTO_FIELD(OffsetFetchResponseTopic, Name, STRING, 0, 7, PROTO_NEVER, 0),
    PROTO_STRUCTS(OffsetFetchResponseTopic, Partitions, proto_OffsetFetchResponsePartition, 0, 7,
                  PROTO_NEVER),
};
static const struct proto_struct proto_OffsetFetchResponseTopic =
    PROTO_LAYOUT(OffsetFetchResponseTopic);

static const struct proto_field OffsetFetchResponsePartitions_fields[] = {
    PROTO_FIELD(OffsetFetchResponsePartitions, PartitionIndex, INT32, 8, PROTO_VMAX, PROTO_NEVER,
                0),
    PROTO_FIELD(OffsetFetchResponsePartitions, CommittedOffset, INT64, 8, PROTO_VMAX, PROTO_NEVER,
                0),
    PROTO_FIELD(OffsetFetchResponsePartitions, CommittedLeaderEpoch, INT32, 8, PROTO_VMAX,
                PROTO_NEVER, -1),
    PROTO_FIELD(OffsetFetchResponsePartitions, Metadata, STRING, 8, PROTO_VMAX, 8, 0),
    PROTO_FIELD(OffsetFetchResponsePartitions, ErrorCode, INT16, 8, PROTO_VMAX, PROTO_NEVER, 0),
};
static const struct proto_struct proto_OffsetFetchResponsePartitions =
    PROTO_LAYOUT(OffsetFetchResponsePartitions);

static const struct proto_field OffsetFetchResponseTopics_fields[] = {
    PROTO_FIELD(OffsetFetchResponseTopics, Name, STRING, 8, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(OffsetFetchResponseTopics, Partitions, proto_OffsetFetchResponsePartitions, 8,
                  PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_OffsetFetchResponseTopics =
    PROTO_LAYOUT(OffsetFetchResponseTopics);

static const struct proto_field OffsetFetchResponseGroup_fields[] = {
    PROTO_FIELD(OffsetFetchResponseGroup, GroupId, STRING, 8, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(OffsetFetchResponseGroup, Topics, proto_OffsetFetchResponseTopics, 8, PROTO_VMAX,
                  PROTO_NEVER),
    PROTO_FIELD(OffsetFetchResponseGroup, ErrorCode, INT16, 8, PROTO_VMAX, PROTO_NEVER, 0),
};
static const struct proto_struct proto_OffsetFetchResponseGroup =
    PROTO_LAYOUT(OffsetFetchResponseGroup);

static const struct proto_field OffsetFetchResponse_fields[] = {
    PROTO_FIELD(OffsetFetchResponse, ThrottleTimeMs, INT32, 3, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(OffsetFetchResponse, Topics, proto_OffsetFetchResponseTopic, 0, 7, PROTO_NEVER),
    PROTO_FIELD(OffsetFetchResponse, ErrorCode, INT16, 2, 7, PROTO_NEVER, 0),
    PROTO_STRUCTS(OffsetFetchResponse, Groups, proto_OffsetFetchResponseGroup, 8, PROTO_VMAX,
                  PROTO_NEVER),
};
const struct proto_struct proto_OffsetFetchResponse = PROTO_LAYOUT(OffsetFetchResponse);

static const struct proto_field FindCoordinatorRequest_fields[] = {
    PROTO_FIELD(FindCoordinatorRequest, Key, STRING, 0, 3, PROTO_NEVER, 0),
    PROTO_FIELD(FindCoordinatorRequest, KeyType, INT8, 1, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_ARRAY_OF(FindCoordinatorRequest, CoordinatorKeys, STRING, 4, PROTO_VMAX, PROTO_NEVER),
};
const struct proto_struct proto_FindCoordinatorRequest = PROTO_LAYOUT(FindCoordinatorRequest);

static const struct proto_field Coordinator_fields[] = {
    PROTO_FIELD(Coordinator, Key, STRING, 4, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(Coordinator, NodeId, INT32, 4, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(Coordinator, Host, STRING, 4, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(Coordinator, Port, INT32, 4, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(Coordinator, ErrorCode, INT16, 4, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(Coordinator, ErrorMessage, STRING, 4, PROTO_VMAX, 4, 0),
};
static const struct proto_struct proto_Coordinator = PROTO_LAYOUT(Coordinator);

static const struct proto_field FindCoordinatorResponse_fields[] = {
    PROTO_FIELD(FindCoordinatorResponse, ThrottleTimeMs, INT32, 1, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(FindCoordinatorResponse, ErrorCode, INT16, 0, 3, PROTO_NEVER, 0),
    PROTO_FIELD(FindCoordinatorResponse, ErrorMessage, STRING, 1, 3, 1, 0),
    PROTO_FIELD(FindCoordinatorResponse, NodeId, INT32, 0, 3, PROTO_NEVER, 0),
    PROTO_FIELD(FindCoordinatorResponse, Host, STRING, 0, 3, PROTO_NEVER, 0),
    PROTO_FIELD(FindCoordinatorResponse, Port, INT32, 0, 3, PROTO_NEVER, 0),
    PROTO_STRUCTS(FindCoordinatorResponse, Coordinators, proto_Coordinator, 4, PROTO_VMAX,
                  PROTO_NEVER),
};
const struct proto_struct proto_FindCoordinatorResponse = PROTO_LAYOUT(FindCoordinatorResponse);

static const struct proto_field JoinGroupRequestProtocol_fields[] = {
    PROTO_FIELD(JoinGroupRequestProtocol, Name, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(JoinGroupRequestProtocol, Metadata, BYTES, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
static const struct proto_struct proto_JoinGroupRequestProtocol =
    PROTO_LAYOUT(JoinGroupRequestProtocol);

static const struct proto_field JoinGroupRequest_fields[] = {
    PROTO_FIELD(JoinGroupRequest, GroupId, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(JoinGroupRequest, SessionTimeoutMs, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(JoinGroupRequest, RebalanceTimeoutMs, INT32, 1, PROTO_VMAX, PROTO_NEVER, -1),
    PROTO_FIELD(JoinGroupRequest, MemberId, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(JoinGroupRequest, GroupInstanceId, STRING, 5, PROTO_VMAX, 5, 0),
    PROTO_FIELD(JoinGroupRequest, ProtocolType, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(JoinGroupRequest, Protocols, proto_JoinGroupRequestProtocol, 0, PROTO_VMAX,
                  PROTO_NEVER),
    PROTO_FIELD(JoinGroupRequest, Reason, STRING, 8, PROTO_VMAX, 8, 0),
};
const struct proto_struct proto_JoinGroupRequest = PROTO_LAYOUT(JoinGroupRequest);

static const struct proto_field JoinGroupResponseMember_fields[] = {
    PROTO_FIELD(JoinGroupResponseMember, MemberId, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(JoinGroupResponseMember, GroupInstanceId, STRING, 5, PROTO_VMAX, 5, 0),
    PROTO_FIELD(JoinGroupResponseMember, Metadata, BYTES, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
static const struct proto_struct proto_JoinGroupResponseMember =
    PROTO_LAYOUT(JoinGroupResponseMember);

static const struct proto_field JoinGroupResponse_fields[] = {
    PROTO_FIELD(JoinGroupResponse, ThrottleTimeMs, INT32, 2, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(JoinGroupResponse, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(JoinGroupResponse, GenerationId, INT32, 0, PROTO_VMAX, PROTO_NEVER, -1),
    PROTO_FIELD(JoinGroupResponse, ProtocolType, STRING, 7, PROTO_VMAX, 7, 0),
    PROTO_FIELD(JoinGroupResponse, ProtocolName, STRING, 0, PROTO_VMAX, 7, 0),
    PROTO_FIELD(JoinGroupResponse, Leader, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(JoinGroupResponse, SkipAssignment, BOOL, 9, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(JoinGroupResponse, MemberId, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(JoinGroupResponse, Members, proto_JoinGroupResponseMember, 0, PROTO_VMAX,
                  PROTO_NEVER),
};
const struct proto_struct proto_JoinGroupResponse = PROTO_LAYOUT(JoinGroupResponse);

static const struct proto_field HeartbeatRequest_fields[] = {
    PROTO_FIELD(HeartbeatRequest, GroupId, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(HeartbeatRequest, GenerationId, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(HeartbeatRequest, MemberId, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(HeartbeatRequest, GroupInstanceId, STRING, 3, PROTO_VMAX, 3, 0),
};
const struct proto_struct proto_HeartbeatRequest = PROTO_LAYOUT(HeartbeatRequest);

static const struct proto_field HeartbeatResponse_fields[] = {
    PROTO_FIELD(HeartbeatResponse, ThrottleTimeMs, INT32, 1, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(HeartbeatResponse, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
const struct proto_struct proto_HeartbeatResponse = PROTO_LAYOUT(HeartbeatResponse);

static const struct proto_field MemberIdentity_fields[] = {
    PROTO_FIELD(MemberIdentity, MemberId, STRING, 3, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(MemberIdentity, GroupInstanceId, STRING, 3, PROTO_VMAX, 3, 0),
    PROTO_FIELD(MemberIdentity, Reason, STRING, 5, PROTO_VMAX, 5, 0),
};
static const struct proto_struct proto_MemberIdentity = PROTO_LAYOUT(MemberIdentity);

static const struct proto_field LeaveGroupRequest_fields[] = {
    PROTO_FIELD(LeaveGroupRequest, GroupId, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(LeaveGroupRequest, MemberId, STRING, 0, 2, PROTO_NEVER, 0),
    PROTO_STRUCTS(LeaveGroupRequest, Members, proto_MemberIdentity, 3, PROTO_VMAX, PROTO_NEVER),
};
const struct proto_struct proto_LeaveGroupRequest = PROTO_LAYOUT(LeaveGroupRequest);

static const struct proto_field MemberResponse_fields[] = {
    PROTO_FIELD(MemberResponse, MemberId, STRING, 3, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(MemberResponse, GroupInstanceId, STRING, 3, PROTO_VMAX, 3, 0),
    PROTO_FIELD(MemberResponse, ErrorCode, INT16, 3, PROTO_VMAX, PROTO_NEVER, 0),
};
static const struct proto_struct proto_MemberResponse = PROTO_LAYOUT(MemberResponse);

static const struct proto_field LeaveGroupResponse_fields[] = {
    PROTO_FIELD(LeaveGroupResponse, ThrottleTimeMs, INT32, 1, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(LeaveGroupResponse, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(LeaveGroupResponse, Members, proto_MemberResponse, 3, PROTO_VMAX, PROTO_NEVER),
};
const struct proto_struct proto_LeaveGroupResponse = PROTO_LAYOUT(LeaveGroupResponse);

static const struct proto_field SyncGroupRequestAssignment_fields[] = {
    PROTO_FIELD(SyncGroupRequestAssignment, MemberId, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(SyncGroupRequestAssignment, Assignment, BYTES, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
static const struct proto_struct proto_SyncGroupRequestAssignment =
    PROTO_LAYOUT(SyncGroupRequestAssignment);

static const struct proto_field SyncGroupRequest_fields[] = {
    PROTO_FIELD(SyncGroupRequest, GroupId, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(SyncGroupRequest, GenerationId, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(SyncGroupRequest, MemberId, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(SyncGroupRequest, GroupInstanceId, STRING, 3, PROTO_VMAX, 3, 0),
    PROTO_FIELD(SyncGroupRequest, ProtocolType, STRING, 5, PROTO_VMAX, 5, 0),
    PROTO_FIELD(SyncGroupRequest, ProtocolName, STRING, 5, PROTO_VMAX, 5, 0),
    PROTO_STRUCTS(SyncGroupRequest, Assignments, proto_SyncGroupRequestAssignment, 0, PROTO_VMAX,
                  PROTO_NEVER),
};
const struct proto_struct proto_SyncGroupRequest = PROTO_LAYOUT(SyncGroupRequest);

static const struct proto_field SyncGroupResponse_fields[] = {
    PROTO_FIELD(SyncGroupResponse, ThrottleTimeMs, INT32, 1, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(SyncGroupResponse, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(SyncGroupResponse, ProtocolType, STRING, 5, PROTO_VMAX, 5, 0),
    PROTO_FIELD(SyncGroupResponse, ProtocolName, STRING, 5, PROTO_VMAX, 5, 0),
    PROTO_FIELD(SyncGroupResponse, Assignment, BYTES, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
const struct proto_struct proto_SyncGroupResponse = PROTO_LAYOUT(SyncGroupResponse);

static const struct proto_field DescribeGroupsRequest_fields[] = {
    PROTO_ARRAY_OF(DescribeGroupsRequest, Groups, STRING, 0, PROTO_VMAX, PROTO_NEVER),
    PROTO_FIELD(DescribeGroupsRequest, IncludeAuthorizedOperations, BOOL, 3, PROTO_VMAX,
                PROTO_NEVER, 0),
};
const struct proto_struct proto_DescribeGroupsRequest = PROTO_LAYOUT(DescribeGroupsRequest);

static const struct proto_field DescribedGroupMember_fields[] = {
    PROTO_FIELD(DescribedGroupMember, MemberId, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DescribedGroupMember, GroupInstanceId, STRING, 4, PROTO_VMAX, 4, 0),
    PROTO_FIELD(DescribedGroupMember, ClientId, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DescribedGroupMember, ClientHost, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DescribedGroupMember, MemberMetadata, BYTES, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DescribedGroupMember, MemberAssignment, BYTES, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
static const struct proto_struct proto_DescribedGroupMember = PROTO_LAYOUT(DescribedGroupMember);

static const struct proto_field DescribedGroup_fields[] = {
    PROTO_FIELD(DescribedGroup, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DescribedGroup, GroupId, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DescribedGroup, GroupState, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DescribedGroup, ProtocolType, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DescribedGroup, ProtocolData, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(DescribedGroup, Members, proto_DescribedGroupMember, 0, PROTO_VMAX, PROTO_NEVER),
    PROTO_FIELD(DescribedGroup, AuthorizedOperations, INT32, 3, PROTO_VMAX, PROTO_NEVER,
                -2147483648),
};
static const struct proto_struct proto_DescribedGroup = PROTO_LAYOUT(DescribedGroup);

static const struct proto_field DescribeGroupsResponse_fields[] = {
    PROTO_FIELD(DescribeGroupsResponse, ThrottleTimeMs, INT32, 1, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(DescribeGroupsResponse, Groups, proto_DescribedGroup, 0, PROTO_VMAX, PROTO_NEVER),
};
const struct proto_struct proto_DescribeGroupsResponse = PROTO_LAYOUT(DescribeGroupsResponse);

static const struct proto_field ListGroupsRequest_fields[] = {
    PROTO_ARRAY_OF(ListGroupsRequest, StatesFilter, STRING, 4, PROTO_VMAX, PROTO_NEVER),
};
const struct proto_struct proto_ListGroupsRequest = PROTO_LAYOUT(ListGroupsRequest);

static const struct proto_field ListedGroup_fields[] = {
    PROTO_FIELD(ListedGroup, GroupId, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(ListedGroup, ProtocolType, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(ListedGroup, GroupState, STRING, 4, PROTO_VMAX, PROTO_NEVER, 0),
};
static const struct proto_struct proto_ListedGroup = PROTO_LAYOUT(ListedGroup);

static const struct proto_field ListGroupsResponse_fields[] = {
    PROTO_FIELD(ListGroupsResponse, ThrottleTimeMs, INT32, 1, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(ListGroupsResponse, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(ListGroupsResponse, Groups, proto_ListedGroup, 0, PROTO_VMAX, PROTO_NEVER),
};
const struct proto_struct proto_ListGroupsResponse = PROTO_LAYOUT(ListGroupsResponse);

static const struct proto_field DeleteGroupsRequest_fields[] = {
    PROTO_ARRAY_OF(DeleteGroupsRequest, GroupsNames, STRING, 0, PROTO_VMAX, PROTO_NEVER),
};
const struct proto_struct proto_DeleteGroupsRequest = PROTO_LAYOUT(DeleteGroupsRequest);

static const struct proto_field DeletableGroupResult_fields[] = {
    PROTO_FIELD(DeletableGroupResult, GroupId, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(DeletableGroupResult, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
static const struct proto_struct proto_DeletableGroupResult = PROTO_LAYOUT(DeletableGroupResult);

static const struct proto_field DeleteGroupsResponse_fields[] = {
    PROTO_FIELD(DeleteGroupsResponse, ThrottleTimeMs, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(DeleteGroupsResponse, Results, proto_DeletableGroupResult, 0, PROTO_VMAX,
                  PROTO_NEVER),
};
const struct proto_struct proto_DeleteGroupsResponse = PROTO_LAYOUT(DeleteGroupsResponse);

static const struct proto_field OffsetDeleteRequestPartition_fields[] = {
    PROTO_FIELD(OffsetDeleteRequestPartition, PartitionIndex, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
static const struct proto_struct proto_OffsetDeleteRequestPartition =
    PROTO_LAYOUT(OffsetDeleteRequestPartition);

static const struct proto_field OffsetDeleteRequestTopic_fields[] = {
    PROTO_FIELD(OffsetDeleteRequestTopic, Name, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(OffsetDeleteRequestTopic, Partitions, proto_OffsetDeleteRequestPartition, 0,
                  PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_OffsetDeleteRequestTopic =
    PROTO_LAYOUT(OffsetDeleteRequestTopic);

static const struct proto_field OffsetDeleteRequest_fields[] = {
    PROTO_FIELD(OffsetDeleteRequest, GroupId, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(OffsetDeleteRequest, Topics, proto_OffsetDeleteRequestTopic, 0, PROTO_VMAX,
                  PROTO_NEVER),
};
const struct proto_struct proto_OffsetDeleteRequest = PROTO_LAYOUT(OffsetDeleteRequest);

static const struct proto_field OffsetDeleteResponsePartition_fields[] = {
    PROTO_FIELD(OffsetDeleteResponsePartition, PartitionIndex, INT32, 0, PROTO_VMAX, PROTO_NEVER,
                0),
    PROTO_FIELD(OffsetDeleteResponsePartition, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
};
static const struct proto_struct proto_OffsetDeleteResponsePartition =
    PROTO_LAYOUT(OffsetDeleteResponsePartition);

static const struct proto_field OffsetDeleteResponseTopic_fields[] = {
    PROTO_FIELD(OffsetDeleteResponseTopic, Name, STRING, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(OffsetDeleteResponseTopic, Partitions, proto_OffsetDeleteResponsePartition, 0,
                  PROTO_VMAX, PROTO_NEVER),
};
static const struct proto_struct proto_OffsetDeleteResponseTopic =
    PROTO_LAYOUT(OffsetDeleteResponseTopic);

static const struct proto_field OffsetDeleteResponse_fields[] = {
    PROTO_FIELD(OffsetDeleteResponse, ErrorCode, INT16, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_FIELD(OffsetDeleteResponse, ThrottleTimeMs, INT32, 0, PROTO_VMAX, PROTO_NEVER, 0),
    PROTO_STRUCTS(OffsetDeleteResponse, Topics, proto_OffsetDeleteResponseTopic, 0, PROTO_VMAX,
                  PROTO_NEVER),
};
const struct proto_struct proto_OffsetDeleteResponse = PROTO_LAYOUT(OffsetDeleteResponse);
