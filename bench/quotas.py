#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Quota isolation (issue 17: an unthrottled client's p99 produce latency, while another
client floods the broker at 10x its producer_byte_rate, stays within 2x of its unloaded p99).
One tallyd; client id "flood" gets producer_byte_rate BENCH_QUOTA (default 1 MB/s) with
`tally quotas set`. The measured client ("free", no quota) sends BENCH_PROBES (default 2000)
one-record acks=1 Produce requests one at a time on its own connection, first alone, then
while `tally perf produce -X client.id=flood` offers 10x the quota; the figure is the loaded
p99 ÷ the unloaded p99 (BENCH_ROUNDS rounds, each side's best)."""
import os
import subprocess
import sys
import time

import lib

sys.path.insert(0, os.path.join(lib.REPO, "tests", "integration"))
import kproto as kp  # noqa: E402

QUOTA = int(os.environ.get("BENCH_QUOTA", "1000000"))
PROBES = int(os.environ.get("BENCH_PROBES", "2000"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
TOPIC = "quota-bench"


def probe_frame(corr):
    payload = kp.produce_request(corr, {TOPIC: {0: kp.record_batch([(None, b"p" * 100)])}},
                                 acks=1, version=3)[4:]
    hdr = kp.header(0, 3, corr)
    return kp.frame(kp.header(0, 3, corr, client_id="free") + payload[len(hdr):])


def p99(t):
    """PROBES sequential Produce round trips on a fresh connection; the 99th percentile (s)
    and whether any answer carried a throttle."""
    host, port = t.bootstrap.split(":")
    lat, throttled = [], 0
    with kp.Conn(int(port), host=host) as c:
        for _ in range(PROBES):
            corr = c.next_corr()
            t0 = time.perf_counter()
            c.send(probe_frame(corr))
            got, body = c.recv_response()
            lat.append(time.perf_counter() - t0)
            assert got == corr
            _, throttle = kp.parse_produce(body, 3)
            throttled += throttle > 0
    lat.sort()
    return lat[int(0.99 * (len(lat) - 1))], throttled


def main():
    t = lib.Tallyd("quotas")
    try:
        t.create_topic(TOPIC, 1)
        lib.run(t.tally("quotas", "set", "--client-id", "flood", "--add-config",
                        "producer_byte_rate=%d" % QUOTA))
        best = {"alone": None, "flooded": None}
        for i in range(ROUNDS):
            alone, _ = p99(t)
            # 10x the quota for as long as the probes take (1 KiB records; librdkafka paces
            # itself on the throttle too, the broker's mute holds it regardless).
            flood = subprocess.Popen(
                t.tally("perf", "produce", "--topic", TOPIC, "--records", 10 * QUOTA // 1024 * 60,
                        "--record-size", 1024, "--acks", "1", "-X", "client.id=flood"),
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(2)  # past its first throttle
            try:
                flooded, throttled = p99(t)
            finally:
                flood.kill()
                flood.wait()
            lib.log("round %d: p99 alone %.2f ms, flooded %.2f ms (%d probe answers throttled)"
                    % (i + 1, alone * 1e3, flooded * 1e3, throttled))
            best["alone"] = min(best["alone"] or alone, alone)
            best["flooded"] = min(best["flooded"] or flooded, flooded)
        lib.result("quota_isolation_p99_ratio", best["flooded"] / best["alone"], "x", "<=", 2,
                   "flood at 10x a %d B/s quota" % QUOTA)
    finally:
        t.stop()


if __name__ == "__main__":
    main()
