#!/usr/bin/env bash
# Plots bench.sh's results: plot.sh RESULTS_DIR DOCS_DIR
#   loops-nested.svg|png    time per outer loop vs inner team size (003's slide), log scale
#   loops-kernels-8B.svg|png and loops-kernels-large.svg|png   the seven kernels per implementation
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail
res=$1
docs=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Nested: one file per series of the sweep (outer team of 36), inner <= 36.
for s in libgomp-nested libomp-nested weft-ult weft-tasklet; do
  awk -v s="$s" '$1 == s && $2 == 36 && $3 <= 36 { print $3, $4 / 1000 }' "$res/nested.txt" >"$tmp/$s.dat"
done
ref() { awk -v n="$1" -v o="$2" '$1 == n && $2 == o { print $4 / 1000; exit }' "$res/nested.txt"; }
serial=$(ref serial 1)
gflat=$(ref libgomp-flat 2)
iflat=$(ref libomp-flat 2)
for term in svg png; do
  if [[ $term == svg ]]; then t="svg size 900,560 dynamic font 'sans,12'"; else t="pngcairo size 900,560 font 'sans,10'"; fi
  gnuplot <<GP
set terminal $t
set output "$docs/loops-nested.$term"
set title "Nested parallel for (003): 36 outer iterations x 1000 inner cos(), outer team of 36, $(nproc) cores"
set xlabel "# threads (OpenMP) | ULTs / tasklets (weft) in each inner team"
set ylabel "time per outer loop (ms, median, log scale)"
set logscale y
set key top left
set grid ytics
set xrange [0:37]
plot "$tmp/libgomp-nested.dat" w lp pt 7 ps 0.6 t "libgomp nested", \
     "$tmp/libomp-nested.dat" w lp pt 5 ps 0.6 t "LLVM libomp nested", \
     "$tmp/weft-ult.dat" w lp pt 9 ps 0.7 t "weft, inner ULTs", \
     "$tmp/weft-tasklet.dat" w lp pt 11 ps 0.7 t "weft, inner tasklets", \
     $serial w l dt 2 lc rgb "black" t "serial", \
     $gflat w l dt 3 lc rgb "dark-red" t "libgomp flat, 2 threads", \
     $iflat w l dt 4 lc rgb "dark-blue" t "libomp flat, 2 threads"
GP
done

# Kernels: rows = kernels, columns = implementations, for n = 1 and for the large n.
for size in 8B large; do
  awk -v size="$size" '
    !/^#/ && NF >= 7 {
      big = ($3 > 1); if ((size == "large") != big) next
      v[$2, $1] = $5; if (!($2 in seen)) { seen[$2] = 1; order[++n] = $2 }
      if (!($1 in iseen)) { iseen[$1] = 1; impls[++m] = $1 }
    }
    END {
      printf "kernel"; for (j = 1; j <= m; j++) printf " %s", impls[j]; printf "\n"
      for (i = 1; i <= n; i++) {
        printf "%s", order[i]
        for (j = 1; j <= m; j++) { x = v[order[i], impls[j]]; printf " %s", (x == "" ? "-" : x) }
        printf "\n"
      }
    }' "$res/kernels.txt" >"$tmp/kernels-$size.dat"
  cols=$(head -1 "$tmp/kernels-$size.dat" | wc -w)
  for term in svg png; do
    if [[ $term == svg ]]; then t="svg size 900,500 dynamic font 'sans,12'"; else t="pngcairo size 900,500 font 'sans,10'"; fi
    gnuplot <<GP
set terminal $t
set output "$docs/loops-kernels-$size.$term"
set title "002's seven kernels, $size, P = ${P:-2} on $(nproc) cores (median of filtered trials)"
set ylabel "ms (log scale)"
set logscale y
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key top left
set grid ytics
set datafile missing "-"
set yrange [0.0003:*]
plot for [c=2:$cols] "$tmp/kernels-$size.dat" using c:xtic(1) title columnhead
GP
  done
done
echo "plots written to $docs/loops-*.svg|png" >&2
