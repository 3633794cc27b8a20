#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CTest driver of the gdb extension test: run_gdb_check.sh TARGET EXTENSION CHECK_SCRIPT
# CORE_CHECK_SCRIPT. The live check writes a core file of the stopped target (gcore, into a
# directory of our own: no system core pattern is involved), which a second gdb then reads.
# Exits 77 (skipped) when gdb is not installed, or cannot call into a process on this CPU.
set -uo pipefail
command -v gdb >/dev/null 2>&1 || { echo "gdb is not installed: skipped"; exit 77; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/weft-gdb-XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
out=$(WEFT_GDB_EXTENSION="$2" WEFT_GDB_CORE="$dir/core" timeout 120 gdb -nx -batch -x "$3" --args "$1" 2>&1)
echo "$out"
# gdb 13 cannot restore the registers of a process after calling into it on CPUs whose extended
# state it does not know how to write (Intel AMX: "Couldn't write extended state status"): the
# check needs such calls, so on those machines it cannot run at all.
if grep -q "Couldn't write extended state status" <<<"$out"; then
  echo "gdb cannot call functions in a process on this CPU (extended state, e.g. AMX): skipped"
  exit 77
fi
grep -q '^WEFT-GDB-CHECK: OK$' <<<"$out" || exit 1
out=$(WEFT_GDB_EXTENSION="$2" timeout 120 gdb -nx -batch -x "$4" "$1" "$dir/core" 2>&1)
echo "$out"
grep -q '^WEFT-GDB-CORE-CHECK: OK$' <<<"$out" || exit 1
if grep -q 'Python Exception\|Traceback' <<<"$out"; then
  echo "a raw Python exception on the core file" >&2
  exit 1
fi
