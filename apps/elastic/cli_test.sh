#!/usr/bin/env bash
# weft-elastic-demo's command line. Usage: cli_test.sh PATH/TO/weft-elastic-demo
# SPDX-License-Identifier: Apache-2.0
set -uo pipefail
bin=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
for bad in 0 -3 abc 5x "1 2"; do
  # shellcheck disable=SC2086 # "1 2" is two arguments on purpose
  err=$("$bin" $bad 2>&1 >/dev/null)
  rc=$?
  [[ $rc == 2 ]] || fail "'$bad': exit status $rc, expected 2"
  [[ $err == *"usage: weft-elastic-demo [SECONDS > 0]"* ]] || fail "'$bad': no usage line: $err"
  [[ $err == "weft-elastic-demo: "* ]] || fail "'$bad': message does not name the program: $err"
done
"$bin" --help | grep -q SECONDS || fail "--help does not describe SECONDS"
out=$(WEFT_NUM_STREAMS=1 "$bin" 1) || fail "a 1-second run failed"
[[ -n $out ]] || fail "a 1-second run printed nothing"
echo "weft-elastic-demo CLI: all checks passed"
