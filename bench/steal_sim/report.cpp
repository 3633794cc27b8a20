// SPDX-License-Identifier: Apache-2.0
// run_matrix() and format_table() of report.hpp.
#include "report.hpp"

#include <cstdio>
#include <map>
#include <stdexcept>

#include "sim.hpp"
#include "trace_durations.hpp"

namespace weft::steal_sim {

const std::vector<std::string>& workload_names() {
  static const std::vector<std::string> names{
      "fib", "chain", "fan-out", "phases", "per-worker-fan-out", "uts"};
  return names;
}

dag make_workload(const std::string& name, const workload_params& p, int workers,
                  std::uint64_t seed) {
  const auto work = [&](sim_ns fixed) {
    return p.trace.empty() ? constant_work(fixed) : sampled_work(p.trace, seed);
  };
  if (name == "fib") return make_fib(p.fib_n, work(p.fib_leaf));
  if (name == "chain") return make_chain(p.chain, work(p.unit_work));
  if (name == "fan-out") return make_fan_out(p.fan_out, work(p.unit_work));
  if (name == "phases") return make_phases(p.phase_steps, p.phase_width, work(p.unit_work));
  if (name == "per-worker-fan-out")
    return make_per_worker_fan_out(workers, p.per_worker_width, work(p.unit_work));
  if (name == "uts")
    return make_uts(p.uts_root, p.uts_branching, p.uts_probability, seed, 10'000'000,
                    work(p.uts_work));
  throw std::invalid_argument("steal_sim: unknown workload " + name);
}

namespace {

nlohmann::json costs_json(const cost_model& c) {
  return {{"spawn", c.spawn},
          {"pop", c.pop},
          {"run_switch", c.run_switch},
          {"join_done", c.join_done},
          {"probe", c.probe},
          {"probe_growth_pct", c.probe_growth_pct},
          {"probed_owner_miss", c.probed_owner_miss},
          {"steal", c.steal},
          {"steal_extra", c.steal_extra},
          {"migration", c.migration},
          {"handoff", c.handoff},
          {"remote_join", c.remote_join},
          {"pause", c.pause},
          {"clock_read", c.clock_read},
          {"wake_call", c.wake_call},
          {"wake_latency", c.wake_latency},
          {"park", c.park},
          {"park_limit", c.park_limit},
          {"steal_grace", c.steal_grace},
          {"worth_moving", c.worth_moving},
          {"steal_batch", c.steal_batch},
          {"idle_spin", c.idle_spin},
          {"max_backoff_shift", c.max_backoff_shift},
          {"min_doze", c.min_doze},
          {"max_doze", c.max_doze}};
}

nlohmann::json params_json(const workload_params& p) {
  return {{"fib_n", p.fib_n},
          {"fib_leaf", p.fib_leaf},
          {"chain", p.chain},
          {"fan_out", p.fan_out},
          {"phase_steps", p.phase_steps},
          {"phase_width", p.phase_width},
          {"per_worker_width", p.per_worker_width},
          {"uts_root", p.uts_root},
          {"uts_branching", p.uts_branching},
          {"uts_probability", p.uts_probability},
          {"uts_work", p.uts_work},
          {"unit_work", p.unit_work},
          {"trace_units", p.trace.size()}};
}

void verify(const std::string& what, const sim_result& r) {
  for (std::uint8_t n : r.ended)
    if (n != 1) throw std::runtime_error("steal_sim: " + what + ": a unit did not end once");
  for (const auto& t : r.theft_log)
    if (t.taken > (t.queued + 1) / 2)
      throw std::runtime_error("steal_sim: " + what + ": a theft took more than half");
}

}  // namespace

nlohmann::json run_matrix(const matrix_spec& spec) {
  nlohmann::json rows = nlohmann::json::array();
  for (const std::string& name : spec.workloads) {
    for (policy_kind policy : spec.policies) {
      for (int workers : spec.workers) {
        const dag d = make_workload(name, spec.params, workers, spec.seed);
        const sim_result r = simulate(d, policy, spec.costs, workers, spec.seed);
        verify(d.name + " " + std::string(policy_name(policy)) + " W=" + std::to_string(workers),
               r);
        // The same DAG on one worker (the per-worker fan-out's depends on the worker count).
        const sim_ns one =
            workers == 1 ? r.makespan : simulate(d, policy, spec.costs, 1, spec.seed).makespan;
        const double speedup =
            r.makespan > 0 ? static_cast<double>(one) / static_cast<double>(r.makespan) : 1.0;
        const auto units = static_cast<double>(r.ended.size());
        rows.push_back({{"workload", d.name},
                        {"policy", policy_name(policy)},
                        {"workers", workers},
                        {"units", r.ended.size()},
                        {"makespan_ns", r.makespan},
                        {"speedup", speedup},
                        {"efficiency", speedup / workers},
                        {"time_ratio", 1.0 / speedup},
                        {"thefts", r.thefts},
                        {"stolen", r.stolen},
                        {"probes", r.probes},
                        {"failed_probes", r.failed_probes},
                        {"probes_per_unit", static_cast<double>(r.probes) / units},
                        {"migrations", r.migrations},
                        {"wakes", r.wakes},
                        {"parks", r.parks},
                        {"dozes", r.dozes},
                        {"idle_spin_ns", r.idle_spin}});
      }
    }
  }
  return {{"seed", spec.seed},
          {"costs", costs_json(spec.costs)},
          {"params", params_json(spec.params)},
          {"rows", rows}};
}

std::string format_table(const nlohmann::json& report) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "%-26s %-10s %4s %12s %8s %6s %9s %9s %8s %7s %7s\n", "workload",
                "policy", "W", "makespan_us", "speedup", "eff", "stolen", "probes/u", "migrate",
                "wakes", "parks");
  out += line;
  for (const auto& r : report.at("rows")) {
    std::snprintf(line, sizeof line,
                  "%-26s %-10s %4d %12.1f %8.2f %6.2f %9lld %9.2f %8lld %7lld %7lld\n",
                  r.at("workload").get<std::string>().c_str(),
                  r.at("policy").get<std::string>().c_str(), r.at("workers").get<int>(),
                  r.at("makespan_ns").get<double>() / 1000.0, r.at("speedup").get<double>(),
                  r.at("efficiency").get<double>(), r.at("stolen").get<long long>(),
                  r.at("probes_per_unit").get<double>(), r.at("migrations").get<long long>(),
                  r.at("wakes").get<long long>(), r.at("parks").get<long long>());
    out += line;
  }
  return out;
}

}  // namespace weft::steal_sim
