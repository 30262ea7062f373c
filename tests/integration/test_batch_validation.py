# SPDX-License-Identifier: Apache-2.0
"""What Produce checks in a batch before it is stored (issue 7, defects 3, 6 and 7):
compressed batches are decompressed (bounded by max.message.bytes) and their records
walked; counts, offset deltas and lengths must agree with the header; record timestamps
are checked against message.timestamp.*; maxTimestamp is computed from the records; and
attribute bits a client may not set are refused or dropped. After a refused batch, the
valid records around it stay consumable."""
import ctypes
import ctypes.util
import time
import zlib

import pytest

import harness
import kproto as kp

CORRUPT_MESSAGE = 2
MESSAGE_TOO_LARGE = 10
INVALID_TIMESTAMP = 32
INVALID_RECORD = 87

GZIP, SNAPPY, LZ4, ZSTD = 1, 2, 3, 4
CODECS = {"gzip": GZIP, "snappy": SNAPPY, "lz4": LZ4, "zstd": ZSTD}

# ---------------------------------------------------------------- codecs (ctypes)


def _lib(name):
    path = ctypes.util.find_library(name)
    if path is None:
        pytest.skip("codec library lib%s not found (make deps)" % name)
    return ctypes.CDLL(path)


def gzip_compress(data):
    c = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return c.compress(data) + c.flush()


def snappy_compress(data):
    lib = _lib("snappy")
    lib.snappy_max_compressed_length.restype = ctypes.c_size_t
    lib.snappy_max_compressed_length.argtypes = [ctypes.c_size_t]
    cap = lib.snappy_max_compressed_length(len(data))
    out = ctypes.create_string_buffer(cap)
    n = ctypes.c_size_t(cap)
    assert lib.snappy_compress(data, ctypes.c_size_t(len(data)), out, ctypes.byref(n)) == 0
    return out.raw[:n.value]


def lz4_compress(data):
    lib = _lib("lz4")
    lib.LZ4F_compressFrameBound.restype = ctypes.c_size_t
    lib.LZ4F_compressFrameBound.argtypes = [ctypes.c_size_t, ctypes.c_void_p]
    lib.LZ4F_compressFrame.restype = ctypes.c_size_t
    lib.LZ4F_compressFrame.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p,
                                       ctypes.c_size_t, ctypes.c_void_p]
    cap = lib.LZ4F_compressFrameBound(len(data), None)
    out = ctypes.create_string_buffer(cap)
    n = lib.LZ4F_compressFrame(out, cap, data, len(data), None)
    assert n < cap + 1
    return out.raw[:n]


def zstd_compress(data):
    lib = _lib("zstd")
    lib.ZSTD_compressBound.restype = ctypes.c_size_t
    lib.ZSTD_compressBound.argtypes = [ctypes.c_size_t]
    lib.ZSTD_compress.restype = ctypes.c_size_t
    lib.ZSTD_compress.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p,
                                  ctypes.c_size_t, ctypes.c_int]
    lib.ZSTD_isError.argtypes = [ctypes.c_size_t]
    cap = lib.ZSTD_compressBound(len(data))
    out = ctypes.create_string_buffer(cap)
    n = lib.ZSTD_compress(out, cap, data, len(data), 3)
    assert not lib.ZSTD_isError(n)
    return out.raw[:n]


COMPRESS = {GZIP: gzip_compress, SNAPPY: snappy_compress, LZ4: lz4_compress,
            ZSTD: zstd_compress}

# ---------------------------------------------------------------- raw batches


def now_ms():
    return int(time.time() * 1000)


def records_section(values, base_ts, timestamps=None):
    """Uncompressed records: (value, offset_delta 0..n-1, timestamp delta from base_ts)."""
    ts = timestamps or [base_ts] * len(values)
    return b"".join(kp.encode_record(i, ts[i] - base_ts, None, v) for i, v in enumerate(values))


def raw_batch(section, count, codec=0, base_ts=None, max_ts=None, last_offset_delta=None,
              attributes=0, producer_id=-1, producer_epoch=-1, base_sequence=-1):
    """A v2 batch around an already encoded (and maybe compressed) records section, with a
    valid CRC: every other field is as given, consistent or not."""
    base_ts = now_ms() if base_ts is None else base_ts
    max_ts = base_ts if max_ts is None else max_ts
    lod = count - 1 if last_offset_delta is None else last_offset_delta
    after_crc = (kp.i16(attributes | codec) + kp.i32(lod) + kp.i64(base_ts) + kp.i64(max_ts) +
                 kp.i64(producer_id) + kp.i16(producer_epoch) + kp.i32(base_sequence) +
                 kp.i32(count) + section)
    tail = kp.i32(-1) + kp.i8(2) + kp.u32(kp.crc32c(after_crc)) + after_crc
    return kp.i64(0) + kp.i32(len(tail)) + tail


def compressed_batch(codec, values, base_ts=None, timestamps=None, **kw):
    base_ts = now_ms() if base_ts is None else base_ts
    plain = records_section(values, base_ts, timestamps)
    ts = timestamps or [base_ts]
    return raw_batch(COMPRESS[codec](plain) if codec else plain, len(values), codec,
                     base_ts=base_ts, max_ts=kw.pop("max_ts", max(ts)), **kw)


def produce(b, topic, batch, partition=0):
    with b.conn(timeout=60) as c:
        res = c.produce({topic: {partition: batch}}, acks=-1, version=8)
    return res[(topic, partition)]


def produce_ok(b, topic, batch, partition=0):
    r = produce(b, topic, batch, partition)
    assert r["error"] == 0, r
    return r["base_offset"]


def stored_batches(b, topic, partition=0):
    # Fetch v10+: below v10 a partition holding zstd batches answers
    # UNSUPPORTED_COMPRESSION_TYPE (KIP-110).
    with b.conn() as c:
        res = c.fetch({topic: {partition: 0}}, version=11, max_wait_ms=0)
    d = res["partitions"][(topic, partition)]
    assert d["error"] == 0, d
    return kp.parse_record_batches(d["records"] or b"")


def consume_values(b, topic, n, partition=0):
    """Every value of the partition from offset 0, read by librdkafka (which decompresses)."""
    msgs = harness.consume_assigned(b, topic, {partition: 0}, timeout=60)[partition]
    assert len(msgs) == n, [m.offset() for m in msgs]
    return [m.value() for m in msgs]


def vm_rss_kib(b):
    with open("/proc/%d/status" % b.proc.pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


# ---------------------------------------------------------------- defect 3


@pytest.mark.parametrize("name", sorted(CODECS))
def test_compressed_garbage_refused_and_later_records_consumable(broker, name):
    codec = CODECS[name]
    topic = "bv-garbage-" + name
    harness.create_topics(broker, [(topic, 1, None)])
    assert produce_ok(broker, topic, compressed_batch(codec, [b"a0", b"a1"])) == 0
    garbage = bytes((i * 37 + 11) & 0xFF for i in range(200))
    r = produce(broker, topic, raw_batch(garbage, 3, codec))
    assert r["error"] in (CORRUPT_MESSAGE, INVALID_RECORD), r
    if codec != SNAPPY:  # raw snappy has no magic: garbage may decode to garbage records
        assert r["error"] == CORRUPT_MESSAGE, r
    # An empty stream is refused too.
    r = produce(broker, topic, raw_batch(b"", 1, codec))
    assert r["error"] == CORRUPT_MESSAGE, r
    assert produce_ok(broker, topic, compressed_batch(codec, [b"b0"])) == 2
    assert produce_ok(broker, topic, compressed_batch(0, [b"c0", b"c1"])) == 3
    assert consume_values(broker, topic, 5) == [b"a0", b"a1", b"b0", b"c0", b"c1"]


@pytest.mark.parametrize("name", sorted(CODECS))
def test_compressed_count_mismatch_refused(broker, name):
    codec = CODECS[name]
    topic = "bv-count-" + name
    harness.create_topics(broker, [(topic, 1, None)])
    base = now_ms()
    section = COMPRESS[codec](records_section([b"x", b"y", b"z"], base))
    # 3 records claiming 7, then claiming 2 (the third is trailing data).
    for count in (7, 2):
        r = produce(broker, topic, raw_batch(section, count, codec, base_ts=base))
        assert r["error"] == INVALID_RECORD, (count, r)
    # Offset deltas out of order: records 0 and 1 swap their deltas.
    swapped = kp.encode_record(1, 0, None, b"x") + kp.encode_record(0, 0, None, b"y")
    r = produce(broker, topic, raw_batch(COMPRESS[codec](swapped), 2, codec, base_ts=base))
    assert r["error"] == INVALID_RECORD, r
    # Garbage after the last record, inside the stream.
    section = COMPRESS[codec](records_section([b"x"], base) + b"\x00\x01junk")
    r = produce(broker, topic, raw_batch(section, 1, codec, base_ts=base))
    assert r["error"] == INVALID_RECORD, r
    assert kp_latest(broker, topic) == 0
    assert produce_ok(broker, topic, compressed_batch(codec, [b"ok"])) == 0
    assert consume_values(broker, topic, 1) == [b"ok"]


def kp_latest(b, topic, partition=0):
    err, _ts, off = harness.list_offset(b, topic, partition, -1)
    assert err == 0
    return off


def test_record_count_int32_max_refused(broker):
    """A header claiming 2^31-1 records (lastOffsetDelta 2^31-2) used to move the log end
    by 2^31-1 and roll a segment per request."""
    topic = "bv-int32max"
    harness.create_topics(broker, [(topic, 1, None)])
    base = now_ms()
    plain = records_section([b"only"], base)
    for codec in (0, GZIP, SNAPPY, LZ4, ZSTD):
        section = COMPRESS[codec](plain) if codec else plain
        r = produce(broker, topic, raw_batch(section, 2**31 - 1, codec, base_ts=base))
        assert r["error"] == INVALID_RECORD, (codec, r)
        # The same with a lastOffsetDelta that does not match the count.
        r = produce(broker, topic, raw_batch(section, 2**31 - 1, codec, base_ts=base,
                                             last_offset_delta=0))
        assert r["error"] == INVALID_RECORD, (codec, r)
    assert kp_latest(broker, topic) == 0
    assert len(harness.segment_files(broker, topic, 0)) == 1
    assert produce_ok(broker, topic, compressed_batch(GZIP, [b"after"])) == 0
    assert consume_values(broker, topic, 1) == [b"after"]


def test_decompression_bombs_refused_at_max_message_bytes(broker):
    """Zeros that decompress to 64 MiB (16 MiB for snappy, whose ratio is lower), each under
    1 MB compressed: refused with MESSAGE_TOO_LARGE at the topic's max.message.bytes, without
    the broker inflating them (its RSS stays far below the bombs' size)."""
    topic = "bv-bomb"
    harness.create_topics(broker, [(topic, 1, {"max.message.bytes": "1048588"})])
    base = now_ms()
    rss_before = vm_rss_kib(broker)
    for codec, size in ((GZIP, 64 << 20), (SNAPPY, 16 << 20), (LZ4, 64 << 20),
                        (ZSTD, 64 << 20)):
        plain = records_section([bytes(size)], base)
        bomb = raw_batch(COMPRESS[codec](plain), 1, codec, base_ts=base)
        assert len(bomb) < 1048588, (codec, len(bomb))
        r = produce(broker, topic, bomb)
        assert r["error"] == MESSAGE_TOO_LARGE, (codec, r)
        assert "max.message.bytes" in (r.get("error_message") or ""), r
    grown = vm_rss_kib(broker) - rss_before
    assert grown < 48 * 1024, "broker RSS grew by %d KiB" % grown
    # Under the bound, the same kind of batch is taken.
    ok = raw_batch(gzip_compress(records_section([bytes(512 << 10)], base)), 1, GZIP,
                   base_ts=base)
    assert produce_ok(broker, topic, ok) == 0
    assert kp_latest(broker, topic) == 1


# ---------------------------------------------------------------- defect 6


def test_base_timestamp_int64_min_refused(broker):
    """baseTimestamp = INT64_MIN overflowed `now - baseTimestamp` (UBSan aborted)."""
    topic = "bv-int64min"
    harness.create_topics(broker, [(topic, 1, None)])
    lo = -(2**63)
    for codec in (0, GZIP):
        batch = raw_batch(COMPRESS[codec](records_section([b"v"], lo)) if codec else
                          records_section([b"v"], lo), 1, codec, base_ts=lo, max_ts=lo)
        r = produce(broker, topic, batch)
        assert r["error"] == INVALID_TIMESTAMP, r
    # A header that says INT64_MAX as the max over records whose deltas overflow.
    hi = 2**63 - 1
    batch = raw_batch(kp.encode_record(0, 10, None, b"v"), 1, base_ts=hi, max_ts=hi)
    assert produce(broker, topic, batch)["error"] == INVALID_RECORD
    assert broker.alive()
    assert produce_ok(broker, topic, compressed_batch(0, [b"fine"])) == 0


# ---------------------------------------------------------------- defect 7


@pytest.mark.parametrize("codec", [0, GZIP, ZSTD])
def test_record_timestamps_checked_not_only_header(broker, codec):
    topic = "bv-ts-%d" % codec
    harness.create_topics(broker, [(topic, 1, {"message.timestamp.after.max.ms": "60000",
                                               "message.timestamp.before.max.ms": "3600000"})])
    now = now_ms()
    # The header is harmless (maxTimestamp -1, as Sarama sends); one record is 1 h ahead.
    ahead = compressed_batch(codec, [b"a", b"b"], base_ts=now, timestamps=[now, now + 3600000],
                             max_ts=-1)
    r = produce(broker, topic, ahead)
    assert r["error"] == INVALID_TIMESTAMP, r
    # One record 2 h in the past, the base timestamp recent.
    behind = compressed_batch(codec, [b"a", b"b"], base_ts=now, timestamps=[now, now - 7200000])
    r = produce(broker, topic, behind)
    assert r["error"] == INVALID_TIMESTAMP, r
    # Records without a timestamp (-1) are not range-checked, as in Kafka.
    assert produce_ok(broker, topic, compressed_batch(codec, [b"ok"], base_ts=-1)) == 0
    assert produce_ok(broker, topic, compressed_batch(codec, [b"ok2"], base_ts=now)) == 1


@pytest.mark.parametrize("codec", [0, GZIP, LZ4])
def test_max_timestamp_computed_from_records(broker, codec):
    """A producer that sends maxTimestamp -1 (Sarama) or a wrong one: the broker stores the
    records' own maximum (CRC updated), and ListOffsets answers by it."""
    topic = "bv-maxts-%d" % codec
    harness.create_topics(broker, [(topic, 1, None)])
    t0 = now_ms() - 100000
    ts = [t0, t0 + 30, t0 + 10]
    produce_ok(broker, topic, compressed_batch(codec, [b"r0", b"r1", b"r2"], base_ts=t0,
                                               timestamps=ts, max_ts=-1))
    ts2 = [t0 + 50, t0 + 40]
    produce_ok(broker, topic, compressed_batch(codec, [b"s0", b"s1"], base_ts=t0 + 40,
                                               timestamps=ts2, max_ts=2**63 - 1))
    batches = stored_batches(broker, topic)
    assert [bt["max_timestamp"] for bt in batches] == [t0 + 30, t0 + 50]
    assert all(bt["crc_ok"] for bt in batches)
    assert all(bt["attributes"] & 7 == codec for bt in batches)
    with broker.conn() as c:
        res = c.list_offsets({topic: {0: t0 + 20}}, version=7)[(topic, 0)]
        assert res == (0, t0 + 30, 1), res
        res = c.list_offsets({topic: {0: t0 + 45}}, version=7)[(topic, 0)]
        assert res == (0, t0 + 50, 3), res
        res = c.list_offsets({topic: {0: kp.MAX_TIMESTAMP}}, version=7)[(topic, 0)]
        assert res == (0, t0 + 50, 3), res
    assert consume_values(broker, topic, 5) == [b"r0", b"r1", b"r2", b"s0", b"s1"]


def test_attribute_bits_checked(broker):
    topic = "bv-attrs"
    harness.create_topics(broker, [(topic, 1, None)])
    base = now_ms()
    plain = records_section([b"v"], base)
    # LogAppendTime is the broker's to set (Kafka: INVALID_TIMESTAMP).
    r = produce(broker, topic, raw_batch(plain, 1, attributes=0x08, base_ts=base))
    assert r["error"] == INVALID_TIMESTAMP, r
    # The transactional bit without a producer id.
    r = produce(broker, topic, raw_batch(plain, 1, attributes=0x10, base_ts=base))
    assert r["error"] == INVALID_RECORD, r
    # The control bit.
    r = produce(broker, topic, raw_batch(plain, 1, attributes=0x30, base_ts=base,
                                         producer_id=1, producer_epoch=0, base_sequence=0))
    assert r["error"] == INVALID_RECORD, r
    # A producer id with no sequence.
    r = produce(broker, topic, raw_batch(plain, 1, base_ts=base, producer_id=5,
                                         producer_epoch=0, base_sequence=-1))
    assert r["error"] == INVALID_RECORD, r
    # Bits with no meaning are dropped (CRC recomputed), for plain and compressed batches.
    produce_ok(broker, topic, raw_batch(plain, 1, attributes=0x0400 | 0x80, base_ts=base))
    produce_ok(broker, topic, raw_batch(gzip_compress(plain), 1, GZIP, attributes=0x4000,
                                        base_ts=base))
    batches = stored_batches(broker, topic)
    assert [bt["attributes"] for bt in batches] == [0, GZIP], batches
    assert all(bt["crc_ok"] for bt in batches)
    assert consume_values(broker, topic, 2) == [b"v", b"v"]


def test_log_append_time_topic_stamps_compressed_batches(broker):
    topic = "bv-lat"
    harness.create_topics(broker, [(topic, 1, {"message.timestamp.type": "LogAppendTime"})])
    before = now_ms()
    r = produce(broker, topic, compressed_batch(ZSTD, [b"a", b"b"], base_ts=1000, max_ts=-1))
    assert r["error"] == 0 and r["log_append_time"] >= before, r
    stamped = r["log_append_time"]
    # Even here a client may not set the flag itself (Kafka refuses it).
    r = produce(broker, topic, raw_batch(records_section([b"v"], 5), 1, attributes=0x08,
                                         base_ts=5))
    assert r["error"] == INVALID_TIMESTAMP, r
    bt = stored_batches(broker, topic)[0]
    assert bt["attributes"] == ZSTD | 0x08 and bt["max_timestamp"] == stamped, bt
    assert bt["crc_ok"]


# ---------------------------------------------------------------- defect 4 (a)


def test_list_offsets_lookups_do_not_hold_the_loop(broker):
    """ListOffsets by timestamp narrows to a record by reading (and decompressing) the batch
    that holds it. On a batch of 48 MiB of records (allowed by the topic's
    max.message.bytes) that used to run on the event loop: two connections pipelining it
    held another client's ApiVersions for seconds. Now it runs on the thread pool. Here: the
    lookups answer right and another client is served meanwhile; how long it waits is
    bench/timers.py's api_versions_during_lookups figure (no wall-clock bound in a test)."""
    topic = "bv-lookup"
    harness.create_topics(broker, [(topic, 1, {"max.message.bytes": str(64 << 20)})])
    ts0 = now_ms() - 1000
    plain = records_section([b"first", bytes(48 << 20), b"last"], ts0,
                            timestamps=[ts0, ts0 + 1, ts0 + 2])
    big = raw_batch(gzip_compress(plain), 3, GZIP, base_ts=ts0, max_ts=ts0 + 2)
    assert produce_ok(broker, topic, big) == 0
    with broker.conn() as c:
        assert c.list_offsets({topic: {0: ts0 + 2}}, version=4)[(topic, 0)] == (0, ts0 + 2, 2)
        assert c.list_offsets({topic: {0: ts0 + 1}}, version=4)[(topic, 0)] == (0, ts0 + 1, 1)

    import threading
    stop = threading.Event()
    errors = []

    def hammer():
        try:
            with broker.conn(timeout=120) as c:
                while not stop.is_set():
                    for _ in range(4):  # pipelined
                        c.send(kp.list_offsets_request(c.next_corr(), {topic: {0: ts0 + 2}}, 4))
                    for _ in range(4):
                        c.recv_response()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=hammer) for _ in range(2)]
    for t in threads:
        t.start()
    answered = 0
    try:
        time.sleep(0.5)
        with broker.conn() as c:
            for _ in range(20):
                err, _keys = c.api_versions()
                assert err == 0
                answered += 1
                time.sleep(0.05)
    finally:
        stop.set()
        for t in threads:
            t.join(120)
    assert not errors, errors
    # Every ApiVersions was answered while the lookups ran; how fast is bench/timers.py's
    # figure (api_versions_during_lookups), a ratio against the same probe on an idle broker.
    assert answered == 20, answered


def test_sarama_max_timestamp_minus_one_idempotent_producer(broker):
    """Sarama sends maxTimestamp -1: DescribeProducers showed LastTimestamp -1, and
    ListOffsets by timestamp answered -1. The broker now computes it from the records."""
    topic = "bv-sarama"
    harness.create_topics(broker, [(topic, 1, None)])
    t0 = now_ms() - 5000
    with broker.conn() as c:
        ip = c.init_producer_id(0)
        assert ip["error"] == 0, ip
        pid, epoch = ip["producer_id"], ip["producer_epoch"]
    for codec in (0, SNAPPY):
        seq = 0 if codec == 0 else 2
        base = t0 + 100 * seq
        b = compressed_batch(codec, [b"a", b"b"], base_ts=base, timestamps=[base + 7, base],
                             max_ts=-1, producer_id=pid, producer_epoch=epoch,
                             base_sequence=seq)
        assert produce_ok(broker, topic, b) == seq
    with broker.conn() as c:
        d = c.describe_producers({topic: [0]})[(topic, 0)]
        assert d["error"] == 0, d
        assert [(p["producer_id"], p["last_sequence"], p["last_timestamp"])
                for p in d["producers"]] == [(pid, 3, t0 + 207)], d
        assert c.list_offsets({topic: {0: t0 + 1}}, version=4)[(topic, 0)] == (0, t0 + 7, 0)
        assert c.list_offsets({topic: {0: t0 + 201}}, version=4)[(topic, 0)] == (0, t0 + 207, 2)
    assert [bt["max_timestamp"] for bt in stored_batches(broker, topic)] == [t0 + 7, t0 + 207]


def test_record_timestamps_checked_against_legacy_difference_max_ms(broker):
    topic = "bv-ts-diff"
    harness.create_topics(broker, [(topic, 1, {"message.timestamp.difference.max.ms": "60000"})])
    now = now_ms()
    for late in (-3600000, 3600000):  # an hour either way, in the second record only
        b = compressed_batch(LZ4, [b"a", b"b"], base_ts=now, timestamps=[now, now + late],
                             max_ts=now)
        assert produce(broker, topic, b)["error"] == INVALID_TIMESTAMP, late
    assert produce_ok(broker, topic, compressed_batch(LZ4, [b"a", b"b"], base_ts=now,
                                                      timestamps=[now, now + 1000])) == 0
