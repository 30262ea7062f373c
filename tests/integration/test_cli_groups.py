# SPDX-License-Identifier: Apache-2.0
"""`tally groups` end to end: list, describe, delete, delete-offsets and reset-offsets
against a real broker, with confluent-kafka consumers as the group's members."""
import calendar
import time
import uuid

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

import harness
from test_cli import fails, ok, tally_raw

GROUP_SETTINGS = {"group.initial.rebalance.delay.ms": "100"}
T0 = 1_700_000_000_000  # 2023-11-14T22:13:20Z
PARTS, PER_PART = 3, 100


def unique(prefix):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:8])


@pytest.fixture
def gb(broker_factory):
    return broker_factory(settings=GROUP_SETTINGS)


def make_topic(b):
    """A 3-partition topic with 100 records a partition; record j of a partition has
    timestamp T0 + j seconds."""
    topic = unique("cg")
    harness.create_topics(b, [(topic, PARTS, None)])
    p = Producer({"bootstrap.servers": b.bootstrap, "acks": "all", "linger.ms": 5})
    for j in range(PER_PART):
        for part in range(PARTS):
            p.produce(topic, value=b"r-%d-%d" % (part, j), partition=part,
                      timestamp=T0 + j * 1000)
    assert p.flush(30) == 0
    return topic


def member(b, group, topic, client_id="cli-test-member", seen=None):
    """A subscribed consumer that holds every partition of topic (waits for it); the
    records its polls return meanwhile go to `seen` when given."""
    c = Consumer({"bootstrap.servers": b.bootstrap, "group.id": group, "client.id": client_id,
                  "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    c.subscribe([topic])
    deadline = time.monotonic() + 30
    while len(c.assignment()) < PARTS:
        assert time.monotonic() < deadline, "no assignment for %s" % group
        m = c.poll(0.1)
        if m is not None and not m.error() and seen is not None:
            seen.append(m)
    return c


def commit(c, topic, offsets):
    c.commit(offsets=[TopicPartition(topic, p, o) for p, o in offsets.items()],
             asynchronous=False)


def committed(b, group, topic):
    """{partition: offset} as OffsetFetch answers (-1001 = none), read by a consumer
    that never joins."""
    c = Consumer({"bootstrap.servers": b.bootstrap, "group.id": group})
    try:
        got = c.committed([TopicPartition(topic, p) for p in range(PARTS)], timeout=10)
    finally:
        c.close()
    return {tp.partition: tp.offset for tp in got}


def table(out, header_first):
    """Rows (lists of cells) of the table whose header starts with header_first."""
    lines = out.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.split()[:1] == [header_first])
    rows = []
    for ln in lines[start + 1:]:
        if not ln.strip():
            break
        rows.append(ln.split())
    return lines[start].split(), rows


def fields(out):
    """The 'Key: value' lines at the top of `groups describe`."""
    got = {}
    for ln in out.splitlines():
        if not ln.strip():
            break
        k, _, v = ln.partition(": ")
        got[k] = v
    return got


def test_list_and_describe_active_then_empty_group(gb):
    b = gb
    topic, group = make_topic(b), unique("grp")
    c = member(b, group, topic, client_id="describe-me")
    commit(c, topic, {0: 40, 1: 50})

    assert group in ok(b.tally("groups", "list")).splitlines()
    head, rows = table(ok(b.tally("groups", "list", "--state", "stable")), "GROUP")
    assert head == ["GROUP", "STATE"] and [group, "Stable"] in rows
    _, rows = table(ok(b.tally("groups", "list", "--state", "Empty,Dead")), "GROUP")
    assert group not in [r[0] for r in rows]

    out = ok(b.tally("groups", "describe", group))
    f = fields(out)
    assert f["Group"] == group and f["State"] == "Stable" and f["Members"] == "1", out
    assert f["Assignor"] == "range" and f["Coordinator"].startswith("1 "), out
    head, rows = table(out, "MEMBER-ID")
    assert head == ["MEMBER-ID", "GROUP-INSTANCE-ID", "CLIENT-ID", "HOST", "#PARTITIONS",
                    "ASSIGNMENT"]
    assert len(rows) == 1
    member_id = rows[0][0]
    assert member_id.startswith("describe-me-"), rows
    assert rows[0][1:3] == ["-", "describe-me"] and rows[0][4:] == ["3", "%s:0,1,2" % topic]
    head, rows = table(out, "GROUP")
    assert head == ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG",
                    "CONSUMER-ID", "HOST", "CLIENT-ID"]
    assert [r[:7] for r in rows] == [
        [group, topic, "0", "40", "100", "60", member_id],
        [group, topic, "1", "50", "100", "50", member_id],
        [group, topic, "2", "-", "100", "-", member_id],
    ], out

    c.close()  # LeaveGroup: the group rebalances to Empty and keeps its offsets
    out = ok(b.tally("groups", "describe", group))
    f = fields(out)
    assert f["State"] == "Empty" and f["Members"] == "0", out
    assert "MEMBER-ID" not in out
    _, rows = table(out, "GROUP")
    assert [r[:7] for r in rows] == [
        [group, topic, "0", "40", "100", "60", "-"],
        [group, topic, "1", "50", "100", "50", "-"],
    ], out
    _, rows = table(ok(b.tally("groups", "list", "--state", "empty")), "GROUP")
    assert [group, "Empty"] in rows

    line = fails(b.tally("groups", "describe", unique("nosuch")))
    assert "does not exist" in line


def test_reset_offsets_plans_executes_and_refuses_an_active_group(gb):
    b = gb
    topic, group = make_topic(b), unique("grp")
    c = member(b, group, topic)
    commit(c, topic, {0: 40, 1: 50, 2: 60})

    # Refused while the group has a member, dry run or not.
    for extra in ([], ["--execute"]):
        line = fails(b.tally("groups", "reset-offsets", group, "--topic", topic,
                             "--to-earliest", *extra))
        assert "active member" in line and "Stable" in line, line
    c.close()
    start = {0: 40, 1: 50, 2: 60}
    assert committed(b, group, topic) == start

    def plan(*args):
        r = b.tally("groups", "reset-offsets", group, *args)
        head, rows = table(ok(r), "GROUP")
        assert head == ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "NEW-OFFSET"]
        return {int(r[2]): (r[3], int(r[4])) for r in rows}

    # A dry run prints the plan and changes nothing.
    r = b.tally("groups", "reset-offsets", group, "--topic", topic, "--to-earliest")
    assert "dry run" in r.stderr
    assert plan("--topic", topic, "--to-earliest") == {0: ("40", 0), 1: ("50", 0), 2: ("60", 0)}
    assert committed(b, group, topic) == start

    assert plan("--topic", topic, "--to-earliest", "--execute") == {
        0: ("40", 0), 1: ("50", 0), 2: ("60", 0)}
    assert committed(b, group, topic) == {0: 0, 1: 0, 2: 0}

    assert plan("--topic", topic + ":1,2", "--to-latest", "--execute") == {
        1: ("0", 100), 2: ("0", 100)}
    assert committed(b, group, topic) == {0: 0, 1: 100, 2: 100}

    # Outside [log start, log end] an offset is clamped, as kafka-consumer-groups.sh does.
    assert plan("--topic", topic + ":0", "--to-offset", "1000", "--execute") == {0: ("0", 100)}
    assert plan("--topic", topic, "--to-offset", "7", "--execute") == {
        0: ("100", 7), 1: ("100", 7), 2: ("100", 7)}
    assert plan("--topic", topic, "--shift-by", "-10", "--execute") == {
        0: ("7", 0), 1: ("7", 0), 2: ("7", 0)}
    assert plan("--topic", topic + ":2", "--shift-by", "25", "--execute") == {2: ("0", 25)}
    assert committed(b, group, topic) == {0: 0, 1: 0, 2: 25}

    # Record j has timestamp T0 + j s: 42.5 s after T0 the first record at or after it
    # is j = 43; a time past every record gives the log end.
    iso = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(T0 // 1000 + 42)) + ".500Z"
    assert plan("--topic", topic, "--to-datetime", iso, "--execute") == {
        0: ("0", 43), 1: ("0", 43), 2: ("25", 43)}
    late = time.strftime("%Y-%m-%dT%H:%M:%S+02:00", time.gmtime(T0 // 1000 + 7200 + 500))
    assert plan("--topic", topic + ":0", "--to-datetime", late, "--execute") == {0: ("43", 100)}
    assert committed(b, group, topic) == {0: 100, 1: 43, 2: 43}
    assert calendar.timegm(time.strptime(iso[:19], "%Y-%m-%dT%H:%M:%S")) == T0 // 1000 + 42

    # A new group may be given offsets before any consumer ever joins it.
    fresh = unique("fresh")
    r = b.tally("groups", "reset-offsets", fresh, "--topic", topic, "--to-offset", "5",
                "--execute")
    ok(r)
    assert committed(b, fresh, topic) == {0: 5, 1: 5, 2: 5}
    msgs = []
    c = member(b, fresh, topic, seen=msgs)
    try:
        deadline = time.monotonic() + 20
        while len({m.partition() for m in msgs}) < PARTS:
            assert time.monotonic() < deadline
            msgs += [m for m in c.consume(100, 0.2) if not m.error()]
        first = {}
        for m in msgs:
            first.setdefault(m.partition(), m.offset())
        assert first == {0: 5, 1: 5, 2: 5}
    finally:
        c.close()

    # Shifting a partition with no committed offset has nothing to shift from.
    other = unique("other")
    line = fails(b.tally("groups", "reset-offsets", other, "--topic", topic, "--shift-by", "1"))
    assert "no committed offset" in line
    line = fails(b.tally("groups", "reset-offsets", group, "--topic", "nosuch-topic",
                         "--to-latest"))
    assert "does not exist" in line
    line = fails(b.tally("groups", "reset-offsets", group, "--topic", topic + ":9",
                         "--to-latest"))
    assert "no partition 9" in line


def test_delete_offsets_and_delete_group(gb):
    b = gb
    topic, group = make_topic(b), unique("grp")
    c = member(b, group, topic)
    commit(c, topic, {0: 10, 1: 20, 2: 30})

    # The group is subscribed to the topic: Kafka keeps its offsets (per partition).
    r = b.tally("groups", "delete-offsets", group, "--topic", topic)
    line = fails(r)
    assert "kept their offsets" in line
    _, rows = table(r.stdout, "TOPIC")
    assert rows == [[topic, str(p), "Error:", "GROUP_SUBSCRIBED_TO_TOPIC"] for p in range(3)]
    line = fails(b.tally("groups", "delete", group))
    assert "NON_EMPTY_GROUP" in line

    c.close()
    _, rows = table(ok(b.tally("groups", "delete-offsets", group, "--topic", topic + ":1")),
                    "TOPIC")
    assert rows == [[topic, "1", "Successful"]]
    assert committed(b, group, topic) == {0: 10, 1: -1001, 2: 30}

    assert "Deleted group %s." % group in ok(b.tally("groups", "delete", group))
    assert group not in ok(b.tally("groups", "list")).splitlines()
    assert committed(b, group, topic) == {0: -1001, 1: -1001, 2: -1001}
    line = fails(b.tally("groups", "delete", group))
    assert "GROUP_ID_NOT_FOUND" in line


@pytest.mark.parametrize("args", [
    ["groups"],
    ["groups", "frob"],
    ["groups", "list", "--state"],
    ["groups", "list", "--state", "Sleeping"],
    ["groups", "describe"],
    ["groups", "delete"],
    ["groups", "delete-offsets", "g"],
    ["groups", "delete-offsets", "--topic", "t"],
    ["groups", "reset-offsets", "g", "--topic", "t"],
    ["groups", "reset-offsets", "g", "--to-latest"],
    ["groups", "reset-offsets", "g", "--topic", "t", "--to-latest", "--to-earliest"],
    ["groups", "reset-offsets", "g", "--topic", "t", "--to-offset", "-1"],
    ["groups", "reset-offsets", "g", "--topic", "t", "--shift-by", "x"],
    ["groups", "reset-offsets", "g", "--topic", "t", "--to-datetime", "yesterday"],
    ["groups", "reset-offsets", "g", "--topic", "t", "--to-datetime", "2024-13-01T00:00:00"],
    ["groups", "reset-offsets", "g", "--topic", "t", "--to-datetime", "2024-01-01T00:00:00+5"],
])
def test_bad_command_lines_exit_2(args):
    # No broker is contacted: the address is never used.
    r = tally_raw("-b", "127.0.0.1:1", *args)
    assert r.returncode == 2, (args, r.returncode, r.stdout, r.stderr)
    assert r.stderr.startswith("tally: ") or r.stderr.startswith("usage: "), r.stderr


def test_help_texts():
    for args in (["groups", "--help"], ["groups", "reset-offsets", "--help"],
                 ["groups", "list", "-h"]):
        r = tally_raw(*args)
        assert r.returncode == 0 and r.stdout.startswith("usage: tally groups"), (args, r)
    assert "groups reset-offsets" in tally_raw("--help").stdout
