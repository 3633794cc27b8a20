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
  grouped_ = ps.size();
}

void prio_scheduler::run() {
  const unsigned freq = event_freq();
  unsigned pops = 0;
  unsigned idle = 0;
  for (;;) {
    const auto& ps = pools();
    if (ps.size() != grouped_) regroup();
    work_unit* u = nullptr;
    for (group& g : groups_) {
      const std::size_t n = g.end - g.begin;
      for (std::size_t k = 0; k < n; ++k) {
        const std::size_t i = (g.next + k) % n;
        if ((u = ps[g.begin + i]->pop())) {
          g.next = (i + 1) % n;
          break;
        }
      }
      if (u) break;
    }
    if (u) {
      run_unit(u);
      idle = 0;
      // Stacked: hand control back to the parent as soon as the budget is spent.
      if (stacked() && has_to_stop()) return;
      if (++pops < freq) continue;
      pops = 0;
      if (check_events()) return;
      continue;
    }
    pops = 0;
    if (check_events()) return;
    if (wait_for_work(idle)) return;
  }
}

}  // namespace weft
