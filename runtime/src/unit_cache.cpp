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

work_unit* unit_allocator::take(int numa_node) {
  std::lock_guard lock(mutex_);
  if (work_unit* head = chunks_) {
    chunks_ = head->pool_prev;
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
  make_chunk(units, batch, nullptr);
  allocated_ += batch;
  return units;
}

void unit_allocator::give(work_unit* first, work_unit* last) noexcept {
  std::lock_guard lock(mutex_);
  last->pool_prev = chunks_;
  chunks_ = first;
}

std::size_t unit_allocator::allocated() const {
  std::lock_guard lock(mutex_);
  return allocated_;
}

void unit_cache::open_chunk() {
  if (full_) {
    open_ = full_;
    full_ = full_->pool_prev;
    if (!full_) full_last_ = nullptr;
    --full_count_;
  } else {
    open_ = global_->take(node_);
  }
  open_count_ = unit_allocator::chunk_size(open_);
}

void unit_cache::shelve_open() noexcept {
  unit_allocator::make_chunk(open_, open_count_, full_);
  if (!full_) full_last_ = open_;
  full_ = open_;
  ++full_count_;
  open_ = nullptr;
  open_count_ = 0;
}

void unit_cache::give_all() noexcept {
  if (full_) global_->give(full_, full_last_);
  full_ = full_last_ = nullptr;
  full_count_ = 0;
}

void unit_cache::close_chunk() noexcept {
  shelve_open();
  if (full_count_ > max_full_chunks) give_all();
}

void unit_cache::flush() noexcept {
  if (open_) shelve_open();  // possibly short of `batch`: it leaves the cache at once
  give_all();
}

}  // namespace weft::detail
