// SPDX-License-Identifier: Apache-2.0
// ABT_xstream_barrier_*: a barrier between execution streams (kernel threads), as in Argobots.
//
// Unlike ABT_barrier, a waiter blocks its whole execution stream (the kernel thread sleeps on a
// futex through std::condition_variable; nothing else runs on that stream meanwhile), which is
// what Argobots documents: it is for synchronising the streams themselves, e.g. the main loops
// of schedulers. ULTs, tasklets and external threads may all wait. A barrier of one waiter
// returns at once.
#include <condition_variable>
#include <mutex>

#include "sync_common.hpp"

namespace weft::abt_sync {
namespace {

struct xstream_barrier_object {
  std::mutex lock;  // guards everything below
  std::condition_variable released;
  std::uint32_t parties = 0;
  std::uint32_t arrived = 0;     // in the current round
  std::uint64_t generation = 0;  // rounds completed: a waiter leaves when it changes
};

xstream_barrier_object* barrier_ptr(ABT_xstream_barrier h) noexcept {
  return object_of<xstream_barrier_object>(h);
}

}  // namespace
}  // namespace weft::abt_sync

using weft::abt_sync::barrier_ptr;
using weft::abt_sync::xstream_barrier_object;

extern "C" {

int ABT_xstream_barrier_create(uint32_t num_waiters, ABT_xstream_barrier* newbarrier) {
  if (!newbarrier) return ABT_ERR_INV_ARG;
  *newbarrier = ABT_XSTREAM_BARRIER_NULL;
  if (num_waiters == 0) return ABT_ERR_INV_ARG;
  auto* b = new (std::nothrow) xstream_barrier_object;
  if (!b) return ABT_ERR_MEM;
  b->parties = num_waiters;
  *newbarrier = weft::abt_sync::handle_of<ABT_xstream_barrier>(b);
  return ABT_SUCCESS;
}

int ABT_xstream_barrier_free(ABT_xstream_barrier* barrier) {
  if (!barrier) return ABT_ERR_INV_ARG;
  xstream_barrier_object* b = barrier_ptr(*barrier);
  if (!b) return ABT_ERR_INV_XSTREAM_BARRIER;
  {
    // Waits out a last arriver that is still inside; refuses a barrier with waiters.
    std::lock_guard g(b->lock);
    if (b->arrived != 0) return ABT_ERR_XSTREAM_BARRIER;
  }
  delete b;
  *barrier = ABT_XSTREAM_BARRIER_NULL;
  return ABT_SUCCESS;
}

int ABT_xstream_barrier_wait(ABT_xstream_barrier barrier) {
  xstream_barrier_object* b = barrier_ptr(barrier);
  if (!b) return ABT_ERR_INV_XSTREAM_BARRIER;
  if (b->parties == 1) return ABT_SUCCESS;
  try {
    std::unique_lock g(b->lock);
    if (++b->arrived == b->parties) {
      b->arrived = 0;
      ++b->generation;
      // Notified under the lock: a woken waiter cannot free the barrier before we are done.
      b->released.notify_all();
      return ABT_SUCCESS;
    }
    const std::uint64_t generation = b->generation;
    b->released.wait(g, [&] { return b->generation != generation; });
  } catch (...) {
    return weft::abt_sync::current_exception_code(ABT_ERR_XSTREAM_BARRIER);
  }
  return ABT_SUCCESS;
}

}  // extern "C"
