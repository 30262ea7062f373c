# SPDX-License-Identifier: Apache-2.0
"""Kafka's command-line tools by their names (docs/kafka-cli.md): links named kafka-topics.sh,
kafka-configs.sh, kafka-consumer-groups.sh, kafka-transactions.sh, kafka-log-dirs.sh and
kafka-reassign-partitions.sh to the tally binary, run with the commands of Kafka's own
operations documentation ("Basic Kafka Operations") against a real tallyd, their output parsed
the way scripts parse it: split on tabs or whitespace, json.loads of the JSON lines, columns
picked by header name as awk would. Data and groups come from confluent-kafka clients."""
import json
import os
import subprocess
import uuid

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

import harness

TOOLS = ["kafka-topics.sh", "kafka-configs.sh", "kafka-consumer-groups.sh",
         "kafka-transactions.sh", "kafka-log-dirs.sh", "kafka-reassign-partitions.sh"]


def unique(prefix):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:8])


@pytest.fixture(scope="module")
def kbin(tmp_path_factory):
    """A bin directory of links by Kafka's names to the tally under test, as `make kafka-bin`
    and `make install` make them."""
    if not os.path.exists(harness.TALLY):
        pytest.fail("%s not built (make build/tally, or set TALLY)" % harness.TALLY)
    d = tmp_path_factory.mktemp("kafka-bin")
    for t in TOOLS:
        os.symlink(os.path.abspath(harness.TALLY), str(d / t))
    return d


def run(kbin, tool, *args):
    return subprocess.run([str(kbin / tool)] + list(args), capture_output=True, text=True,
                          timeout=90)


def ok(r):
    assert r.returncode == 0, "rc=%d\nstdout:\n%s\nstderr:\n%s" % (r.returncode, r.stdout,
                                                                 r.stderr)
    return r.stdout


def failed(r):
    """Kafka's tools exit 1 on any failure, a bad command line included."""
    assert r.returncode == 1, "rc=%d\nstdout:\n%s\nstderr:\n%s" % (r.returncode, r.stdout,
                                                                 r.stderr)
    return r.stderr


def tab_fields(line):
    """{'Topic': 'x', 'PartitionCount': '3', ...} from one kafka-topics.sh --describe line."""
    out = {}
    for cell in line.strip("\n").split("\t"):
        if cell:
            k, _, v = cell.partition(": ")
            out[k] = v
    return out


def describe_topic(kbin, b, topic):
    out = ok(run(kbin, "kafka-topics.sh", "--bootstrap-server", b.bootstrap, "--describe",
                 "--topic", topic))
    lines = out.splitlines()
    assert not lines[0].startswith("\t") and all(ln.startswith("\t") for ln in lines[1:]), out
    return tab_fields(lines[0]), [tab_fields(ln) for ln in lines[1:]]


def column_table(out, first="GROUP"):
    """Rows of the whitespace-aligned table whose header starts with `first`, each a dict by
    header name (the way `awk '{print $N}'` picks columns)."""
    lines = out.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.split()[:1] == [first])
    head = lines[start].split()
    rows = []
    for ln in lines[start + 1:]:
        if not ln.strip():
            break
        cells = ln.split()
        assert len(cells) == len(head), "row %r under %r" % (ln, head)
        rows.append(dict(zip(head, cells)))
    return rows


def produce(b, topic, per_partition):
    """per_partition: {partition: count} records with values "p-i"."""
    p = Producer({"bootstrap.servers": b.bootstrap, "acks": "all"})
    for part, n in per_partition.items():
        for i in range(n):
            p.produce(topic, value=b"%d-%d" % (part, i), partition=part)
    assert p.flush(30) == 0


def committed(b, group, topic, partitions):
    c = Consumer({"bootstrap.servers": b.bootstrap, "group.id": group})
    try:
        got = c.committed([TopicPartition(topic, p) for p in partitions], timeout=10)
    finally:
        c.close()
    return {tp.partition: tp.offset for tp in got}


def commit(b, group, topic, offsets):
    """Commits {partition: offset} for group without joining it (as an inactive group's)."""
    c = Consumer({"bootstrap.servers": b.bootstrap, "group.id": group,
                  "enable.auto.commit": False})
    try:
        c.commit(offsets=[TopicPartition(topic, p, o) for p, o in offsets.items()],
                 asynchronous=False)
    finally:
        c.close()


# ---- kafka-topics.sh / kafka-configs.sh: adding, modifying and removing topics -------------------

def test_topics_add_modify_remove(kbin, broker):
    b, bs = broker, broker.bootstrap
    topic = unique("my_topic_name").replace("-", "_")

    # Adding and removing topics.
    out = ok(run(kbin, "kafka-topics.sh", "--bootstrap-server", bs, "--create", "--topic", topic,
                 "--partitions", "3", "--replication-factor", "1", "--config",
                 "retention.ms=86400000"))
    assert out.splitlines() == ["Created topic %s." % topic]
    harness.wait_leaders(b, [topic])
    assert topic in ok(run(kbin, "kafka-topics.sh", "--bootstrap-server", bs,
                           "--list")).splitlines()

    head, parts = describe_topic(kbin, b, topic)
    assert head["Topic"] == topic
    assert len(head["TopicId"]) == 22
    assert head["PartitionCount"] == "3" and head["ReplicationFactor"] == "1"
    assert "retention.ms=86400000" in head["Configs"].split(",")
    assert sorted(int(p["Partition"]) for p in parts) == [0, 1, 2]
    for p in parts:
        assert p["Topic"] == topic
        assert p["Leader"] == str(b.node_id)
        assert p["Replicas"] == str(b.node_id) and p["Isr"] == str(b.node_id)
        assert set(p) == {"Topic", "Partition", "Leader", "Replicas", "Isr"}

    # Creating it again fails, unless --if-not-exists.
    assert "TOPIC_ALREADY_EXISTS" in failed(run(kbin, "kafka-topics.sh", "--bootstrap-server",
                                                bs, "--create", "--topic", topic))
    assert ok(run(kbin, "kafka-topics.sh", "--bootstrap-server", bs, "--create", "--topic",
                  topic, "--if-not-exists")) == ""

    # Modifying topics: more partitions; a config added and removed (kafka-configs.sh).
    assert ok(run(kbin, "kafka-topics.sh", "--bootstrap-server", bs, "--alter", "--topic", topic,
                  "--partitions", "5")) == ""
    harness.wait_leaders(b, [topic])
    head, parts = describe_topic(kbin, b, topic)
    assert head["PartitionCount"] == "5" and len(parts) == 5

    out = ok(run(kbin, "kafka-configs.sh", "--bootstrap-server", bs, "--entity-type", "topics",
                 "--entity-name", topic, "--alter", "--add-config",
                 "max.message.bytes=128000,cleanup.policy=[compact,delete]"))
    assert out.splitlines() == ["Completed updating config for topic %s." % topic]
    out = ok(run(kbin, "kafka-configs.sh", "--bootstrap-server", bs, "--entity-type", "topics",
                 "--entity-name", topic, "--describe"))
    lines = out.splitlines()
    assert lines[0] == "Dynamic configs for topic %s are:" % topic
    got = {}
    for ln in lines[1:]:
        kv, sens, syn = ln.strip().split(" ", 2)
        assert sens == "sensitive=false" and syn.startswith("synonyms={")
        k, _, v = kv.partition("=")
        got[k] = v
    assert got == {"retention.ms": "86400000", "max.message.bytes": "128000",
                   "cleanup.policy": "compact,delete"}
    head, _ = describe_topic(kbin, b, topic)
    assert "max.message.bytes=128000" in head["Configs"].split(",")

    ok(run(kbin, "kafka-configs.sh", "--bootstrap-server", bs, "--entity-type", "topics",
           "--entity-name", topic, "--alter", "--delete-config", "max.message.bytes"))
    out = ok(run(kbin, "kafka-configs.sh", "--bootstrap-server", bs, "--topic", topic,
                 "--describe"))
    names = [ln.split()[0].partition("=")[0] for ln in out.splitlines()[1:]]
    assert sorted(names) == ["cleanup.policy", "retention.ms"]
    out = ok(run(kbin, "kafka-configs.sh", "--bootstrap-server", bs, "--topic", topic,
                 "--describe", "--all"))
    assert out.splitlines()[0] == "All configs for topic %s are:" % topic
    assert "segment.bytes" in [ln.split()[0].partition("=")[0] for ln in out.splitlines()[1:]]

    # A healthy single-broker topic has no under-replicated or unavailable partition.
    for flag in ("--under-replicated-partitions", "--unavailable-partitions"):
        assert ok(run(kbin, "kafka-topics.sh", "--bootstrap-server", bs, "--describe",
                      "--topic", topic, flag)) == ""

    # Removing it; then --if-exists makes a missing topic no error.
    assert ok(run(kbin, "kafka-topics.sh", "--bootstrap-server", bs, "--delete", "--topic",
                  topic)) == ""
    assert topic not in ok(run(kbin, "kafka-topics.sh", "--bootstrap-server", bs,
                               "--list")).splitlines()
    failed(run(kbin, "kafka-topics.sh", "--bootstrap-server", bs, "--describe", "--topic",
               topic))
    for action in ("--describe", "--delete"):
        assert ok(run(kbin, "kafka-topics.sh", "--bootstrap-server", bs, action, "--topic",
                      topic, "--if-exists")) == ""


# ---- kafka-consumer-groups.sh: checking consumer position, managing groups -----------------------

def test_consumer_position_and_groups(kbin, broker):
    b, bs = broker, broker.bootstrap
    topic, group = unique("pos"), unique("grp")
    harness.create_topics(b, [(topic, 2, None)])
    produce(b, topic, {0: 10, 1: 7})
    commit(b, group, topic, {0: 4, 1: 7})

    assert group in ok(run(kbin, "kafka-consumer-groups.sh", "--bootstrap-server", bs,
                           "--list")).splitlines()
    out = ok(run(kbin, "kafka-consumer-groups.sh", "--bootstrap-server", bs, "--describe",
                 "--group", group))
    assert "Consumer group '%s' has no active members." % group in out.splitlines()
    rows = column_table(out)
    assert [r["PARTITION"] for r in rows] == ["0", "1"]
    for r in rows:
        assert r["GROUP"] == group and r["TOPIC"] == topic
        assert int(r["LAG"]) == int(r["LOG-END-OFFSET"]) - int(r["CURRENT-OFFSET"])
        assert r["CONSUMER-ID"] == r["HOST"] == r["CLIENT-ID"] == "-"
    assert [(r["CURRENT-OFFSET"], r["LOG-END-OFFSET"], r["LAG"]) for r in rows] == [
        ("4", "10", "6"), ("7", "7", "0")]

    # --list --state: the GROUP STATE table.
    rows = column_table(ok(run(kbin, "kafka-consumer-groups.sh", "--bootstrap-server", bs,
                               "--list", "--state")))
    assert {"GROUP": group, "STATE": "Empty"} in rows

    # Resetting: a dry run changes nothing; --execute commits the plan.
    out = ok(run(kbin, "kafka-consumer-groups.sh", "--bootstrap-server", bs, "--reset-offsets",
                 "--group", group, "--topic", topic, "--to-earliest", "--dry-run"))
    assert [(r["PARTITION"], r["NEW-OFFSET"]) for r in column_table(out)] == [("0", "0"),
                                                                             ("1", "0")]
    assert committed(b, group, topic, [0, 1]) == {0: 4, 1: 7}
    ok(run(kbin, "kafka-consumer-groups.sh", "--bootstrap-server", bs, "--reset-offsets",
           "--group", group, "--topic", topic, "--to-earliest", "--execute"))
    assert committed(b, group, topic, [0, 1]) == {0: 0, 1: 0}
    ok(run(kbin, "kafka-consumer-groups.sh", "--bootstrap-server", bs, "--reset-offsets",
           "--group", group, "--topic", topic, "--shift-by", "3", "--execute"))
    assert committed(b, group, topic, [0, 1]) == {0: 3, 1: 3}
    ok(run(kbin, "kafka-consumer-groups.sh", "--bootstrap-server", bs, "--reset-offsets",
           "--group", group, "--topic", "%s:1" % topic, "--to-offset", "5", "--execute"))
    ok(run(kbin, "kafka-consumer-groups.sh", "--bootstrap-server", bs, "--reset-offsets",
           "--group", group, "--topic", "%s:0" % topic, "--to-latest", "--execute"))
    assert committed(b, group, topic, [0, 1]) == {0: 10, 1: 5}
    rows = column_table(ok(run(kbin, "kafka-consumer-groups.sh", "--bootstrap-server", bs,
                               "--describe", "--group", group)))
    assert [int(r["LAG"]) for r in rows] == [0, 2]

    # An active member: its id, host and client id in the table, and no "no active members".
    c = Consumer({"bootstrap.servers": bs, "group.id": group, "client.id": "kcli-member",
                  "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    try:
        c.subscribe([topic])
        for _ in range(300):
            c.poll(0.1)
            if len(c.assignment()) == 2:
                break
        assert len(c.assignment()) == 2
        out = ok(run(kbin, "kafka-consumer-groups.sh", "--bootstrap-server", bs, "--describe",
                     "--group", group))
        assert "has no active members" not in out
        rows = column_table(out)
        assert {r["CLIENT-ID"] for r in rows} == {"kcli-member"}
        assert all(r["CONSUMER-ID"] != "-" and r["HOST"] != "-" for r in rows)
        # Offsets of a group with members cannot be reset.
        failed(run(kbin, "kafka-consumer-groups.sh", "--bootstrap-server", bs, "--reset-offsets",
                   "--group", group, "--topic", topic, "--to-earliest", "--execute"))
    finally:
        c.close()

    out = ok(run(kbin, "kafka-consumer-groups.sh", "--bootstrap-server", bs, "--delete",
                 "--group", group))
    assert out.splitlines() == ["Deletion of requested consumer groups ('%s') was successful."
                                % group]
    assert group not in ok(run(kbin, "kafka-consumer-groups.sh", "--bootstrap-server", bs,
                               "--list")).splitlines()


# ---- kafka-log-dirs.sh ---------------------------------------------------------------------------

def test_log_dirs_describe(kbin, broker):
    b, bs = broker, broker.bootstrap
    topic, other = unique("ld"), unique("ld-other")
    harness.create_topics(b, [(topic, 2, None), (other, 1, None)])
    produce(b, topic, {0: 20, 1: 0})
    out = ok(run(kbin, "kafka-log-dirs.sh", "--bootstrap-server", bs, "--describe",
                 "--topic-list", topic))
    lines = out.splitlines()
    assert lines[0] == "Querying brokers for log directories information"
    assert lines[1] == "Received log directory information from brokers %d" % b.node_id
    doc = json.loads(lines[2])
    assert doc["version"] == 1
    assert [br["broker"] for br in doc["brokers"]] == [b.node_id]
    parts = {}
    for d in doc["brokers"][0]["logDirs"]:
        assert d["error"] is None
        for p in d["partitions"]:
            parts[p["partition"]] = p
    assert sorted(parts) == ["%s-0" % topic, "%s-1" % topic]
    assert parts["%s-0" % topic]["size"] > 0 and parts["%s-1" % topic]["size"] == 0
    assert all(p["offsetLag"] == 0 and p["isFuture"] is False for p in parts.values())

    # Without --topic-list every topic is there; an unknown broker is an error.
    doc = json.loads(ok(run(kbin, "kafka-log-dirs.sh", "--bootstrap-server", bs, "--describe",
                            "--broker-list", str(b.node_id))).splitlines()[2])
    names = {p["partition"] for d in doc["brokers"][0]["logDirs"] for p in d["partitions"]}
    assert {"%s-0" % other, "%s-0" % topic} <= names
    failed(run(kbin, "kafka-log-dirs.sh", "--bootstrap-server", bs, "--describe",
               "--broker-list", "99"))


# ---- kafka-reassign-partitions.sh ----------------------------------------------------------------

def test_reassign_generate_execute_verify(kbin, broker, tmp_path):
    b, bs = broker, broker.bootstrap
    topic = unique("ra")
    harness.create_topics(b, [(topic, 2, None)])
    move = tmp_path / "topics-to-move.json"
    move.write_text(json.dumps({"version": 1, "topics": [{"topic": topic}]}))
    out = ok(run(kbin, "kafka-reassign-partitions.sh", "--bootstrap-server", bs,
                 "--topics-to-move-json-file", str(move), "--broker-list", str(b.node_id),
                 "--generate", "--disable-rack-aware"))
    lines = out.splitlines()
    cur = json.loads(lines[lines.index("Current partition replica assignment") + 1])
    prop = json.loads(lines[lines.index("Proposed partition reassignment configuration") + 1])
    assert sorted(p["partition"] for p in cur["partitions"]) == [0, 1]
    assert all(p["topic"] == topic and p["replicas"] == [b.node_id] for p in prop["partitions"])

    plan = tmp_path / "expand-cluster-reassignment.json"
    plan.write_text(json.dumps(prop))
    out = ok(run(kbin, "kafka-reassign-partitions.sh", "--bootstrap-server", bs,
                 "--reassignment-json-file", str(plan), "--execute"))
    assert "Successfully started partition reassignment" in out
    out = ok(run(kbin, "kafka-reassign-partitions.sh", "--bootstrap-server", bs,
                 "--reassignment-json-file", str(plan), "--verify"))
    for p in (0, 1):
        assert "Reassignment of partition %s-%d is completed." % (topic, p) in out.splitlines()


# ---- kafka-transactions.sh -----------------------------------------------------------------------

def test_transactions_list_describe(kbin, broker):
    b, bs = broker, broker.bootstrap
    topic, tid = unique("tx"), unique("tid")
    harness.create_topics(b, [(topic, 1, None)])
    p = Producer({"bootstrap.servers": bs, "transactional.id": tid})
    p.init_transactions(30)
    p.begin_transaction()
    p.produce(topic, value=b"open", partition=0)
    assert p.flush(30) == 0

    rows = column_table(ok(run(kbin, "kafka-transactions.sh", "--bootstrap-server", bs,
                               "list")), first="TransactionalId")
    mine = [r for r in rows if r["TransactionalId"] == tid]
    assert len(mine) == 1 and mine[0]["TransactionState"] == "Ongoing"
    out = ok(run(kbin, "kafka-transactions.sh", "--bootstrap-server", bs, "describe",
                 "--transactional-id", tid))
    head, row = out.splitlines()[:2]
    d = dict(zip(head.split("\t"), row.split("\t")))
    assert d["TransactionalId"] == tid and d["TransactionState"] == "Ongoing"
    assert d["ProducerId"] == mine[0]["ProducerId"]
    assert d["TopicPartitions"] == "%s-0" % topic

    # No transaction hangs on the broker: find-hanging prints only its header.
    out = ok(run(kbin, "kafka-transactions.sh", "--bootstrap-server", bs, "find-hanging",
                 "--broker-id", str(b.node_id)))
    assert len(out.splitlines()) == 1 and out.split()[0] == "Topic"
    # The open transaction starts at offset 0; aborting at another offset finds nothing.
    failed(run(kbin, "kafka-transactions.sh", "--bootstrap-server", bs, "abort", "--topic",
               topic, "--partition", "0", "--start-offset", "5"))

    p.commit_transaction(30)
    out = ok(run(kbin, "kafka-transactions.sh", "--bootstrap-server", bs, "describe",
                 "--transactional-id", tid))
    head, row = out.splitlines()[:2]
    assert dict(zip(head.split("\t"), row.split("\t")))["TransactionState"] == "CompleteCommit"


# ---- refusals ------------------------------------------------------------------------------------

# Nothing listens on port 1: a refusal must come before any connection attempt.
NOWHERE = "127.0.0.1:1"


@pytest.mark.parametrize("tool,args,names", [
    ("kafka-topics.sh", ["--create", "--topic", "t", "--replica-assignment", "1:2"],
     "tally partitions reassign"),
    ("kafka-topics.sh", ["--describe", "--topics-with-overrides"], "tally topics describe"),
    ("kafka-topics.sh", ["--describe", "--topic", "logs.*"], "tally topics list"),
    ("kafka-topics.sh", ["--alter", "--topic", "t", "--config", "a=b"], "tally configs alter"),
    ("kafka-topics.sh", ["--alter", "--topic", "t"], "tally configs alter"),
    ("kafka-topics.sh", ["--list", "--no-such-option"], "tally topics --help"),
    ("kafka-configs.sh", ["--entity-type", "clients", "--entity-name", "u", "--describe"],
     "tally quotas"),
    ("kafka-configs.sh", ["--entity-type", "users", "--entity-name", "u", "--alter",
                          "--add-config", "producer_byte_rate=10"], "tally quotas set"),
    ("kafka-configs.sh", ["--entity-type", "topics", "--describe"], "tally topics list"),
    ("kafka-configs.sh", ["--topic", "t", "--alter", "--add-config-file", "f"],
     "tally configs alter"),
    ("kafka-consumer-groups.sh", ["--describe", "--all-groups"], "tally groups list"),
    ("kafka-consumer-groups.sh", ["--describe", "--group", "g", "--members"],
     "tally groups describe"),
    ("kafka-consumer-groups.sh", ["--reset-offsets", "--group", "g", "--all-topics",
                                  "--to-earliest"], "tally groups describe"),
    ("kafka-transactions.sh", ["abort", "--producer-id", "5"], "tally transactions abort"),
    ("kafka-transactions.sh", ["find-hanging", "--topic", "t"],
     "tally transactions find-hanging"),
    ("kafka-reassign-partitions.sh", ["--execute", "--reassignment-json-file", "f",
                                      "--replica-alter-log-dirs-throttle", "1"],
     "tally partitions reassign"),
    ("kafka-log-dirs.sh", ["--describe", "--bogus"], "tally log-dirs"),
])
def test_unsupported_option_refused_naming_tally(kbin, tool, args, names):
    err = failed(run(kbin, tool, "--bootstrap-server", NOWHERE, *args))
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(tool + ": "), err
    assert "cannot reach" not in err
    assert "`tally " in err or "`kafka-" in err, err
    assert names in err, err


def test_command_line_basics(kbin, tmp_path):
    # --bootstrap-server is required, as in Kafka.
    err = failed(run(kbin, "kafka-topics.sh", "--list"))
    assert "bootstrap-server" in err
    # Exactly one action.
    assert "exactly one action" in failed(run(kbin, "kafka-topics.sh", "--bootstrap-server",
                                              NOWHERE, "--list", "--describe"))
    # Options that do not go with the action.
    assert "can't be used with" in failed(run(kbin, "kafka-topics.sh", "--bootstrap-server",
                                              NOWHERE, "--list", "--partitions", "3"))
    # --command-config: a file without properties is fine, one that sets any is refused.
    empty, props = tmp_path / "empty.properties", tmp_path / "ssl.properties"
    empty.write_text("# nothing\n\n")
    props.write_text("security.protocol=SSL\n")
    err = failed(run(kbin, "kafka-topics.sh", "--bootstrap-server", NOWHERE, "--command-config",
                     str(props), "--list"))
    assert "security.protocol" in err and "`tally topics`" in err
    err = failed(run(kbin, "kafka-consumer-groups.sh", "--bootstrap-server", NOWHERE,
                     "--command-config", str(empty), "--list", "--timeout", "1000"))
    assert "cannot reach" in err
    # --help of every tool: its usage on stdout, exit 0.
    for t in TOOLS:
        out = ok(run(kbin, t, "--help"))
        assert out.startswith("usage: %s --bootstrap-server" % t)
