# SPDX-License-Identifier: Apache-2.0
"""What tallyd refuses at start-up, and what it never does to data on disk (issue 7,
defects 1, 2, 10, 13, 14). Each test starts a real broker, stops or kills it, damages
or rearranges files the way a crash or a careless operator would, restarts, and checks
the exit code, the message and that the partition data is still on disk."""
import glob
import os
import subprocess

import pytest

import harness
import kproto as kp

# Generous: a refusal takes milliseconds; the bound only tells a refusal from a hang.
REFUSE_TIMEOUT = 45.0


def produce(b, topic, partition, n, prefix=b"v"):
    batch = kp.record_batch([(None, prefix + b"%d" % i) for i in range(n)])
    with b.conn() as c:
        res = c.produce({topic: {partition: batch}}, acks=-1)
    assert res[(topic, partition)]["error"] == 0, res


def make_data(b, topics=("keep",), partitions=2, records=5):
    """Creates topics (raw CreateTopics) and writes records to every partition."""
    with b.conn() as c:
        res = c.create_topics([(t, partitions, 1, None) for t in topics])
    assert all(e == 0 for e, _m in res.values()), res
    harness.wait_leaders(b, list(topics))
    for t in topics:
        for p in range(partitions):
            produce(b, t, p, records)


def snapshot_data(b):
    """{partition dir name: {file: size}} of the .log files under the data dir."""
    out = {}
    for d in sorted(os.listdir(b.data_dir)):
        full = os.path.join(b.data_dir, d)
        if os.path.isdir(full) and not d.startswith("__cluster_metadata"):
            out[d] = {f: os.path.getsize(os.path.join(full, f))
                      for f in os.listdir(full) if f.endswith(".log")}
    return out


def meta_dir(b):
    return os.path.join(b.data_dir, "__cluster_metadata-0")


def start_refused(b, timeout=REFUSE_TIMEOUT):
    """Starts b expecting a refusal: returns (exit code, log text of this start)."""
    b.start(wait=False)
    try:
        rc = b.proc.wait(timeout)
    except subprocess.TimeoutExpired:
        b.kill()
        raise AssertionError("tallyd neither started nor refused within %ds (hang):\n%s" %
                             (timeout, b.stderr_tail()))
    with open(b.log_paths[-1], errors="replace") as f:
        text = f.read()
    b.check_sanitizers()
    return rc, text


def last_log(b):
    with open(b.log_paths[-1], errors="replace") as f:
        return f.read()


# ------------------------------------------------------------------ defect 2

def test_missing_metadata_dir_is_refused_and_partitions_kept(broker_factory):
    b = broker_factory()
    make_data(b)
    before = snapshot_data(b)
    b.stop()
    subprocess.run(["rm", "-rf", meta_dir(b)], check=True)
    rc, text = start_refused(b)
    assert rc == 1, text
    assert "refusing to start" in text and "metadata" in text, text
    assert "deleting" not in text, text
    assert snapshot_data(b) == before
    assert not os.path.exists(meta_dir(b)), "a new metadata log was bootstrapped"


def test_empty_closed_metadata_segments_after_clean_stop_are_refused(broker_factory):
    b = broker_factory()
    make_data(b)
    before = snapshot_data(b)
    b.stop()
    closed = [f for f in glob.glob(os.path.join(meta_dir(b), "*-*"))
              if os.path.basename(f)[0].isdigit()]
    assert closed, os.listdir(meta_dir(b))
    for f in closed:
        open(f, "w").close()
    rc, text = start_refused(b)
    assert rc == 1, text
    assert "refusing to start" in text, text
    assert snapshot_data(b) == before


def _flip(path, at):
    with open(path, "r+b") as f:
        f.seek(at)
        data = f.read(8)
        f.seek(at)
        f.write(bytes(x ^ 0xFF for x in data))


DAMAGE = {
    # the entries after the bootstrap configuration live in the open segment
    "flipped_open_segment": lambda d: _flip(os.path.join(d, "open-1"), 100),
    "deleted_open_segment": lambda d: os.unlink(os.path.join(d, "open-1")),
    # the closed segment holds the bootstrap configuration
    "flipped_closed_segment": lambda d: [_flip(f, 40) for f in
                                         glob.glob(os.path.join(d, "0*-0*"))],
    "deleted_closed_segment": lambda d: [os.unlink(f) for f in
                                         glob.glob(os.path.join(d, "0*-0*"))],
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_damaged_metadata_log_after_kill_is_refused_not_a_hang(broker_factory, damage):
    b = broker_factory()
    make_data(b, topics=("keep", "also"))
    before = snapshot_data(b)
    b.kill()
    names = os.listdir(meta_dir(b))
    assert "open-1" in names and any(n[0].isdigit() for n in names), names
    DAMAGE[damage](meta_dir(b))
    rc, text = start_refused(b)
    assert rc == 1, text
    assert "refusing to start" in text, text
    assert "deleting" not in text, text
    assert snapshot_data(b) == before


def test_missing_meta_properties_is_refused_without_a_new_cluster_id(broker_factory):
    b = broker_factory()
    make_data(b)
    before = snapshot_data(b)
    b.stop()
    os.unlink(os.path.join(b.data_dir, "meta.properties"))
    rc, text = start_refused(b)
    assert rc == 1, text
    assert "meta.properties is missing" in text and "refusing to start" in text, text
    assert not os.path.exists(os.path.join(b.data_dir, "meta.properties"))
    assert snapshot_data(b) == before


def test_partition_dirs_unknown_to_the_metadata_are_moved_aside_not_deleted(broker_factory):
    b = broker_factory()
    make_data(b)
    b.stop()
    ghost = os.path.join(b.data_dir, "ghost-0")
    subprocess.run(["cp", "-a", harness.partition_dir(b, "keep", 0), ghost], check=True)
    size = os.path.getsize(harness.segment_files(b, "keep", 0)[0])
    b.start()
    assert not os.path.exists(ghost)
    aside = glob.glob(ghost + ".*-stray")
    assert len(aside) == 1, os.listdir(b.data_dir)
    assert os.path.getsize(os.path.join(aside[0], "00000000000000000000.log")) == size
    assert "moved it aside" in last_log(b)


# ------------------------------------------------------------------ defect 1

def test_metadata_dir_that_looks_like_a_partition_dir_is_never_deleted(broker_factory, tmp_path):
    # metadata.log.dir inside the log dir, named like a partition directory "meta-0"
    b = broker_factory(start=False)
    b.settings["metadata.log.dir"] = os.path.join(b.data_dir, "meta-0")
    b.start()
    make_data(b)
    b.stop()
    b.start()
    assert os.path.isdir(os.path.join(b.data_dir, "meta-0", "__cluster_metadata-0"))
    text = b.stderr_all()
    assert "meta-0: its topic" not in text and "cannot delete" not in text, text
    assert "meta-0" not in "".join(l for l in text.splitlines() if "moved it aside" in l)
    with b.conn() as c:
        md = c.metadata(["keep"], version=1)
    assert md["topics"]["keep"][0] == 0, md


# ------------------------------------------------------------------ defect 10

def test_partition_metadata_of_another_topic_id_is_moved_aside(broker_factory):
    b = broker_factory()
    make_data(b)
    b.stop()
    d = harness.partition_dir(b, "keep", 1)
    size = os.path.getsize(harness.segment_files(b, "keep", 1)[0])
    with open(os.path.join(d, "partition.metadata"), "w") as f:
        f.write("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA\n")
    b.start()
    text = last_log(b)
    aside = glob.glob(d + ".*-mismatch")
    assert len(aside) == 1, os.listdir(b.data_dir)
    assert os.path.getsize(os.path.join(aside[0], "00000000000000000000.log")) == size
    assert "ERROR" in text and "another topic id" in text, text
    # the other partition is untouched and served
    assert harness.offsets(b, "keep", [0]) == {0: 5}


def test_log_start_checkpoint_past_the_log_end_is_clamped_with_a_warning(broker_factory):
    b = broker_factory()
    make_data(b, partitions=1)
    b.stop()
    path = os.path.join(b.data_dir, "log-start-offset-checkpoint")
    lines = open(path).read().splitlines()
    lines = lines[:2] + ["keep 0 1000000"]
    open(path, "w").write("\n".join(lines) + "\n")
    b.start()
    text = last_log(b)
    assert "WARN" in text and "past the log end" in text and "1000000" in text, text


def test_oversized_cluster_id_in_meta_properties_gives_a_clear_error(broker_factory):
    b = broker_factory()
    b.stop()
    path = os.path.join(b.data_dir, "meta.properties")
    with open(path, "w") as f:
        f.write("version=1\nnode.id=1\ncluster.id=" + "a" * 10240 + "\n")
    rc, text = start_refused(b)
    assert rc == 1, text
    assert "File exists" not in text, text
    assert "meta.properties is damaged" in text, text


def test_oversized_configured_cluster_id_gives_a_clear_error(broker_factory):
    b = broker_factory(start=False, settings={"cluster.id": "a" * 1024})
    rc, text = start_refused(b)
    assert rc == 2, text
    assert "cluster.id must be" in text and "1024 bytes" in text, text


def test_node_id_beyond_int32_in_meta_properties_is_named(broker_factory):
    b = broker_factory()
    b.stop()
    path = os.path.join(b.data_dir, "meta.properties")
    text = open(path).read().replace("node.id=1", "node.id=99999999999999999999")
    open(path, "w").write(text)
    rc, text = start_refused(b)
    assert rc == 1, text
    assert "99999999999999999999" in text and "node.id -1" not in text, text


def test_node_id_beyond_int32_on_the_command_line_is_named(broker_factory):
    b = broker_factory(start=False, node_id=4294967296)
    rc, text = start_refused(b)
    assert rc == 2, text
    assert "4294967296" in text and "node.id -1" not in text, text


def test_unknown_startup_keys_warn_once_each_and_start(broker_factory):
    b = broker_factory(settings={"no.such.setting": "1", "log.retention.hourz": "2"})
    text = last_log(b)
    for key in ("no.such.setting", "log.retention.hourz"):
        assert text.count("'%s'" % key) == 1, text
    assert "WARN" in text
    assert "'log.dirs'" not in text and "'node.id'" not in text, text


# ------------------------------------------------------------------ defect 13

def test_metadata_log_on_a_nearly_full_file_system_is_refused(broker_factory, small_fs):
    b = broker_factory(start=False, settings={"metadata.log.dir": str(small_fs / "meta")})
    rc, text = start_refused(b)
    assert rc == 1, text
    assert "free" in text and "refusing to start" in text, text


# ------------------------------------------------------------------ defect 14

def test_second_broker_on_the_same_data_dir_is_refused(broker_factory):
    a = broker_factory()
    make_data(a)
    b = broker_factory(start=False, workdir=a.workdir + "-second")
    b.data_dir = a.data_dir
    rc, text = start_refused(b)
    assert rc == 1, text
    assert "in use by another process" in text and a.data_dir in text, text
    assert harness.offsets(a, "keep", [0, 1]) == {0: 5, 1: 5}


def test_second_broker_with_a_separate_metadata_dir_in_use_is_refused(broker_factory, tmp_path):
    mdir = str(tmp_path / "shared-meta")
    a = broker_factory(settings={"metadata.log.dir": mdir})
    b = broker_factory(start=False, settings={"metadata.log.dir": mdir})
    rc, text = start_refused(b)
    assert rc == 1, text
    assert "in use by another process" in text and mdir in text, text
    assert a.alive()


def test_same_ports_say_address_in_use(broker_factory):
    a = broker_factory()
    b = broker_factory(start=False)
    b.port, b.controller_port = a.port, a.controller_port
    rc, text = start_refused(b)
    assert rc == 1, text
    assert "already in use" in text and str(a.controller_port) in text, text
    assert "I/O error ()" not in text, text


def test_kill_before_the_first_checkpoint_says_unclean_shutdown(broker_factory):
    b = broker_factory()
    make_data(b)
    b.kill()
    b.start()
    text = last_log(b)
    assert "after an unclean shutdown" in text, text
    assert "first start" not in text, text

