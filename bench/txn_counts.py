#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Where a transaction's time goes, in counts that repeat (issue 20 item 6), not seconds:

  for librdkafka (confluent_kafka) and KafkaJS (bench/txn_counts.js, when
  tests/compat/kafkajs has its node_modules: `npm install` there) at 10, 100 and 1,000
  records per transaction (1 KiB each, 4 partitions, BENCH_TXN_COUNT_TXNS transactions,
  default 40, after one unmeasured one), the client's requests per transaction by API (its
  own counts: librdkafka's statistics brokers[].req, KafkaJS's REQUEST events, which name
  FindCoordinator "GroupCoordinator"), and the broker's CONCURRENT_TRANSACTIONS answers per
  transaction (tally_request_errors_total on /metrics, docs/metrics.md), against an
  idempotent producer sending the same records with one flush (send) per round, so that both
  wait for their acks as often. Then `tally perf produce --transactional
  --transaction-duration-ms 100` (txn_client_ratio's load, BENCH_TXN_COUNT_PERF_RECORDS,
  default 300,000): every request the broker served per transaction (EndTxn), its own
  included (KIP-890 verifications, WriteTxnMarkers over loopback), and the errors.

Printed per client and size: one COUNTS line per mode, then
  RESULT txn_requests_ratio_<n>      client requests per round, transactional ÷ idempotent
                                     (target: KIP-98's minimum, one AddPartitionsToTxn and one
                                     EndTxn more: 1.5 for librdkafka's 4 Produce per round,
                                     3 for KafkaJS's one)
  RESULT txn_concurrent_per_txn_<n>  CONCURRENT_TRANSACTIONS answers per transaction (target 0)
  RESULT txn_wall_ratio_<n>          seconds, transactional ÷ idempotent (informational: noisy)
(KafkaJS's figures are named txn_*_kafkajs_<n>.) Runs the release tallyd (TALLYD overrides
it) with bench/txn.py's settings; one to three minutes."""
import json
import os
import re
import subprocess
import sys
import urllib.request

import lib

SIZES = [int(s) for s in os.environ.get("BENCH_TXN_COUNT_SIZES", "10,100,1000").split(",")]
TXNS = int(os.environ.get("BENCH_TXN_COUNT_TXNS", "40"))
PERF_RECORDS = int(os.environ.get("BENCH_TXN_COUNT_PERF_RECORDS", "300000"))
PARTS = 4
PY = "/usr/bin/python3"  # Debian's Python has confluent_kafka
SETTINGS = {"transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "offsets.topic.replication.factor": "1",
            "group.initial.rebalance.delay.ms": "0"}

# The client: N records per transaction (or per flush), T times; prints one JSON line with
# librdkafka's request counts by API (summed over brokers) and the seconds the loop took.
CLIENT = r"""
import json, sys, time
from confluent_kafka import Producer
bs, topic, mode, n, txns, parts = sys.argv[1], sys.argv[2], sys.argv[3], *map(int, sys.argv[4:7])
stats = []
conf = {"bootstrap.servers": bs, "enable.idempotence": True, "statistics.interval.ms": 100,
        "stats_cb": stats.append}
if mode == "txn":
    conf["transactional.id"] = "bench-counts-%s" % topic
p = Producer(conf)
if mode == "txn":
    p.init_transactions(30)
payload = b"x" * 1024


def snapshot():
    del stats[:]
    while not stats:
        p.poll(0.05)
    req = {}
    for b in json.loads(stats[-1])["brokers"].values():
        for api, c in b.get("req", {}).items():
            req[api] = req.get(api, 0) + c
    return req


def one():
    if mode == "txn":
        p.begin_transaction()
    for i in range(n):
        while True:
            try:
                p.produce(topic, payload, partition=i % parts)
                break
            except BufferError:
                p.poll(0.01)
    if mode == "txn":
        p.commit_transaction(30)
    else:
        assert p.flush(30) == 0


# One unmeasured round first: the first batch to a fresh topic waits for its metadata.
one()
r0 = snapshot()
t0 = time.monotonic()
for _ in range(txns):
    one()
secs = time.monotonic() - t0
r1 = snapshot()
req = {api: c - r0.get(api, 0) for api, c in r1.items() if c - r0.get(api, 0) > 0}
print(json.dumps({"req": req, "secs": secs}))
"""

ERR_RE = re.compile(r'^tally_request_errors_total\{api="([^"]+)",error="([^"]+)"\} (\S+)')
REQ_RE = re.compile(r'^tally_requests_total\{api="([^"]+)"\} (\S+)')


def scrape(port, requests=False):
    """{(api, error): count} from tally_request_errors_total, or with requests
    {api: count} from tally_requests_total."""
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
        text = r.read().decode()
    out = {}
    for line in text.splitlines():
        m = (REQ_RE if requests else ERR_RE).match(line)
        if m and requests:
            out[m.group(1)] = float(m.group(2))
        elif m:
            out[(m.group(1), m.group(2))] = float(m.group(3))
    return out


def perf_counts(t, mport):
    """`tally perf produce --transactional --transaction-duration-ms 100` (txn_client_ratio's
    load): CONCURRENT_TRANSACTIONS answers per transaction (EndTxn requests) under load."""
    q0, e0 = scrape(mport, True), scrape(mport)
    rc, rate, line = t.produce_fresh(PERF_RECORDS, extra=["--transactional",
                                                          "--transaction-duration-ms", "100"])
    q1, e1 = scrape(mport, True), scrape(mport)
    if rc != 0:
        raise RuntimeError("perf produce: %s" % line)
    q = {api: q1[api] - q0.get(api, 0) for api in q1 if q1[api] - q0.get(api, 0) > 0}
    e = {k: e1[k] - e0.get(k, 0) for k in e1 if e1[k] - e0.get(k, 0) > 0}
    txns = max(q.get("EndTxn", 0), 1)
    print("COUNTS perf --transactional: %d transactions, %.0f records/s; broker requests per "
          "transaction (client and broker-internal): %s; errors: %s" % (
              txns, rate, ", ".join("%s %.2f" % (a, c / txns) for a, c in sorted(q.items())),
              ", ".join("%s/%s %.2f" % (a, x, c / txns) for (a, x), c in sorted(e.items()))
              or "none"), flush=True)
    conc = sum(c for (a, x), c in e.items() if x == "CONCURRENT_TRANSACTIONS")
    lib.result("txn_perf_concurrent_per_txn", conc / txns, "/txn", "<=", 0,
               "CONCURRENT_TRANSACTIONS answers per transaction during tally perf produce "
               "--transactional (%d records, 100 ms transactions)" % PERF_RECORDS)


KAFKAJS = os.path.join(lib.REPO, "tests", "compat", "kafkajs", "node_modules")


def run_client(t, topic, mode, n, client="librdkafka"):
    t.create_topic(topic, PARTS)
    if client == "kafkajs":
        argv = ["node", os.path.join(lib.REPO, "bench", "txn_counts.js")]
        os.environ["NODE_PATH"] = KAFKAJS
    else:
        argv = [PY, "-c", CLIENT]
    rc, out, err = lib.run(argv + [t.bootstrap, topic, mode, str(n), str(TXNS), str(PARTS)],
                           check=False, cpus=lib.CLIENT_CPUS)
    lib.run(t.tally("topics", "delete", topic), check=False)
    if rc != 0:
        raise RuntimeError("client %s %d: %s" % (mode, n, err.strip()[-500:]))
    return json.loads(out.strip().splitlines()[-1])


def main():
    mport = lib.free_port()
    settings = dict(SETTINGS, **{"metrics.listener": "127.0.0.1:%d" % mport})
    t = lib.Tallyd("txncounts", settings=settings, pin=lib.PIN)
    try:
        run_client(t, "warm", "txn", 1)  # creates __transaction_state, loads the shards
        clients = ["librdkafka"]
        if os.path.isdir(os.path.join(KAFKAJS, "kafkajs")):
            clients.append("kafkajs")
        else:
            lib.log("no KafkaJS (npm install in tests/compat/kafkajs): librdkafka only")
        for client, n in [(c, n) for c in clients for n in SIZES]:
            got = {}
            for mode in ("idem", "txn"):
                e0, q0 = scrape(mport), scrape(mport, True)
                got[mode] = run_client(t, "counts-%s-%s-%d" % (client, mode, n), mode, n, client)
                e1, q1 = scrape(mport), scrape(mport, True)
                got[mode]["errors"] = {k: v - e0.get(k, 0) for k, v in e1.items()
                                       if v - e0.get(k, 0) > 0}
                # What the broker served beyond the client's own requests: its KIP-890
                # verifications and markers (to itself over loopback), per transaction.
                served = {a: v - q0.get(a, 0) for a, v in q1.items() if v - q0.get(a, 0) > 0}
                extra = {a: served.get(a, 0) - got[mode]["req"].get(a, 0) * (TXNS + 1) / TXNS
                         for a in ("AddPartitionsToTxn", "WriteTxnMarkers")}
                per = ", ".join("%s %.2f" % (api, c / TXNS)
                                for api, c in sorted(got[mode]["req"].items()))
                # The broker's counts also cover the client's unmeasured first round.
                errs = ", ".join("%s/%s %.2f" % (a, e, c / (TXNS + 1))
                                 for (a, e), c in sorted(got[mode]["errors"].items()))
                own = ", ".join("%s %.2f" % (a, c / (TXNS + 1)) for a, c in sorted(extra.items())
                                if c > 0)
                print("COUNTS %s %s n=%d per transaction: requests %s; the broker's own: %s; "
                      "broker errors: %s; %.2f s" % (client, mode, n, per, own or "none",
                                                    errs or "none", got[mode]["secs"]),
                      flush=True)
            total = {m: sum(got[m]["req"].values()) for m in got}
            conc = sum(c for (a, e), c in got["txn"]["errors"].items()
                       if e == "CONCURRENT_TRANSACTIONS")
            tag = ("" if client == "librdkafka" else client + "_") + str(n)
            floor = 1.5 if client == "librdkafka" else 3
            lib.result("txn_requests_ratio_%s" % tag, total["txn"] / max(total["idem"], 1), "x",
                       "<=", floor, "%s requests per %d transactions of %d records: "
                       "transactional %d / idempotent %d" % (client, TXNS, n, total["txn"],
                                                             total["idem"]))
            lib.result("txn_concurrent_per_txn_%s" % tag, conc / (TXNS + 1), "/txn", "<=", 0,
                       "CONCURRENT_TRANSACTIONS answers (broker) per transaction")
            lib.result("txn_wall_ratio_%s" % tag, got["txn"]["secs"] / max(got["idem"]["secs"],
                                                                         1e-9),
                       "x", "<=", 1.03, "informational: %.2f s / %.2f s" % (
                           got["txn"]["secs"], got["idem"]["secs"]))
        perf_counts(t, mport)
    finally:
        t.stop()


if __name__ == "__main__":
    sys.exit(main())
