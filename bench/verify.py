#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`tally verify` (issue 11), two figures, both reported (the issue sets no target):
- verify_check_rate: records read and checked per second in the output-read phase (the
  read_committed, read_uncommitted and second-reader views plus the checker), from --json;
- verify_txn_ratio: the copiers' records/s with transactions ÷ the same copiers with
  transactions off (idempotent producer, synchronous offset commits), no faults, no aborts,
  on the same tallyd. Copier records/s = records ÷ the copy phase's seconds.
BENCH_VERIFY_RECORDS (default 500000: the copy phase includes the copiers' start and group
join, a few seconds, and is timed to the driver's 1 s progress check, so short runs measure
those) records per run, BENCH_ROUNDS (default 2) pairs alternating which goes first; each
side's best run counts. Skipped while tallyd has no transactions."""
import json
import os
import tempfile

import lib

RECORDS = int(os.environ.get("BENCH_VERIFY_RECORDS", "500000"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "2"))
TXN_SETTINGS = {
    "offsets.topic.num.partitions": "5",
    "offsets.topic.replication.factor": "1",
    "group.initial.rebalance.delay.ms": "0",
    "transaction.state.log.num.partitions": "5",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
}


def verify(t, transactional):
    with tempfile.TemporaryDirectory(dir=t.dir) as d:
        jpath = os.path.join(d, "r.json")
        argv = t.tally("verify", "--records", RECORDS, "--partitions", 4, "--copiers", 2,
                       "--faults", "none", "--abort-ratio", 0, "--txn-records", 1000,
                       "--work-dir", os.path.join(d, "w"), "--json", jpath, "--max-seconds", 900)
        if not transactional:
            argv.append("--no-transactions")
        rc, _out, err = lib.run(argv, check=False, timeout=1200)
        if rc != 0 or not os.path.exists(jpath):
            lines = err.strip().splitlines()
            return None, lines[-1] if lines else "exit %d" % rc
        with open(jpath) as f:
            return json.load(f), None


def main():
    t = lib.Tallyd("verify", settings=TXN_SETTINGS)
    try:
        best = {True: None, False: None}
        check_rates = []
        for i in range(ROUNDS):
            for txn in ((True, False) if i % 2 == 0 else (False, True)):
                rep, why = verify(t, txn)
                if rep is None:
                    lib.log("%s run failed: %s" % ("transactional" if txn else "plain", why))
                    if txn:
                        lib.result("verify_txn_ratio", None, "x", ">=", 0,
                                   "skipped: tally verify failed (transactions missing?)")
                        lib.result("verify_check_rate", None, "rec/s", ">=", 0, "skipped")
                        return
                    raise RuntimeError("plain copiers failed: %s" % why)
                rate = rep["records"] / rep["copy_seconds"]
                lib.log("%s: copy %.1f s (%.0f records/s), read+check %d records at %.0f/s" % (
                    "transactional" if txn else "plain", rep["copy_seconds"], rate,
                    rep["records_read"], rep["records_checked_per_second"]))
                best[txn] = max(best[txn] or 0, rate)
                check_rates.append(rep["records_checked_per_second"])
        lib.result("verify_check_rate", max(check_rates), "rec/s", ">=", 0,
                   "reported: output read (3 views) + check")
        lib.result("verify_txn_ratio", best[True] / best[False], "x", ">=", 0,
                   "reported: copiers txn %.0f / plain %.0f records/s" % (best[True],
                                                                         best[False]))
    finally:
        t.stop()


if __name__ == "__main__":
    main()
