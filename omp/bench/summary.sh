#!/usr/bin/env bash
# Ratios of run.sh's results within one run: summary.sh RESULTS_DIR. For each statistic (median,
# min): micro rows against libgomp and the faster of libgomp and libomp; the 003 nested program
# flat against the faster peer and nested against weft::loops with the same units and libgomp;
# the 002 kernels against libgomp.
set -euo pipefail
res=$1
for stat in median min; do
  col=3; [[ $stat == min ]] && col=4
  echo "## micro, $stat (region, barrier: us; fib, chain, wavefront, taskred, doacross2: ms; doacross: ns/iteration)"
  awk -v c="$col" '!/^#/ { m[$1, $2] = $c; w[$2] = 1; r[$1] = 1 }
    END {
      for (x in w) {
        best = m["libgomp", x] < m["libomp", x] ? m["libgomp", x] : m["libomp", x]
        for (k in r) if ((k, x) in m)
          printf "%-8s %-18s %12.3f  x%.3f of libgomp  x%.3f of the faster peer\n", x, k, m[k, x],
                 m[k, x] / m["libgomp", x], m[k, x] / best
      }
    }' "$res/micro.txt" | sort
  col=4; [[ $stat == min ]] && col=5
  echo "## nested 003, $stat (us)"
  awk -v c="$col" '!/^#/ { m[$1, $3] = $c; if ($1 ~ /nested|ult|tasklet/) s[$3] = 1 }
    END {
      best = m["libgomp-flat", 1] < m["libomp-flat", 1] ? m["libgomp-flat", 1] : m["libomp-flat", 1]
      printf "flat 2x1: weft-omp %.1f = x%.3f of the faster of libgomp (%.1f) and libomp (%.1f)\n",
             m["weft-omp-flat", 1], m["weft-omp-flat", 1] / best, m["libgomp-flat", 1], m["libomp-flat", 1]
      for (i in s)
        printf "36x%-3s weft-omp ult %.1f = x%.3f of weft::loops ult; tasklet %.1f = x%.3f of weft::loops tasklet; libgomp / weft-omp ult = %.1f, / tasklet = %.1f; libomp / weft-omp ult = %.1f\n",
               i, m["weft-omp-ult", i], m["weft-omp-ult", i] / m["loops-ult", i],
               m["weft-omp-tasklet", i], m["weft-omp-tasklet", i] / m["loops-tasklet", i],
               m["libgomp-nested", i] / m["weft-omp-ult", i], m["libgomp-nested", i] / m["weft-omp-tasklet", i],
               m["libomp-nested", i] / m["weft-omp-ult", i]
    }' "$res/nested.txt" | sort -k1,1V
  col=5; [[ $stat == min ]] && col=6
  echo "## kernels 002, $stat (ms; ratio to libgomp at its defaults)"
  awk -v c="$col" '!/^#/ { m[$1, $2, $3] = $c; k[$2, $3] = 1 }
    END {
      for (x in k) {
        split(x, p, SUBSEP)
        g = m["libgomp", p[1], p[2]]
        printf "%-10s %9s  libgomp %.4f  weft-omp x%.3f  weft::loops x%.3f\n", p[1], p[2], g,
               m["weft-omp", p[1], p[2]] / g, m["loops", p[1], p[2]] / g
      }
    }' "$res/kernels.txt" | sort
done
