// SPDX-License-Identifier: Apache-2.0
// Helpers shared by weft's synchronisation primitives (not part of the API).
#pragma once

#include <chrono>
#include <cstdint>
#include <type_traits>

#include "weft/spinlock.hpp"
#include "weft/wait_queue.hpp"

// Destruction safety. A primitive may be destroyed by a party as soon as that party has seen it
// released (the mutex unlocked, the value set, its own wake-up, its unit handed over), even while
// the operation that released it has not returned yet, as std::mutex, std::condition_variable and
// POSIX semaphores allow. Every primitive keeps one invariant for that:
//   1. every state change another party may take as "released" (and so as leave to destroy) is
//      published while the primitive's spinlock `lock_` is held; lock-free fast paths only ever
//      publish such a change as their last access to the object (mutex::unlock's CAS);
//   2. after that point an operation touches nothing of the object but `lock_.unlock()`, its
//      last access; a wakeup (run after the unlock) touches only the waiter, which stays valid
//      until it is woken;
//   3. the destructor calls `lock_.wait_unlocked()`: it cannot finish while an operation is still
//      inside (2), and it sees everything that operation did.
// A party that saw the release through (1) saw a store made under `lock_`, so `lock_` was taken
// before that store and the destructor's wait cannot miss it.

namespace weft::detail {

using sync_clock = std::chrono::steady_clock;

/// Throws errc::tasklet_cannot_block when the caller is a tasklet; `what` names the operation.
void throw_if_tasklet(const char* what);
/// Throws errc::tasklet_cannot_block unconditionally, naming `what`.
[[noreturn]] void throw_tasklet_cannot_block(const char* what);
/// Throws errc::invalid_state for a condition_variable wait whose mutex is not the one of
/// the waiters already queued.
[[noreturn]] void throw_cv_mutex_mismatch();

/// An identity for the caller that survives migration: its work_unit for ULTs and tasklets, the
/// address of a thread-local byte (tagged with 1) for external threads and scheduler loops.
std::uintptr_t caller_identity() noexcept;

/// wait_queue::wait() that releases `lock` when it throws (a tasklet), so callers need no
/// try/catch of their own. `lock` is never held on return or on exception.
inline wait_status wait_releasing(wait_queue& q, spinlock& lock, waiter& w) WEFT_RELEASE(lock) {
  try {
    return q.wait(lock, w);
  } catch (...) {
    lock.unlock();
    throw;
  }
}

/// Same for wait_queue::wait_until(); a null `deadline` waits without a time limit.
inline wait_status wait_releasing(wait_queue& q, spinlock& lock, waiter& w,
                                  const sync_clock::time_point* deadline) WEFT_RELEASE(lock) {
  try {
    return deadline ? q.wait_until(lock, w, *deadline) : q.wait(lock, w);
  } catch (...) {
    lock.unlock();
    throw;
  }
}

/// Converts a deadline of any clock into one of steady_clock (the clock wait queues time with).
template <class Clock, class Duration>
sync_clock::time_point to_steady(const std::chrono::time_point<Clock, Duration>& t) {
  if constexpr (std::is_same_v<Clock, sync_clock>) {
    return std::chrono::time_point_cast<sync_clock::duration>(
        std::chrono::ceil<sync_clock::duration>(t));
  } else {
    return sync_clock::now() + std::chrono::ceil<sync_clock::duration>(t - Clock::now());
  }
}

/// A deadline `d` from now, on steady_clock (saturating instead of overflowing for huge `d`).
template <class Rep, class Period>
sync_clock::time_point deadline_after(const std::chrono::duration<Rep, Period>& d) {
  const auto now = sync_clock::now();
  using secs = std::chrono::duration<long double>;
  if (secs(d) >= secs(sync_clock::time_point::max() - now)) return sync_clock::time_point::max();
  return now + std::chrono::ceil<sync_clock::duration>(d);
}

/// Wakes every live waiter of `q`; called with `lock` held (waking under the lock is allowed by
/// wait_queue; it keeps notify_all atomic with respect to new arrivals).
inline void wake_all_locked(wait_queue& q) noexcept {
  while (wakeup wk = q.take()) wk();
}

}  // namespace weft::detail
