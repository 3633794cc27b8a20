// SPDX-License-Identifier: Apache-2.0
// The scoped lock guard that clang's thread-safety analysis follows (std::lock_guard carries no
// annotations in libstdc++), for pools that keep their lists under weft::spinlock.
#pragma once

#include "weft/detail/thread_annotations.hpp"
#include "weft/spinlock.hpp"

namespace weft::ext {

/// Holds `Lock` (weft::spinlock, ...) for its lifetime, as std::lock_guard does, in a way the
/// thread-safety analysis sees.
template <class Lock>
class WEFT_SCOPED_CAPABILITY lock_guard {
 public:
  /// Acquires `l`.
  explicit lock_guard(Lock& l) WEFT_ACQUIRE(l) : l_(l) { l_.lock(); }
  /// Releases it.
  ~lock_guard() WEFT_RELEASE() { l_.unlock(); }
  lock_guard(const lock_guard&) = delete;
  lock_guard& operator=(const lock_guard&) = delete;

 private:
  Lock& l_;
};

/// A weft::spinlock that compiles away when `Locked` is false: one pool template for a private
/// mode (no lock) and the shared modes.
template <bool Locked>
class WEFT_CAPABILITY("mutex") maybe_lock {
 public:
  /// Acquires the spinlock (nothing when unlocked).
  void lock() noexcept WEFT_ACQUIRE() {
    if constexpr (Locked) l_.lock();
  }
  /// Releases it (nothing when unlocked).
  void unlock() noexcept WEFT_RELEASE() {
    if constexpr (Locked) l_.unlock();
  }

 private:
  spinlock l_;
};

}  // namespace weft::ext
