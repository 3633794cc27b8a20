// SPDX-License-Identifier: Apache-2.0
// The runtime's annotated lock types: a std::mutex the thread-safety analysis knows, and the RAII
// guard that tells it a lock is held (std::lock_guard carries no annotations in libstdc++).
#pragma once

#include <mutex>

#include "weft/detail/thread_annotations.hpp"
#include "weft/ext/locks.hpp"
#include "weft/spinlock.hpp"

namespace weft::detail {

/// A std::mutex that clang's -Wthread-safety tracks; meets Lockable, so std::lock_guard and
/// std::unique_lock still work (unchecked) where a guard must be handed to a condition variable.
class WEFT_CAPABILITY("mutex") mutex {
 public:
  /// Acquires the mutex.
  void lock() WEFT_ACQUIRE() { m_.lock(); }
  /// Acquires the mutex if it is free.
  bool try_lock() WEFT_TRY_ACQUIRE(true) { return m_.try_lock(); }
  /// Releases the mutex.
  void unlock() WEFT_RELEASE() { m_.unlock(); }
  /// The std::mutex inside, for std::condition_variable (the analysis does not follow it).
  std::mutex& native() noexcept { return m_; }

 private:
  std::mutex m_;
};

/// The annotated scoped guard of the extension API (weft/ext/locks.hpp).
using ext::lock_guard;

}  // namespace weft::detail
