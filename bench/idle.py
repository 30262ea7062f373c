#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""An idle 3-node cluster (issue 16): what each node costs doing nothing.

A fresh 3-node cluster (bench/clusterlib.py), one topic of BENCH_IDLE_PARTITIONS (100)
partitions with RF=3 whose leaders rotate over the nodes (so every node leads a third and
follows two thirds: two replica fetch sessions per node, each a long poll of
replica.fetch.wait.max.ms); once every ISR is full and BENCH_IDLE_SETTLE (10) seconds have
passed, each node's CPU (utime + stime of every thread, /proc/<pid>/task/*/schedstat) over
BENCH_IDLE_SECONDS (60). The figure is the busiest node's CPU as % of one core (target
< 2 %); the line also gives the same cluster with no topic (measured first, for a third of
the time) and every round's nodes. BENCH_ROUNDS (default 2) rounds, each a fresh cluster;
the figure is the best round (noise only adds: another process's cache misses and
preemptions make the same work cost more)."""
import os
import time

import clusterlib as cl
import lib

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "2"))
PARTS = int(os.environ.get("BENCH_IDLE_PARTITIONS", "100"))
SECONDS = float(os.environ.get("BENCH_IDLE_SECONDS", "60"))
SETTLE = float(os.environ.get("BENCH_IDLE_SETTLE", "10"))


def measure(c, seconds):
    """{node: % of one core} over `seconds`."""
    before = {n: nd.cpu() for n, nd in c.nodes.items()}
    t0 = time.monotonic()
    time.sleep(seconds)
    dt = time.monotonic() - t0
    return {n: 100.0 * (nd.cpu() - before[n]) / dt for n, nd in c.nodes.items()}


def fmt(pcts):
    return "/".join("%.2f" % pcts[n] for n in sorted(pcts))


def main():
    rounds = []
    for i in range(ROUNDS):
        c = cl.Cluster("idle-%d" % i)
        try:
            time.sleep(SETTLE)
            empty = measure(c, SECONDS / 3)
            c.create_topic("idle", [[1 + (p + k) % 3 for k in range(3)] for p in range(PARTS)])
            time.sleep(SETTLE)
            full = measure(c, SECONDS)
        finally:
            c.stop()
        rounds.append((empty, full))
        lib.log("round %d: %% of a core per node (1/2/3): no topic %s; %d RF=3 partitions %s" %
                (i + 1, fmt(empty), PARTS, fmt(full)))
    best = min(rounds, key=lambda r: max(r[1].values()))
    lib.result("idle_cluster_cpu_pct", max(best[1].values()), "%core", "<", 2.0,
               "busiest node, %d RF=3 partitions over %.0f s; nodes %s; no topic %s; rounds %s"
               % (PARTS, SECONDS, fmt(best[1]), fmt(best[0]),
                  "; ".join(fmt(r[1]) for r in rounds)))


if __name__ == "__main__":
    main()
