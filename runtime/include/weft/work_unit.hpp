// The descriptor behind every ULT and tasklet.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>

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

/// A ULT stack: [lo, lo + size) is usable, the guard page (if any) lies just below lo.
struct stack_region {
  void* lo = nullptr;
  std::size_t size = 0;
  void* tsan_fiber = nullptr;  // ThreadSanitizer's fiber for this stack (sanitized builds only)
  // stack_flags in runtime/src/stack.hpp. A full word: a 28-byte struct is copied as two
  // overlapping 16-byte moves, and loading those right after a field-wise store defeats store
  // forwarding (it stalled every ULT's first run in stack_cache::acquire).
  std::uint64_t flags = 0;
};

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
  std::exception_ptr error;     // what escaped the unit, rethrown by join
  std::atomic<std::uintptr_t> join_word;
  std::atomic<pool*> migrate_to;               // pending migration request, applied at the next pop
  std::atomic<pool*> home;                     // the pool it returns to when it becomes ready
  std::atomic<execution_stream*> last_stream;  // where it last ran (read by handles anytime)
  std::atomic<execution_stream*> pinned_to;    // runs only on this stream, or nullptr
  void* local_storage;                         // reserved for ULT-local storage
  unit_id id;
  std::uint32_t stack_size;  // requested stack bytes (ULTs)
  std::atomic<unit_state> state;
  std::atomic<bool> user_suspended;  // suspended by this_unit::suspend(), resumable by resume()
  unit_kind kind;
  std::uint8_t flags;  // unit_flags in runtime/src/unit.hpp
  alignas(16) unsigned char storage[detail::inline_callable_size];
};

}  // namespace weft
