# SPDX-License-Identifier: Apache-2.0
"""The `tally` admin CLI end to end against a real broker."""
import os
import re
import subprocess
import uuid

import pytest

import harness


def unique(prefix):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:8])


def ok(result):
    assert result.returncode == 0, "rc=%d\nstdout:\n%s\nstderr:\n%s" % (
        result.returncode, result.stdout, result.stderr)
    return result.stdout


def fails(result, rc=1):
    assert result.returncode == rc, "rc=%d (want %d)\nstdout:\n%s\nstderr:\n%s" % (
        result.returncode, rc, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, "want one line on stderr, got:\n" + result.stderr
    assert lines[0].startswith("tally: ")
    return lines[0]


def tally_raw(*args):
    return subprocess.run([harness.TALLY] + list(args), capture_output=True, text=True,
                          timeout=60)


def config_lines(out):
    """{name: (value, source)} from `configs describe` output."""
    got = {}
    for line in out.splitlines()[1:]:
        kv, _, source = line.strip().partition("\t")
        k, _, v = kv.partition("=")
        got[k] = (v, source)
    return got


@pytest.fixture(scope="module", autouse=True)
def built():
    if not os.path.exists(harness.TALLY):
        pytest.fail("%s not built (make build/tally, or set TALLY)" % harness.TALLY)


def test_topic_lifecycle(shared_broker):
    b = shared_broker
    name = unique("cli")
    out = ok(b.tally("topics", "create", name, "--partitions", "3", "--replication-factor", "1",
                     "--config", "retention.ms=1000", "--config", "cleanup.policy=compact"))
    assert name in out

    assert name in ok(b.tally("topics", "list")).splitlines()

    out = ok(b.tally("topics", "describe", name))
    head, *parts = out.strip().splitlines()
    assert re.search(r"Topic: %s\tPartitionCount: 3\tReplicationFactor: 1\tConfigs: " % name, head)
    assert "retention.ms=1000" in head and "cleanup.policy=compact" in head
    assert len(parts) == 3
    for i, line in enumerate(parts):
        assert re.search(r"Partition: %d\tLeader: 1\tLeaderEpoch: 0\tReplicas: 1\tIsr: 1\t"
                         r"Status: ok\tHW: 0\tLSO: 0$" % i, line), line

    ok(b.tally("topics", "add-partitions", name, "--partitions", "5"))
    out = ok(b.tally("topics", "describe", name))
    assert "PartitionCount: 5" in out

    line = fails(b.tally("topics", "create", name))
    assert "TOPIC_ALREADY_EXISTS" in line

    ok(b.tally("topics", "delete", name))
    assert name not in ok(b.tally("topics", "list")).splitlines()
    line = fails(b.tally("topics", "describe", name))
    assert name in line


def test_create_with_broker_defaults(shared_broker):
    name = unique("cli-default")
    ok(shared_broker.tally("topics", "create", name))
    out = ok(shared_broker.tally("topics", "describe", name))
    assert "PartitionCount: 1\tReplicationFactor: 1" in out


def test_create_errors(shared_broker):
    b = shared_broker
    assert "INVALID_REPLICATION_FACTOR" in fails(
        b.tally("topics", "create", unique("cli-rf"), "--replication-factor", "2"))
    assert "INVALID_CONFIG" in fails(
        b.tally("topics", "create", unique("cli-cfg"), "--config", "nope=1"))
    assert "TOPIC_EXCEPTION" in fails(b.tally("topics", "create", "bad name"))
    fails(b.tally("topics", "delete", unique("cli-missing")))


def test_configs_describe_and_alter_merge(shared_broker):
    b = shared_broker
    name = unique("cli-cfg")
    ok(b.tally("topics", "create", name, "--config", "retention.ms=1000"))

    cfg = config_lines(ok(b.tally("configs", "describe", "--topic", name)))
    assert cfg["retention.ms"] == ("1000", "DYNAMIC_TOPIC_CONFIG")
    assert cfg["segment.bytes"][1] != "DYNAMIC_TOPIC_CONFIG"

    # --set keeps the other dynamic configs although AlterConfigs replaces the set.
    ok(b.tally("configs", "alter", "--topic", name, "--set", "max.message.bytes=2048"))
    cfg = config_lines(ok(b.tally("configs", "describe", "--topic", name)))
    assert cfg["retention.ms"] == ("1000", "DYNAMIC_TOPIC_CONFIG")
    assert cfg["max.message.bytes"] == ("2048", "DYNAMIC_TOPIC_CONFIG")

    ok(b.tally("configs", "alter", "--topic", name, "--delete", "retention.ms",
               "--set", "max.message.bytes=4096"))
    cfg = config_lines(ok(b.tally("configs", "describe", "--topic", name)))
    assert cfg["retention.ms"][1] != "DYNAMIC_TOPIC_CONFIG"
    assert cfg["retention.ms"][0] == "604800000"
    assert cfg["max.message.bytes"] == ("4096", "DYNAMIC_TOPIC_CONFIG")

    assert "INVALID_CONFIG" in fails(
        b.tally("configs", "alter", "--topic", name, "--set", "bogus.key=1"))
    fails(b.tally("configs", "alter", "--topic", name, "--delete", "retention.ms"))
    fails(b.tally("configs", "describe", "--topic", unique("cli-nosuch")))


def test_configs_describe_broker(shared_broker):
    out = ok(shared_broker.tally("configs", "describe", "--broker", "1"))
    assert out.startswith("Configs for broker 1:")
    assert len(out.splitlines()) > 1


def test_cluster_describe(shared_broker):
    out = ok(shared_broker.tally("cluster", "describe"))
    m = re.search(r"^Cluster ID: (\S+)$", out, re.M)
    assert m and m.group(1) != "(none)", out
    assert re.search(r"^Controller: 1$", out, re.M), out
    assert re.search(r"^\s+1\s+127\.0\.0\.1:%d\s+-\s+unfenced \(controller\)$" % shared_broker.port,
                     out, re.M), out
    # One voter, the leader of its own quorum.
    assert re.search(r"^  Leader: 1\tLeaderEpoch: \d+\tHighWatermark: \d+\tMaxFollowerLag: 0$", out,
                     re.M), out
    assert re.search(r"^  1\s+Leader\s+\d+\s+0\s", out, re.M), out
    with shared_broker.conn() as c:
        assert c.metadata(version=4)["cluster_id"] == m.group(1)


def test_unreachable_broker_fails_with_one_line():
    port = harness.free_port()
    r = tally_raw("-b", "127.0.0.1:%d" % port, "--timeout", "1500", "topics", "list")
    line = fails(r)
    assert "127.0.0.1:%d" % port in line


@pytest.mark.parametrize("args", [
    [], ["bogus"], ["topics"], ["topics", "frobnicate"], ["topics", "create"],
    ["topics", "create", "x", "--partitions", "abc"], ["topics", "create", "x", "--what"],
    ["topics", "delete"], ["configs", "describe"], ["configs", "alter", "--topic", "x"],
    ["configs", "alter", "--topic", "x", "--set", "novalue"],
    ["configs", "describe", "--broker", "one"], ["cluster"], ["-b"],
    ["cluster", "new-id", "x"], ["partitions"], ["partitions", "elect-leaders"],
    ["partitions", "elect-leaders", "--all", "--topic", "t"],
    ["partitions", "elect-leaders", "--partition", "0"],
    ["partitions", "elect-leaders", "--topic", "t", "--partition", "-1"],
    ["partitions", "elect-leaders", "--preferred", "--unclean", "--all"],
    ["partitions", "reassign"], ["partitions", "reassign", "--verify"],
    ["partitions", "reassign", "--execute", "--verify", "--reassignment-json-file", "f"],
    ["partitions", "reassign", "--generate", "--broker-list", "1"],
    ["partitions", "reassign", "--execute", "--reassignment-json-file", "f", "--throttle", "-5"],
    ["partitions", "reassign", "--list", "--additional"],
    ["topics", "describe", "--under-replicated"],
])
def test_usage_errors_exit_2(args):
    r = tally_raw(*args)
    assert r.returncode == 2, (args, r.returncode, r.stdout, r.stderr)
    assert r.stderr.strip(), "no reason given for %r" % (args,)


@pytest.mark.parametrize("args", [
    ["--help"], ["-h"], ["topics", "--help"], ["topics", "create", "--help"],
    ["topics", "list", "--help"], ["topics", "describe", "--help"],
    ["topics", "delete", "--help"], ["topics", "add-partitions", "--help"],
    ["configs", "--help"], ["configs", "describe", "--help"], ["configs", "alter", "--help"],
    ["cluster", "--help"], ["cluster", "describe", "--help"], ["cluster", "new-id", "--help"],
    ["partitions", "--help"], ["partitions", "elect-leaders", "--help"],
    ["partitions", "reassign", "--help"],
])
def test_help_everywhere(args):
    r = tally_raw(*args)
    assert r.returncode == 0, (args, r.stderr)
    assert r.stdout.startswith("usage: tally"), r.stdout
