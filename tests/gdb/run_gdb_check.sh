#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CTest driver of the gdb extension test: run_gdb_check.sh TARGET EXTENSION CHECK_SCRIPT.
# Exits 77 (skipped) when gdb is not installed.
set -uo pipefail
command -v gdb >/dev/null 2>&1 || { echo "gdb is not installed: skipped"; exit 77; }
out=$(WEFT_GDB_EXTENSION="$2" timeout 120 gdb -nx -batch -x "$3" --args "$1" 2>&1)
echo "$out"
grep -q '^WEFT-GDB-CHECK: OK$' <<<"$out"
