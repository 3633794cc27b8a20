// SPDX-License-Identifier: Apache-2.0
// Checked invariants: on in builds configured with WEFT_DEBUG_ASSERTS (the debug, asan and tsan
// configurations), compiled to nothing in release builds. The runtime's spellings of the checks
// the extension API gives pools and schedulers (weft/ext/assert.hpp).
#pragma once

#include "weft/ext/assert.hpp"

namespace weft::detail {

using ext::assert_invariant;
using ext::asserts_enabled;
using ext::invariant_failed;

}  // namespace weft::detail
