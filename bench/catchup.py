#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A follower returning behind under steady load (issue 16): what its catch-up does to the
producers, and how long it takes to rejoin the ISR.

A fresh 3-node cluster per round (bench/clusterlib.py); a topic of 4 partitions with RF=3
led by the two nodes that are not the returning follower F (F is never the controller, so
its absence moves no raft leadership, and it leads nothing, so its return moves no
partition leadership either). build/bench/latency (librdkafka, acks=all, linger.ms=0)
produces BENCH_CATCHUP_RATE (default 2000) 1 KiB records/s over all partitions for the whole
round. After 5 s of warm-up, BENCH_CATCHUP_BEFORE (30) s of steady state; then F stops with
SIGTERM (a controlled shutdown: it leaves every ISR at once), stays down for
BENCH_CATCHUP_BEHIND_S (default 300: the issue's 5 minutes, about 600 MiB at the default
rate) while the load goes on, and is started again on its data. From its start until it is
back in every partition's ISR (Metadata every 100 ms) it catches up, fetching as fast as
replica.fetch.max.bytes and replica.fetch.response.max.bytes let it, on the same 2 CPUs as
the leaders and the producer.

catchup_p99_ratio: p99 latency of the records sent during the catch-up (from F's unfencing,
when its partitions start fetching, to its return to every ISR, at least 1 s) ÷ p99 of
those sent in the steady state before (target <= 2). The steady state is cut into windows as
long as the catch-up (at least 1 s) and its p99 is the median window's: a 30 s window would
meet more of the shared machine's stalls than a few seconds of catch-up do. The line also
gives the time to rejoin the ISR from F's start, the data it was behind, and the p99 of the
10 s after. BENCH_ROUNDS
(default 2) rounds; the figure is the best round, every round in the line."""
import os
import statistics
import time

import clusterlib as cl
import lib

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "2"))
RATE = int(os.environ.get("BENCH_CATCHUP_RATE", "2000"))
BEFORE = float(os.environ.get("BENCH_CATCHUP_BEFORE", "30"))
BEHIND = float(os.environ.get("BENCH_CATCHUP_BEHIND_S", "300"))
# Extra broker settings for every node, "k=v,k=v" (e.g. replica.fetch.response.max.bytes).
SETTINGS = dict(kv.split("=", 1) for kv in os.environ.get("BENCH_CATCHUP_SET", "").split(",")
                if kv)
# A nice value for the returning follower (diagnostic: does the catch-up cost the producers
# through the CPU it takes from them?).
NICE = int(os.environ.get("BENCH_CATCHUP_NICE", "0"))
WARM = 5.0
AFTER = 10.0
SIZE = 1024
TOPIC = "catchup"


def p99_ms(reports, start, lo, hi):
    """p99 in ms of the acknowledged records sent in [lo, hi) (monotonic s)."""
    lats = [lat for send_ms, lat, err, _b in reports
            if err == 0 and lo <= start + send_ms / 1000.0 < hi]
    q = cl.quantile(lats, 0.99)
    return (None if q is None else q / 1000.0), len(lats)


def in_every_isr(c, node, n_parts):
    try:
        parts = c.partitions(TOPIC)
    except RuntimeError:
        return False
    return len(parts) == n_parts and all(node in p[3] for p in parts.values())


def one_round(i):
    c = cl.Cluster("catchup-%d" % i, settings=SETTINGS)
    try:
        ctl = c.controller()
        f = max(n for n in c.nodes if n != ctl)
        a, b = [n for n in sorted(c.nodes) if n != f]
        assignment = [[a, b, f], [b, a, f], [a, b, f], [b, a, f]]
        c.create_topic(TOPIC, assignment)
        out = os.path.join(c.dir, "latency.out")
        total = WARM + BEFORE + BEHIND + 600 + AFTER
        prod = cl.latency_run(c.bootstrap, TOPIC, RATE, total, out=out, popen=True)
        t_prod = time.monotonic()
        time.sleep(WARM + BEFORE)
        t_down, _exit_s = c.nodes[f].term()
        time.sleep(BEHIND)
        t_up = time.monotonic()
        c.nodes[f].start(nice=NICE)
        t_unfenced = t_isr = None
        deadline = t_up + 600
        while time.monotonic() < deadline:
            now = time.monotonic()
            if t_unfenced is None and f in c.unfenced():
                t_unfenced = now
            if in_every_isr(c, f, len(assignment)):
                t_isr = now
                break
            time.sleep(0.1)
        if t_isr is None:
            raise RuntimeError("node %d not back in the ISR 600 s after its start" % f)
        time.sleep(AFTER)
        prod.send_signal(15)
        stdout, _ = prod.communicate(timeout=120)
        summary = cl.parse_summary(stdout)
        reports = cl.read_reports(out)
        start = summary["start_mono_us"] / 1e6
        # Catching up: from the broker's unfencing (its partitions start fetching) to its
        # return to every ISR, at least 1 s; the whole time from its start in the line.
        t_catch = t_unfenced if t_unfenced is not None else t_up
        width = max(1.0, t_isr - t_catch)
        during, nd = p99_ms(reports, start, t_catch, t_catch + width)
        from_start, _n = p99_ms(reports, start, t_up, t_isr)
        # The steady state in windows as long as the catch-up, so that both sides have the
        # same chance of meeting a stall of the shared machine: the median window's p99.
        lo, wins = t_prod + WARM, []
        while lo + width <= t_down:
            q, _n = p99_ms(reports, start, lo, lo + width)
            if q is not None:
                wins.append(q)
            lo += width
        before = statistics.median(wins)
        whole, nb = p99_ms(reports, start, t_prod + WARM, t_down)
        after, na = p99_ms(reports, start, t_isr, t_isr + AFTER)
        behind_mib = RATE * SIZE * (t_up - t_down) / (1 << 20)
        got = {"before": before, "whole": whole, "during": during, "from_start": from_start,
               "after": after, "rejoin_s": t_isr - t_up,
               "unfenced_s": None if t_unfenced is None else t_unfenced - t_up,
               "behind_mib": behind_mib, "errors": int(summary["errors"]), "follower": f}
        lib.log("round %d: follower %d down %.0f s (%.0f MiB behind); back in the ISR %.2f s "
                "after its start (unfenced after %s s); p99 before %.2f ms (median of %d "
                "windows of %.2f s; the whole %.0f s, %d records: %.2f ms), during catch-up "
                "%.2f ms (%d records; from its start %.2f ms), after %.2f ms (%d); %d records "
                "failed" %
                (i + 1, f, t_up - t_down, behind_mib, got["rejoin_s"],
                 "-" if t_unfenced is None else "%.2f" % got["unfenced_s"], before, len(wins),
                 width, t_down - t_prod - WARM, nb, whole, during, nd, from_start, after, na,
                 got["errors"]))
        return got
    finally:
        c.stop()


def main():
    rounds = [one_round(i) for i in range(ROUNDS)]
    best = min(rounds, key=lambda r: r["during"] / r["before"])
    lib.result("catchup_p99_ratio", best["during"] / best["before"], "x", "<=", 2.0,
               "p99 during catch-up %.2f / before %.2f ms (the whole steady state: %.2f ms; "
               "from its start to the ISR %.2f ms; after %.2f ms) at %d records/s, %.0f MiB "
               "behind (%.0f s down); back in the ISR %.2f s after its start; rounds: ratio %s, "
               "rejoin %s s; load average %.1f" %
               (best["during"], best["before"], best["whole"], best["from_start"], best["after"],
                RATE,
                best["behind_mib"], BEHIND, best["rejoin_s"],
                ", ".join("%.2f" % (r["during"] / r["before"]) for r in rounds),
                ", ".join("%.2f" % r["rejoin_s"] for r in rounds), os.getloadavg()[0]))


if __name__ == "__main__":
    main()
