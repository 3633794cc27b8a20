// SPDX-License-Identifier: Apache-2.0
// An intrusive doubly linked list of work units through their pool hook (pool_next, pool_prev,
// pool_holder): the queue of the stock FIFO, LIFO and priority pools, for any pool's use.
#pragma once

#include <atomic>

#include "weft/ext/assert.hpp"
#include "weft/work_unit.hpp"

namespace weft::ext {

/// A list of units threaded through their pool hook: O(1) push at either end, pop from the front
/// and unlink of any member; never allocates. Invariant: u->pool_holder == owner exactly while u
/// is linked (the `owner` the push named), which is what pool::remove() implementations test.
/// Not synchronised: the pool guards it as its access mode requires.
class unit_list {
 public:
  /// Links `u` at the back and marks it held by `owner`.
  void push_back(work_unit* u, pool* owner) noexcept {
    check_unlinked(u, owner);
    u->pool_next = nullptr;
    u->pool_prev = tail_;
    u->pool_holder.store(owner, std::memory_order_relaxed);
    (tail_ ? tail_->pool_next : head_) = u;
    tail_ = u;
  }
  /// Links `u` at the front and marks it held by `owner`.
  void push_front(work_unit* u, pool* owner) noexcept {
    check_unlinked(u, owner);
    u->pool_prev = nullptr;
    u->pool_next = head_;
    u->pool_holder.store(owner, std::memory_order_relaxed);
    (head_ ? head_->pool_prev : tail_) = u;
    head_ = u;
  }
  /// Unlinks and returns the front unit, or nullptr when the list is empty.
  work_unit* pop_front() noexcept {
    work_unit* u = head_;
    if (u) unlink(u);
    return u;
  }
  /// Unlinks `u`, which must be linked in this list, and clears its pool_holder.
  void unlink(work_unit* u) noexcept {
    // invariant 1: `u` is linked here, so its neighbours (or the ends) point back at it.
    assert_invariant(
        [&] {
          return (u->pool_prev ? u->pool_prev->pool_next == u : head_ == u) &&
                 (u->pool_next ? u->pool_next->pool_prev == u : tail_ == u);
        },
        "invariant 1: unlink of a unit that is not linked in this pool's list");
    (u->pool_prev ? u->pool_prev->pool_next : head_) = u->pool_next;
    (u->pool_next ? u->pool_next->pool_prev : tail_) = u->pool_prev;
    u->pool_next = u->pool_prev = nullptr;
    u->pool_holder.store(nullptr, std::memory_order_relaxed);
  }
  /// True when no unit is linked.
  bool empty() const noexcept {
    assert_invariant([this] { return (head_ == nullptr) == (tail_ == nullptr); },
                     "unit list: head and tail are both set or both empty");
    return head_ == nullptr;
  }

 private:
  /// invariant 2: a unit is in at most one pool; pushing one that is linked here already would
  /// corrupt the list (pool_holder names this pool exactly while the unit is linked: invariant 1).
  static void check_unlinked(work_unit* u, pool* owner) noexcept {
    assert_invariant([&] { return u != nullptr && owner != nullptr; },
                     "invariant 1: a linked unit names the pool that holds it");
    assert_invariant([&] { return u->pool_holder.load(std::memory_order_relaxed) != owner; },
                     "invariant 2: push of a unit that is already queued in this pool");
  }

  work_unit* head_ = nullptr;
  work_unit* tail_ = nullptr;
};

}  // namespace weft::ext
