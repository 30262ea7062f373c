# SPDX-License-Identifier: Apache-2.0
"""A confluent-kafka exactly-once copier, run as a process by txn_lib.copier_check:
consumes IN in GROUP with read_committed, produces each record to OUT's partition of the
same number, and every N records or T ms sends the consumed offsets to the transaction
and commits it. On any error it exits (status 3); the check restarts it.

usage: txn_copier_ck.py BOOTSTRAP GROUP IN OUT TRANSACTIONAL_ID N T_MS TXN_TIMEOUT_MS"""
import os
import sys
import time
import traceback

from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition


def main():
    bootstrap, group, in_topic, out_topic, tid = sys.argv[1:6]
    every, every_ms, txn_timeout = int(sys.argv[6]), int(sys.argv[7]), int(sys.argv[8])
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": tid,
                  "transaction.timeout.ms": txn_timeout, "linger.ms": 5})
    p.init_transactions(30)
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                  "isolation.level": "read_committed", "enable.auto.commit": False,
                  "auto.offset.reset": "earliest", "session.timeout.ms": 6000,
                  "heartbeat.interval.ms": 500, "max.poll.interval.ms": 20000})
    state = {"open": False, "n": 0, "t0": 0.0, "next": {}}

    def commit():
        if not state["open"]:
            return
        offs = [TopicPartition(in_topic, part, off) for part, off in state["next"].items()]
        p.send_offsets_to_transaction(offs, c.consumer_group_metadata(), 30)
        p.commit_transaction(30)
        state.update(open=False, n=0, next={})

    def on_revoke(_c, _parts):
        commit()

    c.subscribe([in_topic], on_revoke=on_revoke)
    while True:
        for m in c.consume(num_messages=200, timeout=0.05):
            if m.error():
                if m.error().code() == KafkaError._PARTITION_EOF:
                    continue
                raise RuntimeError("consumer error: %s" % m.error())
            if not state["open"]:
                p.begin_transaction()
                state.update(open=True, t0=time.monotonic())
            p.produce(out_topic, key=m.key(), value=m.value(), partition=m.partition())
            state["next"][m.partition()] = m.offset() + 1
            state["n"] += 1
        if state["open"] and (state["n"] >= every or
                              (time.monotonic() - state["t0"]) * 1000 >= every_ms):
            commit()


if __name__ == "__main__":
    try:
        main()
    except BaseException:  # noqa: B902 - any failure ends the copier; the check restarts it
        traceback.print_exc()
        sys.stderr.flush()
        os._exit(3)
