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


class SchedTrace:
    """`perf sched record -a` from construction until stop(); stop(pid) returns, for each
    thread of pid, how it spent the phase as the scheduler saw it: {tid: {"switches",
    "run_ms", "delay_ms" (runnable but not running, summed), "delay_max_ms", "d_waits"
    (times it left the CPU in uninterruptible sleep: waiting for a disk), "d_wait_ms"}}.
    Counts of D waits do not swing with the machine's load; the delays do."""

    def __init__(self):
        if not os.listdir("/sys/kernel/tracing"):
            subprocess.run(["mount", "-t", "tracefs", "nodev", "/sys/kernel/tracing"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.dir = lib.scratch_dir("sched")
        self.file = os.path.join(self.dir, "perf.data")
        self.p = subprocess.Popen(["perf", "sched", "record", "-a", "-o", self.file],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)

    def stop(self, pid):
        self.p.send_signal(signal.SIGINT)
        self.p.wait(30)
        out = subprocess.run(["perf", "sched", "timehist", "--state", "-i", self.file],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
        shutil.rmtree(self.dir, ignore_errors=True)
        threads = {}
        # "time [cpu] name[tid/pid] wait-ms delay-ms run-ms state"; the leader is name[pid].
        for line in out.splitlines():
            w = line.split()
            if len(w) < 7 or not w[1].startswith("["):
                continue
            ids = w[2][w[2].rfind("[") + 1:-1].split("/")
            if not ids[-1].isdigit() or int(ids[-1]) != pid:
                continue
            try:
                wait, delay, run = float(w[3]), float(w[4]), float(w[5])
            except ValueError:
                continue
            t = threads.setdefault(int(ids[0]), {"switches": 0, "run_ms": 0.0, "delay_ms": 0.0,
                                                 "delay_max_ms": 0.0, "d_waits": 0,
                                                 "d_wait_ms": 0.0, "last": ""})
            # A line is one run ended by a switch: the wait before it belongs to the state
            # the previous run ended in.
            if t["last"] == "D":
                t["d_wait_ms"] += wait
            t["switches"] += 1
            t["run_ms"] += run
            t["delay_ms"] += delay
            t["delay_max_ms"] = max(t["delay_max_ms"], delay)
            t["last"] = w[6]
            if w[6] == "D":
                t["d_waits"] += 1
        for t in threads.values():
            del t["last"]
        return threads
