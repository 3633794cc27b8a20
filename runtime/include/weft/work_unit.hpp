// SPDX-License-Identifier: Apache-2.0
// The descriptor behind every ULT and tasklet, as pools see it: its queue hooks.
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
/// The alignment of every descriptor the runtime hands out (handle words keep a tag in the low
/// bits this leaves free).
inline constexpr std::size_t unit_alignment = 16;
}  // namespace detail

/// A work unit, as a pool sees it: the queue hooks. Pools may use them freely while the unit is
/// queued in them; the rest of the descriptor (its state, stack, callable, ...) lies beyond them
/// and belongs to the runtime. A unit is in at most one pool at a time, so one hook suffices.
/// Descriptors are recycled through per-stream caches: never keep a pointer to a unit after it
/// has been joined or, if detached, after it terminated.
struct work_unit {
  work_unit* pool_next;
  work_unit* pool_prev;
  std::atomic<pool*> pool_holder;  // atomic: remove() may test it while another stream holds u
};

namespace detail {

/// Callables up to this size live inside the descriptor; larger ones are heap-allocated.
inline constexpr std::size_t inline_callable_size = 48;

/// The part of a descriptor that the inline creation path (spawn() in unit_handle.hpp) fills:
/// the callable and how to run it. Every descriptor holds one at unit_callable_offset.
struct unit_callable {
  void (*invoke)(work_unit*);   // runs the callable stored in `storage`
  void (*destroy)(work_unit*);  // destroys it (nullptr once destroyed)
  void (*entry_fn)(void*);      // C-style entry, or nullptr for a C++ callable
  void* entry_arg;              // its argument, or the address of the callable
  alignas(16) unsigned char storage[inline_callable_size];
};

/// Where a descriptor's unit_callable lies, in bytes from its work_unit (the runtime's descriptor
/// type checks it).
inline constexpr std::size_t unit_callable_offset = 32;

/// The callable part of the descriptor `u`.
inline unit_callable& callable_of(work_unit* u) noexcept {
  return *reinterpret_cast<unit_callable*>(reinterpret_cast<unsigned char*>(u) +
                                           unit_callable_offset);
}
/// The callable part of the descriptor `u`, read-only.
inline const unit_callable& callable_of(const work_unit* u) noexcept {
  return *reinterpret_cast<const unit_callable*>(reinterpret_cast<const unsigned char*>(u) +
                                                 unit_callable_offset);
}

}  // namespace detail

}  // namespace weft
