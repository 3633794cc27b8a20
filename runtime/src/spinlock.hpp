// A test-and-test-and-set spinlock for short critical sections in shared pools.
#pragma once

#include <atomic>

namespace weft::detail {

/// Tells the core we are spinning (PAUSE on x86).
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

/// One locked exchange to acquire when uncontended, a plain release store to release. Waiters
/// spin on a load, not on the exchange, so the line is not bounced while the lock is held.
class spinlock {
 public:
  void lock() noexcept {
    while (locked_.exchange(true, std::memory_order_acquire)) {
      while (locked_.load(std::memory_order_relaxed)) cpu_relax();
    }
  }
  bool try_lock() noexcept {
    return !locked_.load(std::memory_order_relaxed) &&
           !locked_.exchange(true, std::memory_order_acquire);
  }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

}  // namespace weft::detail
