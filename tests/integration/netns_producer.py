# SPDX-License-Identifier: Apache-2.0
"""An acks=all idempotent producer run as its own process, so that it can sit in one side's
network namespace (netns.Net.wrap) while the partition tests cut the network
(test_netns_partition.py).

    netns_producer.py BOOTSTRAP TOPIC PARTITIONS NAME OUT [RATE [REQUEST_TIMEOUT_MS]]

Produces to each partition in turn, RATE records a second (default 200): record k of
partition p has the value NAME-p<p>-<k, 9 digits>. Every produce() and every delivery
report is one JSON line on OUT, written as it happens, with the time on the monotonic clock
(the test's clock too: namespaces do not change it):
    {"sent": [p, k, t, i]}                  produce() of instance i accepted record k of
                                            partition p
    {"ack": [p, k, offset, t]}              acknowledged at offset
    {"err": [p, k, "error", t, i]}          a delivery of instance i that failed
    {"fatal": "error", "t": t, "inst": i}   a fatal client error of instance i
A fatal error ends the client instance (after its failed deliveries are reported); up to
MAX_INSTANCES instances follow one another, each a new producer (a new producer id), going on
with the next record of each partition: the test judges each fatal error (see
test_netns_partition.client_desync_excuse) and still sees the majority's side go on.
SIGTERM stops producing; the producer then waits up to 150 s for every outstanding delivery
report and exits (0; 3 when some were still outstanding; 4 after a fatal error).

NETNS_PRODUCER_DEBUG (off by default) is librdkafka's `debug` list (e.g. "eos,msg,protocol,
broker"): its log lines then go to stderr, which the test keeps beside OUT (OUT.stderr), to
see what a stuck partition waits for.
"""
import json
import os
import signal
import sys
import time

from confluent_kafka import KafkaException, Producer

stop = False
MAX_INSTANCES = 3


def on_term(_sig, _frm):
    global stop
    stop = True


def debug_conf():
    """librdkafka's debug contexts from NETNS_PRODUCER_DEBUG, logged to stderr; {} if unset."""
    contexts = os.environ.get("NETNS_PRODUCER_DEBUG", "")
    return {"debug": contexts, "log_level": 7} if contexts else {}


def main():
    bootstrap, topic, partitions, name, out = sys.argv[1:6]
    partitions = int(partitions)
    rate = float(sys.argv[6]) if len(sys.argv) > 6 else 200.0
    request_timeout_ms = int(sys.argv[7]) if len(sys.argv) > 7 else 60000
    signal.signal(signal.SIGTERM, on_term)
    f = open(out, "w", buffering=1)

    def emit(obj):
        f.write(json.dumps(obj) + "\n")

    inst = [0]  # the current client instance
    fatal = [None]

    def on_error(err):
        if err.fatal() and fatal[0] is None:
            fatal[0] = str(err)

    # No record may time out in the queue while a cut lasts. On the minority's side a
    # request parked on the cut-off leader must still be parked when the cut heals (a long
    # request.timeout.ms); on the majority's side a short one lets the producer give up a
    # request to the cut-off leader and go on with the new one.
    def new_producer():
        return Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True,
                         "acks": "all", "linger.ms": 5, "message.timeout.ms": 300000,
                         "request.timeout.ms": request_timeout_ms, "retry.backoff.ms": 100,
                         "topic.metadata.refresh.interval.ms": 1000,
                         "socket.timeout.ms": request_timeout_ms, "log_level": 0,
                         "error_cb": on_error, **debug_conf()})

    def on_delivery(err, msg):
        part, k = msg.partition(), int(msg.value().rsplit(b"-", 1)[1])
        if err is not None:
            emit({"err": [part, k, str(err), time.monotonic(), inst[0]]})
        else:
            emit({"ack": [part, k, msg.offset(), time.monotonic()]})

    state = {"nxt": [0] * partitions, "sent": 0, "t0": time.monotonic()}
    any_fatal = False
    try:
        while True:
            p = new_producer()
            try:
                rc = produce(p, topic, partitions, name, rate, emit, on_delivery, state,
                             lambda: fatal[0] is not None, inst[0])
            except KafkaException as e:  # a fatal error, raised by poll() or produce()
                fatal[0] = fatal[0] or str(e)
                rc = None
            if fatal[0] is None:
                return 4 if any_fatal else rc
            any_fatal = True
            emit({"fatal": fatal[0], "t": time.monotonic(), "inst": inst[0]})
            p.flush(10)  # the instance's failed deliveries, reported as such
            fatal[0] = None
            inst[0] += 1
            if stop or inst[0] >= MAX_INSTANCES:
                return 4
    finally:
        f.close()


def produce(p, topic, partitions, name, rate, emit, on_delivery, state, failed, inst):
    """Produces until SIGTERM (then flushes: 0, or 3 with deliveries outstanding) or until
    failed() says the instance had a fatal error (None)."""
    nxt = state["nxt"]
    while not stop and state["sent"] < rate * 3600:
        if failed():
            return None
        due = int((time.monotonic() - state["t0"]) * rate) + 1
        while state["sent"] < due and not stop:
            part = state["sent"] % partitions
            value = b"%s-p%d-%09d" % (name.encode(), part, nxt[part])
            try:
                p.produce(topic, value, partition=part, on_delivery=on_delivery)
            except BufferError:
                p.poll(0.05)
                continue
            emit({"sent": [part, nxt[part], time.monotonic(), inst]})
            nxt[part] += 1
            state["sent"] += 1
        p.poll(0.01)
    left = p.flush(150)
    return 3 if left else 0


if __name__ == "__main__":
    sys.exit(main())
