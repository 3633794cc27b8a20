// SPDX-License-Identifier: Apache-2.0
// The out-of-line part of the extension API (weft/ext/observe.hpp, weft/ext/stream.hpp).
#include "core/stream.hpp"
#include "observe/observe.hpp"
#include "platform/assert.hpp"
#include "weft/ext/observe.hpp"
#include "weft/ext/stream.hpp"

namespace weft::ext {

void note_steal_attempt() noexcept {
  detail::obs::steal_attempt();
}

void note_stolen(work_unit* first, std::size_t n) noexcept {
  detail::assert_invariant([first, n] { return n == 0 || first != nullptr; },
                           "stealing: a steal of units names the first it took");
  detail::obs::stole(first, n);
}

void wake_if_deep_parked(execution_stream& s) noexcept {
  detail::stream& d = detail::impl(s);
  if (d.deep_parked()) d.unpark();
}

}  // namespace weft::ext
