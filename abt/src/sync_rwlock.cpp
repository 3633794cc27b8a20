// SPDX-License-Identifier: Apache-2.0
// ABT_rwlock_*: Argobots' readers-writer lock over weft::rwlock.
//
// weft::rwlock is phase-fair (neither readers nor writers starve; Argobots' own is
// reader-preferring, which a conforming program cannot tell apart). ABT_rwlock_unlock serves
// both sides, so the object records whether a writer holds it. Tasklets get ABT_ERR_RWLOCK from
// rdlock and wrlock, as in Argobots 1.x. There is no static initialiser (Argobots has none).
#include <atomic>

#include "sync_common.hpp"
#include "weft/rwlock.hpp"

namespace weft::abt_sync {
namespace {

struct rwlock_object {
  weft::rwlock lock;
  // True while a writer holds `lock`. Only the holder writes it; an unlocking reader reads false
  // because no writer can get in while it still holds its share.
  std::atomic<bool> writer{false};
  // Readers inside, so that an unlock of an rwlock nobody holds is refused (ABT_ERR_RWLOCK)
  // instead of corrupting the lock (Argobots leaves it undefined).
  std::atomic<std::size_t> readers{0};
};

rwlock_object* rwlock_ptr(ABT_rwlock h) noexcept {
  return object_of<rwlock_object>(h);
}

}  // namespace
}  // namespace weft::abt_sync

using weft::abt_sync::rwlock_object;
using weft::abt_sync::rwlock_ptr;

extern "C" {

int ABT_rwlock_create(ABT_rwlock* newrwlock) {
  if (!newrwlock) return ABT_ERR_INV_ARG;
  *newrwlock = ABT_RWLOCK_NULL;
  auto* r = new (std::nothrow) rwlock_object;
  if (!r) return ABT_ERR_MEM;
  *newrwlock = weft::abt_sync::handle_of<ABT_rwlock>(r);
  return ABT_SUCCESS;
}

int ABT_rwlock_free(ABT_rwlock* rwlock) {
  if (!rwlock) return ABT_ERR_INV_ARG;
  rwlock_object* r = rwlock_ptr(*rwlock);
  if (!r) return ABT_ERR_INV_RWLOCK;
  // try_lock() takes the rwlock's internal spinlock: an unlock that is still handing the lock
  // over has finished with the object once it returns. Freeing a held rwlock is allowed.
  (void)r->lock.try_lock();
  delete r;
  *rwlock = ABT_RWLOCK_NULL;
  return ABT_SUCCESS;
}

int ABT_rwlock_rdlock(ABT_rwlock rwlock) {
  rwlock_object* r = rwlock_ptr(rwlock);
  if (!r) return ABT_ERR_INV_RWLOCK;
  if (weft::abt_sync::caller_is_tasklet()) return ABT_ERR_RWLOCK;
  try {
    if (!r->lock.try_lock_shared()) {
      const abt::tool_block_scope block(ABT_SYNC_EVENT_TYPE_RWLOCK, r);
      r->lock.lock_shared();
    }
  } catch (...) {
    return weft::abt_sync::current_exception_code(ABT_ERR_RWLOCK);
  }
  r->readers.fetch_add(1, std::memory_order_relaxed);
  return ABT_SUCCESS;
}

int ABT_rwlock_wrlock(ABT_rwlock rwlock) {
  rwlock_object* r = rwlock_ptr(rwlock);
  if (!r) return ABT_ERR_INV_RWLOCK;
  if (weft::abt_sync::caller_is_tasklet()) return ABT_ERR_RWLOCK;
  try {
    if (!r->lock.try_lock()) {
      const abt::tool_block_scope block(ABT_SYNC_EVENT_TYPE_RWLOCK, r);
      r->lock.lock();
    }
  } catch (...) {
    return weft::abt_sync::current_exception_code(ABT_ERR_RWLOCK);
  }
  r->writer.store(true, std::memory_order_relaxed);
  return ABT_SUCCESS;
}

int ABT_rwlock_unlock(ABT_rwlock rwlock) {
  rwlock_object* r = rwlock_ptr(rwlock);
  if (!r) return ABT_ERR_INV_RWLOCK;
  if (r->writer.load(std::memory_order_relaxed)) {
    r->writer.store(false, std::memory_order_relaxed);
    r->lock.unlock();
  } else {
    std::size_t n = r->readers.load(std::memory_order_relaxed);
    do {
      if (n == 0) return ABT_ERR_RWLOCK;
    } while (!r->readers.compare_exchange_weak(n, n - 1, std::memory_order_relaxed));
    r->lock.unlock_shared();
  }
  return ABT_SUCCESS;
}

}  // extern "C"
