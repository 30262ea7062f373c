#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""librdkafka (confluent-kafka-python) over SSL (mutual TLS), SASL_PLAINTEXT and SASL_SSL: the
same cases as kafkajs/security.js, every case at once (one thread each) in one process. The
cases come as JSON on stdin (see security.js). An "ok" case produces p-0..p-4, commits a
transaction of c-0..c-2 that also commits offset 5 for the group <group>-txn
(send_offsets_to_transaction), aborts one of a-0..a-1 (with offset 99), produces "end", then
reads the topic in a consumer group with read_committed until "end" and commits the next
offset. A "fail" case tries to produce one record and reports the errors it got (the
delivery report's and the client's own, e.g. the SASL or TLS failure). Prints one JSON object
per case, one a line."""
import json
import sys
import threading

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition


def conf(c, **extra):
    ssl, sasl = c["ssl"], c["sasl"]
    out = {"bootstrap.servers": c["broker"], "client.id": "tally-security-" + c["name"]}
    if sasl:
        out.update({"security.protocol": "SASL_SSL" if ssl else "SASL_PLAINTEXT",
                    "sasl.mechanism": sasl["mechanism"], "sasl.username": sasl["username"],
                    "sasl.password": sasl["password"]})
    else:
        out["security.protocol"] = "SSL"
    if ssl:
        out["ssl.ca.location"] = ssl["ca"]
        if ssl.get("cert"):
            out["ssl.certificate.location"] = ssl["cert"]
            out["ssl.key.location"] = ssl["key"]
    out.update(extra)
    return out


def produce(p, topic, values):
    errors = []
    for v in values:
        p.produce(topic, value=v.encode(), partition=0,
                  on_delivery=lambda err, msg: errors.append(err) if err else None)
    if p.flush(60) != 0 or errors:
        raise KafkaException(errors[0] if errors else "deliveries still pending")


def ok_case(c):
    topic = c["topic"]
    p = Producer(conf(c, acks="all"))
    produce(p, topic, ["p-0", "p-1", "p-2", "p-3", "p-4"])

    tp = Producer(conf(c, **{"transactional.id": c["txn"]}))
    tp.init_transactions(30)
    meta = Consumer(conf(c, **{"group.id": c["group"] + "-txn"})).consumer_group_metadata()
    for values, offset, commit in ((["c-0", "c-1", "c-2"], 5, True), (["a-0", "a-1"], 99, False)):
        tp.begin_transaction()
        for v in values:
            tp.produce(topic, value=v.encode(), partition=0)
        tp.send_offsets_to_transaction([TopicPartition(topic, 0, offset)], meta, 30)
        # The records reach the broker before the outcome: abort_transaction would purge any
        # still queued, and the aborted records are part of what the test looks for.
        if tp.flush(30) != 0:
            raise KafkaException("transactional records still pending")
        if commit:
            tp.commit_transaction(30)
        else:
            tp.abort_transaction(30)
    produce(p, topic, ["end"])

    cons = Consumer(conf(c, **{"group.id": c["group"], "auto.offset.reset": "earliest",
                               "isolation.level": "read_committed",
                               "enable.auto.commit": False}))
    cons.subscribe([topic])
    values, nxt = [], None
    try:
        for _ in range(600):
            m = cons.poll(0.1)
            if m is None:
                continue
            if m.error():
                raise KafkaException(m.error())
            values.append(m.value().decode())
            if values[-1] == "end":
                nxt = m.offset() + 1
                break
        if nxt is None:
            raise RuntimeError('no "end" after %d records' % len(values))
        cons.commit(offsets=[TopicPartition(topic, 0, nxt)], asynchronous=False)
    finally:
        cons.close()
    return {"values": values, "committed": str(nxt)}


def fail_case(c):
    seen = []
    p = Producer(conf(c, **{"message.timeout.ms": 3000, "retries": 0,
                            "error_cb": lambda e: seen.append(str(e))}))
    produce_errors = []
    p.produce(c["topic"], value=b"must-not-land", partition=0,
              on_delivery=lambda err, msg: produce_errors.append(str(err)) if err else None)
    p.flush(10)
    if produce_errors or seen:
        raise RuntimeError(" <- ".join(produce_errors + seen[:3]))


def run(c, results):
    try:
        if c["expect"] == "ok":
            r = dict(name=c["name"], ok=True, **ok_case(c))
        else:
            fail_case(c)
            r = {"name": c["name"], "ok": True}
    except Exception as e:  # reported per case
        r = {"name": c["name"], "ok": False, "error": "%s: %s" % (type(e).__name__, e)}
    results.append(r)


def main():
    cases = json.load(sys.stdin)["cases"]
    results = []
    threads = [threading.Thread(target=run, args=(c, results)) for c in cases]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    sys.stdout.write("".join(json.dumps(r) + "\n" for r in results))


if __name__ == "__main__":
    main()
