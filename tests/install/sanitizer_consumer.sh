#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# install_sanitizer_consumer: installs the build tree into a temporary prefix, builds README's
# hello example against it with ThreadSanitizer (CMake, weft::weft_tsan) and with ASan+UBSan
# (pkg-config, weft-asan), and runs both: they must print both greetings and no report.
# Usage: sanitizer_consumer.sh BUILD_DIR CONSUMER_SRC WORK_DIR CMAKE CXX PKG_CONFIG
set -euo pipefail
build=$1 src=$2 work=$3 cmake=$4 cxx=$5 pkg_config=$6
prefix=$work/sanitizer-prefix
rm -rf "$prefix" "$work/tsan-consumer"
"$cmake" --install "$build" --prefix "$prefix" >/dev/null
libdir=$(dirname "$(find "$prefix" -name 'libweft_tsan.so' | head -n 1)")

# gcc 12's TSan cannot map its shadow memory when mmap randomisation uses more than 28 bits.
wrapper=()
if (($(cat /proc/sys/vm/mmap_rnd_bits 2>/dev/null || echo 0) > 28)); then
  wrapper=(setarch "$(uname -m)" -R)
fi

check() {  # check NAME OUTPUT
  for line in "hello from a ULT" "hello from a tasklet"; do
    grep -qx "$line" <<<"$2" || { echo "$1: missing '$line'"; exit 1; }
  done
  if grep -q "Sanitizer" <<<"$2"; then echo "$1: sanitizer report"; exit 1; fi
  echo "$1: ok"
}

"$cmake" -S "$src" -B "$work/tsan-consumer" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
"$cmake" --build "$work/tsan-consumer" >/dev/null
out=$(TSAN_OPTIONS=halt_on_error=1 LD_LIBRARY_PATH="$libdir" "${wrapper[@]}" \
  "$work/tsan-consumer/hello_tsan" 2>&1)
check "weft::weft_tsan" "$out"

export PKG_CONFIG_PATH="$libdir/pkgconfig"
# shellcheck disable=SC2046  # pkg-config's output is a list of flags
"$cxx" -std=c++20 -g "$src/main.cpp" -o "$work/hello_asan" $("$pkg_config" --cflags --libs weft-asan)
out=$(ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1 \
  LD_LIBRARY_PATH="$libdir" "$work/hello_asan" 2>&1)
check "weft-asan.pc" "$out"
