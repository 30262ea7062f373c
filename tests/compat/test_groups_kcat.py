# SPDX-License-Identifier: Apache-2.0
"""kcat's balanced consumer (-G) reads a topic as a group member, commits as it goes,
and a second run of the same group resumes from the commits; `tally groups describe`
shows the committed offsets."""
import json
import shutil
import subprocess

import harness
from test_groups_confluent import produce

KCAT = shutil.which("kcat") or shutil.which("kafkacat")


def kcat_group(b, group, topic):
    """Runs `kcat -G group topic -e` (exits when every assigned partition is at its end)
    and returns the records as (partition, offset, value)."""
    assert KCAT is not None, "kcat is not installed (apt-get install kcat)"
    r = subprocess.run([KCAT, "-b", b.bootstrap, "-G", group, topic, "-e", "-q", "-J",
                        "-X", "auto.offset.reset=earliest", "-X", "session.timeout.ms=10000"],
                       capture_output=True, timeout=120)
    assert r.returncode == 0, "kcat -G rc=%d: %s" % (r.returncode, r.stderr.decode()[-3000:])
    recs = [json.loads(ln) for ln in r.stdout.decode().splitlines() if ln.strip()]
    return [(x["partition"], x["offset"], x["payload"]) for x in recs]


def test_kcat_balanced_consumer_consumes_and_commits(broker_factory):
    b = broker_factory(settings={"group.initial.rebalance.delay.ms": "100"})
    topic, group, n, parts = "kc-group", "kc-g", 3000, 3
    harness.create_topics(b, [(topic, parts, None)])
    produce(b, topic, n, parts)

    recs = kcat_group(b, group, topic)
    assert sorted(v for _p, _o, v in recs) == sorted("v-%d" % i for i in range(n))

    # The commits are the log ends: describe shows lag 0 everywhere.
    out = b.tally("groups", "describe", group)
    assert out.returncode == 0, out.stderr
    rows = [ln.split() for ln in out.stdout.splitlines() if ln.startswith(group + " ")]
    assert [r[1:6] for r in rows] == [[topic, str(p), str(n // parts), str(n // parts), "0"]
                                      for p in range(parts)], out.stdout

    produce(b, topic, 30, parts, prefix="late")
    recs = kcat_group(b, group, topic)
    assert sorted(v for _p, _o, v in recs) == sorted("late-%d" % i for i in range(30))
    assert all(o >= n // parts for _p, o, _v in recs)
