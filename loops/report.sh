#!/usr/bin/env bash
# Markdown tables from bench.sh's results: report.sh RESULTS_DIR
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail
res=$1
echo "Nested benchmark ($(head -1 "$res/nested.txt" | sed 's/^# //'); $(tail -1 "$res/nested.txt" | sed 's/^# //')):"
echo
awk '
  !/^#/ && NF >= 7 { key = $1 " " $2 "x" $3; med[key] = $4; mn[key] = $5; ok[key] = $7; order[++n] = key }
  END {
    serial = med["serial 1x1"]
    flat = med["libgomp-flat 2x1"]; if (med["libomp-flat 2x1"] < flat) flat = med["libomp-flat 2x1"]
    g36 = med["libgomp-nested 36x36"]
    print "| version (outer x inner team) | median ms | min ms | / serial | / best flat | libgomp 36x36 / this |"
    print "|---|---|---|---|---|---|"
    for (i = 1; i <= n; i++) {
      k = order[i]
      printf "| %s | %.3f | %.3f | %.2f | %.2f | %.0f |\n", k, med[k] / 1000, mn[k] / 1000,
             med[k] / serial, med[k] / flat, g36 / med[k]
    }
  }' "$res/nested.txt"
echo
echo "Kernels ($(head -1 "$res/kernels.txt" | sed 's/^# //'); $(tail -1 "$res/kernels.txt" | sed 's/^# //')), median (min) ms:"
echo
awk '
  !/^#/ && NF >= 7 { k = $2 " " $3; v[k, $1] = $5; m[k, $1] = $6; if (!(k in seen)) { seen[k] = 1; order[++n] = k } }
  END {
    print "| kernel n | OpenMP | weft | MPI | MPI+weft | weft / OpenMP | MPI+weft / MPI |"
    print "|---|---|---|---|---|---|---|"
    for (i = 1; i <= n; i++) {
      k = order[i]
      printf "| %s | %.4f (%.4f) | %.4f (%.4f) | %.4f (%.4f) | %.4f (%.4f) | %.2f | %.2f |\n", k,
        v[k, "omp"], m[k, "omp"], v[k, "weft"], m[k, "weft"], v[k, "mpi"], m[k, "mpi"],
        v[k, "mpi+weft"], m[k, "mpi+weft"],
        (v[k, "omp"] > 0 ? v[k, "weft"] / v[k, "omp"] : 0), (v[k, "mpi"] > 0 ? v[k, "mpi+weft"] / v[k, "mpi"] : 0)
    }
  }' "$res/kernels.txt"
