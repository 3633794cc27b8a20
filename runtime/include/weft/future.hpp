// SPDX-License-Identifier: Apache-2.0
// future<T> / promise<T>: a one-shot channel for a value or an exception, std-style.
#pragma once

#include <atomic>
#include <chrono>
#include <exception>
#include <future>  // std::future_error, std::future_errc, std::future_status
#include <type_traits>
#include <utility>

#include "weft/detail/sync.hpp"
#include "weft/detail/value_slot.hpp"

namespace weft {

namespace detail {

/// The state a promise and its future share; freed by whichever lets go last.
template <class T>
struct shared_state {
  value_slot<T> slot;
  std::atomic<int> refs{1};
  std::atomic<bool> retrieved{false};

  void acquire() noexcept { refs.fetch_add(1, std::memory_order_relaxed); }
  void release() noexcept {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
};

[[noreturn]] inline void throw_future_error(std::future_errc e) {
  throw std::future_error(e);
}

}  // namespace detail

template <class T>
class promise;

/// The receiving end, as std::future: get() waits, then returns the value (moved out) or
/// rethrows the exception, and leaves the future invalid. Waiting blocks a ULT without blocking
/// its stream, or sleeps an external thread; from a tasklet it is allowed only when the value is
/// already there (errc::tasklet_cannot_block otherwise).
///
/// Errors are std::future_error, as with std::future: get()/wait*() on an invalid future give
/// future_errc::no_state; a promise destroyed unset stores future_errc::broken_promise, which
/// get() throws.
template <class T>
class future {
 public:
  future() noexcept = default;
  future(future&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  future& operator=(future&& o) noexcept {
    if (this != &o) {
      if (s_) s_->release();
      s_ = std::exchange(o.s_, nullptr);
    }
    return *this;
  }
  ~future() {
    if (s_) s_->release();
  }

  bool valid() const noexcept { return s_ != nullptr; }
  /// True when get() would not block.
  bool is_ready() const noexcept { return s_ && s_->slot.ready(); }

  /// Waits for the value, then returns it (or rethrows what was stored).
  T get() {
    wait();
    detail::shared_state<T>* s = std::exchange(s_, nullptr);
    struct releaser {
      detail::shared_state<T>* s;
      ~releaser() { s->release(); }
    } r{s};
    if (s->slot.has_error()) std::rethrow_exception(s->slot.error());
    if constexpr (!std::is_void_v<T>) return std::move(s->slot.value());
  }
  void wait() const {
    check();
    s_->slot.wait(nullptr, wait_kind::future);
  }
  template <class Rep, class Period>
  std::future_status wait_for(const std::chrono::duration<Rep, Period>& d) const {
    check();
    if (s_->slot.ready()) return std::future_status::ready;
    const auto deadline = detail::deadline_after(d);
    return s_->slot.wait(&deadline, wait_kind::future) ? std::future_status::ready
                                                       : std::future_status::timeout;
  }
  template <class Clock, class Duration>
  std::future_status wait_until(const std::chrono::time_point<Clock, Duration>& t) const {
    check();
    if (s_->slot.ready()) return std::future_status::ready;
    const auto deadline = detail::to_steady(t);
    return s_->slot.wait(&deadline, wait_kind::future) ? std::future_status::ready
                                                       : std::future_status::timeout;
  }

 private:
  friend class promise<T>;
  explicit future(detail::shared_state<T>* s) noexcept : s_(s) {}
  void check() const {
    if (!s_) detail::throw_future_error(std::future_errc::no_state);
  }
  detail::shared_state<T>* s_ = nullptr;
};

/// The sending end, as std::promise. set_value/set_exception may be called once, from any
/// context (they never block); a second call throws std::future_error(promise_already_satisfied),
/// a second get_future() std::future_error(future_already_retrieved), and any call on a
/// moved-from promise std::future_error(no_state).
template <class T>
class promise {
 public:
  promise() : s_(new detail::shared_state<T>) {}
  promise(promise&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  promise& operator=(promise&& o) noexcept {
    if (this != &o) {
      abandon();
      s_ = std::exchange(o.s_, nullptr);
    }
    return *this;
  }
  ~promise() { abandon(); }

  future<T> get_future() {
    check();
    if (s_->retrieved.exchange(true, std::memory_order_relaxed)) {
      detail::throw_future_error(std::future_errc::future_already_retrieved);
    }
    s_->acquire();
    return future<T>(s_);
  }

  /// Stores the value, constructed from `args` (none for promise<void>), and wakes the waiter.
  template <class... Args>
  void set_value(Args&&... args) {
    check();
    if (!s_->slot.emplace(std::forward<Args>(args)...)) {
      detail::throw_future_error(std::future_errc::promise_already_satisfied);
    }
  }
  void set_exception(std::exception_ptr e) {
    check();
    if (!s_->slot.set_exception(std::move(e))) {
      detail::throw_future_error(std::future_errc::promise_already_satisfied);
    }
  }

 private:
  void check() const {
    if (!s_) detail::throw_future_error(std::future_errc::no_state);
  }
  void abandon() noexcept {
    if (!s_) return;
    if (!s_->slot.ready()) {
      // Broken promise. Racing set_value on another thread is the caller's bug; if one won,
      // set_exception just fails.
      try {
        s_->slot.set_exception(
            std::make_exception_ptr(std::future_error(std::future_errc::broken_promise)));
      } catch (...) {
      }
    }
    s_->release();
    s_ = nullptr;
  }
  detail::shared_state<T>* s_;
};

}  // namespace weft
