# SPDX-License-Identifier: Apache-2.0
"""KafkaJS 2.2.4 (npm, pinned in kafkajs/package.json) produces records and reads
offsets with its admin client; confluent-kafka reads the records back. (A KafkaJS
consumer needs the group APIs, which come later.)"""
import json
import os
import shutil
import subprocess

import pytest

import harness

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kafkajs")
T0 = 1_660_000_000_000


@pytest.fixture(scope="module")
def kafkajs_dir():
    node, npm = shutil.which("node"), shutil.which("npm")
    if npm is None or node is None:
        pytest.skip("node/npm not installed: cannot run the KafkaJS compat test")
    if not os.path.isdir(os.path.join(HERE, "node_modules", "kafkajs")):
        r = subprocess.run([npm, "install", "--no-audit", "--no-fund"], cwd=HERE,
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, "npm install failed (rc=%d):\n%s\n%s" % (
            r.returncode, r.stdout[-2000:], r.stderr[-2000:])
    return HERE


def test_kafkajs_produce_and_list_offsets(shared_broker, kafkajs_dir):
    b = shared_broker
    topic, n, parts = "kjs-data", 5000, 3
    harness.create_topics(b, [(topic, parts, None)])
    env = dict(os.environ, KAFKAJS_NO_PARTITIONER_WARNING="1")
    r = subprocess.run(["node", "produce.js", b.bootstrap, topic, str(n), str(parts), str(T0)],
                       cwd=kafkajs_dir, capture_output=True, text=True, timeout=180, env=env)
    assert r.returncode == 0, "node produce.js rc=%d:\n%s\n%s" % (r.returncode, r.stdout,
                                                                  r.stderr[-4000:])
    out = json.loads(r.stdout.strip().splitlines()[-1])

    # Produce responses: no errors, base offsets advance by the batch's record count.
    nxt = {p: 0 for p in range(parts)}
    for rep in out["reports"]:
        assert rep["errorCode"] == 0, rep
        assert int(rep["baseOffset"]) == nxt[rep["partition"]], (rep, nxt)
        nxt[rep["partition"]] += rep["count"]
    per_part = {p: len(range(p, n, parts)) for p in range(parts)}
    assert nxt == per_part

    # admin.fetchTopicOffsets: ListOffsets latest (offset/high) and earliest (low).
    got = {o["partition"]: (int(o["low"]), int(o["high"]), int(o["offset"]))
           for o in out["offsets"]}
    assert got == {p: (0, per_part[p], per_part[p]) for p in range(parts)}, out["offsets"]
    msgs = harness.consume_assigned(b, topic, {p: 0 for p in range(parts)})
    for p in range(parts):
        seqs = []
        for m in msgs[p]:
            h = dict(m.headers() or [])
            i = int(h["seq"])
            seqs.append(i)
            assert m.key() == (None if i % 7 == 0 else b"key-%d" % i)
            assert m.value() == b"kjs-%d" % i
            assert m.timestamp()[1] == T0 + i
            assert ("extra" in h) == (i % 4 == 0)
        assert seqs == list(range(p, n, parts)), p

    # By timestamp: the first record with timestamp >= T0 + n/2 + 37 in each partition.
    half = n // 2 + 37  # as produce.js asks
    want = {p: next(j for j, i in enumerate(range(p, n, parts)) if i >= half)
            for p in range(parts)}
    got = {o["partition"]: int(o["offset"]) for o in out["byTimestamp"]}
    assert got == want, out["byTimestamp"]
