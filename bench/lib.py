# SPDX-License-Identifier: Apache-2.0
"""Shared helpers of the benchmarks: start tallyd (release build) and the baseline
servers on free loopback ports in a scratch directory, read a process's CPU time and
resident memory from /proc, run the helper programs and report results.

Every benchmark prints one line per figure:
    RESULT <name> <value> <unit> target <op> <target> <met|NOT met|skipped> [note]
and appends it to $BENCH_RESULTS when set (bench/run.sh collects them).
"""
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BUILD = os.path.join(REPO, "build")
BENCH_BIN = os.path.join(BUILD, "bench")
TALLY = os.environ.get("TALLY", os.path.join(BUILD, "tally"))
GIB = float(1 << 30)
CLK_TCK = os.sysconf("SC_CLK_TCK")

# The CPU-efficiency benchmarks pin the server under test to one CPU and the load
# generator to the others, so that the two do not trade caches and time slices
# differently from one run to the next (BENCH_PIN=0 turns this off).
_CPUS = sorted(os.sched_getaffinity(0))
PIN = os.environ.get("BENCH_PIN", "1") != "0" and len(_CPUS) >= 2
SERVER_CPUS = {_CPUS[0]}
CLIENT_CPUS = set(_CPUS[1:])


def _pinner(cpus):
    if not PIN:
        return None
    return lambda: os.sched_setaffinity(0, cpus)


def log(msg):
    print("  " + msg, file=sys.stderr, flush=True)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scratch_dir(tag):
    """A fresh directory under build/bench (the same filesystem for every server)."""
    os.makedirs(BENCH_BIN, exist_ok=True)
    return tempfile.mkdtemp(prefix="run-%s-" % tag, dir=BENCH_BIN)


def bucket_quantile(before, after, q):
    """The upper bound of the histogram bucket holding quantile q of the observations made
    between two Tallyd.buckets snapshots (inf past the last bound; None if none)."""
    les = sorted(after)
    n = after[les[-1]] - before.get(les[-1], 0) if les else 0
    if n <= 0:
        return None
    for le in les:
        if after[le] - before.get(le, 0) >= q * n:
            return le
    return float("inf")


def cpu_seconds(pid):
    """utime + stime of the whole process (all threads), in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def minflt(pid):
    """Minor page faults of the whole process so far (/proc/<pid>/stat field 10)."""
    with open("/proc/%d/stat" % pid) as f:
        return int(f.read().rsplit(")", 1)[1].split()[7])


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS for pid %d" % pid)


def settle(warm=0):
    """Writes back all dirty pages before a measured run, so that no run pays for the
    writeback (or the dirty-page throttling) of the one before it. With `warm` (bytes),
    then also backs that much of the guest's free memory (warm_memory), for a run that
    fills about as much page cache."""
    os.sync()
    time.sleep(0.3)
    if warm:
        warm_memory(warm)


def parse_size(text):
    """Bytes in "2g", "512m", "64k" or "1048576" (loadgen's --bytes notation)."""
    text = str(text).strip().lower()
    scale = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}.get(text[-1:], 1)
    return int(float(text[:-1] if scale > 1 else text) * scale)


def warm_memory(nbytes):
    """Touches `nbytes` of fresh anonymous memory and frees it again at once. On this kind
    of VM (virtio_balloon free page reporting) the host takes back guest memory that stays
    free, and the first touch of such a page costs the toucher about 0.5 CPU-s per GiB (a
    host fault per page) — more than a server's whole ingest. A server whose run starts
    within a second or two of the last run's exit reuses pages the host still backs; one
    that takes longer to start does not, and a CPU ratio then measured the start-up times.
    Touched just before each run, the pages the run's page cache lands on are backed for
    either server alike, as on bare metal. Returns the seconds the touch took."""
    import ctypes
    import mmap
    m = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    buf = (ctypes.c_char * nbytes).from_buffer(m)
    t0 = time.monotonic()
    ctypes.memset(ctypes.addressof(buf), 1, nbytes)
    took = time.monotonic() - t0
    del buf
    m.close()
    return took


def run(argv, check=True, timeout=600, cpus=None):
    """Runs argv (on cpus when given and pinning is on); returns (rc, stdout, stderr).
    With check, a non-zero exit raises."""
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=timeout, preexec_fn=_pinner(cpus) if cpus else None)
    if check and p.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(argv), p.returncode,
                                                   p.stderr.strip().splitlines()[-1:]))
    return p.returncode, p.stdout, p.stderr


def kv_line(out):
    """Parses loadgen's "bytes=N seconds=S MiB/s=X" line."""
    return {k: float(v) for k, v in (w.split("=") for w in out.split())}


def loadgen(*args):
    _, out, _ = run([os.path.join(BENCH_BIN, "loadgen")] + [str(a) for a in args],
                    cpus=CLIENT_CPUS)
    return kv_line(out.strip().splitlines()[-1])


class Proc:
    """A helper server process that prints one line when it is ready."""

    def __init__(self, argv, cwd=None, pin=False, prefix=()):
        self.p = subprocess.Popen(list(prefix) + argv, cwd=cwd, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True,
                                  preexec_fn=_pinner(SERVER_CPUS) if pin else None)
        self.ready_line = self.p.stdout.readline().strip()
        if not self.ready_line:
            raise RuntimeError("%s did not start" % argv[0])
        self.pid = self.p.pid

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(10)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()


class Tallyd:
    """One release-build tallyd in its own scratch directory on free ports; with pin,
    on SERVER_CPUS. extra_listeners ("SSL://127.0.0.1:port,...") go beside PLAINTEXT."""

    def __init__(self, tag, settings=None, pin=False, extra_listeners="", prefix=(),
                 ready_timeout=30, metrics=True):
        """extra_listeners: more listeners after the PLAINTEXT one, e.g.
        "SASL_PLAINTEXT://127.0.0.1:9094"."""
        self.dir = scratch_dir(tag)
        self.data = os.path.join(self.dir, "data")
        self.port = free_port()
        cport = free_port()
        while cport == self.port:
            cport = free_port()
        binary = os.environ.get("TALLYD", os.path.join(BUILD, "tallyd"))
        conf = {
            "node.id": "1",
            "listeners": "PLAINTEXT://127.0.0.1:%d,%sCONTROLLER://127.0.0.1:%d" % (
                self.port, extra_listeners + "," if extra_listeners else "", cport),
            "controller.quorum.voters": "1@127.0.0.1:%d" % cport,
            "log.dirs": self.data,
        }
        # The metrics endpoint, for the loop-lag maximum every benchmark reports
        # (loop_lag_max_ms).
        # metrics=False: no metrics listener at all (what a benchmark of its cost compares
        # against); loop_lag_max_ms then says -1.
        self.metrics_port = free_port() if metrics else None
        if metrics:
            conf["metrics.listener"] = "127.0.0.1:%d" % self.metrics_port
        conf.update(settings or {})
        if conf.get("metrics.listener"):
            self.metrics_port = int(conf["metrics.listener"].rsplit(":", 1)[1])
        argv = list(prefix) + [binary]  # prefix: a wrapper such as valgrind
        for k, v in conf.items():
            argv += ["--set", "%s=%s" % (k, v)]
        self.errf = open(os.path.join(self.dir, "tallyd.stderr"), "wb")
        self.p = subprocess.Popen(argv, cwd=self.dir, stdin=subprocess.DEVNULL,
                                  stdout=self.errf, stderr=self.errf,
                                  preexec_fn=_pinner(SERVER_CPUS) if pin else None)
        self.pid = self.p.pid
        self.bootstrap = "127.0.0.1:%d" % self.port
        deadline = time.monotonic() + ready_timeout
        while True:
            if self.p.poll() is not None:
                raise RuntimeError("tallyd exited with %d; see %s" % (self.p.returncode,
                                                                     self.errf.name))
            rc, _, _ = run(self.tally("--timeout", "2000", "cluster", "describe"), check=False)
            if rc == 0:
                break
            if time.monotonic() > deadline:
                raise RuntimeError("tallyd not ready after %d s" % ready_timeout)
            time.sleep(0.2)

    def tally(self, *args):
        return [TALLY, "-b", self.bootstrap] + [str(a) for a in args]

    def metrics_text(self):
        """The broker's /metrics page (docs/metrics.md), or None if it cannot be read."""
        import urllib.request
        if self.metrics_port is None:
            return None
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % self.metrics_port,
                                        timeout=30) as r:
                return r.read().decode()
        except OSError:
            return None

    def metric(self, name):
        """One unlabelled series of the broker's /metrics, or None."""
        import re
        text = self.metrics_text()
        m = re.search(r"^%s ([0-9.e+-]+)$" % re.escape(name), text, re.M) if text else None
        return float(m.group(1)) if m else None

    def buckets(self, name, labels):
        """The cumulative bucket counts {le: count} of one labelled histogram of /metrics,
        e.g. buckets("tally_request_total_seconds", 'api="Produce"'); {} if unreadable."""
        import re
        pat = r'^%s_bucket\{%s,le="([^"]+)"\} ([0-9.e+-]+)$' % (re.escape(name),
                                                                 re.escape(labels))
        return {float(le): float(v) for le, v in re.findall(pat, self.metrics_text() or "",
                                                            re.M)}

    def loop_lag_max_ms(self):
        """The longest the broker's event loop was held since its start, in ms (-1 if the
        endpoint cannot tell)."""
        v = self.metric("tally_event_loop_lag_max_seconds")
        return -1.0 if v is None else v * 1e3

    def create_topic(self, name, partitions, configs=None):
        args = ["topics", "create", name, "--partitions", partitions]
        for k, v in (configs or {}).items():
            args += ["--config", "%s=%s" % (k, v)]
        run(self.tally(*args))

    def produce_fresh(self, records, extra=(), configs=None):
        """perf_produce into a new 4-partition topic that is deleted afterwards. Once a
        few GiB are dirty the kernel holds a writer to the disk's write bandwidth;
        deleting the topic drops its pages before they reach the disk, so every run
        meets the same page cache."""
        self.fresh = getattr(self, "fresh", 0) + 1
        topic = "fresh-%d" % self.fresh
        self.create_topic(topic, 4, configs)
        try:
            return perf_produce(self.bootstrap, topic, records, extra=extra)
        finally:
            run(self.tally("topics", "delete", topic), check=False)
            time.sleep(1)

    def warm_up(self, records, extra=()):
        """One unmeasured produce_fresh. On this VM a broker's first run of this size (and
        often the first after other work) costs it 2-3x the CPU of the next, as its page
        cache lands on memory the host must back again (warm_memory): 2.26 CPU-s against
        0.79-0.92 for the five after it, whichever mode went first. The benchmarks that
        alternate two modes start each with the same one, which would always meet it."""
        rc, _rate, line = self.produce_fresh(records, extra=extra)
        if rc != 0:
            raise RuntimeError("warm-up run failed: %s" % line)

    def wait_open(self, topic, partitions, timeout=60):
        """Waits until this broker has opened every partition of `topic` (its first segment
        is on disk). A created topic's partitions are opened by the broker's event loop when
        it is next idle, after CreateTopics has been answered; a count that starts before
        then counts the opening too."""
        deadline = time.monotonic() + timeout
        while not all(os.path.isdir(os.path.join(self.data, "%s-%d" % (topic, p))) and
                      self.partition_logs(topic, p) for p in range(partitions)):
            if time.monotonic() > deadline:
                raise RuntimeError("%s: partitions not open after %d s" % (topic, timeout))
            time.sleep(0.05)

    def partition_logs(self, topic, partition):
        d = os.path.join(self.data, "%s-%d" % (topic, partition))
        return sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".log"))

    def stop(self, keep=False):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(30)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self.errf.close()
        if not keep:
            shutil.rmtree(self.dir, ignore_errors=True)


def perf_produce(bootstrap, topic, records, size=1024, extra=()):
    """Runs `tally perf produce`; returns (rc, records/s or None, the summary line or
    the last stderr line)."""
    rc, out, err = run([TALLY, "-b", bootstrap, "perf", "produce", "--topic", topic,
                        "--records", str(records), "--record-size", str(size)] + list(extra),
                       check=False)
    if rc != 0:
        lines = err.strip().splitlines()
        return rc, None, lines[-1] if lines else "exit %d" % rc
    # "N records sent, X records/sec (Y MB/sec), ..."
    rate = float(out.split(",")[1].split()[0])
    return 0, rate, out.strip()


def result(name, value, unit, op, target, note=""):
    """Prints and records one figure. op is "<=", ">=" or "<", or None for a figure
    recorded without a target ("info"); value None = skipped."""
    if value is None:
        status = "skipped"
        shown = "-"
    elif op is None:
        status = "info"
        shown = "%.3f" % value
    else:
        met = {"<=": value <= target, ">=": value >= target, "<": value < target}[op]
        status = "met" if met else "NOT met"
        shown = "%.3f" % value
    line = "RESULT %-22s %8s %-10s target %s %s  %s%s" % (
        name, shown, unit, op or "-", "-" if op is None else target, status, ("  " + note) if note else "")
    print(line, flush=True)
    path = os.environ.get("BENCH_RESULTS")
    if path:
        with open(path, "a") as f:
            f.write(line + "\n")
