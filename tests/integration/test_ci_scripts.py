# SPDX-License-Identifier: Apache-2.0
"""The scripts CI runs say exactly what ran (issue 18, item 7), tried in a scratch copy of the
tree where `make`, the unit test binary and the fuzz targets are stand-ins:

- tests/run.sh counts tests only in its closing "N passed, N failed" line; the fuzz smokes
  get a line of their own, and a failed smoke still fails the run.
- .ci/run fails loudly when shared/tools/check-layers is not beside the clone, unless
  TALLY_SKIP_LAYERS=1 says to skip it, and then it says the layering was not checked."""
import os
import shutil
import stat
import subprocess

import harness

FUZZ = ["fuzz_request", "fuzz_batch", "fuzz_dispatch", "fuzz_compressed", "fuzz_tls"]


def script(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def scratch_tree(tmp_path, failing_fuzz=()):
    """A copy of tests/run.sh and .ci/run in tmp_path/repo with stand-ins: a `make` on PATH
    that logs its arguments, a unit test binary reporting 3 passes, fuzz targets (those in
    failing_fuzz exit 1) and one pytest file with two passing tests."""
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / ".ci").mkdir()
    shutil.copy(os.path.join(harness.REPO, "tests", "run.sh"), repo / "tests" / "run.sh")
    shutil.copy(os.path.join(harness.REPO, ".ci", "run"), repo / ".ci" / "run")
    bindir = tmp_path / "bin"
    script(bindir / "make", 'echo "make $*" >> "%s"\n' % (tmp_path / "make.log"))
    script(repo / "build" / "asan" / "unit_tests",
           'echo "ok a"; echo "ok b"; echo "ok c"; echo "unit: 3 passed, 0 failed"\n')
    for name in FUZZ:
        script(repo / "build" / name,
               'echo "#42 DONE"; exit %d\n' % (1 if name in failing_fuzz else 0))
    (repo / "tests" / "integration").mkdir()
    (repo / "tests" / "compat").mkdir()
    (repo / "tests" / "integration" / "test_stub.py").write_text(
        "def test_one():\n    assert 1 + 1 == 2\n\n\ndef test_two():\n    assert 'a' < 'b'\n")
    env = dict(os.environ, PATH="%s:%s" % (bindir, os.environ["PATH"]))
    env.pop("TALLY_SKIP_LAYERS", None)
    env.pop("TALLY_CHECK_LAYERS", None)
    return repo, env


def run(argv, repo, env):
    return subprocess.run(argv, cwd=str(repo), env=env, capture_output=True, text=True,
                          timeout=120)


def test_run_sh_counts_tests_only_and_reports_fuzz_smokes_apart(tmp_path):
    repo, env = scratch_tree(tmp_path)
    env["FUZZ_SMOKE_SECONDS"] = "1"
    r = run(["bash", "tests/run.sh"], repo, env)
    lines = r.stdout.strip().splitlines()
    assert r.returncode == 0, r.stdout + r.stderr
    # 3 unit tests and 2 pytest tests: the five fuzz smokes are not among them.
    assert lines[-1] == "5 passed, 0 failed", r.stdout
    assert lines[-2] == "fuzz smokes: 5 ok, none failed", r.stdout


def test_run_sh_fails_on_a_fuzz_smoke_without_counting_it_as_a_test(tmp_path):
    repo, env = scratch_tree(tmp_path, failing_fuzz=("fuzz_batch",))
    env["FUZZ_SMOKE_SECONDS"] = "1"
    r = run(["bash", "tests/run.sh"], repo, env)
    lines = r.stdout.strip().splitlines()
    assert r.returncode != 0, r.stdout
    assert lines[-1] == "5 passed, 0 failed", r.stdout
    assert lines[-2] == "fuzz smokes: 4 ok, 1 FAILED (the run fails)", r.stdout
    assert "fuzz smoke fuzz_batch: FAILED" in r.stdout


def test_ci_run_fails_when_check_layers_is_missing(tmp_path):
    repo, env = scratch_tree(tmp_path)
    r = run(["bash", ".ci/run"], repo, env)
    assert r.returncode != 0, r.stdout + r.stderr
    assert "layering check cannot run" in r.stdout, r.stdout
    # It stopped there: `make test` never ran.
    assert "make test" not in (tmp_path / "make.log").read_text()


def test_ci_run_says_when_the_layering_is_skipped_on_purpose(tmp_path):
    repo, env = scratch_tree(tmp_path)
    env["TALLY_SKIP_LAYERS"] = "1"
    r = run(["bash", ".ci/run"], repo, env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "layers: NOT CHECKED (TALLY_SKIP_LAYERS=1)" in r.stdout
    assert (tmp_path / "make.log").read_text().splitlines() == ["make deps", "make fmt-check",
                                                                  "make test"]


def test_ci_run_runs_check_layers_beside_the_clone_and_fails_on_a_finding(tmp_path):
    repo, env = scratch_tree(tmp_path)
    layers = tmp_path / "shared" / "tools" / "check-layers"
    script(layers, 'echo "layers: no upward includes found"\n')
    r = run(["bash", ".ci/run"], repo, env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "layers: no upward includes found" in r.stdout
    script(layers, 'echo "src/base/x.c includes net/net.h"; exit 1\n')
    r = run(["bash", ".ci/run"], repo, env)
    assert r.returncode != 0 and "src/base/x.c includes net/net.h" in r.stdout, r.stdout


SKIPS = r'''
import shutil
import pytest
import test_batch_validation


@pytest.mark.skipif(True, reason="strace not installed (make deps)")
def test_strace():
    pass


def test_codec(monkeypatch):
    monkeypatch.setattr("ctypes.util.find_library", lambda name: None)
    test_batch_validation._lib("zstd")


def test_other_skip():
    pytest.skip("some reason CI may skip for")
'''


def test_skips_for_what_make_deps_installs_fail_under_ci(tmp_path):
    """The report hook of tests/integration/conftest.py, on the skip reasons that the strace
    and codec tests really give (test_batch_validation's own _lib is called)."""
    d = tmp_path / "t"
    d.mkdir()
    here = os.path.join(harness.REPO, "tests", "integration")
    for f in ("conftest.py", "harness.py", "kproto.py", "test_batch_validation.py"):
        shutil.copy(os.path.join(here, f), d / f)
    (d / "test_skips.py").write_text(SKIPS)
    argv = ["/usr/bin/python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs",
            "test_skips.py"]
    env = dict(os.environ)
    env.pop("CI", None)
    r = subprocess.run(argv, cwd=str(d), env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "3 skipped" in r.stdout, r.stdout + r.stderr
    env["CI"] = "true"
    r = subprocess.run(argv, cwd=str(d), env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1, r.stdout + r.stderr
    # A skipif fails at setup (an error), a skip in the body as a failure: both fail the run.
    assert "1 failed, 1 skipped, 1 error" in r.stdout, r.stdout
    assert "must run: Skipped: strace not installed" in r.stdout, r.stdout
    assert "must run: Skipped: codec library libzstd not found" in r.stdout, r.stdout
