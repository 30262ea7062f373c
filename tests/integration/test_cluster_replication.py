# SPDX-License-Identifier: Apache-2.0
"""The replicated cluster as processes (issue 16, "How it is checked"): three tallyd on
loopback (tests/integration/cluster.py) and real clients. The same properties are tested in
milliseconds on the virtual-time fixture (tests/unit/test_cluster.c); these prove the
wiring: sockets, files, signals, the follower fetcher, the controller's timers.

One cluster of four (three voters and a broker-only node) serves the whole module (each test makes its own topics and leaves every node
running); a test that fails dumps what the nodes logged during it. The long variants (100k
records, 5 bounces) are `make chaos` scenarios (tests/chaos/chaos.py)."""
import json
import os
import re
import subprocess
import time

import pytest

import cluster as clu
import harness
import kproto as kp


@pytest.fixture(scope="module")
def cluster3(tmp_path_factory):
    # Three voters (1-3) and a broker-only node 4: two followers of a partition can be
    # stopped while a quorum of voters keeps the controller alive.
    yield from clu.serve(clu.Cluster(tmp_path_factory.mktemp("cluster"), 4, voters=3))


@pytest.fixture
def cl(cluster3, request):
    """The module's cluster with every node running and unfenced; dumps the nodes' logs of
    this test when it fails, and brings every node back afterwards."""
    c = cluster3
    c.mark()
    yield c
    if getattr(request.node, "rep_call", None) is None or request.node.rep_call.failed:
        c.dump_logs()
    for i in c.ids:
        c.resume_node(i)
        if not c.nodes[i].alive():
            c.start_node(i, wait=False)
    c.wait_healthy(90)


# ---------------------------------------------------------------- Kafka's matrix

@pytest.mark.parametrize("case,stops,controller", [
    ("clean_shutdown", 1, False),
    ("hard_shutdown", 1, False),
    ("clean_bounce", 2, False),
    ("hard_bounce", 2, False),
    ("hard_shutdown", 1, True),
], ids=["clean_shutdown", "hard_shutdown", "clean_bounce", "hard_bounce",
        "hard_shutdown_controller"])
def test_replication_matrix(cl, case, stops, controller):
    topic = "matrix-%s%s" % (case, "-ctl" if controller else "")
    s = clu.run_matrix(cl, case, topic, stops=stops, controller=controller, rate=800,
                       per_phase=800)
    assert s["acked"] >= 800 * (stops + 2), s


# ---------------------------------------------------------------- ISR

def produce_raw(node, topic, partition, values, acks=-1, timeout_ms=10000):
    """One Produce of one batch straight to `node` (a cluster's TallyBroker): its answer."""
    with node.conn(timeout=timeout_ms / 1000 + 10) as c:
        res = c.produce({topic: {partition: kp.record_batch([(None, v) for v in values])}},
                        acks=acks, timeout_ms=timeout_ms)
    return res[(topic, partition)]


def test_paused_follower_leaves_and_rejoins_the_isr(cl):
    """A follower SIGSTOP'd past replica.lag.time.max.ms leaves the ISR (Metadata and
    `tally topics describe`) and joins again after SIGCONT; with min.insync.replicas=2 and
    both followers stopped acks=all gets NOT_ENOUGH_REPLICAS, and nothing acknowledged is
    lost when they return."""
    topic = "isr-pause"
    ctl = cl.wait_controller()
    lead, voter_f = cl.others(ctl)
    cl.create_topic(topic, config={"min.insync.replicas": "2"},
                    assignments={0: [lead, 4, voter_f]})
    prod = clu.AckedProducer(cl.bootstrap, topic, 1, rate=300, max_records=60000).start()
    tail = clu.TailConsumer(cl.bootstrap, topic, 1).start()
    try:
        prod.wait_acked(300)
        cl.pause_node(4)
        cl.wait_isr(topic, 0, [lead, voter_f])
        assert cl.describe_isr(topic, 0) == sorted([lead, voter_f])
        n = prod.n_acked()
        prod.wait_acked(n + 300)  # two in sync: acks=all goes on
        cl.resume_node(4)
        cl.wait_isr(topic, 0, [lead, 4, voter_f])
        assert cl.describe_isr(topic, 0) == sorted([lead, 4, voter_f])

        cl.pause_node(4)
        cl.pause_node(voter_f)
        cl.wait_isr(topic, 0, [lead])
        assert cl.describe_isr(topic, 0) == [lead]
        r = produce_raw(cl[lead], topic, 0, [b"p0-800000000"])
        assert r["error"] == kp.NOT_ENOUGH_REPLICAS, r
        # A stopped follower's Fetch arriving late, as a diverged follower sends it: its log
        # (it says) goes past the leader's. The leader answers DivergingEpoch (or
        # OFFSET_OUT_OF_RANGE) and must not count that position: counted, the follower
        # would be caught up, back in the (maximal) ISR, and the acks=all write below
        # acknowledged with one copy.
        epoch = cl.partition(topic, 0)["leader_epoch"]
        end = harness.list_offset(cl[lead], topic, 0)[2] + 1000
        with cl[lead].conn() as c:
            v = c.replica_fetch(topic, 0, voter_f, end, current_leader_epoch=epoch,
                                last_fetched_epoch=epoch)
        assert v["error"] == kp.OFFSET_OUT_OF_RANGE or (v["error"] == kp.NONE and
                                                        v["diverging"]), v
        r = produce_raw(cl[lead], topic, 0, [b"p0-800000001"])
        assert r["error"] == kp.NOT_ENOUGH_REPLICAS, r
        assert cl.isr(topic, 0) == [lead]
        cl.resume_node(4)
        cl.resume_node(voter_f)
        cl.wait_isr(topic, 0, [lead, 4, voter_f])
        n = prod.n_acked()
        prod.wait_acked(n + 300)
    finally:
        prod.stop()
    s = clu.finish_check(cl, topic, 1, prod, tail, {"test": "isr"})
    assert s["acked"] >= 900, s


def test_broker_only_follower_fetches_from_a_restarted_leader(cl):
    """Regression: a broker-only node (controller.bootstrap.servers set) whose fetcher still
    had a Fetch queued for a leader that was kill -9'd and then fenced resolved that leader's
    id to a controller.bootstrap.servers entry, i.e. another broker, and kept that
    connection under the dead leader's id: once the leader was back and led again, the
    follower asked the wrong broker for good (NOT_LEADER_OR_FOLLOWER every second) and never
    joined the ISR."""
    ctl = cl.wait_controller()
    lead, other = cl.others(ctl)
    cl.create_topic("refetch-a", 1, 3, assignments={0: [lead, 4, other]})
    assert produce_raw(cl[lead], "refetch-a", 0, [b"p0-000000000"])["error"] == kp.NONE
    cl.kill_node(lead)
    cl.wait_leader("refetch-a", 0, lambda x: x not in (lead, -1), what="a leader but %d" % lead)
    # Node 4's fetch for the dead leader is still queued; its reconnects (backoff at most
    # 1 s) now resolve a fenced broker. Give it three of them before the leader returns.
    time.sleep(3)
    cl.start_node(lead)
    cl.create_topic("refetch-b", 1, 3, assignments={0: [lead, 4, other]})
    assert produce_raw(cl[lead], "refetch-b", 0, [b"p0-000000000"])["error"] == kp.NONE
    cl.wait_replicas_identical("refetch-b", 1)


# ---------------------------------------------------------------- the zombie leader

ZOMBIE = 900000000  # sequence numbers of what is written to the zombie


def recv_produce(conn, version=3):
    _corr, body = conn.recv_response()
    return next(iter(kp.parse_produce(body, version)[0].values()))


def test_zombie_leader_acknowledges_nothing_and_loses_its_tail(cl):
    """The leader SIGSTOP'd while the others fence it and elect a new leader. On SIGCONT, none
    of its acks=all writes — those that waited in its socket while it was stopped, and new
    ones — is acknowledged; the acks=1 writes it took on its own are truncated away once it
    follows the new leader; no consumer saw a record past the HW that was later removed; the
    replicas end byte for byte the same."""
    topic = "zombie"
    ctl = cl.wait_controller()
    zombie, other = cl.others(ctl)
    cl.create_topic(topic, 1, 3, {"min.insync.replicas": "2"},
                    assignments={0: [zombie, other, 4]})
    prod = clu.AckedProducer(cl.bootstrap, topic, 1, rate=300, max_records=60000).start()
    tail = clu.TailConsumer(cl.bootstrap, topic, 1).start()
    c_all, c_one, c_read = cl[zombie].conn(30), cl[zombie].conn(30), cl[zombie].conn(30)
    try:
        prod.wait_acked(300)
        old_epoch = cl.partition(topic, 0)["leader_epoch"]
        cl.pause_node(zombie)
        # Written while it is stopped: they wait in its sockets.
        c_all.send(kp.produce_request(c_all.next_corr(), {topic: {0: kp.record_batch(
            [(None, clu.value_of(0, ZOMBIE))])}}, acks=-1, timeout_ms=8000))
        for k in range(1, 4):
            c_one.send(kp.produce_request(c_one.next_corr(), {topic: {0: kp.record_batch(
                [(None, clu.value_of(0, ZOMBIE + k))])}}, acks=1, timeout_ms=8000))
        new = cl.wait_leader(topic, 0, lambda x: x not in (zombie, -1), timeout=60,
                             what="a leader other than the zombie %d" % zombie)
        assert cl.partition(topic, 0)["leader_epoch"] > old_epoch
        n = prod.n_acked()
        prod.wait_acked(n + 300)  # the new leader takes acks=all writes
        # The producer stops before the zombie wakes: librdkafka 2.0.2 takes the zombie's
        # stale Metadata (it checks no leader epochs there), sends it its next batch, gets
        # OUT_OF_ORDER_SEQUENCE_NUMBER (the zombie holds that producer's timed-out batches)
        # and raises it as fatal — as it would against a Kafka zombie.
        prod.stop()
        cl.resume_node(zombie)
        # New writes, right after it wakes, before it may have heard of the new leader.
        c_all.send(kp.produce_request(c_all.next_corr(), {topic: {0: kp.record_batch(
            [(None, clu.value_of(0, ZOMBIE + 10))])}}, acks=-1, timeout_ms=8000))
        c_read.send(kp.fetch_request(c_read.next_corr(), {topic: {0: 0}}, max_wait_ms=0))
        all_answers = [recv_produce(c_all), recv_produce(c_all)]
        one_answers = [recv_produce(c_one) for _ in range(3)]
        _corr, body = c_read.recv_response()
        zombie_read = kp.parse_fetch(body, 4)["partitions"][(topic, 0)]
        cl.wait_isr(topic, 0, [zombie, other, 4], timeout=60)
    finally:
        prod.stop()
        for c in (c_all, c_one, c_read):
            c.close()
    for a in all_answers:
        assert a["error"] != kp.NONE, ("the zombie acknowledged an acks=all write", a)
    s = clu.finish_check(cl, topic, 1, prod, tail, {"test": "zombie"})
    final = clu.read_back(cl.bootstrap, topic, 1)[0]
    assert not [x for x in final if x[1] >= ZOMBIE], "a zombie write survived: %r" % (
        [x for x in final if x[1] >= ZOMBIE],)
    # What the zombie served a consumer after waking is what the partition holds.
    served = [(r[0], clu.seq_of(r[3])) for r in kp.records_of(zombie_read["records"] or b"")]
    assert all(r[0] < zombie_read["hw"] for r in served), (zombie_read["hw"], served[-3:])
    assert clu.check_seen({0: served}, {0: final}) == []
    # The acks=1 writes it took alone were at offsets the new leader filled with other
    # records, and the zombie logged the truncation of its diverged tail.
    took = [a for a in one_answers if a["error"] == kp.NONE]
    assert took, ("the zombie took none of its acks=1 writes, so nothing diverged: the test "
                  "did not test truncation", one_answers)
    offs = [a["base_offset"] for a in took]
    cut = [(int(a), int(b)) for a, b in re.findall(
        r"%s-0: truncating the diverged tail (\d+)\.\.(\d+)" % topic, cl.log_text(zombie))]
    assert any(a <= min(offs) and max(offs) <= b for a, b in cut), (offs, cut)
    print("zombie: acks=all answers %r, acks=1 answers %r, new leader %d; %r" % (
        [a["error"] for a in all_answers], [(a["error"], a["base_offset"]) for a in one_answers],
        new, s))


# ---------------------------------------------------------------- unclean leader election

def produce_batches(node, topic, first, n, per_batch=10):
    """n records in batches of per_batch straight to node, acks=all: values value_of(0, k)
    for k in [first, first + n); asserts each is acknowledged; returns the base offsets."""
    out = []
    for k in range(first, first + n, per_batch):
        r = produce_raw(node, topic, 0, [clu.value_of(0, j) for j in
                                         range(k, min(first + n, k + per_batch))])
        assert r["error"] == kp.NONE, r
        out.append(r["base_offset"])
    return out


def last_isr_member_dies(cl, topic, unclean):
    """Topic on [4, y] (y a voter that is not the controller), min.insync.replicas=1: 50
    records in sync, then y dies and the ISR shrinks to [4], 30 records on 4 alone, then 4
    dies: the partition is offline. Returns (y, hw of 4 when it died)."""
    ctl = cl.wait_controller()
    y = cl.others(ctl)[0]
    cfg = {"min.insync.replicas": "1"}
    if unclean:
        cfg["unclean.leader.election.enable"] = "true"
    cl.create_topic(topic, 1, 2, cfg, assignments={0: [4, y]})
    produce_batches(cl[4], topic, 0, 50)
    cl.wait_replicas_identical(topic, 1)
    cl.kill_node(y)
    cl.wait_isr(topic, 0, [4])
    produce_batches(cl[4], topic, 50, 30)
    hw = harness.list_offset(cl[4], topic, 0)
    assert hw[0] == kp.NONE and hw[2] == 80, hw
    # What it will remember of its HW after the crash (replica.high.watermark.checkpoint.
    # interval.ms): only a truncation below it can be reported as one.
    clu.wait_for(lambda: cl.checkpointed_hw(4, topic, 0) == 80, 30,
                 "node 4's replication-offset-checkpoint to hold HW 80")
    cl.kill_node(4)

    def offline():
        p = cl.partition(topic, 0)
        return p and p["leader"] == -1 and p["error"] == kp.LEADER_NOT_AVAILABLE and \
            p["isr"] == [4]
    clu.wait_for(offline, 30, "%s-0 offline with ISR [4]" % topic)
    return y, 80


def test_unclean_election_off_last_isr_member_dead_is_offline(cl):
    """The last ISR member dead and unclean.leader.election.enable off: the partition is
    offline (LEADER_NOT_AVAILABLE), the returning out-of-sync replica does not lead it and
    nothing is truncated; once the last ISR member is back every acknowledged record is
    there."""
    topic = "unclean-off"
    y, hw = last_isr_member_dies(cl, topic, unclean=False)
    before = cl.replica_logs(topic, 0, y)
    cl.start_node(y)
    # y is back, registered and unfenced: the controller has looked at the partition with
    # it eligible (it elects at every broker change). It must stay offline.
    for _ in range(20):
        p = cl.partition(topic, 0)
        assert p is None or (p["leader"] == -1 and p["error"] == kp.LEADER_NOT_AVAILABLE), p
        time.sleep(0.1)
    assert cl.replica_logs(topic, 0, y) == before, "the out-of-sync replica's log changed"
    with cl[y].conn() as c:
        r = c.produce({topic: {0: kp.record_batch([(None, b"p0-000000999")])}}, acks=1)
    assert r[(topic, 0)]["error"] == kp.NOT_LEADER_OR_FOLLOWER, r
    cl.start_node(4)
    cl.wait_leader(topic, 0, lambda x: x == 4, what="the last ISR member leading again")
    cl.wait_replicas_identical(topic, 1)
    got = clu.read_back(cl.bootstrap, topic, 1)[0]
    assert [s for _o, s in got] == list(range(hw)), got[-5:]
    assert "below the high watermark" not in cl.log_text(y) + cl.log_text(4)


def test_unclean_election_on_elects_an_out_of_sync_replica(cl):
    """unclean.leader.election.enable=true on the topic: the out-of-sync replica becomes
    leader once it is back; the old leader, returning, truncates the records above the new
    leader's log and logs one WARN line naming the range it dropped below its old HW."""
    topic = "unclean-on"
    y, hw = last_isr_member_dies(cl, topic, unclean=True)
    cl.start_node(y)
    cl.wait_leader(topic, 0, lambda x: x == y, what="the out-of-sync replica %d elected" % y)
    produce_batches(cl[y], topic, 1000, 20)  # offsets 50..69 on the new leader
    cl.start_node(4)
    cl.wait_replicas_identical(topic, 1)
    got = [s for _o, s in clu.read_back(cl.bootstrap, topic, 1)[0]]
    assert got == list(range(50)) + list(range(1000, 1020)), got
    warn = [line for line in cl.log_text(4).splitlines() if "below the high watermark" in line]
    assert len(warn) == 1 and "WARN" in warn[0], warn
    assert "%s-0: truncating to offset 50, below the high watermark %d: records 50..%d" % (
        topic, hw, hw - 1) in warn[0], warn


# ---------------------------------------------------------------- controlled shutdown

def test_controlled_shutdown_of_each_node_under_load(cl):
    """SIGTERM of each node in turn (the controller too) while an idempotent acks=all
    producer writes: no produce error reaches the application (librdkafka retries
    NOT_LEADER_OR_FOLLOWER itself), each stop is a controlled one (the controller moved the
    node's leaderships away before it stopped, rather than the stop giving up on it), and
    every acknowledged record is there once, in order."""
    topic = "controlled"
    cl.create_topic(topic, 4, 3, {"min.insync.replicas": "2"})
    prod = clu.AckedProducer(cl.bootstrap, topic, 4, rate=400, max_records=100000).start()
    tail = clu.TailConsumer(cl.bootstrap, topic, 4).start()
    took = {}
    try:
        for node in cl.ids:
            n = prod.n_acked()
            prod.wait_acked(n + 300)
            was_controller = cl.wait_controller() == node
            took[node] = cl.stop_node(node)
            log = cl.last_log(node)
            assert "controlled shutdown: the controller moved this broker's leaderships " \
                   "away" in log, log[-3000:]
            assert "stopping anyway" not in log, log[-3000:]
            if was_controller:
                assert "handed the controller over to node" in log, log[-3000:]
            n = prod.n_acked()
            prod.wait_acked(n + 300)  # three nodes serve on
            cl.start_node(node)
            cl.wait_full_isr(topic, 4)
        n = prod.n_acked()
        prod.wait_acked(n + 300)
    finally:
        prod.stop()
    assert prod.errors == [], prod.errors[:10]
    s = clu.finish_check(cl, topic, 4, prod, tail, {"test": "controlled shutdown"})
    print("controlled shutdown: seconds from SIGTERM to exit by node %r; %r" % (
        {k: round(v, 2) for k, v in took.items()}, s))


# ---------------------------------------------------------------- clients ride through

KAFKAJS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "compat", "kafkajs")


def ride_setup(cl, name):
    """A group whose coordinator is node C and a topic (3 partitions, RF=3, min ISR 2)
    whose partition 0 C leads: killing C kills a data leader and the group's coordinator."""
    group = name + "-group"
    coord = cl.find_coordinator(group)
    others = [n for n in cl.ids if n != coord]
    cl.create_topic(name, 3, 3, {"min.insync.replicas": "2"},
                    assignments=clu.rotations([coord] + others[:2], 3))
    assert cl.wait_leader(name, 0) == coord
    return name, group, coord


def kill_leader_and_return(cl, topic, victim, progress, step=200):
    """Once progress() (records acknowledged) moved `step` on: kill -9 of the victim, a new
    leader of partition 0, `step` more, the victim back and every ISR full again."""
    clu.wait_for(lambda: progress() >= step, 60, "%d records acknowledged" % step, 0.05)
    n = progress()
    cl.kill_node(victim)
    cl.wait_leader(topic, 0, lambda x: x not in (victim, -1), timeout=60,
                   what="a new leader (not %d)" % victim)
    clu.wait_for(lambda: progress() >= n + step, 90, "%d more acknowledged" % step, 0.05)
    cl.start_node(victim)
    cl.wait_full_isr(topic, 3)
    n = progress()
    clu.wait_for(lambda: progress() >= n + step, 90, "%d more acknowledged" % step, 0.05)


class GroupReader:
    """A group member on its own thread (poll_fn returns [(partition, offset, value)] and
    raises what reaches the application); keeps what it saw and every error."""

    def __init__(self, poll_fn, close_fn):
        import threading
        self.poll_fn, self.close_fn = poll_fn, close_fn
        self.seen = {}
        self.errors = []
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self):
        while not self._stop.is_set():
            try:
                for p, off, v in self.poll_fn():
                    self.seen.setdefault(p, set()).add(clu.seq_of(v))
            except Exception as e:  # noqa: BLE001 - what the application would see
                self.errors.append(repr(e))
                time.sleep(0.2)
        self.close_fn()

    def has_all(self, acked):
        return all(set(v) <= self.seen.get(p, set()) for p, v in acked.items())

    def stop(self):
        self._stop.set()
        self._t.join(30)


def ride_check(cl, topic, acked, reader_has_all, exactly_once):
    clu.wait_for(reader_has_all, 120, "the group member to see every acknowledged record")
    records = clu.read_back(cl.bootstrap, topic, 3)
    problems = clu.check_acked(acked, records, exactly_once=exactly_once)
    assert not problems, problems


def test_librdkafka_clients_ride_through_a_leader_kill(cl):
    from confluent_kafka import Consumer
    topic, group, victim = ride_setup(cl, "ride-librdkafka")
    prod = clu.AckedProducer(cl.bootstrap, topic, 3, rate=300).start()
    c = Consumer({"bootstrap.servers": cl.bootstrap, "group.id": group,
                  "auto.offset.reset": "earliest", "auto.commit.interval.ms": 500,
                  "session.timeout.ms": 10000, "heartbeat.interval.ms": 500,
                  "socket.timeout.ms": 10000, "topic.metadata.refresh.interval.ms": 1000,
                  "log_level": 0})
    c.subscribe([topic])

    def poll():
        out = []
        for m in c.consume(num_messages=500, timeout=0.2):
            if m.error():
                raise RuntimeError(str(m.error()))
            out.append((m.partition(), m.offset(), m.value()))
        return out
    reader = GroupReader(poll, c.close)
    try:
        kill_leader_and_return(cl, topic, victim, prod.n_acked)
    finally:
        prod.stop()
    try:
        ride_check(cl, topic, prod.acked, lambda: reader.has_all(prod.acked), True)
    finally:
        reader.stop()
    assert prod.errors == [] and reader.errors == [], (prod.errors[:5], reader.errors[:5])


def test_kafka_python_clients_ride_through_a_leader_kill(cl):
    """kafka-python 2.0.2 has no idempotent producer: its retries may write a batch twice,
    so the check is at least once."""
    import threading
    from kafka import KafkaConsumer, KafkaProducer
    topic, group, victim = ride_setup(cl, "ride-kafka-python")
    servers = cl.bootstrap.split(",")
    prod = KafkaProducer(bootstrap_servers=servers, acks="all", retries=100, linger_ms=5,
                         retry_backoff_ms=200, request_timeout_ms=10000,
                         max_in_flight_requests_per_connection=1, metadata_max_age_ms=1000)
    acked = {p: [] for p in range(3)}
    errors = []
    lock = threading.Lock()
    stop = threading.Event()

    def on_ack(seq, md):  # kafka-python passes the callback's own arguments first
        with lock:
            acked[md.partition].append(seq)

    def produce():
        k = 0
        while not stop.is_set() and k < 60000:
            p = k % 3
            f = prod.send(topic, clu.value_of(p, k // 3), partition=p)
            f.add_callback(on_ack, k // 3)
            f.add_errback(lambda e: errors.append(repr(e)))
            k += 1
            time.sleep(1 / 300)
    t = threading.Thread(target=produce, daemon=True)
    t.start()
    cons = KafkaConsumer(topic, group_id=group, bootstrap_servers=servers,
                         auto_offset_reset="earliest", enable_auto_commit=True,
                         auto_commit_interval_ms=500, session_timeout_ms=10000,
                         heartbeat_interval_ms=500, request_timeout_ms=30000,
                         metadata_max_age_ms=1000)

    def poll():
        return [(r.partition, r.offset, r.value) for rs in cons.poll(timeout_ms=200).values()
                for r in rs]
    reader = GroupReader(poll, cons.close)
    try:
        kill_leader_and_return(cl, topic, victim,
                               lambda: sum(len(v) for v in acked.values()))
    finally:
        stop.set()
        t.join()
        prod.flush(60)
        prod.close(10)
    try:
        ride_check(cl, topic, acked, lambda: reader.has_all(acked), False)
    finally:
        reader.stop()
    assert errors == [] and reader.errors == [], (errors[:5], reader.errors[:5])


def test_kafkajs_clients_ride_through_a_leader_kill(cl):
    import shutil
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node/npm not installed: cannot run the KafkaJS ride-through test")
    if not os.path.isdir(os.path.join(KAFKAJS, "node_modules", "kafkajs")):
        r = subprocess.run([npm, "install", "--no-audit", "--no-fund"], cwd=KAFKAJS,
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-2000:]
    topic, group, victim = ride_setup(cl, "ride-kafkajs")
    proc = subprocess.Popen([node, "ride.js", cl.bootstrap, topic, group, "2400", "3"],
                            cwd=KAFKAJS, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=dict(os.environ, KAFKAJS_NO_PARTITIONER_WARNING="1"))
    state = {"acked": 0, "seen": 0, "last": None}
    import threading

    def read():
        for line in proc.stdout:
            if line.startswith("progress "):
                state["acked"], state["seen"] = map(int, line.split()[1:3])
            else:
                state["last"] = line
    t = threading.Thread(target=read, daemon=True)
    t.start()
    try:
        kill_leader_and_return(cl, topic, victim, lambda: state["acked"])
        try:
            rc = proc.wait(240)
        except subprocess.TimeoutExpired:
            rc = "timed out at %r" % state
    finally:
        if proc.poll() is None:
            proc.kill()
    t.join(10)
    err = proc.stderr.read()
    assert rc == 0 and state["last"], (rc, err[-3000:])
    out = json.loads(state["last"])
    acked = {int(p): [clu.seq_of(v.encode()) for v in vs] for p, vs in out["acked"].items()}
    assert out["errors"] == [], out["errors"][:10]
    records = clu.read_back(cl.bootstrap, topic, 3)
    problems = clu.check_acked(acked, records)
    assert not problems, problems
