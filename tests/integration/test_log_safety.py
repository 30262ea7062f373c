# SPDX-License-Identifier: Apache-2.0
"""Log safety (issue 7): an acknowledged DeleteRecords survives kill -9, a damaged batch
header in a cleanly closed segment is never served, and a topic with thousands of
partitions does not exhaust the broker's file descriptors."""
import os
import struct

import harness
import kproto

T0 = 1_600_000_000_000


def produce_raw(b, topic, partition, n_batches, per_batch, prefix=b"r"):
    """Produces n_batches batches of per_batch records; returns the base offsets."""
    bases = []
    with b.conn() as c:
        for i in range(n_batches):
            recs = [(None, b"%s-%d" % (prefix, i * per_batch + k)) for k in range(per_batch)]
            res = c.produce({topic: {partition: kproto.record_batch(recs, T0 + i)}})
            d = res[(topic, partition)]
            assert d["error"] == 0, d
            bases.append(d["base_offset"])
    return bases


def fetch_one(b, topic, partition, offset, max_bytes=1 << 20):
    with b.conn() as c:
        res = c.fetch({topic: {partition: offset}}, version=4, max_wait_ms=0,
                      max_bytes=max_bytes)
    return res["partitions"][(topic, partition)]


# ------------------------------------------------------------------ defect 8

def test_delete_records_survives_kill9_right_after_the_answer(broker):
    topic = "dr-kill9"
    harness.create_topics(broker, [(topic, 1, {"segment.bytes": "16384"})])
    produce_raw(broker, topic, 0, 200, 10)
    assert harness.offsets(broker, topic, [0], ts=-1) == {0: 2000}
    with broker.conn() as c:
        res = c.delete_records({topic: {0: 1500}})
    assert res[(topic, 0)] == (0, 1500), res
    broker.kill()  # at once: no housekeeping tick may have written the checkpoint

    broker.start()
    harness.wait_leaders(broker, [topic])
    assert harness.offsets(broker, topic, [0], ts=-2) == {0: 1500}
    assert fetch_one(broker, topic, 0, 1499)["error"] == kproto.OFFSET_OUT_OF_RANGE
    d = fetch_one(broker, topic, 0, 1500)
    assert d["error"] == 0, d
    recs = kproto.records_of(d["records"] or b"")
    assert recs and recs[0][0] == 1500 and recs[0][3] == b"r-1500", recs[:1]
    assert all(r[0] >= 1500 for r in recs)
