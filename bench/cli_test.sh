#!/usr/bin/env bash
# The benchmark programs' command lines: malformed values exit 2 with a message naming the
# option, well-formed ones run (at the smallest sizes, or listing instead of measuring).
# Usage: cli_test.sh NAME=PATH... (weft_bench, weft_sched_bench, weft_abt_layer_bench,
# weft_abt_bench, weft_loops_nested, weft_loops_nested_gomp, weft_loops_kernels_bench,
# converse_demo, weft_omp_micro; the checks of programs not named are left out)
# SPDX-License-Identifier: Apache-2.0
set -uo pipefail
declare -A bin
for a in "$@"; do bin[${a%%=*}]=${a#*=}; done
fail() { echo "FAIL: $*" >&2; exit 1; }
checks=0
expect() {  # expect STATUS MESSAGE PROGRAM ARGS...
  local want=$1 msg=$2 prog=$3
  shift 3
  [[ -n ${bin[$prog]:-} ]] || return 0
  err=$(WEFT_LOOPS_TRIALS=2 "${bin[$prog]}" "$@" 2>&1 >/dev/null </dev/null)
  rc=$?
  [[ $rc == "$want" ]] || fail "$prog $*: exit status $rc, expected $want ($err)"
  [[ $err == *"$msg"* ]] || fail "$prog $*: message '$err' lacks '$msg'"
  checks=$((checks + 1))
}
for p in weft_bench weft_sched_bench; do
  expect 2 "--streams" $p --streams=0
  expect 2 "--streams" $p --streams=two
  expect 2 "--streams" $p --streams
  expect 1 "unrecognized command-line flag" $p --streams=2 --frobnicate
  expect 0 "" $p --streams=2 --benchmark_list_tests
  expect 0 "" $p --benchmark_list_tests --streams 2
done
expect 2 "--units" weft_abt_layer_bench --run=native_chain --units=0
expect 2 "--reps" weft_abt_layer_bench --run=native_chain --reps=x
expect 2 "no case nope" weft_abt_layer_bench --run=nope
expect 2 "" weft_abt_layer_bench --run=native_chain --benchmark_filter=x
expect 0 "" weft_abt_layer_bench --run=abt_chain --units=10 --reps=1
expect 0 "" weft_abt_layer_bench --benchmark_list_tests
expect 2 "N: '10x' is not an integer" weft_abt_bench 10x
expect 2 "TRIALS: '0' is not an integer" weft_abt_bench 10 0
expect 2 "too many arguments" weft_abt_bench 10 2 3
expect 0 "" weft_abt_bench 20 2
expect 2 "PEs: '0' is not an integer from 1" converse_demo 0
expect 2 "THREADS: '257' is not an integer" converse_demo 2 5 257
expect 2 "LAPS: 'x'" converse_demo 2 x
expect 0 "" converse_demo 2 3 2
expect 2 "which case?" weft_omp_micro
expect 2 "no case 'nope'" weft_omp_micro nope
expect 2 "N: '10x' is not an integer" weft_omp_micro fib 10x
expect 2 "too many arguments" weft_omp_micro region 3
expect 0 "" weft_omp_micro fib 12
expect 2 "MODE" weft_loops_nested
expect 2 "MODE" weft_loops_nested fibers 1 1
expect 2 "'3-1' is not a width" weft_loops_nested ult 1 3-1
expect 2 "'x' is not a width" weft_loops_nested tasklet 1 1,x
expect 2 "both are needed" weft_loops_nested ult 1
expect 2 "serial takes no widths" weft_loops_nested serial 2 2
expect 0 "" weft_loops_nested ult 1 1-2
expect 2 "OUTER" weft_loops_nested_gomp x 1
expect 0 "" weft_loops_nested_gomp 1 1
expect 2 "P is required" weft_loops_kernels_bench weft
expect 2 "IMPL" weft_loops_kernels_bench tbb 2
expect 2 "nope not in" weft_loops_kernels_bench weft 2 pingpong,nope
expect 0 "" weft_loops_kernels_bench weft 1 pingpong,dot
((checks > 0)) || fail "no program given"
echo "benchmark command lines: $checks checks passed"
