// SPDX-License-Identifier: Apache-2.0
// The steal simulator's inputs besides the workload: the stealing policy and the cost model.
//
// Every cost is an integer number of simulated nanoseconds, so that a run is exact and the same
// on every machine. The defaults are calibrated on the 2-core test VM's one-stream figures
// (docs/schedulers.md, "How the policy scales: a simulation"); each can be set from the command
// line (main.cpp).
#pragma once

#include <cstdint>
#include <string_view>

namespace weft::steal_sim {

/// Simulated time and durations, in nanoseconds.
using sim_ns = std::int64_t;

/// How an idle worker looks for units and waits.
enum class policy_kind {
  /// weft's randws with the runtime's idle loop: steal grace seen twice on the victim's oldest
  /// push stamp, backlog rule, steal half (<= steal_batch), side lane at once; backoff between
  /// looks, one spinner marks the pools (pushes wake nobody while one spins), the last spinner to
  /// stop wakes a parked worker, a park beside declined units dozes.
  randws,
  /// Take the victim's oldest unit at once, one per theft; spin without backoff, then park; every
  /// push wakes a parked worker.
  naive_one,
  /// As naive_one, but take up to half of the victim's units (<= steal_batch).
  naive_half,
};

/// The policy's name in the report: "randws", "naive-one", "naive-half".
std::string_view policy_name(policy_kind p) noexcept;

/// What the simulated machine's operations cost. Work times of the units are the workload's.
struct cost_model {
  sim_ns spawn = 20;       ///< create a unit and push it on the own deque
  sim_ns pop = 5;          ///< take a unit from the own deque (either lane)
  sim_ns run_switch = 12;  ///< switch into a unit (first run or resumption) or out of an ended one
  sim_ns join_done = 3;    ///< join a unit that has ended already
  sim_ns probe = 40;       ///< one look at a peer's deque: a remote cache-line read, at W = 2
  /// How the probe cost grows: probe * (1 + probe_growth_pct/100 * log2(W / 2)).
  std::int64_t probe_growth_pct = 25;
  sim_ns probed_owner_miss = 80;  ///< the owner's next push/pop after a peer's look at its deque
  sim_ns steal = 90;              ///< a successful theft of one unit (a CAS on the victim's top)
  sim_ns steal_extra = 40;        ///< each further unit of a batch theft
  sim_ns migration = 160;         ///< a unit's first run on a worker it was not last on (cold)
  sim_ns handoff = 150;           ///< a joiner woken by a child that ended on another worker
  sim_ns remote_join = 60;  ///< a join of a child that ended on another worker (its state's line)
  sim_ns pause = 18;        ///< one spin pause (x86 pause instruction)
  sim_ns clock_read = 25;   ///< steady_clock::now(), in the grace checks
  sim_ns wake_call = 1500;  ///< the waker's side of a futex wake
  sim_ns wake_latency = 6000;       ///< from the wake call until the woken worker runs
  sim_ns park = 1000;               ///< the parking worker's side of a park
  sim_ns park_limit = 100'000'000;  ///< a parked worker looks again after this (weft: 100 ms)
  sim_ns steal_grace = 30'000;      ///< randws: a victim's oldest unit waits this long
  sim_ns worth_moving = 1000;       ///< randws backlog rule: per stolen unit
  int steal_batch = 32;             ///< most units one theft takes (naive_half, randws)
  int idle_spin = 256;              ///< idle rounds before a park
  int max_backoff_shift = 10;       ///< randws: a round waits at most 2^shift pauses
  sim_ns min_doze = 8000;           ///< randws: the first doze beside declined units
  sim_ns max_doze = 128'000;        ///< randws: the longest doze

  /// The probe cost with `workers` workers.
  sim_ns probe_cost(int workers) const noexcept;
};

}  // namespace weft::steal_sim
