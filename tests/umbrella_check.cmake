# SPDX-License-Identifier: Apache-2.0
# Checks that weft/weft.hpp includes every public header, directly or through another: the
# compiler lists the headers one translation unit of `#include <weft/weft.hpp>` reads (-MM), and
# every *.hpp under the public include trees must be among them. weft/detail/ is internal and
# left out. Run by ctest:
#   cmake -DCXX=<compiler> -DSOURCE_DIR=<weft source tree> -P umbrella_check.cmake
cmake_minimum_required(VERSION 3.20)
if(NOT CXX OR NOT SOURCE_DIR)
  message(FATAL_ERROR "usage: cmake -DCXX=<compiler> -DSOURCE_DIR=<source tree> -P umbrella_check.cmake")
endif()
set(trees "${SOURCE_DIR}/runtime/include" "${SOURCE_DIR}/schedulers/include")
set(include_flags)
foreach(tree IN LISTS trees)
  list(APPEND include_flags "-I${tree}")
endforeach()
execute_process(
  COMMAND ${CXX} -std=c++20 ${include_flags} -MM -x c++ "${SOURCE_DIR}/runtime/include/weft/weft.hpp"
  OUTPUT_VARIABLE deps
  ERROR_VARIABLE errors
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the compiler could not read weft.hpp:\n${errors}")
endif()
# The dependency list, one path per element, each made absolute and free of "..".
string(REPLACE "\\\n" " " deps "${deps}")
string(REGEX REPLACE "^[^:]*:" "" deps "${deps}")
string(REGEX REPLACE "[ \t\r\n]+" ";" deps "${deps}")
set(read)
foreach(dep IN LISTS deps)
  if(dep STREQUAL "")
    continue()
  endif()
  get_filename_component(dep "${dep}" REALPATH)
  list(APPEND read "${dep}")
endforeach()

set(missing)
set(checked 0)
foreach(tree IN LISTS trees)
  file(GLOB_RECURSE headers "${tree}/weft/*.hpp")
  foreach(header IN LISTS headers)
    file(RELATIVE_PATH name "${tree}" "${header}")
    if(name MATCHES "^weft/detail/" OR name STREQUAL "weft/weft.hpp")
      continue()
    endif()
    math(EXPR checked "${checked} + 1")
    get_filename_component(real "${header}" REALPATH)
    if(NOT real IN_LIST read)
      list(APPEND missing "${name}")
    endif()
  endforeach()
endforeach()
if(missing)
  list(JOIN missing "\n  " missing)
  message(FATAL_ERROR "weft/weft.hpp does not include these public headers:\n  ${missing}")
endif()
message(STATUS "weft/weft.hpp includes all ${checked} public headers")
