# SPDX-License-Identifier: Apache-2.0
"""A full disk: the log directory is a small tmpfs. Produce requests that do not fit get
KAFKA_STORAGE_ERROR, nothing half-written is ever served, every acknowledged record stays
readable, other clients keep being served, and writes work again once space is freed."""
import os

import harness
import kproto as kp

KAFKA_STORAGE_ERROR = 56


def test_full_disk_fails_writes_cleanly_and_keeps_acknowledged_data(broker_factory, small_fs):
    from confluent_kafka import Producer

    # The metadata quorum stays on the normal disk (its log preallocates segments): this
    # is about the data path.
    b = broker_factory(settings={"log.dirs": str(small_fs / "data"),
                                 "metadata.log.dir": str(small_fs.parent / "meta")})
    harness.create_topics(b, [("full", 1, {"segment.bytes": "1048576"})])
    value = os.urandom(900)
    acked, errors = [], []

    def report(err, msg):
        if err is None:
            acked.append(msg.offset())
        else:
            errors.append(err)

    p = Producer({"bootstrap.servers": b.bootstrap, "acks": "all", "linger.ms": 5,
                  "retries": 0, "message.timeout.ms": 20000})
    for i in range(12000):  # ~10 MiB: more than the 6 MiB file system holds
        p.produce("full", value=b"%08d" % i + value, on_delivery=report)
        if i % 500 == 0:
            p.poll(0)
    p.flush(60)
    assert acked, "nothing was acknowledged before the disk filled"
    assert errors, "the disk never filled"
    assert all(e.code() == KAFKA_STORAGE_ERROR for e in errors), set(str(e) for e in errors)

    # Everything acknowledged is readable, exactly once, in order, and nothing else is.
    got = harness.consume_assigned(b, "full", {0: 0}, {0: len(acked)}, timeout=60)[0]
    assert [m.offset() for m in got] == sorted(acked)
    assert all(m.value()[8:] == value for m in got)
    with b.conn() as c:  # the broker still answers other requests
        assert "full" in c.metadata(["full"], version=1)["topics"]
    b.check_sanitizers()

    # Free space by deleting records (whole segments go), then writes work again.
    err, _ts, end = harness.list_offset(b, "full", 0, ts=kp.LATEST)
    assert err == kp.NONE and end == len(acked)
    with b.conn() as c:
        res = c.delete_records({"full": {0: end}})
    assert res[("full", 0)][0] == kp.NONE, res
    ok = []
    p2 = Producer({"bootstrap.servers": b.bootstrap, "acks": "all"})
    for i in range(100):
        p2.produce("full", value=b"after-%d" % i,
                   on_delivery=lambda err, msg: ok.append(err is None))
    p2.flush(30)
    assert ok == [True] * 100
    log = open(b.log_paths[-1]).read()
    assert "No space left on device" in log or "ENOSPC" in log, log[-2000:]
    print("ENOSPC lines:", sum("No space" in l for l in log.splitlines()), "acked", len(acked),
          "failed", len(errors))
