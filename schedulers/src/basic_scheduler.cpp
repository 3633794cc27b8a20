// SPDX-License-Identifier: Apache-2.0
#include "weft/schedulers/basic_scheduler.hpp"

#include "weft/schedulers/fifo_pool.hpp"

namespace weft {

basic_scheduler::basic_scheduler(std::vector<std::shared_ptr<pool>> pools, const idle_policy& idle)
    : scheduler(std::move(pools)) {
  set_idle_policy(idle);
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

work_unit* basic_scheduler::pick_after_yield(work_unit* self, pool& home) noexcept {
  // The first pool is popped first: the requeued yielder is found there at the latest.
  if (pools().front().get() == &home) [[likely]]
    return push_pop_yielder(home, self);
  return scheduler::pick_after_yield(self, home);
}

}  // namespace weft
