// SPDX-License-Identifier: Apache-2.0
// The steal simulator's workloads: a DAG of units, each a program of steps (compute for a while,
// spawn a child, join a child), and the units that exist when the run starts.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "model.hpp"

namespace weft::steal_sim {

/// One step of a unit's program.
struct step {
  enum class op : std::uint8_t { work, spawn, join };
  op what;
  /// work: nanoseconds; spawn, join: the child's index in dag::units.
  std::int64_t arg;
};

/// A unit: what it does, in order. A unit that ends has joined every child it spawned (the
/// generators below guarantee it; dag::check() verifies it).
struct unit {
  std::vector<step> steps;
};

/// A workload. Roots are ready at time 0 on the worker `root_worker[i] % W` names.
struct dag {
  std::string name;
  std::vector<unit> units;
  std::vector<std::int64_t> roots;
  std::vector<int> root_worker;

  /// Throws std::invalid_argument unless every non-root unit is spawned exactly once and joined
  /// exactly once by its spawner, after the spawn, and no root is spawned.
  void check() const;
  /// The sum of every unit's work steps.
  sim_ns total_work() const noexcept;
};

/// The work time of the unit with a given index; the generators call it once per unit, in no
/// particular order, so it must depend on the index alone.
using work_time = std::function<sim_ns(std::int64_t unit_index)>;

/// fib(n) as ULTs: a unit per call with n >= 2 spawns fib(n-1), computes fib(n-2) inline (which
/// spawns fib(n-3), ...), then joins what it spawned, newest first. A call with n < 2 computes
/// for `leaf` (the inline calls' leaves included).
dag make_fib(int n, const work_time& leaf);
/// A chain of `length` units: each computes, creates the next and joins it at once.
dag make_chain(std::int64_t length, const work_time& body);
/// One unit creates `width` units, then joins them in creation order.
dag make_fan_out(std::int64_t width, const work_time& body);
/// One unit runs `steps` phases: each creates `width` units and joins them all.
dag make_phases(std::int64_t steps, std::int64_t width, const work_time& body);
/// `workers` roots, root i on worker i, each its own fan-out of `width` units.
dag make_per_worker_fan_out(int workers, std::int64_t width, const work_time& body);
/// A UTS-like binomial tree: the root has `root_children` children; every other node has
/// `branching` children with probability `probability` and none otherwise (pseudo-random from
/// `seed`); every node computes, spawns its children, then joins them. Throws
/// std::invalid_argument when branching * probability >= 1 (an infinite expected size) or the
/// tree would pass `max_units`.
dag make_uts(int root_children, int branching, double probability, std::uint64_t seed,
             std::int64_t max_units, const work_time& body);

/// A fixed work time.
work_time constant_work(sim_ns ns);

}  // namespace weft::steal_sim
