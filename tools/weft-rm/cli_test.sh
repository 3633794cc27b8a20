#!/usr/bin/env bash
# weft-rm's command line, without a process to manage: usage errors exit 2 with their message
# before any socket is made; --help prints the usage and exits 0. Usage: cli_test.sh PATH/TO/weft-rm
# SPDX-License-Identifier: Apache-2.0
set -uo pipefail
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
sock="unix:$tmp/rm.sock"
expect() {  # expect STATUS MESSAGE ARGS...
  local want=$1 msg=$2
  shift 2
  err=$("$bin" "$@" 2>&1 >/dev/null </dev/null)
  rc=$?
  [[ $rc == "$want" ]] || fail "weft-rm $*: exit status $rc, expected $want ($err)"
  [[ $err == *"$msg"* ]] || fail "weft-rm $*: message '$err' lacks '$msg'"
}
expect 2 "weft-rm: --wait needs a number" --socket "$sock" --wait x count
expect 2 "weft-rm: --timeout needs a number" --socket "$sock" --timeout=-1 count
expect 2 "weft-rm: --pid needs a number" --socket "$sock" count --pid
expect 2 "usage: weft-rm" --socket
expect 2 "weft-rm: unknown option --frobnicate" --socket "$sock" --frobnicate count
[[ ! -e $tmp/rm.sock ]] || fail "a usage error left a socket"
"$bin" --help | grep -q "usage: weft-rm \[--socket ADDR\]" || fail "--help"
# Options after the command are still options: the one-shot run times out (1 s) waiting for a
# process (status 1), rather than sending "count --timeout 1" as a command.
expect 1 "" --socket "$sock" count --timeout 1
[[ ! -e $tmp/rm.sock ]] || fail "the socket outlived the run"
echo "weft-rm CLI: all checks passed"
