// The work-stealing pool behind randws: a Chase-Lev style circular array owned by one stream.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "weft/pool.hpp"

namespace weft {

/// A work-stealing pool: one stream (the owner, named with claim()) pushes into a growable
/// circular array with plain stores (the Chase-Lev array, as in Go's per-P run queues), and every
/// stream takes from the other end with one compare-and-swap. Its access mode is `mpmc`:
///  - push from the owner's thread: the array, no atomic read-modify-write (pool::push adds the
///    fence that lets it wake a parked thief);
///  - push from any other thread (a unit woken or created elsewhere, or before claim()): a
///    spinlocked FIFO side lane, which the owner moves into the array at its next pop;
///  - pop from anywhere: the oldest unit of the array (FIFO, so a unit that yields goes behind
///    the others), then the side lane;
///  - steal_into(): a thief takes up to half of the array in one compare-and-swap and keeps
///    the rest of the batch in its own ws_pool.
/// Takes are FIFO for the owner as well: a LIFO owner (the classic work-first deque) would pop a
/// yielding ULT straight back and starve every other unit of its stream. remove() is not
/// supported (yield_to falls back to yield, migration waits for the next pop).
class ws_pool final : public pool {
 public:
  /// `initial_capacity` is rounded up to a power of two (at least 2); the array doubles when full.
  explicit ws_pool(std::size_t initial_capacity = 256);
  ~ws_pool() override;

  /// Names the stream whose pushes go to the array. The first claim wins; later ones are ignored
  /// (returns whether `owner` is the owner now). randws schedulers claim their pool when they
  /// first run.
  bool claim(execution_stream& owner) noexcept;
  /// The owner, or nullptr before claim().
  execution_stream* owner() const noexcept;

  work_unit* pop() noexcept override;
  std::size_t size() const noexcept override;

  /// Takes up to `max` units, at most half of what the array holds (rounded up): the first is
  /// returned, the others go to `into` (owner pushes when the calling thread owns `into`).
  /// Falls back to the side lane (one unit) when the array is empty. nullptr: nothing to take.
  /// `taken`, when not null, receives the number of units taken (the returned one included).
  work_unit* steal_into(ws_pool& into, std::size_t max, std::size_t* taken = nullptr) noexcept;

  /// Units taken by steal_into() from this pool so far (relaxed counter).
  std::uint64_t stolen() const noexcept { return stolen_.load(std::memory_order_relaxed); }

 protected:
  void do_push(work_unit* u) noexcept override;

 private:
  struct ring;
  bool owned_by_caller() const noexcept;
  void owner_push(work_unit* u) noexcept;
  ring* grow(ring* r, std::int64_t top, std::int64_t bottom) noexcept;
  void drain_side() noexcept;
  work_unit* take_side() noexcept;

  // Written by the owner only; read by takers.
  alignas(64) std::atomic<std::int64_t> bottom_{0};
  std::atomic<ring*> array_;
  std::vector<ring*> retired_;  // owner only: arrays thieves may still read, freed at destruction
  // Advanced by every taker with a CAS.
  alignas(64) std::atomic<std::int64_t> top_{0};
  // The side lane: an intrusive FIFO list through pool_next under a spinlock.
  alignas(64) std::atomic<bool> side_lock_{false};
  work_unit* side_head_ = nullptr;
  work_unit* side_tail_ = nullptr;
  std::atomic<std::size_t> side_size_{0};  // written under the lock, read anywhere
  std::atomic<void*> owner_{nullptr};      // the owner's detail::stream
  std::atomic<std::uint64_t> stolen_{0};
};

/// A fresh ws_pool.
std::shared_ptr<ws_pool> make_ws_pool(std::size_t initial_capacity = 256);

}  // namespace weft
