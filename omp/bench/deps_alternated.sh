#!/usr/bin/env bash
# micro.c's dependence rows (chain, wavefront, taskred, doacross2) on libgomp, LLVM libomp and
# libweft-omp, each at its defaults, alternated round by round (the runtime that goes first
# rotates), so that the three see the same machine load; prints per row the median and quartiles
# of the per-round ratios weft-omp / libgomp, weft-omp / libomp and weft-omp / the faster of the
# two (each run's own median of 10 batches).
# Environment: BUILD (default build), ROUNDS (default 7), ROWS (default
# "chain wavefront taskred doacross2"), OUT (raw output, default
# omp/bench/results/deps-alternated.txt).
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${BUILD:-$root/build}
rounds=${ROUNDS:-7}
rows=${ROWS:-chain wavefront taskred doacross2}
out=${OUT:-$here/results/deps-alternated.txt}
bin=$build/omp/bench
dropin=$build/omp/dropin
libomp=/usr/lib/llvm-14/lib
[[ -e $bin/weft_omp_micro && -e $dropin/libgomp.so.1 ]] ||
  { echo "deps_alternated.sh: build weft_omp_micro and weft_omp_dropin in $build" >&2; exit 1; }
clang-14 -O2 -fopenmp=libomp -L"$libomp" -Wl,-rpath,"$libomp" -o "$bin/weft_omp_micro_iomp" \
  "$here/micro.c"
one() {
  case $1 in
    libgomp) "$bin/weft_omp_micro" "$2" ;;
    libomp) "$bin/weft_omp_micro_iomp" "$2" ;;
    weft-omp) LD_LIBRARY_PATH=$dropin "$bin/weft_omp_micro" "$2" ;;
  esac | awk -v l="$1" '{ print l, $0 }'
}
{
  echo "# $(date -u '+%F %T UTC') $(nproc) CPUs, rounds=$rounds; load: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# runtime what median_ms min_ms kept"
  order=(libgomp libomp weft-omp)
  for ((r = 0; r < rounds; ++r)); do
    for what in $rows; do
      for ((k = 0; k < 3; ++k)); do one "${order[(r + k) % 3]}" "$what"; done
    done
  done
  echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out"
python3 - "$out" <<'PY'
import collections, statistics as st, sys
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    if line.startswith('#') or len(f) < 5:
        continue
    d[(f[0], f[1])].append(float(f[2]))
for what in dict.fromkeys(k[1] for k in d):
    w, g, i = d[('weft-omp', what)], d[('libgomp', what)], d[('libomp', what)]
    def ratios(peer):
        r = [a / b for a, b in zip(w, peer)]
        q = st.quantiles(r, n=4) if len(r) > 1 else [r[0]] * 3
        return f"{st.median(r):.3f} ({q[0]:.2f}-{q[2]:.2f})"
    faster = [min(a, b) for a, b in zip(g, i)]
    print(f"{what:10s} medians of {len(w)} runs: weft-omp {st.median(w):.2f} ms, libgomp "
          f"{st.median(g):.2f}, libomp {st.median(i):.2f}; per-round weft-omp / libgomp "
          f"{ratios(g)}, / libomp {ratios(i)}, / the faster {ratios(faster)}")
PY
