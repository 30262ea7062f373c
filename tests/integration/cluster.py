# SPDX-License-Identifier: Apache-2.0
"""An N-node cluster of real tallyd processes on loopback, for the process tests of the
replicated cluster (tests/integration/test_cluster_replication.py) and the long runs of
`make chaos` (tests/chaos/chaos.py).

A Cluster is N harness.TallyBroker processes that share a cluster.id and whose
controller.quorum.voters name the voters' raft (CONTROLLER) listeners, each on free ports
in its own directory: nodes 1..V are broker and controller voters (V = N unless asked), the
others broker-only (process.roles=broker). It can stop
(SIGTERM: a controlled shutdown), kill -9, SIGSTOP, SIGCONT and restart one node; answer
who leads a partition, what its ISR is and which node is the controller, as every running
node's Metadata says; wait for those to become something; compare the replicas' segment
files byte for byte once they have caught up; and dump every node's log.

The client side (AckedProducer, TailConsumer, read_back, check_acked) is here too, so
that the pytest tests and the chaos scenarios check the same thing the same way: every
record a producer saw acknowledged is in the partition exactly once, in the order it was
produced.

Nothing here depends on pytest; the tests' fixture calls Cluster.shutdown and, on a
failure, Cluster.dump_logs.
"""
import collections
import logging
import os
import re
import signal
import threading
import time

import harness
import kproto as kp

CLUSTER_ID = "tally-process-cluster"

# Fast enough for tests on a loaded 2-core machine running ASan builds, slow enough that a
# broker busy under ASan is not fenced for being late (the defaults are 2000 / 9000 / 30000).
FAST_SETTINGS = {
    "broker.heartbeat.interval.ms": "500",
    "broker.session.timeout.ms": "4000",
    "replica.lag.time.max.ms": "3000",
    "replica.high.watermark.checkpoint.interval.ms": "1000",
    "offsets.topic.num.partitions": "3",
    "transaction.state.log.num.partitions": "3",
    "group.initial.rebalance.delay.ms": "0",
}


class ClusterError(AssertionError):
    pass


def wait_for(pred, timeout, what, interval=0.1):
    """Calls pred until it returns something true; returns that. Raises ClusterError after
    timeout seconds, naming what it waited for (a string, or a function that says it then)
    and pred's last answer."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        try:
            got = pred()
        except (OSError, ConnectionError, ValueError, AssertionError, KeyError,
                IndexError) as e:
            got, last = None, repr(e)
        if got:
            return got
        if time.monotonic() > deadline:
            raise ClusterError("timed out after %.0f s waiting for %s (last: %s)" %
                               (timeout, what() if callable(what) else what,
                                last if last is not None else got))
        time.sleep(interval)


def _distinct_ports(n):
    used = set()
    out = []
    while len(out) < n:
        p = harness.free_port()
        if p not in used:
            used.add(p)
            out.append(p)
    return out


class Cluster:
    def __init__(self, workdir, n=3, settings=None, node_settings=None, voters=None,
                 cluster_id=CLUSTER_ID, tallyd=None, net=None):
        """Nodes 1..voters (default: all n) are broker and controller voters; the others
        are broker-only (process.roles=broker), finding the controller through the voters'
        Kafka listeners. settings: for every node (over FAST_SETTINGS); node_settings:
        {node: {k: v}}; tallyd: the binary (default harness.TALLYD); net: a netns.Net with
        hosts 1..n, node i then runs in host i's namespace on its address (else every node
        is on 127.0.0.1)."""
        self.workdir = str(workdir)
        self.cluster_id = cluster_id
        self.ids = list(range(1, n + 1))
        self.voters = self.ids[:voters or n]
        self.nodes = {}
        self.paused = set()
        ports = _distinct_ports(2 * n)
        kafka = {i: ports[2 * (i - 1)] for i in self.ids}
        raft = {i: ports[2 * (i - 1) + 1] for i in self.ids}
        self.net = net
        host = {i: net.addr(i) if net else "127.0.0.1" for i in self.ids}
        quorum = ",".join("%d@%s:%d" % (i, host[i], raft[i]) for i in self.voters)
        for i in self.ids:
            s = dict(FAST_SETTINGS)
            s.update(settings or {})
            s.update((node_settings or {}).get(i, {}))
            s["cluster.id"] = cluster_id
            s["controller.quorum.voters"] = quorum
            if i not in self.voters:
                s["process.roles"] = "broker"
                s["controller.bootstrap.servers"] = ",".join(
                    "%s:%d" % (host[v], kafka[v]) for v in self.voters)
            b = harness.TallyBroker(os.path.join(self.workdir, "node%d" % i), node_id=i,
                                    settings=s)
            b.port, b.controller_port, b.host = kafka[i], raft[i], host[i]
            if net:
                b.wrap = lambda argv, i=i: net.wrap(i, argv)
            if tallyd:
                b.tallyd = tallyd
            self.nodes[i] = b
        self.events = []  # (monotonic time, what) for the failure report
        self._marks = None

    def mark(self):
        """From here on, dump_logs shows only what the nodes logged after this call (one
        cluster shared by several tests)."""
        self._marks = {i: len(self.nodes[i].stderr_all()) for i in self.ids}
        self.events = []

    def note(self, what):
        self.events.append((time.monotonic(), what))

    # ------------------------------------------------------------ addresses

    def __getitem__(self, node):
        return self.nodes[node]

    @property
    def bootstrap(self):
        return ",".join(self.nodes[i].bootstrap for i in self.ids)

    def running(self):
        """Nodes whose process is alive and not stopped."""
        return [i for i in self.ids if self.nodes[i].alive() and i not in self.paused]

    # ------------------------------------------------------------ lifecycle

    def start(self, timeout=60):
        for i in self.ids:
            self.nodes[i].start(wait=False)
        self.note("start all")
        self.wait_healthy(timeout)
        return self

    def wait_healthy(self, timeout=60):
        """Until every running node answers Metadata naming every running node as an unfenced
        broker and one controller that all of them agree on."""
        def ok():
            want = sorted(self.running())
            ctl = set()
            for i in want:
                md = self.metadata(i)
                if sorted(b[0] for b in md["brokers"]) != want:
                    return None
                ctl.add(md["controller_id"])
            return len(ctl) == 1 and min(ctl) in want
        wait_for(ok, timeout, "every running node %r unfenced with one controller" %
                 self.running())

    def start_node(self, node, wait=True, timeout=60):
        self.nodes[node].start(wait=False)
        self.note("start %d" % node)
        if wait:
            self.wait_healthy(timeout)

    def stop_node(self, node, check=True):
        """SIGTERM (a controlled shutdown) and wait for the exit; returns the seconds it
        took."""
        self.resume_node(node)
        t0 = time.monotonic()
        self.note("SIGTERM %d" % node)
        self.nodes[node].stop(check=check)
        took = time.monotonic() - t0
        self.note("stopped %d after %.2f s" % (node, took))
        return took

    def kill_node(self, node):
        self.note("SIGKILL %d" % node)
        self.nodes[node].kill()
        self.paused.discard(node)

    def pause_node(self, node):
        self.note("SIGSTOP %d" % node)
        os.kill(self.nodes[node].proc.pid, signal.SIGSTOP)
        self.paused.add(node)

    def resume_node(self, node):
        if node in self.paused:
            self.note("SIGCONT %d" % node)
            os.kill(self.nodes[node].proc.pid, signal.SIGCONT)
            self.paused.discard(node)

    def restart_node(self, node, hard=False, wait=True):
        if hard:
            self.kill_node(node)
        else:
            self.stop_node(node)
        self.start_node(node, wait=wait)

    def shutdown(self):
        """Stops every node (SIGCONT first); returns the problems found (a non-zero exit,
        a sanitizer report), an empty list when all stopped clean."""
        problems = []
        for i in list(self.paused):
            self.resume_node(i)
        live = [i for i in self.ids if self.nodes[i].alive()]
        for i in live:
            self.nodes[i].proc.send_signal(signal.SIGTERM)
        for i in self.ids:
            b = self.nodes[i]
            try:
                if i in live:
                    try:
                        rc = b.proc.wait(harness.STOP_TIMEOUT)
                    except Exception:
                        b.kill()
                        raise AssertionError("node %d did not stop within %ds of SIGTERM" %
                                             (i, harness.STOP_TIMEOUT))
                    b.check_clean(rc)
                else:
                    b.check_sanitizers()
            except AssertionError as e:
                problems.append("node %d: %s" % (i, e))
        return problems

    def dump_logs(self, lines=400):
        t0 = self.events[0][0] if self.events else 0
        print("=" * 20, "cluster events", "=" * 20)
        for t, what in self.events:
            print("%8.2f %s" % (t - t0, what))
        for i in self.ids:
            b = self.nodes[i]
            print("=" * 20, "tallyd node %d in %s" % (i, b.workdir), "=" * 20)
            text = b.stderr_all()[(self._marks or {}).get(i, 0):].splitlines()
            print("\n".join(text[-lines:]))

    # ------------------------------------------------------------ metadata

    def metadata(self, node, topics=None):
        """Node's Metadata v12 answer (kproto.parse_metadata_flex), topics by name."""
        with kp.Conn(self.nodes[node].port, host=self.nodes[node].host, timeout=5.0) as c:
            md = c.metadata_flex(None if topics is None else [(None, t) for t in topics],
                                 version=12)
        md["topics"] = {t["name"]: t for t in md["topics"]}
        return md

    def partition(self, topic, partition, node=None):
        """{error, leader, leader_epoch, replicas, isr, offline} as node (default: every
        running node, which must agree) says; None while they disagree."""
        views = []
        for i in ([node] if node else self.running()):
            t = self.metadata(i, [topic])["topics"].get(topic)
            if t is None or partition not in t["partitions"]:
                return None
            views.append(t["partitions"][partition])
        first = views[0]
        key = lambda p: (p["leader"], p["leader_epoch"], sorted(p["isr"]))  # noqa: E731
        return first if all(key(v) == key(first) for v in views) else None

    def leader(self, topic, partition):
        p = self.partition(topic, partition)
        return p["leader"] if p else None

    def isr(self, topic, partition):
        p = self.partition(topic, partition)
        return sorted(p["isr"]) if p else None

    def controller(self):
        """The controller every running node names (None while they disagree)."""
        ids = {self.metadata(i)["controller_id"] for i in self.running()}
        return ids.pop() if len(ids) == 1 else None

    def wait_isr(self, topic, partition, isr, timeout=30):
        want = sorted(isr)
        return wait_for(lambda: self.isr(topic, partition) == want, timeout,
                        lambda: "ISR of %s-%d to be %r (is %r)" % (
                            topic, partition, want, self._isr_or_none(topic, partition)))

    def _isr_or_none(self, topic, partition):
        try:
            return self.isr(topic, partition)
        except (OSError, ConnectionError, ValueError, AssertionError):
            return None

    def wait_leader(self, topic, partition, pred=lambda leader: leader >= 0, timeout=30,
                    what="a leader"):
        """Waits until every running node names the same leader and pred(leader) holds;
        returns the leader."""
        def ok():
            p = self.partition(topic, partition)
            return p["leader"] if p and pred(p["leader"]) else None
        return wait_for(ok, timeout, "%s for %s-%d" % (what, topic, partition))

    def wait_controller(self, pred=lambda c: c >= 0, timeout=30):
        return wait_for(lambda: (lambda c: c if c is not None and pred(c) else None)(
            self.controller()), timeout, "a controller")

    def wait_full_isr(self, topic, partitions, timeout=60):
        """Until every partition's ISR is its whole replica set and it has a leader."""
        for p in range(partitions):
            def ok(p=p):
                st = self.partition(topic, p)
                return st and st["leader"] >= 0 and sorted(st["isr"]) == sorted(st["replicas"])
            wait_for(ok, timeout, "full ISR of %s-%d" % (topic, p))

    def create_topic(self, name, partitions=3, rf=3, config=None, assignments=None,
                     timeout=60):
        """CreateTopics v5 through the controller (admin requests are not forwarded yet),
        with explicit assignments {partition: [brokers], first preferred} when given; waits
        for a leader and a full ISR on every partition."""
        cfg = dict(config or {})
        spec = (name, partitions if not assignments else -1, rf if not assignments else -1,
                cfg) + ((assignments,) if assignments else ())
        deadline = time.monotonic() + timeout
        while True:
            ctl = self.wait_controller(timeout=timeout)
            try:
                with kp.Conn(self.nodes[ctl].port, host=self.nodes[ctl].host, timeout=15.0) as c:
                    err = c.create_topics_v([spec], version=5, timeout_ms=10000)[name]["error"]
            except (OSError, ConnectionError) as e:
                err = repr(e)
            if err in (0, kp.TOPIC_ALREADY_EXISTS):
                break
            if time.monotonic() > deadline:
                raise ClusterError("cannot create topic %s: %r" % (name, err))
            time.sleep(0.2)
        self.note("created %s (%d partitions, RF %d, %r, %r)" % (name, partitions, rf, cfg,
                                                                  assignments))
        self.wait_full_isr(name, len(assignments) if assignments else partitions, timeout)

    def describe_isr(self, topic, partition):
        """The ISR `tally topics describe` prints for topic-partition (sorted), None when it
        prints no line for it."""
        r = self.nodes[self.running()[0]].tally("topics", "describe", topic, timeout=30)
        if r.returncode != 0:
            return None
        for line in r.stdout.splitlines():
            f = dict(x.split(": ", 1) for x in line.strip().split("\t") if ": " in x)
            if f.get("Topic") == topic and f.get("Partition") == str(partition):
                return sorted(int(x) for x in f["Isr"].split(",") if x)
        return None

    def checkpointed_hw(self, node, topic, partition):
        """The high watermark node's replication-offset-checkpoint holds for topic-partition
        (what it starts from after a crash); None when it holds none."""
        path = os.path.join(self.nodes[node].data_dir, "replication-offset-checkpoint")
        try:
            with open(path) as f:
                lines = f.read().split("\n")
        except OSError:
            return None
        for line in lines[2:]:
            f = line.split()
            if len(f) == 3 and f[0] == topic and f[1] == str(partition):
                return int(f[2])
        return None

    def find_coordinator(self, key, key_type=0, timeout=60):
        """The node FindCoordinator names for a group (key_type 0) or transactional id (1),
        asked of the running nodes until one answers without error (the first question
        creates the internal topic)."""
        def ask():
            for i in self.running():
                with kp.Conn(self.nodes[i].port, host=self.nodes[i].host, timeout=10.0) as c:
                    rs = c.group(10, 3, {"Key": key, "KeyType": key_type})
                if rs["ErrorCode"] == 0:
                    return rs["NodeId"] + 1  # 0 is a node id: wait_for wants a true value
            return None
        return wait_for(ask, timeout, "a coordinator for %r" % key) - 1

    def last_log(self, node):
        """What node logged since it was last started."""
        try:
            with open(self.nodes[node].log_paths[-1], "rb") as f:
                return f.read().decode(errors="replace")
        except (OSError, IndexError):
            return ""

    def others(self, *exclude):
        """The voters other than `exclude` (sorted)."""
        return [v for v in self.voters if v not in exclude]

    # ------------------------------------------------------------ segment files

    def replica_logs(self, topic, partition, node):
        """[(segment file name, bytes)] of node's copy of topic-partition."""
        d = harness.partition_dir(self.nodes[node], topic, partition)
        out = []
        for f in sorted(os.listdir(d)):
            if f.endswith(".log"):
                with open(os.path.join(d, f), "rb") as fh:
                    out.append((f, fh.read()))
        return out

    def diff_replicas(self, topic, partition, replicas):
        """None when every replica's segment files are byte for byte the same, else a
        description of the first difference."""
        logs = {r: self.replica_logs(topic, partition, r) for r in replicas}
        ref_node = replicas[0]
        ref = logs[ref_node]
        for r in replicas[1:]:
            got = logs[r]
            if [n for n, _ in got] != [n for n, _ in ref]:
                return "%s-%d: node %d has segments %r, node %d %r" % (
                    topic, partition, r, [n for n, _ in got], ref_node, [n for n, _ in ref])
            for (name, a), (_n, b) in zip(ref, got):
                if a != b:
                    at = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]),
                              min(len(a), len(b)))
                    return "%s-%d %s: node %d has %d bytes, node %d %d; first difference at " \
                           "byte %d" % (topic, partition, name, ref_node, len(a), r, len(b), at)
        return None

    def wait_replicas_identical(self, topic, partitions, timeout=60):
        """Once every replica has caught up (full ISR, then the files stop differing), the
        replicas' .log segment files are byte for byte the same. Returns the bytes compared
        per partition."""
        self.wait_full_isr(topic, partitions, timeout)
        sizes = {}
        for p in range(partitions):
            replicas = sorted(self.partition(topic, p)["replicas"])
            last = []

            def same(p=p, replicas=replicas, last=last):
                d = self.diff_replicas(topic, p, replicas)
                last[:] = [d]
                return d is None
            try:
                wait_for(same, timeout, "identical replicas of %s-%d" % (topic, p), 0.25)
            except ClusterError:
                raise ClusterError("replicas of %s-%d differ: %s" % (topic, p, last[0]))
            sizes[p] = sum(len(b) for _n, b in self.replica_logs(topic, p, replicas[0]))
        return sizes

    # ------------------------------------------------------------ logs

    def log_text(self, node):
        return self.nodes[node].stderr_all()


# ================================================================ clients

def serve(c, request=None, before_shutdown=None):
    """A fixture's body for cluster c: `yield from clu.serve(c, request)`. Starts c (if that
    fails: the logs dumped, every node stopped, the error raised), yields it, then calls
    before_shutdown() if given, stops every node and fails on any problem the stop found (a
    node that did not exit cleanly); the nodes' logs are dumped then, and also when
    `request`'s test failed (conftest records rep_call)."""
    try:
        c.start()
    except Exception:
        c.dump_logs()
        c.shutdown()
        raise
    yield c
    if before_shutdown is not None:
        before_shutdown()
    failed = request is not None and (getattr(request.node, "rep_call", None) is None or
                                      request.node.rep_call.failed)
    problems = c.shutdown()
    if problems or failed:
        c.dump_logs()
    assert not problems, "\n".join(problems)


def value_of(partition, seq):
    return b"p%d-%09d" % (partition, seq)


def seq_of(value):
    return int(value.split(b"-")[1])


class _LinesHandler(logging.Handler):
    """A logging handler that keeps each record's text in a bounded deque."""

    def __init__(self, lines):
        super().__init__()
        self.lines = lines

    def emit(self, record):
        self.lines.append(record.getMessage())


class AckedProducer:
    """A confluent-kafka producer (idempotent, acks=all unless conf says otherwise) on its
    own thread, producing to each of `partitions` in turn: record k of partition p has the
    value value_of(p, k). It records what was acknowledged, in the order of the
    acknowledgements, and every error that reached the application (delivery reports and
    error callbacks). Bounded: at most max_records, at `rate` records a second."""

    def __init__(self, bootstrap, topic, partitions, rate=1000, max_records=100000, conf=None):
        from confluent_kafka import Producer
        self.topic, self.partitions = topic, partitions
        self.rate, self.max_records = rate, max_records
        c = {"bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all",
             "linger.ms": 5, "message.timeout.ms": 120000, "request.timeout.ms": 10000,
             "retry.backoff.ms": 100, "topic.metadata.refresh.interval.ms": 1000,
             "socket.timeout.ms": 10000, "log_level": 0}
        c.update(conf or {})
        self.errors = []
        c["error_cb"] = self._on_error
        # TALLY_TEST_RDKAFKA_DEBUG=eos,msg,... writes librdkafka's debug log to the file
        # TALLY_TEST_RDKAFKA_LOG names (off by default: for looking into a failure). Without
        # it, the idempotence lines (debug=eos: a few dozen a run — sequence errors, drains,
        # epoch bumps) are kept in memory: a failure shows what the client did about the
        # broker's answers (finish_check).
        import logging
        log = logging.getLogger("rdkafka-%s-%x" % (topic, id(self)))
        log.propagate = False
        log.setLevel(logging.DEBUG)
        debug = os.environ.get("TALLY_TEST_RDKAFKA_DEBUG")
        self.eos_lines = collections.deque(maxlen=400)
        if debug:
            log.addHandler(logging.FileHandler(
                os.environ.get("TALLY_TEST_RDKAFKA_LOG", "/tmp/rdkafka-debug.log")))
        else:
            debug = "eos"
            log.addHandler(_LinesHandler(self.eos_lines))
        c.update({"debug": debug, "log_level": 7, "logger": log})
        self.p = Producer(c)
        self.acked = {p: [] for p in range(partitions)}
        self.offsets = {p: [] for p in range(partitions)}
        self.sent = 0
        self._stop = threading.Event()
        self._thread = None
        self.lock = threading.Lock()

    def _on_error(self, err):
        # Transient connection errors are logged by librdkafka and retried; they reach the
        # error callback too. Only fatal ones are the application's problem.
        if err.fatal():
            self.errors.append("fatal: %s" % err)

    def _on_delivery(self, err, msg):
        if err is not None:
            self.errors.append("delivery of %r: %s" % (msg.value(), err))
            return
        with self.lock:
            self.acked[msg.partition()].append(seq_of(msg.value()))
            self.offsets[msg.partition()].append(msg.offset())

    def n_acked(self):
        with self.lock:
            return sum(len(v) for v in self.acked.values())

    def _run(self):
        try:
            self._produce()
        except Exception as e:  # a fatal client error: the application saw it
            self.errors.append("producer thread: %r" % (e,))

    def _produce(self):
        nxt = {p: 0 for p in range(self.partitions)}
        t0 = time.monotonic()
        while not self._stop.is_set() and self.sent < self.max_records:
            due = int((time.monotonic() - t0) * self.rate) + 1
            while self.sent < min(due, self.max_records) and not self._stop.is_set():
                p = self.sent % self.partitions
                try:
                    self.p.produce(self.topic, value_of(p, nxt[p]), partition=p,
                                   on_delivery=self._on_delivery)
                except BufferError:
                    self.p.poll(0.05)
                    continue
                nxt[p] += 1
                self.sent += 1
            self.p.poll(0.01)
        self.next_seq = nxt

    def start(self):
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def wait_acked(self, n, timeout=60):
        wait_for(lambda: self.n_acked() >= n, timeout,
                 lambda: "%d acknowledged records (have %d; errors %r)" %
                 (n, self.n_acked(), self.errors[:5]), 0.05)

    def stop(self, flush_timeout=120):
        """Stops producing and waits for every outstanding record's delivery report."""
        self._stop.set()
        if self._thread:
            self._thread.join()
        if self.p is None:
            return self  # stopped already
        left = self.p.flush(flush_timeout)
        if left:
            self.errors.append("%d records still undelivered after %d s" % (left, flush_timeout))
        self.p = None  # the client's threads and connections go now, not at garbage collection
        return self


class TailConsumer:
    """A confluent-kafka consumer on its own thread reading every partition from offset 0
    (assign(), no group) while the test runs; records what it saw: {partition: [(offset,
    seq)]}, and errors other than partition EOF."""

    def __init__(self, bootstrap, topic, partitions, conf=None):
        from confluent_kafka import Consumer
        c = {"bootstrap.servers": bootstrap, "group.id": "tail-%s" % topic,
             "enable.auto.commit": False, "auto.offset.reset": "earliest",
             "enable.partition.eof": False, "topic.metadata.refresh.interval.ms": 1000,
             "fetch.wait.max.ms": 100, "socket.timeout.ms": 10000, "log_level": 0}
        c.update(conf or {})
        self.c = Consumer(c)
        self.topic, self.partitions = topic, partitions
        self.seen = {p: [] for p in range(partitions)}
        self.errors = []
        self._stop = threading.Event()
        self._thread = None

    def _run(self):
        from confluent_kafka import TopicPartition
        self.c.assign([TopicPartition(self.topic, p, 0) for p in range(self.partitions)])
        while not self._stop.is_set():
            for m in self.c.consume(num_messages=1000, timeout=0.2):
                if m.error():
                    if not m.error().retriable() and m.error().fatal():
                        self.errors.append(str(m.error()))
                    continue
                self.seen[m.partition()].append((m.offset(), seq_of(m.value())))
        self.c.close()

    def start(self):
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def count(self):
        return sum(len(v) for v in self.seen.values())

    def stop(self):
        self._stop.set()
        if self._thread:
            self._thread.join()
        return self


def read_back(bootstrap, topic, partitions, timeout=120, conf=None):
    """Every record of topic-p from offset 0 to the high watermark (as the leader answers
    it now): {partition: [(offset, seq)]}. Fails on a consumer error."""
    from confluent_kafka import Consumer, KafkaError, TopicPartition
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "read-back-%s" % topic,
                  "enable.auto.commit": False, "enable.partition.eof": True,
                  "auto.offset.reset": "error", "log_level": 0, **(conf or {})})
    out = {p: [] for p in range(partitions)}
    try:
        ends = {}
        for p in range(partitions):
            _lo, hi = c.get_watermark_offsets(TopicPartition(topic, p), timeout=30)
            ends[p] = hi
        c.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        pos = {p: 0 for p in range(partitions)}
        deadline = time.monotonic() + timeout
        while any(pos[p] < ends[p] for p in range(partitions)):
            if time.monotonic() > deadline:
                raise ClusterError("read-back stuck at %r, want %r" % (pos, ends))
            for m in c.consume(num_messages=5000, timeout=0.5):
                if m.error():
                    if m.error().code() == KafkaError._PARTITION_EOF:
                        continue
                    raise ClusterError("read-back error on %s [%s]: %s" %
                                       (m.topic(), m.partition(), m.error()))
                if m.offset() < ends[m.partition()]:
                    out[m.partition()].append((m.offset(), seq_of(m.value())))
                pos[m.partition()] = m.offset() + 1
    finally:
        c.close()
    return out


def check_acked(acked, records, exactly_once=True):
    """Kafka's replication_test.py check, made stricter by idempotence: in each partition
    every acknowledged sequence number is present exactly once, no sequence number appears
    twice, and the sequence numbers are in the order produced. exactly_once=False (a
    producer without idempotence, whose retries may write a batch twice): every
    acknowledged one is present, at least once. Returns a list of problems (empty: the
    check passed)."""
    problems = []
    for p, want in acked.items():
        seqs = [s for _o, s in records.get(p, [])]
        count = {}
        for s in seqs:
            count[s] = count.get(s, 0) + 1
        lost = sorted(s for s in want if s not in count)
        if lost:
            problems.append("partition %d: %d acknowledged records lost: %r" %
                            (p, len(lost), lost[:20]))
        if not exactly_once:
            continue
        dups = sorted(s for s, k in count.items() if k > 1)
        if dups:
            problems.append("partition %d: sequence numbers twice: %r" % (p, dups[:20]))
        if seqs != sorted(seqs):
            bad = next(k for k in range(1, len(seqs)) if seqs[k] < seqs[k - 1])
            problems.append("partition %d: out of order at index %d: %r" %
                            (p, bad, seqs[max(0, bad - 3):bad + 3]))
    return problems


def check_seen(seen, records):
    """What a consumer saw while the faults happened is what the partition finally holds: a
    record served at offset O is the record at O now (none was served past the HW and later
    truncated away). Returns a list of problems."""
    problems = []
    for p, got in seen.items():
        final = dict(records.get(p, []))
        bad = [(o, s, final.get(o)) for o, s in got if final.get(o) != s]
        if bad:
            problems.append("partition %d: %d records a consumer saw are not in the final "
                            "log at their offsets (offset, seen, now): %r" %
                            (p, len(bad), bad[:10]))
    return problems


# ================================================================ scenarios
# Shared by test_cluster_replication.py (short) and tests/chaos/chaos.py (100k records).

MATRIX = {
    # name: (signal the leader gets, restarted after each stop)
    "clean_shutdown": ("term", False),
    "hard_shutdown": ("kill", False),
    "clean_bounce": ("term", True),
    "hard_bounce": ("kill", True),
}


def pick_victim(cl, topic, partitions, controller):
    """(partition, leader) with a leader that is the controller (controller=True) or is not
    (False): a leader's failure and a leader-and-controller's failure are separate cases."""
    ctl = cl.wait_controller()
    for p in range(partitions):
        leader = cl.wait_leader(topic, p)
        if (leader == ctl) == controller:
            return p, leader
    raise ClusterError("no partition of %s has a leader that %s the controller %d" %
                       (topic, "is" if controller else "is not", ctl))


def rotations(nodes, partitions):
    """Explicit assignments: partition p on `nodes` rotated by p (each node leads one)."""
    return {p: nodes[p % len(nodes):] + nodes[:p % len(nodes)] for p in range(partitions)}


def run_matrix(cl, case, topic, partitions=3, stops=1, controller=False, rate=1000,
               per_phase=1000, nodes=(1, 2, 3), log=print):
    """Kafka's replication_test.py on cl: topic with `partitions` partitions on `nodes`, RF=3,
    min.insync.replicas=2, an idempotent acks=all producer and a tail consumer; `stops`
    times the leader of one partition (the controller too when `controller`) gets SIGTERM
    or SIGKILL (MATRIX[case]) and, in the bounce cases, starts again; between faults the
    producer must get `per_phase` more records acknowledged. Every node runs again at the
    end. Raises ClusterError on any problem; returns a summary dict."""
    sig, bounce = MATRIX[case]
    cl.create_topic(topic, partitions, 3, {"min.insync.replicas": "2"},
                    assignments=rotations(list(nodes), partitions))
    prod = AckedProducer(cl.bootstrap, topic, partitions, rate=rate,
                         max_records=per_phase * (stops + 3) + rate * 120).start()
    tail = TailConsumer(cl.bootstrap, topic, partitions).start()
    failovers = []
    try:
        prod.wait_acked(per_phase, timeout=60 + per_phase / rate * 3)
        down = None
        for k in range(stops):
            if down is not None:  # a shutdown case that stops again: the last one returns
                cl.start_node(down)
            p, victim = pick_victim(cl, topic, partitions, controller)
            before = prod.n_acked()
            t0 = time.monotonic()
            if sig == "term":
                cl.stop_node(victim)
            else:
                cl.kill_node(victim)
            cl.wait_leader(topic, p, lambda leader, v=victim: leader not in (v, -1),
                           timeout=60, what="a new leader (not %d)" % victim)
            if controller:
                cl.wait_controller(lambda c, v=victim: c != v)
            prod.wait_acked(before + per_phase, timeout=90 + per_phase / rate * 3)
            failovers.append((p, victim, time.monotonic() - t0))
            log("  %s %d/%d: %s node %d (leader of %s-%d%s); %d acked" % (
                case, k + 1, stops, "SIGTERM" if sig == "term" else "SIGKILL", victim, topic,
                p, ", controller" if controller else "", prod.n_acked()))
            if bounce:
                cl.start_node(victim)
                cl.wait_full_isr(topic, partitions, timeout=90)
            else:
                down = victim
        if down is not None:
            cl.start_node(down)
        before = prod.n_acked()
        prod.wait_acked(before + per_phase, timeout=90 + per_phase / rate * 3)
    finally:
        prod.stop()
    return finish_check(cl, topic, partitions, prod, tail,
                        {"case": case, "controller": controller, "failovers": failovers})


def finish_check(cl, topic, partitions, prod, tail, summary):
    """After the faults, with every node running: the tail consumer catches up, then the
    read-back, the tail consumer's view and the replicas' segment files are checked."""
    problems = list(prod.errors[:20])
    records = read_back(cl.bootstrap, topic, partitions)
    ends = {p: (v[-1][0] if v else -1) for p, v in records.items()}
    try:
        if tail is not None:
            wait_for(lambda: all((tail.seen[p][-1][0] if tail.seen[p] else -1) >= ends[p]
                                 for p in range(partitions)), 120,
                     "the tail consumer to reach the last offsets %r" % ends, 0.2)
    except ClusterError as e:
        problems.append(str(e))
    finally:
        if tail is not None:
            tail.stop()
    problems += check_acked(prod.acked, records)
    if tail is not None:
        problems += ["tail consumer: " + x for x in tail.errors[:10]]
        problems += ["tail consumer: " + x for x in check_seen(tail.seen, records)]
    if not problems:
        summary["bytes"] = cl.wait_replicas_identical(topic, partitions, timeout=90)
    summary.update(acked=prod.n_acked(), sent=prod.sent,
                   records=sum(len(v) for v in records.values()))
    if problems:
        # What the client did about the brokers' answers: its sequence errors, drains and
        # producer-epoch bumps (a bump renumbers every batch it holds as not written).
        eos = [x for x in prod.eos_lines
               if re.search(r"ERRSEQ|UNKPID|DUPSEQ|DRAIN|NEWPID|IDEMPSTATE|bump", x)]
        if eos:
            problems.append("the producer's idempotence log (librdkafka debug=eos):\n  " +
                            "\n  ".join(eos[-40:]))
        raise ClusterError("%s: %s" % (summary, "\n".join(problems)))
    return summary
