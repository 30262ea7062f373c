/* SPDX-License-Identifier: Apache-2.0 */
/* The coordinator's record formats in __consumer_offsets, as Kafka 3.x writes them (the
 * tables are proto's: schema_records.c). Every record is a key and a value, each an INT16
 * version followed by the struct at that version:
 *
 **   key version 0/1  OffsetCommitKey    group STRING, topic STRING, partition INT32
 **   key version 2    GroupMetadataKey   group STRING
 **   OffsetCommitValue v3                offset INT64, leaderEpoch INT32, metadata STRING,
 **                                       commitTimestamp INT64
 **   GroupMetadataValue v3               protocolType STRING, generation INT32,
 **                                       protocol NULLABLE_STRING, leader NULLABLE_STRING,
 **                                       currentStateTimestamp INT64, members ARRAY of
 **                                       {memberId, groupInstanceId NULLABLE, clientId,
 **                                       clientHost, rebalanceTimeout INT32, sessionTimeout
 **                                       INT32, subscription BYTES, assignment BYTES}
 *
 * A null value is a tombstone for its key. Older and newer value versions (0–4) are read. */
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/err.h"
#include "group_int.h"
#include "proto/proto.h"

#define OFFSET_KEY_VERSION 1
#define OFFSET_VALUE_VERSION 3
#define GROUP_VALUE_VERSION 3

int coord_key_decode(const uint8_t *buf, int32_t len, struct coord_key *k, struct arena *ar)
{
    int16_t v;
    int rc;

    memset(k, 0, sizeof *k);
    k->type = COORD_KEY_OTHER;
    if (buf == NULL || len < 2)
        return ERR_PARSE;
    rc = proto_record_version(buf, (size_t)len, &v);
    if (rc != 0)
        return rc;
    if (v == PROTO_OFFSET_COMMIT_KEY_V0 || v == PROTO_OFFSET_COMMIT_KEY_V1) {
        struct OffsetCommitKey key = {0};
        rc = proto_record_decode(&proto_record_OffsetCommitKey, buf, (size_t)len, NULL, &key, ar);
        if (rc != 0)
            return rc;
        if (key.group == NULL || key.topic == NULL)
            return ERR_PARSE;
        k->type = COORD_KEY_OFFSET;
        k->group = key.group;
        k->topic = key.topic;
        k->partition = key.partition;
        return 0;
    }
    if (v == PROTO_GROUP_METADATA_KEY_V) {
        struct GroupMetadataKey key = {0};
        rc = proto_record_decode(&proto_record_GroupMetadataKey, buf, (size_t)len, NULL, &key, ar);
        if (rc != 0)
            return rc;
        if (key.group == NULL)
            return ERR_PARSE;
        k->type = COORD_KEY_GROUP;
        k->group = key.group;
        return 0;
    }
    /* Versions 3+ are the new consumer protocol's records (KIP-848): not ours to read. */
    return 0;
}

int coord_offset_key_encode(const char *group, const char *topic, int32_t partition, uint8_t **out,
                            int32_t *len)
{
    struct OffsetCommitKey key = {(char *)group, (char *)topic, partition};
    return proto_record_encode_alloc(&proto_record_OffsetCommitKey, OFFSET_KEY_VERSION, &key, out,
                                     len);
}

int coord_group_key_encode(const char *group, uint8_t **out, int32_t *len)
{
    struct GroupMetadataKey key = {(char *)group};
    return proto_record_encode_alloc(&proto_record_GroupMetadataKey, PROTO_GROUP_METADATA_KEY_V,
                                     &key, out, len);
}

int coord_offset_value_encode(const struct coord_offset_value *v, uint8_t **out, int32_t *len)
{
    struct OffsetCommitValue val = {
        .offset = v->offset,
        .leaderEpoch = v->leader_epoch,
        .metadata = (char *)(v->metadata ? v->metadata : ""),
        .commitTimestamp = v->commit_ts,
        .expireTimestamp = -1,
    };
    return proto_record_encode_alloc(&proto_record_OffsetCommitValue, OFFSET_VALUE_VERSION, &val,
                                     out, len);
}

int coord_offset_value_decode(const uint8_t *buf, int32_t len, struct coord_offset_value *v,
                              struct arena *ar)
{
    struct OffsetCommitValue val = {0};
    int16_t version;
    int rc =
        proto_record_decode(&proto_record_OffsetCommitValue, buf, (size_t)len, &version, &val, ar);
    if (rc != 0)
        return rc;
    v->offset = val.offset;
    v->leader_epoch = version >= 3 ? val.leaderEpoch : -1;
    v->metadata = val.metadata ? val.metadata : "";
    v->commit_ts = val.commitTimestamp;
    return 0;
}

int coord_group_value_encode(const struct group_sm *sm, uint8_t **out, int32_t *len)
{
    int32_t n;
    const struct group_member_info *m = group_sm_members(sm, &n);
    struct MemberMetadata *mm = calloc((size_t)(n > 0 ? n : 1), sizeof *mm);
    const char *ptype = group_sm_protocol_type(sm);
    int rc;

    if (mm == NULL)
        return ERR_NOMEM;
    for (int32_t i = 0; i < n; i++) {
        mm[i].memberId = (char *)m[i].member_id;
        mm[i].groupInstanceId = (char *)m[i].group_instance_id;
        mm[i].clientId = (char *)(m[i].client_id ? m[i].client_id : "");
        mm[i].clientHost = (char *)(m[i].client_host ? m[i].client_host : "");
        mm[i].rebalanceTimeout = m[i].rebalance_timeout_ms;
        mm[i].sessionTimeout = m[i].session_timeout_ms;
        mm[i].subscription.data = m[i].metadata;
        mm[i].subscription.len = m[i].metadata ? m[i].metadata_len : 0;
        mm[i].assignment.data = m[i].assignment;
        mm[i].assignment.len = m[i].assignment ? m[i].assignment_len : 0;
    }
    struct GroupMetadataValue val = {
        .protocolType = (char *)(ptype ? ptype : ""),
        .generation = group_sm_generation(sm),
        .protocol = (char *)group_sm_protocol_name(sm),
        .leader = (char *)group_sm_leader(sm),
        .currentStateTimestamp = group_sm_state_timestamp(sm),
    };
    val.members.v = mm;
    val.members.n = n;
    rc = proto_record_encode_alloc(&proto_record_GroupMetadataValue, GROUP_VALUE_VERSION, &val, out,
                                   len);
    free(mm);
    return rc;
}

int coord_group_value_decode(const uint8_t *buf, int32_t len, struct group_sm_snapshot *s,
                             struct arena *ar)
{
    struct GroupMetadataValue val = {0};
    struct group_member_info *m;
    int rc =
        proto_record_decode(&proto_record_GroupMetadataValue, buf, (size_t)len, NULL, &val, ar);

    if (rc != 0)
        return rc;
    memset(s, 0, sizeof *s);
    s->protocol_type = val.protocolType && val.protocolType[0] ? val.protocolType : NULL;
    s->protocol_name = val.protocol;
    s->leader = val.leader;
    s->generation_id = val.generation;
    s->state_timestamp = val.currentStateTimestamp;
    if (val.members.n <= 0)
        return 0;
    m = arena_alloc(ar, (size_t)val.members.n * sizeof *m);
    if (m == NULL)
        return ERR_NOMEM;
    for (int32_t i = 0; i < val.members.n; i++) {
        struct MemberMetadata *mm = &val.members.v[i];
        m[i] = (struct group_member_info){
            .member_id = mm->memberId ? mm->memberId : "",
            .group_instance_id = mm->groupInstanceId,
            .client_id = mm->clientId ? mm->clientId : "",
            .client_host = mm->clientHost ? mm->clientHost : "",
            .session_timeout_ms = mm->sessionTimeout,
            .rebalance_timeout_ms =
                mm->rebalanceTimeout >= 0 ? mm->rebalanceTimeout : mm->sessionTimeout,
            .metadata = mm->subscription.data,
            .metadata_len = mm->subscription.len > 0 ? mm->subscription.len : 0,
            .assignment = mm->assignment.data,
            .assignment_len = mm->assignment.len > 0 ? mm->assignment.len : 0,
        };
    }
    s->members = m;
    s->n_members = val.members.n;
    return 0;
}
