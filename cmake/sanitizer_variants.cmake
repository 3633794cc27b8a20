# SPDX-License-Identifier: Apache-2.0
# libweft_tsan.so and libweft_asan.so: the library built with -fsanitize=thread and with
# -fsanitize=address,undefined, for programs built with the same sanitizer against an installed
# weft (weft::weft_tsan / weft::weft_asan; weft-tsan.pc / weft-asan.pc). A sanitized program
# cannot use the plain libweft.so: the sanitizer must be told of every context switch
# (runtime/src/platform/sanitizer.hpp), and ThreadSanitizer builds lay work units out differently
# (weft/work_unit.hpp). The targets carry the sanitizer flag as a usage requirement, so a
# program linking one is compiled and linked with its sanitizer.
option(WEFT_SANITIZER_VARIANTS
  "Also build and install libweft_tsan.so and libweft_asan.so (plain builds only)" ON)
set(WEFT_SANITIZER_VARIANT_TARGETS "")
if(NOT WEFT_SANITIZER_VARIANTS OR WEFT_SANITIZE)
  return()
endif()

set(_weft_variant_tsan -fsanitize=thread)
set(_weft_variant_asan -fsanitize=address,undefined)
foreach(variant tsan asan)
  set(lib weft_${variant})
  set(flags ${_weft_variant_${variant}})
  add_library(${lib} SHARED ${WEFT_RUNTIME_SOURCES} ${WEFT_SCHEDULER_SOURCES})
  add_library(weft::${lib} ALIAS ${lib})
  target_include_directories(${lib}
    PUBLIC
      $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/runtime/include>
      $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/schedulers/include>
      $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
    PRIVATE
      ${WEFT_RUNTIME_PRIVATE_INCLUDES}
      ${PROJECT_SOURCE_DIR}/runtime/internal)
  target_compile_features(${lib} PUBLIC cxx_std_20)
  target_compile_options(${lib}
    PRIVATE -Wall -Wextra -fno-semantic-interposition -fno-omit-frame-pointer
    PUBLIC ${flags})
  target_compile_definitions(${lib} PRIVATE WEFT_SANITIZED=1)
  target_link_options(${lib} PUBLIC ${flags}
    PRIVATE -Wl,-Bsymbolic-functions "LINKER:--version-script=${CMAKE_CURRENT_LIST_DIR}/libweft.map")
  set_property(TARGET ${lib} APPEND PROPERTY LINK_DEPENDS "${CMAKE_CURRENT_LIST_DIR}/libweft.map")
  target_link_libraries(${lib} PUBLIC Threads::Threads
    PRIVATE $<BUILD_INTERFACE:Boost::context> $<BUILD_INTERFACE:PkgConfig::HWLOC>
            $<BUILD_INTERFACE:PkgConfig::NUMA> $<BUILD_INTERFACE:nlohmann_json::nlohmann_json>)
  set_target_properties(${lib} PROPERTIES VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR})
  list(APPEND WEFT_SANITIZER_VARIANT_TARGETS ${lib})
endforeach()
