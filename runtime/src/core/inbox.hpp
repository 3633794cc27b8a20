// SPDX-License-Identifier: Apache-2.0
// A stream's inbox: units other threads hand to the stream (wake-ups and creations routed to a
// single-producer pool, units pinned to it), delivered by the stream at its next event check.
#pragma once

#include <atomic>
#include <cstdint>

#include "platform/assert.hpp"
#include "weft/work_unit.hpp"

namespace weft::detail {

/// A lock-free stack of units through their pool_next hook, closable. Any thread pushes; the
/// owning stream's thread takes (check_events) and closes it (when its scheduling shuts down);
/// revive() reopens it, while the stream's thread is not running.
class inbox {
 public:
  /// Adds `u`; false, with nothing done, once the inbox is closed. seq_cst: the stream's park()
  /// publishes that it parks and then looks here, the pusher publishes `u` and then looks at the
  /// parked flag (stream::inbox_push), so one of the two sees the other.
  bool push(work_unit* u) noexcept {
    assert_invariant([u] { return u != nullptr && u != closed_mark(); },
                     "inbox: a push hands over a unit");
    assert_invariant([u] { return u->pool_holder == nullptr; },
                     "invariant 2: a unit handed to an inbox is in no pool");
    work_unit* head = head_.load(std::memory_order_relaxed);
    do {
      if (head == closed_mark()) return false;
      u->pool_next = head;
    } while (!head_.compare_exchange_weak(head, u, std::memory_order_seq_cst,
                                          std::memory_order_relaxed));
    return true;
  }
  /// True when units wait (or the inbox is closed); `order` as the caller's protocol needs.
  bool nonempty(std::memory_order order = std::memory_order_relaxed) const noexcept {
    return head_.load(order) != nullptr;
  }
  /// Takes every waiting unit, oldest first (a list through pool_next). The owner only.
  work_unit* take_in_order() noexcept {
    work_unit* list = head_.exchange(nullptr, std::memory_order_acquire);
    assert_invariant([list] { return list != closed_mark(); },
                     "invariant 11: a closed inbox is not delivered from");
    // The inbox is a LIFO stack: reverse it so units keep their arrival order.
    work_unit* fifo = nullptr;
    while (list) {
      work_unit* next = list->pool_next;
      list->pool_next = fifo;
      fifo = list;
      list = next;
    }
    return fifo;
  }
  /// Closes the inbox and returns what waited in it (newest first); returns closed_mark() if it
  /// was closed already. Later pushes fail.
  work_unit* close() noexcept { return head_.exchange(closed_mark(), std::memory_order_acq_rel); }
  /// True once close() was called and reopen() was not.
  bool closed() const noexcept { return head_.load(std::memory_order_acquire) == closed_mark(); }
  /// Opens a closed inbox again (a revived stream), empty.
  void reopen() noexcept {
    assert_invariant([this] { return closed(); }, "invariant 11: only a closed inbox reopens");
    head_.store(nullptr, std::memory_order_release);
  }
  /// What close() returns for an inbox that was closed already.
  static work_unit* closed_mark() noexcept {
    return reinterpret_cast<work_unit*>(std::uintptr_t{1});
  }

 private:
  std::atomic<work_unit*> head_{nullptr};
};

}  // namespace weft::detail
