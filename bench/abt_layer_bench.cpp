// SPDX-License-Identifier: Apache-2.0
// weft_abt_layer_bench: the cost of the Argobots layer (abt/) over weft's native C++ API, in the
// same process and on the same pool, operation by operation: create + join/free fan-outs of ULTs
// and tasklets, one unit at a time and in fan-outs of 100; two ULTs that yield, or hand the
// stream to each other with yield_to; a chain in which each ULT creates and joins the next.
//
//   weft_abt_layer_bench [Google Benchmark flags]
//   e.g. --benchmark_repetitions=10 --benchmark_enable_random_interleaving=true
//   weft_abt_layer_bench --run=CASE --units=N [--reps=R]
//
// ABT_init starts weft with the primary stream only (WEFT_* variables still apply); every
// benchmark runs on the primary ULT and creates its units in the primary stream's main pool, so
// a create/join round trip is: allocate a descriptor, push, switch to the unit, run it, switch
// back, free. "ns_per_unit" is the time of one unit (one create + join, one yield, one hand-off;
// the console prints it with an "s" suffix: "ns_per_unit=95.2s" reads 95.2 ns).
//
// --run runs one case (the names are the benchmarks' without "BM_", e.g. abt_yield) with N units
// once to warm the caches, then R more times (default 1), and exits: for instruction counts, e.g.
// `valgrind --tool=callgrind` at R = 1 and R = 3, whose difference is two runs of N units.
#include <abt.h>
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <weft/weft.hpp>

#include "gbench_options.hpp"

namespace {

void empty_body(void*) {}

void report(benchmark::State& state, std::int64_t units_per_iteration) {
  const auto units = state.iterations() * units_per_iteration;
  state.SetItemsProcessed(units);
  state.counters["ns_per_unit"] = benchmark::Counter(
      static_cast<double>(units), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

/// The primary stream's main pool, looked up once (ABT_xstream_self takes a lock): the cases
/// time the operations, not the look-up.
ABT_pool primary_pool() {
  static const ABT_pool pool = [] {
    ABT_xstream self;
    ABT_pool p;
    ABT_xstream_self(&self);
    ABT_xstream_get_main_pools(self, 1, &p);
    return p;
  }();
  return pool;
}

weft::pool& native_pool() {
  static weft::pool& pool = weft::execution_stream::primary().main_pool();
  return pool;
}

/// Stops the program when an ABT call fails: a benchmark of failing calls measures nothing.
void check(int rc, const char* what) {
  if (rc != ABT_SUCCESS) {
    std::fprintf(stderr, "weft_abt_layer_bench: %s failed with error %d\n", what, rc);
    std::exit(1);
  }
}

// Each case runs `n` of its operation and returns the number of units it timed.

// --- fan-outs: n units created, then joined (freed) in creation order -------------------------

std::int64_t native_ult_fanout(std::int64_t n) {
  static std::vector<weft::ult> units;
  units.resize(static_cast<std::size_t>(n));
  weft::pool& pool = native_pool();
  for (auto& u : units) u = weft::ult::create(pool, &empty_body, nullptr);
  for (auto& u : units) u.join();
  return n;
}

std::int64_t abt_ult_fanout(std::int64_t n) {
  static std::vector<ABT_thread> units;
  units.resize(static_cast<std::size_t>(n));
  ABT_pool pool = primary_pool();
  for (auto& u : units)
    check(ABT_thread_create(pool, &empty_body, nullptr, ABT_THREAD_ATTR_NULL, &u), "create");
  for (auto& u : units) check(ABT_thread_free(&u), "ABT_thread_free");
  return n;
}

std::int64_t native_tasklet_fanout(std::int64_t n) {
  static std::vector<weft::tasklet> units;
  units.resize(static_cast<std::size_t>(n));
  weft::pool& pool = native_pool();
  for (auto& u : units) u = weft::tasklet::create(pool, &empty_body, nullptr);
  for (auto& u : units) u.join();
  return n;
}

std::int64_t abt_tasklet_fanout(std::int64_t n) {
  static std::vector<ABT_task> units;
  units.resize(static_cast<std::size_t>(n));
  ABT_pool pool = primary_pool();
  for (auto& u : units) check(ABT_task_create(pool, &empty_body, nullptr, &u), "ABT_task_create");
  for (auto& u : units) check(ABT_task_free(&u), "ABT_task_free");
  return n;
}

// --- two ULTs that yield n times each, or hand the stream to each other n times each ------------

std::int64_t g_rounds = 0;
weft::work_unit* g_native_peer[2];
ABT_thread g_abt_peer[2];

void native_yield_body(void*) {
  for (std::int64_t i = 0; i < g_rounds; ++i) weft::this_unit::yield();
}

void abt_yield_body(void*) {
  for (std::int64_t i = 0; i < g_rounds; ++i) check(ABT_thread_yield(), "ABT_thread_yield");
}

void native_yield_to_body(void* arg) {
  const auto self = reinterpret_cast<std::intptr_t>(arg);
  for (std::int64_t i = 0; i < g_rounds; ++i) weft::this_unit::yield_to(g_native_peer[1 - self]);
}

void abt_yield_to_body(void* arg) {
  const auto self = reinterpret_cast<std::intptr_t>(arg);
  for (std::int64_t i = 0; i < g_rounds; ++i)
    check(ABT_thread_yield_to(g_abt_peer[1 - self]), "ABT_thread_yield_to");
}

std::int64_t native_pair(std::int64_t n, void (*body)(void*)) {
  g_rounds = n;
  weft::ult peers[2];
  for (std::intptr_t i = 0; i < 2; ++i) {
    peers[i] = weft::ult::create(native_pool(), body, reinterpret_cast<void*>(i));
    g_native_peer[i] = peers[i].native_handle();
  }
  for (auto& p : peers) p.join();
  return 2 * n;
}

std::int64_t abt_pair(std::int64_t n, void (*body)(void*)) {
  g_rounds = n;
  ABT_pool pool = primary_pool();
  for (std::intptr_t i = 0; i < 2; ++i) {
    check(ABT_thread_create(pool, body, reinterpret_cast<void*>(i), ABT_THREAD_ATTR_NULL,
                            &g_abt_peer[i]),
          "ABT_thread_create");
  }
  for (auto& p : g_abt_peer) check(ABT_thread_free(&p), "ABT_thread_free");
  return 2 * n;
}

std::int64_t native_yield(std::int64_t n) {
  return native_pair(n, &native_yield_body);
}
std::int64_t abt_yield(std::int64_t n) {
  return abt_pair(n, &abt_yield_body);
}
std::int64_t native_yield_to(std::int64_t n) {
  return native_pair(n, &native_yield_to_body);
}
std::int64_t abt_yield_to(std::int64_t n) {
  return abt_pair(n, &abt_yield_to_body);
}

// --- a chain: each ULT creates the next one and joins (frees) it, n deep ------------------------

void native_link(void* arg) {
  const auto left = reinterpret_cast<std::intptr_t>(arg);
  if (left > 1)
    weft::ult::create(native_pool(), &native_link, reinterpret_cast<void*>(left - 1)).join();
}

void abt_link(void* arg) {
  const auto left = reinterpret_cast<std::intptr_t>(arg);
  if (left <= 1) return;
  ABT_thread next;
  check(ABT_thread_create(primary_pool(), &abt_link, reinterpret_cast<void*>(left - 1),
                          ABT_THREAD_ATTR_NULL, &next),
        "ABT_thread_create");
  check(ABT_thread_free(&next), "ABT_thread_free");
}

std::int64_t native_chain(std::int64_t n) {
  native_link(reinterpret_cast<void*>(static_cast<std::intptr_t>(n + 1)));
  return n;
}

std::int64_t abt_chain(std::int64_t n) {
  abt_link(reinterpret_cast<void*>(static_cast<std::intptr_t>(n + 1)));
  return n;
}

// --- registration ------------------------------------------------------------------------------

struct bench_case {
  const char* name;
  std::int64_t (*run)(std::int64_t n);
};

constexpr bench_case kCases[] = {
    {"native_ult_fanout", &native_ult_fanout},
    {"abt_ult_fanout", &abt_ult_fanout},
    {"native_tasklet_fanout", &native_tasklet_fanout},
    {"abt_tasklet_fanout", &abt_tasklet_fanout},
    {"native_yield", &native_yield},
    {"abt_yield", &abt_yield},
    {"native_yield_to", &native_yield_to},
    {"abt_yield_to", &abt_yield_to},
    {"native_chain", &native_chain},
    {"abt_chain", &abt_chain},
};

void run_case(benchmark::State& state, std::int64_t (*run)(std::int64_t)) {
  std::int64_t units = 0;
  for (auto _ : state) units = run(state.range(0));
  report(state, units);
}

void register_benchmarks() {
  for (const bench_case& c : kCases) {
    const std::string_view name = c.name;
    auto* b = benchmark::RegisterBenchmark((std::string("BM_") + c.name).c_str(), &run_case, c.run);
    if (name.ends_with("fanout"))
      b->Arg(1)->Arg(100);
    else if (name.ends_with("chain"))
      b->Arg(100);
    else
      b->Arg(1000);
    b->UseRealTime();
  }
}

/// --run=CASE --units=N [--reps=R]: one warm-up and R runs of the case, nothing printed.
int run_once(const weft_bench::single_run& run) {
  for (const bench_case& c : kCases) {
    if (run.name != c.name) continue;
    for (long i = 0; i <= run.reps; ++i) c.run(run.units);
    return 0;
  }
  std::fprintf(stderr, "weft_abt_layer_bench: no case %s; the cases are:", run.name.c_str());
  for (const bench_case& c : kCases) std::fprintf(stderr, " %s", c.name);
  std::fprintf(stderr, "\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<weft_bench::single_run> once =
      weft_bench::parse_single_run(argc, argv, "weft_abt_layer_bench");
  if (!once) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  }
  if (ABT_init(argc, argv) != ABT_SUCCESS) {
    std::fprintf(stderr, "weft_abt_layer_bench: ABT_init failed\n");
    return 1;
  }
  int rc = 0;
  if (once) {
    rc = run_once(*once);
  } else {
    register_benchmarks();
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
  }
  return ABT_finalize() == ABT_SUCCESS ? rc : 1;
}
