// SPDX-License-Identifier: Apache-2.0
// ABT_barrier_*: Argobots' barrier for work units, on weft's wait_queue.
//
// weft::barrier fixes its party count at construction, and Argobots' barrier can be
// re-initialised with another count, so this one keeps its own state (same mechanism: the last
// arriver resets the round and wakes everyone; it never blocks). Tasklets get ABT_ERR_BARRIER
// (Argobots 1.x). reinit() or free() while units wait get ABT_ERR_BARRIER (undefined in Argobots).
#include "sync_common.hpp"
#include "weft/spinlock.hpp"
#include "weft/wait_queue.hpp"

namespace weft::abt_sync {
namespace {

struct barrier_object {
  weft::spinlock lock;  // guards everything below
  std::uint32_t parties = 0;
  std::uint32_t arrived = 0;  // in the current round
  weft::wait_queue queue;
};

barrier_object* barrier_ptr(ABT_barrier h) noexcept {
  return object_of<barrier_object>(h);
}

}  // namespace
}  // namespace weft::abt_sync

using weft::abt_sync::barrier_object;
using weft::abt_sync::barrier_ptr;

extern "C" {

int ABT_barrier_create(uint32_t num_waiters, ABT_barrier* newbarrier) {
  if (!newbarrier) return ABT_ERR_INV_ARG;
  *newbarrier = ABT_BARRIER_NULL;
  if (num_waiters == 0) return ABT_ERR_INV_ARG;
  auto* b = new (std::nothrow) barrier_object;
  if (!b) return ABT_ERR_MEM;
  b->parties = num_waiters;
  *newbarrier = weft::abt_sync::handle_of<ABT_barrier>(b);
  return ABT_SUCCESS;
}

int ABT_barrier_reinit(ABT_barrier barrier, uint32_t num_waiters) {
  barrier_object* b = barrier_ptr(barrier);
  if (!b) return ABT_ERR_INV_BARRIER;
  if (num_waiters == 0) return ABT_ERR_INV_ARG;
  b->lock.lock();
  const bool busy = b->arrived != 0;
  if (!busy) b->parties = num_waiters;
  b->lock.unlock();
  return busy ? ABT_ERR_BARRIER : ABT_SUCCESS;
}

int ABT_barrier_free(ABT_barrier* barrier) {
  if (!barrier) return ABT_ERR_INV_ARG;
  barrier_object* b = barrier_ptr(*barrier);
  if (!b) return ABT_ERR_INV_BARRIER;
  // Taking the lock also waits out a last arriver that is still waking the others.
  b->lock.lock();
  const bool busy = b->arrived != 0;
  b->lock.unlock();
  if (busy) return ABT_ERR_BARRIER;
  delete b;
  *barrier = ABT_BARRIER_NULL;
  return ABT_SUCCESS;
}

int ABT_barrier_wait(ABT_barrier barrier) {
  barrier_object* b = barrier_ptr(barrier);
  if (!b) return ABT_ERR_INV_BARRIER;
  if (weft::abt_sync::caller_is_tasklet()) return ABT_ERR_BARRIER;
  b->lock.lock();
  if (++b->arrived == b->parties) {
    b->arrived = 0;
    weft::detail::wake_all_locked(b->queue);
    b->lock.unlock();
    return ABT_SUCCESS;
  }
  weft::waiter w;
  w.kind = weft::wait_kind::barrier;
  const abt::tool_block_scope block(ABT_SYNC_EVENT_TYPE_BARRIER, b);
  try {
    weft::detail::wait_releasing(b->queue, b->lock, w);
  } catch (...) {
    b->lock.lock();
    --b->arrived;  // withdraw the arrival: this caller did not wait
    b->lock.unlock();
    return weft::abt_sync::current_exception_code(ABT_ERR_BARRIER);
  }
  return ABT_SUCCESS;
}

int ABT_barrier_get_num_waiters(ABT_barrier barrier, uint32_t* num_waiters) {
  if (!num_waiters) return ABT_ERR_INV_ARG;
  barrier_object* b = barrier_ptr(barrier);
  if (!b) return ABT_ERR_INV_BARRIER;
  b->lock.lock();
  *num_waiters = b->parties;
  b->lock.unlock();
  return ABT_SUCCESS;
}

}  // extern "C"
