# SPDX-License-Identifier: Apache-2.0
"""Log safety (issue 7): an acknowledged DeleteRecords survives kill -9, a damaged batch
header in a cleanly closed segment is never served (the start's background check quarantines
it, issue 18), and a topic with thousands of partitions does not exhaust the broker's file
descriptors."""
import os
import resource
import struct
import time

import harness
import kproto

T0 = 1_600_000_000_000
KAFKA_STORAGE_ERROR = 56


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


# ------------------------------------------------------------------ defect 9

def batch_positions(path):
    """[(position, base offset, size)] of the batches of a .log file."""
    data = open(path, "rb").read()
    out, pos = [], 0
    while pos + 12 <= len(data):
        base, length = struct.unpack(">qi", data[pos:pos + 12])
        out.append((pos, base, 12 + length))
        pos += 12 + length
    return out


def flip_base(path, pos, bit):
    with open(path, "r+b") as f:
        f.seek(pos)
        (v,) = struct.unpack(">q", f.read(8))
        f.seek(pos)
        f.write(struct.pack(">q", v ^ bit))


def served_batches_fit(d, offset, end):
    """The batches of a fetch answer start with the one holding `offset` and follow one
    another below `end`."""
    expect = None
    for b in kproto.parse_record_batches(d["records"] or b""):
        base, last = b["base_offset"], b["last_offset"]
        if expect is None:
            assert base <= offset <= last, (offset, base, last)
        else:
            assert base == expect, (expect, base)
        assert last < end, (last, end)
        expect = last + 1


def test_flipped_base_offset_after_clean_stop_is_never_served(broker):
    topic = "flip-clean"
    harness.create_topics(broker, [(topic, 2, None)])
    for part in (0, 1):
        produce_raw(broker, topic, part, 50, 10)
    broker.stop()  # clean: nothing is rescanned at the next start

    # Partition 0: batch 5 (offsets 50..59), in the middle of the segment, claims 2^24+50.
    # Partition 1: its last batch (490..499) claims 2^40+490; that one the start-up check
    # of the segment's tail finds.
    log0 = harness.segment_files(broker, topic, 0)[0]
    log1 = harness.segment_files(broker, topic, 1)[0]
    b0, b1 = batch_positions(log0), batch_positions(log1)
    assert [b[1] for b in b0] == list(range(0, 500, 10))
    flip_base(log0, b0[5][0], 1 << 24)
    flip_base(log1, b1[-1][0], 1 << 40)

    broker.start()
    harness.wait_leaders(broker, [topic])
    # Partition 1: the damaged last batch was cut, with a WARN, as after an unclean stop.
    assert harness.offsets(broker, topic, [1], ts=-1) == {1: 490}
    assert "rescanning the segment" in broker.stderr_all()
    assert os.path.getsize(log1) == b1[-1][0]
    for off in range(0, 490, 10):
        d = fetch_one(broker, topic, 1, off)
        assert d["error"] == 0, d
        served_batches_fit(d, off, 490)

    # Partition 0: the background check quarantines the damaged batch (issue 18, 7b): a read
    # stops before it, a read of its offsets resumes right after it, it is never served.
    d = fetch_one(broker, topic, 0, 0)
    assert d["error"] == 0, d
    served_batches_fit(d, 0, 50)
    for off in (50, 55, 59):
        d = fetch_one(broker, topic, 0, off)
        assert d["error"] == 0, d
        bts = kproto.parse_record_batches(d["records"] or b"")
        assert bts and bts[0]["base_offset"] == 60, bts[:1]
        served_batches_fit(d, 60, 500)
    for off in list(range(0, 50, 10)) + list(range(60, 500, 10)):
        d = fetch_one(broker, topic, 0, off)
        assert d["error"] == 0, d
        served_batches_fit(d, off, 500)
    # One ERROR line says so; no read was refused.
    text = broker.stderr_all()
    assert text.count("damaged batch at position") == 1, text
    assert "refused" not in text


# ------------------------------------------------------------------ defect 5

def open_fds(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def test_create_topics_with_thousands_of_partitions_keeps_serving(broker):
    """CreateTopics of N partitions under RLIMIT_NOFILE 1024: three descriptors per
    partition (the old cost) would need 3 N. The broker answers, keeps serving new
    clients and the partitions, holds few descriptors, and its log does not flood."""
    n, limit = 1500, 1024
    resource.prlimit(broker.proc.pid, resource.RLIMIT_NOFILE, (limit, limit))
    topic = "many-parts"
    log_before = len(broker.stderr_all())
    with broker.conn(timeout=300) as c:
        res = c.create_topics_v([(topic, n, 1, None)], version=5, timeout_ms=300000)
    assert res[topic]["error"] == 0, res[topic]

    # A new client is answered.
    with broker.conn() as c:
        err, _keys = c.api_versions(0)
        assert err == 0
        md = c.metadata([topic], version=1)
    assert md["topics"][topic][0] == 0 and len(md["topics"][topic][2]) == n
    harness.wait_leaders(broker, [topic], timeout=120)

    # Produce and fetch on a few of them.
    for part in (0, n // 2, n - 1):
        produce_raw(broker, topic, part, 3, 5, prefix=b"p%d" % part)
        d = fetch_one(broker, topic, part, 0)
        assert d["error"] == 0, d
        recs = kproto.records_of(d["records"] or b"")
        assert [r[3] for r in recs] == [b"p%d-%d" % (part, i) for i in range(15)]

    # Partitions at rest hold no descriptors.
    fds = open_fds(broker.proc.pid)
    assert fds < 200, "%d descriptors open for %d partitions" % (fds, n)
    # No line repeats without end (the old broker wrote "Too many open files" forever).
    text = broker.stderr_all()[log_before:]
    assert "Too many open files" not in text
    grown = len(broker.stderr_all())
    time.sleep(2)
    assert len(broker.stderr_all()) - grown < 4096

    # num.partitions is read-only, as in Kafka (it accepted 100,000 at run time).
    with broker.conn() as c:
        for name in (str(broker.node_id), ""):
            res = c.incremental_alter_configs([(4, name, [("num.partitions", 0, "100000")])])
            assert [r[0] for r in res] == [kproto.INVALID_REQUEST], res


def lowest_free_fd(pid):
    used = {int(x) for x in os.listdir("/proc/%d/fd" % pid)}
    n = 0
    while n in used:
        n += 1
    return n


def test_out_of_descriptors_refuses_with_storage_error_and_recovers(broker):
    """When no descriptor can be opened, a write that needs one is refused with
    KAFKA_STORAGE_ERROR (one rate-limited line, no loop), and served again once
    descriptors are back."""
    topic = "no-fds"
    harness.create_topics(broker, [(topic, 1, None)])
    pid = broker.proc.pid
    soft, hard = resource.prlimit(pid, resource.RLIMIT_NOFILE)
    with broker.conn() as c:
        assert c.api_versions(0)[0] == 0  # accepted before the limit drops
        # The partition at rest holds no descriptor: its first append must open one.
        free = lowest_free_fd(pid)
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (free, hard))
        try:
            for i in range(20):
                res = c.produce({topic: {0: kproto.record_batch([(None, b"x%d" % i)])}})
                assert res[(topic, 0)]["error"] == KAFKA_STORAGE_ERROR, res
        finally:
            resource.prlimit(pid, resource.RLIMIT_NOFILE, (soft, hard))
        lines = [ln for ln in broker.stderr_all().splitlines() if "Too many open files" in ln]
        assert 1 <= len(lines) <= 3, lines
        res = c.produce({topic: {0: kproto.record_batch([(None, b"back")])}})
        assert res[(topic, 0)]["error"] == 0 and res[(topic, 0)]["base_offset"] == 0, res
    d = fetch_one(broker, topic, 0, 0)
    assert d["error"] == 0 and [r[3] for r in kproto.records_of(d["records"])] == [b"back"], d


def test_partition_that_cannot_open_is_retried_not_left_offline(broker):
    """CreateTopics while no descriptor can be opened: the partitions cannot open (one
    rate-limited line), and open once descriptors are back, without a restart."""
    topic = "late-open"
    pid = broker.proc.pid
    soft, hard = resource.prlimit(pid, resource.RLIMIT_NOFILE)
    with broker.conn() as c:
        assert c.api_versions(0)[0] == 0  # accepted before the limit drops
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (lowest_free_fd(pid), hard))
        try:
            res = c.create_topics_v([(topic, 20, 1, None)], version=5)
            assert res[topic]["error"] == 0, res[topic]
            time.sleep(1)
            res = c.produce({topic: {0: kproto.record_batch([(None, b"early")])}})
            assert res[(topic, 0)]["error"] != 0, res
        finally:
            resource.prlimit(pid, resource.RLIMIT_NOFILE, (soft, hard))
    text = broker.stderr_all()
    assert 1 <= text.count("stays offline") <= 3, text.count("stays offline")
    harness.wait_leaders(broker, [topic], timeout=60)
    deadline = time.monotonic() + 60
    while True:
        with broker.conn() as c:
            res = c.produce({topic: {7: kproto.record_batch([(None, b"late")])}})
        if res[(topic, 7)]["error"] == 0 or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert res[(topic, 7)]["error"] == 0, res
    d = fetch_one(broker, topic, 7, 0)
    assert [r[3] for r in kproto.records_of(d["records"] or b"")] == [b"late"], d
