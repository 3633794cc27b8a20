# SPDX-License-Identifier: Apache-2.0
# runtime/include/weft/version.hpp states the version in the macros WEFT_VERSION_{MAJOR,MINOR,
# PATCH,STRING}; it must be the project's version. Checked at configure time, so that a version
# bump in CMakeLists.txt without the header (or the other way round) fails the build at once.
set(_weft_version_header "${PROJECT_SOURCE_DIR}/runtime/include/weft/version.hpp")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_weft_version_header}")
file(STRINGS "${_weft_version_header}" _weft_version_lines REGEX "^#define WEFT_VERSION_")
foreach(part MAJOR MINOR PATCH STRING)
  set(_weft_header_${part} "")
  foreach(line IN LISTS _weft_version_lines)
    if(line MATCHES "^#define WEFT_VERSION_${part} \"?([0-9.]+)\"?$")
      set(_weft_header_${part} "${CMAKE_MATCH_1}")
    endif()
  endforeach()
endforeach()
set(_weft_header_version "${_weft_header_MAJOR}.${_weft_header_MINOR}.${_weft_header_PATCH}")
if(NOT _weft_header_version STREQUAL PROJECT_VERSION OR NOT _weft_header_STRING STREQUAL PROJECT_VERSION)
  message(FATAL_ERROR "runtime/include/weft/version.hpp says ${_weft_header_version} "
                      "(WEFT_VERSION_STRING \"${_weft_header_STRING}\"), the project is "
                      "${PROJECT_VERSION}: update one of them")
endif()
