// SPDX-License-Identifier: Apache-2.0
// Work-unit descriptors: slabs allocated node-locally, recycled through per-stream caches.
#pragma once

#include <cstddef>
#include <mutex>
#include <utility>
#include <vector>

#include "platform/assert.hpp"
#include "platform/locks.hpp"
#include "weft/internal/layer_support.hpp"
#include "weft/work_unit.hpp"

namespace weft::detail {

/// Bits of unit::flags.
enum unit_flags : std::uint8_t {
  unit_primary = 1u << 0,    ///< The primary ULT (the thread that called init): native stack.
  unit_forwarded = 1u << 1,  ///< In a stream's inbox because it is pinned to that stream.
};
/// Records what the calling ULT `u` is about to wait for (0: nothing).
inline void set_wait_kind(work_unit* u, std::uint8_t kind) noexcept {
  as_unit(u)->flags = static_cast<std::uint8_t>(
      (as_unit(u)->flags & ((1u << unit_wait_shift) - 1)) | (kind << unit_wait_shift));
}
// unit_wait_shift and wait_kind_of(): weft/internal/layer_support.hpp.

/// Owns every descriptor slab of the runtime and a shared free list for streams whose cache ran
/// dry or overflowed. All members lock; streams reach it once per `batch` units at most.
///
/// Free descriptors move between caches and the allocator in chunks, so that a move is O(1)
/// whatever the chunk's size and never walks cold descriptors: a chunk is a list of at most
/// `batch` free descriptors linked through pool_next (nullptr-terminated) whose head records the
/// chunk's size in stack_size and the next chunk in pool_prev. Both fields are dead in a free
/// descriptor; init_unit() resets them.
class unit_allocator {
 public:
  static constexpr std::size_t batch = 256;

  unit_allocator() = default;
  ~unit_allocator();
  unit_allocator(const unit_allocator&) = delete;
  unit_allocator& operator=(const unit_allocator&) = delete;

  /// Takes one chunk (a new slab of `batch` descriptors on `numa_node` if none is free).
  work_unit* take(int numa_node);
  /// Returns the chunks from `first` to `last` (linked through their heads' pool_prev).
  void give(work_unit* first, work_unit* last) noexcept;
  /// Descriptors allocated in slabs so far (for tests and statistics).
  std::size_t allocated() const;
  /// Every slab as (first descriptor, count): every descriptor the runtime ever handed out lies
  /// in one, so unit dumps find the live units here. `wait`: false when the caller cannot block
  /// (a debugger's call into a stopped process, where a stopped thread may hold the lock): the
  /// slabs are then read without it.
  // Excluded from the lock analysis: with `wait` false it reads without the lock when another
  // thread holds it (a dump of a deadlocked program must not wait for that thread).
  std::vector<std::pair<unit*, std::size_t>> slabs(bool wait = true) const
      WEFT_NO_THREAD_SAFETY_ANALYSIS;

  /// The size of the chunk headed by `head`.
  static std::size_t chunk_size(const work_unit* head) noexcept {
    return as_unit(head)->stack_size;
  }
  /// Makes `head` (followed by `count` - 1 descriptors) a chunk.
  static void make_chunk(work_unit* head, std::size_t count, work_unit* next_chunk) noexcept {
    as_unit(head)->stack_size = static_cast<std::uint32_t>(count);
    head->pool_prev = next_chunk;
  }

  /// A slab's record. Public, like slab_list(), for weft_debug_info (observe/dump.cpp), which
  /// tells a debugger reading a core file where the descriptors are.
  struct slab {
    void* memory;
    std::size_t bytes;
    std::size_t count;  // descriptors in it
  };
  /// The std::vector of slab records (its address does not change while the allocator lives).
  const void* slab_list() const noexcept WEFT_NO_THREAD_SAFETY_ANALYSIS { return &slabs_; }

 private:
  mutable mutex mutex_;
  std::vector<slab> slabs_ WEFT_GUARDED_BY(mutex_);
  work_unit* chunks_ WEFT_GUARDED_BY(mutex_) = nullptr;  // free chunks, linked through pool_prev
  std::size_t allocated_ WEFT_GUARDED_BY(mutex_) = 0;
};

/// A stream's private descriptor cache: pop and push are a few plain loads and stores.
///
/// Invariants: `open_` holds `open_count_` <= batch descriptors; `full_` is a list of
/// `full_count_` chunks of exactly `batch` descriptors, `full_last_` its last chunk
/// (full_count_ == 0 if and only if full_ == full_last_ == nullptr).
class unit_cache {
 public:
  unit_cache(unit_allocator& global, int numa_node) : global_(&global), node_(numa_node) {}
  ~unit_cache() { flush(); }
  unit_cache(const unit_cache&) = delete;
  unit_cache& operator=(const unit_cache&) = delete;

  work_unit* pop() {
    if (!open_) [[unlikely]]
      open_chunk();
    work_unit* u = open_;
    assert_invariant([this, u] { return u != nullptr && open_count_ > 0; },
                     "unit cache: the open chunk counts the descriptors it links");
    open_ = u->pool_next;
    --open_count_;
    assert_invariant([this] { return (open_ == nullptr) == (open_count_ == 0); },
                     "unit cache: the open chunk's count matches its list");
    return u;
  }
  void push(work_unit* u) noexcept {
    if (open_count_ == unit_allocator::batch) [[unlikely]]
      close_chunk();
    assert_invariant([this, u] { return u != nullptr && u != open_; },
                     "invariant 8: a descriptor is freed once");
    assert_invariant([u] { return u->pool_holder.load(std::memory_order_relaxed) == nullptr; },
                     "invariant 2: a descriptor is freed out of every pool");
    u->pool_next = open_;
    open_ = u;
    ++open_count_;
  }
  /// Returns every cached descriptor to the global allocator.
  void flush() noexcept;

 private:
  // Enough for a fan-out of 10^4 units to recycle without touching the global lock; above it the
  // full chunks go back in O(1).
  static constexpr std::size_t max_full_chunks = 64;
  void open_chunk();
  void close_chunk() noexcept;
  /// Moves the open list onto the full list as one chunk.
  void shelve_open() noexcept;
  /// Returns every full chunk to the allocator.
  void give_all() noexcept;

  unit_allocator* global_;
  int node_;
  work_unit* open_ = nullptr;
  std::size_t open_count_ = 0;
  work_unit* full_ = nullptr;
  work_unit* full_last_ = nullptr;
  std::size_t full_count_ = 0;
};

}  // namespace weft::detail
