#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""One /metrics scrape of a broker hosting 10,000 partitions, partition level on (issue 19).

A release-build tallyd with metrics.listener on a free loopback port and BENCH_SCRAPE_LAYOUT
("10x1000": topics x partitions) created; once tally_partitions reports them all and the
broker is idle, BENCH_SCRAPES (20) scrapes of the 0.0.4 text, 0.25 s apart, each timed:

- loop hold: the longest the scrape held the event loop at once (one slice of its walk over
  the partitions, or its last step), from tally_metrics_render_seconds (the previous
  scrape's, so each scrape's value is read from the one after it); the figure is the longest
  over the scrapes, target <= 5 ms (wall time: a loop thread preempted by other processes
  mid-slice counts, so a loaded machine shows it in the max more than in the p90/median);
- the event-loop lag histogram (tally_event_loop_lag_seconds, a 100 ms timer's lateness)
  over the scrapes: the highest bucket any firing fell in, as a check on the above from the
  loop's side (a firing due during a hold is late by what remains of it);
- broker CPU per scrape (utime + stime of every thread, /proc/<pid>/stat, which includes the
  HTTP thread formatting the per-partition families; summed over the scrapes and divided, as
  the clock ticks are 10 ms) and the response time (request sent to the last byte read,
  the median).

With BENCH_SCRAPE_BEFORE=<tallyd binary> the same is measured for that binary first (e.g.
one built from the commit before the change) and the ratios after / before are printed.
No target on CPU or response time: they are reported.

BENCH_SCRAPE_GROUPS=N (default 0): N groups whose committed offset on a topic of 100,000
lz4-compressed records moves before every scrape, so that each scrape reads N record
timestamps for tally_group_lag_seconds (a batch each, decompressed: on the thread pool since
issue 20 item 4, the scrape going over the groups again once the reads are done)."""
import http.client
import os
import re
import statistics
import sys
import time

import lib

sys.path.insert(0, os.path.join(lib.REPO, "tests", "integration"))
import kproto as kp  # noqa: E402

LAYOUT = os.environ.get("BENCH_SCRAPE_LAYOUT", "10x1000")
SCRAPES = int(os.environ.get("BENCH_SCRAPES", "20"))
BEFORE = os.environ.get("BENCH_SCRAPE_BEFORE", "")
GROUPS = int(os.environ.get("BENCH_SCRAPE_GROUPS", "0"))
LAG_RECORDS = 100000
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$', re.M)


def get(port):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        t0 = time.monotonic()
        c.request("GET", "/metrics")
        r = c.getresponse()
        body = r.read().decode()
        dt = time.monotonic() - t0
        assert r.status == 200, r.status
        return body, dt
    finally:
        c.close()


def samples(text, name):
    """[(labels text, value)] of `name`'s samples."""
    return [(m.group(2) or "", float(m.group(3))) for m in SAMPLE.finditer(text)
            if m.group(1) == name]


def one(text, name):
    return samples(text, name)[0][1]


def lag_buckets(text):
    return {lab: v for lab, v in samples(text, "tally_event_loop_lag_seconds_bucket")}


def commit_all(c, round_):
    """Each of the GROUPS groups commits a new offset on scrape-lag-0 (OffsetCommit v2, a
    simple commit): the offsets differ from the last round's."""
    for g in range(GROUPS):
        off = (round_ * 7919 + g * 104729) % LAG_RECORDS
        body = (kp.string("scrape-g%d" % g) + kp.i32(-1) + kp.string("") + kp.i64(-1) +
                kp.array(["scrape-lag"], lambda t, off=off: kp.string(t) + kp.array(
                    [(0, off)], lambda kv: kp.i32(kv[0]) + kp.i64(kv[1]) + kp.string(None))))
        corr = c.next_corr()
        c.send(kp.frame(kp.header(8, 2, corr) + body))
        _, answer = c.recv_response()
        r = kp.Reader(answer)
        for _ in range(r.i32()):
            r.string()
            for _ in range(r.i32()):
                r.i32()
                err = r.i16()
                if err != 0:
                    raise RuntimeError("OffsetCommit answered %d" % err)


def measure(binary, tag):
    topics, parts = (int(x) for x in LAYOUT.split("x"))
    port = lib.free_port()
    os.environ["TALLYD"] = binary
    t = lib.Tallyd("scrape-" + tag, settings={"metrics.listener": "127.0.0.1:%d" % port,
                                               "metrics.partition.level": "true"})
    try:
        # The partitions' logs are opened on the loop, thousands at a time, which holds it for
        # seconds on a slow filesystem: a long client timeout, and scrapes that may get 503
        # (the loop did not render within 10 s) until the opening is done.
        for i in range(topics):
            lib.run(t.tally("--timeout", "300000", "topics", "create", "scrape-%03d" % i,
                            "--partitions", parts))
        deadline = time.monotonic() + 600
        while True:
            try:
                if one(get(port)[0], "tally_partitions") >= topics * parts:
                    break
            except AssertionError:
                pass  # 503
            if time.monotonic() > deadline:
                raise RuntimeError("the partitions did not all appear")
            time.sleep(1)
        conn = None
        if GROUPS:
            lib.run(t.tally("topics", "create", "scrape-lag", "--partitions", 1, "--config",
                            "compression.type=lz4"))
            rc, _rate, line = lib.perf_produce(t.bootstrap, "scrape-lag", LAG_RECORDS, size=100)
            if rc != 0:
                raise RuntimeError("perf produce: %s" % line)
            conn = kp.Conn(t.port)
            deadline = time.monotonic() + 60
            while True:  # the first commits wait for __consumer_offsets to be created
                try:
                    commit_all(conn, 0)
                    break
                except RuntimeError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.2)
        time.sleep(10)  # the creation's file writes drain
        text, _ = get(port)
        lag0 = lag_buckets(text)
        holds, walls, cpu = [], [], 0.0
        for round_ in range(SCRAPES):
            time.sleep(0.25)
            if conn is not None:
                commit_all(conn, round_ + 1)
            c0 = lib.cpu_seconds(t.pid)
            text, dt = get(port)
            cpu += lib.cpu_seconds(t.pid) - c0
            walls.append(dt)
            holds.append(one(text, "tally_metrics_render_seconds"))  # the scrape before it
        series = len(samples(text, "tally_partition_high_watermark"))
        lag_series = len(samples(text, "tally_group_lag_seconds"))
        text, _ = get(port)
        holds.append(one(text, "tally_metrics_render_seconds"))
        holds = holds[1:]  # the first is the warm-up scrape's
        lag1 = lag_buckets(text)
        # Cumulative buckets: the lowest le whose count rose by as much as +Inf's did bounds
        # every firing.
        inf = [lab for lab in lag1 if 'le="+Inf"' in lab][0]
        rise = lag1[inf] - lag0.get(inf, 0)
        bound = None
        for lab in sorted(lag1, key=lambda lab: float(re.search(r'le="([^"]+)"', lab)
                                                        .group(1).replace("+Inf", "inf"))):
            if lag1[lab] - lag0.get(lab, 0) >= rise:
                bound = re.search(r'le="([^"]+)"', lab).group(1)
                break
        out = {"hold_ms": max(holds) * 1000, "hold_median_ms": statistics.median(holds) * 1000,
               "hold_p90_ms": sorted(holds)[int(0.9 * (len(holds) - 1))] * 1000,
               "cpu_ms": cpu / SCRAPES * 1000,
               "response_ms": statistics.median(walls) * 1000, "lag_bound": bound,
               "lag_firings": rise, "series": series, "bytes": len(text),
               "lag_series": lag_series}
        lib.log("%s: %d partition series, %d bytes; loop hold max %.2f ms (p90 %.2f, median %.2f); "
                "CPU per scrape %.1f ms (mean), response %.1f ms (median); every lag-timer firing "
                "(%d) within %s s" % (tag, series, len(text), out["hold_ms"],
                                      out["hold_p90_ms"], out["hold_median_ms"], out["cpu_ms"],
                                      out["response_ms"], rise, bound))
        if GROUPS:
            lib.log("%s: %d groups moved before each scrape, %d tally_group_lag_seconds series "
                    "in the last" % (tag, GROUPS, lag_series))
            conn.close()
        return out
    finally:
        t.stop()


def main():
    after_bin = os.environ.get("TALLYD", os.path.join(lib.BUILD, "tallyd"))
    before = measure(BEFORE, "before") if BEFORE else None
    after = measure(after_bin, "after")
    note = "%s partitions, %d scrapes, p90 %.2f ms, median %.2f ms; lag-timer firings " \
        "within %s s" % (LAYOUT, SCRAPES, after["hold_p90_ms"], after["hold_median_ms"],
                         after["lag_bound"])
    lib.result("scrape_loop_hold_ms", after["hold_ms"], "ms", "<=", 5.0, note)
    lib.result("scrape_cpu_ms", after["cpu_ms"], "ms", None, None, "broker CPU per scrape")
    lib.result("scrape_response_ms", after["response_ms"], "ms", None, None, "")
    if before:
        for k, name in (("hold_ms", "loop_hold"), ("cpu_ms", "cpu"),
                        ("response_ms", "response")):
            lib.result("scrape_%s_ratio" % name, after[k] / before[k], "after/before", None,
                       None, "%.2f / %.2f ms" % (after[k], before[k]))


if __name__ == "__main__":
    main()
