# SPDX-License-Identifier: Apache-2.0
"""A test network of Linux network namespaces, for the partition tests of the replicated
cluster (tests/integration/test_netns_partition.py) and the network faults of `make chaos`
(tests/chaos/chaos.py). Root only.

    hub namespace:  bridge br0 ──┬── veth ── namespace of host 1 (eth0 198.18.K.1/24)
                                 ├── veth ── namespace of host 2 (eth0 198.18.K.2/24)
                                 ├── ...
                                 └── veth ── the root namespace  (198.18.K.254/24: the
                                             test itself, its admin connections)

Addresses come from 198.18.0.0/15, the range set aside for network tests (RFC 2544), one
/24 per network that no other route of the machine uses; nothing outside these namespaces
is ever addressed. Each host runs its broker (and the clients of "its side") with
`ip netns exec` (Net.wrap).

Cuts are nft drop rules inside a host's namespace, in one table (inet tallycut) that heal()
empties:
  cut(a, b)          both ways between hosts a and b;
  cut_oneway(a, b)   what a sends to b is dropped, b's packets still reach a;
  isolate(h)         h from every other host and from the root namespace, both ways
                     (clients=False keeps the root namespace's path, so that the test can
                     still ask h what it believes);
  split(A, B)        every host of group A from every host of group B, both ways;
  link_down(h)       h's veth down: the cable pulled (no rule, no path at all).
Teardown (close(), also at interpreter exit) kills whatever still runs in the namespaces and
deletes them, which takes their veths and nft tables with them, and the root namespace's
veth; namespaces left behind by a test process that died (their names carry its pid) are
removed, with what runs in them, by the next Net.

Nothing here depends on pytest. As a command, `python3 netns.py fault STATE NAME PHASE
NODE` is the --broker-fault-cmd of `tally verify` for the chaos scenarios (STATE: the JSON
Net.save wrote): NAME cut | cut-in | cut-out | link, PHASE start | end.
"""
import atexit
import json
import os
import re
import subprocess
import sys
import time

PREFIX = "tnet"  # namespace names: tnet<pid>x<n>-hub, tnet<pid>x<n>-h<i>
TABLE = "tallycut"


class NetError(RuntimeError):
    pass


def _run(argv, check=True, inp=None):
    r = subprocess.run(argv, capture_output=True, text=True, input=inp)
    if check and r.returncode != 0:
        raise NetError("%s: exit %d: %s" % (" ".join(argv), r.returncode,
                                            (r.stderr or r.stdout).strip()))
    return r


def unavailable():
    """Why this machine cannot build a Net (None when it can): the skip reason of the tests,
    worded so that under CI=true the skip counts as a failure (conftest.MUST_RUN_IN_CI)."""
    if os.geteuid() != 0:
        return "needs root: network namespaces, veths and nft (euid %d)" % os.geteuid()
    for tool in ("ip", "nft"):
        if _run(["sh", "-c", "command -v %s" % tool], check=False).returncode != 0:
            return "needs root tools: %s is not installed (make deps installs iproute2 and " \
                   "nftables)" % tool
    return None


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def _delete_ns(name):
    """Kills what still runs in namespace name (a broker a dead test left behind would keep
    it alive), then deletes it."""
    r = _run(["ip", "netns", "pids", name], check=False)
    for pid in r.stdout.split():
        try:
            os.kill(int(pid), 9)
        except (ProcessLookupError, ValueError):
            pass
    _run(["ip", "netns", "del", name], check=False)


def sweep_stale():
    """Deletes namespaces (and root-namespace veths) of earlier test processes that died
    without tearing down: only names of this module's pattern whose pid is gone."""
    r = _run(["ip", "netns", "list"], check=False)
    for line in r.stdout.splitlines():
        name = line.split()[0] if line.strip() else ""
        m = re.match(r"^%s(\d+)x\d+-" % PREFIX, name)
        if m and not _pid_alive(int(m.group(1))):
            _delete_ns(name)
    r = _run(["ip", "-o", "link", "show"], check=False)
    for line in r.stdout.splitlines():
        m = re.match(r"^\d+: (%s(\d+)x\d+r)[@:]" % PREFIX, line)
        if m and not _pid_alive(int(m.group(2))):
            _run(["ip", "link", "del", m.group(1)], check=False)


_counter = [0]
_open = []


@atexit.register
def _close_all():
    for net in list(_open):
        net.close()


class Net:
    def __init__(self, hosts):
        """hosts: the host numbers (1..253), e.g. [1, 2, 3]: one namespace each."""
        why = unavailable()
        if why:
            raise NetError(why)
        sweep_stale()
        _counter[0] += 1
        self.hosts = list(hosts)
        self.tag = "%s%dx%d" % (PREFIX, os.getpid(), _counter[0])
        self.hub = self.tag + "-hub"
        self.ns = {h: "%s-h%d" % (self.tag, h) for h in self.hosts}
        # The root namespace's end of its veth: at most 15 characters (IFNAMSIZ); a pid
        # has at most 7 digits.
        self.root_if = self.tag + "r"
        self.net = self._free_subnet()
        self.created = []  # namespaces, in creation order
        self.cuts = []     # what is cut now, for the failure report
        _open.append(self)
        try:
            self._build()
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------ building

    @staticmethod
    def _free_subnet():
        used = _run(["ip", "-4", "route", "show", "table", "all"], check=False).stdout
        for k in list(range(os.getpid() % 200 + 20, 250)) + list(range(20, 250)):
            net = "198.18.%d" % k
            if net + "." not in used:
                return net
        raise NetError("no free /24 in 198.18.0.0/16 for the test network")

    def addr(self, host):
        return "%s.%d" % (self.net, host)

    @property
    def root_addr(self):
        return "%s.254" % self.net

    def _build(self):
        _run(["ip", "netns", "add", self.hub])
        self.created.append(self.hub)
        _run(["ip", "-n", self.hub, "link", "add", "br0", "type", "bridge"])
        _run(["ip", "-n", self.hub, "link", "set", "br0", "up"])
        for h in self.hosts:
            ns = self.ns[h]
            _run(["ip", "netns", "add", ns])
            self.created.append(ns)
            # Both ends are made inside the hub, then one end moves into the host: names
            # only have to be unique inside the hub.
            _run(["ip", "-n", self.hub, "link", "add", "p%d" % h, "type", "veth", "peer",
                  "name", "eth0", "netns", ns])
            _run(["ip", "-n", self.hub, "link", "set", "p%d" % h, "master", "br0", "up"])
            _run(["ip", "-n", ns, "addr", "add", self.addr(h) + "/24", "dev", "eth0"])
            _run(["ip", "-n", ns, "link", "set", "eth0", "up"])
            _run(["ip", "-n", ns, "link", "set", "lo", "up"])
            self._nft(h, self._ruleset())
        _run(["ip", "link", "add", self.root_if, "type", "veth", "peer", "name", "root",
              "netns", self.hub])
        _run(["ip", "-n", self.hub, "link", "set", "root", "master", "br0", "up"])
        _run(["ip", "addr", "add", self.root_addr + "/24", "dev", self.root_if])
        _run(["ip", "link", "set", self.root_if, "up"])
        self._wait_paths()

    def _ruleset(self):
        return ("add table inet %s\n"
                "add chain inet %s input { type filter hook input priority 0; }\n"
                "add chain inet %s output { type filter hook output priority 0; }\n"
                % (TABLE, TABLE, TABLE))

    def _nft(self, host, script):
        _run(["ip", "netns", "exec", self.ns[host], "nft", "-f", "-"], inp=script)

    def _wait_paths(self, timeout=10):
        """Until every host's veth is up at both ends (the carrier may lag the command)."""
        deadline = time.monotonic() + timeout
        for h in self.hosts:
            while True:
                r = _run(["ip", "-n", self.ns[h], "-o", "link", "show", "eth0"], check=False)
                if "LOWER_UP" in r.stdout:
                    break
                if time.monotonic() > deadline:
                    raise NetError("the veth of host %d did not come up: %s" % (h, r.stdout))
                time.sleep(0.05)

    # ------------------------------------------------------------ running things inside

    def wrap(self, host, argv):
        """argv run inside host's namespace (ip netns exec execs it: the pid is argv's)."""
        return ["ip", "netns", "exec", self.ns[host]] + list(argv)

    # ------------------------------------------------------------ cuts

    def _drop(self, host, chain, match):
        self._nft(host, "add rule inet %s %s %s drop\n" % (TABLE, chain, match))

    def cut(self, a, b):
        """Both ways between hosts a and b (rules on both sides)."""
        self._drop(a, "input", "ip saddr %s" % self.addr(b))
        self._drop(a, "output", "ip daddr %s" % self.addr(b))
        self._drop(b, "input", "ip saddr %s" % self.addr(a))
        self._drop(b, "output", "ip daddr %s" % self.addr(a))
        self.cuts.append("%d x %d" % (a, b))

    def cut_oneway(self, src, dst):
        """What src sends to dst is dropped on arrival (dst's input); dst still reaches src
        (its packets arrive, their answers do not)."""
        self._drop(dst, "input", "ip saddr %s" % self.addr(src))
        self.cuts.append("%d -> %d" % (src, dst))

    def isolate(self, host, clients=True):
        """host from every other host, and from the root namespace unless clients=False,
        both ways."""
        for o in self.hosts:
            if o != host:
                self.cut(host, o)
        if clients:
            self._drop(host, "input", "ip saddr %s" % self.root_addr)
            self._drop(host, "output", "ip daddr %s" % self.root_addr)
            self.cuts.append("%d x root" % host)

    def isolate_oneway(self, host, inbound=True):
        """Everything host receives (inbound) or sends (not inbound), from or to the other
        hosts and the root namespace, is dropped; the other direction still flows."""
        # The host's own traffic to itself (over lo) is not network traffic: it stays.
        if inbound:
            self._drop(host, "input", "iifname != \"lo\" ip saddr %s.0/24" % self.net)
        else:
            self._drop(host, "output", "oifname != \"lo\" ip daddr %s.0/24" % self.net)
        self.cuts.append("%s of %d" % ("all into" if inbound else "all out", host))

    def split(self, group_a, group_b):
        for a in group_a:
            for b in group_b:
                self.cut(a, b)

    def link_down(self, host):
        _run(["ip", "-n", self.hub, "link", "set", "p%d" % host, "down"])
        self.cuts.append("link of %d down" % host)

    def link_up(self, host):
        _run(["ip", "-n", self.hub, "link", "set", "p%d" % host, "up"])

    def heal(self):
        """Removes every cut and puts every link back up."""
        for h in self.hosts:
            self._nft(h, "flush table inet %s\n" % TABLE)
            self.link_up(h)
        self.cuts = []

    # ------------------------------------------------------------ teardown

    def close(self):
        """Deletes everything this Net made; safe to call twice, and never raises."""
        if self in _open:
            _open.remove(self)
        _run(["ip", "link", "del", self.root_if], check=False)
        for ns in reversed(self.created):
            _delete_ns(ns)
        self.created = []
        # Deleting a namespace is finished by the kernel in the background: wait until its
        # veths are gone, so that the next Net can take the same names and subnet.
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.root_if not in _run(["ip", "-o", "link", "show"], check=False).stdout:
                break
            time.sleep(0.05)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ------------------------------------------------------------ for `tally verify`

    def save(self, path):
        with open(path, "w") as f:
            json.dump({"ns": {str(h): n for h, n in self.ns.items()}, "hub": self.hub,
                       "net": self.net, "root": self.root_addr}, f)


class SavedNet(Net):
    """A Net described by Net.save's JSON, for the fault command (it owns nothing)."""

    def __init__(self, path):  # noqa: super().__init__ builds; this one only describes
        with open(path) as f:
            s = json.load(f)
        self.ns = {int(h): n for h, n in s["ns"].items()}
        self.hosts = sorted(self.ns)
        self.hub, self.net = s["hub"], s["net"]
        self.cuts = []
        self.created = []
        self.root_if = None

    def close(self):
        pass


def fault_main(argv):
    """`netns.py fault STATE NAME PHASE NODE`: tally verify's --broker-fault-cmd."""
    if len(argv) != 5:
        print("usage: netns.py fault STATE NAME start|end NODE", file=sys.stderr)
        return 2
    _fault, state, name, phase, node = argv
    net = SavedNet(state)
    node = int(node)
    if node not in net.ns:
        print("netns.py: no host %d in %s" % (node, state), file=sys.stderr)
        return 2
    if phase == "end":
        net.heal()  # tally verify runs one broker episode at a time
        return 0
    if name == "cut":
        net.isolate(node)
    elif name == "cut-in":
        net.isolate_oneway(node, inbound=True)
    elif name == "cut-out":
        net.isolate_oneway(node, inbound=False)
    elif name == "link":
        net.link_down(node)
    else:
        print("netns.py: unknown fault %r (cut, cut-in, cut-out, link)" % name, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "fault":
        sys.exit(fault_main(sys.argv[1:]))
    print(__doc__)
    sys.exit(2)
