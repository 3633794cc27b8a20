// SPDX-License-Identifier: Apache-2.0
// Units pinned to a stream and forwarded to it by other streams, waiting to run there.
#pragma once

#include "platform/assert.hpp"
#include "weft/work_unit.hpp"

namespace weft::detail {

/// A FIFO list through the units' pool_next hook. Owned by the stream's thread alone: filled from
/// the inbox and run by check_events(), emptied by shut_down_scheduling(); never shared.
class pinned_units {
 public:
  /// Appends `u`.
  void push_back(work_unit* u) noexcept {
    assert_invariant([this, u] { return u != nullptr && u != tail_; },
                     "invariant 2: a pinned unit is queued once");
    assert_invariant([this] { return (head_ == nullptr) == (tail_ == nullptr); },
                     "pinned units: head and tail are both set or both empty");
    u->pool_next = nullptr;
    (tail_ ? tail_->pool_next : head_) = u;
    tail_ = u;
  }
  /// Takes the oldest unit, or nullptr.
  work_unit* pop_front() noexcept {
    work_unit* u = head_;
    assert_invariant([this] { return (head_ == nullptr) == (tail_ == nullptr); },
                     "pinned units: head and tail are both set or both empty");
    if (u) {
      head_ = u->pool_next;
      if (!head_) tail_ = nullptr;
    }
    return u;
  }
  /// True when no unit waits.
  bool empty() const noexcept { return head_ == nullptr; }

 private:
  work_unit* head_ = nullptr;
  work_unit* tail_ = nullptr;
};

}  // namespace weft::detail
