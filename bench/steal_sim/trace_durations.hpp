// SPDX-License-Identifier: Apache-2.0
// Unit run times from a weft trace (WEFT_TRACE, docs/tracing.md), for the steal simulator.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dag.hpp"

namespace weft::steal_sim {

/// Each unit's total run time in nanoseconds, summed over its run slices (the complete "X" events
/// of category "ult" or "tasklet", keyed by args.id), in order of first appearance. The trace's
/// creation flows name parents, but joins are not recorded, so only durations are taken: the
/// workload's shape comes from the simulator. Throws std::runtime_error naming the file when it
/// cannot be read, is not a Chrome trace (an object with "traceEvents", or an array), or holds
/// no unit run.
std::vector<sim_ns> read_trace_durations(const std::string& path);

/// A work time drawn, per unit index, from `durations` (non-empty): the same index and seed give
/// the same draw, whatever the order of the calls.
work_time sampled_work(std::vector<sim_ns> durations, std::uint64_t seed);

}  // namespace weft::steal_sim
