// SPDX-License-Identifier: Apache-2.0
// The steal simulator's invariants: every unit ends once, one worker costs exactly its work and
// local operations, no speedup beyond W, a grace longer than the run keeps a chain home, a
// half-theft takes at most half, a seed names one result; and the trace reader.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "report.hpp"
#include "sim.hpp"
#include "trace_durations.hpp"

namespace {

using namespace weft::steal_sim;

constexpr policy_kind all_policies[] = {policy_kind::randws, policy_kind::naive_one,
                                        policy_kind::naive_half};

/// Small sizes, and units long enough that thieves find work.
workload_params small_params() {
  workload_params p;
  p.fib_n = 12;
  p.fib_leaf = 200;
  p.chain = 300;
  p.fan_out = 300;
  p.phase_steps = 40;
  p.phase_width = 8;
  p.per_worker_width = 50;
  p.uts_root = 40;
  p.uts_work = 500;
  p.unit_work = 2000;
  return p;
}

TEST(StealSim, EveryUnitEndsExactlyOnce) {
  const cost_model costs;
  for (const std::string& name : workload_names()) {
    for (int workers : {1, 2, 3, 4, 16, 64}) {
      const dag d = make_workload(name, small_params(), workers, 7);
      for (policy_kind p : all_policies) {
        const sim_result r = simulate(d, p, costs, workers, 7);
        ASSERT_EQ(r.ended.size(), d.units.size());
        for (std::size_t u = 0; u < r.ended.size(); ++u)
          ASSERT_EQ(r.ended[u], 1)
              << d.name << " " << policy_name(p) << " W=" << workers << " unit " << u;
      }
    }
  }
}

TEST(StealSim, OneWorkerCostsItsWorkAndLocalOperationsExactly) {
  const cost_model costs;
  for (const std::string& name : workload_names()) {
    const dag d = make_workload(name, small_params(), 1, 3);
    for (policy_kind p : all_policies) {
      const sim_result r = simulate(d, p, costs, 1, 3);
      EXPECT_EQ(r.work, d.total_work()) << d.name;
      EXPECT_EQ(r.makespan, r.work + r.local_cost) << d.name << " " << policy_name(p);
      EXPECT_EQ(r.probes, 0);
      EXPECT_EQ(r.migrations, 0);
      EXPECT_EQ(r.idle_spin, 0);
    }
  }
}

TEST(StealSim, OneWorkerChainOfThreeByHand) {
  cost_model c;
  c.spawn = 20;
  c.pop = 5;
  c.run_switch = 12;
  c.join_done = 3;
  const dag d = make_chain(3, constant_work(100));
  // Root: pop + switch in. Each of the two inner units: spawn, pop of its child, switch in.
  // Three works; two switches straight to a joiner, one switch out of the root.
  const sim_ns expected = (5 + 12) + 3 * 100 + 2 * (20 + 5 + 12) + 3 * 12;
  EXPECT_EQ(simulate(d, policy_kind::randws, c, 1, 1).makespan, expected);
  EXPECT_EQ(simulate(d, policy_kind::naive_one, c, 1, 1).makespan, expected);
}

TEST(StealSim, SpeedupNeverExceedsWorkers) {
  matrix_spec spec;
  spec.params = small_params();
  spec.workers = {1, 2, 4, 8, 16, 32, 64};
  const nlohmann::json report = run_matrix(spec);
  ASSERT_EQ(report["rows"].size(), workload_names().size() * 3 * spec.workers.size());
  bool some_speedup = false;
  for (const auto& row : report["rows"]) {
    const auto workers = row["workers"].get<std::int64_t>();
    EXPECT_LE(row["speedup"].get<double>(), static_cast<double>(workers)) << row.dump();
    some_speedup = some_speedup || row["speedup"].get<double>() > 1.5;
  }
  EXPECT_TRUE(some_speedup);  // the comparison above is not vacuous
}

TEST(StealSim, GraceLongerThanTheRunKeepsAChainOnItsWorker) {
  cost_model c;
  c.steal_grace = 1'000'000'000'000;
  const dag d = make_chain(1000, constant_work(50));
  for (int workers : {2, 4, 16, 64}) {
    const sim_result r = simulate(d, policy_kind::randws, c, workers, 11);
    EXPECT_LT(r.makespan, c.steal_grace);
    EXPECT_EQ(r.stolen, 0) << workers;
    EXPECT_EQ(r.migrations, 0) << workers;
    EXPECT_GT(r.failed_probes, 0) << workers;  // thieves did look
  }
  // Without the grace the naive thief does rob the chain.
  EXPECT_GT(simulate(d, policy_kind::naive_one, c, 2, 11).stolen, 0);
}

TEST(StealSim, HalfTheftsTakeAtMostHalf) {
  const dag d = make_fan_out(2000, constant_work(3000));
  for (policy_kind p : {policy_kind::naive_half, policy_kind::randws}) {
    for (int workers : {2, 4, 16, 64}) {
      const sim_result r = simulate(d, p, cost_model{}, workers, 5);
      ASSERT_FALSE(r.theft_log.empty());
      std::int64_t largest = 0;
      for (const auto& t : r.theft_log) {
        EXPECT_LE(t.taken, (t.queued + 1) / 2) << policy_name(p) << " W=" << workers;
        EXPECT_LE(t.taken, cost_model{}.steal_batch);
        largest = std::max(largest, t.taken);
      }
      EXPECT_GT(largest, 1) << policy_name(p) << " W=" << workers;  // batches did happen
    }
  }
  for (const auto& t : simulate(d, policy_kind::naive_one, cost_model{}, 4, 5).theft_log)
    EXPECT_EQ(t.taken, 1);
}

TEST(StealSim, SameSeedSameReport) {
  matrix_spec spec;
  spec.params = small_params();
  spec.workers = {1, 2, 16};
  spec.seed = 42;
  const std::string first = run_matrix(spec).dump();
  EXPECT_EQ(run_matrix(spec).dump(), first);
  spec.seed = 43;
  EXPECT_NE(run_matrix(spec).dump(), first);  // the seed is used (the UTS tree, the victims)
}

TEST(StealSim, BadInputIsRejected) {
  const dag d = make_chain(3, constant_work(1));
  EXPECT_THROW(simulate(d, policy_kind::randws, cost_model{}, 0, 1), std::invalid_argument);
  EXPECT_THROW(simulate(d, policy_kind::randws, cost_model{}, 1025, 1), std::invalid_argument);
  dag joined_twice = d;
  joined_twice.units[0].steps.push_back({step::op::join, 1});
  EXPECT_THROW(simulate(joined_twice, policy_kind::randws, cost_model{}, 2, 1),
               std::invalid_argument);
  dag never_joined = d;
  never_joined.units[1].steps.pop_back();
  EXPECT_THROW(simulate(never_joined, policy_kind::randws, cost_model{}, 2, 1),
               std::invalid_argument);
  EXPECT_THROW(make_uts(4, 2, 0.5, 1, 1000, constant_work(1)), std::invalid_argument);
  EXPECT_THROW(make_workload("nope", workload_params{}, 1, 1), std::invalid_argument);
}

/// A file in the test's temporary directory, removed at the end.
struct temp_file {
  std::filesystem::path path;
  explicit temp_file(const std::string& name, const std::string& text)
      : path(std::filesystem::temp_directory_path() /
             (name + "-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()))) {
    std::ofstream(path) << text;
  }
  ~temp_file() { std::filesystem::remove(path); }
};

TEST(StealSim, TraceDurationsAreSummedPerUnit) {
  // As weft's trace writer lays it out (runtime/src/observe/trace.cpp): metadata, run slices of
  // categories ult and tasklet keyed by args.id (a unit that blocked has several), park slices,
  // steal instants, creation flows.
  const temp_file trace("weft-steal-sim-trace.json", R"({"traceEvents":[
{"ph":"M","name":"thread_name","pid":1,"tid":0,"args":{"name":"stream 0"}},
{"ph":"X","pid":1,"tid":0,"ts":1.000,"dur":2.500,"cat":"ult","name":"ult 7","args":{"id":7,"pool":"0x1"}},
{"ph":"X","pid":1,"tid":1,"ts":2.000,"dur":0.040,"cat":"tasklet","name":"tasklet 9","args":{"id":9,"pool":"0x2"}},
{"ph":"X","pid":1,"tid":1,"ts":3.000,"dur":50.000,"cat":"park","name":"parked","args":{}},
{"ph":"i","pid":1,"tid":1,"ts":3.500,"s":"t","cat":"weft","name":"steal","args":{"first":7,"units":1}},
{"ph":"X","pid":1,"tid":0,"ts":9.000,"dur":1.250,"cat":"ult","name":"ult 7","args":{"id":7,"pool":"0x1"}},
{"ph":"s","pid":1,"tid":0,"ts":1.500,"cat":"create","name":"create","id":1,"args":{"unit":9}},
{"ph":"f","pid":1,"tid":1,"ts":2.000,"bp":"e","cat":"create","name":"create","id":1}
],"otherData":{"dropped_records":0}})");
  const std::vector<sim_ns> d = read_trace_durations(trace.path.string());
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0], 3750);  // unit 7: 2.5 us + 1.25 us
  EXPECT_EQ(d[1], 40);    // unit 9

  // Drawn work times come from the trace, and a run on them is deterministic.
  matrix_spec spec;
  spec.params = small_params();
  spec.params.trace = d;
  spec.workloads = {"chain", "fib"};
  spec.workers = {1, 4};
  const nlohmann::json report = run_matrix(spec);
  EXPECT_EQ(report.dump(), run_matrix(spec).dump());
  const work_time w = sampled_work(d, 1);
  for (std::int64_t i = 0; i < 100; ++i) EXPECT_TRUE(w(i) == 3750 || w(i) == 40);
  EXPECT_EQ(w(17), sampled_work(d, 1)(17));
}

TEST(StealSim, ReadsARecordedWeftTrace) {
  // WEFT_TRACE=... weft_fj_weft --bench=ult-fib --n=10 --streams=1 --trials=1 --warmup=0: the
  // harness's ULT and fib(10)'s 88 ULTs, 166.276 us of runs in all.
  const std::vector<sim_ns> d = read_trace_durations(WEFT_STEAL_SIM_TESTDATA "/fib10-1stream.json");
  ASSERT_EQ(d.size(), 89u);
  sim_ns total = 0;
  for (sim_ns ns : d) {
    EXPECT_GE(ns, 0);
    total += ns;
  }
  EXPECT_NEAR(static_cast<double>(total), 166276.0, 89.0);  // each slice rounded to 1 ns
}

TEST(StealSim, BadTracesAreRejectedWithTheirName) {
  const auto message = [](const std::string& path) {
    try {
      read_trace_durations(path);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("/nonexistent/trace.json").find("/nonexistent/trace.json"), std::string::npos);
  const temp_file not_json("weft-steal-sim-bad.json", "{\"traceEvents\": [");
  EXPECT_NE(message(not_json.path.string()).find("not JSON"), std::string::npos);
  const temp_file no_units("weft-steal-sim-empty.json", R"({"traceEvents":[]})");
  EXPECT_NE(message(no_units.path.string()).find("no unit run"), std::string::npos);
  const temp_file no_id("weft-steal-sim-noid.json",
                        R"([{"ph":"X","cat":"ult","ts":0,"dur":1,"args":{}}])");
  EXPECT_NE(message(no_id.path.string()).find("args"), std::string::npos);
}

}  // namespace
