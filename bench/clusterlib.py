# SPDX-License-Identifier: Apache-2.0
"""A cluster of release-build tallyd nodes on loopback for the cluster benchmarks
(bench/cluster.py, failover.py, idle.py, catchup.py): every node is a broker and a voter,
all share one cluster.id, each in <scratch>/n<i> with its log in <scratch>/n<i>.log.

Ports come from 26100-26399 (below Linux's ephemeral range, so no client connection of
another process holds one; each is checked free before use). Topics are created with
explicit replica assignments (CreateTopics v2, sent to the controller), so that a
benchmark knows which node leads and which follow. The raw protocol is
tests/integration/kproto.py."""
import os
import signal
import socket
import struct
import subprocess
import sys
import time

import lib

sys.path.insert(0, os.path.join(lib.REPO, "tests", "integration"))
import kproto as kp  # noqa: E402

TALLYD = os.environ.get("TALLYD", os.path.join(lib.BUILD, "tallyd"))
PORT_LO, PORT_HI = 26100, 26400
NOT_CONTROLLER = 41


def _port_free(port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_ports(n):
    """n free loopback ports of this benchmark's range (random start, so that two runs
    at once rarely meet)."""
    start = PORT_LO + (os.getpid() * 7) % (PORT_HI - PORT_LO)
    out = []
    for i in range(PORT_HI - PORT_LO):
        p = PORT_LO + (start - PORT_LO + i) % (PORT_HI - PORT_LO)
        if _port_free(p):
            out.append(p)
            if len(out) == n:
                return out
    raise RuntimeError("no %d free ports in %d-%d" % (n, PORT_LO, PORT_HI - 1))


def cpu_precise(pid):
    """On-CPU seconds of every live thread of the process, from /proc/<pid>/task/*/schedstat
    (nanoseconds, where /proc/<pid>/stat counts 10 ms ticks). tallyd's threads (the event
    loop and libuv's pool) live as long as the process."""
    total = 0
    base = "/proc/%d/task" % pid
    for t in os.listdir(base):
        try:
            with open("%s/%s/schedstat" % (base, t)) as f:
                total += int(f.read().split()[0])
        except OSError:
            pass
    return total / 1e9


def create_topics_assigned(corr, name, assignment, configs=None):
    """CreateTopics v2 with explicit assignments: assignment[p] = replica list of partition
    p (the first is the preferred leader)."""
    cfg = list((configs or {}).items())
    topic = (kp.string(name) + kp.i32(-1) + kp.i16(-1) +
             kp.array(list(enumerate(assignment)),
                      lambda pr: kp.i32(pr[0]) + kp.array(pr[1], kp.i32)) +
             kp.array(cfg, lambda kv: kp.string(kv[0]) + kp.string(kv[1])))
    body = kp.array([topic], lambda t: t) + kp.i32(30000) + kp.i8(0)
    return kp.frame(kp.header(kp.CREATE_TOPICS, 2, corr) + body)


class Node:
    def __init__(self, cluster, n):
        self.cluster, self.n = cluster, n
        self.port, self.cport = cluster.ports[n]
        self.data = os.path.join(cluster.dir, "n%d" % n)
        self.logpath = os.path.join(cluster.dir, "n%d.log" % n)
        self.p = None
        self.starts = 0

    def start(self, cpus=None, nice=0):
        c = self.cluster
        voters = ",".join("%d@127.0.0.1:%d" % (i, c.ports[i][1]) for i in sorted(c.ports))
        conf = {
            "node.id": self.n,
            "cluster.id": c.cluster_id,
            "listeners": "PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d" %
                         (self.port, self.cport),
            "controller.quorum.voters": voters,
            "log.dirs": self.data,
        }
        conf.update(c.settings)
        argv = [TALLYD]
        for k, v in conf.items():
            argv += ["--set", "%s=%s" % (k, v)]
        cpus = cpus if cpus is not None else c.pins.get(self.n)
        self.log = open(self.logpath, "ab")
        pin = lib._pinner(cpus) if cpus else None

        def pre():
            if pin:
                pin()
            if nice:
                os.nice(nice)  # before exec: every thread inherits it
        self.p = subprocess.Popen(argv, cwd=c.dir, stdin=subprocess.DEVNULL, stdout=self.log,
                                  stderr=self.log, preexec_fn=pre if pin or nice else None)
        self.starts += 1

    @property
    def pid(self):
        return self.p.pid

    def alive(self):
        return self.p is not None and self.p.poll() is None

    def cpu(self):
        return cpu_precise(self.p.pid)

    def kill9(self):
        """kill -9; returns the monotonic time of the signal."""
        t = time.monotonic()
        os.kill(self.p.pid, signal.SIGKILL)
        self.p.wait(10)
        self.log.close()
        return t

    def term(self, timeout=60):
        """SIGTERM (a controlled shutdown); returns (signal time, seconds until it exited)."""
        t = time.monotonic()
        self.p.send_signal(signal.SIGTERM)
        self.p.wait(timeout)
        self.log.close()
        return t, time.monotonic() - t

    def stop(self):
        if self.alive():
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(30)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        if self.p is not None and not self.log.closed:
            self.log.close()

    def log_text(self):
        with open(self.logpath, errors="replace") as f:
            return f.read()

    def conn(self, timeout=5.0):
        return kp.Conn(self.port, timeout=timeout)


class Cluster:
    """n nodes (ids 1..n). settings: extra --set pairs for every node; pins: {node: cpus}
    when pinning is on (lib.PIN)."""

    def __init__(self, tag, n=3, settings=None, pins=None):
        self.dir = lib.scratch_dir(tag)
        self.cluster_id = "benchCluster%06d" % (os.getpid() % 1000000)
        ps = free_ports(2 * n)
        self.ports = {i: (ps[2 * (i - 1)], ps[2 * (i - 1) + 1]) for i in range(1, n + 1)}
        self.settings = dict(settings or {})
        self.pins = {k: v for k, v in (pins or {}).items() if lib.PIN}
        self.nodes = {i: Node(self, i) for i in self.ports}
        for nd in self.nodes.values():
            nd.start()
        self.wait_unfenced(sorted(self.nodes))

    @property
    def bootstrap(self):
        return ",".join("127.0.0.1:%d" % nd.port for nd in self.nodes.values())

    def live(self):
        return [nd for nd in self.nodes.values() if nd.alive()]

    def metadata(self, topics=None, via=None):
        """Metadata v7 from the first live node that answers (or `via`)."""
        last = None
        for nd in ([via] if via else self.live()):
            try:
                with nd.conn(timeout=2.0) as c:
                    return c.metadata(topics, version=7)
            except (OSError, ConnectionError, AssertionError, struct.error) as e:
                last = e
        raise RuntimeError("no node answers Metadata: %s" % last)

    def controller(self):
        return self.metadata()["controller_id"]

    def unfenced(self):
        """Ids of the brokers Metadata lists (Metadata lists unfenced brokers only)."""
        return sorted(b[0] for b in self.metadata()["brokers"])

    def wait_unfenced(self, ids, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for nd in self.nodes.values():
                if nd.p is not None and nd.p.poll() is not None and nd.n in ids:
                    raise RuntimeError("node %d exited (%d); see %s" %
                                       (nd.n, nd.p.returncode, nd.logpath))
            try:
                if all(i in self.unfenced() for i in ids) and self.controller() >= 0:
                    return
            except RuntimeError:
                pass
            time.sleep(0.1)
        raise RuntimeError("brokers %s not all unfenced after %d s" % (ids, timeout))

    def create_topic(self, name, assignment, configs=None, timeout=60):
        """Creates the topic with these replica assignments on the controller and waits
        until every partition has its preferred leader and a full ISR."""
        deadline = time.monotonic() + timeout
        while True:
            ctl = self.nodes.get(self.controller())
            try:
                with ctl.conn() as c:
                    corr = c.next_corr()
                    c.send(create_topics_assigned(corr, name, assignment, configs))
                    _, body = c.recv_response()
                err, msg = kp.parse_create_topics(body)[name]
            except (OSError, ConnectionError, AttributeError) as e:
                err, msg = -1, str(e)
            if err == 0:
                break
            if err != NOT_CONTROLLER and err != -1 or time.monotonic() > deadline:
                raise RuntimeError("CreateTopics %s: error %d %s" % (name, err, msg))
            time.sleep(0.2)
        self.wait_partitions(name, lambda p, a: p[1] == a[0] and sorted(p[3]) == sorted(a),
                             assignment, timeout)

    def partitions(self, topic, via=None):
        """{index: (error, leader, replicas, isr)}, or {} while the topic is unknown."""
        md = self.metadata([topic], via=via)
        t = md["topics"].get(topic)
        return t[2] if t and t[0] == 0 else {}

    def wait_partitions(self, topic, pred, assignment, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            parts = self.partitions(topic)
            if len(parts) == len(assignment) and all(
                    pred(parts[i], assignment[i]) for i in range(len(assignment))):
                return parts
            time.sleep(0.1)
        raise RuntimeError("%s: partitions not as expected after %d s: %s" %
                           (topic, timeout, self.partitions(topic)))

    def stop(self, keep=False):
        """Stops every node and removes the scratch directory (kept with BENCH_KEEP=1)."""
        for nd in self.nodes.values():  # all at once: none waits for a controller to go
            if nd.alive():
                nd.p.send_signal(signal.SIGTERM)
        for nd in self.nodes.values():
            nd.stop()
        if not keep and os.environ.get("BENCH_KEEP") != "1":
            import shutil
            shutil.rmtree(self.dir, ignore_errors=True)


def produce_one(port, topic, partition, value=b"x" * 100, acks=-1, timeout=5.0):
    """One Produce v3 of one record to (topic, partition) on this port; returns the error
    code (0 = acknowledged), or None when the connection failed."""
    try:
        with kp.Conn(port, timeout=timeout) as c:
            corr = c.next_corr()
            batch = kp.record_batch([(None, value)])
            c.send(kp.produce_request(corr, {topic: {partition: batch}}, acks=acks,
                                      timeout_ms=int(timeout * 1000), version=3))
            _, body = c.recv_response()
        res, _ = kp.parse_produce(body, 3)
        return res[(topic, partition)]["error"]
    except (OSError, ConnectionError, struct.error):
        return None


def latency_run(bootstrap, topic, rate, seconds, acks="all", size=1024, out=None,
                partition=None, extra=(), cpus=None, popen=False):
    """Runs build/bench/latency (a librdkafka producer at a fixed rate). Returns the parsed
    summary dict, or with popen the Popen (its summary is parse_summary(stdout))."""
    argv = [os.path.join(lib.BENCH_BIN, "latency"), "--bootstrap", bootstrap, "--topic", topic,
            "--rate", str(rate), "--seconds", str(seconds), "--acks", acks,
            "--record-size", str(size)]
    if out:
        argv += ["--out", out]
    if partition is not None:
        argv += ["--partition", str(partition)]
    for x in extra:
        argv += ["-X", x]
    if popen:
        return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                preexec_fn=lib._pinner(cpus) if cpus and lib.PIN else None)
    _, outp, _ = lib.run(argv, timeout=seconds + 120, cpus=cpus)
    return parse_summary(outp)


def parse_summary(text):
    line = text.strip().splitlines()[-1]
    return {k: float(v) for k, v in (w.split("=") for w in line.split())}


def read_reports(path):
    """[(send ms since start, latency us, error, broker)] from latency --out."""
    out = []
    with open(path) as f:
        for line in f:
            a = line.split()
            out.append((float(a[0]), int(a[1]), int(a[2]), int(a[3])))
    return out


def quantile(values, q):
    if not values:
        return None
    v = sorted(values)
    return v[min(len(v) - 1, int(q * (len(v) - 1) + 0.5))]
