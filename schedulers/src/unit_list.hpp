// SPDX-License-Identifier: Apache-2.0
// An intrusive doubly linked list of work units through the pool hook, shared by the LIFO and
// priority pools. Invariant: u->pool_holder == owner exactly while u is linked.
#pragma once

#include <atomic>

#include "assert.hpp"
#include "spinlock.hpp"
#include "weft/detail/thread_annotations.hpp"
#include "weft/pool.hpp"

namespace weft::detail {

class hook_list {
 public:
  void push_back(work_unit* u, pool* owner) noexcept {
    check_unlinked(u, owner);
    u->pool_next = nullptr;
    u->pool_prev = tail_;
    u->pool_holder.store(owner, std::memory_order_relaxed);
    (tail_ ? tail_->pool_next : head_) = u;
    tail_ = u;
  }
  void push_front(work_unit* u, pool* owner) noexcept {
    check_unlinked(u, owner);
    u->pool_prev = nullptr;
    u->pool_next = head_;
    u->pool_holder.store(owner, std::memory_order_relaxed);
    (head_ ? head_->pool_prev : tail_) = u;
    head_ = u;
  }
  work_unit* pop_front() noexcept {
    work_unit* u = head_;
    if (u) unlink(u);
    return u;
  }
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
  bool empty() const noexcept { return head_ == nullptr; }

 private:
  /// invariant 2: a unit is in at most one pool; pushing one that is linked here already would
  /// corrupt the list (pool_holder names this pool exactly while the unit is linked: invariant 1).
  static void check_unlinked(work_unit* u, pool* owner) noexcept {
    assert_invariant([&] { return u->pool_holder.load(std::memory_order_relaxed) != owner; },
                     "invariant 2: push of a unit that is already queued in this pool");
  }

  work_unit* head_ = nullptr;
  work_unit* tail_ = nullptr;
};

/// A spinlock that can be compiled away (private pools).
template <bool Locked>
class WEFT_CAPABILITY("mutex") maybe_lock {
 public:
  void lock() noexcept WEFT_ACQUIRE() {
    if constexpr (Locked) l_.lock();
  }
  void unlock() noexcept WEFT_RELEASE() {
    if constexpr (Locked) l_.unlock();
  }

 private:
  spinlock l_;
};

}  // namespace weft::detail
