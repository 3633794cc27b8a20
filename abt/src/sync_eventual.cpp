// SPDX-License-Identifier: Apache-2.0
// ABT_eventual_*: Argobots' eventual (a value set once, awaited by many, resettable), on weft's
// wait_queue. weft::eventual<T> holds a typed value; Argobots' carries a byte buffer sized at
// creation and filled by set() under the eventual's lock, so this one keeps its own state.
//
// wait() from a tasklet is refused (ABT_ERR_EVENTUAL, as Argobots 1.x), even on a ready eventual.
// set() on a ready eventual gets ABT_ERR_EVENTUAL, more bytes than the buffer holds
// ABT_ERR_INV_EVENTUAL (Argobots 1.x). reset() or free() while units wait get ABT_ERR_EVENTUAL
// (undefined in Argobots).
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "sync_common.hpp"
#include "weft/spinlock.hpp"
#include "weft/wait_queue.hpp"

namespace weft::abt_sync {
namespace {

/// ABT_eventual. All-zero bytes are an unready eventual without a buffer
/// (ABT_EVENTUAL_INITIALIZER), which can be set with nbytes 0 only, as in Argobots.
struct eventual_object {
  std::uint32_t flags;               // heap_flag
  std::atomic<std::uint32_t> ready;  // written under `lock`; release/acquire publishes the buffer
  std::size_t nbytes;                // size of `buffer`
  void* buffer;                      // nbytes bytes from malloc (aligned for any type), or null
  weft::spinlock lock;
  weft::wait_queue queue;
};
static_assert(sizeof(eventual_object) <= sizeof(ABT_eventual_memory),
              "ABT_eventual_memory too small");
static_assert(alignof(eventual_object) <= alignof(ABT_eventual_memory),
              "ABT_eventual_memory misaligned");

eventual_object* eventual_ptr(ABT_eventual h) noexcept {
  return object_of<eventual_object>(h);
}

}  // namespace
}  // namespace weft::abt_sync

using weft::abt_sync::eventual_object;
using weft::abt_sync::eventual_ptr;

extern "C" {

int ABT_eventual_create(int nbytes, ABT_eventual* neweventual) {
  if (!neweventual) return ABT_ERR_INV_ARG;
  *neweventual = ABT_EVENTUAL_NULL;
  if (nbytes < 0) return ABT_ERR_INV_ARG;
  void* buffer = nullptr;
  if (nbytes > 0 && !(buffer = std::malloc(static_cast<std::size_t>(nbytes)))) return ABT_ERR_MEM;
  auto* e = new (std::nothrow) eventual_object{};
  if (!e) {
    std::free(buffer);
    return ABT_ERR_MEM;
  }
  e->flags = weft::abt_sync::heap_flag;
  e->nbytes = static_cast<std::size_t>(nbytes);
  e->buffer = buffer;
  *neweventual = weft::abt_sync::handle_of<ABT_eventual>(e);
  return ABT_SUCCESS;
}

int ABT_eventual_free(ABT_eventual* eventual) {
  if (!eventual) return ABT_ERR_INV_ARG;
  eventual_object* e = eventual_ptr(*eventual);
  if (!e || !(e->flags & weft::abt_sync::heap_flag)) return ABT_ERR_INV_EVENTUAL;
  // Taking the lock also waits out a set() that is still waking the waiters.
  e->lock.lock();
  const bool busy = !e->queue.empty();
  e->lock.unlock();
  if (busy) return ABT_ERR_EVENTUAL;
  std::free(e->buffer);
  delete e;
  *eventual = ABT_EVENTUAL_NULL;
  return ABT_SUCCESS;
}

int ABT_eventual_wait(ABT_eventual eventual, void** value) {
  eventual_object* e = eventual_ptr(eventual);
  if (!e) return ABT_ERR_INV_EVENTUAL;
  if (weft::abt_sync::caller_is_tasklet()) return ABT_ERR_EVENTUAL;
  if (!e->ready.load(std::memory_order_acquire)) {
    e->lock.lock();
    if (e->ready.load(std::memory_order_relaxed)) {
      e->lock.unlock();
    } else {
      weft::waiter w;
      w.kind = weft::wait_kind::eventual;
      const abt::tool_block_scope block(ABT_SYNC_EVENT_TYPE_EVENTUAL, e);
      try {
        // Woken only by set(), after `ready` was stored under the lock.
        weft::detail::wait_releasing(e->queue, e->lock, w);
      } catch (...) {
        return weft::abt_sync::current_exception_code(ABT_ERR_EVENTUAL);
      }
    }
  }
  if (value) *value = e->buffer;
  return ABT_SUCCESS;
}

int ABT_eventual_test(ABT_eventual eventual, void** value, ABT_bool* is_ready) {
  if (!is_ready) return ABT_ERR_INV_ARG;
  eventual_object* e = eventual_ptr(eventual);
  if (!e) return ABT_ERR_INV_EVENTUAL;
  if (e->ready.load(std::memory_order_acquire)) {
    if (value) *value = e->buffer;
    *is_ready = ABT_TRUE;
  } else {
    *is_ready = ABT_FALSE;
  }
  return ABT_SUCCESS;
}

int ABT_eventual_set(ABT_eventual eventual, void* value, int nbytes) {
  eventual_object* e = eventual_ptr(eventual);
  if (!e) return ABT_ERR_INV_EVENTUAL;
  if (nbytes < 0) return ABT_ERR_INV_ARG;
  if (static_cast<std::size_t>(nbytes) > e->nbytes) return ABT_ERR_INV_EVENTUAL;
  if (nbytes > 0 && !value) return ABT_ERR_INV_ARG;
  e->lock.lock();
  if (e->ready.load(std::memory_order_relaxed)) {
    e->lock.unlock();
    return ABT_ERR_EVENTUAL;
  }
  if (nbytes > 0) std::memcpy(e->buffer, value, static_cast<std::size_t>(nbytes));
  e->ready.store(1, std::memory_order_release);
  weft::detail::wake_all_locked(e->queue);
  e->lock.unlock();
  return ABT_SUCCESS;
}

int ABT_eventual_reset(ABT_eventual eventual) {
  eventual_object* e = eventual_ptr(eventual);
  if (!e) return ABT_ERR_INV_EVENTUAL;
  e->lock.lock();
  const bool busy = !e->queue.empty();
  if (!busy) e->ready.store(0, std::memory_order_relaxed);
  e->lock.unlock();
  return busy ? ABT_ERR_EVENTUAL : ABT_SUCCESS;
}

}  // extern "C"
