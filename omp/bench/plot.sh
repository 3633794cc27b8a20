#!/usr/bin/env bash
# Plots run.sh's nested results: plot.sh RESULTS_DIR DOCS_DIR
#   omp-nested.svg|png   003's figure: time per outer loop vs inner team size (outer team of 36)
#                        for GCC/libgomp (pthreads), LLVM libomp, GCC on libweft-omp with inner
#                        ULTs and inner tasklets, and weft::loops' hand-written version.
set -euo pipefail
res=$1
docs=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
series=(libgomp-nested libomp-nested weft-omp-ult weft-omp-tasklet loops-ult loops-tasklet)
for s in "${series[@]}"; do
  awk -v s="$s" '$1 == s && $2 == 36 && $3 <= 36 { print $3, $4 / 1000 }' "$res/nested.txt" >"$tmp/$s.dat"
done
ref() { awk -v n="$1" '$1 == n { print $4 / 1000; exit }' "$res/nested.txt"; }
gflat=$(ref libgomp-flat)
iflat=$(ref libomp-flat)
for term in svg png; do
  if [[ $term == svg ]]; then t="svg size 900,560 dynamic font 'sans,12'"; else t="pngcairo size 900,560 font 'sans,10'"; fi
  gnuplot <<GP
set terminal $t
set output "$docs/omp-nested.$term"
set title "003's nested parallel for, unmodified OpenMP built by GCC: 36 outer x 1000 inner cos(), $(nproc) cores"
set xlabel "threads (libgomp, libomp) | ULTs / tasklets (weft) in each inner team"
set ylabel "time per outer loop (ms, median, log scale)"
set logscale y
set key top left
set grid ytics
set xrange [0:37]
plot "$tmp/libgomp-nested.dat" w lp pt 7 ps 0.6 t "GCC / libgomp (pthreads)", \
     "$tmp/libomp-nested.dat" w lp pt 5 ps 0.6 t "clang / LLVM libomp", \
     "$tmp/weft-omp-ult.dat" w lp pt 9 ps 0.7 t "GCC / libweft-omp, inner ULTs", \
     "$tmp/weft-omp-tasklet.dat" w lp pt 11 ps 0.7 t "GCC / libweft-omp, inner tasklets", \
     "$tmp/loops-ult.dat" w l dt 2 t "weft::loops, inner ULTs", \
     "$tmp/loops-tasklet.dat" w l dt 3 t "weft::loops, inner tasklets", \
     $gflat w l dt 4 lc rgb "dark-red" t "libgomp flat, 2 threads", \
     $iflat w l dt 5 lc rgb "dark-blue" t "libomp flat, 2 threads"
GP
done
echo "plots written to $docs/omp-nested.svg|png" >&2
