#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Clean start of a broker hosting 10,000 partitions, and the background check of the files
it trusted (issue 18, 7b/7c: docs/operations.md, "Damaged segment files").

One release-build tallyd gets BENCH_STARTUP_LAYOUT (default "100x100": topics x partitions)
partitions with segment.bytes=4096 and BENCH_STARTUP_ROUNDS_DATA rounds (default 4) of one
~2.5 KiB batch per partition (about three segments each), and is stopped cleanly. Then, 3
rounds (BENCH_ROUNDS): start it again on the same directory and measure
  ready_ms   from the exec to the "tallyd node 1 started" line (every log opened),
  check_ms   from that line to the "checked the segment files the start trusted" line,
  served_ms  from that line until a Fetch at offset 0 of every partition returns data (a
             read waits for the check of the segment it reads, which goes first),
then stop it cleanly. With BENCH_STARTUP_BASELINE=<a tallyd without the check> (e.g. the
build of the commit before it), the same rounds run with that binary, alternating, and
startup_ready_ratio = best ready_ms with the check / best without. Not a pass/fail test."""
import os
import shutil
import signal
import subprocess
import sys
import time

import lib

sys.path.insert(0, os.path.join(lib.REPO, "tests", "integration"))
import kproto  # noqa: E402

LAYOUT = os.environ.get("BENCH_STARTUP_LAYOUT", "100x100")
DATA_ROUNDS = int(os.environ.get("BENCH_STARTUP_ROUNDS_DATA", "4"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
FETCH = os.environ.get("BENCH_STARTUP_FETCH", "1") != "0"  # 0: no served_ms (check alone)


class Broker:
    def __init__(self, binary, data, port, cport):
        self.binary, self.data, self.port, self.cport = binary, data, port, cport
        self.p = None

    def start(self):
        conf = {"node.id": "1",
                "listeners": "PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d" % (
                    self.port, self.cport),
                "controller.quorum.voters": "1@127.0.0.1:%d" % self.cport,
                "log.dirs": self.data}
        argv = [self.binary]
        for k, v in conf.items():
            argv += ["--set", "%s=%s" % (k, v)]
        self.err = os.path.join(os.path.dirname(self.data), "tallyd.%d.stderr" % time.time_ns())
        self.f = open(self.err, "wb")
        self.t0 = time.monotonic()
        self.p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self.f, stderr=self.f)

    def wait_line(self, text, timeout=600):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with open(self.err, errors="replace") as f:
                if text in f.read():
                    return time.monotonic()
            if self.p.poll() is not None:
                raise RuntimeError("tallyd exited; see %s" % self.err)
            time.sleep(0.005)
        raise RuntimeError("no %r within %d s; see %s" % (text, timeout, self.err))

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        self.p.wait(120)
        self.f.close()
        if self.p.returncode != 0:
            raise RuntimeError("tallyd exited with %d; see %s" % (self.p.returncode, self.err))


def fill(b, topics, parts):
    value = b"s" * 100
    with kproto.Conn(b.port, timeout=60) as c:
        for r in range(DATA_ROUNDS):
            for t in topics:
                batch = kproto.record_batch([(None, value)] * 20)
                res = c.produce({t: {p: batch for p in range(parts)}}, acks=1, timeout_ms=60000)
                bad = [k for k, d in res.items() if d["error"] != 0]
                assert not bad, bad[:3]


def all_served(b, topics, parts):
    """Fetches offset 0 of every partition until each returns data."""
    left = {t: set(range(parts)) for t in topics}
    with kproto.Conn(b.port, timeout=60) as c:
        while any(left.values()):
            for t in topics:
                if not left[t]:
                    continue
                res = c.fetch({t: {p: 0 for p in left[t]}}, version=4, max_wait_ms=0,
                              partition_max_bytes=1024)
                for (name, p), d in res["partitions"].items():
                    assert d["error"] == 0, (name, p, d["error"])
                    if d["records"]:
                        left[t].discard(p)
    return time.monotonic()


def main():
    n_topics, parts = (int(x) for x in LAYOUT.split("x"))
    binary = os.environ.get("TALLYD", os.path.join(lib.BUILD, "tallyd"))
    baseline = os.environ.get("BENCH_STARTUP_BASELINE")
    d = lib.scratch_dir("startup")
    data = os.path.join(d, "data")
    port, cport = lib.free_port(), lib.free_port()
    topics = ["st-%03d" % i for i in range(n_topics)]

    b = Broker(binary, data, port, cport)
    b.start()
    b.wait_line("tallyd node 1 started")
    for t in topics:
        lib.run([lib.TALLY, "-b", "127.0.0.1:%d" % port, "topics", "create", t, "--partitions",
                 str(parts), "--config", "segment.bytes=4096"])
    time.sleep(2)
    fill(b, topics, parts)
    b.stop()
    size = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(data) for f in fs
               if f.endswith(".log"))
    lib.log("%d partitions, %.1f MiB of segments" % (n_topics * parts, size / (1 << 20)))

    best = {}
    for r in range(ROUNDS):
        for name, path in [("check", binary)] + ([("baseline", baseline)] if baseline else []):
            lib.settle()
            b = Broker(path, data, port, cport)
            b.start()
            ready = b.wait_line("tallyd node 1 started") - b.t0
            served = all_served(b, topics, parts) - b.t0 - ready if FETCH else 0.0
            check = None
            if name == "check":
                check = b.wait_line("checked the segment files the start trusted") - b.t0 - ready
            b.stop()
            lib.log("round %d %-8s ready %6.0f ms, every partition served %6.0f ms later%s" % (
                r + 1, name, ready * 1000, served * 1000,
                ", check done %.0f ms later" % (check * 1000) if check is not None else ""))
            cur = best.setdefault(name, {"ready": ready, "served": served, "check": check})
            cur["ready"] = min(cur["ready"], ready)
            cur["served"] = min(cur["served"], served)
            if check is not None:
                cur["check"] = min(cur["check"], check)

    note = "%d partitions, %.0f MiB" % (n_topics * parts, size / (1 << 20))
    lib.result("startup_ready_ms", best["check"]["ready"] * 1000, "ms", "<", 10000, note)
    lib.result("startup_check_ms", best["check"]["check"] * 1000, "ms", "<", 60000,
               "after ready (informational)")
    lib.result("startup_served_ms", best["check"]["served"] * 1000, "ms", "<", 60000,
               "after ready, every partition's offset 0 (informational)")
    if baseline:
        lib.result("startup_ready_ratio", best["check"]["ready"] / best["baseline"]["ready"], "x",
                   "<=", 1.1, "with the check / without (%.0f ms)" % (
                       best["baseline"]["ready"] * 1000))
        lib.result("startup_served_ratio", best["check"]["served"] / max(best["baseline"]["served"],
                                                                           1e-3),
                   "x", "<=", 100, "informational: without the check %.0f ms" % (
                       best["baseline"]["served"] * 1000))
    shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
