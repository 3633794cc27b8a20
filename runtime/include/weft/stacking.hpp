// SPDX-License-Identifier: Apache-2.0
// Stacking: a scheduler that runs as a work unit in another scheduler's pool.
#pragma once

#include <memory>

#include "weft/scheduler.hpp"
#include "weft/ult.hpp"

namespace weft {

/// Pushes `child` into `parent` as a ULT (Argobots' ABT_pool_add_sched). Whenever a scheduler
/// pops that ULT, `child` runs its loop over its own pools on the popping stream until run()
/// returns: when it is idle, when it used its stack budget, when the stream must stop, or when it
/// is finished. Then the ULT goes back to `parent` and waits for its next turn, until `child` is
/// finished: by finish() once its pools are empty, by stop() at once (units left in its pools go
/// to the stream's main scheduler), or when the stream is being joined and its pools are empty.
/// Join the returned handle to wait for the end; exceptions from child->run() are rethrown there.
/// Nesting is unlimited: `child` may itself push schedulers into its own pools.
/// While it runs, the ULT is pinned to its stream (it holds that stream's scheduler state), so
/// single-consumer pools of `child` are consumed by one stream at a time.
/// Throws errc::invalid_state if `child` is null, installed on a stream, or stacked already.
ult push_scheduler(pool& parent, std::shared_ptr<scheduler> child);

}  // namespace weft
