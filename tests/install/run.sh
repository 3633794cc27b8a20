#!/usr/bin/env bash
# Driver of the install_consumer test (registered by tests/install/CMakeLists.txt).
#
#  1. cmake --install the weft build tree into a fresh temporary prefix;
#  2. move that prefix to another directory (the package must be relocatable) and
#     check that no installed .cmake/.pc file names the build, source or first prefix;
#  3. configure, build and run consumer/ with find_package(weft CONFIG REQUIRED):
#     consumer_shared (weft::weft) and consumer_static (weft::weft_static);
#  4. compile, link and run consumer/main.cpp with
#       $CXX -std=c++20 $(pkg-config --cflags --libs weft)                   (libweft.so)
#       $CXX -std=c++20 $(pkg-config --cflags --static --libs weft-static)   (libweft.a)
#     Every pkg-config route here runs without LD_LIBRARY_PATH (with --pc-rpath 1: the .pc
#     files record libdir as RUNPATH), and a static one has no NEEDED libweft*.so.
#  5. with --expect-abt 1 (weft::abt was built): the same for the C99 program
#     consumer/abt_main.c against weft::abt, weft::abt_static, pkg-config weft-abt and
#     pkg-config --static weft-abt-static (libweft-abt.a and libweft.a).
#  6. with --expect-loops 1 (weft::loops was built): consumer/ asks for
#     find_package(weft CONFIG REQUIRED COMPONENTS loops) and runs consumer_loops (weft::loops);
#     the same program links with pkg-config weft-loops and weft-loops-static; find_package(weft COMPONENTS <unknown>)
#     fails with a message naming the component, and as an optional component it does not fail.
#  7. with --expect-omp 1 (weft::omp was built): consumer/ also asks for the component "omp" and
#     runs consumer_omp (an OpenMP C program linked to weft::omp: NEEDED libweft-omp.so, not
#     libgomp); the same program compiled with pkg-config weft-omp's Cflags and linked with its
#     Libs, with and without --static (libweft-omp has no archive); and built with plain -fopenmp (libgomp) then run with LD_LIBRARY_PATH on the
#     installed drop-in directory. Each run checks that its omp_* calls reach libweft-omp.
#  8. every installed libweft*.so resolves the libweft*.so it needs without LD_LIBRARY_PATH;
#     every program the build installed (--programs) is in the moved prefix's bin/, has a
#     $ORIGIN-relative RUNPATH, resolves libweft.so without LD_LIBRARY_PATH, and weft-rm and
#     weft-align run their --help from another working directory.
#  9. the tools: bin/weft-trace-timeline draws a trace the consumer wrote (when gnuplot is
#     installed); with weft-elastic-demo, bin/weft-elastic-demo-run --which names the prefix's
#     programs, run from another directory with only /usr/bin:/bin in PATH; the gdb extension
#     lies in share/weft/gdb/, beside libweft.so.<version> and under share/gdb/auto-load/, and
#     gdb, told the libdir is safe, loads it with the library (when gdb is installed).
#
# Every step must succeed; the first failure fails the test (and keeps the work
# directory for inspection). Nothing is skipped.
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail

usage() {
  cat >&2 <<USAGE
usage: $0 --build-dir DIR --consumer-dir DIR [--work-dir DIR] [--config CFG]
          [--cmake CMAKE] [--generator GEN] [--cxx CXX] [--cc CC] [--pkg-config PKGCONFIG]
          [--version X.Y.Z] [--expect-abt 0|1] [--expect-loops 0|1] [--expect-omp 0|1]
          [--programs "NAME..."] [--pc-rpath 0|1]
USAGE
  exit 2
}

build_dir='' consumer_dir='' work_parent="${TMPDIR:-/tmp}" config=''
cmake_bin=cmake generator='' cxx="${CXX:-g++}" cc="${CC:-gcc}" pkg_config=pkg-config version=''
expect_abt=0 expect_loops=0 expect_omp=0 programs='' pc_rpath=1
while (($#)); do
  (($# >= 2)) || usage
  case "$1" in
    --build-dir) build_dir=$2 ;;
    --consumer-dir) consumer_dir=$2 ;;
    --work-dir) work_parent=$2 ;;
    --config) config=$2 ;;
    --cmake) cmake_bin=$2 ;;
    --generator) generator=$2 ;;
    --cxx) cxx=$2 ;;
    --cc) cc=$2 ;;
    --expect-abt) expect_abt=$2 ;;
    --expect-loops) expect_loops=$2 ;;
    --expect-omp) expect_omp=$2 ;;
    --programs) programs=$2 ;;
    --pc-rpath) pc_rpath=$2 ;;
    --pkg-config) pkg_config=$2 ;;
    --version) version=$2 ;;
    *) usage ;;
  esac
  shift 2
done
[[ -n $build_dir && -n $consumer_dir ]] || usage
build_dir=$(cd "$build_dir" && pwd -P)
consumer_dir=$(cd "$consumer_dir" && pwd -P)
[[ -f $build_dir/cmake_install.cmake ]] || { echo "error: $build_dir is not a configured CMake build tree" >&2; exit 1; }
source_dir=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build_dir/CMakeCache.txt")

mkdir -p "$work_parent"
work=$(mktemp -d "$(cd "$work_parent" && pwd -P)/install_consumer.XXXXXX")
step="setup"
on_exit() {
  local rc=$?
  if ((rc == 0)); then
    rm -rf "$work"
    echo "install_consumer: all steps passed"
  else
    echo "install_consumer: FAILED at step: $step (exit $rc); work directory kept: $work" >&2
  fi
}
trap on_exit EXIT

begin() { step=$1; echo; echo "=== $step"; }
run() { echo "+ $*"; "$@"; }
# Runs a consumer program: bounded time, and it must exit 0.
run_consumer() { echo "+ $*"; timeout 120 "$@"; echo "(exit status 0)"; }
needed_libs() { LC_ALL=C readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
expect_needs_libweft() {
  if ! needed_libs "$1" | grep -q '^libweft\.so'; then
    echo "error: $1 does not depend on libweft.so (NEEDED: $(needed_libs "$1" | tr '\n' ' '))" >&2
    return 1
  fi
}
expect_no_libweft() {
  if needed_libs "$1" | grep -q '^libweft'; then
    echo "error: $1 was meant to link the archives but depends on a libweft*.so" >&2
    return 1
  fi
}
# Links SRC with pkg-config PKG's flags into OUT (ARGS... are pkg-config options such as
# --static) with COMPILER and the language flag STD; a C++ source needs -std=c++20.
pc_link() { # OUT COMPILER STD SRC PKG [ARGS...]
  local out=$1 compiler=$2 std=$3 src=$4 pkg=$5 flags
  shift 5
  run "$pkg_config" --print-errors --validate "$pkg"
  flags=$("$pkg_config" "$@" --cflags --libs "$pkg")
  echo "pkg-config $* --cflags --libs $pkg: $flags"
  read -ra flags <<<"$flags"
  run "$compiler" "$std" -Wall -Wextra -Werror "$src" "${flags[@]}" -o "$out"
}
# Runs a program linked by pkg-config: where the .pc files record no RUNPATH, the loader needs
# LD_LIBRARY_PATH.
run_pc_consumer() {
  if ((pc_rpath)); then
    run_consumer env -u LD_LIBRARY_PATH "$@"
  else
    run_consumer env LD_LIBRARY_PATH="$pc_libdir" "$@"
  fi
}

# --- 1. install ----------------------------------------------------------------------
begin "cmake --install into a fresh prefix"
stage="$work/stage"
install_args=(--install "$build_dir" --prefix "$stage")
[[ -n $config ]] && install_args+=(--config "$config")
run "$cmake_bin" "${install_args[@]}"

# --- 2. relocate and inspect ---------------------------------------------------------
begin "relocate the installed prefix"
prefix="$work/relocated"
run mv "$stage" "$prefix"

begin "check the installed files"
find "$prefix" \( -type f -o -type l \) -printf '%P\n' | LC_ALL=C sort
config_file=$(find "$prefix" -path '*/cmake/weft/weftConfig.cmake' -print -quit)
pc_file=$(find "$prefix" -path '*/pkgconfig/weft.pc' -print -quit)
[[ -n $config_file ]] || { echo "error: no cmake/weft/weftConfig.cmake installed" >&2; exit 1; }
[[ -n $pc_file ]] || { echo "error: no pkgconfig/weft.pc installed" >&2; exit 1; }
cmake_dir=$(dirname "$config_file")
pc_dir=$(dirname "$pc_file")
libdir=$(dirname "$(dirname "$cmake_dir")")
for f in "$prefix/include/weft/weft.hpp" "$cmake_dir/weftConfigVersion.cmake" \
         "$cmake_dir/weftTargets.cmake" "$libdir/libweft.a" "$libdir/libweft.so"; do
  [[ -e $f ]] || { echo "error: $f was not installed" >&2; exit 1; }
  echo "ok: ${f#"$prefix"/}"
done
if ! ls "$libdir"/libweft.so.* >/dev/null 2>&1; then
  echo "error: no versioned libweft.so.* installed" >&2; exit 1
fi
# The extension API is installed; the Argobots layer's internal header is not.
[[ -e $prefix/include/weft/ext/ext.hpp ]] || { echo "error: include/weft/ext/ext.hpp not installed" >&2; exit 1; }
echo "ok: include/weft/ext/"
[[ ! -e $prefix/include/weft/internal ]] || { echo "error: include/weft/internal is installed" >&2; exit 1; }
echo "ok: include/weft/internal/ not installed"
if [[ -d $source_dir/schedulers/include/weft/schedulers ]] &&
   [[ -n $(find "$source_dir/schedulers/include/weft/schedulers" -name '*.hpp' -print -quit) ]]; then
  [[ -d $prefix/include/weft/schedulers ]] || { echo "error: include/weft/schedulers not installed" >&2; exit 1; }
  echo "ok: include/weft/schedulers/"
fi
# Relocatable: no installed package file may name an absolute path of this machine's
# build, source tree or the prefix it was first installed into.
for path in "$stage" "$build_dir" ${source_dir:+"$source_dir"}; do
  grep_rc=0
  hits=$(grep -rlF -- "$path" "$cmake_dir" "$pc_dir") || grep_rc=$?
  if ((grep_rc == 0)); then
    echo "error: installed package files name $path:" >&2
    echo "$hits" >&2
    exit 1
  elif ((grep_rc != 1)); then
    echo "error: grep failed (exit $grep_rc)" >&2
    exit 1
  fi
done
echo "ok: no absolute build/source/prefix paths in the installed .cmake and .pc files"

# --- 3. CMake consumer ---------------------------------------------------------------
begin "configure the CMake consumer (find_package(weft CONFIG REQUIRED))"
cbuild="$work/consumer-build"
cmake_args=(-S "$consumer_dir" -B "$cbuild"
            -DCMAKE_PREFIX_PATH="$prefix"
            -DCMAKE_CXX_COMPILER="$cxx"
            -DCMAKE_C_COMPILER="$cc"
            -DWEFT_EXPECT_ABT="$expect_abt"
            -DWEFT_EXPECT_LOOPS="$expect_loops"
            -DWEFT_EXPECT_OMP="$expect_omp"
            -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON
            -DWEFT_EXPECTED_VERSION="$version")
[[ -n $generator ]] && cmake_args+=(-G "$generator")
[[ -n $config ]] && cmake_args+=(-DCMAKE_BUILD_TYPE="$config")
run "$cmake_bin" "${cmake_args[@]}"
found_dir=$(sed -n 's/^weft_DIR:PATH=//p' "$cbuild/CMakeCache.txt")
if [[ $found_dir != "$cmake_dir" ]]; then
  echo "error: the consumer found weft in '$found_dir', not in the test prefix ($cmake_dir)" >&2
  exit 1
fi
echo "ok: weft_DIR=$found_dir"

begin "build the CMake consumer"
build_args=(--build "$cbuild" --verbose)
[[ -n $config ]] && build_args+=(--config "$config")
run "$cmake_bin" "${build_args[@]}"
exe() { # the consumer executable, wherever a multi-config generator put it
  local f
  f=$(find "$cbuild" -type f -name "$1" -perm -u+x -print -quit)
  [[ -n $f ]] || { echo "error: $1 was not built" >&2; return 1; }
  echo "$f"
}

begin "run consumer_shared (weft::weft)"
shared_exe=$(exe consumer_shared)
expect_needs_libweft "$shared_exe"
run_consumer env -u LD_LIBRARY_PATH "$shared_exe"

begin "run consumer_static (weft::weft_static)"
static_exe=$(exe consumer_static)
expect_no_libweft "$static_exe"
run_consumer env -u LD_LIBRARY_PATH "$static_exe"

# --- 4. pkg-config consumers ---------------------------------------------------------
export PKG_CONFIG_PATH="$pc_dir"
begin "pkg-config metadata"
run "$pkg_config" --print-errors --validate weft
pc_found=$("$pkg_config" --variable=pcfiledir weft)
[[ $pc_found -ef $pc_dir ]] || { echo "error: pkg-config found weft.pc in $pc_found, not $pc_dir" >&2; exit 1; }
pc_version=$("$pkg_config" --modversion weft)
echo "weft.pc version: $pc_version"
if [[ -n $version && $pc_version != "$version" ]]; then
  echo "error: weft.pc says version $pc_version, the build is $version" >&2; exit 1
fi
read -ra pc_cflags <<<"$("$pkg_config" --cflags weft)"
read -ra pc_libs <<<"$("$pkg_config" --libs weft)"
read -ra pc_static_libs <<<"$("$pkg_config" --static --libs weft)"
echo "cflags: ${pc_cflags[*]}"
echo "libs: ${pc_libs[*]}"
echo "static libs: ${pc_static_libs[*]}"
for flag in "${pc_cflags[@]}"; do
  [[ $flag != -std=* ]] || { echo "error: weft.pc Cflags must not choose the language standard ($flag)" >&2; exit 1; }
done
pc_libdir=$("$pkg_config" --variable=libdir weft)
[[ $pc_libdir -ef $libdir ]] || { echo "error: weft.pc libdir $pc_libdir is not $libdir" >&2; exit 1; }

runpath_of() { LC_ALL=C readelf -d "$1" | sed -n 's/.*(\(RPATH\|RUNPATH\)).*\[\(.*\)\]/\2/p'; }
begin "pkg-config: compile, link (shared) and run"
pcbuild="$work/pkg-config"
mkdir -p "$pcbuild"
pc_link "$pcbuild/consumer_shared" "$cxx" -std=c++20 "$consumer_dir/main.cpp" weft
expect_needs_libweft "$pcbuild/consumer_shared"
pc_runpath=$(runpath_of "$pcbuild/consumer_shared")
echo "RUNPATH: ${pc_runpath:-none}"
if ((pc_rpath)); then
  [[ ${pc_runpath%%:*} -ef $libdir ]] || { echo "error: the RUNPATH is not the prefix's libdir" >&2; exit 1; }
else
  [[ -z $pc_runpath ]] || { echo "error: WEFT_PKGCONFIG_RPATH is OFF but weft.pc adds a RUNPATH" >&2; exit 1; }
fi
run_pc_consumer "$pcbuild/consumer_shared"

begin "pkg-config --static weft-static: compile, link (libweft.a) and run"
pc_link "$pcbuild/consumer_static" "$cxx" -std=c++20 "$consumer_dir/main.cpp" weft-static --static
expect_no_libweft "$pcbuild/consumer_static"
run_consumer env -u LD_LIBRARY_PATH "$pcbuild/consumer_static"

# --- 5. the Argobots-compatible C API (weft::abt, abt.h, weft-abt.pc) ----------------------
if ((expect_abt)); then
  expect_needs() { # $1 executable, $2 library name prefix (e.g. libweft-abt.so)
    needed_libs "$1" | grep -qF "$2" || { echo "error: $1 does not depend on $2" >&2; return 1; }
  }
  begin "check the installed abt files"
  for f in "$prefix/include/abt.h" "$libdir/libweft-abt.a" "$libdir/libweft-abt.so" "$pc_dir/weft-abt.pc"; do
    [[ -e $f ]] || { echo "error: $f was not installed" >&2; exit 1; }
    echo "ok: ${f#"$prefix"/}"
  done
  hits=$(grep -lF -- "$build_dir" "$pc_dir/weft-abt.pc") && { echo "error: weft-abt.pc names $build_dir" >&2; exit 1; }

  begin "run consumer_abt_shared (weft::abt, C)"
  abt_shared_exe=$(exe consumer_abt_shared)
  expect_needs "$abt_shared_exe" libweft-abt.so
  run_consumer env -u LD_LIBRARY_PATH "$abt_shared_exe"

  begin "run consumer_abt_static (weft::abt_static, C)"
  abt_static_exe=$(exe consumer_abt_static)
  expect_no_libweft "$abt_static_exe"
  run_consumer env -u LD_LIBRARY_PATH "$abt_static_exe"

  begin "pkg-config weft-abt: compile as C99, link (shared) and run"
  pc_link "$pcbuild/consumer_abt_shared" "$cc" -std=gnu99 "$consumer_dir/abt_main.c" weft-abt
  expect_needs "$pcbuild/consumer_abt_shared" libweft-abt.so
  run_pc_consumer "$pcbuild/consumer_abt_shared"

  begin "pkg-config --static weft-abt-static: compile as C99, link (the archives) and run"
  pc_link "$pcbuild/consumer_abt_static" "$cc" -std=gnu99 "$consumer_dir/abt_main.c" weft-abt-static --static
  expect_no_libweft "$pcbuild/consumer_abt_static"
  run_consumer env -u LD_LIBRARY_PATH "$pcbuild/consumer_abt_static"
fi

# --- 6. weft::loops: the component, its library and weft-loops.pc ------------------------------
if ((expect_loops)); then
  begin "check the installed loops files"
  for f in "$prefix/include/weft/loops/loops.hpp" "$libdir/libweft-loops.a" "$pc_dir/weft-loops.pc"; do
    [[ -e $f ]] || { echo "error: $f was not installed" >&2; exit 1; }
    echo "ok: ${f#"$prefix"/}"
  done
  [[ ! -e $prefix/include/weft/loops/mpi.hpp ]] ||
    { echo "error: weft/loops/mpi.hpp is installed without its library (weft_loops_mpi)" >&2; exit 1; }

  begin "run consumer_loops (find_package(weft COMPONENTS loops), weft::loops)"
  loops_exe=$(exe consumer_loops)
  expect_needs_libweft "$loops_exe"
  run_consumer env -u LD_LIBRARY_PATH "$loops_exe"

  begin "pkg-config weft-loops: compile, link and run"
  pc_link "$pcbuild/consumer_loops" "$cxx" -std=c++20 "$consumer_dir/loops_main.cpp" weft-loops
  expect_needs_libweft "$pcbuild/consumer_loops"
  run_pc_consumer "$pcbuild/consumer_loops"

  begin "pkg-config --static weft-loops-static: compile, link (the archives) and run"
  pc_link "$pcbuild/consumer_loops_static" "$cxx" -std=c++20 "$consumer_dir/loops_main.cpp" \
    weft-loops-static --static
  expect_no_libweft "$pcbuild/consumer_loops_static"
  run_consumer env -u LD_LIBRARY_PATH "$pcbuild/consumer_loops_static"
fi

# --- 7. weft::omp: the component, libweft-omp, weft-omp.pc and the drop-in libgomp.so.1 ----------
if ((expect_omp)); then
  expect_omp_runtime() { # $1 executable: links libweft-omp.so and not libgomp
    needed_libs "$1" | grep -q '^libweft-omp\.so' ||
      { echo "error: $1 does not depend on libweft-omp.so" >&2; return 1; }
    if needed_libs "$1" | grep -q '^libgomp'; then
      echo "error: $1 links libgomp too" >&2; return 1
    fi
  }
  begin "check the installed omp files"
  dropin_dir="$libdir/weft-omp"
  for f in "$libdir/libweft-omp.so" "$dropin_dir/libgomp.so.1" "$pc_dir/weft-omp.pc"; do
    [[ -e $f ]] || { echo "error: $f was not installed" >&2; exit 1; }
    echo "ok: ${f#"$prefix"/}"
  done
  for lib in "$libdir/libweft-omp.so" "$dropin_dir/libgomp.so.1"; do
    resolved=$(env -u LD_LIBRARY_PATH ldd "$lib")
    loaded=$(sed -n 's/^[[:space:]]*libweft\.so[^ ]* => \([^ ]*\) .*/\1/p' <<<"$resolved")
    if [[ -z $loaded || ! $loaded -ef $(ls "$libdir"/libweft.so.* | head -n 1) ]]; then
      echo "$resolved" >&2
      echo "error: $lib does not load the moved prefix's libweft.so" >&2; exit 1
    fi
    echo "ok: ${lib#"$prefix"/} loads ${loaded#"$prefix"/}"
  done

  begin "run consumer_omp (find_package(weft COMPONENTS omp), weft::omp)"
  omp_exe=$(exe consumer_omp)
  expect_omp_runtime "$omp_exe"
  run_consumer env -u LD_LIBRARY_PATH "$omp_exe"

  begin "pkg-config weft-omp: compile with its Cflags, link with its Libs, run"
  run "$pkg_config" --print-errors --validate weft-omp
  read -ra omp_cflags <<<"$("$pkg_config" --cflags weft-omp)"
  read -ra omp_libs <<<"$("$pkg_config" --libs weft-omp)"
  echo "cflags: ${omp_cflags[*]}"
  echo "libs: ${omp_libs[*]}"
  pc_dropin=$("$pkg_config" --variable=dropindir weft-omp)
  [[ $pc_dropin -ef $dropin_dir ]] ||
    { echo "error: weft-omp.pc dropindir $pc_dropin is not $dropin_dir" >&2; exit 1; }
  run "$cc" -Wall -Wextra -Werror "${omp_cflags[@]}" -c "$consumer_dir/omp_main.c" -o "$pcbuild/omp_main.o"
  run "$cc" "$pcbuild/omp_main.o" "${omp_libs[@]}" -o "$pcbuild/consumer_omp"
  expect_omp_runtime "$pcbuild/consumer_omp"
  run_pc_consumer "$pcbuild/consumer_omp"

  begin "pkg-config --static weft-omp: the same flags (no archive), link and run"
  read -ra omp_static_libs <<<"$("$pkg_config" --static --libs weft-omp)"
  echo "static libs: ${omp_static_libs[*]}"
  run "$cc" "$pcbuild/omp_main.o" "${omp_static_libs[@]}" -o "$pcbuild/consumer_omp_static"
  expect_omp_runtime "$pcbuild/consumer_omp_static"
  run_pc_consumer "$pcbuild/consumer_omp_static"

  begin "a program built against libgomp runs on the installed drop-in (LD_LIBRARY_PATH)"
  run "$cc" -fopenmp "$consumer_dir/omp_main.c" -o "$pcbuild/consumer_libgomp"
  needed_libs "$pcbuild/consumer_libgomp" | grep -q '^libgomp\.so\.1' ||
    { echo "error: $pcbuild/consumer_libgomp does not depend on libgomp.so.1" >&2; exit 1; }
  run_consumer env LD_LIBRARY_PATH="$dropin_dir" "$pcbuild/consumer_libgomp"
fi

# find_package with components: an unknown required one fails naming it; as an optional
# component it is reported not found and the package still loads.
probe_components() { # DIR REQUIRED_COMPONENTS OPTIONAL_COMPONENTS
  mkdir -p "$1"
  cat >"$1/CMakeLists.txt" <<PROBE
cmake_minimum_required(VERSION 3.20)
project(weft_component_probe LANGUAGES CXX)
find_package(weft CONFIG REQUIRED COMPONENTS $2 OPTIONAL_COMPONENTS $3)
message(STATUS "weft_no_such_component_FOUND=\${weft_no_such_component_FOUND}")
PROBE
  local args=(-S "$1" -B "$1/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CXX_COMPILER="$cxx"
              -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON)
  [[ -n $generator ]] && args+=(-G "$generator")
  echo "+ $cmake_bin ${args[*]}"
  "$cmake_bin" "${args[@]}" >"$1/log" 2>&1
}
begin "find_package(weft COMPONENTS no_such_component) fails and names it"
probe_rc=0
probe_components "$work/probe-unknown" "no_such_component" "" || probe_rc=$?
cat "$work/probe-unknown/log"
((probe_rc != 0)) || { echo "error: an unknown required component did not fail the configuration" >&2; exit 1; }
grep -q 'no component named: no_such_component' "$work/probe-unknown/log" ||
  { echo "error: the failure does not name the unknown component" >&2; exit 1; }
echo "ok: failed, naming no_such_component"

begin "find_package(weft OPTIONAL_COMPONENTS no_such_component) loads the package"
optional_required=""
((expect_loops)) && optional_required=loops
probe_rc=0
probe_components "$work/probe-optional" "$optional_required" "no_such_component" || probe_rc=$?
cat "$work/probe-optional/log"
((probe_rc == 0)) || { echo "error: an unknown optional component failed the configuration" >&2; exit 1; }
grep -q 'weft_no_such_component_FOUND=FALSE' "$work/probe-optional/log" ||
  { echo "error: weft_no_such_component_FOUND is not FALSE" >&2; exit 1; }

# --- 8. installed libraries and programs find libweft.so from the moved prefix ------------------
begin "installed libraries find the libweft*.so they need without LD_LIBRARY_PATH"
for lib in "$libdir"/libweft*.so; do
  resolved=$(env -u LD_LIBRARY_PATH ldd "$lib")
  if grep -q 'not found' <<<"$resolved"; then
    echo "$resolved" >&2
    echo "error: $lib cannot find its libraries" >&2; exit 1
  fi
  while read -r name path; do
    [[ $path -ef $libdir/$name ]] || { echo "error: $lib loads $name from $path, not $libdir" >&2; exit 1; }
  done < <(sed -n 's/^[[:space:]]*\(libweft[^ ]*\) => \([^ ]*\) .*/\1 \2/p' <<<"$resolved")
  echo "ok: ${lib#"$prefix"/}"
done

if [[ -n $programs ]]; then
  begin "installed programs find libweft.so from the moved prefix"
  elsewhere="$work/elsewhere"
  mkdir -p "$elsewhere"
  for p in $programs; do
    bin="$prefix/bin/$p"
    [[ -x $bin ]] || { echo "error: $bin was not installed" >&2; exit 1; }
    runpath=$(LC_ALL=C readelf -d "$bin" | sed -n 's/.*(\(RPATH\|RUNPATH\)).*\[\(.*\)\]/\2/p')
    echo "$p: RUNPATH $runpath"
    [[ $runpath == *'$ORIGIN'* ]] || { echo "error: $bin has no \$ORIGIN-relative RUNPATH" >&2; exit 1; }
    for path in "$stage" "$build_dir" ${source_dir:+"$source_dir"}; do
      [[ $runpath != *"$path"* ]] || { echo "error: $bin's RUNPATH names $path" >&2; exit 1; }
    done
    resolved=$(cd "$elsewhere" && env -u LD_LIBRARY_PATH ldd "$bin")
    if grep -q 'not found' <<<"$resolved"; then
      echo "$resolved" >&2
      echo "error: $bin cannot find its libraries" >&2; exit 1
    fi
    loaded=$(sed -n 's/^[[:space:]]*libweft\.so[^ ]* => \([^ ]*\) .*/\1/p' <<<"$resolved")
    echo "$p loads libweft.so from: ${loaded:-nowhere}"
    if [[ -z $loaded || ! $loaded -ef $(ls "$libdir"/libweft.so.* | head -n 1) ]]; then
      echo "error: $bin does not load the moved prefix's libweft.so" >&2; exit 1
    fi
    case $p in
      weft-rm | weft-align)
        echo "+ (cd $elsewhere && $bin --help)"
        (cd "$elsewhere" && env -u LD_LIBRARY_PATH timeout 60 "$bin" --help >"$work/$p.help")
        head -n 3 "$work/$p.help"
        ;;
    esac
  done
fi

# --- 9. the tools -----------------------------------------------------------------------------
begin "installed tools: weft-trace-timeline, weft-elastic-demo-run, the gdb extension"
elsewhere="$work/elsewhere"
mkdir -p "$elsewhere"
timeline="$prefix/bin/weft-trace-timeline"
[[ -x $timeline ]] || { echo "error: $timeline was not installed" >&2; exit 1; }
if command -v gnuplot >/dev/null && command -v python3 >/dev/null; then
  (cd "$elsewhere" && env LD_LIBRARY_PATH="$libdir" WEFT_TRACE="$elsewhere/trace.json" timeout 120 \
     "$work/pkg-config/consumer_shared" >/dev/null)
  run "$timeline" "$elsewhere/trace.json" "$elsewhere/timeline.svg"
  grep -q '<svg' "$elsewhere/timeline.svg" || { echo "error: weft-trace-timeline drew no SVG" >&2; exit 1; }
  echo "ok: bin/weft-trace-timeline drew $elsewhere/timeline.svg"
else
  echo "gnuplot or python3 missing: weft-trace-timeline installed, not run"
fi
if [[ " $programs " == *" weft-elastic-demo "* ]]; then
  demo_run="$prefix/bin/weft-elastic-demo-run"
  [[ -x $demo_run ]] || { echo "error: $demo_run was not installed" >&2; exit 1; }
  found=$(cd "$elsewhere" && PATH=/usr/bin:/bin "$demo_run" --which)
  echo "$found"
  [[ $(sed -n 1p <<<"$found") -ef $prefix/bin/weft-elastic-demo &&
     $(sed -n 2p <<<"$found") -ef $prefix/bin/weft-rm ]] ||
    { echo "error: weft-elastic-demo-run does not run the prefix's programs" >&2; exit 1; }
fi
real_lib=$(readlink -f "$libdir/libweft.so")
rel_libdir=${libdir#"$prefix"}
for f in "$prefix/share/weft/gdb/weft_gdb.py" "$real_lib-gdb.py"; do
  [[ -f $f ]] || { echo "error: $f was not installed" >&2; exit 1; }
  echo "ok: ${f#"$prefix"/}"
done
# The distribution copy names the libdir the build was configured for, which is not this
# prefix: look for it by its file name.
[[ -n $(find "$prefix/share/gdb/auto-load" -name "$(basename "$real_lib")-gdb.py" -print -quit) ]] ||
  { echo "error: no share/gdb/auto-load/.../$(basename "$real_lib")-gdb.py" >&2; exit 1; }
echo "ok: share/gdb/auto-load/...${rel_libdir}/$(basename "$real_lib")-gdb.py"
if command -v gdb >/dev/null; then
  gdb_out=$(cd "$elsewhere" && env LD_LIBRARY_PATH="$libdir" timeout 120 gdb -nx -batch \
    -iex "add-auto-load-safe-path $libdir" -ex start \
    -ex "info auto-load python-scripts" -ex "help weft-bt" \
    "$work/pkg-config/consumer_shared" 2>&1) || true
  echo "$gdb_out" | grep -E 'gdb.py|weft-bt' || true
  grep -qE "^Yes +$real_lib-gdb\.py" <<<"$gdb_out" && grep -q 'backtrace of the parked' <<<"$gdb_out" ||
    { echo "$gdb_out" >&2; echo "error: gdb did not auto-load the extension from $libdir" >&2; exit 1; }
  echo "ok: gdb auto-loads $(basename "$real_lib")-gdb.py"
else
  echo "gdb missing: the auto-load copy is installed, not tried"
fi

step="done"
