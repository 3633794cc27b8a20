#!/usr/bin/env bash
# Runs weft-elastic-demo under weft-rm: all streams, shrink to 1, expand back, while it prints its
# stream count and throughput each second.
# Usage: bash apps/elastic/demo.sh [BUILD_DIR]      (default build/)
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
build=${1:-$root/build}
demo=$build/apps/elastic/weft-elastic-demo
rmtool=$build/tools/weft-rm/weft-rm
[[ -x $demo && -x $rmtool ]] || { echo "build first: cmake --build $build" >&2; exit 1; }
# A directory of our own: weft and weft-rm refuse a socket in one others can write, such as /tmp.
dir=$(mktemp -d /tmp/weft-demo-XXXXXX)
sock=$dir/rm.sock
streams=$(nproc)

WEFT_RM=unix:$sock "$demo" 16 2> >(grep -v "rm: cannot connect" >&2) &
pid=$!
trap 'kill $pid 2>/dev/null || true; rm -rf "$dir"' EXIT
sleep 3
echo "== weft-rm: set 1"
"$rmtool" --socket "unix:$sock" --pid $pid set 1
sleep 5
echo "== weft-rm: set $streams"
"$rmtool" --socket "unix:$sock" --pid $pid set "$streams"
wait $pid
