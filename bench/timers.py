#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The broker's timers and its liveness under load, the timings the integration tests no
longer bound (they test the behaviour; tests/unit/test_broker.c tests the waits on virtual
time). Each figure is a ratio against a baseline measured in the same invocation, best
(lowest) round of each side:

- long_poll_wait_ratio: a Fetch long poll on an empty partition (MaxWaitMs 1000, MinBytes
  1) from send to answer ÷ the same client sleeping 1000 ms (the machine's own timer slop).
  Target <= 1.2.
- long_poll_wake_ratio: a parked Fetch (MaxWaitMs 30000) woken by a Produce: from sending
  the Produce to the Fetch's answer ÷ a Produce round trip followed by a Fetch round trip
  of the same data, not parked, after the same 0.3 s pause. Target <= 2.
- idle_close_ratio: a connection that sends nothing closed by connections.max.idle.ms=1000,
  from connect to the close seen ÷ sleeping 1000 ms. Target <= 1.5 (the idle rule is
  checked on a tick).
- api_versions_during_lookups: the slowest of 20 ApiVersions round trips while two
  connections pipeline ListOffsets by timestamp into a 48 MiB gzip batch (each decompresses
  it, on the thread pool) ÷ the slowest of 20 on the same broker with nothing else running.
  Target <= 20 (an event loop held by the lookups would be hundreds of times slower).

BENCH_ROUNDS (default 3) rounds of each."""
import os
import socket
import sys
import threading
import time
import zlib

import lib

sys.path.insert(0, os.path.join(lib.REPO, "tests", "integration"))
import kproto as kp  # noqa: E402

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
WAIT_MS = 1000


def best(f, rounds=ROUNDS):
    return min(f() for _ in range(rounds))


def slept(ms):
    t0 = time.monotonic()
    time.sleep(ms / 1000.0)
    return time.monotonic() - t0


def long_poll_wait(t, topic):
    with kp.Conn(t.port, timeout=30) as c:
        t0 = time.monotonic()
        f = c.fetch({topic: {0: 0}}, version=11, max_wait_ms=WAIT_MS, min_bytes=1)
        took = time.monotonic() - t0
    assert f["partitions"][(topic, 0)]["error"] == 0, f
    return took


def long_poll_wake(t, topic, state):
    """From sending the Produce to the parked Fetch's answer, in one thread: the Fetch is
    sent, then (parked) the Produce, and the Fetch's answer is read as soon as its socket
    has it (a second thread blocked in recv measured Python's thread hand-off too, which
    the baseline's one thread does not pay)."""
    state["n"] += 1
    off = state["n"] - 1
    with kp.Conn(t.port, timeout=60) as c, kp.Conn(t.port, timeout=30) as p:
        c.send(kp.fetch_request(c.next_corr(), {topic: {0: off}}, version=11,
                                max_wait_ms=30000, min_bytes=1))
        time.sleep(0.3)  # parked
        t0 = time.monotonic()
        p.send(kp.produce_request(p.next_corr(), {topic: {0: kp.record_batch([(None, b"x")])}}))
        _, body = c.recv_response()
        took = time.monotonic() - t0
        f = kp.parse_fetch(body, 11)
        _, pbody = p.recv_response()
        r = kp.parse_produce(pbody, 3)[0]
    assert r[(topic, 0)]["error"] == 0, r
    assert f["partitions"][(topic, 0)]["error"] == 0, f
    assert f["partitions"][(topic, 0)]["records"], "the parked fetch was answered empty"
    return took


def round_trips(t, topic, state):
    state["n"] += 1
    off = state["n"] - 1
    with kp.Conn(t.port, timeout=30) as p:
        # The same pause as the parked fetch's before the clock starts: after 0.3 s with
        # nothing to do, this machine's first round trip takes 0.2 ms longer than one right
        # after another (its idle CPUs wake slowly), and that is not the broker's wake-up.
        time.sleep(0.3)
        t0 = time.monotonic()
        r = p.produce({topic: {0: kp.record_batch([(None, b"x")])}})
        assert r[(topic, 0)]["error"] == 0, r
        p.fetch({topic: {0: off}}, version=11, max_wait_ms=0, min_bytes=1)
        return time.monotonic() - t0


def idle_close(t):
    s = socket.create_connection(("127.0.0.1", t.port), timeout=30)
    t0 = time.monotonic()
    try:
        data = s.recv(1)  # b"" when the broker closes it
        assert data == b"", data
        return time.monotonic() - t0
    finally:
        s.close()


def api_versions_worst(t, n=20):
    worst = 0.0
    with kp.Conn(t.port, timeout=60) as c:
        for _ in range(n):
            t0 = time.monotonic()
            err, _ = c.api_versions()
            assert err == 0
            worst = max(worst, time.monotonic() - t0)
            time.sleep(0.05)
    return worst


def gzip_batch(values, ts):
    """A v2 batch of values (timestamps ts), its records section gzip-compressed."""
    section = b"".join(kp.encode_record(i, ts[i] - ts[0], None, v) for i, v in enumerate(values))
    z = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    section = z.compress(section) + z.flush()
    after_crc = (kp.i16(1) + kp.i32(len(values) - 1) + kp.i64(ts[0]) + kp.i64(max(ts)) +
                 kp.i64(-1) + kp.i16(-1) + kp.i32(-1) + kp.i32(len(values)) + section)
    tail = kp.i32(-1) + kp.i8(2) + kp.u32(kp.crc32c(after_crc)) + after_crc
    return kp.i64(0) + kp.i32(len(tail)) + tail


def big_batch_topic(t, topic):
    """One 48 MiB gzip batch of three records whose timestamps are ts0, ts0+1, ts0+2."""
    with kp.Conn(t.port, timeout=60) as c:
        res = c.create_topics_v([(topic, 1, 1, {"max.message.bytes": str(64 << 20)})])
        assert res[topic]["error"] == 0, res
    ts0 = int(time.time() * 1000) - 1000
    batch = gzip_batch([b"first", bytes(48 << 20), b"last"], [ts0, ts0 + 1, ts0 + 2])
    deadline = time.monotonic() + 30
    while True:
        with kp.Conn(t.port, timeout=60) as c:
            r = c.produce({topic: {0: batch}})
        if r[(topic, 0)]["error"] == 0:
            return ts0
        assert time.monotonic() < deadline, r  # the new partition's leader is on its way
        time.sleep(0.2)


def during_lookups(t, topic, ts0):
    stop = threading.Event()
    errors = []

    def hammer():
        try:
            with kp.Conn(t.port, timeout=120) as c:
                while not stop.is_set():
                    for _ in range(4):
                        c.send(kp.list_offsets_request(c.next_corr(), {topic: {0: ts0 + 2}}, 4))
                    for _ in range(4):
                        c.recv_response()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=hammer) for _ in range(2)]
    for th in threads:
        th.start()
    try:
        time.sleep(0.5)
        return api_versions_worst(t)
    finally:
        stop.set()
        for th in threads:
            th.join(120)
        assert not errors, errors


def main():
    t = lib.Tallyd("timers", settings={"connections.max.idle.ms": str(WAIT_MS)})
    try:
        t.create_topic("timers-empty", 1)
        t.create_topic("timers-wake", 1)
        t.create_topic("timers-rtt", 1)
        sleep_s = best(lambda: slept(WAIT_MS))
        poll_s = best(lambda: long_poll_wait(t, "timers-empty"))
        lib.result("long_poll_wait_ratio", poll_s / sleep_s, "x", "<=", 1.2,
                   "MaxWaitMs %d: answered after %.0f ms, sleep %.0f ms" % (
                       WAIT_MS, poll_s * 1000, sleep_s * 1000))
        wake_state, rtt_state = {"n": 0}, {"n": 0}
        wake_s = best(lambda: long_poll_wake(t, "timers-wake", wake_state))
        rtt_s = best(lambda: round_trips(t, "timers-rtt", rtt_state))
        lib.result("long_poll_wake_ratio", wake_s / rtt_s, "x", "<=", 2,
                   "woken %.2f ms after the produce was sent; produce + fetch %.2f ms" % (
                       wake_s * 1000, rtt_s * 1000))
        idle_s = best(lambda: idle_close(t))
        lib.result("idle_close_ratio", idle_s / sleep_s, "x", "<=", 1.5,
                   "connections.max.idle.ms %d: closed after %.0f ms" % (WAIT_MS, idle_s * 1000))
    finally:
        t.stop()
    # A broker of its own: the probes above must not meet idle closes, nor these.
    t = lib.Tallyd("lookups")
    try:
        ts0 = big_batch_topic(t, "timers-lookup")
        idle_worst = best(lambda: api_versions_worst(t))
        busy_worst = best(lambda: during_lookups(t, "timers-lookup", ts0))
        lib.result("api_versions_during_lookups", busy_worst / idle_worst, "x", "<=", 20,
                   "slowest of 20 ApiVersions: %.1f ms during lookups, %.2f ms idle" % (
                       busy_worst * 1000, idle_worst * 1000))
    finally:
        t.stop()


if __name__ == "__main__":
    main()
