// SPDX-License-Identifier: Apache-2.0
// The whole descriptor behind every ULT and tasklet: the queue hooks pools see (weft::work_unit),
// the callable the inline creation path fills (detail::unit_callable) and the runtime's fields.
// Internal to the project: the runtime and the Argobots layer (weft_internal) see it, an
// installed header never does.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "weft/work_unit.hpp"

namespace weft::detail {

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

/// Sentinels of unit::join_word; other values are waiter addresses (see unit.cpp).
inline constexpr std::uintptr_t join_none = 0;
inline constexpr std::uintptr_t join_done = 1;
inline constexpr std::uintptr_t join_detached = 2;

/// The descriptor: every work_unit the runtime hands out is one. The hooks belong to the pool
/// that holds the unit, `callable` to whoever creates it until it is submitted, every other field
/// to the runtime.
struct alignas(unit_alignment) unit final : work_unit {
  void* context;           // saved fcontext_t while not running
  unit_callable callable;  // at unit_callable_offset: filled by spawn() and spawn_c()
  stack_region stack;      // taken at first run, returned at termination
  void* extras;            // runtime-private, allocated on first need: the exception that
                           // escaped the unit, its ULT-local values (core/unit_extras.hpp)
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
};
#ifndef WEFT_DETAIL_TSAN_FIBERS
static_assert(sizeof(unit) == 192, "a descriptor is three cache lines");
#endif
// offsetof on a class with a base is conditionally supported: GCC and Clang support it and warn.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
static_assert(offsetof(unit, callable) == unit_callable_offset,
              "callable_of() reaches the callable at unit_callable_offset");
#pragma GCC diagnostic pop

/// The whole descriptor of `u` (every work_unit the runtime hands out is a unit).
inline unit* as_unit(work_unit* u) noexcept {
  return static_cast<unit*>(u);
}
/// The whole descriptor of `u`, read-only.
inline const unit* as_unit(const work_unit* u) noexcept {
  return static_cast<const unit*>(u);
}

}  // namespace weft::detail
