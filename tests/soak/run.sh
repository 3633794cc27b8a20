#!/usr/bin/env bash
# The soak test: weft_soak (tests/soak/soak.cpp) runs rounds of mixed units for SECONDS while this
# script drives it through a real weft-rm, cycling set 1, expand 1, set 3, shrink 1, stop 1 and
# count, one command every half second. Fails if weft_soak reports a lost or repeated unit, or
# exits non-zero, or a weft-rm command gets no reply.
#   bash tests/soak/run.sh [BUILD_DIR (default build)] [SECONDS (default 600)]
# Build first: cmake --build BUILD_DIR --target weft_soak weft-rm
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
build=${1:-$root/build}
seconds=${2:-600}
soak=$build/tests/soak/weft_soak
rmtool=$build/tools/weft-rm/weft-rm
[[ -x $soak && -x $rmtool ]] || { echo "soak: build weft_soak and weft-rm in $build first" >&2; exit 2; }
dir=$(mktemp -d /tmp/weft-soak-XXXXXX)
sock=$dir/rm.sock
trap 'kill $pid 2>/dev/null || true; rm -rf "$dir"' EXIT
WEFT_NUM_STREAMS=2 WEFT_RM=unix:$sock "$soak" "$seconds" >"$dir/soak.out" 2>&1 &
pid=$!
commands=("set 1" "expand 1" "set 3" "shrink 1" "stop 1" "count" "set 2")
sent=0
failed=0
while kill -0 $pid 2>/dev/null; do
  cmd=${commands[$((sent % ${#commands[@]}))]}
  # An error reply (e.g. "stop 1" when rank 1 is gone) is an answer; no reply is a failure.
  rc=0
  "$rmtool" --socket "unix:$sock" --timeout 60 --pid $pid $cmd >"$dir/rm.out" 2>&1 || rc=$?
  if ((rc != 0)) && ! grep -q "streams=" "$dir/rm.out"; then
    kill -0 $pid 2>/dev/null || break  # the soak ended while we waited
    echo "soak: no reply to '$cmd':"; cat "$dir/rm.out"; failed=1
  fi
  sent=$((sent + 1))
  sleep 0.5
done
rc=0
wait $pid || rc=$?
cat "$dir/soak.out"
echo "soak: $sent manager commands"
if ((rc != 0 || failed != 0)); then
  echo "soak: FAILED (weft_soak exit $rc)"
  exit 1
fi
echo "soak: ok"
