# SPDX-License-Identifier: Apache-2.0
"""Shared helpers of the transaction tests (test_txn_e2e.py, test_cli_txn.py and the
compat copier tests):

  TXN_SETTINGS              broker settings that make transactions quick to test on one node
  txn_producer(b, tid, ...) a confluent-kafka transactional Producer, init_transactions done
  read_committed(b, ...)    reads topics with isolation.level=read_committed until a sentinel
                            record in every partition (so everything before it is decided)
  copier_check(...)         the exactly-once copier check: seeds an input topic, runs copier
                            processes (any client: a command line per copier), kills -9 and
                            SIGSTOPs them at seeded-random moments, and checks that the output
                            read with read_committed holds every input exactly once in
                            per-partition order.
"""
import os
import random
import signal
import subprocess
import sys
import threading
import time

import harness

HERE = os.path.dirname(os.path.abspath(__file__))

# One node: the coordinator topics have one replica; the coordinator looks for timed-out
# transactions twice a second; groups rebalance without the initial delay.
TXN_SETTINGS = {
    "offsets.topic.num.partitions": "5",
    "offsets.topic.replication.factor": "1",
    "group.initial.rebalance.delay.ms": "0",
    "transaction.state.log.num.partitions": "5",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "500",
}

SENTINEL = b"--sentinel--"

END_TXN, WRITE_TXN_MARKERS = 26, 27


def need_apis(b, *keys):
    """Asserts that the broker advertises the APIs `keys` (ApiVersions). Every one of them is
    served: a dispatch table that lost one must fail the transaction tests, never skip them."""
    with b.conn() as c:
        err, have = c.api_versions(0)
    missing = [k for k in keys if k not in have]
    assert err == 0 and not missing, "ApiVersions (error %d) lacks APIs %r" % (err, missing)


def need_transactions(b):
    need_apis(b, END_TXN, WRITE_TXN_MARKERS)


def eventually(get, want, timeout=30, what="value"):
    """Calls get() until it returns want (Kafka answers EndTxn once the decision is durable;
    the markers, which move the LSO, follow). Returns the last value; fails on timeout."""
    deadline = time.monotonic() + timeout
    while True:
        got = get()
        if got == want:
            return got
        assert time.monotonic() < deadline, "%s: %r, want %r" % (what, got, want)
        time.sleep(0.1)


def txn_producer(b, tid, init=True, **extra):
    from confluent_kafka import Producer
    conf = {"bootstrap.servers": b.bootstrap, "transactional.id": tid,
            "transaction.timeout.ms": 60000, "linger.ms": 5}
    conf.update(extra)
    p = Producer(conf)
    if init:
        p.init_transactions(60)
    return p


def plain_producer(b, **extra):
    from confluent_kafka import Producer
    conf = {"bootstrap.servers": b.bootstrap, "linger.ms": 0, "acks": "all"}
    conf.update(extra)
    return Producer(conf)


def produce_sync(p, topic, partition, value, key=None):
    """Produces one record and waits for its delivery report; returns its offset."""
    out = {}

    def dr(err, msg):
        out["err"], out["off"] = err, (msg.offset() if msg is not None else None)

    p.produce(topic, value=value, key=key, partition=partition, on_delivery=dr)
    p.flush(60)
    assert out.get("err") is None, "produce to %s-%d failed: %s" % (topic, partition,
                                                                   out.get("err"))
    return out["off"]


def commit_sentinels(b, topic, partitions, tid="sentinel-writer"):
    """Commits one transaction holding a SENTINEL record in each partition."""
    p = txn_producer(b, tid)
    p.begin_transaction()
    for part in partitions:
        p.produce(topic, value=SENTINEL, partition=part)
    p.commit_transaction(60)


def consumer(b, group=None, isolation="read_committed", **extra):
    from confluent_kafka import Consumer
    conf = {"bootstrap.servers": b.bootstrap, "group.id": group or "txn-reader",
            "enable.auto.commit": False, "isolation.level": isolation,
            "enable.partition.eof": True, "auto.offset.reset": "earliest"}
    conf.update(extra)
    return Consumer(conf)


def read_until_sentinel(b, topic, partitions, isolation="read_committed", timeout=90):
    """Reads each partition from offset 0 until its SENTINEL; returns {partition:
    [(offset, value)]} without the sentinels. Fails on a consumer error or timeout."""
    from confluent_kafka import KafkaError, TopicPartition
    c = consumer(b, isolation=isolation)
    out = {p: [] for p in partitions}
    done = set()
    try:
        c.assign([TopicPartition(topic, p, 0) for p in partitions])
        deadline = time.monotonic() + timeout
        while len(done) < len(partitions):
            assert time.monotonic() < deadline, \
                "%s: no sentinel yet in %r after %ds (%s); got %r" % (
                    topic, sorted(set(partitions) - done), timeout, isolation,
                    {p: len(v) for p, v in out.items()})
            for m in c.consume(num_messages=1000, timeout=0.5):
                if m.error():
                    if m.error().code() == KafkaError._PARTITION_EOF:
                        continue
                    raise AssertionError("consumer error: %s" % m.error())
                if m.partition() in done:
                    continue
                if m.value() == SENTINEL:
                    done.add(m.partition())
                else:
                    out[m.partition()].append((m.offset(), m.value()))
    finally:
        c.close()
    return out


def read_to_eof(b, topic, partitions, isolation="read_committed", timeout=60):
    """Reads each partition from 0 until partition EOF (for read_committed librdkafka
    stops at the last stable offset); returns {partition: [(offset, value)]}."""
    from confluent_kafka import KafkaError, TopicPartition
    c = consumer(b, isolation=isolation)
    out = {p: [] for p in partitions}
    eof = set()
    try:
        c.assign([TopicPartition(topic, p, 0) for p in partitions])
        deadline = time.monotonic() + timeout
        while len(eof) < len(partitions):
            assert time.monotonic() < deadline, "%s: no EOF in %r" % (topic, partitions)
            for m in c.consume(num_messages=1000, timeout=0.5):
                if m.error():
                    if m.error().code() == KafkaError._PARTITION_EOF:
                        eof.add(m.partition())
                        continue
                    raise AssertionError("consumer error: %s" % m.error())
                eof.discard(m.partition())
                out[m.partition()].append((m.offset(), m.value()))
    finally:
        c.close()
    return out


# ================================================================ the copier check

def _value(p, seq):
    return b"%d:%06d" % (p, seq)


def decode_plain(value):
    """(input partition, sequence) of a copied value b"p:seq"."""
    p, s = value.split(b":")
    return int(p), int(s)


def seed_input(b, topic, parts, per_part, value=_value, seconds=0.0):
    """Writes per_part records to each partition, spread evenly over `seconds` (0: at
    once)."""
    p = plain_producer(b, **{"linger.ms": 20})
    t0 = time.monotonic()
    step = max(1, per_part // 100)
    for seq in range(per_part):
        for part in range(parts):
            p.produce(topic, key=b"k%d" % part, value=value(part, seq), partition=part)
        if seq % step == 0:
            p.poll(0)
            if seconds > 0:
                delay = t0 + seconds * seq / per_part - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
    assert p.flush(60) == 0


def committed_offsets(b, group, topic, parts):
    from confluent_kafka import Consumer, TopicPartition
    # read_uncommitted: no RequireStable, so offsets pending in a transaction do not make
    # the call wait (they are not committed yet either way).
    c = Consumer({"bootstrap.servers": b.bootstrap, "group.id": group,
                  "enable.auto.commit": False, "isolation.level": "read_uncommitted"})
    try:
        res = c.committed([TopicPartition(topic, p) for p in range(parts)], timeout=10)
        return {tp.partition: tp.offset for tp in res}
    finally:
        c.close()


class Copiers:
    """Runs n copier processes made by cmd(i) (argv list), restarting any that exits."""

    def __init__(self, cmd, n, workdir, env=None):
        self.cmd, self.n, self.workdir, self.env = cmd, n, workdir, env
        self.procs = [None] * n
        self.starts = [0] * n
        self.stopped = {}  # i -> time to SIGCONT
        for i in range(n):
            self.start(i)

    def start(self, i):
        self.starts[i] += 1
        log = open(os.path.join(self.workdir, "copier%d.%d.log" % (i, self.starts[i])), "wb")
        self.procs[i] = subprocess.Popen(self.cmd(i), stdout=log, stderr=log,
                                         stdin=subprocess.DEVNULL, env=self.env)
        log.close()

    def tick(self):
        now = time.monotonic()
        for i, until in list(self.stopped.items()):
            if now >= until:
                self.procs[i].send_signal(signal.SIGCONT)
                del self.stopped[i]
        for i, pr in enumerate(self.procs):
            if pr.poll() is not None and i not in self.stopped:
                self.start(i)

    def kill9(self, i):
        self.procs[i].kill()
        self.procs[i].wait()
        self.stopped.pop(i, None)

    def sigstop(self, i, seconds):
        if i in self.stopped or self.procs[i].poll() is not None:
            return
        self.procs[i].send_signal(signal.SIGSTOP)
        self.stopped[i] = time.monotonic() + seconds

    def close(self):
        for i, pr in enumerate(self.procs):
            if pr is not None and pr.poll() is None:
                pr.kill()
                pr.wait()

    def logs(self):
        out = []
        for name in sorted(os.listdir(self.workdir)):
            if name.startswith("copier"):
                with open(os.path.join(self.workdir, name), "rb") as f:
                    out.append("---- %s\n%s" % (name, f.read()[-3000:].decode(errors="replace")))
        return "\n".join(out)


def copier_check(b, workdir, cmd, in_topic, out_topic, group, parts=3, per_part=1500,
                 copiers=2, faults=4, seed=10, decode=decode_plain, value=_value,
                 stop_seconds=(1.0, 8.0), feed_seconds=10.0, timeout=150, env=None):
    """The exactly-once copier check. cmd(i) gives copier i's argv: it must consume
    in_topic in `group` with read_committed, produce each record to out_topic's partition of
    the same number, and commit the offsets in the same transaction. The input is written
    while the copiers run, evenly over feed_seconds; `faults` kill -9 / SIGSTOP (for a
    random time in stop_seconds) land on random copiers at random moments of the feed
    (seeded RNG). Returns the faults done, for messages."""
    rng = random.Random(seed)
    harness.create_topics(b, [(in_topic, parts, None), (out_topic, parts, None)])
    feed_error = []

    def feed():
        try:
            seed_input(b, in_topic, parts, per_part, value=value, seconds=feed_seconds)
        except Exception as e:  # noqa: B902 - reported below
            feed_error.append(e)

    at = sorted(rng.uniform(1.0, feed_seconds) for _ in range(faults))
    done_faults = []
    cs = Copiers(cmd, copiers, workdir, env=env)
    feeder = threading.Thread(target=feed, daemon=True)
    t0 = time.monotonic()
    feeder.start()
    try:
        deadline = t0 + timeout
        while True:
            cs.tick()
            while at and time.monotonic() - t0 >= at[0]:
                at.pop(0)
                victim = rng.randrange(copiers)
                if rng.random() < 0.5:
                    cs.kill9(victim)
                    done_faults.append(("kill-9", victim, round(time.monotonic() - t0, 1)))
                else:
                    secs = rng.uniform(*stop_seconds)
                    cs.sigstop(victim, secs)
                    done_faults.append(("SIGSTOP %.1fs" % secs, victim,
                                        round(time.monotonic() - t0, 1)))
            if not feeder.is_alive() and not at:
                assert not feed_error, feed_error
                com = committed_offsets(b, group, in_topic, parts)
                if all(com[p] == per_part for p in range(parts)):
                    break
            else:
                com = None
            assert time.monotonic() < deadline, \
                "copiers stuck at committed offsets %r after faults %r\n%s" % (
                    com, done_faults, cs.logs())
            time.sleep(0.2)
    finally:
        cs.close()
    # Any transaction left open by the last kill is aborted at its timeout; the sentinel
    # is read only once everything before it is decided.
    commit_sentinels(b, out_topic, range(parts))
    out = read_until_sentinel(b, out_topic, list(range(parts)), timeout=timeout)
    for p in range(parts):
        seqs = []
        for _off, v in out[p]:
            ip, seq = decode(v)
            assert ip == p, "input partition %d's record %d copied to partition %d" % (ip, seq,
                                                                                     p)
            seqs.append(seq)
        if seqs != list(range(per_part)):
            dup = len(seqs) - len(set(seqs))
            missing = sorted(set(range(per_part)) - set(seqs))[:10]
            raise AssertionError(
                "output partition %d: %d records, %d duplicates, missing %r..., first out of "
                "order at %r; faults %r\n%s" % (
                    p, len(seqs), dup, missing,
                    next((k for k in range(1, len(seqs)) if seqs[k] != seqs[k - 1] + 1), None),
                    done_faults, cs.logs()))
    return done_faults


def ck_copier_cmd(b, group, in_topic, out_topic, commit_every=100, commit_ms=100,
                  txn_timeout_ms=5000):
    """The confluent-kafka copier (txn_copier_ck.py) as a copier_check cmd."""
    def cmd(i):
        return [sys.executable, os.path.join(HERE, "txn_copier_ck.py"), b.bootstrap, group,
                in_topic, out_topic, "ck-copier-%d" % i, str(commit_every), str(commit_ms),
                str(txn_timeout_ms)]
    return cmd
