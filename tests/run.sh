#!/usr/bin/env bash
# Runs every test suite (unit under ASan+UBSan, a fuzz smoke, integration and compatibility
# tests against real tallyd processes) and ends with one line: "N passed, N failed", followed
# by ", N skipped" when tests were skipped. That line counts tests only: the fuzz smokes are
# not tests and are reported on a line of their own just before it ("fuzz smokes: ..."); a
# smoke that fails (or does not build) fails the run all the same. Under CI=true a test
# skipped for want of something `make deps` installs fails (tests/integration/conftest.py).
# Exits non-zero on any failure.
set -u
cd "$(dirname "$0")/.."
passed=0
failed=0
skipped=0
fuzz_ok=0
fuzz_failed=0

add() { passed=$((passed + $1)); failed=$((failed + $2)); }

echo "== unit tests (ASan + UBSan)"
build/asan/unit_tests > build/unit.log 2>&1
unit_rc=$?
grep -E '^(FAIL|    )' build/unit.log
line=$(grep -E '^unit: [0-9]+ passed, [0-9]+ failed' build/unit.log | tail -n 1)
if [ -n "$line" ]; then
  echo "$line"
  p=$(echo "$line" | sed -E 's/unit: ([0-9]+) passed.*/\1/')
  f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed/\1/')
  add "$p" "$f"
  [ "$unit_rc" -ne 0 ] && [ "$f" -eq 0 ] && add 0 1
  [ $((p + f)) -eq 0 ] && { echo "no unit test ran"; add 0 1; }
else
  tail -n 30 build/unit.log
  echo "unit tests crashed"; add 0 1
fi

# A short run of each fuzz target from its seeds: any crash fails the suite.
fuzz_smoke() { # name seconds seed-dir
  echo "== fuzz smoke: $1 ($2 s)"
  if ! make --no-print-directory -s "build/$1" >"build/$1-build.log" 2>&1; then
    tail -n 20 "build/$1-build.log"; echo "fuzz smoke $1: build FAILED"
    fuzz_failed=$((fuzz_failed + 1)); return
  fi
  mkdir -p "build/$1-corpus"
  [ -d "$3" ] && cp "$3"/* "build/$1-corpus/" 2>/dev/null
  if "build/$1" -max_total_time="$2" -rss_limit_mb=2048 "build/$1-corpus" >"build/$1.log" 2>&1; then
    echo "fuzz smoke $1: ok ($(grep -Eo '#[0-9]+' "build/$1.log" | tail -n 1) runs)"
    fuzz_ok=$((fuzz_ok + 1))
  else
    tail -n 40 "build/$1.log"; echo "fuzz smoke $1: FAILED"
    fuzz_failed=$((fuzz_failed + 1))
  fi
}
# The five targets build together first (two jobs: their objects are shared); a target that
# fails to build fails its smoke below. The smokes are short: a crash check from the seeds,
# not a fuzzing campaign (`make fuzz` is that).
make --no-print-directory -s -j2 build/fuzz_request build/fuzz_batch build/fuzz_dispatch \
  build/fuzz_compressed build/fuzz_tls >build/fuzz-build.log 2>&1
fuzz_smoke fuzz_request "${FUZZ_SMOKE_SECONDS:-8}" fuzz/seeds
fuzz_smoke fuzz_batch "${FUZZ_SMOKE_SECONDS:-4}" ""
# With the authorizer on and SASL sessions (authenticated and not): the security APIs and
# every handler's authorization checks are reached (fuzz/fuzz_dispatch.c).
TALLY_FUZZ_AUTHZ=1 fuzz_smoke fuzz_dispatch "${FUZZ_SMOKE_SECONDS:-8}" fuzz/seeds_dispatch
fuzz_smoke fuzz_compressed "${FUZZ_SMOKE_SECONDS:-4}" ""
fuzz_smoke fuzz_tls "${FUZZ_SMOKE_SECONDS:-4}" ""

echo "== integration and compatibility tests (pytest)"
export TALLYD="${TALLYD:-$PWD/build/asan/tallyd}" TALLY="${TALLY:-$PWD/build/tally}"
# A report left by an earlier run must never stand in for this one.
rm -f build/pytest.xml
# Two pytest workers (pytest-xdist), a test file never split between them (--dist loadfile:
# module fixtures stay whole). Most of the suite's time is waiting — session timeouts,
# pauses, failovers — not CPU, so two files at once nearly halve the run on two cores.
# Everything a test starts is its own: ports are picked free, data in its tmp_path, network
# namespaces carry the test process's pid. PYTEST_WORKERS=1 runs them one at a time.
workers=${PYTEST_WORKERS:-2}
xdist=()
[ "$workers" -gt 1 ] && xdist=(-n "$workers" --dist loadfile)
# npm packages the JavaScript compat tests use, installed once before the workers start
# (two tests installing into one node_modules at once would trample each other).
for d in tests/compat/kafkajs; do
  if [ -f "$d/package.json" ] && [ ! -d "$d/node_modules" ] && command -v npm >/dev/null; then
    (cd "$d" && npm install --no-audit --no-fund >/dev/null 2>&1) || echo "npm install in $d failed"
  fi
done
/usr/bin/python3 -m pytest -q -p no:cacheprovider "${xdist[@]}" --durations=60 \
  --junitxml=build/pytest.xml tests/integration tests/compat > build/pytest.log 2>&1
pytest_rc=$?
tail -n 40 build/pytest.log
if [ -f build/pytest.xml ]; then
  # Every failing test by name, with the first lines of its message (the whole output is in
  # build/pytest.log): a failure must say what failed even when the tail is someone's logs.
  /usr/bin/python3 - <<'PY'
import xml.etree.ElementTree as ET
r = ET.parse("build/pytest.xml").getroot()
for tc in r.iter("testcase"):
    for f in tc:
        if f.tag in ("failure", "error"):
            msg = (f.get("message") or "").strip().splitlines()
            print("FAILED %s::%s" % (tc.get("classname"), tc.get("name")))
            for line in msg[:6]:
                print("    " + line[:200])
PY
  read -r t f e s < <(/usr/bin/python3 - <<'PY'
import xml.etree.ElementTree as ET
r = ET.parse("build/pytest.xml").getroot()
ts = r if r.tag == "testsuite" else r.find("testsuite")
print(ts.get("tests"), ts.get("failures"), ts.get("errors"), ts.get("skipped"))
PY
)
  add $((t - f - e - s)) $((f + e))
  skipped=$((skipped + s))
  # Exit status 0: all passed, 1: some failed (counted above); anything else (interrupted,
  # internal error, usage error, nothing collected) fails the run whatever the report says.
  problem=""
  if [ "$pytest_rc" -eq 1 ] && [ $((f + e)) -eq 0 ]; then
    problem="pytest exited with 1 but reported no failure"
  elif [ "$pytest_rc" -ne 0 ] && [ "$pytest_rc" -ne 1 ]; then
    problem="pytest exited with $pytest_rc (interrupted, crashed or collected nothing)"
  elif [ "$t" -eq 0 ]; then
    problem="pytest collected no test"
  fi
  [ -n "$problem" ] && { echo "$problem"; add 0 1; }
else
  echo "pytest produced no report (exit status $pytest_rc)"; add 0 1
fi
rm -f build/pytest.xml

# The fuzz smokes are not tests: their own line, never in the count below.
if [ "$fuzz_failed" -gt 0 ]; then
  echo "fuzz smokes: $fuzz_ok ok, $fuzz_failed FAILED (the run fails)"
else
  echo "fuzz smokes: $fuzz_ok ok, none failed"
fi
if [ "$skipped" -gt 0 ]; then
  echo "$passed passed, $failed failed, $skipped skipped"
else
  echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ] && [ "$fuzz_failed" -eq 0 ]
