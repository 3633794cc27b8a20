// SPDX-License-Identifier: Apache-2.0
// The version of weft: the one a program is compiled against (macros) and the one of the library
// it runs with (weft::version()). The numbers are the CMake project version; the build checks
// that they agree (cmake/version.cmake).
#pragma once

#include <string_view>

/// Major version: incremented on an incompatible change of the API or of libweft.so's ABI.
#define WEFT_VERSION_MAJOR 0
/// Minor version: incremented when features are added compatibly.
#define WEFT_VERSION_MINOR 1
/// Patch version: incremented for compatible fixes.
#define WEFT_VERSION_PATCH 0
/// "MAJOR.MINOR.PATCH" of the headers being compiled.
#define WEFT_VERSION_STRING "0.1.0"

namespace weft {

/// The version of the weft library the program runs with, as "MAJOR.MINOR.PATCH"; it differs
/// from WEFT_VERSION_STRING when the program was compiled against other headers.
std::string_view version() noexcept;

}  // namespace weft
