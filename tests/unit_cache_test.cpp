// SPDX-License-Identifier: Apache-2.0
// Descriptor slabs: small ones first, then 2 MiB ones aligned to a huge page, each carved into
// chunks of at most `batch` descriptors that the allocator hands out once and takes back whole.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "memory/unit_cache.hpp"

namespace {

using weft::work_unit;
using weft::detail::unit_allocator;

constexpr std::size_t huge_page = std::size_t{2} << 20;

/// Takes chunks until at least `n` descriptors were handed out and none is left over from a slab.
std::vector<work_unit*> take_all(unit_allocator& a, std::size_t n, std::set<work_unit*>& seen) {
  std::vector<work_unit*> heads;
  while (seen.size() < n || seen.size() < a.allocated()) {
    work_unit* head = a.take(-1);
    const std::size_t size = unit_allocator::chunk_size(head);
    EXPECT_GE(size, 1u);
    EXPECT_LE(size, unit_allocator::batch);
    std::size_t walked = 0;
    for (work_unit* u = head; u; u = u->pool_next) {
      EXPECT_TRUE(seen.insert(u).second) << "a descriptor was handed out twice";
      ++walked;
    }
    EXPECT_EQ(walked, size);
    heads.push_back(head);
  }
  return heads;
}

TEST(UnitAllocatorTest, EveryDescriptorIsHandedOutOnceAndLargeSlabsFillHugePages) {
  unit_allocator a;
  std::set<work_unit*> seen;
  const std::vector<work_unit*> heads = take_all(a, 100'000, seen);
  EXPECT_EQ(seen.size(), a.allocated());
  // Past the first few thousand, descriptors come in slabs of one whole 2 MiB page each.
  std::map<std::uintptr_t, std::size_t> per_page;
  for (work_unit* u : seen) ++per_page[reinterpret_cast<std::uintptr_t>(u) / huge_page];
  const std::size_t per_full_page = huge_page / sizeof(weft::detail::unit);
  std::size_t in_full_pages = 0;
  for (const auto& [page, count] : per_page) {
    EXPECT_LE(count, per_full_page);
    if (count == per_full_page) in_full_pages += count;
  }
  EXPECT_GE(in_full_pages, 90'000u);
}

TEST(UnitAllocatorTest, ChunksGivenBackAreReusedWithoutNewSlabs) {
  unit_allocator a;
  std::set<work_unit*> seen;
  std::vector<work_unit*> heads = take_all(a, 20'000, seen);
  const std::size_t allocated = a.allocated();
  for (std::size_t i = 0; i < heads.size(); ++i)
    heads[i]->pool_prev = i + 1 < heads.size() ? heads[i + 1] : nullptr;
  a.give(heads.front(), heads.back());
  std::set<work_unit*> again;
  take_all(a, allocated, again);
  EXPECT_EQ(a.allocated(), allocated);
  EXPECT_EQ(again, seen);
}

}  // namespace
