# SPDX-License-Identifier: Apache-2.0
"""`tally verify` (issue 11, docs/verify.md): the exactly-once check shipped with the product.

- Against librdkafka's in-memory mock cluster, which keeps no transaction markers (so
  read_committed sees aborted transactions) nor transactional offsets, the tool must find
  anomalies and exit 1: the check can fail.
- A run that could not establish a verdict — the cluster unreachable, or every seed record
  refused — exits 2, "inconclusive", never 0.
- Against a real tallyd, the chaos suite's short scenario (20,000 records, 5 faults of each
  copier kind: kill -9, SIGSTOP past the session timeout, a same-id zombie; 5 broker kill -9s)
  must find none. The broker serves transactions: the test asserts EndTxn is advertised
  first, so a dispatch table that lost it fails here instead of skipping the scenario.
"""
import json
import os
import subprocess
import sys

import pytest

import harness
import kproto

END_TXN = 26

# One node: the coordinator topics have one replica; timed-out transactions are looked for
# twice a second; groups rebalance without the initial delay.
TXN_SETTINGS = {
    "offsets.topic.num.partitions": "5",
    "offsets.topic.replication.factor": "1",
    "group.initial.rebalance.delay.ms": "0",
    "transaction.state.log.num.partitions": "5",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "500",
}


def run_verify(args, timeout, bootstrap=None):
    argv = [harness.TALLY] + (["-b", bootstrap] if bootstrap else []) + ["verify"] + args
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)


def test_verify_usage_errors():
    r = run_verify(["--faults", "bogus"], 30)
    assert r.returncode == 2, r.stderr
    r = run_verify(["--broker-faults", "kill"], 30)
    assert r.returncode == 2 and "--broker-fault-cmd" in r.stderr, r.stderr
    r = run_verify(["--help"], 30)
    assert r.returncode == 0 and "torn_transaction" in r.stdout


def test_verify_that_cannot_reach_the_cluster_is_inconclusive(tmp_path):
    """A run that checked nothing is inconclusive (2), never "anomalies" (1) nor a pass."""
    r = run_verify(["--records", "10", "--work-dir", str(tmp_path / "work")], 120,
                   bootstrap="127.0.0.1:%d" % harness.free_port())
    assert r.returncode == 2, r.stdout + r.stderr
    assert "cannot reach" in r.stderr, r.stderr


def test_verify_is_inconclusive_when_the_cluster_refuses_the_seed(broker_factory, tmp_path):
    """A broker that refuses every seed record (message.max.bytes below one batch): nothing is
    acknowledged, nothing copied, no anomaly can be found — a vacuous pass before the checker
    held the acknowledged inputs against --records. Now: exit 2, saying why."""
    b = broker_factory(settings=dict(TXN_SETTINGS, **{"message.max.bytes": "20"}))
    out = tmp_path / "report.json"
    r = run_verify(["--records", "200", "--partitions", "2", "--copiers", "1", "--faults", "none",
                    "--max-seconds", "5", "--txn-timeout-ms", "2000", "--work-dir",
                    str(tmp_path / "work"), "--json", str(out)], 180, bootstrap=b.bootstrap)
    assert r.returncode == 2, r.stdout + r.stderr
    rep = json.loads(out.read_text())["report"]
    assert rep["verdict"] == "inconclusive" and rep["anomalies"] == 0, rep
    assert rep["inputs_expected"] == 200 and rep["inputs_acked"] == 0, rep
    assert "0 distinct inputs acknowledged of the 200 the seeder was asked to write" in \
        rep["incomplete"], rep["incomplete"]
    assert "200 of the 200 seed records were not delivered (see above)" in rep["incomplete"]
    assert "verdict: inconclusive" in r.stdout, r.stdout


def test_verify_finds_anomalies_on_the_mock_cluster(tmp_path):
    """The mock keeps no transactional offsets, so the group never reaches the end: the copy is
    stopped after 20 decided transactions, counted from the copiers' journal. A stop by the
    clock (--max-seconds 8, as before) let a loaded machine stop it before any transaction:
    the mock waits 3 s before its first generation, and when a follower's SyncGroup reaches it
    after the leader's it refuses the follower, which then rejoins, and the next generation
    comes 5 s (session.timeout.ms - 1 s) later. --max-seconds stays as a bound only.
    Transactions keep the tool's default timeout (10 s): with 1 s a starved copier's
    transactions time out in the client, and every copier restarted costs a rebalance."""
    out = tmp_path / "report.json"
    work = tmp_path / "work"
    r = run_verify(["--mock-cluster", "1", "--partitions", "2", "--records", "2000",
                    "--copiers", "2", "--faults", "none", "--abort-ratio", "0.5",
                    "--txn-records", "20", "--max-transactions", "20", "--max-seconds", "300",
                    "--work-dir", str(work), "--json", str(out)], 420)
    assert r.returncode == 1, r.stdout + r.stderr
    rep = json.loads(out.read_text())
    classes = rep["report"]["classes"]
    assert rep["report"]["anomalies"] > 0
    # The mock returns aborted transactions to read_committed readers: each example is a
    # record of a transaction its copier meant to abort (a=1) or journaled as aborted (one
    # whose send or commit failed on a slow machine, say).
    assert classes["aborted_read"]["count"] > 0, r.stdout
    journaled = {(int(e), int(t)) for what, e, t in
                 (line.split() for line in (work / "journal").read_text().splitlines())
                 if what == "A"}
    for ex in classes["aborted_read"]["examples"]:
        fields = dict(f.split("=") for f in ex["value"].split()[1:])
        assert ex["offset"] >= 0 and (fields["a"] == "1" or (
            int(fields["e"]), int(fields["t"])) in journaled), (ex, sorted(journaled))
    # ...and keeps no transactional offsets, so aborts rewind to the start: duplicates.
    assert classes["duplicated"]["count"] > 0 or classes["lost"]["count"] > 0, r.stdout
    assert "anomalies: %d" % rep["report"]["anomalies"] in r.stdout
    # Cut short by --max-transactions, the history is incomplete; the aborted reads and
    # duplicates seen hold all the same: "anomalies", not "inconclusive".
    assert rep["report"]["verdict"] == "anomalies", rep["report"]
    assert rep["report"]["incomplete"] == [
        "the copy was stopped by --max-transactions before the group's committed offsets "
        "reached the input's end"], rep["report"]
    assert "stopping after --max-transactions 20" in r.stderr, r.stderr
    assert "verify: " in r.stderr and "copied" in r.stderr  # the progress line


def assert_transactions_served(b):
    with b.conn() as c:
        err, keys = c.api_versions(0)
    assert err == 0 and END_TXN in keys, "ApiVersions (error %d) lacks EndTxn (%d)" % (err,
                                                                                   END_TXN)


def test_verify_short_run_on_tally_finds_nothing(broker_factory, tmp_path):
    """The CI scenario of tests/chaos (`short`): 20,000 records, 5 copier kills, 5 pauses past
    the session timeout, 5 same-id zombies and 5 broker kill -9s, zero anomalies."""
    b = broker_factory(settings=TXN_SETTINGS)
    assert_transactions_served(b)
    b.stop()
    sys.path.insert(0, os.path.join(harness.REPO, "tests", "chaos"))
    import chaos
    chaos.TALLYD, chaos.TALLY = harness.TALLYD, harness.TALLY
    res = chaos.run_scenario("short", str(tmp_path / "chaos"), seed=11, quiet=True,
                             max_seconds=170)
    detail = res.get("output", "") + "\n" + open(str(tmp_path / "chaos" / "verify.log")).read()[-4000:]
    assert res["ok"], detail
    rep = res["report"]
    assert rep["report"]["anomalies"] == 0
    # A pass is a complete history: nothing missing that could hide an anomaly.
    assert rep["report"]["verdict"] == "pass" and rep["report"]["incomplete"] == [], rep["report"]
    assert rep["report"]["inputs_expected"] == 20000
    assert rep["report"]["inputs_acked"] == 20000
    assert rep["report"]["visible"] == 20000
    for k in ("kill", "pause", "fence", "broker-kill"):
        assert res["faults"].get(k, 0) >= 5, res["faults"]
    # Aborted attempts were written and hidden from read_committed.
    assert rep["report"]["aborted_seen"] > 0
    assert not res["sanitizer"], res["sanitizer"]


def test_verify_on_the_three_node_cluster_finds_nothing(tmp_path):
    """The chaos suite's cluster-short scenario: three brokers, all voters, each in its own
    network namespace, RF=3 topics with min.insync.replicas=2 (the coordinators' topics too);
    the transaction coordinator of a copier, the copiers' group coordinator and the
    controller are kill -9'd, SIGSTOP'd past the session timeout and cut off (both ways), two
    each, found through the cluster's Metadata when each fault comes; copiers are killed too.
    Zero anomalies in a complete history."""
    sys.path.insert(0, os.path.join(harness.REPO, "tests", "chaos"))
    import chaos
    import netns
    why = netns.unavailable()
    if why:
        pytest.skip(why)
    chaos.TALLYD, chaos.TALLY = harness.TALLYD, harness.TALLY
    # About 90 s here; a broker fault waits (up to 60 s each) for the cluster to recover from
    # the one before, and on a slow machine the ASan brokers take longer to catch up: the
    # last fault once did not come within 170 s. The limit is for a cluster that never
    # recovers, whose faults then never all come (asserted below).
    res = chaos.run_scenario("cluster-short", str(tmp_path / "chaos"), seed=5, quiet=True,
                             max_seconds=300)
    # The events of the run (faults, exits, waits), without the progress line of every second.
    with open(str(tmp_path / "chaos" / "verify.log")) as f:
        events = "".join(line for line in f if "  copied " not in line)
    detail = res.get("output", "") + "\n" + events[-6000:]
    assert res["ok"], detail
    rep = res["report"]
    assert rep["report"]["verdict"] == "pass" and rep["report"]["incomplete"] == [], detail
    assert rep["report"]["inputs_acked"] == 10000 and rep["report"]["visible"] == 10000
    for k in ("broker-kill", "broker-pause", "broker-cut", "kill"):
        assert res["faults"].get(k, 0) >= 2, (res["faults"], detail)
    # Each broker fault hit the broker its target named, as the cluster said then.
    aims = [f["what"] for f in rep["faults"] if f["kind"].startswith("broker-")]
    for aim in ("the transaction coordinator of copier", "the group coordinator",
                "the controller"):
        assert any(aim in w for w in aims), aims
    assert not res["sanitizer"], res["sanitizer"]
