# SPDX-License-Identifier: Apache-2.0
"""Log compaction (issue 9): a compacted topic with small segments, 200 keys x 100 updates
plus tombstones, cleaned by the broker's cleaner:

  * after cleaning only the last value per key remains, at the offset it was produced at;
    the tombstones stay until delete.retention.ms has passed, then go with their keys;
  * a confluent-kafka consumer from offset 0 sees that view: offsets increasing, one value
    per key, each the latest;
  * a kill -9 at each stage of a clean (TALLY_TEST_FAULT=cleaner:<stage>, a test-only hook)
    and a restart lose and duplicate nothing and leave no stray file, and the cleaner then
    finishes the job;
  * a record without a key is refused with INVALID_RECORD (confluent-kafka, raw Produce,
    compressed or not)."""
import glob
import os
import time

import pytest

import harness
import kproto as kp

SETTINGS = {"log.cleaner.backoff.ms": "100"}
STAGES = ["map", "cleaned", "swap", "swapin", "swapped"]
FILLER = b"~filler"


def topic_cfg(delete_retention_ms=2000):
    return {"cleanup.policy": "compact", "segment.bytes": "16384",
            "delete.retention.ms": str(delete_retention_ms),
            "min.cleanable.dirty.ratio": "0.01"}


def produce(b, topic, keys, updates, deleted, compression="none"):
    """keys x updates values, then tombstones for the first `deleted` keys, then filler
    records that push all of it below the active segment. Returns {key: (offset, value)}
    of the last record produced per key (value None for a tombstone) and every
    (offset, key, value) produced."""
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": b.bootstrap, "linger.ms": 5,
                  "compression.type": compression, "acks": "all"})
    produced = []
    errors = []

    def on_delivery(err, msg):
        if err is not None:
            errors.append(err)
        else:
            produced.append((msg.offset(), msg.key(), msg.value()))

    for u in range(updates):
        for k in range(keys):
            key = b"k%03d" % k
            p.produce(topic, key=key, value=b"%s-u%03d" % (key, u), on_delivery=on_delivery)
        p.poll(0)
    for k in range(deleted):
        p.produce(topic, key=b"k%03d" % k, value=None, on_delivery=on_delivery)
    p.flush(30)
    # Random, so that the filler keeps its ~80 KB (5 segments) under any codec: a
    # compressible one (b"f" * 2048) shrinks to a few bytes a record with lz4 and may leave
    # the last updates in the active segment, which no clean touches.
    for i in range(40):
        p.produce(topic, key=FILLER, value=os.urandom(2048), on_delivery=on_delivery)
        p.flush(30)
    assert not errors, errors[:3]
    produced.sort()
    last = {}
    for off, key, value in produced:
        last[key] = (off, value)
    return last, produced


def disk_records(b, topic):
    """(offset, key, value) of every record in the partition's segment files, in order;
    batches must be CRC-valid and uncompressed ones must parse (compressed ones are
    decompressed by the consumer check instead)."""
    out = []
    files = sorted(harness.segment_files(b, topic, 0))
    for f in files:
        with open(f, "rb") as fh:
            data = fh.read()
        for batch in kp.parse_record_batches(data):
            for off, _ts, key, value, _h in batch["records"] or []:
                out.append((off, key, value))
    return out


def compacted_view(last, with_tombstones, active_from):
    """What the part below the active segment should hold: the last record per key."""
    want = set()
    for key, (off, value) in last.items():
        if key == FILLER or off >= active_from:
            continue
        if value is None and not with_tombstones:
            continue
        want.add((off, key, value))
    return want


def wait_for(cond, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = cond()
        if got:
            return got
        time.sleep(0.2)
    raise AssertionError("timed out waiting for " + what)


def below_filler(recs, last):
    """Records that are not filler: the keyed data under test."""
    return {r for r in recs if r[1] != FILLER}


def stray_files(b, topic):
    d = harness.partition_dir(b, topic, 0)
    return [f for f in os.listdir(d) if f.endswith((".cleaned", ".swap", ".deleted"))]


def check_consistent(recs, produced):
    """Offsets strictly increasing, each record one that was produced at that offset."""
    offs = [r[0] for r in recs]
    assert offs == sorted(set(offs)), "offsets duplicated or out of order"
    produced_at = {off: (key, value) for off, key, value in produced}
    for off, key, value in recs:
        assert produced_at.get(off) == (key, value), "record at %d was not produced so" % off


@pytest.mark.parametrize("compression", ["none", "lz4"])
def test_compaction_keeps_last_value_per_key(broker_factory, compression):
    b = broker_factory(settings=SETTINGS)
    topic = "compacted-" + compression
    harness.create_topics(b, [(topic, 1, topic_cfg(delete_retention_ms=3000))])
    last, produced = produce(b, topic, 200, 100, 20, compression)
    active_from = min(off for off, key, _v in produced if key == FILLER)
    # The view below assumes all keyed data is below the active segment (cleanable).
    assert active_segment_base(b, topic) >= active_from, \
        "keyed data in the active segment (base %d, first filler %d)" % (
            active_segment_base(b, topic), active_from)
    first_pass = compacted_view(last, True, active_from)

    # First the values go and the tombstones stay...
    def cleaned_once():
        recs = safe_disk_records(b, topic) if compression == "none" else consumed(b, topic)
        return below_filler(recs, last) == first_pass and recs
    recs = wait_for(cleaned_once, 60, "the first clean")
    check_consistent(recs, produced)
    # ...then, after delete.retention.ms, the tombstones go too, with their keys.
    final = compacted_view(last, False, active_from)

    def tombstones_gone():
        recs = consumed(b, topic)
        return below_filler(recs, last) == final and recs
    recs = wait_for(tombstones_gone, 60, "the tombstones to expire")
    check_consistent(recs, produced)
    assert len(final) == 180
    assert all(value.endswith(b"-u099") for _o, _k, value in final)
    wait_for(lambda: not stray_files(b, topic), 30, "no clean in flight")
    # Offsets did not move: the log end is where it was.
    assert harness.offsets(b, topic, [0])[0] == produced[-1][0] + 1


def consumed(b, topic):
    """Everything a confluent-kafka consumer reads from offset 0 (assign, no group)."""
    msgs = harness.consume_assigned(b, topic, {0: 0}, timeout=60)[0]
    return [(m.offset(), m.key(), m.value()) for m in msgs]


@pytest.mark.parametrize("stage", STAGES)
def test_kill_during_clean_loses_nothing(broker_factory, monkeypatch, stage):
    # The data goes in with the cleaner off; then the broker restarts with it on and the
    # test hook set, and dies at the stage as soon as the cleaner reaches it.
    b = broker_factory(settings=dict(SETTINGS, **{"log.cleaner.enable": "false"}))
    topic = "crash-" + stage
    harness.create_topics(b, [(topic, 1, topic_cfg(delete_retention_ms=600000))])
    last, produced = produce(b, topic, 50, 20, 5)
    before = disk_records(b, topic)
    assert cleans(b, topic) == 0, "cleaned with log.cleaner.enable=false"
    b.stop()
    b.settings["log.cleaner.enable"] = "true"
    monkeypatch.setenv("TALLY_TEST_FAULT", "cleaner:" + stage)
    b.start(wait=False)
    rc = b.proc.wait(60)
    assert rc == 137, "tallyd did not stop at stage %s (rc %r)" % (stage, rc)
    assert "TALLY_TEST_FAULT: exiting at cleaner:" + stage in b.stderr_all()
    monkeypatch.delenv("TALLY_TEST_FAULT")
    b.settings["log.cleaner.enable"] = "false"
    b.start()
    assert not stray_files(b, topic), stray_files(b, topic)
    recs = disk_records(b, topic)
    check_consistent(recs, produced)
    # Nothing lost: every key's last record is there, at its offset; and the segments are
    # the old ones or the cleaned ones, never a mix of the two.
    have = set(recs)
    for key, (off, value) in last.items():
        assert (off, key, value) in have, "lost %r at %d" % (key, off)
    active_from = min(off for off, key, _v in produced if key == FILLER)
    want = compacted_view(last, True, active_from)
    if stage in ("map", "cleaned"):
        assert recs == before, "a clean that did not commit changed the log"
    # After a restart with the cleaner on, it finishes the job.
    b.stop()
    b.settings["log.cleaner.enable"] = "true"
    b.start()
    wait_for(lambda: below_filler(safe_disk_records(b, topic), last) == want and
             not stray_files(b, topic), 60, "the clean after the restart")
    check_consistent(consumed(b, topic), produced)


def active_segment_base(b, topic):
    """Base offset of the partition's active (last) segment, from its file name."""
    return int(os.path.basename(harness.segment_files(b, topic, 0)[-1]).split(".")[0])


def safe_disk_records(b, topic):
    """disk_records while the broker may be swapping segments in: empty on a race."""
    try:
        return disk_records(b, topic)
    except (OSError, ValueError):
        return []


def test_keyless_produce_to_compacted_topic_is_invalid_record(broker_factory):
    from confluent_kafka import Producer
    b = broker_factory(settings=SETTINGS)
    harness.create_topics(b, [("keyed", 1, topic_cfg()), ("plain", 1, {})])
    errors = []
    p = Producer({"bootstrap.servers": b.bootstrap, "retries": 0,
                  "compression.type": "gzip"})
    # Two batches (a batch with one keyless record is refused whole, as by Kafka).
    p.produce("keyed", value=b"no key", on_delivery=lambda e, m: errors.append(e))
    p.flush(30)
    p.produce("keyed", key=b"k", value=b"with key", on_delivery=lambda e, m: errors.append(e))
    p.flush(30)
    codes = sorted((e.code() if e is not None else 0) for e in errors)
    assert codes == [0, 87], errors  # 87 = INVALID_RECORD
    with b.conn() as c:
        for attrs in (0,):
            res = c.produce({"keyed": {0: kp.record_batch([(b"k", b"v"), (None, b"x")],
                                                          attributes=attrs)}}, version=8)
            d = res[("keyed", 0)]
            assert d["error"] == 87, d
            assert "without key" in (d["error_message"] or ""), d
        # A topic without compaction takes it.
        res = c.produce({"plain": {0: kp.record_batch([(None, b"x")])}}, version=8)
        assert res[("plain", 0)]["error"] == 0
        # Keyed records go to the compacted topic.
        res = c.produce({"keyed": {0: kp.record_batch([(b"k2", b"v")])}}, version=8)
        assert res[("keyed", 0)]["error"] == 0


def test_stray_cleaner_files_removed_at_start(broker_factory):
    b = broker_factory(settings=SETTINGS)
    harness.create_topics(b, [("leftovers", 1, topic_cfg())])
    with b.conn() as c:
        res = c.produce({"leftovers": {0: kp.record_batch([(b"a", b"1")])}}, version=8)
        assert res[("leftovers", 0)]["error"] == 0
    b.kill()
    d = harness.partition_dir(b, "leftovers", 0)
    # An uncommitted group: .cleaned files, and an index .swap without its .log.swap.
    for name in ("00000000000000000000.log.cleaned", "00000000000000000000.index.cleaned",
                 "00000000000000000000.timeindex.swap"):
        with open(os.path.join(d, name), "wb") as f:
            f.write(b"junk")
    b.start()
    assert not stray_files(b, "leftovers")
    with b.conn() as c:
        recs = harness.fetch_all_raw(b, "leftovers", 0) if hasattr(harness, "fetch_all_raw") \
            else None
    assert glob.glob(os.path.join(d, "*.log"))
    assert recs is None or len(recs) >= 1


def cleans(b, topic):
    return b.stderr_all().count("cleaned %s-0 up to offset" % topic)


def put_many(b, topic, records):
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": b.bootstrap, "linger.ms": 5})
    for key, value in records:
        p.produce(topic, key=key, value=value)
    p.flush(30)


def test_cleaner_honours_dirty_ratio_and_lags(broker_factory):
    """min.cleanable.dirty.ratio holds a little dirt back until max.compaction.lag.ms forces
    it; min.compaction.lag.ms holds young segments back until it is lowered. Segments roll by
    segment.ms here, so the dirty part stays small."""
    b = broker_factory(settings=SETTINGS)
    roll = {"segment.ms": "300", "segment.bytes": str(1 << 20)}
    ratio_cfg = dict(topic_cfg(), **roll, **{"min.cleanable.dirty.ratio": "0.9"})
    lag_cfg = dict(topic_cfg(), **roll, **{"min.compaction.lag.ms": "3600000"})
    harness.create_topics(b, [("ratio", 1, ratio_cfg), ("lagged", 1, lag_cfg)])
    big = [(b"key-%04d" % i, b"v" * 1024) for i in range(2000)]
    for t in ("ratio", "lagged"):
        put_many(b, t, big)
    time.sleep(0.4)
    for t in ("ratio", "lagged"):
        put_many(b, t, [(b"roll", b"1")])  # seals the 2000 records
    # Never cleaned: everything is dirty (ratio 1), so "ratio" is cleaned once...
    wait_for(lambda: cleans(b, "ratio") == 1, 30, "the first clean of 'ratio'")
    # ...and then a little more dirt (10 records over 2 MiB clean) is not enough.
    put_many(b, "ratio", [(b"key-%04d" % i, b"w") for i in range(10)])
    time.sleep(0.4)
    put_many(b, "ratio", [(b"roll", b"2")])
    time.sleep(2)
    assert cleans(b, "ratio") == 1
    # min.compaction.lag.ms of an hour: nothing is old enough.
    assert cleans(b, "lagged") == 0
    # max.compaction.lag.ms forces the small dirty part; a lower min lag frees "lagged".
    r = b.tally("configs", "alter", "--topic", "ratio", "--set", "max.compaction.lag.ms=1")
    assert r.returncode == 0, r.stderr
    wait_for(lambda: cleans(b, "ratio") == 2, 30, "the clean max.compaction.lag.ms forces")
    r = b.tally("configs", "alter", "--topic", "lagged", "--set", "min.compaction.lag.ms=0")
    assert r.returncode == 0, r.stderr
    wait_for(lambda: cleans(b, "lagged") >= 1, 30, "the clean of 'lagged'")
