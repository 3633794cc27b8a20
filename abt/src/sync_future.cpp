// SPDX-License-Identifier: Apache-2.0
// ABT_future_*: Argobots' future (ready once all its compartments are set), on weft's wait_queue.
//
// Each set() fills the next compartment with a pointer; the set() that fills the last one runs
// the callback with the array of values (outside the future's spinlock, so a callback may block
// or take locks), then makes the future ready and wakes every waiter. A future with no
// compartment is ready from the start. set() on a full future gets ABT_ERR_FUTURE; wait() from a
// tasklet ABT_ERR_FUTURE (Argobots 1.x); reset() or free() while units wait ABT_ERR_FUTURE
// (undefined in Argobots). There is no static initialiser (Argobots has none).
#include <atomic>
#include <memory>

#include "sync_common.hpp"
#include "weft/spinlock.hpp"
#include "weft/wait_queue.hpp"

namespace weft::abt_sync {
namespace {

struct future_object {
  weft::spinlock lock;                 // guards everything but `ready`'s reads
  std::atomic<bool> ready{false};      // all set and the callback done (release/acquire)
  std::uint32_t compartments = 0;      // fixed at creation
  std::uint32_t filled = 0;            // compartments set so far
  void (*callback)(void**) = nullptr;  // may be null
  std::unique_ptr<void*[]> values;     // `compartments` entries
  weft::wait_queue queue;
};

future_object* future_ptr(ABT_future h) noexcept {
  return object_of<future_object>(h);
}

}  // namespace
}  // namespace weft::abt_sync

using weft::abt_sync::future_object;
using weft::abt_sync::future_ptr;

extern "C" {

int ABT_future_create(uint32_t num_compartments, void (*cb_func)(void** arg),
                      ABT_future* newfuture) {
  if (!newfuture) return ABT_ERR_INV_ARG;
  *newfuture = ABT_FUTURE_NULL;
  auto* f = new (std::nothrow) future_object;
  if (!f) return ABT_ERR_MEM;
  if (num_compartments > 0) {
    f->values.reset(new (std::nothrow) void*[num_compartments]);
    if (!f->values) {
      delete f;
      return ABT_ERR_MEM;
    }
  }
  f->compartments = num_compartments;
  f->callback = cb_func;
  f->ready.store(num_compartments == 0, std::memory_order_relaxed);
  *newfuture = weft::abt_sync::handle_of<ABT_future>(f);
  return ABT_SUCCESS;
}

int ABT_future_free(ABT_future* future) {
  if (!future) return ABT_ERR_INV_ARG;
  future_object* f = future_ptr(*future);
  if (!f) return ABT_ERR_INV_FUTURE;
  // Taking the lock also waits out a set() that is still waking the waiters.
  f->lock.lock();
  const bool busy = !f->queue.empty();
  f->lock.unlock();
  if (busy) return ABT_ERR_FUTURE;
  delete f;
  *future = ABT_FUTURE_NULL;
  return ABT_SUCCESS;
}

int ABT_future_wait(ABT_future future) {
  future_object* f = future_ptr(future);
  if (!f) return ABT_ERR_INV_FUTURE;
  if (weft::abt_sync::caller_is_tasklet()) return ABT_ERR_FUTURE;
  if (f->ready.load(std::memory_order_acquire)) return ABT_SUCCESS;
  f->lock.lock();
  if (f->ready.load(std::memory_order_relaxed)) {
    f->lock.unlock();
    return ABT_SUCCESS;
  }
  weft::waiter w;
  w.kind = weft::wait_kind::future;
  const abt::tool_block_scope block(ABT_SYNC_EVENT_TYPE_FUTURE, f);
  try {
    // Woken only by the last set(), after `ready` was stored under the lock.
    weft::detail::wait_releasing(f->queue, f->lock, w);
  } catch (...) {
    return weft::abt_sync::current_exception_code(ABT_ERR_FUTURE);
  }
  return ABT_SUCCESS;
}

int ABT_future_test(ABT_future future, ABT_bool* is_ready) {
  if (!is_ready) return ABT_ERR_INV_ARG;
  future_object* f = future_ptr(future);
  if (!f) return ABT_ERR_INV_FUTURE;
  *is_ready = f->ready.load(std::memory_order_acquire) ? ABT_TRUE : ABT_FALSE;
  return ABT_SUCCESS;
}

int ABT_future_set(ABT_future future, void* value) {
  future_object* f = future_ptr(future);
  if (!f) return ABT_ERR_INV_FUTURE;
  f->lock.lock();
  if (f->filled >= f->compartments) {  // full, or no compartment at all
    f->lock.unlock();
    return ABT_ERR_FUTURE;
  }
  f->values[f->filled++] = value;
  if (f->filled < f->compartments) {
    f->lock.unlock();
    return ABT_SUCCESS;
  }
  f->lock.unlock();
  // The last compartment: later set() calls fail (filled == compartments), waiters keep waiting
  // until the callback has run.
  if (f->callback) f->callback(f->values.get());
  f->lock.lock();
  f->ready.store(true, std::memory_order_release);
  weft::detail::wake_all_locked(f->queue);
  f->lock.unlock();
  return ABT_SUCCESS;
}

int ABT_future_reset(ABT_future future) {
  future_object* f = future_ptr(future);
  if (!f) return ABT_ERR_INV_FUTURE;
  f->lock.lock();
  const bool busy = !f->queue.empty();
  if (!busy) {
    f->filled = 0;
    f->ready.store(f->compartments == 0, std::memory_order_relaxed);
  }
  f->lock.unlock();
  return busy ? ABT_ERR_FUTURE : ABT_SUCCESS;
}

}  // extern "C"
