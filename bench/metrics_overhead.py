#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What the metrics endpoint costs a producer (issue 19): `tally perf produce` records/s
against a tallyd whose metrics listener is on — partition-level series on, /metrics scraped
once a second all through the run, as Prometheus would — ÷ the same against a tallyd without
a metrics listener, both started here, each run into a fresh 4-partition topic (1 KiB
records, acks=all). Target >= 0.99. BENCH_CLIENT_RECORDS (default 3000000: a few seconds, a few scrapes) records per run;
BENCH_ROUNDS (default 5) pairs, alternating which goes first; noise only slows a run down,
so the figure is the ratio of each side's best run (the per-round ratios are printed too)."""
import os
import threading
import time
import urllib.request

import lib

RECORDS = int(os.environ.get("BENCH_CLIENT_RECORDS", "3000000"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))


class Scraper:
    """GETs /metrics once a second until stop(); counts the scrapes and their bytes."""

    def __init__(self, port):
        self.url = "http://127.0.0.1:%d/metrics" % port
        self.done = threading.Event()
        self.scrapes = self.bytes = self.errors = 0
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()

    def _run(self):
        while not self.done.is_set():
            t0 = time.monotonic()
            try:
                with urllib.request.urlopen(self.url, timeout=10) as r:
                    self.bytes += len(r.read())
                self.scrapes += 1
            except OSError:
                self.errors += 1
            self.done.wait(max(0.0, 1.0 - (time.monotonic() - t0)))

    def stop(self):
        self.done.set()
        self.t.join()


def main():
    on = lib.Tallyd("metrics-on", settings={"metrics.partition.level": "true"})
    off = lib.Tallyd("metrics-off", metrics=False)
    try:
        on.warm_up(RECORDS)
        off.warm_up(RECORDS)
        ons, offs, scrapes = [], [], 0
        for i in range(ROUNDS):
            for kind in (("on", "off") if i % 2 == 0 else ("off", "on")):
                if kind == "on":
                    sc = Scraper(on.metrics_port)
                    rc, rate, line = on.produce_fresh(RECORDS)
                    sc.stop()
                    scrapes += sc.scrapes
                    if rc != 0 or sc.scrapes == 0:
                        raise RuntimeError("metrics-on run failed: %s (%d scrapes, %d errors)" %
                                           (line, sc.scrapes, sc.errors))
                    lib.log("on:  %s (%d scrapes, %.0f KiB each)" %
                            (line, sc.scrapes, sc.bytes / max(sc.scrapes, 1) / 1024))
                    ons.append(rate)
                else:
                    rc, rate, line = off.produce_fresh(RECORDS)
                    if rc != 0:
                        raise RuntimeError("metrics-off run failed: %s" % line)
                    lib.log("off: %s" % line)
                    offs.append(rate)
            lib.log("round %d: ratio %.3f" % (i + 1, ons[-1] / offs[-1]))
        ratios = sorted(a / b for a, b in zip(ons, offs))
        lib.result("metrics_produce_ratio", max(ons) / max(offs), "x", ">=", 0.99,
                   "best of %d: scraped every second %.0f / no metrics listener %.0f records/s "
                   "(%d x 1 KiB, acks=all, %d scrapes); per-round median %.3f" %
                   (ROUNDS, max(ons), max(offs), RECORDS, scrapes, ratios[len(ratios) // 2]))
    finally:
        on.stop()
        off.stop()


if __name__ == "__main__":
    main()
