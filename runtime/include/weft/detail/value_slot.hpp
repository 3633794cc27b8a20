// SPDX-License-Identifier: Apache-2.0
// A value set once and awaited by many: the state behind eventual<T> and future<T>/promise<T>
// (not part of the API).
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <new>
#include <type_traits>
#include <utility>

#include "weft/detail/sync.hpp"
#include "weft/spinlock.hpp"
#include "weft/wait_queue.hpp"

namespace weft::detail {

/// What a slot of `void` stores.
struct void_value {};

template <class T>
class value_slot {
 public:
  using stored = std::conditional_t<std::is_void_v<T>, void_value, T>;

  value_slot() noexcept = default;
  value_slot(const value_slot&) = delete;
  value_slot& operator=(const value_slot&) = delete;
  /// Waits for a publish() still waking waiters: a waiter that saw the value (with or without
  /// the lock) may destroy the slot at once (detail/sync.hpp, "Destruction safety").
  ~value_slot() {
    lock_.wait_unlocked();
    destroy_value();
  }

  /// True once a value or an exception was published (acquire: its contents are visible).
  bool ready() const noexcept { return state_.load(std::memory_order_acquire) >= has_value; }
  bool has_error() const noexcept { return state_.load(std::memory_order_acquire) == has_exc; }

  /// Stores a value and wakes every waiter; false if the slot was already set (or being set).
  /// The value is constructed outside any lock; if that throws, the slot stays empty.
  template <class... Args>
  bool emplace(Args&&... args) {
    if (!claim()) return false;
    try {
      ::new (static_cast<void*>(&storage_)) stored(std::forward<Args>(args)...);
    } catch (...) {
      state_.store(empty, std::memory_order_release);
      throw;
    }
    publish(has_value);
    return true;
  }
  /// Stores an exception and wakes every waiter; false if the slot was already set.
  bool set_exception(std::exception_ptr e) {
    if (!claim()) return false;
    error_ = std::move(e);
    publish(has_exc);
    return true;
  }

  /// Blocks until ready or `deadline` (nullptr: none); returns ready(). A tasklet gets
  /// errc::tasklet_cannot_block only when the slot is not ready. `kind` labels the wait in dumps.
  bool wait(const sync_clock::time_point* deadline, wait_kind kind = wait_kind::eventual) {
    if (ready()) return true;
    lock_.lock();
    if (ready()) {
      lock_.unlock();
      return true;
    }
    waiter w;
    w.kind = kind;
    // Waiters are woken only by publish(), after the state is set: notified means ready.
    return wait_releasing(queue_, lock_, w, deadline) == wait_status::notified || ready();
  }

  /// The value; only once ready() and !has_error().
  stored& value() noexcept { return *std::launder(reinterpret_cast<stored*>(&storage_)); }
  const std::exception_ptr& error() const noexcept { return error_; }

  /// Back to empty, destroying the value. False (and nothing changes) while someone waits or a
  /// set is in progress.
  bool reset() noexcept {
    lock_.lock();
    const std::uint8_t s = state_.load(std::memory_order_acquire);
    if (s == setting || !queue_.empty()) {
      lock_.unlock();
      return false;
    }
    destroy_value();
    error_ = nullptr;
    state_.store(empty, std::memory_order_release);
    lock_.unlock();
    return true;
  }

 private:
  static constexpr std::uint8_t empty = 0;
  static constexpr std::uint8_t setting = 1;
  static constexpr std::uint8_t has_value = 2;
  static constexpr std::uint8_t has_exc = 3;

  bool claim() noexcept {
    std::uint8_t expected = empty;
    return state_.compare_exchange_strong(expected, setting, std::memory_order_acquire,
                                          std::memory_order_relaxed);
  }
  // The state is stored under lock_ and lock_.unlock() is the last access: a waiter's lock-free
  // ready() may see it and return at once, and ~value_slot() then waits for the unlock.
  void publish(std::uint8_t s) noexcept {
    lock_.lock();
    state_.store(s, std::memory_order_release);
    wake_all_locked(queue_);
    lock_.unlock();
  }
  void destroy_value() noexcept {
    if (state_.load(std::memory_order_relaxed) == has_value) value().~stored();
  }

  std::atomic<std::uint8_t> state_{empty};
  spinlock lock_;
  wait_queue queue_;
  std::exception_ptr error_;
  alignas(stored) unsigned char storage_[sizeof(stored)];
};

}  // namespace weft::detail
