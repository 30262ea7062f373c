# SPDX-License-Identifier: Apache-2.0
"""The chaos suite (issue 11): `tally verify` against Tally itself, in scenarios that start
their own brokers on loopback and inject faults while transactional copiers run.

    python3 tests/chaos/chaos.py [--list] [--seed S] [--keep] [SCENARIO ...]

With no scenario named, runs every long one (`make chaos`); `short` and `cluster-short` are
the CI runs (driven by tests/integration/test_verify.py). Each scenario prints one line: records, faults
injected, anomalies, seconds, PASS/FAIL (INCONCLUSIVE when `tally verify` exited 2: no
verdict, which fails the scenario too); the exit status is 1 when any failed.

A scenario is one entry of SCENARIOS: the cluster (brokers, settings, an optional small
tmpfs for the data), the copy (records, partitions, copiers, abort ratio) and the faults
(copier kinds, broker kinds, hook points, and whom the broker faults hit). The runner writes
DIR/<node>/cmd (the shell line that runs the broker) and DIR/<node>/pid for `tally verify
--tally-cluster DIR`, which kills, pauses and restarts brokers itself; other faults go through
--broker-fault-cmd.

The cluster-* scenarios run three brokers that are all controller voters, with RF=3 topics
and min.insync.replicas=2 (the coordinators' topics too), each broker in its own network
namespace on its own address (tests/integration/netns.py; root only), so that a broker can be
cut off: the faults cut, cut-in and cut-out (netns.py's fault command) isolate it both ways
or one way. Their broker faults take `tally verify --broker-targets` in turn: the
controller, the leaders of the __transaction_state and __consumer_offsets partitions the
copiers use, the leaders of input and output partitions, any broker.

The rep-* scenarios are the replicated cluster's process tests at length
(tests/integration/cluster.py, run_matrix: Kafka's replication_test.py matrix on three nodes,
100k records each), without tally verify; their short versions run in `make test`
(tests/integration/test_cluster_replication.py).

Binaries: TALLYD (default build/tallyd) and TALLY (default build/tally); scenarios with hook
faults run TALLYD_HOOKS (default build/asan/tallyd), since only the test build has the hooks.
"""
import argparse
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "integration"))
import harness  # noqa: E402
import netns  # noqa: E402

TALLYD = os.environ.get("TALLYD", os.path.join(REPO, "build", "tallyd"))
TALLY = os.environ.get("TALLY", os.path.join(REPO, "build", "tally"))
# The fault hooks (TALLY_TEST_FAULT) are compiled only into the test build (base/fault.h).
TALLYD_HOOKS = os.environ.get("TALLYD_HOOKS", os.path.join(REPO, "build", "asan", "tallyd"))
SANITIZER_MARKS = harness.SANITIZER_MARKS

# One node: coordinator topics with one replica, quick timeout aborts, no rebalance delay.
BASE_SETTINGS = {
    "offsets.topic.num.partitions": "5",
    "offsets.topic.replication.factor": "1",
    "group.initial.rebalance.delay.ms": "0",
    "transaction.state.log.num.partitions": "5",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "500",
}

HOOKS = "txn:before_prepare,txn:after_prepare,txn:after_markers,txn:before_complete"


# Three voters: the coordinators' topics replicated three times, two in sync at least, like
# every topic; failure detection fast enough for a test (the defaults are 2000 / 9000 /
# 30000), slow enough for a loaded 2-core machine.
CLUSTER_SETTINGS = {
    "offsets.topic.replication.factor": "3",
    "transaction.state.log.replication.factor": "3",
    "transaction.state.log.min.isr": "2",
    "min.insync.replicas": "2",
    "default.replication.factor": "3",
    "broker.heartbeat.interval.ms": "500",
    "broker.session.timeout.ms": "4000",
    "replica.lag.time.max.ms": "5000",
}

# Whom the broker faults of a cluster scenario hit, in turn (tally verify --broker-targets).
TARGETS = "controller,txn-coordinator,group-coordinator,input-leader,output-leader,any"


def scenario(records=100000, partitions=4, copiers=3, abort_ratio=0.1, copier_faults="none",
             per_kind=5, broker_faults="", interval_ms=2000, brokers=1, settings=None,
             small_fs_mb=0, txn_records=500, extra=(), description="", broker_per_kind=None,
             voters=1, net=False, targets=None):
    """voters: how many of the brokers are controller voters (the others are broker-only);
    net: each broker in its own network namespace (root only), which the cut faults need;
    broker_per_kind: how many of each broker fault (default per_kind); targets: tally verify
    --broker-targets."""
    return dict(records=records, partitions=partitions, copiers=copiers,
                abort_ratio=abort_ratio, copier_faults=copier_faults, per_kind=per_kind,
                broker_faults=broker_faults, interval_ms=interval_ms, brokers=brokers,
                settings=dict(settings or {}), small_fs_mb=small_fs_mb, txn_records=txn_records,
                extra=list(extra), description=description,
                broker_per_kind=per_kind if broker_per_kind is None else broker_per_kind,
                voters=voters, net=net, targets=targets)


def cluster_scenario(**kw):
    """Three brokers, all voters, each in its own namespace; RF 3 everywhere."""
    kw.setdefault("targets", TARGETS)
    extra = ["--replication-factor", "3"] + list(kw.pop("extra", ()))
    return scenario(brokers=3, voters=3, net=True, settings=CLUSTER_SETTINGS, extra=extra, **kw)


def replication(case, stops, controller=False, records=100000, rate=4000, description=""):
    """A scenario of the replicated cluster's process tests at length (cluster.run_matrix):
    Kafka's replication_test.py case on three nodes, `records` acknowledged records over the
    faults, no tally verify."""
    return dict(kind="replication", case=case, stops=stops, controller=controller,
                records=records, rate=rate, brokers=3, broker_faults="",
                description=description)


SCENARIOS = {
    # CI (make test): 20,000 records, 5 faults of each copier kind, 2 broker kill -9s.
    "short": scenario(records=20000, partitions=3, copier_faults="kill,pause,fence",
                      per_kind=5, broker_faults="kill", interval_ms=2000,
                      description="CI: copier kills, pauses and zombies, two broker kill -9"),
    "copiers": scenario(copier_faults="kill,pause,fence", per_kind=8,
                        description="copier kill -9, SIGSTOP past the session timeout, "
                                    "same-id zombies"),
    "broker-kill": scenario(copier_faults="kill", per_kind=10, broker_faults="kill,hook",
                            interval_ms=4000, extra=["--hook-points", HOOKS],
                            description="broker kill -9 at random points and at each stage "
                                        "of EndTxn (TALLY_TEST_FAULT: before/after Prepare, "
                                        "after the markers, before Complete)"),
    "broker-pause": scenario(copier_faults="pause", per_kind=20, broker_faults="pause",
                             interval_ms=4000,
                             extra=["--request-timeout-ms", "5000", "--broker-pause-ms", "8000"],
                             description="broker SIGSTOP longer than the clients' request "
                                         "timeout"),
    "full-disk": scenario(copier_faults="kill", per_kind=20, broker_faults="disk-full",
                          small_fs_mb=256, interval_ms=3000,
                          extra=["--broker-episode-ms", "3000"],
                          description="the data disk fills for 3 s at a time, then frees"),
    "rolling-restart": scenario(copier_faults="fence", per_kind=20, broker_faults="restart",
                                interval_ms=3000,
                                description="brokers restarted one at a time (SIGTERM, start)"),
    # The replicated cluster (issue 16): three nodes, a topic of 3 partitions, RF=3, min ISR 2,
    # an idempotent acks=all producer and a tail consumer; every acknowledged record once and
    # in order, what the consumer saw still there, the replicas' segment files identical.
    "rep-clean-shutdown": replication("clean_shutdown", 1,
                                      description="SIGTERM of a partition leader"),
    "rep-hard-shutdown": replication("hard_shutdown", 1,
                                     description="kill -9 of a partition leader"),
    "rep-clean-bounce": replication("clean_bounce", 5,
                                    description="a partition leader SIGTERM'd and restarted, 5 "
                                                "times"),
    "rep-hard-bounce": replication("hard_bounce", 5,
                                   description="a partition leader kill -9'd and restarted, 5 "
                                               "times"),
    "rep-controller-bounce": replication("hard_bounce", 5, controller=True,
                                         description="the node that is both the controller "
                                                     "and a partition leader kill -9'd and "
                                                     "restarted, 5 times"),
    # CI (make test, test_verify.py): the 3-node cluster, one fault of each broker kind.
    "cluster-short": cluster_scenario(
        records=10000, partitions=3, copier_faults="kill", per_kind=2, broker_faults="kill,pause,cut",
        broker_per_kind=2, interval_ms=5000, targets="txn-coordinator,group-coordinator,controller",
        extra=["--broker-pause-ms", "7000", "--broker-episode-ms", "6000"],
        description="CI: 3 brokers; kill -9, SIGSTOP and cut-off of the transaction and group "
                    "coordinators' leaders and the controller; copier kills"),
    "cluster-kill": cluster_scenario(
        copier_faults="kill", per_kind=10, broker_faults="kill", broker_per_kind=24,
        interval_ms=4000,
        description="3 brokers: kill -9 of the controller, the coordinators' leaders, "
                    "partition leaders, any broker, in turn; copier kills"),
    "cluster-pause": cluster_scenario(
        copier_faults="pause", per_kind=6, broker_faults="pause", broker_per_kind=24,
        interval_ms=4000, extra=["--broker-pause-ms", "8000"],
        description="3 brokers: SIGSTOP 8 s (past the session timeout: a zombie) of the "
                    "controller, the coordinators' leaders, partition leaders, in turn"),
    "cluster-cut": cluster_scenario(
        copier_faults="fence", per_kind=6, broker_faults="cut,cut-in,cut-out",
        broker_per_kind=8, interval_ms=4000, extra=["--broker-episode-ms", "8000"],
        description="3 brokers: cut off 8 s (both ways, only inbound, only outbound) the "
                    "controller, the coordinators' leaders, partition leaders, in turn"),
    "cluster-mixed": cluster_scenario(
        copier_faults="kill,pause,fence", per_kind=4,
        broker_faults="kill,pause,cut,cut-in,cut-out,restart", broker_per_kind=5,
        interval_ms=3000,
        extra=["--broker-pause-ms", "7000", "--broker-episode-ms", "6000",
               "--broker-settle-ms", "0"],
        description="3 brokers: every broker fault kind, one after another without waiting "
                    "for the cluster to recover, and every copier fault"),
    "cluster-hook": cluster_scenario(
        copier_faults="kill", per_kind=6, broker_faults="kill,hook", broker_per_kind=12,
        interval_ms=4000, targets="txn-coordinator,controller,group-coordinator",
        extra=["--hook-points", HOOKS],
        description="3 brokers: the transaction coordinator (and the controller, the group "
                    "coordinator) kill -9'd, and restarted armed to stop at a stage of EndTxn "
                    "(TALLY_TEST_FAULT)"),
}


def cluster_settings(node, ports, hosts, sc, data_dir, meta_dir):
    s = dict(BASE_SETTINGS)
    s.update(sc["settings"])
    port, cport = ports[node]
    h = hosts[node]
    voters = range(1, sc["voters"] + 1)
    s["node.id"] = str(node)
    s["listeners"] = "PLAINTEXT://%s:%d,CONTROLLER://%s:%d" % (h, port, h, cport)
    if not h.startswith("127."):
        s["controller.listener.insecure.ok"] = "true"  # raft off loopback
    s["controller.quorum.voters"] = ",".join("%d@%s:%d" % (v, hosts[v], ports[v][1])
                                             for v in voters)
    if sc["voters"] > 1 or node not in voters:
        s["cluster.id"] = "tally-chaos"
    if node not in voters:
        s["process.roles"] = "broker"
        s["controller.bootstrap.servers"] = ",".join("%s:%d" % (hosts[v], ports[v][0])
                                                     for v in voters)
    s["log.dirs"] = data_dir
    if meta_dir:
        s["metadata.log.dir"] = meta_dir
    return s


def wait_ready(port, proc_pid, timeout=30, host="127.0.0.1"):
    import kproto
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with kproto.Conn(port, host=host, timeout=2.0) as c:
                err, _keys = c.api_versions(0)
                if err == 0:
                    md = c.metadata(version=1)
                    if md["brokers"] and md["controller_id"] >= 0:
                        return
        except (OSError, ConnectionError, ValueError, AssertionError):
            pass
        time.sleep(0.1)
    raise RuntimeError("broker on port %d (pid %d) not ready" % (port, proc_pid))


class Cluster:
    """N brokers started through DIR/<node>/cmd, as `tally verify --tally-cluster` restarts
    them."""

    def __init__(self, workdir, sc):
        self.dir = os.path.join(workdir, "cluster")
        self.sc = sc
        self.mount = None
        self.net = None
        self.nodes = list(range(1, sc["brokers"] + 1))
        self.hosts = {n: "127.0.0.1" for n in self.nodes}
        if sc["net"]:
            why = netns.unavailable()
            if why:
                raise RuntimeError("this scenario runs its brokers in network namespaces: " +
                                   why)
            self.net = netns.Net(self.nodes)
            self.hosts = {n: self.net.addr(n) for n in self.nodes}
            self.net_state = os.path.join(workdir, "net.json")
            self.net.save(self.net_state)
        self.ports = {}
        used = set()
        for n in self.nodes:
            pair = []
            while len(pair) < 2:
                p = harness.free_port()
                if p not in used:
                    used.add(p)
                    pair.append(p)
            self.ports[n] = tuple(pair)
        if sc["small_fs_mb"]:
            self.mount = os.path.join(workdir, "disk")
            os.makedirs(self.mount, exist_ok=True)
            r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%dm" % sc["small_fs_mb"],
                                "tmpfs", self.mount], capture_output=True, text=True)
            if r.returncode != 0:
                self.mount = None
                raise RuntimeError("cannot mount a tmpfs (needs root): " + r.stderr.strip())

    def node_dir(self, n):
        return os.path.join(self.dir, str(n))

    def start(self):
        for n in self.nodes:
            d = self.node_dir(n)
            os.makedirs(d, exist_ok=True)
            data = os.path.join(self.mount or d, "data-%d" % n)
            meta = os.path.join(d, "meta") if self.mount else None
            args = [TALLYD_HOOKS if "hook" in self.sc["broker_faults"] else TALLYD]
            for k, v in cluster_settings(n, self.ports, self.hosts, self.sc, data,
                                         meta).items():
                args += ["--set", "%s=%s" % (k, v)]
            if self.net:
                args = self.net.wrap(n, args)
            log = os.path.join(d, "tallyd.log")
            cmd = "cd %s && exec %s >>%s 2>&1" % (shlex.quote(d), shlex.join(args),
                                                  shlex.quote(log))
            with open(os.path.join(d, "cmd"), "w") as f:
                f.write(cmd + "\n")
            env = dict(os.environ)
            env["ASAN_OPTIONS"] = "abort_on_error=0:detect_leaks=0"
            env.pop("TALLY_TEST_FAULT", None)
            p = subprocess.Popen(["sh", "-c", cmd], env=env, start_new_session=True)
            with open(os.path.join(d, "pid"), "w") as f:
                f.write("%d\n" % p.pid)
            self._popen = getattr(self, "_popen", []) + [p]
        for n in self.nodes:
            wait_ready(self.ports[n][0], self.pid(n), timeout=60, host=self.hosts[n])

    @property
    def bootstrap(self):
        return ",".join("%s:%d" % (self.hosts[n], self.ports[n][0]) for n in self.nodes)

    def fault_cmd(self):
        """tally verify's --broker-fault-cmd for this scenario's non-built-in faults."""
        if self.sc["small_fs_mb"]:
            return "sh %s %s" % (shlex.quote(os.path.join(HERE, "disk_fault.sh")),
                                 shlex.quote(self.mount))
        if self.net:
            return "%s %s fault %s" % (shlex.quote(sys.executable), shlex.quote(
                os.path.join(REPO, "tests", "integration", "netns.py")),
                shlex.quote(self.net_state))
        return None

    def pid(self, n):
        try:
            with open(os.path.join(self.node_dir(n), "pid")) as f:
                return int(f.read().strip())
        except (OSError, ValueError):
            return 0

    def stop(self):
        """SIGCONT + SIGTERM every broker (whoever started it last), then SIGKILL."""
        for n in self.nodes:
            pid = self.pid(n)
            if pid > 0:
                for sig in (signal.SIGCONT, signal.SIGTERM):
                    try:
                        os.kill(pid, sig)
                    except ProcessLookupError:
                        pass
        deadline = time.monotonic() + 30
        for n in self.nodes:
            pid = self.pid(n)
            while pid > 0 and time.monotonic() < deadline and alive(pid):
                time.sleep(0.1)
            if pid > 0 and alive(pid):
                os.kill(pid, signal.SIGKILL)
        for p in getattr(self, "_popen", []):
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                pass
        if self.mount:
            subprocess.run(["umount", "-l", self.mount], capture_output=True)
            self.mount = None
        if self.net:
            self.net.close()
            self.net = None

    def sanitizer_reports(self):
        out = []
        for n in self.nodes:
            try:
                with open(os.path.join(self.node_dir(n), "tallyd.log"), errors="replace") as f:
                    text = f.read()
            except OSError:
                continue
            if any(m in text for m in SANITIZER_MARKS):
                out.append("node %d: %s" % (n, os.path.join(self.node_dir(n), "tallyd.log")))
        return out


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            st = f.read()
        return st[st.rindex(")") + 2] not in "ZX"
    except (OSError, ValueError, IndexError):
        return False


def run_replication(name, workdir, quiet=False):
    """A replication scenario: a fresh three-node cluster (tests/integration/cluster.py) on
    TALLYD and cluster.run_matrix. Same result dict as run_scenario; anomalies is the number
    of problems the checks found (the nodes' logs go to workdir/cluster.log on a failure)."""
    import cluster as clu
    sc = SCENARIOS[name]
    os.makedirs(workdir, exist_ok=True)
    c = clu.Cluster(os.path.join(workdir, "cluster"), 3, tallyd=TALLYD)
    t0 = time.monotonic()
    res = dict(name=name, ok=False, records=0, faults={}, anomalies=None)
    try:
        c.start()
        per_phase = sc["records"] // (sc["stops"] + 2)
        s = clu.run_matrix(c, sc["case"], "chaos-%s" % sc["case"], stops=sc["stops"],
                           controller=sc["controller"], rate=sc["rate"], per_phase=per_phase,
                           log=(lambda *_a: None) if quiet else print)
        res.update(ok=True, anomalies=0, records=s["acked"], summary=s)
        res["faults"]["SIGTERM" if clu.MATRIX[sc["case"]][0] == "term" else "SIGKILL"] = \
            len(s["failovers"])
    except (clu.ClusterError, RuntimeError) as e:
        res["output"] = str(e)
        res["anomalies"] = len(str(e).splitlines())
        import contextlib
        import io
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            c.dump_logs(2000)
        with open(os.path.join(workdir, "cluster.log"), "w") as f:
            f.write(buf.getvalue())
    finally:
        problems = c.shutdown()
        res["sanitizer"] = problems
        if problems:
            res["ok"] = False
        res["seconds"] = time.monotonic() - t0
    if not quiet:
        print("chaos: %-16s %7d records, %3d faults (%s), %s anomalies, %4.0f s  %s" % (
            name, res["records"], sum(res["faults"].values()),
            ", ".join("%s %d" % kv for kv in sorted(res["faults"].items())),
            res["anomalies"], res["seconds"], "PASS" if res["ok"] else "FAIL"), flush=True)
        if not res["ok"]:
            print(res.get("output", ""))
            for p in res["sanitizer"]:
                print(p)
    return res


def run_scenario(name, workdir, seed=1, quiet=False, max_seconds=None):
    """Runs one scenario in workdir; returns a dict: name, ok, records, faults (by kind),
    anomalies, seconds, report (tally verify's JSON), output (its stdout+stderr)."""
    sc = SCENARIOS[name]
    if sc.get("kind") == "replication":
        return run_replication(name, workdir, quiet)
    os.makedirs(workdir, exist_ok=True)
    t0 = time.monotonic()
    res = dict(name=name, ok=False, records=sc["records"], faults={}, anomalies=None)
    cluster = Cluster(workdir, sc)
    try:
        cluster.start()
        jpath = os.path.join(workdir, "report.json")
        argv = [TALLY, "-b", cluster.bootstrap, "verify",
                "--partitions", str(sc["partitions"]), "--records", str(sc["records"]),
                "--copiers", str(sc["copiers"]), "--abort-ratio", str(sc["abort_ratio"]),
                "--faults", sc["copier_faults"], "--faults-per-kind", str(sc["per_kind"]),
                "--broker-faults-per-kind", str(sc["broker_per_kind"]),
                "--fault-interval-ms", str(sc["interval_ms"]),
                "--txn-records", str(sc["txn_records"]), "--seed", str(seed),
                "--tally-cluster", cluster.dir, "--work-dir", os.path.join(workdir, "verify"),
                "--json", jpath]
        if max_seconds:
            argv += ["--max-seconds", str(max_seconds)]
        if sc["broker_faults"]:
            argv += ["--broker-faults", sc["broker_faults"]]
        if sc["targets"]:
            argv += ["--broker-targets", sc["targets"]]
        if cluster.fault_cmd():
            argv += ["--broker-fault-cmd", cluster.fault_cmd()]
        argv += sc["extra"]
        with open(os.path.join(workdir, "verify.log"), "w") as logf:
            p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=logf, text=True)
        res["output"] = p.stdout
        res["rc"] = p.returncode
        if os.path.exists(jpath):
            with open(jpath) as f:
                rep = json.load(f)
            res["report"] = rep
            res["anomalies"] = rep["report"]["anomalies"]
            for ft in rep["faults"]:
                res["faults"][ft["kind"]] = res["faults"].get(ft["kind"], 0) + 1
        res["ok"] = p.returncode == 0 and res["anomalies"] == 0
    finally:
        cluster.stop()
        res["sanitizer"] = cluster.sanitizer_reports()
        if res["sanitizer"]:
            res["ok"] = False
        res["seconds"] = time.monotonic() - t0
    if not quiet:
        print("chaos: %-16s %7d records, %3d faults (%s), %s anomalies, %4.0f s  %s" % (
            name, res["records"], sum(res["faults"].values()),
            ", ".join("%s %d" % kv for kv in sorted(res["faults"].items())),
            res["anomalies"], res["seconds"],
            "PASS" if res["ok"] else "INCONCLUSIVE" if res.get("rc") == 2 else "FAIL"),
            flush=True)
        if not res["ok"]:
            print(res.get("output", ""))
            for s in res["sanitizer"]:
                print("sanitizer report in", s)
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scenarios", nargs="*")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", action="store_true", help="keep the work directories")
    a = ap.parse_args()
    if a.list:
        for n, sc in SCENARIOS.items():
            print("%-22s %s" % (n, sc["description"]))
        return 0
    names = a.scenarios or [n for n in SCENARIOS if not n.endswith("short")]
    for n in names:
        if n not in SCENARIOS:
            print("chaos: unknown scenario %r (see --list)" % n)
            return 2
    binaries = [TALLYD, TALLY]
    if any("hook" in SCENARIOS[n]["broker_faults"] for n in names):
        binaries.append(TALLYD_HOOKS)
    for b in binaries:
        if not os.path.exists(b):
            print("chaos: %s missing (make all build/asan/tallyd)" % b)
            return 2
    failed = 0
    for n in names:
        wd = tempfile.mkdtemp(prefix="tally-chaos-%s-" % n)
        res = run_scenario(n, wd, seed=a.seed)
        failed += not res["ok"]
        if res["ok"] and not a.keep:
            shutil.rmtree(wd, ignore_errors=True)
        else:
            print("chaos: %s kept in %s" % (n, wd))
    print("chaos: %d scenarios, %d failed" % (len(names), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
