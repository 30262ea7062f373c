#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the benchmarks (all, or those named: ingest read client_view memory idempotent flush
# compressed recompress compaction groups txn txn_counts downconvert verify election timers cluster
# failover idle cold_read; startup and catchup only when named)
# and prints a summary of their RESULT lines. Expects `make bench`'s binaries in
# build/ and build/bench/. Exit 1 if a benchmark crashed (a target not met is reported,
# not an error: machines are shared and noisy).
set -u
cd "$(dirname "$0")/.."
all=(ingest read client_view memory idempotent flush compressed recompress compaction groups txn acls)
all+=(tls) # TLS ingest and read CPU per GiB ÷ a bare OpenSSL server (bench/tls.py)
all+=(scram) # SCRAM-SHA-512 connections per second (bench/scram.py)
all+=(quotas) # an unthrottled client's p99 beside a throttled flood (bench/quotas.py)
all+=(cold_read) # a producer's p99 during a cold catch-up read (bench/cold_read.py)
all+=(txn_counts) # requests and CONCURRENT_TRANSACTIONS per transaction, by client and size
all+=(downconvert verify) # old-version fetches (bench/downconvert.py); tally verify (bench/verify.py)
all+=(election) # how long a metadata-quorum election holds the event loop (bench/election.py)
all+=(timers) # long-poll waits, idle closes, liveness under lookups (bench/timers.py)
all+=(metrics_overhead) # producer records/s with /metrics scraped every second ÷ without (bench/metrics_overhead.py)
all+=(scrape) # one /metrics scrape of 10,000 partitions: loop hold, CPU, response (bench/scrape.py)
all+=(cluster failover idle) # 3-node cluster: replication CPU and acks=all latency, failover,
                             # idle CPU (bench/cluster.py, failover.py, idle.py); catchup.py
                             # (a follower 5 minutes behind, about 15 min) only when named
names=("$@")
[ ${#names[@]} -eq 0 ] && names=("${all[@]}")

for b in build/tallyd build/tally build/bench/loadgen build/bench/baseline_server \
         build/bench/sendfile_server build/bench/mock_cluster build/bench/latency build/bench/tls_server \
         build/enricher; do
  [ -x "$b" ] || { echo "bench: $b missing (run make bench)" >&2; exit 1; }
done

export BENCH_RESULTS
BENCH_RESULTS=$(mktemp)
trap 'rm -f "$BENCH_RESULTS"' EXIT
failed=0
for n in "${names[@]}"; do
  echo "== $n"
  start=$SECONDS
  if ! /usr/bin/python3 "bench/$n.py"; then
    echo "RESULT $n crashed" >>"$BENCH_RESULTS"
    failed=1
  fi
  echo "   ($((SECONDS - start)) s)"
done
echo
echo "== summary ($(nproc) CPUs, $(date -u +%Y-%m-%dT%H:%MZ))"
cat "$BENCH_RESULTS"
exit $failed
