// SPDX-License-Identifier: Apache-2.0
// The steal simulator: W workers, each a deque (array + side lane) and a clock, run a dag under a
// policy_kind and a cost_model, one event at a time in simulated-time order. Single-threaded and
// deterministic: the same inputs and seed give the same result, bit for bit.
//
// What a worker does at an event, and what it costs (cost_model's fields):
//   running a unit: its next step; work (its time), spawn (spawn; the child goes on the own
//     array's bottom), join (join_done if the child ended, plus remote_join if it ended on another
//     worker; if the child is the array's newest,
//     pop it and run it at once; else block and switch away: run_switch);
//   a unit ends: run_switch; its joiner resumes here when its home deque is this worker's,
//     else goes into its home's side lane (handoff, and a wake under the policy's rule);
//   no unit: pop the own array (newest), then the own side lane (oldest), then the policy's
//     theft (probe per victim looked at, steal + steal_extra per further unit, migration at the
//     first run of a unit on a worker it was not last on); then the policy's idle step.
// Not modelled: memory bandwidth, NUMA, caches beyond the fixed miss costs named in cost_model,
// contention between thieves on one victim beyond the order of their events, the OS scheduler.
#pragma once

#include <cstdint>
#include <vector>

#include "dag.hpp"
#include "model.hpp"

namespace weft::steal_sim {

/// One simulated run's outcome. Counts are totals over the workers.
struct sim_result {
  sim_ns makespan = 0;             ///< when the last unit ended
  sim_ns work = 0;                 ///< the units' work steps, summed
  sim_ns local_cost = 0;           ///< spawn, pop, run_switch and join_done costs, summed
  std::int64_t thefts = 0;         ///< successful steal operations
  std::int64_t stolen = 0;         ///< units they took
  std::int64_t probes = 0;         ///< looks at a peer's deque
  std::int64_t failed_probes = 0;  ///< looks that took nothing (empty, or declined by the grace)
  std::int64_t migrations = 0;     ///< runs of a unit on a worker it was not last on
  std::int64_t wakes = 0;          ///< wake calls
  std::int64_t parks = 0;          ///< parks on the parked list
  std::int64_t dozes = 0;          ///< randws: timed dozes beside declined units
  sim_ns idle_spin = 0;            ///< idle rounds' pauses and fruitless probes, summed
  /// Every theft from a victim's array: how many units the array held, and how many it took.
  struct theft {
    std::int64_t queued;
    std::int64_t taken;
  };
  std::vector<theft> theft_log;
  /// Per unit: how many times it ended (1 each in a correct run).
  std::vector<std::uint8_t> ended;
};

/// Runs `d` on `workers` workers (1 to 1024). Throws std::invalid_argument on bad input (see
/// dag::check()), std::runtime_error if the run passes 1000 simulated seconds (a livelock of
/// the model). Costs the host O(events), single-threaded.
sim_result simulate(const dag& d, policy_kind policy, const cost_model& costs, int workers,
                    std::uint64_t seed);

}  // namespace weft::steal_sim
