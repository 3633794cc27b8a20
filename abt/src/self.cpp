// SPDX-License-Identifier: Apache-2.0
// ABT_self_*: operations on the calling work unit, by calling context.
#include "units.hpp"
#include "weft/error.hpp"
#include "weft/ult.hpp"

#include "weft/internal/layer_support.hpp"  // suspend- and exit-and-switch

using namespace abt;

namespace {

/// ABT_SUCCESS when the caller is a ULT (the primary ULT included), else the context's error.
int need_ult() noexcept {
  if (int rc = ensure_initialized()) return rc;
  return caller_can_block() ? ABT_SUCCESS : not_a_ult_code();
}

/// The calling work unit, or the unit that stands for the calling user scheduler's loop
/// (Argobots runs schedulers as ULTs); nullptr for anything else.
weft::work_unit* self_or_scheduler() noexcept {
  if (weft::work_unit* u = weft::this_unit::current()) return u;
  return scheduler_unit();
}

/// ABT_SUCCESS when the caller is a work unit (ULT or tasklet) or a user scheduler's loop.
int need_unit() noexcept {
  if (int rc = ensure_initialized()) return rc;
  return self_or_scheduler() ? ABT_SUCCESS : ABT_ERR_INV_XSTREAM;
}

/// Checks a target of the *_to operations: a ULT other than the caller.
int check_target(ABT_thread thread) noexcept {
  weft::work_unit* u = unit_of(thread);
  if (!u || u == weft::this_unit::current() || unit_view::kind(u) != weft::unit_kind::ult)
    return ABT_ERR_INV_THREAD;
  return ABT_SUCCESS;
}

/// Resumes `thread` for a switch to it that follows at once (no other stream can take it first).
int resume_target(ABT_thread thread) {
  return resume_thread(unit_of(thread), true);
}

/// The ABT_self_*_to forms take a ULT the caller may have popped itself. weft switches directly
/// only to a queued unit (taking it out of its pool again), so a popped one is queued in the
/// calling stream's main pool, which this stream serves and which becomes its pool (weft takes a
/// unit out of its home pool only): it runs here even when the switch cannot be direct.
void queue_if_popped(weft::work_unit* u) {
  if (unit_view::state(u) == weft::unit_state::ready &&
      !u->pool_holder.load(std::memory_order_acquire)) {
    weft::pool& p = weft::this_unit::stream()->main_pool();
    weft::detail::set_home(u, p);
    p.push(u);
  }
}

/// Switches to `u`; the caller goes back to its pool. A popped `u` runs next on this stream
/// without passing through a pool (Argobots programs count on that: no other stream can take
/// it first); a `u` this stream cannot take is queued if popped and yielded to. Reported as a
/// yield of the caller, and RUN when it has its stream again.
void switch_to(weft::work_unit* u) {
  if (tool_active())
    tool_event(weft::this_unit::current(), ABT_TOOL_EVENT_THREAD_YIELD, ABT_SYNC_EVENT_TYPE_USER);
  if (!weft::detail::yield_and_switch(u)) {
    queue_if_popped(u);
    weft::this_unit::yield_to(u);
  }
  tool_running_again();
}

/// Suspends the caller; the scheduler runs what is ready (a target just resumed or queued
/// included: weft has no direct switch into a suspended-then-resumed unit).
int suspend_self() {
  if (tool_active())
    tool_event(weft::this_unit::current(), ABT_TOOL_EVENT_THREAD_SUSPEND, ABT_SYNC_EVENT_TYPE_USER);
  weft::this_unit::suspend();
  tool_running_again();  // RESUME came from the resumer
  honour_cancel();
  return ABT_SUCCESS;
}

/// Suspends the caller and runs `target` next, in one switch (the caller is suspended before
/// the target runs, as in Argobots). A target this stream cannot take (queued in a pool another
/// stream consumes, running, pinned elsewhere) gets the fallback: the caller switches to it as a
/// yield and suspends when it is back, unless a resume came first (ABT_thread_resume then
/// consumes the pending suspension). The primary ULT suspends and lets the scheduler reach it.
int suspend_to(weft::work_unit* target) {
  weft::work_unit* self = weft::this_unit::current();
  thread_ext* e = ext_of(self);
  if (tool_active()) tool_event(self, ABT_TOOL_EVENT_THREAD_SUSPEND, ABT_SYNC_EVENT_TYPE_USER);
  if (e && weft::detail::suspend_and_switch(target)) {
    tool_running_again();  // RESUME came from the resumer
    honour_cancel();
    return ABT_SUCCESS;
  }
  if (!e) {
    queue_if_popped(target);
    weft::this_unit::suspend();
    tool_running_again();
    honour_cancel();
    return ABT_SUCCESS;
  }
  e->suspend_pending.store(true, std::memory_order_release);
  queue_if_popped(target);
  weft::this_unit::yield_to(target);
  e->suspending.store(true, std::memory_order_release);  // resume() waits for the suspension
  if (e->suspend_pending.exchange(false, std::memory_order_acq_rel)) {
    weft::this_unit::suspend();
    e->suspending.store(false, std::memory_order_release);
    tool_running_again();
    honour_cancel();
    return ABT_SUCCESS;
  }
  e->suspending.store(false, std::memory_order_release);
  tool_running_again();
  honour_cancel();
  return ABT_SUCCESS;
}

/// Ends the caller and runs `target` next, in one switch (the caller has terminated when the
/// target runs). A target this stream cannot take gets the fallback: switch to it as a yield,
/// and end when back.
[[noreturn]] void exit_to(weft::work_unit* target) {
  // The caller's end (its destroy hook, entry_ended, then its local values' teardown) is weft's:
  // in the switch, or, in the fallback, when the exit unwinds the caller.
  weft::detail::exit_and_switch(target);  // does not return when it could switch
  try {
    queue_if_popped(target);
    weft::this_unit::yield_to(target);
  } catch (const weft::error&) {
    // The target could not be reached: the caller ends all the same, as Argobots' would.
  }
  weft::this_unit::exit();
}

}  // namespace

extern "C" {

int ABT_self_get_xstream(ABT_xstream* xstream) {
  if (!xstream) return ABT_ERR_INV_ARG;
  *xstream = ABT_XSTREAM_NULL;  // Argobots 1.x: also on error
  if (int rc = ensure_initialized()) return rc;
  ABT_xstream h = xstream_handle(weft::this_unit::stream());
  if (!h) return ABT_ERR_INV_XSTREAM;
  *xstream = h;
  return ABT_SUCCESS;
}

int ABT_self_get_xstream_rank(int* rank) {
  return ABT_xstream_self_rank(rank);
}

int ABT_self_get_thread(ABT_thread* thread) {
  if (thread) *thread = ABT_THREAD_NULL;  // Argobots 1.x: also on error
  if (int rc = need_unit()) return rc;
  if (!thread) return ABT_ERR_INV_ARG;
  *thread = handle_of(self_or_scheduler());
  return ABT_SUCCESS;
}

int ABT_self_get_thread_id(ABT_unit_id* id) {
  if (int rc = need_unit()) return rc;
  if (!id) return ABT_ERR_INV_ARG;
  *id = unit_view::id(self_or_scheduler());
  return ABT_SUCCESS;
}

int ABT_self_get_type(ABT_unit_type* type) {
  if (!type) return ABT_ERR_INV_ARG;
  if (int rc = ensure_initialized()) {
    *type = ABT_UNIT_TYPE_EXT;
    return rc;
  }
  switch (calling_context()) {
    case context::ult:
    case context::primary_ult:
      *type = ABT_UNIT_TYPE_THREAD;
      return ABT_SUCCESS;
    case context::tasklet:
      *type = ABT_UNIT_TYPE_TASK;
      return ABT_SUCCESS;
    case context::scheduler:
      if (scheduler_unit()) {  // a user scheduler: a ULT in Argobots
        *type = ABT_UNIT_TYPE_THREAD;
        return ABT_SUCCESS;
      }
      *type = ABT_UNIT_TYPE_EXT;
      return ABT_ERR_INV_XSTREAM;
    default:
      *type = ABT_UNIT_TYPE_EXT;
      return ABT_ERR_INV_XSTREAM;
  }
}

int ABT_self_is_primary(ABT_bool* is_primary) {
  if (!is_primary) return ABT_ERR_INV_ARG;
  *is_primary = ABT_FALSE;  // Argobots 1.x: also on error
  if (int rc = need_unit()) return rc;
  if (calling_context() == context::tasklet) return ABT_ERR_INV_THREAD;  // Argobots 1.x
  *is_primary = calling_context() == context::primary_ult ? ABT_TRUE : ABT_FALSE;
  return ABT_SUCCESS;
}

int ABT_self_on_primary_xstream(ABT_bool* on_primary) {
  if (!on_primary) return ABT_ERR_INV_ARG;
  *on_primary = ABT_FALSE;  // Argobots 1.x: also on error
  if (int rc = ensure_initialized()) return rc;
  weft::execution_stream* s = weft::this_unit::stream();
  if (!s) return ABT_ERR_INV_XSTREAM;
  *on_primary = s->is_primary() ? ABT_TRUE : ABT_FALSE;
  return ABT_SUCCESS;
}

int ABT_self_is_unnamed(ABT_bool* is_unnamed) {
  if (int rc = need_unit()) return rc;
  return ABT_thread_is_unnamed(handle_of(self_or_scheduler()), is_unnamed);
}

int ABT_self_get_last_pool(ABT_pool* pool) {
  if (pool) *pool = ABT_POOL_NULL;  // Argobots 1.x: also on error
  if (int rc = need_unit()) return rc;
  return ABT_thread_get_last_pool(handle_of(self_or_scheduler()), pool);
}

int ABT_self_get_last_pool_id(int* pool_id) {
  if (pool_id) *pool_id = -1;  // Argobots 1.x: also on error
  if (int rc = need_unit()) return rc;
  return ABT_thread_get_last_pool_id(handle_of(self_or_scheduler()), pool_id);
}

int ABT_self_set_associated_pool(ABT_pool pool) {
  if (int rc = need_unit()) return rc;
  return ABT_thread_set_associated_pool(handle_of(self_or_scheduler()), pool);
}

int ABT_self_get_unit(ABT_unit* unit) {
  if (int rc = need_unit()) return rc;
  return ABT_thread_get_unit(handle_of(self_or_scheduler()), unit);
}

int ABT_self_yield(void) {
  return yield_caller(true);
}

int ABT_self_yield_to(ABT_thread thread) {
  if (int rc = need_ult()) return rc;
  if (int rc = check_target(thread)) return rc;
  return guarded(ABT_ERR_THREAD, [&] {
    const push_context_scope ctx(ABT_POOL_CONTEXT_OP_THREAD_YIELD_TO);
    switch_to(unit_of(thread));
    honour_cancel();
    return ABT_SUCCESS;
  });
}

int ABT_self_resume_yield_to(ABT_thread thread) {
  if (int rc = need_ult()) return rc;
  if (int rc = check_target(thread)) return rc;
  return guarded(ABT_ERR_THREAD, [&] {
    if (int rc = resume_target(thread)) return rc;
    const push_context_scope ctx(ABT_POOL_CONTEXT_OP_THREAD_RESUME_YIELD_TO);
    switch_to(unit_of(thread));
    honour_cancel();
    return ABT_SUCCESS;
  });
}

int ABT_self_suspend(void) {
  if (int rc = need_ult()) return rc;
  if (calling_context() == context::primary_ult) {
    // weft lets the primary ULT suspend; Argobots too. Nothing special to do.
  }
  return guarded(ABT_ERR_THREAD, [&] { return suspend_self(); });
}

int ABT_self_suspend_to(ABT_thread thread) {
  if (int rc = need_ult()) return rc;
  if (int rc = check_target(thread)) return rc;
  return guarded(ABT_ERR_THREAD, [&] { return suspend_to(unit_of(thread)); });
}

int ABT_self_resume_suspend_to(ABT_thread thread) {
  if (int rc = need_ult()) return rc;
  if (int rc = check_target(thread)) return rc;
  return guarded(ABT_ERR_THREAD, [&] {
    if (int rc = resume_target(thread)) return rc;
    return suspend_to(unit_of(thread));
  });
}

int ABT_self_exit(void) {
  return ABT_thread_exit();
}

int ABT_self_exit_to(ABT_thread thread) {
  if (int rc = need_ult()) return rc;
  if (calling_context() == context::primary_ult) return ABT_ERR_INV_THREAD;
  if (int rc = check_target(thread)) return rc;
  exit_to(unit_of(thread));  // the caller ends (weft unwinds it): no return
}

int ABT_self_resume_exit_to(ABT_thread thread) {
  if (int rc = need_ult()) return rc;
  if (calling_context() == context::primary_ult) return ABT_ERR_INV_THREAD;
  if (int rc = check_target(thread)) return rc;
  if (int rc = guarded(ABT_ERR_THREAD, [&] { return resume_target(thread); })) return rc;
  exit_to(unit_of(thread));
}

int ABT_self_schedule(ABT_thread thread, ABT_pool pool) {
  // Runs `thread` now, on the caller's stream; the caller continues when it yields, blocks or
  // ends (then it goes back to `pool` when given). From a user scheduler's run callback it is
  // ABT_xstream_run_unit; from a ULT the target must be queued, and the caller yields to it.
  if (int rc = ensure_initialized()) return rc;
  weft::work_unit* u = unit_of(thread);
  if (!u) return ABT_ERR_INV_THREAD;
  if (pool) {
    weft::detail::set_home(u, *pool->pool);
    if (thread_ext* e = ext_of(u)) e->last_pool.store(pool, std::memory_order_relaxed);
  }
  if (in_scheduler_loop()) return run_from_scheduler(u);
  if (int rc = need_ult()) return rc;
  if (u == weft::this_unit::current()) return ABT_ERR_INV_THREAD;
  return guarded(ABT_ERR_THREAD, [&] {
    if (tool_active())
      tool_event(weft::this_unit::current(), ABT_TOOL_EVENT_THREAD_YIELD, ABT_SYNC_EVENT_TYPE_USER);
    if (unit_view::kind(u) == weft::unit_kind::ult) {
      // A popped ULT runs next here without passing through a pool (it keeps `pool` as its own).
      if (!weft::detail::yield_and_switch(u)) {
        queue_if_popped(u);
        weft::this_unit::yield_to(u);
      }
    } else {
      queue_if_popped(u);
      weft::this_unit::yield();  // a tasklet runs from a scheduler, not from a ULT's stack
    }
    tool_running_again();
    honour_cancel();
    return ABT_SUCCESS;
  });
}

int ABT_self_set_arg(void* arg) {
  if (int rc = need_unit()) return rc;
  return ABT_thread_set_arg(handle_of(self_or_scheduler()), arg);
}

int ABT_self_get_arg(void** arg) {
  if (arg) *arg = nullptr;  // Argobots 1.x: also on error
  if (int rc = need_unit()) return rc;
  return ABT_thread_get_arg(handle_of(self_or_scheduler()), arg);
}

int ABT_self_get_thread_func(void (**thread_func)(void*)) {
  if (int rc = need_unit()) return rc;
  return ABT_thread_get_thread_func(handle_of(self_or_scheduler()), thread_func);
}

}  // extern "C"
