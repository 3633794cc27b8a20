// SPDX-License-Identifier: Apache-2.0
// Condition variables for ULTs and external threads: condition_variable (over weft::mutex) and
// condition_variable_any (over any lock whose unlock() does not block).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>  // std::cv_status
#include <cstdint>
#include <mutex>

#include "weft/detail/sync.hpp"
#include "weft/mutex.hpp"
#include "weft/spinlock.hpp"
#include "weft/wait_queue.hpp"

namespace weft {

namespace detail {

/// The queue behind both condition variables. wait() enqueues the caller before it releases the
/// user's lock, so a notify that follows the release cannot be missed.
class cv_core {
 public:
  cv_core() noexcept = default;
  cv_core(const cv_core&) = delete;
  cv_core& operator=(const cv_core&) = delete;
  /// Waits for a notify_*() still leaving the object: a woken waiter may destroy the condition
  /// variable at once (detail/sync.hpp, "Destruction safety").
  ~cv_core() { lock_.wait_unlocked(); }

  /// Blocks until notified or `deadline` (nullptr: none). `unlock_user` releases the user's lock
  /// once the caller is queued (under the internal spinlock: it must not block); `relock_user`
  /// takes it again on every way out, exceptions included. Returns timed_out if the deadline
  /// passed first. `user_mutex` names the mutex the waiters must share (condition_variable), or
  /// is nullptr when each waiter may bring its own lock (condition_variable_any): a wait with a
  /// mutex other than the one of the waiters still queued throws errc::invalid_state, with the
  /// user's lock held and nothing queued. The check costs a compare under the internal lock.
  template <class Unlock, class Relock>
  wait_status wait(Unlock&& unlock_user, Relock&& relock_user,
                   const sync_clock::time_point* deadline, const void* user_mutex = nullptr) {
    throw_if_tasklet("condition_variable::wait");  // before the user's lock is released
    lock_.lock();
    if (user_mutex) {
      // The queue being empty ends the binding, as POSIX has it: a waiter that was woken (taken
      // from the queue) no longer counts, even before its wait() has returned.
      if (bound_mutex_ != user_mutex && !queue_.empty()) {
        lock_.unlock();
        throw_cv_mutex_mismatch();
      }
      bound_mutex_ = user_mutex;
    }
    waiters_.fetch_add(1, std::memory_order_seq_cst);
    waiter w;
    w.kind = wait_kind::condition_variable;
    unlock_user();
    wait_status st;
    try {
      st = deadline ? queue_.wait_until(lock_, w, *deadline) : queue_.wait(lock_, w);
    } catch (...) {  // a timer could not be allocated: nothing was queued
      waiters_.fetch_sub(1, std::memory_order_relaxed);
      lock_.unlock();
      relock_user();
      throw;
    }
    waiters_.fetch_sub(1, std::memory_order_relaxed);
    relock_user();
    return st;
  }
  void notify_one() noexcept {
    if (waiters_.load(std::memory_order_seq_cst) == 0) return;
    lock_.lock();
    wakeup wk = queue_.take();
    lock_.unlock();
    wk();
  }
  void notify_all() noexcept {
    if (waiters_.load(std::memory_order_seq_cst) == 0) return;
    lock_.lock();
    wake_all_locked(queue_);
    lock_.unlock();
  }

 private:
  spinlock lock_;
  wait_queue queue_;
  // The mutex of the condition_variable waiters queued now (under lock_; meaningful only while
  // queue_ holds a waiter).
  const void* bound_mutex_ = nullptr;
  // Callers inside wait() (queued, or just woken): lets notify skip the lock when nobody waits.
  std::atomic<std::uint32_t> waiters_{0};
};

}  // namespace detail

/// A condition variable over std::unique_lock<weft::mutex>. Waiting ULTs block without blocking
/// their stream. notify_one() wakes the longest-waiting waiter (FIFO); spurious wake-ups do not
/// happen, but a woken waiter competes for the mutex like any other locker, so always re-check
/// the condition (the predicate overloads do). Tasklets cannot wait (errc::tasklet_cannot_block,
/// thrown with the lock still held). notify_* may be called from any context, lock held or not.
/// All waiters queued at the same time must wait with the same mutex: a wait with another one
/// throws errc::invalid_state (thrown with the lock still held); once no waiter is queued, the
/// next wait may bring any mutex.
///
/// Destruction: as with std::condition_variable, only the notification has to happen before
/// the destructor: a woken waiter may destroy the condition variable while notify_*() has not
/// returned yet.
class condition_variable {
 public:
  condition_variable() noexcept = default;
  condition_variable(const condition_variable&) = delete;
  condition_variable& operator=(const condition_variable&) = delete;

  void notify_one() noexcept { core_.notify_one(); }
  void notify_all() noexcept { core_.notify_all(); }

  /// Throws errc::invalid_state, with `lock` still held, when other waiters queued on this
  /// condition variable wait with a different mutex (undefined behaviour for POSIX and
  /// std::condition_variable); errc::tasklet_cannot_block from a tasklet.
  void wait(std::unique_lock<mutex>& lock) {
    core_.wait([&] { lock.mutex()->unlock(); }, [&] { lock.mutex()->lock(); }, nullptr,
               lock.mutex());
  }
  template <class Pred>
  void wait(std::unique_lock<mutex>& lock, Pred pred) {
    while (!pred()) wait(lock);
  }
  template <class Clock, class Duration>
  std::cv_status wait_until(std::unique_lock<mutex>& lock,
                            const std::chrono::time_point<Clock, Duration>& t) {
    const auto deadline = detail::to_steady(t);
    const wait_status st = core_.wait([&] { lock.mutex()->unlock(); },
                                      [&] { lock.mutex()->lock(); }, &deadline, lock.mutex());
    return st == wait_status::timed_out ? std::cv_status::timeout : std::cv_status::no_timeout;
  }
  /// Returns pred() as last evaluated: false only if the deadline passed with pred() false.
  template <class Clock, class Duration, class Pred>
  bool wait_until(std::unique_lock<mutex>& lock, const std::chrono::time_point<Clock, Duration>& t,
                  Pred pred) {
    while (!pred()) {
      if (wait_until(lock, t) == std::cv_status::timeout) return pred();
    }
    return true;
  }
  template <class Rep, class Period>
  std::cv_status wait_for(std::unique_lock<mutex>& lock,
                          const std::chrono::duration<Rep, Period>& d) {
    return wait_until(lock, detail::deadline_after(d));
  }
  template <class Rep, class Period, class Pred>
  bool wait_for(std::unique_lock<mutex>& lock, const std::chrono::duration<Rep, Period>& d,
                Pred pred) {
    return wait_until(lock, detail::deadline_after(d), std::move(pred));
  }

 private:
  detail::cv_core core_;
};

/// The same over any BasicLockable whose unlock() never blocks (weft::mutex, recursive_mutex
/// held once, weft::spinlock, std::mutex, std::unique_lock of those, ...): the unlock runs while
/// an internal spinlock is held.
class condition_variable_any {
 public:
  condition_variable_any() noexcept = default;
  condition_variable_any(const condition_variable_any&) = delete;
  condition_variable_any& operator=(const condition_variable_any&) = delete;

  void notify_one() noexcept { core_.notify_one(); }
  void notify_all() noexcept { core_.notify_all(); }

  template <class Lock>
  void wait(Lock& lock) {
    core_.wait([&] { lock.unlock(); }, [&] { lock.lock(); }, nullptr);
  }
  template <class Lock, class Pred>
  void wait(Lock& lock, Pred pred) {
    while (!pred()) wait(lock);
  }
  template <class Lock, class Clock, class Duration>
  std::cv_status wait_until(Lock& lock, const std::chrono::time_point<Clock, Duration>& t) {
    const auto deadline = detail::to_steady(t);
    const wait_status st = core_.wait([&] { lock.unlock(); }, [&] { lock.lock(); }, &deadline);
    return st == wait_status::timed_out ? std::cv_status::timeout : std::cv_status::no_timeout;
  }
  template <class Lock, class Clock, class Duration, class Pred>
  bool wait_until(Lock& lock, const std::chrono::time_point<Clock, Duration>& t, Pred pred) {
    while (!pred()) {
      if (wait_until(lock, t) == std::cv_status::timeout) return pred();
    }
    return true;
  }
  template <class Lock, class Rep, class Period>
  std::cv_status wait_for(Lock& lock, const std::chrono::duration<Rep, Period>& d) {
    return wait_until(lock, detail::deadline_after(d));
  }
  template <class Lock, class Rep, class Period, class Pred>
  bool wait_for(Lock& lock, const std::chrono::duration<Rep, Period>& d, Pred pred) {
    return wait_until(lock, detail::deadline_after(d), std::move(pred));
  }

 private:
  detail::cv_core core_;
};

}  // namespace weft
