// SPDX-License-Identifier: Apache-2.0
// weft_abt_layer_bench: the cost of the Argobots layer (abt/) over weft's native C++ API, in the
// same process and on the same pool: ABT_thread_create + ABT_thread_free against
// weft::ult::create + join (and the tasklet forms), one unit at a time and in fan-outs of 100.
//
//   weft_abt_layer_bench [Google Benchmark flags]
//   e.g. --benchmark_repetitions=5 --benchmark_enable_random_interleaving=true
//
// ABT_init starts weft with the primary stream only (WEFT_* variables still apply); every
// benchmark runs on the primary ULT and creates its units in the primary stream's main pool, so
// a create/join round trip is: allocate a descriptor, push, switch to the unit, run it, switch
// back, free. "ns_per_unit" is the time of one round trip (the console prints it with an "s"
// suffix: "ns_per_unit=95.2s" reads 95.2 ns).
#include <abt.h>
#include <benchmark/benchmark.h>

#include <cstdio>
#include <vector>

#include <weft/weft.hpp>

namespace {

void empty_body(void*) {}

void report(benchmark::State& state, std::int64_t units_per_iteration) {
  const auto units = state.iterations() * units_per_iteration;
  state.SetItemsProcessed(units);
  state.counters["ns_per_unit"] = benchmark::Counter(
      static_cast<double>(units), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

ABT_pool primary_pool() {
  ABT_xstream self;
  ABT_pool pool;
  ABT_xstream_self(&self);
  ABT_xstream_get_main_pools(self, 1, &pool);
  return pool;
}

// --- ULTs ------------------------------------------------------------------------------------

void BM_native_ult_create_join(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  weft::pool& pool = weft::execution_stream::primary().main_pool();
  std::vector<weft::ult> units(n);
  for (auto _ : state) {
    for (std::size_t i = 0; i < n; ++i) units[i] = weft::ult::create(pool, &empty_body, nullptr);
    for (std::size_t i = 0; i < n; ++i) units[i].join();
  }
  report(state, static_cast<std::int64_t>(n));
}

void BM_abt_thread_create_free(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  ABT_pool pool = primary_pool();
  std::vector<ABT_thread> units(n);
  for (auto _ : state) {
    for (std::size_t i = 0; i < n; ++i)
      ABT_thread_create(pool, &empty_body, nullptr, ABT_THREAD_ATTR_NULL, &units[i]);
    for (std::size_t i = 0; i < n; ++i) ABT_thread_free(&units[i]);
  }
  report(state, static_cast<std::int64_t>(n));
}

// --- tasklets ----------------------------------------------------------------------------------

void BM_native_tasklet_create_join(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  weft::pool& pool = weft::execution_stream::primary().main_pool();
  std::vector<weft::tasklet> units(n);
  for (auto _ : state) {
    for (std::size_t i = 0; i < n; ++i)
      units[i] = weft::tasklet::create(pool, &empty_body, nullptr);
    for (std::size_t i = 0; i < n; ++i) units[i].join();
  }
  report(state, static_cast<std::int64_t>(n));
}

void BM_abt_task_create_free(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  ABT_pool pool = primary_pool();
  std::vector<ABT_task> units(n);
  for (auto _ : state) {
    for (std::size_t i = 0; i < n; ++i) ABT_task_create(pool, &empty_body, nullptr, &units[i]);
    for (std::size_t i = 0; i < n; ++i) ABT_task_free(&units[i]);
  }
  report(state, static_cast<std::int64_t>(n));
}

BENCHMARK(BM_native_ult_create_join)->Arg(1)->Arg(100)->UseRealTime();
BENCHMARK(BM_abt_thread_create_free)->Arg(1)->Arg(100)->UseRealTime();
BENCHMARK(BM_native_tasklet_create_join)->Arg(1)->Arg(100)->UseRealTime();
BENCHMARK(BM_abt_task_create_free)->Arg(1)->Arg(100)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  if (ABT_init(argc, argv) != ABT_SUCCESS) {
    std::fprintf(stderr, "weft_abt_layer_bench: ABT_init failed\n");
    return 1;
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return ABT_finalize() == ABT_SUCCESS ? 0 : 1;
}
