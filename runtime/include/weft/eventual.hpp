// SPDX-License-Identifier: Apache-2.0
// eventual<T>: a value set once and awaited by many, resettable (Argobots' ABT_eventual).
#pragma once

#include <chrono>
#include <type_traits>
#include <utility>

#include "weft/detail/sync.hpp"
#include "weft/detail/value_slot.hpp"
#include "weft/error.hpp"

namespace weft {

/// set() stores a value once and wakes every waiter; wait() blocks until it is set and returns
/// it (the eventual keeps it: every waiter sees the same object). reset() makes it empty again
/// for another round. ULTs, tasklets (when it is already set: wait() never blocks then) and
/// external threads.
///
/// Errors (weft::error): set() on an eventual already set, or reset() while someone waits or a
/// set() is in progress: errc::invalid_state; wait() from a tasklet on an unset eventual:
/// errc::tasklet_cannot_block. The reference wait() returns is valid until reset() or
/// destruction, which the caller must order after the readers are done. A waiter may destroy
/// the eventual as soon as its wait() returned, even while set() has not returned yet.
template <class T>
class eventual {
 public:
  eventual() noexcept = default;
  eventual(const eventual&) = delete;
  eventual& operator=(const eventual&) = delete;

  /// Sets the value (constructed from `args`) and wakes every waiter.
  template <class... Args>
  void set(Args&&... args) {
    if (!slot_.emplace(std::forward<Args>(args)...)) {
      throw error(errc::invalid_state, "weft: eventual::set on an eventual already set");
    }
  }
  /// Blocks until set; returns the value.
  std::add_lvalue_reference_t<T> wait() {
    slot_.wait(nullptr);
    return get();
  }
  /// Blocks until set or `d` passes; returns whether it is set.
  template <class Rep, class Period>
  bool wait_for(const std::chrono::duration<Rep, Period>& d) {
    if (slot_.ready()) return true;
    const auto deadline = detail::deadline_after(d);
    return slot_.wait(&deadline);
  }
  template <class Clock, class Duration>
  bool wait_until(const std::chrono::time_point<Clock, Duration>& t) {
    if (slot_.ready()) return true;
    const auto deadline = detail::to_steady(t);
    return slot_.wait(&deadline);
  }
  /// True once set (never blocks).
  bool is_ready() const noexcept { return slot_.ready(); }
  /// The value; only when is_ready().
  std::add_lvalue_reference_t<T> get() noexcept {
    if constexpr (!std::is_void_v<T>) return slot_.value();
  }
  /// Makes it empty again (destroying the value).
  void reset() {
    if (!slot_.reset()) {
      throw error(errc::invalid_state,
                  "weft: eventual::reset while units wait on it or a set is in progress");
    }
  }

 private:
  detail::value_slot<T> slot_;
};

}  // namespace weft
