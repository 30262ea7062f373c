# SPDX-License-Identifier: Apache-2.0
"""Damaged segment files (issue 18, items 7b and 7c), tried as a careless operator would: one
byte of a batch header, or of a batch's records, flipped in a sealed segment after a clean stop
(SIGTERM). The rule (docs/operations.md, "Damaged segment files"): the start checks every batch
it trusted in the background (header, offsets, CRC32C); a damaged one is quarantined — one ERROR
line names the file, the position and the offsets, it is never served, readers skip its offsets,
producers go on — and nothing of what it trusted is served before the check has passed it.
After kill -9 the damage past the recovery point is cut at start-up, as before."""
import os
import re
import struct
import subprocess
import time

import pytest

import harness
import kproto

BATCHES, PER_BATCH = 30, 10
VICTIM = 2  # a batch of the first (sealed) segment, not just before an .index entry


def value(i):
    return b"old-%05d-" % i + b"v" * 60


def fill(b, topic):
    """30 batches of 10 records, one Produce each: offsets 10k..10k+9 in batch k."""
    with b.conn() as c:
        for k in range(BATCHES):
            recs = [(None, value(k * PER_BATCH + j)) for j in range(PER_BATCH)]
            res = c.produce({topic: {0: kproto.record_batch(recs)}}, acks=1)
            d = res[(topic, 0)]
            assert d["error"] == 0 and d["base_offset"] == k * PER_BATCH, d


def batches_of(path):
    """[(position, base offset, size)] of the batches of a .log file."""
    data = open(path, "rb").read()
    out, pos = [], 0
    while pos + 12 <= len(data):
        base, length = struct.unpack(">qi", data[pos:pos + 12])
        out.append((pos, base, 12 + length))
        pos += 12 + length
    assert pos == len(data), (path, pos, len(data))
    return out


def flip(path, at, mask):
    with open(path, "r+b") as f:
        f.seek(at)
        byte = f.read(1)[0]
        f.seek(at)
        f.write(bytes([byte ^ mask]))


# Where the byte goes: the base offset's third byte (outside the CRC: only the offsets tell),
# the batch length (the walk cannot step over the batch), or a byte of a record (only the CRC
# tells).
WHERE = {
    "header_base_offset": lambda pos, size: (pos + 5, 0x01),
    "header_length": lambda pos, size: (pos + 10, 0x02),
    "body": lambda pos, size: (pos + size - 20, 0x5A),
}


def damaged_setup(broker, topic, where, stop):
    cfg = {"segment.bytes": "8192"}
    if where == "header_length":
        # Batches start again at the next .index entry whose batch is intact: with an entry
        # at every batch, that is the next batch (with the default 4 KiB, the batches up to
        # the next entry go with it, as docs/operations.md says).
        cfg["index.interval.bytes"] = "1"
    harness.create_topics(broker, [(topic, 1, cfg)])
    fill(broker, topic)
    if stop == "clean":
        broker.stop()
    else:
        broker.kill()
    logs = harness.segment_files(broker, topic, 0)
    assert len(logs) >= 3, logs  # the victim's segment is sealed
    victim = logs[0]
    batches = batches_of(victim)
    assert [bt[1] for bt in batches] == [k * PER_BATCH for k in range(len(batches))]
    assert len(batches) > VICTIM + 2, batches
    pos, base, size = batches[VICTIM]
    at, mask = WHERE[where](pos, size)
    flip(victim, at, mask)
    return victim, pos, base


def consume_all_confluent(b, topic, expect_last, timeout=60):
    """Reads the partition from the beginning with confluent-kafka (CRC checks on, so that a
    damaged batch served would show as an error) until offset expect_last; returns
    ({offset: value}, [errors])."""
    from confluent_kafka import Consumer, KafkaError, TopicPartition
    c = Consumer({"bootstrap.servers": b.bootstrap, "group.id": "damage", "check.crcs": True,
                  "enable.auto.commit": False, "enable.partition.eof": False})
    got, errors = {}, []
    try:
        c.assign([TopicPartition(topic, 0, 0)])
        deadline = time.monotonic() + timeout
        while expect_last not in got and time.monotonic() < deadline:
            for m in c.consume(num_messages=1000, timeout=0.5):
                if m.error():
                    if m.error().code() != KafkaError._PARTITION_EOF:
                        errors.append(str(m.error()))
                    continue
                assert m.offset() not in got, "offset %d delivered twice" % m.offset()
                got[m.offset()] = m.value()
    finally:
        c.close()
    return got, errors


def consume_all_kcat(b, topic):
    r = subprocess.run(["kcat", "-C", "-b", b.bootstrap, "-t", topic, "-p", "0", "-o",
                        "beginning", "-e", "-q", "-f", "%o %s\n", "-X", "check.crcs=true"],
                       capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    out = {}
    for line in r.stdout.decode().splitlines():
        off, val = line.split(" ", 1)
        out[int(off)] = val.encode()
    return out


def wait_for_line(b, pattern, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lines = [ln for ln in b.stderr_all().splitlines() if re.search(pattern, ln)]
        if lines:
            return lines
        time.sleep(0.1)
    raise AssertionError("no line matching %r:\n%s" % (pattern, b.stderr_tail()))


@pytest.mark.parametrize("where", sorted(WHERE))
def test_damaged_batch_after_clean_stop_is_quarantined_never_served(broker, where):
    topic = "dmg-" + where.replace("_", "-")
    victim, pos, base = damaged_setup(broker, topic, where, "clean")
    damaged = set(range(base, base + PER_BATCH))
    found = open(victim, "rb").read()

    broker.start()
    harness.wait_leaders(broker, [topic])
    # At once, before anything says the check is done: reads wait for it rather than
    # serve a batch it has not passed.
    new = [b"new-%02d" % i for i in range(20)]
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0})
    acks = []
    for v in new:
        p.produce(topic, value=v, on_delivery=lambda err, m: acks.append((err, m.offset())))
    assert p.flush(30) == 0
    assert [e for e, _ in acks if e is not None] == [], acks
    end = BATCHES * PER_BATCH + len(new)
    assert sorted(o for _, o in acks) == list(range(BATCHES * PER_BATCH, end))

    got, errors = consume_all_confluent(broker, topic, end - 1)
    assert errors == [], errors
    assert not damaged & set(got), "offsets of the damaged batch were served: %r" % \
        sorted(damaged & set(got))
    want = {o: value(o) for o in range(BATCHES * PER_BATCH) if o not in damaged}
    want.update({BATCHES * PER_BATCH + i: v for i, v in enumerate(new)})
    assert got == want

    assert consume_all_kcat(broker, topic) == want

    # A raw read of a damaged offset resumes right after the batch, with no error.
    with broker.conn() as c:
        for off in (base, base + PER_BATCH - 1):
            d = c.fetch({topic: {0: off}}, version=4, max_wait_ms=0)["partitions"][(topic, 0)]
            assert d["error"] == 0, d
            bts = kproto.parse_record_batches(d["records"] or b"")
            assert bts and bts[0]["base_offset"] == base + PER_BATCH, bts[:1]
            assert all(bt["crc_ok"] for bt in bts)

    # One ERROR line names the file, the position and the offsets; nothing else about it.
    lines = wait_for_line(broker, r"ERROR .*damaged batch")
    assert len(lines) == 1, lines
    assert "%s: damaged batch at position %d (offset %d)" % (victim, pos, base) in lines[0], \
        lines
    assert "offsets %d..%d" % (base, base + PER_BATCH - 1) in lines[0], lines
    assert "refused" not in broker.stderr_all()
    # The file is left as it was found (the next start finds the same damage).
    assert open(victim, "rb").read() == found

    broker.restart()
    harness.wait_leaders(broker, [topic])
    got, errors = consume_all_confluent(broker, topic, end - 1)
    assert errors == [] and got == want
    lines = wait_for_line(broker, r"ERROR .*damaged batch")
    assert len(lines) == 2, lines


def test_damage_past_the_recovery_point_after_kill_is_cut_at_start(broker):
    """kill -9: the tail past the recovery point is rescanned at start-up and cut at the first
    damaged batch, as before (nothing after a torn batch can be trusted there)."""
    topic = "dmg-kill"
    harness.create_topics(broker, [(topic, 1, None)])
    fill(broker, topic)
    broker.kill()
    logs = harness.segment_files(broker, topic, 0)
    assert len(logs) == 1, logs  # the active segment: past the recovery point
    pos, base, size = batches_of(logs[0])[VICTIM]
    flip(logs[0], pos + size - 20, 0x5A)

    broker.start()
    harness.wait_leaders(broker, [topic])
    assert harness.offsets(broker, topic, [0]) == {0: base}
    assert wait_for_line(broker, r"WARN .*truncated")
    got, errors = consume_all_confluent(broker, topic, base - 1)
    assert errors == [] and got == {o: value(o) for o in range(base)}
    assert "damaged batch at position" not in broker.stderr_all()


def test_coordinator_loads_whole_state_while_its_files_are_checked(broker):
    """After a clean stop the coordinators' partitions are checked like any other: a
    coordinator's load that reaches bytes not yet checked waits for them (its partition is
    checked next) rather than take the unchecked rest for the end of its log."""
    harness.create_topics(broker, [("bulk", 1, {"segment.bytes": str(4 << 20)})])
    # 48 MiB queued for the check ahead of __consumer_offsets (created after it).
    with broker.conn(timeout=60) as c:
        for _ in range(48):
            res = c.produce({"bulk": {0: kproto.record_batch([(None, b"b" * 1024)] * 1000)}},
                            acks=1)
            assert res[("bulk", 0)]["error"] == 0, res
    from confluent_kafka import Consumer, TopicPartition
    conf = {"bootstrap.servers": broker.bootstrap, "group.id": "dmg-coord",
            "enable.auto.commit": False}
    c = Consumer(conf)
    try:
        for k in range(50):  # fifty commit records in the group's partition
            c.commit(offsets=[TopicPartition("bulk", 0, 1000 + k)], asynchronous=False)
    finally:
        c.close()
    broker.stop()

    broker.start()
    c = Consumer(conf)
    try:
        got = c.committed([TopicPartition("bulk", 0)], timeout=60)
    finally:
        c.close()
    assert [(t.topic, t.partition, t.offset) for t in got] == [("bulk", 0, 1049)], got
