# SPDX-License-Identifier: Apache-2.0
"""Produce and Fetch at the byte level: per-partition errors (CORRUPT_MESSAGE,
MESSAGE_TOO_LARGE, old magic, unknown partitions, bad acks, bad timestamps) that fail
only their own partition, acks=0, long polling, KIP-74 and Fetch v13 by topic id."""
import threading
import time

import pytest

import harness
import kproto

DAY = 86_400_000


def now_ms():
    return int(time.time() * 1000)


def batch(n, tag=b"r", ts=None, start=0):
    return kproto.record_batch([(b"k%d" % i, b"%s-%d" % (tag, i)) for i in range(start, start + n)],
                               base_timestamp=ts)


def flipped(data, at=-10):
    b = bytearray(data)
    b[at] ^= 0x01
    return bytes(b)


def latest(b, topic, parts):
    return harness.offsets(b, topic, parts)


@pytest.fixture
def topics(shared_broker, request):
    """Creates uniquely named topics on the shared broker: call with (suffix, parts, cfg)."""
    made = []

    def make(suffix, parts=1, cfg=None):
        name = "pr-%s-%s" % (request.node.name.replace("[", "-").replace("]", ""), suffix)
        harness.create_topics(shared_broker, [(name, parts, cfg)])
        made.append(name)
        return name

    return make


@pytest.mark.parametrize("version", [3, 5, 7, 8])
def test_produce_one_bad_partition_does_not_fail_the_others(shared_broker, topics, version):
    b = shared_broker
    t = topics("mixed", 4, {"max.message.bytes": "2000"})
    big = kproto.record_batch([(None, b"x" * 3000)])
    with b.conn() as c:
        res = c.produce({t: {0: batch(10), 1: flipped(batch(10)), 2: big, 3: batch(3),
                             9: batch(1)},
                         "pr-no-such-topic": {0: batch(1)}}, version=version)
    assert res[(t, 0)]["error"] == 0 and res[(t, 0)]["base_offset"] == 0, res
    assert res[(t, 1)]["error"] == kproto.CORRUPT_MESSAGE, res[(t, 1)]
    assert res[(t, 2)]["error"] == kproto.MESSAGE_TOO_LARGE, res[(t, 2)]
    assert res[(t, 3)]["error"] == 0 and res[(t, 3)]["base_offset"] == 0, res
    assert res[(t, 9)]["error"] == kproto.UNKNOWN_TOPIC_OR_PARTITION, res[(t, 9)]
    assert res[("pr-no-such-topic", 0)]["error"] == kproto.UNKNOWN_TOPIC_OR_PARTITION
    if version >= 5:
        assert res[(t, 0)]["log_start_offset"] == 0
    assert latest(b, t, [0, 1, 2, 3]) == {0: 10, 1: 0, 2: 0, 3: 3}
    recs = harness.fetch_all_raw(b, t, 0)
    assert [(r[0], r[2], r[3]) for r in recs] == [(i, b"k%d" % i, b"r-%d" % i)
                                                  for i in range(10)]
    # The failed partitions still take good batches.
    with b.conn() as c:
        res = c.produce({t: {1: batch(2), 2: batch(2)}}, version=version)
    assert res[(t, 1)]["error"] == 0 and res[(t, 2)]["error"] == 0, res
    assert latest(b, t, [1, 2]) == {1: 2, 2: 2}


@pytest.mark.parametrize("where", ["crc", "length", "record"])
def test_corrupt_batches(shared_broker, topics, where):
    b = shared_broker
    t = topics("corrupt")
    good = batch(5)
    if where == "crc":
        bad = flipped(good, 20)  # inside the CRC field itself
    elif where == "length":
        bad = good[:8] + kproto.i32(len(good) - 12 + 7) + good[12:]  # claims more bytes
    else:
        bad = flipped(good, -3)  # the last record's value
    # A wrong length or a torn batch: Tally answers CORRUPT_MESSAGE; Apache Kafka
    # finds no whole batch in the request and answers INVALID_RECORD.
    torn_errors = (kproto.CORRUPT_MESSAGE, kproto.INVALID_RECORD)
    with b.conn() as c:
        res = c.produce({t: {0: bad}})
        if where == "length":
            assert res[(t, 0)]["error"] in torn_errors, (where, res)
        else:
            assert res[(t, 0)]["error"] == kproto.CORRUPT_MESSAGE, (where, res)
        res = c.produce({t: {0: good[:-4]}})  # a torn batch
        assert res[(t, 0)]["error"] in torn_errors, (where, res)
        assert c.produce({t: {0: good}})[(t, 0)]["error"] == 0  # connection still fine
    assert latest(b, t, [0]) == {0: 5}


def test_message_too_large(shared_broker, topics):
    b = shared_broker
    t = topics("large", 1, {"max.message.bytes": "5000"})
    small = batch(1)
    fits = kproto.record_batch([(None, b"y" * (5000 - len(small) - 20))])
    assert len(fits) <= 5000
    over = kproto.record_batch([(None, b"y" * 5001)])
    with b.conn() as c:
        res = c.produce({t: {0: over}})
        assert res[(t, 0)]["error"] == kproto.MESSAGE_TOO_LARGE, res
        res = c.produce({t: {0: fits}})
        assert res[(t, 0)]["error"] == 0, res
    assert latest(b, t, [0]) == {0: 1}


def test_old_magic_is_rejected(shared_broker, topics):
    b = shared_broker
    t = topics("magic")
    with b.conn() as c:
        for magic in (0, 1):
            res = c.produce({t: {0: kproto.legacy_message_set([(b"k", b"v")], magic=magic)}})
            # Tally answers UNSUPPORTED_FOR_MESSAGE_FORMAT; Apache Kafka answers
            # Produce v3+ with magic < 2 with INVALID_RECORD. Both are clients' errors.
            assert res[(t, 0)]["error"] in (kproto.UNSUPPORTED_FOR_MESSAGE_FORMAT,
                                            kproto.INVALID_RECORD), (magic, res)
    assert latest(b, t, [0]) == {0: 0}


@pytest.mark.parametrize("acks", [2, -2, 5])
def test_invalid_required_acks(shared_broker, topics, acks):
    b = shared_broker
    t = topics("acks", 2)
    with b.conn() as c:
        res = c.produce({t: {0: batch(1), 1: batch(1)}}, acks=acks)
    assert {k: v["error"] for k, v in res.items()} == {
        (t, 0): kproto.INVALID_REQUIRED_ACKS, (t, 1): kproto.INVALID_REQUIRED_ACKS}, res
    assert latest(b, t, [0, 1]) == {0: 0, 1: 0}


def test_acks_zero_sends_no_response(shared_broker, topics):
    b = shared_broker
    t = topics("acks0")
    with b.conn() as c:
        for k in range(5):
            assert c.produce({t: {0: batch(10, start=10 * k)}}, acks=0) is None
        # The next answer on this connection is the ListOffsets, not a Produce.
        res = c.list_offsets({t: {0: -1}})
    assert res[(t, 0)] == (0, -1, 50), res
    assert [r[3] for r in harness.fetch_all_raw(b, t, 0)] == [b"r-%d" % i for i in range(50)]


@pytest.mark.parametrize("cfg", [
    {"message.timestamp.difference.max.ms": "3600000"},
    {"message.timestamp.before.max.ms": "3600000", "message.timestamp.after.max.ms": "3600000"},
], ids=["difference", "before-after"])
def test_invalid_timestamp(shared_broker, topics, cfg):
    b = shared_broker
    t = topics("ts", 1, cfg)
    with b.conn() as c:
        for ts in (now_ms() - 2 * DAY, now_ms() + 2 * DAY):
            res = c.produce({t: {0: batch(1, ts=ts)}}, version=8)
            d = res[(t, 0)]
            assert d["error"] == kproto.INVALID_TIMESTAMP, (ts, d)
        # One record out of range in an otherwise fine batch fails the batch.
        mixed = kproto.record_batch([(None, b"a"), (None, b"b")],
                                    timestamps=[now_ms(), now_ms() - 2 * DAY])
        assert c.produce({t: {0: mixed}})[(t, 0)]["error"] == kproto.INVALID_TIMESTAMP
        res = c.produce({t: {0: batch(1, ts=now_ms() - 60_000)}})
        assert res[(t, 0)]["error"] == 0, res
    assert latest(b, t, [0]) == {0: 1}


def test_log_append_time_topic_skips_timestamp_checks(shared_broker, topics):
    b = shared_broker
    t = topics("lat", 1, {"message.timestamp.type": "LogAppendTime",
                          "message.timestamp.difference.max.ms": "1000"})
    with b.conn() as c:
        res = c.produce({t: {0: batch(1, ts=now_ms() - 2 * DAY)}}, version=5)
    assert res[(t, 0)]["error"] == 0 and res[(t, 0)]["log_append_time"] > 0, res


# ---------------------------------------------------------------- Fetch

def test_fetch_versions_agree(shared_broker, topics):
    b = shared_broker
    t = topics("fv")
    with b.conn() as c:
        for k in range(3):
            c.produce({t: {0: batch(4, start=4 * k)}})
        c.delete_records({t: {0: 2}})
        md = c.metadata_v12([t])
        tid = md[t]["topic_id"]
        assert tid != b"\0" * 16, md
        want = [(i, b"k%d" % i, b"r-%d" % i) for i in range(12)]
        for version in range(4, 14):
            key = tid if version >= 13 else t
            f = c.fetch({key: {0: 2}}, version=version)
            assert f["error"] == 0, (version, f)
            d = f["partitions"][(key, 0)]
            assert d["error"] == 0, (version, d)
            assert d["hw"] == 12 and d["lso"] == 12, (version, d)
            if version >= 5:
                assert d["log_start_offset"] == 2, (version, d)
            # The batch holding offset 2 starts at 0; clients skip what is below.
            got = [(r[0], r[2], r[3]) for r in kproto.records_of(d["records"] or b"")
                   if r[0] >= 2]
            assert got == want[2:], (version, got)


def test_fetch_v13_by_topic_id(shared_broker, topics):
    b = shared_broker
    t = topics("tid", 2)
    with b.conn() as c:
        c.produce({t: {0: batch(3), 1: batch(2, tag=b"p1")}})
        tid = c.metadata_v12([t])[t]["topic_id"]
        f = c.fetch({tid: {0: 0, 1: 1}}, version=13)
        assert f["error"] == 0
        d0, d1 = f["partitions"][(tid, 0)], f["partitions"][(tid, 1)]
        assert d0["error"] == 0 and d1["error"] == 0, f
        assert [r[3] for r in kproto.records_of(d0["records"])] == [b"r-0", b"r-1", b"r-2"]
        assert [r[3] for r in kproto.records_of(d1["records"]) if r[0] >= 1] == [b"p1-1"]
        bogus = bytes(range(16))
        f = c.fetch({bogus: {0: 0}}, version=13)
        errs = {f["error"]} | {d["error"] for d in f["partitions"].values()}
        assert kproto.UNKNOWN_TOPIC_ID in errs, f


def test_fetch_returns_a_whole_first_batch_over_partition_max_bytes(shared_broker, topics):
    """KIP-74: the first batch comes back whole even when bigger than the limit."""
    b = shared_broker
    t = topics("kip74")
    with b.conn() as c:
        c.produce({t: {0: batch(50)}})
        c.produce({t: {0: batch(50, start=50)}})
        f = c.fetch({t: {0: 0}}, version=4, partition_max_bytes=10, max_bytes=10)
    recs = kproto.records_of(f["partitions"][(t, 0)]["records"] or b"")
    assert [r[0] for r in recs] == list(range(50)), len(recs)


def test_fetch_out_of_range_and_unknown(shared_broker, topics):
    b = shared_broker
    t = topics("oor")
    with b.conn() as c:
        c.produce({t: {0: batch(5)}})
        f = c.fetch({t: {0: 6, 3: 0}, "pr-nothing-here": {0: 0}}, version=7)
    ps = f["partitions"]
    assert ps[(t, 0)]["error"] == kproto.OFFSET_OUT_OF_RANGE, ps
    assert ps[(t, 3)]["error"] == kproto.UNKNOWN_TOPIC_OR_PARTITION, ps
    assert ps[("pr-nothing-here", 0)]["error"] == kproto.UNKNOWN_TOPIC_OR_PARTITION, ps


def parked_fetch(b, topic, offset, max_wait_ms, min_bytes, out):
    with b.conn(timeout=30) as c:
        out.append(c.fetch({topic: {0: offset}}, version=11, max_wait_ms=max_wait_ms,
                           min_bytes=min_bytes))


# How long a parked fetch waits (MaxWaitMs, MinBytes) is tested on the broker's virtual clock
# (tests/unit/test_broker.c, broker_fetch_long_poll_*) and measured in bench/timers.py; these
# tests check what a real client gets, with no wall-clock bound.

def test_long_poll_returns_when_data_arrives(shared_broker, topics):
    b = shared_broker
    t = topics("poll")
    out = []
    # MaxWaitMs of two minutes, four times the client's own timeout: only the produce can
    # end this wait while the test still listens.
    th = threading.Thread(target=parked_fetch, args=(b, t, 0, 120000, 1, out))
    th.start()
    time.sleep(0.5)
    with b.conn() as c:
        assert c.produce({t: {0: batch(3)}})[(t, 0)]["error"] == 0
    th.join(40)
    assert out, "the parked fetch was not answered when data arrived"
    recs = kproto.records_of(out[0]["partitions"][(t, 0)]["records"] or b"")
    assert [r[3] for r in recs] == [b"r-0", b"r-1", b"r-2"]


def test_long_poll_answers_empty_at_max_wait_without_data(shared_broker, topics):
    b = shared_broker
    t = topics("idle")
    out = []
    parked_fetch(b, t, 0, 300, 1, out)
    d = out[0]["partitions"][(t, 0)]
    assert d["error"] == 0 and not kproto.records_of(d["records"] or b""), d
    assert d["hw"] == 0, d


def test_long_poll_short_of_min_bytes_answers_with_what_there_is(shared_broker, topics):
    b = shared_broker
    t = topics("minb")
    out = []
    th = threading.Thread(target=parked_fetch, args=(b, t, 0, 1000, 100_000, out))
    th.start()
    time.sleep(0.3)
    with b.conn() as c:
        c.produce({t: {0: batch(2)}})  # far less than min_bytes
    th.join(40)
    assert out, "the parked fetch was never answered"
    recs = kproto.records_of(out[0]["partitions"][(t, 0)]["records"] or b"")
    assert len(recs) == 2  # returned at max_wait with what there is


def test_long_poll_many_waiters(shared_broker, topics):
    """Several parked fetches on different offsets all wake up on one produce."""
    b = shared_broker
    t = topics("many")
    with b.conn() as c:
        c.produce({t: {0: batch(5)}})
    outs = [[] for _ in range(8)]
    # MaxWaitMs far past the client's timeout, as above: an answer is the produce's doing.
    ths = [threading.Thread(target=parked_fetch, args=(b, t, 5, 120000, 1, outs[i]))
           for i in range(8)]
    for th in ths:
        th.start()
    time.sleep(0.5)
    with b.conn() as c:
        c.produce({t: {0: batch(1, start=5)}})
    for th in ths:
        th.join(40)
    for out in outs:
        assert out, outs
        recs = kproto.records_of(out[0]["partitions"][(t, 0)]["records"] or b"")
        assert [r[3] for r in recs if r[0] >= 5] == [b"r-5"]


def test_produce_base_offsets_and_timestamps(shared_broker, topics):
    """Base offsets advance by record count; the stored batch is the one sent
    (wire format = disk format) apart from its base offset."""
    b = shared_broker
    t = topics("base")
    sent = []
    with b.conn() as c:
        off = 0
        for n in (1, 7, 3, 20):
            data = batch(n, ts=1_650_000_000_000 + off, start=off)
            sent.append(data)
            res = c.produce({t: {0: data}}, version=7)
            assert res[(t, 0)]["base_offset"] == off and res[(t, 0)]["log_append_time"] == -1
            off += n
        f = c.fetch({t: {0: 0}}, version=4)
    got = f["partitions"][(t, 0)]["records"]
    expect = b""
    off = 0
    for data, n in zip(sent, (1, 7, 3, 20)):
        # Base offset and partition leader epoch may differ; the rest must not.
        assert got[len(expect) + 8:len(expect) + 12] == data[8:12]
        assert got[len(expect) + 16:len(expect) + len(data)] == data[16:], \
            "batch at %d was rewritten" % off
        expect += data
        off += n
    bts = kproto.parse_record_batches(got)
    assert [bt["base_offset"] for bt in bts] == [0, 1, 8, 11]
    assert [bt["first_timestamp"] for bt in bts] == [1_650_000_000_000 + o for o in (0, 1, 8, 11)]
