# SPDX-License-Identifier: Apache-2.0
"""pytest fixtures: real tallyd processes (see harness.py).

  broker_factory(settings=..., node_id=..., config_file=..., start=True)
      starts a fresh broker in its own tmp dir; all are stopped (and checked for a
      clean exit and silent sanitizers) when the test ends.
  broker          one fresh broker for this test.
  shared_broker   one broker for the whole session, for tests that only add
                  uniquely named topics; checked at session end.
On a test failure the brokers' stderr is printed.

Under CI=true a test that skips because the machine lacks something the suite needs
(root, node/npm, strace, a codec library: see MUST_RUN_IN_CI) counts as a failure, so
that a CI image that lost one of them cannot pass by skipping the tests that use it.
"""
import itertools
import os
import re
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402


# Skip reasons that mean "this machine lacks what the suite needs" (the wording the
# suite's skips use today: small_fs, the KafkaJS tests, test_loop_no_fsync.py,
# test_batch_validation.py, test_metrics.py, test_console.py); under CI=true they fail instead. `make deps` installs all of them.
MUST_RUN_IN_CI = re.compile(r"needs root|node/npm not installed|strace not installed|"
                            r"codec library lib\S+ not found|prometheus not installed|"
                            r"chromium or playwright-core not installed")


def _skip_reason(rep):
    if isinstance(rep.longrepr, tuple) and len(rep.longrepr) == 3:
        return str(rep.longrepr[2])
    return str(rep.longrepr)


@pytest.hookimpl(tryfirst=True, hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if (rep.skipped and os.environ.get("CI") == "true" and not hasattr(rep, "wasxfail") and
            MUST_RUN_IN_CI.search(_skip_reason(rep))):
        rep.outcome = "failed"
        rep.longrepr = "skipped under CI=true, where it must run: " + _skip_reason(rep)
    setattr(item, "rep_" + rep.when, rep)


def _failed(node):
    return any(getattr(node, "rep_" + w, None) is not None and getattr(node, "rep_" + w).failed
               for w in ("setup", "call"))


def _shutdown(brokers, failed):
    problems = []
    for b in brokers:
        try:
            if b.alive():
                b.stop(check=True)
            else:
                b.check_sanitizers()
        except AssertionError as e:
            problems.append(str(e))
    if failed or problems:
        harness.dump_logs(brokers)
    assert not problems, "\n".join(problems)


@pytest.fixture
def small_fs(tmp_path):
    """A 6 MiB tmpfs (root only; the skip counts as a failure under CI=true)."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=6m", "tmpfs", str(mnt)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (needs root): " + r.stderr.strip())
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


@pytest.fixture
def broker_factory(tmp_path, request):
    brokers = []
    counter = itertools.count(1)

    def make(settings=None, node_id=1, config_file=None, start=True, workdir=None):
        b = harness.TallyBroker(workdir or tmp_path / ("node%d" % next(counter)),
                                node_id=node_id, settings=settings, config_file=config_file)
        brokers.append(b)
        if start:
            b.start()
        return b

    yield make
    _shutdown(brokers, _failed(request.node))


@pytest.fixture
def broker(broker_factory):
    return broker_factory()


@pytest.fixture(scope="session")
def shared_broker(tmp_path_factory, request):
    b = harness.TallyBroker(tmp_path_factory.mktemp("shared"))
    b.start()
    yield b
    _shutdown([b], request.session.testsfailed > 0)
