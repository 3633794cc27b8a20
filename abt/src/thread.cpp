// SPDX-License-Identifier: Apache-2.0
// ABT_thread_* and ABT_thread_attr_*: work units created through the ABT layer are weft
// descriptors with a C entry; the layer's per-unit state (thread_ext) lives in the descriptor's
// callable storage, so a create costs what weft's own create costs.
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <new>

#include "asymmetric_fence.hpp"
#include "units.hpp"
#include "weft/error.hpp"
#include "weft/runtime.hpp"
#include "weft/tasklet.hpp"
#include "weft/ult.hpp"

namespace abt {

namespace {

/// A handle that borrows a unit without owning it (so its destructor does not join).
struct borrowed_ult : weft::ult {
  explicit borrowed_ult(weft::work_unit* u) noexcept : weft::ult(u) {}
  ~borrowed_ult() { forget(); }
};
struct borrowed_tasklet : weft::tasklet {
  explicit borrowed_tasklet(weft::work_unit* u) noexcept : weft::tasklet(u) {}
  ~borrowed_tasklet() { forget(); }
};

}  // namespace

namespace {

/// The tool events of an entry's end: FINISH (unless its cancellation was reported) and, for an
/// unnamed unit, which frees itself, FREE, in Argobots' order.
[[gnu::cold, gnu::noinline]] void report_entry_end(weft::work_unit* u, const thread_ext* e) {
  const std::uint32_t f = e->flags.load(std::memory_order_acquire);
  if (!(f & flag_cancelled)) tool_event(u, ABT_TOOL_EVENT_THREAD_FINISH);
  if (f & flag_unnamed) tool_event(u, ABT_TOOL_EVENT_THREAD_FREE);
}

/// entry_ended()'s rare cases, out of line: the end marked with a full fence (no membarrier) or
/// reported to a tool (`marked` false), and a key call of another thread that got in before the
/// end was marked, which the unit lets finish before weft tears its values down.
[[gnu::cold, gnu::noinline]] void entry_ended_slow(weft::work_unit* u, bool marked) noexcept {
  thread_ext* const e = ext_in(u);
  if (!marked) {
    frequent_store_fenced(e->ending, 1);
    if (tool_active()) report_entry_end(u, e);
  }
  while (e->key_setter.load(std::memory_order_seq_cst)) sched_yield();
  // An unnamed unit frees itself at its end, and its user pool's unit with it.
  if ((g_slow_paths.load(std::memory_order_relaxed) & slow_user_pool) &&
      (e->flags.load(std::memory_order_relaxed) & flag_unnamed))
    user_pool_release(u);
}

std::size_t page_bytes() noexcept {
  static const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

/// The page of a user stack that serves as its guard: the lowest whole page in it.
char* user_guard_page(void* stack) noexcept {
  const std::size_t page = page_bytes();
  return reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(stack) + page - 1) / page *
                                 page);
}

/// The destroy hook of a ULT on a guarded user stack: entry_ended(), then the memory goes back
/// to the user unprotected (weft calls it once the entry ended, on the ULT's own stack, far
/// above the guard).
void unguard_user_stack(weft::work_unit* u) {
  entry_ended(u);
  thread_ext* e = ext_of(u);
  if (!e || !(e->flags.load(std::memory_order_relaxed) & flag_user_guard)) return;
  mprotect(user_guard_page(e->user_stack), page_bytes(), PROT_READ | PROT_WRITE);
  e->flags.fetch_and(~std::uint32_t{flag_user_guard}, std::memory_order_relaxed);
}

/// Runs the ULT on the user's stack. With Argobots' mprotect overflow check
/// (ABT_STACK_OVERFLOW_CHECK=mprotect), the lowest whole page of that memory becomes a PROT_NONE
/// guard (weft's fault handler reports an overflow into it), unless the stack is too small to
/// spare it; the ULT uses what lies above. Without it, as in Argobots by default, the ULT has the
/// whole memory. Returns true when the guard is in place.
bool use_user_stack(weft::work_unit* u, void* stack, std::size_t size) noexcept {
  const std::size_t page = page_bytes();
  char* const top = static_cast<char*>(stack) + size;
  char* const guard = user_guard_page(stack);
  if (state().guard_user_stacks.load(std::memory_order_relaxed) && guard + 3 * page <= top &&
      mprotect(guard, page, PROT_NONE) == 0) {
    weft::detail::set_user_stack(u, guard + page, static_cast<std::size_t>(top - (guard + page)));
    return true;
  }
  weft::detail::set_user_stack(u, stack, size);
  return false;
}

}  // namespace

void invoke_entry(weft::work_unit* u) {
  thread_ext* const e = ext_in(u);  // ours: invoke is this
  // A unit cancelled before it started terminates without running (Argobots' cancellation; a
  // cancel that comes later is honoured at the unit's next ABT yield).
  e->started.store(true, std::memory_order_relaxed);
  if (slow_paths_on()) [[unlikely]] {
    if (e->flags.load(std::memory_order_acquire) & flag_cancel) {
      e->flags.fetch_or(flag_cancelled, std::memory_order_relaxed);
      if (tool_active()) tool_event(u, ABT_TOOL_EVENT_THREAD_CANCEL);
      return;
    }
    if (tool_active()) tool_event(u, ABT_TOOL_EVENT_THREAD_RUN);
  }
  // A tail call: no frame of the layer lies under the user's function, which returns straight to
  // weft (a ULT that blocked returns through one level less after its switches). The end (a
  // return, ABT_thread_exit, a cancellation, ABT_self_exit_to) is marked by the destroy hook,
  // entry_ended, which weft calls once however the entry ended.
  const weft::detail::unit_callable& c = callable_of(u);
  c.entry_fn(c.entry_arg);
}

void entry_ended(weft::work_unit* u) noexcept {
  // A Dekker pair with another thread's key call on the unit (other_unit_keys in key.cpp), which
  // stores key_setter and then loads `ending`: whichever comes second sees the other. This side
  // runs once per unit, that side rarely, so this side's fence is the light one (the membarrier
  // of asymmetric_fence.hpp). One look at g_slow_paths covers that fence and the tool; the
  // common case is two stores and two loads, with no frame.
  thread_ext* const e = ext_in(u);
  if (!(g_slow_paths.load(std::memory_order_relaxed) &
        (slow_tool | slow_full_fence | slow_user_pool))) [[likely]] {
    e->ending.store(1, std::memory_order_relaxed);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    if (e->key_setter.load(std::memory_order_seq_cst)) [[unlikely]]
      entry_ended_slow(u, true);
    return;
  }
  entry_ended_slow(u, false);
}

namespace {

/// create_unit() for a unit on a user's stack, in a user pool, or while a tool is told about
/// creations: the descriptor is allocated, set up and then submitted, in three steps.
/// `report_create` false: the unit replaces a revived one, whose events go on (REVIVE, not
/// CREATE).
/// create_unit()'s general form. With `submit` false the unit is made but not submitted: the
/// caller hands it to weft::detail::submit_and_yield_to. `*reuse`, when given, is a user pool's
/// unit detached from a unit being revived: it stands for the new unit when `ph` made it, and is
/// then set to null.
int create_unit_slow(weft::unit_kind kind, weft::pool& p, ABT_pool ph, void (*fn)(void*), void* arg,
                     const ABT_thread_attr_opaque* attr, ABT_thread* out, bool report_create = true,
                     bool submit = true, ABT_unit* reuse = nullptr) {
  const std::size_t stack =
      kind == weft::unit_kind::ult && attr && attr->stack_size ? attr->stack_size : 0;
  weft::work_unit* u = weft::detail::allocate_unit(kind, stack);
  if (ph && ph->user_defined && reuse && *reuse && user_pool_attach(ph, u, *reuse)) {
    *reuse = nullptr;  // revived in the pool it was associated with: its unit stays
  } else if (ph && ph->user_defined) {
    // The user pool makes the unit's ABT_unit now, so that a refusal fails the create.
    if (int rc = user_pool_reserve_unit(ph, u)) {
      weft::detail::discard_unit(u);
      return rc;
    }
  }
  std::uint32_t flags = out ? 0u : std::uint32_t{flag_unnamed};
  void* user_stack = nullptr;
  if (kind == weft::unit_kind::ult && attr && attr->stack) {
    user_stack = attr->stack;
    if (use_user_stack(u, attr->stack, attr->stack_size)) flags |= flag_user_guard;
  }
  if (attr && !attr->migratable) flags |= flag_not_migratable;
  weft::detail::unit_callable& c = callable_of(u);
  construct_ext(c.storage, flags, attr, ph, user_stack,
                kind == weft::unit_kind::ult ? stack_short_of(u, attr) : 0);
  c.invoke = &invoke_entry;
  c.destroy = (flags & flag_user_guard) ? &unguard_user_stack : &entry_ended;
  c.entry_fn = fn;
  c.entry_arg = arg;
  if (report_create && tool_active()) {
    weft::detail::set_home(u, p);  // what a tool's POOL query reports
    tool_event(u, ABT_TOOL_EVENT_THREAD_CREATE);
  }
  if (submit) {
    // A create that reports no CREATE is a revive.
    const push_context_scope ctx(report_create ? ABT_POOL_CONTEXT_OP_THREAD_CREATE
                                               : ABT_POOL_CONTEXT_OP_THREAD_REVIVE);
    weft::detail::submit_unit(u, p);
  }
  if (out)
    *out = handle_of(u);
  else
    weft::detail::detach_unit(u);
  return ABT_SUCCESS;
}

}  // namespace

int create_unit(weft::unit_kind kind, weft::pool& p, ABT_pool ph, void (*fn)(void*), void* arg,
                const ABT_thread_attr_opaque* attr, ABT_thread* out) {
  if ((kind == weft::unit_kind::ult && attr && attr->stack) || tool_active() ||
      (ph && ph->user_defined))
    return create_unit_slow(kind, p, ph, fn, arg, attr, out);
  weft::work_unit* const u = weft::detail::allocate_unit(
      kind, kind == weft::unit_kind::ult && attr ? attr->stack_size : 0);
  prepare_unit(u, ph, fn, arg, attr, out != nullptr);
  if (out) {
    *out = handle_of(u);
    weft::detail::submit_unit(u, p);
  } else {
    weft::detail::submit_detached_unit(u, p);
  }
  return ABT_SUCCESS;
}

int not_a_ult_code() noexcept {
  const context c = calling_context();
  return c == context::tasklet ? ABT_ERR_INV_THREAD : ABT_ERR_INV_XSTREAM;
}

/// ABT_ERR_MEM for a terminated ULT that never ran because no stack could be allocated for it
/// (weft recorded a resource error), ABT_SUCCESS otherwise: a C caller learns that its ULT was
/// not run rather than losing it silently.
static int never_ran_code(const weft::work_unit* u) noexcept {
  const std::exception_ptr e = weft::detail::unit_error(u);
  if (!e) return ABT_SUCCESS;
  try {
    std::rethrow_exception(e);
  } catch (const weft::error& x) {
    if (x.condition() == weft::errc::resource) return ABT_ERR_MEM;
  } catch (const std::bad_alloc&) {
    return ABT_ERR_MEM;  // its first run could not allocate what it needed
  } catch (...) {
  }
  return ABT_SUCCESS;
}

namespace {

/// Waits for `u`, not yet terminated, to terminate; `self` is the caller's unit (nullptr on an
/// external thread), which is neither `u` nor joined by it.
int wait_for_end(weft::work_unit* u, weft::work_unit* self, const thread_ext* e) {
  return guarded(ABT_ERR_THREAD, [&] {
    const unit_view::join_state j = unit_view::join_of(u);
    if (j == unit_view::join_state::done) return ABT_SUCCESS;
    const bool can_block = self && unit_view::kind(self) == weft::unit_kind::ult;
    if (j == unit_view::join_state::open && (can_block || !self)) {
      // The caller is not `u`, nobody else joins it and the caller may block: what
      // weft::detail::check_join would verify. A ULT blocks until the unit ends (SUSPEND, then
      // RESUME and RUN), as in Argobots.
      const tool_block_scope block(ABT_SYNC_EVENT_TYPE_THREAD_JOIN, handle_of(u));
      // Argobots programs count on the stream whose pool a unit went to running it, and on the
      // order of that pool: the join runs the unit itself only where that stream would run it
      // next anyway (join_help_for), and otherwise waits.
      weft::detail::wait_unit_helping(u, join_help_for(u, e));
    } else {
      // Another joiner already waits (weft takes one), or the caller is a tasklet, which
      // cannot block: wait for the end by yielding or spinning, as Argobots does.
      while (unit_view::join_of(u) != unit_view::join_state::done) {
        if (can_block)
          weft::this_unit::yield();
        else
          sched_yield();
      }
    }
    return ABT_SUCCESS;
  });
}

}  // namespace

int join_unit(weft::work_unit* u, bool then_free, int invalid_code) {
  if (!u) return invalid_code;
  const thread_ext* const e = ext_of(u);
  if (e && (e->flags.load(std::memory_order_relaxed) & flag_unnamed)) return invalid_code;
  if (unit_view::join_of(u) != unit_view::join_state::done) {
    // A finished unit is neither the caller nor the primary ULT: only an unfinished one needs
    // the caller's identity (one look-up).
    weft::work_unit* const self = weft::this_unit::current();
    if (u == self || u == primary_unit()) return invalid_code;
    if (int rc = wait_for_end(u, self, e)) return rc;
  }
  // A user pool's unit goes with its work unit (Argobots frees it in ABT_thread_free).
  if (then_free && (g_slow_paths.load(std::memory_order_relaxed) & slow_user_pool))
    user_pool_release(u);
  if (!slow_paths_on()) [[likely]] {
    // The common case: no tool to tell, and freed at once when nothing escaped the unit.
    if (then_free && weft::detail::reap_if_done(u)) return ABT_SUCCESS;
  } else if (tool_active()) {
    tool_event(u, ABT_TOOL_EVENT_THREAD_JOIN);  // Argobots reports it once the unit terminated
  }
  const int rc = never_ran_code(u);
  if (then_free) {
    if (tool_active()) tool_event(u, ABT_TOOL_EVENT_THREAD_FREE);
    weft::detail::discard_unit(u);
  }
  return rc;
}

int free_terminated(weft::work_unit* u) noexcept {
  const int rc = never_ran_code(u);
  if (g_slow_paths.load(std::memory_order_relaxed) & slow_user_pool) user_pool_release(u);
  weft::detail::discard_unit(u);
  return rc;
}

template <int Invalid>
int free_fallback(void* slot, weft::detail::join_result why) noexcept {
  auto* const handle = static_cast<ABT_thread*>(slot);
  switch (why) {
    case weft::detail::join_result::threw:
      return current_exception_code(ABT_ERR_THREAD);
    case weft::detail::join_result::kept: {
      const int rc = free_terminated(unit_of(*handle));
      if (rc == ABT_SUCCESS) *handle = ABT_THREAD_NULL;
      return rc;
    }
    case weft::detail::join_result::refused:
      break;
  }
  return free_full(handle, Invalid);
}

template int free_fallback<ABT_ERR_INV_THREAD>(void*, weft::detail::join_result) noexcept;
template int free_fallback<ABT_ERR_INV_TASK>(void*, weft::detail::join_result) noexcept;

int free_full(ABT_thread* slot, int invalid) noexcept {
  if (int rc = ensure_initialized()) return rc;
  if (!slot) return ABT_ERR_INV_ARG;
  if (int rc = join_unit(unit_of(*slot), true, invalid)) return rc;
  *slot = ABT_THREAD_NULL;
  return ABT_SUCCESS;
}

void honour_cancel_slow(weft::work_unit* self) {
  thread_ext* e = ext_of(self);
  if (e && (e->flags.load(std::memory_order_acquire) & flag_cancel) &&
      unit_view::kind(self) == weft::unit_kind::ult) {
    e->flags.fetch_or(flag_cancelled, std::memory_order_relaxed);
    if (tool_active()) tool_event(self, ABT_TOOL_EVENT_THREAD_CANCEL);
    weft::this_unit::exit();
  }
}

ABT_pool last_pool_of(weft::work_unit* u) {
  weft::pool* home = unit_view::home(u);
  thread_ext* e = ext_of(u);
  const ABT_pool last = e ? e->last_pool.load(std::memory_order_relaxed) : nullptr;
  if (last && last->pool.get() == home) return last;
  ABT_pool h = find_pool(home);
  if (e && h) e->last_pool.store(h, std::memory_order_relaxed);
  return h;
}

std::size_t attr_stack_size(const ABT_thread_attr_opaque* attr) noexcept {
  if (attr->unsized) return 0;
  return attr->stack_size ? attr->stack_size : state().default_stack_size;
}

std::size_t stack_size_of(weft::work_unit* u) noexcept {
  // Argobots' primary ULT runs on the process's stack, which it does not size: 0, as a tasklet.
  if (unit_view::kind(u) == weft::unit_kind::tasklet || u == primary_unit()) return 0;
  const std::size_t requested = unit_view::requested_stack_size(u);
  if (!requested) return state().default_stack_size;
  const thread_ext* e = ext_of(u);
  return e ? requested - e->stack_short : requested;
}

ABT_thread_state state_of(const weft::work_unit* u) noexcept {
  switch (unit_view::state(u)) {
    case weft::unit_state::ready:
      return ABT_THREAD_STATE_READY;
    case weft::unit_state::running:
      return ABT_THREAD_STATE_RUNNING;
    case weft::unit_state::blocked:
      return ABT_THREAD_STATE_BLOCKED;
    default:
      return ABT_THREAD_STATE_TERMINATED;
  }
}

int migrate_unit(weft::work_unit* u, weft::pool& target, ABT_pool target_handle) {
  const push_context_scope ctx(ABT_POOL_CONTEXT_OP_THREAD_MIGRATE);
  if (!u) return ABT_ERR_INV_THREAD;
  if (u == primary_unit()) return ABT_ERR_INV_THREAD;  // pinned to the primary stream
  thread_ext* e = ext_of(u);
  if (e && (e->flags.load(std::memory_order_acquire) & flag_not_migratable))
    return ABT_ERR_INV_THREAD;  // as Argobots: a non-migratable unit is an invalid target
  if (unit_view::state(u) == weft::unit_state::terminated) return ABT_ERR_INV_THREAD;
  if (unit_view::home(u) == &target) return ABT_ERR_MIGRATION_TARGET;
  return guarded(ABT_ERR_MIGRATION_NA, [&] {
    if (u == weft::this_unit::current()) {
      if (unit_view::kind(u) == weft::unit_kind::tasklet)
        return ABT_ERR_MIGRATION_NA;  // already running
      if (e) e->last_pool.store(target_handle, std::memory_order_relaxed);
      if (e && e->migration_cb) e->migration_cb(handle_of(u), e->migration_arg);
      // Argobots moves a ULT that migrates itself when it yields: a tool sees it yield on this
      // stream and run again on the target's.
      if (tool_active()) tool_event(u, ABT_TOOL_EVENT_THREAD_YIELD, ABT_SYNC_EVENT_TYPE_USER);
      weft::this_unit::migrate_to(target);
      if (tool_active()) tool_event(u, ABT_TOOL_EVENT_THREAD_RUN);
      return ABT_SUCCESS;
    }
    if (unit_view::kind(u) == weft::unit_kind::tasklet) {
      if (e && e->started.load(std::memory_order_acquire))
        return ABT_ERR_MIGRATION_NA;  // a tasklet moves only before it starts
      borrowed_tasklet(u).migrate_to(target);
    } else {
      borrowed_ult(u).migrate_to(target);
    }
    if (e) e->last_pool.store(target_handle, std::memory_order_relaxed);
    if (e && e->migration_cb) e->migration_cb(handle_of(u), e->migration_arg);
    return ABT_SUCCESS;
  });
}

int yield_full(bool report) noexcept {
  if (int rc = ensure_initialized()) return rc;
  weft::work_unit* const self = weft::this_unit::current();
  if (!self || unit_view::kind(self) != weft::unit_kind::ult) [[unlikely]]
    return yield_outside_ult(self, report);
  return guarded(ABT_ERR_THREAD, [self] {
    if (tool_active()) tool_event(self, ABT_TOOL_EVENT_THREAD_YIELD, ABT_SYNC_EVENT_TYPE_USER);
    const push_context_scope ctx(ABT_POOL_CONTEXT_OP_THREAD_YIELD);
    weft::this_unit::yield();
    if (tool_active()) tool_event(self, ABT_TOOL_EVENT_THREAD_RUN);
    honour_cancel(self);
    return ABT_SUCCESS;
  });
}

int resume_thread(weft::work_unit* u, bool hold) {
  if (int rc = ensure_initialized()) return rc;
  if (!u || unit_view::kind(u) != weft::unit_kind::ult) return ABT_ERR_INV_THREAD;
  if (thread_ext* e = ext_of(u)) {
    // A unit that suspended "to" another one is resumed before it actually suspends: the
    // resume cancels the pending suspension (see ABT_self_suspend_to).
    if (e->suspend_pending.exchange(false, std::memory_order_acq_rel)) return ABT_SUCCESS;
    while (!unit_view::user_suspended(u) && e->suspending.load(std::memory_order_acquire))
      sched_yield();  // it is a few instructions away from suspending
  }
  if (!unit_view::user_suspended(u)) return ABT_ERR_THREAD;
  return guarded(ABT_ERR_THREAD, [&] {
    // Reported by the resumer: the target's RUN follows its RESUME.
    if (tool_active()) tool_event(u, ABT_TOOL_EVENT_THREAD_RESUME);
    if (hold) {
      weft::detail::resume_held(u);
    } else {
      const push_context_scope ctx(ABT_POOL_CONTEXT_OP_THREAD_RESUME);
      weft::resume(u);
    }
    return ABT_SUCCESS;
  });
}

int yield_refused(void* report, bool threw) noexcept {
  if (threw) return current_exception_code(ABT_ERR_THREAD);
  return yield_full(reinterpret_cast<std::uintptr_t>(report) != 0);
}

}  // namespace abt

using namespace abt;

namespace {

/// ABT_thread_yield_to's full path: initialisation, the caller, the target, a tool and a
/// cancellation looked after.
int yield_to_full(ABT_thread thread) noexcept {
  if (int rc = ensure_initialized()) return rc;
  weft::work_unit* const self = weft::this_unit::current();
  if (!self || unit_view::kind(self) != weft::unit_kind::ult) [[unlikely]]
    return self ? ABT_ERR_INV_THREAD : ABT_ERR_INV_XSTREAM;
  weft::work_unit* u = unit_of(thread);
  if (!u || u == self || unit_view::kind(u) != weft::unit_kind::ult) return ABT_ERR_INV_THREAD;
  return guarded(ABT_ERR_THREAD, [self, u] {
    if (tool_active()) tool_event(self, ABT_TOOL_EVENT_THREAD_YIELD, ABT_SYNC_EVENT_TYPE_USER);
    const push_context_scope ctx(ABT_POOL_CONTEXT_OP_THREAD_YIELD_TO);
    weft::this_unit::yield_to(u);
    if (tool_active()) tool_event(self, ABT_TOOL_EVENT_THREAD_RUN);
    honour_cancel(self);
    return ABT_SUCCESS;
  });
}

/// What the fast ABT_thread_yield_to does when weft refused it or it threw; `thread` is its
/// argument.
int yield_to_refused(void* thread, bool threw) noexcept {
  if (threw) return current_exception_code(ABT_ERR_THREAD);
  return yield_to_full(static_cast<ABT_thread>(thread));
}

}  // namespace

namespace {

/// ABT_thread_create's full path (and what the other creates share). Out of line, so that the
/// fast form's frame is shaped by its own calls only.
[[gnu::noinline]] int create_thread(ABT_pool pool, void (*fn)(void*), void* arg,
                                    ABT_thread_attr attr, ABT_thread* out) {
  if (tool_reporting_only() && pool && fn && (!attr || !attr->stack) && !pool->user_defined)
    return create_fast<true>(weft::unit_kind::ult, pool, fn, arg, attr, out);
  if (out) *out = ABT_THREAD_NULL;  // Argobots 1.x: set on error too
  if (int rc = ensure_initialized()) return rc;
  if (!pool) return ABT_ERR_INV_POOL;
  if (!fn) return ABT_ERR_INV_ARG;
  return guarded(ABT_ERR_MEM, [&] {
    return create_unit(weft::unit_kind::ult, *pool->pool, pool, fn, arg, attr, out);
  });
}

weft::pool* main_pool_of(ABT_xstream xs) {
  return xs->stream ? &xs->stream->main_pool() : nullptr;
}

}  // namespace

extern "C" {

int ABT_thread_create(ABT_pool pool, void (*thread_func)(void*), void* arg, ABT_thread_attr attr,
                      ABT_thread* newthread) {
  if (fast_paths_open() && pool && thread_func && (!attr || !attr->stack) && !pool->user_defined)
      [[likely]]
    return create_fast(weft::unit_kind::ult, pool, thread_func, arg, attr, newthread);
  return create_thread(pool, thread_func, arg, attr, newthread);
}

int ABT_thread_create_to(ABT_pool pool, void (*thread_func)(void*), void* arg, ABT_thread_attr attr,
                         ABT_thread* newthread) {
  if (newthread) *newthread = ABT_THREAD_NULL;  // Argobots 1.x: set on error too
  if (int rc = ensure_initialized()) return rc;
  if (!caller_can_block()) return not_a_ult_code();
  if (!pool) return ABT_ERR_INV_POOL;
  if (!thread_func) return ABT_ERR_INV_ARG;
  ABT_thread t = ABT_THREAD_NULL;
  // The unit is made with a handle so that it stays alive for the switch; an unnamed one is
  // marked so before it first runs (it sees itself unnamed, and its end reports FREE), and
  // detached once the caller is back. It runs next here without being queued (Argobots': only
  // the caller goes to a pool).
  if (int rc = guarded(ABT_ERR_MEM, [&] {
        return create_unit_slow(weft::unit_kind::ult, *pool->pool, pool, thread_func, arg, attr, &t,
                                true, false);
      }))
    return rc;
  weft::work_unit* u = unit_of(t);
  if (!newthread) ext_of(u)->flags.fetch_or(flag_unnamed, std::memory_order_acq_rel);
  int rc = guarded(ABT_ERR_THREAD, [&] {
    if (tool_active())
      tool_event(weft::this_unit::current(), ABT_TOOL_EVENT_THREAD_YIELD, ABT_SYNC_EVENT_TYPE_USER);
    const push_context_scope ctx(ABT_POOL_CONTEXT_OP_THREAD_CREATE_TO);
    weft::detail::submit_and_yield_to(u, *pool->pool);
    tool_running_again();
    return ABT_SUCCESS;
  });
  if (newthread)
    *newthread = t;
  else
    weft::detail::detach_unit(u);
  return rc;
}

int ABT_thread_create_on_xstream(ABT_xstream xstream, void (*thread_func)(void*), void* arg,
                                 ABT_thread_attr attr, ABT_thread* newthread) {
  if (newthread) *newthread = ABT_THREAD_NULL;
  if (int rc = ensure_initialized()) return rc;
  if (!xstream || !xstream->stream) return ABT_ERR_INV_XSTREAM;
  if (!thread_func) return ABT_ERR_INV_ARG;
  return guarded(ABT_ERR_INV_XSTREAM, [&] {
    weft::pool* p = main_pool_of(xstream);
    return create_unit(weft::unit_kind::ult, *p, find_pool(p), thread_func, arg, attr, newthread);
  });
}

int ABT_thread_create_many(int num_threads, ABT_pool* pool_list, void (**thread_func_list)(void*),
                           void** arg_list, ABT_thread_attr attr, ABT_thread* newthread_list) {
  if (int rc = ensure_initialized()) return rc;
  if (num_threads < 0 || (num_threads > 0 && (!pool_list || !thread_func_list)))
    return ABT_ERR_INV_ARG;
  for (int i = 0; i < num_threads; ++i) {
    int rc = create_thread(pool_list[i], thread_func_list[i], arg_list ? arg_list[i] : nullptr,
                           attr, newthread_list ? &newthread_list[i] : nullptr);
    if (rc) return rc;
  }
  return ABT_SUCCESS;
}

}  // extern "C"

namespace {

/// ABT_thread_revive; with `submit` false the revived unit is not submitted (revive-to hands it
/// to weft::detail::submit_and_yield_to).
int revive_thread(ABT_pool pool, void (*thread_func)(void*), void* arg, ABT_thread* thread,
                  bool submit) {
  if (int rc = ensure_initialized()) return rc;
  if (!thread || !*thread) return ABT_ERR_INV_THREAD;
  if (!pool) return ABT_ERR_INV_POOL;
  if (!thread_func) return ABT_ERR_INV_ARG;
  weft::work_unit* u = unit_of(*thread);
  if (unit_view::state(u) != weft::unit_state::terminated) return ABT_ERR_INV_THREAD;
  thread_ext* e = ext_of(u);
  if (!e) return ABT_ERR_INV_THREAD;
  // A revived unit is a fresh descriptor of the same kind, stack size and attributes: weft
  // recycles descriptors through its caches, so this costs what the first create did.
  ABT_thread_attr_opaque attr;
  attr.stack_size = unit_view::requested_stack_size(u) ? stack_size_of(u) : 0;
  attr.migratable = !(e->flags.load(std::memory_order_relaxed) & flag_not_migratable);
  attr.migration_cb = e->migration_cb;
  attr.migration_arg = e->migration_arg;
  const weft::unit_kind kind = unit_view::kind(u);
  // Argobots revives the unit in place: a tool sees REVIVE only, no JOIN, FREE or CREATE for
  // the descriptor weft swaps. The old one is freed first, so that weft's descriptor cache
  // hands the same one back and the handle stays as Argobots keeps it.
  if (unit_view::join_of(u) != unit_view::join_state::done) {
    // Terminated, but weft may not have finished ending it yet.
    if (int rc = wait_for_end(u, weft::this_unit::current(), e)) return rc;
  }
  // Argobots keeps a user pool's unit across a revive into the same pool.
  ABT_unit kept = (g_slow_paths.load(std::memory_order_relaxed) & slow_user_pool)
                      ? user_pool_detach(u)
                      : nullptr;
  (void)free_terminated(u);
  *thread = ABT_THREAD_NULL;  // the unit is gone even if its successor cannot be made
  const int rc = guarded(ABT_ERR_MEM, [&] {
    if (int rc = create_unit_slow(kind, *pool->pool, pool, thread_func, arg, &attr, thread, false,
                                  submit, &kept))
      return rc;
    if (tool_active()) tool_event(unit_of(*thread), ABT_TOOL_EVENT_THREAD_REVIVE);
    return ABT_SUCCESS;
  });
  if (kept) user_pool_drop(kept);  // revived elsewhere, or not at all
  return rc;
}

}  // namespace

extern "C" {

int ABT_thread_revive(ABT_pool pool, void (*thread_func)(void*), void* arg, ABT_thread* thread) {
  return revive_thread(pool, thread_func, arg, thread, true);
}

int ABT_thread_revive_to(ABT_pool pool, void (*thread_func)(void*), void* arg, ABT_thread* thread) {
  if (int rc = ensure_initialized()) return rc;
  if (!caller_can_block()) return not_a_ult_code();
  if (int rc = revive_thread(pool, thread_func, arg, thread, false)) return rc;
  return guarded(ABT_ERR_THREAD, [&] {
    if (tool_active())
      tool_event(weft::this_unit::current(), ABT_TOOL_EVENT_THREAD_YIELD, ABT_SYNC_EVENT_TYPE_USER);
    const push_context_scope ctx(ABT_POOL_CONTEXT_OP_THREAD_REVIVE_TO);
    weft::detail::submit_and_yield_to(unit_of(*thread), *pool->pool);
    tool_running_again();
    return ABT_SUCCESS;
  });
}

int ABT_thread_free(ABT_thread* thread) {
  return free_unit_of<ABT_ERR_INV_THREAD>(thread);
}

int ABT_thread_free_many(int num_threads, ABT_thread* thread_list) {
  if (num_threads < 0 || (num_threads > 0 && !thread_list)) return ABT_ERR_INV_ARG;
  for (int i = 0; i < num_threads; ++i)
    if (int rc = ABT_thread_free(&thread_list[i])) return rc;
  return ABT_SUCCESS;
}

int ABT_thread_join(ABT_thread thread) {
  if (int rc = ensure_initialized()) return rc;
  return join_unit(unit_of(thread), false, ABT_ERR_INV_THREAD);
}

int ABT_thread_join_many(int num_threads, ABT_thread* thread_list) {
  if (num_threads < 0 || (num_threads > 0 && !thread_list)) return ABT_ERR_INV_ARG;
  for (int i = 0; i < num_threads; ++i)
    if (int rc = ABT_thread_join(thread_list[i])) return rc;
  return ABT_SUCCESS;
}

int ABT_thread_exit(void) {
  if (int rc = ensure_initialized()) return rc;
  const context c = calling_context();
  if (c == context::primary_ult) return ABT_ERR_INV_THREAD;  // the primary ULT cannot end
  if (c != context::ult) return not_a_ult_code();
  weft::this_unit::exit();
}

int ABT_thread_cancel(ABT_thread thread) {
  if (int rc = ensure_initialized()) return rc;
  weft::work_unit* u = unit_of(thread);
  if (!u || u == primary_unit()) return ABT_ERR_INV_THREAD;
  thread_ext* e = ext_of(u);
  if (!e) return ABT_ERR_INV_THREAD;
  // The hot paths look at cancellation from now on (before the flag, so that one who sees the
  // flag's effect has its look turned on).
  g_slow_paths.fetch_or(slow_cancel, std::memory_order_seq_cst);
  e->flags.fetch_or(flag_cancel, std::memory_order_acq_rel);
  return ABT_SUCCESS;
}

int ABT_thread_self(ABT_thread* thread) {
  if (!thread) return ABT_ERR_INV_ARG;
  *thread = ABT_THREAD_NULL;  // Argobots 1.x: also on error
  if (int rc = ensure_initialized()) return rc;
  const context c = calling_context();
  if (c == context::tasklet) return ABT_ERR_INV_THREAD;  // Argobots 1.x: use ABT_self_get_thread
  if (c == context::scheduler) {
    // A user scheduler's loop: a ULT in Argobots.
    weft::work_unit* s = scheduler_unit();
    if (!s) return ABT_ERR_INV_XSTREAM;
    *thread = handle_of(s);
    return ABT_SUCCESS;
  }
  if (c != context::ult && c != context::primary_ult) return ABT_ERR_INV_XSTREAM;
  *thread = handle_of(weft::this_unit::current());
  return ABT_SUCCESS;
}

int ABT_thread_self_id(ABT_unit_id* id) {
  if (int rc = ensure_initialized()) return rc;
  if (!id) return ABT_ERR_INV_ARG;
  const context c = calling_context();
  if (c == context::tasklet) return ABT_ERR_INV_THREAD;
  if (c == context::scheduler) {
    weft::work_unit* s = scheduler_unit();
    if (!s) return ABT_ERR_INV_XSTREAM;
    *id = unit_view::id(s);
    return ABT_SUCCESS;
  }
  if (c != context::ult && c != context::primary_ult) return ABT_ERR_INV_XSTREAM;
  *id = weft::this_unit::id();
  return ABT_SUCCESS;
}

int ABT_thread_get_last_xstream(ABT_thread thread, ABT_xstream* xstream) {
  weft::work_unit* u = unit_of(thread);
  if (!u) return ABT_ERR_INV_THREAD;
  if (!xstream) return ABT_ERR_INV_ARG;
  *xstream = xstream_handle(unit_view::last_stream(u));
  return ABT_SUCCESS;
}

int ABT_thread_get_state(ABT_thread thread, ABT_thread_state* state) {
  weft::work_unit* u = unit_of(thread);
  if (!u) return ABT_ERR_INV_THREAD;
  if (!state) return ABT_ERR_INV_ARG;
  *state = state_of(u);
  return ABT_SUCCESS;
}

int ABT_thread_get_last_pool(ABT_thread thread, ABT_pool* pool) {
  weft::work_unit* u = unit_of(thread);
  if (!u) return ABT_ERR_INV_THREAD;
  if (!pool) return ABT_ERR_INV_ARG;
  *pool = last_pool_of(u);
  return ABT_SUCCESS;
}

int ABT_thread_get_last_pool_id(ABT_thread thread, int* id) {
  weft::work_unit* u = unit_of(thread);
  if (!u) return ABT_ERR_INV_THREAD;
  if (!id) return ABT_ERR_INV_ARG;
  ABT_pool p = last_pool_of(u);
  *id = p ? p->id : -1;
  return ABT_SUCCESS;
}

int ABT_thread_get_unit(ABT_thread thread, ABT_unit* unit) {
  weft::work_unit* u = unit_of(thread);
  if (!u) return ABT_ERR_INV_THREAD;
  if (!unit) return ABT_ERR_INV_ARG;
  ABT_unit mine = user_unit_of(u);
  *unit = mine ? mine : reinterpret_cast<ABT_unit>(u);
  return ABT_SUCCESS;
}

int ABT_thread_set_associated_pool(ABT_thread thread, ABT_pool pool) {
  weft::work_unit* u = unit_of(thread);
  if (!u) return ABT_ERR_INV_THREAD;
  if (!pool) return ABT_ERR_INV_POOL;
  // The primary ULT too: weft pins it to the primary stream, so a scheduler of another stream
  // that pops it from `pool` hands it back there; it runs wherever the primary stream serves it.
  weft::detail::set_home(u, *pool->pool);
  if (thread_ext* e = ext_of(u)) e->last_pool.store(pool, std::memory_order_relaxed);
  return ABT_SUCCESS;
}

int ABT_thread_yield_to(ABT_thread thread) {
  // One of the C API's hot paths: initialised, without tool or cancellation to look after, a
  // tail call of weft's checked yield_to, which checks the caller and the target and switches; a
  // call it refuses takes the full path, which finds out why.
  if (fast_paths_open()) [[likely]]
    return weft::detail::checked_yield_to(unit_of(thread), &yield_to_refused, thread);
  return yield_to_full(thread);
}

int ABT_thread_yield(void) {
  return yield_caller(false);
}

int ABT_thread_resume(ABT_thread thread) {
  return resume_thread(unit_of(thread), false);
}

int ABT_thread_migrate_to_xstream(ABT_thread thread, ABT_xstream xstream) {
  if (int rc = ensure_initialized()) return rc;
  if (!xstream || !xstream->stream) return ABT_ERR_INV_XSTREAM;
  if (xstream->stream->state() == weft::stream_state::terminated) return ABT_ERR_INV_XSTREAM;
  return guarded(ABT_ERR_INV_XSTREAM, [&] {
    weft::pool& p = xstream->stream->migration_pool();
    return migrate_unit(unit_of(thread), p, find_pool(&p));
  });
}

int ABT_thread_migrate_to_sched(ABT_thread thread, ABT_sched sched) {
  if (int rc = ensure_initialized()) return rc;
  if (!sched) return ABT_ERR_INV_SCHED;
  if (!sched->sched) return ABT_ERR_INV_SCHED;
  weft::pool& p = sched->sched->migration_pool();
  return migrate_unit(unit_of(thread), p, find_pool(&p));
}

int ABT_thread_migrate_to_pool(ABT_thread thread, ABT_pool pool) {
  if (int rc = ensure_initialized()) return rc;
  if (!pool) return ABT_ERR_INV_POOL;
  return migrate_unit(unit_of(thread), *pool->pool, pool);
}

int ABT_thread_migrate(ABT_thread thread) {
  if (int rc = ensure_initialized()) return rc;
  weft::work_unit* u = unit_of(thread);
  if (!u) return ABT_ERR_INV_THREAD;
  // Any other running stream; the next one after the unit's last, round robin.
  weft::execution_stream* last = unit_view::last_stream(u);
  const int from = last ? last->rank() : -1;
  layer_state& st = state();
  ABT_xstream target = nullptr;
  {
    std::lock_guard lock(st.mutex);
    const int n = static_cast<int>(st.xstreams.size());
    for (int i = 1; i <= n && !target; ++i) {
      ABT_xstream x = st.xstreams[static_cast<std::size_t>(((from < 0 ? 0 : from) + i) % n)];
      if (x && x->stream && x->rank != from && x->stream->state() == weft::stream_state::running)
        target = x;
    }
  }
  if (!target) return ABT_ERR_MIGRATION_NA;
  return ABT_thread_migrate_to_xstream(thread, target);
}

int ABT_thread_set_callback(ABT_thread thread, void (*cb_func)(ABT_thread, void*), void* cb_arg) {
  thread_ext* e = ext_of(unit_of(thread));
  if (!e) return ABT_ERR_INV_THREAD;
  e->migration_cb = cb_func;
  e->migration_arg = cb_arg;
  return ABT_SUCCESS;
}

int ABT_thread_set_migratable(ABT_thread thread, ABT_bool migratable) {
  weft::work_unit* u = unit_of(thread);
  if (!u) return ABT_ERR_INV_THREAD;
  thread_ext* e = ext_of(u);
  if (!e) return u == primary_unit() ? ABT_ERR_INV_THREAD : ABT_ERR_FEATURE_NA;
  if (migratable)
    e->flags.fetch_and(~std::uint32_t{flag_not_migratable}, std::memory_order_acq_rel);
  else
    e->flags.fetch_or(flag_not_migratable, std::memory_order_acq_rel);
  return ABT_SUCCESS;
}

int ABT_thread_is_migratable(ABT_thread thread, ABT_bool* is_migratable) {
  weft::work_unit* u = unit_of(thread);
  if (!u) return ABT_ERR_INV_THREAD;
  if (!is_migratable) return ABT_ERR_INV_ARG;
  thread_ext* e = ext_of(u);
  const bool m =
      e ? !(e->flags.load(std::memory_order_acquire) & flag_not_migratable) : u != primary_unit();
  *is_migratable = m ? ABT_TRUE : ABT_FALSE;
  return ABT_SUCCESS;
}

int ABT_thread_is_primary(ABT_thread thread, ABT_bool* is_primary) {
  weft::work_unit* u = unit_of(thread);
  if (!u) return ABT_ERR_INV_THREAD;
  if (!is_primary) return ABT_ERR_INV_ARG;
  *is_primary = u == primary_unit() ? ABT_TRUE : ABT_FALSE;
  return ABT_SUCCESS;
}

int ABT_thread_is_unnamed(ABT_thread thread, ABT_bool* is_unnamed) {
  weft::work_unit* u = unit_of(thread);
  if (!u) return ABT_ERR_INV_THREAD;
  if (!is_unnamed) return ABT_ERR_INV_ARG;
  // A unit created through weft's C++ API (a scheduler ULT of ABT_pool_add_sched among them)
  // has no extension: it is unnamed, as Argobots' scheduler ULTs are, when nothing holds it to
  // join, i.e. when it frees itself at its end.
  thread_ext* e = ext_of(u);
  const bool unnamed =
      e ? (e->flags.load(std::memory_order_relaxed) & flag_unnamed) != 0
        : unit_view::join_of(u, std::memory_order_relaxed) == unit_view::join_state::detached;
  *is_unnamed = unnamed ? ABT_TRUE : ABT_FALSE;
  return ABT_SUCCESS;
}

int ABT_thread_equal(ABT_thread thread1, ABT_thread thread2, ABT_bool* result) {
  if (!result) return ABT_ERR_INV_ARG;
  *result = thread1 == thread2 ? ABT_TRUE : ABT_FALSE;
  return ABT_SUCCESS;
}

int ABT_thread_get_stacksize(ABT_thread thread, size_t* stacksize) {
  weft::work_unit* u = unit_of(thread);
  if (!u) return ABT_ERR_INV_THREAD;
  if (!stacksize) return ABT_ERR_INV_ARG;
  *stacksize = stack_size_of(u);
  return ABT_SUCCESS;
}

int ABT_thread_get_id(ABT_thread thread, ABT_unit_id* thread_id) {
  weft::work_unit* u = unit_of(thread);
  if (!u) return ABT_ERR_INV_THREAD;
  if (!thread_id) return ABT_ERR_INV_ARG;
  *thread_id = unit_view::id(u);
  return ABT_SUCCESS;
}

int ABT_thread_set_arg(ABT_thread thread, void* arg) {
  weft::work_unit* u = unit_of(thread);
  if (!u) return ABT_ERR_INV_THREAD;
  if (u == primary_unit()) {
    // The primary ULT has no entry: its argument is the layer's (BOLT keeps its per-thread
    // record there).
    state().primary_arg.store(arg, std::memory_order_release);
    return ABT_SUCCESS;
  }
  if (!ext_of(u)) return ABT_ERR_INV_THREAD;  // weft's own units keep their callable there
  callable_of(u).entry_arg = arg;
  return ABT_SUCCESS;
}

int ABT_thread_get_arg(ABT_thread thread, void** arg) {
  weft::work_unit* u = unit_of(thread);
  if (!u) return ABT_ERR_INV_THREAD;
  if (!arg) return ABT_ERR_INV_ARG;
  if (u == primary_unit())
    *arg = state().primary_arg.load(std::memory_order_acquire);
  else
    *arg = ext_of(u) ? callable_of(u).entry_arg : nullptr;
  return ABT_SUCCESS;
}

int ABT_thread_get_thread_func(ABT_thread thread, void (**thread_func)(void*)) {
  weft::work_unit* u = unit_of(thread);
  if (!u) return ABT_ERR_INV_THREAD;
  if (!thread_func) return ABT_ERR_INV_ARG;
  *thread_func = ext_of(u) ? callable_of(u).entry_fn : nullptr;
  return ABT_SUCCESS;
}

int ABT_thread_get_attr(ABT_thread thread, ABT_thread_attr* attr) {
  weft::work_unit* u = unit_of(thread);
  if (!u) return ABT_ERR_INV_THREAD;
  if (!attr) return ABT_ERR_INV_ARG;
  if (unit_view::kind(u) != weft::unit_kind::ult)
    return ABT_ERR_INV_THREAD;  // Argobots 1.x: ULTs only
  auto* a = new (std::nothrow) ABT_thread_attr_opaque;
  if (!a) return ABT_ERR_MEM;
  thread_ext* e = ext_of(u);
  // The size asked for, as ABT_thread_get_stacksize reports it (Argobots' attribute and query
  // agree; weft may map more).
  a->stack_size = stack_size_of(u);
  a->unsized = u == primary_unit();
  if (e && e->user_stack) {
    // The memory the user gave, guard page included (as Argobots reports it).
    a->stack = e->user_stack;
  } else if (e ? e->started.load(std::memory_order_acquire) : u != primary_unit()) {
    // weft's own stack, taken at the first run and given back at the end (lazy allocation, as
    // Argobots' lazy stacks: NULL before and after): [stack, stack + size) is the top of the
    // usable bytes, where the ULT runs, as in Argobots (stack = top - size).
    const weft::detail::stack_region st = unit_view::stack(u);
    if (st.lo && st.size >= a->stack_size)
      a->stack = static_cast<char*>(st.lo) + (st.size - a->stack_size);
  }
  if (e) {
    a->migratable = !(e->flags.load(std::memory_order_relaxed) & flag_not_migratable);
    a->migration_cb = e->migration_cb;
    a->migration_arg = e->migration_arg;
  } else {
    a->migratable = u != primary_unit();
  }
  *attr = a;
  return ABT_SUCCESS;
}

int ABT_thread_attr_create(ABT_thread_attr* newattr) {
  if (newattr) *newattr = ABT_THREAD_ATTR_NULL;
  if (int rc = ensure_initialized()) return rc;
  if (!newattr) return ABT_ERR_INV_ARG;
  auto* a = new (std::nothrow) ABT_thread_attr_opaque;
  if (!a) return ABT_ERR_MEM;
  *newattr = a;
  return ABT_SUCCESS;
}

int ABT_thread_attr_free(ABT_thread_attr* attr) {
  if (!attr || !*attr) return ABT_ERR_INV_THREAD_ATTR;
  delete *attr;
  *attr = ABT_THREAD_ATTR_NULL;
  return ABT_SUCCESS;
}

int ABT_thread_attr_set_stack(ABT_thread_attr attr, void* stackaddr, size_t stacksize) {
  if (!attr) return ABT_ERR_INV_THREAD_ATTR;
  if (stackaddr && (reinterpret_cast<std::uintptr_t>(stackaddr) & 7)) return ABT_ERR_INV_ARG;
  if (stacksize > weft::detail::max_stack_size) return ABT_ERR_INV_ARG;  // weft's limit: 2 GiB
  attr->stack = stackaddr;  // the ULT runs on it (no guard page); NULL: weft maps one
  attr->stack_size = stacksize;
  attr->unsized = false;
  return ABT_SUCCESS;
}

int ABT_thread_attr_get_stack(ABT_thread_attr attr, void** stackaddr, size_t* stacksize) {
  if (!attr) return ABT_ERR_INV_THREAD_ATTR;
  if (!stackaddr || !stacksize) return ABT_ERR_INV_ARG;
  *stackaddr = attr->stack;
  *stacksize = attr_stack_size(attr);
  return ABT_SUCCESS;
}

int ABT_thread_attr_set_stacksize(ABT_thread_attr attr, size_t stacksize) {
  if (!attr) return ABT_ERR_INV_THREAD_ATTR;
  if (stacksize > weft::detail::max_stack_size) return ABT_ERR_INV_ARG;  // weft's limit: 2 GiB
  attr->stack_size = stacksize;
  attr->stack = nullptr;
  attr->unsized = false;
  return ABT_SUCCESS;
}

int ABT_thread_attr_get_stacksize(ABT_thread_attr attr, size_t* stacksize) {
  if (!attr) return ABT_ERR_INV_THREAD_ATTR;
  if (!stacksize) return ABT_ERR_INV_ARG;
  *stacksize = attr_stack_size(attr);
  return ABT_SUCCESS;
}

int ABT_thread_attr_set_callback(ABT_thread_attr attr, void (*cb_func)(ABT_thread, void*),
                                 void* cb_arg) {
  if (!attr) return ABT_ERR_INV_THREAD_ATTR;
  attr->migration_cb = cb_func;
  attr->migration_arg = cb_arg;
  return ABT_SUCCESS;
}

int ABT_thread_attr_set_migratable(ABT_thread_attr attr, ABT_bool is_migratable) {
  if (!attr) return ABT_ERR_INV_THREAD_ATTR;
  attr->migratable = is_migratable != ABT_FALSE;
  return ABT_SUCCESS;
}

}  // extern "C"
