# SPDX-License-Identifier: Apache-2.0
"""The test-only fault hooks (src/base/fault.h: TALLY_TEST_FAULT, the txn:* and cleaner:*
points) are compiled into the test build only. The release tallyd (build/tallyd, `make`)
holds neither the variable's name nor a point's name nor the hook functions, so no
environment variable can make a production broker drop coordinator state or die at a
chosen step; the ASan tallyd the tests run holds all of them (else the fault tests above
would pass for the wrong reason or not run)."""
import os

import harness

RELEASE = os.environ.get("TALLYD_RELEASE", os.path.join(harness.REPO, "build", "tallyd"))

# What a hook leaves in a binary: the variable, the points' names, the functions' symbols.
HOOK_STRINGS = [b"TALLY_TEST_FAULT", b"txn:lose_entry", b"txn:after_prepare",
                b"txn:before_complete", b"cleaner:%s", b"log:lose_unflushed_tail", b"log:slow_fsync",
                b"fault_point", b"fault_armed",
                b"fault_stop", b"TALLY_TEST_HANGING_MARGIN_MS", b"TALLY_TEST_LATE_MARKERS_MS"]


def read(path):
    assert os.path.exists(path), "%s not built (make %s)" % (path, os.path.relpath(
        path, harness.REPO))
    with open(path, "rb") as f:
        return f.read()


def test_release_tallyd_has_no_fault_hooks():
    data = read(RELEASE)
    found = [s.decode() for s in HOOK_STRINGS if s in data]
    assert found == [], "release binary %s contains %s" % (RELEASE, found)


def test_test_tallyd_has_the_fault_hooks():
    data = read(harness.TALLYD)
    missing = [s.decode() for s in HOOK_STRINGS if s not in data]
    assert missing == [], "test binary %s lacks %s" % (harness.TALLYD, missing)
