#!/usr/bin/env bash
# End-to-end check of weft-rm against a weft process (registered with ctest):
#   weft_rm_test.sh WEFT_RM_BINARY DEMO_BINARY
# Starts the elastic demo connected to a fresh socket, sets it to 1 stream and back to 2 with
# one-shot weft-rm invocations, sends a bad command (usage error, exit 2), and checks the replies.
# The demo reports once that no manager listens yet, and stays quiet when a one-shot weft-rm
# closes the connection and removes its socket.
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail
rmtool=$1
demo=$2
dir=$(mktemp -d /tmp/weft-rm-test-XXXXXX)
sock=$dir/rm.sock
out=$dir/out
err=$dir/err
trap 'kill $pid 2>/dev/null || true; rm -rf "$dir"' EXIT
WEFT_NUM_STREAMS=2 WEFT_RM=unix:$sock "$demo" 30 >/dev/null 2>"$err" &
pid=$!
# No manager listens yet: the demo says so (once) before the first weft-rm starts.
for ((i = 0; i < 600; i++)); do
  grep -q "cannot connect" "$err" && break
  sleep 0.1
done
grep -q "cannot connect" "$err"
"$rmtool" --socket "unix:$sock" --timeout 60 --pid $pid set 1 | tee "$out"
grep -q "ok streams=1" "$out"
# The socket of a one-shot weft-rm is gone after it exits (a fresh one is made each time).
[[ ! -e $sock ]]
# Long enough for the demo to try reconnecting (a second after the close) with no manager there.
sleep 3
"$rmtool" --socket "unix:$sock" --timeout 60 --pid $pid set 2 | tee "$out"
grep -q "ok streams=2" "$out"
"$rmtool" --socket "unix:$sock" --timeout 60 --pid $pid stop 0 | tee "$out" && exit 1
grep -q "error streams=2" "$out"
rc=0
"$rmtool" --socket "unix:$sock" bogus 1 2>/dev/null || rc=$?
[[ $rc == 2 ]]
rc=0
"$rmtool" --socket "tcp:10.0.0.1:7000" count 2>/dev/null || rc=$?
[[ $rc == 2 ]]
"$rmtool" --socket "unix:$sock" --timeout 60 --pid $pid quit | tee "$out"
grep -q "ok streams=2" "$out"
# Only the report from before the first manager: each clean close by a one-shot weft-rm is quiet.
if (($(grep -c "cannot connect" "$err") != 1)); then
  cat "$err" >&2
  echo "the demo reported a failure to connect more than once" >&2
  exit 1
fi
echo "weft-rm end-to-end: ok"
