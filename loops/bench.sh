#!/usr/bin/env bash
# Builds and runs the loop layer's benchmarks, then plots them:
#  1. the nested-parallel benchmark of 003 (serial; libgomp and LLVM libomp flat and nested with
#     inner teams of 1..36 threads; weft with inner ULTs and inner tasklets, one per iteration,
#     chunked, and the layer's default);
#  2. the seven kernels of 002 with 8 B and large sizes in OpenMP (libgomp at its defaults, libgomp
#     with OMP_WAIT_POLICY=passive, and the same binary on libweft-omp), weft, MPI (Open MPI,
#     mpirun on loopback) and MPI with weft inside each rank.
# Output: $OUT (default loops/results/) *.txt tables, and docs/loops-*.svg|png plots.
# Environment: BUILD (build dir, default build-loops), P (workers/ranks, default 2),
# WEFT_LOOPS_TRIALS (kernel trials, default 100), WEFT_LOOPS_BUDGET_MS (time per nested point,
# default 300), SWEEP (inner team sizes, e.g. 1-36), QUICK=1 (fewer nested points, 20 kernel
# trials). About 10 minutes on 2 cores.
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${BUILD:-$root/build-loops}
out=${OUT:-$here/results}
P=${P:-2}
mkdir -p "$out"

# Benchmark-only tools (the build and tests need only scripts/install-deps).
need=()
command -v gnuplot >/dev/null || need+=(gnuplot-nox)
command -v clang++-14 >/dev/null || need+=(clang-14)
[[ -e /usr/lib/llvm-14/lib/libomp.so ]] || need+=(libomp-14-dev)
command -v mpirun >/dev/null || need+=(openmpi-bin libopenmpi-dev)
if ((${#need[@]})); then
  echo "bench.sh: installing ${need[*]}" >&2
  sudo=(); ((EUID == 0)) || sudo=(sudo)
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -q -y update >&2
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -q -y -o APT::Install-Recommends=false install "${need[@]}" >&2
fi

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j2 --target weft_loops_nested weft_loops_nested_gomp \
  weft_loops_kernels_bench weft_loops_kernels_mpi_bench weft_omp_dropin >/dev/null
bin=$build/loops
clang++-14 -std=c++20 -O2 -fopenmp=libomp -I"$here/bench" -o "$bin/weft_loops_nested_iomp" \
  "$here/bench/nested_omp.cpp" "$here/bench/kernels_common.cpp" "$here/bench/bench_options.cpp"

# Inner team sizes of the sweep (SWEEP=1-36 for every size; the default keeps the run short).
if [[ ${QUICK:-0} == 1 ]]; then
  sweep=${SWEEP:-1,2,4,8,16,36}; export WEFT_LOOPS_TRIALS=${WEFT_LOOPS_TRIALS:-20}
else
  sweep=${SWEEP:-1,2,3,4,6,8,12,16,24,36}
fi
export OMP_PROC_BIND=false
{
  echo "# $(date -u '+%F %T UTC') $(nproc) CPUs; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# name outer inner median_us min_us kept ok"
} >"$out/nested.txt"
run_nested() { "$@" | tee -a "$out/nested.txt"; }
run_nested "$bin/weft_loops_nested" serial
for omp in gomp iomp; do
  OMP_MAX_ACTIVE_LEVELS=1 run_nested "$bin/weft_loops_nested_$omp" "$P" 1
  OMP_MAX_ACTIVE_LEVELS=1 run_nested "$bin/weft_loops_nested_$omp" 36 1
  OMP_MAX_ACTIVE_LEVELS=2 run_nested "$bin/weft_loops_nested_$omp" 2 2
  OMP_MAX_ACTIVE_LEVELS=2 run_nested "$bin/weft_loops_nested_$omp" 36 "$sweep"
done
export WEFT_NUM_STREAMS=$P
for units in ult tasklet; do
  run_nested "$bin/weft_loops_nested" "$units" 0 0,2,1000   # default; chunks of 500; one per iteration
  run_nested "$bin/weft_loops_nested" "$units" 36 "$sweep,1000"
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/nested.txt"

{
  echo "# $(date -u '+%F %T UTC') P=$P; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# impl kernel n p median_ms min_ms kept"
} >"$out/kernels.txt"
# OpenMP at libgomp's defaults (row omp); the passive wait policy, under which libgomp's threads
# sleep between regions, is a separate row (omp-passive), not the comparison. omp-weft is the same
# OpenMP binary on libweft-omp (its drop-in libgomp.so.1).
"$bin/weft_loops_kernels_bench" omp "$P" | tee -a "$out/kernels.txt"
OMP_WAIT_POLICY=passive "$bin/weft_loops_kernels_bench" omp "$P" |
  awk '{ $1 = "omp-passive"; print }' | tee -a "$out/kernels.txt"
LD_LIBRARY_PATH=$build/omp/dropin "$bin/weft_loops_kernels_bench" omp "$P" |
  awk '{ $1 = "omp-weft"; print }' | tee -a "$out/kernels.txt"
WEFT_NUM_STREAMS=$P "$bin/weft_loops_kernels_bench" weft "$P" | tee -a "$out/kernels.txt"
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_plm=isolated
mpi=(mpirun --allow-run-as-root --oversubscribe -np "$P")
"${mpi[@]}" "$bin/weft_loops_kernels_mpi_bench" mpi | tee -a "$out/kernels.txt"
WEFT_NUM_STREAMS=1 "${mpi[@]}" -x WEFT_NUM_STREAMS "$bin/weft_loops_kernels_mpi_bench" mpi+weft |
  tee -a "$out/kernels.txt"
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/kernels.txt"

P=$P bash "$here/plot.sh" "$out" "${DOCS:-$root/docs}"
