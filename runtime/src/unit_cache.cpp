#include "unit_cache.hpp"

#include <numa.h>
#include <sys/mman.h>

#include <new>

#include "weft/error.hpp"

namespace weft::detail {

unit_allocator::~unit_allocator() {
  for (const slab& s : slabs_) {
    auto* units = static_cast<work_unit*>(s.memory);
    for (std::size_t i = 0; i < batch; ++i) units[i].~work_unit();
    if (s.numa) {
      numa_free(s.memory, s.bytes);
    } else {
      munmap(s.memory, s.bytes);
    }
  }
}

work_unit* unit_allocator::take(int numa_node, std::size_t& count) {
  std::lock_guard lock(mutex_);
  if (free_) {
    work_unit* head = free_;
    work_unit* tail = head;
    count = 1;
    while (count < batch && tail->pool_next) {
      tail = tail->pool_next;
      ++count;
    }
    free_ = tail->pool_next;
    free_count_ -= count;
    tail->pool_next = nullptr;
    return head;
  }
  // A new slab, placed on the stream's node so that its descriptors are local to their users.
  const std::size_t bytes = batch * sizeof(work_unit);
  void* memory = nullptr;
  bool numa = false;
  if (numa_node >= 0 && numa_available() >= 0) {
    memory = numa_alloc_onnode(bytes, numa_node);
    numa = memory != nullptr;
  }
  if (!memory) {
    memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) throw error(errc::resource, "weft: cannot allocate work units");
  }
  slabs_.push_back({memory, bytes, numa});
  auto* units = static_cast<work_unit*>(memory);
  for (std::size_t i = 0; i < batch; ++i) {
    ::new (&units[i]) work_unit{};
    units[i].pool_next = i + 1 < batch ? &units[i + 1] : nullptr;
  }
  allocated_ += batch;
  count = batch;
  return units;
}

void unit_allocator::give(work_unit* head, work_unit* tail, std::size_t count) noexcept {
  std::lock_guard lock(mutex_);
  tail->pool_next = free_;
  free_ = head;
  free_count_ += count;
}

std::size_t unit_allocator::allocated() const {
  std::lock_guard lock(mutex_);
  return allocated_;
}

void unit_cache::refill() {
  std::size_t n = 0;
  head_ = global_->take(node_, n);
  tail_ = head_;
  while (tail_->pool_next) tail_ = tail_->pool_next;
  count_ = n;
}

void unit_cache::flush() noexcept {
  if (!head_) return;
  global_->give(head_, tail_, count_);
  head_ = tail_ = nullptr;
  count_ = 0;
}

}  // namespace weft::detail
