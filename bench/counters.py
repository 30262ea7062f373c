# SPDX-License-Identifier: Apache-2.0
"""Deterministic cost counters (issue 20 item 1): measures that do not swing with the
machine's load the way CPU seconds do, taken over one measured phase of a server.

- syscalls: `strace -c -f -p <pid>` attached for the phase (every thread), the count of
  each system call. Tracing slows the server, so these come from their own run, never
  from a run whose CPU time is reported.
- minflt: minor page faults, /proc/<pid>/stat before and after the phase.
- Ir: user-space instructions executed, valgrind's callgrind over the phase (zeroed with
  callgrind_control -z at its start, dumped with -d at its end), on a smaller run.

Each figure is per GiB moved, for tallyd and its baseline in the same invocation."""
import glob
import os
import shutil
import signal
import subprocess
import time

import lib

# Calls that are the traffic: the rest (futex, clock_gettime, mmap...) go into "other".
# strace before 6.5 (Debian 12 has 6.1) leaves cachestat(2), which it does not know, out
# of -c's table altogether: a read's count then lacks its one probe per file range.
MAIN_CALLS = ("read", "readv", "recvfrom", "recvmsg", "write", "writev", "pwrite64",
              "pwritev", "sendto", "sendmsg", "sendfile", "epoll_wait", "epoll_pwait",
              "epoll_ctl", "fdatasync", "fsync", "io_uring_enter", "pread64", "preadv2",
              "cachestat")


def have(tool):
    return shutil.which(tool) is not None


class Strace:
    """strace -c -f attached to pid until stop(); stop() returns {syscall: calls}."""

    def __init__(self, pid):
        self.out = os.path.join(lib.scratch_dir("strace"), "strace.txt")
        self.p = subprocess.Popen(["strace", "-c", "-f", "-p", str(pid), "-o", self.out],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # Attached once the process reports a tracer (each thread is seized in turn).
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with open("/proc/%d/status" % pid) as f:
                if any(line.startswith("TracerPid:") and line.split()[1] != "0" for line in f):
                    break
            time.sleep(0.05)
        time.sleep(0.3)

    def stop(self):
        self.p.send_signal(signal.SIGINT)
        self.p.wait(30)
        calls = {}
        with open(self.out) as f:
            for line in f:
                w = line.split()
                # "% time seconds usecs/call calls [errors] syscall"
                if len(w) >= 5 and w[0][0].isdigit() and w[-1] != "total":
                    calls[w[-1]] = calls.get(w[-1], 0) + int(w[3])
        shutil.rmtree(os.path.dirname(self.out), ignore_errors=True)
        return calls


def syscall_summary(calls, gib):
    """"total N/GiB: read a, write b, ..., other c" with every figure per GiB."""
    total = sum(calls.values())
    parts = ["%s %.0f" % (k, calls[k] / gib) for k in MAIN_CALLS if calls.get(k)]
    other = sum(v for k, v in calls.items() if k not in MAIN_CALLS)
    parts.append("other %.0f" % (other / gib))
    return total / gib, ", ".join(parts)


class Callgrind:
    """A callgrind wrapper for a server: prefix() goes before its argv; zero(pid) at the
    start of the measured phase, total_ir(pid) at its end returns the instructions
    executed in between (every thread)."""

    def __init__(self):
        self.dir = lib.scratch_dir("callgrind")
        self.file = os.path.join(self.dir, "cg.out")

    def prefix(self):
        return ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + self.file,
                "--dump-instr=no", "--compress-strings=no"]

    def zero(self, pid):
        lib.run(["callgrind_control", "-z", str(pid)])

    def total_ir(self, pid):
        before = set(glob.glob(self.file + "*"))
        lib.run(["callgrind_control", "-d", str(pid)])
        new = sorted(set(glob.glob(self.file + "*")) - before)
        if not new:
            raise RuntimeError("callgrind wrote no dump")
        ir = 0
        for path in new:
            with open(path) as f:
                for line in f:
                    if line.startswith("summary:") or line.startswith("totals:"):
                        ir = max(ir, int(line.split()[1]))
        return ir

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)
