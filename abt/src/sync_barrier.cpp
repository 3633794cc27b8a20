// SPDX-License-Identifier: Apache-2.0
// ABT_barrier_*: Argobots' barrier for work units, a weft::barrier behind the handle.
//
// ABT_barrier_reinit changes the party count between rounds (weft::barrier::reset). Tasklets get
// ABT_ERR_BARRIER (Argobots 1.x); reinit() or free() while units wait get ABT_ERR_BARRIER
// (undefined in Argobots). A waiter that blocks reports THREAD_SUSPEND to the tool just before it
// blocks and THREAD_RESUME, THREAD_RUN once it runs again; the last arriver never blocks and
// reports nothing, as in Argobots.
#include "sync_common.hpp"
#include "weft/barrier.hpp"

namespace weft::abt_sync {
namespace {

weft::barrier* barrier_ptr(ABT_barrier h) noexcept {
  return object_of<weft::barrier>(h);
}

// Reports a blocked barrier waiter to the tool: SUSPEND from inside the barrier, once it knows
// the caller will block; RESUME and RUN when the caller is back.
class tool_report {
 public:
  explicit tool_report(weft::barrier* b) noexcept : object_(b) {
    if (!abt::tool_active()) return;
    weft::work_unit* u = weft::this_unit::current();
    if (u && abt::unit_view::kind(u) == weft::unit_kind::ult) unit_ = u;
  }
  tool_report(const tool_report&) = delete;
  tool_report& operator=(const tool_report&) = delete;
  ~tool_report() {
    if (!blocked_ || !abt::tool_active()) return;
    abt::tool_event(unit_, ABT_TOOL_EVENT_THREAD_RESUME, ABT_SYNC_EVENT_TYPE_BARRIER, object_);
    abt::tool_event(unit_, ABT_TOOL_EVENT_THREAD_RUN);
  }
  void operator()() noexcept {
    if (!unit_) return;
    blocked_ = true;
    abt::tool_event(unit_, ABT_TOOL_EVENT_THREAD_SUSPEND, ABT_SYNC_EVENT_TYPE_BARRIER, object_);
  }

 private:
  void* object_;
  weft::work_unit* unit_ = nullptr;
  bool blocked_ = false;
};

}  // namespace
}  // namespace weft::abt_sync

using weft::abt_sync::barrier_ptr;

extern "C" {

int ABT_barrier_create(uint32_t num_waiters, ABT_barrier* newbarrier) {
  if (!newbarrier) return ABT_ERR_INV_ARG;
  *newbarrier = ABT_BARRIER_NULL;
  if (num_waiters == 0) return ABT_ERR_INV_ARG;
  auto* b = new (std::nothrow) weft::barrier(num_waiters);
  if (!b) return ABT_ERR_MEM;
  *newbarrier = weft::abt_sync::handle_of<ABT_barrier>(b);
  return ABT_SUCCESS;
}

int ABT_barrier_reinit(ABT_barrier barrier, uint32_t num_waiters) {
  weft::barrier* b = barrier_ptr(barrier);
  if (!b) return ABT_ERR_INV_BARRIER;
  if (num_waiters == 0) return ABT_ERR_INV_ARG;
  return b->reset(num_waiters) ? ABT_SUCCESS : ABT_ERR_BARRIER;
}

int ABT_barrier_free(ABT_barrier* barrier) {
  if (!barrier) return ABT_ERR_INV_ARG;
  weft::barrier* b = barrier_ptr(*barrier);
  if (!b) return ABT_ERR_INV_BARRIER;
  if (b->waiting() != 0) return ABT_ERR_BARRIER;
  delete b;  // waits out a last arriver that is still waking the others
  *barrier = ABT_BARRIER_NULL;
  return ABT_SUCCESS;
}

int ABT_barrier_wait(ABT_barrier barrier) {
  weft::barrier* b = barrier_ptr(barrier);
  if (!b) return ABT_ERR_INV_BARRIER;
  if (weft::abt_sync::caller_is_tasklet()) return ABT_ERR_BARRIER;
  try {
    weft::abt_sync::tool_report report(b);
    b->arrive_and_wait_reporting(report);
  } catch (...) {
    return weft::abt_sync::current_exception_code(ABT_ERR_BARRIER);
  }
  return ABT_SUCCESS;
}

int ABT_barrier_get_num_waiters(ABT_barrier barrier, uint32_t* num_waiters) {
  if (!num_waiters) return ABT_ERR_INV_ARG;
  weft::barrier* b = barrier_ptr(barrier);
  if (!b) return ABT_ERR_INV_BARRIER;
  *num_waiters = static_cast<uint32_t>(b->parties());
  return ABT_SUCCESS;
}

}  // extern "C"
