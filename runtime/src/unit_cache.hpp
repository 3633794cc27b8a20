// Work-unit descriptors: slabs allocated node-locally, recycled through per-stream caches.
#pragma once

#include <cstddef>
#include <mutex>
#include <vector>

#include "weft/work_unit.hpp"

namespace weft::detail {

/// Bits of work_unit::flags.
enum unit_flags : std::uint8_t {
  unit_primary = 1u << 0,    ///< The primary ULT (the thread that called init): native stack.
  unit_forwarded = 1u << 1,  ///< In a stream's inbox because it is pinned to that stream.
};

/// Owns every descriptor slab of the runtime and a shared free list for streams whose cache ran
/// dry or overflowed. All members lock; streams reach it once per `batch` units at most.
class unit_allocator {
 public:
  static constexpr std::size_t batch = 256;

  unit_allocator() = default;
  ~unit_allocator();
  unit_allocator(const unit_allocator&) = delete;
  unit_allocator& operator=(const unit_allocator&) = delete;

  /// Takes up to `batch` descriptors (a new slab on `numa_node` if the free list is empty) and
  /// returns them as a list linked through pool_next; `count` receives how many.
  work_unit* take(int numa_node, std::size_t& count);
  /// Returns a list of `count` descriptors.
  void give(work_unit* head, work_unit* tail, std::size_t count) noexcept;
  /// Descriptors allocated in slabs so far (for tests and statistics).
  std::size_t allocated() const;

 private:
  struct slab {
    void* memory;
    std::size_t bytes;
    bool numa;
  };
  mutable std::mutex mutex_;
  std::vector<slab> slabs_;
  work_unit* free_ = nullptr;
  std::size_t free_count_ = 0;
  std::size_t allocated_ = 0;
};

/// A stream's private descriptor cache: pop and push are a few plain loads and stores.
class unit_cache {
 public:
  unit_cache(unit_allocator& global, int numa_node) : global_(&global), node_(numa_node) {}
  ~unit_cache() { flush(); }
  unit_cache(const unit_cache&) = delete;
  unit_cache& operator=(const unit_cache&) = delete;

  work_unit* pop() {
    if (!head_) refill();
    work_unit* u = head_;
    head_ = u->pool_next;
    if (!head_) tail_ = nullptr;
    --count_;
    return u;
  }
  void push(work_unit* u) noexcept {
    u->pool_next = head_;
    if (!head_) tail_ = u;
    head_ = u;
    if (++count_ > high_water) flush();
  }
  /// Returns every cached descriptor to the global allocator.
  void flush() noexcept;

 private:
  // Enough for a fan-out of 10^4 units to recycle without touching the global lock; above it the
  // whole list goes back in O(1) (we know its tail).
  static constexpr std::size_t high_water = 64 * unit_allocator::batch;
  void refill();

  unit_allocator* global_;
  int node_;
  work_unit* head_ = nullptr;
  work_unit* tail_ = nullptr;
  std::size_t count_ = 0;
};

}  // namespace weft::detail
