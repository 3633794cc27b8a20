# SPDX-License-Identifier: Apache-2.0
# Every dependency is a Debian package (scripts/install-deps installs them).
find_package(Threads REQUIRED)
find_package(Boost 1.71 REQUIRED COMPONENTS context)
find_package(PkgConfig REQUIRED)
pkg_check_modules(HWLOC REQUIRED IMPORTED_TARGET hwloc)
pkg_check_modules(NUMA REQUIRED IMPORTED_TARGET numa)
# nlohmann-json (header-only): the trace writer's string escaping (runtime/src/observe/trace.cpp),
# the bench reports, apps/align and the tests. Compile time only: libweft gains no run-time
# dependency, and no installed header includes it.
find_package(nlohmann_json 3 REQUIRED)
# libdw (elfutils; Debian libdw-dev): the file:line of backtrace frames. Headers only at build
# time: runtime/src/platform/backtrace.cpp loads libdw.so.1 with dlopen on first use, and without
# it (or built without the headers) backtraces name functions only.
find_path(WEFT_LIBDW_INCLUDE_DIR elfutils/libdwfl.h)
if(NOT WEFT_LIBDW_INCLUDE_DIR)
  message(STATUS "weft: libdw's headers not found (Debian: libdw-dev): backtraces without file:line")
endif()
# apps/align: SAM output (htslib) and command-line parsing (CLI11, header-only).
pkg_check_modules(HTSLIB REQUIRED IMPORTED_TARGET htslib)
find_package(CLI11 2.1 REQUIRED CONFIG)
