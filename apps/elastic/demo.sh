#!/usr/bin/env bash
# Runs weft-elastic-demo under weft-rm: all streams, shrink to 1, expand back, while it prints its
# stream count and throughput each second. Installed as bin/weft-elastic-demo-run.
# Usage: weft-elastic-demo-run [BUILD_DIR]
#        weft-elastic-demo-run --which     (prints the two programs it would run, and exits)
# The programs come from BUILD_DIR when given; else from this script's own directory (an install
# prefix's bin/); else, for the script in a source tree (apps/elastic/demo.sh), from its build/;
# else from PATH.
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
which_only=0
build=''
case ${1:-} in
  --which) which_only=1 ;;
  -h | --help) sed -n '2,8s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; exit 0 ;;
  '') ;;
  *) build=$1 ;;
esac

if [[ -n $build ]]; then
  demo=$build/apps/elastic/weft-elastic-demo
  rmtool=$build/tools/weft-rm/weft-rm
elif [[ -x $here/weft-elastic-demo && -x $here/weft-rm ]]; then
  demo=$here/weft-elastic-demo
  rmtool=$here/weft-rm
elif [[ -x $here/../../build/apps/elastic/weft-elastic-demo ]]; then
  demo=$here/../../build/apps/elastic/weft-elastic-demo
  rmtool=$here/../../build/tools/weft-rm/weft-rm
else
  demo=$(command -v weft-elastic-demo || true)
  rmtool=$(command -v weft-rm || true)
fi
if [[ ! -x $demo || ! -x $rmtool ]]; then
  echo "cannot find weft-elastic-demo and weft-rm (looked in ${build:-$here, $here/../../build and PATH});" \
       "build them (cmake --build build) or install weft (cmake --install build)" >&2
  exit 1
fi
if ((which_only)); then
  echo "$demo"
  echo "$rmtool"
  exit 0
fi

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
