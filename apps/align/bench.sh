#!/usr/bin/env bash
# weft-align benchmark: the seed's experiment (000_efea619cb43ec291.txt) on this machine.
#   A  workers x threads, chunk 1            uniform references (1000-2000 bp)
#   B  chunk size 1..64 at workers=ncpu      uniform references: the tail of big chunks
#   C  workers x threads, chunk 1            skewed references (100-10000 bp, 100x): the tail of
#                                            static schedules when alignments differ in cost
# Variants: weft dynamic (ULTs), weft dynamic (tasklets), weft static, weft dynamic on the
# work-stealing scheduler (randws), weft dynamic with unpinned streams (--affinity none, like the
# OpenMP threads); all weft variants but randws run the basic_wait scheduler. OpenMP static
# (schedule(static,1) nowait), OpenMP dynamic (schedule(dynamic,1) nowait), and OpenMP dynamic
# with OMP_WAIT_POLICY=passive (libgomp's default spins, which hurts once threads outnumber CPUs).
# Every point is the median of REPS runs of the mapping phase (--stats; reading the input and
# writing the output are not timed).
#
# Usage: bash apps/align/bench.sh [--build DIR] [--out DIR] [--quick]
#   --build DIR  a configured release build (default build-align; built here if needed)
#   --out DIR    where results go (default DIR/align-bench): results.tsv (one row per point),
#                results.json, and plots (align-*.svg) when gnuplot is installed
#   --quick      smaller inputs and one repetition (a smoke test, not a measurement)
#   --replot     only redo the table, JSON and plots from an existing results.tsv in --out
# Environment: REPS (default 3), ALIGN_SCALE (multiplies the number of queries, default 1).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
build=$root/build-align
out=
quick=0
replot=0
while (($#)); do
  case $1 in
    --build) build=$(cd "$2" && pwd -P); shift 2 ;;
    --out) mkdir -p "$2"; out=$(cd "$2" && pwd -P); shift 2 ;;
    --quick) quick=1; shift ;;
    --replot) replot=1; shift ;;
    -h | --help) sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
out=${out:-$build/align-bench}
mkdir -p "$out"

ncpu=$(nproc)
reps=${REPS:-3}
results=$out/results.tsv
variants=(weft-dyn weft-dyn-tasklet weft-static weft-dyn-randws weft-dyn-nopin omp-static omp-dyn
  omp-dyn-passive)

measure() {
if [[ ! -f $build/CMakeCache.txt ]]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DWEFT_BUILD_BENCH=OFF >/dev/null
fi
cmake --build "$build" -j "$(nproc)" --target weft-align >/dev/null
bin=$build/apps/align/weft-align

scale=${ALIGN_SCALE:-1}
queries=$((150 * scale))
nrefs=300
if ((quick)); then
  reps=1
  queries=20
  nrefs=100
fi

data=$out/data
mkdir -p "$data"
"$bin" gen --seed 1 --refs "$nrefs" --ref-min 1000 --ref-max 2000 --queries "$queries" \
  --qlen-min 100 --qlen-max 200 --error-rate 0.05 \
  --ref-out "$data/uniform-refs.fa" --query-out "$data/uniform-queries.fa"
"$bin" gen --seed 2 --refs "$nrefs" --ref-min 100 --ref-max 10000 --queries "$queries" \
  --qlen-min 100 --qlen-max 200 --error-rate 0.05 \
  --ref-out "$data/skewed-refs.fa" --query-out "$data/skewed-queries.fa"

# run_point DATASET EXPERIMENT WORKERS THREADS CHUNK VARIANT: appends a row to results.tsv
printf 'dataset\texperiment\tworkers\tthreads\tchunk\tvariant\tmedian_s\tmin_s\tcpu_s\n' >"$results"
reference_tsv=
run_point() {
  local dataset=$1 exp=$2 w=$3 t=$4 chunk=$5 variant=$6
  local args=(map --quiet --stats --workers "$w" --threads "$t" --chunk "$chunk" -o "$out/hits.tsv")
  local env=()
  case $variant in
    weft-dyn) args+=(--backend weft --schedule dynamic --unit ult) ;;
    weft-dyn-tasklet) args+=(--backend weft --schedule dynamic --unit tasklet) ;;
    weft-static) args+=(--backend weft --schedule static --unit ult) ;;
    weft-dyn-randws) args+=(--backend weft --schedule dynamic --unit ult --weft-sched randws) ;;
    weft-dyn-nopin) args+=(--backend weft --schedule dynamic --unit ult --affinity none) ;;
    omp-static) args+=(--backend omp --schedule static) ;;
    omp-dyn) args+=(--backend omp --schedule dynamic) ;;
    omp-dyn-passive) args+=(--backend omp --schedule dynamic); env=(OMP_WAIT_POLICY=passive) ;;
  esac
  args+=("$data/$dataset-refs.fa" "$data/$dataset-queries.fa")
  local times=() i s stats
  for ((i = 0; i < reps; i++)); do
    stats=$(env "${env[@]}" "$bin" "${args[@]}" 2>&1 >/dev/null)
    s=$(sed -n 's/.*"seconds":\([0-9.]*\),"cpu_seconds":\([0-9.]*\).*/\1 \2/p' <<<"$stats")
    [[ -n $s ]] || { echo "bench.sh: no timing from: $bin ${args[*]}: $stats" >&2; exit 1; }
    times+=("$s")
  done
  # Every configuration must give the same hits as the first one of its data set.
  if [[ $reference_tsv != "$dataset" ]]; then
    cp "$out/hits.tsv" "$out/hits-$dataset.tsv"
    reference_tsv=$dataset
  elif ! cmp -s "$out/hits.tsv" "$out/hits-$dataset.tsv"; then
    echo "bench.sh: $variant ${w}x$t chunk $chunk gave different hits on $dataset" >&2
    exit 1
  fi
  local sorted median min cpu
  sorted=$(printf '%s\n' "${times[@]}" | sort -g)
  read -r median cpu <<<"$(sed -n "$(((reps + 1) / 2))p" <<<"$sorted")"
  min=$(head -n1 <<<"$sorted" | cut -d' ' -f1)
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$dataset" "$exp" "$w" "$t" "$chunk" "$variant" \
    "$median" "$min" "$cpu" >>"$results"
  printf '  %-8s %s  %2dx%-2d chunk %-3d %-17s %8.3f s  (cpu %.3f s)\n' "$dataset" "$exp" "$w" "$t" \
    "$chunk" "$variant" "$median" "$cpu" >&2
}

wxt=("1 1" "1 2" "2 1" "2 2" "4 1" "2 4" "4 2" "8 1")
chunks=(1 4 16 64)
echo "weft-align benchmark: $ncpu CPUs, $queries queries x $nrefs references, median of $reps" >&2
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$out/load.txt" >&2
for p in "${wxt[@]}"; do
  for v in "${variants[@]}"; do run_point uniform A $p 1 "$v"; done
done
for c in "${chunks[@]}"; do
  for v in weft-dyn weft-static weft-dyn-randws weft-dyn-nopin omp-static omp-dyn omp-dyn-passive; do
    run_point uniform B "$ncpu" 1 "$c" "$v"
  done
done
for p in "1 1" "2 1" "1 2" "2 2" "4 2" "8 1"; do
  for v in "${variants[@]}"; do run_point skewed C $p 1 "$v"; done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/load.txt" >&2
}

if ((replot)); then
  [[ -f $results ]] || { echo "bench.sh: --replot needs $results" >&2; exit 2; }
else
  measure
fi

# Table: one row per (experiment, configuration), one column per variant, plus the ratio of the
# OpenMP dynamic to weft dynamic and of the best OpenMP variant to the best weft variant (> 1: weft
# is faster); for wall time and for CPU time.
table() {
awk -F'\t' -v variants="${variants[*]}" -v col="$1" '
  NR == 1 { next }
  { key = $1 "\t" $2 "\t" $3 "x" $4 "\t" $5; if (!(key in seen)) { seen[key] = 1; order[n++] = key }
    t[key, $6] = $col }
  END {
    nv = split(variants, v, " ")
    printf "%-8s %-3s %-5s %-5s", "data", "exp", "WxT", "chunk"
    for (i = 1; i <= nv; i++) printf " %16s", v[i]
    printf " %12s %12s\n", "dyn:omp/weft", "best:omp/weft"
    for (k = 0; k < n; k++) {
      split(order[k], f, "\t")
      printf "%-8s %-3s %-5s %-5s", f[1], f[2], f[3], f[4]
      bw = 1e9; bo = 1e9
      for (i = 1; i <= nv; i++) {
        x = t[order[k], v[i]]
        if (x == "") { printf " %16s", "-"; continue }
        printf " %16.3f", x
        if (v[i] ~ /^weft/ && x < bw) bw = x
        if (v[i] ~ /^omp/ && x < bo) bo = x
      }
      od = t[order[k], "omp-dyn"]; wd = t[order[k], "weft-dyn"]
      printf " %12.2f %12.2f\n", (wd > 0 ? od / wd : 0), bo / bw
    }
  }' "$results"
}
{
  echo "wall-clock seconds of the mapping phase (median of $reps)"
  table 7
  echo
  echo "CPU seconds (user + sys, all threads) of the median run"
  table 9
} | tee "$out/table.txt"

# JSON: the rows of results.tsv.
awk -F'\t' 'NR == 1 { next }
  { printf "%s{\"dataset\":\"%s\",\"experiment\":\"%s\",\"workers\":%s,\"threads\":%s,\"chunk\":%s,\"variant\":\"%s\",\"median_s\":%s,\"min_s\":%s,\"cpu_s\":%s}",
      (NR > 2 ? ",\n " : "[") , $1, $2, $3, $4, $5, $6, $7, $8, $9 }
  END { print "]" }' "$results" >"$out/results.json"

if command -v gnuplot >/dev/null; then
  # One wide data file per experiment: configuration, then one column per variant.
  for exp in A B C; do
    awk -F'\t' -v ex="$exp" -v variants="${variants[*]}" '
      NR == 1 || $2 != ex { next }
      { key = (ex == "B" ? "chunk " $5 : $3 "x" $4); if (!(key in seen)) { seen[key] = 1; order[n++] = key }
        t[key, $6] = $7 }
      END { nv = split(variants, v, " "); printf "config"; for (i = 1; i <= nv; i++) printf " %s", v[i]; print ""
            for (k = 0; k < n; k++) { printf "\"%s\"", order[k]
              for (i = 1; i <= nv; i++) printf " %s", (t[order[k], v[i]] == "" ? "NaN" : t[order[k], v[i]]); print "" } }' \
      "$results" >"$out/exp$exp.dat"
  done
  titles=("A: uniform references, workers x threads, chunk 1"
          "B: uniform references, $ncpu workers, chunk size"
          "C: skewed references (100x lengths), workers x threads, chunk 1")
  i=0
  for exp in A B C; do
    gnuplot <<EOF
set terminal svg size 900,420 font "sans,11"
set output "$out/align-exp$exp.svg"
set title "weft-align on $ncpu CPUs — ${titles[$i]}"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set ylabel "seconds (median of $reps)"
set yrange [0:*]
set key outside right top
set xtics nomirror
set grid ytics
plot for [c=2:9] "$out/exp$exp.dat" using c:xtic(1) title columnhead(c)
EOF
    i=$((i + 1))
  done
  echo "plots: $out/align-exp{A,B,C}.svg" >&2
fi
echo "results: $out/results.tsv, $out/results.json, $out/table.txt" >&2
