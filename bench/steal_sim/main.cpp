// SPDX-License-Identifier: Apache-2.0
// weft_steal_sim: simulates weft's work-stealing policy and two naive ones over 1..64 workers
// and prints the JSON report (report.hpp) on stdout; --table adds a human table on stderr.
// docs/schedulers.md, "How the policy scales: a simulation", describes the model.
#include <iostream>
#include <map>
#include <stdexcept>

#include <CLI/CLI.hpp>

#include "report.hpp"
#include "trace_durations.hpp"

using namespace weft::steal_sim;

int main(int argc, char** argv) {
  CLI::App app{"weft_steal_sim: a discrete-event simulation of work stealing over W workers"};
  matrix_spec spec;
  cost_model& c = spec.costs;
  workload_params& p = spec.params;
  std::string trace;
  bool table = false;
  std::vector<std::string> policies;

  app.add_option("--workloads", spec.workloads, "workloads to run")
      ->check(CLI::IsMember(workload_names()));
  app.add_option("--policies", policies, "randws, naive-one, naive-half (default: all)")
      ->check(CLI::IsMember({"randws", "naive-one", "naive-half"}));
  app.add_option("--workers", spec.workers, "worker counts")->check(CLI::Range(1, 1024));
  app.add_option("--seed", spec.seed, "seed of every random choice");
  app.add_option("--trace", trace,
                 "weft trace (WEFT_TRACE): unit work times drawn from its run durations")
      ->check(CLI::ExistingFile);
  app.add_flag("--table", table, "also print a table on stderr");

  app.add_option("--fib-n", p.fib_n, "fib(n)")->check(CLI::Range(0, 40));
  app.add_option("--fib-leaf-ns", p.fib_leaf, "fib's base case work")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--chain", p.chain, "chain length")->check(CLI::PositiveNumber);
  app.add_option("--fan-out", p.fan_out, "fan-out width")->check(CLI::NonNegativeNumber);
  app.add_option("--phase-steps", p.phase_steps, "phases")->check(CLI::NonNegativeNumber);
  app.add_option("--phase-width", p.phase_width, "units per phase")->check(CLI::NonNegativeNumber);
  app.add_option("--per-worker-width", p.per_worker_width, "per-worker fan-out width")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--uts-root", p.uts_root, "UTS root's children")->check(CLI::NonNegativeNumber);
  app.add_option("--uts-branching", p.uts_branching, "UTS node's children, when it has any")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--uts-probability", p.uts_probability, "UTS: chance a node has children")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--uts-work-ns", p.uts_work, "UTS node's work")->check(CLI::NonNegativeNumber);
  app.add_option("--unit-work-ns", p.unit_work, "work of the other workloads' units")
      ->check(CLI::NonNegativeNumber);

  const std::map<std::string, std::pair<sim_ns*, const char*>> costs{
      {"--spawn-ns", {&c.spawn, "create a unit and push it"}},
      {"--pop-ns", {&c.pop, "take a unit from the own deque"}},
      {"--switch-ns", {&c.run_switch, "switch into or out of a unit"}},
      {"--join-done-ns", {&c.join_done, "join an ended unit"}},
      {"--probe-ns", {&c.probe, "look at a peer's deque, at W = 2"}},
      {"--probed-owner-miss-ns", {&c.probed_owner_miss, "owner's miss after a peer's look"}},
      {"--steal-ns", {&c.steal, "a successful theft"}},
      {"--steal-extra-ns", {&c.steal_extra, "each further unit of a theft"}},
      {"--migration-ns", {&c.migration, "first run on another worker"}},
      {"--handoff-ns", {&c.handoff, "a joiner woken from another worker"}},
      {"--remote-join-ns", {&c.remote_join, "a join of a unit that ended on another worker"}},
      {"--pause-ns", {&c.pause, "one spin pause"}},
      {"--clock-ns", {&c.clock_read, "a clock read"}},
      {"--wake-call-ns", {&c.wake_call, "the waker's side of a wake"}},
      {"--wake-latency-ns", {&c.wake_latency, "wake call to the woken worker running"}},
      {"--park-ns", {&c.park, "the parking worker's side of a park"}},
      {"--park-limit-ns", {&c.park_limit, "a parked worker looks again after this"}},
      {"--steal-grace-ns", {&c.steal_grace, "randws: steal grace"}},
      {"--worth-moving-ns", {&c.worth_moving, "randws: backlog rule, per unit"}},
      {"--min-doze-ns", {&c.min_doze, "randws: first doze"}},
      {"--max-doze-ns", {&c.max_doze, "randws: longest doze"}},
  };
  for (const auto& [flag, target] : costs)
    app.add_option(flag, *target.first, target.second)->check(CLI::NonNegativeNumber);
  app.add_option("--probe-growth-pct", c.probe_growth_pct, "probe cost growth per doubling of W")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--steal-batch", c.steal_batch, "most units a theft takes")
      ->check(CLI::PositiveNumber);
  app.add_option("--idle-spin", c.idle_spin, "idle rounds before a park")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--max-backoff-shift", c.max_backoff_shift, "randws: backoff cap (2^shift)")
      ->check(CLI::Range(0, 30));

  CLI11_PARSE(app, argc, argv);
  try {
    if (!policies.empty()) {
      spec.policies.clear();
      for (const auto& name : policies)
        for (policy_kind k : {policy_kind::randws, policy_kind::naive_one, policy_kind::naive_half})
          if (policy_name(k) == name) spec.policies.push_back(k);
    }
    if (!trace.empty()) p.trace = read_trace_durations(trace);
    const nlohmann::json report = run_matrix(spec);
    std::cout << report.dump(2) << "\n";
    if (table) std::cerr << format_table(report);
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return 0;
}
