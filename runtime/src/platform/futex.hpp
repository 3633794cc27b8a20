// SPDX-License-Identifier: Apache-2.0
// The runtime's spellings of the futex wrappers (weft/ext/park.hpp), used only on slow paths.
#pragma once

#include "weft/ext/park.hpp"

namespace weft::detail {

using ext::futex_wait;
using ext::futex_wake;

}  // namespace weft::detail
