// SPDX-License-Identifier: Apache-2.0
// weft_trace_bench: what tracing (weft/trace.hpp) costs. Recursive fork-join fib(n) (a ULT at
// every level) untraced and traced, for n in [--min, --max], and the time stop() takes to write
// the trace of a run of --units units (a create+join fan-out); with --named every unit of that
// run has a name (with a quote and a backslash), so the write escapes one name per slice.
//
//   weft_trace_bench [--json=FILE] [--min=25] [--max=30] [--units=1000000] [--named]
//                    [--streams=1] [--trials=5] [--dir=/tmp]
//   weft_trace_bench --demo=FILE [--demo-fib=9] [--demo-leaf-us=0] [--streams=N]
//
// --demo writes the trace of one fork-join fib(--demo-fib) run, whose leaves compute for
// --demo-leaf-us microseconds each, to FILE and exits (the trace drawn in docs/tracing.md, with
// scripts/trace-timeline).
//
// Each fib row is the median of --trials trials after one untimed warm-up; a traced trial times
// the run only (start() before, the run, then stop() outside the timing), and its trace is
// discarded. The write row times stop() alone, median of 3. The JSON has Google Benchmark's shape
// (real_time in ns).
#include <time.h>
#include <unistd.h>

#include <weft/weft.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "workloads.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

long fib_serial(int n) {
  return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2);
}

/// fib_ult() whose leaves each compute for `leaf_us` microseconds (the demo: runs wide enough to
/// see on a timeline).
long fib_work(int n, int leaf_us) {
  if (n < 2) {
    const auto until = clock_type::now() + std::chrono::microseconds(leaf_us);
    while (clock_type::now() < until) {
    }
    return n;
  }
  long a = 0;
  weft::ult h = weft::ult::create([&a, n, leaf_us] { a = fib_work(n - 1, leaf_us); });
  const long b = fib_work(n - 2, leaf_us);
  h.join();
  return a + b;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double seconds_since(clock_type::time_point t) {
  return std::chrono::duration<double>(clock_type::now() - t).count();
}

/// CPU time of the calling thread, in seconds: what writing a trace costs, whatever else the
/// machine is doing.
double thread_cpu() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct result {
  std::string name;
  double seconds;
  long units;
};

}  // namespace

int main(int argc, char** argv) {
  int lo = 25, hi = 30, streams = 1, trials = 5;
  long units = 1000000;
  std::string json, dir = "/tmp", demo;
  int demo_fib = 9, demo_leaf_us = 0;
  bool named = false;
  CLI::App app("What tracing costs: fork-join fib untraced and traced, and the trace's write.",
               "weft_trace_bench");
  app.add_option("--json", json, "write the results in Google Benchmark's JSON shape to FILE")
      ->type_name("FILE");
  app.add_option("--min", lo, "smallest fib argument")->check(CLI::Range(2, 40));
  app.add_option("--max", hi, "largest fib argument")->check(CLI::Range(2, 40));
  app.add_option("--units", units, "units of the traced fan-out whose write is timed")
      ->check(CLI::Range(1, 1 << 30));
  app.add_flag("--named", named, "give every unit of that fan-out a name");
  app.add_option("--streams", streams, "execution streams")->check(CLI::Range(1, 4096));
  app.add_option("--trials", trials, "trials per fib row")->check(CLI::Range(1, 1 << 30));
  app.add_option("--dir", dir, "where the timed traces are written (and removed)")
      ->check(CLI::ExistingDirectory);
  app.add_option("--demo", demo, "write the trace of one fib run to FILE and exit")
      ->type_name("FILE");
  app.add_option("--demo-fib", demo_fib, "the demo's fib argument")->check(CLI::Range(2, 30));
  app.add_option("--demo-leaf-us", demo_leaf_us, "the demo's computation per leaf, in us")
      ->check(CLI::Range(0, 1'000'000));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "weft_trace_bench: %s (--help lists the options)\n", e.what());
    return 2;
  }
  if (lo > hi) {
    std::fprintf(stderr, "weft_trace_bench: --min=%d is above --max=%d\n", lo, hi);
    return 2;
  }
  const std::string path = dir + "/weft-trace-bench-" + std::to_string(getpid()) + ".json";
  weft::config cfg;
  cfg.num_streams = streams;
  weft::runtime rt(cfg);
  if (!demo.empty()) {
    weft::trace::start(demo);
    const long value = fib_work(demo_fib, demo_leaf_us);
    weft::trace::stop();
    std::printf("fib(%d) = %ld, trace in %s\n", demo_fib, value, demo.c_str());
    return 0;
  }
  std::vector<result> results;

  std::printf("%-12s %12s %12s %8s %12s %14s\n", "fork-join", "untraced ms", "traced ms", "ratio",
              "write ms", "write cpu ms");
  for (int n = lo; n <= hi; ++n) {
    const long expected = fib_serial(n);
    const long spawns = fib_serial(n + 1) - 1;
    std::vector<double> plain, traced, write, write_cpu;
    if (weft_bench::fib_ult(n) != expected) return 1;  // warm-up
    for (int t = 0; t < trials; ++t) {
      auto t0 = clock_type::now();
      if (weft_bench::fib_ult(n) != expected) return 1;
      plain.push_back(seconds_since(t0));
      weft::trace::start(path);
      t0 = clock_type::now();
      if (weft_bench::fib_ult(n) != expected) return 1;
      traced.push_back(seconds_since(t0));
      t0 = clock_type::now();
      const double c0 = thread_cpu();
      weft::trace::stop();
      write_cpu.push_back(thread_cpu() - c0);
      write.push_back(seconds_since(t0));
    }
    const double p = median(plain), tr = median(traced), w = median(write), wc = median(write_cpu);
    std::printf("%-12s %12.1f %12.1f %8.2f %12.1f %14.1f\n",
                ("fib(" + std::to_string(n) + ")").c_str(), p * 1e3, tr * 1e3, tr / p, w * 1e3,
                wc * 1e3);
    const std::string suffix = "/" + std::to_string(n) + "/streams:" + std::to_string(streams);
    results.push_back({"fork_join_fib" + suffix, p, spawns});
    results.push_back({"fork_join_fib_traced" + suffix, tr, spawns});
    results.push_back({"trace_write_fib" + suffix, w, spawns});
    results.push_back({"trace_write_fib_cpu" + suffix, wc, spawns});
  }

  // The write time of a run of `units` units: a create+join fan-out, traced.
  std::vector<double> write, write_cpu;
  for (int t = 0; t < 3; ++t) {
    weft::trace::start(path);
    std::vector<weft::ult> us;
    us.reserve(static_cast<std::size_t>(units));
    weft::ult_attributes attr;
    attr.name = named ? "fan-out \"leaf\" \\ unit" : nullptr;
    weft::pool& pool = weft::execution_stream::primary().main_pool();
    for (long i = 0; i < units; ++i)
      us.push_back(weft::ult::create(
          pool, [] {}, attr));
    for (auto& u : us) u.join();
    const auto t0 = clock_type::now();
    const double c0 = thread_cpu();
    weft::trace::stop();
    write_cpu.push_back(thread_cpu() - c0);
    write.push_back(seconds_since(t0));
  }
  std::ifstream f(path, std::ios::ate | std::ios::binary);
  const double mb = static_cast<double>(f.tellg()) / 1e6;
  std::remove(path.c_str());
  std::printf("trace write, %ld%s units (create+join fan-out): %.2f s, %.2f s CPU (%.0f MB)\n",
              units, named ? " named" : "", median(write), median(write_cpu), mb);
  const std::string write_name = named ? "trace_write_named" : "trace_write";
  results.push_back({write_name + "/units:" + std::to_string(units), median(write), units});
  results.push_back({write_name + "_cpu/units:" + std::to_string(units), median(write_cpu), units});

  if (!json.empty()) {
    nlohmann::ordered_json doc;
    doc["context"] = {{"executable", "weft_trace_bench"}, {"streams", streams}};
    auto& benchmarks = doc["benchmarks"] = nlohmann::ordered_json::array();
    for (const result& r : results) {
      benchmarks.push_back({{"name", r.name},
                            {"run_type", "iteration"},
                            {"iterations", 1},
                            {"real_time", std::round(r.seconds * 1e9)},
                            {"time_unit", "ns"},
                            {"units", r.units}});
    }
    std::ofstream out(json);
    out << doc.dump(2) << "\n";
    if (!out.flush()) {
      std::fprintf(stderr, "weft_trace_bench: cannot write %s\n", json.c_str());
      return 1;
    }
  }
  return 0;
}
