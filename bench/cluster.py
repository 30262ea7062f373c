#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Replication on a 3-node cluster (issue 16): what a follower costs, what serving two
followers costs the leader, and what acks=all costs a producer.

replication_cpu_ratio: a 3-node cluster (bench/clusterlib.py), unpinned (BENCH_CLUSTER_PIN=1
pins node 1 to the first CPU, nodes 2 and 3 and the load generators to the others: the
second CPU then carries two servers and up to three load generators, and per-GiB costs
follow how crowded each CPU is more than what each node does). Each run, loadgen (acks=all,
512 KiB batches of 1 KiB records, 4 connections x 4 in flight, one partition each) sends
BENCH_CLUSTER_BYTES (default 1g) into fresh 4-partition topics, deleted after the run:
- "rf1": one topic with RF=1 on node 1, loadgen to node 1;
- "rf1x3": one RF=1 topic on each node and three loadgens at once, so that the machine
  writes as many page-cache bytes as in the RF=3 run;
- "rf3": one topic with replicas 1,2,3 (node 1 leads, 2 and 3 follow), loadgen to node 1.
CPU is the on-CPU time of every thread of each tallyd over the run
(/proc/<pid>/task/*/schedstat). Before each run the dirty pages are written back and the
pages the last run freed are left BENCH_FRESH_WAIT (4) s to go back to the hypervisor, so
that every run writes into fresh pages (README, "Reading the figures"). The figure is a
follower's CPU s per GiB replicated (the better of nodes 2 and 3 in "rf3") ÷ an RF=1
leader's CPU s per GiB ingested (the better of nodes 2 and 3 in "rf1x3": the same
processes in the same places), the best round of each side; the line also gives node 1
ingesting alone ("rf1"). leader_rf3_cpu_ratio: node 1 in "rf3" ÷ node 1 in "rf1x3", and
their difference, the leader's cost of serving two followers per GiB. One unmeasured
warm-up run, then BENCH_ROUNDS (3) rounds.

acks_p99_ratio: the same cluster, a topic of 3 partitions RF=3 whose leaders are nodes 1,
2 and 3; two build/bench/latency producers (librdkafka, linger.ms=0) at once, one with
acks=all and one with acks=1, each BENCH_LAT_RATE (default 2000) 1 KiB records/s for
BENCH_LAT_SECONDS (10): run together, a stall of the shared machine meets both, where
runs one after the other meet different stalls (their p99s then spread 10x). BENCH_ROUNDS
rounds; the figure is the best acks=all p99 ÷ the best acks=1 p99, the line also gives
each round's paired ratio and the load average.

After the replication rounds, the deterministic counters (bench/counters.py; BENCH_COUNTERS=0
skips them, BENCH_CLUSTER_PARTS picks among replication, counters and acks): two traced runs of BENCH_COUNT_BYTES (default 256m), strace -c -f and minor
faults, an RF=1 topic on node 1 (node 1 traced) then an RF=3 one led by node 1 (nodes 1 and 2
traced). replication_syscall_ratio: node 2's system calls per GiB replicated ÷ node 1's per GiB
ingested at RF=1; leader_rf3_syscall_ratio: node 1 at RF=3 ÷ at RF=1 (both informational)."""
import os
import threading
import time

import clusterlib as cl
import counters
import lib

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))


def size(env, default):
    v = os.environ.get(env, default).lower()
    mult = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}.get(v[-1:], 1)
    return int(v.rstrip("kmg")) * mult


BYTES = size("BENCH_CLUSTER_BYTES", "1g")
# Three servers and their load generators on two CPUs: pinning node 1 alone to the first
# CPU makes the contention lopsided (README), so the cluster runs unpinned unless asked.
PIN = os.environ.get("BENCH_CLUSTER_PIN", "0") == "1"
FRESH_WAIT = float(os.environ.get("BENCH_FRESH_WAIT", "4"))
COUNT_BYTES = size("BENCH_COUNT_BYTES", "256m")
LAT_RATE = int(os.environ.get("BENCH_LAT_RATE", "2000"))
LAT_SECONDS = float(os.environ.get("BENCH_LAT_SECONDS", "10"))


def delete_topic(c, name):
    lib.run([lib.TALLY, "-b", c.bootstrap, "topics", "delete", name], check=False)


def fresh_pages():
    """Writes back the dirty pages, then waits until the kernel has handed the pages freed
    by the last run's deleted topics back to the hypervisor (free page reporting, about 2 s
    after they are freed, on this VM): every run then writes into fresh page-cache pages,
    whose first touch costs a host page fault. A run that started within 2 s of a deletion
    would instead reuse some of the freed pages at a fifth of the cost (see README)."""
    lib.settle()
    time.sleep(FRESH_WAIT)


def loadgen(*args):
    _, out, _ = lib.run([os.path.join(lib.BENCH_BIN, "loadgen")] + [str(a) for a in args],
                        cpus=lib.CLIENT_CPUS if PIN else None)
    return lib.kv_line(out.strip().splitlines()[-1])


def loadgen_to(c, node, topic, nbytes, out):
    out[node] = loadgen("produce", "--port", c.nodes[node].port, "--topic", topic,
                            "--partitions", 4, "--connections", 4, "--inflight", 4,
                            "--bytes", nbytes, "--batch-bytes", 512 << 10, "--acks", "all")


def one_run(c, name, layout, nbytes):
    """One measured run. layout "rf3": a 4-partition RF=3 topic led by node 1, loadgen to
    node 1; "rf1": a 4-partition RF=1 topic on node 1; "rf1x3": one such topic on each node
    and three loadgens at once (the same page-cache writes as "rf3"). Returns
    ({node: GiB it ingested or replicated}, {node: CPU s}, seconds)."""
    if layout == "rf3":
        topics = {1: (name, [[1, 2, 3]] * 4)}
    elif layout == "rf1":
        topics = {1: (name, [[1]] * 4)}
    else:
        topics = {n: ("%s-n%d" % (name, n), [[n]] * 4) for n in c.nodes}
    for t, a in topics.values():
        c.create_topic(t, a)
    fresh_pages()
    before = {n: nd.cpu() for n, nd in c.nodes.items()}
    t0 = time.monotonic()
    res = {}
    threads = [threading.Thread(target=loadgen_to, args=(c, n, t, nbytes, res))
               for n, (t, _a) in topics.items()]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    secs = time.monotonic() - t0
    after = {n: nd.cpu() for n, nd in c.nodes.items()}
    for t, _a in topics.values():
        delete_topic(c, t)
    if len(res) != len(topics):
        raise RuntimeError("a loadgen failed")
    if layout == "rf3":
        gib = {n: res[1]["bytes"] / lib.GIB for n in c.nodes}
    else:
        gib = {n: res[n]["bytes"] / lib.GIB if n in res else 0.0 for n in c.nodes}
    return gib, {n: after[n] - before[n] for n in before}, secs


def per_gib(gib, cpu, n):
    return cpu[n] / gib[n] if gib[n] else None


def replication(c):
    one_run(c, "warmup", "rf3", BYTES // 2)
    rows = []
    for i in range(ROUNDS):
        r = {}
        for layout in ("rf1", "rf1x3", "rf3"):
            gib, cpu, secs = one_run(c, "%s-%d" % (layout, i), layout, BYTES)
            r[layout] = {n: per_gib(gib, cpu, n) for n in c.nodes}
            r[layout]["secs"] = secs
        rows.append(r)
        lib.log("round %d: RF=1 leader alone %.3f CPU s/GiB (%.1f s); three RF=1 leaders at "
                "once %.3f / %.3f / %.3f (%.1f s); RF=3 leader %.3f, followers %.3f / %.3f "
                "(%.1f s)" % (i + 1, r["rf1"][1], r["rf1"]["secs"], r["rf1x3"][1],
                              r["rf1x3"][2], r["rf1x3"][3], r["rf1x3"]["secs"], r["rf3"][1],
                              r["rf3"][2], r["rf3"][3], r["rf3"]["secs"]))
    # Each side against the same nodes (so the same CPUs) in the "rf1x3" run: nodes 2 and 3
    # share the load generators' CPUs, node 1 has the first to itself.
    fol = min(min(r["rf3"][2], r["rf3"][3]) for r in rows)
    base = min(min(r["rf1x3"][2], r["rf1x3"][3]) for r in rows)
    lead3 = min(r["rf3"][1] for r in rows)
    lead1x3 = min(r["rf1x3"][1] for r in rows)
    lead1 = min(r["rf1"][1] for r in rows)
    lib.result("replication_cpu_ratio", fol / base, "x", "<=", 1.0,
               "follower %.3f CPU s/GiB replicated / RF=1 leader %.3f CPU s/GiB ingested, both "
               "nodes 2-3 while all three nodes write (rf1x3); node 1 ingesting alone %.3f; "
               "rounds %s" %
               (fol, base, lead1,
                ", ".join("%.2f" % (min(r["rf3"][2], r["rf3"][3]) /
                                    min(r["rf1x3"][2], r["rf1x3"][3])) for r in rows)))
    lib.result("leader_rf3_cpu_ratio", lead3 / lead1x3, "x", "<=", 2.0,
               "node 1 leading RF=3 %.3f / leading RF=1 (rf1x3) %.3f CPU s/GiB: serving two "
               "followers costs the leader %.3f CPU s/GiB (informational target); rounds %s" %
               (lead3, lead1x3, lead3 - lead1x3,
                ", ".join("%.3f" % (r["rf3"][1] - r["rf1x3"][1]) for r in rows)))


def acks_latency(c):
    c.create_topic("lat", [[1, 2, 3], [2, 3, 1], [3, 1, 2]])
    p99 = {"all": [], "1": []}
    p50 = {"all": [], "1": []}
    # A short unmeasured run connects and warms up every path.
    cl.latency_run(c.bootstrap, "lat", LAT_RATE, 2, acks="all")
    for i in range(ROUNDS):
        # Both producers at once, so that a stall of the shared machine meets both.
        procs = {acks: cl.latency_run(c.bootstrap, "lat", LAT_RATE, LAT_SECONDS, acks=acks,
                                      popen=True) for acks in ("all", "1")}
        for acks, pr in procs.items():
            out, err = pr.communicate(timeout=LAT_SECONDS + 120)
            if pr.returncode != 0:
                raise RuntimeError("latency acks=%s failed: %s" % (acks, err.strip()))
            s = cl.parse_summary(out)
            if s["errors"]:
                raise RuntimeError("acks=%s: %d delivery errors" % (acks, s["errors"]))
            p99[acks].append(s["p99_ms"])
            p50[acks].append(s["p50_ms"])
            lib.log("round %d acks=%s: %d records, p50 %.2f ms, p99 %.2f ms, p99.9 %.2f ms, "
                    "max %.2f ms" % (i + 1, acks, s["records"], s["p50_ms"], s["p99_ms"],
                                     s["p999_ms"], s["max_ms"]))
    ratio = min(p99["all"]) / min(p99["1"])
    lib.result("acks_p99_ratio", ratio, "x", "<=", 2.5,
               "acks=all p99 %.2f / acks=1 p99 %.2f ms, each %d records/s at once (p50 %.2f / "
               "%.2f ms); rounds acks=all %s, acks=1 %s (paired ratios %s); load average %.1f" %
               (min(p99["all"]), min(p99["1"]), LAT_RATE, min(p50["all"]), min(p50["1"]),
                ", ".join("%.2f" % x for x in p99["all"]),
                ", ".join("%.2f" % x for x in p99["1"]),
                ", ".join("%.2f" % (a / b) for a, b in zip(p99["all"], p99["1"])),
                os.getloadavg()[0]))


def counted_run(c, name, layout, traced):
    """One run of COUNT_BYTES with strace -c -f and the minor-fault count on each node in
    traced; returns {node: (syscalls per GiB, {call: count}, minor faults per GiB)}."""
    if layout == "rf3":
        c.create_topic(name, [[1, 2, 3]] * 4)
    else:
        c.create_topic(name, [[1]] * 4)
    fresh_pages()
    st = {n: counters.Strace(c.nodes[n].pid) for n in traced}
    f0 = {n: lib.minflt(c.nodes[n].pid) for n in traced}
    res = {}
    loadgen_to(c, 1, name, COUNT_BYTES, res)
    f1 = {n: lib.minflt(c.nodes[n].pid) for n in traced}
    calls = {n: st[n].stop() for n in traced}
    delete_topic(c, name)
    gib = res[1]["bytes"] / lib.GIB
    out = {}
    for n in traced:
        total, detail = counters.syscall_summary(calls[n], gib)
        out[n] = (total, detail, (f1[n] - f0[n]) / gib)
    return out


def replication_counters(c):
    """The deterministic counters (issue 20 item 1) for replication: the follower's system
    calls and minor faults per GiB replicated against the leader's own per GiB ingested at
    RF=1, and what serving two followers adds to the leader's, each from a traced run of
    its own (tracing slows the nodes; no CPU figure comes from these runs)."""
    if not counters.have("strace"):
        lib.log("counters skipped: no strace (apt-get install strace)")
        return
    rf1 = counted_run(c, "count-rf1", "rf1", [1])[1]
    rf3 = counted_run(c, "count-rf3", "rf3", [1, 2])
    lib.log("syscalls per GiB, node 1 leading RF=1: %.0f (%s)" % (rf1[0], rf1[1]))
    lib.log("syscalls per GiB, node 1 leading RF=3: %.0f (%s)" % (rf3[1][0], rf3[1][1]))
    lib.log("syscalls per GiB, node 2 following:    %.0f (%s)" % (rf3[2][0], rf3[2][1]))
    lib.log("minor faults per GiB: node 1 RF=1 %.0f, RF=3 %.0f; node 2 following %.0f" %
            (rf1[2], rf3[1][2], rf3[2][2]))
    lib.result("replication_syscall_ratio", rf3[2][0] / rf1[0], "x", None, None,
               "strace -c -f over %d MiB: a follower %.0f syscalls per GiB replicated / the "
               "leader %.0f per GiB ingested at RF=1" % (COUNT_BYTES >> 20, rf3[2][0], rf1[0]))
    lib.result("leader_rf3_syscall_ratio", rf3[1][0] / rf1[0], "x", None, None,
               "node 1 leading RF=3 %.0f / leading RF=1 %.0f syscalls per GiB ingested: two "
               "followers' fetches add %.0f" % (rf3[1][0], rf1[0], rf3[1][0] - rf1[0]))


def main():
    parts = os.environ.get("BENCH_CLUSTER_PARTS", "replication,counters,acks").split(",")
    pins = {1: lib.SERVER_CPUS, 2: lib.CLIENT_CPUS, 3: lib.CLIENT_CPUS} if PIN else None
    c = cl.Cluster("cluster", pins=pins)
    try:
        if "replication" in parts:
            replication(c)
        if "counters" in parts and os.environ.get("BENCH_COUNTERS", "1") != "0":
            replication_counters(c)
        if "acks" in parts:
            acks_latency(c)
    finally:
        c.stop()


if __name__ == "__main__":
    main()
