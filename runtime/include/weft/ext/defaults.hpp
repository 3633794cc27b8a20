// SPDX-License-Identifier: Apache-2.0
// What the runtime takes from the scheduler library it is linked with: the schedulers selectable
// by name from the start, and the pool of last resort. schedulers/ defines these, so the runtime
// names no stock pool or scheduler itself.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "weft/pool.hpp"
#include "weft/scheduler.hpp"

namespace weft::ext {

/// A scheduler the runtime registers under `name` before the program registers any.
struct named_scheduler {
  std::string_view name;      ///< the name config::scheduler and WEFT_SCHED select it by
  scheduler_factory factory;  ///< builds one for a new stream
};

/// The stock schedulers (basic, basic_wait, prio, randws), registered by the runtime when its
/// registry is first used (register_scheduler may replace them).
std::vector<named_scheduler> stock_schedulers();

/// The pool the runtime gives a stream whose scheduler was left without any pool (the stock
/// multi-producer, single-consumer FIFO pool).
std::shared_ptr<pool> make_fallback_pool();

}  // namespace weft::ext
