// SPDX-License-Identifier: Apache-2.0
// weft_bench: Google Benchmark microbenchmarks of weft's work-unit life cycle and context switches,
// with pthread and raw Boost.Context baselines.
//
//   weft_bench [--streams=N] [Google Benchmark flags]
//
// weft is initialised once, with N execution streams (default 1, affinity compact), and every
// benchmark runs on the primary ULT (Google Benchmark runs single-threaded benchmarks on the
// thread that calls RunSpecifiedBenchmarks). Times are wall-clock (UseRealTime): in several
// benchmarks the work happens on other streams or threads, whose time the calling thread's CPU
// time would leave out.
//
// Each benchmark reports "ns_per_unit" (a unit is one create+join, one yield, one hand-off, one
// round trip) and items_per_second. The console prints ns_per_unit with an "s" suffix (Google
// Benchmark's unit for every inverted rate): "ns_per_unit=95.2s" reads 95.2 ns. In the "min"
// aggregate, read time and ns_per_unit; the min of a rate such as items_per_second is the slowest
// repetition.
#include <benchmark/benchmark.h>

#include <boost/context/detail/fcontext.hpp>
#include <boost/context/fiber.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "gbench_options.hpp"
#include "workloads.hpp"

namespace {

using weft_bench::private_main_pool;

constexpr std::int64_t kYieldsPerIteration = 10'000;
constexpr int kPthreadFanOut = 100;

cpu_set_t g_process_affinity;  // read in main, before weft binds the primary thread

/// Reports `units_per_iteration` units per iteration as items and as ns_per_unit.
void report_units(benchmark::State& state, std::int64_t units_per_iteration) {
  state.SetItemsProcessed(state.iterations() * units_per_iteration);
  // A rate counter is value / seconds; scaled by 1e-9 and inverted it is ns per unit.
  state.counters["ns_per_unit"] = benchmark::Counter(
      static_cast<double>(units_per_iteration) * 1e-9,
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// --- ULT and tasklet create+join fan-outs ---

/// Handle storage for the fan-outs, kept for the whole run. A vector per benchmark run would put
/// the page faults of fresh memory into the first iteration of every repetition; on the VM this was
/// written on, re-faulting the 8 MB of a 10^6 vector freed just before cost up to 0.3 s.
template <class Handle>
std::vector<Handle>& handle_storage(std::int64_t n) {
  static std::vector<Handle> handles;
  handles.reserve(static_cast<std::size_t>(n));
  return handles;
}

void ult_create_join(benchmark::State& state, weft::pool& p) {
  const std::int64_t n = state.range(0);
  std::vector<weft::ult>& handles = handle_storage<weft::ult>(n);
  for (auto _ : state) {
    benchmark::DoNotOptimize(weft_bench::ult_fan_out(p, handles, n));
  }
  report_units(state, n);
}

void BM_ult_create_join(benchmark::State& state) {
  ult_create_join(state, weft::execution_stream::primary().main_pool());
}

void BM_ult_create_join_private(benchmark::State& state) {
  private_main_pool scope;
  if (scope.pool().access() != weft::access_mode::priv) {
    state.SkipWithError("the primary's main pool did not become private");
    return;
  }
  ult_create_join(state, scope.pool());
}

void BM_ult_create_join_all_streams(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  std::vector<weft::execution_stream*> streams;
  for (int r = 0; r < weft::execution_stream::count(); ++r) {
    if (auto* s = weft::execution_stream::by_rank(r)) streams.push_back(s);
  }
  std::vector<weft::ult>& handles = handle_storage<weft::ult>(n);
  for (auto _ : state) {
    benchmark::DoNotOptimize(weft_bench::ult_fan_out_round_robin(streams, handles, n));
  }
  report_units(state, n);
}

/// Every stream creates and joins N ULTs of its own, all at once (ult_fan_out_per_stream).
void BM_ult_create_join_per_stream(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  std::vector<weft::execution_stream*> streams;
  for (int r = 0; r < weft::execution_stream::count(); ++r) {
    if (auto* s = weft::execution_stream::by_rank(r)) streams.push_back(s);
  }
  std::vector<weft_bench::stream_handles> handles(streams.size());
  for (auto& h : handles) h.handles.reserve(static_cast<std::size_t>(n));
  for (auto _ : state) {
    benchmark::DoNotOptimize(weft_bench::ult_fan_out_per_stream(streams, handles, n));
  }
  report_units(state, n);
}

/// A fan-out whose ULTs run on stacks of their own (the creator yields before it joins, so the
/// scheduler runs them, rather than the join running each on the joiner's stack), each asking for
/// range(1) bytes of stack (0: the default): what a runtime ported onto weft that sets its own
/// stack size (an OpenMP or Argobots program) creates.
void BM_ult_create_yield_join(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  const weft::ult_attributes attr{.stack_size = static_cast<std::size_t>(state.range(1))};
  weft::pool& p = weft::execution_stream::primary().main_pool();
  std::vector<weft::ult>& handles = handle_storage<weft::ult>(n);
  for (auto _ : state) {
    handles.clear();
    for (std::int64_t i = 0; i < n; ++i)
      handles.push_back(weft::ult::create(p, &weft_bench::unit_body, attr));
    weft::this_unit::yield();
    for (auto& h : handles) h.join();
  }
  report_units(state, n);
}

void BM_tasklet_create_join(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  weft::pool& p = weft::execution_stream::primary().main_pool();
  std::vector<weft::tasklet>& handles = handle_storage<weft::tasklet>(n);
  for (auto _ : state) {
    benchmark::DoNotOptimize(weft_bench::tasklet_fan_out(p, handles, n));
  }
  report_units(state, n);
}

// --- Context switches through the runtime ---

void BM_yield(benchmark::State& state) {
  weft::pool& p = weft::execution_stream::primary().main_pool();
  for (auto _ : state) {
    benchmark::DoNotOptimize(weft_bench::yield_pair(p, kYieldsPerIteration));
  }
  report_units(state, 2 * kYieldsPerIteration);
}

void BM_yield_to(benchmark::State& state) {
  private_main_pool scope;
  if (scope.pool().access() != weft::access_mode::priv) {
    state.SkipWithError("the primary's main pool did not become private");
    return;
  }
  for (auto _ : state) {
    const std::int64_t handoffs = weft_bench::yield_to_pair(scope.pool(), kYieldsPerIteration);
    if (handoffs != 2 * kYieldsPerIteration) {
      state.SkipWithError("yield_to fell back to a plain yield");
      break;
    }
  }
  report_units(state, 2 * kYieldsPerIteration);
}

// --- Baselines ---

void BM_pthread_create_join(benchmark::State& state) {
  const weft_bench::pthread_attributes attr(g_process_affinity);
  std::vector<pthread_t> threads(kPthreadFanOut);
  for (auto _ : state) {
    benchmark::DoNotOptimize(weft_bench::pthread_fan_out(threads, attr.get()));
  }
  report_units(state, kPthreadFanOut);
}

namespace bcd = boost::context::detail;

/// Jumps straight back to whoever jumped here, forever. Holds nothing that needs unwinding, so a
/// context parked in it can simply be abandoned together with its stack.
[[noreturn]] void bounce(bcd::transfer_t t) {
  for (;;) t = bcd::jump_fcontext(t.fctx, nullptr);
}

/// Boost.Context's switch, which weft uses between a ULT and its scheduler (ULT to ULT it uses its
/// own ret-ended jump on x86-64, runtime/src/platform/jump.hpp): one round trip is two
/// jump_fcontext calls.
void BM_fcontext_jump(benchmark::State& state) {
  std::vector<char> stack(64 * 1024);
  bcd::fcontext_t ctx = bcd::make_fcontext(stack.data() + stack.size(), stack.size(), &bounce);
  for (auto _ : state) {
    ctx = bcd::jump_fcontext(ctx, nullptr).fctx;
    benchmark::ClobberMemory();
  }
  report_units(state, 1);
}

/// The same round trip through boost::context::fiber, the safe API over the same assembly.
void BM_fiber_resume(benchmark::State& state) {
  namespace ctx = boost::context;
  ctx::fiber f{[](ctx::fiber&& caller) {
    for (;;) caller = std::move(caller).resume();
    return std::move(caller);
  }};
  for (auto _ : state) {
    f = std::move(f).resume();
    benchmark::ClobberMemory();
  }
  report_units(state, 1);
  // Destroying the suspended fiber unwinds its stack (forced_unwind ends the loop).
}

// --- Registration ---

double min_of(const std::vector<double>& v) {
  return *std::min_element(v.begin(), v.end());
}

/// Settings shared by every benchmark: 5 repetitions reported as mean/median/stddev/min.
benchmark::internal::Benchmark* common(benchmark::internal::Benchmark* b, double min_time) {
  return b->Unit(benchmark::kNanosecond)
      ->UseRealTime()
      ->MinTime(min_time)
      ->Repetitions(5)
      ->ReportAggregatesOnly(true)
      ->ComputeStatistics("min", &min_of);
}

/// Registers the fan-out sizes. A fan-out's first run allocates its descriptors (the first 10^6
/// fan-out of the process takes several times longer than the next), so an untimed warm-up comes
/// first; 10^6 takes about 0.1 s per iteration, hence its longer minimum time.
void fan_out_sizes(benchmark::internal::Benchmark* small, benchmark::internal::Benchmark* large) {
  common(small->Arg(10'000)->MinWarmUpTime(0.05), 0.1);
  common(large->Arg(1'000'000)->MinWarmUpTime(0.1), 0.3);
}

template <class Fn>
void register_fan_out(const char* name, Fn fn) {
  // Two statements: the order of registration is the order of the runs.
  benchmark::internal::Benchmark* small = benchmark::RegisterBenchmark(name, fn);
  fan_out_sizes(small, benchmark::RegisterBenchmark(name, fn));
}

void register_benchmarks(int streams) {
  register_fan_out("BM_ult_create_join", &BM_ult_create_join);
  register_fan_out("BM_ult_create_join_private", &BM_ult_create_join_private);
  if (streams > 1) {
    register_fan_out("BM_ult_create_join_all_streams", &BM_ult_create_join_all_streams);
    register_fan_out("BM_ult_create_join_per_stream", &BM_ult_create_join_per_stream);
  }
  common(benchmark::RegisterBenchmark("BM_ult_create_yield_join", &BM_ult_create_yield_join)
             ->Args({10'000, 0})
             ->Args({10'000, 256 << 10})
             ->MinWarmUpTime(0.05),
         0.1);
  register_fan_out("BM_tasklet_create_join", &BM_tasklet_create_join);
  common(benchmark::RegisterBenchmark("BM_yield", &BM_yield), 0.1);
  common(benchmark::RegisterBenchmark("BM_yield_to", &BM_yield_to), 0.1);
  common(benchmark::RegisterBenchmark("BM_pthread_create_join", &BM_pthread_create_join)
             ->Arg(kPthreadFanOut),
         0.1);
  common(benchmark::RegisterBenchmark("BM_fcontext_jump", &BM_fcontext_jump), 0.1);
  common(benchmark::RegisterBenchmark("BM_fiber_resume", &BM_fiber_resume), 0.1);
}

}  // namespace

int main(int argc, char** argv) {
  const int streams = weft_bench::take_streams_option(argc, argv, 1, "weft_bench");
  g_process_affinity = weft_bench::process_affinity();

  weft::config cfg;
  cfg.num_streams = streams;
  cfg.affinity.how = weft::affinity_policy::kind::compact;
  weft::runtime rt(cfg);

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("weft_streams", std::to_string(weft::execution_stream::count()));
  register_benchmarks(weft::execution_stream::count());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
