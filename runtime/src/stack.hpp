// ULT stacks: mmap'd, with a PROT_NONE guard page below each, cached per stream.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "weft/work_unit.hpp"

namespace weft::detail {

/// Bits of stack_region::flags.
enum stack_flags : std::uint32_t {
  stack_guarded = 1u << 0,  ///< A PROT_NONE page lies below lo.
  stack_canary = 1u << 1,   ///< No guard page could be set: a canary word sits at lo.
  stack_foreign = 1u << 2,  ///< Not ours (the primary thread's stack): never freed.
  stack_user = 1u << 3,     ///< Memory the user gave (set_user_stack): never cached or unmapped.
};

/// Page size of the machine.
std::size_t page_size() noexcept;
/// Rounds `bytes` up to whole pages (at least one).
std::size_t round_to_pages(std::size_t bytes) noexcept;

/// Maps a stack of `size` usable bytes (a multiple of the page size) plus its guard page. When the
/// kernel refuses another mapping split (vm.max_map_count), the stack gets a canary instead and a
/// one-time warning is printed. Throws errc::resource when memory is exhausted.
stack_region map_stack(std::size_t size);
/// Unmaps a stack made by map_stack.
void unmap_stack(const stack_region& s) noexcept;
/// False when a canary stack's canary was overwritten.
bool stack_intact(const stack_region& s) noexcept;

/// A stack and, when a finished ULT left it, the context parked at the bottom of that ULT's entry
/// loop: the next ULT on this stack resumes it instead of building a context anew.
struct cached_stack {
  stack_region stack;
  void* parked = nullptr;
};

/// A per-stream LIFO of stacks of the default size (hot in cache, no syscall when warm). Other
/// sizes are mapped and unmapped directly.
class stack_cache {
 public:
  explicit stack_cache(std::size_t default_size) : default_size_(default_size) {}
  ~stack_cache() { clear(); }
  stack_cache(const stack_cache&) = delete;
  stack_cache& operator=(const stack_cache&) = delete;

  /// A stack with at least `size` bytes (0: the default size).
  cached_stack acquire(std::size_t size) {
    if ((size == 0 || size == default_size_) && count_ > 0) return free_[--count_];
    return {map_stack(size == 0 ? default_size_ : size), nullptr};
  }
  /// Gives a stack back, with the context parked on it (or nullptr).
  void release(const stack_region& s, void* parked) noexcept {
    if (s.size == default_size_ && count_ < capacity) {
      free_[count_++] = {s, parked};
    } else {
      unmap_stack(s);
    }
  }
  /// Unmaps every cached stack.
  void clear() noexcept;

 private:
  static constexpr std::size_t capacity = 64;
  std::size_t default_size_;
  std::size_t count_ = 0;
  cached_stack free_[capacity];
};

}  // namespace weft::detail
