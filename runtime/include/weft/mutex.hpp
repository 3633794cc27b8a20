// SPDX-License-Identifier: Apache-2.0
// Mutual exclusion for ULTs, tasklets and external threads: mutex and recursive_mutex.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "weft/detail/sync.hpp"
#include "weft/spinlock.hpp"
#include "weft/wait_queue.hpp"

namespace weft {

/// A mutex whose waiters block without blocking their stream: a ULT that finds it locked is
/// suspended and its stream runs other work; an external thread sleeps on a futex. Meets
/// Lockable and TimedLockable, so std::lock_guard, std::unique_lock and std::scoped_lock work.
///
/// Cost: an uncontended lock() and an uncontended unlock() are one compare-and-swap each; no
/// yield, no syscall. A contended lock() spins briefly, then blocks on a wait_queue.
///
/// Destruction: as with std::mutex, a mutex may be destroyed as soon as it is unlocked and no
/// one else uses it, even while the unlock() that let its last user in has not returned yet
/// (the "last reference frees the object that holds the mutex" pattern). See detail/sync.hpp.
///
/// Fairness: barging. unlock() releases the mutex and wakes the longest-waiting waiter, which
/// then competes with whoever arrives meanwhile (like glibc's std::mutex); under sustained
/// contention a waiter may lose more than once. Throughput beats strict FIFO hand-off, which
/// makes every acquisition wait for a context switch.
///
/// Tasklets may lock() a mutex that is free (and try_lock() always); a lock() that would block
/// throws errc::tasklet_cannot_block. Not recursive: a unit that locks twice deadlocks.
class mutex {
 public:
  mutex() noexcept = default;
  mutex(const mutex&) = delete;
  mutex& operator=(const mutex&) = delete;
  /// Waits for an unlock() still leaving the object (a few instructions at most).
  ~mutex() { lock_.wait_unlocked(); }

  /// Acquires the mutex, blocking the calling ULT or thread while another holder has it.
  void lock() {
    std::uint32_t expected = unlocked;
    if (state_.compare_exchange_strong(expected, locked, std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
      return;
    }
    lock_slow(nullptr);
  }
  /// Acquires the mutex if it is free. Never blocks; any context.
  bool try_lock() noexcept {
    std::uint32_t expected = unlocked;
    return state_.load(std::memory_order_relaxed) == unlocked &&
           state_.compare_exchange_strong(expected, locked, std::memory_order_acquire,
                                          std::memory_order_relaxed);
  }
  /// Acquires the mutex unless `d` passes first; returns whether it was acquired.
  template <class Rep, class Period>
  bool try_lock_for(const std::chrono::duration<Rep, Period>& d) {
    if (try_lock()) return true;
    const auto deadline = detail::deadline_after(d);
    return lock_slow(&deadline);
  }
  /// Acquires the mutex unless `t` passes first; returns whether it was acquired.
  template <class Clock, class Duration>
  bool try_lock_until(const std::chrono::time_point<Clock, Duration>& t) {
    if (try_lock()) return true;
    const auto deadline = detail::to_steady(t);
    return lock_slow(&deadline);
  }
  /// Releases the mutex (held by the caller) and wakes one waiter if there is any.
  void unlock() noexcept {
    // Uncontended: the CAS is the release and our last access. Contended: the state is released
    // under lock_ (unlock_slow), never before it is taken, so that nobody can lock, unlock and
    // destroy the mutex while we still have to touch it.
    std::uint32_t expected = locked;
    if (!state_.compare_exchange_strong(expected, unlocked, std::memory_order_release,
                                        std::memory_order_relaxed)) {
      unlock_slow();
    }
  }

 private:
  static constexpr std::uint32_t unlocked = 0;
  static constexpr std::uint32_t locked = 1;
  static constexpr std::uint32_t contended = 2;  // locked, and waiters may be queued

  bool lock_slow(const detail::sync_clock::time_point* deadline);
  void unlock_slow() noexcept;

  std::atomic<std::uint32_t> state_{unlocked};
  spinlock lock_;  // guards queue_; `contended` is only set, and only left, under it
  wait_queue queue_;
};

/// A mutex the holder may lock again; it is released when unlock() has been called as many
/// times as lock(). The holder is the calling ULT or tasklet (so a ULT keeps it across a
/// migration), or the external thread. Same fairness and tasklet rules as weft::mutex.
class recursive_mutex {
 public:
  recursive_mutex() noexcept = default;
  recursive_mutex(const recursive_mutex&) = delete;
  recursive_mutex& operator=(const recursive_mutex&) = delete;

  void lock() {
    const std::uintptr_t me = detail::caller_identity();
    if (owner_.load(std::memory_order_relaxed) == me) {
      ++depth_;
      return;
    }
    m_.lock();
    acquired(me);
  }
  bool try_lock() noexcept {
    const std::uintptr_t me = detail::caller_identity();
    if (owner_.load(std::memory_order_relaxed) == me) {
      ++depth_;
      return true;
    }
    if (!m_.try_lock()) return false;
    acquired(me);
    return true;
  }
  template <class Rep, class Period>
  bool try_lock_for(const std::chrono::duration<Rep, Period>& d) {
    return try_lock_until(detail::deadline_after(d));
  }
  template <class Clock, class Duration>
  bool try_lock_until(const std::chrono::time_point<Clock, Duration>& t) {
    const std::uintptr_t me = detail::caller_identity();
    if (owner_.load(std::memory_order_relaxed) == me) {
      ++depth_;
      return true;
    }
    if (!m_.try_lock_until(t)) return false;
    acquired(me);
    return true;
  }
  void unlock() noexcept {
    if (--depth_ == 0) {
      owner_.store(0, std::memory_order_relaxed);
      m_.unlock();
    }
  }

 private:
  void acquired(std::uintptr_t me) noexcept {
    owner_.store(me, std::memory_order_relaxed);
    depth_ = 1;
  }
  mutex m_;
  std::atomic<std::uintptr_t> owner_{0};  // read by non-holders, which only compare it with self
  std::size_t depth_ = 0;
};

}  // namespace weft
