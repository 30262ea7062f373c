# SPDX-License-Identifier: Apache-2.0
"""Consumer groups through confluent-kafka (librdkafka 2.0.2): members that subscribe()
share a topic's partitions, commit, rebalance when members join, leave or die, keep their
partitions across a restart with static membership, and find their committed offsets
again after the broker is killed.

The brokers run with a short group.initial.rebalance.delay.ms and a low
group.min.session.timeout.ms so that rebalances take a fraction of a second and a
killed member's 6 s session runs out quickly."""
import collections
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import uuid

import pytest
from confluent_kafka import (OFFSET_INVALID, Consumer, KafkaError, KafkaException, Producer,
                             TopicPartition)

import harness

GROUP_SETTINGS = {
    "group.initial.rebalance.delay.ms": "100",
    "group.min.session.timeout.ms": "1000",
}
STRATEGIES = ["range", "cooperative-sticky"]


def unique(prefix):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:8])


@pytest.fixture
def gbroker(broker_factory):
    return broker_factory(settings=GROUP_SETTINGS)


def produce(b, topic, n, parts, prefix="v"):
    """n records with values b'<prefix>-<i>', record i on partition i % parts."""
    p = Producer({"bootstrap.servers": b.bootstrap, "acks": "all", "linger.ms": 5})
    errors = []
    for i in range(n):
        while True:
            try:
                p.produce(topic, value=b"%s-%d" % (prefix.encode(), i), partition=i % parts,
                          on_delivery=lambda err, _m: err and errors.append(err))
                break
            except BufferError:
                p.poll(0.1)
        p.poll(0)
    assert p.flush(60) == 0
    assert not errors, errors[:3]


def group_conf(b, group, name, strategy="range", **extra):
    conf = {"bootstrap.servers": b.bootstrap, "group.id": group, "client.id": name,
            "enable.auto.commit": False, "auto.offset.reset": "earliest",
            "session.timeout.ms": 6000, "heartbeat.interval.ms": 500,
            "partition.assignment.strategy": strategy}
    conf.update(extra)
    if os.environ.get("GROUP_TEST_DEBUG"):
        conf["debug"] = os.environ["GROUP_TEST_DEBUG"]
    return conf


# What a commit may meet while the group rebalances (Kafka answers the same): the
# positions stay pending and are committed again later, or when their partition is
# revoked (with the generation that revokes it).
RETRIABLE_COMMIT = (KafkaError.ILLEGAL_GENERATION, KafkaError.REBALANCE_IN_PROGRESS)


class Member(threading.Thread):
    """One group member on its own thread: consume(), keep the values, commit the
    batch's positions synchronously, then (throttle) sleep, until stopped; close() at
    the end (a LeaveGroup for a dynamic member). Positions not committed yet are
    committed when their partitions are revoked.

    With cooperative-sticky the positions are committed only on revocation (and so at
    close()): librdkafka 2.0.2 treats a commit that a concurrent rebalance refuses with
    ILLEGAL_GENERATION as a lost assignment (its issue #4059, fixed in later releases)
    and, after that, may abort in close() (its issue #4312). Kafka answers such a
    commit the same way; committing from the revoke callback never races the join."""

    def __init__(self, b, group, topic, name, strategy="range", throttle=0.0, **extra):
        super().__init__(name=name, daemon=True)
        self.commit_each_batch = strategy != "cooperative-sticky"
        self.topic = topic
        self.throttle = throttle
        self.values = []
        self.seen = []  # (partition, offset) of each value, in the order consumed
        self.assigned = set()
        self.assigns = 0
        self.revokes = 0
        self.retried_commits = 0
        # Revoke commits the broker finally refused: {"error": name, "code": code, "parts":
        # {partition: (low, high)}, "at": monotonic time}, where high is the refused offset and
        # low the last offset committed in this assignment (else the first one consumed):
        # redelivery may cover exactly [low, high) of each of those partitions.
        self.refused = []
        self.last_read_at = {}  # partition: monotonic time of the last record consumed
        self.stale_answers = []  # every commit answered ILLEGAL_GENERATION: {partition: offset}
        self.pending = {}
        self.low = {}  # per partition of the current assignment: committed, or first consumed
        self.error = None
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.c = Consumer(group_conf(b, group, name, strategy, **extra))

    def _commit(self, parts):
        offsets = [TopicPartition(self.topic, p, self.pending[p])
                   for p in parts if p in self.pending]
        if not offsets:
            return True
        try:
            self.c.commit(offsets=offsets, asynchronous=False)
        except KafkaException as e:
            if e.args[0].code() not in RETRIABLE_COMMIT:
                raise
            self.retried_commits += 1
            self.last_commit_error = e.args[0]
            if e.args[0].code() == KafkaError.ILLEGAL_GENERATION:
                self.stale_answers.append({tp.partition: tp.offset for tp in offsets})
            return False
        for tp in offsets:
            self.low[tp.partition] = tp.offset
            if self.pending.get(tp.partition) == tp.offset:
                del self.pending[tp.partition]
        return True

    def _on_assign(self, _c, parts):
        for p in parts:
            self.low.pop(p.partition, None)
        with self.lock:
            self.assigns += 1
            self.assigned |= {p.partition for p in parts}

    def _on_revoke(self, _c, parts):
        gone = {p.partition for p in parts}
        try:
            # A close() or rejoin can race a JoinGroup answer still on its way: the
            # commit then carries the generation before it and is refused as Kafka
            # refuses it. librdkafka takes up the new generation when the answer is
            # read, so the commit is tried again for a few seconds before giving up.
            deadline = time.monotonic() + 5
            while not self._commit(gone) and time.monotonic() < deadline:
                time.sleep(0.1)
            left = {p: self.pending[p] for p in gone if p in self.pending}
            if left:
                # The client still held the generation before the broker's last one (a
                # close() racing a JoinGroup answer; librdkafka 2.0.2 then drops its
                # generation, its issue #4059): the broker refused as Kafka does, and the
                # records since the last commit go to the next owner again. Recorded with
                # the offsets; the test allows redelivery of exactly those, and only when
                # the broker's log shows the refusal was right.
                err = self.last_commit_error
                self.refused.append({"error": err.name(), "code": err.code(),
                                     "parts": {p: (self.low.get(p, hi), hi) for p, hi in left.items()},
                                     "at": time.monotonic()})
        except Exception as e:  # reported by the test
            self.error = "%s: commit on revoke: %r" % (self.name, e)
        for p in gone:
            self.pending.pop(p, None)
        with self.lock:
            self.revokes += 1
            self.assigned -= gone

    def snapshot(self):
        with self.lock:
            return set(self.assigned), self.assigns, self.revokes

    def run(self):
        try:
            self.c.subscribe([self.topic], on_assign=self._on_assign, on_revoke=self._on_revoke)
            while not self.stopping.is_set():
                msgs = self.c.consume(num_messages=100, timeout=0.2)
                for m in msgs:
                    if m.error():
                        if m.error().code() == KafkaError._PARTITION_EOF:
                            continue
                        raise AssertionError("consume error: %s" % m.error())
                    self.values.append(m.value())
                    self.seen.append((m.partition(), m.offset()))
                    self.low.setdefault(m.partition(), m.offset())
                    self.pending[m.partition()] = m.offset() + 1
                    self.last_read_at[m.partition()] = time.monotonic()
                if self.pending and self.commit_each_batch:
                    self._commit(list(self.pending))
                if msgs and self.throttle:
                    time.sleep(self.throttle)
        except Exception as e:  # reported by the test
            self.error = "%s: %r" % (self.name, e)
        finally:
            self.c.close()

    def stop(self):
        self.stopping.set()
        self.join(30)
        assert not self.is_alive(), "%s did not stop" % self.name


# The broker's log, read as the witness of the group's generations (group_sm_join.c logs each
# generation it creates, in the order of the event loop) and of each commit refused for its
# generation (offset_commit.c, with the generation the commit carried and its partitions).
GENERATION_LINE = re.compile(r"\[group\] group (\S+): stabilized generation (\d+) with |"
                             r"\[group\] group (\S+) with generation (\d+) is now empty")
STALE_COMMIT_LINE = re.compile(
    r"\[group\] group (\S+): OffsetCommit from member (\S+) at generation (-?\d+) refused, "
    r"the group is at generation (-?\d+) \(ILLEGAL_GENERATION\): (.*)$")


def stale_commits_from_the_log(log, group, topic):
    """The commits of `group` the broker refused with ILLEGAL_GENERATION, each checked against
    the generation the group held then, as the log's own generation lines tell it (not the
    refusal's word): asserts that every refusal carried a generation other than the current
    one. Returns [(member id, {partition: refused offset})]."""
    current = None
    out = []
    for line in log.splitlines():
        g = GENERATION_LINE.search(line)
        if g and (g.group(1) or g.group(3)) == group:
            current = int(g.group(2) or g.group(4))
            continue
        m = STALE_COMMIT_LINE.search(line)
        if not m or m.group(1) != group:
            continue
        sent, held = int(m.group(3)), int(m.group(4))
        assert current is not None and held == current, (
            "refusal at generation %d while the log's last generation is %r: %s" % (
                held, current, line))
        assert sent != current, "the broker refused a commit at its current generation " \
            "%d: %s" % (current, line)
        parts = {}
        for item in m.group(5).split():
            if item == "...":
                continue
            name_part, off = item.rsplit("@", 1)
            name, part = name_part.rsplit("-", 1)
            if name == topic:
                parts[int(part)] = int(off)
        out.append((m.group(2), parts))
    return out


MEMBER_ID = re.compile(r"^(.*)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def allowed_redelivery(members, log, group, topic):
    """{partition: [(low, high)]}: the offsets that may be consumed twice. Only a revoke commit
    refused with ILLEGAL_GENERATION excuses redelivery, only on its partitions, only from the
    last commit to the refused offset, and only when every ILLEGAL_GENERATION a member was
    answered is one the broker's log shows, as right (stale_commits_from_the_log), and the
    other way round: a refusal the broker does not account for — the very first of a series
    that then made librdkafka drop its generation, say — fails the test."""
    broker = collections.Counter()
    for mid, parts in stale_commits_from_the_log(log, group, topic):
        name = MEMBER_ID.match(mid)
        broker[(name.group(1) if name else mid, frozenset(parts.items()))] += 1
    client = collections.Counter((m.name, frozenset(a.items()))
                                 for m in members for a in m.stale_answers)
    assert client == broker, "ILLEGAL_GENERATION answers the members saw %r, the broker " \
        "logged %r" % (sorted(client.items()), sorted(broker.items()))
    allowed = collections.defaultdict(list)
    for m in members:
        for r in m.refused:
            if r["code"] != KafkaError.ILLEGAL_GENERATION:
                continue  # REBALANCE_IN_PROGRESS excuses nothing: the commit can be retried
            for p, (lo, hi) in r["parts"].items():
                allowed[p].append((lo, hi))
    return allowed


def expected_group_offsets(members, allowed, end, parts):
    """{partition: committed offset} the group must hold once every member has stopped: the log
    end, since every member commits what it read when its partitions are revoked — except on a
    partition whose last revoke commit was refused for a stale generation (only those in
    `allowed`, which allowed_redelivery proved right against the broker's log) when no member
    read it afterwards: nobody committed it since, so the group keeps the commit the refused
    range starts from (none when it starts at 0). That is what happens when the refused commit
    is made by the last owner's close() in stop_all (librdkafka 2.0.2 then drops its
    generation, its issue #4059, and every retry is refused too). The value is exact: a broker
    that lost a commit or kept a refused one fails here."""
    want = {p: end for p in range(parts)}
    for p in range(parts):
        last = max(((r["at"], r["parts"][p]) for m in members for r in m.refused
                    if r["code"] == KafkaError.ILLEGAL_GENERATION and p in r["parts"]),
                   default=None)
        if last is None or last[1] not in allowed.get(p, ()):
            continue
        at, (lo, hi) = last
        read_after = any(m.last_read_at.get(p, at) > at for m in members)
        if hi == end and not read_after:
            want[p] = lo if lo > 0 else OFFSET_INVALID
    return want


def wait_for(what, cond, timeout=30.0, members=()):
    deadline = time.monotonic() + timeout
    while not cond():
        for m in members:
            assert m.error is None, m.error
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(0.05)


def stop_all(members, parts=None):
    """Stops the members one after the other (each close() is a rebalance for the
    others) and fails on any error a member met. With `parts` (the members share one
    group on one topic of that many partitions), each next close() waits until the
    rebalance the last one started has settled: a close() inside a rebalance, while the
    closing member leads the new generation, commits from its revoke callback before its
    client sends the SyncGroup that would end the rebalance, so every try is answered
    REBALANCE_IN_PROGRESS (as Kafka answers in CompletingRebalance) and its last
    positions go uncommitted with nobody left to read them."""
    for i, m in enumerate(members):
        if not m.is_alive():
            continue
        m.stop()
        rest = [o for o in members[i + 1:] if o.is_alive()]
        if parts and rest and not any(o.error for o in members):
            wait_settled(rest, parts, "after %s left" % m.name)
    errors = [m.error for m in members if m.error]
    assert not errors, errors


def wait_settled(members, parts, what, timeout=30.0, still=1.0):
    """Waits until `members` own every one of `parts` partitions, each exactly once, and no
    assignment or revocation has happened for `still` seconds."""
    deadline = time.monotonic() + timeout
    last, since = None, time.monotonic()
    while True:
        snaps = [m.snapshot() for m in members]
        owned = [p for s in snaps for p in s[0]]
        now = time.monotonic()
        if snaps != last:
            last, since = snaps, now
        elif sorted(owned) == list(range(parts)) and now - since >= still:
            return
        for m in members:
            assert m.error is None, m.error
        assert now < deadline, "the group did not settle %s: %r" % (what, snaps)
        time.sleep(0.05)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_every_record_once_while_a_member_joins_and_one_leaves(gbroker, strategy):
    b = gbroker
    topic, group, n, parts = unique("g6"), unique("grp"), 30000, 6
    harness.create_topics(b, [(topic, parts, None)])
    produce(b, topic, n, parts)

    # The throttle keeps the three members busy for several seconds, so that the
    # fourth joins and the first leaves while records are still flowing.
    members = [Member(b, group, topic, "m%d" % i, strategy, throttle=0.1) for i in range(3)]
    for m in members:
        m.start()

    def consumed():
        return sum(len(m.values) for m in members)

    try:
        wait_for("a third of the records", lambda: consumed() >= n // 3, 60, members)
        late = Member(b, group, topic, "m3", strategy, throttle=0.1)
        members.append(late)
        late.start()
        wait_for("two thirds of the records", lambda: consumed() >= 2 * n // 3, 60, members)
        members[0].stop()
        wait_for("every record", lambda: consumed() >= n, 60, members)
        # A redelivery after a rebalance would come now: give it a moment to show.
        time.sleep(1.5)
    finally:
        stop_all(members, parts)

    counts = collections.Counter(v for m in members for v in m.values)
    seen = collections.Counter(po for m in members for po in m.seen)
    # Exactly once, except the records after the last commit of a partition whose revoke
    # commit the broker refused, rightly, for a stale generation (a client race Kafka answers
    # the same way): those only are read again, once; never loss.
    allowed = allowed_redelivery(members, b.stderr_all(), group, topic)
    unexcused = sorted(po for po, c in seen.items() if c > 1 and
                       not any(lo <= po[1] < hi for lo, hi in allowed.get(po[0], ())))
    assert not unexcused, "%d records consumed more than once, e.g. %r (allowed: %r)" % (
        len(unexcused), unexcused[:5], dict(allowed))
    assert all(c <= 2 for c in seen.values()), sorted(po for po, c in seen.items() if c > 2)[:5]
    assert sum(seen.values()) == sum(counts.values())
    assert set(counts) == {b"v-%d" % i for i in range(n)}
    assert len(late.values) > 0, "the member that joined mid-way got no records"
    # Every member committed what it processed: the group's offsets are the log ends, but for
    # a last revoke commit refused (rightly) that nobody read past.
    c = Consumer(group_conf(b, group, "check"))
    try:
        got = c.committed([TopicPartition(topic, p) for p in range(parts)], timeout=10)
    finally:
        c.close()
    assert {tp.partition: tp.offset for tp in got} == expected_group_offsets(
        members, allowed, n // parts, parts), dict(allowed)


def test_expected_group_offsets_excuse_only_a_last_refused_commit_nobody_read_past():
    """The allowance of the join/leave test's final check, on made-up members: narrow."""
    class Fake:
        def __init__(self, refused=(), last_read_at=None):
            self.refused, self.last_read_at = list(refused), dict(last_read_at or {})

    def refusal(parts, at, code=KafkaError.ILLEGAL_GENERATION):
        return {"error": "x", "code": code, "parts": parts, "at": at}

    end, parts = 100, 3
    # Nothing refused: the ends.
    assert expected_group_offsets([Fake()], {}, end, parts) == {0: 100, 1: 100, 2: 100}
    # The last owner's close() refused on partition 1 (from 0) and on 2 (from the commit at
    # 40), nobody read them after: no commit on 1, the commit at 40 on 2.
    last = Fake([refusal({1: (0, 100), 2: (40, 100)}, at=10.0)], {1: 9.0, 2: 9.5})
    allowed = {1: [(0, 100)], 2: [(40, 100)]}
    assert expected_group_offsets([last], allowed, end, parts) == {
        0: 100, 1: OFFSET_INVALID, 2: 40}
    # Someone read partition 2 after the refusal: it must have committed the end.
    later = Fake(last_read_at={2: 11.0})
    assert expected_group_offsets([last, later], allowed, end, parts)[2] == 100
    # A refusal the broker's log did not prove right excuses nothing.
    assert expected_group_offsets([last], {1: [(0, 100)]}, end, parts)[2] == 100
    # Neither does REBALANCE_IN_PROGRESS, nor a refused range short of the end, nor an older
    # refusal followed by a later one on the same partition that reached the end (the later
    # one decides).
    rip = Fake([refusal({1: (0, 100)}, at=10.0, code=KafkaError.REBALANCE_IN_PROGRESS)])
    assert expected_group_offsets([rip], {1: [(0, 100)]}, end, parts)[1] == 100
    short = Fake([refusal({1: (0, 60)}, at=10.0)], {1: 9.0})
    assert expected_group_offsets([short], {1: [(0, 60)]}, end, parts)[1] == 100
    twice = Fake([refusal({1: (0, 60)}, at=5.0), refusal({1: (60, 100)}, at=10.0)], {1: 9.0})
    assert expected_group_offsets([twice], {1: [(0, 60), (60, 100)]}, end, parts)[1] == 60


CHILD = r"""
import json, sys
from confluent_kafka import Consumer
bootstrap, group, topic, strategy = sys.argv[1:5]
c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "client.id": "doomed",
              "enable.auto.commit": False, "auto.offset.reset": "earliest",
              "session.timeout.ms": 6000, "heartbeat.interval.ms": 500,
              "partition.assignment.strategy": strategy})
owned = set()
def on_assign(_c, ps):
    owned.update(p.partition for p in ps)
    print(json.dumps(sorted(owned)), flush=True)
def on_revoke(_c, ps):
    owned.difference_update(p.partition for p in ps)
    print(json.dumps(sorted(owned)), flush=True)
c.subscribe([topic], on_assign=on_assign, on_revoke=on_revoke)
while True:
    c.poll(0.2)
"""


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_killed_member_partitions_move_after_its_session_timeout(gbroker, strategy):
    b = gbroker
    topic, group, n, parts = unique("gk"), unique("grp"), 600, 6
    harness.create_topics(b, [(topic, parts, None)])
    produce(b, topic, n, parts)

    child = subprocess.Popen([sys.executable, "-c", CHILD, b.bootstrap, group, topic, strategy],
                             stdout=subprocess.PIPE, text=True)
    child_owned = []

    def read_child():
        for line in child.stdout:
            child_owned.append(set(json.loads(line)))

    threading.Thread(target=read_child, daemon=True).start()
    try:
        wait_for("the child member to get partitions", lambda: child_owned and child_owned[-1],
                 30)
        # The child consumes but never commits, so whoever takes its partitions over
        # reads them from the start.
        survivor = Member(b, group, topic, "survivor", strategy)
        survivor.start()
        wait_for("the partitions to be shared",
                 lambda: survivor.snapshot()[0] and child_owned[-1] and
                 survivor.snapshot()[0] | child_owned[-1] == set(range(parts)) and
                 not survivor.snapshot()[0] & child_owned[-1], 30, [survivor])
        lost = set(child_owned[-1])
        child.send_signal(signal.SIGKILL)
        child.wait(10)
        # No LeaveGroup comes: only the session timeout (6 s) frees the partitions.
        wait_for("the killed member's partitions %r to move" % sorted(lost),
                 lambda: survivor.snapshot()[0] == set(range(parts)), 40, [survivor])
        want = {b"v-%d" % i for i in range(n)}
        wait_for("every record", lambda: want <= set(survivor.values), 30, [survivor])
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        if "survivor" in locals():
            stop_all([survivor])


def test_static_member_restart_keeps_partitions_without_rebalance(gbroker):
    b = gbroker
    topic, group, parts = unique("gs"), unique("grp"), 6
    harness.create_topics(b, [(topic, parts, None)])

    def static(name):
        return Member(b, group, topic, name, **{"group.instance.id": "inst-" + name})

    # The first member is the group's leader; the restarted one is a follower, so the
    # leader's assignor is never asked again.
    leader = static("a")
    leader.start()
    wait_for("the leader's assignment", lambda: leader.snapshot()[0], 30, [leader])
    others = [static("b"), static("c")]
    for m in others:
        m.start()
    members = [leader] + others
    wait_for("two partitions each",
             lambda: all(len(m.snapshot()[0]) == 2 for m in members), 30, members)
    # Settled: the counts must not move from here on.
    time.sleep(1.0)
    before = {m.name: m.snapshot() for m in members}
    assert all(len(s[0]) == 2 for s in before.values()), before

    restarted = others[1]
    kept = before[restarted.name][0]
    restarted.stop()  # a static member's close() sends no LeaveGroup
    again = static("c")
    members[2] = again
    again.start()
    wait_for("the restarted member's assignment", lambda: again.snapshot()[0], 30, members)
    assert again.snapshot()[0] == kept
    # Heartbeats every 500 ms would have told the others of a rebalance by now.
    time.sleep(2.0)
    try:
        for m in members[:2]:
            assert m.snapshot() == before[m.name], (
                "%s saw a rebalance: %r -> %r" % (m.name, before[m.name], m.snapshot()))
    finally:
        stop_all(members)


def test_committed_offsets_survive_broker_kill(gbroker):
    b = gbroker
    topic, group, n, parts = unique("gc"), unique("grp"), 3000, 3
    harness.create_topics(b, [(topic, parts, None)])
    produce(b, topic, n, parts)

    # Read a third of each partition in the group and commit it.
    c = Consumer(group_conf(b, group, "first"))
    c.subscribe([topic])
    pos = {}
    deadline = time.monotonic() + 30
    while any(pos.get(p, 0) < 300 for p in range(parts)):
        assert time.monotonic() < deadline, "consumed only %r" % pos
        for m in c.consume(num_messages=100, timeout=0.2):
            assert not m.error(), m.error()
            if m.offset() < 300:
                pos[m.partition()] = m.offset() + 1
    want = {p: 300 for p in range(parts)}
    assert pos == want
    c.commit(offsets=[TopicPartition(topic, p, o) for p, o in pos.items()], asynchronous=False)
    c.close()

    b.restart(hard=True)

    c = Consumer(group_conf(b, group, "second"))
    try:
        got = c.committed([TopicPartition(topic, p) for p in range(parts)], timeout=20)
        assert {tp.partition: tp.offset for tp in got} == want
        c.subscribe([topic])
        first, seen = {}, set()
        deadline = time.monotonic() + 30
        while len(seen) < n - 900:
            assert time.monotonic() < deadline, "resumed and read only %d records" % len(seen)
            for m in c.consume(num_messages=500, timeout=0.2):
                assert not m.error(), m.error()
                first.setdefault(m.partition(), m.offset())
                seen.add(m.value())
        assert first == want, "the rejoining consumer did not resume from the commits"
        assert seen == {b"v-%d" % i for i in range(n) if i // parts >= 300}
    finally:
        c.close()


def first_error(c, timeout=20):
    """The first error event a consumer's poll() returns (None after timeout)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        m = c.poll(0.2)
        if m is not None and m.error() and m.error().code() != KafkaError._PARTITION_EOF:
            return m.error()
    return None


def test_bad_group_input_through_a_real_client(broker_factory):
    b = broker_factory(settings=dict(GROUP_SETTINGS, **{"group.max.size": "2",
                                                        "group.max.session.timeout.ms":
                                                        "60000"}))
    topic, parts = unique("gb"), 2
    harness.create_topics(b, [(topic, parts, None)])
    produce(b, topic, 200, parts)

    # A well-behaved member of another group, served throughout.
    steady = Member(b, unique("steady"), topic, "steady")
    steady.start()
    members = [steady]
    try:
        wait_for("the steady member", lambda: len(steady.values) == 200, 30, members)

        # Session timeouts outside [group.min, group.max].session.timeout.ms.
        for ms in (500, 120000):
            c = Consumer(group_conf(b, unique("st"), "bad-session", **{"session.timeout.ms": ms}))
            try:
                c.subscribe([topic])
                err = first_error(c)
                assert err is not None and err.code() == KafkaError.INVALID_SESSION_TIMEOUT, err
            finally:
                c.close()

        # group.max.size=2: the third member is turned away.
        group = unique("full")
        two = [Member(b, group, topic, "full-%d" % i) for i in range(2)]
        members += two
        for m in two:
            m.start()
        wait_for("two members sharing the partitions",
                 lambda: all(len(m.snapshot()[0]) == 1 for m in two), 30, members)
        c = Consumer(group_conf(b, group, "third"))
        try:
            c.subscribe([topic])
            err = first_error(c)
            assert err is not None and err.code() == KafkaError.GROUP_MAX_SIZE_REACHED, err
        finally:
            c.close()

        # A 300-character group id is a group like any other (Kafka sets no limit).
        long_group = "g" * 300
        m = Member(b, long_group, topic, "long")
        members.append(m)
        m.start()
        wait_for("the long-named group to consume", lambda: len(m.values) == 200, 30, members)
        m.stop()
        c = Consumer(group_conf(b, long_group, "check"))
        try:
            got = c.committed([TopicPartition(topic, p) for p in range(parts)], timeout=10)
        finally:
            c.close()
        assert {tp.partition: tp.offset for tp in got} == {0: 100, 1: 100}

        produce(b, topic, 20, parts, prefix="more")
        wait_for("the steady member to keep consuming", lambda: len(steady.values) == 220, 30,
                 members)
    finally:
        stop_all(members)
