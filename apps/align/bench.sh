#!/usr/bin/env bash
# weft-align benchmark: the seed's experiment (000_efea619cb43ec291.txt) on this machine.
#   A  workers x threads, chunk 1            uniform references (1000-2000 bp)
#   B  chunk size 1..64 at workers=ncpu      uniform references: the tail of big chunks
#   C  workers x threads, chunk 1            skewed references (100-10000 bp, 100x): the tail of
#                                            static schedules when alignments differ in cost
# Variants: weft dynamic (ULTs), weft dynamic (tasklets), weft static, and on request weft
# dynamic on the work-stealing scheduler (weft-dyn-randws) and with unpinned streams
# (weft-dyn-nopin, --affinity none, like the OpenMP threads); all weft variants but randws run
# the basic_wait scheduler. OpenMP static
# (schedule(static,1) nowait), OpenMP dynamic (schedule(dynamic,1) nowait), and OpenMP dynamic
# with OMP_WAIT_POLICY=passive (libgomp's default spins, which costs once threads outnumber CPUs).
#
# Each repetition runs every configuration and variant once, in turn, so that a change in the
# machine's load during the run affects all variants alike; a point is the median over the
# repetitions of the mapping phase's wall time (--stats: reading input and writing output are not
# timed), with the CPU time (user + sys, all threads) of the same runs. Every run's hits are
# compared with the first run's: all configurations must give the same output.
#
# --real: instead, real 16S rRNA data from Debian's microbiomeutil-data (see real() below): the
# pruning gain, the speed-up of the default weft configuration over serial on a quiet machine and
# with one competing CPU-bound process, and the OpenMP version for reference.
#
# Usage: bash apps/align/bench.sh [--build DIR] [--out DIR] [--quick] [--replot] [--real]
#   --build DIR  a configured release build (default build-align; built here if needed)
#   --out DIR    where results go (default DIR/align-bench): raw.tsv (every run), results.tsv
#                (one row per point), results.json, table.txt, and plots (align-exp*.svg) when
#                gnuplot is installed
#   --quick      small inputs and one repetition (a smoke test, not a measurement)
#   --replot     only redo the table, JSON and plots from an existing raw.tsv in --out
#   --real       the real-data mode: results in real.tsv (every run) and real-table.txt
# Environment: REPS (default 5), ALIGN_SCALE (multiplies the number of queries, default 1),
# VARIANTS (space-separated subset or superset of the variants below; weft-dyn-randws and
# weft-dyn-nopin are not run by default), FULL=1 (two more workers x threads shapes in A).
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
build=$root/build-align
out=
quick=0
replot=0
real=0
while (($#)); do
  case $1 in
    --build) build=$(cd "$2" && pwd -P); shift 2 ;;
    --out) mkdir -p "$2"; out=$(cd "$2" && pwd -P); shift 2 ;;
    --quick) quick=1; shift ;;
    --replot) replot=1; shift ;;
    --real) real=1; shift ;;
    -h | --help) sed -n '2,35p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
out=${out:-$build/align-bench}
mkdir -p "$out"

ncpu=$(nproc)
reps=${REPS:-5}
raw=$out/raw.tsv
results=$out/results.tsv
# shellcheck disable=SC2206  # VARIANTS is a space-separated list
variants=(${VARIANTS:-weft-dyn weft-dyn-tasklet weft-static omp-static omp-dyn omp-dyn-passive})

# The points: "dataset experiment workers threads chunk". FULL=1 adds more shapes.
points=()
shapes=("1 1" "2 1" "1 2" "2 2" "4 2" "8 1")
((${FULL:-0})) && shapes+=("4 1" "2 4")
for p in "${shapes[@]}"; do points+=("uniform A $p 1"); done
for c in 1 16 64; do points+=("uniform B $ncpu 1 $c"); done
for p in "2 1" "1 2" "2 2" "4 2"; do points+=("skewed C $p 1"); done

measure() {
  build_bin
  local bin=$build/apps/align/weft-align
  local queries=$((100 * ${ALIGN_SCALE:-1})) nrefs=250
  if ((quick)); then
    reps=1
    queries=20
    nrefs=60
  fi
  local data=$out/data
  mkdir -p "$data"
  "$bin" gen --seed 1 --refs "$nrefs" --ref-min 1000 --ref-max 2000 --queries "$queries" \
    --qlen-min 100 --qlen-max 200 --error-rate 0.05 \
    --ref-out "$data/uniform-refs.fa" --query-out "$data/uniform-queries.fa"
  "$bin" gen --seed 2 --refs "$nrefs" --ref-min 100 --ref-max 10000 --queries "$queries" \
    --qlen-min 100 --qlen-max 200 --error-rate 0.05 \
    --ref-out "$data/skewed-refs.fa" --query-out "$data/skewed-queries.fa"

  printf 'dataset\texperiment\tworkers\tthreads\tchunk\tvariant\trep\tseconds\tcpu_s\n' >"$raw"
  {
    echo "$ncpu CPUs ($(lscpu | sed -n 's/^Model name: *//p')), $queries queries x $nrefs references, $reps repetitions"
    echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  } | tee "$out/load.txt" >&2
  local rep point variant dataset exp w t chunk args env stats s
  for ((rep = 1; rep <= reps; rep++)); do
    for point in "${points[@]}"; do
      read -r dataset exp w t chunk <<<"$point"
      for variant in "${variants[@]}"; do
        args=(map --quiet --stats --workers "$w" --threads "$t" --chunk "$chunk" -o "$out/hits.tsv")
        env=()
        case $variant in
          weft-dyn) args+=(--backend weft --schedule dynamic --unit ult) ;;
          weft-dyn-tasklet) args+=(--backend weft --schedule dynamic --unit tasklet) ;;
          weft-static) args+=(--backend weft --schedule static --unit ult) ;;
          weft-dyn-randws) args+=(--backend weft --schedule dynamic --weft-sched randws) ;;
          weft-dyn-nopin) args+=(--backend weft --schedule dynamic --affinity none) ;;
          omp-static) args+=(--backend omp --schedule static) ;;
          omp-dyn) args+=(--backend omp --schedule dynamic) ;;
          omp-dyn-passive) args+=(--backend omp --schedule dynamic); env=(OMP_WAIT_POLICY=passive) ;;
        esac
        args+=("$data/$dataset-refs.fa" "$data/$dataset-queries.fa")
        stats=$(env "${env[@]}" "$bin" "${args[@]}" 2>&1 >/dev/null)
        s=$(sed -n 's/.*"seconds":\([0-9.]*\),"cpu_seconds":\([0-9.]*\).*/\1\t\2/p' <<<"$stats")
        [[ -n $s ]] || { echo "bench.sh: no timing from: $bin ${args[*]}: $stats" >&2; exit 1; }
        if [[ ! -f $out/hits-$dataset.tsv ]]; then
          cp "$out/hits.tsv" "$out/hits-$dataset.tsv"
        elif ! cmp -s "$out/hits.tsv" "$out/hits-$dataset.tsv"; then
          echo "bench.sh: $variant ${w}x$t chunk $chunk gave different hits on $dataset" >&2
          exit 1
        fi
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$dataset" "$exp" "$w" "$t" "$chunk" "$variant" \
          "$rep" "$s" >>"$raw"
      done
      printf '  rep %d/%d  %-8s %s %2dx%-2d chunk %-3d done\n' "$rep" "$reps" "$dataset" "$exp" \
        "$w" "$t" "$chunk" >&2
    done
  done
  rm -f "$out"/hits*.tsv
  echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/load.txt" >&2
}

build_bin() {
  if [[ ! -f $build/CMakeCache.txt ]]; then
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DWEFT_BUILD_BENCH=OFF >/dev/null
  fi
  cmake --build "$build" -j "$ncpu" --target weft-align >/dev/null
}

# Real data: the 16S rRNA gold set of microbiomeutil-data (5,181 sequences of about 1,500 bp,
# lower case, with IUPAC codes). References: its first REAL_REFS sequences (default 1500).
# Queries: the next REAL_QUERIES x ALIGN_SCALE sequences (default 40), held out of the references,
# each cut to a window of REAL_QLEN residues (default 400; 0 = the whole sequence) at a position
# fixed by its record number, every other one reverse-complemented, so that both strands hold
# best hits. Variants, alternated in each repetition:
#   serial-fwd-full   --backend serial --strand forward --no-prune: the mapper without strands or
#                     pruning (the CPU baseline of the pruning gain)
#   serial-full       --backend serial --no-prune: both strands, no pruning
#   serial            --backend serial: both strands, pruned (the defaults)
#   weft              the defaults: weft on all CPUs
#   omp               --backend omp --workers ncpu
#   serial-busy, weft-busy   as serial and weft, with one competing CPU-bound process running
# Every variant but serial-fwd-full must give the same hits.
real() {
  local gold=/usr/share/microbiomeutil-data/RESOURCES/rRNA16S.gold.fasta
  [[ -f $gold ]] || { echo "bench.sh: --real needs $gold (Debian: microbiomeutil-data)" >&2; exit 2; }
  build_bin
  local bin=$build/apps/align/weft-align data=$out/data
  local nrefs=${REAL_REFS:-1500} nq=$((${REAL_QUERIES:-40} * ${ALIGN_SCALE:-1})) qlen=${REAL_QLEN:-400}
  ((quick)) && { reps=1; nrefs=100; nq=6; }
  ((qlen > 0)) || qlen=100000
  mkdir -p "$data"
  awk -v nrefs="$nrefs" -v nq="$nq" -v qlen="$qlen" -v refs="$data/16s-refs.fa" \
    -v queries="$data/16s-queries.fa" '
    function flush(   L, w, pos, s, r, i, c, strand) {
      if (name == "") return
      n++
      if (n <= nrefs) { print ">" name > refs; print seq > refs }
      else if (n <= nrefs + nq) {
        L = length(seq); w = (qlen < L ? qlen : L); pos = ((n * 7919) % (L - w + 1)) + 1
        s = toupper(substr(seq, pos, w)); strand = "+"
        if (n % 2) { r = ""; for (i = w; i >= 1; i--) { c = substr(s, i, 1); r = r (c in comp ? comp[c] : c) }
                     s = r; strand = "-" }
        print ">" name "_" pos "_" strand > queries; print s > queries
      }
      name = ""; seq = ""
    }
    BEGIN { split("A T C G R Y K M B V D H S W N", a, " "); split("T A G C Y R M K V B H D S W N", b, " ")
            for (i in a) comp[a[i]] = b[i] }
    /^>/ { flush(); name = substr($1, 2); next }
    { seq = seq $0 }
    END { flush() }' "$gold"
  local variants=(serial-fwd-full serial-full serial weft omp serial-busy weft-busy)
  local rawr=$out/real.tsv rep v args s busy_pid
  printf 'variant\trep\tseconds\tcpu_s\n' >"$rawr"
  {
    echo "$ncpu CPUs ($(lscpu | sed -n 's/^Model name: *//p')), 16S: $nq queries ($qlen bp windows, both strands) x $nrefs references, $reps repetitions"
    echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  } | tee "$out/real-load.txt" >&2
  rm -f "$out/real-hits.tsv"
  for ((rep = 1; rep <= reps; rep++)); do
    for v in "${variants[@]}"; do
      args=(map --quiet --stats -o "$out/hits.tsv")
      case $v in
        serial-fwd-full) args+=(--backend serial --strand forward --no-prune) ;;
        serial-full) args+=(--backend serial --no-prune) ;;
        serial | serial-busy) args+=(--backend serial) ;;
        weft | weft-busy) ;;
        omp) args+=(--backend omp --workers "$ncpu") ;;
      esac
      busy_pid=
      if [[ $v == *-busy ]]; then
        # One competing CPU-bound process, as on a shared machine.
        bash -c 'while :; do :; done' &
        busy_pid=$!
      fi
      s=$(OMP_WAIT_POLICY=passive "$bin" "${args[@]}" "$data/16s-refs.fa" "$data/16s-queries.fa" 2>&1 >/dev/null |
        sed -n 's/.*"seconds":\([0-9.e+-]*\),"cpu_seconds":\([0-9.e+-]*\).*/\1\t\2/p')
      [[ -n $busy_pid ]] && { kill "$busy_pid"; wait "$busy_pid" 2>/dev/null || true; }
      [[ -n $s ]] || { echo "bench.sh: no timing from variant $v" >&2; exit 1; }
      if [[ $v != serial-fwd-full ]]; then
        if [[ ! -f $out/real-hits.tsv ]]; then
          cp "$out/hits.tsv" "$out/real-hits.tsv"
        elif ! cmp -s "$out/hits.tsv" "$out/real-hits.tsv"; then
          echo "bench.sh: variant $v gave different hits on the 16S data" >&2
          exit 1
        fi
      fi
      printf '%s\t%s\t%s\n' "$v" "$rep" "$s" >>"$rawr"
    done
    echo "  rep $rep/$reps done" >&2
  done
  rm -f "$out/hits.tsv"
  echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/real-load.txt" >&2
  {
    cat "$out/real-load.txt"
    awk -F'\t' '
      function median(list,   a, n, i, j, x) {
        n = split(list, a, " ")
        for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > x + 0; j--) a[j + 1] = a[j]; a[j + 1] = x }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
      NR == 1 { next }
      { if (!($1 in w)) order[n++] = $1; w[$1] = w[$1] " " $3; c[$1] = c[$1] " " $4 }
      END {
        printf "\n%-16s %10s %10s\n", "variant", "wall_s", "cpu_s"
        for (i = 0; i < n; i++) { v = order[i]; W[v] = median(w[v]); C[v] = median(c[v]); printf "%-16s %10.3f %10.3f\n", v, W[v], C[v] }
        printf "\npruning, CPU: serial-full / serial %.2fx, serial-fwd-full / serial %.2fx\n", C["serial-full"] / C["serial"], C["serial-fwd-full"] / C["serial"]
        printf "weft (default) over serial, wall: quiet %.2fx, with a competing process %.2fx\n", W["serial"] / W["weft"], W["serial-busy"] / W["weft-busy"]
        printf "omp over serial, wall: %.2fx\n", W["serial"] / W["omp"]
      }' "$out/real.tsv"
  } | tee "$out/real-table.txt"
  echo "results: $out/real.tsv, $out/real-table.txt" >&2
}

if ((real)); then
  real
  exit 0
fi

if ((replot)); then
  [[ -f $raw ]] || { echo "bench.sh: --replot needs $raw" >&2; exit 2; }
else
  measure
fi

# results.tsv: median wall time, minimum wall time and median CPU time per point and variant.
awk -F'\t' '
  function median(list,   a, n, i, j, x) {
    n = split(list, a, " ")
    for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > x + 0; j--) a[j + 1] = a[j]; a[j + 1] = x }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  NR == 1 { print "dataset\texperiment\tworkers\tthreads\tchunk\tvariant\tmedian_s\tmin_s\tcpu_s\treps"; next }
  { key = $1 "\t" $2 "\t" $3 "\t" $4 "\t" $5 "\t" $6
    if (!(key in wall)) { order[n++] = key; mn[key] = $8 }
    wall[key] = wall[key] " " $8; cpu[key] = cpu[key] " " $9; cnt[key]++
    if ($8 + 0 < mn[key] + 0) mn[key] = $8 }
  END { for (k = 0; k < n; k++) printf "%s\t%.3f\t%.3f\t%.3f\t%d\n", order[k], median(wall[order[k]]), mn[order[k]], median(cpu[order[k]]), cnt[order[k]] }
' "$raw" >"$results"

# Table: one row per point, one column per variant, then the ratios OpenMP dynamic / weft dynamic
# and best OpenMP variant / best weft variant (> 1: weft is faster); for wall and for CPU time.
table() {
  awk -F'\t' -v variants="${variants[*]}" -v col="$1" '
    NR == 1 { next }
    { key = $1 "\t" $2 "\t" $3 "x" $4 "\t" $5; if (!(key in seen)) { seen[key] = 1; order[n++] = key }
      t[key, $6] = $col }
    END {
      nv = split(variants, v, " ")
      printf "%-8s %-3s %-5s %-5s", "data", "exp", "WxT", "chunk"
      for (i = 1; i <= nv; i++) printf " %9s", substr(v[i], 1, 9)
      printf " %9s %9s\n", "omp/weft", "best o/w"
      for (k = 0; k < n; k++) {
        split(order[k], f, "\t")
        printf "%-8s %-3s %-5s %-5s", f[1], f[2], f[3], f[4]
        bw = 1e9; bo = 1e9
        for (i = 1; i <= nv; i++) {
          x = t[order[k], v[i]]
          if (x == "") { printf " %9s", "-"; continue }
          printf " %9.3f", x
          if (v[i] ~ /^weft/ && x < bw) bw = x
          if (v[i] ~ /^omp/ && x < bo) bo = x
        }
        od = t[order[k], "omp-dyn"]; wd = t[order[k], "weft-dyn"]
        printf " %9.2f %9.2f\n", (wd > 0 ? od / wd : 0), bo / bw
      }
    }' "$results"
}
{
  cat "$out/load.txt"
  echo "columns: ${variants[*]}"
  echo
  echo "wall-clock seconds of the mapping phase (median)"
  table 7
  echo
  echo "CPU seconds, user + sys of all threads (median)"
  table 9
} | tee "$out/table.txt"

# JSON: the rows of results.tsv.
awk -F'\t' 'NR == 1 { next }
  { printf "%s{\"dataset\":\"%s\",\"experiment\":\"%s\",\"workers\":%s,\"threads\":%s,\"chunk\":%s,\"variant\":\"%s\",\"median_s\":%s,\"min_s\":%s,\"cpu_s\":%s,\"reps\":%s}",
      (NR > 2 ? ",\n " : "[") , $1, $2, $3, $4, $5, $6, $7, $8, $9, $10 }
  END { print "]" }' "$results" >"$out/results.json"

if command -v gnuplot >/dev/null; then
  titles=("A: uniform references, workers x threads, chunk 1"
          "B: uniform references, $ncpu workers x 1 thread, query chunk size"
          "C: skewed references (lengths 100x apart), workers x threads, chunk 1")
  i=0
  for exp in A B C; do
    # One wide data file per experiment: configuration, then one column per variant.
    awk -F'\t' -v ex="$exp" -v variants="${variants[*]}" '
      NR == 1 || $2 != ex { next }
      { key = (ex == "B" ? "chunk " $5 : $3 "x" $4); if (!(key in seen)) { seen[key] = 1; order[n++] = key }
        t[key, $6] = $7 }
      END { nv = split(variants, v, " "); printf "config"; for (i = 1; i <= nv; i++) printf " %s", v[i]; print ""
            for (k = 0; k < n; k++) { printf "\"%s\"", order[k]
              for (i = 1; i <= nv; i++) printf " %s", (t[order[k], v[i]] == "" ? "NaN" : t[order[k], v[i]]); print "" } }' \
      "$results" >"$out/exp$exp.dat"
    gnuplot <<EOF || echo "bench.sh: gnuplot failed for experiment $exp" >&2
set terminal svg size 1000,440 font "sans,11"
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
plot for [c=2:$((${#variants[@]} + 1))] "$out/exp$exp.dat" using c:xtic(1) title columnhead(c)
EOF
    i=$((i + 1))
  done
  echo "plots: $out/align-exp{A,B,C}.svg" >&2
fi
echo "results: $raw, $results, $out/results.json, $out/table.txt" >&2
