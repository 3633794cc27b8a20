// SPDX-License-Identifier: Apache-2.0
// ABT_xstream_barrier_*: a barrier between execution streams (kernel threads), a POSIX barrier
// behind the handle, as in Argobots.
//
// Unlike ABT_barrier, a waiter blocks its whole execution stream (the kernel thread sleeps in
// pthread_barrier_wait; nothing else runs on that stream meanwhile), which is what Argobots
// documents: it is for synchronising the streams themselves, e.g. the main loops of schedulers.
// ULTs, tasklets and external threads may all wait. A barrier of one waiter returns at once.
// free() while a round has arrivals gets ABT_ERR_XSTREAM_BARRIER (undefined in Argobots); a
// free() right after a completed round is safe: pthread_barrier_destroy waits for the parties
// still leaving it.
#include <pthread.h>

#include <atomic>

#include "sync_common.hpp"

namespace weft::abt_sync {
namespace {

struct xstream_barrier_object {
  pthread_barrier_t barrier;
  std::uint32_t parties = 0;
  // Arrivals of the current round. The last arriver zeroes it before it enters the POSIX barrier,
  // so before any party of the next round can arrive.
  std::atomic<std::uint32_t> arrived{0};
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
  if (pthread_barrier_init(&b->barrier, nullptr, num_waiters) != 0) {
    delete b;
    return ABT_ERR_MEM;
  }
  *newbarrier = weft::abt_sync::handle_of<ABT_xstream_barrier>(b);
  return ABT_SUCCESS;
}

int ABT_xstream_barrier_free(ABT_xstream_barrier* barrier) {
  if (!barrier) return ABT_ERR_INV_ARG;
  xstream_barrier_object* b = barrier_ptr(*barrier);
  if (!b) return ABT_ERR_INV_XSTREAM_BARRIER;
  if (b->arrived.load(std::memory_order_acquire) != 0) return ABT_ERR_XSTREAM_BARRIER;
  pthread_barrier_destroy(&b->barrier);
  delete b;
  *barrier = ABT_XSTREAM_BARRIER_NULL;
  return ABT_SUCCESS;
}

int ABT_xstream_barrier_wait(ABT_xstream_barrier barrier) {
  xstream_barrier_object* b = barrier_ptr(barrier);
  if (!b) return ABT_ERR_INV_XSTREAM_BARRIER;
  if (b->parties == 1) return ABT_SUCCESS;
  if (b->arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == b->parties) {
    b->arrived.store(0, std::memory_order_release);
  }
  const int rc = pthread_barrier_wait(&b->barrier);
  return rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD ? ABT_SUCCESS : ABT_ERR_XSTREAM_BARRIER;
}

}  // extern "C"
