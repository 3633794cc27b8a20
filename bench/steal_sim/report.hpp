// SPDX-License-Identifier: Apache-2.0
// The steal simulator's experiment: every (workload, policy, workers) of a spec, as one JSON
// document, and its human table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dag.hpp"
#include "model.hpp"

namespace weft::steal_sim {

/// The workloads' sizes and work times (ns). Defaults: empty units (the create/join benchmarks'),
/// sizes as in those benchmarks where the simulation stays quick.
struct workload_params {
  int fib_n = 26;
  sim_ns fib_leaf = 5;  ///< fib's base case: a comparison and an addition
  std::int64_t chain = 10'000;
  std::int64_t fan_out = 10'000;
  std::int64_t phase_steps = 10'000;
  std::int64_t phase_width = 8;
  std::int64_t per_worker_width = 1000;
  int uts_root = 2000;
  int uts_branching = 2;
  double uts_probability = 0.45;
  sim_ns uts_work = 300;  ///< a UTS node's work (a hash, in UTS proper)
  sim_ns unit_work = 0;   ///< the other workloads' units
  /// Non-empty: every unit's work is drawn from these instead (trace_durations.hpp).
  std::vector<sim_ns> trace;
};

/// The workload names run_matrix() knows, in report order.
const std::vector<std::string>& workload_names();

struct matrix_spec {
  std::vector<std::string> workloads = workload_names();
  std::vector<policy_kind> policies = {policy_kind::randws, policy_kind::naive_one,
                                       policy_kind::naive_half};
  std::vector<int> workers = {1, 2, 4, 8, 16, 32, 64};
  cost_model costs;
  workload_params params;
  std::uint64_t seed = 1;
};

/// The workload `name` for `workers` workers (the per-worker fan-out depends on it). Throws
/// std::invalid_argument for an unknown name.
dag make_workload(const std::string& name, const workload_params& p, int workers,
                  std::uint64_t seed);

/// Simulates every combination and returns {"seed", "costs", "params", "rows": [...]}, a row per
/// (workload, policy, workers) in spec order, with makespan_ns, speedup (over one worker, same
/// policy, same DAG), efficiency, time_ratio (makespan over one worker's), thefts, stolen,
/// probes, failed_probes, probes_per_unit, migrations, wakes, parks, dozes, idle_spin_ns. The
/// one-worker baseline is simulated whether or not spec.workers lists 1. Throws std::runtime_error
/// if a run breaks an invariant (a unit not ending exactly once, a theft over half).
nlohmann::json run_matrix(const matrix_spec& spec);

/// The rows as an aligned text table.
std::string format_table(const nlohmann::json& report);

}  // namespace weft::steal_sim
