# SPDX-License-Identifier: Apache-2.0
"""Deferred answers (the broker's purgatory) seen from clients: a long-poll Fetch whose
client disconnects is dropped at once, without leaks or crashes, and the broker keeps
serving; acks=all Produce answers through the purgatory (at once on one node, where the
high watermark is the log end), whatever its timeout."""
import socket
import time

import harness
import kproto

DROP_LINE = "dropped a waiting Fetch from"


def batch(n, tag=b"r", start=0):
    return kproto.record_batch([(b"k%d" % i, b"%s-%d" % (tag, i)) for i in range(start, start + n)])


def wait_for(pred, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.05)
    return pred()


def test_long_poll_fetch_of_a_vanished_client_is_dropped(broker_factory, monkeypatch):
    monkeypatch.setenv("TALLY_LOG_LEVEL", "debug")
    b = broker_factory()
    t = "deferred-vanish"
    harness.create_topics(b, [(t, 2, None)])
    n = 12
    socks = []
    for i in range(n):
        s = socket.create_connection(("127.0.0.1", b.port))
        # Two minutes of MaxWaitMs: only the disconnect can end these waits within the test.
        s.sendall(kproto.fetch_request(1, {t: {0: 0, 1: 0}}, max_wait_ms=120000,
                                       version=11))
        if i % 3 == 0:
            # A request pipelined behind the parked fetch: its answer waits in order.
            s.sendall(kproto.api_versions_request(2))
        socks.append(s)
    time.sleep(0.3)  # every fetch parked
    for i, s in enumerate(socks):
        if i % 2 == 0:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        s.close()
    assert wait_for(lambda: b.stderr_all().count(DROP_LINE) >= n), b.stderr_tail(40)

    # The broker keeps serving: a new long poll wakes on a produce, data reads back.
    with b.conn(timeout=30) as c, b.conn() as p:
        c.send(kproto.fetch_request(c.next_corr(), {t: {1: 0}}, max_wait_ms=10000, version=11))
        time.sleep(0.3)
        assert p.produce({t: {1: batch(3)}})[(t, 1)]["error"] == 0
        _, body = c.recv_response()
        f = kproto.parse_fetch(body, 11)
        recs = kproto.records_of(f["partitions"][(t, 1)]["records"] or b"")
        assert [r[3] for r in recs] == [b"r-0", b"r-1", b"r-2"]
    assert b.stderr_all().count(DROP_LINE) == n
    b.stop()  # exit code 0 and no sanitizer report (leaks included)


def test_acks_all_answers_through_the_purgatory(broker_factory):
    b = broker_factory()
    t = "deferred-acks"
    harness.create_topics(b, [(t, 3, None)])
    with b.conn() as c:
        # Several partitions in one request, any timeout (0 included: on one node the high
        # watermark already covers the batch, so the answer is not a timeout).
        for timeout_ms in (30000, 1, 0):
            r = c.produce({t: {0: batch(2), 1: batch(1), 2: batch(4)}}, acks=-1,
                          timeout_ms=timeout_ms)
            for p in range(3):
                assert r[(t, p)]["error"] == 0, (timeout_ms, r)
        offs = harness.offsets(b, t, [0, 1, 2])
        assert offs == {0: 6, 1: 3, 2: 12}, offs
        # An unknown partition fails alone; the others still wait and succeed.
        r = c.produce({t: {0: batch(1), 7: batch(1)}}, acks=-1)
        assert r[(t, 0)]["error"] == 0 and r[(t, 7)]["error"] == kproto.UNKNOWN_TOPIC_OR_PARTITION


def test_stop_with_parked_fetches_of_connected_clients(broker_factory):
    """A stop answers (or drops) every parked fetch and frees everything: exit code 0, no
    sanitizer report. That it does so at once, not at MaxWaitMs, is tested on the broker's
    virtual clock (tests/unit/test_broker.c: broker_fetch_long_poll_answered_when_the_broker_
    stops); here the harness's own stop bound (20 s, far below the 120 s MaxWaitMs) would fail
    a broker that waited."""
    b = broker_factory()
    t = "deferred-stop"
    harness.create_topics(b, [(t, 1, None)])
    conns = []
    for _ in range(6):
        c = b.conn(timeout=30)
        c.send(kproto.fetch_request(c.next_corr(), {t: {0: 0}}, max_wait_ms=120000, version=11))
        conns.append(c)
    time.sleep(0.3)
    assert b.stop() == 0
    for c in conns:
        # Each parked fetch got its answer, or its connection was closed: nothing hangs.
        try:
            c.recv_response()
        except TimeoutError:
            raise AssertionError("a parked fetch outlived the broker's stop") from None
        except (ConnectionError, OSError, AssertionError, ValueError):
            pass
        c.close()
