// SPDX-License-Identifier: Apache-2.0
// A reusable barrier for a fixed number of parties (ULTs and external threads).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <type_traits>

#include "weft/detail/sync.hpp"
#include "weft/spinlock.hpp"
#include "weft/wait_queue.hpp"

namespace weft {

/// `parties` callers meet: each arrive_and_wait() blocks until the last of them arrives, then all
/// return and the barrier is ready for the next round (a new generation). Exactly one caller per
/// round, the last to arrive, gets `true` (the "serial" one, as in ABT_barrier / pthread's
/// PTHREAD_BARRIER_SERIAL_THREAD); it is the only one that does not block.
///
/// Tasklets may arrive only as the last party (errc::tasklet_cannot_block otherwise, and their
/// arrival is not counted).
///
/// The party count can change between rounds (reset()), as Argobots' ABT_barrier_reinit needs.
///
/// Destruction: once one party is back from a round, the round is over and the barrier may be
/// destroyed (if nobody arrives again), even while the other parties are still returning, as
/// with glibc's pthread barriers. The destructor waits for the last arriver to leave, and for a
/// party whose deadline passed just as the round completed to check it (it then yields, so do
/// not destroy a barrier from a tasklet while such a party of the same stream may be returning).
class barrier {
 public:
  /// Throws errc::invalid_state when `parties` is 0.
  explicit barrier(std::size_t parties);
  barrier(const barrier&) = delete;
  barrier& operator=(const barrier&) = delete;
  /// Waits for the parties of the last round that still have to touch the barrier.
  ~barrier();

  /// Arrives and waits for the round to complete; true for the last arriver.
  bool arrive_and_wait();
  /// Same, calling `on_block()` just before the caller blocks (never for the last arriver, which
  /// does not block): for a layer that reports blocking to its tools (the Argobots layer's
  /// THREAD_SUSPEND event). on_block() runs with the barrier's lock held: it must not touch the
  /// barrier, block or throw.
  template <class OnBlock>
  bool arrive_and_wait_reporting(OnBlock&& on_block) {
    using callable = std::remove_reference_t<OnBlock>;
    const block_report report{[](void* f) noexcept { (*static_cast<callable*>(f))(); },
                              const_cast<void*>(static_cast<const void*>(&on_block))};
    return *arrive(nullptr, &report);
  }
  /// Same, giving up at `t`: nullopt on timeout, in which case the caller's arrival is withdrawn
  /// (the round still needs `parties` arrivals). If the round completes at the same moment, the
  /// caller gets false, as if it had not timed out.
  template <class Clock, class Duration>
  std::optional<bool> arrive_and_wait_until(const std::chrono::time_point<Clock, Duration>& t) {
    const auto deadline = detail::to_steady(t);
    return arrive(&deadline);
  }
  template <class Rep, class Period>
  std::optional<bool> arrive_and_wait_for(const std::chrono::duration<Rep, Period>& d) {
    const auto deadline = detail::deadline_after(d);
    return arrive(&deadline);
  }

  /// The parties a round needs.
  std::size_t parties() const noexcept { return parties_.load(std::memory_order_relaxed); }
  /// The parties waiting in the current round (a snapshot: it may change as soon as it is read).
  std::size_t waiting() const noexcept;

  /// Makes later rounds need `parties` parties. Only between rounds: returns false and changes
  /// nothing while parties wait in the current one. Throws errc::invalid_state when `parties` is
  /// 0. Any thread, ULT or tasklet (it never blocks).
  bool reset(std::size_t parties);

 private:
  struct block_report {
    void (*call)(void*) noexcept;
    void* target;
  };
  std::optional<bool> arrive(const detail::sync_clock::time_point* deadline,
                             const block_report* report = nullptr);

  // Written under lock_ between rounds, read without it by parties().
  std::atomic<std::size_t> parties_;
  mutable spinlock lock_;
  wait_queue queue_;
  std::size_t arrived_ WEFT_GUARDED_BY(lock_) = 0;
  std::uint64_t generation_ WEFT_GUARDED_BY(lock_) = 0;
  // Parties counted in a completed round that timed out instead of being woken: they still take
  // lock_ to learn that their round completed.
  std::size_t stragglers_ WEFT_GUARDED_BY(lock_) = 0;
};

}  // namespace weft
