// SPDX-License-Identifier: Apache-2.0
#include "weft/schedulers/prio_scheduler.hpp"

#include <algorithm>

#include "weft/schedulers/fifo_pool.hpp"

namespace weft {

namespace {

std::pair<std::vector<std::shared_ptr<pool>>, std::vector<int>> sort_entries(
    std::vector<prio_pool_entry> entries) {
  std::stable_sort(
      entries.begin(), entries.end(),
      [](const prio_pool_entry& a, const prio_pool_entry& b) { return a.priority > b.priority; });
  std::pair<std::vector<std::shared_ptr<pool>>, std::vector<int>> out;
  for (auto& e : entries) {
    out.first.push_back(std::move(e.target));
    out.second.push_back(e.priority);
  }
  return out;
}

}  // namespace

prio_scheduler::prio_scheduler(std::vector<prio_pool_entry> pools, const idle_policy& idle)
    : prio_scheduler(sort_entries(std::move(pools)), idle) {}

prio_scheduler::prio_scheduler(
    std::pair<std::vector<std::shared_ptr<pool>>, std::vector<int>> sorted, const idle_policy& idle)
    : scheduler(std::move(sorted.first)), priorities_(std::move(sorted.second)) {
  set_idle_policy(idle);
  regroup();
}

std::unique_ptr<prio_scheduler> prio_scheduler::ordered(std::vector<std::shared_ptr<pool>> pools,
                                                        const idle_policy& idle) {
  std::vector<prio_pool_entry> entries;
  int prio = static_cast<int>(pools.size());
  for (auto& p : pools) entries.push_back({std::move(p), prio--});
  return std::make_unique<prio_scheduler>(std::move(entries), idle);
}

std::unique_ptr<prio_scheduler> prio_scheduler::with_new_pools(unsigned levels, access_mode mode) {
  std::vector<std::shared_ptr<pool>> pools;
  for (unsigned i = 0; i < std::max(levels, 1u); ++i) pools.push_back(make_fifo_pool(mode));
  return ordered(std::move(pools));
}

void prio_scheduler::regroup() {
  const auto& ps = pools();
  groups_.clear();
  std::size_t i = 0;
  while (i < ps.size()) {
    std::size_t j = i + 1;
    while (j < ps.size() && priority_of(j) == priority_of(i)) ++j;
    groups_.push_back({i, j, 0});
    i = j;
  }
}

void prio_scheduler::on_start() {
  regroup();
}

void prio_scheduler::on_pools_changed() {
  regroup();
}

work_unit* prio_scheduler::pick_next() noexcept {
  const auto& ps = pools();
  for (group& g : groups_) {
    const std::size_t n = g.end - g.begin;
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t i = (g.next + k) % n;
      if (work_unit* u = ps[g.begin + i]->pop()) {
        g.next = (i + 1) % n;
        return u;
      }
    }
  }
  return nullptr;
}

}  // namespace weft
