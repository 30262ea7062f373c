# SPDX-License-Identifier: Apache-2.0
"""A produced batch's codec work runs on the thread pool, never on the event loop (DESIGN.md
§3, issue 20 item 4): a compressed batch's check decompresses it, and a topic whose
compression.type differs rewrites it. The assertion is the test build's count of
compressions and decompressions made on the loop thread (`tally_test_loop_codec_calls`),
which must not grow while such batches are produced, with the records all there, in order.

While a batch is on the pool its connection's later requests wait (net_hold_input): a
producer pipelining compressed and uncompressed batches with consecutive sequence numbers
must have every one appended in the order it sent them (the broker would answer
OUT_OF_ORDER_SEQUENCE_NUMBER to a batch appended ahead of an earlier one)."""

import harness
import kproto
from test_batch_validation import CODECS, compressed_batch, stored_batches

PRODUCE_V = 8
RECORDS = 50


def scrape(port, name):
    return harness.metric_value(port, name)


def pipelined(c, topic, batches):
    """Sends one Produce request per batch in one write; returns the answers in order."""
    corrs, frames = [], []
    for batch in batches:
        corr = c.next_corr()
        corrs.append(corr)
        frames.append(kproto.produce_request(corr, {topic: {0: batch}}, acks=1,
                                             version=PRODUCE_V))
    c.send(b"".join(frames))
    answers = []
    for corr in corrs:
        got, body = c.recv_response()
        assert got == corr, "answer out of order: %d, expected %d" % (got, corr)
        answers.append(kproto.parse_produce(body, PRODUCE_V)[0][(topic, 0)])
    return answers


def values(prefix, seq):
    return [b"%s-%06d" % (prefix, seq + i) for i in range(RECORDS)]


def test_codec_work_is_on_the_pool_and_pipelined_batches_keep_their_order(broker_factory):
    mport = harness.free_port()
    b = broker_factory(settings={"metrics.listener": "127.0.0.1:%d" % mport})
    harness.create_topics(b, [("pool-order", 1, None),
                              ("pool-rewrite", 1, {"compression.type": "zstd"})])
    codecs = [CODECS[n] for n in sorted(CODECS)]
    before = scrape(mport, "tally_test_loop_codec_calls")
    with b.conn(timeout=60) as c:
        pid = c.init_producer_id()
        assert pid["error"] == 0, pid
        producer = dict(producer_id=pid["producer_id"], producer_epoch=pid["producer_epoch"])
        # 40 batches of one producer, consecutive sequences: every other one compressed (each
        # codec in turn), the others plain, which the loop would take at once.
        batches = []
        for i in range(40):
            seq = i * RECORDS
            if i % 2 == 0:
                batches.append(compressed_batch(codecs[(i // 2) % len(codecs)],
                                                values(b"o", seq), base_sequence=seq,
                                                **producer))
            else:
                batches.append(kproto.idempotent_batch(RECORDS, base_sequence=seq,
                                                       prefix=b"o-", **producer))
        answers = pipelined(c, "pool-order", batches)
        assert [a["error"] for a in answers] == [0] * 40, answers
        assert [a["base_offset"] for a in answers] == [i * RECORDS for i in range(40)]
        # A topic rewriting every batch as zstd: plain and lz4 batches alike.
        rewrite = [compressed_batch(CODECS["lz4"] if i % 2 else 0, values(b"r", i * RECORDS))
                   for i in range(10)]
        answers = pipelined(c, "pool-rewrite", rewrite)
        assert [a["error"] for a in answers] == [0] * 10, answers
    codec_calls = scrape(mport, "tally_test_loop_codec_calls") - before

    msgs = harness.consume_assigned(b, "pool-order", {0: 0}, ends={0: 40 * RECORDS},
                                    timeout=60)[0]
    want = []
    for i in range(40):
        want += values(b"o", i * RECORDS) if i % 2 == 0 else [
            b"o-%d" % (i * RECORDS + k) for k in range(RECORDS)]
    assert [m.value() for m in msgs] == want
    assert [bt["attributes"] & 7 for bt in stored_batches(b, "pool-rewrite")] == [
        CODECS["zstd"]] * 10
    msgs = harness.consume_assigned(b, "pool-rewrite", {0: 0}, ends={0: 10 * RECORDS},
                                    timeout=60)[0]
    assert [m.value() for m in msgs] == [v for i in range(10) for v in values(b"r", i * RECORDS)]
    assert codec_calls == 0, (
        "%d compressions or decompressions of produced batches ran on the event loop" %
        codec_calls)


def test_librdkafka_compressed_idempotent_producer(broker_factory):
    """librdkafka's idempotent producer, five requests in flight, each codec: every record
    acknowledged once and read back in order, no codec work on the loop."""
    from confluent_kafka import Producer
    mport = harness.free_port()
    b = broker_factory(settings={"metrics.listener": "127.0.0.1:%d" % mport})
    names = sorted(CODECS)
    harness.create_topics(b, [("pool-" + n, 1, None) for n in names])
    n_msgs = 4000
    before = scrape(mport, "tally_test_loop_codec_calls")
    for name in names:
        errors = []
        p = Producer({"bootstrap.servers": b.bootstrap, "enable.idempotence": True,
                      "compression.type": name, "linger.ms": 2, "batch.num.messages": 200,
                      "max.in.flight.requests.per.connection": 5})
        for i in range(n_msgs):
            p.produce("pool-" + name, value=b"%s-%06d" % (name.encode(), i), partition=0,
                      on_delivery=lambda err, msg: errors.append(err) if err else None)
            p.poll(0)
        assert p.flush(60) == 0
        assert errors == []
    codec_calls = scrape(mport, "tally_test_loop_codec_calls") - before
    for name in names:
        msgs = harness.consume_assigned(b, "pool-" + name, {0: 0}, ends={0: n_msgs},
                                        timeout=60)[0]
        assert [m.value() for m in msgs] == [b"%s-%06d" % (name.encode(), i)
                                             for i in range(n_msgs)]
    assert codec_calls == 0, (
        "%d compressions or decompressions of produced batches ran on the event loop" %
        codec_calls)


def test_transactional_compressed_batches_checked_once_on_the_pool(broker_factory):
    """A transaction's first batch on a partition waits for the coordinator's word (KIP-890)
    and is then handled again: it must use the pool's check (and its rewrite: the topic
    stores gzip, the producer sends zstd), not redo it on the loop. Committed transactions
    are read back under read_committed, the aborted one is not."""
    from confluent_kafka import Producer
    mport = harness.free_port()
    b = broker_factory(settings={"metrics.listener": "127.0.0.1:%d" % mport})
    harness.create_topics(b, [("pool-txn", 2, {"compression.type": "gzip"})])
    before = scrape(mport, "tally_test_loop_codec_calls")
    p = Producer({"bootstrap.servers": b.bootstrap, "transactional.id": "pool-txn",
                  "compression.type": "zstd", "linger.ms": 2})
    p.init_transactions(30)
    want = {0: [], 1: []}
    for t in range(4):
        p.begin_transaction()
        for i in range(300):
            v = b"t%d-%04d" % (t, i)
            p.produce("pool-txn", value=v, partition=i % 2)
            if t != 2:
                want[i % 2].append(v)
        if t == 2:
            p.abort_transaction(30)
        else:
            p.commit_transaction(30)
    codec_calls = scrape(mport, "tally_test_loop_codec_calls") - before
    # Each partition ends with the last transaction's COMMIT marker, which a consumer is
    # never handed: its position stops at the marker's offset.
    ends = {part: off - 1 for part, off in harness.offsets(b, "pool-txn", [0, 1]).items()}
    got = harness.consume_assigned(b, "pool-txn", {0: 0, 1: 0}, ends=ends, timeout=60,
                                   conf={"isolation.level": "read_committed"})
    for part in (0, 1):
        assert [m.value() for m in got[part]] == want[part]
        assert {bt["attributes"] & 7 for bt in stored_batches(b, "pool-txn", part)
                if not bt["attributes"] & 0x20} == {CODECS["gzip"]}
    assert codec_calls == 0, (
        "%d compressions or decompressions of produced batches ran on the event loop" %
        codec_calls)


def test_old_message_sets_are_converted_on_the_pool_in_order(broker_factory):
    """Produce v0-2 carries magic 0/1 message sets, converted to a v2 batch before the append
    (a gzip wrapper decompressed on the way): that work is the pool's too. Pipelined plain and
    gzip sets of every old version append in the order sent, and a topic that stores lz4
    rewrites the converted batch on the pool as well."""
    mport = harness.free_port()
    b = broker_factory(settings={"metrics.listener": "127.0.0.1:%d" % mport})
    harness.create_topics(b, [("pool-old", 1, None),
                              ("pool-old-lz4", 1, {"compression.type": "lz4"})])
    ts = 1700000000000
    sets, want = [], []
    for i in range(24):
        version, magic, codec = i % 3, (0, 0, 1)[i % 3], kproto.CODEC_GZIP if i % 2 else 0
        recs = [(b"k%d" % i, b"old-%02d-%03d" % (i, r)) for r in range(RECORDS)]
        sets.append((version, kproto.legacy_set(recs, magic, ts, codec)))
        want += [v for _k, v in recs]
    before = scrape(mport, "tally_test_loop_codec_calls")
    with b.conn(timeout=60) as c:
        for topic in ("pool-old", "pool-old-lz4"):
            corrs, frames = [], []
            for version, data in sets:
                corr = c.next_corr()
                corrs.append((corr, version))
                frames.append(kproto.produce_old_request(corr, {topic: {0: data}}, acks=1,
                                                         version=version))
            c.send(b"".join(frames))
            offsets = []
            for corr, version in corrs:
                got, body = c.recv_response()
                assert got == corr, "answer out of order: %d, expected %d" % (got, corr)
                res = kproto.parse_produce_old(body, version)[(topic, 0)]
                assert res["error"] == 0, res
                offsets.append(res["base_offset"])
            assert offsets == [i * RECORDS for i in range(len(sets))]
    codec_calls = scrape(mport, "tally_test_loop_codec_calls") - before
    for topic in ("pool-old", "pool-old-lz4"):
        msgs = harness.consume_assigned(b, topic, {0: 0}, ends={0: len(want)}, timeout=60)[0]
        assert [m.value() for m in msgs] == want
    assert {bt["attributes"] & 7 for bt in stored_batches(b, "pool-old")} == {0}
    assert {bt["attributes"] & 7 for bt in stored_batches(b, "pool-old-lz4")} == {CODECS["lz4"]}
    assert codec_calls == 0, (
        "%d compressions or decompressions of produced batches ran on the event loop" %
        codec_calls)


def test_record_errors_of_a_compressed_batch_are_walked_on_the_pool(broker_factory):
    """A compressed batch whose records are at fault is refused with each of them listed
    (RecordErrors, KIP-467): reading them again for the list decompresses the batch again,
    which is the pool's work too, done with the check. Keyless records in a compacted topic and
    timestamps out of range, gzip; the answers are test_record_errors' own."""
    from test_record_errors import INVALID_RECORD, INVALID_TIMESTAMP, KEYLESS, gzip_batch, now_ms
    mport = harness.free_port()
    b = broker_factory(settings={"metrics.listener": "127.0.0.1:%d" % mport})
    harness.create_topics(b, [("pool-compact", 1, {"cleanup.policy": "compact"}),
                              ("pool-ts", 1, {"message.timestamp.before.max.ms": "3600000"})])
    keyless = [(None if i in KEYLESS else b"k%d" % i, b"v%d" % i) for i in range(100)]
    now = now_ms()
    ts = [now] * 20
    ts[4] = ts[11] = now - 2 * 3600000
    before = scrape(mport, "tally_test_loop_codec_calls")
    with b.conn(timeout=60) as c:
        d = c.produce({"pool-compact": {0: gzip_batch(keyless)}}, acks=-1,
                      version=9)[("pool-compact", 0)]
        assert d["error"] == INVALID_RECORD, d
        assert [i for i, _m in d["record_errors"]] == KEYLESS, d
        assert all("without key" in m for _i, m in d["record_errors"]), d
        d = c.produce({"pool-ts": {0: gzip_batch([(b"k%d" % i, b"v") for i in range(20)], ts)}},
                      acks=-1, version=9)[("pool-ts", 0)]
        assert d["error"] == INVALID_TIMESTAMP, d
        assert [i for i, _m in d["record_errors"]] == [4, 11], d
        assert d["record_errors"][0][1].startswith("Timestamp %d of message with offset 4 " %
                                                   ts[4]), d
    codec_calls = scrape(mport, "tally_test_loop_codec_calls") - before
    assert codec_calls == 0, (
        "%d compressions or decompressions of produced batches ran on the event loop" %
        codec_calls)
