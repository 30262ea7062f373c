# SPDX-License-Identifier: Apache-2.0
"""Network partitions of the replicated cluster (issue 16, "How it is checked"): three tallyd,
each in its own network namespace on its own address (tests/integration/netns.py), cut apart
with nft drop rules (both ways, and one way) and by pulling a veth, while an acks=all
idempotent producer on each side of the cut — a process in that side's namespace
(netns_producer.py) — records what it was told. The same cuts run on virtual time too
(test_cluster.c: cluster_network_partitions, cluster_one_way_cuts).

For every cut:
- the majority side elects a leader for every partition and acknowledges writes;
- the minority acknowledges no acks=all write: nothing its producer sent after the cut is
  acknowledged before the cut heals (the producer there reaches only the minority's broker);
- no two leaders acknowledge writes for one partition: after the heal, every acknowledged
  record of either side is in the partition exactly once, at the offset it was acknowledged
  with, in the order produced, and no two acknowledgements name one offset;
- everything heals: every ISR full again, the replicas' segment files byte for byte the
  same, every record either producer sent finally delivered.

Root only (namespaces, veths, nft): without root the tests skip saying so, and under CI=true
that skip fails (conftest.MUST_RUN_IN_CI). Teardown of the namespaces is guaranteed, also when
a test fails (the module fixture, and netns's exit handler)."""
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

import cluster as clu
import netns

HERE = os.path.dirname(os.path.abspath(__file__))
PRODUCER = os.path.join(HERE, "netns_producer.py")
PARTITIONS = 3


@pytest.fixture(scope="module")
def net():
    why = netns.unavailable()
    if why:
        pytest.skip(why)
    n = netns.Net([1, 2, 3])
    try:
        yield n
    finally:
        n.close()


@pytest.fixture(scope="module")
def cluster3(net, tmp_path_factory):
    # A cut makes librdkafka 2.0.2 (Debian's) pin a partition now and then to a broker that
    # no longer leads it: a Metadata answer that waited out the cut in TCP's retransmissions
    # names the old leader, arrives with fresher ones in one burst, and the fresher one lands
    # while the client is still moving the partition to the stale broker; from then on the
    # client takes the real leader for a "preferred replica" and stays (docs/cluster.md, "Client
    # defects"). Only a change of leader frees it: the preferred-leader check, every 300 s by
    # Kafka's default, runs every 5 s here, and moves each partition back to its first replica
    # (the cut-off node) once that is in sync again.
    yield from clu.serve(clu.Cluster(tmp_path_factory.mktemp("netns-cluster"), 3, net=net,
                                     settings={"leader.imbalance.check.interval.seconds": "5"}),
                         before_shutdown=net.heal)


@pytest.fixture
def cl(cluster3, net, request):
    """The module's cluster, every cut healed afterwards (and the nodes' logs of a failed
    test dumped, with the cuts that were in place)."""
    c = cluster3
    c.mark()
    yield c
    if getattr(request.node, "rep_call", None) is None or request.node.rep_call.failed:
        print("cuts in place at the end:", net.cuts)
        c.dump_logs()
    net.heal()
    c.wait_healthy(90)


class SideProducer:
    """netns_producer.py in host's namespace (None: the root namespace), and what it wrote."""

    def __init__(self, net, host, cl, topic, name, workdir, rate=150, request_timeout_ms=10000):
        self.name, self.host = name, host
        self.path = os.path.join(str(workdir), "producer-%s.jsonl" % name)
        argv = [sys.executable, PRODUCER, cl.bootstrap, topic, str(PARTITIONS), name,
                self.path, str(rate), str(request_timeout_ms)]
        self.log = open(self.path + ".stderr", "w")
        # librdkafka's per-batch log (which broker answered what) is what
        # client_rewound_excuse reads.
        env = dict(os.environ)
        env.setdefault("NETNS_PRODUCER_DEBUG", "msg")
        self.proc = subprocess.Popen(net.wrap(host, argv) if host else argv,
                                     stdout=self.log, stderr=self.log, env=env)

    def read(self):
        """{"sent": {(p, k): t}, "inst": {(p, k): client instance}, "acks": {(p, k): (offset,
        t)}, "errs": [[p, k, error, t, instance]], "fatal": [{"fatal": text, "t": t, "inst":
        instance}]} (netns_producer.py)"""
        out = {"sent": {}, "inst": {}, "acks": {}, "errs": [], "fatal": [], "log": ""}
        try:
            with open(self.path) as f:
                lines = f.read().split("\n")
            with open(self.path + ".stderr", errors="replace") as f:
                out["log"] = f.read()
        except OSError:
            return out
        for line in lines:
            if not line.endswith("}"):
                continue  # the line being written
            d = json.loads(line)
            if "sent" in d:
                p, k, t, i = d["sent"]
                out["sent"][(p, k)] = t
                out["inst"][(p, k)] = i
            elif "ack" in d:
                p, k, o, t = d["ack"]
                out["acks"][(p, k)] = (o, t)
            elif "err" in d:
                out["errs"].append(d["err"])
            else:
                out["fatal"].append(d)
        return out

    def acked_after(self, t):
        """{partition: acknowledged records sent after monotonic time t}"""
        h = self.read()
        n = {p: 0 for p in range(PARTITIONS)}
        for (p, k), (_o, _ta) in h["acks"].items():
            if h["sent"].get((p, k), 0) > t:
                n[p] += 1
        return n

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(200)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = "killed"
        self.log.close()
        return rc


def value(name, p, k):
    return b"%s-p%d-%09d" % (name.encode(), p, k)


def unwritten(records, name, p, msgid, s0, s1):
    """The record numbers of producer `name`'s batch s0..s1 (sequences) of partition p whose
    first message id is msgid (record k is message id k + 1: netns_producer.py produces to
    each partition in order), when none of them is in the final partition; None when one is."""
    ks = range(msgid - 1, msgid - 1 + s1 - s0 + 1)
    present = {int(v.rsplit(b"-", 1)[1]) for _o, v in records.get(p, [])
               if v.startswith(name.encode() + b"-p%d-" % p)}
    return None if any(k in present for k in ks) else ks


DESYNC = re.compile(
    r"ProduceRequest for (?P<topic>\S+) \[(?P<p>\d+)\] with \d+ message\(s\) failed due to "
    r"sequence desynchronization with broker \d+ \(.*?, base seq (?P<seq>\d+), .*?"
    r"last partition error (?P<last_err>\S+) \(actions (?P<actions>[A-Za-z,]+), "
    r"base seq (?P<s0>-?\d+)\.\.(?P<s1>-?\d+), base msgid (?P<msgid>\d+)")


def client_desync_excuse(text, name, records):
    """Why the fatal client error `text` of producer `name` is librdkafka's own (its issue
    4438, fixed in 2.3: Debian 12 has 2.0.2), or None when it is not that.

    After a request that timed out (or lost its connection) the client counts its batch as
    possibly written and expects the next batch to be acknowledged; when the broker had not
    written it, the next batch is rightly OUT_OF_ORDER_SEQUENCE_NUMBER and 2.0.2 gives up
    ("sequence desynchronization"). That is the client's defect only if the broker was right:
    the batch of the last error is the one just before the refused one and none of its
    records is in the partition. Record k of a partition is the client's message id k + 1
    (netns_producer.py produces to each partition in order)."""
    m = DESYNC.search(text)
    if m is None:
        return None
    p, seq, s0, s1 = int(m["p"]), int(m["seq"]), int(m["s0"]), int(m["s1"])
    if "MsgPossiblyPersisted" not in m["actions"].split(",") or s1 + 1 != seq or s0 > s1:
        return None
    ks = unwritten(records, name, p, int(m["msgid"]), s0, s1)
    if ks is None:
        return None
    return ("partition %d: the batch of records %d..%d timed out (%s), was not written, and "
            "the next one was refused as out of sequence" % (p, ks[0], ks[-1], m["last_err"]))


REWOUND = re.compile(
    r"ProduceRequest for (?P<topic>\S+) \[(?P<p>\d+)\] with \d+ message\(s\) failed with "
    r"rewound sequence number on broker (?P<broker>\d+) \(.*?, base seq (?P<seq>\d+) < next "
    r"seq \d+\): last error (?P<last_err>\S+) \(actions (?P<actions>[A-Za-z,]+), base seq "
    r"(?P<s0>-?\d+)\.\.(?P<s1>-?\d+), base msgid (?P<msgid>\d+)")


def client_rewound_excuse(text, name, records, log, inst):
    """Why the fatal client error `text` of producer `name`'s instance `inst` is librdkafka's
    own "rewound sequence number" (Debian 12's 2.0.2; its issue 4438, fixed in 2.3), or None
    when it is not that.

    Batches that timed out on the cut-off leader count, in 2.0.2, as acknowledged; the client
    retries them, and any sequence error for one of them is then fatal to it. The first one,
    retried on the zombie, comes back NOT_LEADER_OR_FOLLOWER while the client's thread for
    the new leader has already sent the next one there, ahead of it: the new leader rightly
    answers OUT_OF_ORDER_SEQUENCE_NUMBER, as Kafka would. That is the client's defect only if
    the broker could not have known better: the batch of the last error is the one just
    before the refused one, was answered by *another* broker (a broker that turned it away
    itself answers the next one with the same error: produce.c, "batches turned away"; the
    client's debug log, `debug=msg`, says which broker answered), and none of its records is
    in the partition."""
    m = REWOUND.search(text)
    if m is None:
        return None
    p, seq, s0, s1 = int(m["p"]), int(m["seq"]), int(m["s0"]), int(m["s1"])
    if s1 + 1 != seq or s0 > s1:
        return None
    # librdkafka names a process's clients rdkafka#producer-1, -2, ... in the order made.
    answered = re.findall(
        r"\|rdkafka#producer-%d\| .*?: \S+/(\d+): %s \[%d\]: MessageSet with \d+ "
        r"message\(s\) \(MsgId \d+, BaseSeq %d\) encountered error" % (
            inst + 1, re.escape(m["topic"]), p, s0), log)
    if not answered or int(answered[-1]) == int(m["broker"]):
        return None
    ks = unwritten(records, name, p, int(m["msgid"]), s0, s1)
    if ks is None:
        return None
    return ("partition %d: the batch of records %d..%d was turned away by broker %s (%s), not "
            "written, and the next one, sent ahead of its retry, was refused by broker %s as "
            "out of sequence" % (p, ks[0], ks[-1], answered[-1], m["last_err"], m["broker"]))


def check_history(records, hists, minority, t_cut, t_heal):
    """The properties of the module docstring over the producers' histories ({name: read()})
    and the final partitions (read_values: {p: [(offset, value)]}); a list of problems."""
    problems = []
    by_offset = {p: dict(records[p]) for p in range(PARTITIONS)}
    values = {p: set(v for _o, v in records[p]) for p in range(PARTITIONS)}
    owner = {}  # (p, offset) -> the producer whose acknowledgement names it
    stragglers = {}  # name -> {(p, k)} unacknowledged records of excused client instances
    for name, h in hists.items():
        # librdkafka 2.0.2 takes any broker's Metadata, a zombie's too (it checks no leader
        # epochs there: KIP-320 came to it in 2.1), and may come back to the old leader with
        # sequences it wrote to the new one; a Kafka zombie answers OUT_OF_ORDER_SEQUENCE,
        # fatal to the client. A Tally broker out of touch with the controller answers
        # NOT_LEADER_OR_FOLLOWER there (docs/replication.md). The one fatal error excused is
        # the client's own desynchronization (client_desync_excuse), once the final log shows
        # that the broker's answer was right; that instance's unacknowledged records are then
        # lost to the client, never acknowledged, and the next instance goes on.
        excused = set()
        for fe in h["fatal"]:
            why = client_desync_excuse(fe["fatal"], name, records) or \
                client_rewound_excuse(fe["fatal"], name, records, h["log"], fe["inst"])
            if why is None:
                problems.append("%s: fatal client error: %r" % (name, fe))
            else:
                excused.add(fe["inst"])
                print("%s: fatal client error of librdkafka 2.0.2 (its issue 4438): %s" %
                      (name, why))
        errs = [e for e in h["errs"] if e[4] not in excused]
        if errs:
            problems.append("%s: %d failed deliveries: %r" % (name, len(errs), errs[:3]))
        unacked = [pk for pk in h["sent"] if pk not in h["acks"]]
        stragglers[name] = {pk for pk in unacked if h["inst"][pk] in excused}
        unacked = [pk for pk in unacked if pk not in stragglers[name]]
        if unacked:
            problems.append("%s: %d records sent but never acknowledged after the heal: %r" %
                            (name, len(unacked), sorted(unacked)[:5]))
        for (p, k), (o, t) in sorted(h["acks"].items(), key=lambda kv: kv[0]):
            want = value(name, p, k)
            if o is None:
                # librdkafka acknowledged it without an offset: a batch whose request timed
                # out (possibly persisted) is taken as written once a later batch of the
                # same producer is acknowledged, sequence numbers having no gaps. It must be
                # there, at whatever offset.
                if want not in values[p]:
                    problems.append("%s: record %d of partition %d was acknowledged (no "
                                    "offset) but is not in the partition" % (name, k, p))
            elif by_offset[p].get(o) != want:
                problems.append("%s: record %d of partition %d was acknowledged at offset %r, "
                                "which holds %r" % (name, k, p, o, by_offset[p].get(o)))
            if o is not None and (p, o) in owner:
                problems.append("partition %d offset %d acknowledged twice: to %s and to %s" %
                                (p, o, owner[(p, o)], name))
            owner[(p, o)] = name
            if name in minority and h["sent"].get((p, k), 0) > t_cut and t < t_heal:
                problems.append("the minority acknowledged %s's record %d of partition %d "
                                "(sent %.2f s after the cut, acknowledged %.2f s before the "
                                "heal)" % (name, k, p, h["sent"][(p, k)] - t_cut, t_heal - t))
    for p in range(PARTITIONS):
        seen = {}
        for o, v in records[p]:
            seen[v] = seen.get(v, 0) + 1
        twice = [v for v, n in seen.items() if n > 1]
        if twice:
            problems.append("partition %d holds records twice: %r" % (p, twice[:5]))
        for name in hists:
            ks = [int(v.rsplit(b"-", 1)[1]) for _o, v in records[p]
                  if v.startswith(name.encode() + b"-")]
            # A dead instance's unacknowledged batch may land after the next one's records.
            ks = [k for k in ks if (p, k) not in stragglers[name]]
            if ks != sorted(ks):
                problems.append("partition %d: %s's records out of order" % (p, name))
    return problems


SAMPLE_DESYNC = (
    'KafkaError{code=OUT_OF_ORDER_SEQUENCE_NUMBER,val=45,str="ProduceRequest for netns-t [0] '
    'with 537 message(s) failed due to sequence desynchronization with broker 2 '
    '(PID{Id:1000,Epoch:0}, base seq 164, idemp state change 51234ms ago, last partition error '
    '_TIMED_OUT (actions Retry,MsgPossiblyPersisted, base seq 163..163, base msgid 164, 0ms '
    'ago)"}')


def test_client_desync_excuse_only_when_the_broker_was_right():
    """The one excused fatal client error (client_desync_excuse), judged without a cluster:
    excused when the timed-out batch just before the refused one is absent from the
    partition; not when any of its records is there (the broker refused a batch that did
    follow), nor when the last error was not a possibly-written one, nor when it was not the
    batch just before, nor for any other fatal error."""
    log = {0: [(o, b"maj-p0-%09d" % k) for o, k in enumerate(range(163))]}
    assert client_desync_excuse(SAMPLE_DESYNC, "maj", log) is not None
    with_it = {0: log[0] + [(163, b"maj-p0-%09d" % 163)]}
    assert client_desync_excuse(SAMPLE_DESYNC, "maj", with_it) is None
    other_producer = {0: log[0] + [(163, b"min-p0-%09d" % 163)]}
    assert client_desync_excuse(SAMPLE_DESYNC, "maj", other_producer) is not None
    assert client_desync_excuse(SAMPLE_DESYNC.replace("MsgPossiblyPersisted", "MsgNotPersisted"),
                                "maj", log) is None
    assert client_desync_excuse(SAMPLE_DESYNC.replace("163..163", "161..162"), "maj", log) is None
    assert client_desync_excuse(SAMPLE_DESYNC.replace("sequence desynchronization",
                                                      "rewound sequence number"), "maj", log) is None



SAMPLE_REWOUND = (
    'KafkaError{code=OUT_OF_ORDER_SEQUENCE_NUMBER,val=45,str="ProduceRequest for '
    'netns-oneway-ctl [0] with 1 message(s) failed with rewound sequence number on broker 2 '
    '(PID{Id:1006,Epoch:0}, base seq 45 < next seq 49): last error NOT_LEADER_FOR_PARTITION '
    '(actions Refresh,MsgNotPersisted, base seq 44..44, base msgid 45, 0ms ago)"}')


def sample_answer(inst, broker, seq, error="Broker: Not leader for partition (actions "
                  "Refresh,MsgNotPersisted)"):
    """A librdkafka debug=msg line: broker `broker` answered the batch at BaseSeq seq."""
    return ("%%7|1796347380.233|MSGSET|rdkafka#producer-%d| [thrd:198.18.102.%d:22250/"
            "bootstrap]: 198.18.102.%d:22250/%d: netns-oneway-ctl [0]: MessageSet with 1 "
            "message(s) (MsgId %d, BaseSeq %d) encountered error: %s [NOT LEADER]\n" % (
                inst + 1, broker, broker, broker, seq + 1, seq, error))


def test_client_rewound_excuse_only_when_another_broker_turned_the_batch_away():
    """The "rewound sequence number" fatal error is excused (client_rewound_excuse) only when
    the batch just before the refused one was turned away by another broker than the one that
    refused it (the client's own debug log says which) and is absent from the partition: not
    when the refusing broker turned it away itself (its memory of batches turned away should
    have answered the next one the same), not when the batch is there, not when it is not the
    one just before, not without the log line, and not for another instance's line."""
    log = {0: [(o, b"third-p0-%09d" % k) for o, k in enumerate(range(44))]}
    by_zombie = sample_answer(0, 1, 43, "Broker: Request timed out") + sample_answer(0, 1, 44)
    assert client_rewound_excuse(SAMPLE_REWOUND, "third", log, by_zombie, 0) is not None
    by_refuser = by_zombie + sample_answer(0, 2, 44)
    assert client_rewound_excuse(SAMPLE_REWOUND, "third", log, by_refuser, 0) is None
    with_it = {0: log[0] + [(44, b"third-p0-%09d" % 44)]}
    assert client_rewound_excuse(SAMPLE_REWOUND, "third", with_it, by_zombie, 0) is None
    assert client_rewound_excuse(SAMPLE_REWOUND.replace("44..44", "43..43"), "third", log,
                                 by_zombie, 0) is None
    assert client_rewound_excuse(SAMPLE_REWOUND, "third", log, "", 0) is None
    assert client_rewound_excuse(SAMPLE_REWOUND, "third", log, sample_answer(1, 1, 44), 0) is None
    assert client_rewound_excuse(SAMPLE_DESYNC, "maj", log, by_zombie, 0) is None

def read_values(cl, topic):
    """Every record of every partition from offset 0 to the high watermark: {p: [(offset,
    value)]} (cluster.read_back keeps sequence numbers; these values name their producer)."""
    from confluent_kafka import Consumer, KafkaError, TopicPartition
    c = Consumer({"bootstrap.servers": cl.bootstrap, "group.id": "netns-read-" + topic,
                  "enable.auto.commit": False, "enable.partition.eof": True,
                  "auto.offset.reset": "error", "log_level": 0})
    out = {p: [] for p in range(PARTITIONS)}
    try:
        ends = {p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1]
                for p in range(PARTITIONS)}
        c.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
        pos = {p: 0 for p in range(PARTITIONS)}
        deadline = time.monotonic() + 120
        while any(pos[p] < ends[p] for p in range(PARTITIONS)):
            assert time.monotonic() < deadline, "read-back stuck at %r of %r" % (pos, ends)
            for m in c.consume(num_messages=5000, timeout=0.5):
                if m.error():
                    assert m.error().code() == KafkaError._PARTITION_EOF, str(m.error())
                    continue
                if m.offset() < ends[m.partition()]:
                    out[m.partition()].append((m.offset(), m.value()))
                pos[m.partition()] = m.offset() + 1
    finally:
        c.close()
    return out


def run_cut(cl, net, tmp_path, topic, minority, cut, producers, minority_producers,
            majority_producer):
    """One episode: topic (3 partitions, RF 3, min.insync.replicas 2, each node leading
    one); producers {name: host or None} start; once each has acknowledgements, cut() is
    applied; the cut holds until majority_producer has acknowledgements of records sent
    after the cut on every partition, and every minority producer has sent records after
    it; then net.heal(), and the checks. minority: the node on the small side (for the
    report). A minority producer's requests wait out the cut (60 s request timeout: what
    the cut-off leader parked is still parked when it heals); the others give up a request
    after 10 s and go to the new leader."""
    cl.create_topic(topic, PARTITIONS, 3, {"min.insync.replicas": "2"},
                    assignments=clu.rotations([1, 2, 3], PARTITIONS))
    sides = {n: SideProducer(net, h, cl, topic, n, tmp_path,
                             request_timeout_ms=60000 if n in minority_producers else 10000)
             for n, h in producers.items()}
    try:
        for s in sides.values():
            clu.wait_for(lambda s=s: all(n >= 20 for n in s.acked_after(0).values()), 60,
                         "acknowledgements to %s on every partition before the cut" % s.name)
        cl.note("cut (minority %s)" % minority)
        cut()
        t_cut = time.monotonic()
        maj = sides[majority_producer]
        clu.wait_for(lambda: all(n >= 20 for n in maj.acked_after(t_cut).values()), 90,
                     lambda: "the majority's producer %s acknowledged on every partition after "
                             "the cut (has %r)" % (maj.name, maj.acked_after(t_cut)))
        for n in minority_producers:
            clu.wait_for(lambda n=n: sum(1 for t in sides[n].read()["sent"].values()
                                         if t > t_cut) >= 30, 30,
                         "%s to send during the cut" % n)
        cl.note("majority acknowledged, minority sent")
        t_heal = time.monotonic()
        net.heal()
        cl.note("healed")
        cl.wait_healthy(90)
        cl.note("healthy")
        cl.wait_full_isr(topic, PARTITIONS, timeout=90)
        cl.note("full ISR")
        for n in producers:  # what was sent during the cut is delivered once it heals
            # (but for a client instance that went fatal: check_history judges that)
            clu.wait_for(lambda n=n: (lambda h: all(
                pk in h["acks"] for pk in h["sent"] if h["sent"][pk] < t_heal and
                h["inst"][pk] not in {f["inst"] for f in h["fatal"]}))(
                sides[n].read()), 120, "%s's records of the cut to be delivered" % n)
        cl.note("delivered")
    finally:
        rcs = {n: s.stop() for n, s in sides.items()}
        cl.note("producers stopped")
    hists = {n: s.read() for n, s in sides.items()}
    records = read_values(cl, topic)
    # 4: a fatal client error, which check_history reports.
    problems = ["producer %s exited with %r" % (n, rc) for n, rc in rcs.items()
                if rc not in (0, 4)]
    problems += check_history(records, hists, minority_producers, t_cut, t_heal)
    assert not problems, "\n".join(problems[:30])
    cl.wait_replicas_identical(topic, PARTITIONS, timeout=90)
    cl.note("replicas identical")
    return {n: len(h["acks"]) for n, h in hists.items()}


def non_controller(cl):
    ctl = cl.wait_controller()
    return ctl, next(i for i in cl.ids if i != ctl)


def test_isolated_leader_acknowledges_nothing_and_heals(cl, net, tmp_path):
    """A broker that leads a partition, not the controller, cut off from the other two both
    ways (nft, on both sides of each link); its own namespace's producer reaches only it
    (the test itself still can). Its parked acks=all writes are never acknowledged; the
    other two elect a leader and go on."""
    ctl, m = non_controller(cl)
    others = [i for i in cl.ids if i != m]

    def cut():
        net.split([m], others)
    got = run_cut(cl, net, tmp_path, "netns-isolated-leader", m, cut,
                  {"minority": m, "majority": others[0]}, ["minority"], "majority")
    assert got["majority"] > 0 and got["minority"] > 0, got


def fenced_for_silence(cl, node):
    """The brokers node's controller fenced for a missed session since the test began."""
    text = cl.nodes[node].stderr_all()[(cl._marks or {}).get(node, 0):]
    return sorted({int(m) for m in re.findall(r"broker (\d+) \(epoch \d+\) fenced: no heartbeat",
                                              text)})


def test_isolated_controller_acknowledges_nothing_and_heals(cl, net, tmp_path):
    """The controller (which leads a partition too) cut off from the others both ways: the
    others elect a new controller and leaders; the old controller's writes are never
    acknowledged. The new controller fences the old one only: the brokers on its side move
    their heartbeats over at once (regression: their heartbeats waited out the request
    timeout on the dead controller's connection, and the new controller fenced every broker
    of the cluster, itself too, for 30 s)."""
    ctl = cl.wait_controller()
    others = [i for i in cl.ids if i != ctl]

    def cut():
        net.split([ctl], others)
    got = run_cut(cl, net, tmp_path, "netns-isolated-controller", ctl, cut,
                  {"minority": ctl, "majority": others[0]}, ["minority"], "majority")
    assert cl.wait_controller() in cl.ids
    assert got["majority"] > 0, got
    for o in others:
        assert fenced_for_silence(cl, o) in ([], [ctl]), \
            "node %d fenced brokers of its own side: %r" % (o, fenced_for_silence(cl, o))


def test_split_one_two_by_pulling_a_link(cl, net, tmp_path):
    """A 1|2 split with the clients split too: broker m's veth goes down (no rule, no path:
    not even the test reaches it), a producer on each side."""
    ctl, m = non_controller(cl)
    others = [i for i in cl.ids if i != m]

    def cut():
        net.link_down(m)
    run_cut(cl, net, tmp_path, "netns-split-link", m, cut,
            {"minority": m, "majority": others[1]}, ["minority"], "majority")


@pytest.mark.parametrize("inbound", [True, False], ids=["inbound", "outbound"])
def test_one_way_cut_of_a_leader(cl, net, tmp_path, inbound):
    """One way only (nft on the leader's side): everything that arrives at the leader m is
    dropped (inbound), or everything it sends (outbound) — the other direction flows. TCP
    cannot work either way, but each side learns it differently (no answers, or no
    requests)."""
    ctl, m = non_controller(cl)
    others = [i for i in cl.ids if i != m]

    def cut():
        net.isolate_oneway(m, inbound=inbound)
    run_cut(cl, net, tmp_path, "netns-oneway-%s" % ("in" if inbound else "out"), m, cut,
            {"minority": m, "majority": others[0]}, ["minority"], "majority")


def test_one_way_cut_from_the_controller_to_a_leader(cl, net, tmp_path):
    """What the controller sends to leader m is dropped, nothing else: m hears neither raft
    nor heartbeat answers and is fenced; the third broker still talks to both. No minority
    check: m's producer reaches the third broker, which may legitimately lead m's partition."""
    ctl, m = non_controller(cl)
    third = next(i for i in cl.ids if i not in (ctl, m))

    def cut():
        net.cut_oneway(ctl, m)
    run_cut(cl, net, tmp_path, "netns-oneway-ctl", m, cut,
            {"m": m, "ctl": ctl, "third": third}, [], "ctl")
