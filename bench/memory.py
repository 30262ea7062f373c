#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Resident memory of an idle release-build tallyd holding 1,000 partitions
(BENCH_MEM_LAYOUT: "100x10" topics x partitions, the default, or "1000x1"), from
VmRSS in /proc/<pid>/status a few seconds after the last topic was created.
Target < 64 MiB."""
import os
import time

import lib

LAYOUT = os.environ.get("BENCH_MEM_LAYOUT", "100x10")


def main():
    topics, parts = (int(x) for x in LAYOUT.split("x"))
    t = lib.Tallyd("memory")
    try:
        empty = lib.rss_kib(t.pid)
        for i in range(topics):
            t.create_topic("mem-%04d" % i, parts)
        time.sleep(5)
        rss = lib.rss_kib(t.pid)
        lib.log("VmRSS: %.1f MiB at start, %.1f MiB with %d topics x %d partitions" %
                (empty / 1024.0, rss / 1024.0, topics, parts))
        lib.result("idle_rss_1000_parts", rss / 1024.0, "MiB", "<", 64,
                   "%s topics x partitions, %.1f MiB with none" % (LAYOUT, empty / 1024.0))
    finally:
        t.stop()


if __name__ == "__main__":
    main()
