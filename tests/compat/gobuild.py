# SPDX-License-Identifier: Apache-2.0
"""Builds the Go compat programs (Sarama) in GOPATH mode against Debian's packages (no
network), all with one Go build cache, build/gocache beside the other build outputs (build/
is not committed): the Sarama packages compile once for the whole run, not once per test
file, and a later run on the same checkout only links."""
import os
import shutil
import subprocess

GOPATH = "/usr/share/gocode"
SARAMA = os.path.join(GOPATH, "src", "github.com", "Shopify", "sarama")
GOCACHE = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                       "build", "gocache"))


def missing(*packages):
    """Why the Go programs cannot build here (None if they can): Go, Sarama and the GOPATH
    packages named (e.g. "github.com/xdg-go/scram")."""
    if shutil.which("go") is None:
        return "go not installed (golang-go)"
    if not os.path.isdir(SARAMA):
        return "Sarama not installed (golang-github-shopify-sarama-dev)"
    for p in packages:
        if not os.path.isdir(os.path.join(GOPATH, "src", p)):
            return "Go package %s not installed" % p
    return None


def start(main_go, exe, cwd):
    """Starts `go build -o exe main_go`; returns the Popen, for wait(), so that other work
    overlaps the build."""
    env = dict(os.environ, GO111MODULE="off", GOPATH=GOPATH, GOCACHE=GOCACHE,
               CGO_CFLAGS="-Wno-deprecated-declarations")
    return subprocess.Popen(["go", "build", "-o", exe, main_go], env=env, cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def wait(proc, timeout=600):
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    assert proc.returncode == 0, "go build failed (rc=%d):\n%s" % (proc.returncode, out)


def build(main_go, exe, cwd, timeout=600):
    wait(start(main_go, exe, cwd), timeout)
    return exe
