// SPDX-License-Identifier: Apache-2.0
#include "weft/version.hpp"

namespace weft {

// Compiled into the library, so it reports the library's version, not the caller's headers'.
std::string_view version() noexcept {
  return WEFT_VERSION_STRING;
}

}  // namespace weft
