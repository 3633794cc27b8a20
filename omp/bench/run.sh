#!/usr/bin/env bash
# Runs libweft-omp against its peers, every OpenMP program unmodified and built once by GCC (the
# LLVM libomp runs use the same sources built by clang-14):
#  1. micro.c: fork/join of an empty region of 2, an empty barrier, fib(N) with omp task, a
#     doacross chain (a hand-off between 2 threads per iteration), a dependence chain, a blocked
#     wavefront of tasks, a task reduction over 10^6 tasks and a 2-D doacross wavefront
#     (deps_alternated.sh runs the last four alternated);
#  2. the 003 nested benchmark (loops/bench/nested_omp.cpp): flat (inner team of 1) and
#     36 outer x inner 1..36, on libgomp, libomp, libweft-omp with inner ULTs and with inner
#     tasklets (WEFT_OMP_INNER=tasklet), next to weft::loops' own nested version;
#  3. the 002 kernels (loops kernels_bench omp) on libgomp and libweft-omp, and weft::loops.
# Every peer runs with its defaults; libgomp and libweft-omp also with OMP_WAIT_POLICY=active
# and =passive, reported as separate rows. Output: $OUT (default omp/bench/results) micro.txt,
# nested.txt, kernels.txt, and summary.txt (ratios within this run).
# Environment: BUILD (default build-omp-bench), FIB (default 30), SWEEP (inner sizes, default
# 1,2,4,8,16,36), WEFT_LOOPS_TRIALS (kernel trials, default 20), WEFT_LOOPS_BUDGET_MS (time per
# nested point, default 300).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${BUILD:-$root/build-omp-bench}
out=${OUT:-$here/results}
fibn=${FIB:-30}
sweep=${SWEEP:-1,2,4,8,16,36}
export WEFT_LOOPS_TRIALS=${WEFT_LOOPS_TRIALS:-20}
mkdir -p "$out"

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j2 --target weft_omp weft_omp_dropin weft_omp_micro weft_loops_nested \
  weft_loops_nested_gomp weft_loops_kernels_bench >/dev/null
bin=$build/omp/bench
loops=$build/loops
dropin=$build/omp/dropin
libomp=/usr/lib/llvm-14/lib
clang-14 -O2 -fopenmp=libomp -L"$libomp" -Wl,-rpath,"$libomp" -o "$bin/weft_omp_micro_iomp" \
  "$here/micro.c"
clang++-14 -std=c++20 -O2 -fopenmp=libomp -L"$libomp" -Wl,-rpath,"$libomp" \
  -I"$root/loops/bench" -o "$loops/weft_loops_nested_iomp" \
  "$root/loops/bench/nested_omp.cpp" "$root/loops/bench/kernels_common.cpp" \
  "$root/loops/bench/bench_options.cpp"

# run LABEL ENV... -- CMD...: one row per output line, the first column replaced by LABEL.
run() {
  local label=$1
  shift
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  env "${envs[@]}" "$@" | awk -v l="$label" '{ $1 = l; print }'
}
# runp LABEL ENV... -- CMD...: the same, with LABEL put in front of each line instead.
runp() {
  local label=$1
  shift
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  env "${envs[@]}" "$@" | awk -v l="$label" '{ print l, $0 }'
}
header() { echo "# $(date -u '+%F %T UTC') $(nproc) CPUs; load: $(cut -d' ' -f1-3 /proc/loadavg)"; }

weft=(LD_LIBRARY_PATH=$dropin)
{
  header
  echo "# runtime what median min kept (region, barrier: us; fib, chain, wavefront, taskred," \
    "doacross2: ms; doacross: ns/iteration)"
  for what in region barrier "fib $fibn" doacross chain wavefront taskred doacross2; do
    runp libgomp -- "$bin/weft_omp_micro" $what
    runp libgomp-active OMP_WAIT_POLICY=active -- "$bin/weft_omp_micro" $what
    runp libgomp-passive OMP_WAIT_POLICY=passive -- "$bin/weft_omp_micro" $what
    runp libomp -- "$bin/weft_omp_micro_iomp" $what
    runp weft-omp "${weft[@]}" -- "$bin/weft_omp_micro" $what
    runp weft-omp-active "${weft[@]}" OMP_WAIT_POLICY=active -- "$bin/weft_omp_micro" $what
    runp weft-omp-passive "${weft[@]}" OMP_WAIT_POLICY=passive -- "$bin/weft_omp_micro" $what
  done
} | tee "$out/micro.txt"

{
  header
  echo "# name outer inner median_us min_us kept ok"
  for rt in gomp iomp; do
    name=libgomp; [[ $rt == iomp ]] && name=libomp
    run "$name-flat" OMP_MAX_ACTIVE_LEVELS=1 -- "$loops/weft_loops_nested_$rt" 2 1
    run "$name-nested" OMP_MAX_ACTIVE_LEVELS=2 -- "$loops/weft_loops_nested_$rt" 36 "$sweep"
  done
  run weft-omp-flat "${weft[@]}" OMP_MAX_ACTIVE_LEVELS=1 -- "$loops/weft_loops_nested_gomp" 2 1
  # By default a top-level team of 36 gets 36 streams (kernel threads, as libgomp's 36 threads);
  # the ult and tasklet rows keep the streams at the CPUs (WEFT_OMP_STREAMS), so that the 36
  # members are ULTs sharing them, as weft::loops' own version runs.
  run weft-omp-default "${weft[@]}" OMP_MAX_ACTIVE_LEVELS=2 -- "$loops/weft_loops_nested_gomp" 36 "$sweep"
  run weft-omp-ult "${weft[@]}" WEFT_OMP_STREAMS="$(nproc)" OMP_MAX_ACTIVE_LEVELS=2 -- \
    "$loops/weft_loops_nested_gomp" 36 "$sweep"
  run weft-omp-tasklet "${weft[@]}" WEFT_OMP_STREAMS="$(nproc)" OMP_MAX_ACTIVE_LEVELS=2 \
    WEFT_OMP_INNER=tasklet -- "$loops/weft_loops_nested_gomp" 36 "$sweep"
  run loops-ult WEFT_NUM_STREAMS=2 -- "$loops/weft_loops_nested" ult 36 "$sweep"
  run loops-tasklet WEFT_NUM_STREAMS=2 -- "$loops/weft_loops_nested" tasklet 36 "$sweep"
} | tee "$out/nested.txt"

{
  header
  echo "# impl kernel n p median_ms min_ms kept"
  run libgomp -- "$loops/weft_loops_kernels_bench" omp 2
  run weft-omp "${weft[@]}" -- "$loops/weft_loops_kernels_bench" omp 2
  run loops WEFT_NUM_STREAMS=2 -- "$loops/weft_loops_kernels_bench" weft 2
} | tee "$out/kernels.txt"

# Ratios within this run, of medians and of minima (on a loaded machine the minima are the
# better estimate of what each runtime costs).
bash "$here/summary.sh" "$out" | tee "$out/summary.txt"

bash "$here/plot.sh" "$out" "${DOCS:-$root/docs}"
