// SPDX-License-Identifier: Apache-2.0
#include "memory/unit_cache.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <new>

#include "core/unit_extras.hpp"
#include "platform/topology.hpp"
#include "weft/error.hpp"
#include "weft/unit_handle.hpp"

namespace weft::detail {

namespace {

/// Below this many descriptors, slabs are `batch` descriptors (48 KiB): a program with few
/// units keeps a small footprint.
constexpr std::size_t huge_after = 16 * unit_allocator::batch;
/// Above it, slabs are one transparent huge page: a fan-out of 10^6 units walks 190 MB of
/// descriptors three times (create, run, join), and with 4 KiB pages it would take a TLB miss
/// every 21 descriptors on each pass.
constexpr std::size_t huge_slab_bytes = std::size_t{2} << 20;

/// `bytes` (a multiple of huge_slab_bytes) aligned to a huge page and advised to be backed by
/// huge pages (where the kernel does not allow it the mapping still works with small pages).
void* map_huge(std::size_t bytes, int numa_node) noexcept {
  const std::size_t span = bytes + huge_slab_bytes;
  void* raw = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const auto base = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t lo = (base + huge_slab_bytes - 1) & ~(huge_slab_bytes - 1);
  if (lo > base) munmap(raw, lo - base);
  if (base + span > lo + bytes)
    munmap(reinterpret_cast<void*>(lo + bytes), base + span - lo - bytes);
  void* memory = reinterpret_cast<void*>(lo);
  (void)madvise(memory, bytes, MADV_HUGEPAGE);
  if (numa_node >= 0) (void)topology::place_on_node(memory, bytes, numa_node);
  return memory;
}

/// True when [memory, memory + bytes) lies below 2^47, where a handle word can name it
/// (weft/unit_handle.hpp).
bool fits_handles(const void* memory, std::size_t bytes) noexcept {
  return reinterpret_cast<std::uintptr_t>(memory) + bytes <=
         (std::uintptr_t{1} << handle_address_bits);
}

/// Plain pages for a slab, below 2^47. Linux hands out higher addresses (5-level paging) only
/// to a mapping whose hint lies above, so this is a check: should a mapping land above all the
/// same, it is retried with a low hint, and failing that the runtime reports it.
void* map_low(std::size_t bytes) {
  void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) throw_resource("weft: cannot allocate work units");
  if (fits_handles(memory, bytes)) return memory;
  munmap(memory, bytes);
  void* const hint = reinterpret_cast<void*>(std::uintptr_t{1} << (handle_address_bits - 2));
  memory = mmap(hint, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) throw_resource("weft: cannot allocate work units");
  if (fits_handles(memory, bytes)) return memory;
  munmap(memory, bytes);
  throw_resource(
      "weft: the kernel placed work unit descriptors above 2^47, where handles cannot name "
      "them");
}

}  // namespace

unit_allocator::~unit_allocator() {
  for (const slab& s : slabs_) {
    auto* units = static_cast<unit*>(s.memory);
    for (std::size_t i = 0; i < s.count; ++i) units[i].~unit();
    munmap(s.memory, s.bytes);
  }
}

work_unit* unit_allocator::take(int numa_node) {
  lock_guard lock(mutex_);
  if (work_unit* head = chunks_) {
    chunks_ = head->pool_prev;
    return head;
  }
  // A new slab, placed on the stream's node so that its descriptors are local to their users.
  // Its record's room first: out of memory, no mapping is left unowned.
  if (slabs_.size() == slabs_.capacity()) {
    try {
      slabs_.reserve(std::max<std::size_t>(8, 2 * slabs_.capacity()));
    } catch (const std::bad_alloc&) {
      throw_resource("weft: cannot allocate work units: out of memory");
    }
  }
  const bool huge = allocated_ >= huge_after;
  std::size_t bytes = huge ? huge_slab_bytes : batch * sizeof(unit);
  void* memory = huge ? map_huge(bytes, numa_node) : nullptr;
  if (memory && !fits_handles(memory, bytes)) {
    // Out of a handle's reach (see map_low): give it back and take plain low pages instead.
    munmap(memory, bytes);
    memory = nullptr;
  }
  if (!memory) {
    bytes = batch * sizeof(unit);
    memory = map_low(bytes);
    if (numa_node >= 0) (void)topology::place_on_node(memory, bytes, numa_node);
  }
  const std::size_t count = bytes / sizeof(unit);
  assert_invariant(
      [memory, count] {
        return reinterpret_cast<std::uintptr_t>(memory) % alignof(unit) == 0 && count > 0;
      },
      "unit allocator: a slab holds whole descriptors at their alignment (handles rely on it)");
  slabs_.push_back({memory, bytes, count});
  // Carve the slab into chunks of at most `batch`: the first is returned, the others are free.
  auto* units = static_cast<unit*>(memory);
  work_unit* next_chunk = nullptr;
  for (std::size_t end = count; end > 0;) {
    const std::size_t first = end > batch ? end - batch : 0;
    for (std::size_t i = first; i < end; ++i) {
      ::new (&units[i]) unit{};
      units[i].pool_next = i + 1 < end ? &units[i + 1] : nullptr;
    }
    make_chunk(&units[first], end - first, next_chunk);
    next_chunk = &units[first];
    end = first;
  }
  allocated_ += count;
  chunks_ = units[0].pool_prev;  // the slab's other chunks (nothing else was free)
  return units;
}

void unit_allocator::give(work_unit* first, work_unit* last) noexcept {
  assert_invariant([first, last] { return first != nullptr && last != nullptr; },
                   "unit allocator: a chunk list is given back whole");
  lock_guard lock(mutex_);
  last->pool_prev = chunks_;
  chunks_ = first;
}

std::vector<std::pair<unit*, std::size_t>> unit_allocator::slabs(bool wait) const {
  std::unique_lock lock(mutex_, std::defer_lock);
  if (wait) {
    lock.lock();
  } else {
    (void)lock.try_lock();
  }
  std::vector<std::pair<unit*, std::size_t>> out;
  out.reserve(slabs_.size());
  for (const slab& s : slabs_) out.emplace_back(static_cast<unit*>(s.memory), s.count);
  return out;
}

std::size_t unit_allocator::allocated() const {
  lock_guard lock(mutex_);
  return allocated_;
}

void unit_cache::open_chunk() {
  if (full_) {
    assert_invariant([this] { return full_count_ > 0; },
                     "unit cache: the count of full chunks matches their list");
    assert_invariant([this] { return unit_allocator::chunk_size(full_) == unit_allocator::batch; },
                     "unit cache: a shelved chunk holds exactly `batch` descriptors");
    open_ = full_;
    full_ = full_->pool_prev;
    if (!full_) full_last_ = nullptr;
    --full_count_;
  } else {
    open_ = global_->take(node_);
  }
  open_count_ = unit_allocator::chunk_size(open_);
  assert_invariant([this] { return open_count_ > 0 && open_count_ <= unit_allocator::batch; },
                   "unit cache: a chunk holds 1 to `batch` descriptors");
}

void unit_cache::shelve_open() noexcept {
  assert_invariant([this] { return open_ != nullptr && open_count_ > 0; },
                   "unit cache: only a chunk that holds descriptors is shelved");
  unit_allocator::make_chunk(open_, open_count_, full_);
  if (!full_) full_last_ = open_;
  full_ = open_;
  ++full_count_;
  open_ = nullptr;
  open_count_ = 0;
}

void unit_cache::give_all() noexcept {
  assert_invariant([this] { return (full_ == nullptr) == (full_count_ == 0); },
                   "unit cache: the count of full chunks matches their list");
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
