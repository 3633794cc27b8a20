# SPDX-License-Identifier: Apache-2.0
# Build options that apply to every target defined from here on (the libraries, abt/, tests/,
# bench/, apps/ and tools/), and the version check.
include(${CMAKE_CURRENT_LIST_DIR}/version.cmake)

option(WEFT_WERROR "Treat compiler warnings as errors (scripts/test turns it on)" OFF)
# On by default in a Debug build; the asan, tsan and debug presets and scripts/test turn it on.
if(CMAKE_BUILD_TYPE STREQUAL "Debug")
  set(_weft_asserts_default ON)
else()
  set(_weft_asserts_default OFF)
endif()
option(WEFT_DEBUG_ASSERTS
  "Check the runtime's internal invariants (WEFT_ENABLE_ASSERTS=1, runtime/src/platform/assert.hpp)"
  ${_weft_asserts_default})
if(WEFT_WERROR)
  add_compile_options(-Werror)
  # GCC 12 reports a false -Wrestrict inside libstdc++'s std::string operator+ at -O2 and above
  # (GCC bug 105651): keep it a warning there rather than rewrite correct string code.
  add_compile_options($<$<AND:$<COMPILE_LANG_AND_ID:CXX,GNU>,$<VERSION_LESS:$<CXX_COMPILER_VERSION>,13>>:-Wno-error=restrict>)
  # GCC 12 and later warn that ThreadSanitizer does not model std::atomic_thread_fence
  # (-Wtsan): a statement about the tool, not a defect; it stays visible as a warning.
  if(WEFT_SANITIZE STREQUAL "thread")
    add_compile_options(
      $<$<AND:$<COMPILE_LANG_AND_ID:CXX,GNU>,$<VERSION_GREATER_EQUAL:$<CXX_COMPILER_VERSION>,12>>:-Wno-error=tsan>
      $<$<AND:$<COMPILE_LANG_AND_ID:C,GNU>,$<VERSION_GREATER_EQUAL:$<C_COMPILER_VERSION>,12>>:-Wno-error=tsan>)
  endif()
endif()
# A directory property rather than a usage requirement: the library, the abt layer (built from
# its own objects), the tests and the apps all see one setting, and an installed package does
# not impose it on its consumers.
if(WEFT_DEBUG_ASSERTS)
  add_compile_definitions(WEFT_ENABLE_ASSERTS=1)
endif()

# Two sets of objects, two libraries: weft::weft (shared) and weft::weft_static.
# The runtime (runtime/src): the only objects that see its private headers. It names no stock
# pool or scheduler: those reach it through weft/ext/defaults.hpp.
add_library(weft_objects OBJECT ${WEFT_RUNTIME_SOURCES})
target_include_directories(weft_objects
  PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/runtime/include>
  PRIVATE
    ${WEFT_RUNTIME_PRIVATE_INCLUDES})
# The stock pools and schedulers (schedulers/src), built as a program's own pool would be: against
# the public and extension headers (weft/ext/) only. runtime/src is not on their include path, so
# a stock pool cannot take a path a user's pool cannot.
add_library(weft_scheduler_objects OBJECT ${WEFT_SCHEDULER_SOURCES})
target_include_directories(weft_scheduler_objects
  PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/runtime/include>
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/schedulers/include>)
foreach(objects weft_objects weft_scheduler_objects)
  # Calls inside the library bind locally (no PLT, and GCC may inline across them): nobody
  # interposes weft's internals.
  target_compile_options(${objects} PRIVATE -Wall -Wextra -Wpedantic -fno-semantic-interposition)
  target_link_libraries(${objects} PRIVATE Threads::Threads)
endforeach()
target_link_libraries(weft_objects PRIVATE Boost::context PkgConfig::HWLOC PkgConfig::NUMA
  $<BUILD_INTERFACE:nlohmann_json::nlohmann_json>)
# What the project's own layers (the Argobots layer in abt/, and the tests) need from the runtime
# beyond the public API: runtime/internal/weft/internal/, never installed. Not a usage
# requirement of weft or weft_static, so no installed package or export names it.
add_library(weft_internal INTERFACE)
target_include_directories(weft_internal INTERFACE
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/runtime/internal>)
target_link_libraries(weft_objects PRIVATE weft_internal)

foreach(kind SHARED STATIC)
  if(kind STREQUAL "SHARED")
    set(lib weft)
  else()
    set(lib weft_static)
  endif()
  add_library(${lib} ${kind} $<TARGET_OBJECTS:weft_objects> $<TARGET_OBJECTS:weft_scheduler_objects>)
  add_library(weft::${lib} ALIAS ${lib})
  target_include_directories(${lib} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/runtime/include>
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/schedulers/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_features(${lib} PUBLIC cxx_std_20)
  target_link_libraries(${lib} PUBLIC Threads::Threads
    PRIVATE $<BUILD_INTERFACE:Boost::context> $<BUILD_INTERFACE:PkgConfig::HWLOC> $<BUILD_INTERFACE:PkgConfig::NUMA>)
endforeach()
set_target_properties(weft PROPERTIES VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR})
# Only the public API is exported (cmake/libweft.map: weft::detail is local but for what inline code
# in the public headers calls); in-tree code that needs the internals links weft_static.
option(WEFT_HIDE_INTERNALS "Export only the public API from libweft.so (cmake/libweft.map)" ON)
if(WEFT_HIDE_INTERNALS)
  target_link_options(weft PRIVATE "LINKER:--version-script=${CMAKE_CURRENT_LIST_DIR}/libweft.map")
  set_property(TARGET weft APPEND PROPERTY LINK_DEPENDS "${CMAKE_CURRENT_LIST_DIR}/libweft.map")
endif()
# Calls between the library's own functions bind at link time (no PLT stub, no GOT load): nobody
# interposes weft's internals, and a yield or a creation crosses several translation units.
target_link_options(weft PRIVATE -Wl,-Bsymbolic-functions)
set_target_properties(weft_static PROPERTIES OUTPUT_NAME weft)
# A static archive carries no link dependencies of its own: name them for consumers.
target_link_libraries(weft_static INTERFACE
  $<INSTALL_INTERFACE:boost_context> $<INSTALL_INTERFACE:hwloc> $<INSTALL_INTERFACE:numa>)
