# SPDX-License-Identifier: Apache-2.0
"""Partition roles on one node: every partition is led here, so a consumer's Fetch works as
before, and a Fetch that claims to come from a follower which is not a replica of the
partition (or from this broker itself) gets NOT_LEADER_OR_FOLLOWER. (Produce to a partition
another broker leads needs two brokers: the two-process test covers it.)"""
import struct

import harness
import kproto

NOT_LEADER_OR_FOLLOWER = 6


def fetch_as(c, topic, offset, replica_id, version=4):
    """Fetch v4 by name with the given ReplicaId (kproto always sends -1)."""
    req = bytearray(kproto.fetch_request(c.next_corr(), {topic: {0: offset}}, version=version))
    # frame length (4) + api key, version (4) + correlation id (4) + client id (2 + 6)
    at = 4 + 4 + 4 + 2 + len("kproto")
    assert struct.unpack(">i", req[at:at + 4])[0] == -1
    req[at:at + 4] = struct.pack(">i", replica_id)
    corr = struct.unpack(">i", req[8:12])[0]
    c.send(bytes(req))
    got, body = c.recv_response(False)
    assert got == corr
    return kproto.parse_fetch(body, version)


def test_fetch_replica_id_checked_against_the_replica_set(shared_broker):
    b = shared_broker
    t = "roles-fetch"
    harness.create_topics(b, [(t, 1, None)])
    with b.conn() as c:
        c.produce({t: {0: kproto.record_batch([(b"k", b"v")])}})
        # A consumer (-1) reads as before.
        f = fetch_as(c, t, 0, -1)
        d = f["partitions"][(t, 0)]
        assert d["error"] == 0 and d["hw"] == 1, f
        assert [r[3] for r in kproto.records_of(d["records"])] == [b"v"]
        # Broker 7 holds no replica; this broker does not follow itself.
        for rid in (7, b.node_id):
            f = fetch_as(c, t, 0, rid)
            d = f["partitions"][(t, 0)]
            assert d["error"] == NOT_LEADER_OR_FOLLOWER, (rid, f)
            assert not d["records"], (rid, f)
