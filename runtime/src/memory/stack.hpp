// SPDX-License-Identifier: Apache-2.0
// ULT stacks: carved from shared arenas (one mapping for many stacks), guarded by a PROT_NONE page
// while the process is far from vm.max_map_count and by a canary word past it, cached per stream.
#pragma once

#include <cstddef>
#include <cstdint>

#include "platform/assert.hpp"
#include "weft/internal/unit.hpp"

namespace weft::detail {

/// Bits of stack_region::flags.
enum stack_flags : std::uint32_t {
  stack_guarded = 1u << 0,  ///< A PROT_NONE page lies below lo.
  stack_canary = 1u << 1,   ///< No guard page: a canary word lies below the page of lo.
  stack_foreign = 1u << 2,  ///< Not ours (the primary thread's stack): never freed.
  stack_user = 1u << 3,     ///< Memory the user gave (set_user_stack): never cached or unmapped.
  stack_arena = 1u << 4,    ///< A slot of a stack arena: goes back to the arena, never unmapped.
  /// Its joiner's stack, lent to a joined ULT that runs on it as a call: the borrower never
  /// frees, caches or unmaps it.
  stack_borrowed = 1u << 5,
};

/// Page size of the machine.
std::size_t page_size() noexcept;
/// Rounds `bytes` up to whole pages (at least one).
std::size_t round_to_pages(std::size_t bytes) noexcept;

/// Maps a stack of `size` usable bytes (a multiple of the page size) plus its guard page, as a
/// mapping of its own (the primary stream's scheduler stack). When the kernel refuses another
/// mapping split (vm.max_map_count), the stack gets a canary instead and a one-time warning is
/// printed. Throws errc::resource when memory is exhausted.
stack_region map_stack(std::size_t size);
/// Gives back a stack made by map_stack (unmapped) or taken from an arena (returned to it).
void unmap_stack(const stack_region& s) noexcept;
/// The calling thread's own stack (flagged stack_foreign: never unmapped), with its TSan fiber.
/// A stack larger than max_stack_size (the primary thread's under ulimit -s of 2 GiB or more) is
/// described by its top max_stack_size bytes.
stack_region native_stack() noexcept;
/// The whole of the calling thread's own stack, [lo, hi): for the primary thread, as far down as
/// RLIMIT_STACK lets it grow (with ulimit -s unlimited, down to the mapping below it).
struct stack_bounds {
  std::uintptr_t lo = 0;
  std::uintptr_t hi = 0;
};
stack_bounds native_stack_bounds() noexcept;
/// False when a canary stack's canary was overwritten (the stack overflowed).
bool stack_intact(const stack_region& s) noexcept;

/// True when `parked` (a context saved on `s`, or none) lies within `s` (for checks).
inline bool parked_on(const stack_region& s, const void* parked) noexcept {
  const auto* p = static_cast<const char*>(parked);
  const auto* lo = static_cast<const char*>(s.lo);
  return !parked || (p >= lo && p <= lo + s.size);
}

/// A stack and, when a finished ULT left it, the context parked at the bottom of that ULT's entry
/// loop: the next ULT on this stack resumes it instead of building a context anew.
struct cached_stack {
  stack_region stack;
  void* parked = nullptr;
};

/// True when none of `list[0..n)` is the stack at `lo` (a stack enters a stream's cache once).
inline bool not_cached(const cached_stack* list, std::size_t n, const void* lo) noexcept {
  for (std::size_t i = 0; i < n; ++i)
    if (list[i].stack.lo == lo) return false;
  return true;
}

/// Takes up to `want` stacks of `size` bytes (a multiple of the page size) from the process-wide
/// arenas into `out`, mapping a new arena when none has a free slot; returns how many (at least
/// one). Takes the arenas' lock. Throws errc::resource when memory is exhausted.
std::size_t take_arena_stacks(std::size_t size, cached_stack* out, std::size_t want);
/// Returns `n` arena stacks to their arenas. Takes the arenas' lock; may unmap arenas that became
/// empty and drop (MADV_DONTNEED) free stacks above the high-water mark.
void give_arena_stacks(const cached_stack* stacks, std::size_t n) noexcept;

/// Counters of the process-wide stack arenas, for tests and diagnostics.
struct stack_arena_stats {
  std::size_t arenas = 0;          ///< Arenas mapped now.
  std::size_t guarded_arenas = 0;  ///< Of which with a guard page per slot.
  std::size_t guarded_stacks = 0;  ///< Slots of the guarded arenas (each with a guard page).
  std::size_t free_stacks = 0;     ///< Carved stacks back in their arenas (not in stream caches).
  std::size_t guard_limit = 0;     ///< Most guarded slots the arenas may hold at once.
};
/// A snapshot of the arena counters (takes the arenas' lock).
stack_arena_stats arena_stats() noexcept;

/// A per-stream LIFO of stacks of the default size (the default request plus the reserve, see
/// config::stack_reserve). Contract: only the owning stream calls
/// acquire() and release() (on every ULT's first run and termination), so they are plain array
/// operations without a lock or a system call while the cache has a stack (acquire) or room
/// (release). An empty cache refills half of itself from the process-wide arenas and a full one
/// gives half back, each a single lock round-trip. A second, smaller LIFO serves one other size
/// the same way: the size of the last request for another size made while it was empty (a
/// runtime ported onto weft, such as an OpenMP or Argobots program, often asks every ULT for the
/// same non-default size). Stacks of any third size go to and from the arenas one at a time.
class stack_cache {
 public:
  /// Caches stacks of `default_request` + `reserve` bytes (multiples of the page size).
  stack_cache(std::size_t default_request, std::size_t reserve) noexcept;
  /// Gives every cached stack back to the arenas.
  ~stack_cache();
  stack_cache(const stack_cache&) = delete;
  stack_cache& operator=(const stack_cache&) = delete;

  /// Puts a stack with at least `size` bytes (0: the default request, which gets the default
  /// size) into `out` and returns the
  /// context parked on it (or nullptr). Writes straight into `out` (a unit's descriptor): a
  /// cached_stack returned by value went through a temporary whose partial stores and wide loads
  /// defeated store forwarding. Throws errc::resource when memory is exhausted.
  void* acquire(std::size_t size, stack_region& out) {
    if (size == 0 || size == default_request_) [[likely]] {
      if (count_ == 0) [[unlikely]]
        refill();
      assert_invariant([this] { return count_ > 0 && count_ <= capacity; },
                       "stack cache: a refill leaves stacks to take");
      const cached_stack& c = free_[--count_];
      assert_invariant([&c, this] { return c.stack.lo && c.stack.size == default_size_; },
                       "invariant 9: a cached stack is a whole stack of the default size");
      assert_invariant([&c] { return parked_on(c.stack, c.parked); },
                       "invariant 9: a cached stack's parked context lies on it");
      out = c.stack;
      return c.parked;
    }
    return acquire_other(size, out);
  }
  /// Gives a stack back, with the context parked on it (or nullptr).
  void release(const stack_region& s, void* parked) noexcept {
    assert_invariant(
        [&s] { return s.lo && !(s.flags & (stack_foreign | stack_user | stack_borrowed)); },
        "invariant 9: only a stack of the runtime's own goes back to a stream's cache");
    assert_invariant([&s, parked] { return parked_on(s, parked); },
                     "invariant 9: a cached stack's parked context lies on it");
    if (s.size == default_size_ && (s.flags & stack_arena)) [[likely]] {
      if (count_ == capacity) [[unlikely]]
        drain();
      assert_invariant([this, &s] { return not_cached(free_, count_, s.lo); },
                       "invariant 9: a stack enters its stream's cache once");
      free_[count_++] = {s, parked};
    } else if (s.flags & stack_arena) {
      release_other(s, parked);
    } else {
      unmap_stack(s);
    }
  }
  /// Gives every cached stack back to the arenas.
  void clear() noexcept;
  /// The size acquire(0) gives: the default request and the reserve.
  std::size_t default_size() const noexcept { return default_size_; }
  /// The stack size a ULT that asks for none is guaranteed (config::stack_size).
  std::size_t default_request() const noexcept { return default_request_; }

 private:
  /// Stacks moved per refill or drain: half the cache, so that a stream alternating between
  /// creating and finishing ULTs at the boundary does not take the lock each time.
  static constexpr std::size_t capacity = 64;
  static constexpr std::size_t batch = capacity / 2;

  /// The second LIFO: stacks of other_size_ bytes (0 while it has never served a size), at most
  /// other_limit_ of them: other_capacity, or fewer for large stacks, so that it holds at most
  /// other_budget bytes of address space (at least 2 stacks).
  static constexpr std::size_t other_capacity = 16;
  static constexpr std::size_t other_budget = std::size_t{16} << 20;

  void refill();
  void drain() noexcept;
  void* acquire_other(std::size_t size, stack_region& out);
  void release_other(const stack_region& s, void* parked) noexcept;

  std::size_t default_request_;
  std::size_t default_size_;
  std::size_t count_ = 0;
  cached_stack free_[capacity];
  std::size_t other_size_ = 0;
  std::size_t other_limit_ = 2;
  std::size_t other_count_ = 0;
  cached_stack other_free_[other_capacity];
};

}  // namespace weft::detail
