#!/usr/bin/env bash
# The bench suite's smoke test (ctest bench.smoke): runs bench/run --smoke against an already built
# tree and checks the shape of what it writes. Peers that are not installed (TBB, Go, clang/libomp,
# gnuplot) must be skipped and named, never fail the run.
#
#   bench/smoke_test.sh BUILD_DIR RESULTS_DIR
# SPDX-License-Identifier: Apache-2.0
set -uo pipefail
build=${1:?usage: smoke_test.sh BUILD_DIR RESULTS_DIR}
results=${2:?usage: smoke_test.sh BUILD_DIR RESULTS_DIR}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
rm -rf "$results"
fail() {
  echo "smoke_test: $*" >&2
  exit 1
}

bash "$here/run" --smoke --build-dir="$build" --results="$results" >"$results.out" 2>&1 ||
  { cat "$results.out" >&2; fail "bench/run --smoke failed"; }

csv=$results/results.csv
[[ $(head -n 1 "$csv") == "peer,bench,n,streams,units_per_trial,median_ns,min_ns,kept,trials,max_ns" ]] ||
  fail "results.csv header"
awk -F, 'NR > 1 && (NF != 10 || $6 <= 0 || $7 <= 0 || $7 > $6 || $6 > $10 || $8 < 1 || $8 > $9) { bad = 1 }
         END { exit bad }' "$csv" || fail "results.csv has a malformed row"
for need in "weft-ult,fanout,10,1," "weft-ult,fanout,100,1," "weft-tasklet,fanout,10,1," \
            "weft-ult,chain,100,1," "weft-ult,yield,100,1," "weft-ult,yield_to,100,1," \
            "pthread,fanout,10,1," "boost-fiber,chain,10,1," "weft-ult,units,8,1," \
            "weft-ult,streams,10000,1," "weft-ult,phases,100,1,"; do
  grep -q "^$need" "$csv" || fail "results.csv lacks a $need row"
done
# With several CPUs, default placement (weft-local) has its own rows beside the dealt ones.
if (($(nproc) > 1)); then
  for need in "weft-local,fanout,10,$(nproc)," "weft-local,chain,10,$(nproc),"; do
    grep -q "^$need" "$csv" || fail "results.csv lacks a $need row"
  done
fi
[[ $(head -n 1 "$results/memory.csv") == "peer,bench,n,streams,maxrss_kb,bytes_per_unit" ]] ||
  fail "memory.csv header"
grep -q '^weft-ult,chain,100,1,[0-9][0-9]*,-\{0,1\}[0-9.][0-9.]*$' "$results/memory.csv" ||
  fail "memory.csv lacks weft's chain with bytes per unit"

json=$results/results.json
grep -q '"context": {' "$json" && grep -q '"benchmarks": \[' "$json" || fail "results.json shape"
# One key per line (nlohmann-json's indented dump): the entry's name, run name and type in order.
grep -A2 '"name": "weft-ult/fanout/10/streams:1_median",' "$json" | tr -d ' \n' |
  grep -q '"run_name":"weft-ult/fanout/10/streams:1","run_type":"aggregate"' ||
  fail "results.json lacks the median aggregate of weft's fan-out"
medians=$(grep -c '"aggregate_name": "median"' "$json")
rows=$(($(wc -l <"$csv") - 1))
((medians == rows)) || fail "results.json has $medians medians for $rows CSV rows"
if command -v python3 >/dev/null 2>&1; then
  python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$json" || fail "results.json is not JSON"
fi

# Absent peers are named, not silently missing.
for peer in tbb omp-libomp go; do
  if ! grep -q "^$peer," "$csv"; then
    grep -q "skipped: $peer all:" "$results/summary.txt" || fail "$peer neither ran nor was reported absent"
  fi
done
grep -q '^machine: ' "$results/summary.txt" || fail "summary.txt lacks the machine"

# The fork-join suite: every weft program and benchmark on 1 and 2 streams, the other peers on one,
# each result checked by the program itself (a wrong one fails the case, and a failed case fails
# this test).
fj=$results/forkjoin.csv
[[ $(head -n 1 "$fj") == "peer,bench,n,streams,spawns,median_ms,min_ms,max_ms,ns_per_spawn,spread,kept,trials,speedup,maxrss_kb,rss_above_empty_kb" ]] ||
  fail "forkjoin.csv header"
awk -F, 'NR > 1 && (NF != 15 || $5 < 1 || $7 > $6 || $6 > $8 || $10 < 1 || $14 == "") { bad = 1 }
         END { exit bad }' "$fj" || fail "forkjoin.csv has a malformed row"
if grep -q 'failed (exit' "$results/forkjoin-raw.txt"; then
  grep 'failed (exit' "$results/forkjoin-raw.txt" >&2
  fail "a fork-join case failed"
fi
streams=1
(($(nproc) > 1)) && streams="1 $(nproc)"
for b in fib,12 fib-cutoff,22 nqueens,6 uts-bin,20 uts-geo,4 qsort,20000 msort,20000; do
  for s in $streams; do
    grep -q "^weft-ult,$b,$s," "$fj" || fail "forkjoin.csv lacks weft-ult,$b,$s"
    [[ $b == msort,* ]] || grep -q "^weft-tasklet,$b,$s," "$fj" || fail "forkjoin.csv lacks weft-tasklet,$b,$s"
  done
done
grep -q '^weft-ult,fib,12,1,232,.*,[0-9][0-9]*,-\{0,1\}[0-9][0-9]*$' "$fj" ||
  fail "forkjoin.csv lacks weft-ult's fib(12) with its 232 spawns and RSS above the empty program"
# weft's task_group, where the tree has it, runs every benchmark.
if [[ -f $here/../runtime/include/weft/task_group.hpp ]]; then
  for b in fib,12 fib-cutoff,22 nqueens,6 uts-bin,20 uts-geo,4 qsort,20000 msort,20000; do
    grep -q "^weft-task_group,$b,1," "$fj" || fail "forkjoin.csv lacks weft-task_group,$b,1"
  done
fi
for peer in weft-task_group tbb omp-gomp omp-libomp go; do
  if ! grep -q "^$peer," "$fj"; then
    grep -q "skipped: $peer all:" "$results/summary.txt" || fail "$peer neither ran fork-join nor was reported absent"
  fi
done
grep -q '^Ratios weft-ult / peer' "$results/summary.txt" || fail "summary.txt lacks the fork-join ratios"
echo "smoke_test: ok ($rows cases; $(grep -c '^skipped' "$results/summary.txt") skip lines)"
