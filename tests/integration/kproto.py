# SPDX-License-Identifier: Apache-2.0
"""Hand-built Kafka protocol frames for tests that need exact bytes on the wire.

Covers only what the integration tests use: ApiVersions v0/v3, Metadata v1/v4,
CreateTopics v2 and a few frame-level helpers. Encodings follow the Kafka protocol
guide: big-endian ints, INT16-length strings, INT32-count arrays, and for flexible
versions unsigned-varint lengths plus tagged-field sections.
"""
import socket
import struct
import time

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
