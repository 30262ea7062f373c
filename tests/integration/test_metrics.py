# SPDX-License-Identifier: Apache-2.0
"""The Prometheus endpoint (issue 19, docs/metrics.md): a real tallyd with metrics.listener
on a free loopback port; records produced with confluent-kafka show up as the records-in
counter and the partition's high watermark; `promtool check metrics` finds nothing wrong
with the text; a real Prometheus server scrapes it and its HTTP API answers the records-in
series with the number produced. Error codes of answers are counted by API and name.
Another path is 404, another method 405, an oversized request is refused, and the broker
keeps serving Kafka clients and scrapes meanwhile. With metrics.listener unset the process
listens on its two Kafka ports only. In a 3-node cluster exactly one node reports
tally_active_controller 1 (the one every node names), and none reports an under-replicated
partition once the ISR is full.

Debian's prometheus package brings /usr/bin/prometheus and promtool (`make deps`); without
it the tests skip, which counts as a failure under CI=true (conftest.py)."""
import http.client
import json
import os
import re
import shutil
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

import cluster as clu
import harness
import kproto as kp

PROMETHEUS = "/usr/bin/prometheus"
PROMTOOL = shutil.which("promtool") or "/usr/bin/promtool"
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
OPENMETRICS_ACCEPT = ("application/openmetrics-text;version=1.0.0,"
                      "text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


@pytest.fixture(autouse=True)
def one_bucket_per_slice(monkeypatch):
    """Every broker here walks its partitions one hash bucket per loop turn (a test-build
    hook): a scrape's walk then spans many slices even with a few partitions, as one of
    10,000 does, and each series must still be there exactly once."""
    monkeypatch.setenv("TALLY_TEST_METRICS_SLICE_NS", "0")


def need_prometheus():
    if not (os.path.exists(PROMETHEUS) and os.path.exists(PROMTOOL)):
        pytest.skip("prometheus not installed (Debian's prometheus package: make deps)")


def metrics_broker(broker_factory, **extra):
    port = harness.free_port()
    settings = {"metrics.listener": "127.0.0.1:%d" % port}
    settings.update(extra)
    b = broker_factory(settings=settings)
    b.metrics_port = port
    return b


def get(port, path="/metrics", method="GET", headers=None, body=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        return r.status, r.read().decode(), dict(r.getheaders())
    finally:
        c.close()


def scrape(port):
    status, text, headers = get(port)
    assert status == 200, (status, text)
    assert headers.get("Content-Type", "").startswith("text/plain; version=0.0.4"), headers
    return text


def parse(text):
    """{(name, frozenset(labels)): value} of every sample line."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        assert m, "not a sample line: %r" % line
        labels = frozenset(LABEL.findall(m.group(2) or ""))
        key = (m.group(1), labels)
        assert key not in out, "duplicate series %r" % (key,)
        out[key] = float(m.group(3))
    return out


def value(samples, name, **labels):
    return samples.get((name, frozenset(labels.items())))


def produce(b, topic, n):
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": b.bootstrap, "acks": "all", "linger.ms": 5})
    errors = []
    for i in range(n):
        p.produce(topic, value=b"record-%d" % i, partition=0,
                  on_delivery=lambda err, msg: err and errors.append(err))
    assert p.flush(60) == 0
    assert not errors, errors


def test_metrics_records_in_promtool_and_prometheus(broker_factory, tmp_path):
    need_prometheus()
    # Timed-out transactions are looked for every 200 ms (the test leaves one to time out).
    # A group's first member is not kept waiting for others (the live group below).
    b = metrics_broker(broker_factory, **{
        "transaction.abort.timed.out.transaction.cleanup.interval.ms": "200",
        "group.initial.rebalance.delay.ms": "0"})
    n = 237
    harness.create_topics(b, [("metrics-in", 1, {})])
    produce(b, "metrics-in", n)

    text = scrape(b.metrics_port)
    s = parse(text)
    assert value(s, "tally_topic_records_in_total", topic="metrics-in") == n, text
    assert value(s, "tally_partition_high_watermark", topic="metrics-in", partition="0") == n
    assert value(s, "tally_partition_log_end_offset", topic="metrics-in", partition="0") == n
    assert value(s, "tally_partition_last_stable_offset", topic="metrics-in",
                 partition="0") == n
    assert value(s, "tally_partition_log_start_offset", topic="metrics-in", partition="0") == 0
    assert value(s, "tally_topic_bytes_in_total", topic="metrics-in") > n * len(b"record-0")
    assert value(s, "tally_requests_total", api="Produce") >= 1
    assert value(s, "tally_request_local_seconds_count", api="Produce") == \
        value(s, "tally_requests_total", api="Produce")
    assert value(s, "tally_active_controller") == 1
    assert value(s, "tally_metadata_quorum_leader") == 1
    assert value(s, "tally_metadata_quorum_applied_index") >= 1
    assert value(s, "tally_under_replicated_partitions") == 0
    assert value(s, "tally_process_open_fds") > 0
    assert value(s, "tally_process_resident_memory_bytes") > 0
    assert value(s, "tally_event_loop_lag_seconds_count") >= 1
    # A histogram's buckets are cumulative and end in +Inf == _count.
    inf = value(s, "tally_event_loop_lag_seconds_bucket", le="+Inf")
    assert inf == value(s, "tally_event_loop_lag_seconds_count")

    # Consumers' bytes out follow a fetch of the topic.
    harness.consume_assigned(b, "metrics-in", {0: 0}, {0: n})
    s = parse(scrape(b.metrics_port))
    assert value(s, "tally_topic_bytes_out_total", topic="metrics-in") > 0
    assert value(s, "tally_topic_fetch_requests_total", topic="metrics-in") >= 1
    assert value(s, "tally_topic_produce_requests_total", topic="metrics-in") >= 1

    # A transaction left open on the partition holds its last stable offset at n.
    from confluent_kafka import Consumer, Producer, TopicPartition
    tp = Producer({"bootstrap.servers": b.bootstrap, "transactional.id": "metrics-open",
                   "linger.ms": 5})
    tp.init_transactions(30)
    tp.begin_transaction()
    for i in range(5):
        tp.produce("metrics-in", value=b"open-%d" % i, partition=0)
    assert tp.flush(30) == 0
    # Two groups: one committed at 100, one at the high watermark.
    for group, at in (("metrics-behind", 100), ("metrics-caught-up", n + 5)):
        c = Consumer({"bootstrap.servers": b.bootstrap, "group.id": group,
                      "enable.auto.commit": False})
        c.commit(offsets=[TopicPartition("metrics-in", 0, at)], asynchronous=False)
        c.close()
    s1 = parse(scrape(b.metrics_port))
    time.sleep(0.3)
    text = scrape(b.metrics_port)
    s2 = parse(text)
    tp0 = dict(topic="metrics-in", partition="0")
    hw = value(s2, "tally_partition_high_watermark", **tp0)
    lso = value(s2, "tally_partition_last_stable_offset", **tp0)
    assert (hw, lso) == (n + 5, n), (hw, lso)
    behind = dict(group="metrics-behind", **tp0)
    assert value(s2, "tally_group_committed_offset", **behind) == 100
    assert value(s2, "tally_group_lag_records", **behind) == hw - 100
    assert value(s2, "tally_group_lag_stable_records", **behind) == lso - 100
    assert value(s2, "tally_group_lag_seconds", **behind) > 0
    caught = dict(group="metrics-caught-up", **tp0)
    assert value(s2, "tally_group_lag_records", **caught) == 0
    assert value(s2, "tally_group_lag_stable_records", **caught) == 0
    assert value(s2, "tally_group_lag_seconds", **caught) == 0
    for g in ("metrics-behind", "metrics-caught-up"):
        assert value(s2, "tally_group_state", group=g, state="Empty") == 1
        assert value(s2, "tally_group_members", group=g) == 0
    assert value(s2, "tally_groups", state="Empty") == 2
    assert value(s2, "tally_groups", state="Stable") == 0
    # A subscribed consumer: its group is Stable with one member while it runs.
    live = Consumer({"bootstrap.servers": b.bootstrap, "group.id": "metrics-live",
                     "session.timeout.ms": 6000})
    live.subscribe(["metrics-in"])
    try:
        def stable():
            live.poll(0.1)
            got = parse(scrape(b.metrics_port))
            return got if value(got, "tally_group_state", group="metrics-live",
                                state="Stable") == 1 else None
        got = clu.wait_for(stable, 30, "the live group is Stable")
        assert value(got, "tally_group_members", group="metrics-live") == 1
        assert value(got, "tally_groups", state="Stable") == 1
        assert not [k for k in got if k[0] == "tally_group_state" and
                    dict(k[1])["group"] == "metrics-live" and dict(k[1])["state"] != "Stable"]
    finally:
        live.close()
    got = parse(scrape(b.metrics_port))
    assert value(got, "tally_group_members", group="metrics-live") == 0
    assert value(got, "tally_group_state", group="metrics-live", state="Empty") == 1
    # The record at a committed offset is read once, not at every scrape.
    assert value(s2, "tally_metrics_group_timestamp_reads_total") == \
        value(s1, "tally_metrics_group_timestamp_reads_total") >= 1
    # The open transaction's age grows between two scrapes; the log has one segment.
    age1 = value(s1, "tally_partition_oldest_open_txn_age_seconds", **tp0)
    age2 = value(s2, "tally_partition_oldest_open_txn_age_seconds", **tp0)
    assert 0 < age1 < age2, (age1, age2)
    assert value(s2, "tally_partition_segments", **tp0) == 1
    # The coordinator holds one open transaction; the partition one transactional producer.
    assert value(s2, "tally_txn_ongoing") == 1
    assert value(s2, "tally_txn_transactions", state="Ongoing") == 1
    assert value(s2, "tally_producers_tracked") == 1
    assert value(s2, "tally_txn_marker_send_seconds_count") == 0

    r = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "" and r.stderr.strip() == "", \
        (r.returncode, r.stdout, r.stderr)

    # OpenMetrics when asked for: the same samples, counter families named without _total,
    # "# EOF" at the end.
    status, om, headers = get(b.metrics_port, headers={"Accept": OPENMETRICS_ACCEPT})
    assert status == 200
    assert headers["Content-Type"].startswith("application/openmetrics-text; version=1.0.0"), \
        headers
    assert om.endswith("\n# EOF\n") and om.count("# EOF") == 1, om[-200:]
    om_types = dict(re.findall(r"^# TYPE (\S+) (\S+)$", om, re.M))
    text_types = dict(re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M))
    assert om_types == {(n[:-6] if t == "counter" else n): t for n, t in text_types.items()}
    om_samples = parse(om.replace("# EOF\n", ""))
    assert value(om_samples, "tally_topic_records_in_total", topic="metrics-in") == n + 5
    assert set(k[0] for k in om_samples) == set(k[0] for k in parse(scrape(b.metrics_port)))
    # promtool (2.42) lints the 0.0.4 text only: it reads an OpenMetrics counter's samples
    # as a family of their own without HELP. That is the one finding allowed, for exactly
    # the counter families that have samples.
    r = subprocess.run([PROMTOOL, "check", "metrics"], input=om, capture_output=True,
                       text=True, timeout=60)
    with_samples = {k[0] for k in om_samples}
    want = {"%s_total no help text" % f for f, t in om_types.items()
            if t == "counter" and f + "_total" in with_samples}
    got = set(r.stdout.strip().splitlines() + r.stderr.strip().splitlines()) - {""}
    assert got == want, (sorted(got - want), sorted(want - got))

    # The transaction commits: its markers are written (one latency observed), the LSO
    # catches up and no transaction is open any more. Another, left open past its 3 s
    # timeout, is aborted by the coordinator.
    tp.commit_transaction(30)
    late = Producer({"bootstrap.servers": b.bootstrap, "transactional.id": "metrics-late",
                     "transaction.timeout.ms": 3000})
    late.init_transactions(30)
    late.begin_transaction()
    delivered = []
    late.produce("metrics-in", value=b"late", partition=0,
                 on_delivery=lambda err, msg: delivered.append(err))
    assert late.flush(30) == 0
    assert delivered == [None], delivered  # in the log, so the transaction is Ongoing

    def aborted():
        # Counted when the abort starts; the LSO moves once its marker is written.
        got = parse(scrape(b.metrics_port))
        done = value(got, "tally_txn_timed_out_aborts_total") >= 1 and \
            value(got, "tally_partition_last_stable_offset", **tp0) == \
            value(got, "tally_partition_high_watermark", **tp0)
        return got if done else None
    s3 = clu.wait_for(aborted, 30, "the coordinator aborts the timed-out transaction")
    assert value(s3, "tally_txn_timed_out_aborts_total") == 1
    assert value(s3, "tally_txn_transactions", state="CompleteCommit") == 1
    assert value(s3, "tally_txn_marker_send_seconds_count") >= 1
    hw = value(s3, "tally_partition_high_watermark", **tp0)
    assert value(s3, "tally_partition_last_stable_offset", **tp0) == hw
    assert value(s3, "tally_partition_oldest_open_txn_age_seconds", **tp0) == 0
    assert value(s3, "tally_group_lag_records", **behind) == hw - 100

    # A real Prometheus server scrapes it every second.
    web = harness.free_port()
    cfg = tmp_path / "prometheus.yml"
    cfg.write_text("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                   "scrape_configs:\n  - job_name: tally\n    static_configs:\n"
                   "      - targets: ['127.0.0.1:%d']\n" % b.metrics_port)
    log = open(tmp_path / "prometheus.log", "wb")
    prom = subprocess.Popen([PROMETHEUS, "--config.file=%s" % cfg,
                             "--storage.tsdb.path=%s" % (tmp_path / "tsdb"),
                             "--web.listen-address=127.0.0.1:%d" % web],
                            stdout=log, stderr=log, stdin=subprocess.DEVNULL)
    try:
        q = urllib.parse.quote('tally_topic_records_in_total{topic="metrics-in"}')
        url = "http://127.0.0.1:%d/api/v1/query?query=%s" % (web, q)
        last = None
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert prom.poll() is None, "prometheus exited: %s" % (
                (tmp_path / "prometheus.log").read_text()[-2000:])
            try:
                with urllib.request.urlopen(url, timeout=10) as r:
                    last = json.load(r)
                res = last["data"]["result"]
                if res:
                    break
            except (OSError, urllib.error.URLError, ValueError) as e:
                last = repr(e)
            time.sleep(0.5)
        else:
            raise AssertionError("prometheus never had the series: %r\n%s" % (
                last, (tmp_path / "prometheus.log").read_text()[-2000:]))
        assert last["status"] == "success", last
        assert len(res) == 1, res
        assert res[0]["metric"]["job"] == "tally"
        assert float(res[0]["value"][1]) == n + 6, res
        # The scrape itself was healthy as Prometheus sees it.
        q = urllib.parse.quote('up{job="tally"}')
        with urllib.request.urlopen("http://127.0.0.1:%d/api/v1/query?query=%s" % (web, q),
                                    timeout=10) as r:
            up = json.load(r)["data"]["result"]
        assert [float(x["value"][1]) for x in up] == [1.0], up
        # A group's lag as Prometheus has it: HW - committed.
        q = urllib.parse.quote('tally_group_lag_records{group="metrics-behind"}')
        with urllib.request.urlopen("http://127.0.0.1:%d/api/v1/query?query=%s" % (web, q),
                                    timeout=10) as r:
            lag = json.load(r)["data"]["result"]
        assert [float(x["value"][1]) for x in lag] == [hw - 100], lag
        # Prometheus asked for OpenMetrics, and parsed it (its parser refuses a text
        # without "# EOF").
        q = urllib.parse.quote('tally_metrics_renders_total{job="tally",format="openmetrics"}')
        with urllib.request.urlopen("http://127.0.0.1:%d/api/v1/query?query=%s" % (web, q),
                                    timeout=10) as r:
            om = json.load(r)["data"]["result"]
        assert len(om) == 1 and float(om[0]["value"][1]) >= 1, om
    finally:
        prom.terminate()
        try:
            prom.wait(30)
        except subprocess.TimeoutExpired:
            prom.kill()
            prom.wait()
        log.close()


def test_metrics_error_codes_and_bad_http(broker_factory):
    b = metrics_broker(broker_factory)
    # flush.messages=1: every append is fsynced, so the fsync histogram has observations.
    harness.create_topics(b, [("metrics-err", 1, {"flush.messages": "1"})])
    # Two partitions that do not exist, one that does: two errors in one Produce answer.
    batch = kp.record_batch([(None, b"x")])
    with b.conn() as c:
        res = c.produce({"metrics-err": {0: batch, 5: batch, 6: batch}}, version=3)
    assert res[("metrics-err", 0)]["error"] == kp.NONE, res
    assert res[("metrics-err", 5)]["error"] == kp.UNKNOWN_TOPIC_OR_PARTITION, res
    s = parse(scrape(b.metrics_port))
    assert value(s, "tally_request_errors_total", api="Produce",
                 error="UNKNOWN_TOPIC_OR_PARTITION") == 2
    assert value(s, "tally_topic_records_in_total", topic="metrics-err") == 1
    # Only the partition led here counts as a produce request of the topic.
    assert value(s, "tally_topic_produce_requests_total", topic="metrics-err") == 1
    assert not [k for k in s if k[0] == "tally_topic_produce_requests_total" and
                dict(k[1])["topic"] != "metrics-err"], s

    # A batch whose CRC does not match and an oversized one: rejected, counted by reason.
    bad = bytearray(kp.record_batch([(None, b"y")]))
    bad[-1] ^= 0xFF
    big = kp.record_batch([(None, b"z" * 1100000)])
    with b.conn() as c:
        res = c.produce({"metrics-err": {0: bytes(bad)}}, version=3)
        assert res[("metrics-err", 0)]["error"] == kp.CORRUPT_MESSAGE, res
        res = c.produce({"metrics-err": {0: bytes(bad)}}, version=3)
        res = c.produce({"metrics-err": {0: big}}, version=3)
        assert res[("metrics-err", 0)]["error"] == kp.MESSAGE_TOO_LARGE, res
    s = parse(scrape(b.metrics_port))
    assert value(s, "tally_topic_rejected_batches_total", topic="metrics-err",
                 reason="corrupt") == 2, s
    assert value(s, "tally_topic_rejected_batches_total", topic="metrics-err",
                 reason="too_large") == 1
    assert value(s, "tally_topic_produce_requests_total", topic="metrics-err") == 4
    assert value(s, "tally_topic_records_in_total", topic="metrics-err") == 1

    # "/" is the web console's page (test_console.py); nothing else but /metrics and /api/.
    for path in ("/metricsx", "/metrics/", "/console", "/index.htm"):
        status, _body, _h = get(b.metrics_port, path)
        assert status == 404, (path, status)
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        status, _body, h = get(b.metrics_port, method=method, body=b"x" * 100)
        assert status == 405, (method, status)
        assert "GET" in h.get("Allow", ""), h
    status, _body, _h = get(b.metrics_port, headers={"X-Big": "a" * 200000})
    assert 400 <= status < 500, status
    # Malformed request line: refused or closed, never a crash.
    import socket
    with socket.create_connection(("127.0.0.1", b.metrics_port), timeout=10) as sock:
        sock.sendall(b"\x00\xff garbage\r\n\r\n")
        try:
            data = sock.recv(4096)
        except (ConnectionResetError, socket.timeout):
            data = b""
        assert data == b"" or data.startswith(b"HTTP/1.1 4"), data[:80]

    # The broker and the endpoint keep serving.
    with b.conn() as c:
        err, keys = c.api_versions(0)
        assert err == 0 and kp.METADATA in keys
        # A long poll at the log end: the broker must hold it for its max.wait (300 ms).
        c.fetch({"metrics-err": {0: 1}}, version=4, max_wait_ms=300)
    s = parse(scrape(b.metrics_port))
    # Kafka's split of the request time. ApiVersions is answered from its handler: no
    # remote time at all. The Fetch waited in the purgatory for at least 250 ms.
    assert value(s, "tally_request_total_seconds_count", api="ApiVersions") >= 1
    assert value(s, "tally_request_remote_seconds_count", api="ApiVersions") >= 1
    assert value(s, "tally_request_remote_seconds_sum", api="ApiVersions") == 0
    fetch_waits = value(s, "tally_request_remote_seconds_bucket", api="Fetch", le="+Inf") - \
        value(s, "tally_request_remote_seconds_bucket", api="Fetch", le="0.25")
    assert fetch_waits >= 1, s
    # The fsyncs of the appends, and the thread pool's tasks (the fsyncs among them).
    assert value(s, "tally_fsync_seconds_count") >= 1
    assert value(s, "tally_fsync_seconds_bucket", le="+Inf") == value(s, "tally_fsync_seconds_count")
    clu.wait_for(lambda: value(parse(scrape(b.metrics_port)),
                               "tally_threadpool_wait_seconds_count") >= 1,
                 10, "the thread pool ran tasks")
    # Every task given to the pool is counted (src/base/pool.c): the appends' fsyncs ran, so
    # runs were observed, each after its wait; once idle, nothing is queued or running.
    def pool_idle():
        s = parse(scrape(b.metrics_port))
        return (value(s, "tally_threadpool_queue_depth") == 0 and
                value(s, "tally_threadpool_tasks_running") == 0 and s)
    s = clu.wait_for(pool_idle, 10, "the thread pool idle")
    assert 1 <= value(s, "tally_threadpool_run_seconds_count") <= \
        value(s, "tally_threadpool_wait_seconds_count")
    # One connection of the test's open: counted on its listener, then gone. A Fetch parked
    # on it sits in the broker's purgatory until a produce answers it.
    base = value(parse(scrape(b.metrics_port)), "tally_connections", listener="PLAINTEXT")
    with b.conn() as c, b.conn() as c2:
        s = parse(scrape(b.metrics_port))
        assert value(s, "tally_connections", listener="PLAINTEXT") == base + 2
        assert value(s, "tally_purgatory_size", purgatory="broker") == 0
        c.send(kp.fetch_request(c.next_corr(), {"metrics-err": {0: 1}}, max_wait_ms=20000))
        clu.wait_for(lambda: value(parse(scrape(b.metrics_port)), "tally_purgatory_size",
                                   purgatory="broker") == 1, 10, "the Fetch parked")
        c2.produce({"metrics-err": {0: kp.record_batch([(None, b"wake")])}}, version=3)
        c.recv_response()
        assert value(parse(scrape(b.metrics_port)), "tally_purgatory_size",
                     purgatory="broker") == 0
    clu.wait_for(lambda: value(parse(scrape(b.metrics_port)), "tally_connections",
                               listener="PLAINTEXT") == base, 10, "the connections closed")
    parts = sum(value(s, "tally_request_%s_seconds_sum" % k, api="Fetch")
                for k in ("queue", "remote", "response_queue", "response_send"))
    assert value(s, "tally_request_total_seconds_sum", api="Fetch") >= parts - 1e-9
    assert value(s, "tally_requests_total", api="ApiVersions") >= 1
    assert value(s, "tally_request_errors_total", api="Produce",
                 error="UNKNOWN_TOPIC_OR_PARTITION") == 2


def listening_ports(pid):
    """The TCP ports process `pid` listens on (its socket inodes in /proc/net/tcp{,6})."""
    inodes = set()
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            t = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            continue
        if t.startswith("socket:["):
            inodes.add(t[8:-1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            next(f)
            for line in f:
                cols = line.split()
                if cols[3] == "0A" and cols[9] in inodes:  # LISTEN
                    ports.add(int(cols[1].rsplit(":", 1)[1], 16))
    return ports


def test_metrics_listener_unset_opens_no_port(broker_factory):
    off = broker_factory()
    assert listening_ports(off.proc.pid) == {off.port, off.controller_port}
    assert "metrics on" not in off.stderr_all()
    # The same check sees the metrics port when it is set.
    on = metrics_broker(broker_factory)
    assert listening_ports(on.proc.pid) == {on.port, on.controller_port, on.metrics_port}


def test_metrics_partition_level_off(broker_factory):
    b = metrics_broker(broker_factory, **{"metrics.partition.level": "false"})
    harness.create_topics(b, [("metrics-lvl", 2, {})])
    s = parse(scrape(b.metrics_port))
    assert not [k for k in s if k[0].startswith("tally_partition_")], s
    assert value(s, "tally_metrics_partitions_omitted") == 2
    assert value(s, "tally_partitions") == 2


@pytest.fixture
def cluster3m(tmp_path):
    ports = {i: harness.free_port() for i in (1, 2, 3)}
    c = clu.Cluster(tmp_path / "cluster", 3, node_settings={
        i: {"metrics.listener": "127.0.0.1:%d" % p} for i, p in ports.items()})
    c.metrics_ports = ports
    yield from clu.serve(c)


def follower_lags(s, topic, p):
    """{follower: lag} as the leader's scrape `s` reports them for topic-p."""
    out = {}
    for (name, labels), v in s.items():
        d = dict(labels)
        if (name == "tally_partition_follower_lag_records" and d["topic"] == topic and
                d["partition"] == str(p)):
            out[int(d["follower"])] = v
    return out


def test_metrics_cluster_one_active_controller(cluster3m):
    c = cluster3m
    c.create_topic("metrics-rep", partitions=3, rf=3)

    def settled():
        ctl = c.controller()
        if ctl is None:
            return None
        got = {i: parse(scrape(p)) for i, p in c.metrics_ports.items()}
        active = [i for i, s in got.items() if value(s, "tally_active_controller") == 1]
        under = sum(value(s, "tally_under_replicated_partitions") for s in got.values())
        leaders = {value(s, "tally_metadata_quorum_leader") for s in got.values()}
        if active != [ctl] or under != 0 or leaders != {ctl}:
            return None
        # Each partition's leader knows where both followers are once they have fetched.
        for p in range(3):
            leader = c.leader("metrics-rep", p)
            if set(follower_lags(got[leader], "metrics-rep", p)) != {1, 2, 3} - {leader}:
                return None
        return got, ctl
    got, ctl = clu.wait_for(settled, 60, "one active controller, nothing under-replicated, "
                            "every follower's lag known")
    assert all(value(s, "tally_active_controller") == 0 for i, s in got.items() if i != ctl)
    assert sum(value(s, "tally_offline_partitions") for s in got.values()) == 0
    # Nothing was produced: every follower is at the leader's log end.
    for p in range(3):
        leader = c.leader("metrics-rep", p)
        assert set(follower_lags(got[leader], "metrics-rep", p).values()) == {0}
        for i in {1, 2, 3} - {leader}:
            assert follower_lags(got[i], "metrics-rep", p) == {}, "a follower reports lag"


def test_metrics_docs_list_every_series(broker_factory):
    """docs/metrics.md names every family the endpoint serves, and serves every one it names."""
    b = metrics_broker(broker_factory)
    harness.create_topics(b, [("metrics-doc", 1, {})])
    text = scrape(b.metrics_port)
    served = set(re.findall(r"^# TYPE (\S+) ", text, re.M))
    with open(os.path.join(harness.REPO, "docs", "metrics.md")) as f:
        doc = f.read()
    documented = set(re.findall(r"^\| `(tally_[a-z_]+)` \|", doc, re.M))
    assert served == documented, (sorted(served - documented), sorted(documented - served))
