# SPDX-License-Identifier: Apache-2.0
"""Log lines a client can influence (issue 7, defects 11 and 15).

- Log injection: a client id holding a newline and escape bytes must come out as one
  line with those bytes escaped, never as a forged second line or a terminal escape.
- Log floods: a client retrying an API or version the broker does not serve, on new
  connections each time or pipelined, must write a bounded number of lines, and the
  lines held back are counted ("N similar lines suppressed").
"""
import re
import time

import kproto
from harness import TallyBroker

UNKNOWN_KEY = 1000  # no such API: what an unknown client retries for ever
WARN_INTERVAL_S = 10.0  # NET_WARN_INTERVAL_MS in src/net/net_int.h


def send_and_wait_close(b, data):
    with b.conn() as c:
        c.send(data)
        assert c.is_closed_by_peer(10.0), "the broker kept the connection open"


def unknown_api_frame(corr, client_id="kproto"):
    return kproto.frame(kproto.header(UNKNOWN_KEY, 0, corr, client_id=client_id))


def unsupported_version_frame(corr):
    # Metadata v99: a known API at a version outside the declared range.
    return kproto.frame(kproto.header(kproto.METADATA, 99, corr) + kproto.i32(-1))


def lines_with(b, needle):
    return [ln for ln in b.stderr_all().splitlines() if needle in ln]


def test_client_id_with_newline_and_escape_is_logged_as_one_escaped_line(tmp_path):
    b = TallyBroker(tmp_path).start()
    try:
        forged = "2026-01-01T00:00:00.000Z ERROR [main] forged line"
        client_id = "evil\n" + forged + "\x1b[2J\r"
        send_and_wait_close(b, unknown_api_frame(1, client_id))
        time.sleep(0.2)  # the line is written before the close; this is margin only
        text = b.stderr_all()
        assert "\x1b" not in text and "\r" not in text, "raw control bytes in the log"
        lines = [ln for ln in text.splitlines() if "forged line" in ln]
        assert len(lines) == 1, "expected one line, got:\n" + "\n".join(lines)
        line = lines[0]
        assert "unknown API key %d" % UNKNOWN_KEY in line
        assert "evil\\x0a" + forged + "\\x1b[2J\\x0d" in line, line
        assert not any(ln.startswith(forged[:24]) for ln in text.splitlines())
    finally:
        b.stop()


def suppressed_total(lines):
    return sum(int(m.group(1)) for ln in lines
               for m in [re.search(r"\((\d+) similar lines suppressed\)", ln)] if m)


def test_retrying_unsupported_api_does_not_flood_the_log(tmp_path):
    b = TallyBroker(tmp_path).start()
    try:
        t0 = time.monotonic()
        # 100 reconnecting retries of an unknown API key.
        for i in range(100):
            send_and_wait_close(b, unknown_api_frame(i + 1))
        # 50 reconnecting retries of an unsupported version.
        for i in range(50):
            send_and_wait_close(b, unsupported_version_frame(i + 1))
        # 50 pipelined on one connection: the first closes it, the rest are never read.
        send_and_wait_close(b, b"".join(unknown_api_frame(i + 1) for i in range(50)))
        took = time.monotonic() - t0

        unknown = lines_with(b, "unknown API key %d" % UNKNOWN_KEY)
        version = lines_with(b, "unsupported Metadata version 99")
        # One line per kind per interval: the first, plus one per interval that passed.
        bound = 1 + int(took // WARN_INTERVAL_S) + 1
        assert 1 <= len(unknown) <= bound, "%d lines in %.1f s" % (len(unknown), took)
        assert 1 <= len(version) <= bound, "%d lines in %.1f s" % (len(version), took)

        # After the interval the next line counts what was held back.
        time.sleep(WARN_INTERVAL_S + 0.5)
        send_and_wait_close(b, unknown_api_frame(1000))
        send_and_wait_close(b, unsupported_version_frame(1000))
        time.sleep(0.2)
        unknown = lines_with(b, "unknown API key %d" % UNKNOWN_KEY)
        version = lines_with(b, "unsupported Metadata version 99")
        assert "similar lines suppressed" in unknown[-1], unknown[-1]
        assert "similar lines suppressed" in version[-1], version[-1]
        # Every event is either a line or counted in one: 100 + 1 pipelined + 1 after.
        assert len(unknown) + suppressed_total(unknown) == 102, unknown
        assert len(version) + suppressed_total(version) == 51, version
    finally:
        b.stop()

