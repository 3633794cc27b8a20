// SPDX-License-Identifier: Apache-2.0
// The runtime's view of a pool's bookkeeping (producer, consumer, attachment count).
#pragma once

#include "platform/assert.hpp"
#include "weft/pool.hpp"

namespace weft::detail {

class pool_attachment;

/// The roles (producer, consumer, owner) are read here by the routing and join paths; only
/// pool_attachment writes producer, consumer and the attachment count (the owner belongs to the
/// policy: pool::set_owner).
class pool_access {
 public:
  static stream* producer(const pool& p, std::memory_order order) noexcept {
    return p.producer_.load(order);
  }
  static stream* consumer(const pool& p, std::memory_order order) noexcept {
    return p.consumer_.load(order);
  }
  static stream* owner(const pool& p, std::memory_order order) noexcept {
    return p.owner_.load(order);
  }
  /// pool::push() without the wake-up: for a push by the running consumer of a single-consumer
  /// pool, which is awake by definition and the only stream that could be parked on it.
  static void push_as_consumer(pool& p, work_unit* u) noexcept {
    assert_invariant([u] { return u != nullptr; }, "a pool is pushed a unit, not null");
    p.do_push(u);
  }
  /// pool::do_push_pop(): a push by the consumer as above, then a pop.
  static work_unit* push_pop_as_consumer(pool& p, work_unit* u) noexcept {
    return p.do_push_pop(u);
  }
  /// pool::do_push_yield() without the wake-up, by the consumer or the owner.
  static void push_yield_as_consumer(pool& p, work_unit* u) noexcept {
    assert_invariant([u] { return u != nullptr; }, "a pool is pushed a yielder, not null");
    p.do_push_yield(u);
  }
  /// A push by the owner of an owned pool: no fence before the look for parked streams. A
  /// wake-up missed through the race it leaves loses parallelism, never the unit: the owner
  /// runs what it pushed itself, and a parked stream wakes at its park limit at the latest.
  static void push_as_owner(pool& p, work_unit* u) noexcept {
    p.do_push(u);
    if (p.wants_wake()) [[unlikely]]
      p.wake_parked();
  }
  /// The calling stream, which serves `p`, starts spinning for work (see pool::wants_wake).
  static void spin_begin(pool& p) noexcept { p.spinning_.fetch_add(1, std::memory_order_seq_cst); }
  /// ... and stops. The last spinner to stop wakes a parked stream when the pool still holds
  /// units: pushes made while it spun woke nobody.
  static void spin_end(pool& p) noexcept {
    const std::uint32_t before = p.spinning_.fetch_sub(1, std::memory_order_seq_cst);
    assert_invariant([before] { return before > 0; },
                     "idling: a pool's spin count counts each stream spinning on it");
    const bool last = before == 1;
    // Dekker with pool::push (publish, fence, read spinning_): it saw this spinner, or this
    // look sees its unit.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (last && p.parked_.load(std::memory_order_relaxed) != 0 && !p.empty()) [[unlikely]]
      p.wake_parked();
  }
  /// Links `e` into the pool's parked list (the stream parks on it).
  static void park(pool& p, park_entry& e) noexcept;
  /// Unlinks `e` if a pusher has not already taken it.
  static void unpark(pool& p, park_entry& e) noexcept;

 private:
  friend class pool_attachment;
  static std::atomic<stream*>& producer(pool& p) noexcept { return p.producer_; }
  static std::atomic<stream*>& consumer(pool& p) noexcept { return p.consumer_; }
  static std::atomic<int>& attached(pool& p) noexcept { return p.attached_; }
};

}  // namespace weft::detail
