# SPDX-License-Identifier: Apache-2.0
"""An acks=all idempotent producer run as its own process, so that it can sit in one side's
network namespace (netns.Net.wrap) while the partition tests cut the network
(test_netns_partition.py).

    netns_producer.py BOOTSTRAP TOPIC PARTITIONS NAME OUT [RATE [REQUEST_TIMEOUT_MS]]

Produces to each partition in turn, RATE records a second (default 200): record k of
partition p has the value NAME-p<p>-<k, 9 digits>. Every produce() and every delivery
report is one JSON line on OUT, written as it happens, with the time on the monotonic clock
(the test's clock too: namespaces do not change it):
    {"sent": [p, k, t]}                     produce() accepted record k of partition p
    {"ack": [p, k, offset, t]}              acknowledged at offset
    {"err": [p, k, "error", t]}             a delivery that failed
    {"fatal": "error", "t": t}              a fatal client error
SIGTERM stops producing; the producer then waits up to 150 s for every outstanding delivery
report and exits (0; 3 when some were still outstanding; 4 after a fatal error).
"""
import json
import signal
import sys
import time

from confluent_kafka import KafkaException, Producer

stop = False


def on_term(_sig, _frm):
    global stop
    stop = True


def main():
    bootstrap, topic, partitions, name, out = sys.argv[1:6]
    partitions = int(partitions)
    rate = float(sys.argv[6]) if len(sys.argv) > 6 else 200.0
    request_timeout_ms = int(sys.argv[7]) if len(sys.argv) > 7 else 60000
    signal.signal(signal.SIGTERM, on_term)
    f = open(out, "w", buffering=1)

    def emit(obj):
        f.write(json.dumps(obj) + "\n")

    def on_error(err):
        if err.fatal():
            emit({"fatal": str(err), "t": time.monotonic()})

    # No record may time out in the queue while a cut lasts. On the minority's side a
    # request parked on the cut-off leader must still be parked when the cut heals (a long
    # request.timeout.ms); on the majority's side a short one lets the producer give up a
    # request to the cut-off leader and go on with the new one.
    p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all",
                  "linger.ms": 5, "message.timeout.ms": 300000,
                  "request.timeout.ms": request_timeout_ms, "retry.backoff.ms": 100,
                  "topic.metadata.refresh.interval.ms": 1000,
                  "socket.timeout.ms": request_timeout_ms, "log_level": 0,
                  "error_cb": on_error})

    def on_delivery(err, msg):
        part, k = msg.partition(), int(msg.value().rsplit(b"-", 1)[1])
        if err is not None:
            emit({"err": [part, k, str(err), time.monotonic()]})
        else:
            emit({"ack": [part, k, msg.offset(), time.monotonic()]})

    try:
        return produce(p, topic, partitions, name, rate, emit, on_delivery)
    except KafkaException as e:  # a fatal error, raised by poll() or produce()
        emit({"fatal": str(e), "t": time.monotonic()})
        return 4
    finally:
        f.close()


def produce(p, topic, partitions, name, rate, emit, on_delivery):
    nxt = [0] * partitions
    sent = 0
    t0 = time.monotonic()
    while not stop and sent < rate * 3600:
        due = int((time.monotonic() - t0) * rate) + 1
        while sent < due and not stop:
            part = sent % partitions
            value = b"%s-p%d-%09d" % (name.encode(), part, nxt[part])
            try:
                p.produce(topic, value, partition=part, on_delivery=on_delivery)
            except BufferError:
                p.poll(0.05)
                continue
            emit({"sent": [part, nxt[part], time.monotonic()]})
            nxt[part] += 1
            sent += 1
        p.poll(0.01)
    left = p.flush(150)
    return 3 if left else 0


if __name__ == "__main__":
    sys.exit(main())
