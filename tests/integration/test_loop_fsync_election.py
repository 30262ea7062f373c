# SPDX-License-Identifier: Apache-2.0
"""The one fsync the event loop makes itself (docs/operations.md, "Threads"; issue 18 item
9): with several voters, libraft's libuv backend stores its term and vote (a write and an
fdatasync of __cluster_metadata-0/metadata1 or metadata2) on the loop thread at every
election. Three voters run under `strace -f -e trace=openat,fsync,fdatasync`; the raft leader
is killed with kill -9 and the two others elect a new one. On each survivor's main thread
(TID = process id, where the loop runs) the election shows as fdatasyncs of those files —
and no other fsync or fdatasync runs there once the node serves (start-up, which formats the
data dir and bootstraps raft before the loop runs, is not counted). If libraft moved the stores
off the loop, or Tally added an fsync of its own to the loop, this fails and the document
must change with it. How long the stores take is measured by bench/election.py, not here."""
import os
import re
import signal
import shutil
import time

import harness

CLUSTER_ID = "testElectionLoopFsync1"
CALL = re.compile(r"^(\d+)\s+(\w+)\((.*?)\)\s+= (-?\d+)")
LEADER = re.compile(r"node (\d+) is now the controller \(raft leader, term (\d+)\)")


class Voter(harness.TallyBroker):
    def __init__(self, workdir, node_id):
        super().__init__(workdir, node_id=node_id)
        self.trace_path = os.path.join(self.workdir, "strace.out")

    def argv(self):
        # LeakSanitizer cannot run under ptrace; the other sanitizers still do.
        return ["env", "ASAN_OPTIONS=abort_on_error=0:detect_leaks=0", "strace", "-f", "-qq",
                "--seccomp-bpf", "-e", "trace=openat,fsync,fdatasync", "-e", "signal=none",
                "-o", self.trace_path] + super().argv()

    def tallyd_pid(self):
        with open("/proc/%d/task/%d/children" % (self.proc.pid, self.proc.pid)) as f:
            kids = f.read().split()
        assert len(kids) == 1, kids
        return int(kids[0])

    def kill(self):
        os.kill(self.tallyd_pid(), signal.SIGKILL)
        self.proc.wait(30)

    def stop(self, check=True):
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        os.kill(self.tallyd_pid(), signal.SIGTERM)
        rc = self.proc.wait(120)
        if check:
            self.check_clean(rc)
        return rc


def leader(voters):
    best = (0, None)
    for v in voters:
        for m in LEADER.finditer(v.stderr_all()):
            best = max(best, (int(m.group(2)), int(m.group(1))))
    return best


def main_thread_syncs(trace, main):
    """[(line number, path)] of every fsync/fdatasync on the main thread, with the path its
    fd was opened with on that thread (None if not opened there)."""
    fds, out = {}, []
    with open(trace) as f:
        for no, line in enumerate(f):
            m = CALL.match(line)
            if m is None or int(m.group(1)) != main:
                continue
            call, args, ret = m.group(2), m.group(3), int(m.group(4))
            if call == "openat" and ret >= 0:
                fds[ret] = args.split('"')[1] if '"' in args else args
            elif call in ("fsync", "fdatasync"):
                out.append((no, fds.get(int(args.split(",")[0]))))
    return out


def test_election_fsyncs_on_the_loop_are_libraft_metadata_only(tmp_path):
    # strace is one of make deps' packages: its absence fails, never skips.
    assert shutil.which("strace"), "strace missing (make deps installs it)"
    voters = [Voter(tmp_path / ("n%d" % n), n) for n in (1, 2, 3)]
    quorum = ",".join("%d@127.0.0.1:%d" % (v.node_id, v.controller_port) for v in voters)
    for v in voters:
        v.settings.update({"controller.quorum.voters": quorum, "cluster.id": CLUSTER_ID})
    try:
        for v in voters:
            v.start(wait=False)
        for v in voters:
            v.wait_ready()
        # Start-up (formatting the data dir, bootstrapping raft) runs before the loop serves.
        ready = {v.node_id: sum(1 for _ in open(v.trace_path)) for v in voters}
        term, lead = leader(voters)
        assert lead is not None, [v.stderr_tail() for v in voters]
        survivors = [v for v in voters if v.node_id != lead]
        before = {v.node_id: sum(1 for _ in open(v.trace_path)) for v in survivors}
        mains = {v.node_id: v.tallyd_pid() for v in survivors}
        next(v for v in voters if v.node_id == lead).kill()
        deadline = time.monotonic() + 60
        while leader(survivors)[0] <= term:
            assert time.monotonic() < deadline, [v.stderr_tail() for v in survivors]
            time.sleep(0.1)
        for v in survivors:
            v.wait_ready()
            v.stop()
    finally:
        for v in voters:
            if v.proc is not None and v.proc.poll() is None:
                v.kill()
    for v in survivors:
        syncs = main_thread_syncs(v.trace_path, mains[v.node_id])
        meta = re.compile(r"__cluster_metadata-0/metadata[12]$")
        others = [(no, path) for no, path in syncs
                  if no >= ready[v.node_id] and (path is None or not meta.search(path))]
        assert others == [], "node %d: fsyncs on the loop other than raft's metadata: %r" % (
            v.node_id, others[:5])
        election = [no for no, _p in syncs if no >= before[v.node_id]]
        # At least one round: the new term, and the vote (a split vote takes more).
        assert len(election) >= 2, (v.node_id, syncs)
