# SPDX-License-Identifier: Apache-2.0
"""KafkaJS 2.2.4 transactions with sendOffsets in the exactly-once copier check
(tests/integration/txn_lib.py): copiers kill -9'd and SIGSTOP'd at random; the output read
with read_committed holds every input exactly once, in per-partition order.

KafkaJS's TxnOffsetCommit carries no group generation (no KIP-447), so a copier stopped
long enough to lose its partitions is fenced by its transaction's timeout instead: the
copiers' transactionTimeout (5 s) is shorter than their session timeout (6 s)."""
import os
import shutil
import subprocess

import pytest

import txn_lib
from txn_lib import TXN_SETTINGS

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kafkajs")


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


def test_kafkajs_copier_exactly_once(broker_factory, kafkajs_dir, tmp_path):
    b = broker_factory(settings=TXN_SETTINGS)
    txn_lib.need_transactions(b)
    work = tmp_path / "copiers"
    os.makedirs(work)

    def cmd(i):
        return ["node", os.path.join(kafkajs_dir, "copier.js"), b.bootstrap, "kjs-copiers",
                "kjs-in", "kjs-out", "kjs-copier-%d" % i, "5000"]

    env = dict(os.environ, KAFKAJS_NO_PARTITIONER_WARNING="1")
    faults = txn_lib.copier_check(b, str(work), cmd, "kjs-in", "kjs-out", "kjs-copiers",
                                  parts=3, per_part=1000, copiers=2, faults=4, seed=12,
                                  env=env)
    assert len(faults) == 4, faults
