// SPDX-License-Identifier: Apache-2.0
// Counting semaphores for ULTs, tasklets and external threads.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <limits>

#include "weft/detail/sync.hpp"
#include "weft/spinlock.hpp"
#include "weft/wait_queue.hpp"

namespace weft {

namespace detail {

/// The implementation behind counting_semaphore<N>.
class semaphore_base {
 public:
  explicit semaphore_base(std::ptrdiff_t initial) noexcept : count_(initial) {}
  semaphore_base(const semaphore_base&) = delete;
  semaphore_base& operator=(const semaphore_base&) = delete;
  /// Waits for a release() still leaving the object (detail/sync.hpp, "Destruction safety").
  ~semaphore_base() { lock_.wait_unlocked(); }
  bool try_acquire() noexcept {
    std::ptrdiff_t c = count_.load(std::memory_order_relaxed);
    while (c > 0) {
      if (count_.compare_exchange_weak(c, c - 1, std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
        return true;
      }
    }
    return false;
  }
  /// Blocks until a unit is acquired or `deadline` (nullptr: none); false on timeout.
  bool acquire_slow(const sync_clock::time_point* deadline);
  void release(std::ptrdiff_t n);
  std::ptrdiff_t value() const noexcept { return count_.load(std::memory_order_relaxed); }

 private:
  // Decremented without the lock (try_acquire), incremented only under it: a caller that found
  // it at 0 under the lock and queued cannot miss a release(), and an acquirer that got its unit
  // without the lock may destroy the semaphore while release() is still leaving.
  std::atomic<std::ptrdiff_t> count_;
  spinlock lock_;
  wait_queue queue_;
};

}  // namespace detail

/// A counting semaphore in the manner of std::counting_semaphore. release(n) hands units
/// directly to blocked acquirers in FIFO order (hand-off: a woken acquirer already owns its
/// unit, a newcomer cannot take it), and adds the rest to the count. acquire() from a tasklet
/// succeeds when a unit is available and throws errc::tasklet_cannot_block when it would block;
/// the try_ forms never block.
///
/// Destruction: as with POSIX semaphores, an acquirer may destroy the semaphore as soon as it
/// has its unit, even while the release() that gave it has not returned yet.
template <std::ptrdiff_t LeastMaxValue = std::numeric_limits<std::ptrdiff_t>::max()>
class counting_semaphore {
 public:
  static constexpr std::ptrdiff_t max() noexcept { return LeastMaxValue; }

  explicit counting_semaphore(std::ptrdiff_t desired) noexcept : base_(desired) {}
  counting_semaphore(const counting_semaphore&) = delete;
  counting_semaphore& operator=(const counting_semaphore&) = delete;

  /// Adds `update` units (at least 0), waking as many blocked acquirers.
  void release(std::ptrdiff_t update = 1) { base_.release(update); }
  void acquire() {
    if (!base_.try_acquire()) base_.acquire_slow(nullptr);
  }
  bool try_acquire() noexcept { return base_.try_acquire(); }
  template <class Rep, class Period>
  bool try_acquire_for(const std::chrono::duration<Rep, Period>& d) {
    if (base_.try_acquire()) return true;
    const auto deadline = detail::deadline_after(d);
    return base_.acquire_slow(&deadline);
  }
  template <class Clock, class Duration>
  bool try_acquire_until(const std::chrono::time_point<Clock, Duration>& t) {
    if (base_.try_acquire()) return true;
    const auto deadline = detail::to_steady(t);
    return base_.acquire_slow(&deadline);
  }
  /// The current count (a snapshot).
  std::ptrdiff_t value() const noexcept { return base_.value(); }

 private:
  detail::semaphore_base base_;
};

using binary_semaphore = counting_semaphore<1>;

}  // namespace weft
