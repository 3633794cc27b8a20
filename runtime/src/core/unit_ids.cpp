// SPDX-License-Identifier: Apache-2.0
// A stream's next block of unit ids (unit_ids.hpp).
#include "core/unit_ids.hpp"

#include "core/runtime_state.hpp"
#include "platform/assert.hpp"

namespace weft::detail {

unit_id unit_ids::next_block() noexcept {
  const unit_id block = next_id_block.fetch_add(1, std::memory_order_relaxed);
  next_ = block * block_size + 1;
  end_ = next_ + block_size;
  assert_invariant([this] { return next_ != 0 && next_ < end_; },
                   "unit ids: a block's ids are nonzero (0 names no unit)");
  return next_++;
}

}  // namespace weft::detail
