// SPDX-License-Identifier: Apache-2.0
// A spinlock for short critical sections, and the pause hint spinning loops use.
#pragma once

#include <atomic>

#include "weft/detail/thread_annotations.hpp"

namespace weft {

/// Tells the core we are spinning (PAUSE on x86, YIELD on AArch64). The parenthesised name keeps
/// a function-like cpu_relax macro (Boost.Fiber defines one) from expanding here.
inline void(cpu_relax)() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

/// A test-and-test-and-set lock: one locked exchange to acquire when uncontended, a plain release
/// store to release. Waiters spin on a load, not on the exchange, so the line is not bounced while
/// the lock is held. Meets Lockable. Hold it for a few instructions only, and never across a
/// blocking call: a ULT that spins here keeps its stream's core busy. weft's sync primitives keep
/// their state under one of these and hand it to wait_queue::wait(), which releases it only once
/// the caller is safely blocked. Clang's -Wthread-safety tracks it (a capability).
class WEFT_CAPABILITY("mutex") spinlock {
 public:
  /// Acquires the lock, spinning while another holder has it.
  void lock() noexcept WEFT_ACQUIRE() {
    while (locked_.exchange(true, std::memory_order_acquire)) {
      while (locked_.load(std::memory_order_relaxed)) cpu_relax();
    }
  }
  /// Acquires the lock if it is free.
  bool try_lock() noexcept WEFT_TRY_ACQUIRE(true) {
    return !locked_.load(std::memory_order_relaxed) &&
           !locked_.exchange(true, std::memory_order_acquire);
  }
  /// Releases the lock.
  void unlock() noexcept WEFT_RELEASE() { locked_.store(false, std::memory_order_release); }
  /// Returns once the lock is free, without taking it. Acquire: what the last holder did under
  /// the lock, its release included, happens before the return. weft's sync primitives call it
  /// in their destructors (see detail/sync.hpp, "Destruction safety").
  void wait_unlocked() const noexcept {
    while (locked_.load(std::memory_order_acquire)) cpu_relax();
  }

 private:
  std::atomic<bool> locked_{false};
};

}  // namespace weft
