// SPDX-License-Identifier: Apache-2.0
// Strict priority over pools, round robin among pools of equal priority.
#pragma once

#include <climits>
#include <memory>
#include <utility>
#include <vector>

#include "weft/scheduler.hpp"

namespace weft {

/// A pool and its priority for prio_scheduler (higher runs first).
struct prio_pool_entry {
  std::shared_ptr<weft::pool> target;
  int priority = 0;
};

/// Strict priority: every pop scans the pools from the highest priority down, so a unit in a
/// higher-priority pool always runs before any unit in a lower one that was ready at the same
/// time (with a pool per priority, a lower pool is popped only after every higher pool was found
/// empty in the same scan). Pools of equal priority are served round robin, one unit each in
/// turn, so none of them starves the others. pools() is sorted by decreasing priority (stable),
/// so the main pool (pools()[0], where create() without a pool puts units) is a highest-priority
/// one. Pools appended later (adopted after a replacement or from stopped streams) rank below
/// every original pool. Idle policy as basic (default: spin, then sched_yield; park with
/// idle_policy{.park = true}).
class prio_scheduler final : public scheduler {
 public:
  explicit prio_scheduler(std::vector<prio_pool_entry> pools,
                          const idle_policy& idle = {.spin = {}, .park = false});
  /// Over `pools` in decreasing priority: the first is the highest.
  static std::unique_ptr<prio_scheduler> ordered(std::vector<std::shared_ptr<pool>> pools,
                                                 const idle_policy& idle = {.spin = {},
                                                                            .park = false});
  /// `levels` fresh FIFO pools of mode `mode`, pools()[0] the highest priority (the registry's
  /// "prio": three mpsc pools).
  static std::unique_ptr<prio_scheduler> with_new_pools(unsigned levels = 3,
                                                        access_mode mode = access_mode::mpsc);

  /// The first unit of the highest non-empty priority, round robin among equal ones.
  work_unit* pick_next() noexcept override;
  /// Groups the pools by priority.
  void on_start() override;
  /// Groups the pools again (appended pools rank lowest).
  void on_pools_changed() override;
  /// The priority of pools()[i] (INT_MIN for pools appended while running).
  int priority_of(std::size_t i) const noexcept {
    return i < priorities_.size() ? priorities_[i] : INT_MIN;
  }

 private:
  struct group {
    std::size_t begin, end, next;
  };
  prio_scheduler(std::pair<std::vector<std::shared_ptr<pool>>, std::vector<int>> sorted,
                 const idle_policy& idle);
  void regroup();

  std::vector<int> priorities_;  // of the original pools, decreasing
  std::vector<group> groups_;    // runs of equal priority, over the current pools()
};

}  // namespace weft
