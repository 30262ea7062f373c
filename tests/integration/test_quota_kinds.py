"""Client quotas beyond byte rates (issue 17): request_percentage (KIP-124), the share of the
broker's request-handling time a client may use, throttles a client id flooding cheap requests
while another client id is not throttled; controller_mutation_rate (KIP-599), partitions
mutated per second, refuses the topics that do not fit with THROTTLING_QUOTA_EXCEEDED (89) in
the versions that know it (CreateTopics v6+, DeleteTopics v5+, CreatePartitions v3+), creates
nothing for them, and serves older versions (librdkafka's AdminClient speaks CreateTopics v4)
throttled instead. One broker for the module: controller.quota.window.num=1, so a rate of r
partitions/s has a burst of r (rate x 1 sample x 1 s)."""
import pytest

import harness
import kproto

THROTTLING_QUOTA_EXCEEDED = 89


@pytest.fixture(scope="module")
def b(tmp_path_factory):
    broker = harness.TallyBroker(tmp_path_factory.mktemp("quota-kinds"))
    broker.settings.update({"controller.quota.window.num": "1"})
    broker.start()
    yield broker
    broker.stop(check=True)


def set_quota(b, client_id, config):
    r = b.tally("quotas", "set", "--client-id", client_id, "--add-config", config)
    assert r.returncode == 0, r.stderr


def api_versions_throttles(c, client_id, n):
    """Sends n ApiVersions v2 at once (pipelined) as `client_id`; → their throttle_time_ms."""
    corrs = [c.next_corr() for _ in range(n)]
    c.send(b"".join(kproto.frame(kproto.header(kproto.API_VERSIONS, 2, k, client_id=client_id))
                    for k in corrs))
    out = []
    for k in corrs:
        got, body = c.recv_response()
        assert got == k
        r = kproto.Reader(body)
        assert r.i16() == 0
        r.array(lambda rr: (rr.i16(), rr.i16(), rr.i16()))
        out.append(r.i32())
    return out


def test_request_percentage_throttles_only_its_client(b):
    set_quota(b, "busy", "request_percentage=1")
    # 1 % of the loop is 10 ms per second: a few hundred ApiVersions take more than that.
    throttles = []
    with b.conn(timeout=30) as c:
        for _ in range(50):
            throttles += api_versions_throttles(c, "busy", 100)
            if throttles[-1] > 0:
                break
    assert any(t > 0 for t in throttles), "never throttled after %d requests" % len(throttles)
    # At most one sample (quota.window.size.seconds) per answer, as Kafka bounds it.
    assert max(throttles) <= 1000, max(throttles)
    # Another client id, meanwhile: never throttled.
    with b.conn() as c:
        assert api_versions_throttles(c, "calm", 200) == [0] * 200


def with_throttle(parse):
    def p(d, version):
        at = d.r.pos
        throttle = d.i32()
        d.r.pos = at
        return throttle, parse(d, version)
    return p


def create(b, topics, version):
    with b.conn() as c:
        return kproto._conn_admin(c, kproto.CREATE_TOPICS, version,
                                  kproto.create_topics_body(topics, version),
                                  with_throttle(kproto.parse_create_topics_any))


def existing(b, names):
    with b.conn() as c:
        md = c.metadata_v12(names)
    return {name for name, t in md.items() if t["error"] == 0}


def test_controller_mutation_rate_refuses_what_does_not_fit(b):
    set_quota(b, "kproto", "controller_mutation_rate=1")
    set_quota(b, "mut-admin", "controller_mutation_rate=2")

    # 5 partitions from a full bucket of 1 pass (the bucket is checked before it is taken
    # from) and leave it at -4, which takes 4 s to refill to 0; the next 5 are refused, with
    # the time until then.
    throttle, res = create(b, [("mq-a", 5, 1, None)], 6)
    assert res["mq-a"]["error"] == 0 and throttle == 0, (throttle, res)
    throttle, res = create(b, [("mq-b", 5, 1, None)], 6)
    assert res["mq-b"]["error"] == THROTTLING_QUOTA_EXCEEDED, res
    assert res["mq-b"]["message"], res
    assert 0 < throttle <= 4000, throttle

    # DeleteTopics v5 and CreatePartitions v3 are refused alike, and change nothing.
    with b.conn() as c:
        res = c.delete_topics(["mq-a"], version=5)
    assert [t["error"] for t in res] == [THROTTLING_QUOTA_EXCEEDED], res
    with b.conn() as c:
        res = c.create_partitions([("mq-a", 6)], version=3)
    assert res["mq-a"][0] == THROTTLING_QUOTA_EXCEEDED, res
    assert existing(b, ["mq-a", "mq-b"]) == {"mq-a"}
    with b.conn() as c:
        md = c.metadata_v12(["mq-a"])
    assert len(md["mq-a"]["partitions"]) == 5, md

    # CreateTopics v4 does not know the error: served, and throttled by what it owes.
    throttle, res = create(b, [("mq-c", 1, 1, None)], 4)
    assert res["mq-c"]["error"] == 0 and throttle > 0, (throttle, res)

    # librdkafka's AdminClient (CreateTopics v4) is served too: its topic is created (3
    # partitions from its own bucket of 2).
    from confluent_kafka.admin import AdminClient, NewTopic
    admin = AdminClient({"bootstrap.servers": b.bootstrap, "client.id": "mut-admin"})
    futures = admin.create_topics([NewTopic("mq-d", 3, 1)], operation_timeout=10)
    futures["mq-d"].result(timeout=30)
    # Its bucket (2 - 3) is now below 0: a second topic of its client id is still served.
    futures = admin.create_topics([NewTopic("mq-e", 1, 1)], operation_timeout=10)
    futures["mq-e"].result(timeout=30)
    assert existing(b, ["mq-c", "mq-d", "mq-e"]) == {"mq-c", "mq-d", "mq-e"}
