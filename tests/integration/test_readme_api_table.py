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


# Declared in proto (src/proto/schema_apis.c) but without a handler in src/dispatch.c, or
# broker-to-controller APIs served but not advertised.
NOT_SERVED = {45: "AlterPartitionReassignments", 46: "ListPartitionReassignments"}
NOT_ADVERTISED = {**NOT_SERVED, 56: "AlterPartition", 62: "BrokerRegistration",
                  63: "BrokerHeartbeat", 67: "AllocateProducerIds"}


def test_declared_but_unserved_apis_are_not_advertised(shared_broker):
    with shared_broker.conn() as c:
        err, ranges = c.api_versions(0)
    assert err == 0
    assert not set(ranges) & set(NOT_ADVERTISED), sorted(set(ranges) & set(NOT_ADVERTISED))
    assert ranges.get(35) == (0, 4)  # DescribeLogDirs is served now


def test_declared_but_unserved_apis_close_only_their_connection(shared_broker):
    """A well-formed request (the fuzz seed corpus: one per declared API and version) of an
    API without a handler is dropped with its connection, as Kafka does for an API it does not
    serve; the broker and its other connections go on."""
    seeds = os.path.join(ROOT, "fuzz", "seeds")
    sent = 0
    with shared_broker.conn() as good:
        for name in sorted(os.listdir(seeds)):
            api = name.rsplit("-v", 1)[0]
            if api not in NOT_SERVED.values():
                continue
            with open(os.path.join(seeds, name), "rb") as f:
                frame = f.read()  # header + body, without the size
            key = struct.unpack(">h", frame[:2])[0]
            assert NOT_SERVED.get(key) == api, name
            with shared_broker.conn() as bad:
                bad.send(struct.pack(">i", len(frame)) + frame)
                assert bad.is_closed_by_peer(timeout=10.0), name
            assert good.api_versions(0)[0] == 0
            sent += 1
    # Lowest and highest version of each (one seed where they are the same).
    assert sent >= len(NOT_SERVED)
    assert shared_broker.alive()
    assert "is not served" in shared_broker.stderr_all()
