# SPDX-License-Identifier: Apache-2.0
"""The README's tour, run as a new user runs it (issue 18, items 7e and 7f): every command of
the code blocks the README marks `<!-- tour -->`, in order, on a fresh data dir, each checked
against what it prints. The commands are read from the README, never copied here, so the
tour cannot drift from the product: a command this file has no check for fails the test, and
so does a check whose command left the tour.

Two substitutions only: the broker is the test's own (its port instead of 9092, so the test
runs beside other brokers), so `127.0.0.1:9092` becomes its address and `build/tally` gets
`-b` with it. `make run` is the one command not run literally (it stays in the foreground):
`make -n` shows that it builds every program the README names, and the broker it would start
is the test's, on a fresh data dir with no other setting."""
import datetime
import os
import re
import subprocess

import harness

README = os.path.join(harness.REPO, "README.md")
TOUR_ADDR = "127.0.0.1:9092"


def tour_commands():
    """The commands of the README's tour blocks (each a fenced block right after a
    `<!-- tour -->` line), in order, as (line as written, command without its comment)."""
    lines = open(README).read().splitlines()
    out = []
    i = 0
    while i < len(lines):
        if lines[i].strip() == "<!-- tour -->":
            assert lines[i + 1].startswith("```"), "README: a tour marker not before a block"
            i += 2
            while not lines[i].startswith("```"):
                if lines[i].strip():
                    out.append((lines[i], re.sub(r"\s+#.*$", "", lines[i]).strip()))
                i += 1
        i += 1
    return out


def table(text, first):
    """The rows (as lists of fields) of a whitespace-aligned table whose header starts with
    `first`."""
    rows = [ln.split() for ln in text.splitlines()]
    starts = [k for k, r in enumerate(rows) if r and r[0] == first]
    assert starts, "no table headed %r in:\n%s" % (first, text)
    body = []
    for r in rows[starts[0] + 1:]:
        if not r:
            break
        body.append(r)
    return body


class Tour:
    """What the commands left behind, for the checks of the ones after them."""

    def __init__(self, b):
        self.b = b
        self.hw = None  # per partition of `orders`, from `topics describe`
        self.committed = None  # per partition, from `groups describe`


# ------------------------------------------------------------------ one check per command


def check_kcat_list(t, r):
    assert "1 brokers:" in r.stdout, r.stdout
    assert "broker 1 at %s (controller)" % t.b.bootstrap in r.stdout, r.stdout


def check_create(_t, r):
    assert r.stdout.strip() == "Created topic orders.", r.stdout


def check_produce_seq(_t, r):
    assert r.stdout == "", r.stdout


def check_count(_t, r):
    assert r.stdout.strip() == "100000", r.stdout


def check_topics_describe(t, r):
    assert "Topic: orders\tPartitionCount: 6\tReplicationFactor: 1" in r.stdout, r.stdout
    hw = {}
    for m in re.finditer(r"Partition: (\d+)\tLeader: 1\tLeaderEpoch: 0\tReplicas: 1\tIsr: 1\t"
                         r"Status: ok\tHW: (\d+)\tLSO: (\d+)", r.stdout):
        assert m.group(2) == m.group(3), r.stdout  # no transaction holds the LSO
        hw[int(m.group(1))] = int(m.group(2))
    assert sorted(hw) == list(range(6)) and sum(hw.values()) == 100000, r.stdout
    # Keyless records spread one by one (not one partition per batch, librdkafka's sticky
    # default): every partition has records, so the group commits each and the tour's
    # --shift-by on partitions 0 and 1 has offsets to shift.
    assert min(hw.values()) > 1000, r.stdout
    t.hw = hw


def check_configs_alter(_t, r):
    assert r.stdout.strip() == "Altered configs of topic orders.", r.stdout


def check_configs_describe(_t, r):
    assert r.stdout.startswith("Configs for topic orders:"), r.stdout
    assert "  retention.ms=86400000\tDYNAMIC_TOPIC_CONFIG\n" in r.stdout, r.stdout
    assert "  cleanup.policy=delete\tDEFAULT_CONFIG\n" in r.stdout, r.stdout


def check_cluster(t, r):
    assert re.search(r"^Cluster ID: \S{22}$", r.stdout, re.M), r.stdout
    assert re.search(r"^Controller: 1\nBrokers: 1 \(DescribeCluster v2\)\n.*\n  1\s+%s\s+-\s+"
                     r"unfenced \(controller\)$" % re.escape(t.b.bootstrap), r.stdout, re.M), r.stdout
    # The metadata quorum: one voter, its own leader.
    assert re.search(r"^  1\s+Leader\s+\d+\s+0\s", r.stdout, re.M), r.stdout


def check_perf_produce(_t, r):
    last = r.stdout.strip().splitlines()[-1]
    assert re.match(r"1000000 records sent, [\d.]+ records/sec", last), r.stdout


def check_perf_consume(_t, r):
    assert re.match(r"1000000 records received", r.stdout.strip().splitlines()[-1]), r.stdout


def check_producers(_t, r):
    rows = table(r.stdout, "Partition")
    # `bench` was created by the perf producer's Metadata: one partition, one idempotent
    # producer at epoch 0 whose last sequence is the millionth record's.
    assert len(rows) == 1, r.stdout
    part, pid, epoch, _coord_epoch, last_seq = rows[0][:5]
    assert (part, epoch, last_seq) == ("0", "0", "999999") and int(pid) >= 0, r.stdout


def check_group_member(_t, r):
    values = r.stdout.split()
    # From the beginning (auto.offset.reset=earliest): every record once.
    assert sorted(map(int, values)) == list(range(1, 100001)), "%d values" % len(values)


def check_groups_list(_t, r):
    assert table(r.stdout, "GROUP") == [["billing", "Empty"]], r.stdout


def check_groups_describe(t, r):
    assert "Group: billing\nState: Empty\n" in r.stdout and "Members: 0\n" in r.stdout, r.stdout
    rows = table(r.stdout, "GROUP")
    got = {int(row[2]): (int(row[3]), int(row[4]), int(row[5])) for row in rows}
    # The member committed what it read: every partition at its log end, no lag.
    assert got == {p: (hw, hw, 0) for p, hw in t.hw.items()}, r.stdout
    t.committed = {p: c for p, (c, _end, _lag) in got.items()}


def check_reset_to_datetime(t, r):
    when = re.search(r"--to-datetime (\S+)", r.args).group(1)
    ts = datetime.datetime.strptime(when, "%Y-%m-%dT%H:%M:%SZ").replace(
        tzinfo=datetime.timezone.utc)
    # Every record was written just now: a time before them resets to 0, one after them to
    # the log end.
    past = ts < datetime.datetime.now(datetime.timezone.utc)
    rows = table(r.stdout, "GROUP")
    got = {int(row[2]): (int(row[3]), int(row[4])) for row in rows}
    assert got == {p: (c, 0 if past else t.hw[p]) for p, c in t.committed.items()}, r.stdout
    assert "dry run, nothing changed" in r.stderr, r.stderr


def check_reset_shift(t, r):
    rows = table(r.stdout, "GROUP")
    got = {int(row[2]): (int(row[3]), int(row[4])) for row in rows}
    # The dry run before changed nothing: the shift starts from the committed offsets.
    assert got == {p: (t.committed[p], max(t.committed[p] - 100, 0)) for p in (0, 1)}, r.stdout
    assert "dry run" not in r.stderr, r.stderr


def check_delete_offsets(_t, r):
    assert table(r.stdout, "TOPIC") == [["orders", str(p), "Successful"] for p in range(6)], \
        r.stdout


def check_delete_group(t, r):
    assert r.stdout.strip() == "Deleted group billing.", r.stdout
    listed = t.b.tally("groups", "list")
    assert listed.returncode == 0 and "billing" not in listed.stdout, listed.stdout


CHECKS = {
    "kcat -L -b 127.0.0.1:9092": check_kcat_list,
    "build/tally topics create orders --partitions 6": check_create,
    "seq 1 100000 | kcat -P -b 127.0.0.1:9092 -t orders -X sticky.partitioning.linger.ms=0":
        check_produce_seq,
    "kcat -C -b 127.0.0.1:9092 -t orders -e | wc -l": check_count,
    "build/tally topics describe orders": check_topics_describe,
    "build/tally configs alter --topic orders --set retention.ms=86400000": check_configs_alter,
    "build/tally configs describe --topic orders": check_configs_describe,
    "build/tally cluster describe": check_cluster,
    "build/tally perf produce --topic bench --records 1000000 --record-size 1024 --idempotent":
        check_perf_produce,
    "build/tally perf consume --topic bench --records 1000000": check_perf_consume,
    "build/tally producers describe --topic bench": check_producers,
    "kcat -b 127.0.0.1:9092 -G billing -X auto.offset.reset=earliest orders -e":
        check_group_member,
    "build/tally groups list --state Empty,Stable": check_groups_list,
    "build/tally groups describe billing": check_groups_describe,
    "build/tally groups reset-offsets billing --topic orders --to-datetime 2026-11-30T12:00:00Z":
        check_reset_to_datetime,
    "build/tally groups reset-offsets billing --topic orders:0,1 --shift-by -100 --execute":
        check_reset_shift,
    "build/tally groups delete-offsets billing --topic orders": check_delete_offsets,
    "build/tally groups delete billing": check_delete_group,
}


def localize(cmd, b):
    """The command pointed at the test's broker and the tree's binaries."""
    cmd = cmd.replace(TOUR_ADDR, b.bootstrap)
    cmd = re.sub(r"(^|\|\s*)build/tally(?=\s)", lambda m: "%s%s -b %s" % (
        m.group(1), harness.TALLY, b.bootstrap), cmd)
    return re.sub(r"(^|\s)build/", lambda m: m.group(1) + harness.REPO + "/build/", cmd)


def check_make_run_builds_what_the_readme_uses(tmp_path):
    """`make -n` with the build dir moved to an empty one lists what `make run` would build
    from nothing: every build/ program the README names must be among them."""
    out = tmp_path / "fresh-build"
    # A make of its own: under `make test` the parent's MAKEFLAGS/MAKELEVEL would make it
    # print "Entering/Leaving directory" lines around what it lists.
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    r = subprocess.run(["make", "--no-print-directory", "-n", "B=%s" % out, "run"],
                       cwd=harness.REPO, capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    # Whole names only: build/kafka-bin/ is a directory (make kafka-bin), not a program.
    programs = sorted(set(re.findall(r"\bbuild/([a-z_][a-z_-]*)(?![a-z_/-])",
                                     open(README).read())))
    assert "tally" in programs and "tallyd" in programs, programs
    built = set(re.findall(r"-o %s/([a-z_]+)(?:\s|$)" % re.escape(str(out)), r.stdout, re.M))
    missing = [p for p in programs if p not in built]
    assert not missing, "`make run` does not build %r, which the README uses" % missing
    # ...and then starts the broker with the data in ./data.
    assert r.stdout.strip().splitlines()[-1] == "%s/tallyd --set log.dirs=./data" % out, r.stdout


def test_readme_tour_runs_as_written(broker_factory, tmp_path):
    cmds = tour_commands()
    assert cmds and cmds[0][1] == "make run", "the tour must start with `make run`: %r" % cmds[:1]
    check_make_run_builds_what_the_readme_uses(tmp_path)
    # `make run`'s broker: default settings, a data dir of its own that no one used before.
    b = broker_factory()
    t = Tour(b)
    unknown = [c for _line, c in cmds[1:] if c not in CHECKS]
    assert not unknown, "tour commands without a check here (add one): %r" % unknown
    gone = [c for c in CHECKS if c not in [c2 for _l, c2 in cmds]]
    assert not gone, "checks for commands the tour no longer has: %r" % gone
    work = tmp_path / "user"
    work.mkdir()
    for line, cmd in cmds[1:]:
        shell = localize(cmd, b)
        r = subprocess.run(["bash", "-o", "pipefail", "-c", shell], cwd=str(work),
                           capture_output=True, text=True, timeout=300)
        r.args = shell
        assert r.returncode == 0, "%s\nexit %d\n%s%s" % (line, r.returncode, r.stdout[-2000:],
                                                         r.stderr[-2000:])
        try:
            CHECKS[cmd](t, r)
        except AssertionError as e:
            raise AssertionError("README tour: %s\n%s" % (line, e)) from None
