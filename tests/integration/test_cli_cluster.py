# SPDX-License-Identifier: Apache-2.0
"""The cluster commands of `tally` against three tallyd processes, all voters of the metadata
quorum, with a cluster id from `tally cluster new-id`:

  cluster describe         the three brokers (fenced or not), the controller, the voters;
  topics describe          after kill -9 of a partition leader: the new leader with a new
                           leader epoch, the shrunk ISR, the dead broker offline, and
                           --under-replicated-partitions listing the partition;
  partitions elect-leaders --preferred moves leadership back once the old leader is back in
                           the ISR (auto.leader.rebalance.enable is off here, so nothing else
                           does).

DescribeQuorum answers NOT_LEADER_OR_FOLLOWER (naming the leader) from a non-leader and
UNKNOWN_TOPIC_OR_PARTITION for anything but __cluster_metadata-0. Waits are bounded polls;
no timing is asserted."""
import re
import struct
import subprocess
import time

import pytest

import harness
import kproto as kp

NOT_LEADER_OR_FOLLOWER = 6
ELECTION_NOT_NEEDED = "ELECTION_NOT_NEEDED"

# Short sessions so that a killed broker is fenced within a few seconds.
SETTINGS = {
    "broker.session.timeout.ms": "3000",
    "broker.heartbeat.interval.ms": "500",
    "auto.leader.rebalance.enable": "false",
}


def ok(result):
    assert result.returncode == 0, "rc=%d\nstdout:\n%s\nstderr:\n%s" % (
        result.returncode, result.stdout, result.stderr)
    return result.stdout


def wait_for(pred, timeout=60.0, what="condition"):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = pred()
        if last:
            return last
        time.sleep(0.2)
    raise AssertionError("timed out waiting for %s (last: %r)" % (what, last))


def new_cluster_id():
    out = ok(subprocess.run([harness.TALLY, "cluster", "new-id"], capture_output=True, text=True,
                            timeout=30))
    cid = out.strip()
    assert re.fullmatch(r"[A-Za-z0-9_-]{22}", cid), out
    assert not cid.startswith("-"), cid
    return cid


@pytest.fixture
def cluster(broker_factory):
    cid = new_cluster_id()
    nodes = [broker_factory(node_id=i, start=False, settings=dict(SETTINGS, **{"cluster.id": cid}))
             for i in (1, 2, 3)]
    voters = ",".join("%d@127.0.0.1:%d" % (n.node_id, n.controller_port) for n in nodes)
    for n in nodes:
        n.settings["controller.quorum.voters"] = voters
        n.start(wait=False)
    for n in nodes:
        n.wait_ready(timeout=60)
    wait_for(lambda: all(broker_ids(n) == [1, 2, 3] for n in nodes), what="three brokers")
    return cid, nodes


def broker_ids(b):
    try:
        with b.conn() as c:
            return sorted(x[0] for x in c.metadata(version=1)["brokers"])
    except (OSError, ConnectionError, ValueError):
        return None


def brokers_of(out):
    """{id: (address, state)} from `cluster describe`'s broker table."""
    rows = {}
    for line in out.splitlines():
        m = re.match(r"^  (\d+)\s+(\S+:\d+)\s+(\S+)\s+(fenced|unfenced)", line)
        if m:
            rows[int(m.group(1))] = (m.group(2), m.group(4))
    return rows


def quorum_of(out):
    """{node: (status, log end, lag)} from `cluster describe`'s quorum table."""
    rows = {}
    table = out.split("Metadata quorum", 1)[1]
    for line in table.splitlines():
        m = re.match(r"^  (\d+)\s+(Leader|Follower|Observer)\s+(\S+)\s+(\S+)\s", line)
        if m:
            rows[int(m.group(1))] = (m.group(2), m.group(3), m.group(4))
    return rows


def partitions_of(out, topic):
    """{partition: {field: value}} from `topics describe` partition lines."""
    got = {}
    for line in out.splitlines():
        if not line.startswith("\tTopic: %s\t" % topic):
            continue
        fields = dict(f.split(": ", 1) for f in line.strip().split("\t"))
        got[int(fields["Partition"])] = fields
    return got


def ids(field):
    return sorted(int(x) for x in field.split(",") if x)


# ---------------------------------------------------------------- DescribeQuorum, raw

def describe_quorum_request(corr, topic="__cluster_metadata", partition=0, version=1):
    hdr = kp.i16(55) + kp.i16(version) + kp.i32(corr) + kp.string("cli-test") + b"\x00"
    body = (kp.uvarint(2) + kp.compact_string(topic) + kp.uvarint(2) + kp.i32(partition) +
            b"\x00" + b"\x00" + b"\x00")
    return kp.frame(hdr + body)


def describe_quorum(b, **kw):
    with b.conn() as c:
        corr = c.next_corr()
        c.send(describe_quorum_request(corr, **kw))
        got, body = c.recv_response(flexible_header=True)
    assert got == corr
    r = kp.Reader(body)

    def replica(rr):
        rid = rr.i32()
        leo, fetch, caught = struct.unpack(">qqq", rr.take(24))
        rr.skip_tags()
        return rid, leo, fetch, caught

    def part(rr):
        p = {"partition": rr.i32(), "error": rr.i16(), "leader": rr.i32(), "epoch": rr.i32(),
             "hw": struct.unpack(">q", rr.take(8))[0]}
        p["voters"] = rr.compact_array(replica)
        p["observers"] = rr.compact_array(replica)
        rr.skip_tags()
        return p

    def topic(rr):
        name = rr.compact_string()
        parts = rr.compact_array(part)
        rr.skip_tags()
        return name, parts

    err = r.i16()
    topics = r.compact_array(topic)
    return err, topics


def controller_of(nodes):
    with nodes[0].conn() as c:
        cid = c.metadata(version=1)["controller_id"]
    return next(n for n in nodes if n.node_id == cid)


# ---------------------------------------------------------------- tests

def test_cluster_describe_shows_brokers_controller_and_voters(cluster):
    cid, nodes = cluster
    out = wait_for(lambda: (lambda o: o if len(quorum_of(o)) == 3 else None)(
        ok(nodes[0].tally("cluster", "describe"))), what="three voters")
    assert re.search(r"^Cluster ID: %s$" % re.escape(cid), out, re.M), out
    ctl = int(re.search(r"^Controller: (\d+)$", out, re.M).group(1))
    assert ctl in (1, 2, 3), out
    assert brokers_of(out) == {n.node_id: ("127.0.0.1:%d" % n.port, "unfenced") for n in nodes}, out
    assert re.search(r"^  %d\s.*unfenced \(controller\)$" % ctl, out, re.M), out
    q = quorum_of(out)
    assert sorted(q) == [1, 2, 3], out
    assert [n for n, (status, _e, _l) in q.items() if status == "Leader"] == [ctl], out
    assert all(status == "Follower" for n, (status, _e, _l) in q.items() if n != ctl), out
    assert re.search(r"^  Leader: %d\tLeaderEpoch: \d+\tHighWatermark: \d+" % ctl, out, re.M), out

    # Only the quorum's leader answers DescribeQuorum; the others name it.
    leader = next(n for n in nodes if n.node_id == ctl)
    err, topics = describe_quorum(leader)
    assert err == 0 and topics[0][0] == "__cluster_metadata", topics
    p = topics[0][1][0]
    assert p["error"] == 0 and p["leader"] == ctl and p["hw"] > 0, p
    assert sorted(v[0] for v in p["voters"]) == [1, 2, 3] and p["observers"] == [], p
    assert all(v[1] > 0 for v in p["voters"]), p
    other = next(n for n in nodes if n.node_id != ctl)
    err, topics = describe_quorum(other)
    p = topics[0][1][0]
    assert err == 0 and p["error"] == NOT_LEADER_OR_FOLLOWER and p["leader"] == ctl, p
    err, topics = describe_quorum(leader, topic="orders")
    assert err == 0 and [(n, [x["partition"] for x in ps]) for n, ps in topics] == [
        ("orders", [0])], topics
    assert topics[0][1][0]["error"] == kp.UNKNOWN_TOPIC_OR_PARTITION, topics
    err, topics = describe_quorum(leader, partition=1)
    assert topics[0][1][0]["error"] == kp.UNKNOWN_TOPIC_OR_PARTITION, topics


def test_failover_then_preferred_election(cluster):
    from confluent_kafka import Producer
    _cid, nodes = cluster
    by_id = {n.node_id: n for n in nodes}
    topic = "cli-failover"
    t = nodes[0].tally
    ok(t("topics", "create", topic, "--partitions", "3", "--replication-factor", "3"))
    parts = wait_for(lambda: (lambda p: p if len(p) == 3 and all(
        ids(x["Isr"]) == [1, 2, 3] and x["Leader"] != "none" for x in p.values()) else None)(
        partitions_of(ok(t("topics", "describe", topic)), topic)), what="three led partitions")

    acked = {p: 0 for p in parts}

    def delivered(err, msg):
        assert err is None, err
        acked[msg.partition()] += 1

    prod = Producer({"bootstrap.servers": ",".join(n.bootstrap for n in nodes), "acks": "all",
                     "enable.idempotence": True})
    for i in range(300):
        prod.produce(topic, b"v%d" % i, partition=i % 3, on_delivery=delivered)
    assert prod.flush(60) == 0
    assert acked == {0: 100, 1: 100, 2: 100}, acked

    # Kill a partition leader that is not the controller (the quorum keeps its leader).
    ctl = controller_of(nodes).node_id
    p, old = next((p, int(x["Leader"])) for p, x in sorted(parts.items())
                  if int(x["Leader"]) != ctl)
    assert parts[p]["Replicas"].split(",")[0] == str(old), parts[p]  # the preferred replica
    epoch = int(parts[p]["LeaderEpoch"])
    by_id[old].kill()
    survivor = by_id[ctl]

    def moved():
        got = partitions_of(ok(survivor.tally("topics", "describe", topic)), topic).get(p)
        return got if got and got["Leader"] not in ("none", str(old)) and \
            old not in ids(got["Isr"]) else None

    after = wait_for(moved, what="a new leader for partition %d" % p)
    assert int(after["LeaderEpoch"]) > epoch, after
    assert ids(after["Isr"]) == sorted({1, 2, 3} - {old}), after
    assert ids(after["Replicas"]) == [1, 2, 3], after
    assert after["Offline"] == str(old) and after["Status"] == "under-replicated", after
    # Nothing acknowledged is missing (the new leader's HW comes once the ISR has fetched).
    wait_for(lambda: partitions_of(ok(survivor.tally("topics", "describe", topic)), topic)[p].get(
        "HW") == str(acked[p]), what="partition %d's HW at %d" % (p, acked[p]))

    # The filters print only partition lines: every partition lost the dead broker.
    under = ok(survivor.tally("topics", "describe", "--under-replicated-partitions"))
    assert not re.search(r"^Topic: ", under, re.M), under
    assert sorted(partitions_of(under, topic)) == [0, 1, 2], under
    assert all(x["Status"] == "under-replicated" for x in partitions_of(under, topic).values())
    assert partitions_of(ok(survivor.tally("topics", "describe", topic,
                                           "--unavailable-partitions")), topic) == {}
    desc = ok(survivor.tally("cluster", "describe"))
    assert brokers_of(desc)[old] == ("127.0.0.1:%d" % by_id[old].port, "fenced"), desc
    # A dead broker cannot say it was fenced: the controller does.
    assert re.search(r"broker %d \(epoch \d+\) fenced: no heartbeat" % old,
                     survivor.stderr_all()), survivor.stderr_tail()

    # The preferred replica is not in the ISR: it cannot lead yet.
    r = survivor.tally("partitions", "elect-leaders", "--preferred", "--topic", topic,
                       "--partition", str(p))
    assert r.returncode == 1 and "PREFERRED_LEADER_NOT_AVAILABLE" in r.stdout, r

    # Back in place: it catches up and rejoins the ISR, still a follower.
    by_id[old].start(wait=False)
    by_id[old].wait_ready(timeout=60)
    back = wait_for(lambda: (lambda x: x if x and ids(x["Isr"]) == [1, 2, 3] else None)(
        partitions_of(ok(survivor.tally("topics", "describe", topic)), topic).get(p)),
        what="broker %d back in the ISR" % old)
    assert back["Leader"] == after["Leader"], back
    wait_for(lambda: ok(survivor.tally("topics", "describe", "--under-replicated-partitions")) ==
             "", what="no under-replicated partition left")

    out = ok(survivor.tally("partitions", "elect-leaders", "--preferred", "--topic", topic,
                            "--partition", str(p)))
    assert out == "Topic: %s\tPartition: %d\tResult: elected (preferred)\tLeader: %d\n" % (
        topic, p, old), out
    now = partitions_of(ok(survivor.tally("topics", "describe", topic)), topic)[p]
    assert now["Leader"] == str(old) and int(now["LeaderEpoch"]) > int(after["LeaderEpoch"]), now
    assert now["Status"] == "ok", now
    wait_for(lambda: partitions_of(ok(survivor.tally("topics", "describe", topic)), topic)[p].get(
        "HW") == str(acked[p]), what="partition %d's HW on its preferred leader" % p)

    # Every partition of the topic: each already led by its preferred replica, or elected now.
    out = ok(survivor.tally("partitions", "elect-leaders", "--topic", topic))
    res = {int(m.group(1)): m.group(2) for m in
           re.finditer(r"Partition: (\d+)\tResult: (\S+)", out)}
    assert sorted(res) == [0, 1, 2] and res[p] == ELECTION_NOT_NEEDED, out
    # An unclean election where every partition has a leader is not needed either.
    out = ok(survivor.tally("partitions", "elect-leaders", "--unclean", "--topic", topic,
                            "--partition", str(p)))
    assert "Result: %s" % ELECTION_NOT_NEEDED in out, out
