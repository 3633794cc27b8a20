// SPDX-License-Identifier: Apache-2.0
// The descriptor behind every ULT and tasklet.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace weft {

class execution_stream;
class pool;

/// Stackful (yieldable, may block) or stackless (runs to completion on the scheduler's stack).
enum class unit_kind : std::uint8_t { ult, tasklet };

/// Life cycle: ready (in a pool or about to be) -> running -> ready | blocked | terminated.
enum class unit_state : std::uint8_t { ready, running, blocked, terminated };

/// Unique over the life of the process; 0 is never used.
using unit_id = std::uint64_t;

namespace detail {

// ThreadSanitizer builds give every stack a TSan fiber. Its handle exists only in those builds,
// which must be whole-program anyway, so that a normal build's descriptor stays at three cache
// lines (a fan-out of 10^6 units is bound by descriptor bytes).
#if defined(__SANITIZE_THREAD__)
#define WEFT_DETAIL_TSAN_FIBERS 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define WEFT_DETAIL_TSAN_FIBERS 1
#endif
#endif

/// A ULT stack: [lo, lo + size) is usable, the guard page (if any) lies just below lo. Sizes are
/// at most 2 GiB (a larger ULT stack is refused; a larger native stack is described by its top
/// 2 GiB).
struct stack_region {
  void* lo = nullptr;
#ifdef WEFT_DETAIL_TSAN_FIBERS
  void* tsan_fiber = nullptr;  // ThreadSanitizer's fiber for this stack
#endif
  std::uint32_t size = 0;
  std::uint32_t flags = 0;  // stack_flags in runtime/src/memory/stack.hpp
};

/// The largest stack a stack_region describes: ULT stacks are refused above it, a larger native
/// or user-provided stack is used from its top.
inline constexpr std::size_t max_stack_size = std::size_t{1} << 31;

/// Sentinels of work_unit::join_word; other values are waiter addresses (see unit.cpp).
inline constexpr std::uintptr_t join_none = 0;
inline constexpr std::uintptr_t join_done = 1;
inline constexpr std::uintptr_t join_detached = 2;

/// Callables up to this size live inside the descriptor; larger ones are heap-allocated.
inline constexpr std::size_t inline_callable_size = 48;

}  // namespace detail

/// A work unit. Pools may use the three hook fields freely while the unit is queued in them and
/// must not touch anything else; every other field belongs to the runtime. A unit is in at most one
/// pool at a time, so one hook suffices. Descriptors are recycled through per-stream caches: never
/// keep a pointer to a unit after it has been joined or, if detached, after it terminated.
struct work_unit {
  // Pool hook.
  work_unit* pool_next;
  work_unit* pool_prev;
  std::atomic<pool*> pool_holder;  // atomic: remove() may test it while another stream holds u

  // Runtime fields.
  void* context;                // saved fcontext_t while not running
  detail::stack_region stack;   // taken at first run, returned at termination
  void (*invoke)(work_unit*);   // runs the callable stored in `storage`
  void (*destroy)(work_unit*);  // destroys it (nullptr once destroyed)
  void (*entry_fn)(void*);      // C-style entry, or nullptr for a C++ callable
  void* entry_arg;              // its argument, or the address of the callable
  void* extras;                 // runtime-private, allocated on first need: the exception that
                                // escaped the unit, its ULT-local values (src/unit_extras.hpp)
  std::atomic<std::uintptr_t> join_word;
  std::atomic<pool*> migrate_to;               // pending migration request, applied at the next pop
  std::atomic<pool*> home;                     // the pool it returns to when it becomes ready
  std::atomic<execution_stream*> last_stream;  // where it last ran (read by handles anytime)
  std::atomic<execution_stream*> pinned_to;    // runs only on this stream, or nullptr
  unit_id id;
  std::uint32_t stack_size;  // requested stack bytes (ULTs)
  std::atomic<unit_state> state;
  std::atomic<bool> user_suspended;  // suspended by this_unit::suspend(), resumable by resume()
  unit_kind kind;
  std::uint8_t flags;  // unit_flags in runtime/src/memory/unit_cache.hpp
  alignas(16) unsigned char storage[detail::inline_callable_size];
};
#ifndef WEFT_DETAIL_TSAN_FIBERS
static_assert(sizeof(work_unit) == 192, "a descriptor is three cache lines");
#endif

}  // namespace weft
