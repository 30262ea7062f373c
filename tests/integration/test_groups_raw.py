# SPDX-License-Identifier: Apache-2.0
"""The group coordinator driven with raw requests (kproto's group schemas), so that no client
library hides what the broker answers: every group API at its lowest and highest version,
the bad inputs of issue 9 each with Kafka's error code while another client keeps being
served, and committed offsets and group metadata surviving kill -9 (replay of
__consumer_offsets)."""
import os
import socket
import threading
import time
import uuid

import pytest

import harness
import kproto

OFFSET_COMMIT, OFFSET_FETCH, FIND_COORDINATOR = 8, 9, 10
JOIN_GROUP, HEARTBEAT, LEAVE_GROUP, SYNC_GROUP = 11, 12, 13, 14
DESCRIBE_GROUPS, LIST_GROUPS, DELETE_GROUPS, OFFSET_DELETE = 15, 16, 42, 47

COORDINATOR_LOAD_IN_PROGRESS = 14
COORDINATOR_NOT_AVAILABLE = 15
NOT_COORDINATOR = 16
INCONSISTENT_GROUP_PROTOCOL = 23
INVALID_GROUP_ID = 24
UNKNOWN_MEMBER_ID = 25
INVALID_REQUEST = 42
GROUP_ID_NOT_FOUND = 69
MEMBER_ID_REQUIRED = 79

SETTINGS = {"offsets.topic.num.partitions": "5", "group.initial.rebalance.delay.ms": "0"}

# (lowest, highest) version of every group API Tally serves.
VERSIONS = {
    "low": {OFFSET_COMMIT: 0, OFFSET_FETCH: 0, FIND_COORDINATOR: 0, JOIN_GROUP: 0,
            HEARTBEAT: 0, LEAVE_GROUP: 0, SYNC_GROUP: 0, DESCRIBE_GROUPS: 0, LIST_GROUPS: 0,
            DELETE_GROUPS: 0, OFFSET_DELETE: 0},
    "high": {OFFSET_COMMIT: 8, OFFSET_FETCH: 8, FIND_COORDINATOR: 4, JOIN_GROUP: 9,
             HEARTBEAT: 4, LEAVE_GROUP: 5, SYNC_GROUP: 5, DESCRIBE_GROUPS: 5, LIST_GROUPS: 4,
             DELETE_GROUPS: 2, OFFSET_DELETE: 0},
}


def unique(prefix):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:8])


@pytest.fixture(scope="module")
def gbroker(tmp_path_factory):
    b = harness.TallyBroker(tmp_path_factory.mktemp("groups"), settings=SETTINGS)
    b.start()
    harness.create_topics(b, [("orders", 3, None)])
    harness.wait_leaders(b, ["orders"])
    wait_coordinator(b, "warm-up")
    yield b
    b.stop(check=True)


def find(c, key, version=3):
    rs = c.group(FIND_COORDINATOR, version, {"Key": key, "CoordinatorKeys": [key]})
    if version >= 4:
        return rs["Coordinators"][0]
    return rs


def wait_coordinator(b, group, timeout=60):
    """FindCoordinator until it names this broker (the first one creates the topic), then
    OffsetFetch until the group's shard has loaded."""
    deadline = time.monotonic() + timeout
    with b.conn() as c:
        while True:
            rs = find(c, group)
            if rs["ErrorCode"] == 0:
                assert rs["NodeId"] == b.node_id and rs["Port"] == b.port, rs
                break
            assert rs["ErrorCode"] == COORDINATOR_NOT_AVAILABLE, rs
            assert time.monotonic() < deadline, "no coordinator: %r" % rs
            time.sleep(0.1)
        while True:
            rs = c.group(OFFSET_FETCH, 8, {"Groups": [{"GroupId": group, "Topics": None}]})
            err = rs["Groups"][0]["ErrorCode"]
            if err == 0:
                return
            assert err in (COORDINATOR_LOAD_IN_PROGRESS, NOT_COORDINATOR), rs
            assert time.monotonic() < deadline, "shard not loaded: %r" % rs
            time.sleep(0.1)


def commit_parts(c, version, group, gen, member, parts):
    rs = c.group(OFFSET_COMMIT, version, {
        "GroupId": group, "GenerationIdOrMemberEpoch": gen, "MemberId": member,
        "Topics": [{"Name": t, "Partitions": [{"PartitionIndex": p, "CommittedOffset": o,
                                               "CommittedMetadata": "m%d" % o}]}
                   for (t, p), o in parts.items()]})
    return {(t["Name"], p["PartitionIndex"]): p["ErrorCode"]
            for t in rs["Topics"] for p in t["Partitions"]}


def fetch_parts(c, version, group, parts):
    by_topic = {}
    for t, p in parts:
        by_topic.setdefault(t, []).append(p)
    topics = [{"Name": t, "PartitionIndexes": ps} for t, ps in by_topic.items()]
    if version >= 8:
        rs = c.group(OFFSET_FETCH, version, {"Groups": [{"GroupId": group, "Topics": topics}]})
        g = rs["Groups"][0]
        assert g["ErrorCode"] == 0, rs
        topics_rs = g["Topics"]
    else:
        rs = c.group(OFFSET_FETCH, version, {"GroupId": group, "Topics": topics})
        if version >= 2:
            assert rs["ErrorCode"] == 0, rs
        topics_rs = rs["Topics"]
    return {(t["Name"], p["PartitionIndex"]): (p["ErrorCode"], p["CommittedOffset"], p["Metadata"])
            for t in topics_rs for p in t["Partitions"]}


def join_member(c, version, group, topics=("orders",), instance=None):
    """Joins as a new member (answering MEMBER_ID_REQUIRED on v4+); returns the response."""
    md = kproto.consumer_subscription(list(topics))
    rq = {"GroupId": group, "SessionTimeoutMs": 10000, "RebalanceTimeoutMs": 10000,
          "MemberId": "", "GroupInstanceId": instance, "ProtocolType": "consumer",
          "Protocols": [{"Name": "range", "Metadata": md}], "Reason": "test"}
    rs = c.group(JOIN_GROUP, version, rq)
    if version >= 4 and instance is None:
        assert rs["ErrorCode"] == MEMBER_ID_REQUIRED, rs
        assert rs["MemberId"], rs
        rq["MemberId"] = rs["MemberId"]
        rs = c.group(JOIN_GROUP, version, rq)
    assert rs["ErrorCode"] == 0, rs
    return rs


@pytest.mark.parametrize("which", ["low", "high"])
def test_every_group_api_at_lowest_and_highest_version(gbroker, which):
    v = VERSIONS[which]
    group = unique("flow-" + which)
    wait_coordinator(gbroker, group)
    with gbroker.conn() as c:
        rs = find(c, group, v[FIND_COORDINATOR])
        assert rs["ErrorCode"] == 0 and rs["NodeId"] == 1 and rs["Port"] == gbroker.port, rs

        rs = join_member(c, v[JOIN_GROUP], group)
        member, gen = rs["MemberId"], rs["GenerationId"]
        assert gen == 1 and rs["Leader"] == member, rs
        assert [m["MemberId"] for m in rs["Members"]] == [member], rs
        assert rs["ProtocolName"] == "range", rs

        assignment = kproto.consumer_assignment({"orders": [0, 1, 2]})
        rs = c.group(SYNC_GROUP, v[SYNC_GROUP], {
            "GroupId": group, "GenerationId": gen, "MemberId": member,
            "ProtocolType": "consumer", "ProtocolName": "range",
            "Assignments": [{"MemberId": member, "Assignment": assignment}]})
        assert rs["ErrorCode"] == 0 and rs["Assignment"] == assignment, rs

        rs = c.group(HEARTBEAT, v[HEARTBEAT],
                     {"GroupId": group, "GenerationId": gen, "MemberId": member})
        assert rs["ErrorCode"] == 0, rs

        # A member commits with its generation (v1+: v0 carries none, which Kafka takes as
        # a simple commit, refused for a group with members: UNKNOWN_MEMBER_ID).
        parts = {("orders", 0): 10, ("orders", 2): 30}
        errs = commit_parts(c, v[OFFSET_COMMIT], group, gen, member, parts)
        if v[OFFSET_COMMIT] == 0:
            assert errs == {k: UNKNOWN_MEMBER_ID for k in parts}, errs
            errs = commit_parts(c, 1, group, gen, member, parts)
        assert errs == {k: 0 for k in parts}, errs
        got = fetch_parts(c, v[OFFSET_FETCH], group, list(parts) + [("orders", 1)])
        assert got[("orders", 0)] == (0, 10, "m10"), got
        assert got[("orders", 2)] == (0, 30, "m30"), got
        assert got[("orders", 1)][:2] == (0, -1), got

        rs = c.group(DESCRIBE_GROUPS, v[DESCRIBE_GROUPS],
                     {"Groups": [group], "IncludeAuthorizedOperations": True})
        d = rs["Groups"][0]
        assert d["ErrorCode"] == 0 and d["GroupState"] == "Stable", d
        assert d["ProtocolType"] == "consumer" and d["ProtocolData"] == "range", d
        assert len(d["Members"]) == 1 and d["Members"][0]["MemberId"] == member, d
        assert d["Members"][0]["ClientId"] == "kproto", d
        assert d["Members"][0]["ClientHost"] == "/127.0.0.1", d
        assert d["Members"][0]["MemberAssignment"] == assignment, d
        if v[DESCRIBE_GROUPS] >= 3:
            assert d["AuthorizedOperations"] == (1 << 3) | (1 << 6) | (1 << 8), d

        rq = {"StatesFilter": ["stable"]} if v[LIST_GROUPS] >= 4 else {}
        rs = c.group(LIST_GROUPS, v[LIST_GROUPS], rq)
        assert rs["ErrorCode"] == 0, rs
        listed = {g["GroupId"]: g for g in rs["Groups"]}
        assert listed[group]["ProtocolType"] == "consumer", rs
        if v[LIST_GROUPS] >= 4:
            assert all(g["GroupState"] == "Stable" for g in rs["Groups"]), rs

        if v[LEAVE_GROUP] >= 3:
            rs = c.group(LEAVE_GROUP, v[LEAVE_GROUP], {
                "GroupId": group, "Members": [{"MemberId": member, "Reason": "done"},
                                              {"MemberId": "nobody"}]})
            assert rs["ErrorCode"] == 0, rs
            assert [m["ErrorCode"] for m in rs["Members"]] == [0, UNKNOWN_MEMBER_ID], rs
        else:
            rs = c.group(LEAVE_GROUP, v[LEAVE_GROUP], {"GroupId": group, "MemberId": member})
            assert rs["ErrorCode"] == 0, rs

        rs = c.group(OFFSET_DELETE, v[OFFSET_DELETE], {
            "GroupId": group, "Topics": [{"Name": "orders", "Partitions": [{"PartitionIndex": 2}]}]})
        assert rs["ErrorCode"] == 0, rs
        assert rs["Topics"][0]["Partitions"][0]["ErrorCode"] == 0, rs
        got = fetch_parts(c, v[OFFSET_FETCH], group, [("orders", 0), ("orders", 2)])
        assert got[("orders", 2)][:2] == (0, -1) and got[("orders", 0)][1] == 10, got

        # The group is Empty now: a simple commit (generation -1, no member) is taken.
        assert commit_parts(c, v[OFFSET_COMMIT], group, -1, "", {("orders", 1): 11}) == \
            {("orders", 1): 0}
        got = fetch_parts(c, v[OFFSET_FETCH], group, [("orders", 1)])
        assert got[("orders", 1)] == (0, 11, "m11"), got

        deadline = time.monotonic() + 10
        while True:
            rs = c.group(DELETE_GROUPS, v[DELETE_GROUPS], {"GroupsNames": [group]})
            if rs["Results"][0]["ErrorCode"] == 0:
                break
            assert time.monotonic() < deadline, rs  # NON_EMPTY_GROUP until it is Empty
            time.sleep(0.1)
        rs = c.group(DELETE_GROUPS, v[DELETE_GROUPS], {"GroupsNames": [group]})
        assert rs["Results"][0]["ErrorCode"] == GROUP_ID_NOT_FOUND, rs
        got = fetch_parts(c, v[OFFSET_FETCH], group, [("orders", 0)])
        assert got[("orders", 0)][:2] == (0, -1), got


def served(b):
    """Another client is served meanwhile: a FindCoordinator on a fresh connection."""
    with b.conn() as other:
        rs = find(other, "bystander")
        assert rs["ErrorCode"] == 0, rs


def test_bad_inputs_get_kafkas_codes(gbroker):
    with gbroker.conn() as c:
        wait_coordinator(gbroker, "bad")
        rs = c.group(JOIN_GROUP, 5, {"GroupId": "bad", "SessionTimeoutMs": 10000,
                                     "RebalanceTimeoutMs": 10000, "ProtocolType": "consumer",
                                     "Protocols": []})
        assert rs["ErrorCode"] == INCONSISTENT_GROUP_PROTOCOL, rs
        served(gbroker)

        rs = c.group(HEARTBEAT, 4, {"GroupId": unique("never"), "GenerationId": 1,
                                    "MemberId": "m"})
        assert rs["ErrorCode"] == UNKNOWN_MEMBER_ID, rs
        served(gbroker)

        rs = c.group(JOIN_GROUP, 9, {"GroupId": "", "SessionTimeoutMs": 10000,
                                     "ProtocolType": "consumer",
                                     "Protocols": [{"Name": "range", "Metadata": b"x"}]})
        assert rs["ErrorCode"] == INVALID_GROUP_ID, rs
        rs = c.group(HEARTBEAT, 0, {"GroupId": "", "MemberId": "m"})
        assert rs["ErrorCode"] == INVALID_GROUP_ID, rs
        served(gbroker)

        errs = commit_parts(c, 8, "bad", -1, "", {("no-such-topic", 0): 1, ("orders", 7): 1,
                                                  ("orders", 1): 5})
        assert errs == {("no-such-topic", 0): kproto.UNKNOWN_TOPIC_OR_PARTITION,
                        ("orders", 7): kproto.UNKNOWN_TOPIC_OR_PARTITION,
                        ("orders", 1): 0}, errs
        served(gbroker)

        long_id = "L" * 300
        wait_coordinator(gbroker, long_id)
        rs = join_member(c, 9, long_id)
        member, gen = rs["MemberId"], rs["GenerationId"]
        assert gen == 1, rs
        # Before the leader's SyncGroup the group is CompletingRebalance: commits wait.
        assert commit_parts(c, 8, long_id, gen, member, {("orders", 0): 3}) == \
            {("orders", 0): 27}  # REBALANCE_IN_PROGRESS
        rs = c.group(SYNC_GROUP, 5, {"GroupId": long_id, "GenerationId": gen, "MemberId": member,
                                     "Assignments": [{"MemberId": member, "Assignment": b""}]})
        assert rs["ErrorCode"] == 0, rs
        assert commit_parts(c, 8, long_id, gen, member, {("orders", 0): 3}) == {("orders", 0): 0}

    # A 10 MiB protocol metadata: refused (INVALID_REQUEST, documented bound of 1 MiB per
    # member), while another connection is served during the upload.
    big = b"\0" * (10 << 20)
    with gbroker.conn(timeout=60) as c:
        rq = {"GroupId": "big", "SessionTimeoutMs": 10000, "RebalanceTimeoutMs": 10000,
              "ProtocolType": "consumer", "Protocols": [{"Name": "range", "Metadata": big}]}
        corr = c.next_corr()
        data = kproto.group_request(JOIN_GROUP, 5, corr, rq)
        half = len(data) // 2
        c.send(data[:half])
        served(gbroker)
        c.send(data[half:])
        got, body = c.recv_response(False)
        assert got == corr
        rs = kproto.parse_group_response(JOIN_GROUP, 5, body)
        assert rs["ErrorCode"] == INVALID_REQUEST, rs
    served(gbroker)


ILLEGAL_GENERATION = 22


def test_commit_at_a_stale_generation_is_refused_and_changes_nothing(gbroker):
    """A member that rejoined (generation 2) and still commits with generation 1 gets
    ILLEGAL_GENERATION (22) at every OffsetCommit version that carries a generation, and the
    committed offset stays what generation 1 committed; the same commit at generation 2 is
    taken. This is the OffsetCommit handler's own check, end to end."""
    group = unique("stale")
    wait_coordinator(gbroker, group)
    part = ("orders", 1)
    with gbroker.conn() as c:
        rs = join_member(c, 9, group)
        member, gen1 = rs["MemberId"], rs["GenerationId"]
        assert gen1 == 1, rs

        def sync(gen):
            rs = c.group(SYNC_GROUP, 5, {
                "GroupId": group, "GenerationId": gen, "MemberId": member,
                "ProtocolType": "consumer", "ProtocolName": "range",
                "Assignments": [{"MemberId": member, "Assignment": b""}]})
            assert rs["ErrorCode"] == 0, rs

        sync(gen1)
        assert commit_parts(c, 8, group, gen1, member, {part: 5}) == {part: 0}

        # The member joins again with its id: the group moves to generation 2.
        md = kproto.consumer_subscription(["orders"])
        rs = c.group(JOIN_GROUP, 9, {
            "GroupId": group, "SessionTimeoutMs": 10000, "RebalanceTimeoutMs": 10000,
            "MemberId": member, "GroupInstanceId": None, "ProtocolType": "consumer",
            "Protocols": [{"Name": "range", "Metadata": md}], "Reason": "rejoin"})
        assert rs["ErrorCode"] == 0 and rs["MemberId"] == member, rs
        gen2 = rs["GenerationId"]
        assert gen2 == gen1 + 1, rs
        sync(gen2)
        rs = c.group(DESCRIBE_GROUPS, 5, {"Groups": [group]})
        assert rs["Groups"][0]["GroupState"] == "Stable", rs

        for version in range(1, 9):
            assert commit_parts(c, version, group, gen1, member, {part: 9}) == \
                {part: ILLEGAL_GENERATION}, version
            got = fetch_parts(c, 8, group, [part])
            assert got[part] == (0, 5, "m5"), (version, got)
        # The broker says so in its log, with the generation the commit carried.
        assert ("group %s: OffsetCommit from member %s at generation %d refused, the group is "
                "at generation %d (ILLEGAL_GENERATION): orders-1@9" % (group, member, gen1, gen2)
                ) in gbroker.stderr_all()
        # A generation ahead of the group's is stale the other way: refused too.
        assert commit_parts(c, 8, group, gen2 + 1, member, {part: 9}) == \
            {part: ILLEGAL_GENERATION}
        assert fetch_parts(c, 8, group, [part])[part] == (0, 5, "m5")

        assert commit_parts(c, 8, group, gen2, member, {part: 9}) == {part: 0}
        assert fetch_parts(c, 8, group, [part])[part] == (0, 9, "m9")


def test_committed_offsets_and_groups_survive_kill_9(broker_factory):
    b = broker_factory(settings=SETTINGS)
    harness.create_topics(b, [("orders", 3, None)])
    harness.wait_leaders(b, ["orders"])
    simple, grp = "simple-g", "member-g"
    wait_coordinator(b, simple)
    wait_coordinator(b, grp)
    with b.conn() as c:
        assert commit_parts(c, 8, simple, -1, "", {("orders", 0): 100, ("orders", 1): 101}) == \
            {("orders", 0): 0, ("orders", 1): 0}
        assert commit_parts(c, 8, simple, -1, "", {("orders", 0): 200}) == {("orders", 0): 0}
        rs = join_member(c, 9, grp)
        member, gen = rs["MemberId"], rs["GenerationId"]
        rs = c.group(SYNC_GROUP, 5, {"GroupId": grp, "GenerationId": gen, "MemberId": member,
                                     "Assignments": [{"MemberId": member,
                                                      "Assignment": b"assigned"}]})
        assert rs["ErrorCode"] == 0, rs
        assert commit_parts(c, 8, grp, gen, member, {("orders", 2): 7}) == {("orders", 2): 0}
    b.restart(hard=True)
    wait_coordinator(b, simple)
    wait_coordinator(b, grp)
    with b.conn() as c:
        got = fetch_parts(c, 8, simple, [("orders", 0), ("orders", 1)])
        assert got == {("orders", 0): (0, 200, "m200"), ("orders", 1): (0, 101, "m101")}, got
        got = fetch_parts(c, 8, grp, [("orders", 2)])
        assert got == {("orders", 2): (0, 7, "m7")}, got
        rs = c.group(DESCRIBE_GROUPS, 5, {"Groups": [grp]})
        d = rs["Groups"][0]
        assert d["GroupState"] == "Stable" and len(d["Members"]) == 1, d
        assert d["Members"][0]["MemberId"] == member, d
        assert d["Members"][0]["MemberAssignment"] == b"assigned", d
        # The restored member's generation is still good for a commit.
        assert commit_parts(c, 8, grp, gen, member, {("orders", 2): 8}) == {("orders", 2): 0}
    assert "loaded __consumer_offsets-" in b.stderr_all()


def java_hash(s):
    h = 0
    b = s.encode("utf-16-be")
    for i in range(0, len(b), 2):
        h = (31 * h + int.from_bytes(b[i:i + 2], "big")) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def test_records_are_kafkas_formats(gbroker):
    """What the coordinator writes is Kafka's: the group's partition is abs(javaHash) % 5, an
    offset commit is OffsetCommitKey v1 / OffsetCommitValue v3, a group's metadata
    GroupMetadataKey v2 / GroupMetadataValue v3, and a deletion writes null values."""
    import struct
    group = unique("fmt-é")
    wait_coordinator(gbroker, group)
    part = abs(java_hash(group)) % 5
    with gbroker.conn() as c:
        rs = join_member(c, 9, group)
        member, gen = rs["MemberId"], rs["GenerationId"]
        rs = c.group(SYNC_GROUP, 5, {"GroupId": group, "GenerationId": gen, "MemberId": member,
                                     "Assignments": [{"MemberId": member, "Assignment": b"A"}]})
        assert rs["ErrorCode"] == 0, rs
        assert commit_parts(c, 8, group, gen, member, {("orders", 1): 77}) == {("orders", 1): 0}
        c.group(LEAVE_GROUP, 5, {"GroupId": group, "Members": [{"MemberId": member}]})
        deadline = time.monotonic() + 10
        while c.group(DELETE_GROUPS, 2, {"GroupsNames": [group]})["Results"][0]["ErrorCode"]:
            assert time.monotonic() < deadline
            time.sleep(0.1)
    recs = harness.fetch_all_raw(gbroker, "__consumer_offsets", part)
    g = group.encode()

    def s16(b):
        return struct.pack(">h", len(b)) + b

    offset_key = struct.pack(">h", 1) + s16(g) + s16(b"orders") + struct.pack(">i", 1)
    values = [r[3] for r in recs if r[2] == offset_key]
    assert values, "no OffsetCommitKey v1 for %s in partition %d" % (group, part)
    v = values[0]
    version, offset, epoch = struct.unpack_from(">hqi", v, 0)
    assert (version, offset, epoch) == (3, 77, -1), v
    assert v[14:16 + len(b"m77")] == s16(b"m77"), v
    group_key = struct.pack(">h", 2) + s16(g)
    metas = [r[3] for r in recs if r[2] == group_key]
    assert metas, "no GroupMetadataKey v2 for %s" % group
    first = metas[0]
    assert struct.unpack_from(">h", first, 0)[0] == 3, first
    assert first[2:4 + len(b"consumer")] == s16(b"consumer"), first
    assert struct.unpack_from(">i", first, 4 + len(b"consumer"))[0] == gen, first
    assert member.encode() in first and b"kproto" in first, first
    # DeleteGroups: tombstones (null values) for the offset and the group, last of each key.
    assert values[-1] is None and metas[-1] is None, (values[-1:], metas[-1:])
