#!/bin/sh
# Runs env_icvs with malformed or out-of-range OMP_* values on libgomp and on libweft-omp (the
# drop-in directory first on LD_LIBRARY_PATH) and compares them: the same output (the settings
# in effect, the team) and exit status, a warning where libgomp warns and none where it does not,
# and at most one line of warning per variable.
# Usage: env_compare.sh PROGRAM DROPIN_DIR
prog=$1
dropin=$2
tmp=${TMPDIR:-/tmp}/omp_env_compare.$$
mkdir -p "$tmp" || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0

# Each case: the assignment, the stack (KiB) the program uses in members and tasks, and
# "clamped" where libweft-omp may add one line (a value libgomp takes but weft must reduce).
run_case() {
  assignment=$1
  kib=$2
  clamped=${3:-}
  env "$assignment" "$prog" "$kib" >"$tmp/gomp.out" 2>"$tmp/gomp.err"
  gomp_rc=$?
  env "LD_LIBRARY_PATH=$dropin" "$assignment" "$prog" "$kib" >"$tmp/weft.out" 2>"$tmp/weft.err"
  weft_rc=$?
  gomp_warn=$(grep -c . "$tmp/gomp.err")
  weft_warn=$(grep -c . "$tmp/weft.err")
  if [ "$gomp_rc" != "$weft_rc" ] || ! cmp -s "$tmp/gomp.out" "$tmp/weft.out" ||
     { [ "$gomp_warn" -gt 0 ] && [ "$weft_warn" -ne 1 ]; } ||
     { [ "$gomp_warn" -eq 0 ] && [ -z "$clamped" ] && [ "$weft_warn" -ne 0 ]; } ||
     { [ "$gomp_warn" -eq 0 ] && [ "$weft_warn" -gt 1 ]; }; then
    echo "MISMATCH for $assignment (stack use ${kib} KiB):"
    echo "  libgomp (rc $gomp_rc):"; sed 's/^/    /' "$tmp/gomp.out" "$tmp/gomp.err"
    echo "  libweft-omp (rc $weft_rc):"; sed 's/^/    /' "$tmp/weft.out" "$tmp/weft.err"
    fail=1
  else
    echo "ok: $assignment: $(head -1 "$tmp/weft.out") $(cat "$tmp/weft.err")"
  fi
}

run_case OMP_NUM_THREADS=abc 0
run_case OMP_NUM_THREADS=0 0
run_case OMP_NUM_THREADS=-2 0
run_case OMP_NUM_THREADS=4,2 0
run_case OMP_NUM_THREADS=3,abc 0
run_case "OMP_NUM_THREADS= 3 " 0
run_case OMP_NUM_THREADS= 0
run_case OMP_STACKSIZE=1k 0
run_case OMP_STACKSIZE=2G 1024 clamped
run_case OMP_STACKSIZE=4M 1024
run_case "OMP_STACKSIZE= 2048 k " 1024
run_case OMP_STACKSIZE=garbage 0
run_case OMP_STACKSIZE=12x 0
run_case OMP_SCHEDULE=garbage 0
run_case OMP_SCHEDULE=dynamic,abc 0
run_case OMP_SCHEDULE=guided,5 0
run_case OMP_DYNAMIC=maybe 0
run_case OMP_DYNAMIC=1 0
run_case OMP_NESTED=maybe 0
run_case OMP_MAX_ACTIVE_LEVELS=-1 0
run_case OMP_MAX_ACTIVE_LEVELS=300 0
run_case OMP_WAIT_POLICY=xyz 0
run_case OMP_PROC_BIND=xyz 0
run_case OMP_PROC_BIND=true,xyz 0
run_case OMP_PROC_BIND=spread,close 0
run_case OMP_THREAD_LIMIT=0 0
run_case OMP_CANCELLATION=maybe 0
run_case OMP_MAX_TASK_PRIORITY=-1 0
exit $fail
