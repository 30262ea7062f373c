# SPDX-License-Identifier: Apache-2.0
"""Starts and stops real tallyd processes for the integration and compat tests.

A TallyBroker owns one process, its two loopback ports (PLAINTEXT and CONTROLLER)
and its directory; it can stop (SIGTERM), kill -9 and restart on the same data.
Every clean stop checks the exit code and that the sanitizers stayed silent.
"""
import os
import re
import signal
import socket
import subprocess
import time

import kproto

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
READY_TIMEOUT = 20.0
STOP_TIMEOUT = 20.0
SANITIZER_MARKS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:")


def _path_from_env(var, default):
    p = os.environ.get(var, default)
    return p if os.path.isabs(p) else os.path.join(REPO, p)


TALLYD = _path_from_env("TALLYD", "build/asan/tallyd")
TALLY = _path_from_env("TALLY", "build/tally")


def _port_block():
    """This process's own block of ports, below the kernel's ephemeral range: a port the
    kernel hands out (bind to 0, a client's local port) may be taken by another process
    between the pick and the broker's bind (CI saw a cluster node fail with "address already
    in use" under two pytest workers); a port from this block is picked by no one else.
    pytest-xdist workers (gw0, gw1, ...) split the block range between them."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            eph_lo = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        eph_lo = 32768
    hi = min(eph_lo, 32768)
    lo = max(1024, hi - 12000)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    n = int(worker[2:]) if worker[2:].isdigit() else 0
    count = max(1, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))
    size = (hi - lo) // count
    return lo + (n % count) * size, size


_port_next = [os.getpid()]


def free_port():
    """A port free now on 127.0.0.1, from this process's block, each in turn (a broker
    started later binds it)."""
    start, size = _port_block()
    for _ in range(size):
        p = start + _port_next[0] % size
        _port_next[0] += 1
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", p))
            except OSError:
                continue
            return p
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class TallyBroker:
    def __init__(self, workdir, node_id=1, settings=None, config_file=None):
        self.workdir = str(workdir)
        os.makedirs(self.workdir, exist_ok=True)
        self.node_id = node_id
        self.port = free_port()
        self.controller_port = free_port()
        while self.controller_port == self.port:
            self.controller_port = free_port()
        self.data_dir = os.path.join(self.workdir, "data")
        self.settings = dict(settings or {})
        self.config_file = config_file
        self.proc = None
        self.starts = 0
        self.log_paths = []
        self.tallyd = TALLYD
        # The address it listens on, and what runs it (netns.Net.wrap puts it in a network
        # namespace): loopback and the binary itself unless a cluster says otherwise.
        self.host = "127.0.0.1"
        self.wrap = None
        self.env = {}  # added to the environment of each start (e.g. TALLY_TEST_FAULT)

    @property
    def bootstrap(self):
        return "%s:%d" % (self.host, self.port)

    def argv(self):
        args = [self.tallyd]
        if self.config_file:
            args += ["--config", self.config_file]
        base = {
            "node.id": str(self.node_id),
            "listeners": "PLAINTEXT://%s:%d,CONTROLLER://%s:%d" %
                         (self.host, self.port, self.host, self.controller_port),
            "controller.quorum.voters": "%d@%s:%d" % (self.node_id, self.host,
                                                      self.controller_port),
            "log.dirs": self.data_dir,
        }
        if not self.host.startswith("127."):
            # The raft transport off loopback (network-namespace tests) must be allowed.
            base["controller.listener.insecure.ok"] = "true"
        base.update(self.settings)
        for k, v in base.items():
            args += ["--set", "%s=%s" % (k, v)]
        return args

    # ------------------------------------------------------------ lifecycle

    def start(self, wait=True):
        assert self.proc is None or self.proc.poll() is not None, "already running"
        if not os.path.exists(self.tallyd):
            raise RuntimeError("%s not built (make build/asan/tallyd, or set TALLYD)" %
                               self.tallyd)
        self.starts += 1
        log = os.path.join(self.workdir, "tallyd.%d.stderr" % self.starts)
        self.log_paths.append(log)
        env = dict(os.environ)
        env["ASAN_OPTIONS"] = "abort_on_error=0:detect_leaks=1"
        env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1")
        env.update(self.env)
        with open(log, "wb") as errf:
            argv = self.argv()
            self.proc = subprocess.Popen(self.wrap(argv) if self.wrap else argv, cwd=self.workdir,
                                         env=env, stdin=subprocess.DEVNULL, stdout=errf,
                                         stderr=errf)
        if wait:
            self.wait_ready()
        return self

    def wait_ready(self, timeout=READY_TIMEOUT):
        """Waits until ApiVersions answers and Metadata shows this broker and a
        controller (so the one-node quorum has elected itself)."""
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("tallyd exited with %d during startup:\n%s" %
                                   (self.proc.returncode, self.stderr_tail()))
            try:
                with kproto.Conn(self.port, host=self.host, timeout=2.0) as c:
                    err, keys = c.api_versions(0)
                    if err == 0 and kproto.METADATA in keys:
                        md = c.metadata(version=1)
                        if md["brokers"] and md["controller_id"] >= 0:
                            return
                        last = "metadata: %r" % (md,)
            except (OSError, ConnectionError, ValueError, AssertionError) as e:
                last = repr(e)
            time.sleep(0.05)
        raise RuntimeError("tallyd not ready after %.0fs (%s):\n%s" %
                           (timeout, last, self.stderr_tail()))

    def stop(self, check=True):
        """SIGTERM and wait. With check, asserts exit code 0 and no sanitizer report."""
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("tallyd did not stop within %ds of SIGTERM:\n%s" %
                                 (STOP_TIMEOUT, self.stderr_tail()))
        if check:
            self.check_clean(rc)
        return rc

    def check_clean(self, rc):
        assert rc == 0, "tallyd exited with %r after SIGTERM:\n%s" % (rc, self.stderr_tail())
        self.check_sanitizers()

    def check_sanitizers(self):
        text = self.stderr_all()
        for mark in SANITIZER_MARKS:
            assert mark not in text, "sanitizer report in tallyd stderr:\n%s" % \
                self.stderr_tail(200)

    def kill(self):
        """kill -9, as a crash would."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def restart(self, hard=False):
        if hard:
            self.kill()
        else:
            self.stop()
        return self.start()

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    # ------------------------------------------------------------ logs

    def stderr_all(self):
        out = []
        for p in self.log_paths:
            try:
                with open(p, "rb") as f:
                    out.append(f.read().decode(errors="replace"))
            except OSError:
                pass
        return "".join(out)

    def stderr_tail(self, lines=80):
        text = self.stderr_all().splitlines()
        return "\n".join(text[-lines:])

    # ------------------------------------------------------------ clients

    def conn(self, timeout=10.0):
        return kproto.Conn(self.port, host=self.host, timeout=timeout)

    def tally(self, *args, timeout=60):
        """Runs the tally CLI against this broker; returns CompletedProcess."""
        return subprocess.run([TALLY, "-b", self.bootstrap] + list(args),
                              capture_output=True, text=True, timeout=timeout)


def dump_logs(brokers):
    for b in brokers:
        print("=" * 20, "tallyd node %d in %s" % (b.node_id, b.workdir), "=" * 20)
        print(b.stderr_tail(300))


# ================================================================ data-path helpers
# Used by the test_data_* tests: topics, ListOffsets, reading partitions back with
# confluent-kafka (assign(), no group commits) or raw Fetch, and segment files.

def create_topics(b, specs, timeout=30):
    """specs: list of (name, partitions, {config}); waits until each has a leader."""
    from confluent_kafka.admin import AdminClient, NewTopic
    admin = AdminClient({"bootstrap.servers": b.bootstrap})
    fs = admin.create_topics([NewTopic(n, p, 1, config=dict(c or {})) for n, p, c in specs],
                             operation_timeout=timeout)
    for f in fs.values():
        f.result(timeout=timeout)
    wait_leaders(b, [n for n, _p, _c in specs], timeout)


def wait_leaders(b, topics, timeout=30):
    deadline = time.monotonic() + timeout
    while True:
        with b.conn() as c:
            md = c.metadata(list(topics), version=1)
        ok = all(name in md["topics"] and md["topics"][name][0] == 0 and
                 md["topics"][name][2] and
                 all(p[0] == 0 and p[1] >= 0 for p in md["topics"][name][2].values())
                 for name in topics)
        if ok:
            return md
        if time.monotonic() > deadline:
            raise AssertionError("no leaders for %r: %r" % (topics, md))
        time.sleep(0.1)


def list_offset(b, topic, partition, ts=-1, version=1):
    """(error, timestamp, offset) of ListOffsets for one partition."""
    with b.conn() as c:
        return c.list_offsets({topic: {partition: ts}}, version=version)[(topic, partition)]


def offsets(b, topic, partitions, ts=-1):
    """{partition: offset} for ListOffsets ts (-1 latest, -2 earliest); asserts no error."""
    with b.conn() as c:
        res = c.list_offsets({topic: {p: ts for p in partitions}}, version=1)
    out = {}
    for p in partitions:
        err, _ts, off = res[(topic, p)]
        assert err == 0, "ListOffsets %s-%d ts=%d: error %d" % (topic, p, ts, err)
        out[p] = off
    return out


def consumer_conf(b, **extra):
    conf = {"bootstrap.servers": b.bootstrap, "group.id": "tally-data-tests",
            "enable.auto.commit": False, "enable.auto.offset.store": False,
            "enable.partition.eof": True, "auto.offset.reset": "error",
            "api.version.request": True}
    conf.update(extra)
    return conf


def consume_assigned(b, topic, starts, ends=None, timeout=120, conf=None):
    """Reads topic with a confluent-kafka Consumer using assign() from starts
    {partition: offset} until each partition reaches ends {partition: offset}
    (default: ListOffsets latest). Returns {partition: [Message]}; fails on any
    consumer error other than partition EOF."""
    from confluent_kafka import Consumer, KafkaError, TopicPartition
    if ends is None:
        ends = offsets(b, topic, list(starts))
    c = Consumer(consumer_conf(b, **(conf or {})))
    out = {p: [] for p in starts}
    try:
        c.assign([TopicPartition(topic, p, off) for p, off in starts.items()])
        pos = dict(starts)
        deadline = time.monotonic() + timeout
        while any(pos[p] < ends[p] for p in starts):
            if time.monotonic() > deadline:
                raise AssertionError("consumer stuck at %r, want %r" % (pos, ends))
            for m in c.consume(num_messages=2000, timeout=0.5):
                if m.error():
                    if m.error().code() == KafkaError._PARTITION_EOF:
                        continue
                    raise AssertionError("consumer error on %s [%s]: %s" %
                                         (m.topic(), m.partition(), m.error()))
                out[m.partition()].append(m)
                pos[m.partition()] = m.offset() + 1
    finally:
        c.close()
    return out


def fetch_all_raw(b, topic, partition, start=0, end=None, version=4):
    """Reads a partition with raw Fetch requests; returns the records
    (offset, timestamp, key, value, headers) in [start, end or HW)."""
    import kproto as kp
    recs = []
    off = start
    with b.conn() as c:
        while True:
            res = c.fetch({topic: {partition: off}}, version=version, max_wait_ms=0)
            d = res["partitions"][(topic, partition)]
            assert d["error"] == 0, "fetch %s-%d@%d: error %d" % (topic, partition, off,
                                                                 d["error"])
            stop = d["hw"] if end is None else end
            if off >= stop:
                return recs
            # A consumer's fetch never returns records at or past the high watermark: a
            # broker that does is wrong, so fail rather than filter them out.
            past = [r[0] for r in kp.records_of(d["records"] or b"") if r[0] >= d["hw"]]
            assert not past, "fetch %s-%d@%d served offsets %r at or past hw %d" % (
                topic, partition, off, past, d["hw"])
            got = [r for r in kp.records_of(d["records"] or b"") if r[0] >= off]
            if not got:
                raise AssertionError("fetch %s-%d@%d returned no records below hw %d" %
                                     (topic, partition, off, stop))
            recs.extend(r for r in got if r[0] < stop)
            off = got[-1][0] + 1


def partition_dir(b, topic, partition):
    return os.path.join(b.data_dir, "%s-%d" % (topic, partition))


def segment_files(b, topic, partition, ext=".log"):
    d = partition_dir(b, topic, partition)
    return sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(ext))


def metrics_text(port, timeout=30):
    """One scrape of a metrics listener's /metrics."""
    import http.client
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request("GET", "/metrics")
        return c.getresponse().read().decode()
    finally:
        c.close()


def metric_value(port, name):
    """The value of an unlabelled series in the /metrics text of a metrics listener."""
    text = metrics_text(port)
    m = re.search(r"^%s ([0-9.e+-]+)$" % re.escape(name), text, re.M)
    assert m, "no %s in the metrics" % name
    return float(m.group(1))
