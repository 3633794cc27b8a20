// SPDX-License-Identifier: Apache-2.0
// ABT_cond_*: Argobots' condition variable, on weft's wait_queue.
//
// A waiter is queued before it releases the mutex (both under the condition's spinlock), so a
// signal sent after the release always finds it; signal wakes the longest waiter, broadcast all.
// As Argobots promises, there are no spurious wake-ups, and a timed wait that reports
// ABT_ERR_COND_TIMEDOUT was never picked by a signal. One mutex per condition variable while it
// has waiters (another one gets ABT_ERR_INV_MUTEX). Tasklets cannot wait (ABT_ERR_COND).
#include "sync_mutex.hpp"

namespace weft::abt_sync {
namespace {

/// ABT_cond. All-zero bytes are a condition variable without waiters (ABT_COND_INITIALIZER).
struct cond_object {
  std::uint32_t flags;         // heap_flag
  std::uint32_t waiting;       // callers inside wait (queued or just woken); under `lock`
  weft::spinlock lock;         // guards everything below
  mutex_object* waiter_mutex;  // the mutex of the current waiters; meaningful while waiting > 0
  weft::wait_queue queue;
};
static_assert(sizeof(cond_object) <= sizeof(ABT_cond_memory), "ABT_cond_memory too small");
static_assert(alignof(cond_object) <= alignof(ABT_cond_memory), "ABT_cond_memory misaligned");

cond_object* cond_ptr(ABT_cond h) noexcept {
  return object_of<cond_object>(h);
}

/// Waits on `c` with `m` (held by the caller) until signalled or `deadline` (nullptr: none).
int wait(cond_object& c, mutex_object& m,
         const std::chrono::steady_clock::time_point* deadline) noexcept {
  if (caller_is_tasklet()) return ABT_ERR_COND;
  // A recursive mutex held more than once would stay locked while we sleep: nobody could
  // signal us (Argobots leaves this undefined; we refuse it).
  if ((m.attrs & mutex_object::recursive) &&
      m.owner.load(std::memory_order_relaxed) == weft::detail::caller_identity() && m.depth != 0) {
    return ABT_ERR_INV_MUTEX;
  }
  c.lock.lock();
  if (c.waiting != 0 && c.waiter_mutex != &m) {
    c.lock.unlock();
    return ABT_ERR_INV_MUTEX;
  }
  c.waiter_mutex = &m;
  ++c.waiting;
  // Released under c.lock: a signaller that takes c.lock after this cannot miss us. Its
  // unlock never blocks (it only hands the mutex to its next waiter).
  int rc = mutex_unlock(m);
  weft::wait_status st = weft::wait_status::notified;
  if (rc == ABT_SUCCESS) {
    weft::waiter w;
    w.kind = weft::wait_kind::condition_variable;
    const abt::tool_block_scope block(ABT_SYNC_EVENT_TYPE_COND, &c);
    try {
      st = weft::detail::wait_releasing(c.queue, c.lock, w, deadline);
    } catch (...) {  // a timer could not be set up: nothing was queued, c.lock was released
      rc = current_exception_code(ABT_ERR_COND);
    }
    c.lock.lock();
  }
  --c.waiting;
  c.lock.unlock();
  if (rc == ABT_ERR_INV_THREAD) return rc;  // m was not ours to release: nothing to retake
  // The mutex is held again on every way out, as Argobots promises.
  const int relock = mutex_lock(m, mutex_wait::block);
  if (rc == ABT_SUCCESS) rc = relock;
  if (rc == ABT_SUCCESS && st == weft::wait_status::timed_out) rc = ABT_ERR_COND_TIMEDOUT;
  return rc;
}

}  // namespace
}  // namespace weft::abt_sync

using weft::abt_sync::cond_object;
using weft::abt_sync::cond_ptr;
using weft::abt_sync::mutex_object;
using weft::abt_sync::object_of;

extern "C" {

int ABT_cond_create(ABT_cond* newcond) {
  if (!newcond) return ABT_ERR_INV_ARG;
  *newcond = ABT_COND_NULL;
  auto* c = new (std::nothrow) cond_object{};
  if (!c) return ABT_ERR_MEM;
  c->flags = weft::abt_sync::heap_flag;
  *newcond = weft::abt_sync::handle_of<ABT_cond>(c);
  return ABT_SUCCESS;
}

int ABT_cond_free(ABT_cond* cond) {
  if (!cond) return ABT_ERR_INV_ARG;
  cond_object* c = cond_ptr(*cond);
  if (!c || !(c->flags & weft::abt_sync::heap_flag)) return ABT_ERR_INV_COND;
  // Taking the lock also waits out a broadcast that is still releasing it.
  c->lock.lock();
  const bool busy = c->waiting != 0;
  c->lock.unlock();
  if (busy) return ABT_ERR_COND;  // Argobots 1.x refuses to free a condition with waiters
  delete c;
  *cond = ABT_COND_NULL;
  return ABT_SUCCESS;
}

int ABT_cond_wait(ABT_cond cond, ABT_mutex mutex) {
  cond_object* c = cond_ptr(cond);
  if (!c) return ABT_ERR_INV_COND;
  mutex_object* m = object_of<mutex_object>(mutex);
  if (!m) return ABT_ERR_INV_MUTEX;
  return weft::abt_sync::wait(*c, *m, nullptr);
}

int ABT_cond_timedwait(ABT_cond cond, ABT_mutex mutex, const struct timespec* abstime) {
  cond_object* c = cond_ptr(cond);
  if (!c) return ABT_ERR_INV_COND;
  mutex_object* m = object_of<mutex_object>(mutex);
  if (!m) return ABT_ERR_INV_MUTEX;
  if (!abstime) return ABT_ERR_INV_ARG;
  const auto deadline = weft::abt_sync::steady_deadline(*abstime);
  return weft::abt_sync::wait(*c, *m, &deadline);
}

int ABT_cond_signal(ABT_cond cond) {
  cond_object* c = cond_ptr(cond);
  if (!c) return ABT_ERR_INV_COND;
  c->lock.lock();
  weft::wakeup wk = c->queue.take();
  c->lock.unlock();
  wk();
  return ABT_SUCCESS;
}

int ABT_cond_broadcast(ABT_cond cond) {
  cond_object* c = cond_ptr(cond);
  if (!c) return ABT_ERR_INV_COND;
  c->lock.lock();
  weft::detail::wake_all_locked(c->queue);
  c->lock.unlock();
  return ABT_SUCCESS;
}

}  // extern "C"
