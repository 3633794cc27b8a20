// SPDX-License-Identifier: Apache-2.0
// Helpers on work units shared by thread.cpp, task.cpp and self.cpp.
#pragma once

#include "objects.hpp"
#include "weft/this_unit.hpp"
#include "weft/unit_handle.hpp"

namespace abt {

/// Creates a work unit running fn(arg) in `p` (handle `ph`, may be null for a stream's main
/// pool), with the ABT extension; unnamed units (out == nullptr) free themselves.
int create_unit(weft::unit_kind kind, weft::pool& p, ABT_pool ph, void (*fn)(void*), void* arg,
                const ABT_thread_attr_opaque* attr, ABT_thread* out);
/// Waits for `u` to terminate without freeing it (ABT_thread_join); `then_free` frees it too
/// (ABT_thread_free).
int join_unit(weft::work_unit* u, bool then_free, int invalid_code);
/// Frees the terminated unit `u` that join_and_free() left allocated (it holds extras): returns
/// ABT_ERR_MEM when it never ran for want of a stack, ABT_SUCCESS otherwise.
int free_terminated(weft::work_unit* u) noexcept;
/// Where a join of `u` (its extension `e`) may run it: on the joiner's stream when both belong to
/// the same built-in pool and only one stream consumes it (access PRIV, SPSC or MPSC), so that
/// `u` would run on this stream anyway, and, when that pool is one of the stream's scheduler's,
/// only when `u` is the one unit queued there, which the scheduler would run next (the runtime
/// checks that, join_help::same_pool). Argobots' join suspends the joiner and lets the scheduler
/// run `u`, then resumes the joiner when `u` ends: running `u` in place gives the same order on
/// the same stream without the two switches. This checks `u`'s side (it is in the built-in pool
/// the ABT layer put it in); the joiner's is the runtime's.
inline weft::detail::join_help join_help_for(const weft::work_unit* u,
                                             const thread_ext* e) noexcept {
  if (!e) return weft::detail::join_help::none;
  const ABT_pool p = e->last_pool.load(std::memory_order_relaxed);
  return p && !p->user_defined && p->pool.get() == unit_view::home(u)
             ? weft::detail::join_help::same_pool
             : weft::detail::join_help::none;
}
/// ABT_thread_free's and ABT_task_free's full path: initialisation, the arguments, a tool, the
/// primary ULT, an unnamed unit; `invalid` is the code for a handle that names no unit it can
/// free. Sets `*slot` to null once the unit is freed.
int free_full(ABT_thread* slot, int invalid) noexcept;
/// What ABT_thread_free (`Invalid` ABT_ERR_INV_THREAD) and ABT_task_free (ABT_ERR_INV_TASK) do
/// when weft's join-and-free did not free the unit of `*slot` (`slot` is the context): one that
/// terminated holding extras is freed here, a join weft refused takes the full path.
template <int Invalid>
int free_fallback(void* slot, weft::detail::join_result why) noexcept;
/// ABT_thread_free and ABT_task_free. Initialised, without tool or cancellation to look after, a
/// terminated unit (the common case of a fan-out) is one runtime call that frees it, and one that
/// has not terminated a tail call of weft's join-and-free, which waits for it (and runs it here
/// where Argobots' join would, join_help_for), frees it and nulls `*slot`: no frame of the layer
/// stays on the caller's stack while it waits. The rest takes free_full.
template <int Invalid>
inline int free_unit_of(ABT_thread* slot) noexcept {
  if (slot && fast_paths_open()) [[likely]] {
    weft::work_unit* const u = unit_of(*slot);
    if (u) [[likely]] {
      // Terminated: so named (a unit that frees itself is never seen done) and not the
      // primary ULT (it never terminates). reap_if_done declines one something escaped from.
      if (unit_view::join_of(u, std::memory_order_relaxed) == unit_view::join_state::done) {
        if (weft::detail::reap_if_done(u)) [[likely]] {
          *slot = ABT_THREAD_NULL;
          return ABT_SUCCESS;
        }
      } else if (u != primary_unit()) [[likely]] {
        // The primary ULT never terminates: the full path reports it. weft refuses the join of
        // an unnamed unit (it frees itself), and the fallback then takes the full path.
        return weft::detail::join_and_free(u, slot, join_help_for(u, ext_of(u)),
                                           &free_fallback<Invalid>, slot);
      }
    }
  }
  return free_full(slot, Invalid);
}
/// What weft added to the stack size `attr` asks for when it allocated `u` (thread_ext::
/// stack_short): weft keeps whole pages only.
inline std::uint16_t stack_short_of(const weft::work_unit* u,
                                    const ABT_thread_attr_opaque* attr) noexcept {
  if (!attr || !attr->stack_size) return 0;
  const std::size_t got = unit_view::requested_stack_size(u);
  return got > attr->stack_size ? static_cast<std::uint16_t>(got - attr->stack_size) : 0;
}
/// Constructs the ABT extension of a new unit in `storage`, its descriptor's callable storage.
/// One initialisation, not a store per atomic field: the compiler merges the stores.
inline void construct_ext(unsigned char* storage, std::uint32_t flags,
                          const ABT_thread_attr_opaque* attr, ABT_pool ph, void* user_stack,
                          std::uint16_t stack_short) noexcept {
  ::new (static_cast<void*>(storage)) thread_ext{thread_ext::magic_value,
                                                 {flags},
                                                 {ph},
                                                 {false},
                                                 {false},
                                                 {false},
                                                 {0},
                                                 {0},
                                                 0,
                                                 stack_short,
                                                 attr ? attr->migration_cb : nullptr,
                                                 attr ? attr->migration_arg : nullptr,
                                                 user_stack};
}
/// Writes what the ABT layer keeps in a new descriptor `u` that weft allocated: the extension,
/// written once in place, the C entry and the end's hook. A unit that is not `named` frees itself:
/// its submit marks it so (submit_detached_and_succeed, submit_detached_unit).
inline void prepare_unit(weft::work_unit* u, ABT_pool ph, void (*fn)(void*), void* arg,
                         const ABT_thread_attr_opaque* attr, bool named) noexcept {
  std::uint32_t flags = named ? 0u : std::uint32_t{flag_unnamed};
  if (attr && !attr->migratable) flags |= flag_not_migratable;
  weft::detail::unit_callable& c = callable_of(u);
  construct_ext(c.storage, flags, attr, ph, nullptr, stack_short_of(u, attr));
  c.invoke = &invoke_entry;
  c.destroy = &entry_ended;
  c.entry_fn = fn;
  c.entry_arg = arg;
}
/// Tool events (tool.cpp): reports `event` for `u` to the registered callback, if any; a
/// SUSPEND or RESUME names the synchronisation object involved (ABT_tool_query_thread).
void tool_event(weft::work_unit* u, std::uint64_t event,
                ABT_sync_event_type sync_type = ABT_SYNC_EVENT_TYPE_UNKNOWN,
                void* sync_object = nullptr) noexcept;
/// tool_event() for the descriptor that stands for a user main scheduler's ULT (its loop runs
/// outside any weft unit, so neither the runtime nor tool_event() reports it).
void scheduler_tool_event(weft::work_unit* s, std::uint64_t event,
                          ABT_sync_event_type sync_type = ABT_SYNC_EVENT_TYPE_UNKNOWN) noexcept;
/// Event mask of the registered tool callback (0: none); tool.cpp writes it.
[[gnu::visibility("hidden")]] extern std::atomic<std::uint64_t> g_tool_mask;
/// True when a tool callback is registered (a single relaxed load, inline on hot paths).
inline bool tool_active() noexcept {
  return g_tool_mask.load(std::memory_order_relaxed) != 0;
}

/// ABT_thread_create's and ABT_task_create's fast form, for a caller that checked
/// fast_paths_open() (no tool to tell; `Report` true: tool_reporting_only()) and gives no user
/// stack nor a user pool (whose unit is made before the submit, create_unit): weft allocates
/// the descriptor, prepare_unit() fills it, the tool hears of the creation before any stream can
/// run the unit (`Report`), the handle goes to `out` (when given) and the call ends in a tail
/// call of weft's submit, which queues the unit and returns ABT_SUCCESS (no frame of the layer
/// to return through). When weft's allocation throws, stores ABT_THREAD_NULL in `out` (Argobots
/// 1.x sets it on error too) and returns the error's code.
template <bool Report = false>
inline int create_fast(weft::unit_kind kind, ABT_pool pool, void (*fn)(void*), void* arg,
                       const ABT_thread_attr_opaque* attr, ABT_thread* out) noexcept {
  weft::work_unit* u;
  try {
    u = weft::detail::allocate_unit(kind,
                                    kind == weft::unit_kind::ult && attr ? attr->stack_size : 0);
  } catch (...) {
    if (out) *out = ABT_THREAD_NULL;
    return current_exception_code(ABT_ERR_MEM);
  }
  prepare_unit(u, pool, fn, arg, attr, out != nullptr);
  if constexpr (Report) {
    weft::detail::set_home(u, *pool->pool);  // what a tool's POOL query reports
    tool_event(u, ABT_TOOL_EVENT_THREAD_CREATE);
  }
  if (!out) [[unlikely]]
    return weft::detail::submit_detached_and_succeed(u, *pool->pool);
  *out = handle_of(u);
  return weft::detail::submit_and_succeed(u, *pool->pool);
}
/// Ends the running ULT `self` if it was asked to cancel (honour_cancel's slow path).
void honour_cancel_slow(weft::work_unit* self) noexcept(false);
/// honour_cancel() for a caller that knows it is the running ULT `self`.
inline void honour_cancel(weft::work_unit* self) noexcept(false) {
  if (g_slow_paths.load(std::memory_order_relaxed) & slow_cancel) [[unlikely]]
    honour_cancel_slow(self);
}
/// Ends the calling ULT if it was cancelled (checked at the ABT layer's scheduling points). While
/// no unit was ever asked to cancel, this is one load and a branch.
inline void honour_cancel() noexcept(false) {
  if (g_slow_paths.load(std::memory_order_relaxed) & slow_cancel) [[unlikely]]
    honour_cancel_slow(weft::this_unit::current());
}
/// ABT_thread_resume of `u`; with `hold`, a ULT the caller switches to at once is left ready in
/// no pool (weft::detail::resume_held) so that no other stream takes it first.
int resume_thread(weft::work_unit* u, bool hold);
/// Requests the migration of `u` to `target`.
int migrate_unit(weft::work_unit* u, weft::pool& target, ABT_pool target_handle);
/// The handle of the pool `u` is associated with.
ABT_pool last_pool_of(weft::work_unit* u);
/// The stack size Argobots reports for `u` (ABT_thread_get_stacksize, ABT_thread_get_attr): the
/// size asked for at creation or the default; 0 for a tasklet and for the primary ULT.
std::size_t stack_size_of(weft::work_unit* u) noexcept;
/// The stack size the attribute getters report for `attr` (0 stands for the default there).
std::size_t attr_stack_size(const ABT_thread_attr_opaque* attr) noexcept;
/// The ABT_thread_state of `u`.
ABT_thread_state state_of(const weft::work_unit* u) noexcept;
/// Error code for a caller that is not a ULT (tasklet: INV_THREAD, elsewhere: INV_XSTREAM).
int not_a_ult_code() noexcept;
/// A yield from a caller that is not a ULT (`self`: the calling tasklet, or nullptr): in a user
/// main scheduler's run, the scheduler's ULT yields (yield_from_scheduler). Otherwise
/// ABT_thread_yield (`report` false) succeeds without doing anything, as in Argobots 1.x, and
/// ABT_self_yield (`report` true) reports the caller: ABT_ERR_INV_THREAD for a tasklet,
/// ABT_ERR_INV_XSTREAM outside any unit.
int yield_outside_ult(weft::work_unit* self, bool report) noexcept;

/// ABT_thread_yield's (`report` false) and ABT_self_yield's (`report` true) full path:
/// initialisation, the caller, a tool and a cancellation looked after.
int yield_full(bool report) noexcept;
/// What the fast yield does when weft refused it (the caller is not a ULT: the full path finds
/// out why) or it threw; `report` is yield_caller()'s, as a pointer-sized word.
int yield_refused(void* report, bool threw) noexcept;

/// ABT_thread_yield (`report` false) and ABT_self_yield (`report` true). Initialised, without
/// tool or cancellation to look after, a tail call of weft's checked yield, which checks the
/// caller and yields; it calls yield_refused for a caller it refuses.
inline int yield_caller(bool report) noexcept {
  if (fast_paths_open()) [[likely]]
    return weft::detail::checked_yield(&yield_refused,
                                       reinterpret_cast<void*>(std::uintptr_t{report}));
  return yield_full(report);
}

/// Reports RUN for the calling unit: it has its stream again after an ABT call switched away
/// (a yield, a suspension, a wait). Argobots reports RUN each time a unit is scheduled.
inline void tool_running_again() noexcept {
  if (tool_active()) tool_event(weft::this_unit::current(), ABT_TOOL_EVENT_THREAD_RUN);
}

/// Brackets a wait in an ABT call that blocks the calling ULT: SUSPEND before, RESUME and RUN
/// once it continues (the order Argobots reports for a unit that blocks and is woken). Other
/// callers (tasklets, external threads) do not block and report nothing.
class tool_block_scope {
 public:
  tool_block_scope(ABT_sync_event_type type, void* object) noexcept : type_(type), object_(object) {
    if (!tool_active()) return;
    weft::work_unit* u = weft::this_unit::current();
    if (!u || unit_view::kind(u) != weft::unit_kind::ult) return;
    u_ = u;
    tool_event(u_, ABT_TOOL_EVENT_THREAD_SUSPEND, type_, object_);
  }
  ~tool_block_scope() {
    if (!u_ || !tool_active()) return;
    tool_event(u_, ABT_TOOL_EVENT_THREAD_RESUME, type_, object_);
    tool_event(u_, ABT_TOOL_EVENT_THREAD_RUN);
  }
  tool_block_scope(const tool_block_scope&) = delete;
  tool_block_scope& operator=(const tool_block_scope&) = delete;

 private:
  weft::work_unit* u_ = nullptr;
  ABT_sync_event_type type_;
  void* object_;
};

}  // namespace abt
