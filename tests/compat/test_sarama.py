# SPDX-License-Identifier: Apache-2.0
"""Go's Sarama 1.22 (Debian's golang-github-shopify-sarama-dev) against tallyd: the old
protocol versions a real old client sends. With Config.Version = 0.10.2.0 it creates the
topic with CreateTopics v0 and produces with Produce v2 (magic 1 message sets, plain and
gzip wrappers), then consumes with ListOffsets v1 and Fetch v3; in Sarama's default
setting (0.8.2) it produces with Produce v0 (magic 0) onto an auto-created topic and reads
with ListOffsets v0 and Fetch v0. The program is sarama/main.go, built here in GOPATH mode
against the Debian package (no network). Skipped when Go or Sarama is missing (make deps
installs both), except under CI=true, where that is a failure."""
import os
import shutil
import subprocess
import uuid

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
GOPATH = "/usr/share/gocode"
SARAMA = os.path.join(GOPATH, "src", "github.com", "Shopify", "sarama")


def _missing():
    if shutil.which("go") is None:
        return "go not installed (golang-go)"
    if not os.path.isdir(SARAMA):
        return "Sarama not installed (golang-github-shopify-sarama-dev)"
    return None


@pytest.fixture(scope="module")
def sarama_check(tmp_path_factory):
    why = _missing()
    if why:
        if os.environ.get("CI") == "true":
            pytest.fail("under CI=true the Sarama test must run: " + why)
        pytest.skip(why + "; `make deps` installs it")
    out = tmp_path_factory.mktemp("sarama")
    exe = str(out / "sarama-check")
    env = dict(os.environ, GO111MODULE="off", GOPATH=GOPATH, GOCACHE=str(out / "cache"),
               CGO_CFLAGS="-Wno-deprecated-declarations")
    subprocess.run(["go", "build", "-o", exe, os.path.join(HERE, "sarama", "main.go")],
                   env=env, check=True, timeout=600, cwd=str(out))
    return exe


@pytest.mark.parametrize("version,codec", [("0.10.2.0", "none"), ("0.10.2.0", "gzip"),
                                           ("0.10.2.0", "snappy"), ("default", "none"),
                                           ("default", "gzip")])
def test_sarama_produces_and_consumes(shared_broker, sarama_check, version, codec):
    topic = "sarama-%s" % uuid.uuid4().hex[:10]
    res = subprocess.run([sarama_check, shared_broker.bootstrap, topic, version, codec, "300"],
                         capture_output=True, text=True, timeout=180)
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.strip() == "OK 300"
