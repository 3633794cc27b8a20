// SPDX-License-Identifier: Apache-2.0
// The object behind ABT_mutex, and its lock and unlock, shared by the mutex and condition
// variable files of the Argobots layer.
#pragma once

#include <atomic>
#include <cstdint>

#include "sync_common.hpp"
#include "weft/mutex.hpp"
#include "weft/spinlock.hpp"

namespace weft::abt_sync {

/// ABT_mutex: a weft::mutex plus Argobots' recursive mode. All-zero bytes are an unlocked plain
/// mutex (ABT_MUTEX_INITIALIZER) and a first int of 1 an unlocked recursive one
/// (ABT_RECURSIVE_MUTEX_INITIALIZER), so ABT_mutex_memory needs no constructor.
///
/// Who may call: ULTs block without blocking their stream, external threads sleep on a futex,
/// tasklets (which cannot block in weft) spin, as Argobots lets them. Cost: an uncontended
/// lock/unlock of a plain mutex is weft::mutex's (one compare-and-swap each); a recursive
/// one adds a look-up of the caller's identity.
struct mutex_object {
  /// attrs bit of a recursive mutex; equals the first int of ABT_RECURSIVE_MUTEX_INITIALIZER.
  static constexpr std::uint32_t recursive = 1;

  std::uint32_t attrs;                // recursive, heap_flag; fixed once the handle exists
  std::uint32_t depth;                // recursive: locks held beyond the first (holder only)
  std::atomic<std::uintptr_t> owner;  // recursive: caller identity of the holder, 0 when free
  weft::mutex lock;
};
static_assert(sizeof(mutex_object) <= sizeof(ABT_mutex_memory), "ABT_mutex_memory too small");
static_assert(alignof(mutex_object) <= alignof(ABT_mutex_memory), "ABT_mutex_memory misaligned");

/// How a contended acquisition waits.
enum class mutex_wait : std::uint8_t {
  block,  ///< a ULT blocks, an external thread sleeps, a tasklet spins
  spin,   ///< everyone busy-waits (ABT_mutex_spinlock): the stream stays on the caller
};

/// The contended path of acquire(): returns ABT_SUCCESS or an error code (nothing acquired).
int acquire_slow(mutex_object& m, mutex_wait how) noexcept;

/// Takes m's weft::mutex (not the recursive bookkeeping).
inline int acquire(mutex_object& m, mutex_wait how) noexcept {
  if (m.lock.try_lock()) return ABT_SUCCESS;
  return acquire_slow(m, how);
}

/// ABT_mutex_lock and its variants on a valid mutex.
inline int mutex_lock(mutex_object& m, mutex_wait how) noexcept {
  if (!(m.attrs & mutex_object::recursive)) return acquire(m, how);
  const std::uintptr_t me = weft::detail::caller_identity();
  if (m.owner.load(std::memory_order_relaxed) == me) {
    ++m.depth;
    return ABT_SUCCESS;
  }
  const int rc = acquire(m, how);
  if (rc == ABT_SUCCESS) m.owner.store(me, std::memory_order_relaxed);
  return rc;
}

/// ABT_mutex_trylock on a valid mutex: ABT_SUCCESS or ABT_ERR_MUTEX_LOCKED, never blocks.
inline int mutex_trylock(mutex_object& m) noexcept {
  if (!(m.attrs & mutex_object::recursive)) {
    return m.lock.try_lock() ? ABT_SUCCESS : ABT_ERR_MUTEX_LOCKED;
  }
  const std::uintptr_t me = weft::detail::caller_identity();
  if (m.owner.load(std::memory_order_relaxed) == me) {
    ++m.depth;
    return ABT_SUCCESS;
  }
  if (!m.lock.try_lock()) return ABT_ERR_MUTEX_LOCKED;
  m.owner.store(me, std::memory_order_relaxed);
  return ABT_SUCCESS;
}

/// ABT_mutex_unlock on a valid mutex held by the caller. A recursive mutex unlocked by a unit
/// that does not hold it gets ABT_ERR_INV_THREAD (Argobots leaves that undefined).
inline int mutex_unlock(mutex_object& m) noexcept {
  if (m.attrs & mutex_object::recursive) {
    if (m.owner.load(std::memory_order_relaxed) != weft::detail::caller_identity()) {
      return ABT_ERR_INV_THREAD;
    }
    if (m.depth != 0) {
      --m.depth;
      return ABT_SUCCESS;
    }
    m.owner.store(0, std::memory_order_relaxed);
  }
  m.lock.unlock();
  return ABT_SUCCESS;
}

}  // namespace weft::abt_sync
