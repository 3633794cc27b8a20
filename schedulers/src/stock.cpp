// SPDX-License-Identifier: Apache-2.0
// The stock schedulers the runtime registers by name, and its pool of last resort
// (weft/ext/defaults.hpp).
#include "weft/ext/defaults.hpp"
#include "weft/schedulers/basic_scheduler.hpp"
#include "weft/schedulers/fifo_pool.hpp"
#include "weft/schedulers/prio_scheduler.hpp"
#include "weft/schedulers/randws_scheduler.hpp"

namespace weft::ext {

std::vector<named_scheduler> stock_schedulers() {
  // Each stream gets its own scheduler over its own pools (see docs/schedulers.md).
  return {
      {"basic", [] { return basic_scheduler::with_new_pool(access_mode::mpsc); }},
      {"basic_wait", [] { return basic_wait_scheduler::with_new_pool(access_mode::mpsc); }},
      {"prio", [] { return prio_scheduler::with_new_pools(3, access_mode::mpsc); }},
      // All of them steal from each other: one group per process (randws_group::shared()).
      {"randws", [] { return randws_scheduler::in_shared_group(); }},
  };
}

std::shared_ptr<pool> make_fallback_pool() {
  return make_fifo_pool(access_mode::mpsc);
}

}  // namespace weft::ext
