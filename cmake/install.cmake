# SPDX-License-Identifier: Apache-2.0
# Installation rules, the exported CMake package and weft.pc are kept in this file.
#
# Installed layout (relative to the install prefix, which may be moved afterwards):
#   include/weft/*.hpp, include/weft/schedulers/*.hpp     public headers
#   <libdir>/libweft.so*, <libdir>/libweft.a               weft::weft, weft::weft_static
#   <libdir>/cmake/weft/weft{Config,ConfigVersion,Targets*}.cmake
#   <libdir>/pkgconfig/weft.pc, weft-static.pc            libweft.so, libweft.a
#   <libdir>/libweft_{tsan,asan}.so*, <libdir>/pkgconfig/weft-{tsan,asan}.pc
#                                                          weft::weft_tsan, weft::weft_asan
#   include/abt.h, <libdir>/libweft-abt.{so*,a}, <libdir>/pkgconfig/weft-abt{,-static}.pc
#                                                          weft::abt, weft::abt_static (when built)
#   include/weft/{loops,parallel}/*.hpp, <libdir>/libweft-loops.a,
#   <libdir>/pkgconfig/weft-loops{,-static}.pc             weft::loops
#   <libdir>/libweft-omp.so*, <libdir>/weft-omp/libgomp.so.1, <libdir>/pkgconfig/weft-omp.pc
#                                                          weft::omp, the drop-in libgomp
#   bin/weft-rm, bin/weft-align, bin/weft-elastic-demo     the programs (when built)
#   bin/weft-elastic-demo-run                              apps/elastic/demo.sh (with the demo)
#   bin/weft-trace-timeline                                scripts/trace-timeline
#   share/weft/gdb/weft_gdb.py, <libdir>/libweft.so.<version>-gdb.py,
#   share/gdb/auto-load/<full libdir>/libweft.so.<version>-gdb.py
#                                                          the gdb extension
# Nothing installed names an absolute path: the CMake files locate the prefix from
# their own directory, the .pc files from ${pcfiledir}, and the programs find libweft.so
# through a $ORIGIN-relative RPATH.
include(CMakePackageConfigHelpers)

set(WEFT_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/weft"
  CACHE STRING "Where weftConfig.cmake is installed, relative to the prefix")
set(WEFT_INSTALL_PKGCONFIGDIR "${CMAKE_INSTALL_LIBDIR}/pkgconfig"
  CACHE STRING "Where weft.pc is installed, relative to the prefix")
mark_as_advanced(WEFT_INSTALL_CMAKEDIR WEFT_INSTALL_PKGCONFIGDIR)

foreach(dir CMAKE_INSTALL_LIBDIR CMAKE_INSTALL_INCLUDEDIR WEFT_INSTALL_CMAKEDIR WEFT_INSTALL_PKGCONFIGDIR)
  if(IS_ABSOLUTE "${${dir}}")
    message(WARNING "${dir}='${${dir}}' is absolute: the installed weft package "
                    "will not be relocatable (give it relative to CMAKE_INSTALL_PREFIX)")
  endif()
endforeach()

# --- libraries -------------------------------------------------------------------
# weft_objects is not installed or exported: both libraries are built from its
# objects ($<TARGET_OBJECTS:...>) rather than linked to it.
install(TARGETS weft weft_static
  EXPORT weftTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
# (The include directory is already part of both targets' INSTALL_INTERFACE.)

# --- headers -----------------------------------------------------------------------
# Both trees install into the same include/ directory: runtime/include/weft/... and
# schedulers/include/weft/schedulers/... keep their weft/ and weft/schedulers/ layout.
foreach(tree runtime schedulers)
  install(DIRECTORY "${PROJECT_SOURCE_DIR}/${tree}/include/"
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
    FILES_MATCHING
      PATTERN "*.hpp"
      PATTERN "*.h"
      PATTERN "*.ipp"
      PATTERN "*.inl")
endforeach()

# --- CMake package: find_package(weft CONFIG) -------------------------------------
install(EXPORT weftTargets
  NAMESPACE weft::
  FILE weftTargets.cmake
  DESTINATION ${WEFT_INSTALL_CMAKEDIR})

configure_package_config_file(
  "${CMAKE_CURRENT_LIST_DIR}/weftConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/weftConfig.cmake"
  INSTALL_DESTINATION ${WEFT_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_LIBDIR)
write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/weftConfigVersion.cmake"
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMajorVersion)
install(FILES
  "${PROJECT_BINARY_DIR}/weftConfig.cmake"
  "${PROJECT_BINARY_DIR}/weftConfigVersion.cmake"
  DESTINATION ${WEFT_INSTALL_CMAKEDIR})

# --- pkg-config: weft.pc -------------------------------------------------------------
# prefix is derived from ${pcfiledir} (the directory weft.pc is found in), so the
# installed tree can be moved: "../.." for lib/pkgconfig, "../../.." for
# lib/x86_64-linux-gnu/pkgconfig.
if(IS_ABSOLUTE "${WEFT_INSTALL_PKGCONFIGDIR}")
  set(WEFT_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH WEFT_PC_PREFIX "/weft-prefix/${WEFT_INSTALL_PKGCONFIGDIR}" "/weft-prefix")
  string(REGEX REPLACE "/$" "" WEFT_PC_PREFIX "${WEFT_PC_PREFIX}")
  set(WEFT_PC_PREFIX "\${pcfiledir}/${WEFT_PC_PREFIX}")
endif()
foreach(dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
    set(WEFT_PC_${dir} "${CMAKE_INSTALL_${dir}}")
  else()
    set(WEFT_PC_${dir} "\${prefix}/${CMAKE_INSTALL_${dir}}")
  endif()
endforeach()
# WEFT_PKGCONFIG_RPATH: cmake/install_options.cmake.
set(WEFT_PC_RPATH "")
if(WEFT_PKGCONFIG_RPATH)
  set(WEFT_PC_RPATH " -Wl,-rpath,\${libdir}")
endif()
# -lweft finds libweft.so whenever it is installed beside libweft.a, and pkg-config --static only
# appends Libs.private: it cannot take the shared library's name back. The archives therefore have
# .pc files of their own (weft-static, weft-abt-static, weft-loops-static) that name them with
# -l:libNAME.a and list everything the final link needs in Libs, so that they give the same
# flags with or without --static.
foreach(pc weft weft-static)
  configure_file("${CMAKE_CURRENT_LIST_DIR}/${pc}.pc.in" "${PROJECT_BINARY_DIR}/${pc}.pc" @ONLY)
  install(FILES "${PROJECT_BINARY_DIR}/${pc}.pc" DESTINATION ${WEFT_INSTALL_PKGCONFIGDIR})
endforeach()

# --- sanitizer variants: weft::weft_tsan, weft::weft_asan, weft-tsan.pc, weft-asan.pc ----
# (cmake/sanitizer_variants.cmake; built unless WEFT_SANITIZER_VARIANTS is OFF)
if(WEFT_SANITIZER_VARIANT_TARGETS)
  install(TARGETS ${WEFT_SANITIZER_VARIANT_TARGETS}
    EXPORT weftTargets
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  foreach(lib IN LISTS WEFT_SANITIZER_VARIANT_TARGETS)
    string(REPLACE "weft_" "" WEFT_PC_VARIANT "${lib}")
    get_target_property(WEFT_PC_VARIANT_FLAGS ${lib} INTERFACE_COMPILE_OPTIONS)
    list(JOIN WEFT_PC_VARIANT_FLAGS " " WEFT_PC_VARIANT_FLAGS)
    configure_file("${CMAKE_CURRENT_LIST_DIR}/weft-sanitizer.pc.in"
      "${PROJECT_BINARY_DIR}/weft-${WEFT_PC_VARIANT}.pc" @ONLY)
    install(FILES "${PROJECT_BINARY_DIR}/weft-${WEFT_PC_VARIANT}.pc"
      DESTINATION ${WEFT_INSTALL_PKGCONFIGDIR})
  endforeach()
endif()

# --- gdb extension: info weft-streams, info weft-units, weft-bt (tools/gdb) --------------
# When gdb loads a library it looks for <real path of the library>-gdb.py, then for the same
# path under each auto-load scripts directory (<its data directory>/auto-load by default), and
# runs the first it finds if it lies under `auto-load safe-path`. Two copies cover both cases:
#   <libdir>/libweft.so.<version>-gdb.py follows the library wherever the prefix is (moved or
#     not); gdb runs it once <libdir> is a safe path (`add-auto-load-safe-path <libdir>`);
#   share/gdb/auto-load/<full libdir>/... is found and trusted with no setting when the prefix
#     is gdb's own (/usr), the distribution's layout.
# share/weft/gdb/weft_gdb.py is for `source`, e.g. for a program linked with libweft.a.
install(FILES "${PROJECT_SOURCE_DIR}/tools/gdb/weft_gdb.py"
  DESTINATION "${CMAKE_INSTALL_DATADIR}/weft/gdb")
install(FILES "${PROJECT_SOURCE_DIR}/tools/gdb/weft_gdb.py"
  DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  RENAME "libweft.so.${PROJECT_VERSION}-gdb.py")
install(FILES "${PROJECT_SOURCE_DIR}/tools/gdb/weft_gdb.py"
  DESTINATION "${CMAKE_INSTALL_DATADIR}/gdb/auto-load${CMAKE_INSTALL_FULL_LIBDIR}"
  RENAME "libweft.so.${PROJECT_VERSION}-gdb.py")

# --- scripts: the trace timeline and the elastic demo's driver ------------------------------------
# Both find what they need from their own directory or PATH, so they run from any prefix.
install(PROGRAMS "${PROJECT_SOURCE_DIR}/scripts/trace-timeline"
  DESTINATION ${CMAKE_INSTALL_BINDIR} RENAME weft-trace-timeline)
if(TARGET weft-elastic-demo)
  install(PROGRAMS "${PROJECT_SOURCE_DIR}/apps/elastic/demo.sh"
    DESTINATION ${CMAKE_INSTALL_BINDIR} RENAME weft-elastic-demo-run)
endif()

# --- the Argobots-compatible C API: weft::abt, abt.h, weft-abt.pc -----------------------
# abt.h goes straight into include/ (Argobots programs say #include <abt.h>); the libraries
# join weft's export set, so find_package(weft) defines weft::abt and weft::abt_static.
if(TARGET weft_abt)
  install(TARGETS weft_abt weft_abt_static
    EXPORT weftTargets
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(FILES "${PROJECT_SOURCE_DIR}/abt/include/abt.h" DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  foreach(pc weft-abt weft-abt-static)
    configure_file("${CMAKE_CURRENT_LIST_DIR}/${pc}.pc.in" "${PROJECT_BINARY_DIR}/${pc}.pc" @ONLY)
    install(FILES "${PROJECT_BINARY_DIR}/${pc}.pc" DESTINATION ${WEFT_INSTALL_PKGCONFIGDIR})
  endforeach()
endif()

# --- weft::loops: the parallel-loop layer (loops/), component "loops" ---------------------------
# A static library over libweft.so. mpi.hpp is left out: it belongs to weft_loops_mpi, which needs
# MPI and stays in the build tree. The layer's headers include the worksharing core's
# (weft/parallel/, header-only), installed with them.
if(TARGET weft_loops)
  install(TARGETS weft_loops
    EXPORT weftTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(DIRECTORY "${PROJECT_SOURCE_DIR}/loops/include/weft/loops"
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/weft
    FILES_MATCHING
      PATTERN "*.hpp"
      PATTERN "mpi.hpp" EXCLUDE)
  install(DIRECTORY "${PROJECT_SOURCE_DIR}/parallel/include/weft/parallel"
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/weft
    FILES_MATCHING PATTERN "*.hpp")
  foreach(pc weft-loops weft-loops-static)
    configure_file("${CMAKE_CURRENT_LIST_DIR}/${pc}.pc.in" "${PROJECT_BINARY_DIR}/${pc}.pc" @ONLY)
    install(FILES "${PROJECT_BINARY_DIR}/${pc}.pc" DESTINATION ${WEFT_INSTALL_PKGCONFIGDIR})
  endforeach()
endif()

# --- weft::omp: libweft-omp, the libgomp-compatible OpenMP runtime (omp/), component "omp" ------
# No header: programs include the compiler's own omp.h. The shared library joins weft's export set
# (its link to libweft.so is private: found through its $ORIGIN RUNPATH); the drop-in libgomp.so.1
# goes into a directory of its own, so that LD_LIBRARY_PATH=PREFIX/lib/weft-omp replaces libgomp
# and nothing else.
if(TARGET weft_omp)
  install(TARGETS weft_omp
    EXPORT weftTargets
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(TARGETS weft_omp_dropin
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/weft-omp NAMELINK_SKIP)
  configure_file("${CMAKE_CURRENT_LIST_DIR}/weft-omp.pc.in" "${PROJECT_BINARY_DIR}/weft-omp.pc" @ONLY)
  install(FILES "${PROJECT_BINARY_DIR}/weft-omp.pc" DESTINATION ${WEFT_INSTALL_PKGCONFIGDIR})
endif()

# --- programs ---------------------------------------------------------------------------------------
# Each finds libweft.so (and libweft-abt.so) through an RPATH relative to its own directory,
# $ORIGIN/../lib for the default layout, so it runs from any prefix, moved or not, without
# LD_LIBRARY_PATH. (The build tree keeps CMake's absolute build RPATH.)
if(IS_ABSOLUTE "${CMAKE_INSTALL_BINDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(WEFT_PROGRAM_RPATH "${CMAKE_INSTALL_FULL_LIBDIR}")
else()
  file(RELATIVE_PATH _weft_bin_to_lib "/weft-prefix/${CMAKE_INSTALL_BINDIR}" "/weft-prefix/${CMAKE_INSTALL_LIBDIR}")
  set(WEFT_PROGRAM_RPATH "$ORIGIN/${_weft_bin_to_lib}")
endif()
foreach(program weft-rm weft-align weft-elastic-demo)
  if(NOT TARGET ${program})
    continue()
  endif()
  set_target_properties(${program} PROPERTIES INSTALL_RPATH "${WEFT_PROGRAM_RPATH}")
  # weft-rm installs itself (tools/weft-rm/CMakeLists.txt); the applications are installed here.
  if(NOT program STREQUAL "weft-rm")
    install(TARGETS ${program} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endforeach()
