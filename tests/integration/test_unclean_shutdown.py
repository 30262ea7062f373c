# SPDX-License-Identifier: Apache-2.0
"""KIP-966's unclean-shutdown detection, end to end on one broker: the registration names
the broker epoch of the previous one (PreviousBrokerEpoch) after a clean stop (the marker
names it) and after a kill -9 on a machine that stayed up (the log directory's note is from
this boot), and names none after a crash of the machine (a note from another boot). A
one-broker cluster keeps working in every case: its one replica, the last copy known, is
elected again even after an unclean shutdown."""
import json
import os
import re

from confluent_kafka import Producer

import harness

NOTE = ".tally_broker_epoch"
MARKER = ".kafka_cleanshutdown"


def produce(b, topic, n, start):
    p = Producer({"bootstrap.servers": b.bootstrap, "acks": "all", "enable.idempotence": False})
    failed = []
    for i in range(start, start + n):
        p.produce(topic, b"rec-%06d" % i, on_delivery=lambda err, _m: err and failed.append(err))
    assert p.flush(60) == 0
    assert not failed, failed


def read_all(b, topic):
    starts = harness.offsets(b, topic, [0], ts=-2)
    return [m.value() for m in harness.consume_assigned(b, topic, starts)[0]]


def last_log(b):
    with open(b.log_paths[-1], "rb") as f:
        return f.read().decode(errors="replace")


def registered_epoch(b):
    m = re.findall(r"registered with the controller at broker epoch (\d+)", last_log(b))
    assert m, b.stderr_tail()
    return int(m[-1])


def previous_epoch_logged(b):
    """The epoch this start registered with as PreviousBrokerEpoch, or None; the broker's
    reading of its log directory and the controller's judgement must agree."""
    text = last_log(b)
    m = re.search(r"the logs in \S+ lost nothing since broker epoch (\d+)", text)
    c = re.search(r"broker 1 registered at epoch \d+ after a clean shutdown at epoch (\d+)", text)
    if m:
        assert c and c.group(1) == m.group(1), b.stderr_tail()
        return int(m.group(1))
    assert "registering without a previous broker epoch" in text, b.stderr_tail()
    assert c is None and re.search(r"broker 1 registered at epoch \d+ \(previous broker "
                                   r"epoch -1: as after an unclean shutdown", text), b.stderr_tail()
    return None


def test_previous_broker_epoch_after_clean_stop_kill_and_machine_crash(broker):
    assert previous_epoch_logged(broker) is None  # a first start
    harness.create_topics(broker, [("kip966", 1, {})])
    produce(broker, "kip966", 50, 0)
    e1 = registered_epoch(broker)

    # A clean stop: the marker names the epoch, and the next registration names it too.
    broker.stop()
    with open(os.path.join(broker.data_dir, MARKER)) as f:
        assert json.load(f) == {"version": 0, "brokerEpoch": e1}
    broker.start()
    assert previous_epoch_logged(broker) == e1
    assert not os.path.exists(os.path.join(broker.data_dir, MARKER))
    e2 = registered_epoch(broker)
    assert e2 > e1
    produce(broker, "kip966", 50, 50)

    # kill -9 on a machine that stays up: the page cache kept everything; the note says so.
    broker.restart(hard=True)
    assert previous_epoch_logged(broker) == e2
    harness.wait_leaders(broker, ["kip966"])
    assert read_all(broker, "kip966") == [b"rec-%06d" % i for i in range(100)]
    e3 = registered_epoch(broker)

    # A machine crash: the note comes from another boot. The broker registers as after an
    # unclean shutdown, and its one replica still leads (no other copy exists).
    broker.kill()
    path = os.path.join(broker.data_dir, NOTE)
    with open(path) as f:
        _boot, epoch = f.read().split()
    assert int(epoch) == e3
    with open(path, "w") as f:
        f.write("00000000-0000-0000-0000-000000000000 %d\n" % e3)
    broker.start()
    assert previous_epoch_logged(broker) is None
    harness.wait_leaders(broker, ["kip966"])
    produce(broker, "kip966", 10, 100)
    assert read_all(broker, "kip966") == [b"rec-%06d" % i for i in range(110)]
