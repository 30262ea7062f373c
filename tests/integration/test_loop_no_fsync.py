# SPDX-License-Identifier: Apache-2.0
"""Nothing on the event loop waits for a disk (DESIGN §3).

- tallyd runs under `strace -f -e trace=fsync,fdatasync` through a load that creates
  topics, rolls segments (producer snapshots, leader epochs, flushes), flushes per message,
  deletes records (the log-start checkpoint it waits for), writes the periodic checkpoints
  and stops cleanly; no fsync/fdatasync may come from the main thread, whose TID is the
  process id (the event loop runs there). fsyncs from other threads must be seen, or the
  trace proves nothing.
- Slow readers of large fetches hold no thread: while many clients leave their fetch
  answers unread, Produce acks=all with flush.messages=1 and DeleteRecords (which waits for
  an fsync on the thread pool) are still answered, and the slow readers then get their whole
  answers.
"""
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import time

import pytest

import harness
import kproto


class StracedBroker(harness.TallyBroker):
    """A broker started as `strace ... tallyd ...`; proc is strace, tallyd_pid its child."""

    def __init__(self, workdir, trace_path, **kw):
        super().__init__(workdir, **kw)
        self.trace_path = trace_path

    def argv(self):
        # LeakSanitizer cannot run under ptrace; the other sanitizers still do.
        return ["env", "ASAN_OPTIONS=abort_on_error=0:detect_leaks=0", "strace", "-f", "-qq",
                "-ttt", "--seccomp-bpf", "-e", "trace=fsync,fdatasync",
                "-e", "signal=none", "-o", self.trace_path] + super().argv()

    def tallyd_pid(self):
        with open("/proc/%d/task/%d/children" % (self.proc.pid, self.proc.pid)) as f:
            kids = f.read().split()
        assert len(kids) == 1, kids
        return int(kids[0])

    def stop(self, check=True):
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        os.kill(self.tallyd_pid(), signal.SIGTERM)
        rc = self.proc.wait(120)  # strace exits with its tracee's status
        if check:
            self.check_clean(rc)
        return rc


def produce_bytes(c, topic, partition, n, value_size, acks=-1):
    rec = kproto.record_batch([(None, b"x" * value_size)] * n)
    res = c.produce({topic: {partition: rec}}, acks=acks)
    if acks != 0:
        assert res[(topic, partition)]["error"] == 0, res
        return res[(topic, partition)]["base_offset"]


@pytest.mark.skipif(shutil.which("strace") is None, reason="strace not installed (make deps)")
def test_event_loop_does_no_fsync(tmp_path):
    trace = str(tmp_path / "fsync.trace")
    b = StracedBroker(tmp_path / "b", trace, settings={
        "log.flush.offset.checkpoint.interval.ms": "300",
        "log.retention.check.interval.ms": "300",
    })
    try:
        b.start()
        pid = b.tallyd_pid()
        # From here on the loop runs. Before it, start-up writes meta.properties and libraft
        # starts the quorum (raft_start fsyncs its metadata files synchronously); nothing is
        # served yet, so those do not count.
        serving = time.time()
        # Many partitions: each one's leader-epoch checkpoint is written at creation.
        harness.create_topics(b, [("nf-many", 40, None),
                                  ("nf-roll", 2, {"segment.bytes": "2000"}),
                                  ("nf-flush", 1, {"flush.messages": "1"})])
        with b.conn() as c:
            for i in range(30):  # rolls every few batches: snapshots and flushes
                produce_bytes(c, "nf-roll", i % 2, 4, 200)
            for i in range(10):
                produce_bytes(c, "nf-flush", 0, 1, 100)
            # Idempotent batches so that producer snapshots have something to hold.
            pid_res = c.init_producer_id()
            producer_id, epoch = pid_res["producer_id"], pid_res["producer_epoch"]
            for seq in range(0, 40, 4):
                batch = kproto.idempotent_batch(4, producer_id, epoch, seq, prefix=b"v" * 300)
                res = c.produce({"nf-roll": {0: batch}})
                assert res[("nf-roll", 0)]["error"] == 0, res
            res = c.delete_records({"nf-roll": {1: 20}, "nf-many": {0: 0}})
            assert res[("nf-roll", 1)][0] == 0, res
        time.sleep(1.0)  # periodic checkpoints (every 300 ms) and retention ticks
        assert b.stop() == 0
    finally:
        if b.alive():
            b.kill()
    with open(trace) as f:
        lines = [ln for ln in f.read().splitlines()
                 if re.match(r"^\d+ +[\d.]+ f(data)?sync\(", ln) and
                 float(ln.split()[1]) >= serving]
    on_loop = [ln for ln in lines if int(ln.split()[0]) == pid]
    others = [ln for ln in lines if int(ln.split()[0]) != pid]
    assert others, "strace saw no fsync at all: the trace proves nothing"
    assert not on_loop, "fsync on the event loop thread (pid %d):\n%s" % (
        pid, "\n".join(on_loop[:20]))


def slow_reader(port, topic, partition, max_bytes):
    """A connection that sends one Fetch for a large answer and reads nothing yet."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", port))
    s.sendall(kproto.fetch_request(1, {topic: {partition: 0}}, max_bytes=max_bytes,
                                   partition_max_bytes=max_bytes))
    return s


def read_answer(s, timeout):
    s.settimeout(timeout)
    hdr = b""
    while len(hdr) < 4:
        chunk = s.recv(4 - len(hdr))
        assert chunk, "connection closed before the answer"
        hdr += chunk
    (n,) = struct.unpack(">i", hdr)
    got = bytearray()
    while len(got) < n:
        chunk = s.recv(min(1 << 20, n - len(got)))
        assert chunk, "connection closed after %d of %d bytes" % (len(got), n)
        got += chunk
    return bytes(got)


def test_slow_readers_hold_no_thread(broker_factory):
    # libuv's old default of 4 threads, the most a slow reader could hold before.
    b = broker_factory(settings={"num.io.threads": "4"})
    harness.create_topics(b, [("sr-big", 1, None), ("sr-acks", 1, {"flush.messages": "1"}),
                              ("sr-del", 1, None)])
    with b.conn() as c:
        for _ in range(24):  # ~6 MiB to read back
            produce_bytes(c, "sr-big", 0, 16, 16 << 10)
        produce_bytes(c, "sr-del", 0, 10, 10)
    total = harness.offsets(b, "sr-big", [0])[0]
    readers = [slow_reader(b.port, "sr-big", 0, 64 << 20) for _ in range(8)]
    try:
        time.sleep(1.0)  # every reader's answer is now stuck in a full socket
        deadline = time.monotonic() + 30  # a liveness bound only
        with b.conn(timeout=30) as c:
            for i in range(5):
                produce_bytes(c, "sr-acks", 0, 1, 100)
            res = c.delete_records({"sr-del": {0: 5}})
            assert res[("sr-del", 0)] == (0, 5), res
        assert time.monotonic() < deadline
        # The slow readers finally read: each gets its whole answer, every record in it.
        for s in readers:
            body = read_answer(s, 60)
            # correlation id, then the fetch body (v4)
            (corr,) = struct.unpack(">i", body[:4])
            assert corr == 1
            part = kproto.parse_fetch(body[4:], 4)["partitions"][("sr-big", 0)]
            assert part["error"] == 0, part
            assert len(kproto.records_of(part["records"])) == total
    finally:
        for s in readers:
            s.close()
