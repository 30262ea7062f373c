#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""SCRAM-SHA-512 connections per second (issue 17): each connection is TCP connect,
SaslHandshake v1, the two SaslAuthenticate v1 round trips of RFC 5802 (the server's
signature checked), one Metadata v1 (all topics) and close. User alice is created here with
AlterUserScramCredentials at BENCH_SCRAM_ITERATIONS (default 4096, Kafka's default and
Tally's minimum). The broker keeps StoredKey and ServerKey, so a login costs it a few HMACs
and hashes, never PBKDF2; the client side caches its SaltedPassword per (salt, iterations)
(the salt is the user's, fixed), so that the client's PBKDF2 does not bound the rate.

In the same run and on the same tallyd (pinned to SERVER_CPUS, the driver's threads on the
others): the same loop with SASL PLAIN (the JAAS user alice) and without SASL on the
PLAINTEXT listener (Metadata only). BENCH_SCRAM_CONNS (default 3000) connections per run over
BENCH_SCRAM_THREADS (default 4) threads, BENCH_ROUNDS (default 3) rounds; each figure is the
best round. Reports connections/s, tallyd CPU ms per connection, and the event loop's longest
hold over the SCRAM runs (tally_event_loop_lag_seconds from metrics.listener: the upper bound
of the highest bucket that grew)."""
import base64
import hashlib
import hmac
import os
import sys
import threading
import time
import urllib.request

import lib

sys.path.insert(0, os.path.join(lib.REPO, "tests", "integration"))
import kproto as kp  # noqa: E402

CONNS = int(os.environ.get("BENCH_SCRAM_CONNS", "3000"))
THREADS = int(os.environ.get("BENCH_SCRAM_THREADS", "4"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
ITERATIONS = int(os.environ.get("BENCH_SCRAM_ITERATIONS", "4096"))
USER, PASSWORD = "alice", "alice-secret"
JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required '
        'user_alice="alice-secret";')


def roundtrip(c, frame):
    corr = c.next_corr()
    c.send(frame(corr))
    got, body = c.recv_response()
    assert got == corr
    return body


def handshake(c, mech):
    body = roundtrip(c, lambda corr: kp.frame(kp.header(17, 1, corr) + kp.string(mech)))
    assert kp.Reader(body).i16() == 0, "SaslHandshake %s refused" % mech


def authenticate(c, token):
    body = roundtrip(c, lambda corr: kp.frame(kp.header(36, 1, corr) + kp.i32(len(token)) + token))
    r = kp.Reader(body)
    err = r.i16()
    r.string()
    n = r.i32()
    if err != 0:
        raise RuntimeError("SaslAuthenticate error %d" % err)
    return r.take(n) if n > 0 else b""


_salted = {}


def scram_login(c):
    handshake(c, "SCRAM-SHA-512")
    nonce = base64.b64encode(os.urandom(18)).decode()
    first_bare = "n=%s,r=%s" % (USER, nonce)
    server_first = authenticate(c, ("n,," + first_bare).encode()).decode()
    f = dict(kv.split("=", 1) for kv in server_first.split(","))
    assert f["r"].startswith(nonce)
    key = (f["s"], int(f["i"]))
    if key not in _salted:
        _salted[key] = hashlib.pbkdf2_hmac("sha512", PASSWORD.encode(), base64.b64decode(f["s"]),
                                           int(f["i"]))
    salted = _salted[key]
    client_key = hmac.digest(salted, b"Client Key", "sha512")
    stored = hashlib.sha512(client_key).digest()
    final_bare = "c=biws,r=%s" % f["r"]
    auth_msg = ("%s,%s,%s" % (first_bare, server_first, final_bare)).encode()
    proof = bytes(a ^ b for a, b in zip(client_key, hmac.digest(stored, auth_msg, "sha512")))
    final = authenticate(c, ("%s,p=%s" % (final_bare, base64.b64encode(proof).decode())).encode())
    server_key = hmac.digest(salted, b"Server Key", "sha512")
    want = "v=" + base64.b64encode(hmac.digest(server_key, auth_msg, "sha512")).decode()
    assert final.decode() == want, "bad server signature"


def plain_login(c):
    handshake(c, "PLAIN")
    authenticate(c, ("\0%s\0%s" % (USER, PASSWORD)).encode())


def one(port, login):
    with kp.Conn(port) as c:
        if login:
            login(c)
        roundtrip(c, lambda corr: kp.metadata_request(corr, None, version=1))


def run(t, port, login):
    """(connections/s, tallyd CPU ms per connection) for CONNS connections."""
    errors = []

    def worker(n):
        try:
            for _ in range(n):
                one(port, login)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    per = [CONNS // THREADS + (1 if i < CONNS % THREADS else 0) for i in range(THREADS)]
    ths = [threading.Thread(target=worker, args=(n,)) for n in per]
    c0, t0 = lib.cpu_seconds(t.pid), time.monotonic()
    for th in ths:
        th.start()
    for th in ths:
        th.join()
    wall, cpu = time.monotonic() - t0, lib.cpu_seconds(t.pid) - c0
    if errors:
        raise RuntimeError("driver: %r" % errors[0])
    return CONNS / wall, cpu * 1000.0 / CONNS


def alter_scram(port):
    salt = os.urandom(16)
    salted = hashlib.pbkdf2_hmac("sha512", PASSWORD.encode(), salt, ITERATIONS)

    def cb(b):
        return kp.uvarint(len(b) + 1) + b
    ups = (kp.compact_string(USER) + kp.i8(2) + kp.i32(ITERATIONS) + cb(salt) + cb(salted) +
           kp.uvarint(0))
    body = kp.uvarint(1) + kp.uvarint(2) + ups + kp.uvarint(0)  # no deletions, 1 upsertion
    with kp.Conn(port) as c:
        corr = c.next_corr()
        c.send(kp.frame(kp.header(51, 0, corr, flexible=True) + body))
        _, resp = c.recv_response(flexible_header=True)
    r = kp.Reader(resp)
    r.i32()
    r.uvarint()  # results: one
    r.compact_string()
    err = r.i16()
    if err != 0:
        raise RuntimeError("AlterUserScramCredentials error %d" % err)


def lag_buckets(url):
    """{le: cumulative count} of tally_event_loop_lag_seconds."""
    out = {}
    with urllib.request.urlopen(url, timeout=10) as f:
        for line in f.read().decode().splitlines():
            if line.startswith("tally_event_loop_lag_seconds_bucket{"):
                le = line.split('le="', 1)[1].split('"', 1)[0]
                out[le] = float(line.rsplit(" ", 1)[1])
    return out


def longest_hold(before, after):
    """The upper bound of the highest bucket whose own count grew, as text."""
    les = sorted((float("inf") if k == "+Inf" else float(k), k) for k in after)
    prev_b = prev_a = 0.0
    top = None
    for _, k in les:
        own_b, own_a = before.get(k, 0.0) - prev_b, after[k] - prev_a
        prev_b, prev_a = before.get(k, 0.0), after[k]
        if own_a > own_b:
            top = k
    return top


def main():
    sasl_port, mport = lib.free_port(), lib.free_port()
    t = lib.Tallyd("scram", pin=True, settings={
        "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
        "metrics.listener": "127.0.0.1:%d" % mport,
    }, extra_listeners="SASL_PLAINTEXT://127.0.0.1:%d" % sasl_port)
    url = "http://127.0.0.1:%d/metrics" % mport
    # The driver's threads on the client CPUs.
    if lib.PIN:
        os.sched_setaffinity(0, lib.CLIENT_CPUS)
    try:
        alter_scram(t.port)
        t.create_topic("scram-bench", 4)
        one(sasl_port, scram_login)  # the user is there and the login works
        best = {"scram": (0, 0), "plain": (0, 0), "none": (0, 0)}
        cpu = {k: [] for k in best}
        holds = {k: [] for k in best}
        for i in range(ROUNDS):
            for kind, port, login in (("scram", sasl_port, scram_login),
                                      ("plain", sasl_port, plain_login), ("none", t.port, None)):
                before = lag_buckets(url)
                rate, ms = run(t, port, login)
                holds[kind].append(longest_hold(before, lag_buckets(url)))
                cpu[kind].append(ms)
                best[kind] = max(best[kind], (rate, ms))
                lib.log("round %d %-5s: %.0f connections/s, tallyd %.3f CPU ms each" %
                        (i + 1, kind, rate, ms))
    finally:
        t.stop()
    s, p, n = best["scram"][0], best["plain"][0], best["none"][0]
    def hold(kind):
        return max((h for h in holds[kind] if h), default="-",
                   key=lambda h: float("inf") if h == "+Inf" else float(h))
    lib.result("scram_conns_per_s", s, "conn/s", None, None,
               "SCRAM-SHA-512 (%d iterations) login + Metadata, best of %d x %d over %d threads;"
               " PLAIN %.0f, no SASL %.0f conn/s; tallyd CPU ms per connection (min): SCRAM %.3f,"
               " PLAIN %.3f, none %.3f (SCRAM's CPU alone would allow %.0f conn/s per core);"
               " event loop longest hold <= %s s over the SCRAM runs (PLAIN %s, none %s)" %
               (ITERATIONS, ROUNDS, CONNS, THREADS, p, n, min(cpu["scram"]), min(cpu["plain"]),
                min(cpu["none"]), 1000.0 / max(min(cpu["scram"]), 1e-6), hold("scram"),
                hold("plain"), hold("none")))
    lib.result("scram_plain_conn_ratio", s / p, "x", None, None,
               "SCRAM-SHA-512 ÷ PLAIN connections/s, same tallyd, same driver")


if __name__ == "__main__":
    main()
