# SPDX-License-Identifier: Apache-2.0
"""Hand-built Kafka protocol frames for tests that need exact bytes on the wire.

Covers only what the integration tests use: ApiVersions v0/v3, Metadata v1/v4/v12,
CreateTopics v2, a few frame-level helpers, and the data path (record batches,
Produce, Fetch, ListOffsets, DeleteRecords). Encodings follow the Kafka protocol
guide: big-endian ints, INT16-length strings, INT32-count arrays, and for flexible
versions unsigned-varint lengths plus tagged-field sections.
"""
import socket
import struct
import time
import uuid
import zlib

API_VERSIONS = 18
METADATA = 3
CREATE_TOPICS = 19

# Error codes the tests check.
NONE = 0
UNKNOWN_TOPIC_OR_PARTITION = 3
LEADER_NOT_AVAILABLE = 5
INVALID_TOPIC_EXCEPTION = 17
UNSUPPORTED_VERSION = 35
TOPIC_ALREADY_EXISTS = 36
INVALID_PARTITIONS = 37
INVALID_REPLICATION_FACTOR = 38
INVALID_CONFIG = 40


# ---------------------------------------------------------------- encoding

def i8(v):
    return struct.pack(">b", v)


def i16(v):
    return struct.pack(">h", v)


def i32(v):
    return struct.pack(">i", v)


def string(s):
    """STRING / NULLABLE_STRING: INT16 length then bytes; None is length -1."""
    if s is None:
        return i16(-1)
    b = s.encode()
    return i16(len(b)) + b


def uvarint(v):
    out = bytearray()
    while True:
        byte = v & 0x7F
        v >>= 7
        if v:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def compact_string(s):
    if s is None:
        return uvarint(0)
    b = s.encode()
    return uvarint(len(b) + 1) + b


def array(items, enc):
    """ARRAY: INT32 count then elements; None is count -1 (a null array)."""
    if items is None:
        return i32(-1)
    return i32(len(items)) + b"".join(enc(x) for x in items)


def header(api_key, api_version, corr, client_id="kproto", flexible=False):
    """Request header v1, or v2 (with an empty tagged-field section) when flexible."""
    h = i16(api_key) + i16(api_version) + i32(corr) + string(client_id)
    if flexible:
        h += uvarint(0)
    return h


def frame(payload):
    return i32(len(payload)) + payload


def api_versions_request(corr, version=0):
    if version >= 3:
        body = compact_string("kproto") + compact_string("1.0") + uvarint(0)
        return frame(header(API_VERSIONS, version, corr, flexible=True) + body)
    return frame(header(API_VERSIONS, version, corr))


def metadata_request(corr, topics=None, version=1, allow_auto_create=False):
    """Metadata v1..v8 (non-flexible). topics=None asks for all topics."""
    assert 1 <= version <= 8
    body = array(topics, string)
    if version >= 4:
        body += i8(1 if allow_auto_create else 0)
    if version >= 8:
        body += i8(0) + i8(0)  # include cluster / topic authorized operations
    return frame(header(METADATA, version, corr) + body)


def create_topics_request(corr, topics, timeout_ms=10000, validate_only=False):
    """CreateTopics v2. topics: list of (name, partitions, replication_factor,
    configs dict)."""

    def topic(t):
        name, parts, rf, configs = t
        cfg = list((configs or {}).items())
        return (string(name) + i32(parts) + i16(rf) + array([], None) +
                array(cfg, lambda kv: string(kv[0]) + string(kv[1])))

    body = array(topics, topic) + i32(timeout_ms) + i8(1 if validate_only else 0)
    return frame(header(CREATE_TOPICS, 2, corr) + body)


# ---------------------------------------------------------------- decoding

class Reader:
    def __init__(self, buf):
        self.buf = buf
        self.pos = 0

    def take(self, n):
        if self.pos + n > len(self.buf):
            raise ValueError("response truncated at %d (+%d of %d)" %
                             (self.pos, n, len(self.buf)))
        b = self.buf[self.pos:self.pos + n]
        self.pos += n
        return b

    def i8(self):
        return struct.unpack(">b", self.take(1))[0]

    def i16(self):
        return struct.unpack(">h", self.take(2))[0]

    def i32(self):
        return struct.unpack(">i", self.take(4))[0]

    def string(self):
        n = self.i16()
        return None if n < 0 else self.take(n).decode()

    def uvarint(self):
        shift = value = 0
        while True:
            b = self.take(1)[0]
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7

    def compact_string(self):
        n = self.uvarint()
        return None if n == 0 else self.take(n - 1).decode()

    def array(self, dec):
        n = self.i32()
        return None if n < 0 else [dec(self) for _ in range(n)]

    def compact_array(self, dec):
        n = self.uvarint()
        return None if n == 0 else [dec(self) for _ in range(n - 1)]

    def skip_tags(self):
        for _ in range(self.uvarint()):
            self.uvarint()
            self.take(self.uvarint())

    def remaining(self):
        return len(self.buf) - self.pos


def parse_api_versions(body, version):
    """Returns (error_code, {api_key: (min, max)}). The response header is always
    v0 for ApiVersions, so body starts right after the correlation id."""
    r = Reader(body)
    err = r.i16()
    if version >= 3:
        keys = r.compact_array(lambda rr: _av_key(rr, True)) or []
    else:
        keys = r.array(lambda rr: _av_key(rr, False)) or []
    return err, {k: (lo, hi) for k, lo, hi in keys}


def _av_key(r, flexible):
    k, lo, hi = r.i16(), r.i16(), r.i16()
    if flexible:
        r.skip_tags()
    return k, lo, hi


def parse_metadata(body, version):
    """Returns dict(brokers=[(id, host, port)], cluster_id, controller_id,
    topics={name: (error, internal, {partition: (error, leader, replicas, isr)})})."""
    r = Reader(body)
    if version >= 3:
        r.i32()  # throttle_time_ms
    brokers = r.array(lambda rr: _md_broker(rr, version))
    cluster_id = r.string() if version >= 2 else None
    controller = r.i32()
    topics = {}
    for name, err, internal, parts in r.array(lambda rr: _md_topic(rr, version)):
        topics[name] = (err, internal, parts)
    return {"brokers": brokers, "cluster_id": cluster_id, "controller_id": controller,
            "topics": topics}


def _md_broker(r, version):
    node, host, port = r.i32(), r.string(), r.i32()
    r.string()  # rack
    return node, host, port


def _md_topic(r, version):
    err = r.i16()
    name = r.string()
    internal = bool(r.i8())
    parts = {}
    for p in r.array(lambda rr: _md_partition(rr, version)):
        parts[p[1]] = (p[0], p[2], p[3], p[4])
    if version >= 8:
        r.i32()  # topic_authorized_operations
    return name, err, internal, parts


def _md_partition(r, version):
    err, idx, leader = r.i16(), r.i32(), r.i32()
    if version >= 7:
        r.i32()  # leader_epoch
    replicas = r.array(lambda rr: rr.i32())
    isr = r.array(lambda rr: rr.i32())
    if version >= 5:
        r.array(lambda rr: rr.i32())  # offline_replicas
    return err, idx, leader, replicas, isr


def parse_create_topics(body):
    """CreateTopics v2 response → {name: (error_code, error_message)}."""
    r = Reader(body)
    r.i32()  # throttle_time_ms
    out = {}
    for name, err, msg in r.array(lambda rr: (rr.string(), rr.i16(), rr.string())):
        out[name] = (err, msg)
    return out


# ---------------------------------------------------------------- sockets

class Conn:
    """One blocking connection; recv_response returns (correlation_id, body)."""

    def __init__(self, port, host="127.0.0.1", timeout=10.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.corr = 0

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def next_corr(self):
        self.corr += 1
        return self.corr

    def send(self, data):
        self.sock.sendall(data)

    def recv_exact(self, n):
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("connection closed after %d of %d bytes" % (len(buf), n))
            buf += chunk
        return bytes(buf)

    def recv_response(self, flexible_header=False):
        size = struct.unpack(">i", self.recv_exact(4))[0]
        payload = self.recv_exact(size)
        corr = struct.unpack(">i", payload[:4])[0]
        body = payload[4:]
        if flexible_header:
            r = Reader(body)
            r.skip_tags()
            body = body[r.pos:]
        return corr, body

    def api_versions(self, version=0):
        corr = self.next_corr()
        self.send(api_versions_request(corr, version))
        got, body = self.recv_response()
        assert got == corr, "correlation id %d != %d" % (got, corr)
        return parse_api_versions(body, version)

    def metadata(self, topics=None, version=1, allow_auto_create=False):
        corr = self.next_corr()
        self.send(metadata_request(corr, topics, version, allow_auto_create))
        got, body = self.recv_response()
        assert got == corr, "correlation id %d != %d" % (got, corr)
        return parse_metadata(body, version)

    def create_topics(self, topics, timeout_ms=10000, validate_only=False):
        corr = self.next_corr()
        self.send(create_topics_request(corr, topics, timeout_ms, validate_only))
        got, body = self.recv_response()
        assert got == corr, "correlation id %d != %d" % (got, corr)
        return parse_create_topics(body)

    def is_closed_by_peer(self, timeout=5.0):
        """True when the peer closes (EOF or reset) within timeout without sending
        anything; False when it stays open; raises if data arrives."""
        self.sock.settimeout(0.2)
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                try:
                    data = self.sock.recv(65536)
                except socket.timeout:
                    continue
                except (ConnectionResetError, BrokenPipeError):
                    return True
                if not data:
                    return True
                raise AssertionError("unexpected %d bytes from broker: %r" %
                                     (len(data), data[:64]))
            return False
        finally:
            self.sock.settimeout(10.0)


# ================================================================ data path
# Record batches (magic 2) and legacy message sets (magic 1), and the data APIs:
# Produce v3..v8, Fetch v4..v11 and v13, ListOffsets v1..v7, DeleteRecords v0/v1,
# Metadata v12 (for topic ids). Added for the test_data_* tests.

PRODUCE = 0
FETCH = 1
LIST_OFFSETS = 2
DELETE_RECORDS = 21

OFFSET_OUT_OF_RANGE = 1
CORRUPT_MESSAGE = 2
MESSAGE_TOO_LARGE = 10
INVALID_REQUIRED_ACKS = 21
INVALID_TIMESTAMP = 32
UNSUPPORTED_FOR_MESSAGE_FORMAT = 43
INVALID_RECORD = 87
UNKNOWN_TOPIC_ID = 100

EARLIEST = -2
LATEST = -1
MAX_TIMESTAMP = -3


def i64(v):
    return struct.pack(">q", v)


def u32(v):
    return struct.pack(">I", v)


def _crc32c_table():
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC32C = _crc32c_table()


def crc32c(data, crc=0):
    """CRC-32C (Castagnoli), as record batches v2 use."""
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = _CRC32C[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def zigzag(v):
    return uvarint((v << 1) ^ (v >> 63))


def _varbytes(b):
    if b is None:
        return zigzag(-1)
    return zigzag(len(b)) + b


def encode_record(offset_delta, ts_delta, key, value, headers=()):
    body = (i8(0) + zigzag(ts_delta) + zigzag(offset_delta) + _varbytes(key) +
            _varbytes(value) + zigzag(len(headers)) +
            b"".join(_varbytes(hk.encode() if isinstance(hk, str) else hk) + _varbytes(hv)
                     for hk, hv in headers))
    return zigzag(len(body)) + body


def record_batch(records, base_timestamp=None, base_offset=0, attributes=0,
                 producer_id=-1, producer_epoch=-1, base_sequence=-1, timestamps=None):
    """Uncompressed record batch v2. records: list of (key, value) or
    (key, value, headers); timestamps: optional per-record absolute ms."""
    if base_timestamp is None:
        base_timestamp = int(time.time() * 1000)
    ts = list(timestamps) if timestamps is not None else [base_timestamp] * len(records)
    first_ts = min(ts) if ts else base_timestamp
    recs = b""
    for i, r in enumerate(records):
        key, value = r[0], r[1]
        headers = r[2] if len(r) > 2 else ()
        recs += encode_record(i, ts[i] - first_ts, key, value, headers)
    after_crc = (i16(attributes) + i32(max(len(records) - 1, 0)) + i64(first_ts) +
                 i64(max(ts) if ts else first_ts) + i64(producer_id) + i16(producer_epoch) +
                 i32(base_sequence) + i32(len(records)) + recs)
    crc = crc32c(after_crc)
    tail = i32(-1) + i8(2) + u32(crc) + after_crc  # partition leader epoch .. records
    return i64(base_offset) + i32(len(tail)) + tail


def legacy_message_set(records, magic=1, timestamp=None):
    """A magic 0/1 message set (uncompressed): list of (key, value)."""
    if timestamp is None:
        timestamp = int(time.time() * 1000)

    def b32(b):
        return i32(-1) if b is None else i32(len(b)) + b

    out = b""
    for i, (key, value) in enumerate(records):
        body = i8(magic) + i8(0) + (i64(timestamp) if magic >= 1 else b"") + b32(key) + b32(value)
        msg = u32(zlib.crc32(body) & 0xFFFFFFFF) + body
        out += i64(i) + i32(len(msg)) + msg
    return out


def parse_record_batches(data, check_crc=True):
    """Parses a records blob (Fetch response / segment file) into a list of dicts:
    base_offset, last_offset, magic, attributes, crc_ok, max_timestamp,
    first_timestamp, records=[(offset, timestamp, key, value, headers)].
    A partial batch at the end is ignored (as clients do: a fetch may stop mid-batch).
    Compressed batches are returned with records=None. Raises ValueError for a batch
    length no batch can have, a bad CRC (unless check_crc is False: then crc_ok says it),
    and records that do not fill their batch exactly."""
    out = []
    pos = 0
    while pos + 12 <= len(data):
        base, length = struct.unpack_from(">qi", data, pos)
        if pos + 12 + length > len(data):
            break
        if length < 49:
            raise ValueError("batch at offset %d has length %d (< 49)" % (base, length))
        b = data[pos:pos + 12 + length]
        pos += 12 + length
        magic = b[16]
        if magic != 2:
            out.append({"base_offset": base, "magic": magic, "records": None})
            continue
        crc = struct.unpack_from(">I", b, 17)[0]
        attrs, lod, first_ts, max_ts, pid, pepoch, bseq, count = struct.unpack_from(
            ">hiqqqhii", b, 21)
        batch = {"base_offset": base, "last_offset": base + lod, "magic": magic,
                 "attributes": attrs, "crc_ok": crc32c(b[21:]) == crc,
                 "first_timestamp": first_ts, "max_timestamp": max_ts,
                 "producer_id": pid, "count": count, "size": len(b), "records": None}
        if check_crc and not batch["crc_ok"]:
            raise ValueError("batch at offset %d: CRC mismatch (stored 0x%08x, computed "
                             "0x%08x)" % (base, crc, crc32c(b[21:])))
        if attrs & 0x7 == 0 and batch["crc_ok"]:
            batch["records"] = _parse_records(b[61:], base, first_ts, count)
        out.append(batch)
    return out


def _parse_records(buf, base, first_ts, count):
    r = Reader(buf)

    def varint():
        v = r.uvarint()
        return (v >> 1) ^ -(v & 1)

    def varbytes():
        n = varint()
        return None if n < 0 else r.take(n)

    recs = []
    for _ in range(count):
        varint()  # length
        r.i8()
        tsd = varint()
        od = varint()
        key = varbytes()
        value = varbytes()
        headers = [(varbytes(), varbytes()) for _ in range(varint())]
        recs.append((base + od, first_ts + tsd, key, value, headers))
    if r.remaining():
        raise ValueError("batch at offset %d: %d bytes after its %d records" %
                         (base, r.remaining(), count))
    return recs


def records_of(data):
    """All (offset, timestamp, key, value, headers) of the uncompressed batches."""
    out = []
    for b in parse_record_batches(data):
        if b["records"]:
            out.extend(b["records"])
    return out


# ---------------------------------------------------------------- Produce

def produce_request(corr, topics, acks=-1, timeout_ms=10000, version=3, transactional_id=None):
    """Produce v3..v9 (v9 flexible). topics: {name: {partition: records_bytes or None}}."""
    assert 3 <= version <= 9
    if version >= 9:
        return _produce_request_flexible(corr, topics, acks, timeout_ms, version,
                                         transactional_id)

    def part(kv):
        p, data = kv
        return i32(p) + (i32(-1) if data is None else i32(len(data)) + data)

    def topic(kv):
        name, parts = kv
        return string(name) + array(sorted(parts.items()), part)

    body = (string(transactional_id) + i16(acks) + i32(timeout_ms) +
            array(list(topics.items()), topic))
    return frame(header(PRODUCE, version, corr) + body)


def _produce_request_flexible(corr, topics, acks, timeout_ms, version, transactional_id):
    def part(kv):
        p, data = kv
        return (i32(p) + (uvarint(0) if data is None else uvarint(len(data) + 1) + data) +
                uvarint(0))

    def topic(kv):
        name, parts = kv
        return compact_string(name) + _compact_array(sorted(parts.items()), part) + uvarint(0)

    body = (compact_string(transactional_id) + i16(acks) + i32(timeout_ms) +
            _compact_array(list(topics.items()), topic) + uvarint(0))
    return frame(header(PRODUCE, version, corr, flexible=True) + body)


def parse_produce(body, version):
    """→ ({(topic, partition): dict(error, base_offset, log_append_time,
    log_start_offset, record_errors [(batch_index, message)], error_message)}, throttle_ms)."""
    r = Reader(body)
    out = {}
    flex = version >= 9
    arr = (lambda rr, dec: rr.compact_array(dec)) if flex else (lambda rr, dec: rr.array(dec))
    text = (lambda rr: rr.compact_string()) if flex else (lambda rr: rr.string())

    def record_error(x):
        e = (x.i32(), text(x))
        if flex:
            x.skip_tags()
        return e

    def part(rr, name):
        d = {"partition": rr.i32(), "error": rr.i16(), "base_offset": struct.unpack(
            ">q", rr.take(8))[0]}
        d["log_append_time"] = struct.unpack(">q", rr.take(8))[0]
        if version >= 5:
            d["log_start_offset"] = struct.unpack(">q", rr.take(8))[0]
        if version >= 8:
            d["record_errors"] = arr(rr, record_error)
            d["error_message"] = text(rr)
        if flex:
            rr.skip_tags()
        out[(name, d["partition"])] = d

    def topic(rr):
        name = text(rr)
        arr(rr, lambda x: part(x, name))
        if flex:
            rr.skip_tags()

    arr(r, topic)
    throttle = r.i32()
    if flex:
        r.skip_tags()
    assert r.remaining() == 0, r.remaining()
    return out, throttle


# ---------------------------------------------------------------- Fetch

def fetch_request(corr, topics, max_wait_ms=0, min_bytes=1, max_bytes=64 << 20,
                  version=4, isolation=0, partition_max_bytes=16 << 20):
    """Fetch v4..v11 by name, or v12/v13 (flexible; v13 by topic id).
    topics: {name_or_uuid_bytes: {partition: fetch_offset}}."""
    assert 4 <= version <= 13
    if version >= 12:
        return _fetch_request_flexible(corr, topics, max_wait_ms, min_bytes, max_bytes,
                                       version, isolation, partition_max_bytes)

    def part(kv):
        p, off = kv
        out = i32(p)
        if version >= 9:
            out += i32(-1)  # current leader epoch
        out += i64(off)
        if version >= 5:
            out += i64(-1)  # log start offset (followers only)
        return out + i32(partition_max_bytes)

    def topic(kv):
        name, parts = kv
        return string(name) + array(sorted(parts.items()), part)

    body = i32(-1) + i32(max_wait_ms) + i32(min_bytes) + i32(max_bytes) + i8(isolation)
    if version >= 7:
        body += i32(0) + i32(-1)  # sessionless
    body += array(list(topics.items()), topic)
    if version >= 7:
        body += array([], None)  # forgotten topics
    if version >= 11:
        body += string("")
    return frame(header(FETCH, version, corr) + body)


def _compact_array(items, enc):
    if items is None:
        return uvarint(0)
    return uvarint(len(items) + 1) + b"".join(enc(x) for x in items)


def _fetch_request_flexible(corr, topics, max_wait_ms, min_bytes, max_bytes, version,
                            isolation, partition_max_bytes):
    def part(kv):
        p, off = kv
        return (i32(p) + i32(-1) + i64(off) + i32(-1) + i64(-1) + i32(partition_max_bytes) +
                uvarint(0))

    def topic(kv):
        t, parts = kv
        tid = t if version >= 13 else None
        head = tid if tid is not None else compact_string(t)
        return head + _compact_array(sorted(parts.items()), part) + uvarint(0)

    body = (i32(-1) + i32(max_wait_ms) + i32(min_bytes) + i32(max_bytes) + i8(isolation) +
            i32(0) + i32(-1) + _compact_array(list(topics.items()), topic) +
            _compact_array([], None) + compact_string("") + uvarint(0))
    return frame(header(FETCH, version, corr, flexible=True) + body)


def parse_fetch(body, version):
    """→ dict(error, session_id, throttle_ms, partitions={(topic, p): dict(error, hw,
    lso, log_start_offset, aborted, records bytes)}); for v13 topic is the 16-byte id."""
    r = Reader(body)
    flexible = version >= 12
    res = {"throttle_ms": r.i32(), "error": 0, "session_id": 0, "partitions": {}}
    if version >= 7:
        res["error"] = r.i16()
        res["session_id"] = r.i32()

    def arr(dec):
        if flexible:
            return r.compact_array(dec) or []
        return r.array(dec) or []

    def aborted(rr):
        pid, first = struct.unpack(">qq", rr.take(16))
        if flexible:
            rr.skip_tags()
        return pid, first

    def topic(rr):
        if version >= 13:
            name = rr.take(16)
        elif flexible:
            name = rr.compact_string()
        else:
            name = rr.string()

        def part(r2):
            d = {"partition": r2.i32(), "error": r2.i16()}
            d["hw"], d["lso"] = struct.unpack(">qq", r2.take(16))
            d["log_start_offset"] = struct.unpack(">q", r2.take(8))[0] if version >= 5 else None
            d["aborted"] = arr(aborted) if not flexible else (r2.compact_array(aborted))
            if version >= 11:
                d["preferred_read_replica"] = r2.i32()
            if flexible:
                n = r2.uvarint()
                d["records"] = None if n == 0 else r2.take(n - 1)
                r2.skip_tags()
            else:
                n = r2.i32()
                d["records"] = None if n < 0 else r2.take(n)
            res["partitions"][(name, d["partition"])] = d

        if flexible:
            rr.compact_array(part)
            rr.skip_tags()
        else:
            rr.array(part)

    arr(topic)
    if flexible:
        r.skip_tags()
    return res


# ---------------------------------------------------------------- ListOffsets

def list_offsets_request(corr, topics, version=1, isolation=0):
    """ListOffsets v1..v7. topics: {name: {partition: timestamp}}."""
    assert 1 <= version <= 7
    flexible = version >= 6

    def part(kv):
        p, ts = kv
        out = i32(p)
        if version >= 4:
            out += i32(-1)
        out += i64(ts)
        return out + (uvarint(0) if flexible else b"")

    def topic(kv):
        name, parts = kv
        if flexible:
            return compact_string(name) + _compact_array(sorted(parts.items()), part) + uvarint(0)
        return string(name) + array(sorted(parts.items()), part)

    body = i32(-1)
    if version >= 2:
        body += i8(isolation)
    if flexible:
        body += _compact_array(list(topics.items()), topic) + uvarint(0)
    else:
        body += array(list(topics.items()), topic)
    return frame(header(LIST_OFFSETS, version, corr, flexible=flexible) + body)


def parse_list_offsets(body, version):
    """→ {(topic, partition): (error, timestamp, offset)}"""
    r = Reader(body)
    flexible = version >= 6
    if version >= 2:
        r.i32()
    out = {}

    def topic(rr):
        name = rr.compact_string() if flexible else rr.string()

        def part(r2):
            p, err = r2.i32(), r2.i16()
            ts, off = struct.unpack(">qq", r2.take(16))
            if version >= 4:
                r2.i32()
            if flexible:
                r2.skip_tags()
            out[(name, p)] = (err, ts, off)

        if flexible:
            rr.compact_array(part)
            rr.skip_tags()
        else:
            rr.array(part)

    if flexible:
        r.compact_array(topic)
        r.skip_tags()
    else:
        r.array(topic)
    return out


# ---------------------------------------------------------------- DeleteRecords

def delete_records_request(corr, topics, timeout_ms=10000, version=1):
    """DeleteRecords v0/v1. topics: {name: {partition: offset}} (-1 = high watermark)."""
    assert version in (0, 1)

    def topic(kv):
        name, parts = kv
        return string(name) + array(sorted(parts.items()), lambda pv: i32(pv[0]) + i64(pv[1]))

    body = array(list(topics.items()), topic) + i32(timeout_ms)
    return frame(header(DELETE_RECORDS, version, corr) + body)


def parse_delete_records(body):
    """→ {(topic, partition): (error, low_watermark)}"""
    r = Reader(body)
    r.i32()
    out = {}
    for _ in range(r.i32()):
        name = r.string()
        for _ in range(r.i32()):
            p = r.i32()
            low = struct.unpack(">q", r.take(8))[0]
            out[(name, p)] = (r.i16(), low)
    return out


# ---------------------------------------------------------------- Metadata v12

def metadata_v12_request(corr, topics=None, allow_auto_create=False):
    def topic(name):
        return b"\0" * 16 + compact_string(name) + uvarint(0)

    body = (_compact_array(topics, topic) + i8(1 if allow_auto_create else 0) + i8(0) +
            uvarint(0))
    return frame(header(METADATA, 12, corr, flexible=True) + body)


def parse_metadata_v12(body):
    """→ {name: dict(error, topic_id bytes, partitions {p: (error, leader)})}"""
    r = Reader(body)
    r.i32()

    def broker(rr):
        rr.i32(), rr.compact_string(), rr.i32(), rr.compact_string()
        rr.skip_tags()

    r.compact_array(broker)
    r.compact_string()
    r.i32()
    out = {}

    def topic(rr):
        err = rr.i16()
        name = rr.compact_string()
        tid = rr.take(16)
        rr.i8()
        parts = {}

        def part(r2):
            perr, p, leader = r2.i16(), r2.i32(), r2.i32()
            r2.i32()
            for _ in range(3):
                r2.compact_array(lambda r3: r3.i32())
            r2.skip_tags()
            parts[p] = (perr, leader)

        rr.compact_array(part)
        rr.i32()
        rr.skip_tags()
        out[name] = {"error": err, "topic_id": tid, "partitions": parts}

    r.compact_array(topic)
    r.skip_tags()
    return out


def uuid_str(b):
    return str(uuid.UUID(bytes=b))


# ---------------------------------------------------------------- Conn helpers

def _roundtrip(conn, data, flexible_header=False):
    corr = struct.unpack(">i", data[8:12])[0]
    conn.send(data)
    got, body = conn.recv_response(flexible_header)
    assert got == corr, "correlation id %d != %d" % (got, corr)
    return body


def _conn_produce(self, topics, acks=-1, timeout_ms=10000, version=3, transactional_id=None):
    if acks == 0:
        self.send(produce_request(self.next_corr(), topics, acks, timeout_ms, version,
                                  transactional_id))
        return None
    body = _roundtrip(self, produce_request(self.next_corr(), topics, acks, timeout_ms,
                                            version, transactional_id), version >= 9)
    return parse_produce(body, version)[0]


def _conn_fetch(self, topics, version=4, **kw):
    body = _roundtrip(self, fetch_request(self.next_corr(), topics, version=version, **kw),
                      flexible_header=version >= 12)
    return parse_fetch(body, version)


def _conn_list_offsets(self, topics, version=1, isolation=0):
    body = _roundtrip(self, list_offsets_request(self.next_corr(), topics, version, isolation),
                      flexible_header=version >= 6)
    return parse_list_offsets(body, version)


def _conn_delete_records(self, topics, timeout_ms=10000, version=1):
    body = _roundtrip(self, delete_records_request(self.next_corr(), topics, timeout_ms,
                                                   version))
    return parse_delete_records(body)


def _conn_metadata_v12(self, topics=None, allow_auto_create=False):
    body = _roundtrip(self, metadata_v12_request(self.next_corr(), topics, allow_auto_create),
                      flexible_header=True)
    return parse_metadata_v12(body)


Conn.produce = _conn_produce
Conn.fetch = _conn_fetch
Conn.list_offsets = _conn_list_offsets
Conn.delete_records = _conn_delete_records
Conn.metadata_v12 = _conn_metadata_v12


# ================================================================ idempotent producer
# InitProducerId v0..v4 and DescribeProducers v0, plus a shortcut to produce one
# idempotent batch. Added for the test_idempotence_* tests.

INIT_PRODUCER_ID = 22
DESCRIBE_PRODUCERS = 61

OUT_OF_ORDER_SEQUENCE_NUMBER = 45
DUPLICATE_SEQUENCE_NUMBER = 46
INVALID_PRODUCER_EPOCH = 47
TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53
UNKNOWN_PRODUCER_ID = 59

INT32_MAX = 2 ** 31 - 1


def _r_i64(r):
    return struct.unpack(">q", r.take(8))[0]


def init_producer_id_request(corr, version=0, transactional_id=None,
                             transaction_timeout_ms=60000, producer_id=-1, producer_epoch=-1):
    """InitProducerId v0..v4 (flexible from v2; ProducerId/ProducerEpoch from v3)."""
    assert 0 <= version <= 4
    flexible = version >= 2
    body = (compact_string(transactional_id) if flexible else string(transactional_id))
    body += i32(transaction_timeout_ms)
    if version >= 3:
        body += i64(producer_id) + i16(producer_epoch)
    if flexible:
        body += uvarint(0)
    return frame(header(INIT_PRODUCER_ID, version, corr, flexible=flexible) + body)


def parse_init_producer_id(body, version):
    """→ dict(error, producer_id, producer_epoch, throttle_ms)."""
    r = Reader(body)
    d = {"throttle_ms": r.i32(), "error": r.i16()}
    d["producer_id"] = _r_i64(r)
    d["producer_epoch"] = r.i16()
    if version >= 2:
        r.skip_tags()
    return d


def describe_producers_request(corr, topics):
    """DescribeProducers v0 (flexible). topics: {name: [partition, ...]}."""
    def topic(kv):
        name, parts = kv
        return (compact_string(name) + _compact_array(list(parts), i32) + uvarint(0))

    body = _compact_array(list(topics.items()), topic) + uvarint(0)
    return frame(header(DESCRIBE_PRODUCERS, 0, corr, flexible=True) + body)


def parse_describe_producers(body):
    """→ {(topic, partition): dict(error, error_message, producers=[dict(producer_id,
    producer_epoch, last_sequence, last_timestamp, coordinator_epoch,
    current_txn_start_offset)])}"""
    r = Reader(body)
    r.i32()  # throttle
    out = {}

    def producer(rr):
        d = {"producer_id": _r_i64(rr), "producer_epoch": rr.i32(),
             "last_sequence": rr.i32(), "last_timestamp": _r_i64(rr),
             "coordinator_epoch": rr.i32(), "current_txn_start_offset": _r_i64(rr)}
        rr.skip_tags()
        return d

    def topic(rr):
        name = rr.compact_string()

        def part(r2):
            p, err = r2.i32(), r2.i16()
            msg = r2.compact_string()
            prods = r2.compact_array(producer) or []
            r2.skip_tags()
            out[(name, p)] = {"error": err, "error_message": msg, "producers": prods}

        rr.compact_array(part)
        rr.skip_tags()

    r.compact_array(topic)
    r.skip_tags()
    return out


def idempotent_batch(n, producer_id, producer_epoch, base_sequence, prefix=b"v",
                     base_timestamp=None):
    """A batch of n records (values prefix + sequence number) carrying the producer
    fields; the record values encode their sequence numbers (mod 2**31)."""
    recs = [(None, prefix + b"%d" % ((base_sequence + i) % (INT32_MAX + 1))) for i in range(n)]
    return record_batch(recs, base_timestamp=base_timestamp, producer_id=producer_id,
                        producer_epoch=producer_epoch, base_sequence=base_sequence)


def _conn_init_producer_id(self, version=0, **kw):
    body = _roundtrip(self, init_producer_id_request(self.next_corr(), version, **kw),
                      flexible_header=version >= 2)
    return parse_init_producer_id(body, version)


def _conn_describe_producers(self, topics):
    body = _roundtrip(self, describe_producers_request(self.next_corr(), topics),
                      flexible_header=True)
    return parse_describe_producers(body)


Conn.init_producer_id = _conn_init_producer_id
Conn.describe_producers = _conn_describe_producers


# ================================================================ admin APIs (flexible)
# DescribeConfigs v0..v4, AlterConfigs v0..v2, IncrementalAlterConfigs v0/v1,
# CreatePartitions v0..v3, CreateTopics v2..v7, DeleteTopics v1..v6,
# DescribeCluster v0/v1, and Metadata v9..v12 (by name or by topic id). Every parser
# here reads the body to its last byte and fails on leftovers, so a field the broker
# adds or drops shows up as an error. Added for test_admin_flexible.py.

DELETE_TOPICS = 20
DESCRIBE_CONFIGS = 32
ALTER_CONFIGS = 33
CREATE_PARTITIONS = 37
INCREMENTAL_ALTER_CONFIGS = 44
DESCRIBE_CLUSTER = 60

INVALID_REQUEST = 42

RESOURCE_TOPIC = 2
RESOURCE_BROKER = 4

OP_SET, OP_DELETE, OP_APPEND, OP_SUBTRACT = 0, 1, 2, 3

# ConfigSource (DescribeConfigs v1+, CreateTopics v5+).
SOURCE_TOPIC = 1
SOURCE_DYNAMIC_BROKER = 2
SOURCE_DYNAMIC_DEFAULT_BROKER = 3
SOURCE_STATIC_BROKER = 4
SOURCE_DEFAULT = 5

# ConfigType (DescribeConfigs v3+).
TYPE_BOOLEAN, TYPE_STRING, TYPE_INT, TYPE_SHORT, TYPE_LONG, TYPE_DOUBLE, TYPE_LIST = \
    1, 2, 3, 4, 5, 6, 7

INT32_MIN = -2 ** 31
ZERO_UUID = b"\0" * 16

# Highest version of each API that is still non-flexible (the first flexible one is +1).
_LAST_CLASSIC = {METADATA: 8, CREATE_TOPICS: 4, DELETE_TOPICS: 3, DESCRIBE_CONFIGS: 3,
                 ALTER_CONFIGS: 1, CREATE_PARTITIONS: 1, INCREMENTAL_ALTER_CONFIGS: 0,
                 DESCRIBE_CLUSTER: -1}


def is_flexible(api_key, version):
    return version > _LAST_CLASSIC[api_key]


class Enc:
    """Field encoders for one (api, version): classic or compact forms as needed."""

    def __init__(self, flexible):
        self.flexible = flexible

    def str(self, s):
        return compact_string(s) if self.flexible else string(s)

    def arr(self, items, enc):
        return _compact_array(items, enc) if self.flexible else array(items, enc)

    def tags(self):
        return uvarint(0) if self.flexible else b""


class Dec:
    """Field decoders matching Enc, over a Reader."""

    def __init__(self, body, flexible):
        self.r = Reader(body)
        self.flexible = flexible

    def str(self):
        return self.r.compact_string() if self.flexible else self.r.string()

    def arr(self, dec):
        return self.r.compact_array(dec) if self.flexible else self.r.array(dec)

    def tags(self):
        if self.flexible:
            self.r.skip_tags()

    def i8(self):
        return self.r.i8()

    def i16(self):
        return self.r.i16()

    def i32(self):
        return self.r.i32()

    def uuid(self):
        return self.r.take(16)

    def bool(self):
        b = self.r.i8()
        assert b in (0, 1), "bool byte %d" % b
        return bool(b)

    def done(self):
        self.tags()
        assert self.r.remaining() == 0, "%d bytes left over at %d of %d" % (
            self.r.remaining(), self.r.pos, len(self.r.buf))


def admin_frame(api_key, version, corr, body_fn):
    """body_fn(Enc) → body bytes; adds the v1/v2 request header and the frame."""
    flex = is_flexible(api_key, version)
    return frame(header(api_key, version, corr, flexible=flex) + body_fn(Enc(flex)))


def _conn_admin(self, api_key, version, body_fn, parse):
    """Sends one admin request and parses its answer with parse(Dec, version)."""
    flex = is_flexible(api_key, version)
    body = _roundtrip(self, admin_frame(api_key, version, self.next_corr(), body_fn),
                      flexible_header=flex)
    d = Dec(body, flex)
    out = parse(d, version)
    d.done()
    return out


# ---------------------------------------------------------------- DescribeConfigs

def describe_configs_body(resources, version, include_synonyms=False,
                          include_documentation=False):
    """resources: list of (type, name, keys or None for all)."""
    def body(e):
        def res(t):
            rtype, name, keys = t
            return i8(rtype) + e.str(name) + e.arr(keys, e.str) + e.tags()
        out = e.arr(resources, res)
        if version >= 1:
            out += i8(1 if include_synonyms else 0)
        if version >= 3:
            out += i8(1 if include_documentation else 0)
        return out + e.tags()
    return body


def parse_describe_configs(d, version):
    """→ list of dict(error, message, type, name, configs={name: dict(value, read_only,
    is_default (v0) , source (v1+), sensitive, synonyms [(name, value, source)],
    type (v3+), doc (v3+))}) in response order."""
    d.i32()

    def synonym(_r):
        s = (d.str(), d.str(), d.i8())
        d.tags()
        return s

    def entry(_r):
        c = {"name": d.str(), "value": d.str(), "read_only": d.bool()}
        if version == 0:
            c["is_default"] = d.bool()
        else:
            c["source"] = d.i8()
        c["sensitive"] = d.bool()
        if version >= 1:
            c["synonyms"] = d.arr(synonym)
        if version >= 3:
            c["type"] = d.i8()
            c["doc"] = d.str()
        d.tags()
        return c

    def result(_r):
        res = {"error": d.i16(), "message": d.str(), "type": d.i8(), "name": d.str()}
        entries = d.arr(entry) or []
        res["configs"] = {c["name"]: c for c in entries}
        res["config_order"] = [c["name"] for c in entries]
        d.tags()
        return res

    return d.arr(result)


def _conn_describe_configs(self, resources, version=4, include_synonyms=False,
                           include_documentation=False):
    return _conn_admin(self, DESCRIBE_CONFIGS, version,
                       describe_configs_body(resources, version, include_synonyms,
                                             include_documentation),
                       parse_describe_configs)


# ---------------------------------------------------------------- AlterConfigs / Incremental

def _alter_response(d, version):
    """AlterConfigs and IncrementalAlterConfigs answers → [(error, message, type, name)]."""
    d.i32()

    def res(_r):
        out = (d.i16(), d.str(), d.i8(), d.str())
        d.tags()
        return out

    return d.arr(res)


def incremental_alter_configs_body(resources, validate_only=False):
    """resources: list of (type, name, [(key, op, value)])."""
    def body(e):
        def cfg(c):
            key, op, value = c
            return e.str(key) + i8(op) + e.str(value) + e.tags()

        def res(t):
            rtype, name, configs = t
            return i8(rtype) + e.str(name) + e.arr(configs, cfg) + e.tags()
        return e.arr(resources, res) + i8(1 if validate_only else 0) + e.tags()
    return body


def _conn_incremental_alter_configs(self, resources, version=1, validate_only=False):
    return _conn_admin(self, INCREMENTAL_ALTER_CONFIGS, version,
                       incremental_alter_configs_body(resources, validate_only),
                       _alter_response)


def alter_configs_body(resources, validate_only=False):
    """resources: list of (type, name, {key: value})."""
    def body(e):
        def cfg(kv):
            return e.str(kv[0]) + e.str(kv[1]) + e.tags()

        def res(t):
            rtype, name, configs = t
            return i8(rtype) + e.str(name) + e.arr(list(configs.items()), cfg) + e.tags()
        return e.arr(resources, res) + i8(1 if validate_only else 0) + e.tags()
    return body


def _conn_alter_configs(self, resources, version=2, validate_only=False):
    return _conn_admin(self, ALTER_CONFIGS, version,
                       alter_configs_body(resources, validate_only), _alter_response)


# ---------------------------------------------------------------- CreateTopics v2..v7

def create_topics_body(topics, version, timeout_ms=10000, validate_only=False):
    """topics: list of (name, partitions, replication_factor, {config} or None,
    [optional] assignments {partition: [broker ids]})."""
    def body(e):
        def assignment(kv):
            return i32(kv[0]) + e.arr(kv[1], i32) + e.tags()

        def cfg(kv):
            return e.str(kv[0]) + e.str(kv[1]) + e.tags()

        def topic(t):
            name, parts, rf, configs = t[:4]
            assigns = sorted((t[4] if len(t) > 4 else {}).items())
            return (e.str(name) + i32(parts) + i16(rf) + e.arr(assigns, assignment) +
                    e.arr(list((configs or {}).items()), cfg) + e.tags())
        return (e.arr(topics, topic) + i32(timeout_ms) + i8(1 if validate_only else 0) +
                e.tags())
    return body


def parse_create_topics_any(d, version):
    """→ {name: dict(error, message, topic_id (v7+), num_partitions, replication_factor,
    configs {name: (value, read_only, source, sensitive)} or None (v5+))}"""
    if version >= 2:
        d.i32()
    out = {}

    def cfg(_r):
        c = (d.str(), d.str(), d.bool(), d.i8(), d.bool())
        d.tags()
        return c

    def topic(_r):
        t = {"name": d.str()}
        if version >= 7:
            t["topic_id"] = d.uuid()
        t["error"] = d.i16()
        t["message"] = d.str() if version >= 1 else None
        if version >= 5:
            t["num_partitions"] = d.i32()
            t["replication_factor"] = d.i16()
            cfgs = d.arr(cfg)
            t["configs"] = None if cfgs is None else {c[0]: c[1:] for c in cfgs}
        d.tags()
        out[t["name"]] = t

    d.arr(topic)
    return out


def _conn_create_topics_v(self, topics, version=7, timeout_ms=10000, validate_only=False):
    return _conn_admin(self, CREATE_TOPICS, version,
                       create_topics_body(topics, version, timeout_ms, validate_only),
                       parse_create_topics_any)


# ---------------------------------------------------------------- DeleteTopics v1..v6

def delete_topics_body(topics, version, timeout_ms=10000):
    """v1..v5: topics is a list of names; v6: a list of (name or None, id bytes or None)."""
    def body(e):
        if version >= 6:
            def state(t):
                name, tid = t
                return e.str(name) + (tid or ZERO_UUID) + e.tags()
            out = e.arr(topics, state)
        else:
            out = e.arr(topics, e.str)
        return out + i32(timeout_ms) + e.tags()
    return body


def parse_delete_topics(d, version):
    """→ list of dict(name, topic_id (v6+), error, message (v5+)) in response order."""
    d.i32()

    def res(_r):
        t = {"name": d.str()}
        if version >= 6:
            t["topic_id"] = d.uuid()
        t["error"] = d.i16()
        if version >= 5:
            t["message"] = d.str()
        d.tags()
        return t

    return d.arr(res)


def _conn_delete_topics(self, topics, version=6, timeout_ms=10000):
    return _conn_admin(self, DELETE_TOPICS, version,
                       delete_topics_body(topics, version, timeout_ms), parse_delete_topics)


# ---------------------------------------------------------------- CreatePartitions v0..v3

def create_partitions_body(topics, timeout_ms=10000, validate_only=False):
    """topics: list of (name, count) or (name, count, [[broker ids] per new partition])."""
    def body(e):
        def assignment(ids):
            return e.arr(ids, i32) + e.tags()

        def topic(t):
            assigns = t[2] if len(t) > 2 else None
            return e.str(t[0]) + i32(t[1]) + e.arr(assigns, assignment) + e.tags()
        return (e.arr(topics, topic) + i32(timeout_ms) + i8(1 if validate_only else 0) +
                e.tags())
    return body


def parse_create_partitions(d, version):
    """→ {name: (error, message)}"""
    d.i32()
    out = {}

    def res(_r):
        name, err, msg = d.str(), d.i16(), d.str()
        d.tags()
        out[name] = (err, msg)

    d.arr(res)
    return out


def _conn_create_partitions(self, topics, version=3, timeout_ms=10000, validate_only=False):
    return _conn_admin(self, CREATE_PARTITIONS, version,
                       create_partitions_body(topics, timeout_ms, validate_only),
                       parse_create_partitions)


# ---------------------------------------------------------------- DescribeCluster v0/v1

def describe_cluster_body(version, endpoint_type=1, include_authorized_operations=False):
    def body(e):
        out = i8(1 if include_authorized_operations else 0)
        if version >= 1:
            out += i8(endpoint_type)
        return out + e.tags()
    return body


def parse_describe_cluster(d, version):
    """→ dict(error, message, endpoint_type (v1+), cluster_id, controller_id,
    brokers [(id, host, port, rack)], authorized_operations)"""
    res = {"throttle_ms": d.i32(), "error": d.i16(), "message": d.str()}
    if version >= 1:
        res["endpoint_type"] = d.i8()
    res["cluster_id"] = d.str()
    res["controller_id"] = d.i32()

    def broker(_r):
        b = (d.i32(), d.str(), d.i32(), d.str())
        d.tags()
        return b

    res["brokers"] = d.arr(broker)
    res["authorized_operations"] = d.i32()
    return res


def _conn_describe_cluster(self, version=1, endpoint_type=1,
                           include_authorized_operations=False):
    return _conn_admin(self, DESCRIBE_CLUSTER, version,
                       describe_cluster_body(version, endpoint_type,
                                             include_authorized_operations),
                       parse_describe_cluster)


# ---------------------------------------------------------------- Metadata v9..v12

def metadata_flex_body(topics, version, allow_auto_create=False):
    """topics: None (all) or a list of (topic id bytes or None, name or None); before
    v10 only the names are sent."""
    def body(e):
        def topic(t):
            tid, name = t
            out = (tid or ZERO_UUID) if version >= 10 else b""
            return out + e.str(name) + e.tags()
        out = e.arr(topics, topic) + i8(1 if allow_auto_create else 0)
        if version <= 10:
            out += i8(0)  # include cluster authorized operations (v8..v10)
        return out + i8(0) + e.tags()  # include topic authorized operations
    return body


def parse_metadata_flex(d, version):
    """→ dict(brokers [(id, host, port, rack)], cluster_id, controller_id,
    topics [dict(error, name, topic_id, internal, partitions {p: dict(error, leader,
    leader_epoch, replicas, isr, offline)}, authorized_operations)])."""
    res = {"throttle_ms": d.i32()}

    def broker(_r):
        b = (d.i32(), d.str(), d.i32(), d.str())
        d.tags()
        return b

    res["brokers"] = d.arr(broker)
    res["cluster_id"] = d.str()
    res["controller_id"] = d.i32()

    def ints(_r):
        return d.i32()

    def topic(_r):
        t = {"error": d.i16(), "name": d.str()}
        t["topic_id"] = d.uuid() if version >= 10 else None
        t["internal"] = d.bool()
        parts = {}

        def part(_r2):
            p = {"error": d.i16(), "partition": d.i32(), "leader": d.i32(),
                 "leader_epoch": d.i32(), "replicas": d.arr(ints), "isr": d.arr(ints),
                 "offline": d.arr(ints)}
            d.tags()
            parts[p["partition"]] = p

        d.arr(part)
        t["partitions"] = parts
        t["authorized_operations"] = d.i32()
        d.tags()
        return t

    res["topics"] = d.arr(topic)
    if version <= 10:
        res["cluster_authorized_operations"] = d.i32()
    return res


def _conn_metadata_flex(self, topics=None, version=12, allow_auto_create=False):
    assert 9 <= version <= 12
    return _conn_admin(self, METADATA, version,
                       metadata_flex_body(topics, version, allow_auto_create),
                       parse_metadata_flex)


Conn.admin_request = _conn_admin
Conn.describe_configs = _conn_describe_configs
Conn.incremental_alter_configs = _conn_incremental_alter_configs
Conn.alter_configs = _conn_alter_configs
Conn.create_topics_v = _conn_create_topics_v
Conn.delete_topics = _conn_delete_topics
Conn.create_partitions = _conn_create_partitions
Conn.describe_cluster = _conn_describe_cluster
Conn.metadata_flex = _conn_metadata_flex


# ================================================================ broker-to-controller APIs
# AllocateProducerIds v0 and BrokerRegistration v0 (both flexible), as one broker sends
# them to the controller.

BROKER_REGISTRATION = 62
ALLOCATE_PRODUCER_IDS = 67
NOT_CONTROLLER = 41
REQUEST_TIMED_OUT = 7
INVALID_REQUEST = 42
NOT_LEADER_OR_FOLLOWER = 6
DUPLICATE_BROKER_REGISTRATION = 101


def allocate_producer_ids_request(corr, broker_id, broker_epoch=-1):
    body = i32(broker_id) + i64(broker_epoch) + uvarint(0)
    return frame(header(ALLOCATE_PRODUCER_IDS, 0, corr, flexible=True) + body)


def parse_allocate_producer_ids(body):
    """→ dict(error, producer_id_start, producer_id_len)."""
    r = Reader(body)
    r.i32()  # throttle
    d = {"error": r.i16(), "producer_id_start": _r_i64(r), "producer_id_len": r.i32()}
    r.skip_tags()
    return d


def broker_registration_request(corr, broker_id, cluster_id, listeners, rack=None):
    """listeners: [(name, host, port)]."""
    def listener(l):
        name, host, port = l
        return (compact_string(name) + compact_string(host) + struct.pack(">H", port) +
                i16(0) + uvarint(0))

    body = (i32(broker_id) + compact_string(cluster_id) + bytes(16) +
            _compact_array(listeners, listener) + _compact_array([], None) +
            compact_string(rack) + uvarint(0))
    return frame(header(BROKER_REGISTRATION, 0, corr, flexible=True) + body)


def parse_broker_registration(body):
    """→ dict(error, broker_epoch)."""
    r = Reader(body)
    r.i32()  # throttle
    d = {"error": r.i16(), "broker_epoch": _r_i64(r)}
    r.skip_tags()
    return d


def _conn_allocate_producer_ids(self, broker_id, broker_epoch=-1):
    body = _roundtrip(self, allocate_producer_ids_request(self.next_corr(), broker_id,
                                                          broker_epoch), flexible_header=True)
    return parse_allocate_producer_ids(body)


def _conn_broker_registration(self, broker_id, cluster_id, listeners, rack=None):
    body = _roundtrip(self, broker_registration_request(self.next_corr(), broker_id, cluster_id,
                                                        listeners, rack),
                      flexible_header=True)
    return parse_broker_registration(body)


Conn.allocate_producer_ids = _conn_allocate_producer_ids
Conn.broker_registration = _conn_broker_registration


# ---------------------------------------------------------------- group coordinator APIs
#
# The group APIs (keys 8-16, 42, 47) described once as field lists, encoded and decoded for
# any version by a small generic walker (as the broker's own proto/ does): each field is
# (name, type, first version, last version); types: "i8" "i16" "i32" "i64" "bool" "str"
# "nstr" (nullable) "bytes" "nbytes", or ("array", fields) / ("array", "i32") /
# ("array", "str"); ("narray", ...) may be null. Flexible versions use compact encodings and
# empty tagged-field sections. Values are dicts keyed by field name; a field missing from a
# request dict encodes as its zero value (-1 for generation, epoch and offset names).

GROUP_FLEXIBLE = {8: 8, 9: 6, 10: 3, 11: 6, 12: 4, 13: 4, 14: 4, 15: 5, 16: 3, 42: 2, 47: 99,
                  43: 2, 45: 0, 46: 0}
# Not group APIs, but the same walker encodes them: ElectLeaders (43) v0-v2,
# AlterPartitionReassignments (45) and ListPartitionReassignments (46) v0.
ELECT_LEADERS = 43
ALTER_PARTITION_REASSIGNMENTS = 45
LIST_PARTITION_REASSIGNMENTS = 46
INF = 99

_OC_PART_RQ = [("PartitionIndex", "i32", 0, INF), ("CommittedOffset", "i64", 0, INF),
               ("CommittedLeaderEpoch", "i32", 6, INF), ("CommitTimestamp", "i64", 1, 1),
               ("CommittedMetadata", "nstr", 0, INF)]
_OF_PART_RS = [("PartitionIndex", "i32", 0, INF), ("CommittedOffset", "i64", 0, INF),
               ("CommittedLeaderEpoch", "i32", 5, INF), ("Metadata", "nstr", 0, INF),
               ("ErrorCode", "i16", 0, INF)]

GROUP_SCHEMAS = {
    # key: (request fields, response fields)
    8: ([("GroupId", "str", 0, INF), ("GenerationIdOrMemberEpoch", "i32", 1, INF),
         ("MemberId", "str", 1, INF), ("GroupInstanceId", "nstr", 7, INF),
         ("RetentionTimeMs", "i64", 2, 4),
         ("Topics", ("array", [("Name", "str", 0, INF),
                               ("Partitions", ("array", _OC_PART_RQ), 0, INF)]), 0, INF)],
        [("ThrottleTimeMs", "i32", 3, INF),
         ("Topics", ("array", [("Name", "str", 0, INF),
                               ("Partitions", ("array", [("PartitionIndex", "i32", 0, INF),
                                                         ("ErrorCode", "i16", 0, INF)]),
                                0, INF)]), 0, INF)]),
    9: ([("GroupId", "str", 0, 7),
         ("Topics", ("narray", [("Name", "str", 0, INF),
                                ("PartitionIndexes", ("array", "i32"), 0, INF)]), 0, 7),
         ("Groups", ("array", [("GroupId", "str", 0, INF),
                               ("Topics", ("narray", [("Name", "str", 0, INF),
                                                      ("PartitionIndexes", ("array", "i32"),
                                                       0, INF)]), 0, INF)]), 8, INF),
         ("RequireStable", "bool", 7, INF)],
        [("ThrottleTimeMs", "i32", 3, INF),
         ("Topics", ("array", [("Name", "str", 0, INF),
                               ("Partitions", ("array", _OF_PART_RS), 0, INF)]), 0, 7),
         ("ErrorCode", "i16", 2, 7),
         ("Groups", ("array", [("GroupId", "str", 0, INF),
                               ("Topics", ("array", [("Name", "str", 0, INF),
                                                     ("Partitions", ("array", _OF_PART_RS),
                                                      0, INF)]), 0, INF),
                               ("ErrorCode", "i16", 0, INF)]), 8, INF)]),
    10: ([("Key", "str", 0, 3), ("KeyType", "i8", 1, INF),
          ("CoordinatorKeys", ("array", "str"), 4, INF)],
         [("ThrottleTimeMs", "i32", 1, INF), ("ErrorCode", "i16", 0, 3),
          ("ErrorMessage", "nstr", 1, 3), ("NodeId", "i32", 0, 3), ("Host", "str", 0, 3),
          ("Port", "i32", 0, 3),
          ("Coordinators", ("array", [("Key", "str", 0, INF), ("NodeId", "i32", 0, INF),
                                      ("Host", "str", 0, INF), ("Port", "i32", 0, INF),
                                      ("ErrorCode", "i16", 0, INF),
                                      ("ErrorMessage", "nstr", 0, INF)]), 4, INF)]),
    11: ([("GroupId", "str", 0, INF), ("SessionTimeoutMs", "i32", 0, INF),
          ("RebalanceTimeoutMs", "i32", 1, INF), ("MemberId", "str", 0, INF),
          ("GroupInstanceId", "nstr", 5, INF), ("ProtocolType", "str", 0, INF),
          ("Protocols", ("array", [("Name", "str", 0, INF), ("Metadata", "bytes", 0, INF)]),
           0, INF),
          ("Reason", "nstr", 8, INF)],
         [("ThrottleTimeMs", "i32", 2, INF), ("ErrorCode", "i16", 0, INF),
          ("GenerationId", "i32", 0, INF), ("ProtocolType", "nstr", 7, INF),
          ("ProtocolName", "nstr", 0, INF), ("Leader", "str", 0, INF),
          ("SkipAssignment", "bool", 9, INF), ("MemberId", "str", 0, INF),
          ("Members", ("array", [("MemberId", "str", 0, INF),
                                 ("GroupInstanceId", "nstr", 5, INF),
                                 ("Metadata", "bytes", 0, INF)]), 0, INF)]),
    12: ([("GroupId", "str", 0, INF), ("GenerationId", "i32", 0, INF),
          ("MemberId", "str", 0, INF), ("GroupInstanceId", "nstr", 3, INF)],
         [("ThrottleTimeMs", "i32", 1, INF), ("ErrorCode", "i16", 0, INF)]),
    13: ([("GroupId", "str", 0, INF), ("MemberId", "str", 0, 2),
          ("Members", ("array", [("MemberId", "str", 0, INF),
                                 ("GroupInstanceId", "nstr", 0, INF),
                                 ("Reason", "nstr", 5, INF)]), 3, INF)],
         [("ThrottleTimeMs", "i32", 1, INF), ("ErrorCode", "i16", 0, INF),
          ("Members", ("array", [("MemberId", "str", 0, INF),
                                 ("GroupInstanceId", "nstr", 0, INF),
                                 ("ErrorCode", "i16", 0, INF)]), 3, INF)]),
    14: ([("GroupId", "str", 0, INF), ("GenerationId", "i32", 0, INF),
          ("MemberId", "str", 0, INF), ("GroupInstanceId", "nstr", 3, INF),
          ("ProtocolType", "nstr", 5, INF), ("ProtocolName", "nstr", 5, INF),
          ("Assignments", ("array", [("MemberId", "str", 0, INF),
                                     ("Assignment", "bytes", 0, INF)]), 0, INF)],
         [("ThrottleTimeMs", "i32", 1, INF), ("ErrorCode", "i16", 0, INF),
          ("ProtocolType", "nstr", 5, INF), ("ProtocolName", "nstr", 5, INF),
          ("Assignment", "bytes", 0, INF)]),
    15: ([("Groups", ("array", "str"), 0, INF),
          ("IncludeAuthorizedOperations", "bool", 3, INF)],
         [("ThrottleTimeMs", "i32", 1, INF),
          ("Groups", ("array", [("ErrorCode", "i16", 0, INF), ("GroupId", "str", 0, INF),
                                ("GroupState", "str", 0, INF),
                                ("ProtocolType", "str", 0, INF),
                                ("ProtocolData", "str", 0, INF),
                                ("Members", ("array", [("MemberId", "str", 0, INF),
                                                       ("GroupInstanceId", "nstr", 4, INF),
                                                       ("ClientId", "str", 0, INF),
                                                       ("ClientHost", "str", 0, INF),
                                                       ("MemberMetadata", "bytes", 0, INF),
                                                       ("MemberAssignment", "bytes", 0, INF)]),
                                 0, INF),
                                ("AuthorizedOperations", "i32", 3, INF)]), 0, INF)]),
    16: ([("StatesFilter", ("array", "str"), 4, INF)],
         [("ThrottleTimeMs", "i32", 1, INF), ("ErrorCode", "i16", 0, INF),
          ("Groups", ("array", [("GroupId", "str", 0, INF), ("ProtocolType", "str", 0, INF),
                                ("GroupState", "str", 4, INF)]), 0, INF)]),
    42: ([("GroupsNames", ("array", "str"), 0, INF)],
         [("ThrottleTimeMs", "i32", 0, INF),
          ("Results", ("array", [("GroupId", "str", 0, INF), ("ErrorCode", "i16", 0, INF)]),
           0, INF)]),
    47: ([("GroupId", "str", 0, INF),
          ("Topics", ("array", [("Name", "str", 0, INF),
                                ("Partitions", ("array", [("PartitionIndex", "i32", 0, INF)]),
                                 0, INF)]), 0, INF)],
         [("ErrorCode", "i16", 0, INF), ("ThrottleTimeMs", "i32", 0, INF),
          ("Topics", ("array", [("Name", "str", 0, INF),
                                ("Partitions", ("array", [("PartitionIndex", "i32", 0, INF),
                                                          ("ErrorCode", "i16", 0, INF)]),
                                 0, INF)]), 0, INF)]),
    43: ([("ElectionType", "i8", 1, INF),
          ("TopicPartitions", ("narray", [("Topic", "str", 0, INF),
                                          ("Partitions", ("array", "i32"), 0, INF)]), 0, INF),
          ("TimeoutMs", "i32", 0, INF)],
         [("ThrottleTimeMs", "i32", 0, INF), ("ErrorCode", "i16", 1, INF),
          ("ReplicaElectionResults",
           ("array", [("Topic", "str", 0, INF),
                      ("PartitionResult", ("array", [("PartitionId", "i32", 0, INF),
                                                     ("ErrorCode", "i16", 0, INF),
                                                     ("ErrorMessage", "nstr", 0, INF)]),
                       0, INF)]), 0, INF)]),
    45: ([("TimeoutMs", "i32", 0, INF),
          ("Topics", ("array", [("Name", "str", 0, INF),
                                ("Partitions", ("array", [("PartitionIndex", "i32", 0, INF),
                                                          ("Replicas", ("narray", "i32"), 0,
                                                           INF)]), 0, INF)]), 0, INF)],
         [("ThrottleTimeMs", "i32", 0, INF), ("ErrorCode", "i16", 0, INF),
          ("ErrorMessage", "nstr", 0, INF),
          ("Responses", ("array", [("Name", "str", 0, INF),
                                   ("Partitions", ("array", [("PartitionIndex", "i32", 0, INF),
                                                             ("ErrorCode", "i16", 0, INF),
                                                             ("ErrorMessage", "nstr", 0, INF)]),
                                    0, INF)]), 0, INF)]),
    46: ([("TimeoutMs", "i32", 0, INF),
          ("Topics", ("narray", [("Name", "str", 0, INF),
                                 ("PartitionIndexes", ("array", "i32"), 0, INF)]), 0, INF)],
         [("ThrottleTimeMs", "i32", 0, INF), ("ErrorCode", "i16", 0, INF),
          ("ErrorMessage", "nstr", 0, INF),
          ("Topics", ("array", [("Name", "str", 0, INF),
                                ("Partitions", ("array", [("PartitionIndex", "i32", 0, INF),
                                                          ("Replicas", ("array", "i32"), 0, INF),
                                                          ("AddingReplicas", ("array", "i32"), 0,
                                                           INF),
                                                          ("RemovingReplicas", ("array", "i32"),
                                                           0, INF)]), 0, INF)]), 0, INF)]),
}


def _g_default(name, ftype):
    if isinstance(ftype, tuple):
        return []
    if ftype in ("str",):
        return ""
    if ftype in ("nstr", "nbytes"):
        return None
    if ftype == "bytes":
        return b""
    if ftype == "bool":
        return False
    if name in ("GenerationId", "GenerationIdOrMemberEpoch", "CommittedLeaderEpoch",
                "RetentionTimeMs", "CommitTimestamp", "RebalanceTimeoutMs"):
        return -1
    return 0


def _g_enc_value(ftype, v, flex):
    if isinstance(ftype, tuple):
        kind, elem = ftype
        if v is None:
            assert kind == "narray", "null for a non-nullable array"
            return uvarint(0) if flex else i32(-1)
        items = b"".join(_g_enc_value(elem, x, flex) if not isinstance(elem, list)
                         else _g_enc_struct(elem, x, flex) for x in v)
        return (uvarint(len(v) + 1) if flex else i32(len(v))) + items
    if isinstance(ftype, list):
        return _g_enc_struct(ftype, v, flex)
    if ftype == "i8":
        return i8(v)
    if ftype == "i16":
        return i16(v)
    if ftype == "i32":
        return i32(v)
    if ftype == "i64":
        return struct.pack(">q", v)
    if ftype == "bool":
        return i8(1 if v else 0)
    if ftype in ("str", "nstr"):
        if isinstance(v, bytes):
            if flex:
                return uvarint(len(v) + 1) + v
            return i16(len(v)) + v
        return compact_string(v) if flex else string(v)
    if ftype in ("bytes", "nbytes"):
        if v is None:
            return uvarint(0) if flex else i32(-1)
        return (uvarint(len(v) + 1) if flex else i32(len(v))) + v
    raise ValueError(ftype)


_G_VERSION = [0]


def _g_enc_struct(fields, values, flex):
    out = b""
    version = _G_VERSION[0]
    for name, ftype, lo, hi in fields:
        if not lo <= version <= hi:
            continue
        v = values.get(name, _g_default(name, ftype)) if isinstance(values, dict) else values
        out += _g_enc_value(ftype, v, flex)
    if flex:
        out += uvarint(0)
    return out


def _g_dec_value(r, ftype, flex):
    if isinstance(ftype, tuple):
        _, elem = ftype
        n = r.uvarint() - 1 if flex else r.i32()
        if n < 0:
            return None
        return [_g_dec_struct(r, elem, flex) if isinstance(elem, list)
                else _g_dec_value(r, elem, flex) for _ in range(n)]
    if ftype == "i8":
        return r.i8()
    if ftype == "i16":
        return r.i16()
    if ftype == "i32":
        return r.i32()
    if ftype == "i64":
        return struct.unpack(">q", r.take(8))[0]
    if ftype == "bool":
        return r.i8() != 0
    if ftype in ("str", "nstr"):
        return r.compact_string() if flex else r.string()
    if ftype in ("bytes", "nbytes"):
        n = r.uvarint() - 1 if flex else r.i32()
        return None if n < 0 else r.take(n)
    raise ValueError(ftype)


def _g_dec_struct(r, fields, flex):
    version = _G_VERSION[0]
    d = {}
    for name, ftype, lo, hi in fields:
        if lo <= version <= hi:
            d[name] = _g_dec_value(r, ftype, flex)
    if flex:
        r.skip_tags()
    return d


def group_request(api_key, version, corr, values, client_id="kproto"):
    """A whole request frame of group API `api_key` at `version`."""
    flex = version >= GROUP_FLEXIBLE[api_key]
    _G_VERSION[0] = version
    body = _g_enc_struct(GROUP_SCHEMAS[api_key][0], values, flex)
    return frame(header(api_key, version, corr, client_id, flexible=flex) + body)


def parse_group_response(api_key, version, body):
    flex = version >= GROUP_FLEXIBLE[api_key]
    _G_VERSION[0] = version
    r = Reader(body)
    d = _g_dec_struct(r, GROUP_SCHEMAS[api_key][1], flex)
    assert r.remaining() == 0, "%d bytes left after the response of key %d v%d" % (
        r.remaining(), api_key, version)
    return d


def _conn_group(self, api_key, version, values, client_id="kproto"):
    """Sends a group API request and returns the decoded response dict."""
    flex = version >= GROUP_FLEXIBLE[api_key]
    body = _roundtrip(self, group_request(api_key, version, self.next_corr(), values, client_id),
                      flexible_header=flex)
    return parse_group_response(api_key, version, body)


def _conn_group_send(self, api_key, version, values, client_id="kproto"):
    """Sends without waiting (a JoinGroup that parks); returns the correlation id."""
    corr = self.next_corr()
    self.send(group_request(api_key, version, corr, values, client_id))
    return corr


def _conn_group_recv(self, api_key, version):
    flex = version >= GROUP_FLEXIBLE[api_key]
    corr, body = self.recv_response(flex)
    return corr, parse_group_response(api_key, version, body)


Conn.group = _conn_group
Conn.group_send = _conn_group_send
Conn.group_recv = _conn_group_recv


def consumer_subscription(topics):
    """ConsumerProtocolSubscription v0: the metadata of a "consumer" JoinGroup protocol."""
    return i16(0) + array(topics, string) + i32(-1)


def consumer_assignment(parts):
    """ConsumerProtocolAssignment v0 for {topic: [partitions]}."""
    return i16(0) + array(sorted(parts.items()),
                          lambda tp: string(tp[0]) + array(tp[1], i32)) + i32(-1)


# ---------------------------------------------------------------- transactions, partition side

WRITE_TXN_MARKERS = 27
NOT_ENOUGH_REPLICAS = 19
INVALID_TXN_STATE = 48
TRANSACTION_COORDINATOR_FENCED = 52
INVALID_RECORD = 87
ATTR_TRANSACTIONAL = 0x10
ATTR_CONTROL = 0x20


def transactional_batch(n, producer_id, producer_epoch, base_sequence, prefix=b"t",
                        base_timestamp=None):
    """n records in a transactional batch of the producer (key None, values prefix+i)."""
    return record_batch([(None, prefix + b"%d" % i) for i in range(n)],
                        base_timestamp=base_timestamp, attributes=ATTR_TRANSACTIONAL,
                        producer_id=producer_id, producer_epoch=producer_epoch,
                        base_sequence=base_sequence)


def control_batch(producer_id, producer_epoch, commit, coordinator_epoch=0):
    """A COMMIT/ABORT marker as a client must never send it (key {0, type}, value {0, epoch})."""
    key = i16(0) + i16(1 if commit else 0)
    value = i16(0) + i32(coordinator_epoch)
    return record_batch([(key, value)], attributes=ATTR_TRANSACTIONAL | ATTR_CONTROL,
                        producer_id=producer_id, producer_epoch=producer_epoch,
                        base_sequence=-1)


def write_txn_markers_request(corr, markers, version=1):
    """WriteTxnMarkers v0/v1. markers: list of dict(producer_id, producer_epoch, commit,
    coordinator_epoch, topics={name: [partition, ...]})."""
    flex = version >= 1
    arr_ = (lambda items, enc: _compact_array(items, enc)) if flex else array
    str_ = compact_string if flex else string
    tags = uvarint(0) if flex else b""

    def topic(kv):
        name, parts = kv
        return str_(name) + arr_(list(parts), i32) + tags

    def marker(m):
        return (i64(m["producer_id"]) + i16(m["producer_epoch"]) +
                i8(1 if m["commit"] else 0) + arr_(list(m["topics"].items()), topic) +
                i32(m["coordinator_epoch"]) + tags)

    body = arr_(markers, marker) + tags
    return frame(header(WRITE_TXN_MARKERS, version, corr, flexible=flex) + body)


def parse_write_txn_markers(body, version=1):
    """→ {(producer_id, topic, partition): error}"""
    flex = version >= 1
    r = Reader(body)
    out = {}

    def arr(rr, dec):
        return (rr.compact_array(dec) if flex else rr.array(dec)) or []

    def marker(rr):
        pid = _r_i64(rr)

        def topic(r2):
            name = r2.compact_string() if flex else r2.string()

            def part(r3):
                p, err = r3.i32(), r3.i16()
                if flex:
                    r3.skip_tags()
                out[(pid, name, p)] = err

            arr(r2, part)
            if flex:
                r2.skip_tags()

        arr(rr, topic)
        if flex:
            rr.skip_tags()

    arr(r, marker)
    if flex:
        r.skip_tags()
    return out


def _conn_write_txn_markers(self, markers, version=1):
    body = _roundtrip(self, write_txn_markers_request(self.next_corr(), markers, version),
                      flexible_header=version >= 1)
    return parse_write_txn_markers(body, version)


Conn.write_txn_markers = _conn_write_txn_markers


# ================================================================ old versions (Kafka 3.x serves them)
# Message sets of magic 0/1 (plain and compressed wrappers), Produce v0..v2, Fetch v0..v3,
# ListOffsets v0, Metadata v0 and v8 with authorized operations, CreateTopics v0/v1,
# DeleteTopics v0. Added for test_old_versions.py and test_authorized_ops.py.

UNSUPPORTED_COMPRESSION_TYPE = 76
CORRUPT_MESSAGE = 2
CODEC_GZIP = 1


def legacy_message(magic, key, value, timestamp=0, attributes=0):
    """One magic 0/1 message, from its CRC on (without offset and size)."""
    def b32(b):
        return i32(-1) if b is None else i32(len(b)) + b
    body = (i8(magic) + i8(attributes) + (i64(timestamp) if magic >= 1 else b"") + b32(key) +
            b32(value))
    return u32(zlib.crc32(body) & 0xFFFFFFFF) + body


def legacy_entries(messages, first_offset=0):
    """A message set from messages (bytes from legacy_message), offsets counted up."""
    return b"".join(i64(first_offset + i) + i32(len(m)) + m for i, m in enumerate(messages))


def legacy_set(records, magic=1, timestamp=None, codec=0):
    """A magic 0/1 message set of records [(key, value)]: plain, or (codec CODEC_GZIP) one
    gzip wrapper holding them with relative inner offsets, as producers of 0.10 send."""
    if timestamp is None:
        timestamp = int(time.time() * 1000)
    inner = legacy_entries([legacy_message(magic, k, v, timestamp) for k, v in records])
    if codec == 0:
        return inner
    assert codec == CODEC_GZIP
    z = zlib.compressobj(6, zlib.DEFLATED, 31)
    packed = z.compress(inner) + z.flush()
    return legacy_entries([legacy_message(magic, None, packed, timestamp, codec)],
                          first_offset=len(records) - 1)


def parse_legacy_set(data):
    """A magic 0/1 message set → [dict(offset, magic, attributes, timestamp, key, value)],
    compressed wrappers unpacked. Checks every CRC (AssertionError if one is wrong); a partial
    message at the end is ignored, as old clients do."""
    out = []
    pos = 0
    while pos + 12 <= len(data):
        offset, size = struct.unpack(">qi", data[pos:pos + 12])
        if pos + 12 + size > len(data):
            break
        m = data[pos + 12:pos + 12 + size]
        pos += 12 + size
        crc = struct.unpack(">I", m[:4])[0]
        assert crc == zlib.crc32(m[4:]) & 0xFFFFFFFF, "bad CRC32 at offset %d" % offset
        magic, attributes = m[4], m[5]
        r = Reader(m[6:])
        ts = struct.unpack(">q", r.take(8))[0] if magic >= 1 else None
        n = r.i32()
        key = None if n < 0 else r.take(n)
        n = r.i32()
        value = None if n < 0 else r.take(n)
        assert r.remaining() == 0
        if attributes & 7:
            assert attributes & 7 == CODEC_GZIP, "only gzip wrappers are unpacked here"
            inner = parse_legacy_set(zlib.decompress(value, 47))
            if magic >= 1:  # relative inner offsets: the wrapper holds the last one
                for x in inner:
                    x["offset"] += offset - inner[-1]["offset"]
            out += inner
            continue
        out.append({"offset": offset, "magic": magic, "attributes": attributes,
                    "timestamp": ts, "key": key, "value": value})
    return out


def produce_old_request(corr, topics, acks=-1, timeout_ms=10000, version=0):
    """Produce v0..v2 (no transactional id). topics: {name: {partition: bytes}}."""
    assert 0 <= version <= 2

    def part(kv):
        p, data = kv
        return i32(p) + (i32(-1) if data is None else i32(len(data)) + data)

    def topic(kv):
        name, parts = kv
        return string(name) + array(sorted(parts.items()), part)

    body = i16(acks) + i32(timeout_ms) + array(list(topics.items()), topic)
    return frame(header(PRODUCE, version, corr) + body)


def parse_produce_old(body, version):
    """→ {(topic, partition): dict(error, base_offset, log_append_time (v2))}."""
    r = Reader(body)
    out = {}
    for _ in range(r.i32()):
        name = r.string()
        for _ in range(r.i32()):
            d = {"partition": r.i32(), "error": r.i16(),
                 "base_offset": struct.unpack(">q", r.take(8))[0]}
            if version >= 2:
                d["log_append_time"] = struct.unpack(">q", r.take(8))[0]
            out[(name, d["partition"])] = d
    if version >= 1:
        r.i32()
    assert r.remaining() == 0
    return out


def fetch_old_request(corr, topics, version=0, max_wait_ms=0, min_bytes=1,
                      partition_max_bytes=1 << 20, max_bytes=64 << 20):
    """Fetch v0..v3. topics: {name: {partition: fetch_offset}}."""
    assert 0 <= version <= 3

    def part(kv):
        p, off = kv
        return i32(p) + i64(off) + i32(partition_max_bytes)

    def topic(kv):
        name, parts = kv
        return string(name) + array(sorted(parts.items()), part)

    body = i32(-1) + i32(max_wait_ms) + i32(min_bytes)
    if version >= 3:
        body += i32(max_bytes)
    body += array(list(topics.items()), topic)
    return frame(header(FETCH, version, corr) + body)


def parse_fetch_old(body, version):
    """→ {(topic, partition): dict(error, hw, records bytes)}."""
    r = Reader(body)
    if version >= 1:
        r.i32()
    out = {}
    for _ in range(r.i32()):
        name = r.string()
        for _ in range(r.i32()):
            d = {"partition": r.i32(), "error": r.i16(),
                 "hw": struct.unpack(">q", r.take(8))[0]}
            n = r.i32()
            d["records"] = b"" if n < 0 else r.take(n)
            out[(name, d["partition"])] = d
    assert r.remaining() == 0
    return out


def _conn_produce_old(self, topics, version=0, acks=-1, timeout_ms=10000):
    body = _roundtrip(self, produce_old_request(self.next_corr(), topics, acks, timeout_ms,
                                                version))
    return parse_produce_old(body, version)


def _conn_fetch_old(self, topics, version=0, **kw):
    body = _roundtrip(self, fetch_old_request(self.next_corr(), topics, version, **kw))
    return parse_fetch_old(body, version)


def _conn_list_offsets_v0(self, topics, max_offsets=1):
    """ListOffsets v0. topics: {name: {partition: timestamp}} →
    {(topic, partition): (error, [offsets])}."""
    def part(kv):
        return i32(kv[0]) + i64(kv[1]) + i32(max_offsets)

    def topic(kv):
        return string(kv[0]) + array(sorted(kv[1].items()), part)

    body = i32(-1) + array(list(topics.items()), topic)
    r = Reader(_roundtrip(self, frame(header(LIST_OFFSETS, 0, self.next_corr()) + body)))
    out = {}
    for _ in range(r.i32()):
        name = r.string()
        for _ in range(r.i32()):
            p, err = r.i32(), r.i16()
            out[(name, p)] = (err, r.array(lambda rr: struct.unpack(">q", rr.take(8))[0]))
    assert r.remaining() == 0
    return out


def _conn_metadata_v0(self, topics):
    """Metadata v0: an empty list asks for every topic (v0 has no null)."""
    body = _roundtrip(self, frame(header(METADATA, 0, self.next_corr()) +
                                  array(topics, string)))
    r = Reader(body)
    brokers = r.array(lambda rr: (rr.i32(), rr.string(), rr.i32()))
    topics_out = {}

    def part(rr):
        return {"error": rr.i16(), "partition": rr.i32(), "leader": rr.i32(),
                "replicas": rr.array(lambda x: x.i32()), "isr": rr.array(lambda x: x.i32())}

    for _ in range(r.i32()):
        err, name = r.i16(), r.string()
        topics_out[name] = {"error": err, "partitions": r.array(part)}
    assert r.remaining() == 0
    return {"brokers": brokers, "topics": topics_out}


def _conn_metadata_ops(self, topics=None, version=8, cluster_ops=False, topic_ops=False):
    """Metadata v8..v12 with the authorized-operations flags (v8 classic, v9+ flexible)."""
    def body(e):
        def topic(name):
            return (ZERO_UUID if version >= 10 else b"") + e.str(name) + e.tags()
        out = e.arr(topics, topic) + i8(0)
        if version <= 10:
            out += i8(1 if cluster_ops else 0)
        return out + i8(1 if topic_ops else 0) + e.tags()

    # parse_metadata_flex reads v8 too: the same fields, classic encodings.
    return _conn_admin(self, METADATA, version, body, parse_metadata_flex)


def _conn_create_topics_old(self, topics, version=0, timeout_ms=10000, validate_only=False):
    """CreateTopics v0/v1 (v1 adds validateOnly). topics: [(name, partitions, rf)]."""
    def body(e):
        def topic(t):
            return (e.str(t[0]) + i32(t[1]) + i16(t[2]) + e.arr([], None) + e.arr([], None))
        out = e.arr(topics, topic) + i32(timeout_ms)
        if version >= 1:
            out += i8(1 if validate_only else 0)
        return out
    return _conn_admin(self, CREATE_TOPICS, version, body, parse_create_topics_any)


def _conn_delete_topics_v0(self, names, timeout_ms=10000):
    """DeleteTopics v0 → {name: error} (v0 has no throttle time)."""
    body = array(names, string) + i32(timeout_ms)
    r = Reader(_roundtrip(self, frame(header(DELETE_TOPICS, 0, self.next_corr()) + body)))
    out = {}
    for _ in range(r.i32()):
        name = r.string()
        out[name] = r.i16()
    assert r.remaining() == 0
    return out


Conn.produce_old = _conn_produce_old
Conn.fetch_old = _conn_fetch_old
Conn.list_offsets_v0 = _conn_list_offsets_v0
Conn.metadata_v0 = _conn_metadata_v0
Conn.metadata_ops = _conn_metadata_ops
Conn.create_topics_old = _conn_create_topics_old
Conn.delete_topics_v0 = _conn_delete_topics_v0


# ================================================================ DescribeLogDirs
# DescribeLogDirs v0..v4 (flexible from v2; top-level ErrorCode v3+; TotalBytes /
# UsableBytes v4+). The parser reads the body to its last byte. Added for
# test_describe_log_dirs.py.

DESCRIBE_LOG_DIRS = 35
KAFKA_STORAGE_ERROR = 56
_LAST_CLASSIC[DESCRIBE_LOG_DIRS] = 1


def describe_log_dirs_body(topics):
    """topics: {name: [partition, ...]}, or None for every hosted partition."""
    def body(e):
        def topic(kv):
            return e.str(kv[0]) + e.arr(list(kv[1]), i32) + e.tags()
        return e.arr(None if topics is None else list(topics.items()), topic) + e.tags()
    return body


def parse_describe_log_dirs(d, version):
    """→ dict(throttle_ms, error, results [dict(error, log_dir, total_bytes, usable_bytes,
    topics {name: {partition: dict(size, offset_lag, is_future)}})]); the error and the
    byte counts are None in versions without them."""
    out = {"throttle_ms": d.i32(), "error": d.i16() if version >= 3 else None}

    def result(_r):
        res = {"error": d.i16(), "log_dir": d.str(), "topics": {}}

        def topic(_r2):
            name = d.str()
            parts = {}

            def part(_r3):
                p = d.i32()
                assert p not in parts, "partition %s-%d twice" % (name, p)
                parts[p] = {"size": _r_i64(d.r), "offset_lag": _r_i64(d.r),
                            "is_future": d.bool()}
                d.tags()

            d.arr(part)
            d.tags()
            assert name not in res["topics"], "topic %s twice" % name
            res["topics"][name] = parts

        d.arr(topic)
        res["total_bytes"] = _r_i64(d.r) if version >= 4 else None
        res["usable_bytes"] = _r_i64(d.r) if version >= 4 else None
        d.tags()
        return res

    out["results"] = d.arr(result)
    return out


def _conn_describe_log_dirs(self, topics=None, version=4):
    return _conn_admin(self, DESCRIBE_LOG_DIRS, version, describe_log_dirs_body(topics),
                       parse_describe_log_dirs)


Conn.describe_log_dirs = _conn_describe_log_dirs


# ================================================================ replica Fetch v12
# A follower's Fetch (ReplicaId, CurrentLeaderEpoch, LastFetchedEpoch) and the partition's
# DivergingEpoch in the answer: the process tests send what a stale or diverged follower
# would, straight to a leader.

def replica_fetch_request(corr, topic, partition, replica_id, fetch_offset,
                          current_leader_epoch=-1, last_fetched_epoch=-1, max_wait_ms=0):
    part = (i32(partition) + i32(current_leader_epoch) + i64(fetch_offset) +
            i32(last_fetched_epoch) + i64(-1) + i32(1 << 20) + uvarint(0))
    t = compact_string(topic) + _compact_array([part], lambda x: x) + uvarint(0)
    body = (i32(replica_id) + i32(max_wait_ms) + i32(1) + i32(1 << 20) + i8(0) + i32(0) +
            i32(-1) + _compact_array([t], lambda x: x) + _compact_array([], None) +
            compact_string("") + uvarint(0))
    return frame(header(FETCH, 12, corr, flexible=True) + body)


def parse_replica_fetch(body):
    """Fetch v12 answer of one partition → dict(error, hw, diverging (epoch, end_offset) or
    None, records bytes or None)."""
    r = Reader(body)
    r.i32()
    top_err = r.i16()
    r.i32()
    out = {}

    def part(r2):
        d = {"partition": r2.i32(), "error": r2.i16(), "diverging": None}
        d["hw"] = struct.unpack(">q", r2.take(8))[0]
        r2.take(16)  # last stable offset, log start offset
        r2.compact_array(lambda r3: (r3.take(16), r3.skip_tags()))
        r2.i32()  # preferred read replica
        n = r2.uvarint()
        d["records"] = None if n == 0 else r2.take(n - 1)
        for _ in range(r2.uvarint()):
            tag, size = r2.uvarint(), r2.uvarint()
            raw = Reader(r2.take(size))
            if tag == 0:
                d["diverging"] = (raw.i32(), struct.unpack(">q", raw.take(8))[0])
        out.update(d)

    def topic(rr):
        rr.compact_string()
        rr.compact_array(part)
        rr.skip_tags()

    r.compact_array(topic)
    out["top_error"] = top_err
    return out


def _conn_replica_fetch(self, topic, partition, replica_id, fetch_offset, **kw):
    body = _roundtrip(self, replica_fetch_request(self.next_corr(), topic, partition,
                                                  replica_id, fetch_offset, **kw),
                      flexible_header=True)
    return parse_replica_fetch(body)


Conn.replica_fetch = _conn_replica_fetch
