// SPDX-License-Identifier: Apache-2.0
// weft_sched_bench: the scheduler library's benchmarks (Google Benchmark).
//
//   weft_sched_bench [--streams=N] [Google Benchmark flags]
//
// Imbalanced fan-out: the primary ULT creates 10^5 ULTs into its stream's main pool and joins them
// all; the other N - 1 streams (default: every CPU of the process, at least 2) can only get work
// by taking it from there. Each benchmark initialises weft with the scheduler it measures, so all
// of them run in one process, one after the other (add --benchmark_enable_random_interleaving to
// interleave their repetitions):
//
//   randws            every stream runs randws: the primary pushes into its own ws_pool (owner
//                     pushes, no locked instruction), the others steal up to 32 units at a time
//   shared_mpmc_wait  every stream runs basic_wait over one shared MPMC FIFO pool (a spinlocked
//                     list: one locked instruction per push and per pop, all streams on one lock)
//   shared_mpmc       the same with basic's idle loop (sched_yield instead of parking)
//
// The second argument is the work in each ULT: 0 (an empty body: the scheduling cost itself) or
// that many rounds of a dependent multiply-add (about 1 ns each). Reported: ns_per_unit (wall
// time per ULT, "123s" reads 123 ns) and, for randws, steals per iteration.
#include <benchmark/benchmark.h>

#include <weft/schedulers/basic_scheduler.hpp>
#include <weft/schedulers/randws_scheduler.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "gbench_options.hpp"
#include "workloads.hpp"

namespace {

constexpr std::int64_t kFanOut = 100'000;

int g_streams = 2;

enum class kind { randws, shared_mpmc_wait, shared_mpmc };

/// The pool every stream shares in the shared_mpmc variants (set before init, dropped after).
std::shared_ptr<weft::pool> g_shared;

void register_shared_schedulers() {
  weft::register_scheduler("bench-shared-mpmc-wait", [] {
    auto p = g_shared ? g_shared : weft::make_fifo_pool(weft::access_mode::mpmc);
    return std::make_unique<weft::basic_wait_scheduler>(std::vector{p});
  });
  weft::register_scheduler("bench-shared-mpmc", [] {
    auto p = g_shared ? g_shared : weft::make_fifo_pool(weft::access_mode::mpmc);
    return std::make_unique<weft::basic_scheduler>(std::vector{p});
  });
}

const char* scheduler_name(kind k) {
  switch (k) {
    case kind::randws:
      return "randws";
    case kind::shared_mpmc_wait:
      return "bench-shared-mpmc-wait";
    case kind::shared_mpmc:
      return "bench-shared-mpmc";
  }
  return "basic";
}

struct unit_args {
  std::int64_t work;
};

void unit_body(void* arg) {
  const std::int64_t work = static_cast<unit_args*>(arg)->work;
  std::uint64_t x = 1;
  for (std::int64_t i = 0; i < work; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;
  weft_bench::escape(&x);
}

void BM_imbalanced_fan_out(benchmark::State& state, kind k) {
  unit_args args{state.range(0)};
  if (k != kind::randws) g_shared = weft::make_fifo_pool(weft::access_mode::mpmc);
  weft::config cfg;
  cfg.num_streams = g_streams;
  cfg.affinity.how = weft::affinity_policy::kind::compact;
  cfg.scheduler = scheduler_name(k);
  std::uint64_t steals = 0;
  {
    weft::runtime rt(cfg);
    weft::pool& p = weft::execution_stream::primary().main_pool();
    std::shared_ptr<weft::randws_group> group;
    if (k == kind::randws)
      group =
          dynamic_cast<weft::randws_scheduler&>(weft::execution_stream::primary().main_scheduler())
              .group();
    static std::vector<weft::ult> handles;
    handles.reserve(kFanOut);
    auto fan_out = [&] {
      handles.clear();
      for (std::int64_t i = 0; i < kFanOut; ++i)
        handles.push_back(weft::ult::create(p, &unit_body, &args));
      for (auto& h : handles) h.join();
    };
    // Untimed warm-up: a fresh runtime maps its descriptor slabs and stacks at the first fan-out.
    fan_out();
    const std::uint64_t steals_before = group ? group->steals() : 0;
    for (auto _ : state) fan_out();
    if (group) steals = group->steals() - steals_before;
    handles.clear();
  }
  g_shared.reset();
  state.SetItemsProcessed(state.iterations() * kFanOut);
  state.counters["ns_per_unit"] = benchmark::Counter(
      static_cast<double>(kFanOut) * 1e-9,
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  if (k == kind::randws) {
    state.counters["steals_per_iter"] =
        static_cast<double>(steals) / static_cast<double>(state.iterations());
  }
}

double min_of(const std::vector<double>& v) {
  return *std::min_element(v.begin(), v.end());
}

void register_benchmarks() {
  const std::pair<const char*, kind> kinds[] = {{"randws", kind::randws},
                                                {"shared_mpmc_wait", kind::shared_mpmc_wait},
                                                {"shared_mpmc", kind::shared_mpmc}};
  for (std::int64_t work : {0, 1000}) {
    for (const auto& [name, k] : kinds) {
      benchmark::RegisterBenchmark((std::string("BM_imbalanced_fan_out/") + name).c_str(),
                                   &BM_imbalanced_fan_out, k)
          ->Arg(work)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime()
          ->MinTime(0.5)
          ->Repetitions(5)
          ->ReportAggregatesOnly(true)
          ->ComputeStatistics("min", &min_of);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const cpu_set_t mask = weft_bench::process_affinity();
  g_streams = weft_bench::take_streams_option(argc, argv, std::max(2, CPU_COUNT(&mask)),
                                              "weft_sched_bench");
  register_shared_schedulers();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("weft_streams", std::to_string(g_streams));
  register_benchmarks();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
