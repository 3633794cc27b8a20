// SPDX-License-Identifier: Apache-2.0
// Unit ids, handed out by each stream from blocks of the process-wide sequence.
#pragma once

#include "platform/assert.hpp"
#include "weft/work_unit.hpp"

namespace weft::detail {

/// The stream's current block of unit ids: next() takes no atomic but once per block. Owned by
/// the stream's thread (ids are taken by units created on it).
class unit_ids {
 public:
  /// Ids per block.
  static constexpr unit_id block_size = 1024;
  /// A fresh id, unique over the process.
  unit_id next() noexcept {
    if (next_ == end_) [[unlikely]]
      return next_block();
    assert_invariant([this] { return next_ != 0 && next_ < end_; },
                     "unit ids: a block hands out its nonzero ids in order");
    return next_++;
  }

 private:
  /// next() when the block is used up: takes a new block of the process-wide sequence.
  unit_id next_block() noexcept;

  unit_id next_ = 0;
  unit_id end_ = 0;
};

}  // namespace weft::detail
