// SPDX-License-Identifier: Apache-2.0
// The default scheduler: FIFO over its pools, first pool first.
#pragma once

#include <memory>
#include <vector>

#include "weft/scheduler.hpp"

namespace weft {

/// Pops from its pools in order (the first non-empty pool wins): the default pick_next(). A
/// yielding ULT whose home is the first pool requeues and pops in one pool call. When all
/// pools are empty it follows its idle policy: by default it spins for config::idle_spin rounds,
/// then gives its core away with sched_yield() between polls and never sleeps (Argobots' BASIC);
/// with idle_policy{.park = true} it parks instead (that is basic_wait_scheduler).
class basic_scheduler : public scheduler {
 public:
  explicit basic_scheduler(std::vector<std::shared_ptr<pool>> pools,
                           const idle_policy& idle = {.spin = {}, .park = false});
  /// A basic scheduler over one fresh FIFO pool of access mode `mode`.
  static std::unique_ptr<basic_scheduler> with_new_pool(access_mode mode = access_mode::mpsc);
  /// push_pop_yielder() when `home` is the first pool (which pick_next() pops first), else the
  /// default.
  work_unit* pick_after_yield(work_unit* self, pool& home) noexcept override;
};

/// basic with a sleeping idle loop (Argobots' BASIC_WAIT; the registry's "basic_wait"): after
/// idle().spin empty rounds (default config::idle_spin) the stream parks on a futex and costs no
/// CPU until a unit is pushed into one of its pools, a unit is forwarded to it, or a request (join,
/// stop, replacement) arrives; the push wakes it at once. A parked stream also wakes every
/// config::park_limit_ms (100 ms by default) as a safety net.
class basic_wait_scheduler final : public basic_scheduler {
 public:
  explicit basic_wait_scheduler(std::vector<std::shared_ptr<pool>> pools,
                                const idle_policy& idle = {.spin = {}, .park = true});
  /// A basic_wait scheduler over one fresh FIFO pool of access mode `mode`.
  static std::unique_ptr<basic_wait_scheduler> with_new_pool(access_mode mode = access_mode::mpsc);
};

}  // namespace weft
