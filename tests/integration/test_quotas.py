"""Client quotas (issue 17): AlterClientQuotas / DescribeClientQuotas (KIP-546, raw v0 and v1)
and producer_byte_rate enforced as Kafka does since KIP-219 — a producer offering 10× its
quota is held to within 20 % of it (bytes acked per second, from the answers' timestamps),
while a client on another client id is not throttled at all (throttle_time_ms 0 in every
answer), and the quota survives a restart."""
import struct
import threading
import time

import kproto

DESCRIBE, ALTER = 48, 49
QUOTA = 100_000          # producer_byte_rate set for the flooding client id, bytes/s
BATCH_VALUE = 9_000      # one ~9 KB record per Produce request
OFFERED = 10 * QUOTA     # what the flooding client tries to send, bytes/s
MEASURE_S = 4.0          # measured after its first throttled answer


def header(api, version, corr, client_id, flexible):
    return kproto.header(api, version, corr, client_id=client_id, flexible=flexible)


def entity(parts, flexible):
    """parts: [(entity_type, name or None)]."""
    if flexible:
        return kproto._compact_array(
            parts, lambda p: kproto.compact_string(p[0]) + kproto.compact_string(p[1]) +
            kproto.uvarint(0))
    return kproto.array(parts, lambda p: kproto.string(p[0]) + kproto.string(p[1]))


def alter_request(corr, entries, version=0, validate_only=False):
    """entries: [(parts, [(key, value, remove)])]."""
    flex = version >= 1
    s = kproto.compact_string if flex else kproto.string
    tags = kproto.uvarint(0) if flex else b""
    arr = kproto._compact_array if flex else kproto.array

    def op(o):
        return s(o[0]) + struct.pack(">d", o[1]) + kproto.i8(1 if o[2] else 0) + tags

    def entry(e):
        return entity(e[0], flex) + arr(e[1], op) + tags

    body = arr(entries, entry) + kproto.i8(1 if validate_only else 0) + tags
    return kproto.frame(header(ALTER, version, corr, "admin", flex) + body)


def read_entity(r, flex):
    s = (lambda: r.compact_string()) if flex else (lambda: r.string())

    def one(rr):
        t, n = s(), s()
        if flex:
            rr.skip_tags()
        return (t, n)
    return (r.compact_array if flex else r.array)(one)


def parse_alter(body, version):
    flex = version >= 1
    r = kproto.Reader(body)
    throttle = r.i32()

    def res(rr):
        err = rr.i16()
        msg = rr.compact_string() if flex else rr.string()
        ent = read_entity(rr, flex)
        if flex:
            rr.skip_tags()
        return err, msg, ent
    out = (r.compact_array if flex else r.array)(res)
    return throttle, out


def describe_request(corr, components, strict=False, version=0):
    """components: [(entity_type, match_type, match or None)]."""
    flex = version >= 1
    s = kproto.compact_string if flex else kproto.string
    tags = kproto.uvarint(0) if flex else b""
    arr = kproto._compact_array if flex else kproto.array

    def comp(c):
        return s(c[0]) + kproto.i8(c[1]) + s(c[2]) + tags

    body = arr(components, comp) + kproto.i8(1 if strict else 0) + tags
    return kproto.frame(header(DESCRIBE, version, corr, "admin", flex) + body)


def parse_describe(body, version):
    """→ (error, {entity tuple: {key: value}}) (entity: sorted (type, name) pairs)."""
    flex = version >= 1
    r = kproto.Reader(body)
    r.i32()
    err = r.i16()
    r.compact_string() if flex else r.string()
    s = (lambda: r.compact_string()) if flex else (lambda: r.string())

    def value(rr):
        k = s()
        v = struct.unpack(">d", rr.take(8))[0]
        if flex:
            rr.skip_tags()
        return k, v

    def entry(rr):
        ent = tuple(sorted(read_entity(rr, flex)))
        vals = dict((rr.compact_array if flex else rr.array)(value))
        if flex:
            rr.skip_tags()
        return ent, vals
    entries = (r.compact_array if flex else r.array)(entry) or []
    return err, dict(entries)


def call(c, build, parse, *args, **kw):
    corr = c.next_corr()
    c.send(build(corr, *args, **kw))
    got, body = c.recv_response(flexible_header=kw.get("version", 0) >= 1)
    assert got == corr
    return parse(body, kw.get("version", 0))


def produce_frame(corr, client_id, value):
    """Produce v3, acks=1, one record, from `client_id`."""
    payload = kproto.produce_request(corr, {"quota-t": {0: kproto.record_batch([(None, value)])}},
                                     acks=1, version=3)[4:]
    default_hdr = kproto.header(0, 3, corr)
    assert payload.startswith(default_hdr)
    return kproto.frame(kproto.header(0, 3, corr, client_id=client_id) +
                        payload[len(default_hdr):])


def produce_once(c, client_id, value):
    corr = c.next_corr()
    c.send(produce_frame(corr, client_id, value))
    got, body = c.recv_response()
    assert got == corr
    parts, throttle = kproto.parse_produce(body, 3)
    assert parts[("quota-t", 0)]["error"] == 0
    return throttle


def test_quotas_alter_describe_enforce_and_survive_restart(broker):
    with broker.conn() as c:
        res = c.create_topics([("quota-t", 1, 1, None)])
        assert res["quota-t"][0] == 0, res

        # Refused whole, nothing set: an unknown key, a value <= 0, an ip entity, a key twice.
        _, out = call(c, alter_request, parse_alter, [
            ([("client-id", "flood")], [("no_such_rate", 1.0, False)]),
            ([("client-id", "flood")], [("producer_byte_rate", 0.0, False)]),
            ([("ip", "1.2.3.4")], [("connection_creation_rate", 5.0, False)]),
            ([("client-id", "flood")], [("producer_byte_rate", 5.0, False),
                                        ("producer_byte_rate", 6.0, False)]),
        ])
        assert [e[0] for e in out] == [42, 42, 42, 42], out
        # validate_only sets nothing either.
        _, out = call(c, alter_request, parse_alter,
                      [([("client-id", "flood")], [("producer_byte_rate", 5.0, False)])],
                      validate_only=True)
        assert out[0][0] == 0
        err, got = call(c, describe_request, parse_describe, [("client-id", 2, None)])
        assert err == 0 and got == {}, got

        # The quota under test, a default-user quota to filter on (v1, flexible), and a
        # removal of what is not set (no error).
        _, out = call(c, alter_request, parse_alter,
                      [([("client-id", "flood")], [("producer_byte_rate", float(QUOTA), False)]),
                       ([("user", None), ("client-id", "other")],
                        [("consumer_byte_rate", 2e6, False), ("request_percentage", 50.0, False)]),
                       ([("user", "nobody")], [("producer_byte_rate", 0.0, True)])],
                      version=1)
        assert [e[0] for e in out] == [0, 0, 0], out

        flood = (("client-id", "flood"),)
        other = (("client-id", "other"), ("user", None))
        err, got = call(c, describe_request, parse_describe, [("client-id", 0, "flood")])
        assert err == 0 and got == {flood: {"producer_byte_rate": QUOTA}}, got
        # Not strict: any entity with a client-id part; strict: only those with nothing else.
        err, got = call(c, describe_request, parse_describe, [("client-id", 2, None)], version=1)
        assert got == {flood: {"producer_byte_rate": QUOTA},
                       other: {"consumer_byte_rate": 2e6, "request_percentage": 50.0}}, got
        err, got = call(c, describe_request, parse_describe, [("client-id", 2, None)],
                        strict=True)
        assert got == {flood: {"producer_byte_rate": QUOTA}}, got
        err, got = call(c, describe_request, parse_describe, [("user", 1, None)])
        assert list(got) == [other], got
        err, got = call(c, describe_request, parse_describe, [("user", 0, None)])
        assert err == 42

    # The flood: one thread offers 10× the quota on client id "flood"; the main thread sends
    # on client id "free" meanwhile.
    acked = []            # (monotonic s, bytes) of the flood's answers
    throttles = []
    stop = threading.Event()
    value = b"x" * BATCH_VALUE
    period = BATCH_VALUE / OFFERED

    def flooder():
        with broker.conn(timeout=30) as fc:
            nxt = time.monotonic()
            first = None
            while not stop.is_set():
                t = produce_once(fc, "flood", value)
                now = time.monotonic()
                acked.append((now, len(value)))
                throttles.append(t)
                if t > 0 and first is None:
                    first = now
                if first is not None and now - first > MEASURE_S + 1.0:
                    break
                nxt = max(nxt + period, now - 0.1)
                if nxt > now:
                    time.sleep(nxt - now)
            stop.set()

    th = threading.Thread(target=flooder)
    th.start()
    free_throttles = []
    with broker.conn() as fc:
        while not stop.is_set() and len(free_throttles) < 2000:
            free_throttles.append(produce_once(fc, "free", b"y" * 100))
            time.sleep(0.01)
    th.join(timeout=30)
    assert not th.is_alive()

    assert free_throttles and all(t == 0 for t in free_throttles), free_throttles[:20]
    assert any(t > 0 for t in throttles), "the flood was never throttled"
    first = next(acked[i][0] for i, t in enumerate(throttles) if t > 0)
    # Measured from a second after the first throttle (the client's pipeline settles) over
    # MEASURE_S seconds of answers.
    window = [(t, n) for t, n in acked if first + 1.0 <= t <= first + 1.0 + MEASURE_S]
    assert len(window) >= 10, window
    rate = sum(n for _, n in window[1:]) / (window[-1][0] - window[0][0])
    assert 0.8 * QUOTA <= rate <= 1.2 * QUOTA, (rate, QUOTA)

    broker.restart()
    with broker.conn() as c:
        err, got = call(c, describe_request, parse_describe, [])
        assert err == 0 and got == {flood: {"producer_byte_rate": QUOTA},
                                    other: {"consumer_byte_rate": 2e6,
                                            "request_percentage": 50.0}}, got
        # Still enforced after the restart: the flood's client id is throttled again soon.
        value = b"z" * BATCH_VALUE
        for _ in range(400):
            if produce_once(c, "flood", value) > 0:
                break
        else:
            raise AssertionError("not throttled after the restart")


def test_quotas_cli_and_consumer_byte_rate(broker):
    with broker.conn() as c:
        res = c.create_topics([("quota-t", 1, 1, None)])
        assert res["quota-t"][0] == 0, res
        for _ in range(20):
            produce_once(c, "filler", b"f" * BATCH_VALUE)

    # tally quotas set / describe, as kafka-configs.sh prints them.
    r = broker.tally("quotas", "set", "--client-id", "kproto", "--add-config",
                     "consumer_byte_rate=1000")
    assert r.returncode == 0, r.stderr
    r = broker.tally("quotas", "set", "--user-default", "--client-default", "--add-config",
                     "producer_byte_rate=5e6,request_percentage=25")
    assert r.returncode == 0, r.stderr
    r = broker.tally("quotas", "set", "--user", "alice", "--add-config", "no_such_key=1")
    assert r.returncode == 1 and "INVALID_REQUEST" in r.stderr, (r.returncode, r.stderr)
    r = broker.tally("quotas", "describe", "--client-id", "kproto")
    assert r.returncode == 0, r.stderr
    assert r.stdout == ("Quota configs for client-id 'kproto' are "
                        "consumer_byte_rate=1000.0\n"), r.stdout
    r = broker.tally("quotas", "describe")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "Quota configs for client-id 'kproto' are consumer_byte_rate=1000.0",
        "Quota configs for the default user-principal, the default client-id are "
        "producer_byte_rate=5000000.0, request_percentage=25.0"], r.stdout
    r = broker.tally("quotas", "set", "--user-default", "--client-default", "--delete-config",
                     "producer_byte_rate,request_percentage")
    assert r.returncode == 0, r.stderr
    r = broker.tally("quotas", "describe", "--user-default", "--client-default")
    assert r.returncode == 0 and r.stdout == "", (r.stdout, r.stderr)

    # consumer_byte_rate: kproto's Fetch (client id "kproto") of ~180 KB at 1000 B/s is
    # throttled in its answer at once; the flood's produce client id is not.
    with broker.conn() as c:
        corr = c.next_corr()
        c.send(kproto.fetch_request(corr, {"quota-t": {0: 0}}, version=4))
        got, body = c.recv_response()
        assert got == corr
        res = kproto.parse_fetch(body, 4)
        assert res["partitions"][("quota-t", 0)]["error"] == 0
        assert len(res["partitions"][("quota-t", 0)]["records"]) > 100_000
        assert res["throttle_ms"] > 0, res["throttle_ms"]
    # That connection is muted for as long; another one, of another client id, is not.
    with broker.conn() as c:
        assert produce_once(c, "filler", b"f") == 0
