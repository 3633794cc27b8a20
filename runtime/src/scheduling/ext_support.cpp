// SPDX-License-Identifier: Apache-2.0
// The out-of-line part of the extension API (weft/ext/observe.hpp).
#include "observe.hpp"
#include "weft/ext/observe.hpp"

namespace weft::ext {

void note_steal_attempt() noexcept {
  detail::obs::steal_attempt();
}

void note_stolen(work_unit* first, std::size_t n) noexcept {
  detail::obs::stole(first, n);
}

}  // namespace weft::ext
