#!/usr/bin/env bash
# The kernels of 002 on every shared-memory runtime, alternated within one run so that each round
# sees the same machine load:
#   libgomp          the OpenMP binary at libgomp's defaults
#   libgomp-best     the same with OMP_WAIT_POLICY=active OMP_PROC_BIND=true
#   weft-omp         the same binary on libweft-omp (its drop-in libgomp.so.1), defaults
#   weft-omp-best    the same with OMP_WAIT_POLICY=active OMP_PROC_BIND=true
#   loops            weft::loops (2 ULT workers on 2 streams), default wait policy
#   loops-active     weft::loops with wait_policy::active
# ROUNDS rounds (default 5) of every runtime in that order; each run prints 002's median and
# minimum per kernel and size. Output in $OUT (default loops/results/): compare-raw.txt (every
# run, with its round) and compare.txt: per runtime, kernel and size the median over the rounds
# of the per-run medians, the smallest minimum, and the ratios of both to libgomp's.
# Environment: BUILD (default build), P (default 2), WEFT_LOOPS_TRIALS (default 40), KERNELS
# (comma list, default all), ROUNDS; SUMMARY_ONLY=1 rewrites compare.txt from an existing
# compare-raw.txt without running anything.
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${BUILD:-$root/build}
out=${OUT:-$root/loops/results}
P=${P:-2}
rounds=${ROUNDS:-5}
export WEFT_LOOPS_TRIALS=${WEFT_LOOPS_TRIALS:-40}
bench=$build/loops/weft_loops_kernels_bench
dropin=$build/omp/dropin
for f in "$bench" "$dropin/libgomp.so.1"; do
  [[ -e $f ]] || { echo "compare_kernels.sh: $f missing (build weft_loops_kernels_bench weft_omp_dropin)" >&2; exit 1; }
done
mkdir -p "$out"
raw=$out/compare-raw.txt
best=(OMP_WAIT_POLICY=active OMP_PROC_BIND=true)
run() { # NAME ENV... -- ARGS...
  local name=$1 envs=()
  shift
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  env ${envs[@]+"${envs[@]}"} "$bench" "$@" ${KERNELS:+"$KERNELS"} |
    awk -v r="$round" -v n="$name" '{ $1 = n; print r, $0 }'
}
if [[ ${SUMMARY_ONLY:-0} != 1 ]]; then
{
  echo "# $(date -u '+%F %T UTC') P=$P trials=$WEFT_LOOPS_TRIALS rounds=$rounds; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# round impl kernel n p median_ms min_ms kept"
} >"$raw"
for ((round = 1; round <= rounds; round++)); do
  {
    run libgomp -- omp "$P"
    run libgomp-best "${best[@]}" -- omp "$P"
    run weft-omp LD_LIBRARY_PATH="$dropin" -- omp "$P"
    run weft-omp-best LD_LIBRARY_PATH="$dropin" "${best[@]}" -- omp "$P"
    run loops WEFT_NUM_STREAMS="$P" -- weft "$P"
    run loops-active WEFT_NUM_STREAMS="$P" WEFT_LOOPS_WAIT=active -- weft "$P"
  } | tee -a "$raw"
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$raw"
fi

{
  head -1 "$raw"
  tail -1 "$raw"
  echo "# median over the rounds of each run's median (ms), smallest minimum (ms), ratios to libgomp"
  printf '%-14s %-10s %8s %10s %10s %8s %8s\n' impl kernel n median min med/gomp min/gomp
  awk '
    !/^#/ { k = $3 " " $4; key = $2 SUBSEP k; meds[key] = meds[key] " " $6
            if (!(key in mn) || $7 < mn[key]) mn[key] = $7
            if (!(k in seenk)) { seenk[k] = 1; ks[++nk] = k }
            if (!($2 in seeni)) { seeni[$2] = 1; is[++ni] = $2 } }
    function median(s,   a, n, i, j, t) {
      n = split(s, a, " ")
      for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    END {
      for (x = 1; x <= nk; x++) {
        k = ks[x]; split(k, kn, " ")
        g = median(meds["libgomp" SUBSEP k]); gm = mn["libgomp" SUBSEP k]
        for (y = 1; y <= ni; y++) {
          i = is[y]; m = median(meds[i SUBSEP k])
          printf "%-14s %-10s %8s %10.4f %10.4f %8.2f %8.2f\n", i, kn[1], kn[2], m, mn[i SUBSEP k],
                 (g > 0 ? m / g : 0), (gm > 0 ? mn[i SUBSEP k] / gm : 0)
        }
      }
    }' "$raw"
} | tee "$out/compare.txt"
