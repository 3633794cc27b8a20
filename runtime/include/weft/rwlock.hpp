// SPDX-License-Identifier: Apache-2.0
// A readers-writer lock for ULTs, tasklets and external threads.
#pragma once

#include <chrono>
#include <cstddef>

#include "weft/detail/sync.hpp"
#include "weft/spinlock.hpp"
#include "weft/wait_queue.hpp"

namespace weft {

/// Any number of readers or one writer. Meets SharedTimedMutex's requirements, so
/// std::shared_lock and std::unique_lock work.
///
/// Fairness (phase-fair, no starvation either way): once a writer waits, new readers queue behind
/// it instead of joining the readers inside. When the last reader leaves, the lock is handed to
/// the first waiting writer. When a writer leaves, every waiting reader is admitted at once if
/// any waits, otherwise the next writer gets it. A hand-off is made under the lock: the woken
/// party already holds the rwlock when it resumes.
///
/// Tasklets may take it when that does not block; otherwise errc::tasklet_cannot_block.
class rwlock {
 public:
  rwlock() noexcept = default;
  rwlock(const rwlock&) = delete;
  rwlock& operator=(const rwlock&) = delete;
  /// Waits for an unlock still leaving the object: a party it admitted may unlock and destroy
  /// the rwlock at once (detail/sync.hpp, "Destruction safety").
  ~rwlock() { lock_.wait_unlocked(); }

  // Exclusive (writer) side.
  void lock() { lock_until(nullptr); }
  bool try_lock() noexcept;
  template <class Rep, class Period>
  bool try_lock_for(const std::chrono::duration<Rep, Period>& d) {
    const auto deadline = detail::deadline_after(d);
    return lock_until(&deadline);
  }
  template <class Clock, class Duration>
  bool try_lock_until(const std::chrono::time_point<Clock, Duration>& t) {
    const auto deadline = detail::to_steady(t);
    return lock_until(&deadline);
  }
  void unlock() noexcept;

  // Shared (reader) side.
  void lock_shared() { lock_shared_until(nullptr); }
  bool try_lock_shared() noexcept;
  template <class Rep, class Period>
  bool try_lock_shared_for(const std::chrono::duration<Rep, Period>& d) {
    const auto deadline = detail::deadline_after(d);
    return lock_shared_until(&deadline);
  }
  template <class Clock, class Duration>
  bool try_lock_shared_until(const std::chrono::time_point<Clock, Duration>& t) {
    const auto deadline = detail::to_steady(t);
    return lock_shared_until(&deadline);
  }
  void unlock_shared() noexcept;

 private:
  bool lock_until(const detail::sync_clock::time_point* deadline);
  bool lock_shared_until(const detail::sync_clock::time_point* deadline);
  /// With lock_ held and no writer inside: admits every waiting reader if no writer waits, or
  /// hands the lock to the first waiting writer if no reader is inside.
  void admit_locked() noexcept WEFT_REQUIRES(lock_);

  spinlock lock_;
  wait_queue readers_q_;
  wait_queue writers_q_;
  std::size_t readers_ WEFT_GUARDED_BY(lock_) = 0;  // readers inside
  bool writer_ WEFT_GUARDED_BY(lock_) = false;      // a writer inside
};

}  // namespace weft
