// SPDX-License-Identifier: Apache-2.0
#include "weft/schedulers/basic_scheduler.hpp"

#include "weft/schedulers/fifo_pool.hpp"

namespace weft {

basic_scheduler::basic_scheduler(std::vector<std::shared_ptr<pool>> pools, const idle_policy& idle)
    : scheduler(std::move(pools)) {
  set_idle_policy(idle);
  // run() below is exactly "first non-empty pool in order": a yield may skip it.
  set_direct_yield(true);
}

std::unique_ptr<basic_scheduler> basic_scheduler::with_new_pool(access_mode mode) {
  return std::make_unique<basic_scheduler>(std::vector{make_fifo_pool(mode)});
}

basic_wait_scheduler::basic_wait_scheduler(std::vector<std::shared_ptr<pool>> pools,
                                           const idle_policy& idle)
    : basic_scheduler(std::move(pools), idle) {}

std::unique_ptr<basic_wait_scheduler> basic_wait_scheduler::with_new_pool(access_mode mode) {
  return std::make_unique<basic_wait_scheduler>(std::vector{make_fifo_pool(mode)});
}

void basic_scheduler::run() {
  const unsigned freq = event_freq();
  unsigned pops = 0;
  unsigned idle = 0;
  for (;;) {
    work_unit* u = nullptr;
    for (const auto& p : pools()) {
      if ((u = p->pop())) break;
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
