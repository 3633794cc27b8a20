// SPDX-License-Identifier: Apache-2.0
// What the translation units of weft's Argobots layer (libweft-abt) share: the handle structs of
// the core objects, the mapping of C++ exceptions to ABT error codes, the calling-context query
// and the initialisation check. Internal: not installed.
//
// Contract for every ABT_* entry point: it never lets an exception escape (C callers cannot
// catch), checks ensure_initialized() first where Argobots does, and maps misuse to Argobots'
// error codes. Handles of core objects are plain pointers: ABT_thread/ABT_task are the weft
// work_unit itself (no allocation beyond weft's own descriptor), ABT_xstream/ABT_sched/ABT_pool
// point at the structs below, created and freed by the ABT layer.
#pragma once

#include <abt.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#include "weft/execution_stream.hpp"
#include "weft/internal/layer_support.hpp"
#include "weft/pool.hpp"
#include "weft/scheduler.hpp"
#include "weft/ult.hpp"
#include "weft/work_unit.hpp"

namespace abt {

/// What the C API reads of a work unit's descriptor beyond the queue hooks; what it changes there
/// goes through the runtime's calls (weft/internal/layer_support.hpp).
namespace unit_view = weft::detail::unit_view;
/// The callable part of a descriptor, the creator's: the C entry and, in its storage, the ABT
/// extension (thread_ext).
using weft::detail::callable_of;

// ------------------------------------------------------------------------------------------
// Errors and context
// ------------------------------------------------------------------------------------------

// The layer's globals are hidden (not exported from libweft-abt.so): the hot paths then read
// them with one load each, without going through the GOT.

/// Nesting depth of ABT_init (0: not initialised). Written by init.cpp only.
[[gnu::visibility("hidden")]] extern std::atomic<int> g_init_count;

/// ABT_SUCCESS between the first ABT_init and the last ABT_finalize, ABT_ERR_UNINITIALIZED
/// otherwise. Inline: one load on every entry point's fast path.
inline int ensure_initialized() noexcept {
  return g_init_count.load(std::memory_order_acquire) > 0 ? ABT_SUCCESS : ABT_ERR_UNINITIALIZED;
}

/// The ABT error code for the exception being handled; call only inside a catch block.
/// weft::error conditions map as follows: not_initialized -> ABT_ERR_UNINITIALIZED, resource ->
/// ABT_ERR_MEM, unsupported -> ABT_ERR_FEATURE_NA, invalid_config -> ABT_ERR_INV_ARG,
/// primary_stream -> ABT_ERR_INV_XSTREAM, not_in_ult/tasklet_cannot_block -> `context_error`,
/// every other condition -> `fallback`. std::bad_alloc -> ABT_ERR_MEM; anything else ->
/// `fallback`.
int current_exception_code(int fallback, int context_error = ABT_ERR_INV_XSTREAM) noexcept;

/// Runs `f` (which returns an ABT code) and turns any exception into a code as above.
template <class F>
int guarded(int fallback, F&& f) noexcept {
  try {
    return f();
  } catch (...) {
    return current_exception_code(fallback);
  }
}

/// The value a C caller passed for an enum parameter, read as an int: C may pass any value, and
/// loading an out-of-range value as the enum type is undefined in C++.
template <class E>
inline int enum_value(const E& e) noexcept {
  static_assert(sizeof(E) == sizeof(int));
  int v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}

/// Who is calling: Argobots' calling contexts. `scheduler` is a stream's scheduler loop (a user
/// scheduler's run callback), which Argobots runs as a ULT; weft runs it outside any work unit.
enum class context { external, primary_ult, ult, tasklet, scheduler };

/// The calling context. Lock-free; valid from any thread.
context calling_context() noexcept;

/// True when the caller is a ULT (primary ULT included): it may block by switching away.
inline bool caller_can_block() noexcept {
  const context c = calling_context();
  return c == context::ult || c == context::primary_ult;
}

/// The primary ULT's descriptor while the layer is initialised; written by init.cpp only.
[[gnu::visibility("hidden")]] extern std::atomic<weft::work_unit*> g_primary_unit;

/// The primary ULT's descriptor, recorded by ABT_init (nullptr when not initialised by it).
inline weft::work_unit* primary_unit() noexcept {
  return g_primary_unit.load(std::memory_order_acquire);
}

/// Why the hot paths must take their slow forms (bits of g_slow_paths): a tool callback is
/// registered, some unit was ever asked to cancel (sticky until the layer is initialised anew),
/// or the layer is not initialised. With none, a yield, a create, a start or a free checks no
/// per-unit flag, reports nothing and needs no separate initialisation check.
enum slow_path : std::uint32_t {
  slow_tool = 1u << 0,
  slow_cancel = 1u << 1,
  slow_uninitialized = 1u << 2,  // cleared by the first ABT_init, set again by the last finalize
  // No asymmetric fence (asymmetric_fence.hpp): the end of a unit's entry takes a full fence.
  // Only that end looks at it.
  slow_full_fence = 1u << 3,
  // A user-defined pool exists (sticky until the layer is initialised anew): yields, resumes and
  // creates tell its push which operation it is for (push_context_scope).
  slow_user_pool = 1u << 4,
};
/// The slow_path bits in force; tool.cpp, ABT_thread_cancel, ABT_init, ABT_finalize and
/// init_asymmetric_fence write them.
[[gnu::visibility("hidden")]] extern std::atomic<std::uint32_t> g_slow_paths;

/// The ABT_pool_context a user pool's push reports on the calling thread: the layer operation
/// (create, yield, resume ...) under way there, ABT_POOL_CONTEXT_OP_POOL_OTHER outside one. The
/// push a switch makes for the ULT that switched away (its yield) lands on the same kernel thread
/// before anything else runs there, so a thread-local value reaches it. Not inline: a ULT may
/// continue on another thread, and the thread-local's address must be computed afresh.
[[gnu::noinline]] ABT_pool_context push_context() noexcept;
[[gnu::noinline]] void set_push_context(ABT_pool_context c) noexcept;

/// Names the operation for the user-pool pushes it makes, when a user pool exists.
class push_context_scope {
 public:
  explicit push_context_scope(ABT_pool_context c) noexcept
      : on_((g_slow_paths.load(std::memory_order_relaxed) & slow_user_pool) != 0) {
    if (on_) set_push_context(c);
  }
  ~push_context_scope() {
    if (on_) set_push_context(ABT_POOL_CONTEXT_OP_POOL_OTHER);  // the thread it ends on
  }
  push_context_scope(const push_context_scope&) = delete;
  push_context_scope& operator=(const push_context_scope&) = delete;

 private:
  bool on_;
};

/// True when a hot path must look at tool events or cancellation: one relaxed load and one
/// predictable branch, instead of a check per concern.
inline bool slow_paths_on() noexcept {
  return (g_slow_paths.load(std::memory_order_relaxed) & (slow_tool | slow_cancel)) != 0;
}

/// True when an entry point may take its fast form: the layer is initialised (what
/// ensure_initialized() checks, with the same ordering) and no tool or cancellation needs
/// looking after. One load and one branch; the slow form makes every check itself.
inline bool fast_paths_open() noexcept {
  return (g_slow_paths.load(std::memory_order_acquire) &
          (slow_tool | slow_cancel | slow_uninitialized | slow_user_pool)) == 0;
}

/// True when the layer is initialised and a tool callback is the only reason to leave the fast
/// paths: a create may then take its fast form and report the creation (create_fast<true>).
inline bool tool_reporting_only() noexcept {
  return (g_slow_paths.load(std::memory_order_acquire) &
          (slow_tool | slow_cancel | slow_uninitialized | slow_user_pool)) == slow_tool;
}

// ------------------------------------------------------------------------------------------
// Work units
// ------------------------------------------------------------------------------------------

/// ABT_thread and ABT_task are the weft descriptor.
inline weft::work_unit* unit_of(ABT_thread t) noexcept {
  return reinterpret_cast<weft::work_unit*>(t);
}
inline ABT_thread handle_of(weft::work_unit* u) noexcept {
  return reinterpret_cast<ABT_thread>(u);
}

/// Flags of thread_ext::flags.
enum thread_flag : std::uint32_t {
  flag_unnamed = 1u << 0,         // created without a handle: frees itself
  flag_not_migratable = 1u << 1,  // ABT_thread_set_migratable(false)
  flag_cancel = 1u << 2,          // ABT_thread_cancel requested
  flag_user_guard = 1u << 3,      // a page of the user's stack is protected as its guard
  flag_cancelled = 1u << 5,       // ended by its cancellation (reported as CANCEL, not FINISH)
};

/// The lock that serialises the ABT key operations on `u` (a stripe of a fixed table): another
/// thread's ABT_thread_set_specific and the unit's own ABT_key_set both reach weft's per-unit
/// table, which only its owner may otherwise touch.
std::mutex& key_lock_of(const weft::work_unit* u) noexcept;

/// What the ABT layer keeps per work unit it created, in the descriptor's callable storage (the
/// unit itself is created with a C entry, so weft does not use that storage). Trivially
/// destructible: it stays readable until the descriptor is freed.
struct thread_ext {
  static constexpr std::uint32_t magic_value = 0x41425454;  // "ABTT"
  // The fields a create sets come first and the ones it zeroes after them, in whole words: the
  // compiler then writes the zeroes with two vector stores.
  std::uint32_t magic;
  std::atomic<std::uint32_t> flags;
  // The ABT pool the unit was last put in by the ABT layer: written by whoever moves the unit,
  // read by its joiner and by queries from any thread.
  std::atomic<ABT_pool> last_pool;
  std::atomic<bool> started;  // the entry began to run (a plain store: off the RMW path)
  // ABT_self_suspend_to: the unit switched to its target and will suspend when it is back,
  // unless a resume came first (which then consumes the flag instead of resuming).
  std::atomic<bool> suspend_pending;
  std::atomic<bool> suspending;  // between consuming suspend_pending and being suspended
  // The end of the unit's entry against another thread's key call on it (see entry_ended):
  // `ending` is written by the unit only (1: its entry ended, weft tears its local values down
  // next), `key_setter` by the other thread, under the unit's key lock.
  std::atomic<std::uint8_t> ending;
  std::atomic<std::uint8_t> key_setter;
  std::uint8_t unused;  // zeroed with its neighbours: the word is written whole
  // The bytes weft added to the requested stack size to make it whole pages (0 for the default
  // size): ABT_thread_get_stacksize reports the size asked for, as Argobots does.
  std::uint16_t stack_short;
  void (*migration_cb)(ABT_thread, void*);
  void* migration_arg;
  void* user_stack;  // the stack ABT_thread_attr_set_stack gave (its size is u->stack_size)
};
static_assert(sizeof(thread_ext) <= weft::detail::inline_callable_size);

/// The entry every ABT-created work unit runs (see thread.cpp): checks cancellation, then calls
/// the C function with its argument. Its address marks the units that carry a thread_ext.
void invoke_entry(weft::work_unit* u);
/// The destroy hook of every ABT-created work unit, which weft calls once the entry has ended,
/// however it ended, before it tears the unit's local values down: reports FINISH (unless its
/// cancellation was reported) and FREE for an unnamed unit, and marks the end against another
/// thread's key call on the unit.
void entry_ended(weft::work_unit* u) noexcept;

/// The extension of `u`, which the ABT layer created (its invoke is invoke_entry).
inline thread_ext* ext_in(weft::work_unit* u) noexcept {
  return std::launder(reinterpret_cast<thread_ext*>(callable_of(u).storage));
}

/// The ABT extension of `u`, or nullptr for units the ABT layer did not create (the primary ULT,
/// units made with weft's C++ API, stacked schedulers). Inline: every ABT call on a unit asks.
inline thread_ext* ext_of(weft::work_unit* u) noexcept {
  if (!u || callable_of(u).invoke != &invoke_entry) return nullptr;
  return ext_in(u);
}

// ------------------------------------------------------------------------------------------
// Keys (ABT_key) are weft::local_key values; see key.cpp.
// ------------------------------------------------------------------------------------------

}  // namespace abt

// ------------------------------------------------------------------------------------------
// Core handle structs (global namespace: they complete abt.h's opaque types)
// ------------------------------------------------------------------------------------------

/// A pool handle: a share of the weft pool plus what Argobots attaches to a pool.
struct ABT_pool_opaque {
  std::shared_ptr<weft::pool> pool;
  ABT_pool_access access = ABT_POOL_ACCESS_MPSC;
  bool automatic = false;
  bool user_defined = false;  // built from ABT_pool_user_def / ABT_pool_def
  bool wraps_native = false;  // made by the ABT layer for a pool weft created (see pool.cpp)
  int id = 0;
  std::atomic<void*> data{nullptr};
  std::atomic<int> sched_refs{0};  // ABT schedulers that list this pool
};

/// A scheduler handle. Before it is installed, the ABT layer owns the weft scheduler; once it is
/// a stream's main scheduler the stream owns it, once stacked (ABT_pool_add_sched) the stacking
/// ULT shares it.
struct ABT_sched_opaque {
  std::unique_ptr<weft::scheduler> owned;       // until installed
  std::weak_ptr<weft::scheduler> stacked;       // while stacked (the stacking ULT owns it)
  std::atomic<bool> stacked_live{false};        // stacked and not finished yet
  weft::scheduler* sched = nullptr;             // the scheduler, while alive
  std::vector<ABT_pool> pools;                  // as the user gave them (ABT-level view)
  ABT_sched_def def{};                          // user-defined schedulers (def.run != nullptr)
  ABT_sched_predef predef = ABT_SCHED_DEFAULT;  // predefined ones
  bool automatic = false;
  std::atomic<void*> data{nullptr};
  ABT_xstream xstream = nullptr;  // the stream whose main scheduler it is, if any
  int event_freq = 0;             // ABT_sched_basic_freq, 0: the configured default
};

/// An execution stream handle. The primary stream's lives from ABT_init to ABT_finalize; the
/// others from ABT_xstream_create to ABT_xstream_free.
struct ABT_xstream_opaque {
  weft::execution_stream* stream = nullptr;  // nullptr once freed
  ABT_sched main_sched = nullptr;
  int rank = 0;
  bool primary = false;
  std::vector<int> cpus;  // the CPUs it is bound to (weft's place, or set_affinity's)
};
