// SPDX-License-Identifier: Apache-2.0
// ABT_mutex_* and ABT_mutex_attr_*: Argobots' mutex over weft::mutex.
//
// Semantics follow Argobots 1.2: lock_low, lock_high and lock are the same lock (Argobots' own
// priorities are advisory and its 1.2 code treats them alike); unlock_se and unlock_de are
// unlock (their hand-over is a hint a conforming program may not rely on); spinlock busy-waits
// on the calling stream; tasklets may lock and then spin instead of blocking. A mutex may be
// freed while locked (as in Argobots), never while units wait on it.
#include <thread>

#include "sync_mutex.hpp"

namespace weft::abt_sync {

namespace {

/// ABT_mutex_attr: the attrs a new mutex starts with.
struct mutex_attr_object {
  std::uint32_t attrs;
};

/// Spins (the stream stays on the caller) until the mutex is taken. After a while it lets the
/// kernel run something else, so a holder preempted on this core can finish.
void spin_acquire(weft::mutex& lock) noexcept {
  for (unsigned i = 1;; ++i) {
    if (lock.try_lock()) return;
    if (i % 1024 == 0) {
      std::this_thread::yield();
    } else {
      weft::cpu_relax();
    }
  }
}

int create(std::uint32_t attrs, ABT_mutex* newmutex) noexcept {
  if (!newmutex) return ABT_ERR_INV_ARG;
  *newmutex = ABT_MUTEX_NULL;
  auto* m = new (std::nothrow) mutex_object{};
  if (!m) return ABT_ERR_MEM;
  m->attrs = attrs | heap_flag;
  *newmutex = handle_of<ABT_mutex>(m);
  return ABT_SUCCESS;
}

}  // namespace

int acquire_slow(mutex_object& m, mutex_wait how) noexcept {
  if (how == mutex_wait::spin || caller_is_tasklet()) {
    spin_acquire(m.lock);
    return ABT_SUCCESS;
  }
  try {
    // Contended: the ULT may block (reported as such; weft's mutex may also take it by spinning).
    const abt::tool_block_scope block(ABT_SYNC_EVENT_TYPE_MUTEX, &m);
    m.lock.lock();
    return ABT_SUCCESS;
  } catch (...) {
    return current_exception_code(ABT_ERR_MUTEX);
  }
}

}  // namespace weft::abt_sync

using weft::abt_sync::handle_of;
using weft::abt_sync::mutex_attr_object;
using weft::abt_sync::mutex_object;
using weft::abt_sync::mutex_wait;
using weft::abt_sync::object_of;

namespace {
mutex_object* mutex_ptr(ABT_mutex h) noexcept {
  return object_of<mutex_object>(h);
}
mutex_attr_object* attr_ptr(ABT_mutex_attr h) noexcept {
  return object_of<mutex_attr_object>(h);
}

int lock_with(ABT_mutex mutex, mutex_wait how) noexcept {
  mutex_object* m = mutex_ptr(mutex);
  if (!m) return ABT_ERR_INV_MUTEX;
  return weft::abt_sync::mutex_lock(*m, how);
}

int unlock(ABT_mutex mutex) noexcept {
  mutex_object* m = mutex_ptr(mutex);
  if (!m) return ABT_ERR_INV_MUTEX;
  return weft::abt_sync::mutex_unlock(*m);
}
}  // namespace

extern "C" {

int ABT_mutex_create(ABT_mutex* newmutex) {
  return weft::abt_sync::create(0, newmutex);
}

int ABT_mutex_create_with_attr(ABT_mutex_attr attr, ABT_mutex* newmutex) {
  // ABT_MUTEX_ATTR_NULL means default attributes (Argobots 1.1 and later).
  const mutex_attr_object* a = attr_ptr(attr);
  return weft::abt_sync::create(a ? a->attrs : 0, newmutex);
}

int ABT_mutex_free(ABT_mutex* mutex) {
  if (!mutex) return ABT_ERR_INV_ARG;
  mutex_object* m = mutex_ptr(*mutex);
  // Memory from ABT_mutex_memory was not allocated here: refusing it beats corrupting the heap.
  if (!m || !(m->attrs & weft::abt_sync::heap_flag)) return ABT_ERR_INV_MUTEX;
  delete m;
  *mutex = ABT_MUTEX_NULL;
  return ABT_SUCCESS;
}

int ABT_mutex_lock(ABT_mutex mutex) {
  return lock_with(mutex, mutex_wait::block);
}
int ABT_mutex_lock_low(ABT_mutex mutex) {
  return lock_with(mutex, mutex_wait::block);
}
int ABT_mutex_lock_high(ABT_mutex mutex) {
  return lock_with(mutex, mutex_wait::block);
}
int ABT_mutex_spinlock(ABT_mutex mutex) {
  return lock_with(mutex, mutex_wait::spin);
}

int ABT_mutex_trylock(ABT_mutex mutex) {
  mutex_object* m = mutex_ptr(mutex);
  if (!m) return ABT_ERR_INV_MUTEX;
  return weft::abt_sync::mutex_trylock(*m);
}

int ABT_mutex_unlock(ABT_mutex mutex) {
  return unlock(mutex);
}
int ABT_mutex_unlock_se(ABT_mutex mutex) {
  return unlock(mutex);
}
int ABT_mutex_unlock_de(ABT_mutex mutex) {
  return unlock(mutex);
}

int ABT_mutex_equal(ABT_mutex mutex1, ABT_mutex mutex2, ABT_bool* result) {
  if (!result) return ABT_ERR_INV_ARG;
  *result = mutex1 == mutex2 ? ABT_TRUE : ABT_FALSE;
  return ABT_SUCCESS;
}

int ABT_mutex_get_attr(ABT_mutex mutex, ABT_mutex_attr* attr) {
  if (!attr) return ABT_ERR_INV_ARG;
  const mutex_object* m = mutex_ptr(mutex);
  if (!m) return ABT_ERR_INV_MUTEX;
  auto* a = new (std::nothrow) mutex_attr_object{m->attrs & mutex_object::recursive};
  if (!a) return ABT_ERR_MEM;
  *attr = handle_of<ABT_mutex_attr>(a);
  return ABT_SUCCESS;
}

int ABT_mutex_attr_create(ABT_mutex_attr* newattr) {
  if (!newattr) return ABT_ERR_INV_ARG;
  *newattr = ABT_MUTEX_ATTR_NULL;
  auto* a = new (std::nothrow) mutex_attr_object{0};
  if (!a) return ABT_ERR_MEM;
  *newattr = handle_of<ABT_mutex_attr>(a);
  return ABT_SUCCESS;
}

int ABT_mutex_attr_free(ABT_mutex_attr* attr) {
  if (!attr) return ABT_ERR_INV_ARG;
  mutex_attr_object* a = attr_ptr(*attr);
  if (!a) return ABT_ERR_INV_MUTEX_ATTR;
  delete a;
  *attr = ABT_MUTEX_ATTR_NULL;
  return ABT_SUCCESS;
}

int ABT_mutex_attr_set_recursive(ABT_mutex_attr attr, ABT_bool recursive) {
  mutex_attr_object* a = attr_ptr(attr);
  if (!a) return ABT_ERR_INV_MUTEX_ATTR;
  if (recursive) {
    a->attrs |= mutex_object::recursive;
  } else {
    a->attrs &= ~mutex_object::recursive;
  }
  return ABT_SUCCESS;
}

int ABT_mutex_attr_get_recursive(ABT_mutex_attr attr, ABT_bool* recursive) {
  if (!recursive) return ABT_ERR_INV_ARG;
  const mutex_attr_object* a = attr_ptr(attr);
  if (!a) return ABT_ERR_INV_MUTEX_ATTR;
  *recursive = (a->attrs & mutex_object::recursive) ? ABT_TRUE : ABT_FALSE;
  return ABT_SUCCESS;
}

}  // extern "C"
