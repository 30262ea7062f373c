# SPDX-License-Identifier: Apache-2.0
"""kcat produces (-P, with keys -K) and consumes (-C -e) records."""
import json
import shutil
import subprocess

import pytest

import harness

KCAT = shutil.which("kcat") or shutil.which("kafkacat")


@pytest.fixture(scope="module", autouse=True)
def have_kcat():
    if KCAT is None:
        pytest.fail("kcat is not installed (apt-get install kcat)")


def kcat(b, *args, stdin=None):
    r = subprocess.run([KCAT, "-b", b.bootstrap] + list(args), input=stdin,
                       capture_output=True, timeout=120)
    assert r.returncode == 0, "kcat %r rc=%d: %s" % (args, r.returncode, r.stderr.decode())
    return r.stdout


@pytest.mark.parametrize("codec", ["none", "snappy"])
def test_kcat_produce_consume_with_keys(shared_broker, codec):
    b = shared_broker
    topic, n = "kc-data-%s" % codec, 3000
    harness.create_topics(b, [(topic, 2, None)])
    lines = b"".join(b"key-%d\tvalue %d with spaces, colons: and = signs\n" % (i, i)
                     for i in range(n))
    for p in (0, 1):
        kcat(b, "-P", "-t", topic, "-p", str(p), "-K", "\t", "-X",
             "compression.codec=" + codec, "-X", "acks=all", stdin=lines)
    assert harness.offsets(b, topic, [0, 1]) == {0: n, 1: n}

    out = kcat(b, "-C", "-t", topic, "-o", "beginning", "-e", "-J", "-q")
    recs = [json.loads(ln) for ln in out.decode().splitlines() if ln.strip()]
    assert len(recs) == 2 * n
    for p in (0, 1):
        mine = [r for r in recs if r["partition"] == p]
        assert [r["offset"] for r in mine] == list(range(n))
        assert [r["key"] for r in mine] == ["key-%d" % i for i in range(n)]
        assert [r["payload"] for r in mine] == [
            "value %d with spaces, colons: and = signs" % i for i in range(n)]

    # A range from the middle of one partition, and a key-formatted read.
    out = kcat(b, "-C", "-t", topic, "-p", "1", "-o", "2990", "-e", "-q", "-f", "%o %k=%s\n")
    assert out.decode().splitlines() == [
        "%d key-%d=value %d with spaces, colons: and = signs" % (i, i, i)
        for i in range(2990, n)]
    # A negative offset counts back from the end (ListOffsets latest).
    out = kcat(b, "-C", "-t", topic, "-p", "0", "-o", "-3", "-e", "-q", "-f", "%o\n")
    assert out.decode().split() == [str(n - 3), str(n - 2), str(n - 1)]
