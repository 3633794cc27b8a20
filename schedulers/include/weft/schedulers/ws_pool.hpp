// SPDX-License-Identifier: Apache-2.0
// The work-stealing pool behind randws: a Chase-Lev deque owned by one stream.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "weft/pool.hpp"

namespace weft {

/// A work-stealing pool: one stream (the owner, named with claim()) works at one end of a
/// growable circular array (the Chase-Lev deque) and every other stream takes from the other end
/// with one compare-and-swap. Its access mode is `mpmc`, and it is an owned pool
/// (pool::set_owner):
///  - push from the owner: the array's bottom, with plain stores and no fence;
///  - push from any other thread (a unit woken or created elsewhere, or before claim()): a
///    spinlocked FIFO side lane;
///  - a yield on the owner (do_push_yield): a FIFO yield lane only the owner pops, so the yielding
///    ULT can queue itself while it still runs and goes behind every other queued unit;
///  - pop by the owner: the newest unit of the array (LIFO: recursive fork-join then runs
///    depth-first, and the units alive stay bounded by the depth), then the side lane, then the
///    yield lane; every 61st pop looks at the two lanes first, so a stream that keeps creating
///    units cannot starve a yielder or a unit woken from another stream;
///  - pop by any other stream, and steal_into(): the oldest units of the array (FIFO: a thief
///    takes the biggest subtrees), then the side lane. The yield lane is the owner's, except
///    that an owner popping it while several yielders wait and another stream is parked on the
///    pool moves all but the newest (which may still be running) to the side lane and wakes that
///    stream, so yielders are stolen too.
/// remove() takes, by the owner only, the newest unit of the array (what a join that helps
/// needs: the unit it joins was the last one it created) or any unit of the yield lane (what
/// yield_to needs: its target is usually a yielder). When the owner stops serving the pool
/// (publish_private()), the yield lane moves to the side lane and the pool has no owner until the
/// next claim(), so that nothing is stranded.
class ws_pool final : public pool {
 public:
  /// `initial_capacity` is rounded up to a power of two (at least 2); the array doubles when full.
  /// An owner push that finds the array full when no memory is left for a bigger one goes to the
  /// side lane instead: a push never fails and never loses its unit. Throws std::bad_alloc when
  /// there is no memory for the first array.
  explicit ws_pool(std::size_t initial_capacity = 256);
  ~ws_pool() override;

  /// Names the stream whose pushes go to the array. The first claim wins; later ones are ignored
  /// (returns whether `owner` is the owner now). randws schedulers claim their pool when they
  /// first run.
  bool claim(execution_stream& owner) noexcept;

  work_unit* pop() noexcept override;
  bool remove(work_unit* u) noexcept override;
  std::size_t size() const noexcept override;

  /// Takes up to `max` units, at most half of what the array holds (rounded up), one
  /// compare-and-swap each: the first is returned, the others go to `into` (owner pushes when
  /// the calling thread owns `into`). Falls back to the side lane (one unit) when the array is
  /// empty. nullptr: nothing to take. `taken`, when not null, receives the number of units taken
  /// (the returned one included).
  work_unit* steal_into(ws_pool& into, std::size_t max, std::size_t* taken = nullptr) noexcept;

  /// Takes the oldest unit of the side lane (units other threads pushed), leaving the array
  /// alone; nullptr when the lane is empty. For a thief whose policy leaves the array's units to
  /// their owner. Any stream but the owner.
  work_unit* steal_pushed() noexcept;

  /// Names the array's oldest unit, the one steal_into() would take first: the number of the
  /// owner push that queued it (owner pushes are counted from 1), or 0 when the array is empty. A
  /// thief that reads the same stamp twice, some time apart, knows that the owner left that unit
  /// waiting all that time, which is what randws_scheduler's steal policy asks before it robs a
  /// running stream. Any thread; one relaxed look, no write.
  std::uint64_t oldest_stamp() const noexcept;

  /// Gives the pool up: moves the owner's yield lane into the side lane, where every stream can
  /// take from it, and leaves the pool without an owner until the next claim(). The owner calls
  /// it when it stops serving the pool (randws does when its run() returns).
  void publish_private() noexcept;

  /// Units taken by other streams from this pool so far (relaxed counter).
  std::uint64_t stolen() const noexcept { return stolen_.load(std::memory_order_relaxed); }

 protected:
  void do_push(work_unit* u) noexcept override;
  void do_push_yield(work_unit* u) noexcept override;
  work_unit* do_push_pop(work_unit* u) noexcept override;

 private:
  struct ring;
  bool owned_by_caller() const noexcept;
  void owner_push(work_unit* u) noexcept;
  /// The array doubled (published to takers), or nullptr when there is no memory for it.
  ring* grow(ring* r, std::int64_t top, std::int64_t bottom) noexcept;
  work_unit* take_bottom() noexcept;
  work_unit* take_top() noexcept;
  work_unit* take_side() noexcept;
  work_unit* take_yielded() noexcept;
  void unlink_yielded(work_unit* u) noexcept;
  void side_push(work_unit* u) noexcept;

  // Written by the owner only; read by takers.
  alignas(64) std::atomic<std::int64_t> bottom_{0};
  std::atomic<ring*> array_;
  ring* retired_ = nullptr;  // owner only: arrays thieves may still read, freed at destruction
  // The yield lane: an intrusive doubly linked FIFO list through pool_next and pool_prev, owner
  // only (its units' pool_holder is this pool); its length is read by size() from anywhere.
  work_unit* yield_head_ = nullptr;
  work_unit* yield_tail_ = nullptr;
  std::atomic<std::size_t> yield_size_{0};
  unsigned owner_pops_ = 0;   // owner only: paces the look at the lanes first
  std::uint64_t pushes_ = 0;  // owner only: owner pushes so far, the last stamp written
  // Advanced by every taker with a CAS.
  alignas(64) std::atomic<std::int64_t> top_{0};
  // The side lane: an intrusive FIFO list through pool_next under a spinlock.
  alignas(64) std::atomic<bool> side_lock_{false};
  work_unit* side_head_ = nullptr;
  work_unit* side_tail_ = nullptr;
  std::atomic<std::size_t> side_size_{0};  // written under the lock, read anywhere
  std::atomic<void*> claimed_{nullptr};    // the first claimant (its execution_stream)
  std::atomic<std::uint64_t> stolen_{0};
};

/// A fresh ws_pool.
std::shared_ptr<ws_pool> make_ws_pool(std::size_t initial_capacity = 256);

}  // namespace weft
