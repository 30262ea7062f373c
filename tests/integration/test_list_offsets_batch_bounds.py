# SPDX-License-Identifier: Apache-2.0
"""ListOffsets by timestamp at batch boundaries, end to end (issue 7, defect 16): batch
boundaries are fixed by raw produce requests (a client library would batch as it likes),
and the targets are each batch's max timestamp and its neighbours. Kafka answers the first
record (not batch) whose timestamp is >= the target, with that record's timestamp; a
batch whose max timestamp equals the target holds the answer, and an earlier batch
never does. Only a unit test covered the equal case before."""
import pytest

import harness
import kproto

T0 = 1_600_000_000_000

# Per batch, the records' timestamps (ms after T0). Maxima sit mid-batch, later batches
# hold timestamps below earlier maxima, and batch 3 starts with batch 2's maximum.
BATCHES = [
    [10, 40, 20, 30],
    [35, 50, 45],
    [50, 60],
    [5, 70, 65],
    [70],
]


def flat():
    return [T0 + t for batch in BATCHES for t in batch]


def first_at_or_after(ts, target):
    for off, t in enumerate(ts):
        if t >= target:
            return off
    return None


def check(b, topic, versions=(1, 4, 7)):
    ts = flat()
    targets = sorted({T0 + t + d for batch in BATCHES for t in (max(batch),) for d in (-1, 0, 1)}
                     | {T0 + t for batch in BATCHES for t in batch})
    wrong = []
    with b.conn() as c:
        for version in versions:
            for target in targets:
                err, got_ts, off = c.list_offsets({topic: {0: target}}, version=version)[
                    (topic, 0)]
                assert err == 0, (version, target, err)
                want = first_at_or_after(ts, target)
                want = (-1, -1) if want is None else (want, ts[want])
                if (off, got_ts) != want:
                    wrong.append("v%d target T0+%d: got offset %d ts %d, want offset %d ts %d"
                                 % (version, target - T0, off, got_ts, want[0], want[1]))
        err, got_ts, off = c.list_offsets({topic: {0: kproto.MAX_TIMESTAMP}}, version=7)[
            (topic, 0)]
    assert not wrong, "\n".join(wrong)
    # The largest timestamp, T0+70, first appears at offset 10.
    assert (err, got_ts, off) == (0, T0 + 70, 10)


@pytest.mark.parametrize("segment_bytes", [None, "150"], ids=["one-segment", "segment-per-batch"])
def test_list_offsets_at_batch_max_timestamp(broker, segment_bytes):
    topic = "lo-bounds"
    harness.create_topics(broker, [(topic, 1, {"segment.bytes": segment_bytes}
                                    if segment_bytes else None)])
    off = 0
    with broker.conn() as c:
        for i, batch in enumerate(BATCHES):
            data = kproto.record_batch([(None, b"b%d-%d" % (i, j)) for j in range(len(batch))],
                                       timestamps=[T0 + t for t in batch])
            res = c.produce({topic: {0: data}})
            d = res[(topic, 0)]
            assert d["error"] == 0 and d["base_offset"] == off, d
            off += len(batch)
    if segment_bytes:
        assert len(harness.segment_files(broker, topic, 0)) >= 3
    check(broker, topic)
    # The time index is rebuilt after a crash: the same answers.
    broker.restart(hard=True)
    harness.wait_leaders(broker, [topic])
    check(broker, topic)
