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
/// ABT_thread_free's and ABT_task_free's common case, inline: `u`, named, has terminated, there
/// is no tool to tell and nothing escaped it: frees it and returns true. Otherwise returns false
/// and leaves it to join_unit().
inline bool free_if_done(weft::work_unit* u) noexcept {
  if (!u || slow_paths_on() ||
      as_unit(u)->join_word.load(std::memory_order_acquire) != weft::detail::join_done)
    return false;
  if (const thread_ext* e = ext_of(u);
      e && (e->flags.load(std::memory_order_relaxed) & flag_unnamed))
    return false;
  return weft::detail::reap_if_done(u);
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
/// Requests the migration of `u` to `target`.
int migrate_unit(weft::work_unit* u, weft::pool& target, ABT_pool target_handle);
/// The handle of the pool `u` is associated with.
ABT_pool last_pool_of(weft::work_unit* u);
/// The ABT_thread_state of `u`.
ABT_thread_state state_of(const weft::work_unit* u) noexcept;
/// Error code for a caller that is not a ULT (tasklet: INV_THREAD, elsewhere: INV_XSTREAM).
int not_a_ult_code() noexcept;
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
extern std::atomic<std::uint64_t> g_tool_mask;
/// True when a tool callback is registered (a single relaxed load, inline on hot paths).
inline bool tool_active() noexcept {
  return g_tool_mask.load(std::memory_order_relaxed) != 0;
}

/// A yield from a caller that is not a ULT (`self`: the calling tasklet, or nullptr): in a user
/// main scheduler's run, the scheduler's ULT yields (yield_from_scheduler). Otherwise
/// ABT_thread_yield (`report` false) succeeds without doing anything, as in Argobots 1.x, and
/// ABT_self_yield (`report` true) reports the caller: ABT_ERR_INV_THREAD for a tasklet,
/// ABT_ERR_INV_XSTREAM outside any unit.
int yield_outside_ult(weft::work_unit* self, bool report) noexcept;

/// ABT_thread_yield (`report` false) and ABT_self_yield (`report` true) past the initialisation
/// check: one look at the caller serves every check. Without tool or cancellation to look after,
/// a calling ULT makes a plain weft yield (weft's own cost plus a predictable branch).
inline int yield_caller(bool report) noexcept {
  weft::work_unit* const self = weft::this_unit::current();
  if (!self || as_unit(self)->kind != weft::unit_kind::ult) [[unlikely]]
    return yield_outside_ult(self, report);
  if (!slow_paths_on()) [[likely]]
    return guarded(ABT_ERR_THREAD, [] {
      weft::this_unit::yield();
      return ABT_SUCCESS;
    });
  return guarded(ABT_ERR_THREAD, [self] {
    if (tool_active()) tool_event(self, ABT_TOOL_EVENT_THREAD_YIELD, ABT_SYNC_EVENT_TYPE_USER);
    weft::this_unit::yield();
    if (tool_active()) tool_event(self, ABT_TOOL_EVENT_THREAD_RUN);
    honour_cancel(self);
    return ABT_SUCCESS;
  });
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
    if (!u || as_unit(u)->kind != weft::unit_kind::ult) return;
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
