#!/usr/bin/env bash
# The 003 nested benchmark on libweft-omp against weft::loops' own nested version, alternated
# round by round (ULTs, then tasklets), so that each pair sees the same machine load; prints per
# inner team size the median and quartiles of the per-round ratios weft-omp / weft::loops.
# Environment: BUILD (default build), ROUNDS (default 15), SWEEP (default 1,2,4,8,16,36),
# OUT (raw output, default omp/bench/results/nested-alternated.txt).
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${BUILD:-$root/build}
rounds=${ROUNDS:-15}
sweep=${SWEEP:-1,2,4,8,16,36}
out=${OUT:-$here/results/nested-alternated.txt}
loops=$build/loops
dropin=$build/omp/dropin
for f in "$loops/weft_loops_nested_gomp" "$loops/weft_loops_nested" "$dropin/libgomp.so.1"; do
  [[ -e $f ]] || { echo "nested_alternated.sh: $f missing" >&2; exit 1; }
done
{
  echo "# $(date -u '+%F %T UTC') rounds=$rounds; load: $(cut -d' ' -f1-3 /proc/loadavg)"
  for ((r = 1; r <= rounds; ++r)); do
    for kind in ult tasklet; do
      inner=()
      [[ $kind == tasklet ]] && inner=(WEFT_OMP_INNER=tasklet)
      env LD_LIBRARY_PATH="$dropin" WEFT_OMP_STREAMS=2 OMP_MAX_ACTIVE_LEVELS=2 \
        ${inner[@]+"${inner[@]}"} \
        "$loops/weft_loops_nested_gomp" 36 "$sweep" | awk -v n="omp-$kind" '{ print n, $0 }'
      WEFT_NUM_STREAMS=2 "$loops/weft_loops_nested" "$kind" 36 "$sweep" |
        awk -v n="loops-$kind" '{ print n, $0 }'
    done
  done
  echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$out"
python3 - "$out" <<'PY'
import collections, statistics as st, sys
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    if line.startswith('#') or len(f) < 6:
        continue
    d[(f[0], f[3])].append((float(f[4]), float(f[5])))
for kind in ('ult', 'tasklet'):
    for inner in sorted({k[1] for k in d}, key=int):
        a, b = d[('omp-' + kind, inner)], d[('loops-' + kind, inner)]
        r = [x[0] / y[0] for x, y in zip(a, b)]
        q = st.quantiles(r, n=4)
        print(f"{kind:8s} 36x{inner:3s} weft-omp / weft::loops: median of the per-round ratios "
              f"{st.median(r):.3f} (quartiles {q[0]:.2f}-{q[2]:.2f}), ratio of minima "
              f"{min(x[1] for x in a) / min(y[1] for y in b):.3f}")
PY
