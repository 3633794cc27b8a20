// The default scheduler: FIFO over its pools, first pool first.
#pragma once

#include <memory>
#include <vector>

#include "weft/scheduler.hpp"

namespace weft {

/// Pops from its pools in order (the first non-empty pool wins) and runs what it finds. When all
/// pools are empty it follows its idle policy: by default it spins for config::idle_spin rounds,
/// then gives its core away with sched_yield() between polls and never sleeps (Argobots' BASIC);
/// with idle_policy{.park = true} it parks instead.
class basic_scheduler final : public scheduler {
 public:
  explicit basic_scheduler(std::vector<std::shared_ptr<pool>> pools,
                           const idle_policy& idle = {.spin = {}, .park = false});
  /// A basic scheduler over one fresh FIFO pool of access mode `mode`.
  static std::unique_ptr<basic_scheduler> with_new_pool(access_mode mode = access_mode::mpsc);
  void run() override;
};

}  // namespace weft
