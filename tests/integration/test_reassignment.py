# SPDX-License-Identifier: Apache-2.0
"""Reassignment (the cluster issue's "Reassignment" paragraph) on four tallyd processes:
three voters and a broker-only node 4. A partition of an RF=3 topic on brokers 1, 2, 3 moves
to 2, 3, 4 with `tally partitions reassign --execute --throttle` while an idempotent acks=all
producer writes to it: nothing acknowledged is lost (every record read back exactly once),
brokers 2 and 3 stay in the ISR throughout, the moved replica's segment files are the
leader's byte for byte, broker 1 lets go of it, leadership leaves broker 1, and the move's
rate — node 4's log growing on disk, between 20 % and 80 % of the way — stays within 20 % of
the throttle; --verify then removes the throttles. A second partition's move is cancelled
half-way and the partition is back on 1, 2, 3.

One cluster serves the module."""
import json
import os
import re
import threading
import time
import urllib.request

import pytest
from confluent_kafka import Producer

import harness
import kproto

CLUSTER_ID = "testReassignmentFour1"
SETTINGS = {
    "replica.lag.time.max.ms": "10000",
    "min.insync.replicas": "2",
}
RECORD = 1000                 # bytes of value per preloaded record
PRELOAD = 6000                # records: ~6 MB to move
THROTTLE = 1000000            # bytes/s
SLOW_THROTTLE = 200000        # bytes/s: the cancelled move is still going when cancelled
NOT_CONTROLLER = 41


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, request):
    base = tmp_path_factory.mktemp("reassign")
    nodes = [harness.TallyBroker(base / ("n%d" % i), node_id=i) for i in (1, 2, 3, 4)]
    voters = nodes[:3]
    quorum = ",".join("%d@127.0.0.1:%d" % (n.node_id, n.controller_port) for n in voters)
    for n in nodes:
        n.settings.update(SETTINGS)
        n.settings.update({"controller.quorum.voters": quorum, "cluster.id": CLUSTER_ID})
    # Node 1 leads the moved partition: its /metrics tells whether it counts it under-replicated.
    nodes[0].metrics_port = harness.free_port()
    nodes[0].settings["metrics.listener"] = "127.0.0.1:%d" % nodes[0].metrics_port
    nodes[3].settings.update({
        "process.roles": "broker",
        "controller.quorum.bootstrap.servers": ",".join(v.bootstrap for v in voters)})
    try:
        for n in nodes:
            n.start(wait=False)
        for n in nodes:
            n.wait_ready(60)
        wait_for(lambda: all(len(metadata(n)["brokers"]) == 4 for n in nodes),
                 "every broker unfenced")
        yield nodes
    finally:
        problems = []
        for n in nodes:
            try:
                if n.alive():
                    n.stop(check=True)
                else:
                    n.check_sanitizers()
            except AssertionError as e:
                problems.append(str(e))
        if problems or request.session.testsfailed:
            harness.dump_logs(nodes)
        assert not problems, "\n".join(problems)


def wait_for(cond, what, timeout=60.0):
    deadline = time.monotonic() + timeout
    while True:
        try:
            if cond():
                return
        except (OSError, ConnectionError, ValueError, KeyError, IndexError):
            pass  # not there yet (a broker that has not applied the topic)
        assert time.monotonic() < deadline, "timed out waiting for " + what
        time.sleep(0.1)


def metadata(node, topics=None):
    with node.conn() as c:
        return c.metadata_flex(topics=topics, version=12)


def partition_md(node, topic, partition=0):
    t = [x for x in metadata(node, [(None, topic)])["topics"] if x["name"] == topic][0]
    return t["partitions"][partition]


def bootstrap(nodes):
    return ",".join(n.bootstrap for n in nodes)


def tally(nodes, *args):
    import subprocess
    r = subprocess.run([harness.TALLY, "-b", bootstrap(nodes)] + list(args),
                       capture_output=True, text=True, timeout=120)
    return r


def create_on(nodes, topic, replicas):
    with nodes[0].conn() as c:
        res = c.create_topics_v([(topic, -1, -1, None, {0: replicas})], version=7)
    assert res[topic]["error"] == 0, res
    wait_for(lambda: partition_md(nodes[0], topic)["leader"] == replicas[0] and
             sorted(partition_md(nodes[0], topic)["isr"]) == sorted(replicas),
             "%s led by %d with its whole ISR" % (topic, replicas[0]))


def preload(nodes, topic, n, acked):
    """n records of RECORD bytes, acks=all and idempotent, in small batches (a throttle's
    granularity is a batch: KIP-74 lets the first one through whole)."""
    p = Producer({"bootstrap.servers": bootstrap(nodes), "acks": "all",
                  "enable.idempotence": True, "linger.ms": 5, "batch.size": 16384})
    pad = b"p" * (RECORD - 16)

    def done(err, msg):
        if err is None:
            acked.append(msg.value()[:16])
    for i in range(n):
        p.produce(topic, value=b"pre-%012d" % i + pad, partition=0, on_delivery=done)
        if i % 500 == 0:
            p.poll(0)
    assert p.flush(120) == 0


class Load(threading.Thread):
    """An idempotent acks=all producer writing small records to partition 0 until stopped."""

    def __init__(self, nodes, topic):
        super().__init__(daemon=True)
        self.p = Producer({"bootstrap.servers": bootstrap(nodes), "acks": "all",
                           "enable.idempotence": True, "linger.ms": 5,
                           "delivery.timeout.ms": 120000})
        self.topic = topic
        self.acked, self.failed = [], []
        self.stop_ev = threading.Event()

    def done(self, err, msg):
        (self.failed if err is not None else self.acked).append(
            (msg.value(), str(err)) if err is not None else msg.value())

    def run(self):
        i = 0
        while not self.stop_ev.is_set() and i < 100000:
            self.p.produce(self.topic, value=b"load-%08d" % i, partition=0, on_delivery=self.done)
            self.p.poll(0.02)
            i += 1

    def finish(self):
        self.stop_ev.set()
        self.join(30)
        assert self.p.flush(120) == 0


def log_bytes(node, topic):
    d = harness.partition_dir(node, topic, 0)
    try:
        return sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d)
                   if f.endswith(".log"))
    except FileNotFoundError:
        return -1


def read_back(nodes, topic):
    leader = next(n for n in nodes if n.node_id == partition_md(nodes[0], topic)["leader"])
    end = harness.offsets(leader, topic, [0])[0]
    msgs = harness.consume_assigned(leader, topic, {0: 0}, {0: end})[0]
    return [m.value() for m in msgs]


def check_exactly_once(values, acked_keys):
    """Every acknowledged record (by its first 16 bytes, or whole for the load's) is there
    exactly once, and no record is there twice."""
    keys = [v[:16] if v.startswith(b"pre-") else v for v in values]
    seen = {}
    for k in keys:
        seen[k] = seen.get(k, 0) + 1
    twice = [k for k, c in seen.items() if c > 1]
    assert not twice, "records read back twice: %r" % twice[:5]
    lost = [k for k in acked_keys if k not in seen]
    assert not lost, "%d acknowledged records lost, e.g. %r" % (len(lost), lost[:5])


def config(node, rtype, name, key):
    with node.conn() as c:
        res = c.describe_configs([(rtype, name, [key])], version=4)
    assert res[0]["error"] == 0, res
    return res[0]["configs"][key]["value"]


def throttles(node, topic):
    """(leader list, follower list, broker 1's leader rate, broker 4's follower rate)."""
    return (config(node, 2, topic, "leader.replication.throttled.replicas"),
            config(node, 2, topic, "follower.replication.throttled.replicas"),
            config(node, 4, "1", "leader.replication.throttled.rate"),
            config(node, 4, "4", "follower.replication.throttled.rate"))


def write_plan(path, topic, replicas):
    with open(path, "w") as f:
        json.dump({"version": 1, "partitions": [
            {"topic": topic, "partition": 0, "replicas": replicas}]}, f)


def move_rate(samples, total):
    """Bytes/s from the last sample below 20 % of `total` to the first at or past 80 %: the
    move's steady part, without its first and last steps."""
    hi = next(i for i, (_t, s) in enumerate(samples) if s >= 0.8 * total)
    lo = max(i for i, (_t, s) in enumerate(samples[:hi]) if s < 0.2 * total)
    return (samples[hi][1] - samples[lo][1]) / (samples[hi][0] - samples[lo][0])


def test_reassignment_under_load_throttled_loses_nothing(cluster, tmp_path):
    topic = "moved"
    create_on(cluster, topic, [1, 2, 3])
    pre = []
    preload(cluster, topic, PRELOAD, pre)
    total = log_bytes(next(n for n in cluster if n.node_id == 1), topic)
    assert total > PRELOAD * RECORD
    load = Load(cluster, topic)
    load.start()
    plan = str(tmp_path / "plan.json")
    write_plan(plan, topic, [2, 3, 4])

    r = tally(cluster, "partitions", "reassign", "--execute", "--reassignment-json-file", plan,
              "--throttle", str(THROTTLE))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Save this to use as the --reassignment-json-file option during rollback" in r.stdout
    assert '{"topic":"moved","partition":0,"replicas":[1,2,3]' in r.stdout
    assert "The inter-broker throttle limit was set to %d B/s" % THROTTLE in r.stdout
    assert "Successfully started partition reassignment for moved-0" in r.stdout
    t0 = time.monotonic()

    # In progress: listed (by a broker that is not the controller too: forwarded), adding 4,
    # removing 1, and the throttles Kafka's tool sets.
    ctl = metadata(cluster[0])["controller_id"]
    other = next(n for n in cluster if n.node_id != ctl)
    with other.conn() as c:
        lst = c.group(kproto.LIST_PARTITION_REASSIGNMENTS, 0,
                      {"TimeoutMs": 10000, "Topics": [{"Name": topic, "PartitionIndexes": [0]}]})
    assert lst["ErrorCode"] == 0, lst
    assert lst["Topics"] == [{"Name": topic, "Partitions": [
        {"PartitionIndex": 0, "Replicas": [2, 3, 4, 1], "AddingReplicas": [4],
         "RemovingReplicas": [1]}]}], lst
    r = tally(cluster, "partitions", "reassign", "--list")
    assert "moved-0: replicas: 2,3,4,1. adding: 4. removing: 1." in r.stdout, r.stdout
    # `topics describe` (and kafka-topics.sh) name the replicas being added and removed, and
    # 4, which a reassignment is adding, does not make the partition under-replicated while
    # the original three are in sync (Kafka's TopicCommand; the replication factor stays 3).
    r = tally(cluster, "topics", "describe", topic)
    line = next(x for x in r.stdout.splitlines() if "\tPartition: 0\t" in x)
    fields = dict(f.split(": ", 1) for f in line.strip("\t").split("\t"))
    assert fields["Adding Replicas"] == "4" and fields["Removing Replicas"] == "1", line
    assert sorted(fields["Isr"].split(",")) == ["1", "2", "3"], line  # 4 is throttled
    assert fields["Status"] == "ok", line
    assert "ReplicationFactor: 3\t" in r.stdout, r.stdout
    r = tally(cluster, "topics", "describe", topic, "--under-replicated-partitions")
    assert r.stdout.strip() == "", r.stdout
    assert fields["Leader"] == "1", line
    page = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % cluster[0].metrics_port,
                                  timeout=30).read().decode()
    assert re.search(r"^tally_under_replicated_partitions 0$", page, re.M), \
        [x for x in page.splitlines() if x.startswith("tally_under")]
    # Read from the controller, which answered once its own image had them.
    ctl_node = next(n for n in cluster if n.node_id == ctl)
    assert throttles(ctl_node, topic) == ("0:1,0:2,0:3", "0:4", str(THROTTLE), str(THROTTLE))

    # The move, watched: node 4's log on disk, and the ISR, which keeps 2 and 3 throughout
    # (in-sync replicas are never throttled) and 1 until the end.
    node4 = cluster[3]
    samples, isrs = [], []
    deadline = t0 + 120
    while time.monotonic() < deadline:
        samples.append((time.monotonic(), log_bytes(node4, topic)))
        p = partition_md(cluster[0], topic)
        isrs.append((p["replicas"], p["isr"]))
        if p["replicas"] == [2, 3, 4] and not p.get("adding"):
            break
        time.sleep(0.1)
    moved_s = time.monotonic() - t0
    p = partition_md(cluster[0], topic)
    assert p["replicas"] == [2, 3, 4], (p, isrs[-5:])
    assert p["leader"] in (2, 3, 4) and sorted(p["isr"]) == [2, 3, 4], p
    assert all({2, 3} <= set(isr) and (1 in isr or 1 not in reps) for reps, isr in isrs), isrs
    rate = move_rate(samples, total)
    print("moved %d bytes in %.1f s; %.0f B/s between 20 %% and 80 %% (throttle %d)" %
          (total, moved_s, rate, THROTTLE))
    assert 0.8 * THROTTLE <= rate <= 1.2 * THROTTLE, (rate, samples[::10])

    # --verify: done, and with nothing moving any more the throttles go.
    r = tally(cluster, "partitions", "reassign", "--verify", "--reassignment-json-file", plan)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Reassignment of partition moved-0 is completed." in r.stdout, r.stdout
    assert "Clearing broker-level throttles on brokers 1,2,3,4" in r.stdout, r.stdout
    assert "Clearing topic-level throttles on topic moved" in r.stdout, r.stdout
    unlimited = str(2 ** 63 - 1)
    ctl_node = next(n for n in cluster if n.node_id == metadata(cluster[0])["controller_id"])
    assert throttles(ctl_node, topic) == ("", "", unlimited, unlimited)

    load.finish()
    assert not load.failed, load.failed[:5]
    assert len(load.acked) > 50
    # Broker 1 let go of the partition.
    wait_for(lambda: not os.path.exists(harness.partition_dir(cluster[0], topic, 0)),
             "broker 1 to delete its replica")
    # Every acknowledged record, exactly once.
    check_exactly_once(read_back(cluster, topic), pre + load.acked)
    # The moved replica's segments are the leader's, byte for byte, once caught up.
    leader = next(n for n in cluster if n.node_id == partition_md(cluster[0], topic)["leader"])
    wait_for(lambda: log_bytes(node4, topic) == log_bytes(leader, topic), "node 4 caught up")
    mine = harness.segment_files(node4, topic, 0)
    theirs = harness.segment_files(leader, topic, 0)
    assert [os.path.basename(f) for f in mine] == [os.path.basename(f) for f in theirs]
    for a, b in zip(mine, theirs):
        with open(a, "rb") as fa, open(b, "rb") as fb:
            assert fa.read() == fb.read(), "%s differs from %s" % (a, b)


def test_reassignment_cancelled_half_way_reverts(cluster, tmp_path):
    topic = "cancelled"
    create_on(cluster, topic, [1, 2, 3])
    pre = []
    preload(cluster, topic, PRELOAD, pre)
    total = log_bytes(cluster[0], topic)
    plan = str(tmp_path / "plan.json")
    write_plan(plan, topic, [2, 3, 4])
    r = tally(cluster, "partitions", "reassign", "--execute", "--reassignment-json-file", plan,
              "--throttle", str(SLOW_THROTTLE))
    assert r.returncode == 0, r.stdout + r.stderr
    node4 = cluster[3]
    wait_for(lambda: log_bytes(node4, topic) > 0.1 * total, "the move to start")
    assert log_bytes(node4, topic) < 0.9 * total
    r = tally(cluster, "partitions", "reassign", "--cancel", "--reassignment-json-file", plan)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Successfully cancelled partition reassignment for: cancelled-0" in r.stdout, r.stdout
    assert "Clearing topic-level throttles on topic cancelled" in r.stdout, r.stdout
    p = partition_md(cluster[0], topic)
    # Kafka's revert keeps the reassignment's order: the original replicas, 1 last.
    assert sorted(p["replicas"]) == [1, 2, 3] and sorted(p["isr"]) == [1, 2, 3], p
    assert p["leader"] == 1, p
    r = tally(cluster, "partitions", "reassign", "--list")
    assert "No partition reassignments found." in r.stdout, r.stdout
    wait_for(lambda: not os.path.exists(harness.partition_dir(node4, topic, 0)),
             "broker 4 to delete the replica it was adding")
    r = tally(cluster, "partitions", "reassign", "--verify", "--reassignment-json-file", plan)
    assert ("There is no active reassignment of partition cancelled-0, but replica set is "
            in r.stdout), r.stdout
    check_exactly_once(read_back(cluster, topic), pre)


def test_reassignment_refusals(cluster, tmp_path):
    """What the controller refuses, as Kafka (asked of another broker, which forwards): an
    unknown broker, a cancel with nothing in progress, an unknown topic; and the tool refuses a
    plan naming a broker twice."""
    topic = "refused"
    create_on(cluster, topic, [1, 2, 3])
    ctl = metadata(cluster[0])["controller_id"]
    other = next(n for n in cluster if n.node_id != ctl)  # forwarded to the controller
    with other.conn() as c:
        rs = c.group(kproto.ALTER_PARTITION_REASSIGNMENTS, 0, {"TimeoutMs": 10000, "Topics": [
            {"Name": topic, "Partitions": [{"PartitionIndex": 0, "Replicas": [2, 9]},
                                           {"PartitionIndex": 0, "Replicas": None}]},
            {"Name": "no-such-topic", "Partitions": [{"PartitionIndex": 0, "Replicas": [1]}]}]})
    parts = rs["Responses"][0]["Partitions"]
    assert parts[0]["ErrorCode"] == 39 and "broker 9" in parts[0]["ErrorMessage"], rs
    assert parts[1]["ErrorCode"] == 85, rs  # NO_REASSIGNMENT_IN_PROGRESS
    assert rs["Responses"][1]["Partitions"][0]["ErrorCode"] == 3, rs
    plan = str(tmp_path / "plan.json")
    with open(plan, "w") as f:
        f.write('{"version":1,"partitions":[{"topic":"refused","partition":0,"replicas":[2,2]}]}')
    r = tally(cluster, "partitions", "reassign", "--execute", "--reassignment-json-file", plan)
    assert r.returncode == 1 and "multiple entries for 2" in r.stderr, r.stdout + r.stderr
    assert partition_md(cluster[0], topic)["replicas"] == [1, 2, 3]
