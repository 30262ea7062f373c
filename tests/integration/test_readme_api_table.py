# SPDX-License-Identifier: Apache-2.0
"""The README's table of served APIs is what a running broker answers to ApiVersions
(rendered by tools/api_table.py), and the APIs proto declares without serving them stay
out of that answer and cost only the connection that asks for them."""
import importlib.util
import os
import struct

import kproto

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load_api_table():
    spec = importlib.util.spec_from_file_location("api_table",
                                                  os.path.join(ROOT, "tools", "api_table.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_readme_api_table_matches_api_versions(shared_broker):
    api_table = load_api_table()
    with shared_broker.conn() as c:
        err, ranges = c.api_versions(0)
    assert err == 0
    # The generator's own client reads the same answer.
    assert api_table.api_versions(shared_broker.port) == ranges
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = api_table.readme_table(f.read())
    want = api_table.render(ranges)
    assert readme == want, ("README.md's API table differs from the broker's ApiVersions; "
                            "run tools/api_table.py --write README.md\n" + want)


# Broker-to-controller APIs: served but not advertised. Every API proto declares
# (src/proto/schema_apis.c) has a handler in src/dispatch.c since the reassignment APIs (45,
# 46) got theirs.
NOT_ADVERTISED = {56: "AlterPartition", 62: "BrokerRegistration", 63: "BrokerHeartbeat",
                  67: "AllocateProducerIds"}
SERVED_SINCE_REASSIGNMENT = {45: (0, 0), 46: (0, 0)}
# An API proto does not declare (Kafka's DescribeClientQuotas; DescribeUserScramCredentials,
# the key used before, is served since the SASL slice of issue 17).
UNDECLARED_KEY = 48


def test_internal_apis_are_not_advertised(shared_broker):
    with shared_broker.conn() as c:
        err, ranges = c.api_versions(0)
    assert err == 0
    assert not set(ranges) & set(NOT_ADVERTISED), sorted(set(ranges) & set(NOT_ADVERTISED))
    assert ranges.get(35) == (0, 4)  # DescribeLogDirs is served now
    for key, want in SERVED_SINCE_REASSIGNMENT.items():
        assert ranges.get(key) == want, key


def test_an_undeclared_api_closes_only_its_connection(shared_broker):
    """A request of an API the broker does not know is dropped with its connection, as Kafka
    does for an API it does not serve; the broker and its other connections go on."""
    with shared_broker.conn() as good:
        with shared_broker.conn() as bad:
            body = kproto.header(UNDECLARED_KEY, 0, 7) + kproto.i32(0)
            bad.send(kproto.frame(body))
            assert bad.is_closed_by_peer(timeout=10.0)
        assert good.api_versions(0)[0] == 0
    assert shared_broker.alive()
