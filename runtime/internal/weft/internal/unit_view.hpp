// SPDX-License-Identifier: Apache-2.0
// Read-only access to a descriptor for the layers built on weft (the C API in abt/): each
// accessor is the one load the layer would write itself, so that reading through the view costs
// nothing, while the fields' meaning and encoding (the join word's sentinels above all) stay the
// runtime's. Whatever a layer needs to change in a descriptor is a call of
// weft/internal/layer_support.hpp; the callable is the creator's (weft::detail::callable_of).
// Internal to the project, as unit.hpp.
#pragma once

#include <atomic>
#include <cstdint>

#include "weft/internal/unit.hpp"
#include "weft/work_unit.hpp"

namespace weft::detail::unit_view {

inline unit_kind kind(const work_unit* u) noexcept {
  return as_unit(u)->kind;
}

inline unit_id id(const work_unit* u) noexcept {
  return as_unit(u)->id;
}

/// Acquire by default: what the unit did before it reached the state happens before the caller's
/// next step (a terminated unit's effects, a ready unit's saved context).
inline unit_state state(const work_unit* u,
                        std::memory_order order = std::memory_order_acquire) noexcept {
  return as_unit(u)->state.load(order);
}

/// The pool the unit goes back to when it becomes ready (null before its first submit).
inline pool* home(const work_unit* u) noexcept {
  return as_unit(u)->home.load(std::memory_order_relaxed);
}

/// The stream it runs or last ran on; null before it first ran. Any thread, any time.
inline execution_stream* last_stream(const work_unit* u) noexcept {
  return as_unit(u)->last_stream.load(std::memory_order_relaxed);
}

/// The only stream it may run on, or null.
inline execution_stream* pinned_to(const work_unit* u) noexcept {
  return as_unit(u)->pinned_to.load(std::memory_order_relaxed);
}

/// True while it is suspended by this_unit::suspend() (resumable by weft::resume).
inline bool user_suspended(const work_unit* u) noexcept {
  return as_unit(u)->user_suspended.load(std::memory_order_acquire);
}

/// The stack bytes asked for at creation: 0 for the runtime's default (and for tasklets).
inline std::uint32_t requested_stack_size(const work_unit* u) noexcept {
  return as_unit(u)->stack_size;
}

/// The ULT's stack while it holds one (lo null otherwise).
inline stack_region stack(const work_unit* u) noexcept {
  return as_unit(u)->stack;
}

/// Where a unit's end and its join stand.
enum class join_state : std::uint8_t {
  open,      // running or runnable; nobody waits for it yet
  done,      // terminated and not freed: a join returns at once
  detached,  // frees itself when it ends
  waited,    // a joiner waits for it
};

/// The unit's join_state. Compared with one constant, it compiles to the single load and compare
/// of the join word (the sentinels are its first values); relaxed where only the state matters,
/// acquire where the caller goes on to use what the unit did.
inline join_state join_of(const work_unit* u,
                          std::memory_order order = std::memory_order_acquire) noexcept {
  const std::uintptr_t w = as_unit(u)->join_word.load(order);
  static_assert(join_none == 0 && join_done == 1 && join_detached == 2);
  return w <= join_detached ? static_cast<join_state>(w) : join_state::waited;
}

}  // namespace weft::detail::unit_view
