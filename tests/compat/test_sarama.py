# SPDX-License-Identifier: Apache-2.0
"""Go's Sarama 1.22 (Debian's golang-github-shopify-sarama-dev) against tallyd: the old
protocol versions a real old client sends. With Config.Version = 0.10.2.0 it creates the
topic with CreateTopics v0 and produces with Produce v2 (magic 1 message sets, plain and
gzip wrappers), then consumes with ListOffsets v1 and Fetch v3; in Sarama's default
setting (0.8.2) it produces with Produce v0 (magic 0) onto an auto-created topic and reads
with ListOffsets v0 and Fetch v0. The program is sarama/main.go, built here in GOPATH mode
against the Debian package (no network) by gobuild.py, whose build cache the other Go
programs share. Skipped when Go or Sarama is missing (make deps installs both), except
under CI=true, where that is a failure."""
import os
import subprocess
import uuid

import pytest

import gobuild

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope="module")
def sarama_check(tmp_path_factory):
    why = gobuild.missing()
    if why:
        if os.environ.get("CI") == "true":
            pytest.fail("under CI=true the Sarama test must run: " + why)
        pytest.skip(why + "; `make deps` installs it")
    out = tmp_path_factory.mktemp("sarama")
    return gobuild.build(os.path.join(HERE, "sarama", "main.go"), str(out / "sarama-check"),
                         cwd=str(out))


@pytest.mark.parametrize("version,codec", [("0.10.2.0", "none"), ("0.10.2.0", "gzip"),
                                           ("0.10.2.0", "snappy"), ("default", "none"),
                                           ("default", "gzip")])
def test_sarama_produces_and_consumes(shared_broker, sarama_check, version, codec):
    topic = "sarama-%s" % uuid.uuid4().hex[:10]
    res = subprocess.run([sarama_check, shared_broker.bootstrap, topic, version, codec, "300"],
                         capture_output=True, text=True, timeout=180)
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.strip() == "OK 300"
